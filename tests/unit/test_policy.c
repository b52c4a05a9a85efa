// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy.c - the placement engine on synthetic hosts (real hwloc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "llcrules.h"
#include "policy_harness.h"
#include "test_main.h"

#define EPYC_9T24 "pack:1 [numa] l3:8 core:8 pu:2"

/* --- the kernel's rules ---------------------------------------------------- */

static void
test_rules_match_kernel_code(void **state)
{
	struct llc_rules k = { .aggr_tolerance = 1, .overaggr_pct = 0, .imb_pct = 20, .smt = 2, .kernel = true };
	/* research/cache-aware-sched.md §4.2: the code, not the matrix */
	assert_int_equal(llcrules_can_migrate(&k, 4, 10, 6, 10, 0, true), LLC_MIG_FORBID);   /* src 40 %, dst 60 % */
	assert_int_equal(llcrules_can_migrate(&k, 3, 10, 5, 10, 0, true), LLC_MIG_FORBID);   /* src 30 %, dst 50 % */
	assert_int_equal(llcrules_can_migrate(&k, 6, 10, 4, 10, 0, false), LLC_MIG_LLC);     /* out: src 60 %, dst 40 % */
	assert_int_equal(llcrules_can_migrate(&k, 3, 10, 3, 10, 0, true), LLC_MIG_LLC);
	assert_int_equal(llcrules_can_migrate(&k, 3, 10, 3, 10, 0, false), LLC_MIG_FORBID);
	assert_int_equal(llcrules_can_migrate(&k, 6, 10, 6, 10, 0, true), LLC_MIG_UNRESTRICTED);
	assert_int_equal(llcrules_overaggr_pct(&k), 50);
	k.smt = 1;
	assert_int_equal(llcrules_overaggr_pct(&k), 75);
	/* invalid_llc_nr: 8 busy threads, SMT2, 16-PU LLC: excluded by the kernel */
	k.smt = 2;
	assert_true(llcrules_invalid_nr(&k, 8, 8.0, 16));
	assert_false(llcrules_invalid_nr(&k, 8, 6.0, 16));
	assert_true(llcrules_invalid_nr(&k, 1, 1.0, 16));            /* single thread */
	k.aggr_tolerance = 100;
	assert_false(llcrules_invalid_nr(&k, 8, 8.0, 16));
	k.aggr_tolerance = 0;
	assert_true(llcrules_invalid_nr(&k, 8, 1.0, 16));
	/* llcd's adaptation accepts one busy thread per core exactly */
	struct llc_rules a = { .aggr_tolerance = 1, .imb_pct = 20, .smt = 2, .kernel = false };
	assert_false(llcrules_invalid_nr(&a, 8, 8.0, 16));
	assert_true(llcrules_invalid_nr(&a, 9, 8.5, 16));
	/* Compared as shown (to a tenth of a thread):
	 * 1.0 busy threads do not exceed an LLC of 1 PU */
	a.smt = 1;
	assert_false(llcrules_invalid_nr(&a, 2, 1.0000001, 1));
	assert_false(llcrules_invalid_nr(&a, 2, 1.04, 1));
	assert_true(llcrules_invalid_nr(&a, 2, 1.1, 1));
	a.smt = 2;
	assert_true(llcrules_fits(&a, 8, 16));
	assert_false(llcrules_fits(&k, 8, 16));
	/* decay: 1/2 per epoch */
	assert_true(llcrules_decay(100, 10) < 0.001);
	assert_true(llcrules_decay(1000, 1000) == 0.5);
	assert_true(llcrules_should_switch(2.1, 1.0));
	assert_false(llcrules_should_switch(2.0, 1.0));
	assert_true(llcrules_should_switch(0.01, 0));
	assert_int_equal(llcrules_nr_avg_div(16), 4);
	assert_int_equal(llcrules_nr_avg_div(4), 2);
	assert_int_equal(llcrules_nr_avg_div(128), 8);
}

/* The kernel's nr_running_avg is an integer EWMA that
 * stalls short of a steady sample (update_avg_scale(): truncating division) */
static void
test_rules_kernel_nr_avg_stalls(void **state)
{
	struct llc_rules k = { .aggr_tolerance = 1, .imb_pct = 20, .smt = 2, .kernel = true };
	long avg = 0;

	for (int i = 0; i < 100; i++)
		avg = llcrules_nr_avg_kernel(avg, 8, 16);
	assert_int_equal(avg, 5);                       /* 0, 2, 3, 4, 5, 5, ... */
	/* so the size guard lets a steady 8 busy threads on SMT2 16-PU LLCs
	 * keep a preference: 5 x 2 < 0.8 x 16 */
	assert_false(llcrules_invalid_nr(&k, 8, (double)avg, 16));
	/* from above it stops as short: 12 falling to 8 stays at 11 */
	avg = 12;
	for (int i = 0; i < 100; i++)
		avg = llcrules_nr_avg_kernel(avg, 8, 16);
	assert_int_equal(avg, 11);
	/* 2 threads never move it on a 16-PU LLC; on a 4-PU LLC (divisor 2) 2 settles at 1 */
	assert_int_equal(llcrules_nr_avg_kernel(0, 2, 16), 0);
	avg = 0;
	for (int i = 0; i < 100; i++)
		avg = llcrules_nr_avg_kernel(avg, 2, 4);
	assert_int_equal(avg, 1);
}

/* --- initial placement ------------------------------------------------------ */

static void
test_place_isolated_smt_pairs_one_llc(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	cpuset_parse(&h->host.reserved, "0-1", NULL);
	int d = h_add_mode(h, "web", 8, 1, 4, 2, POLICY_MODE_STATIC, POLICY_ISO_CORE);

	assert_int_equal(h_step(h), 0);
	/* 8 vCPUs = 4 whole cores on one LLC, never the reserved core 0 */
	int llc = h_llc(h, d, 0);
	for (int v = 0; v < 8; v++) {
		const struct cpuset *p = h->dom[d].s[v].pinned;
		assert_int_equal(cpuset_count(p), 1);
		assert_false(cpuset_isset(p, 0) || cpuset_isset(p, 1));
		assert_int_equal(h_llc(h, d, v), llc);
	}
	/* guest SMT siblings (2k, 2k+1) on host sibling PUs of one core */
	for (int v = 0; v < 8; v += 2) {
		int c0 = topo_core_of(h->topo, cpuset_first(h->dom[d].s[v].pinned));
		int c1 = topo_core_of(h->topo, cpuset_first(h->dom[d].s[v + 1].pinned));
		assert_int_equal(c0, c1);
		assert_int_not_equal(cpuset_first(h->dom[d].s[v].pinned), cpuset_first(h->dom[d].s[v + 1].pinned));
	}
	int slots[8];
	assert_int_equal(policy_domain_slots(h->st, h->dom[d].in.key, slots, NULL, 8), 8);
	for (int v = 0; v < 8; v++)
		assert_int_equal(slots[v], cpuset_first(h->dom[d].s[v].pinned));
	assert_int_equal(policy_domain_slots(h->st, 12345, slots, NULL, 8), -1);
	/* the emulator goes to the reserved CPUs */
	assert_int_equal(h_count(h, POLICY_ACT_PIN_EMULATOR), 1);
	/* a second step changes nothing */
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h->plan->n, 0);
	h_free(h);
}

static void
test_place_large_domain_whole_llcs_die_to_llc(void **state)
{
	struct harness *h = h_new("pack:2 [numa] l3:4 core:8 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
	int d = h_add(h, "big", 48, 3, 8, 2, &a);     /* 3 dies of 16 */

	assert_int_equal(h_step(h), 0);
	/* guest die i -> one host LLC, whole LLCs, all in one NUMA node */
	int numa = -1;
	for (int die = 0; die < 3; die++) {
		int llc = h_llc(h, d, die * 16);
		assert_true(llc >= 0);
		for (int v = die * 16; v < die * 16 + 16; v++)
			assert_int_equal(h_llc(h, d, v), llc);
		if (numa < 0)
			numa = h->topo->llc_numa[llc];
		assert_int_equal(h->topo->llc_numa[llc], numa);
		for (int other = 0; other < die; other++)
			assert_int_not_equal(h_llc(h, d, other * 16), llc);
	}
	h_free(h);
}

/* A host of 8 cores with CPUs 0-1 reserved and two isolated 8-vCPU
 * domains: after the first step a is placed and b (*b) refused. */
static struct harness *
h_full(int *b)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_STATIC, POLICY_ISO_CORE);

	cpuset_parse(&h->host.reserved, "0-1", NULL);
	h_add(h, "a", 8, 1, 4, 2, &a);
	*b = h_add(h, "b", 8, 1, 4, 2, &a);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 1);
	return h;
}

