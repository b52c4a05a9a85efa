/* daemon.h - llcd's core: the agent loop on a back-end, the control socket
 * and the answers to llcctl's requests. The back-end (live libvirt, or the
 * simulated host of llcsim) is a struct daemon_backend; everything here
 * runs the same on both, so every llcctl command is tested on the
 * simulated back-end. */
#ifndef LLCD_DAEMON_H
#define LLCD_DAEMON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "loop.h"
#include "ops.h"
#include "topo.h"

struct daemon_backend {
	const char *name;                       /* "libvirt", "llcsim" */
	const struct agent_ops *ops;
	void *ctx;                              /* for ops */
	void *hook_ctx;                         /* for the hooks below (NULL: ctx) */
	bool counters;                          /* per-thread instruction counts exist */
	/* optional hooks (NULL: not available) */
	int (*event_fd)(void *ctx);             /* pollable, -1 none */
	int (*handle_events)(void *ctx, uint64_t now_ns, struct llcd_err *err);
	void (*tick)(void *ctx, uint64_t now_ns);       /* before each observe */
	/* typed facts (ops.h); the daemon makes the JSON */
	int (*describe)(void *ctx, uint64_t key, struct agent_dominfo *out);
	int (*describe_host)(void *ctx, struct json_object *out);
	int (*get_annotation)(void *ctx, uint64_t key, char **xml, struct llcd_err *err);
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
	/* add the guest helper's channel to the domain (llcctl guest-channel) */
	int (*add_guest_channel)(void *ctx, uint64_t key, bool live, char *path, size_t len,
	                         struct llcd_err *err);
};

struct daemon;

/* topo is borrowed and must outlive the daemon; config_path is re-read by
 * reload (NULL: reload keeps the configuration). */
struct daemon *daemon_new(const struct config *cfg, const char *config_path, const struct topo *topo,
                          const struct daemon_backend *be, struct llcd_err *err);
void daemon_free(struct daemon *d);

/* Command-line settings that override the file, kept across reloads
 * (pairs of config keywords and values; copied). */
int daemon_set_overrides(struct daemon *d, const char *const *kv, int npairs, struct llcd_err *err);

/* Replace the host topology (CPU hotplug): the engine places every domain
 * again, keeping the pins that are still valid. t must outlive the daemon
 * or the next call; returns -1 (topology kept) when the configuration does
 * not fit it (e.g. reserved CPUs that went offline). */
int daemon_set_topology(struct daemon *d, const struct topo *t, struct llcd_err *err);
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
