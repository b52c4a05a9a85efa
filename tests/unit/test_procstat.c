// SPDX-License-Identifier: GPL-2.0-or-later
/* test_procstat.c - /proc sampling on real threads of this process (named
 * like QEMU's vCPU threads) and on recorded /proc fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"
#include "test_cpu.h"
#include "test_main.h"

#define FIX LLCD_FIXTURES "/proc"

/* ---- real threads ---------------------------------------------------- */

struct burner {
	pthread_t th;
	char name[16];
	atomic_int tid;
	atomic_int go;          /* burns while go == 1 */
	atomic_int quit;
};

static void *
burner_main(void *arg)
{
	struct burner *b = arg;
	volatile uint64_t x = 0;

	pthread_setname_np(pthread_self(), b->name);
	atomic_store(&b->tid, gettid());
	while (!atomic_load(&b->quit)) {
		if (atomic_load(&b->go))
			x++;
		else
			usleep(1000);
	}
	return NULL;
}

static void
burner_start(struct burner *b, const char *name)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	assert_int_equal(pthread_create(&b->th, NULL, burner_main, b), 0);
	while (atomic_load(&b->tid) == 0)
		usleep(100);
}

static void
burner_stop(struct burner *b)
{
	atomic_store(&b->quit, 1);
	assert_int_equal(pthread_join(b->th, NULL), 0);
}


static void
test_real_threads(void **state)
{
	struct burner b0, b1;
	struct procstat *ps;
	struct procstat_task *tasks;
	struct procstat_thread *t0, *t1;
	struct procstat_sample s0, s1, s;
	enum procstat_status st;
	struct llcd_err err;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int n, i, nvcpu = 0, pid = getpid();
	bool saw_main = false;

	assert_non_null(ps = procstat_new(NULL, &err));
	burner_start(&b0, "CPU 0/TCG");
	burner_start(&b1, "CPU 1/TCG");

	/* discovery: both vCPU threads, in vCPU order, first; the main thread
	 * is an emulator thread */
	assert_int_equal(procstat_list_tasks(ps, pid, &tasks, &n, &err), PROCSTAT_OK);
	assert_true(n >= 3);
	for (i = 0; i < n; i++) {
		if (tasks[i].kind == PROCSTAT_VCPU)
			nvcpu++;
		if (tasks[i].tid == pid) {
			assert_int_equal(tasks[i].kind, PROCSTAT_EMULATOR);
			saw_main = true;
		}
	}
	assert_int_equal(nvcpu, 2);
	assert_true(saw_main);
	assert_int_equal(tasks[0].kind, PROCSTAT_VCPU);
	assert_int_equal(tasks[0].index, 0);
	assert_int_equal(tasks[0].tid, atomic_load(&b0.tid));
	assert_string_equal(tasks[0].comm, "CPU 0/TCG");
	assert_int_equal(tasks[1].index, 1);
	assert_int_equal(tasks[1].tid, atomic_load(&b1.tid));
	free(tasks);

	/* sampling: runtime grows while the thread burns, last CPU valid */
	t0 = procstat_thread_open(ps, pid, atomic_load(&b0.tid), &st, &err);
	assert_non_null(t0);
	t1 = procstat_thread_open(ps, pid, atomic_load(&b1.tid), &st, &err);
	assert_non_null(t1);
	assert_int_equal(procstat_thread_tid(t0), atomic_load(&b0.tid));
	assert_int_equal(procstat_thread_read(t0, &s0, &err), PROCSTAT_OK);
	assert_false(s0.runtime_from_ticks);     /* this kernel has schedstat */
	assert_true(s0.num_threads >= 3);
	atomic_store(&b0.go, 1);
	do {
		usleep(20000);
		assert_int_equal(procstat_thread_read(t0, &s1, &err), PROCSTAT_OK);
	} while (s1.runtime_ns < s0.runtime_ns + 30000000ULL);   /* 30 ms */
	atomic_store(&b0.go, 0);
	assert_true(s1.last_cpu >= 0 && s1.last_cpu < ncpu);
	assert_true(s1.state == 'R' || s1.state == 'S');

	/* gone: the thread exits, its open files now fail with ESRCH */
	assert_int_equal(procstat_thread_read(t1, &s, &err), PROCSTAT_OK);
	burner_stop(&b1);
	/* pthread_join returns once the kernel cleared the thread's TID word
	 * (mm_release), a moment before the task is released: its files may
	 * answer for that moment (seen once on a loaded machine) */
	for (int k = 0; k < 200; k++) {
		err.msg[0] = '\0';
		if ((st = procstat_thread_read(t1, &s, &err)) != PROCSTAT_OK)
			break;
		usleep(10000);
	}
	if (st != PROCSTAT_GONE)
		print_message("exited thread read: %s (%s) state %c\n", procstat_status_name(st), err.msg, s.state);
	assert_int_equal(st, PROCSTAT_GONE);
	procstat_thread_free(t1);
	/* a TID that does not exist: gone on open */
	assert_null(procstat_thread_open(ps, pid, atomic_load(&b1.tid), &st, &err));
	assert_int_equal(st, PROCSTAT_GONE);
	assert_int_equal(procstat_list_tasks(ps, pid, &tasks, &n, &err), PROCSTAT_OK);
	for (i = 0; i < n; i++)
		assert_int_not_equal(tasks[i].tid, atomic_load(&b1.tid));
	free(tasks);

	burner_stop(&b0);
	procstat_thread_free(t0);
	procstat_thread_free(NULL);
	procstat_free(ps);
}

