// SPDX-License-Identifier: GPL-2.0-or-later
/* placement.c - stage 3 of a step: where a domain lives (its allotment,
 * a slot PU and a home pin per vCPU). Adopts the pins a domain already has
 * when they are a valid placement (llcd restarted), else places it: one
 * LLC if it fits (best fit), else the fewest LLCs in one NUMA node, else
 * across nodes; isolated domains take whole cores, never from the shared
 * pool's budget. See docs/design.md, "Initial placement".
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cand {
	int llc;
	int free;               /* vCPU slots available */
	int numa;
};

/* Cores of an LLC available to isolated domain d (inside its bound),
 * least shared load first. */
int
placement_llc_free_cores(const struct policy_state *s, const struct policy_host *h, const struct dom *d, int llc,
               int *cores)
{
	const struct topo_node *ln = topo_get(s->topo, TOPO_LLC, llc);
	int n = 0;

	for (int i = 0; i < ln->nchildren; i++) {
		const struct topo_node *core = ln->children[i];
		if (core->type != TOPO_CORE || s->core_owner[core->index] >= 0 || !policy_dom_in_bound(d, &core->cpus))
			continue;
		if (cpuset_intersects(&core->cpus, &h->reserved) ||
		    (!cpuset_empty(&h->shared_pool) && cpuset_intersects(&core->cpus, &h->shared_pool)))
			continue;
		cores[n++] = core->index;
	}
	/* stable insertion sort by shared load on the core */
	for (int i = 1; i < n; i++) {
		int c = cores[i], lc = 0, j = i - 1, cpu;
		CPUSET_FOREACH(cpu, &topo_get(s->topo, TOPO_CORE, c)->cpus)
			lc += s->pu_load[cpu];
		while (j >= 0) {
			int lj = 0;
			CPUSET_FOREACH(cpu, &topo_get(s->topo, TOPO_CORE, cores[j])->cpus)
				lj += s->pu_load[cpu];
			if (lj <= lc)
				break;
			cores[j + 1] = cores[j];
			j--;
		}
		cores[j + 1] = c;
	}
	return n;
}

int
placement_slots_per_core(const struct policy_state *s, const struct policy_host *h)
{
	int n = (int)floor(s->topo->smt * h->overcommit_isolated + 1e-9);
	return n < 1 ? 1 : n;
}

static int
llc_free_slots(const struct policy_state *s, const struct policy_host *h, int llc,
               const struct dom *d, const struct cpuset *pool, int *cores_buf)
{
	if (d->isolated)
		return placement_llc_free_cores(s, h, d, llc, cores_buf) * placement_slots_per_core(s, h);
	struct cpuset x;
	cpuset_and(&x, policy_llc_cpus(s, llc), pool);
	int cap = (int)floor(cpuset_count(&x) * h->overcommit + 1e-9) - s->llc_load[llc];
	return cap > 0 ? cap : 0;
}

/* Whole cores first: cores of an LLC whose PUs are all in the pool and
 * carry no vCPU slot yet. Used for guests without SMT, so that each vCPU
 * gets a core of its own before any shares a core with a sibling. */
static int
llc_free_whole_cores(const struct policy_state *s, int llc, const struct cpuset *pool, int *first_pus)
{
	const struct topo_node *ln = topo_get(s->topo, TOPO_LLC, llc);
	int n = 0, cpu;

	for (int i = 0; i < ln->nchildren; i++) {
		const struct topo_node *core = ln->children[i];
		bool ok = core->type == TOPO_CORE && cpuset_subset(&core->cpus, pool);
		if (ok)
			CPUSET_FOREACH(cpu, &core->cpus)
				if (s->pu_load[cpu] != 0)
					ok = false;
		if (ok) {
			if (first_pus)
				first_pus[n] = cpuset_first(&core->cpus);
			n++;
		}
	}
	return n;
}

/* An isolated domain may not shrink a dynamic shared pool below what the
 * domains running in it need (their vCPUs / overcommit, at least one
 * core): shared and unmanaged domains, and isolated ones already refused.
 * Returns how many more whole cores isolated domains may take, or -1 when
 * the shared pool is configured (isolated cores never come from it). */
