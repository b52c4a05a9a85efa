// SPDX-License-Identifier: GPL-2.0-or-later
/* policy_harness.h - a tiny deterministic world for driving policy_step()
 * in unit tests: it applies the plan's pins, and each vCPU with a demand
 * runs on a PU of its pin, chosen like a Linux balancer would: busy
 * threads spread over the least busy LLCs of their pin and over free PUs.
 * Include after <cmocka.h>. */
#ifndef LLCD_POLICY_HARNESS_H
#define LLCD_POLICY_HARNESS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset_pool.h"
#include "policy.h"
#include "topo_hwloc.h"

#define H_MAXDOM 256

struct h_dom {
	struct policy_domain_in in;
	struct policy_vcpu_sample *s;
	struct cpuset *pin;             /* the samples' pins point here (s[v].pinned) */
	const struct cpuset **ipin;     /* h_pool(): ... or at these sets of h->pool, made from pin[] each step */
	int nipin;
	/* h_pool() (h->marks): the samples of the last step, byte for byte
	 * (nprev of them, at step prev_step: 0 none), as llcd's live
	 * back-end compares them where it writes them, and mark them
	 * (policy_domain_in.vcpus_gen) when one changed */
	struct policy_vcpu_sample *prev;
	int nprev;
	uint64_t prev_step;
	/* ... and their annotation and reports, marked the same way
	 * (annot_gen, reports_gen) when a byte of them changed */
	struct policy_annotation *prev_annot;
	bool prev_annotated;
	struct policy_hot_report prev_rep[4];
	int prev_nrep;
	double *demand;                 /* 0..1 per vCPU */
	struct policy_hot_report rep[4];
	bool running;
};

struct harness {
	struct topo *topo;
	struct policy_state *st;
	struct policy_plan *plan;
	struct policy_host host;
	struct h_dom dom[H_MAXDOM];
	int ndom;
	uint64_t now, period;
	uint64_t *busy;
	struct policy_domain_in in[H_MAXDOM];
	int order[H_MAXDOM];            /* input order permutation (identity by default) */
	int map[H_MAXDOM];              /* input index -> dom index for the last step */
	/* optional: instructions per ns of runtime for a vCPU (counters) */
	double (*rate)(const struct harness *h, int dom, int v);
	/* optional: a domain's memory bytes this period (bandwidth monitoring) */
	double (*mbm)(const struct harness *h, int dom);
	double mbm_flat;                /* what h_mbm_flat gives every domain */
	/* the plan is applied in its order (held actions not at all); after
	 * each pin, the cores it took that a vCPU of a conflicting domain
	 * (one of the two isolated) is pinned to are counted here, the first
	 * described (h_step_order()) */
	int between;
	char between_what[256];
	/* optional (h_shadow()): a second engine stepped on the same input
	 * with incremental steps off; every step's plan and every domain's
	 * introspection must equal the first's */
	struct policy_state *shadow;
	struct policy_plan *shadow_plan;
	/* optional (h_pool()): the samples' pins are sets of this pool, which
	 * h->st interns its own pins in (policy_state_share_sets), as llcd's
	 * live back-end does; the shadow keeps its own pool */
	struct cpuset_pool *pool;
	/* the marks (h_pool() turns them on, as llcd's live back-end gives
	 * them): the last one given, and the steps made */
	bool marks;
	uint64_t mark, nsteps;
};

/* An mbm for a host where every domain moves h->mbm_flat bytes a period
 * (0 unless set). */
static inline double
h_mbm_flat(const struct harness *h, int dom)
{
	(void)dom;
	return h->mbm_flat;
}

/* A domain's memory bytes in a period, as resctrl would count them: 20 GB/s
 * per busy vCPU (demand 0.5 or more) times its rate(h, dom, v). */
static inline double
h_busy_mbm(const struct harness *h, int dom, double (*rate)(const struct harness *h, int dom, int v))
{
	const struct h_dom *d = &h->dom[dom];
	double b = 0;

	for (int v = 0; v < d->in.nvcpus; v++)
		if (d->demand[v] >= 0.5)
			b += 20e9 * rate(h, dom, v) * (double)h->period / 1e9;
	return b;
}

/* Step a shadow engine beside h's, incremental steps off (see above). */
static inline void
h_shadow(struct harness *h)
{
	h->shadow = policy_state_new();
	h->shadow_plan = policy_plan_new();
	policy_state_set_incremental(h->shadow, false);
}

