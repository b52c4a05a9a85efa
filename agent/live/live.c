// SPDX-License-Identifier: GPL-2.0-or-later
/* live.c - the live back-end's life cycle (live.h): configuration, the
 * libvirt connection, the probes said once at start, the ops table. */
#include "live_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgbound.h"
#include "fileio.h"
#include "kcas.h"
#include "log.h"
#include "perfcount.h"
#include "safefile.h"
#include "state.h"
#include "stats.h"
#include "procstat.h"
#include "tracer.h"

/* "allowed everywhere" = every CPU of the topology this host has online
 * (an hwloc XML or synthetic host may name CPUs it lacks). */
static void
set_everywhere(struct live *l)
{
	struct cpuset on;
	struct llcd_err e;

	l->everywhere = l->cfg.topo->all;
	if (llcd_online_cpus(NULL, &on, &e) == 0 && cpuset_intersects(&on, &l->cfg.topo->all))
		cpuset_and(&l->everywhere, &l->everywhere, &on);
}

void
live_set_topology(struct live *l, const struct topo *t)
{
	l->cfg.topo = t;
	set_everywhere(l);
	for (int i = 0; i < l->ndoms; i++)
		l->doms[i]->todo |= LDOM_TODO_AFFINITY;
}

void
live_config_none(struct live_config *cfg, const struct topo *t, enum agent_sampler sampler)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->uri = LIVE_URI_NONE;
	cfg->topo = t;
	cfg->state_dir = "";
	cfg->sampler = sampler;
}

