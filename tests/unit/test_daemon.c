// SPDX-License-Identifier: GPL-2.0-or-later
/* test_daemon.c - llcd's core on the simulated back-end: a topology swap
 * (what CPU hotplug does) keeps valid pins and refuses a configuration
 * that no longer fits; `check` of a domain llcd never pinned; a started
 * event right after a period brings the next one to 20 ms, not a period. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "clock.h"
#include "control.h"
#include "ctl.h"

#include "daemon.h"
#include "log.h"
#include "daemon_int.h"     /* white-box: the engine's topology (hotplug) */
#include "simbackend.h"
#include "stats.h"
#include "topo_hwloc.h"
#include "test_main.h"

/* A back-end event that says a domain started, arriving right after a
 * period (within the 20 ms rate limit of early periods): the next period
 * comes 20 ms later, not a whole period (10 s here) later. */
static int ev_pipe[2] = { -1, -1 };
static int ev_steps;
static uint64_t ev_at[2];

static int
ev_fd(void *ctx)
{
	return ev_pipe[0];
}

static int
ev_handle(void *ctx, uint64_t now_ns, struct llcd_err *err)
{
	char b[8];

	return read(ev_pipe[0], b, sizeof(b)) > 0 ? 1 : 0;
}

static void
ev_hook(void *arg)
{
	struct daemon *d = arg;

	/* the period's own time (taken before its step), not the hook's:
	 * the first step places the whole scenario and may take longer than
	 * the second (ASan, a loaded machine) */
	if (ev_steps < 2)
		ev_at[ev_steps] = d->now_ns;
	if (++ev_steps == 1)
		assert_int_equal(write(ev_pipe[1], "s", 1), 1);      /* "a domain started" */
	else
		daemon_stop(d);
}

/* llcsim's scenario sim/scenarios/name.json as the back-end be. */
static struct simbe *
scenario(const char *name, struct daemon_backend *be)
{
	struct llcd_err err;
	char path[512];

	snprintf(path, sizeof(path), "%s/sim/scenarios/%s.json", LLCD_SRC, name);
	struct simbe *s = simbe_new(path, &err);
	if (s == NULL)
		fail_msg("%s", err.msg);
	simbe_backend(s, be);
	return s;
}

/* A daemon with configuration cfg (NULL: the defaults) on be. */
static struct daemon *
daemon_on(const struct config *cfg, const struct simbe *s, const struct daemon_backend *be)
{
	struct llcd_err err;
	struct config defaults;

	if (cfg == NULL) {
		config_defaults(&defaults);
		cfg = &defaults;
	}
	struct daemon *d = daemon_new(cfg, NULL, simbe_topo(s), be, &err);
	if (d == NULL)
		fail_msg("%s", err.msg);
	return d;
}

/* n periods of 100 ms from *now, each stepped without an error. */
static void
steps(struct daemon *d, uint64_t *now, int n)
{
	struct llcd_err err;

	for (int i = 0; i < n; i++, *now += 100000000ull)
		assert_int_equal(daemon_step(d, *now, &err), 0);
}

static void
test_started_event_soon_after_period(void **state)
{
	struct config cfg;
	struct daemon_backend be;
	struct daemon_hooks hooks;
	struct simbe *s = scenario("xiangshan-8ccx", &be);

	assert_int_equal(pipe2(ev_pipe, O_NONBLOCK), 0);
	hooks = *be.hooks;
	hooks.event_fd = ev_fd;
	hooks.handle_events = ev_handle;
	be.hooks = &hooks;
	config_defaults(&cfg);
	cfg.period_ms = 10000;
	struct daemon *d = daemon_on(&cfg, s, &be);
	daemon_set_period_hook(d, ev_hook, d);
	assert_int_equal(daemon_run(d), 0);
	assert_int_equal(ev_steps, 2);
	uint64_t gap = ev_at[1] - ev_at[0];
	print_message("period after the event: %.1f ms after the one before\n", (double)gap / 1e6);
	assert_true(gap >= 20000000ull);        /* the rate limit holds */
	assert_true(gap < 5000000000ull);       /* not the 10 s period */
	daemon_free(d);
	close(ev_pipe[0]);
	close(ev_pipe[1]);
	simbe_free(s);
}

static void
test_topology_swap(void **state)
{
	struct llcd_err err;
	struct config cfg;
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-8ccx", &be);

	config_defaults(&cfg);
	struct daemon *d = daemon_on(&cfg, s, &be);
	uint64_t now = 1000000000ull;
	int before = 0;
	for (int i = 0; i < 80; i++, now += 100000000ull) {
		assert_int_equal(daemon_step(d, now, &err), 0);
		FILE *f = tmpfile();
		char line[1024];
		daemon_print_plan(d, f);
		rewind(f);
		while (fgets(line, sizeof(line), f))
			before += strstr(line, "\"action\":\"pin-vcpu\"") != NULL;
		fclose(f);
	}
	assert_true(before >= 8);       /* the busy group was aggregated */
	/* the same host, re-read: a new topology object */
	struct topo *t2 = topo_load("pack:1 [numa] l3:8 core:8 pu:2", &err);
	assert_non_null(t2);
	assert_int_equal(daemon_set_topology(d, t2, &err), 0);
	assert_int_equal(daemon_step(d, now, &err), 0);
	/* re-placed with what was valid kept: no vCPU moved */
	FILE *f = tmpfile();
	daemon_print_plan(d, f);
	rewind(f);
	char line[1024];
	int pins = 0;
	while (fgets(line, sizeof(line), f))
		pins += strstr(line, "\"action\":\"pin-vcpu\"") != NULL;
	fclose(f);
	assert_int_equal(pins, 0);
	daemon_free(d);
	/* a host without CPU 0 cannot keep "reserved-cpus 0" */
	snprintf(cfg.reserved, sizeof(cfg.reserved), "0");
	d = daemon_on(&cfg, s, &be);
	struct topo *t3 = topo_load("pack:1 l3:1 core:1 pu:1(indexes=5)", &err);
	assert_non_null(t3);            /* a host whose only CPU is CPU 5 */
	assert_int_equal(daemon_set_topology(d, t3, &err), -1);
	assert_non_null(strstr(err.msg, "reserved-cpus: 0 names CPUs this host does not have"));
	topo_free(t3);
	daemon_free(d);
	topo_free(t2);
	simbe_free(s);
}


