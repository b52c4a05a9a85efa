// SPDX-License-Identifier: GPL-2.0-or-later
/* lvd.h - a private libvirtd for tests: the real daemon binary, run
 * unprivileged (as nobody) in session mode with every directory in a
 * temporary tree, so that a test can define, start, kill and restart it
 * without touching the host's qemu:///system daemon or other users of it.
 * QEMU domains it starts are real (TCG) processes; vcpupin works through
 * sched_setaffinity since a session daemon has no cgroups. */
#ifndef LLCD_TEST_LVD_H
#define LLCD_TEST_LVD_H

#include <sys/types.h>

struct lvd {
	char dir[64];                   /* /tmp/llcd-lvd-XXXXXX */
	char uri[256];                  /* qemu+unix:///session?socket=... */
	char pid_dir[192];              /* where libvirtd writes <name>.pid */
	pid_t pid;                      /* libvirtd (our child), 0 when down */
};

/* Create the tree on first call, start libvirtd, wait for its socket.
 * Returns 0 or -1 (message on stderr). */
int lvd_start(struct lvd *d);
/* Kill libvirtd with sig and reap it (its QEMU processes live on). */
void lvd_kill(struct lvd *d, int sig);
/* Stop everything it started (libvirtd, virtlogd, leftover QEMU) and
 * remove the tree. */
void lvd_cleanup(struct lvd *d);

#endif
