// SPDX-License-Identifier: GPL-2.0-or-later
/* observe.c - the live back-end's observe(): per period, the CPUs' busy
 * time from /proc/stat, each domain's vCPU runtime, last CPU, affinity and
 * instruction count, the domain's memory bandwidth (mbm.c), the NUMA node
 * of its memory (numa.c, every 10 s), and the guest
 * helper's reports. */
#include "live_int.h"

#define STATE_RETRY_PERIODS 5

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestchan.h"
#include "guestproto.h"
#include "log.h"
#include "perfcount.h"
#include "procstat.h"
#include "tracer.h"

#define REDISCOVER_PERIODS 10           /* thread-count hint: at most this often */
/* Every vCPU thread's affinity is read again this often (cfg.affinity_refresh
 * 0), each domain in its own period; in between, a thread that ran on a CPU
 * outside the affinity llcd knows has its domain's read at once. */
#define AFFINITY_REREAD_PERIODS 60

/* From this many domains on, each domain's lines the loop reads every
 * period (spread over its 2.4 KB struct ldom, then its vCPUs') are fetched
 * a few domains ahead: with thousands of domains they are no longer
 * cached when the domain's turn comes (policy/step.c does the same for
 * the engine's state). Inlined: a function of prefetches alone would be
 * dropped by gcc, calls and all. */
#define PREFETCH_DOMS 512

static inline __attribute__((always_inline)) void
ldom_prefetch(const struct ldom *d)
{
	const char *b = (const char *)d;

	__builtin_prefetch(b, 0, 3);
	__builtin_prefetch(b + offsetof(struct ldom, nvcpus), 0, 3);
	__builtin_prefetch(b + offsetof(struct ldom, todo), 0, 3);
	for (size_t o = 0; o < sizeof(d->emu_pending); o += 64)
		__builtin_prefetch(b + offsetof(struct ldom, emu_pending) + o, 0, 3);
	__builtin_prefetch(b + offsetof(struct ldom, gc), 0, 3);
	__builtin_prefetch(b + offsetof(struct ldom, bound), 0, 3);
}

static void
refresh_affinity(struct live *l, struct ldom *d)
{
	struct llcd_err e;
	char a[256], b[256];

	d->todo &= ~(unsigned)LDOM_TODO_AFFINITY;
	for (int v = 0; v < d->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		struct cpuset now;
		if (c->tid == 0 || procstat_affinity(c->tid, &now, &e) != PROCSTAT_OK)
			continue;
		if (l->cfg.dry_run)
			continue;       /* the pins are only remembered, not in the kernel */
		if (c->applied != &cpuset_none && !cpuset_equal(&now, c->applied) &&
		    !cpuset_equal(&now, c->affinity)) {
			cpuset_format(c->applied, a, sizeof(a));
			cpuset_format(&now, b, sizeof(b));
			log_dom(LOG_WARNING, d->name, v, c->tid, "moved by someone else: llcd pinned it to %s, it is on %s now",
			    a, b);
			l->st.moved_by_others++;
			/* kubelet's cpuset change moves threads too (cgroup v1
			 * rewrites their affinity): the bound is read again now,
			 * before the engine plans with the old one */
			live_bound_soon(d);
		}
		lvcpu_set(d, &c->affinity, &now);
	}
}

/* One vCPU's figures for the period: runtime, run delay and last CPU from
 * the tracer's mapping (no syscall) when it tracks the thread, else the two
 * /proc reads. false: the thread is gone or unreadable (rediscover). */
