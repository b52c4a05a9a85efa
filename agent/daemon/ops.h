// SPDX-License-Identifier: GPL-2.0-or-later
/* ops.h - the I/O boundary of the agent loop and of llcd: one back-end
 * interface, an ops table with a live back-end (libvirt, /proc, the guest
 * channel; agent/live/) and a simulated one (llcsim, llcd-sim).
 *
 * The loop (loop.h) calls observe() once per period with the time it read,
 * hands the observation to the policy, and calls apply() once per action of
 * the plan. A back-end never decides anything; the policy never does I/O
 * (chrony's sys_linux.c / sys_null.c split).
 */
#ifndef LLCD_AGENT_OPS_H
#define LLCD_AGENT_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"
#include "policy.h"
#include "policyrule.h"

struct json_object;
struct topo;

/* How applying one action went. Errors are sorted the way the daemon
 * reacts to them: retry, forget, or stop managing the domain and say why
 * (docs/agent.md, "Pinning and the error classes", lists which libvirt
 * errors fall in each class). */
enum agent_result {
	AGENT_OK = 0,
	AGENT_TRANSIENT,        /* try again later (busy, EAGAIN, timeout) */
	AGENT_GONE,             /* the domain or thread vanished: drop it */
	AGENT_PERMANENT,        /* cannot ever work: stop managing the domain */
};
/* The number of results, for arrays indexed by them: keep it the last
 * value + 1 (a macro, not a member, so that switches stay exhaustive). */
#define AGENT_RESULT_COUNT (AGENT_PERMANENT + 1)

/* One observation: what the policy may know about the host this period.
 * Storage is owned by the observation and reused from period to period:
 * agent_obs_begin() empties the list but keeps every slot's contents, so a
 * back-end that finds a slot already holding the same domain key may skip
 * re-filling fields that did not change (annotation, guest topology). */
struct agent_obs {
	int ndomains;
	struct policy_domain_in *domains;       /* ndomains, policy view */
	struct policy_vcpu_sample **vcpus;      /* per slot, nvcpus (writable) */
	struct policy_hot_report **reports;     /* per slot, nreports (writable) */
	struct policy_wakeups *wakeups;         /* per slot (writable), see
	                                         * agent_obs_wakeups() */
	struct policy_wakeup_edge **edges;      /* per slot, POLICY_WAKEUP_EDGES
	                                         * once allocated (writable) */
	int ncpus;                              /* entries in cpu_busy_ns */
	uint64_t *cpu_busy_ns;                  /* per PU OS index */
	/* private: capacities */
	int cap, *vcap, *rcap;
};

struct agent_obs *agent_obs_new(void);
void agent_obs_free(struct agent_obs *o);
/* Start a new observation: no domains, cpu_busy_ns sized for ncpus and
 * zeroed. */
int agent_obs_begin(struct agent_obs *o, int ncpus, struct llcd_err *err);
/* Append a domain slot with room for nvcpus samples and nreports reports.
 * Returns the slot index, or -1 with err set. The slot's previous contents
 * (from an earlier observation) are kept; check domains[i].key. */
int agent_obs_add(struct agent_obs *o, int nvcpus, int nreports, struct llcd_err *err);
/* A back-end that sees wakeups between a domain's vCPU threads (the
 * in-kernel tracer, llcsim) calls this for slot i after agent_obs_add():
 * domains[i].wakeups then points at wakeups[i], emptied (no edges, nothing
 * dropped) for a period of period_ns, whose edge list is edges[i] with room
 * for POLICY_WAKEUP_EDGES edges; the back-end fills edges[i][0..] and sets
 * wakeups[i].nedges and .dropped (policy/wakeups.h). A slot for which it is
 * not called has domains[i].wakeups == NULL: nothing is inferred. */
int agent_obs_wakeups(struct agent_obs *o, int i, uint64_t period_ns, struct llcd_err *err);

/* A domain's state as llcctl shows it, one vocabulary for every back-end
 * and the daemon (docs/llcctl.md):
 *   managed    llcd places and pins it
 *   unmanaged  llcd leaves it to the default scheduler on purpose: no
 *              llc-policy annotation, mode none, released by llcctl
 *   error      llcd should manage it and cannot: an invalid annotation, a
 *              placement the engine refused, a pin that failed permanently
 */
enum agent_dom_state {
	AGENT_DOM_MANAGED = 0,
	AGENT_DOM_UNMANAGED,
	AGENT_DOM_ERROR,
	AGENT_DOM_STATE_COUNT,
};
const char *agent_dom_state_name(enum agent_dom_state s);

/* One vCPU as a back-end sees it (agent_dominfo). */
struct agent_vcpu_info {
	int tid;                        /* 0: thread not found */
	int last_cpu;
	struct cpuset affinity;         /* the kernel's, as last read */
	struct cpuset pinned_by_llcd;   /* empty: llcd holds no pin */
	int socket, die, cluster, core, thread;    /* guest position */
	char qmp[128];                  /* the QMP cross-check; "": not made */
};

