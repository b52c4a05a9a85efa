// SPDX-License-Identifier: GPL-2.0-or-later
/* test_memnode.c - where a guest's memory lives (agent/drivers/memnode.c): the
 * guest-RAM regions of recorded QEMU maps (tests/fixtures/proc/maps,
 * record.sh), and the real reader (move_pages in query mode) on a child
 * process's memory on this one-node machine: node 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memnode.h"
#include "topo_hwloc.h"
#include "test_file.h"
#include "test_main.h"

#define MiB (1ull << 20)

static char *
slurp(const char *name, size_t *len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/proc/maps/%s", LLCD_FIXTURES, name);
	if (access(path, R_OK) != 0)
		fail_msg("%s: missing fixture (tests/fixtures/proc/maps/record.sh)", path);
	return test_read_file(path, len);
}

/* A TCG QEMU with 256 MiB: the guest RAM is the one 256 MiB rw-p anonymous
 * region, with or without the hint; the translation buffer (rwx, 16 x
 * 63 MiB) and the heap are left out. */
static void
test_ranges_qemu_anon(void **state)
{
	struct memnode_range r[MEMNODE_MAX_RANGES];
	size_t len;
	char *maps = slurp("qemu-anon-256m.maps", &len);

	for (int hint = 0; hint < 2; hint++) {
		int n = memnode_ram_ranges(maps, len, hint ? 256 * MiB : 0, r, MEMNODE_MAX_RANGES);
		assert_int_equal(n, 1);
		assert_int_equal(r[0].end - r[0].start, 256 * MiB);
	}
	free(maps);
}

static void
test_ranges_qemu_memfd(void **state)
{
	struct memnode_range r[MEMNODE_MAX_RANGES];
	size_t len;
	char *maps = slurp("qemu-memfd-256m.maps", &len);
	char want[64];

	int n = memnode_ram_ranges(maps, len, 256 * MiB, r, MEMNODE_MAX_RANGES);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].end - r[0].start, 256 * MiB);
	snprintf(want, sizeof(want), "%llx-", (unsigned long long)r[0].start);
	const char *line = strstr(maps, want);
	assert_non_null(line);
	assert_non_null(strstr(line, "/memfd:memory-backend-memfd"));
	assert_true(strstr(line, "/memfd:") < strchr(line, '\n'));
	free(maps);
}

/* Hand-written: split regions merge; two equal backends are both taken
 * without a hint, the matching one with it; bad lines and a line out of
 * address order are skipped. */
