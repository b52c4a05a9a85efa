// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_wakeups.c - groups inferred from wakeups inside the engine
 * (policy/groups.c calling policy/wakeups.c): a barrier group seen only
 * through its wakeups forms a `wakeups` group and settles on one LLC;
 * annotation groups and guest-reported groups win their vCPUs; infer='none'
 * turns inference off (the history is still shown); background wakeups
 * form nothing; the size guard applies; bad edges are refused with the
 * exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

#define EPYC_9T24 "pack:1 [numa] l3:8 core:8 pu:2"

static struct policy_wakeup_edge edges[POLICY_WAKEUP_EDGES];
static struct policy_wakeups wk;

/* Deterministic background: every vCPU wakes two neighbours 10 times a
 * second (20/s per vCPU, the llcsim default). */
static void
wk_noise(int nvcpus)
{
	for (int v = 0; v < nvcpus && wk.nedges + 2 <= POLICY_WAKEUP_EDGES; v++) {
		edges[wk.nedges++] = (struct policy_wakeup_edge){ v, (v + 1) % nvcpus, 10 };
		edges[wk.nedges++] = (struct policy_wakeup_edge){ v, (v + 37) % nvcpus, 10 };
	}
}

/* Every ordered pair of set wakes n times a second. */
static void
wk_clique(const int *set, int k, uint32_t n)
{
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++)
			if (i != j && wk.nedges < POLICY_WAKEUP_EDGES)
				edges[wk.nedges++] = (struct policy_wakeup_edge){ set[i], set[j], n };
}

static void
wk_begin(struct harness *h, int d)
{
	memset(&wk, 0, sizeof(wk));
	wk.period_ns = h->period;
	wk.edges = edges;
	h->dom[d].in.wakeups = &wk;
}

static const struct policy_group_info *
find_rule(const struct policy_domain_info *info, enum policy_group_rule r)
{
	for (int i = 0; i < info->ngroups; i++)
		if (info->groups[i].rule == r)
			return &info->groups[i];
	return NULL;
}