/* The live back-end reports a vCPU thread that llcd never pinned and that
 * may run everywhere as an empty set ("not placed"); wrap the simulated
 * back-end to report the same. */
static const struct agent_ops *sim_ops;
static int (*sim_get_annotation)(void *, uint64_t, char **, struct llcd_err *);
static int (*sim_describe)(void *, uint64_t, struct agent_dominfo *);

/* A back-end's interfaces, copied for a test to replace some entries. */
struct be_fns {
	struct agent_ops ops;
	struct agent_query query;
	struct daemon_hooks hooks;
};

/* be's interfaces copied to *w and be pointed at the copies; the simulated
 * back-end's own kept in sim_ops, sim_describe and sim_get_annotation for
 * the replacements to call. */
static void
wrap_sim_ops(struct daemon_backend *be, struct be_fns *w)
{
	sim_ops = be->ops;
	sim_describe = be->query->describe;
	sim_get_annotation = be->query->get_annotation;
	w->ops = *be->ops;
	w->query = *be->query;
	w->hooks = *be->hooks;
	be->ops = &w->ops;
	be->query = &w->query;
	be->hooks = &w->hooks;
}

static int
observe_unplaced(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	int rc = sim_ops->observe(ctx, now_ns, obs, err);

	for (int i = 0; rc == 0 && i < obs->ndomains; i++)
		for (int v = 0; v < obs->domains[i].nvcpus; v++)
			obs->vcpus[i][v].pinned = NULL;
	return rc;
}

/* One 4-vCPU domain "one" (one guest die) on a host of two 1-PU-core LLCs,
 * written to path (a mkstemp template) by sim_from_text(), which makes it
 * the back-end be. */
static const char one_domain_two_llcs[] =
    "{ \"host\": { \"topology\": \"pack:1 l3:2 core:2 pu:1\", \"reserved_cpus\": \"\" },"
    "  \"period_ms\": 100, \"duration_s\": 10, \"seed\": 1,"
    "  \"domains\": [ { \"name\": \"one\", \"vcpus\": 4,"
    "    \"guest_topology\": { \"sockets\": 1, \"dies\": 1, \"cores\": 4, \"threads\": 1 },"
    "    \"load\": [ { \"vcpus\": \"0-3\", \"util\": 0.1 } ] } ] }";

static struct simbe *
sim_from_text(const char *json, char *path, struct daemon_backend *be)
{
	struct llcd_err err;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	struct simbe *s = simbe_new(path, &err);
	if (s == NULL)
		fail_msg("%s", err.msg);
	simbe_backend(s, be);
	return s;
}

/* The domain of one_domain_two_llcs, its vCPUs observed as never pinned
 * (observe_unplaced); a test may replace more of f->ops. */
struct one_fx {
	char path[32];
	struct daemon_backend be;
	struct be_fns ops;
	struct simbe *s;
};

static void
one_domain_unplaced(struct one_fx *f)
{
	snprintf(f->path, sizeof(f->path), "/tmp/llcd-daemon-XXXXXX");
	f->s = sim_from_text(one_domain_two_llcs, f->path, &f->be);
	wrap_sim_ops(&f->be, &f->ops);
	f->ops.ops.observe = observe_unplaced;
}

static void
one_fx_close(struct one_fx *f)
{
	simbe_free(f->s);
	unlink(f->path);
}

/* A daemon with the default configuration on be, stepped n periods of
 * 100 ms from 1 s. */
static struct daemon *
daemon_stepped(const struct simbe *s, const struct daemon_backend *be, int n)
{
	uint64_t now = 1000000000ull;

	struct daemon *d = daemon_on(NULL, s, be);

	steps(d, &now, n);
	return d;
}

/* A request of the given type about one domain, handled by d: CTL_OK.
 * The caller reads req->reply, then request_done(). */
static void
domain_request(struct daemon *d, struct control_request *req, uint16_t type, const char *domain)
{
	memset(req, 0, sizeof(*req));
	req->type = type;
	req->args = json_object_new_object();
	json_object_object_add(req->args, "domain", json_object_new_string(domain));
	assert_int_equal(daemon_handle(d, req), CTL_OK);
}

static void
request_done(struct control_request *req)
{
	json_object_put(req->reply);
	json_object_put(req->args);
}

/* `check` on an unpinned one-die domain allowed on two LLCs finds the die
 * split, as llc-guesttopo --check does on its XML. */
static void
test_check_unpinned(void **state)
{
	struct one_fx f;

	one_domain_unplaced(&f);
	struct daemon *d = daemon_stepped(f.s, &f.be, 3);
	struct control_request req;
	domain_request(d, &req, CTL_CHECK, "one");
	assert_non_null(req.reply);
	assert_false(json_object_get_boolean(json_object_object_get(req.reply, "agree")));
	json_object *issues = json_object_object_get(req.reply, "issues");
	assert_int_equal(json_object_array_length(issues), 1);
	const char *msg = json_object_get_string(json_object_object_get(json_object_array_get_idx(issues, 0), "message"));
	assert_non_null(strstr(msg, "guest die 0 (socket 0, vCPUs 0-3) is pinned across 2 host LLCs"));
	request_done(&req);
	daemon_free(d);
	one_fx_close(&f);
}


