// SPDX-License-Identifier: GPL-2.0-or-later
/* gaggr.c - preferred-LLC hysteresis inside the guest (see gaggr.h). */
#include "gaggr.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define GAGGR_MAX_PROCS 256     /* processes tracked at once */

struct aproc {
	int pid;
	char comm[GSCAN_COMM];
	double *occ;            /* per LLC */
	int pref;               /* preferred LLC, -1 none */
	int confined;           /* LLC its threads are confined to, -1 none */
	double nr_avg;
	bool nr_init;
	int idle;               /* periods not hot */
	bool seen;
	bool guarded;
};

struct gaggr {
	const struct gtopo *topo;
	struct gaggr_opts o;
	int n;
	struct aproc p[GAGGR_MAX_PROCS];
};

void
gaggr_opts_default(struct gaggr_opts *o, const struct gtopo *t)
{
	memset(o, 0, sizeof(*o));
	o->rules.aggr_tolerance = 1;
	o->rules.imb_pct = 20;
	o->rules.smt = t && t->smt > 0 ? t->smt : 1;
	o->rules.kernel = false;
	o->timeout = 5;
}

static int
sys_setaff(int tid, const struct cpuset *cpus, void *arg)
{
	cpu_set_t *set;
	size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
	int c, rc;

	(void)arg;
	set = CPU_ALLOC(CPUSET_MAX);
	if (!set)
		return -1;
	CPU_ZERO_S(sz, set);
	CPUSET_FOREACH(c, cpus)
		CPU_SET_S((size_t)c, sz, set);
	rc = sched_setaffinity(tid, sz, set);
	CPU_FREE(set);
	return rc;
}

struct gaggr *
gaggr_new(const struct gtopo *topo, const struct gaggr_opts *o)
{
	struct gaggr *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->topo = topo;
	if (o)
		a->o = *o;
	else
		gaggr_opts_default(&a->o, topo);
	if (!a->o.setaff)
		a->o.setaff = sys_setaff;
	return a;
}

void
gaggr_free(struct gaggr *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n; i++)
		free(a->p[i].occ);
	free(a);
}

static void
say(struct gaggr *a, const struct aproc *p, const char *what, const char *detail)
{
	if (a->o.log)
		fprintf(a->o.log, "llc-guest: aggregate pid %d (%s): %s%s\n", p->pid, p->comm,
		        what, detail);
}

/* Set every thread of pid (in snap) to cpus; returns failures (ESRCH, a
 * thread that just exited, is not one). */
static int
set_threads(struct gaggr *a, const struct gscan_snap *snap, int pid,
            const struct cpuset *cpus, const struct cpuset *skip_inside)
{
	const struct gscan_proc *p = gscan_find(snap, pid);
	int fails = 0;

	if (!p || a->o.dry_run)
		return 0;
	for (int k = 0; k < p->nth; k++) {
		const struct gscan_thread *t = &snap->threads[p->first + k];

		if (skip_inside && t->cpu >= 0 && cpuset_isset(skip_inside, t->cpu))
			continue;
		if (a->o.setaff(t->tid, cpus, a->o.setaff_arg) < 0 && errno != ESRCH) {
			if (a->o.log)
				fprintf(a->o.log, "llc-guest: aggregate pid %d tid %d: sched_setaffinity: %s\n",
				        pid, t->tid, strerror(errno));
			fails++;
		}
	}
	return fails;
}

static int
release(struct gaggr *a, struct aproc *p, const struct gscan_snap *snap, const char *why)
{
	char list[256], msg[400];
	int fails;

	if (p->confined < 0)
		return 0;
	cpuset_format(&a->topo->online, list, sizeof(list));
	snprintf(msg, sizeof(msg), " (%s): threads back on CPUs %s", why, list);
	say(a, p, "release", msg);
	fails = set_threads(a, snap, p->pid, &a->topo->online, NULL);
	p->confined = -1;
	return fails;
}

static struct aproc *
find_or_add(struct gaggr *a, const struct gscan_hot *h)
{
	for (int i = 0; i < a->n; i++) {
		if (a->p[i].pid == h->pid && strcmp(a->p[i].comm, h->comm) == 0)
			return &a->p[i];
	}
	if (a->n == GAGGR_MAX_PROCS)
		return NULL;
	struct aproc *p = &a->p[a->n];
	memset(p, 0, sizeof(*p));
	p->occ = calloc((size_t)(a->topo->nllc > 0 ? a->topo->nllc : 1), sizeof(double));
	if (!p->occ)
		return NULL;
	p->pid = h->pid;
	memcpy(p->comm, h->comm, sizeof(p->comm));
	p->pref = p->confined = -1;
	a->n++;
	return p;
}