static void
test_ranges_edge(void **state)
{
	static const char maps[] =
	    "garbage line\n"
	    "zz-10 rw-p 00000000 00:00 0\n"
	    "1000000-1800000 rw-p 00000000 00:00 0\n"                   /* 8 MiB */
	    "1800000-3000000 rw-p 00000000 00:00 0\n"                   /* adjacent: 32 MiB in all */
	    "10000000-12000000 rw-s 00000000 00:01 7 /memfd:node1 (deleted)\n"  /* 32 MiB */
	    "20000000-28000000 rwxp 00000000 00:00 0\n"                 /* 128 MiB, executable */
	    "30000000-38000000 r--p 00000000 fe:00 5 /usr/lib/x.so\n"
	    "40000000-40100000 rw-p 00000000 00:00 0 [heap]\n"
	    "50000000-51000000 rw-p 00000000 00:00 0\n"                 /* 16 MiB */
	    "60000000-60400000 rw-p 00000000 00:00 0\n"                 /* 4 MiB: < 1/4 of the largest */
	    "70000000-71000000 rw-p 00000000 00:00 0\n"                 /* 16 MiB, then adjacent but shared: */
	    "71000000-72000000 rw-s 00000000 00:01 9 /dev/zero (deleted)\n"
	    "80000000-90000000 rw-p 00000000 00:00 0\n"                 /* 256 MiB, but overlaps: */
	    "88000000-89000000 rw-p 00000000 00:00 0";                   /* out of order: skipped, no newline */
	struct memnode_range r[4];

	struct memnode_range all[8];
	int n = memnode_ram_ranges(maps, sizeof(maps) - 1, 0, all, 8);
	assert_int_equal(n, 1);                 /* the 256 MiB region; the rest < 1/4 of it */
	assert_int_equal(all[0].start, 0x80000000);
	assert_int_equal(all[0].end, 0x90000000);
	n = memnode_ram_ranges(maps, strstr(maps, "80000000-") - maps, 0, all, 8);
	assert_int_equal(n, 5);                 /* without it: largest first, then by address */
	assert_int_equal(all[0].start, 0x1000000);
	assert_int_equal(all[0].end, 0x3000000);
	assert_int_equal(all[1].start, 0x10000000);
	assert_int_equal(all[2].start, 0x50000000);
	assert_int_equal(all[3].start, 0x70000000);
	assert_int_equal(all[3].end, 0x71000000);
	assert_int_equal(all[4].start, 0x71000000);
	assert_int_equal(memnode_ram_ranges(maps, strstr(maps, "80000000-") - maps, 0, r, 2), 2);  /* at most max */
	n = memnode_ram_ranges(maps, sizeof(maps) - 1, 32 * MiB, r, 4);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x1000000);        /* the first of the largest matching */
	assert_int_equal(memnode_ram_ranges("", 0, 0, r, 4), 0);
	/* a region larger than the host's memory is a reservation, not RAM
	 * (AddressSanitizer's shadow is terabytes of rw-p anonymous memory:
	 * test_live's reader found it under the ASan build) */
	static const char shadow[] =
	    "7fff8000-8fff8000 rw-p 00000000 00:00 0\n"                /* 256 MiB */
	    "100000000000-110000000000 rw-p 00000000 00:00 0\n"        /* 16 TiB, and right after it */
	    "110000000000-110020000000 rw-p 00000000 00:00 0\n";       /* 512 MiB */
	n = memnode_ram_ranges(shadow, sizeof(shadow) - 1, 0, r, 4);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x100000000000ull);               /* unbounded: shadow + RAM merged */
	assert_int_equal(r[0].end, 0x110020000000ull);
	n = memnode_ram_ranges_max(shadow, sizeof(shadow) - 1, 0, 24ull << 30, r, 4);
	assert_int_equal(n, 2);                                         /* within 24 GiB: the RAM alone */
	assert_int_equal(r[0].start, 0x110000000000ull);
	assert_int_equal(r[0].end, 0x110020000000ull);
	assert_int_equal(r[1].start, 0x7fff8000);                       /* and the 256 MiB (>= 1/4 of it) */
	/* more small regions than MEMNODE_MAX_RANGES before the RAM (the
	 * ASan build's allocator makes hundreds): the largest are kept */
	char many[8192];
	size_t ml = 0;
	for (int i = 0; i < MEMNODE_MAX_RANGES + 10; i++)
		ml += (size_t)snprintf(many + ml, sizeof(many) - ml, "%llx-%llx rw-p 00000000 00:00 0\n",
		    0x600000000000ull + (unsigned long long)i * 0x20000, 0x600000000000ull + (unsigned long long)i * 0x20000 + 0x10000);
	ml += (size_t)snprintf(many + ml, sizeof(many) - ml, "7f0000000000-7f0020000000 rw-p 00000000 00:00 0\n");
	n = memnode_ram_ranges(many, ml, 0, r, 4);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x7f0000000000ull);
}

/* An anonymous region of exactly len bytes between two PROT_NONE pages,
 * so that it merges with no neighbour in maps; NULL on failure. */
