// SPDX-License-Identifier: GPL-2.0-or-later
/* steer.c - stage 4 of a step: where the vCPUs of a placed domain run
 * within its allotment. An aggregate group follows the kernel's
 * cache-aware scheduling (llcrules.h): its preferred LLC is the one with
 * the most of its decayed runtime (2x hysteresis), the size guard keeps a
 * group too large for an LLC where it is, and its busiest threads move in
 * while can_migrate_llc() allows it, a few per period. A spread domain's
 * busy vCPUs get an LLC each. See docs/design.md, "Steering".
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
steer_vcpu_llc(const struct policy_state *s, const struct dom *d, const struct policy_domain_in *in, int v)
{
	int l = policy_pin_llc(s, d->want[v]);

	return l >= 0 ? l : topo_llc_of(s->topo, in->vcpus[v].last_cpu);
}

bool
steer_budget_take(struct policy_state *s, struct dom *d)
{
	if (s->moves_left <= 0 || d->step_moves >= s->budget_cap) {
		d->budget_denied = true;
		return false;
	}
	s->moves_left--;
	d->step_moves++;
	return true;
}

/* Capacity is judged on the PUs the group may use in an LLC: where the
 * domain may use the whole LLC that is the host's view
 * (llc_util, llc_cap), else its allowed PUs there (av_util, av_cap). */
void
steer_view(struct policy_state *s, const struct cpuset *allowed, uint64_t period_ns)
{
	const struct topo *t = s->topo;
	size_t nl = (size_t)s->nllc;
	int cpu;

	/* the view depends on allowed and cpu_busy alone, and cpu_busy only
	 * changes between steps: the same allowed set, the same view */
	if (s->view_step == s->step && s->view_period_ns == period_ns &&
	    policy_set_eq(s, &s->view_allowed, allowed)) {
		/* only av_move() writes the view between two of these, and
		 * only its utilisation: the capacities are the view's */
		if (s->av_moved)
			memcpy(s->av_util, s->view_util, sizeof(double) * nl);
		s->av_moved = false;
		return;
	}
	s->av_moved = false;
	/* the allowed PUs per LLC: no more of them than LLCs (an isolated
	 * domain's cores) counted one by one, each in the one LLC it lies
	 * in (topo_finalize()); else each LLC's words counted */
	int npu = 0;
	for (int l = 0; l < s->nllc; l++)
		s->av_cap[l] = 0;
	POLICY_FOREACH(cpu, allowed, s->nwords) {
		int l = topo_llc_of(t, cpu);
		if (++npu > s->nllc)
			break;
		if (l >= 0)
			s->av_cap[l]++;
	}
	for (int l = 0; l < s->nllc; l++) {
		if (npu > s->nllc) {
			const struct cpuset *lc = policy_llc_cpus(s, l);
			int n = 0;
			for (int i = s->llc_w0[l]; i <= s->llc_w1[l]; i++)   /* its words */
				n += __builtin_popcountll(lc->w[i] & allowed->w[i]);
			s->av_cap[l] = n;
		}
		s->av_whole[l] = s->av_cap[l] == s->llc_cap[l];
		s->av_util[l] = 0;
	}
	POLICY_FOREACH(cpu, allowed, s->nwords) {
		int l = topo_llc_of(t, cpu);
		double f = s->cpu_busy[cpu] / (double)period_ns;
		if (l < 0 || s->av_whole[l])
			continue;
		if (f > 1.0)
			f = 1.0;
		if (f >= BUSY_PU)
			s->av_util[l] += f;
	}
	memcpy(s->view_cap, s->av_cap, sizeof(double) * nl);
	memcpy(s->view_whole, s->av_whole, sizeof(bool) * nl);
	memcpy(s->view_util, s->av_util, sizeof(double) * nl);
	if (!policy_set_eq(s, &s->view_allowed, allowed))
		s->allowed_id++;
	s->view_allowed = *allowed;
	s->view_step = s->step;
	s->view_period_ns = period_ns;
}

/* A `why` printed every period from the same arguments is the same text:
 * when k is the key it was last printed from, that text is copied (true);
 * else the caller prints it and calls why_keep(). */
