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
#include <string.h>

#include "cpuset_pool.h"
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
#define VUTIL_SNAP 1e-9         /* a busy fraction this close to its load is it (a ns a second) */
#define ACTIVE_CPUS 0.5         /* a group using less is idle ... */
#define ACTIVE_VCPU 0.05        /* ... unless it uses this per vCPU */
#define ACTIVE_PERIODS 2        /* active periods before a preference */

/* --- trials (trial.c) ---------------------------------------------------- */

#define TRIAL_WINDOW MEASURE_PERIODS /* periods of a window at most ... */
#define TRIAL_WINDOW_MIN 3      /* ... at least ... */
#define TRIAL_WINDOW_NS 500000000ull /* ... and enough for half a second */
/* a trial waits one window's periods beyond its window for an alike shape */
#define TRIAL_BUSY_TOL 0.10     /* alike: busy vCPUs within 10 % (below 10: equal) */
#define TRIAL_DEMAND_TOL 0.10   /* alike: demand within 10 % ... */
#define TRIAL_DEMAND_MIN 0.25   /* ... or a quarter of a CPU */
#define TRIAL_MAX_ABORTS 3      /* abandoned trials in a row before a pause */
#define TRIAL_MEMO 8            /* failed trials remembered per check */
#define TRIAL_BACKOFF_SHIFT 6   /* a failure is remembered for 2^fails hold-downs, fails <= 6 */

/* The load shape of a period: what must stay alike for a verdict. */
struct trial_shape {
	int busy;               /* the domain's vCPUs with demand >= BUSY_VCPU */
	double demand;          /* the domain's demand in CPUs: runtime + run delay */
	uint32_t sig;           /* the processes and groups that share data (home.c) */
};

/* Progress and demand summed over periods. */
struct trial_sum {
	double instr;           /* instructions of the measured threads (counters) */
	double bytes;           /* the domain's memory bytes (bandwidth monitoring) */
	double run, delay;      /* ns: runtime and run delay of the measured threads */
	double bdemand;         /* ns: the domain's demand, the bytes' divisor */
	double dinstr, ddemand; /* the whole domain's instructions and demand (ns),
	                         * where the measured threads are a group of it */
	int n, nbytes;          /* periods; periods with a bandwidth figure */
};

enum trial_phase {
	TRIAL_IDLE,             /* watching the arrangement in place (the ring) */
	TRIAL_SETTLE,           /* the tried arrangement settles */
	TRIAL_MEASURE,          /* its window is being measured */
};

enum trial_event { TRIAL_NONE, TRIAL_DONE, TRIAL_ABANDON };
enum trial_signal { TRIAL_SIG_INSTR, TRIAL_SIG_BYTES, TRIAL_SIG_RUN };

/* A trial whose change did not pay, remembered for its load shape. */
struct trial_memo {
	bool used;
	int key;                /* which change (the caller's numbering) */
	struct trial_shape shape;
	double ratio;           /* progress per demand, tried / in place */
	int fails;              /* failures at this shape, 1..TRIAL_BACKOFF_SHIFT */
	uint64_t at_ns, until_ns; /* failed at; not tried again before */
};

struct trial {
	enum trial_phase phase;
	int ring_n, ring_head;
	int ring_same;          /* the newest periods the same as the newest,
	                         * bit for bit (<= ring_n) */
	int win;                /* periods of a window at this sampling period */
	int skip;               /* periods not watched (just rearranged) */
	int key;                /* the change on trial */
	int settle;             /* periods the tried arrangement settles */
	int periods;            /* in this phase */
	int aborts;             /* trials abandoned in a row */
	bool has_verdict;
	struct trial_shape verdict_shape; /* the shape of the last verdict */
	struct trial_shape ref; /* the shape it is judged in */
	/* the last periods of the arrangement in place, alike each other */
	struct trial_shape ring_shape[TRIAL_WINDOW];
	struct trial_sum ring[TRIAL_WINDOW];
	struct trial_sum first, second; /* the arrangement it had; the tried one */
	struct trial_memo memo[TRIAL_MEMO];
};

void trial_init(struct trial *t);
/* The periods of a window at a sampling period. */
int trial_window_len(uint64_t period_ns);
bool trial_alike(const struct trial_shape *a, const struct trial_shape *b);
/* One period of period_ns: watched (TRIAL_IDLE), settled or measured.
 * quick (incremental steps): a shape the same as the newest kept is
 * pushed without comparing it with the older ones again (each push
 * leaves the ring alike to its newest, so the comparisons would all
 * hold); the same ring either way. */
