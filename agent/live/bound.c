// SPDX-License-Identifier: GPL-2.0-or-later
/* bound.c - each libvirt domain's CPU bound: the host's CPUs that the
 * cgroup cpuset enclosing its QEMU allows (cgbound.h; kubelet's pod cgroup
 * on a KubeVirt node). Read when the domain is first observed and every
 * affinity_refresh periods (a pod resized, kubelet's reconcile), given to
 * the engine as policy_domain_in.bound (a change re-places the domain),
 * and checked before every pin: llcd never pins a thread outside it and
 * never writes the cgroup. With reserved CPUs and the shared pool (the
 * engine's) that is the intersection of the host, llcd.conf and the
 * cgroup. The periodic read takes the cgroup's path from /proc/PID/cgroup
 * at one read in LIVE_BOUND_PATH_REUSE (the path of a running QEMU
 * changes only when someone moves it to another cgroup, and the kernel
 * then moves its threads: a thread seen on a CPU outside its affinity has
 * the path read again at once, live_bound_soon) and the cgroup's CPU set at
 * every read; the check before a pin reads both, and the periodic read
 * after it takes the path again. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgbound.h"
#include "log.h"

/* The mounts, and the last cgroup's bound read in the periodic pass: the
 * domains of one cgroup share it within a period (on a libvirt host every
 * QEMU's bound is machine.slice's, libvirt's own scopes left out), so its
 * cpuset file is read once a period, not once a domain. */
struct live_cgbound {
	struct cgbound_mounts m;
	uint64_t period;                /* last's period; 0 none */
	char cg[PATH_MAX];              /* last's cgroup path */
	struct cgbound last;
};

void
live_bound_open(struct live *l)
{
	struct llcd_err e;
	struct live_cgbound *m = calloc(1, sizeof(*m));

	if (m == NULL)
		llcd_err_set(&e, "out of memory");
	if (m == NULL || cgbound_mounts_read(l->cfg.proc_root, &m->m, &e) < 0) {
		free(m);
		log_warnx("cgroup mounts: %s; domains are not bounded by their cgroup cpuset", e.msg);
		return;
	}
	l->cgm = m;
	if (m->m.v2[0] && m->m.v2_cpuset)
		log_info("CPU bounds from the cgroup v2 cpuset (%s)", m->m.v2);
	else if (m->m.v1[0])
		log_info("CPU bounds from the cgroup v1 cpuset hierarchy (%s)", m->m.v1);
	else
		log_info("no cpuset cgroup hierarchy: domains are bounded by the host alone");
}

void
live_bound_close(struct live *l)
{
	free(l->cgm);
	l->cgm = NULL;
}

/* *dst becomes a copy of s (NULL: out of memory, said as "?"). */
static void
set_str(char **dst, const char *s)
{
	if (*dst != NULL && strcmp(*dst, s) == 0)
		return;
	free(*dst);
	*dst = strdup(s);
}

static const char *
str_or(const char *s, const char *none)
{
	return s != NULL ? s : none;
}

/* The kept cgroup path is not taken again: the next periodic read reads it. */
static void
path_stale(struct ldom *d)
{
	d->bound.path_uses = LIVE_BOUND_PATH_REUSE;
}

/* The bound of d's QEMU into *cg: its cgroup path read (or the kept one),
 * and that cgroup's set unless shared is set and another domain's read of
 * this period was of the same cgroup. */
static int
read_cg(struct live *l, struct ldom *d, bool shared, struct cgbound *cg, struct llcd_err *e)
{
	struct live_cgbound *c = l->cgm;
	char fresh[PATH_MAX];
	const char *path = d->bound.cg_path;

	if (!shared) {
		/* a read of the path itself: the periodic read after it takes
		 * the path again too, not an older one kept (which would put
		 * the bound back where a moved QEMU was) */
		path_stale(d);
		return cgbound_read(&c->m, l->cfg.proc_root, d->pid, cg, e);
	}
	if (d->bound.cg_fd_pid != d->pid) {     /* QEMU started again */
		if (d->bound.cg_fd >= 0)
			close(d->bound.cg_fd);
		d->bound.cg_fd = -1;
		path_stale(d);
	}
	d->bound.cg_fd_pid = d->pid;
	if (path == NULL || d->bound.path_uses >= LIVE_BOUND_PATH_REUSE) {
		if (cgbound_path_kept(&c->m, l->cfg.proc_root, d->pid, &d->bound.cg_fd, fresh, sizeof(fresh), e) < 0)
			return -1;
		set_str(&d->bound.cg_path, fresh);
		d->bound.path_uses = 0;
		path = fresh;
	}
	d->bound.path_uses++;
	if (c->period != l->period || strcmp(c->cg, path) != 0) {
		c->period = 0;
		if (cgbound_read_path(&c->m, path, d->pid, &c->last, e) < 0)
			return -1;
		c->period = l->period;
		snprintf(c->cg, sizeof(c->cg), "%s", path);
	}
	*cg = c->last;
	return 0;
}

/* shared: the periodic read, which may take this period's read of the
 * same cgroup; a check before a pin reads the set itself. true: the bound
 * changed. */