static bool
why_cached(const struct policy_state *s, struct grp *g, const struct why_key *k)
{
	if (!s->incremental || k->site <= 0 || !g->why_ok || memcmp(&g->why_key, k, sizeof(*k)) != 0)
		return false;
	memcpy(g->why, g->why_text, sizeof(g->why));
	return true;
}

/* A key for x printed as %.Nf (scale 10^N): the digits printed, so that
 * a value that moves in its last bits from period to period keeps its
 * text. Near a rounding boundary, where printf's rounding of the exact
 * value and this one may differ, and for a sign printf would show, *ok
 * becomes false: the key is not used (site <= 0). */
static double
why_digits(double x, double scale, bool *ok)
{
	double t = x * scale;

	if (signbit(x) || !isfinite(t) || t > 1e9 || fabs(t - floor(t) - 0.5) < 1e-6)
		*ok = false;
	return floor(t + 0.5);
}

static void
why_keep(struct grp *g, const struct why_key *k)
{
	g->why_key = *k;
	memcpy(g->why_text, g->why, sizeof(g->why));
	g->why_ok = true;
}

/* Whether the domain steered may use a PU of LLC l: after steer_view()
 * for its allowed set, av_cap counts them (a group's steering runs between
 * the view and the next domain's: the same allowed set). */
static bool
av_usable(const struct policy_state *s, int l)
{
	return s->av_cap[l] > 0;
}

static double
av_util(const struct policy_state *s, int l)
{
	return s->av_whole[l] ? s->llc_util[l] : s->av_util[l];
}

static double
av_cap(const struct policy_state *s, int l)
{
	return s->av_whole[l] ? s->llc_cap[l] : s->av_cap[l];
}

/* tu busy PUs' worth moves from src (-1: unknown) to dst. */
static void
av_move(struct policy_state *s, int src, int dst, double tu)
{
	s->av_moved = true;
	if (src >= 0) {
		s->llc_util[src] -= tu;
		s->av_util[src] -= tu;
	}
	s->llc_util[dst] += tu;
	s->av_util[dst] += tu;
}

/* The group's share of this period. */
struct grp_sample {
	int nthreads;           /* vCPUs in the group */
	double cpus_in_use;     /* its runtime this period, in CPUs */
};

/* Decay the group's per-PU runtime and add this period's; track whether it
 * is active (at least ACTIVE_CPUS, or ACTIVE_VCPU per vCPU when that is
 * less). */
static void
grp_sample(struct policy_state *s, const struct dom *d, const struct policy_domain_in *di,
           struct grp *g, double k, double epochs_per_period, double period, struct grp_sample *out)
{
	const struct topo *t = s->topo;
	int v, cpu;

	out->nthreads = 0;
	out->cpus_in_use = 0;
	/* the totals it is divided by decay with the same factor (the step
	 * that created the group copied them, this period's time included);
	 * while that factor is the per-CPU totals' own, they are the same
	 * numbers as policy_state.cpu_rt and are not kept apart */
	if (g->born_step != s->step) {
		if (g->tot_follows && (k != s->cpu_rt_k || g->tot_step + 1 != s->step)) {
			/* its own from here: the totals as they were after its
			 * last step, the last step's cpu_rt */
			groups_unfollow(s, g);
		}
		if (!g->tot_follows)
			for (cpu = 0; cpu < s->ncpu; cpu++)
				g->tot_ns[cpu] = g->tot_ns[cpu] * k + s->cpu_busy[cpu];
	}
	g->tot_step = s->step;
	/* zeros stay zeros: only the PUs it ran on decay */
	POLICY_FOREACH(cpu, &g->rt_nz, s->nwords) {    /* PUs below ncpu */
		g->rt_ns[cpu] *= k;
		if (g->rt_ns[cpu] == 0)
			cpuset_clr(&g->rt_nz, cpu);
	}
	POLICY_FOREACH(v, &g->vcpus, (d->nvcpus + 63) / 64) {
		if (v >= d->nvcpus)
			break;
		out->nthreads++;
		const struct policy_vcpu_sample *sm = &di->vcpus[v];
		if (sm->last_cpu >= 0 && sm->last_cpu < s->ncpu && cpuset_isset(&t->all, sm->last_cpu)) {
			g->rt_ns[sm->last_cpu] += (double)sm->runtime_ns;
			if (g->rt_ns[sm->last_cpu] != 0)
				cpuset_set(&g->rt_nz, sm->last_cpu);
		}
		out->cpus_in_use += (double)sm->runtime_ns / period;
	}
	/* small groups: 0.05 CPU a vCPU (a 2-vCPU pair at 0.1); idle vCPUs
	 * use about 0.01 */
	double need = fmin(ACTIVE_CPUS, ACTIVE_VCPU * out->nthreads);
	bool active = out->nthreads > 0 && out->cpus_in_use >= need;
	g->active_periods = active ? g->active_periods + 1 : 0;
	g->idle_epochs = active ? 0 : g->idle_epochs + epochs_per_period;
}

