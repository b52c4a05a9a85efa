// SPDX-License-Identifier: GPL-2.0-or-later
/* pin_calls.c - what one libvirt vCPU pin call costs llcd (virt_pin_vcpu),
 * on a private libvirtd (testsupport/lvd.h: the real daemon in session
 * mode, as nobody) with two real TCG QEMU domains of N vCPUs started
 * paused (their vCPU threads exist; no guest runs).
 *
 * Two ways, side by side in each round (order alternating):
 *   run     every vCPU of one domain pinned in a row, as a placement does:
 *           virt.c's handle cache hits, one round trip per pin
 *   lookup  the same number of pins alternating between the two domains:
 *           every pin looks its domain up first (virDomainLookupByUUID-
 *           String), two round trips per pin, as every pin was before the
 *           cache
 * Prints ms per pin and per 128 pins for both and the ratio lookup/run.
 * Session mode has no cgroups (libvirt pins with sched_setaffinity only),
 * so the server's share of a pin is smaller than under qemu:///system and
 * the ratio is an upper bound for the cache's effect there.
 *
 * usage: bench_pin_calls [--vcpus N] [--rounds R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "cpuset.h"
#include "log.h"
#include "lvd.h"
#include "virt.h"

static int
define_start(virConnectPtr c, const char *name, int n, char *uuid)
{
	char xml[1024];
	virDomainPtr d;

	snprintf(xml, sizeof(xml),
	    "<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory><vcpu>%d</vcpu>"
	    "<os><type arch='x86_64' machine='pc'>hvm</type></os>"
	    "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>", name, n);
	if ((d = virDomainDefineXML(c, xml)) == NULL || virDomainGetUUIDString(d, uuid) < 0 ||
	    virDomainCreateWithFlags(d, VIR_DOMAIN_START_PAUSED) < 0) {
		virErrorPtr e = virGetLastError();
		fprintf(stderr, "bench_pin_calls: domain %s: %s\n", name, e && e->message ? e->message : "?");
		if (d)
			virDomainFree(d);
		return -1;
	}
	virDomainFree(d);
	return 0;
}

int
main(int argc, char **argv)
{
	int n = 64, rounds = 5, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), rc = 1;
	char ua[VIRT_UUID_LEN] = "", ub[VIRT_UUID_LEN] = "";
	struct lvd lvd;
	struct virt *v = NULL;
	virConnectPtr raw = NULL;
	struct llcd_err err;
	double run_ns = 0, look_ns = 0;
	long pins_run = 0, pins_look = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--vcpus") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_pin_calls [--vcpus N] [--rounds R]\n");
			return 2;
		}
	}
	if (n < 1 || n > 255 || rounds < 1) {
		fprintf(stderr, "bench_pin_calls: --vcpus 1..255, --rounds >= 1\n");
		return 2;
	}
	log_init(true, 0);
	memset(&lvd, 0, sizeof(lvd));
	if (lvd_start(&lvd) < 0)
		return 1;
	struct virt_config cfg = { .uri = lvd.uri, .pid_dir = lvd.pid_dir };
	if ((raw = virConnectOpen(lvd.uri)) == NULL || define_start(raw, "llcd-bench-pin-a", n, ua) < 0 ||
	    define_start(raw, "llcd-bench-pin-b", n, ub) < 0)
		goto out;
	if ((v = virt_new(&cfg, &err)) == NULL || virt_connect(v, llcd_mono_ms(), &err) < 0) {
		fprintf(stderr, "bench_pin_calls: %s\n", err.msg);
		goto out;
	}
	for (int r = 0; r < rounds; r++) {
		struct cpuset cpus;
		cpuset_zero(&cpus);
		cpuset_set(&cpus, r % ncpu);    /* a real change every round */
		for (int k = 0; k < 2; k++) {
			bool run = (k == 0) == (r % 2 == 0);
			uint64_t t0 = llcd_mono_ns();
			for (int i = 0; i < n; i++) {
				const char *u = run ? ua : i % 2 ? ub : ua;
				if (virt_pin_vcpu(v, u, "bench", run ? i : i / 2, 0, &cpus,
				    &err) != VIRT_OK) {
					fprintf(stderr, "bench_pin_calls: %s\n", err.msg);
					goto out;
				}
			}
			uint64_t dt = llcd_mono_ns() - t0;
			if (run) {
				run_ns += (double)dt;
				pins_run += n;
			} else {
				look_ns += (double)dt;
				pins_look += n;
			}
		}
	}
	double pr = run_ns / (double)pins_run / 1e6, pl = look_ns / (double)pins_look / 1e6;
	printf("vcpus %d, rounds %d, host CPUs %d (private session libvirtd)\n", n, rounds, ncpu);
	printf("run (handle cached):     %.3f ms per pin, %.0f ms per 128 pins\n", pr, pr * 128);
	printf("lookup (every pin):      %.3f ms per pin, %.0f ms per 128 pins\n", pl, pl * 128);
	printf("ratio lookup/run:        %.2f\n", pl / pr);
	rc = 0;
out:
	virt_free(v);
	if (raw) {
		const char *names[] = { "llcd-bench-pin-a", "llcd-bench-pin-b" };
		for (int i = 0; i < 2; i++) {
			virDomainPtr d = virDomainLookupByName(raw, names[i]);
			if (d) {
				virDomainDestroy(d);
				virDomainUndefine(d);
				virDomainFree(d);
			}
		}
		virConnectClose(raw);
	}
	lvd_cleanup(&lvd);
	return rc;
}
