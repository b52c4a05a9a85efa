// SPDX-License-Identifier: GPL-2.0-or-later
/* simops.c - the simulated back-end: what the agent loop observes on an
 * llcsim host and how its actions land. Nothing of the world's ground truth
 * (sharing, bandwidth, barrier, group membership) passes through here,
 * except what the simulated guest helper would report (the busy threads of
 * each group, as a hot process with the vCPUs it ran on) and, on a host
 * with host.wakeup_trace, the wakeups between vCPU threads as the tracer
 * would count them (the world draws them; their cause stays hidden), and on
 * a host with host.mbm each domain's achieved memory bandwidth (bw_gbs
 * times the LLC's bandwidth factor: what resctrl counts, not the demand). */
#include "simops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int
count_reports(const struct sim_world *w, int d)
{
	int n = 0;

	if (!w->sc->domains[d].guest_helper)
		return 0;
	for (int g = 0; g < w->sc->ngroups; g++)
		if (w->sc->groups[g].domain == d && w->grp[g].nbusy > 0)
			n++;
	return n;
}

static int
sim_observe(void *arg, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	struct sim_ops_ctx *ctx = arg;
	struct sim_world *w = ctx->w;
	const double busy = w->sc->model.busy_util;

	(void)now_ns;
	for (int d = 0; d < w->sc->ndomains; d++) {
		const struct sim_domain *sd = &w->sc->domains[d];
		const struct sim_dom_state *D = &w->dom[d];
		int nrep = count_reports(w, d), i, r = 0;
		if (!D->active)
			continue;
		if ((i = agent_obs_add(obs, sd->nvcpus, nrep, err)) < 0)
			return -1;
		struct policy_domain_in *in = &obs->domains[i];
		if (in->key != D->key) {
			in->key = D->key;
			snprintf(in->name, sizeof(in->name), "%s", sd->name);
			in->guest = sd->guest;
		}
		/* the annotation may change while running (llcd-sim with
		 * llcctl policy): copy the fields and the groups in use */
		in->annotated = D->annotated;
		in->annot.mode = D->annot.mode;
		in->annot.isolation = D->annot.isolation;
		in->annot.topology = D->annot.topology;
		in->annot.infer = D->annot.infer;
		in->annot.tune = D->annot.tune;
		in->annot.ngroups = D->annot.ngroups;
		for (int g = 0; g < D->annot.ngroups; g++)
			in->annot.groups[g] = D->annot.groups[g];
		/* `static`: llcd's initial placement only, i.e. the engine's
		 * static mode for every domain it manages */
		if (w->policy == SIM_POLICY_STATIC && in->annotated && in->annot.mode != POLICY_MODE_NONE)
			in->annot.mode = POLICY_MODE_STATIC;
		/* achieved memory bandwidth of the domain, as its resctrl
		 * monitoring group would count it (host.mbm) */
		/* where its memory lives, as the live back-end's sampled
		 * guest-RAM pages would say (memory_node) */
		in->mem_node_valid = sd->memory_node >= 0;
		in->mem_node = sd->memory_node;
		in->mbm_valid = w->sc->mbm;
		double gb = 0;
		for (int v = 0; w->sc->mbm && v < sd->nvcpus; v++)
			gb += w->threads[D->base + v].bw_got;
		in->mbm_bytes = (uint64_t)llround(gb * 1e9 * w->dt_s);
		for (int v = 0; v < sd->nvcpus; v++) {
			const struct sim_thread *th = &w->threads[D->base + v];
			struct policy_vcpu_sample *s = &obs->vcpus[i][v];
			s->tid = 100000 + D->base + v;
			s->runtime_ns = th->runtime_ns;
			s->run_delay_ns = th->run_delay_ns;
			s->last_cpu = th->pu;
			s->instructions = w->sc->perf_counters ? th->instructions : 0;
			w->seen_pin[D->base + v] = th->pinned ? th->pin : w->usable;
			s->pinned = &w->seen_pin[D->base + v];
		}
		/* wakeup edges, as llcd's in-kernel tracer would count them
		 * (the same interface: agent_obs_wakeups()) */
		if (w->wake != NULL) {
			const struct sim_wake *K = &w->wake[d];
			if (agent_obs_wakeups(obs, i, w->dt_ns, err) < 0)
				return -1;
			memcpy(obs->edges[i], K->edges, sizeof(*K->edges) * (size_t)K->nedges);
			obs->wakeups[i].nedges = K->nedges;
			obs->wakeups[i].dropped = K->dropped;
		}
		/* the guest helper: groups with busy threads, as hot processes */
		for (int g = 0; nrep && g < w->sc->ngroups; g++) {
			const struct sim_group *G = &w->sc->groups[g];
			struct policy_hot_report *rep;
			int v;
			if (G->domain != d || w->grp[g].nbusy == 0)
				continue;
			rep = &obs->reports[i][r++];
			memset(rep, 0, sizeof(*rep));
			snprintf(rep->name, sizeof(rep->name), "%s", G->name);
			rep->pid = 1000 + g;
			CPUSET_FOREACH(v, &G->vcpus) {
				const struct sim_thread *th = &w->threads[D->base + v];
				if (th->group == g && th->demand >= busy)
					cpuset_set(&rep->vcpus, v);
			}
		}
	}
	for (int pu = 0; pu < obs->ncpus && pu < w->npu; pu++)
		obs->cpu_busy_ns[pu] = w->pu_busy_ns[pu];
	return 0;
}


