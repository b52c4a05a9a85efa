// SPDX-License-Identifier: GPL-2.0-or-later
/* step.c - policy_step(): one period of the engine (see policy.h and
 * docs/design.md). A step runs in four stages, always over domains in key
 * order so that the order of the input never changes the plan:
 *   1. reconcile: match input domains to the state, forget stopped ones,
 *      reset those whose annotation changed shape;
 *   2. account: decay per-CPU runtime, measure per-LLC utilisation, rebuild
 *      core ownership (isolated domains) and shared-pool load;
 *   3. place (placement.c): adopt current pins of new domains where they
 *      are valid, place the rest, re-place shared domains off cores that
 *      isolated domains now own;
 *   4. steer (groups.c, steer.c, benefit.c): confine unmanaged domains to
 *      the shared pool while isolated domains exist; form the groups of
 *      aggregate domains, steer each, spread spread domains; then emit one
 *      PIN per vCPU whose wanted pin differs from what was observed;
 *   5. order (order.c): the plan sorted into stages, each action after
 *      its prerequisites, so that applying it in order keeps isolation.
 */
#include "policy_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- input --------------------------------------------------------------- */

static int
validate(const struct policy_input *in, struct llcd_err *err)
{
	if (in->host.topo == NULL)
		return llcd_err_set(err, "policy: no topology");
	if (in->period_ns == 0)
		return llcd_err_set(err, "policy: sampling period must be > 0");
	if (in->host.overcommit <= 0 || in->host.overcommit_isolated <= 0)
		return llcd_err_set(err, "policy: overcommit ratios must be > 0");
	if (!cpuset_empty(&in->host.shared_pool)) {
		struct cpuset x;
		cpuset_and(&x, &in->host.shared_pool, &in->host.topo->all);
		cpuset_andnot(&x, &x, &in->host.reserved);
		if (cpuset_empty(&x))
			return llcd_err_set(err, "policy: the shared pool has no CPU of this host outside the reserved CPUs");
	}
	if (in->ndomains < 0 || (in->ndomains > 0 && in->domains == NULL))
		return llcd_err_set(err, "policy: bad domain list");
	for (int i = 0; i < in->ndomains; i++) {
		const struct policy_domain_in *d = &in->domains[i];
		if (d->nvcpus < 1 || d->nvcpus > MAX_VCPUS)
			return llcd_err_set(err, "policy: domain '%s' has %d vCPUs (allowed 1-%d)",
			    d->name, d->nvcpus, MAX_VCPUS);
		if (d->vcpus == NULL)
			return llcd_err_set(err, "policy: domain '%s' has no vCPU samples", d->name);
		if (d->nreports < 0 || (d->nreports > 0 && d->reports == NULL))
			return llcd_err_set(err, "policy: domain '%s' has a bad report list", d->name);
		if (wakeups_check(d->wakeups, d->nvcpus, err) < 0)
			return llcd_err_prefix(err, "policy: domain '%s'", d->name);
	}
	return 0;
}

