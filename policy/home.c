// SPDX-License-Identifier: GPL-2.0-or-later
/* home.c - the home check (docs/design.md, "Benefit check"): the home llcd
 * chose for a domain is measured like a group move. Once a domain with a
 * new home (placed, re-placed) or with a progress drop is busy, the engine
 * measures MEASURE_PERIODS in that home (the baseline), widens it over
 * more LLCs (isolated domains: the same number of whole cores, spread over
 * other LLCs: placement_widen()), lets it settle, measures again, and
 * keeps the wider home when progress rose by more than HOME_GAIN, else
 * goes back to the narrow one; either way it holds the decision for the
 * hold-down:
 *
 *   WATCH -(armed, busy ACTIVE_PERIODS, widenable)-> BASE
 *   BASE -(MEASURE_PERIODS; a signal, or run delay > HOME_DELAY)-> SETTLE
 *        -(no signal)-> WATCH, saying so
 *   SETTLE -(SETTLE_PERIODS)-> MEASURE
 *   MEASURE -(MEASURE_PERIODS)-> HOLD (wider kept, or narrow restored)
 *   HOLD -(hold-down over)-> WATCH
 *
 * Progress, by the first signal the host has: instructions per wall
 * second (counters), achieved memory bandwidth per wall second (resctrl
 * monitoring, policy_domain_in.mbm_bytes), else the share of time the
 * vCPUs waited for a CPU (run delay; lower is better).
 */
#include "policy_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The home check's last decision (a reason string: cut at POLICY_REASON). */
static void __attribute__((format(printf, 3, 4)))
say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void
home_placed(struct dom *d)
{
	struct home_check *h = &d->hc;

	h->st = HOME_WATCH;
	h->armed = true;
	h->armed_by = "a new home";
	h->busy_periods = 0;
	h->ewma_valid = false;
	h->drop_periods = 0;
	h->widened = false;
}

enum home_signal { SIG_INSTR, SIG_BYTES, SIG_DELAY };

static const char *const sig_name[] = {
	[SIG_INSTR] = "instructions per second",
	[SIG_BYTES] = "memory bandwidth (bytes per second)",
	[SIG_DELAY] = "run delay",
};

/* The signal both measurements have, best first. */
static enum home_signal
pick_signal(const struct home_meas *a, const struct home_meas *b, bool counters)
{
	if (counters && a->instr > 0 && b->instr > 0)
		return SIG_INSTR;
	if (a->nbytes > 0 && b->nbytes > 0)
		return SIG_BYTES;
	return SIG_DELAY;
}

static double
sig_value(const struct home_meas *m, enum home_signal sig, uint64_t period_ns)
{
	switch (sig) {
	case SIG_INSTR:
		return m->wall > 0 ? m->instr / m->wall * 1e9 : 0;
	case SIG_BYTES:
		return m->nbytes > 0 ? m->bytes / ((double)m->nbytes * (double)period_ns) * 1e9 : 0;
	case SIG_DELAY:
		break;
	}
	return m->run + m->delay > 0 ? m->delay / (m->run + m->delay) : 0;
}

static void
meas_add(struct home_meas *m, const struct policy_domain_in *di, double instr, double run,
         double delay, uint64_t period_ns)
{
	m->instr += instr;
	m->run += run;
	m->delay += delay;
	m->wall += (double)period_ns;
	m->n++;
	if (di->mbm_valid) {
		m->bytes += (double)di->mbm_bytes;
		m->nbytes++;
	}
}

