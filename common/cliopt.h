// SPDX-License-Identifier: GPL-2.0-or-later
/* cliopt.h - a program's options written once, as its usage text: the
 * getopt_long table and short-option string are read from the text that
 * --help prints, so that the two cannot drift.
 *
 * An option line is a line whose first non-blank character is '-' after at
 * least one blank (the usage synopsis, prose at column 0 and indented prose
 * are not option lines). Its forms:
 *
 *   "  -t, --topology FILE  text"   short and long, required argument
 *   "  -v, --verbose        text"   short and long, no argument
 *   "  -a, --aggregate[=force] text" optional argument ("a::", optional_argument)
 *   "  -v                   text"   short only (-x ARG: with an argument)
 *   "u --uri URI            text"   long only, see below
 *
 * After a name, one blank and a word with a capital letter or a '|'
 * (FILE, SPEC|FILE.xml, core|none) is its argument; "--name=ARG" is the same.
 * The description follows after two or more blanks (one after an argument),
 * or the line ends there. Anything else on an option line is an error.
 *
 * A long-only option has no letter the user may type, but the program's
 * switch needs a code for it: that code is the character in column 0 of
 * its line ("u --uri URI" is --uri, code 'u'), which cliopt_print() prints
 * as a blank, so the line shows as "  --uri URI". The code is not accepted
 * as a short option. Every short letter and code is used once per table.
 *
 * A malformed text is a bug in the program, not a user error:
 * cliopt_build() reports it on stderr and aborts (every test that runs the
 * program then fails); cliopt_add() returns the message, for tests.
 * Limits: CLIOPT_MAX options, long names below CLIOPT_NAME_MAX bytes. */
#ifndef LLCD_CLIOPT_H
#define LLCD_CLIOPT_H

#include <getopt.h>
#include <stdio.h>

#include "err.h"

#define CLIOPT_MAX 40
#define CLIOPT_NAME_MAX 32

struct cliopt {
	struct option longopts[CLIOPT_MAX + 1];         /* NULL-terminated, for getopt_long */
	char shortopts[3 * CLIOPT_MAX + 1];             /* "t:vh" ("a::" optional) */
	char names[CLIOPT_MAX][CLIOPT_NAME_MAX];        /* what longopts[].name points into */
	int codes[CLIOPT_MAX];                          /* every option's letter or code */
	int n, nlong;                                   /* options; rows of longopts */
};

/* Add the options of text to co (zero it first; more calls add the options
 * of more texts to the same table). Returns 0, or -1 with "line N: ..." in
 * err; co is then unusable. */
int cliopt_add(struct cliopt *co, const char *text, struct llcd_err *err);
/* Zero co and add text, or print "PROG: bug: usage text: ..." and abort(). */
void cliopt_build(struct cliopt *co, const char *prog, const char *text);
/* Add text to co (built already), or print that and abort(). */
void cliopt_extend(struct cliopt *co, const char *prog, const char *text);
/* Print text as the user sees it: the codes of long-only options blanked. */
void cliopt_print(const char *text, FILE *f);
/* getopt_long(argc, argv, co->shortopts, co->longopts, NULL) */
int cliopt_getopt(const struct cliopt *co, int argc, char **argv);

#endif