/* dominfo names the home check's decision: on llcsim's
 * stream-isolated host (counters on) the one-LLC home of the isolated
 * bandwidth-bound domain is widened within a few seconds of the load. */
static void
test_dominfo_home_widened(void **state)
{
	struct llcd_err err;
	struct daemon_backend be;
	struct simbe *s = scenario("stream-isolated", &be);

	/* the scenario's period, as llcd-sim runs it */
	struct config cfg;
	config_defaults(&cfg);
	cfg.period_ms = (int)simbe_period_ms(s);
	struct daemon *d = daemon_new(&cfg, NULL, simbe_topo(s), &be, &err);
	if (d == NULL)
		fail_msg("%s", err.msg);
	uint64_t now = 1000000000ull;
	steps(d, &now, 60);      /* 6 s: the load starts at 2 s */
	struct control_request req;
	domain_request(d, &req, CTL_DOMINFO, "stream");
	const char *home = json_object_get_string(json_object_object_get(req.reply, "home"));
	assert_non_null(home);
	assert_non_null(strstr(home, "home widened from LLC 0 to LLCs 0-3 (whole cores on other LLCs): "
	    "instructions per demanded CPU-second "));
	assert_true(json_object_get_boolean(json_object_object_get(req.reply, "home_widened")));
	request_done(&req);
	daemon_free(d);
	simbe_free(s);
}

static json_object *
list_page(struct daemon *d, int64_t after, bool have_after, int max_bytes)
{
	struct control_request req = { .type = CTL_LIST, .args = json_object_new_object() };

	if (have_after)
		json_object_object_add(req.args, "after", json_object_new_int64(after));
	json_object_object_add(req.args, "max_bytes", json_object_new_int(max_bytes));
	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	json_object_put(req.args);
	return req.reply;
}

/* `list` pages by key: every domain once, no page over its byte budget
 * (one domain apiece at most over), so no reply nears the frame limit on a
 * host with thousands of domains. */
static void
test_list_pages(void **state)
{
	struct daemon_backend be;
	struct simbe *s = scenario("genoa-churn", &be);
	struct daemon *d = daemon_stepped(s, &be, 500);        /* 50 s: most domains run */

	json_object *one = list_page(d, 0, false, CTL_MAX_REPLY / 2);
	assert_false(json_object_object_get_ex(one, "next", NULL));
	size_t n = json_object_array_length(json_object_object_get(one, "domains"));
	assert_true(n >= 20);
	int64_t *keys = calloc(n, sizeof(*keys));
	size_t got = 0;
	int pages = 0;
	int64_t after = 0;
	bool have_after = false;
	for (;;) {
		json_object *p = list_page(d, after, have_after, 4096), *nx;
		json_object *a = json_object_object_get(p, "domains");
		size_t len = 0;
		pages++;
		assert_true(json_object_array_length(a) >= 1);
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *e = json_object_array_get_idx(a, i);
			int64_t k = json_object_get_int64(json_object_object_get(e, "key"));
			for (size_t j = 0; j < got; j++)
				assert_true(keys[j] != k);      /* no domain twice */
			assert_true(got < n);
			keys[got++] = k;
			if (i + 1 < json_object_array_length(a))
				len += strlen(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN)) + 1;
		}
		assert_true(len <= 4096);
		bool more = json_object_object_get_ex(p, "next", &nx);
		if (more) {
			after = json_object_get_int64(nx);
			have_after = true;
		}
		json_object_put(p);
		if (!more)
			break;
	}
	assert_int_equal(got, n);
	assert_true(pages > 1);
	/* a bad page argument is refused with the allowed range */
	struct control_request bad = { .type = CTL_LIST, .args = json_object_new_object() };
	json_object_object_add(bad.args, "max_bytes", json_object_new_int(10));
	assert_int_equal(daemon_handle(d, &bad), CTL_E_INVAL);
	assert_string_equal(bad.error, "'max_bytes' must be 4096-2097152");
	json_object_put(bad.reply);
	json_object_put(bad.args);
	free(keys);
	json_object_put(one);
	daemon_free(d);
	simbe_free(s);
}


static const char *
list_reason(struct daemon *d, const char *name)
{
	static char reason[256];
	json_object *p = list_page(d, 0, false, CTL_MAX_REPLY / 2);
	json_object *a = json_object_object_get(p, "domains");

	reason[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (strcmp(json_object_get_string(json_object_object_get(e, "name")), name) == 0)
			snprintf(reason, sizeof(reason), "%s: %s", json_object_get_string(json_object_object_get(e, "state")),
			    json_object_get_string(json_object_object_get(e, "reason")));
	}
	json_object_put(p);
	return reason;
}

/* A released domain stays released while its annotation stays, and is
 * managed again once the annotation changes outside llcctl (virsh
 * metadata: the back-end's annotation, not llcctl policy). */
static void
test_release_ends_on_new_annotation(void **state)
{
	struct llcd_err err;
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-8ccx", &be);
	struct daemon *d = daemon_on(NULL, s, &be);

	uint64_t now = 1000000000ull;
	steps(d, &now, 5);
	struct control_request req;
	domain_request(d, &req, CTL_RELEASE, "xs");
	request_done(&req);
	steps(d, &now, 5);
	assert_string_equal(list_reason(d, "xs"), "unmanaged: released by llcctl release");
	/* the annotation changes behind llcctl's back */
	json_object *one = list_page(d, 0, false, CTL_MAX_REPLY / 2);
	uint64_t key = (uint64_t)json_object_get_int64(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(one, "domains"), 0), "key"));
	json_object_put(one);
	assert_int_equal(be.query->set_annotation(be.ctx, key,
	    "<llc-policy xmlns='urn:llcd:llc-policy:1' mode='static'/>", true, false, &err), 0);
	steps(d, &now, 3);
	assert_string_equal(list_reason(d, "xs"), "managed: ");
	daemon_free(d);
	simbe_free(s);
}

