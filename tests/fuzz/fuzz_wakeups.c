// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_wakeups.c - libFuzzer target for the wakeup rule (policy/wakeups.c)
 * fed with edges a guest could make the tracer count: any vCPU numbers,
 * any counts, any number of edges and periods. Byte 0 chooses the vCPU
 * count (2..257), byte 1 the period (1..256 x 10 ms); then each period is
 * a length byte followed by that many 5-byte edges (waker, wakee, count
 * 24 bits), and the rule's invariants are checked after every period:
 * wakeups_check() accepts exactly the in-range edges, groups are disjoint
 * sets of >= 2 vCPUs of the domain, pairs are bounded, rates finite. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wakeups.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy_wakeup_edge edges[POLICY_WAKEUP_EDGES];
	static struct cpuset groups[64];
	static struct wakeups_pair_info *pairs;
	struct wakeups_state *s;
	struct llcd_err err;
	uint64_t now = 0;
	size_t off = 2;

	if (size < 2)
		return 0;
	int nvcpus = 2 + data[0];
	uint64_t period = (uint64_t)(1 + data[1]) * 10000000ULL;
	if (pairs == NULL && (pairs = malloc(sizeof(*pairs) * (size_t)wakeups_pair_cap(257))) == NULL)
		abort();
	if ((s = wakeups_state_new()) == NULL)
		abort();
	while (off < size) {
		int n = data[off++] * 4, k = 0;
		bool bad = false;
		for (; k < n && off + 5 <= size; k++, off += 5) {
			edges[k].waker = data[off] % 2 == 0 ? data[off + 1] : -(int)data[off + 1];
			edges[k].wakee = data[off + 2] >= 0x80 ? data[off + 2] - 0x80 : data[off + 2] + 200;
			edges[k].count = (uint32_t)data[off + 3] << 8 | data[off + 4];
			bad |= edges[k].waker < 0 || edges[k].waker >= nvcpus ||
			    edges[k].wakee < 0 || edges[k].wakee >= nvcpus;
		}
		struct policy_wakeups w = { .period_ns = period, .nedges = k, .edges = edges,
			.dropped = k > 0 ? edges[0].count : 0 };
		now += period;
		int rc = wakeups_check(&w, nvcpus, &err);
		if ((rc < 0) != bad || (rc < 0 && err.msg[0] == '\0'))
			abort();
		if (wakeups_update(s, nvcpus, rc < 0 ? NULL : &w, period, now) < 0)
			abort();
		struct cpuset seen;
		cpuset_zero(&seen);
		int ng = wakeups_groups(s, groups, 64);
		for (int g = 0; g < ng; g++) {
			if (cpuset_count(&groups[g]) < 2 || cpuset_last(&groups[g]) >= nvcpus ||
			    cpuset_intersects(&groups[g], &seen))
				abort();
			cpuset_or(&seen, &seen, &groups[g]);
			int np;
			double r = wakeups_set_rate_hz(s, &groups[g], &np);
			if (np < 1 || !isfinite(r) || r < 0)
				abort();
		}
		int np = wakeups_pairs(s, pairs, wakeups_pair_cap(257));
		if (np > wakeups_pair_cap(nvcpus))
			abort();
		for (int i = 0; i < np; i++)
			if (pairs[i].a >= pairs[i].b || pairs[i].b >= nvcpus || !isfinite(pairs[i].rate_hz) ||
			    pairs[i].rate_hz < 0 || (i > 0 && pairs[i].rate_hz > pairs[i - 1].rate_hz))
				abort();
		if (!(wakeups_background_hz(s) >= 0) || !isfinite(wakeups_total_hz(s)))
			abort();
	}
	wakeups_state_free(s);
	return 0;
}
