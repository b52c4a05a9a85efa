// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_home.c - the home check (policy/home.c):
 * the home llcd chose is measured, and widened over more LLCs when that
 * gains, with each signal the host may have (instruction counters, memory
 * bandwidth monitoring, run delay), and says so where it has none.
 *
 * The world: a bandwidth-bound domain. 16 vCPUs, aggregate,
 * isolation='core', on a host with 8-core LLCs (SMT2): placed on the 8
 * cores of one LLC. vCPUs 0-7 stream memory at 20 GB/s each and an LLC
 * sustains 60 GB/s, so each runs at min(1, 3 / busy vCPUs in its LLC). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

#define NBUSY 8

static double
stream_factor(const struct harness *h, int dom, int v)
{
	int l = topo_llc_of(h->topo, h->dom[dom].s[v].last_cpu), n = 0;

	for (int u = 0; u < NBUSY; u++)
		n += topo_llc_of(h->topo, h->dom[dom].s[u].last_cpu) == l;
	return n > 3 ? 3.0 / n : 1.0;
}

static double
stream_rate(const struct harness *h, int dom, int v)
{
	return v < NBUSY ? stream_factor(h, dom, v) : 1.0;
}

static double
stream_mbm(const struct harness *h, int dom)
{
	double b = 0;

	for (int v = 0; v < NBUSY; v++)
		b += 20e9 * stream_factor(h, dom, v) * (double)h->period / 1e9;
	return b;
}

static double
flat_rate(const struct harness *h, int dom, int v)
{
	(void)h;
	(void)dom;
	(void)v;
	return 1.0;
}

struct run {
	int backoffs;
	char backoff_reason[POLICY_REASON];
	struct policy_domain_info info;
	int llcs;                       /* LLCs of the allotment at the end */
	int max_busy_per_llc;           /* at the end */
};

static bool match_topology;     /* the domain has topology="match" */

/* delay_narrow: run delay of each busy vCPU while the home is one LLC
 * (share of the period; 0 none). */
static void
run_stream(bool counters, bool mbm, bool flat, double delay_narrow, struct run *r)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);

	if (match_topology)
		a.topology = POLICY_TOPO_MATCH;

	memset(r, 0, sizeof(*r));
	a.tune.holddown_s = 1000;
	h->host.counters = counters;
	h->rate = flat ? flat_rate : stream_rate;
	h->mbm = mbm ? stream_mbm : NULL;
	int d = h_add(h, "stream", 16, 1, 16, 1, &a);
	for (int v = 0; v < 16; v++)
		h->dom[d].demand[v] = v < NBUSY ? 1.0 : 0.02;
	for (int step = 0; step < 40; step++) {
		if (delay_narrow > 0) {
			/* runnable the whole period: it runs 1 - delay of it */
			struct policy_domain_info di;
			bool narrow = policy_domain_info(h->st, h->dom[d].in.key, &di) < 0 ||
			              cpuset_count(&di.allotment) == 0 ||
			              cpuset_subset(&di.allotment, &topo_get(h->topo, TOPO_LLC,
			                  topo_llc_of(h->topo, cpuset_first(&di.allotment)))->cpus);
			for (int v = 0; v < NBUSY; v++) {
				h->dom[d].s[v].run_delay_ns = narrow ? (uint64_t)(delay_narrow * (double)h->period) : 0;
				h->dom[d].demand[v] = narrow ? 1.0 - delay_narrow : 1.0;
			}
		}
		assert_int_equal(h_step(h), 0);
		for (int i = 0; i < h->plan->n; i++)
			if (h->plan->actions[i].type == POLICY_ACT_BACKOFF) {
				r->backoffs++;
				snprintf(r->backoff_reason, sizeof(r->backoff_reason), "%s", h->plan->actions[i].reason);
			}
	}
	assert_int_equal(policy_domain_info(h->st, h->dom[d].in.key, &r->info), 0);
	assert_int_equal(cpuset_count(&r->info.allotment), 16);        /* 8 whole cores, always */
	for (int l = 0; l < topo_count(h->topo, TOPO_LLC); l++) {
		struct cpuset x;
		int n = 0;
		cpuset_and(&x, &r->info.allotment, &topo_get(h->topo, TOPO_LLC, l)->cpus);
		r->llcs += !cpuset_empty(&x);
		for (int v = 0; v < NBUSY; v++)
			n += topo_llc_of(h->topo, h->dom[d].s[v].last_cpu) == l;
		if (n > r->max_busy_per_llc)
			r->max_busy_per_llc = n;
	}
	h_free(h);
}

