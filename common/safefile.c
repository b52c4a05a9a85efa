// SPDX-License-Identifier: GPL-2.0-or-later
/* safefile.c - files in directories others might write (safefile.h). */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 40

/* Who may write the directory st besides its owner: "" when no one. */
static const char *
others_write(const struct stat *st)
{
	if (st->st_mode & S_IWOTH)
		return "others";
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
		return "its group";
	return "";
}

/* The test of one directory (safefile.h); last: the directory asked for. */
static int
check_dir(const char *shown, const struct stat *st, bool last, unsigned flags, struct llcd_err *err)
{
	const char *w = others_write(st);

	if (!(flags & SAFEFILE_ANY_OWNER) && st->st_uid != 0 && st->st_uid != geteuid()) {
		errno = EPERM;
		return llcd_err_set(err, "%s%s is owned by uid %u, not root: llcd, as root, does not use it "
		    "(chown root)", last ? "directory " : "", shown, (unsigned)st->st_uid);
	}
	if (w[0] == '\0' || ((st->st_mode & S_ISVTX) && (!last || (flags & SAFEFILE_STICKY_OK))))
		return 0;
	errno = EPERM;
	if (last)
		return llcd_err_set(err, "directory %s is writable by %s (mode %04o, owner uid %u, group %u): llcd, as "
		    "root, does not use files in it (chmod go-w)", shown, w, (unsigned)(st->st_mode & 07777),
		    (unsigned)st->st_uid, (unsigned)st->st_gid);
	return llcd_err_set(err, "%s is writable by %s and not sticky (mode %04o): whoever may write it could "
	    "replace what lies below (chmod go-w)", shown, w, (unsigned)(st->st_mode & 07777));
}

int
safefile_opendir(const char *path, unsigned flags, struct llcd_err *err)
{
	char rest[PATH_MAX], shown[PATH_MAX], target[PATH_MAX];
	struct stat st;
	size_t rlen;
	int fd, links = 0;

	if (path == NULL || path[0] != '/') {
		errno = EINVAL;
		return llcd_err_set(err, "%s: not an absolute path", path ? path : "(null)");
	}
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest)) {
		errno = ENAMETOOLONG;
		return llcd_err_set(err, "%.200s...: path too long", path);
	}
again_root:
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return llcd_err_set(err, "/: %s", strerror(errno));
	snprintf(shown, sizeof(shown), "/");
	if (fstat(fd, &st) < 0 || check_dir("/", &st, false, flags, err) < 0)
		goto fail;
	for (;;) {
		char *p = rest, comp[NAME_MAX + 1];
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			llcd_err_set(err, "%s: a component is too long", path);
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		memmove(rest, p + n, strlen(p + n) + 1);
		if (strcmp(comp, ".") == 0)
			continue;
		bool last = strspn(rest, "/") == strlen(rest);
		int nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;
			llcd_err_set(err, "%s: %s", path, strerror(e));
			close(fd);
			errno = e;
			return -1;
		}
		if (fstat(nfd, &st) < 0) {
			close(nfd);
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			/* in a directory that passed: made by root or llcd */
			ssize_t k = readlinkat(nfd, "", target, sizeof(target) - 1);
			close(nfd);
			if (k <= 0 || ++links > MAX_LINKS) {
				errno = ELOOP;
				llcd_err_set(err, "%s: %s", path, k <= 0 ? "unreadable symbolic link" : strerror(ELOOP));
				goto fail;
			}
			target[k] = '\0';
			rlen = strlen(rest);
			if ((size_t)k + 1 + rlen >= sizeof(rest)) {
				errno = ENAMETOOLONG;
				llcd_err_set(err, "%s: path too long once its links are followed", path);
				goto fail;
			}
			memmove(rest + k + 1, rest, rlen + 1);
			memcpy(rest, target, (size_t)k);
			rest[k] = '/';
			if (target[0] == '/') {
				close(fd);
				goto again_root;
			}
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(nfd);
			errno = ENOTDIR;
			llcd_err_set(err, "%s: %s%s is not a directory", path, strcmp(shown, "/") ? shown : "", comp);
			goto fail;
		}
		if (strcmp(comp, "..") == 0) {
			char *s = strrchr(shown, '/');
			if (s != NULL && s != shown)
				*s = '\0';
			else
				snprintf(shown, sizeof(shown), "/");
		} else {
			size_t sl = strlen(shown);
			snprintf(shown + sl, sizeof(shown) - sl, "%s%s", sl > 1 ? "/" : "", comp);
		}
		close(fd);
		fd = nfd;
		if (check_dir(shown, &st, last, flags, err) < 0)
			goto fail;
	}
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		llcd_err_set(err, "%s: %s", path, strerror(errno));
	close(fd);
	return dfd;
