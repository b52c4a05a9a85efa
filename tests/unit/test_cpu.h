// SPDX-License-Identifier: GPL-2.0-or-later
/* CPU time of the calling thread, for unit tests that burn CPU (not wall
 * time: the machine is shared). */
#ifndef LLCD_TEST_CPU_H
#define LLCD_TEST_CPU_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
test_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn ms of the calling thread's CPU time. */
static inline void
test_burn_ms(uint64_t ms)
{
	uint64_t end = test_thread_cpu_ns() + ms * 1000000ull;
	volatile uint64_t x = 0;

	while (test_thread_cpu_ns() < end)
		x++;
}

#endif
