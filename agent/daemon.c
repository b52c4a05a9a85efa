/* daemon.c - llcd's core: loop, control socket, llcctl answers. */
#include "daemon.h"

#include <errno.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "annotation_xml.h"
#include "guesttopo.h"
#include "guestxml.h"
#include "control.h"
#include "ctl.h"
#include "httpd.h"
#include "metrics.h"
#include "log.h"
#include "topo_hwloc.h"

#define STEP_HIST 256

struct daemon {
	struct config cfg;
	char config_path[CONFIG_PATH_MAX];
	const struct topo *topo;
	struct daemon_backend be;
	struct agent_ops ops;                   /* wrapper around be.ops */
	struct policy_host host;
	struct agent_loop *loop;
	struct control *ctl;
	uint64_t *released;
	int nreleased;
	char overrides[8][2][CONFIG_PATH_MAX];
	int noverrides;
	bool watch_cpus;
	char online[4096];              /* /sys/devices/system/cpu/online, last read */
	struct topo *owned_topo;        /* a topology the daemon re-read itself */
	uint64_t start_ns, now_ns;
	volatile sig_atomic_t stop, reload;
	/* counters */
	uint64_t periods, errors, actions[6], results[4];
	uint64_t step_ns[STEP_HIST];
	int nstep;
	uint64_t step_max_ns;
	struct metrics_hist step_hist;
	struct httpd *httpd;            /* metrics-listen; NULL off */
	bool listening;                 /* daemon_listen ran: serve metrics */
};

#define HOOK(d) ((d)->be.hook_ctx ? (d)->be.hook_ctx : (d)->be.ctx)

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- configuration -> engine settings ------------------------------------- */

static int
host_from_config(const struct config *c, const struct topo *t, bool counters, struct policy_host *h,
                 struct llcd_err *err)
{
	policy_host_defaults(h, t);
	if (cpuset_parse(&h->reserved, c->reserved, err) < 0)
		return llcd_err_prefix(err, "reserved-cpus");
	if (cpuset_parse(&h->shared_pool, c->shared_pool, err) < 0)
		return llcd_err_prefix(err, "shared-pool");
	if (!cpuset_subset(&h->reserved, &t->all)) {
		char buf[128];
		cpuset_format(&h->reserved, buf, sizeof(buf));
		return llcd_err_set(err, "reserved-cpus: %s names CPUs this host does not have", buf);
	}
	struct cpuset usable;
	cpuset_andnot(&usable, &t->all, &h->reserved);
	if (cpuset_empty(&usable))
		return llcd_err_set(err, "reserved-cpus: every CPU of the host is reserved");
	if (!cpuset_empty(&h->shared_pool)) {
		struct cpuset x;
		cpuset_and(&x, &h->shared_pool, &usable);
		if (cpuset_empty(&x))
			return llcd_err_set(err, "shared-pool: no CPU of this host outside the reserved CPUs");
	}
	h->overcommit = c->overcommit;
	h->overcommit_isolated = c->overcommit_isolated;
	h->max_moves_total = c->max_moves;
	h->counters = !strcmp(c->counters, "on") || (!strcmp(c->counters, "auto") && counters);
	return 0;
}

/* --- the ops wrapper: default mode, released domains, events ------------- */

static bool
is_released(const struct daemon *d, uint64_t key)
{
	for (int i = 0; i < d->nreleased; i++)
		if (d->released[i] == key)
			return true;
	return false;
}

static void
unrelease(struct daemon *d, uint64_t key)
{
	for (int i = 0; i < d->nreleased; i++)
		if (d->released[i] == key)
			d->released[i--] = d->released[--d->nreleased];
}

static int
wrap_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	struct daemon *d = ctx;

	if (d->be.ops->observe(d->be.ctx, now_ns, obs, err) < 0)
		return -1;
	for (int i = 0; i < obs->ndomains; i++) {
		struct policy_domain_in *in = &obs->domains[i];
		if (is_released(d, in->key)) {
			in->annotated = false;
			continue;
		}
		if (!in->annotated && d->cfg.default_mode != POLICY_MODE_NONE) {
			in->annotated = true;
			policy_annotation_defaults(&in->annot);
			in->annot.mode = d->cfg.default_mode;
			in->annot.isolation = d->cfg.default_isolation ? POLICY_ISO_CORE : POLICY_ISO_NONE;
		}
	}
	return 0;
}

static const char *
domain_name(const struct daemon *d, uint64_t key)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);

	for (int i = 0; o && i < o->ndomains; i++)
		if (o->domains[i].key == key)
			return o->domains[i].name;
	return "?";
}

static void
broadcast(struct daemon *d, const struct policy_action *a, enum agent_result r, const char *msg)
{
	json_object *ev;
	char cs[512];

	if (d->ctl == NULL || control_nclients(d->ctl) == 0)
		return;
	cpuset_format(&a->cpus, cs, sizeof(cs));
	ev = json_object_new_object();
	json_object_object_add(ev, "t", json_object_new_double((double)(d->now_ns - d->start_ns) / 1e9));
	json_object_object_add(ev, "action", json_object_new_string(policy_action_name(a->type)));
	json_object_object_add(ev, "domain", json_object_new_string(domain_name(d, a->key)));
	json_object_object_add(ev, "vcpu", json_object_new_int(a->vcpu));
	json_object_object_add(ev, "llc", json_object_new_int(a->llc));
	json_object_object_add(ev, "cpus", json_object_new_string(cs));
	json_object_object_add(ev, "reason", json_object_new_string(a->reason));
	json_object_object_add(ev, "result", json_object_new_string(agent_result_name(r)));
	if (msg && *msg)
		json_object_object_add(ev, "error", json_object_new_string(msg));
	control_broadcast(d->ctl, ev);
	json_object_put(ev);
}

static enum agent_result
wrap_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct daemon *d = ctx;
	enum agent_result r = d->be.ops->apply(d->be.ctx, a, err);

	if ((int)a->type < 6)
		d->actions[a->type]++;
	if ((int)r < 4)
		d->results[r]++;
	if (a->type == POLICY_ACT_REFUSE || a->type == POLICY_ACT_PREFER || a->type == POLICY_ACT_BACKOFF)
		log_dom(LOG_INFO, domain_name(d, a->key), a->vcpu, 0, "%s: %s", policy_action_name(a->type), a->reason);
	else if (r == AGENT_OK)
		log_dom(LOG_DEBUG, domain_name(d, a->key), a->vcpu, 0, "%s: %s", policy_action_name(a->type), a->reason);
	broadcast(d, a, r, r == AGENT_OK ? NULL : err->msg);
	return r;
}

static void
wrap_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct daemon *d = ctx;

	log_dom(r == AGENT_TRANSIENT ? LOG_INFO : LOG_WARNING, domain_name(d, a->key), a->vcpu, 0,
	    "%s failed (%s): %s", policy_action_name(a->type), agent_result_name(r), msg);
	if (d->be.ops->report)
		d->be.ops->report(d->be.ctx, a, r, msg);
}

