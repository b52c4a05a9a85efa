// SPDX-License-Identifier: GPL-2.0-or-later
/* test_virt_session.c - virt.c against a real libvirtd and a real QEMU.
 *
 * Runs a private, unprivileged libvirtd (lvd.h: session mode as nobody,
 * own socket and directories) so that it can kill and restart the daemon
 * without disturbing the host's qemu:///system. The domain is a real TCG
 * QEMU with no disk and no kernel (SeaBIOS finds nothing to boot and
 * idles): enough for vCPU threads, the pid file, pinning and events; it
 * needs no guest OS, so this is not an e2e test.
 *
 * In order: connect and list; define -> lifecycle event, listing with
 * topology; annotation set/get/remove -> metadata-change events; pinning
 * a stopped domain -> gone; the guest channel added to a stopped domain's
 * definition once (by name, its directory created); start -> pid file, vCPU threads by name,
 * vcpupin/emulatorpin seen in the kernel's affinity, tunable event,
 * current pins, permanent errors logged with domain/vCPU/TID; the live
 * back-end makes no pin call for a pin the kernel and libvirt already have; vCPU
 * hot-plug -> a new "CPU 2/TCG" thread; kill -9 libvirtd -> disconnected
 * event; restart it -> reconnect with backoff, listing and metadata events
 * work again, the domain kept running with its pins; destroy -> gone. */
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
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "log.h"
#include "live.h"
#include "lvd.h"
#include "procstat.h"
#include "topo_hwloc.h"
#include "virt.h"

#define DOMNAME "llcd-virt-test"

static const char domxml[] =
	"<domain type='qemu'>"
	"<name>" DOMNAME "</name>"
	"<memory unit='MiB'>64</memory>"
	"<vcpu current='2'>3</vcpu>"
	"<iothreads>1</iothreads>"
	"<os><type arch='x86_64' machine='pc'>hvm</type></os>"
	"<cpu><topology sockets='1' dies='1' cores='3' threads='1'/></cpu>"
	"<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices>"
	"</domain>";

struct ctx {
	struct lvd lvd;
	struct virt *v;
	virConnectPtr raw;              /* the test's own connection */
	char uuid[VIRT_UUID_LEN];
	int pid;
	char logs[8192];
};

static struct ctx C;

static void
sink(int pri, const char *msg, void *arg)
{
	size_t l = strlen(C.logs);

	if (l + strlen(msg) + 2 < sizeof(C.logs)) {
		memcpy(C.logs + l, msg, strlen(msg));
		C.logs[l + strlen(msg)] = '\n';
		C.logs[l + strlen(msg) + 1] = '\0';
	}
	fprintf(stderr, "  log: %s\n", msg);
}

/* Run the agent side (maintain + poll + take events) until an event of
 * type for uuid ("" = any) arrives; false after timeout_ms. */
static bool
wait_event(enum virt_event_type type, const char *uuid, int timeout_ms,
    struct virt_event *out)
{
	uint64_t end = llcd_mono_ms() + (uint64_t)timeout_ms;
	struct pollfd pfd = { .fd = virt_event_fd(C.v), .events = POLLIN };
	struct virt_event ev;
	struct llcd_err err;

	while (llcd_mono_ms() < end) {
		virt_maintain(C.v, llcd_mono_ms(), &err);
		while (virt_next_event(C.v, &ev)) {
			fprintf(stderr, "  event: %s %s %d/%d %s\n", virt_event_name(ev.type),
			    ev.name, ev.event, ev.detail, ev.text);
			if (ev.type == type && (uuid[0] == '\0' || strcmp(uuid, ev.uuid) == 0)) {
				if (out != NULL)
					*out = ev;
				return true;
			}
		}
		poll(&pfd, 1, 50);
	}
	return false;
}

