// SPDX-License-Identifier: GPL-2.0-or-later
/* stats.c - the table of llcd's counters and gauges (stats.h). */
#include "stats.h"

#include <string.h>

#define KIND(k) _Generic(((struct stats_values *)0)->k, uint64_t: STATS_U64, double: STATS_DOUBLE)
#define ROW(k, blk, metric, labels, type, unit, help) \
	{ #k, metric, labels, type, unit, help, blk, KIND(k), offsetof(struct stats_values, k) }
/* k_p50, k_p99 and k_max: a figure over the last periods, one metric with a
 * quantile label each ("1": the maximum) */
#define ROW_RECENT(k, blk, metric, unit, help)                                     \
	ROW(k##_p50, blk, metric, "quantile=\"0.5\"", "gauge", unit, help),        \
	ROW(k##_p99, blk, metric, "quantile=\"0.99\"", NULL, unit, NULL),          \
	ROW(k##_max, blk, metric, "quantile=\"1\"", NULL, unit, NULL)

const struct stats_row stats_rows[] = {
	ROW(uptime_s, STATS_ALWAYS, "llcd_uptime_seconds", NULL, "gauge", 1,
	    "Seconds since llcd started."),
	ROW(periods, STATS_ALWAYS, "llcd_periods_total", NULL, "counter", 1,
	    "Sampling periods completed."),
	ROW(period_ms, STATS_ALWAYS, "llcd_period_seconds", NULL, "gauge", 1e3,
	    "The configured sampling period."),
	ROW(domains, STATS_ALWAYS, "llcd_domains", NULL, "gauge", 1,
	    "Running domains llcd sees."),
	ROW(domains_managed, STATS_ALWAYS, "llcd_domains_managed", NULL, "gauge", 1,
	    "Domains llcd places."),
	ROW(pins, STATS_ALWAYS, "llcd_vcpu_pins_total", NULL, "counter", 1,
	    "vCPU pin actions."),
	ROW(emulator_pins, STATS_ALWAYS, "llcd_emulator_pins_total", NULL, "counter", 1,
	    "Emulator (and I/O thread) pin actions."),
	ROW(pin_calls, STATS_PINS, "llcd_pin_calls_total", NULL, "counter", 1,
	    "Pin calls made to libvirt (vCPU and emulator); not made where kernel and libvirt had the pin already."),
	ROW(pins_in_place, STATS_PINS, "llcd_pins_in_place_total", NULL, "counter", 1,
	    "Pins not made: the thread was on the planned CPUs for the kernel and for libvirt already."),
	ROW(state_write_errors, STATS_STATE, "llcd_state_write_errors_total", NULL, "counter", 1,
	    "State file writes that failed (the file is kept dirty and written again; the log says why)."),
	ROW(releases, STATS_ALWAYS, "llcd_releases_total", NULL, "counter", 1,
	    "Domains given back to the default scheduler."),
	ROW(refusals, STATS_ALWAYS, "llcd_refusals_total", NULL, "counter", 1,
	    "Placements refused for lack of room."),
	ROW(preference_switches, STATS_ALWAYS, "llcd_preference_switches_total", NULL, "counter", 1,
	    "Preferred-LLC changes of vCPU groups."),
	ROW(backoffs, STATS_ALWAYS, "llcd_benefit_backoffs_total", NULL, "counter", 1,
	    "Aggregations undone by the benefit check."),
	ROW(errors_transient, STATS_ALWAYS, "llcd_apply_errors_total", "class=\"transient\"", "counter", 1,
	    "Actions that failed, by class: transient (retried), gone (domain or thread vanished), permanent."),
	ROW(errors_gone, STATS_ALWAYS, "llcd_apply_errors_total", "class=\"gone\"", NULL, 1,
	    NULL),
	ROW(errors_permanent, STATS_ALWAYS, "llcd_apply_errors_total", "class=\"permanent\"", NULL, 1,
	    NULL),
	ROW(period_errors, STATS_ALWAYS, "llcd_period_errors_total", NULL, "counter", 1,
	    "Periods that failed (observe or apply error)."),
	ROW(isolation_held, STATS_ALWAYS, "llcd_isolation_pins_held_total", NULL, "counter", 1,
	    "Actions not applied so that isolation holds between pins (the plan held them, or a prerequisite pin did not apply)."),
	ROW(isolation_overlaps, STATS_ALWAYS, "llcd_isolation_overlaps", NULL, "gauge", 1,
	    "vCPU threads that may run on another domain's isolated cores after the last period's pins."),
	ROW(isolation_overlap_periods, STATS_ALWAYS, "llcd_isolation_overlap_periods_total", NULL, "counter", 1,
	    "Periods that ended with such an overlap (a failed pin, a pin changed outside llcd)."),
	ROW_RECENT(policy_step_us, STATS_ALWAYS, "llcd_policy_step_recent_seconds", 1e6,
	    "Policy step time over the last 256 periods: median, 99th percentile, and the maximum since start."),
	ROW_RECENT(period_us, STATS_ALWAYS, "llcd_period_work_recent_seconds", 1e6,
	    "What a period's work (observe, policy step, apply) took over the last 256 periods: median, 99th percentile, maximum."),
	ROW_RECENT(period_cpu_us, STATS_ALWAYS, "llcd_period_work_cpu_recent_seconds", 1e6,
	    "The CPU time the loop's thread spent on a period's work over the last 256 periods (wall time less waiting for the CPU): median, 99th percentile, maximum."),
	ROW_RECENT(period_late_us, STATS_ALWAYS, "llcd_period_lateness_recent_seconds", 1e6,
	    "How late periods started over the last 256 periods (control work, a busy host): median, 99th percentile, maximum."),
	ROW(recommend_computed, STATS_ALWAYS, "llcd_topology_recommendations_total", "source=\"computed\"", "counter", 1,
	    "topology DOMAIN answers: dry placements computed off the loop, and answers from the cache."),
	ROW(recommend_cached, STATS_ALWAYS, "llcd_topology_recommendations_total", "source=\"cache\"", NULL, 1,
	    NULL),
	ROW(recommend_compute_s_max, STATS_ALWAYS, "llcd_topology_recommendation_max_seconds", NULL, "gauge", 1,
	    "The longest dry placement for topology DOMAIN so far (on the worker thread, not the loop)."),
	ROW(log_suppressed, STATS_ALWAYS, "llcd_log_suppressed_total", NULL, "counter", 1,
	    "Repeated log messages not written (rate limits; the log says how many of each kind)."),
	ROW(http_accepted, STATS_HTTP, "llcd_http_connections_total", "result=\"accepted\"", "counter", 1,
	    "Connections to the metrics endpoint: accepted, refused over a limit (16, 4 per address)."),
	ROW(http_refused, STATS_HTTP, "llcd_http_connections_total", "result=\"refused\"", NULL, 1,
	    NULL),
	ROW(http_evicted, STATS_HTTP, "llcd_http_evicted_total", NULL, "counter", 1,
	    "Metrics connections cut to make room: they had owed their request for a second or more."),
	ROW(http_header_timeouts, STATS_HTTP, "llcd_http_timeouts_total", "deadline=\"header\"", "counter", 1,
	    "Metrics connections cut by a deadline: headers not whole in 5 s, reply not read in 10 s, no next request in 10 s."),
	ROW(http_request_timeouts, STATS_HTTP, "llcd_http_timeouts_total", "deadline=\"request\"", NULL, 1,
	    NULL),
	ROW(http_idle_closed, STATS_HTTP, "llcd_http_timeouts_total", "deadline=\"idle\"", NULL, 1,
	    NULL),
	ROW(http_connections, STATS_HTTP, "llcd_http_connections", NULL, "gauge", 1,
	    "Open connections to the metrics endpoint."),
	ROW(control_requests, STATS_CONTROL, "llcd_control_requests_total", NULL, "counter", 1,
	    "Control-socket requests answered."),
	ROW(control_refused, STATS_CONTROL, "llcd_control_refused_total", NULL, "counter", 1,
	    "Changing requests refused to a client that is not root."),
	ROW(control_malformed, STATS_CONTROL, "llcd_control_malformed_total", NULL, "counter", 1,
	    "Malformed control frames."),
	ROW(control_dropped_clients, STATS_CONTROL, "llcd_control_dropped_clients_total", NULL, "counter", 1,
	    "Control clients dropped (overflow, errors)."),
	ROW(control_busy_refused, STATS_CONTROL, "llcd_control_busy_refused_total", NULL, "counter", 1,
	    "Control connections refused over a slot limit."),
	ROW(control_idle_closed, STATS_CONTROL, "llcd_control_idle_closed_total", NULL, "counter", 1,
	    "Control clients closed after the idle timeout."),
	ROW(control_deferred, STATS_CONTROL, "llcd_control_deferred_total", NULL, "counter", 1,
	    "Control dispatches that left requests for the next wake-up (work budget)."),
	ROW(control_request_timeouts, STATS_CONTROL, "llcd_control_timeouts_total", "deadline=\"request\"", "counter", 1,
	    "Control clients closed by a deadline: a request not whole within 10 s of its first byte, a reply not read " "within 60 s of being queued."),
	ROW(control_reply_timeouts, STATS_CONTROL, "llcd_control_timeouts_total", "deadline=\"reply\"", NULL, 1,
	    NULL),
	ROW(control_hangups, STATS_CONTROL, "llcd_control_hangups_total", NULL, "counter", 1,
	    "Control clients dropped because their peer closed the connection before its answer."),
	ROW(control_queued_bytes, STATS_CONTROL, "llcd_control_queued_bytes", NULL, "gauge", 1,
	    "Reply bytes queued for control clients."),
};
const size_t stats_nrows = sizeof(stats_rows) / sizeof(stats_rows[0]);

/* one row per member: a member without a row does not compile */
_Static_assert(sizeof(stats_rows) / sizeof(stats_rows[0]) * 8 == sizeof(struct stats_values),
    "every member of struct stats_values needs its row in stats_rows[] (and is 8 bytes)");

double
stats_value(const struct llcd_stats *st, const struct stats_row *r)
{
	const char *p = (const char *)&st->v + r->offset;
	uint64_t u;
	double d;

	if (r->kind == STATS_DOUBLE) {
		memcpy(&d, p, sizeof(d));
		return d;
	}
	memcpy(&u, p, sizeof(u));
	return (double)u;
}

int
stats_shown(const struct llcd_stats *st, const struct stats_row *r)
{
	return r->block == STATS_ALWAYS || (st->blocks & r->block) != 0;
}

void
stats_json(const struct llcd_stats *st, json_object *o)
{
	json_object_object_add(o, "backend", json_object_new_string(st->backend ? st->backend : ""));
	for (size_t i = 0; i < stats_nrows; i++) {
		const struct stats_row *r = &stats_rows[i];
		const char *p = (const char *)&st->v + r->offset;
		uint64_t u;

		if (!stats_shown(st, r))
			continue;
		if (r->kind == STATS_DOUBLE) {
			json_object_object_add(o, r->key, json_object_new_double(stats_value(st, r)));
			continue;
		}
		memcpy(&u, p, sizeof(u));
		json_object_object_add(o, r->key, json_object_new_int64((int64_t)u));
	}
}