static void
assert_vcpus(const struct cpuset *s, const char *want)
{
	char buf[256];

	assert_int_equal(cpuset_format(s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

/* The host of the tests of the rule itself, with an aggregate annotation
 * (no isolation) in *a for its domain. It has no counters and no bandwidth
 * monitoring, so the operator has opted in to act on unjudged groups
 * (llcd.conf unjudged-groups act); the no-judge tests below start from
 * wk_host_default(). */
static struct harness *
wk_host_default(struct policy_annotation *a)
{
	*a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	return h_new(EPYC_9T24);
}

static struct harness *
wk_host(struct policy_annotation *a)
{
	struct harness *h = wk_host_default(a);

	h->host.act_unjudged = true;
	return h;
}

static const int xs[8] = { 3, 19, 35, 51, 67, 83, 99, 115 };

static int
xs_domain(struct harness *h, const struct policy_annotation *a)
{
	int d = h_add(h, "xs", 128, 8, 8, 2, a);

	for (int v = 0; v < 128; v++)
		h->dom[d].demand[v] = 0.02;
	for (int i = 0; i < 8; i++)
		h->dom[d].demand[xs[i]] = 1.0;
	return d;
}

/* steps periods of the guest's background wakeups and the clique of its
 * first k busy vCPUs (xs[]) waking each other n times a period, each step
 * without an error. */
static void
wk_periods(struct harness *h, int d, int steps, int k, uint32_t n)
{
	for (int step = 0; step < steps; step++) {
		wk_begin(h, d);
		wk_noise(128);
		wk_clique(xs, k, n);
		assert_int_equal(h_step(h), 0);
	}
}

static void
test_barrier_group_from_wakeups(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);
	a.topology = POLICY_TOPO_MATCH;
	int d = xs_domain(h, &a), formed = -1, settled = -1;
	struct policy_domain_info info;

	for (int step = 0; step < 40; step++) {
		wk_begin(h, d);
		wk_noise(128);
		wk_clique(xs, 8, 140);          /* ~1000/s per thread over 7 partners */
		assert_int_equal(h_step(h), 0);
		info = h_info(h, d);
		if (formed < 0 && find_rule(&info, POLICY_GROUP_WAKEUPS) != NULL)
			formed = step;
		int l0 = h_llc(h, d, xs[0]), same = l0 >= 0;
		for (int i = 1; i < 8; i++)
			same &= h_llc(h, d, xs[i]) == l0;
		if (same && settled < 0)
			settled = step;
	}
	/* WAKEUPS_FORM_S is two 1 s periods, and the EWMA climbs first */
	assert_true(formed >= 2 && formed <= 6);
	assert_true(settled > formed && settled <= formed + 10);
	const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(g);
	assert_int_equal(info.ngroups, 1);
	assert_string_equal(g->name, "wakeups-3");
	assert_vcpus(&g->vcpus, "3,19,35,51,67,83,99,115");
	assert_string_equal(policy_group_rule_name(g->rule), "wakeups");
	assert_int_equal(g->wakeup_pairs, 28);
	assert_true(g->wakeups_hz > 28 * 2 * 140 * 0.9 && g->wakeups_hz < 28 * 2 * 140 * 1.01);
	assert_int_equal(g->pref_llc, h_llc(h, d, xs[0]));

	struct policy_wakeups_info wi;
	struct wakeups_pair_info pairs[4];
	assert_int_equal(policy_domain_wakeups(h->st, h->dom[d].in.key, &wi, pairs, 4), 4);
	assert_true(wi.inferring);
	assert_true(pairs[0].formed);
	assert_true(pairs[0].rate_hz > 270);
	assert_true(wi.background_hz < 1);
	h_free(h);
}

static void
test_annotation_group_wins(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);

	h_one_group(&a, "ann", NULL, 0);
	cpuset_set(&a.groups[0].vcpus, 3);
	cpuset_set(&a.groups[0].vcpus, 19);
	int d = xs_domain(h, &a);
	wk_periods(h, d, 10, 4, 200);        /* 3, 19, 35, 51 */
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 2);
	assert_string_equal(info.groups[0].name, "ann");
	assert_vcpus(&info.groups[0].vcpus, "3,19");
	const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(g);
	assert_vcpus(&g->vcpus, "35,51");
	assert_int_equal(g->wakeup_pairs, 1);
	h_free(h);
}

static void
test_guest_group_wins_overlap(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);
	int d;

	d = xs_domain(h, &a);
	/* the inferred group forms first ... */
	wk_periods(h, d, 8, 5, 200);        /* 3, 19, 35, 51, 67 */
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 1);
	assert_vcpus(&info.groups[0].vcpus, "3,19,35,51,67");
	/* ... then the helper reports a process on three of its vCPUs */
	struct policy_hot_report *r = &h->dom[d].rep[0];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "Vtop");
	r->pid = 77;
	for (int i = 0; i < 3; i++)
		cpuset_set(&r->vcpus, xs[i]);
	h->dom[d].in.reports = h->dom[d].rep;
	h->dom[d].in.nreports = 1;
	wk_periods(h, d, 3, 5, 200);
	info = h_info(h, d);
	assert_int_equal(info.ngroups, 2);
	const struct policy_group_info *gg = find_rule(&info, POLICY_GROUP_GUEST);
	const struct policy_group_info *gw = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(gg);
	assert_non_null(gw);
	assert_vcpus(&gg->vcpus, "3,19,35");
	assert_vcpus(&gw->vcpus, "51,67");
	assert_string_equal(gw->name, "wakeups-3");     /* the name stays */
	h_free(h);
}

