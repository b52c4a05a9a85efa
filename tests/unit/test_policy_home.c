// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_home.c - the home check (policy/home.c, issue 14 item 1):
 * the home llcd chose is measured, and widened over more LLCs when that
 * gains, with each signal the host may have (instruction counters, memory
 * bandwidth monitoring, run delay), and says so where it has none.
 *
 * The world: issue 14's bandwidth-bound domain. 16 vCPUs, aggregate,
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

/* run_stream(), and the two outcomes every test checks: the back-offs
 * and the number of LLCs the allotment ends on. */
static struct run
home_run(bool counters, bool mbm, bool flat, double delay_narrow, int backoffs, int llcs)
{
	struct run r;

	run_stream(counters, mbm, flat, delay_narrow, &r);
	assert_int_equal(r.backoffs, backoffs);
	assert_int_equal(r.llcs, llcs);
	return r;
}

/* With counters: the one-LLC home runs at 3/8; the check widens it over
 * all four LLCs (two whole cores each: four times the LLCs it has), sees
 * the gain and keeps it; there is no wider home after that. */
static void
test_home_widened_counters(void **state)
{
	struct run r = home_run(true, false, false, 0, 1, 4);

	assert_non_null(strstr(r.backoff_reason, "home widened from LLC 0 to LLCs 0-3 (whole cores on "
	    "other LLCs): instructions per demanded CPU-second "));
	assert_true(r.info.home_widened);
	assert_non_null(strstr(r.info.home_why, "(+158%), at 8 busy vCPUs, 8.2 CPUs; kept while the load stays "
	    "alike"));
	assert_true(r.max_busy_per_llc <= 3);
}

/* Bandwidth monitoring alone (no counters): the same, judged on the
 * domain's achieved bandwidth per demanded CPU-second. */
static void
test_home_widened_mbm(void **state)
{
	struct run r = home_run(false, true, false, 0, 1, 4);

	assert_non_null(strstr(r.info.home_why, "home widened from LLC 0 to LLCs 0-3 (whole cores on other "
	    "LLCs): memory bytes per demanded CPU-second 1.96e+10 on LLCs 0-3 vs 7.35e+09 on LLC 0 (+167%)"));
}

/* A home that loses nothing (progress the same on one LLC or four) is
 * tried, measured, and given back: the one-LLC home again, and the
 * failure remembered for the load. */
static void
test_home_kept_without_gain(void **state)
{
	struct run r = home_run(true, false, true, 0, 0, 1);

	assert_false(r.info.home_widened);
	assert_non_null(strstr(r.info.home_why, "home kept on LLC 0: instructions per demanded CPU-second "));
	assert_non_null(strstr(r.info.home_why, "(+0%), no gain over 5%, at 8 busy vCPUs, 8.2 CPUs; not widened "
	    "again at this load for 2000 s"));
}

/* Run delay alone: CPU wait in the narrow home (half of each busy vCPU's
 * runnable time) that the wider one removes is a gain. */
static void
test_home_widened_run_delay(void **state)
{
	struct run r = home_run(false, false, false, 0.5, 1, 4);

	assert_true(r.info.home_widened);
	assert_non_null(strstr(r.info.home_why, "home widened from LLC 0 to LLCs 0-3 (whole cores on other LLCs): "
	    "run delay 0.0% on LLCs 0-3 vs 49.0% on LLC 0, at 8 busy vCPUs, 8.2 CPUs; kept while the load stays "
	    "alike"));
}

/* No signal at all (no counters, no bandwidth monitoring, no run delay):
 * the check says it cannot tell, never "kept", and the home stays. */
static void
test_home_no_signal(void **state)
{
	struct run r = home_run(false, false, false, 0, 0, 1);

	assert_false(r.info.home_widened);
	assert_string_equal(r.info.home_why, "home on LLC 0 not measured: no instruction counters or bandwidth "
	    "monitoring, and run delay 0.0% (at most 10%) shows no CPU wait a wider home would relieve; a "
	    "memory-bound loss cannot be seen without them");
	assert_null(strstr(r.info.home_why, "kept"));
}

/* topology="match" keeps guest die i on host LLC i: the home is left as
 * placed, and the check says why. */
static void
test_home_match_left_alone(void **state)
{
	match_topology = true;
	struct run r = home_run(true, false, false, 0, 0, 1);
	match_topology = false;
	assert_string_equal(r.info.home_why, "home on LLC 0 as placed: no wider home (topology=\"match\" keeps "
	    "guest die i on host LLC i)");
}

TEST_MAIN(
	cmocka_unit_test(test_home_widened_counters),
	cmocka_unit_test(test_home_widened_mbm),
	cmocka_unit_test(test_home_kept_without_gain),
	cmocka_unit_test(test_home_widened_run_delay),
	cmocka_unit_test(test_home_no_signal),
	cmocka_unit_test(test_home_match_left_alone))
