// SPDX-License-Identifier: GPL-2.0-or-later
/* cliopt.c - the getopt_long table read from a usage text (cliopt.h). */
#include "cliopt.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* the line [s, e) as "line N: why: 'text'" */
static int
bad(struct llcd_err *err, int lineno, const char *s, const char *e, const char *why)
{
	return llcd_err_set(err, "line %d: %s: '%.*s'", lineno, why, (int)(e - s), s);
}

/* Where the option spec of the line [s, e) starts, with its code in
 * column 0 in *key (0: none); NULL when it is not an option line. */
static const char *
spec_start(const char *s, const char *e, int *key)
{
	const char *p = s + 1;

	*key = 0;
	if (e - s < 2 || *s == '-')
		return NULL;
	if (*s != ' ') {
		if (*p != ' ')
			return NULL;    /* prose at column 0 */
		*key = (unsigned char)*s;
	}
	while (p < e && *p == ' ')
		p++;
	return p < e && *p == '-' ? p : NULL;
}

/* An argument word at p (up to a blank): FILE, SPEC|FILE.xml, core|none. */
static bool
is_arg_word(const char *p, const char *e)
{
	bool ok = false;

	for (; p < e && *p != ' '; p++)
		if (isupper((unsigned char)*p) || *p == '|')
			ok = true;
	return ok;
}

static const char *
word_end(const char *p, const char *e)
{
	while (p < e && *p != ' ')
		p++;
	return p;
}

static int
add_one(struct cliopt *co, int code, bool is_short, const char *name, size_t namelen, int has_arg,
        struct llcd_err *err, int lineno, const char *s, const char *e)
{
	if (!isalnum(code))
		return bad(err, lineno, s, e, "an option's letter or code must be a letter or digit");
	if (co->n >= CLIOPT_MAX)
		return bad(err, lineno, s, e, "more options than CLIOPT_MAX");
	if (namelen >= CLIOPT_NAME_MAX)
		return bad(err, lineno, s, e, "a long name of CLIOPT_NAME_MAX bytes or more");
	for (int i = 0; i < co->n; i++)
		if (co->codes[i] == code)
			return bad(err, lineno, s, e, "a letter or code used twice");
	for (int i = 0; name && i < co->nlong; i++)
		if (strlen(co->longopts[i].name) == namelen && strncmp(co->longopts[i].name, name, namelen) == 0)
			return bad(err, lineno, s, e, "a long name used twice");
	co->codes[co->n] = code;
	if (name) {
		/* a short-only option has no row: a NULL name ends the table */
		struct option *o = &co->longopts[co->nlong];
		memcpy(co->names[co->nlong], name, namelen);
		co->names[co->nlong][namelen] = '\0';
		o->name = co->names[co->nlong];
		o->has_arg = has_arg;
		o->flag = NULL;
		o->val = code;
		co->nlong++;
	}
	if (is_short) {
		size_t l = strlen(co->shortopts);
		co->shortopts[l++] = (char)code;
		if (has_arg != no_argument)
			co->shortopts[l++] = ':';
		if (has_arg == optional_argument)
			co->shortopts[l++] = ':';
		co->shortopts[l] = '\0';
	}
	co->n++;
	return 0;
}

/* The option line [s, e), its spec at p and code key. */
static int
add_line(struct cliopt *co, const char *s, const char *e, const char *p, int key, int lineno,
         struct llcd_err *err)
{
	int letter = 0, has_arg = no_argument;
	const char *name = NULL;
	size_t namelen = 0;

