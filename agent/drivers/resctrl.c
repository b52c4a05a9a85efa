// SPDX-License-Identifier: GPL-2.0-or-later
/* resctrl.c - resctrl monitoring groups: create, add threads, read the
 * bandwidth and occupancy counters (resctrl.h). */
#include "resctrl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

struct resctrl {
	char root[PATH_MAX];
	bool occupancy;
};

/* Whether text has word as a whole line. */
static bool
has_line(const char *text, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (l == wl && strncmp(p, word, wl) == 0)
			return true;
		if (!nl)
			break;
		p = nl + 1;
	}
	return false;
}

struct resctrl *
resctrl_open(const char *root, struct llcd_err *err)
{
	char path[PATH_MAX], feat[1024];
	struct resctrl *r;

	if (root == NULL || root[0] == '\0') {
		llcd_err_set(err, "resctrl: no root directory");
		return NULL;
	}
	if (snprintf(path, sizeof(path), "%s/info/L3_MON/mon_features", root) >= (int)sizeof(path)) {
		llcd_err_set(err, "resctrl: root path too long");
		return NULL;
	}
	if (llcd_read_small(path, feat, sizeof(feat)) < 0) {
		int e = errno;
		llcd_err_set(err, "no resctrl L3 monitoring at %s (%s: %s)%s", root, path, strerror(e),
		    e == ENOENT ? "; mount -t resctrl resctrl /sys/fs/resctrl on a host whose CPU has RDT/PQoS "
		    "monitoring" : "");
		return NULL;
	}
	if (!has_line(feat, "mbm_total_bytes")) {
		llcd_err_set(err, "resctrl at %s monitors no memory bandwidth (mon_features lists no "
		    "mbm_total_bytes)", root);
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(r->root, sizeof(r->root), "%s", root);
	r->occupancy = has_line(feat, "llc_occupancy");
	return r;
}

void
resctrl_free(struct resctrl *r)
{
	free(r);
}

bool
resctrl_has_occupancy(const struct resctrl *r)
{
	return r != NULL && r->occupancy;
}

void
resctrl_group_name(const char *domain, char *buf, size_t len)
{
	size_t n;

	if (len == 0)
		return;
	n = (size_t)snprintf(buf, len, "llcd-");
	if (n >= len)
		return;
	for (const char *p = domain; *p && n + 1 < len && n + 1 < RESCTRL_NAME_MAX; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		          c == '_' || c == '.' || c == '-';
		buf[n++] = ok ? c : '_';
	}
	buf[n] = '\0';
}

/* path = root/mon_groups/name[/rest]; -1 with err when the name is not one
 * of llcd's or the path does not fit. */
static int
group_path(const struct resctrl *r, const char *name, const char *rest, char *path, size_t len,
           struct llcd_err *err)
{
	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return llcd_err_set(err, "resctrl: bad group name '%s'", name ? name : "");
	if ((size_t)snprintf(path, len, "%s/mon_groups/%s%s%s", r->root, name, rest ? "/" : "",
	    rest ? rest : "") >= len)
		return llcd_err_set(err, "resctrl: path too long for group '%s'", name);
	return 0;
}

int
resctrl_group_create(struct resctrl *r, const char *name, struct llcd_err *err)
{
	char path[PATH_MAX];

	if (group_path(r, name, NULL, path, sizeof(path), err) < 0)
		return -1;
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	int e = errno;
	return llcd_err_set(err, "resctrl: mkdir %s: %s%s", path, strerror(e),
	    e == ENOSPC ? " (no monitoring ID left: info/L3_MON/num_rmids)" : "");
}

int
resctrl_group_add_tasks(struct resctrl *r, const char *name, const int *tids, int n,
                        struct llcd_err *err)
{
	char path[PATH_MAX];
	int fd, moved = 0;

	if (group_path(r, name, "tasks", path, sizeof(path), err) < 0)
		return -1;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return llcd_err_set(err, "resctrl: open %s: %s", path, strerror(errno));
	for (int i = 0; i < n; i++) {
		char buf[24];
		int l;
		if (tids[i] <= 0)
			continue;
		l = snprintf(buf, sizeof(buf), "%d\n", tids[i]);
		/* the kernel takes one TID per write() */
		if (write(fd, buf, (size_t)l) == l) {
			moved++;
			continue;
		}
		if (errno == ESRCH)
			continue;       /* the thread exited meanwhile */
		int e = errno;
		close(fd);
		return llcd_err_set(err, "resctrl: writing TID %d to %s: %s", tids[i], path, strerror(e));
	}
	close(fd);
	return moved;
}

int
resctrl_group_remove(struct resctrl *r, const char *name, struct llcd_err *err)
{
	char path[PATH_MAX];

	if (group_path(r, name, NULL, path, sizeof(path), err) < 0)
		return -1;
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	return llcd_err_set(err, "resctrl: rmdir %s: %s", path, strerror(errno));
}

/* A counter file: a decimal number (true), or "Unavailable" / "Error" /
 * anything else (false). */
static bool
read_counter(const char *path, uint64_t *v)
{
	char buf[64], *end;

	if (llcd_read_small(path, buf, sizeof(buf)) < 0 || buf[0] < '0' || buf[0] > '9')
		return false;
	errno = 0;
	unsigned long long x = strtoull(buf, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != '\n'))
		return false;
	*v = x;
	return true;
}

int
resctrl_group_read(struct resctrl *r, const char *name, struct resctrl_sample *out,
                   struct llcd_err *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	DIR *dp;

	memset(out, 0, sizeof(*out));
	if (group_path(r, name, "mon_data", dir, sizeof(dir), err) < 0)
		return -1;
	if ((dp = opendir(dir)) == NULL)
		return llcd_err_set(err, "resctrl: %s: %s", dir, strerror(errno));
	while ((de = readdir(dp)) != NULL) {
		uint64_t v;
		if (strncmp(de->d_name, "mon_L3_", 7) != 0)
			continue;
		out->ndomains++;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/mbm_total_bytes", dir, de->d_name) < sizeof(path) &&
		    read_counter(path, &v)) {
			out->mbm_total_bytes += v;
			out->nread++;
		}
		if (r->occupancy &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s/llc_occupancy", dir, de->d_name) < sizeof(path) &&
		    read_counter(path, &v))
			out->llc_occupancy_bytes += v;
	}
	closedir(dp);
	if (out->ndomains == 0)
		return llcd_err_set(err, "resctrl: %s has no mon_L3_XX directory", dir);
	if (out->nread == 0)
		return llcd_err_set(err, "resctrl: group '%s': no L3 domain's mbm_total_bytes is a number "
		    "(Unavailable or Error in all %d)", name, out->ndomains);
	return 0;
}