static const char *
list_state(struct daemon *d, const char *name, char *reason, size_t len)
{
	static char state[32];
	struct control_request req = { .type = CTL_LIST, .args = json_object_new_object() };

	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	json_object *a = json_object_object_get(req.reply, "domains");
	state[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (strcmp(json_object_get_string(json_object_object_get(e, "name")), name) == 0) {
			snprintf(state, sizeof(state), "%s", json_object_get_string(json_object_object_get(e, "state")));
			snprintf(reason, len, "%s", json_object_get_string(json_object_object_get(e, "reason")));
		}
	}
	request_done(&req);
	return state;
}

/* `llcctl tune` (and reload) that makes room places a refused domain at the
 * next period, without waiting for another domain to leave. */
static void
test_tune_retries_refused(void **state)
{
	struct llcd_err err;
	struct config cfg;
	struct daemon_backend be;
	char path[] = "/tmp/llcd-refused-XXXXXX", reason[512];
	const char *scen =
	    "{ \"host\": { \"topology\": \"pack:1 l3:2 core:2 pu:2\", \"reserved_cpus\": \"0-1\" },"
	    "  \"period_ms\": 100, \"duration_s\": 10, \"seed\": 1,"
	    "  \"domains\": [ { \"name\": \"iso\", \"vcpus\": 8,"
	    "    \"guest_topology\": { \"sockets\": 1, \"dies\": 1, \"cores\": 4, \"threads\": 2 },"
	    "    \"llc_policy\": \"<llc-policy xmlns='urn:llcd:llc-policy:1' mode='static' isolation='core'/>\","
	    "    \"load\": [ { \"vcpus\": \"0-7\", \"util\": 0.5 } ] } ] }";

	struct simbe *s = sim_from_text(scen, path, &be);

	config_defaults(&cfg);
	snprintf(cfg.reserved, sizeof(cfg.reserved), "0-1");
	struct daemon *d = daemon_on(&cfg, s, &be);
	uint64_t now = 1000000000ull;
	steps(d, &now, 3);
	/* 4 whole cores for 8 vCPUs, 3 outside the reserved CPUs */
	assert_string_equal(list_state(d, "iso", reason, sizeof(reason)), "error");
	assert_non_null(strstr(reason, "needs 4 whole cores for 8 vCPUs"));
	struct control_request req = { .type = CTL_TUNE, .args = json_object_new_object() };
	json_object_object_add(req.args, "knob", json_object_new_string("reserved-cpus"));
	json_object_object_add(req.args, "value", json_object_new_string("none"));
	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	request_done(&req);
	assert_int_equal(daemon_step(d, now, &err), 0);
	assert_string_equal(list_state(d, "iso", reason, sizeof(reason)), "managed");
	daemon_free(d);
	simbe_free(s);
	unlink(path);
}

/* --- an overlap that happens anyway --------------------- */

static bool moved_outside;      /* web vCPU 0 observed on iso's core, its pins fail */
static char overlap_log[2][512];        /* the warning, and the all-clear */

static int
observe_moved(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	int rc = sim_ops->observe(ctx, now_ns, obs, err);
	int iso = -1, web = -1;

	for (int i = 0; i < obs->ndomains; i++) {
		iso = strcmp(obs->domains[i].name, "iso") == 0 ? i : iso;
		web = strcmp(obs->domains[i].name, "web") == 0 ? i : web;
	}
	if (rc == 0 && moved_outside && iso >= 0 && web >= 0)
		obs->vcpus[web][0].pinned = obs->vcpus[iso][0].pinned;   /* someone else's pin */
	return rc;
}

static enum agent_result
apply_web_fails(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	if (moved_outside && a->type == POLICY_ACT_PIN_VCPU && a->key == 2) {
		llcd_err_set(err, "virDomainPinVcpu: timed out");
		return AGENT_TRANSIENT;
	}
	return sim_ops->apply(ctx, a, err);
}

static void
overlap_sink(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)arg;
	if (strstr(msg, "isolation: ") == msg)
		snprintf(overlap_log[strstr(msg, "holds again") != NULL], sizeof(overlap_log[0]), "%s", msg);
}

/* A vCPU of a shared domain moved onto an isolated domain's core behind
 * llcd's back, and llcd's pin to take it off fails: the overlap is logged
 * in its first period (it used to take 3 in a row), naming the vCPU, the
 * CPU and the isolated domain, and counted; its end is logged too. */