/* Key order; equal keys by index (only duplicates_check() meets them). */
static int
cmp_in_key(const void *a, const void *b, void *arg)
{
	const struct policy_domain_in *in = arg;
	int i = *(const int *)a, j = *(const int *)b;
	uint64_t x = in[i].key, y = in[j].key;

	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Two input domains with one key: the pair named is the first i (and
 * then j < i) with in[j].key == in[i].key, found on the input sorted by
 * (key, index) instead of comparing every pair. */
static int
duplicates_check(const struct policy_input *in, const int *order, struct llcd_err *err)
{
	int bi = -1, bj = -1;

	for (int k = 1; k < in->ndomains; k++) {
		/* the second of a run of equal keys: its first is the j */
		if (in->domains[order[k]].key != in->domains[order[k - 1]].key ||
		    (k > 1 && in->domains[order[k - 2]].key == in->domains[order[k]].key))
			continue;
		if (bi < 0 || order[k] < bi) {
			bi = order[k];
			bj = order[k - 1];
		}
	}
	if (bi < 0)
		return 0;
	return llcd_err_set(err, "policy: domains '%s' and '%s' share key %llu",
	    in->domains[bj].name, in->domains[bi].name, (unsigned long long)in->domains[bi].key);
}

/* The last step's key order, when it is this input's: the same number of
 * domains, and its indices in turn name strictly rising keys (a
 * permutation then, sorted, and with no key twice: what qsort_r() and
 * duplicates_check() would find). */
static bool
order_again(const struct policy_state *s, const struct policy_input *in, int *order)
{
	const int *prev = s->order_prev;
	int n = in->ndomains;

	if (!s->incremental || prev == NULL || s->order_n != n)
		return false;
	for (int k = 0; k < n; k++) {
		if (prev[k] < 0 || prev[k] >= n ||
		    (k > 0 && in->domains[prev[k]].key <= in->domains[prev[k - 1]].key))
			return false;
		order[k] = prev[k];
	}
	return true;
}

static void
order_keep(struct policy_state *s, const int *order, int n)
{
	s->order_n = -1;
	if (!s->incremental)
		return;
	if (s->order_cap < n) {
		int *p = realloc(s->order_prev, sizeof(int) * (size_t)n);
		if (p == NULL) {
			s->stats.nomem++;
			return;
		}
		s->order_prev = p;
		s->order_cap = n;
	}
	if (n > 0)
		memcpy(s->order_prev, order, sizeof(int) * (size_t)n);
	s->order_n = n;
}

/* --- stage 1: reconcile ---------------------------------------------------- */

/* A domain a loop over them reaches soon: the lines of its state a step
 * reads of every domain, idle or not (the first lines of its 4 KB struct
 * dom and of its home check, its input slot, its samples and their copy,
 * its first group), are fetched ahead. On a large host most are no
 * longer in the cache when a domain's turn comes, and an idle domain's
 * step is little more than those first reads (issue 25 item 4: 2,000
 * domains). Stage 1 (a few domains ahead): the structs; stage 2
 * (nearer): what they point at.
 * From PREFETCH_DOMS domains on: there the state (~4 KB of struct dom
 * each, its groups' and samples' besides) outgrows a core's L2 cache, so
 * that a period's other work evicts it. Below, it stays cached and the
 * prefetches would only add instructions (200 domains: 505,685 rather
 * than 490,563 a step, bench/policy-step-instr, for 4 % less time). */
#define PREFETCH_DOMS 512

/* (inlined where they are called: a function with nothing but
 * prefetches has no effect gcc keeps, and its calls would be dropped) */
static inline __attribute__((always_inline)) void
pf(const void *p)
{
	__builtin_prefetch(p, 0, 3);
}

static inline __attribute__((always_inline)) void
dom_prefetch1(const struct dom *d, const struct policy_domain_in *di)
{
	const char *b = (const char *)d;

	/* struct dom's first fields, up to its name, and its home check's,
	 * up to the trial's ring (policy_int.h) */
	for (size_t o = 0; o < offsetof(struct dom, name); o += 64)
		pf(b + o);
	for (size_t o = offsetof(struct dom, hc); o < offsetof(struct dom, hc.tr.ring_shape); o += 64)
		pf(b + o);
	pf(di);
	pf((const char *)di + offsetof(struct policy_domain_in, mem_node));
}

static inline __attribute__((always_inline)) void
dom_prefetch2(const struct dom *d, const struct policy_domain_in *di)
{
	if (d->obs_copy)
		pf(d->obs);
	pf(di->vcpus);
	pf(d->annot);
	if (d->ngroups > 0)
		pf((const char *)d->groups + offsetof(struct grp, quiet_ok));
}

/* reconcile()'s reads of a domain: its input slot's identity and
 * annotation, the state's copies of them (the same domain in key order
 * as last step, most steps). */
static inline __attribute__((always_inline)) void
reconcile_prefetch(const struct policy_state *s, const struct policy_domain_in *di, int hint, bool deep)
{
	const char *b = (const char *)di;

	if (!deep) {
		pf(b);
		pf(b + offsetof(struct policy_domain_in, annot));
		pf(b + offsetof(struct policy_domain_in, annot) + 64);
		if (hint < s->ndoms) {
			const char *c = (const char *)s->doms[hint];
			pf(c);
			pf(c + offsetof(struct dom, state));
		}
	} else if (hint < s->ndoms) {
		pf(s->doms[hint]->annot);
		pf((const char *)s->doms[hint]->annot + 64);
	}
}

/* The state's domain for input di, created or reset as needed; NULL when
 * out of memory. */
static struct dom *
reconcile_one(struct policy_state *s, const struct policy_domain_in *di, int hint)
{
	/* the same domains as last step: the oi-th in key order is doms[oi] */
	int idx = hint < s->ndoms && s->doms[hint]->key == di->key ? hint : policy_dom_find(s, di->key);
	struct dom *d = idx >= 0 ? s->doms[idx] : NULL;
	int grown_from = 0;
	/* no bound, as last step: nothing to read (most domains) */
	bool same_bound = d != NULL && (di->bound == NULL ? d->bound_none : cpuset_equal(&d->bound, di->bound));
	/* the annotation the last step's: by the caller's mark (annot_gen),
	 * with no read of it, or byte for byte, its shape too, and nothing
	 * to copy (its padding compared: a change there only costs the full
	 * path) */
	bool same_annot = s->incremental && d != NULL &&
	    ((di->annot_gen != 0 && d->annot_mark == di->annot_gen && d->annotated == di->annotated) ||
	     (di->annotated && d->annotated && d->annot->ngroups == di->annot.ngroups &&
	      memcmp(d->annot, &di->annot, policy_annotation_size(di->annot.ngroups)) == 0));

	if (d && (d->nvcpus != di->nvcpus || d->annotated != di->annotated ||
	          (di->annotated && !same_annot && policy_annotation_shape_changed(d->annot, &di->annot)) ||
	          !same_bound)) {
		/* re-place: vCPU count, annotation shape or CPU bound changed */
		bool was_managed = d->state == DOM_PLACED || d->confined;
		if (d->nvcpus != di->nvcpus) {
			/* arrays are sized by nvcpus: start over; vCPUs
			 * hot-plugged into a placed domain are placed beside
			 * the others, which keep their pins (adopt_domain) */
			if (d->state == DOM_PLACED && di->nvcpus > d->nvcpus)
				grown_from = d->nvcpus;
			for (int j = idx; j < s->ndoms - 1; j++)
				s->doms[j] = s->doms[j + 1];
			s->ndoms--;
			policy_dom_free(d);
			s->res_gen++;
			d = NULL;
		} else {
			policy_dom_unplace(s, d);
			d->released_sent = !was_managed;
		}
	}
	if (d == NULL) {
		d = policy_dom_new(di);
		if (d == NULL || policy_dom_insert(s, d) < 0) {
			policy_dom_free(d);
			return NULL;
		}
		d->released_sent = true;
		d->grown_from = grown_from;
		same_bound = false;     /* (a new domain's is empty) */
		same_annot = false;
	}
	/* the name as snprintf "%s" would copy it, without its cost */
	size_t nl = strnlen(di->name, sizeof(d->name) - 1);
	memcpy(d->name, di->name, nl);
	d->name[nl] = '\0';
	d->guest = di->guest;
	if (!same_bound) {
		if (di->bound != NULL)
			d->bound = *di->bound;
		else
			cpuset_zero(&d->bound);
		d->bound_none = cpuset_empty(&d->bound);
	}
	d->annotated = di->annotated;
	if (!same_annot) {
		d->annot_mark = 0;
		if (policy_dom_set_annot(d, di->annotated ? &di->annot : NULL) < 0)
			return NULL;    /* (d stays in the state, with its old annotation) */
	}
	d->annot_mark = di->annot_gen;
	d->isolated = policy_dom_managed_mode(d) && d->annot->isolation == POLICY_ISO_CORE;
	/* the copy obs_same() compares unmarked samples with, made when
	 * first needed: a caller that marks them costs none */
	if (di->vcpus_gen == 0 && d->obs == NULL && s->incremental) {
		d->obs = malloc(sizeof(*d->obs) * (size_t)(d->nvcpus > 0 ? d->nvcpus : 1));
		if (d->obs == NULL)
			return NULL;    /* (d stays in the state, without a copy) */
	}
	return d;
}

/* Match the input's domains (order: their indices by key) to the state;
 * forget domains no longer in the input. */
static int
reconcile(struct policy_state *s, const struct policy_input *in, const int *order,
          struct llcd_err *err)
{
	for (int i = 0; i < s->ndoms; i++)
		s->doms[i]->seen = false;
	bool ahead = in->ndomains >= PREFETCH_DOMS;

	for (int oi = 0; oi < in->ndomains; oi++) {
		if (ahead && oi + 4 < in->ndomains)
			reconcile_prefetch(s, &in->domains[order[oi + 4]], oi + 4, false);
		if (ahead && oi + 2 < in->ndomains)
			reconcile_prefetch(s, &in->domains[order[oi + 2]], oi + 2, true);
		struct dom *d = reconcile_one(s, &in->domains[order[oi]], oi);
		if (d == NULL)
			return llcd_err_set(err, "policy: out of memory");
		d->in_idx = order[oi];
		d->seen = true;
	}
	for (int i = 0; i < s->ndoms; i++) {
		if (s->doms[i]->seen)
			continue;
		policy_dom_free(s->doms[i]);
		memmove(&s->doms[i], &s->doms[i + 1], sizeof(s->doms[0]) * (size_t)(s->ndoms - i - 1));
		s->ndoms--;
		s->res_gen++;
		i--;
	}
	return 0;
}

/* --- stage 2: account ------------------------------------------------------ */

/* Decay the per-CPU busy runtime by k and add this period's; busy PUs per
 * LLC (llc_util) and PUs per LLC (llc_cap). Without per-CPU busy time, the
 * vCPUs' runtime on the PU they last ran on stands in. */
static void
account(struct policy_state *s, const struct policy_input *in, double k)
{
	const struct topo *t = s->topo;
	double period = (double)in->period_ns;
	double *busy = s->cpu_busy;
	int cpu;

	memcpy(s->cpu_rt_prev, s->cpu_rt, sizeof(double) * (size_t)s->ncpu);
	s->cpu_rt_k = k;
	memset(busy, 0, sizeof(double) * (size_t)s->ncpu);
	if (in->cpu_busy_ns) {
		POLICY_FOREACH(cpu, &t->all, s->nwords)
			busy[cpu] = (double)in->cpu_busy_ns[cpu];
	} else {
		for (int i = 0; i < in->ndomains; i++) {
			const struct policy_domain_in *di = &in->domains[i];
			for (int v = 0; v < di->nvcpus; v++) {
				int c = di->vcpus[v].last_cpu;
				if (c >= 0 && c < s->ncpu)
					busy[c] += (double)di->vcpus[v].runtime_ns;
			}
		}
	}
	for (int l = 0; l < s->nllc; l++) {
		s->llc_util[l] = 0;
		s->llc_cap[l] = s->llc_w[l];
	}
	POLICY_FOREACH(cpu, &t->all, s->nwords) {
		double f = busy[cpu] / period;
		s->cpu_rt[cpu] = s->cpu_rt[cpu] * k + busy[cpu];
		if (f > 1.0)
			f = 1.0;
		if (f >= BUSY_PU)
			s->llc_util[topo_llc_of(t, cpu)] += f;
	}
}

/* Whether the last counts still hold: the same domains at the same
 * indices (core_owner holds indices), each placed, isolated, allotted and
 * slotted as then. A domain made since has own_ok false. */
static bool
own_unchanged(const struct policy_state *s)
{
	const struct own_cache *c = &s->own;

	if (!s->incremental || !c->valid || c->ndoms != s->ndoms)
		return false;
	for (int i = 0; i < s->ndoms; i++) {
		const struct dom *d = s->doms[i];
		bool placed = d->state == DOM_PLACED;
		if (c->doms[i] != d || !d->own_ok || d->own_placed != placed)
			return false;
		if (!placed)
			continue;
		if (d->own_isolated != d->isolated || (d->isolated && !policy_set_eq(s, &d->own_allot, &d->allot)) ||
		    d->own_slot_gen != d->slot_gen)
			return false;
	}
	return true;
}

/* Keep the counts just made and what they were made from; on no memory
 * the next rebuild counts again. */
static void
own_keep(struct policy_state *s)
{
	struct own_cache *c = &s->own;
	int ncore = topo_count(s->topo, TOPO_CORE);

	c->valid = false;
	if (!s->incremental)
		return;
	if (!c->core_owner || !c->llc_load || !c->pu_load) {
		if (!c->core_owner)
			c->core_owner = malloc(sizeof(int) * (size_t)ncore);
		if (!c->llc_load)
			c->llc_load = malloc(sizeof(int) * (size_t)s->nllc);
		if (!c->pu_load)
			c->pu_load = malloc(sizeof(int) * (size_t)s->ncpu);
		if (!c->core_owner || !c->llc_load || !c->pu_load) {
			s->stats.nomem++;
			return;         /* (freed with the state) */
		}
	}
	if (c->cap < s->ndoms) {
		const struct dom **p = realloc(c->doms, sizeof(*p) * (size_t)s->ndoms);
		if (p == NULL) {
			s->stats.nomem++;
			return;
		}
		c->doms = p;
		c->cap = s->ndoms;
	}
	c->ndoms = s->ndoms;
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		c->doms[i] = d;
		d->own_ok = true;
		d->own_placed = d->state == DOM_PLACED;
		d->own_isolated = d->isolated;
		d->own_allot = d->allot;
		d->own_slot_gen = d->slot_gen;
	}
	memcpy(c->core_owner, s->core_owner, sizeof(int) * (size_t)ncore);
	memcpy(c->llc_load, s->llc_load, sizeof(int) * (size_t)s->nllc);
	memcpy(c->pu_load, s->pu_load, sizeof(int) * (size_t)s->ncpu);
	c->valid = true;
}