static void
test_process_gone(void **state)
{
	struct procstat *ps;
	struct procstat_task *tasks = (void *)1;
	struct procstat_thread *t;
	struct procstat_sample s;
	enum procstat_status st;
	struct llcd_err err;
	int n = 5, status;
	pid_t child;

	assert_non_null(ps = procstat_new(NULL, &err));
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	t = procstat_thread_open(ps, child, child, &st, &err);
	assert_non_null(t);
	assert_int_equal(procstat_thread_read(t, &s, &err), PROCSTAT_OK);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(procstat_thread_read(t, &s, &err), PROCSTAT_GONE);
	assert_int_equal(procstat_list_tasks(ps, child, &tasks, &n, &err), PROCSTAT_GONE);
	assert_null(tasks);
	assert_int_equal(n, 0);
	procstat_thread_free(t);
	procstat_free(ps);
}

static void
test_cpu_busy_live(void **state)
{
	struct procstat *ps;
	struct llcd_err err;
	uint64_t a[64], b[64], sa = 0, sb = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int seen, i;

	assert_non_null(ps = procstat_new(NULL, &err));
	assert_int_equal(procstat_cpu_busy(ps, a, 64, &seen, &err), 0);
	assert_true(seen >= online);
	test_burn_ms(30);
	assert_int_equal(procstat_cpu_busy(ps, b, 64, NULL, &err), 0);
	for (i = 0; i < 64; i++) {
		assert_true(b[i] >= a[i]);
		sa += a[i];
		sb += b[i];
	}
	assert_true(sa > 0);
	assert_true(sb > sa);           /* 30 ms burnt in between: >= 1 tick */
	procstat_free(ps);
}

static void
test_affinity(void **state)
{
	struct cpuset s;
	struct llcd_err err;
	cpu_set_t mine;
	int cpu;

	assert_int_equal(procstat_affinity(gettid(), &s, &err), PROCSTAT_OK);
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	assert_int_equal(cpuset_count(&s), CPU_COUNT(&mine));
	CPUSET_FOREACH(cpu, &s)
		assert_true(CPU_ISSET(cpu, &mine));
	assert_int_equal(procstat_affinity(0x3fffffff, &s, &err), PROCSTAT_GONE);
}

/* ---- recorded fixtures ------------------------------------------------ */

static int
fixture_pid(void)
{
	FILE *f = fopen(FIX "/qemu/pid", "r");
	int pid = -1;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	return pid;
}

/* One reading of thread tid of process pid, which opens: the status of
 * procstat_thread_read(), the sample in *s. */
