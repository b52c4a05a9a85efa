// SPDX-License-Identifier: GPL-2.0-or-later
/* test_guest.c - llc-guest's modules on fixtures: the /proc scanner
 * (tests/fixtures/guest-proc/{a,b}), the virtual LLC map (a fake /sys),
 * the JSON writer's escaping, the report line and its bounds, and the
 * in-guest aggregation with a fake sched_setaffinity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaggr.h"
#include "gjson.h"
#include "greport.h"
#include "gscan.h"
#include "gtopo.h"
#include "guestproto.h"
#include "test_main.h"

#define FIX LLCD_FIXTURES "/guest-proc"

static const struct gscan_opts opts = { .hot_share = 0.5, .busy_share = 0.25, .hz = 100 };

static void
test_parse_stat(void **state)
{
	char comm[GSCAN_COMM];
	unsigned long flags;
	uint64_t ticks;
	int cpu;

	assert_int_equal(gscan_parse_stat("7 (a) (b) R 1 7 7 0 -1 4194560 10 0 0 0 40 2 0 0 20 -5 1 0 100 "
	                                  "1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0", comm, &flags, &ticks, &cpu), 0);
	assert_string_equal(comm, "a) (b");
	assert_int_equal(flags, 4194560);
	assert_int_equal(ticks, 42);
	assert_int_equal(cpu, 3);
	/* truncated after stime: no CPU, still usable */
	assert_int_equal(gscan_parse_stat("7 (x) R 1 7 7 0 -1 0 0 0 0 0 5 5", comm, &flags, &ticks, &cpu), 0);
	assert_int_equal(cpu, -1);
	assert_int_equal(ticks, 10);
	assert_int_equal(gscan_parse_stat("7 (x) R 1 7 7", comm, &flags, &ticks, &cpu), -1);
	assert_int_equal(gscan_parse_stat("7 x R 1", comm, &flags, &ticks, &cpu), -1);
	assert_int_equal(gscan_parse_stat("7 (x) R 1 7 7 0 -1 zz", comm, &flags, &ticks, &cpu), -1);
}

static void
test_topo(void **state)
{
	struct gtopo *t = malloc(sizeof(*t));
	struct llcd_err err;
	char list[64];

	assert_int_equal(gtopo_read(t, FIX "/sys", &err), 0);
	assert_int_equal(t->nllc, 2);
	assert_int_equal(t->cache_level, 3);
	assert_int_equal(t->smt, 2);
	assert_int_equal(t->max_cpu, 7);
	cpuset_format(&t->llc[0], list, sizeof(list));
	assert_string_equal(list, "0-3");
	cpuset_format(&t->llc[1], list, sizeof(list));
	assert_string_equal(list, "4-7");
	assert_int_equal(gtopo_llc_of(t, 5), 1);
	assert_int_equal(gtopo_llc_of(t, 8), -1);
	assert_int_equal(gtopo_llc_of(t, -1), -1);

	assert_int_equal(gtopo_read(t, FIX "/sys-nocache", &err), 0);
	assert_int_equal(t->nllc, 1);
	assert_int_equal(t->cache_level, 0);
	assert_int_equal(t->smt, 1);
	cpuset_format(&t->llc[0], list, sizeof(list));
	assert_string_equal(list, "0-3");

	assert_int_equal(gtopo_read(t, FIX "/nonexistent", &err), -1);
	assert_string_equal(err.msg, FIX "/nonexistent/devices/system/cpu/online: No such file or directory");
	free(t);
}

static void
read_pair(struct gscan_snap *a, struct gscan_snap *b)
{
	struct llcd_err err;

	assert_int_equal(gscan_read(a, FIX "/a", 1000000000, &err), 0);
	assert_int_equal(gscan_read(b, FIX "/b", 2000000000, &err), 0);
}

