// SPDX-License-Identifier: GPL-2.0-or-later
/* world.c - the simulated host and its cost model (spec/llcsim.md,
 * "The simulated world"; choices the spec leaves open: docs/llcsim.md). */
#include "world.h"
#include "names.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

LLCD_NAMES(sim_policy, enum sim_policy, SIM_POLICY_KCAS,
    [SIM_POLICY_LLCD] = "llcd", [SIM_POLICY_NONE] = "none", [SIM_POLICY_STATIC] = "static",
    [SIM_POLICY_KCAS] = "kernel-cas")

/* --- pure pieces of the cost model -------------------------------------- */

double
sim_smt_factor(const struct sim_model *m, int k)
{
	if (k <= 1)
		return m->smt_share[0];
	return m->smt_share[k >= 4 ? 3 : k - 1];
}

/* 1 / (1 + s * x), x the fraction of pairs of busy threads on different LLCs. */
double
sim_sharing_factor(double sharing, int n, const int *llc)
{
	long pairs = (long)n * (n - 1) / 2, same = 0;

	if (n < 2 || sharing <= 0)
		return 1.0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			same += llc[i] == llc[j];
	return 1.0 / (1.0 + sharing * (double)(pairs - same) / (double)pairs);
}

/* --- set-up ------------------------------------------------------------- */

void
sim_world_free(struct sim_world *w)
{
	if (w == NULL)
		return;
	if (w->dom)
		for (int d = 0; d < w->sc->ndomains; d++)
			free(w->dom[d].mm_rt);
	if (w->wake)
		for (int d = 0; d < w->sc->ndomains; d++)
			free(w->wake[d].edges);
	free(w->wake);
	free(w->wdraw);
	free(w->wcount);
	free(w->core_pu_start);
	free(w->core_pu);
	free(w->llc_core_start);
	free(w->llc_core);
	free(w->llc_npu);
	free(w->pu_load);
	free(w->llc_load);
	free(w->llc_bw);
	free(w->pu_first);
	free(w->pu_busy_ns);
	free(w->cpu_rt);
	free(w->kcas_occ);
	free(w->llc_count);
	free(w->core_owner);
	free(w->scratch);
	free(w->threads);
	free(w->llc_pool);
	free(w->dom);
	free(w->grp);
	free(w->order);
	free(w->changes);
	free(w);
}

static void *
xcalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

#define ALLOC(p, n) (((p) = xcalloc((size_t)(n), sizeof(*(p)))) != NULL)

