// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon.c - llcd's core: the loop, the control socket, reload and CPU
 * hotplug. The answers to llcctl's requests are in handlers.c. */
#include "daemon.h"

#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctl.h"
#include "daemon_int.h"
#include "fileio.h"
#include "httpd.h"
#include "log.h"
#include "safefile.h"
#include "topo_hwloc.h"

/* the counters are indexed by the enums */
_Static_assert(sizeof(((struct daemon *)0)->actions) / sizeof(uint64_t) == POLICY_ACT_COUNT,
    "actions[] has one counter per policy action type");
_Static_assert(sizeof(((struct daemon *)0)->results) / sizeof(uint64_t) == AGENT_RESULT_COUNT,
    "results[] has one counter per apply result");

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
	h->counters = c->counters == AGENT_COUNTERS_ON || (c->counters == AGENT_COUNTERS_AUTO && counters);
	h->act_unjudged = c->unjudged_groups == CONFIG_UNJUDGED_ACT;
	return 0;
}

/* --- the loop's watcher: default mode, released domains, events --------- */

bool
daemon_is_released(const struct daemon *d, uint64_t key)
{
	for (int i = 0; i < d->nreleased; i++)
		if (d->released[i].key == key)
			return true;
	return false;
}

/* The annotation XML as the back-end has it now (NULL: none, or no way to
 * read it: then nothing can end a release but llcctl policy). */
static char *
current_annotation(struct daemon *d, uint64_t key)
{
	struct llcd_err err;
	char *xml = NULL;

	if (d->be.query->get_annotation == NULL || d->be.query->get_annotation(d->be.ctx, key, &xml, &err) < 0)
		return NULL;
	return xml;
}

int
daemon_release(struct daemon *d, const struct policy_domain_in *in)
{
	if (daemon_is_released(d, in->key))
		return 0;
	struct daemon_released *v = realloc(d->released, sizeof(*v) * (size_t)(d->nreleased + 1));
	if (v == NULL)
		return -1;
	d->released = v;
	v[d->nreleased].key = in->key;
	v[d->nreleased].xml = current_annotation(d, in->key);
	d->nreleased++;
	return 0;
}

void
daemon_unrelease(struct daemon *d, uint64_t key)
{
	for (int i = 0; i < d->nreleased; i++)
		if (d->released[i].key == key) {
			free(d->released[i].xml);
			d->released[i--] = d->released[--d->nreleased];
		}
}

/* A released domain whose annotation is not the one it had when released
 * was annotated anew (virsh metadata, an orchestrator): llcd manages it
 * again, as docs/llcctl.md promises. The back-end is asked for the XML of
 * released domains only (a libvirt call each per period: few domains). */
static bool
still_released(struct daemon *d, const struct policy_domain_in *in)
{
	for (int i = 0; i < d->nreleased; i++) {
		struct daemon_released *r = &d->released[i];
		if (r->key != in->key)
			continue;
		char *now = current_annotation(d, in->key);
		bool same = (now == NULL && r->xml == NULL) || (now && r->xml && strcmp(now, r->xml) == 0);
		free(now);
		if (same)
			return true;
		log_dom(LOG_INFO, in->name, -1, 0, "released domain: its llc-policy annotation changed; managed again");
		daemon_unrelease(d, in->key);
		return false;
	}
	return false;
}

