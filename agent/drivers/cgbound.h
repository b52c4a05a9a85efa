// SPDX-License-Identifier: GPL-2.0-or-later
/* cgbound.h - the cgroup cpuset that bounds a process, read-only: the CPU
 * set someone else owns (kubelet's pod cgroup on a KubeVirt node, a
 * systemd slice's AllowedCPUs=), inside which llcd must place the
 * process's threads. Nothing here ever writes a cgroup file.
 *
 * Which cgroup. The process's cpuset cgroup (cgroup v2: the "0::" line of
 * /proc/PID/cgroup, where the cgroup2 mount has the cpuset controller; v1:
 * the line naming "cpuset", under the v1 cpuset mount), then up past the
 * cgroups libvirt makes for a domain itself, whose cpusets follow the
 * pins llcd asks libvirt for: components `emulator`, `vcpuN`, `iothreadN`,
 * `libvirt` and names ending in `.libvirt-qemu` or `.scope` whose name
 * starts with `machine-qemu`. The bound is that cgroup's effective set
 * (v2 cpuset.cpus.effective, v1 cpuset.effective_cpus), which already
 * holds every ancestor's restriction.
 *
 * Namespaces. The paths of /proc/PID/cgroup are relative to the reader's
 * cgroup namespace: a path that leaves it ("/..") is an error that says so
 * (run llcd in the host's cgroup namespace: podman --cgroupns=host;
 * cgbound_enter_host_ns() moves a privileged llcd there at start). A mount
 * whose root is not the hierarchy's (the 4th field of mountinfo) is
 * handled: the path is taken relative to it.
 *
 * Hostile input: /proc and cgroupfs are the kernel's; files are read with a
 * bound (4 KiB a line, 4 KiB a file), a path with ".." or longer than
 * PATH_MAX is refused. Nothing here logs.
 */
#ifndef LLCD_CGBOUND_H
#define LLCD_CGBOUND_H

#include <limits.h>
#include <stddef.h>

#include "cpuset.h"
#include "err.h"

struct cgbound {
	int version;            /* 1 or 2: the hierarchy read; 0: no cpuset
	                         * controller anywhere (no bound) */
	char dir[PATH_MAX];     /* the cgroup directory whose set was read */
	char cgroup[PATH_MAX];  /* ... as a cgroup path ("/kubepods/pod.../ctr") */
	struct cpuset cpus;     /* its effective CPUs */
};

/* The mounts, read once from proc_root/self/mountinfo (NULL: /proc):
 * where cgroup2 (with cpuset) and the v1 cpuset hierarchy are. */
struct cgbound_mounts {
	char v2[PATH_MAX], v2_root[PATH_MAX];   /* "" none */
	char v1[PATH_MAX], v1_root[PATH_MAX];   /* "" none */
	int v2_cpuset;                          /* cgroup.controllers lists cpuset */
};
int cgbound_mounts_read(const char *proc_root, struct cgbound_mounts *m, struct llcd_err *err);

/* The bound of process pid. 0 filled (version 0: no cpuset hierarchy, so
 * no bound), -1 with err (the process is gone, a file unreadable, a path
 * outside llcd's cgroup namespace). */
int cgbound_read(const struct cgbound_mounts *m, const char *proc_root, int pid, struct cgbound *out,
    struct llcd_err *err);

/* cgbound_read() in its two steps, so that processes in one cgroup can
 * share the second: the cgroup path of pid's cpuset cgroup, libvirt's own
 * components left out (one read of /proc/PID/cgroup; "" when there is no
 * cpuset hierarchy or pid is in none: no bound), 0 or -1 with err; then the
 * bound of that path (pid only names the process in a message). */
int cgbound_path(const struct cgbound_mounts *m, const char *proc_root, int pid, char *cg, size_t len,
    struct llcd_err *err);
int cgbound_read_path(const struct cgbound_mounts *m, const char *cg, int pid, struct cgbound *out,
    struct llcd_err *err);
/* cgbound_path() through a descriptor of /proc/PID/cgroup kept in *fd for
 * the next read (opened when *fd < 0, read again from its start: no open
 * and path walk each time; closed and -1 again when a read fails, a
 * process gone). The caller closes it (when the process is not pid's). */
int cgbound_path_kept(const struct cgbound_mounts *m, const char *proc_root, int pid, int *fd, char *cg,
    size_t len, struct llcd_err *err);

/* dir/name (a cgroup file) as a CPU list: 0, 1 when the file does not
 * exist, -1 with err. */
int cgbound_read_cpus(const char *dir, const char *name, struct cpuset *s, struct llcd_err *err);

/* Whether component name is one of the cgroups libvirt makes for a domain
 * (see above). */
int cgbound_libvirt_made(const char *name);

/* When llcd's cgroup namespace is not PID 1's (a container with a private
 * one) and it may (CAP_SYS_ADMIN, PID 1's /proc visible: hostPID), enter
 * PID 1's: 1 entered, 0 already there, 2 unknown (PID 1's namespace
 * cannot be seen: err says why; nothing done), -1 err (cannot enter;
 * paths of other processes then read as "/.." and cgbound_read says so).
 * Call before any thread starts. */
int cgbound_enter_host_ns(const char *proc_root, struct llcd_err *err);

#endif
