// SPDX-License-Identifier: GPL-2.0-or-later
/* cpuset.c - fixed-size CPU bitmaps. */
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct cpuset cpuset_none;

void
cpuset_zero(struct cpuset *s)
{
	memset(s, 0, sizeof(*s));
}

int
cpuset_count(const struct cpuset *s)
{
	int n = 0;

	for (int i = 0; i < CPUSET_WORDS; i++)
		if (s->w[i])
			n += __builtin_popcountll(s->w[i]);
	return n;
}

int
cpuset_count_upto(const struct cpuset *s, int max)
{
	int n = 0;

	for (int i = 0; i < CPUSET_WORDS && n < max; i++)
		if (s->w[i])
			n += __builtin_popcountll(s->w[i]);
	return n < max ? n : max;
}

bool
cpuset_empty(const struct cpuset *s)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

bool
cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

bool
cpuset_subset(const struct cpuset *sub, const struct cpuset *super)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

bool
cpuset_intersects(const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

void
cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

void
cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void
cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

int
cpuset_next(const struct cpuset *s, int prev)
{
	int cpu = prev + 1;

	if (cpu >= CPUSET_MAX)
		return -1;
	/* the rest of cpu's word, then whole words: every CPUSET_FOREACH
	 * ends by scanning the words after the set's last CPU */
	uint64_t word = s->w[cpu / 64] >> (cpu % 64);
	if (word)
		return cpu + __builtin_ctzll(word);
	for (int i = cpu / 64 + 1; i < CPUSET_WORDS; i++)
		if (s->w[i])
			return i * 64 + __builtin_ctzll(s->w[i]);
	return -1;
}

int
cpuset_first(const struct cpuset *s)
{
	return cpuset_next(s, -1);
}

int
cpuset_last(const struct cpuset *s)
{
	for (int i = CPUSET_WORDS - 1; i >= 0; i--)
		if (s->w[i])
			return i * 64 + 63 - __builtin_clzll(s->w[i]);
	return -1;
}

void
cpuset_set_range(struct cpuset *s, int lo, int hi)
{
	if (lo < 0)
		lo = 0;
	if (hi >= CPUSET_MAX)
		hi = CPUSET_MAX - 1;
	/* a word at a time: bits lo..hi of each word in the range */
	for (int c = lo; c <= hi; c = (c | 63) + 1) {
		int end = (c | 63) < hi ? (c | 63) : hi;
		int a = c % 64, b = end % 64;
		uint64_t m = (b == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (b + 1)) - 1) & ~((UINT64_C(1) << a) - 1);
		s->w[c / 64] |= m;
	}
}

static int
parse_num(const char **p, int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v < 0 || v >= CPUSET_MAX)
		return -1;
	*p = end;
	*out = (int)v;
	return 0;
}

int
cpuset_parse(struct cpuset *s, const char *list, struct llcd_err *err)
{
	const char *p = list;

	cpuset_zero(s);
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p == '\0')
		return 0;
	for (;;) {
		const char *tok = p;
		int lo, hi;

		if (parse_num(&p, &lo) < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &hi) < 0 || hi < lo)
				goto bad;
		}
		cpuset_set_range(s, lo, hi);
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			return 0;
		if (*p != ',')
			goto bad;
		p++;
		continue;
bad:
		{
			size_t n = strcspn(tok, ",");
			return llcd_err_set(err, "invalid CPU list '%s' at '%.*s' "
			    "(expected numbers 0-%d and ranges like 0-3,8)",
			    list, (int)(n > 32 ? 32 : n), tok, CPUSET_MAX - 1);
		}
	}
}

int
cpuset_format(const struct cpuset *s, char *buf, size_t len)
{
	size_t off = 0;
	int cpu = cpuset_first(s);

	if (len == 0)
		return -1;
	buf[0] = '\0';
	while (cpu >= 0) {
		int hi = cpu, n;

		while (cpuset_isset(s, hi + 1))
			hi++;
		if (hi == cpu)
			n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", cpu);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", cpu, hi);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += (size_t)n;
		cpu = cpuset_next(s, hi);
	}
	return 0;
}

const char *
cpuset_str(const struct cpuset *s, char *buf, size_t len)
{
	if (cpuset_format(s, buf, len) < 0 && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}
