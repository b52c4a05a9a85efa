// SPDX-License-Identifier: GPL-2.0-or-later
/* world_sched.c - the simulated schedulers of llcsim's world (world_int.h):
 * the load balancer every policy runs on, kernel-cas's cache-aware pull
 * (Linux 7.2 CONFIG_SCHED_CACHE), and the balance of one period. */
#include "world_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- the balancer ------------------------------------------------------- */

static void
add_load(struct sim_world *w, int pu, double u)
{
	w->pu_load[pu] += u;
	w->llc_load[w->topo->pu_llc[pu]] += u;
}

/* The least-loaded LLC the thread may use; ties broken by the seed. */
static int
least_llc(struct sim_world *w, const struct sim_thread *th)
{
	int best = -1, ties = 0;
	double min = INFINITY;

	for (int l = 0; l < w->nllc; l++) {
		if (!world_llc_ok(th, l))
			continue;
		if (w->llc_load[l] < min) {
			min = w->llc_load[l];
			best = l;
			ties = 1;
		} else if (w->llc_load[l] == min && sim_rng_below(&w->rng, (uint32_t)++ties) == 0) {
			best = l;
		}
	}
	return best;
}

static bool
core_idle(const struct sim_world *w, int c, int except_pu)
{
	for (int i = w->core_pu_start[c]; i < w->core_pu_start[c + 1]; i++) {
		int pu = w->core_pu[i];
		if (pu != except_pu && w->pu_load[pu] >= w->sc->model.busy_util)
			return false;
	}
	return true;
}

/* A PU of LLC l in the thread's allowed set: an idle core first (class 0),
 * then an idle PU (1), then the least-loaded PU (2), up to max_class. Ties
 * by the seed. except_pu is the thread's own PU (not a candidate, and its
 * load does not make its core busy). */
static int
pick_pu(struct sim_world *w, const struct sim_thread *th, int l, int max_class, int except_pu)
{
	const struct cpuset *a = world_allowed(w, th);
	const double busy = w->sc->model.busy_util;
	int best = -1, best_class = 3, ties = 0;
	double best_load = INFINITY;

	for (int i = w->llc_core_start[l]; i < w->llc_core_start[l + 1]; i++) {
		int c = w->llc_core[i];
		bool idle_core = core_idle(w, c, except_pu);
		for (int j = w->core_pu_start[c]; j < w->core_pu_start[c + 1]; j++) {
			int pu = w->core_pu[j];
			if (pu == except_pu || !cpuset_isset(a, pu))
				continue;
			double load = w->pu_load[pu];
			int cls = idle_core ? 0 : load < busy ? 1 : 2;
			if (cls > max_class)
				continue;
			if (cls < best_class || (cls == best_class && load < best_load)) {
				best = pu;
				best_class = cls;
				best_load = load;
				ties = 1;
			} else if (cls == best_class && load == best_load &&
			    sim_rng_below(&w->rng, (uint32_t)++ties) == 0) {
				best = pu;
			}
		}
	}
	return best;
}

static void
move_to(struct sim_world *w, struct sim_thread *th, int pu)
{
	add_load(w, th->pu, -th->demand);
	th->pu = pu;
	add_load(w, pu, th->demand);
}

static int
by_demand_desc(const void *a, const void *b, void *arg)
{
	const struct sim_thread *t = arg;
	int i = *(const int *)a, j = *(const int *)b;
	if (t[i].demand != t[j].demand)
		return t[i].demand > t[j].demand ? -1 : 1;
	return (i > j) - (i < j);
}

/* --- kernel-cas: Linux 7.2 CONFIG_SCHED_CACHE, one mm per QEMU process ---
 *
 * The rules are llcrules.c's kernel flavour (kernel = true), the same code
 * the engine and the guest helper use for theirs; the state is kept in the
 * kernel's integers: per-PU runtimes in ns shifted right once per epoch,
 * occupancy in NICE_0_LOAD units, LLC utilisation and capacity in
 * SCHED_CAPACITY_SCALE units per PU, nr_running_avg an integer EWMA
 * (llcrules_nr_avg_kernel(), which stalls short of a steady sample). */

