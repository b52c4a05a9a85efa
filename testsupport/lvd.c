// SPDX-License-Identifier: GPL-2.0-or-later
/* lvd.c - a private, unprivileged libvirtd for tests. */
#include "lvd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIBVIRTD "/usr/sbin/libvirtd"

static int
mkdir_owned(const char *path, uid_t uid, gid_t gid)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return chown(path, uid, gid);
}

int
lvd_start(struct lvd *d)
{
	static const char *sub[] = { "home", "run", "cfg", "cache" };
	char path[128], sock[160], env[4][160];
	struct passwd *pw;
	struct stat st;
	size_t i;
	int tries;

	if (geteuid() != 0) {
		fprintf(stderr, "lvd: must run as root (to run libvirtd as nobody)\n");
		return -1;
	}
	if (access(LIBVIRTD, X_OK) < 0) {
		fprintf(stderr, "lvd: %s missing: run scripts/install-deps\n", LIBVIRTD);
		return -1;
	}
	if ((pw = getpwnam("nobody")) == NULL) {
		fprintf(stderr, "lvd: no user nobody\n");
		return -1;
	}
	if (d->dir[0] == '\0') {
		snprintf(d->dir, sizeof(d->dir), "/tmp/llcd-lvd-XXXXXX");
		if (mkdtemp(d->dir) == NULL || chown(d->dir, pw->pw_uid, pw->pw_gid) < 0) {
			perror("lvd: mkdtemp");
			return -1;
		}
		for (i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "%s/%s", d->dir, sub[i]);
			if (mkdir_owned(path, pw->pw_uid, pw->pw_gid) < 0) {
				perror(path);
				return -1;
			}
		}
		snprintf(d->uri, sizeof(d->uri),
		    "qemu+unix:///session?socket=%s/run/libvirt/libvirt-sock", d->dir);
		snprintf(d->pid_dir, sizeof(d->pid_dir), "%s/run/libvirt/qemu/run", d->dir);
	}
	snprintf(sock, sizeof(sock), "%s/run/libvirt/libvirt-sock", d->dir);
	unlink(sock);
	snprintf(env[0], sizeof(env[0]), "HOME=%s/home", d->dir);
	snprintf(env[1], sizeof(env[1]), "XDG_RUNTIME_DIR=%s/run", d->dir);
	snprintf(env[2], sizeof(env[2]), "XDG_CONFIG_HOME=%s/cfg", d->dir);
	snprintf(env[3], sizeof(env[3]), "XDG_CACHE_HOME=%s/cache", d->dir);
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		char *envp[] = { env[0], env[1], env[2], env[3],
		    "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
		char *argv[] = { "libvirtd", NULL };
		int fd;

		/* quiet: libvirtd logs to stderr in the foreground */
		if ((fd = open("/dev/null", O_WRONLY)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			_exit(126);
		execve(LIBVIRTD, argv, envp);
		_exit(127);
	}
	for (tries = 0; tries < 200; tries++) {         /* 10 s */
		if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			fprintf(stderr, "lvd: libvirtd exited at start\n");
			d->pid = 0;
			return -1;
		}
		usleep(50000);
	}
	fprintf(stderr, "lvd: no socket %s after 10 s\n", sock);
	return -1;
}

void
lvd_kill(struct lvd *d, int sig)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, sig);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
}

static void
kill_pidfile(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid;

	if (f == NULL)
		return;
	if (fscanf(f, "%d", &pid) == 1 && pid > 1)
		kill(pid, SIGKILL);
	fclose(f);
}

void
lvd_cleanup(struct lvd *d)
{
	char path[512], cmd[160];
	struct dirent *de;
	DIR *dir;

	lvd_kill(d, SIGTERM);
	if (d->dir[0] == '\0')
		return;
	/* QEMU processes a failed test left behind */
	if ((dir = opendir(d->pid_dir)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			size_t l = strlen(de->d_name);
			if (l > 4 && strcmp(de->d_name + l - 4, ".pid") == 0 &&
			    strcmp(de->d_name, "driver.pid") != 0) {
				snprintf(path, sizeof(path), "%s/%s", d->pid_dir, de->d_name);
				kill_pidfile(path);
			}
		}
		closedir(dir);
	}
	snprintf(path, sizeof(path), "%s/run/libvirt/virtlogd.pid", d->dir);
	kill_pidfile(path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "lvd: could not remove %s\n", d->dir);
	d->dir[0] = '\0';
}
