// SPDX-License-Identifier: GPL-2.0-or-later
/* names.h - the printed name of an enum value, from one table.
 *
 * Every llcd enum that is printed (states, results, modes, kinds) names its
 * values in a table written in the enum's order and sized by the enum's last
 * value + 1, so that a new value without a name fails to compile:
 *
 *	LLCD_NAME_FUNCTION(virt_result_name, enum virt_result, VIRT_GONE,
 *	    [VIRT_OK] = "ok", [VIRT_TRANSIENT] = "transient", [VIRT_GONE] = "gone")
 *
 * defines const char *virt_result_name(enum virt_result v), declared in the
 * module's header as usual.
 * A value outside the table (a corrupted or future value) reads as "?". */
#ifndef LLCD_NAMES_H
#define LLCD_NAMES_H

#include <stddef.h>

static inline const char *
llcd_name(const char *const *names, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && names[v] != NULL ? names[v] : "?";
}

#define LLCD_NAME(tab, v) llcd_name((tab), sizeof(tab) / sizeof((tab)[0]), (long)(v))

/* The table names every value from 0 to LAST, and no more. */
#define LLCD_NAMES_CHECK(tab, last) \
	_Static_assert(sizeof(tab) / sizeof((tab)[0]) == (size_t)(last) + 1, \
	    #tab " must name every value up to " #last)

/* The name function of an enum: FN(TYPE v) returns the name of v from the
 * designated initialisers that follow LAST, the enum's last value. */
#define LLCD_NAME_FUNCTION(fn, type, last, ...) \
	const char *fn(type v) \
	{ \
		static const char *const names[] = { __VA_ARGS__ }; \
		LLCD_NAMES_CHECK(names, last); \
		return LLCD_NAME(names, v); \
	}

#endif