/* --- lifecycle ------------------------------------------------------------- */

struct daemon *
daemon_new(const struct config *cfg, const char *config_path, const struct topo *topo,
           const struct daemon_backend *be, struct llcd_err *err)
{
	struct daemon *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	if (config_path)
		snprintf(d->config_path, sizeof(d->config_path), "%s", config_path);
	d->topo = topo;
	d->be = *be;
	d->ops = (struct agent_ops){ be->name, wrap_observe, wrap_apply, wrap_report };
	if (host_from_config(cfg, topo, be->counters, &d->host, err) < 0) {
		free(d);
		return NULL;
	}
	d->loop = agent_loop_new(&d->ops, d, &d->host, (uint64_t)cfg->period_ms * 1000000ull, err);
	if (d->loop == NULL) {
		free(d);
		return NULL;
	}
	d->start_ns = d->now_ns = mono_ns();
	return d;
}

void
daemon_free(struct daemon *d)
{
	if (d == NULL)
		return;
	httpd_free(d->httpd);
	control_free(d->ctl);
	agent_loop_free(d->loop);
	topo_free(d->owned_topo);
	free(d->released);
	free(d);
}

int
daemon_listen(struct daemon *d, struct llcd_err *err)
{
	gid_t gid = (gid_t)-1;

	if (d->cfg.socket_group[0]) {
		struct group *g = getgrnam(d->cfg.socket_group);
		if (g == NULL && strcmp(d->cfg.socket_group, "llcd") == 0) {
			/* the default group comes with the package; without it
			 * (trial use) only root can talk to llcd */
			log_warnx("socket-group: no group 'llcd' on this host: %s is for root only", d->cfg.socket);
		} else if (g == NULL) {
			return llcd_err_set(err, "socket-group: no group '%s' on this host (create it, or set "
			    "'socket-group none')", d->cfg.socket_group);
		} else {
			gid = g->gr_gid;
		}
	}
	d->ctl = control_new(d->cfg.socket, gid, daemon_handle, d, err);
	if (d->ctl == NULL)
		return -1;
	d->listening = true;
	if (d->cfg.metrics_listen[0]) {
		if ((d->httpd = httpd_new(d->cfg.metrics_listen, err)) == NULL)
			return -1;
		log_info("metrics: serving %s", httpd_url(d->httpd));
	}
	return 0;
}

static char *metrics_text(struct daemon *d);

/* The loop's side of the metrics endpoint: one rendering per period. */
static void
publish_metrics(struct daemon *d)
{
	char *text;

	if (d->httpd == NULL || (text = metrics_text(d)) == NULL)
		return;
	httpd_publish(d->httpd, text, mono_ns());
	free(text);
}

/* metrics-listen changed on reload: the old endpoint closes, the new one
 * opens; when it cannot, the old one is restored and the reload fails. */
static int
relisten_metrics(struct daemon *d, const char *spec, struct llcd_err *err)
{
	struct httpd *n = NULL;

	if (!d->listening || !strcmp(spec, d->cfg.metrics_listen))
		return 0;
	httpd_free(d->httpd);
	d->httpd = NULL;
	if (spec[0] && (n = httpd_new(spec, err)) == NULL) {
		struct llcd_err e2;
		if (d->cfg.metrics_listen[0] && (d->httpd = httpd_new(d->cfg.metrics_listen, &e2)) == NULL)
			log_warnx("metrics: %s", e2.msg);
		return -1;
	}
	d->httpd = n;
	snprintf(d->cfg.metrics_listen, sizeof(d->cfg.metrics_listen), "%s", spec);
	if (n)
		log_info("metrics: serving %s", httpd_url(n));
	else
		log_info("metrics: endpoint closed (metrics-listen off)");
	publish_metrics(d);
	return 0;
}

int
daemon_step(struct daemon *d, uint64_t now_ns, struct llcd_err *err)
{
	struct agent_step_stats st;

	d->now_ns = now_ns;
	if (d->be.tick)
		d->be.tick(HOOK(d), now_ns);
	if (agent_loop_step(d->loop, now_ns, &st, err) < 0) {
		d->errors++;
		return -1;
	}
	d->periods++;
	d->step_ns[d->nstep++ % STEP_HIST] = st.policy_wall_ns;
	if (st.policy_wall_ns > d->step_max_ns)
		d->step_max_ns = st.policy_wall_ns;
	metrics_hist_observe(&d->step_hist, st.policy_wall_ns);
	publish_metrics(d);
	return 0;
}

void
daemon_stop(struct daemon *d)
{
	d->stop = 1;
}

void
daemon_request_reload(struct daemon *d)
{
	d->reload = 1;
}

static int
apply_config(struct daemon *d, const struct config *c, struct llcd_err *err)
{
	struct policy_host h;

	if (host_from_config(c, d->topo, d->be.counters, &h, err) < 0 ||
	    relisten_metrics(d, c->metrics_listen, err) < 0)
		return -1;
	d->cfg.period_ms = c->period_ms;
	d->cfg.default_mode = c->default_mode;
	d->cfg.default_isolation = c->default_isolation;
	snprintf(d->cfg.reserved, sizeof(d->cfg.reserved), "%s", c->reserved);
	snprintf(d->cfg.shared_pool, sizeof(d->cfg.shared_pool), "%s", c->shared_pool);
	d->cfg.overcommit = c->overcommit;
	d->cfg.overcommit_isolated = c->overcommit_isolated;
	d->cfg.max_moves = c->max_moves;
	snprintf(d->cfg.counters, sizeof(d->cfg.counters), "%s", c->counters);
	d->cfg.log_level = c->log_level;
	d->cfg.release_on_exit = c->release_on_exit;
	log_setverbose(c->log_level);
	d->host = h;
	agent_loop_set_host(d->loop, &h, (uint64_t)c->period_ms * 1000000ull);
	return 0;
}

int
daemon_set_overrides(struct daemon *d, const char *const *kv, int npairs, struct llcd_err *err)
{
	if (npairs > 8)
		return llcd_err_set(err, "too many overrides");
	for (int i = 0; i < npairs; i++) {
		snprintf(d->overrides[i][0], CONFIG_PATH_MAX, "%s", kv[2 * i]);
		snprintf(d->overrides[i][1], CONFIG_PATH_MAX, "%s", kv[2 * i + 1]);
	}
	d->noverrides = npairs;
	return 0;
}

