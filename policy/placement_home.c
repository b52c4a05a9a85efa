// SPDX-License-Identifier: GPL-2.0-or-later
/* placement_home.c - the moves of a placed isolated domain's home (stage 3's
 * other half, placement.c places new domains): the home check's wider or
 * narrower home (home.c) as a plan over whole cores, the busy vCPUs spread
 * over a new home and held there a few periods, the way back to a home it
 * had, and the room a new isolated domain finds by moving widened homes
 * out of one LLC. See docs/design.md, "Home check".
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether core c may hold d's vCPUs: its own, or free for an isolated
 * domain (not owned, reserved or in a configured shared pool). */
static bool
core_usable(const struct policy_state *s, const struct policy_host *h, int own, int c)
{
	const struct cpuset *pus = &topo_get(s->topo, TOPO_CORE, c)->cpus;

	if (s->core_owner[c] == own)
		return true;
	if (s->core_owner[c] >= 0 || cpuset_intersects(pus, &h->reserved) || !policy_dom_in_bound(s->doms[own], pus))
		return false;
	return cpuset_empty(&h->shared_pool) || !cpuset_intersects(pus, &h->shared_pool);
}

/* Per LLC, for planning d's home. */
struct llc_count {
	int mine;               /* cores d owns there */
	int avail;              /* cores d may use there: its own or free */
	int free;               /* cores nobody owns that d could take */
	int cores;              /* cores of the LLC */
};

/* Sort key of an LLC for a plan over want LLCs (0: the fewest), larger
 * first: LLCs with d's cores, then (spreading) LLCs that are not whole
 * and free but can take their share, then the most cores available. */
static long
plan_rank(const struct llc_count *c, int want, int share)
{
	bool broken = c->free < c->cores;

	if (want == 0)
		return (long)c->mine * 10000 + c->avail;
	return (c->mine > 0 ? 1000000L : 0) + (c->mine == 0 && broken && c->avail >= share ? 100000L : 0) +
	       c->avail;
}

/* The busy time of LLC l's PUs last period (ns). */
static double
llc_busy(const struct policy_state *s, int l)
{
	double b = 0;
	int cpu;

	CPUSET_FOREACH(cpu, policy_llc_cpus(s, l))
		b += s->cpu_busy[cpu];
	return b;
}

/* The PUs of d's cores (as many whole cores as it has) over want LLCs
 * (want 0: the fewest that hold them), never in LLC skip (-1 none), into
 * out: quotas round-robin over the chosen LLCs, least busy first (want >
 * 0), or LLC by LLC (want 0), d's own cores first in each, then free
 * ones; within the NUMA
 * node of its first core when that node can hold the plan. Returns the
 * LLCs of the result, 0 when d's cores do not fit. */