static enum procstat_status
read_fixture_thread(struct procstat *ps, int pid, int tid, struct procstat_sample *s)
{
	struct procstat_thread *t;
	enum procstat_status st;
	struct llcd_err err;

	t = procstat_thread_open(ps, pid, tid, &st, &err);
	assert_non_null(t);
	st = procstat_thread_read(t, s, &err);
	procstat_thread_free(t);
	return st;
}

/* The thread count once it is want, asked again for up to 2 s: a joined
 * thread's task entry may outlive pthread_join() for a moment (the TID word
 * is cleared in mm_release, before the task is released; CI saw n0 + 2 once
 * on a loaded machine).  Returns the last count read. */
static int
nthreads_settled(struct procstat_proc *p, int want)
{
	struct llcd_err err;
	int n = -1;

	for (int k = 0; k < 200; k++) {
		assert_int_equal(procstat_proc_nthreads(p, &n, &err), PROCSTAT_OK);
		if (n == want)
			break;
		usleep(10000);
	}
	return n;
}

/* The thread count of a process from its task directory's link count: it
 * follows threads made and gone, and a process that is gone reads as gone. */
static void
test_proc_nthreads(void **state)
{
	struct procstat *ps;
	struct procstat_proc *p;
	struct procstat_sample s;
	struct procstat_thread *t;
	enum procstat_status st;
	struct llcd_err err;
	struct burner b0, b1;
	int n = -1, n0, status;
	pid_t child;

	assert_non_null(ps = procstat_new(NULL, &err));
	assert_non_null(p = procstat_proc_open(ps, getpid(), &st, &err));
	assert_true(procstat_proc_by_nlink(p));
	assert_non_null(t = procstat_thread_open(ps, getpid(), getpid(), &st, &err));
	assert_int_equal(procstat_proc_nthreads(p, &n0, &err), PROCSTAT_OK);
	assert_int_equal(procstat_thread_read(t, &s, &err), PROCSTAT_OK);
	assert_int_equal(n0, s.num_threads);    /* what stat's field 20 says */
	burner_start(&b0, "CPU 0/KVM");
	burner_start(&b1, "CPU 1/KVM");
	assert_int_equal(procstat_proc_nthreads(p, &n, &err), PROCSTAT_OK);
	assert_int_equal(n, n0 + 2);
	burner_stop(&b1);
	assert_int_equal(nthreads_settled(p, n0 + 1), n0 + 1);
	burner_stop(&b0);
	assert_int_equal(nthreads_settled(p, n0), n0);
	procstat_thread_free(t);
	procstat_proc_free(p);

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_non_null(p = procstat_proc_open(ps, child, &st, &err));
	assert_int_equal(procstat_proc_nthreads(p, &n, &err), PROCSTAT_OK);
	assert_int_equal(n, 1);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(procstat_proc_nthreads(p, &n, &err), PROCSTAT_GONE);
	procstat_proc_free(p);
	assert_null(procstat_proc_open(ps, child, &st, &err));
	assert_int_equal(st, PROCSTAT_GONE);
	procstat_proc_free(NULL);
	procstat_free(ps);
	(void)state;
}

