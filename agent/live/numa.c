// SPDX-License-Identifier: GPL-2.0-or-later
/* numa.c - the NUMA node of each managed domain's memory, for the engine's
 * NUMA precedence (policy_domain_in.mem_node, docs/design.md): up to
 * MEMNODE_DEFAULT_PAGES pages of its QEMU's guest RAM are sampled with
 * move_pages(2) in query mode (agent/memnode.h), at a low rate (every
 * LIVE_NUMA_INTERVAL_NS of loop time per domain, the first read when the
 * domain is first observed), and the last answer goes to the engine every
 * period. Memory moves slowly (first touch, then NUMA balancing or
 * migrate_pages), so a stale answer for up to 10 s costs nothing; a read
 * that fails (the process is gone, no access) is logged once per domain
 * and leaves the node unknown. On a one-node host the answer is node 0,
 * which restricts nothing. */
#include "live_int.h"

#include <stdio.h>

#include "log.h"
#include "memnode.h"

void
live_numa_sample(struct live *l, struct ldom *d, struct policy_domain_in *in, uint64_t now_ns)
{
	struct memnode_result r;
	struct llcd_err e;

	(void)l;
	in->mem_node_valid = false;
	in->mem_node = -1;
	if (d->state != LDOM_MANAGED || d->pid <= 0)
		return;
	if (!d->mem_known || now_ns >= d->mem_next_ns) {
		d->mem_next_ns = now_ns + LIVE_NUMA_INTERVAL_NS;
		if (memnode_read(d->pid, 0, MEMNODE_DEFAULT_PAGES, &r, &e) < 0) {
			if (!d->mem_warned)
				log_dom(LOG_INFO, d->name, -1, 0, "where its memory lives is unknown: %s", e.msg);
			d->mem_warned = true;
			d->mem_known = false;
			snprintf(d->mem_error, sizeof(d->mem_error), "%s", e.msg);
			d->mem_next_ns = now_ns + LIVE_NUMA_INTERVAL_NS;
			return;
		}
		if (!d->mem_known || r.node != d->mem_node)
			log_dom(LOG_DEBUG, d->name, -1, 0, "memory on NUMA node %d (%d of %d sampled pages resident)",
			    r.node, r.resident, r.sampled);
		d->mem_known = true;
		d->mem_error[0] = '\0';
		d->mem_node = r.node;
		d->mem_resident = r.resident;
		d->mem_sampled = r.sampled;
	}
	if (d->mem_known && d->mem_node >= 0) {
		in->mem_node_valid = true;
		in->mem_node = d->mem_node;
	}
}
