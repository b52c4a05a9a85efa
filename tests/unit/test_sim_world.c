// SPDX-License-Identifier: GPL-2.0-or-later
/* test_sim_world.c - llcsim's cost model and balancer (sim/world.c), with
 * the constants of spec/llcsim.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run.h"
#include "simops.h"
#include "scenario.h"
#include "topo_hwloc.h"
#include "world.h"
#include "test_main.h"

/* cmocka 1.1.5 has no double assertion; fail with both values. */
#define assert_double_equal(a, b, eps) check_double((a), (b), (eps), #a, __LINE__)
static void
check_double(double a, double b, double eps, const char *what, int line)
{
	if (!(fabs(a - b) <= eps))
		fail_msg("line %d: %s = %.12g, expected %.12g (+-%g)", line, what, a, b, eps);
}

struct fx {
	struct sim_scenario *sc;
	struct topo *t;
	struct sim_world *w;
};

static void
fx_open(struct fx *f, const char *json, enum sim_policy pol, uint64_t seed,
        const struct policy_annotation *annots, const bool *annotated)
{
	struct llcd_err err;

	f->sc = sim_scenario_parse(json, strlen(json), "test", &err);
	if (f->sc == NULL)
		fail_msg("%s", err.msg);
	f->t = topo_load(f->sc->topology, &err);
	assert_non_null(f->t);
	f->w = sim_world_new(f->sc, f->t, pol, seed, annots, annotated, NULL, &err);
	if (f->w == NULL)
		fail_msg("sim_world_new: %s", err.msg);
}

static void
fx_close(struct fx *f)
{
	sim_world_free(f->w);
	topo_free(f->t);
	sim_scenario_free(f->sc);
}

static void
steps(struct fx *f, int n)
{
	for (int i = 0; i < n; i++)
		assert_true(sim_world_step(f->w));
}

/* One step; domain 0's wakeups in it, checked: none dropped, no vCPU
 * waking itself. */
static const struct sim_wake *
step_wakes(struct fx *f)
{
	steps(f, 1);
	const struct sim_wake *k = &f->w->wake[0];
	assert_int_equal(k->dropped, 0);
	for (int i = 0; i < k->nedges; i++)
		assert_true(k->edges[i].waker != k->edges[i].wakee);
	return k;
}

static struct sim_thread *
th(struct fx *f, int d, int v)
{
	return &f->w->threads[f->w->dom[d].base + v];
}

static void
pin(struct fx *f, int d, int v, const char *cpus)
{
	struct cpuset s;
	struct llcd_err err;

	assert_int_equal(cpuset_parse(&s, cpus, &err), 0);
	assert_int_equal(sim_world_pin(f->w, d, v, &s, &err), 0);
}

#define HOST8 "\"host\":{\"topology\":\"pack:1 [numa] l3:8 core:8 pu:2\"},\"period_ms\":100,\"duration_s\":60"

/* --- pure pieces --------------------------------------------------------- */

