// SPDX-License-Identifier: GPL-2.0-or-later
/* names.c - an enum's value from its name, and the list of names (names.h). */
#include "names.h"

#include <stdio.h>
#include <string.h>

long
llcd_from_name(const struct llcd_names *t, const char *s)
{
	for (size_t i = 0; s != NULL && i < t->n; i++)
		if (t->names[i] != NULL && strcmp(t->names[i], s) == 0)
			return (long)i;
	return -1;
}

void
llcd_names_list(const struct llcd_names *t, char *buf, size_t len)
{
	size_t at = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		if (t->names[i] == NULL)
			continue;
		int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", t->names[i]);
		if (n < 0 || (size_t)n >= len - at)
			return;         /* truncated */
		at += (size_t)n;
	}
}
