// SPDX-License-Identifier: GPL-2.0-or-later
/* ext.c - domains another source finds (live.h live_ext_add; the QMP
 * back-end, agent/qmpback/): added, annotated and removed by it; their
 * emulator threads pinned with sched_setaffinity, and their cgroup v2
 * cpuset widened where it would not allow a pin (cgcpuset.h). */
#include "live_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgcpuset.h"
#include "log.h"
#include "procstat.h"

int
live_ext_add(struct live *l, const struct live_ext_domain *x, uint64_t *key, struct llcd_err *err)
{
	struct ldom *d;
	uint64_t k;
	int maxv = x->maxvcpus > x->nvcpus ? x->maxvcpus : x->nvcpus;

	if (x->nvcpus < 1 || maxv > CPUSET_MAX || x->pid <= 0)
		return llcd_err_set(err, "%s: bad vCPU count %d or pid %d", x->name, x->nvcpus, x->pid);
	if ((k = virt_domain_key(x->uuid, x->pid)) == 0)
		return llcd_err_set(err, "%s: no key from UUID '%s'", x->name, x->uuid);
	if (ldom_by_key(l, k) != NULL)
		return llcd_err_set(err, "%s: already known (UUID %s, pid %d)", x->name, x->uuid, x->pid);
	if ((d = ldom_add(l, k, x->uuid, x->name, x->pid, x->nvcpus, maxv)) == NULL)
		return llcd_err_set(err, "out of memory");
	d->fake = true;
	d->ext = true;
	if ((d->ext_tids = calloc((size_t)maxv, sizeof(int))) == NULL) {
		ldom_remove(l, d, "out of memory");
		return llcd_err_set(err, "out of memory");
	}
	memcpy(d->ext_tids, x->tids, sizeof(int) * (size_t)maxv);
	d->guest = x->guest;
	d->ext_sig_pending = true;
	if (x->channel != NULL && x->channel[0] && (d->ext_channel = strdup(x->channel)) == NULL) {
		ldom_remove(l, d, "out of memory");
		return llcd_err_set(err, "out of memory");
	}
	d->todo &= ~(unsigned)LDOM_TODO_ANNOT;  /* NEW until the source gives it */
	log_dom(LOG_INFO, d->name, -1, 0, "running: QEMU pid %d, %d vCPU%s (max %d)", x->pid, x->nvcpus,
	    x->nvcpus == 1 ? "" : "s", maxv);
	l->new_domains++;
	*key = k;
	return 0;
}

int
live_ext_update(struct live *l, uint64_t key, const struct live_ext_domain *x, struct llcd_err *err)
{
	struct ldom *d = ldom_by_key(l, key);
	int maxv = x->maxvcpus > x->nvcpus ? x->maxvcpus : x->nvcpus;
	int oldmax, *nt;
	bool tids_same;

	if (d == NULL || !d->ext)
		return llcd_err_set(err, "%s: not a known domain", x->name);
	if (x->nvcpus < 1 || maxv > CPUSET_MAX || x->pid != d->pid)
		return llcd_err_set(err, "%s: bad vCPU count %d or pid %d (was %d)", x->name, x->nvcpus, x->pid, d->pid);
	oldmax = d->maxvcpus;
	tids_same = maxv == oldmax && memcmp(d->ext_tids, x->tids, sizeof(int) * (size_t)maxv) == 0;
	if (maxv > d->maxvcpus) {
		if ((nt = realloc(d->ext_tids, sizeof(int) * (size_t)maxv)) == NULL)
			return llcd_err_set(err, "out of memory");
		memset(nt + d->maxvcpus, 0, sizeof(int) * (size_t)(maxv - d->maxvcpus));
		d->ext_tids = nt;
		if (ldom_resize(d, maxv) < 0)
			return llcd_err_set(err, "out of memory");
	}
	/* slots beyond the source's maxvcpus (it never shrinks in QEMU) stay 0 */
	memset(d->ext_tids, 0, sizeof(int) * (size_t)d->maxvcpus);
	memcpy(d->ext_tids, x->tids, sizeof(int) * (size_t)maxv);
	d->ext_changed = false;
	d->ext_sig_pending = true;
	d->todo |= LDOM_TODO_DISCOVER;  /* the threads: opened, closed */
	if (d->nvcpus == x->nvcpus && !tids_same)
		log_dom(LOG_INFO, d->name, -1, 0, "vCPU threads changed (%d online)", x->nvcpus);
	/* a changed count: the engine places the new vCPUs beside the
	 * others (policy/step.c reconcile, adopt_domain), as for a libvirt
	 * domain's */
	ldom_set_nvcpus(d, x->nvcpus);
	if (memcmp(&d->guest, &x->guest, sizeof(d->guest)) != 0) {
		d->guest = x->guest;
		d->todo |= LDOM_TODO_OBS;
	}
	return 0;
}

int
live_ext_vcpu_of(const struct ldom *d, int tid)
{
	for (int k = 0; k < d->maxvcpus && d->ext_tids; k++)
		if (d->ext_tids[k] == tid)
			return k;
	return -1;
}

void
live_ext_threads_seen(struct live *l, struct ldom *d, const bool *found, uint64_t named_sig)
{
	for (int v = 0; v < d->maxvcpus && d->ext_tids; v++)
		if (d->ext_tids[v] && !found[v] && !d->ext_sig_pending && !d->ext_changed) {
			log_dom(LOG_INFO, d->name, v, d->ext_tids[v], "the vCPU thread QMP named is gone; asking QMP again");
			d->ext_changed = true;  /* hot-unplug */
			l->ext_change_gen++;
		}
	if (d->ext_sig_pending) {
		d->ext_named_sig = named_sig;
		d->ext_sig_pending = false;
	} else if (named_sig != d->ext_named_sig && !d->ext_changed) {
		log_dom(LOG_INFO, d->name, -1, 0, "the threads QEMU (pid %d) names as vCPUs changed; asking QMP again",
		    d->pid);
		d->ext_changed = true;  /* hot-plug (or unplug) */
		l->ext_change_gen++;
	}
}