static bool
sample_vcpu(struct live *l, struct ldom *d, int v, struct policy_vcpu_sample *o,
            int *nthreads)
{
	struct lvcpu *c = &d->v[v];
	struct procstat_sample s;
	struct llcd_err e;
	uint64_t run, delay;

	if (c->tr_slot >= 0 && d->tracer != NULL) {
		struct tracer_sample ts;
		if (tracer_thread_read(d->tracer, c->tr_slot, &ts) < 0 || ts.exited)
			return false;
		if (ts.last_cpu < 0 && tracer_stale(d->tracer)) {
			/* registered after this period's refresh (discovered
			 * just now): one more pass, so that it starts now */
			if (tracer_refresh(d->tracer, &e) < 0 ||
			    tracer_thread_read(d->tracer, c->tr_slot, &ts) < 0 || ts.exited)
				return false;
		}
		if (ts.last_cpu < 0)
			return false;
		run = ts.runtime_ns;
		delay = ts.delay_ns;
		c->last_cpu = ts.last_cpu;
		*nthreads = -1;
	} else {
		enum procstat_status st = procstat_thread_read(c->th, &s, &e);
		if (st != PROCSTAT_OK) {
			if (st == PROCSTAT_ERROR)
				log_dom(LOG_WARNING, d->name, v, c->tid, "sampling: %s", e.msg);
			return false;
		}
		run = s.runtime_ns;
		delay = s.wait_ns;
		c->last_cpu = s.last_cpu;
		*nthreads = s.num_threads;
	}
	o->runtime_ns = c->have_prev && run >= c->prev_runtime ? run - c->prev_runtime : 0;
	o->run_delay_ns = c->have_prev && delay >= c->prev_delay ? delay - c->prev_delay : 0;
	c->prev_runtime = run;
	c->prev_delay = delay;
	c->have_prev = true;
	o->last_cpu = c->last_cpu;
	return true;
}

/* d's samples into out, its slot's, which holds what d wrote in the last
 * observation when kept: then an unchanged sample keeps the domain's mark
 * (policy_domain_in.vcpus_gen), compared where it is written, so that the
 * engine need not compare the whole array with a copy; any change, or
 * kept false, gives a new one. */
static void
sample_domain(struct live *l, struct ldom *d, struct policy_domain_in *in,
              struct policy_vcpu_sample *out, bool kept)
{
	struct llcd_err e;
	bool rediscover = false, hint = false, moved = !kept || d->obs_mark == 0;

	for (int v = 0; v < d->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		struct policy_vcpu_sample n, *o = &n;
		int nthreads = -1;
		o->tid = c->tid;
		o->runtime_ns = 0;
		o->run_delay_ns = 0;
		o->instructions = 0;
		o->last_cpu = c->last_cpu;
		if (c->th != NULL || c->tr_slot >= 0) {
			if (sample_vcpu(l, d, v, o, &nthreads)) {
				/* it ran, and last on a CPU its affinity does not
				 * hold: someone else moved it (llcd's own pins set
				 * c->affinity), or a cgroup did; its domain's
				 * affinities are read in the next period, not at
				 * the periodic re-read (the pins are only
				 * remembered in a dry run: nothing to compare) */
				if (o->runtime_ns > 0 && c->last_cpu >= 0 && !l->cfg.dry_run &&
				    c->affinity != &cpuset_none && !cpuset_isset(c->affinity, c->last_cpu))
					d->todo |= LDOM_TODO_AFFINITY;
				if (l->counters && c->perf_fd == -1 && c->tid > 0) {
					c->perf_fd = perfcount_open(c->tid, &e);
					if (c->perf_fd < 0) {
						c->perf_fd = -2;        /* do not retry this thread */
						log_dom(LOG_INFO, d->name, v, c->tid, "%s", e.msg);
					}
				}
				uint64_t instr;
				if (c->perf_fd >= 0 && perfcount_read(c->perf_fd, &instr, &e) == 0) {
					o->instructions = c->have_instr && instr >= c->prev_instr ? instr - c->prev_instr : 0;
					c->prev_instr = instr;
					c->have_instr = true;
				}
				if (nthreads >= 0 && nthreads != d->nthreads_seen)
					hint = true;
			} else {
				rediscover = true;
			}
		}
		/* A thread allowed on every CPU of the host, in a domain llcd
		 * has not pinned (since it was found, or per the state file),
		 * is not placed at all (libvirt's default): report "unknown",
		 * so that the engine places the domain instead of adopting
		 * "everywhere" as a placement. Once llcd pinned the domain the
		 * real affinity is reported, so that one someone else moved or
		 * released is pinned again; but a hot-plugged vCPU llcd has not
		 * pinned yet (it inherited the pin of the QEMU thread that
		 * made it) is "unknown" too, so that the engine places it
		 * (adopt_domain) rather than adopting that pin. */
		/* the pool's set, which stays until the next observe even if
		 * a pin replaces it (live.sets) */
		o->pinned = (!d->touched && cpuset_subset(&l->everywhere, c->affinity)) ||
		    (c->hotplugged && c->applied == &cpuset_none) ? &cpuset_none : c->affinity;
		/* (every field written above: the struct has no padding) */
		if (!moved && memcmp(&out[v], &n, sizeof(n)) != 0)
			moved = true;
		out[v] = n;
	}
	if (moved)
		d->obs_mark = ++l->obs_marks;
	d->obs_mark_seq = l->obs_seq;
	in->vcpus_gen = d->obs_mark;
	/* The thread-count hint (hot-plug): from every /proc sample, or, when
	 * the tracer samples, from QEMU's process (the link count of its task
	 * directory, one fstat) every REDISCOVER_PERIODS periods counted from
	 * the last discovery, when a rediscovery is allowed again. */
	if (d->qemu != NULL && l->period > d->discovered_period &&
	    (l->period - d->discovered_period) % REDISCOVER_PERIODS == 0) {
		int n;
		if (procstat_proc_nthreads(d->qemu, &n, &e) == PROCSTAT_OK && n != d->nthreads_seen)
			hint = true;
	}
	if (hint && l->period - d->discovered_period >= REDISCOVER_PERIODS)
		rediscover = true;
	if (d->threads_missing)
		rediscover = true;
	if (rediscover)
		d->todo |= LDOM_TODO_DISCOVER;
	(void)in;
}

