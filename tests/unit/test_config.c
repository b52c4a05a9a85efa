// SPDX-License-Identifier: GPL-2.0-or-later
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
#include "test_main.h"

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
	    "overcommit-isolated 1\nmax-moves 16\ncounters on\nsampler proc\nsocket /run/x/llcd.sock\nsocket-group kvm\n"
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
	assert_int_equal(c.counters, AGENT_COUNTERS_ON);
	assert_int_equal(c.sampler, AGENT_SAMPLER_PROC);
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
		{ "metrics-listen 70000\n", "t.conf:1: 'metrics-listen': '70000': '70000' is not a port number from 0 to 65535" },
		{ "metrics-listen host:80\n", "t.conf:1: 'metrics-listen': 'host:80': 'host' is not an IPv4 address, localhost or *" },
		{ "metrics-listen ::1:80\n", "t.conf:1: 'metrics-listen': '::1:80' is not ADDRESS:PORT (an IPv6 address goes in brackets)" },
		{ "metrics-listen [::1:80\n", "t.conf:1: 'metrics-listen': '[::1:80' is not [IPv6]:PORT" },
		{ "metrics-listen [1.2.3.4]:80\n", "t.conf:1: 'metrics-listen': '[1.2.3.4]:80': '1.2.3.4' is not an IPv6 address" },
		{ "sampler ebpf\n", "t.conf:1: 'sampler': 'ebpf' is not one of auto, bpf, proc" },
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

/* the table: unique names, tune implies reload, and every directive's
 * printed value reads back as the same value */
static void
test_table(void **state)
{
	struct config def, c;
	struct llcd_err err;
	char buf[512], list[512];
	int n = 0, ntune = 0;

	config_defaults(&def);
	for (const struct config_directive *d = config_directives; d->name; d++, n++) {
		assert_ptr_equal(config_directive(d->name), d);
		if (d->flags & CONFIG_TUNE) {
			assert_true(d->flags & CONFIG_RELOAD);
			ntune++;
		}
		config_format(&def, d, buf, sizeof(buf));
		config_defaults(&c);
		c.period_ms = 20, c.max_moves = 7, c.overcommit = c.overcommit_isolated = 3;
		c.default_mode = POLICY_MODE_SPREAD, c.default_isolation = POLICY_ISO_CORE;
		c.counters = AGENT_COUNTERS_OFF, c.unjudged_groups = CONFIG_UNJUDGED_ACT, c.sampler = AGENT_SAMPLER_BPF, c.log_level = 0, c.qmp_passthrough = c.release_on_exit = true;
		snprintf(c.uri, sizeof(c.uri), "x"), snprintf(c.topology, sizeof(c.topology), "y");
		snprintf(c.reserved, sizeof(c.reserved), "1"), snprintf(c.shared_pool, sizeof(c.shared_pool), "2");
		snprintf(c.socket, sizeof(c.socket), "/s"), snprintf(c.socket_group, sizeof(c.socket_group), "g");
		snprintf(c.state_dir, sizeof(c.state_dir), "/d");
		snprintf(c.guest_channel_dir, sizeof(c.guest_channel_dir), "/c");
		snprintf(c.metrics_listen, sizeof(c.metrics_listen), "9");
		c.backend = CONFIG_BACKEND_QMP, c.qmp_hold = true;
		snprintf(c.qmp_socket_glob, sizeof(c.qmp_socket_glob), "/q/*.qmp");
		snprintf(c.policy_dir, sizeof(c.policy_dir), "/p");
		snprintf(c.guest_channel_path, sizeof(c.guest_channel_path), "/ch/%%n.sock");
		snprintf(c.libvirt_socket_glob, sizeof(c.libvirt_socket_glob), "/proc/*/root/run/libvirt/libvirt-sock");
		snprintf(c.libvirt_socket_uri, sizeof(c.libvirt_socket_uri), "qemu:///session");
		assert_int_equal(config_set(&c, "policy-rule", "name=x mode=static", &err), 0);
		assert_false(config_same(&c, &def, d));         /* every field was changed above */
		assert_int_equal(config_set(&c, d->name, buf, &err), 0);
		assert_true(config_same(&c, &def, d));
		config_copy(&c, &def, d);
		assert_true(config_same(&c, &def, d));
	}
	assert_int_equal(n, 29);
	assert_null(config_directive("bogus"));
	config_list(CONFIG_TUNE, list, sizeof(list));
	assert_string_equal(list, "period-ms, default-mode, default-isolation, reserved-cpus, shared-pool, overcommit, "
	    "overcommit-isolated, max-moves, counters, unjudged-groups, log-level");
	assert_int_equal(ntune, 11);
	config_list(CONFIG_RELOAD, list, sizeof(list));
	assert_non_null(strstr(list, "release-on-exit"));
	assert_null(strstr(list, "socket"));
}

/* metrics-listen: the forms it takes, normalised as written ("off": "") */
static void
test_metrics_listen(void **state)
{
	static const char *const good[] = { "9560", "127.0.0.1:9560", "localhost:0", "*:9560", "[::1]:9560", "[::]:1" };
	struct config c;
	struct llcd_err err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		config_defaults(&c);
		assert_int_equal(config_set(&c, "metrics-listen", good[i], &err), 0);
		assert_string_equal(c.metrics_listen, good[i]);
	}
	assert_int_equal(config_set(&c, "metrics-listen", "off", &err), 0);
	assert_string_equal(c.metrics_listen, "");
	config_defaults(&c);
	assert_string_equal(c.metrics_listen, "");
}

