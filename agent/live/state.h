// SPDX-License-Identifier: GPL-2.0-or-later
/* state.h - the live back-end's state file, state_dir/live.state: per
 * domain its key, UUID, name and the pins llcd last applied (docs/agent.md).
 * Written atomically (temp + fsync + rename); read back at start to log
 * what is adopted and which vCPUs someone else moved meanwhile.
 * agent/live/state.c. */
#ifndef LLCD_LIVE_STATE_H
#define LLCD_LIVE_STATE_H

#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "policy.h"

#define LIVE_STATE_FILE "live.state"

/* The state file. */
struct live_state_dom {
	uint64_t key;
	char uuid[40];
	char name[POLICY_NAME];
	int nvcpus;
	struct cpuset *vcpus;           /* nvcpus; empty: never pinned */
	struct cpuset emulator;         /* empty: never pinned */
};
struct live_state {
	int n;
	struct live_state_dom *doms;
};
void live_state_clear(struct live_state *s);
/* Parse the file (a missing file is an empty state, not an error). Bad
 * lines are errors naming file:line; the caller then starts empty. */
int live_state_read(const char *path, struct live_state *s, struct llcd_err *err);
/* Write atomically: path.tmp, fsync, rename, fsync of the directory. */
int live_state_write(const char *path, const struct live_state *s,
    struct llcd_err *err);

#endif
