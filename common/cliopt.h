// SPDX-License-Identifier: GPL-2.0-or-later
/* cliopt.h - a program's options declared once, as a plain table, from
 * which both getopt_long's tables and the help text are built, so that the
 * two cannot drift (tests/packaging/test_man.sh checks the man pages
 * against the help):
 *
 *	enum { OPT_URI = CLIOPT_LONG, OPT_SOCKET };
 *	static const struct cliopt opts[] = {
 *		{ 'd', "debug", NULL, "stay in the foreground" },
 *		{ 'f', "config", "FILE", "configuration file" },
 *		{ OPT_URI, "uri", "URI", "libvirt URI" },
 *		{ 'a', "aggregate", "[=force]", "an optional argument" },
 *		{ 'v', NULL, NULL, "a short option only" },
 *		CLIOPT_END
 *	};
 *
 * key is what getopt returns for the option: a letter or digit, which is
 * also its short option (-d), or a code from CLIOPT_LONG up for an option
 * with a long name only. arg is the argument as help shows it: NULL for
 * none, "[=WORD]" for an optional one (--aggregate[=force]), any other
 * word for a required one. help may run over several lines ('\n').
 *
 * A malformed table (a key or long name used twice, a key that is neither
 * a letter, a digit nor a long-only code, an option with neither a short
 * nor a long name, more than CLIOPT_MAX options) is a bug in the program:
 * cliopt_build() reports it on stderr and aborts (every test that runs the
 * program then fails); cliopt_add() returns the message, for tests.
 * Limits: CLIOPT_MAX options in one parser. */
#ifndef LLCD_CLIOPT_H
#define LLCD_CLIOPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define CLIOPT_MAX 48
#define CLIOPT_LONG 0x100       /* the first key of a long-only option */

struct cliopt {
	int key;                /* letter or digit (-k), or >= CLIOPT_LONG */
	const char *name;       /* --name; NULL: short only */
	const char *arg;        /* NULL none, "[=WORD]" optional, else required */
	const char *help;
};
#define CLIOPT_END { 0, NULL, NULL, NULL }

/* getopt_long's tables, built from one or more option tables. */
struct cliopt_parser {
	struct option longopts[CLIOPT_MAX + 1];         /* NULL-terminated */
	char shortopts[3 * CLIOPT_MAX + 2];             /* "+t:vh" ('+': stop at the first operand) */
	int keys[CLIOPT_MAX];
	int n, nlong;
};

/* Add the options of opts (CLIOPT_END last) to p (zero it first; more
 * calls add more tables). Returns 0, or -1 with the reason in err; p is
 * then unusable. */
int cliopt_add(struct cliopt_parser *p, const struct cliopt *opts, struct llcd_err *err);
/* Zero p and add opts, or print "PROG: bug: options: ..." and abort().
 * stop: option parsing stops at the first operand (a command name). */
void cliopt_build(struct cliopt_parser *p, const char *prog, const struct cliopt *opts, bool stop);
/* Add opts to p (built already), or print that and abort(). */
void cliopt_extend(struct cliopt_parser *p, const char *prog, const struct cliopt *opts);
/* getopt_long over p's tables. */
int cliopt_getopt(const struct cliopt_parser *p, int argc, char **argv);
/* The options of opts as help shows them, one per line:
 *	"  -f, --config FILE  configuration file"
 *	"      --uri URI      libvirt URI"
 * the descriptions aligned in one column (at most 30). */
void cliopt_help(const struct cliopt *opts, FILE *f);
/* The table's entry for key, NULL when there is none. */
const struct cliopt *cliopt_find(const struct cliopt *opts, int key);

#endif