struct live *
live_new(const struct live_config *cfg, struct llcd_err *err)
{
	struct live *l;
	const char *dir;
	struct llcd_err e;

	if (cfg == NULL || cfg->topo == NULL) {
		llcd_err_set(err, "live: no topology");
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	l->cfg = *cfg;
	l->epfd = -1;
	if ((l->sets = cpuset_pool_new()) == NULL) {
		llcd_err_set(err, "out of memory");
		free(l);
		return NULL;
	}
	cpuset_pool_defer(l->sets);
	l->evfd = -1;
	if ((l->ps = procstat_new(cfg->proc_root, err)) == NULL)
		goto fail;
	if ((l->cs = coresched_new(cfg->coresched_ops)) == NULL) {
		llcd_err_set(err, "out of memory");
		goto fail;
	}
	if (coresched_probe(l->cs) != CORESCHED_AVAIL_YES)
		log_info("core scheduling unavailable (%s): isolation=\"core\" relies on placement alone",
		    coresched_reason(l->cs));
	enum live_kcas kcas = live_kernel_cas(NULL, l->kcas_detail, sizeof(l->kcas_detail));
	l->kcas_state = live_kcas_name(kcas);
	set_everywhere(l);
	/* the cgroup cpusets that bound domains (bound.c): in a container
	 * with a cgroup namespace of its own, PID 1's first (before the
	 * libvirt event thread starts) */
	if (cfg->proc_root == NULL) {
		int ns = cgbound_enter_host_ns(NULL, &e);
		if (ns == 2)
			log_debug("%s", e.msg);
		else if (ns > 0)
			log_info("entered the host's cgroup namespace (PID 1's): cgroup paths of QEMU processes read as the host's");
		else if (ns < 0)
			log_warnx("%s; cgroup paths of QEMU processes outside llcd's cgroup namespace cannot be read", e.msg);
	}
	live_bound_open(l);
	if (kcas != LIVE_KCAS_ABSENT)
		log_info("%s", l->kcas_detail);
	/* instruction counters for the benefit check */
	if (cfg->counters == AGENT_COUNTERS_OFF) {
		snprintf(l->counters_reason, sizeof(l->counters_reason), "instruction counters off (counters off)");
	} else {
		l->counters = perfcount_available(l->counters_reason, sizeof(l->counters_reason));
		if (!l->counters && cfg->counters == AGENT_COUNTERS_ON)
			log_warnx("counters on: %s", l->counters_reason);
		else
			log_info("%s", l->counters_reason);
	}
	/* memory bandwidth per domain (resctrl), for the home check */
	live_mbm_open(l);
	/* the in-kernel tracer (sampler in llcd.conf); said once */
	if (cfg->sampler == AGENT_SAMPLER_PROC) {
		snprintf(l->sampler_reason, sizeof(l->sampler_reason), "sampler proc in llcd.conf");
		log_info("sampling vCPU threads from /proc (sampler proc)");
	} else if ((l->tracer = tracer_new(&e)) != NULL) {
		log_info("sampling vCPU threads with the in-kernel tracer (BPF: llcd_sample once a period, sched_waking)%s",
		    tracer_irq_check(l->tracer) ? "" : "; wakeups in interrupt context are not told apart");
	} else if (cfg->sampler == AGENT_SAMPLER_BPF) {
		llcd_err_set(err, "sampler bpf: %s", e.msg);
		goto fail;
	} else {
		snprintf(l->sampler_reason, sizeof(l->sampler_reason), "%s", e.msg);
		log_warnx("sampling vCPU threads from /proc, not with the in-kernel tracer: %s", e.msg);
	}

	dir = cfg->state_dir ? cfg->state_dir : LIVE_DEFAULT_STATE_DIR;
	if (dir[0] != '\0') {
		if (snprintf(l->state_path, sizeof(l->state_path), "%s/%s", dir, LIVE_STATE_FILE) >=
		    (int)sizeof(l->state_path)) {
			llcd_err_set(err, "state directory path too long: %s", dir);
			goto fail;
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			llcd_err_set(err, "state directory %s: %s", dir, strerror(errno));
			goto fail;
		}
		/* root writes the state file and the tunes there: a directory
		 * others may write (or one below such) is refused, with why */
		int sdfd = dir[0] == '/' ? safefile_opendir(dir, 0, &e) : -2;
		if (sdfd == -1) {
			llcd_err_set(err, "state-dir: %s", e.msg);
			goto fail;
		}
		if (sdfd >= 0)
			close(sdfd);
		l->state_enabled = true;
		live_state_open(l);
	}

	/* libvirt: the uri's daemon and those the socket glob finds */
	if (live_conns_open(l, err) < 0)
		goto fail;
	return l;
fail:
	live_free(l);
	return NULL;
}

void
live_free(struct live *l)
{
	struct llcd_err e;

	if (l == NULL)
		return;
	if (live_save_state(l, &e) < 0)
		log_warnx("state file: %s", e.msg);
	for (int i = 0; i < l->ndoms; i++)
		ldom_free(l->doms[i]);
	free(l->doms);
	live_mbm_close(l);      /* after the domains: they remove their groups */
	tracer_free(l->tracer);
	live_conns_close(l);
	if (l->evfd >= 0)
		close(l->evfd);
	procstat_free(l->ps);
	coresched_free(l->cs);
	live_state_close(l);
	live_bound_close(l);
	free(l->cpu_prev);
	free(l->cpu_cur);
	cpuset_pool_free(l->sets);
	free(l);
}

void
live_stats(const struct live *l, struct live_stats *st)
{
	*st = l->st;
}

bool
live_connected(const struct live *l)
{
	return live_conns_up(l) > 0;
}

bool
live_counters(const struct live *l)
{
	return l->counters;
}

/* ---- the discovery source (qmpback.c) --------------------------------- */

int
live_set_source(struct live *l, const struct live_source *src, struct llcd_err *err)
{
	if (l->evfd >= 0)
		close(l->evfd);
	l->evfd = -1;
	l->have_src = src != NULL;
	if (src == NULL)
		return 0;
	l->src = *src;
	/* one fd for the daemon to poll: libvirt's and the source's, when
	 * there are both */
	int sfd = src->event_fd ? src->event_fd(src->ctx) : -1, lfd = live_conns_event_fd(l);
	if (sfd < 0 || lfd < 0)
		return 0;
	struct epoll_event ev = { .events = EPOLLIN };
	if ((l->evfd = epoll_create1(EPOLL_CLOEXEC)) < 0 || epoll_ctl(l->evfd, EPOLL_CTL_ADD, sfd, &ev) < 0 ||
	    epoll_ctl(l->evfd, EPOLL_CTL_ADD, lfd, &ev) < 0) {
		llcd_err_set(err, "epoll: %s", strerror(errno));
		if (l->evfd >= 0)
			close(l->evfd);
		l->evfd = -1;
		l->have_src = false;
		return -1;
	}
	return 0;
}

int
live_event_fd(const struct live *l)
{
	int fd;

	if (l->evfd >= 0)
		return l->evfd;
	if ((fd = live_conns_event_fd(l)) >= 0)
		return fd;
	return l->have_src && l->src.event_fd ? l->src.event_fd(l->src.ctx) : -1;
}

int
live_handle_events(struct live *l, uint64_t now_ns, struct llcd_err *err)
{
	struct epoll_event evs[8];
	int n, m = 0;

	if (l->evfd >= 0)
		while (epoll_wait(l->evfd, evs, 8, 0) == 8)
			;       /* level-triggered: only drained; each source reads its own */
	n = live_conns_handle(l, now_ns, err);
	if (l->have_src && l->src.handle)
		m = l->src.handle(l->src.ctx, now_ns);
	return n < 0 ? -1 : n + m;
}

/* ---- the interfaces: the loop's verbs, llcctl's questions, the hooks ---- */

static bool
h_counters(void *ctx)
{
	return live_counters(ctx);
}

static int
h_event_fd(void *ctx)
{
	return live_event_fd(ctx);
}

static int
h_handle_events(void *ctx, uint64_t now_ns, struct llcd_err *err)
{
	return live_handle_events(ctx, now_ns, err);
}

static int
h_describe(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	return live_describe(ctx, key, out);
}

static int
h_describe_host(void *ctx, struct agent_hostinfo *out)
{
	return live_describe_host(ctx, out);
}

static int
h_get_annotation(void *ctx, uint64_t key, char **xml, struct llcd_err *err)
{
	return live_get_annotation(ctx, key, xml, err);
}

static int
h_set_annotation(void *ctx, uint64_t key, const char *xml, bool live, bool config, struct llcd_err *err)
{
	return live_set_annotation(ctx, key, xml, live, config, err);
}

static int
h_get_xml(void *ctx, uint64_t key, bool inactive, char **xml, struct llcd_err *err)
{
	return live_get_xml(ctx, key, inactive, xml, err);
}

static int
h_define_xml(void *ctx, const char *xml, struct llcd_err *err)
{
	return live_define_xml(ctx, xml, err);
}

static bool
h_is_running(void *ctx, uint64_t key)
{
	return live_is_running(ctx, key);
}

static void
h_set_topology(void *ctx, const struct topo *t)
{
	live_set_topology(ctx, t);
}

static void
h_set_rules(void *ctx, const struct policyrule_set *rules)
{
	live_set_rules(ctx, rules);
}

static int
h_add_guest_channel(void *ctx, uint64_t key, const char *name, bool live, char *path, size_t len, struct llcd_err *err)
{
	return live_add_guest_channel(ctx, key, name, live, path, len, err);
}

/* its rows of llcctl stats: the pin calls and the state file */
static void
h_stats(void *ctx, struct llcd_stats *st)
{
	const struct live *l = ctx;

	st->blocks |= STATS_PINS | STATS_STATE;
	st->v.pin_calls = l->st.pin_calls;
	st->v.pins_in_place = l->st.pins_in_place;
	st->v.state_write_errors = l->st.state_write_errors;
}

static struct cpuset_pool *
live_sets(void *ctx)
{
	return ((struct live *)ctx)->sets;
}

const struct agent_ops live_agent_ops = {
	.name = "libvirt",
	.observe = live_observe,
	.apply = live_apply,
	.report = live_report,
	.applied = live_applied,
	.sets = live_sets,
};

const struct agent_query live_query = {
	.describe = h_describe,
	.describe_host = h_describe_host,
	.get_annotation = h_get_annotation,
	.set_annotation = h_set_annotation,
	.get_xml = h_get_xml,
	.define_xml = h_define_xml,
	.is_running = h_is_running,
	.add_guest_channel = h_add_guest_channel,
	.stats = h_stats,
};

const struct daemon_hooks live_hooks = {
	.counters = h_counters,
	.event_fd = h_event_fd,
	.handle_events = h_handle_events,
	.set_topology = h_set_topology,
	.set_rules = h_set_rules,
};
