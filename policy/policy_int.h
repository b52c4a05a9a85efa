// SPDX-License-Identifier: GPL-2.0-or-later
/* policy_int.h - what the engine's stages share; private to policy/ (the
 * API is policy.h). One file per stage of a step:
 *
 *   step.c       policy_step(): validate, reconcile, account, then the
 *                stages below in key order, and emit the pins;
 *   placement.c  stage 3: adopt valid pins, initial placement, re-placing
 *                shared domains off cores isolated domains now own;
 *   groups.c     the vCPU groups of a domain: annotation groups, the whole
 *                domain, groups the guest reports, groups inferred from
 *                wakeups (groups_update() is the group-formation stage of
 *                a step; the rule itself is wakeups.c);
 *   steer.c      stage 4: the preferred-LLC hysteresis, size guard and
 *                moves of an aggregate group; spreading for spread domains;
 *   benefit.c    the benefit check of an aggregated group;
 *   home.c       the home check: a domain's home measured, widened over
 *                more LLCs when that gains;
 *   order.c      the last stage: the order of the plan (stages and
 *                prerequisites that keep isolation between actions);
 *   policy.c     plan, state, set helpers, introspection.
 *
 * Everything here stays pure: no I/O, no globals, no clocks, no logging.
 * Allocation failures inside a step are counted in policy_stats.nomem and,
 * where a group is concerned, said in its `why`.
 */
#ifndef LLCD_POLICY_INT_H
#define LLCD_POLICY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "llcrules.h"
#include "policy.h"
#include "wakeups.h"

#define MAX_VCPUS CPUSET_MAX
#define RETRY_FAILS 2           /* kernel: cache_nice_tries + 1 */
#define RETRY_BACKOFF_MAX 6     /* refused moves: wait up to 2^6 x affinity-timeout */
#define SETTLE_PERIODS 3        /* benefit check: periods after the last move */
#define MEASURE_PERIODS 5       /* benefit check: periods measured after */
#define BENEFIT_LOSS 0.05       /* back off when progress drops by > 5 % */
#define BUSY_PU 0.5             /* a PU at least this busy counts as busy */
#define BUSY_VCPU 0.5           /* spread: a vCPU this busy is a busy one */
#define ACTIVE_CPUS 0.5         /* a group using less is idle ... */
#define ACTIVE_VCPU 0.05        /* ... unless it uses this per vCPU */
#define ACTIVE_PERIODS 2        /* active periods before a preference */

/* The benefit check of one group (benefit.c). */
enum benefit_state {
	BENEFIT_IDLE,           /* as placed; learning the baseline rate */
	BENEFIT_AGGREGATING,    /* moves into the preferred LLC under way */
	BENEFIT_SETTLING,       /* all in; waiting SETTLE_PERIODS */
	BENEFIT_MEASURING,      /* summing progress over MEASURE_PERIODS */
	BENEFIT_KEPT,           /* measured no loss: aggregation kept */
	BENEFIT_HOLD,           /* measured a loss: released until hold_until_ns */
};

/* One vCPU group of a domain. */
struct grp {
	char name[POLICY_GROUP_NAME];
	enum policy_group_rule rule;
	int pid;                        /* guest groups: reported pid */
	struct cpuset vcpus;
	double *rt_ns;                  /* decayed runtime per host PU (ncpu entries) */
	double *tot_ns;                 /* every thread's busy time per host PU, decayed
	                                 * with rt_ns's factor (occupancy's divisor) */
	uint64_t born_step;             /* the step that created the group */
	int pref_llc;                   /* preferred LLC, -1 none */
	double idle_epochs;             /* epochs since the group was last active */
	double busy_avg;                /* busy threads, EWMA (the kernel's nr_running_avg) */
	bool busy_avg_init;             /* busy_avg holds a sample */
	int active_periods;             /* consecutive active periods */
	uint64_t last_report_step;      /* guest groups: step of the last report */
	bool guarded;                   /* the size guard forbids aggregation */
	bool unjudged;                  /* the no-judge rule holds it back */
	double pref_occ, best_occ;      /* occupancy of the preferred / best LLC */
	int best_llc;
	int forbid_fails;               /* periods no move was allowed (kernel: nr_fails) */
	int refused;                    /* back-offs in a row after refused moves
	                                 * (the wait doubles each time) */
	uint64_t retry_after_ns;        /* no moves into the preferred LLC before */
	/* benefit check */
	enum benefit_state bstate;
	int bstate_periods;             /* periods spent settling / measuring */
	double rate_ewma;               /* instructions per wall ns while placed */
	bool rate_valid;                /* rate_ewma holds a sample */
	double base_rate;               /* rate_ewma when aggregation began */
	double meas_instr, meas_wall_ns; /* summed while measuring */
	double meas_load;               /* CPUs in use when last measured */
	int load_changed_periods;       /* consecutive periods the load differs */
	uint64_t recheck_after_ns;      /* no re-measurement before */
	uint64_t hold_until_ns;         /* BENEFIT_HOLD until */
	char why[POLICY_REASON];        /* last decision about this group */
};