static void
test_sharing_8_llcs_is_2_04x(void **state)
{
	int spread[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, one[8] = { 0 };
	int half[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };

	assert_double_equal(1.0 / sim_sharing_factor(1.04, 8, spread), 2.04, 1e-12);
	assert_double_equal(sim_sharing_factor(1.04, 8, one), 1.0, 1e-12);
	/* 4+4 on two LLCs: 16 of 28 pairs cross */
	assert_double_equal(sim_sharing_factor(1.04, 8, half), 1.0 / (1.0 + 1.04 * 16.0 / 28.0), 1e-12);
	assert_double_equal(sim_sharing_factor(1.04, 1, spread), 1.0, 1e-12);
	assert_double_equal(sim_sharing_factor(0.0, 8, spread), 1.0, 1e-12);
}

static void
test_smt_share_factors(void **state)
{
	struct sim_model m;

	sim_model_defaults(&m);
	assert_double_equal(sim_smt_factor(&m, 0), 1.0, 0);
	assert_double_equal(sim_smt_factor(&m, 1), 1.0, 0);
	assert_double_equal(sim_smt_factor(&m, 2), 0.6, 0);
	assert_double_equal(sim_smt_factor(&m, 3), 0.45, 0);
	assert_double_equal(sim_smt_factor(&m, 4), 0.35, 0);
	assert_double_equal(sim_smt_factor(&m, 8), 0.35, 0);
	assert_double_equal(m.migration, 0.7, 0);
	assert_double_equal(m.imbalance, 2.0, 0);
	assert_double_equal(m.busy_util, 0.5, 0);
}

/* --- the world ------------------------------------------------------------ */

static const char *XS =
	"{" HOST8 ",\"domains\":[{\"name\":\"xs\",\"vcpus\":128,\"load\":["
	"{\"vcpus\":\"0-127\",\"util\":0.02},"
	"{\"from_s\":1,\"vcpus\":\"3,19,35,51,67,83,99,115\",\"util\":1.0,\"group\":\"v\","
	"\"sharing\":1.04,\"barrier\":true}]}]}";

/* the same without the 0.02 background: exact factors */
static const char *XS8 =
	"{" HOST8 ",\"domains\":[{\"name\":\"xs\",\"vcpus\":128,\"load\":["
	"{\"from_s\":1,\"vcpus\":\"3,19,35,51,67,83,99,115\",\"util\":1.0,\"group\":\"v\","
	"\"sharing\":1.04,\"barrier\":true}]}]}";

static void
test_balancer_spreads_8_busy_threads(void **state)
{
	struct fx f;

	fx_open(&f, XS, SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 40);
	assert_int_equal(f.w->grp[0].nbusy, 8);
	assert_int_equal(f.w->grp[0].spread, 8);
	/* each alone on a core; 2 % of its PU goes to idle vCPUs at most */
	assert_true(f.w->grp[0].rate <= 1.0 / 2.04 && f.w->grp[0].rate >= 0.97 / 2.04);
	fx_close(&f);
	fx_open(&f, XS8, SIM_POLICY_NONE, 3, NULL, NULL);
	steps(&f, 40);
	assert_int_equal(f.w->grp[0].spread, 8);
	assert_double_equal(f.w->grp[0].rate, 1.0 / 2.04, 1e-9);
	fx_close(&f);
}

static void
test_one_llc_runs_2_04x_faster(void **state)
{
	static const int v[8] = { 3, 19, 35, 51, 67, 83, 99, 115 };
	struct fx f;

	fx_open(&f, XS8, SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 20);
	double spread_rate = f.w->grp[0].rate;
	for (int i = 0; i < 8; i++)
		pin(&f, 0, v[i], "32-47");             /* LLC 2 */
	steps(&f, 1);
	assert_int_equal(f.w->grp[0].spread, 1);
	steps(&f, 1);
	assert_double_equal(f.w->grp[0].rate, 1.0, 1e-9);
	assert_double_equal(f.w->grp[0].rate / spread_rate, 2.04, 1e-9);
	for (int i = 0; i < 8; i++)                    /* one busy thread per core */
		for (int j = i + 1; j < 8; j++)
			assert_int_not_equal(f.t->pu_core[th(&f, 0, v[i])->pu], f.t->pu_core[th(&f, 0, v[j])->pu]);
	fx_close(&f);
}

static void
test_migration_penalty(void **state)
{
	struct fx f;

	fx_open(&f, "{" HOST8 ",\"domains\":[{\"name\":\"a\",\"vcpus\":1,\"load\":"
	    "[{\"vcpus\":\"0\",\"util\":1,\"group\":\"g\"}]}]}", SIM_POLICY_NONE, 1, NULL, NULL);
	pin(&f, 0, 0, "0-15");
	steps(&f, 2);
	assert_double_equal(th(&f, 0, 0)->rate, 1.0, 1e-12);
	pin(&f, 0, 0, "16-31");
	steps(&f, 1);
	assert_double_equal(th(&f, 0, 0)->rate, 0.7, 1e-12);   /* cold cache */
	assert_true(th(&f, 0, 0)->moved);
	assert_int_equal(f.w->dom[0].thread_llc_moves, 1);
	steps(&f, 1);
	assert_double_equal(th(&f, 0, 0)->rate, 1.0, 1e-12);
	pin(&f, 0, 0, "18");                            /* same LLC: no penalty */
	steps(&f, 1);
	assert_double_equal(th(&f, 0, 0)->rate, 1.0, 1e-12);
	fx_close(&f);
}

/* memory_node: a thread off its domain's memory node
 * runs at model.remote_memory; a node the host lacks is a scenario error */
#define HOST2N "\"host\":{\"topology\":\"pack:2 [numa] l3:2 core:4 pu:2\"},\"period_ms\":100,\"duration_s\":60"

static void
test_remote_memory(void **state)
{
	struct fx f;
	struct sim_scenario *sc;
	struct topo *t;
	struct llcd_err err;
	const char *bad = "{" HOST2N ",\"domains\":[{\"name\":\"a\",\"vcpus\":1,\"memory_node\":2}]}";

	fx_open(&f, "{" HOST2N ",\"domains\":[{\"name\":\"a\",\"vcpus\":1,\"memory_node\":1,\"load\":"
	    "[{\"vcpus\":\"0\",\"util\":1,\"group\":\"g\"}]}]}", SIM_POLICY_NONE, 1, NULL, NULL);
	pin(&f, 0, 0, "0-7");                           /* node 0 */
	steps(&f, 2);
	assert_double_equal(th(&f, 0, 0)->rate, 0.8, 1e-12);
	pin(&f, 0, 0, "24-31");                         /* node 1: its memory */
	steps(&f, 2);
	assert_double_equal(th(&f, 0, 0)->rate, 1.0, 1e-12);
	fx_close(&f);
	sc = sim_scenario_parse(bad, strlen(bad), "test", &err);
	assert_non_null(sc);
	t = topo_load(sc->topology, &err);
	assert_non_null(t);
	assert_null(sim_world_new(sc, t, SIM_POLICY_NONE, 1, NULL, NULL, NULL, &err));
	assert_string_equal(err.msg, "domains[0].memory_node: the host has no NUMA node 2");
	topo_free(t);
	sim_scenario_free(sc);
}

/* kernel-cas on host (a scenario's "host" member and timing) with one
 * domain "p" of n vCPUs (memory: more members of it, or ""); its vCPUs in
 * busy run flat out as one group sharing data (sharing 0.5). */
static void
fx_kcas_group(struct fx *f, const char *host, int n, const char *memory, const char *busy)
{
	char json[512];

	assert_true(snprintf(json, sizeof(json), "{%s,\"domains\":[{\"name\":\"p\",\"vcpus\":%d,%s\"load\":"
	    "[{\"vcpus\":\"%s\",\"util\":1,\"group\":\"g\",\"sharing\":0.5}]}]}", host, n, memory, busy)
	    < (int)sizeof(json));
	fx_open(f, json, SIM_POLICY_KCAS, 1, NULL, NULL);
}

/* kernel-cas: NUMA wins (get_pref_llc()): a preferred LLC off the memory's
 * node is not used, so nothing is pulled into it */
static void
test_kcas_numa_wins(void **state)
{
	struct fx f;

	fx_kcas_group(&f, HOST2N, 4, "\"memory_node\":1,", "0-1");
	pin(&f, 0, 0, "0-7");
	pin(&f, 0, 1, "0-15");                          /* may join LLC 0 */
	steps(&f, 1);
	assert_int_equal(f.t->pu_llc[th(&f, 0, 0)->pu], 0);
	int l1 = f.t->pu_llc[th(&f, 0, 1)->pu];
	assert_int_equal(l1, 1);                        /* the least-loaded LLC of its set */
	steps(&f, 30);
	assert_int_equal(f.w->dom[0].pref_llc, 0);      /* the scan's choice ... */
	assert_int_equal(f.t->pu_llc[th(&f, 0, 1)->pu], l1);    /* ... is not acted on */
	fx_close(&f);
}

static void
test_smt_and_cpu_share(void **state)
{
	struct fx f;

	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:4\"},\"duration_s\":10,"
	    "\"domains\":[{\"name\":\"a\",\"vcpus\":6,\"load\":[{\"vcpus\":\"0-5\",\"util\":1}]}]}",
	    SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 1);           /* pins apply to running domains */
	/* 2 on one SMT4 core's PUs 0,1; 4 on core 1 (PUs 4-7) */
	pin(&f, 0, 0, "0");
	pin(&f, 0, 1, "1");
	for (int v = 2; v < 6; v++) {
		char c[16];
		snprintf(c, sizeof(c), "%d", v + 2);
		pin(&f, 0, v, c);
	}
	steps(&f, 2);
	assert_double_equal(th(&f, 0, 0)->rate, 0.6, 1e-12);
	assert_double_equal(th(&f, 0, 2)->rate, 0.35, 1e-12);
	/* two busy threads on one PU: each gets half of it, runtime shows it */
	pin(&f, 0, 1, "0");
	steps(&f, 1);
	assert_double_equal(th(&f, 0, 0)->cpu_frac, 0.5, 1e-12);
	assert_double_equal(th(&f, 0, 0)->rate, 0.5, 1e-12);   /* alone on its core: 1.0 */
	assert_int_equal(th(&f, 0, 0)->runtime_ns, 50000000);
	assert_int_equal(f.w->pu_busy_ns[0], 100000000);
	fx_close(&f);
}


