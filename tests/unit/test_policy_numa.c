// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_numa.c - the kernel's NUMA precedence in the engine: where
 * the domain's memory node is known
 * (policy_domain_in.mem_node, the reader's seam), a group's preferred LLC
 * stays in that node, and NUMA wins a conflict. Two-node synthetic hosts
 * (real hwloc): this machine has one node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

/* 2 nodes x 2 LLCs x 4 cores x SMT2: LLCs 0, 1 on node 0 (PUs 0-15), 2, 3 on node 1 */
#define TWO_NODES "pack:2 [numa] l3:2 core:4 pu:2"

/* A 32-vCPU aggregate domain (its home spans both nodes) with a group of
 * 4 busy vCPUs; returns the domain. */
static int
add_domain_n(struct harness *h, const int *vc, int nvcpus, enum policy_isolation iso)
{
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, iso);
	int d;

	h_one_group(&a, "work", NULL, 0);
	for (int i = 0; i < 4; i++)
		cpuset_set(&a.groups[0].vcpus, vc[i]);
	d = h_add(h, "numa", nvcpus, nvcpus / 8, 4, 2, &a);
	h_busy(h, d, vc, 4);
	return d;
}

static int
add_domain(struct harness *h, const int *vc)
{
	return add_domain_n(h, vc, 32, POLICY_ISO_NONE);
}

static int
pref_llc(struct harness *h, int d)
{
	struct policy_domain_info info;

	info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	return info.groups[0].pref_llc;
}

static int
node_of_llc(const struct harness *h, int l)
{
	return l >= 0 ? topo_get(h->topo, TOPO_NUMA, h->topo->llc_numa[l])->os_index : -1;
}

static const char *
prefer_reason(const struct harness *h)
{
	for (int a = 0; a < h->plan->n; a++)
		if (h->plan->actions[a].type == POLICY_ACT_PREFER && h->plan->actions[a].llc >= 0)
			return h->plan->actions[a].reason;
	return NULL;
}

/* Without a memory node the group prefers where it runs; told that the
 * memory is on the other node, it moves there at once (NUMA wins over the
 * 2x occupancy rule), and all its busy vCPUs follow into that node. */
static void
test_numa_wins_conflict(void **state)
{
	struct harness *h = h_new(TWO_NODES);
	/* guest dies 2 and 3 (vCPUs 16-31) are placed on node 1 */
	int vc[4] = { 16, 18, 20, 22 };
	int d = add_domain(h, vc);

	for (int step = 0; step < 10; step++)
		assert_int_equal(h_step(h), 0);
	int P = pref_llc(h, d), home = node_of_llc(h, P);
	assert_true(P >= 0);
	int mem = home == 0 ? 1 : 0;
	h->dom[d].in.mem_node_valid = true;
	h->dom[d].in.mem_node = mem;
	assert_int_equal(h_step(h), 0);
	int Q = pref_llc(h, d);
	assert_int_equal(node_of_llc(h, Q), mem);
	const char *why = prefer_reason(h);
	assert_non_null(why);
	char want[64];
	snprintf(want, sizeof(want), "memory is on NUMA node %d (NUMA wins", mem);
	if (strstr(why, want) == NULL)
		fail_msg("reason: %s", why);
	for (int step = 0; step < 10; step++)
		assert_int_equal(h_step(h), 0);
	assert_int_equal(pref_llc(h, d), Q);
	for (int i = 0; i < 4; i++)
		assert_int_equal(h_llc(h, d, vc[i]), Q);
	h_free(h);
}

/* Known from the start: the preference is never outside the memory's node,
 * whichever node the memory is on. */
static void
test_pref_stays_in_memory_node(void **state)
{
	for (int mem = 0; mem < 2; mem++) {
		struct harness *h = h_new(TWO_NODES);
		int vc[4] = { 16, 18, 20, 22 };
		int d = add_domain(h, vc);
		h->dom[d].in.mem_node_valid = true;
		h->dom[d].in.mem_node = mem;
		for (int step = 0; step < 15; step++) {
			assert_int_equal(h_step(h), 0);
			int P = pref_llc(h, d);
			if (P >= 0)
				assert_int_equal(node_of_llc(h, P), mem);
		}
		int P = pref_llc(h, d);
		assert_true(P >= 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(h_llc(h, d, vc[i]), P);
		h_free(h);
	}
}

/* A memory node the domain may not run on (its home is the other node),
 * or one the host does not have, changes nothing. */
static void
test_memory_node_outside_home_ignored(void **state)
{
	struct harness *a = h_new(TWO_NODES), *b = h_new(TWO_NODES);
	int vc[4] = { 16, 18, 20, 22 };
	int da = add_domain(a, vc), db = add_domain(b, vc);

	b->dom[db].in.mem_node_valid = true;
	b->dom[db].in.mem_node = 7;     /* no such node */
	for (int step = 0; step < 15; step++) {
		assert_int_equal(h_step(a), 0);
		assert_int_equal(h_step(b), 0);
		assert_int_equal(pref_llc(a, da), pref_llc(b, db));
	}
	h_free(a);
	h_free(b);
	/* an isolated 16-vCPU domain owns the cores of one node (fewest
	 * LLCs): memory on the other node cannot move its preference there */
	a = h_new(TWO_NODES);
	b = h_new(TWO_NODES);
	int small[4] = { 0, 2, 4, 6 };
	da = add_domain_n(a, small, 16, POLICY_ISO_CORE);
	db = add_domain_n(b, small, 16, POLICY_ISO_CORE);
	for (int step = 0; step < 15; step++) {
		assert_int_equal(h_step(a), 0);
		if (step == 0) {
			int home = topo_numa_of(b->topo, cpuset_first(a->dom[da].s[0].pinned));
			b->dom[db].in.mem_node_valid = true;
			b->dom[db].in.mem_node = topo_get(b->topo, TOPO_NUMA, home == 0 ? 1 : 0)->os_index;
		}
		assert_int_equal(h_step(b), 0);
		assert_true(pref_llc(a, da) >= 0 || step < 3);
		assert_int_equal(pref_llc(a, da), pref_llc(b, db));
	}
	h_free(a);
	h_free(b);
}

TEST_MAIN(
	cmocka_unit_test(test_numa_wins_conflict),
	cmocka_unit_test(test_pref_stays_in_memory_node),
	cmocka_unit_test(test_memory_node_outside_home_ignored))
