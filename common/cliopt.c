// SPDX-License-Identifier: GPL-2.0-or-later
/* cliopt.c - getopt_long's tables and the help text from one option table
 * (cliopt.h). */
#include "cliopt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define HELP_COL_MAX 30

static bool
optional_arg(const struct cliopt *o)
{
	return o->arg != NULL && o->arg[0] == '[';
}

static int
add_one(struct cliopt_parser *p, const struct cliopt *o, struct llcd_err *err)
{
	const char *what = o->name ? o->name : "?";
	bool is_short = o->key > 0 && o->key < 128 && isalnum(o->key);
	int has_arg = o->arg == NULL ? no_argument : optional_arg(o) ? optional_argument : required_argument;

	if (!is_short && o->key < CLIOPT_LONG)
		return llcd_err_set(err, "option '%s': key %d is neither a letter, a digit nor a long-only code",
		    what, o->key);
	if (!is_short && o->name == NULL)
		return llcd_err_set(err, "option key %d: a long-only option without a long name", o->key);
	if (o->name != NULL && (o->name[0] == '\0' || o->name[0] == '-'))
		return llcd_err_set(err, "option '%s': a long name is written without its dashes", what);
	if (optional_arg(o) && (o->name == NULL || strncmp(o->arg, "[=", 2) != 0 || o->arg[strlen(o->arg) - 1] != ']'))
		return llcd_err_set(err, "option '%s': an optional argument is written \"[=WORD]\", on a long option",
		    what);
	if (p->n >= CLIOPT_MAX)
		return llcd_err_set(err, "option '%s': more than CLIOPT_MAX options", what);
	for (int i = 0; i < p->n; i++)
		if (p->keys[i] == o->key)
			return llcd_err_set(err, "option '%s': key %d used twice", what, o->key);
	for (int i = 0; o->name && i < p->nlong; i++)
		if (strcmp(p->longopts[i].name, o->name) == 0)
			return llcd_err_set(err, "option '%s': long name used twice", what);
	p->keys[p->n++] = o->key;
	if (o->name) {
		struct option *l = &p->longopts[p->nlong++];
		l->name = o->name;
		l->has_arg = has_arg;
		l->flag = NULL;
		l->val = o->key;
	}
	if (is_short) {
		size_t n = strlen(p->shortopts);
		p->shortopts[n++] = (char)o->key;
		if (has_arg != no_argument)
			p->shortopts[n++] = ':';
		if (has_arg == optional_argument)
			p->shortopts[n++] = ':';
		p->shortopts[n] = '\0';
	}
	return 0;
}

int
cliopt_add(struct cliopt_parser *p, const struct cliopt *opts, struct llcd_err *err)
{
	for (const struct cliopt *o = opts; o->key != 0; o++)
		if (add_one(p, o, err) < 0)
			return -1;
	return 0;
}

void
cliopt_extend(struct cliopt_parser *p, const char *prog, const struct cliopt *opts)
{
	struct llcd_err err;

	if (cliopt_add(p, opts, &err) < 0) {
		fprintf(stderr, "%s: bug: options: %s\n", prog, err.msg);
		abort();
	}
}

void
cliopt_build(struct cliopt_parser *p, const char *prog, const struct cliopt *opts, bool stop)
{
	memset(p, 0, sizeof(*p));
	if (stop)
		p->shortopts[0] = '+';
	cliopt_extend(p, prog, opts);
}

int
cliopt_getopt(const struct cliopt_parser *p, int argc, char **argv)
{
	return getopt_long(argc, argv, p->shortopts, p->longopts, NULL);
}

/* "-f, --config FILE", "    --uri URI", "-v", "    --aggregate[=force]" */
static void
left_text(const struct cliopt *o, char *buf, size_t len)
{
	bool is_short = o->key < CLIOPT_LONG;
	const char *sep = optional_arg(o) ? "" : " ";

	if (o->name == NULL)
		snprintf(buf, len, "-%c%s%s", o->key, o->arg ? " " : "", o->arg ? o->arg : "");
	else if (is_short)
		snprintf(buf, len, "-%c, --%s%s%s", o->key, o->name, o->arg ? sep : "", o->arg ? o->arg : "");
	else
		snprintf(buf, len, "    --%s%s%s", o->name, o->arg ? sep : "", o->arg ? o->arg : "");
}

void
cliopt_help(const struct cliopt *opts, FILE *f)
{
	char left[128];
	size_t col = 0;

	for (const struct cliopt *o = opts; o->key != 0; o++) {
		left_text(o, left, sizeof(left));
		if (strlen(left) + 2 > col)
			col = strlen(left) + 2;
	}
	if (col > HELP_COL_MAX)
		col = HELP_COL_MAX;
	for (const struct cliopt *o = opts; o->key != 0; o++) {
		const char *h = o->help ? o->help : "";
		size_t n;

		left_text(o, left, sizeof(left));
		n = strlen(left);
		if (*h == '\0') {
			fprintf(f, "  %s\n", left);
			continue;
		}
		fprintf(f, "  %s%*s", left, (int)(n + 2 > col ? 2 : col - n), "");
		for (;;) {
			const char *nl = strchr(h, '\n');
			fprintf(f, "%.*s\n", (int)(nl ? nl - h : (int)strlen(h)), h);
			if (nl == NULL || nl[1] == '\0')
				break;
			h = nl + 1;
			fprintf(f, "  %*s", (int)col, "");
		}
	}
}

const struct cliopt *
cliopt_find(const struct cliopt *opts, int key)
{
	for (const struct cliopt *o = opts; o->key != 0; o++)
		if (o->key == key)
			return o;
	return NULL;
}
