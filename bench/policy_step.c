// SPDX-License-Identifier: GPL-2.0-or-later
/* bench/policy_step: cost of one policy step on a large host.
 *
 * Host: 2 sockets x 12 LLCs x 8 cores x SMT2 = 384 PUs. 200 domains with
 * 10,000 vCPU threads in all (20 isolated 4-vCPU domains, 180 aggregate or
 * static domains in an overcommitted shared pool), 10 % of vCPUs busy,
 * guest reports on a quarter of the domains. After placement settles, it
 * times steady-state steps and, side by side in the same loop, a baseline
 * that only reads every sample once (the least any policy must do), and
 * prints both with their ratio. The samples' pins are sets of a pool the
 * engine interns its own pins in (policy_state_share_sets), as llcd's live
 * back-end hands them; --copies: each vCPU's pin a copy of its own, as
 * llcd-sim and the tests hand them (the engine compares them bit by bit).
 * --scale: instead, the host and domains of tests/scale/test_driver_scale.sh
 * (512 PUs, 2,000 aggregate domains of 16 vCPUs, overcommit 64), every
 * vCPU idle with no CPU seen, as the live back-end reports the test
 * driver's thread-less domains (issue 25 item 4's policy step).
 * The world marks each domain's samples (policy_domain_in.vcpus_gen) as
 * llcd's live back-end does: a new mark when one it writes changes or a
 * plan pins one; its annotation and reports (annot_gen, reports_gen),
 * which never change, keep their first marks; --no-marks: unmarked, as
 * llcd-sim hands them (the engine compares them with a copy).
 * Usage: policy_step [STEPS] [--copies|--scale] [--no-marks] (default
 * 300 steps).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cpuset_pool.h"
#include "policy.h"
#include "topo_hwloc.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

/* The baseline: every sample the world just wrote, read once (the least
 * any policy must do); a function of its own so that callgrind counts it
 * (bench/policy-step-instr). */
static __attribute__((noinline)) uint64_t
baseline_read(const struct policy_domain_in *doms, int n)
{
	uint64_t acc = 0;

	for (int i = 0; i < n; i++)
		for (int v = 0; v < doms[i].nvcpus; v++)
			acc += doms[i].vcpus[v].runtime_ns + (uint64_t)doms[i].vcpus[v].last_cpu;
	return acc;
}