#define HOME_BUSY_CPUS 1.0      /* home check: CPUs in use for a busy domain */
#define HOME_GAIN 0.05          /* widen when progress rises by > 5 % */
#define HOME_DROP 0.20          /* re-check when progress falls by > 20 % ... */
#define HOME_DROP_PERIODS 3     /* ... for this many periods, load unchanged */
#define HOME_DELAY 0.10         /* run delay alone: widen above 10 % waiting */

/* The home check of a domain (home.c). */
enum home_state {
	HOME_WATCH,             /* as placed; armed by a placement or a drop */
	HOME_BASE,              /* measuring the home as it is */
	HOME_SETTLE,            /* widened; waiting SETTLE_PERIODS */
	HOME_MEASURE,           /* measuring the wider home */
	HOME_HOLD,              /* decided; until hold_until_ns */
};

/* Progress signals summed over the periods of a measurement. */
struct home_meas {
	double instr;           /* instructions (counters) */
	double bytes;           /* memory bytes (bandwidth monitoring) */
	double delay, run;      /* run delay and runtime, ns */
	double wall;            /* ns */
	int n, nbytes;          /* periods; periods with a bandwidth figure */
};

struct home_check {
	enum home_state st;
	int periods;                    /* in this state */
	bool armed;                     /* a new home, or a drop: check when busy */
	const char *armed_by;           /* "a new home", ... (static strings) */
	int busy_periods;               /* consecutive busy periods */
	double ewma;                    /* primary signal per wall ns, watching */
	bool ewma_valid;
	double ewma_load;               /* CPUs in use with it */
	int drop_periods;
	struct home_meas base, meas;
	struct cpuset narrow;           /* the allotment before widening */
	char narrow_where[64];          /* "LLC 0" */
	bool widened;                   /* the home is wider than placed */
	uint64_t hold_until_ns;
	char why[POLICY_REASON];        /* last decision about the home */
};

enum dom_state { DOM_NEW, DOM_PLACED, DOM_REFUSED, DOM_UNMANAGED };

struct dom {
	uint64_t key;
	char name[POLICY_NAME];
	int nvcpus;
	struct policy_guest_topo guest;
	bool annotated;
	struct policy_annotation annot;
	enum dom_state state;
	bool isolated;
	bool confined;                  /* unmanaged, pinned to the shared pool */
	bool no_adopt;                  /* re-placed: do not adopt old pins */
	int grown_from;                 /* re-made because its vCPU count grew
	                                 * (hot-plug) from this many: adopt_domain
	                                 * keeps those pins and places the new
	                                 * vCPUs beside them; 0 none */
	bool released_sent;
	struct cpuset allot;            /* PUs placed on (isolated: owned) */
	int *slot;                      /* per vCPU: the PU its slot is on */
	struct cpuset *home, *want;     /* per vCPU pins */
	struct cpuset *sent;            /* per vCPU: the pin last emitted (empty: none) */
	double *vutil;                  /* per vCPU: busy fraction, EWMA */
	struct cpuset emu_want;
	bool emu_sent;
	int ngroups;
	struct grp *groups;
	struct wakeups_state *wk;       /* wakeup history (aggregate), NULL until
	                                 * wakeups are first given */
	uint64_t refused_gen;
	char refuse_reason[POLICY_REASON];
	uint64_t pref_switches, moves;
	int step_moves;                 /* vCPU moves this step */
	bool budget_denied;             /* a move this step found no budget */
	struct home_check hc;           /* the home check (home.c) */
	bool mbm_seen;                  /* a memory bandwidth figure came (resctrl):
	                                 * the benefit check measures by it
	                                 * where there are no counters */
	int in_idx;                     /* index in this step's input */
	bool seen;
	struct cpuset bound;            /* policy_domain_in.bound; empty none */
};

