// SPDX-License-Identifier: GPL-2.0-or-later
/* greport.c - see greport.h. */
#include "greport.h"

#include "gjson.h"
#include "guestproto.h"

int
greport_line(char *buf, size_t cap, const struct greport_hdr *h,
             const struct gtopo *topo, const struct gscan_hotlist *hot,
             const struct gaggr *aggr, int *omitted)
{
	struct gjson j;
	size_t limit = cap < GUESTPROTO_MAX_LINE ? cap : GUESTPROTO_MAX_LINE;
	int n = 0;

	*omitted = 0;
	/* room for "]}\n" and the terminating NUL is kept back */
	gjson_init(&j, buf, limit - 3);
	gjson_raw(&j, "{\"v\":");
	gjson_int(&j, GUESTPROTO_VERSION);
	gjson_raw(&j, ",\"t\":");
	gjson_num(&j, h->t, 3);
	gjson_raw(&j, ",\"seq\":");
	gjson_int(&j, (long long)h->seq);
	gjson_raw(&j, ",\"ncpus\":");
	gjson_int(&j, topo->max_cpu + 1);
	gjson_raw(&j, ",\"nllcs\":");
	gjson_int(&j, topo->nllc);
	gjson_raw(&j, ",\"dropped\":");
	gjson_int(&j, (long long)h->dropped);
	gjson_raw(&j, ",\"procs\":[");
	if (j.overflow)
		return -1;
	for (int i = 0; i < hot->n; i++) {
		const struct gscan_hot *p = &hot->p[i];
		size_t mark = gjson_mark(&j);
		int llc = aggr ? gaggr_confined(aggr, p->pid) : -1;

		if (n == GUESTPROTO_MAX_PROCS) {
			*omitted += hot->n - i;
			break;
		}
		if (n > 0)
			gjson_raw(&j, ",");
		gjson_raw(&j, "{\"name\":");
		gjson_str(&j, p->comm);
		gjson_raw(&j, ",\"pid\":");
		gjson_int(&j, p->pid);
		gjson_raw(&j, ",\"threads\":");
		gjson_int(&j, p->nthreads);
		gjson_raw(&j, ",\"busy_threads\":");
		gjson_int(&j, p->busy_threads);
		gjson_raw(&j, ",\"cpu_share\":");
		gjson_num(&j, p->share, 2);
		gjson_raw(&j, ",\"vcpus\":");
		gjson_intlist(&j, &p->vcpus);
		gjson_raw(&j, ",\"llcs\":");
		gjson_intlist(&j, &p->llcs);
		if (llc >= 0) {
			gjson_raw(&j, ",\"confined_llc\":");
			gjson_int(&j, llc);
		}
		gjson_raw(&j, "}");
		if (j.overflow) {
			gjson_reset(&j, mark);
			(*omitted)++;
			continue;
		}
		n++;
	}
	j.cap = limit;          /* the reserved tail */
	gjson_raw(&j, "]}\n");
	return j.overflow ? -1 : (int)j.len;
}
