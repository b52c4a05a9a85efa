// SPDX-License-Identifier: GPL-2.0-or-later
/* live.h - llcd's live back-end (backend.h, query.h, hooks.h): libvirt for
 * domains, annotations and pinning, /proc for vCPU threads and CPU time,
 * core-scheduling cookies for isolated domains, a small state file
 * (state.h). The code is in agent/live/, one concern per file
 * (live_int.h lists them); this header is what other modules use.
 *
 * The daemon (or a test driver) owns the agent loop; this module is its
 * ctx for live_agent_ops. Everything runs on the caller's thread: libvirt
 * events arrive through a pollable fd (live_event_fd), the caller drains
 * them with live_handle_events() when the fd is readable, and observe()
 * drains them too, so a caller that only steps the loop still sees them.
 *
 * Per domain (running, with a QEMU pid) the back-end caches:
 *   key       a 64-bit key from the UUID and the QEMU pid
 *             (virt_domain_key): stable for one run of the domain, across
 *             llcd restarts; a restarted guest is a new domain to the
 *             engine, placed afresh
 *   name, vCPU count, guest topology, QEMU pid
 *   the llc-policy annotation, parsed with annot_parse_metadata(), or,
 *             without one, the first llcd.conf policy-rule that matches
 *             its name or metadata (policyrule.h, set_rules); an
 *             invalid annotation leaves the domain unmanaged (state
 *             LDOM_INVALID; the domain's life is one enum, live_int.h)
 *             and keeps the message for llcctl
 *   one procstat handle per vCPU thread ("CPU n/KVM", "CPU n/TCG"),
 *             re-discovered when the vCPU threads change
 *   each vCPU's affinity: the kernel's (sched_getaffinity) when the thread
 *             is found, then what llcd pinned, re-read every
 *             affinity_refresh periods (default 60, each domain in its own
 *             period), after a tunable event (someone else pinned) and in
 *             the period after a sample shows the thread ran last on a CPU
 *             outside it (someone else moved it)
 * and re-reads it on events: lifecycle (started, stopped, ...) refreshes
 * that domain, metadata-change re-reads the annotation (so a change takes
 * effect in the next period), RECONNECTED and OVERFLOW re-list everything.
 *
 * Applying: PIN_VCPU -> virDomainPinVcpuFlags(LIVE), PIN_EMULATOR ->
 * virDomainPinEmulator(LIVE), RELEASE -> every vCPU and the emulator to the
 * action's cpuset. Failures are classed transient / gone / permanent
 * (agent_result). After 3 periods in a row with a transient failure a
 * domain backs off: no call for 2, 4, ... up to 64 periods (the loop
 * already retries at most once per period).
 *
 * State file (state_dir/live.state, written atomically: temp + fsync +
 * rename): per domain its key, UUID, name and the pins llcd last applied.
 * At start it is read back to log what is adopted and which vCPUs someone
 * else moved while llcd was not running. docs/agent.md describes it.
 */
#ifndef LLCD_LIVE_H
#define LLCD_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coresched.h"
#include "cpuset.h"
#include "err.h"
#include "modes.h"
#include "backend.h"
#include "hooks.h"
#include "query.h"
#include "policy.h"
#include "topo.h"


#define LIVE_URI_NONE "none"            /* no libvirt: live_add_process only */
#define LIVE_DEFAULT_STATE_DIR "/var/lib/llcd"

struct live_config {
	const char *uri;                /* NULL: qemu:///system; "none": no libvirt */
	const struct topo *topo;        /* host topology (outlives the back-end) */
	struct cpuset reserved;         /* never used for vCPUs (for describe) */
	bool allow_qmp_passthrough;     /* cross-check vCPU positions with QMP
	                                 * through libvirt (taints the domain) */
	const char *state_dir;          /* NULL: /var/lib/llcd; "": no state file */
	bool dry_run;                   /* apply nothing; remember the pins as if
	                                 * applied (what-if, benchmarks) */
	int affinity_refresh;           /* periods between kernel affinity
	                                 * re-reads (a thread seen running off
	                                 * its affinity: at once) and cgroup
	                                 * bound reads; 0: 60 and 10 */
	const char *guest_channel_dir;  /* guest helper sockets; NULL or "": none */
	enum agent_counters counters;   /* instruction counters (modes.h) */
	enum agent_sampler sampler;     /* how vCPU threads are sampled (modes.h) */
	/* tests */
	const char *pid_dir;            /* NULL: libvirt's (virt.h) */
	const char *proc_root;          /* NULL: /proc */
	const char *resctrl_root;       /* NULL: /sys/fs/resctrl; "": no bandwidth
	                                 * monitoring (tests: a fixture tree, a
	                                 * fake seam; resctrl.h) */
	unsigned backoff_min_ms, backoff_max_ms;  /* libvirt reconnect; 0: virt.h */
	const struct coresched_ops *coresched_ops; /* NULL: the real prctl */
	const char *cgroup_root;        /* cgroup v2 mount; NULL: found in
	                                 * /proc/self/mountinfo (cgcpuset.h) */
	/* many libvirt daemons (a KubeVirt node: one per virt-launcher pod):
	 * every socket matching socket_glob (glob(3), through /proc/PID/root
	 * to reach a pod's mount namespace) is a connection of its own,
	 * socket_uri?socket=PATH (NULL: qemu:///system); NULL or "": none.
	 * With uri "none" these are the only ones. */
	const char *socket_glob;
	const char *socket_uri;
};