enum trial_event trial_observe(struct trial *t, const struct trial_shape *sh, const struct trial_sum *one,
                               uint64_t period_ns, bool quick);
/* The arrangement changed outside a trial: watch it afresh after settling. */
void trial_rearranged(struct trial *t);
/* A full window of the arrangement in place: a trial may start from it.
 * (These three inline: the home check asks every domain every period.) */
static inline bool
trial_ready(const struct trial *t)
{
	return t->phase == TRIAL_IDLE && t->skip == 0 && t->win > 0 && t->ring_n >= t->win;
}

/* The newest watched period's shape (NULL none). */
static inline const struct trial_shape *
trial_shape(const struct trial *t)
{
	return t->ring_n > 0 ? &t->ring_shape[(t->ring_head + t->ring_n - 1) % TRIAL_WINDOW] : NULL;
}

/* Ready, and the shape is not alike the last verdict's. */
static inline bool
trial_shape_changed(const struct trial *t)
{
	return t->has_verdict && trial_ready(t) && !trial_alike(trial_shape(t), &t->verdict_shape);
}
void trial_window(const struct trial *t, struct trial_sum *out);
/* Start from the ready window (the caller changes the arrangement);
 * the tried arrangement is measured after settle periods. */
void trial_begin(struct trial *t, int key, int settle);
/* Moves still (or again) under way: the settling starts again. */
void trial_moving(struct trial *t);
/* The verdict is taken: tried_kept says which arrangement is in place. */
void trial_conclude(struct trial *t, bool tried_kept);
/* The trial is given up: undone (back to the first arrangement) or not
 * (the tried one stays, watched from its last periods); true when
 * TRIAL_MAX_ABORTS were given up in a row. */
bool trial_abandon(struct trial *t, bool undone);
/* Stopped from outside (the arrangement was changed by something else). */
void trial_cancel(struct trial *t);
enum trial_signal trial_pick(const struct trial_sum *a, const struct trial_sum *b, bool counters);
/* Progress per unit of demand: instructions per demanded CPU-ns, bytes
 * per demanded CPU-ns of the domain, or the share of demand that ran. */
double trial_value(const struct trial_sum *s, enum trial_signal sig);
double trial_delay_share(const struct trial_sum *s);
/* The tried arrangement's value over the first's. */
double trial_ratio(const struct trial *t, enum trial_signal sig);
/* A failure of change key remembered for an alike shape and not expired. */
const struct trial_memo *trial_recall(const struct trial *t, const struct trial_shape *sh, int key,
                                      uint64_t now_ns);
const struct trial_memo *trial_fail(struct trial *t, const struct trial_shape *sh, int key, double ratio,
                                    uint64_t now_ns, uint64_t holddown_ns);
/* Forget the failures remembered for shapes alike sh (NULL: all). */
void trial_forget(struct trial *t, const struct trial_shape *sh);

/* The benefit check of one group (benefit.c). */
enum benefit_state {
	BENEFIT_IDLE,           /* as placed; watching it (the trial's ring) */
	BENEFIT_AGGREGATING,    /* moves into the preferred LLC under way */
	BENEFIT_SETTLING,       /* all in; waiting SETTLE_PERIODS */
	BENEFIT_MEASURING,      /* measuring the gathered group's window */
	BENEFIT_KEPT,           /* measured no loss: aggregation kept */
	BENEFIT_HOLD,           /* measured a loss: released until hold_until_ns */
};

/* What a `why` of a group was printed from (steer.c why_cached()): the
 * format's site and arguments; bytes compared, so made with memset. */
struct why_key {
	int site;
	int i[7];
	double x[2];
	const char *str[2];
};