/* A home check on run_stream's domain: its inputs (counters, bandwidth
 * monitoring, a flat rate: nothing to gain, run delay in the narrow home,
 * topology="match"), the outcomes every case checks (back-offs, LLCs the
 * allotment ends on, whether the home is wider) and the texts: what the
 * last back-off's reason and home_why hold, what home_why is exactly or
 * must not hold (NULL: not checked). */
struct home_case {
	bool counters, mbm, flat, match;
	double delay_narrow;
	int backoffs, llcs;
	bool widened;
	const char *backoff_has;
	const char *why_has[2];
	const char *why_is;
	const char *why_not;
	int max_busy_per_llc;           /* at most this many busy vCPUs on an LLC; 0: not checked */
};

static void
test_home_case(void **state)
{
	const struct home_case *c = *state;
	struct run r;

	match_topology = c->match;
	run_stream(c->counters, c->mbm, c->flat, c->delay_narrow, &r);
	match_topology = false;
	assert_int_equal(r.backoffs, c->backoffs);
	assert_int_equal(r.llcs, c->llcs);
	assert_int_equal(r.info.home_widened, c->widened);
	if (c->backoff_has != NULL && strstr(r.backoff_reason, c->backoff_has) == NULL)
		fail_msg("back-off reason: %s; want: %s", r.backoff_reason, c->backoff_has);
	for (int i = 0; i < 2; i++)
		if (c->why_has[i] != NULL && strstr(r.info.home_why, c->why_has[i]) == NULL)
			fail_msg("home_why: %s; want: %s", r.info.home_why, c->why_has[i]);
	if (c->why_is != NULL)
		assert_string_equal(r.info.home_why, c->why_is);
	if (c->why_not != NULL && strstr(r.info.home_why, c->why_not) != NULL)
		fail_msg("home_why: %s; must not hold: %s", r.info.home_why, c->why_not);
	if (c->max_busy_per_llc > 0)
		assert_true(r.max_busy_per_llc <= c->max_busy_per_llc);
}

static const struct home_case home_cases[] = {
	/* With counters: the one-LLC home runs at 3/8; the check widens it
	 * over all four LLCs (two whole cores each: four times the LLCs it
	 * has), sees the gain and keeps it; there is no wider home after that. */
	{ .counters = true, .backoffs = 1, .llcs = 4, .widened = true,
	  .backoff_has = "home widened from LLC 0 to LLCs 0-3 (whole cores on other LLCs): instructions per "
	      "demanded CPU-second ",
	  .why_has = { "(+158%), at 8 busy vCPUs, 8.2 CPUs; kept while the load stays alike" },
	  .max_busy_per_llc = 3 },
	/* Bandwidth monitoring alone (no counters): the same, judged on the
	 * domain's achieved bandwidth per demanded CPU-second. */
	{ .mbm = true, .backoffs = 1, .llcs = 4, .widened = true,
	  .why_has = { "home widened from LLC 0 to LLCs 0-3 (whole cores on other LLCs): memory bytes per "
	      "demanded CPU-second 1.96e+10 on LLCs 0-3 vs 7.35e+09 on LLC 0 (+167%)" } },
	/* A home that loses nothing (progress the same on one LLC or four) is
	 * tried, measured, and given back: the one-LLC home again, and the
	 * failure remembered for the load. */
	{ .counters = true, .flat = true, .backoffs = 0, .llcs = 1, .widened = false,
	  .why_has = { "home kept on LLC 0: instructions per demanded CPU-second ",
	      "(+0%), no gain over 5%, at 8 busy vCPUs, 8.2 CPUs; not widened again at this load for 2000 s" } },
	/* Run delay alone: CPU wait in the narrow home (half of each busy
	 * vCPU's runnable time) that the wider one removes is a gain. */
	{ .delay_narrow = 0.5, .backoffs = 1, .llcs = 4, .widened = true,
	  .why_has = { "home widened from LLC 0 to LLCs 0-3 (whole cores on other LLCs): run delay 0.0% on "
	      "LLCs 0-3 vs 49.0% on LLC 0, at 8 busy vCPUs, 8.2 CPUs; kept while the load stays alike" } },
	/* No signal at all (no counters, no bandwidth monitoring, no run
	 * delay): the check says it cannot tell, never "kept", and the home
	 * stays. */
	{ .backoffs = 0, .llcs = 1, .widened = false,
	  .why_is = "home on LLC 0 not measured: no instruction counters or bandwidth monitoring, and run "
	      "delay 0.0% (at most 10%) shows no CPU wait a wider home would relieve; a memory-bound loss "
	      "cannot be seen without them",
	  .why_not = "kept" },
	/* topology="match" keeps guest die i on host LLC i: the home is left
	 * as placed, and the check says why. */
	{ .counters = true, .match = true, .backoffs = 0, .llcs = 1, .widened = false,
	  .why_is = "home on LLC 0 as placed: no wider home (topology=\"match\" keeps guest die i on host LLC i)" },
};

