// SPDX-License-Identifier: GPL-2.0-or-later
/* world.c - the simulated host and its cost model (spec/llcsim.md,
 * "The simulated world"; choices the spec leaves open: docs/llcsim.md):
 * set-up, affinity, one period (life cycle, demands, accounting,
 * invariants); the balancers are in world_sched.c, the wakeup trace in
 * world_wakeups.c. */
#include "world_int.h"
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
	free(w->seen_pin);
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
	if (!ALLOC(w->threads, w->nthreads) || !ALLOC(w->seen_pin, w->nthreads) || !ALLOC(w->order, w->nthreads) ||
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
const struct cpuset *
world_allowed(const struct sim_world *w, const struct sim_thread *th)
{
	if (th->vcpu < 0)
		return w->dom[th->dom].emu_pinned ? &w->dom[th->dom].emu_pin : &w->usable;
	return th->pinned ? &th->pin : &w->usable;
}

bool
world_llc_ok(const struct sim_thread *th, int l)
{
	return (th->llcs[l / 64] >> (l % 64)) & 1;
}

void
world_refresh_llcs(struct sim_world *w, struct sim_thread *th)
{
	const struct cpuset *a = world_allowed(w, th);
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
	world_balance(w);
	account(w, t);
	world_wakeups(w, t);
	invariants(w);
	if (w->policy == SIM_POLICY_KCAS)
		world_kcas_update(w);
	w->period++;
	return true;
}