/* Occupancy: the group's share of each allowed PU's runtime, summed per
 * LLC into occ[]; returns the LLC with the most (-1 none) in *best, among
 * the LLCs of NUMA node mnode when mnode >= 0. */
static double
grp_occupancy(const struct policy_state *s, const struct grp *g, const struct cpuset *allowed,
              int mnode, double *occ, int *best)
{
	const struct topo *t = s->topo;
	double occ_best = -1;
	int cpu;

	const double *tot = g->tot_follows ? s->cpu_rt : g->tot_ns;
	struct cpuset ran;

	*best = -1;
	cpuset_and(&ran, allowed, &g->rt_nz);   /* elsewhere rt_ns is 0 */
	POLICY_FOREACH(cpu, &ran, s->nwords)
		if (g->rt_ns[cpu] > 0)
			occ[topo_llc_of(t, cpu)] += g->rt_ns[cpu] / (tot[cpu] + 1.0);
	for (int l = 0; l < s->nllc; l++) {
		if (!av_usable(s, l) || (mnode >= 0 && t->llc_numa[l] != mnode))
			continue;
		if (occ[l] > occ_best) {
			occ_best = occ[l];
			*best = l;
		}
	}
	return occ_best;
}

void
steer_groups_unfollow(struct policy_state *s)
{
	for (int i = 0; i < s->ndoms; i++)
		for (int j = 0; j < s->doms[i]->ngroups; j++) {
			struct grp *g = &s->doms[i]->groups[j];
			if (g->tot_follows && g->tot_step != s->step) {
				/* not sampled this step: its totals are the last
				 * step's cpu_rt and stay so */
				groups_unfollow(s, g);
			}
		}
}

/* The kernel's nr_running_avg: busy threads, EWMA by the LLC's size. */
static void
grp_busy_avg(struct grp *g, double cpus_in_use, int llc_weight)
{
	if (!g->busy_avg_init) {
		g->busy_avg = cpus_in_use;      /* start from the first sample */
		g->busy_avg_init = true;
	} else {
		g->busy_avg += (cpus_in_use - g->busy_avg) / llcrules_nr_avg_div(llc_weight > 0 ? llc_weight : 16);
	}
}

/* The size guard and the idle timeout: true when the group must not be
 * aggregated now (its preference dropped, `why` says why). A group held
 * back without a preference still sends its vCPUs home: a fresh report
 * may have taken them from a group that had one. */
