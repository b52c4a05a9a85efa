// SPDX-License-Identifier: GPL-2.0-or-later
/* perfcount.c - per-thread instruction counters (perf_event_open). */
#include "perfcount.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int
open_counter(pid_t tid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.inherit = 0;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

bool
perfcount_available(char *reason, size_t len)
{
	int fd = open_counter(0);

	if (fd >= 0) {
		close(fd);
		snprintf(reason, len, "hardware instruction counters available");
		return true;
	}
	int e = errno;
	snprintf(reason, len, "no per-thread instruction counters (perf_event_open: %s%s): the benefit check "
	    "is off and the kernel's guards alone decide", strerror(e),
	    e == ENOENT || e == EOPNOTSUPP ? ", the CPU or hypervisor exposes no such counter" :
	    e == EACCES || e == EPERM ? ", see /proc/sys/kernel/perf_event_paranoid" : "");
	return false;
}

int
perfcount_open(pid_t tid, struct llcd_err *err)
{
	int fd = open_counter(tid);

	if (fd < 0)
		return llcd_err_set(err, "perf_event_open(thread %d): %s", (int)tid, strerror(errno));
	return fd;
}

int
perfcount_read(int fd, uint64_t *value, struct llcd_err *err)
{
	ssize_t n = read(fd, value, sizeof(*value));

	if (n != (ssize_t)sizeof(*value))
		return llcd_err_set(err, "reading an instruction counter: %s", n < 0 ? strerror(errno) : "short read");
	return 0;
}
