// SPDX-License-Identifier: GPL-2.0-or-later
/* benefit.c - the benefit check of an aggregated group (docs/design.md,
 * "Benefit check"): gathering a group into its preferred LLC is a trial
 * (trial.c). With instruction counters (else with the domain's achieved
 * memory bandwidth, where the host monitors it: resctrl) the engine
 * watches the group as placed; it may gather only from a full window of
 * periods under one load shape (the domain's busy vCPUs, demand and
 * sharing processes: home_sample()), lets the moves settle, measures a
 * window alike that one, and backs the group off when its progress per
 * unit of demand dropped by more than BENEFIT_LOSS:
 *
 *   IDLE -(a full window; moved)-> AGGREGATING
 *   AGGREGATING -(all in, or a period without a move: partly
 *                 aggregated, the rest cannot move)-> SETTLING
 *   SETTLING -(SETTLE_PERIODS without a move)-> MEASURING
 *   MEASURING -(a window alike the first: no loss)-> KEPT | (loss)-> HOLD
 *             -(none in time: the load changed)-> IDLE, released
 *   KEPT -(a full window in another load shape)-> IDLE, released and
 *         tried again (HOLD when a loss is remembered for that shape)
 *   HOLD -(the memory of the loss expired, or another load shape)-> IDLE
 *
 * A loss is remembered for its load shape: at an alike load the group is
 * not gathered again for twice the hold-down, doubling with each loss
 * there (trial_fail()).
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>

static uint64_t
holddown_ns(const struct dom *d)
{
	return (uint64_t)d->annot->tune.holddown_s * 1000000000ull;
}

/* "8 busy vCPUs, 8.2 CPUs" */
static void
fmt_shape(const struct trial_shape *sh, char *buf, size_t len)
{
	snprintf(buf, len, "%d busy vCPU%s, %.1f CPUs", sh->busy, sh->busy == 1 ? "" : "s", sh->demand);
}

/* The group's progress and demand this period: its threads' instructions
 * (counters), else the domain's memory bandwidth. */
static void
grp_obs(const struct policy_input *in, const struct dom *d, const struct policy_domain_in *di,
        const struct grp *g, struct trial_sum *one)
{
	int v;

	*one = (struct trial_sum){ .n = 1 };
	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		one->instr += (double)di->vcpus[v].instructions;
		one->run += (double)di->vcpus[v].runtime_ns;
		one->delay += (double)di->vcpus[v].run_delay_ns;
	}
	if (!in->host.counters)
		one->instr = 0;
	one->dinstr = d->hc.sum.instr;
	one->ddemand = d->hc.sum.run + d->hc.sum.delay;
	if (d->hc.sum.nbytes > 0) {
		one->bytes = d->hc.sum.bytes;
		one->bdemand = d->hc.sum.bdemand;
		one->nbytes = 1;
	}
}

static const char *
by_what(const struct policy_input *in)
{
	return in->host.counters ? "" : " (the domain's memory bandwidth)";
}

/* Whether a vCPU of the group took a new pin at the start of the period
 * just observed that the check did not give it. */
static bool
repinned(const struct policy_state *s, const struct dom *d, const struct grp *g)
{
	int v;

	if (d->pinned_step + 1 != s->step || d->pinned_step == g->own_step)
		return false;
	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		if (d->pin_step[v] == d->pinned_step)
			return true;
	}
	return false;
}

