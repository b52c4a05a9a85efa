// SPDX-License-Identifier: GPL-2.0-or-later
/* test_trial.c - the trial of an adaptive change (policy/trial.c): load
 * shapes alike within the stated bounds, windows of one
 * shape, no verdict across a change of shape, and failed trials
 * remembered per shape with a growing back-off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "policy_int.h"
#include "test_main.h"

#define MS 1000000ull
#define PERIOD (100 * MS)

/* the tests below push as incremental steps do (trial_observe's quick);
 * test_quick_same_ring compares that with the full comparison */
static const bool quick = true;

static struct trial_shape
shape(int busy, double demand, uint32_t sig)
{
	return (struct trial_shape){ .busy = busy, .demand = demand, .sig = sig };
}

/* One period of progress: instr instructions over `demand` CPUs. */
static struct trial_sum
one(double instr, double demand)
{
	return (struct trial_sum){ .instr = instr, .run = demand * (double)PERIOD, .n = 1 };
}

static void
test_alike_bounds(void **state)
{
	struct trial_shape a = shape(8, 8.2, 7);

	(void)state;
	/* demand: within 10 % of the larger, or a quarter of a CPU */
	assert_true(trial_alike(&a, &(struct trial_shape){ 8, 9.0, 7 }));
	assert_false(trial_alike(&a, &(struct trial_shape){ 8, 9.2, 7 }));
	assert_true(trial_alike(&(struct trial_shape){ 1, 1.3, 0 }, &(struct trial_shape){ 1, 1.55, 0 }));
	assert_false(trial_alike(&(struct trial_shape){ 1, 1.3, 0 }, &(struct trial_shape){ 1, 1.6, 0 }));
	/* busy vCPUs: equal below 10, within 10 % from 10 on */
	assert_false(trial_alike(&a, &(struct trial_shape){ 7, 8.2, 7 }));
	assert_true(trial_alike(&(struct trial_shape){ 20, 20, 0 }, &(struct trial_shape){ 18, 19, 0 }));
	assert_false(trial_alike(&(struct trial_shape){ 20, 20, 0 }, &(struct trial_shape){ 17, 19, 0 }));
	/* the processes that share data */
	assert_false(trial_alike(&a, &(struct trial_shape){ 8, 8.2, 8 }));
}

static void
test_window_len(void **state)
{
	(void)state;
	assert_int_equal(trial_window_len(10 * MS), 5);
	assert_int_equal(trial_window_len(100 * MS), 5);
	assert_int_equal(trial_window_len(125 * MS), 4);
	assert_int_equal(trial_window_len(250 * MS), 3);
	assert_int_equal(trial_window_len(1000 * MS), 3);
}

/* A window is periods of one shape: a period unlike the others drops
 * them; a trial starts only from a full window. */
static void
test_ring_one_shape(void **state)
{
	struct trial t;
	struct trial_shape a = shape(8, 8.2, 0), b = shape(2, 2.3, 0);
	struct trial_sum x = one(8e8, 8.2);

	(void)state;
	trial_init(&t);
	for (int i = 0; i < 4; i++)
		trial_observe(&t, &a, &x, PERIOD, quick);
	assert_false(trial_ready(&t));
	trial_observe(&t, &b, &x, PERIOD, quick);
	assert_int_equal(t.ring_n, 1);
	for (int i = 0; i < 4; i++)
		trial_observe(&t, &a, &x, PERIOD, quick);
	assert_int_equal(t.ring_n, 4);
	assert_false(trial_ready(&t));
	trial_observe(&t, &a, &x, PERIOD, quick);
	assert_true(trial_ready(&t));
	/* the window slides: it stays full */
	trial_observe(&t, &a, &x, PERIOD, quick);
	assert_true(trial_ready(&t));
	/* rearranged: settling periods are not watched */
	trial_rearranged(&t);
	for (int i = 0; i < SETTLE_PERIODS; i++)
		trial_observe(&t, &a, &x, PERIOD, quick);
	assert_int_equal(t.ring_n, 0);
}

/* Run a trial from a full window of shape a at progress p0 per CPU, the
 * tried arrangement at p1; the shapes of the measured periods in turn. */
static enum trial_event
run_trial(struct trial *t, const struct trial_shape *shapes, int n, double p0, double p1, int *at)
{
	struct trial_shape a = shapes[0];
	enum trial_event ev = TRIAL_NONE;

	trial_init(t);
	for (int i = 0; i < TRIAL_WINDOW; i++) {
		struct trial_sum x = one(p0 * a.demand, a.demand);
		trial_observe(t, &a, &x, PERIOD, quick);
	}
	assert_true(trial_ready(t));
	trial_begin(t, 3, SETTLE_PERIODS);
	for (int i = 0; i < SETTLE_PERIODS; i++) {
		struct trial_sum x = one(0, 1);         /* settling: not counted */
		assert_int_equal(trial_observe(t, &a, &x, PERIOD, quick), TRIAL_NONE);
	}
	for (*at = 0; *at < n && ev == TRIAL_NONE; (*at)++) {
		struct trial_sum x = one(p1 * shapes[*at].demand, shapes[*at].demand);
		ev = trial_observe(t, &shapes[*at], &x, PERIOD, quick);
	}
	return ev;
}

