// SPDX-License-Identifier: GPL-2.0-or-later
/* loop.c - observe -> decide -> act, once per period. */
#include "loop.h"
#include "alloc.h"
#include "names.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

struct agent_loop {
	const struct agent_ops *ops;
	void *ctx;
	struct agent_loop_watch watch;  /* NULLs: none */
	struct policy_host host;
	uint64_t period_ns;
	struct policy_state *state;
	struct policy_plan *plan;
	struct agent_obs *obs;
	uint64_t *abandoned;            /* keys, sorted */
	int nabandoned, abandoned_cap;
	unsigned char *done;            /* per plan action: DONE_* this step */
	int done_cap;
	const struct cpuset **reach;    /* per vCPU of the observation, reused */
	int *reach_off;                 /* per domain: its first vCPU in reach */
	int reach_cap, off_cap;
	struct cpuset *iso_cores;       /* per domain: cores of an isolated one */
	int iso_cap;
};

LLCD_NAME_FUNCTION(agent_result_name, enum agent_result, AGENT_PERMANENT,
    [AGENT_OK] = "ok", [AGENT_TRANSIENT] = "transient", [AGENT_GONE] = "gone",
    [AGENT_PERMANENT] = "permanent")

LLCD_NAME_FUNCTION(agent_dom_state_name, enum agent_dom_state, AGENT_DOM_STATE_COUNT - 1,
    [AGENT_DOM_MANAGED] = "managed", [AGENT_DOM_UNMANAGED] = "unmanaged",
    [AGENT_DOM_ERROR] = "error")

/* --- observations ------------------------------------------------------ */

LLCD_DEFINE_NEW(agent_obs_new, struct agent_obs)

void
agent_obs_free(struct agent_obs *o)
{
	if (o == NULL)
		return;
	for (int i = 0; i < o->cap; i++) {
		free(o->vcpus[i]);
		free(o->reports[i]);
		free(o->edges[i]);
		free(o->bounds[i]);
	}
	free(o->domains);
	free(o->vcpus);
	free(o->reports);
	free(o->wakeups);
	free(o->edges);
	free(o->bounds);
	free(o->vcap);
	free(o->rcap);
	free(o->cpu_busy_ns);
	free(o);
}

int
agent_obs_begin(struct agent_obs *o, int ncpus, struct llcd_err *err)
{
	if (ncpus < 0)
		return llcd_err_set(err, "observation: negative CPU count");
	if (ncpus > o->ncpus || o->cpu_busy_ns == NULL) {
		uint64_t *b = realloc(o->cpu_busy_ns, sizeof(*b) * (size_t)(ncpus ? ncpus : 1));
		if (b == NULL)
			return llcd_err_set(err, "observation: out of memory");
		o->cpu_busy_ns = b;
	}
	o->ncpus = ncpus;
	memset(o->cpu_busy_ns, 0, sizeof(uint64_t) * (size_t)ncpus);
	o->ndomains = 0;
	return 0;
}

/* A new slot, zero but for the annotation's group slots past ngroups (0),
 * which nothing reads: they are 18 KB of the slot's 18.9 KB, and pages
 * never written are not resident (2,000 domains: 36 MB). */
static void
slot_clear(struct policy_domain_in *in)
{
	char *p = (char *)in;
	size_t head = offsetof(struct policy_domain_in, annot) + offsetof(struct policy_annotation, groups);
	size_t tail = offsetof(struct policy_domain_in, annot) + sizeof(in->annot);

	memset(p, 0, head);
	memset(p + tail, 0, sizeof(*in) - tail);
}