static int
do_reload(struct daemon *d, char *msg, size_t len)
{
	struct config c;
	struct llcd_err err;

	if (d->config_path[0] == '\0') {
		snprintf(msg, len, "llcd runs without a configuration file: nothing to reload");
		return CTL_E_UNSUPPORTED;
	}
	config_defaults(&c);
	int rc = config_load(&c, d->config_path, false, &err);
	for (int i = 0; rc == 0 && i < d->noverrides; i++)
		rc = config_set(&c, d->overrides[i][0], d->overrides[i][1], &err);
	if (rc < 0 || apply_config(d, &c, &err) < 0) {
		snprintf(msg, len, "reload failed, configuration unchanged: %.440s", err.msg);
		log_warnx("%s", msg);
		return CTL_E_INVAL;
	}
	/* settings that need a restart are reported, not silently ignored */
	const char *restart = strcmp(c.uri, d->cfg.uri) ? "uri" : strcmp(c.socket, d->cfg.socket) ? "socket" :
	    strcmp(c.topology, d->cfg.topology) ? "topology" : strcmp(c.state_dir, d->cfg.state_dir) ? "state-dir" : NULL;
	snprintf(msg, len, "reloaded %s%s%s", d->config_path, restart ? "; a change of '" : "",
	    restart ? restart : "");
	if (restart)
		snprintf(msg + strlen(msg), len - strlen(msg), "' takes effect at the next start");
	log_info("%s", msg);
	return CTL_OK;
}

/* release-on-exit: every domain back to the default scheduler. */
static void
daemon_release_all(struct daemon *d)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	struct llcd_err err;

	for (int i = 0; o && i < o->ndomains; i++) {
		struct policy_action a = { .type = POLICY_ACT_RELEASE, .key = o->domains[i].key, .domain = i,
		                           .vcpu = -1, .llc = -1 };
		cpuset_andnot(&a.cpus, &d->topo->all, &d->host.reserved);
		snprintf(a.reason, sizeof(a.reason), "llcd stopping with release-on-exit");
		if (d->be.ops->apply(d->be.ctx, &a, &err) != AGENT_OK)
			log_dom(LOG_WARNING, o->domains[i].name, -1, 0, "release on exit failed: %s", err.msg);
	}
}

int
daemon_set_topology(struct daemon *d, const struct topo *t, struct llcd_err *err)
{
	struct policy_host h;

	if (host_from_config(&d->cfg, t, d->be.counters, &h, err) < 0)
		return -1;
	d->topo = t;
	d->host = h;
	agent_loop_set_host(d->loop, &h, 0);    /* the engine rebinds to t */
	if (d->be.set_topology)
		d->be.set_topology(HOOK(d), t);
	return 0;
}

static void read_online(char *buf, size_t len);

void
daemon_watch_cpus(struct daemon *d, bool on)
{
	d->watch_cpus = on;
	if (on)
		read_online(d->online, sizeof(d->online));
}

static void
read_online(char *buf, size_t len)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* CPU hotplug: when the online CPUs change, re-read the live host through
 * hwloc and re-place (adoption keeps what is still valid). */
static void
check_cpus(struct daemon *d)
{
	char now[sizeof(d->online)];
	struct llcd_err err;

	read_online(now, sizeof(now));
	if (d->online[0] == '\0' || strcmp(now, d->online) == 0) {
		snprintf(d->online, sizeof(d->online), "%s", now);
		return;
	}
	log_info("online CPUs changed from %s to %s: re-reading the host topology", d->online, now);
	snprintf(d->online, sizeof(d->online), "%s", now);
	struct topo *t = topo_load(NULL, &err);
	if (t == NULL || daemon_set_topology(d, t, &err) < 0) {
		log_warnx("topology: %s; keeping the previous one", err.msg);
		topo_free(t);
		return;
	}
	/* the previous re-read topology is no longer referenced once the
	 * engine rebinds in the next step; free it after that step */
	topo_free(d->owned_topo);
	d->owned_topo = t;
}

int
daemon_run(struct daemon *d)
{
	uint64_t period = (uint64_t)d->cfg.period_ms * 1000000ull, next = mono_ns();
	struct llcd_err err;

	while (!d->stop) {
		uint64_t now = mono_ns();
		if (d->reload) {
			char msg[512];
			d->reload = 0;
			do_reload(d, msg, sizeof(msg));
			period = (uint64_t)d->cfg.period_ms * 1000000ull;
		}
		if (now >= next) {
			if (d->be.handle_events && d->be.handle_events(HOOK(d), now, &err) < 0)
				log_warnx("%s: %s", d->be.name, err.msg);
			if (d->watch_cpus)
				check_cpus(d);
			if (daemon_step(d, now, &err) < 0)
				log_warnx("period: %s", err.msg);
			period = (uint64_t)d->cfg.period_ms * 1000000ull;
			next += period;
			if (next <= now)
				next = now + period;    /* never catch up in a burst */
			continue;
		}
		struct pollfd pfd[CONTROL_MAX_CLIENTS + 2];
		int n = d->ctl ? control_pollfds(d->ctl, pfd, CONTROL_MAX_CLIENTS + 1) : 0;
		int efd = d->be.event_fd ? d->be.event_fd(HOOK(d)) : -1;
		if (efd >= 0)
			pfd[n] = (struct pollfd){ .fd = efd, .events = POLLIN };
		int timeout = (int)((next - now) / 1000000ull) + 1;
		int rc = poll(pfd, (nfds_t)(n + (efd >= 0)), timeout);
		if (rc < 0 && errno != EINTR) {
			log_warn("poll");
			continue;
		}
		if (rc > 0) {
			if (efd >= 0 && (pfd[n].revents & POLLIN) && d->be.handle_events &&
			    d->be.handle_events(HOOK(d), mono_ns(), &err) < 0)
				log_warnx("%s: %s", d->be.name, err.msg);
			if (d->ctl)
				control_dispatch(d->ctl, pfd, n);
		}
	}
	if (d->cfg.release_on_exit)
		daemon_release_all(d);
	return 0;
}

void
daemon_print_plan(const struct daemon *d, FILE *f)
{
	const struct policy_plan *p = agent_loop_plan(d->loop);

	for (int i = 0; p && i < p->n; i++) {
		const struct policy_action *a = &p->actions[i];
		char cs[512];
		cpuset_format(&a->cpus, cs, sizeof(cs));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "action", json_object_new_string(policy_action_name(a->type)));
		json_object_object_add(o, "domain", json_object_new_string(domain_name(d, a->key)));
		json_object_object_add(o, "vcpu", json_object_new_int(a->vcpu));
		json_object_object_add(o, "cpus", json_object_new_string(cs));
		json_object_object_add(o, "reason", json_object_new_string(a->reason));
		fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
}

/* --- answers ---------------------------------------------------------------- */

