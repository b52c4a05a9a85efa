// SPDX-License-Identifier: GPL-2.0-or-later
/* virt.h - llcd's libvirt side: domains, events, annotations, pinning.
 *
 * Threads. libvirt delivers events only while an event loop runs. This
 * module registers libvirt's default event loop implementation
 * (virEventRegisterDefaultImpl, once per process) and runs it in one
 * dedicated thread. The callbacks running there do nothing but append a
 * struct virt_event to a bounded queue and signal an eventfd; the agent
 * loop polls virt_event_fd() next to its own timer and takes the events
 * with virt_next_event() in its own thread. So all domain state, every
 * libvirt call that the daemon makes (list, pin, metadata) and every
 * decision stay in the agent thread; the event thread never touches them.
 * When the queue overflows (4096 events) the oldest are kept and one
 * VIRT_EV_OVERFLOW tells the loop to re-list everything.
 *
 * Connection loss. virConnectRegisterCloseCallback tells us (in the event
 * thread) that the connection closed: libvirtd restarted, crashed, or
 * stopped answering keepalives (5 s x 3 by default). The event thread
 * queues VIRT_EV_DISCONNECTED; the agent thread, in virt_maintain(),
 * drops the dead connection and reconnects with exponential backoff
 * (0.5 s doubling to a 30 s cap, reset after a successful connect), then
 * re-registers every event callback and queues VIRT_EV_RECONNECTED. Events
 * that happened while disconnected are lost, so the loop re-lists the
 * domains on VIRT_EV_RECONNECTED. Nothing else is lost: pins live in the
 * kernel and in libvirt, and the daemon's placement state is not kept
 * here. A failing first connect is retried the same way.
 *
 * QEMU pid. libvirt has no public API for a domain's QEMU pid. It is read
 * from the pid file libvirtd writes for every running domain
 * (/run/libvirt/qemu/<name>.pid for qemu:///system) and cross-checked
 * against /proc/<pid>/cmdline, which must hold "-uuid <the domain's
 * UUID>", so that a stale pid file whose pid was reused is never believed.
 * The alternative, QMP query-cpus-fast through virDomainQemuMonitorCommand,
 * marks the domain "tainted: custom-monitor", and the vCPU thread IDs come
 * from /proc anyway (procstat.h).
 *
 * Errors of pin and metadata calls are sorted into transient / gone /
 * permanent (virt_classify) and logged with domain, vCPU and TID.
 */
#ifndef LLCD_VIRT_H
#define LLCD_VIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "err.h"

#define VIRT_UUID_LEN 37                /* VIR_UUID_STRING_BUFLEN */
#define VIRT_NAME_MAX 256
#define VIRT_POLICY_NS "urn:llcd:llc-policy:1"
#define VIRT_POLICY_PREFIX "llc"
#define VIRT_DEFAULT_URI "qemu:///system"
#define VIRT_DEFAULT_PID_DIR "/run/libvirt/qemu"

/* Same order and meaning as the agent's result classes (backend.h). */
enum virt_result {
	VIRT_OK = 0,
	VIRT_TRANSIENT,         /* connection down, timeout, busy: try later */
	VIRT_GONE,              /* domain undefined or not running (any more) */
	VIRT_PERMANENT,         /* will not work: bad vCPU, bad CPU, denied, ... */
};

struct virt_topology {          /* <cpu><topology>; 0 = attribute absent */
	int sockets, dies, clusters, cores, threads;
};

struct virt_domain {
	char uuid[VIRT_UUID_LEN];
	char name[VIRT_NAME_MAX];
	int id;                 /* libvirt id, -1 when not running */
	int state, reason;      /* virDomainGetState */
	bool active, persistent;
	int nvcpus;             /* current (online) vCPUs: <vcpu current=> */
	int maxvcpus;           /* <vcpu> */
	struct virt_topology topo;
	int pid;                /* QEMU pid; 0 when not running or not known */
};

enum virt_event_type {
	VIRT_EV_LIFECYCLE,      /* event/detail: VIR_DOMAIN_EVENT_* */
	VIRT_EV_METADATA,       /* event: VIR_DOMAIN_METADATA_*; text: namespace URI */
	VIRT_EV_TUNABLE,        /* text: the changed keys, e.g. "cputune.vcpupin1=1" */
	VIRT_EV_DISCONNECTED,   /* event: virConnectCloseReason */
	VIRT_EV_RECONNECTED,
	VIRT_EV_OVERFLOW,       /* events were dropped: re-list everything */
};

