// SPDX-License-Identifier: GPL-2.0-or-later
/* world_int.h - what the files of llcsim's world share (world.c,
 * world_sched.c, world_wakeups.c). Private to them. */
#ifndef LLCSIM_WORLD_INT_H
#define LLCSIM_WORLD_INT_H

#include "world.h"

/* world.c: a thread's allowed PUs (a vCPU: its pin, else every
 * non-reserved PU; a QEMU thread: the emulator pin, else the same); whether
 * LLC l is in its LLC mask; the mask made again from its allowed PUs */
const struct cpuset *world_allowed(const struct sim_world *w, const struct sim_thread *th);
bool world_llc_ok(const struct sim_thread *th, int l);
void world_refresh_llcs(struct sim_world *w, struct sim_thread *th);

/* world_sched.c: one period's balance (every policy), kernel-cas's
 * per-period update of its preferred LLCs */
void world_balance(struct sim_world *w);
void world_kcas_update(struct sim_world *w);

/* world_wakeups.c: one period's wakeup trace (host.wakeup_trace) */
void world_wakeups(struct sim_world *w, double t);

#endif