static void
test_overlap_logged_first_period(void **state)
{
	char path[] = "/tmp/llcd-overlap-XXXXXX";
	const char *scen =
	    "{ \"host\": { \"topology\": \"pack:1 l3:2 core:2 pu:2\", \"reserved_cpus\": \"\" },"
	    "  \"period_ms\": 100, \"duration_s\": 10, \"seed\": 1,"
	    "  \"domains\": [ { \"name\": \"iso\", \"vcpus\": 2,"
	    "    \"llc_policy\": \"<llc-policy xmlns='urn:llcd:llc-policy:1' mode='static' isolation='core'/>\","
	    "    \"load\": [ { \"vcpus\": \"0-1\", \"util\": 0.5 } ] },"
	    "    { \"name\": \"web\", \"vcpus\": 2, \"load\": [ { \"vcpus\": \"0-1\", \"util\": 0.5 } ] } ] }";
	struct daemon_backend be;
	struct be_fns ops;
	struct simbe *s = sim_from_text(scen, path, &be);

	wrap_sim_ops(&be, &ops);
	ops.ops.observe = observe_moved;
	ops.ops.apply = apply_web_fails;
	memset(overlap_log, 0, sizeof(overlap_log));
	moved_outside = false;
	struct daemon *d = daemon_on(NULL, s, &be);
	uint64_t now = 1000000000ull;
	steps(d, &now, 3);
	assert_int_equal(d->iso.overlaps, 0);
	log_set_sink(overlap_sink, NULL);
	moved_outside = true;
	steps(d, &now, 1);
	assert_int_equal(d->iso.overlaps, 1);
	assert_int_equal(d->iso.overlap_periods, 1);
	assert_non_null(strstr(overlap_log[0], "isolation: 1 vCPU thread may run on cores of isolated domains after "
	    "this period's pins (domain 'web' vCPU 0 may run on CPU "));
	assert_non_null(strstr(overlap_log[0], ", a core of isolated domain 'iso')"));
	steps(d, &now, 1);                              /* logged once per streak */
	assert_int_equal(d->iso.overlap_periods, 2);
	overlap_log[0][0] = '\0';
	moved_outside = false;
	steps(d, &now, 1);
	assert_int_equal(d->iso.overlaps, 0);
	assert_string_equal(overlap_log[0], "");
	assert_string_equal(overlap_log[1], "isolation: holds again after 2 periods with an overlap");
	log_set_sink(NULL, NULL);
	daemon_free(d);
	simbe_free(s);
	unlink(path);
}

static int
tune(struct daemon *d, const char *knob, const char *value, bool reset, json_object **reply)
{
	struct control_request req = { .type = CTL_TUNE, .args = json_object_new_object() };

	if (knob)
		json_object_object_add(req.args, "knob", json_object_new_string(knob));
	if (value)
		json_object_object_add(req.args, "value", json_object_new_string(value));
	if (reset)
		json_object_object_add(req.args, "reset", json_object_new_boolean(true));
	int rc = daemon_handle(d, &req);
	json_object_put(req.args);
	if (reply)
		*reply = req.reply;
	else
		json_object_put(req.reply);
	return rc;
}

/* The first wakeups group of a dominfo reply (NULL: none). */
static json_object *
wakeups_group(json_object *reply)
{
	json_object *g = json_object_object_get(reply, "groups");

	for (size_t i = 0; g && i < json_object_array_length(g); i++) {
		json_object *x = json_object_array_get_idx(g, i);
		if (!strcmp(json_object_get_string(json_object_object_get(x, "rule")), "wakeups"))
			return x;
	}
	return NULL;
}

/* On a host with neither counters nor bandwidth
 * monitoring (xiangshan-wakeups-nojudge), `topology` says which judges the
 * host has, and `dominfo` shows the group inferred from wakeups as not
 * acted on, and why; `tune unjudged-groups act` opts in. */
static void
test_unjudged_group_shown(void **state)
{
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-wakeups-nojudge", &be);
	struct daemon *d = daemon_on(NULL, s, &be);
	struct control_request req;
	uint64_t now = 1000000000ull;

	steps(d, &now, 100);    /* 11 s: the load starts at 5 s, the group forms 2 s later */
	memset(&req, 0, sizeof(req));
	req.type = CTL_TOPOLOGY;
	req.args = json_object_new_object();
	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	json_object *j = json_object_object_get(req.reply, "judges");
	assert_non_null(j);
	assert_false(json_object_get_boolean(json_object_object_get(json_object_object_get(j, "counters"), "available")));
	assert_false(json_object_get_boolean(json_object_object_get(
	    json_object_object_get(j, "bandwidth_monitoring"), "available")));
	assert_true(json_object_get_boolean(json_object_object_get(json_object_object_get(j, "run_delay"), "available")));
	assert_string_equal(json_object_get_string(json_object_object_get(j, "unjudged_groups")), "show");
	assert_string_equal(json_object_get_string(json_object_object_get(j, "inferred_groups")),
	    "shown, not acted on: nothing here can judge them (unjudged-groups show)");
	request_done(&req);

	domain_request(d, &req, CTL_DOMINFO, "xs");
	json_object *g = wakeups_group(req.reply);
	assert_non_null(g);
	assert_string_equal(json_object_get_string(json_object_object_get(g, "vcpus")), "3,19,35,51,67,83,99,115");
	assert_false(json_object_get_boolean(json_object_object_get(g, "acted_on")));
	assert_int_equal(json_object_get_int(json_object_object_get(g, "preferred_llc")), -1);
	assert_non_null(strstr(json_object_get_string(json_object_object_get(g, "why")),
	    "inferred from wakeups, not acted on: no instruction counters or memory bandwidth monitoring"));
	request_done(&req);

	assert_int_equal(tune(d, "unjudged-groups", "act", false, NULL), CTL_OK);
	steps(d, &now, 20);
	domain_request(d, &req, CTL_DOMINFO, "xs");
	g = wakeups_group(req.reply);
	assert_non_null(g);
	assert_true(json_object_get_boolean(json_object_object_get(g, "acted_on")));
	assert_true(json_object_get_int(json_object_object_get(g, "preferred_llc")) >= 0);
	request_done(&req);
	daemon_free(d);
	simbe_free(s);
}

static int
stat_int(struct daemon *d, const char *key)
{
	struct control_request req = { .type = CTL_STATS, .args = json_object_new_object() };

	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	int v = json_object_get_int(json_object_object_get(req.reply, key));
	request_done(&req);
	return v;
}