void
step_rebuild_ownership(struct policy_state *s)
{
	const struct topo *t = s->topo;
	int cpu;

	if (own_unchanged(s)) {
		/* placement moves counts between rebuilds: the kept ones */
		memcpy(s->core_owner, s->own.core_owner, sizeof(int) * (size_t)topo_count(t, TOPO_CORE));
		memcpy(s->llc_load, s->own.llc_load, sizeof(int) * (size_t)s->nllc);
		memcpy(s->pu_load, s->own.pu_load, sizeof(int) * (size_t)s->ncpu);
		return;
	}
	for (int c = 0; c < topo_count(t, TOPO_CORE); c++)
		s->core_owner[c] = -1;
	memset(s->llc_load, 0, sizeof(int) * (size_t)s->nllc);
	memset(s->pu_load, 0, sizeof(int) * (size_t)s->ncpu);
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		if (d->state != DOM_PLACED)
			continue;
		if (d->isolated) {
			CPUSET_FOREACH(cpu, &d->allot)
				s->core_owner[topo_core_of(t, cpu)] = i;
		}
		for (int v = 0; v < d->nvcpus; v++) {
			s->pu_load[d->slot[v]]++;
			if (!d->isolated)
				s->llc_load[t->pu_llc[d->slot[v]]]++;
		}
	}
	own_keep(s);
}

