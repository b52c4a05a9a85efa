// SPDX-License-Identifier: GPL-2.0-or-later
/* vmlinux.h - the kernel types the in-kernel tracer (tracer.bpf.c) reads,
 * written out by hand, so that the BPF object builds without the build
 * host's BTF (/sys/kernel/btf/vmlinux): in a chroot, a container, or on a
 * builder whose kernel is not the one llcd runs on.
 *
 * Only the members the programs touch are declared. Every struct is marked
 * preserve_access_index, so each member access is a CO-RE relocation:
 * libbpf finds the member by name in the running kernel's BTF at load time
 * and patches its offset (the layout here is not the kernel's and need not
 * be). A member's type must have the kernel's size (libbpf refuses a load
 * of another width); tracer.bpf.c asks bpf_core_field_exists() for the
 * members some kernels lack (thread_info.cpu, sched_entity.cfs_rq).
 * The BPF constants are the UAPI's (include/uapi/linux/bpf.h): ABI, never
 * renumbered. libbpf-bootstrap and the kernel's BPF selftests do the same
 * with their vendored vmlinux.h; this one is the few lines we need. */
#ifndef LLCD_TRACER_VMLINUX_H
#define LLCD_TRACER_VMLINUX_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef int pid_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

/* include/uapi/linux/bpf.h */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
};
enum {
	BPF_NOEXIST = 1,
};
enum {
	BPF_F_MMAPABLE = (1U << 10),
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct rq;

struct cfs_rq {
	struct rq *rq;
};

struct sched_entity {
	u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq;
	unsigned char sched_delayed;    /* 6.12+: asleep, dequeue delayed */
};

struct sched_info {
	unsigned long long run_delay;
};

struct thread_info {
	u32 cpu;
};

struct task_struct {
	struct thread_info thread_info;
	int on_rq;
	int wake_cpu;
	struct sched_entity se;
	struct sched_info sched_info;
	pid_t pid;
};

#pragma clang attribute pop

#endif