static int
home_plan(const struct policy_state *s, const struct policy_host *h, const struct dom *d, int want,
          int skip, struct cpuset *out)
{
	const struct topo *t = s->topo;
	int own = placement_dom_index(s, d), nllc = s->nllc, ncores = 0, llcs = 0, n = 0, cpu;
	/* per LLC (at most one per PU): no allocation, so nothing to fail */
	struct llc_count cnt[CPUSET_MAX];
	int quota[CPUSET_MAX] = { 0 }, order[CPUSET_MAX];

	cpuset_zero(out);
	if (own < 0 || cpuset_empty(&d->allot) || nllc > CPUSET_MAX)
		return 0;
	memset(cnt, 0, sizeof(cnt[0]) * (size_t)nllc);
	for (int c = 0; c < topo_count(t, TOPO_CORE); c++) {
		int l = topo_llc_of(t, cpuset_first(&topo_get(t, TOPO_CORE, c)->cpus));
		cnt[l].cores++;
		if (s->core_owner[c] == own) {
			cnt[l].mine++;
			ncores++;
		}
		if (l == skip || !core_usable(s, h, own, c))
			continue;
		cnt[l].avail++;
		cnt[l].free += s->core_owner[c] != own;
	}
	int node = t->llc_numa[topo_llc_of(t, cpuset_first(&d->allot))], in_node = 0, node_avail = 0, all_llcs = 0;
	for (int l = 0; l < nllc; l++) {
		all_llcs += cnt[l].avail > 0;
		if (t->llc_numa[l] == node && cnt[l].avail > 0) {
			in_node++;
			node_avail += cnt[l].avail;
		}
	}
	/* stay in the node when it holds the plan (want > 0: as many LLCs as
	 * the host offers, up to want) */
	int goal = want > 0 ? (want < all_llcs ? want : all_llcs) : 0;
	bool node_only = node_avail >= ncores && in_node >= goal;
	for (int l = 0; l < nllc; l++)
		if (cnt[l].avail > 0 && (!node_only || t->llc_numa[l] == node))
			order[n++] = l;
	int share = want > 0 ? (ncores + want - 1) / want : ncores;
	/* stable insertion sort, highest rank first */
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i - 1;
		while (j >= 0 && plan_rank(&cnt[order[j]], want, share) < plan_rank(&cnt[x], want, share)) {
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = x;
	}
	int got = 0;
	if (want == 0) {
		for (int i = 0; i < n && got < ncores; i++) {
			int q = cnt[order[i]].avail < ncores - got ? cnt[order[i]].avail : ncores - got;
			quota[order[i]] = q;
			got += q;
		}
	} else {
		/* the chosen LLCs least busy first, so that the cores an uneven
		 * share leaves over go where the threads the kernel moves go */
		int k0 = want < n ? want : n;
		for (int i = 1; i < k0; i++) {
			int x = order[i], j = i - 1;
			while (j >= 0 && llc_busy(s, order[j]) > llc_busy(s, x)) {
				order[j + 1] = order[j];
				j--;
			}
			order[j + 1] = x;
		}
		/* round-robin over the first want LLCs; more only when they
		 * cannot hold the cores */
		for (int k = k0; got < ncores && k <= n; k++) {
			for (int progress = 1; got < ncores && progress;) {
				progress = 0;
				for (int i = 0; i < k && got < ncores; i++)
					if (quota[order[i]] < cnt[order[i]].avail) {
						quota[order[i]]++;
						got++;
						progress = 1;
					}
			}
		}
	}
	/* the cores: own first in each LLC, then free ones */
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < topo_count(t, TOPO_CORE); c++) {
			const struct topo_node *core = topo_get(t, TOPO_CORE, c);
			int l = topo_llc_of(t, cpuset_first(&core->cpus));
			if (quota[l] == 0 || l == skip || (pass == 0) != (s->core_owner[c] == own) ||
			    !core_usable(s, h, own, c))
				continue;
			CPUSET_FOREACH(cpu, &core->cpus)
				cpuset_set(out, cpu);
			quota[l]--;
		}
	for (int l = 0; l < nllc; l++) {
		struct cpuset x;
		cpuset_and(&x, out, policy_llc_cpus(s, l));
		llcs += !cpuset_empty(&x);
	}
	if (cpuset_count(out) != cpuset_count(&d->allot))
		llcs = 0;       /* not the same number of cores: never */
	return llcs;
}

int
placement_llcs(const struct policy_state *s, const struct cpuset *allot)
{
	int n = 0;

	for (int l = 0; l < s->nllc; l++)
		n += cpuset_intersects(allot, policy_llc_cpus(s, l));
	return n;
}

/* A new home of an isolated domain (aggregate or spread: every vCPU may
 * use all of it) is set up before the kernel balances in it: each busy
 * vCPU on a core of its own, over the home's LLCs (those that ran in one
 * of them kept there while it has a core for them, the rest where most
 * cores are left), the other vCPUs on the PUs of the remaining cores
 * first; each held on that one PU until the new home has settled
 * (hint_periods), then free on all of it. The kernel would otherwise put
 * the threads the new home moves where its own balancing puts them: the
 * least loaded LLC, whatever number of the domain's cores is there, and
 * an idle core, whoever else it will run with. */