/* A tune outlives a restart (so a restart after `tune overcommit 4` keeps
 * the domains it placed), shows in `tune`, and `tune --reset` drops it.
 * */
static void
test_tunes_kept_across_restart(void **state)
{
	struct llcd_err err;
	struct config cfg;
	struct daemon_backend be;
	char dir[] = "/tmp/llcd-tunes-XXXXXX", path[64];
	struct simbe *s = scenario("xiangshan-8ccx", &be);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tunes", dir);
	config_defaults(&cfg);
	int period0 = cfg.period_ms;
	struct daemon *d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 0);
	assert_int_equal(tune(d, "period-ms", "250", false, NULL), CTL_OK);
	assert_int_equal(tune(d, "overcommit", "4", false, NULL), CTL_OK);
	assert_int_equal(tune(d, "period-ms", "300", false, NULL), CTL_OK);   /* replaces */
	assert_int_equal(stat_int(d, "period_ms"), 300);
	daemon_free(d);
	/* the restart: the same configuration, the kept tunes over it */
	d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 2);
	assert_int_equal(stat_int(d, "period_ms"), 300);
	json_object *r;
	assert_int_equal(tune(d, NULL, NULL, false, &r), CTL_OK);
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(r, "tunes"), JSON_C_TO_STRING_PLAIN),
	    "[{\"knob\":\"period-ms\",\"value\":\"300\"},{\"knob\":\"overcommit\",\"value\":\"4\"}]");
	json_object_put(r);
	/* reset: the configuration's values, no file */
	assert_int_equal(tune(d, NULL, NULL, true, &r), CTL_OK);
	assert_non_null(strstr(json_object_get_string(json_object_object_get(r, "message")), "2 runtime tunes dropped"));
	json_object_put(r);
	assert_int_equal(stat_int(d, "period_ms"), period0);
	assert_int_equal(access(path, F_OK), -1);
	daemon_free(d);
	/* a line that is not a tune is ignored, the rest applied */
	FILE *f = fopen(path, "w");
	fprintf(f, "# kept\nsocket /tmp/elsewhere\nmax-moves 3\nperiod-ms nonsense\n");
	fclose(f);
	d = daemon_new(&cfg, NULL, simbe_topo(s), &be, &err);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 1);
	daemon_free(d);
	unlink(path);
	rmdir(dir);
	simbe_free(s);
}


/* The tunes file is root's, beside the state file: a tunes.tmp planted as
 * a symbolic link to a root-only file is not written through (it was, by
 * root's `llcctl tune`), a tunes file that is a link is not read, and in a
 * directory others may write nothing is written. */
static void
test_tunes_hostile(void **state)
{
	struct llcd_err err;
	struct config cfg;
	struct daemon_backend be;
	char dir[] = "/tmp/llcd-tunes-XXXXXX", path[64], tmp[80], victim[80], buf[64] = "";
	struct simbe *s = scenario("xiangshan-8ccx", &be);
	json_object *r;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tunes", dir);
	snprintf(tmp, sizeof(tmp), "%s/tunes.tmp", dir);
	snprintf(victim, sizeof(victim), "%s/shadow", dir);
	FILE *f = fopen(victim, "w");
	fprintf(f, "root's own\n");
	fclose(f);
	chmod(victim, 0600);
	assert_int_equal(symlink(victim, tmp), 0);
	config_defaults(&cfg);
	struct daemon *d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 0);
	assert_int_equal(tune(d, "period-ms", "250", false, NULL), CTL_OK);
	f = fopen(victim, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "root's own\n");      /* untouched */
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	daemon_free(d);
	/* the tunes file itself a link: not read */
	unlink(path);
	f = fopen(victim, "w");
	fprintf(f, "period-ms 123\n");
	fclose(f);
	assert_int_equal(symlink(victim, path), 0);
	d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 0);
	assert_int_equal(stat_int(d, "period_ms"), cfg.period_ms);
	daemon_free(d);
	/* a directory others may write: the tune is refused, with why */
	unlink(path);
	assert_int_equal(chmod(dir, 0777), 0);
	d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_set_tunes_file(d, path, &err), 0);
	assert_int_equal(tune(d, "period-ms", "250", false, &r), CTL_OK);      /* applied, not kept */
	assert_false(json_object_get_boolean(json_object_object_get(r, "kept")));
	assert_non_null(strstr(json_object_get_string(json_object_object_get(r, "not_kept")), "is writable by others"));
	json_object_put(r);
	assert_int_equal(access(path, F_OK), -1);
	daemon_free(d);
	unlink(tmp);
	unlink(victim);
	rmdir(dir);
	simbe_free(s);
}

static uint64_t failed_writes;

static void
state_write_errors(void *ctx, struct llcd_stats *st)
{
	st->blocks |= STATS_STATE;
	st->v.state_write_errors = failed_writes;
}

/* A state file that could not be written (kept dirty, retried) shows in
 * stats and in the metrics (in neither). */
static void
test_state_write_errors_shown(void **state)
{
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-8ccx", &be);
	struct agent_query query = *be.query;

	query.stats = state_write_errors;
	be.query = &query;
	failed_writes = 3;
	struct daemon *d = daemon_on(NULL, s, &be);
	assert_int_equal(stat_int(d, "state_write_errors"), 3);
	char *text = daemon_metrics_text(d);
	assert_non_null(strstr(text, "# TYPE llcd_state_write_errors_total counter\nllcd_state_write_errors_total 3\n"));
	free(text);
	daemon_free(d);
	simbe_free(s);
}

/* A back-end whose domain carries an annotation llcd cannot use, and whose
 * guest channel is connected but has reported no hot process. */

