/* test_config.c - llcd.conf parsing: every directive, every error with
 * its file:line message, and print -> parse round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void
test_defaults_and_directives(void **state)
{
	struct config c;
	struct llcd_err err;

	config_defaults(&c);
	assert_string_equal(c.uri, "qemu:///system");
	assert_int_equal(c.period_ms, 1000);
	assert_int_equal(config_parse(&c,
	    "# comment\n\n  uri   qemu:///session  \nperiod-ms 250\ndefault-mode aggregate\n"
	    "default-isolation core\nreserved-cpus 0-1,64-65\nshared-pool 2-31\novercommit 2.5\n"
	    "overcommit-isolated 1\nmax-moves 16\ncounters on\nsocket /run/x/llcd.sock\nsocket-group kvm\n"
	    "state-dir /var/lib/x\nguest-channel-dir /run/x/ch\nlog-level debug\nqmp-passthrough yes\n"
	    "release-on-exit on # trailing comment\n", "t.conf", &err), 0);
	assert_string_equal(c.uri, "qemu:///session");
	assert_int_equal(c.period_ms, 250);
	assert_int_equal(c.default_mode, POLICY_MODE_AGGREGATE);
	assert_true(c.default_isolation);
	assert_string_equal(c.reserved, "0-1,64-65");
	assert_string_equal(c.shared_pool, "2-31");
	assert_true(c.overcommit == 2.5);
	assert_int_equal(c.max_moves, 16);
	assert_string_equal(c.counters, "on");
	assert_string_equal(c.socket_group, "kvm");
	assert_int_equal(c.log_level, 2);
	assert_true(c.qmp_passthrough && c.release_on_exit);
}

static void
test_errors(void **state)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "period-ms 5\n", "t.conf:1: 'period-ms': '5' is not a number of milliseconds from 10 to 600000" },
		{ "\n\nbogus 1\n", "t.conf:3: unknown directive 'bogus' (see llcd.conf(5))" },
		{ "uri\n", "t.conf:1: 'uri' needs a value" },
		{ "default-mode fast\n", "t.conf:1: 'default-mode': 'fast' is not one of none, static, aggregate, spread" },
		{ "reserved-cpus 0-x\n", "t.conf:1: 'reserved-cpus': invalid CPU list '0-x' at '0-x' "
		  "(expected numbers 0-2047 and ranges like 0-3,8)" },
		{ "overcommit 0\n", "t.conf:1: 'overcommit': '0' is not a ratio of vCPUs per CPU from 0.1 to 64" },
		{ "socket relative.sock\n", "t.conf:1: 'socket': 'relative.sock' is not an absolute path" },
		{ "log-level loud\n", "t.conf:1: 'log-level': 'loud' is not one of warning, info, debug" },
		{ "qmp-passthrough maybe\n", "t.conf:1: 'qmp-passthrough': 'maybe' is not yes or no" },
		{ "counters sometimes\n", "t.conf:1: 'counters': 'sometimes' is not one of auto, on, off" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c;
		struct llcd_err err;
		config_defaults(&c);
		assert_int_equal(config_parse(&c, cases[i].text, "t.conf", &err), -1);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

static void
test_print_roundtrip(void **state)
{
	struct config a, b;
	struct llcd_err err;
	char *text = NULL;
	size_t len = 0;

	config_defaults(&a);
	assert_int_equal(config_parse(&a, "reserved-cpus 0\novercommit 1.5\ndefault-mode spread\n", "t", &err), 0);
	FILE *f = open_memstream(&text, &len);
	config_print(&a, f);
	fclose(f);
	config_defaults(&b);
	assert_int_equal(config_parse(&b, text, "printed", &err), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	free(text);
}

static void
test_load_missing(void **state)
{
	struct config c;
	struct llcd_err err;

	config_defaults(&c);
	assert_int_equal(config_load(&c, "/nonexistent/llcd.conf", true, &err), 0);
	assert_int_equal(config_load(&c, "/nonexistent/llcd.conf", false, &err), -1);
	assert_string_equal(err.msg, "/nonexistent/llcd.conf: No such file or directory");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_directives),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_load_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
