// SPDX-License-Identifier: GPL-2.0-or-later
/* test_tracer.c - the in-kernel tracer (agent/live/tracer.*) with its real
 * BPF programs in this kernel, on real threads of this process: wakeup
 * edges of a pipe ping-pong, runtime and run delay against the kernel's own
 * schedstat, which wakeups are not edges, the caps and their counters.
 * Needs root (CAP_BPF + CAP_PERFMON) and BTF; fails, never skips, when the
 * programs cannot be loaded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "clock.h"
#include "tracer.h"
#include "tracer_abi.h"
#include "test_cpu.h"
#include "test_file.h"

static struct tracer *T;

/* run and wait ns from /proc/self/task/TID/schedstat */
/* The thread's voluntary context switches so far (each sleep is one). */
static int
voluntary_switches(int tid)
{
	char path[64];
	long long n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	n = test_status_field(path, "voluntary_ctxt_switches");
	assert_true(n >= 0);
	return (int)n;
}

static void
schedstat(int tid, uint64_t *run, uint64_t *wait)
{
	char path[64];
	unsigned long long r = 0, w = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu %llu", &r, &w), 2);
	fclose(f);
	*run = r;
	*wait = w;
}

/* ---- workers: each reads 2-byte commands from its pipe ------------------ */

#define NW 96             /* 96 x 95 pairs: more than TRACER_EDGES_PER_DOMAIN */

struct worker {
	pthread_t th;
	int in[2];              /* its command pipe */
	atomic_int tid;
	int self;
};

static struct worker W[NW];
static int ack[2];

/* Commands (a worker writes to another only once that one sleeps, so that
 * every write is one wakeup): 'W' j: write "A" to worker j; 'A': ack to the main thread;
 * 'P' n: ping-pong n rounds with worker (self ^ 1) (the even one starts);
 * 'B' n: burn n * 10 ms of CPU; 'S' n: sleep 1 ms n * 10 times; 'Q': quit. */

/* Wait until thread tid sleeps (state S: it is in read() on its pipe,
 * the only place a worker sleeps), so that the next write wakes it: a
 * wakeup the test counts on. Gives up after ~2 s (the count then fails). */
static void
wait_sleeping(int tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (int i = 0; i < 200000; i++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;
		if (f != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL)
				p = strrchr(buf, ')');
			fclose(f);
		}
		if (p != NULL && p[1] == ' ' && p[2] == 'S')
			return;
		if (i > 100)
			usleep(10);
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned char c[2];

	atomic_store(&w->tid, gettid());
	for (;;) {
		if (read(w->in[0], c, 2) != 2)
			return NULL;
		switch (c[0]) {
		case 'W': {
			unsigned char m[2] = { 'A', 0 };
			wait_sleeping(atomic_load(&W[c[1]].tid));
			if (write(W[c[1]].in[1], m, 2) != 2)
				abort();
			break;
		}
		case 'A':
			if (write(ack[1], "a", 1) != 1)
				abort();
			break;
		case 'P': {
			/* rounds = c[1] * 10; the peer echoes each token */
			struct worker *peer = &W[w->self ^ 1];
			unsigned char tok[2] = { 'E', 0 }, r[2];
			for (int i = 0; i < c[1] * 10; i++) {
				wait_sleeping(atomic_load(&peer->tid));
				if (write(peer->in[1], tok, 2) != 2 || read(w->in[0], r, 2) != 2)
					abort();
			}
			if (write(ack[1], "a", 1) != 1)
				abort();
			break;
		}
		case 'E': {
			unsigned char tok[2] = { 'e', 0 };
			wait_sleeping(atomic_load(&W[w->self ^ 1].tid));
			if (write(W[w->self ^ 1].in[1], tok, 2) != 2)
				abort();
			break;
		}
		case 'B':
			test_burn_ms(c[1] * 10);
			if (write(ack[1], "a", 1) != 1)
				abort();
			break;
		case 'S':
			for (int i = 0; i < c[1] * 10; i++)
				usleep(1000);
			if (write(ack[1], "a", 1) != 1)
				abort();
			break;
		case 'Q':
			return NULL;
		default:
			break;
		}
	}
}

static void
cmd(int w, unsigned char c, unsigned char arg)
{
	unsigned char m[2] = { c, arg };

	assert_int_equal(write(W[w].in[1], m, 2), 2);
}