static void
watch_observed(void *arg, struct agent_obs *obs)
{
	struct daemon *d = arg;

	for (int i = 0; i < obs->ndomains; i++) {
		struct policy_domain_in *in = &obs->domains[i];
		if (still_released(d, in)) {
			in->annotated = false;
			continue;
		}
		if (!in->annotated && d->cfg.default_mode != POLICY_MODE_NONE) {
			in->annotated = true;
			policy_annotation_defaults(&in->annot);
			in->annot.mode = d->cfg.default_mode;
			in->annot.isolation = d->cfg.default_isolation;
		}
	}
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

static void
watch_applied(void *arg, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct daemon *d = arg;

	if ((int)a->type >= 0 && (int)a->type < POLICY_ACT_COUNT)
		d->actions[a->type]++;
	if ((int)r >= 0 && (int)r < AGENT_RESULT_COUNT)
		d->results[r]++;
	if (a->type == POLICY_ACT_REFUSE || a->type == POLICY_ACT_PREFER || a->type == POLICY_ACT_BACKOFF)
		log_dom(LOG_INFO, domain_name(d, a->key), a->vcpu, 0, "%s: %s", policy_action_name(a->type), a->reason);
	else if (r == AGENT_OK)
		log_dom(LOG_DEBUG, domain_name(d, a->key), a->vcpu, 0, "%s: %s", policy_action_name(a->type), a->reason);
	broadcast(d, a, r, msg);
}

static void
watch_reported(void *arg, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct daemon *d = arg;

	log_dom(r == AGENT_TRANSIENT ? LOG_INFO : LOG_WARNING, domain_name(d, a->key), a->vcpu, 0,
	    "%s failed (%s): %s", policy_action_name(a->type), agent_result_name(r), msg);
}

/* --- policy-rule ------------------------------------------------------------ */

/* Hand the rules s (the daemon's from now on) to the back-end. */
static void
take_rules(struct daemon *d, struct policyrule_set *s)
{
	if (s->n > 0 || (d->rules && d->rules->n > 0))
		log_info("%d policy-rule%s for domains without an llc-policy annotation", s->n, s->n == 1 ? "" : "s");
	if (d->be.hooks->set_rules != NULL)
		d->be.hooks->set_rules(d->be.ctx, s);
	else if (s->n > 0)
		log_warnx("policy-rule: the %s back-end does not match rules; %d rule%s ignored", d->be.name,
		    s->n, s->n == 1 ? "" : "s");
	policyrule_set_free(d->rules);
	d->rules = s;
}

/* --- lifecycle ------------------------------------------------------------- */

/* a back-end without the optional interfaces */
static const struct agent_query no_query;
static const struct daemon_hooks no_hooks;

struct daemon *
daemon_new(const struct config *cfg, const char *config_path, const struct topo *topo,
           const struct daemon_backend *be, struct llcd_err *err)
{
	struct daemon *d;

	/* allocations of 256 KiB and more (replies, a first plan, the
	 * observation's slots) are mapped and unmapped whole: glibc's default
	 * threshold rises to the largest freed one (up to 32 MiB), after
	 * which such buffers stay in the heap when freed; and pages of a
	 * mapping never written are not resident */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	if (config_path)
		snprintf(d->config_path, sizeof(d->config_path), "%s", config_path);
	d->topo = topo;
	d->be = *be;
	if (d->be.query == NULL)
		d->be.query = &no_query;
	if (d->be.hooks == NULL)
		d->be.hooks = &no_hooks;
	if (d->be.name == NULL)
		d->be.name = be->ops->name;
	if (host_from_config(cfg, topo, backend_counters(be), &d->host, err) < 0) {
		free(d);
		return NULL;
	}
	struct policyrule_set *rules = config_rules(cfg, err);
	if (rules == NULL) {
		free(d);
		return NULL;
	}
	d->loop = agent_loop_new(be->ops, be->ops_ctx, &d->host, (uint64_t)cfg->period_ms * 1000000ull, err);
	if (d->loop == NULL) {
		policyrule_set_free(rules);
		free(d);
		return NULL;
	}
	agent_loop_set_watch(d->loop, &(struct agent_loop_watch){ .observed = watch_observed,
	    .applied = watch_applied, .reported = watch_reported, .arg = d });
	take_rules(d, rules);
	d->start_ns = d->now_ns = llcd_mono_ns();
	return d;
}

void
daemon_free(struct daemon *d)
{
	if (d == NULL)
		return;
	daemon_recommend_free(d);       /* the worker reads topologies: first */
	httpd_free(d->httpd);
	control_free(d->ctl);
	agent_loop_free(d->loop);
	topo_free(d->cpus.owned_topo);
	policyrule_set_free(d->rules);
	for (int i = 0; i < d->cpus.nretired; i++)
		topo_free(d->cpus.retired[i]);
	for (int i = 0; i < d->nreleased; i++)
		free(d->released[i].xml);
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

/* The loop's side of the metrics endpoint: one rendering per period. */
static void
publish_metrics(struct daemon *d)
{
	char *text;

	if (d->httpd == NULL || (text = daemon_metrics_text(d)) == NULL)
		return;
	httpd_publish(d->httpd, text, llcd_mono_ns());
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

/* Free the replaced topologies the engine no longer refers to. */
static void
free_retired(struct daemon *d)
{
	const struct topo *bound = policy_state_topo(agent_loop_policy(d->loop));

	for (int i = 0; i < d->cpus.nretired; i++)
		if (d->cpus.retired[i] != bound && !recommend_uses_topo(d->rec.worker, d->cpus.retired[i])) {
			topo_free(d->cpus.retired[i]);
			d->cpus.retired[i--] = d->cpus.retired[--d->cpus.nretired];
		}
}

#define DAEMON_BIG_PLAN 4096         /* actions: 3.3 MB of plan */

int
daemon_step(struct daemon *d, uint64_t now_ns, struct llcd_err *err)
{
	struct agent_step_stats st;

	uint64_t t0 = llcd_mono_ns(), c0 = llcd_thread_cpu_ns();
	d->now_ns = now_ns;
	if (d->be.hooks->tick)
		d->be.hooks->tick(d->be.ctx, now_ns);
	int rc = agent_loop_step(d->loop, now_ns, &st, err);
	/* the period after a big plan (the first, which pins every vCPU)
	 * shrank its room (policy_plan_clear): the freed memory goes back */
	if (d->cost.big_plan)
		malloc_trim(0);
	d->cost.big_plan = rc == 0 && st.actions > DAEMON_BIG_PLAN;
	d->cost.period_cpu_ns[d->cost.nperiod % STEP_HIST] = llcd_thread_cpu_ns() - c0;
	d->cost.period_ns[d->cost.nperiod++ % STEP_HIST] = llcd_mono_ns() - t0;
	d->obs_gen++;
	free_retired(d);
	log_ratelimit_flush(llcd_mono_ns());    /* the counts of suppressed messages */
	if (rc < 0) {
		d->errors++;
		return -1;
	}
	d->periods++;
	d->iso.held += (uint64_t)st.held;
	d->iso.overlaps = st.isolation_overlaps;
	/* the plan's order keeps isolation between pins; an overlap left
	 * after the period's pins is a pin that failed, one changed outside
	 * llcd or a domain just started: say so in its first period, and when
	 * it is over */
	if (st.isolation_overlaps > 0) {
		d->iso.overlap_periods++;
		if (d->iso.streak == 0)
			log_warnx("isolation: %d vCPU thread%s may run on cores of isolated domains after this period's "
			    "pins (%s): a pin failed or was changed outside llcd, see `llcctl events`; llcd narrows "
			    "them again next period", st.isolation_overlaps, st.isolation_overlaps == 1 ? "" : "s",
			    st.overlap);
	} else if (d->iso.streak > 0) {
		log_info("isolation: holds again after %d period%s with an overlap", d->iso.streak,
		    d->iso.streak == 1 ? "" : "s");
	}
	d->iso.streak = st.isolation_overlaps > 0 ? d->iso.streak + 1 : 0;
	d->cost.step_ns[d->cost.nstep++ % STEP_HIST] = st.policy_wall_ns;
	if (st.policy_wall_ns > d->cost.step_max_ns)
		d->cost.step_max_ns = st.policy_wall_ns;
	metrics_hist_observe(&d->cost.step_hist, st.policy_wall_ns);
	publish_metrics(d);
	return 0;
}

void
daemon_set_period_hook(struct daemon *d, void (*fn)(void *arg), void *arg)
{
	d->period_hook = fn;
	d->period_hook_arg = arg;
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

int
daemon_apply_config(struct daemon *d, const struct config *c, struct llcd_err *err)
{
	struct policy_host h;
	const struct config_directive *rd = config_directive("policy-rule");
	struct policyrule_set *rules = NULL;

	if (host_from_config(c, d->topo, backend_counters(&d->be), &h, err) < 0)
		return -1;
	if (!config_same(c, &d->cfg, rd) && (rules = config_rules(c, err)) == NULL)
		return -1;
	if (relisten_metrics(d, c->metrics_listen, err) < 0) {
		policyrule_set_free(rules);
		return -1;
	}
	for (const struct config_directive *dir = config_directives; dir->name; dir++)
		if (dir->flags & CONFIG_RELOAD)
			config_copy(&d->cfg, c, dir);
	if (rules != NULL)
		take_rules(d, rules);
	log_setverbose(c->log_level);
	d->host = h;
	d->obs_gen++;
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

int
daemon_read_tunes(const char *path, char kv[][2][CONFIG_PATH_MAX], int max)
{
	struct llcd_err err;
	char *text, *save = NULL;
	int n = 0;

	/* root's file in the state directory: not through a symbolic link,
	 * not in a directory others may write (safefile.h) */
	if (path[0] == '\0')
		return 0;
	if (safefile_read_path(path, (size_t)(DAEMON_MAX_TUNES + 2) * (2 * CONFIG_PATH_MAX + 2), &text, NULL,
	    &err) < 0) {
		if (errno != ENOENT)
			log_warnx("runtime tunes not read: %s", err.msg);
		return 0;
	}
	for (char *line = strtok_r(text, "\n", &save); line != NULL && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *k = line, *v;
		if (*k == '#' || *k == '\0' || (v = strchr(k, ' ')) == NULL)
			continue;
		*v++ = '\0';
		snprintf(kv[n][0], CONFIG_PATH_MAX, "%.*s", CONFIG_PATH_MAX - 1, k);
		snprintf(kv[n][1], CONFIG_PATH_MAX, "%.*s", CONFIG_PATH_MAX - 1, v);
		n++;
	}
	free(text);
	return n;
}

/* The tunes file: a new file of its own renamed over it (never the fixed
 * name tunes.tmp, opened through whatever was planted there), or removed. */
static int
write_tunes(const struct daemon *d, struct llcd_err *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (d->tune.file[0] == '\0')
		return 0;
	if (d->tune.n == 0) {
		const char *base;
		int dfd = safefile_opendir_of(d->tune.file, 0, &base, err);
		if (dfd < 0)
			return -1;
		rc = unlinkat(dfd, base, 0) < 0 && errno != ENOENT ? llcd_err_set(err, "%s: %s", d->tune.file,
		    strerror(errno)) : 0;
		close(dfd);
		return rc;
	}
	if ((f = open_memstream(&text, &len)) == NULL)
		return llcd_err_set(err, "out of memory");
	fprintf(f, "# llcctl tune settings kept across restarts until a reload or `llcctl tune --reset`\n");
	for (int i = 0; i < d->tune.n; i++)
		fprintf(f, "%s %s\n", d->tune.kv[i][0], d->tune.kv[i][1]);
	if (fclose(f) != 0) {
		free(text);
		return llcd_err_set(err, "out of memory");
	}
	rc = safefile_replace_path(d->tune.file, text, len, 0644, err);
	free(text);
	return rc;
}

int
daemon_keep_tune(struct daemon *d, const char *knob, const char *value, struct llcd_err *err)
{
	int i;

	for (i = 0; i < d->tune.n && strcmp(d->tune.kv[i][0], knob) != 0; i++)
		;
	if (i == d->tune.n) {
		if (d->tune.n == DAEMON_MAX_TUNES)
			return llcd_err_set(err, "more than %d runtime tunes", DAEMON_MAX_TUNES);
		d->tune.n++;
	}
	snprintf(d->tune.kv[i][0], CONFIG_PATH_MAX, "%s", knob);
	snprintf(d->tune.kv[i][1], CONFIG_PATH_MAX, "%s", value);
	return write_tunes(d, err);
}

void
daemon_drop_tunes(struct daemon *d)
{
	struct llcd_err err;

	d->tune.n = 0;
	if (write_tunes(d, &err) < 0)
		log_warnx("runtime tunes: %s", err.msg);
}

int
daemon_set_tunes_file(struct daemon *d, const char *path, struct llcd_err *err)
{
	char kv[DAEMON_MAX_TUNES][2][CONFIG_PATH_MAX];
	struct config c = d->cfg;
	int n;

	snprintf(d->tune.file, sizeof(d->tune.file), "%s", path);
	d->tune.n = 0;
	n = daemon_read_tunes(path, kv, DAEMON_MAX_TUNES);
	for (int i = 0; i < n; i++) {
		const struct config_directive *dir = config_directive(kv[i][0]);
		if (dir == NULL || !(dir->flags & CONFIG_TUNE) || config_set(&c, kv[i][0], kv[i][1], err) < 0) {
			log_warnx("%.200s: ignoring '%.64s %.64s': not a tune llcd accepts", path, kv[i][0], kv[i][1]);
			continue;
		}
		memcpy(d->tune.kv[d->tune.n], kv[i], sizeof(kv[i]));
		d->tune.n++;
	}
	if (d->tune.n > 0) {
		if (daemon_apply_config(d, &c, err) < 0) {
			d->tune.n = 0;
			return llcd_err_prefix(err, "%s", path);
		}
		log_info("kept %d runtime tune%s from the last run (%s; a reload or `llcctl tune --reset` drops them)",
		    d->tune.n, d->tune.n == 1 ? "" : "s", path);
	}
	return d->tune.n;
}

int
daemon_reload(struct daemon *d, char *msg, size_t len)
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
	if (rc < 0 || daemon_apply_config(d, &c, &err) < 0) {
		snprintf(msg, len, "reload failed, configuration unchanged: %.440s", err.msg);
		log_warnx("%s", msg);
		return CTL_E_INVAL;
	}
	/* settings that need a restart are reported, not silently ignored */
	const char *restart = NULL;
	for (const struct config_directive *dir = config_directives; restart == NULL && dir->name; dir++)
		if (!(dir->flags & CONFIG_RELOAD) && !config_same(&c, &d->cfg, dir))
			restart = dir->name;
	if (d->tune.n > 0) {
		log_info("reload drops %d runtime tune%s", d->tune.n, d->tune.n == 1 ? "" : "s");
		daemon_drop_tunes(d);
	}
	snprintf(msg, len, "reloaded %s%s%s", d->config_path, restart ? "; a change of '" : "",
	    restart ? restart : "");
	if (restart)
		snprintf(msg + strlen(msg), len - strlen(msg), "' takes effect at the next start");
	log_info("%s", msg);
	return CTL_OK;
}

int
daemon_reset_tunes(struct daemon *d, char *msg, size_t len)
{
	int n = d->tune.n, rc;

	if (d->config_path[0] != '\0') {
		rc = daemon_reload(d, msg, len);        /* drops the tunes */
	} else {
		struct config c;
		struct llcd_err err;
		config_defaults(&c);
		rc = 0;
		for (int i = 0; rc == 0 && i < d->noverrides; i++)
			rc = config_set(&c, d->overrides[i][0], d->overrides[i][1], &err);
		if (rc < 0 || daemon_apply_config(d, &c, &err) < 0) {
			snprintf(msg, len, "reset failed, configuration unchanged: %.440s", err.msg);
			return CTL_E_INVAL;
		}
		daemon_drop_tunes(d);
		snprintf(msg, len, "defaults restored");
		rc = CTL_OK;
	}
	if (rc == CTL_OK)
		snprintf(msg + strlen(msg), len - strlen(msg), "; %d runtime tune%s dropped", n, n == 1 ? "" : "s");
	return rc;
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
		if (d->be.ops->apply(d->be.ops_ctx, &a, &err) != AGENT_OK)
			log_dom(LOG_WARNING, o->domains[i].name, -1, 0, "release on exit failed: %s", err.msg);
	}
}

int
daemon_set_topology(struct daemon *d, const struct topo *t, struct llcd_err *err)
{
	struct policy_host h;

	if (host_from_config(&d->cfg, t, backend_counters(&d->be), &h, err) < 0)
		return -1;
	d->topo = t;
	d->host = h;
	d->topo_gen++;
	d->obs_gen++;
	agent_loop_set_host(d->loop, &h, 0);    /* the engine rebinds to t */
	if (d->be.hooks->set_topology)
		d->be.hooks->set_topology(d->be.ctx, t);
	return 0;
}

static void read_online(struct daemon *d);

void
daemon_watch_cpus(struct daemon *d, bool on)
{
	d->cpus.watch = on;
	if (on)
		read_online(d);
}

/* The online CPUs into d->cpus.online; have_online false when unreadable. */
static void
read_online(struct daemon *d)
{
	struct llcd_err e;

	d->cpus.have_online = llcd_online_cpus(NULL, &d->cpus.online, &e) == 0;
}

int
daemon_hotplug(struct daemon *d, struct topo *t, struct llcd_err *err)
{
	free_retired(d);        /* leaves at most the one the engine is bound to */
	if (daemon_set_topology(d, t, err) < 0) {
		topo_free(t);
		return -1;
	}
	/* the engine refers to the previous one until it rebinds in the next
	 * period that reaches it: free it then (daemon_step) */
	if (d->cpus.owned_topo != NULL)
		d->cpus.retired[d->cpus.nretired++] = d->cpus.owned_topo;
	d->cpus.owned_topo = t;
	return 0;
}

/* CPU hotplug: when the online CPUs change, re-read the live host through
 * hwloc and re-place (adoption keeps what is still valid). */
static void
check_cpus(struct daemon *d)
{
	struct cpuset was = d->cpus.online;
	bool had = d->cpus.have_online;
	char was_s[256], now_s[256];
	struct llcd_err err;

	read_online(d);
	if (!had || !d->cpus.have_online || cpuset_equal(&was, &d->cpus.online))
		return;
	cpuset_format(&was, was_s, sizeof(was_s));
	cpuset_format(&d->cpus.online, now_s, sizeof(now_s));
	log_info("online CPUs changed from %s to %s: re-reading the host topology", was_s, now_s);
	struct topo *t = topo_load(NULL, &err);
	if (t == NULL || daemon_hotplug(d, t, &err) < 0)
		log_warnx("topology: %s; keeping the previous one", err.msg);
}

int
daemon_run(struct daemon *d)
{
	uint64_t period = (uint64_t)d->cfg.period_ms * 1000000ull, next = llcd_mono_ns(), ended = 0;
	struct llcd_err err;

	while (!d->stop) {
		uint64_t now = llcd_mono_ns();
		if (d->reload) {
			char msg[512];
			d->reload = 0;
			daemon_reload(d, msg, sizeof(msg));
			period = (uint64_t)d->cfg.period_ms * 1000000ull;
		}
		if (now >= next) {
			/* late: since it was due, or since the previous period
			 * ended if that ran over (its own work is period_us) */
			d->cost.late_ns[d->cost.nlate++ % STEP_HIST] = now - (next > ended ? next : ended);
			if (d->be.hooks->handle_events && d->be.hooks->handle_events(d->be.ctx, now, &err) < 0)
				log_warnx("%s: %s", d->be.name, err.msg);
			if (d->cpus.watch)
				check_cpus(d);
			if (daemon_step(d, now, &err) < 0)
				log_warnx("period: %s", err.msg);
			if (d->period_hook)
				d->period_hook(d->period_hook_arg);
			period = (uint64_t)d->cfg.period_ms * 1000000ull;
			next += period;
			ended = now = llcd_mono_ns();
			if (next <= now)
				next = now + period;    /* never catch up in a burst */
			/* no continue: the control socket is served between any
			 * two periods, also when a period's work takes longer
			 * than the period (it used to run period after period
			 * then, and llcctl waited for ever) */
		}
		struct pollfd pfd[CONTROL_MAX_CLIENTS + 3];
		int n = d->ctl ? control_pollfds(d->ctl, pfd, CONTROL_MAX_CLIENTS + 1) : 0;
		int efd = d->be.hooks->event_fd ? d->be.hooks->event_fd(d->be.ctx) : -1;
		int nfd = n;
		if (efd >= 0)
			pfd[nfd++] = (struct pollfd){ .fd = efd, .events = POLLIN };
		int rk = d->rec.worker ? nfd : -1;     /* recommendations computed */
		if (rk >= 0)
			pfd[nfd++] = (struct pollfd){ .fd = recommend_fd(d->rec.worker), .events = POLLIN };
		int timeout = next > now ? (int)((next - now) / 1000000ull) + 1 : 0;
		if (d->ctl && control_pending(d->ctl))
			timeout = 0;    /* requests left over from a dispatch's budget */
		int rc = poll(pfd, (nfds_t)nfd, timeout);
		if (rc < 0 && errno != EINTR) {
			log_warn("poll");
			continue;
		}
		if (rc > 0 && efd >= 0 && (pfd[n].revents & POLLIN) && d->be.hooks->handle_events) {
			int started = d->be.hooks->handle_events(d->be.ctx, llcd_mono_ns(), &err);
			if (started < 0)
				log_warnx("%s: %s", d->be.name, err.msg);
			/* a domain started: place it from the event, not at the next
			 * period (at most one early period per 20 ms: an event
			 * within 20 ms of the last period brings the next one to
			 * 20 ms after it, never leaves it a whole period away) */
			else if (started > 0) {
				uint64_t t = llcd_mono_ns(), soon = d->now_ns + 20000000ull;
				if ((t > soon ? t : soon) < next)
					next = t > soon ? t : soon;
			}
		}
		if (rc > 0 && rk >= 0 && (pfd[rk].revents & POLLIN))
			daemon_recommend_ready(d);
		if (d->ctl) {
			if (rc <= 0)
				for (int k = 0; k < n; k++)
					pfd[k].revents = 0;
			control_dispatch(d->ctl, pfd, n);       /* also closes idle clients */
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
		/* the order (policy/order.c): its stage, the earlier actions
		 * (0-based lines) it waits for, whether the engine held it */
		json_object_object_add(o, "stage", json_object_new_string(policy_stage_name(a->stage)));
		int nd;
		const int *deps = policy_plan_deps(p, i, &nd);
		if (nd > 0) {
			json_object *after = json_object_new_array();
			for (int j = 0; j < nd; j++)
				json_object_array_add(after, json_object_new_int(deps[j]));
			json_object_object_add(o, "after", after);
		}
		if (a->held)
			json_object_object_add(o, "held", json_object_new_boolean(1));
		fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
}