static int
setup(void **state)
{
	memset(&C, 0, sizeof(C));
	log_init(true, 1);
	log_set_sink(sink, NULL);
	if (lvd_start(&C.lvd) < 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	if (C.raw != NULL)
		virConnectClose(C.raw);
	virt_free(C.v);
	lvd_cleanup(&C.lvd);
	log_set_sink(NULL, NULL);
	return 0;
}

static void
test_connect_define_list(void **state)
{
	struct virt_config cfg = { .uri = C.lvd.uri, .pid_dir = C.lvd.pid_dir,
	    .backoff_min_ms = 200, .backoff_max_ms = 1600 };
	struct virt_domain *doms;
	struct virt_event ev;
	struct llcd_err err;
	virDomainPtr dom;
	int n;

	assert_non_null(C.v = virt_new(&cfg, &err));
	assert_int_equal(virt_connect(C.v, llcd_mono_ms(), &err), 0);
	assert_true(virt_connected(C.v));
	assert_int_equal(virt_list_domains(C.v, &doms, &n, &err), 0);
	assert_int_equal(n, 0);
	free(doms);

	assert_non_null(C.raw = virConnectOpen(C.lvd.uri));
	assert_non_null(dom = virDomainDefineXML(C.raw, domxml));
	assert_int_equal(virDomainGetUUIDString(dom, C.uuid), 0);
	virDomainFree(dom);
	assert_true(wait_event(VIRT_EV_LIFECYCLE, C.uuid, 5000, &ev));
	assert_int_equal(ev.event, VIR_DOMAIN_EVENT_DEFINED);
	assert_string_equal(ev.name, DOMNAME);

	assert_int_equal(virt_list_domains(C.v, &doms, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(doms[0].name, DOMNAME);
	assert_string_equal(doms[0].uuid, C.uuid);
	assert_int_equal(doms[0].id, -1);
	assert_int_equal(doms[0].state, VIR_DOMAIN_SHUTOFF);
	assert_false(doms[0].active);
	assert_true(doms[0].persistent);
	assert_int_equal(doms[0].pid, 0);
	assert_int_equal(doms[0].nvcpus, 2);
	assert_int_equal(doms[0].maxvcpus, 3);
	assert_int_equal(doms[0].topo.sockets, 1);
	assert_int_equal(doms[0].topo.dies, 1);
	assert_int_equal(doms[0].topo.cores, 3);
	assert_int_equal(doms[0].topo.threads, 1);
	free(doms);
}

static void
test_annotation(void **state)
{
	struct virt_event ev;
	struct llcd_err err;
	char *xml;

	assert_int_equal(virt_get_annotation(C.v, C.uuid, &xml, &err), VIRT_OK);
	assert_null(xml);
	assert_int_equal(virt_set_annotation(C.v, C.uuid, "<llc-policy mode=\"pack\"/>", &err), VIRT_OK);
	assert_true(wait_event(VIRT_EV_METADATA, C.uuid, 5000, &ev));
	assert_int_equal(ev.event, VIR_DOMAIN_METADATA_ELEMENT);
	assert_string_equal(ev.text, VIRT_POLICY_NS);
	assert_int_equal(virt_get_annotation(C.v, C.uuid, &xml, &err), VIRT_OK);
	assert_non_null(xml);
	assert_string_equal(xml, "<llc-policy mode=\"pack\"/>");
	free(xml);
	assert_int_equal(virt_set_annotation(C.v, C.uuid, NULL, &err), VIRT_OK);
	assert_true(wait_event(VIRT_EV_METADATA, C.uuid, 5000, &ev));
	assert_int_equal(virt_get_annotation(C.v, C.uuid, &xml, &err), VIRT_OK);
	assert_null(xml);
	/* an unknown domain */
	assert_int_equal(virt_get_annotation(C.v, "00000000-0000-0000-0000-000000000001", &xml, &err), VIRT_GONE);
}

static void
test_pin_stopped(void **state)
{
	struct cpuset one;
	struct llcd_err err;

	cpuset_zero(&one);
	cpuset_set(&one, 0);
	C.logs[0] = '\0';
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, 4242, &one, &err), VIRT_GONE);
	assert_non_null(strstr(err.msg, "[gone]"));
	assert_non_null(strstr(C.logs, "domain " DOMNAME " vcpu 0 tid 4242: vcpupin 0 failed: "));
	assert_int_equal(virt_pin_emulator(C.v, C.uuid, DOMNAME, &one, &err), VIRT_GONE);
	assert_int_equal(virt_pin_vcpu(C.v, "00000000-0000-0000-0000-000000000001", "nosuch", 0, 1, &one, &err), VIRT_GONE);
}

static int
find_vcpu_tid(int vcpu, int *nvcpu)
{
	struct procstat *ps;
	struct procstat_task *t;
	struct llcd_err err;
	int n, i, tid = -1;

	ps = procstat_new(NULL, &err);
	assert_non_null(ps);
	assert_int_equal(procstat_list_tasks(ps, C.pid, &t, &n, &err), PROCSTAT_OK);
	*nvcpu = 0;
	for (i = 0; i < n; i++)
		if (t[i].kind == PROCSTAT_VCPU) {
			(*nvcpu)++;
			if (t[i].index == vcpu) {
				tid = t[i].tid;
				assert_int_equal(strncmp(t[i].comm, "CPU ", 4), 0);
				assert_non_null(strstr(t[i].comm, "/TCG"));
			}
		}
	free(t);
	procstat_free(ps);
	return tid;
}

static void
test_running_pin(void **state)
{
	struct virt_domain d;
	struct virt_event ev;
	struct cpuset one, zero, got, pins[3], emu, all;
	struct llcd_err err;
	virDomainPtr dom;
	int tid0, tid1, nv, n, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0;

	assert_non_null(dom = virDomainLookupByUUIDString(C.raw, C.uuid));
	t0 = llcd_mono_ms();
	assert_int_equal(virDomainCreate(dom), 0);
	assert_true(wait_event(VIRT_EV_LIFECYCLE, C.uuid, 10000, &ev));
	while (ev.event != VIR_DOMAIN_EVENT_STARTED)
		assert_true(wait_event(VIRT_EV_LIFECYCLE, C.uuid, 10000, &ev));
	print_message("domain started in %llu ms\n", (unsigned long long)(llcd_mono_ms() - t0));

	assert_int_equal(virt_domain_get(C.v, C.uuid, &d, &err), VIRT_OK);
	assert_true(d.active);
	assert_true(d.id > 0);
	assert_true(d.pid > 0);
	C.pid = d.pid;
	tid0 = find_vcpu_tid(0, &nv);
	tid1 = find_vcpu_tid(1, &nv);
	assert_int_equal(nv, 2);
	assert_true(tid0 > 0 && tid1 > 0);

	cpuset_zero(&all);
	cpuset_set_range(&all, 0, ncpu - 1);
	cpuset_zero(&one);
	cpuset_set(&one, ncpu - 1);
	cpuset_zero(&zero);
	cpuset_set(&zero, 0);
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 1, tid1, &one, &err), VIRT_OK);
	assert_int_equal(procstat_affinity(tid1, &got, &err), PROCSTAT_OK);
	assert_true(cpuset_equal(&got, &one));
	assert_true(wait_event(VIRT_EV_TUNABLE, C.uuid, 5000, &ev));
	assert_non_null(strstr(ev.text, "cputune.vcpupin1="));
	assert_int_equal(virt_pin_emulator(C.v, C.uuid, DOMNAME, &zero, &err), VIRT_OK);
	assert_int_equal(procstat_affinity(C.pid, &got, &err), PROCSTAT_OK);
	assert_true(cpuset_equal(&got, &zero));
	/* the I/O thread follows the emulator pin */
	{
		struct procstat *ps = procstat_new(NULL, &err);
		struct procstat_task *t;
		int nt, io = 0;
		assert_non_null(ps);
		assert_int_equal(procstat_list_tasks(ps, C.pid, &t, &nt, &err), PROCSTAT_OK);
		for (int i = 0; i < nt; i++)
			if (t[i].kind == PROCSTAT_IOTHREAD) {
				io++;
				assert_int_equal(procstat_affinity(t[i].tid, &got, &err), PROCSTAT_OK);
				assert_true(cpuset_equal(&got, &zero));
			}
		assert_int_equal(io, 1);
		free(t);
		procstat_free(ps);
	}
	assert_true(wait_event(VIRT_EV_TUNABLE, C.uuid, 5000, &ev));
	assert_non_null(strstr(ev.text, "cputune.emulatorpin="));

	assert_int_equal(virt_get_pins(C.v, C.uuid, pins, 3, &n, &emu, &err), VIRT_OK);
	assert_true(n >= 2);
	assert_true(cpuset_equal(&pins[1], &one));
	assert_true(cpuset_equal(&pins[0], &all));
	assert_true(cpuset_equal(&emu, &zero));

	/* permanent: a vCPU the domain does not have, a CPU the host lacks;
	 * each logged with domain, vCPU and TID */
	C.logs[0] = '\0';
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 7, 0, &one, &err), VIRT_PERMANENT);
	assert_non_null(strstr(C.logs, "domain " DOMNAME " vcpu 7: vcpupin"));
	cpuset_zero(&got);
	cpuset_set(&got, 1000);
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, tid0, &got, &err), VIRT_PERMANENT);
	assert_non_null(strstr(err.msg, "[permanent]"));
	print_message("CPU 1000: %s\n", err.msg);
	assert_non_null(strstr(C.logs, "domain " DOMNAME " vcpu 0 tid "));
	virDomainFree(dom);
}