/* The wakeup edges of one domain for the period, from the tracer's last
 * drain, into the observation's slot (policy/wakeups.h); the strongest
 * are logged at debug level. */
static int
wakeups_domain(struct live *l, struct ldom *d, struct agent_obs *obs, int slot, uint64_t period_ns,
               struct llcd_err *err)
{
	const struct tracer_edge *te;
	uint64_t dropped;
	int n, k = 0;
	uint16_t per[CPUSET_MAX];       /* edges kept per waker */

	if (d->tracer == NULL || d->tr_dom < 0 || period_ns == 0)
		return 0;
	n = tracer_domain_edges(d->tracer, d->tr_dom, &te, &dropped);
	if (agent_obs_wakeups(obs, slot, period_ns, err) < 0)
		return -1;
	struct policy_wakeups *w = &obs->wakeups[slot];
	struct policy_wakeup_edge *pe = obs->edges[slot];
	memset(per, 0, sizeof(per[0]) * (size_t)(d->nvcpus < CPUSET_MAX ? d->nvcpus : CPUSET_MAX));
	for (int i = 0; i < n; i++) {
		/* a vCPU beyond the online count (hot-unplugged meanwhile), or
		 * past the policy's caps (each waker's strongest
		 * POLICY_WAKEUP_EDGES_VCPU: te[] is strongest first): counted,
		 * not listed */
		if (te[i].waker >= d->nvcpus || te[i].wakee >= d->nvcpus || te[i].waker >= CPUSET_MAX ||
		    k >= POLICY_WAKEUP_EDGES || per[te[i].waker] >= POLICY_WAKEUP_EDGES_VCPU) {
			dropped += te[i].count;
			continue;
		}
		per[te[i].waker]++;
		pe[k].waker = te[i].waker;
		pe[k].wakee = te[i].wakee;
		pe[k].count = te[i].count > UINT32_MAX ? UINT32_MAX : (uint32_t)te[i].count;
		k++;
	}
	w->nedges = k;
	w->dropped = dropped;
	if (log_getverbose() > 0) {
		char buf[256] = "";
		size_t len = 0;
		for (int i = 0; i < k && i < 6 && len < sizeof(buf); i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d->%d %u", i ? ", " : "", pe[i].waker,
			    pe[i].wakee, pe[i].count);
		log_dom(LOG_DEBUG, d->name, -1, 0, "wakeups over %llu ms: %s%s%d edge%s, %llu dropped",
		    (unsigned long long)(period_ns / 1000000u), buf, k ? "; " : "", k, k == 1 ? "" : "s",
		    (unsigned long long)dropped);
	}
	(void)l;
	return 0;
}