static bool
grp_hold_back(struct policy_state *s, struct dom *d, struct grp *g, const struct llc_rules *r,
              int nthreads, int best, struct policy_plan *plan)
{
	const struct topo *t = s->topo;
	int L = g->pref_llc >= 0 ? g->pref_llc : best;
	int w = L >= 0 ? (int)av_cap(s, L) : 0;
	bool was = g->guarded;
	double others = 0, busy;
	char with[80] = "";

	/* the domain's groups on one LLC count together */
	for (int i = 0; L >= 0 && i < d->ngroups; i++)
		if (&d->groups[i] != g && d->groups[i].pref_llc == L)
			others += d->groups[i].busy_avg;
	busy = g->busy_avg + others;
	if (others > 0)
		snprintf(with, sizeof(with), " with the domain's other groups there (%.1f of them)", g->busy_avg);
	g->guarded = llcrules_size_guard(r, nthreads, busy, w, was);
	if (g->guarded) {
		if (g->pref_llc >= 0) {
			policy_plan_add(s, plan, POLICY_ACT_PREFER, d, -1, NULL,
			    "group '%s': preference for LLC %d dropped: %.1f busy threads%s x SMT%d exceed the %d PUs "
			    "it may use there (aggr-tolerance %d)", g->name, g->pref_llc, busy, with, t->smt,
			    w, r->aggr_tolerance);
			groups_release(d, g);
		} else {
			groups_send_home(s, d, g);    /* vCPUs it took from another group */
		}
		/* the LLC's size, never its number: "LLC of 1 PUs" read as LLC 1 */
		const char *part = L >= 0 && !s->av_whole[L] ? "it may use in an LLC" : "an LLC has";
		const char *held = was && !llcrules_invalid_nr(r, nthreads, busy, w) ?
		    "; held until it is well below the limit" : "";
		struct why_key k;
		memset(&k, 0, sizeof(k));
		k.site = 1;
		k.i[0] = nthreads;
		k.i[1] = t->smt;
		k.i[2] = w;
		k.i[3] = r->aggr_tolerance;
		bool ok = true;
		k.x[0] = why_digits(busy, 10, &ok);
		k.x[1] = others > 0 ? why_digits(g->busy_avg, 10, &ok) : 0;  /* `with` */
		k.site = ok ? 1 : 0;
		k.i[4] = others > 0;
		k.str[0] = part;
		k.str[1] = held;
		if (!why_cached(s, g, &k)) {
			snprintf(g->why, sizeof(g->why), "not aggregated: %d threads, %.1f busy on average%s, SMT%d, %s %d "
			    "PU%s (aggr-tolerance %d)%s", nthreads, busy, with, t->smt, part, w, w == 1 ? "" : "s",
			    r->aggr_tolerance, held);
			why_keep(g, &k);
		}
		return true;
	}
	if (g->idle_epochs > d->annot->tune.affinity_timeout) {
		if (g->pref_llc >= 0) {
			policy_plan_add(s, plan, POLICY_ACT_PREFER, d, -1, NULL,
			    "group '%s': preference for LLC %d dropped after %.0f idle epochs",
			    g->name, g->pref_llc, g->idle_epochs);
			groups_release(d, g);
		} else {
			groups_send_home(s, d, g);
		}
		snprintf(g->why, sizeof(g->why), "idle");
		return true;
	}
	return false;
}

/* The kernel's NUMA precedence: the NUMA node (logical
 * index) a group's preferred LLC must lie in, -1 for any: the node holding
 * the domain's memory, when known and the domain may run there. */
static int
grp_mem_node(const struct policy_state *s, const struct policy_domain_in *di, const struct cpuset *allowed)
{
	int n = di->mem_node_valid ? topo_numa_by_os(s->topo, di->mem_node) : -1;

	if (n < 0 || !cpuset_intersects(&topo_get(s->topo, TOPO_NUMA, n)->cpus, allowed))
		return -1;
	return n;
}

/* The least busy LLC of node mnode the domain may use (lowest index on a
 * tie), for a group with no occupancy there. */
static int
mem_node_least_busy(const struct policy_state *s, int mnode)
{
	int best = -1;
	double bu = 0;

	for (int l = 0; l < s->nllc; l++) {
		if (s->topo->llc_numa[l] != mnode || !av_usable(s, l))
			continue;
		double u = av_util(s, l) / av_cap(s, l);
		if (best < 0 || u < bu) {
			best = l;
			bu = u;
		}
	}
	return best;
}

/* The 2x hysteresis: switch the preference to the best LLC when it has
 * twice the occupancy of the current one; returns the preferred LLC's
 * occupancy. With the memory's node known (mnode >= 0; best is then that
 * node's), NUMA wins: a preference outside the node moves to it at once,
 * and a group that has run only outside it gets the node's least busy LLC
 * (where the kernel's NUMA balancing would have taken its threads). */
