// SPDX-License-Identifier: GPL-2.0-or-later
/* topo.h - the host topology model: one node type for machine, package,
 * NUMA node, LLC, core and PU, each with a cpuset, a parent and children.
 *
 * The model is built by an adapter (topo_hwloc.h: live host, hwloc XML or a
 * synthetic string) through topo_add() and topo_finalize(); the policy only
 * reads it. The tree is built by cpuset inclusion: a node's parent is the
 * smallest node of a higher type whose cpuset contains it, so a NUMA node
 * that spans several LLCs sits between package and LLC, and an LLC that spans
 * several NUMA nodes (Intel SNC) hangs from the package directly.
 */
#ifndef LLCD_TOPO_H
#define LLCD_TOPO_H

#include <stdint.h>

#include "cpuset.h"
#include "err.h"

enum topo_type {
	TOPO_MACHINE,
	TOPO_PACKAGE,
	TOPO_NUMA,
	TOPO_LLC,
	TOPO_CORE,
	TOPO_PU,
	TOPO_NTYPES
};

struct topo_node {
	enum topo_type type;
	int index;              /* logical index within its type, 0.. */
	int os_index;           /* OS number (PU: CPU number; NUMA: node id) */
	struct cpuset cpus;     /* PUs (by OS index) below this node */
	uint64_t size;          /* LLC: cache bytes; NUMA: memory bytes; else 0 */
	struct topo_node *parent;
	struct topo_node **children;
	int nchildren;
};

struct topo {
	struct topo_node *root;                 /* the machine */
	struct topo_node **nodes[TOPO_NTYPES];  /* by type, in logical order */
	int count[TOPO_NTYPES];
	struct cpuset all;                      /* every PU */
	int max_cpu;                            /* highest PU OS index */
	int smt;                                /* most PUs on one core */
	/* Per PU OS index (0..max_cpu): logical index of its core, LLC, NUMA
	 * node (-1 if none) and package; -1 for a CPU the host lacks. */
	int *pu_core, *pu_llc, *pu_numa, *pu_pkg;
	/* Per LLC: logical index of the NUMA node holding most of its PUs. */
	int *llc_numa;
	char desc[256];                         /* where it came from */
};

struct topo *topo_new(void);
void topo_free(struct topo *t);

/* Add a node of the given type; order within a type defines the logical
 * index (callers add in OS order). A TOPO_MACHINE node is made by
 * topo_finalize() when none was added. */
struct topo_node *topo_add(struct topo *t, enum topo_type type, int os_index,
                           const struct cpuset *cpus, uint64_t size);

/* Build the tree and lookup tables and check the model: every PU under
 * exactly one core and one LLC, cores inside one LLC, no empty node. A host
 * without a shared cache gets one LLC per package. */
int topo_finalize(struct topo *t, struct llcd_err *err);

const char *topo_type_name(enum topo_type type);

static inline int topo_count(const struct topo *t, enum topo_type type)
{ return t->count[type]; }
static inline const struct topo_node *topo_get(const struct topo *t, enum topo_type type, int i)
{ return t->nodes[type][i]; }
/* Per PU lookups; -1 for a CPU the host lacks (inline: a step asks for
 * every busy PU and every PU a group ran on). */
static inline int topo_llc_of(const struct topo *t, int cpu)
{ return cpu >= 0 && cpu <= t->max_cpu ? t->pu_llc[cpu] : -1; }
static inline int topo_core_of(const struct topo *t, int cpu)
{ return cpu >= 0 && cpu <= t->max_cpu ? t->pu_core[cpu] : -1; }
int topo_numa_of(const struct topo *t, int cpu);
/* Logical index of the NUMA node with OS number os; -1 when the host has none. */
int topo_numa_by_os(const struct topo *t, int os);
/* PUs per LLC (weight of LLC i). */
int topo_llc_weight(const struct topo *t, int llc);

/* Human-readable one-line summary: "1 package, 1 NUMA node, 8 LLCs x 16 PUs, 64 cores, SMT2". */
int topo_summary(const struct topo *t, char *buf, size_t len);

#endif