struct live;

/* *cfg zeroed, then: no libvirt (LIVE_URI_NONE), host topology t, no state
 * file, the given sampler; the caller sets anything else. For the
 * tests and benchmarks that drive the back-end on their own processes
 * (live_add_process). */
void live_config_none(struct live_config *cfg, const struct topo *t, enum agent_sampler sampler);
struct live *live_new(const struct live_config *cfg, struct llcd_err *err);
/* Saves the state file if it changed. NULL is a no-op. */
void live_free(struct live *l);
/* Whether llcd is connected to libvirt now (it retries with a backoff
 * while not, e.g. before libvirtd is up). */
bool live_connected(const struct live *l);

/* The loop's verbs, llcctl's questions and the run loop's hooks; ctx =
 * struct live * for all three. */
extern const struct agent_ops live_agent_ops;
extern const struct agent_query live_query;
extern const struct daemon_hooks live_hooks;

/* A discovery source of domains libvirt does not list (the QMP sockets of
 * QEMU run without libvirt, qmpback.h): it adds, updates and removes them
 * with live_ext_*() below, and the back-end calls it on its events and
 * periods and asks it about its domains. All entries optional. */
struct live_source {
	const char *name;               /* for messages ("qmp") */
	void *ctx;
	/* readable while it has work (-1 none) */
	int (*event_fd)(void *ctx);
	/* everything due (before each observe, and on its events); returns
	 * how many domains it added */
	int (*handle)(void *ctx, uint64_t now_ns);
	/* its facts of one of its domains (after the back-end's own) and of
	 * the host */
	void (*describe)(void *ctx, uint64_t key, struct agent_dominfo *out);
	void (*describe_host)(void *ctx, struct agent_hostinfo *out);
	/* a domain's llc-policy element as the source has it (*xml NULL:
	 * none); 0, or -1 with err */
	int (*get_annotation)(void *ctx, uint64_t key, char **xml, struct llcd_err *err);
	/* why llcctl cannot write the annotation or the guest channel of its
	 * domains, and what to do instead (NULL: "no libvirt connection") */
	const char *annotation_refused, *channel_refused;
};
/* Use src (copied; its ctx outlives the back-end) for the domains
 * libvirt does not list. One source at a time. */
int live_set_source(struct live *l, const struct live_source *src, struct llcd_err *err);

/* Readable while libvirt events are queued (-1 without libvirt). */
int live_event_fd(const struct live *l);
/* Drain queued events and keep the connection up (reconnect with backoff,
 * virt_maintain). now_ns: CLOCK_MONOTONIC. Returns 0, or -1 with err set
 * when a re-list failed (it is retried on the next call). */
int live_handle_events(struct live *l, uint64_t now_ns, struct llcd_err *err);
/* When live_handle_events() should run again at the latest (a reconnect
 * or re-list is due), monotonic ns; 0 when nothing is pending. */
uint64_t live_next_due_ns(const struct live *l);

/* The keys of the running domains the back-end knows, up to max; returns
 * how many there are (may exceed max). */
int live_domains(const struct live *l, uint64_t *keys, int max);
/* Look a running domain up by name or UUID. 0, or -1 when unknown. */
int live_find(struct live *l, const char *name_or_uuid, uint64_t *key);
/* What the back-end knows of a domain (query.h): uuid, name,
 * pid, state and reason, the annotation or its error, and per vCPU its
 * tid, affinity, last CPU and guest socket/die/cluster/core/thread
 * (computed; checked against QMP query-cpus-fast when
 * allow_qmp_passthrough). 0, or -1 when unknown; free with
 * agent_dominfo_clear(). */