static void
hint_busy(struct policy_state *s, struct dom *d)
{
	const struct topo *t = s->topo;
	const struct policy_input *in = s->in;
	int cap[CPUSET_MAX], target[MAX_VCPUS], pu_of[MAX_VCPUS], users[CPUSET_MAX], v, cpu;
	struct cpuset busy_cores;       /* PUs of cores a busy vCPU has */

	d->hint_periods = 0;
	if (!d->isolated || d->annot->mode == POLICY_MODE_STATIC || in == NULL || d->in_idx < 0 ||
	    d->in_idx >= in->ndomains || in->domains[d->in_idx].key != d->key || s->nllc > CPUSET_MAX ||
	    s->ncpu > CPUSET_MAX)
		return;
	const struct policy_vcpu_sample *sm = in->domains[d->in_idx].vcpus;
	for (int l = 0; l < s->nllc; l++) {
		struct cpuset x;
		cpuset_and(&x, &d->allot, policy_llc_cpus(s, l));
		cap[l] = cpuset_count(&x) / t->smt;
	}
	/* the busy vCPUs' LLCs */
	for (int pass = 0; pass < 2; pass++)
		for (v = 0; v < d->nvcpus; v++) {
			int l = -1;
			if (pass == 0)
				target[v] = -1;
			if (d->vutil[v] < BUSY_VCPU || target[v] >= 0)
				continue;
			if (pass == 0) {
				int c = sm[v].last_cpu;
				int lc = topo_llc_of(t, c);
				if (lc >= 0 && c < s->ncpu && cpuset_isset(&d->allot, c) && cap[lc] > 0)
					l = lc;
			} else {
				for (int k = 0; k < s->nllc; k++)
					if (cap[k] > 0 && (l < 0 || cap[k] > cap[l]))
						l = k;
			}
			if (l < 0)
				continue;
			target[v] = l;
			cap[l]--;
		}
	/* their cores: the one they ran on when no other busy vCPU has it,
	 * else the first such core of the LLC */
	for (v = 0; v < d->nvcpus; v++)
		pu_of[v] = -1;
	cpuset_zero(&busy_cores);
	memset(users, 0, sizeof(users[0]) * (size_t)s->ncpu);
	for (int pass = 0; pass < 2; pass++)
		for (v = 0; v < d->nvcpus; v++) {
			int pu = -1, c = sm[v].last_cpu;
			if (target[v] < 0 || pu_of[v] >= 0)
				continue;
			if (pass == 0 && c >= 0 && c < s->ncpu && cpuset_isset(&d->allot, c) &&
			    topo_llc_of(t, c) == target[v] && !cpuset_isset(&busy_cores, c))
				pu = c;
			if (pass == 1)
				CPUSET_FOREACH(cpu, &d->allot)
					if (pu < 0 && topo_llc_of(t, cpu) == target[v] && !cpuset_isset(&busy_cores, cpu))
						pu = cpu;
			if (pu < 0)
				continue;
			cpuset_or(&busy_cores, &busy_cores, &topo_get(t, TOPO_CORE, topo_core_of(t, pu))->cpus);
			pu_of[v] = pu;
			users[pu]++;
		}
	/* the others: where they ran when no busy vCPU has that core, else
	 * the least used PU of such a core, else the least used PU */
	for (v = 0; v < d->nvcpus; v++) {
		int pu = -1, c = sm[v].last_cpu;
		if (pu_of[v] >= 0)
			continue;
		if (c >= 0 && c < s->ncpu && cpuset_isset(&d->allot, c) && !cpuset_isset(&busy_cores, c))
			pu = c;
		for (int pass = 0; pass < 2 && pu < 0; pass++)
			CPUSET_FOREACH(cpu, &d->allot)
				if ((pass == 1 || !cpuset_isset(&busy_cores, cpu)) && (pu < 0 || users[cpu] < users[pu]))
					pu = cpu;
		if (pu < 0)
			continue;
		pu_of[v] = pu;
		users[pu]++;
	}
	for (v = 0; v < d->nvcpus; v++)
		if (pu_of[v] >= 0) {
			struct cpuset one;
			cpuset_zero(&one);
			cpuset_set(&one, pu_of[v]);
			dom_pin_set(d, &d->home[v], &one);
		}
	d->hint_periods = HOME_SETTLE_PERIODS + 1;
}

