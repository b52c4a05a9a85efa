// SPDX-License-Identifier: GPL-2.0-or-later
/* topo_hwloc.c - hwloc adapter for the topology model. */
#include "topo_hwloc.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void
to_cpuset(hwloc_const_bitmap_t b, struct cpuset *out)
{
	int i;

	cpuset_zero(out);
	hwloc_bitmap_foreach_begin(i, b)
		cpuset_set(out, i);
	hwloc_bitmap_foreach_end();
}

/* The last-level cache: the highest-level data/unified CPU cache present. */
static hwloc_obj_type_t
llc_type(hwloc_topology_t h)
{
	static const hwloc_obj_type_t order[] = {
		HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (hwloc_get_nbobjs_by_type(h, order[i]) > 0)
			return order[i];
	return HWLOC_OBJ_TYPE_MAX;
}

static int
add_all(struct topo *t, hwloc_topology_t h, hwloc_obj_type_t ht, enum topo_type tt,
        struct llcd_err *err)
{
	int n = hwloc_get_nbobjs_by_type(h, ht);

	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(h, ht, (unsigned)i);
		struct cpuset cs;
		uint64_t size = 0;

		if (o->cpuset == NULL || hwloc_bitmap_iszero(o->cpuset))
			continue;       /* CPU-less NUMA node (memory only) */
		if (hwloc_bitmap_last(o->cpuset) >= CPUSET_MAX)
			return llcd_err_set(err, "topology: CPU %d exceeds the supported maximum %d",
			    hwloc_bitmap_last(o->cpuset), CPUSET_MAX - 1);
		to_cpuset(o->cpuset, &cs);
		if (hwloc_obj_type_is_cache(ht) && o->attr)
			size = o->attr->cache.size;
		else if (ht == HWLOC_OBJ_NUMANODE && o->attr)
			size = o->attr->numanode.local_memory;
		if (topo_add(t, tt, (int)o->os_index, &cs, size) == NULL)
			return llcd_err_set(err, "topology: out of memory");
	}
	return 0;
}

struct topo *
topo_load(const char *source, struct llcd_err *err)
{
	hwloc_topology_t h;
	struct topo *t = NULL;
	struct stat st;
	hwloc_obj_type_t llc;
	int rc = 0;

	if (hwloc_topology_init(&h) < 0) {
		llcd_err_set(err, "topology: hwloc_topology_init failed");
		return NULL;
	}
	if (source && *source) {
		size_t n = strlen(source);
		if ((n > 4 && strcmp(source + n - 4, ".xml") == 0) || stat(source, &st) == 0)
			rc = hwloc_topology_set_xml(h, source);
		else
			rc = hwloc_topology_set_synthetic(h, source);
		if (rc < 0) {
			llcd_err_set(err, "topology: cannot use '%s' (not a readable hwloc XML file "
			    "nor a valid synthetic description such as 'pack:1 [numa] l3:8 core:8 pu:2')",
			    source);
			goto out;
		}
	}
	if (hwloc_topology_load(h) < 0) {
		llcd_err_set(err, "topology: hwloc could not load '%s'", source && *source ? source : "live host");
		goto out;
	}
	t = topo_new();
	if (t == NULL) {
		llcd_err_set(err, "topology: out of memory");
		goto out;
	}
	llc = llc_type(h);
	if (add_all(t, h, HWLOC_OBJ_MACHINE, TOPO_MACHINE, err) < 0 ||
	    add_all(t, h, HWLOC_OBJ_PACKAGE, TOPO_PACKAGE, err) < 0 ||
	    add_all(t, h, HWLOC_OBJ_NUMANODE, TOPO_NUMA, err) < 0 ||
	    (llc != HWLOC_OBJ_TYPE_MAX && add_all(t, h, llc, TOPO_LLC, err) < 0) ||
	    add_all(t, h, HWLOC_OBJ_CORE, TOPO_CORE, err) < 0 ||
	    add_all(t, h, HWLOC_OBJ_PU, TOPO_PU, err) < 0 ||
	    topo_finalize(t, err) < 0) {
		topo_free(t);
		t = NULL;
		goto out;
	}
	snprintf(t->desc, sizeof(t->desc), "%s", source && *source ? source : "live host");
out:
	hwloc_topology_destroy(h);
	return t;
}