/* One vCPU group of a domain. */
struct grp {
	/* what every step reads of a group comes first (a few cache lines) */
	enum policy_group_rule rule;
	int pref_llc;                   /* preferred LLC, -1 none */
	int active_periods;             /* consecutive active periods */
	int best_llc;
	int forbid_fails;               /* periods no move was allowed (kernel: nr_fails) */
	int refused;                    /* back-offs in a row after refused moves
	                                 * (the wait doubles each time) */
	/* benefit check */
	enum benefit_state bstate;
	enum benefit_state bseen;       /* bstate as the check last left it */
	int outside;                    /* vCPUs outside the preferred LLC, last period */
	int restore_periods;            /* released vCPUs held on their origin LLC */
	bool tot_follows;               /* tot_ns is policy_state.cpu_rt (the group was
	                                 * born with its values and decays them by the
	                                 * same factor every step): the array is not
	                                 * kept until that ends (grp_tot()) */
	bool busy_avg_init;             /* busy_avg holds a sample */
	bool guarded;                   /* the size guard forbids aggregation */
	bool unjudged;                  /* the no-judge rule holds it back */
	double *rt_ns;                  /* decayed runtime per host PU (ncpu entries) */
	double *tot_ns;                 /* every thread's busy time per host PU, decayed
	                                 * with rt_ns's factor (occupancy's divisor);
	                                 * NULL while tot_follows */
	uint64_t tot_step;              /* the step tot_ns was last brought up to */
	uint64_t born_step;             /* the step that created the group */
	double idle_epochs;             /* epochs since the group was last active */
	double busy_avg;                /* busy threads, EWMA (the kernel's nr_running_avg) */
	uint64_t last_report_step;      /* guest groups: step of the last report */
	double pref_occ, best_occ;      /* occupancy of the preferred / best LLC */
	uint64_t retry_after_ns;        /* no moves into the preferred LLC before */
	uint64_t hold_until_ns;         /* BENEFIT_HOLD until */
	uint64_t own_step;              /* the last step the check itself moved or
	                                 * released the group's vCPUs */
	/* groups_send_home() found every vCPU home at dom.pin_gen home_gen
	 * with vcpus.w[0] home_w0 (home_ok: and the domain has <= 64 vCPUs,
	 * all in that word): while both stay, it has nothing to do */
	bool home_ok;
	uint64_t home_gen, home_w0;
	/* quiet_ok: the group's last step (quiet_step) was an idle one at
	 * its fixed point (steer.c grp_quiet()): idle, no preference, not
	 * guarded, no runtime on any PU, busy_avg no longer moving; taken
	 * from the domain's samples quiet_gen (dom.obs_gen), vcpus.w[0]
	 * quiet_w0 of quiet_nvcpus vCPUs, allowed PUs policy_state.allowed_id
	 * quiet_allowed, aggr-tolerance quiet_tol and memory node
	 * quiet_mnv/quiet_mn: while all hold, the next step is the same one
	 * but for the idle epochs */
	bool quiet_ok, quiet_mnv;
	int quiet_nvcpus, quiet_tol, quiet_mn;
	uint64_t quiet_step, quiet_gen, quiet_w0, quiet_allowed;
	/* the last `why` printed from a key, and the key: the same key
	 * prints the same text (why_ok: there is one) */
	bool why_ok;
	struct why_key why_key;
	struct cpuset vcpus;
	struct cpuset rt_nz;            /* the PUs where rt_ns is not 0 */
	/* the rest */
	char name[POLICY_GROUP_NAME];
	int pid;                        /* guest groups: reported pid */
	char why[POLICY_REASON];        /* last decision about this group */
	char why_text[POLICY_REASON];
	struct trial tr;                /* the gathering on trial (trial.c) */
};

#define HOME_BUSY_CPUS 1.0      /* home check: CPUs demanded by a busy domain */
#define HOME_GAIN 0.05          /* a wider home pays when progress rises by > 5 % */
#define HOME_DROP 0.20          /* look again when progress falls by > 20 % ... */
#define HOME_DROP_PERIODS 3     /* ... for this many periods, the load alike */
#define HOME_DELAY 0.10         /* run delay alone: widen above 10 % waiting */
#define HOME_PROCS 8            /* processes that share data, tracked per domain */
#define HOME_PROC_GRACE 1       /* periods a process missing from the reports stays */
#define HOME_SETTLE_PERIODS 1   /* a new home (every vCPU re-pinned at once) settles */
#define HOME_WIDEN_STEP 4       /* a wider home on trial: this many times the LLCs */
#define HOME_DOUBLED_PERIODS 2  /* busy vCPUs sharing a core while one of the
                                 * home idles this long: placed one per core */

/* The home check of a domain (home.c). */
enum home_state {
	HOME_WATCH,             /* the home in place is watched (the trial's ring) */
	HOME_TRIAL,             /* another home is on trial (settling, measuring) */
};

enum home_dir { HOME_WIDER, HOME_NARROWER };

/* A guest process that shares data (reported with two or more vCPUs). */
struct home_proc {
	bool used;
	int pid;
	uint32_t hash;                  /* of pid and name */
	uint64_t last_step;             /* last reported */
};

