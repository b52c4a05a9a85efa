// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers.c - llcd's answers to llcctl's requests (daemon_handle): one
 * h_* function per request type of ctl.h. Here the daemon's own: ping,
 * stats and metrics, tune, reload, release; the answers about the host are
 * in handlers_host.c, about the domains in handlers_domain.c, about a
 * domain's policy in handlers_policy.c, about its guest topology and
 * channel in handlers_guest.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers_int.h"
#include "httpd.h"
#include "log.h"

static void
percentiles(const uint64_t *hist, int count, uint64_t *p50, uint64_t *p99, uint64_t *max)
{
	int n = count < STEP_HIST ? count : STEP_HIST;
	uint64_t v[STEP_HIST];

	*p50 = *p99 = 0;
	if (max)
		*max = 0;
	if (n == 0)
		return;
	memcpy(v, hist, sizeof(uint64_t) * (size_t)n);
	for (int i = 1; i < n; i++) {           /* small: insertion sort */
		uint64_t x = v[i];
		int j = i - 1;
		while (j >= 0 && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
	*p50 = v[n / 2];
	*p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	if (max)
		*max = v[n - 1];
}

/* round x to one decimal of a microsecond, from ns */
static double
us1(uint64_t ns)
{
	return round((double)ns / 100) / 10;
}

static void
stats_fill(struct daemon *d, struct llcd_stats *st)
{
	const struct agent_obs *ob = agent_loop_obs(d->loop);
	struct stats_values *v = &st->v;
	struct policy_stats ps;
	uint64_t p50, p99, l50, l99, lmax, c50, c99, cmax, u50, u99, umax;

	memset(st, 0, sizeof(*st));
	st->backend = d->be.name;
	policy_stats(agent_loop_policy(d->loop), &ps);
	for (int i = 0; ob && i < ob->ndomains; i++) {
		struct policy_domain_info info;
		if (policy_domain_info(agent_loop_policy(d->loop), ob->domains[i].key, &info) == 0 && info.managed)
			v->domains_managed++;
	}
	percentiles(d->cost.step_ns, d->cost.nstep, &p50, &p99, NULL);
	percentiles(d->cost.late_ns, d->cost.nlate, &l50, &l99, &lmax);
	percentiles(d->cost.period_ns, d->cost.nperiod, &c50, &c99, &cmax);
	percentiles(d->cost.period_cpu_ns, d->cost.nperiod, &u50, &u99, &umax);
	v->uptime_s = round((double)(d->now_ns - d->start_ns) / 1e7) / 100;
	v->periods = d->periods;
	v->period_ms = (uint64_t)d->cfg.period_ms;
	v->domains = ob ? (uint64_t)ob->ndomains : 0;
	v->pins = d->actions[POLICY_ACT_PIN_VCPU];
	v->emulator_pins = d->actions[POLICY_ACT_PIN_EMULATOR];
	if (d->be.query->stats)
		d->be.query->stats(d->be.ctx, st);     /* its counters (pin calls, state file) */
	v->releases = d->actions[POLICY_ACT_RELEASE];
	v->refusals = d->actions[POLICY_ACT_REFUSE];
	v->preference_switches = ps.pref_switches;
	v->backoffs = ps.backoffs;
	v->errors_transient = d->results[AGENT_TRANSIENT];
	v->errors_gone = d->results[AGENT_GONE];
	v->errors_permanent = d->results[AGENT_PERMANENT];
	v->period_errors = d->errors;
	v->isolation_held = d->iso.held;
	v->isolation_overlaps = (uint64_t)d->iso.overlaps;
	v->isolation_overlap_periods = d->iso.overlap_periods;
	v->policy_step_us_p50 = us1(p50);
	v->policy_step_us_p99 = us1(p99);
	v->policy_step_us_max = us1(d->cost.step_max_ns);
	v->period_us_p50 = us1(c50);
	v->period_us_p99 = us1(c99);
	v->period_us_max = us1(cmax);
	v->period_cpu_us_p50 = us1(u50);
	v->period_cpu_us_p99 = us1(u99);
	v->period_cpu_us_max = us1(umax);
	v->period_late_us_p50 = us1(l50);
	v->period_late_us_p99 = us1(l99);
	v->period_late_us_max = us1(lmax);
	v->recommend_computed = d->rec.computed;
	v->recommend_cached = d->rec.cached;
	v->recommend_compute_s_max = round(d->rec.compute_max_s * 1000) / 1000;
	v->log_suppressed = log_suppressed_total();
	if (d->httpd) {
		struct httpd_stats hs;
		st->blocks |= STATS_HTTP;
		httpd_get_stats(d->httpd, &hs);
		v->http_accepted = hs.accepted;
		v->http_refused = hs.refused;
		v->http_evicted = hs.evicted;
		v->http_header_timeouts = hs.header_timeouts;
		v->http_request_timeouts = hs.request_timeouts;
		v->http_idle_closed = hs.idle_closed;
		v->http_connections = (uint64_t)hs.connections;
	}
	if (d->ctl) {
		struct control_stats cs;
		st->blocks |= STATS_CONTROL;
		control_get_stats(d->ctl, &cs);
		v->control_requests = cs.requests;
		v->control_refused = cs.refused;
		v->control_malformed = cs.malformed;
		v->control_dropped_clients = cs.dropped_clients;
		v->control_busy_refused = cs.busy_refused;
		v->control_idle_closed = cs.idle_closed;
		v->control_deferred = cs.deferred;
		v->control_request_timeouts = cs.request_timeouts;
		v->control_reply_timeouts = cs.reply_timeouts;
		v->control_hangups = cs.hangups;
		v->control_queued_bytes = control_queued(d->ctl);
	}
}

/* `llcctl metrics` and the HTTP endpoint: one renderer (metrics.h). */
char *
daemon_metrics_text(struct daemon *d)
{
	struct llcd_stats st;

	stats_fill(d, &st);
	return metrics_render(&st, &d->cost.step_hist, LLCD_VERSION);
}

static int
h_metrics(struct daemon *d, struct control_request *req)
{
	char *text = daemon_metrics_text(d);

	if (text == NULL) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "text", jstr(text));
	free(text);
	return CTL_OK;
}

/* The reply of a request whose outcome is one message (reload, tune
 * --reset): msg as the error when rc is not CTL_OK, else {"message": msg}. */
static int
message_reply(struct control_request *req, int rc, const char *msg)
{
	if (rc != CTL_OK) {
		snprintf(req->error, sizeof(req->error), "%s", msg);
		return rc;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "message", jstr(msg));
	return CTL_OK;
}

static int
h_tune(struct daemon *d, struct control_request *req)
{
	const char *k = arg_str(req, "knob"), *v = arg_str(req, "value");
	const struct config_directive *dir;
	struct config c = d->cfg;
	struct llcd_err err;

	if (arg_bool(req, "reset", false)) {
		char msg[512];
		int rc = message_reply(req, daemon_reset_tunes(d, msg, sizeof(msg)), msg);
		if (rc == CTL_OK)
			json_object_object_add(req->reply, "tunes", json_object_new_array());
		return rc;
	}
	if (k == NULL && v == NULL) {
		json_object *a = json_object_new_array();
		for (int i = 0; i < d->tune.n; i++) {
			json_object *t = json_object_new_object();
			json_object_object_add(t, "knob", jstr(d->tune.kv[i][0]));
			json_object_object_add(t, "value", jstr(d->tune.kv[i][1]));
			json_object_array_add(a, t);
		}
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "tunes", a);
		json_object_object_add(req->reply, "file", jstr(d->tune.file));
		return CTL_OK;
	}
	if (k == NULL || v == NULL) {
		snprintf(req->error, sizeof(req->error), "tune needs a knob and a value");
		return CTL_E_INVAL;
	}
	if ((dir = config_directive(k)) == NULL || !(dir->flags & CONFIG_TUNE)) {
		char knobs[512];
		config_list(CONFIG_TUNE, knobs, sizeof(knobs));
		snprintf(req->error, sizeof(req->error), "unknown knob '%.64s' (%.400s)", k, knobs);
		return CTL_E_INVAL;
	}
	if (config_set(&c, k, v, &err) < 0 || daemon_apply_config(d, &c, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INVAL;
	}
	log_info("tune %s %s (by uid %u)", k, v, (unsigned)req->uid);
	bool kept = d->tune.file[0] != '\0';
	if (daemon_keep_tune(d, k, v, &err) < 0) {
		log_warnx("tune %s %s holds until llcd restarts: cannot keep it: %s", k, v, err.msg);
		kept = false;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "knob", jstr(k));
	json_object_object_add(req->reply, "value", jstr(v));
	json_object_object_add(req->reply, "kept", json_object_new_boolean(kept));
	if (d->tune.file[0] != '\0' && !kept)
		json_object_object_add(req->reply, "not_kept", jstr(err.msg));
	return CTL_OK;
}

static int
h_release(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	if (daemon_release(d, in) < 0) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	log_dom(LOG_INFO, in->name, -1, 0, "released by uid %u: back to the default scheduler at the next period",
	    (unsigned)req->uid);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "released", json_object_new_boolean(true));
	return CTL_OK;
}

