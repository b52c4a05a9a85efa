// SPDX-License-Identifier: GPL-2.0-or-later
/* safefile.h - a root daemon's files in directories it does not own
 * alone: no symbolic link followed where none is expected, no path raced.
 *
 * A directory is opened once, after a check of it and of every directory
 * on the way to it, and then used through its descriptor (openat,
 * renameat, unlinkat): what the path names later does not matter.
 *
 *   safefile_opendir(path)  walks from "/" one component at a time
 *       (openat O_PATH|O_NOFOLLOW). Every directory on the way must be
 *       owned by root or by the caller's effective uid and must not be
 *       writable by others, nor by its group unless that is gid 0, unless
 *       it is sticky (/tmp: others cannot rename or remove what is not
 *       theirs). The directory itself must pass the same test without the
 *       sticky exception (others could put names in it). A symbolic link on
 *       the way is followed (40 at most): it sits in a directory that
 *       passed, so only root or the caller made it (/var/run -> /run).
 *       SAFEFILE_ANY_OWNER drops the owner test (libvirt's channel
 *       directories belong to QEMU's user); SAFEFILE_STICKY_OK lets the
 *       directory itself be sticky and writable by others (a control
 *       socket in /tmp: names are created with O_EXCL, renamed by llcd
 *       only).
 *   safefile_open(dfd, name)  opens a regular file with O_NOFOLLOW (and
 *       O_NONBLOCK: a FIFO planted there cannot block): a symbolic link,
 *       a FIFO or a device is refused with what it is.
 *   safefile_replace(dfd, name, data)  writes a new file under a name of
 *       its own (NAME.XXXXXX, O_CREAT|O_EXCL|O_NOFOLLOW: never an existing
 *       file nor a link), fsync, renameat over name, fsync of the
 *       directory.
 *   safefile_connect(dfd, name)  connects a UNIX stream socket to the
 *       socket inode found: the name is opened O_PATH|O_NOFOLLOW (a
 *       symbolic link is refused, not followed), checked to be a socket,
 *       and connected through /proc/self/fd/N, which names that inode
 *       whatever happens to the name meanwhile; non-blocking (a peer that
 *       never accepts cannot block the loop: EAGAIN). The socket file's
 *       stat is returned (its owner) for the caller to check.
 *
 * Errors fill err with the path and the reason (what to change), and
 * leave errno (ENOENT for a directory or file that does not exist).
 * libc only (llcommon).
 */
#ifndef LLCD_SAFEFILE_H
#define LLCD_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "err.h"

#define SAFEFILE_ANY_OWNER 1u
#define SAFEFILE_STICKY_OK 2u

/* A descriptor of the directory (O_RDONLY|O_DIRECTORY|O_CLOEXEC), or -1. */
int safefile_opendir(const char *path, unsigned flags, struct llcd_err *err);
/* The directory of path (its last component cut) and that component:
 * safefile_opendir() of the directory, *base points into path. */
int safefile_opendir_of(const char *path, unsigned flags, const char **base, struct llcd_err *err);

/* A regular file in dfd: oflags (O_RDONLY...) | O_NOFOLLOW | O_CLOEXEC. */
int safefile_open(int dfd, const char *name, int oflags, struct llcd_err *err);
/* The same by path (its directory checked as above). */
int safefile_open_path(const char *path, int oflags, unsigned flags, struct llcd_err *err);
/* Read a whole regular file of at most max bytes into a malloc'd,
 * NUL-terminated buffer (*len its length); a longer one is an error. */
int safefile_read_path(const char *path, size_t max, char **buf, size_t *len, struct llcd_err *err);

/* Replace dfd/name with data (mode: its permissions). */
int safefile_replace(int dfd, const char *name, const void *data, size_t len, mode_t mode, struct llcd_err *err);
int safefile_replace_path(const char *path, const void *data, size_t len, mode_t mode, struct llcd_err *err);

/* A connected (non-blocking, close-on-exec) UNIX stream socket to the
 * socket dfd/name, its file's stat in *st; -1 with err (errno EAGAIN: the
 * peer's backlog is full). */
int safefile_connect(int dfd, const char *name, struct stat *st, struct llcd_err *err);

#endif
