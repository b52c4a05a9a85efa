// SPDX-License-Identifier: GPL-2.0-or-later
/* modes.h - the host-side modes llcd.conf chooses and the back-ends take as
 * they are: one enum each, named once (names.h), so that llcd.conf's
 * parser, the live back-end and the benchmarks read the same words. */
#ifndef LLCD_AGENT_MODES_H
#define LLCD_AGENT_MODES_H

#include "names.h"

/* sampler: how vCPU threads are sampled */
enum agent_sampler {
	AGENT_SAMPLER_AUTO = 0,         /* the in-kernel tracer where it loads, else /proc */
	AGENT_SAMPLER_BPF,              /* the tracer, or llcd does not start */
	AGENT_SAMPLER_PROC,             /* /proc only */
};
LLCD_NAMES_DECLARE(agent_sampler, enum agent_sampler);

/* counters: per-thread instruction counters for the benefit check */
enum agent_counters {
	AGENT_COUNTERS_AUTO = 0,        /* where the host has them */
	AGENT_COUNTERS_ON,              /* the same, and warn when missing */
	AGENT_COUNTERS_OFF,             /* never opened */
};
LLCD_NAMES_DECLARE(agent_counters, enum agent_counters);

#endif
