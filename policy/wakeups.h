// SPDX-License-Identifier: GPL-2.0-or-later
/* wakeups.h - vCPU-to-vCPU wakeup edges: what the policy is told each period.
 *
 * A back-end that can see wakeups between the vCPU threads of one domain
 * (llcd's in-kernel tracer on sched_waking, or llcsim's simulated host)
 * fills one struct policy_wakeups per domain per period and points
 * policy_domain_in.wakeups at it; a back-end that cannot leaves the pointer
 * NULL and the engine infers nothing for that domain.
 *
 * One edge is an ordered pair (waker vCPU -> wakee vCPU) with the number of
 * times the first woke the second during the period. A wakeup from a thread
 * that is not a vCPU of the same domain (QEMU's main loop, an I/O thread, a
 * timer) is not an edge and is not counted anywhere here.
 *
 * Bounds (the input is untrusted in the sense that a guest chooses how often
 * its vCPUs wake each other): at most POLICY_WAKEUP_EDGES edges per domain
 * per period, and a producer keeps at most POLICY_WAKEUP_EDGES_VCPU edges
 * per waker vCPU (its strongest; ties broken without favouring low vCPU
 * numbers), so that a vCPU that wakes many cannot crowd the others out and
 * a whole 64-vCPU clique fits; what it leaves out it adds to 'dropped', so
 * that the domain's total wakeup count (sum of counts + dropped) stays
 * exact and the background rate the rule compares against is not biased
 * by the caps. The engine refuses an input with nedges outside
 * 0..POLICY_WAKEUP_EDGES, a NULL edge list with nedges > 0, period_ns ==
 * 0, or a vCPU number outside the domain; an edge with waker == wakee is
 * ignored; duplicate pairs add up; more edges per waker than the producer
 * cap are accepted (the cap is the producer's).
 */
#ifndef LLCD_WAKEUPS_H
#define LLCD_WAKEUPS_H

#include <stdint.h>

#define POLICY_WAKEUP_EDGES 8192        /* edges per domain per period */
#define POLICY_WAKEUP_EDGES_VCPU 64     /* ... and per waker vCPU (producers) */

struct policy_wakeup_edge {
	int waker;                      /* vCPU number that woke ... */
	int wakee;                      /* ... this vCPU number */
	uint32_t count;                 /* wakeups during the period */
};

struct policy_wakeups {
	uint64_t period_ns;             /* time the counts cover (> 0) */
	int nedges;                     /* 0..POLICY_WAKEUP_EDGES */
	const struct policy_wakeup_edge *edges;
	uint64_t dropped;               /* wakeups between vCPUs of this domain
	                                 * not in edges[] (cap reached) */
};

/* --- The inference rule (wakeups.c; used by the group stage) ----------
 *
 * Pairs. Per domain the rule keeps an EWMA (time constant WAKEUPS_TAU_S)
 * of the wakeup rate of each unordered vCPU pair {a, b} (a->b plus b->a)
 * and of the domain's total. The pairs are ranked by rate; the background
 * is the mean rate of every pair of the domain (n(n-1)/2 of them, seen or
 * not) outside the top k, where k is the largest rank whose pair is at
 * least WAKEUPS_ENTER_FACTOR times the background of the pairs below it. A
 * pair becomes a candidate when it is in that top k, at least
 * WAKEUPS_ENTER_MIN_HZ, at least WAKEUPS_ENTER_FACTOR times the median of
 * each of its vCPUs' other pairs and at least 1/WAKEUPS_LINK_RATIO of the
 * strongest pair of each of its vCPUs; it stays one while it is at least
 * max(WAKEUPS_LEAVE_FACTOR x background, WAKEUPS_LEAVE_MIN_HZ); a candidate
 * that lasted WAKEUPS_FORM_S is formed (a link); a formed pair is dropped
 * only after it stayed below that leave level for WAKEUPS_DISSOLVE_S.
 *
 * Groups are communities of links, not their connected components
 * (wakeups_communities()): a set of vCPUs is a group when
 *   - it is dense: each member is linked to at least WAKEUPS_DENSITY of
 *     the other members (a star's leaves, a queue's two sides, two
 *     groups and the stray link between them are not), and
 *   - each member has at least WAKEUPS_SHARE of its wakeups (sent and
 *     received, all partners, the untracked ones at their mean) inside
 *     it; WAKEUPS_SHARE_STAY for a vCPU in a group the period before
 *     (the hub of a star wakes each leaf with 1/k of its wakeups: no
 *     pair with it is a group).
 * A connected set of links that is not a group is split: first its links
 * that no other member backs are cut (a link {a, b} with fewer than
 * WAKEUPS_OVERLAP x (min(deg a, deg b) - 1) common linked neighbours: a
 * bridge, a spoke, the links of a bipartite graph; not a spoke at least
 * WAKEUPS_SPOKE_FACTOR times each other link of its hub), else its member with
 * the fewest links (or, when dense, the lowest share) leaves; the rest is
 * tried again. docs/design.md explains the numbers.
 *
 * Memory: at most wakeups_pair_cap(n) tracked pairs for a domain of n vCPUs
 * (WAKEUPS_PAIRS_VCPU per vCPU, at least WAKEUPS_PAIRS_MIN, at most every
 * pair; the weakest are forgotten first, formed ones last; a pair not
 * tracked is assumed to run at the mean rate of the untracked pairs) and
 * scratch space for one period's edges, allocated as the domain needs
 * them: about 40 bytes a tracked pair (twice: the table and the merge) and
 * 80 an edge of the period, plus 512 bytes a possible group (at most
 * min(64, n / 2)): measured, 19 KiB for an 8-vCPU domain whose every pair
 * wakes and 0.5 MiB for a 128-vCPU domain handing over 8,192 edges a
 * period.
 */
