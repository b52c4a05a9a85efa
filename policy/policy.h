// SPDX-License-Identifier: GPL-2.0-or-later
/* policy.h - the LLC placement engine: a pure function of explicit inputs.
 *
 * Each period the caller fills a struct policy_input (topology, host
 * settings, every domain with its annotation, per-vCPU samples, guest
 * reports, per-CPU busy time, now) and calls policy_step(). The engine
 * updates the state it keeps between steps (struct policy_state: allotments,
 * vCPU groups, decayed runtimes, preferred LLCs) and returns a plan: a list
 * of actions, each with a reason. No I/O, no globals, no clocks: the same
 * inputs and state give the same plan.
 */
#ifndef LLCD_POLICY_H
#define LLCD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "annotation.h"
#include "cpuset.h"
#include "err.h"
#include "topo.h"
#include "wakeups.h"

#define POLICY_REASON 256
#define POLICY_NAME 64

/* Host-wide settings (from llcd.conf). */
struct policy_host {
	const struct topo *topo;
	struct cpuset reserved;         /* never used for vCPUs */
	struct cpuset shared_pool;      /* non-isolated domains; empty = every
	                                 * non-reserved PU no isolated domain owns */
	double overcommit;              /* vCPUs per PU in the shared pool (>0) */
	double overcommit_isolated;     /* vCPUs per PU for isolated domains */
	int max_moves_total;            /* vCPU moves per period, all domains */
	bool counters;                  /* per-thread instruction counts exist */
	bool act_unjudged;              /* act on groups inferred from wakeups
	                                 * where nothing can judge them (no
	                                 * counters, no bandwidth monitoring):
	                                 * llcd.conf unjudged-groups act; false
	                                 * (default): shown, not acted on */
};

void policy_host_defaults(struct policy_host *h, const struct topo *t);

/* Guest CPU topology as the domain defines it (1 where absent). */
struct policy_guest_topo {
	int sockets, dies, clusters, cores, threads;
};

/* One vCPU thread's observation over the last period. */
/* (No padding: the engine compares a domain's samples with the last ones
 * byte for byte, step.c obs_same(); 40 bytes.) */
struct policy_vcpu_sample {
	uint64_t runtime_ns;            /* CPU time used during the period */
	uint64_t run_delay_ns;          /* runnable but waiting for a CPU during
	                                 * the period (schedstat's 2nd field, or
	                                 * the tracer); 0 unknown */
	uint64_t instructions;          /* retired during the period (counters) */
	/* current affinity; NULL or empty = unknown. The caller's set, read
	 * during policy_step only (llcd's back-ends keep it until their
	 * next observation): a pointer, not 256 bytes a vCPU */
	const struct cpuset *pinned;
	int tid;                        /* host thread id (for reasons), 0 unknown */
	int last_cpu;                   /* PU it last ran on, -1 unknown */
};

/* A sample's pin, never NULL: &cpuset_none when unknown. */
static inline const struct cpuset *
policy_sample_pin(const struct policy_vcpu_sample *s)
{
	return s->pinned != NULL ? s->pinned : &cpuset_none;
}

/* A hot guest process as the guest helper reported it. */
struct policy_hot_report {
	char name[POLICY_GROUP_NAME];   /* process name (untrusted, sanitised) */
	int pid;
	struct cpuset vcpus;            /* vCPUs its busy threads ran on */
};

