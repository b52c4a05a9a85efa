// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpcheck.c - the QMP cross-check of vCPU positions: query-cpus-fast
 * through libvirt's monitor passthrough (allow_qmp_passthrough only),
 * asked once per vCPU set of a domain (its count and thread IDs) and kept:
 * `llcctl list`/`dominfo` by any client are served from that, never by a
 * synchronous monitor call in the loop. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "guesttopo.h"
#include "qmp.h"

/* The vCPU set the answer is about: the count and each thread ID. */
static uint64_t
vcpu_sig(const struct ldom *d)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)d->nvcpus;

	for (int v = 0; v < d->nvcpus; v++) {
		h ^= (uint64_t)(uint32_t)d->v[v].tid;
		h *= 1099511628211ull;
	}
	return h;
}

const struct qmp_cpus *
live_qmp_cpus(struct live *l, struct ldom *d, char *why, size_t len)
{
	struct json_object *reply, *ret;
	struct llcd_err e;
	char *txt = NULL;
	uint64_t sig;

	if (!l->cfg.allow_qmp_passthrough || ldom_virt(d) == NULL) {
		snprintf(why, len, "QMP cross-check off (allow_qmp_passthrough is not set)");
		return NULL;
	}
	sig = vcpu_sig(d);
	if (d->qmp.asked && d->qmp.sig == sig) {
		snprintf(why, len, "%s", ldom_str(d->qmp.why));        /* this vCPU set was asked about */
		return d->qmp.cpus;
	}
	qmp_cpus_free(d->qmp.cpus);
	d->qmp.cpus = NULL;
	ldom_str_clear(&d->qmp.why);
	d->qmp.asked = true;
	d->qmp.sig = sig;
	d->qmp.queries++;
	if (virt_qemu_monitor(ldom_virt(d), d->uuid, "{\"execute\":\"query-cpus-fast\"}", &txt, &e) != VIRT_OK) {
		ldom_str_set(&d->qmp.why, LLCD_ERR_MSG, "%s", e.msg);
	} else {
		reply = json_tokener_parse(txt);
		free(txt);
		if (reply == NULL || !json_object_object_get_ex(reply, "return", &ret)) {
			ldom_str_set(&d->qmp.why, LLCD_ERR_MSG, "query-cpus-fast: no \"return\" in the reply");
		} else if (qmp_cpus_parse(ret, &d->qmp.cpus, &e) < 0) {
			ldom_str_set(&d->qmp.why, LLCD_ERR_MSG, "query-cpus-fast: %.400s", e.msg);
			d->qmp.cpus = NULL;
		}
		json_object_put(reply);
	}
	snprintf(why, len, "%s", ldom_str(d->qmp.why));
	return d->qmp.cpus;
}

void
live_qmp_check(const struct qmp_cpus *qc, int vcpu, int tid, const struct guesttopo_pos *p,
    char *why, size_t len)
{
	const struct qmp_cpu *q = NULL;

	for (size_t k = 0; k < qc->n; k++)
		if (qc->cpu[k].cpu_index == vcpu)
			q = &qc->cpu[k];
	if (q == NULL)
		snprintf(why, len, "not in query-cpus-fast");
	else if (q->tid != tid)
		snprintf(why, len, "QMP thread-id %d, /proc says %d", (int)q->tid, tid);
	else if ((q->props.socket_id >= 0 && q->props.socket_id != p->socket) ||
	         (q->props.die_id >= 0 && q->props.die_id != p->die) ||
	         (q->props.core_id >= 0 && q->props.core_id != p->core) ||
	         (q->props.thread_id >= 0 && q->props.thread_id != p->thread))
		snprintf(why, len, "QMP says socket %d die %d core %d thread %d",
		    q->props.socket_id, q->props.die_id, q->props.core_id, q->props.thread_id);
	else
		snprintf(why, len, "match");
}
