// SPDX-License-Identifier: GPL-2.0-or-later
/* fileio.h - small whole-file reads (sysfs, cgroupfs, resctrl), and the
 * one reader of CPU-list files (the online CPUs, cgroup cpusets). */
#ifndef LLCD_FILEIO_H
#define LLCD_FILEIO_H

#include <stddef.h>

#include "cpuset.h"
#include "err.h"

/* Read up to len - 1 bytes of path into buf, NUL-terminated (one read:
 * for pseudo-files of a line or a few). Returns 0, or -1 with errno. */
int llcd_read_small(const char *path, char *buf, size_t len);

/* path, a file of one CPU list ("0-3,8"; trailing blanks and newline
 * ignored; empty: no CPU), into s. Returns 0; 1 when path does not exist;
 * -1 otherwise. On 1 and -1 err says "path: why". */
int llcd_read_cpulist(const char *path, struct cpuset *s, struct llcd_err *err);

/* The CPUs online now: sys_root/devices/system/cpu/online (sys_root NULL:
 * /sys; a guest's or a fixture's tree otherwise). As llcd_read_cpulist. */
int llcd_online_cpus(const char *sys_root, struct cpuset *s, struct llcd_err *err);

#endif
