// SPDX-License-Identifier: GPL-2.0-or-later
/* test_resctrl.c - the resctrl monitoring reader (agent/drivers/resctrl.c) against
 * a FIXTURE TREE of the kernel's documented layout
 * (Documentation/arch/x86/resctrl.rst: info/L3_MON/mon_features,
 * mon_groups/NAME/{tasks,mon_data/mon_L3_XX/{mbm_total_bytes,llc_occupancy}}).
 *
 * FAKE SEAM: this machine has no resctrl (no RDT/PQoS monitoring in the
 * VM), so the root directory parameter of resctrl_open() points at a tree
 * in /tmp, and the test plays the kernel's part: after llcd's mkdir it
 * makes the group's tasks file and mon_data counters, and it checks what
 * llcd wrote to tasks. On a host with resctrl the same calls go to
 * /sys/fs/resctrl (RESCTRL_ROOT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resctrl.h"
#include "test_main.h"

static char root[64];

static void
put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
dir(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static char *
slurp(const char *rel)
{
	static char buf[4096];
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The root of a resctrl mount with L3 monitoring, as resctrl.rst shows it
 * on a two-L3 host (mon_L3_00, mon_L3_01). */
static int
setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/test_resctrl.XXXXXX");
	assert_non_null(mkdtemp(root));
	dir("info");
	dir("info/L3_MON");
	put("info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
	put("info/L3_MON/num_rmids", "256\n");
	dir("mon_groups");
	put("tasks", "1\n2\n");
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* The kernel's part of mkdir mon_groups/NAME: a tasks file and a counter
 * directory per L3 domain. */
static void
kernel_populates(const char *name, const char *total0, const char *occ0, const char *total1,
                 const char *occ1)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "mon_groups/%s/tasks", name);
	put(rel, "");
	snprintf(rel, sizeof(rel), "mon_groups/%s/mon_data", name);
	dir(rel);
	const char *v[2][2] = { { total0, occ0 }, { total1, occ1 } };
	for (int l = 0; l < 2; l++) {
		snprintf(rel, sizeof(rel), "mon_groups/%s/mon_data/mon_L3_%02d", name, l);
		dir(rel);
		snprintf(rel, sizeof(rel), "mon_groups/%s/mon_data/mon_L3_%02d/mbm_total_bytes", name, l);
		put(rel, v[l][0]);
		snprintf(rel, sizeof(rel), "mon_groups/%s/mon_data/mon_L3_%02d/llc_occupancy", name, l);
		put(rel, v[l][1]);
		snprintf(rel, sizeof(rel), "mon_groups/%s/mon_data/mon_L3_%02d/mbm_local_bytes", name, l);
		put(rel, "0\n");
	}
}

