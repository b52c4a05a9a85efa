// SPDX-License-Identifier: GPL-2.0-or-later
/* err.h - the error record every llcd library fills instead of exiting. */
#ifndef LLCD_ERR_H
#define LLCD_ERR_H

#define LLCD_ERR_MSG 512

struct llcd_err {
	char msg[LLCD_ERR_MSG];
};

/* Format a message into err (NULL err is allowed). Returns -1, so that
 * callers can write `return llcd_err_set(err, "...")`. */
int llcd_err_set(struct llcd_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefix the message already in err with "prefix: ". Returns -1. */
int llcd_err_prefix(struct llcd_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