static int
iso_budget_cores(const struct policy_state *s, const struct policy_host *h, const struct dom *d,
                 const struct cpuset *pool, int *need_out)
{
	long need_vcpus = 0;
	int need_pus, budget;

	if (!cpuset_empty(&h->shared_pool))
		return -1;
	for (int i = 0; i < s->ndoms; i++) {
		const struct dom *o = s->doms[i];
		if (o != d && o->seen && (!o->isolated || o->state == DOM_REFUSED))
			need_vcpus += o->nvcpus;
	}
	need_pus = (int)ceil((double)need_vcpus / h->overcommit - 1e-9);
	if (need_vcpus > 0 && need_pus < s->topo->smt)
		need_pus = s->topo->smt;
	budget = (cpuset_count(pool) - need_pus) / s->topo->smt;
	if (need_out)
		*need_out = need_pus;
	return budget < 0 ? 0 : budget;
}

static int
cmp_cand_free_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->free != y->free)
		return y->free - x->free;
	return x->llc - y->llc;
}

/* Choose LLCs for n slots: one LLC if any fits (best fit); else whole LLCs
 * inside one NUMA node (fewest LLCs, then least left over); else across
 * nodes. Returns the number of LLCs chosen, 0 when the host is full. */
static int
choose_llcs(const struct policy_state *s, struct cand *c, int nc, int n, int *out)
{
	int best = -1, total = 0, nnuma = topo_count(s->topo, TOPO_NUMA);
	int best_k = 0, best_left = 0;

	for (int i = 0; i < nc; i++) {
		total += c[i].free;
		if (c[i].free >= n && (best < 0 || c[i].free < c[best].free))
			best = i;
	}
	if (best >= 0) {
		out[0] = c[best].llc;
		return 1;
	}
	if (total < n)
		return 0;
	qsort(c, (size_t)nc, sizeof(*c), cmp_cand_free_desc);
	best = -2;
	for (int node = 0; node < nnuma; node++) {
		int k = 0, got = 0;
		for (int i = 0; i < nc && got < n; i++)
			if (c[i].numa == node && c[i].free > 0) {
				got += c[i].free;
				k++;
			}
		if (got >= n && (best == -2 || k < best_k || (k == best_k && got - n < best_left))) {
			best = node;
			best_k = k;
			best_left = got - n;
		}
	}
	int k = 0, got = 0;
	for (int i = 0; i < nc && got < n; i++) {
		if (c[i].free <= 0 || (best != -2 && c[i].numa != best))
			continue;
		out[k++] = c[i].llc;
		got += c[i].free;
	}
	return k;
}

static int
guest_per_die(const struct dom *d)
{
	const struct policy_guest_topo *g = &d->guest;
	long per = (long)(g->clusters > 0 ? g->clusters : 1) * (g->cores > 0 ? g->cores : 1) *
	           (g->threads > 0 ? g->threads : 1);
	long dies = (long)(g->sockets > 0 ? g->sockets : 1) * (g->dies > 0 ? g->dies : 1);

	if (per <= 0 || per * dies != d->nvcpus)
		return d->nvcpus;       /* topology absent or inconsistent */
	return (int)per;
}

/* Set a vCPU's home and wanted pin from its slot PU:
 *  - static: the PU itself;
 *  - topology="match": the slot's LLC share of what the domain may use
 *    (its own cores, or the shared pool), so that guest die i stays on
 *    host LLC i and the guest's view is true;
 *  - otherwise: everything the domain may use; the kernel balances the
 *    vCPUs there and only groups are steered (the slot counts capacity).
 */
void
placement_set_home(struct policy_state *s, struct dom *d, int v, const struct cpuset *pool)
{
	const struct cpuset *allowed = d->isolated ? &d->allot : pool;
	struct cpuset pin;

	cpuset_zero(&pin);
	if (d->annot->mode == POLICY_MODE_STATIC)
		cpuset_set(&pin, d->slot[v]);
	else if (d->annot->topology == POLICY_TOPO_MATCH)
		cpuset_and(&pin, policy_llc_cpus(s, topo_llc_of(s->topo, d->slot[v])), allowed);
	else
		pin = *allowed;
	dom_pin_set(d, &d->home[v], &pin);
	dom_pin_share(d, &d->want[v], d->home[v]);
}

/* Assign vCPUs [first, first+count) round-robin over the PUs of the given
 * cores (siblings adjacent), so guest SMT pairs land on host sibling pairs. */
static void
fill_slots(struct policy_state *s, struct dom *d, int first, int count,
           const int *pus, int npus)
{
	for (int i = 0; i < count; i++) {
		int pu = pus[i % npus];
		dom_slot_set(d, first + i, pu);
		cpuset_set(&d->allot, pu);
		s->pu_load[pu]++;
	}
}

/* The candidate LLCs for a domain with the slots each offers (corefirst:
 * free whole cores of the pool); returns how many offer any. */
