// SPDX-License-Identifier: GPL-2.0-or-later
/* pingpong.c - e2e-pingpong, a token ping-pong between two processes for
 * the e2e guests (tests/e2e/test_wakeups_guest.sh).
 *
 *   e2e-pingpong [-a CPU] [-b CPU] [-t SECONDS] [-r SECONDS] [-p USEC]
 *
 * Forks a second process; the parent is pinned to CPU a (default 1), the
 * child to CPU b (default 3), and they pass one byte back and forth
 * through two pipes, each blocking in read() until the other writes: every
 * round wakes the other side once (in the guest: an IPI from one vCPU to
 * the other when it sleeps). Every -r seconds (default 5) the parent prints
 *
 *   E2E-PINGPONG rounds=N rate=R/s cpus=A,B
 *
 * -p makes the parent sleep USEC microseconds after each round (default
 * 0: as fast as the two can go), which keeps both vCPUs mostly idle: on a
 * host whose LLCs are one PU each the pair then fits in one of them.
 * -t ends both after that many seconds (default: never). Built static by
 * the test so that it runs in the busybox initramfs.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) != 0) {
		fprintf(stderr, "e2e-pingpong: sched_setaffinity(%d): %s\n", cpu, strerror(errno));
		exit(1);
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int a = 1, b = 3, c, up[2], down[2];
	double t = 0, r = 5, start, last;
	long p = 0;
	unsigned long rounds = 0, at_last = 0;
	pid_t child;
	char tok = 'x';

	while ((c = getopt(argc, argv, "a:b:t:r:p:")) != -1) {
		switch (c) {
		case 'a': a = atoi(optarg); break;
		case 'b': b = atoi(optarg); break;
		case 't': t = atof(optarg); break;
		case 'r': r = atof(optarg); break;
		case 'p': p = atol(optarg); break;
		default:
			fprintf(stderr, "usage: e2e-pingpong [-a CPU] [-b CPU] [-t SECONDS] [-r SECONDS] [-p USEC]\n");
			return 2;
		}
	}
	if (pipe(up) != 0 || pipe(down) != 0)
		return 1;
	if ((child = fork()) < 0)
		return 1;
	if (child == 0) {
		pin(b);
		for (;;) {
			if (read(down[0], &tok, 1) != 1)
				_exit(0);
			if (write(up[1], &tok, 1) != 1)
				_exit(0);
		}
	}
	pin(a);
	start = last = now_s();
	for (;;) {
		if (write(down[1], &tok, 1) != 1 || read(up[0], &tok, 1) != 1)
			break;
		rounds++;
		if (p > 0) {
			struct timespec ts = { p / 1000000, (p % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
		if ((rounds & 63) == 0) {
			double n = now_s();
			if (n - last >= r) {
				printf("E2E-PINGPONG rounds=%lu rate=%.0f/s cpus=%d,%d\n", rounds,
				    (double)(rounds - at_last) / (n - last), a, b);
				fflush(stdout);
				last = n;
				at_last = rounds;
			}
			if (t > 0 && n - start >= t)
				break;
		}
	}
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	return 0;
}
