// SPDX-License-Identifier: GPL-2.0-or-later
/* home.c - the home check (docs/design.md, "The home is measured too"):
 * the home llcd chose for an isolated domain is a trial (trial.c) like a
 * group move. The home in place is watched all the time; when there is a
 * reason to look at it and a full window of it under one load shape, the
 * engine tries another home with the same number of whole cores:
 *
 *  - wider (placement_reshape()): twice the LLCs it has (as far as the
 *    host offers them), kept when progress per unit of demand rises by
 *    more than HOME_GAIN, and then tried wider still; a domain only widens
 *    as far as it gains, which leaves whole LLCs where the host has them;
 *  - narrower: the fewest LLCs that hold its cores, kept unless the wide
 *    home was better by more than HOME_GAIN.
 *
 * Reasons to look: a new home (wider); the load shape changed since the
 * last verdict (wider when the demand rose, else narrower); progress per
 * demand (instructions, or memory bandwidth) dropped by more than
 * HOME_DROP for HOME_DROP_PERIODS under an alike load (narrower when
 * widened, else wider); the domain's threads started sharing data (a
 * process the guest reports with several vCPUs, a group inferred from
 * wakeups: narrower, when widened); cores were freed after the home could
 * not be wider (wider). A failed trial is remembered for its load shape
 * (trial_fail()): the same trial is not started again at an alike load
 * until that memory expires, whatever the reason to look.
 *
 *   WATCH -(a reason, a full window, busy, no group on trial)-> TRIAL
 *   TRIAL -(settled, a window alike the first: tried home kept or undone)-> WATCH
 *         -(no alike window in time: undone, "starting again")-> WATCH
 *
 * Progress, by the first signal both windows have: instructions per
 * demanded CPU-second (counters), the domain's memory bandwidth per
 * demanded CPU-second (resctrl monitoring, policy_domain_in.mbm_bytes),
 * else the share of demand that ran (run delay: higher is better). With
 * neither counters nor bandwidth monitoring a home is widened only when
 * the window's run delay exceeds HOME_DELAY.
 */
#include "policy_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint64_t
holddown_ns(const struct dom *d)
{
	return (uint64_t)d->annot->tune.holddown_s * 1000000000ull;
}

static bool
checked(const struct dom *d)
{
	return d->annot->mode == POLICY_MODE_AGGREGATE || d->annot->mode == POLICY_MODE_SPREAD;
}

static const char LADDER[] = "it gained from the wider home";

/* A decision taken without a trial (no wider home, not measured, a
 * failure remembered) stands for the load shape in place, like a verdict:
 * the home is looked at again when the shape changes. */
static void
decided(struct home_check *h)
{
	const struct trial_shape *sh = trial_shape(&h->tr);

	h->pending = NULL;
	if (sh) {
		h->tr.has_verdict = true;
		h->tr.verdict_shape = *sh;
	}
}

static void
look(struct home_check *h, const char *why, enum home_dir dir, const char *what)
{
	h->pending = why;
	h->pending_dir = dir;
	snprintf(h->pending_what, sizeof(h->pending_what), "%s", what ? what : "");
}

void
home_placed(struct policy_state *s, struct dom *d)
{
	struct home_check *h = &d->hc;

	memset(h, 0, sizeof(*h));
	trial_init(&h->tr);
	h->st = HOME_WATCH;
	h->placed_llcs = placement_llcs(s, &d->allot);
	look(h, "a new home", HOME_WIDER, NULL);
}

void
home_rearranged(struct policy_state *s, struct dom *d, const char *why)
{
	struct home_check *h = &d->hc;

	trial_cancel(&h->tr);
	trial_rearranged(&h->tr);
	h->st = HOME_WATCH;
	h->widened = placement_llcs(s, &d->allot) > h->placed_llcs;
	h->ewma_valid[0] = h->ewma_valid[1] = false;
	policy_reason_printf(h->why, sizeof(h->why), "%s", why);
}

/* "8 busy vCPUs, 8.2 CPUs" */
static void
fmt_shape(const struct trial_shape *sh, char *buf, size_t len)
{
	policy_reason_printf(buf, len, "%d busy vCPU%s, %.1f CPUs", sh->busy, sh->busy == 1 ? "" : "s", sh->demand);
}

/* "from 8 busy vCPUs, 8.2 CPUs to 2 busy vCPUs, 2.3 CPUs", or, where only
 * the signature differs, "in the processes that share data (8 busy
 * vCPUs, 8.2 CPUs)" */
