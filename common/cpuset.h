// SPDX-License-Identifier: GPL-2.0-or-later
/* cpuset.h - fixed-size CPU bitmaps (host PUs by OS index, or vCPU numbers). */
#ifndef LLCD_CPUSET_H
#define LLCD_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CPUSET_MAX 2048                 /* highest CPU number + 1 we model */
#define CPUSET_WORDS (CPUSET_MAX / 64)

struct cpuset {
	uint64_t w[CPUSET_WORDS];
};

/* The empty set, for pointers to a set that must not be NULL (interned
 * sets, cpuset_pool.h; a sample's unknown pin). */
extern const struct cpuset cpuset_none;

void cpuset_zero(struct cpuset *s);

/* One bit: inline, they run for every vCPU of a step (out-of-range CPUs
 * are ignored, and never set). */
static inline void
cpuset_set(struct cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < CPUSET_MAX)
		s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void
cpuset_clr(struct cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < CPUSET_MAX)
		s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool
cpuset_isset(const struct cpuset *s, int cpu)
{
	if (cpu < 0 || cpu >= CPUSET_MAX)
		return false;
	return (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

int cpuset_count(const struct cpuset *s);
/* min(cpuset_count(s), max), counting no further ("at least two?") */
int cpuset_count_upto(const struct cpuset *s, int max);
bool cpuset_empty(const struct cpuset *s);
bool cpuset_equal(const struct cpuset *a, const struct cpuset *b);
bool cpuset_subset(const struct cpuset *sub, const struct cpuset *super);
bool cpuset_intersects(const struct cpuset *a, const struct cpuset *b);
void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
int cpuset_first(const struct cpuset *s);            /* -1 when empty */
int cpuset_next(const struct cpuset *s, int prev);   /* -1 after the last */
int cpuset_last(const struct cpuset *s);             /* -1 when empty */
void cpuset_set_range(struct cpuset *s, int lo, int hi);   /* inclusive */

/* Parse a Linux CPU list ("0-3,8,10-11"); "" is the empty set. On error
 * the message names the offending token. */
int cpuset_parse(struct cpuset *s, const char *list, struct llcd_err *err);
/* Format as a CPU list; returns -1 on truncation (buf still terminated). */
int cpuset_format(const struct cpuset *s, char *buf, size_t len);
/* The same for messages: a list cut short ends in "..."; returns buf. */
const char *cpuset_str(const struct cpuset *s, char *buf, size_t len);

/* cpuset_next with the next CPU of the same word found inline: loops over
 * sets run for every vCPU of every step, and most steps find the next
 * member in the word of the last one. */
static inline int
cpuset_next_fast(const struct cpuset *s, int prev)
{
	int cpu = prev + 1;

	if (cpu > 0 && cpu < CPUSET_MAX && cpu % 64 != 0) {
		uint64_t word = s->w[cpu / 64] >> (cpu % 64);
		if (word)
			return cpu + __builtin_ctzll(word);
	}
	return cpuset_next(s, prev);
}

static inline int
cpuset_first_fast(const struct cpuset *s)
{
	return s->w[0] ? __builtin_ctzll(s->w[0]) : cpuset_next(s, 63);
}

#define CPUSET_FOREACH(cpu, set) \
	for ((cpu) = cpuset_first_fast(set); (cpu) >= 0; (cpu) = cpuset_next_fast((set), (cpu)))

#endif