/* policy-rule: repeatable, each rule with its file:line; "none" forgets the
 * rules before it; -nv prints one line per rule and reads back the same */
static void
test_policy_rules(void **state)
{
	static struct config c, c2;
	struct llcd_err err;
	struct policyrule_set *s;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	config_defaults(&c);
	assert_int_equal(config_parse(&c,
	    "policy-rule name=gone mode=static\n"
	    "policy-rule none\n"
	    "# OpenStack flavors\n"
	    "policy-rule flavor=m1.llc.* mode=aggregate isolation=core\n"
	    "  policy-rule   name=default_*   <llc-policy xmlns='urn:llcd:llc-policy:1' mode='spread'/>\n"
	    "period-ms 500\n", "t.conf", &err), 0);
	assert_int_equal(c.rules.n, 2);
	assert_string_equal(c.rules.r[0].where, "t.conf:4");
	assert_string_equal(c.rules.r[0].match, "flavor=m1.llc.*");
	assert_string_equal(c.rules.r[1].where, "t.conf:5");
	assert_string_equal(c.rules.r[1].policy, "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"spread\"/>");
	s = config_rules(&c, &err);
	assert_non_null(s);
	assert_int_equal(s->n, 2);
	assert_string_equal(s->r[1].where, "t.conf:5");
	assert_int_equal(s->r[0].annot.isolation, POLICY_ISO_CORE);
	policyrule_set_free(s);

	f = open_memstream(&out, &len);
	config_print(&c, f);
	fclose(f);
	assert_non_null(strstr(out, "\npolicy-rule flavor=m1.llc.* <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\" isolation=\"core\"/>    # rule 1, t.conf:4\n"));
	assert_non_null(strstr(out, "    # rule 2, t.conf:5\n"));
	config_defaults(&c2);
	assert_int_equal(config_parse(&c2, out, "nv.conf", &err), 0);
	assert_int_equal(c2.rules.n, 2);
	assert_true(config_same(&c, &c2, config_directive("policy-rule")));
	/* the line -nv printed it on (counted, so that a new directive
	 * printed before policy-rule does not break the test) */
	int line2 = 1;
	for (const char *q = out; q < strstr(out, "    # rule 2, t.conf:5\n"); q++)
		line2 += *q == '\n';
	char want[32];
	snprintf(want, sizeof(want), "nv.conf:%d", line2);
	assert_true(line2 > 1);
	assert_string_equal(c2.rules.r[1].where, want);
	free(out);

	/* none: printed when there are no rules */
	config_defaults(&c2);
	out = NULL;
	f = open_memstream(&out, &len);
	config_print(&c2, f);
	fclose(f);
	assert_non_null(strstr(out, "\npolicy-rule none\n"));
	free(out);
	assert_false(config_same(&c, &c2, config_directive("policy-rule")));

	/* errors name the file and line, in the matcher's words */
	config_defaults(&c2);
	assert_int_equal(config_parse(&c2, "policy-rule name=a mode=static\n\npolicy-rule flavor=x mode=quick\n",
	    "t.conf", &err), -1);
	assert_string_equal(err.msg, "t.conf:3: 'policy-rule': llc-policy: attribute 'mode': 'quick' is not one of "
	    "none, static, aggregate, spread");
	assert_int_equal(config_parse(&c2, "policy-rule mode=static\n", "t.conf", &err), -1);
	assert_string_equal(err.msg, "t.conf:1: 'policy-rule': 'mode=static' does not start with a MATCH "
	    "(name=GLOB, flavor=GLOB, meta={URI}ELEMENT..., namespace=GLOB, label=KEY[=GLOB] or annotation=KEY[=GLOB])");
	assert_int_equal(config_parse(&c2, "policy-rule\n", "t.conf", &err), -1);
	assert_string_equal(err.msg, "t.conf:1: 'policy-rule' needs a value");
	/* a '#' inside a value is no comment; one after a blank is */
	config_defaults(&c2);
	assert_int_equal(config_parse(&c2, "policy-rule meta={http://example.org/ns#vm}tier=gold mode=static  # gold\n"
	    "#policy-rule name=x mode=static\n", "t.conf", &err), 0);
	assert_int_equal(c2.rules.n, 1);
	assert_string_equal(c2.rules.r[0].match, "meta={http://example.org/ns#vm}tier=gold");
	/* at most CONFIG_RULES */
	config_defaults(&c2);
	for (int i = 0; i < CONFIG_RULES; i++)
		assert_int_equal(config_set(&c2, "policy-rule", "name=x mode=static", &err), 0);
	assert_int_equal(config_set(&c2, "policy-rule", "name=x mode=static", &err), -1);
	assert_string_equal(err.msg, "'policy-rule': more than 64 rules");
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

TEST_MAIN(
	cmocka_unit_test(test_defaults_and_directives),
	cmocka_unit_test(test_errors),
	cmocka_unit_test(test_print_roundtrip),
	cmocka_unit_test(test_table),
	cmocka_unit_test(test_metrics_listen),
	cmocka_unit_test(test_load_missing),
	cmocka_unit_test(test_policy_rules))