struct policy_domain_in {
	uint64_t key;                   /* stable identity chosen by the caller */
	char name[POLICY_NAME];
	int nvcpus;
	struct policy_guest_topo guest;
	const struct policy_vcpu_sample *vcpus;   /* nvcpus entries */
	/* The caller's mark of vcpus[] (0: none). Nonzero: a value it gives
	 * the samples whenever any byte of them may have changed since the
	 * last step (a counter shared by all its domains, so that no two
	 * contents of one key ever carry the same mark); the same nonzero
	 * mark as at the last step, for the same key, promises the samples
	 * are byte for byte the last step's (pins: the same pointers), and
	 * the engine does not compare them. 0: it compares them with a copy
	 * it keeps (step.c obs_same()). */
	uint64_t vcpus_gen;
	int nreports;
	const struct policy_hot_report *reports;
	/* The caller's mark of nreports and reports[] (0: none), as
	 * vcpus_gen is of the samples: the same nonzero mark as at the last
	 * step promises the same reports, and the engine neither compares
	 * them nor keeps a copy; 0: it compares them with its copy. */
	uint64_t reports_gen;
	/* Wakeups between this domain's vCPU threads during the period
	 * (wakeups.h); NULL when the back-end cannot see them (no tracer). */
	const struct policy_wakeups *wakeups;
	/* Memory bandwidth the domain's vCPU threads achieved during the
	 * period: bytes read and written to memory (resctrl's mbm_total_bytes
	 * of its monitoring group; llcsim's host.mbm). Only when mbm_valid. */
	bool mbm_valid;
	uint64_t mbm_bytes;
	/* Where the guest's memory lives: the OS number of the NUMA node that
	 * holds most of it (sampled guest-RAM pages, agent/drivers/memnode.h; llcsim's
	 * memory_node). Only when mem_node_valid. A group's preferred LLC then
	 * stays in that node when the group may run there (the kernel's NUMA
	 * precedence, docs/design.md). */
	bool mem_node_valid;
	int mem_node;
	/* The CPUs the domain may run on at all, set by someone else (the
	 * cgroup cpuset enclosing its QEMU: kubelet's on a KubeVirt node):
	 * its placement, pins, steering and release stay inside it; NULL or
	 * empty: no bound (the host). A change re-places the domain. The
	 * caller's set, read during policy_step only: a pointer, so that an
	 * unbound domain costs the step no read of 256 bytes and no compare
	 * (llcd's back-ends: the observation's copy, agent_obs_bound()). */
	const struct cpuset *bound;
	/* Last: what a step reads of each domain lies in its first ~700
	 * bytes, not 18 KB apart (the groups' room is most of the size) */
	/* The caller's mark of annotated and annot (0: none), as vcpus_gen
	 * is of the samples: the same nonzero mark as at the last step
	 * promises both byte for byte the last step's, and the engine does
	 * not compare them; 0: it compares them with its own copy. */
	uint64_t annot_gen;
	bool annotated;                 /* false: unannotated (default mode) */
	struct policy_annotation annot; /* valid when annotated */
};

struct policy_input {
	struct policy_host host;
	int ndomains;
	const struct policy_domain_in *domains;
	const uint64_t *cpu_busy_ns;    /* per PU OS index, busy during period; may be NULL */
	uint64_t now_ns;
	uint64_t period_ns;             /* sampling period (>0) */
};

enum policy_action_type {
	POLICY_ACT_PIN_VCPU,            /* pin vcpu of domain to cpus */
	POLICY_ACT_PIN_EMULATOR,        /* pin the domain's emulator threads */
	POLICY_ACT_RELEASE,             /* give the domain back to the default scheduler */
	POLICY_ACT_REFUSE,              /* cannot place the domain (reason says why) */
	POLICY_ACT_PREFER,              /* informational: a group's preferred LLC changed */
	POLICY_ACT_BACKOFF,             /* informational: benefit check backed a group
	                                 * off, or the home check widened a home */
};
/* The number of action types, for arrays indexed by them: keep it the last
 * value + 1 (a macro, not a member, so that switches stay exhaustive). */
#define POLICY_ACT_COUNT (POLICY_ACT_BACKOFF + 1)

/* The stages of a plan, in the order the caller applies them (order.c,
 * docs/design.md "The order of actions"). A vCPU of a domain without
 * isolation and a vCPU of an isolated domain never share a core, nor do
 * two isolated domains, at any moment between two actions:
 *  - NARROW: pins that take no core a vCPU of a conflicting domain may
 *    reach: narrowings (inside the thread's present affinity), pins onto
 *    cores no conflicting domain touches this period, the narrowing half
 *    of a pin that both leaves and takes contested cores, informational
 *    actions. They wait for nothing.
 *  - ISOLATE: pins of isolated domains onto cores that other domains'
 *    vCPUs leave in NARROW (or in an earlier ISOLATE pin);
 *  - WIDEN: pins of domains without isolation onto cores isolated
 *    domains leave. */
enum policy_stage {
	POLICY_STAGE_NARROW,
	POLICY_STAGE_ISOLATE,
	POLICY_STAGE_WIDEN,
};
#define POLICY_STAGE_COUNT (POLICY_STAGE_WIDEN + 1)

