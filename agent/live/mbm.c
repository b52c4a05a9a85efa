// SPDX-License-Identifier: GPL-2.0-or-later
/* mbm.c - memory bandwidth per managed domain from resctrl monitoring
 * (agent/drivers/resctrl.h): one monitoring group per domain, named after it,
 * holding its vCPU threads; each period the growth of its mbm_total_bytes
 * goes to the engine as the domain's achieved bandwidth
 * (policy_domain_in.mbm_bytes). Hosts without resctrl L3 monitoring say so
 * once at start (live_mbm_open) and send nothing. */
#include "live_int.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

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
	if (l->rc == NULL || d->mbm.failed || d->state != LDOM_MANAGED)
		return;
	if (!d->mbm.made) {
		resctrl_group_name(d->name, d->mbm.group, sizeof(d->mbm.group));
		if (resctrl_group_create(l->rc, d->mbm.group, &e) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "no bandwidth monitoring: %s", e.msg);
			d->mbm.failed = true;
			return;
		}
		d->mbm.made = true;
		d->mbm.rc = l->rc;
		d->mbm.sig = 0;
		d->mbm.have_prev = false;
	}
	uint64_t sig = tid_sig(d);
	if (sig != d->mbm.sig) {
		int tids[CPUSET_MAX], n = 0;
		for (int v = 0; v < d->nvcpus && n < CPUSET_MAX; v++)
			if (d->v[v].tid > 0)
				tids[n++] = d->v[v].tid;
		if (resctrl_group_add_tasks(l->rc, d->mbm.group, tids, n, &e) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "bandwidth monitoring: %s", e.msg);
			return;         /* tried again next period */
		}
		d->mbm.sig = sig;
		d->mbm.have_prev = false;       /* the group's contents changed */
	}
	if (resctrl_group_read(l->rc, d->mbm.group, &s, &e) < 0) {
		log_dom(LOG_DEBUG, d->name, -1, 0, "bandwidth monitoring: %s", e.msg);
		d->mbm.have_prev = false;
		return;
	}
	if (d->mbm.have_prev && s.mbm_total_bytes >= d->mbm.prev && s.nread == d->mbm.prev_nread) {
		in->mbm_valid = true;
		in->mbm_bytes = s.mbm_total_bytes - d->mbm.prev;
	}
	d->mbm.prev = s.mbm_total_bytes;
	d->mbm.prev_nread = s.nread;
	d->mbm.have_prev = true;
}

void
live_mbm_forget(struct ldom *d)
{
	struct llcd_err e;

	if (!d->mbm.made || d->mbm.rc == NULL)
		return;
	if (resctrl_group_remove(d->mbm.rc, d->mbm.group, &e) < 0)
		log_dom(LOG_INFO, d->name, -1, 0, "%s", e.msg);
	d->mbm.made = false;
}
