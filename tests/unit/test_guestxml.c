// SPDX-License-Identifier: GPL-2.0-or-later
/* test_guestxml.c - writing a guest topology recommendation into domain
 * XML: golden outputs, byte-for-byte preservation of everything else,
 * refusals with their exact messages, and the line diff.
 *
 * LLCD_REGENERATE=1 rewrites the golden files under
 * tests/fixtures/domains/guesttopo/ (review the diff before committing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_file.h"

#include "annotation_xml.h"
#include "guesttopo.h"
#include "guestxml.h"
#include "policy.h"
#include "topo_hwloc.h"
#include "test_main.h"

#define DOMAINS LLCD_FIXTURES "/domains"
#define GOLDEN DOMAINS "/guesttopo"


/* The recommendation llc-guesttopo would make for this domain XML on host
 * (mode from its annotation, else aggregate). */
static struct guesttopo_rec *
recommend(const char *host, const char *xml, size_t len)
{
	struct llcd_err err;
	struct topo *t = topo_load(host, &err);
	struct guesttopo_rec *rec = guesttopo_rec_new();
	struct guestxml_domain d;
	struct policy_domain_in dom;
	struct policy_host h;
	bool found;

	if (t == NULL)
		fail_msg("%s", err.msg);
	assert_int_equal(guestxml_read(xml, len, &d, &err), 0);
	memset(&dom, 0, sizeof(dom));
	dom.key = 1;
	dom.nvcpus = d.vcpus;
	dom.guest = d.topo;
	dom.annotated = true;
	assert_int_equal(annot_from_domain_xml(xml, len, NULL, &found, &dom.annot, &err), 0);
	if (!found || dom.annot.mode == POLICY_MODE_NONE)
		dom.annot.mode = POLICY_MODE_AGGREGATE;
	int *slots = calloc((size_t)d.vcpus, sizeof(int));
	struct cpuset *pins = calloc((size_t)d.vcpus, sizeof(struct cpuset)), emu;
	policy_host_defaults(&h, t);
	if (guesttopo_dry_place(&h, &dom, NULL, 0, slots, pins, &emu, &err) < 0 ||
	    guesttopo_compute(t, &(struct guesttopo_alloc){ d.vcpus, slots, pins, &emu }, rec, &err) < 0)
		fail_msg("%s", err.msg);
	free(slots);
	free(pins);
	topo_free(t);
	return rec;
}

/* Lines the writer owns (or may create), and <cpu .../> opened to <cpu ...>. */
static bool
ours(const char *line, size_t n)
{
	static const char *const prefixes[] = {
		"<topology ", "<cache ", "<vcpupin ", "<emulatorpin ", "<numa>", "</numa>", "<cell ",
		"<numatune>", "</numatune>", "<memory mode=", "<memnode ", "<cputune>", "</cputune>",
		"<cputune/>", "<cpu>", "</cpu>", NULL,
	};
	while (n > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	for (const char *const *p = prefixes; *p; p++)
		if (n >= strlen(*p) && memcmp(line, *p, strlen(*p)) == 0)
			return true;
	return false;
}

static char *
untouched(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	assert_non_null(out);
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - s) : len;
		if (!ours(s + i, e - i)) {
			memcpy(out + o, s + i, e - i);
			o += e - i;
			/* <cpu .../> and <cpu ...> compare equal */
			if (o >= 2 && out[o - 2] == '/' && out[o - 1] == '>' && strstr(s + i, "<cpu ") &&
			    strstr(s + i, "<cpu ") < s + e) {
				out[o - 2] = '>';
				o--;
			}
			out[o++] = '\n';
		}
		i = e + 1;
	}
	out[o] = '\0';
	return out;
}