static json_object *
jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static json_object *
jset(const struct cpuset *s)
{
	char buf[2048];

	if (cpuset_format(s, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(too long)");
	return json_object_new_string(buf);
}

static const char *
arg_str(const struct control_request *req, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(req->args, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool
arg_bool(const struct control_request *req, const char *key, bool def)
{
	json_object *v;

	if (!json_object_object_get_ex(req->args, key, &v))
		return def;
	return json_object_get_boolean(v);
}

/* Find the domain named by args.domain (name, or key in decimal). */
static int
find_domain(struct daemon *d, struct control_request *req, const struct policy_domain_in **out)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	const char *name = arg_str(req, "domain");

	if (name == NULL) {
		snprintf(req->error, sizeof(req->error), "this command needs a domain name");
		return CTL_E_INVAL;
	}
	for (int i = 0; o && i < o->ndomains; i++) {
		char key[32];
		snprintf(key, sizeof(key), "%llu", (unsigned long long)o->domains[i].key);
		if (!strcmp(o->domains[i].name, name) || !strcmp(key, name)) {
			*out = &o->domains[i];
			return CTL_OK;
		}
	}
	snprintf(req->error, sizeof(req->error), "no running domain '%.200s' (llcctl list shows the domains llcd sees)",
	    name);
	return CTL_E_NODOMAIN;
}

static int
obs_index(const struct daemon *d, const struct policy_domain_in *in)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	return (int)(in - o->domains);
}

static json_object *
topology_json(const struct daemon *d)
{
	const struct topo *t = d->topo;
	json_object *o = json_object_new_object(), *llcs = json_object_new_array(),
	            *nodes = json_object_new_array(), *pkgs = json_object_new_array();
	char sum[256];

	topo_summary(t, sum, sizeof(sum));
	json_object_object_add(o, "summary", jstr(sum));
	json_object_object_add(o, "source", jstr(t->desc));
	json_object_object_add(o, "smt", json_object_new_int(t->smt));
	json_object_object_add(o, "cpus", jset(&t->all));
	json_object_object_add(o, "reserved", jset(&d->host.reserved));
	json_object_object_add(o, "shared_pool", d->cfg.shared_pool[0] ? jset(&d->host.shared_pool) : jstr("dynamic"));
	for (int i = 0; i < topo_count(t, TOPO_PACKAGE); i++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "package", json_object_new_int(i));
		json_object_object_add(p, "cpus", jset(&topo_get(t, TOPO_PACKAGE, i)->cpus));
		json_object_array_add(pkgs, p);
	}
	for (int i = 0; i < topo_count(t, TOPO_NUMA); i++) {
		const struct topo_node *n = topo_get(t, TOPO_NUMA, i);
		json_object *p = json_object_new_object();
		json_object_object_add(p, "node", json_object_new_int(n->os_index));
		json_object_object_add(p, "cpus", jset(&n->cpus));
		json_object_object_add(p, "memory_bytes", json_object_new_int64((int64_t)n->size));
		json_object_array_add(nodes, p);
	}
	for (int i = 0; i < topo_count(t, TOPO_LLC); i++) {
		const struct topo_node *n = topo_get(t, TOPO_LLC, i);
		json_object *p = json_object_new_object();
		int ncores = 0;
		for (int c = 0; c < n->nchildren; c++)
			ncores += n->children[c]->type == TOPO_CORE;
		json_object_object_add(p, "llc", json_object_new_int(i));
		json_object_object_add(p, "cpus", jset(&n->cpus));
		json_object_object_add(p, "cores", json_object_new_int(ncores));
		json_object_object_add(p, "size_bytes", json_object_new_int64((int64_t)n->size));
		json_object_object_add(p, "numa_node", json_object_new_int(t->llc_numa[i] >= 0 ?
		    topo_get(t, TOPO_NUMA, t->llc_numa[i])->os_index : -1));
		json_object_object_add(p, "package", json_object_new_int(t->pu_pkg[cpuset_first(&n->cpus)]));
		json_object_array_add(llcs, p);
	}
	json_object_object_add(o, "packages", pkgs);
	json_object_object_add(o, "numa_nodes", nodes);
	json_object_object_add(o, "llcs", llcs);
	if (d->be.describe_host)
		d->be.describe_host(HOOK(d), o);
	return o;
}

/* LLCs in use: where the domain's vCPUs last ran. */
static json_object *
llcs_in_use(const struct daemon *d, const struct policy_domain_in *in)
{
	struct cpuset l;
	int v;

	cpuset_zero(&l);
	for (v = 0; v < in->nvcpus; v++) {
		int llc = topo_llc_of(d->topo, in->vcpus[v].last_cpu);
		if (llc >= 0)
			cpuset_set(&l, llc);
	}
	return jset(&l);
}

static void
domain_summary(struct daemon *d, const struct policy_domain_in *in, json_object *o)
{
	struct policy_domain_info info;
	bool known = policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0;
	const char *state = "unmanaged", *reason = "";

	if (is_released(d, in->key)) {
		reason = "released by llcctl release";
	} else if (!in->annotated) {
		reason = "no llc-policy annotation";
	} else if (in->annot.mode == POLICY_MODE_NONE) {
		reason = "mode none";
	} else if (known && info.refused) {
		state = "error";
		reason = info.reason;
	} else if (known && info.managed) {
		state = "managed";
	} else if (agent_loop_abandoned(d->loop, in->key)) {
		state = "error";
		reason = "a pin failed permanently; llcd stopped managing it (see the log)";
	}
	json_object_object_add(o, "name", jstr(in->name));
	json_object_object_add(o, "key", json_object_new_int64((int64_t)in->key));
	json_object_object_add(o, "vcpus", json_object_new_int(in->nvcpus));
	json_object_object_add(o, "annotated", json_object_new_boolean(in->annotated));
	json_object_object_add(o, "mode", jstr(in->annotated ? policy_mode_name(in->annot.mode) : "none"));
	json_object_object_add(o, "isolation", jstr(in->annotated ? policy_isolation_name(in->annot.isolation) : "none"));
	json_object_object_add(o, "topology", jstr(in->annotated ? policy_topology_name(in->annot.topology) : "keep"));
	json_object_object_add(o, "state", jstr(state));
	json_object_object_add(o, "reason", jstr(reason));
	json_object_object_add(o, "llcs", llcs_in_use(d, in));
	if (known)
		json_object_object_add(o, "allotment", jset(&info.allotment));
	if (d->be.describe) {
		d->be.describe(HOOK(d), in->key, o);
		/* a back-end's annotation error makes the domain an error */
		json_object *ae;
		if (json_object_object_get_ex(o, "annotation_error", &ae) && json_object_get_string_len(ae) > 0) {
			json_object_object_add(o, "state", jstr("error"));
			json_object_object_add(o, "reason", jstr(json_object_get_string(ae)));
		}
	}
}

static json_object *
groups_json(const struct policy_domain_info *info)
{
	json_object *a = json_object_new_array();

	for (int g = 0; g < info->ngroups; g++) {
		const struct policy_group_info *gi = &info->groups[g];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", jstr(gi->name));
		json_object_object_add(o, "rule", jstr(policy_group_rule_name(gi->rule)));
		json_object_object_add(o, "vcpus", jset(&gi->vcpus));
		json_object_object_add(o, "preferred_llc", json_object_new_int(gi->pref_llc));
		json_object_object_add(o, "occupancy", json_object_new_double(round(gi->pref_occ * 100) / 100));
		json_object_object_add(o, "best_llc", json_object_new_int(gi->best_llc));
		json_object_object_add(o, "best_occupancy", json_object_new_double(round(gi->best_occ * 100) / 100));
		json_object_object_add(o, "guarded", json_object_new_boolean(gi->guarded));
		json_object_object_add(o, "backed_off", json_object_new_boolean(gi->backed_off));
		json_object_object_add(o, "why", jstr(gi->why));
		json_object_array_add(a, o);
	}
	return a;
}

static int
h_list(struct daemon *d, struct control_request *req)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	json_object *arr = json_object_new_array();

	for (int i = 0; o && i < o->ndomains; i++) {
		json_object *e = json_object_new_object();
		domain_summary(d, &o->domains[i], e);
		json_object_array_add(arr, e);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "domains", arr);
	return CTL_OK;
}

