// SPDX-License-Identifier: GPL-2.0-or-later
/* live_int.h - what the files of the live back-end (agent/live/) share; not
 * for other modules, which use live.h.
 *
 *   live.c      life cycle: live_new/live_free, probes, the ops table
 *               (the loop's verbs, llcctl's questions, the run loop's hooks)
 *   domains.c   domains from libvirt and its events; annotation; vCPU
 *               thread discovery
 *   observe.c   observe(): /proc samples, counters, the guest channel
 *   mbm.c       memory bandwidth per domain (resctrl monitoring groups)
 *   numa.c      the NUMA node of each domain's memory (sampled guest RAM)
 *   apply.c     apply(): pins, failure classes and back-off, core
 *               scheduling cookies
 *   state.c     the state file (state.h)
 *   kcas.c      the kernel cache-aware-scheduling probe (kcas.h)
 *   describe.c  dominfo and topology facts for llcctl
 *   qmpcheck.c  the QMP cross-check of vCPU positions
 *   requests.c  llcctl's requests passed to libvirt (annotation, XML,
 *               guest channel)
 *   conns.c     the libvirt connections: the `uri` one and one per daemon
 *               that socket_glob finds (a KubeVirt node's virt-launcher
 *               daemons); their events, reconnects and re-lists
 *   bound.c     each domain's CPU bound: the cgroup cpuset enclosing its
 *               QEMU (cgbound.h), given to the engine, checked before a pin
 *   ext.c       domains another source finds (the QMP back-end,
 *               agent/qmpback/): added, annotated and removed by it,
 *               pinned with sched_setaffinity (cgcpuset.h)
 *
 * Everything runs on the caller's thread; no locks.
 */
#ifndef LLCD_LIVE_INT_H
#define LLCD_LIVE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpuset_pool.h"    /* and cpuset.h */
#include "err.h"
#include "live.h"
#include "policy.h"
#include "virt.h"

/* the drivers a domain or the back-end holds by pointer only */
struct live_cgbound;
struct ldom_mbm;
struct live_state;
struct coresched;
struct memnode_maps;
struct procstat;
struct procstat_thread;
struct procstat_proc;
struct tracer;

struct qmp_cpus;
struct guesttopo_pos;

/* One libvirt daemon's connection (conns.c): the primary one (`uri`), or
 * one per daemon the socket glob finds, known by its socket's directory
 * (device and inode: the same through every /proc/PID/root that reaches
 * it, and across a restart of the daemon, which makes a new socket in the
 * same directory). */
struct lconn {
	struct virt *virt;
	char uri[PATH_MAX + 64];        /* what it connects to (messages, llcctl) */
	char sock[PATH_MAX];            /* the socket path found; "" primary */
	unsigned long long dev, ino;    /* its directory; 0: primary */
	bool need_relist;
	uint64_t relist_due_ns;
	bool listed_once;
	uint64_t missing_since_ns;      /* not found by the scans since; 0 found */
};

/* A domain's CPU bound (bound.c): what its QEMU's cgroup cpuset allows of
 * the host's CPUs, read when the domain is found and every
 * affinity_refresh periods. */
struct ldom_bound {
	bool read;                      /* read at least once (or failed) */
	uint64_t next_period;           /* the next read */
	uint64_t read_period;           /* the last read's */
	struct cpuset cpus;             /* host ∩ cgroup; empty: no bound (the
	                                 * cgroup allows every host CPU) */
	int cg_version;                 /* the cgroup read: 1 or 2 (0: none) */
	char *cg_cgroup, *cg_dir;       /* ... its path and directory
	                                 * (cgbound's); NULL none */
	char *error;                    /* the last read failed: why; NULL none
	                                 * (ldom_str_set, LLCD_ERR_MSG) */
	int cg_fd, cg_fd_pid;           /* /proc/PID/cgroup kept open for the
	                                 * periodic read, and its PID; -1 none */
	char *cg_path;                  /* the cgroup path the periodic read
	                                 * last took from it (NULL none) ... */
	int path_uses;                  /* ... and the periodic reads that took
	                                 * it since (LIVE_BOUND_PATH_REUSE) */
};

/* The parts of a domain each written by one file (struct ldom names the
 * file beside each). */