/* What a back-end knows of one domain beyond the engine's view: typed
 * facts for llcctl dominfo; the control handlers make the JSON. Fields a
 * back-end does not know stay as agent_dominfo_init() left them (empty
 * strings, -1, false) and are not shown. */
struct agent_dominfo {
	enum agent_dom_state state;     /* the back-end's own view ... */
	char reason[LLCD_ERR_MSG];
	bool backend_error;             /* ... which wins over the engine's when
	                                 * the error is the back-end's own (a pin
	                                 * failed permanently, the annotation is
	                                 * invalid) */
	char name[POLICY_NAME];
	char key[17];                   /* the back-end's key, hex; "" none */
	char uuid[40];
	int pid;                        /* -1 unknown */
	int nvcpus, maxvcpus;           /* -1 unknown */
	char annotation_error[LLCD_ERR_MSG];
	bool annotated;
	struct policy_annotation annot; /* when annotated */
	int rule;                       /* the policy-rule that gave annot: its
	                                 * number from 1 in file order; 0: none
	                                 * (an annotation, or nothing) */
	char rule_where[POLICYRULE_WHERE];      /* its file:line */
	char rule_match[POLICYRULE_TEXT];       /* its MATCHes */
	bool have_guest_topo;
	struct policy_guest_topo guest;
	char core_scheduling[LLCD_ERR_MSG];  /* isolated domains; "" not shown */
	struct cpuset emulator_pin;     /* empty: not pinned by llcd */
	bool have_guest_channel;
	struct {
		const char *state;      /* guestchan_state_name() */
		uint64_t reports, bad_lines, throttles, backoffs, guest_dropped;
		char last_error[256];
	} guest_channel;
	bool have_qmp;                  /* the vCPUs' qmp fields are filled */
	char qmp[LLCD_ERR_MSG];         /* why there is no QMP cross-check; "" */
	uint64_t qmp_queries;           /* query-cpus-fast asked so far (once per vCPU set) */
	int nvcpu_info;                 /* entries in vcpus (malloc'd); -1: the
	                                 * back-end does not list vCPU threads */
	struct agent_vcpu_info *vcpus;
	const char *backend;            /* a simulated back-end's name; NULL */
	int guest_helper;               /* -1 unknown, else 0 / 1 */
	/* where its memory lives (the live back-end's sampled guest RAM) */
	bool have_memory;               /* read at least once (or failed) */
	int mem_node;                   /* OS node; -1 none holds the majority */
	int mem_resident, mem_sampled;  /* pages of the last read */
	char mem_error[LLCD_ERR_MSG];   /* the last read failed: why; "" */
	/* the CPUs the domain may use and which set bounded them: "host",
	 * "config" (reserved CPUs) or "cgroup" (the cgroup cpuset enclosing
	 * its QEMU, someone else's: cpu_bound_cgroup says which); "" unknown */
	char cpu_bound[256];
	char cpu_bound_by[16];
	char cpu_bound_cgroup[512];
	char cpu_bound_error[LLCD_ERR_MSG];     /* the last read failed: why */
	/* the libvirt connection the domain came from (several daemons:
	 * libvirt-socket-glob); "" the back-end's only one */
	char connection[512];
};
void agent_dominfo_init(struct agent_dominfo *di);
/* Free what the back-end allocated (vcpus) and init again. */
void agent_dominfo_clear(struct agent_dominfo *di);

/* What a back-end knows of the host beyond its topology, for llcctl
 * topology: typed facts, the control handlers make the JSON. Blocks a
 * back-end does not fill (have_* false, "" strings) are not shown. */
struct agent_hostinfo {
	bool have_libvirt;              /* the live back-end's connection */
	struct {
		char uri[256];
		bool connected;
		unsigned reconnects;
		int domains;
		char state_file[4096];  /* "" none */
		bool dry_run;
		/* libvirt-socket-glob: the glob ("" none), the daemons found
		 * and how many are connected now */
		char socket_glob[4096];
		int daemons, daemons_up;
	} libvirt;
	bool core_scheduling;           /* available */
	char core_scheduling_reason[LLCD_ERR_MSG];      /* the probe's words; "": the
	                                                 * back-end says nothing */
	char kernel_cas[16];            /* the kernel's cache-aware scheduling:
	                                 * absent / disabled / enabled; "" not probed */
	char kernel_cas_detail[256];
	char sampler[8];                /* "bpf" or "proc"; "" not said */
	char sampler_reason[LLCD_ERR_MSG];      /* why not bpf */
	bool have_tracer;               /* the in-kernel tracer's counters */
	struct {
		int threads, domains;
		uint64_t threads_refused, domains_refused, edges_dropped;
		bool irq_check;
	} tracer;
	/* What can judge llcd's adaptive changes on this host (llcctl
	 * topology "judges"; docs/design.md, "No judge, no harm"): the
	 * back-end's facts; the daemon adds whether counters are used and
	 * the unjudged-groups setting. */
	bool have_judges;
	struct {
		char counters_reason[256];      /* what the counter probe found */
		bool mbm;                       /* memory bandwidth monitoring */
		char mbm_reason[LLCD_ERR_MSG + 128];
		char run_delay[128];            /* where run delay comes from */
	} judges;
	char scenario[256];             /* a simulated host's scenario; "" */
	bool have_qmpback;              /* the QMP back-end's discovery */
	struct {
		char glob[4096];
		char policy_dir[4096];
		int sockets, vms;
		uint64_t refusals;
		uint64_t rereads;       /* vCPU hot-plug: VMs read again */
		bool hold;
	} qmpback;
};

