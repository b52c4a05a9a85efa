// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cliopt.c - getopt_long's tables and the help text built from one
 * option table (common/cliopt.c): every kind of option, what getopt_long
 * then accepts, the help as printed, and every malformed table refused
 * with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cliopt.h"

enum { OPT_URI = CLIOPT_LONG, OPT_TIMEOUT, OPT_MODE, OPT_DRY_RUN };

static const struct cliopt opts[] = {
	{ 'd', "debug", NULL, "stay in the foreground" },
	{ 'f', "config", "FILE", "configuration file\n(-nv: a second line)" },
	{ OPT_URI, "uri", "URI", "libvirt URI" },
	{ OPT_TIMEOUT, "timeout", "N", "periods" },
	{ 'a', "aggregate", "[=force]", "confine" },
	{ 'v', NULL, NULL, "short only" },
	{ 'x', NULL, "ARG", "short only, with an argument" },
	{ OPT_MODE, "mode", "aggregate|spread", NULL },
	{ OPT_DRY_RUN, "dry-run", NULL, NULL },
	{ 'h', "help", NULL, "this text" },
	CLIOPT_END
};

static const struct option *
find(const struct cliopt_parser *p, const char *name)
{
	for (int i = 0; i < p->nlong; i++)
		if (strcmp(p->longopts[i].name, name) == 0)
			return &p->longopts[i];
	return NULL;
}

static void
test_tables(void **state)
{
	struct cliopt_parser p;
	struct llcd_err err;
	const struct option *o;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(cliopt_add(&p, opts, &err), 0);
	assert_string_equal(p.shortopts, "df:a::vx:h");
	assert_int_equal(p.n, 10);
	assert_int_equal(p.nlong, 8);
	assert_null(p.longopts[p.nlong].name);
	static const struct { const char *name; int has_arg, val; } want[] = {
		{ "debug", no_argument, 'd' }, { "config", required_argument, 'f' },
		{ "uri", required_argument, OPT_URI }, { "timeout", required_argument, OPT_TIMEOUT },
		{ "aggregate", optional_argument, 'a' }, { "mode", required_argument, OPT_MODE },
		{ "dry-run", no_argument, OPT_DRY_RUN }, { "help", no_argument, 'h' },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_non_null(o = find(&p, want[i].name));
		assert_int_equal(o->has_arg, want[i].has_arg);
		assert_int_equal(o->val, want[i].val);
		assert_null(o->flag);
	}
	/* more tables add to the same parser; a stopping parser starts with '+' */
	static const struct cliopt more[] = { { 'j', "json", NULL, "as JSON" }, CLIOPT_END };
	assert_int_equal(cliopt_add(&p, more, &err), 0);
	assert_string_equal(p.shortopts, "df:a::vx:hj");
	assert_int_equal(cliopt_add(&p, more, &err), -1);
	cliopt_build(&p, "prog", more, true);
	assert_string_equal(p.shortopts, "+j");
	assert_ptr_equal(cliopt_find(opts, OPT_MODE), &opts[7]);
	assert_null(cliopt_find(opts, 'q'));
}

static void
test_getopt(void **state)
{
	struct cliopt_parser p;
	char *argv[] = { "prog", "-d", "--uri", "qemu:///x", "--timeout=3", "-afo", "-vx", "y", "--aggregate=force",
		"--dry-run", "-f", "c.conf", "rest", NULL };
	int argc = sizeof(argv) / sizeof(argv[0]) - 1, c;
	char got[128] = "";

	(void)state;
	cliopt_build(&p, "prog", opts, false);
	optind = 0;
	while ((c = cliopt_getopt(&p, argc, argv)) != -1) {
		char one[48];
		snprintf(one, sizeof(one), "%d=%s;", c, optarg ? optarg : "");
		strcat(got, one);
	}
	char want[128];
	snprintf(want, sizeof(want), "100=;%d=qemu:///x;%d=3;97=fo;118=;120=y;97=force;%d=;102=c.conf;", OPT_URI,
	    OPT_TIMEOUT, OPT_DRY_RUN);
	assert_string_equal(got, want);
	assert_int_equal(optind, argc - 1);
	assert_string_equal(argv[optind], "rest");
	/* a long-only option has no letter: -u is no option */
	char *argv2[] = { "prog", "-u", "x", NULL };
	optind = 0;
	opterr = 0;
	assert_int_equal(cliopt_getopt(&p, 3, argv2), '?');
	opterr = 1;
}

