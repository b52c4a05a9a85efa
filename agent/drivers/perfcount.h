// SPDX-License-Identifier: GPL-2.0-or-later
/* perfcount.h - per-thread instructions retired through perf_event_open,
 * for the engine's benefit check (policy_host.counters). Hosts where
 * hardware counters are not exposed (many VMs, this project's CI) report
 * unavailable once, with the reason, and llcd falls back to the kernel's
 * guards. */
#ifndef LLCD_PERFCOUNT_H
#define LLCD_PERFCOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Probe once on the calling thread: can instructions be counted? */
bool perfcount_available(char *reason, size_t len);

/* Open a counter on thread tid (any CPU, user + kernel + guest mode).
 * Returns an fd, or -1 with err (ESRCH: the thread is gone). */
int perfcount_open(pid_t tid, struct llcd_err *err);
/* Read the running total; -1 with err on failure. */
int perfcount_read(int fd, uint64_t *value, struct llcd_err *err);

#endif
