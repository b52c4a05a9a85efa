// SPDX-License-Identifier: GPL-2.0-or-later
/* llcrules.h - the rules of Linux 7.2's cache-aware scheduling
 * (CONFIG_SCHED_CACHE), as small pure functions shared by the engine, the
 * simulator's `kernel-cas` policy and the guest helper.
 *
 * Each rule exists in two flavours selected by `struct llc_rules.kernel`:
 *  - kernel = true: the merged kernel code exactly (fits_capacity() with its
 *    0.8 margin, fits_llc_capacity() with a strict '<');
 *  - kernel = false: llcd's adaptation for pinned vCPU groups, which accepts
 *    an LLC that is exactly one busy thread per core full (see
 *    docs/design.md, "Where llcd departs from the kernel").
 */
#ifndef LLCD_LLCRULES_H
#define LLCD_LLCRULES_H

#include <stdbool.h>

struct llc_rules {
	int aggr_tolerance;     /* 0 off, 1 strict, >= 100 no size guard */
	int overaggr_pct;       /* 0 = auto: 50 with SMT, 75 without */
	int imb_pct;            /* 20 */
	int smt;                /* PUs per core on the host */
	bool kernel;            /* exact kernel comparisons */
};

enum llc_mig {
	LLC_MIG_FORBID,         /* N: respect the LLC preference */
	LLC_MIG_LLC,            /* Y: preference-based migration */
	LLC_MIG_UNRESTRICTED,   /* G: let the generic balancer even the load */
};

/* Effective overaggr percentage (auto = 50, or 75 without SMT). */
int llcrules_overaggr_pct(const struct llc_rules *r);

/* fits_llc_capacity(): util (in busy PUs) fits an LLC of cap PUs. */
bool llcrules_fits(const struct llc_rules *r, double util, double cap);

/* can_migrate_llc(): may a thread of utilisation tutil move from an LLC
 * with (src_util, src_cap) to one with (dst_util, dst_cap)? to_pref says
 * whether dst is the preferred LLC (else src is). */
enum llc_mig llcrules_can_migrate(const struct llc_rules *r, double src_util, double src_cap,
                             double dst_util, double dst_cap, double tutil, bool to_pref);

/* invalid_llc_nr(): true when a group of nthreads threads with nr_avg
 * threads running on average must not get a preferred LLC of llc_weight
 * PUs (too many threads for the LLC, or a single thread). */
bool llcrules_invalid_nr(const struct llc_rules *r, int nthreads, double nr_avg, int llc_weight);

/* The size guard with hysteresis, for a group that is `guarded` now or
 * not. Not guarded: llcrules_invalid_nr(). Guarded (llcd's flavour): it stays
 * guarded until nr_avg x smt is at most LLC_GUARD_LEAVE_PCT % of the
 * limit, so that a group at the limit does not flap in and out.
 * kernel = true: llcrules_invalid_nr() (the kernel has no hysteresis).
 * In llcd's flavour nr_avg is compared to a tenth of a thread. */
#define LLC_GUARD_LEAVE_PCT 90
bool llcrules_size_guard(const struct llc_rules *r, int nthreads, double nr_avg, int llc_weight, bool guarded);

/* Decay factor for one sampling period: 1/2 per epoch. */
double llcrules_decay(double period_ms, double epoch_ms);

/* EWMA divisor for nr_running_avg: clamp(llc_weight / 4, 2, 8). */
int llcrules_nr_avg_div(int llc_weight);

/* The kernel's nr_running_avg update (update_avg_scale() in fair.c), in its
 * integer arithmetic: avg += (sample - avg) / llcrules_nr_avg_div(llc_weight),
 * the division truncating toward zero (div64_s64). The average therefore
 * stops up to divisor - 1 short of a steady sample, from below and from
 * above: a steady 8 on a 16-PU LLC (divisor 4) settles at 5. llcd's own
 * flavour (steer.c) keeps a real-valued average instead. */
long llcrules_nr_avg_kernel(long avg, long sample, int llc_weight);

/* The 2x hysteresis: switch from the current preferred LLC (occupancy
 * cur_occ, 0 when there is none) to the best one (best_occ)? */
bool llcrules_should_switch(double best_occ, double cur_occ);

#endif
