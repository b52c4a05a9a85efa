// SPDX-License-Identifier: GPL-2.0-or-later
/* test_metrics.c - llcd's stats table (agent/daemon/stats.c) and the Prometheus
 * exposition made from it (agent/daemon/metrics.c): every row a well-formed
 * metric, every `llcctl stats` key exported as its metric with the same
 * value (in the metric's unit), the optional blocks, values printed as
 * Prometheus writes them, and the step-time histogram's cumulative
 * buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "stats.h"
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

/* Every row: a key, a metric name of [a-z_] starting llcd_, counters
 * ending in _total, the rows of one metric adjacent with type and help on
 * the first only and distinct labels, every member of the struct covered
 * once. */
static void
test_table(void **state)
{
	bool covered[sizeof(struct stats_values) / 8] = { false };

	(void)state;
	assert_int_equal(stats_nrows * 8, sizeof(struct stats_values));
	for (size_t i = 0; i < stats_nrows; i++) {
		const struct stats_row *r = &stats_rows[i], *first = r;
		assert_non_null(r->key);
		assert_true(strncmp(r->metric, "llcd_", 5) == 0);
		assert_int_equal(strspn(r->metric, "abcdefghijklmnopqrstuvwxyz_"), strlen(r->metric));
		assert_true(r->offset % 8 == 0 && r->offset / 8 < stats_nrows);
		assert_false(covered[r->offset / 8]);
		covered[r->offset / 8] = true;
		assert_true(r->unit > 0);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(stats_rows[j].key, r->key))
				fail_msg("key %s twice", r->key);
		if (r->type == NULL) {
			/* a follower: the row before is of the same metric */
			assert_true(i > 0);
			assert_string_equal(stats_rows[i - 1].metric, r->metric);
			assert_null(r->help);
			assert_non_null(r->labels);
			while (first->type == NULL)
				first--;
			for (const struct stats_row *o = first; o < r; o++)
				assert_string_not_equal(o->labels, r->labels);
		} else {
			assert_true(!strcmp(r->type, "counter") || !strcmp(r->type, "gauge"));
			assert_non_null(r->help);
			if (i > 0)
				assert_string_not_equal(stats_rows[i - 1].metric, r->metric);
			/* a metric's rows are adjacent: no later family of the same name */
			for (size_t j = i + 1; j < stats_nrows; j++)
				if (stats_rows[j].type != NULL)
					assert_string_not_equal(stats_rows[j].metric, r->metric);
		}
		while (first->type == NULL)
			first--;
		size_t n = strlen(r->metric);
		bool total = n > 6 && !strcmp(r->metric + n - 6, "_total");
		assert_int_equal(total, !strcmp(first->type, "counter"));
	}
}

/* The sample line of row r in the text t: "metric{labels} value". */
static const char *
sample_of(const char *t, const struct stats_row *r, char *line, size_t len)
{
	char want[256];
	const char *p;

	if (r->labels)
		snprintf(want, sizeof(want), "\n%s{%s} ", r->metric, r->labels);
	else
		snprintf(want, sizeof(want), "\n%s ", r->metric);
	if ((p = strstr(t, want)) == NULL)
		return NULL;
	p += strlen(want);
	snprintf(line, len, "%.*s", (int)strcspn(p, "\n"), p);
	return line;
}

/* Every key `llcctl stats` prints has its metric, with the same value;
 * a block not shown is in neither. */
static void
test_stats_and_metrics(void **state)
{
	struct llcd_stats st;
	struct metrics_hist h;
	char line[64], want[64];
	char *t;

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(&h, 0, sizeof(h));
	st.backend = "llc\"sim";
	st.blocks = STATS_CONTROL;
	for (size_t i = 0; i < stats_nrows; i++) {
		char *p = (char *)&st.v + stats_rows[i].offset;
		if (stats_rows[i].kind == STATS_DOUBLE) {
			double d = (double)(i + 1) + 0.5;
			memcpy(p, &d, sizeof(d));
		} else {
			uint64_t u = (uint64_t)(i + 1) * 1000;
			memcpy(p, &u, sizeof(u));
		}
	}
	json_object *o = json_object_new_object();
	stats_json(&st, o);
	t = metrics_render(&st, &h, "1.2");
	assert_non_null(t);
	assert_non_null(strstr(t, "llcd_info{version=\"1.2\",backend=\"llc\\\"sim\"} 1\n"));
	assert_string_equal(json_object_get_string(json_object_object_get(o, "backend")), "llc\"sim");
	size_t shown = 0;
	for (size_t i = 0; i < stats_nrows; i++) {
		const struct stats_row *r = &stats_rows[i];
		json_object *v;
		bool in_json = json_object_object_get_ex(o, r->key, &v);
		bool in_text = sample_of(t, r, line, sizeof(line)) != NULL;
		bool block = r->block == STATS_ALWAYS || r->block == STATS_CONTROL;
		if (in_json != block || in_text != block)
			fail_msg("%s: in stats %d, in metrics %d, its block shown %d", r->key, in_json, in_text, block);
		if (!block)
			continue;
		shown++;
		metrics_format_value(want, sizeof(want), json_object_get_double(v) / r->unit);
		if (strcmp(line, want))
			fail_msg("%s: stats %s, metric %s %s, not %s", r->key, json_object_get_string(v), r->metric,
			    line, want);
	}
	/* nothing else in the stats: backend and the rows shown */
	assert_int_equal(json_object_object_length(o), shown + 1);
	assert_non_null(strstr(t, "# TYPE llcd_periods_total counter\nllcd_periods_total "));
	assert_non_null(strstr(t, "# HELP llcd_apply_errors_total "));
	free(t);
	json_object_put(o);
}

static void
test_histogram(void **state)
{
	struct llcd_stats st;
	struct metrics_hist h;
	char *t;

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(&h, 0, sizeof(h));
	st.v.policy_step_us_p50 = 18.9;
	st.v.period_ms = 250;
	metrics_hist_observe(&h, 3000);                 /* 3 us: first bucket (5 us) */
	metrics_hist_observe(&h, 20000);                /* 20 us: the 25 us bucket */
	metrics_hist_observe(&h, 9000000000ull);        /* 9 s: +Inf only */
	t = metrics_render(&st, &h, "1.2");
	assert_non_null(t);
	assert_non_null(strstr(t, "llcd_period_seconds 0.25\n"));
	assert_non_null(strstr(t, "llcd_policy_step_recent_seconds{quantile=\"0.5\"} 1.89e-05\n"));
	assert_null(strstr(t, "llcd_control_"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"5e-06\"} 1\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"2.5e-05\"} 2\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"2.5\"} 2\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_bucket{le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_sum 9.000023\n"));
	assert_non_null(strstr(t, "llcd_policy_step_seconds_count 3\n"));
	free(t);
}

TEST_MAIN(
	cmocka_unit_test(test_format_value),
	cmocka_unit_test(test_table),
	cmocka_unit_test(test_stats_and_metrics),
	cmocka_unit_test(test_histogram))
