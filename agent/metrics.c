// SPDX-License-Identifier: GPL-2.0-or-later
/* metrics.c - the Prometheus text exposition of llcd's stats. */
#include "metrics.h"

#include <ctype.h>
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

/* One stats member: its metric (rows of one metric are adjacent, the
 * first carries help and type) and how many stats units make one base unit
 * (1000 for milliseconds): the stats value is divided by it. */
static const struct metric_row {
	const char *key, *name, *labels, *type;
	double unit;                    /* stats units per base unit */
	const char *help;
} rows[] = {
	{ "uptime_s", "llcd_uptime_seconds", NULL, "gauge", 1, "Seconds since llcd started." },
	{ "periods", "llcd_periods_total", NULL, "counter", 1, "Sampling periods completed." },
	{ "period_errors", "llcd_period_errors_total", NULL, "counter", 1, "Periods that failed (observe or apply error)." },
	{ "period_ms", "llcd_period_seconds", NULL, "gauge", 1e3, "The configured sampling period." },
	{ "domains", "llcd_domains", NULL, "gauge", 1, "Running domains llcd sees." },
	{ "domains_managed", "llcd_domains_managed", NULL, "gauge", 1, "Domains llcd places." },
	{ "pins", "llcd_vcpu_pins_total", NULL, "counter", 1, "vCPU pin actions." },
	{ "emulator_pins", "llcd_emulator_pins_total", NULL, "counter", 1, "Emulator (and I/O thread) pin actions." },
	{ "pin_calls", "llcd_pin_calls_total", NULL, "counter", 1,
	  "Pin calls made to libvirt (vCPU and emulator); not made where kernel and libvirt had the pin already." },
	{ "pins_in_place", "llcd_pins_in_place_total", NULL, "counter", 1,
	  "Pins not made: the thread was on the planned CPUs for the kernel and for libvirt already." },
	{ "state_write_errors", "llcd_state_write_errors_total", NULL, "counter", 1,
	  "State file writes that failed (the file is kept dirty and written again; the log says why)." },
	{ "releases", "llcd_releases_total", NULL, "counter", 1, "Domains given back to the default scheduler." },
	{ "refusals", "llcd_refusals_total", NULL, "counter", 1, "Placements refused for lack of room." },
	{ "preference_switches", "llcd_preference_switches_total", NULL, "counter", 1,
	  "Preferred-LLC changes of vCPU groups." },
	{ "backoffs", "llcd_benefit_backoffs_total", NULL, "counter", 1, "Aggregations undone by the benefit check." },
	{ "errors_transient", "llcd_apply_errors_total", "class=\"transient\"", "counter", 1,
	  "Actions that failed, by class: transient (retried), gone (domain or thread vanished), permanent." },
	{ "errors_gone", "llcd_apply_errors_total", "class=\"gone\"", NULL, 1, NULL },
	{ "errors_permanent", "llcd_apply_errors_total", "class=\"permanent\"", NULL, 1, NULL },
	{ "policy_step_us_p50", "llcd_policy_step_recent_seconds", "quantile=\"0.5\"", "gauge", 1e6,
	  "Policy step time over the last 256 periods: median, 99th percentile, and the maximum since start." },
	{ "policy_step_us_p99", "llcd_policy_step_recent_seconds", "quantile=\"0.99\"", NULL, 1e6, NULL },
	{ "policy_step_us_max", "llcd_policy_step_recent_seconds", "quantile=\"1\"", NULL, 1e6, NULL },
	{ "period_us_p50", "llcd_period_work_recent_seconds", "quantile=\"0.5\"", "gauge", 1e6,
	  "What a period's work (observe, policy step, apply) took over the last 256 periods: median, 99th percentile, maximum." },
	{ "period_us_p99", "llcd_period_work_recent_seconds", "quantile=\"0.99\"", NULL, 1e6, NULL },
	{ "period_us_max", "llcd_period_work_recent_seconds", "quantile=\"1\"", NULL, 1e6, NULL },
	{ "period_late_us_p50", "llcd_period_lateness_recent_seconds", "quantile=\"0.5\"", "gauge", 1e6,
	  "How late periods started over the last 256 periods (control work, a busy host): median, 99th percentile, maximum." },
	{ "period_late_us_p99", "llcd_period_lateness_recent_seconds", "quantile=\"0.99\"", NULL, 1e6, NULL },
	{ "period_late_us_max", "llcd_period_lateness_recent_seconds", "quantile=\"1\"", NULL, 1e6, NULL },
	{ "recommend_computed", "llcd_topology_recommendations_total", "source=\"computed\"", "counter", 1,
	  "topology DOMAIN answers: dry placements computed off the loop, and answers from the cache." },
	{ "recommend_cached", "llcd_topology_recommendations_total", "source=\"cache\"", NULL, 1, NULL },
	{ "recommend_compute_s_max", "llcd_topology_recommendation_max_seconds", NULL, "gauge", 1,
	  "The longest dry placement for topology DOMAIN so far (on the worker thread, not the loop)." },
	{ "isolation_held", "llcd_isolation_pins_held_total", NULL, "counter", 1,
	  "Actions not applied so that isolation holds between pins (the plan held them, or a prerequisite pin did not apply)." },
	{ "isolation_overlaps", "llcd_isolation_overlaps", NULL, "gauge", 1,
	  "vCPU threads that may run on another domain's isolated cores after the last period's pins." },
	{ "isolation_overlap_periods", "llcd_isolation_overlap_periods_total", NULL, "counter", 1,
	  "Periods that ended with such an overlap (a failed pin, a pin changed outside llcd)." },
	{ "log_suppressed", "llcd_log_suppressed_total", NULL, "counter", 1,
	  "Repeated log messages not written (rate limits; the log says how many of each kind)." },
	{ "http_accepted", "llcd_http_connections_total", "result=\"accepted\"", "counter", 1,
	  "Connections to the metrics endpoint: accepted, refused over a limit (16, 4 per address)." },
	{ "http_refused", "llcd_http_connections_total", "result=\"refused\"", NULL, 1, NULL },
	{ "http_evicted", "llcd_http_evicted_total", NULL, "counter", 1,
	  "Metrics connections cut to make room: they had owed their request for a second or more." },
	{ "http_header_timeouts", "llcd_http_timeouts_total", "deadline=\"header\"", "counter", 1,
	  "Metrics connections cut by a deadline: headers not whole in 5 s, reply not read in 10 s, no next request in 10 s." },
	{ "http_request_timeouts", "llcd_http_timeouts_total", "deadline=\"request\"", NULL, 1, NULL },
	{ "http_idle_closed", "llcd_http_timeouts_total", "deadline=\"idle\"", NULL, 1, NULL },
	{ "http_connections", "llcd_http_connections", NULL, "gauge", 1, "Open connections to the metrics endpoint." },
	{ "control_requests", "llcd_control_requests_total", NULL, "counter", 1, "Control-socket requests answered." },
	{ "control_refused", "llcd_control_refused_total", NULL, "counter", 1,
	  "Changing requests refused to a client that is not root." },
	{ "control_malformed", "llcd_control_malformed_total", NULL, "counter", 1, "Malformed control frames." },
	{ "control_dropped_clients", "llcd_control_dropped_clients_total", NULL, "counter", 1,
	  "Control clients dropped (overflow, errors)." },
	{ "control_busy_refused", "llcd_control_busy_refused_total", NULL, "counter", 1,
	  "Control connections refused over a slot limit." },
	{ "control_idle_closed", "llcd_control_idle_closed_total", NULL, "counter", 1,
	  "Control clients closed after the idle timeout." },
	{ "control_deferred", "llcd_control_deferred_total", NULL, "counter", 1,
	  "Control dispatches that left requests for the next wake-up (work budget)." },
	{ "control_request_timeouts", "llcd_control_timeouts_total", "deadline=\"request\"", "counter", 1,
	  "Control clients closed by a deadline: a request not whole within 10 s of its first byte, a reply not read "
	  "within 60 s of being queued." },
	{ "control_reply_timeouts", "llcd_control_timeouts_total", "deadline=\"reply\"", NULL, 1, NULL },
	{ "control_hangups", "llcd_control_hangups_total", NULL, "counter", 1,
	  "Control clients dropped because their peer closed the connection before its answer." },
	{ "control_queued_bytes", "llcd_control_queued_bytes", NULL, "gauge", 1,
	  "Reply bytes queued for control clients." },
};

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

