// SPDX-License-Identifier: GPL-2.0-or-later
/* trial.c - one trial of an adaptive change, shared by the home check
 * (home.c: a wider or narrower home) and the benefit check (benefit.c: a
 * gathered group). docs/design.md, "Trials".
 *
 * A trial compares progress per unit of demand of two arrangements, the
 * one in place (measured first) and the one tried, under the same load
 * shape:
 *
 *  - the load shape of a period is the domain's busy vCPUs (demand at
 *    least BUSY_VCPU), its demand (runtime plus run delay, in CPUs: what
 *    its threads asked for, whatever they got) and a signature of the
 *    processes and groups that share data (home.c);
 *  - a window is consecutive periods, half a second of them but at least
 *    TRIAL_WINDOW_MIN and at most TRIAL_WINDOW (5 at 100 ms periods, 3 at
 *    1 s: trial_window_len()), whose shapes are all
 *    alike (trial_alike(): the busy vCPUs within TRIAL_BUSY_TOL of each
 *    other, the demand within TRIAL_DEMAND_TOL, at least
 *    TRIAL_DEMAND_MIN CPU, the same signature); a period that is not
 *    alike the window's discards the older periods it differs from;
 *  - the arrangement in place is watched continuously (the ring): a
 *    trial starts only from a full window, which becomes its reference;
 *  - the tried arrangement settles SETTLE_PERIODS, then its window must be
 *    alike the reference: periods that are not are discarded and the trial
 *    waits, at most one window's periods beyond its window, for the shape to
 *    come back; it is abandoned (TRIAL_ABANDON) then, or as soon as a full
 *    window of another shape shows the load changed: the caller goes back
 *    to the arrangement it had and starts again from there (benefit.c),
 *    or starts again from the tried one in the new shape (home.c);
 *  - after TRIAL_MAX_ABORTS abandoned trials in a row the caller pauses;
 *  - a trial whose change did not pay is remembered for its load shape
 *    (trial_fail()): not tried again in an alike shape for twice the
 *    hold-down, doubling with each further failure there (at most
 *    2^TRIAL_BACKOFF_SHIFT hold-downs).
 *
 * Pure: no I/O, no clocks (now is passed in), no allocation.
 */
#include "policy_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
trial_init(struct trial *t)
{
	memset(t, 0, sizeof(*t));
}

/* TRIAL_BUSY_TOL of bmax busy vCPUs, rounded down: at 0.10 that is
 * bmax / 10 for every bmax from 0 to 10^7 (checked against the floor()
 * below), without the libm call of every alike test. */
static int
busy_tol(int bmax)
{
	if (TRIAL_BUSY_TOL == 0.10 && bmax >= 0 && bmax <= 10000000)
		return bmax / 10;
	return (int)floor(TRIAL_BUSY_TOL * bmax + 1e-9);
}

/* fmax() without the libm call (every alike test makes two): the larger,
 * or the one that is a number when the other is NaN, as fmax() */
static inline double
max_of(double a, double b)
{
	return a > b || b != b ? a : b;
}

bool
trial_alike(const struct trial_shape *a, const struct trial_shape *b)
{
	double dmax = max_of(a->demand, b->demand);
	int bmax = a->busy > b->busy ? a->busy : b->busy;

	if (a->sig != b->sig)
		return false;
	if (abs(a->busy - b->busy) > busy_tol(bmax))
		return false;
	return fabs(a->demand - b->demand) <= max_of(TRIAL_DEMAND_MIN, TRIAL_DEMAND_TOL * dmax) + 1e-9;
}

static void
sum_add(struct trial_sum *a, const struct trial_sum *b)
{
	a->instr += b->instr;
	a->bytes += b->bytes;
	a->run += b->run;
	a->delay += b->delay;
	a->bdemand += b->bdemand;
	a->dinstr += b->dinstr;
	a->ddemand += b->ddemand;
	a->n += b->n;
	a->nbytes += b->nbytes;
}

/* The ring's periods, oldest first, summed. */
static void
ring_sum(const struct trial *t, struct trial_sum *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < t->ring_n; i++)
		sum_add(out, &t->ring[(t->ring_head + i) % TRIAL_WINDOW]);
}

