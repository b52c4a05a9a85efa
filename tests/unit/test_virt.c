// SPDX-License-Identifier: GPL-2.0-or-later
/* test_virt.c - the pure parts of virt.c: error classes, domain XML,
 * QEMU pid discovery (on recorded fixtures). The parts that talk to
 * libvirtd are tested in tests/libvirt/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "virt.h"
#include "test_file.h"
#include "test_main.h"

#define FIX LLCD_FIXTURES "/libvirt"


static void
test_classify(void **state)
{
	/* gone: the domain vanished, or is not running for a live call */
	assert_int_equal(virt_classify(VIR_ERR_NO_DOMAIN, 0, true, -1), VIRT_GONE);
	assert_int_equal(virt_classify(VIR_ERR_OPERATION_INVALID, 0, true, 0), VIRT_GONE);
	assert_int_equal(virt_classify(VIR_ERR_OPERATION_INVALID, 0, true, -1), VIRT_GONE);
	assert_int_equal(virt_classify(VIR_ERR_SYSTEM_ERROR, ESRCH, true, 1), VIRT_GONE);
	/* a running domain refusing: permanent */
	assert_int_equal(virt_classify(VIR_ERR_OPERATION_INVALID, 0, true, 1), VIRT_PERMANENT);
	assert_int_equal(virt_classify(VIR_ERR_INVALID_ARG, 0, true, 1), VIRT_PERMANENT);
	assert_int_equal(virt_classify(VIR_ERR_ACCESS_DENIED, 0, true, 1), VIRT_PERMANENT);
	assert_int_equal(virt_classify(VIR_ERR_OPERATION_UNSUPPORTED, 0, true, 1), VIRT_PERMANENT);
	assert_int_equal(virt_classify(VIR_ERR_SYSTEM_ERROR, EINVAL, true, 1), VIRT_PERMANENT);
	assert_int_equal(virt_classify(VIR_ERR_INTERNAL_ERROR, 0, true, 1), VIRT_PERMANENT);
	/* transient: busy, timeouts, the connection */
	assert_int_equal(virt_classify(VIR_ERR_OPERATION_TIMEOUT, 0, true, 1), VIRT_TRANSIENT);
	assert_int_equal(virt_classify(VIR_ERR_RPC, 0, true, 1), VIRT_TRANSIENT);
	assert_int_equal(virt_classify(VIR_ERR_SYSTEM_ERROR, EBUSY, true, 1), VIRT_TRANSIENT);
	assert_int_equal(virt_classify(VIR_ERR_INVALID_ARG, 0, false, 1), VIRT_TRANSIENT);
	assert_int_equal(virt_classify(VIR_ERR_NO_DOMAIN, 0, false, -1), VIRT_TRANSIENT);
	assert_string_equal(virt_result_name(VIRT_GONE), "gone");
	assert_string_equal(virt_event_name(VIRT_EV_METADATA), "metadata-change");
}

static void
test_domain_xml(void **state)
{
	struct virt_domain d;
	struct llcd_err err;
	size_t len;
	char *xml;

	xml = test_read_file(FIX "/domain-running.xml", &len);
	memset(&d, 0, sizeof(d));
	assert_int_equal(virt_parse_domain_xml(xml, len, &d, &err), 0);
	assert_string_equal(d.name, "llcd-fixture");
	assert_string_equal(d.uuid, "3f0c9a64-5d1e-4c6b-9a57-1f2e3d4c5b6a");
	assert_int_equal(d.maxvcpus, 4);
	assert_int_equal(d.nvcpus, 2);
	assert_int_equal(d.topo.sockets, 1);
	assert_int_equal(d.topo.dies, 2);
	assert_int_equal(d.topo.clusters, 0);   /* libvirt 9.0 drops it */
	assert_int_equal(d.topo.cores, 1);
	assert_int_equal(d.topo.threads, 2);
	free(xml);

	xml = test_read_file(FIX "/domain-inactive.xml", &len);
	assert_int_equal(virt_parse_domain_xml(xml, len, &d, &err), 0);
	assert_int_equal(d.maxvcpus, 4);
	free(xml);
}