static void
test_refuse_when_full(void **state)
{
	int b;
	struct harness *h = h_full(&b);

	const struct policy_action *r = NULL;
	for (int i = 0; i < h->plan->n; i++)
		if (h->plan->actions[i].type == POLICY_ACT_REFUSE)
			r = &h->plan->actions[i];
	assert_int_equal(r->key, h->dom[b].in.key);
	assert_string_equal(r->reason,
	    "needs 4 whole cores for 8 vCPUs (isolation=core, SMT2, overcommit 1); "
	    "only 3 free outside reserved CPUs [0-1] and the shared pool");
	/* b is left unmanaged, confined as a whole to what a does not own */
	struct cpuset pool = h->topo->all;
	cpuset_andnot(&pool, &pool, &h->host.reserved);
	for (int v = 0; v < 8; v++)
		cpuset_andnot(&pool, &pool, h->dom[0].s[v].pinned);
	assert_int_equal(cpuset_count(&pool), 6);
	for (int v = 0; v < 8; v++)
		assert_true(cpuset_equal(h->dom[b].s[v].pinned, &pool));
	/* a leaves: b is placed on the next step */
	h->dom[0].running = false;
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 8);
	h_free(h);
}

/* A refused domain is tried again whenever the host settings that make room
 * change (llcctl tune, reload), not only when another domain leaves.
 * (A new topology, CPU hotplug, places every domain
 * again: test_daemon's topology swap.) */
static void
test_refused_retried_on_host_change(void **state)
{
	int b;
	struct harness *h = h_full(&b);

	/* nothing changed: still refused, and not said again */
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
	/* tune overcommit-isolated 2: b needs 2 whole cores of the 3 free */
	h->host.overcommit_isolated = 2;
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 8);
	struct policy_domain_info info;
	assert_int_equal(policy_domain_info(h->st, h->dom[b].in.key, &info), 0);
	assert_true(info.managed && !info.refused);
	h_free(h);

	/* the same with the reserved CPUs given back (reserved-cpus none) */
	h = h_full(&b);
	cpuset_zero(&h->host.reserved);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 8);
	assert_int_equal(policy_domain_info(h->st, h->dom[b].in.key, &info), 0);
	assert_true(info.managed && !info.refused);

	h_free(h);
}

static void
test_unannotated_confined_as_whole(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:4 pu:2");
	struct policy_annotation iso = h_annot(POLICY_MODE_STATIC, POLICY_ISO_CORE);
	int u = h_add(h, "plain", 4, 1, 4, 1, NULL);

	/* alone: left to the default scheduler, no action */
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h->plan->n, 0);
	int i = h_add(h, "iso", 4, 1, 2, 2, &iso);
	assert_int_equal(h_step(h), 0);
	/* the unannotated domain is pinned as a whole to the pool without iso's cores */
	struct cpuset pool;
	pool = h->topo->all;
	for (int v = 0; v < 4; v++)
		cpuset_andnot(&pool, &pool, h->dom[i].s[v].pinned);
	for (int v = 0; v < 4; v++)
		assert_true(cpuset_equal(h->dom[u].s[v].pinned, &pool));
	assert_int_equal(cpuset_count(&pool), 12);
	/* iso stops: the plain domain is released */
	h->dom[i].running = false;
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_RELEASE), 1);
	assert_true(cpuset_equal(h->dom[u].s[0].pinned, &h->topo->all));
	h_free(h);
}

/* Isolated domains never take the cores the shared pool's domains need. */
static void
test_isolation_keeps_shared_pool(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:2 pu:2");   /* 4 cores */
	struct policy_annotation iso = h_annot(POLICY_MODE_STATIC, POLICY_ISO_CORE);
	int u = h_add(h, "plain", 4, 1, 4, 1, NULL);                    /* needs 2 cores */
	int i = h_add(h, "iso", 6, 1, 3, 2, &iso);                      /* wants 3 cores */

	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 1);
	assert_non_null(strstr(h->plan->actions[0].reason,
	    "needs 3 whole cores for 6 vCPUs (isolation=core, SMT2, overcommit 1); only 2 free"));
	assert_non_null(strstr(h->plan->actions[0].reason, "(which keeps the PUs its domains need)"));
	/* a smaller isolated domain fits and the plain one keeps two cores */
	h->dom[i].running = false;
	int j = h_add(h, "iso2", 4, 1, 2, 2, &iso);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_REFUSE), 0);
	assert_int_equal(cpuset_count(h->dom[u].s[0].pinned), 4);
	assert_false(cpuset_intersects(h->dom[u].s[0].pinned, h->dom[j].s[0].pinned));
	h_free(h);
}

/* --- the preferred-LLC hysteresis ------------------------------------------ */

static void
report(struct harness *h, int d, const char *name, const int *vcpus, int n)
{
	struct policy_hot_report *r = &h->dom[d].rep[0];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->pid = 4242;
	for (int i = 0; i < n; i++)
		cpuset_set(&r->vcpus, vcpus[i]);
	h->dom[d].in.reports = h->dom[d].rep;
	h->dom[d].in.nreports = 1;
}

static void
test_xiangshan_group_settles_on_one_llc(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);         /* the seed's guest: 8 CCXs, as the host's */
	int d = h_add(h, "xs", 128, 8, 8, 2, &a);
	int busy[8];

	for (int v = 0; v < 128; v++)
		h->dom[d].demand[v] = 0.02;
	for (int i = 0; i < 8; i++) {
		busy[i] = 3 + 16 * i;
		h->dom[d].demand[busy[i]] = 1.0;
	}
	report(h, d, "Vtop", busy, 8);
	assert_int_equal(h_step(h), 0);
	/* initial placement: guest die i on host LLC i, so the group starts spread */
	int slots[128];
	assert_int_equal(policy_domain_slots(h->st, h->dom[d].in.key, slots, NULL, 128), 128);
	for (int i = 0; i < 8; i++)
		assert_int_equal(topo_llc_of(h->topo, slots[busy[i]]), i);
	int settled_at = -1, pins_after = 0;
	for (int step = 1; step <= 60; step++) {
		assert_int_equal(h_step(h), 0);
		int l0 = h_llc(h, d, busy[0]), same = 1;
		for (int i = 1; i < 8; i++)
			same &= h_llc(h, d, busy[i]) == l0;
		if (same && settled_at < 0)
			settled_at = step;
		if (settled_at >= 0 && step > settled_at)
			pins_after += h_count(h, POLICY_ACT_PIN_VCPU) + h_count(h, POLICY_ACT_PREFER);
	}
	assert_true(settled_at > 0 && settled_at <= 10);
	assert_int_equal(pins_after, 0);        /* and it stays there */
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	assert_int_equal(info.groups[0].rule, POLICY_GROUP_GUEST);
	assert_int_equal(info.groups[0].pref_llc, h_llc(h, d, busy[0]));
	assert_int_equal(info.pref_switches, 1);
	h_free(h);
}

static void
test_group_larger_than_llc_not_aggregated(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	h_one_group(&a, "big", NULL, 0);
	int busy[12];
	for (int i = 0; i < 12; i++) {
		busy[i] = 2 + 10 * i;
		cpuset_set(&a.groups[0].vcpus, busy[i]);
	}
	int d = h_add(h, "wide", 128, 8, 8, 2, &a);
	for (int i = 0; i < 12; i++)
		h->dom[d].demand[busy[i]] = 1.0;
	for (int step = 0; step < 30; step++) {
		assert_int_equal(h_step(h), 0);
		if (step > 0) {
			assert_int_equal(h_count(h, POLICY_ACT_PREFER), 0);
			assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
		}
	}
	struct policy_domain_info info = h_info(h, d);
	assert_true(info.groups[0].guarded);
	assert_int_equal(info.groups[0].pref_llc, -1);
	assert_non_null(strstr(info.groups[0].why, "not aggregated: 12 threads"));
	h_free(h);
}

