// SPDX-License-Identifier: GPL-2.0-or-later
/* procstat.h - per-thread and per-CPU samples from /proc.
 *
 * What the agent reads each period, and how:
 *   /proc/<pid>/task/<tid>/schedstat  runtime and run-queue wait, in ns
 *   /proc/<pid>/task/<tid>/stat       field 39: the CPU the thread last ran
 *                                     on; field 20: the process's thread
 *                                     count (a cheap "threads changed" hint)
 *   /proc/stat                        per-CPU busy time (USER_HZ ticks)
 * The per-thread files are opened once (procstat_thread_open) and re-read
 * with pread at offset 0, which makes the kernel regenerate them: two
 * syscalls per thread per period, the least the kernel allows for ns
 * runtime plus last CPU (no single per-thread file has both). The open
 * descriptors pin the task's struct pid, so a TID reused by a new thread
 * can never be mistaken for the old one: reads of a vanished thread fail
 * with ESRCH and are reported as PROCSTAT_GONE. So is a thread caught
 * exiting (state X, or thread count 0 once it has dropped its signal
 * handlers but is not yet reaped).
 *
 * QEMU names its threads (libvirt starts it with debug-threads=on):
 *   "CPU <n>/KVM", "CPU <n>/TCG"      vCPU n                (PROCSTAT_VCPU)
 *   "IO <id>" for id "iothread<n>"    a libvirt <iothread>  (PROCSTAT_IOTHREAD)
 *   everything else, including the main thread, "IO mon_iothread",
 *   "worker", "call_rcu", "vnc_worker"  emulator threads  (PROCSTAT_EMULATOR)
 * which is exactly how libvirt itself splits vcpupin / iothreadpin /
 * emulatorpin.
 *
 * All paths hang off a proc root ("/proc" normally; a fixture directory in
 * tests).
 */
#ifndef LLCD_PROCSTAT_H
#define LLCD_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"

#define PROCSTAT_COMM_MAX 64            /* kernel: 16; kthreads up to 64 */

enum procstat_status {
	PROCSTAT_OK = 0,
	PROCSTAT_GONE,                  /* thread or process vanished (ENOENT, ESRCH) */
	PROCSTAT_ERROR,                 /* anything else; err says what */
};

enum procstat_kind {
	PROCSTAT_VCPU,
	PROCSTAT_EMULATOR,
	PROCSTAT_IOTHREAD,
};

struct procstat_task {
	int tid;
	enum procstat_kind kind;
	int index;                      /* VCPU: vCPU number; IOTHREAD: n of iothread<n>; else -1 */
	char comm[PROCSTAT_COMM_MAX];
};

struct procstat_sample {
	uint64_t runtime_ns;            /* cumulative CPU time of the thread */
	uint64_t wait_ns;               /* cumulative run-queue wait; 0 when unknown */
	int last_cpu;                   /* stat field 39 */
	int num_threads;                /* stat field 20 (whole process) */
	char state;                     /* stat field 3: R, S, D, ... */
	bool runtime_from_ticks;        /* no schedstat: runtime is utime+stime (ticks) */
};

struct procstat;
struct procstat_thread;

/* procroot NULL means "/proc". Reads sysconf(_SC_CLK_TCK) once. */
struct procstat *procstat_new(const char *procroot, struct llcd_err *err);
void procstat_free(struct procstat *ps);
uint64_t procstat_tick_ns(const struct procstat *ps);

/* The threads of process pid, classified by name, sorted: vCPUs by vCPU
 * number first, then the rest by TID. *tasks is malloc'd (free()); on
 * PROCSTAT_GONE (no such process) *tasks is NULL and *n 0. Threads that
 * exit while the directory is read are left out. */
enum procstat_status procstat_list_tasks(struct procstat *ps, int pid,
    struct procstat_task **tasks, int *n, struct llcd_err *err);

/* Classify one thread name; *index as in struct procstat_task. */
enum procstat_kind procstat_classify(const char *comm, int *index);
const char *procstat_kind_name(enum procstat_kind k);
const char *procstat_status_name(enum procstat_status s);

/* Open the sampling files of one thread. NULL with *st = PROCSTAT_GONE
 * when the thread does not exist, PROCSTAT_ERROR (err set) otherwise.
 * Without schedstat (CONFIG_SCHED_INFO=n) runtime falls back to
 * utime+stime from stat. */
struct procstat_thread *procstat_thread_open(struct procstat *ps, int pid,
    int tid, enum procstat_status *st, struct llcd_err *err);
void procstat_thread_free(struct procstat_thread *t);
int procstat_thread_tid(const struct procstat_thread *t);
/* One sample: two preads (one without schedstat). */
enum procstat_status procstat_thread_read(struct procstat_thread *t,
    struct procstat_sample *out, struct llcd_err *err);

/* A process's thread count, for the "threads changed" hint where the
 * per-thread files are not read (the tracer samples). procfs gives
 * <root>/<pid>/task the link count threads + 2 at every stat of it
 * (proc_task_getattr), so one fstat of the directory, kept open, answers
 * without the kernel formatting the 52 fields of a stat file (do_task_stat,
 * the dearest /proc read there is). A root that is not procfs (a fixture
 * directory, where a directory's link count is its subdirectories + 2)
 * has no such count: there field 20 of the main thread's stat is read, as
 * procstat_thread_read() does. The descriptor pins the process's struct
 * pid as the thread files do: once it is gone the count is 0, reported as
 * PROCSTAT_GONE, whoever reuses the PID. */
struct procstat_proc;
struct procstat_proc *procstat_proc_open(struct procstat *ps, int pid,
    enum procstat_status *st, struct llcd_err *err);
void procstat_proc_free(struct procstat_proc *p);
/* The thread count: one fstat on procfs (else two preads). */
enum procstat_status procstat_proc_nthreads(struct procstat_proc *p, int *n,
    struct llcd_err *err);
/* Whether the count comes from the link count (the root is procfs). */
bool procstat_proc_by_nlink(const struct procstat_proc *p);

/* Per-CPU busy time (user+nice+system+irq+softirq+steal; guest time is
 * already inside user) in ns, busy_ns[cpu] for cpu < ncpus; CPUs that
 * /proc/stat does not list (offline) get 0. *ncpus_seen (may be NULL) is
 * the highest CPU listed + 1. /proc/stat is kept open and pread. */
int procstat_cpu_busy(struct procstat *ps, uint64_t *busy_ns, int ncpus,
    int *ncpus_seen, struct llcd_err *err);

/* The kernel's affinity of a thread (sched_getaffinity; libvirt's stored
 * vcpupin can differ from it). */
enum procstat_status procstat_affinity(int tid, struct cpuset *out,
    struct llcd_err *err);

/* Parsers, exposed for the fixture tests. buf need not be terminated. */
int procstat_parse_stat(const char *buf, size_t len, uint64_t tick_ns,
    struct procstat_sample *out, struct llcd_err *err);
int procstat_parse_schedstat(const char *buf, size_t len, uint64_t *run_ns,
    uint64_t *wait_ns, struct llcd_err *err);
/* Returns 0, or -1 with err; *complete (may be NULL) is false when buf
 * ended inside the cpu lines (the caller's buffer was too small). */
int procstat_parse_cpu_stat(const char *buf, size_t len, uint64_t tick_ns,
    uint64_t *busy_ns, int ncpus, int *ncpus_seen, bool *complete,
    struct llcd_err *err);

#endif