static int
h_dominfo(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	req->reply = json_object_new_object();
	domain_summary(d, in, req->reply);
	json_object *g = json_object_new_object();
	const struct policy_guest_topo *gt = &in->guest;
	json_object_object_add(g, "sockets", json_object_new_int(gt->sockets));
	json_object_object_add(g, "dies", json_object_new_int(gt->dies));
	json_object_object_add(g, "clusters", json_object_new_int(gt->clusters));
	json_object_object_add(g, "cores", json_object_new_int(gt->cores));
	json_object_object_add(g, "threads", json_object_new_int(gt->threads));
	json_object_object_add(req->reply, "guest_topology", g);
	if (policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0) {
		json_object_object_add(req->reply, "groups", groups_json(&info));
		json_object_object_add(req->reply, "preferred_llc_switches", json_object_new_int64((int64_t)info.pref_switches));
		json_object_object_add(req->reply, "vcpu_moves", json_object_new_int64((int64_t)info.vcpu_moves));
	}
	return CTL_OK;
}

/* Guest position of vCPU v: libvirt numbers vCPUs socket, die, cluster,
 * core, thread (thread fastest). */
static void
guest_pos(const struct policy_guest_topo *g, int v, int pos[5])
{
	int th = g->threads > 0 ? g->threads : 1, co = g->cores > 0 ? g->cores : 1;
	int cl = g->clusters > 0 ? g->clusters : 1, di = g->dies > 0 ? g->dies : 1;

	pos[4] = v % th;
	v /= th;
	pos[3] = v % co;
	v /= co;
	pos[2] = v % cl;
	v /= cl;
	pos[1] = v % di;
	pos[0] = v / di;
}

static int
h_vcpuinfo(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);
	bool have_info;

	if (rc != CTL_OK)
		return rc;
	have_info = policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0;
	json_object *arr = json_object_new_array();
	for (int v = 0; v < in->nvcpus; v++) {
		const struct policy_vcpu_sample *s = &in->vcpus[v];
		json_object *o = json_object_new_object();
		int pos[5];
		guest_pos(&in->guest, v, pos);
		json_object_object_add(o, "vcpu", json_object_new_int(v));
		json_object_object_add(o, "tid", json_object_new_int(s->tid));
		json_object_object_add(o, "socket", json_object_new_int(pos[0]));
		json_object_object_add(o, "die", json_object_new_int(pos[1]));
		json_object_object_add(o, "cluster", json_object_new_int(pos[2]));
		json_object_object_add(o, "core", json_object_new_int(pos[3]));
		json_object_object_add(o, "thread", json_object_new_int(pos[4]));
		json_object_object_add(o, "pinned", jset(&s->pinned));
		json_object_object_add(o, "last_cpu", json_object_new_int(s->last_cpu));
		json_object_object_add(o, "llc", json_object_new_int(topo_llc_of(d->topo, s->last_cpu)));
		json_object_object_add(o, "util", json_object_new_double(
		    round((double)s->runtime_ns / (double)(d->cfg.period_ms * 1000000ull) * 1000) / 1000));
		const struct policy_group_info *gi = NULL;
		for (int g = 0; have_info && g < info.ngroups; g++)
			if (cpuset_isset(&info.groups[g].vcpus, v))
				gi = &info.groups[g];
		json_object_object_add(o, "group", gi ? jstr(gi->name) : NULL);
		json_object_object_add(o, "preferred_llc", json_object_new_int(gi ? gi->pref_llc : -1));
		json_object_object_add(o, "occupancy", json_object_new_double(gi ? round(gi->pref_occ * 100) / 100 : 0));
		json_object_array_add(arr, o);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "vcpus", arr);
	return CTL_OK;
}

static void
annot_json(const struct policy_annotation *a, json_object *o)
{
	json_object *t = json_object_new_object(), *g = json_object_new_array();

	json_object_object_add(o, "mode", jstr(policy_mode_name(a->mode)));
	json_object_object_add(o, "isolation", jstr(policy_isolation_name(a->isolation)));
	json_object_object_add(o, "topology", jstr(policy_topology_name(a->topology)));
	json_object_object_add(t, "aggr-tolerance", json_object_new_int(a->tune.aggr_tolerance));
	json_object_object_add(t, "overaggr-pct", a->tune.overaggr_pct ? json_object_new_int(a->tune.overaggr_pct) : jstr("auto"));
	json_object_object_add(t, "imb-pct", json_object_new_int(a->tune.imb_pct));
	json_object_object_add(t, "epoch-ms", a->tune.epoch_ms ? json_object_new_int(a->tune.epoch_ms) : jstr("auto"));
	json_object_object_add(t, "affinity-timeout", json_object_new_int(a->tune.affinity_timeout));
	json_object_object_add(t, "max-moves", json_object_new_int(a->tune.max_moves));
	json_object_object_add(t, "benefit-check", jstr(a->tune.benefit_check ? "on" : "off"));
	json_object_object_add(t, "holddown-s", json_object_new_int(a->tune.holddown_s));
	json_object_object_add(o, "tune", t);
	for (int i = 0; i < a->ngroups; i++) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "name", jstr(a->groups[i].name));
		json_object_object_add(e, "vcpus", jset(&a->groups[i].vcpus));
		json_object_array_add(g, e);
	}
	json_object_object_add(o, "groups", g);
}

static int
h_policy_get(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	int rc = find_domain(d, req, &in);
	struct llcd_err err;
	char *xml = NULL;

	if (rc != CTL_OK)
		return rc;
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	if (d->be.get_annotation) {
		if (d->be.get_annotation(HOOK(d), in->key, &xml, &err) < 0) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_INTERNAL;
		}
		json_object_object_add(req->reply, "xml", xml ? jstr(xml) : NULL);
		free(xml);
	}
	json_object_object_add(req->reply, "annotated", json_object_new_boolean(in->annotated));
	if (in->annotated)
		annot_json(&in->annot, req->reply);
	return CTL_OK;
}