/* VIR_DOMAIN_EVENT_STARTED (virt.c checks the value) */
#define VIRT_LIFECYCLE_STARTED 2

struct virt_event {
	enum virt_event_type type;
	uint64_t mono_ns;               /* CLOCK_MONOTONIC when the event thread got it */
	char uuid[VIRT_UUID_LEN];       /* "" for connection events */
	char name[VIRT_NAME_MAX];
	int event, detail;
	char text[256];
};

/* libvirt's names for a lifecycle event (virDomainEventType: "started",
 * "stopped", ...) and for why a connection closed (virConnectCloseReason:
 * "error", "eof", "keepalive", "client"); "event N" / "reason N" for codes
 * this libvirt does not know. buf holds the fallback. */
const char *virt_lifecycle_name(int event, char *buf, size_t len);
const char *virt_close_reason_name(int reason, char *buf, size_t len);

struct virt_config {
	const char *uri;                /* NULL: qemu:///system */
	const char *pid_dir;            /* NULL: /run/libvirt/qemu */
	const char *proc_root;          /* NULL: /proc */
	const char *pid_root;           /* a daemon in a mount (and PID)
	                                 * namespace of its own, reached through
	                                 * this root (/proc/PID/root): when its pid
	                                 * file does not name the QEMU (another PID
	                                 * namespace), the QEMU is found by
	                                 * virt_qemu_pid_scan(); NULL: never */
	unsigned backoff_min_ms;        /* 0: 500 */
	unsigned backoff_max_ms;        /* 0: 30000 */
	int keepalive_interval;         /* s; 0: 5; -1: no keepalive */
	unsigned keepalive_count;       /* 0: 3 */
};

struct virt;

/* Start the event thread (shared by all struct virt in the process). Does
 * not connect. */
struct virt *virt_new(const struct virt_config *cfg, struct llcd_err *err);
void virt_free(struct virt *v);

/* One connection attempt now; on failure the next one is due at
 * now_ms + backoff (virt_maintain makes it). */
int virt_connect(struct virt *v, uint64_t now_ms, struct llcd_err *err);
bool virt_connected(const struct virt *v);
/* Call once per loop iteration (time read once by the caller, monotonic
 * ms): notices a lost connection, reconnects when due. Returns 1 when
 * connected, 0 when not (err then says why the last attempt failed). */
int virt_maintain(struct virt *v, uint64_t now_ms, struct llcd_err *err);
/* When the next reconnect attempt is due (0 when connected). */
uint64_t virt_retry_at_ms(const struct virt *v);
unsigned virt_reconnects(const struct virt *v);

/* Readable while events are queued. */
int virt_event_fd(const struct virt *v);
/* Take one queued event: 1, or 0 when the queue is empty. */
int virt_next_event(struct virt *v, struct virt_event *ev);
const char *virt_event_name(enum virt_event_type t);

/* Every defined domain (running and not). *doms is malloc'd (free()).
 * Domains that vanish during the listing are left out. */
int virt_list_domains(struct virt *v, struct virt_domain **doms, int *n,
    struct llcd_err *err);
/* One domain by UUID. */
enum virt_result virt_domain_get(struct virt *v, const char *uuid,
    struct virt_domain *d, struct llcd_err *err);
/* One defined domain (running or not) by name (virDomainLookupByName);
 * VIRT_GONE when libvirt has no domain of that name. */
enum virt_result virt_domain_by_name(struct virt *v, const char *name,
    struct virt_domain *d, struct llcd_err *err);

/* The raw <llc-policy> element (virDomainGetMetadata, namespace
 * VIRT_POLICY_NS), malloc'd, or *xml = NULL when the domain has none. The
 * live definition for a running domain, else the persistent one. Parsing
 * is annotation_xml's job (annot_parse_metadata). */
enum virt_result virt_get_annotation(struct virt *v, const char *uuid,
    char **xml, struct llcd_err *err);
/* Write (xml) or remove (xml NULL) the annotation: live and persistent
 * definition for a running persistent domain, the persistent one for a
 * stopped domain. xml without a namespace prefix (annot_format_metadata). */
enum virt_result virt_set_annotation(struct virt *v, const char *uuid,
    const char *xml, struct llcd_err *err);

/* The same with explicit targets: live (VIR_DOMAIN_AFFECT_LIVE) and/or
 * config (VIR_DOMAIN_AFFECT_CONFIG); both false means virt_set_annotation's
 * choice. */
enum virt_result virt_set_annotation_flags(struct virt *v, const char *uuid,
    const char *xml, bool live, bool config, struct llcd_err *err);

