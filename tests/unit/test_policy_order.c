// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_order.c - the order of the plan (policy/order.c): applied
 * in its order, a plan never lets a vCPU of an isolated
 * domain and a vCPU of another domain share a core, not even between two
 * of its actions: shared domains leave cores before an isolated domain
 * takes them, an isolated domain leaves cores before shared domains take
 * them, a pin that must do both is split (narrow before widen), and what
 * cannot keep isolation is held back and planned again.
 *
 * The harness (policy_harness.h) applies the plan as the agent does: in
 * its order, never a held action, and counts every pin that takes a core
 * a vCPU of a conflicting domain is pinned to at that moment. */
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

/* A bandwidth-bound isolated domain (16 vCPUs, 8 streaming at
 * 20 GB/s, 60 GB/s per LLC): each runs at min(1, 3 / busy vCPUs of the
 * domain in its LLC), so the home check widens it over all four LLCs. */
static double
stream_rate(const struct harness *h, int dom, int v)
{
	if (dom != 0 || v >= NBUSY)
		return 1.0;
	int l = topo_llc_of(h->topo, h->dom[dom].s[v].last_cpu), n = 0;
	for (int u = 0; u < NBUSY; u++)
		n += topo_llc_of(h->topo, h->dom[dom].s[u].last_cpu) == l;
	return n > 3 ? 3.0 / n : 1.0;
}

/* Every prerequisite of every action comes before it, and a pin of a
 * domain waits only for actions of other domains or for its own
 * narrowing half. */
static void
check_deps(const struct harness *h)
{
	for (int i = 0; i < h->plan->n; i++) {
		int n;
		const int *d = policy_plan_deps(h->plan, i, &n);
		const struct policy_action *a = &h->plan->actions[i];
		if (n == 0)
			assert_int_equal(a->stage, POLICY_STAGE_NARROW);
		for (int j = 0; j < n; j++) {
			assert_true(d[j] >= 0 && d[j] < i);
			const struct policy_action *b = &h->plan->actions[d[j]];
			assert_true(b->stage <= a->stage);
			if (b->key == a->key)
				assert_true(b->vcpu == a->vcpu && strncmp(b->reason, "narrowed to [", 13) == 0);
		}
		if (i > 0)
			assert_true(h->plan->actions[i - 1].stage <= a->stage);
	}
}

struct trial {
	int widened_step;               /* the step the isolated pins landed on 4 LLCs */
	int held_iso, split, isolate, widen;
	char held_reason[POLICY_REASON];
};

/* The stream domain, and a shared domain in the pool it widens into:
 * the home trial moves the isolated domain onto cores the shared domain
 * runs on and gives it the cores it leaves. */
static void
run_trial(struct trial *tr)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:8 pu:2");
	struct policy_annotation iso = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_CORE);
	struct policy_annotation web = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);

	memset(tr, 0, sizeof(*tr));
	tr->widened_step = -1;
	iso.tune.holddown_s = 1000;
	h->host.counters = true;
	h->rate = stream_rate;
	int s = h_add(h, "stream", 16, 1, 16, 1, &iso);
	int w = h_add(h, "web", 16, 1, 16, 1, &web);
	for (int v = 0; v < 16; v++) {
		h->dom[s].demand[v] = v < NBUSY ? 1.0 : 0.02;
		h->dom[w].demand[v] = v < 6 ? 1.0 : 0.1;
	}
	for (int step = 0; step < 40; step++) {
		assert_int_equal(h_step(h), 0);
		if (h->between > 0)
			fail_msg("step %d: %d pins break isolation before the plan ends: %s", step, h->between,
			    h->between_what);
		check_deps(h);
		for (int i = 0; i < h->plan->n; i++) {
			const struct policy_action *a = &h->plan->actions[i];
			if (a->type != POLICY_ACT_PIN_VCPU)
				continue;
			if (a->held && a->key == h->dom[s].in.key && tr->held_iso++ == 0)
				snprintf(tr->held_reason, sizeof(tr->held_reason), "%s", a->reason);
			tr->split += strncmp(a->reason, "narrowed to [", 13) == 0;
			tr->isolate += a->stage == POLICY_STAGE_ISOLATE;
			tr->widen += a->stage == POLICY_STAGE_WIDEN;
		}
		if (tr->widened_step < 0 && h_llc(h, s, 0) < 0)
			tr->widened_step = step;
	}
	/* at the end no core carries both domains */
	for (int v = 0; v < 16; v++)
		for (int u = 0; u < 16; u++) {
			struct cpuset c;
			h_cores(h->topo, h->dom[s].s[v].pinned, &c);
			assert_false(cpuset_intersects(&c, h->dom[w].s[u].pinned));
		}
	h_free(h);
}

/* A home trial widens an isolated domain
 * while a shared domain is placed again onto the cores it is leaving.
 * Applied in plan order, no pin breaks isolation: the shared domain is
 * narrowed off the cores the isolated one takes (split pins), then the
 * isolated domain moves (ISOLATE), then the shared one takes the cores
 * it left (WIDEN). In the trial's first step the shared domain is still
 * to run where the isolated domain goes, and those pins are held. */