int
trial_window_len(uint64_t period_ns)
{
	uint64_t n = period_ns > 0 ? (TRIAL_WINDOW_NS + period_ns - 1) / period_ns : TRIAL_WINDOW;

	return n < TRIAL_WINDOW_MIN ? TRIAL_WINDOW_MIN : n > TRIAL_WINDOW ? TRIAL_WINDOW : (int)n;
}

/* The same shape, bit for bit (the demand as stored, not within a
 * tolerance). */
static bool
shape_same(const struct trial_shape *a, const struct trial_shape *b)
{
	return a->busy == b->busy && a->sig == b->sig && memcmp(&a->demand, &b->demand, sizeof(double)) == 0;
}

/* Push one period: older periods it is not alike are dropped first. */
static void
ring_push(struct trial *t, const struct trial_shape *sh, const struct trial_sum *one, bool quick)
{
	int keep = t->ring_n, low = t->ring_n - (t->win - 1);
	const int newest = (t->ring_head + t->ring_n - 1) % TRIAL_WINDOW;
	bool same_shape = t->ring_n > 0 && shape_same(&t->ring_shape[newest], sh);
	bool again = same_shape && memcmp(&t->ring[newest], one, sizeof(*one)) == 0;

	/* a full window of one period, bit for bit, and that period again
	 * (an idle domain's every period): dropping the oldest for the new
	 * one leaves the same window */
	if (quick && again && t->ring_n == t->win && t->ring_same >= t->ring_n)
		return;

	/* the newest periods it is alike, back to the first it is not; no
	 * further than the win - 1 it may keep (an older one unlike it
	 * would keep as many). Every period kept is alike to the newest
	 * (that push kept only those alike to it): a shape the same as the
	 * newest is alike to them all, and the loop would find none unlike */
	if (quick && same_shape)
		low = t->ring_n;
	for (int i = t->ring_n - 1; i >= 0 && i >= low; i--)
		if (!trial_alike(&t->ring_shape[(t->ring_head + i) % TRIAL_WINDOW], sh)) {
			keep = t->ring_n - 1 - i;
			break;
		}
	if (keep > t->win - 1)
		keep = t->win - 1;      /* room for the new one */
	t->ring_head = (t->ring_head + t->ring_n - keep) % TRIAL_WINDOW;
	t->ring_n = keep;
	int at = (t->ring_head + t->ring_n) % TRIAL_WINDOW;
	t->ring[at] = *one;
	t->ring_shape[at] = *sh;
	t->ring_n++;
	/* the kept newest ones still end the ring */
	t->ring_same = again && keep > 0 ? (t->ring_same < keep ? t->ring_same : keep) + 1 : 1;
}

void
trial_rearranged(struct trial *t)
{
	t->ring_n = 0;
	t->ring_head = 0;
	t->ring_same = 0;
	t->skip = SETTLE_PERIODS;
}

void
trial_window(const struct trial *t, struct trial_sum *out)
{
	ring_sum(t, out);
}

void
trial_begin(struct trial *t, int key, int settle)
{
	ring_sum(t, &t->first);
	t->ref = *trial_shape(t);
	t->key = key;
	t->settle = settle;
	t->phase = TRIAL_SETTLE;
	t->periods = 0;
	memset(&t->second, 0, sizeof(t->second));
	trial_rearranged(t);
	t->skip = 0;            /* the settling is counted by the phase */
}

void
trial_moving(struct trial *t)
{
	if (t->phase == TRIAL_SETTLE || t->phase == TRIAL_MEASURE) {
		t->phase = TRIAL_SETTLE;
		t->periods = 0;
	}
}

enum trial_event
trial_observe(struct trial *t, const struct trial_shape *sh, const struct trial_sum *one, uint64_t period_ns,
              bool quick)
{
	t->win = trial_window_len(period_ns);
	switch (t->phase) {
	case TRIAL_IDLE:
		if (t->skip > 0) {
			t->skip--;
			return TRIAL_NONE;
		}
		ring_push(t, sh, one, quick);
		return TRIAL_NONE;
	case TRIAL_SETTLE:
		if (++t->periods >= t->settle) {
			t->phase = TRIAL_MEASURE;
			t->periods = 0;
			t->ring_n = 0;
			t->ring_same = 0;
		}
		return TRIAL_NONE;
	case TRIAL_MEASURE:
		t->periods++;
		ring_push(t, sh, one, quick);
		if (t->ring_n >= t->win && trial_alike(trial_shape(t), &t->ref)) {
			ring_sum(t, &t->second);
			return TRIAL_DONE;
		}
		/* a full window in another shape: that is the load now */
		if (t->ring_n >= t->win || t->periods >= 2 * t->win)
			return TRIAL_ABANDON;
		return TRIAL_NONE;
	}
	return TRIAL_NONE;
}