/* d's vCPUs onto the PUs of pus (whole cores, as many as it has): slots
 * core by core with siblings adjacent, homes and wanted pins, groups
 * released. */
static void
place_on(struct policy_state *s, const struct policy_host *h, struct dom *d, const struct cpuset *pus)
{
	int list[CPUSET_MAX], n = 0, cpu;     /* no allocation: nothing to fail */
	struct cpuset pool;

	for (int c = 0; c < topo_count(s->topo, TOPO_CORE); c++)
		CPUSET_FOREACH(cpu, &topo_get(s->topo, TOPO_CORE, c)->cpus)
			if (cpuset_isset(pus, cpu))
				list[n++] = cpu;
	d->allot = *pus;
	for (int v = 0; v < d->nvcpus; v++)
		dom_slot_set(d, v, list[v % n]);
	policy_dom_pool(s, h, d, &pool);
	for (int v = 0; v < d->nvcpus; v++)
		placement_set_home(s, d, v, &pool);
	for (int g = 0; g < d->ngroups; g++)
		groups_release(d, &d->groups[g]);
	hint_busy(s, d);
	for (int v = 0; v < d->nvcpus; v++)
		dom_pin_share(d, &d->want[v], d->home[v]);
	step_rebuild_ownership(s);
}

bool
placement_respread(struct policy_state *s, struct dom *d)
{
	hint_busy(s, d);
	if (d->hint_periods == 0)
		return false;
	for (int g = 0; g < d->ngroups; g++)
		groups_release(d, &d->groups[g]);
	for (int v = 0; v < d->nvcpus; v++)
		dom_pin_share(d, &d->want[v], d->home[v]);
	return true;
}

void
placement_hint_tick(struct policy_state *s, struct dom *d)
{
	if (d->hint_periods <= 0 || --d->hint_periods > 0)
		return;
	for (int v = 0; v < d->nvcpus; v++) {
		bool held = cpuset_equal(d->want[v], d->home[v]);
		dom_pin_set(d, &d->home[v], &d->allot);
		if (held)
			dom_pin_share(d, &d->want[v], d->home[v]);
	}
	(void)s;
}

static bool
reshapable(const struct dom *d)
{
	return d->isolated && d->state == DOM_PLACED && d->annot->topology != POLICY_TOPO_MATCH;
}

int
placement_plan_llcs(const struct policy_state *s, const struct policy_host *h, const struct dom *d, int want)
{
	struct cpuset out;

	return reshapable(d) ? home_plan(s, h, d, want, -1, &out) : 0;
}

int
placement_reshape(struct policy_state *s, const struct policy_host *h, struct dom *d, int want)
{
	struct cpuset out;
	int llcs = reshapable(d) ? home_plan(s, h, d, want, -1, &out) : 0;

	if (llcs > 0)
		place_on(s, h, d, &out);
	return llcs;
}

bool
placement_restore(struct policy_state *s, const struct policy_host *h, struct dom *d,
                  const struct cpuset *allot)
{
	int own = placement_dom_index(s, d), cpu;

	if (!d->isolated || d->state != DOM_PLACED || own < 0 || cpuset_empty(allot) ||
	    cpuset_count(allot) != cpuset_count(&d->allot))
		return false;
	CPUSET_FOREACH(cpu, allot)
		if (!core_usable(s, h, own, topo_core_of(s->topo, cpu)))
			return false;
	place_on(s, h, d, allot);
	return true;
}

/* --- room for an isolated domain ------------------------ */

/* Cores of LLC l the new isolated domain d could have once the widened
 * homes there moved out (free cores and theirs, inside d's CPU bound),
 * and the vCPUs those homes have (their moves), into *moves. */