static void
test_infer_none_switches_off(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);

	a.infer = POLICY_INFER_NONE;
	int d = xs_domain(h, &a);
	for (int step = 0; step < 20; step++) {
		wk_begin(h, d);
		wk_noise(128);
		wk_clique(xs, 8, 140);
		assert_int_equal(h_step(h), 0);
		if (step > 0)
			assert_int_equal(h_count(h, POLICY_ACT_PREFER), 0);
	}
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 0);
	struct policy_wakeups_info wi;
	struct wakeups_pair_info pairs[2];
	assert_int_equal(policy_domain_wakeups(h->st, h->dom[d].in.key, &wi, pairs, 2), 2);
	assert_false(wi.inferring);
	assert_true(pairs[0].formed);   /* the rule still sees the pair */

	/* switched back on (an annotation change): the group forms */
	h->dom[d].in.annot.infer = POLICY_INFER_WAKEUPS;
	wk_periods(h, d, 3, 8, 140);
	info = h_info(h, d);
	assert_non_null(find_rule(&info, POLICY_GROUP_WAKEUPS));
	h_free(h);
}

static void
test_noise_forms_nothing(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);

	int d = xs_domain(h, &a);
	for (int step = 0; step < 60; step++) {
		wk_begin(h, d);
		wk_noise(128);
		assert_int_equal(h_step(h), 0);
		if (step > 0) {
			assert_int_equal(h_count(h, POLICY_ACT_PREFER), 0);
			assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 0);
		}
	}
	struct policy_domain_info info = h_info(h, d);
	assert_int_equal(info.ngroups, 0);
	h_free(h);
}

/* 12 busy threads waking each other: an inferred group, but larger than
 * one LLC (8 cores x 2): the size guard keeps it spread. */
static void
test_size_guard_applies(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);
	int big[12];

	int d = h_add(h, "wide", 128, 8, 8, 2, &a);
	for (int i = 0; i < 12; i++) {
		big[i] = 2 + 10 * i;
		h->dom[d].demand[big[i]] = 1.0;
	}
	for (int step = 0; step < 20; step++) {
		wk_begin(h, d);
		wk_clique(big, 12, 100);
		assert_int_equal(h_step(h), 0);
	}
	struct policy_domain_info info = h_info(h, d);
	const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(g);
	assert_int_equal(cpuset_count(&g->vcpus), 12);
	assert_true(g->guarded);
	assert_int_equal(g->pref_llc, -1);
	assert_non_null(strstr(g->why, "not aggregated: 12 threads"));
	h_free(h);
}

/* Two real 6-thread groups joined by a weak link (one thread of
 * each wakes one of the other 10 times a second each way) are two groups,
 * each on an LLC of its own, not one of 12 that the size guard refuses. */
static void
test_weak_link_two_groups(void **state)
{
	static const int l[6] = { 3, 19, 35, 51, 67, 83 }, r[6] = { 5, 21, 37, 53, 69, 85 };
	struct policy_annotation a;
	struct harness *h = wk_host(&a);
	int d = h_add(h, "two", 128, 8, 8, 2, &a);
	struct policy_domain_info info;

	for (int v = 0; v < 128; v++)
		h->dom[d].demand[v] = 0.02;
	for (int i = 0; i < 6; i++)
		h->dom[d].demand[l[i]] = h->dom[d].demand[r[i]] = 1.0;
	for (int step = 0; step < 30; step++) {
		wk_begin(h, d);
		wk_noise(128);
		wk_clique(l, 6, 60);            /* 300/s per thread over 5 partners */
		wk_clique(r, 6, 60);
		edges[wk.nedges++] = (struct policy_wakeup_edge){ 83, 5, 10 };
		edges[wk.nedges++] = (struct policy_wakeup_edge){ 5, 83, 10 };
		assert_int_equal(h_step(h), 0);
		info = h_info(h, d);
		for (int g = 0; g < info.ngroups; g++)
			assert_true(cpuset_count(&info.groups[g].vcpus) <= 6);
	}
	assert_int_equal(info.ngroups, 2);
	assert_string_equal(info.groups[0].name, "wakeups-3");
	assert_vcpus(&info.groups[0].vcpus, "3,19,35,51,67,83");
	assert_string_equal(info.groups[1].name, "wakeups-5");
	assert_vcpus(&info.groups[1].vcpus, "5,21,37,53,69,85");
	for (int g = 0; g < 2; g++) {
		int p = info.groups[g].pref_llc, in = 0;
		assert_true(p >= 0);
		for (int i = 0; i < 6; i++)
			in += h_llc(h, d, (g ? r : l)[i]) == p;
		assert_int_equal(in, 6);
	}
	assert_true(info.groups[0].pref_llc != info.groups[1].pref_llc);
	h_free(h);
}

