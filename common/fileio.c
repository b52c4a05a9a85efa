// SPDX-License-Identifier: GPL-2.0-or-later
/* fileio.c - small whole-file reads (fileio.h). */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
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
