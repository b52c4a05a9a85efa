// SPDX-License-Identifier: GPL-2.0-or-later
/* clock.h - the monotonic clock every llcd program reads (CLOCK_MONOTONIC:
 * not set back by NTP or the administrator, so intervals and deadlines
 * computed from it never run backwards), and the calling thread's CPU
 * time. */
#ifndef LLCD_CLOCK_H
#define LLCD_CLOCK_H

#include <stdint.h>

/* Nanoseconds since an arbitrary point (boot, on Linux). */
uint64_t llcd_mono_ns(void);

/* The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
 * a piece of work's own cost, whatever else the host runs (wall time is
 * not, on a busy host); 0 when the clock cannot be read. */
uint64_t llcd_thread_cpu_ns(void);

/* The same in milliseconds. */
static inline uint64_t
llcd_mono_ms(void)
{
	return llcd_mono_ns() / 1000000u;
}

#endif
