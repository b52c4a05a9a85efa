// SPDX-License-Identifier: GPL-2.0-or-later
/* scenario.h - an llcsim scenario file (docs/llcsim.md, spec/llcsim.md). */
#ifndef LLCSIM_SCENARIO_H
#define LLCSIM_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "policy.h"

/* The cost model's constants; defaults are the spec's numbers. */
struct sim_model {
	double smt_share[4];            /* core fraction with 1, 2, 3, >=4 busy PUs */
	double migration;               /* rate factor in a period after an LLC change */
	double imbalance;               /* busy threads more than the least-loaded LLC */
	double busy_util;               /* a PU / group thread is busy from here */
	double instructions_per_s;      /* counters: instructions at rate 1.0, util 1.0 */
	double remote_memory;           /* rate factor on a node other than the
	                                 * domain's memory_node */
	/* kernel-cas (Linux 7.2 CONFIG_SCHED_CACHE defaults) */
	double kcas_epoch_ms;           /* llc_epoch_period */
	int kcas_affinity_timeout;      /* epochs */
	int kcas_aggr_tolerance;
	int kcas_overaggr_pct;          /* 0 = auto: 50 with SMT, 75 without */
	int kcas_imb_pct;
	double kcas_pulls_per_s;        /* LLC-preference pulls per process per second */
	double kcas_min_util;           /* threads below this are asleep at balance time */
};

void sim_model_defaults(struct sim_model *m);

/* One `wakes` entry of a load entry: wakeups that follow no sharing. */
struct sim_wakes {
	struct cpuset vcpus;            /* the wakees drawn from */
	int n;                          /* how many (cpuset_count) */
	int *list;                      /* the same, ascending (n entries) */
	double hz;                      /* per sending vCPU */
};

struct sim_load {
	double from_s, to_s;
	struct cpuset vcpus;
	double util;
	int group;                      /* index into sim_scenario.groups, -1 none */
	double bw_gbs;
	double wakeups_hz;              /* group entries: wakeups each busy thread
	                                 * sends to its group's other busy threads */
	int nwakes;                     /* `wakes`: each vCPU of the entry sends
	                                 * Poisson(hz x period) to vcpus other
	                                 * than itself, whatever its util */
	struct sim_wakes *wakes;
};

/* One `qemu_threads` entry: count non-vCPU threads of the QEMU process. */
struct sim_qemu {
	int count;
	double util;
};

struct sim_group {
	char name[POLICY_GROUP_NAME];
	int domain;
	double sharing;
	bool barrier;
	struct cpuset vcpus;            /* union of its load entries */
};

struct sim_domain {
	char name[POLICY_NAME];
	int nvcpus;
	double start_s, stop_s;         /* stop_s = INFINITY when null */
	struct policy_guest_topo guest;
	char *llc_policy;               /* NULL = unannotated */
	bool guest_helper;
	int memory_node;                /* OS number of the NUMA node holding its
	                                 * memory; -1 unknown (absent) */
	int nload, load_cap;            /* parsed; allocated */
	struct sim_load *load;
	int nqemu;                      /* `qemu_threads` entries */
	struct sim_qemu *qemu;
	int qemu_count;                 /* their threads, summed */
};

struct sim_scenario {
	char name[128];                 /* file name without .json */
	char topology[1024];
	struct cpuset reserved;
	double llc_bw_gbs;              /* 0 = unlimited */
	bool perf_counters;
	bool mbm;                       /* the policy sees achieved memory bandwidth
	                                 * per domain (resctrl monitoring) */
	bool wakeup_trace;              /* the policy sees wakeup edges */
	bool act_unjudged;              /* host.unjudged_groups "act": llcd.conf's
	                                 * unjudged-groups act (policy_host) */
	double wakeup_noise_hz;         /* background wakeups per vCPU per second */
	double overcommit;              /* host.overcommit: llcd.conf's overcommit
	                                 * (policy_host), 1 by default */
	double period_ms, duration_s;
	uint64_t seed;
	struct sim_model model;
	int ndomains;
	struct sim_domain *domains;
	int ngroups;
	struct sim_group *groups;
};

/* Parse a scenario from JSON text. name labels error messages. On error
 * err names the field ("domains[0].load[1].util") and why. */
struct sim_scenario *sim_scenario_parse(const char *json, size_t len, const char *name,
                                        struct llcd_err *err);
struct sim_scenario *sim_scenario_load(const char *path, struct llcd_err *err);
void sim_scenario_free(struct sim_scenario *s);

#endif