bool
benefit_may_aggregate(struct policy_state *s, const struct policy_input *in, struct dom *d, struct grp *g)
{
	char shape[64];

	if (g->bstate == BENEFIT_HOLD)
		return false;
	if (g->bstate != BENEFIT_IDLE)
		return true;
	if (d->hc.st == HOME_TRIAL) {
		snprintf(g->why, sizeof(g->why), "not aggregated while the domain's home is on trial");
		return false;
	}
	/* one trial of a domain at a time: each judged with the rest as it is */
	for (int i = 0; i < d->ngroups; i++)
		if (&d->groups[i] != g && (d->groups[i].tr.phase != TRIAL_IDLE || d->groups[i].own_step == s->step)) {
			snprintf(g->why, sizeof(g->why), "not aggregated while group '%s' of the domain is on trial",
			    d->groups[i].name);
			return false;
		}
	const struct trial_shape *sh = trial_shape(&g->tr);
	const struct trial_memo *m = sh ? trial_recall(&g->tr, sh, 0, in->now_ns) : NULL;
	if (m != NULL) {
		fmt_shape(sh, shape, sizeof(shape));
		snprintf(g->why, sizeof(g->why), "not aggregated: at this load (%s) aggregation lost %.0f%% of its "
		    "progress per demand%s %.0f s ago; tried again in %.0f s", shape, 100.0 * (1.0 - m->ratio),
		    by_what(in), (double)(in->now_ns - m->at_ns) / 1e9, (double)(m->until_ns - in->now_ns) / 1e9);
		g->bstate = g->bseen = BENEFIT_HOLD;
		g->hold_until_ns = m->until_ns;
		g->tr.has_verdict = true;       /* held for this shape: another one is looked at */
		g->tr.verdict_shape = *sh;
		return false;
	}
	if (!trial_ready(&g->tr)) {
		snprintf(g->why, sizeof(g->why), "measuring its progress as placed before aggregating (%d of %d periods "
		    "at one load)", g->tr.ring_n, trial_window_len(in->period_ns));
		return false;
	}
	return true;
}

/* Where the group's vCPUs ran as placed, before gathering began. */
static void
note_origin(const struct policy_state *s, struct dom *d, const struct policy_domain_in *di, const struct grp *g)
{
	int v;

	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		int c = di->vcpus[v].last_cpu;
		d->origin[v] = c >= 0 && c < s->ncpu && cpuset_isset(&s->topo->all, c) ? topo_llc_of(s->topo, c) : -1;
	}
}

/* The share of vCPU v's home in the LLC it ran on as placed into x;
 * false when it has none there. */
static bool
origin_share(const struct policy_state *s, const struct dom *d, int v, struct cpuset *x)
{
	if (d->origin[v] < 0)
		return false;
	cpuset_and(x, d->home[v], policy_llc_cpus(s, d->origin[v]));
	return !cpuset_empty(x);
}

/* Released: each vCPU held on its share of the LLC it ran on as placed
 * for a few periods, then free on its home pin. The kernel would leave
 * the threads where gathering put them (it balances LLCs by whole
 * threads), so that "as placed" would not be what it was. */
static void
release_to_origin(struct dom *d, struct grp *g, const struct policy_state *s)
{
	int v;

	groups_release(d, g);
	g->own_step = s->step;
	CPUSET_FOREACH(v, &g->vcpus) {
		struct cpuset x;
		if (v >= d->nvcpus)
			break;
		if (origin_share(s, d, v, &x)) {
			dom_pin_set(d, &d->want[v], &x);
			g->restore_periods = HOME_SETTLE_PERIODS + 1;
		}
	}
}

/* The hold on the origin LLCs ends: true when it did now. */
static bool
restore_tick(struct dom *d, struct grp *g, const struct policy_state *s)
{
	int v;

	if (g->restore_periods <= 0 || --g->restore_periods > 0)
		return false;
	CPUSET_FOREACH(v, &g->vcpus) {
		struct cpuset x;
		if (v >= d->nvcpus)
			break;
		if (origin_share(s, d, v, &x) && cpuset_equal(d->want[v], &x))
			dom_pin_share(d, &d->want[v], d->home[v]);
		d->origin[v] = -1;
	}
	return true;
}

