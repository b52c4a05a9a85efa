// SPDX-License-Identifier: GPL-2.0-or-later
/* memnode.h - where a guest's memory lives, read from outside: the NUMA
 * node of a sample of the pages of QEMU's guest-RAM mapping, asked with
 * move_pages(2) in query mode (libnuma's numa_move_pages() with nodes
 * NULL: nothing moves, each page's node comes back in status). For the
 * engine's NUMA precedence (policy_domain_in.mem_node, docs/design.md).
 *
 * Guest RAM in /proc/PID/maps: QEMU maps it as one private or shared
 * anonymous region (no path), a memfd ("/memfd:pc.ram (deleted)"), a file
 * on hugetlbfs or in /dev/shm (memory-backend-file), writable and not
 * executable (TCG's translation buffer is rwx); adjacent regions of those
 * kinds are merged first. With a size hint (the domain's
 * memory) the region within 1/16 (+ 8 MiB) of it is taken; otherwise, or
 * when none matches, every region at least a quarter the size of the
 * largest (a guest with several memory backends), which leaves out QEMU's
 * own heap arenas. A region larger than the host's memory plus swap is a
 * reservation (a sanitizer's shadow), never guest RAM.
 *
 * Limits: maps is read up to MEMNODE_MAPS_MAX bytes (a process with more
 * mappings is read that far), the MEMNODE_MAX_RANGES largest regions are
 * kept, at most MEMNODE_MAX_PAGES pages are asked per read (evenly spaced
 * over the regions, in proportion to their sizes). Reading another process's pages needs ptrace read access
 * (root, or the same user). Nothing read is trusted beyond bounded hex
 * numbers; a line out of address order (overlapping an earlier one) is
 * skipped; a page's node outside 0..MEMNODE_MAX_NODES-1 is not counted.
 */
#ifndef LLCD_MEMNODE_H
#define LLCD_MEMNODE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define MEMNODE_MAPS_MAX (4u << 20)
#define MEMNODE_MAX_RANGES 64
#define MEMNODE_MAX_PAGES 4096
#define MEMNODE_DEFAULT_PAGES 256
#define MEMNODE_MAX_NODES 64
/* The node holding at least this share of the resident sampled pages is
 * the memory's node; below it the memory is spread (interleaved). */
#define MEMNODE_MAJORITY_PCT 75

struct memnode_range {
	uint64_t start, end;            /* [start, end) */
};

struct memnode_result {
	int node;                       /* OS number of the memory's node; -1 none */
	int sampled;                    /* pages asked */
	int resident;                   /* ... of which present (with a node) */
	int pages[MEMNODE_MAX_NODES];   /* resident sampled pages per node */
	int nranges;                    /* guest-RAM regions found */
	uint64_t ram_bytes;             /* their size */
};

/* The guest-RAM regions of a maps text (see above), merged and largest
 * first, into out (at most max). Returns how many (0: none). */
int memnode_ram_ranges(const char *maps, size_t len, uint64_t ram_hint, struct memnode_range *out, int max);
/* The same, leaving out regions larger than ram_max bytes (0: no bound):
 * memnode_read() passes the host's memory plus swap (the kernel's
 * overcommit heuristic keeps a guest's RAM below it), since a larger
 * region is a reservation (e.g. AddressSanitizer's shadow, terabytes of
 * NORESERVE anonymous memory), not guest RAM. */
int memnode_ram_ranges_max(const char *maps, size_t len, uint64_t ram_hint, uint64_t ram_max,
                           struct memnode_range *out, int max);

/* Sample up to max_pages (1..MEMNODE_MAX_PAGES) pages of pid's guest RAM
 * (ram_hint: the domain's memory in bytes, 0 unknown). Returns 0 with r
 * filled (r->node -1 when nothing sampled is resident or no node has the
 * majority), or -1 with err (no such process, no guest-RAM region, no
 * access, move_pages unsupported). */
int memnode_read(int pid, uint64_t ram_hint, int max_pages, struct memnode_result *r, struct llcd_err *err);

/* A process's guest-RAM regions as found in its maps, kept between reads:
 * QEMU maps guest RAM once at start (hot-plugged memory adds a region), so
 * formatting and parsing every mapping of the process each time (the
 * dearest part of a read by far) is not needed. memnode_read_cached()
 * reads maps again when there is nothing kept, when the process's mapped
 * size changed since (the first number of /proc/PID/statm, one short
 * read: a region was added or removed), when a sampled page is no longer
 * mapped (-EFAULT), and every MEMNODE_MAPS_REUSE reads in any case.
 * Zero-initialised is empty; nothing to free. */
#define MEMNODE_MAPS_REUSE 30

struct memnode_maps {
	int pid;                        /* whose (0: nothing kept) */
	uint64_t ram_hint;
	int nranges;
	struct memnode_range rg[MEMNODE_MAX_RANGES];
	uint64_t vm_pages;              /* statm's size when maps was read */
	int uses;                       /* reads since maps was read */
	uint64_t maps_reads;            /* times maps was read (for tests) */
};

/* memnode_read() with the regions kept in *c (for pid; another pid or
 * hint starts over). */
int memnode_read_cached(int pid, uint64_t ram_hint, int max_pages, struct memnode_maps *c,
                        struct memnode_result *r, struct llcd_err *err);

#endif