/* QMP cross-check (qmpcheck.c, qmp-passthrough): query-cpus-fast is asked
 * once per vCPU set (sig: the count and thread IDs) and served from here,
 * so read-only requests never reach the monitor. */
struct ldom_qmp {
	struct qmp_cpus *cpus;
	char *why;                      /* NULL: "" (ldom_str_set, LLCD_ERR_MSG) */
	uint64_t sig;
	bool asked;
	uint64_t queries;
};

/* libvirt's live pins (apply.c: vcpupin, emulatorpin), read at most once
 * per period and only where the kernel already has a thread where the
 * plan wants it: a pin both agree with is not made again. */
struct ldom_lvpins {
	struct cpuset *pins;            /* cap entries */
	int cap, n;
	struct cpuset emu;
	uint64_t period;                /* the period they were read in; 0 never */
	bool ok;
	int owed;                       /* vCPUs pinned directly, libvirt not
	                                 * told yet (lvcpu.lv_owed) */
};

/* The reaction to libvirt's started event (conns.c notes the event,
 * apply.c the pins, observe.c logs it in the period after the one that
 * placed the domain). */
struct ldom_react {
	uint64_t started_ns;            /* the event (CLOCK_MONOTONIC); 0: none pending */
	uint64_t period;                /* the first period that observed it; 0
	                                 * not observed yet */
	uint64_t first_ns, last_ns;     /* first and last vCPU pin (or kept) */
	uint64_t act_period;            /* the period of the first pin (or kept); 0 none */
	int calls, kept;                /* pin calls made, pins found in place */
	uint64_t told_ns;               /* libvirt told of the last direct pin */
};

/* Where its memory lives (numa.c): read every LIVE_NUMA_INTERVAL_NS. */
struct ldom_mem {
	bool known;                     /* node read (it may be -1: spread) */
	int node;                       /* OS node, -1 none has the majority */
	int resident, sampled;          /* the last full read's pages */
	unsigned confirms;              /* reads that confirmed the answer on
	                                 * LIVE_NUMA_CONFIRM_PAGES pages */
	uint64_t next_ns;               /* next read (loop time) */
	uint64_t interval_ns;           /* ... after the last (0: the first) */
	bool warned;                    /* a failed read was logged */
	char error[LLCD_ERR_MSG];       /* the last read failed: why; "" */
	struct memnode_maps *maps;      /* its guest-RAM regions, kept between
	                                 * reads (NULL until the first) */
};

struct lvcpu {
	int tid;                        /* 0: thread not found */
	struct procstat_thread *th;
	uint64_t prev_runtime;
	bool have_prev;
	int last_cpu;
	/* sets of the back-end's pool (ldom.sets: one copy per distinct
	 * set, 8 bytes here), never NULL, written through lvcpu_set; the
	 * engine's samples point at them (the pool frees a set no one holds
	 * at the next observe, not before: live.sets) */
	const struct cpuset *affinity;  /* cached kernel affinity; empty unknown */
	const struct cpuset *applied;   /* what llcd last pinned; empty: nothing */
	bool hotplugged;                /* online since the domain's count grew,
	                                 * not pinned by llcd yet: its affinity
	                                 * (inherited) is reported "unknown" */
	int perf_fd;                    /* instruction counter; -1 none, -2 failed */
	uint64_t prev_instr;
	bool have_instr;
	int tr_slot;                    /* the tracer's slot; -1: sampled from /proc */
	uint64_t prev_delay;            /* run delay (tracer or schedstat), cumulative */
	bool lv_owed;                   /* pinned directly (applied), libvirt
	                                 * not told yet (apply.c) */
};

