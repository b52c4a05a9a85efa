// SPDX-License-Identifier: GPL-2.0-or-later
/* tracer.bpf.c - llcd's in-kernel tracer of vCPU threads (CO-RE; built with
 * clang -target bpf against a vmlinux.h generated from the running kernel's
 * BTF; loaded by tracer.c through a bpftool skeleton).
 *
 * For the threads llcd registered (tids map -> slot in the mmap'ed threads
 * array) three BTF-typed tracepoints keep:
 *   sched_switch   on-CPU time (switch-in to switch-out), the last CPU, and
 *                  run delay: from the moment a thread became runnable
 *                  (woken, or preempted while runnable) to its switch-in
 *   sched_waking   the wakee became runnable (start of its run delay), and,
 *                  when the waker is a tracked vCPU thread of the same QEMU
 *                  process, one waker -> wakee edge; a wakeup raised in
 *                  interrupt context (timer, I/O completion) is not an edge,
 *                  since `current` there is whoever happened to run
 *   sched_process_exit  forget an exiting tracked thread (its TID may be
 *                  reused) and mark its slot exited
 * Everything else returns after one hash lookup per task involved.
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
	__uint(max_entries, TRACER_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} tids SEC(".maps");

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

#define IRQ_BITS 0x00ff0100u    /* NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET */

static __always_inline struct tracer_slot *
slot_of(__u32 tid)
{
	__u32 *idx;

	if (tid == 0)
		return 0;
	idx = bpf_map_lookup_elem(&tids, &tid);
	if (!idx)
		return 0;
	return bpf_map_lookup_elem(&threads, idx);
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
in_irq_context(void)
{
	struct task_struct *cur;
	struct rq *rq;
	__u32 pc = 0;

	if (preempt_from_rq == 0)
		return false;
	if (!bpf_core_field_exists(((struct sched_entity *)0)->cfs_rq))
		return false;
	cur = bpf_get_current_task_btf();
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq)
		return false;
	if (bpf_probe_read_kernel(&pc, sizeof(pc), (char *)rq + preempt_from_rq) != 0)
		return false;
	return (pc & IRQ_BITS) != 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(llcd_switch, bool preempt, struct task_struct *prev,
             struct task_struct *next)
{
	struct tracer_slot *s;
	__u64 now = 0;

	s = slot_of(BPF_CORE_READ(prev, pid));
	if (s) {
		now = bpf_ktime_get_ns();
		__sync_fetch_and_add(&s->seq, 1);
		if (s->oncpu_since && now > s->oncpu_since)
			s->runtime_ns += now - s->oncpu_since;
		s->oncpu_since = 0;
		/* still runnable (preempted, or yielded): it waits from now */
		s->queued_since = BPF_CORE_READ(prev, __state) == 0 ? now : 0;
		__sync_fetch_and_add(&s->seq, 1);
	}
	s = slot_of(BPF_CORE_READ(next, pid));
	if (s) {
		if (!now)
			now = bpf_ktime_get_ns();
		__sync_fetch_and_add(&s->seq, 1);
		if (s->queued_since && now > s->queued_since)
			s->delay_ns += now - s->queued_since;
		s->queued_since = 0;
		s->oncpu_since = now;
		s->last_cpu = bpf_get_smp_processor_id();
		__sync_fetch_and_add(&s->seq, 1);
	}
	return 0;
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

	wakee = slot_of(BPF_CORE_READ(p, pid));
	if (!wakee)
		return 0;
	__sync_fetch_and_add(&wakee->wakeups, 1);
	if (!wakee->oncpu_since && !wakee->queued_since) {
		__u64 now = bpf_ktime_get_ns();
		__sync_fetch_and_add(&wakee->seq, 1);
		wakee->queued_since = now;
		__sync_fetch_and_add(&wakee->seq, 1);
	}
	if (wakee->vcpu < 0 || in_irq_context())
		return 0;
	waker = slot_of((__u32)bpf_get_current_pid_tgid());
	if (!waker || waker == wakee || waker->vcpu < 0 ||
	    waker->dom != wakee->dom || waker->dom_id != wakee->dom_id)
		return 0;
	count_edge(waker, wakee);
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
	bpf_map_delete_elem(&tids, &tid);
	return 0;
}