#define HOME_CASE(name, i) { name, test_home_case, NULL, NULL, (void *)&home_cases[i] }

/* --- trials on like-for-like load, homes that narrow again ------ */

/* The LLCs an allotment touches. */
static int
llcs_of(const struct harness *h, const struct cpuset *allot)
{
	int n = 0;

	for (int l = 0; l < topo_count(h->topo, TOPO_LLC); l++)
		n += cpuset_intersects(allot, &topo_get(h->topo, TOPO_LLC, l)->cpus);
	return n;
}

/* A bandwidth-bound world where only busy threads stream: each busy vCPU
 * of the domain runs at min(1, 3 / its LLC's busy vCPUs of the domain). */
static double
busy_stream_rate(const struct harness *h, int dom, int v)
{
	const struct h_dom *d = &h->dom[dom];
	int l = topo_llc_of(h->topo, d->s[v].last_cpu), n = 0;

	if (d->demand[v] < 0.5)
		return 1.0;
	for (int u = 0; u < d->in.nvcpus; u++)
		n += d->demand[u] >= 0.5 && topo_llc_of(h->topo, d->s[u].last_cpu) == l;
	return n > 3 ? 3.0 / n : 1.0;
}

static double
busy_stream_mbm(const struct harness *h, int dom)
{
	return h_busy_mbm(h, dom, busy_stream_rate);
}

/* Threads that share data: each busy vCPU runs at 1 / (1 + x), x the share
 * of pairs of busy vCPUs on different LLCs (llcsim's sharing 1.0). */
static double
sharing_rate(const struct harness *h, int dom, int v)
{
	const struct h_dom *d = &h->dom[dom];
	int pairs = 0, apart = 0;

	if (d->demand[v] < 0.5)
		return 1.0;
	for (int a = 0; a < d->in.nvcpus; a++)
		for (int b = a + 1; b < d->in.nvcpus; b++)
			if (d->demand[a] >= 0.5 && d->demand[b] >= 0.5) {
				pairs++;
				apart += topo_llc_of(h->topo, d->s[a].last_cpu) != topo_llc_of(h->topo, d->s[b].last_cpu);
			}
	return pairs ? 1.0 / (1.0 + (double)apart / pairs) : 1.0;
}

/* The isolated 16-vCPU domain of the tests above on a fresh harness. */
static int
iso_domain(struct harness *h, const char *name, int holddown_s)
{
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);

	a.tune.holddown_s = holddown_s;
	return h_add(h, name, 16, 1, 16, 1, &a);
}

/* iso_domain() streaming with vCPUs 0-7 (the others nearly idle) on a
 * host with counters, run for steps periods. */
static int
iso_streaming(struct harness *h, const char *name, int steps)
{
	int d = iso_domain(h, name, 1000);

	h->host.counters = true;
	h->rate = busy_stream_rate;
	h_busy_range(h, d, 0, 8);
	for (int v = 8; v < 16; v++)
		h->dom[d].demand[v] = 0.02;
	for (int step = 0; step < steps; step++)
		assert_int_equal(h_step(h), 0);
	return d;
}

/* Item 1: a trial taken while the job runs one thread says a wider home
 * gains nothing; when it streams with 8, the load shape is not the one of
 * that verdict, and the home is tried again and widened. (Before: kept on
 * one LLC for the hold-down and never looked at again.) */