static bool
bound_read(struct live *l, struct ldom *d, bool shared)
{
	bool changed = false;
	struct llcd_err e = { "" };
	struct cgbound cg;
	struct cpuset cpus;
	char a[256], b[256];

	d->bound.next_period = l->period + (uint64_t)(l->cfg.affinity_refresh > 0 ? l->cfg.affinity_refresh : 10);
	d->bound.read_period = l->period;
	if (l->cgm == NULL || d->pid <= 0 || d->ext)
		return false;   /* ext domains: the QMP back-end's cgroup rule (cgcpuset.h) */
	if (read_cg(l, d, shared, &cg, &e) < 0) {
		if (strcmp(ldom_str(d->bound.error), e.msg) != 0)
			log_dom(LOG_WARNING, d->name, -1, d->pid, "CPU bound: %s; the last one read stands", e.msg);
		ldom_str_set(&d->bound.error, LLCD_ERR_MSG, "%s", e.msg);
		d->bound.read = true;
		return false;
	}
	ldom_str_clear(&d->bound.error);
	cpuset_zero(&cpus);
	if (cg.version != 0) {
		cpuset_and(&cpus, &cg.cpus, &l->everywhere);
		if (cpuset_empty(&cpus)) {
			/* nothing of this host: the engine gets an impossible
			 * bound and refuses the domain, saying so */
			cpus = cg.cpus;
		} else if (cpuset_equal(&cpus, &l->everywhere)) {
			cpuset_zero(&cpus);     /* allows everything: no bound */
		}
	}
	if (d->bound.read && !cpuset_equal(&cpus, &d->bound.cpus)) {
		cpuset_format(&d->bound.cpus, a, sizeof(a));
		cpuset_format(&cpus, b, sizeof(b));
		log_dom(LOG_INFO, d->name, -1, d->pid, "CPU bound changed: cgroup %s allows %s (was %s); placed again",
		    cg.cgroup[0] ? cg.cgroup : "(none)", cpuset_empty(&cpus) ? "every CPU" : b,
		    cpuset_empty(&d->bound.cpus) ? "every CPU" : a);
		changed = true;
	} else if (!d->bound.read && !cpuset_empty(&cpus)) {
		cpuset_format(&cpus, b, sizeof(b));
		log_dom(LOG_INFO, d->name, -1, d->pid, "CPU bound %s: cgroup v%d cpuset %s", b, cg.version, cg.cgroup);
	}
	d->bound.cpus = cpus;
	d->bound.cg_version = cg.version;
	set_str(&d->bound.cg_cgroup, cg.cgroup);
	set_str(&d->bound.cg_dir, cg.dir);
	d->bound.read = true;
	return changed;
}

void
live_bound_soon(struct ldom *d)
{
	d->bound.next_period = 0;
	path_stale(d);
}

int
live_bound_sample(struct live *l, struct ldom *d, struct agent_obs *obs, int slot, struct llcd_err *err)
{
	bool changed = false;

	if (!d->bound.read || l->period >= d->bound.next_period)
		changed = bound_read(l, d, true);
	if (agent_obs_bound(obs, slot, &d->bound.cpus, err) < 0)
		return -1;
	return changed;
}

/* One domain's bound changed: kubelet's CPU manager moves several pods'
 * sets at once (a swap: pod a to b's CPUs and b to a's), and the kernel
 * moves each thread only when it next runs, so the others' changes would
 * be noticed in later periods, one at a time, and the engine would plan a
 * period with a's new bound beside b's old placement (refusing a where b
 * still counts). Every other domain's bound is read again in the same
 * period (one read of each cgroup's file, shared), before the step. */
int
live_bound_resample(struct live *l, struct agent_obs *obs, struct llcd_err *err)
{
	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		if (d->obs_slot < 0 || d->obs_slot >= obs->ndomains || obs->domains[d->obs_slot].key != d->key ||
		    !d->bound.read || d->bound.read_period == l->period)
			continue;
		bound_read(l, d, true);
		if (agent_obs_bound(obs, d->obs_slot, &d->bound.cpus, err) < 0)
			return -1;
	}
	return 0;
}

enum agent_result
live_bound_check(struct live *l, struct ldom *d, const struct cpuset *cpus, struct llcd_err *err)
{
	char a[256], b[256];

	if (cpuset_empty(&d->bound.cpus) || cpuset_subset(cpus, &d->bound.cpus)) {
		if (!d->bound.read || d->bound.cg_version == 0)
			return AGENT_OK;
	}
	/* the engine planned with the bound it was given; the cgroup may
	 * have changed since: read it again before any pin */
	bound_read(l, d, false);
	if (cpuset_empty(&d->bound.cpus) || cpuset_subset(cpus, &d->bound.cpus))
		return AGENT_OK;
	cpuset_format(cpus, a, sizeof(a));
	cpuset_format(&d->bound.cpus, b, sizeof(b));
	d->todo |= LDOM_TODO_OBS;
	llcd_err_set(err, "CPUs %s are outside the domain's CPU bound %s (cgroup %s): not pinned", a, b,
	    str_or(d->bound.cg_cgroup, "?"));
	return AGENT_TRANSIENT;
}

void
live_bound_describe(const struct live *l, const struct ldom *d, struct agent_facts *f)
{
	struct cpuset allowed = l->everywhere;
	const char *by;

	if (d->ext || !d->bound.read)
		return;
	cpuset_andnot(&allowed, &allowed, &l->cfg.reserved);
	if (!cpuset_empty(&d->bound.cpus)) {
		cpuset_and(&allowed, &allowed, &d->bound.cpus);
		by = "cgroup";
	} else {
		by = cpuset_empty(&l->cfg.reserved) ? "host" : "config";
	}
	agent_facts_cpus(f, "cpu_bound", "cpus", &allowed);
	agent_facts_str(f, "cpu_bound", "by", "%s", by);
	if (d->bound.cg_version)
		agent_facts_str(f, "cpu_bound", "cgroup", "v%d %.200s (%.280s)", d->bound.cg_version,
		    str_or(d->bound.cg_cgroup, "?"), str_or(d->bound.cg_dir, "?"));
	if (d->bound.error != NULL)
		agent_facts_str(f, "cpu_bound", "error", "%s", d->bound.error);
}
