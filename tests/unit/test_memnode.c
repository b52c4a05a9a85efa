// SPDX-License-Identifier: GPL-2.0-or-later
/* test_memnode.c - where a guest's memory lives (agent/memnode.c): the
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
#include <sys/wait.h>
#include <unistd.h>

#include "memnode.h"

#define MiB (1ull << 20)

static char *
slurp(const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/proc/maps/%s", LLCD_FIXTURES, name);
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: missing fixture (tests/fixtures/proc/maps/record.sh)", path);
	buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
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

	(void)state;
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

	(void)state;
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
 * without a hint, the matching one with it; bad lines are skipped. */
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
	    "60000000-60400000 rw-p 00000000 00:00 0\n"                 /* 4 MiB: < 1/4 of the largest */
	    "70000000-71000000 rw-p 00000000 00:00 0\n"                 /* 16 MiB, then adjacent but shared: */
	    "71000000-72000000 rw-s 00000000 00:01 9 /dev/zero (deleted)\n"
	    "50000000-51000000 rw-p 00000000 00:00 0";                   /* 16 MiB, no newline */
	struct memnode_range r[4];

	(void)state;
	struct memnode_range all[8];
	int n = memnode_ram_ranges(maps, sizeof(maps) - 1, 0, all, 8);
	assert_int_equal(n, 5);                 /* largest first, then by address */
	assert_int_equal(all[0].start, 0x1000000);
	assert_int_equal(all[0].end, 0x3000000);
	assert_int_equal(all[1].start, 0x10000000);
	assert_int_equal(all[2].start, 0x50000000);
	assert_int_equal(all[3].start, 0x70000000);
	assert_int_equal(all[3].end, 0x71000000);
	assert_int_equal(all[4].start, 0x71000000);
	assert_int_equal(memnode_ram_ranges(maps, sizeof(maps) - 1, 0, r, 2), 2);     /* at most max */
	n = memnode_ram_ranges(maps, sizeof(maps) - 1, 32 * MiB, r, 4);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x1000000);        /* the first of the largest matching */
	assert_int_equal(memnode_ram_ranges("", 0, 0, r, 4), 0);
}

/* The real reader on this machine (one node): a child maps and touches
 * 32 MiB, the parent samples it: every sampled page resident, on node 0.
 * An untouched region of the same hint size has nothing resident. */
static void
test_real_node0(void **state)
{
	int fds[2];
	pid_t pid;
	char c;
	struct memnode_result r;
	struct llcd_err err;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *a = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *g = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  /* a gap */
		char *b = mmap(NULL, 48 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED || g == MAP_FAILED || b == MAP_FAILED)
			_exit(1);
		memset(a, 1, 32 * MiB);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_qemu_anon),
		cmocka_unit_test(test_ranges_qemu_memfd),
		cmocka_unit_test(test_ranges_edge),
		cmocka_unit_test(test_real_node0),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
