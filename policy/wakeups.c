// SPDX-License-Identifier: GPL-2.0-or-later
/* wakeups.c - vCPU groups inferred from wakeups between vCPU threads.
 *
 * Pure: no I/O, no clock (now comes in), no globals. The rule is described
 * in wakeups.h and docs/design.md; the constants are in wakeups.h.
 *
 * State per domain: a table of tracked unordered pairs sorted by key
 * (a << 16 | b), rebuilt each period by merging it with the period's edges
 * (sorted the same way), so that one update costs O(P log P) for P tracked
 * pairs plus edges, and memory stays bounded by WAKEUPS_PAIRS.
 */
#include "wakeups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	uint32_t key;                   /* a << 16 | b, a < b */
	double ab, ba;                  /* EWMA per direction, Hz */
	bool candidate, formed;
	uint64_t since_ns;              /* candidate: since; formed and cold: cold since */
	bool cold;                      /* formed and below the leave level */
};

struct wakeups_state {
	int nvcpus;
	bool started;
	double total_hz;                /* EWMA of all wakeups (edges + dropped) */
	double bg_hz;                   /* background per pair, last update */
	uint64_t dropped;
	int npairs, cap;
	struct pair *pairs, *scratch;   /* cap entries each */
	struct in_edge { uint32_t key; uint64_t ab, ba; } *in;    /* POLICY_WAKEUP_EDGES */
	int *off, *fill;                /* per-vCPU partner lists (build_partners) */
	double *rates;
};

static int
pair_a(uint32_t key)
{
	return (int)(key >> 16);
}

static int
pair_b(uint32_t key)
{
	return (int)(key & 0xffff);
}

static double
pair_rate(const struct pair *p)
{
	return p->ab + p->ba;
}

struct wakeups_state *
wakeups_state_new(void)
{
	return calloc(1, sizeof(struct wakeups_state));
}

/* Frees the state's work buffers and leaves them NULL. */
static void
free_buffers(struct wakeups_state *s)
{
	free(s->pairs);
	free(s->scratch);
	free(s->in);
	free(s->off);
	free(s->fill);
	free(s->rates);
	s->pairs = s->scratch = NULL;
	s->in = NULL;
	s->off = s->fill = NULL;
	s->rates = NULL;
}

void
wakeups_state_free(struct wakeups_state *s)
{
	if (s == NULL)
		return;
	free_buffers(s);
	free(s);
}

int
wakeups_check(const struct policy_wakeups *w, int nvcpus, struct llcd_err *err)
{
	if (w == NULL)
		return 0;
	if (w->period_ns == 0)
		return llcd_err_set(err, "wakeups: period of 0 ns");
	if (w->nedges < 0 || w->nedges > POLICY_WAKEUP_EDGES)
		return llcd_err_set(err, "wakeups: %d edges (allowed 0-%d)", w->nedges,
		    POLICY_WAKEUP_EDGES);
	if (w->nedges > 0 && w->edges == NULL)
		return llcd_err_set(err, "wakeups: %d edges but no edge list", w->nedges);
	for (int i = 0; i < w->nedges; i++) {
		const struct policy_wakeup_edge *e = &w->edges[i];
		if (e->waker < 0 || e->waker >= nvcpus || e->wakee < 0 || e->wakee >= nvcpus)
			return llcd_err_set(err, "wakeups: edge %d: vCPU %d -> %d outside 0-%d",
			    i, e->waker, e->wakee, nvcpus - 1);
	}
	return 0;
}

static int
cmp_in(const void *x, const void *y)
{
	uint32_t a = ((const struct in_edge *)x)->key, b = ((const struct in_edge *)y)->key;

	return a < b ? -1 : a > b;
}

/* Descending by rate, ties by key (deterministic). */
static int
cmp_rate_desc(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;
	double a = pair_rate(p), b = pair_rate(q);

	if (a != b)
		return a > b ? -1 : 1;
	return p->key < q->key ? -1 : p->key > q->key;
}

static int
cmp_key(const void *x, const void *y)
{
	uint32_t a = ((const struct pair *)x)->key, b = ((const struct pair *)y)->key;

	return a < b ? -1 : a > b;
}

static void
forget(struct wakeups_state *s, int nvcpus)
{
	s->nvcpus = nvcpus;
	s->started = false;
	s->total_hz = s->bg_hz = 0;
	s->npairs = 0;
}

/* The pair count of the domain, n(n-1)/2. */
static double
domain_pairs(int n)
{
	return (double)n * (double)(n - 1) / 2.0;
}