/* Workers w0 and w1 both on CPU cpu alone. */
static void
pin_pair(int w0, int w1, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(W[w0].tid, sizeof(one), &one), 0);
	assert_int_equal(sched_setaffinity(W[w1].tid, sizeof(one), &one), 0);
}

/* Workers w0 and w1 back on every CPU (after a test pinned them). */
static void
unpin_pair(int w0, int w1)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE && c < sysconf(_SC_NPROCESSORS_CONF); c++)
		CPU_SET(c, &all);
	sched_setaffinity(W[w0].tid, sizeof(all), &all);
	sched_setaffinity(W[w1].tid, sizeof(all), &all);
}

static void
wait_ack(int n)
{
	char c;

	for (int i = 0; i < n; i++)
		assert_int_equal(read(ack[0], &c, 1), 1);
}

static int
setup(void **state)
{
	struct llcd_err err = { "" };

	T = tracer_new(&err);
	if (T == NULL) {
		fprintf(stderr, "tracer: cannot load the BPF programs here: %s\n", err.msg);
		return -1;      /* cmocka fails every test: BPF must work here */
	}
	assert_int_equal(pipe(ack), 0);
	for (int i = 0; i < NW; i++) {
		W[i].self = i;
		assert_int_equal(pipe(W[i].in), 0);
		assert_int_equal(pthread_create(&W[i].th, NULL, worker_main, &W[i]), 0);
	}
	for (int i = 0; i < NW; i++)
		while (atomic_load(&W[i].tid) == 0)
			usleep(1000);
	return 0;
}

static int
teardown(void **state)
{
	if (T == NULL)
		return 0;
	for (int i = 0; i < NW; i++) {
		cmd(i, 'Q', 0);
		pthread_join(W[i].th, NULL);
	}
	tracer_free(T);
	return 0;
}

static uint64_t
edge_count(int dom, int waker, int wakee, int *nedges, uint64_t *dropped)
{
	const struct tracer_edge *e;
	int n = tracer_domain_edges(T, dom, &e, dropped);
	uint64_t c = 0;

	if (nedges != NULL)
		*nedges = n;
	for (int i = 0; i < n; i++)
		if (e[i].waker == waker && e[i].wakee == wakee)
			c = e[i].count;
	return c;
}

/* Workers 0 and 1 are vCPUs 1 and 3 of domain A and ping-pong 500 rounds;
 * worker 2 (vCPU 0 of A), 3 (a non-vCPU thread of A), 4 (vCPU 0 of domain
 * B) and 5 (not registered) each wake worker 0 some times: none of those
 * is an edge. */
