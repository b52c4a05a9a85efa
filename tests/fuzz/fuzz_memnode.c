// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_memnode.c - libFuzzer target for the guest-RAM region picker
 * (agent/drivers/memnode.c, memnode_ram_ranges_max()) on arbitrary /proc/PID/maps text
 * (a path in it can be any file name a QEMU maps). Bytes 0-1 choose the
 * size hint (0, or 1..65535 MiB), byte 2 the output room (1..64); the rest
 * is the maps text. Checked: no more regions than room, each non-empty,
 * none over the 1 TiB limit, sorted by size (largest first), none
 * overlapping another. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memnode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memnode_range r[MEMNODE_MAX_RANGES];
	uint64_t hint;
	int max, n;

	if (size < 3)
		return 0;
	hint = (uint64_t)(data[0] | data[1] << 8) << 20;
	max = 1 + data[2] % MEMNODE_MAX_RANGES;
	n = memnode_ram_ranges_max((const char *)data + 3, size - 3, hint, 1ull << 40, r, max);
	if (n < 0 || n > max)
		abort();
	for (int i = 0; i < n; i++) {
		if (r[i].end <= r[i].start || r[i].end - r[i].start > 1ull << 40)
			abort();
		if (i > 0 && r[i].end - r[i].start > r[i - 1].end - r[i - 1].start)
			abort();
		for (int j = 0; j < i; j++)
			if (r[i].start < r[j].end && r[j].start < r[i].end)
				abort();
	}
	return 0;
}
