// SPDX-License-Identifier: GPL-2.0-or-later
/* test_guesttopo.c - the guest CPU topology for the shipped host shapes,
 * uneven allocations, refusals, and the check of a running guest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guesttopo.h"
#include "policy.h"
#include "topo_hwloc.h"
#include "test_main.h"

#define HOST_9T24 "pack:1 [numa] l3:8 core:8 pu:2"
#define HOST_GENOA "pack:2 [numa] l3:12 core:8 pu:2"
#define HOST_INTEL "pack:2 [numa] l3:1 core:16 pu:2"
#define HOST_POWER "pack:2 [numa] l3:6 core:1 pu:4"

struct fx {
	struct topo *t;
	struct guesttopo_rec *rec;
	int *slots;
	struct cpuset *pins;
	struct cpuset emu;
	struct guesttopo_check *check;
	struct llcd_err err;
};

static struct topo *
load(const char *spec)
{
	struct llcd_err err;
	struct topo *t = topo_load(spec, &err);
	if (t == NULL)
		fail_msg("%s", err.msg);
	return t;
}

/* A fixture on host for a domain of n vCPUs, for fx_done(). */
static struct fx
fx_init(const char *host, int n)
{
	struct fx f;

	memset(&f, 0, sizeof(f));
	f.t = load(host);
	f.rec = guesttopo_rec_new();
	f.slots = calloc((size_t)n, sizeof(int));
	f.pins = calloc((size_t)n, sizeof(struct cpuset));
	f.check = guesttopo_check_new();
	assert_non_null(f.rec);
	assert_non_null(f.slots);
	assert_non_null(f.pins);
	assert_non_null(f.check);
	return f;
}

static void
fx_done(struct fx f)
{
	guesttopo_rec_free(f.rec);
	guesttopo_check_free(f.check);
	free(f.slots);
	free(f.pins);
	topo_free(f.t);
}

static void
dom_init(struct policy_domain_in *d, uint64_t key, const char *name, int n,
         enum policy_mode mode, enum policy_isolation iso)
{
	memset(d, 0, sizeof(*d));
	d->key = key;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->nvcpus = n;
	d->guest = (struct policy_guest_topo){ n, 1, 1, 1, 1 };
	d->annotated = true;
	policy_annotation_defaults(&d->annot);
	d->annot.mode = mode;
	d->annot.isolation = iso;
}

/* Dry-place a domain alone on the host and compute its recommendation. */
static int
place(struct fx *f, const char *host, int n, enum policy_mode mode, enum policy_isolation iso)
{
	struct policy_host h;
	struct policy_domain_in d;

	*f = fx_init(host, n);
	policy_host_defaults(&h, f->t);
	dom_init(&d, 7, "g", n, mode, iso);
	if (guesttopo_dry_place(&h, &d, NULL, 0, f->slots, f->pins, &f->emu, &f->err) < 0)
		return -1;
	return guesttopo_compute(f->t, &(struct guesttopo_alloc){ n, f->slots, f->pins, &f->emu },
	    f->rec, &f->err);
}

static void
assert_topo(const struct guesttopo_rec *r, int sockets, int dies, int cores, int threads)
{
	assert_int_equal(r->topo.sockets, sockets);
	assert_int_equal(r->topo.dies, dies);
	assert_int_equal(r->topo.clusters, 1);
	assert_int_equal(r->topo.cores, cores);
	assert_int_equal(r->topo.threads, threads);
	assert_int_equal(r->ndies, sockets * dies);
	assert_int_equal(sockets * dies * cores * threads, r->nvcpus);
}

/* A fixture with a domain that fits place()d, and the guest topology it
 * must be given. */
static struct fx
placed(const char *host, int n, enum policy_mode mode, enum policy_isolation iso,
       int sockets, int dies, int cores, int threads)
{
	struct fx f;

	assert_int_equal(place(&f, host, n, mode, iso), 0);
	assert_topo(f.rec, sockets, dies, cores, threads);
	return f;
}