/* llcctl guest-channel --add through the live back-end on a domain that
 * is defined and not running (looked up by name): the channel goes into
 * the persistent definition once, its directory is created with its
 * parents, a second --add changes nothing, an unknown name is "no domain". */
/* A /proc-sampled live back-end on the test's libvirtd with no state file
 * and no counters; guest channel sockets in chan_dir (NULL: none). */
static struct live *
session_live(const struct topo *t, const char *chan_dir)
{
	struct live_config cfg;
	struct llcd_err err;
	struct live *l;

	memset(&cfg, 0, sizeof(cfg));
	cfg.uri = C.lvd.uri;
	cfg.pid_dir = C.lvd.pid_dir;
	cfg.topo = t;
	cfg.state_dir = "";
	cfg.counters = -1;
	cfg.sampler = AGENT_SAMPLER_PROC;
	cfg.guest_channel_dir = chan_dir;
	if ((l = live_new(&cfg, &err)) == NULL)
		fail_msg("live_new: %s", err.msg);
	return l;
}

static void
test_channel_stopped(void **state)
{
	static const char xml[] =
		"<domain type='qemu'><name>llcd-virt-test-ch</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>"
		"<os><type arch='x86_64' machine='pc'>hvm</type></os>"
		"<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>";
	struct llcd_err err;
	struct topo *t;
	struct live *l;
	virDomainPtr dom;
	char dir[128], chdir_[160], path[256], path2[256], *def;
	struct stat st;

	snprintf(dir, sizeof(dir), "/tmp/llcd-chan-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(chdir_, sizeof(chdir_), "%s/run/llcd/channels", dir);
	assert_non_null(dom = virDomainDefineXML(C.raw, xml));
	assert_non_null(t = topo_load(NULL, &err));
	l = session_live(t, chdir_);
	assert_int_equal(live_query.add_guest_channel(l, 0, "llcd-virt-test-ch", false, path, sizeof(path), &err), 0);
	assert_int_equal(stat(chdir_, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(strncmp(path, chdir_, strlen(chdir_)), 0);
	assert_int_equal(live_query.add_guest_channel(l, 0, "llcd-virt-test-ch", false, path2, sizeof(path2), &err), 1);
	assert_string_equal(path, path2);
	assert_non_null(def = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE));
	char *p = strstr(def, "name='org.llcd.guest.0'");
	assert_non_null(p);
	assert_null(strstr(p + 1, "name='org.llcd.guest.0'"));
	free(def);
	assert_int_equal(live_query.add_guest_channel(l, 0, "llcd-virt-test-none", false, path, sizeof(path), &err), -2);
	assert_non_null(strstr(err.msg, "no domain 'llcd-virt-test-none' is defined"));
	live_free(l);
	topo_free(t);
	assert_int_equal(virDomainUndefine(dom), 0);
	virDomainFree(dom);
	for (char *q = chdir_ + strlen(chdir_); q > chdir_ + strlen(dir); q--)
		if (*q == '/' || q == chdir_ + strlen(chdir_)) {
			*q = '\0';
			rmdir(chdir_);
		}
	rmdir(dir);
}

/* The live back-end on the running domain: a pin that the kernel and
 * libvirt already have (vCPU 1 on the last CPU, the emulator on CPU 0,
 * from test_running_pin; at start they would come from <vcpupin> and
 * <emulatorpin>) is not made again; another one is. */
static void
test_live_in_place(void **state)
{
	struct live_stats ls;
	struct llcd_err err;
	struct cpuset one, zero, all, got;
	struct agent_obs *o;
	struct topo *t;
	struct live *l;
	uint64_t key;
	int tid0, nv, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	assert_non_null(t = topo_load(NULL, &err));
	l = session_live(t, NULL);
	for (int i = 0; i < 100 && live_find(l, DOMNAME, &key) < 0; i++) {
		live_handle_events(l, llcd_mono_ns(), &err);
		usleep(50000);
	}
	assert_int_equal(live_find(l, DOMNAME, &key), 0);
	assert_non_null(o = agent_obs_new());
	assert_int_equal(agent_obs_begin(o, ncpu, &err), 0);
	assert_int_equal(live_agent_ops.observe(l, llcd_mono_ns(), o, &err), 0);   /* finds the threads */
	cpuset_zero(&one);
	cpuset_set(&one, ncpu - 1);
	cpuset_zero(&zero);
	cpuset_set(&zero, 0);
	cpuset_zero(&all);
	cpuset_set_range(&all, 0, ncpu - 1);
	struct policy_action a = { .type = POLICY_ACT_PIN_VCPU, .key = key, .vcpu = 1, .llc = -1, .cpus = one };

	assert_int_equal(live_agent_ops.apply(l, &a, &err), AGENT_OK);
	live_stats(l, &ls);
	assert_int_equal(ls.pin_calls, 0);
	assert_int_equal(ls.pins_in_place, 1);
	a.type = POLICY_ACT_PIN_EMULATOR;
	a.vcpu = -1;
	a.cpus = zero;
	assert_int_equal(live_agent_ops.apply(l, &a, &err), AGENT_OK);
	live_stats(l, &ls);
	assert_int_equal(ls.pin_calls, 0);
	assert_int_equal(ls.pins_in_place, 2);
	/* vCPU 0 is on every CPU: pinned for real */
	a.type = POLICY_ACT_PIN_VCPU;
	a.vcpu = 0;
	assert_int_equal(live_agent_ops.apply(l, &a, &err), AGENT_OK);
	live_stats(l, &ls);
	assert_int_equal(ls.pin_calls, 1);
	assert_int_equal(ls.pins_in_place, 2);
	tid0 = find_vcpu_tid(0, &nv);
	assert_int_equal(procstat_affinity(tid0, &got, &err), PROCSTAT_OK);
	assert_true(cpuset_equal(&got, &zero));
	/* back where test_running_pin left it */
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, tid0, &all, &err), VIRT_OK);
	agent_obs_free(o);
	live_free(l);
	topo_free(t);
}