struct sim_world *
sim_world_new(const struct sim_scenario *sc, const struct topo *t, enum sim_policy policy,
              uint64_t seed, const struct policy_annotation *annots, const bool *annotated,
              FILE *trace, struct llcd_err *err)
{
	struct sim_world *w = calloc(1, sizeof(*w));
	int n;

	if (w == NULL)
		goto oom;
	w->sc = sc;
	w->topo = t;
	w->policy = policy;
	w->trace = trace;
	sim_rng_seed(&w->rng, seed);
	sim_rng_seed(&w->wrng, seed ^ 0x77616b6575707321ULL);     /* "wakeups!" */
	sim_rng_seed(&w->krng, seed ^ 0x6b65726e656c6e72ULL);     /* "kernelnr" */
	w->krules = (struct llc_rules){
		.aggr_tolerance = sc->model.kcas_aggr_tolerance,
		.overaggr_pct = sc->model.kcas_overaggr_pct,
		.imb_pct = sc->model.kcas_imb_pct,
		.smt = t->smt,
		.kernel = true,
	};
	w->npu = t->max_cpu + 1;
	w->ncore = topo_count(t, TOPO_CORE);
	w->nllc = topo_count(t, TOPO_LLC);
	w->llc_words = (w->nllc + 63) / 64;
	cpuset_andnot(&w->usable, &t->all, &sc->reserved);
	if (cpuset_empty(&w->usable)) {
		llcd_err_set(err, "host.reserved_cpus: leaves no CPU for vCPUs");
		sim_world_free(w);
		return NULL;
	}
	if (!ALLOC(w->core_pu_start, w->ncore + 1) || !ALLOC(w->core_pu, w->npu) ||
	    !ALLOC(w->llc_core_start, w->nllc + 1) || !ALLOC(w->llc_core, w->ncore) ||
	    !ALLOC(w->llc_npu, w->nllc) || !ALLOC(w->pu_load, w->npu) ||
	    !ALLOC(w->llc_load, w->nllc) || !ALLOC(w->llc_bw, w->nllc) ||
	    !ALLOC(w->pu_first, w->npu) || !ALLOC(w->pu_busy_ns, w->npu) ||
	    !ALLOC(w->cpu_rt, w->npu) || !ALLOC(w->kcas_occ, w->nllc) || !ALLOC(w->llc_count, w->nllc) ||
	    !ALLOC(w->core_owner, w->ncore) || !ALLOC(w->dom, sc->ndomains) ||
	    !ALLOC(w->grp, sc->ngroups))
		goto oom;
	if (sc->wakeup_trace) {
		if (!ALLOC(w->wake, sc->ndomains))
			goto oom;
		for (int d = 0; d < sc->ndomains; d++)
			if (!ALLOC(w->wake[d].edges, POLICY_WAKEUP_EDGES))
				goto oom;
	}
	n = 0;
	for (int c = 0; c < w->ncore; c++) {
		const struct topo_node *core = topo_get(t, TOPO_CORE, c);
		int pu;
		w->core_pu_start[c] = n;
		CPUSET_FOREACH(pu, &core->cpus)
			w->core_pu[n++] = pu;
	}
	w->core_pu_start[w->ncore] = n;
	n = 0;
	for (int l = 0; l < w->nllc; l++) {
		w->llc_core_start[l] = n;
		for (int c = 0; c < w->ncore; c++)
			if (t->pu_llc[w->core_pu[w->core_pu_start[c]]] == l)
				w->llc_core[n++] = c;
		w->llc_npu[l] = topo_llc_weight(t, l);
	}
	w->llc_core_start[w->nllc] = n;

	w->nthreads = 0;
	for (int d = 0; d < sc->ndomains; d++) {
		w->dom[d].base = w->nthreads;
		w->dom[d].nthreads = sc->domains[d].nvcpus + sc->domains[d].qemu_count;
		w->nthreads += w->dom[d].nthreads;
	}
	if (!ALLOC(w->threads, w->nthreads) || !ALLOC(w->order, w->nthreads) ||
	    !ALLOC(w->scratch, w->nthreads + w->nllc) ||
	    !ALLOC(w->llc_pool, (size_t)w->nthreads * (size_t)w->llc_words))
		goto oom;
	for (int d = 0; d < sc->ndomains; d++) {
		struct sim_dom_state *D = &w->dom[d];
		D->key = (uint64_t)d + 1;
		D->pref_llc = -1;
		D->annotated = annotated ? annotated[d] : false;
		if (D->annotated)
			D->annot = annots[d];
		else
			policy_annotation_defaults(&D->annot);
		D->isolated = D->annotated && D->annot.isolation == POLICY_ISO_CORE;
		D->mem_numa = -1;
		if (sc->domains[d].memory_node >= 0 &&
		    (D->mem_numa = topo_numa_by_os(t, sc->domains[d].memory_node)) < 0) {
			llcd_err_set(err, "domains[%d].memory_node: the host has no NUMA node %d", d,
			    sc->domains[d].memory_node);
			sim_world_free(w);
			return NULL;
		}
		if (policy == SIM_POLICY_KCAS && !ALLOC(D->mm_rt, w->npu))
			goto oom;
		int nv = sc->domains[d].nvcpus, q = 0;
		for (int v = 0; v < D->nthreads; v++) {
			struct sim_thread *th = &w->threads[D->base + v];
			th->dom = d;
			th->vcpu = v < nv ? v : -1;
			th->qemu = v < nv ? -1 : v - nv;
			th->group = -1;
			th->pu = th->trace_pu = th->last_llc = -1;
			th->llcs = &w->llc_pool[(size_t)(D->base + v) * (size_t)w->llc_words];
			th->llcs_dirty = true;
		}
		for (int e = 0; e < sc->domains[d].nqemu; e++)
			for (int k = 0; k < sc->domains[d].qemu[e].count; k++)
				w->threads[D->base + nv + q++].qemu_util = sc->domains[d].qemu[e].util;
	}
	for (int g = 0; g < sc->ngroups; g++) {
		w->grp[g].first_busy_s = w->grp[g].unsettled_until = -1;
		w->grp[g].last_spread = 0;
	}
	w->dt_s = sc->period_ms / 1000.0;
	w->dt_ns = (uint64_t)llround(sc->period_ms * 1e6);
	w->nperiods = (long)ceil(sc->duration_s / w->dt_s - 1e-9);
	w->pins_dirty = true;
	if (trace)
		fprintf(trace, "{\"scenario\":\"%s\",\"policy\":\"%s\",\"seed\":%llu,\"period_ms\":%g,"
		    "\"periods\":%ld,\"topology\":\"%s\"}\n", sc->name, sim_policy_name(policy),
		    (unsigned long long)seed, sc->period_ms, w->nperiods, sc->topology);
	return w;
oom:
	sim_world_free(w);
	llcd_err_set(err, "llcsim: out of memory");
	return NULL;
}

uint64_t
sim_world_now_ns(const struct sim_world *w)
{
	return (uint64_t)w->period * w->dt_ns;
}

void
sim_world_violation(struct sim_world *w, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->nviol_total++;
	for (int i = 0; i < w->nviol; i++)
		if (strcmp(strchr(w->viol[i], ' ') + 1, msg) == 0)
			return;         /* reported once, with its first time */
	if (w->nviol < SIM_MAX_VIOLATIONS)
		snprintf(w->viol[w->nviol++], sizeof(w->viol[0]), "t=%.3fs %s",
		    (double)w->period * w->dt_s, msg);
	if (w->trace)
		fprintf(w->trace, "{\"t\":%.3f,\"violation\":\"%s\"}\n", (double)w->period * w->dt_s, msg);
}

/* --- affinity ------------------------------------------------------------ */

