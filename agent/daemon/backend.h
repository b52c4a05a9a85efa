// SPDX-License-Identifier: GPL-2.0-or-later
/* backend.h - the I/O boundary of the agent loop: the loop's verbs and
 * nothing else. A back-end is an ops table (observe, apply, report) and its
 * ctx; the live one is agent/live/, the simulated one sim/.
 *
 * The loop (loop.h) calls observe() once per period with the time it read,
 * hands the observation to the policy, and calls apply() once per action of
 * the plan. A back-end never decides anything; the policy never does I/O
 * (chrony's sys_linux.c / sys_null.c split). What llcctl asks of a back-end
 * is query.h; what the daemon's run loop tells it, daemon.h.
 */
#ifndef LLCD_AGENT_BACKEND_H
#define LLCD_AGENT_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "policy.h"

/* How applying one action went. Errors are sorted the way the daemon
 * reacts to them: retry, forget, or stop managing the domain and say why
 * (docs/agent.md, "Pinning and the error classes", lists which libvirt
 * errors fall in each class). */
enum agent_result {
	AGENT_OK = 0,
	AGENT_TRANSIENT,        /* try again later (busy, EAGAIN, timeout) */
	AGENT_GONE,             /* the domain or thread vanished: drop it */
	AGENT_PERMANENT,        /* cannot ever work: stop managing the domain */
};
/* The number of results, for arrays indexed by them: keep it the last
 * value + 1 (a macro, not a member, so that switches stay exhaustive). */
#define AGENT_RESULT_COUNT (AGENT_PERMANENT + 1)

/* One observation: what the policy may know about the host this period.
 * Storage is owned by the observation and reused from period to period:
 * agent_obs_begin() empties the list but keeps every slot's contents, so a
 * back-end that finds a slot already holding the same domain key may skip
 * re-filling fields that did not change (annotation, guest topology). */
struct agent_obs {
	int ndomains;
	struct policy_domain_in *domains;       /* ndomains, policy view */
	struct policy_vcpu_sample **vcpus;      /* per slot, nvcpus (writable) */
	struct policy_hot_report **reports;     /* per slot, nreports (writable) */
	struct policy_wakeups *wakeups;         /* per slot (writable), see
	                                         * agent_obs_wakeups() */
	struct policy_wakeup_edge **edges;      /* per slot, POLICY_WAKEUP_EDGES
	                                         * once allocated (writable) */
	struct cpuset **bounds;                 /* per slot, once a bound was
	                                         * given (agent_obs_bound()) */
	int ncpus;                              /* entries in cpu_busy_ns */
	uint64_t *cpu_busy_ns;                  /* per PU OS index */
	/* private: capacities */
	int cap, *vcap, *rcap;
};

struct agent_obs *agent_obs_new(void);
void agent_obs_free(struct agent_obs *o);
/* Start a new observation: no domains, cpu_busy_ns sized for ncpus and
 * zeroed. */
int agent_obs_begin(struct agent_obs *o, int ncpus, struct llcd_err *err);
/* Append a domain slot with room for nvcpus samples and nreports reports.
 * Returns the slot index, or -1 with err set. The slot's previous contents
 * (from an earlier observation) are kept; check domains[i].key. */
int agent_obs_add(struct agent_obs *o, int nvcpus, int nreports, struct llcd_err *err);
/* A back-end that sees wakeups between a domain's vCPU threads (the
 * in-kernel tracer, llcsim) calls this for slot i after agent_obs_add():
 * domains[i].wakeups then points at wakeups[i], emptied (no edges, nothing
 * dropped) for a period of period_ns, whose edge list is edges[i] with room
 * for POLICY_WAKEUP_EDGES edges; the back-end fills edges[i][0..] and sets
 * wakeups[i].nedges and .dropped (policy/wakeups.h). A slot for which it is
 * not called has domains[i].wakeups == NULL: nothing is inferred. */
int agent_obs_wakeups(struct agent_obs *o, int i, uint64_t period_ns, struct llcd_err *err);
/* The CPU bound of slot i's domain (policy_domain_in.bound), after
 * agent_obs_add(), which leaves none: an empty or NULL bound leaves
 * domains[i].bound NULL; else it points at the slot's copy of *bound,
 * allocated the first time (-1 with err set: out of memory). */
int agent_obs_bound(struct agent_obs *o, int i, const struct cpuset *bound, struct llcd_err *err);

/* A domain's state as llcctl shows it, one vocabulary for every back-end
 * and the daemon (docs/llcctl.md):
 *   managed    llcd places and pins it
 *   unmanaged  llcd leaves it to the default scheduler on purpose: no
 *              llc-policy annotation, mode none, released by llcctl
 *   error      llcd should manage it and cannot: an invalid annotation, a
 *              placement the engine refused, a pin that failed permanently
 */
enum agent_dom_state {
	AGENT_DOM_MANAGED = 0,
	AGENT_DOM_UNMANAGED,
	AGENT_DOM_ERROR,
	AGENT_DOM_STATE_COUNT,
};
const char *agent_dom_state_name(enum agent_dom_state s);

struct agent_ops {
	const char *name;                       /* for messages: "libvirt", "llcsim" */
	/* Fill obs (after agent_obs_begin) for the period ending at now_ns. */
	int (*observe)(void *ctx, uint64_t now_ns, struct agent_obs *obs,
	               struct llcd_err *err);
	/* Carry out one action of the plan; informational actions (PREFER,
	 * BACKOFF, REFUSE) are passed too so back-ends can log or count them. */
	enum agent_result (*apply)(void *ctx, const struct policy_action *act,
	                           struct llcd_err *err);
	/* Optional: told about every action the loop did not apply or that
	 * failed (result != AGENT_OK), with the back-end's message. */
	void (*report)(void *ctx, const struct policy_action *act,
	               enum agent_result r, const char *msg);
	/* Optional: after the last action of a step, for what a back-end put
	 * off until the whole plan was carried out (the live back-end tells
	 * libvirt the vCPU pins it made directly for a domain placed from its
	 * started event). */
	void (*applied)(void *ctx);
	/* Optional: the pool the samples' pins are interned in; the engine
	 * interns its own pins there too (policy_state_share_sets), so that
	 * a vCPU pinned as wanted compares by pointer. Lives as long as ctx. */
	struct cpuset_pool *(*sets)(void *ctx);
};

const char *agent_result_name(enum agent_result r);

#endif