static void
fmt_change(const struct trial_shape *a, const struct trial_shape *b, char *buf, size_t len)
{
	struct trial_shape x = *b;
	char sa[64], sb[64];

	fmt_shape(a, sa, sizeof(sa));
	fmt_shape(b, sb, sizeof(sb));
	x.sig = a->sig;
	if (a->sig != b->sig && trial_alike(a, &x))
		policy_reason_printf(buf, len, "in the processes that share data (%s)", sb);
	else
		policy_reason_printf(buf, len, "from %s to %s", sa, sb);
}

/* --- the period's sample ---------------------------------------------------- */

static uint32_t
proc_hash(const struct policy_hot_report *rep)
{
	uint32_t x = 2166136261u ^ (uint32_t)rep->pid;

	for (size_t i = 0; i < sizeof(rep->name) && rep->name[i]; i++) {
		x ^= (uint8_t)rep->name[i];
		x *= 16777619u;
	}
	return x ? x : 1;
}

static uint32_t
name_hash(const char *name)
{
	uint32_t x = 2166136261u;

	for (; *name; name++) {
		x ^= (uint8_t)*name;
		x *= 16777619u;
	}
	return x;
}

/* The last step's procs_sig() took no new slot, its reports are these
 * (policy_dom_reports_same()), and each process kept was reported then: the same
 * reports find the same slots again, none new, none to age out; only
 * their report steps move (true). */
static bool
procs_again(struct policy_state *s, struct dom *d, const struct policy_domain_in *di)
{
	struct home_check *h = &d->hc;

	if (!s->incremental || di->nreports == 0 || !policy_dom_reports_same(s, d, di) || !h->procs_noop ||
	    h->procs_step + 1 != s->step)
		return false;
	for (int i = 0; i < HOME_PROCS; i++)
		if (h->procs[i].used && h->procs[i].last_step + 1 != s->step)
			return false;
	for (int i = 0; i < HOME_PROCS; i++)
		if (h->procs[i].used)
			h->procs[i].last_step = s->step;
	h->procs_step = s->step;
	return true;
}

/* The processes the guest reports with two or more vCPUs (its helper
 * keeps a process it reported for a few periods of its own; llcd a period
 * more, HOME_PROC_GRACE, for a report lost on the way): their part of the
 * signature, and the first that is new this period into what. */
static uint32_t
procs_sig(struct policy_state *s, struct dom *d, const struct policy_domain_in *di, char *what,
          size_t len)
{
	struct home_check *h = &d->hc;
	struct cpuset all;
	uint32_t sig = 0;
	bool noop = true;

	if (procs_again(s, d, di))
		return h->procs_sig;
	if (di->nreports > 0) {         /* (2,048 bits to clear and set) */
		cpuset_zero(&all);
		cpuset_set_range(&all, 0, d->nvcpus - 1);
	}
	for (int r = 0; r < di->nreports; r++) {
		const struct policy_hot_report *rep = &di->reports[r];
		struct cpuset vc;
		uint32_t x = proc_hash(rep);
		int i, slot = -1;
		cpuset_and(&vc, &rep->vcpus, &all);
		if (cpuset_count_upto(&vc, 2) < 2)
			continue;
		for (i = 0; i < HOME_PROCS; i++) {
			if (h->procs[i].used && h->procs[i].pid == rep->pid && h->procs[i].hash == x)
				break;
			if (slot < 0 || (!h->procs[i].used && h->procs[slot].used) ||
			    (h->procs[i].used == h->procs[slot].used && h->procs[i].last_step < h->procs[slot].last_step))
				slot = i;
		}
		if (i == HOME_PROCS) {
			noop = false;
			i = slot;
			h->procs[i] = (struct home_proc){ .used = true, .pid = rep->pid, .hash = x };
			if (what[0] == '\0') {
				char name[POLICY_GROUP_NAME];
				size_t j;
				for (j = 0; j + 1 < sizeof(name) && j < sizeof(rep->name) && rep->name[j]; j++) {
					char c = rep->name[j];
					name[j] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ? c : '_';
				}
				name[j] = '\0';
				policy_reason_printf(what, len, "the guest reports process '%s' on %d vCPUs", name, cpuset_count(&vc));
			}
		}
		h->procs[i].last_step = s->step;
	}
	bool any = false;
	for (int i = 0; i < HOME_PROCS; i++) {
		if (!h->procs[i].used)
			continue;
		if (s->step - h->procs[i].last_step > HOME_PROC_GRACE) {
			h->procs[i].used = false;
		} else {
			sig += h->procs[i].hash;
			any = true;
		}
	}
	h->procs_any = any;
	h->procs_noop = s->incremental && noop;
	h->procs_step = s->step;
	h->procs_sig = sig;
	return sig;
}

