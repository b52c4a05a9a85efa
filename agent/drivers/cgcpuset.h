// SPDX-License-Identifier: GPL-2.0-or-later
/* cgcpuset.h - the cgroup v2 cpuset of a process, for pins made with
 * sched_setaffinity (the QMP back-end: a Proxmox VM runs in
 * /sys/fs/cgroup/qemu.slice/VMID.scope).
 *
 * The kernel runs a thread only on CPUs of its cgroup's
 * cpuset.cpus.effective, whatever its affinity says. Before a pin, llcd
 * checks the process's cgroup:
 *   - no cgroup v2 mount, no cpuset controller there (no cpuset.cpus.effective),
 *     or the pin's CPUs are all in cpuset.cpus.effective: nothing to do;
 *   - else, when the cgroup has a cpuset.cpus of its own and its parent's
 *     cpuset.cpus.effective holds the pin's CPUs: cpuset.cpus is widened
 *     to hold them too (the old list plus the pin's CPUs; never narrowed,
 *     never a parent's file);
 *   - else (a parent restricts it): the pin is refused, naming the cgroup.
 * Files are read with a bound (4 KiB); nothing here logs.
 */
#ifndef LLCD_CGCPUSET_H
#define LLCD_CGCPUSET_H

#include <stddef.h>

#include "cpuset.h"
#include "err.h"

enum cgcpuset_result {
	CGCPUSET_OK = 0,        /* the cgroup allows the CPUs (or has no cpuset) */
	CGCPUSET_WIDENED,       /* cpuset.cpus was widened to allow them */
	CGCPUSET_REFUSED,       /* a parent restricts them: err says which */
	CGCPUSET_ERROR,         /* a file could not be read or written: err */
};

/* The cgroup v2 mount point from /proc/self/mountinfo (proc_root NULL:
 * /proc): 0, or -1 when there is none. */
int cgcpuset_root(const char *proc_root, char *buf, size_t len);
/* The cgroup directory of process pid: root + its "0::" line of
 * /proc/PID/cgroup. 0, or -1 with err. */
int cgcpuset_dir(const char *proc_root, const char *root, int pid, char *buf, size_t len,
    struct llcd_err *err);
/* Make cgroup directory dir allow cpus (see above). */
enum cgcpuset_result cgcpuset_allow(const char *dir, const struct cpuset *cpus, struct llcd_err *err);

#endif
