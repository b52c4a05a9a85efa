// SPDX-License-Identifier: GPL-2.0-or-later
/* The configuration of a live back-end over no hypervisor, for the unit
 * tests and the benchmarks that drive live.c on their own processes. */
#ifndef LLCD_TEST_LIVE_NONE_H
#define LLCD_TEST_LIVE_NONE_H

#include <string.h>

#include "live.h"

/* *cfg zeroed, then: no libvirt (LIVE_URI_NONE), host topology t, no state
 * file, the given LIVE_SAMPLER_*. The caller sets anything else. */
static inline void
live_none_config(struct live_config *cfg, const struct topo *t, int sampler)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->uri = LIVE_URI_NONE;
	cfg->topo = t;
	cfg->state_dir = "";
	cfg->sampler = sampler;
}

#endif