/* The samples' pins from the pool h->st interns its pins in (see above):
 * before the first step. */
static inline void
h_pool(struct harness *h)
{
	if (h->pool != NULL)
		return;
	h->pool = cpuset_pool_new();
	if (h->pool == NULL || policy_state_share_sets(h->st, h->pool) < 0)
		abort();
	cpuset_pool_defer(h->pool);     /* the live back-end's: dropped sets stay until its next observe */
	h->marks = true;                /* and it marks the samples */
}

/* h->marks: a new mark for d's samples when any byte of them changed
 * since the last step, or it was not in that step (a producer's compare
 * of what it writes, as agent/live/observe.c sample_domain() makes). */
static inline void
h_mark(struct harness *h, struct h_dom *d)
{
	size_t n = (size_t)d->in.nvcpus;

	if (!h->marks)
		return;
	if (d->prev_step == 0 || d->prev_step + 1 != h->nsteps || d->nprev != d->in.nvcpus ||
	    memcmp(d->prev, d->s, n * sizeof(*d->s)) != 0) {
		if (d->nprev < d->in.nvcpus) {
			struct policy_vcpu_sample *p = realloc(d->prev, (n ? n : 1) * sizeof(*p));
			if (p == NULL)
				abort();
			d->prev = p;
		}
		memcpy(d->prev, d->s, n * sizeof(*d->s));
		d->nprev = d->in.nvcpus;
		d->in.vcpus_gen = ++h->mark;
	}
	bool again = d->prev_step != 0 && d->prev_step + 1 == h->nsteps;
	if (d->prev_annot == NULL && (d->prev_annot = malloc(sizeof(*d->prev_annot))) == NULL)
		abort();
	if (!again || d->in.annot_gen == 0 || d->prev_annotated != d->in.annotated ||
	    memcmp(d->prev_annot, &d->in.annot, sizeof(d->in.annot)) != 0) {
		*d->prev_annot = d->in.annot;
		d->prev_annotated = d->in.annotated;
		d->in.annot_gen = ++h->mark;
	}
	size_t nr = (size_t)d->in.nreports;
	if (nr > 4)
		abort();        /* (the harness's reports are its rep[4]) */
	if (!again || d->in.reports_gen == 0 || d->prev_nrep != d->in.nreports ||
	    (nr > 0 && memcmp(d->prev_rep, d->in.reports, nr * sizeof(*d->prev_rep)) != 0)) {
		if (nr > 0)
			memcpy(d->prev_rep, d->in.reports, nr * sizeof(*d->prev_rep));
		d->prev_nrep = d->in.nreports;
		d->in.reports_gen = ++h->mark;
	}
	d->prev_step = h->nsteps;
}