/* --- stage 4: steer and emit ------------------------------------------------ */

/* What every domain's steering this step shares. */
struct step_ctx {
	const struct policy_input *in;
	struct policy_plan *plan;
	double period_ms;
	bool any_isolated;              /* an isolated domain is placed */
	bool pool_changed;              /* the shared pool differs from last step */
	struct cpuset pool;             /* the shared pool this step */
};

/* Whether emu equals the emulator pin last planned; in_host: emu lies in
 * the host's words (built by the engine), so that unless the last pin
 * was the caller's reserved set only those words are compared (every
 * domain, every step: the full 256 bytes of two sets were a tenth of a
 * steady step). */
static inline bool
emu_same(const struct policy_state *s, const struct dom *d, const struct cpuset *emu, bool in_host)
{
	return in_host && !d->emu_foreign ? policy_set_eq(s, emu, &d->emu_want) : cpuset_equal(emu, &d->emu_want);
}

/* An unmanaged domain: confined to the shared pool as a whole while
 * isolated domains exist, released otherwise. Returns false when the
 * domain is done with this step (released: nothing to pin). */
static bool
steer_unmanaged(struct policy_state *s, const struct step_ctx *cx, struct dom *d)
{
	struct cpuset bpool = cx->pool;
	const struct cpuset *pool = &bpool;
	char buf[128];

	if (!d->bound_none)
		cpuset_and(&bpool, &bpool, &d->bound);
	if (cx->any_isolated) {
		for (int v = 0; v < d->nvcpus; v++)
			dom_pin_set(d, &d->want[v], pool);
		/* (the pool lies in the host's words) */
		if (!policy_set_empty(s, pool) && (!d->confined || !emu_same(s, d, pool, true))) {
			cpuset_str(pool, buf, sizeof(buf));
			policy_plan_add(s, cx->plan, POLICY_ACT_PIN_EMULATOR, d, -1, pool,
			    "unmanaged domain confined to the shared pool [%s] while isolated domains exist", buf);
			d->emu_want = *pool;
			d->emu_foreign = false;
		}
		d->confined = true;
		d->released_sent = false;
		return true;
	}
	if (d->confined || !d->released_sent) {
		struct cpuset all_host = s->topo->all;
		cpuset_andnot(&all_host, &all_host, &cx->in->host.reserved);
		if (!d->bound_none)
			cpuset_and(&all_host, &all_host, &d->bound);
		if (cpuset_empty(&all_host))
			all_host = d->bound;    /* the bound holds only reserved CPUs */
		policy_plan_add(s, cx->plan, POLICY_ACT_RELEASE, d, -1, &all_host,
		    d->confined ? "no isolated domain left: back to the default scheduler"
		                : "no longer managed: back to the default scheduler");
		for (int v = 0; v < d->nvcpus; v++)
			dom_pin_set(d, &d->want[v], &all_host);
		for (int v = 0; v < d->nvcpus; v++)
			dom_pin_share(d, &d->sent[v], d->want[v]);
	}
	d->confined = false;
	d->released_sent = true;
	return false;
}

