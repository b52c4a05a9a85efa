// SPDX-License-Identifier: GPL-2.0-or-later
/* describe.c - what the live back-end knows of a domain and of the host,
 * for llcctl dominfo and topology. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestchan.h"
#include "guesttopo.h"
#include "qmp.h"
#include "tracer.h"

/* The guest helper's channel (group guest_channel): its state and
 * counters, or why the one in the domain XML was refused. */
static void
describe_channel(const struct ldom *d, struct agent_facts *f)
{
	struct guestchan_stats gs;

	if (d->gc == NULL) {
		if (d->gc_refused != NULL) {
			agent_facts_str(f, "guest_channel", "state", "refused");
			agent_facts_int(f, "guest_channel", "reports", 0);
			agent_facts_int(f, "guest_channel", "bad_lines", 0);
			agent_facts_int(f, "guest_channel", "throttles", 0);
			agent_facts_int(f, "guest_channel", "backoffs", 0);
			agent_facts_int(f, "guest_channel", "guest_dropped", 0);
			agent_facts_str(f, "guest_channel", "last_error", "%.255s", d->gc_refused);
		}
		return;
	}
	guestchan_stats(d->gc, &gs);
	agent_facts_str(f, "guest_channel", "state", "%s", guestchan_state_name(gs.state));
	agent_facts_int(f, "guest_channel", "reports", (int64_t)gs.reports);
	agent_facts_int(f, "guest_channel", "bad_lines", (int64_t)gs.bad);
	agent_facts_int(f, "guest_channel", "throttles", (int64_t)gs.throttles);
	agent_facts_int(f, "guest_channel", "backoffs", (int64_t)gs.backoffs);
	agent_facts_int(f, "guest_channel", "guest_dropped", (int64_t)gs.guest_dropped);
	if (gs.last_error[0])
		agent_facts_str(f, "guest_channel", "last_error", "%.255s", gs.last_error);
}

int
live_describe(struct live *l, uint64_t key, struct agent_dominfo *out)
{
	struct ldom *d = ldom_by_key(l, key);
	const struct qmp_cpus *qc;
	enum agent_dom_state state;
	const char *reason;

	if (d == NULL)
		return -1;
	agent_dominfo_init(out);
	if (d->failed) {
		state = AGENT_DOM_ERROR;
		reason = ldom_str(d->error_msg);
		out->backend_error = true;
	} else if (d->state == LDOM_INVALID) {
		state = AGENT_DOM_ERROR;
		reason = d->rule ? "the policy-rule's policy does not fit the domain: left unmanaged" :
		    "invalid llc-policy annotation: left unmanaged";
		out->backend_error = true;
	} else if (!ldom_annotated(d)) {
		state = AGENT_DOM_UNMANAGED;
		reason = "no llc-policy annotation";
	} else if (d->annot->mode == POLICY_MODE_NONE) {
		state = AGENT_DOM_UNMANAGED;
		reason = "mode none";
	} else if (d->state == LDOM_REFUSED) {
		state = AGENT_DOM_ERROR;        /* as the daemon says it */
		reason = ldom_str(d->refuse_msg);
	} else if (d->threads_missing) {
		state = AGENT_DOM_MANAGED;
		reason = "some vCPU threads not found yet";
	} else {
		state = AGENT_DOM_MANAGED;
		reason = "";
	}
	out->state = state;
	snprintf(out->reason, sizeof(out->reason), "%s", reason);
	snprintf(out->key, sizeof(out->key), "%016llx", (unsigned long long)d->key);
	snprintf(out->name, sizeof(out->name), "%.*s", (int)sizeof(out->name) - 1, d->name);
	out->pid = d->pid;
	out->nvcpus = d->nvcpus;
	out->maxvcpus = d->maxvcpus;
	snprintf(out->annotation_error, sizeof(out->annotation_error), "%s", ldom_str(d->annot_err));
	out->annotated = ldom_annotated(d);
	if (out->annotated)
		policy_annotation_copy(&out->annot, d->annot);
	if (d->rule > 0) {
		out->rule = d->rule;
		snprintf(out->rule_where, sizeof(out->rule_where), "%s", ldom_str(d->rule_where));
		snprintf(out->rule_match, sizeof(out->rule_match), "%s", ldom_str(d->rule_match));
	}
	out->have_guest_topo = true;
	out->guest = d->guest;

	struct agent_facts *f = &out->facts;
	if (d->uuid[0])
		agent_facts_str(f, NULL, "uuid", "%s", d->uuid);
	if (ldom_annotated(d) && d->annot->isolation == POLICY_ISO_CORE)
		agent_facts_str(f, NULL, "core_scheduling", "%s",
		    d->cs_state == LDOM_CS_COOKIE && d->cs_tid ? "cookie assigned" : coresched_reason(l->cs));
	if (!cpuset_empty(&d->emu_applied))
		agent_facts_cpus(f, NULL, "emulator_pin", &d->emu_applied);
	describe_channel(d, f);
	if (d->mem.known || d->mem.error[0]) {
		if (d->mem.error[0]) {
			agent_facts_str(f, "memory", "error", "%s", d->mem.error);
		} else {
			if (d->mem.node >= 0)
				agent_facts_int(f, "memory", "node", d->mem.node);
			else
				agent_facts_null(f, "memory", "node");
			agent_facts_int(f, "memory", "resident_pages", d->mem.resident);
			agent_facts_int(f, "memory", "sampled_pages", d->mem.sampled);
		}
	}
	if (d->conn != NULL && (l->nconns > 1 || d->conn->sock[0]))
		agent_facts_str(f, NULL, "connection", "%s", d->conn->uri);
	live_bound_describe(l, d, f);
	char why[LLCD_ERR_MSG] = "";
	qc = live_qmp_cpus(l, d, why, sizeof(why));
	if (qc == NULL && why[0] && !(d->ext && l->have_src && l->src.describe))
		agent_facts_str(f, NULL, "qmp", "%s", why);
	if (qc != NULL || d->qmp.queries)
		agent_facts_int(f, NULL, "qmp_queries", (int64_t)d->qmp.queries);
	if (d->nvcpus > 0 && (out->vcpus = calloc((size_t)d->nvcpus, sizeof(*out->vcpus))) == NULL) {
		f->nomem = true;        /* the vCPUs left out: out of memory */
		return 0;
	}
	out->nvcpu_info = d->nvcpus;
	for (int v = 0; v < d->nvcpus; v++) {
		struct agent_vcpu_info *o = &out->vcpus[v];
		const struct lvcpu *c = &d->v[v];
		struct guesttopo_pos p;
		guesttopo_position(&d->guest, v, &p);
		o->tid = c->tid;
		o->last_cpu = c->last_cpu;
		o->affinity = *c->affinity;
		o->pinned_by_llcd = *c->applied;
		o->socket = p.socket;
		o->die = p.die;
		o->cluster = p.cluster;
		o->core = p.core;
		o->thread = p.thread;
		if (qc != NULL) {
			char check[128];
			live_qmp_check(qc, v, c->tid, &p, check, sizeof(check));
			agent_facts_str(&o->facts, NULL, "qmp", "%s", check);
		}
	}
	if (d->ext && l->have_src && l->src.describe)
		l->src.describe(l->src.ctx, key, out);
	return 0;
}