static int
collect_cands(const struct policy_state *s, const struct policy_host *h, const struct dom *d,
              const struct cpuset *pool, bool corefirst, struct cand *c, int *cores)
{
	const struct topo *t = s->topo;
	int nc = 0;

	for (int l = 0; l < s->nllc; l++) {
		c[nc].llc = l;
		c[nc].numa = t->llc_numa[l];
		c[nc].free = corefirst ? llc_free_whole_cores(s, l, pool, NULL)
		                       : llc_free_slots(s, h, l, d, pool, cores);
		if (c[nc].free > 0)
			nc++;
	}
	return nc;
}

/* Scratch arrays of one placement. */
struct place_buf {
	struct cand *c;         /* nllc */
	int *chosen;            /* nllc */
	int *cores;             /* ncores + 1 */
	int *pus;               /* ncpu + 1 */
	int nc;                 /* candidates in c */
	int k;                  /* LLCs in chosen */
	bool corefirst;         /* a whole core per vCPU */
	int iso_budget;         /* whole cores isolated domains may take, -1 any */
	int pool_need_pus;      /* PUs the shared pool keeps for its domains */
};

/* Choose the LLCs for d into b->chosen (b->k of them; 0: it does not fit).
 * Guests without SMT in the shared pool get a core per vCPU when possible. */
static void
choose_home_llcs(const struct policy_state *s, const struct policy_host *h, const struct dom *d,
                 const struct cpuset *pool, struct place_buf *b)
{
	const struct topo *t = s->topo;
	int n = d->nvcpus, spc = placement_slots_per_core(s, h);

	b->nc = 0;
	b->k = 0;
	b->pool_need_pus = 0;
	b->corefirst = !d->isolated && t->smt > 1 && d->guest.threads <= 1 && h->overcommit <= 1.0;
	if (b->corefirst) {
		b->nc = collect_cands(s, h, d, pool, true, b->c, b->cores);
		b->k = choose_llcs(s, b->c, b->nc, n, b->chosen);
		b->corefirst = b->k > 0;
	}
	if (d->isolated) {
		/* the budget is the whole shared pool's, not the bound's share */
		struct cpuset all;
		policy_shared_pool(s, h, &all);
		b->iso_budget = iso_budget_cores(s, h, d, &all, &b->pool_need_pus);
	} else {
		b->iso_budget = -1;
	}
	if (b->corefirst)
		return;
	b->nc = collect_cands(s, h, d, pool, false, b->c, b->cores);
	b->k = choose_llcs(s, b->c, b->nc, n, b->chosen);
	if (b->iso_budget >= 0 && (n + spc - 1) / spc > b->iso_budget) {
		b->k = 0;
		for (int i = 0; i < b->nc; i++)        /* report what may be taken */
			b->c[i].free = 0;
		if (b->nc > 0)
			b->c[0].free = b->iso_budget * spc;
	}
}

/* The domain does not fit: say what it needs and what is free. */
static void
refuse_domain(struct policy_state *s, const struct policy_host *h, struct dom *d,
              const struct place_buf *b, struct policy_plan *plan)
{
	int n = d->nvcpus, spc = placement_slots_per_core(s, h), total = 0;
	char rs[64];

	for (int i = 0; i < b->nc; i++)
		total += b->c[i].free;
	cpuset_str(&h->reserved, rs, sizeof(rs));
	if (d->isolated)
		snprintf(d->refuse_reason, sizeof(d->refuse_reason),
		    "needs %d whole cores for %d vCPUs (isolation=core, SMT%d, overcommit %.2g); "
		    "only %d free outside reserved CPUs [%s] and the shared pool%s",
		    (n + spc - 1) / spc, n, s->topo->smt,
		    h->overcommit_isolated, total / spc, rs,
		    b->iso_budget >= 0 && b->pool_need_pus > 0 ? " (which keeps the PUs its domains need)" : "");
	else
		snprintf(d->refuse_reason, sizeof(d->refuse_reason),
		    "needs %d vCPU slots in the shared pool (overcommit %.2g); only %d free",
		    n, h->overcommit, total);
	if (!d->bound_none) {
		char bs[64];
		size_t len = strlen(d->refuse_reason);
		cpuset_str(&d->bound, bs, sizeof(bs));
		snprintf(d->refuse_reason + len, sizeof(d->refuse_reason) - len, " inside its CPU bound [%s]", bs);
	}
	d->state = DOM_REFUSED;
	d->refused_gen = s->res_gen;
	s->stats.refusals++;
	policy_plan_add(s, plan, POLICY_ACT_REFUSE, d, -1, NULL, "%s", d->refuse_reason);
}