/* The size guard at its limit. Two vCPUs of a group on
 * a host whose LLCs have 1 PU each use 1.02 and 0.98 CPUs in turn: the
 * group neither flaps in and out of the guard (the real stack saw 118 pins
 * in 3 minutes) nor is kept off an LLC its 1.0 busy threads fit. */
static int
guard_edge_prefers(struct harness *h, int d, int steps, double hi, double lo)
{
	int prefer = 0;

	for (int step = 0; step < steps; step++) {
		double x = (step & 1) ? hi : lo;
		h->dom[d].demand[0] = x / 2;
		h->dom[d].demand[1] = x / 2;
		assert_int_equal(h_step(h), 0);
		prefer += h_count(h, POLICY_ACT_PREFER);
	}
	return prefer;
}

static void
test_size_guard_exact_and_hysteresis(void **state)
{
	struct harness *h = h_new("pack:1 l3:2 core:1 pu:1");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	h_one_group(&a, "edge", NULL, 0);
	cpuset_set_range(&a.groups[0].vcpus, 0, 1);
	int d = h_add(h, "e", 2, 1, 2, 1, &a);

	/* 1.0 busy on average: fits, one preference, no flapping */
	assert_true(guard_edge_prefers(h, d, 60, 1.02, 0.98) <= 1);
	struct policy_domain_info info = h_info(h, d);
	assert_false(info.groups[0].guarded);
	assert_true(info.groups[0].pref_llc >= 0);
	/* 2 busy: guarded, the preference dropped */
	assert_int_equal(guard_edge_prefers(h, d, 20, 2.0, 2.0), 1);
	info = h_info(h, d);
	assert_true(info.groups[0].guarded);
	assert_int_equal(info.groups[0].pref_llc, -1);
	/* back to 1.0: a guarded group leaves the guard only well below the
	 * limit (hysteresis), so it stays guarded ... */
	assert_int_equal(guard_edge_prefers(h, d, 60, 1.02, 0.98), 0);
	info = h_info(h, d);
	assert_true(info.groups[0].guarded);
	/* ... and leaves it at 0.8 busy threads */
	assert_int_equal(guard_edge_prefers(h, d, 20, 0.8, 0.8), 1);
	info = h_info(h, d);
	assert_false(info.groups[0].guarded);
	assert_true(info.groups[0].pref_llc >= 0);
	h_free(h);
}

/* Capacity is judged on the PUs the group may use in an
 * LLC, not the whole LLC. An isolated 20-vCPU domain owns 8 cores of LLC 0
 * and 2 of LLC 1 (guest die = host LLC share); a 6-vCPU group whose 4
 * vCPUs on LLC 1 are busy first prefers LLC 1, but its busy threads do not
 * fit the 4 PUs (2 cores) it has there: it stays on its placement (before:
 * all 6 were squeezed onto those 4 PUs for good once the 2 on LLC 0 were
 * busy too, while 4 of the domain's PUs in LLC 0 idled). */
static void
test_squeeze_capacity_on_allowed_pus(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
	h_one_group(&a, "six", NULL, 0);
	cpuset_set_range(&a.groups[0].vcpus, 14, 19);
	int d = h_add(h, "iso", 20, 1, 10, 2, &a);
	h_busy_range(h, d, 0, 12);
	h_busy_range(h, d, 16, 20);
	for (int step = 0; step < 30; step++) {
		if (step == 6)          /* the group's vCPUs on LLC 0 start too */
			h->dom[d].demand[14] = h->dom[d].demand[15] = 1.0;
		assert_int_equal(h_step(h), 0);
	}
	struct policy_domain_info info = h_info(h, d);
	struct cpuset l1;
	cpuset_and(&l1, &info.allotment, &topo_get(h->topo, TOPO_LLC, 1)->cpus);
	assert_int_equal(cpuset_count(&l1), 4);  /* 2 cores of LLC 1 */
	int slots[20];
	struct cpuset home[20];
	assert_int_equal(policy_domain_slots(h->st, h->dom[d].in.key, slots, home, 20), 20);
	for (int v = 14; v < 20; v++)
		assert_true(cpuset_equal(h->dom[d].s[v].pinned, &home[v]));
	assert_int_equal(h_llc(h, d, 14), 0);
	assert_true(info.groups[0].guarded);
	assert_int_equal(info.groups[0].pref_llc, -1);
	if (strstr(info.groups[0].why, "4 PUs (aggr-tolerance") == NULL || strstr(info.groups[0].why, "LLC of") != NULL)
		fail_msg("why: %s", info.groups[0].why);
	h_free(h);
}

static void
test_power_like_smt4_llc_not_aggregated(void **state)
{
	struct harness *h = h_new("pack:2 [numa] l3:6 core:1 pu:4");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	h_one_group(&a, "app", NULL, 0);
	cpuset_set_range(&a.groups[0].vcpus, 0, 7);
	int d = h_add(h, "p", 8, 2, 1, 4, &a);
	h_busy_range(h, d, 0, 8);
	int before[8];
	assert_int_equal(h_step(h), 0);
	for (int v = 0; v < 8; v++)
		before[v] = h_llc(h, d, v);
	for (int step = 0; step < 30; step++) {
		assert_int_equal(h_step(h), 0);
		assert_int_equal(h_count(h, POLICY_ACT_PREFER), 0);
	}
	for (int v = 0; v < 8; v++)
		assert_int_equal(h_llc(h, d, v), before[v]);
	h_free(h);
}

/* Two LLCs with nearly equal occupancy: the 2x rule keeps the preference. */
static void
test_no_ping_pong(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	struct policy_annotation none = h_annot(POLICY_MODE_NONE, POLICY_ISO_NONE);
	/* 3 vCPUs on each LLC (guest dies = host LLCs) */
	int vc[6] = { 0, 1, 2, 16, 17, 18 };
	h_one_group(&a, "g", vc, 6);
	int d = h_add(h, "pp", 32, 2, 8, 2, &a);
	/* a busy neighbour fills both LLCs so that no move is possible */
	int n = h_add(h, "noisy", 20, 1, 20, 1, &none);
	for (int v = 0; v < 20; v++)
		h->dom[n].demand[v] = 1.0;
	int switches = 0;
	for (int step = 0; step < 100; step++) {
		/* occupancy alternates: LLC 0 slightly busier, then LLC 1 */
		for (int i = 0; i < 6; i++)
			h->dom[d].demand[vc[i]] = ((step & 1) == (i < 3)) ? 0.9 : 0.8;
		assert_int_equal(h_step(h), 0);
		switches += h_count(h, POLICY_ACT_PREFER);
	}
	assert_true(switches <= 1);
	h_free(h);
}

/* Why epoch-ms defaults to one sampling period: with the kernel's 10 ms
 * epoch at a 1 s period, one sampling period is 100 epochs, so a single
 * quiet period exceeds affinity-timeout (5 epochs), drops the preference
 * and releases the group, which is then re-aggregated: two needless
 * preference changes and a round of migrations for one pause. With
 * epoch = period the same pause is 1 epoch and changes nothing. */
static int
burst_switches(int epoch_ms)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	a.tune.epoch_ms = epoch_ms;
	int vc[8] = { 0, 2, 4, 6, 16, 18, 20, 22 };
	h_one_group(&a, "g", vc, 8);
	int d = h_add(h, "b", 32, 2, 8, 2, &a);
	int prefer = 0;
	for (int step = 0; step < 40; step++) {
		/* steady: 4 threads busy on LLC 0 (vCPUs of die 0) ... */
		for (int i = 0; i < 8; i++)
			h->dom[d].demand[vc[i]] = i < 4 ? 1.0 : 0.0;
		/* ... except one period where the guest pauses */
		if (step == 20)
			for (int i = 0; i < 8; i++)
				h->dom[d].demand[vc[i]] = 0.0;
		h_step(h);
		prefer += h_count(h, POLICY_ACT_PREFER);
	}
	h_free(h);
	return prefer;
}