/* A domain's life in the back-end, as far as llcd manages it (ldom.state).
 * Each state and the events that move it, with the function that moves it:
 *
 *   LDOM_NEW          listed (domains.c upsert) and its annotation not read
 *                     yet. A transient libvirt error keeps it NEW and the
 *                     annotation is read again the next period; another
 *                     error keeps it NEW until the next metadata event.
 *                     annotation read (ldom_read_annotation):
 *                       none -> UNANNOTATED, invalid -> INVALID,
 *                       valid -> MANAGED (REFUSED while a refusal stands)
 *                     no annotation but a policy-rule matches: MANAGED
 *                     with the rule's policy (rule), INVALID when the
 *                     rule's groups do not fit the domain
 *   LDOM_UNANNOTATED  no llc-policy annotation: left to the default
 *                     scheduler (confined to the shared pool as a whole
 *                     while isolated domains exist).
 *                     annotation re-read (metadata event, llcctl annotate):
 *                       as from NEW
 *   LDOM_INVALID      the annotation does not parse (annot_err): unmanaged.
 *                     annotation re-read: as from NEW
 *   LDOM_MANAGED      a valid annotation (annot): the engine places it.
 *                     REFUSE action (live_apply) -> REFUSED;
 *                     annotation re-read: as from NEW
 *   LDOM_REFUSED      a valid annotation, but the engine's last word was
 *                     REFUSE (refuse_msg): not placed.
 *                     a vCPU pinned (live_apply) -> MANAGED;
 *                     annotation re-read: as from NEW
 *
 * live_add_process() starts a domain in MANAGED (with an annotation) or
 * UNANNOTATED; it is never re-read. A domain leaves the table (ldom_remove)
 * when libvirt says it stopped or its QEMU changed, whatever its state.
 *
 * A refusal (refuse_msg) is recorded whatever the state and stands until a
 * vCPU is pinned, so that a domain re-annotated while refused is REFUSED.
 *
 * Beside the state, not in it: a permanent failure to apply (failed,
 * error_msg; apply.c live_note_result). The loop abandons the domain's key,
 * but the engine still counts the domain, so the back-end keeps reading its
 * annotation and threads and reporting them; describe shows the failure
 * first. It lasts until the domain stops.
 */
enum ldom_state {
	LDOM_NEW = 0,
	LDOM_UNANNOTATED,
	LDOM_INVALID,
	LDOM_MANAGED,
	LDOM_REFUSED,
};

/* Work a domain has pending, done in the next observe() (or at once where
 * the event handler can): set by the events named, cleared when done. */
enum {
	LDOM_TODO_ANNOT = 1 << 0,       /* read the annotation: listed, metadata
	                                 * event, llcctl annotate */
	LDOM_TODO_DISCOVER = 1 << 1,    /* find the vCPU threads: listed, vCPU
	                                 * count changed, a thread vanished or its
	                                 * QEMU's thread count changed, a pin said
	                                 * "gone" */
	LDOM_TODO_AFFINITY = 1 << 2,    /* re-read the kernel's affinities: tunable
	                                 * event (someone pinned), CPU hotplug */
	LDOM_TODO_OBS = 1 << 3,         /* refill the engine's view of it (name,
	                                 * guest topology, annotation): listed,
	                                 * vCPU count changed, annotation read */
};

/* Core scheduling of an isolated domain (apply.c live_coresched). */
enum ldom_cs {
	LDOM_CS_NONE = 0,               /* no cookie yet (or not isolated) */
	LDOM_CS_COOKIE,                 /* cookie of cs_tid, shared to new threads */
	LDOM_CS_GAVE_UP,                /* assigning failed (gone, permanent) */
};

