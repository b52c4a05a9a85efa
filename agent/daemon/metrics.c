// SPDX-License-Identifier: GPL-2.0-or-later
/* metrics.c - the Prometheus text exposition of llcd's stats. */
#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double metrics_hist_bounds[METRICS_HIST_BUCKETS] = {
	5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.1, 0.5, 2.5,
};

void
metrics_hist_observe(struct metrics_hist *h, uint64_t ns)
{
	int i = 0;

	while (i < METRICS_HIST_BUCKETS && (double)ns > metrics_hist_bounds[i] * 1e9)
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum_ns += ns;
}

void
metrics_format_value(char *buf, size_t len, double v)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	/* 15 significant digits: every decimal of 15 digits survives the
	 * trip through a double, so the binary noise of a scaled value
	 * (18.9 us / 1e6 = 1.8899999999999998e-05) never shows */
	snprintf(buf, len, "%.15g", v);
}

static void
sample(FILE *f, const char *name, const char *labels, double v)
{
	char num[64];

	metrics_format_value(num, sizeof(num), v);
	if (labels && labels[0])
		fprintf(f, "%s{%s} %s\n", name, labels, num);
	else
		fprintf(f, "%s %s\n", name, num);
}

static void
escape_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

char *
metrics_render(const struct llcd_stats *st, const struct metrics_hist *step, const char *version)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *last = NULL;

	if (f == NULL)
		return NULL;
	fputs("# HELP llcd_info The llcd version and back-end (value 1).\n# TYPE llcd_info gauge\n", f);
	fputs("llcd_info{version=\"", f);
	escape_label(f, version ? version : "");
	fputs("\",backend=\"", f);
	escape_label(f, st->backend ? st->backend : "");
	fputs("\"} 1\n", f);
	for (size_t i = 0; i < stats_nrows; i++) {
		const struct stats_row *r = &stats_rows[i], *h = r;
		if (!stats_shown(st, r))
			continue;
		if (last == NULL || strcmp(last, r->metric)) {
			while (h > stats_rows && h->type == NULL)       /* the metric's first row */
				h--;
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", r->metric, h->help, r->metric, h->type);
			last = r->metric;
		}
		sample(f, r->metric, r->labels, stats_value(st, r) / r->unit);
	}
	if (step) {
		uint64_t cum = 0;
		char le[64];
		fputs("# HELP llcd_policy_step_seconds Time of each policy step (decide), since start.\n"
		      "# TYPE llcd_policy_step_seconds histogram\n", f);
		for (int i = 0; i < METRICS_HIST_BUCKETS; i++) {
			char lab[80];
			cum += step->bucket[i];
			metrics_format_value(le, sizeof(le), metrics_hist_bounds[i]);
			snprintf(lab, sizeof(lab), "le=\"%s\"", le);
			sample(f, "llcd_policy_step_seconds_bucket", lab, (double)cum);
		}
		sample(f, "llcd_policy_step_seconds_bucket", "le=\"+Inf\"", (double)step->count);
		sample(f, "llcd_policy_step_seconds_sum", NULL, (double)step->sum_ns / 1e9);
		sample(f, "llcd_policy_step_seconds_count", NULL, (double)step->count);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