/* Run delay (spec): u_v * max(0, 1 - 1/L) * period on a PU with load L. */
static void
test_run_delay(void **state)
{
	/* vCPUs 0 and 1 busy, vCPU 2 at 20 % */
	static const char json[] = "{\"host\":{\"topology\":\"pack:1 l3:2 core:2 pu:2\"},\"duration_s\":10,"
	    "\"domains\":[{\"name\":\"a\",\"vcpus\":3,\"load\":[{\"vcpus\":\"0-1\",\"util\":1},"
	    "{\"vcpus\":\"2\",\"util\":0.2}]}]}";
	struct fx f;

	fx_open(&f, json, SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 1);
	pin(&f, 0, 0, "0");
	pin(&f, 0, 1, "0");
	pin(&f, 0, 2, "3");
	steps(&f, 1);
	assert_int_equal(th(&f, 0, 0)->run_delay_ns, 50000000);        /* L = 2 */
	assert_int_equal(th(&f, 0, 1)->run_delay_ns, 50000000);
	assert_int_equal(th(&f, 0, 2)->run_delay_ns, 0);               /* L = 0.2 */
	pin(&f, 0, 2, "0");                                             /* L = 2.2 */
	steps(&f, 1);
	assert_int_equal(th(&f, 0, 2)->run_delay_ns,
	    (uint64_t)llround(0.2 * (1 - 1 / 2.2) * 100000000.0));
	fx_close(&f);
}


/* Memory bandwidth (spec, host.mbm): the policy sees each domain's
 * achieved bandwidth, bw_gbs times the LLC's bandwidth factor, as bytes per
 * period; without host.mbm nothing (mbm_valid false). */