static void
test_trial_keeps_isolation(void **state)
{
	struct trial tr;

	run_trial(&tr);
	assert_true(tr.widened_step > 0);               /* the trial happened */
	assert_true(tr.split >= 16);                    /* web narrowed first ... */
	assert_true(tr.isolate >= 16);                  /* ... stream moved ... */
	assert_true(tr.widen >= 16);                    /* ... and web widened */
	/* those onto cores web still runs on (a new home's busy vCPUs are
	 * pinned one per core first, so not every vCPU's pin is one) */
	assert_true(tr.held_iso > 0);
	assert_non_null(strstr(tr.held_reason, "not applied: domain 'web' vCPU 0 is to run on core "));
	assert_non_null(strstr(tr.held_reason, "so isolation=core would not hold there; planned again next period"));
}

/* A new isolated domain on a host where a shared domain runs everywhere:
 * the shared domain's pins narrow it (NARROW, no prerequisite), the
 * isolated domain's pins each wait for the shared pins that take a vCPU
 * off its cores (ISOLATE), and the rollback pin of a shared vCPU leaves
 * out the isolated domain's cores. */
static void
test_new_isolated_waits_for_narrowing(void **state)
{
	struct harness *h = h_new("pack:1 l3:1 core:4 pu:2");
	struct policy_annotation iso = h_annot(POLICY_MODE_STATIC, POLICY_ISO_CORE);
	struct policy_annotation shr = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	int sh = h_add(h, "shared", 4, 1, 4, 1, &shr);

	assert_int_equal(h_step(h), 0);                 /* shared placed on every PU */
	h_add(h, "iso", 4, 1, 4, 1, &iso);
	assert_int_equal(h_step(h), 0);
	assert_int_equal(h->between, 0);
	check_deps(h);
	int nshared = 0, niso = 0;
	struct cpuset iso_cores;
	cpuset_zero(&iso_cores);
	for (int i = 0; i < h->plan->n; i++) {
		const struct policy_action *a = &h->plan->actions[i];
		int n;
		const int *d = policy_plan_deps(h->plan, i, &n);
		if (a->type != POLICY_ACT_PIN_VCPU)
			continue;
		assert_false(a->held);
		if (a->key == h->dom[sh].in.key) {
			nshared++;
			assert_int_equal(a->stage, POLICY_STAGE_NARROW);
			assert_int_equal(n, 0);
		} else {
			niso++;
			assert_int_equal(a->stage, POLICY_STAGE_ISOLATE);
			assert_int_equal(n, 4);                 /* every shared vCPU reached its core */
			for (int j = 0; j < n; j++)
				assert_int_equal(h->plan->actions[d[j]].key, h->dom[sh].in.key);
			cpuset_or(&iso_cores, &iso_cores, &a->cpus);
		}
	}
	assert_int_equal(nshared, 4);
	assert_int_equal(niso, 4);
	for (int i = 0; i < h->plan->n; i++) {
		const struct policy_action *a = &h->plan->actions[i];
		if (a->type == POLICY_ACT_PIN_VCPU && a->key == h->dom[sh].in.key) {
			assert_false(cpuset_empty(&a->undo));
			assert_false(cpuset_intersects(&a->undo, &iso_cores));
		}
	}
	h_free(h);
}

/* Without an isolated domain nothing can conflict: one stage, no
 * prerequisites, the rollback pin is the observed affinity. */
static void
test_no_isolation_one_stage(void **state)
{
	struct harness *h = h_new("pack:1 l3:2 core:4 pu:2");
	h_add_mode(h, "s", 4, 1, 4, 1, POLICY_MODE_STATIC, POLICY_ISO_NONE);

	assert_int_equal(h_step(h), 0);
	assert_int_equal(h_count(h, POLICY_ACT_PIN_VCPU), 4);
	assert_int_equal(h->plan->ndeps, 0);
	for (int i = 0; i < h->plan->n; i++) {
		const struct policy_action *x = &h->plan->actions[i];
		assert_int_equal(x->stage, POLICY_STAGE_NARROW);
		assert_false(x->held);
		if (x->type == POLICY_ACT_PIN_VCPU)
			assert_true(cpuset_equal(&x->undo, &h->topo->all));
	}
	h_free(h);
}

/* An isolated domain's emulator threads go to the reserved CPUs, which
 * the host shares by design: a reserved CPU whose SMT sibling runs shared
 * vCPUs holds nothing back (the pins were held every period before). */
static void
test_reserved_emulator_not_held(void **state)
{
	struct harness *h = h_new("pack:1 l3:2 core:4 pu:2");

	assert_int_equal(cpuset_parse(&h->host.reserved, "0", NULL), 0);
	h_add_mode(h, "shared", 4, 1, 4, 1, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	h_add_mode(h, "iso", 2, 1, 2, 1, POLICY_MODE_STATIC, POLICY_ISO_CORE);
	for (int step = 0; step < 3; step++) {
		assert_int_equal(h_step(h), 0);
		assert_int_equal(h->between, 0);
		for (int i = 0; i < h->plan->n; i++)
			if (h->plan->actions[i].held)
				fail_msg("step %d: held: %s", step, h->plan->actions[i].reason);
		if (step > 0)
			assert_int_equal(h_count(h, POLICY_ACT_PIN_EMULATOR), 0);      /* once is enough */
	}
	h_free(h);
}

TEST_MAIN(
	cmocka_unit_test(test_reserved_emulator_not_held),
	cmocka_unit_test(test_trial_keeps_isolation),
	cmocka_unit_test(test_new_isolated_waits_for_narrowing),
	cmocka_unit_test(test_no_isolation_one_stage))