struct home_check {
	/* what every step reads first (a few cache lines) */
	enum home_state st;
	/* a reason to look at the home (NULL none: static strings) */
	const char *pending;
	bool widened;                   /* the home is wider than placed */
	bool procs_any;                 /* one of procs is used */
	/* sharing_sig() at step procs_step took no new slot (procs_noop),
	 * and the processes' part of the signature it made */
	bool procs_noop;
	uint32_t procs_sig;
	uint64_t procs_step;
	/* home_sample()'s sums over the vCPUs and the samples they were made
	 * from (struct dom obs_gen; sums_ok: made) */
	bool sums_ok;
	int sums_busy;
	uint64_t sums_gen;
	double sums_instr, sums_run, sums_delay;
	bool no_room;                   /* the last try found no wider home ... */
	uint64_t room_gen;              /* ... at this policy_state.res_gen */
	int doubled_periods;            /* busy vCPUs shared a core while one idled */
	uint64_t paused_until_ns;       /* no trial before (TRIAL_MAX_ABORTS) */
	uint64_t respread_until_ns;     /* no placement_respread() before */
	uint64_t own_step;              /* the last step the check itself re-pinned */
	/* this period (home_sample()) */
	struct trial_shape shape;
	struct trial_sum sum;
	struct trial tr;                /* the home on trial (trial.c) */
	/* the rest */
	enum home_dir pending_dir;
	char pending_what[96];          /* the pending reason's details, "" none */
	/* the trial under way */
	enum home_dir dir;
	struct cpuset before;           /* the allotment before it */
	int before_llcs, tried_llcs;
	char before_where[64];          /* "LLC 0" */
	int placed_llcs;                /* LLCs of the home as placed */
	/* drops of progress per demand, watched while the load stays alike:
	 * [0] instructions, [1] memory bandwidth */
	double ewma[2];
	bool ewma_valid[2];
	int drop_periods[2];
	struct trial_shape ewma_shape;
	/* processes and groups that share data: the shape's signature */
	struct home_proc procs[HOME_PROCS];
	char why[POLICY_REASON];        /* last decision about the home */
};

enum dom_state { DOM_NEW, DOM_PLACED, DOM_REFUSED, DOM_UNMANAGED };

