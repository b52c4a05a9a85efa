// SPDX-License-Identifier: GPL-2.0-or-later
/* describe.c - what the live back-end knows of a domain and of the host,
 * for llcctl dominfo and topology. */
#include "live_int.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "annotation_xml.h"
#include "guestchan.h"
#include "guesttopo.h"
#include "jsonget.h"
#include "qmp.h"

int
live_describe(struct live *l, uint64_t key, struct json_object *out)
{
	struct ldom *d = ldom_by_key(l, key);
	struct json_object *arr;
	struct qmp_cpus *qc;
	char buf[ANNOT_XML_MAX], why[LLCD_ERR_MSG] = "";
	const char *state, *reason;
	struct llcd_err e;

	if (d == NULL)
		return -1;
	if (d->failed) {
		state = "error";
		reason = d->error_msg;
	} else if (d->state == LDOM_INVALID) {
		state = "error";
		reason = "invalid llc-policy annotation: left unmanaged";
	} else if (!ldom_annotated(d)) {
		state = "unmanaged";
		reason = "no llc-policy annotation";
	} else if (d->annot.mode == POLICY_MODE_NONE) {
		state = "unmanaged";
		reason = "mode none";
	} else if (d->state == LDOM_REFUSED) {
		state = "unmanaged";
		reason = d->refuse_msg;
	} else if (d->threads_missing) {
		state = "managed";
		reason = "some vCPU threads not found yet";
	} else {
		state = "managed";
		reason = "";
	}
	snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)d->key);
	json_object_object_add(out, "key", json_object_new_string(buf));
	json_object_object_add(out, "uuid", json_object_new_string(d->uuid));
	json_object_object_add(out, "name", json_object_new_string(d->name));
	json_object_object_add(out, "pid", json_object_new_int(d->pid));
	json_object_object_add(out, "state", json_object_new_string(state));
	json_object_object_add(out, "reason", json_object_new_string(reason));
	json_object_object_add(out, "vcpus", json_object_new_int(d->nvcpus));
	json_object_object_add(out, "max_vcpus", json_object_new_int(d->maxvcpus));
	if (d->annot_err[0])
		json_object_object_add(out, "annotation_error", json_object_new_string(d->annot_err));
	if (ldom_annotated(d) && annot_format(&d->annot, buf, sizeof(buf), &e) == 0)
		json_object_object_add(out, "annotation", json_object_new_string(buf));
	snprintf(buf, sizeof(buf), "sockets=%d dies=%d clusters=%d cores=%d threads=%d", d->guest.sockets,
	    d->guest.dies, d->guest.clusters, d->guest.cores, d->guest.threads);
	json_object_object_add(out, "guest_topology", json_object_new_string(buf));
	if (ldom_annotated(d) && d->annot.isolation == POLICY_ISO_CORE)
		json_object_object_add(out, "core_scheduling", json_object_new_string(
		    d->cs_state == LDOM_CS_COOKIE && d->cs_tid ? "cookie assigned" : coresched_reason(l->cs)));
	if (!cpuset_empty(&d->emu_applied))
		json_object_object_add(out, "emulator_pin", cpuset_json(&d->emu_applied));
	if (d->gc) {
		struct guestchan_stats gs;
		struct json_object *g = json_object_new_object();
		guestchan_stats(d->gc, &gs);
		json_object_object_add(g, "state", json_object_new_string(guestchan_state_name(gs.state)));
		json_object_object_add(g, "reports", json_object_new_int64((int64_t)gs.reports));
		json_object_object_add(g, "bad_lines", json_object_new_int64((int64_t)gs.bad));
		json_object_object_add(g, "throttles", json_object_new_int64((int64_t)gs.throttles));
		json_object_object_add(g, "backoffs", json_object_new_int64((int64_t)gs.backoffs));
		json_object_object_add(g, "guest_dropped", json_object_new_int64((int64_t)gs.guest_dropped));
		if (gs.last_error[0])
			json_object_object_add(g, "last_error", json_object_new_string(gs.last_error));
		json_object_object_add(out, "guest_channel", g);
	}
	qc = live_qmp_cpus(l, d, why, sizeof(why));
	if (qc == NULL)
		json_object_object_add(out, "qmp", json_object_new_string(why));
	arr = json_object_new_array();
	for (int v = 0; v < d->nvcpus; v++) {
		struct json_object *o = json_object_new_object();
		struct guesttopo_pos p;
		const struct lvcpu *c = &d->v[v];
		guesttopo_position(&d->guest, v, &p);
		json_object_object_add(o, "vcpu", json_object_new_int(v));
		json_object_object_add(o, "tid", json_object_new_int(c->tid));
		json_object_object_add(o, "last_cpu", json_object_new_int(c->last_cpu));
		json_object_object_add(o, "affinity", cpuset_json(&c->affinity));
		if (!cpuset_empty(&c->applied))
			json_object_object_add(o, "pinned_by_llcd", cpuset_json(&c->applied));
		json_object_object_add(o, "socket", json_object_new_int(p.socket));
		json_object_object_add(o, "die", json_object_new_int(p.die));
		json_object_object_add(o, "cluster", json_object_new_int(p.cluster));
		json_object_object_add(o, "core", json_object_new_int(p.core));
		json_object_object_add(o, "thread", json_object_new_int(p.thread));
		if (qc != NULL) {
			live_qmp_check(qc, v, c->tid, &p, why, sizeof(why));
			json_object_object_add(o, "qmp", json_object_new_string(why));
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(out, "vcpu_threads", arr);
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
	return 0;
}
