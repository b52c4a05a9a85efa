// SPDX-License-Identifier: GPL-2.0-or-later
/* guesttopo.h - the guest CPU definition that shows a guest the host's LLC
 * layout, computed from where its vCPUs are placed, and the check that a
 * running guest's topology agrees with its actual pins.
 *
 * Pure: a host topology (topo.h) and a domain's allocation go in, a
 * recommendation comes out; no I/O. The allocation is each vCPU's host PU
 * slot (policy_domain_slots() for a domain the engine has placed, or
 * guesttopo_dry_place() for one that has not run yet) and, optionally, each
 * vCPU's home pin. guestxml.h writes a recommendation into domain XML.
 *
 *   guest die i    = one host LLC's share of the domain's vCPUs
 *   guest threads  = the host SMT width when every group of that many
 *                    consecutive vCPUs sits on the sibling PUs of one core
 *   guest cells    = the host NUMA nodes of those LLCs
 *
 * docs/guest-topology.md shows the result for every shipped host shape.
 */
#ifndef LLCD_GUESTTOPO_H
#define LLCD_GUESTTOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "policy.h"
#include "topo.h"

#define GUESTTOPO_REASON 320
#define GUESTTOPO_MAX_REASONS 16

/* A domain's allocation on the host. */
struct guesttopo_alloc {
	int nvcpus;
	const int *slots;               /* nvcpus host PUs (OS index), one per vCPU */
	const struct cpuset *pins;      /* nvcpus home pins; NULL = each slot's PU */
	const struct cpuset *emulator;  /* NULL = the union of the pins */
};

/* One guest die and the host LLC under it. */
struct guesttopo_die {
	int first_vcpu, nvcpus;
	int host_llc;                   /* logical LLC index */
	int host_pkg;                   /* logical package index */
};

/* One guest NUMA cell and the host NUMA node it follows. */
struct guesttopo_cell {
	int host_node;                  /* host NUMA node OS index */
	struct cpuset vcpus;
	int nvcpus;
};

struct guesttopo_rec {
	int nvcpus;
	/* <topology>: sockets x dies (per socket) x cores (per die) x threads
	 * = nvcpus; clusters is always 1 (libvirt 9.0 and QEMU 7.2 on x86
	 * reject clusters). */
	struct policy_guest_topo topo;
	const char *cache_mode;         /* <cache level='3' mode=...>: "emulate" */
	int ndies;                      /* sockets * dies */
	struct guesttopo_die *dies;
	int ncells;                     /* 0 when the vCPUs sit in one host node */
	struct guesttopo_cell *cells;
	struct cpuset *pins;            /* nvcpus <vcpupin> cpusets */
	struct cpuset emulator;         /* <emulatorpin> */
	struct cpuset nodeset;          /* <numatune> host node OS indexes */
	int nreasons;
	char reasons[GUESTTOPO_MAX_REASONS][GUESTTOPO_REASON];
};

struct guesttopo_rec *guesttopo_rec_new(void);
void guesttopo_rec_free(struct guesttopo_rec *r);

/* Compute the recommendation for an allocation. Returns 0, or -1 with err
 * filled (a slot that is not a host PU, an empty or foreign pin, ...). rec
 * is reset first; its reasons say why each number is what it is. */
int guesttopo_compute(const struct topo *t, const struct guesttopo_alloc *a,
                      struct guesttopo_rec *rec, struct llcd_err *err);

/* Split total_kib of guest memory over the recommendation's cells in
 * proportion to their vCPUs, in whole MiB (libvirt aligns cells to 1 MiB
 * on x86); the last cell takes the remainder. out[] has ncells entries.
 * Returns -1 when the memory is too small for one MiB per cell. */
int guesttopo_cell_memory(const struct guesttopo_rec *rec, uint64_t total_kib,
                          uint64_t *out, struct llcd_err *err);

/* Where llcd would place a domain that has not run yet: one policy_step()
 * on a scratch engine state holding the host's other placed domains (each
 * with its vCPUs' current pins in vcpus[].pinned, which the engine adopts)
 * and this domain with no pins. An unannotated or mode="none" domain is
 * placed as mode="aggregate" would place it. dom->vcpus may be NULL.
 * Fills slots[], pins[] (home pins) and *emulator for dom->nvcpus vCPUs;
 * -1 with the engine's refusal reason in err when the host cannot take it. */
int guesttopo_dry_place(const struct policy_host *host, const struct policy_domain_in *dom,
                        const struct policy_domain_in *others, int nothers,
                        int *slots, struct cpuset *pins, struct cpuset *emulator,
                        struct llcd_err *err);

/* Human-readable recommendation (several lines, each ending in '\n');
 * returns -1 on truncation (buf still terminated). */
int guesttopo_format(const struct topo *t, const struct guesttopo_rec *rec,
                     char *buf, size_t len);

/* --- check: a running guest against its actual pins ------------------- */

enum guesttopo_issue_kind {
	GUESTTOPO_DIE_SPLIT,            /* a guest die's pins reach several host LLCs */
	GUESTTOPO_SMT_SPLIT,            /* guest SMT siblings pinned to different host cores */
	GUESTTOPO_SMT_LOOSE,            /* guest SMT siblings may run on different host cores */
	GUESTTOPO_BAD_TOPOLOGY,         /* the guest topology does not describe nvcpus */
};

struct guesttopo_issue {
	enum guesttopo_issue_kind kind;
	int first_vcpu, nvcpus;         /* the guest die or core it is about */
	char msg[GUESTTOPO_REASON];
};

struct guesttopo_check {
	int n, cap;
	struct guesttopo_issue *issues;
	int total;                      /* issues found; n <= total when capped */
	int notes;                      /* of which GUESTTOPO_SMT_LOOSE (may, not do,
	                                 * disagree): total - notes are real */
};

struct guesttopo_check *guesttopo_check_new(void);
void guesttopo_check_free(struct guesttopo_check *c);

/* Compare a guest topology (as the domain runs it) with the vCPUs' actual
 * affinity (pins[v], OS indexes; an empty set means unknown and is
 * skipped). Appends one issue per guest die whose pins reach more than one
 * host LLC and per guest core whose SMT siblings are pinned to distinct host
 * cores; siblings whose pins merely allow different cores (LLC-wide pins)
 * give one GUESTTOPO_SMT_LOOSE summary. At most max_issues are kept (0 =
 * 256); total counts them all. Returns the number of issues, or -1 with err
 * filled on invalid input. */
int guesttopo_check(const struct topo *t, const struct policy_guest_topo *g, int nvcpus,
                    const struct cpuset *pins, int max_issues, struct guesttopo_check *out,
                    struct llcd_err *err);

const char *guesttopo_issue_name(enum guesttopo_issue_kind k);

/* A vCPU's position in a guest topology, in libvirt's (and QEMU's) order:
 * socket, die, cluster, core, thread, the thread fastest; core counts
 * within its cluster (QEMU's core-id). Numbers <= 0 in g count as 1. The
 * one place llcd computes it (llcctl vcpuinfo, dominfo's vcpu_threads and
 * the QMP cross-check). */
struct guesttopo_pos {
	int socket, die, cluster, core, thread;
};
void guesttopo_position(const struct policy_guest_topo *g, int vcpu, struct guesttopo_pos *pos);

#endif