static void
check_golden(const char *host, const char *in, const char *golden, unsigned parts)
{
	char path[512];
	size_t len, glen, olen, o2len;
	struct llcd_err err;
	char *xml, *out = NULL, *out2 = NULL;

	snprintf(path, sizeof(path), "%s", in);
	xml = test_read_file(path, &len);
	struct guesttopo_rec *rec = recommend(host, xml, len);
	if (guestxml_apply(xml, len, rec, parts, &out, &olen, &err) < 0)
		fail_msg("%s: %s", in, err.msg);
	assert_int_equal(strlen(out), olen);
	if (getenv("LLCD_REGENERATE")) {
		FILE *f = fopen(golden, "wb");
		assert_non_null(f);
		fwrite(out, 1, olen, f);
		fclose(f);
	}
	char *want = test_read_file(golden, &glen);
	if (olen != glen || memcmp(out, want, glen) != 0)
		fail_msg("%s differs from %s:\n%s", in, golden, out);
	/* everything but our elements is byte for byte the input */
	char *a = untouched(xml, len), *b = untouched(out, olen);
	if (strcmp(a, b) != 0)
		fail_msg("%s: untouched regions changed:\n--- in\n%s\n--- out\n%s", in, a, b);
	/* applying again changes nothing */
	assert_int_equal(guestxml_apply(out, olen, rec, parts, &out2, &o2len, &err), 0);
	assert_int_equal(o2len, olen);
	assert_memory_equal(out2, out, olen);
	free(a);
	free(b);
	free(want);
	free(out);
	free(out2);
	free(xml);
	guesttopo_rec_free(rec);
}

/* Indentation longer than the editor's buffers (fuzz_guestxml found one
 * of 129 tabs): applying twice gives the same XML, the new lines are not
 * moved by a cut indentation read back as another. */
static void
test_deep_indentation(void **state)
{
	char pad[301], xml[4096];
	struct guesttopo_cell cells[2];
	struct cpuset pins[4];
	size_t olen, o2len;
	struct llcd_err err;
	char *out = NULL, *out2 = NULL;

	(void)state;
	for (int n = 100; n <= 300; n += 25) {
		memset(pad, '\t', (size_t)n);
		pad[n] = '\0';
		snprintf(xml, sizeof(xml),
		    "<domain type='kvm'>\n%s<name>deep</name>\n%s<memory unit='MiB'>2048</memory>\n"
		    "%s<vcpu>4</vcpu>\n%s<os>\n%s  <type arch='x86_64' machine='q35'>hvm</type>\n%s</os>\n</domain>\n",
		    pad, pad, pad, pad, pad, pad);
		/* fuzz_guestxml's recommendation: 2 sockets, 2 cells */
		struct guesttopo_rec *rec = guesttopo_rec_new();
		assert_non_null(rec);
		rec->nvcpus = 4;
		rec->topo = (struct policy_guest_topo){ 2, 1, 1, 1, 2 };
		rec->cache_mode = "emulate";
		rec->ncells = 2;
		rec->cells = cells;
		rec->pins = pins;
		for (int c = 0; c < 2; c++) {
			cells[c] = (struct guesttopo_cell){ .host_node = c, .nvcpus = 2 };
			cpuset_set_range(&cells[c].vcpus, 2 * c, 2 * c + 1);
			cpuset_set(&rec->nodeset, c);
		}
		for (int v = 0; v < 4; v++) {
			cpuset_zero(&pins[v]);
			cpuset_set(&pins[v], v);
		}
		cpuset_set_range(&rec->emulator, 0, 3);
		if (guestxml_apply(xml, strlen(xml), rec, GUESTXML_ALL, &out, &olen, &err) < 0)
			fail_msg("indentation %d: %s", n, err.msg);
		assert_non_null(strstr(out, "<cell id='1'"));
		if (guestxml_apply(out, olen, rec, GUESTXML_ALL, &out2, &o2len, &err) < 0)
			fail_msg("indentation %d, second apply: %s", n, err.msg);
		if (o2len != olen || memcmp(out, out2, olen) != 0)
			fail_msg("indentation %d: a second apply changed the XML:\n%s\n---\n%s", n, out, out2);
		free(out);
		free(out2);
		out = out2 = NULL;
		rec->cells = NULL;      /* the test's arrays */
		rec->pins = NULL;
		rec->ncells = 0;
		rec->cache_mode = NULL;
		guesttopo_rec_free(rec);
	}
}

static void
test_golden_rich(void **state)
{
	/* comments, CDATA, entities, both quote styles, an XML declaration,
	 * other cputune children, preferred numatune, an old <numa> with
	 * memAccess: 2 host sockets -> 2 guest sockets, 2 cells */
	check_golden("pack:2 [numa] l3:2 core:4 pu:2", GOLDEN "/rich.xml", GOLDEN "/rich.2sock.xml",
	    GUESTXML_ALL);
}

static void
test_golden_rich_one_node(void **state)
{
	/* one host node: the old <numa> becomes one cell, memAccess kept */
	check_golden("pack:1 [numa] l3:2 core:8 pu:2", GOLDEN "/rich.xml", GOLDEN "/rich.1node.xml",
	    GUESTXML_ALL);
}

