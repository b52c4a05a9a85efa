// SPDX-License-Identifier: GPL-2.0-or-later
/* test_jsonget.c - common/jsonget.c (bounded member getters, cpuset as
 * JSON) and common/clock.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "clock.h"
#include "jsonget.h"
#include "test_main.h"

static json_object *
parse(const char *s)
{
	json_object *o = json_tokener_parse(s);

	assert_non_null(o);
	return o;
}

static void
test_int(void **state)
{
	json_object *o = parse("{\"a\":5,\"b\":-1,\"c\":2.5,\"d\":null,\"e\":\"5\","
	                       "\"f\":99999999999999999999}");
	int64_t v = 42;

	assert_int_equal(jget_int(o, "a", 0, 10, &v), JGET_OK);
	assert_int_equal(v, 5);
	v = 42;
	assert_int_equal(jget_int(o, "zz", 0, 10, &v), JGET_ABSENT);
	assert_int_equal(v, 42);
	assert_int_equal(jget_int(o, "d", 0, 10, &v), JGET_NULL);
	assert_int_equal(v, 42);
	assert_int_equal(jget_int(o, "c", 0, 10, &v), JGET_TYPE);
	assert_int_equal(jget_int(o, "e", 0, 10, &v), JGET_TYPE);
	assert_int_equal(v, 42);
	/* out of range: the value read is left for the message */
	assert_int_equal(jget_int(o, "b", 0, 10, &v), JGET_RANGE);
	assert_int_equal(v, -1);
	assert_int_equal(jget_int(o, "a", 6, 10, &v), JGET_RANGE);
	assert_int_equal(jget_int(o, "f", 0, INT64_MAX - 1, &v), JGET_RANGE);
	assert_int_equal(jget_int(NULL, "a", 0, 10, &v), JGET_ABSENT);
	json_object_put(o);
}

static void
test_num_bool_str_typed(void **state)
{
	json_object *o = parse("{\"i\":3,\"d\":0.5,\"s\":\"x\",\"t\":true,\"n\":null,"
	                       "\"arr\":[1],\"obj\":{}}");
	json_object *x = NULL;
	const char *s = NULL;
	double d = -7;
	bool b = false;

	assert_int_equal(jget_num(o, "i", 0, 3, &d), JGET_OK);
	assert_true(d == 3.0);
	assert_int_equal(jget_num(o, "d", 0, 1, &d), JGET_OK);
	assert_true(d == 0.5);
	assert_int_equal(jget_num(o, "d", 0.6, 1, &d), JGET_RANGE);
	assert_true(d == 0.5);
	assert_int_equal(jget_num(o, "s", 0, 1, &d), JGET_TYPE);
	assert_int_equal(jget_num(o, "n", 0, 1, &d), JGET_NULL);

	assert_int_equal(jget_bool(o, "t", &b), JGET_OK);
	assert_true(b);
	assert_int_equal(jget_bool(o, "i", &b), JGET_TYPE);
	assert_int_equal(jget_bool(o, "zz", &b), JGET_ABSENT);

	assert_int_equal(jget_str(o, "s", &s), JGET_OK);
	assert_string_equal(s, "x");
	assert_int_equal(jget_str(o, "i", &s), JGET_TYPE);

	assert_int_equal(jget_typed(o, "arr", json_type_array, &x), JGET_OK);
	assert_true(json_object_is_type(x, json_type_array));
	x = NULL;
	assert_int_equal(jget_typed(o, "obj", json_type_array, &x), JGET_TYPE);
	assert_null(x);
	assert_int_equal(jget_typed(o, "n", json_type_object, &x), JGET_NULL);
	json_object_put(o);
}

static void
test_cpuset_json(void **state)
{
	struct cpuset s;
	struct llcd_err err;
	json_object *j;

	assert_int_equal(cpuset_parse(&s, "0-3,8", &err), 0);
	j = cpuset_json(&s);
	assert_string_equal(json_object_get_string(j), "0-3,8");
	json_object_put(j);
	/* the longest list there is (every other CPU) is written in full */
	cpuset_zero(&s);
	for (int c = 0; c < CPUSET_MAX; c += 2)
		cpuset_set(&s, c);
	j = cpuset_json(&s);
	assert_int_equal(strncmp(json_object_get_string(j), "0,2,4,", 6), 0);
	assert_non_null(strstr(json_object_get_string(j), ",2044,2046"));
	json_object_put(j);
}

static void
test_clock(void **state)
{
	uint64_t a = llcd_mono_ns(), b = llcd_mono_ns();

	assert_true(a > 0);
	assert_true(b >= a);
	assert_true(llcd_mono_ms() >= a / 1000000u);
}

TEST_MAIN(
	cmocka_unit_test(test_int),
	cmocka_unit_test(test_num_bool_str_typed),
	cmocka_unit_test(test_cpuset_json),
	cmocka_unit_test(test_clock))