static void
test_pingpong_edges(void **state)
{
	struct llcd_err err = { "" };
	int a = tracer_domain_add(T, &err), b = tracer_domain_add(T, &err);
	int s[5], n;
	uint64_t dropped, c01, c10;
	struct tracer_sample smp;

	assert_true(a >= 0 && b >= 0);
	s[0] = tracer_thread_add(T, a, W[0].tid, 1, &err);
	s[1] = tracer_thread_add(T, a, W[1].tid, 3, &err);
	s[2] = tracer_thread_add(T, a, W[2].tid, 0, &err);
	s[3] = tracer_thread_add(T, a, W[3].tid, -1, &err);
	s[4] = tracer_thread_add(T, b, W[4].tid, 0, &err);
	for (int i = 0; i < 5; i++)
		assert_true(s[i] >= 0);
	/* the same TID twice is refused */
	assert_int_equal(tracer_thread_add(T, a, W[0].tid, 2, &err), -1);
	assert_non_null(strstr(err.msg, "tracked already"));

	assert_true(tracer_drain_edges(T, &err) >= 0);
	cmd(0, 'P', 50);        /* 500 rounds */
	wait_ack(1);
	/* non-edges: 2 (vCPU 0, same domain) -> 0 is an edge; make it after the
	 * ping-pong so it is told apart; 3, 4, 5 -> 0 are not */
	for (int k = 0; k < 20; k++) {
		for (int w = 3; w <= 5; w++) {
			cmd(w, 'W', 0); /* w writes "A" to worker 0, which acks */
			wait_ack(1);
		}
	}
	for (int k = 0; k < 7; k++) {
		cmd(2, 'W', 0);
		wait_ack(1);
	}
	assert_true(tracer_drain_edges(T, &err) >= 0);
	c01 = edge_count(a, 1, 3, &n, &dropped);
	c10 = edge_count(a, 3, 1, NULL, NULL);
	print_message("ping-pong 500 rounds: edges 1->3 %llu, 3->1 %llu, %d edges, dropped %llu\n",
	    (unsigned long long)c01, (unsigned long long)c10, n, (unsigned long long)dropped);
	/* each side writes only once the other sleeps in read(): every round
	 * is one wakeup each way */
	assert_int_equal(c01, 500);
	assert_int_equal(c10, 500);
	assert_int_equal(edge_count(a, 0, 1, NULL, NULL), 7);
	assert_int_equal(n, 3);         /* 1->3, 3->1, 0->1 and nothing else */
	assert_int_equal(dropped, 0);
	assert_int_equal(tracer_domain_edges(T, b, &(const struct tracer_edge *){ NULL }, NULL), 0);
	/* worker 0's figures come with the next refresh */
	assert_int_equal(tracer_thread_read(T, s[0], &smp), 0);
	assert_int_equal(smp.last_cpu, -1);
	assert_int_equal(tracer_refresh(T, &err), 0);
	assert_int_equal(tracer_thread_read(T, s[0], &smp), 0);
	assert_false(smp.exited);
	assert_true(smp.last_cpu >= 0);
	assert_true(smp.runtime_ns > 0);

	/* the next drain starts from zero */
	assert_int_equal(tracer_drain_edges(T, &err), 0);

	tracer_domain_remove(T, a);
	tracer_domain_remove(T, b);
	assert_int_equal(tracer_thread_read(T, s[0], &smp), -1);
	struct tracer_stats st;
	tracer_stats(T, &st);
	assert_int_equal(st.threads, 0);
	assert_int_equal(st.domains, 0);
}

/* Two readings of one cumulative counter a moment apart: within 5 ms. */
static bool
near(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < 5000000ull;
}

/* Runtime, run delay and last CPU against the kernel's schedstat: two
 * threads burning 400 ms each on the same CPU wait for each other. The
 * sampling program copies the kernel's own counters, so while the threads
 * sleep the figures are schedstat's (test_runtime_delay prints both). */
static void
test_runtime_delay(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err), s6, s7;
	uint64_t r6a, w6a, r7a, w7a, r6b, w6b, r7b, w7b;
	struct tracer_sample x6a, x7a, x6, x7;

	assert_true(d >= 0);
	int cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	pin_pair(6, 7, cpu);
	s6 = tracer_thread_add(T, d, W[6].tid, 0, &err);
	s7 = tracer_thread_add(T, d, W[7].tid, 1, &err);
	assert_true(s6 >= 0 && s7 >= 0);
	assert_int_equal(tracer_refresh(T, &err), 0);
	assert_int_equal(tracer_thread_read(T, s6, &x6a), 0);
	assert_int_equal(tracer_thread_read(T, s7, &x7a), 0);
	schedstat(W[6].tid, &r6a, &w6a);
	schedstat(W[7].tid, &r7a, &w7a);
	/* asleep: the same numbers (within a few ms: on a loaded machine a
	 * worker may still be on its way to sleep) */
	assert_true(near(x6a.runtime_ns, r6a) && near(x6a.delay_ns, w6a));
	assert_true(near(x7a.runtime_ns, r7a) && near(x7a.delay_ns, w7a));
	cmd(6, 'B', 40);
	cmd(7, 'B', 40);
	wait_ack(2);
	usleep(20000);          /* both are asleep again */
	schedstat(W[6].tid, &r6b, &w6b);
	schedstat(W[7].tid, &r7b, &w7b);
	assert_int_equal(tracer_refresh(T, &err), 0);
	assert_int_equal(tracer_thread_read(T, s6, &x6), 0);
	assert_int_equal(tracer_thread_read(T, s7, &x7), 0);
	uint64_t run6 = x6.runtime_ns - x6a.runtime_ns, run7 = x7.runtime_ns - x7a.runtime_ns;
	uint64_t del6 = x6.delay_ns - x6a.delay_ns, del7 = x7.delay_ns - x7a.delay_ns;
	print_message("runtime tracer %llu / schedstat %llu ns; delay tracer %llu / schedstat %llu ns\n",
	    (unsigned long long)run6, (unsigned long long)(r6b - r6a),
	    (unsigned long long)del6, (unsigned long long)(w6b - w6a));
	print_message("runtime tracer %llu / schedstat %llu ns; delay tracer %llu / schedstat %llu ns\n",
	    (unsigned long long)run7, (unsigned long long)(r7b - r7a),
	    (unsigned long long)del7, (unsigned long long)(w7b - w7a));
	/* 400 ms each of burning */
	assert_true(run6 >= 380000000ull && run7 >= 380000000ull);
	/* the kernel's own accounting, read a moment later */
	assert_true(near(x6.runtime_ns, r6b) && near(x7.runtime_ns, r7b));
	/* sharing one CPU: each waited a good part of the other's 400 ms */
	assert_true(del6 + del7 >= 300000000ull);
	assert_true(near(x6.delay_ns, w6b) && near(x7.delay_ns, w7b));
	assert_int_equal(x6.last_cpu, cpu);
	assert_int_equal(x7.last_cpu, cpu);

	/* a thread burning right now: its runtime grows between refreshes
	 * (the kernel updates it at every tick), without a switch */
	cmd(6, 'B', 30);
	usleep(150000);
	struct tracer_sample y1, y2;
	tracer_refresh(T, &err);
	tracer_thread_read(T, s6, &y1);
	usleep(100000);
	tracer_refresh(T, &err);
	tracer_thread_read(T, s6, &y2);
	wait_ack(1);
	assert_true(y2.runtime_ns > y1.runtime_ns);
	assert_true(y1.runtime_ns > x6.runtime_ns);

	unpin_pair(6, 7);
	tracer_domain_remove(T, d);
}