static void
test_golden_nocpu(void **state)
{
	/* no <cpu>, <cputune> or <numatune>; 4-space indentation, "" quotes */
	check_golden("pack:1 [numa] l3:2 core:2 pu:2", GOLDEN "/nocpu.xml", GOLDEN "/nocpu.2llc.xml",
	    GUESTXML_ALL);
}

static void
test_golden_emptycpu(void **state)
{
	/* <cpu mode='host-model'/> and <cputune/> are opened */
	check_golden("pack:1 [numa] l3:2 core:2 pu:2", GOLDEN "/emptycpu.xml",
	    GOLDEN "/emptycpu.2llc.xml", GUESTXML_ALL);
}

static void
test_golden_plain(void **state)
{
	check_golden("pack:2 [numa] l3:1 core:1 pu:2", DOMAINS "/plain.xml", GOLDEN "/plain.2sock.xml",
	    GUESTXML_ALL);
}

static void
test_golden_annotated_guest_only(void **state)
{
	/* guest-visible elements only: no cputune, no numatune */
	check_golden("pack:1 [numa] l3:2 core:4 pu:2", DOMAINS "/annotated.xml",
	    GOLDEN "/annotated.guest-only.xml", GUESTXML_GUEST);
	size_t len;
	char *g = test_read_file(GOLDEN "/annotated.guest-only.xml", &len);
	assert_null(strstr(g, "cputune"));
	assert_null(strstr(g, "numatune"));
	free(g);
}

static void
test_golden_tcg(void **state)
{
	/* the e2e guest: 8 vCPUs on a 2-LLC SMT2 what-if host */
	check_golden("pack:1 [numa] l3:2 core:2 pu:2", GOLDEN "/tcg.xml", GOLDEN "/tcg.2llc.xml",
	    GUESTXML_GUEST);
}

static void
test_other_metadata(void **state)
{
	size_t len, olen;
	char *xml = test_read_file(DOMAINS "/other-metadata.xml", &len), *out;
	struct guesttopo_rec *rec = recommend("pack:1 [numa] l3:2 core:4 pu:2", xml, len);
	struct llcd_err err;

	assert_int_equal(guestxml_apply(xml, len, rec, GUESTXML_ALL, &out, &olen, &err), 0);
	char *a = untouched(xml, len), *b = untouched(out, olen);
	assert_string_equal(a, b);
	/* the foreign metadata, namespaces and quoting are all still there */
	assert_non_null(strstr(out, "<llc-policy xmlns=\"urn:example:not-llcd\" mode=\"fast\"/>"));
	assert_non_null(strstr(out, "<nova:flavor name=\"m1.large\">"));
	free(a);
	free(b);
	free(out);
	free(xml);
	guesttopo_rec_free(rec);
}

/* --- refusals ------------------------------------------------------------- */

static struct guesttopo_rec *
rec_for(int n)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:2 [numa] l3:1 core:2 pu:2", &err);
	struct guesttopo_rec *rec = guesttopo_rec_new();
	int slots[8];

	assert_true(n <= 8);
	for (int v = 0; v < n; v++)
		slots[v] = v;
	assert_int_equal(guesttopo_compute(t, &(struct guesttopo_alloc){ n, slots, NULL, NULL }, rec,
	    &err), 0);
	topo_free(t);
	return rec;
}

static void
expect_refusal(const char *xml, struct guesttopo_rec *rec, unsigned parts, const char *msg)
{
	struct llcd_err err;
	char *out = (char *)1;
	size_t olen = 99;

	assert_int_equal(guestxml_apply(xml, strlen(xml), rec, parts, &out, &olen, &err), -1);
	assert_null(out);
	assert_int_equal(olen, 0);
	assert_string_equal(err.msg, msg);
}