static void
drop(struct gaggr *a, int i)
{
	free(a->p[i].occ);
	a->p[i] = a->p[a->n - 1];
	a->n--;
}

int
gaggr_step(struct gaggr *a, const struct gscan_hotlist *hot,
           const struct gscan_snap *cur)
{
	const struct gtopo *t = a->topo;
	int fails = 0;
	char msg[400], list[256];

	for (int i = 0; i < a->n; i++)
		a->p[i].seen = false;
	for (int i = 0; i < hot->n; i++) {
		const struct gscan_hot *h = &hot->p[i];
		struct aproc *p = find_or_add(a, h);
		int best = 0, w;

		if (!p)
			continue;
		p->seen = true;
		p->idle = 0;
		for (int l = 0; l < t->nllc; l++)
			p->occ[l] *= 0.5;                       /* epoch = one period */
		for (int k = 0; k < h->nth; k++) {
			int l = gtopo_llc_of(t, h->th[k].cpu);

			if (l >= 0)
				p->occ[l] += h->th[k].util;
		}
		for (int l = 1; l < t->nllc; l++) {
			if (p->occ[l] > p->occ[best])
				best = l;
		}
		w = cpuset_count(&t->llc[p->pref >= 0 ? p->pref : best]);
		if (!p->nr_init) {
			p->nr_avg = h->share;
			p->nr_init = true;
		} else {
			p->nr_avg += (h->share - p->nr_avg) / llcrules_nr_avg_div(w);
		}
		if (t->nllc < 2)
			continue;               /* one LLC: nothing to aggregate */
		if (llcrules_invalid_nr(&a->o.rules, h->busy_threads, p->nr_avg, w)) {
			if (!p->guarded) {
				snprintf(msg, sizeof(msg), ": %d busy threads, %.2f CPUs in use, LLC of %d CPUs (SMT%d)",
				         h->busy_threads, p->nr_avg, w, a->o.rules.smt);
				say(a, p, "size guard", msg);
			}
			p->guarded = true;
			p->pref = -1;
			fails += release(a, p, cur, "does not fit one LLC");
			continue;
		}
		p->guarded = false;
		if (best != p->pref && (p->pref < 0 || llcrules_should_switch(p->occ[best], p->occ[p->pref]))) {
			snprintf(msg, sizeof(msg), " %d (occupancy %.2f, was %d at %.2f)", best,
			         p->occ[best], p->pref, p->pref >= 0 ? p->occ[p->pref] : 0.0);
			say(a, p, "prefer LLC", msg);
			p->pref = best;
		}
		if (p->confined != p->pref) {
			cpuset_format(&t->llc[p->pref], list, sizeof(list));
			snprintf(msg, sizeof(msg), " %d threads to LLC %d (CPUs %s)%s", h->nth, p->pref, list,
			         a->o.dry_run ? " [report-only: not applied]" : "");
			say(a, p, "confine", msg);
			fails += set_threads(a, cur, p->pid, &t->llc[p->pref], NULL);
			p->confined = p->pref;
		} else {
			/* new threads, or threads someone moved: only those outside */
			fails += set_threads(a, cur, p->pid, &t->llc[p->pref], &t->llc[p->pref]);
		}
	}
	for (int i = 0; i < a->n; i++) {
		struct aproc *p = &a->p[i];
		const struct gscan_proc *sp;

		if (p->seen)
			continue;
		sp = gscan_find(cur, p->pid);
		if (!sp || strcmp(sp->comm, p->comm) != 0) {
			p->confined = -1;               /* gone: nothing to release */
			drop(a, i--);
			continue;
		}
		if (++p->idle < a->o.timeout)
			continue;
		fails += release(a, p, cur, "no longer hot");
		drop(a, i--);
	}
	return fails;
}

int
gaggr_confined(const struct gaggr *a, int pid)
{
	for (int i = 0; i < a->n; i++) {
		if (a->p[i].pid == pid)
			return a->p[i].confined;
	}
	return -1;
}

void
gaggr_release_all(struct gaggr *a, const struct gscan_snap *cur)
{
	for (int i = 0; i < a->n; i++)
		release(a, &a->p[i], cur, "llc-guest exits");
}