static void
test_hotplug(void **state)
{
	virDomainPtr dom;
	int nv, tid2, i;

	assert_non_null(dom = virDomainLookupByUUIDString(C.raw, C.uuid));
	if (virDomainSetVcpusFlags(dom, 3, VIR_DOMAIN_AFFECT_LIVE) < 0) {
		virErrorPtr e = virGetLastError();
		fail_msg("vCPU hot-plug: %s", e ? e->message : "?");
	}
	for (i = 0; i < 50 && (tid2 = find_vcpu_tid(2, &nv)) < 0; i++)
		usleep(100000);
	assert_true(tid2 > 0);
	assert_int_equal(nv, 3);
	virDomainFree(dom);
}

static void
test_restart_libvirtd(void **state)
{
	struct virt_domain *doms;
	struct virt_event ev;
	struct cpuset pins[3], emu, one;
	struct llcd_err err;
	int n, nv, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0, t1;

	t0 = llcd_mono_ms();
	lvd_kill(&C.lvd, SIGKILL);
	assert_true(wait_event(VIRT_EV_DISCONNECTED, "", 10000, &ev));
	print_message("close callback after %llu ms (reason %d: %s)\n",
	    (unsigned long long)(llcd_mono_ms() - t0), ev.event, ev.text);
	assert_false(virt_connected(C.v));
	/* while libvirtd is down: calls fail as transient, attempts back off */
	assert_int_equal(virt_list_domains(C.v, &doms, &n, &err), -1);
	cpuset_zero(&one);
	cpuset_set(&one, 0);
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, 0, &one, &err), VIRT_TRANSIENT);
	assert_false(wait_event(VIRT_EV_RECONNECTED, "", 1000, &ev));
	assert_true(virt_retry_at_ms(C.v) > 0);

	t1 = llcd_mono_ms();
	assert_int_equal(lvd_start(&C.lvd), 0);
	assert_true(wait_event(VIRT_EV_RECONNECTED, "", 10000, &ev));
	print_message("reconnected %llu ms after libvirtd was started again (%llu ms after the kill)\n",
	    (unsigned long long)(llcd_mono_ms() - t1), (unsigned long long)(llcd_mono_ms() - t0));
	assert_true(virt_connected(C.v));
	assert_int_equal(virt_reconnects(C.v), 1);

	/* listing works again; the domain kept running with its pins */
	assert_int_equal(virt_list_domains(C.v, &doms, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(doms[0].active);
	assert_int_equal(doms[0].pid, C.pid);
	free(doms);
	assert_true(find_vcpu_tid(0, &nv) > 0);
	assert_int_equal(virt_get_pins(C.v, C.uuid, pins, 3, &n, &emu, &err), VIRT_OK);
	cpuset_zero(&one);
	cpuset_set(&one, ncpu - 1);
	assert_true(cpuset_equal(&pins[1], &one));

	/* events were re-registered */
	assert_int_equal(virt_set_annotation(C.v, C.uuid, "<llc-policy mode=\"spread\"/>", &err), VIRT_OK);
	assert_true(wait_event(VIRT_EV_METADATA, C.uuid, 5000, &ev));
	/* the raw connection of the test died with the daemon */
	virConnectClose(C.raw);
	assert_non_null(C.raw = virConnectOpen(C.lvd.uri));
}

static void
test_destroy_gone(void **state)
{
	struct virt_event ev;
	struct cpuset one;
	struct llcd_err err;
	virDomainPtr dom;
	int tid0, nv;

	tid0 = find_vcpu_tid(0, &nv);
	assert_non_null(dom = virDomainLookupByUUIDString(C.raw, C.uuid));
	assert_int_equal(virDomainDestroy(dom), 0);
	do
		assert_true(wait_event(VIRT_EV_LIFECYCLE, C.uuid, 5000, &ev));
	while (ev.event != VIR_DOMAIN_EVENT_STOPPED);
	cpuset_zero(&one);
	cpuset_set(&one, 0);
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, tid0, &one, &err), VIRT_GONE);
	print_message("pin after destroy: %s\n", err.msg);
	assert_int_equal(virDomainUndefine(dom), 0);
	virDomainFree(dom);
	do
		assert_true(wait_event(VIRT_EV_LIFECYCLE, C.uuid, 5000, &ev));
	while (ev.event != VIR_DOMAIN_EVENT_UNDEFINED);
	assert_int_equal(virt_pin_vcpu(C.v, C.uuid, DOMNAME, 0, tid0, &one, &err), VIRT_GONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_define_list),
		cmocka_unit_test(test_annotation),
		cmocka_unit_test(test_pin_stopped),
		cmocka_unit_test(test_channel_stopped),
		cmocka_unit_test(test_running_pin),
		cmocka_unit_test(test_live_in_place),
		cmocka_unit_test(test_hotplug),
		cmocka_unit_test(test_restart_libvirtd),
		cmocka_unit_test(test_destroy_gone),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