static const char *
set_str(const struct cpuset *s)
{
	static char buf[4][512];
	static int i;
	i = (i + 1) % 4;
	cpuset_format(s, buf[i], sizeof(buf[i]));
	return buf[i];
}

static bool
has_reason(const struct guesttopo_rec *r, const char *needle)
{
	for (int i = 0; i < r->nreasons; i++)
		if (strstr(r->reasons[i], needle))
			return true;
	return false;
}

static void
assert_reason(const struct guesttopo_rec *r, const char *needle)
{
	if (!has_reason(r, needle)) {
		for (int i = 0; i < r->nreasons; i++)
			print_message("reason: %s\n", r->reasons[i]);
		fail_msg("no reason contains '%s'", needle);
	}
}

/* Every guest die lies on exactly the host LLC the recommendation names. */
static void
assert_dies_on_llcs(const struct fx *f)
{
	for (int i = 0; i < f->rec->ndies; i++) {
		const struct guesttopo_die *d = &f->rec->dies[i];
		for (int v = d->first_vcpu; v < d->first_vcpu + d->nvcpus; v++)
			assert_int_equal(topo_llc_of(f->t, f->slots[v]), d->host_llc);
	}
}

/* --- the shipped host shapes ---------------------------------------------- */

static void
test_9t24_128(void **state)
{
	struct fx f = placed(HOST_9T24, 128, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 8, 8, 2);

	assert_string_equal(f.rec->cache_mode, "emulate");
	for (int i = 0; i < 8; i++) {
		assert_int_equal(f.rec->dies[i].first_vcpu, 16 * i);
		assert_int_equal(f.rec->dies[i].nvcpus, 16);
		assert_int_equal(f.rec->dies[i].host_llc, i);
	}
	assert_dies_on_llcs(&f);
	assert_int_equal(f.rec->ncells, 0);
	assert_string_equal(set_str(&f.rec->nodeset), "0");
	/* aggregate: each vCPU pinned to its LLC's share */
	assert_string_equal(set_str(&f.rec->pins[0]), "0-15");
	assert_string_equal(set_str(&f.rec->pins[127]), "112-127");
	assert_string_equal(set_str(&f.rec->emulator), "0-127");
	assert_reason(f.rec, "threads=2: every 2 consecutive vCPUs sit on the 2 sibling PUs of one host core");
	assert_reason(f.rec, "dies: 8 guest dies of 16 vCPUs, each exactly one host LLC's share");
	assert_reason(f.rec, "sockets=1: every vCPU is on host package 0");
	fx_done(f);
}

static void
test_9t24_static_pins(void **state)
{
	struct fx f = placed(HOST_9T24, 16, POLICY_MODE_STATIC, POLICY_ISO_NONE, 1, 1, 8, 2);

	for (int v = 0; v < 16; v++) {
		assert_int_equal(cpuset_count(&f.rec->pins[v]), 1);
		assert_int_equal(cpuset_first(&f.rec->pins[v]), f.slots[v]);
	}
	fx_done(f);
}

static void
test_genoa_64(void **state)
{
	struct fx f = placed(HOST_GENOA, 64, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 4, 8, 2);

	assert_int_equal(f.rec->ncells, 0);
	assert_string_equal(set_str(&f.rec->nodeset), "0");
	assert_dies_on_llcs(&f);
	assert_reason(f.rec, "numa: every vCPU is on host NUMA node 0: no guest NUMA cells");
	fx_done(f);
}

/* 256 vCPUs do not fit one socket (192 PUs): the engine takes the 16
 * largest free LLCs in order, 12 on socket 0 and 4 on socket 1. */