static int
bad_annotation(void *ctx, uint64_t key, char **xml, struct llcd_err *err)
{
	*xml = strdup("<llc:llc-policy xmlns:llc='urn:llcd:llc-policy:1' mode='fast'/>");
	return 0;
}

static int
observe_unannotated(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	int rc = sim_ops->observe(ctx, now_ns, obs, err);

	for (int i = 0; rc == 0 && i < obs->ndomains; i++) {
		obs->domains[i].annotated = false;
		obs->domains[i].nreports = 0;
	}
	return rc;
}

static int
describe_channel(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	int rc = sim_describe ? sim_describe(ctx, key, out) : 0;

	agent_facts_str(&out->facts, "guest_channel", "state", "connected");
	agent_facts_int(&out->facts, "guest_channel", "reports", 7);
	return rc;
}

/* `policy` on an invalid annotation says it is invalid and why (not "no
 * annotation"); `hot` with no report says the channel is connected (issue
 * 16 item 7). */
static void
test_policy_invalid_and_hot_channel(void **state)
{
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-8ccx", &be);

	struct be_fns ops;

	wrap_sim_ops(&be, &ops);
	ops.ops.observe = observe_unannotated;
	ops.query.get_annotation = bad_annotation;
	ops.query.describe = describe_channel;
	struct daemon *d = daemon_stepped(s, &be, 2);
	struct control_request req;
	domain_request(d, &req, CTL_POLICY_GET, "xs");
	assert_string_equal(json_object_get_string(json_object_object_get(req.reply, "status")), "invalid");
	assert_non_null(strstr(json_object_get_string(json_object_object_get(req.reply, "error")), "'fast'"));
	json_object_put(req.reply);
	req.reply = NULL;
	req.type = CTL_HOT;
	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	json_object *gc = json_object_object_get(req.reply, "guest_channel");
	assert_non_null(gc);
	assert_string_equal(json_object_get_string(json_object_object_get(gc, "state")), "connected");
	assert_int_equal(json_object_get_int(json_object_object_get(gc, "reports")), 7);
	request_done(&req);
	(void)sim_get_annotation;
	daemon_free(d);
	simbe_free(s);
}


static int
describe_affinity(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	int rc = sim_describe ? sim_describe(ctx, key, out) : 0;

	free(out->vcpus);
	out->nvcpu_info = 4;
	out->vcpus = calloc(4, sizeof(*out->vcpus));
	for (int v = 0; out->vcpus && v < 4; v++)
		cpuset_parse(&out->vcpus[v].affinity, "0-1", NULL);
	return rc;
}

/* The one domain, unplaced, described by describe (and the host by
 * describe_host unless NULL), llcd stepped 2 periods, and its answer to a
 * request of type about "one" in *req. */
static struct daemon *
unplaced_asked(struct one_fx *f, int (*describe)(void *, uint64_t, struct agent_dominfo *),
    int (*describe_host)(void *, struct agent_hostinfo *), enum ctl_type type, struct control_request *req)
{
	struct daemon *d;

	one_domain_unplaced(f);
	f->ops.query.describe = describe;
	if (describe_host != NULL)
		f->ops.query.describe_host = describe_host;
	d = daemon_stepped(f->s, &f->be, 2);
	domain_request(d, req, type, "one");
	return d;
}

/* What unplaced_asked made, gone. */
static void
unplaced_done(struct one_fx *f, struct daemon *d, struct control_request *req)
{
	request_done(req);
	daemon_free(d);
	one_fx_close(f);
}

/* vcpuinfo of a domain llcd has not pinned (released, or never placed)
 * shows the threads' real affinity, not an empty column. */
static void
test_vcpuinfo_shows_affinity(void **state)
{
	struct one_fx f;
	struct control_request req;
	struct daemon *d = unplaced_asked(&f, describe_affinity, NULL, CTL_VCPUINFO, &req);
	json_object *v = json_object_object_get(req.reply, "vcpus");
	assert_int_equal(json_object_array_length(v), 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(json_object_get_string(json_object_object_get(json_object_array_get_idx(v, (size_t)i),
		    "pinned")), "0-1");
	unplaced_done(&f, d, &req);
}

static int
describe_vcpu_fact(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	int rc = describe_affinity(ctx, key, out);

	if (out->vcpus != NULL)
		agent_facts_str(&out->vcpus[0].facts, NULL, "qmp", "%s", "match");
	return rc;
}

static int
describe_new_fact(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	int rc = describe_vcpu_fact(ctx, key, out);

	agent_facts_int(&out->facts, NULL, "example_answer", 42);
	agent_facts_str(&out->facts, "example", "text", "%s", "hello");
	agent_facts_bool(&out->facts, "example", "flag", true);
	return rc;
}

static int
describe_host_new_fact(void *ctx, struct agent_hostinfo *out)
{
	(void)ctx;
	agent_facts_null(&out->facts, "example_host", "unknown");
	return 0;
}

/* A new llcctl fact is one row where the back-end knows it (docs/design.md,
 * "Adding a fact"): rows of any key and group the daemon has never heard
 * of reach dominfo's and topology's JSON as they are, in their groups,
 * with nothing in the daemon written for them. A vCPU's rows (the QMP
 * cross-check) come out in dominfo's vcpu_threads after the vCPU's
 * position, and only for the vCPU that has them; agent_dominfo_clear frees
 * them (ASan). */
static void
test_new_fact_is_one_row(void **state)
{
	struct one_fx f;
	struct control_request req;
	struct daemon *d = unplaced_asked(&f, describe_new_fact, describe_host_new_fact, CTL_DOMINFO, &req);
	assert_int_equal(json_object_get_int(json_object_object_get(req.reply, "example_answer")), 42);
	json_object *g = json_object_object_get(req.reply, "example");
	assert_string_equal(json_object_get_string(json_object_object_get(g, "text")), "hello");
	assert_true(json_object_get_boolean(json_object_object_get(g, "flag")));
	json_object *v = json_object_object_get(req.reply, "vcpu_threads");
	assert_int_equal(json_object_array_length(v), 4);
	json_object *v0 = json_object_array_get_idx(v, 0), *v1 = json_object_array_get_idx(v, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(v0, "qmp")), "match");
	assert_false(json_object_object_get_ex(v1, "qmp", NULL));
	const char *keys[16];
	int n = 0;
	json_object_object_foreach(v0, k, val) {
		(void)val;
		if (n < 16)
			keys[n] = k;
		n++;
	}
	assert_true(n >= 2 && n <= 16);
	assert_string_equal(keys[n - 2], "thread");
	assert_string_equal(keys[n - 1], "qmp");
	request_done(&req);
	memset(&req, 0, sizeof(req));
	req.type = CTL_TOPOLOGY;
	req.args = json_object_new_object();
	assert_int_equal(daemon_handle(d, &req), CTL_OK);
	json_object *h = NULL, *u = NULL;
	assert_true(json_object_object_get_ex(req.reply, "example_host", &h));
	assert_true(json_object_object_get_ex(h, "unknown", &u));
	assert_null(u);                 /* JSON null */
	unplaced_done(&f, d, &req);
}