static const struct metric_row *
find_row(const char *key)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
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

static bool
is_number(json_object *v)
{
	json_type t = json_object_get_type(v);

	return t == json_type_int || t == json_type_double || t == json_type_boolean;
}

/* A member the table does not know: llcd_<path> as a gauge, the path made
 * of [a-z0-9_]; nested objects are flattened with '_'. */
static void
unnamed(FILE *f, const char *prefix, json_object *o)
{
	json_object_object_foreach(o, key, v) {
		char name[256];
		size_t n;
		if (prefix == NULL && find_row(key))
			continue;
		if (prefix == NULL && !strcmp(key, "backend"))
			continue;
		n = (size_t)snprintf(name, sizeof(name), "%s_%s", prefix ? prefix : "llcd", key);
		if (n >= sizeof(name))
			continue;
		for (char *p = name; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				*p = '_';
			else
				*p = (char)tolower((unsigned char)*p);
		if (json_object_get_type(v) == json_type_object) {
			unnamed(f, name, v);
			continue;
		}
		if (!is_number(v))
			continue;
		fprintf(f, "# HELP %s llcctl stats member %s.\n# TYPE %s gauge\n", name, key, name);
		sample(f, name, NULL, json_object_get_double(v));
	}
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
metrics_render(json_object *stats, const struct metrics_hist *step, const char *version)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *last = NULL;
	json_object *v;

	if (f == NULL)
		return NULL;
	fputs("# HELP llcd_info The llcd version and back-end (value 1).\n# TYPE llcd_info gauge\n", f);
	fputs("llcd_info{version=\"", f);
	escape_label(f, version ? version : "");
	fputs("\",backend=\"", f);
	escape_label(f, json_object_object_get_ex(stats, "backend", &v) ? json_object_get_string(v) : "");
	fputs("\"} 1\n", f);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct metric_row *r = &rows[i], *h = r;
		if (!json_object_object_get_ex(stats, r->key, &v) || !is_number(v))
			continue;
		if (last == NULL || strcmp(last, r->name)) {
			while (h > rows && h->type == NULL)     /* the family's first row */
				h--;
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", r->name, h->help, r->name, h->type);
			last = r->name;
		}
		sample(f, r->name, r->labels, json_object_get_double(v) / r->unit);
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
	unnamed(f, NULL, stats);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
