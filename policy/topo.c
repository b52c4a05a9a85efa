// SPDX-License-Identifier: GPL-2.0-or-later
/* topo.c - the host topology model. */
#include "topo.h"
#include "alloc.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LLCD_DEFINE_NEW(topo_new, struct topo)

void
topo_free(struct topo *t)
{
	if (t == NULL)
		return;
	for (int ty = 0; ty < TOPO_NTYPES; ty++) {
		for (int i = 0; i < t->count[ty]; i++) {
			free(t->nodes[ty][i]->children);
			free(t->nodes[ty][i]);
		}
		free(t->nodes[ty]);
	}
	free(t->pu_core);
	free(t->pu_llc);
	free(t->pu_numa);
	free(t->pu_pkg);
	free(t->llc_numa);
	free(t);
}

LLCD_NAME_FUNCTION(topo_type_name, enum topo_type, TOPO_NTYPES - 1,
    [TOPO_MACHINE] = "machine", [TOPO_PACKAGE] = "package", [TOPO_NUMA] = "numa",
    [TOPO_LLC] = "llc", [TOPO_CORE] = "core", [TOPO_PU] = "pu")

struct topo_node *
topo_add(struct topo *t, enum topo_type type, int os_index,
         const struct cpuset *cpus, uint64_t size)
{
	struct topo_node *n, **v;

	if (type >= TOPO_NTYPES)
		return NULL;
	n = calloc(1, sizeof(*n));
	v = realloc(t->nodes[type], sizeof(*v) * (size_t)(t->count[type] + 1));
	if (n == NULL || v == NULL) {
		free(n);
		if (v)
			t->nodes[type] = v;
		return NULL;
	}
	t->nodes[type] = v;
	n->type = type;
	n->index = t->count[type];
	n->os_index = os_index;
	n->cpus = *cpus;
	n->size = size;
	v[t->count[type]++] = n;
	return n;
}

static int
add_child(struct topo_node *parent, struct topo_node *child)
{
	struct topo_node **v;

	v = realloc(parent->children, sizeof(*v) * (size_t)(parent->nchildren + 1));
	if (v == NULL)
		return -1;
	parent->children = v;
	v[parent->nchildren++] = child;
	child->parent = parent;
	return 0;
}

static int *
alloc_map(int n)
{
	int *m = malloc(sizeof(int) * (size_t)n);

	if (m)
		for (int i = 0; i < n; i++)
			m[i] = -1;
	return m;
}

/* Fill map[cpu] = logical index of the node of this type holding cpu. */
static int
fill_map(struct topo *t, enum topo_type type, int *map, struct llcd_err *err)
{
	for (int i = 0; i < t->count[type]; i++) {
		const struct topo_node *n = t->nodes[type][i];
		int cpu;

		CPUSET_FOREACH(cpu, &n->cpus) {
			if (map[cpu] >= 0)
				return llcd_err_set(err, "topology: PU %d is in two %s objects (%d and %d)",
				    cpu, topo_type_name(type), map[cpu], i);
			map[cpu] = i;
		}
	}
	return 0;
}