/* Record an affinity change of thread i (before it is made). */
static void
change_push(struct sim_world *w, int i, bool pinned, const struct cpuset *pin)
{
	const struct sim_thread *th = &w->threads[i];

	if (w->nchanges == w->changes_cap) {
		int ncap = w->changes_cap ? 2 * w->changes_cap : 64;
		struct sim_pin_change *c = realloc(w->changes, sizeof(*c) * (size_t)ncap);
		if (c == NULL) {
			w->changes_lost = true;
			return;
		}
		w->changes = c;
		w->changes_cap = ncap;
	}
	struct sim_pin_change *c = &w->changes[w->nchanges++];
	c->thread = i;
	c->was_pinned = th->pinned;
	c->was = th->pin;
	c->pinned = pinned;
	if (pinned)
		c->pin = *pin;
	else
		cpuset_zero(&c->pin);
}

/* The emulator pin changed: the domain's QEMU threads' allowed set too. */
static void
emulator_dirty(struct sim_world *w, int d)
{
	const struct sim_dom_state *D = &w->dom[d];

	for (int v = w->sc->domains[d].nvcpus; v < D->nthreads; v++)
		w->threads[D->base + v].llcs_dirty = true;
}

int
sim_world_pin(struct sim_world *w, int d, int v, const struct cpuset *cpus, struct llcd_err *err)
{
	struct sim_thread *th;
	struct cpuset missing;

	if (d < 0 || d >= w->sc->ndomains || v < 0 || v >= w->sc->domains[d].nvcpus)
		return llcd_err_set(err, "no vCPU %d in domain %d", v, d);
	th = &w->threads[w->dom[d].base + v];
	cpuset_andnot(&missing, cpus, &w->topo->all);
	if (cpuset_empty(cpus) || !cpuset_empty(&missing)) {
		char buf[128];
		cpuset_format(cpuset_empty(cpus) ? cpus : &missing, buf, sizeof(buf));
		sim_world_violation(w, "host-cpu: domain '%s' vCPU %d pinned to CPU(s) '%s' the host lacks",
		    w->sc->domains[d].name, v, buf);
		return llcd_err_set(err, "CPU(s) '%s' do not exist", buf);
	}
	if (th->pinned && cpuset_equal(&th->pin, cpus))
		return 0;
	change_push(w, w->dom[d].base + v, true, cpus);
	th->pinned = true;
	th->pin = *cpus;
	th->llcs_dirty = true;
	w->pins_dirty = true;
	return 0;
}

void
sim_world_unpin(struct sim_world *w, int d)
{
	for (int v = 0; v < w->sc->domains[d].nvcpus; v++) {
		struct sim_thread *th = &w->threads[w->dom[d].base + v];
		if (th->pinned) {
			change_push(w, w->dom[d].base + v, false, NULL);
			th->pinned = false;
			th->llcs_dirty = true;
		}
	}
	w->dom[d].emu_pinned = false;
	emulator_dirty(w, d);
	w->pins_dirty = true;
}

int
sim_world_pin_emulator(struct sim_world *w, int d, const struct cpuset *cpus, struct llcd_err *err)
{
	struct cpuset missing;

	cpuset_andnot(&missing, cpus, &w->topo->all);
	if (cpuset_empty(cpus) || !cpuset_empty(&missing)) {
		char buf[128];
		cpuset_format(cpuset_empty(cpus) ? cpus : &missing, buf, sizeof(buf));
		sim_world_violation(w, "host-cpu: domain '%s' emulator pinned to CPU(s) '%s' the host lacks",
		    w->sc->domains[d].name, buf);
		return llcd_err_set(err, "CPU(s) '%s' do not exist", buf);
	}
	if (w->dom[d].emu_pinned && cpuset_equal(&w->dom[d].emu_pin, cpus))
		return 0;
	w->dom[d].emu_pinned = true;
	w->dom[d].emu_pin = *cpus;
	emulator_dirty(w, d);
	return 0;
}

/* A vCPU: its pin, else every non-reserved PU. A QEMU thread: the
 * domain's emulator pin, else every non-reserved PU. */
static const struct cpuset *
allowed(const struct sim_world *w, const struct sim_thread *th)
{
	if (th->vcpu < 0)
		return w->dom[th->dom].emu_pinned ? &w->dom[th->dom].emu_pin : &w->usable;
	return th->pinned ? &th->pin : &w->usable;
}

static bool
llc_ok(const struct sim_thread *th, int l)
{
	return (th->llcs[l / 64] >> (l % 64)) & 1;
}

static void
refresh_llcs(struct sim_world *w, struct sim_thread *th)
{
	const struct cpuset *a = allowed(w, th);
	int pu;

	memset(th->llcs, 0, sizeof(uint64_t) * (size_t)w->llc_words);
	CPUSET_FOREACH(pu, a) {
		if (pu > w->topo->max_cpu || w->topo->pu_llc[pu] < 0)
			continue;
		int l = w->topo->pu_llc[pu];
		th->llcs[l / 64] |= 1ULL << (l % 64);
	}
	th->llcs_dirty = false;
}

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
		if (!llc_ok(th, l))
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
	const struct cpuset *a = allowed(w, th);
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
			    w->topo->pu_llc[th->pu] != P && llc_ok(th, P))
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
static void
kcas_update(struct sim_world *w)
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

/* --- one period ---------------------------------------------------------- */

