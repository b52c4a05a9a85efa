// SPDX-License-Identifier: GPL-2.0-or-later
/* test_loop.c - the agent loop's apply phase against a fake back-end (a
 * marked seam: the back-end's observe and apply are the test's, the policy
 * engine and the loop are llcd's): a shared domain is narrowed off cores
 * before an isolated domain takes them, and when that narrowing fails the
 * isolated domain's pins on those cores are held back, reported and planned
 * again (issue 14 item 9); a pin that fails permanently leaves no vCPU of
 * its domain in the new placement (issue 15 item 9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "topo_hwloc.h"
#include "test_main.h"

#define KEY_ISO 1       /* lower key: applied first in plain plan order */
#define KEY_SHARED 2

struct fake {
	const struct topo *t;
	bool fail_shared;       /* the shared domain's pins fail (transient) */
	struct cpuset pin[3][4];        /* observed affinity per domain key, vCPU */
	int applied, iso_applied, shared_applied, held_reports;
	int order_bad;          /* an isolated pin applied before a shared one */
	char last_report[512];
};

static int
fake_observe(void *ctx, uint64_t now_ns, struct agent_obs *o, struct llcd_err *err)
{
	struct fake *f = ctx;
	const uint64_t keys[2] = { KEY_ISO, KEY_SHARED };

	for (int k = 0; k < 2; k++) {
		int i = agent_obs_add(o, 4, 0, err);
		if (i < 0)
			return -1;
		struct policy_domain_in *in = &o->domains[i];
		in->key = keys[k];
		snprintf(in->name, sizeof(in->name), "%s", keys[k] == KEY_ISO ? "iso" : "shared");
		in->guest = (struct policy_guest_topo){ 1, 1, 1, 4, 1 };
		policy_annotation_defaults(&in->annot);
		in->annotated = keys[k] == KEY_ISO;
		if (in->annotated) {
			in->annot.mode = POLICY_MODE_STATIC;
			in->annot.isolation = POLICY_ISO_CORE;
		}
		for (int v = 0; v < 4; v++) {
			struct policy_vcpu_sample *s = &o->vcpus[i][v];
			memset(s, 0, sizeof(*s));
			s->tid = 100 * (int)keys[k] + v;
			s->runtime_ns = now_ns ? 50000000ull : 0;
			s->last_cpu = -1;
			s->pinned = f->pin[keys[k]][v];
		}
	}
	return 0;
}

static enum agent_result
fake_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct fake *f = ctx;

	if (a->type != POLICY_ACT_PIN_VCPU && a->type != POLICY_ACT_PIN_EMULATOR)
		return AGENT_OK;
	if (a->key == KEY_SHARED && f->fail_shared) {
		llcd_err_set(err, "virDomainPinVcpu: timed out");
		return AGENT_TRANSIENT;
	}
	f->applied++;
	if (a->key == KEY_ISO)
		f->iso_applied++;
	else if (f->iso_applied > 0)
		f->order_bad++;
	if (a->key == KEY_SHARED)
		f->shared_applied++;
	if (a->type == POLICY_ACT_PIN_VCPU)
		f->pin[a->key][a->vcpu] = a->cpus;
	return AGENT_OK;
}

static void
fake_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct fake *f = ctx;

	if (strstr(msg, "not applied: another domain could not be narrowed") != NULL) {
		f->held_reports++;
		assert_int_equal(a->key, KEY_ISO);
	}
	snprintf(f->last_report, sizeof(f->last_report), "%s", msg);
}

static const struct agent_ops fake_ops = {
	.name = "fake", .observe = fake_observe, .apply = fake_apply, .report = fake_report,
};

static struct agent_loop *
loop_for(struct fake *f, const struct topo *t)
{
	struct policy_host host;
	struct llcd_err err;

	policy_host_defaults(&host, t);
	f->t = t;
	struct agent_loop *l = agent_loop_new(&fake_ops, f, &host, 100000000ull, &err);
	assert_non_null(l);
	return l;
}

/* Both can be pinned: the shared domain is narrowed before the isolated
 * domain's pins land, and afterwards no vCPU of it reaches the isolated
 * cores. */
static void
test_narrow_before_isolate(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:1 core:4 pu:2", &err);
	struct fake f = { 0 };
	struct agent_step_stats st;

	assert_non_null(t);
	struct agent_loop *l = loop_for(&f, t);
	uint64_t now = 1000000000ull;
	for (int i = 0; i < 3; i++, now += 100000000ull)
		assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
	assert_true(f.iso_applied >= 4);
	assert_true(f.shared_applied >= 1);
	assert_int_equal(f.order_bad, 0);
	assert_int_equal(f.held_reports, 0);
	assert_int_equal(st.isolation_overlaps, 0);     /* observed after acting */
	agent_loop_free(l);
	topo_free(t);
}

/* The shared domain's pins fail: its vCPUs may still run everywhere, so the
 * isolated domain's pins are held (reported, planned again), never applied
 * onto cores the other domain still reaches; once the shared pins go
 * through, the isolated domain is pinned. */