/* A vCPU's sample as the busy fraction and the home check's sums read it. */
struct dom {
	/* what every step reads of every domain comes first, in a few
	 * cache lines (the rest is read only when something changes) */
	uint64_t key;
	int nvcpus;
	enum dom_state state;
	int in_idx;                     /* index in this step's input */
	int ngroups;
	int step_moves;                 /* vCPU moves this step */
	int hint_periods;               /* a new home's busy vCPUs are held on the
	                                 * LLC share placement_reshape() gave them
	                                 * for this many more periods */
	bool annotated;
	bool isolated;
	bool confined;                  /* unmanaged, pinned to the shared pool */
	bool seen;
	bool budget_denied;             /* a move this step found no budget */
	bool emu_sent;
	bool emu_foreign;               /* emu_want is a copy of the caller's
	                                 * reserved set, which may hold CPUs
	                                 * beyond the host's words: compared in
	                                 * full; else it lies in the host */
	bool mbm_seen;                  /* a memory bandwidth figure came (resctrl):
	                                 * the benefit check measures by it
	                                 * where there are no counters */
	bool bound_none;                /* bound is empty (set with it) */
	/* what step_rebuild_ownership() last counted of this domain (own_ok:
	 * counted since it was made): placed, isolated, its allotment
	 * (own_allot) and slots (own_slot_gen) */
	bool own_ok, own_placed, own_isolated;
	/* the vCPU samples as last seen (obs_ok: seen; at period obs_period):
	 * obs_gen counts the times they changed (step.c obs_same()); obs
	 * holds them byte for byte (their pins as pointers) when obs_copy,
	 * else obs_mark is the caller's mark of them (vcpus_gen) */
	bool obs_ok, obs_counters;      /* (obs_counters: policy_host.counters then) */
	bool obs_copy;
	bool vutil_fixed;               /* the last update of vutil changed none */
	/* emit_pins() at step emit_step found every sample's pin the very
	 * pointer of its want, at pin_gen emit_gen (emit_clean): with the
	 * same samples (obs_same(), pins included) the next step would too */
	bool emit_clean;
	struct policy_annotation *annot;        /* never NULL: cut after annot_cap
	                                 * groups (policy_dom_set_annot) */
	struct grp *groups;
	int *slot;                      /* per vCPU: the PU its slot is on
	                                 * (written through dom_slot_set) */
	/* per vCPU pins: sets of the state's pool (policy_state.sets, shared
	 * by every vCPU pinned alike: 8 bytes a vCPU, not 256), never NULL
	 * (&cpuset_none: empty), written through dom_pin_set/dom_pin_share */
	const struct cpuset **home, **want;
	const struct cpuset **sent;     /* the pin last emitted (empty: none) */
	double *vutil;                  /* per vCPU: busy fraction, EWMA */
	struct policy_vcpu_sample *obs;
	/* slot_gen counts the writes of slot (a write of the same PU
	 * counts); own_slot_gen is the count step_rebuild_ownership() last
	 * counted the slots at */
	uint64_t slot_gen, own_slot_gen;
	uint64_t pin_gen;               /* counts writes of home, want and sent
	                                 * (dom_pin_*): what was true of them is
	                                 * while it stays the same */
	uint64_t obs_period, obs_gen, obs_mark;
	uint64_t emit_step, emit_gen;
	uint64_t pinned_step;           /* the last step that pinned a vCPU away from
	                                 * the PU it ran on: the period after it ran
	                                 * another arrangement */
	/* the rest */
	char name[POLICY_NAME];
	struct policy_guest_topo guest;
	int annot_cap;
	bool no_adopt;                  /* re-placed: do not adopt old pins */
	int grown_from;                 /* re-made because its vCPU count grew
	                                 * (hot-plug) from this many: adopt_domain
	                                 * keeps those pins and places the new
	                                 * vCPUs beside them; 0 none */
	bool released_sent;
	struct cpuset allot;            /* PUs placed on (isolated: owned) */
	struct cpuset_pool *sets;       /* policy_state.sets (policy_dom_insert) */
	uint64_t *pin_step;             /* per vCPU: the last step that pinned it away
	                                 * from the PU it ran on */
	int *origin;                    /* per vCPU: the LLC it ran on when its group
	                                 * began gathering, -1 none (benefit.c) */
	struct cpuset emu_want;
	struct wakeups_state *wk;       /* wakeup history (aggregate), NULL until
	                                 * wakeups are first given */
	uint64_t refused_gen;
	char refuse_reason[POLICY_REASON];
	uint64_t pref_switches, moves;
	struct home_check hc;           /* the home check (home.c) */
	struct cpuset own_allot;
	/* the guest's reports as last seen, byte for byte
	 * (policy_dom_reports_same(); rep_ok: kept, compared at step
	 * rep_step), or their mark rep_mark (policy_domain_in.reports_gen,
	 * nonzero: no copy kept): rep_same, that step's answer */
	struct policy_hot_report *rep;
	int nrep, rep_cap;
	bool rep_ok, rep_same;
	uint64_t rep_step, rep_mark;
	/* the caller's mark of the annotation d->annot was last set from
	 * (policy_domain_in.annot_gen; 0: none) */
	uint64_t annot_mark;
	/* guest_groups_update() at step gg_step changed nothing (gg_noop:
	 * no group made, dropped or changed, every guest group reported),
	 * with annotation groups' vCPUs gg_taken, gg_nguest guest groups,
	 * this affinity-timeout and these epochs per period */
	bool gg_noop;
	uint64_t gg_step;
	int gg_nguest;
	int gg_timeout;
	double gg_epochs;
	struct cpuset gg_taken;
	struct cpuset bound;            /* a copy of *policy_domain_in.bound; empty none */
};

/* step_rebuild_ownership()'s last counts and the domains they were made
 * from (struct dom own_*): the same domains at the same indices, placed
 * alike with the same slots, count the same. */
struct own_cache {
	bool valid;
	int ndoms, cap;
	const struct dom **doms;        /* policy_state.doms as it was */
	int *core_owner, *llc_load, *pu_load;
};