/* Alike all along: a verdict after one window, on progress per unit of
 * demand. */
static void
test_trial_verdict(void **state)
{
	struct trial t;
	struct trial_shape s[8];
	int at;

	(void)state;
	for (int i = 0; i < 8; i++)
		s[i] = shape(8, 8.2 + 0.1 * (i % 2), 0);        /* jitter within the bound */
	assert_int_equal(run_trial(&t, s, 8, 1.0, 2.5, &at), TRIAL_DONE);
	assert_int_equal(at, TRIAL_WINDOW);
	assert_true(fabs(trial_ratio(&t, TRIAL_SIG_INSTR) - 2.5) < 1e-9);
	trial_conclude(&t, true);
	assert_true(t.has_verdict);
	assert_true(trial_ready(&t));   /* the tried arrangement's window, watched on */
}

/* A dip during the measurement: those periods are discarded and the trial
 * waits; once the load is back, a whole window of it gives the verdict. */
static void
test_trial_waits_out_a_dip(void **state)
{
	struct trial t;
	struct trial_shape s[12];
	int at;

	(void)state;
	for (int i = 0; i < 12; i++)
		s[i] = i >= 2 && i < 4 ? shape(2, 2.3, 0) : shape(8, 8.2, 0);
	assert_int_equal(run_trial(&t, s, 12, 1.0, 2.0, &at), TRIAL_DONE);
	assert_int_equal(at, 4 + TRIAL_WINDOW);
	assert_int_equal(t.second.n, TRIAL_WINDOW);
	assert_true(fabs(trial_ratio(&t, TRIAL_SIG_INSTR) - 2.0) < 1e-9);
}

/* A new load shape that holds for a window: no verdict across it. */
static void
test_trial_abandoned_on_new_shape(void **state)
{
	struct trial t;
	struct trial_shape s[12];
	int at;

	(void)state;
	for (int i = 0; i < 12; i++)
		s[i] = i >= 1 ? shape(14, 14.2, 0) : shape(8, 8.2, 0);
	assert_int_equal(run_trial(&t, s, 12, 1.0, 1.0, &at), TRIAL_ABANDON);
	assert_int_equal(at, 1 + TRIAL_WINDOW);
	/* not undone: the tried arrangement's window in the new shape is the
	 * next trial's start */
	assert_false(trial_abandon(&t, false));
	assert_true(trial_ready(&t));
	assert_int_equal(trial_shape(&t)->busy, 14);
	/* a shape that never holds still: given up after a window's wait */
	for (int i = 0; i < 12; i++)
		s[i] = i % 2 ? shape(14, 14.2, 0) : shape(8, 8.2, 0);
	assert_int_equal(run_trial(&t, s, 12, 1.0, 1.0, &at), TRIAL_ABANDON);
	assert_int_equal(at, 2 * TRIAL_WINDOW);
	/* three in a row: the caller pauses */
	assert_false(trial_abandon(&t, true));
	assert_false(trial_abandon(&t, true));
	assert_true(trial_abandon(&t, true));
}

/* Failed trials are remembered per load shape and change: twice the
 * hold-down, doubling with each failure there, at most 2^6 hold-downs. */
