// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cgbound.c - the cgroup cpuset that bounds a process
 * (agent/drivers/cgbound.c): cgroup v2 and v1 layouts as kubelet's cgroupfs and
 * systemd drivers make them, on fixture trees (a /proc and cgroupfs of
 * files: this machine's cgroup2 mount has no cpuset controller), the
 * cgroups libvirt makes skipped, mount roots, a path outside the cgroup
 * namespace refused; and this machine's real cgroup v1 cpuset hierarchy:
 * a child process in a cgroup made for the test, its set changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgbound.h"
#include "test_file.h"
#include "test_main.h"

static char tmp[256];

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2], dir[PATH_MAX * 2], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (s = dir + strlen(tmp) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/llcd-cgbound-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	return 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void
mountinfo(const char *v2_root, const char *v1_root)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
	    "22 1 0:21 / /proc rw - proc proc rw\n"
	    "30 22 0:26 %s %s/cg2 rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	    "31 22 0:27 %s %s/cg1 rw,nosuid - cgroup cgroup rw,cpuset\n"
	    "32 22 0:28 / %s/cg1cpu rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n",
	    v2_root, tmp, v1_root, tmp, tmp);
	put("proc/self/mountinfo", buf);
}

static void
assert_cpus(const struct cpuset *s, const char *want)
{
	char buf[256];

	cpuset_format(s, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

/* cgroup v2 with the cpuset controller, kubelet's systemd driver: the
 * pod's container scope; libvirt's own cgroups are skipped; a subtree
 * without cpuset files takes its parent's. */
static void
test_v2_kubelet_systemd(void **state)
{
	struct cgbound_mounts m;
	struct cgbound b;
	struct llcd_err e;
	char proc[PATH_MAX + 8], want[PATH_MAX * 2];
	const char *pod = "cg2/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope";

	(void)state;
	mountinfo("/", "/");
	put("cg2/cgroup.controllers", "cpuset cpu io memory pids\n");
	snprintf(want, sizeof(want), "%s/cpuset.cpus.effective", pod);
	put(want, "2-3,6\n");
	put("proc/100/cgroup", "0::/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope\n");
	/* libvirt's cgroups under it: the QEMU's emulator and a vCPU */
	snprintf(want, sizeof(want), "%s/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator/cpuset.cpus.effective", pod);
	put(want, "2\n");
	put("proc/101/cgroup",
	    "0::/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator\n");
	/* a cgroup below the pod without cpuset files (not enabled there) */
	snprintf(want, sizeof(want), "%s/sub/cgroup.procs", pod);
	put(want, "");
	put("proc/102/cgroup", "0::/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope/sub\n");
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	assert_int_equal(cgbound_mounts_read(proc, &m, &e), 0);
	assert_int_equal(m.v2_cpuset, 1);
	for (int pid = 100; pid <= 102; pid++) {
		assert_int_equal(cgbound_read(&m, proc, pid, &b, &e), 0);
		if (b.version != 2)
			fail_msg("pid %d: version %d", pid, b.version);
		assert_cpus(&b.cpus, "2-3,6");
		assert_string_equal(b.cgroup, "/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope");
		snprintf(want, sizeof(want), "%s/%s", tmp, pod);
		assert_string_equal(b.dir, want);
		/* in two steps: the path (libvirt's own components left out:
		 * 100 and 101 share one), then its bound, the same */
		char cg[PATH_MAX];
		struct cgbound b2;
		assert_int_equal(cgbound_path(&m, proc, pid, cg, sizeof(cg), &e), 0);
		assert_string_equal(cg, pid == 102 ? "/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope/sub" :
		    "/kubepods.slice/kubepods-pod1234.slice/cri-containerd-ab.scope");
		assert_int_equal(cgbound_read_path(&m, cg, pid, &b2, &e), 0);
		assert_int_equal(b2.version, b.version);
		assert_true(cpuset_equal(&b2.cpus, &b.cpus));
		assert_string_equal(b2.cgroup, b.cgroup);
		assert_string_equal(b2.dir, b.dir);
	}
	/* outside llcd's cgroup namespace: said, not guessed */
	put("proc/103/cgroup", "0::/../../kubepods.slice/x\n");
	assert_int_equal(cgbound_read(&m, proc, 103, &b, &e), -1);
	assert_non_null(strstr(e.msg, "outside llcd's cgroup namespace"));
	/* a hostile path */
	put("proc/104/cgroup", "0::/kubepods.slice/../../etc\n");
	assert_int_equal(cgbound_read(&m, proc, 104, &b, &e), -1);
	assert_non_null(strstr(e.msg, "unexpected cgroup path"));
	/* gone */
	assert_int_equal(cgbound_read(&m, proc, 99999, &b, &e), -1);
}

/* cgroup v2 without cpuset (this machine's cgroup2): the v1 cpuset
 * hierarchy, kubelet's cgroupfs driver layout, a mount whose root is a
 * subtree (a container's view). */
static void
test_v1_kubelet_cgroupfs(void **state)
{
	struct cgbound_mounts m;
	struct cgbound b;
	struct llcd_err e;
	char proc[PATH_MAX + 8], want[PATH_MAX * 2];

	(void)state;
	mountinfo("/", "/kubepods");
	put("cg2/cgroup.controllers", "hugetlb\n");
	put("cg1/besteffort/pod5678/c0ffee/cpuset.effective_cpus", "1\n");
	put("cg1/besteffort/pod5678/c0ffee/vm.libvirt-qemu/vcpu0/cpuset.effective_cpus", "1\n");
	put("proc/200/cgroup",
	    "12:cpu,cpuacct:/kubepods/besteffort/pod5678/c0ffee\n"
	    "3:cpuset:/kubepods/besteffort/pod5678/c0ffee/vm.libvirt-qemu/vcpu0\n"
	    "0::/\n");
	put("proc/201/cgroup", "3:cpuset:/other/x\n");
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	assert_int_equal(cgbound_mounts_read(proc, &m, &e), 0);
	assert_int_equal(m.v2_cpuset, 0);
	snprintf(want, sizeof(want), "%s/cg1", tmp);
	assert_string_equal(m.v1, want);
	assert_int_equal(cgbound_read(&m, proc, 200, &b, &e), 0);
	assert_int_equal(b.version, 1);
	assert_cpus(&b.cpus, "1");
	assert_string_equal(b.cgroup, "/kubepods/besteffort/pod5678/c0ffee");
	snprintf(want, sizeof(want), "%s/cg1/besteffort/pod5678/c0ffee", tmp);
	assert_string_equal(b.dir, want);
	/* not under the mount's root */
	assert_int_equal(cgbound_read(&m, proc, 201, &b, &e), -1);
	assert_non_null(strstr(e.msg, "is not under the mount"));
}

static void
test_libvirt_made(void **state)
{
	(void)state;
	assert_true(cgbound_libvirt_made("emulator"));
	assert_true(cgbound_libvirt_made("vcpu12"));
	assert_true(cgbound_libvirt_made("iothread1"));
	assert_true(cgbound_libvirt_made("libvirt"));
	assert_true(cgbound_libvirt_made("default_vmi-a.libvirt-qemu"));
	assert_true(cgbound_libvirt_made("machine-qemu\\x2d3\\x2dweb.scope"));
	assert_false(cgbound_libvirt_made("vcpu"));
	assert_false(cgbound_libvirt_made("vcpux"));
	assert_false(cgbound_libvirt_made("machine.slice"));
	assert_false(cgbound_libvirt_made("cri-containerd-ab.scope"));
	assert_false(cgbound_libvirt_made("pod1234"));
}

static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The real v1 cpuset hierarchy of this machine (kubelet's cgroupfs
 * layout: kubepods/podUID/CONTAINER): a child moved into a cgroup made
 * for the test reads its set, and a changed set is read again. */
static void
test_real_v1(void **state)
{
	struct cgbound_mounts m;
	struct cgbound b;
	struct llcd_err e;
	char base[PATH_MAX + 64], dir[PATH_MAX + 128], path[PATH_MAX + 160], pidbuf[32], mems[64] = "0";
	pid_t child;

	(void)state;
	assert_int_equal(cgbound_mounts_read(NULL, &m, &e), 0);
	if (!m.v1[0] || (m.v2[0] && m.v2_cpuset)) {
		print_message("no cgroup v1 cpuset hierarchy here (v2 cpuset: %d): the real v1 case is not run\n",
		    m.v2_cpuset);
		skip();
	}
	snprintf(base, sizeof(base), "%s/llcd-test-kubepods-%d", m.v1, (int)getpid());
	snprintf(dir, sizeof(dir), "%s/pod-test/ctr", base);
	assert_int_equal(mkdir(base, 0755), 0);
	snprintf(path, sizeof(path), "%s/pod-test", base);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	test_v1_first_mem(m.v1, mems, sizeof(mems));
	const char *levels[] = { base, NULL, dir };
	char mid[PATH_MAX + 96];
	snprintf(mid, sizeof(mid), "%s/pod-test", base);
	levels[1] = mid;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/cpuset.mems", levels[i]);
		assert_int_equal(write_file(path, mems), 0);
		snprintf(path, sizeof(path), "%s/cpuset.cpus", levels[i]);
		assert_int_equal(write_file(path, "0"), 0);
	}
	if ((child = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);       /* a failed check leaves no child */
		pause();
		_exit(0);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)child);
	snprintf(path, sizeof(path), "%s/tasks", dir);
	assert_int_equal(write_file(path, pidbuf), 0);
	assert_int_equal(cgbound_read(&m, NULL, child, &b, &e), 0);
	assert_int_equal(b.version, 1);
	assert_cpus(&b.cpus, "0");
	assert_string_equal(b.dir, dir);
	/* the pod grows (kubelet's reconcile): read again */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		snprintf(path, sizeof(path), "%s/cpuset.cpus", base);
		assert_int_equal(write_file(path, "0-1"), 0);
		snprintf(path, sizeof(path), "%s/cpuset.cpus", mid);
		assert_int_equal(write_file(path, "0-1"), 0);
		snprintf(path, sizeof(path), "%s/cpuset.cpus", dir);
		assert_int_equal(write_file(path, "1"), 0);
		assert_int_equal(cgbound_read(&m, NULL, child, &b, &e), 0);
		assert_cpus(&b.cpus, "1");
	}
	/* through a descriptor of /proc/PID/cgroup kept open: each read is
	 * the kernel's answer now (the process moved to the pod's cgroup),
	 * and one of a process gone fails and lets the descriptor go */
	int fd = -1;
	char cg[PATH_MAX], cg0[PATH_MAX];
	assert_int_equal(cgbound_path_kept(&m, NULL, child, &fd, cg0, sizeof(cg0), &e), 0);
	assert_true(fd >= 0);
	assert_non_null(strstr(cg0, "/pod-test/ctr"));
	int fd0 = fd;
	snprintf(path, sizeof(path), "%s/tasks", mid);
	assert_int_equal(write_file(path, pidbuf), 0);
	assert_int_equal(cgbound_path_kept(&m, NULL, child, &fd, cg, sizeof(cg), &e), 0);
	assert_int_equal(fd, fd0);
	assert_null(strstr(cg, "/ctr"));
	assert_non_null(strstr(cg, "/pod-test"));
	snprintf(path, sizeof(path), "%s/tasks", dir);
	assert_int_equal(write_file(path, pidbuf), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(cgbound_path_kept(&m, NULL, child, &fd, cg, sizeof(cg), &e), -1);
	assert_int_equal(fd, -1);
	print_message("kept descriptor after exit: %s\n", e.msg);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(mid), 0);
	assert_int_equal(rmdir(base), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v2_kubelet_systemd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1_kubelet_cgroupfs, setup, teardown),
		cmocka_unit_test(test_libvirt_made),
		cmocka_unit_test(test_real_v1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