static char *
fenced(size_t len, int flags)
{
	char *p = mmap(NULL, len + 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p = mmap(p + 4096, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The real reader on this machine (one node): a child maps and touches
 * 32 MiB, the parent samples it: every sampled page resident, on node 0.
 * Without a hint the samples spread over two backends in proportion. An
 * untouched region of the same hint size has nothing resident. */
static void
test_real_node0(void **state)
{
	int fds[2];
	pid_t pid;
	char c;
	struct memnode_result r;
	struct llcd_err err;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);      /* never outlive a failed test */
		char *a = fenced(32 * MiB, MAP_PRIVATE);
		char *b = fenced(48 * MiB, MAP_SHARED);
		/* two backends: 320 MiB touched, 1280 MiB not (largest by far,
		 * also above a sanitizer's 256 MiB low shadow) */
		char *c2 = fenced(320 * MiB, MAP_PRIVATE);
		char *d = fenced(1280 * MiB, MAP_SHARED | MAP_NORESERVE);
		if (a == NULL || b == NULL || c2 == NULL || d == NULL)
			_exit(1);
		memset(a, 1, 32 * MiB);
		memset(c2, 1, 320 * MiB);
		(void)b;                        /* never touched */
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	if (memnode_read(pid, 32 * MiB, 512, &r, &err) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("%s", err.msg);
	}
	assert_int_equal(r.nranges, 1);
	assert_int_equal(r.ram_bytes, 32 * MiB);
	assert_int_equal(r.sampled, 512);
	assert_int_equal(r.resident, 512);
	assert_int_equal(r.pages[0], 512);
	assert_int_equal(r.node, 0);
	/* no hint: the two backends, 1000 pages evenly over both (1600 MiB):
	 * the 200 on the touched 320 MiB resident, on node 0 */
	assert_int_equal(memnode_read(pid, 0, 1000, &r, &err), 0);
	assert_int_equal(r.nranges, 2);
	assert_int_equal(r.ram_bytes, 1600 * MiB);
	assert_int_equal(r.sampled, 1000);
	if (r.resident < 199 || r.resident > 201)
		fail_msg("%d of 1000 sampled pages resident, want 200 (the 320 MiB of 1600)", r.resident);
	assert_int_equal(r.node, 0);
	/* the untouched 48 MiB region: nothing resident, no node */
	assert_int_equal(memnode_read(pid, 48 * MiB, 64, &r, &err), 0);
	assert_int_equal(r.ram_bytes, 48 * MiB);
	assert_int_equal(r.sampled, 64);
	assert_int_equal(r.resident, 0);
	assert_int_equal(r.node, -1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* gone: a clear error */
	assert_int_equal(memnode_read(pid, 0, 64, &r, &err), -1);
	assert_non_null(strstr(err.msg, "maps"));
	close(fds[0]);
}

/* The regions kept between reads (memnode_read_cached): maps is read
 * once, not again while the process's mappings stay; read again when a
 * region is mapped or unmapped (the mapped size changes), when the kept
 * region is gone although the size is the same (its pages are not mapped:
 * -EFAULT), and every MEMNODE_MAPS_REUSE reads. (With a size hint, so
 * that a sanitizer's shadow is never the guest RAM.) */
static void
test_cached_maps(void **state)
{
	int cmd[2], ack[2];
	pid_t pid;
	char c;
	struct memnode_result r;
	struct memnode_maps kept;
	struct llcd_err err;
	uint64_t before;

	(void)state;
	assert_int_equal(pipe(cmd), 0);
	assert_int_equal(pipe(ack), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);      /* never outlive a failed test */
		char *a = fenced(32 * MiB, MAP_PRIVATE), *b = NULL;
		if (a == NULL)
			_exit(1);
		memset(a, 1, 32 * MiB);
		for (;;) {
			if (write(ack[1], "x", 1) != 1 || read(cmd[0], &c, 1) != 1)
				_exit(1);
			if (c == 'm' && (b = fenced(512 * MiB, MAP_SHARED | MAP_NORESERVE)) == NULL)
				_exit(1);
			if (c == 'u' && b != NULL)
				munmap(b - 4096, 512 * MiB + 2 * 4096);
			if (c == 'r') {         /* the RAM elsewhere, the same size */
				char *n = fenced(32 * MiB, MAP_PRIVATE);
				if (n == NULL)
					_exit(1);
				memset(n, 1, 32 * MiB);
				munmap(a - 4096, 32 * MiB + 2 * 4096);
				a = n;
			}
		}
	}
	assert_int_equal(read(ack[0], &c, 1), 1);
	memset(&kept, 0, sizeof(kept));
	for (int i = 0; i < 5; i++) {
		assert_int_equal(memnode_read_cached(pid, 32 * MiB, 64, &kept, &r, &err), 0);
		assert_int_equal(r.ram_bytes, 32 * MiB);
		assert_int_equal(r.resident, 64);
		assert_int_equal(r.node, 0);
	}
	assert_int_equal(kept.maps_reads, 1);           /* maps read once for 5 reads */
	/* after each change the child makes (none: 0), the maps reads so far */
	static const struct {
		char change;
		int maps_reads;
	} steps[] = {
		{ 'm', 2 },     /* a region more: maps read */
		{ 'u', 3 },     /* gone again: maps read */
		{ 0, 3 },       /* no change: the kept maps */
		{ 'r', 4 },     /* moved, same size: the kept pages are not mapped, maps read again */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].change != 0) {
			assert_int_equal(write(cmd[1], &steps[i].change, 1), 1);
			assert_int_equal(read(ack[0], &c, 1), 1);
		}
		assert_int_equal(memnode_read_cached(pid, 32 * MiB, 64, &kept, &r, &err), 0);
		assert_int_equal(kept.maps_reads, steps[i].maps_reads);
	}
	assert_int_equal(r.ram_bytes, 32 * MiB);
	assert_int_equal(r.resident, 64);
	assert_int_equal(r.node, 0);
	/* every MEMNODE_MAPS_REUSE reads, maps in any case */
	before = kept.maps_reads;
	for (int i = 0; i < MEMNODE_MAPS_REUSE; i++)
		assert_int_equal(memnode_read_cached(pid, 32 * MiB, 64, &kept, &r, &err), 0);
	assert_int_equal(kept.maps_reads, before + 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(memnode_read_cached(pid, 32 * MiB, 64, &kept, &r, &err), -1);
	close(cmd[0]);
	close(cmd[1]);
	close(ack[0]);
	close(ack[1]);
}

/* A child that touches len bytes once (as a booting guest touches its
 * RAM), says so on fd, then keeps working on the first `hot` bytes. */
static pid_t
toucher(size_t len, size_t hot, int *rfd)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);      /* never outlive a failed test */
		volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(1);
		memset((char *)m, 1, len);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		for (unsigned long i = 0;; i += 4096)
			m[i % hot]++;
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	*rfd = fds[0];
	return pid;
}

