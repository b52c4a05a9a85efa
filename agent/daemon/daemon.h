// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon.h - llcd's core: the agent loop on a back-end, the control socket
 * and the answers to llcctl's requests. The back-end (the live host, or the
 * simulated host of llcsim) is three narrow interfaces: the loop's verbs
 * (backend.h), llcctl's questions (query.h) and what the daemon's run loop
 * tells it (struct daemon_hooks); everything here runs the same on both,
 * so every llcctl command is tested on the simulated back-end. */
#ifndef LLCD_DAEMON_H
#define LLCD_DAEMON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "loop.h"
#include "backend.h"
#include "hooks.h"
#include "query.h"
#include "topo.h"

/* How a VM's own configuration is written, for the answers that show or
 * change it (llcctl topology DOMAIN, --apply, policy). */
enum daemon_vm_config {
	DAEMON_VM_DOMAIN_XML = 0,       /* a domain XML: shown as XML, rewritten by
	                                 * --apply, the annotation in its metadata */
	DAEMON_VM_CONFIG_LINES,         /* a config of lines llcd does not edit
	                                 * (Proxmox VE's VMID.conf): shown as lines */
};

/* The back-end the daemon runs on. */
struct daemon_backend {
	const char *name;               /* shown (version, stats, llcd_info) */
	enum daemon_vm_config vm_config;
	const struct agent_ops *ops;    /* the loop's verbs (backend.h) ... */
	void *ops_ctx;                  /* ... and their ctx */
	const struct agent_query *query;        /* llcctl's (query.h); NULL none */
	const struct daemon_hooks *hooks;       /* the run loop's; NULL none */
	void *ctx;                      /* of query and hooks */
};

struct daemon;

#define DAEMON_MAX_TUNES 32     /* runtime tunes kept (one per knob) */

/* Keep runtime tunes (llcctl tune) in path across restarts (llcd: the
 * state directory's `tunes`): the ones found there are applied now (a
 * restart after a tune neither moves a pinned vCPU nor refuses a domain it
 * had placed); later tunes are written there, and a reload or `llcctl tune
 * --reset` drops them. Returns how many were applied, -1 on a file that
 * cannot be read (err; nothing applied). */
int daemon_set_tunes_file(struct daemon *d, const char *path, struct llcd_err *err);
/* Read the tunes kept in path into kv (up to max pairs) for `llcd -nv`;
 * returns the number of pairs (0 when there is no file). */
int daemon_read_tunes(const char *path, char kv[][2][CONFIG_PATH_MAX], int max);

/* topo is borrowed and must outlive the daemon; config_path is re-read by
 * reload (NULL: reload keeps the configuration). */
struct daemon *daemon_new(const struct config *cfg, const char *config_path, const struct topo *topo,
                          const struct daemon_backend *be, struct llcd_err *err);
void daemon_free(struct daemon *d);

/* Command-line settings that override the file, kept across reloads
 * (pairs of config keywords and values; copied). */
int daemon_set_overrides(struct daemon *d, const char *const *kv, int npairs, struct llcd_err *err);

/* Replace the host topology (CPU hotplug): the engine places every domain
 * again, keeping the pins that are still valid. t is borrowed and must
 * outlive the daemon; returns -1 (topology kept) when the configuration
 * does not fit it (e.g. reserved CPUs that went offline). */
int daemon_set_topology(struct daemon *d, const struct topo *t, struct llcd_err *err);
/* The same for a topology the daemon re-read itself (CPU hotplug): the
 * daemon owns t from now on (also on -1, when it frees it). The topology
 * it replaces is freed only once the engine no longer refers to it (a
 * period that failed before the engine ran keeps it: daemon_step frees it
 * after the first period the engine rebinds in). */
int daemon_hotplug(struct daemon *d, struct topo *t, struct llcd_err *err);
/* Re-read the live host's topology when the set of online CPUs changes
 * (called by daemon_run every period when the topology is the live host's). */
void daemon_watch_cpus(struct daemon *d, bool on);

/* Create the control socket (cfg->socket, group cfg->socket_group). */
int daemon_listen(struct daemon *d, struct llcd_err *err);
/* One period at now_ns: back-end tick, observe, decide, act. */
int daemon_step(struct daemon *d, uint64_t now_ns, struct llcd_err *err);
/* Serve until daemon_stop(): periods on a monotonic timer, control
 * requests and back-end events in between. Returns 0 on a clean stop. */
int daemon_run(struct daemon *d);
/* fn(arg) after every period daemon_run() runs, failed or not (llcd: the
 * service manager's READY=1 and STATUS=). */
void daemon_set_period_hook(struct daemon *d, void (*fn)(void *arg), void *arg);
/* Async-signal-safe requests for daemon_run(). */
void daemon_stop(struct daemon *d);
void daemon_request_reload(struct daemon *d);

/* Answer one control request (exposed for tests; daemon_listen wires it). */
struct control_request;
int daemon_handle(void *ctx, struct control_request *req);

/* The JSON of a back-end's facts about a domain (llcctl dominfo): the keys
 * the daemon's own summary does not have (uuid, pid, annotation,
 * vcpu_threads, ...). The one place they become JSON; the live test driver
 * uses it too. */
void daemon_dominfo_json(const struct agent_dominfo *di, json_object *o);

/* The plan of the last step as JSON lines on f (llcd --oneshot). */
void daemon_print_plan(const struct daemon *d, FILE *f);

#endif