int
topo_finalize(struct topo *t, struct llcd_err *err)
{
	struct cpuset all;
	int cpu;

	cpuset_zero(&all);
	for (int i = 0; i < t->count[TOPO_PU]; i++) {
		const struct topo_node *pu = t->nodes[TOPO_PU][i];
		if (cpuset_count(&pu->cpus) != 1 || cpuset_first(&pu->cpus) != pu->os_index)
			return llcd_err_set(err, "topology: PU L#%d must hold exactly its own CPU %d", i, pu->os_index);
		cpuset_set(&all, pu->os_index);
	}
	if (cpuset_empty(&all))
		return llcd_err_set(err, "topology: no PUs");
	for (int ty = TOPO_MACHINE; ty < TOPO_PU; ty++)
		for (int i = 0; i < t->count[ty]; i++)
			if (cpuset_empty(&t->nodes[ty][i]->cpus))
				return llcd_err_set(err, "topology: %s L#%d has no PUs", topo_type_name(ty), i);
	t->all = all;
	t->max_cpu = cpuset_last(&all);
	if (t->count[TOPO_MACHINE] == 0 && topo_add(t, TOPO_MACHINE, 0, &all, 0) == NULL)
		return llcd_err_set(err, "topology: out of memory");
	if (t->count[TOPO_PACKAGE] == 0 && topo_add(t, TOPO_PACKAGE, 0, &all, 0) == NULL)
		return llcd_err_set(err, "topology: out of memory");
	if (t->count[TOPO_LLC] == 0) {
		/* No shared cache described: one LLC per package. */
		for (int i = 0; i < t->count[TOPO_PACKAGE]; i++)
			if (topo_add(t, TOPO_LLC, i, &t->nodes[TOPO_PACKAGE][i]->cpus, 0) == NULL)
				return llcd_err_set(err, "topology: out of memory");
	}
	if (t->count[TOPO_CORE] == 0) {
		for (int i = 0; i < t->count[TOPO_PU]; i++)
			if (topo_add(t, TOPO_CORE, i, &t->nodes[TOPO_PU][i]->cpus, 0) == NULL)
				return llcd_err_set(err, "topology: out of memory");
	}
	t->root = t->nodes[TOPO_MACHINE][0];

	/* Tree by inclusion: parent = smallest containing node of a higher type. */
	for (int ty = TOPO_PACKAGE; ty < TOPO_NTYPES; ty++) {
		for (int i = 0; i < t->count[ty]; i++) {
			struct topo_node *n = t->nodes[ty][i], *best = NULL;
			for (int up = ty - 1; up > TOPO_MACHINE && best == NULL; up--)
				for (int j = 0; j < t->count[up] && best == NULL; j++)
					if (cpuset_subset(&n->cpus, &t->nodes[up][j]->cpus))
						best = t->nodes[up][j];
			if (best == NULL)
				best = t->root;
			if (add_child(best, n) < 0)
				return llcd_err_set(err, "topology: out of memory");
		}
	}

	int n = t->max_cpu + 1;
	t->pu_core = alloc_map(n);
	t->pu_llc = alloc_map(n);
	t->pu_numa = alloc_map(n);
	t->pu_pkg = alloc_map(n);
	t->llc_numa = alloc_map(t->count[TOPO_LLC]);
	if (!t->pu_core || !t->pu_llc || !t->pu_numa || !t->pu_pkg || !t->llc_numa)
		return llcd_err_set(err, "topology: out of memory");
	if (fill_map(t, TOPO_CORE, t->pu_core, err) < 0 ||
	    fill_map(t, TOPO_LLC, t->pu_llc, err) < 0 ||
	    fill_map(t, TOPO_NUMA, t->pu_numa, err) < 0 ||
	    fill_map(t, TOPO_PACKAGE, t->pu_pkg, err) < 0)
		return -1;
	CPUSET_FOREACH(cpu, &all) {
		if (t->pu_core[cpu] < 0)
			return llcd_err_set(err, "topology: PU %d is in no core", cpu);
		if (t->pu_llc[cpu] < 0)
			return llcd_err_set(err, "topology: PU %d is in no LLC", cpu);
	}
	t->smt = 1;
	for (int i = 0; i < t->count[TOPO_CORE]; i++) {
		const struct topo_node *c = t->nodes[TOPO_CORE][i];
		int first = cpuset_first(&c->cpus), w = cpuset_count(&c->cpus);
		CPUSET_FOREACH(cpu, &c->cpus)
			if (t->pu_llc[cpu] != t->pu_llc[first])
				return llcd_err_set(err, "topology: core L#%d spans two LLCs", i);
		if (w > t->smt)
			t->smt = w;
	}
	for (int l = 0; l < t->count[TOPO_LLC]; l++) {
		int best = -1, best_n = 0;
		for (int k = 0; k < t->count[TOPO_NUMA]; k++) {
			struct cpuset x;
			cpuset_and(&x, &t->nodes[TOPO_LLC][l]->cpus, &t->nodes[TOPO_NUMA][k]->cpus);
			int c = cpuset_count(&x);
			if (c > best_n) {
				best_n = c;
				best = k;
			}
		}
		t->llc_numa[l] = best;
	}
	return 0;
}

int
topo_numa_of(const struct topo *t, int cpu)
{
	return cpu >= 0 && cpu <= t->max_cpu ? t->pu_numa[cpu] : -1;
}

int
topo_numa_by_os(const struct topo *t, int os)
{
	for (int i = 0; os >= 0 && i < t->count[TOPO_NUMA]; i++)
		if (t->nodes[TOPO_NUMA][i]->os_index == os)
			return i;
	return -1;
}

int
topo_llc_weight(const struct topo *t, int llc)
{
	if (llc < 0 || llc >= t->count[TOPO_LLC])
		return 0;
	return cpuset_count(&t->nodes[TOPO_LLC][llc]->cpus);
}

int
topo_summary(const struct topo *t, char *buf, size_t len)
{
	int nllc = t->count[TOPO_LLC];
	int w0 = topo_llc_weight(t, 0), uniform = 1, n;

	for (int i = 1; i < nllc; i++)
		if (topo_llc_weight(t, i) != w0)
			uniform = 0;
	n = snprintf(buf, len, "%d package%s, %d NUMA node%s, %d LLC%s%s%.0d%s, %d cores, %d PUs, SMT%d",
	    t->count[TOPO_PACKAGE], t->count[TOPO_PACKAGE] == 1 ? "" : "s",
	    t->count[TOPO_NUMA], t->count[TOPO_NUMA] == 1 ? "" : "s",
	    nllc, nllc == 1 ? "" : "s", uniform ? " x " : "", uniform ? w0 : 0,
	    uniform ? " PUs" : " (mixed sizes)",
	    t->count[TOPO_CORE], t->count[TOPO_PU], t->smt);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
