// SPDX-License-Identifier: GPL-2.0-or-later
/* world.h - llcsim's simulated host: threads, a Linux-like balancer, the
 * cost model of spec/llcsim.md, the in-kernel cache-aware rules
 * (kernel-cas), statistics, trace and invariant checks.
 *
 * The world holds the ground truth (sharing, bandwidth, group membership).
 * Only simops.c turns it into what a real host would show the agent.
 */
#ifndef LLCSIM_WORLD_H
#define LLCSIM_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "annotation.h"
#include "llcrules.h"
#include "names.h"
#include "rng.h"
#include "scenario.h"
#include "topo.h"

enum sim_policy {
	SIM_POLICY_LLCD,
	SIM_POLICY_NONE,
	SIM_POLICY_STATIC,
	SIM_POLICY_KCAS,
};

LLCD_NAMES_DECLARE(sim_policy, enum sim_policy);

struct sim_thread {
	int dom, vcpu;                  /* vcpu -1: a QEMU thread that is no vCPU */
	int qemu;                       /* QEMU threads: index in the domain's */
	double qemu_util;               /* QEMU threads: their demand */
	int group;                      /* this period, -1 none */
	double demand, bw;              /* this period */
	int pu;                         /* where it runs / last ran; -1 never */
	int last_llc;                   /* LLC of its last period with demand */
	int trace_pu;                   /* PU last written to the trace */
	bool pinned;
	struct cpuset pin;
	uint64_t *llcs;                 /* LLCs its allowed set touches (bitmap) */
	bool llcs_dirty;
	bool moved;                     /* changed LLC this period */
	double cpu_frac, rate;
	double bw_got;                  /* achieved bandwidth this period, GB/s:
	                                 * bw times its LLC's bandwidth factor */
	double wake_hz;                 /* this period: wakeups it sends to its group */
	uint64_t runtime_ns, instructions;
	uint64_t run_delay_ns;          /* runnable but waiting, this period */
	int next_on_pu;                 /* per-PU list, rebuilt each period */
};

struct sim_dom_state {
	bool active, ever;
	uint64_t key;
	int base;                       /* first thread index: its vCPUs, then
	                                 * its QEMU threads (qemu_threads) */
	int nthreads;                   /* vCPUs + QEMU threads: the mm's threads */
	bool annotated, isolated;
	bool iso_managed;               /* isolated and placed by the engine (not refused) */
	struct policy_annotation annot;
	int mem_numa;                   /* logical NUMA node of its memory; -1 unknown */
	/* kernel-cas: the QEMU process as one mm */
	uint64_t *mm_rt;                /* per PU runtime (ns), halved per epoch */
	int pref_llc;
	long nr_avg;                    /* the kernel's integer nr_running_avg */
	double idle_epochs, pull_credit;
	/* statistics */
	uint64_t thread_llc_moves, pref_switches;
	uint64_t vcpu_pins;             /* PIN_VCPU actions applied to it */
	double smt_shared_pu_s;
	bool emu_pinned;
	struct cpuset emu_pin;
};

struct sim_group_state {
	double progress, active_s;
	double spread_sum;
	long spread_n;
	uint64_t llc_moves;
	double first_busy_s, unsettled_until;   /* -1 = never */
	int last_spread;
	double rate;                    /* this period */
	int nbusy, spread;              /* this period */
};

/* One domain's wakeup edges this period, as the policy sees them (at most
 * POLICY_WAKEUP_EDGES, strongest kept; the rest counted in dropped). */
struct sim_wake {
	int nedges;
	struct policy_wakeup_edge *edges;       /* POLICY_WAKEUP_EDGES */
	uint64_t dropped;
};

#define SIM_MAX_VIOLATIONS 32

/* One affinity change as the back-end applied it (sim_world_pin, _unpin),
 * kept until the next period replays the period's changes one by one and
 * checks isolation after each: the state between two actions, not only
 * where the actions end. */
struct sim_pin_change {
	int thread;
	bool was_pinned, pinned;
	struct cpuset was, pin;
};

struct sim_world {
	const struct sim_scenario *sc;
	const struct topo *topo;
	enum sim_policy policy;
	struct sim_rng rng;
	struct sim_rng wrng;            /* wakeup draws: a stream of their own, so
	                                 * that host.wakeup_trace leaves the
	                                 * balancer's draws alone */
	struct sim_rng krng;            /* kernel-cas nr_running samples: their own stream */
	FILE *trace;

	int npu, ncore, nllc, llc_words;
	struct cpuset usable;           /* host PUs minus reserved */
	int *core_pu_start, *core_pu;   /* PUs of core c: core_pu[start[c]..start[c+1]) */
	int *llc_core_start, *llc_core; /* cores of LLC l */
	int *llc_npu;
	double *pu_load, *llc_load, *llc_bw;
	int *pu_first;                  /* per-PU thread list head */
	uint64_t *pu_busy_ns;           /* observed this period */
	uint64_t *cpu_rt;               /* kernel-cas: user runtime per PU (ns), halved per epoch */
	uint64_t *kcas_occ;             /* kernel-cas scratch: occupancy per LLC */
	double kcas_epoch_credit;       /* kernel-cas: fraction of an epoch carried over */
	struct llc_rules krules;        /* kernel-cas: llcrules.c, kernel flavour */
	int *llc_count, *core_owner, *scratch;

	int nthreads;
	struct sim_thread *threads;
	struct cpuset *seen_pin;        /* per thread: its pin as the last observation
	                                 * reported it (the samples point here) */
	uint64_t *llc_pool;
	struct sim_dom_state *dom;
	struct sim_group_state *grp;
	int *order;
	struct sim_wake *wake;          /* per domain (host.wakeup_trace) */
	uint64_t *wdraw;                /* scratch: drawn (waker << 32 | wakee) */
	uint32_t *wcount;               /* scratch: counts of the distinct pairs */
	size_t wdraw_n, wdraw_cap;

	long period, nperiods;
	double dt_s;
	uint64_t dt_ns;
	bool pins_dirty;
	struct sim_pin_change *changes; /* this period's, in the order applied */
	int nchanges, changes_cap;
	bool changes_lost;              /* out of memory: only the end is checked */

	int nviol;
	long nviol_total;
	char viol[SIM_MAX_VIOLATIONS][256];
};

/* annots: per domain, parsed llc_policy (NULL entries / annotated false =
 * unannotated). trace may be NULL. */
struct sim_world *sim_world_new(const struct sim_scenario *sc, const struct topo *topo,
                                enum sim_policy policy, uint64_t seed,
                                const struct policy_annotation *annots, const bool *annotated,
                                FILE *trace, struct llcd_err *err);
void sim_world_free(struct sim_world *w);

/* Simulate one period [now, now + dt). Returns false when the run is over
 * (nothing was simulated). */
bool sim_world_step(struct sim_world *w);
/* End of the last simulated period. */
uint64_t sim_world_now_ns(const struct sim_world *w);

/* Affinity, as the simulated ops back-end applies it. */
int sim_world_pin(struct sim_world *w, int dom, int vcpu, const struct cpuset *cpus,
                  struct llcd_err *err);
void sim_world_unpin(struct sim_world *w, int dom);
int sim_world_pin_emulator(struct sim_world *w, int dom, const struct cpuset *cpus,
                           struct llcd_err *err);
void sim_world_violation(struct sim_world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The cost model's pure pieces, exposed for unit tests. */
double sim_sharing_factor(double sharing, int nbusy, const int *llc_of_busy);
double sim_smt_factor(const struct sim_model *m, int busy_pus_on_core);

#endif
