// SPDX-License-Identifier: GPL-2.0-or-later
/* bench/floor.bpf.c - bench_agent_overhead's floor for the wakeup program's
 * run time: an empty program on the tracepoint llcd_waking runs on. With
 * kernel.bpf_stats_enabled=1 every run of a program is timed by the kernel
 * (sched_clock() before and after it), so a program's run_time_ns per run
 * holds that timing as well as the program; this one's holds only the
 * timing (and an empty body), measured in the same seconds as llcd_waking,
 * so that the bench can print llcd_waking's own cost (the difference) beside
 * its timed one. Not part of llcd. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_waking")
int BPF_PROG(bench_floor_waking, struct task_struct *p)
{
	return 0;
}
