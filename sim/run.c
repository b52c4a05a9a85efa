// SPDX-License-Identifier: GPL-2.0-or-later
/* run.c - drive the world and (for llcd / static) the agent loop through
 * the simulated ops back-end, period by period, in virtual time. */
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"
#include "topo_hwloc.h"

static void
snapshot(struct sim_run *r, struct sim_snapshot *s, double t)
{
	const struct sim_world *w = r->w;
	const struct sim_group *G = &r->sc->groups[r->snap_group];
	const struct sim_dom_state *D = &w->dom[G->domain];

	s->t = t;
	for (int v = 0; v < s->nvcpus; v++) {
		const struct sim_thread *th = &w->threads[D->base + v];
		s->llc[v] = th->group == r->snap_group && th->demand >= r->sc->model.busy_util
		    ? w->topo->pu_llc[th->pu] : -1;
	}
}

int
sim_run(struct sim_run *r, const struct sim_scenario *sc, enum sim_policy policy, uint64_t seed,
        FILE *trace, int snap_group, struct llcd_err *err)
{
	struct policy_annotation *annots = NULL;
	bool *annotated = NULL;
	struct cpuset missing;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->sc = sc;
	r->policy = policy;
	r->seed = seed;
	r->snap_group = snap_group < sc->ngroups ? snap_group : -1;
	if ((r->topo = topo_load(sc->topology, err)) == NULL)
		return llcd_err_prefix(err, "%s: host.topology", sc->name);
	cpuset_andnot(&missing, &sc->reserved, &r->topo->all);
	if (!cpuset_empty(&missing))
		return llcd_err_set(err, "%s: host.reserved_cpus: CPU %d is not on the host (%s)",
		    sc->name, cpuset_first(&missing), r->topo->desc);
	annots = calloc((size_t)sc->ndomains + 1, sizeof(*annots));
	annotated = calloc((size_t)sc->ndomains + 1, sizeof(*annotated));
	if (annots == NULL || annotated == NULL) {
		llcd_err_set(err, "out of memory");
		rc = -2;
		goto out;
	}
	for (int d = 0; d < sc->ndomains; d++) {
		const char *x = sc->domains[d].llc_policy;
		if (x == NULL)
			continue;
		if (annot_parse(x, strlen(x), sc->domains[d].nvcpus, &annots[d], err) < 0) {
			llcd_err_prefix(err, "%s: domains[%d].llc_policy", sc->name, d);
			goto out;
		}
		annotated[d] = true;
	}
	r->w = sim_world_new(sc, r->topo, policy, seed, annots, annotated, trace, err);
	if (r->w == NULL) {
		llcd_err_prefix(err, "%s", sc->name);
		goto out;
	}
	r->ops.w = r->w;
	if (policy == SIM_POLICY_LLCD || policy == SIM_POLICY_STATIC) {
		struct policy_host h;
		policy_host_defaults(&h, r->topo);
		h.reserved = sc->reserved;
		h.counters = sc->perf_counters;
		h.act_unjudged = sc->act_unjudged;
		h.overcommit = sc->overcommit;
		r->loop = agent_loop_new(&sim_agent_ops, &r->ops, &h, r->w->dt_ns, err);
		r->wall_ns = calloc((size_t)r->w->nperiods + 1, sizeof(uint64_t));
		if (r->loop == NULL || r->wall_ns == NULL) {
			rc = -2;
			goto out;
		}
	}
	if (r->snap_group >= 0) {
		int n = sc->domains[sc->groups[r->snap_group].domain].nvcpus;
		r->before.t = r->after.t = -1;
		r->before.nvcpus = r->after.nvcpus = n;
		r->before.llc = calloc((size_t)n, sizeof(int));
		r->after.llc = calloc((size_t)n, sizeof(int));
		if (r->before.llc == NULL || r->after.llc == NULL) {
			rc = -2;
			goto out;
		}
	}
	while (sim_world_step(r->w)) {
		double t = (double)(r->w->period - 1) * r->w->dt_s;
		if (r->snap_group >= 0 && r->w->grp[r->snap_group].nbusy > 0) {
			if (r->before.t < 0)
				snapshot(r, &r->before, t);
			snapshot(r, &r->after, t);
		}
		if (r->loop) {
			struct agent_step_stats st;
			if (agent_loop_step(r->loop, sim_world_now_ns(r->w), &st, err) < 0) {
				llcd_err_prefix(err, "%s: t=%.3fs", sc->name, t);
				rc = -2;
				goto out;
			}
			r->wall_ns[r->nwall++] = st.policy_wall_ns;
			/* which isolated domains the engine placed (refused ones are
			 * unmanaged, reported, and not isolated) */
			for (int d = 0; d < sc->ndomains; d++) {
				struct policy_domain_info info;
				r->w->dom[d].iso_managed = r->w->dom[d].isolated && r->w->dom[d].active &&
				    policy_domain_info(agent_loop_policy(r->loop), (uint64_t)d + 1, &info) == 0 &&
				    info.managed;
			}
		}
	}
	rc = 0;
out:
	free(annots);
	free(annotated);
	return rc;
}