static void
test_epoch_default_damps_transients(void **state)
{
	int damped = burst_switches(0);          /* default: one period */
	int kernel = burst_switches(10);         /* the kernel's 10 ms at 1 s periods */
	assert_int_equal(damped, 1);            /* only the first preference */
	assert_int_equal(kernel, 3);            /* first, dropped, re-acquired */
}

/* A group's runtime and the per-CPU totals it is divided
 * by decay with the same factor, whatever epoch-ms is: 4 busy vCPUs that
 * are all the load on 4 PUs occupy just under 4 PUs' worth of their LLC
 * (before: 2.00 with a 10 ms epoch at 1 s periods, far over 4 with 20 s). */
static double
steady_occupancy(int epoch_ms)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	a.tune.epoch_ms = epoch_ms;
	int vc[4] = { 0, 2, 4, 6 };
	h_one_group(&a, "g", vc, 4);
	int d = h_add(h, "o", 32, 2, 8, 2, &a);
	h_busy(h, d, vc, 4);
	for (int step = 0; step < 30; step++)
		assert_int_equal(h_step(h), 0);
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	double occ = info.groups[0].best_occ;
	assert_int_equal(info.groups[0].pref_llc, info.groups[0].best_llc);
	assert_float_equal(info.groups[0].pref_occ, occ, 1e-9);
	h_free(h);
	return occ;
}

static void
test_occupancy_same_decay_any_epoch(void **state)
{
	int epochs[] = { 0, 10, 1000, 20000 };
	for (size_t i = 0; i < sizeof(epochs) / sizeof(epochs[0]); i++) {
		double occ = steady_occupancy(epochs[i]);
		if (occ < 3.9 || occ > 4.0)
			fail_msg("epoch-ms %d: occupancy %.2f, expected 3.9-4.0", epochs[i], occ);
	}
}

/* --- benefit check ----------------------------------------------------------- */

/* A bandwidth-bound group: each busy thread sharing its LLC with another
 * busy thread of the group runs at 40 % (like stream on one CCX). */
static double
bw_rate(const struct harness *h, int dom, int v)
{
	int l = topo_llc_of(h->topo, h->dom[dom].s[v].last_cpu), n = 0;
	for (int u = 0; u < h->dom[dom].in.nvcpus; u++)
		if (h->dom[dom].demand[u] >= 0.5 && topo_llc_of(h->topo, h->dom[dom].s[u].last_cpu) == l)
			n++;
	return n > 1 ? 0.4 : 1.0;
}

/* The domain's memory bytes in a period at its busy vCPUs' bw_rate. */
static double
bw_mbm(const struct harness *h, int dom)
{
	return h_busy_mbm(h, dom, bw_rate);
}

static bool stream_mbm;         /* run_stream: bandwidth monitoring on */
static char stream_why[POLICY_REASON];

static int
run_stream(bool counters, int *backoffs, int *spread_at_end)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	a.tune.holddown_s = 1000;
	int vc[4] = { 0, 8, 16, 24 };
	h_one_group(&a, "stream", vc, 4);
	h->host.counters = counters;
	h->rate = bw_rate;
	h->mbm = stream_mbm ? bw_mbm : NULL;
	int d = h_add(h, "st", 32, 4, 4, 2, &a);
	h_busy(h, d, vc, 4);
	*backoffs = 0;
	for (int step = 0; step < 40; step++) {
		h_step(h);
		*backoffs += h_count(h, POLICY_ACT_BACKOFF);
	}
	int llcs = 0, seen[4] = { 0 };
	for (int i = 0; i < 4; i++) {
		int l = topo_llc_of(h->topo, h->dom[d].s[vc[i]].last_cpu);
		if (l >= 0 && !seen[l]++)
			llcs++;
	}
	*spread_at_end = llcs;
	struct policy_domain_info info = h_info(h, d);
	int backed = info.groups[0].backed_off;
	snprintf(stream_why, sizeof(stream_why), "%s", info.groups[0].why);
	h_free(h);
	return backed;
}

static void
test_benefit_check_backs_off(void **state)
{
	int backoffs, llcs;
	/* with counters: aggregation is measured slower, undone and held down */
	assert_true(run_stream(true, &backoffs, &llcs));
	assert_int_equal(backoffs, 1);
	assert_true(llcs >= 3);         /* the balancer spreads them again */
	/* without counters the kernel's guards alone let it aggregate */
	assert_false(run_stream(false, &backoffs, &llcs));
	assert_int_equal(backoffs, 0);
	assert_int_equal(llcs, 1);
	assert_non_null(strstr(stream_why, "no instruction counters or bandwidth monitoring: kernel guards only"));
	/* bandwidth monitoring alone: measured on the
	 * domain's achieved bandwidth, backed off the same */
	stream_mbm = true;
	assert_true(run_stream(false, &backoffs, &llcs));
	stream_mbm = false;
	assert_int_equal(backoffs, 1);
	assert_true(llcs >= 3);
	assert_non_null(strstr(stream_why, "backed off: progress per demanded CPU-second (the domain's memory bandwidth) "));
}

/* Progress is measured per unit of demand, not per
 * CPU-second of runtime. A group whose threads get less CPU once together
 * (here: each runs 60 % of the period when it shares its LLC with another
 * of the group, at the same rate per CPU-second, and waits the other 40 %:
 * run delay) loses progress that a rate per CPU-second of runtime cannot
 * see. */
static void
test_benefit_check_sees_starvation(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	a.tune.holddown_s = 1000;
	int vc[4] = { 0, 8, 16, 24 };
	h_one_group(&a, "starved", vc, 4);
	h->host.counters = true;
	int d = h_add(h, "sv", 32, 4, 4, 2, &a);
	int backoffs = 0;
	h_busy(h, d, vc, 4);
	for (int step = 0; step < 40; step++) {
		assert_int_equal(h_step(h), 0);
		backoffs += h_count(h, POLICY_ACT_BACKOFF);
		for (int i = 0; i < 4; i++) {
			int l = h_llc(h, d, vc[i]), n = 0;
			for (int j = 0; j < 4; j++)
				n += l >= 0 && h_llc(h, d, vc[j]) == l;
			h->dom[d].demand[vc[i]] = n > 1 ? 0.6 : 1.0;
			h->dom[d].s[vc[i]].run_delay_ns = n > 1 ? (uint64_t)(0.4 * (double)h->period) : 0;
		}
	}
	assert_int_equal(backoffs, 1);
	struct policy_domain_info info = h_info(h, d);
	assert_true(info.groups[0].backed_off);
	assert_non_null(strstr(info.groups[0].why, "backed off: progress per demanded CPU-second"));
	h_free(h);
}

/* A group that gains from aggregation keeps it when measured. */
static double
share_rate(const struct harness *h, int dom, int v)
{
	return bw_rate(h, dom, v) < 1.0 ? 1.0 : 0.6;   /* the opposite: sharing helps */
}

static void
test_benefit_check_keeps_gain(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int vc[4] = { 0, 8, 16, 24 };
	h_one_group(&a, "sim", vc, 4);
	h->host.counters = true;
	h->rate = share_rate;
	int d = h_add(h, "v", 32, 4, 4, 2, &a);
	h_busy(h, d, vc, 4);
	for (int step = 0; step < 40; step++) {
		h_step(h);
		assert_int_equal(h_count(h, POLICY_ACT_BACKOFF), 0);
	}
	for (int i = 1; i < 4; i++)
		assert_int_equal(h_llc(h, d, vc[i]), h_llc(h, d, vc[0]));
	struct policy_domain_info info = h_info(h, d);
	assert_non_null(strstr(info.groups[0].why, "kept: progress per demanded CPU-second"));
	h_free(h);
}

/* A gathering that lost is remembered for the load shape
 * it lost in: at that load it is not tried again every hold-down (2, 4, 8
 * hold-downs), while a new load shape is tried at once. */
