// SPDX-License-Identifier: GPL-2.0-or-later
/* hooks.h - what llcd's run loop tells a back-end beyond the loop's verbs
 * (backend.h) and llcctl's questions (query.h): its events, its time, a
 * new topology or rule set, and whether it has instruction counters. */
#ifndef LLCD_AGENT_HOOKS_H
#define LLCD_AGENT_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct policyrule_set;
struct topo;

/* What the daemon's run loop tells a back-end, and asks it for its own
 * settings. All optional (NULL: nothing to do), with the query's ctx. */
struct daemon_hooks {
	/* per-thread instruction counts exist (the benefit check) */
	bool (*counters)(void *ctx);
	/* a pollable fd while events are queued, -1 none */
	int (*event_fd)(void *ctx);
	/* drain events, keep connections up; now_ns monotonic; >0: that many
	 * domains appeared (the daemon runs a period at once) */
	int (*handle_events)(void *ctx, uint64_t now_ns, struct llcd_err *err);
	/* before each observe (a simulated host advances its time) */
	void (*tick)(void *ctx, uint64_t now_ns);
	/* the host topology was re-read (CPU hotplug) */
	void (*set_topology)(void *ctx, const struct topo *t);
	/* llcd.conf's policy-rule set (policyrule.h; the daemon owns it, valid
	 * until the next call): a domain without an llc-policy annotation gets
	 * the policy of the first rule that matches it. Called once before the
	 * first period and again when a reload changes the rules; the back-end
	 * matches every domain again. */
	void (*set_rules)(void *ctx, const struct policyrule_set *rules);
};

#endif
