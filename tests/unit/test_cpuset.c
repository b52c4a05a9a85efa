// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cpuset.c - CPU list parsing, formatting and set operations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cpuset.h"
#include "test_main.h"

static void
test_parse_format_roundtrip(void **state)
{
	struct cpuset s;
	struct llcd_err err;
	char buf[128];

	assert_int_equal(cpuset_parse(&s, "0-3,8,10-11,2047", &err), 0);
	assert_int_equal(cpuset_count(&s), 8);
	assert_true(cpuset_isset(&s, 2047));
	assert_false(cpuset_isset(&s, 9));
	assert_int_equal(cpuset_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0-3,8,10-11,2047");
	assert_int_equal(cpuset_parse(&s, "", &err), 0);
	assert_true(cpuset_empty(&s));
}

static void
test_parse_errors(void **state)
{
	struct cpuset s;
	struct llcd_err err;

	assert_int_equal(cpuset_parse(&s, "0-3,x", &err), -1);
	assert_non_null(strstr(err.msg, "at 'x'"));
	assert_int_equal(cpuset_parse(&s, "5-2", &err), -1);
	assert_int_equal(cpuset_parse(&s, "2048", &err), -1);
	assert_non_null(strstr(err.msg, "0-2047"));
	assert_int_equal(cpuset_parse(&s, "1,,2", &err), -1);
	assert_int_equal(cpuset_parse(&s, "-1", &err), -1);
}

static void
test_ops(void **state)
{
	struct cpuset a, b, c;
	int cpu, n = 0;

	cpuset_parse(&a, "0-127", NULL);
	cpuset_parse(&b, "64-200", NULL);
	cpuset_and(&c, &a, &b);
	assert_int_equal(cpuset_count(&c), 64);
	assert_int_equal(cpuset_first(&c), 64);
	assert_int_equal(cpuset_last(&c), 127);
	cpuset_andnot(&c, &a, &b);
	assert_int_equal(cpuset_last(&c), 63);
	assert_true(cpuset_subset(&c, &a));
	assert_false(cpuset_subset(&b, &a));
	assert_true(cpuset_intersects(&a, &b));
	cpuset_or(&c, &a, &b);
	CPUSET_FOREACH(cpu, &c)
		n++;
	assert_int_equal(n, 201);
	/* truncated formatting is reported */
	char small[4];
	assert_int_equal(cpuset_format(&b, small, sizeof(small)), -1);
}

/* cpuset_set_range() sets lo..hi a word at a time: the same set as one
 * bit at a time, across word edges, clipped to 0..CPUSET_MAX-1. */
static void
test_set_range(void **state)
{
	(void)state;
	for (int lo = -2; lo < 200; lo++)
		for (int hi = lo - 1; hi < 200; hi++) {
			struct cpuset a, b;
			cpuset_zero(&a);
			cpuset_zero(&b);
			cpuset_set(&a, 7);
			cpuset_set(&b, 7);
			cpuset_set_range(&a, lo, hi);
			for (int c = lo; c <= hi; c++)
				cpuset_set(&b, c);
			assert_true(cpuset_equal(&a, &b));
		}
	struct cpuset a;
	cpuset_zero(&a);
	cpuset_set_range(&a, CPUSET_MAX - 3, CPUSET_MAX + 5);
	assert_int_equal(cpuset_count(&a), 3);
	assert_int_equal(cpuset_last(&a), CPUSET_MAX - 1);
}

TEST_MAIN(
	cmocka_unit_test(test_set_range),
	cmocka_unit_test(test_parse_format_roundtrip),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_ops))