void
live_ext_forget(struct ldom *d)
{
	free(d->ext_tids);
	free(d->ext_annot);
	free(d->ext_src);
	free(d->ext_channel);
	d->ext_tids = NULL;
	d->ext_annot = d->ext_src = d->ext_channel = NULL;
}

uint64_t
live_ext_change_gen(const struct live *l)
{
	return l->ext_change_gen;
}

bool
live_ext_vcpus_changed(const struct live *l, uint64_t key)
{
	const struct ldom *d = ldom_by_key(l, key);

	return d != NULL && d->ext && d->ext_changed;
}

void
live_ext_remove(struct live *l, uint64_t key, const char *why)
{
	struct ldom *d = ldom_by_key(l, key);

	if (d != NULL && d->ext)
		ldom_remove(l, d, why);
}

void
live_ext_annotation(struct live *l, uint64_t key, const char *xml, size_t len, const char *source)
{
	struct ldom *d = ldom_by_key(l, key);

	if (d == NULL || !d->ext)
		return;
	free(d->ext_annot);
	d->ext_annot = NULL;
	if (xml != NULL && (d->ext_annot = strndup(xml, len)) == NULL) {
		log_dom(LOG_WARNING, d->name, -1, 0, "out of memory reading %s", source);
		return;
	}
	free(d->ext_src);
	d->ext_src = NULL;
	if (source != NULL && source[0] && (d->ext_src = strdup(source)) == NULL)
		log_dom(LOG_WARNING, d->name, -1, 0, "out of memory: %s not named in its messages", source);
	d->todo |= LDOM_TODO_ANNOT;
	ldom_read_annotation(l, d);     /* none: the policy-rules (name=) */
}

void
live_ext_listed(struct live *l)
{
	if (l->listed_once)
		return;
	live_state_listed(l);
	l->listed_once = true;
	l->state_dirty = true;  /* drop what is gone from the file */
}

enum agent_result
live_ext_cgroup(struct live *l, struct ldom *d, const struct cpuset *cpus, struct llcd_err *err)
{
	char root[1024], dir[4096];
	struct llcd_err e;

	if (l->cfg.cgroup_root) {
		if (!l->cfg.cgroup_root[0])
			return AGENT_OK;        /* "": never */
		snprintf(root, sizeof(root), "%s", l->cfg.cgroup_root);
	} else if (cgcpuset_root(l->cfg.proc_root, root, sizeof(root)) < 0) {
		return AGENT_OK;                /* no cgroup v2: nothing restricts */
	}
	if (cgcpuset_dir(l->cfg.proc_root, root, d->pid, dir, sizeof(dir), &e) < 0)
		return AGENT_OK;                /* a v1-only process: nothing to do */
	switch (cgcpuset_allow(dir, cpus, &e)) {
	case CGCPUSET_OK:
		return AGENT_OK;
	case CGCPUSET_WIDENED:
		log_dom(LOG_INFO, d->name, -1, d->pid, "%s (the cgroup did not allow the pin)", e.msg);
		return AGENT_OK;
	case CGCPUSET_REFUSED:
		llcd_err_set(err, "%s", e.msg);
		return AGENT_PERMANENT;
	case CGCPUSET_ERROR:
		break;
	}
	llcd_err_set(err, "%s", e.msg);
	return AGENT_TRANSIENT;
}

enum agent_result
live_ext_pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus, struct llcd_err *err)
{
	struct procstat_task *tasks = NULL;
	enum procstat_status st;
	enum agent_result r;
	struct llcd_err e;
	int n = 0, npinned = 0;
	cpu_set_t *set;
	size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
	int cpu;

	if ((r = live_ext_cgroup(l, d, cpus, err)) != AGENT_OK)
		return r;
	st = procstat_list_tasks(l->ps, d->pid, &tasks, &n, &e);
	if (st == PROCSTAT_GONE) {
		llcd_err_set(err, "QEMU pid %d is gone", d->pid);
		return AGENT_GONE;
	}
	if (st != PROCSTAT_OK) {
		llcd_err_set(err, "listing the threads of QEMU pid %d: %s", d->pid, e.msg);
		return AGENT_TRANSIENT;
	}
	if ((set = CPU_ALLOC(CPUSET_MAX)) == NULL) {
		free(tasks);
		llcd_err_set(err, "out of memory");
		return AGENT_TRANSIENT;
	}
	CPU_ZERO_S(sz, set);
	CPUSET_FOREACH(cpu, cpus)
		CPU_SET_S((size_t)cpu, sz, set);
	r = AGENT_OK;
	for (int i = 0; i < n; i++) {
		bool vcpu = false;
		for (int k = 0; k < d->maxvcpus && !vcpu; k++)
			vcpu = d->ext_tids[k] == tasks[i].tid;
		if (vcpu)
			continue;
		if (sched_setaffinity(tasks[i].tid, sz, set) < 0) {
			if (errno == ESRCH)
				continue;       /* a worker thread that just ended */
			llcd_err_set(err, "sched_setaffinity of thread %d: %s", tasks[i].tid, strerror(errno));
			r = errno == EINVAL ? AGENT_PERMANENT : AGENT_TRANSIENT;
			break;
		}
		npinned++;
	}
	CPU_FREE(set);
	free(tasks);
	if (r == AGENT_OK)
		log_dom(LOG_DEBUG, d->name, -1, d->pid, "%d emulator thread%s pinned", npinned, npinned == 1 ? "" : "s");
	return r;
}
