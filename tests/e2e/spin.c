// SPDX-License-Identifier: GPL-2.0-or-later
/* spin.c - e2e-spin, a multi-threaded busy process for the e2e guests.
 *
 *   e2e-spin [-n THREADS] [-c CPULIST] [-r SECONDS] [-t SECONDS]
 *
 * Starts THREADS busy threads (default 4). With -c, thread i starts pinned
 * to the (i mod count)-th CPU of CPULIST ("0,2-3"); anyone may re-pin them
 * later (that is what llc-guest --aggregate does). Every -r seconds it
 * prints one line on stdout (the guest console):
 *
 *   E2E-SPIN pid=P t=S tids=T0,T1,.. cpus=C0,C1,.. allowed=L0;L1;..
 *
 * Ci is the CPU thread i ran on last, Li its affinity list. -t ends the
 * process after that many seconds (default: never). Built static by
 * tests/e2e/lib.sh (e2e_spin) so that it runs in the busybox initramfs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"

#define MAX_THREADS 256

static atomic_int last_cpu[MAX_THREADS];
static atomic_int tids[MAX_THREADS];

static void *spin(void *arg)
{
	int id = (int)(long)arg;
	volatile unsigned long x = 0;

	atomic_store(&tids[id], (int)gettid());
	for (;;) {
		for (unsigned long i = 0; i < 1000000; i++)
			x += i;
		atomic_store(&last_cpu[id], sched_getcpu());
	}
	return NULL;
}

static void print_set(const cpu_set_t *set)
{
	int first = 1;

	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		printf(first ? "%d" : ",%d", c);
		if (e > c)
			printf("-%d", e);
		first = 0;
		c = e;
	}
	if (first)
		printf("none");
}

static void report(int n, long t)
{
	printf("E2E-SPIN pid=%d t=%ld tids=", (int)getpid(), t);
	for (int i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", atomic_load(&tids[i]));
	printf(" cpus=");
	for (int i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", atomic_load(&last_cpu[i]));
	printf(" allowed=");
	for (int i = 0; i < n; i++) {
		cpu_set_t set;
		CPU_ZERO(&set);
		if (i)
			putchar(';');
		if (sched_getaffinity(atomic_load(&tids[i]), sizeof(set), &set) == 0)
			print_set(&set);
		else
			printf("?");
	}
	putchar('\n');
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: e2e-spin [-n THREADS] [-c CPULIST] [-r SECONDS] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int n = 4, ncpus = 0, cpus[CPU_SETSIZE];
	long every = 0, limit = 0;
	int opt;

	while ((opt = getopt(argc, argv, "n:c:r:t:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'c': ncpus = cpulist_parse(optarg, CPU_SETSIZE, cpus, CPU_SETSIZE); break;
		case 'r': every = atol(optarg); break;
		case 't': limit = atol(optarg); break;
		default: usage();
		}
	}
	if (n < 1 || n > MAX_THREADS || ncpus < 0 || every < 0 || limit < 0)
		usage();

	for (int i = 0; i < n; i++) {
		pthread_attr_t attr;
		pthread_t th;
		int rc;

		atomic_store(&last_cpu[i], -1);
		pthread_attr_init(&attr);
		if (ncpus > 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(cpus[i % ncpus], &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		rc = pthread_create(&th, &attr, spin, (void *)(long)i);
		pthread_attr_destroy(&attr);
		if (rc != 0) {
			fprintf(stderr, "e2e-spin: thread %d: %s\n", i, strerror(rc));
			return 1;
		}
	}
	for (long t = 1; limit == 0 || t <= limit; t++) {
		sleep(1);
		if (every > 0 && t % every == 0)
			report(n, t);
	}
	return 0;
}