/* A QEMU 7.2 started by libvirt 9.0: 4 TCG vCPUs, one <iothread>. */
static void
test_fixture_qemu(void **state)
{
	struct procstat *ps;
	struct procstat_task *tasks;
	struct procstat_sample s;
	struct llcd_err err;
	int n, i, pid = fixture_pid(), nemu = 0, nio = 0;

	assert_non_null(ps = procstat_new(FIX "/qemu", &err));
	assert_int_equal(procstat_list_tasks(ps, pid, &tasks, &n, &err), PROCSTAT_OK);
	assert_int_equal(n, 8);
	for (i = 0; i < 4; i++) {
		assert_int_equal(tasks[i].kind, PROCSTAT_VCPU);
		assert_int_equal(tasks[i].index, i);
	}
	for (i = 4; i < n; i++) {
		if (tasks[i].kind == PROCSTAT_IOTHREAD) {
			assert_string_equal(tasks[i].comm, "IO iothread1");
			assert_int_equal(tasks[i].index, 1);
			nio++;
		} else {
			assert_int_equal(tasks[i].kind, PROCSTAT_EMULATOR);
			assert_int_equal(tasks[i].index, -1);
			nemu++;
		}
	}
	assert_int_equal(nio, 1);
	assert_int_equal(nemu, 3);      /* main, call_rcu, IO mon_iothread */
	assert_int_equal(tasks[4].tid, pid);
	assert_int_equal(read_fixture_thread(ps, pid, tasks[0].tid, &s), PROCSTAT_OK);
	assert_int_equal(s.num_threads, 8);
	assert_false(s.runtime_from_ticks);
	assert_true(s.last_cpu == 0 || s.last_cpu == 1);
	/* not procfs: the count is the main thread's stat field 20 */
	struct procstat_proc *p;
	enum procstat_status st;
	assert_non_null(p = procstat_proc_open(ps, pid, &st, &err));
	assert_false(procstat_proc_by_nlink(p));
	assert_int_equal(procstat_proc_nthreads(p, &n, &err), PROCSTAT_OK);
	assert_int_equal(n, 8);
	procstat_proc_free(p);
	free(tasks);
	procstat_free(ps);
}

/* Hand-written edge cases: a comm with spaces and parentheses, a thread
 * without schedstat, a name that only looks like a vCPU, offline CPUs. */
static void
test_fixture_edge(void **state)
{
	struct procstat *ps;
	struct procstat_task *tasks;
	struct procstat_sample s;
	enum procstat_status st;
	struct llcd_err err;
	uint64_t busy[8], tick;
	int n, seen;

	assert_non_null(ps = procstat_new(FIX "/edge", &err));
	tick = procstat_tick_ns(ps);
	assert_int_equal(procstat_list_tasks(ps, 100, &tasks, &n, &err), PROCSTAT_OK);
	assert_int_equal(n, 5);
	assert_int_equal(tasks[0].tid, 104);            /* CPU 2/KVM */
	assert_int_equal(tasks[0].index, 2);
	assert_int_equal(tasks[1].tid, 102);            /* CPU 12/KVM */
	assert_int_equal(tasks[1].kind, PROCSTAT_VCPU);
	assert_int_equal(tasks[1].index, 12);
	assert_int_equal(tasks[2].tid, 100);
	assert_int_equal(tasks[3].tid, 101);
	assert_string_equal(tasks[3].comm, "a) (b c");
	assert_int_equal(tasks[3].kind, PROCSTAT_EMULATOR);
	assert_int_equal(tasks[4].tid, 103);            /* "CPU 1/KVMx" */
	assert_int_equal(tasks[4].kind, PROCSTAT_EMULATOR);
	free(tasks);

	assert_int_equal(read_fixture_thread(ps, 100, 101, &s), PROCSTAT_OK);
	assert_int_equal(s.state, 'R');
	assert_int_equal(s.last_cpu, 1);
	assert_int_equal(s.num_threads, 5);
	assert_int_equal(s.runtime_ns, 123456789);
	assert_int_equal(s.wait_ns, 42);

	/* no schedstat */
	assert_int_equal(read_fixture_thread(ps, 100, 102, &s), PROCSTAT_OK);
	assert_true(s.runtime_from_ticks);
	assert_int_equal(s.runtime_ns, 400 * tick);
	assert_int_equal(s.last_cpu, 3);

	/* caught exiting: thread count 0 (no signal handlers any more) */
	assert_int_equal(read_fixture_thread(ps, 100, 104, &s), PROCSTAT_GONE);

	assert_null(procstat_thread_open(ps, 100, 999, &st, &err));
	assert_int_equal(st, PROCSTAT_GONE);
	assert_int_equal(procstat_list_tasks(ps, 999, &tasks, &n, &err), PROCSTAT_GONE);

	/* cpu1 offline: absent from /proc/stat, reported as 0 */
	assert_int_equal(procstat_cpu_busy(ps, busy, 8, &seen, &err), 0);
	assert_int_equal(seen, 4);
	assert_int_equal(busy[0], (100 + 0 + 50 + 1 + 2 + 3) * tick);
	assert_int_equal(busy[1], 0);
	assert_int_equal(busy[2], (150 + 10 + 50 + 2 + 2 + 2) * tick);
	assert_int_equal(busy[3], (150 + 0 + 100 + 2 + 2 + 2) * tick);
	assert_int_equal(busy[4], 0);
	procstat_free(ps);
}