/* The processes the guest reports (procs_sig()) and the groups inferred
 * from wakeups: their signature, and the first that is new this period
 * into what (a widened home is tried narrower then). */
static uint32_t
sharing_sig(struct policy_state *s, struct dom *d, const struct policy_domain_in *di, char *what,
            size_t len)
{
	uint32_t sig = 0;

	what[0] = '\0';
	/* (a domain with no report and none kept: nothing to look at) */
	if (di->nreports > 0 || d->hc.procs_any)
		sig = procs_sig(s, d, di, what, len);
	for (int g = 0; g < d->ngroups; g++) {
		const struct grp *gr = &d->groups[g];
		if (gr->rule != POLICY_GROUP_WAKEUPS)
			continue;
		sig += name_hash(gr->name);
		if (gr->born_step == s->step && what[0] == '\0')
			policy_reason_printf(what, len, "group '%s' inferred from wakeups on %d vCPUs", gr->name, cpuset_count(&gr->vcpus));
	}
	return sig;
}

void
home_sample(struct policy_state *s, const struct policy_input *in, struct dom *d,
            const struct policy_domain_in *di)
{
	struct home_check *h = &d->hc;
	struct trial_sum *m = &h->sum;
	char what[96];

	memset(m, 0, sizeof(*m));
	h->shape.busy = 0;
	/* the same samples (step.c obs_same(), this step) sum the same */
	if (s->incremental && d->obs_ok && h->sums_ok && h->sums_gen == d->obs_gen) {
		m->instr = h->sums_instr;
		m->run = h->sums_run;
		m->delay = h->sums_delay;
		h->shape.busy = h->sums_busy;
	} else {
		for (int v = 0; v < d->nvcpus; v++) {
			const struct policy_vcpu_sample *sm = &di->vcpus[v];
			double dem = (double)sm->runtime_ns + (double)sm->run_delay_ns;
			m->instr += (double)sm->instructions;
			m->run += (double)sm->runtime_ns;
			m->delay += (double)sm->run_delay_ns;
			h->shape.busy += dem >= BUSY_VCPU * (double)in->period_ns;
		}
		h->sums_ok = d->obs_ok;
		h->sums_gen = d->obs_gen;
		h->sums_instr = m->instr;
		h->sums_run = m->run;
		h->sums_delay = m->delay;
		h->sums_busy = h->shape.busy;
	}
	if (!in->host.counters)
		m->instr = 0;
	m->n = 1;
	m->bdemand = m->run + m->delay;
	if (di->mbm_valid) {
		m->bytes = (double)di->mbm_bytes;
		m->nbytes = 1;
	} else {
		m->bdemand = 0;
	}
	h->shape.demand = (m->run + m->delay) / (double)in->period_ns;
	h->shape.sig = sharing_sig(s, d, di, what, sizeof(what));
	if (what[0] != '\0' && h->widened)
		look(h, "its threads began to share data", HOME_NARROWER, what);
}

/* --- watching ----------------------------------------------------------------- */

/* Progress per demand this period dropping under an alike load: [0]
 * instructions (counters), [1] memory bandwidth (monitoring). */
