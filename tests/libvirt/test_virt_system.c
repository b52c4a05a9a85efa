// SPDX-License-Identifier: GPL-2.0-or-later
/* test_virt_system.c - virt.c against the host's qemu:///system libvirtd,
 * the URI llcd uses by default, with a defined-but-not-running domain (no
 * guest is started, nothing is pinned on the host).
 *
 * If no libvirtd is running, the test starts virtlogd and libvirtd by hand
 * as real-stack.md §2 describes (no systemd here) and stops them at the
 * end; a daemon that was already running is left alone. The domain gets a
 * unique name and is undefined at the end even when a check fails.
 *
 * Checks: connect; define -> lifecycle event; listing with state,
 * vCPU counts and topology; annotation set/get -> metadata-change event;
 * a live pin of the stopped domain -> gone, logged with domain and vCPU;
 * undefine -> lifecycle event, and the domain is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libvirt/libvirt.h>

#include "clock.h"
#include "log.h"
#include "virt.h"

#define SOCK "/run/libvirt/libvirt-sock"

static struct {
	bool started_libvirtd, started_virtlogd;
	struct virt *v;
	virConnectPtr raw;
	char name[64];
	char uuid[VIRT_UUID_LEN];
	char logs[4096];
} S;

static void
sink(int pri, const char *msg, void *arg)
{
	size_t l = strlen(S.logs), m = strlen(msg);

	if (l + m + 2 < sizeof(S.logs)) {
		memcpy(S.logs + l, msg, m);
		memcpy(S.logs + l + m, "\n", 2);
	}
	fprintf(stderr, "  log: %s\n", msg);
}

static bool
running(const char *pidfile)
{
	FILE *f = fopen(pidfile, "r");
	int pid = 0;

	if (f == NULL)
		return false;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 1 && kill(pid, 0) == 0;
}

static void
stop(const char *pidfile)
{
	FILE *f = fopen(pidfile, "r");
	int pid = 0, i;

	if (f == NULL)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 1)
		return;
	kill(pid, SIGTERM);
	for (i = 0; i < 100 && kill(pid, 0) == 0; i++)
		usleep(50000);
}

static int
setup(void **state)
{
	struct stat st;
	int i;

	memset(&S, 0, sizeof(S));
	log_init(true, 1);
	log_set_sink(sink, NULL);
	snprintf(S.name, sizeof(S.name), "llcd-virt-sys-%d", (int)getpid());
	if (access("/usr/sbin/libvirtd", X_OK) < 0) {
		fprintf(stderr, "libvirtd missing: run scripts/install-deps\n");
		return -1;
	}
	if (!running("/run/virtlogd.pid")) {
		if (system("virtlogd -d") != 0)
			return -1;
		S.started_virtlogd = true;
	}
	if (!running("/run/libvirtd.pid")) {
		/* real-stack.md §9.2: without this libvirt re-probes QEMU on
		 * every call (a minute per define) */
		if (stat("/dev/kvm", &st) == 0 && st.st_gid == 0 && (st.st_mode & 0060) == 0)
			fprintf(stderr, "warning: /dev/kvm is root-only; expect slow libvirt calls (real-stack.md §9.2)\n");
		if (system("libvirtd -d") != 0)
			return -1;
		S.started_libvirtd = true;
		for (i = 0; i < 100 && access(SOCK, F_OK) < 0; i++)
			usleep(50000);
	}
	fprintf(stderr, "libvirtd: %s, virtlogd: %s\n",
	    S.started_libvirtd ? "started by this test" : "already running",
	    S.started_virtlogd ? "started by this test" : "already running");
	return 0;
}

static int
teardown(void **state)
{
	virDomainPtr dom;

	if (S.raw != NULL) {
		if ((dom = virDomainLookupByName(S.raw, S.name)) != NULL) {
			virDomainUndefine(dom);
			virDomainFree(dom);
		}
		virConnectClose(S.raw);
	}
	virt_free(S.v);
	if (S.started_libvirtd)
		stop("/run/libvirtd.pid");
	if (S.started_virtlogd)
		stop("/run/virtlogd.pid");
	log_set_sink(NULL, NULL);
	return 0;
}

