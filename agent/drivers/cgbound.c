// SPDX-License-Identifier: GPL-2.0-or-later
/* cgbound.c - the cgroup cpuset that bounds a process (cgbound.h). */
#include "cgbound.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define LINE_MAX_ 4096

static const char *
proc(const char *proc_root)
{
	return proc_root ? proc_root : "/proc";
}

/* Whether the comma-separated list has the token tok. */
static bool
has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p != NULL && *p; ) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len == n && strncmp(p, tok, n) == 0)
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

int
cgbound_mounts_read(const char *proc_root, struct cgbound_mounts *m, struct llcd_err *err)
{
	char path[PATH_MAX + 32], line[LINE_MAX_], ctl[1024];
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/self/mountinfo", proc(proc_root));
	if ((f = fopen(path, "re")) == NULL)
		return llcd_err_set(err, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC SUPER */
		char root[PATH_MAX], mnt[PATH_MAX], fstype[64], src[256], super[1024];
		char *sep = strstr(line, " - ");
		if (sep == NULL || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		super[0] = '\0';
		if (sscanf(sep, " - %63s %255s %1023s", fstype, src, super) < 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !m->v2[0]) {
			snprintf(m->v2, sizeof(m->v2), "%s", mnt);
			snprintf(m->v2_root, sizeof(m->v2_root), "%s", root);
		} else if (strcmp(fstype, "cgroup") == 0 && !m->v1[0] && has_token(super, "cpuset")) {
			snprintf(m->v1, sizeof(m->v1), "%s", mnt);
			snprintf(m->v1_root, sizeof(m->v1_root), "%s", root);
		}
	}
	fclose(f);
	if (m->v2[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", m->v2);
		if (llcd_read_small(path, ctl, sizeof(ctl)) == 0) {
			ctl[strcspn(ctl, "\n")] = '\0';
			char *save = NULL;      /* strtok_r: a caller's strtok() loop is not ours to reset */
			for (char *tok = strtok_r(ctl, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
				if (strcmp(tok, "cpuset") == 0)
					m->v2_cpuset = 1;
		}
	}
	return 0;
}

int
cgbound_libvirt_made(const char *name)
{
	size_t n = strlen(name);
	const char *digits = NULL;

	if (strcmp(name, "emulator") == 0 || strcmp(name, "libvirt") == 0)
		return 1;
	if (strncmp(name, "vcpu", 4) == 0)
		digits = name + 4;
	else if (strncmp(name, "iothread", 8) == 0)
		digits = name + 8;
	if (digits != NULL && *digits && strspn(digits, "0123456789") == strlen(digits))
		return 1;
	if (n > 13 && strcmp(name + n - 13, ".libvirt-qemu") == 0)
		return 1;
	if (strncmp(name, "machine-qemu", 12) == 0 && n > 6 && strcmp(name + n - 6, ".scope") == 0)
		return 1;
	return 0;
}

/* The text of /proc/PID/cgroup (at most PROC_CGROUP_MAX bytes) through fd,
 * from its start: 0, or -1 with errno (a process that is gone: ESRCH). */
#define PROC_CGROUP_MAX 16384
static int
read_all(int fd, char *buf, size_t cap, size_t *n)
{
	*n = 0;
	while (*n < cap - 1) {
		ssize_t r = pread(fd, buf + *n, cap - 1 - *n, (off_t)*n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		*n += (size_t)r;
	}
	buf[*n] = '\0';
	return 0;
}

/* The process's cgroup path in hierarchy v (2: the "0::" line; 1: the line
 * naming cpuset) into buf, read through *fd, a descriptor of path kept
 * open (opened when *fd < 0; closed and -1 again when a read fails). 0, 1
 * when it has none, -1 err. */
static int
proc_cgroup(const char *path, int *fd, int v, char *buf, size_t len, struct llcd_err *err)
{
	char text[PROC_CGROUP_MAX];
	size_t n;
	int rc = 1;

	if (*fd < 0 && (*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return llcd_err_set(err, "%s: %s", path, strerror(errno));
	if (read_all(*fd, text, sizeof(text), &n) < 0) {
		rc = llcd_err_set(err, "%s: %s", path, strerror(errno));
		close(*fd);
		*fd = -1;
		return rc;
	}
	if (n == sizeof(text) - 1)
		return llcd_err_set(err, "%s: longer than %zu bytes", path, sizeof(text) - 1);
	for (char *line = text, *next; rc == 1 && line != NULL && *line; line = next) {
		char *c1, *c2;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((c1 = strchr(line, ':')) == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		/* ID:CONTROLLERS:PATH; v2's is 0 with no controllers */
		bool match = v == 2 ? strcmp(line, "0") == 0 && c1[1] == '\0' : has_token(c1 + 1, "cpuset");
		if (!match)
			continue;
		if (c2[1] != '/' || strlen(c2 + 1) >= len) {
			rc = llcd_err_set(err, "%s: unexpected cgroup path '%.200s'", path, c2 + 1);
			break;
		}
		if (strncmp(c2 + 1, "/..", 3) == 0) {
			rc = llcd_err_set(err, "%s: cgroup '%.200s' is outside llcd's cgroup namespace (run llcd in "
			    "the host's: podman --cgroupns=host, or privileged with hostPID)", path, c2 + 1);
			break;
		}
		if (strstr(c2 + 1, "/../") != NULL) {
			rc = llcd_err_set(err, "%s: unexpected cgroup path '%.200s'", path, c2 + 1);
			break;
		}
		snprintf(buf, len, "%s", c2 + 1);
		rc = 0;
	}
	return rc;
}

int
cgbound_read_cpus(const char *dir, const char *name, struct cpuset *s, struct llcd_err *err)
{
	char path[PATH_MAX + 64];
	struct llcd_err e;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((rc = llcd_read_cpulist(path, s, &e)) < 0)
		return llcd_err_set(err, "%s", e.msg);
	return rc;
}

/* The hierarchy cgbound reads: 2 or 1, 0 none; its mount, root and file. */
static int
hierarchy(const struct cgbound_mounts *m, const char **mnt, const char **root, const char **file)
{
	if (m->v2[0] && m->v2_cpuset) {
		*mnt = m->v2;
		*root = m->v2_root;
		*file = "cpuset.cpus.effective";
		return 2;
	}
	if (m->v1[0]) {
		*mnt = m->v1;
		*root = m->v1_root;
		*file = "cpuset.effective_cpus";
		return 1;
	}
	return 0;
}

int
cgbound_path(const struct cgbound_mounts *m, const char *proc_root, int pid, char *cg, size_t len,
    struct llcd_err *err)
{
	int fd = -1, rc = cgbound_path_kept(m, proc_root, pid, &fd, cg, len, err);

	if (fd >= 0)
		close(fd);
	return rc;
}

int
cgbound_path_kept(const struct cgbound_mounts *m, const char *proc_root, int pid, int *fd, char *cg,
    size_t len, struct llcd_err *err)
{
	const char *mnt, *root, *file;
	char path[PATH_MAX], *slash;
	int v, rc;

	cg[0] = '\0';
	if ((v = hierarchy(m, &mnt, &root, &file)) == 0)
		return 0;               /* no cpuset hierarchy: no bound */
	snprintf(path, sizeof(path), "%s/%d/cgroup", proc(proc_root), pid);
	if ((rc = proc_cgroup(path, fd, v, cg, len, err)) != 0) {
		cg[0] = '\0';
		return rc < 0 ? -1 : 0;
	}
	/* up past the cgroups libvirt made for the domain */
	while ((slash = strrchr(cg, '/')) != NULL && slash[1] && cgbound_libvirt_made(slash + 1))
		*(slash == cg ? slash + 1 : slash) = '\0';
	return 0;
}

int
cgbound_read(const struct cgbound_mounts *m, const char *proc_root, int pid, struct cgbound *out,
    struct llcd_err *err)
{
	char cg[PATH_MAX];

	if (cgbound_path(m, proc_root, pid, cg, sizeof(cg), err) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return cgbound_read_path(m, cg, pid, out, err);
}

int
cgbound_read_path(const struct cgbound_mounts *m, const char *path, int pid, struct cgbound *out,
    struct llcd_err *err)
{
	const char *mnt, *root, *file;
	char cg[PATH_MAX], *rel, *slash;
	int v, rc;
	size_t rlen;

	memset(out, 0, sizeof(*out));
	if ((v = hierarchy(m, &mnt, &root, &file)) == 0 || path[0] == '\0')
		return 0;               /* no hierarchy, or the process is in none */
	if (snprintf(cg, sizeof(cg), "%s", path) >= (int)sizeof(cg))
		return llcd_err_set(err, "cgroup path too long: %.200s", path);
	/* relative to the mount's root */
	rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (rlen && (strncmp(cg, root, rlen) != 0 || (cg[rlen] != '/' && cg[rlen] != '\0')))
		return llcd_err_set(err, "cgroup %s of pid %d is not under the mount %s (root %s)", cg, pid, mnt, root);
	rel = cg + rlen;
	for (;;) {
		if (snprintf(out->dir, sizeof(out->dir), "%s%s", mnt, strcmp(rel, "/") ? rel : "") >=
		    (int)sizeof(out->dir))
			return llcd_err_set(err, "cgroup path too long: %s%s", mnt, rel);
		if ((rc = cgbound_read_cpus(out->dir, file, &out->cpus, err)) < 0)
			return -1;
		if (rc == 0)
			break;
		/* v2: no cpuset in this subtree; its parent's set holds */
		if ((slash = strrchr(rel, '/')) == NULL || (slash == rel && rel[1] == '\0')) {
			memset(out, 0, sizeof(*out));
			return 0;
		}
		*(slash == rel ? slash + 1 : slash) = '\0';
	}
	out->version = v;
	snprintf(out->cgroup, sizeof(out->cgroup), "%s", cg);
	return 0;
}

int
cgbound_enter_host_ns(const char *proc_root, struct llcd_err *err)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct stat sa, sb;
	int fd;

	snprintf(a, sizeof(a), "%s/self/ns/cgroup", proc(proc_root));
	snprintf(b, sizeof(b), "%s/1/ns/cgroup", proc(proc_root));
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0) {
		llcd_err_set(err, "cannot compare llcd's cgroup namespace with PID 1's: %s", strerror(errno));
		return 2;       /* unknown: nothing done */
	}
	if (sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev)
		return 0;
	if ((fd = open(b, O_RDONLY | O_CLOEXEC)) < 0)
		return llcd_err_set(err, "%s: %s", b, strerror(errno));
	if (setns(fd, CLONE_NEWCGROUP) < 0) {
		llcd_err_set(err, "entering PID 1's cgroup namespace: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 1;
}
