// SPDX-License-Identifier: GPL-2.0-or-later
/* loop.h - the agent loop llcd runs and llcsim drives in virtual time:
 * observe -> struct policy_input -> policy_step -> apply each action.
 *
 * One call of agent_loop_step() is one period. Time is read once by the
 * caller and passed down. The plan comes ordered (policy/order.c): the
 * loop applies it action by action in that order, each one only when
 * every prerequisite it names was applied; one the engine held back, or
 * whose prerequisite did not apply, is reported and handed back
 * (policy_action_not_applied) to be planned again. The loop decides
 * nothing about where or when. Results of apply() are sorted: transient
 * actions are left for the next period (the policy sees the unchanged
 * affinity and plans again), gone domains simply disappear from the next
 * observation, and a permanent failure marks the domain abandoned: the
 * vCPU pins the same step applied to it are put back (to the pin the
 * engine gave for a rollback, policy_action.undo: never half in the new
 * placement, never onto an isolated domain's cores), the loop applies no
 * further actions for its key and says so through ops->report.
 */
#ifndef LLCD_AGENT_LOOP_H
#define LLCD_AGENT_LOOP_H

#include <stdint.h>

#include "backend.h"

struct agent_loop;

struct agent_step_stats {
	int actions;                    /* actions in the plan */
	int ok, transient, gone, permanent;
	int skipped;                    /* for abandoned domains */
	int rolled_back;                /* pins put back after a permanent
	                                 * failure of the same domain */
	int held;                       /* actions not applied: the engine held
	                                 * them back, or a prerequisite did not
	                                 * apply (isolation would not hold;
	                                 * reported, planned again) */
	int isolation_overlaps;         /* after this step acted: vCPU threads
	                                 * that may run on a core a vCPU of an
	                                 * isolated domain (not theirs) may run
	                                 * on (observed affinity, pins applied) */
	char overlap[256];              /* the first of them, in words ("" none) */
	uint64_t policy_wall_ns;        /* wall time of policy_step() */
	/* this thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in each phase:
	 * the back-end's observe(), policy_step(), applying the plan */
	uint64_t observe_cpu_ns, policy_cpu_ns, apply_cpu_ns;
};

/* Who watches the loop (llcd's daemon core) without standing between it
 * and the back-end: observed() after every observe, before the policy
 * sees the observation (it may change it: the default mode, released
 * domains); applied() after every apply (its result and message; NULL
 * when AGENT_OK); reported() before the back-end's report() for every
 * action not applied or failed. */
struct agent_loop_watch {
	void (*observed)(void *arg, struct agent_obs *obs);
	void (*applied)(void *arg, const struct policy_action *a, enum agent_result r, const char *msg);
	void (*reported)(void *arg, const struct policy_action *a, enum agent_result r, const char *msg);
	void *arg;
};

/* host is copied (its topo pointer must outlive the loop). */
struct agent_loop *agent_loop_new(const struct agent_ops *ops, void *ctx,
                                  const struct policy_host *host,
                                  uint64_t period_ns, struct llcd_err *err);
void agent_loop_free(struct agent_loop *l);
/* Set (copy) the watcher; all NULL: none. */
void agent_loop_set_watch(struct agent_loop *l, const struct agent_loop_watch *w);

/* One period. Returns 0, or -1 when observe() or the policy failed (err
 * says which; no action was applied). Failed actions are not errors. */
int agent_loop_step(struct agent_loop *l, uint64_t now_ns,
                    struct agent_step_stats *st, struct llcd_err *err);

const struct policy_state *agent_loop_policy(const struct agent_loop *l);
/* The plan of the last step (valid until the next step). */
const struct policy_plan *agent_loop_plan(const struct agent_loop *l);
/* The observation of the last step (valid until the next step). */
const struct agent_obs *agent_loop_obs(const struct agent_loop *l);
/* Change the host settings or the period (llcctl tune, reload); the
 * engine keeps its state. */
void agent_loop_set_host(struct agent_loop *l, const struct policy_host *host, uint64_t period_ns);

/* Whether the loop gave up on a domain after a permanent failure. */
bool agent_loop_abandoned(const struct agent_loop *l, uint64_t key);

#endif