#define KCAS_SCALE 1024UL       /* NICE_0_LOAD, SCHED_CAPACITY_SCALE */

static unsigned long
kcas_util(double u)
{
	return (unsigned long)(fmin(1.0, fmax(0.0, u)) * (double)KCAS_SCALE);
}

/* Σ cpu_util_cfs() over the LLC, in capacity units */
static unsigned long
llc_util(const struct sim_world *w, int l)
{
	unsigned long u = 0;
	for (int i = w->llc_core_start[l]; i < w->llc_core_start[l + 1]; i++) {
		int c = w->llc_core[i];
		for (int j = w->core_pu_start[c]; j < w->core_pu_start[c + 1]; j++)
			u += kcas_util(w->pu_load[w->core_pu[j]]);
	}
	return u;
}

/* can_migrate_llc() of the final fair.c: llcrules_can_migrate(), kernel flavour,
 * on the kernel's integer utilisation and capacity (exact in a double) */
static enum llc_mig
kcas_can_migrate(const struct sim_world *w, int src, int dst, double tu, bool to_pref)
{
	return llcrules_can_migrate(&w->krules, (double)llc_util(w, src),
	    (double)((unsigned long)w->llc_npu[src] * KCAS_SCALE), (double)llc_util(w, dst),
	    (double)((unsigned long)w->llc_npu[dst] * KCAS_SCALE), (double)kcas_util(tu), to_pref);
}

/* get_pref_llc(): no preferred LLC where it conflicts with the node of the
 * process's memory (NUMA balancing's preferred node; "NUMA wins") */
static int
kcas_pref_of(const struct sim_world *w, const struct sim_dom_state *D)
{
	if (D->pref_llc >= 0 && D->mem_numa >= 0 && w->topo->llc_numa[D->pref_llc] != D->mem_numa)
		return -1;
	return D->pref_llc;
}

static int
kcas_pref(const struct sim_world *w, const struct sim_thread *th)
{
	return w->policy == SIM_POLICY_KCAS ? kcas_pref_of(w, &w->dom[th->dom]) : -1;
}

/* LLC-preference pulls: up to pulls_per_s per process, each one task into
 * the preferred LLC when can_migrate_llc(src, pref, util, true) says so
 * (llc_balance() / migrate_llc_task, imbalance = 1 per pass). */
static void
kcas_pull(struct sim_world *w)
{
	const struct sim_model *m = &w->sc->model;

	for (int d = 0; d < w->sc->ndomains; d++) {
		struct sim_dom_state *D = &w->dom[d];
		int P = kcas_pref_of(w, D), n = 0;
		if (!D->active || P < 0)
			continue;
		D->pull_credit = fmin(D->pull_credit + m->kcas_pulls_per_s * w->dt_s,
		    fmax(1.0, m->kcas_pulls_per_s * w->dt_s));
		if (D->pull_credit < 1.0)
			continue;
		for (int v = 0; v < D->nthreads; v++) {         /* QEMU threads too */
			struct sim_thread *th = &w->threads[D->base + v];
			if (th->demand >= m->kcas_min_util && th->pu >= 0 &&
			    w->topo->pu_llc[th->pu] != P && world_llc_ok(th, P))
				w->scratch[n++] = D->base + v;
		}
		qsort_r(w->scratch, (size_t)n, sizeof(int), by_demand_desc, w->threads);
		for (int k = 0; k < n && D->pull_credit >= 1.0; k++) {
			struct sim_thread *th = &w->threads[w->scratch[k]];
			if (kcas_can_migrate(w, w->topo->pu_llc[th->pu], P, th->demand, true) != LLC_MIG_LLC)
				continue;
			int pu = pick_pu(w, th, P, 2, -1);
			if (pu < 0)
				continue;
			move_to(w, th, pu);
			D->pull_credit -= 1.0;
		}
	}
}

static uint64_t
shr_u64(uint64_t v, int n)
{
	return n >= 64 ? 0 : v >> n;
}

