// SPDX-License-Identifier: GPL-2.0-or-later
/* wakeups.c - vCPU groups inferred from wakeups between vCPU threads.
 *
 * Pure: no I/O, no clock (now comes in), no globals. The rule is described
 * in wakeups.h and docs/design.md; the constants are in wakeups.h.
 *
 * State per domain: a table of tracked unordered pairs sorted by key
 * (a << 16 | b), rebuilt each period by merging it with the period's edges
 * (sorted the same way), so that one update costs O(P log P) for P tracked
 * pairs plus edges, and memory stays bounded by wakeups_pair_cap(). The
 * groups are computed at the end of each update (communities()) from the
 * formed pairs, on per-vCPU adjacency lists of the tracked pairs, and kept
 * until the next.
 */
#include "wakeups.h"
#include "alloc.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	uint32_t key;                   /* a << 16 | b, a < b */
	double ab, ba;                  /* EWMA per direction, Hz */
	bool candidate, formed;
	uint64_t since_ns;              /* candidate: since; formed and cold: cold since */
	bool cold;                      /* formed and below the leave level */
	bool keep;                      /* trimming to the cap: kept */
};

/* A tracked pair as seen from one of its vCPUs (adjacency lists). */
struct nbr {
	int u;                          /* the other vCPU */
	int pair;                       /* index in pairs[] */
};