/* Emulator threads: the reserved CPUs for isolated domains when there are
 * any, else the domain's own PUs. */
static void
pin_emulator(struct policy_state *s, const struct step_ctx *cx, struct dom *d)
{
	const struct cpuset *reserved = &cx->in->host.reserved;
	const struct cpuset *emu = &d->allot;   /* (not a copy: every domain, every step) */
	char buf[128];

	if (d->isolated && !cpuset_empty(reserved) && policy_dom_in_bound(d, reserved))
		emu = reserved;
	bool in_host = emu == &d->allot;        /* (reserved is the caller's) */
	if ((d->emu_sent && emu_same(s, d, emu, in_host)) ||
	    (in_host ? policy_set_empty(s, emu) : cpuset_empty(emu)))
		return;
	cpuset_str(emu, buf, sizeof(buf));
	policy_plan_add(s, cx->plan, POLICY_ACT_PIN_EMULATOR, d, -1, emu, "emulator threads on %s [%s]",
	    d->isolated && !cpuset_empty(reserved) ? "the reserved CPUs" : "the domain's PUs", buf);
	d->emu_want = *emu;
	d->emu_foreign = !in_host;
	d->emu_sent = true;
}

/* llcrules_decay(): pow() of the same arguments as the last domain's is
 * the same number (most domains share their epoch). */
static double
step_decay(struct policy_state *s, double period_ms, double epoch_ms)
{
	if (!s->incremental || !s->kd_ok || s->kd_period_ms != period_ms || s->kd_epoch_ms != epoch_ms) {
		s->kd = llcrules_decay(period_ms, epoch_ms);
		s->kd_period_ms = period_ms;
		s->kd_epoch_ms = epoch_ms;
		s->kd_ok = true;
	}
	return s->kd;
}

/* A placed domain: its groups (aggregate) or spreading, and its emulator
 * threads. */