/* Observations fail while observe_fails is set (libvirt down): the
 * periods end before the engine runs. */
static const struct agent_ops *hp_ops;
static bool observe_fails;

static int
observe_or_fail(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	if (observe_fails)
		return llcd_err_set(err, "libvirt: connection lost");
	return hp_ops->observe(ctx, now_ns, obs, err);
}

/* CPU hotplug twice while no period reaches the engine: the engine stays
 * bound to the first re-read topology, which must stay alive until it
 * rebinds (it was freed at the second hotplug: a use after free under
 * ASan, and a stale pointer the next step compared with).
 * Run under the Asan build (scripts/test) this reads the engine's
 * topology, which ASan reports if it was freed. */
static void
test_hotplug_keeps_bound_topology(void **state)
{
	struct llcd_err err;
	struct daemon_backend be;
	struct simbe *s = scenario("xiangshan-8ccx", &be);
	const char *spec = "pack:1 [numa] l3:8 core:8 pu:2";

	hp_ops = be.ops;
	struct agent_ops ops = *be.ops;
	ops.observe = observe_or_fail;
	be.ops = &ops;
	observe_fails = false;
	struct daemon *d = daemon_stepped(s, &be, 3);
	uint64_t now = 2000000000ull;
	struct topo *t1 = topo_load(spec, &err), *t2 = topo_load(spec, &err), *t3 = topo_load(spec, &err);
	assert_true(t1 && t2 && t3);
	assert_int_equal(daemon_hotplug(d, t1, &err), 0);
	assert_int_equal(daemon_step(d, now += 100000000ull, &err), 0);
	assert_ptr_equal(policy_state_topo(agent_loop_policy(d->loop)), t1);
	observe_fails = true;
	assert_int_equal(daemon_hotplug(d, t2, &err), 0);
	assert_int_equal(daemon_step(d, now += 100000000ull, &err), -1);
	assert_int_equal(daemon_hotplug(d, t3, &err), 0);
	assert_int_equal(daemon_step(d, now += 100000000ull, &err), -1);
	/* the engine still refers to t1: it is alive */
	const struct topo *bound = policy_state_topo(agent_loop_policy(d->loop));
	assert_ptr_equal(bound, t1);
	assert_int_equal(bound->max_cpu, 127);
	assert_int_equal(topo_count(bound, TOPO_LLC), 8);
	/* libvirt back: the engine rebinds to t3 and t1, t2 are freed (the
	 * leak checker of the Asan build sees any that is not) */
	observe_fails = false;
	assert_int_equal(daemon_step(d, now += 100000000ull, &err), 0);
	assert_ptr_equal(policy_state_topo(agent_loop_policy(d->loop)), t3);
	assert_int_equal(d->cpus.nretired, 0);
	/* a topology the configuration does not fit is refused and freed */
	struct topo *t4 = topo_load("pack:1 l3:1 core:1 pu:1(indexes=5)", &err);
	assert_non_null(t4);
	daemon_free(d);
	struct config cfg;
	config_defaults(&cfg);
	snprintf(cfg.reserved, sizeof(cfg.reserved), "0");
	d = daemon_on(&cfg, s, &be);
	assert_int_equal(daemon_hotplug(d, t4, &err), -1);
	assert_non_null(strstr(err.msg, "reserved-cpus: 0 names CPUs this host does not have"));
	daemon_free(d);
	simbe_free(s);
}

TEST_MAIN(
	cmocka_unit_test(test_topology_swap),
	cmocka_unit_test(test_hotplug_keeps_bound_topology),
	cmocka_unit_test(test_check_unpinned),
	cmocka_unit_test(test_dominfo_home_widened),
	cmocka_unit_test(test_unjudged_group_shown),
	cmocka_unit_test(test_list_pages),
	cmocka_unit_test(test_release_ends_on_new_annotation),
	cmocka_unit_test(test_tunes_kept_across_restart),
	cmocka_unit_test(test_tunes_hostile),
	cmocka_unit_test(test_state_write_errors_shown),
	cmocka_unit_test(test_policy_invalid_and_hot_channel),
	cmocka_unit_test(test_vcpuinfo_shows_affinity),
	cmocka_unit_test(test_new_fact_is_one_row),
	cmocka_unit_test(test_tune_retries_refused),
	cmocka_unit_test(test_overlap_logged_first_period),
	cmocka_unit_test(test_started_event_soon_after_period))