static void
test_domain_xml_errors(void **state)
{
	struct virt_domain d;
	struct llcd_err err;
	const char *cases[][2] = {
		{ "<domain><vcpu>x</vcpu></domain>", "domain XML: <vcpu> is not a vCPU count" },
		{ "<domain><vcpu current='5'>4</vcpu></domain>", "domain XML: bad <vcpu current=>" },
		{ "<domain><vcpu>4</vcpu><cpu><topology dies='-1'/></cpu></domain>",
		  "domain XML: bad <cpu><topology> attribute" },
		{ "<domain><name>x</name></domain>", "domain XML: no <vcpu>" },
		{ "<network/>", "domain XML: root element is not <domain>" },
		{ "<domain>", "domain XML: malformed XML (line 1): Premature end of data in tag domain line 1" },
		{ "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><domain><name>&e;</name></domain>",
		  "domain XML: a DOCTYPE is not allowed" },
		/* one vCPU limit for every domain XML reader (xmlsafe.h) */
		{ "<domain><vcpu>2049</vcpu></domain>", "domain XML: <vcpu> is not a vCPU count" },
		{ "<domain><vcpu>4</vcpu><cpu><topology sockets='2049'/></cpu></domain>",
		  "domain XML: bad <cpu><topology> attribute" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(virt_parse_domain_xml(cases[i][0], strlen(cases[i][0]), &d, &err), -1);
		assert_string_equal(err.msg, cases[i][1]);
		assert_null(strstr(d.name, "root:"));   /* no external entity */
	}
}

static void
test_qemu_pid(void **state)
{
	const char *uuid = "6e4cbe6a-632d-4eb0-aca8-d444f0be842e";
	const char *proc = LLCD_FIXTURES "/proc/qemu";
	struct llcd_err err;
	int pid;

	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "llcd-rec", uuid, &pid, &err), VIRT_OK);
	assert_int_equal(pid, 2508);
	/* the same process claimed by another domain's pid file */
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "impostor",
	    "00000000-0000-0000-0000-000000000000", &pid, &err), VIRT_GONE);
	assert_int_equal(pid, 0);
	assert_string_equal(err.msg, "pid 2508 from " FIX "/run/impostor.pid is not the QEMU of impostor"
	    " (no -uuid 00000000-0000-0000-0000-000000000000)");
	/* a UUID that is only a prefix of the real one does not match */
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "llcd-rec", "6e4cbe6a", &pid, &err), VIRT_GONE);
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "nosuch", uuid, &pid, &err), VIRT_GONE);
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "dead", uuid, &pid, &err), VIRT_GONE);
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "garbage", uuid, &pid, &err), VIRT_PERMANENT);
	assert_string_equal(err.msg, FIX "/run/garbage.pid: not a pid");
	assert_int_equal(virt_qemu_pid(FIX "/run", proc, "../x", uuid, &pid, &err), VIRT_PERMANENT);
}

/* A daemon in a PID namespace of its own: its QEMU found by -uuid among
 * the real processes under the daemon's root, and only there. */
static void
test_qemu_pid_scan(void **state)
{
	const char *uuid = "0b6c3f57-9d0e-4a4e-9c2e-5b0f0e9d2a11";
	struct llcd_err err;
	pid_t child;
	int pid = -1;

	if ((child = fork()) == 0) {
		/* its command line holds "-uuid UUID" as QEMU's does */
		execl("/bin/sh", "sh", "-c", "sleep 30", "-uuid", uuid, (char *)NULL);
		_exit(127);
	}
	assert_true(child > 0);
	for (int i = 0; i < 100 && pid <= 0; i++) {
		if (virt_qemu_pid_scan("/proc", "/proc/self/root", uuid, &pid, &err) != VIRT_OK)
			usleep(20000);  /* until the exec is done */
	}
	assert_int_equal(pid, child);
	/* the same process is not under another root */
	assert_int_equal(virt_qemu_pid_scan("/proc", "/tmp", uuid, &pid, &err), VIRT_GONE);
	assert_int_equal(pid, 0);
	assert_non_null(strstr(err.msg, "no process with -uuid"));
	/* a prefix of the UUID is not it */
	assert_int_equal(virt_qemu_pid_scan("/proc", "/proc/self/root", "0b6c3f57", &pid, &err), VIRT_GONE);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(virt_qemu_pid_scan("/proc", "/nonexistent", uuid, &pid, &err), VIRT_GONE);
}

static void
test_uuid_key(void **state)
{
	uint64_t a = virt_uuid_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b");
	uint64_t b = virt_uuid_key("6f1c2e3a9b7d4c1e8a2b3c4d5e6f7a8b");
	uint64_t c = virt_uuid_key("6F1C2E3A-9B7D-4C1E-8A2B-3C4D5E6F7A8B");
	uint64_t d = virt_uuid_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8c");

	assert_true(a != 0);
	assert_true(a == b && b == c);
	assert_true(a != d);
	assert_true(virt_uuid_key("00000000-0000-0000-0000-000000000000") != 0);
	assert_int_equal(virt_uuid_key("not-a-uuid"), 0);
	assert_int_equal(virt_uuid_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8"), 0);
	assert_int_equal(virt_uuid_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b0"), 0);
	assert_int_equal(virt_uuid_key(""), 0);
	/* one run of a domain: UUID and QEMU pid */
	assert_true(virt_domain_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", 0) == a);
	assert_true(virt_domain_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", 1234) != a);
	assert_true(virt_domain_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", 1234) ==
	    virt_domain_key("6F1C2E3A9B7D4C1E8A2B3C4D5E6F7A8B", 1234));
	assert_true(virt_domain_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", 1234) !=
	    virt_domain_key("6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", 1235));
	assert_int_equal(virt_domain_key("x", 1), 0);
}

TEST_MAIN(
	cmocka_unit_test(test_classify),
	cmocka_unit_test(test_domain_xml),
	cmocka_unit_test(test_domain_xml_errors),
	cmocka_unit_test(test_qemu_pid),
	cmocka_unit_test(test_qemu_pid_scan),
	cmocka_unit_test(test_uuid_key))