static void
watch_drops(const struct policy_input *in, struct dom *d)
{
	struct home_check *h = &d->hc;
	const struct trial_sum *m = &h->sum;
	bool have[2] = { in->host.counters && m->instr > 0, m->nbytes > 0 };
	double p[2] = { 0, 0 }, dem = m->run + m->delay;
	static const char *const why[2] = { "a drop in progress", "a drop in its memory bandwidth" };

	if (h->shape.demand < HOME_BUSY_CPUS || dem <= 0)
		return;
	p[0] = m->instr / dem;
	p[1] = m->bytes / dem;
	if (!trial_alike(&h->shape, &h->ewma_shape)) {
		h->ewma_valid[0] = h->ewma_valid[1] = false;
		h->ewma_shape = h->shape;
	}
	for (int k = 0; k < 2; k++) {
		if (!have[k])
			continue;
		if (h->ewma_valid[k] && p[k] < h->ewma[k] * (1.0 - HOME_DROP)) {
			if (++h->drop_periods[k] < HOME_DROP_PERIODS)
				continue;
			char what[96];
			policy_reason_printf(what, sizeof(what), "%.0f%% below what it was at this load", 100.0 * (1.0 - p[k] / h->ewma[k]));
			look(h, why[k], h->widened ? HOME_NARROWER : HOME_WIDER, what);
			/* the same load runs differently now: what failed at it may not */
			trial_forget(&h->tr, &h->shape);
			h->ewma_valid[0] = h->ewma_valid[1] = false;
			h->drop_periods[0] = h->drop_periods[1] = 0;
			return;
		}
		h->drop_periods[k] = 0;
		h->ewma[k] = h->ewma_valid[k] ? 0.5 * h->ewma[k] + 0.5 * p[k] : p[k];
		h->ewma_valid[k] = true;
	}
}

/* A group of the domain gathering on trial: the home waits for it. */
static bool
group_on_trial(const struct dom *d)
{
	for (int g = 0; g < d->ngroups; g++)
		if (d->groups[g].tr.phase != TRIAL_IDLE)
			return true;
	return false;
}

/* The change key of a trial from a home of `from` LLCs, wider or narrower. */
static int
home_key(int from, enum home_dir dir)
{
	return from * 2 + (dir == HOME_NARROWER);
}

/* Look at the home now: try the other home the reason points at. */
static void
home_try(struct policy_state *s, const struct policy_input *in, struct dom *d)
{
	struct home_check *h = &d->hc;
	const struct trial_shape *sh = trial_shape(&h->tr);
	int now_llcs = placement_llcs(s, &d->allot), want, to;
	char where[64], shape[64], wide[64];
	enum home_dir dir = h->pending_dir;
	struct trial_sum base;

	policy_pin_llcs(s, &d->allot, where, sizeof(where));
	fmt_shape(sh, shape, sizeof(shape));
	if (now_llcs <= h->placed_llcs || dir == HOME_WIDER) {
		dir = HOME_WIDER;
		want = HOME_WIDEN_STEP * now_llcs;
	} else {
		want = 0;
	}
	to = placement_plan_llcs(s, &in->host, d, want);
	if (dir == HOME_WIDER && to <= now_llcs) {
		h->no_room = d->isolated && d->annot->topology != POLICY_TOPO_MATCH;
		h->room_gen = s->res_gen;
		if (h->pending != LADDER)
			policy_reason_printf(h->why, sizeof(h->why), "home on %s%s: no wider home (%s)", where,
			    h->widened ? "" : " as placed",
			    !d->isolated ? "the shared pool is its home" :
			    d->annot->topology == POLICY_TOPO_MATCH ? "topology=\"match\" keeps guest die i on host LLC i" :
			    "no free whole cores on other LLCs");
		decided(h);
		return;
	}
	if (dir == HOME_NARROWER && (to == 0 || to >= now_llcs)) {
		decided(h);
		return;
	}
	trial_window(&h->tr, &base);
	if (dir == HOME_WIDER && !(in->host.counters && base.instr > 0) && base.nbytes == 0 &&
	    trial_delay_share(&base) <= HOME_DELAY) {
		if (h->pending != LADDER)
			policy_reason_printf(h->why, sizeof(h->why), "home on %s not measured: no instruction counters or "
			    "bandwidth monitoring, and run delay %.1f%% (at most %.0f%%) shows no CPU wait a wider "
			    "home would relieve; a memory-bound loss cannot be seen without them", where,
			    100.0 * trial_delay_share(&base), 100.0 * HOME_DELAY);
		decided(h);
		return;
	}
	const struct trial_memo *m = trial_recall(&h->tr, sh, home_key(now_llcs, dir), in->now_ns);
	if (m != NULL) {
		policy_reason_printf(h->why, sizeof(h->why), "home on %s: not %s again at this load (%s): the trial %.0f s ago "
		    "measured %+.0f%%; tried again in %.0f s", where, dir == HOME_WIDER ? "widened" : "narrowed", shape,
		    (double)(in->now_ns - m->at_ns) / 1e9, 100.0 * (m->ratio - 1.0),
		    (double)(m->until_ns - in->now_ns) / 1e9);
		decided(h);
		return;
	}
	h->before = d->allot;
	h->before_llcs = now_llcs;
	snprintf(h->before_where, sizeof(h->before_where), "%s", where);
	h->dir = dir;
	h->tried_llcs = placement_reshape(s, &in->host, d, want);
	h->own_step = s->step;
	if (h->tried_llcs == 0) {
		h->pending = NULL;
		return;
	}
	trial_begin(&h->tr, home_key(now_llcs, dir), HOME_SETTLE_PERIODS);
	h->st = HOME_TRIAL;
	policy_pin_llcs(s, &d->allot, wide, sizeof(wide));
	policy_reason_printf(h->why, sizeof(h->why), "home %s from %s to %s on trial (%s%s%s; %s): measuring",
	    dir == HOME_WIDER ? "widened" : "narrowed", where, wide, h->pending,
	    h->pending_what[0] ? ": " : "", h->pending_what, shape);
	h->pending = NULL;
}

