// SPDX-License-Identifier: GPL-2.0-or-later
/* test_recommend.c - the recommendation worker (agent/daemon/recommend.c)
 * on a copy of the observation: a job runs after the loop has moved on,
 * so the copy owns everything it reads. The vCPU samples' pins point into
 * the back-end's sets, which last only until its next observation
 * (policy.h); the snapshot once copied the pointers, and a job computed
 * after the back-end let go of a set read freed memory (ASan's unit run
 * catches the read; without ASan the scribbled pins below are what the
 * dry placement would have seen). The domains' bounds point into the
 * observation's slots the same way (agent_obs_bound()), and the next
 * observation writes another there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "recommend.h"
#include "test_main.h"
#include "topo_hwloc.h"

#define NDOM 3
#define NV 4

static struct recommend_result *
wait_result(struct recommend *r)
{
	struct recommend_result *res = NULL;

	for (int i = 0; i < 600 && res == NULL; i++) {
		struct pollfd p = { .fd = recommend_fd(r), .events = POLLIN };
		poll(&p, 1, 100);
		res = recommend_take(r);
	}
	return res;
}

static void
test_job_after_pins_freed(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 [numa] l3:4 core:4 pu:2", &err);
	struct agent_obs *obs = agent_obs_new();
	struct policy_host host;
	struct cpuset *pins[NDOM];
	struct recommend *r;

	(void)state;
	assert_non_null(t);
	assert_non_null(obs);
	policy_host_defaults(&host, t);
	assert_int_equal(agent_obs_begin(obs, t->max_cpu + 1, &err), 0);
	for (int i = 0; i < NDOM; i++) {
		int slot = agent_obs_add(obs, NV, 0, &err);
		assert_int_equal(slot, i);
		struct policy_domain_in *d = &obs->domains[slot];
		d->key = 100 + (uint64_t)i;
		snprintf(d->name, sizeof(d->name), "d%d", i);
		d->nvcpus = NV;
		d->annotated = true;
		policy_annotation_defaults(&d->annot);
		d->annot.mode = POLICY_MODE_AGGREGATE;
		pins[i] = calloc(NV, sizeof(struct cpuset));
		assert_non_null(pins[i]);
		for (int v = 0; v < NV; v++) {
			struct policy_vcpu_sample *sm = &obs->vcpus[slot][v];
			memset(sm, 0, sizeof(*sm));
			sm->last_cpu = -1;
			cpuset_set_range(&pins[i][v], 8 * i, 8 * i + 7);        /* LLC i */
			sm->pinned = &pins[i][v];
		}
	}
	/* domain 100 bound to LLC 3 (PUs 24-31), a pointer into the
	 * observation's slot */
	struct cpuset llc3, llc0;
	cpuset_zero(&llc3);
	cpuset_set_range(&llc3, 24, 31);
	cpuset_zero(&llc0);
	cpuset_set_range(&llc0, 0, 7);
	uint64_t fp0 = recommend_fingerprint(&host, 1, obs);
	assert_int_equal(agent_obs_bound(obs, 0, &llc3, &err), 0);
	uint64_t fp = recommend_fingerprint(&host, 1, obs);
	assert_true(fp != fp0);                 /* the bound is in the fingerprint */
	r = recommend_new(&err);
	assert_non_null(r);
	assert_int_equal(recommend_submit(r, &host, fp, obs, 100, &err), 0);
	/* the back-end's next observation: its sets change and go, and the
	 * slot's bound becomes another */
	for (int i = 0; i < NDOM; i++) {
		memset(pins[i], 0xa5, NV * sizeof(struct cpuset));
		free(pins[i]);
	}
	assert_int_equal(agent_obs_bound(obs, 0, &llc0, &err), 0);
	struct recommend_result *res = wait_result(r);
	assert_non_null(res);
	if (res->rc != 0)
		fail_msg("recommendation failed: %s", res->error);
	assert_int_equal(res->key, 100);
	assert_non_null(res->rec);
	for (int v = 0; v < NV; v++)            /* inside the bound it was asked with */
		assert_true(!cpuset_empty(&res->rec->pins[v]) && cpuset_subset(&res->rec->pins[v], &llc3));
	recommend_result_free(res);
	recommend_free(r);
	agent_obs_free(obs);
	topo_free(t);
}

TEST_MAIN(cmocka_unit_test(test_job_after_pins_freed))
