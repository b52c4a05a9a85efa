// SPDX-License-Identifier: GPL-2.0-or-later
/* tracer.h - llcd's in-kernel tracer of vCPU threads (tracer.bpf.c), the
 * user-space half: load and attach the BPF programs, register the threads
 * llcd tracks, read their figures once a period.
 *
 * What it gives per tracked thread (cumulative, like /proc's schedstat):
 * on-CPU time, run delay (runnable but waiting for a CPU), the CPU it last
 * ran on, and whether it exited; per domain (one QEMU process) the wakeups
 * between its vCPU threads during the last period, as waker -> wakee
 * edges. A wakeup from a thread that is not a registered vCPU of the same
 * domain (QEMU's main loop, an I/O thread, a timer interrupt) is no edge.
 *
 * Reading costs no syscall per thread: one run of a syscall program a
 * period (tracer_refresh) copies the kernel's counters of every tracked
 * thread into a BPF_F_MMAPABLE array mapped into llcd; the edges come out of one
 * lookup-and-delete batch over the edge hash per period
 * (tracer_drain_edges), which also empties it for the next period.
 *
 * Registration keys a TID map (not task storage: task storage is reached
 * from user space only through a pidfd, and a pidfd of a thread that is
 * not a thread-group leader needs Linux 6.9's PIDFD_THREAD; the TID is
 * what llcd has from /proc): a direct TID -> slot array in the programs'
 * .bss, behind a bitmap of tracked TIDs. An exiting thread is forgotten by
 * the programs themselves (sched_process_exit), so a reused TID is never
 * mistaken for a tracked thread; its slot says `exited` until llcd removes
 * it.
 *
 * Memory is bounded by compile-time caps (tracer_abi.h): TRACER_MAX_THREADS
 * tracked threads (about 1.5 MB of slots, 8.5 MB of TID bitmap and map),
 * TRACER_MAX_DOMAINS domains, TRACER_MAX_EDGES distinct edges per period
 * in all and TRACER_EDGES_PER_DOMAIN per domain. Registrations past a cap
 * fail and are counted (tracer_stats); wakeups past an edge cap are
 * counted per domain as dropped.
 *
 * Needs: BTF (/sys/kernel/btf/vmlinux), CAP_BPF and CAP_PERFMON (or root),
 * a kernel with tp_btf and BPF_F_MMAPABLE (5.5+) and the bpf_task_from_pid
 * kfunc in syscall programs (6.2+). tracer_new()
 * says in err which of these failed, in one line, for the log and for
 * `llcctl topology`.
 */
#ifndef LLCD_TRACER_H
#define LLCD_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct tracer;

/* Why the tracer cannot run here, without trying to load it (no BTF, not
 * privileged); NULL when it may. For a quick answer before tracer_new(). */
const char *tracer_unavailable(void);

/* Load, verify and attach the programs. NULL with err set on failure. */
struct tracer *tracer_new(struct llcd_err *err);
/* Detach and unload. NULL is a no-op. */
void tracer_free(struct tracer *t);

/* A domain: one QEMU process. Returns a handle >= 0, or -1 (err set) when
 * TRACER_MAX_DOMAINS are in use (counted in domains_refused). */
int tracer_domain_add(struct tracer *t, struct llcd_err *err);
/* Forget a domain and every thread registered in it. */
void tracer_domain_remove(struct tracer *t, int dom);

/* Track thread tid as vCPU vcpu (-1: tracked, not a vCPU: its wakeups make
 * no edge) of domain dom. Returns a slot >= 0, or -1 (err set) when
 * TRACER_MAX_THREADS are tracked (counted in threads_refused) or the TID
 * is already tracked. Its figures are there from the next tracer_refresh. */
int tracer_thread_add(struct tracer *t, int dom, int tid, int vcpu, struct llcd_err *err);
void tracer_thread_remove(struct tracer *t, int slot);

struct tracer_sample {
	uint64_t runtime_ns;            /* on-CPU time since the thread started */
	uint64_t delay_ns;              /* runnable-but-waiting time, the same */
	int last_cpu;                   /* -1: not sampled since registration */
	bool exited;
};
/* Copy every tracked thread's figures from the kernel into the mapping:
 * one run of the syscall program llcd_sample over the tracked threads (one
 * BPF_PROG_TEST_RUN; each thread looked up by its TID).
 * Once a period, before tracer_thread_read. Returns 0, or -1 with err. */
int tracer_refresh(struct tracer *t, struct llcd_err *err);
/* Whether a thread was registered since the last refresh (its slot has no
 * figures yet). */
bool tracer_stale(const struct tracer *t);
/* One thread's figures as of the last tracer_refresh, read from the
 * mapping (no syscall): the kernel's cumulative counters, the numbers
 * /proc/TID/schedstat shows. Returns 0, or -1 for a slot not in use. */
int tracer_thread_read(const struct tracer *t, int slot, struct tracer_sample *out);

struct tracer_edge {
	int waker, wakee;               /* vCPU numbers */
	uint64_t count;                 /* wakeups during the period */
};
/* Take the edges counted since the last drain, for every domain (one
 * batch syscall or a few). Returns the number of edges taken, or -1 with
 * err set. */
int tracer_drain_edges(struct tracer *t, struct llcd_err *err);
/* A domain's edges from the last drain, strongest first (valid until the
 * next drain), and the wakeups between its vCPUs that the caps dropped
 * since the drain before. Returns the number of edges. */
int tracer_domain_edges(const struct tracer *t, int dom,
    const struct tracer_edge **edges, uint64_t *dropped);

/* Whether wakeups raised in interrupt context (timers, device interrupts)
 * are told apart from a thread's own (false: the kernel's BTF did not say
 * where the preempt count is; such wakeups may then count as edges). */
bool tracer_irq_check(const struct tracer *t);

struct tracer_stats {
	int threads, domains;           /* in use */
	uint64_t threads_refused;       /* thread registrations past the cap */
	uint64_t domains_refused;
	uint64_t edges_dropped;         /* wakeups past an edge cap, all domains */
	uint64_t drains, drain_syscalls;
	uint64_t refreshes;             /* runs of llcd_sample */
	uint64_t copied;                /* ... threads whose figures they copied
	                                 * (one that slept through is not) */
};
void tracer_stats(const struct tracer *t, struct tracer_stats *st);

/* The programs' own cost, from kernel.bpf_stats_enabled (0 while that is
 * off): run time and runs summed over the attached programs, and per
 * program. */
struct tracer_prog_stats {
	uint64_t run_time_ns, run_cnt;
	struct {
		const char *name;
		uint64_t run_time_ns, run_cnt;
	} prog[3];
	int nprogs;
};
int tracer_prog_stats(const struct tracer *t, struct tracer_prog_stats *out,
    struct llcd_err *err);

#endif