/* Back to the home before the trial (its cores, or as many LLCs). */
static void
home_undo(struct policy_state *s, const struct policy_input *in, struct dom *d)
{
	struct home_check *h = &d->hc;

	if (!placement_restore(s, &in->host, d, &h->before))
		placement_reshape(s, &in->host, d, h->before_llcs > h->placed_llcs ? h->before_llcs : 0);
	h->own_step = s->step;
}

/* The tried home is measured: keep it, or go back. */
static void
home_verdict(struct policy_state *s, const struct policy_input *in, struct dom *d,
             struct policy_plan *plan)
{
	struct home_check *h = &d->hc;
	struct trial *t = &h->tr;
	enum trial_signal sig = trial_pick(&t->first, &t->second, in->host.counters);
	bool wider = h->dir == HOME_WIDER;
	/* the wider home's window and the narrower one's */
	const struct trial_sum *w = wider ? &t->second : &t->first, *n = wider ? &t->first : &t->second;
	double vw = trial_value(w, sig), vn = trial_value(n, sig);
	bool wide_wins = vn > 0 ? vw > vn * (1.0 + HOME_GAIN) : vw > 0;
	bool kept = wider == wide_wins;
	char tried[64], wide_at[64], narrow_at[64], vals[192], shape[64];

	policy_pin_llcs(s, &d->allot, tried, sizeof(tried));
	snprintf(wide_at, sizeof(wide_at), "%s", wider ? tried : h->before_where);
	snprintf(narrow_at, sizeof(narrow_at), "%s", wider ? h->before_where : tried);
	fmt_shape(&t->ref, shape, sizeof(shape));
	if (sig == TRIAL_SIG_RUN)
		policy_reason_printf(vals, sizeof(vals), "run delay %.1f%% on %s vs %.1f%% on %s", 100.0 * trial_delay_share(w), wide_at,
		    100.0 * trial_delay_share(n), narrow_at);
	else
		policy_reason_printf(vals, sizeof(vals), "%s per demanded CPU-second %.3g on %s vs %.3g on %s (%+.0f%%)",
		    sig == TRIAL_SIG_INSTR ? "instructions" : "memory bytes", vw * 1e9, wide_at, vn * 1e9, narrow_at,
		    vn > 0 ? 100.0 * (vw / vn - 1.0) : 0.0);
	h->st = HOME_WATCH;
	if (kept) {
		trial_conclude(t, true);
		h->widened = h->tried_llcs > h->placed_llcs;
		if (wider)
			policy_reason_printf(h->why, sizeof(h->why), "home widened from %s to %s%s: %s, at %s; kept while the load "
			    "stays alike", h->before_where, tried, d->isolated ? " (whole cores on other LLCs)" : "",
			    vals, shape);
		else {
			/* the wider home lost: remembered as a failed widening */
			const struct trial_memo *m = trial_fail(t, &t->ref, home_key(h->tried_llcs, HOME_WIDER),
			    vn > 0 ? vw / vn : 1.0, in->now_ns, holddown_ns(d));
			policy_reason_printf(h->why, sizeof(h->why), "home narrowed from %s to %s: %s, no gain over %.0f%% on %s, at %s; "
			    "not widened again at this load for %.0f s", h->before_where, tried, vals, 100.0 * HOME_GAIN,
			    wide_at, shape, (double)(m->until_ns - in->now_ns) / 1e9);
		}
		policy_plan_add(s, plan, POLICY_ACT_BACKOFF, d, -1, &d->allot, "%s", h->why);
		s->stats.backoffs++;
		if (wider)
			look(h, LADDER, HOME_WIDER, NULL);      /* wider still? */
		return;
	}
	const struct trial_memo *m = trial_fail(t, &t->ref, t->key, trial_ratio(t, sig), in->now_ns, holddown_ns(d));
	home_undo(s, in, d);
	trial_conclude(t, false);
	h->widened = placement_llcs(s, &d->allot) > h->placed_llcs;
	char back[64];
	policy_pin_llcs(s, &d->allot, back, sizeof(back));
	if (wider)
		policy_reason_printf(h->why, sizeof(h->why), "home kept on %s: %s, no gain over %.0f%%, at %s; not widened again at "
		    "this load for %.0f s", back, vals, 100.0 * HOME_GAIN, shape,
		    (double)(m->until_ns - in->now_ns) / 1e9);
	else
		policy_reason_printf(h->why, sizeof(h->why), "home kept on %s: %s, a gain over %.0f%% for the wider home, at %s; not "
		    "narrowed again at this load for %.0f s", back, vals, 100.0 * HOME_GAIN, shape,
		    (double)(m->until_ns - in->now_ns) / 1e9);
	if (!wider)
		look(h, LADDER, HOME_WIDER, NULL);      /* the wider home gains: wider still? */
}