struct policy_state {
	const struct topo *topo;
	int ncpu;                       /* max_cpu + 1 */
	int nllc;
	struct dom **doms;              /* sorted by key */
	int ndoms;
	double *cpu_rt;                 /* decayed busy runtime per CPU */
	double *cpu_busy;               /* busy time per CPU this period (ns) */
	double *llc_util, *llc_cap;     /* busy PUs per LLC this period */
	/* the same, on the PUs the domain being steered may use (its
	 * allowed set) where that is not the whole LLC (av_whole false) */
	double *av_util, *av_cap;
	bool *av_whole;
	int *core_owner;                /* per core: index into doms, -1 */
	int *llc_load;                  /* shared-pool vCPU slots per LLC */
	int *pu_load;                   /* vCPU slots per PU */
	uint64_t res_gen;               /* bumped when resources are freed, or
	                                 * the host settings that make room change */
	/* the host settings of the last step that decide how much room there
	 * is (reserved CPUs, shared pool, overcommit), to see them change */
	struct cpuset room_reserved, room_pool;
	double room_overcommit, room_overcommit_isolated;
	int nwords;                     /* cpuset words that can hold host PUs */
	struct cpuset pool, prev_pool;  /* shared pool this step and the last */
	uint64_t step;
	int moves_left;                 /* of the step's move budget */
	/* Sharing the budget (issue 14 item 10): after a step in which it ran
	 * out, the next starts steering at the first domain it denied (key
	 * budget_start_key) and caps each domain at budget_cap moves. */
	uint64_t budget_start_key;
	int budget_cap;
	struct policy_stats stats;
};

/* policy.c: plan, state, helpers ------------------------------------------ */

/* Append an action; NULL (and stats.nomem counted) when out of memory. */
struct policy_action *plan_add(struct policy_state *s, struct policy_plan *p,
                               enum policy_action_type type, const struct dom *d, int vcpu,
                               const struct cpuset *cpus, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* A reason string (an action's, a group's `why`), cut at its buffer's
 * size: reasons are cut, never an error. */
void reason_printf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int state_bind_topo(struct policy_state *s, const struct topo *t);
struct dom *dom_new(const struct policy_domain_in *in);
void dom_free(struct dom *d);
int dom_find(const struct policy_state *s, uint64_t key);
int dom_insert(struct policy_state *s, struct dom *d);
bool dom_managed_mode(const struct dom *d);
void dom_unplace(struct policy_state *s, struct dom *d);
bool annot_shape_changed(const struct policy_annotation *a, const struct policy_annotation *b);
void annot_copy(struct policy_annotation *dst, const struct policy_annotation *src);

struct llc_rules rules_of(const struct policy_state *s, const struct dom *d);
const struct cpuset *llc_cpus(const struct policy_state *s, int llc);
bool set_eq(const struct policy_state *s, const struct cpuset *a, const struct cpuset *b);
bool set_empty(const struct policy_state *s, const struct cpuset *a);
bool set_sub(const struct policy_state *s, const struct cpuset *sub, const struct cpuset *super);
int pin_llc(const struct policy_state *s, const struct cpuset *pin);
/* "LLC 3" for a pin inside one LLC, "LLCs 0-1" for one over several. */
void pin_llcs(const struct policy_state *s, const struct cpuset *pin, char *buf, size_t len);
void fmt_set(const struct cpuset *c, char *buf, size_t len);
void shared_pool(const struct policy_state *s, const struct policy_host *h, struct cpuset *out);
void dom_allowed(const struct policy_state *s, const struct dom *d, struct cpuset *out);
/* The shared pool as far as d may use it (inside its bound). */
void dom_pool(const struct policy_state *s, const struct policy_host *h, const struct dom *d, struct cpuset *out);
/* Whether the PUs of pus are all inside d's bound (no bound: true). */
bool dom_in_bound(const struct dom *d, const struct cpuset *pus);

/* step.c: accounting --------------------------------------------------------- */

/* Core ownership (isolated domains) and shared-pool slots from the placed
 * domains. */
void rebuild_ownership(struct policy_state *s);

/* placement.c: stage 3 ------------------------------------------------------- */

void placement_stage(struct policy_state *s, const struct policy_input *in,
                     struct policy_plan *plan);
/* An isolated domain's cores spread over as many LLCs as its core count
 * and the free cores allow (its own cores kept where it can); false when
 * that is no more LLCs than it has. The homes and wanted pins follow; the
 * groups are released. */
bool placement_widen(struct policy_state *s, const struct policy_host *h, struct dom *d);
/* Back onto the PUs of allot (a narrower home it had) when those cores are
 * still its own or free; false otherwise. */
bool placement_restore(struct policy_state *s, const struct policy_host *h, struct dom *d,
                       const struct cpuset *allot);
/* Whether placement_widen() could spread d over more LLCs. */
bool placement_can_widen(const struct policy_state *s, const struct policy_host *h,
                         const struct dom *d);

/* groups.c: the vCPU groups -------------------------------------------------- */

/* Groups fixed at placement: annotation groups, else the whole domain when
 * it fits one LLC. */
void groups_init(struct policy_state *s, struct dom *d);
/* The group-formation stage of a step for an aggregate domain: rebuild
 * guest-reported groups from this period's reports, dissolve silent ones,
 * then feed the period's wakeups to the domain's wakeup history and match
 * the groups it infers (annotation and guest groups win their vCPUs). */
void groups_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
                   const struct policy_domain_in *di, double epochs_per_period);
