// SPDX-License-Identifier: GPL-2.0-or-later
/* guestxml.h - write a guest topology recommendation (guesttopo.h) into a
 * libvirt domain XML, and show the change as a line diff.
 *
 * guestxml_apply() changes only <cpu><topology>, <cpu><cache>, <cpu><numa>,
 * the <vcpupin>/<emulatorpin> children of <cputune> (its other children
 * stay) and <numatune>. Everything else - other elements, attributes and
 * their quoting, comments, whitespace - is kept byte for byte: libxml2
 * checks the document and tells what is in it, and the edits are spliced
 * into the original text at the byte ranges of the elements they replace
 * (a DOM round trip would re-quote every attribute of the file). New
 * elements are written the way libvirt writes them (single quotes, the
 * indentation of their neighbours). The result is parsed again and checked
 * before it is returned.
 *
 * Untrusted input: at most GUESTXML_MAX bytes, no network, no DTD; a
 * DOCTYPE is refused.
 */
#ifndef LLCD_GUESTXML_H
#define LLCD_GUESTXML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "guesttopo.h"
#include "policy.h"
#include "xmlsafe.h"

#define GUESTXML_MAX XMLSAFE_DOMAIN_MAX

/* Which elements guestxml_apply() writes. */
enum guestxml_part {
	GUESTXML_TOPOLOGY = 1 << 0,     /* <cpu><topology> */
	GUESTXML_CACHE = 1 << 1,        /* <cpu><cache level='3' mode='emulate'/> */
	GUESTXML_NUMA = 1 << 2,         /* <cpu><numa> cells */
	GUESTXML_CPUTUNE = 1 << 3,      /* <cputune> vcpupin + emulatorpin */
	GUESTXML_NUMATUNE = 1 << 4,     /* <numatune> */
	/* what the guest sees, valid on any host */
	GUESTXML_GUEST = GUESTXML_TOPOLOGY | GUESTXML_CACHE | GUESTXML_NUMA,
	/* host bindings: name host CPUs and NUMA nodes */
	GUESTXML_HOST = GUESTXML_CPUTUNE | GUESTXML_NUMATUNE,
	GUESTXML_ALL = GUESTXML_GUEST | GUESTXML_HOST,
};

/* What guestxml_read() finds in a domain XML. */
struct guestxml_domain {
	char name[64];
	int vcpus;                      /* <vcpu> text: the maximum */
	int vcpus_current;              /* its 'current' attribute, else vcpus */
	uint64_t memory_kib;            /* <memory>, 0 when absent */
	bool has_topology;              /* <cpu><topology> present */
	struct policy_guest_topo topo;  /* as libvirt runs it: no <topology>
	                                 * is one socket per vCPU */
	char cpu_mode[32];              /* <cpu mode>, "" when absent */
	char cpu_model[64];             /* <cpu><model> text, "" when absent */
	int ncells;                     /* <cpu><numa><cell> count */
};

int guestxml_read(const char *xml, size_t len, struct guestxml_domain *d,
                  struct llcd_err *err);

/* The vCPU pins a domain XML states: <cputune><vcpupin>, else the
 * <vcpu cpuset='...'> default, else every host CPU (all). libvirt's
 * "0-7,^3" syntax is understood. pins[] has nvcpus entries (nvcpus must be
 * the XML's <vcpu> count); emulator (may be NULL) gets <emulatorpin>, else
 * the same default. For a running domain's live XML these are the pins
 * libvirt applied. */
int guestxml_read_pins(const char *xml, size_t len, int nvcpus, const struct cpuset *all,
                       struct cpuset *pins, struct cpuset *emulator, struct llcd_err *err);

/* Write rec's parts into xml. On success *out is a new NUL-terminated
 * string (free()) and *outlen its length. Refuses (-1, err says why) when
 * the XML's vCPU count differs from the recommendation's, when NUMA cells
 * are asked for and <memory> is missing or too small, and on malformed or
 * oversized XML. */
int guestxml_apply(const char *xml, size_t len, const struct guesttopo_rec *rec,
                   unsigned parts, char **out, size_t *outlen, struct llcd_err *err);

/* A unified diff (3 lines of context, "---"/"+++" headers with the given
 * labels, "@@ -a,b +c,d @@" hunks) of two texts, line by line, from a
 * longest-common-subsequence match. *out is a new string (free()), empty
 * when the texts are equal. */
int guestxml_diff(const char *a, size_t alen, const char *b, size_t blen,
                  const char *label_a, const char *label_b, char **out,
                  struct llcd_err *err);

#endif
