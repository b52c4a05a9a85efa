// SPDX-License-Identifier: GPL-2.0-or-later
/* tracer.bpf.c - llcd's in-kernel tracer of vCPU threads (CO-RE; built with
 * clang -target bpf against the kernel types of vmlinux.h beside it, relocated
 * to the running kernel's BTF by libbpf; loaded by tracer.c through a
 * bpftool skeleton).
 *
 * For the threads llcd registered (tid_slot -> slot in the mmap'ed threads
 * array):
 *   llcd_sample    a syscall program llcd runs once a period (one
 *                  BPF_PROG_TEST_RUN): for every slot in use, the kernel's
 *                  own cumulative figures of its thread copied into the
 *                  slot when they changed: on-CPU time
 *                  (se.sum_exec_runtime), run delay (sched_info.run_delay:
 *                  runnable but waiting) and the CPU it is on or last ran
 *                  on. /proc's schedstat shows the same numbers. The task
 *                  is reached through a reference kept per slot (tasks:
 *                  taken with bpf_task_from_pid at the slot's first copy,
 *                  dropped when the slot is freed or its thread exited), so
 *                  a period costs one read of each thread's on-CPU time
 *                  (and queued state), no TID lookup; a thread that slept
 *                  through the period (the same on-CPU time, not queued now
 *                  nor at the last copy) is not written
 *   sched_waking   the waker first: when it is a tracked vCPU thread (its
 *                  tracked bit; `current`, whose TID is in cache) and the
 *                  wakee a vCPU thread of the same QEMU process, one
 *                  waker -> wakee edge; a wakeup raised in interrupt
 *                  context (timer, I/O completion) is not an edge, since
 *                  `current` there is whoever happened to run
 *   sched_process_exit  forget an exiting tracked thread (its TID may be
 *                  reused) and mark its slot exited
 * No program runs on a context switch, and a wakeup touches nothing of the
 * wakee unless its waker is tracked: one by the idle task (an idle vCPU's
 * timer tick) returns on the TID 0 of `current`, one by an untracked task
 * (nearly every other on a host) after one load of a bitmap.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "tracer_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TRACER_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct tracer_slot);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TRACER_MAX_DOMAINS);
	__type(key, __u32);
	__type(value, struct tracer_domain);
} domains SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACER_MAX_EDGES);
	__type(key, struct tracer_edge_key);
	__type(value, __u64);
} edges SEC(".maps");

/* Set by tracer.c before loading, from the kernel's BTF: where this CPU's
 * preempt count is relative to this CPU's runqueue (both per-CPU variables,
 * so their distance is the same on every CPU). 0: not known. */
const volatile __s64 preempt_from_rq = 0;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* The kernel's struct rq, one field of it (CO-RE: matched by name without
 * the ___ suffix, its offset relocated to the running kernel's). */
struct rq___llcd {
	unsigned int nr_running;
} __attribute__((preserve_access_index));

#define IRQ_BITS 0x00ff0100u    /* NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET */

/* One bit per possible TID (PID_MAX_LIMIT is 2^22 on 64-bit kernels): the
 * tracked bit, set by tracer.c at registration, cleared at removal and exit
 * (untracked wakers, nearly every wakeup on a host, cost one load of it and
 * no map lookup). */
__u64 tid_bits[TRACER_TID_LIMIT / 64];
/* TID -> slot + 1 (0: not tracked), written by tracer.c: one load instead
 * of a hash lookup for the tracked ones (8 MiB). */
__u16 tid_slot[TRACER_TID_LIMIT];

/* The index of tid's word in tid_bits. */
static __always_inline __u32
bits_word(__u32 tid)
{
	__u32 w = tid >> 6;

	/* the mask bounds the index for the verifier; the empty asm keeps
	 * clang from folding it into the range check */
	asm volatile("" : "+r"(w));
	w &= TRACER_TID_LIMIT / 64 - 1;
	return w;
}

static __always_inline bool
maybe_tracked(__u32 tid)
{
	if (tid >= TRACER_TID_LIMIT)
		return false;
	return (tid_bits[bits_word(tid)] >> (tid & 63)) & 1;
}

static __always_inline struct tracer_slot *
slot_of(__u32 tid)
{
	__u32 w = tid, idx;

	if (tid == 0 || !maybe_tracked(tid))
		return 0;
	asm volatile("" : "+r"(w));
	w &= TRACER_TID_LIMIT - 1;
	idx = tid_slot[w];
	if (idx == 0 || idx > TRACER_MAX_THREADS)
		return 0;
	idx -= 1;
	return bpf_map_lookup_elem(&threads, &idx);
}

/* Whether this runs in interrupt context (a timer or device interrupt, a
 * softirq, an NMI), where `current` is only whoever happened to be on the
 * CPU and a wakeup is nobody's edge: the preempt count's interrupt bits.
 * Kernels built without CONFIG_KALLSYMS_ALL cannot resolve the per-CPU
 * __preempt_count as a ksym, so it is reached from this CPU's runqueue
 * (current->se.cfs_rq->rq; CONFIG_FAIR_GROUP_SCHED) at the distance
 * tracer.c found in the BTF. Without either: not checked (timer wakeups
 * then can look like edges; tracer.c logs it). */