struct policy_action {
	enum policy_action_type type;
	uint64_t key;                   /* domain */
	int domain;                     /* index into policy_input.domains */
	int vcpu;                       /* -1 when not about one vCPU */
	int llc;                        /* PREFER: new LLC (-1 none); else -1 */
	struct cpuset cpus;
	char reason[POLICY_REASON];
	/* the order (order.c): the plan lists actions by stage, and every
	 * prerequisite comes before the actions that wait for it */
	enum policy_stage stage;
	int dep0, ndeps;                /* prerequisites: the plan's deps[dep0 ..
	                                 * dep0 + ndeps), indices of earlier
	                                 * actions; apply this one only if each
	                                 * of them was applied */
	bool held;                      /* the engine holds it back (reason says
	                                 * why: isolation would not hold); never
	                                 * apply it; it is planned again */
	struct cpuset undo;             /* PIN_VCPU: where to put the vCPU back if
	                                 * the caller rolls the domain back (its
	                                 * affinity before the step, less the
	                                 * cores conflicting domains touch this
	                                 * period); empty: keep the pin */
};

struct policy_plan {
	int n, cap;
	struct policy_action *actions;
	int ndeps, deps_cap;
	int *deps;                      /* prerequisites of the actions */
};

/* The prerequisites of action i (n of them into *n; NULL when none). */
const int *policy_plan_deps(const struct policy_plan *p, int i, int *n);

struct policy_plan *policy_plan_new(void);
void policy_plan_free(struct policy_plan *p);
void policy_plan_clear(struct policy_plan *p);

/* Engine state kept between steps. */
struct policy_state;
struct policy_state *policy_state_new(void);
void policy_state_free(struct policy_state *s);
/* Off: each step recomputes everything it would otherwise take from the
 * last step's results where its inputs did not change (on by default;
 * the plans are the same either way, which the tests check). */
void policy_state_set_incremental(struct policy_state *s, bool on);
/* The engine interns its per-vCPU pins in the caller's pool from now on
 * (before the first step: -1 once it holds a domain) instead of its own:
 * a back-end whose samples' pins are sets of that pool (llcd's live
 * back-end) then hands the engine, for a vCPU pinned as wanted, the very
 * pointer of its wanted pin, and the step's compare of the two is a
 * pointer compare, not 256 bits a vCPU a period. The pool must outlive
 * the state and be used by one thread; the state never frees it (its
 * failed allocations count in the engine's nomem, whoever made them). */
struct cpuset_pool;
int policy_state_share_sets(struct policy_state *s, struct cpuset_pool *p);

/* One policy step. Returns 0, or -1 with err filled on invalid input (the
 * state is then unchanged). Refusals are actions, not errors. */
int policy_step(struct policy_state *s, const struct policy_input *in,
                struct policy_plan *plan, struct llcd_err *err);

/* --- Introspection for llcctl / llcsim -------------------------------- */

enum policy_group_rule {
	POLICY_GROUP_ANNOTATION,        /* <llc:group> in the annotation */
	POLICY_GROUP_GUEST,             /* reported by the guest helper */
	POLICY_GROUP_DOMAIN,            /* the whole domain fits one LLC */
	POLICY_GROUP_WAKEUPS,           /* inferred from vCPU wakeups (wakeups.h) */
};

/* A trial (an adaptive change: a wider or narrower home, a gathered
 * group) that did not pay, remembered for the load shape it was judged in
 * (docs/design.md, "Trials"). */
#define POLICY_TRIAL_MEMO 8
struct policy_trial_memo {
	int busy;                       /* the load shape: busy vCPUs ... */
	double cpus;                    /* ... and CPUs demanded */
	int from_llcs;                  /* home: the LLCs of the home it was tried from */
	bool wider;                     /* home: a wider home was tried (else narrower) */
	double ratio;                   /* progress per demand, tried / as it was */
	int fails;                      /* failures at that load */
	double age_s;                   /* failed that long ago */
	double retry_in_s;              /* not tried again at that load for this long */
};

enum policy_trial_state {
	POLICY_TRIAL_WATCHING,          /* the arrangement in place is watched */
	POLICY_TRIAL_SETTLING,          /* a tried arrangement settles */
	POLICY_TRIAL_MEASURING,         /* ... and is measured */
};

struct policy_trial_info {
	enum policy_trial_state state;
	int periods;                    /* watching or measuring: alike periods so far ... */
	int window;                     /* ... of a window this long */
	int busy;                       /* the load shape watched (or judged in, while
	                                 * on trial); -1 none yet */
	double cpus;
	int nmemo;
	struct policy_trial_memo memo[POLICY_TRIAL_MEMO];
};