static int
stream_backoffs(int holddown_s, int steps, int busy_from, int *second_at)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int vc[4] = { 0, 8, 16, 24 }, n = 0;

	a.tune.holddown_s = holddown_s;
	h_one_group(&a, "stream", vc, 4);
	h->host.counters = true;
	h->rate = bw_rate;
	int d = h_add(h, "st", 32, 4, 4, 2, &a);
	h_busy(h, d, vc, 4);
	*second_at = -1;
	for (int step = 0; step < steps; step++) {
		if (step == busy_from)
			h_busy_range(h, d, 1, 2);       /* another busy vCPU: another load */
		assert_int_equal(h_step(h), 0);
		int b = h_count(h, POLICY_ACT_BACKOFF);
		if (b && ++n == 2)
			*second_at = step;
	}
	h_free(h);
	return n;
}

static void
test_benefit_loss_remembered_per_shape(void **state)
{
	int second;

	(void)state;
	/* 80 periods of 1 s, a hold-down of 5 s: lost at ~10 s, tried again
	 * at ~20 s and ~40 s, not every 5 s */
	int n = stream_backoffs(5, 80, -1, &second);
	if (n < 2 || n > 3)
		fail_msg("%d back-offs in 80 s with a 5 s hold-down", n);
	/* a hold-down far longer than the run, and the load changes at 30 s:
	 * the new load is judged at once, and aggregation loses there too */
	n = stream_backoffs(1000, 60, 30, &second);
	assert_int_equal(n, 2);
	assert_true(second > 30 && second < 50);
	assert_int_equal(stream_backoffs(1000, 60, -1, &second), 1);
}

/* Two of a group's four vCPUs pause while its gathering
 * is measured. No verdict across the pause (the group gains from
 * gathering, as share_rate has it): no back-off, and it is kept. */
static void
test_benefit_no_verdict_across_a_pause(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int vc[4] = { 0, 8, 16, 24 }, gathered_at = -1;

	(void)state;
	a.tune.holddown_s = 1000;
	h_one_group(&a, "sim", vc, 4);
	h->host.counters = true;
	h->rate = share_rate;
	int d = h_add(h, "v", 32, 4, 4, 2, &a);
	for (int step = 0; step < 60; step++) {
		bool pause = gathered_at >= 0 && step >= gathered_at + 3 && step < gathered_at + 11;
		h_busy(h, d, vc, 2);
		for (int i = 2; i < 4; i++)
			h->dom[d].demand[vc[i]] = pause ? 0.02 : 1.0;
		assert_int_equal(h_step(h), 0);
		assert_int_equal(h_count(h, POLICY_ACT_BACKOFF), 0);
		if (gathered_at < 0 && h_llc(h, d, vc[1]) >= 0 && h_llc(h, d, vc[1]) == h_llc(h, d, vc[0]))
			gathered_at = step;
	}
	assert_true(gathered_at >= 0);
	struct policy_domain_info info = h_info(h, d);
	assert_non_null(strstr(info.groups[0].why, "kept: progress per demanded CPU-second"));
	h_free(h);
}

/* A kept gathering is looked at again when the load
 * shape changes (two more busy vCPUs in the domain), not only after a
 * drop: released ("load changed from 4 busy vCPUs, 4.0 CPUs to 6 ...:
 * measuring again"), watched as placed, gathered and kept again at the
 * new load. */
static void
test_benefit_kept_looked_at_again(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int vc[4] = { 0, 8, 16, 24 };
	bool again = false;

	(void)state;
	a.tune.holddown_s = 1000;
	h_one_group(&a, "sim", vc, 4);
	h->host.counters = true;
	h->rate = share_rate;
	int d = h_add(h, "v", 32, 4, 4, 2, &a);
	h_busy(h, d, vc, 4);
	for (int step = 0; step < 60; step++) {
		if (step == 25)
			h_busy_range(h, d, 1, 3);
		assert_int_equal(h_step(h), 0);
		struct policy_domain_info info = h_info(h, d);
		if (step == 24)
			assert_non_null(strstr(info.groups[0].why, "kept: progress per demanded CPU-second"));
		/* released and watched as placed at the new load */
		again |= step > 25 && strstr(info.groups[0].why, "measuring its progress as placed") != NULL;
	}
	assert_true(again);
	struct policy_domain_info info = h_info(h, d);
	assert_non_null(strstr(info.groups[0].why, "kept: progress per demanded CPU-second"));
	assert_non_null(strstr(info.groups[0].why, "at 6 busy vCPUs"));
	for (int i = 1; i < 4; i++)
		assert_int_equal(h_llc(h, d, vc[i]), h_llc(h, d, vc[0]));
	h_free(h);
}

/* A group that is only partly aggregated (the rest
 * cannot move: both LLCs busy) is measured all the same. Guest die i on
 * host LLC i (16 PUs each); the group is 4 busy vCPUs on each; other busy
 * vCPUs of the domain make it 7 busy threads on LLC 0 and 12 on LLC 1: one
 * vCPU moves into LLC 0 (then 8 busy, full), the other 3 stay out (both
 * LLCs busy: the balancer's business). */
static void
test_partly_aggregated_group_measured(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int vc[8] = { 0, 1, 2, 3, 16, 17, 18, 19 };
	h_one_group(&a, "part", vc, 8);
	h->host.counters = true;
	int d = h_add(h, "p", 32, 2, 8, 2, &a);
	h_busy(h, d, vc, 8);
	h_busy_range(h, d, 4, 7);
	h_busy_range(h, d, 20, 28);
	for (int step = 0; step < 40; step++)
		assert_int_equal(h_step(h), 0);
	int in0 = 0;
	for (int i = 0; i < 8; i++)
		in0 += h_llc(h, d, vc[i]) == 0;
	assert_int_equal(in0, 5);               /* partly aggregated */
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.groups[0].pref_llc, 0);
	if (strstr(info.groups[0].why, "kept: progress per demanded CPU-second") == NULL)
		fail_msg("not measured: %s", info.groups[0].why);
	assert_non_null(strstr(info.groups[0].why, "3 of 8 vCPUs could not move"));
	h_free(h);
}

/* --- spread ------------------------------------------------------------------- */

static void
test_spread_busy_vcpus_on_distinct_llcs(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_SPREAD, POLICY_ISO_NONE);         /* one guest die: placed on one LLC */
	int d = h_add(h, "cs", 4, 1, 4, 1, &a);
	h_busy_range(h, d, 0, 4);
	int spread = 0;
	for (int step = 0; step < 10; step++) {
		h_step(h);
		for (int i = 0; i < h->plan->n; i++)
			spread += strncmp(h->plan->actions[i].reason, "spread to LLC", 13) == 0;
	}
	assert_int_equal(spread, 3);                 /* 3 moved off the shared LLC */
	int seen[4] = { 0 };
	for (int v = 0; v < 4; v++) {
		int l = h_llc(h, d, v);
		assert_true(l >= 0);
		assert_int_equal(seen[l]++, 0);
	}
	h_free(h);
}

/* --- guest reports ------------------------------------------------------------ */

static void
test_guest_report_hostile_and_dissolve(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int d = h_add(h, "g", 32, 2, 8, 2, &a);
	struct policy_hot_report *r = &h->dom[d].rep[0];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "evil;rm -rf /\n");
	r->pid = 7;
	cpuset_set(&r->vcpus, 1);
	cpuset_set(&r->vcpus, 17);
	cpuset_set(&r->vcpus, 500);     /* beyond the domain: dropped */
	cpuset_set(&r->vcpus, 2047);
	h->dom[d].in.reports = r;
	h->dom[d].in.nreports = 1;
	h->dom[d].demand[1] = h->dom[d].demand[17] = 1.0;
	h_step(h);
	h_step(h);
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	assert_string_equal(info.groups[0].name, "evil_rm_-rf___");
	assert_int_equal(cpuset_count(&info.groups[0].vcpus), 2);
	assert_true(cpuset_isset(&info.groups[0].vcpus, 1) && cpuset_isset(&info.groups[0].vcpus, 17));
	/* the guest stops reporting: after affinity-timeout epochs the group goes */
	h->dom[d].in.nreports = 0;
	for (int step = 0; step < 7; step++)
		h_step(h);
	info = h_info(h, d);
	assert_int_equal(info.ngroups, 0);
	/* and its vCPUs are back on their own LLCs (guest die = host LLC) */
	assert_int_not_equal(h_llc(h, d, 1), h_llc(h, d, 17));
	h_free(h);
}