static __always_inline bool
in_irq_context(struct task_struct *cur)
{
	struct cfs_rq *cfs;
	struct rq *rq;
	struct rq___llcd *at;
	__u32 pc;

	if (preempt_from_rq == 0)
		return false;
	if (!bpf_core_field_exists(((struct sched_entity *)0)->cfs_rq))
		return false;
	/* direct loads through the BTF pointers (no helper call): the
	 * lines are in cache, current's, its runqueue's and the count's */
	cfs = cur->se.cfs_rq;
	if (!cfs)
		return false;
	rq = cfs->rq;
	if (!rq)
		return false;
	/* the count read by a direct load through a read-only cast (a load
	 * the kernel's fault handler covers, as bpf_probe_read_kernel would
	 * be, without the helper call): the cast is to a struct rq whose
	 * nr_running lies where the count is */
	at = bpf_rdonly_cast((void *)((__u64)rq + preempt_from_rq - bpf_core_field_offset(struct rq___llcd, nr_running)),
	                     bpf_core_type_id_kernel(struct rq___llcd));
	pc = at->nr_running;
	return (pc & IRQ_BITS) != 0;
}

/* The slot's sequence count, odd while a program updates the slot (only
 * the CPU the thread is on, or its waker, writes it). On x86 the JIT keeps
 * stores in program order and the CPU makes them visible in that order, so
 * a compiler barrier is all a plain increment needs; elsewhere an atomic
 * add (a full barrier). */
#define compiler_barrier() asm volatile("" ::: "memory")
static __always_inline void
seq_bump(struct tracer_slot *s)
{
#if defined(__TARGET_ARCH_x86)
	compiler_barrier();
	*(volatile __u32 *)&s->seq = s->seq + 1;
	compiler_barrier();
#else
	__sync_fetch_and_add(&s->seq, 1);
#endif
}

static __always_inline void
count_edge(struct tracer_slot *waker, struct tracer_slot *wakee)
{
	struct tracer_edge_key k = {};
	struct tracer_domain *d;
	__u32 dom = wakee->dom;
	__u64 one = 1, *c;

	d = bpf_map_lookup_elem(&domains, &dom);
	if (!d || d->id != wakee->dom_id)
		return;
	k.dom_id = wakee->dom_id;
	k.waker = (__u16)waker->vcpu;
	k.wakee = (__u16)wakee->vcpu;
	c = bpf_map_lookup_elem(&edges, &k);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	if (d->inserted - d->drained >= TRACER_EDGES_PER_DOMAIN) {
		__sync_fetch_and_add(&d->dropped, 1);
		return;
	}
	if (bpf_map_update_elem(&edges, &k, &one, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&d->inserted, 1);
		return;
	}
	c = bpf_map_lookup_elem(&edges, &k);     /* lost a race to insert it */
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		__sync_fetch_and_add(&d->dropped, 1);   /* the map is full */
}

SEC("tp_btf/sched_waking")
int BPF_PROG(llcd_waking, struct task_struct *p)
{
	struct tracer_slot *wakee, *waker;
	/* current's TID by a direct load from the task, the pointer the
	 * interrupt test takes too: one helper for both, where
	 * bpf_get_current_pid_tgid() was a second call reading the same line */
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cur = (__u32)task->pid;

	/* the waker first: the idle task (TID 0: a timer tick on an idle
	 * CPU) or untracked for nearly every wakeup on a host; nothing of
	 * the wakee is read before */
	if (cur == 0 || !maybe_tracked(cur))
		return 0;
	/* then interrupt context (a timer tick that came while a vCPU ran:
	 * most wakeups by a tracked `current`), on lines in cache, before
	 * the waker's slot and anything of the wakee */
	if (in_irq_context(task))
		return 0;
	waker = slot_of(cur);
	if (!waker || waker->vcpu < 0)
		return 0;
	wakee = slot_of((__u32)p->pid);
	if (!wakee || waker == wakee || wakee->vcpu < 0 ||
	    waker->dom != wakee->dom || waker->dom_id != wakee->dom_id)
		return 0;
	count_edge(waker, wakee);
	return 0;
}

/* The CPU a task is on or last ran on: wake_cpu, which the kernel sets
 * with task_cpu() at every change of CPU (__set_task_cpu) and which lies
 * in the line of on_rq, read anyway; task_cpu() itself (thread_info.cpu)
 * is in the task's first line, which every sleep and wakeup writes (its
 * state), one more line a copy would miss. They differ only for a
 * sleeping task that NUMA balancing swapped (migrate_swap: it will be
 * woken on wake_cpu, within its affinity): the CPU it goes to next. */
static __always_inline __s32
task_cpu_of(struct task_struct *t)
{
	return t->wake_cpu;
}

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