struct ldom {
	uint64_t key;
	struct cpuset_pool *sets;       /* live.sets: its vCPUs' CPU sets */
	struct lconn *conn;             /* the connection it came from; NULL for
	                                 * live_add_process and ext domains */
	/* messages: NULL is "" (ldom_str), set by ldom_str_set, each cut
	 * where the char array it replaced ended (most domains have none:
	 * ~4.6 KB a domain were 0 bytes) */
	char *gc_refused;               /* why the XML's channel was refused (LLCD_ERR_MSG) */
	struct ldom_qmp qmp;            /* qmpcheck.c */
	char uuid[VIRT_UUID_LEN];
	char name[VIRT_NAME_MAX];
	int pid;
	int obs_slot;                   /* its slot in this period's observation
	                                 * (observe.c; checked by key) */
	/* its samples' mark (policy_domain_in.vcpus_gen), given in the
	 * observation obs_mark_seq (live.obs_seq) */
	uint64_t obs_mark, obs_mark_seq;
	/* its annotation's and reports' marks (annot_gen, reports_gen), new
	 * when it writes them or its slot is not the one it wrote last */
	uint64_t annot_mark, reports_mark;
	int reports_n;                  /* the reports it last wrote */
	int nvcpus, maxvcpus;
	bool persistent;
	bool fake;                      /* live_add_process: not a libvirt domain */
	/* a domain of another source (ext.c; fake is set too). The ext_*
	 * members are ext.c's: written there only (live_ext_add/update,
	 * live_ext_threads_seen, live_ext_forget), read elsewhere */
	bool ext;
	int *ext_tids;                  /* maxvcpus: vCPU i's thread (QMP), 0 none */
	/* hot-plug (ldom_discover): the threads named as vCPUs ("CPU n/KVM",
	 * "CPU n/TCG") at the discovery after the source's last answer, as a
	 * signature; ext_changed when they, or a named thread's existence,
	 * differ since (live_ext_vcpus_changed) */
	uint64_t ext_named_sig;
	bool ext_sig_pending;           /* the next discovery records it */
	bool ext_changed;
	char *ext_annot;                /* the llc-policy element; NULL none */
	char *ext_src;                  /* where it came from, for messages; NULL none */
	char *ext_channel;              /* the guest helper's socket; NULL none */
	struct policy_guest_topo guest;
	enum ldom_state state;
	struct policy_annotation *annot;        /* valid in MANAGED and REFUSED; never
	                                 * NULL: a copy cut after its groups in use
	                                 * (policy_annotation_dup), set by
	                                 * ldom_set_annot() */
	int rule;                       /* annot is policy-rule number rule (from
	                                 * 1), not an annotation; 0: none */
	char *rule_where;               /* that rule's file:line (POLICYRULE_WHERE) */
	char *rule_match;               /* and its MATCHes (POLICYRULE_TEXT) */
	char *annot_err;                /* INVALID: why (LLCD_ERR_MSG) */
	char *refuse_msg;               /* the standing refusal (POLICY_REASON) */
	bool failed;                    /* a permanent failure (see above) */
	char *error_msg;                /* (LLCD_ERR_MSG) */
	unsigned todo;                  /* LDOM_TODO_* */
	struct lvcpu *v;                /* maxvcpus */
	int nthreads_seen;
	uint64_t discovered_period;
	bool threads_missing;           /* an online vCPU's thread not found */
	struct cpuset emu_applied;
	struct cpuset emu_pending;      /* an emulator pin that failed transiently */
	int transient_streak;
	uint64_t last_transient_period;
	uint64_t backoff_until;         /* period number */
	enum ldom_cs cs_state;
	int cs_tid;
	bool state_checked;             /* the state file compared (once) */
	bool touched;                   /* llcd tried to pin it (or the state file says so) */
	bool seen;                      /* relist(): listed this time */
	struct guestchan *gc;           /* the guest helper's channel, or NULL */
	bool gc_looked;                 /* domain XML searched for the channel */
	struct tracer *tracer;          /* the back-end's, or NULL (/proc) */
	int tr_dom;                     /* the tracer's domain; -1 none */
	bool tr_warned;                 /* a tracer cap was logged */
	struct procstat_proc *qemu;     /* QEMU's process: the thread count
	                                 * hint when the tracer samples */
	struct ldom_lvpins lv;          /* apply.c */
	struct ldom_react react;        /* observe.c (the event: conns.c) */
	struct ldom_mbm *mbm;           /* mbm.c's: NULL until it samples d */
	struct ldom_mem mem;            /* numa.c */
	struct ldom_bound bound;        /* bound.c */
};

/* A domain's message (char *, NULL none) as a string: "" for none. */
static inline const char *
ldom_str(const char *m)
{
	return m != NULL ? m : "";
}

/* *m becomes what fmt prints, cut at cap - 1 bytes (the size of the
 * array it replaces, at most 1,024); "" frees it. Out of memory: "". */
