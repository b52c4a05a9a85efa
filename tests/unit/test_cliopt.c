// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cliopt.c - the getopt table read from a usage text (common/cliopt.c):
 * every form of option line, what getopt_long then accepts, the printed
 * text, and every malformed text refused with its message. */
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

static const char text[] =
    "usage: prog [-d] [--uri URI] [-a[=force]] FILE\n"
    "Prose at column 0 -- not an option.\n"
    "  -d, --debug        stay in the foreground\n"
    "  -f, --config FILE  configuration file\n"
    "                     (-nv: a continuation line, not an option)\n"
    "u --uri URI          libvirt URI\n"
    "O     --timeout=N    periods\n"
    "  -a, --aggregate[=force] confine\n"
    "  -v                 short only\n"
    "  -x ARG             short only, with an argument\n"
    "m --mode aggregate|spread\n"
    "D --dry-run\n"
    "  -h, --help         this text\n";

static const struct option *
find(const struct cliopt *co, const char *name)
{
	for (int i = 0; i < co->nlong; i++)
		if (strcmp(co->longopts[i].name, name) == 0)
			return &co->longopts[i];
	return NULL;
}

static void
test_forms(void **state)
{
	struct cliopt co;
	struct llcd_err err;
	const struct option *o;

	(void)state;
	memset(&co, 0, sizeof(co));
	assert_int_equal(cliopt_add(&co, text, &err), 0);
	assert_string_equal(co.shortopts, "df:a::vx:h");
	assert_int_equal(co.n, 10);
	assert_int_equal(co.nlong, 8);
	assert_null(co.longopts[co.nlong].name);
	static const struct { const char *name; int has_arg, val; } want[] = {
		{ "debug", no_argument, 'd' }, { "config", required_argument, 'f' },
		{ "uri", required_argument, 'u' }, { "timeout", required_argument, 'O' },
		{ "aggregate", optional_argument, 'a' }, { "mode", required_argument, 'm' },
		{ "dry-run", no_argument, 'D' }, { "help", no_argument, 'h' },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_non_null(o = find(&co, want[i].name));
		assert_int_equal(o->has_arg, want[i].has_arg);
		assert_int_equal(o->val, want[i].val);
		assert_null(o->flag);
	}
	/* more texts add to the same table */
	assert_int_equal(cliopt_add(&co, "  --json  as JSON\n", &err), -1);
	assert_non_null(strstr(err.msg, "needs its code in column 0"));
	memset(&co, 0, sizeof(co));
	assert_int_equal(cliopt_add(&co, text, &err), 0);
	assert_int_equal(cliopt_add(&co, "j --json  as JSON\n", &err), 0);
	assert_non_null(find(&co, "json"));
	assert_int_equal(cliopt_add(&co, "  -j  again\n", &err), -1);
	assert_non_null(strstr(err.msg, "used twice"));
}

static void
test_getopt(void **state)
{
	struct cliopt co;
	char *argv[] = { "prog", "--uri", "test:///default", "-f", "x.conf", "--aggregate=force", "-a",
		"--timeout=3", "--dry-run", "-dv", "-x", "1", "file", NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	char seen[32] = "";
	int c;

	(void)state;
	cliopt_build(&co, "prog", text);
	optind = 0;
	opterr = 0;
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		size_t l = strlen(seen);
		seen[l] = (char)c;
		seen[l + 1] = '\0';
		if (c == 'u')
			assert_string_equal(optarg, "test:///default");
		if (c == 'a')
			assert_true(l == 2 ? optarg && !strcmp(optarg, "force") : optarg == NULL);
		if (c == 'O')
			assert_string_equal(optarg, "3");
	}
	assert_string_equal(seen, "ufaaODdvx");
	assert_int_equal(optind, argc - 1);
	/* a long-only option's code is not a short option */
	char *argv2[] = { "prog", "-u", "x", NULL };
	optind = 0;
	assert_int_equal(cliopt_getopt(&co, 3, argv2), '?');
	opterr = 1;
}

static void
test_print(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	cliopt_print("usage: p\n  -d, --debug  x\nu --uri URI  y\nO     --timeout N\nPlain prose\nlast", f);
	fclose(f);
	assert_string_equal(buf, "usage: p\n  -d, --debug  x\n  --uri URI  y\n      --timeout N\nPlain prose\nlast");
	free(buf);
}

static void
expect_error(const char *t, const char *msg)
{
	struct cliopt co;
	struct llcd_err err;

	memset(&co, 0, sizeof(co));
	err.msg[0] = '\0';
	if (cliopt_add(&co, t, &err) != -1)
		fail_msg("accepted: %s", t);
	if (strstr(err.msg, msg) == NULL)
		fail_msg("for '%s': '%s', not '%s'", t, err.msg, msg);
}

static void
test_malformed(void **state)
{
	(void)state;
	expect_error("  -d, --debug  x\n  -d, --dry-run  y\n", "line 2: a letter or code used twice: '  -d, --dry-run  y'");
	expect_error("  -d, --debug  x\n  -e, --debug  y\n", "line 2: a long name used twice");
	expect_error("  -d, --debug  x\nd --dry-run  y\n", "line 2: a letter or code used twice");
	expect_error("  --json  x\n", "line 1: a long-only option needs its code in column 0");
	expect_error("j -j, --json  x\n", "a code in column 0 goes with a long-only option");
	expect_error("j -j  x\n", "a code in column 0 goes with a long-only option");
	expect_error("  -debug  x\n", "a short option is one letter");
	expect_error("  -d --debug  x\n", "'-x' and '--name' are written '-x, --name'");
	expect_error("  -d,--debug  x\n", "'-x,' is followed by ' --name'");
	expect_error("  --Debug  x\n", "a long name is lower-case letters");
	expect_error("  -\n", "not an option");
	expect_error("  -d, --Debug  x\n", "a long name is lower-case letters");
	expect_error("d --debug-  x\n", "a long name is lower-case letters");
	expect_error("  -d, --debug stay in the foreground\n", "one blank before a word that is not an argument");
	expect_error("  -a, --aggregate[=force confine\n", "'[=ARG' without its ']'");
	expect_error("  -a, --aggregate[force]  confine\n", "an optional argument is written '--name[=ARG]'");
	expect_error("  -f, --config= FILE\n", "'--name=' without its argument");
	expect_error("  -f, --config:  x\n", "unexpected text after the option");
	expect_error("  -?, --what  x\n", "a letter or digit");
	expect_error("usage: prog\nno options here\n", "no option line");
	char many[4096] = "";
	for (int i = 0; i <= CLIOPT_MAX; i++) {
		char line[64];
		snprintf(line, sizeof(line), "%c --opt%d  x\n", i < 26 ? 'a' + i : 'A' + i - 26, i);
		strcat(many, line);
	}
	expect_error(many, "more options than CLIOPT_MAX");
	expect_error("x --a-long-name-of-thirty-three-bytes  x\n", "CLIOPT_NAME_MAX");
}

/* the programs' entry: a malformed text is a bug, reported and aborted */
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
		struct cliopt co;
		dup2(fds[1], STDERR_FILENO);
		cliopt_build(&co, "prog", "  -d, --debug  x\n  -d, --dry-run  y\n");
		_exit(0);
	}
	close(fds[1]);
	assert_true(read(fds[0], out, sizeof(out) - 1) > 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, "prog: bug: usage text: line 2: a letter or code used twice"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_getopt),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_build_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