	if (p + 1 < e && p[1] != '-') {
		letter = (unsigned char)p[1];
		p += 2;
		if (p < e && *p == ',') {
			if (e - p < 4 || p[1] != ' ' || p[2] != '-' || p[3] != '-')
				return bad(err, lineno, s, e, "'-x,' is followed by ' --name'");
			p += 2;
		} else if (p < e && *p != ' ') {
			return bad(err, lineno, s, e, "a short option is one letter");
		}
	}
	if (p + 1 < e && p[0] == '-' && p[1] == '-') {
		p += 2;
		name = p;
		while (p < e && (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
			p++;
		namelen = (size_t)(p - name);
		if (namelen == 0 || *name == '-' || p[-1] == '-')
			return bad(err, lineno, s, e, "a long name is lower-case letters, digits and inner '-'");
		if (p < e && *p == '[') {
			if (e - p < 4 || p[1] != '=')
				return bad(err, lineno, s, e, "an optional argument is written '--name[=ARG]'");
			while (p < e && *p != ']' && *p != ' ')
				p++;
			if (p >= e || *p != ']')
				return bad(err, lineno, s, e, "'[=ARG' without its ']'");
			p++;
			has_arg = optional_argument;
		} else if (p < e && *p == '=') {
			if (p + 1 >= e || p[1] == ' ')
				return bad(err, lineno, s, e, "'--name=' without its argument");
			p = word_end(p, e);
			has_arg = required_argument;
		}
	} else if (letter == 0) {
		return bad(err, lineno, s, e, "not an option: '-x', '-x, --name' or '--name'");
	}
	if (has_arg == no_argument && p + 1 < e && p[0] == ' ' && p[1] != ' ') {
		if (p[1] == '-')
			return bad(err, lineno, s, e, "'-x' and '--name' are written '-x, --name'");
		if (!is_arg_word(p + 1, e))
			return bad(err, lineno, s, e, "one blank before a word that is not an argument "
			    "(an argument has a capital letter or a '|'; two blanks start the description)");
		p = word_end(p + 1, e);
		has_arg = required_argument;
	}
	if (p < e && *p != ' ')
		return bad(err, lineno, s, e, "unexpected text after the option");
	if (name == NULL && key)
		return bad(err, lineno, s, e, "a code in column 0 goes with a long-only option");
	if (letter && key)
		return bad(err, lineno, s, e, "a code in column 0 goes with a long-only option, this one has -x");
	if (letter == 0 && key == 0)
		return bad(err, lineno, s, e, "a long-only option needs its code in column 0 (\"c --name\")");
	return add_one(co, letter ? letter : key, letter != 0, name, namelen, has_arg, err, lineno, s, e);
}

int
cliopt_add(struct cliopt *co, const char *text, struct llcd_err *err)
{
	int lineno = 0;

	for (const char *s = text; *s; ) {
		const char *e = strchr(s, '\n');
		if (e == NULL)
			e = s + strlen(s);
		lineno++;
		int key;
		const char *p = spec_start(s, e, &key);
		if (p && add_line(co, s, e, p, key, lineno, err) < 0)
			return -1;
		s = *e ? e + 1 : e;
	}
	if (co->n == 0)
		return llcd_err_set(err, "no option line");
	return 0;
}

void
cliopt_extend(struct cliopt *co, const char *prog, const char *text)
{
	struct llcd_err err;

	if (cliopt_add(co, text, &err) < 0) {
		fprintf(stderr, "%s: bug: usage text: %s\n", prog, err.msg);
		abort();
	}
}

void
cliopt_build(struct cliopt *co, const char *prog, const char *text)
{
	memset(co, 0, sizeof(*co));
	cliopt_extend(co, prog, text);
}

void
cliopt_print(const char *text, FILE *f)
{
	for (const char *s = text; *s; ) {
		const char *e = strchr(s, '\n');
		if (e == NULL)
			e = s + strlen(s);
		int key;
		if (spec_start(s, e, &key) && key) {
			fputc(' ', f);
			s++;
		}
		fwrite(s, 1, (size_t)(e - s) + (*e ? 1 : 0), f);
		s = *e ? e + 1 : e;
	}
}

int
cliopt_getopt(const struct cliopt *co, int argc, char **argv)
{
	return getopt_long(argc, argv, co->shortopts, co->longopts, NULL);
}