void ldom_str_set(char **m, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void ldom_str_clear(char **m);

/* A vCPU was pinned: the refusal no longer stands (REFUSED -> MANAGED). */
static inline void
ldom_refusal_lifted(struct ldom *d)
{
	ldom_str_clear(&d->refuse_msg);
	if (d->state == LDOM_REFUSED)
		d->state = LDOM_MANAGED;
}

/* Whether the domain has a valid annotation (the engine's "annotated"). */
static inline bool
ldom_annotated(const struct ldom *d)
{
	return d->state == LDOM_MANAGED || d->state == LDOM_REFUSED;
}


struct live {
	struct live_config cfg;
	struct cpuset_pool *sets;       /* the vCPUs' CPU sets (struct lvcpu):
	                                 * deferred (cpuset_pool_defer), collected
	                                 * at the start of live_observe */
	char state_path[PATH_MAX];
	bool state_enabled;
	struct virt *virt;              /* the primary connection's (uri), or NULL */
	struct lconn **conns;           /* every connection (conns.c) */
	int nconns, conns_cap;
	int epfd;                       /* epoll over their event fds; -1 none */
	uint64_t scan_due_ns;           /* the next socket scan */
	uint64_t scans;
	struct procstat *ps;
	struct coresched *cs;
	struct ldom **doms;
	int ndoms, cap;
	int new_domains;                /* found since the last live_handle_events() */
	bool listed_once;
	uint64_t ext_change_gen;        /* bumped when an ext domain's ext_changed is set */
	uint64_t now_ns;
	uint64_t period;
	/* observations made (observe.c), and the last mark given to a
	 * domain's samples (policy_domain_in.vcpus_gen): each new one */
	uint64_t obs_seq, obs_marks;
	struct live_state *saved;       /* state.c's: the file read at start; NULL none */
	bool state_dirty;
	int state_failing;              /* failed writes in a row */
	uint64_t state_retry_period;    /* no write before this period */
	int ncpus;
	uint64_t *cpu_prev, *cpu_cur;
	bool have_cpu_prev;
	struct live_stats st;
	const char *kcas_state;         /* live_kcas_name() of the probe (kcas.h) */
	char kcas_detail[256];
	struct cpuset everywhere;       /* topology CPUs this host has online */
	bool counters;                  /* instruction counters are read */
	char counters_reason[256];
	struct tracer *tracer;          /* the in-kernel tracer; NULL: /proc */
	char sampler_reason[LLCD_ERR_MSG];      /* why the tracer is not used */
	uint64_t prev_obs_ns;           /* the last observe()'s now_ns; 0 none */
	const struct policyrule_set *rules;     /* policy-rule (the daemon's); NULL none */
	struct resctrl *rc;             /* resctrl L3 monitoring; NULL: none */
	struct live_cgbound *cgm;       /* the cgroup mounts and the last bound
	                                 * read (bound.c); NULL unread */
	char mbm_reason[LLCD_ERR_MSG + 128];    /* what bandwidth monitoring there is */
	bool have_src;                  /* a discovery source (live_set_source) */
	struct live_source src;
	int evfd;                       /* epoll over the connections' fd and the
	                                 * source's, when there are both; -1 */
};

/* The libvirt connection of a domain (NULL: none; pinned directly). */
static inline struct virt *
ldom_virt(const struct ldom *d)
{
	return d->conn != NULL ? d->conn->virt : NULL;
}

/* domains.c */
struct ldom *ldom_by_key(const struct live *l, uint64_t key);
/* The domain of connection c with that UUID, or NULL. */
struct ldom *ldom_by_uuid(const struct live *l, const struct lconn *c, const char *uuid);
/* Ask c's daemon about one domain again (an event named it): added,
 * refreshed or removed. */
void ldom_refresh(struct live *l, struct lconn *c, const char *uuid);
/* List c's domains: add, refresh, remove those c no longer runs. */
void live_relist(struct live *l, struct lconn *c);
/* conns.c */
/* The primary connection (cfg.uri) and the first scan of the glob. */
int live_conns_open(struct live *l, struct llcd_err *err);
void live_conns_close(struct live *l);
/* How many connections are up. */
int live_conns_up(const struct live *l);
/* Their pollable fd (-1 none), and everything due on them (as
 * live_handle_events(), which adds the discovery source's). */
int live_conns_event_fd(const struct live *l);
int live_conns_handle(struct live *l, uint64_t now_ns, struct llcd_err *err);
void ldom_free(struct ldom *d);
/* A new domain in the table (state NEW, everything to do); NULL: out of memory. */
struct ldom *ldom_add(struct live *l, uint64_t key, const char *uuid, const char *name, int pid,
    int nvcpus, int maxvcpus);
/* Room for maxvcpus vCPUs (more: new ones zeroed; fewer: closed). 0, or -1
 * when out of memory. */
int ldom_resize(struct ldom *d, int maxvcpus);
/* The domain's online vCPU count is now nvcpus (vCPU hot-plug; room for
 * them made already): vCPUs that came online are marked hot-plugged and
 * those that went offline forget llcd's pins; logged, and the threads
 * are found again and the engine told in the next period. */
void ldom_set_nvcpus(struct ldom *d, int nvcpus);
/* A vCPU's set *slot (lvcpu.affinity or applied) becomes set; out of
 * memory it becomes empty: "unknown" (read again), "nothing applied". */
static inline void
lvcpu_set(struct ldom *d, const struct cpuset **slot, const struct cpuset *set)
{
	cpuset_pool_set_or_none(d->sets, slot, set);
}

static inline void
lvcpu_share(struct ldom *d, const struct cpuset **slot, const struct cpuset *src)
{
	cpuset_pool_share(d->sets, slot, src);
}

static inline void
lvcpu_clear(struct ldom *d, const struct cpuset **slot)
{
	cpuset_pool_drop(d->sets, slot);
}
/* Forget a domain (logged: "no longer managed: why"); d is freed. */
void ldom_remove(struct live *l, struct ldom *d, const char *why);
/* d's annotation becomes a copy of a (NULL: every default); -1 out of
 * memory (the old one stays). */
int ldom_set_annot(struct ldom *d, const struct policy_annotation *a);
/* Read and parse the annotation; a transient libvirt error leaves it for
 * the next period. */
void ldom_read_annotation(struct live *l, struct ldom *d);
/* Find the vCPU threads of a domain's QEMU and open them. */
void ldom_discover(struct live *l, struct ldom *d);
/* New policy-rules: every domain's annotation (and so its rule) is read
 * again in the next period. */
void live_set_rules(struct live *l, const struct policyrule_set *rules);

/* observe.c, apply.c: the ops table's entries (live.c) */
int live_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err);
enum agent_result live_apply(void *ctx, const struct policy_action *a, struct llcd_err *err);
void live_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg);
void live_applied(void *ctx);

