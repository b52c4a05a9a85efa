// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon_int.h - what daemon.c (the loop, reload, hotplug) shares with
 * the handlers*.c (the answers to llcctl's requests). Private to them:
 * everything else goes through daemon.h. struct daemon is in parts, each
 * written by one file (named beside it); the others only read them. */
#ifndef LLCD_DAEMON_INT_H
#define LLCD_DAEMON_INT_H

#include <signal.h>

#include "control.h"
#include "daemon.h"
#include "metrics.h"
#include "recommend.h"

#define STEP_HIST 256
#define RECOMMEND_CACHE 64     /* topology DOMAIN answers kept */

/* The CPU hotplug watch (daemon.c: daemon_watch_cpus, check_cpus). */
struct daemon_cpus {
	bool watch;
	struct cpuset online;           /* the online CPUs, last read ... */
	bool have_online;               /* ... if it could be */
	struct topo *owned_topo;        /* a topology the daemon re-read itself */
	struct topo *retired[2];        /* re-read ones replaced while the engine
	                                 * may still refer to them */
	int nretired;
};

/* What the periods cost (daemon.c: daemon_step, daemon_run), the last
 * STEP_HIST of each. */
struct daemon_costs {
	uint64_t step_ns[STEP_HIST];
	int nstep;
	uint64_t step_max_ns;
	struct metrics_hist step_hist;  /* llcd_policy_step_seconds */
	uint64_t late_ns[STEP_HIST];    /* how late each period started */
	int nlate;
	/* each period's observe, policy and apply */
	uint64_t period_ns[STEP_HIST];
	uint64_t period_cpu_ns[STEP_HIST];      /* the same work in this thread's CPU time */
	int nperiod;
	bool big_plan;                  /* the last period's plan was big (DAEMON_BIG_PLAN) */
};

/* Isolation held and overlaps (daemon.c: daemon_step). */
struct daemon_iso {
	uint64_t held;                  /* actions held back (loop.c, policy/order.c) */
	int overlaps;                   /* overlaps left after the last period's pins */
	uint64_t overlap_periods;       /* periods that ended with one */
	int streak;                     /* periods in a row with overlaps */
};

/* Runtime tunes (daemon.c: llcctl tune), kept in file across restarts
 * until a reload or `llcctl tune --reset`. */
struct daemon_tunes {
	char kv[DAEMON_MAX_TUNES][2][CONFIG_PATH_MAX];
	int n;
	char file[CONFIG_PATH_MAX];
};

/* topology DOMAIN off the loop (handlers_guest.c, recommend.h): the worker
 * (started at the first such request), the requests waiting for it, and
 * the answers by domain key and placement fingerprint. */
struct daemon_recs {
	struct recommend *worker;
	struct daemon_rec_wait {
		uint64_t key, fp, client;
		uint32_t seq;
	} wait[RECOMMEND_MAX_JOBS];
	int nwait;
	struct daemon_rec_cache {
		uint64_t key, fp;
		struct json_object *reply;      /* NULL: an error */
		int rc;
		char error[LLCD_ERR_MSG];
	} cache[RECOMMEND_CACHE];
	int cache_next;
	uint64_t fp, fp_gen;            /* the fingerprint of obs_gen (fp_gen) */
	uint64_t computed, cached;
	double compute_max_s;
};

struct daemon {
	struct config cfg;
	char config_path[CONFIG_PATH_MAX];
	const struct topo *topo;
	struct daemon_backend be;
	struct policy_host host;
	struct agent_loop *loop;
	struct control *ctl;
	/* released by llcctl release, with the annotation XML the domain had
	 * then (NULL: none): a different one (virsh metadata, llcctl policy)
	 * ends the release */
	struct daemon_released {
		uint64_t key;
		char *xml;
	} *released;
	int nreleased;
	char overrides[8][2][CONFIG_PATH_MAX];
	int noverrides;
	struct daemon_cpus cpus;        /* daemon.c: CPU hotplug */
	uint64_t start_ns, now_ns;
	volatile sig_atomic_t stop, reload;
	/* counters, indexed by action type and by apply result */
	uint64_t periods, errors, actions[POLICY_ACT_COUNT], results[AGENT_RESULT_COUNT];
	struct daemon_costs cost;       /* daemon.c: what the periods cost */
	struct httpd *httpd;            /* metrics-listen; NULL off */
	struct policyrule_set *rules;   /* policy-rule, as handed to the back-end */
	bool listening;                 /* daemon_listen ran: serve metrics */
	void (*period_hook)(void *arg);
	void *period_hook_arg;
	struct daemon_tunes tune;       /* daemon.c: llcctl tune */
	struct daemon_iso iso;          /* daemon.c: isolation held, overlaps */
	struct daemon_recs rec;         /* handlers_guest.c: topology DOMAIN */
	uint64_t topo_gen;              /* bumped by every topology change */
	uint64_t obs_gen;               /* bumped by every period, tune, topology */
};

/* topology DOMAIN's answers computed off the loop are ready: answer the
 * waiting requests and cache them (handlers_guest.c) */
void daemon_recommend_ready(struct daemon *d);
/* Forget the cached answers and the waiting requests (daemon_free). */
void daemon_recommend_free(struct daemon *d);

/* whether the back-end has per-thread instruction counts */
static inline bool
backend_counters(const struct daemon_backend *be)
{
	return be->hooks != NULL && be->hooks->counters != NULL && be->hooks->counters(be->ctx);
}

/* released by llcctl release: left to the default scheduler until its
 * annotation is set again (daemon.c) */
bool daemon_is_released(const struct daemon *d, uint64_t key);
/* Release the domain in (as it is annotated now); -1 out of memory. */
int daemon_release(struct daemon *d, const struct policy_domain_in *in);
void daemon_unrelease(struct daemon *d, uint64_t key);
/* Make c the running configuration (tune, reload); -1: nothing changed. */
int daemon_apply_config(struct daemon *d, const struct config *c, struct llcd_err *err);
/* Re-read the configuration file; msg says what happened. Returns a
 * CTL_* result. */
int daemon_reload(struct daemon *d, char *msg, size_t len);
/* The Prometheus exposition of the stats (llcctl metrics and the HTTP
 * endpoint), malloc'd; NULL when out of memory (handlers.c). */
char *daemon_metrics_text(struct daemon *d);
/* Record a successful tune and write tunes_file; -1 with err when the file
 * cannot be written (the tune holds until the restart). */
int daemon_keep_tune(struct daemon *d, const char *knob, const char *value, struct llcd_err *err);
/* Drop every runtime tune and its file (reload, tune --reset). */
void daemon_drop_tunes(struct daemon *d);
/* llcctl tune --reset: the configuration file's values again (a reload
 * where there is a file; defaults and command line otherwise). */
int daemon_reset_tunes(struct daemon *d, char *msg, size_t len);

#endif