static void
trace_action(struct sim_world *w, const struct policy_action *a, int d)
{
	char buf[256];

	if (w->trace == NULL)
		return;
	cpuset_format(&a->cpus, buf, sizeof(buf));
	fprintf(w->trace, "{\"t\":%.3f,\"domain\":\"%s\",\"action\":\"%s\",\"vcpu\":%d,\"llc\":%d,"
	    "\"cpus\":\"%s\",\"reason\":\"", (double)w->period * w->dt_s, w->sc->domains[d].name,
	    policy_action_name(a->type), a->vcpu, a->llc, buf);
	for (const char *p = a->reason; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(w->trace, "\\%c", *p);
		else if ((unsigned char)*p >= 0x20)
			fputc(*p, w->trace);
	fputs("\"}\n", w->trace);
}

static enum agent_result
sim_apply(void *arg, const struct policy_action *a, struct llcd_err *err)
{
	struct sim_ops_ctx *ctx = arg;
	struct sim_world *w = ctx->w;
	int d = (int)a->key - 1;
	if (a->key == 0 || d >= w->sc->ndomains || !w->dom[d].active) {
		llcd_err_set(err, "no running domain with key %llu", (unsigned long long)a->key);
		return AGENT_GONE;
	}
	trace_action(w, a, d);
	switch (a->type) {
	case POLICY_ACT_PIN_VCPU: {
		if (a->vcpu < 0 || a->vcpu >= w->sc->domains[d].nvcpus) {
			llcd_err_set(err, "domain '%s' has no vCPU %d", w->sc->domains[d].name, a->vcpu);
			return AGENT_PERMANENT;
		}
		/* `static` runs the engine in static mode (see observe), which
		 * only re-pins where correctness needs it (isolation, refusal) */
		if (sim_world_pin(w, d, a->vcpu, &a->cpus, err) < 0)
			return AGENT_PERMANENT;
		w->dom[d].vcpu_pins++;
		break;
	}
	case POLICY_ACT_PIN_EMULATOR:
		if (sim_world_pin_emulator(w, d, &a->cpus, err) < 0)
			return AGENT_PERMANENT;
		break;
	case POLICY_ACT_RELEASE:
		sim_world_unpin(w, d);
		break;
	case POLICY_ACT_PREFER:
		if (a->llc >= 0)
			w->dom[d].pref_switches++;
		break;
	case POLICY_ACT_REFUSE:
	case POLICY_ACT_BACKOFF:
		break;
	}
	ctx->applied++;
	return AGENT_OK;
}

static void
sim_report(void *arg, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct sim_ops_ctx *ctx = arg;
	struct sim_world *w = ctx->w;

	ctx->failed++;
	if (w->trace == NULL)
		return;
	fprintf(w->trace, "{\"t\":%.3f,\"key\":%llu,\"action\":\"%s\",\"vcpu\":%d,\"result\":\"%s\",\"error\":\"",
	    (double)w->period * w->dt_s, (unsigned long long)a->key, policy_action_name(a->type),
	    a->vcpu, agent_result_name(r));
	for (const char *p = msg ? msg : ""; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(w->trace, "\\%c", *p);
		else if ((unsigned char)*p >= 0x20)
			fputc(*p, w->trace);
	fputs("\"}\n", w->trace);
}

const struct agent_ops sim_agent_ops = {
	.name = "llcsim",
	.observe = sim_observe,
	.apply = sim_apply,
	.report = sim_report,
};