/* mbm.c */
/* Open resctrl monitoring at cfg.resctrl_root (said once); close it. */
void live_mbm_open(struct live *l);
void live_mbm_close(struct live *l);
/* A managed domain's achieved bandwidth this period into in (its group
 * made, and its vCPU threads written to it, on the way). */
void live_mbm_sample(struct live *l, struct ldom *d, struct policy_domain_in *in);
/* Remove the domain's group (ldom_free). */
void live_mbm_forget(struct ldom *d);
/* ext.c */
/* The vCPU whose thread the source named tid; -1 none. */
int live_ext_vcpu_of(const struct ldom *d, int tid);
/* After a discovery of ext domain d's threads (ldom_discover): found[v]
 * whether vCPU v's thread is there, named_sig the signature of the
 * threads QEMU names as vCPUs. The first discovery after the source's
 * answer records the signature; later, a thread the source named gone or
 * a changed signature marks d changed (live_ext_vcpus_changed: the
 * source asks QMP again, hot-plug). */
void live_ext_threads_seen(struct live *l, struct ldom *d, const bool *found, uint64_t named_sig);
/* Free what ext.c keeps of d (ldom_free). */
void live_ext_forget(struct ldom *d);
/* Pin the threads of an ext domain's process that are not vCPU threads
 * (sched_setaffinity each, /proc/PID/task), widening its cgroup cpuset
 * first where it restricts them. */
enum agent_result live_ext_pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus,
    struct llcd_err *err);
/* Before a sched_setaffinity of an ext domain's thread: its cgroup v2
 * cpuset must allow cpus (cgcpuset_allow). */
enum agent_result live_ext_cgroup(struct live *l, struct ldom *d, const struct cpuset *cpus,
    struct llcd_err *err);

/* bound.c */
/* Read the cgroup mounts (live_new). */
void live_bound_open(struct live *l);
void live_bound_close(struct live *l);
/* The domain's bound into obs's slot (read again when due,
 * agent_obs_bound()): 1 when it changed, 0 not, -1 with err set (out of
 * memory). */
int live_bound_sample(struct live *l, struct ldom *d, struct agent_obs *obs, int slot, struct llcd_err *err);
/* Every other domain's bound read again into obs (one changed): 0, or -1
 * with err set. */
int live_bound_resample(struct live *l, struct agent_obs *obs, struct llcd_err *err);
/* Someone else moved a thread of d: its bound (cgroup path included) is
 * read again in the next observe. */
void live_bound_soon(struct ldom *d);
/* The periodic bound read takes the cgroup path from /proc/PID/cgroup at
 * one read in this many (bound.c); the cgroup's CPU set at every read. */