/* nr_running at one scan: the process's threads on a CPU at that instant
 * (vCPUs and QEMU threads: the kernel counts every thread of the mm),
 * each with the probability of its share of the period (its own draws),
 * at least the scanning thread itself */
static long
kcas_sample(struct sim_world *w, const struct sim_dom_state *D)
{
	long nr = 0;

	for (int v = 0; v < D->nthreads; v++) {
		const struct sim_thread *th = &w->threads[D->base + v];
		double p = (double)th->runtime_ns / (double)w->dt_ns;
		if (th->runtime_ns == 0)
			continue;
		nr += p >= 1.0 || sim_rng_unit(&w->krng) < p;
	}
	return nr > 0 ? nr : 1;
}

/* The period's epochs, as __update_mm_sched(), account_mm_sched() and
 * task_cache_work() would have run them: each epoch boundary halves the
 * per-PU runtimes (then the period's runtime is added) and starts one scan
 * of each process that ran. A scan first applies invalid_llc_nr() to the
 * average so far (failing it: no preference and, as in the kernel, no
 * update of the average, so it is final), then the 2x switch to the LLC of
 * the largest occupancy sum, then the integer EWMA of nr_running. */
void
world_kcas_update(struct sim_world *w)
{
	const struct sim_model *m = &w->sc->model;
	double epochs = w->sc->period_ms / m->kcas_epoch_ms;
	int llc_size = w->llc_npu[0], nep;
	uint64_t *occ = w->kcas_occ;

	w->kcas_epoch_credit += epochs;
	nep = (int)floor(w->kcas_epoch_credit + 1e-9);
	w->kcas_epoch_credit -= nep;
	for (int pu = 0; pu < w->npu; pu++)
		w->cpu_rt[pu] = shr_u64(w->cpu_rt[pu], nep) + w->pu_busy_ns[pu];
	for (int d = 0; d < w->sc->ndomains; d++) {
		struct sim_dom_state *D = &w->dom[d];
		const struct sim_domain *sd = &w->sc->domains[d];
		bool ran = false;
		if (!D->active)
			continue;
		for (int pu = 0; pu < w->npu; pu++)
			D->mm_rt[pu] = shr_u64(D->mm_rt[pu], nep);
		for (int v = 0; v < D->nthreads; v++) {
			struct sim_thread *th = &w->threads[D->base + v];
			if (th->runtime_ns == 0)
				continue;
			D->mm_rt[th->pu] += th->runtime_ns;
			ran = true;
		}
		int old = D->pref_llc;
		if (!ran) {
			/* no tick, no scan: the preference times out */
			D->idle_epochs += epochs;
			if (D->idle_epochs > m->kcas_affinity_timeout)
				D->pref_llc = -1;
		} else {
			int best = -1;
			D->idle_epochs = 0;
			for (int l = 0; l < w->nllc; l++)
				occ[l] = 0;
			for (int pu = 0; pu < w->npu; pu++)  /* fraction_mm_sched() */
				if (D->mm_rt[pu] > 0 && w->topo->pu_llc[pu] >= 0)
					occ[w->topo->pu_llc[pu]] += KCAS_SCALE * D->mm_rt[pu] / (w->cpu_rt[pu] + 1);
			for (int l = 0; l < w->nllc; l++)
				if (best < 0 || occ[l] > occ[best])
					best = l;
			for (int s = 0; s < nep; s++) {
				if (llcrules_invalid_nr(&w->krules, D->nthreads, (double)D->nr_avg, llc_size)) {
					D->pref_llc = -1;
					break;
				}
				/* the occupancy is the period's: only the first scan can switch */
				if (s == 0 && occ[best] > 0 &&
				    llcrules_should_switch((double)occ[best], D->pref_llc >= 0 ? (double)occ[D->pref_llc] : 0))
					D->pref_llc = best;
				D->nr_avg = llcrules_nr_avg_kernel(D->nr_avg, kcas_sample(w, D), llc_size);
			}
			/* account_mm_sched() checks the guard on every runtime update */
			if (llcrules_invalid_nr(&w->krules, D->nthreads, (double)D->nr_avg, llc_size))
				D->pref_llc = -1;
		}
		if (D->pref_llc != old) {
			if (D->pref_llc >= 0)
				D->pref_switches++;
			if (w->trace)
				fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"pref_llc\":%d}\n",
				    (double)w->period * w->dt_s, sd->name, D->pref_llc);
		}
	}
}