struct policy_state {
	const struct topo *topo;
	/* false: every stage recomputes what it could take from last
	 * period's results (policy_state_set_incremental(): the tests
	 * compare both) */
	bool incremental;
	struct own_cache own;
	bool kd_ok;                     /* kd is llcrules_decay(kd_period_ms, kd_epoch_ms) */
	double kd, kd_period_ms, kd_epoch_ms;
	int *order_prev;                /* the last input's indices in key order ... */
	int order_n, order_cap;         /* ... of order_n domains (-1: none) */
	struct cpuset_pool *sets;       /* the doms' per-vCPU pins (struct dom) */
	bool sets_shared;               /* the caller's (policy_state_share_sets) */
	int ncpu;                       /* max_cpu + 1 */
	int nllc;
	struct dom **doms;              /* sorted by key */
	int ndoms;
	double *cpu_rt;                 /* decayed busy runtime per CPU */
	double *cpu_rt_prev;            /* ... as the last step left it */
	double cpu_rt_k;                /* the factor this step decayed it by */
	double *cpu_busy;               /* busy time per CPU this period (ns) */
	double *llc_util, *llc_cap;     /* busy PUs per LLC this period */
	int *llc_w;                     /* PUs per LLC (topo_llc_weight) ... */
	int *llc_w0, *llc_w1;           /* ... and the first and last cpuset word
	                                 * holding its PUs */
	double *occ;                    /* a group's occupancy per LLC (steer_group) */
	int *vorder;                    /* steer_preferred()'s vCPU order: MAX_VCPUS
	                                 * entries, made on first use */
	/* the same, on the PUs the domain being steered may use (its
	 * allowed set) where that is not the whole LLC (av_whole false) */
	double *av_util, *av_cap;
	bool *av_whole;
	/* steer_view()'s last view before any move changed it: the allowed
	 * set it was made for and the step (cpu_busy is fixed within a step),
	 * so that domains allowed the same PUs copy it instead of making it */
	struct cpuset view_allowed;
	bool av_moved;                  /* av_move() changed av_util since
	                                 * steer_view() set it */
	uint64_t allowed_id;            /* counts the changes of view_allowed
	                                 * (steer.c grp_quiet()) */
	uint64_t view_step, view_period_ns;   /* view_step 0: none */
	double *view_util, *view_cap;
	bool *view_whole;
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
	const struct policy_input *in;  /* the step's input while it runs, else NULL */
	uint64_t now_ns;                /* the last step's now */
	int moves_left;                 /* of the step's move budget */
	/* Sharing the budget: after a step in which it ran
	 * out, the next starts steering at the first domain it denied (key
	 * budget_start_key) and caps each domain at budget_cap moves. */
	uint64_t budget_start_key;
	int budget_cap;
	struct policy_stats stats;
};

/* policy.c: plan, state, helpers ------------------------------------------ */