static uint64_t
holddown_ns(const struct dom *d)
{
	return (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
}

/* Watching: arm on a drop of the primary signal (the load unchanged), and
 * start the baseline once an armed domain is busy. */
static void
home_watch(struct policy_state *s, const struct policy_input *in, struct dom *d,
           const struct policy_domain_in *di, double instr, double load)
{
	struct home_check *h = &d->hc;
	bool busy = load >= HOME_BUSY_CPUS;
	double p = -1;
	char where[64];

	h->busy_periods = busy ? h->busy_periods + 1 : 0;
	if (in->host.counters && instr > 0)
		p = instr / (double)in->period_ns;
	else if (di->mbm_valid)
		p = (double)di->mbm_bytes / (double)in->period_ns;
	if (p >= 0 && busy) {
		bool same_load = h->ewma_valid && fabs(load - h->ewma_load) < 0.5;
		if (same_load && p < h->ewma * (1.0 - HOME_DROP)) {
			if (++h->drop_periods >= HOME_DROP_PERIODS && !h->armed) {
				h->armed = true;
				h->armed_by = "a drop in progress";
				h->ewma_valid = false;
			}
		} else {
			h->drop_periods = 0;
			h->ewma = h->ewma_valid && same_load ? 0.5 * h->ewma + 0.5 * p : p;
			h->ewma_load = load;
			h->ewma_valid = true;
		}
	}
	if (!h->armed || h->busy_periods < ACTIVE_PERIODS)
		return;
	if (!placement_can_widen(s, &in->host, d)) {
		pin_llcs(s, &d->allot, where, sizeof(where));
		say(h->why, sizeof(h->why), "home on %s as placed: no wider home (%s)", where,
		    !d->isolated ? "the shared pool is its home" :
		    d->annot.topology == POLICY_TOPO_MATCH ? "topology=\"match\" keeps guest die i on host LLC i" :
		    "no free whole cores on other LLCs");
		h->armed = false;
		return;
	}
	memset(&h->base, 0, sizeof(h->base));
	h->st = HOME_BASE;
	h->periods = 0;
}

/* The baseline is measured: widen when there is a signal to judge it by. */
static void
home_base_done(struct policy_state *s, const struct policy_input *in, struct dom *d)
{
	struct home_check *h = &d->hc;
	const struct home_meas *b = &h->base;
	double frac = b->run + b->delay > 0 ? b->delay / (b->run + b->delay) : 0;
	char wide[64];

	pin_llcs(s, &d->allot, h->narrow_where, sizeof(h->narrow_where));
	h->armed = false;
	h->st = HOME_WATCH;
	if (!(in->host.counters && b->instr > 0) && b->nbytes == 0 && frac <= HOME_DELAY) {
		say(h->why, sizeof(h->why), "home on %s not measured: no instruction counters or "
		    "bandwidth monitoring, and run delay %.1f%% (at most %.0f%%) shows no CPU wait a wider "
		    "home would relieve; a memory-bound loss cannot be seen without them", h->narrow_where,
		    100.0 * frac, 100.0 * HOME_DELAY);
		return;
	}
	h->narrow = d->allot;
	if (!placement_widen(s, &in->host, d)) {
		say(h->why, sizeof(h->why), "home on %s as placed: no wider home", h->narrow_where);
		return;
	}
	pin_llcs(s, &d->allot, wide, sizeof(wide));
	say(h->why, sizeof(h->why), "home widened from %s to %s on trial (%s): measuring",
	    h->narrow_where, wide, h->armed_by);
	h->st = HOME_SETTLE;
	h->periods = 0;
}

/* The wider home is measured: keep it, or go back. */
static void
home_verdict(struct policy_state *s, const struct policy_input *in, struct dom *d,
             struct policy_plan *plan)
{
	struct home_check *h = &d->hc;
	enum home_signal sig = pick_signal(&h->base, &h->meas, in->host.counters);
	double before = sig_value(&h->base, sig, in->period_ns), after = sig_value(&h->meas, sig, in->period_ns);
	bool gain = sig == SIG_DELAY ? before - after > HOME_GAIN : after > before * (1.0 + HOME_GAIN);
	char wide[64], vals[192];

	pin_llcs(s, &d->allot, wide, sizeof(wide));
	if (sig == SIG_DELAY)
		say(vals, sizeof(vals), "%s %.1f%% on %s vs %.1f%% on %s", sig_name[sig], 100.0 * after, wide,
		    100.0 * before, h->narrow_where);
	else
		say(vals, sizeof(vals), "%s %.3g on %s vs %.3g on %s (%+.0f%%)", sig_name[sig], after, wide,
		    before, h->narrow_where, before > 0 ? 100.0 * (after / before - 1.0) : 0.0);
	h->st = HOME_HOLD;
	h->hold_until_ns = in->now_ns + holddown_ns(d);
	if (gain) {
		h->widened = true;
		say(h->why, sizeof(h->why), "home widened from %s to %s%s: %s; hold-down %ds",
		    h->narrow_where, wide, d->isolated ? " (whole cores on other LLCs)" : "", vals,
		    d->annot.tune.holddown_s);
		plan_add(s, plan, POLICY_ACT_BACKOFF, d, -1, &d->allot, "%s", h->why);
		s->stats.backoffs++;
		return;
	}
	if (placement_restore(s, &in->host, d, &h->narrow))
		say(h->why, sizeof(h->why), "home kept on %s: %s, no gain over %.0f%%; hold-down %ds",
		    h->narrow_where, vals, 100.0 * HOME_GAIN, d->annot.tune.holddown_s);
	else
		say(h->why, sizeof(h->why), "home stays on %s: %s, no gain, but the cores of %s are "
		    "taken; hold-down %ds", wide, vals, h->narrow_where, d->annot.tune.holddown_s);
	h->widened = !cpuset_equal(&d->allot, &h->narrow);
}

void
home_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
            const struct policy_domain_in *di, struct policy_plan *plan)
{
	struct home_check *h = &d->hc;
	double instr = 0, run = 0, delay = 0;

	if (d->annot.mode != POLICY_MODE_AGGREGATE && d->annot.mode != POLICY_MODE_SPREAD)
		return;
	for (int v = 0; v < d->nvcpus; v++) {
		instr += (double)di->vcpus[v].instructions;
		run += (double)di->vcpus[v].runtime_ns;
		delay += (double)di->vcpus[v].run_delay_ns;
	}
	double load = run / (double)in->period_ns;
	if (!in->host.counters)
		instr = 0;

	switch (h->st) {
	case HOME_WATCH:
		home_watch(s, in, d, di, instr, load);
		break;
	case HOME_BASE:
		if (load < HOME_BUSY_CPUS) {    /* went idle: wait for the load again */
			h->st = HOME_WATCH;
			h->busy_periods = 0;
			break;
		}
		meas_add(&h->base, di, instr, run, delay, in->period_ns);
		if (++h->periods >= MEASURE_PERIODS)
			home_base_done(s, in, d);
		break;
	case HOME_SETTLE:
		if (++h->periods >= SETTLE_PERIODS) {
			memset(&h->meas, 0, sizeof(h->meas));
			h->st = HOME_MEASURE;
			h->periods = 0;
		}
		break;
	case HOME_MEASURE:
		meas_add(&h->meas, di, instr, run, delay, in->period_ns);
		if (++h->periods >= MEASURE_PERIODS)
			home_verdict(s, in, d, plan);
		break;
	case HOME_HOLD:
		if (in->now_ns >= h->hold_until_ns) {
			h->st = HOME_WATCH;
			h->busy_periods = 0;
			h->ewma_valid = false;
		}
		break;
	}
}