void
sim_run_fini(struct sim_run *r)
{
	agent_loop_free(r->loop);
	sim_world_free(r->w);
	topo_free(r->topo);
	free(r->wall_ns);
	free(r->before.llc);
	free(r->after.llc);
	memset(r, 0, sizeof(*r));
}

double
sim_run_throughput(const struct sim_run *r, int g)
{
	const struct sim_group_state *S = &r->w->grp[g];
	return S->active_s > 0 ? S->progress / S->active_s : NAN;
}

double
sim_run_throughput_avg(const struct sim_run *r)
{
	double p = 0, a = 0;
	for (int g = 0; g < r->sc->ngroups; g++) {
		p += r->w->grp[g].progress;
		a += r->w->grp[g].active_s;
	}
	return a > 0 ? p / a : NAN;
}

static void
json_num(FILE *out, double v, int prec)
{
	if (isnan(v))
		fputs("null", out);
	else
		fprintf(out, "%.*f", prec, v);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t
pct(const uint64_t *v, long n, double p)
{
	long i;
	if (n == 0)
		return 0;
	i = (long)ceil(p / 100.0 * (double)n) - 1;
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

void
sim_run_json(const struct sim_run *r, FILE *out)
{
	const struct sim_world *w = r->w;
	uint64_t *sorted = NULL;

	fprintf(out, "{\n  \"scenario\": \"%s\",\n  \"policy\": \"%s\",\n  \"seed\": %llu,\n"
	    "  \"periods\": %ld,\n  \"period_ms\": %g,\n  \"throughput_avg\": ", r->sc->name,
	    sim_policy_name(r->policy), (unsigned long long)r->seed, w->period, r->sc->period_ms);
	json_num(out, sim_run_throughput_avg(r), 6);
	fputs(",\n  \"groups\": [", out);
	for (int g = 0; g < r->sc->ngroups; g++) {
		const struct sim_group *G = &r->sc->groups[g];
		const struct sim_group_state *S = &w->grp[g];
		bool settled = S->first_busy_s >= 0 && S->last_spread == 1;
		fprintf(out, "%s\n    { \"domain\": \"%s\", \"group\": \"%s\", \"throughput\": ",
		    g ? "," : "", r->sc->domains[G->domain].name, G->name);
		json_num(out, sim_run_throughput(r, g), 6);
		fputs(", \"llc_spread_avg\": ", out);
		json_num(out, S->spread_n ? S->spread_sum / (double)S->spread_n : NAN, 4);
		fprintf(out, ", \"llc_moves\": %llu, \"settle_s\": ", (unsigned long long)S->llc_moves);
		json_num(out, settled ? fmax(S->first_busy_s, S->unsettled_until) : NAN, 3);
		fputs(" }", out);
	}
	fputs(r->sc->ngroups ? "\n  ],\n  \"domains\": [" : "],\n  \"domains\": [", out);
	for (int d = 0; d < r->sc->ndomains; d++) {
		const struct sim_dom_state *D = &w->dom[d];
		fprintf(out, "%s\n    { \"name\": \"%s\", \"thread_llc_moves\": %llu, \"pref_llc_switches\": %llu,"
		    " \"vcpu_pins\": %llu, \"smt_shared_pu_s\": %.3f }", d ? "," : "", r->sc->domains[d].name,
		    (unsigned long long)D->thread_llc_moves, (unsigned long long)D->pref_switches,
		    (unsigned long long)D->vcpu_pins, D->smt_shared_pu_s);
	}
	fputs(r->sc->ndomains ? "\n  ],\n  \"invariant_violations\": [" : "],\n  \"invariant_violations\": [", out);
	for (int i = 0; i < w->nviol; i++)
		fprintf(out, "%s\n    \"%s\"", i ? "," : "", w->viol[i]);
	fprintf(out, "%s],\n  \"invariant_violations_total\": %ld,\n", w->nviol ? "\n  " : "",
	    w->nviol_total);
	if (r->nwall > 0 && (sorted = malloc(sizeof(uint64_t) * (size_t)r->nwall)) != NULL) {
		memcpy(sorted, r->wall_ns, sizeof(uint64_t) * (size_t)r->nwall);
		qsort(sorted, (size_t)r->nwall, sizeof(uint64_t), cmp_u64);
	}
	fprintf(out, "  \"policy_step_wall_ns\": { \"p50\": %llu, \"p99\": %llu, \"max\": %llu }\n}\n",
	    (unsigned long long)pct(sorted, sorted ? r->nwall : 0, 50),
	    (unsigned long long)pct(sorted, sorted ? r->nwall : 0, 99),
	    (unsigned long long)pct(sorted, sorted ? r->nwall : 0, 100));
	free(sorted);
}