static void
test_genoa_256(void **state)
{
	struct fx f = placed(HOST_GENOA, 256, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 4, 4, 8, 2);

	assert_dies_on_llcs(&f);
	assert_int_equal(f.rec->ncells, 2);
	assert_int_equal(f.rec->cells[0].host_node, 0);
	assert_int_equal(f.rec->cells[1].host_node, 1);
	assert_string_equal(set_str(&f.rec->cells[0].vcpus), "0-191");
	assert_string_equal(set_str(&f.rec->cells[1].vcpus), "192-255");
	assert_string_equal(set_str(&f.rec->nodeset), "0-1");
	assert_reason(f.rec, "sockets=4: the vCPUs span 2 host packages unevenly (12+4 guest dies); "
	    "4 guest sockets of 4 dies keep every guest socket inside one host package");
	assert_reason(f.rec, "numa: the vCPUs sit on host NUMA nodes 0 (192 vCPUs), 1 (64 vCPUs): 2 guest cells");

	uint64_t mem[2];
	assert_int_equal(guesttopo_cell_memory(f.rec, 64ull << 20, mem, &f.err), 0);
	assert_int_equal(mem[0], 48ull << 20);
	assert_int_equal(mem[1], 16ull << 20);
	fx_done(f);
}

/* With a 64-vCPU domain already on socket 0, a 256-vCPU domain gets 8
 * LLCs on each socket: 2 guest sockets, one per host package. */
static void
test_genoa_256_beside_another(void **state)
{
	struct fx f = fx_init(HOST_GENOA, 256);
	struct policy_host h;
	struct policy_domain_in other, d;
	struct policy_vcpu_sample s[64];
	struct cpuset pin[64];

	policy_host_defaults(&h, f.t);
	dom_init(&other, 1, "small", 64, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	memset(s, 0, sizeof(s));
	memset(pin, 0, sizeof(pin));
	for (int v = 0; v < 64; v++) {
		s[v].last_cpu = -1;
		cpuset_set_range(&pin[v], v / 16 * 16, v / 16 * 16 + 15);
		s[v].pinned = &pin[v];
	}
	other.vcpus = s;
	dom_init(&d, 2, "big", 256, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	assert_int_equal(guesttopo_dry_place(&h, &d, &other, 1, f.slots, f.pins, &f.emu, &f.err), 0);
	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 256, f.slots, f.pins, &f.emu },
	    f.rec, &f.err), 0);
	assert_topo(f.rec, 2, 8, 8, 2);
	assert_dies_on_llcs(&f);
	assert_int_equal(f.rec->dies[0].host_llc, 4);   /* LLCs 0-3 are taken */
	assert_int_equal(f.rec->ncells, 2);
	assert_string_equal(set_str(&f.rec->cells[0].vcpus), "0-127");
	assert_string_equal(set_str(&f.rec->cells[1].vcpus), "128-255");
	assert_reason(f.rec, "sockets=2: one guest socket per host package used (8 dies each)");
	fx_done(f);
}

static void
test_intel_2llc(void **state)
{
	/* 16 vCPUs: half of one LLC, one die */
	struct fx f = placed(HOST_INTEL, 16, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 1, 8, 2);

	assert_int_equal(f.rec->ncells, 0);
	fx_done(f);
	/* the whole host: one die per socket, two cells */
	f = placed(HOST_INTEL, 64, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 2, 1, 16, 2);
	assert_dies_on_llcs(&f);
	assert_int_equal(f.rec->ncells, 2);
	assert_string_equal(set_str(&f.rec->cells[0].vcpus), "0-31");
	assert_string_equal(set_str(&f.rec->cells[1].vcpus), "32-63");
	fx_done(f);
}

static void
test_power(void **state)
{
	struct fx f = placed(HOST_POWER, 16, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 4, 1, 4);

	assert_dies_on_llcs(&f);
	assert_reason(f.rec, "threads=4: every 4 consecutive vCPUs sit on the 4 sibling PUs of one host core");
	fx_done(f);
	f = placed(HOST_POWER, 48, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 2, 6, 1, 4);
	assert_int_equal(f.rec->ncells, 2);
	fx_done(f);
}

/* --- uneven and odd allocations ------------------------------------------- */