/* The PUs of a chosen LLC that the domain's next vCPUs fill, in order, into
 * pus (*npus of them); returns the slots it offers. An isolated domain
 * takes the whole cores it needs (marked -2 in core_owner until the
 * placement ends). */
static int
llc_fill_pus(struct policy_state *s, const struct policy_host *h, const struct dom *d, int llc,
             int left, const struct cpuset *pool, struct place_buf *b, int *npus)
{
	const struct topo *t = s->topo;
	int cpu;

	*npus = 0;
	if (d->isolated) {
		int ncores = placement_llc_free_cores(s, h, d, llc, b->cores);
		int spc = placement_slots_per_core(s, h);
		int need = (left + spc - 1) / spc;
		if (need > ncores)
			need = ncores;
		for (int j = 0; j < need; j++) {
			CPUSET_FOREACH(cpu, &topo_get(t, TOPO_CORE, b->cores[j])->cpus)
				b->pus[(*npus)++] = cpu;
			s->core_owner[b->cores[j]] = -2;  /* taken by this placement */
		}
		return need * spc;
	}
	if (b->corefirst) {
		*npus = llc_free_whole_cores(s, llc, pool, b->pus);
		return *npus;
	}
	/* least-loaded PUs first, then core by core with siblings adjacent
	 * (whatever the OS numbering) */
	const struct topo_node *ln = topo_get(t, TOPO_LLC, llc);
	int inpool = 0;
	for (int j = 0; j < ln->nchildren; j++) {
		struct cpuset x;
		cpuset_and(&x, &ln->children[j]->cpus, pool);
		inpool += cpuset_count(&x);
	}
	for (int load = 0; *npus < inpool; load++)
		for (int j = 0; j < ln->nchildren; j++)
			CPUSET_FOREACH(cpu, &ln->children[j]->cpus)
				if (cpuset_isset(pool, cpu) && s->pu_load[cpu] == load)
					b->pus[(*npus)++] = cpu;
	return llc_free_slots(s, h, llc, d, pool, b->cores);
}

/* Guest die by guest die onto the chosen LLCs, in order; returns how many
 * vCPUs got a slot. */
static int
fill_chosen(struct policy_state *s, const struct policy_host *h, struct dom *d,
            const struct cpuset *pool, struct place_buf *b)
{
	int n = d->nvcpus, per_die = guest_per_die(d), v = 0;

	cpuset_zero(&d->allot);
	for (int i = 0; i < b->k && v < n; i++) {
		int llc = b->chosen[i], npus, take;
		int free = llc_fill_pus(s, h, d, llc, n - v, pool, b, &npus);
		take = n - v < free ? n - v : free;
		/* keep guest dies whole where the next LLC can hold the rest */
		if (i + 1 < b->k && take < n - v && per_die < n && take % per_die && take > per_die)
			take -= take % per_die;
		if (take <= 0 || npus == 0)
			continue;
		fill_slots(s, d, v, take, b->pus, npus);
		if (!d->isolated)
			s->llc_load[llc] += take;
		v += take;
	}
	for (int c = 0; c < topo_count(s->topo, TOPO_CORE); c++)
		if (s->core_owner[c] == -2)
			s->core_owner[c] = -1;       /* rebuilt next by the caller */
	return v;
}