static void
test_scan(void **state)
{
	struct gscan_snap *a = gscan_snap_new(), *b = gscan_snap_new();
	const struct gscan_proc *p;
	struct llcd_err err;

	read_pair(a, b);
	assert_int_equal(a->nprocs, 3);         /* kthreadd skipped */
	assert_int_equal(b->nprocs, 4);
	p = gscan_find(b, 100);
	assert_non_null(p);
	assert_string_equal(p->comm, "spin");
	assert_int_equal(p->nth, 5);
	assert_int_equal(b->threads[p->first + 1].tid, 101);
	assert_int_equal(b->threads[p->first + 1].ticks, 510);
	assert_int_equal(b->threads[p->first + 3].cpu, 4);
	assert_string_equal(gscan_find(b, 300)->comm, "a) (b");
	assert_null(gscan_find(b, 2));
	assert_null(gscan_find(a, 400));
	assert_int_equal(gscan_read(a, FIX "/none", 1, &err), -1);
	assert_string_equal(err.msg, FIX "/none: No such file or directory");
	gscan_snap_free(a);
	gscan_snap_free(b);
}

/* The fixture guest's topology, its two snapshots and their hot list under
 * opts; hot_close() frees them. */
static void
hot_open(struct gscan_snap **a, struct gscan_snap **b, struct gtopo **t, struct gscan_hotlist *h)
{
	struct llcd_err err;

	*a = gscan_snap_new();
	*b = gscan_snap_new();
	*t = malloc(sizeof(**t));
	*h = (struct gscan_hotlist){ 0 };
	assert_int_equal(gtopo_read(*t, FIX "/sys", &err), 0);
	read_pair(*a, *b);
	assert_int_equal(gscan_hot(*a, *b, *t, &opts, h, &err), 0);
}

static void
hot_close(struct gscan_snap *a, struct gscan_snap *b, struct gtopo *t, struct gscan_hotlist *h)
{
	gscan_hotlist_free(h);
	gscan_snap_free(a);
	gscan_snap_free(b);
	free(t);
}

static void
test_hot(void **state)
{
	struct gscan_snap *a = gscan_snap_new(), *b = gscan_snap_new();
	struct gtopo *t = malloc(sizeof(*t));
	struct gscan_hotlist h = { 0 };
	struct gscan_opts o = opts;
	struct llcd_err err;
	char list[64];

	assert_int_equal(gtopo_read(t, FIX "/sys", &err), 0);
	read_pair(a, b);
	assert_int_equal(gscan_hot(a, b, t, &o, &h, &err), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.p[0].comm, "spin");
	assert_int_equal(h.p[0].pid, 100);
	assert_int_equal(h.p[0].nthreads, 5);
	assert_int_equal(h.p[0].busy_threads, 3);
	assert_float_equal(h.p[0].share, 2.9, 1e-9);
	cpuset_format(&h.p[0].vcpus, list, sizeof(list));
	assert_string_equal(list, "0,2,4");
	cpuset_format(&h.p[0].llcs, list, sizeof(list));
	assert_string_equal(list, "0-1");
	assert_int_equal(h.p[0].th[0].tid, 101);        /* busiest first */
	assert_float_equal(h.p[0].th[0].util, 1.0, 1e-9);
	/* a process born inside the window counts from zero */
	assert_string_equal(h.p[1].comm, "new");
	assert_float_equal(h.p[1].share, 1.0, 1e-9);
	cpuset_format(&h.p[1].vcpus, list, sizeof(list));
	assert_string_equal(list, "1,7");

	/* lower thresholds make the two-thread 0.4-CPU process hot too */
	o.hot_share = 0.3;
	o.busy_share = 0.1;
	assert_int_equal(gscan_hot(a, b, t, &o, &h, &err), 0);
	assert_int_equal(h.n, 3);
	assert_string_equal(h.p[2].comm, "a) (b");
	/* a single busy thread is never hot, however busy */
	for (int i = 0; i < h.n; i++)
		assert_int_not_equal(h.p[i].pid, 200);
	/* the same snapshot twice: no time passed, nothing hot */
	assert_int_equal(gscan_hot(b, b, t, &o, &h, &err), 0);
	assert_int_equal(h.n, 0);
	gscan_hotlist_free(&h);
	gscan_snap_free(a);
	gscan_snap_free(b);
	free(t);
}

