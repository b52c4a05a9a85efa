// SPDX-License-Identifier: GPL-2.0-or-later
/* test_loop.c - the agent loop's apply phase against a fake back-end (a
 * marked seam: the back-end's observe and apply are the test's, the policy
 * engine and the loop are llcd's). The loop applies the plan in the
 * engine's order (policy/order.c) and decides nothing: a shared domain is
 * narrowed off cores before an isolated domain takes them, and when that
 * narrowing fails the isolated domain's pins on those cores are not
 * applied, reported and planned again; during a home
 * trial an isolated domain whose pins fail keeps the shared domain off the
 * cores it still runs on; a pin that fails permanently
 * leaves no vCPU of its domain in the new placement and none on an
 * isolated domain's cores. Each fake checks isolation
 * after every action it applies, not only after the period. */
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
	int order_bad;          /* an isolated pin landed on a core a shared
	                         * vCPU may reach (empty pin: every CPU), or a
	                         * shared pin took a core an isolated vCPU is
	                         * pinned to */
	char last_report[512];
	char held_msg[512];     /* the last "not applied" report */
};

/* The whole cores of the PUs in in. */
static bool
pin_spans_llcs(const struct topo *t, const struct cpuset *p)
{
	int cpu, l = topo_llc_of(t, cpuset_first(p));

	CPUSET_FOREACH(cpu, p)
		if (topo_llc_of(t, cpu) != l)
			return true;
	return false;
}

static void
cores_of(const struct topo *t, const struct cpuset *in, struct cpuset *out)
{
	int cpu;

	cpuset_zero(out);
	CPUSET_FOREACH(cpu, in)
		if (!cpuset_isset(out, cpu))
			cpuset_or(out, out, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
}

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
			s->pinned = &f->pin[keys[k]][v];
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
	if (a->key == KEY_SHARED)
		f->shared_applied++;
	if (a->type == POLICY_ACT_PIN_VCPU) {
		struct cpuset c, was, took;
		cores_of(f->t, &a->cpus, &c);
		cores_of(f->t, cpuset_empty(&f->pin[a->key][a->vcpu]) ? &f->t->all : &f->pin[a->key][a->vcpu], &was);
		cpuset_andnot(&took, &c, &was);
		for (int v = 0; v < 4; v++) {
			const struct cpuset *sh = &f->pin[KEY_SHARED][v];
			if (a->key == KEY_ISO && (cpuset_empty(sh) || cpuset_intersects(sh, &c)))
				f->order_bad++;
			if (a->key == KEY_SHARED && cpuset_intersects(&f->pin[KEY_ISO][v], &took))
				f->order_bad++;
		}
		f->pin[a->key][a->vcpu] = a->cpus;
	}
	return AGENT_OK;
}

static void
fake_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct fake *f = ctx;

	if (strstr(msg, "not applied: it waits for the pin-vcpu of shared vCPU") != NULL) {
		f->held_reports++;
		assert_int_equal(a->key, KEY_ISO);
		snprintf(f->held_msg, sizeof(f->held_msg), "%s", msg);
	}
	snprintf(f->last_report, sizeof(f->last_report), "%s", msg);
}

static const struct agent_ops fake_ops = {
	.name = "fake", .observe = fake_observe, .apply = fake_apply, .report = fake_report,
};

/* A loop of period 100 ms over ops and ctx on t with the default host
 * knobs, counters as given; fails the test when it cannot be made. */
static struct agent_loop *
new_loop(const struct agent_ops *ops, void *ctx, const struct topo *t, bool counters)
{
	struct policy_host host;
	struct llcd_err err;

	policy_host_defaults(&host, t);
	host.counters = counters;
	struct agent_loop *l = agent_loop_new(ops, ctx, &host, 100000000ull, &err);
	if (l == NULL)
		fail_msg("agent_loop_new: %s", err.msg);
	return l;
}

static struct agent_loop *
loop_for(struct fake *f, const struct topo *t)
{
	f->t = t;
	return new_loop(&fake_ops, f, t, false);
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
	assert_int_equal(f.order_bad, 0);
	assert_non_null(strstr(f.held_msg, "(narrow), which was not applied, so isolation=core would not hold; "
	    "planned again next period"));
	f.fail_shared = false;
	for (int i = 0; i < 3; i++, now += 100000000ull)
		assert_int_equal(agent_loop_step(l, now, &st, &err), 0);
	assert_true(f.iso_applied >= 4);
	assert_int_equal(f.order_bad, 0);
	assert_int_equal(st.isolation_overlaps, 0);
	agent_loop_free(l);
	topo_free(t);
}

