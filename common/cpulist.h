// SPDX-License-Identifier: GPL-2.0-or-later
/* cpulist.h - a CPU list ("0,2-3") as the CPU numbers in the order they are
 * written, for the programs that pin their i-th thread to the i-th CPU
 * (llcbench, the e2e guests' e2e-spin). cpuset_parse() (cpuset.h) is the
 * set form the daemon uses. Header-only and libc-only, so that a static
 * guest binary built outside llcd's build needs no more than -I common. */
#ifndef LLCD_CPULIST_H
#define LLCD_CPULIST_H

#include <stdlib.h>

/* The CPUs of list s into cpus[] (at most max of them, each below limit);
 * returns their count, or -1 for an empty or malformed list, a CPU at or
 * above limit, a descending range or more than max CPUs. */
static inline int
cpulist_parse(const char *s, int limit, int *cpus, int max)
{
	int n = 0;
	char *end;

	if (*s == '\0')
		return -1;
	while (*s) {
		long a = strtol(s, &end, 10), b;

		if (end == s || a < 0 || a >= limit)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= limit)
				return -1;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -1;
			cpus[n++] = (int)c;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return n;
}

#endif
