// SPDX-License-Identifier: GPL-2.0-or-later
/* test_sim_scenario.c - llcsim's scenario parser: defaults, the model
 * block, and exact error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "scenario.h"
#include "test_main.h"

/* cmocka 1.1.5 has no double assertion; fail with both values. */
#define assert_double_equal(a, b, eps) check_double((a), (b), (eps), #a, __LINE__)
static void
check_double(double a, double b, double eps, const char *what, int line)
{
	if (!(fabs(a - b) <= eps))
		fail_msg("line %d: %s = %.12g, expected %.12g (+-%g)", line, what, a, b, eps);
}

static struct sim_scenario *
parse(const char *json, struct llcd_err *err)
{
	return sim_scenario_parse(json, strlen(json), "t.json", err);
}

static void
expect_error(const char *json, const char *msg)
{
	struct llcd_err err;
	struct sim_scenario *s = parse(json, &err);

	assert_null(s);
	assert_string_equal(err.msg, msg);
}

static void
test_defaults_and_model(void **state)
{
	struct llcd_err err;
	struct sim_scenario *s;

	s = parse("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\",\"reserved_cpus\":\"0\"},"
	    "\"duration_s\":2,\"model\":{\"migration\":0.5,\"smt_share\":[1,0.5,0.4,0.3]},"
	    "\"domains\":[{\"name\":\"a\",\"vcpus\":4,\"stop_s\":null,"
	    "\"llc_policy\":\"<x/>\",\"load\":[{\"vcpus\":\"1-2\",\"util\":0.5,\"group\":\"g\","
	    "\"sharing\":1.04,\"barrier\":true},{\"vcpus\":\"3\",\"util\":1,\"group\":\"g\"}]}]}", &err);
	if (s == NULL)
		fail_msg("%s", err.msg);
	assert_double_equal(s->period_ms, 100, 0);
	assert_int_equal(s->seed, 1);
	assert_true(cpuset_isset(&s->reserved, 0));
	assert_double_equal(s->model.migration, 0.5, 0);
	assert_double_equal(s->model.smt_share[1], 0.5, 0);
	assert_double_equal(s->model.imbalance, 2.0, 0);
	assert_int_equal(s->ndomains, 1);
	assert_true(isinf(s->domains[0].stop_s));
	assert_int_equal(s->domains[0].guest.cores, 4);
	assert_string_equal(s->domains[0].llc_policy, "<x/>");
	assert_int_equal(s->ngroups, 1);
	assert_int_equal(cpuset_count(&s->groups[0].vcpus), 3);
	assert_true(s->groups[0].barrier);
	assert_double_equal(s->groups[0].sharing, 1.04, 0);
	assert_true(isinf(s->domains[0].load[0].to_s));
	assert_false(s->wakeup_trace);
	assert_double_equal(s->wakeup_noise_hz, 20, 0);        /* the spec's default */
	assert_double_equal(s->domains[0].load[0].wakeups_hz, 0, 0);
	sim_scenario_free(s);

	s = parse("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\",\"wakeup_trace\":true,"
	    "\"wakeup_noise_hz\":0},\"duration_s\":2,\"domains\":[{\"name\":\"a\",\"vcpus\":4,"
	    "\"load\":[{\"vcpus\":\"0-3\",\"util\":1,\"group\":\"g\",\"wakeups_hz\":750}]}]}", &err);
	if (s == NULL)
		fail_msg("%s", err.msg);
	assert_true(s->wakeup_trace);
	assert_double_equal(s->wakeup_noise_hz, 0, 0);
	assert_double_equal(s->domains[0].load[0].wakeups_hz, 750, 0);
	assert_int_equal(s->domains[0].load[0].nwakes, 0);
	assert_int_equal(s->domains[0].qemu_count, 0);
	assert_false(s->act_unjudged);
	assert_double_equal(s->overcommit, 1, 0);
	sim_scenario_free(s);

	/* wakes and qemu_threads (spec/llcsim.md, this round's fields) */
	s = parse("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\"},\"duration_s\":2,"
	    "\"domains\":[{\"name\":\"a\",\"vcpus\":8,\"qemu_threads\":[{\"count\":2,\"util\":0.35},"
	    "{\"count\":1,\"util\":1}],\"load\":[{\"vcpus\":\"0\",\"util\":0.1,"
	    "\"wakes\":[{\"vcpus\":\"1-6\",\"hz\":500},{\"vcpus\":\"0,7\",\"hz\":0}]}]}]}", &err);
	if (s == NULL)
		fail_msg("%s", err.msg);
	const struct sim_load *l = &s->domains[0].load[0];
	assert_int_equal(l->nwakes, 2);
	assert_int_equal(l->wakes[0].n, 6);
	assert_int_equal(l->wakes[0].list[0], 1);
	assert_int_equal(l->wakes[0].list[5], 6);
	assert_double_equal(l->wakes[0].hz, 500, 0);
	assert_int_equal(l->wakes[1].list[1], 7);
	assert_int_equal(l->group, -1);         /* wakes need no group */
	assert_int_equal(s->domains[0].nqemu, 2);
	assert_int_equal(s->domains[0].qemu_count, 3);
	assert_double_equal(s->domains[0].qemu[0].util, 0.35, 0);
	sim_scenario_free(s);
}

