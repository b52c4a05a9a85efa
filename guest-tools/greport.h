// SPDX-License-Identifier: GPL-2.0-or-later
/* greport.h - one protocol line (guestproto.h, docs/guest-channel.md)
 * from the hot processes of one period. */
#ifndef LLCD_GREPORT_H
#define LLCD_GREPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gaggr.h"
#include "gscan.h"
#include "gtopo.h"

struct greport_hdr {
	double t;               /* guest monotonic time, seconds */
	uint64_t seq;           /* line number since llc-guest started */
	uint64_t dropped;       /* lines dropped so far (host not reading) */
};

/* Write the line, '\n' included, into buf (cap >= GUESTPROTO_MAX_LINE + 1
 * is enough; the line never exceeds GUESTPROTO_MAX_LINE bytes). Processes
 * beyond GUESTPROTO_MAX_PROCS, or that would make the line too long, are
 * left out (the busiest come first) and counted in *omitted. aggr may be
 * NULL; otherwise each process says which LLC it is confined to.
 * Returns the length, or -1 if not even an empty report fits. */
int greport_line(char *buf, size_t cap, const struct greport_hdr *h,
                 const struct gtopo *topo, const struct gscan_hotlist *hot,
                 const struct gaggr *aggr, int *omitted);

#endif
