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
	return (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
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

bool
benefit_may_aggregate(struct policy_state *s, const struct policy_input *in, struct dom *d, struct grp *g)
{
	char shape[64];

	(void)s;
	if (g->bstate == BENEFIT_HOLD)
		return false;
	if (g->bstate != BENEFIT_IDLE)
		return true;
	if (d->hc.st == HOME_TRIAL) {
		snprintf(g->why, sizeof(g->why), "not aggregated while the domain's home is on trial");
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

/* The gathered group is measured: keep it, or back off. */
static void
benefit_verdict(struct policy_state *s, const struct policy_input *in, struct dom *d, struct grp *g,
                int outside, int nvcpus, struct policy_plan *plan)
{
	struct trial *t = &g->tr;
	enum trial_signal sig = trial_pick(&t->first, &t->second, in->host.counters);
	double before = trial_value(&t->first, sig), after = trial_value(&t->second, sig);
	double r = trial_ratio(t, sig);
	char part[96] = "", shape[64];

	fmt_shape(&t->ref, shape, sizeof(shape));
	if (outside > 0)
		snprintf(part, sizeof(part), "; partly aggregated: %d of %d vCPUs could not move", outside, nvcpus);
	if (r < 1.0 - BENEFIT_LOSS) {
		const struct trial_memo *m = trial_fail(t, &t->ref, 0, r, in->now_ns, holddown_ns(d));
		grp_release(d, g);
		trial_conclude(t, false);
		g->bstate = BENEFIT_HOLD;
		g->hold_until_ns = m->until_ns;
		snprintf(g->why, sizeof(g->why),
		    "backed off: progress per demanded CPU-second%s %.3g after aggregation vs %.3g before (-%.0f%%) "
		    "at %s; not aggregated at this load for %.0f s%s", by_what(in), after * 1e9, before * 1e9,
		    100.0 * (1.0 - r), shape, (double)(m->until_ns - in->now_ns) / 1e9, part);
		plan_add(s, plan, POLICY_ACT_BACKOFF, d, -1, NULL, "group '%s': %s", g->name, g->why);
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
benefit_reshape(const struct policy_input *in, struct dom *d, struct grp *g)
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
		grp_release(d, g);
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
benefit_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
               const struct policy_domain_in *di, struct grp *g, int outside, bool moved,
               struct policy_plan *plan)
{
	struct trial *t = &g->tr;
	struct trial_sum one;
	int n = 0, v;

	g->bstep = s->step;
	CPUSET_FOREACH(v, &g->vcpus)
		n += v < d->nvcpus;
	/* released or re-placed outside the check: watched afresh */
	if (g->bstate != g->bseen) {
		trial_cancel(t);
		trial_rearranged(t);
	}
	grp_obs(in, d, di, g, &one);
	/* without counters, a period without a bandwidth figure changes nothing */
	if (!in->host.counters && one.nbytes == 0) {
		g->bseen = g->bstate;
		return;
	}
	enum trial_event ev = trial_observe(t, &d->hc.shape, &one, in->period_ns);

	switch (g->bstate) {
	case BENEFIT_IDLE:
		if (moved && trial_ready(t)) {
			trial_begin(t, 0, SETTLE_PERIODS);
			g->bstate = BENEFIT_AGGREGATING;
		}
		break;
	case BENEFIT_AGGREGATING:
	case BENEFIT_SETTLING:
	case BENEFIT_MEASURING:
		if (moved)
			trial_moving(t);
		if (ev == TRIAL_DONE) {
			benefit_verdict(s, in, d, g, outside, n, plan);
			break;
		}
		if (ev == TRIAL_ABANDON) {
			char shape[64];
			fmt_shape(&t->ref, shape, sizeof(shape));
			grp_release(d, g);
			if (trial_abandon(t, true)) {
				g->bstate = BENEFIT_HOLD;
				g->hold_until_ns = in->now_ns + (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
				snprintf(g->why, sizeof(g->why), "released: no verdict, the load changed during %d trials "
				    "in a row (the last from %s); not aggregated for %ds", TRIAL_MAX_ABORTS, shape,
				    d->annot.tune.holddown_s);
			} else {
				g->bstate = BENEFIT_IDLE;
				snprintf(g->why, sizeof(g->why), "released: the load changed from %s while the gathered "
				    "group was measured; no verdict, starting again", shape);
			}
			g->retry_after_ns = in->now_ns + 2 * in->period_ns;
			break;
		}
		g->bstate = t->phase == TRIAL_MEASURE ? BENEFIT_MEASURING : moved ? BENEFIT_AGGREGATING :
		            BENEFIT_SETTLING;
		break;
	case BENEFIT_KEPT:
		benefit_reshape(in, d, g);
		break;
	case BENEFIT_HOLD:
		if (in->now_ns >= g->hold_until_ns)
			g->bstate = BENEFIT_IDLE;
		else
			benefit_reshape(in, d, g);
		break;
	}
	g->bseen = g->bstate;
}