static void
test_json_escape(void **state)
{
	char buf[256];
	struct gjson j;

	gjson_init(&j, buf, sizeof(buf));
	gjson_str(&j, "a\"b\\c\n\t\x01\x7f\xc3\xa9/");
	assert_false(j.overflow);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\\u00c3\\u00a9/\"");
	/* strict json-c accepts it and gets the bytes back as code points */
	json_tokener *tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *o = json_tokener_parse_ex(tok, buf, (int)strlen(buf));
	assert_non_null(o);
	assert_string_equal(json_object_get_string(o), "a\"b\\c\n\t\x01\x7f\xc3\x83\xc2\xa9/");
	json_object_put(o);
	json_tokener_free(tok);

	/* overflow is sticky and never writes past the buffer */
	gjson_init(&j, buf, 8);
	gjson_str(&j, "abcdefgh");
	assert_true(j.overflow);
	assert_true(strlen(buf) < 8);
	gjson_init(&j, buf, sizeof(buf));
	gjson_num(&j, 1.0 / 0.0, 2);
	gjson_raw(&j, " ");
	gjson_num(&j, 2.345, 2);
	assert_string_equal(buf, "0.00 2.35");
}

static void
test_report_line(void **state)
{
	struct gscan_snap *a, *b;
	struct gtopo *t;
	struct gscan_hotlist h;
	char line[GUESTPROTO_MAX_LINE + 1];
	int omitted, len;

	hot_open(&a, &b, &t, &h);
	len = greport_line(line, sizeof(line), &(struct greport_hdr){ 12.5, 3, 7 }, t, &h, NULL, &omitted);
	assert_string_equal(line,
	    "{\"v\":1,\"t\":12.500,\"seq\":3,\"ncpus\":8,\"nllcs\":2,\"dropped\":7,\"procs\":["
	    "{\"name\":\"spin\",\"pid\":100,\"threads\":5,\"busy_threads\":3,\"cpu_share\":2.90,"
	    "\"vcpus\":[0,2,4],\"llcs\":[0,1]},"
	    "{\"name\":\"new\",\"pid\":400,\"threads\":2,\"busy_threads\":2,\"cpu_share\":1.00,"
	    "\"vcpus\":[1,7],\"llcs\":[0,1]}]}\n");
	assert_int_equal(len, (int)strlen(line));
	assert_int_equal(omitted, 0);

	/* many hot processes with long names and every CPU: at most 16, and the
	 * line never exceeds the bound */
	struct gscan_hotlist big = { .n = 40, .cap = 40, .p = calloc(40, sizeof(struct gscan_hot)) };
	for (int i = 0; i < 40; i++) {
		memset(big.p[i].comm, '"', GSCAN_COMM - 1);
		big.p[i].pid = i + 1;
		cpuset_set_range(&big.p[i].vcpus, 0, i < 5 ? 200 : 3);
	}
	len = greport_line(line, sizeof(line), &(struct greport_hdr){ 1, 1, 0 }, t, &big, NULL, &omitted);
	assert_true(len > 0 && len <= GUESTPROTO_MAX_LINE);
	assert_int_equal(line[len - 1], '\n');
	assert_true(omitted >= 40 - GUESTPROTO_MAX_PROCS);
	json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	json_object *procs;
	assert_true(json_object_object_get_ex(o, "procs", &procs));
	assert_int_equal((int)json_object_array_length(procs) + omitted, 40);
	json_object_put(o);
	free(big.p);
	hot_close(a, b, t, &h);
}

/* ---- aggregation -------------------------------------------------------- */

struct fake_aff {
	int n;
	int tid[64];
	char cpus[64][32];
};

