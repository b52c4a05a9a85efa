// SPDX-License-Identifier: GPL-2.0-or-later
/* policy.c - the LLC placement engine's plan, state, set helpers and
 * introspection (see policy.h; the stages of a step are in step.c,
 * placement.c, groups.c, steer.c and benefit.c, which share policy_int.h).
 */
#include "policy_int.h"
#include "alloc.h"
#include "names.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- plan --------------------------------------------------------------- */

LLCD_DEFINE_NEW(policy_plan_new, struct policy_plan)

void
policy_plan_free(struct policy_plan *p)
{
	if (p == NULL)
		return;
	free(p->actions);
	free(p->deps);
	free(p);
}

/* A plan as big as a first step's (every vCPU pinned at once: 32,000
 * actions of 816 bytes at 2,000 domains of 16 vCPUs) is not kept for the
 * small plans after it: past four times what the last plan used, the room
 * shrinks to twice that. */
void
policy_plan_clear(struct policy_plan *p)
{
	if (p->cap > 256 && p->n < p->cap / 4) {
		int cap = p->n * 2 > 64 ? p->n * 2 : 64;
		struct policy_action *v = realloc(p->actions, sizeof(*v) * (size_t)cap);
		if (v) {
			p->actions = v;
			p->cap = cap;
		}
	}
	if (p->deps_cap > 1024 && p->ndeps < p->deps_cap / 4) {
		int cap = p->ndeps * 2 > 256 ? p->ndeps * 2 : 256;
		int *v = realloc(p->deps, sizeof(*v) * (size_t)cap);
		if (v) {
			p->deps = v;
			p->deps_cap = cap;
		}
	}
	p->n = 0;
	p->ndeps = 0;
}

const int *
policy_plan_deps(const struct policy_plan *p, int i, int *n)
{
	const struct policy_action *a;

	*n = 0;
	if (i < 0 || i >= p->n)
		return NULL;
	a = &p->actions[i];
	if (a->ndeps <= 0 || a->dep0 < 0 || a->dep0 + a->ndeps > p->ndeps)
		return NULL;
	*n = a->ndeps;
	return &p->deps[a->dep0];
}