/* No window of the tried home alike the first: no verdict. The tried
 * home stays, and is judged against the one it had in the new load. */
static void
home_abandon(struct policy_state *s, const struct policy_input *in, struct dom *d)
{
	struct home_check *h = &d->hc;
	char back[64], shape[160];
	const struct trial_shape *now = trial_shape(&h->tr);

	if (now)
		fmt_change(&h->tr.ref, now, shape, sizeof(shape));
	else
		policy_reason_printf(shape, sizeof(shape), "while it was on trial");
	h->widened = placement_llcs(s, &d->allot) > h->placed_llcs;
	policy_pin_llcs(s, &d->allot, back, sizeof(back));
	h->st = HOME_WATCH;
	enum home_dir dir = h->dir == HOME_WIDER ? HOME_NARROWER : HOME_WIDER;
	if (trial_abandon(&h->tr, false)) {
		h->paused_until_ns = in->now_ns + holddown_ns(d);
		policy_reason_printf(h->why, sizeof(h->why), "home on %s: no verdict, the load changed during %d trials in a row "
		    "(the last %s); no trial for %ds", back, TRIAL_MAX_ABORTS, shape, d->annot->tune.holddown_s);
		return;
	}
	policy_reason_printf(h->why, sizeof(h->why), "home on %s: no verdict, the load changed %s while it was on trial; "
	    "judged against %s again", back, shape, h->before_where);
	look(h, "the load changed during the last trial", dir, NULL);
}

/* The load shape is not the last verdict's: the reason and the way. */
static void
watch_shape(struct dom *d)
{
	struct home_check *h = &d->hc;
	const struct trial_shape *sh = trial_shape(&h->tr);
	char what[96];

	/* wider still is judged in the shape it gained in, nowhere else */
	if ((h->pending && h->pending != LADDER) || !trial_shape_changed(&h->tr))
		return;
	fmt_change(&h->tr.verdict_shape, sh, what, sizeof(what));
	look(h, "the load changed since the last verdict",
	     !h->widened || sh->demand > h->tr.verdict_shape.demand ? HOME_WIDER : HOME_NARROWER, what);
	/* judged in this shape from now on, whatever comes of it */
	h->tr.verdict_shape = *sh;
}

/* A home over several LLCs whose busy vCPUs share a core while a core of
 * it in another LLC has none (the kernel balances between LLCs by load,
 * not by the cores the domain has in each) for HOME_DOUBLED_PERIODS, and
 * no group of it gathered: its busy vCPUs are placed one per core again,
 * at most once per hold-down. */