static void
test_mbm_achieved(void **state)
{
	struct fx f;
	struct llcd_err err;
	struct agent_obs *obs = agent_obs_new();

	for (int mbm = 0; mbm < 2; mbm++) {
		char json[512];
		snprintf(json, sizeof(json), "{\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:1\",\"llc_bw_gbs\":40,"
		    "\"mbm\":%s},\"duration_s\":10,\"domains\":[{\"name\":\"a\",\"vcpus\":4,\"load\":["
		    "{\"vcpus\":\"0-2\",\"util\":1,\"group\":\"s\",\"bw_gbs\":20},{\"vcpus\":\"3\",\"util\":1}]}]}",
		    mbm ? "true" : "false");
		fx_open(&f, json, SIM_POLICY_NONE, 1, NULL, NULL);
		struct sim_ops_ctx ctx = { .w = f.w };
		steps(&f, 1);
		pin(&f, 0, 0, "0-3");
		pin(&f, 0, 1, "0-3");
		pin(&f, 0, 2, "0-3");
		pin(&f, 0, 3, "4");
		steps(&f, 1);
		/* 60 GB/s asked of a 40 GB/s LLC: each gets 2/3 of its 20 */
		assert_double_equal(th(&f, 0, 0)->bw_got, 20.0 * 40.0 / 60.0, 1e-9);
		assert_double_equal(th(&f, 0, 3)->bw_got, 0, 0);
		assert_int_equal(agent_obs_begin(obs, 8, &err), 0);
		assert_int_equal(sim_agent_ops.observe(&ctx, sim_world_now_ns(f.w), obs, &err), 0);
		assert_int_equal(obs->ndomains, 1);
		assert_int_equal(obs->domains[0].mbm_valid, mbm);
		/* 40 GB/s for 100 ms */
		assert_int_equal(obs->domains[0].mbm_bytes, mbm ? 4000000000ull : 0);
		fx_close(&f);
	}
	agent_obs_free(obs);
}

#define WAKE_HOST "\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:2\",\"wakeup_trace\":true}," \
	"\"duration_s\":100"

/* Wakeup draws (spec): a busy group thread sends Poisson(w * period) to
 * its group's other busy threads; every vCPU sends Poisson(noise * period)
 * to others; the draws have their own stream (placement is unchanged). */
static void
test_wakeup_draws(void **state)
{
	static const char *json = "{" WAKE_HOST ",\"domains\":[{\"name\":\"a\",\"vcpus\":8,\"load\":["
	    "{\"vcpus\":\"0-7\",\"util\":0.05},"
	    "{\"vcpus\":\"1,3,5\",\"util\":1,\"group\":\"g\",\"wakeups_hz\":500},"
	    "{\"vcpus\":\"6\",\"util\":0.3,\"group\":\"g\"}]}]}";
	struct fx f, g;
	double group = 0, noise = 0;
	long periods = 1000;

	fx_open(&f, json, SIM_POLICY_NONE, 3, NULL, NULL);
	assert_true(f.sc->wakeup_trace);
	assert_double_equal(f.sc->wakeup_noise_hz, 20, 0);
	for (long p = 0; p < periods; p++) {
		const struct sim_wake *k = step_wakes(&f);
		for (int i = 0; i < k->nedges; i++) {
			const struct policy_wakeup_edge *e = &k->edges[i];
			assert_true(e->count > 0);
			if (i > 0)      /* sorted by pair, no duplicates */
				assert_true(e->waker > k->edges[i - 1].waker ||
				    (e->waker == k->edges[i - 1].waker && e->wakee > k->edges[i - 1].wakee));
			bool in = (e->waker == 1 || e->waker == 3 || e->waker == 5) &&
			    (e->wakee == 1 || e->wakee == 3 || e->wakee == 5);
			if (in)
				group += e->count;
			else
				noise += e->count;
		}
	}
	/* 3 threads x 50 per period, plus the noise that falls inside (20/s x
	 * 3 senders x 2/7 of partners); the idle member 6 is no partner */
	double want_group = periods * (3 * 50.0 + 3 * 2.0 * 2 / 7);
	double want_noise = periods * (8 * 2.0 - 3 * 2.0 * 2 / 7);
	assert_double_equal(group / want_group, 1.0, 0.02);
	assert_double_equal(noise / want_noise, 1.0, 0.05);

	fx_close(&f);

	/* the same world without the trace places every thread the same way */
	char off[1024];
	const char *t = strstr(json, "true");
	snprintf(off, sizeof(off), "%.*sfalse%s", (int)(t - json), json, t + 4);
	fx_open(&f, json, SIM_POLICY_NONE, 3, NULL, NULL);
	fx_open(&g, off, SIM_POLICY_NONE, 3, NULL, NULL);
	assert_null(g.w->wake);
	for (long p = 0; p < 100; p++) {
		steps(&f, 1);
		steps(&g, 1);
		for (int v = 0; v < 8; v++)
			assert_int_equal(th(&f, 0, v)->pu, th(&g, 0, v)->pu);
	}
	fx_close(&f);
	fx_close(&g);
}

/* More pairs than the policy takes: each waker's strongest
 * POLICY_WAKEUP_EDGES_VCPU kept (ties broken without favouring low vCPU
 * numbers), the rest counted as dropped, nothing lost. */
static void
test_wakeup_cap(void **state)
{
	struct fx f;
	double low = 0, high = 0;

	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 l3:8 core:8 pu:2\",\"wakeup_trace\":true,"
	    "\"wakeup_noise_hz\":2000},\"duration_s\":10,\"domains\":[{\"name\":\"a\",\"vcpus\":128,"
	    "\"load\":[{\"vcpus\":\"0-127\",\"util\":0.05}]}]}", SIM_POLICY_NONE, 1, NULL, NULL);
	for (int p = 0; p < 20; p++) {
		steps(&f, 1);
		const struct sim_wake *k = &f.w->wake[0];
		uint64_t sum = k->dropped;
		int per[128] = { 0 };
		/* 200 draws a waker over 127 partners: about 100 distinct, 64 kept */
		assert_int_equal(k->nedges, 128 * POLICY_WAKEUP_EDGES_VCPU);
		assert_true(k->dropped > 0);
		for (int i = 0; i < k->nedges; i++) {
			const struct policy_wakeup_edge *e = &k->edges[i];
			sum += e->count;
			per[e->waker]++;
			if (e->wakee < 64)
				low += e->wakee != e->waker;
			else
				high += e->wakee != e->waker;
		}
		for (int v = 0; v < 128; v++)
			assert_int_equal(per[v], POLICY_WAKEUP_EDGES_VCPU);
		assert_int_equal(sum, f.w->wdraw_n);    /* every draw counted */
		assert_double_equal((double)sum / (128 * 200.0), 1.0, 0.05);
	}
	/* the low half of the vCPU numbers is kept as often as the high */
	assert_double_equal(low / high, 1.0, 0.03);
	fx_close(&f);
}

