// SPDX-License-Identifier: GPL-2.0-or-later
/* clock.c - the monotonic clock. */
#include "clock.h"

#include <time.h>

uint64_t
llcd_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