/* The no-judge rule: on a host with neither counters
 * nor bandwidth monitoring, the barrier group seen through its wakeups is
 * formed and shown (rule wakeups, unjudged, `why` says so) but never gets
 * a preference, and no vCPU of it is pinned away from its placement. */
static void
test_unjudged_shown_not_acted(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host_default(&a);
	int d = xs_domain(h, &a);
	struct policy_domain_info info;

	for (int step = 0; step < 30; step++) {
		wk_begin(h, d);
		wk_noise(128);
		wk_clique(xs, 8, 140);
		assert_int_equal(h_step(h), 0);
		for (int i = 0; i < h->plan->n; i++) {
			const struct policy_action *act = &h->plan->actions[i];
			assert_true(act->type != POLICY_ACT_PREFER || act->llc < 0);
			if (act->type == POLICY_ACT_PIN_VCPU)
				assert_null(strstr(act->reason, "preferred"));
		}
	}
	info = h_info(h, d);
	const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(g);
	assert_vcpus(&g->vcpus, "3,19,35,51,67,83,99,115");
	assert_true(g->unjudged);
	assert_int_equal(g->pref_llc, -1);
	assert_non_null(strstr(g->why, "inferred from wakeups, not acted on: no instruction counters or "
	    "memory bandwidth monitoring on this host"));
	assert_non_null(strstr(g->why, "unjudged-groups act"));
	assert_int_equal(info.pref_switches, 0);
	h_free(h);
}

/* With a judge the same group is acted on: instruction counters, or a
 * domain's memory bandwidth figures (resctrl); without one, the operator's
 * opt-in (unjudged-groups act). The benefit check switched off in the
 * annotation leaves nothing to judge: shown, not acted on, and why. */
static void
test_judges_act(void **state)
{
	for (int c = 0; c < 4; c++) {
		struct policy_annotation a;
		struct harness *h = wk_host_default(&a);
		if (c == 0) {
			h->host.counters = true;
		} else if (c == 1) {
			/* bandwidth monitoring: any steady figure will do (the
			 * benefit check compares it with itself) */
			h->mbm_flat = 1e9;
			h->mbm = h_mbm_flat;
		} else if (c == 2) {
			h->host.act_unjudged = true;
		} else {
			h->host.counters = true;
			a.tune.benefit_check = false;
		}
		int d = xs_domain(h, &a);
		wk_periods(h, d, 30, 8, 140);
		struct policy_domain_info info = h_info(h, d);
		const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_WAKEUPS);
		assert_non_null(g);
		if (c < 3) {
			assert_false(g->unjudged);
			assert_true(g->pref_llc >= 0);
			for (int i = 0; i < 8; i++)
				assert_int_equal(h_llc(h, d, xs[i]), g->pref_llc);
		} else {
			assert_true(g->unjudged);
			assert_int_equal(g->pref_llc, -1);
			assert_non_null(strstr(g->why, "the benefit check is off (benefit-check='off')"));
		}
		h_free(h);
	}
}

/* The host's judges changed while the engine runs (llcctl tune
 * unjudged-groups act and back; counters found): the group formed while
 * nothing could judge it is acted on in the period after the change and
 * let go in the period after the change back. Run as
 * test_policy_wakeups_shadow, an engine that recomputes everything beside
 * the incremental one plans the same in every period of the flips. */
