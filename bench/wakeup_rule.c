// SPDX-License-Identifier: GPL-2.0-or-later
/* bench/wakeup_rule: cost of one update of the wakeup rule (policy/wakeups.c:
 * rates, background, links and the communities that are its groups) for
 * one domain, next to a baseline that only sums the period's edges once.
 *
 * Cases (100 ms periods, seeded draws; the producers' caps applied: each
 * waker's strongest POLICY_WAKEUP_EDGES_VCPU edges):
 *   pair8     an 8-vCPU domain, one ping-pong pair at 2,000/s and 20/s
 *             background wakeups per vCPU
 *   xs128     a 128-vCPU domain, an 8-thread barrier group at 1,000/s
 *   clique128 a 128-vCPU domain, a 64-thread barrier clique at 1,000/s
 *             (about 3,300 edges a period)
 * Prints per case the p50 of each and their ratio.
 * Usage: wakeup_rule [PERIODS] (default 300).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "wakeups.h"
#include "../sim/rng.h"

#define PERIOD_NS 100000000ull

struct gen {
	int n, ngroup, stride;
	double hz;
	struct sim_rng rng;
	uint32_t *cnt;
};

static int
by_count(const void *x, const void *y)
{
	const struct policy_wakeup_edge *a = x, *b = y;

	return a->count != b->count ? (a->count > b->count ? -1 : 1) : (a->wakee > b->wakee) - (a->wakee < b->wakee);
}

/* One period's edges, as a producer hands them over. */
static int
draw(struct gen *g, struct policy_wakeup_edge *e, uint64_t *dropped)
{
	int n = g->n, m = 0;

	memset(g->cnt, 0, sizeof(uint32_t) * (size_t)n * (size_t)n);
	for (int v = 0; v < n; v++) {
		uint64_t k = sim_rng_poisson(&g->rng, 2);
		for (uint64_t j = 0; j < k; j++) {
			int u = (int)sim_rng_below(&g->rng, (uint32_t)n - 1);
			g->cnt[v * n + (u >= v ? u + 1 : u)]++;
		}
	}
	for (int i = 0; i < g->ngroup; i++) {
		uint64_t k = sim_rng_poisson(&g->rng, g->hz * 0.1);
		for (uint64_t j = 0; j < k; j++) {
			int p = (int)sim_rng_below(&g->rng, (uint32_t)g->ngroup - 1);
			g->cnt[i * g->stride * n + (p >= i ? p + 1 : p) * g->stride]++;
		}
	}
	*dropped = 0;
	for (int a = 0; a < n; a++) {
		int first = m;
		for (int b = 0; b < n; b++)
			if (g->cnt[a * n + b] && m < POLICY_WAKEUP_EDGES)
				e[m++] = (struct policy_wakeup_edge){ a, b, g->cnt[a * n + b] };
		if (m - first > POLICY_WAKEUP_EDGES_VCPU) {
			qsort(e + first, (size_t)(m - first), sizeof(*e), by_count);
			for (int i = first + POLICY_WAKEUP_EDGES_VCPU; i < m; i++)
				*dropped += e[i].count;
			m = first + POLICY_WAKEUP_EDGES_VCPU;
		}
	}
	return m;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

int
main(int argc, char **argv)
{
	static const struct { const char *name; int n, ngroup, stride; double hz; } cases[] = {
		{ "pair8", 8, 2, 3, 2000 }, { "xs128", 128, 8, 16, 1000 }, { "clique128", 128, 64, 2, 1000 },
	};
	static struct policy_wakeup_edge e[POLICY_WAKEUP_EDGES];
	int periods = argc > 1 ? atoi(argv[1]) : 300;

	if (periods < 1) {
		fprintf(stderr, "wakeup_rule: PERIODS must be >= 1\n");
		return 2;
	}
	printf("%-10s %8s %12s %12s %8s %7s\n", "case", "edges", "update p50", "baseline p50", "ratio", "groups");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gen g = { .n = cases[c].n, .ngroup = cases[c].ngroup, .stride = cases[c].stride,
			.hz = cases[c].hz };
		struct wakeups_state *s = wakeups_state_new();
		uint64_t *tu = calloc((size_t)periods, sizeof(uint64_t)), *tb = calloc((size_t)periods, sizeof(uint64_t));
		struct cpuset groups[WAKEUPS_MAX_GROUPS];
		long edges = 0;
		int ng = 0;
		g.cnt = calloc((size_t)g.n * (size_t)g.n, sizeof(uint32_t));
		if (s == NULL || tu == NULL || tb == NULL || g.cnt == NULL)
			return 1;
		sim_rng_seed(&g.rng, 1);
		for (int p = 0; p < 50 + periods; p++) {       /* 5 s to form first */
			uint64_t dropped, sum = 0;
			int m = draw(&g, e, &dropped);
			struct policy_wakeups w = { .period_ns = PERIOD_NS, .nedges = m, .edges = e, .dropped = dropped };
			uint64_t t0 = llcd_mono_ns();
			for (int i = 0; i < m; i++)
				sum += e[i].count + (uint64_t)e[i].waker;
			sink += sum;
			uint64_t t1 = llcd_mono_ns();
			if (wakeups_update(s, g.n, &w, PERIOD_NS, (uint64_t)(p + 1) * PERIOD_NS) < 0)
				return 1;
			ng = wakeups_groups(s, groups, WAKEUPS_MAX_GROUPS);
			uint64_t t2 = llcd_mono_ns();
			if (p >= 50) {
				tb[p - 50] = t1 - t0;
				tu[p - 50] = t2 - t1;
				edges += m;
			}
		}
		qsort(tu, (size_t)periods, sizeof(*tu), cmp_u64);
		qsort(tb, (size_t)periods, sizeof(*tb), cmp_u64);
		double u = (double)tu[periods / 2] / 1e3, b = (double)tb[periods / 2] / 1e3;
		printf("%-10s %8ld %9.1f us %9.2f us %7.0fx %7d\n", cases[c].name, edges / periods, u, b,
		    b > 0 ? u / b : 0, ng);
		wakeups_state_free(s);
		free(tu);
		free(tb);
		free(g.cnt);
	}
	return 0;
}