/* The reaction to libvirt's started event, logged once, in the period
 * after the one that pinned (or found in place) the first thread, or 5
 * periods after the event when nothing was pinned: how long after the
 * event the first and the last vCPU were on their CPUs, with how many pin
 * calls. */
#define REACT_GIVE_UP_PERIODS 5

static void
react_report(struct live *l, struct ldom *d)
{
	if (d->react.period == 0) {
		d->react.period = l->period;
		return;
	}
	if (d->react.started_ns == 0 || l->period <= d->react.period ||
	    (d->react.act_period == 0 ? l->period < d->react.period + REACT_GIVE_UP_PERIODS :
	     l->period <= d->react.act_period))
		return;
	if (!ldom_annotated(d)) {
		d->react.started_ns = 0;      /* not llcd's to place */
		return;
	}
	int pinned = 0;
	for (int v = 0; v < d->nvcpus; v++)
		if (d->v[v].affinity != &cpuset_none && !cpuset_subset(&l->everywhere, d->v[v].affinity))
			pinned++;
	char told[64] = "";
	if (d->react.told_ns > d->react.started_ns)
		snprintf(told, sizeof(told), "; libvirt told of the pins %.1f ms after it",
		    (double)(d->react.told_ns - d->react.started_ns) / 1e6);
	if (d->react.first_ns)
		log_dom(LOG_INFO, d->name, -1, 0, "placed from its started event: first vCPU on its CPUs %.1f ms, "
		    "last %.1f ms after it; %d pin call%s, %d pin%s already in place; %d of %d vCPUs pinned%s",
		    (double)(d->react.first_ns - d->react.started_ns) / 1e6, (double)(d->react.last_ns - d->react.started_ns) / 1e6,
		    d->react.calls, d->react.calls == 1 ? "" : "s", d->react.kept, d->react.kept == 1 ? "" : "s",
		    pinned, d->nvcpus, told);
	else if (pinned == d->nvcpus)
		log_dom(LOG_INFO, d->name, -1, 0, "placed from its started event with no vCPU pin call: the %d vCPUs "
		    "are where libvirt pinned them at start; %d pin call%s, %d pin%s already in place", d->nvcpus,
		    d->react.calls, d->react.calls == 1 ? "" : "s", d->react.kept, d->react.kept == 1 ? "" : "s");
	else
		log_dom(LOG_INFO, d->name, -1, 0, "not placed within %d periods of its started event (%d of %d vCPUs "
		    "pinned)", REACT_GIVE_UP_PERIODS, pinned, d->nvcpus);
	d->react.started_ns = 0;
}

/* Open the guest helper's channel of a domain, once: the socket the domain
 * XML names, else the one `llcctl guest-channel --add` would add. */
static void
open_channel(struct live *l, struct ldom *d)
{
	char path[PATH_MAX], *xml = NULL;
	struct llcd_err e;

	if (d->ext && !d->gc_looked && d->ext_channel != NULL && d->ext_channel[0]) {
		/* the socket llcd.conf's guest-channel-path names for it */
		d->gc_looked = true;
		d->gc = guestchan_new(d->name, d->nvcpus, d->ext_channel, NULL);
		log_dom(LOG_INFO, d->name, -1, 0, "guest helper channel: %s", d->ext_channel);
		return;
	}
	if (d->gc_looked || d->fake || !d->uuid[0] || ldom_virt(d) == NULL)
		return;
	d->gc_looked = true;
	char mode[16];
	if (virt_get_xml(ldom_virt(d), d->uuid, false, &xml, &e) == VIRT_OK &&
	    guestchan_channel_from_xml(xml, strlen(xml), path, sizeof(path), mode, sizeof(mode)) == 0) {
		/* only a channel of the form libvirt makes, where libvirt or
		 * llcd put it: a domain's XML must not point llcd at any socket */
		char why[LLCD_ERR_MSG];
		if (guestchan_channel_allowed(path, mode, GUESTCHAN_LIBVIRT_DIR, l->cfg.guest_channel_dir,
		    why, sizeof(why)) < 0) {
			ldom_str_set(&d->gc_refused, sizeof(why), "%s", why);
			log_dom(LOG_WARNING, d->name, -1, 0, "guest helper channel refused: %s", why);
		} else {
			d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
			log_dom(LOG_INFO, d->name, -1, 0, "guest helper channel: %s", path);
		}
	} else if (l->cfg.guest_channel_dir && l->cfg.guest_channel_dir[0] &&
	           guestchan_sock_path(l->cfg.guest_channel_dir, d->uuid, path, sizeof(path), &e) == 0) {
		d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
	}
	free(xml);
}

