// SPDX-License-Identifier: GPL-2.0-or-later
/* benefit.c - the benefit check of an aggregated group (docs/design.md,
 * "The benefit check"). With instruction counters (else with the domain's
 * achieved memory bandwidth, where the host monitors it: resctrl) the
 * engine learns the group's progress per wall second while it runs as
 * placed (the baseline),
 * lets the moves into the preferred LLC settle, measures again, and backs
 * the group off for the hold-down when progress dropped by more than
 * BENEFIT_LOSS:
 *
 *   IDLE -(moved, baseline known)-> AGGREGATING
 *   AGGREGATING -(all in, or a period without a move: partly
 *                 aggregated, the rest cannot move)-> SETTLING
 *   SETTLING -(SETTLE_PERIODS without a move)-> MEASURING
 *   MEASURING -(MEASURE_PERIODS: no loss)-> KEPT | (loss)-> HOLD
 *   KEPT -(load changed for 2 periods, once per hold-down)-> IDLE
 *   HOLD -(hold-down over)-> IDLE
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>

static uint64_t
holddown_ns(const struct dom *d)
{
	return (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
}

/* The baseline: progress while the group runs as placed. */
static void
benefit_idle(struct grp *g, double instr_rate, double rt, bool moved)
{
	if (g->active_periods == 0) {
		g->rate_valid = false;
	} else if (rt > 0) {
		g->rate_ewma = g->rate_valid ? 0.5 * g->rate_ewma + 0.5 * instr_rate : instr_rate;
		g->rate_valid = true;
	}
	if (moved && g->rate_valid) {
		g->base_rate = g->rate_ewma;
		g->bstate = BENEFIT_AGGREGATING;
	}
}

/* The load changed since the measurement (e.g. a new phase of the guest's
 * work): measure again, at most once per hold-down. */
static void
benefit_kept(const struct policy_input *in, struct dom *d, struct grp *g, double load)
{
	if (fabs(load - g->meas_load) >= 1.0)
		g->load_changed_periods++;
	else
		g->load_changed_periods = 0;
	if (g->load_changed_periods < 2 || in->now_ns < g->recheck_after_ns)
		return;
	snprintf(g->why, sizeof(g->why), "load changed from %.1f to %.1f CPUs since the measurement: "
	    "measuring again", g->meas_load, load);
	grp_release(d, g);
	g->bstate = BENEFIT_IDLE;
	g->rate_valid = false;
	g->load_changed_periods = 0;
	g->recheck_after_ns = in->now_ns + holddown_ns(d);
	g->retry_after_ns = in->now_ns + 2 * in->period_ns;
}

/* Sum progress over MEASURE_PERIODS, then keep or back off. */
static void
benefit_measuring(struct policy_state *s, const struct policy_input *in, struct dom *d,
                  struct grp *g, double instr, double rt, double load, int outside, int nvcpus,
                  struct policy_plan *plan)
{
	char part[96] = "";
	const char *by = in->host.counters ? "" : " (the domain's memory bandwidth)";

	g->meas_instr += instr;
	g->meas_wall_ns += (double)in->period_ns;
	g->meas_load = load;
	if (++g->bstate_periods < MEASURE_PERIODS)
		return;
	if (outside > 0)
		snprintf(part, sizeof(part), "; partly aggregated: %d of %d vCPUs could not move", outside, nvcpus);
	double after = g->meas_wall_ns > 0 ? g->meas_instr / g->meas_wall_ns : 0;
	if (after < g->base_rate * (1.0 - BENEFIT_LOSS)) {
		g->hold_until_ns = in->now_ns + holddown_ns(d);
		snprintf(g->why, sizeof(g->why),
		    "backed off: progress per second%s %.3g after aggregation vs %.3g before (-%.0f%%); "
		    "hold-down %ds%s", by, after, g->base_rate, 100.0 * (1.0 - after / g->base_rate),
		    d->annot.tune.holddown_s, part);
		plan_add(s, plan, POLICY_ACT_BACKOFF, d, -1, NULL, "group '%s': %s", g->name, g->why);
		s->stats.backoffs++;
		grp_release(d, g);
		g->bstate = BENEFIT_HOLD;
	} else {
		g->bstate = BENEFIT_KEPT;
		g->rate_ewma = after;
		snprintf(g->why, sizeof(g->why),
		    "kept: progress per second%s %.3g after aggregation vs %.3g before%s",
		    by, after, g->base_rate, part);
	}
}

void
benefit_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
               const struct policy_domain_in *di, struct grp *g, int outside, bool moved,
               double load, struct policy_plan *plan)
{
	double instr = 0, rt = 0;
	int v, n = 0;

	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		n++;
		instr += (double)di->vcpus[v].instructions;
		rt += (double)di->vcpus[v].runtime_ns;
	}
	/* without counters: the domain's bandwidth, which a move of one of
	 * its groups changes; a period without a figure changes nothing */
	if (!in->host.counters) {
		if (!di->mbm_valid)
			return;
		instr = (double)di->mbm_bytes;
	}
	/* progress per wall second: a group squeezed onto fewer CPUs than it
	 * has busy threads runs less, which a rate per CPU-second hides */
	double rate = rt > 0 ? instr / (double)in->period_ns : 0;

	switch (g->bstate) {
	case BENEFIT_IDLE:
		benefit_idle(g, rate, rt, moved);
		break;
	case BENEFIT_KEPT:
		benefit_kept(in, d, g, load);
		break;
	case BENEFIT_AGGREGATING:
		/* all in, or as far as it goes: measure what was achieved */
		if (outside == 0 || !moved) {
			g->bstate = BENEFIT_SETTLING;
			g->bstate_periods = 0;
		}
		break;
	case BENEFIT_SETTLING:
		if (moved) {
			g->bstate = BENEFIT_AGGREGATING;
		} else if (++g->bstate_periods >= SETTLE_PERIODS) {
			g->bstate = BENEFIT_MEASURING;
			g->bstate_periods = 0;
			g->meas_instr = g->meas_wall_ns = 0;
		}
		break;
	case BENEFIT_MEASURING:
		benefit_measuring(s, in, d, g, instr, rt, load, outside, n, plan);
		break;
	case BENEFIT_HOLD:
		if (in->now_ns >= g->hold_until_ns) {
			g->bstate = BENEFIT_IDLE;
			g->rate_valid = false;
		}
		break;
	}
}
