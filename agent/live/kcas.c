// SPDX-License-Identifier: GPL-2.0-or-later
/* kcas.c - the probe of Linux's cache-aware scheduling (kcas.h). */
#include "kcas.h"
#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

LLCD_NAME_FUNCTION(live_kcas_name, enum live_kcas, LIVE_KCAS_ENABLED,
    [LIVE_KCAS_ABSENT] = "absent", [LIVE_KCAS_DISABLED] = "disabled",
    [LIVE_KCAS_ENABLED] = "enabled")

enum live_kcas
live_kernel_cas(const char *dir, char *detail, size_t len)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	if (dir == NULL)
		dir = LIVE_DEFAULT_KCAS_ROOT;
	if (detail && len)
		detail[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/enabled", dir) >= (int)sizeof(path))
		return LIVE_KCAS_ABSENT;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (detail && len)
			snprintf(detail, len, "no kernel cache-aware scheduling (%s: %s)", path, strerror(errno));
		return LIVE_KCAS_ABSENT;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		if (detail && len)
			snprintf(detail, len, "%s unreadable", path);
		return LIVE_KCAS_ABSENT;
	}
	buf[n] = '\0';
	if (buf[0] == '0') {
		if (detail && len)
			snprintf(detail, len, "kernel cache-aware scheduling present but off (%s = 0)", path);
		return LIVE_KCAS_DISABLED;
	}
	if (detail && len)
		snprintf(detail, len, "kernel cache-aware scheduling on (%s = 1): "
		    "it balances unpinned threads; llcd's pins override it for managed vCPUs", path);
	return LIVE_KCAS_ENABLED;
}