int
live_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	struct live *l = ctx;
	struct llcd_err e;
	uint64_t refresh = l->cfg.affinity_refresh > 0 ? (uint64_t)l->cfg.affinity_refresh : AFFINITY_REREAD_PERIODS;

	l->period++;
	l->now_ns = now_ns;
	/* the last observation's samples point at these sets: the ones no
	 * vCPU holds any more go now, as the samples are made again */
	cpuset_pool_collect(l->sets);
	if (live_handle_events(l, now_ns, &e) < 0)
		log_warnx("%s", e.msg);
	/* a write that fails (disk full, read-only) keeps the state dirty and
	 * is tried again every STATE_RETRY_PERIODS, said once per streak */
	if (l->period >= l->state_retry_period) {
		if (live_save_state(l, &e) < 0) {
			l->st.state_write_errors++;
			if (l->state_failing++ == 0)
				log_warnx("state file: %s; kept in memory, tried again every %d periods", e.msg,
				    STATE_RETRY_PERIODS);
			l->state_retry_period = l->period + STATE_RETRY_PERIODS;
		} else if (l->state_failing > 0 && !l->state_dirty) {
			log_info("state file written again after %d failed tries", l->state_failing);
			l->state_failing = 0;
		}
	}

	/* the tracer's edges since the last period, for every domain at
	 * once (one batch) */
	uint64_t period_ns = l->prev_obs_ns && now_ns > l->prev_obs_ns ?
	    now_ns - l->prev_obs_ns : 0;
	l->prev_obs_ns = now_ns;
	if (l->tracer != NULL && tracer_drain_edges(l->tracer, &e) < 0)
		log_warnx("%s", e.msg);
	/* and every tracked thread's figures, one run of llcd_sample */
	if (l->tracer != NULL && tracer_refresh(l->tracer, &e) < 0)
		log_warnx("%s", e.msg);

	/* per-CPU busy time over the period */
	if (obs->ncpus > 0) {
		if (obs->ncpus > l->ncpus) {
			uint64_t *p = realloc(l->cpu_prev, sizeof(uint64_t) * (size_t)obs->ncpus);
			uint64_t *c = p ? realloc(l->cpu_cur, sizeof(uint64_t) * (size_t)obs->ncpus) : NULL;
			if (p)
				l->cpu_prev = p;
			if (c == NULL)
				return llcd_err_set(err, "out of memory");
			l->cpu_cur = c;
			l->ncpus = obs->ncpus;
			l->have_cpu_prev = false;
		}
		if (procstat_cpu_busy(l->ps, l->cpu_cur, obs->ncpus, NULL, &e) == 0) {
			for (int i = 0; i < obs->ncpus && l->have_cpu_prev; i++)
				obs->cpu_busy_ns[i] = l->cpu_cur[i] >= l->cpu_prev[i] ? l->cpu_cur[i] - l->cpu_prev[i] : 0;
			memcpy(l->cpu_prev, l->cpu_cur, sizeof(uint64_t) * (size_t)obs->ncpus);
			l->have_cpu_prev = true;
		} else {
			log_warnx("/proc/stat: %s", e.msg);
		}
	}

	bool bound_moved = false;
	bool ahead = l->ndoms >= PREFETCH_DOMS;
	l->obs_seq++;
	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		int slot;
		if (ahead && i + 4 < l->ndoms)
			ldom_prefetch(l->doms[i + 4]);
		if (ahead && i + 2 < l->ndoms)
			__builtin_prefetch(l->doms[i + 2]->v, 1, 3);
		if ((d->todo & LDOM_TODO_ANNOT))
			ldom_read_annotation(l, d);
		if ((d->todo & LDOM_TODO_DISCOVER))
			ldom_discover(l, d);
		if (i >= l->ndoms || l->doms[i] != d) {     /* removed meanwhile */
			i--;
			continue;
		}
		/* spread over the periods: not every domain's threads in one */
		if ((d->todo & LDOM_TODO_AFFINITY) || (l->period + d->key) % refresh == 0)
			refresh_affinity(l, d);
		if (!cpuset_empty(&d->emu_pending)) {
			if (l->period < d->backoff_until) {
				l->st.backoff_skips++;
			} else {
				struct cpuset want = d->emu_pending;
				bool called;
				enum agent_result r = live_pin_emulator(l, d, &want, &called, &e);
				live_note_result(l, d, r, e.msg);
				if (r == AGENT_OK)
					log_dom(LOG_INFO, d->name, -1, 0, "emulator threads pinned to the CPUs of an earlier "
					    "plan after a transient failure");
				else if (r != AGENT_TRANSIENT)
					cpuset_zero(&d->emu_pending);
			}
		}
		/* the guest helper's reports (read once per period; the
		 * channel bounds what one guest can make llcd read) */
		struct policy_hot_report reps[GUESTPROTO_MAX_PROCS];
		int nrep = 0;
		open_channel(l, d);
		if (d->gc) {
			guestchan_set_nvcpus(d->gc, d->nvcpus);
			int ev = guestchan_handle(d->gc, now_ns);
			if (ev & (GUESTCHAN_EV_BAD | GUESTCHAN_EV_BACKOFF)) {
				struct guestchan_stats gs;
				guestchan_stats(d->gc, &gs);
				log_dom(LOG_WARNING, d->name, -1, 0, "guest channel: %s%s", gs.last_error,
				    ev & GUESTCHAN_EV_BACKOFF ? "; closed for a back-off" : "");
			}
			nrep = guestchan_reports(d->gc, reps, GUESTPROTO_MAX_PROCS, now_ns);
			if (nrep < 0)
				nrep = 0;
		}
		if ((slot = agent_obs_add(obs, d->nvcpus, nrep, err)) < 0)
			return -1;
		struct policy_domain_in *in = &obs->domains[slot];
		/* the slot holds what d wrote in the last observation */
		bool kept = in->key == d->key && d->obs_slot == slot && d->obs_mark_seq + 1 == l->obs_seq;
		/* the reports: compared where they are written (the slot
		 * holds the last ones when kept), marked when they changed */
		size_t rn = sizeof(reps[0]) * (size_t)nrep;
		if (!kept || d->reports_mark == 0 || d->reports_n != nrep ||
		    (nrep > 0 && memcmp(obs->reports[slot], reps, rn) != 0)) {
			if (nrep > 0)
				memcpy(obs->reports[slot], reps, rn);
			d->reports_mark = ++l->obs_marks;
			d->reports_n = nrep;
		}
		in->reports = obs->reports[slot];
		in->nreports = nrep;
		in->reports_gen = d->reports_mark;
		/* the annotation: written when it changed, or when the slot
		 * is not the one it wrote last (a slot with its key from an
		 * older observation may hold an older annotation) */
		if (!kept || d->annot_mark == 0 || in->key != d->key || (d->todo & LDOM_TODO_OBS)) {
			d->annot_mark = ++l->obs_marks;
			in->key = d->key;
			snprintf(in->name, sizeof(in->name), "%.*s", (int)sizeof(in->name) - 1, d->name);
			in->guest = d->guest;
			in->annotated = ldom_annotated(d);
			if (in->annotated)      /* the groups in use only */
				policy_annotation_copy(&in->annot, d->annot);
			else
				policy_annotation_defaults(&in->annot);
			d->todo &= ~(unsigned)LDOM_TODO_OBS;
		}
		in->annot_gen = d->annot_mark;
		sample_domain(l, d, in, obs->vcpus[slot], kept);
		react_report(l, d);
		live_mbm_sample(l, d, in);
		live_numa_sample(l, d, in, now_ns);
		d->obs_slot = slot;
		int moved = live_bound_sample(l, d, obs, slot, err);
		if (moved < 0)
			return -1;
		bound_moved |= moved > 0;
		if (wakeups_domain(l, d, obs, slot, period_ns, err) < 0)
			return -1;
	}
	if (bound_moved && live_bound_resample(l, obs, err) < 0)
		return -1;
	return 0;
}
