// SPDX-License-Identifier: GPL-2.0-or-later
/* kcas.h - whether the kernel balances threads by cache itself (Linux's
 * cache-aware scheduling), which llcd reports in `llcctl topology` and logs
 * at start. Part of the live back-end (agent/live/kcas.c). */
#ifndef LLCD_LIVE_KCAS_H
#define LLCD_LIVE_KCAS_H

#include <stddef.h>

#define LIVE_DEFAULT_KCAS_ROOT "/sys/kernel/debug/sched/llc_balancing"

/* Linux 7.2+ cache-aware scheduling (CONFIG_SCHED_CACHE): whether
 * dir/enabled exists (dir NULL: /sys/kernel/debug/sched/llc_balancing) and
 * says 1. detail (may be NULL) gets a one-line description. */
enum live_kcas {
	LIVE_KCAS_ABSENT = 0,           /* no such file (older kernel, no debugfs) */
	LIVE_KCAS_DISABLED,
	LIVE_KCAS_ENABLED,
};
enum live_kcas live_kernel_cas(const char *dir, char *detail, size_t len);
const char *live_kcas_name(enum live_kcas k);

#endif