/* An isolated domain owns the whole cores its slots touch. */
static void
own_whole_cores(const struct topo *t, struct dom *d)
{
	struct cpuset whole;
	int cpu;

	cpuset_zero(&whole);
	CPUSET_FOREACH(cpu, &d->allot)
		cpuset_or(&whole, &whole, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
	d->allot = whole;
}

/* Place a new domain: DOM_PLACED, or DOM_REFUSED with a REFUSE action.
 * Out of memory leaves it DOM_NEW (counted in stats.nomem; retried next
 * step). */
static void
place_domain(struct policy_state *s, const struct policy_host *h, struct dom *d,
             struct policy_plan *plan)
{
	const struct topo *t = s->topo;
	struct place_buf b = {
		.c = calloc((size_t)s->nllc, sizeof(struct cand)),
		.chosen = calloc((size_t)s->nllc, sizeof(int)),
		.cores = calloc((size_t)topo_count(t, TOPO_CORE) + 1, sizeof(int)),
		.pus = calloc((size_t)s->ncpu + 1, sizeof(int)),
	};
	struct cpuset pool;
	int n = d->nvcpus, v;

	if (!b.c || !b.chosen || !b.cores || !b.pus) {
		s->stats.nomem++;
		goto out;
	}
	policy_dom_pool(s, h, d, &pool);
	choose_home_llcs(s, h, d, &pool, &b);
	if (b.k == 0) {
		refuse_domain(s, h, d, &b, plan);
		goto out;
	}
	v = fill_chosen(s, h, d, &pool, &b);
	if (v < n) {
		/* cannot happen when choose_llcs() counted right; refuse loudly */
		snprintf(d->refuse_reason, sizeof(d->refuse_reason),
		    "internal: placed only %d of %d vCPUs", v, n);
		d->state = DOM_REFUSED;
		policy_plan_add(s, plan, POLICY_ACT_REFUSE, d, -1, NULL, "%s", d->refuse_reason);
		goto out;
	}
	if (d->isolated)
		own_whole_cores(t, d);
	for (int i = 0; i < n; i++)
		placement_set_home(s, d, i, &pool);
	d->state = DOM_PLACED;
	home_placed(s, d);
out:
	free(b.c);
	free(b.chosen);
	free(b.cores);
	free(b.pus);
}

/* A domain's index in the state (its core_owner value). */
int
placement_dom_index(const struct policy_state *s, const struct dom *d)
{
	int idx = -1;

	for (int i = 0; i < s->ndoms; i++)
		if (s->doms[i] == d)
			idx = i;
	return idx;
}

/* Adopt the pins a domain already has (llcd restarted) when they are a
 * valid placement for its mode; returns true when adopted. A domain whose
 * vCPU count grew (grown_from, hot-plug) adopts the pins of its old vCPUs
 * and places each new one beside them: static, on the least-loaded PU of
 * the pool in the LLCs its other vCPUs are on; otherwise on the PUs of the
 * others (the domain's allotment). An isolated one, or one of
 * topology="match" spread over LLCs, is placed afresh instead. */
static bool
adopt_domain(struct policy_state *s, const struct policy_host *h, struct dom *d,
             const struct policy_domain_in *in)
{
	const struct topo *t = s->topo;
	struct cpuset u, pool, whole;
	int cpu, old = d->grown_from > 0 && d->grown_from < d->nvcpus ? d->grown_from : d->nvcpus;

	d->grown_from = 0;              /* one try */
	if (old < d->nvcpus && d->isolated)
		return false;
	cpuset_zero(&u);
	for (int v = 0; v < old; v++) {
		const struct cpuset *p = policy_sample_pin(&in->vcpus[v]);
		if (cpuset_empty(p) || !cpuset_subset(p, &t->all) || cpuset_intersects(p, &h->reserved) ||
		    !policy_dom_in_bound(d, p))
			return false;
		if (d->annot->mode == POLICY_MODE_STATIC && cpuset_count(p) != 1)
			return false;
		if (d->annot->mode != POLICY_MODE_STATIC && d->annot->topology == POLICY_TOPO_MATCH && policy_pin_llc(s, p) < 0)
			return false;
		cpuset_or(&u, &u, p);
	}
	if (old < d->nvcpus && d->annot->mode != POLICY_MODE_STATIC && d->annot->topology == POLICY_TOPO_MATCH &&
	    policy_pin_llc(s, &u) < 0)
		return false;
	cpuset_zero(&whole);
	CPUSET_FOREACH(cpu, &u)
		cpuset_or(&whole, &whole, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
	if (d->isolated) {
		if (!cpuset_equal(&whole, &u) || cpuset_intersects(&whole, &h->reserved) ||
		    (!cpuset_empty(&h->shared_pool) && cpuset_intersects(&whole, &h->shared_pool)))
			return false;
		CPUSET_FOREACH(cpu, &whole)
			if (s->core_owner[topo_core_of(t, cpu)] >= 0)
				return false;
		/* exactly the cores it needs (libvirt's default pin, every CPU,
		 * is not an allocation), within the shared pool's budget */
		int ncores = cpuset_count(&whole) / t->smt, spc = placement_slots_per_core(s, h);
		if (d->nvcpus > ncores * spc || ncores > (d->nvcpus + spc - 1) / spc || !policy_dom_in_bound(d, &whole))
			return false;
		policy_shared_pool(s, h, &pool);
		int budget = iso_budget_cores(s, h, d, &pool, NULL);
		if (budget >= 0 && ncores > budget)
			return false;
	} else {
		policy_dom_pool(s, h, d, &pool);
		if (!cpuset_subset(&u, &pool))
			return false;
	}
	/* where new vCPUs may go */
	struct cpuset cand = u;
	if (old < d->nvcpus && d->annot->mode == POLICY_MODE_STATIC) {
		cpuset_zero(&cand);
		CPUSET_FOREACH(cpu, &u)
			cpuset_or(&cand, &cand, &topo_get(t, TOPO_LLC, topo_llc_of(t, cpu))->cpus);
		cpuset_and(&cand, &cand, &pool);
	}
	if (old < d->nvcpus && cpuset_empty(&cand))
		return false;
	d->allot = u;
	for (int v = 0; v < old; v++) {
		const struct cpuset *p = policy_sample_pin(&in->vcpus[v]);
		/* slot: the least-loaded PU of its pin */
		int best = cpuset_first(p);
		CPUSET_FOREACH(cpu, p)
			if (s->pu_load[cpu] < s->pu_load[best])
				best = cpu;
		dom_slot_set(d, v, best);
		s->pu_load[best]++;
		if (!d->isolated)
			s->llc_load[topo_llc_of(t, best)]++;
		dom_pin_set(d, &d->home[v], p);
		dom_pin_share(d, &d->want[v], d->home[v]);
		dom_pin_share(d, &d->sent[v], d->home[v]);
	}
	for (int v = old; v < d->nvcpus; v++) {
		/* hot-plugged: the least-loaded PU where it may go */
		int best = cpuset_first(&cand);
		CPUSET_FOREACH(cpu, &cand)
			if (s->pu_load[cpu] < s->pu_load[best])
				best = cpu;
		dom_slot_set(d, v, best);
		s->pu_load[best]++;
		s->llc_load[topo_llc_of(t, best)]++;
		if (d->annot->mode == POLICY_MODE_STATIC) {
			struct cpuset one;
			cpuset_zero(&one);
			cpuset_set(&one, best);
			dom_pin_set(d, &d->home[v], &one);
		} else {
			dom_pin_set(d, &d->home[v], &u);
		}
		cpuset_or(&d->allot, &d->allot, d->home[v]);
		dom_pin_share(d, &d->want[v], d->home[v]);
		dom_pin_clear(d, &d->sent[v]);  /* pinned in this step */
	}
	if (d->isolated) {
		int idx = placement_dom_index(s, d);
		CPUSET_FOREACH(cpu, &whole)
			s->core_owner[topo_core_of(t, cpu)] = idx;
	}
	d->state = DOM_PLACED;
	home_placed(s, d);
	return true;
}

/* Place d and, when placed, form its fixed groups. */
static void
place_and_group(struct policy_state *s, const struct policy_host *h, struct dom *d,
                struct policy_plan *plan)
{
	place_domain(s, h, d, plan);
	if (d->state == DOM_PLACED)
		groups_init(s, d);
	step_rebuild_ownership(s);
}

/* Refused domains get another chance when resources were freed; new
 * managed domains adopt the pins they have where those are valid. */
static void
adopt_stage(struct policy_state *s, const struct policy_input *in)
{
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		if (d->state == DOM_REFUSED && d->refused_gen != s->res_gen)
			d->state = DOM_NEW;
		if (d->state == DOM_NEW && !d->no_adopt && policy_dom_managed_mode(d) &&
		    adopt_domain(s, &in->host, d, &in->domains[d->in_idx]))
			groups_init(s, d);
	}
}

/* Shared domains overlapping cores that isolated domains now own are
 * placed again inside the shared pool. */
static void
replace_off_isolated(struct policy_state *s, const struct policy_host *h, struct policy_plan *plan)
{
	struct cpuset pool;

	policy_shared_pool(s, h, &pool);
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		if (d->state != DOM_PLACED || d->isolated || policy_set_sub(s, &d->allot, &pool))
			continue;
		policy_dom_unplace(s, d);
		step_rebuild_ownership(s);
		place_and_group(s, h, d, plan);
	}
}

void
placement_stage(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan)
{
	adopt_stage(s, in);
	/* new isolated domains first (they take whole cores), then shared */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->ndoms; i++) {
			struct dom *d = s->doms[i];
			if (d->state != DOM_NEW || !policy_dom_managed_mode(d) || d->isolated != (pass == 0))
				continue;
			if (pass == 0)
				placement_make_room(s, &in->host, d, plan);
			place_and_group(s, &in->host, d, plan);
		}
	}
	replace_off_isolated(s, &in->host, plan);
}