/* A thread that slept through (not woken since the last copy, not
 * runnable then) is not looked up: its figures are the ones copied. Once
 * woken it is copied, with schedstat's figures. */
static void
test_idle_not_copied(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err), slot[20];
	struct tracer_stats a, b;
	struct tracer_sample x;
	uint64_t run, wait;

	assert_true(d >= 0);
	for (int i = 0; i < 20; i++) {
		wait_sleeping(W[8 + i].tid);
		assert_true((slot[i] = tracer_thread_add(T, d, W[8 + i].tid, i, &err)) >= 0);
	}
	tracer_stats(T, &a);
	assert_int_equal(tracer_refresh(T, &err), 0);
	tracer_stats(T, &b);
	assert_true(b.copied - a.copied >= 20);         /* the first copy of each */
	for (int i = 0; i < 20; i++) {
		assert_int_equal(tracer_thread_read(T, slot[i], &x), 0);
		assert_true(x.last_cpu >= 0);
	}
	assert_int_equal(tracer_refresh(T, &err), 0);   /* one found queued may be copied once more */
	tracer_stats(T, &a);
	assert_int_equal(tracer_refresh(T, &err), 0);
	tracer_stats(T, &b);
	print_message("20 sleeping threads: %llu copied\n", (unsigned long long)(b.copied - a.copied));
	assert_int_equal(b.copied - a.copied, 0);
	/* each sleeps 10 x 1 ms: woken 11 times, copied at the next refresh */
	for (int i = 0; i < 20; i++)
		cmd(8 + i, 'S', 1);
	wait_ack(20);
	for (int i = 0; i < 20; i++)
		wait_sleeping(W[8 + i].tid);
	tracer_stats(T, &a);
	assert_int_equal(tracer_refresh(T, &err), 0);
	tracer_stats(T, &b);
	assert_true(b.copied - a.copied >= 20);
	for (int i = 0; i < 20; i++) {
		schedstat(W[8 + i].tid, &run, &wait);
		assert_int_equal(tracer_thread_read(T, slot[i], &x), 0);
		assert_true(near(x.runtime_ns, run) && near(x.delay_ns, wait));
	}
	tracer_domain_remove(T, d);
}

/* Timer wakeups come from interrupt context, where `current` is whoever
 * runs: vCPU 1 burning on the CPU where vCPU 0's sleeps expire is not
 * vCPU 0's waker. */