static void
steer_managed(struct policy_state *s, const struct step_ctx *cx, struct dom *d,
              const struct policy_domain_in *di)
{
	struct cpuset allowed;

	policy_dom_allowed(s, d, &allowed);
	if (di->mbm_valid)
		d->mbm_seen = true;
	double epoch_ms = d->annot->tune.epoch_ms > 0 ? d->annot->tune.epoch_ms : cx->period_ms;
	double epochs = cx->period_ms / epoch_ms;
	if (d->annot->mode == POLICY_MODE_AGGREGATE || d->annot->mode == POLICY_MODE_SPREAD)
		home_sample(s, cx->in, d, di);
	if (d->annot->mode == POLICY_MODE_AGGREGATE) {
		double kd = step_decay(s, cx->period_ms, epoch_ms);
		steer_view(s, &allowed, cx->in->period_ns);
		groups_update(s, cx->in, d, di, epochs);
		for (int g = 0; g < d->ngroups; g++)
			steer_group(s, cx->in, d, di, &d->groups[g], kd, epochs, &allowed, cx->plan);
	} else if (d->annot->mode == POLICY_MODE_SPREAD) {
		steer_spread(s, d, di, &allowed);
	}
	home_update(s, cx->in, d, di, cx->plan);
	pin_emulator(s, cx, d);
}

/* Shared-pool pins never reach cores an isolated domain owns now. */
static void
clip_to_pool(struct dom *d, const struct cpuset *pool)
{
	struct cpuset x;

	for (int v = 0; v < d->nvcpus; v++) {
		if (!cpuset_subset(d->home[v], pool)) {
			cpuset_and(&x, d->home[v], pool);
			dom_pin_set(d, &d->home[v], &x);
		}
		if (!cpuset_subset(d->want[v], pool)) {
			cpuset_and(&x, d->want[v], pool);
			dom_pin_set(d, &d->want[v], &x);
		}
		if (d->want[v] == &cpuset_none)
			dom_pin_share(d, &d->want[v], d->home[v]);
	}
}

/* One PIN per vCPU whose wanted pin differs from what was seen. */
static void
emit_pins(struct policy_state *s, const struct step_ctx *cx, struct dom *d,
          const struct policy_domain_in *di, bool same)
{
	char buf[128];
	bool clean = true;

	/* the last step's samples and wants, each pin its want's pointer:
	 * still so (the engine holds each want, so no other set took its
	 * address) */
	if (same && d->emit_clean && d->emit_step + 1 == s->step && d->emit_gen == d->pin_gen) {
		d->emit_step = s->step;
		return;
	}
	for (int v = 0; v < d->nvcpus; v++) {
		const struct cpuset *seen = policy_sample_pin(&di->vcpus[v]);
		if (seen == d->want[v])
			continue;
		clean = false;
		/* as wanted: nothing to pin (an empty want is never pinned) */
		if (policy_set_eq(s, seen, d->want[v]))
			continue;
		/* compare with what was observed, or, when the back-end
		 * cannot observe pins, with what was last sent */
		bool differs = !policy_set_eq(s, policy_set_empty(s, seen) ? d->sent[v] : seen, d->want[v]);
		if (!differs || d->want[v] == &cpuset_none)
			continue;       /* never pin to nothing */
		char where[64];
		policy_pin_llcs(s, d->want[v], where, sizeof(where));
		cpuset_str(d->want[v], buf, sizeof(buf));
		if (d->confined)
			policy_plan_add(s, cx->plan, POLICY_ACT_PIN_VCPU, d, v, d->want[v], "shared pool [%s]", buf);
		else if (d->want[v] == d->home[v])
			policy_plan_add(s, cx->plan, POLICY_ACT_PIN_VCPU, d, v, d->want[v], "placement: %s [%s] (%s, %s%s%s)",
			    where, buf, policy_mode_name(d->annot->mode), d->isolated ? "isolated cores" : "shared pool",
			    d->hc.st == HOME_TRIAL ? "; home on trial by the home check" :
			    d->hc.widened ? "; home widened by the home check" : "",
			    d->hint_periods > 0 ? "; busy vCPUs one per core while the home settles" : "");
		else
			policy_plan_add(s, cx->plan, POLICY_ACT_PIN_VCPU, d, v, d->want[v], "%s %s [%s]",
			    d->annot->mode == POLICY_MODE_SPREAD ? "spread to" : "preferred", where, buf);
		dom_pin_share(d, &d->sent[v], d->want[v]);
		/* a pin away from where it ran moves the thread: another
		 * arrangement for the trials (trial.c) */
		int c = di->vcpus[v].last_cpu;
		if (c < 0 || c >= CPUSET_MAX || !cpuset_isset(d->want[v], c)) {
			d->pinned_step = s->step;
			d->pin_step[v] = s->step;
		}
		s->stats.pins++;
	}
	d->emit_clean = clean;
	d->emit_step = s->step;
	d->emit_gen = d->pin_gen;
}