/* `wakes` (spec): each vCPU of an active entry sends Poisson(hz x period)
 * wakeups, whatever its util, each to a uniformly drawn vCPU of the wakes'
 * set other than itself: a dispatcher (vCPU 0, nearly idle) waking 5
 * workers, and a queue whose senders are in their own target set. */
static void
test_wakes_draws(void **state)
{
	static const char *json = "{\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:2\","
	    "\"wakeup_trace\":true,\"wakeup_noise_hz\":0},\"duration_s\":100,"
	    "\"domains\":[{\"name\":\"a\",\"vcpus\":8,\"load\":["
	    "{\"vcpus\":\"0\",\"util\":0,\"wakes\":[{\"vcpus\":\"1-5\",\"hz\":500}]},"
	    "{\"from_s\":50,\"vcpus\":\"6-7\",\"util\":0.2,\"wakes\":[{\"vcpus\":\"6-7\",\"hz\":100},"
	    "{\"vcpus\":\"7\",\"hz\":50}]}]}]}";
	struct fx f;
	double to[8][8] = { { 0 } };

	fx_open(&f, json, SIM_POLICY_NONE, 5, NULL, NULL);
	assert_int_equal(f.sc->domains[0].load[0].nwakes, 1);
	assert_int_equal(f.sc->domains[0].load[1].nwakes, 2);
	for (long p = 0; p < 1000; p++) {
		const struct sim_wake *k = step_wakes(&f);
		for (int i = 0; i < k->nedges; i++) {
			const struct policy_wakeup_edge *e = &k->edges[i];
			to[e->waker][e->wakee] += e->count;
		}
		if (p < 500)    /* the queue starts at 50 s */
			assert_true(to[6][7] == 0 && to[7][6] == 0);
	}
	/* 500/s over 1,000 periods of 100 ms: 50,000 draws, 10,000 a worker */
	for (int b = 1; b <= 5; b++)
		assert_double_equal(to[0][b] / 10000.0, 1.0, 0.05);
	for (int a = 1; a < 8; a++)
		for (int b = 0; b < 8; b++)
			if (!((a == 6 && b == 7) || (a == 7 && b == 6)))
				assert_true(to[a][b] == 0);
	/* 6 -> 7: 100/s + 50/s for 50 s; 7 -> 6: 100/s (7 never wakes itself) */
	assert_double_equal(to[6][7] / 7500.0, 1.0, 0.05);
	assert_double_equal(to[7][6] / 5000.0, 1.0, 0.05);
	fx_close(&f);
}

/* `qemu_threads` (spec): non-vCPU threads of the QEMU process take CPU
 * where the balancer puts them, within the emulator pin once there is
 * one, and are never vCPUs to the policy. */
static void
test_qemu_threads_run(void **state)
{
	static const char *json = "{\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:2\","
	    "\"reserved_cpus\":\"0\"},\"duration_s\":100,\"domains\":[{\"name\":\"a\",\"vcpus\":2,"
	    "\"qemu_threads\":[{\"count\":2,\"util\":0.6},{\"count\":1,\"util\":0}],"
	    "\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]}]}";
	struct fx f;
	struct cpuset emu;
	struct llcd_err err;
	double busy = 0;

	fx_open(&f, json, SIM_POLICY_NONE, 1, NULL, NULL);
	assert_int_equal(f.sc->domains[0].qemu_count, 3);
	assert_int_equal(f.w->dom[0].nthreads, 5);
	assert_int_equal(f.w->nthreads, 5);
	steps(&f, 5);
	for (int q = 2; q < 4; q++) {
		assert_int_equal(th(&f, 0, q)->vcpu, -1);
		assert_int_equal(th(&f, 0, q)->qemu, q - 2);
		assert_true(th(&f, 0, q)->pu > 0);      /* not on the reserved CPU */
		assert_int_equal(th(&f, 0, q)->runtime_ns, 60000000);
	}
	assert_true(th(&f, 0, 4)->pu < 0);             /* util 0: never ran */
	/* four busy threads, each alone on a core of the 3.5 left */
	for (int pu = 0; pu < f.w->npu; pu++)
		busy += (double)f.w->pu_busy_ns[pu] / 1e8;
	assert_double_equal(busy, 3.2, 1e-9);
	/* the emulator pin takes them to CPUs 6-7 (one core), the vCPUs
	 * pinned away from it */
	pin(&f, 0, 0, "1-5");
	pin(&f, 0, 1, "1-5");
	assert_int_equal(cpuset_parse(&emu, "6-7", &err), 0);
	assert_int_equal(sim_world_pin_emulator(f.w, 0, &emu, &err), 0);
	steps(&f, 1);
	for (int q = 2; q < 4; q++)
		assert_true(th(&f, 0, q)->pu == 6 || th(&f, 0, q)->pu == 7);
	assert_true(th(&f, 0, 2)->pu != th(&f, 0, 3)->pu);
	for (int v = 0; v < 2; v++)
		assert_true(th(&f, 0, v)->pu < 6);
	/* released: anywhere again, and the balancer spreads them */
	sim_world_unpin(f.w, 0);
	steps(&f, 5);
	assert_false(f.w->dom[0].emu_pinned);
	assert_true(th(&f, 0, 2)->pu / 2 != th(&f, 0, 3)->pu / 2);
	fx_close(&f);

	/* the policy sees the 2 vCPUs only: the observation has 2 samples */
	struct sim_ops_ctx ctx = { 0 };
	struct agent_obs *obs = agent_obs_new();
	fx_open(&f, json, SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 2);
	ctx.w = f.w;
	assert_non_null(obs);
	assert_int_equal(agent_obs_begin(obs, f.w->npu, &err), 0);
	assert_int_equal(sim_agent_ops.observe(&ctx, sim_world_now_ns(f.w), obs, &err), 0);
	assert_int_equal(obs->ndomains, 1);
	assert_int_equal(obs->domains[0].nvcpus, 2);
	agent_obs_free(obs);
	fx_close(&f);
}

