// SPDX-License-Identifier: GPL-2.0-or-later
/* run.h - one llcsim run: a scenario, a policy, a seed; its summary. */
#ifndef LLCSIM_RUN_H
#define LLCSIM_RUN_H

#include <stdio.h>

#include "loop.h"
#include "scenario.h"
#include "simops.h"
#include "world.h"

/* Where a group's busy vCPUs sat (for the demo's map). */
struct sim_snapshot {
	double t;                       /* -1: not taken */
	int nvcpus;
	int *llc;                       /* per vCPU of the domain; -1 idle */
};

struct sim_run {
	const struct sim_scenario *sc;
	struct topo *topo;
	enum sim_policy policy;
	uint64_t seed;
	struct sim_world *w;
	struct sim_ops_ctx ops;
	struct agent_loop *loop;
	uint64_t *wall_ns;              /* per policy step */
	long nwall;
	int snap_group;                 /* -1 none */
	struct sim_snapshot before, after;
};

/* Run to the end. Returns 0 (see r->w->nviol for invariant violations),
 * -1 with err on a bad scenario (exit 2: topology, reserved CPUs,
 * llc_policy), -2 with err on an internal failure. snap_group >= 0 takes
 * the demo snapshots of that group. */
int sim_run(struct sim_run *r, const struct sim_scenario *sc, enum sim_policy policy,
            uint64_t seed, FILE *trace, int snap_group, struct llcd_err *err);
void sim_run_fini(struct sim_run *r);

/* Group throughput (NAN when never active) and time-weighted mean. */
double sim_run_throughput(const struct sim_run *r, int g);
double sim_run_throughput_avg(const struct sim_run *r);
/* The --json summary of spec/llcsim.md. */
void sim_run_json(const struct sim_run *r, FILE *out);

#endif
