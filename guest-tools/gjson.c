// SPDX-License-Identifier: GPL-2.0-or-later
/* gjson.c - see gjson.h. */
#include "gjson.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void
gjson_init(struct gjson *j, char *buf, size_t cap)
{
	j->buf = buf;
	j->cap = cap;
	j->len = 0;
	j->overflow = cap == 0;
	if (cap)
		buf[0] = '\0';
}

static void
put(struct gjson *j, const char *s, size_t n)
{
	if (j->overflow || j->len + n + 1 > j->cap) {
		j->overflow = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

void
gjson_raw(struct gjson *j, const char *s)
{
	put(j, s, strlen(s));
}

void
gjson_str(struct gjson *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(j, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[7];

		switch (*p) {
		case '"': put(j, "\\\"", 2); continue;
		case '\\': put(j, "\\\\", 2); continue;
		case '\b': put(j, "\\b", 2); continue;
		case '\f': put(j, "\\f", 2); continue;
		case '\n': put(j, "\\n", 2); continue;
		case '\r': put(j, "\\r", 2); continue;
		case '\t': put(j, "\\t", 2); continue;
		default: break;
		}
		if (*p < 0x20 || *p >= 0x7f) {
			e[0] = '\\'; e[1] = 'u'; e[2] = '0'; e[3] = '0';
			e[4] = hex[*p >> 4]; e[5] = hex[*p & 15]; e[6] = '\0';
			put(j, e, 6);
		} else {
			put(j, (const char *)p, 1);
		}
	}
	put(j, "\"", 1);
}

void
gjson_int(struct gjson *j, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	gjson_raw(j, b);
}

void
gjson_num(struct gjson *j, double v, int decimals)
{
	char b[64];

	if (!isfinite(v))
		v = 0;
	if (decimals < 0 || decimals > 9)
		decimals = 3;
	if (snprintf(b, sizeof(b), "%.*f", decimals, v) >= (int)sizeof(b)) {
		j->overflow = true;
		return;
	}
	gjson_raw(j, b);
}

void
gjson_intlist(struct gjson *j, const struct cpuset *s)
{
	int c;
	bool first = true;

	put(j, "[", 1);
	CPUSET_FOREACH(c, s) {
		if (!first)
			put(j, ",", 1);
		gjson_int(j, c);
		first = false;
	}
	put(j, "]", 1);
}

size_t
gjson_mark(const struct gjson *j)
{
	return j->len;
}

void
gjson_reset(struct gjson *j, size_t mark)
{
	if (mark <= j->len) {
		j->len = mark;
		j->overflow = false;
		if (j->cap)
			j->buf[j->len] = '\0';
	}
}