static double
grp_prefer(struct policy_state *s, struct dom *d, struct grp *g, int best, double occ_best,
           const double *occ, int mnode, struct policy_plan *plan)
{
	double occ_pref = g->pref_llc >= 0 ? occ[g->pref_llc] : 0, occ_all = 0;
	bool conflict = mnode >= 0 && g->pref_llc >= 0 && s->topo->llc_numa[g->pref_llc] != mnode;
	bool numa_pick = false;

	for (int l = 0; mnode >= 0 && l < s->nllc; l++)
		occ_all += occ[l];
	if (mnode >= 0 && (best < 0 || occ_best <= 0) && (conflict || (g->pref_llc < 0 && occ_all > 0))) {
		best = mem_node_least_busy(s, mnode);
		occ_best = 0;
		numa_pick = best >= 0;
	}
	if (best >= 0 && best != g->pref_llc && g->active_periods >= ACTIVE_PERIODS &&
	    (conflict || numa_pick || llcrules_should_switch(occ_best, occ_pref))) {
		int os = mnode >= 0 ? topo_get(s->topo, TOPO_NUMA, mnode)->os_index : -1;
		struct policy_action *a = conflict || numa_pick ?
		    policy_plan_add(s, plan, POLICY_ACT_PREFER, d, -1, policy_llc_cpus(s, best),
		    "group '%s': preferred LLC %d -> %d: the domain's memory is on NUMA node %d (NUMA wins; "
		    "occupancy %.2f there%s)", g->name, g->pref_llc, best, os, occ_best,
		    numa_pick ? ", the node's least busy LLC" : "") :
		    policy_plan_add(s, plan, POLICY_ACT_PREFER, d, -1, policy_llc_cpus(s, best),
		    "group '%s': preferred LLC %d -> %d: occupancy %.2f > 2 x %.2f",
		    g->name, g->pref_llc, best, occ_best, occ_pref);
		if (a)
			a->llc = best;
		g->pref_llc = best;
		g->forbid_fails = 0;
		g->refused = 0;
		g->retry_after_ns = 0;
		d->pref_switches++;
		s->stats.pref_switches++;
		occ_pref = occ_best;
	}
	return occ_pref;
}

/* The group's vCPUs whose wanted pin is not the LLC P, busiest first, into
 * order; returns how many. */