static void
lifecycle(struct sim_world *w, double t)
{
	for (int d = 0; d < w->sc->ndomains; d++) {
		const struct sim_domain *sd = &w->sc->domains[d];
		struct sim_dom_state *D = &w->dom[d];
		bool on = t + 1e-9 >= sd->start_s && t + 1e-9 < sd->stop_s;
		if (on == D->active)
			continue;
		D->active = on;
		D->ever = D->ever || on;
		w->pins_dirty = true;
		for (int v = 0; v < D->nthreads; v++) {
			struct sim_thread *th = &w->threads[D->base + v];
			if (!on && w->trace && th->trace_pu >= 0)
				fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"%s\":%d,\"pu\":-1,\"llc\":-1}\n",
				    t, sd->name, th->vcpu >= 0 ? "vcpu" : "qemu_thread", th->vcpu >= 0 ? th->vcpu : th->qemu);
			th->pu = th->trace_pu = th->last_llc = -1;
			th->pinned = false;
			th->llcs_dirty = true;
			th->demand = 0;
			th->runtime_ns = th->instructions = 0;
		}
		D->emu_pinned = false;
		D->pref_llc = -1;
		D->nr_avg = 0;
		D->idle_epochs = D->pull_credit = 0;
		if (D->mm_rt)
			memset(D->mm_rt, 0, sizeof(*D->mm_rt) * (size_t)w->npu);
	}
}

static void
demands(struct sim_world *w, double t)
{
	for (int d = 0; d < w->sc->ndomains; d++) {
		const struct sim_domain *sd = &w->sc->domains[d];
		struct sim_dom_state *D = &w->dom[d];
		if (!D->active)
			continue;
		for (int v = 0; v < D->nthreads; v++) {
			struct sim_thread *th = &w->threads[D->base + v];
			th->demand = th->bw = th->wake_hz = 0;
			th->group = -1;
			if (th->vcpu < 0)       /* a QEMU thread: its util, always */
				th->demand = th->qemu_util;
		}
		for (int i = 0; i < sd->nload; i++) {
			const struct sim_load *l = &sd->load[i];
			int v;
			if (!(t + 1e-9 >= l->from_s && t + 1e-9 < l->to_s))
				continue;
			CPUSET_FOREACH(v, &l->vcpus) {
				struct sim_thread *th = &w->threads[D->base + v];
				th->demand = fmin(1.0, th->demand + l->util);
				th->bw += l->bw_gbs;
				if (l->group >= 0) {
					th->group = l->group;
					th->wake_hz += l->wakeups_hz;
				}
			}
		}
	}
}

static void
balance(struct sim_world *w)
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
			refresh_llcs(w, th);
		w->order[nact++] = i;
		if (th->pu >= 0 && cpuset_isset(allowed(w, th), th->pu))
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

