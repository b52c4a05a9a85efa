// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_bound.c - a domain's CPU bound (policy_domain_in.bound: the
 * cgroup cpuset someone else owns, kubelet's on a KubeVirt node): the
 * engine places, steers, confines and releases it only inside the bound,
 * for every mode and isolation, re-places it when the bound changes, and
 * refuses it with the bound in the reason when it does not fit there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

/* 2 LLCs x 4 cores x SMT2: LLC 0 = PUs 0-7, LLC 1 = PUs 8-15 */
#define TWO_LLCS "l3:2 core:4 pu:2"

static struct cpuset
set_of(const char *list)
{
	struct cpuset s;
	struct llcd_err e;

	assert_int_equal(cpuset_parse(&s, list, &e), 0);
	return s;
}

/* Every vCPU pin of domain d (as the harness applied the plans) inside b. */
static void
assert_pins_inside(const struct harness *h, int d, const struct cpuset *b)
{
	for (int v = 0; v < h->dom[d].in.nvcpus; v++) {
		const struct cpuset *p = h->dom[d].s[v].pinned;
		assert_false(cpuset_empty(p));
		assert_true(cpuset_subset(p, b));
	}
}

/* Every action of the last plan about domain d stays inside b. */
static void
assert_plan_inside(const struct harness *h, int d, const struct cpuset *b)
{
	for (int i = 0; i < h->plan->n; i++) {
		const struct policy_action *a = &h->plan->actions[i];
		if (a->key != h->dom[d].in.key || a->type > POLICY_ACT_RELEASE)
			continue;
		assert_true(cpuset_subset(&a->cpus, b));
	}
}

/* Two aggregate domains of 4 vCPUs: the one bound to LLC 1 goes there even
 * though LLC 0 is the first and emptiest, the unbound one takes the other
 * LLC; busy steering never leaves the bound. */
static void
test_bound_places_inside(void **state)
{
	struct harness *h = h_new(TWO_LLCS);
	struct policy_annotation a = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	struct cpuset llc1 = set_of("8-15");
	int b = h_add(h, "default_vmi-b", 4, 1, 4, 1, &a);
	int u = h_add(h, "default_vmi-u", 4, 1, 4, 1, &a);

	h->dom[b].in.bound = &llc1;
	h_busy_range(h, b, 0, 4);
	h_busy_range(h, u, 0, 4);
	for (int step = 0; step < 12; step++) {
		assert_int_equal(h_step(h), 0);
		assert_plan_inside(h, b, &llc1);
		assert_pins_inside(h, b, &llc1);
	}
	/* the unbound domain went to the other LLC (occupancy) */
	struct cpuset llc0 = set_of("0-7");
	assert_pins_inside(h, u, &llc0);
	h_free(h);
}

/* Static and isolated domains: slots and owned cores inside the bound. */
static void
test_bound_static_and_isolated(void **state)
{
	struct cpuset b1 = set_of("10-13"), b2 = set_of("4-7");
	struct harness *h = h_new(TWO_LLCS);
	int s = h_add_mode(h, "ns_static", 2, 1, 2, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE);
	int i = h_add_mode(h, "ns_iso", 4, 1, 2, 2, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);

	h->dom[s].in.bound = &b1;
	h->dom[i].in.bound = &b2;
	for (int step = 0; step < 4; step++) {
		assert_int_equal(h_step(h), 0);
		assert_plan_inside(h, s, &b1);
		assert_plan_inside(h, i, &b2);
	}
	assert_pins_inside(h, s, &b1);
	assert_pins_inside(h, i, &b2);
	for (int v = 0; v < 2; v++)
		assert_int_equal(cpuset_count(h->dom[s].s[v].pinned), 1);
	h_free(h);
}

/* A new bound (a pod resized, kubelet's reconcile) re-places the domain
 * inside it; an unmanaged domain released or confined stays inside its
 * bound too. */
static void
test_bound_change_replaces(void **state)
{
	struct harness *h = h_new(TWO_LLCS);
	struct cpuset b0 = set_of("0-3"), b1 = set_of("12-15"), ub = set_of("8-11");
	int d = h_add_mode(h, "ns_a", 2, 1, 2, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int un = h_add(h, "ns_unmanaged", 2, 1, 2, 1, NULL);

	h->dom[d].in.bound = &b0;
	h->dom[un].in.bound = &ub;
	h_busy_range(h, d, 0, 2);
	for (int step = 0; step < 3; step++)
		assert_int_equal(h_step(h), 0);
	assert_pins_inside(h, d, &b0);
	h->dom[d].in.bound = &b1;
	assert_int_equal(h_step(h), 0);
	assert_plan_inside(h, d, &b1);
	assert_int_equal(h_step(h), 0);
	assert_pins_inside(h, d, &b1);
	/* an isolated domain appears: the unmanaged one is confined to the
	 * shared pool, inside its bound */
	h_add_mode(h, "ns_iso", 2, 1, 1, 2, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
	for (int step = 0; step < 3; step++) {
		assert_int_equal(h_step(h), 0);
		assert_plan_inside(h, un, &ub);
	}
	assert_pins_inside(h, un, &ub);
	h_free(h);
}

/* More vCPUs than the bound holds slots: refused, the bound named. */
static void
test_bound_refusal_names_it(void **state)
{
	bool refused = false;
	struct harness *h = h_new(TWO_LLCS);
	int d = h_add_mode(h, "ns_big", 4, 1, 4, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE);
	struct cpuset b = set_of("2-3");

	h->dom[d].in.bound = &b;
	assert_int_equal(h_step(h), 0);
	for (int k = 0; k < h->plan->n; k++) {
		const struct policy_action *act = &h->plan->actions[k];
		if (act->type == POLICY_ACT_REFUSE && act->key == h->dom[d].in.key) {
			refused = true;
			assert_non_null(strstr(act->reason, "inside its CPU bound [2-3]"));
		}
		assert_false(act->key == h->dom[d].in.key && act->type == POLICY_ACT_PIN_VCPU);
	}
	assert_true(refused);
	h_free(h);
}

TEST_MAIN(
	cmocka_unit_test(test_bound_places_inside),
	cmocka_unit_test(test_bound_static_and_isolated),
	cmocka_unit_test(test_bound_change_replaces),
	cmocka_unit_test(test_bound_refusal_names_it))