#include <stdbool.h>

#include "cpuset.h"
#include "err.h"

#define WAKEUPS_TAU_S 1.0               /* EWMA time constant */
#define WAKEUPS_ENTER_FACTOR 4.0        /* x background to become a candidate */
#define WAKEUPS_ENTER_MIN_HZ 20.0       /* ... and at least this */
#define WAKEUPS_LINK_RATIO 16.0         /* ... and at least 1/this of the
                                         * strongest pair of each of its vCPUs */
#define WAKEUPS_LEAVE_FACTOR 2.0        /* below max(this x background, */
#define WAKEUPS_LEAVE_MIN_HZ 10.0       /*   this) a pair is cold */
#define WAKEUPS_FORM_S 2.0              /* candidate this long: formed */
#define WAKEUPS_DISSOLVE_S 5.0          /* formed and cold this long: dropped */
#define WAKEUPS_PAIRS_VCPU 32          /* tracked pairs per vCPU of a domain ... */
#define WAKEUPS_PAIRS_MIN 2048          /* ... but at least this many */
#define WAKEUPS_DENSITY 0.75            /* group: each member linked to this
                                         * share of the others */
#define WAKEUPS_SHARE 0.5               /* ... with this share of its wakeups inside */
#define WAKEUPS_SHARE_STAY 0.35         /* ... or this, when grouped before */
#define WAKEUPS_OVERLAP 0.5             /* links backed by fewer common
                                         * neighbours are cut (splitting) */
#define WAKEUPS_SPOKE_FACTOR 4.0        /* ... but not a spoke this many times
                                         * its hub's every other link */
#define WAKEUPS_MAX_GROUPS 64           /* groups per domain */
#define WAKEUPS_FORGET_HZ 0.5           /* untracked below this (not candidates) */

struct wakeups_state;

struct wakeups_pair_info {
	int a, b;                       /* vCPUs, a < b */
	double rate_hz;                 /* EWMA of a->b plus b->a */
	double ab_hz, ba_hz;            /* the two directions */
	bool candidate, formed;
};

struct wakeups_state *wakeups_state_new(void);
void wakeups_state_free(struct wakeups_state *s);

/* Validate one period's input for a domain of nvcpus (the rules above). */
int wakeups_check(const struct policy_wakeups *w, int nvcpus, struct llcd_err *err);

/* Feed one period that ended at now_ns. w == NULL: nothing was seen for
 * period_ns (all rates decay). w must have passed wakeups_check(). A change
 * of nvcpus forgets everything. Returns 0, or -1 on out of memory (the
 * state is then unchanged). */
int wakeups_update(struct wakeups_state *s, int nvcpus, const struct policy_wakeups *w,
                   uint64_t period_ns, uint64_t now_ns);

/* The inferred groups of the last update (communities of formed pairs,
 * the rule above), in order of their lowest vCPU; returns how many (at
 * most max, at most WAKEUPS_MAX_GROUPS). */
int wakeups_groups(const struct wakeups_state *s, struct cpuset *out, int max);

/* The most pairs a domain of nvcpus keeps track of. */
int wakeups_pair_cap(int nvcpus);

/* The strongest tracked pairs, by rate, at most max; returns how many. */
int wakeups_pairs(const struct wakeups_state *s, struct wakeups_pair_info *out, int max);

/* Background rate per pair and the domain's total rate (Hz). */
double wakeups_background_hz(const struct wakeups_state *s);
double wakeups_total_hz(const struct wakeups_state *s);
/* Wakeups dropped by the producer (cap reached), summed since the start. */
uint64_t wakeups_dropped(const struct wakeups_state *s);

/* Summed rate of the formed pairs inside vcpus (Hz), and how many. */
double wakeups_set_rate_hz(const struct wakeups_state *s, const struct cpuset *vcpus, int *npairs);

#endif