static void
test_uneven_engine(void **state)
{
	/* 20 vCPUs on 8-PU LLCs: 8+8+4 -> dies of 4 */
	struct fx f = placed("pack:1 [numa] l3:4 core:4 pu:2", 20, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE,
	    1, 5, 2, 2);

	assert_dies_on_llcs(&f);
	assert_int_equal(f.rec->dies[0].host_llc, 0);
	assert_int_equal(f.rec->dies[1].host_llc, 0);
	assert_int_equal(f.rec->dies[4].host_llc, 2);
	assert_reason(f.rec, "dies: the allocation is uneven across host LLCs (8+8+4 vCPUs on LLCs 0,1,2): "
	    "guest dies of 4 vCPUs, the largest size that divides every LLC's share, so that no guest "
	    "die spans two host LLCs; 5 dies, so some host LLCs hold several guest dies");
	fx_done(f);
}

static void
test_uneven_intel_sockets(void **state)
{

	/* 48 on 2 x 32-PU LLCs: 32+16 -> 3 dies of 16; 2+1 dies over the
	 * packages -> 3 guest sockets */
	struct fx f = placed(HOST_INTEL, 48, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 3, 1, 8, 2);

	assert_dies_on_llcs(&f);
	assert_reason(f.rec, "sockets=3: the vCPUs span 2 host packages unevenly (2+1 guest dies); "
	    "3 guest sockets of 1 die keep every guest socket inside one host package");
	fx_done(f);
}

static void
test_uneven_hand(void **state)
{
	struct fx f = fx_init(HOST_9T24, 16);
	int slots[16];

	/* 12 vCPUs on LLC 0 (PUs 0-11), 4 on LLC 1 (PUs 16-19) */
	for (int v = 0; v < 12; v++)
		slots[v] = v;
	for (int v = 12; v < 16; v++)
		slots[v] = 16 + v - 12;
	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 16, slots, NULL, NULL },
	    f.rec, &f.err), 0);
	assert_topo(f.rec, 1, 4, 2, 2);
	assert_int_equal(f.rec->dies[2].host_llc, 0);
	assert_int_equal(f.rec->dies[3].host_llc, 1);
	/* without pins each vCPU is pinned to its slot PU */
	assert_string_equal(set_str(&f.rec->pins[13]), "17");
	assert_string_equal(set_str(&f.rec->emulator), "0-11,16-19");
	fx_done(f);
}

static void
test_split_llc_ranges(void **state)
{
	struct fx f = fx_init(HOST_9T24, 8);
	int slots[8] = { 0, 1, 2, 3, 16, 17, 4, 5 };

	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 8, slots, NULL, NULL },
	    f.rec, &f.err), 0);
	assert_topo(f.rec, 1, 4, 1, 2);
	assert_reason(f.rec, "host LLC 0 holds two separate vCPU ranges (0-3 and 6-7): the guest sees "
	    "them as two L3 domains");
	fx_done(f);
}

/* Linux numbering (sibling = cpu + 64): the engine's shared-pool fill takes
 * PUs by number, so vCPU pairs are not siblings and threads drops to 1;
 * isolated domains get whole cores and keep threads=2. */
static void
test_linux_numbering(void **state)
{
	const char *host = "pack:1 [numa] l3:8 core:8 pu:2(indexes=2*64:1*2)";

	/* siblings are 64 apart: the engine still pairs vCPUs on one core */
	struct fx f = placed(host, 16, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 1, 8, 2);

	assert_reason(f.rec, "(vCPUs 0-1 on PUs 0,64 of core 0)");
	fx_done(f);
	f = placed(host, 16, POLICY_MODE_AGGREGATE, POLICY_ISO_CORE, 1, 1, 8, 2);
	assert_reason(f.rec, "(vCPUs 0-1 on PUs 0,64 of core 0)");
	fx_done(f);
}

static void
test_threads_one(void **state)
{
	int shared[4] = { 0, 0, 2, 3 };

	/* no SMT on the host */
	struct fx f = placed("pack:1 [numa] l3:2 core:4 pu:1", 8, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE,
	    1, 2, 4, 1);

	assert_reason(f.rec, "threads=1: the host has no SMT");
	fx_done(f);
	/* an odd vCPU count */
	f = placed(HOST_9T24, 7, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE, 1, 1, 7, 1);
	assert_reason(f.rec, "threads=1: 7 vCPUs is not a multiple of the host SMT width 2");
	fx_done(f);
	/* overcommit: two vCPUs on one PU */
	f = fx_init(HOST_9T24, 4);
	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 4, shared, NULL, NULL },
	    f.rec, &f.err), 0);
	assert_int_equal(f.rec->topo.threads, 1);
	assert_reason(f.rec, "threads=1: vCPUs 0 and 1 share host PU 0 (overcommit), not a pair of sibling PUs");
	fx_done(f);
}

