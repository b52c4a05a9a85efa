// SPDX-License-Identifier: GPL-2.0-or-later
/* names.h - the names of an enum's values, from one table: printed with
 * X_name(), parsed with X_from_name(), listed in messages with
 * llcd_names_list(). Every named llcd enum has one such table, written in
 * the enum's order and sized by the enum's last value + 1, so that a new
 * value without a name fails to compile, and every place that reads a name
 * (llcd.conf, the annotation, llcctl, the tools) reads it from there:
 *
 *	LLCD_NAMES(policy_mode, enum policy_mode, POLICY_MODE_SPREAD,
 *	    [POLICY_MODE_NONE] = "none", [POLICY_MODE_STATIC] = "static", ...)
 *
 * in the module's .c file defines
 *	const struct llcd_names policy_mode_names;      the table
 *	const char *policy_mode_name(enum policy_mode v);
 *	int policy_mode_from_name(const char *s, enum policy_mode *v);
 * which LLCD_NAMES_DECLARE(policy_mode, enum policy_mode) declares in its
 * header. An enum that is printed and never read uses
 * LLCD_NAME_FUNCTION(fn, type, last, ...), which defines fn(type v) only.
 * A value outside the table (a corrupted or future value) prints as "?";
 * a name is matched exactly (case matters). */
#ifndef LLCD_NAMES_H
#define LLCD_NAMES_H

#include <stddef.h>

struct llcd_names {
	const char *const *names;       /* by value; NULL: a value without a name */
	size_t n;                       /* the last value + 1 */
};

static inline const char *
llcd_name(const char *const *names, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && names[v] != NULL ? names[v] : "?";
}

/* The value called s, -1 when none is. */
long llcd_from_name(const struct llcd_names *t, const char *s);
/* The names, in the enum's order, ", "-separated ("none, static, ..."),
 * for messages; truncated to len. */
void llcd_names_list(const struct llcd_names *t, char *buf, size_t len);

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

#define LLCD_NAMES_DECLARE(prefix, type) \
	extern const struct llcd_names prefix##_names; \
	const char *prefix##_name(type v); \
	int prefix##_from_name(const char *s, type *v)

#define LLCD_NAMES(prefix, type, last, ...) \
	static const char *const prefix##_names_tab[] = { __VA_ARGS__ }; \
	LLCD_NAMES_CHECK(prefix##_names_tab, last); \
	const struct llcd_names prefix##_names = { \
		prefix##_names_tab, sizeof(prefix##_names_tab) / sizeof(prefix##_names_tab[0]) }; \
	const char *prefix##_name(type v) \
	{ \
		return LLCD_NAME(prefix##_names_tab, v); \
	} \
	int prefix##_from_name(const char *s, type *v) \
	{ \
		long x = llcd_from_name(&prefix##_names, s); \
		if (x < 0) \
			return -1; \
		*v = (type)x; \
		return 0; \
	}

#endif