/* VCPUs a fresh report takes from a silent group do not
 * keep the silent group's LLC pin when their new group never gets a
 * preference (here: it stays idle). */
static void
test_taken_vcpus_not_left_on_stale_pins(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:8 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);         /* guest die i on host LLC i */
	int d = h_add(h, "st", 32, 2, 8, 2, &a);
	int vc[2] = { 1, 17 };

	report(h, d, "old", vc, 2);
	h->dom[d].demand[1] = h->dom[d].demand[17] = 1.0;
	for (int step = 0; step < 10; step++)
		assert_int_equal(h_step(h), 0);
	/* aggregated: both on one LLC */
	assert_true(h_llc(h, d, 1) >= 0);
	assert_int_equal(h_llc(h, d, 1), h_llc(h, d, 17));
	/* another process now reports the same vCPUs, and they go quiet */
	report(h, d, "new", vc, 2);
	h->dom[d].rep[0].pid = 4343;
	h->dom[d].demand[1] = h->dom[d].demand[17] = 0.0;
	for (int step = 0; step < 20; step++)
		assert_int_equal(h_step(h), 0);
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	assert_string_equal(info.groups[0].name, "new");
	assert_int_equal(info.groups[0].pref_llc, -1);
	/* both back on their own placement: different LLCs */
	int slots[32];
	struct cpuset home[32];
	assert_int_equal(policy_domain_slots(h->st, h->dom[d].in.key, slots, home, 32), 32);
	for (int i = 0; i < 2; i++)
		assert_true(cpuset_equal(h->dom[d].s[vc[i]].pinned, &home[vc[i]]));
	assert_int_not_equal(h_llc(h, d, 1), h_llc(h, d, 17));
	h_free(h);
}

/* A domain cannot keep the step's move budget to itself.
 * Two domains (A with the lower key) each have a group of 8 busy vCPUs,
 * one on each LLC (guest die = host LLC); the host allows 2 moves per
 * step. Before: A took both moves every step until it was aggregated, B
 * waited. Now the budget is shared: B moves in the first steps too. */
static void
test_move_budget_shared(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	a.tune.max_moves = 8;
	h_one_group(&a, "g", NULL, 0);
	for (int i = 0; i < 8; i++)
		cpuset_set(&a.groups[0].vcpus, 3 + 8 * i);
	h->host.max_moves_total = 2;
	int d[2];
	d[0] = h_add(h, "A", 64, 8, 4, 2, &a);
	d[1] = h_add(h, "B", 64, 8, 4, 2, &a);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 8; i++)
			h->dom[d[k]].demand[3 + 8 * i] = 1.0;
	int first_move = -1, moved[2] = { 0, 0 };
	for (int step = 0; step < 30; step++) {
		assert_int_equal(h_step(h), 0);
		int n[2] = { 0, 0 };
		for (int i = 0; i < h->plan->n; i++)
			if (h->plan->actions[i].type == POLICY_ACT_PIN_VCPU &&
			    strncmp(h->plan->actions[i].reason, "preferred LLC", 13) == 0)
				n[h->map[h->plan->actions[i].domain] == d[0] ? 0 : 1]++;
		assert_true(n[0] + n[1] <= 2);
		if (first_move < 0 && n[0] + n[1] > 0)
			first_move = step;
		if (first_move >= 0 && step < first_move + 3) {
			moved[0] += n[0];
			moved[1] += n[1];
		}
	}
	assert_true(first_move >= 0);
	/* in the first 3 steps with moves, both domains moved */
	if (moved[0] == 0 || moved[1] == 0)
		fail_msg("first 3 steps with moves: A moved %d, B moved %d", moved[0], moved[1]);
	/* and both end aggregated */
	for (int k = 0; k < 2; k++)
		for (int i = 1; i < 8; i++)
			assert_int_equal(h_llc(h, d[k], 3 + 8 * i), h_llc(h, d[k], 3));
	h_free(h);
}

/* The size guard applies to all of a domain's groups on
 * an LLC together: a guest cannot split a workload too large for an LLC
 * into groups that each pass it. Two reported groups of 6 vCPUs at 45 %
 * (2.7 busy threads each, SMT2: 5.4 of an 8-PU LLC alone, 10.8 together)
 * both have 4 of their vCPUs on LLC 0 (and 2 on LLC 1 or 2). */
static void
test_size_guard_groups_together(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation a = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);         /* guest die i on host LLC i */
	a.tune.max_moves = 8;
	int d = h_add(h, "split", 32, 4, 4, 2, &a);
	int ga[6] = { 0, 1, 2, 3, 8, 9 }, gb[6] = { 4, 5, 6, 7, 16, 17 };
	struct policy_hot_report *r = h->dom[d].rep;
	memset(r, 0, 2 * sizeof(*r));
	snprintf(r[0].name, sizeof(r[0].name), "part1");
	snprintf(r[1].name, sizeof(r[1].name), "part2");
	r[0].pid = 100;
	r[1].pid = 101;
	for (int i = 0; i < 6; i++) {
		cpuset_set(&r[0].vcpus, ga[i]);
		cpuset_set(&r[1].vcpus, gb[i]);
		h->dom[d].demand[ga[i]] = h->dom[d].demand[gb[i]] = 0.45;
	}
	h->dom[d].in.reports = r;
	h->dom[d].in.nreports = 2;
	/* threads under 50 % share PUs in the harness: start each on a PU of
	 * its own, on its die's LLC */
	for (int v = 0; v < 32; v++)
		h->dom[d].s[v].last_cpu = v;
	for (int step = 0; step < 20; step++)
		assert_int_equal(h_step(h), 0);
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 2);
	int in0 = 0;
	for (int i = 0; i < 6; i++)
		in0 += (h_llc(h, d, ga[i]) == 0) + (h_llc(h, d, gb[i]) == 0);
	/* one group aggregated on LLC 0 (6), the other's 4 vCPUs of die 0
	 * there by placement; its 2 others stay home (before: all 12) */
	if (in0 != 10)
		fail_msg("%d of the 12 vCPUs pinned to LLC 0 (prefs %d, %d)", in0,
		    info.groups[0].pref_llc, info.groups[1].pref_llc);
	assert_true(info.groups[0].pref_llc == 0 || info.groups[1].pref_llc == 0);
	assert_true(info.groups[0].guarded != info.groups[1].guarded);
	const char *why = info.groups[0].guarded ? info.groups[0].why : info.groups[1].why;
	assert_non_null(strstr(why, "with the domain's other groups there"));
	h_free(h);
}

/* An annotation change that alters the shape re-places the domain;
 * a tune change does not move anything. */
static void
test_annotation_change(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	int d = h_add_mode(h, "c", 8, 1, 4, 2, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	h_step(h);
	h_step(h);
	h->dom[d].in.annot.tune.imb_pct = 30;
	h_step(h);
	assert_int_equal(h->plan->n, 0);
	h->dom[d].in.annot.mode = POLICY_MODE_STATIC;
	h_step(h);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 8);
	for (int v = 0; v < 8; v++)
		assert_int_equal(cpuset_count(h->dom[d].s[v].pinned), 1);
	/* mode none: released back to the default scheduler */
	h->dom[d].in.annot.mode = POLICY_MODE_NONE;
	h_step(h);
	assert_int_equal(h_count(h, POLICY_ACT_RELEASE), 1);
	assert_true(cpuset_equal(h->dom[d].s[0].pinned, &h->topo->all));
	h_free(h);
}

/* --- preference churn -------------------------------------- */

/* The preferred-LLC changes and vCPU pins over a minute of the groups of
 * ndom domains (one group of the busy vCPUs listed each), after placement
 * (the first 3 steps); the most of any domain into *pref and *pins. */
