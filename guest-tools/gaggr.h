// SPDX-License-Identifier: GPL-2.0-or-later
/* gaggr.h - llc-guest --aggregate: the preferred-LLC hysteresis of Linux
 * 7.2's cache-aware scheduling, run by the guest helper on each hot
 * process's threads over the guest's virtual LLCs (docs/llc-guest.md).
 *
 * Per hot process and period, with the rules of policy/llcrules.h in
 * llcd's flavour (kernel = false):
 *  - occupancy: each LLC's decayed sum of the process's thread CPU time
 *    attributed to the CPU each thread last ran on (decay 1/2 per period,
 *    the epoch being one period as in llcd);
 *  - active threads: EWMA of CPUs in use (share), divisor
 *    llcrules_nr_avg_div(llc weight), started from the first sample;
 *  - size guard llcrules_invalid_nr(busy threads, active threads, weight of the
 *    LLC considered): a process that does not fit gets no preference, and
 *    a confined one is released;
 *  - switch llcrules_should_switch(): the preferred LLC changes only when the
 *    best one's occupancy is more than twice the current one's;
 *  - confine: every thread of the process gets the preferred LLC's CPUs
 *    (sched_setaffinity), new threads included, each period;
 *  - release: a process not hot for `timeout` periods, or gone, or
 *    guarded, gets every online CPU back.
 * The affinity call goes through a hook so that tests need no threads.
 */
#ifndef LLCD_GAGGR_H
#define LLCD_GAGGR_H

#include <stdbool.h>
#include <stdio.h>

#include "cpuset.h"
#include "gscan.h"
#include "gtopo.h"
#include "llcrules.h"

struct gaggr_opts {
	struct llc_rules rules;         /* kernel = false; smt from the topology */
	int timeout;                    /* periods not hot before release (5) */
	bool dry_run;                   /* decide and log, never set affinity */
	/* set the affinity of tid (NULL: sched_setaffinity); 0 or -1 + errno */
	int (*setaff)(int tid, const struct cpuset *cpus, void *arg);
	void *setaff_arg;
	FILE *log;                      /* decisions, one line each (NULL: none) */
};

void gaggr_opts_default(struct gaggr_opts *o, const struct gtopo *t);

struct gaggr;

/* topo is borrowed and must outlive the aggregator. */
struct gaggr *gaggr_new(const struct gtopo *topo, const struct gaggr_opts *o);
void gaggr_free(struct gaggr *a);

/* One period: hot processes of this period (gscan_hot) and the current
 * snapshot (for the threads of processes no longer hot). Returns the
 * number of affinity calls that failed. */
int gaggr_step(struct gaggr *a, const struct gscan_hotlist *hot,
               const struct gscan_snap *cur);

/* The LLC a process is confined to, -1 if none. */
int gaggr_confined(const struct gaggr *a, int pid);

/* Release every confined process (at exit). */
void gaggr_release_all(struct gaggr *a, const struct gscan_snap *cur);

#endif
