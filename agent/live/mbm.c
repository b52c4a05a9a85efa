// SPDX-License-Identifier: GPL-2.0-or-later
/* mbm.c - memory bandwidth per managed domain from resctrl monitoring
 * (agent/drivers/resctrl.h): one monitoring group per domain, named after it,
 * holding its vCPU threads; each period the growth of its mbm_total_bytes
 * goes to the engine as the domain's achieved bandwidth
 * (policy_domain_in.mbm_bytes). Hosts without resctrl L3 monitoring say so
 * once at start (live_mbm_open) and send nothing. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "resctrl.h"

/* Bandwidth monitoring (mbm.c): the domain's resctrl group. */
struct ldom_mbm {
	char group[RESCTRL_NAME_MAX];
	bool made, failed;              /* group made / could not be made */
	struct resctrl *rc;             /* the back-end's, for the rmdir */
	uint64_t sig;                   /* vCPU TIDs last written to tasks */
	uint64_t prev;                  /* mbm_total_bytes at the last read */
	int prev_nread;                 /* ... and L3 domains that read a number */
	bool have_prev;
};

void
live_mbm_open(struct live *l)
{
	const char *root = l->cfg.resctrl_root ? l->cfg.resctrl_root : RESCTRL_ROOT;
	struct llcd_err e;

	if (root[0] == '\0') {
		snprintf(l->mbm_reason, sizeof(l->mbm_reason), "bandwidth monitoring off");
		return;
	}
	if ((l->rc = resctrl_open(root, &e)) == NULL) {
		snprintf(l->mbm_reason, sizeof(l->mbm_reason), "%s: the home check goes without achieved "
		    "bandwidth", e.msg);
		log_info("%s", l->mbm_reason);
		return;
	}
	snprintf(l->mbm_reason, sizeof(l->mbm_reason), "memory bandwidth from resctrl monitoring at %s%s", root,
	    resctrl_has_occupancy(l->rc) ? " (and LLC occupancy)" : "");
	log_info("%s", l->mbm_reason);
}

void
live_mbm_close(struct live *l)
{
	resctrl_free(l->rc);
	l->rc = NULL;
}

/* A signature of the vCPU thread set: re-written to tasks when it changes. */
static uint64_t
tid_sig(const struct ldom *d)
{
	uint64_t h = 1469598103934665603ull;

	for (int v = 0; v < d->nvcpus; v++) {
		h ^= (uint64_t)(unsigned)d->v[v].tid;
		h *= 1099511628211ull;
	}
	return h;
}

void
live_mbm_sample(struct live *l, struct ldom *d, struct policy_domain_in *in)
{
	struct resctrl_sample s;
	struct llcd_err e;

	in->mbm_valid = false;
	in->mbm_bytes = 0;
	if (l->rc == NULL || d->state != LDOM_MANAGED)
		return;
	if (d->mbm == NULL && (d->mbm = calloc(1, sizeof(*d->mbm))) == NULL)
		return;         /* out of memory: tried again next period */
	struct ldom_mbm *m = d->mbm;
	if (m->failed)
		return;
	if (!m->made) {
		resctrl_group_name(d->name, m->group, sizeof(m->group));
		if (resctrl_group_create(l->rc, m->group, &e) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "no bandwidth monitoring: %s", e.msg);
			m->failed = true;
			return;
		}
		m->made = true;
		m->rc = l->rc;
		m->sig = 0;
		m->have_prev = false;
	}
	uint64_t sig = tid_sig(d);
	if (sig != m->sig) {
		int tids[CPUSET_MAX], n = 0;
		for (int v = 0; v < d->nvcpus && n < CPUSET_MAX; v++)
			if (d->v[v].tid > 0)
				tids[n++] = d->v[v].tid;
		if (resctrl_group_add_tasks(l->rc, m->group, tids, n, &e) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "bandwidth monitoring: %s", e.msg);
			return;         /* tried again next period */
		}
		m->sig = sig;
		m->have_prev = false;       /* the group's contents changed */
	}
	if (resctrl_group_read(l->rc, m->group, &s, &e) < 0) {
		log_dom(LOG_DEBUG, d->name, -1, 0, "bandwidth monitoring: %s", e.msg);
		m->have_prev = false;
		return;
	}
	if (m->have_prev && s.mbm_total_bytes >= m->prev && s.nread == m->prev_nread) {
		in->mbm_valid = true;
		in->mbm_bytes = s.mbm_total_bytes - m->prev;
	}
	m->prev = s.mbm_total_bytes;
	m->prev_nread = s.nread;
	m->have_prev = true;
}

void
live_mbm_forget(struct ldom *d)
{
	struct llcd_err e;

	struct ldom_mbm *m = d->mbm;

	if (m == NULL)
		return;
	if (m->made && m->rc != NULL && resctrl_group_remove(m->rc, m->group, &e) < 0)
		log_dom(LOG_INFO, d->name, -1, 0, "%s", e.msg);
	free(m);
	d->mbm = NULL;
}