/* Applying the recommendation and placing again gives the same answer. */
static void
test_fixed_point(void **state)
{
	static const char *const hosts[] = { HOST_9T24, HOST_GENOA, HOST_INTEL, HOST_POWER };
	static const int sizes[] = { 8, 24, 64, 96, 128 };

	for (size_t h = 0; h < 4; h++)
		for (size_t s = 0; s < 5; s++) {
			struct fx f;
			struct policy_host ph;
			struct policy_domain_in d;
			int n = sizes[s];
			if (place(&f, hosts[h], n, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE) < 0) {
				fx_done(f);
				continue;       /* does not fit this host */
			}
			struct policy_guest_topo first = f.rec->topo;
			policy_host_defaults(&ph, f.t);
			dom_init(&d, 7, "g", n, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
			d.guest = first;
			assert_int_equal(guesttopo_dry_place(&ph, &d, NULL, 0, f.slots, f.pins, &f.emu, &f.err), 0);
			assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ n, f.slots, f.pins,
			    &f.emu }, f.rec, &f.err), 0);
			assert_memory_equal(&first, &f.rec->topo, sizeof(first));
			fx_done(f);
		}
}

/* --- errors --------------------------------------------------------------- */

static void
test_errors(void **state)
{
	struct fx f = fx_init("pack:1 [numa] l3:2 core:2 pu:2", 2);
	int slots[2] = { 0, 999 };
	struct cpuset pins[2];

	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 2, slots, NULL, NULL },
	    f.rec, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: vCPU 1: slot 999 is not a PU of the host (0-7)");
	slots[1] = 1;
	cpuset_zero(&pins[0]);
	cpuset_set(&pins[0], 0);
	cpuset_zero(&pins[1]);
	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 2, slots, pins, NULL },
	    f.rec, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: vCPU 1: pin [] is empty or not within the host's PUs");
	assert_int_equal(guesttopo_compute(f.t, &(struct guesttopo_alloc){ 0, slots, NULL, NULL },
	    f.rec, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: 0 vCPUs (allowed 1-2048)");
	fx_done(f);

	/* the engine refuses: the reason comes through */
	struct policy_host h;
	struct policy_domain_in d;
	f = fx_init("pack:1 [numa] l3:2 core:2 pu:2", 16);
	policy_host_defaults(&h, f.t);
	dom_init(&d, 3, "big", 16, POLICY_MODE_AGGREGATE, POLICY_ISO_NONE);
	assert_int_equal(guesttopo_dry_place(&h, &d, NULL, 0, f.slots, f.pins, &f.emu, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: llcd cannot place 'big' on this host: needs 16 vCPU "
	    "slots in the shared pool (overcommit 1); only 8 free");
	fx_done(f);

	uint64_t mem[2];
	struct guesttopo_rec r;
	struct guesttopo_cell cells[2];
	memset(&r, 0, sizeof(r));
	memset(cells, 0, sizeof(cells));
	r.nvcpus = 2;
	r.ncells = 2;
	r.cells = cells;
	cells[0].nvcpus = cells[1].nvcpus = 1;
	assert_int_equal(guesttopo_cell_memory(&r, 1024, mem, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: 1024 KiB of memory cannot give 2 NUMA cells 1 MiB each");
	assert_int_equal(guesttopo_cell_memory(&r, 3 * 1024 + 5, mem, &f.err), 0);
	assert_int_equal(mem[0], 1024);
	assert_int_equal(mem[1], 2 * 1024 + 5);
}

static void
test_format(void **state)
{
	struct fx f;
	char buf[8192];

	assert_int_equal(place(&f, "pack:2 [numa] l3:1 core:2 pu:2", 8, POLICY_MODE_AGGREGATE,
	    POLICY_ISO_NONE), 0);
	assert_int_equal(guesttopo_format(f.t, f.rec, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "topology: sockets=2 dies=1 cores=2 threads=2 (8 vCPUs)\n"));
	assert_non_null(strstr(buf, "die 1    socket 1, vCPUs 4-7 -> host LLC 1 (package 1), pins [4-7]\n"));
	assert_non_null(strstr(buf, "cell 1   vCPUs 4-7 -> host node 1\n"));
	assert_non_null(strstr(buf, "numatune: nodeset 0-1\n"));
	assert_int_equal(guesttopo_format(f.t, f.rec, buf, 40), -1);
	fx_done(f);
}

/* --- check ---------------------------------------------------------------- */

static void
test_check_agrees(void **state)
{
	struct fx f;

	assert_int_equal(place(&f, HOST_9T24, 32, POLICY_MODE_STATIC, POLICY_ISO_NONE), 0);
	assert_int_equal(guesttopo_check(f.t, &f.rec->topo, 32, f.rec->pins, 0, f.check, &f.err), 0);
	assert_int_equal(f.check->n, 0);
	guesttopo_check_free(NULL);
	fx_done(f);
}

static void
test_check_die_split(void **state)
{
	struct fx f = fx_init(HOST_9T24, 32);
	struct policy_guest_topo one_die = { 1, 1, 1, 16, 2 };

	for (int v = 0; v < 32; v++) {
		cpuset_zero(&f.pins[v]);
		cpuset_set(&f.pins[v], v);
	}
	assert_int_equal(guesttopo_check(f.t, &one_die, 32, f.pins, 0, f.check, &f.err), 1);
	assert_int_equal(f.check->issues[0].kind, GUESTTOPO_DIE_SPLIT);
	assert_string_equal(f.check->issues[0].msg, "guest die 0 (socket 0, vCPUs 0-31) is pinned across 2 "
	    "host LLCs (0-1, PUs 0-31): the guest believes these vCPUs share one L3");
	assert_string_equal(guesttopo_issue_name(f.check->issues[0].kind), "die-split");

	/* unpinned vCPUs reach every LLC (16 split dies, and SMT siblings
	 * that may run apart); a cap keeps the list short */
	struct policy_guest_topo dies = { 1, 16, 1, 1, 2 };
	for (int v = 0; v < 32; v++)
		f.pins[v] = f.t->all;
	assert_int_equal(guesttopo_check(f.t, &dies, 32, f.pins, 3, f.check, &f.err), 17);
	assert_int_equal(f.check->n, 3);
	assert_int_equal(f.check->total, 17);
	assert_int_equal(f.check->issues[2].kind, GUESTTOPO_DIE_SPLIT);
	fx_done(f);
}

static void
test_check_smt(void **state)
{
	struct fx f = fx_init(HOST_9T24, 4);
	struct policy_guest_topo g = { 1, 1, 1, 2, 2 };

	/* vCPUs 0,1 on PUs 0,2 (cores 0 and 1); vCPUs 2,3 on siblings 4,5 */
	int pu[4] = { 0, 2, 4, 5 };
	for (int v = 0; v < 4; v++) {
		cpuset_zero(&f.pins[v]);
		cpuset_set(&f.pins[v], pu[v]);
	}
	assert_int_equal(guesttopo_check(f.t, &g, 4, f.pins, 0, f.check, &f.err), 1);
	assert_int_equal(f.check->issues[0].kind, GUESTTOPO_SMT_SPLIT);
	assert_int_equal(f.check->notes, 0);
	assert_string_equal(f.check->issues[0].msg, "guest SMT siblings 0-1 (die 0, core 0) are pinned to "
	    "different host cores: vCPU 0 on PU 0 (core 0), vCPU 1 on PU 2 (core 1)");

	/* LLC-wide pins: siblings may run apart; one summary */
	for (int v = 0; v < 4; v++) {
		cpuset_zero(&f.pins[v]);
		cpuset_set_range(&f.pins[v], 0, 15);
	}
	assert_int_equal(guesttopo_check(f.t, &g, 4, f.pins, 0, f.check, &f.err), 1);
	assert_int_equal(f.check->issues[0].kind, GUESTTOPO_SMT_LOOSE);
	assert_int_equal(f.check->notes, 1);
	assert_string_equal(f.check->issues[0].msg, "2 of 2 guest SMT sibling groups have pins spanning "
	    "several host cores (e.g. vCPUs 0-1 on PUs 0-15): the host may run siblings on different "
	    "cores; mode=\"static\" pins each vCPU to its PU");

	/* unknown pins are skipped */
	for (int v = 0; v < 4; v++)
		cpuset_zero(&f.pins[v]);
	assert_int_equal(guesttopo_check(f.t, &g, 4, f.pins, 0, f.check, &f.err), 0);
	fx_done(f);
}

static void
test_check_bad_topology(void **state)
{
	struct fx f = fx_init(HOST_9T24, 8);
	struct policy_guest_topo g = { 1, 2, 1, 2, 1 };

	memset(f.pins, 0, 8 * sizeof(*f.pins));
	assert_int_equal(guesttopo_check(f.t, &g, 8, f.pins, 0, f.check, &f.err), 1);
	assert_int_equal(f.check->issues[0].kind, GUESTTOPO_BAD_TOPOLOGY);
	assert_string_equal(f.check->issues[0].msg, "guest topology sockets=1 dies=2 clusters=1 cores=2 "
	    "threads=1 does not describe the domain's 8 vCPUs");
	assert_int_equal(guesttopo_check(f.t, &g, 0, f.pins, 0, f.check, &f.err), -1);
	assert_string_equal(f.err.msg, "guesttopo: 0 vCPUs (allowed 1-2048)");
	fx_done(f);
}

static void
test_guest_position(void **state)
{
	/* 8 vCPUs: sockets=1 dies=2 cores=2 threads=2, as QEMU numbers them
	 * (research/real-stack.md section 4.1: core-id counts within a die) */
	struct policy_guest_topo g = { 1, 2, 1, 2, 2 };
	struct guesttopo_pos p;
	static const int want[8][3] = {        /* die, core, thread */
		{ 0, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 }, { 0, 1, 1 },
		{ 1, 0, 0 }, { 1, 0, 1 }, { 1, 1, 0 }, { 1, 1, 1 },
	};

	for (int v = 0; v < 8; v++) {
		guesttopo_position(&g, v, &p);
		assert_int_equal(p.socket, 0);
		assert_int_equal(p.cluster, 0);
		assert_int_equal(p.die, want[v][0]);
		assert_int_equal(p.core, want[v][1]);
		assert_int_equal(p.thread, want[v][2]);
	}
	/* 2 sockets of 2 cores */
	struct policy_guest_topo g2 = { 2, 1, 1, 2, 1 };
	guesttopo_position(&g2, 3, &p);
	assert_int_equal(p.socket, 1);
	assert_int_equal(p.core, 1);
	assert_int_equal(p.thread, 0);
}

TEST_MAIN(
	cmocka_unit_test(test_9t24_128),
	cmocka_unit_test(test_9t24_static_pins),
	cmocka_unit_test(test_genoa_64),
	cmocka_unit_test(test_genoa_256),
	cmocka_unit_test(test_genoa_256_beside_another),
	cmocka_unit_test(test_intel_2llc),
	cmocka_unit_test(test_power),
	cmocka_unit_test(test_uneven_engine),
	cmocka_unit_test(test_uneven_intel_sockets),
	cmocka_unit_test(test_uneven_hand),
	cmocka_unit_test(test_split_llc_ranges),
	cmocka_unit_test(test_linux_numbering),
	cmocka_unit_test(test_threads_one),
	cmocka_unit_test(test_fixed_point),
	cmocka_unit_test(test_errors),
	cmocka_unit_test(test_format),
	cmocka_unit_test(test_check_agrees),
	cmocka_unit_test(test_check_die_split),
	cmocka_unit_test(test_check_smt),
	cmocka_unit_test(test_check_bad_topology),
	cmocka_unit_test(test_guest_position))
