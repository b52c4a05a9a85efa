// SPDX-License-Identifier: GPL-2.0-or-later
/* fileio.h - small whole-file reads (sysfs, cgroupfs, resctrl). */
#ifndef LLCD_FILEIO_H
#define LLCD_FILEIO_H

#include <stddef.h>

/* Read up to len - 1 bytes of path into buf, NUL-terminated (one read:
 * for pseudo-files of a line or a few). Returns 0, or -1 with errno. */
int llcd_read_small(const char *path, char *buf, size_t len);

#endif