static void
watch_doubled(struct policy_state *s, struct dom *d, const struct policy_domain_in *di)
{
	struct home_check *h = &d->hc;
	const struct topo *t = s->topo;
	int per_core[CPUSET_MAX], ncores = topo_count(t, TOPO_CORE), cpu, v, doubled = -1, idle = -1;
	bool steered = false;

	/* gathered groups are the group steering's business */
	for (int g = 0; g < d->ngroups; g++)
		steered |= d->groups[g].pref_llc >= 0;
	if (!d->isolated || d->annot->mode == POLICY_MODE_STATIC || d->annot->topology == POLICY_TOPO_MATCH ||
	    steered || placement_llcs(s, &d->allot) < 2 || ncores > CPUSET_MAX || d->hint_periods > 0) {
		h->doubled_periods = 0;
		return;
	}
	/* (the allotment holds host PUs only: a core < 0 is never met) */
	CPUSET_FOREACH(cpu, &d->allot)
		if (topo_core_of(t, cpu) >= 0)
			per_core[topo_core_of(t, cpu)] = 0;
	for (v = 0; v < d->nvcpus; v++) {
		int c = di->vcpus[v].last_cpu, k = topo_core_of(t, c);
		double dem = (double)di->vcpus[v].runtime_ns + (double)di->vcpus[v].run_delay_ns;
		if (k < 0 || c >= s->ncpu || !cpuset_isset(&d->allot, c) || dem < BUSY_VCPU * (double)s->in->period_ns)
			continue;
		if (++per_core[k] == 2 && doubled < 0)
			doubled = k;
	}
	/* a core with none in another LLC: what the kernel does not fix */
	CPUSET_FOREACH(cpu, &d->allot) {
		int k = topo_core_of(t, cpu);
		if (idle < 0 && doubled >= 0 && k >= 0 && per_core[k] == 0 &&
		    topo_llc_of(t, cpu) != topo_llc_of(t, cpuset_first(&topo_get(t, TOPO_CORE, doubled)->cpus)))
			idle = k;
	}
	if (doubled < 0 || idle < 0) {
		h->doubled_periods = 0;
		return;
	}
	if (++h->doubled_periods < HOME_DOUBLED_PERIODS || s->now_ns < h->respread_until_ns)
		return;
	h->doubled_periods = 0;
	/* the pins' reasons say so; the home's last decision stands. Once
	 * a hold-down: a kernel that packs them again is left alone */
	if (placement_respread(s, d)) {
		trial_rearranged(&h->tr);       /* from the period after the pins */
		h->respread_until_ns = s->now_ns + holddown_ns(d);
	}
}

/* Cores were freed since the home could not be wider: try again. */
static void
watch_room(const struct policy_state *s, struct dom *d)
{
	struct home_check *h = &d->hc;

	if (h->pending == NULL && h->no_room && s->res_gen != h->room_gen) {
		h->no_room = false;
		look(h, "cores were freed on the host", HOME_WIDER, NULL);
	}
}

void
home_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
            const struct policy_domain_in *di, struct policy_plan *plan)
{
	struct home_check *h = &d->hc;

	if (!checked(d))
		return;
	/* the period after something else re-pinned the domain (its groups,
	 * the benefit check) ran another arrangement: watched afresh, or,
	 * while a home is on trial, that home settles again */
	if (d->pinned_step + 1 == s->step && d->pinned_step != h->own_step) {
		if (h->st == HOME_TRIAL)
			trial_moving(&h->tr);
		else
			trial_rearranged(&h->tr);
	}
	enum trial_event ev = trial_observe(&h->tr, &h->shape, &h->sum, in->period_ns, s->incremental);
	if (d->hint_periods > 0)
		h->own_step = s->step;  /* the hold ends this step, or has its pins */
	placement_hint_tick(s, d);
	if (h->st == HOME_TRIAL) {
		if (ev == TRIAL_DONE)
			home_verdict(s, in, d, plan);
		else if (ev == TRIAL_ABANDON)
			home_abandon(s, in, d);
		return;
	}
	watch_doubled(s, d, di);
	watch_drops(in, d);
	watch_shape(d);
	watch_room(s, d);
	if (h->pending == NULL || !trial_ready(&h->tr) || in->now_ns < h->paused_until_ns ||
	    trial_shape(&h->tr)->demand < HOME_BUSY_CPUS || group_on_trial(d))
		return;
	if (!d->isolated || d->annot->topology == POLICY_TOPO_MATCH) {
		char where[64];
		policy_pin_llcs(s, &d->allot, where, sizeof(where));
		policy_reason_printf(h->why, sizeof(h->why), "home on %s as placed: no wider home (%s)", where,
		    !d->isolated ? "the shared pool is its home" : "topology=\"match\" keeps guest die i on host LLC i");
		decided(h);
		return;
	}
	home_try(s, in, d);
}