/* --- a home trial with a shared domain beside it ------------------------- */

#define KEY_STREAM 1
#define KEY_WEB 2
#define TV 16                   /* vCPUs of each domain */

/* A bandwidth-bound isolated domain (8 of 16 vCPUs stream, an
 * LLC sustains 3 of them) and a shared domain in the pool its home trial
 * widens into. The fake kernel puts busy vCPU v on the (v mod n)-th PU of
 * its pin and reports instructions by the stream's LLC share. */
struct trial {
	struct topo *t;                 /* trial_loop's host */
	struct cpuset pin[3][TV];       /* per key: empty = every CPU */
	int fail_wide;                  /* this many stream pins off its first LLC fail (transient) */
	int stream_llc;                 /* the LLC of stream's first home, -1 before its first pin */
	bool fail_web_onto_old;         /* a web pin onto stream's old LLC fails permanently */
	struct cpuset old_llc;          /* PUs of stream's first home */
	int steps;
	int bad;                        /* actions that broke isolation */
	char bad_what[256];
	int wide_fails, web_waits, web_permanent, rollbacks;
	int stream_wide_pins;           /* stream pins off its first LLC (the trial's) applied */
};

static int
trial_pu(const struct trial *f, int key, int v)
{
	const struct cpuset *p = cpuset_empty(&f->pin[key][v]) ? &f->t->all : &f->pin[key][v];
	int n = cpuset_count(p), k = v % n, cpu;

	CPUSET_FOREACH(cpu, p)
		if (k-- == 0)
			return cpu;
	return cpuset_first(p);
}

static int
trial_observe(void *ctx, uint64_t now_ns, struct agent_obs *o, struct llcd_err *err)
{
	struct trial *f = ctx;

	for (int k = KEY_STREAM; k <= KEY_WEB; k++) {
		int i = agent_obs_add(o, TV, 0, err);
		if (i < 0)
			return -1;
		struct policy_domain_in *in = &o->domains[i];
		in->key = (uint64_t)k;
		snprintf(in->name, sizeof(in->name), "%s", k == KEY_STREAM ? "stream" : "web");
		in->guest = (struct policy_guest_topo){ 1, 1, 1, TV, 1 };
		policy_annotation_defaults(&in->annot);
		in->annotated = true;
		in->annot.mode = POLICY_MODE_AGGREGATE;
		in->annot.isolation = k == KEY_STREAM ? POLICY_ISO_CORE : POLICY_ISO_NONE;
		in->annot.tune.holddown_s = 1000;
		int per_llc[16] = { 0 };
		for (int v = 0; k == KEY_STREAM && v < 8; v++)
			per_llc[topo_llc_of(f->t, trial_pu(f, k, v))]++;
		for (int v = 0; v < TV; v++) {
			struct policy_vcpu_sample *s = &o->vcpus[i][v];
			double u = k == KEY_STREAM ? (v < 8 ? 1.0 : 0.02) : (v < 6 ? 1.0 : 0.1);
			int pu = trial_pu(f, k, v);
			int n = per_llc[topo_llc_of(f->t, pu)];
			double rate = k == KEY_STREAM && v < 8 && n > 3 ? 3.0 / n : 1.0;
			memset(s, 0, sizeof(*s));
			s->tid = 1000 * k + v;
			s->runtime_ns = now_ns ? (uint64_t)(u * 100000000.0) : 0;
			s->last_cpu = pu;
			s->instructions = (uint64_t)((double)s->runtime_ns * rate);
			s->pinned = &f->pin[k][v];
			o->cpu_busy_ns[pu] += s->runtime_ns;
		}
	}
	return 0;
}

/* After pin a of vCPU (key, v): a core it took that a vCPU of the other
 * domain is pinned to (stream is isolated). */