/* The gathered group is measured: keep it, or back off. */
static void
benefit_verdict(struct policy_state *s, const struct policy_input *in, struct dom *d, struct grp *g,
                int outside, int nvcpus, struct policy_plan *plan)
{
	struct trial *t = &g->tr;
	enum trial_signal sig = trial_pick(&t->first, &t->second, in->host.counters);
	double before = trial_value(&t->first, sig), after = trial_value(&t->second, sig);
	double r = trial_ratio(t, sig);
	char part[96] = "", shape[64], rest[96] = "";

	fmt_shape(&t->ref, shape, sizeof(shape));
	if (outside > 0)
		snprintf(part, sizeof(part), "; partly aggregated: %d of %d vCPUs could not move", outside, nvcpus);
	/* with counters, the whole domain too: a group gathered onto the
	 * LLC of its other threads may cost them more than it gains */
	if (sig == TRIAL_SIG_INSTR && t->first.ddemand > 0 && t->second.ddemand > 0 && t->first.dinstr > 0) {
		double dr = (t->second.dinstr / t->second.ddemand) / (t->first.dinstr / t->first.ddemand);
		if (dr < 1.0 - BENEFIT_LOSS && dr < r) {
			snprintf(rest, sizeof(rest), " (the group %+.0f%%, the whole domain %+.0f%%)", 100.0 * (r - 1.0),
			    100.0 * (dr - 1.0));
			r = dr;
			before = t->first.dinstr / t->first.ddemand;
			after = t->second.dinstr / t->second.ddemand;
		}
	}
	if (r < 1.0 - BENEFIT_LOSS) {
		const struct trial_memo *m = trial_fail(t, &t->ref, 0, r, in->now_ns, holddown_ns(d));
		release_to_origin(d, g, s);
		trial_conclude(t, false);
		g->bstate = BENEFIT_HOLD;
		g->hold_until_ns = m->until_ns;
		policy_reason_printf(g->why, sizeof(g->why),
		    "backed off: progress per demanded CPU-second%s %.3g after aggregation vs %.3g before (-%.0f%%%s) "
		    "at %s; not aggregated at this load for %.0f s%s", by_what(in), after * 1e9, before * 1e9,
		    100.0 * (1.0 - r), rest, shape, (double)(m->until_ns - in->now_ns) / 1e9, part);
		policy_plan_add(s, plan, POLICY_ACT_BACKOFF, d, -1, NULL, "group '%s': %s", g->name, g->why);
		s->stats.backoffs++;
		return;
	}
	trial_conclude(t, true);
	g->bstate = BENEFIT_KEPT;
	snprintf(g->why, sizeof(g->why),
	    "kept: progress per demanded CPU-second%s %.3g after aggregation vs %.3g before at %s%s",
	    by_what(in), after * 1e9, before * 1e9, shape, part);
}

/* Kept or held: another load shape is looked at afresh. */
static void
benefit_reshape(const struct policy_state *s, const struct policy_input *in, struct dom *d, struct grp *g)
{
	const struct trial_shape *sh = trial_shape(&g->tr);
	char a[64], b[64];

	if (!trial_shape_changed(&g->tr))
		return;
	fmt_shape(&g->tr.verdict_shape, a, sizeof(a));
	fmt_shape(sh, b, sizeof(b));
	g->tr.verdict_shape = *sh;
	if (g->bstate == BENEFIT_KEPT) {
		/* released: the window of it as placed comes next */
		snprintf(g->why, sizeof(g->why), "load changed from %s to %s since the measurement: measuring again",
		    a, b);
		release_to_origin(d, g, s);
		g->bstate = BENEFIT_IDLE;
		trial_rearranged(&g->tr);
		g->retry_after_ns = in->now_ns + 2 * in->period_ns;
	} else if (trial_recall(&g->tr, sh, 0, in->now_ns) == NULL) {
		/* held back as placed: that window is the baseline already */
		snprintf(g->why, sizeof(g->why), "load changed from %s to %s since aggregation lost: trying again",
		    a, b);
		g->bstate = BENEFIT_IDLE;
	}
}