/* kernel-cas counts every thread of the mm: 8 busy vCPUs alone settle at
 * an nr_running_avg of 5 and keep a preference (test_kcas_integer_avg_stalls);
 * with two busy I/O threads the process is excluded for good. */
static void
test_kcas_counts_qemu_threads(void **state)
{
#define KCAS_QEMU(q) "{\"host\":{\"topology\":\"pack:1 [numa] l3:2 core:8 pu:2\"}," \
	    "\"period_ms\":100,\"duration_s\":60,\"domains\":[{\"name\":\"p\",\"vcpus\":8," \
	    "\"qemu_threads\":[{\"count\":2,\"util\":" q "}],\"load\":" \
	    "[{\"vcpus\":\"0-7\",\"util\":1,\"group\":\"g\",\"sharing\":0.5}]}]}"
	struct fx f;
	bool ever = false;

	fx_open(&f, KCAS_QEMU("0.9"), SIM_POLICY_KCAS, 1, NULL, NULL);
	for (int i = 0; i < 100; i++) {
		steps(&f, 1);
		ever |= f.w->dom[0].pref_llc >= 0;
	}
	assert_false(ever);
	assert_true(f.w->dom[0].nr_avg >= 7);
	assert_int_equal(f.w->grp[0].spread, 2);
	fx_close(&f);
	fx_open(&f, KCAS_QEMU("0"), SIM_POLICY_KCAS, 1, NULL, NULL);
	steps(&f, 100);
	assert_true(f.w->dom[0].pref_llc >= 0);        /* idle I/O threads: as before */
	assert_int_equal(f.w->dom[0].nr_avg, 5);
	fx_close(&f);
}

static void
test_bandwidth_cap(void **state)
{
	struct fx f;

	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 l3:4 core:8 pu:2\",\"llc_bw_gbs\":40,"
	    "\"perf_counters\":true},\"duration_s\":10,\"domains\":[{\"name\":\"s\",\"vcpus\":4,"
	    "\"load\":[{\"vcpus\":\"0-3\",\"util\":1,\"bw_gbs\":20,\"group\":\"st\"}]}]}",
	    SIM_POLICY_NONE, 1, NULL, NULL);
	steps(&f, 5);
	assert_int_equal(f.w->grp[0].spread, 4);       /* spread: 20 of 40 GB/s each */
	assert_double_equal(f.w->grp[0].rate, 1.0, 1e-12);
	for (int v = 0; v < 4; v++)
		pin(&f, 0, v, "0-15");
	steps(&f, 2);
	assert_double_equal(f.w->grp[0].rate, 0.5, 1e-12);   /* 80 GB/s on a 40 GB/s LLC */
	/* counters: instructions = rate x util x period x 1e9/s */
	assert_int_equal(th(&f, 0, 0)->instructions, 50000000);
	fx_close(&f);
}

static void
test_determinism(void **state)
{
	struct fx a, b, c;
	int differ = 0;

	fx_open(&a, XS, SIM_POLICY_NONE, 42, NULL, NULL);
	fx_open(&b, XS, SIM_POLICY_NONE, 42, NULL, NULL);
	fx_open(&c, XS, SIM_POLICY_NONE, 43, NULL, NULL);
	for (int i = 0; i < 30; i++) {
		steps(&a, 1);
		steps(&b, 1);
		steps(&c, 1);
		for (int v = 0; v < 128; v++) {
			assert_int_equal(th(&a, 0, v)->pu, th(&b, 0, v)->pu);
			differ += th(&a, 0, v)->pu != th(&c, 0, v)->pu;
		}
		assert_double_equal(a.w->grp[0].rate, b.w->grp[0].rate, 0);
	}
	assert_true(differ > 0);
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
}