static bool
wait_event(enum virt_event_type type, int event, int timeout_ms)
{
	uint64_t end = llcd_mono_ms() + (uint64_t)timeout_ms;
	struct pollfd pfd;
	struct virt_event ev;
	struct llcd_err err;

	pfd.fd = virt_event_fd(S.v);
	pfd.events = POLLIN;
	while (llcd_mono_ms() < end) {
		virt_maintain(S.v, llcd_mono_ms(), &err);
		while (virt_next_event(S.v, &ev))
			if (ev.type == type && strcmp(ev.uuid, S.uuid) == 0 &&
			    (event < 0 || ev.event == event))
				return true;
		poll(&pfd, 1, 50);
	}
	return false;
}

static void
test_system(void **state)
{
	char xml[1024], *annot;
	struct virt_domain *doms;
	struct llcd_err err;
	struct cpuset one;
	virDomainPtr dom;
	int n, i, found = -1;
	uint64_t t0;

	assert_non_null(S.v = virt_new(NULL, &err));           /* qemu:///system */
	assert_int_equal(virt_connect(S.v, llcd_mono_ms(), &err), 0);
	assert_non_null(S.raw = virConnectOpen(VIRT_DEFAULT_URI));
	snprintf(xml, sizeof(xml),
	    "<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory>"
	    "<vcpu current='3'>4</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os>"
	    "<cpu><topology sockets='1' dies='2' cores='1' threads='2'/></cpu>"
	    "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>", S.name);
	t0 = llcd_mono_ms();
	assert_non_null(dom = virDomainDefineXML(S.raw, xml));
	print_message("define took %llu ms\n", (unsigned long long)(llcd_mono_ms() - t0));
	assert_int_equal(virDomainGetUUIDString(dom, S.uuid), 0);
	virDomainFree(dom);
	assert_true(wait_event(VIRT_EV_LIFECYCLE, VIR_DOMAIN_EVENT_DEFINED, 5000));

	assert_int_equal(virt_list_domains(S.v, &doms, &n, &err), 0);
	for (i = 0; i < n; i++)
		if (strcmp(doms[i].uuid, S.uuid) == 0)
			found = i;
	assert_true(found >= 0);
	assert_string_equal(doms[found].name, S.name);
	assert_false(doms[found].active);
	assert_int_equal(doms[found].state, VIR_DOMAIN_SHUTOFF);
	assert_int_equal(doms[found].nvcpus, 3);
	assert_int_equal(doms[found].maxvcpus, 4);
	assert_int_equal(doms[found].topo.dies, 2);
	assert_int_equal(doms[found].topo.threads, 2);
	assert_int_equal(doms[found].pid, 0);
	free(doms);

	assert_int_equal(virt_set_annotation(S.v, S.uuid, "<llc-policy mode=\"pack\"/>", &err), VIRT_OK);
	assert_true(wait_event(VIRT_EV_METADATA, VIR_DOMAIN_METADATA_ELEMENT, 5000));
	assert_int_equal(virt_get_annotation(S.v, S.uuid, &annot, &err), VIRT_OK);
	assert_string_equal(annot, "<llc-policy mode=\"pack\"/>");
	free(annot);

	cpuset_zero(&one);
	cpuset_set(&one, 0);
	S.logs[0] = '\0';
	assert_int_equal(virt_pin_vcpu(S.v, S.uuid, S.name, 1, 0, &one, &err), VIRT_GONE);
	assert_non_null(strstr(err.msg, "domain is not running [gone]"));
	assert_non_null(strstr(S.logs, "vcpu 1: vcpupin 0 failed"));

	assert_non_null(dom = virDomainLookupByUUIDString(S.raw, S.uuid));
	assert_int_equal(virDomainUndefine(dom), 0);
	virDomainFree(dom);
	assert_true(wait_event(VIRT_EV_LIFECYCLE, VIR_DOMAIN_EVENT_UNDEFINED, 5000));
	assert_int_equal(virt_get_annotation(S.v, S.uuid, &annot, &err), VIRT_GONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