void
benefit_observe(struct policy_state *s, const struct policy_input *in, struct dom *d,
                const struct policy_domain_in *di, struct grp *g, struct policy_plan *plan)
{
	struct trial *t = &g->tr;
	struct trial_sum one;
	int n = 0, v;

	CPUSET_FOREACH(v, &g->vcpus)
		n += v < d->nvcpus;
	/* released or re-placed outside the check: watched afresh */
	if (g->bstate != g->bseen) {
		trial_cancel(t);
		trial_rearranged(t);
	}
	/* the period after something else re-pinned a vCPU of the group (the
	 * steering, its home) ran another arrangement: watched afresh, or,
	 * while gathering, the gathered group settles again */
	if (repinned(s, d, g)) {
		if (t->phase == TRIAL_IDLE)
			trial_rearranged(t);
		else
			trial_moving(t);
	}
	if (restore_tick(d, g, s)) {
		g->own_step = s->step;
		trial_rearranged(t);
	}
	grp_obs(in, d, di, g, &one);
	/* without counters, a period without a bandwidth figure changes nothing */
	if (!in->host.counters && one.nbytes == 0) {
		g->bseen = g->bstate;
		return;
	}
	enum trial_event ev = trial_observe(t, &d->hc.shape, &one, in->period_ns, s->incremental);

	switch (g->bstate) {
	case BENEFIT_IDLE:
		break;
	case BENEFIT_AGGREGATING:
	case BENEFIT_SETTLING:
	case BENEFIT_MEASURING:
		if (ev == TRIAL_DONE) {
			benefit_verdict(s, in, d, g, g->outside, n, plan);
			break;
		}
		if (ev == TRIAL_ABANDON) {
			char shape[64];
			fmt_shape(&t->ref, shape, sizeof(shape));
			release_to_origin(d, g, s);
			if (trial_abandon(t, true)) {
				g->bstate = BENEFIT_HOLD;
				g->hold_until_ns = in->now_ns + holddown_ns(d);
				snprintf(g->why, sizeof(g->why), "released: no verdict, the load changed during %d trials "
				    "in a row (the last from %s); not aggregated for %ds", TRIAL_MAX_ABORTS, shape,
				    d->annot->tune.holddown_s);
			} else {
				g->bstate = BENEFIT_IDLE;
				snprintf(g->why, sizeof(g->why), "released: the load changed from %s while the gathered "
				    "group was measured; no verdict, starting again", shape);
			}
			g->retry_after_ns = in->now_ns + 2 * in->period_ns;
			break;
		}
		if (t->phase == TRIAL_MEASURE)
			g->bstate = BENEFIT_MEASURING;
		break;
	case BENEFIT_KEPT:
		benefit_reshape(s, in, d, g);
		break;
	case BENEFIT_HOLD:
		if (in->now_ns >= g->hold_until_ns)
			g->bstate = BENEFIT_IDLE;
		else
			benefit_reshape(s, in, d, g);
		break;
	}
	g->bseen = g->bstate;
}

void
benefit_moved(struct policy_state *s, struct dom *d, const struct policy_domain_in *di, struct grp *g,
              int outside, bool moved)
{
	struct trial *t = &g->tr;

	g->outside = outside;
	if (g->bstate != g->bseen)
		return;         /* released by the steering: the next period sees it */
	if (moved) {
		g->own_step = s->step;
		if (g->bstate == BENEFIT_IDLE && trial_ready(t)) {
			note_origin(s, d, di, g);
			trial_begin(t, 0, SETTLE_PERIODS);
			g->bstate = BENEFIT_AGGREGATING;
		} else if (t->phase != TRIAL_IDLE) {
			trial_moving(t);
			g->bstate = BENEFIT_AGGREGATING;
		}
	} else if (g->bstate == BENEFIT_AGGREGATING) {
		g->bstate = BENEFIT_SETTLING;
	}
	g->bseen = g->bstate;
}
