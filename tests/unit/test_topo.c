// SPDX-License-Identifier: GPL-2.0-or-later
/* test_topo.c - the topology model built through real hwloc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "topo_hwloc.h"
#include "test_main.h"

static void
test_epyc_9t24_like(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 [numa] l3:8 core:8 pu:2", &err);
	char buf[256];

	assert_non_null(t);
	assert_int_equal(topo_count(t, TOPO_PACKAGE), 1);
	assert_int_equal(topo_count(t, TOPO_NUMA), 1);
	assert_int_equal(topo_count(t, TOPO_LLC), 8);
	assert_int_equal(topo_count(t, TOPO_CORE), 64);
	assert_int_equal(topo_count(t, TOPO_PU), 128);
	assert_int_equal(t->smt, 2);
	assert_int_equal(topo_llc_weight(t, 3), 16);
	assert_int_equal(topo_llc_of(t, 17), 1);
	assert_int_equal(topo_core_of(t, 17), 8);
	assert_int_equal(topo_llc_of(t, 128), -1);
	/* tree: machine > package > numa > llc > core > pu */
	const struct topo_node *llc = topo_get(t, TOPO_LLC, 2);
	assert_int_equal(llc->parent->type, TOPO_NUMA);
	assert_int_equal(llc->nchildren, 8);
	assert_int_equal(llc->children[0]->type, TOPO_CORE);
	assert_int_equal(llc->children[0]->nchildren, 2);
	assert_int_equal(topo_summary(t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1 package, 1 NUMA node, 8 LLCs x 16 PUs, 64 cores, 128 PUs, SMT2");
	topo_free(t);
}

static void
test_two_socket_linux_numbering(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:2 [numa] l3:8 core:8 pu:2(indexes=2*128:1*2)", &err);

	assert_non_null(t);
	assert_int_equal(topo_count(t, TOPO_LLC), 16);
	assert_int_equal(topo_count(t, TOPO_NUMA), 2);
	/* SMT sibling of CPU 0 is CPU 128, both in LLC 0 */
	assert_int_equal(topo_core_of(t, 0), topo_core_of(t, 128));
	assert_int_equal(topo_llc_of(t, 136), 1);
	assert_int_equal(t->llc_numa[9], 1);
	assert_int_equal(t->pu_pkg[200], 1);
	topo_free(t);
}

static void
test_power_like_and_no_smt(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:2 [numa] l3:7 core:1 pu:4", &err);

	assert_non_null(t);
	assert_int_equal(topo_llc_weight(t, 0), 4);
	assert_int_equal(t->smt, 4);
	topo_free(t);
	t = topo_load("pack:1 l3:2 core:4 pu:1", &err);
	assert_non_null(t);
	assert_int_equal(t->smt, 1);
	assert_int_equal(topo_count(t, TOPO_NUMA), 1);
	topo_free(t);
}

static void
test_bad_source(void **state)
{
	struct llcd_err err;

	assert_null(topo_load("pack:banana", &err));
	assert_non_null(strstr(err.msg, "pack:banana"));
	assert_null(topo_load("/nonexistent/host.xml", &err));
	assert_non_null(strstr(err.msg, "host.xml"));
}

static void
test_live_host(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load(NULL, &err);

	assert_non_null(t);
	assert_true(topo_count(t, TOPO_PU) >= 1);
	assert_true(topo_count(t, TOPO_LLC) >= 1);
	topo_free(t);
}

TEST_MAIN(
	cmocka_unit_test(test_epyc_9t24_like),
	cmocka_unit_test(test_two_socket_linux_numbering),
	cmocka_unit_test(test_power_like_and_no_smt),
	cmocka_unit_test(test_bad_source),
	cmocka_unit_test(test_live_host))