static void
account(struct sim_world *w, double t)
{
	const struct sim_model *m = &w->sc->model;
	const double busy = m->busy_util;
	FILE *tr = w->trace;

	/* per-PU thread lists, observed busy time, per-LLC bandwidth */
	for (int pu = 0; pu < w->npu; pu++) {
		w->pu_first[pu] = -1;
		w->pu_busy_ns[pu] = (uint64_t)llround(fmin(1.0, w->pu_load[pu]) * (double)w->dt_ns);
	}
	memset(w->llc_bw, 0, sizeof(double) * (size_t)w->nllc);
	for (int i = w->nthreads - 1; i >= 0; i--) {
		struct sim_thread *th = &w->threads[i];
		th->runtime_ns = th->instructions = th->run_delay_ns = 0;
		th->rate = th->bw_got = 0;
		if (!w->dom[th->dom].active || th->demand <= 0)
			continue;
		th->next_on_pu = w->pu_first[th->pu];
		w->pu_first[th->pu] = i;
		w->llc_bw[w->topo->pu_llc[th->pu]] += th->bw;
	}
	/* per-thread rate without the group factor */
	for (int c = 0; c < w->ncore; c++) {
		int k = 0;
		for (int j = w->core_pu_start[c]; j < w->core_pu_start[c + 1]; j++)
			k += w->pu_load[w->core_pu[j]] >= busy;
		double smt = sim_smt_factor(m, k);
		int ndom = 0, first_dom = -1;
		for (int j = w->core_pu_start[c]; j < w->core_pu_start[c + 1]; j++) {
			int pu = w->core_pu[j];
			double L = w->pu_load[pu];
			for (int i = w->pu_first[pu]; i >= 0; i = w->threads[i].next_on_pu) {
				struct sim_thread *th = &w->threads[i];
				int llc = w->topo->pu_llc[pu];
				double bwf = 1.0;
				th->cpu_frac = L > 1.0 ? 1.0 / L : 1.0;
				if (w->sc->llc_bw_gbs > 0 && w->llc_bw[llc] > w->sc->llc_bw_gbs)
					bwf = w->sc->llc_bw_gbs / w->llc_bw[llc];
				th->moved = th->last_llc >= 0 && th->last_llc != llc;
				int mn = w->dom[th->dom].mem_numa;
				th->rate = th->cpu_frac * smt * bwf * (th->moved ? m->migration : 1.0) *
				    (mn >= 0 && w->topo->pu_numa[pu] != mn ? m->remote_memory : 1.0);
				th->bw_got = th->bw * bwf;
				th->runtime_ns = (uint64_t)llround(th->demand * th->cpu_frac * (double)w->dt_ns);
				th->run_delay_ns = (uint64_t)llround(th->demand * fmax(0, 1 - 1 / L) *
				    (double)w->dt_ns);
				if (th->moved && th->vcpu >= 0) {     /* vCPU threads' moves */
					w->dom[th->dom].thread_llc_moves++;
					if (th->group >= 0)
						w->grp[th->group].llc_moves++;
				}
				th->last_llc = llc;
				if (th->demand >= busy && th->dom != first_dom) {
					if (first_dom < 0)
						first_dom = th->dom;
					else
						ndom = 2;
				}
			}
		}
		/* smt_shared_pu_s: busy PUs of a core that ran busy threads of
		 * two or more domains at once */
		if (ndom < 2)
			continue;
		for (int j = w->core_pu_start[c]; j < w->core_pu_start[c + 1]; j++) {
			int pu = w->core_pu[j], seen = -1;
			for (int i = w->pu_first[pu]; i >= 0; i = w->threads[i].next_on_pu) {
				struct sim_thread *th = &w->threads[i];
				if (th->demand >= busy && th->dom != seen) {
					w->dom[th->dom].smt_shared_pu_s += w->dt_s;
					seen = th->dom;
				}
			}
		}
	}
	/* groups: sharing slowdown, progress, spread */
	for (int g = 0; g < w->sc->ngroups; g++) {
		const struct sim_group *G = &w->sc->groups[g];
		struct sim_group_state *S = &w->grp[g];
		const struct sim_dom_state *D = &w->dom[G->domain];
		int v, n = 0, nbusy = 0, spread = 0;
		int *busy_llc = w->scratch;
		S->rate = 0;
		S->nbusy = S->spread = 0;
		if (!D->active)
			continue;
		CPUSET_FOREACH(v, &G->vcpus) {
			struct sim_thread *th = &w->threads[D->base + v];
			if (th->group == g && th->demand >= busy)
				busy_llc[nbusy++] = w->topo->pu_llc[th->pu];
		}
		double f = sim_sharing_factor(G->sharing, nbusy, busy_llc);
		for (int i = 0; i < nbusy; i++) {
			int l = busy_llc[i];
			if (w->llc_count[l]++ == 0)
				spread++;
		}
		for (int i = 0; i < nbusy; i++)
			w->llc_count[busy_llc[i]] = 0;
		double sum = 0, min = INFINITY;
		CPUSET_FOREACH(v, &G->vcpus) {
			struct sim_thread *th = &w->threads[D->base + v];
			if (th->group != g || th->demand <= 0)
				continue;
			th->rate *= f;
			sum += th->rate;
			min = fmin(min, th->rate);
			n++;
		}
		if (n == 0)
			continue;
		S->rate = G->barrier ? min : sum / n;
		S->progress += S->rate * w->dt_s;
		S->active_s += w->dt_s;
		S->nbusy = nbusy;
		S->spread = spread;
		if (nbusy > 0) {
			S->spread_sum += spread;
			S->spread_n++;
			if (S->first_busy_s < 0)
				S->first_busy_s = t;
			if (spread > 1)
				S->unsettled_until = t + w->dt_s;
			S->last_spread = spread;
		}
		if (tr)
			fprintf(tr, "{\"t\":%.3f,\"domain\":\"%s\",\"group\":\"%s\",\"rate\":%.6f,"
			    "\"busy\":%d,\"spread\":%d}\n", t, w->sc->domains[G->domain].name, G->name,
			    S->rate, nbusy, spread);
	}
	/* counters and trace of PU changes */
	for (int i = 0; i < w->nthreads; i++) {
		struct sim_thread *th = &w->threads[i];
		if (!w->dom[th->dom].active || th->demand <= 0)
			continue;
		th->instructions = (uint64_t)llround(th->rate * th->demand * w->dt_s * m->instructions_per_s);
		if (tr && th->pu != th->trace_pu)
			fprintf(tr, "{\"t\":%.3f,\"domain\":\"%s\",\"%s\":%d,\"pu\":%d,\"llc\":%d%s}\n",
			    t, w->sc->domains[th->dom].name, th->vcpu >= 0 ? "vcpu" : "qemu_thread",
			    th->vcpu >= 0 ? th->vcpu : th->qemu, th->pu, w->topo->pu_llc[th->pu],
			    th->moved ? ",\"llc_move\":true" : "");
		th->trace_pu = th->pu;
	}
}

/* Invariants: no two isolated domains on one core, no vCPU on a reserved
 * CPU. (A pin to a CPU the host lacks is caught when it is applied.) */
