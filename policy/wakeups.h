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
 * per period; a producer that has more keeps the strongest and adds the
 * counts of the rest to 'dropped', so that the domain's total wakeup count
 * (sum of counts + dropped) stays exact and the background rate the rule
 * compares against is not biased by the cap. The engine refuses an input
 * with nedges outside 0..POLICY_WAKEUP_EDGES, a NULL edge list with
 * nedges > 0, period_ns == 0, or a vCPU number outside the domain; an edge
 * with waker == wakee is ignored; duplicate pairs add up.
 */
#ifndef LLCD_WAKEUPS_H
#define LLCD_WAKEUPS_H

#include <stdint.h>

#define POLICY_WAKEUP_EDGES 1024        /* edges per domain per period */

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

#endif
