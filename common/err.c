// SPDX-License-Identifier: GPL-2.0-or-later
/* err.c - the error record. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
llcd_err_set(struct llcd_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int
llcd_err_prefix(struct llcd_err *err, const char *fmt, ...)
{
	char prefix[LLCD_ERR_MSG], old[LLCD_ERR_MSG];
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old) >= (int)sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);   /* mark truncation */
	return -1;
}