static void
test_failed_narrowing_holds_isolation(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:1 core:4 pu:2", &err);
	struct fake f = { .fail_shared = true };
	struct agent_step_stats st;
	int held = 0;

	assert_non_null(t);
	struct agent_loop *l = loop_for(&f, t);
	uint64_t now = 1000000000ull;
	for (int i = 0; i < 3; i++, now += 100000000ull) {
		assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
		held += st.held;
	}
	assert_int_equal(f.iso_applied, 0);
	assert_true(held >= 4);
	assert_true(f.held_reports >= 4);
	assert_non_null(strstr(f.last_report, "isolation=core would not hold there"));
	f.fail_shared = false;
	for (int i = 0; i < 3; i++, now += 100000000ull)
		assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
	assert_true(f.iso_applied >= 4);
	assert_int_equal(st.isolation_overlaps, 0);
	agent_loop_free(l);
	topo_free(t);
}

/* --- a permanent pin failure ------------------------------------------- */

#define KEY_ONE 7

struct perm {
	struct cpuset pin[4];           /* the threads' affinity (the fake kernel) */
	int fail_vcpu;                  /* this vCPU's pin fails permanently */
	int pins, rollbacks, permanent_reports;
	char report[512];
};

static int
perm_observe(void *ctx, uint64_t now_ns, struct agent_obs *o, struct llcd_err *err)
{
	struct perm *f = ctx;
	int i = agent_obs_add(o, 4, 0, err);

	if (i < 0)
		return -1;
	struct policy_domain_in *in = &o->domains[i];
	in->key = KEY_ONE;
	snprintf(in->name, sizeof(in->name), "one");
	in->guest = (struct policy_guest_topo){ 1, 1, 1, 4, 1 };
	policy_annotation_defaults(&in->annot);
	in->annotated = true;
	in->annot.mode = POLICY_MODE_STATIC;
	for (int v = 0; v < 4; v++) {
		struct policy_vcpu_sample *s = &o->vcpus[i][v];
		memset(s, 0, sizeof(*s));
		s->tid = 700 + v;
		s->runtime_ns = now_ns ? 50000000ull : 0;
		s->last_cpu = -1;
		s->pinned = f->pin[v];
	}
	return 0;
}

static enum agent_result
perm_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct perm *f = ctx;

	if (a->type != POLICY_ACT_PIN_VCPU)
		return AGENT_OK;
	if (a->vcpu == f->fail_vcpu) {
		llcd_err_set(err, "virDomainPinVcpuFlags: Invalid argument");
		return AGENT_PERMANENT;
	}
	f->pins++;
	f->rollbacks += strstr(a->reason, "rolled back") != NULL;
	f->pin[a->vcpu] = a->cpus;
	return AGENT_OK;
}

static void
perm_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct perm *f = ctx;

	if (r == AGENT_PERMANENT) {
		f->permanent_reports++;
		assert_int_equal(a->vcpu, f->fail_vcpu);
		snprintf(f->report, sizeof(f->report), "%s", msg);
	}
}

static const struct agent_ops perm_ops = {
	.name = "fake", .observe = perm_observe, .apply = perm_apply, .report = perm_report,
};

/* The domain's vCPUs start allowed on CPUs 0-11 of a two-LLC host; the
 * engine pins them into one LLC and vCPU 2's pin fails permanently: the
 * pins the step applied to vCPUs 0, 1 (and 3) are put back to 0-11, the
 * report says so, and the domain is abandoned (no further pins). */
static void
test_permanent_failure_rolls_back(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:2 core:4 pu:2", &err);
	struct perm f = { .fail_vcpu = 2 };
	struct agent_step_stats st;
	struct policy_host host;
	struct cpuset before;

	assert_non_null(t);
	assert_int_equal(cpuset_parse(&before, "0-11", &err), 0);
	for (int v = 0; v < 4; v++)
		f.pin[v] = before;
	policy_host_defaults(&host, t);
	struct agent_loop *l = agent_loop_new(&perm_ops, &f, &host, 100000000ull, &err);
	assert_non_null(l);
	uint64_t now = 1000000000ull;
	assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
	assert_int_equal(st.permanent, 1);
	assert_true(f.pins >= 2);                       /* vCPUs 0 and 1 were moved ... */
	assert_true(st.rolled_back >= 2);               /* ... and put back */
	assert_int_equal(f.rollbacks, st.rolled_back);
	for (int v = 0; v < 4; v++)
		assert_true(cpuset_equal(&f.pin[v], &before));
	assert_true(agent_loop_abandoned(l, KEY_ONE));
	assert_int_equal(f.permanent_reports, 1);
	assert_non_null(strstr(f.report, "virDomainPinVcpuFlags: Invalid argument; the "));
	assert_non_null(strstr(f.report, "applied to the domain in this period rolled back"));
	int pins = f.pins;
	for (int i = 0; i < 3; i++) {
		now += 100000000ull;
		assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
	}
	assert_int_equal(f.pins, pins);                 /* no longer managed */
	agent_loop_free(l);
	topo_free(t);
}

TEST_MAIN(
	cmocka_unit_test(test_narrow_before_isolate),
	cmocka_unit_test(test_failed_narrowing_holds_isolation),
	cmocka_unit_test(test_permanent_failure_rolls_back))
