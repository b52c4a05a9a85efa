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
		reason = d->error_msg;
		out->backend_error = true;
	} else if (d->state == LDOM_INVALID) {
		state = AGENT_DOM_ERROR;
		reason = d->rule ? "the policy-rule's policy does not fit the domain: left unmanaged" :
		    "invalid llc-policy annotation: left unmanaged";
		out->backend_error = true;
	} else if (!ldom_annotated(d)) {
		state = AGENT_DOM_UNMANAGED;
		reason = "no llc-policy annotation";
	} else if (d->annot.mode == POLICY_MODE_NONE) {
		state = AGENT_DOM_UNMANAGED;
		reason = "mode none";
	} else if (d->state == LDOM_REFUSED) {
		state = AGENT_DOM_ERROR;        /* as the daemon says it */
		reason = d->refuse_msg;
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
	snprintf(out->uuid, sizeof(out->uuid), "%s", d->uuid);
	snprintf(out->name, sizeof(out->name), "%.*s", (int)sizeof(out->name) - 1, d->name);
	out->pid = d->pid;
	out->have_memory = d->mem_known || d->mem_error[0];
	out->mem_node = d->mem_known ? d->mem_node : -1;
	out->mem_resident = d->mem_resident;
	out->mem_sampled = d->mem_sampled;
	snprintf(out->mem_error, sizeof(out->mem_error), "%s", d->mem_error);
	live_bound_describe(l, d, out);
	if (d->conn != NULL && (l->nconns > 1 || d->conn->sock[0]))
		snprintf(out->connection, sizeof(out->connection), "%.*s", (int)sizeof(out->connection) - 1, d->conn->uri);
	out->nvcpus = d->nvcpus;
	out->maxvcpus = d->maxvcpus;
	snprintf(out->annotation_error, sizeof(out->annotation_error), "%s", d->annot_err);
	out->annotated = ldom_annotated(d);
	if (out->annotated)
		out->annot = d->annot;
	if (d->rule > 0) {
		out->rule = d->rule;
		snprintf(out->rule_where, sizeof(out->rule_where), "%s", d->rule_where);
		snprintf(out->rule_match, sizeof(out->rule_match), "%s", d->rule_match);
	}
	out->have_guest_topo = true;
	out->guest = d->guest;
	if (ldom_annotated(d) && d->annot.isolation == POLICY_ISO_CORE)
		snprintf(out->core_scheduling, sizeof(out->core_scheduling), "%s",
		    d->cs_state == LDOM_CS_COOKIE && d->cs_tid ? "cookie assigned" : coresched_reason(l->cs));
	out->emulator_pin = d->emu_applied;
	if (d->gc == NULL && d->gc_refused[0]) {
		out->have_guest_channel = true;
		out->guest_channel.state = "refused";
		snprintf(out->guest_channel.last_error, sizeof(out->guest_channel.last_error), "%.*s", (int)sizeof(out->guest_channel.last_error) - 1, d->gc_refused);
	}
	if (d->gc) {
		struct guestchan_stats gs;
		guestchan_stats(d->gc, &gs);
		out->have_guest_channel = true;
		out->guest_channel.state = guestchan_state_name(gs.state);
		out->guest_channel.reports = gs.reports;
		out->guest_channel.bad_lines = gs.bad;
		out->guest_channel.throttles = gs.throttles;
		out->guest_channel.backoffs = gs.backoffs;
		out->guest_channel.guest_dropped = gs.guest_dropped;
		snprintf(out->guest_channel.last_error, sizeof(out->guest_channel.last_error), "%s", gs.last_error);
	}
	qc = live_qmp_cpus(l, d, out->qmp, sizeof(out->qmp));
	out->have_qmp = qc != NULL;
	out->qmp_queries = d->qmp_queries;
	if (qc != NULL)
		out->qmp[0] = '\0';
	if (d->nvcpus > 0 && (out->vcpus = calloc((size_t)d->nvcpus, sizeof(*out->vcpus))) == NULL)
		return 0;               /* the vCPUs left out: out of memory */
	out->nvcpu_info = d->nvcpus;
	for (int v = 0; v < d->nvcpus; v++) {
		struct agent_vcpu_info *o = &out->vcpus[v];
		const struct lvcpu *c = &d->v[v];
		struct guesttopo_pos p;
		guesttopo_position(&d->guest, v, &p);
		o->tid = c->tid;
		o->last_cpu = c->last_cpu;
		o->affinity = c->affinity;
		o->pinned_by_llcd = c->applied;
		o->socket = p.socket;
		o->die = p.die;
		o->cluster = p.cluster;
		o->core = p.core;
		o->thread = p.thread;
		if (qc != NULL)
			live_qmp_check(qc, v, c->tid, &p, o->qmp, sizeof(o->qmp));
	}
	return 0;
}