void
trial_conclude(struct trial *t, bool tried_kept)
{
	t->phase = TRIAL_IDLE;
	t->has_verdict = true;
	t->verdict_shape = t->ref;
	t->aborts = 0;
	if (!tried_kept)
		trial_rearranged(t);    /* back to the first arrangement */
	/* else: the ring holds the tried arrangement's window, which is the
	 * arrangement in place from now on */
}

bool
trial_abandon(struct trial *t, bool undone)
{
	t->phase = TRIAL_IDLE;
	if (undone)
		trial_rearranged(t);
	/* else the ring holds the tried arrangement in the new shape: a
	 * trial from it may start at once */
	return ++t->aborts >= TRIAL_MAX_ABORTS;
}

void
trial_cancel(struct trial *t)
{
	if (t->phase != TRIAL_IDLE) {
		t->phase = TRIAL_IDLE;
		trial_rearranged(t);
	}
}

/* --- signals ----------------------------------------------------------- */

enum trial_signal
trial_pick(const struct trial_sum *a, const struct trial_sum *b, bool counters)
{
	if (counters && a->instr > 0 && b->instr > 0)
		return TRIAL_SIG_INSTR;
	if (a->nbytes > 0 && b->nbytes > 0)
		return TRIAL_SIG_BYTES;
	return TRIAL_SIG_RUN;
}

double
trial_value(const struct trial_sum *s, enum trial_signal sig)
{
	double dem = s->run + s->delay;

	switch (sig) {
	case TRIAL_SIG_INSTR:
		return dem > 0 ? s->instr / dem : 0;
	case TRIAL_SIG_BYTES:
		return s->bdemand > 0 ? s->bytes / s->bdemand : 0;
	case TRIAL_SIG_RUN:
		break;
	}
	return dem > 0 ? s->run / dem : 0;
}

double
trial_delay_share(const struct trial_sum *s)
{
	double dem = s->run + s->delay;

	return dem > 0 ? s->delay / dem : 0;
}

double
trial_ratio(const struct trial *t, enum trial_signal sig)
{
	double a = trial_value(&t->first, sig), b = trial_value(&t->second, sig);

	if (a <= 0)
		return b > 0 ? INFINITY : 1.0;
	return b / a;
}

/* --- memory of failed trials -------------------------------------------- */

static struct trial_memo *
memo_find(struct trial *t, const struct trial_shape *sh, int key)
{
	for (int i = 0; i < TRIAL_MEMO; i++)
		if (t->memo[i].used && t->memo[i].key == key && trial_alike(&t->memo[i].shape, sh))
			return &t->memo[i];
	return NULL;
}

const struct trial_memo *
trial_recall(const struct trial *t, const struct trial_shape *sh, int key, uint64_t now_ns)
{
	const struct trial_memo *m = memo_find((struct trial *)t, sh, key);

	return m && now_ns < m->until_ns ? m : NULL;
}

const struct trial_memo *
trial_fail(struct trial *t, const struct trial_shape *sh, int key, double ratio, uint64_t now_ns,
           uint64_t holddown_ns)
{
	struct trial_memo *m = memo_find(t, sh, key);

	if (m == NULL) {
		/* a free entry, else the one that expires first */
		m = &t->memo[0];
		for (int i = 0; i < TRIAL_MEMO; i++) {
			if (!t->memo[i].used) {
				m = &t->memo[i];
				break;
			}
			if (t->memo[i].until_ns < m->until_ns)
				m = &t->memo[i];
		}
		memset(m, 0, sizeof(*m));
		m->used = true;
		m->key = key;
	}
	m->shape = *sh;
	m->ratio = ratio;
	if (m->fails < TRIAL_BACKOFF_SHIFT)
		m->fails++;
	m->at_ns = now_ns;
	m->until_ns = now_ns + (holddown_ns << m->fails);
	return m;
}

void
trial_forget(struct trial *t, const struct trial_shape *sh)
{
	for (int i = 0; i < TRIAL_MEMO; i++)
		if (t->memo[i].used && (sh == NULL || trial_alike(&t->memo[i].shape, sh)))
			t->memo[i].used = false;
}