static void
test_group_create_tasks_read(void **state)
{
	struct llcd_err err;
	struct resctrl_sample s;
	struct resctrl *r = resctrl_open(root, &err);
	char name[RESCTRL_NAME_MAX];
	struct stat st;

	if (r == NULL)
		fail_msg("resctrl_open: %s", err.msg);
	assert_true(resctrl_has_occupancy(r));
	resctrl_group_name("web-1", name, sizeof(name));
	assert_string_equal(name, "llcd-web-1");
	assert_int_equal(resctrl_group_create(r, name, &err), 0);
	assert_int_equal(stat(strcat(strcpy((char[512]){0}, root), "/mon_groups/llcd-web-1"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* a second create reuses the group (llcd restarted) */
	assert_int_equal(resctrl_group_create(r, name, &err), 0);

	kernel_populates(name, "1000000\n", "4194304\n", "500000\n", "1048576\n");
	int tids[] = { 4242, 0, 4243 };
	assert_int_equal(resctrl_group_add_tasks(r, name, tids, 3, &err), 2);
	assert_string_equal(slurp("mon_groups/llcd-web-1/tasks"), "4242\n4243\n");

	assert_int_equal(resctrl_group_read(r, name, &s, &err), 0);
	assert_int_equal(s.ndomains, 2);
	assert_int_equal(s.nread, 2);
	assert_int_equal(s.mbm_total_bytes, 1500000);
	assert_int_equal(s.llc_occupancy_bytes, 5242880);

	/* an L3 domain without a counter ("Unavailable") is left out */
	put("mon_groups/llcd-web-1/mon_data/mon_L3_01/mbm_total_bytes", "Unavailable\n");
	assert_int_equal(resctrl_group_read(r, name, &s, &err), 0);
	assert_int_equal(s.nread, 1);
	assert_int_equal(s.mbm_total_bytes, 1000000);
	/* none has a number: an error that says so */
	put("mon_groups/llcd-web-1/mon_data/mon_L3_00/mbm_total_bytes", "Error\n");
	assert_int_equal(resctrl_group_read(r, name, &s, &err), -1);
	assert_string_equal(err.msg, "resctrl: group 'llcd-web-1': no L3 domain's mbm_total_bytes is a number "
	    "(Unavailable or Error in all 2)");
	/* garbage is not a number either */
	put("mon_groups/llcd-web-1/mon_data/mon_L3_00/mbm_total_bytes", "12abc\n");
	assert_int_equal(resctrl_group_read(r, name, &s, &err), -1);
	resctrl_free(r);
}

static void
test_not_mounted(void **state)
{
	struct llcd_err err;
	char p[128];

	snprintf(p, sizeof(p), "%s/nothing", root);
	assert_null(resctrl_open(p, &err));
	assert_non_null(strstr(err.msg, "no resctrl L3 monitoring at "));
	assert_non_null(strstr(err.msg, "No such file or directory); mount -t resctrl"));
	/* monitoring without bandwidth (a CPU with CMT but no MBM) */
	put("info/L3_MON/mon_features", "llc_occupancy\n");
	assert_null(resctrl_open(root, &err));
	assert_string_equal(strstr(err.msg, "monitors"), "monitors no memory bandwidth (mon_features lists no "
	    "mbm_total_bytes)");
	/* bandwidth without occupancy is enough */
	put("info/L3_MON/mon_features", "mbm_total_bytes\n");
	struct resctrl *r = resctrl_open(root, &err);
	assert_non_null(r);
	assert_false(resctrl_has_occupancy(r));
	resctrl_free(r);
	resctrl_free(NULL);
}

static void
test_names_and_errors(void **state)
{
	struct llcd_err err;
	struct resctrl_sample s;
	char name[RESCTRL_NAME_MAX];
	struct resctrl *r = resctrl_open(root, &err);

	assert_non_null(r);
	resctrl_group_name("../a b/c", name, sizeof(name));
	assert_string_equal(name, "llcd-.._a_b_c");
	char longname[200];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	resctrl_group_name(longname, name, sizeof(name));
	assert_int_equal(strlen(name), RESCTRL_NAME_MAX - 1);
	assert_int_equal(resctrl_group_create(r, "..", &err), -1);
	assert_string_equal(err.msg, "resctrl: bad group name '..'");
	assert_int_equal(resctrl_group_create(r, "a/b", &err), -1);
	/* a group the kernel never populated */
	assert_int_equal(resctrl_group_create(r, "llcd-empty", &err), 0);
	assert_int_equal(resctrl_group_read(r, "llcd-empty", &s, &err), -1);
	assert_non_null(strstr(err.msg, "/mon_groups/llcd-empty/mon_data: No such file or directory"));
	int tid = 1;
	assert_int_equal(resctrl_group_add_tasks(r, "llcd-empty", &tid, 1, &err), -1);
	assert_non_null(strstr(err.msg, "resctrl: open "));
	assert_int_equal(resctrl_group_remove(r, "llcd-empty", &err), 0);
	assert_int_equal(resctrl_group_remove(r, "llcd-empty", &err), 0);      /* gone already */
	resctrl_free(r);
}

TEST_MAIN(
	cmocka_unit_test_setup_teardown(test_group_create_tasks_read, setup, teardown),
	cmocka_unit_test_setup_teardown(test_not_mounted, setup, teardown),
	cmocka_unit_test_setup_teardown(test_names_and_errors, setup, teardown))