static void
invariants(struct sim_world *w)
{
	const struct cpuset *res = &w->sc->reserved;
	bool any_res = !cpuset_empty(res);

	/* vCPUs only: llcd puts isolated domains' emulator threads on the
	 * reserved CPUs, by design */
	for (int i = 0; any_res && i < w->nthreads; i++) {
		struct sim_thread *th = &w->threads[i];
		if (th->vcpu >= 0 && w->dom[th->dom].active && th->demand > 0 && cpuset_isset(res, th->pu))
			sim_world_violation(w, "reserved: domain '%s' vCPU %d ran on reserved CPU %d",
			    w->sc->domains[th->dom].name, th->vcpu, th->pu);
	}
	if (!w->pins_dirty)
		return;
	w->pins_dirty = false;
	for (int c = 0; c < w->ncore; c++)
		w->core_owner[c] = -1;
	/* pass 1: cores of isolated domains the engine placed (a refused one
	 * is unmanaged: it is reported and runs in the shared pool) */
	for (int i = 0; i < w->nthreads; i++) {
		struct sim_thread *th = &w->threads[i];
		const struct sim_dom_state *D = &w->dom[th->dom];
		int pu;
		if (!D->active || !th->pinned)
			continue;
		if (any_res && cpuset_intersects(&th->pin, res)) {
			struct cpuset both;
			char buf[64];
			cpuset_and(&both, &th->pin, res);
			cpuset_format(&both, buf, sizeof(buf));
			sim_world_violation(w, "reserved: domain '%s' vCPU %d pinned to reserved CPU(s) %s",
			    w->sc->domains[th->dom].name, th->vcpu, buf);
		}
		if (!D->isolated || !D->iso_managed)
			continue;
		CPUSET_FOREACH(pu, &th->pin) {
			int c = w->topo->pu_core[pu];
			if (c < 0)
				continue;
			if (w->core_owner[c] < 0)
				w->core_owner[c] = th->dom;
			else if (w->core_owner[c] != th->dom)
				sim_world_violation(w, "isolation: isolated domains '%s' and '%s' both pinned to core %d",
				    w->sc->domains[w->core_owner[c]].name, w->sc->domains[th->dom].name, c);
		}
	}
	/* pass 2: no other domain's vCPU may be pinned onto those cores */
	for (int i = 0; i < w->nthreads; i++) {
		struct sim_thread *th = &w->threads[i];
		const struct sim_dom_state *D = &w->dom[th->dom];
		int pu;
		if (!D->active || !th->pinned || (D->isolated && D->iso_managed))
			continue;
		CPUSET_FOREACH(pu, &th->pin) {
			int c = w->topo->pu_core[pu];
			if (c >= 0 && w->core_owner[c] >= 0) {
				sim_world_violation(w, "isolation: domain '%s' vCPU %d pinned to core %d of isolated domain '%s'",
				    w->sc->domains[th->dom].name, th->vcpu, c, w->sc->domains[w->core_owner[c]].name);
				break;
			}
		}
	}
}

static void
pin_cores(const struct sim_world *w, const struct cpuset *pin, struct cpuset *out)
{
	int pu;

	cpuset_zero(out);
	CPUSET_FOREACH(pu, pin) {
		int c = pu <= w->topo->max_cpu ? w->topo->pu_core[pu] : -1;
		if (c >= 0 && !cpuset_isset(out, pu))
			cpuset_or(out, out, &topo_get(w->topo, TOPO_CORE, c)->cpus);
	}
}

/* Isolation right after change c: the cores the thread's pin took (the
 * whole cores of its new pin that its old one did not touch; none when it
 * was not pinned, allowed everywhere) must not be in the pin of a vCPU of
 * another domain when either domain is isolated (and placed by the
 * engine). An overlap that was there before the change is the
 * end-of-period check's (invariants()); this one catches what an action
 * adds between two others. The first such thread is reported. */
static void
check_change(struct sim_world *w, const struct sim_pin_change *c)
{
	const struct sim_thread *th = &w->threads[c->thread];
	const struct sim_dom_state *D = &w->dom[th->dom];
	bool iso = D->isolated && D->iso_managed;
	struct cpuset took, was;

	if (!D->active || !th->pinned || !c->was_pinned)
		return;
	pin_cores(w, &th->pin, &took);
	pin_cores(w, &c->was, &was);
	cpuset_andnot(&took, &took, &was);
	if (cpuset_empty(&took))
		return;
	for (int j = 0; j < w->nthreads; j++) {
		const struct sim_thread *u = &w->threads[j];
		const struct sim_dom_state *U = &w->dom[u->dom];
		struct cpuset both;
		if (u->dom == th->dom || !U->active || !u->pinned || (!iso && !(U->isolated && U->iso_managed)))
			continue;
		cpuset_and(&both, &u->pin, &took);
		if (cpuset_empty(&both))
			continue;
		sim_world_violation(w, "isolation between pins: domain '%s' vCPU %d pinned onto core %d, where %sdomain "
		    "'%s' vCPU %d is pinned", w->sc->domains[th->dom].name, th->vcpu,
		    w->topo->pu_core[cpuset_first(&both)], iso ? "" : "isolated ", w->sc->domains[u->dom].name, u->vcpu);
		return;
	}
}

/* Replay the last period's affinity changes in the order the back-end
 * made them, from the affinity before the first, checking isolation after
 * each (the end state is checked by invariants()). Run before the world
 * moves on, when the run has said which isolated domains the engine
 * placed. */