static void
test_help(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	cliopt_help(opts, f);
	fclose(f);
	assert_string_equal(buf,
	    "  -d, --debug                  stay in the foreground\n"
	    "  -f, --config FILE            configuration file\n"
	    "                               (-nv: a second line)\n"
	    "      --uri URI                libvirt URI\n"
	    "      --timeout N              periods\n"
	    "  -a, --aggregate[=force]      confine\n"
	    "  -v                           short only\n"
	    "  -x ARG                       short only, with an argument\n"
	    "      --mode aggregate|spread\n"
	    "      --dry-run\n"
	    "  -h, --help                   this text\n");
	free(buf);
}

static void
expect_error(const struct cliopt *t, const char *msg)
{
	struct cliopt_parser p;
	struct llcd_err err;

	memset(&p, 0, sizeof(p));
	err.msg[0] = '\0';
	if (cliopt_add(&p, t, &err) != -1)
		fail_msg("accepted, expected '%s'", msg);
	if (strstr(err.msg, msg) == NULL)
		fail_msg("'%s', not '%s'", err.msg, msg);
}

static void
test_malformed(void **state)
{
	(void)state;
	expect_error((const struct cliopt[]){ { 'd', "debug", NULL, "x" }, { 'd', "dry-run", NULL, "y" }, CLIOPT_END },
	    "option 'dry-run': key 100 used twice");
	expect_error((const struct cliopt[]){ { 'd', "debug", NULL, "x" }, { 'e', "debug", NULL, "y" }, CLIOPT_END },
	    "option 'debug': long name used twice");
	expect_error((const struct cliopt[]){ { '?', "what", NULL, "x" }, CLIOPT_END },
	    "is neither a letter, a digit nor a long-only code");
	expect_error((const struct cliopt[]){ { CLIOPT_LONG, NULL, NULL, "x" }, CLIOPT_END },
	    "a long-only option without a long name");
	expect_error((const struct cliopt[]){ { 'd', "--debug", NULL, "x" }, CLIOPT_END },
	    "a long name is written without its dashes");
	expect_error((const struct cliopt[]){ { 'a', "aggregate", "[force", "x" }, CLIOPT_END },
	    "an optional argument is written \"[=WORD]\"");
	expect_error((const struct cliopt[]){ { 'a', NULL, "[=force]", "x" }, CLIOPT_END },
	    "an optional argument is written \"[=WORD]\", on a long option");
	struct cliopt many[CLIOPT_MAX + 2];
	static char names[CLIOPT_MAX + 1][16];
	for (int i = 0; i <= CLIOPT_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "opt%d", i);
		many[i] = (struct cliopt){ CLIOPT_LONG + i, names[i], NULL, "x" };
	}
	many[CLIOPT_MAX + 1] = (struct cliopt)CLIOPT_END;
	expect_error(many, "more than CLIOPT_MAX options");
}

/* the programs' entry: a malformed table is a bug, reported and aborted */
static void
test_build_aborts(void **state)
{
	int fds[2], status;
	char out[512] = "";

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cliopt_parser p;
		dup2(fds[1], STDERR_FILENO);
		cliopt_build(&p, "prog", (const struct cliopt[]){ { 'd', "debug", NULL, "x" },
		    { 'd', "dry-run", NULL, "y" }, CLIOPT_END }, false);
		_exit(0);
	}
	close(fds[1]);
	assert_true(read(fds[0], out, sizeof(out) - 1) > 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, "prog: bug: options: option 'dry-run': key 100 used twice"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_getopt),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_build_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