struct policy_group_info {
	char name[POLICY_GROUP_NAME];
	enum policy_group_rule rule;
	struct cpuset vcpus;
	int pref_llc;                   /* -1 none */
	double pref_occ;                /* occupancy of the preferred LLC */
	double best_occ;
	int best_llc;
	bool guarded;                   /* a size guard forbids aggregation */
	bool backed_off;                /* benefit check hold-down active */
	bool unjudged;                  /* inferred, and nothing on this host can
	                                 * judge it: shown, not acted on (why
	                                 * says so; policy_host.act_unjudged) */
	double wakeups_hz;              /* wakeups rule: summed EWMA rate of the
	                                 * formed pairs inside the group */
	int wakeup_pairs;               /* ... and how many pairs */
	char why[POLICY_REASON];        /* last decision about this group */
	struct policy_trial_info trial; /* the benefit check's trial (no memo's
	                                 * from_llcs or wider) */
};

struct policy_domain_info {
	uint64_t key;
	char name[POLICY_NAME];
	enum policy_mode mode;
	bool managed;
	bool refused;
	char reason[POLICY_REASON];     /* why refused (empty otherwise) */
	struct cpuset allotment;
	int ngroups;
	struct policy_group_info groups[POLICY_MAX_GROUPS];
	uint64_t pref_switches;
	uint64_t vcpu_moves;
	bool home_widened;              /* the home check widened the home */
	char home_why[POLICY_REASON];   /* the home check's last decision ("" none) */
	struct policy_trial_info home_trial; /* the home check's trial */
};

/* The caller did not carry out act (held it back, or it failed with
 * nothing changed): the engine plans it again at the next step even where
 * the back-end cannot observe pins (it would otherwise compare with what it
 * last sent). Unknown domains and informational actions are ignored. */
void policy_action_not_applied(struct policy_state *s, const struct policy_action *act);

/* Fill info for the domain with key; -1 if the engine does not know it. */
int policy_domain_info(const struct policy_state *s, uint64_t key,
                       struct policy_domain_info *info);

/* The host PU of each vCPU's placement slot (its home; the pin may be the
 * whole LLC's share) and its home pin, for vCPUs 0..n-1; NULL arrays are
 * skipped. Returns the domain's vCPU count, or -1 if the engine does not
 * know the domain or has not placed it. */
int policy_domain_slots(const struct policy_state *s, uint64_t key, int *slots,
                        struct cpuset *home, int n);

/* What the wakeup rule sees of a domain (llcctl wakeups): the strongest
 * tracked pairs (at most max into pairs, by rate), the background and total
 * rates (Hz), the wakeups the producer dropped. Returns the number of pairs
 * written, or -1 if the engine keeps no wakeup history for the domain (not
 * aggregate, not placed, or no wakeups ever given). */
struct policy_wakeups_info {
	bool inferring;                 /* infer='wakeups': groups may form */
	double background_hz, total_hz;
	uint64_t dropped;
};
int policy_domain_wakeups(const struct policy_state *s, uint64_t key,
                          struct policy_wakeups_info *info,
                          struct wakeups_pair_info *pairs, int max);

struct policy_stats {
	uint64_t steps, pins, pref_switches, refusals, backoffs;
	/* Allocations that failed inside a step. Each skipped one part of the
	 * step (an action of the plan, a new group, a domain's placement or
	 * occupancy this period; a group's `why` says so where it was about a
	 * group) and is retried the next step. policy_step() itself fails with
	 * "out of memory" only where it cannot go on at all. */
	uint64_t nomem;
};
void policy_stats(const struct policy_state *s, struct policy_stats *st);
/* The topology the state is bound to (the last step's host.topo; NULL
 * before the first step): it must stay alive while it is, since the next
 * step compares it with its host's. */
const struct topo *policy_state_topo(const struct policy_state *s);

/* Whether the engine placed the domain on cores of its own
 * (isolation="core", placed, not refused). */
bool policy_domain_isolated(const struct policy_state *s, uint64_t key);
/* Whether any domain is (one pass over the state, no lookup by key). */
bool policy_any_isolated(const struct policy_state *s);

const char *policy_action_name(enum policy_action_type t);
const char *policy_trial_state_name(enum policy_trial_state st);
const char *policy_stage_name(enum policy_stage st);
const char *policy_group_rule_name(enum policy_group_rule r);

#endif
