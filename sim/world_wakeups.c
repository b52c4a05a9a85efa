// SPDX-License-Identifier: GPL-2.0-or-later
/* world_wakeups.c - the wakeup trace of llcsim's world (world_int.h,
 * host.wakeup_trace): each period's waker/wakee draws per domain, turned
 * into the edges the in-kernel tracer would report. */
#include "world_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- wakeups (host.wakeup_trace) ----------------------------------------- */

static int
wdraw_push(struct sim_world *w, int waker, int wakee)
{
	if (w->wdraw_n == w->wdraw_cap) {
		size_t ncap = w->wdraw_cap ? w->wdraw_cap * 2 : 4096;
		uint64_t *n = realloc(w->wdraw, sizeof(*n) * ncap);
		if (n == NULL)
			return -1;
		w->wdraw = n;
		uint32_t *c = realloc(w->wcount, sizeof(*c) * ncap);
		if (c == NULL)
			return -1;
		w->wcount = c;
		w->wdraw_cap = ncap;
	}
	w->wdraw[w->wdraw_n++] = (uint64_t)waker << 32 | (uint32_t)wakee;
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A hash of a pair in a period (splitmix64's finaliser): the tie-break
 * between edges of equal counts. */
static uint64_t
pair_hash(long period, const struct policy_wakeup_edge *e)
{
	uint64_t z = (uint64_t)period << 40 ^ (uint64_t)e->waker << 20 ^ (uint64_t)e->wakee;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Strongest first, ties by pair_hash() (deterministic, no vCPU favoured);
 * arg: the period. */
static int
cmp_edge_count(const void *a, const void *b, void *arg)
{
	const struct policy_wakeup_edge *x = a, *y = b;
	long period = *(const long *)arg;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	uint64_t hx = pair_hash(period, x), hy = pair_hash(period, y);
	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->waker != y->waker)
		return x->waker < y->waker ? -1 : 1;
	return (x->wakee > y->wakee) - (x->wakee < y->wakee);
}

static int
cmp_edge_pair(const void *a, const void *b)
{
	const struct policy_wakeup_edge *x = a, *y = b;

	if (x->waker != y->waker)
		return x->waker < y->waker ? -1 : 1;
	return (x->wakee > y->wakee) - (x->wakee < y->wakee);
}

/* One domain's draws (spec: a busy thread of a group with wakeups_hz w
 * sends Poisson(w * period) wakeups, each to a partner drawn uniformly
 * from the group's other busy threads; every vCPU thread sends
 * Poisson(wakeup_noise_hz * period) to uniformly drawn other vCPUs of its
 * domain), aggregated into edges. */
static void
wakeups_domain(struct sim_world *w, int d, double t)
{
	const struct sim_domain *sd = &w->sc->domains[d];
	const struct sim_dom_state *D = &w->dom[d];
	struct sim_wake *K = &w->wake[d];
	const double busy = w->sc->model.busy_util;
	int n = sd->nvcpus, *mates = w->scratch, nm;
	uint64_t oom = 0;
	size_t i, j;

	K->nedges = 0;
	K->dropped = 0;
	w->wdraw_n = 0;
	if (!D->active || n < 2)
		return;
	for (int g = 0; g < w->sc->ngroups; g++) {
		const struct sim_group *G = &w->sc->groups[g];
		int v;
		if (G->domain != d)
			continue;
		nm = 0;
		CPUSET_FOREACH(v, &G->vcpus) {
			const struct sim_thread *th = &w->threads[D->base + v];
			if (th->group == g && th->demand >= busy)
				mates[nm++] = v;
		}
		if (nm < 2)
			continue;
		for (int a = 0; a < nm; a++) {
			const struct sim_thread *th = &w->threads[D->base + mates[a]];
			uint64_t k = th->wake_hz > 0 ? sim_rng_poisson(&w->wrng, th->wake_hz * w->dt_s) : 0;
			for (uint64_t x = 0; x < k; x++) {
				int b = (int)sim_rng_below(&w->wrng, (uint32_t)nm - 1);
				if (wdraw_push(w, mates[a], mates[b >= a ? b + 1 : b]) < 0)
					oom++;
			}
		}
	}
	/* `wakes`: each vCPU of an active entry, whatever its util, to a
	 * vCPU of the wakes' set other than itself */
	for (int e = 0; e < sd->nload; e++) {
		const struct sim_load *l = &sd->load[e];
		int v;
		if (l->nwakes == 0 || !(t + 1e-9 >= l->from_s && t + 1e-9 < l->to_s))
			continue;
		CPUSET_FOREACH(v, &l->vcpus) {
			for (int x0 = 0; x0 < l->nwakes; x0++) {
				const struct sim_wakes *K2 = &l->wakes[x0];
				bool self = cpuset_isset(&K2->vcpus, v);
				int m = K2->n - self, at = 0;
				if (m <= 0 || K2->hz <= 0)
					continue;
				while (self && K2->list[at] != v)
					at++;
				uint64_t k = sim_rng_poisson(&w->wrng, K2->hz * w->dt_s);
				for (uint64_t x = 0; x < k; x++) {
					int b = (int)sim_rng_below(&w->wrng, (uint32_t)m);
					if (wdraw_push(w, v, K2->list[self && b >= at ? b + 1 : b]) < 0)
						oom++;
				}
			}
		}
	}
	for (int v = 0; v < n && w->sc->wakeup_noise_hz > 0; v++) {
		uint64_t k = sim_rng_poisson(&w->wrng, w->sc->wakeup_noise_hz * w->dt_s);
		for (uint64_t x = 0; x < k; x++) {
			int u = (int)sim_rng_below(&w->wrng, (uint32_t)n - 1);
			if (wdraw_push(w, v, u >= v ? u + 1 : u) < 0)
				oom++;
		}
	}
	/* aggregate (sorted draws: equal pairs are adjacent), in place */
	qsort(w->wdraw, w->wdraw_n, sizeof(*w->wdraw), cmp_u64);
	size_t nd = 0;
	for (i = 0; i < w->wdraw_n; i = j) {
		for (j = i; j < w->wdraw_n && w->wdraw[j] == w->wdraw[i]; j++)
			;
		w->wdraw[nd++] = w->wdraw[i];
		w->wcount[nd - 1] = (uint32_t)(j - i);
	}
	/* as llcd's tracer hands them over (wakeups.h): each waker's
	 * strongest POLICY_WAKEUP_EDGES_VCPU, at most POLICY_WAKEUP_EDGES in
	 * all, the rest counted as dropped; ties broken by a hash of the pair
	 * and the period, so that no vCPU number is favoured */
	size_t kept = 0;
	for (i = 0; i < nd; i = j) {
		uint32_t waker = (uint32_t)(w->wdraw[i] >> 32);
		for (j = i; j < nd && (uint32_t)(w->wdraw[j] >> 32) == waker; j++)
			;
		size_t run = j - i;
		struct policy_wakeup_edge *tmp = K->edges;     /* scratch: run < nvcpus */
		for (size_t x = 0; x < run; x++)
			tmp[x] = (struct policy_wakeup_edge){ (int)waker, (int)(uint32_t)w->wdraw[i + x],
				w->wcount[i + x] };
		if (run > POLICY_WAKEUP_EDGES_VCPU) {
			qsort_r(tmp, run, sizeof(*tmp), cmp_edge_count, &w->period);
			for (size_t x = POLICY_WAKEUP_EDGES_VCPU; x < run; x++)
				K->dropped += tmp[x].count;
			run = POLICY_WAKEUP_EDGES_VCPU;
		}
		for (size_t x = 0; x < run; x++) {
			w->wdraw[kept] = (uint64_t)waker << 32 | (uint32_t)tmp[x].wakee;
			w->wcount[kept++] = tmp[x].count;
		}
	}
	nd = kept;
	if (nd > POLICY_WAKEUP_EDGES) {
		struct policy_wakeup_edge *all = malloc(sizeof(*all) * nd);
		if (all == NULL) {
			for (i = 0; i < nd; i++)
				K->dropped += w->wcount[i];
			nd = 0;
		} else {
			for (i = 0; i < nd; i++)
				all[i] = (struct policy_wakeup_edge){ (int)(w->wdraw[i] >> 32),
					(int)(uint32_t)w->wdraw[i], w->wcount[i] };
			qsort_r(all, nd, sizeof(*all), cmp_edge_count, &w->period);
			for (i = POLICY_WAKEUP_EDGES; i < nd; i++)
				K->dropped += all[i].count;
			memcpy(K->edges, all, sizeof(*all) * POLICY_WAKEUP_EDGES);
			free(all);
			nd = POLICY_WAKEUP_EDGES;
		}
	} else {
		for (i = 0; i < nd; i++)
			K->edges[i] = (struct policy_wakeup_edge){ (int)(w->wdraw[i] >> 32),
				(int)(uint32_t)w->wdraw[i], w->wcount[i] };
	}
	struct policy_wakeup_edge *e = K->edges;
	int ne = (int)nd;
	qsort(e, (size_t)ne, sizeof(*e), cmp_edge_pair);
	K->nedges = ne;
	K->dropped += oom;
	if (w->trace) {
		for (int k = 0; k < ne; k++)
			fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"waker\":%d,\"wakee\":%d,"
			    "\"n\":%u}\n", t, sd->name, e[k].waker, e[k].wakee, e[k].count);
		if (K->dropped)
			fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"wakeups_dropped\":%llu}\n",
			    t, sd->name, (unsigned long long)K->dropped);
	}
}

void
world_wakeups(struct sim_world *w, double t)
{
	if (w->wake == NULL)
		return;
	for (int d = 0; d < w->sc->ndomains; d++)
		wakeups_domain(w, d, t);
}