static void
test_refusals(void **state)
{
	struct guesttopo_rec *r8 = rec_for(8);      /* 2 sockets, 2 cells */
	struct guesttopo_rec *r4 = rec_for(4);      /* one node */

	expect_refusal("<domain><name>d</name><vcpu current='2'>4</vcpu></domain>", r8, GUESTXML_ALL,
	    "domain XML: domain 'd' has 4 vCPUs (<vcpu>4</vcpu>) but the recommendation is for 8; "
	    "compute it for this domain");
	expect_refusal("<domain><name>d</name><vcpu>8</vcpu></domain>", r8, GUESTXML_ALL,
	    "domain XML: domain 'd' has no <memory> to split over 2 NUMA cells");
	expect_refusal("<domain><name>d</name><memory unit='KiB'>1024</memory><vcpu>8</vcpu></domain>",
	    r8, GUESTXML_ALL,
	    "domain XML: domain 'd': guesttopo: 1024 KiB of memory cannot give 2 NUMA cells 1 MiB each");
	expect_refusal("<!DOCTYPE domain [<!ENTITY x 'y'>]><domain><vcpu>4</vcpu></domain>", r4,
	    GUESTXML_ALL, "domain XML: a DOCTYPE is not allowed");
	expect_refusal("<domain><vcpu>4</vcpu>", r4, GUESTXML_ALL,
	    "domain XML: malformed XML (line 1): Premature end of data in tag domain line 1");
	expect_refusal("<vm><vcpu>4</vcpu></vm>", r4, GUESTXML_ALL,
	    "domain XML: the root element is <vm>, not <domain>");
	expect_refusal("<domain><vcpu>four</vcpu></domain>", r4, GUESTXML_ALL,
	    "domain XML: <vcpu>: 'four' is not a vCPU count in 1..2048");
	expect_refusal("<domain><vcpu>4</vcpu><memory unit='parsecs'>1</memory></domain>", r4,
	    GUESTXML_ALL, "domain XML: <memory unit='parsecs'>: unknown unit");
	expect_refusal("<domain><vcpu>4</vcpu><cpu><topology sockets='x'/></cpu></domain>", r4,
	    GUESTXML_ALL, "domain XML: <topology sockets='x'>: not an integer in 1..2048");
	expect_refusal("", r4, GUESTXML_ALL, "domain XML: malformed XML: empty document");
	guesttopo_rec_free(r8);
	guesttopo_rec_free(r4);
}

/* --- small exact rewrites ------------------------------------------------- */