int
live_describe_host(struct live *l, struct agent_hostinfo *out)
{
	out->have_libvirt = true;
	snprintf(out->libvirt.uri, sizeof(out->libvirt.uri), "%s",
	    l->virt ? (l->cfg.uri ? l->cfg.uri : VIRT_DEFAULT_URI) : LIVE_URI_NONE);
	out->libvirt.connected = l->virt && virt_connected(l->virt);
	out->libvirt.reconnects = l->virt ? virt_reconnects(l->virt) : 0;
	out->libvirt.domains = l->ndoms;
	snprintf(out->libvirt.state_file, sizeof(out->libvirt.state_file), "%s", l->state_enabled ? l->state_path : "");
	out->libvirt.dry_run = l->cfg.dry_run;
	if (l->cfg.socket_glob && l->cfg.socket_glob[0]) {
		snprintf(out->libvirt.socket_glob, sizeof(out->libvirt.socket_glob), "%s", l->cfg.socket_glob);
		for (int i = 0; i < l->nconns; i++) {
			if (!l->conns[i]->sock[0])
				continue;
			out->libvirt.daemons++;
			out->libvirt.daemons_up += virt_connected(l->conns[i]->virt);
		}
	}
	out->core_scheduling = coresched_probe(l->cs) == CORESCHED_AVAIL_YES;
	snprintf(out->core_scheduling_reason, sizeof(out->core_scheduling_reason), "%s", coresched_reason(l->cs));
	snprintf(out->kernel_cas, sizeof(out->kernel_cas), "%s", live_kcas_name(l->kcas));
	snprintf(out->kernel_cas_detail, sizeof(out->kernel_cas_detail), "%s", l->kcas_detail);
	out->have_judges = true;
	snprintf(out->judges.counters_reason, sizeof(out->judges.counters_reason), "%s", l->counters_reason);
	out->judges.mbm = l->rc != NULL;
	snprintf(out->judges.mbm_reason, sizeof(out->judges.mbm_reason), "%s", l->mbm_reason);
	snprintf(out->judges.run_delay, sizeof(out->judges.run_delay), "%s", l->tracer ?
	    "the in-kernel tracer (sched_info.run_delay)" : "/proc/PID/task/TID/schedstat");
	snprintf(out->sampler, sizeof(out->sampler), "%s", l->tracer ? "bpf" : "proc");
	if (l->tracer == NULL) {
		snprintf(out->sampler_reason, sizeof(out->sampler_reason), "%s", l->sampler_reason);
	} else {
		struct tracer_stats ts;
		tracer_stats(l->tracer, &ts);
		out->have_tracer = true;
		out->tracer.threads = ts.threads;
		out->tracer.domains = ts.domains;
		out->tracer.threads_refused = ts.threads_refused;
		out->tracer.domains_refused = ts.domains_refused;
		out->tracer.edges_dropped = ts.edges_dropped;
		out->tracer.irq_check = tracer_irq_check(l->tracer);
	}
	return 0;
}