static void
test_memory_of_failures(void **state)
{
	struct trial t;
	struct trial_shape a = shape(1, 1.3, 0), b = shape(8, 8.2, 0);
	uint64_t hd = 60000 * MS, now = 1000 * MS;

	(void)state;
	trial_init(&t);
	const struct trial_memo *m = trial_fail(&t, &a, 2, 1.0, now, hd);
	assert_int_equal(m->fails, 1);
	assert_true(m->until_ns == now + 2 * hd);
	assert_non_null(trial_recall(&t, &a, 2, now + hd));
	assert_non_null(trial_recall(&t, &(struct trial_shape){ 1, 1.4, 0 }, 2, now + hd));     /* alike */
	assert_null(trial_recall(&t, &b, 2, now + hd));     /* another shape */
	assert_null(trial_recall(&t, &a, 3, now + hd));     /* another change */
	assert_null(trial_recall(&t, &a, 2, now + 2 * hd));        /* expired */
	m = trial_fail(&t, &a, 2, 0.9, now + 2 * hd, hd);
	assert_int_equal(m->fails, 2);
	assert_true(m->until_ns == now + 2 * hd + 4 * hd);
	for (int i = 0; i < 10; i++)
		m = trial_fail(&t, &a, 2, 0.9, now, hd);
	assert_int_equal(m->fails, TRIAL_BACKOFF_SHIFT);
	assert_true(m->until_ns == now + (hd << TRIAL_BACKOFF_SHIFT));
	/* a drop at this load: what failed may not any more */
	trial_forget(&t, &a);
	assert_null(trial_recall(&t, &a, 2, now));
	/* more shapes than entries: the one that expires first goes */
	for (int i = 0; i < TRIAL_MEMO + 1; i++)
		trial_fail(&t, &(struct trial_shape){ 1 + i, 1.0 + i, 0 }, 2, 1.0, now + (uint64_t)i * MS, hd);
	assert_null(trial_recall(&t, &(struct trial_shape){ 1, 1.0, 0 }, 2, now));
	assert_non_null(trial_recall(&t, &(struct trial_shape){ TRIAL_MEMO + 1, TRIAL_MEMO + 1.0, 0 }, 2, now));
}

/* Progress per unit of demand: instructions per demanded CPU-ns (runtime
 * and run delay), bytes per demanded CPU-ns of the domain, or the share
 * of demand that ran. */
static void
test_values(void **state)
{
	struct trial_sum s = { .instr = 6e9, .run = 3e9, .delay = 1e9, .bytes = 8e9, .bdemand = 4e9, .n = 1, .nbytes = 1 };

	(void)state;
	assert_true(fabs(trial_value(&s, TRIAL_SIG_INSTR) - 1.5) < 1e-12);
	assert_true(fabs(trial_value(&s, TRIAL_SIG_BYTES) - 2.0) < 1e-12);
	assert_true(fabs(trial_value(&s, TRIAL_SIG_RUN) - 0.75) < 1e-12);
	assert_true(fabs(trial_delay_share(&s) - 0.25) < 1e-12);
	struct trial_sum nob = s;
	nob.nbytes = 0;
	assert_int_equal(trial_pick(&s, &s, true), TRIAL_SIG_INSTR);
	assert_int_equal(trial_pick(&s, &s, false), TRIAL_SIG_BYTES);
	assert_int_equal(trial_pick(&s, &nob, false), TRIAL_SIG_RUN);
}

/* Pushing a shape the same as the newest without comparing it with the
 * older ones (quick) keeps the ring the full comparison keeps: random
 * runs of shapes, some alike, some not, some the same twice or more,
 * idle and measured phases. */
static void
test_quick_same_ring(void **state)
{
	static const struct trial_shape sh[] = {
		{ 8, 8.2, 0 }, { 8, 8.9, 0 }, { 8, 9.6, 0 }, { 8, 8.2, 1 }, { 2, 2.3, 0 }, { 20, 20, 0 }, { 18, 19, 0 },
	};
	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct trial a, b;
		uint64_t r = seed;
		int cur = 0;
		trial_init(&a);
		trial_init(&b);
		for (int step = 0; step < 120; step++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			if ((r >> 33) % 3 == 0)         /* else the same shape again */
				cur = (int)((r >> 40) % (sizeof(sh) / sizeof(sh[0])));
			struct trial_sum x = one(1e8 * (double)(step % 7), sh[cur].demand);
			if (a.phase == TRIAL_IDLE && trial_ready(&a) && (r >> 50) % 9 == 0) {
				trial_begin(&a, 1, 2);
				trial_begin(&b, 1, 2);
			}
			enum trial_event ea = trial_observe(&a, &sh[cur], &x, PERIOD, true);
			enum trial_event eb = trial_observe(&b, &sh[cur], &x, PERIOD, false);
			assert_int_equal(ea, eb);
			if (ea == TRIAL_DONE || ea == TRIAL_ABANDON) {
				trial_conclude(&a, false);
				trial_conclude(&b, false);
			}
			assert_int_equal(a.ring_n, b.ring_n);
			assert_int_equal(a.ring_head, b.ring_head);
			assert_memory_equal(&a, &b, sizeof(a));
		}
	}
}

TEST_MAIN(
	cmocka_unit_test(test_quick_same_ring),
	cmocka_unit_test(test_alike_bounds),
	cmocka_unit_test(test_window_len),
	cmocka_unit_test(test_ring_one_shape),
	cmocka_unit_test(test_trial_verdict),
	cmocka_unit_test(test_trial_waits_out_a_dip),
	cmocka_unit_test(test_trial_abandoned_on_new_shape),
	cmocka_unit_test(test_memory_of_failures),
	cmocka_unit_test(test_values))