static void
expect_apply(const char *xml, struct guesttopo_rec *rec, unsigned parts, const char *want)
{
	struct llcd_err err;
	char *out;
	size_t olen;

	if (guestxml_apply(xml, strlen(xml), rec, parts, &out, &olen, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(out, want);
	free(out);
}

static void
test_small_rewrites(void **state)
{
	struct guesttopo_rec *r4 = rec_for(4);      /* sockets=1 dies=1 cores=2 threads=2 */

	/* <cpu> with only features: topology and cache go first */
	expect_apply("<domain>\n  <vcpu>4</vcpu>\n  <cpu mode='host-passthrough'>\n"
	    "    <feature policy='disable' name='x2apic'/>\n  </cpu>\n</domain>\n", r4, GUESTXML_GUEST,
	    "<domain>\n  <vcpu>4</vcpu>\n  <cpu mode='host-passthrough'>\n"
	    "    <topology sockets='1' dies='1' cores='2' threads='2'/>\n"
	    "    <cache level='3' mode='emulate'/>\n"
	    "    <feature policy='disable' name='x2apic'/>\n  </cpu>\n</domain>\n");
	/* <cpu ...></cpu> on one line */
	expect_apply("<domain>\n  <vcpu>4</vcpu>\n  <cpu mode='host-model'></cpu>\n</domain>", r4,
	    GUESTXML_TOPOLOGY,
	    "<domain>\n  <vcpu>4</vcpu>\n  <cpu mode='host-model'>\n"
	    "    <topology sockets='1' dies='1' cores='2' threads='2'/>\n  </cpu>\n</domain>");
	/* several <cache> elements: the first is replaced, the rest go */
	expect_apply("<domain>\n  <vcpu>4</vcpu>\n  <cpu>\n    <cache level='3' mode='passthrough'/>\n"
	    "    <cache mode='disable'/>\n  </cpu>\n</domain>", r4, GUESTXML_CACHE,
	    "<domain>\n  <vcpu>4</vcpu>\n  <cpu>\n    <cache level='3' mode='emulate'/>\n  </cpu>\n</domain>");
	/* cputune: pins replace the old ones where they were */
	expect_apply("<domain>\n  <vcpu>4</vcpu>\n  <cputune>\n    <period>1000</period>\n"
	    "    <emulatorpin cpuset='7'/>\n    <quota>-1</quota>\n    <vcpupin vcpu='3' cpuset='7'/>\n"
	    "  </cputune>\n</domain>", r4, GUESTXML_CPUTUNE,
	    "<domain>\n  <vcpu>4</vcpu>\n  <cputune>\n    <period>1000</period>\n"
	    "    <vcpupin vcpu='0' cpuset='0'/>\n    <vcpupin vcpu='1' cpuset='1'/>\n"
	    "    <vcpupin vcpu='2' cpuset='2'/>\n    <vcpupin vcpu='3' cpuset='3'/>\n"
	    "    <emulatorpin cpuset='0-3'/>\n    <quota>-1</quota>\n  </cputune>\n</domain>");
	/* numatune alone, after an existing cputune */
	expect_apply("<domain>\n  <vcpu>4</vcpu>\n  <cputune>\n    <shares>1</shares>\n  </cputune>\n"
	    "</domain>", r4, GUESTXML_NUMATUNE,
	    "<domain>\n  <vcpu>4</vcpu>\n  <cputune>\n    <shares>1</shares>\n  </cputune>\n"
	    "  <numatune>\n    <memory mode='strict' nodeset='0'/>\n  </numatune>\n</domain>");
	/* an attribute value holding '>' and a comment holding tags */
	expect_apply("<domain a='x>y'>\n  <!-- <cpu><topology sockets='9'/></cpu> -->\n"
	    "  <vcpu>4</vcpu>\n</domain>", r4, GUESTXML_TOPOLOGY,
	    "<domain a='x>y'>\n  <!-- <cpu><topology sockets='9'/></cpu> -->\n  <vcpu>4</vcpu>\n"
	    "  <cpu>\n    <topology sockets='1' dies='1' cores='2' threads='2'/>\n  </cpu>\n</domain>");
	guesttopo_rec_free(r4);
}

/* --- reading -------------------------------------------------------------- */

static void
test_read(void **state)
{
	struct guestxml_domain d;
	struct llcd_err err;
	size_t len;
	char *xml = test_read_file(DOMAINS "/annotated.xml", &len);

	assert_int_equal(guestxml_read(xml, len, &d, &err), 0);
	assert_string_equal(d.name, "sim-ccx");
	assert_int_equal(d.vcpus, 16);
	assert_int_equal(d.vcpus_current, 8);
	assert_int_equal(d.memory_kib, 33554432);
	assert_true(d.has_topology);
	assert_int_equal(d.topo.sockets, 1);
	assert_int_equal(d.topo.dies, 2);
	assert_int_equal(d.topo.cores, 4);
	assert_int_equal(d.topo.threads, 2);
	assert_string_equal(d.cpu_mode, "host-passthrough");
	free(xml);

	/* no <topology>: libvirt runs one socket per vCPU */
	const char *x = "<domain><vcpu>6</vcpu><memory unit='G'>2</memory></domain>";
	assert_int_equal(guestxml_read(x, strlen(x), &d, &err), 0);
	assert_false(d.has_topology);
	assert_int_equal(d.topo.sockets, 6);
	assert_int_equal(d.topo.cores, 1);
	assert_int_equal(d.memory_kib, 2 * 1024 * 1024);
	static const struct { const char *unit; uint64_t kib; } units[] = {
		{ "b", 1 }, { "bytes", 1 }, { "KB", 1 }, { "k", 1 }, { "KiB", 1 }, { "MB", 977 },
		{ "M", 1024 }, { "MiB", 1024 }, { "GB", 976563 }, { "GiB", 1048576 }, { "T", 1073741824 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "<domain><memory unit='%s'>1</memory></domain>", units[i].unit);
		assert_int_equal(guestxml_read(buf, strlen(buf), &d, &err), 0);
		assert_int_equal(d.memory_kib, units[i].kib);
	}
	x = "<domain><memory unit='b'>4096</memory></domain>";
	assert_int_equal(guestxml_read(x, strlen(x), &d, &err), 0);
	assert_int_equal(d.memory_kib, 4);
}

static void
test_read_pins(void **state)
{
	struct llcd_err err;
	struct cpuset all, pins[4], emu;
	char b[64];
	const char *x = "<domain><vcpu cpuset='0-7,^2'>4</vcpu><cputune>"
	    "<vcpupin vcpu='1' cpuset='4-5'/><emulatorpin cpuset='9'/>"
	    "<vcpupin vcpu='3' cpuset='0-3,^1,^2'/></cputune></domain>";

	cpuset_zero(&all);
	cpuset_set_range(&all, 0, 15);
	assert_int_equal(guestxml_read_pins(x, strlen(x), 4, &all, pins, &emu, &err), 0);
	cpuset_format(&pins[0], b, sizeof(b));
	assert_string_equal(b, "0-1,3-7");
	cpuset_format(&pins[1], b, sizeof(b));
	assert_string_equal(b, "4-5");
	cpuset_format(&pins[3], b, sizeof(b));
	assert_string_equal(b, "0,3");
	cpuset_format(&emu, b, sizeof(b));
	assert_string_equal(b, "9");
	/* nothing stated: every host CPU */
	x = "<domain><vcpu>4</vcpu></domain>";
	assert_int_equal(guestxml_read_pins(x, strlen(x), 4, &all, pins, NULL, &err), 0);
	cpuset_format(&pins[2], b, sizeof(b));
	assert_string_equal(b, "0-15");
	assert_int_equal(guestxml_read_pins(x, strlen(x), 8, &all, pins, NULL, &err), -1);
	assert_string_equal(err.msg, "domain XML: domain '' has 4 vCPUs, not 8");
	x = "<domain><vcpu>4</vcpu><cputune><vcpupin vcpu='4' cpuset='1'/></cputune></domain>";
	assert_int_equal(guestxml_read_pins(x, strlen(x), 4, &all, pins, NULL, &err), -1);
	assert_string_equal(err.msg, "domain XML: <vcpupin vcpu='4'>: not an integer in 0..3");
	/* a <vcpupin> without vcpu after one with: an error, and the first
	 * one's cpuset freed once (fuzz_guestxml found it freed twice) */
	x = "<domain><vcpu>4</vcpu><cputune><vcpupin vcpu='0' cpuset='0'/><vcpupin cpuset='1'/></cputune></domain>";
	assert_int_equal(guestxml_read_pins(x, strlen(x), 4, &all, pins, NULL, &err), -1);
	assert_string_equal(err.msg, "domain XML: <vcpupin> without vcpu or cpuset");
	x = "<domain><vcpu>4</vcpu><cputune><vcpupin vcpu='0' cpuset='1,^x'/></cputune></domain>";
	assert_int_equal(guestxml_read_pins(x, strlen(x), 4, &all, pins, NULL, &err), -1);
	assert_string_equal(err.msg, "domain XML: <vcpupin>: cpuset '1,^x': bad exclusion '^x'");
}

/* --- diff ----------------------------------------------------------------- */

static void
expect_diff(const char *a, const char *b, const char *want)
{
	struct llcd_err err;
	char *out;

	assert_int_equal(guestxml_diff(a, strlen(a), b, strlen(b), "old", "new", &out, &err), 0);
	assert_string_equal(out, want);
	free(out);
}

static void
test_diff(void **state)
{
	expect_diff("a\nb\nc\n", "a\nb\nc\n", "");
	expect_diff("a\nb\nc\n", "a\nB\nc\n", "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
	/* insertion at the top and at the end */
	expect_diff("a\n", "x\na\n", "--- old\n+++ new\n@@ -1,1 +1,2 @@\n+x\n a\n");
	expect_diff("", "x\n", "--- old\n+++ new\n@@ -0,0 +1,1 @@\n+x\n");
	expect_diff("x\n", "", "--- old\n+++ new\n@@ -1,1 +0,0 @@\n-x\n");
	/* changes with 6 lines between them: one hunk; with 7: two */
	expect_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "X\n2\n3\n4\n5\n6\n7\nY\n",
	    "--- old\n+++ new\n@@ -1,8 +1,8 @@\n-1\n+X\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+Y\n");
	expect_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "X\n2\n3\n4\n5\n6\n7\n8\nY\n",
	    "--- old\n+++ new\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -6,4 +6,4 @@\n 6\n 7\n 8\n-9\n+Y\n");
	/* a moved line is one out and one in, matched by the LCS */
	expect_diff("a\nb\nc\nd\n", "b\nc\na\nd\n",
	    "--- old\n+++ new\n@@ -1,4 +1,4 @@\n-a\n b\n c\n+a\n d\n");
}

TEST_MAIN(
	cmocka_unit_test(test_golden_rich),
	cmocka_unit_test(test_golden_rich_one_node),
	cmocka_unit_test(test_golden_nocpu),
	cmocka_unit_test(test_golden_emptycpu),
	cmocka_unit_test(test_golden_plain),
	cmocka_unit_test(test_golden_annotated_guest_only),
	cmocka_unit_test(test_golden_tcg),
	cmocka_unit_test(test_other_metadata),
	cmocka_unit_test(test_refusals),
	cmocka_unit_test(test_small_rewrites),
	cmocka_unit_test(test_read),
	cmocka_unit_test(test_read_pins),
	cmocka_unit_test(test_diff),
	cmocka_unit_test(test_deep_indentation))