/* Append an action; NULL (and stats.nomem counted) when out of memory. */
struct policy_action *policy_plan_add(struct policy_state *s, struct policy_plan *p,
                               enum policy_action_type type, const struct dom *d, int vcpu,
                               const struct cpuset *cpus, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* A reason string (an action's, a group's `why`), cut at its buffer's
 * size: reasons are cut, never an error. */
void policy_reason_printf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int policy_state_bind_topo(struct policy_state *s, const struct topo *t);
struct dom *policy_dom_new(const struct policy_domain_in *in);
void policy_dom_free(struct dom *d);
/* d's annotation becomes a copy of a (NULL: every default), its storage
 * grown to a's groups where it has fewer; -1 out of memory. */
int policy_dom_set_annot(struct dom *d, const struct policy_annotation *a);
int policy_dom_find(const struct policy_state *s, uint64_t key);
/* d joins the state (its pins then come from s->sets); -1 out of memory. */
int policy_dom_insert(struct policy_state *s, struct dom *d);
/* d's pin *slot (an entry of d->home, want or sent) becomes set, or src,
 * another such pin (no lookup). Out of memory (counted in stats.nomem)
 * the slot becomes empty: "nothing sent", "no wish", which the next
 * step makes again. */
static inline void
dom_pin_set(struct dom *d, const struct cpuset **slot, const struct cpuset *set)
{
	cpuset_pool_set_or_none(d->sets, slot, set);
	d->pin_gen++;
}

/* vCPU v's slot PU (counted in slot_gen: step_rebuild_ownership()). */
static inline void
dom_slot_set(struct dom *d, int v, int pu)
{
	d->slot[v] = pu;
	d->slot_gen++;
}

static inline void
dom_pin_share(struct dom *d, const struct cpuset **slot, const struct cpuset *src)
{
	if (*slot != src) {     /* (idle groups' vCPUs, every period: no call) */
		cpuset_pool_share(d->sets, slot, src);
		d->pin_gen++;
	}
}

/* The same, emptied. */
static inline void
dom_pin_clear(struct dom *d, const struct cpuset **slot)
{
	cpuset_pool_drop(d->sets, slot);
	d->pin_gen++;
}
bool policy_dom_reports_same(struct policy_state *s, struct dom *d, const struct policy_domain_in *di);
bool policy_dom_managed_mode(const struct dom *d);
void policy_dom_unplace(struct policy_state *s, struct dom *d);

struct llc_rules policy_rules_of(const struct policy_state *s, const struct dom *d);
const struct cpuset *policy_llc_cpus(const struct policy_state *s, int llc);
/* Set comparisons over the words that can hold host PUs only: every set
 * the engine builds lies within the host, so the rest is zero. Inline:
 * they run for every vCPU of every step. */
static inline bool
policy_set_eq(const struct policy_state *s, const struct cpuset *a, const struct cpuset *b)
{
	/* a == b is common (interned sets); memcmp compares the words a
	 * vector at a time (a word at a time cost about 45 instructions for
	 * a 384-PU host's 6 words) */
	return a == b || memcmp(a->w, b->w, sizeof(uint64_t) * (size_t)s->nwords) == 0;
}

static inline bool
policy_set_empty(const struct policy_state *s, const struct cpuset *a)
{
	for (int i = 0; i < s->nwords; i++)
		if (a->w[i])
			return false;
	return true;
}
/* CPUSET_FOREACH over the first nw words of a set only: for sets that
 * lie within them (the host's PUs: policy_state.nwords; vCPU numbers
 * below nvcpus: (nvcpus + 63) / 64), the same CPUs in the same order,
 * without CPUSET_FOREACH's scan of the 2,048-bit set to its end. A word
 * is read once: the body may clear the CPU it is given, as it may under
 * CPUSET_FOREACH, but must not set CPUs further on. */
struct policy_iter {
	const uint64_t *w;
	int nw, i;
	uint64_t bits;                  /* word i's CPUs not yet given */
};

static inline struct policy_iter
policy_iter_start(const struct cpuset *set, int nw)
{
	struct policy_iter it = { set->w, nw, 0, nw > 0 ? set->w[0] : 0 };

	return it;
}

static inline bool
policy_iter_next(struct policy_iter *it, int *cpu)
{
	while (it->bits == 0) {
		if (++it->i >= it->nw)
			return false;
		it->bits = it->w[it->i];
	}
	*cpu = it->i * 64 + __builtin_ctzll(it->bits);
	it->bits &= it->bits - 1;
	return true;
}

#define POLICY_FOREACH(cpu, set, nw) \
	for (struct policy_iter it_ = policy_iter_start((set), (nw)); policy_iter_next(&it_, &(cpu));)

/* Whether a and b share a PU; exact when either lies within the host. */
static inline bool
policy_set_intersects(const struct policy_state *s, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < s->nwords; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}
static inline bool
policy_set_sub(const struct policy_state *s, const struct cpuset *sub, const struct cpuset *super)
{
	for (int i = 0; i < s->nwords; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}
int policy_pin_llc(const struct policy_state *s, const struct cpuset *pin);
/* "LLC 3" for a pin inside one LLC, "LLCs 0-1" for one over several. */
void policy_pin_llcs(const struct policy_state *s, const struct cpuset *pin, char *buf, size_t len);
void policy_shared_pool(const struct policy_state *s, const struct policy_host *h, struct cpuset *out);
void policy_dom_allowed(const struct policy_state *s, const struct dom *d, struct cpuset *out);
/* The shared pool as far as d may use it (inside its bound). */
void policy_dom_pool(const struct policy_state *s, const struct policy_host *h, const struct dom *d, struct cpuset *out);
/* Whether the PUs of pus are all inside d's bound (no bound: true). */
bool policy_dom_in_bound(const struct dom *d, const struct cpuset *pus);

/* step.c: accounting --------------------------------------------------------- */

/* Core ownership (isolated domains) and shared-pool slots from the placed
 * domains. */
void step_rebuild_ownership(struct policy_state *s);

/* placement.c, placement_home.c: stage 3 ------------------------------------------------------- */

void placement_stage(struct policy_state *s, const struct policy_input *in,
                     struct policy_plan *plan);
/* The LLCs an allotment touches. */
int placement_llcs(const struct policy_state *s, const struct cpuset *allot);
/* The LLCs an isolated domain's home would have spread over want LLCs
 * (want 0: the fewest that hold its cores), with the same number of whole
 * cores (its own kept where the plan allows, LLCs it has cores in first,
 * then LLCs another isolated domain has broken already, so that whole
 * LLCs stay whole): 0 when it cannot be done (not isolated, topology
 * "match", no room). */
int placement_plan_llcs(const struct policy_state *s, const struct policy_host *h,
                        const struct dom *d, int want);
/* Carry out that plan: the homes and wanted pins follow, the groups are
 * released. Returns the LLCs of the new home, 0 (nothing changed) when it
 * cannot be done. */
int placement_reshape(struct policy_state *s, const struct policy_host *h, struct dom *d, int want);
/* An isolated domain's busy vCPUs placed one per core over its home again
 * (as placement_reshape() does), held there for a few periods; false when
 * there is nothing to place. */
bool placement_respread(struct policy_state *s, struct dom *d);
/* The end of a new home's hold on its busy vCPUs: once hint_periods ran
 * out, every vCPU's home is the whole allotment again. */
void placement_hint_tick(struct policy_state *s, struct dom *d);
/* Back onto the PUs of allot (a home it had) when those cores are still
 * its own or free; false otherwise. */
bool placement_restore(struct policy_state *s, const struct policy_host *h, struct dom *d,
                       const struct cpuset *allot);
/* placement.c's pieces placement_home.c uses: a domain's index in the state
 * (its core_owner value); the cores of an LLC free for isolated domain d
 * (inside its bound), least shared load first; the vCPU slots of a core
 * (overcommit-isolated); a vCPU's home and wanted pin from its slot PU. */
int placement_dom_index(const struct policy_state *s, const struct dom *d);
int placement_llc_free_cores(const struct policy_state *s, const struct policy_host *h, const struct dom *d,
                             int llc, int *cores);
int placement_slots_per_core(const struct policy_state *s, const struct policy_host *h);
void placement_set_home(struct policy_state *s, struct dom *d, int v, const struct cpuset *pool);
/* placement_home.c: a new isolated domain that fits one LLC's whole cores
 * but finds no LLC with that many free moves widened homes out of the LLC
 * where that moves the fewest vCPUs; true when it made the room. */
bool placement_make_room(struct policy_state *s, const struct policy_host *h, struct dom *d,
                         struct policy_plan *plan);

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
void groups_clear(struct grp *g);
/* g's totals become its own (tot_follows ends): the last step's cpu_rt,
 * in an array made now (a group that follows, the steady state, has
 * none: 4 KB a group on 512 PUs). Out of memory (stats.nomem) it goes on
 * following. */
void groups_unfollow(struct policy_state *s, struct grp *g);
/* Back to the placement: every vCPU of the group to its home pin, the
 * preference dropped. */
void groups_release(struct dom *d, struct grp *g);
/* Every vCPU of the group to its home pin (the preference kept). */
void groups_send_home(const struct policy_state *s, struct dom *d, struct grp *g);
/* Whether the benefit check can judge d's groups on this host: it is on
 * and there are instruction counters or bandwidth monitoring figures. */
bool groups_judged(const struct policy_input *in, const struct dom *d);
/* The no-judge rule: a group inferred from wakeups that
 * nothing can judge is shown, not acted on, unless the operator opted in
 * (policy_host.act_unjudged). True when g is held back this period (its
 * preference dropped, its vCPUs at home, `why` says why). */
bool groups_unjudged_hold(struct policy_state *s, const struct policy_input *in, struct dom *d,
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
/* After the groups are steered: a group that follows cpu_rt (struct grp
 * tot_follows) and was not sampled this step gets its own totals. */
void steer_groups_unfollow(struct policy_state *s);
int steer_vcpu_llc(const struct policy_state *s, const struct dom *d,
             const struct policy_domain_in *in, int v);
/* One move from the step's budget for d: false (and d->budget_denied)
 * when the budget is spent or d has its share. */
bool steer_budget_take(struct policy_state *s, struct dom *d);

/* order.c: the last stage --------------------------------------------------- */

/* Sort the plan into stages, split the pins that must narrow before they
 * widen, give each action its prerequisites and the pin a rollback uses,
 * hold back what cannot keep isolation (planned again next step). */
void order_stage(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan);

/* benefit.c ------------------------------------------------------------------- */

/* home.c ---------------------------------------------------------------------- */

/* A new home for d (placed, re-placed): the home check measures it once the
 * domain is busy. */
void home_placed(struct policy_state *s, struct dom *d);
/* The period's load shape and progress of a placed domain (before its
 * groups are steered: the benefit check judges in the same shape). */
void home_sample(struct policy_state *s, const struct policy_input *in, struct dom *d,
                 const struct policy_domain_in *di);
/* One period of the home check of a placed domain. */
void home_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
                 const struct policy_domain_in *di, struct policy_plan *plan);
/* d's home was rearranged to make room for another domain (why says
 * how): a trial under way is cancelled. */
void home_rearranged(struct policy_state *s, struct dom *d, const char *why);

/* One period of the benefit check of a group, before it is steered: the
 * period observed, a verdict taken, a gathering given up or looked at
 * again. */
void benefit_observe(struct policy_state *s, const struct policy_input *in, struct dom *d,
                     const struct policy_domain_in *di, struct grp *g, struct policy_plan *plan);
/* After the group was steered towards its preferred LLC: outside, its
 * vCPUs outside it; moved, whether some moved in this period (the first
 * move begins the trial). */
void benefit_moved(struct policy_state *s, struct dom *d, const struct policy_domain_in *di, struct grp *g,
                   int outside, bool moved);
/* Whether the group may move into its preferred LLC now: not while it is
 * held back, while its home is on trial, while the check has no full
 * window of it as placed, or when aggregating lost at this load shape
 * before (then it is held back, and why says so). */
bool benefit_may_aggregate(struct policy_state *s, const struct policy_input *in, struct dom *d,
                           struct grp *g);

#endif