int live_describe(struct live *l, uint64_t key, struct agent_dominfo *out);
/* Write (xml) or remove (xml NULL) a domain's annotation: live and/or
 * config (both false: live for a running domain, plus config when it is
 * persistent). The metadata event that follows re-reads it. */
int live_set_annotation(struct live *l, uint64_t key, const char *xml,
    bool live, bool config, struct llcd_err *err);
/* Write the state file now if anything changed since the last write
 * (observe does it once per period). */
int live_save_state(struct live *l, struct llcd_err *err);

/* Counters for tests and llcctl stats. */
struct live_stats {
	uint64_t relists, refreshes, discoveries, annot_reads;
	uint64_t pins_ok, pins_transient, pins_gone, pins_permanent;
	uint64_t backoff_skips, moved_by_others, adopted_vcpus;
	uint64_t coresched_assigned;
	uint64_t state_write_errors;    /* the state file could not be written (kept dirty, retried) */
	uint64_t pin_calls;             /* libvirt pin calls (vCPU and emulator) */
	uint64_t pins_in_place;         /* pins not made: kernel and libvirt had them already */
};
void live_stats(const struct live *l, struct live_stats *st);

/* Manage process pid as a domain that libvirt does not list (benchmarks,
 * tests; with uri "none" its vCPU threads are pinned with
 * sched_setaffinity). a NULL: unannotated. Its vCPU threads are found by
 * name. */
int live_add_process(struct live *l, const char *name, int pid, int nvcpus,
    const struct policy_annotation *a, struct llcd_err *err);

/* Domains another source finds (the QMP back-end, agent/qmpback/; with
 * uri "none"). Such a domain is a QEMU process whose vCPU threads the
 * source names (QMP thread-id by cpu-index), not found by thread name;
 * its annotation is the text the source gives (a policy file), parsed by
 * the same parser with the same messages, prefixed by its source; it is
 * pinned with sched_setaffinity: vCPUs their thread, the emulator every
 * other thread of the process, and the process's cgroup v2 cpuset is
 * widened first where it would not allow a pin (cgcpuset.h). Everything
 * else (sampling, the state file and adoption, back-off, describe) is the
 * libvirt domains' code. */
struct live_ext_domain {
	const char *name;
	const char *uuid;               /* a UUID; keys are made from it and pid */
	int pid;
	int nvcpus;                     /* online vCPUs */
	int maxvcpus;                   /* >= nvcpus */
	const int *tids;                /* maxvcpus: vCPU i's thread, 0 none */
	struct policy_guest_topo guest;
	const char *channel;            /* the guest helper's socket; NULL none */
};
/* Add a running domain; *key receives its key. */
int live_ext_add(struct live *l, const struct live_ext_domain *x, uint64_t *key, struct llcd_err *err);
/* The source read the domain again (vCPU hot-plug): its vCPU count,
 * threads and guest topology replaced; the same pid. The threads are
 * found again in the next period; a changed count re-places the domain
 * (the engine's rule for a libvirt domain's setvcpus). */
int live_ext_update(struct live *l, uint64_t key, const struct live_ext_domain *x, struct llcd_err *err);
/* Whether the threads QEMU names as vCPUs ("CPU n/KVM", "CPU n/TCG",
 * -name ...,debug-threads=on) differ from those of the source's last
 * answer, or one it named is gone, as seen at the last discovery (the
 * thread-count hint of sampling: at most every 10 periods): the source
 * should ask again. Cleared by live_ext_update. */
bool live_ext_vcpus_changed(const struct live *l, uint64_t key);
/* Bumped whenever a domain becomes changed in that sense: the source
 * needs to look (a lookup per domain) only when it moved. */
uint64_t live_ext_change_gen(const struct live *l);
/* The domain stopped (its process or socket vanished): forget it. */
void live_ext_remove(struct live *l, uint64_t key, const char *why);
/* Its annotation: xml (len bytes; NULL: none) from source (a path, for
 * messages); read and parsed now. */
void live_ext_annotation(struct live *l, uint64_t key, const char *xml, size_t len, const char *source);
/* The domains' source (libvirt's list, or an external back-end) has looked
 * at everything once: domains of the state file that were not found are
 * dropped from it. Only the first call does anything. */
void live_ext_listed(struct live *l);

#endif