static void
test_irq_not_edge(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err), s8, s9;
	const struct tracer_edge *e;
	uint64_t dropped;

	pin_pair(8, 9, 0);
	s8 = tracer_thread_add(T, d, W[8].tid, 0, &err);
	s9 = tracer_thread_add(T, d, W[9].tid, 1, &err);
	assert_true(s8 >= 0 && s9 >= 0);
	assert_true(tracer_irq_check(T));      /* this kernel's BTF has what it needs */
	assert_true(tracer_drain_edges(T, &err) >= 0);
	int sw0 = voluntary_switches(W[8].tid);
	cmd(9, 'B', 30);        /* vCPU 1 burns 300 ms on CPU 0 ... */
	cmd(8, 'S', 20);        /* ... while vCPU 0 sleeps 1 ms 200 times there */
	wait_ack(2);
	assert_true(tracer_drain_edges(T, &err) >= 0);
	int woken = voluntary_switches(W[8].tid) - sw0;
	int n = tracer_domain_edges(T, d, &e, &dropped);
	print_message("vCPU 0 woken %d times by its timers, %d edges\n", woken, n);
	for (int i = 0; i < n; i++)
		print_message("  edge %d -> %d: %llu\n", e[i].waker, e[i].wakee, (unsigned long long)e[i].count);
	assert_true(woken >= 200);
	assert_int_equal(n, 0);
	assert_int_equal(dropped, 0);
	unpin_pair(8, 9);
	tracer_domain_remove(T, d);
}

/* More distinct edges in one period than a domain may have: the first
 * TRACER_EDGES_PER_DOMAIN are counted, the rest counted as dropped; the
 * next period starts afresh. */
static void
test_edge_cap(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err), n, pairs = 0;
	const struct tracer_edge *e;
	uint64_t dropped, sum = 0;

	assert_true(d >= 0);
	for (int i = 0; i < NW; i++)
		assert_true(tracer_thread_add(T, d, W[i].tid, i, &err) >= 0);
	assert_true(tracer_drain_edges(T, &err) >= 0);
	for (int i = 0; i < NW; i++)
		for (int j = 0; j < NW; j++) {
			if (i == j)
				continue;
			cmd(i, 'W', (unsigned char)j);  /* i wakes j, j acks */
			wait_ack(1);
			pairs++;
		}
	assert_true(tracer_drain_edges(T, &err) >= 0);
	n = tracer_domain_edges(T, d, &e, &dropped);
	for (int i = 0; i < n; i++) {
		sum += e[i].count;
		assert_true(i == 0 || e[i - 1].count >= e[i].count);   /* strongest first */
	}
	print_message("%d pairs: %d edges kept, %llu wakeups in them, %llu dropped\n", pairs, n,
	    (unsigned long long)sum, (unsigned long long)dropped);
	assert_int_equal(n, TRACER_EDGES_PER_DOMAIN);
	assert_true(dropped > 0);
	/* each pair is one wakeup (the waker waits until the wakee sleeps) */
	assert_int_equal(sum + dropped, (uint64_t)pairs);
	struct tracer_stats st;
	tracer_stats(T, &st);
	assert_true(st.edges_dropped >= dropped);

	/* the next period counts again from zero */
	cmd(5, 'W', 6);
	wait_ack(1);
	assert_int_equal(tracer_drain_edges(T, &err), 1);
	n = tracer_domain_edges(T, d, &e, &dropped);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].waker, 5);
	assert_int_equal(e[0].wakee, 6);
	assert_int_equal(e[0].count, 1);
	assert_int_equal(dropped, 0);
	tracer_domain_remove(T, d);
}

/* The thread cap: TRACER_MAX_THREADS registrations (the highest TIDs of
 * PID_MAX_LIMIT, which no thread here has), then one more is refused and counted. */
static void
test_thread_cap(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err);
	struct tracer_stats st0, st;

	assert_true(d >= 0);
	tracer_stats(T, &st0);
	for (int i = 0; i < TRACER_MAX_THREADS; i++)
		assert_true(tracer_thread_add(T, d, (1 << 22) - 1 - i, i & 0xff, &err) >= 0);
	assert_int_equal(tracer_thread_add(T, d, W[0].tid, 0, &err), -1);
	assert_non_null(strstr(err.msg, "threads tracked already"));
	tracer_stats(T, &st);
	assert_int_equal(st.threads, TRACER_MAX_THREADS);
	assert_int_equal(st.threads_refused, st0.threads_refused + 1);
	tracer_domain_remove(T, d);
	tracer_stats(T, &st);
	assert_int_equal(st.threads, 0);
	/* and room again */
	d = tracer_domain_add(T, &err);
	assert_true(tracer_thread_add(T, d, W[0].tid, 0, &err) >= 0);
	tracer_domain_remove(T, d);
}