static void
test_kcas_aggregates_small_process(void **state)
{
	struct fx f;

	fx_kcas_group(&f, HOST8, 8, "", "0-3");
	steps(&f, 1);
	assert_int_equal(f.w->grp[0].spread, 4);       /* new threads: least-loaded LLCs */
	steps(&f, 30);
	assert_true(f.w->dom[0].pref_llc >= 0);
	assert_int_equal(f.w->grp[0].spread, 1);       /* 4 x 2 = 8 < 0.8 x 16: aggregated */
	assert_int_equal(f.w->dom[0].pref_switches, 1);
	fx_close(&f);
}

static void
test_kcas_guard_keeps_8_busy_apart(void **state)
{
	struct fx f;

	fx_open(&f, XS, SIM_POLICY_KCAS, 1, NULL, NULL);
	steps(&f, 60);
	/* nr_running ~ 8 + 120 x 0.02 on CPU at a scan: the integer average
	 * reaches 7 (7 x SMT2 is not < 0.8 x 16), and the kernel stops
	 * updating it there (task_cache_work() returns first) */
	assert_int_equal(f.w->dom[0].pref_llc, -1);
	assert_int_equal(f.w->grp[0].spread, 8);
	assert_int_equal(f.w->dom[0].nr_avg, 7);
	fx_close(&f);
}

/* A steady 8 busy threads on 16-PU LLCs. The kernel's
 * integer nr_running_avg settles at 5 (5 x SMT2 < 0.8 x 16), so the size
 * guard keeps the preference; only the 50 % over-aggregation test keeps
 * the 8th thread out of the preferred LLC (7 x 1024 in, the 8th would make
 * it 50 %). A real-valued average reaches 8 and drops the preference. */
static void
test_kcas_integer_avg_stalls(void **state)
{
	struct fx f;
	int in_pref = 0;

	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 [numa] l3:2 core:8 pu:2\"},"
	    "\"period_ms\":100,\"duration_s\":60,\"domains\":[{\"name\":\"p\",\"vcpus\":8,\"load\":"
	    "[{\"vcpus\":\"0-7\",\"util\":1,\"group\":\"g\",\"sharing\":0.5}]}]}",
	    SIM_POLICY_KCAS, 1, NULL, NULL);
	steps(&f, 100);
	assert_int_equal(f.w->dom[0].nr_avg, 5);
	assert_true(f.w->dom[0].pref_llc >= 0);
	for (int v = 0; v < 8; v++)
		in_pref += f.w->topo->pu_llc[th(&f, 0, v)->pu] == f.w->dom[0].pref_llc;
	assert_int_equal(in_pref, 7);
	assert_int_equal(f.w->grp[0].spread, 2);
	fx_close(&f);
}

static void
test_invariants(void **state)
{
	struct policy_annotation an[3];
	bool is[3] = { true, true, false };
	struct llcd_err err;
	struct cpuset s;
	struct fx f;

	for (int i = 0; i < 3; i++) {
		policy_annotation_defaults(&an[i]);
		an[i].isolation = POLICY_ISO_CORE;
	}
	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:2\",\"reserved_cpus\":\"0-1\"},"
	    "\"duration_s\":10,\"domains\":["
	    "{\"name\":\"i1\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]},"
	    "{\"name\":\"i2\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]},"
	    "{\"name\":\"n\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]}]}",
	    SIM_POLICY_LLCD, 1, an, is);
	/* the engine placed both isolated domains (run.c sets this from
	 * policy_domain_info(); this test pins by hand) */
	f.w->dom[0].iso_managed = f.w->dom[1].iso_managed = true;
	steps(&f, 2);
	assert_int_equal(f.w->nviol, 0);               /* unpinned: never on reserved PUs */
	for (int i = 0; i < 6; i++)
		assert_true(f.w->threads[i].pu >= 2);
	pin(&f, 0, 0, "2-3");
	pin(&f, 1, 0, "4-5");
	steps(&f, 1);
	assert_int_equal(f.w->nviol, 0);
	pin(&f, 1, 1, "3");                            /* core 1 also holds i1 */
	steps(&f, 1);
	assert_int_equal(f.w->nviol, 1);
	assert_non_null(strstr(f.w->viol[0], "isolation: isolated domains 'i1' and 'i2' both pinned to core 1"));
	pin(&f, 2, 0, "1");
	steps(&f, 1);
	assert_int_equal(f.w->nviol, 3);
	assert_non_null(strstr(f.w->viol[1], "reserved: domain 'n' vCPU 0 ran on reserved CPU 1"));
	assert_non_null(strstr(f.w->viol[2], "reserved: domain 'n' vCPU 0 pinned to reserved CPU(s) 1"));
	/* a non-isolated domain pinned onto an isolated domain's core */
	pin(&f, 2, 0, "5");
	steps(&f, 1);
	assert_int_equal(f.w->nviol, 5);
	/* the change itself (replayed in order), then the period's end */
	assert_non_null(strstr(f.w->viol[3], "isolation between pins: domain 'n' vCPU 0 pinned onto core 2, where "
	    "isolated domain 'i2' vCPU 0 is pinned"));
	assert_non_null(strstr(f.w->viol[4], "isolation: domain 'n' vCPU 0 pinned to core 2 of isolated domain 'i2'"));
	assert_int_equal(cpuset_parse(&s, "15-17", &err), 0);
	assert_int_equal(sim_world_pin(f.w, 2, 1, &s, &err), -1);
	assert_int_equal(f.w->nviol, 6);
	assert_non_null(strstr(f.w->viol[5], "host-cpu: domain 'n' vCPU 1 pinned to CPU(s) '16-17' the host lacks"));
	fx_close(&f);
}