static int
llc_room(const struct policy_state *s, const struct policy_host *h, const struct dom *d, int l, int *moves)
{
	const struct topo_node *ln = topo_get(s->topo, TOPO_LLC, l);
	int seen[CPUSET_MAX], nseen = 0, n = 0;     /* owners: at most one per core */

	*moves = 0;
	for (int i = 0; i < ln->nchildren; i++) {
		const struct topo_node *core = ln->children[i];
		int o, j;
		if (core->type != TOPO_CORE || !policy_dom_in_bound(d, &core->cpus) ||
		    cpuset_intersects(&core->cpus, &h->reserved) ||
		    (!cpuset_empty(&h->shared_pool) && cpuset_intersects(&core->cpus, &h->shared_pool)))
			continue;
		o = s->core_owner[core->index];
		if (o >= 0 && (!s->doms[o]->hc.widened || !reshapable(s->doms[o])))
			continue;
		if (o >= 0) {
			for (j = 0; j < nseen && seen[j] != o; j++)
				;
			if (j == nseen && nseen < CPUSET_MAX) {
				seen[nseen++] = o;
				*moves += s->doms[o]->nvcpus;
			}
		}
		n++;
	}
	return n;
}

#define ROOM_HOMES 16    /* widened homes moved out of one LLC at most */

/* A new isolated domain d that would fit the whole cores of one LLC finds
 * no LLC with that many free: the widened homes of earlier isolated
 * domains in the LLC where that moves the fewest vCPUs (within the step's
 * move budget) are spread over their other LLCs instead, keeping their
 * number of cores. Returns true when it made the room. */
bool
placement_make_room(struct policy_state *s, const struct policy_host *h, struct dom *d, struct policy_plan *plan)
{
	int spc = placement_slots_per_core(s, h), need = (d->nvcpus + spc - 1) / spc, best = -1, best_moves = 0;
	int cores[CPUSET_MAX + 1];

	if (!d->isolated || s->nllc > CPUSET_MAX || topo_count(s->topo, TOPO_CORE) > CPUSET_MAX)
		return false;
	for (int l = 0; l < s->nllc; l++) {
		int moves, room;
		if (placement_llc_free_cores(s, h, d, l, cores) >= need)
			return false;           /* it fits as it is */
		room = llc_room(s, h, d, l, &moves);
		if (room >= need && moves > 0 && moves <= s->moves_left && (best < 0 || moves < best_moves)) {
			best = l;
			best_moves = moves;
		}
	}
	if (best < 0)
		return false;
	/* each widened home in the LLC, spread over as many LLCs without it;
	 * undone when one cannot be */
	struct cpuset before[ROOM_HOMES];
	int moved[ROOM_HOMES], nmoved = 0;
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *w = s->doms[i];
		struct cpuset out;
		if (w->state != DOM_PLACED || !w->isolated || !cpuset_intersects(&w->allot, policy_llc_cpus(s, best)))
			continue;
		int want = placement_llcs(s, &w->allot);
		if (nmoved == ROOM_HOMES || home_plan(s, h, w, want, best, &out) == 0) {
			while (nmoved-- > 0)
				place_on(s, h, s->doms[moved[nmoved]], &before[nmoved]);
			return false;
		}
		before[nmoved] = w->allot;
		moved[nmoved++] = i;
		place_on(s, h, w, &out);
	}
	s->moves_left -= best_moves;
	for (int i = 0; i < nmoved; i++) {
		struct dom *w = s->doms[moved[i]];
		char from[64], to[64], why[POLICY_REASON + 128];
		policy_pin_llcs(s, &before[i], from, sizeof(from));
		policy_pin_llcs(s, &w->allot, to, sizeof(to));
		snprintf(why, sizeof(why), "home rearranged from %s to %s: LLC %d left whole for isolated domain "
		    "'%s', which needs %d whole cores of one LLC", from, to, best, d->name, need);
		w->moves += (uint64_t)w->nvcpus;
		home_rearranged(s, w, why);
		policy_plan_add(s, plan, POLICY_ACT_BACKOFF, w, -1, &w->allot, "%s", why);
	}
	return true;
}