/* Aggregate the period's edges into unordered pairs, sorted; returns how
 * many; *sum gets the summed counts (self-wakeups left out). */
static int
aggregate(struct wakeups_state *s, const struct policy_wakeups *w, uint64_t *sum)
{
	int n = 0, m = 0;

	*sum = 0;
	for (int i = 0; w != NULL && i < w->nedges; i++) {
		const struct policy_wakeup_edge *e = &w->edges[i];
		int a = e->waker < e->wakee ? e->waker : e->wakee;
		int b = e->waker < e->wakee ? e->wakee : e->waker;
		if (a == b || e->count == 0)
			continue;
		s->in[n].key = (uint32_t)a << 16 | (uint32_t)b;
		s->in[n].ab = e->waker == a ? e->count : 0;
		s->in[n].ba = e->waker == a ? 0 : e->count;
		*sum += e->count;
		n++;
	}
	qsort(s->in, (size_t)n, sizeof(s->in[0]), cmp_in);
	for (int i = 0; i < n; i++) {
		if (m > 0 && s->in[m - 1].key == s->in[i].key) {
			s->in[m - 1].ab += s->in[i].ab;
			s->in[m - 1].ba += s->in[i].ba;
		} else {
			s->in[m++] = s->in[i];
		}
	}
	return m;
}

static int
cmp_double_desc(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a > b ? -1 : a < b;
}

/* Per-vCPU partner rates of this update, sorted descending (built once,
 * on the first candidate check): off[v]..off[v+1] in rates. */
static void
build_partners(struct wakeups_state *s, const struct pair *pairs, int np, int nvcpus)
{
	memset(s->off, 0, sizeof(*s->off) * (size_t)(nvcpus + 1));
	for (int i = 0; i < np; i++) {
		s->off[pair_a(pairs[i].key) + 1]++;
		s->off[pair_b(pairs[i].key) + 1]++;
	}
	for (int v = 0; v < nvcpus; v++) {
		s->off[v + 1] += s->off[v];
		s->fill[v] = s->off[v];
	}
	for (int i = 0; i < np; i++) {
		s->rates[s->fill[pair_a(pairs[i].key)]++] = pair_rate(&pairs[i]);
		s->rates[s->fill[pair_b(pairs[i].key)]++] = pair_rate(&pairs[i]);
	}
	for (int v = 0; v < nvcpus; v++)
		qsort(s->rates + s->off[v], (size_t)(s->off[v + 1] - s->off[v]), sizeof(double),
		    cmp_double_desc);
}

/* The median rate of v's pairs with every partner but the one whose pair
 * runs at r_ex (n - 2 of them; untracked ones at untracked_hz): a vCPU that
 * wakes everyone (a hub) makes none of its pairs stand out. */
static double
partner_median(const struct wakeups_state *s, int v, double r_ex, int nvcpus, double untracked_hz)
{
	const double *L = s->rates + s->off[v];
	int m = s->off[v + 1] - s->off[v], mid = (nvcpus - 2) / 2;

	if (nvcpus - 2 <= 0)
		return 0;
	if (m - 1 <= mid)               /* the median is an untracked partner */
		return untracked_hz;
	/* L without one occurrence of r_ex: shifted when r_ex is at or before mid */
	return r_ex >= L[mid] ? L[mid + 1] : L[mid];
}

/* The rate of v's strongest pair in this update (build_partners). A pair
 * far weaker than that is a side channel of v's real partner, e.g. the
 * vCPU taking the guest's timer waking a busy pair now and then: it must
 * not pull its other vCPU into the group. */
static double
partner_max(const struct wakeups_state *s, int v)
{
	return s->off[v + 1] > s->off[v] ? s->rates[s->off[v]] : 0;
}