static int
h_policy_set(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_annotation a;
	struct llcd_err err;
	const char *v;
	char *cur = NULL, out[65536];
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (d->be.set_annotation == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end cannot write annotations", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	if ((v = arg_str(req, "xml")) != NULL) {
		if (annot_parse_metadata(v, strlen(v), in->nvcpus, &a, &err) < 0 &&
		    annot_parse(v, strlen(v), in->nvcpus, &a, &err) < 0) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_INVAL;
		}
	} else {
		/* start from the domain's current annotation */
		policy_annotation_defaults(&a);
		if (d->be.get_annotation && d->be.get_annotation(HOOK(d), in->key, &cur, &err) == 0 && cur &&
		    annot_parse_metadata(cur, strlen(cur), in->nvcpus, &a, &err) < 0)
			policy_annotation_defaults(&a);
		free(cur);
		struct { const char *key; const char *const *names; int n; int *field; } sel[] = {
			{ "mode", (const char *const[]){ "none", "static", "aggregate", "spread" }, 4, (int *)&a.mode },
			{ "isolation", (const char *const[]){ "none", "core" }, 2, (int *)&a.isolation },
			{ "topology", (const char *const[]){ "keep", "match" }, 2, (int *)&a.topology },
		};
		for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
			if ((v = arg_str(req, sel[i].key)) == NULL)
				continue;
			int k;
			for (k = 0; k < sel[i].n && strcmp(v, sel[i].names[k]); k++)
				;
			if (k == sel[i].n) {
				char allowed[128] = "";
				for (int j = 0; j < sel[i].n; j++)
					snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
					    j ? ", " : "", sel[i].names[j]);
				snprintf(req->error, sizeof(req->error), "--%s: '%.64s' is not one of %s", sel[i].key, v, allowed);
				return CTL_E_INVAL;
			}
			/* enum values follow the order of names */
			static const int modes[] = { POLICY_MODE_NONE, POLICY_MODE_STATIC, POLICY_MODE_AGGREGATE, POLICY_MODE_SPREAD };
			static const int isos[] = { POLICY_ISO_NONE, POLICY_ISO_CORE };
			static const int topos[] = { POLICY_TOPO_KEEP, POLICY_TOPO_MATCH };
			*sel[i].field = i == 0 ? modes[k] : i == 1 ? isos[k] : topos[k];
		}
	}
	if (annot_check(&a, in->nvcpus, &err) < 0 || annot_format_metadata(&a, out, sizeof(out), &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INVAL;
	}
	bool live = arg_bool(req, "live", false), config = arg_bool(req, "config", false);
	if (!live && !config)
		live = config = true;
	if (d->be.set_annotation(HOOK(d), in->key, out, live, config, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INTERNAL;
	}
	unrelease(d, in->key);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "xml", jstr(out));
	json_object_object_add(req->reply, "live", json_object_new_boolean(live));
	json_object_object_add(req->reply, "config", json_object_new_boolean(config));
	return CTL_OK;
}

static int
h_hot(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	json_object *reps = json_object_new_array();
	for (int r = 0; r < in->nreports; r++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", jstr(in->reports[r].name));
		json_object_object_add(o, "pid", json_object_new_int(in->reports[r].pid));
		json_object_object_add(o, "vcpus", jset(&in->reports[r].vcpus));
		json_object_array_add(reps, o);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "reports", reps);
	if (policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0)
		json_object_object_add(req->reply, "groups", groups_json(&info));
	return CTL_OK;
}

static int
h_map(struct daemon *d, struct control_request *req)
{
	const struct topo *t = d->topo;
	const struct agent_obs *o = agent_loop_obs(d->loop);
	json_object *llcs = json_object_new_array(), *doms = json_object_new_array();

	for (int i = 0; o && i < o->ndomains; i++) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "name", jstr(o->domains[i].name));
		json_object_object_add(e, "isolated", json_object_new_boolean(o->domains[i].annotated &&
		    o->domains[i].annot.isolation == POLICY_ISO_CORE && o->domains[i].annot.mode != POLICY_MODE_NONE));
		json_object_array_add(doms, e);
	}
	for (int l = 0; l < topo_count(t, TOPO_LLC); l++) {
		const struct topo_node *ln = topo_get(t, TOPO_LLC, l);
		json_object *lo = json_object_new_object(), *cores = json_object_new_array();
		json_object_object_add(lo, "llc", json_object_new_int(l));
		for (int c = 0; c < ln->nchildren; c++) {
			const struct topo_node *cn = ln->children[c];
			json_object *co = json_object_new_object(), *pus = json_object_new_array();
			int cpu;
			json_object_object_add(co, "core", json_object_new_int(cn->index));
			CPUSET_FOREACH(cpu, &cn->cpus) {
				json_object *po = json_object_new_object(), *vs = json_object_new_array();
				json_object_object_add(po, "pu", json_object_new_int(cpu));
				json_object_object_add(po, "reserved", json_object_new_boolean(cpuset_isset(&d->host.reserved, cpu)));
				for (int i = 0; o && i < o->ndomains; i++)
					for (int v = 0; v < o->domains[i].nvcpus; v++)
						if (o->domains[i].vcpus[v].last_cpu == cpu) {
							json_object *x = json_object_new_object();
							json_object_object_add(x, "domain", json_object_new_int(i));
							json_object_object_add(x, "vcpu", json_object_new_int(v));
							json_object_object_add(x, "util", json_object_new_double(round(
							    (double)o->domains[i].vcpus[v].runtime_ns /
							    (double)(d->cfg.period_ms * 1000000ull) * 100) / 100));
							json_object_array_add(vs, x);
						}
				json_object_object_add(po, "vcpus", vs);
				json_object_array_add(pus, po);
			}
			json_object_object_add(co, "pus", pus);
			json_object_array_add(cores, co);
		}
		json_object_object_add(lo, "cores", cores);
		json_object_array_add(llcs, lo);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "domains", doms);
	json_object_object_add(req->reply, "llcs", llcs);
	return CTL_OK;
}

static void
step_percentiles(const struct daemon *d, uint64_t *p50, uint64_t *p99)
{
	int n = d->nstep < STEP_HIST ? d->nstep : STEP_HIST;
	uint64_t v[STEP_HIST];

	*p50 = *p99 = 0;
	if (n == 0)
		return;
	memcpy(v, d->step_ns, sizeof(uint64_t) * (size_t)n);
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
}

