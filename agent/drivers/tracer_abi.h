// SPDX-License-Identifier: GPL-2.0-or-later
/* tracer_abi.h - the memory layout shared by the in-kernel tracer
 * (tracer.bpf.c) and its user-space half (tracer.c). Both sides include it;
 * the BPF side after vmlinux.h, the user side after <linux/types.h>.
 *
 * Maps (all sized at compile time; memory is bounded by these caps):
 *   threads   BPF_F_MMAPABLE array, TRACER_MAX_THREADS x 48 bytes: one slot
 *             per tracked thread, written by llcd_sample, read by llcd
 *             through the mapping (no syscall per thread)
 *   domains   BPF_F_MMAPABLE array, TRACER_MAX_DOMAINS x 32 bytes: per QEMU
 *             process its current id and edge/drop counters
 *   .bss      tid_bits: one bit per TID below TRACER_TID_LIMIT (512 KiB),
 *             tracked: the programs' first test; tid_slot: per TID its slot + 1
 *             (0: untracked; 8 MiB), what the programs look a tracked task
 *             up by. Both set by llcd at registration, cleared at removal
 *             and by the programs at exit
 *   tasks     array, TRACER_MAX_THREADS x 8 bytes: per slot a reference to
 *             its thread's task (a kptr), what llcd_sample reads the
 *             figures through; the programs' own
 *   edges     hash (domain id, waker vCPU, wakee vCPU) -> count
 *             (TRACER_MAX_EDGES entries), drained by llcd once a period
 *             with one lookup-and-delete batch
 */
#ifndef LLCD_TRACER_ABI_H
#define LLCD_TRACER_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TRACER_MAX_THREADS 32768        /* tracked threads in all */
#define TRACER_MAX_DOMAINS 4096         /* tracked QEMU processes */
#define TRACER_MAX_EDGES 32768          /* distinct edges per period, all domains */
#define TRACER_EDGES_PER_DOMAIN 8192    /* distinct edges per period, one domain
                                         * (the policy's POLICY_WAKEUP_EDGES) */
#define TRACER_TID_LIMIT (1u << 22)     /* PID_MAX_LIMIT of 64-bit kernels */

/* One tracked thread. seq is odd while the programs update the slot. */
struct tracer_slot {
	__u32 seq;
	__u32 tid;              /* 0: free slot */
	__u32 dom;              /* index into domains */
	__u32 dom_id;           /* domains[dom].id when registered */
	__s32 vcpu;             /* vCPU number; -1: tracked, not a vCPU */
	__s32 last_cpu;         /* CPU it is on or last ran on; -1 not seen yet */
	__u64 runtime_ns;       /* on-CPU time (se.sum_exec_runtime) */
	__u64 delay_ns;         /* runnable but waiting (sched_info.run_delay) */
	__u32 exited;           /* the thread exited (tids entry removed) */
	__u32 hot;              /* runnable at the last copy, or woken just
	                         * before it: copied again at the next */
};

/* One tracked QEMU process. id changes on every reuse of the entry, so
 * that edges of a removed domain are never credited to the next. */
struct tracer_domain {
	__u32 id;               /* 0: free */
	__u32 pad;
	__u64 inserted;         /* distinct edges the programs created */
	__u64 drained;          /* distinct edges llcd drained (written by llcd) */
	__u64 dropped;          /* vCPU->vCPU wakeups not counted (caps) */
};

struct tracer_edge_key {
	__u32 dom_id;
	__u16 waker;            /* vCPU numbers */
	__u16 wakee;
};

#endif