int
wakeups_update(struct wakeups_state *s, int nvcpus, const struct policy_wakeups *w,
               uint64_t period_ns, uint64_t now_ns)
{
	uint64_t sum = 0;
	int nin, n = 0;
	double dt, alpha, untracked_hz, npairs = domain_pairs(nvcpus);

	if (s->pairs == NULL) {
		s->pairs = calloc(WAKEUPS_PAIRS, sizeof(*s->pairs));
		s->scratch = calloc(WAKEUPS_PAIRS + POLICY_WAKEUP_EDGES, sizeof(*s->scratch));
		s->in = calloc(POLICY_WAKEUP_EDGES, sizeof(*s->in));
		s->off = calloc(CPUSET_MAX + 1, sizeof(*s->off));
		s->fill = calloc(CPUSET_MAX, sizeof(*s->fill));
		s->rates = calloc(2 * (WAKEUPS_PAIRS + POLICY_WAKEUP_EDGES), sizeof(*s->rates));
		if (s->pairs == NULL || s->scratch == NULL || s->in == NULL || s->off == NULL ||
		    s->fill == NULL || s->rates == NULL) {
			free_buffers(s);
			return -1;
		}
		s->cap = WAKEUPS_PAIRS;
	}
	if (nvcpus != s->nvcpus)
		forget(s, nvcpus);
	if (w != NULL)
		period_ns = w->period_ns;
	if (period_ns == 0 || nvcpus < 2)
		return 0;
	dt = (double)period_ns / 1e9;
	alpha = 1.0 - exp(-dt / WAKEUPS_TAU_S);
	nin = aggregate(s, w, &sum);
	if (w != NULL) {
		sum += w->dropped;
		s->dropped += w->dropped;
	}

	/* Untracked pairs run at the mean of what the tracked ones leave. */
	{
		double tracked = 0;
		for (int i = 0; i < s->npairs; i++)
			tracked += pair_rate(&s->pairs[i]);
		untracked_hz = npairs > s->npairs ? fmax(0, s->total_hz - tracked) / (npairs - s->npairs) : 0;
	}
	if (!s->started) {
		s->total_hz = (double)sum / dt;         /* the first period seeds the EWMA */
		untracked_hz = 0;
		s->started = true;
	} else {
		s->total_hz += alpha * ((double)sum / dt - s->total_hz);
	}

	/* Merge tracked pairs with this period's pairs. */
	for (int i = 0, j = 0; i < s->npairs || j < nin;) {
		struct pair p;
		uint64_t cab = 0, cba = 0;
		if (j >= nin || (i < s->npairs && s->pairs[i].key < s->in[j].key)) {
			p = s->pairs[i++];
		} else {
			if (i < s->npairs && s->pairs[i].key == s->in[j].key) {
				p = s->pairs[i++];
			} else {
				memset(&p, 0, sizeof(p));
				p.key = s->in[j].key;
				p.ab = p.ba = untracked_hz / 2;
			}
			cab = s->in[j].ab;
			cba = s->in[j].ba;
			j++;
		}
		p.ab += alpha * ((double)cab / dt - p.ab);
		p.ba += alpha * ((double)cba / dt - p.ba);
		if (pair_rate(&p) < WAKEUPS_FORGET_HZ && !p.candidate && !p.formed)
			continue;
		s->scratch[n++] = p;
	}

	/* Rank; the background is the mean of the pairs below the deepest
	 * rank k that stands WAKEUPS_ENTER_FACTOR above them. */
	qsort(s->scratch, (size_t)n, sizeof(s->scratch[0]), cmp_rate_desc);
	{
		double prefix = 0, bg = npairs > 0 ? s->total_hz / npairs : 0;
		int k = 0;
		for (int i = 0; i < n && (double)(i + 1) <= npairs / 2; i++) {
			prefix += pair_rate(&s->scratch[i]);
			double rest = fmax(0, s->total_hz - prefix) / (npairs - (double)(i + 1));
			if (pair_rate(&s->scratch[i]) >= WAKEUPS_ENTER_FACTOR * rest) {
				k = i + 1;
				bg = rest;
			}
		}
		if (k == 0 && npairs <= 1)
			bg = INFINITY;  /* one pair: nothing to compare it with */
		s->bg_hz = bg;
		double leave = fmax(WAKEUPS_LEAVE_FACTOR * bg, WAKEUPS_LEAVE_MIN_HZ);
		bool built = false;
		for (int i = 0; i < n; i++) {
			struct pair *p = &s->scratch[i];
			double r = pair_rate(p);
			bool enter = i < k && r >= WAKEUPS_ENTER_MIN_HZ && isfinite(bg) &&
			    !p->formed && !p->candidate;
			if (enter && !built) {
				build_partners(s, s->scratch, n, nvcpus);
				built = true;
			}
			enter = enter &&
			    r >= WAKEUPS_ENTER_FACTOR * partner_median(s, pair_a(p->key), r, nvcpus, untracked_hz) &&
			    r >= WAKEUPS_ENTER_FACTOR * partner_median(s, pair_b(p->key), r, nvcpus, untracked_hz) &&
			    r * WAKEUPS_LINK_RATIO >= partner_max(s, pair_a(p->key)) &&
			    r * WAKEUPS_LINK_RATIO >= partner_max(s, pair_b(p->key));
			bool stay = r >= leave;
			if (p->formed) {
				if (stay) {
					p->cold = false;
				} else if (!p->cold) {
					p->cold = true;
					p->since_ns = now_ns;
				} else if ((double)(now_ns - p->since_ns) >= WAKEUPS_DISSOLVE_S * 1e9) {
					p->formed = p->cold = p->candidate = false;
				}
			} else if (p->candidate) {
				if (!stay)
					p->candidate = false;
				else if ((double)(now_ns - p->since_ns) + 1.0 >= WAKEUPS_FORM_S * 1e9) {
					p->formed = true;
					p->cold = false;
				}
			} else if (enter) {
				p->candidate = true;
				p->since_ns = now_ns - (period_ns < now_ns ? period_ns : now_ns);
			}
		}
	}
	/* Keep the strongest cap pairs, formed ones first. */
	if (n > s->cap) {
		int m = 0;
		for (int i = 0; i < n && m < s->cap; i++)
			if (s->scratch[i].formed || s->scratch[i].candidate)
				s->pairs[m++] = s->scratch[i];
		for (int i = 0; i < n && m < s->cap; i++)
			if (!s->scratch[i].formed && !s->scratch[i].candidate)
				s->pairs[m++] = s->scratch[i];
		n = m;
	} else {
		memcpy(s->pairs, s->scratch, sizeof(*s->pairs) * (size_t)n);
	}
	qsort(s->pairs, (size_t)n, sizeof(s->pairs[0]), cmp_key);
	s->npairs = n;
	return 0;
}