static int
outside_busiest_first(const struct policy_state *s, const struct dom *d, const struct grp *g,
                      int P, int *order)
{
	int no = 0, v;

	CPUSET_FOREACH(v, &g->vcpus)
		if (v < d->nvcpus && policy_pin_llc(s, d->want[v]) != P)
			order[no++] = v;
	for (int i = 1; i < no; i++) {
		int x = order[i], j = i - 1;
		while (j >= 0 && d->vutil[order[j]] < d->vutil[x]) {
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = x;
	}
	return no;
}

/* Moves into the preferred LLC P (pin dst) this period. */
struct aggr_moves {
	int moved;              /* vCPUs moved in */
	int forbid;             /* moves can_migrate_llc() forbade */
	int outside;            /* vCPUs still outside P */
};

/* Move the vCPUs in order (no of them) into P while the kernel's rules,
 * the domain's max-moves and the step's move budget allow. A vCPU already
 * running in P but not held there is pinned to P (no migration) only when
 * the group gathers this period: another moved in, or none is left
 * outside; otherwise a pin would hold one vCPU of a group that cannot
 * come, and be undone when it backs off: the group would flap in and out. */
static void
aggregate_into(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
               const struct llc_rules *r, int P, const struct cpuset *dst, const int *order, int no,
               struct aggr_moves *m)
{
	int there = 0;

	for (int i = 0; i < no; i++) {
		int v = order[i];
		/* where it runs now: its pin's LLC, or where it last ran */
		int src = steer_vcpu_llc(s, d, di, v);
		double tu = d->vutil[v];
		if (src == P) {
			there++;
			continue;
		}
		enum llc_mig mig = src < 0 ? LLC_MIG_LLC :
		    llcrules_can_migrate(r, av_util(s, src), av_cap(s, src), av_util(s, P), av_cap(s, P), tu, true);
		if (mig == LLC_MIG_FORBID) {
			m->forbid++;
			continue;
		}
		if (mig != LLC_MIG_LLC || m->moved >= d->annot->tune.max_moves || !steer_budget_take(s, d))
			continue;
		dom_pin_set(d, &d->want[v], dst);
		av_move(s, src, P, tu);
		m->moved++;
		m->outside--;
		d->moves++;
	}
	if (there == 0 || (m->moved == 0 && m->outside > there))
		return;
	for (int i = 0; i < no; i++)
		if (policy_pin_llc(s, d->want[order[i]]) != P && steer_vcpu_llc(s, d, di, order[i]) == P) {
			dom_pin_set(d, &d->want[order[i]], dst);
			m->outside--;
		}
}

/* After RETRY_FAILS periods in which every move was forbidden, back off:
 * no move into P for affinity-timeout epochs, twice as long after each
 * back-off in a row (up to 2^RETRY_BACKOFF_MAX times), until a move goes
 * through or the preference changes. The group keeps its preferred LLC and
 * what is in it, and the rest stays placed: the kernel's tasks stay where
 * they are when can_migrate_llc() refuses, and its process keeps its
 * preferred LLC. (Releasing the group and preferring again at once made a
 * group that cannot come change its preferred LLC every 0.6 s with no pin
 * changed, or pin a vCPU in and out.) Returns true when
 * it backed off. */
static bool
back_off_after_fails(struct policy_state *s, const struct policy_input *in, struct dom *d,
                     struct grp *g, int P, double epochs_per_period, const struct aggr_moves *m)
{
	if (m->moved) {
		g->forbid_fails = 0;
		g->refused = 0;
	} else if (m->forbid) {
		g->forbid_fails++;
	}
	if (g->forbid_fails < RETRY_FAILS)
		return false;
	int times = 1 << (g->refused < RETRY_BACKOFF_MAX ? g->refused : RETRY_BACKOFF_MAX);
	double wait_ns = (double)d->annot->tune.affinity_timeout * times / epochs_per_period * (double)in->period_ns;
	g->refused++;
	g->forbid_fails = 0;
	g->retry_after_ns = in->now_ns + (uint64_t)wait_ns;
	snprintf(g->why, sizeof(g->why), "preferred LLC %d too busy to take the group (%.1f of %.0f PUs busy): "
	    "%d vCPU%s outside stay%s placed, retry in %.1f s (refused %d time%s in a row)", P, av_util(s, P),
	    av_cap(s, P), m->outside, m->outside == 1 ? "" : "s", m->outside == 1 ? "s" : "", wait_ns / 1e9,
	    g->refused, g->refused == 1 ? "" : "s");
	return true;
}

/* Out of the preferred LLC P: one vCPU per period back to its placement
 * when P is overloaded (can_migrate_llc() towards the least-used LLC). */
static void
spill_one(struct policy_state *s, struct dom *d, struct grp *g, const struct llc_rules *r, int P)
{
	int D = -1, v;
	double du = 0;

	for (int l = 0; l < s->nllc; l++) {
		if (l == P || !av_usable(s, l))
			continue;
		double u = av_util(s, l) / av_cap(s, l);
		if (D < 0 || u < du) {
			D = l;
			du = u;
		}
	}
	if (D < 0)
		return;
	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus || policy_pin_llc(s, d->want[v]) != P || policy_pin_llc(s, d->home[v]) == P)
			continue;
		double tu = d->vutil[v];
		if (llcrules_can_migrate(r, av_util(s, P), av_cap(s, P), av_util(s, D), av_cap(s, D),
		                    tu, false) == LLC_MIG_FORBID)
			break;
		dom_pin_share(d, &d->want[v], d->home[v]);
		av_move(s, P, D, tu);
		snprintf(g->why, sizeof(g->why), "LLC %d overloaded (%.1f of %.0f PUs busy): vCPU %d back to its placement",
		    P, av_util(s, P) + tu, av_cap(s, P), v);
		break;
	}
}

/* The group has a preferred LLC: move its vCPUs in (or one out), then run
 * the benefit check. */
static void
steer_preferred(struct policy_state *s, const struct policy_input *in, struct dom *d,
                const struct policy_domain_in *di, struct grp *g, const struct llc_rules *r,
                double epochs_per_period, double occ_pref, const struct cpuset *allowed,
                struct policy_plan *plan)
{
	/* measured by instruction counters, else by the domain's achieved
	 * memory bandwidth (resctrl) once the host has shown it */
	bool counters = d->annot->tune.benefit_check && (in->host.counters || d->mbm_seen);
	bool hold = counters && !benefit_may_aggregate(s, in, d, g);
	int P = g->pref_llc;
	struct aggr_moves m = { 0, 0, 0 };
	struct cpuset dst;
	int *order;