static void
churn_run(struct harness *h, int ndom, int nv, const int *busy, int nbusy, int *pref, int *pins)
{
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int np[H_MAXDOM] = { 0 }, nq[H_MAXDOM] = { 0 };

	h_one_group(&a, "app", busy, nbusy);
	for (int i = 0; i < ndom; i++) {
		char name[16];
		snprintf(name, sizeof(name), "vm%d", i);
		int d = h_add(h, name, nv, 1, nv, 1, &a);
		for (int v = 0; v < nv; v++)
			h->dom[d].demand[v] = 0.02;
		h_busy(h, d, busy, nbusy);
	}
	for (int step = 0; step < 63; step++) {
		assert_int_equal(h_step(h), 0);
		for (int i = 0; step >= 3 && i < h->plan->n; i++) {
			const struct policy_action *x = &h->plan->actions[i];
			int d = h->map[x->domain];
			np[d] += x->type == POLICY_ACT_PREFER && x->llc >= 0;
			nq[d] += x->type == POLICY_ACT_PIN_VCPU;
		}
	}
	*pref = *pins = 0;
	for (int i = 0; i < ndom; i++) {
		*pref = np[i] > *pref ? np[i] : *pref;
		*pins = nq[i] > *pins ? nq[i] : *pins;
	}
}

/* An overcommitted host (64 PUs in 8 LLCs of 4 cores, 4 vCPUs per PU):
 * 10 domains of 16 vCPUs, each with a busy 3-thread group spread over the
 * domain. Every LLC carries about 4 busy threads, so the kernel's rules
 * refuse every move into a group's preferred LLC. The group keeps its
 * preference and retries less and less often: a few preferred-LLC changes
 * and pins a minute at most (before: a change and 2 pins every 3 periods,
 * the vCPU already on the preferred LLC pinned there and back). */
static void
test_refused_group_no_churn(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:8 core:4 pu:2");
	static const int busy[] = { 0, 5, 10 };
	int pref, pins;

	h->host.overcommit = 4;
	churn_run(h, 10, 16, busy, 3, &pref, &pins);
	if (pref > 3 || pins > 8)
		fail_msg("a domain changed its preferred LLC %d times and pinned %d vCPUs in a minute", pref, pins);
	h_free(h);
}

/* --- isolation invariant under random churn -------------------------------- */

static uint64_t
rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
check_isolation(struct harness *h, uint64_t seed, int step)
{
	const struct topo *t = h->topo;
	int ncore = topo_count(t, TOPO_CORE);
	int *owner = calloc((size_t)ncore, sizeof(int));

	for (int c = 0; c < ncore; c++)
		owner[c] = -1;
	/* pass 1: cores of isolated domains */
	for (int i = 0; i < h->ndom; i++) {
		struct h_dom *d = &h->dom[i];
		struct policy_domain_info info;
		if (!d->running || !d->in.annotated || d->in.annot.isolation != POLICY_ISO_CORE ||
		    d->in.annot.mode == POLICY_MODE_NONE)
			continue;
		if (policy_domain_info(h->st, d->in.key, &info) < 0 || !info.managed)
			continue;
		for (int v = 0; v < d->in.nvcpus; v++) {
			int cpu;
			CPUSET_FOREACH(cpu, d->s[v].pinned) {
				int c = topo_core_of(t, cpu);
				if (owner[c] >= 0 && owner[c] != i)
					fail_msg("seed %llu step %d: core %d carries isolated domains %d and %d",
					    (unsigned long long)seed, step, c, owner[c], i);
				owner[c] = i;
			}
		}
	}
	/* pass 2: no other domain's vCPU may be allowed on an isolated core */
	for (int i = 0; i < h->ndom; i++) {
		struct h_dom *d = &h->dom[i];
		if (!d->running)
			continue;
		for (int v = 0; v < d->in.nvcpus; v++) {
			int cpu;
			CPUSET_FOREACH(cpu, d->s[v].pinned) {
				int c = topo_core_of(t, cpu);
				if (owner[c] >= 0 && owner[c] != i)
					fail_msg("seed %llu step %d: vCPU %d of domain %d may run on core %d of isolated domain %d",
					    (unsigned long long)seed, step, v, i, c, owner[c]);
			}
			if (cpuset_intersects(d->s[v].pinned, &h->host.reserved) &&
			    d->in.annotated && d->in.annot.mode != POLICY_MODE_NONE) {
				struct policy_domain_info info;
				if (policy_domain_info(h->st, d->in.key, &info) == 0 && info.managed)
					fail_msg("seed %llu step %d: managed domain %d pinned on a reserved CPU",
					    (unsigned long long)seed, step, i);
			}
		}
	}
	free(owner);
}

static void
test_isolation_random_churn(void **state)
{
	for (uint64_t seed = 1; seed <= 200; seed++) {
		uint64_t r = seed;
		struct harness *h = h_new("pack:2 [numa] l3:3 core:4 pu:2");
		cpuset_parse(&h->host.reserved, "0", NULL);
		for (int step = 0; step < 40; step++) {
			/* start or stop a few domains */
			int ops = (int)(rng(&r) % 3);
			for (int o = 0; o < ops; o++)
				h_churn_one(h, rng, &r, 2, 1);
			assert_int_equal(h_step(h), 0);
			check_isolation(h, seed, step);
			/* and between any two of the step's pins, in the
			 * plan's order */
			if (h->between > 0)
				fail_msg("seed %llu step %d: %d pins break isolation before the plan ends: %s",
				    (unsigned long long)seed, step, h->between, h->between_what);
		}
		h_free(h);
	}
}

/* --- determinism: input order does not change the plan ---------------------- */

static void
plan_signature(const struct harness *h, char *buf, size_t len)
{
	size_t off = 0;
	/* actions come out in domain key order; compare them by key */
	for (int i = 0; i < h->plan->n && off < len; i++) {
		const struct policy_action *a = &h->plan->actions[i];
		char cs[256];
		cpuset_format(&a->cpus, cs, sizeof(cs));
		off += (size_t)snprintf(buf + off, len - off, "%llu:%d:%d:%s;",
		    (unsigned long long)a->key, a->type, a->vcpu, cs);
	}
}

static void
test_input_order_irrelevant(void **state)
{
	static char sig[2][1 << 16];
	for (int run = 0; run < 2; run++) {
		struct harness *h = h_new("pack:2 [numa] l3:4 core:4 pu:2");
		struct policy_annotation iso = h_annot(POLICY_MODE_STATIC, POLICY_ISO_CORE);
		struct policy_annotation agg = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		for (int i = 0; i < 10; i++) {
			char name[16];
			snprintf(name, sizeof(name), "v%d", i);
			int d = h_add(h, name, 2 + i % 5, 1, 2 + i % 5, 1, i % 2 ? &iso : &agg);
			for (int v = 0; v < h->dom[d].in.nvcpus; v++)
				h->dom[d].demand[v] = (v + i) % 3 ? 0.9 : 0.1;
		}
		if (run == 1)
			for (int i = 0; i < 10; i++)
				h->order[i] = 9 - i;
		sig[run][0] = '\0';
		for (int step = 0; step < 5; step++) {
			assert_int_equal(h_step(h), 0);
			size_t off = strlen(sig[run]);
			plan_signature(h, sig[run] + off, sizeof(sig[run]) - off);
		}
		h_free(h);
	}
	assert_true(strlen(sig[0]) > 100);
	assert_string_equal(sig[0], sig[1]);
}

/* --- restart: adopting current pins means zero re-pins ---------------------- */