/* Per slot, the address of its thread's task_struct, found by llcd_sample
 * at the slot's first copy (tracer.c sets last_cpu to -1 at registration;
 * the slot may be a reused one). Read back as a read-only pointer
 * (bpf_rdonly_cast: every load of it is one the kernel's fault handler
 * covers), and only while the slot's thread is registered and has not
 * exited: sched_process_exit marks the slot exited before the task is
 * released, and the task's memory is freed only after an RCU grace period
 * from then, so a read under bpf_rcu_read_lock that still sees the slot not
 * exited reads the live task. (A reference, a kptr, would need type tags in
 * BTF that clang 14 does not emit.) Not mmap'ed: only the programs see the
 * addresses. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACER_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} tasks SEC(".maps");

/* Slots below this are looked at by llcd_sample (set by tracer.c). */
__u32 nslots = 0;
/* Threads whose figures llcd_sample copied, all runs (for tracer_stats;
 * one caller runs it at a time) */
__u64 copied = 0;

/* Whether the task may run before it is woken again: queued (running or
 * runnable), but not asleep with its dequeue delayed (EEVDF, 6.12+). */
static __always_inline bool
queued(struct task_struct *t)
{
	if (!t->on_rq)
		return false;
	if (bpf_core_field_exists(t->se.sched_delayed) && t->se.sched_delayed)
		return false;
	return true;
}

/* The task's figures into the slot; hot: queued now, so that it is copied
 * at the next run whatever its on-CPU time says (it may be waiting). */
static __always_inline void
copy_figures(struct tracer_slot *s, struct task_struct *t, bool hot)
{
	seq_bump(s);
	s->runtime_ns = t->se.sum_exec_runtime;
	s->delay_ns = t->sched_info.run_delay;
	s->last_cpu = task_cpu_of(t);
	seq_bump(s);
	s->hot = hot;
	copied++;
}

/* Slot k (below nslots) copied when it moved; 1: stop the pass (a slot
 * past the arrays, never for k < TRACER_MAX_THREADS). */
static __always_inline long
sample_one(__u32 k)
{
	struct tracer_slot *s;
	struct task_struct *t;
	__u64 *addr;
	__u32 tid;
	bool q;

	s = bpf_map_lookup_elem(&threads, &k);
	addr = bpf_map_lookup_elem(&tasks, &k);
	if (!s || !addr)
		return 1;
	tid = s->tid;
	if (tid == 0 || tid >= TRACER_TID_LIMIT)
		return 0;
	if (s->last_cpu < 0 || *addr == 0) {
		/* registered since the last run, or not found then: looked up
		 * by TID, copied, its address kept */
		if (s->exited)
			return 0;
		t = bpf_task_from_pid((s32)tid);
		if (!t)
			return 0;
		copy_figures(s, t, queued(t));
		*addr = (__u64)t;
		bpf_task_release(t);
		return 0;
	}
	/* exited read inside the read-side section (llcd_sample's): see
	 * tasks above */
	if (!*(volatile __u32 *)&s->exited) {
		t = bpf_rdonly_cast((void *)*addr, bpf_core_type_id_kernel(struct task_struct));
		/* the same on-CPU time, not queued now nor at the last copy: it
		 * has not run, its figures are the ones in the slot (a sleeping
		 * task's run delay and CPU change only when it is woken and runs
		 * or is queued) */
		q = queued(t);
		if (q || s->hot || t->se.sum_exec_runtime != s->runtime_ns)
			copy_figures(s, t, q);
	}
	return 0;
}

/* Slots i * SAMPLE_BATCH ... of the pass's *ctx slots: a few slots a
 * callback, not one (a call and its frame per slot less). */
#define SAMPLE_BATCH 4
static long
sample_batch(__u32 i, void *ctx)
{
	__u32 n = *(__u32 *)ctx, k = i * SAMPLE_BATCH;

#pragma unroll
	for (int j = 0; j < SAMPLE_BATCH; j++, k++) {
		if (k >= n || sample_one(k))
			return 1;
	}
	return 0;
}

SEC("syscall")
int llcd_sample(void *ctx)
{
	__u32 n = nslots;

	if (n > TRACER_MAX_THREADS)
		n = TRACER_MAX_THREADS;
	/* one read-side section over the whole pass, not one a slot (two
	 * kfunc calls a thread; the section lasts the pass, about 1 ms at
	 * 32,000 threads, which only delays a grace period) */
	bpf_rcu_read_lock();
	bpf_loop((n + SAMPLE_BATCH - 1) / SAMPLE_BATCH, sample_batch, &n, 0);
	bpf_rcu_read_unlock();
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(llcd_exit)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tracer_slot *s = slot_of(tid);

	if (!s)
		return 0;
	s->exited = 1;
	if (tid < TRACER_TID_LIMIT) {	/* the reference is dropped by llcd_sample */
		__u32 w = bits_word(tid), x = tid;
		__sync_fetch_and_and(&tid_bits[w], ~(1ull << (tid & 63)));
		asm volatile("" : "+r"(x));
		x &= TRACER_TID_LIMIT - 1;
		tid_slot[x] = 0;
	}
	return 0;
}
