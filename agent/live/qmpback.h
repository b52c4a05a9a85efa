// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpback.h - a discovery source of the live back-end (live.h,
 * struct live_source): QEMU run without libvirt (Proxmox VE's way,
 * hand-run and CI hosts), found by its QMP socket. It finds VMs and hands
 * them to the live back-end, which samples, places and pins them as it
 * does libvirt's; it wraps none of its entries.
 *
 * Discovery. The sockets matching a glob (qmp-socket-glob, default
 * /var/run/qemu-server/ *.qmp: wildcards in the last component only) are
 * watched with inotify on their directory, plus a rescan every 5 s. A
 * socket (lstat: a socket, not a symlink) is connected with libqmp,
 * non-blocking: the greeting, qmp_capabilities, then query-name,
 * query-uuid, query-cpus-fast and query-hotpluggable-cpus, each step
 * within timeout_ms (2000). The peer must be a process of root or of
 * llcd's user (SO_PEERCRED), and every vCPU thread-id it names must be a
 * thread of that process (/proc/PID/task/TID): a socket at the glob can
 * never make llcd pin another process's threads. A peer that talks
 * garbage, breaks the protocol or does not answer in time is closed and
 * tried again after 1, 2, 4 ... 60 s (said once per distinct reason);
 * nothing here ever blocks the loop.
 *
 * A VM: its name from query-name (else the socket's basename without
 * .qmp, the VMID on Proxmox), its UUID from query-uuid (else one made from
 * the socket path), its pid from SO_PEERCRED, its vCPU threads and guest
 * topology (sockets, dies, clusters, cores, threads: the largest IDs of
 * query-hotpluggable-cpus plus one). It goes to the libvirt back-end's
 * code as a live_ext_domain (live.h): sampling, pinning with
 * sched_setaffinity (emulator: the process's other threads; the cgroup v2
 * cpuset widened where it would not allow a pin, cgcpuset.h), the state
 * file, adoption at restart and fail-static are that code's.
 *
 * Afterwards the monitor is closed (QEMU serves one client at a time; qm
 * and pvedaemon need it), unless hold: then the connection stays open and
 * SHUTDOWN (the VM leaves the engine), STOP / RESUME (logged; RESUME after
 * a SHUTDOWN re-reads the VM) are heard as they come. Either way a pidfd
 * per VM says at once when QEMU exits, and a socket that vanishes drops
 * its VM.
 *
 * vCPU hot-plug. The live back-end's discovery (its thread-count hint, at
 * most every 10 periods) compares the threads QEMU names as vCPUs with
 * those at QMP's last answer (live_ext_vcpus_changed); when they differ,
 * or with hold a DEVICE_DELETED / DEVICE_ADDED came, the four queries are
 * asked again (a new connection, closed after them; the held one with
 * hold), at most once per 5 s per VM, a failure backed off as above. The
 * answer is checked as the first one and replaces the VM's vCPUs
 * (live_ext_update): the engine places new vCPUs beside the others.
 *
 * Policy. The llc-policy element comes from policy_dir/VMID.xml, else
 * policy_dir/NAME.xml (NAME only when it is a plain file name), parsed by
 * the annotation parser with its messages (prefixed by the file's path),
 * re-read when the file changes (checked every period), up to
 * ANNOT_XML_MAX bytes. The guest helper's channel is channel_path with %n
 * (the name, when a plain file name, else the VMID), %i (the VMID) and %%.
 *
 * Memory: per VM one struct qvm (about 10 KiB) plus libqmp's bounds
 * (qmp.h) while connected.
 */
#ifndef LLCD_QMPBACK_H
#define LLCD_QMPBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "live.h"

#define QMPBACK_DEFAULT_GLOB "/var/run/qemu-server/*.qmp"
#define QMPBACK_TIMEOUT_MS 2000

struct qmpback_config {
	const char *socket_glob;        /* NULL or "": QMPBACK_DEFAULT_GLOB */
	const char *policy_dir;         /* NULL or "": no policy files */
	const char *channel_path;       /* NULL or "": no guest channel */
	bool hold;                      /* keep the monitor (hear events) */
	int timeout_ms;                 /* each step; 0: QMPBACK_TIMEOUT_MS */
	int requery_ms;                 /* tests: hot-plug re-reads at most this
	                                 * often per VM; 0: 5000 */
	const char *proc_root;          /* tests; NULL: /proc */
};

struct qmpback;

/* l: a live back-end with uri "none" (borrowed; outlives the source),
 * whose discovery source this becomes (live_set_source). */
struct qmpback *qmpback_new(struct live *l, const struct qmpback_config *cfg, struct llcd_err *err);
/* Stops being l's source; its VMs keep their pins (fail-static). */
void qmpback_free(struct qmpback *q);

/* Readable while a socket, a QMP connection or a QEMU exit needs looking at. */
int qmpback_event_fd(const struct qmpback *q);
/* Everything due: inotify, rescan, connections, timeouts, exits, policy
 * files. Returns how many VMs were added (>= 0). */
int qmpback_handle(struct qmpback *q, uint64_t now_ns);

struct qmpback_stats {
	uint64_t scans, connects, refusals, vms_added, vms_removed, events, policy_reads;
	uint64_t requeries, rereads;    /* hot-plug: re-reads begun, applied */
	int sockets, vms;
};
void qmpback_stats(const struct qmpback *q, struct qmpback_stats *st);

/* For tests: expand a channel_path pattern for a VM (see above). 0, or -1
 * when too long. */
int qmpback_expand(const char *pattern, const char *name, const char *vmid, char *buf, size_t len);

#endif