	cpuset_and(&dst, policy_llc_cpus(s, P), allowed);
	if (s->vorder == NULL)
		s->vorder = malloc(sizeof(int) * MAX_VCPUS);
	order = s->vorder;
	if (order == NULL) {
		s->stats.nomem++;
		snprintf(g->why, sizeof(g->why), "out of memory: not steered this period");
		return;
	}
	int no = outside_busiest_first(s, d, g, P, order);
	m.outside = no;
	if (!hold && in->now_ns >= g->retry_after_ns && !cpuset_empty(&dst)) {
		aggregate_into(s, d, di, r, P, &dst, order, no, &m);
		if (back_off_after_fails(s, in, d, g, P, epochs_per_period, &m))
			goto bench;
	}
	if (!hold)
		spill_one(s, d, g, r, P);
	if (m.moved)
		snprintf(g->why, sizeof(g->why), "moving into preferred LLC %d (occupancy %.2f): %d moved, %d outside",
		    P, occ_pref, m.moved, m.outside);
	else if (m.outside == 0 && !hold && g->bstate != BENEFIT_KEPT) {
		struct why_key k;
		memset(&k, 0, sizeof(k));
		k.site = 2;
		k.i[0] = P;
		bool ok = true;
		k.x[0] = why_digits(occ_pref, 100, &ok);
		k.site = ok ? 2 : 0;
		k.str[0] = counters ? "" : "; no instruction counters or bandwidth monitoring: kernel guards only";
		if (!why_cached(s, g, &k)) {
			snprintf(g->why, sizeof(g->why), "on preferred LLC %d (occupancy %.2f)%s", P, occ_pref, k.str[0]);
			why_keep(g, &k);
		}
	} else if (!hold && g->bstate != BENEFIT_KEPT) {
		struct why_key k;
		memset(&k, 0, sizeof(k));
		k.site = 3;
		k.i[0] = P;
		k.i[1] = m.outside;
		bool ok = true;
		k.x[0] = why_digits(occ_pref, 100, &ok);
		k.site = ok ? 3 : 0;
		k.str[0] = m.forbid ? "" : " (both LLCs busy, or out of move budget)";
		if (!why_cached(s, g, &k)) {
			snprintf(g->why, sizeof(g->why), "partly on preferred LLC %d (occupancy %.2f): %d vCPUs could not move in%s",
			    P, occ_pref, m.outside, k.str[0]);
			why_keep(g, &k);
		}
	}
bench:
	if (counters)
		benefit_moved(s, d, di, g, m.outside, m.moved > 0);
}

/* An idle group at its fixed point, the last step's, steps again (true)
 * when nothing it reads has changed since: its domain's samples (so no
 * runtime yet: none on any PU, no activity), its vCPUs, the allowed PUs
 * (and so the view's capacities, its best LLC and the size guard's
 * width), the memory's node, the aggr-tolerance; the only group of its
 * domain (no other group's busy threads count with it), its totals
 * following the per-CPU ones, no benefit check to observe. That step
 * only counts idle epochs and sends its vCPUs home; most groups of an
 * idle host take it every period. Else false: the full step, which
 * notes whether it ended at such a point. */
static bool
grp_quiet(struct policy_state *s, const struct policy_input *in, struct dom *d,
          const struct policy_domain_in *di, struct grp *g, double k, double epochs_per_period)
{
	if (!s->incremental || !g->quiet_ok || g->quiet_step + 1 != s->step || !d->obs_ok ||
	    g->quiet_gen != d->obs_gen || d->ngroups != 1 || d->nvcpus != g->quiet_nvcpus ||
	    g->quiet_w0 != g->vcpus.w[0] || g->quiet_allowed != s->allowed_id || !g->tot_follows ||
	    k != s->cpu_rt_k || d->annot->tune.aggr_tolerance != g->quiet_tol || groups_judged(in, d) ||
	    di->mem_node_valid != g->quiet_mnv || (di->mem_node_valid && di->mem_node != g->quiet_mn))
		return false;
	double idle = g->idle_epochs + epochs_per_period;
	if (!(idle > d->annot->tune.affinity_timeout))
		return false;
	g->tot_step = s->step;
	g->idle_epochs = idle;
	g->quiet_step = s->step;
	groups_send_home(s, d, g);
	return true;
}

