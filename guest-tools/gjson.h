// SPDX-License-Identifier: GPL-2.0-or-later
/* gjson.h - the tiny JSON writer of llc-guest (no library in a static
 * guest binary): appends to a fixed buffer and remembers overflow.
 *
 * Strings are escaped so that any byte sequence gives valid JSON that
 * strict parsers accept: '"' and '\\' are backslashed, \b \f \n \r \t use
 * their short forms, other bytes below 0x20, 0x7f and every byte >= 0x80
 * are written as \u00XX (the byte's value; a guest process name is bytes,
 * not necessarily UTF-8).
 */
#ifndef LLCD_GJSON_H
#define LLCD_GJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

struct gjson {
	char *buf;
	size_t cap, len;
	bool overflow;                  /* something did not fit */
};

void gjson_init(struct gjson *j, char *buf, size_t cap);
void gjson_raw(struct gjson *j, const char *s);
void gjson_str(struct gjson *j, const char *s);         /* quoted, escaped */
void gjson_int(struct gjson *j, long long v);
void gjson_num(struct gjson *j, double v, int decimals); /* non-finite -> 0 */
void gjson_intlist(struct gjson *j, const struct cpuset *s);   /* [0,1,5] */
/* Position to roll back to (gjson_reset) when an element does not fit. */
size_t gjson_mark(const struct gjson *j);
void gjson_reset(struct gjson *j, size_t mark);

#endif