struct agent_ops {
	const char *name;                       /* "libvirt", "llcsim" */
	/* Fill obs (after agent_obs_begin) for the period ending at now_ns. */
	int (*observe)(void *ctx, uint64_t now_ns, struct agent_obs *obs,
	               struct llcd_err *err);
	/* Carry out one action of the plan; informational actions (PREFER,
	 * BACKOFF, REFUSE) are passed too so back-ends can log or count them. */
	enum agent_result (*apply)(void *ctx, const struct policy_action *act,
	                           struct llcd_err *err);
	/* Optional: told about every action the loop did not apply or that
	 * failed (result != AGENT_OK), with the back-end's message. */
	void (*report)(void *ctx, const struct policy_action *act,
	               enum agent_result r, const char *msg);

	/* The rest is for llcd's daemon core (daemon.h): its run loop and
	 * llcctl's requests. All optional (NULL: the back-end cannot), all
	 * with the same ctx. The agent loop itself uses none of them. */
	/* per-thread instruction counts exist (the benefit check) */
	bool (*counters)(void *ctx);
	/* a pollable fd while events are queued, -1 none */
	int (*event_fd)(void *ctx);
	/* drain events, keep connections up; now_ns monotonic */
	/* >0: that many domains appeared (the daemon runs a period at once) */
	int (*handle_events)(void *ctx, uint64_t now_ns, struct llcd_err *err);
	/* before each observe (a simulated host advances its time) */
	void (*tick)(void *ctx, uint64_t now_ns);
	/* typed facts about a domain (agent_dominfo_init()ed by the caller) */
	int (*describe)(void *ctx, uint64_t key, struct agent_dominfo *out);
	/* typed host facts for llcctl topology (zeroed by the caller) */
	int (*describe_host)(void *ctx, struct agent_hostinfo *out);
	/* the raw llc-policy element (NULL: none), malloc'd */
	int (*get_annotation)(void *ctx, uint64_t key, char **xml, struct llcd_err *err);
	/* write (xml) or remove (NULL) the annotation: live and/or config */
	int (*set_annotation)(void *ctx, uint64_t key, const char *xml, bool live, bool config,
	                      struct llcd_err *err);
	/* the domain XML (inactive: the persistent definition), malloc'd */
	int (*get_xml)(void *ctx, uint64_t key, bool inactive, char **xml, struct llcd_err *err);
	/* redefine the persistent definition (virDomainDefineXML) */
	int (*define_xml)(void *ctx, const char *xml, struct llcd_err *err);
	/* whether the domain runs now */
	bool (*is_running)(void *ctx, uint64_t key);
	/* the host topology was re-read (CPU hotplug) */
	void (*set_topology)(void *ctx, const struct topo *t);
	/* add the guest helper's channel to the domain's persistent definition
	 * (llcctl guest-channel): the running domain of key, or with key 0 the
	 * defined domain called name (running or not); 0 added, 1 it has the
	 * channel already (path filled, nothing changed), -1 err, -2 no such
	 * domain (err says so) */
	int (*add_guest_channel)(void *ctx, uint64_t key, const char *name, bool live, char *path, size_t len,
	                         struct llcd_err *err);
	/* pin calls the back-end made (vCPU and emulator), and pins it did not
	 * make because the thread was already there (llcctl stats) */
	void (*pin_counts)(void *ctx, uint64_t *calls, uint64_t *in_place);
	/* state file writes that failed (each retried; llcctl stats) */
	uint64_t (*state_write_errors)(void *ctx);
	/* llcd.conf's policy-rule set (policyrule.h; the daemon owns it, valid
	 * until the next call): a domain without an llc-policy annotation gets
	 * the policy of the first rule that matches it. Called once before the
	 * first period and again when a reload changes the rules; the back-end
	 * matches every domain again. */
	void (*set_rules)(void *ctx, const struct policyrule_set *rules);
	/* the VMs are QEMU run without libvirt (the QMP back-end): llcctl
	 * topology speaks Proxmox VE's config lines, and llcd edits no
	 * VM configuration */
	bool proxmox;
};

const char *agent_result_name(enum agent_result r);

#endif