/* Whether d's vCPU samples are the last ones, at the same period and
 * counters; if not, obs_gen counts them. Marked samples (the caller's
 * policy_domain_in.vcpus_gen, which llcd's live back-end gives): the
 * last step's mark, with no read of the samples. Unmarked: byte for byte
 * the copy kept (what each ran, waited, retired, where it last ran, its
 * pin's pointer), and else kept. One memcmp over the array, not a loop
 * over fields: a change of a field nothing cached reads (a thread id, the
 * last CPU, instructions without counters) only counts as a change, as
 * does a new mark for the same bytes. Never with incremental steps off. */
#if UINTPTR_MAX == UINT64_MAX
/* padding would be compared too (a change only where it varies) */
_Static_assert(sizeof(struct policy_vcpu_sample) == 3 * sizeof(uint64_t) + sizeof(void *) + 2 * sizeof(int),
               "policy_vcpu_sample has no padding");
#endif

static bool
obs_same(const struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
         const struct policy_input *in)
{
	size_t n = sizeof(*d->obs) * (size_t)d->nvcpus;

	if (!s->incremental)
		return false;
	bool at = d->obs_ok && d->obs_period == in->period_ns && d->obs_counters == in->host.counters;
	if (di->vcpus_gen != 0) {
		/* the caller's mark: the same one, the same samples */
		if (at && !d->obs_copy && d->obs_mark == di->vcpus_gen)
			return true;
		d->obs_copy = false;
		d->obs_mark = di->vcpus_gen;
	} else {
		if (at && d->obs_copy && memcmp(d->obs, di->vcpus, n) == 0)
			return true;
		memcpy(d->obs, di->vcpus, n);   /* (reconcile_one() made it) */
		d->obs_copy = true;
		d->obs_mark = 0;
	}
	d->obs_period = in->period_ns;
	d->obs_counters = in->host.counters;
	d->obs_ok = true;
	d->obs_gen++;
	return false;
}

static void
steer_domain(struct policy_state *s, const struct step_ctx *cx, struct dom *d)
{
	const struct policy_domain_in *di = &cx->in->domains[d->in_idx];

	/* the busy fractions: an update that changed none changes none
	 * again from the same runtimes (u and vutil are never -0) */
	bool same = obs_same(s, d, di, cx->in);
	if (!same || !d->vutil_fixed) {
		bool moved = false;
		for (int v = 0; v < d->nvcpus; v++) {
			double u = (double)di->vcpus[v].runtime_ns / (double)cx->in->period_ns;
			if (u > 1)
				u = 1;
			double x = 0.5 * d->vutil[v] + 0.5 * u;
			/* within VUTIL_SNAP of its fixed point the average is
			 * the point: a steady load stops moving in ~30 halvings
			 * rather than the ~55 of a double's 53 bits */
			if (x - u < VUTIL_SNAP && u - x < VUTIL_SNAP)
				x = u;
			moved |= x != d->vutil[v];
			d->vutil[v] = x;
		}
		d->vutil_fixed = !moved;
	}
	if (d->state != DOM_PLACED) {
		if (!steer_unmanaged(s, cx, d))
			return;
	} else {
		steer_managed(s, cx, d, di);
	}
	if (d->state == DOM_PLACED && !d->isolated && cx->pool_changed) {
		struct cpuset bpool;
		policy_dom_allowed(s, d, &bpool);
		clip_to_pool(d, &bpool);
	}
	emit_pins(s, cx, d, di, same);
}

/* --- the move budget ------------------------------------------------------- */

/* Where steering starts this step: the first domain the budget denied
 * last step (key order when it did not run out); per-step flags reset. */
static int
budget_start(struct policy_state *s)
{
	int start = 0;

	for (int i = s->ndoms - 1; i >= 0; i--) {
		s->doms[i]->step_moves = 0;
		s->doms[i]->budget_denied = false;
		if (s->doms[i]->key >= s->budget_start_key)
			start = i;
	}
	return start;
}

/* After the step: when the budget ran out, the next step starts at the
 * first domain (in this step's order) it denied without a move (else the
 * first it denied), and each domain that moved or wanted to gets an equal
 * share; otherwise key order and no cap. */
static void
budget_next(struct policy_state *s, int start, int total)
{
	int contenders = 0, first = -1, first_none = -1;

	for (int i = 0; i < s->ndoms; i++) {
		const struct dom *d = s->doms[(start + i) % s->ndoms];
		if (d->step_moves > 0 || d->budget_denied)
			contenders++;
		if (d->budget_denied && first < 0)
			first = (start + i) % s->ndoms;
		if (d->budget_denied && d->step_moves == 0 && first_none < 0)
			first_none = (start + i) % s->ndoms;
	}
	if (first < 0) {
		s->budget_start_key = 0;
		s->budget_cap = INT_MAX;
		return;
	}
	s->budget_start_key = s->doms[first_none >= 0 ? first_none : first]->key;
	s->budget_cap = (total + contenders - 1) / contenders;
	if (s->budget_cap < 1)
		s->budget_cap = 1;
}

