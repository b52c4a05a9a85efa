// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_incr.c - incremental steps (policy_state_set_incremental):
 * a step that takes from the last step what its unchanged inputs would
 * make again plans exactly what a step that recomputes everything plans.
 * Every world here runs two engines on the same input each period, the
 * second with incremental steps off (policy_harness.h h_shadow()), and
 * compares their plans and each domain's introspection every period:
 * long steady stretches (where the incremental engine skips), broken by
 * load changes, reports coming and going, domains stopping and starting,
 * the benefit check's and home check's trials firing and the move budget
 * running out. Some run with the samples' pins in the pool the engine
 * interns its own in (h_pool(), policy_state_share_sets: llcd's live
 * back-end), the shadow with its own pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

/* Threads sharing an LLC with more than two busy ones run slower: the
 * benefit and home checks have something to measure and undo. */
static double
crowd_rate(const struct harness *h, int dom, int v)
{
	const struct h_dom *d = &h->dom[dom];
	int l = topo_llc_of(h->topo, d->s[v].last_cpu), n = 0;

	for (int u = 0; u < d->in.nvcpus; u++)
		n += d->demand[u] >= 0.5 && topo_llc_of(h->topo, d->s[u].last_cpu) == l;
	return n > 2 ? 2.0 / n : 1.0;
}

static void
report(struct harness *h, int d, int pid, const int *vcpus, int n)
{
	struct policy_hot_report *r = &h->dom[d].rep[0];

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "worker");
	r->pid = pid;
	for (int i = 0; i < n; i++)
		cpuset_set(&r->vcpus, vcpus[i]);
	h->dom[d].in.reports = h->dom[d].rep;
	h->dom[d].in.nreports = 1;
}

/* A mixed host for periods periods: isolated static and aggregate
 * domains, shared aggregate (one with a report, one with an annotation
 * group), static, spread and unannotated ones, most idle with a few busy
 * vCPUs; every 25 periods something changes. */