struct policy_action *
policy_plan_add(struct policy_state *s, struct policy_plan *p, enum policy_action_type type,
         const struct dom *d, int vcpu, const struct cpuset *cpus, const char *fmt, ...)
{
	struct policy_action *a;
	va_list ap;

	if (p->n == p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		struct policy_action *v = realloc(p->actions, sizeof(*v) * (size_t)cap);
		if (v == NULL) {
			s->stats.nomem++;
			return NULL;
		}
		p->actions = v;
		p->cap = cap;
	}
	a = &p->actions[p->n++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->key = d->key;
	a->domain = d->in_idx;
	a->vcpu = vcpu;
	a->llc = -1;
	if (cpus)
		a->cpus = *cpus;
	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	return a;
}

void
policy_reason_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

LLCD_NAME_FUNCTION(policy_action_name, enum policy_action_type, POLICY_ACT_BACKOFF,
    [POLICY_ACT_PIN_VCPU] = "pin-vcpu", [POLICY_ACT_PIN_EMULATOR] = "pin-emulator",
    [POLICY_ACT_RELEASE] = "release", [POLICY_ACT_REFUSE] = "refuse",
    [POLICY_ACT_PREFER] = "prefer", [POLICY_ACT_BACKOFF] = "backoff")

LLCD_NAME_FUNCTION(policy_trial_state_name, enum policy_trial_state, POLICY_TRIAL_MEASURING,
    [POLICY_TRIAL_WATCHING] = "watching", [POLICY_TRIAL_SETTLING] = "settling",
    [POLICY_TRIAL_MEASURING] = "measuring")

LLCD_NAME_FUNCTION(policy_stage_name, enum policy_stage, POLICY_STAGE_WIDEN,
    [POLICY_STAGE_NARROW] = "narrow", [POLICY_STAGE_ISOLATE] = "isolate",
    [POLICY_STAGE_WIDEN] = "widen")

LLCD_NAME_FUNCTION(policy_group_rule_name, enum policy_group_rule, POLICY_GROUP_WAKEUPS,
    [POLICY_GROUP_ANNOTATION] = "annotation", [POLICY_GROUP_GUEST] = "guest",
    [POLICY_GROUP_DOMAIN] = "domain", [POLICY_GROUP_WAKEUPS] = "wakeups")

void
policy_host_defaults(struct policy_host *h, const struct topo *t)
{
	memset(h, 0, sizeof(*h));
	h->topo = t;
	h->overcommit = 1.0;
	h->overcommit_isolated = 1.0;
	h->max_moves_total = 256;
}

/* --- state -------------------------------------------------------------- */

void
policy_dom_free(struct dom *d)
{
	if (d == NULL)
		return;
	for (int i = 0; i < d->ngroups; i++)
		groups_clear(&d->groups[i]);
	free(d->groups);
	free(d->slot);
	for (int v = 0; v < d->nvcpus; v++) {
		if (d->home)
			dom_pin_clear(d, &d->home[v]);
		if (d->want)
			dom_pin_clear(d, &d->want[v]);
		if (d->sent)
			dom_pin_clear(d, &d->sent[v]);
	}
	free(d->home);
	free(d->want);
	free(d->sent);
	free(d->vutil);
	free(d->origin);
	free(d->pin_step);
	free(d->obs);
	free(d->rep);
	wakeups_state_free(d->wk);
	free(d->annot);
	free(d);
}

int
policy_dom_set_annot(struct dom *d, const struct policy_annotation *a)
{
	int n = a == NULL ? 0 : a->ngroups < 0 ? 0 : a->ngroups > POLICY_MAX_GROUPS ? POLICY_MAX_GROUPS : a->ngroups;

	if (d->annot == NULL || n > d->annot_cap) {
		struct policy_annotation *p = realloc(d->annot, policy_annotation_size(n));
		if (p == NULL)
			return -1;
		d->annot = p;
		d->annot_cap = n;
	}
	if (a != NULL)
		policy_annotation_copy(d->annot, a);
	else
		policy_annotation_reset(d->annot);
	return 0;
}

static void
state_reset(struct policy_state *s)
{
	for (int i = 0; i < s->ndoms; i++)
		policy_dom_free(s->doms[i]);
	free(s->doms);
	free(s->cpu_rt);
	free(s->cpu_rt_prev);
	free(s->cpu_busy);
	free(s->llc_util);
	free(s->llc_cap);
	free(s->llc_w);
	free(s->llc_w0);
	free(s->llc_w1);
	free(s->occ);
	free(s->vorder);
	s->vorder = NULL;
	s->llc_w = s->llc_w0 = s->llc_w1 = NULL;
	s->occ = NULL;
	free(s->av_util);
	free(s->av_cap);
	free(s->av_whole);
	free(s->view_util);
	free(s->view_cap);
	free(s->view_whole);
	free(s->core_owner);
	free(s->llc_load);
	free(s->pu_load);
	free(s->own.doms);
	free(s->own.core_owner);
	free(s->own.llc_load);
	free(s->own.pu_load);
	memset(&s->own, 0, sizeof(s->own));
	s->doms = NULL;
	s->ndoms = 0;
	s->cpu_rt = s->cpu_rt_prev = s->cpu_busy = s->llc_util = s->llc_cap = s->av_util = s->av_cap = NULL;
	s->av_whole = NULL;
	s->view_util = s->view_cap = NULL;
	s->view_whole = NULL;
	s->view_step = 0;
	s->core_owner = s->llc_load = s->pu_load = NULL;
	s->topo = NULL;
}

struct policy_state *
policy_state_new(void)
{
	struct policy_state *s = calloc(1, sizeof(struct policy_state));

	if (s == NULL)
		return NULL;
	s->budget_cap = INT_MAX;
	s->incremental = true;
	s->order_n = -1;
	if ((s->sets = cpuset_pool_new()) == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

void
policy_state_set_incremental(struct policy_state *s, bool on)
{
	s->incremental = on;
	s->own.valid = false;
	s->order_n = -1;
	for (int i = 0; i < s->ndoms; i++) {
		s->doms[i]->obs_ok = false;
		s->doms[i]->vutil_fixed = false;
		s->doms[i]->hc.sums_ok = false;
	}
}

int
policy_state_share_sets(struct policy_state *s, struct cpuset_pool *p)
{
	if (s->ndoms > 0 || p == NULL)
		return -1;
	if (!s->sets_shared)
		cpuset_pool_free(s->sets);
	s->sets = p;
	s->sets_shared = true;
	return 0;
}

void
policy_state_free(struct policy_state *s)
{
	if (s == NULL)
		return;
	state_reset(s);
	if (!s->sets_shared)
		cpuset_pool_free(s->sets);
	free(s->order_prev);
	free(s);
}

int
policy_state_bind_topo(struct policy_state *s, const struct topo *t)
{
	if (s->topo == t)
		return 0;
	state_reset(s);
	s->topo = t;
	s->ncpu = t->max_cpu + 1;
	s->nwords = t->max_cpu / 64 + 1;
	s->nllc = topo_count(t, TOPO_LLC);
	s->cpu_rt = calloc((size_t)s->ncpu, sizeof(double));
	s->cpu_rt_prev = calloc((size_t)s->ncpu, sizeof(double));
	s->cpu_busy = calloc((size_t)s->ncpu, sizeof(double));
	s->llc_util = calloc((size_t)s->nllc, sizeof(double));
	s->llc_cap = calloc((size_t)s->nllc, sizeof(double));
	s->llc_w = calloc((size_t)s->nllc, sizeof(int));
	s->llc_w0 = calloc((size_t)s->nllc, sizeof(int));
	s->llc_w1 = calloc((size_t)s->nllc, sizeof(int));
	s->occ = calloc((size_t)s->nllc, sizeof(double));
	s->av_util = calloc((size_t)s->nllc, sizeof(double));
	s->av_cap = calloc((size_t)s->nllc, sizeof(double));
	s->av_whole = calloc((size_t)s->nllc, sizeof(bool));
	s->view_util = calloc((size_t)s->nllc, sizeof(double));
	s->view_cap = calloc((size_t)s->nllc, sizeof(double));
	s->view_whole = calloc((size_t)s->nllc, sizeof(bool));
	s->core_owner = calloc((size_t)topo_count(t, TOPO_CORE), sizeof(int));
	s->llc_load = calloc((size_t)s->nllc, sizeof(int));
	s->pu_load = calloc((size_t)s->ncpu, sizeof(int));
	if (!s->cpu_rt || !s->cpu_rt_prev || !s->cpu_busy || !s->llc_util || !s->llc_cap || !s->av_util || !s->av_cap ||
	    !s->av_whole || !s->view_util || !s->view_cap || !s->view_whole || !s->core_owner ||
	    !s->llc_load || !s->pu_load || !s->llc_w || !s->llc_w0 || !s->llc_w1 || !s->occ) {
		state_reset(s);
		return -1;
	}
	for (int l = 0; l < s->nllc; l++) {
		const struct cpuset *c = &topo_get(t, TOPO_LLC, l)->cpus;
		s->llc_w[l] = topo_llc_weight(t, l);
		s->llc_w0[l] = cpuset_empty(c) ? 0 : cpuset_first(c) / 64;
		s->llc_w1[l] = cpuset_empty(c) ? -1 : cpuset_last(c) / 64;
	}
	return 0;
}

struct dom *
policy_dom_new(const struct policy_domain_in *in)
{
	struct dom *d = calloc(1, sizeof(*d));
	size_t n = (size_t)in->nvcpus;

	if (d == NULL)
		return NULL;
	d->key = in->key;
	d->nvcpus = in->nvcpus;
	d->slot = calloc(n, sizeof(int));
	d->home = malloc(n * sizeof(*d->home));
	d->want = malloc(n * sizeof(*d->want));
	d->sent = malloc(n * sizeof(*d->sent));
	for (size_t v = 0; v < n; v++) {
		if (d->home)
			d->home[v] = &cpuset_none;
		if (d->want)
			d->want[v] = &cpuset_none;
		if (d->sent)
			d->sent[v] = &cpuset_none;
	}
	d->vutil = calloc(n, sizeof(double));
	d->origin = malloc(n * sizeof(int));
	d->pin_step = calloc(n, sizeof(uint64_t));
	if (!d->slot || !d->home || !d->want || !d->sent || !d->vutil || !d->origin || !d->pin_step ||
	    policy_dom_set_annot(d, NULL) < 0) {
		policy_dom_free(d);
		return NULL;
	}
	for (size_t v = 0; v < n; v++)
		d->origin[v] = -1;
	return d;
}

int
policy_dom_find(const struct policy_state *s, uint64_t key)
{
	int lo = 0, hi = s->ndoms - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (s->doms[mid]->key == key)
			return mid;
		if (s->doms[mid]->key < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int
policy_dom_insert(struct policy_state *s, struct dom *d)
{
	struct dom **v = realloc(s->doms, sizeof(*v) * (size_t)(s->ndoms + 1));
	int i;

	if (v == NULL)
		return -1;
	s->doms = v;
	d->sets = s->sets;
	for (i = s->ndoms; i > 0 && s->doms[i - 1]->key > d->key; i--)
		s->doms[i] = s->doms[i - 1];
	s->doms[i] = d;
	s->ndoms++;
	return 0;
}

/* Whether d's guest reports are the last step's, byte for byte (their
 * padding too: a change there only counts as a change); if not, these
 * are kept. Marked reports (policy_domain_in.reports_gen): the last
 * step's mark, with no read of them and no copy. The first call of a
 * step compares, later ones of the step give its answer; a step that did
 * not call it breaks the chain (the next call's answer is false). Never
 * true with incremental steps off. */
bool
policy_dom_reports_same(struct policy_state *s, struct dom *d, const struct policy_domain_in *di)
{
	size_t n = sizeof(*d->rep) * (size_t)di->nreports;

	if (!s->incremental)
		return false;
	if ((d->rep_ok || d->rep_mark != 0) && d->rep_step == s->step)
		return d->rep_same;
	if (di->reports_gen != 0) {
		/* the caller's mark: the same one, the same reports */
		d->rep_same = d->rep_mark == di->reports_gen && d->rep_step + 1 == s->step;
		d->rep_mark = di->reports_gen;
		d->rep_ok = false;      /* (the copy, if any, is not these) */
		d->rep_step = s->step;
		return d->rep_same;
	}
	d->rep_mark = 0;
	d->rep_same = d->rep_ok && d->rep_step + 1 == s->step && d->nrep == di->nreports &&
	    (n == 0 || memcmp(d->rep, di->reports, n) == 0);
	d->rep_step = s->step;
	if (d->rep_same)
		return true;
	if (d->rep_cap < di->nreports) {
		struct policy_hot_report *r = realloc(d->rep, n);
		if (r == NULL) {
			s->stats.nomem++;
			d->rep_ok = false;
			return false;
		}
		d->rep = r;
		d->rep_cap = di->nreports;
	}
	if (n > 0)
		memcpy(d->rep, di->reports, n);
	d->nrep = di->nreports;
	d->rep_ok = true;
	return false;
}

bool
policy_dom_managed_mode(const struct dom *d)
{
	return d->annotated && d->annot->mode != POLICY_MODE_NONE;
}

/* Forget placement and groups; the domain will be placed again. */
void
policy_dom_unplace(struct policy_state *s, struct dom *d)
{
	for (int i = 0; i < d->ngroups; i++)
		groups_clear(&d->groups[i]);
	free(d->groups);
	d->groups = NULL;
	d->ngroups = 0;
	cpuset_zero(&d->allot);
	d->state = DOM_NEW;
	d->emu_sent = false;
	d->no_adopt = true;
	s->res_gen++;
}

/* --- helpers shared by the stages ------------------------------------------------------------ */

struct llc_rules
policy_rules_of(const struct policy_state *s, const struct dom *d)
{
	struct llc_rules r = {
		.aggr_tolerance = d->annot->tune.aggr_tolerance,
		.overaggr_pct = d->annot->tune.overaggr_pct,
		.imb_pct = d->annot->tune.imb_pct,
		.smt = s->topo->smt,
		.kernel = false,
	};
	return r;
}

const struct cpuset *
policy_llc_cpus(const struct policy_state *s, int llc)
{
	return &topo_get(s->topo, TOPO_LLC, llc)->cpus;
}

/* The single LLC a pin lies in, or -1 when it spans several or none. */
int
policy_pin_llc(const struct policy_state *s, const struct cpuset *pin)
{
	int first = cpuset_first(pin), llc;

	if (first < 0)
		return -1;
	llc = topo_llc_of(s->topo, first);
	if (llc < 0 || !policy_set_sub(s, pin, &topo_get(s->topo, TOPO_LLC, llc)->cpus))
		return -1;
	return llc;
}

void
policy_pin_llcs(const struct policy_state *s, const struct cpuset *pin, char *buf, size_t len)
{
	struct cpuset llcs;
	char list[48];
	int cpu, l = policy_pin_llc(s, pin);

	if (l >= 0) {
		snprintf(buf, len, "LLC %d", l);
		return;
	}
	cpuset_zero(&llcs);
	CPUSET_FOREACH(cpu, pin)
		if ((l = topo_llc_of(s->topo, cpu)) >= 0)
			cpuset_set(&llcs, l);
	cpuset_str(&llcs, list, sizeof(list));
	snprintf(buf, len, "%s %s", cpuset_count(&llcs) == 1 ? "LLC" : "LLCs", list);
}

/* The PUs that non-isolated domains may use now. */
void
policy_shared_pool(const struct policy_state *s, const struct policy_host *h, struct cpuset *out)
{
	const struct topo *t = s->topo;

	if (!cpuset_empty(&h->shared_pool))
		cpuset_and(out, &h->shared_pool, &t->all);
	else
		*out = t->all;
	cpuset_andnot(out, out, &h->reserved);
	/* a core's PUs lie in the host's words: only those are cleared */
	for (int c = 0; c < topo_count(t, TOPO_CORE); c++)
		if (s->core_owner[c] >= 0)
			for (int i = 0; i < s->nwords; i++)
				out->w[i] &= ~topo_get(t, TOPO_CORE, c)->cpus.w[i];
}

/* Where a managed domain's vCPUs may go: isolated ones stay on their cores,
 * shared ones anywhere in the shared pool (inside the domain's bound). */
void
policy_dom_allowed(const struct policy_state *s, const struct dom *d, struct cpuset *out)
{
	*out = d->isolated ? d->allot : s->pool;
	if (!d->isolated && !d->bound_none)
		cpuset_and(out, out, &d->bound);
}

void
policy_dom_pool(const struct policy_state *s, const struct policy_host *h, const struct dom *d, struct cpuset *out)
{
	policy_shared_pool(s, h, out);
	if (!d->bound_none)
		cpuset_and(out, out, &d->bound);
}

bool
policy_dom_in_bound(const struct dom *d, const struct cpuset *pus)
{
	return d->bound_none || cpuset_subset(pus, &d->bound);
}

void
policy_action_not_applied(struct policy_state *s, const struct policy_action *act)
{
	int idx = policy_dom_find(s, act->key);

	if (idx < 0)
		return;
	struct dom *d = s->doms[idx];
	if (act->type == POLICY_ACT_PIN_VCPU && act->vcpu >= 0 && act->vcpu < d->nvcpus) {
		dom_pin_clear(d, &d->sent[act->vcpu]);
	} else if (act->type == POLICY_ACT_PIN_EMULATOR) {
		d->emu_sent = false;
		d->emu_foreign = false;
		cpuset_zero(&d->emu_want);
	}
}

/* --- introspection -------------------------------------------------------- */

/* A check's trial for llcctl; home: the keys are home.c's (LLCs * 2 +
 * narrower). */
static void
trial_info(const struct trial *t, bool home, uint64_t now_ns, struct policy_trial_info *out)
{
	const struct trial_shape *sh = t->phase == TRIAL_IDLE ? trial_shape(t) : &t->ref;

	out->state = t->phase == TRIAL_SETTLE ? POLICY_TRIAL_SETTLING :
	             t->phase == TRIAL_MEASURE ? POLICY_TRIAL_MEASURING : POLICY_TRIAL_WATCHING;
	out->periods = t->phase == TRIAL_SETTLE ? 0 : t->ring_n;
	out->window = t->win;
	out->busy = sh ? sh->busy : -1;
	out->cpus = sh ? sh->demand : 0;
	out->nmemo = 0;
	for (int i = 0; i < TRIAL_MEMO; i++) {
		const struct trial_memo *m = &t->memo[i];
		if (!m->used || now_ns >= m->until_ns)
			continue;
		struct policy_trial_memo *o = &out->memo[out->nmemo++];
		o->busy = m->shape.busy;
		o->cpus = m->shape.demand;
		o->from_llcs = home ? m->key / 2 : 0;
		o->wider = home && m->key % 2 == 0;
		o->ratio = m->ratio;
		o->fails = m->fails;
		o->age_s = now_ns >= m->at_ns ? (double)(now_ns - m->at_ns) / 1e9 : 0;
		o->retry_in_s = (double)(m->until_ns - now_ns) / 1e9;
	}
}

bool
policy_domain_isolated(const struct policy_state *s, uint64_t key)
{
	int idx = policy_dom_find(s, key);

	return idx >= 0 && s->doms[idx]->state == DOM_PLACED && s->doms[idx]->isolated;
}

bool
policy_any_isolated(const struct policy_state *s)
{
	for (int i = 0; i < s->ndoms; i++)
		if (s->doms[i]->state == DOM_PLACED && s->doms[i]->isolated)
			return true;
	return false;
}

int
policy_domain_info(const struct policy_state *s, uint64_t key, struct policy_domain_info *info)
{
	int idx = policy_dom_find(s, key);
	const struct dom *d;

	if (idx < 0)
		return -1;
	d = s->doms[idx];
	memset(info, 0, sizeof(*info));
	info->key = d->key;
	snprintf(info->name, sizeof(info->name), "%s", d->name);
	info->mode = d->annot->mode;
	info->managed = d->state == DOM_PLACED;
	info->refused = d->state == DOM_REFUSED;
	if (info->refused)
		snprintf(info->reason, sizeof(info->reason), "%s", d->refuse_reason);
	info->allotment = d->allot;
	info->pref_switches = d->pref_switches;
	info->vcpu_moves = d->moves;
	info->home_widened = d->hc.widened;
	snprintf(info->home_why, sizeof(info->home_why), "%s", d->hc.why);
	trial_info(&d->hc.tr, true, s->now_ns, &info->home_trial);
	info->ngroups = d->ngroups;
	for (int i = 0; i < d->ngroups; i++) {
		const struct grp *g = &d->groups[i];
		struct policy_group_info *gi = &info->groups[i];
		snprintf(gi->name, sizeof(gi->name), "%s", g->name);
		gi->rule = g->rule;
		gi->vcpus = g->vcpus;
		gi->pref_llc = g->pref_llc;
		gi->pref_occ = g->pref_occ;
		gi->best_llc = g->best_llc;
		gi->best_occ = g->best_occ;
		gi->guarded = g->guarded;
		gi->backed_off = g->bstate == BENEFIT_HOLD;
		gi->unjudged = g->unjudged;
		if (g->rule == POLICY_GROUP_WAKEUPS && d->wk != NULL)
			gi->wakeups_hz = wakeups_set_rate_hz(d->wk, &g->vcpus, &gi->wakeup_pairs);
		snprintf(gi->why, sizeof(gi->why), "%s", g->why);
		trial_info(&g->tr, false, s->now_ns, &gi->trial);
	}
	return 0;
}

int
policy_domain_wakeups(const struct policy_state *s, uint64_t key, struct policy_wakeups_info *info,
                      struct wakeups_pair_info *pairs, int max)
{
	int idx = policy_dom_find(s, key);
	const struct dom *d;

	if (idx < 0 || s->doms[idx]->wk == NULL)
		return -1;
	d = s->doms[idx];
	memset(info, 0, sizeof(*info));
	info->inferring = d->annot->mode == POLICY_MODE_AGGREGATE &&
	    d->annot->infer == POLICY_INFER_WAKEUPS;
	info->background_hz = wakeups_background_hz(d->wk);
	info->total_hz = wakeups_total_hz(d->wk);
	info->dropped = wakeups_dropped(d->wk);
	return pairs != NULL && max > 0 ? wakeups_pairs(d->wk, pairs, max) : 0;
}

int
policy_domain_slots(const struct policy_state *s, uint64_t key, int *slots,
                    struct cpuset *home, int n)
{
	int idx = policy_dom_find(s, key);
	const struct dom *d;

	if (idx < 0 || s->doms[idx]->state != DOM_PLACED)
		return -1;
	d = s->doms[idx];
	for (int v = 0; v < n && v < d->nvcpus; v++) {
		if (slots)
			slots[v] = d->slot[v];
		if (home)
			home[v] = *d->home[v];
	}
	return d->nvcpus;
}

void
policy_stats(const struct policy_state *s, struct policy_stats *st)
{
	*st = s->stats;
	st->nomem += cpuset_pool_nomem(s->sets);
}

const struct topo *
policy_state_topo(const struct policy_state *s)
{
	return s->topo;
}