static void
test_home_phase_change(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	int d = iso_domain(h, "job", 1000);

	(void)state;
	h->host.counters = true;
	h->rate = busy_stream_rate;
	for (int v = 0; v < 16; v++)
		h->dom[d].demand[v] = v == 0 ? 1.0 : 0.02;
	for (int step = 0; step < 60; step++) {
		if (step == 20)
			h_busy_range(h, d, 0, 8);
		assert_int_equal(h_step(h), 0);
		if (step == 19) {
			struct policy_domain_info i = h_info(h, d);
			assert_int_equal(llcs_of(h, &i.allotment), 1);
			assert_non_null(strstr(i.home_why, "home kept on LLC 0: "));
			assert_non_null(strstr(i.home_why, "at 1 busy vCPU, 1.3 CPUs; not widened again at this load"));
			assert_int_equal(i.home_trial.nmemo, 1);
			assert_true(i.home_trial.memo[0].wider);
			assert_int_equal(i.home_trial.memo[0].busy, 1);
		}
	}
	struct policy_domain_info i = h_info(h, d);
	assert_int_equal(llcs_of(h, &i.allotment), 4);
	assert_true(i.home_widened);
	assert_non_null(strstr(i.home_why, "at 8 busy vCPUs, 8.2 CPUs; kept while the load stays alike"));
	h_free(h);
}

/* Item 1: 7 of the 8 streams pause while the wider home is measured (from
 * the second period after it was first widened, for eight). No verdict is
 * taken across the dip: the periods of the other shape are discarded, and
 * the home ends widened. (Before: the 1 thread on four LLCs was compared
 * with the 8 on one, and the home was kept narrow.) */
static void
test_home_dip_no_verdict(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	int d = iso_domain(h, "stream", 1000), widened_at = -1;

	(void)state;
	h->host.counters = true;
	h->rate = busy_stream_rate;
	for (int v = 0; v < 16; v++)
		h->dom[d].demand[v] = v < 8 ? 1.0 : 0.02;
	for (int step = 0; step < 60; step++) {
		bool dip = widened_at >= 0 && step >= widened_at + 2 && step < widened_at + 10;
		for (int v = 1; v < 8; v++)
			h->dom[d].demand[v] = dip ? 0.02 : 1.0;
		assert_int_equal(h_step(h), 0);
		struct policy_domain_info i = h_info(h, d);
		if (widened_at < 0 && llcs_of(h, &i.allotment) > 1)
			widened_at = step;
	}
	assert_true(widened_at >= 0);
	struct policy_domain_info i = h_info(h, d);
	if (llcs_of(h, &i.allotment) != 4)
		fail_msg("home on %d LLCs: %s", llcs_of(h, &i.allotment), i.home_why);
	assert_true(i.home_widened);
	h_free(h);
}

/* Item 2: a widened home is tried narrow again when the domain's threads
 * start sharing: by a process the guest reports (counters), or, with
 * bandwidth monitoring alone, by the fall of its bandwidth. The narrow
 * home is kept. (Before: a widened home was never narrowed.) */
static void
narrows_when_sharing(bool counters, bool report)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	int d = iso_domain(h, "job", 1000);

	h->host.counters = counters;
	h->rate = busy_stream_rate;
	h->mbm = counters ? NULL : busy_stream_mbm;
	for (int v = 0; v < 16; v++)
		h->dom[d].demand[v] = v < 8 ? 1.0 : 0.02;
	for (int step = 0; step < 60; step++) {
		if (step == 20) {
			/* the stream ends; an 8-thread solver that shares data starts */
			h->rate = sharing_rate;
			h->mbm = counters ? NULL : h_mbm_flat;  /* 0 bytes */
			if (report) {
				struct policy_hot_report *r = &h->dom[d].rep[0];
				snprintf(r->name, sizeof(r->name), "solver");
				r->pid = 4242;
				cpuset_zero(&r->vcpus);
				cpuset_set_range(&r->vcpus, 0, 7);
				h->dom[d].in.reports = h->dom[d].rep;
				h->dom[d].in.nreports = 1;
			}
		}
		assert_int_equal(h_step(h), 0);
		if (step == 19) {
			struct policy_domain_info w = h_info(h, d);
			assert_int_equal(llcs_of(h, &w.allotment), 4);
		}
	}
	struct policy_domain_info i = h_info(h, d);
	if (llcs_of(h, &i.allotment) != 1)
		fail_msg("not narrowed: %s", i.home_why);
	assert_false(i.home_widened);
	assert_non_null(strstr(i.home_why, "home narrowed from LLCs 0-3 to LLC "));
	h_free(h);
}