void
steer_group(struct policy_state *s, const struct policy_input *in, struct dom *d,
            const struct policy_domain_in *di, struct grp *g, double k, double epochs_per_period,
            const struct cpuset *allowed, struct policy_plan *plan)
{
	struct llc_rules r;
	struct grp_sample smp;
	double *occ;
	int best;

	if (grp_quiet(s, in, d, di, g, k, epochs_per_period))
		return;
	r = policy_rules_of(s, d);
	g->quiet_ok = false;
	int pref0 = g->pref_llc;
	bool born = g->born_step == s->step;
	grp_sample(s, d, di, g, k, epochs_per_period, (double)in->period_ns, &smp);
	if (groups_judged(in, d))
		benefit_observe(s, in, d, di, g, plan);
	occ = s->occ;
	memset(occ, 0, sizeof(double) * (size_t)s->nllc);
	int mnode = grp_mem_node(s, di, allowed);
	double occ_best = grp_occupancy(s, g, allowed, mnode, occ, &best);
	int wbest = best >= 0 ? s->llc_w[best] : 0;
	double busy0 = g->busy_avg;
	grp_busy_avg(g, smp.cpus_in_use, wbest);
	g->best_llc = best;
	g->best_occ = occ_best > 0 ? occ_best : 0;
	if (!groups_unjudged_hold(s, in, d, g, plan) && !grp_hold_back(s, d, g, &r, smp.nthreads, best, plan)) {
		g->pref_occ = grp_prefer(s, d, g, best, occ_best, occ, mnode, plan);
		if (g->pref_llc >= 0)
			steer_preferred(s, in, d, di, g, &r, epochs_per_period, g->pref_occ, allowed, plan);
		return;
	}
	/* held back as idle (not guarded; not a wakeup group, so never
	 * unjudged) with no preference before or now, nothing run, busy_avg
	 * at its fixed point: the next step may be grp_quiet()'s */
	if (s->incremental && !born && pref0 < 0 && g->pref_llc < 0 && !g->guarded &&
	    g->rule != POLICY_GROUP_WAKEUPS && smp.cpus_in_use == 0 && cpuset_empty(&g->rt_nz) &&
	    busy0 == g->busy_avg && g->busy_avg_init && d->obs_ok && d->ngroups == 1 && d->nvcpus <= 64 &&
	    g->tot_follows && k == s->cpu_rt_k && g->idle_epochs > d->annot->tune.affinity_timeout &&
	    !groups_judged(in, d)) {
		g->quiet_ok = true;
		g->quiet_step = s->step;
		g->quiet_gen = d->obs_gen;
		g->quiet_nvcpus = d->nvcpus;
		g->quiet_w0 = g->vcpus.w[0];
		g->quiet_allowed = s->allowed_id;
		g->quiet_tol = d->annot->tune.aggr_tolerance;
		g->quiet_mnv = di->mem_node_valid;
		g->quiet_mn = di->mem_node;
	}
}

/* A spread domain: a busy vCPU sharing an LLC with another busy one moves
 * to an LLC with none (the least used), a few per period. */
void
steer_spread(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
             const struct cpuset *allowed)
{
	int nllc = s->nllc, moved = 0;
	int *nbusy = calloc((size_t)nllc, sizeof(int));

	if (nbusy == NULL) {
		s->stats.nomem++;
		return;
	}
	for (int v = 0; v < d->nvcpus; v++)
		if (d->vutil[v] >= BUSY_VCPU) {
			int l = steer_vcpu_llc(s, d, di, v);
			if (l >= 0)
				nbusy[l]++;
		}
	for (int v = d->nvcpus - 1; v >= 0 && moved < d->annot->tune.max_moves; v--) {
		int src = steer_vcpu_llc(s, d, di, v), dst = -1;
		if (d->vutil[v] < BUSY_VCPU || src < 0 || nbusy[src] < 2)
			continue;
		for (int l = 0; l < nllc; l++) {
			if (nbusy[l] != 0 || !policy_set_intersects(s, policy_llc_cpus(s, l), allowed))
				continue;
			if (dst < 0 || s->llc_util[l] / s->llc_cap[l] < s->llc_util[dst] / s->llc_cap[dst])
				dst = l;
		}
		if (dst < 0 || !steer_budget_take(s, d))
			break;
		struct cpuset w;
		cpuset_and(&w, policy_llc_cpus(s, dst), allowed);
		dom_pin_set(d, &d->want[v], &w);
		nbusy[src]--;
		nbusy[dst]++;
		s->llc_util[src] -= d->vutil[v];
		s->llc_util[dst] += d->vutil[v];
		moved++;
		d->moves++;
	}
	free(nbusy);
}