int
live_describe_host(struct live *l, struct agent_hostinfo *out)
{
	struct agent_facts *f = &out->facts;

	agent_facts_str(f, "libvirt", "uri", "%s", l->virt ? (l->cfg.uri ? l->cfg.uri : VIRT_DEFAULT_URI) : LIVE_URI_NONE);
	agent_facts_bool(f, "libvirt", "connected", l->virt && virt_connected(l->virt));
	agent_facts_int(f, "libvirt", "reconnects", l->virt ? virt_reconnects(l->virt) : 0);
	agent_facts_int(f, "libvirt", "domains", l->ndoms);
	agent_facts_str(f, "libvirt", "state_file", "%s", l->state_enabled ? l->state_path : "");
	agent_facts_bool(f, "libvirt", "dry_run", l->cfg.dry_run);
	if (l->cfg.socket_glob && l->cfg.socket_glob[0]) {
		int daemons = 0, up = 0;
		for (int i = 0; i < l->nconns; i++) {
			if (!l->conns[i]->sock[0])
				continue;
			daemons++;
			up += virt_connected(l->conns[i]->virt);
		}
		agent_facts_str(f, "libvirt", "socket_glob", "%s", l->cfg.socket_glob);
		agent_facts_int(f, "libvirt", "daemons", daemons);
		agent_facts_int(f, "libvirt", "daemons_connected", up);
	}
	if (l->have_src && l->src.describe_host)
		l->src.describe_host(l->src.ctx, out);
	agent_facts_bool(f, "core_scheduling", "available", coresched_probe(l->cs) == CORESCHED_AVAIL_YES);
	agent_facts_str(f, "core_scheduling", "reason", "%s", coresched_reason(l->cs));
	agent_facts_str(f, "kernel_cache_aware_scheduling", "state", "%s", l->kcas_state);
	agent_facts_str(f, "kernel_cache_aware_scheduling", "detail", "%s", l->kcas_detail);
	agent_facts_str(f, NULL, "sampler", "%s", l->tracer ? "bpf" : "proc");
	if (l->tracer == NULL) {
		if (l->sampler_reason[0])
			agent_facts_str(f, NULL, "sampler_reason", "%s", l->sampler_reason);
	} else {
		struct tracer_stats ts;
		tracer_stats(l->tracer, &ts);
		agent_facts_int(f, "tracer", "threads", ts.threads);
		agent_facts_int(f, "tracer", "domains", ts.domains);
		agent_facts_int(f, "tracer", "threads_refused", (int64_t)ts.threads_refused);
		agent_facts_int(f, "tracer", "domains_refused", (int64_t)ts.domains_refused);
		agent_facts_int(f, "tracer", "edges_dropped", (int64_t)ts.edges_dropped);
		agent_facts_bool(f, "tracer", "irq_check", tracer_irq_check(l->tracer));
	}
	out->have_judges = true;
	snprintf(out->judges.counters_reason, sizeof(out->judges.counters_reason), "%s", l->counters_reason);
	out->judges.mbm = l->rc != NULL;
	snprintf(out->judges.mbm_reason, sizeof(out->judges.mbm_reason), "%s", l->mbm_reason);
	snprintf(out->judges.run_delay, sizeof(out->judges.run_delay), "%s", l->tracer ?
	    "the in-kernel tracer (sched_info.run_delay)" : "/proc/PID/task/TID/schedstat");
	return 0;
}