static void
test_parse_errors(void **state)
{
	struct procstat_sample s;
	struct llcd_err err;
	uint64_t r, w, busy[4];
	bool complete;
	int seen;
	const char *trunc = "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12";
	const char *noparen = "7 x S 1 2 3";
	const char *cpus = "cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpu1 1 2";

	assert_int_equal(procstat_parse_stat(trunc, strlen(trunc), 1, &s, &err), -1);
	assert_string_equal(err.msg, "stat: field 16 missing or not a number");
	assert_int_equal(procstat_parse_stat(noparen, strlen(noparen), 1, &s, &err), -1);
	assert_string_equal(err.msg, "stat: no ') ' after the command name");
	assert_int_equal(procstat_parse_schedstat("12 x", 4, &r, &w, &err), -1);
	assert_string_equal(err.msg, "schedstat: expected three numbers");
	assert_int_equal(procstat_parse_schedstat("99999999999999999999 1 1", 24, &r, &w, &err), -1);
	/* a buffer that ends inside the cpu lines: not complete */
	assert_int_equal(procstat_parse_cpu_stat(cpus, strlen(cpus), 1, busy, 4, &seen, &complete, &err), 0);
	assert_false(complete);
	assert_int_equal(seen, 1);
	assert_int_equal(busy[0], 1 + 2 + 3 + 6 + 7 + 8);
	assert_int_equal(procstat_parse_cpu_stat("cpu0 1 2 3\nintr 1\n", 18, 1, busy, 4, &seen, &complete, &err), -1);
	assert_string_equal(err.msg, "stat: line 1: cpu0 has 3 fields, need 8");
	assert_int_equal(procstat_parse_cpu_stat("intr 1\n", 7, 1, busy, 4, &seen, &complete, &err), -1);
	assert_string_equal(err.msg, "stat: line 1 is not the cpu line");
}

static void
test_classify(void **state)
{
	int idx;

	assert_int_equal(procstat_classify("CPU 0/KVM", &idx), PROCSTAT_VCPU);
	assert_int_equal(idx, 0);
	assert_int_equal(procstat_classify("CPU 287/TCG", &idx), PROCSTAT_VCPU);
	assert_int_equal(idx, 287);
	assert_int_equal(procstat_classify("CPU /KVM", &idx), PROCSTAT_EMULATOR);
	assert_int_equal(idx, -1);
	assert_int_equal(procstat_classify("CPU 1/HVF", &idx), PROCSTAT_EMULATOR);
	assert_int_equal(procstat_classify("CPU 1234567890/K", &idx), PROCSTAT_EMULATOR);
	assert_int_equal(procstat_classify("IO iothread3", &idx), PROCSTAT_IOTHREAD);
	assert_int_equal(idx, 3);
	assert_int_equal(procstat_classify("IO mon_iothread", &idx), PROCSTAT_EMULATOR);
	assert_int_equal(procstat_classify("qemu-system-x86", &idx), PROCSTAT_EMULATOR);
	assert_string_equal(procstat_kind_name(PROCSTAT_IOTHREAD), "iothread");
	assert_string_equal(procstat_status_name(PROCSTAT_GONE), "gone");
}

TEST_MAIN(
	cmocka_unit_test(test_real_threads),
	cmocka_unit_test(test_process_gone),
	cmocka_unit_test(test_proc_nthreads),
	cmocka_unit_test(test_cpu_busy_live),
	cmocka_unit_test(test_affinity),
	cmocka_unit_test(test_fixture_qemu),
	cmocka_unit_test(test_fixture_edge),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_classify))
