// SPDX-License-Identifier: GPL-2.0-or-later
/* test_metrics.c - the Prometheus exposition (agent/metrics.c): values
 * printed as Prometheus writes them, names, types and units from the
 * table, the fallback for a stats member the table does not name, and the
 * step-time histogram's cumulative buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "test_main.h"

static void
test_format_value(void **state)
{
	static const struct { double v; const char *want; } cases[] = {
		{ 18.9, "18.9" }, { 0, "0" }, { 42, "42" }, { -3, "-3" }, { 1e-5, "1e-05" },
		{ 36.8 / 1e6, "3.68e-05" }, { 0.1 + 0.2, "0.3" }, { 18.9 / 1e6, "1.89e-05" }, { 1e20, "1e+20" },
		{ NAN, "NaN" }, { INFINITY, "+Inf" }, { -INFINITY, "-Inf" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		metrics_format_value(buf, sizeof(buf), cases[i].v);
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_render(void **state)
{
	json_object *st = json_object_new_object(), *sub = json_object_new_object();
	struct metrics_hist h;
	char *t;

	memset(&h, 0, sizeof(h));
	json_object_object_add(st, "backend", json_object_new_string("llc\"sim"));
	json_object_object_add(st, "periods", json_object_new_int(7));
	json_object_object_add(st, "period_ms", json_object_new_int(250));
	json_object_object_add(st, "policy_step_us_p50", json_object_new_double(18.9));
	json_object_object_add(st, "errors_gone", json_object_new_int(2));
	json_object_object_add(st, "errors_permanent", json_object_new_int(1));
	json_object_object_add(st, "brand_new", json_object_new_int(5));
	json_object_object_add(sub, "x-y", json_object_new_boolean(1));
	json_object_object_add(st, "nested", sub);
	json_object_object_add(st, "text", json_object_new_string("ignored"));
	metrics_hist_observe(&h, 3000);                 /* 3 us: first bucket (5 us) */
	metrics_hist_observe(&h, 20000);                /* 20 us: the 25 us bucket */
	metrics_hist_observe(&h, 9000000000ull);        /* 9 s: +Inf only */
	t = metrics_render(st, &h, "1.2");
	assert_non_null(t);
	assert_non_null(strstr(t, "llcd_info{version=\"1.2\",backend=\"llc\\\"sim\"} 1\n"));
	assert_non_null(strstr(t, "# TYPE llcd_periods_total counter\nllcd_periods_total 7\n"));
	assert_non_null(strstr(t, "llcd_period_seconds 0.25\n"));
	assert_non_null(strstr(t, "llcd_policy_step_recent_seconds{quantile=\"0.5\"} 1.89e-05\n"));
	/* one HELP/TYPE for the family, even when its first member is absent */
	assert_non_null(strstr(t, "# TYPE llcd_apply_errors_total counter\nllcd_apply_errors_total{class=\"gone\"} 2\n"
	    "llcd_apply_errors_total{class=\"permanent\"} 1\n"));
	assert_null(strstr(t, "class=\"transient\""));
	/* members the table does not name: gauges llcd_<member> */
	assert_non_null(strstr(t, "# TYPE llcd_brand_new gauge\nllcd_brand_new 5\n"));
	assert_non_null(strstr(t, "llcd_nested_x_y 1\n"));
	assert_null(strstr(t, "ignored"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"5e-06\"} 1\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"2.5e-05\"} 2\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"2.5\"} 2\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_sum 9.000023\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_count 3\n"));
	free(t);
	json_object_put(st);
}

TEST_MAIN(
	cmocka_unit_test(test_format_value),
	cmocka_unit_test(test_render))