struct wakeups_state {
	int nvcpus;
	bool started;
	double total_hz;                /* EWMA of all wakeups (edges + dropped) */
	double bg_hz;                   /* background per pair, last update */
	uint64_t dropped;
	int npairs, cap;                /* tracked; at most (wakeups_pair_cap) */
	struct pair *pairs, *scratch;
	int *ord;                       /* scratch's ranks (by rate) */
	struct in_edge { uint32_t key; uint64_t ab, ba; } *in;
	int *off, *fill;                /* per-vCPU partner lists (build_partners) */
	double *rates;
	struct alloc {                  /* elements each buffer holds */
		int pairs, scratch, ord, in, rates, nbrs, cut, off, fill, vtot, vshare, noff, cend, seg, segs, mark;
		int groups, newgroups;
		int v;                  /* mark2 */
	} alloc;
	/* the groups of the last update, and the scratch that finds them */
	int ngroups;
	struct cpuset *groups;          /* min(WAKEUPS_MAX_GROUPS, n / 2) ... */
	struct cpuset *newgroups;       /* ... and as many to find them in */
	struct cpuset grouped;          /* their union (WAKEUPS_SHARE_STAY) */
	double *vtot;                   /* per vCPU: its summed pair rates */
	int *noff;                      /* per vCPU: its adjacency in nbrs[] */
	struct nbr *nbrs;               /* 2 x pairs */
	unsigned char *cut;             /* per pair: CUT_* while splitting */
	double *vshare;                 /* per vCPU: its share inside the set */
	int *mark, stamp;               /* per vCPU: member of the set under test */
	int *mark2, stamp2;             /* per vCPU: seen (a search, a neighbourhood) */
	int *cend;                      /* per vCPU: where components end */
	int *seg;                       /* vertex lists of the sets to test ... */
	struct span { int at, n; } *segs;       /* ... and the work stack */
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

LLCD_DEFINE_NEW(wakeups_state_new, struct wakeups_state)

/* Frees the state's work buffers and leaves them NULL. */
static void
free_buffers(struct wakeups_state *s)
{
	free(s->pairs);
	free(s->scratch);
	free(s->ord);
	s->ord = NULL;
	free(s->in);
	free(s->off);
	free(s->fill);
	free(s->rates);
	free(s->vtot);
	free(s->vshare);
	free(s->noff);
	free(s->nbrs);
	free(s->cut);
	free(s->mark);
	free(s->mark2);
	free(s->seg);
	free(s->cend);
	free(s->segs);
	free(s->groups);
	free(s->newgroups);
	s->groups = s->newgroups = NULL;
	s->pairs = s->scratch = NULL;
	s->in = NULL;
	s->off = s->fill = s->noff = s->mark = s->mark2 = s->seg = s->cend = NULL;
	s->segs = NULL;
	s->rates = s->vtot = s->vshare = NULL;
	s->nbrs = NULL;
	s->cut = NULL;
	memset(&s->alloc, 0, sizeof(s->alloc));
}

int
wakeups_pair_cap(int nvcpus)
{
	double all = (double)nvcpus * (double)(nvcpus - 1) / 2.0;
	double cap = fmax(WAKEUPS_PAIRS_MIN, (double)WAKEUPS_PAIRS_VCPU * nvcpus);

	return nvcpus < 2 ? 0 : (int)fmin(all, cap);
}

/* *p to hold at least need elements of size (grown by half again); -1
 * when out of memory (*p unchanged). */
static int
grow(void **p, int *alloc, int need, size_t size)
{
	void *n;
	int cap;

	if (need < 1)
		need = 1;       /* never NULL once reserved (qsort, memcpy of none) */
	if (need <= *alloc)
		return 0;
	cap = need + need / 2 + (size <= 64 ? 16 : 1);
	if ((n = realloc(*p, size * (size_t)cap)) == NULL)
		return -1;
	*p = n;
	*alloc = cap;
	return 0;
}

/* The most groups a domain of nvcpus can have. */
static int
max_groups(int nvcpus)
{
	return nvcpus / 2 < WAKEUPS_MAX_GROUPS ? nvcpus / 2 : WAKEUPS_MAX_GROUPS;
}

/* Every buffer an update of nvcpus with nin edges needs, before anything
 * changes; -1 when out of memory. */
static int
reserve(struct wakeups_state *s, int nvcpus, int nin)
{
	int np = (nvcpus == s->nvcpus ? s->npairs : 0) + nin;
	int kept = np < wakeups_pair_cap(nvcpus) ? np : wakeups_pair_cap(nvcpus);
	struct alloc *a = &s->alloc;
	int had = a->v;

	if (grow((void **)&s->in, &a->in, nin, sizeof(*s->in)) < 0 ||
	    grow((void **)&s->scratch, &a->scratch, np, sizeof(*s->scratch)) < 0 ||
	    grow((void **)&s->ord, &a->ord, np, sizeof(*s->ord)) < 0 ||
	    grow((void **)&s->pairs, &a->pairs, kept, sizeof(*s->pairs)) < 0 ||
	    grow((void **)&s->rates, &a->rates, 2 * np, sizeof(*s->rates)) < 0 ||
	    grow((void **)&s->nbrs, &a->nbrs, 2 * kept, sizeof(*s->nbrs)) < 0 ||
	    grow((void **)&s->cut, &a->cut, kept, sizeof(*s->cut)) < 0 ||
	    grow((void **)&s->off, &a->off, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->fill, &a->fill, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->vtot, &a->vtot, nvcpus + 1, sizeof(double)) < 0 ||
	    grow((void **)&s->vshare, &a->vshare, nvcpus + 1, sizeof(double)) < 0 ||
	    grow((void **)&s->noff, &a->noff, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->seg, &a->seg, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->cend, &a->cend, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->segs, &a->segs, nvcpus + 1, sizeof(*s->segs)) < 0 ||
	    grow((void **)&s->mark, &a->mark, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->mark2, &a->v, nvcpus + 1, sizeof(int)) < 0 ||
	    grow((void **)&s->groups, &a->groups, max_groups(nvcpus), sizeof(*s->groups)) < 0 ||
	    grow((void **)&s->newgroups, &a->newgroups, max_groups(nvcpus), sizeof(*s->groups)) < 0)
		return -1;
	if (a->v != had) {      /* new stamp arrays: start clean */
		memset(s->mark, 0, sizeof(int) * (size_t)a->mark);
		memset(s->mark2, 0, sizeof(int) * (size_t)a->v);
		s->stamp = s->stamp2 = 0;
	}
	return 0;
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

/* Indices into the pairs arg, ranked as cmp_rate_desc() orders them. */
static int
cmp_rank(const void *x, const void *y, void *arg)
{
	const struct pair *p = arg;

	return cmp_rate_desc(&p[*(const int *)x], &p[*(const int *)y]);
}

static void
forget(struct wakeups_state *s, int nvcpus)
{
	s->nvcpus = nvcpus;
	s->started = false;
	s->total_hz = s->bg_hz = 0;
	s->npairs = 0;
	s->cap = wakeups_pair_cap(nvcpus);
	s->ngroups = 0;
	cpuset_zero(&s->grouped);
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

/* --- groups: communities of formed pairs ------------------------------ */

enum { CUT_NO, CUT_YES, CUT_PENDING };

/* A fresh stamp for marks (per-vCPU ints compared with it); the marks are
 * cleared when the count would wrap. */
static int
next_stamp(struct wakeups_state *s, int *stamp, int *marks)
{
	if (*stamp >= INT_MAX - 1) {
		memset(marks, 0, sizeof(int) * (size_t)s->alloc.mark);
		*stamp = 0;
	}
	return ++*stamp;
}

/* A link of the set under test: a formed pair not cut, to a member. */
static bool
link_in(const struct wakeups_state *s, const struct nbr *e)
{
	return s->pairs[e->pair].formed && s->cut[e->pair] == CUT_NO && s->mark[e->u] == s->stamp;
}

/* A pair's rate above the domain's background: what a vCPU's wakeups
 * with its partners are measured in (a vCPU that only hears the
 * background has none anywhere). */
static double
excess(const struct wakeups_state *s, const struct pair *p)
{
	return fmax(0, pair_rate(p) - s->bg_hz);
}

/* Per-vCPU adjacency lists of the tracked pairs (noff, nbrs) and each
 * vCPU's summed excess rate with every partner (vtot; the untracked
 * partners at the mean rate of the untracked pairs). */
static void
adjacency(struct wakeups_state *s, double npairs_dom)
{
	int n = s->nvcpus, np = s->npairs;
	double tracked = 0, untracked;

	memset(s->noff, 0, sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < np; i++) {
		s->noff[pair_a(s->pairs[i].key) + 1]++;
		s->noff[pair_b(s->pairs[i].key) + 1]++;
		tracked += pair_rate(&s->pairs[i]);
		s->cut[i] = CUT_NO;
	}
	for (int v = 0; v < n; v++)
		s->noff[v + 1] += s->noff[v];
	memcpy(s->fill, s->noff, sizeof(int) * (size_t)n);
	for (int i = 0; i < np; i++) {
		int a = pair_a(s->pairs[i].key), b = pair_b(s->pairs[i].key);
		s->nbrs[s->fill[a]++] = (struct nbr){ b, i };
		s->nbrs[s->fill[b]++] = (struct nbr){ a, i };
	}
	untracked = npairs_dom > np ? fmax(0, s->total_hz - tracked) / (npairs_dom - np) : 0;
	for (int v = 0; v < n; v++) {
		double t = 0;
		for (int e = s->noff[v]; e < s->noff[v + 1]; e++)
			t += excess(s, &s->pairs[s->nbrs[e].pair]);
		s->vtot[v] = t + (double)(n - 1 - (s->noff[v + 1] - s->noff[v])) * fmax(0, untracked - s->bg_hz);
	}
}

/* Push the span seg[at..at+m) when it could be a group. */
static void
push(struct wakeups_state *s, int *nspan, int at, int m)
{
	if (m >= 2)
		s->segs[(*nspan)++] = (struct span){ at, m };
}

/* Split the set seg[at..at+m) (marked) into the connected components of
 * its links, written back in place, and push each; returns the count
 * (1: nothing written or pushed). */
static int
components(struct wakeups_state *s, int at, int m, int *nspan)
{
	int *out = s->off, *end = s->cend, no = 0, nc = 0, seen = next_stamp(s, &s->stamp2, s->mark2);

	for (int i = 0; i < m; i++) {
		int root = s->seg[at + i], head = no;
		if (s->mark2[root] == seen)
			continue;
		s->mark2[root] = seen;
		out[no++] = root;
		while (head < no) {
			int v = out[head++];
			for (int e = s->noff[v]; e < s->noff[v + 1]; e++) {
				const struct nbr *x = &s->nbrs[e];
				if (link_in(s, x) && s->mark2[x->u] != seen) {
					s->mark2[x->u] = seen;
					out[no++] = x->u;
				}
			}
		}
		end[nc++] = no;         /* where this component ends */
		if (nc == 1 && no == m)
			return 1;
	}
	memcpy(s->seg + at, out, sizeof(int) * (size_t)m);
	for (int c = 0, start = 0; c < nc; start = end[c++])
		push(s, nspan, at + start, end[c] - start);
	return nc;
}

/* Whether the link x, to a member of degree one in the set, is the link
 * of its other end o: WAKEUPS_SPOKE_FACTOR times o's every other link in
 * the set (excess rates). Such a spoke is kept: o's partner hangs on it
 * while o's weaker links are spokes to cut. Without it a strong pair with
 * one weak stray link (1<->3 at 1,300/s, 0<->1 at 70/s, formed because it
 * was 1/16 of the pair's rate: a path 0-1-3) had both its links cut and
 * no group at all. The spokes of a star, or of a queue, are of like
 * rates: all cut, as before. */
static bool
main_spoke(const struct wakeups_state *s, const struct nbr *x, int o)
{
	double r = excess(s, &s->pairs[x->pair]), other = 0;

	/* on the set as it was: the links cut in this pass count */
	for (int e = s->noff[o]; e < s->noff[o + 1]; e++) {
		const struct nbr *y = &s->nbrs[e];
		if (y->pair != x->pair && s->pairs[y->pair].formed && s->cut[y->pair] != CUT_YES &&
		    s->mark[y->u] == s->stamp)
			other = fmax(other, excess(s, &s->pairs[y->pair]));
	}
	return r > 0 && r >= WAKEUPS_SPOKE_FACTOR * other;
}

/* The links of the set that no common neighbour backs (a bridge between
 * two dense parts, a star's spokes, a bipartite graph's links): marked
 * CUT_YES; returns how many. The overlaps are all taken on the set as it
 * was (pending cuts applied after). */
static int
cut_weak_links(struct wakeups_state *s, int at, int m, const int *deg)
{
	int ncut = 0;

	for (int i = 0; i < m; i++) {
		int a = s->seg[at + i], st = next_stamp(s, &s->stamp2, s->mark2);
		for (int e = s->noff[a]; e < s->noff[a + 1]; e++)
			if (link_in(s, &s->nbrs[e]))
				s->mark2[s->nbrs[e].u] = st;
		for (int e = s->noff[a]; e < s->noff[a + 1]; e++) {
			const struct nbr *x = &s->nbrs[e];
			int b = x->u, common = 0;
			if (b < a || !link_in(s, x))
				continue;
			for (int f = s->noff[b]; f < s->noff[b + 1]; f++)
				common += link_in(s, &s->nbrs[f]) && s->mark2[s->nbrs[f].u] == st;
			int mn = (deg[a] < deg[b] ? deg[a] : deg[b]) - 1;
			if (mn <= 0 ? !main_spoke(s, x, deg[a] > 1 ? a : b) : (double)common < WAKEUPS_OVERLAP * mn) {
				s->cut[x->pair] = CUT_PENDING;
				ncut++;
			}
		}
	}
	for (int i = 0; ncut > 0 && i < m; i++) {
		int a = s->seg[at + i];
		for (int e = s->noff[a]; e < s->noff[a + 1]; e++)
			if (s->cut[s->nbrs[e].pair] == CUT_PENDING)
				s->cut[s->nbrs[e].pair] = CUT_YES;
	}
	return ncut;
}

enum verdict { SET_GROUP, SET_SPLIT, SET_WAIT };

/* Test the set seg[at..at+m), connected by its links: a group, one still
 * forming (SET_WAIT: not dense, and a pair inside it is a candidate that
 * has not formed yet), or a set to split: *peel the member to leave (-1:
 * links were cut, test again). deg: per vCPU scratch. */
static enum verdict
test_set(struct wakeups_state *s, int at, int m, int *deg, int *peel)
{
	bool dense = true, shared = true, pending = false;
	int worst_d = -1, worst_s = -1;
	double worst_by = 0;

	for (int i = 0; i < m; i++) {
		int v = s->seg[at + i];
		double in = 0;
		bool active = false;
		deg[v] = 0;
		for (int e = s->noff[v]; e < s->noff[v + 1]; e++) {
			const struct nbr *x = &s->nbrs[e];
			if (s->mark[x->u] != s->stamp)
				continue;
			in += excess(s, &s->pairs[x->pair]);
			pending |= s->pairs[x->pair].candidate && !s->pairs[x->pair].formed;
			if (link_in(s, x)) {
				deg[v]++;
				active |= !s->pairs[x->pair].cold;
			}
		}
		/* a grouped vCPU whose links in the set have all gone cold is
		 * silent, not elsewhere: the links' own timer (WAKEUPS_DISSOLVE_S)
		 * decides when it leaves, not its share */
		if (!active && cpuset_isset(&s->grouped, v))
			s->vshare[v] = 1;
		else
			s->vshare[v] = s->vtot[v] > 0 ? in / s->vtot[v] : 0;
	}
	for (int i = 0; i < m; i++) {
		int v = s->seg[at + i];
		double need = cpuset_isset(&s->grouped, v) ? WAKEUPS_SHARE_STAY : WAKEUPS_SHARE;
		double short_by = need - s->vshare[v];
		if ((double)deg[v] < WAKEUPS_DENSITY * (double)(m - 1) - 1e-9)
			dense = false;
		if (short_by > 0)
			shared = false;
		/* the fewest links, then the lowest share, then the highest vCPU */
		if (worst_d < 0 || deg[v] < deg[worst_d] ||
		    (deg[v] == deg[worst_d] && (s->vshare[v] < s->vshare[worst_d] ||
		    (s->vshare[v] == s->vshare[worst_d] && v > worst_d))))
			worst_d = v;
		/* the furthest below its share, then the highest vCPU */
		if (worst_s < 0 || short_by > worst_by || (short_by == worst_by && v > worst_s)) {
			worst_s = v;
			worst_by = short_by;
		}
	}
	if (dense && shared)
		return SET_GROUP;
	if (!dense && pending)
		return SET_WAIT;
	if (!dense) {
		*peel = cut_weak_links(s, at, m, deg) > 0 ? -1 : worst_d;
		return SET_SPLIT;
	}
	*peel = worst_s;
	return SET_SPLIT;
}

static int
cmp_first(const void *x, const void *y)
{
	int a = cpuset_first(x), b = cpuset_first(y);

	return (a > b) - (a < b);
}

/* The groups of this update (wakeups.h, "Groups are communities"). */
static void
communities(struct wakeups_state *s, double npairs_dom)
{
	int n = s->nvcpus, m = 0, nspan = 0, ng = 0;
	int *deg = s->fill;             /* free once the adjacency is built */
	struct cpuset *out = s->newgroups;

	if (!isfinite(s->bg_hz)) {      /* one pair: nothing forms */
		s->ngroups = 0;
		cpuset_zero(&s->grouped);
		return;
	}
	adjacency(s, npairs_dom);
	/* the vCPUs with a link, as one set: split into components first */
	for (int v = 0; v < n; v++) {
		bool linked = false;
		for (int e = s->noff[v]; e < s->noff[v + 1] && !linked; e++)
			linked = s->pairs[s->nbrs[e].pair].formed;
		if (linked)
			s->seg[m++] = v;
	}
	push(s, &nspan, 0, m);
	while (nspan > 0) {
		struct span sp = s->segs[--nspan];
		int peel, st = next_stamp(s, &s->stamp, s->mark);
		for (int i = 0; i < sp.n; i++)
			s->mark[s->seg[sp.at + i]] = st;
		if (components(s, sp.at, sp.n, &nspan) != 1)
			continue;
		enum verdict vd = test_set(s, sp.at, sp.n, deg, &peel);
		if (vd == SET_GROUP) {
			if (ng < max_groups(n)) {
				cpuset_zero(&out[ng]);
				for (int i = 0; i < sp.n; i++)
					cpuset_set(&out[ng], s->seg[sp.at + i]);
				ng++;
			}
			continue;
		}
		if (vd == SET_WAIT) {
			/* links still forming: the groups it had stay as they were
			 * until they have (WAKEUPS_FORM_S at most), so that a group
			 * forming link by link is never cut into fragments */
			for (int g = 0; g < s->ngroups && ng < max_groups(n); g++) {
				int v, inside = 1;
				CPUSET_FOREACH(v, &s->groups[g])
					inside &= v < n && s->mark[v] == st;
				if (inside)
					out[ng++] = s->groups[g];
			}
			continue;
		}
		if (peel >= 0) {        /* to the end of the span, which shrinks */
			for (int i = 0; i < sp.n; i++)
				if (s->seg[sp.at + i] == peel) {
					s->seg[sp.at + i] = s->seg[sp.at + sp.n - 1];
					s->seg[sp.at + sp.n - 1] = peel;
					break;
				}
			sp.n--;
		}
		push(s, &nspan, sp.at, sp.n);
	}
	qsort(out, (size_t)ng, sizeof(out[0]), cmp_first);
	memcpy(s->groups, out, sizeof(out[0]) * (size_t)ng);
	s->ngroups = ng;
	cpuset_zero(&s->grouped);
	for (int g = 0; g < ng; g++)
		cpuset_or(&s->grouped, &s->grouped, &s->groups[g]);
}

int
wakeups_update(struct wakeups_state *s, int nvcpus, const struct policy_wakeups *w,
               uint64_t period_ns, uint64_t now_ns)
{
	uint64_t sum = 0;
	int nin, n = 0;
	double dt, alpha, untracked_hz, npairs = domain_pairs(nvcpus);

	if (reserve(s, nvcpus, w != NULL ? w->nedges : 0) < 0)
		return -1;
	if (nvcpus != s->nvcpus)
		forget(s, nvcpus);
	if (w != NULL)
		period_ns = w->period_ns;
	if (period_ns == 0 || nvcpus < 2)
		return 0;
	/* nothing seen, tracked or formed since the last update of these
	 * vCPUs (forget() above leaves it unstarted when they changed), and
	 * no wakeup now: the update below would sum zeros into zeros (the
	 * total, no pair, no group, the same background), so it is skipped
	 * (most domains of an idle host) */
	if (s->started && s->total_hz == 0 && s->npairs == 0 && s->ngroups == 0 &&
	    (w == NULL || (w->nedges == 0 && w->dropped == 0)))
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
	/* scratch stays in key order (the merge's); ord ranks it by rate */
	int *ord = s->ord;
	for (int i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, (size_t)n, sizeof(ord[0]), cmp_rank, s->scratch);
	{
		double prefix = 0, bg = npairs > 0 ? s->total_hz / npairs : 0;
		int k = 0;
		for (int i = 0; i < n && (double)(i + 1) <= npairs / 2; i++) {
			prefix += pair_rate(&s->scratch[ord[i]]);
			double rest = fmax(0, s->total_hz - prefix) / (npairs - (double)(i + 1));
			if (pair_rate(&s->scratch[ord[i]]) >= WAKEUPS_ENTER_FACTOR * rest) {
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
			struct pair *p = &s->scratch[ord[i]];
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
	/* Keep the strongest cap pairs, formed ones first, in key order. */
	if (n > s->cap) {
		int m = 0;
		for (int i = 0; i < n; i++)
			s->scratch[i].keep = false;
		for (int i = 0; i < n && m < s->cap; i++)
			if (s->scratch[ord[i]].formed || s->scratch[ord[i]].candidate) {
				s->scratch[ord[i]].keep = true;
				m++;
			}
		for (int i = 0; i < n && m < s->cap; i++)
			if (!s->scratch[ord[i]].keep) {
				s->scratch[ord[i]].keep = true;
				m++;
			}
		m = 0;
		for (int i = 0; i < n; i++)
			if (s->scratch[i].keep)
				s->pairs[m++] = s->scratch[i];
		n = m;
	} else {
		memcpy(s->pairs, s->scratch, sizeof(*s->pairs) * (size_t)n);
	}
	s->npairs = n;
	communities(s, npairs);
	return 0;
}

int
wakeups_groups(const struct wakeups_state *s, struct cpuset *out, int max)
{
	int n = s->ngroups < max ? s->ngroups : max;

	for (int g = 0; g < n; g++)
		out[g] = s->groups[g];
	return n > 0 ? n : 0;
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
