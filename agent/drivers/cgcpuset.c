// SPDX-License-Identifier: GPL-2.0-or-later
/* cgcpuset.c - the cgroup v2 cpuset of a process (cgcpuset.h). */
#include "cgcpuset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgbound.h"

int
cgcpuset_root(const char *proc_root, char *buf, size_t len)
{
	char path[512], line[4096];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root ? proc_root : "/proc");
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC SUPER */
		char mnt[1024], *sep = strstr(line, " - ");
		char fstype[64];
		if (sep == NULL || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1)
			continue;
		if (snprintf(buf, len, "%s", mnt) < (int)len)
			rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

int
cgcpuset_dir(const char *proc_root, const char *root, int pid, char *buf, size_t len,
    struct llcd_err *err)
{
	char path[512], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root ? proc_root : "/proc", pid);
	if ((f = fopen(path, "re")) == NULL)
		return llcd_err_set(err, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::", 3) != 0)
			continue;
		fclose(f);
		/* a path with ".." cannot come from the kernel; refuse it */
		if (line[3] != '/' || strstr(line + 3, "/..") != NULL)
			return llcd_err_set(err, "%s: unexpected cgroup path '%.200s'", path, line + 3);
		if (snprintf(buf, len, "%s%s", root, strcmp(line + 3, "/") ? line + 3 : "") >= (int)len)
			return llcd_err_set(err, "%s: cgroup path too long", path);
		return 0;
	}
	fclose(f);
	return llcd_err_set(err, "%s: no cgroup v2 line (0::)", path);
}


enum cgcpuset_result
cgcpuset_allow(const char *dir, const struct cpuset *cpus, struct llcd_err *err)
{
	struct cpuset eff, own, parent, want;
	char pdir[4096], path[4096 + 64], a[1024], b[1024];
	char *slash;
	int rc, fd;

	if ((rc = cgbound_read_cpus(dir, "cpuset.cpus.effective", &eff, err)) != 0)
		return rc > 0 ? CGCPUSET_OK : CGCPUSET_ERROR;   /* no cpuset controller here */
	if (cpuset_empty(&eff) || cpuset_subset(cpus, &eff))
		return CGCPUSET_OK;
	cpuset_format(cpus, a, sizeof(a));
	cpuset_format(&eff, b, sizeof(b));
	if ((rc = cgbound_read_cpus(dir, "cpuset.cpus", &own, err)) < 0)
		return CGCPUSET_ERROR;
	if (rc > 0 || cpuset_empty(&own)) {
		llcd_err_set(err, "cgroup %s allows only CPUs %s (from a parent cgroup, which llcd does not change), not %s",
		    dir, b, a);
		return CGCPUSET_REFUSED;
	}
	snprintf(pdir, sizeof(pdir), "%s", dir);
	if ((slash = strrchr(pdir, '/')) == NULL || slash == pdir) {
		llcd_err_set(err, "cgroup %s allows only CPUs %s, not %s", dir, b, a);
		return CGCPUSET_REFUSED;
	}
	*slash = '\0';
	if ((rc = cgbound_read_cpus(pdir, "cpuset.cpus.effective", &parent, err)) < 0)
		return CGCPUSET_ERROR;
	if (rc == 0 && !cpuset_empty(&parent) && !cpuset_subset(cpus, &parent)) {
		cpuset_format(&parent, b, sizeof(b));
		llcd_err_set(err, "cgroup %s allows only CPUs %s (its parent %s), which llcd does not change, not %s",
		    dir, b, pdir, a);
		return CGCPUSET_REFUSED;
	}
	cpuset_or(&want, &own, cpus);
	if (cpuset_format(&want, a, sizeof(a)) < 0) {
		llcd_err_set(err, "cgroup %s: CPU list too long", dir);
		return CGCPUSET_ERROR;
	}
	snprintf(path, sizeof(path), "%s/cpuset.cpus", dir);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return CGCPUSET_ERROR;
	}
	if (write(fd, a, strlen(a)) != (ssize_t)strlen(a)) {
		llcd_err_set(err, "writing '%s' to %s: %s", a, path, strerror(errno));
		close(fd);
		return CGCPUSET_ERROR;
	}
	close(fd);
	llcd_err_set(err, "%s widened to %s", path, a);
	return CGCPUSET_WIDENED;
}
