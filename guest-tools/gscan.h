// SPDX-License-Identifier: GPL-2.0-or-later
/* gscan.h - llc-guest's view of the guest's processes: snapshots of /proc
 * and the hot processes between two snapshots.
 *
 * A snapshot reads, for every user process (kernel threads are skipped),
 *   /proc/<pid>/stat                   comm, flags (PF_KTHREAD)
 *   /proc/<pid>/task/<tid>/stat        utime + stime (fields 14, 15, in
 *                                      clock ticks) and the CPU the thread
 *                                      last ran on (field 39)
 * The per-thread files are the only per-thread numbers: /proc/<tid>/stat
 * of a non-leader thread shows the whole process (docs/e2e.md, "Traps").
 * All paths hang off a proc root ("/proc"; a fixture tree in tests).
 *
 * gscan_hot() compares two snapshots taken `window` apart: a thread's
 * utilisation is its CPU time over the elapsed time (a thread absent from
 * the older snapshot counts from 0), a process's share is the sum over its
 * threads (1.0 = one CPU), a thread is busy at `busy_share` or more, and a
 * process is hot when its share is at least `hot_share` and it has two or
 * more busy threads. Its vCPUs are the CPUs its busy threads last ran on.
 */
#ifndef LLCD_GSCAN_H
#define LLCD_GSCAN_H

#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "gtopo.h"

#define GSCAN_COMM 64                   /* comm is 16 in the kernel */
#define GSCAN_MAX_THREADS 1000000       /* refuse to track more */

struct gscan_thread {
	int tid;
	int cpu;                        /* last CPU (field 39), -1 unknown */
	uint64_t ticks;                 /* utime + stime */
};

struct gscan_proc {
	int pid;
	char comm[GSCAN_COMM];
	int first, nth;                 /* its threads in snap->threads, by tid */
};

struct gscan_snap {
	uint64_t t_ns;                  /* when it was taken */
	int nprocs, cap_procs;
	struct gscan_proc *procs;       /* by pid */
	int nthreads, cap_threads;
	struct gscan_thread *threads;
};

struct gscan_snap *gscan_snap_new(void);
void gscan_snap_free(struct gscan_snap *s);

/* Read every user process under proc_root into s (replacing what it held).
 * Processes and threads that vanish while being read are skipped. Returns 0
 * or -1 with err set (proc_root unreadable, out of memory). */
int gscan_read(struct gscan_snap *s, const char *proc_root, uint64_t t_ns,
               struct llcd_err *err);

/* The process with pid, or NULL. */
const struct gscan_proc *gscan_find(const struct gscan_snap *s, int pid);

/* Parse one /proc/.../stat line: comm (into comm, GSCAN_COMM), flags
 * (field 9), utime + stime and processor. Returns 0, or -1 if malformed. */
int gscan_parse_stat(const char *line, char *comm, unsigned long *flags,
                     uint64_t *ticks, int *cpu);

struct gscan_opts {
	double hot_share;               /* 0.5: half a CPU */
	double busy_share;              /* 0.25 */
	long hz;                        /* clock ticks per second (USER_HZ) */
};

struct gscan_hot_thread {
	int tid;
	int cpu;
	double util;                    /* share of one CPU over the window */
};

struct gscan_hot {
	int pid;
	char comm[GSCAN_COMM];
	int nthreads;                   /* all threads now */
	int busy_threads;
	double share;                   /* CPUs used over the window */
	struct cpuset vcpus;            /* CPUs its busy threads last ran on */
	struct cpuset llcs;             /* their virtual LLCs */
	int nth;                        /* every thread, busiest first */
	struct gscan_hot_thread *th;
};

struct gscan_hotlist {
	int n, cap;
	struct gscan_hot *p;            /* by share, largest first */
};

void gscan_hotlist_free(struct gscan_hotlist *l);      /* frees contents */

/* Hot processes between old and cur (cur later). Returns 0 or -1 on
 * out-of-memory. */
int gscan_hot(const struct gscan_snap *old, const struct gscan_snap *cur,
              const struct gtopo *topo, const struct gscan_opts *o,
              struct gscan_hotlist *out, struct llcd_err *err);

#endif
