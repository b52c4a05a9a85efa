// SPDX-License-Identifier: GPL-2.0-or-later
/* metrics.h - llcd's counters in the Prometheus text exposition format
 * (version 0.0.4). One renderer makes both `llcctl metrics` and the body of
 * the HTTP endpoint (httpd.h), from the struct and the table `llcctl stats`
 * prints (stats.h), so the two never differ and every stats member is
 * exported under the name, type and unit its row gives (counters end in
 * _total, units in the name, seconds as the base unit).
 *
 * The policy step time is a histogram (llcd_policy_step_seconds) kept by
 * the daemon with metrics_hist_observe(); it costs 16 words. */
#ifndef LLCD_METRICS_H
#define LLCD_METRICS_H

#include <stdint.h>

#include "stats.h"

#define METRICS_HIST_BUCKETS 15         /* upper bounds, without +Inf */

struct metrics_hist {
	uint64_t bucket[METRICS_HIST_BUCKETS + 1];      /* per bucket, last: +Inf */
	uint64_t count;
	uint64_t sum_ns;
};

/* The bucket bounds in seconds (METRICS_HIST_BUCKETS of them). */
extern const double metrics_hist_bounds[METRICS_HIST_BUCKETS];

void metrics_hist_observe(struct metrics_hist *h, uint64_t ns);

/* The exposition of st and the step histogram (NULL: none); version labels
 * llcd_info. malloc'd text, NULL when out of memory. */
char *metrics_render(const struct llcd_stats *st, const struct metrics_hist *step, const char *version);

/* Print a sample value: integers without a fraction, other values with at
 * most 15 significant digits (18.9, not 18.899999999999999; 1.89e-05 for
 * 18.9 us in seconds), NaN and +Inf/-Inf by name. */
void metrics_format_value(char *buf, size_t len, double v);

#endif