/* A QMP command through libvirt's monitor passthrough
 * (virDomainQemuMonitorCommand): *reply is the whole JSON reply,
 * malloc'd. libvirt marks the domain "tainted: custom-monitor", so callers
 * use it only when the operator allows it. */
enum virt_result virt_qemu_monitor(struct virt *v, const char *uuid,
    const char *cmd, char **reply, struct llcd_err *err);

/* The domain XML (inactive: the persistent definition,
 * VIR_DOMAIN_XML_INACTIVE), malloc'd. */
enum virt_result virt_get_xml(struct virt *v, const char *uuid, bool inactive,
    char **xml, struct llcd_err *err);
/* Define (or redefine) a persistent domain from XML (virDomainDefineXML). */
enum virt_result virt_define_xml(struct virt *v, const char *xml,
    struct llcd_err *err);
/* Attach a device (e.g. the guest channel) to the persistent definition,
 * and to the running domain too when live. */
enum virt_result virt_attach_device(struct virt *v, const char *uuid, const char *xml, bool live,
                                    struct llcd_err *err);

/* Pin vCPU vcpu (thread tid, for the log) of a running domain to cpus,
 * live only (virDomainPinVcpuFlags, VIR_DOMAIN_AFFECT_LIVE): libvirt moves
 * the thread and its cpuset cgroup; a direct sched_setaffinity would fail
 * inside that cgroup. name is for the log. Failures are logged. */
enum virt_result virt_pin_vcpu(struct virt *v, const char *uuid,
    const char *name, int vcpu, int tid, const struct cpuset *cpus,
    struct llcd_err *err);
/* Pin all emulator threads (virDomainPinEmulator, live). */
enum virt_result virt_pin_emulator(struct virt *v, const char *uuid,
    const char *name, const struct cpuset *cpus, struct llcd_err *err);
/* Current pins of a running domain as libvirt stores them (for adoption
 * after a restart): vcpus[0..*n) for n <= max, and the emulator pin
 * (may be NULL). The kernel's view of one thread: procstat_affinity(). */
enum virt_result virt_get_pins(struct virt *v, const char *uuid,
    struct cpuset *vcpus, int max, int *n, struct cpuset *emulator,
    struct llcd_err *err);

/* ---- pure helpers, exposed for the unit tests ---- */

/* Error class of a libvirt error: code (virErrorNumber), int1 (the errno
 * of VIR_ERR_SYSTEM_ERROR), whether the connection is still alive, and
 * whether the domain is running (1), not (0) or unknown (-1). */
enum virt_result virt_classify(int code, int int1, bool conn_alive,
    int dom_active);
const char *virt_result_name(enum virt_result r);
/* name, uuid, <vcpu> and <cpu><topology> of a domain XML, read with
 * xmlsafe_read_domain() (at most XMLSAFE_DOMAIN_MAX bytes, no DOCTYPE);
 * counts above XMLSAFE_MAX_VCPUS are errors. */
int virt_parse_domain_xml(const char *xml, size_t len, struct virt_domain *d,
    struct llcd_err *err);
/* pid of the QEMU of domain name/uuid from pid_dir/<name>.pid, checked
 * against proc_root/<pid>/cmdline. VIRT_GONE: no pid file, no such
 * process, or a process that is not this domain's QEMU. */
enum virt_result virt_qemu_pid(const char *pid_dir, const char *proc_root,
    const char *name, const char *uuid, int *pid, struct llcd_err *err);

/* The pid (in proc_root's PID namespace) of the process whose command
 * line holds "-uuid UUID" and whose root directory is root's (stat of
 * proc_root/PID/root and root agree: the daemon's mount namespace, so a
 * process elsewhere cannot pose as the QEMU). VIRT_GONE when none. Reads
 * every process's cmdline (64 KiB each at most). */
enum virt_result virt_qemu_pid_scan(const char *proc_root, const char *root, const char *uuid, int *pid,
    struct llcd_err *err);

/* Domain keys (pure). virt_uuid_key: a stable nonzero 64-bit key from a
 * UUID string (either form, with or without dashes); 0 for a malformed
 * UUID. virt_domain_key: the engine's key of one run of a domain, the UUID's
 * key mixed with the QEMU pid (0 when unknown): stable for one run, across
 * llcd restarts; a restarted guest is a new domain to the engine. 0 for a
 * malformed UUID. */
uint64_t virt_uuid_key(const char *uuid);
uint64_t virt_domain_key(const char *uuid, int pid);

#endif