static int
uf_find(int *parent, int x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

int
wakeups_groups(const struct wakeups_state *s, struct cpuset *out, int max)
{
	int parent[CPUSET_MAX], ng = 0, n = s->nvcpus;
	bool in[CPUSET_MAX];

	if (n < 2 || n > CPUSET_MAX)
		return 0;
	for (int v = 0; v < n; v++) {
		parent[v] = v;
		in[v] = false;
	}
	for (int i = 0; i < s->npairs; i++) {
		const struct pair *p = &s->pairs[i];
		if (!p->formed)
			continue;
		int a = uf_find(parent, pair_a(p->key)), b = uf_find(parent, pair_b(p->key));
		in[pair_a(p->key)] = in[pair_b(p->key)] = true;
		if (a != b)
			parent[a > b ? a : b] = a < b ? a : b;
	}
	/* roots are each component's lowest vCPU: walk vCPUs in order */
	for (int v = 0; v < n && ng < max; v++) {
		if (!in[v] || uf_find(parent, v) != v)
			continue;
		cpuset_zero(&out[ng]);
		for (int u = v; u < n; u++)
			if (in[u] && uf_find(parent, u) == v)
				cpuset_set(&out[ng], u);
		ng++;
	}
	return ng;
}

int
wakeups_pairs(const struct wakeups_state *s, struct wakeups_pair_info *out, int max)
{
	struct pair *tmp;
	int n = s->npairs < max ? s->npairs : max;

	if (n <= 0)
		return 0;
	tmp = malloc(sizeof(*tmp) * (size_t)s->npairs);
	if (tmp == NULL)
		return 0;
	memcpy(tmp, s->pairs, sizeof(*tmp) * (size_t)s->npairs);
	qsort(tmp, (size_t)s->npairs, sizeof(*tmp), cmp_rate_desc);
	for (int i = 0; i < n; i++) {
		out[i] = (struct wakeups_pair_info){
			.a = pair_a(tmp[i].key), .b = pair_b(tmp[i].key),
			.rate_hz = pair_rate(&tmp[i]), .ab_hz = tmp[i].ab, .ba_hz = tmp[i].ba,
			.candidate = tmp[i].candidate, .formed = tmp[i].formed,
		};
	}
	free(tmp);
	return n;
}

double
wakeups_background_hz(const struct wakeups_state *s)
{
	return s->bg_hz;
}

double
wakeups_total_hz(const struct wakeups_state *s)
{
	return s->total_hz;
}

uint64_t
wakeups_dropped(const struct wakeups_state *s)
{
	return s->dropped;
}

double
wakeups_set_rate_hz(const struct wakeups_state *s, const struct cpuset *vcpus, int *npairs)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < s->npairs; i++) {
		const struct pair *p = &s->pairs[i];
		if (p->formed && cpuset_isset(vcpus, pair_a(p->key)) &&
		    cpuset_isset(vcpus, pair_b(p->key))) {
			sum += pair_rate(p);
			n++;
		}
	}
	if (npairs != NULL)
		*npairs = n;
	return sum;
}