void grp_clear(struct grp *g);
/* Back to the placement: every vCPU of the group to its home pin, the
 * preference dropped. */
void grp_release(struct dom *d, struct grp *g);
/* Every vCPU of the group to its home pin (the preference kept). */
void grp_send_home(struct dom *d, const struct grp *g);
/* Whether the benefit check can judge d's groups on this host: it is on
 * and there are instruction counters or bandwidth monitoring figures. */
bool grp_judged(const struct policy_input *in, const struct dom *d);
/* The no-judge rule (issue 23 item 4): a group inferred from wakeups that
 * nothing can judge is shown, not acted on, unless the operator opted in
 * (policy_host.act_unjudged). True when g is held back this period (its
 * preference dropped, its vCPUs at home, `why` says why). */
bool grp_unjudged_hold(struct policy_state *s, const struct policy_input *in, struct dom *d,
                       struct grp *g, struct policy_plan *plan);

/* steer.c: stage 4 ----------------------------------------------------------- */

void steer_group(struct policy_state *s, const struct policy_input *in, struct dom *d,
                 const struct policy_domain_in *di, struct grp *g, double k,
                 double epochs_per_period, const struct cpuset *allowed,
                 struct policy_plan *plan);
void steer_spread(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
                  const struct cpuset *allowed);
/* Before a domain's groups are steered: the busy PUs and PUs of each LLC
 * within its allowed set (capacity is judged on those). */
void steer_view(struct policy_state *s, const struct cpuset *allowed, uint64_t period_ns);
int vcpu_llc(const struct policy_state *s, const struct dom *d,
             const struct policy_domain_in *in, int v);
/* One move from the step's budget for d: false (and d->budget_denied)
 * when the budget is spent or d has its share. */
bool budget_take(struct policy_state *s, struct dom *d);

/* order.c: the last stage --------------------------------------------------- */

/* Sort the plan into stages, split the pins that must narrow before they
 * widen, give each action its prerequisites and the pin a rollback uses,
 * hold back what cannot keep isolation (planned again next step). */
void order_stage(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan);

/* benefit.c ------------------------------------------------------------------- */

/* home.c ---------------------------------------------------------------------- */

/* A new home for d (placed, re-placed): the home check measures it once the
 * domain is busy. */
void home_placed(struct dom *d);
/* One period of the home check of a placed domain. */
void home_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
                 const struct policy_domain_in *di, struct policy_plan *plan);

/* One period of the benefit check. outside: vCPUs of the group outside
 * the preferred LLC; moved: some moved this period; load: CPUs in use. */
void benefit_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
                    const struct policy_domain_in *di, struct grp *g, int outside, bool moved,
                    double load, struct policy_plan *plan);

#endif
