// SPDX-License-Identifier: GPL-2.0-or-later
/* test_steer.c - the steering's view of the LLCs (policy/steer.c
 * steer_view()): for allowed sets of every size, the PUs it may use per
 * LLC, whether that is the whole LLC and the busy PUs there are what
 * counting each LLC's PUs gives (a set of no more PUs than LLCs is
 * counted PU by PU, a larger one LLC by LLC), on even and uneven hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "policy_int.h"
#include "topo_hwloc.h"
#include "test_main.h"

static uint64_t
rng(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static void
view_world(const char *shape, uint64_t seed)
{
	struct llcd_err err;
	struct topo *t = topo_load(shape, &err);
	struct policy_state *s = policy_state_new();
	const uint64_t period = 1000000000ull;
	uint64_t r = seed;

	assert_non_null(t);
	assert_non_null(s);
	assert_int_equal(policy_state_bind_topo(s, t), 0);
	for (int l = 0; l < s->nllc; l++)
		s->llc_cap[l] = s->llc_w[l];
	for (int round = 0; round < 400; round++) {
		struct cpuset allowed;
		int cpu, want = (int)(rng(&r) % (uint64_t)(3 * s->nllc + 2));
		s->step++;      /* a view of its own each round */
		for (cpu = 0; cpu < s->ncpu; cpu++)
			s->cpu_busy[cpu] = (double)(rng(&r) % 4) / 3.0 * (double)period;
		cpuset_zero(&allowed);
		for (int i = 0; i < want; i++) {
			int c = (int)(rng(&r) % (uint64_t)s->ncpu);
			if (cpuset_isset(&t->all, c))
				cpuset_set(&allowed, c);
		}
		steer_view(s, &allowed, period);
		for (int l = 0; l < s->nllc; l++) {
			struct cpuset x;
			double util = 0;
			cpuset_and(&x, &topo_get(t, TOPO_LLC, l)->cpus, &allowed);
			bool whole = cpuset_count(&x) == s->llc_w[l];
			CPUSET_FOREACH(cpu, &x) {
				double f = s->cpu_busy[cpu] / (double)period;
				if (!whole && (f > 1.0 ? 1.0 : f) >= BUSY_PU)
					util += f > 1.0 ? 1.0 : f;
			}
			assert_true(s->av_cap[l] == (double)cpuset_count(&x));
			assert_true(s->av_whole[l] == whole);
			assert_true(s->av_util[l] == util);
		}
	}
	policy_state_free(s);
	topo_free(t);
}

static void
test_view_counts(void **state)
{
	(void)state;
	view_world("pack:2 [numa] l3:12 core:8 pu:2", 1);
	view_world("pack:1 l3:4 core:2 pu:2", 2);
	view_world("pack:2 [numa] l3:16 core:8 pu:2", 3);
}

TEST_MAIN(
	cmocka_unit_test(test_view_counts))
