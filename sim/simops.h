// SPDX-License-Identifier: GPL-2.0-or-later
/* simops.h - llcsim's back-end of the agent ops table: observations from
 * the simulated world (only what a real host shows), actions applied to it,
 * and the simulated guest helper. */
#ifndef LLCSIM_SIMOPS_H
#define LLCSIM_SIMOPS_H

#include "backend.h"
#include "world.h"

struct sim_ops_ctx {
	struct sim_world *w;
	uint64_t applied, failed;
	uint64_t *prefer;               /* per domain: PREFER actions to an LLC */
};

extern const struct agent_ops sim_agent_ops;

#endif