fail:
	{
		int e = errno;
		close(fd);
		errno = e;
	}
	return -1;
}

int
safefile_opendir_of(const char *path, unsigned flags, const char **base, struct llcd_err *err)
{
	char dir[PATH_MAX];
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (slash == NULL || slash[1] == '\0' || (size_t)(slash - path) >= sizeof(dir)) {
		errno = EINVAL;
		return llcd_err_set(err, "%s: not an absolute path to a file", path ? path : "(null)");
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*base = slash + 1;
	return safefile_opendir(dir[0] ? dir : "/", flags, err);
}

static const char *
kind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

int
safefile_open(int dfd, const char *name, int oflags, struct llcd_err *err)
{
	struct stat st = { 0 };
	int fd = openat(dfd, name, oflags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == EMLINK)
			llcd_err_set(err, "%s is a symbolic link: not followed", name);
		else
			llcd_err_set(err, "%s: %s", name, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		llcd_err_set(err, "%s is %s: not read", name, kind(st.st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (!(oflags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return fd;
}

int
safefile_open_path(const char *path, int oflags, unsigned flags, struct llcd_err *err)
{
	const char *base;
	int dfd = safefile_opendir_of(path, flags, &base, err), fd, e;

	if (dfd < 0)
		return -1;
	fd = safefile_open(dfd, base, oflags, err);
	e = errno;
	if (fd < 0)
		llcd_err_prefix(err, "%.*s", (int)(base - path - 1), path);
	close(dfd);
	errno = e;
	return fd;
}

int
safefile_read_path(const char *path, size_t max, char **buf, size_t *len, struct llcd_err *err)
{
	int fd = safefile_open_path(path, O_RDONLY, 0, err);
	size_t n = 0;
	char *b;

	*buf = NULL;
	if (fd < 0)
		return -1;
	if ((b = malloc(max + 2)) == NULL) {
		close(fd);
		return llcd_err_set(err, "out of memory");
	}
	for (;;) {
		ssize_t r = read(fd, b + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			close(fd);
			errno = e;
			return llcd_err_set(err, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(b);
			close(fd);
			errno = EFBIG;
			return llcd_err_set(err, "%s: longer than %zu bytes", path, max);
		}
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

int
safefile_replace(int dfd, const char *name, const void *data, size_t len, mode_t mode, struct llcd_err *err)
{
	char tmp[NAME_MAX + 1];
	static const char az[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec ts;
	int fd = -1, e;
	const char *p = data;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		char suf[7];
		for (int i = 0; i < 6; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			suf[i] = az[(r >> 33) % (sizeof(az) - 1)];
		}
		suf[6] = '\0';
		if (snprintf(tmp, sizeof(tmp), "%s.%s", name, suf) >= (int)sizeof(tmp))
			return llcd_err_set(err, "%s: name too long", name);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
		if (fd < 0 && errno != EEXIST)
			return llcd_err_set(err, "%s: %s", tmp, strerror(errno));
	}
	if (fd < 0)
		return llcd_err_set(err, "%s: no free temporary name", name);
	if (fchmod(fd, mode & 0777) < 0)
		goto fail;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) < 0)
		goto fail;
	if (fsync(dfd) < 0)
		return llcd_err_set(err, "fsync of the directory of %s: %s", name, strerror(errno));
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, tmp, 0);
	errno = e;
	return llcd_err_set(err, "%s: %s", tmp, strerror(e));
}

int
safefile_replace_path(const char *path, const void *data, size_t len, mode_t mode, struct llcd_err *err)
{
	const char *base;
	int dfd = safefile_opendir_of(path, 0, &base, err), rc;

	if (dfd < 0)
		return -1;
	rc = safefile_replace(dfd, base, data, len, mode, err);
	if (rc < 0)
		llcd_err_prefix(err, "%.*s", (int)(base - path - 1), path);
	close(dfd);
	return rc;
}

int
safefile_connect(int dfd, const char *name, struct stat *st, struct llcd_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat ls = { 0 };
	int pfd, s, e;

	if (st == NULL)
		st = &ls;
	if ((pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		e = errno;
		llcd_err_set(err, "%s", strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(pfd, st) < 0 || !S_ISSOCK(st->st_mode)) {
		llcd_err_set(err, "%s, not a socket: not connected", kind(st->st_mode));
		close(pfd);
		errno = ENOTSOCK;
		return -1;
	}
	/* the inode opened above, whatever the name points to by now */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		llcd_err_set(err, "connect: %s%s", strerror(e), e == EAGAIN ? " (its listen queue is full)" : "");
		if (s >= 0)
			close(s);
		close(pfd);
		errno = e;
		return -1;
	}
	close(pfd);
	return s;
}