static void
test_domain_cap(void **state)
{
	struct llcd_err err = { "" };
	static int h[TRACER_MAX_DOMAINS];
	struct tracer_stats st;

	for (int i = 0; i < TRACER_MAX_DOMAINS; i++)
		assert_true((h[i] = tracer_domain_add(T, &err)) >= 0);
	assert_int_equal(tracer_domain_add(T, &err), -1);
	assert_non_null(strstr(err.msg, "domains tracked already"));
	tracer_stats(T, &st);
	assert_int_equal(st.domains_refused, 1);
	for (int i = 0; i < TRACER_MAX_DOMAINS; i++)
		tracer_domain_remove(T, h[i]);
}

static void *
exit_soon(void *arg)
{
	atomic_int *tid = arg;

	atomic_store(tid, gettid());
	usleep(100000);
	return NULL;
}

/* A registered thread that exits: the programs forget its TID (which may
 * be reused) and mark its slot. */
static void
test_exit(void **state)
{
	struct llcd_err err = { "" };
	int d = tracer_domain_add(T, &err), s;
	atomic_int tid = 0;
	pthread_t th;
	struct tracer_sample x;

	assert_int_equal(pthread_create(&th, NULL, exit_soon, &tid), 0);
	while (atomic_load(&tid) == 0)
		usleep(1000);
	s = tracer_thread_add(T, d, tid, 0, &err);
	assert_true(s >= 0);
	assert_int_equal(tracer_thread_read(T, s, &x), 0);
	assert_false(x.exited);
	pthread_join(th, NULL);
	assert_int_equal(tracer_thread_read(T, s, &x), 0);
	assert_true(x.exited);
	/* its TID is free in the kernel's map: registering it again works */
	int s2 = tracer_thread_add(T, d, tid, 0, &err);
	assert_true(s2 >= 0);
	tracer_thread_remove(T, s);     /* does not remove the new one */
	assert_int_equal(tracer_thread_read(T, s2, &x), 0);
	assert_int_equal(tracer_thread_add(T, d, tid, 0, &err), -1);
	tracer_domain_remove(T, d);
}

/* Each test leaves no domain behind, even when it failed half-way. */
static int
clean(void **state)
{
	for (int d = 0; d < TRACER_MAX_DOMAINS; d++)
		tracer_domain_remove(T, d);
	return 0;
}

static void
test_prog_stats(void **state)
{
	struct llcd_err err = { "" };
	struct tracer_prog_stats ps;

	assert_int_equal(tracer_prog_stats(T, &ps, &err), 0);
	assert_int_equal(ps.nprogs, 3);
	assert_string_equal(ps.prog[0].name, "llcd_sample");
}

/* A load the kernel refuses names the cause: bpf() refused (EPERM) under
 * a seccomp filter, as a unit's SystemCallFilter= without bpf does, said as
 * that, not as libbpf's RLIMIT_MEMLOCK hint. In a child:
 * a seccomp filter cannot be taken off. */
static void
test_refused_cause(void **state)
{
	int p[2];
	char msg[LLCD_ERR_MSG + 1] = "";

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = 4, .filter = f };
		struct llcd_err err = { "" };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(2);
		struct tracer *t = tracer_new(&err);
		(void)!write(p[1], err.msg, strlen(err.msg));
		_exit(t == NULL ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = read(p[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	print_message("%s\n", msg);
	assert_string_equal(msg, "tracer: loading the BPF programs: Operation not permitted: the bpf() system call is "
	    "refused with EPERM under a seccomp filter (Seccomp: 2 in /proc/self/status): a unit's SystemCallFilter= "
	    "must allow bpf (llcd.service does)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pingpong_edges, clean),
		cmocka_unit_test_teardown(test_runtime_delay, clean),
		cmocka_unit_test_teardown(test_idle_not_copied, clean),
		cmocka_unit_test_teardown(test_irq_not_edge, clean),
		cmocka_unit_test_teardown(test_edge_cap, clean),
		cmocka_unit_test_teardown(test_thread_cap, clean),
		cmocka_unit_test_teardown(test_domain_cap, clean),
		cmocka_unit_test_teardown(test_exit, clean),
		cmocka_unit_test_teardown(test_prog_stats, clean),
		cmocka_unit_test(test_refused_cause),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
