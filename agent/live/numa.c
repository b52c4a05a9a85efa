// SPDX-License-Identifier: GPL-2.0-or-later
/* numa.c - the NUMA node of each managed domain's memory, for the engine's
 * NUMA precedence (policy_domain_in.mem_node, docs/design.md): up to
 * MEMNODE_DEFAULT_PAGES pages of its QEMU's guest RAM are sampled with
 * move_pages(2) in query mode (agent/drivers/memnode.h), at a low rate, and the
 * last answer goes to the engine every period. The first read when the
 * domain is first observed, the next LIVE_NUMA_INTERVAL_NS of loop time
 * later; while the answer stays the same the reads thin out (twice the
 * interval each time, up to LIVE_NUMA_INTERVAL_MAX_NS), a change or a
 * failed read starts again at LIVE_NUMA_INTERVAL_NS. Memory moves slowly
 * (first touch, then NUMA balancing or migrate_pages), so a stale answer
 * costs little. A read that can only confirm the answer it had (the
 * same QEMU, a node known) asks LIVE_NUMA_CONFIRM_PAGES pages, an eighth
 * of a full read; when those say otherwise the full sample is read at
 * once and decides, so an answer never changes on the small sample (the
 * resident / sampled figures shown are the last full read's).
 * The guest-RAM regions found in /proc/PID/maps are kept
 * between reads (memnode_read_cached: maps is read again when the
 * process's mapped size changed or a kept region is gone, and every
 * MEMNODE_MAPS_REUSE reads), so a read is mostly one move_pages(2) call.
 * A read that fails (the process is gone, no access) is logged once per
 * domain and leaves the node unknown. On a one-node host the answer is
 * node 0, which restricts nothing. */
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>

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
	/* the first read when first observed; then when due, or at once
	 * for another QEMU (the domain started again); a failed read is
	 * tried again when due, not every period */
	if ((!d->mem.known && d->mem.maps == NULL) || now_ns >= d->mem.next_ns ||
	    (d->mem.maps != NULL && d->mem.maps->pid != 0 && d->mem.maps->pid != d->pid)) {
		d->mem.next_ns = now_ns + LIVE_NUMA_INTERVAL_NS;
		uint64_t iv = d->mem.interval_ns;
		d->mem.interval_ns = LIVE_NUMA_INTERVAL_NS;
		if (d->mem.maps == NULL && (d->mem.maps = calloc(1, sizeof(*d->mem.maps))) == NULL)
			return;         /* out of memory: tried again next period */
		/* a read that may only confirm the last answer asks few pages;
		 * a different answer is decided on the full sample, at once */
		bool confirm = d->mem.known && d->mem.maps->pid == d->pid;
		int rc = memnode_read_cached(d->pid, 0, confirm ? LIVE_NUMA_CONFIRM_PAGES : MEMNODE_DEFAULT_PAGES,
		    d->mem.maps, &r, &e);
		if (rc == 0 && confirm && r.node != d->mem.node) {
			confirm = false;
			rc = memnode_read_cached(d->pid, 0, MEMNODE_DEFAULT_PAGES, d->mem.maps, &r, &e);
		}
		if (rc < 0) {
			if (!d->mem.warned)
				log_dom(LOG_INFO, d->name, -1, 0, "where its memory lives is unknown: %s", e.msg);
			d->mem.warned = true;
			d->mem.known = false;
			snprintf(d->mem.error, sizeof(d->mem.error), "%s", e.msg);
			d->mem.next_ns = now_ns + LIVE_NUMA_INTERVAL_NS;
			return;
		}
		if (!d->mem.known || r.node != d->mem.node)
			log_dom(LOG_DEBUG, d->name, -1, 0, "memory on NUMA node %d (%d of %d sampled pages resident, "
			    "%d guest-RAM region%s, %llu MiB)", r.node, r.resident, r.sampled, r.nranges,
			    r.nranges == 1 ? "" : "s", (unsigned long long)(r.ram_bytes >> 20));
		if (d->mem.known && r.node == d->mem.node && iv > 0) {
			/* the same answer: memory stays where it is, ask less often */
			d->mem.interval_ns = iv * 2 < LIVE_NUMA_INTERVAL_MAX_NS ? iv * 2 : LIVE_NUMA_INTERVAL_MAX_NS;
			d->mem.next_ns = now_ns + d->mem.interval_ns;
		}
		d->mem.known = true;
		d->mem.error[0] = '\0';
		d->mem.node = r.node;
		if (confirm) {
			d->mem.confirms++;
		} else {                /* the figures of the last full read */
			d->mem.resident = r.resident;
			d->mem.sampled = r.sampled;
		}
	}
	if (d->mem.known && d->mem.node >= 0) {
		in->mem_node_valid = true;
		in->mem_node = d->mem.node;
	}
}
