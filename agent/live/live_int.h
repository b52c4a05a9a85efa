// SPDX-License-Identifier: GPL-2.0-or-later
/* live_int.h - what the files of the live back-end (agent/live/) share; not
 * for other modules, which use live.h.
 *
 *   live.c      life cycle: live_new/live_free, probes, the ops table
 *   domains.c   domains from libvirt and its events; annotation; vCPU
 *               thread discovery
 *   observe.c   observe(): /proc samples, counters, the guest channel
 *   apply.c     apply(): pins, failure classes and back-off, core
 *               scheduling cookies
 *   state.c     the state file (state.h)
 *   kcas.c      the kernel cache-aware-scheduling probe (kcas.h)
 *   describe.c  dominfo and topology facts for llcctl
 *   qmpcheck.c  the QMP cross-check of vCPU positions
 *   requests.c  llcctl's requests passed to libvirt (annotation, XML,
 *               guest channel)
 *   backend.c   the daemon's back-end hooks (live_backend.h)
 *
 * Everything runs on the caller's thread; no locks.
 */
#ifndef LLCD_LIVE_INT_H
#define LLCD_LIVE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "coresched.h"
#include "cpuset.h"
#include "err.h"
#include "kcas.h"
#include "live.h"
#include "ops.h"
#include "policy.h"
#include "procstat.h"
#include "state.h"
#include "virt.h"

struct json_object;
struct qmp_cpus;
struct guesttopo_pos;

struct lvcpu {
	int tid;                        /* 0: thread not found */
	struct procstat_thread *th;
	uint64_t prev_runtime;
	bool have_prev;
	int last_cpu;
	struct cpuset affinity;         /* cached kernel affinity; empty unknown */
	struct cpuset applied;          /* what llcd last pinned; empty: nothing */
	int perf_fd;                    /* instruction counter; -1 none, -2 failed */
	uint64_t prev_instr;
	bool have_instr;
};

struct ldom {
	uint64_t key;
	char uuid[VIRT_UUID_LEN];
	char name[VIRT_NAME_MAX];
	int pid;
	int nvcpus, maxvcpus;
	bool persistent;
	bool fake;                      /* live_add_process */
	struct policy_guest_topo guest;
	bool annotated;
	struct policy_annotation annot;
	char annot_err[LLCD_ERR_MSG];
	bool annot_read;                /* read at least once */
	bool error;                     /* permanent failure */
	char error_msg[LLCD_ERR_MSG];
	bool refused;
	char refuse_msg[POLICY_REASON];
	struct lvcpu *v;                /* maxvcpus */
	int nthreads_seen;
	uint64_t discovered_period;
	bool need_discover, need_annot, need_affinity, obs_dirty;
	bool threads_missing;
	struct cpuset emu_applied;
	struct cpuset emu_pending;      /* an emulator pin that failed transiently */
	int transient_streak;
	uint64_t last_transient_period;
	uint64_t backoff_until;         /* period number */
	bool cs_done;
	int cs_tid;
	bool state_checked;
	bool touched;                   /* llcd tried to pin it (or the state file says so) */
	bool seen;
	struct guestchan *gc;           /* the guest helper's channel, or NULL */
	bool gc_looked;                 /* domain XML searched for the channel */
};

struct live {
	struct live_config cfg;
	char state_path[PATH_MAX];
	bool state_enabled;
	struct virt *virt;
	struct procstat *ps;
	struct coresched *cs;
	struct ldom **doms;
	int ndoms, cap;
	bool need_relist;
	bool listed_once;
	uint64_t relist_due_ns;
	uint64_t now_ns;
	uint64_t period;
	struct live_state saved;        /* state file read at start */
	bool state_dirty;
	int ncpus;
	uint64_t *cpu_prev, *cpu_cur;
	bool have_cpu_prev;
	struct live_stats st;
	enum live_kcas kcas;
	char kcas_detail[256];
	struct cpuset everywhere;       /* topology CPUs this host has online */
	bool counters;                  /* instruction counters are read */
	char counters_reason[256];
};

/* domains.c */
struct ldom *ldom_by_key(const struct live *l, uint64_t key);
void ldom_free(struct ldom *d);
/* Read and parse the annotation; a transient libvirt error leaves it for
 * the next period. */
void ldom_read_annotation(struct live *l, struct ldom *d);
/* Find the vCPU threads of a domain's QEMU and open them. */
void ldom_discover(struct live *l, struct ldom *d);

/* observe.c, apply.c: the ops table's entries (live.c) */
int live_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err);
enum agent_result live_apply(void *ctx, const struct policy_action *a, struct llcd_err *err);
void live_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg);

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
/* Compare a domain's threads with what the state file says llcd left
 * (once, when all its threads are found): adopt the pins, log moves. */
void live_state_check(struct live *l, struct ldom *d);

/* qmpcheck.c */
/* QMP query-cpus-fast through libvirt: NULL when not allowed or failed
 * (why says why). Free with qmp_cpus_free(). */
struct qmp_cpus *live_qmp_cpus(struct live *l, struct ldom *d, char *why, size_t len);
/* Check one vCPU (its tid and computed position) against the reply: why
 * gets "match" or the difference. */
void live_qmp_check(const struct qmp_cpus *qc, int vcpu, int tid, const struct guesttopo_pos *p,
    char *why, size_t len);

/* requests.c, describe.c, live.c: for the daemon's hooks (backend.c) */
int live_get_annotation(struct live *l, uint64_t key, char **xml, struct llcd_err *err);
int live_get_xml(struct live *l, uint64_t key, bool inactive, char **xml, struct llcd_err *err);
int live_define_xml(struct live *l, const char *xml, struct llcd_err *err);
bool live_is_running(const struct live *l, uint64_t key);
/* The host topology changed (CPU hotplug): t replaces cfg.topo. */
void live_set_topology(struct live *l, const struct topo *t);
/* Whether per-thread instruction counters are read (the benefit check). */
bool live_counters(const struct live *l);
/* Add the guest helper's channel (a unix socket under guest_channel_dir)
 * to the domain's persistent definition, and to the running domain when
 * live; *path receives the socket path. */
int live_add_guest_channel(struct live *l, uint64_t key, bool live, char *path, size_t len,
                           struct llcd_err *err);
/* Host-side facts for `llcctl topology`: libvirt URI and connection,
 * core scheduling, the kernel's cache-aware scheduling, the state file. */
int live_describe_host(struct live *l, struct json_object *out);

#endif