/* VmRSS in bytes: the resident set of the process, which is what
 * virDomainMemoryStats() reports as VIR_DOMAIN_MEMORY_STAT_RSS for a QEMU. */
static uint64_t
rss_bytes(pid_t pid)
{
	char path[64];
	long long kb;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	kb = test_status_field(path, "VmRSS");          /* "VmRSS:  1234 kB" */
	return kb > 0 ? (uint64_t)kb * 1024 : 0;
}

/* Why llcd has no memory-footprint guard (docs/design.md): the guest's
 * memory statistics from libvirt give the QEMU's resident set, which
 * counts every page the guest ever touched. A guest that works on 1 MiB
 * and one that streams through all of its 128 MiB show the same RSS, so
 * the kernel's exceed_llc_capacity() rule (llc_bytes x scale(256) <
 * footprint; scale 1 at aggr-tolerance 1) on it refuses both on a 32 MiB
 * LLC: it would keep every real guest from being aggregated (a booted
 * guest has touched far more than any LLC), whatever its hot set. The
 * kernel's own footprint is NUMA-balancing fault counts, which only the
 * kernel has. */
static void
test_rss_is_no_footprint(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:2(size=32MiB) core:8 pu:2", &err);
	int fa, fb;

	assert_non_null(t);
	uint64_t llc = topo_get(t, TOPO_LLC, 0)->size;
	assert_int_equal(llc, 32 * MiB);
	pid_t hot = toucher(128 * MiB, 1 * MiB, &fa);
	pid_t stream = toucher(128 * MiB, 128 * MiB, &fb);
	usleep(200000);
	uint64_t ra = rss_bytes(hot), rb = rss_bytes(stream);
	kill(hot, SIGKILL);
	kill(stream, SIGKILL);
	waitpid(hot, NULL, 0);
	waitpid(stream, NULL, 0);
	close(fa);
	close(fb);
	assert_true(ra >= 128 * MiB && rb >= 128 * MiB);
	assert_true(ra < rb + 8 * MiB && rb < ra + 8 * MiB);    /* indistinguishable */
	int tol = 1, scale = 1 + (tol - 1) * 256;               /* get_sched_cache_scale(256) */
	assert_true(llc * (uint64_t)scale < ra);                /* the 1 MiB worker: refused */
	assert_true(llc * (uint64_t)scale < rb);                /* the streamer: refused */
	topo_free(t);
}

TEST_MAIN(
	cmocka_unit_test(test_ranges_qemu_anon),
	cmocka_unit_test(test_ranges_qemu_memfd),
	cmocka_unit_test(test_ranges_edge),
	cmocka_unit_test(test_real_node0),
	cmocka_unit_test(test_cached_maps),
	cmocka_unit_test(test_rss_is_no_footprint))
