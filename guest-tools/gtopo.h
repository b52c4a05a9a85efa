// SPDX-License-Identifier: GPL-2.0-or-later
/* gtopo.h - the guest's own CPU topology, as llc-guest sees it: online
 * CPUs, their virtual last-level caches and the SMT width, read from a
 * sysfs root ("/sys" normally; a fixture tree in tests).
 *
 * The LLC of a CPU is the highest-level data or unified cache listed under
 * devices/system/cpu/cpuN/cache/index* (index3, the L3, on every x86
 * guest QEMU builds); its shared_cpu_list gives the CPUs sharing it. A
 * guest without cache information is one LLC of all online CPUs.
 */
#ifndef LLCD_GTOPO_H
#define LLCD_GTOPO_H

#include <stdbool.h>

#include "cpuset.h"
#include "err.h"

#define GTOPO_MAX_LLC 256

struct gtopo {
	struct cpuset online;           /* online CPUs */
	int max_cpu;                    /* highest online CPU, -1 none */
	int nllc;                       /* virtual LLCs, ordered by first CPU */
	struct cpuset llc[GTOPO_MAX_LLC];
	int cache_level;                /* level of the cache used (0: none found) */
	int smt;                        /* most CPUs in one thread_siblings_list */
	int cpu_llc[CPUSET_MAX];        /* LLC index per CPU, -1 offline */
};

/* Read the topology under sys_root. Returns 0 or -1 with err set. */
int gtopo_read(struct gtopo *t, const char *sys_root, struct llcd_err *err);

/* LLC index of a CPU, -1 if it is offline or out of range. */
int gtopo_llc_of(const struct gtopo *t, int cpu);

#endif