/* Reverse the plan's actions [a, b). */
static void
plan_reverse(struct policy_plan *p, int a, int b)
{
	for (b--; a < b; a++, b--) {
		struct policy_action x = p->actions[a];
		p->actions[a] = p->actions[b];
		p->actions[b] = x;
	}
}

static void
steer_stage(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan,
            double period_ms)
{
	struct step_ctx cx = { .in = in, .plan = plan, .period_ms = period_ms };

	cx.any_isolated = policy_any_isolated(s);
	policy_shared_pool(s, &in->host, &s->pool);
	cx.pool = s->pool;
	cx.pool_changed = !policy_set_eq(s, &s->pool, &s->prev_pool);
	s->prev_pool = s->pool;
	int start = budget_start(s), n0 = plan->n, nsplit = plan->n;
	bool ahead = s->ndoms >= PREFETCH_DOMS;
	for (int i = 0; i < s->ndoms; i++) {
		int j = (start + i) % s->ndoms;
		if (j == 0)
			nsplit = plan->n;
		if (ahead && i + 4 < s->ndoms) {
			const struct dom *a = s->doms[(j + 4) % s->ndoms];
			dom_prefetch1(a, &in->domains[a->in_idx]);
		}
		if (ahead && i + 2 < s->ndoms) {
			const struct dom *b = s->doms[(j + 2) % s->ndoms];
			dom_prefetch2(b, &in->domains[b->in_idx]);
		}
		steer_domain(s, &cx, s->doms[j]);
	}
	/* the plan in key order all the same: domains 0..start-1 first */
	if (start > 0) {
		plan_reverse(plan, n0, nsplit);
		plan_reverse(plan, nsplit, plan->n);
		plan_reverse(plan, n0, plan->n);
	}
	budget_next(s, start, in->host.max_moves_total > 0 ? in->host.max_moves_total : 256);
	steer_groups_unfollow(s);
}

/* --- the step ----------------------------------------------------------------- */

/* A change of the settings that decide the room (llcctl tune, reload) may
 * make room for a refused domain: count it as freed resources, so that
 * refused domains are placed again (adopt_stage). A new topology (CPU
 * hotplug) resets the whole state instead (state_bind_topo). */
static void
note_room(struct policy_state *s, const struct policy_host *h)
{
	if (s->step > 1 && (!cpuset_equal(&h->reserved, &s->room_reserved) ||
	                    !cpuset_equal(&h->shared_pool, &s->room_pool) ||
	                    h->overcommit != s->room_overcommit ||
	                    h->overcommit_isolated != s->room_overcommit_isolated))
		s->res_gen++;
	s->room_reserved = h->reserved;
	s->room_pool = h->shared_pool;
	s->room_overcommit = h->overcommit;
	s->room_overcommit_isolated = h->overcommit_isolated;
}

int
policy_step(struct policy_state *s, const struct policy_input *in,
            struct policy_plan *plan, struct llcd_err *err)
{
	int *order;
	double period_ms;

	if (validate(in, err) < 0)
		return -1;
	/* key order (and the check for shared keys) before any change */
	order = malloc(sizeof(int) * (size_t)(in->ndomains + 1));
	if (order == NULL)
		return llcd_err_set(err, "policy: out of memory");
	if (!order_again(s, in, order)) {
		for (int i = 0; i < in->ndomains; i++)
			order[i] = i;
		qsort_r(order, (size_t)in->ndomains, sizeof(int), cmp_in_key, (void *)in->domains);
		if (duplicates_check(in, order, err) < 0) {
			free(order);
			return -1;
		}
		order_keep(s, order, in->ndomains);
	}
	if (policy_state_bind_topo(s, in->host.topo) < 0) {
		free(order);
		return llcd_err_set(err, "policy: out of memory");
	}
	policy_plan_clear(plan);
	s->step++;
	s->stats.steps++;
	s->now_ns = in->now_ns;
	s->moves_left = in->host.max_moves_total > 0 ? in->host.max_moves_total : 256;
	period_ms = (double)in->period_ns / 1e6;
	note_room(s, &in->host);

	/* 1. reconcile, in key order */
	int rc = reconcile(s, in, order, err);
	free(order);
	if (rc < 0)
		return -1;

	/* 2. account */
	account(s, in, llcrules_decay(period_ms, period_ms));   /* per-CPU totals decay per period */
	step_rebuild_ownership(s);

	/* 3. place */
	s->in = in;
	placement_stage(s, in, plan);

	/* 4. steer and emit */
	s->in = in;
	steer_stage(s, in, plan, period_ms);

	/* 5. order */
	order_stage(s, in, plan);

	s->in = NULL;
	return 0;
}
