// SPDX-License-Identifier: GPL-2.0-or-later
/* memnode.c - the NUMA node of a guest's memory from sampled pages of
 * QEMU's guest-RAM mapping (see memnode.h). */
#include "memnode.h"

#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* A bounded hex number; end of the digits in *end. */
static bool
hex_u64(const char *p, const char *lim, uint64_t *v, const char **end)
{
	uint64_t x = 0;
	int n = 0;

	for (; p < lim && n < 16; p++, n++) {
		int c = (unsigned char)*p, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	*end = p;
	return n > 0 && (p == lim || !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')));
}

/* The path field of a maps line (after five fields), "" when none. */
static const char *
skip_fields(const char *p, const char *lim, int n)
{
	for (int i = 0; i < n && p < lim; i++) {
		while (p < lim && *p != ' ')
			p++;
		while (p < lim && *p == ' ')
			p++;
	}
	return p;
}

static bool
starts(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && memcmp(p, s, k) == 0;
}

/* Guest RAM kinds: anonymous, memfd, hugetlbfs or /dev/shm file (and
 * writable, not executable: TCG's translation buffer is rwx). */
static bool
ram_path(const char *p, size_t n)
{
	if (n == 0)
		return true;
	if (starts(p, n, "/memfd:") || starts(p, n, "/dev/shm/") || starts(p, n, "/dev/hugepages") ||
	    starts(p, n, "/dev/zero (deleted)"))          /* shared anonymous */
		return true;
	for (size_t i = 0; i + 9 <= n; i++)
		if (memcmp(p + i, "hugepages", 9) == 0)
			return true;
	return false;
}

static int
by_size_desc(const void *a, const void *b)
{
	const struct memnode_range *x = a, *y = b;
	uint64_t sx = x->end - x->start, sy = y->end - y->start;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Keep the MEMNODE_MAX_RANGES largest runs (a process has many small
 * anonymous regions: thread stacks, allocator arenas; the ASan build's
 * allocator makes hundreds); runs over limit are not guest RAM. */
static void
keep_run(struct memnode_range *cand, int *nc, const struct memnode_range *run, uint64_t limit)
{
	uint64_t sz = run->end - run->start;
	int small = 0;

	if (sz == 0 || (limit > 0 && sz > limit))
		return;
	if (*nc < MEMNODE_MAX_RANGES) {
		cand[(*nc)++] = *run;
		return;
	}
	for (int i = 1; i < *nc; i++)
		if (cand[i].end - cand[i].start < cand[small].end - cand[small].start)
			small = i;
	if (cand[small].end - cand[small].start < sz)
		cand[small] = *run;
}

int
memnode_ram_ranges(const char *maps, size_t len, uint64_t ram_hint, struct memnode_range *out, int max)
{
	return memnode_ram_ranges_max(maps, len, ram_hint, 0, out, max);
}

int
memnode_ram_ranges_max(const char *maps, size_t len, uint64_t ram_hint, uint64_t limit,
                       struct memnode_range *out, int max)
{
	struct memnode_range cand[MEMNODE_MAX_RANGES], run = { 0, 0 };
	int nc = 0, n = 0;
	const char *p = maps, *lim = maps + len;
	const char *run_perms = NULL, *run_path = NULL;        /* the current run's */
	size_t run_pl = 0;
	uint64_t last_end = 0;          /* the kernel lists regions in address order */

	if (max <= 0)
		return 0;
	while (p < lim) {
		const char *eol = memchr(p, '\n', (size_t)(lim - p)), *q, *path;
		uint64_t s, e;
		if (eol == NULL)
			eol = lim;
		/* start-end perms offset dev inode [path]; rw, not x */
		if (hex_u64(p, eol, &s, &q) && q < eol && *q == '-' && hex_u64(q + 1, eol, &e, &q) && e > s &&
		    s >= last_end && (last_end = e) > 0 && q + 5 <= eol && q[0] == ' ' && q[1] == 'r' &&
		    q[2] == 'w' && q[3] == '-') {
			path = skip_fields(q + 1, eol, 4);
			size_t pl = (size_t)(eol - path);
			if (limit > 0 && e - s > limit) {
				/* larger than the host's memory: a reservation (a
				 * sanitizer's shadow, a NORESERVE arena), not RAM,
				 * and not merged with a region next to it */
				keep_run(cand, &nc, &run, limit);
				run.start = run.end = 0;
			} else if (ram_path(path, pl)) {
				/* one mapping split into regions: adjacent, same
				 * perms, same path (the offset differs) */
				if (run.end == s && run.end > run.start && run_pl == pl &&
				    memcmp(run_perms, q + 1, 4) == 0 && memcmp(run_path, path, pl) == 0) {
					run.end = e;
				} else {
					keep_run(cand, &nc, &run, limit);
					run.start = s;
					run.end = e;
					run_perms = q + 1;
					run_path = path;
					run_pl = pl;
				}
			}
		}
		p = eol + 1;
	}
	keep_run(cand, &nc, &run, limit);
	if (nc == 0)
		return 0;
	qsort(cand, (size_t)nc, sizeof(cand[0]), by_size_desc);
	if (ram_hint > 0) {
		uint64_t lo = ram_hint - ram_hint / 16, hi = ram_hint + ram_hint / 16 + (8u << 20);
		for (int i = 0; i < nc; i++) {
			uint64_t sz = cand[i].end - cand[i].start;
			if (sz >= lo && sz <= hi) {
				out[0] = cand[i];
				return 1;
			}
		}
	}
	uint64_t floor = (cand[0].end - cand[0].start) / 4;
	for (int i = 0; i < nc && n < max; i++)
		if (cand[i].end - cand[i].start >= floor)
			out[n++] = cand[i];
	return n;
}

/* /proc/PID/maps, up to MEMNODE_MAPS_MAX bytes, NUL-terminated. */
static char *
read_maps(int pid, size_t *len, struct llcd_err *err)
{
	char path[64];
	size_t cap = 64 << 10, n = 0;
	char *buf;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((buf = malloc(cap + 1)) == NULL) {
		close(fd);
		llcd_err_set(err, "%s: out of memory", path);
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			char *nb;
			if (cap >= MEMNODE_MAPS_MAX)
				break;
			cap *= 2;
			if ((nb = realloc(buf, cap + 1)) == NULL)
				break;
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			llcd_err_set(err, "%s: %s", path, strerror(errno));
			close(fd);
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The process's mapped size in pages (the first field of
 * /proc/PID/statm); 0 when it cannot be read. */
static uint64_t
vm_pages(int pid)
{
	char path[64], buf[128];
	uint64_t v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	for (const char *p = buf; p < buf + n && *p >= '0' && *p <= '9' && v < UINT64_MAX / 10; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* The guest-RAM regions of pid from its maps into c; vm: its statm size
 * just before. */
static int
load_ranges(int pid, uint64_t ram_hint, uint64_t vm, struct memnode_maps *c, struct llcd_err *err)
{
	struct sysinfo si;
	uint64_t limit;
	size_t len;
	char *maps;

	c->pid = 0;
	c->nranges = 0;
	c->vm_pages = vm;
	if ((maps = read_maps(pid, &len, err)) == NULL)
		return -1;
	limit = sysinfo(&si) == 0 ? ((uint64_t)si.totalram + si.totalswap) * si.mem_unit : 0;
	c->nranges = memnode_ram_ranges_max(maps, len, ram_hint, limit, c->rg, MEMNODE_MAX_RANGES);
	free(maps);
	c->maps_reads++;
	c->uses = 0;
	if (c->nranges == 0)
		return llcd_err_set(err, "memory node: pid %d has no guest-RAM mapping", pid);
	c->pid = pid;
	c->ram_hint = ram_hint;
	return 0;
}

/* Ask the node of n pages evenly spaced over c's regions. Returns the
 * number of pages not mapped (-EFAULT), or -1 with err. */
static int
sample_pages(int pid, int max_pages, const struct memnode_maps *c, struct memnode_result *r,
             struct llcd_err *err)
{
	void *pages[MEMNODE_MAX_PAGES];
	int status[MEMNODE_MAX_PAGES];
	uint64_t psz = (uint64_t)sysconf(_SC_PAGESIZE), total = 0, base = 0;
	int n, best = -1, unmapped = 0;

	memset(r, 0, sizeof(*r));
	r->node = -1;
	r->nranges = c->nranges;
	for (int i = 0; i < c->nranges; i++)
		total += c->rg[i].end - c->rg[i].start;
	r->ram_bytes = total;
	n = total / psz < (uint64_t)max_pages ? (int)(total / psz) : max_pages;
	if (n < 1)
		n = 1;
	/* evenly spaced over the regions, in the middle of each slot */
	for (int i = 0, k = 0; i < n; i++) {
		uint64_t off = (uint64_t)((2.0 * i + 1) / (2.0 * n) * (double)total);
		while (k < c->nranges - 1 && off >= base + (c->rg[k].end - c->rg[k].start)) {
			base += c->rg[k].end - c->rg[k].start;
			k++;
		}
		pages[i] = (void *)(uintptr_t)((c->rg[k].start + (off - base)) & ~(psz - 1));
	}
	if (numa_move_pages(pid, (unsigned long)n, pages, NULL, status, 0) < 0)
		return llcd_err_set(err, "memory node: move_pages(pid %d, query): %s", pid, strerror(errno));
	r->sampled = n;
	for (int i = 0; i < n; i++) {
		if (status[i] == -EFAULT)
			unmapped++;
		if (status[i] < 0 || status[i] >= MEMNODE_MAX_NODES)
			continue;               /* -ENOENT: not present; -EFAULT ... */
		r->pages[status[i]]++;
		r->resident++;
	}
	for (int i = 0; i < MEMNODE_MAX_NODES; i++)
		if (r->pages[i] > 0 && (best < 0 || r->pages[i] > r->pages[best]))
			best = i;
	if (best >= 0 && (long)r->pages[best] * 100 >= (long)r->resident * MEMNODE_MAJORITY_PCT)
		r->node = best;
	return unmapped;
}

int
memnode_read_cached(int pid, uint64_t ram_hint, int max_pages, struct memnode_maps *c,
                    struct memnode_result *r, struct llcd_err *err)
{
	bool fresh = false;
	uint64_t vm;
	int unmapped;

	memset(r, 0, sizeof(*r));
	r->node = -1;
	if (pid <= 0)
		return llcd_err_set(err, "memory node: no process");
	if (max_pages < 1 || max_pages > MEMNODE_MAX_PAGES)
		max_pages = MEMNODE_DEFAULT_PAGES;
	vm = vm_pages(pid);
	if (c->pid != pid || c->ram_hint != ram_hint || c->nranges == 0 || c->uses >= MEMNODE_MAPS_REUSE ||
	    vm == 0 || vm != c->vm_pages) {
		if (load_ranges(pid, ram_hint, vm, c, err) < 0)
			return -1;
		fresh = true;
	}
	c->uses++;
	if ((unmapped = sample_pages(pid, max_pages, c, r, err)) < 0)
		return -1;
	if (unmapped > 0 && !fresh) {
		/* a kept region is gone (or shrank): read maps again */
		if (load_ranges(pid, ram_hint, vm_pages(pid), c, err) < 0)
			return -1;
		c->uses++;
		if (sample_pages(pid, max_pages, c, r, err) < 0)
			return -1;
	}
	return 0;
}

int
memnode_read(int pid, uint64_t ram_hint, int max_pages, struct memnode_result *r, struct llcd_err *err)
{
	struct memnode_maps c;

	memset(&c, 0, sizeof(c));
	return memnode_read_cached(pid, ram_hint, max_pages, &c, r, err);
}