static inline struct harness *
h_new(const char *topology)
{
	struct llcd_err err;
	struct harness *h = calloc(1, sizeof(*h));

	h->topo = topo_load(topology, &err);
	if (h->topo == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	h->st = policy_state_new();
	h->plan = policy_plan_new();
	policy_host_defaults(&h->host, h->topo);
	h->period = 1000000000ull;
	h->busy = calloc((size_t)h->topo->max_cpu + 1, sizeof(uint64_t));
	for (int i = 0; i < H_MAXDOM; i++)
		h->order[i] = i;
	if (getenv("LLCD_TEST_SHADOW")) {
		h_shadow(h);
		h_pool(h);
	}
	return h;
}

/* llcd restarted: the engines start with no state. */
static inline void
h_restart(struct harness *h)
{
	policy_state_free(h->st);
	h->st = policy_state_new();
	if (h->pool != NULL && policy_state_share_sets(h->st, h->pool) < 0)
		abort();
	if (h->shadow) {
		policy_state_free(h->shadow);
		h->shadow = policy_state_new();
		policy_state_set_incremental(h->shadow, false);
	}
}

static inline void
h_free(struct harness *h)
{
	policy_plan_free(h->shadow_plan);
	policy_state_free(h->shadow);
	policy_plan_free(h->plan);
	policy_state_free(h->st);
	topo_free(h->topo);
	free(h->busy);
	while (h->ndom > 0) {
		struct h_dom *d = &h->dom[--h->ndom];
		for (int v = 0; v < d->nipin; v++)
			cpuset_pool_drop(h->pool, &d->ipin[v]);
		free(d->ipin);
		free(d->prev);
		free(d->prev_annot);
		free(d->s);
		free(d->pin);
		free(d->demand);
	}
	if (h->pool != NULL) {
		/* the engine and the samples let go of all they held */
		cpuset_pool_collect(h->pool);
		if (cpuset_pool_count(h->pool) != 0) {
			fprintf(stderr, "h_free: %zu sets of the shared pool still held\n", cpuset_pool_count(h->pool));
			abort();
		}
	}
	cpuset_pool_free(h->pool);
	free(h);
}

/* Add a running domain; annot may be NULL (unannotated). Returns its index. */
static inline int
h_add(struct harness *h, const char *name, int nvcpus, int dies, int cores, int threads,
      const struct policy_annotation *annot)
{
	struct h_dom *d = &h->dom[h->ndom];

	memset(d, 0, sizeof(*d));
	d->s = calloc((size_t)nvcpus, sizeof(*d->s));
	d->pin = calloc((size_t)nvcpus, sizeof(*d->pin));
	d->demand = calloc((size_t)nvcpus, sizeof(double));
	d->in.key = (uint64_t)(h->ndom + 1) * 7919u;
	snprintf(d->in.name, sizeof(d->in.name), "%s", name);
	d->in.nvcpus = nvcpus;
	d->in.guest = (struct policy_guest_topo){ 1, dies, 1, cores, threads };
	d->in.annotated = annot != NULL;
	if (annot)
		d->in.annot = *annot;
	d->in.vcpus = d->s;
	d->running = true;
	/* libvirt default: every vCPU may run anywhere */
	for (int v = 0; v < nvcpus; v++) {
		d->pin[v] = h->topo->all;
		d->s[v].pinned = &d->pin[v];
		d->s[v].last_cpu = -1;
	}
	return h->ndom++;
}

static inline struct policy_annotation
h_annot(enum policy_mode mode, enum policy_isolation iso)
{
	struct policy_annotation a;

	policy_annotation_defaults(&a);
	a.mode = mode;
	a.isolation = iso;
	return a;
}

/* h_add with h_annot's annotation of mode and isolation (no groups). */
static inline int
h_add_mode(struct harness *h, const char *name, int nvcpus, int dies, int cores, int threads,
           enum policy_mode mode, enum policy_isolation iso)
{
	struct policy_annotation a = h_annot(mode, iso);

	return h_add(h, name, nvcpus, dies, cores, threads, &a);
}

/* One random churn event for the engine tests: two times in three a
 * domain of a random mode (isolated when rnd() % iso_mod == iso_hit),
 * 1-10 vCPUs and random demands starts (unannotated one time in five),
 * else a random domain stops. rnd is the test's own generator, so that
 * each test keeps its sequence. */
static inline void
h_churn_one(struct harness *h, uint64_t (*rnd)(uint64_t *), uint64_t *r, uint64_t iso_mod, uint64_t iso_hit)
{
	if (h->ndom < H_MAXDOM && rnd(r) % 3 != 0) {
		static const enum policy_mode modes[] = {
			POLICY_MODE_STATIC, POLICY_MODE_AGGREGATE, POLICY_MODE_SPREAD, POLICY_MODE_NONE };
		struct policy_annotation a = h_annot(modes[rnd(r) % 4],
		    rnd(r) % iso_mod == iso_hit ? POLICY_ISO_CORE : POLICY_ISO_NONE);
		int nv = 1 + (int)(rnd(r) % 10);
		char name[16];
		snprintf(name, sizeof(name), "d%d", h->ndom);
		int d = h_add(h, name, nv, 1, nv, 1, rnd(r) % 5 == 0 ? NULL : &a);
		for (int v = 0; v < nv; v++)
			h->dom[d].demand[v] = (rnd(r) % 4) / 3.0;
	} else if (h->ndom > 0) {
		h->dom[rnd(r) % (uint64_t)h->ndom].running = false;
	}
}

/* h_annot() with topology="match": guest die i on host LLC i. */
static inline struct policy_annotation
h_match(enum policy_mode mode, enum policy_isolation iso)
{
	struct policy_annotation a = h_annot(mode, iso);

	a.topology = POLICY_TOPO_MATCH;
	return a;
}

/* vCPUs from..to-1 of domain d busy (demand 1.0). */
static inline void
h_busy_range(struct harness *h, int d, int from, int to)
{
	for (int v = from; v < to; v++)
		h->dom[d].demand[v] = 1.0;
}

/* Give the annotation one group, named name, of the n vCPUs listed (none
 * yet when n is 0). */
static inline void
h_one_group(struct policy_annotation *a, const char *name, const int *vcpus, int n)
{
	a->ngroups = 1;
	snprintf(a->groups[0].name, sizeof(a->groups[0].name), "%s", name);
	for (int i = 0; i < n; i++)
		cpuset_set(&a->groups[0].vcpus, vcpus[i]);
}

/* The n vCPUs listed of domain d busy (demand 1.0). */
static inline void
h_busy(struct harness *h, int d, const int *vcpus, int n)
{
	for (int i = 0; i < n; i++)
		h->dom[d].demand[vcpus[i]] = 1.0;
}

/* The engine's view of domain d (policy_domain_info()), which it must
 * have. */
static inline struct policy_domain_info
h_info(const struct harness *h, int d)
{
	struct policy_domain_info info;

	assert_int_equal(policy_domain_info(h->st, h->dom[d].in.key, &info), 0);
	return info;
}

/* The whole cores of the PUs in in. */
static inline void
h_cores(const struct topo *t, const struct cpuset *in, struct cpuset *out)
{
	int cpu;

	cpuset_zero(out);
	CPUSET_FOREACH(cpu, in)
		if (!cpuset_isset(out, cpu) && topo_core_of(t, cpu) >= 0)
			cpuset_or(out, out, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
}

/* vCPU v of domain i was pinned from old to its present pin: count a core
 * it took (not in old's cores) that a vCPU of another domain is pinned to,
 * when either domain is isolated (placed by the engine on cores of its
 * own): the moment between two actions that would break isolation. */
static inline void
h_between(struct harness *h, int i, int v, const struct cpuset *old)
{
	struct cpuset took, was;
	bool iso = policy_domain_isolated(h->st, h->dom[i].in.key);

	h_cores(h->topo, &h->dom[i].pin[v], &took);     /* pin[]: h_pool()'s samples follow after the plan */
	h_cores(h->topo, old, &was);
	cpuset_andnot(&took, &took, &was);
	for (int j = 0; j < h->ndom && !cpuset_empty(&took); j++) {
		struct h_dom *o = &h->dom[j];
		if (j == i || !o->running || (!iso && !policy_domain_isolated(h->st, o->in.key)))
			continue;
		for (int u = 0; u < o->in.nvcpus; u++)
			if (cpuset_intersects(&o->pin[u], &took)) {
				if (h->between++ == 0)
					snprintf(h->between_what, sizeof(h->between_what), "domain '%s' vCPU %d pinned onto a "
					    "core domain '%s' vCPU %d is pinned to (%s)", h->dom[i].in.name, v, o->in.name, u,
					    iso ? "it is isolated" : "that one is isolated");
				return;
			}
	}
}

static inline void
h_same_trial(const struct policy_trial_info *a, const struct policy_trial_info *b, const char *what)
{
	if (a->state != b->state || a->periods != b->periods || a->window != b->window || a->busy != b->busy ||
	    a->cpus != b->cpus || a->nmemo != b->nmemo)
		fail_msg("incremental step differs: %s's trial", what);
}

/* The shadow engine (incremental off) planned and shows what h's did. */
static inline void
h_same_step(const struct harness *h, const struct policy_input *in)
{
	const struct policy_plan *p = h->plan, *q = h->shadow_plan;

	assert_int_equal(p->n, q->n);
	for (int i = 0; i < p->n; i++) {
		const struct policy_action *a = &p->actions[i], *b = &q->actions[i];
		int na, nb;
		const int *da = policy_plan_deps(p, i, &na), *db = policy_plan_deps(q, i, &nb);
		if (a->type != b->type || a->key != b->key || a->domain != b->domain || a->vcpu != b->vcpu ||
		    a->llc != b->llc || !cpuset_equal(&a->cpus, &b->cpus) || strcmp(a->reason, b->reason) != 0 ||
		    a->stage != b->stage || a->held != b->held || !cpuset_equal(&a->undo, &b->undo) || na != nb ||
		    (na > 0 && memcmp(da, db, sizeof(int) * (size_t)na) != 0))
			fail_msg("incremental step differs at action %d: '%s' vs '%s'", i, a->reason, b->reason);
	}
	for (int i = 0; i < in->ndomains; i++) {
		struct policy_domain_info x, y;
		int rx = policy_domain_info(h->st, in->domains[i].key, &x);
		assert_int_equal(rx, policy_domain_info(h->shadow, in->domains[i].key, &y));
		if (rx < 0)
			continue;
		const char *n = x.name;
		if (strcmp(x.name, y.name) != 0 || x.mode != y.mode || x.managed != y.managed ||
		    x.refused != y.refused || strcmp(x.reason, y.reason) != 0 ||
		    !cpuset_equal(&x.allotment, &y.allotment) || x.ngroups != y.ngroups ||
		    x.pref_switches != y.pref_switches || x.vcpu_moves != y.vcpu_moves ||
		    x.home_widened != y.home_widened || strcmp(x.home_why, y.home_why) != 0)
			fail_msg("incremental step differs: domain '%s' ('%s' vs '%s')", n, x.home_why, y.home_why);
		h_same_trial(&x.home_trial, &y.home_trial, n);
		for (int g = 0; g < x.ngroups; g++) {
			const struct policy_group_info *a = &x.groups[g], *b = &y.groups[g];
			if (strcmp(a->name, b->name) != 0 || a->rule != b->rule || !cpuset_equal(&a->vcpus, &b->vcpus) ||
			    a->pref_llc != b->pref_llc || a->pref_occ != b->pref_occ || a->best_occ != b->best_occ ||
			    a->best_llc != b->best_llc || a->guarded != b->guarded || a->backed_off != b->backed_off ||
			    a->unjudged != b->unjudged || a->wakeups_hz != b->wakeups_hz ||
			    a->wakeup_pairs != b->wakeup_pairs || strcmp(a->why, b->why) != 0)
				fail_msg("incremental step differs: domain '%s' group '%s' ('%s' vs '%s')", n, a->name,
				    a->why, b->why);
			h_same_trial(&a->trial, &b->trial, a->name);
		}
	}
}

/* Run the world for one period with the current pins, then a policy step,
 * then apply the plan. Returns policy_step's result. */
/* h_pool(): the samples' pins become the pool's sets of pin[] (applied,
 * or set by the test). */
static inline void
h_sync_pins(struct harness *h)
{
	for (int i = 0; h->pool != NULL && i < h->ndom; i++) {
		struct h_dom *d = &h->dom[i];
		if (d->nipin < d->in.nvcpus) {
			const struct cpuset **p = realloc(d->ipin, (size_t)d->in.nvcpus * sizeof(*p));
			if (p == NULL)
				abort();
			for (int v = d->nipin; v < d->in.nvcpus; v++)
				p[v] = &cpuset_none;
			d->ipin = p;
			d->nipin = d->in.nvcpus;
		}
		for (int v = 0; v < d->in.nvcpus; v++) {
			if (cpuset_pool_set(h->pool, &d->ipin[v], &d->pin[v]) < 0)
				abort();
			d->s[v].pinned = d->ipin[v];
		}
	}
}

static inline int
h_step(struct harness *h)
{
	struct llcd_err err;
	int n = 0, cpu;
	uint8_t *taken = calloc((size_t)h->topo->max_cpu + 1, 1);
	int *llc_busy = calloc((size_t)topo_count(h->topo, TOPO_LLC), sizeof(int));

	memset(h->busy, 0, sizeof(uint64_t) * ((size_t)h->topo->max_cpu + 1));
	if (h->pool != NULL) {
		/* the back-end's observe: last period's samples are read no more */
		cpuset_pool_collect(h->pool);
		if (cpuset_pool_count(h->pool) > 4096)
			abort();        /* refs leak: the pool only grows */
	}
	h_sync_pins(h);
	for (int i = 0; i < h->ndom; i++) {
		struct h_dom *d = &h->dom[i];
		if (!d->running)
			continue;
		for (int v = 0; v < d->in.nvcpus; v++) {
			struct policy_vcpu_sample *sm = &d->s[v];
			sm->runtime_ns = (uint64_t)(d->demand[v] * (double)h->period);
			if (d->demand[v] <= 0) {
				sm->instructions = 0;
				continue;
			}
			int pick = -1;
			/* a Linux-like balancer inside the pin: stay on the last PU
			 * unless its LLC has two busy threads more than the least
			 * busy LLC of the pin; else take a free PU of that LLC */
			int best_llc = -1;
			CPUSET_FOREACH(cpu, sm->pinned) {
				int l = topo_llc_of(h->topo, cpu);
				if (l >= 0 && !cpuset_isset(&h->host.reserved, cpu) &&
				    (best_llc < 0 || llc_busy[l] < llc_busy[best_llc]))
					best_llc = l;
			}
			if (sm->last_cpu >= 0 && cpuset_isset(sm->pinned, sm->last_cpu) && !taken[sm->last_cpu] &&
			    (best_llc < 0 || llc_busy[topo_llc_of(h->topo, sm->last_cpu)] < llc_busy[best_llc] + 2))
				pick = sm->last_cpu;
			CPUSET_FOREACH(cpu, sm->pinned)
				if (pick < 0 && !taken[cpu] && !cpuset_isset(&h->host.reserved, cpu) &&
				    topo_llc_of(h->topo, cpu) == best_llc)
					pick = cpu;
			CPUSET_FOREACH(cpu, sm->pinned)
				if (pick < 0 && !taken[cpu] && !cpuset_isset(&h->host.reserved, cpu))
					pick = cpu;
			if (pick < 0)
				pick = cpuset_first(sm->pinned);
			if (d->demand[v] >= 0.5)
				llc_busy[topo_llc_of(h->topo, pick)]++;
			if (d->demand[v] >= 0.5)
				taken[pick] = 1;
			sm->last_cpu = pick;
			h->busy[pick] += sm->runtime_ns;
		}
		for (int v = 0; v < d->in.nvcpus; v++)
			d->s[v].instructions = (uint64_t)((double)d->s[v].runtime_ns * (h->rate ? h->rate(h, i, v) : 1.0));
		d->in.mbm_valid = h->mbm != NULL;
		d->in.mbm_bytes = h->mbm ? (uint64_t)h->mbm(h, i) : 0;
	}
	/* the input lists domains in h->order, which must not matter */
	h->nsteps++;
	for (int oi = 0; oi < h->ndom; oi++) {
		int i = h->order[oi];
		if (i >= h->ndom || !h->dom[i].running)
			continue;
		h_mark(h, &h->dom[i]);
		h->in[n] = h->dom[i].in;
		h->map[n] = i;
		n++;
	}
	free(taken);
	free(llc_busy);
	struct policy_input in = {
		.host = h->host, .ndomains = n, .domains = h->in,
		.cpu_busy_ns = h->busy, .now_ns = h->now, .period_ns = h->period,
	};
	h->now += h->period;
	int rc = policy_step(h->st, &in, h->plan, &err);
	if (rc < 0) {
		fprintf(stderr, "policy_step: %s\n", err.msg);
		return rc;
	}
	if (h->shadow) {
		assert_int_equal(policy_step(h->shadow, &in, h->shadow_plan, &err), 0);
		h_same_step(h, &in);
	}
	/* the caller's part (agent/daemon/loop.c): in the plan's order, never what
	 * the engine held back (prerequisites always apply here) */
	for (int a = 0; a < h->plan->n; a++) {
		const struct policy_action *act = &h->plan->actions[a];
		struct h_dom *d = &h->dom[h->map[act->domain]];
		struct cpuset old;
		if (act->held)
			continue;
		if (act->type == POLICY_ACT_PIN_VCPU) {
			old = d->pin[act->vcpu];
			d->pin[act->vcpu] = act->cpus;
			h_between(h, h->map[act->domain], act->vcpu, &old);
		} else if (act->type == POLICY_ACT_RELEASE) {
			for (int v = 0; v < d->in.nvcpus; v++) {
				old = d->pin[v];
				d->pin[v] = act->cpus;
				h_between(h, h->map[act->domain], v, &old);
			}
		}
	}
	h_sync_pins(h);
	return 0;
}

static inline int
h_count(const struct harness *h, enum policy_action_type type)
{
	int n = 0;

	for (int a = 0; a < h->plan->n; a++)
		if (h->plan->actions[a].type == type)
			n++;
	return n;
}

/* The LLC a vCPU's pin lies in, -1 when it spans several. */
static inline int
h_llc(const struct harness *h, int dom, int v)
{
	const struct cpuset *p = h->dom[dom].s[v].pinned;
	int first = cpuset_first(p), cpu, l = topo_llc_of(h->topo, first);

	CPUSET_FOREACH(cpu, p)
		if (topo_llc_of(h->topo, cpu) != l)
			return -1;
	return l;
}

#endif