static int
grow_slots(struct agent_obs *o, struct llcd_err *err)
{
	int ncap = o->cap ? o->cap * 2 : 16;
	struct policy_domain_in *d = realloc(o->domains, sizeof(*d) * (size_t)ncap);

	if (d == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->domains = d;
	struct policy_vcpu_sample **v = realloc(o->vcpus, sizeof(*v) * (size_t)ncap);
	if (v == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->vcpus = v;
	struct policy_hot_report **r = realloc(o->reports, sizeof(*r) * (size_t)ncap);
	if (r == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->reports = r;
	struct policy_wakeups *w = realloc(o->wakeups, sizeof(*w) * (size_t)ncap);
	if (w == NULL)
		return llcd_err_set(err, "observation: out of memory");
	for (int j = 0; j < o->ndomains; j++)          /* the array moved */
		if (o->domains[j].wakeups != NULL)
			o->domains[j].wakeups = &w[j];
	o->wakeups = w;
	struct policy_wakeup_edge **e = realloc(o->edges, sizeof(*e) * (size_t)ncap);
	if (e == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->edges = e;
	struct cpuset **bs = realloc(o->bounds, sizeof(*bs) * (size_t)ncap);
	if (bs == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->bounds = bs;
	int *vc = realloc(o->vcap, sizeof(int) * (size_t)ncap);
	if (vc == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->vcap = vc;
	int *rc = realloc(o->rcap, sizeof(int) * (size_t)ncap);
	if (rc == NULL)
		return llcd_err_set(err, "observation: out of memory");
	o->rcap = rc;
	for (int i = o->cap; i < ncap; i++) {
		slot_clear(&o->domains[i]);
		o->vcpus[i] = NULL;
		o->reports[i] = NULL;
		memset(&o->wakeups[i], 0, sizeof(o->wakeups[i]));
		o->edges[i] = NULL;
		o->bounds[i] = NULL;
		o->vcap[i] = o->rcap[i] = 0;
	}
	o->cap = ncap;
	return 0;
}

int
agent_obs_add(struct agent_obs *o, int nvcpus, int nreports, struct llcd_err *err)
{
	int i = o->ndomains;

	if (nvcpus < 0 || nreports < 0)
		return llcd_err_set(err, "observation: negative vCPU or report count");
	if (i == o->cap && grow_slots(o, err) < 0)
		return -1;
	if (nvcpus > o->vcap[i]) {
		struct policy_vcpu_sample *v = realloc(o->vcpus[i], sizeof(*v) * (size_t)nvcpus);
		if (v == NULL)
			return llcd_err_set(err, "observation: out of memory");
		memset(v + o->vcap[i], 0, sizeof(*v) * (size_t)(nvcpus - o->vcap[i]));
		o->vcpus[i] = v;
		o->vcap[i] = nvcpus;
		o->domains[i].key = 0;          /* storage moved: force a refill */
	}
	if (nreports > o->rcap[i]) {
		struct policy_hot_report *r = realloc(o->reports[i], sizeof(*r) * (size_t)nreports);
		if (r == NULL)
			return llcd_err_set(err, "observation: out of memory");
		o->reports[i] = r;
		o->rcap[i] = nreports;
	}
	o->domains[i].nvcpus = nvcpus;
	o->domains[i].vcpus = o->vcpus[i];
	o->domains[i].vcpus_gen = 0;            /* the back-end's marks, if any */
	o->domains[i].reports_gen = 0;
	o->domains[i].annot_gen = 0;
	o->domains[i].nreports = nreports;
	o->domains[i].reports = o->reports[i];
	o->domains[i].wakeups = NULL;
	o->domains[i].bound = NULL;             /* agent_obs_bound() */
	o->domains[i].mbm_valid = false;        /* the back-end sets it each period */
	o->domains[i].mem_node_valid = false;   /* ditto */
	o->domains[i].mbm_bytes = 0;
	o->ndomains++;
	return i;
}

int
agent_obs_wakeups(struct agent_obs *o, int i, uint64_t period_ns, struct llcd_err *err)
{
	if (i < 0 || i >= o->ndomains)
		return llcd_err_set(err, "observation: no domain slot %d", i);
	if (period_ns == 0)
		return llcd_err_set(err, "observation: wakeups over a period of 0 ns");
	if (o->edges[i] == NULL) {
		/* not zeroed: the back-end writes the nedges it hands over, so
		 * that only what a domain uses becomes resident */
		o->edges[i] = malloc(POLICY_WAKEUP_EDGES * sizeof(*o->edges[i]));
		if (o->edges[i] == NULL)
			return llcd_err_set(err, "observation: out of memory");
	}
	o->wakeups[i] = (struct policy_wakeups){ .period_ns = period_ns, .edges = o->edges[i] };
	o->domains[i].wakeups = &o->wakeups[i];
	return 0;
}

int
agent_obs_bound(struct agent_obs *o, int i, const struct cpuset *bound, struct llcd_err *err)
{
	if (i < 0 || i >= o->ndomains)
		return llcd_err_set(err, "observation: no domain slot %d", i);
	if (bound == NULL || cpuset_empty(bound)) {
		o->domains[i].bound = NULL;
		return 0;
	}
	if (o->bounds[i] == NULL && (o->bounds[i] = malloc(sizeof(*o->bounds[i]))) == NULL)
		return llcd_err_set(err, "observation: out of memory");
	*o->bounds[i] = *bound;
	o->domains[i].bound = o->bounds[i];
	return 0;
}

/* --- the loop ---------------------------------------------------------- */

/* The back-end's apply, then the watcher's (the daemon counts, logs and
 * broadcasts each action). */
static enum agent_result
call_apply(struct agent_loop *l, const struct policy_action *a, struct llcd_err *err)
{
	enum agent_result r = l->ops->apply(l->ctx, a, err);

	if (l->watch.applied)
		l->watch.applied(l->watch.arg, a, r, r == AGENT_OK ? NULL : err->msg);
	return r;
}

/* An action not applied or failed: the watcher, then the back-end. */
static void
call_report(struct agent_loop *l, const struct policy_action *a, enum agent_result r, const char *msg)
{
	if (l->watch.reported)
		l->watch.reported(l->watch.arg, a, r, msg);
	if (l->ops->report)
		l->ops->report(l->ctx, a, r, msg);
}

void
agent_loop_set_watch(struct agent_loop *l, const struct agent_loop_watch *w)
{
	l->watch = *w;
}

struct agent_loop *
agent_loop_new(const struct agent_ops *ops, void *ctx, const struct policy_host *host,
               uint64_t period_ns, struct llcd_err *err)
{
	struct agent_loop *l;

	if (ops == NULL || ops->observe == NULL || ops->apply == NULL) {
		llcd_err_set(err, "agent loop: ops table lacks observe or apply");
		return NULL;
	}
	if (period_ns == 0) {
		llcd_err_set(err, "agent loop: period must be > 0");
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		llcd_err_set(err, "agent loop: out of memory");
		return NULL;
	}
	l->ops = ops;
	l->ctx = ctx;
	l->host = *host;
	l->period_ns = period_ns;
	l->state = policy_state_new();
	l->plan = policy_plan_new();
	l->obs = agent_obs_new();
	if (l->state == NULL || l->plan == NULL || l->obs == NULL) {
		agent_loop_free(l);
		llcd_err_set(err, "agent loop: out of memory");
		return NULL;
	}
	if (ops->sets != NULL && ops->sets(ctx) != NULL)
		(void)policy_state_share_sets(l->state, ops->sets(ctx));       /* a new state: never -1 */
	return l;
}

void
agent_loop_free(struct agent_loop *l)
{
	if (l == NULL)
		return;
	policy_state_free(l->state);
	policy_plan_free(l->plan);
	agent_obs_free(l->obs);
	free(l->abandoned);
	free(l->done);
	free(l->iso_cores);
	free(l->reach);
	free(l->reach_off);
	free(l);
}

bool
agent_loop_abandoned(const struct agent_loop *l, uint64_t key)
{
	int lo = 0, hi = l->nabandoned - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (l->abandoned[mid] == key)
			return true;
		if (l->abandoned[mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

static void
abandon(struct agent_loop *l, uint64_t key)
{
	int i;

	if (agent_loop_abandoned(l, key))
		return;
	if (l->nabandoned == l->abandoned_cap) {
		int ncap = l->abandoned_cap ? 2 * l->abandoned_cap : 8;
		uint64_t *a = realloc(l->abandoned, sizeof(*a) * (size_t)ncap);
		if (a == NULL)
			return;         /* keeps managing; the next failure retries */
		l->abandoned = a;
		l->abandoned_cap = ncap;
	}
	for (i = l->nabandoned; i > 0 && l->abandoned[i - 1] > key; i--)
		l->abandoned[i] = l->abandoned[i - 1];
	l->abandoned[i] = key;
	l->nabandoned++;
}

/* What became of a plan action this step (agent_loop.done). */
enum {
	DONE_NOT,               /* not applied */
	DONE_APPLIED,           /* applied: the thread has its pin */
	DONE_UNDONE,            /* applied, then rolled back to its undo pin */
};

static bool
is_pin(const struct policy_action *a)
{
	return a->type == POLICY_ACT_PIN_VCPU || a->type == POLICY_ACT_PIN_EMULATOR;
}

static bool
vcpu_of(const struct agent_obs *o, const struct policy_action *a)
{
	return a->domain >= 0 && a->domain < o->ndomains && a->vcpu >= 0 && a->vcpu < o->domains[a->domain].nvcpus;
}

/* A pin of the domain failed permanently: put back every vCPU pin this
 * step applied to it, once per vCPU, to the pin the engine gave for that
 * (policy_action.undo: the affinity before the step, less the cores of
 * domains it conflicts with this period), so that the domain is not left
 * half in the new placement and half in the old one when llcd stops
 * managing it, and no rollback breaks isolation. Returns how many were put
 * back; a rollback that fails, or that the engine gave no pin for, is
 * reported (the domain keeps that pin). Emulator pins stay: their previous
 * affinity is not observed. */
static int
roll_back(struct agent_loop *l, uint64_t key, struct agent_step_stats *st)
{
	const struct policy_plan *p = l->plan;
	struct cpuset back;             /* vCPUs dealt with (newest pin first) */
	int n = 0;

	cpuset_zero(&back);
	for (int i = p->n - 1; i >= 0; i--) {
		const struct policy_action *a = &p->actions[i];
		struct policy_action rb;
		struct llcd_err rerr;
		if (l->done[i] != DONE_APPLIED || a->key != key || a->type != POLICY_ACT_PIN_VCPU || !vcpu_of(l->obs, a))
			continue;
		if (cpuset_isset(&back, a->vcpu)) {
			l->done[i] = DONE_NOT;  /* an older pin of a vCPU dealt with */
			continue;
		}
		cpuset_set(&back, a->vcpu);
		rb = *a;
		if (cpuset_empty(&a->undo)) {
			call_report(l, a, AGENT_PERMANENT, "not rolled back: its previous affinity would "
				    "share cores with an isolated domain; the vCPU keeps the new pin");
			continue;
		}
		rb.cpus = a->undo;
		snprintf(rb.reason, sizeof(rb.reason), "rolled back to its previous affinity: another pin of "
		    "the domain failed permanently");
		rerr.msg[0] = '\0';
		enum agent_result r = call_apply(l, &rb, &rerr);
		if (r == AGENT_OK) {
			l->done[i] = DONE_UNDONE;
			n++;
			st->rolled_back++;
		} else {
			char msg[LLCD_ERR_MSG + 64];
			snprintf(msg, sizeof(msg), "rollback failed, the vCPU keeps the new pin: %s", rerr.msg);
			call_report(l, &rb, r, msg);
		}
	}
	return n;
}

/* Apply plan action i. A permanent failure stops llcd managing the domain
 * (abandoned: visible as state error, with the message) after rolling back
 * the pins this step applied to it; the report says how many. */
static enum agent_result
apply_one(struct agent_loop *l, int i, struct agent_step_stats *st)
{
	const struct policy_action *a = &l->plan->actions[i];
	struct llcd_err aerr;
	enum agent_result r;

	aerr.msg[0] = '\0';
	r = call_apply(l, a, &aerr);
	switch (r) {
	case AGENT_OK:
		st->ok++;
		l->done[i] = DONE_APPLIED;
		break;
	case AGENT_TRANSIENT: st->transient++; break;
	case AGENT_GONE: st->gone++; break;
	case AGENT_PERMANENT: {
		st->permanent++;
		abandon(l, a->key);
		int n = roll_back(l, a->key, st);
		if (n > 0) {
			size_t len = strlen(aerr.msg);
			snprintf(aerr.msg + len, sizeof(aerr.msg) - len, "; the %d pin%s applied to the domain in this "
			    "period rolled back", n, n == 1 ? "" : "s");
		}
		break;
	}
	}
	if (r != AGENT_OK)
		call_report(l, a, r, aerr.msg);
	return r;
}

/* The first prerequisite of action i that was not applied (-2: not an
 * earlier action of the plan), -1 none. One rolled back counts as applied:
 * its undo pin keeps clear of every core the prerequisite frees. */
static int
unmet(const struct agent_loop *l, int i)
{
	int n;
	const int *deps = policy_plan_deps(l->plan, i, &n);

	for (int j = 0; j < n; j++) {
		if (deps[j] < 0 || deps[j] >= i)
			return -2;
		if (!l->done[deps[j]])
			return deps[j];
	}
	return -1;
}

/* Apply the plan in the engine's order (policy/order.c): each action only
 * when every prerequisite it names was applied. One the engine held back,
 * or whose prerequisite was not applied (it failed, was held, or belongs to
 * an abandoned domain), is not applied: it is reported, counted (held) and
 * handed back to the engine, which plans it again next period. The loop
 * decides nothing about where or when. */
static int
apply_plan(struct agent_loop *l, struct agent_step_stats *st, struct llcd_err *err)
{
	const struct policy_plan *p = l->plan;

	if (p->n > l->done_cap) {
		unsigned char *dn = realloc(l->done, (size_t)p->n);
		if (dn == NULL)
			return llcd_err_set(err, "agent loop: out of memory for %d actions", p->n);
		l->done = dn;
		l->done_cap = p->n;
	}
	if (p->n > 0)
		memset(l->done, 0, (size_t)p->n);
	for (int i = 0; i < p->n; i++) {
		const struct policy_action *a = &p->actions[i];
		if (agent_loop_abandoned(l, a->key)) {
			st->skipped++;
			continue;
		}
		if (a->held) {
			st->held++;             /* the engine plans it again */
			call_report(l, a, AGENT_TRANSIENT, a->reason);
			continue;
		}
		int d = unmet(l, i);
		if (d != -1) {
			char msg[POLICY_REASON + 192];
			const struct policy_action *da = d >= 0 && d < p->n ? &p->actions[d] : NULL;
			snprintf(msg, sizeof(msg), "not applied: it waits for the %s of %s vCPU %d (%s), which was not "
			    "applied, so isolation=core would not hold; planned again next period",
			    da ? policy_action_name(da->type) : "action",
			    da && da->domain >= 0 && da->domain < l->obs->ndomains ? l->obs->domains[da->domain].name : "?",
			    da ? da->vcpu : -1, da ? policy_stage_name(da->stage) : "?");
			st->held++;
			policy_action_not_applied(l->state, a);
			call_report(l, a, AGENT_TRANSIENT, msg);
			continue;
		}
		enum agent_result r = apply_one(l, i, st);
		if (r == AGENT_TRANSIENT && is_pin(a))
			policy_action_not_applied(l->state, a);        /* retried next period */
	}
	return 0;
}

/* Where each vCPU thread may run once the step acted: its observed
 * affinity (empty: never pinned, every PU), or the last pin the step
 * applied to it (its undo pin when that was rolled back). */
static int
reach_after(struct agent_loop *l, struct llcd_err *err)
{
	const struct agent_obs *o = l->obs;
	const struct policy_plan *p = l->plan;
	const struct topo *t = l->host.topo;
	int total = 0, k = 0;

	for (int i = 0; i < o->ndomains; i++)
		total += o->domains[i].nvcpus;
	if (total > l->reach_cap) {
		const struct cpuset **r = realloc(l->reach, sizeof(*r) * (size_t)total);
		if (r == NULL)
			return llcd_err_set(err, "agent loop: out of memory for %d vCPUs", total);
		l->reach = r;
		l->reach_cap = total;
	}
	if (o->ndomains > l->off_cap) {
		int *off = realloc(l->reach_off, sizeof(*off) * (size_t)o->ndomains);
		if (off == NULL)
			return llcd_err_set(err, "agent loop: out of memory for %d domains", o->ndomains);
		l->reach_off = off;
		l->off_cap = o->ndomains;
	}
	for (int i = 0; i < o->ndomains; i++) {
		l->reach_off[i] = k;
		for (int v = 0; v < o->domains[i].nvcpus; v++) {
			const struct cpuset *pin = policy_sample_pin(&o->domains[i].vcpus[v]);
			l->reach[k++] = cpuset_empty(pin) ? &t->all : pin;
		}
	}
	for (int i = 0; i < p->n; i++) {
		const struct policy_action *a = &p->actions[i];
		if (l->done[i] == DONE_NOT || a->domain < 0 || a->domain >= o->ndomains)
			continue;
		if (a->type == POLICY_ACT_PIN_VCPU && vcpu_of(o, a))
			l->reach[l->reach_off[a->domain] + a->vcpu] = l->done[i] == DONE_UNDONE ? &a->undo : &a->cpus;
		else if (a->type == POLICY_ACT_RELEASE)
			for (int v = 0; v < o->domains[a->domain].nvcpus; v++)
				l->reach[l->reach_off[a->domain] + v] = &a->cpus;
	}
	return 0;
}

/* Whole cores of the PUs in set. */
static void
whole_cores(const struct topo *t, const struct cpuset *set, struct cpuset *out)
{
	int cpu;

	cpuset_zero(out);
	CPUSET_FOREACH(cpu, set)
		if (cpu <= t->max_cpu && t->pu_core[cpu] >= 0 && !cpuset_isset(out, cpu))
			cpuset_or(out, out, &t->nodes[TOPO_CORE][t->pu_core[cpu]]->cpus);
}

/* After the step acted (reach_after): the vCPU threads that may run on a
 * core a vCPU of an isolated domain (one the engine placed on cores of its
 * own) may run on, other than that domain's own: an overlap that happened
 * anyway (a pin failed, someone changed one outside llcd, a domain just
 * started). Counted, and the first described in st->overlap, so that the
 * daemon says so in the period it happens. Emulator threads are not
 * observed and not counted. Nothing when no domain is isolated. */
static int
isolation_overlaps(struct agent_loop *l, struct agent_step_stats *st, struct llcd_err *err)
{
	const struct topo *t = l->host.topo;
	const struct agent_obs *o = l->obs;
	struct cpuset all_iso, x;
	int n = 0, niso = 0;

	st->overlap[0] = '\0';
	if (t == NULL)
		return 0;
	/* most hosts have none: one pass over the state, not a lookup a domain */
	if (!policy_any_isolated(l->state))
		return 0;
	for (int i = 0; i < o->ndomains; i++)
		niso += policy_domain_isolated(l->state, o->domains[i].key);
	if (niso == 0)
		return 0;
	if (reach_after(l, err) < 0)
		return -1;
	if (o->ndomains > l->iso_cap) {
		struct cpuset *c = realloc(l->iso_cores, sizeof(*c) * (size_t)o->ndomains);
		if (c == NULL)
			return llcd_err_set(err, "agent loop: out of memory for %d domains", o->ndomains);
		l->iso_cores = c;
		l->iso_cap = o->ndomains;
	}
	cpuset_zero(&all_iso);
	for (int i = 0; i < o->ndomains; i++) {
		struct cpuset pus;
		cpuset_zero(&pus);
		cpuset_zero(&l->iso_cores[i]);
		if (!policy_domain_isolated(l->state, o->domains[i].key))
			continue;
		for (int v = 0; v < o->domains[i].nvcpus; v++)
			cpuset_or(&pus, &pus, l->reach[l->reach_off[i] + v]);
		whole_cores(t, &pus, &l->iso_cores[i]);
		cpuset_or(&all_iso, &all_iso, &l->iso_cores[i]);
	}
	for (int i = 0; i < o->ndomains; i++) {
		const struct policy_domain_in *d = &o->domains[i];
		bool iso = policy_domain_isolated(l->state, d->key);
		struct cpuset others = all_iso;
		if (iso) {              /* the other isolated domains' cores */
			cpuset_zero(&others);
			for (int j = 0; j < o->ndomains; j++)
				if (j != i)
					cpuset_or(&others, &others, &l->iso_cores[j]);
		}
		for (int v = 0; v < d->nvcpus; v++) {
			cpuset_and(&x, l->reach[l->reach_off[i] + v], &others);
			if (cpuset_empty(&x))
				continue;
			if (n++ == 0) {
				int cpu = cpuset_first(&x), owner = -1;
				for (int j = 0; j < o->ndomains && owner < 0; j++)
					if (j != i && cpuset_isset(&l->iso_cores[j], cpu))
						owner = j;
				snprintf(st->overlap, sizeof(st->overlap), "domain '%s' vCPU %d may run on CPU %d, a core "
				    "of isolated domain '%s'", d->name, v, cpu, owner >= 0 ? o->domains[owner].name : "?");
			}
		}
	}
	return n;
}

int
agent_loop_step(struct agent_loop *l, uint64_t now_ns, struct agent_step_stats *st,
                struct llcd_err *err)
{
	struct agent_step_stats local;
	struct policy_input in;
	int ncpus = l->host.topo ? l->host.topo->max_cpu + 1 : 0;
	uint64_t t0, c0, c1;

	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof(*st));
	c0 = llcd_thread_cpu_ns();
	if (agent_obs_begin(l->obs, ncpus, err) < 0)
		return -1;
	if (l->ops->observe(l->ctx, now_ns, l->obs, err) < 0)
		return llcd_err_prefix(err, "%s: observe", l->ops->name);
	if (l->watch.observed)
		l->watch.observed(l->watch.arg, l->obs);
	c1 = llcd_thread_cpu_ns();
	st->observe_cpu_ns = c1 - c0;

	memset(&in, 0, sizeof(in));
	in.host = l->host;
	in.ndomains = l->obs->ndomains;
	in.domains = l->obs->domains;
	in.cpu_busy_ns = l->obs->cpu_busy_ns;
	in.now_ns = now_ns;
	in.period_ns = l->period_ns;

	t0 = llcd_mono_ns();
	if (policy_step(l->state, &in, l->plan, err) < 0)
		return llcd_err_prefix(err, "policy");
	st->policy_wall_ns = llcd_mono_ns() - t0;
	c0 = llcd_thread_cpu_ns();
	st->policy_cpu_ns = c0 - c1;

	st->actions = l->plan->n;
	if (apply_plan(l, st, err) < 0)
		return -1;
	if (l->ops->applied)
		l->ops->applied(l->ctx);
	if ((st->isolation_overlaps = isolation_overlaps(l, st, err)) < 0)
		return -1;
	st->apply_cpu_ns = llcd_thread_cpu_ns() - c0;
	return 0;
}

const struct agent_obs *
agent_loop_obs(const struct agent_loop *l)
{
	return l->obs;
}

void
agent_loop_set_host(struct agent_loop *l, const struct policy_host *host, uint64_t period_ns)
{
	l->host = *host;
	if (period_ns > 0)
		l->period_ns = period_ns;
}

const struct policy_state *
agent_loop_policy(const struct agent_loop *l)
{
	return l->state;
}

const struct policy_plan *
agent_loop_plan(const struct agent_loop *l)
{
	return l->plan;
}