static void
stats_fill(struct daemon *d, json_object *o)
{
	const struct agent_obs *ob = agent_loop_obs(d->loop);
	struct policy_stats ps;
	int managed = 0;
	uint64_t p50, p99;

	policy_stats(agent_loop_policy(d->loop), &ps);
	for (int i = 0; ob && i < ob->ndomains; i++) {
		struct policy_domain_info info;
		if (policy_domain_info(agent_loop_policy(d->loop), ob->domains[i].key, &info) == 0 && info.managed)
			managed++;
	}
	step_percentiles(d, &p50, &p99);
	json_object_object_add(o, "backend", jstr(d->be.name));
	json_object_object_add(o, "uptime_s", json_object_new_double(round((double)(d->now_ns - d->start_ns) / 1e7) / 100));
	json_object_object_add(o, "periods", json_object_new_int64((int64_t)d->periods));
	json_object_object_add(o, "period_ms", json_object_new_int(d->cfg.period_ms));
	json_object_object_add(o, "domains", json_object_new_int(ob ? ob->ndomains : 0));
	json_object_object_add(o, "domains_managed", json_object_new_int(managed));
	json_object_object_add(o, "pins", json_object_new_int64((int64_t)d->actions[POLICY_ACT_PIN_VCPU]));
	json_object_object_add(o, "emulator_pins", json_object_new_int64((int64_t)d->actions[POLICY_ACT_PIN_EMULATOR]));
	json_object_object_add(o, "releases", json_object_new_int64((int64_t)d->actions[POLICY_ACT_RELEASE]));
	json_object_object_add(o, "refusals", json_object_new_int64((int64_t)d->actions[POLICY_ACT_REFUSE]));
	json_object_object_add(o, "preference_switches", json_object_new_int64((int64_t)ps.pref_switches));
	json_object_object_add(o, "backoffs", json_object_new_int64((int64_t)ps.backoffs));
	json_object_object_add(o, "errors_transient", json_object_new_int64((int64_t)d->results[AGENT_TRANSIENT]));
	json_object_object_add(o, "errors_gone", json_object_new_int64((int64_t)d->results[AGENT_GONE]));
	json_object_object_add(o, "errors_permanent", json_object_new_int64((int64_t)d->results[AGENT_PERMANENT]));
	json_object_object_add(o, "period_errors", json_object_new_int64((int64_t)d->errors));
	json_object_object_add(o, "policy_step_us_p50", json_object_new_double(round((double)p50 / 100) / 10));
	json_object_object_add(o, "policy_step_us_p99", json_object_new_double(round((double)p99 / 100) / 10));
	json_object_object_add(o, "policy_step_us_max", json_object_new_double(round((double)d->step_max_ns / 100) / 10));
	if (d->ctl) {
		struct control_stats cs;
		control_get_stats(d->ctl, &cs);
		json_object_object_add(o, "control_requests", json_object_new_int64((int64_t)cs.requests));
		json_object_object_add(o, "control_refused", json_object_new_int64((int64_t)cs.refused));
		json_object_object_add(o, "control_malformed", json_object_new_int64((int64_t)cs.malformed));
		json_object_object_add(o, "control_dropped_clients", json_object_new_int64((int64_t)cs.dropped_clients));
	}
}

/* `llcctl metrics` and the HTTP endpoint: one renderer (metrics.h). */
static char *
metrics_text(struct daemon *d)
{
	json_object *st = json_object_new_object();
	char *text;

	stats_fill(d, st);
	text = metrics_render(st, &d->step_hist, LLCD_VERSION);
	json_object_put(st);
	return text;
}

static int
h_metrics(struct daemon *d, struct control_request *req)
{
	char *text = metrics_text(d);

	if (text == NULL) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "text", jstr(text));
	free(text);
	return CTL_OK;
}

static int
h_tune(struct daemon *d, struct control_request *req)
{
	static const char *const knobs[] = { "period-ms", "max-moves", "overcommit", "overcommit-isolated",
		"log-level", "counters", "default-mode", "default-isolation", "reserved-cpus", "shared-pool" };
	const char *k = arg_str(req, "knob"), *v = arg_str(req, "value");
	struct config c = d->cfg;
	struct llcd_err err;
	size_t i;

	if (k == NULL || v == NULL) {
		snprintf(req->error, sizeof(req->error), "tune needs a knob and a value");
		return CTL_E_INVAL;
	}
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]) && strcmp(k, knobs[i]); i++)
		;
	if (i == sizeof(knobs) / sizeof(knobs[0])) {
		snprintf(req->error, sizeof(req->error), "unknown knob '%.64s' (period-ms, max-moves, overcommit, "
		    "overcommit-isolated, log-level, counters, default-mode, default-isolation, reserved-cpus, shared-pool)", k);
		return CTL_E_INVAL;
	}
	if (config_set(&c, k, v, &err) < 0 || apply_config(d, &c, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INVAL;
	}
	log_info("tune %s %s (by uid %u)", k, v, (unsigned)req->uid);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "knob", jstr(k));
	json_object_object_add(req->reply, "value", jstr(v));
	return CTL_OK;
}

static int
h_release(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (!is_released(d, in->key)) {
		uint64_t *v = realloc(d->released, sizeof(*v) * (size_t)(d->nreleased + 1));
		if (v == NULL) {
			snprintf(req->error, sizeof(req->error), "out of memory");
			return CTL_E_INTERNAL;
		}
		d->released = v;
		d->released[d->nreleased++] = in->key;
	}
	log_dom(LOG_INFO, in->name, -1, 0, "released by uid %u: back to the default scheduler at the next period",
	    (unsigned)req->uid);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "released", json_object_new_boolean(true));
	(void)obs_index;
	return CTL_OK;
}

static json_object *
gtopo_json(const struct policy_guest_topo *g)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "sockets", json_object_new_int(g->sockets));
	json_object_object_add(o, "dies", json_object_new_int(g->dies));
	json_object_object_add(o, "clusters", json_object_new_int(g->clusters));
	json_object_object_add(o, "cores", json_object_new_int(g->cores));
	json_object_object_add(o, "threads", json_object_new_int(g->threads));
	return o;
}

/* The guest topology llcd recommends for a domain: from its placement when
 * the engine placed it, else from a dry placement beside the others. */
static int
recommend(struct daemon *d, const struct policy_domain_in *in, struct guesttopo_rec *rec,
          struct llcd_err *err)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	int n = in->nvcpus, rc = -1;
	int *slots = calloc((size_t)n, sizeof(int));
	struct cpuset *pins = calloc((size_t)n, sizeof(struct cpuset)), emu;
	struct policy_domain_in *others = calloc((size_t)o->ndomains + 1, sizeof(*others));
	int no = 0;

	if (!slots || !pins || !others) {
		llcd_err_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < o->ndomains; i++)
		if (o->domains[i].key != in->key)
			others[no++] = o->domains[i];
	if (guesttopo_dry_place(&d->host, in, others, no, slots, pins, &emu, err) < 0)
		goto out;
	rc = guesttopo_compute(d->topo, &(struct guesttopo_alloc){ n, slots, pins, &emu }, rec, err);
out:
	free(slots);
	free(pins);
	free(others);
	return rc;
}