int
main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 300;
	bool copies = false, scale = false, marks = true, bad = false;
	for (int a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--copies") == 0 && !scale)
			copies = true;
		else if (strcmp(argv[a], "--scale") == 0 && !copies)
			scale = true;
		else if (strcmp(argv[a], "--no-marks") == 0)
			marks = false;
		else
			bad = true;
	}
	const char *shape = scale ? "pack:2 [numa] l3:16 core:8 pu:2" : "pack:2 [numa] l3:12 core:8 pu:2";
	int ndom = scale ? 2000 : 200, nvcpu_total = 10000;        /* (--scale: 16 a domain) */
	struct llcd_err err;
	if (bad) {
		fprintf(stderr, "usage: policy_step [STEPS] [--copies|--scale] [--no-marks]\n");
		return 2;
	}
	struct topo *t = topo_load(shape, &err);
	if (t == NULL || steps < 1) {
		fprintf(stderr, "policy_step: %s\n", t ? "STEPS must be >= 1" : err.msg);
		return 2;
	}
	struct policy_domain_in *doms = calloc(ndom, sizeof(*doms));
	struct cpuset **pins = calloc(ndom, sizeof(*pins));     /* --copies: the samples' pins point here */
	const struct cpuset ***ipins = calloc(ndom, sizeof(*ipins));    /* else: sets of the pool */
	struct cpuset_pool *pool = cpuset_pool_new();
	struct policy_hot_report *reps = calloc(ndom, sizeof(*reps));
	uint64_t *busy = calloc((size_t)t->max_cpu + 1, sizeof(uint64_t));
	uint64_t *tp = calloc((size_t)steps, sizeof(uint64_t)), *tb = calloc((size_t)steps, sizeof(uint64_t));
	struct policy_state *st = policy_state_new();
	struct policy_plan *plan = policy_plan_new();
	struct policy_input in;
	int total = 0;
	uint64_t mark = 0;      /* the samples' marks (policy_domain_in.vcpus_gen) */

	if (pool == NULL || (!copies && policy_state_share_sets(st, pool) < 0)) {
		fprintf(stderr, "policy_step: out of memory\n");
		return 1;
	}
	uint64_t period = 1000000000ull;

	policy_host_defaults(&in.host, t);
	in.host.overcommit = scale ? 64 : 32;
	if (!scale)
		cpuset_parse(&in.host.reserved, "0,192", NULL);
	for (int i = 0; i < ndom; i++) {
		struct policy_domain_in *d = &doms[i];
		int n = scale ? 16 : i < 20 ? 4 : (nvcpu_total - 80) / 180 + (i % 5 == 0 ? (nvcpu_total - 80) % 180 / 36 : 0);
		if (i == ndom - 1 && !scale)
			n = nvcpu_total - total;
		d->key = (uint64_t)i * 2654435761u + 1;
		snprintf(d->name, sizeof(d->name), "vm%03d", i);
		d->nvcpus = n;
		d->guest = (struct policy_guest_topo){ 1, 1, 1, n, 1 };
		d->annotated = true;
		policy_annotation_defaults(&d->annot);
		d->annot.mode = i % 3 == 0 && !scale ? POLICY_MODE_STATIC : POLICY_MODE_AGGREGATE;
		d->annot.isolation = i < 20 && !scale ? POLICY_ISO_CORE : POLICY_ISO_NONE;
		struct policy_vcpu_sample *s = calloc((size_t)n, sizeof(*s));
		pins[i] = calloc((size_t)n, sizeof(**pins));
		ipins[i] = calloc((size_t)n, sizeof(**ipins));
		for (int v = 0; v < n; v++) {
			ipins[i][v] = &cpuset_none;
			s[v].pinned = copies ? &pins[i][v] : ipins[i][v];
			s[v].last_cpu = -1;
			s[v].runtime_ns = scale ? 0 : (v % 10 == 0) ? period : period / 50;
		}
		d->vcpus = s;
		d->vcpus_gen = marks ? ++mark : 0;
		d->annot_gen = marks ? ++mark : 0;      /* (neither ever changes) */
		d->reports_gen = marks ? ++mark : 0;
		if (i % 4 == 1 && n > 8 && !scale) {
			snprintf(reps[i].name, sizeof(reps[i].name), "worker");
			reps[i].pid = 100 + i;
			for (int v = 0; v < 8; v++)
				cpuset_set(&reps[i].vcpus, v * (n / 8));
			d->reports = &reps[i];
			d->nreports = 1;
		}
		total += n;
	}
	in.ndomains = ndom;
	in.domains = doms;
	in.cpu_busy_ns = busy;
	in.period_ns = period;
	for (int step = -20; step < steps; step++) {
		/* the world: each vCPU runs on the first PU of its pin */
		memset(busy, 0, sizeof(uint64_t) * ((size_t)t->max_cpu + 1));
		for (int i = 0; i < ndom && !scale; i++) {   /* --scale: no CPU seen */
			bool moved = false;
			for (int v = 0; v < doms[i].nvcpus; v++) {
				struct policy_vcpu_sample *s = (struct policy_vcpu_sample *)&doms[i].vcpus[v];
				int cpu = cpuset_empty(s->pinned) ? (i * 7 + v) % (t->max_cpu + 1)
				    : cpuset_first(s->pinned) + v % cpuset_count(s->pinned);
				if (cpu > t->max_cpu || !cpuset_isset(&t->all, cpu))
					cpu = cpuset_first(s->pinned);
				/* as llcd's back-end writes them: a sample that
				 * changes gets its domain a new mark */
				moved |= s->last_cpu != cpu;
				s->last_cpu = cpu;
				busy[cpu] += s->runtime_ns;
			}
			if (moved && marks)
				doms[i].vcpus_gen = ++mark;
		}
		in.now_ns = (uint64_t)(step + 20) * period;
		/* baseline first, on the samples the world just wrote: read each once */
		uint64_t t0 = llcd_mono_ns();
		sink = baseline_read(doms, ndom);
		uint64_t t1 = llcd_mono_ns();
		if (policy_step(st, &in, plan, &err) < 0) {
			fprintf(stderr, "policy_step: %s\n", err.msg);
			return 1;
		}
		uint64_t t2 = llcd_mono_ns();
		for (int a = 0; a < plan->n; a++) {
			const struct policy_action *x = &plan->actions[a];
			if (x->type != POLICY_ACT_PIN_VCPU)
				continue;
			if (marks)
				doms[x->domain].vcpus_gen = ++mark;
			if (copies) {
				pins[x->domain][x->vcpu] = x->cpus;
			} else {
				cpuset_pool_set_or_none(pool, &ipins[x->domain][x->vcpu], &x->cpus);
				((struct policy_vcpu_sample *)&doms[x->domain].vcpus[x->vcpu])->pinned =
				    ipins[x->domain][x->vcpu];
			}
		}
		if (step >= 0) {
			tb[step] = t1 - t0;
			tp[step] = t2 - t1;
		}
	}
	qsort(tp, (size_t)steps, sizeof(uint64_t), cmp_u64);
	qsort(tb, (size_t)steps, sizeof(uint64_t), cmp_u64);
	struct policy_stats ps;
	policy_stats(st, &ps);
	printf("host: %d PUs (%s), %d domains, %d vCPU threads%s, %d steps, pins %s\n",
	    cpuset_count(&t->all), shape, ndom, total, scale ? " (idle, --scale)" : "", steps,
	    copies ? "copies (--copies)" : "sets of the engine's pool");
	printf("policy step      p50 %8.1f us   p99 %8.1f us   max %8.1f us\n",
	    tp[steps / 2] / 1e3, tp[steps * 99 / 100] / 1e3, tp[steps - 1] / 1e3);
	printf("baseline (read)  p50 %8.1f us   p99 %8.1f us\n", tb[steps / 2] / 1e3, tb[steps * 99 / 100] / 1e3);
	printf("ratio step/baseline (p50): %.1fx\n", (double)tp[steps / 2] / (double)(tb[steps / 2] ? tb[steps / 2] : 1));
	printf("engine: %llu pins, %llu preference switches, %llu refusals\n",
	    (unsigned long long)ps.pins, (unsigned long long)ps.pref_switches, (unsigned long long)ps.refusals);
	for (int i = 0; i < ndom; i++)
		free((void *)doms[i].vcpus);
	for (int i = 0; i < ndom; i++) {
		free(pins[i]);
		for (int v = 0; v < doms[i].nvcpus; v++)
			cpuset_pool_drop(pool, &ipins[i][v]);
		free(ipins[i]);
	}
	free(pins);
	free(ipins);
	free(doms);
	free(reps);
	free(busy);
	free(tp);
	free(tb);
	policy_plan_free(plan);
	policy_state_free(st);
	cpuset_pool_free(pool);
	topo_free(t);
	return 0;
}
