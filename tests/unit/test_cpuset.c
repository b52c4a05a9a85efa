// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cpuset.c - CPU list parsing, formatting, set operations and the
 * interning pool (cpuset_pool). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cpuset.h"
#include "cpuset_pool.h"
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

/* Equal sets share one entry, the empty set is cpuset_none and never
 * counted, an entry goes when its last slot lets go, and share takes a
 * reference without a lookup. */
static void
test_pool(void **state)
{
	(void)state;
	struct cpuset_pool *p = cpuset_pool_new();
	const struct cpuset *a = NULL, *b = NULL, *c = NULL;
	struct cpuset x, y;

	assert_non_null(p);
	cpuset_zero(&x);
	cpuset_set_range(&x, 0, 15);
	y = x;
	assert_int_equal(cpuset_pool_set(p, &a, &x), 0);
	assert_int_equal(cpuset_pool_set(p, &b, &y), 0);
	assert_ptr_equal(a, b);
	assert_true(cpuset_equal(a, &x));
	assert_int_equal(cpuset_pool_count(p), 1);
	cpuset_set(&y, 2047);
	assert_int_equal(cpuset_pool_set(p, &b, &y), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(cpuset_pool_count(p), 2);
	cpuset_pool_share(p, &c, b);
	assert_ptr_equal(c, b);
	cpuset_pool_drop(p, &b);
	assert_ptr_equal(b, &cpuset_none);
	assert_int_equal(cpuset_pool_count(p), 2);      /* c holds it */
	cpuset_zero(&y);
	assert_int_equal(cpuset_pool_set(p, &c, &y), 0);
	assert_ptr_equal(c, &cpuset_none);
	assert_int_equal(cpuset_pool_count(p), 1);
	for (int i = 0; i < 1000; i++) {                /* grows its buckets */
		const struct cpuset *t = NULL;
		cpuset_zero(&y);
		cpuset_set(&y, i);
		assert_int_equal(cpuset_pool_set(p, &t, &y), 0);
		assert_true(cpuset_isset(t, i));
		if (i % 2)
			cpuset_pool_drop(p, &t);
	}
	assert_int_equal(cpuset_pool_count(p), 1 + 500);
	assert_int_equal(cpuset_pool_nomem(p), 0);
	cpuset_pool_free(p);
	cpuset_pool_free(NULL);
}

/* Deferred: a set no slot holds stays readable, and is found again, until
 * cpuset_pool_collect frees it. */
static void
test_pool_defer(void **state)
{
	(void)state;
	struct cpuset_pool *p = cpuset_pool_new();
	const struct cpuset *a = NULL, *seen;
	struct cpuset x;

	assert_non_null(p);
	cpuset_pool_defer(p);
	cpuset_zero(&x);
	cpuset_set(&x, 5);
	assert_int_equal(cpuset_pool_set(p, &a, &x), 0);
	seen = a;                                       /* a sample's pointer */
	cpuset_set(&x, 6);
	assert_int_equal(cpuset_pool_set(p, &a, &x), 0);        /* a new pin */
	assert_int_equal(cpuset_pool_count(p), 2);
	assert_true(cpuset_isset(seen, 5) && !cpuset_isset(seen, 6));
	cpuset_pool_collect(p);
	assert_int_equal(cpuset_pool_count(p), 1);
	cpuset_clr(&x, 6);
	assert_int_equal(cpuset_pool_set(p, &a, &x), 0);        /* back: made again */
	cpuset_pool_collect(p);
	assert_int_equal(cpuset_pool_count(p), 1);
	assert_true(cpuset_isset(a, 5) && !cpuset_isset(a, 6));
	cpuset_pool_free(p);
}

/* cpuset_count_upto: the count, capped, over bits in any word. */
static void
test_count_upto(void **state)
{
	struct cpuset s;

	(void)state;
	cpuset_zero(&s);
	assert_int_equal(cpuset_count_upto(&s, 2), 0);
	cpuset_set(&s, 2047);
	assert_int_equal(cpuset_count_upto(&s, 2), 1);
	cpuset_set(&s, 5);
	assert_int_equal(cpuset_count_upto(&s, 2), 2);
	cpuset_set_range(&s, 64, 127);
	assert_int_equal(cpuset_count_upto(&s, 2), 2);
	assert_int_equal(cpuset_count_upto(&s, 100), 66);
	assert_int_equal(cpuset_count_upto(&s, 1000), cpuset_count(&s));
	assert_int_equal(cpuset_count_upto(&s, 0), 0);
}

TEST_MAIN(
	cmocka_unit_test(test_count_upto),
	cmocka_unit_test(test_pool),
	cmocka_unit_test(test_pool_defer),
	cmocka_unit_test(test_set_range),
	cmocka_unit_test(test_parse_format_roundtrip),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_ops))