static void
mixed_world(bool counters, int max_moves, int periods, bool pool)
{
	struct harness *h = h_new("pack:2 [numa] l3:4 core:4 pu:2");
	struct policy_annotation grp = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int gv[3] = { 1, 3, 5 }, rv[4] = { 0, 2, 4, 6 };

	h_shadow(h);
	if (pool)
		h_pool(h);
	cpuset_parse(&h->host.reserved, "0", NULL);
	h->host.counters = counters;
	h->host.max_moves_total = max_moves;
	h->rate = crowd_rate;
	h_one_group(&grp, "g", gv, 3);
	int iso1 = h_add_mode(h, "iso1", 2, 1, 2, 1, POLICY_MODE_STATIC, POLICY_ISO_CORE);
	int iso2 = h_add_mode(h, "iso2", 4, 1, 4, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
	int agg1 = h_add_mode(h, "agg1", 8, 1, 8, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int agg2 = h_add_mode(h, "agg2", 8, 1, 8, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int agg3 = h_add(h, "agg3", 6, 1, 6, 1, &grp);
	int st1 = h_add_mode(h, "st1", 4, 1, 4, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE);
	int sp1 = h_add_mode(h, "sp1", 4, 1, 4, 1, POLICY_MODE_SPREAD, POLICY_ISO_NONE);
	int un1 = h_add(h, "un1", 2, 1, 2, 1, NULL);
	int late = -1;

	for (int i = 0; i < h->ndom; i++)
		for (int v = 0; v < h->dom[i].in.nvcpus; v++)
			h->dom[i].demand[v] = v % 3 == 0 ? 0.9 : 0.02;
	h_busy_range(h, iso2, 0, 4);
	report(h, agg1, 501, rv, 4);
	h_busy(h, agg1, rv, 4);
	h_busy(h, agg3, gv, 3);
	h_busy_range(h, sp1, 0, 3);
	for (int step = 0; step < periods; step++) {
		switch (step) {
		case 25:        /* a load change in one domain */
			h_busy_range(h, agg2, 0, 6);
			break;
		case 50:        /* a report goes, a domain stops */
			h->dom[agg1].in.nreports = 0;
			h->dom[st1].running = false;
			break;
		case 75:        /* a domain starts; the report comes back */
			late = h_add_mode(h, "late", 4, 1, 4, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
			h_busy_range(h, late, 0, 4);
			report(h, agg1, 502, rv, 3);
			break;
		case 100:       /* quiet again */
			for (int v = 0; v < 8; v++)
				h->dom[agg2].demand[v] = 0.02;
			h->dom[iso1].running = false;
			break;
		case 125:       /* and busy */
			h_busy_range(h, agg2, 2, 8);
			h_busy_range(h, un1, 0, 2);
			break;
		}
		assert_int_equal(h_step(h), 0);
	}
	/* the engine holds domains: its pool can no longer change */
	struct cpuset_pool *other = cpuset_pool_new();
	assert_non_null(other);
	assert_int_equal(policy_state_share_sets(h->st, other), -1);
	cpuset_pool_free(other);
	(void)late;
	h_free(h);
}

static void
test_incr_mixed_counters(void **state)
{
	(void)state;
	mixed_world(true, 0, 160, false);
}

static void
test_incr_mixed_pool(void **state)
{
	(void)state;
	mixed_world(true, 0, 160, true);
	mixed_world(false, 2, 160, true);
}

static void
test_incr_mixed_no_counters(void **state)
{
	(void)state;
	mixed_world(false, 0, 160, false);
}

static void
test_incr_mixed_budget(void **state)
{
	(void)state;
	mixed_world(true, 2, 160, false);
}

static uint64_t
rng(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Random churn: domains of every mode start and stop, loads change now
 * and then and otherwise stay. */
static void
test_incr_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		uint64_t r = seed;
		struct harness *h = h_new("pack:2 [numa] l3:3 core:4 pu:2");
		h_shadow(h);
		if (seed % 4 < 2)
			h_pool(h);
		cpuset_parse(&h->host.reserved, "0", NULL);
		h->host.counters = seed % 2;
		h->rate = crowd_rate;
		for (int step = 0; step < 60; step++) {
			if (rng(&r) % 6 == 0)
				h_churn_one(h, rng, &r, 3, 0);
			if (h->ndom > 0 && rng(&r) % 8 == 0) {
				struct h_dom *d = &h->dom[rng(&r) % (uint64_t)h->ndom];
				d->demand[rng(&r) % (uint64_t)d->in.nvcpus] = (rng(&r) % 4) / 3.0;
			}
			assert_int_equal(h_step(h), 0);
		}
		h_free(h);
	}
}

/* Groups that go idle and busy again, over and over: an idle group sends
 * its vCPUs home every period, and with incremental steps it skips that
 * while no pin of its domain was written since (groups_send_home()); in
 * between it gathers, is released (to its origin LLCs, by the benefit
 * check with counters) and guarded, so that wants leave home behind its
 * back. The shadow compares every period. */
static void
test_incr_idle_cycles(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		uint64_t r = seed * 7919;
		struct harness *h = h_new("pack:1 l3:4 core:4 pu:2");
		int n = 0;
		h_shadow(h);
		if (seed % 3 == 0)
			h_pool(h);
		h->host.counters = seed % 2;
		h->rate = crowd_rate;
		for (int i = 0; i < 4; i++) {
			char name[16];
			snprintf(name, sizeof(name), "a%d", i);
			int nv = 3 + (int)(rng(&r) % 6);      /* 3-8: the domain is a group */
			n = h_add_mode(h, name, nv, 1, nv, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		}
		(void)n;
		for (int step = 0; step < 150; step++) {
			for (int i = 0; i < h->ndom; i++) {
				if (rng(&r) % 9 != 0)
					continue;
				struct h_dom *d = &h->dom[i];
				double dem = rng(&r) % 3 == 0 ? 0.0 : rng(&r) % 2 ? 0.95 : 0.3;
				for (int v = 0; v < d->in.nvcpus; v++)
					d->demand[v] = v % 2 == 0 || dem > 0.5 ? dem : 0.01;
			}
			assert_int_equal(h_step(h), 0);
		}
		h_free(h);
	}
}

/* Someone else re-pins a vCPU of a settled domain whose load does not
 * change: only the sample's pin is new, and the engine must pin it back
 * (with incremental steps a settled domain's pins are not compared again
 * while its samples, pins included, are the last step's: emit_pins()).
 * Both pin modes: the samples' pins copies of the harness's, or sets of
 * the engine's pool. */
static void
test_incr_external_pin(void **state)
{
	(void)state;
	for (int pool = 0; pool < 2; pool++) {
		struct harness *h = h_new("pack:1 l3:4 core:4 pu:2");
		uint64_t r = 77 + (uint64_t)pool;
		int repinned = 0;
		h_shadow(h);
		if (pool)
			h_pool(h);
		h->host.counters = pool;
		h->rate = crowd_rate;
		int a = h_add_mode(h, "agg", 6, 1, 6, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		int b = h_add_mode(h, "st", 4, 1, 4, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE);
		h_busy_range(h, a, 0, 3);
		h_busy_range(h, b, 0, 1);
		for (int step = 0; step < 120; step++) {
			if (step >= 30 && step % 9 == 0) {
				int di = (r >> 7) % 2 ? a : b;
				struct h_dom *d = &h->dom[di];
				int v = (int)((r >> 17) % (uint64_t)d->in.nvcpus);
				cpuset_zero(&d->pin[v]);
				cpuset_set(&d->pin[v], (int)((r >> 27) % 8));
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				assert_int_equal(h_step(h), 0);
				/* pinned back at once */
				bool back = false;
				for (int i = 0; i < h->plan->n; i++)
					back |= h->plan->actions[i].type == POLICY_ACT_PIN_VCPU &&
					        h->map[h->plan->actions[i].domain] == di && h->plan->actions[i].vcpu == v;
				repinned += back;
				continue;
			}
			assert_int_equal(h_step(h), 0);
		}
		assert_true(repinned >= 8);
		h_free(h);
	}
}
/* Idle groups at their fixed point step in a few instructions
 * (steer.c grp_quiet()) until something they read changes: each change
 * here is one a stale shortcut would miss (the best LLC, the size guard,
 * the idle timeout, a second group, the benefit check, activity), with a
 * domain that was busy first (its preference dropped after the timeout)
 * and ones that never ran. The shadow compares every period, each
 * group's best LLC and reason included. */
static void
test_incr_quiet_groups(void **state)
{
	(void)state;
	for (int pool = 0; pool < 2; pool++) {
		struct harness *h = h_new("pack:2 [numa] l3:2 core:4 pu:2");
		int gv[2] = { 0, 1 };
		h_shadow(h);
		if (pool)
			h_pool(h);
		h->host.counters = false;
		int q[4];
		for (int i = 0; i < 4; i++) {
			char name[16];
			snprintf(name, sizeof(name), "q%d", i);
			q[i] = h_add_mode(h, name, 4, 1, 4, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		}
		h_busy_range(h, q[3], 0, 3);    /* busy first, then idle */
		bool quiet_seen = false;
		struct cpuset off01, nobound;
		cpuset_parse(&off01, "16-31", NULL);
		cpuset_zero(&nobound);
		for (int step = 0; step < 150; step++) {
			struct h_dom *d0 = &h->dom[q[0]], *d1 = &h->dom[q[1]], *d3 = &h->dom[q[3]];
			switch (step) {
			case 12:
				for (int v = 0; v < 4; v++)
					d3->demand[v] = 0;
				break;
			case 30:        /* the memory on node 1: the best LLC moves there */
				d0->in.mem_node_valid = true;
				d0->in.mem_node = 1;
				break;
			case 40:        /* and back on node 0 */
				d0->in.mem_node = 0;
				break;
			case 50:        /* aggregation off: the size guard holds it */
				d1->in.annot.tune.aggr_tolerance = 0;
				break;
			case 60:
				d1->in.annot.tune.aggr_tolerance = 100;
				break;
			case 70:        /* a bound off LLC 0 and 1: another best LLC */
				d0->in.bound = &off01;
				break;
			case 80:        /* an empty bound: none */
				d0->in.bound = &nobound;
				break;
			case 85:        /* NULL: still none, nothing re-placed */
				d0->in.bound = NULL;
				break;
			case 90:        /* the whole shared pool shrinks */
				cpuset_parse(&h->host.reserved, "0-7", NULL);
				break;
			case 100:       /* a longer idle timeout than its idle epochs */
				d1->in.annot.tune.affinity_timeout = 1000;
				break;
			case 105:
				d1->in.annot.tune.affinity_timeout = 5;
				break;
			case 110:       /* a second group (an annotation group) */
				h_one_group(&d1->in.annot, "pair", gv, 2);
				break;
			case 120:       /* counters: the benefit check observes */
				h->host.counters = true;
				break;
			case 130:       /* activity again */
				h_busy_range(h, q[2], 0, 2);
				break;
			case 140:
				for (int v = 0; v < 4; v++)
					h->dom[q[2]].demand[v] = 0;
				break;
			}
			assert_int_equal(h_step(h), 0);
			struct policy_domain_info x;
			assert_int_equal(policy_domain_info(h->st, h->dom[q[3]].in.key, &x), 0);
			quiet_seen |= step > 30 && x.ngroups == 1 && strcmp(x.groups[0].why, "idle") == 0;
		}
		assert_true(quiet_seen);
		h_free(h);
	}
}

/* Guest reports that stay the same period after period are applied once
 * (groups.c guest_groups_again(), home.c procs_again(): the reports
 * compared with the last step's, step.c rep_same()) until something the
 * update reads changes: each change here is one a stale shortcut would
 * miss: the report's vCPUs, pid and name changed in place, a second
 * report, the groups cleared by a new bound (as many reports, no guest
 * group), an annotation group that gives the report's vCPUs back, a
 * spread domain's report gone for two periods and back as it was (its
 * process forgotten meanwhile: the reports' copy is the last step's only
 * while each step compares them), and the reports gone. The shadow compares every period, each group's vCPUs and
 * reason included. */
static void
test_incr_steady_reports(void **state)
{
	(void)state;
	for (int pool = 0; pool < 2; pool++) {
		struct harness *h = h_new("pack:2 [numa] l3:4 core:2 pu:2");
		struct policy_annotation grp = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		int rv[4] = { 0, 2, 4, 6 }, gv[4] = { 0, 1, 2, 3 }, two[2] = { 5, 7 };
		h_shadow(h);
		if (pool)
			h_pool(h);
		h->host.counters = pool;
		h->rate = crowd_rate;
		h_one_group(&grp, "g", gv, 4);
		int a = h_add_mode(h, "a", 8, 1, 8, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		int b = h_add(h, "b", 8, 1, 8, 1, &grp);
		int c = h_add_mode(h, "c", 8, 1, 8, 1, POLICY_MODE_SPREAD, POLICY_ISO_NONE);
		report(h, a, 501, rv, 4);
		report(h, b, 601, gv, 4);       /* all the annotation group's: no guest group */
		report(h, c, 701, gv, 4);       /* a spread domain: no group at all */
		h_busy(h, a, rv, 4);
		h_busy(h, b, gv, 4);
		h_busy(h, c, gv, 4);
		int guest_seen = 0;
		struct cpuset bound011;
		cpuset_parse(&bound011, "0-11", NULL);
		for (int step = 0; step < 130; step++) {
			struct h_dom *da = &h->dom[a], *db = &h->dom[b];
			switch (step) {
			case 20:        /* the report's vCPUs, in place */
				cpuset_clr(&da->rep[0].vcpus, 6);
				break;
			case 30:        /* its pid */
				da->rep[0].pid = 502;
				break;
			case 40:        /* its name */
				snprintf(da->rep[0].name, sizeof(da->rep[0].name), "other");
				break;
			case 50:        /* a second report */
				memset(&da->rep[1], 0, sizeof(da->rep[1]));
				snprintf(da->rep[1].name, sizeof(da->rep[1].name), "pair");
				da->rep[1].pid = 503;
				for (int i = 0; i < 2; i++)
					cpuset_set(&da->rep[1].vcpus, two[i]);
				da->in.nreports = 2;
				break;
			case 60:        /* a bound: placed again, its groups made afresh */
				da->in.bound = &bound011;
				break;
			case 70:        /* the annotation group gives vCPUs 2 and 3 back */
				cpuset_zero(&db->in.annot.groups[0].vcpus);
				cpuset_set_range(&db->in.annot.groups[0].vcpus, 0, 1);
				break;
			case 80:        /* gone for two periods (its process forgotten) ... */
				h->dom[c].in.nreports = 0;
				break;
			case 82:        /* ... and back as it was */
				h->dom[c].in.nreports = 1;
				break;
			case 90:        /* the reports gone */
				da->in.nreports = 0;
				break;
			case 110:
				db->in.nreports = 0;
				break;
			}
			assert_int_equal(h_step(h), 0);
			struct policy_domain_info x;
			assert_int_equal(policy_domain_info(h->st, db->in.key, &x), 0);
			for (int g = 0; g < x.ngroups; g++)
				guest_seen += step > 70 && step < 110 && x.groups[g].rule == POLICY_GROUP_GUEST;
		}
		assert_true(guest_seen > 0);
		h_free(h);
	}
}

TEST_MAIN(
	cmocka_unit_test(test_incr_steady_reports),
	cmocka_unit_test(test_incr_quiet_groups),
	cmocka_unit_test(test_incr_external_pin),
	cmocka_unit_test(test_incr_idle_cycles),
	cmocka_unit_test(test_incr_mixed_counters),
	cmocka_unit_test(test_incr_mixed_no_counters),
	cmocka_unit_test(test_incr_mixed_budget),
	cmocka_unit_test(test_incr_mixed_pool),
	cmocka_unit_test(test_incr_random))