/* --- the balance of one period ------------------------------------------ */

void
world_balance(struct sim_world *w)
{
	const struct sim_model *m = &w->sc->model;
	int nact = 0, nnew = 0;

	memset(w->pu_load, 0, sizeof(double) * (size_t)w->npu);
	memset(w->llc_load, 0, sizeof(double) * (size_t)w->nllc);
	/* 1. threads that keep their PU */
	for (int i = 0; i < w->nthreads; i++) {
		struct sim_thread *th = &w->threads[i];
		if (!w->dom[th->dom].active || th->demand <= 0)
			continue;
		if (th->llcs_dirty)
			world_refresh_llcs(w, th);
		w->order[nact++] = i;
		if (th->pu >= 0 && cpuset_isset(world_allowed(w, th), th->pu))
			add_load(w, th->pu, th->demand);
		else
			w->scratch[nnew++] = i;
	}
	/* 2. new threads, and threads whose affinity no longer allows their
	 * PU: the least-loaded LLC of their set, an idle core first */
	for (int k = 0; k < nnew; k++) {
		struct sim_thread *th = &w->threads[w->scratch[k]];
		int l = least_llc(w, th), pu = l >= 0 ? pick_pu(w, th, l, 2, -1) : -1;
		if (pu < 0) {           /* affinity outside the host: never happens (checked on pin) */
			th->demand = 0;
			continue;
		}
		th->pu = pu;
		add_load(w, pu, th->demand);
	}
	/* 3. LLC imbalance: biggest demands first */
	qsort_r(w->order, (size_t)nact, sizeof(int), by_demand_desc, w->threads);
	for (int k = 0; k < nact; k++) {
		struct sim_thread *th = &w->threads[w->order[k]];
		if (th->demand <= 0)
			continue;
		int L = w->topo->pu_llc[th->pu], M = least_llc(w, th);
		/* the difference in busy threads, fractional demands counted in
		 * proportion and rounded to the nearest whole thread (the
		 * kernel compares whole runnable tasks) */
		if (M < 0 || M == L || w->llc_load[L] - w->llc_load[M] < m->imbalance - 0.5)
			continue;
		int P = kcas_pref(w, th);
		if (P >= 0 && L == P && kcas_can_migrate(w, L, M, th->demand, false) == LLC_MIG_FORBID)
			continue;       /* do not migrate out of the preferred LLC */
		if (P >= 0 && M == P && kcas_can_migrate(w, L, M, th->demand, true) == LLC_MIG_FORBID)
			continue;
		int pu = pick_pu(w, th, M, 2, -1);
		if (pu >= 0)
			move_to(w, th, pu);
	}
	/* 4. kernel-cas LLC-preference pulls */
	if (w->policy == SIM_POLICY_KCAS)
		kcas_pull(w);
	/* 5. a busy thread sharing a PU with another busy thread moves to an
	 * idle core of its LLC, else to an idle PU of it; a busy thread whose
	 * SMT sibling is busy moves to an idle core of its LLC (the kernel's
	 * balancing between the cores of an LLC; docs/llcsim.md) */
	for (int k = 0; k < nact; k++) {
		struct sim_thread *th = &w->threads[w->order[k]];
		int pu = -1;
		if (th->demand < m->busy_util)
			continue;
		if (w->pu_load[th->pu] - th->demand >= m->busy_util)
			pu = pick_pu(w, th, w->topo->pu_llc[th->pu], 1, th->pu);
		else if (!core_idle(w, w->topo->pu_core[th->pu], th->pu))
			pu = pick_pu(w, th, w->topo->pu_llc[th->pu], 0, th->pu);
		if (pu >= 0)
			move_to(w, th, pu);
	}
}