static void
test_unjudged_tuned_midrun(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host_default(&a);
	int d = xs_domain(h, &a);
	struct policy_domain_info info;
	const struct policy_group_info *g;

	wk_periods(h, d, 30, 8, 140);
	info = h_info(h, d);
	g = find_rule(&info, POLICY_GROUP_WAKEUPS);
	assert_non_null(g);
	assert_true(g->unjudged);
	assert_int_equal(g->pref_llc, -1);
	for (int round = 0; round < 2; round++) {
		if (round == 0)
			h->host.act_unjudged = true;
		else
			h->host.counters = true;
		wk_periods(h, d, 1, 8, 140);
		info = h_info(h, d);
		g = find_rule(&info, POLICY_GROUP_WAKEUPS);
		assert_non_null(g);
		assert_false(g->unjudged);
		assert_true(g->pref_llc >= 0);
		wk_periods(h, d, 10, 8, 140);
		h->host.act_unjudged = h->host.counters = false;
		wk_periods(h, d, 1, 8, 140);
		info = h_info(h, d);
		g = find_rule(&info, POLICY_GROUP_WAKEUPS);
		assert_non_null(g);
		assert_true(g->unjudged);
		assert_int_equal(g->pref_llc, -1);
		wk_periods(h, d, 10, 8, 140);
	}
	h_free(h);
}

/* A guest-reported group needs no judge of its own: the helper names a
 * process, which is what shares data. */
static void
test_reported_group_acted_without_judge(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host_default(&a);
	int d = xs_domain(h, &a);

	h->dom[d].in.nreports = 1;
	snprintf(h->dom[d].rep[0].name, sizeof(h->dom[d].rep[0].name), "verilator");
	h->dom[d].rep[0].pid = 42;
	for (int i = 0; i < 8; i++)
		cpuset_set(&h->dom[d].rep[0].vcpus, xs[i]);
	h->dom[d].in.reports = h->dom[d].rep;
	for (int step = 0; step < 20; step++)
		assert_int_equal(h_step(h), 0);
	struct policy_domain_info info = h_info(h, d);
	const struct policy_group_info *g = find_rule(&info, POLICY_GROUP_GUEST);
	assert_non_null(g);
	assert_false(g->unjudged);
	assert_true(g->pref_llc >= 0);
	h_free(h);
}

static void
test_bad_edges_refused(void **state)
{
	struct policy_annotation a;
	struct harness *h = wk_host(&a);
	struct policy_input in;
	struct llcd_err err;

	int d = xs_domain(h, &a);
	wk_begin(h, d);
	edges[0] = (struct policy_wakeup_edge){ 200, 1, 3 };
	wk.nedges = 1;
	memset(&in, 0, sizeof(in));
	in.host = h->host;
	in.ndomains = 1;
	in.domains = &h->dom[d].in;
	in.period_ns = h->period;
	assert_int_equal(policy_step(h->st, &in, h->plan, &err), -1);
	assert_string_equal(err.msg, "policy: domain 'xs': wakeups: edge 0: vCPU 200 -> 1 outside 0-127");
	h_free(h);
}

TEST_MAIN(
	cmocka_unit_test(test_barrier_group_from_wakeups),
	cmocka_unit_test(test_annotation_group_wins),
	cmocka_unit_test(test_guest_group_wins_overlap),
	cmocka_unit_test(test_infer_none_switches_off),
	cmocka_unit_test(test_noise_forms_nothing),
	cmocka_unit_test(test_size_guard_applies),
	cmocka_unit_test(test_weak_link_two_groups),
	cmocka_unit_test(test_unjudged_shown_not_acted),
	cmocka_unit_test(test_judges_act),
	cmocka_unit_test(test_unjudged_tuned_midrun),
	cmocka_unit_test(test_reported_group_acted_without_judge),
	cmocka_unit_test(test_bad_edges_refused))
