// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policy_nomem.c - the engine never fails an allocation silently.
 *
 * FAKE SEAM: this binary is linked with -Wl,--wrap=malloc,calloc,realloc
 * (tests/policy.cmake), so every allocation the engine (and this test)
 * makes goes through the wrappers below, which can fail the Nth one: this
 * machine cannot otherwise make malloc fail on cue. Shared libraries
 * (cmocka, hwloc) are not wrapped.
 *
 * For each N, one policy_step() on a host with an aggregate domain (guest
 * reports, a group to steer), a spread domain and a domain still to place
 * has its Nth allocation failed. Then the step either fails with "policy:
 * out of memory" or counts the failure in policy_stats.nomem; and the
 * next steps, without failures, run on (the sanitizer build checks the
 * memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "policy_harness.h"
#include "test_main.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long fail_at;            /* fail the fail_at-th allocation (0: never) */
static long nalloc, nfailed;

static bool
should_fail(void)
{
	if (fail_at <= 0)
		return false;
	if (++nalloc != fail_at)
		return false;
	nfailed++;
	return true;
}

void *
__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

/* h_step() allocates twice itself before it calls policy_step() */
#define HARNESS_ALLOCS 2

static struct harness *
world(void)
{
	struct harness *h = h_new("pack:1 [numa] l3:4 core:4 pu:2");
	struct policy_annotation ag = h_annot(POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	struct policy_annotation sp = h_annot(POLICY_MODE_SPREAD, POLICY_ISO_NONE);
	ag.topology = POLICY_TOPO_MATCH;
	sp.topology = POLICY_TOPO_MATCH;
	int a = h_add(h, "agg", 16, 2, 4, 2, &ag);
	int s = h_add(h, "spr", 4, 1, 4, 1, &sp);
	int vc[2] = { 1, 9 };
	struct policy_hot_report *r = &h->dom[a].rep[0];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "hot");
	r->pid = 7;
	for (int i = 0; i < 2; i++) {
		cpuset_set(&r->vcpus, vc[i]);
		h->dom[a].demand[vc[i]] = 1.0;
	}
	h->dom[a].in.reports = r;
	h->dom[a].in.nreports = 1;
	for (int v = 0; v < 4; v++)
		h->dom[s].demand[v] = 1.0;
	return h;
}

static void
test_allocation_failures_reported(void **state)
{
	int tried = 0;

	for (long n = 1; n < 400; n++) {
		struct harness *h = world();
		struct policy_stats st;
		/* warm up: placed, grouped, steering */
		for (int step = 0; step < 4; step++)
			assert_int_equal(h_step(h), 0);
		/* a domain that arrives now must be placed in the step */
		h_add_mode(h, "late", 8, 1, 4, 2, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
		policy_stats(h->st, &st);
		uint64_t before = st.nomem;
		nalloc = 0;
		nfailed = 0;
		fail_at = n + HARNESS_ALLOCS;
		int rc = h_step(h);
		fail_at = 0;
		policy_stats(h->st, &st);
		if (nfailed == 0) {
			/* past the step's last allocation: done */
			assert_int_equal(rc, 0);
			h_free(h);
			assert_true(tried > 5);
			return;
		}
		tried++;
		if (rc == 0 && st.nomem == before)
			fail_msg("allocation %ld of the step failed silently", n);
		/* and it carries on */
		for (int step = 0; step < 3; step++)
			assert_int_equal(h_step(h), 0);
		h_free(h);
	}
	fail_msg("the step made 400 allocations or more");
}

TEST_MAIN(
	cmocka_unit_test(test_allocation_failures_reported))