static void
test_home_narrows_when_sharing(void **state)
{
	(void)state;
	narrows_when_sharing(true, true);       /* the guest reports the solver */
	narrows_when_sharing(true, false);      /* counters see the drop */
	narrows_when_sharing(false, false);     /* bandwidth monitoring sees the fall */
}

/* Item 2: widening goes as far as it gains. On a host of eight 8-core
 * LLCs, where the 8 streams need three LLCs' bandwidth, the home is
 * widened to four LLCs, not eight (two cores each gain over one, one core
 * each gains nothing more): four whole LLCs are left for the next
 * isolated domain, which gets one. (Before: spread one core per LLC over
 * all eight.) */
static void
test_home_leaves_whole_llcs(void **state)
{
	struct harness *h = h_new("pack:1 [numa] l3:8 core:8 pu:2");
	int d = iso_streaming(h, "stream", 40), e;

	(void)state;
	struct policy_domain_info i = h_info(h, d);
	assert_int_equal(llcs_of(h, &i.allotment), 4);
	assert_non_null(strstr(i.home_why, "home kept on LLCs 0-3: instructions per demanded CPU-second 1e+09 on "
	    "LLCs 0-7 vs 1e+09 on LLCs 0-3 (+0%), no gain over 5%"));
	e = iso_domain(h, "next", 1000);
	for (int step = 0; step < 3; step++)
		assert_int_equal(h_step(h), 0);
	i = h_info(h, e);
	assert_int_equal(llcs_of(h, &i.allotment), 1);
	i = h_info(h, d);
	assert_int_equal(llcs_of(h, &i.allotment), 4);
	h_free(h);
}

/* Item 2: an isolated domain that needs a whole LLC when an earlier
 * domain's wide home has a core in every one: the wide home is spread
 * over the other LLCs (the same 8 cores), the new domain gets a whole
 * LLC, and the plan says so. Within the move budget only: with fewer
 * moves a step than the wide domain has vCPUs, nothing is rearranged.
 * (Before: the new domain got the free cores of two LLCs.) */
static void
room_for_isolated(int max_moves)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	int d, e;
	bool said = false;

	h->host.max_moves_total = max_moves;
	d = iso_streaming(h, "stream", 30);
	struct policy_domain_info w = h_info(h, d);
	assert_int_equal(llcs_of(h, &w.allotment), 4);
	e = iso_domain(h, "solver", 1000);
	for (int step = 0; step < 3; step++) {
		assert_int_equal(h_step(h), 0);
		for (int a = 0; a < h->plan->n; a++)
			said |= h->plan->actions[a].type == POLICY_ACT_BACKOFF &&
			        strstr(h->plan->actions[a].reason, "left whole for isolated domain 'solver', which needs "
			               "8 whole cores of one LLC") != NULL;
	}
	struct policy_domain_info i = h_info(h, d), j = h_info(h, e);
	assert_int_equal(cpuset_count(&i.allotment), 16);
	assert_false(cpuset_intersects(&i.allotment, &j.allotment));
	if (max_moves >= 16) {
		assert_true(said);
		assert_int_equal(llcs_of(h, &j.allotment), 1);
		assert_int_equal(llcs_of(h, &i.allotment), 3);
		assert_non_null(strstr(i.home_why, "home rearranged from LLCs 0-3 to LLCs "));
	} else {
		assert_false(said);
		assert_int_equal(llcs_of(h, &j.allotment), 2);
		assert_int_equal(llcs_of(h, &i.allotment), 4);
	}
	h_free(h);
}

static void
test_home_room_for_isolated(void **state)
{
	(void)state;
	room_for_isolated(256);
	room_for_isolated(8);
}

TEST_MAIN(
	HOME_CASE("test_home_widened_counters", 0),
	HOME_CASE("test_home_widened_mbm", 1),
	HOME_CASE("test_home_kept_without_gain", 2),
	HOME_CASE("test_home_widened_run_delay", 3),
	HOME_CASE("test_home_no_signal", 4),
	HOME_CASE("test_home_match_left_alone", 5),
	cmocka_unit_test(test_home_phase_change),
	cmocka_unit_test(test_home_dip_no_verdict),
	cmocka_unit_test(test_home_narrows_when_sharing),
	cmocka_unit_test(test_home_leaves_whole_llcs),
	cmocka_unit_test(test_home_room_for_isolated))