static void
check_changes(struct sim_world *w)
{
	for (int k = w->nchanges - 1; k >= 0; k--) {
		const struct sim_pin_change *c = &w->changes[k];
		w->threads[c->thread].pinned = c->was_pinned;
		w->threads[c->thread].pin = c->was;
	}
	for (int k = 0; k < w->nchanges; k++) {
		const struct sim_pin_change *c = &w->changes[k];
		w->threads[c->thread].pinned = c->pinned;
		w->threads[c->thread].pin = c->pin;
		check_change(w, c);
	}
	w->nchanges = 0;
	w->changes_lost = false;
}

/* --- wakeups (host.wakeup_trace) ----------------------------------------- */

static int
wdraw_push(struct sim_world *w, int waker, int wakee)
{
	if (w->wdraw_n == w->wdraw_cap) {
		size_t ncap = w->wdraw_cap ? w->wdraw_cap * 2 : 4096;
		uint64_t *n = realloc(w->wdraw, sizeof(*n) * ncap);
		if (n == NULL)
			return -1;
		w->wdraw = n;
		uint32_t *c = realloc(w->wcount, sizeof(*c) * ncap);
		if (c == NULL)
			return -1;
		w->wcount = c;
		w->wdraw_cap = ncap;
	}
	w->wdraw[w->wdraw_n++] = (uint64_t)waker << 32 | (uint32_t)wakee;
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A hash of a pair in a period (splitmix64's finaliser): the tie-break
 * between edges of equal counts. */
static uint64_t
pair_hash(long period, const struct policy_wakeup_edge *e)
{
	uint64_t z = (uint64_t)period << 40 ^ (uint64_t)e->waker << 20 ^ (uint64_t)e->wakee;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Strongest first, ties by pair_hash() (deterministic, no vCPU favoured);
 * arg: the period. */
static int
cmp_edge_count(const void *a, const void *b, void *arg)
{
	const struct policy_wakeup_edge *x = a, *y = b;
	long period = *(const long *)arg;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	uint64_t hx = pair_hash(period, x), hy = pair_hash(period, y);
	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->waker != y->waker)
		return x->waker < y->waker ? -1 : 1;
	return (x->wakee > y->wakee) - (x->wakee < y->wakee);
}

static int
cmp_edge_pair(const void *a, const void *b)
{
	const struct policy_wakeup_edge *x = a, *y = b;

	if (x->waker != y->waker)
		return x->waker < y->waker ? -1 : 1;
	return (x->wakee > y->wakee) - (x->wakee < y->wakee);
}

/* One domain's draws (spec: a busy thread of a group with wakeups_hz w
 * sends Poisson(w * period) wakeups, each to a partner drawn uniformly
 * from the group's other busy threads; every vCPU thread sends
 * Poisson(wakeup_noise_hz * period) to uniformly drawn other vCPUs of its
 * domain), aggregated into edges. */
static void
wakeups_domain(struct sim_world *w, int d, double t)
{
	const struct sim_domain *sd = &w->sc->domains[d];
	const struct sim_dom_state *D = &w->dom[d];
	struct sim_wake *K = &w->wake[d];
	const double busy = w->sc->model.busy_util;
	int n = sd->nvcpus, *mates = w->scratch, nm;
	uint64_t oom = 0;
	size_t i, j;

	K->nedges = 0;
	K->dropped = 0;
	w->wdraw_n = 0;
	if (!D->active || n < 2)
		return;
	for (int g = 0; g < w->sc->ngroups; g++) {
		const struct sim_group *G = &w->sc->groups[g];
		int v;
		if (G->domain != d)
			continue;
		nm = 0;
		CPUSET_FOREACH(v, &G->vcpus) {
			const struct sim_thread *th = &w->threads[D->base + v];
			if (th->group == g && th->demand >= busy)
				mates[nm++] = v;
		}
		if (nm < 2)
			continue;
		for (int a = 0; a < nm; a++) {
			const struct sim_thread *th = &w->threads[D->base + mates[a]];
			uint64_t k = th->wake_hz > 0 ? sim_rng_poisson(&w->wrng, th->wake_hz * w->dt_s) : 0;
			for (uint64_t x = 0; x < k; x++) {
				int b = (int)sim_rng_below(&w->wrng, (uint32_t)nm - 1);
				if (wdraw_push(w, mates[a], mates[b >= a ? b + 1 : b]) < 0)
					oom++;
			}
		}
	}
	/* `wakes`: each vCPU of an active entry, whatever its util, to a
	 * vCPU of the wakes' set other than itself */
	for (int e = 0; e < sd->nload; e++) {
		const struct sim_load *l = &sd->load[e];
		int v;
		if (l->nwakes == 0 || !(t + 1e-9 >= l->from_s && t + 1e-9 < l->to_s))
			continue;
		CPUSET_FOREACH(v, &l->vcpus) {
			for (int x0 = 0; x0 < l->nwakes; x0++) {
				const struct sim_wakes *K2 = &l->wakes[x0];
				bool self = cpuset_isset(&K2->vcpus, v);
				int m = K2->n - self, at = 0;
				if (m <= 0 || K2->hz <= 0)
					continue;
				while (self && K2->list[at] != v)
					at++;
				uint64_t k = sim_rng_poisson(&w->wrng, K2->hz * w->dt_s);
				for (uint64_t x = 0; x < k; x++) {
					int b = (int)sim_rng_below(&w->wrng, (uint32_t)m);
					if (wdraw_push(w, v, K2->list[self && b >= at ? b + 1 : b]) < 0)
						oom++;
				}
			}
		}
	}
	for (int v = 0; v < n && w->sc->wakeup_noise_hz > 0; v++) {
		uint64_t k = sim_rng_poisson(&w->wrng, w->sc->wakeup_noise_hz * w->dt_s);
		for (uint64_t x = 0; x < k; x++) {
			int u = (int)sim_rng_below(&w->wrng, (uint32_t)n - 1);
			if (wdraw_push(w, v, u >= v ? u + 1 : u) < 0)
				oom++;
		}
	}
	/* aggregate (sorted draws: equal pairs are adjacent), in place */
	qsort(w->wdraw, w->wdraw_n, sizeof(*w->wdraw), cmp_u64);
	size_t nd = 0;
	for (i = 0; i < w->wdraw_n; i = j) {
		for (j = i; j < w->wdraw_n && w->wdraw[j] == w->wdraw[i]; j++)
			;
		w->wdraw[nd++] = w->wdraw[i];
		w->wcount[nd - 1] = (uint32_t)(j - i);
	}
	/* as llcd's tracer hands them over (wakeups.h): each waker's
	 * strongest POLICY_WAKEUP_EDGES_VCPU, at most POLICY_WAKEUP_EDGES in
	 * all, the rest counted as dropped; ties broken by a hash of the pair
	 * and the period, so that no vCPU number is favoured */
	size_t kept = 0;
	for (i = 0; i < nd; i = j) {
		uint32_t waker = (uint32_t)(w->wdraw[i] >> 32);
		for (j = i; j < nd && (uint32_t)(w->wdraw[j] >> 32) == waker; j++)
			;
		size_t run = j - i;
		struct policy_wakeup_edge *tmp = K->edges;     /* scratch: run < nvcpus */
		for (size_t x = 0; x < run; x++)
			tmp[x] = (struct policy_wakeup_edge){ (int)waker, (int)(uint32_t)w->wdraw[i + x],
				w->wcount[i + x] };
		if (run > POLICY_WAKEUP_EDGES_VCPU) {
			qsort_r(tmp, run, sizeof(*tmp), cmp_edge_count, &w->period);
			for (size_t x = POLICY_WAKEUP_EDGES_VCPU; x < run; x++)
				K->dropped += tmp[x].count;
			run = POLICY_WAKEUP_EDGES_VCPU;
		}
		for (size_t x = 0; x < run; x++) {
			w->wdraw[kept] = (uint64_t)waker << 32 | (uint32_t)tmp[x].wakee;
			w->wcount[kept++] = tmp[x].count;
		}
	}
	nd = kept;
	if (nd > POLICY_WAKEUP_EDGES) {
		struct policy_wakeup_edge *all = malloc(sizeof(*all) * nd);
		if (all == NULL) {
			for (i = 0; i < nd; i++)
				K->dropped += w->wcount[i];
			nd = 0;
		} else {
			for (i = 0; i < nd; i++)
				all[i] = (struct policy_wakeup_edge){ (int)(w->wdraw[i] >> 32),
					(int)(uint32_t)w->wdraw[i], w->wcount[i] };
			qsort_r(all, nd, sizeof(*all), cmp_edge_count, &w->period);
			for (i = POLICY_WAKEUP_EDGES; i < nd; i++)
				K->dropped += all[i].count;
			memcpy(K->edges, all, sizeof(*all) * POLICY_WAKEUP_EDGES);
			free(all);
			nd = POLICY_WAKEUP_EDGES;
		}
	} else {
		for (i = 0; i < nd; i++)
			K->edges[i] = (struct policy_wakeup_edge){ (int)(w->wdraw[i] >> 32),
				(int)(uint32_t)w->wdraw[i], w->wcount[i] };
	}
	struct policy_wakeup_edge *e = K->edges;
	int ne = (int)nd;
	qsort(e, (size_t)ne, sizeof(*e), cmp_edge_pair);
	K->nedges = ne;
	K->dropped += oom;
	if (w->trace) {
		for (int k = 0; k < ne; k++)
			fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"waker\":%d,\"wakee\":%d,"
			    "\"n\":%u}\n", t, sd->name, e[k].waker, e[k].wakee, e[k].count);
		if (K->dropped)
			fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"wakeups_dropped\":%llu}\n",
			    t, sd->name, (unsigned long long)K->dropped);
	}
}

static void
wakeups(struct sim_world *w, double t)
{
	if (w->wake == NULL)
		return;
	for (int d = 0; d < w->sc->ndomains; d++)
		wakeups_domain(w, d, t);
}

bool
sim_world_step(struct sim_world *w)
{
	double t;

	if (w->period >= w->nperiods)
		return false;
	t = (double)w->period * w->dt_s;
	check_changes(w);
	lifecycle(w, t);
	demands(w, t);
	balance(w);
	account(w, t);
	wakeups(w, t);
	invariants(w);
	if (w->policy == SIM_POLICY_KCAS)
		kcas_update(w);
	w->period++;
	return true;
}