#define LIVE_BOUND_PATH_REUSE 6
/* Before a pin of cpus: AGENT_OK when the bound holds them, else the
 * bound is read again and, still not holding them, AGENT_TRANSIENT with
 * err saying so (nothing pinned). */
enum agent_result live_bound_check(struct live *l, struct ldom *d, const struct cpuset *cpus,
    struct llcd_err *err);
/* The bound's facts for dominfo (group cpu_bound). */
void live_bound_describe(const struct live *l, const struct ldom *d, struct agent_facts *f);

/* numa.c */
/* The NUMA node of a managed domain's memory into in (mem_node), read
 * again LIVE_NUMA_INTERVAL_NS of loop time after a read that changed the
 * answer (or failed), twice the last interval after one that did not, up
 * to LIVE_NUMA_INTERVAL_MAX_NS. */
#define LIVE_NUMA_INTERVAL_NS (10ull * 1000000000ull)
#define LIVE_NUMA_INTERVAL_MAX_NS (80ull * 1000000000ull)
/* Pages a read asks when it can only confirm the last answer (numa.c);
 * a full read asks MEMNODE_DEFAULT_PAGES. */
#define LIVE_NUMA_CONFIRM_PAGES 32
void live_numa_sample(struct live *l, struct ldom *d, struct policy_domain_in *in, uint64_t now_ns);

/* apply.c */
/* Count a result of applying and back off after transient failures in a
 * row; a permanent one marks the domain failed. */
void live_note_result(struct live *l, struct ldom *d, enum agent_result r, const char *msg);
/* Pin the emulator threads (*called false when they already were there). */
enum agent_result live_pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus,
    bool *called, struct llcd_err *err);
/* Core-scheduling cookie for newly found vCPU threads of an isolated
 * domain (assigned once, then shared to new threads). */
void live_coresched(struct live *l, struct ldom *d, const int *newtids, int nnew);

/* state.c */
/* Read the state file (l->state_path) into l->saved, saying what it
 * holds; a bad file is ignored (logged). */
void live_state_open(struct live *l);
/* After the first listing of the domains: log those of the state file no
 * longer running. */
void live_state_listed(const struct live *l);
/* Free l->saved. */
void live_state_close(struct live *l);
/* Compare a domain's threads with what the state file says llcd left
 * (once, when all its threads are found): adopt the pins, log moves. */
void live_state_check(struct live *l, struct ldom *d);

/* qmpcheck.c */
/* QMP query-cpus-fast through libvirt: NULL when not allowed or failed
 * (why says why). Free with qmp_cpus_free(). */
const struct qmp_cpus *live_qmp_cpus(struct live *l, struct ldom *d, char *why, size_t len);
/* Check one vCPU (its tid and computed position) against the reply: why
 * gets "match" or the difference. */
void live_qmp_check(const struct qmp_cpus *qc, int vcpu, int tid, const struct guesttopo_pos *p,
    char *why, size_t len);

/* requests.c, describe.c, live.c: behind the daemon's hooks (live.c) */
int live_get_annotation(struct live *l, uint64_t key, char **xml, struct llcd_err *err);
int live_get_xml(struct live *l, uint64_t key, bool inactive, char **xml, struct llcd_err *err);
int live_define_xml(struct live *l, const char *xml, struct llcd_err *err);
bool live_is_running(const struct live *l, uint64_t key);
/* The host topology changed (CPU hotplug): t replaces cfg.topo. */
void live_set_topology(struct live *l, const struct topo *t);
/* Whether per-thread instruction counters are read (the benefit check). */
bool live_counters(const struct live *l);
/* Add the guest helper's channel (a unix socket under guest_channel_dir)
 * to the persistent definition of the running domain key, or with key 0 of
 * the defined domain name (stopped ones too, virDomainLookupByName), and to
 * the running domain when live; *path receives the socket path. Returns as
 * agent_query.add_guest_channel (query.h). */
int live_add_guest_channel(struct live *l, uint64_t key, const char *name, bool live, char *path, size_t len,
                           struct llcd_err *err);
/* Host-side facts for `llcctl topology`: libvirt URI and connection,
 * core scheduling, the kernel's cache-aware scheduling, the state file. */
int live_describe_host(struct live *l, struct agent_hostinfo *out);

#endif