static void
trial_check(struct trial *f, const struct policy_action *a, const struct cpuset *was_pin)
{
	struct cpuset c, was, took;
	int other = a->key == KEY_STREAM ? KEY_WEB : KEY_STREAM;

	cores_of(f->t, &a->cpus, &c);
	cores_of(f->t, cpuset_empty(was_pin) ? &f->t->all : was_pin, &was);
	cpuset_andnot(&took, &c, &was);
	for (int u = 0; u < TV; u++)
		if (!cpuset_empty(&f->pin[other][u]) && cpuset_intersects(&f->pin[other][u], &took)) {
			if (f->bad++ == 0)
				snprintf(f->bad_what, sizeof(f->bad_what), "step %d: %s vCPU %d pinned onto a core %s vCPU %d "
				    "is pinned to (%.80s)", f->steps, a->key == KEY_STREAM ? "stream" : "web", a->vcpu,
				    other == KEY_STREAM ? "stream" : "web", u, a->reason);
			return;
		}
}

static enum agent_result
trial_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct trial *f = ctx;

	if (a->type != POLICY_ACT_PIN_VCPU)
		return AGENT_OK;
	/* the home trial's pins: onto several LLCs, or (a new home's busy
	 * vCPUs are first pinned one per core) onto another LLC */
	bool wide = pin_spans_llcs(f->t, &a->cpus);
	if (a->key == KEY_STREAM && f->stream_llc < 0 && !wide)
		f->stream_llc = topo_llc_of(f->t, cpuset_first(&a->cpus));
	wide = a->key == KEY_STREAM && (wide || topo_llc_of(f->t, cpuset_first(&a->cpus)) != f->stream_llc);
	if (a->key == KEY_STREAM && wide && f->wide_fails < f->fail_wide) {
		f->wide_fails++;
		llcd_err_set(err, "virDomainPinVcpu: timed out");
		return AGENT_TRANSIENT;
	}
	if (a->key == KEY_WEB && f->fail_web_onto_old && cpuset_intersects(&a->cpus, &f->old_llc) &&
	    strstr(a->reason, "rolled back") == NULL) {
		llcd_err_set(err, "virDomainPinVcpuFlags: Invalid argument");
		return AGENT_PERMANENT;
	}
	f->rollbacks += strstr(a->reason, "rolled back") != NULL;
	f->stream_wide_pins += a->key == KEY_STREAM && wide;
	struct cpuset was = f->pin[a->key][a->vcpu];
	f->pin[a->key][a->vcpu] = a->cpus;
	trial_check(f, a, &was);
	return AGENT_OK;
}

static void
trial_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct trial *f = ctx;

	if (a->key == KEY_WEB && strstr(msg, "not applied: it waits for the pin-vcpu of stream vCPU") != NULL)
		f->web_waits++;
	f->web_permanent += a->key == KEY_WEB && r == AGENT_PERMANENT;
}

static const struct agent_ops trial_ops = {
	.name = "fake",
	.observe = trial_observe,
	.apply = trial_apply,
	.report = trial_report,
};

/* The trials' loop on a host of 4 LLCs of 8 cores (f->t, freed with
 * trial_free), with counters. */
static struct agent_loop *
trial_loop(struct trial *f)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 [numa] l3:4 core:8 pu:2", &err);

	assert_non_null(t);
	memset(f, 0, sizeof(*f));
	f->stream_llc = -1;
	f->t = t;
	return new_loop(&trial_ops, f, t, true);
}

static void
trial_free(struct agent_loop *l, struct trial *f)
{
	agent_loop_free(l);
	topo_free(f->t);
}

static void
trial_steps(struct agent_loop *l, struct trial *f, int n, uint64_t *now, int *held)
{
	struct agent_step_stats st;
	struct llcd_err err;

	for (int i = 0; i < n; i++, *now += 100000000ull, f->steps++) {
		assert_int_equal(agent_loop_step(l, *now, &st, &err), 0);
		if (f->bad > 0)
			fail_msg("%d actions broke isolation: %s", f->bad, f->bad_what);
		if (st.isolation_overlaps != 0)
			fail_msg("step %d: %d overlaps after the step: %s", f->steps, st.isolation_overlaps, st.overlap);
		if (held)
			*held += st.held;
	}
}

/* The home trial widens the isolated domain; its pins onto the wider home
 * fail for three periods. The shared domain, re-placed onto the cores the
 * isolated domain would leave, is narrowed off the cores it would take,
 * and its pins onto the old cores wait for the isolated pins: not applied,
 * reported, never onto cores the isolated domain still runs on. Then the
 * pins go through, and isolation held at every action. */
