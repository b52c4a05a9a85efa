// SPDX-License-Identifier: GPL-2.0-or-later
/* modes.c - the names of the host-side modes (modes.h). */
#include "modes.h"

LLCD_NAMES(agent_sampler, enum agent_sampler, AGENT_SAMPLER_PROC,
    [AGENT_SAMPLER_AUTO] = "auto", [AGENT_SAMPLER_BPF] = "bpf", [AGENT_SAMPLER_PROC] = "proc")
LLCD_NAMES(agent_counters, enum agent_counters, AGENT_COUNTERS_OFF,
    [AGENT_COUNTERS_AUTO] = "auto", [AGENT_COUNTERS_ON] = "on", [AGENT_COUNTERS_OFF] = "off")