/* The handler of a request about one domain, or NULL: topology is one
 * with a domain, the host's without. */
static domain_handler *
domain_request(const struct control_request *req)
{
	static domain_handler *const by_type[] = {
		[CTL_TOPOLOGY] = daemon_topology_domain,
		[CTL_DOMINFO] = daemon_dominfo,
		[CTL_VCPUINFO] = daemon_vcpuinfo,
		[CTL_POLICY_GET] = daemon_policy_get,
		[CTL_POLICY_SET] = daemon_policy_set,
		[CTL_HOT] = daemon_hot,
		[CTL_WAKEUPS] = daemon_wakeups,
		[CTL_RELEASE] = h_release,
		[CTL_CHECK] = daemon_check,
		[CTL_TOPOLOGY_APPLY] = daemon_topology_apply,
	};

	if ((unsigned)req->type >= sizeof(by_type) / sizeof(by_type[0]))
		return NULL;
	if (req->type == CTL_TOPOLOGY && arg_str(req, "domain") == NULL)
		return NULL;
	return by_type[req->type];
}

int
daemon_handle(void *ctx, struct control_request *req)
{
	struct daemon *d = ctx;
	domain_handler *dh = domain_request(req);

	if (dh != NULL) {
		const struct policy_domain_in *in;
		int rc = find_domain(d, req, &in);
		return rc == CTL_OK ? dh(d, req, in) : rc;
	}
	switch (req->type) {
	case CTL_PING:
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "version", jstr(LLCD_VERSION));
		json_object_object_add(req->reply, "protocol", json_object_new_int(CTL_VERSION));
		json_object_object_add(req->reply, "backend", jstr(d->be.name));
		return CTL_OK;
	case CTL_TOPOLOGY:
		req->reply = daemon_topology_json(d);
		return CTL_OK;
	case CTL_LIST: return daemon_list(d, req);
	case CTL_MAP: return daemon_map(d, req);
	case CTL_EVENTS: return CTL_OK;
	case CTL_STATS: {
		struct llcd_stats st;
		stats_fill(d, &st);
		req->reply = json_object_new_object();
		stats_json(&st, req->reply);
		return CTL_OK;
	}
	case CTL_METRICS: return h_metrics(d, req);
	case CTL_TUNE: return h_tune(d, req);
	case CTL_RELOAD: {
		char msg[512];
		return message_reply(req, daemon_reload(d, msg, sizeof(msg)), msg);
	}
	case CTL_GUEST_CHANNEL: return daemon_guest_channel(d, req);
	}
	snprintf(req->error, sizeof(req->error), "unknown request");
	return CTL_E_UNKNOWN;
}