static void
test_trial_failed_isolated_pins(void **state)
{
	struct trial f;
	struct agent_loop *l = trial_loop(&f);
	uint64_t now = 1000000000ull;
	int held = 0;

	f.fail_wide = 3 * TV;                           /* three periods of the trial */
	trial_steps(l, &f, 60, &now, &held);
	assert_int_equal(f.wide_fails, 3 * TV);         /* the trial happened, its pins failed */
	assert_true(f.web_waits >= 2 * TV);             /* web's widening waited */
	assert_true(held >= 2 * TV);
	assert_true(f.stream_wide_pins >= TV);          /* then they landed */
	trial_free(l, &f);
}

/* A pin of the shared domain onto the cores the isolated domain leaves
 * fails permanently during the trial: the shared domain is rolled back,
 * but never onto the cores the isolated domain took (the engine's undo
 * pin), and no action breaks isolation. */
static void
test_trial_rollback_keeps_isolation(void **state)
{
	struct trial f;
	struct agent_loop *l = trial_loop(&f);
	uint64_t now = 1000000000ull;

	trial_steps(l, &f, 3, &now, NULL);              /* placed */
	f.old_llc = topo_get(f.t, TOPO_LLC, topo_llc_of(f.t, cpuset_first(&f.pin[KEY_STREAM][0])))->cpus;
	f.fail_web_onto_old = true;
	trial_steps(l, &f, 30, &now, NULL);
	assert_int_equal(f.web_permanent, 1);
	assert_true(agent_loop_abandoned(l, KEY_WEB));
	assert_true(f.rollbacks >= 1);
	assert_true(f.stream_wide_pins >= 16);
	trial_free(l, &f);
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
		s->pinned = &f->pin[v];
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

/* agent_obs_bound(): an empty or NULL bound is none (NULL); a bound is
 * the slot's own copy, which outlives the caller's set and the slots'
 * growth; agent_obs_add() of the next observation starts with none. */
static void
test_obs_bound(void **state)
{
	struct llcd_err err;
	struct agent_obs *o = agent_obs_new();
	struct cpuset empty, b;

	(void)state;
	assert_non_null(o);
	cpuset_zero(&empty);
	cpuset_zero(&b);
	cpuset_set_range(&b, 4, 7);
	assert_int_equal(agent_obs_begin(o, 16, &err), 0);
	assert_int_equal(agent_obs_add(o, 2, 0, &err), 0);
	assert_int_not_equal(agent_obs_bound(o, 1, &b, &err), 0);      /* no such slot */
	assert_non_null(strstr(err.msg, "no domain slot 1"));
	assert_int_equal(agent_obs_bound(o, 0, &empty, &err), 0);
	assert_null(o->domains[0].bound);
	assert_int_equal(agent_obs_bound(o, 0, NULL, &err), 0);
	assert_null(o->domains[0].bound);
	assert_int_equal(agent_obs_bound(o, 0, &b, &err), 0);
	const struct cpuset *kept = o->domains[0].bound;
	assert_non_null(kept);
	assert_ptr_not_equal(kept, &b);
	cpuset_zero(&b);                        /* the caller's set changes */
	for (int i = 1; i < 40; i++)            /* the slots grow (moved) */
		assert_int_equal(agent_obs_add(o, 2, 0, &err), i);
	assert_ptr_equal(o->domains[0].bound, kept);
	assert_int_equal(cpuset_count(o->domains[0].bound), 4);
	assert_true(cpuset_isset(o->domains[0].bound, 4) && cpuset_isset(o->domains[0].bound, 7));
	assert_int_equal(agent_obs_begin(o, 16, &err), 0);
	assert_int_equal(agent_obs_add(o, 2, 0, &err), 0);
	assert_null(o->domains[0].bound);       /* a new observation: none yet */
	agent_obs_free(o);
}

TEST_MAIN(
	cmocka_unit_test(test_narrow_before_isolate),
	cmocka_unit_test(test_failed_narrowing_holds_isolation),
	cmocka_unit_test(test_trial_failed_isolated_pins),
	cmocka_unit_test(test_trial_rollback_keeps_isolation),
	cmocka_unit_test(test_permanent_failure_rolls_back),
	cmocka_unit_test(test_obs_bound))