static int
h_topology_domain(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct guesttopo_rec *rec = guesttopo_rec_new();
	struct llcd_err err;
	char text[8192];
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK || rec == NULL) {
		guesttopo_rec_free(rec);
		return rc != CTL_OK ? rc : CTL_E_INTERNAL;
	}
	if (recommend(d, in, rec, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		guesttopo_rec_free(rec);
		return CTL_E_INVAL;
	}
	guesttopo_format(d->topo, rec, text, sizeof(text));
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "current", gtopo_json(&in->guest));
	json_object *r = gtopo_json(&rec->topo), *reasons = json_object_new_array();
	json_object_object_add(r, "cache", jstr(rec->cache_mode));
	json_object_object_add(r, "numa_cells", json_object_new_int(rec->ncells));
	json_object_object_add(r, "nodeset", jset(&rec->nodeset));
	json_object_object_add(req->reply, "recommended", r);
	for (int i = 0; i < rec->nreasons; i++)
		json_object_array_add(reasons, jstr(rec->reasons[i]));
	json_object_object_add(req->reply, "reasons", reasons);
	json_object_object_add(req->reply, "text", jstr(text));
	bool same = in->guest.sockets == rec->topo.sockets && in->guest.dies == rec->topo.dies &&
	            in->guest.cores == rec->topo.cores && in->guest.threads == rec->topo.threads;
	json_object_object_add(req->reply, "matches", json_object_new_boolean(same));
	guesttopo_rec_free(rec);
	return CTL_OK;
}

static int
h_topology_apply(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct guesttopo_rec *rec = NULL;
	struct llcd_err err;
	char *xml = NULL, *out = NULL, *diff = NULL;
	size_t outlen;
	bool dry = arg_bool(req, "dry_run", false);
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (d->be.get_xml == NULL || d->be.define_xml == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end has no domain XML to rewrite", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	rc = CTL_E_INTERNAL;
	if ((rec = guesttopo_rec_new()) == NULL || recommend(d, in, rec, &err) < 0 ||
	    d->be.get_xml(HOOK(d), in->key, true, &xml, &err) < 0 ||
	    guestxml_apply(xml, strlen(xml), rec, GUESTXML_ALL, &out, &outlen, &err) < 0 ||
	    guestxml_diff(xml, strlen(xml), out, outlen, "current", "llcd", &diff, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		goto done;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "diff", jstr(diff));
	bool running = d->be.is_running ? d->be.is_running(HOOK(d), in->key) : true;
	if (!dry && *diff && d->be.define_xml(HOOK(d), out, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		json_object_put(req->reply);
		req->reply = NULL;
		goto done;
	}
	json_object_object_add(req->reply, "applied", json_object_new_boolean(!dry && *diff));
	json_object_object_add(req->reply, "message", jstr(dry ? "dry run: nothing written" : !*diff ?
	    "the persistent definition already has this topology" : running ?
	    "written to the persistent definition; it takes effect at the next boot (the running guest keeps its topology)" :
	    "written to the persistent definition"));
	rc = CTL_OK;
done:
	guesttopo_rec_free(rec);
	free(xml);
	free(out);
	free(diff);
	return rc;
}

static int
h_check(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct guesttopo_check *c = guesttopo_check_new();
	struct cpuset *pins;
	struct llcd_err err;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK || c == NULL) {
		guesttopo_check_free(c);
		return rc != CTL_OK ? rc : CTL_E_INTERNAL;
	}
	pins = calloc((size_t)in->nvcpus, sizeof(*pins));
	for (int v = 0; pins && v < in->nvcpus; v++)
		pins[v] = in->vcpus[v].pinned;
	if (pins == NULL || guesttopo_check(d->topo, &in->guest, in->nvcpus, pins, 64, c, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", pins ? err.msg : "out of memory");
		free(pins);
		guesttopo_check_free(c);
		return CTL_E_INVAL;
	}
	free(pins);
	json_object *arr = json_object_new_array();
	for (int i = 0; i < c->n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "kind", jstr(guesttopo_issue_name(c->issues[i].kind)));
		json_object_object_add(o, "first_vcpu", json_object_new_int(c->issues[i].first_vcpu));
		json_object_object_add(o, "nvcpus", json_object_new_int(c->issues[i].nvcpus));
		json_object_object_add(o, "message", jstr(c->issues[i].msg));
		json_object_array_add(arr, o);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "guest_topology", gtopo_json(&in->guest));
	json_object_object_add(req->reply, "issues", arr);
	json_object_object_add(req->reply, "total", json_object_new_int(c->total));
	json_object_object_add(req->reply, "notes", json_object_new_int(c->notes));
	json_object_object_add(req->reply, "agree", json_object_new_boolean(c->total == c->notes));
	guesttopo_check_free(c);
	return CTL_OK;
}

static int
h_guest_channel(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct llcd_err err;
	char path[512];
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (!arg_bool(req, "add", false)) {
		snprintf(req->error, sizeof(req->error), "guest-channel needs --add");
		return CTL_E_INVAL;
	}
	if (d->be.add_guest_channel == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end has no guest channels (its guest helper is "
		    "simulated)", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	/* the persistent definition only: hot-plugging a virtio-serial
	 * channel needs a controller the guest may not have; the channel
	 * comes with the next start */
	bool running = false;
	if (d->be.add_guest_channel(HOOK(d), in->key, running, path, sizeof(path), &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INTERNAL;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "socket", jstr(path));
	json_object_object_add(req->reply, "live", json_object_new_boolean(running));
	return CTL_OK;
}

int
daemon_handle(void *ctx, struct control_request *req)
{
	struct daemon *d = ctx;

	switch (req->type) {
	case CTL_PING:
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "version", jstr(LLCD_VERSION));
		json_object_object_add(req->reply, "protocol", json_object_new_int(CTL_VERSION));
		json_object_object_add(req->reply, "backend", jstr(d->be.name));
		return CTL_OK;
	case CTL_TOPOLOGY:
		if (arg_str(req, "domain"))
			return h_topology_domain(d, req);
		req->reply = topology_json(d);
		return CTL_OK;
	case CTL_LIST: return h_list(d, req);
	case CTL_DOMINFO: return h_dominfo(d, req);
	case CTL_VCPUINFO: return h_vcpuinfo(d, req);
	case CTL_POLICY_GET: return h_policy_get(d, req);
	case CTL_POLICY_SET: return h_policy_set(d, req);
	case CTL_HOT: return h_hot(d, req);
	case CTL_MAP: return h_map(d, req);
	case CTL_EVENTS: return CTL_OK;
	case CTL_STATS:
		req->reply = json_object_new_object();
		stats_fill(d, req->reply);
		return CTL_OK;
	case CTL_METRICS: return h_metrics(d, req);
	case CTL_TUNE: return h_tune(d, req);
	case CTL_RELOAD: {
		char msg[512];
		int rc = do_reload(d, msg, sizeof(msg));
		if (rc != CTL_OK) {
			snprintf(req->error, sizeof(req->error), "%s", msg);
			return rc;
		}
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "message", jstr(msg));
		return CTL_OK;
	}
	case CTL_RELEASE: return h_release(d, req);
	case CTL_CHECK: return h_check(d, req);
	case CTL_TOPOLOGY_APPLY: return h_topology_apply(d, req);
	case CTL_GUEST_CHANNEL: return h_guest_channel(d, req);
	}
	snprintf(req->error, sizeof(req->error), "unknown request");
	return CTL_E_UNKNOWN;
}