#define H "\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\"},\"duration_s\":1"

static void
test_errors(void **state)
{
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":2}]}]}",
	    "t.json: domains[0].load[0].util: must be in [0, 1], got 2");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakeups_hz\":5}]}]}",
	    "t.json: domains[0].load[0].wakeups_hz: only meaningful with a group");
	expect_error("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\",\"wakeup_noise_hz\":1e6},"
	    "\"duration_s\":1,\"domains\":[]}",
	    "t.json: host.wakeup_noise_hz: must be in [0, 100000], got 1e+06");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"from_s\":3,\"to_s\":2}]}]}",
	    "t.json: domains[0].load[0].to_s: must be after from_s (3), got 2");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":["
	    "{\"vcpus\":\"0\",\"util\":1,\"group\":\"g\",\"sharing\":1},"
	    "{\"vcpus\":\"1\",\"util\":1,\"group\":\"g\",\"sharing\":2}]}]}",
	    "t.json: domains[0].load[1].sharing: group 'g' already has sharing 1");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":\"2\"}]}",
	    "t.json: domains[0].vcpus: must be a number, got string");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2.5}]}",
	    "t.json: domains[0].vcpus: must be an integer, got 2.5");
	expect_error("{" H ",\"domains\":{}}", "t.json: domains: must be an array");
	expect_error("{" H ",\"domains\":[],\"model\":{\"smt_share\":[1,2,3,4]}}",
	    "t.json: model.smt_share[1]: must be in (0, 1], got 2");
	expect_error("{" H ",\"domains\":[],\"model\":{\"smt\":1}}", "t.json: model.smt: unknown field");
	expect_error("{\"host\":{\"topology\":\"x\"},\"domains\":[]}", "t.json: duration_s: missing (required)");
	expect_error("[1]", "t.json: (top level): must be an object");
	expect_error("{} x", "t.json:1: not JSON: text after the document");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakes\":[{\"vcpus\":\"1-2\",\"hz\":5}]}]}]}",
	    "t.json: domains[0].load[0].wakes[0].vcpus: vCPU 2 out of range (the domain has 2)");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakes\":[{\"vcpus\":\"1\"}]}]}]}",
	    "t.json: domains[0].load[0].wakes[0].hz: missing (required)");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakes\":[{\"vcpus\":\"1\",\"hz\":-1}]}]}]}",
	    "t.json: domains[0].load[0].wakes[0].hz: must be in [0, 1e+06], got -1");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakes\":[{\"vcpus\":\"1\",\"hz\":1,\"to\":2}]}]}]}",
	    "t.json: domains[0].load[0].wakes[0].to: unknown field");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,"
	    "\"wakes\":{}}]}]}",
	    "t.json: domains[0].load[0].wakes: must be an array");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"qemu_threads\":[{\"count\":0,\"util\":1}]}]}",
	    "t.json: domains[0].qemu_threads[0].count: must be in [1, 4096], got 0");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"qemu_threads\":[{\"count\":1}]}]}",
	    "t.json: domains[0].qemu_threads[0].util: missing (required)");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"qemu_threads\":[{\"count\":4000,\"util\":1},"
	    "{\"count\":100,\"util\":1}]}]}",
	    "t.json: domains[0].qemu_threads[1]: more than 4096 QEMU threads in the domain");
	expect_error("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\",\"overcommit\":0},"
	    "\"duration_s\":1,\"domains\":[]}",
	    "t.json: host.overcommit: must be in [0.01, 1000], got 0");
	expect_error("{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\",\"unjudged_groups\":\"yes\"},"
	    "\"duration_s\":1,\"domains\":[]}",
	    "t.json: host.unjudged_groups: must be \"show\" or \"act\", got \"yes\"");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"qemu_threads\":[3]}]}",
	    "t.json: domains[0].qemu_threads[0]: must be an object");
	expect_error("{" H ",\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"stop_s\":0}]}",
	    "t.json: domains[0].stop_s: must be after start_s (0), got 0");
}

TEST_MAIN(
	cmocka_unit_test(test_defaults_and_model),
	cmocka_unit_test(test_errors))
