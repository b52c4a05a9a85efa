// SPDX-License-Identifier: GPL-2.0-or-later
/* fileio.c - small whole-file reads (fileio.h). */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
llcd_read_small(const char *path, char *buf, size_t len)
{
	int fd, e;
	ssize_t n;

	if (len == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

int
llcd_read_cpulist(const char *path, struct cpuset *s, struct llcd_err *err)
{
	char buf[4096];
	size_t n;

	if (llcd_read_small(path, buf, sizeof(buf)) < 0) {
		int rc = errno == ENOENT ? 1 : -1;
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return rc;
	}
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (cpuset_parse(s, buf, err) < 0)
		return llcd_err_prefix(err, "%s", path);
	return 0;
}

int
llcd_online_cpus(const char *sys_root, struct cpuset *s, struct llcd_err *err)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sys_root ? sys_root : "/sys") >=
	    (int)sizeof(path))
		return llcd_err_set(err, "%s: path too long", sys_root);
	return llcd_read_cpulist(path, s, err);
}
