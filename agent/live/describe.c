// SPDX-License-Identifier: GPL-2.0-or-later
/* describe.c - what the live back-end knows of a domain and of the host,
 * for llcctl dominfo and topology. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "guestchan.h"
#include "guesttopo.h"
#include "jsonget.h"
#include "qmp.h"

int
live_describe(struct live *l, uint64_t key, struct agent_dominfo *out)
{
	struct ldom *d = ldom_by_key(l, key);
	struct qmp_cpus *qc;
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
		reason = "invalid llc-policy annotation: left unmanaged";
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
	out->nvcpus = d->nvcpus;
	out->maxvcpus = d->maxvcpus;
	snprintf(out->annotation_error, sizeof(out->annotation_error), "%s", d->annot_err);
	out->annotated = ldom_annotated(d);
	if (out->annotated)
		out->annot = d->annot;
	out->have_guest_topo = true;
	out->guest = d->guest;
	if (ldom_annotated(d) && d->annot.isolation == POLICY_ISO_CORE)
		snprintf(out->core_scheduling, sizeof(out->core_scheduling), "%s",
		    d->cs_state == LDOM_CS_COOKIE && d->cs_tid ? "cookie assigned" : coresched_reason(l->cs));
	out->emulator_pin = d->emu_applied;
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
	if (qc != NULL)
		out->qmp[0] = '\0';
	if (d->nvcpus > 0 && (out->vcpus = calloc((size_t)d->nvcpus, sizeof(*out->vcpus))) == NULL) {
		qmp_cpus_free(qc);
		return 0;               /* the vCPUs left out: out of memory */
	}
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
	qmp_cpus_free(qc);
	return 0;
}

int
live_describe_host(struct live *l, struct json_object *out)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uri", json_object_new_string(l->virt ? (l->cfg.uri ? l->cfg.uri : VIRT_DEFAULT_URI) :
	    LIVE_URI_NONE));
	json_object_object_add(o, "connected", json_object_new_boolean(l->virt && virt_connected(l->virt)));
	json_object_object_add(o, "reconnects", json_object_new_int(l->virt ? (int)virt_reconnects(l->virt) : 0));
	json_object_object_add(o, "domains", json_object_new_int(l->ndoms));
	json_object_object_add(o, "state_file", json_object_new_string(l->state_enabled ? l->state_path : ""));
	json_object_object_add(o, "dry_run", json_object_new_boolean(l->cfg.dry_run));
	json_object_object_add(out, "libvirt", o);
	json_object_object_add(out, "core_scheduling", json_object_new_string(
	    coresched_probe(l->cs) == CORESCHED_AVAIL_YES ? "available" : coresched_reason(l->cs)));
	o = json_object_new_object();
	json_object_object_add(o, "state", json_object_new_string(live_kcas_name(l->kcas)));
	json_object_object_add(o, "detail", json_object_new_string(l->kcas_detail));
	json_object_object_add(out, "kernel_cache_aware_scheduling", o);
	json_object_object_add(out, "sampler", json_object_new_string(l->tracer ? "bpf" : "proc"));
	if (l->tracer == NULL) {
		json_object_object_add(out, "sampler_reason", json_object_new_string(l->sampler_reason));
	} else {
		struct tracer_stats ts;
		tracer_stats(l->tracer, &ts);
		o = json_object_new_object();
		json_object_object_add(o, "threads", json_object_new_int(ts.threads));
		json_object_object_add(o, "domains", json_object_new_int(ts.domains));
		json_object_object_add(o, "threads_refused", json_object_new_int64((int64_t)ts.threads_refused));
		json_object_object_add(o, "domains_refused", json_object_new_int64((int64_t)ts.domains_refused));
		json_object_object_add(o, "edges_dropped", json_object_new_int64((int64_t)ts.edges_dropped));
		json_object_object_add(o, "irq_check", json_object_new_boolean(tracer_irq_check(l->tracer)));
		json_object_object_add(out, "tracer", o);
	}
	return 0;
}
