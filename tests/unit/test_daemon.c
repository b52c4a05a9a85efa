/* test_daemon.c - llcd's core on the simulated back-end: a topology swap
 * (what CPU hotplug does) keeps valid pins and refuses a configuration
 * that no longer fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "daemon.h"
#include "simbackend.h"
#include "topo_hwloc.h"

static void
test_topology_swap(void **state)
{
	struct llcd_err err;
	struct config cfg;
	struct daemon_backend be;
	struct simbe *s = simbe_new(LLCD_SRC "/sim/scenarios/xiangshan-8ccx.json", &err);

	assert_non_null(s);
	simbe_backend(s, &be);
	config_defaults(&cfg);
	struct daemon *d = daemon_new(&cfg, NULL, simbe_topo(s), &be, &err);
	assert_non_null(d);
	uint64_t now = 1000000000ull;
	int before = 0;
	for (int i = 0; i < 80; i++, now += 100000000ull) {
		assert_int_equal(daemon_step(d, now, &err), 0);
		FILE *f = tmpfile();
		char line[1024];
		daemon_print_plan(d, f);
		rewind(f);
		while (fgets(line, sizeof(line), f))
			before += strstr(line, "\"action\":\"pin-vcpu\"") != NULL;
		fclose(f);
	}
	assert_true(before >= 8);       /* the busy group was aggregated */
	/* the same host, re-read: a new topology object */
	struct topo *t2 = topo_load("pack:1 [numa] l3:8 core:8 pu:2", &err);
	assert_non_null(t2);
	assert_int_equal(daemon_set_topology(d, t2, &err), 0);
	assert_int_equal(daemon_step(d, now, &err), 0);
	/* re-placed with what was valid kept: no vCPU moved */
	FILE *f = tmpfile();
	daemon_print_plan(d, f);
	rewind(f);
	char line[1024];
	int pins = 0;
	while (fgets(line, sizeof(line), f))
		pins += strstr(line, "\"action\":\"pin-vcpu\"") != NULL;
	fclose(f);
	assert_int_equal(pins, 0);
	daemon_free(d);
	/* a host without CPU 0 cannot keep "reserved-cpus 0" */
	snprintf(cfg.reserved, sizeof(cfg.reserved), "0");
	d = daemon_new(&cfg, NULL, simbe_topo(s), &be, &err);
	assert_non_null(d);
	struct topo *t3 = topo_load("pack:1 l3:1 core:1 pu:1(indexes=5)", &err);
	assert_non_null(t3);            /* a host whose only CPU is CPU 5 */
	assert_int_equal(daemon_set_topology(d, t3, &err), -1);
	assert_non_null(strstr(err.msg, "reserved-cpus: 0 names CPUs this host does not have"));
	topo_free(t3);
	daemon_free(d);
	topo_free(t2);
	simbe_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology_swap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