static void
test_restart_adopts_pins(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	h_add_mode(h, "a", 6, 1, 3, 2, POLICY_MODE_STATIC, POLICY_ISO_CORE);
	h_add_mode(h, "b", 10, 1, 10, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	assert_int_equal(h_step(h), 0);
	assert_true(h_count(h, POLICY_ACT_PIN_VCPU) == 16);
	/* llcd restarts: fresh state, same world */
	h_restart(h);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
	h_free(h);
}

/* libvirt's default pin (every CPU) is not an allocation to adopt: a new
 * isolated domain gets just the cores it needs. */
static void
test_default_pins_not_adopted(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:4 pu:2");
	int d = h_add_mode(h, "i", 2, 1, 1, 2, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);

	assert_int_equal(h_step(h), 0);
	struct policy_domain_info info = h_info(h, d);
	assert_true(info.managed);
	assert_int_equal(cpuset_count(&info.allotment), 2);     /* one core */
	h_free(h);
}

/* vCPU hot-plug: domain d has n vCPUs now; the new threads start with
 * the pin they inherit from the thread that made them (QEMU's main loop:
 * the emulator pin), inherit. */
static void
h_grow(struct harness *h, int d, int n, const struct cpuset *inherit)
{
	struct h_dom *x = &h->dom[d];

	x->s = realloc(x->s, sizeof(*x->s) * (size_t)n);
	x->pin = realloc(x->pin, sizeof(*x->pin) * (size_t)n);
	x->demand = realloc(x->demand, sizeof(double) * (size_t)n);
	for (int v = x->in.nvcpus; v < n; v++) {
		memset(&x->s[v], 0, sizeof(x->s[v]));
		x->pin[v] = *inherit;
		x->s[v].last_cpu = -1;
		x->demand[v] = 0;
	}
	for (int v = 0; v < n; v++)     /* the pins moved with the realloc */
		x->s[v].pinned = &x->pin[v];
	x->in.nvcpus = n;
	x->in.vcpus = x->s;
	x->in.guest.cores = n;
}

/* A hot-plugged vCPU is placed beside the others, which keep their pins
 * (one pin action: the new vCPU's); an unplug moves nobody. */
static void
test_hotplug_keeps_pins(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:2 core:4 pu:2");
	struct policy_annotation agg = h_match(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int s = h_add_mode(h, "s", 2, 1, 2, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE), g = h_add(h, "g", 2, 1, 2, 1, &agg);
	struct cpuset s0, s1, g0, u;

	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 4);
	s0 = *h->dom[s].s[0].pinned;
	s1 = *h->dom[s].s[1].pinned;
	g0 = *h->dom[g].s[0].pinned;
	cpuset_or(&u, &s0, &s1);
	/* the new threads inherit every CPU (no emulator pin): not adopted as
	 * they are, placed */
	h_grow(h, s, 3, &h->topo->all);
	h_grow(h, g, 3, &h->topo->all);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 2);
	for (int a = 0; a < h->plan->n; a++)
		if (h->plan->actions[a].type == POLICY_ACT_PIN_VCPU)
			assert_int_equal(h->plan->actions[a].vcpu, 2);
	assert_true(cpuset_equal(h->dom[s].s[0].pinned, &s0));
	assert_true(cpuset_equal(h->dom[s].s[1].pinned, &s1));
	assert_true(cpuset_equal(h->dom[g].s[0].pinned, &g0));
	/* static: one PU of the LLCs of the others, not one of theirs (the
	 * least loaded) */
	assert_int_equal(cpuset_count(h->dom[s].s[2].pinned), 1);
	assert_int_equal(h_llc(h, s, 2), h_llc(h, s, 0));
	assert_false(cpuset_intersects(h->dom[s].s[2].pinned, &u));
	/* aggregate, topology="match": the PUs of the others (their LLC) */
	cpuset_or(&u, h->dom[g].s[0].pinned, h->dom[g].s[1].pinned);
	assert_true(cpuset_equal(h->dom[g].s[2].pinned, &u));
	struct policy_domain_info info = h_info(h, s);
	assert_true(info.managed);
	assert_int_equal(cpuset_count(&info.allotment), 3);
	/* settled: nothing more */
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
	/* unplug: the rest adopted where they are */
	h->dom[s].in.nvcpus = 2;
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
	assert_true(cpuset_equal(h->dom[s].s[0].pinned, &s0));
	h_free(h);
}

static void
test_bad_input(void **state)
{
	struct harness *h = h_new(EPYC_9T24);
	struct llcd_err err;
	struct policy_input in = { .host = h->host, .period_ns = 0 };

	assert_int_equal(policy_step(h->st, &in, h->plan, &err), -1);
	assert_string_equal(err.msg, "policy: sampling period must be > 0");
	struct policy_domain_in d[2] = { 0 };
	struct policy_vcpu_sample s[2] = { 0 };
	d[0].key = d[1].key = 5;
	d[0].nvcpus = d[1].nvcpus = 1;
	d[0].vcpus = d[1].vcpus = s;
	snprintf(d[0].name, sizeof(d[0].name), "x");
	snprintf(d[1].name, sizeof(d[1].name), "y");
	in.period_ns = 1000;
	in.ndomains = 2;
	in.domains = d;
	assert_int_equal(policy_step(h->st, &in, h->plan, &err), -1);
	assert_string_equal(err.msg, "policy: domains 'x' and 'y' share key 5");
	d[1].key = 6;
	d[1].nvcpus = 0;
	assert_int_equal(policy_step(h->st, &in, h->plan, &err), -1);
	assert_string_equal(err.msg, "policy: domain 'y' has 0 vCPUs (allowed 1-2048)");
	h_free(h);
}


/* A pin over several LLCs names them ("LLCs 0-1"), never "LLC -1" (issue
 * 16 item 7). */
static void
test_reason_names_llcs(void **state)
{
	struct harness *h = h_new("pack:1 l3:2 core:1 pu:1");
	int d = h_add_mode(h, "two", 2, 1, 2, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int pins = 0, multi = 0;

	/* the live back-end's view of threads it never pinned: "not placed" */
	for (int v = 0; v < 2; v++)
		cpuset_zero(&h->dom[d].pin[v]);

	for (int k = 0; k < 3; k++) {
		assert_int_equal(h_step(h), 0);
		for (int i = 0; i < h->plan->n; i++) {
			const struct policy_action *x = &h->plan->actions[i];
			assert_null(strstr(x->reason, "LLC -1"));
			if (x->type != POLICY_ACT_PIN_VCPU)
				continue;
			pins++;
			if (cpuset_count(&x->cpus) == 2) {
				multi++;
				assert_non_null(strstr(x->reason, "LLCs 0-1 [0-1]"));
			}
		}
	}
	assert_int_equal(pins, 2);
	assert_true(multi > 0);
	h_free(h);
}

TEST_MAIN(
	cmocka_unit_test(test_reason_names_llcs),
	cmocka_unit_test(test_rules_match_kernel_code),
	cmocka_unit_test(test_rules_kernel_nr_avg_stalls),
	cmocka_unit_test(test_place_isolated_smt_pairs_one_llc),
	cmocka_unit_test(test_place_large_domain_whole_llcs_die_to_llc),
	cmocka_unit_test(test_refuse_when_full),
	cmocka_unit_test(test_refused_retried_on_host_change),
	cmocka_unit_test(test_unannotated_confined_as_whole),
	cmocka_unit_test(test_isolation_keeps_shared_pool),
	cmocka_unit_test(test_xiangshan_group_settles_on_one_llc),
	cmocka_unit_test(test_group_larger_than_llc_not_aggregated),
	cmocka_unit_test(test_size_guard_exact_and_hysteresis),
	cmocka_unit_test(test_squeeze_capacity_on_allowed_pus),
	cmocka_unit_test(test_power_like_smt4_llc_not_aggregated),
	cmocka_unit_test(test_no_ping_pong),
	cmocka_unit_test(test_epoch_default_damps_transients),
	cmocka_unit_test(test_occupancy_same_decay_any_epoch),
	cmocka_unit_test(test_benefit_check_backs_off),
	cmocka_unit_test(test_benefit_check_keeps_gain),
	cmocka_unit_test(test_benefit_check_sees_starvation),
	cmocka_unit_test(test_partly_aggregated_group_measured),
	cmocka_unit_test(test_benefit_loss_remembered_per_shape),
	cmocka_unit_test(test_benefit_no_verdict_across_a_pause),
	cmocka_unit_test(test_benefit_kept_looked_at_again),
	cmocka_unit_test(test_spread_busy_vcpus_on_distinct_llcs),
	cmocka_unit_test(test_guest_report_hostile_and_dissolve),
	cmocka_unit_test(test_taken_vcpus_not_left_on_stale_pins),
	cmocka_unit_test(test_move_budget_shared),
	cmocka_unit_test(test_size_guard_groups_together),
	cmocka_unit_test(test_annotation_change),
	cmocka_unit_test(test_isolation_random_churn),
	cmocka_unit_test(test_refused_group_no_churn),
	cmocka_unit_test(test_input_order_irrelevant),
	cmocka_unit_test(test_restart_adopts_pins),
	cmocka_unit_test(test_default_pins_not_adopted),
	cmocka_unit_test(test_hotplug_keeps_pins),
	cmocka_unit_test(test_bad_input))