static int
fake_setaff(int tid, const struct cpuset *cpus, void *arg)
{
	struct fake_aff *f = arg;

	if (f->n < 64) {
		f->tid[f->n] = tid;
		cpuset_format(cpus, f->cpus[f->n], sizeof(f->cpus[0]));
		f->n++;
	}
	return 0;
}

static void
test_aggregate(void **state)
{
	struct gscan_snap *a, *b;
	struct gtopo *t;
	struct gscan_hotlist h;
	struct gaggr_opts ao;
	struct gaggr *g;
	struct fake_aff f = { 0 };

	hot_open(&a, &b, &t, &h);
	gaggr_opts_default(&ao, t);
	assert_int_equal(ao.rules.smt, 2);
	assert_false(ao.rules.kernel);
	ao.setaff = fake_setaff;
	ao.setaff_arg = &f;
	ao.rules.aggr_tolerance = 100;          /* no size guard: see below */
	ao.timeout = 2;
	g = gaggr_new(t, &ao);
	assert_int_equal(gaggr_step(g, &h, b), 0);
	/* spin: occupancy LLC0 = 1.0 + 0.9 + 0 (leader) = 1.9, LLC1 = 0.8 + 0.2:
	 * all 5 threads to CPUs 0-3 */
	assert_int_equal(gaggr_confined(g, 100), 0);
	assert_int_equal(f.n, 5 + 2);
	assert_int_equal(f.tid[0], 100);
	assert_string_equal(f.cpus[0], "0-3");
	assert_string_equal(f.cpus[4], "0-3");
	/* new: LLC0 0.5 (CPU 1), LLC1 0.5 (CPU 7): the tie goes to LLC 0 */
	assert_int_equal(gaggr_confined(g, 400), 0);

	/* same period again: threads of spin that ran outside LLC 0 (CPUs 4, 6
	 * in the snapshot) are set again, the others left alone */
	f.n = 0;
	assert_int_equal(gaggr_step(g, &h, b), 0);
	assert_int_equal(gaggr_confined(g, 100), 0);
	assert_int_equal(f.n, 2 + 1);
	assert_int_equal(f.tid[0], 103);
	assert_int_equal(f.tid[1], 104);

	/* not hot any more: released after `timeout` periods */
	struct gscan_hotlist none = { 0 };
	f.n = 0;
	assert_int_equal(gaggr_step(g, &none, b), 0);
	assert_int_equal(f.n, 0);
	assert_int_equal(gaggr_confined(g, 100), 0);
	assert_int_equal(gaggr_step(g, &none, b), 0);
	assert_int_equal(gaggr_confined(g, 100), -1);
	assert_int_equal(f.n, 5 + 2);
	assert_string_equal(f.cpus[0], "0-7");
	gaggr_free(g);

	/* size guard (tolerance 1, SMT2, LLCs of 4 CPUs): 2.9 CPUs in use x 2
	 * > 4: no preference, nothing confined */
	ao.rules.aggr_tolerance = 1;
	f.n = 0;
	g = gaggr_new(t, &ao);
	assert_int_equal(gaggr_step(g, &h, b), 0);
	assert_int_equal(gaggr_confined(g, 100), -1);
	assert_int_equal(gaggr_confined(g, 400), 0);   /* 1.0 CPU x 2 <= 4 fits */
	gaggr_free(g);

	/* dry run: decides, never calls the hook */
	ao.rules.aggr_tolerance = 100;
	ao.dry_run = true;
	f.n = 0;
	g = gaggr_new(t, &ao);
	assert_int_equal(gaggr_step(g, &h, b), 0);
	assert_int_equal(gaggr_confined(g, 100), 0);
	assert_int_equal(f.n, 0);
	gaggr_free(g);
	hot_close(a, b, t, &h);
}

TEST_MAIN(
	cmocka_unit_test(test_parse_stat),
	cmocka_unit_test(test_topo),
	cmocka_unit_test(test_scan),
	cmocka_unit_test(test_hot),
	cmocka_unit_test(test_json_escape),
	cmocka_unit_test(test_report_line),
	cmocka_unit_test(test_aggregate))
