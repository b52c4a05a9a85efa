// SPDX-License-Identifier: GPL-2.0-or-later
/* stats.h - llcd's counters and gauges: one struct, one table. Each member
 * of struct stats_values is one row of stats_rows[] (stats.c): its
 * `llcctl stats` key, its Prometheus metric (name, labels, type, help) and
 * its unit. `llcctl stats` (stats_json) and the metrics endpoint and
 * `llcctl metrics` (metrics_render, metrics.h) both read that table, so a
 * key cannot exist without its metric: a member without a row does not
 * compile (every member is 8 bytes, and the table must have one row per
 * member), and test_stats checks the rows.
 *
 * Members are filled by the daemon (handlers.c: stats_fill) once per
 * request; the optional blocks are shown only when the daemon has them. */
#ifndef LLCD_STATS_H
#define LLCD_STATS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* the optional blocks */
enum stats_block {
	STATS_ALWAYS = 0,
	STATS_PINS = 1 << 0,            /* the back-end counts its pin calls */
	STATS_HTTP = 1 << 1,            /* the metrics endpoint is on */
	STATS_CONTROL = 1 << 2,         /* the control socket is open */
	STATS_STATE = 1 << 3,           /* the back-end keeps a state file */
};

/* Every member is uint64_t or double (8 bytes); in `llcctl stats` order. */
struct stats_values {
	double uptime_s;
	uint64_t periods;
	uint64_t period_ms;
	uint64_t domains;
	uint64_t domains_managed;
	uint64_t pins;
	uint64_t emulator_pins;
	uint64_t pin_calls;
	uint64_t pins_in_place;
	uint64_t state_write_errors;
	uint64_t releases;
	uint64_t refusals;
	uint64_t preference_switches;
	uint64_t backoffs;
	uint64_t errors_transient;
	uint64_t errors_gone;
	uint64_t errors_permanent;
	uint64_t period_errors;
	uint64_t isolation_held;
	uint64_t isolation_overlaps;
	uint64_t isolation_overlap_periods;
	double policy_step_us_p50;
	double policy_step_us_p99;
	double policy_step_us_max;
	double period_us_p50;
	double period_us_p99;
	double period_us_max;
	double period_cpu_us_p50;
	double period_cpu_us_p99;
	double period_cpu_us_max;
	double period_late_us_p50;
	double period_late_us_p99;
	double period_late_us_max;
	uint64_t recommend_computed;
	uint64_t recommend_cached;
	double recommend_compute_s_max;
	uint64_t log_suppressed;
	uint64_t http_accepted;
	uint64_t http_refused;
	uint64_t http_evicted;
	uint64_t http_header_timeouts;
	uint64_t http_request_timeouts;
	uint64_t http_idle_closed;
	uint64_t http_connections;
	uint64_t control_requests;
	uint64_t control_refused;
	uint64_t control_malformed;
	uint64_t control_dropped_clients;
	uint64_t control_busy_refused;
	uint64_t control_idle_closed;
	uint64_t control_deferred;
	uint64_t control_request_timeouts;
	uint64_t control_reply_timeouts;
	uint64_t control_hangups;
	uint64_t control_queued_bytes;
};

struct llcd_stats {
	const char *backend;            /* the back-end's name (llcd_info's label) */
	unsigned blocks;                /* STATS_* shown */
	struct stats_values v;
};

enum stats_kind { STATS_U64, STATS_DOUBLE };

struct stats_row {
	const char *key;                /* llcctl stats member */
	const char *metric;             /* Prometheus name; the rows of one metric are adjacent */
	const char *labels;             /* "class=\"gone\""; NULL none */
	const char *type;               /* "counter", "gauge": on a metric's first row; NULL on the others */
	double unit;                    /* stats units per base unit (1e3: ms to s); the metric is value / unit */
	const char *help;               /* on a metric's first row */
	unsigned block;                 /* enum stats_block */
	enum stats_kind kind;
	size_t offset;                  /* in struct stats_values */
};

extern const struct stats_row stats_rows[];
extern const size_t stats_nrows;

/* A row's value in st, as a double. */
double stats_value(const struct llcd_stats *st, const struct stats_row *r);
/* Whether a row is shown (its block is). */
int stats_shown(const struct llcd_stats *st, const struct stats_row *r);
/* `llcctl stats`: "backend" and every row shown, in table order, into o. */
void stats_json(const struct llcd_stats *st, json_object *o);

#endif