/* Isolation is checked between the pins of a period, not only where they
 * end: a shared vCPU pinned onto an isolated domain's
 * core and off it again before the period ends is caught, in the order
 * the pins came; pins that only narrow, or that add no core another
 * domain is pinned to, are not. */
static void
test_invariants_between_pins(void **state)
{
	struct policy_annotation an[2];
	bool is[2] = { true, false };
	struct fx f;

	for (int i = 0; i < 2; i++)
		policy_annotation_defaults(&an[i]);
	an[0].isolation = POLICY_ISO_CORE;
	fx_open(&f, "{\"host\":{\"topology\":\"pack:1 l3:2 core:4 pu:2\"},"
	    "\"duration_s\":10,\"domains\":["
	    "{\"name\":\"iso\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]},"
	    "{\"name\":\"web\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1}]}]}",
	    SIM_POLICY_LLCD, 1, an, is);
	f.w->dom[0].iso_managed = true;
	steps(&f, 1);
	/* phases: the pins in order (domain 0 iso or 1 web, vCPU, CPUs), one
	 * step, then the violations so far and the text of the last (NULL:
	 * none new) */
	static const struct {
		struct {
			int dom, vcpu;
			const char *cpus;
		} pins[4];
		int nviol;
		const char *viol;
	} phases[] = {
		{ { { 0, 0, "0-1" }, { 0, 1, "0-1" }, { 1, 0, "2-15" }, { 1, 1, "2-15" } }, 0, NULL },
		/* web vCPU 0 widens onto iso's core 0 and narrows back: the end
		 * is clean, the moment in between is not */
		{ { { 1, 0, "0-15" }, { 1, 0, "4-15" } }, 1,
		  "isolation between pins: domain 'web' vCPU 0 pinned onto core 0, where isolated domain 'iso' vCPU 0 is pinned" },
		/* iso moves to core 1 after web vCPU 1 left it: clean at every step */
		{ { { 1, 1, "4-15" }, { 0, 0, "2-3" }, { 0, 1, "2-3" } }, 1, NULL },
		/* the other way round: iso takes core 2 while web vCPU 0 is
		 * pinned there, and web leaves it afterwards */
		{ { { 0, 0, "2-5" }, { 1, 0, "6-15" }, { 1, 1, "6-15" } }, 2,
		  "isolation between pins: domain 'iso' vCPU 0 pinned onto core 2, where domain 'web' vCPU 0 is pinned" },
	};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		for (int j = 0; j < 4 && phases[i].pins[j].cpus != NULL; j++)
			pin(&f, phases[i].pins[j].dom, phases[i].pins[j].vcpu, phases[i].pins[j].cpus);
		steps(&f, 1);
		assert_int_equal(f.w->nviol, phases[i].nviol);
		if (phases[i].viol != NULL && strstr(f.w->viol[f.w->nviol - 1], phases[i].viol) == NULL)
			fail_msg("phase %zu: violation '%s', want '%s'", i, f.w->viol[f.w->nviol - 1], phases[i].viol);
	}
	fx_close(&f);
}

static void
test_run_llcd_seed_case(void **state)
{
	struct llcd_err err;
	struct sim_run r;
	struct sim_scenario *sc = sim_scenario_parse(XS, strlen(XS), "xs", &err);

	assert_non_null(sc);
	assert_int_equal(sim_run(&r, sc, SIM_POLICY_NONE, 1, NULL, 0, &err), 0);
	assert_int_equal(r.w->period, 600);
	assert_true(sim_run_throughput(&r, 0) < 0.5);
	assert_true(r.before.t >= 1.0);
	sim_run_fini(&r);
	sim_scenario_free(sc);
}

TEST_MAIN(
	cmocka_unit_test(test_sharing_8_llcs_is_2_04x),
	cmocka_unit_test(test_smt_share_factors),
	cmocka_unit_test(test_balancer_spreads_8_busy_threads),
	cmocka_unit_test(test_one_llc_runs_2_04x_faster),
	cmocka_unit_test(test_migration_penalty),
	cmocka_unit_test(test_smt_and_cpu_share),
	cmocka_unit_test(test_bandwidth_cap),
	cmocka_unit_test(test_run_delay),
	cmocka_unit_test(test_mbm_achieved),
	cmocka_unit_test(test_wakeup_draws),
	cmocka_unit_test(test_wakeup_cap),
	cmocka_unit_test(test_wakes_draws),
	cmocka_unit_test(test_qemu_threads_run),
	cmocka_unit_test(test_kcas_counts_qemu_threads),
	cmocka_unit_test(test_determinism),
	cmocka_unit_test(test_kcas_aggregates_small_process),
	cmocka_unit_test(test_kcas_guard_keeps_8_busy_apart),
	cmocka_unit_test(test_kcas_integer_avg_stalls),
	cmocka_unit_test(test_remote_memory),
	cmocka_unit_test(test_kcas_numa_wins),
	cmocka_unit_test(test_invariants),
	cmocka_unit_test(test_invariants_between_pins),
	cmocka_unit_test(test_run_llcd_seed_case))
