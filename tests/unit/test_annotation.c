// SPDX-License-Identifier: GPL-2.0-or-later
/* test_annotation.c - the llc-policy annotation parser and writer
 * (policy/annotation_xml.c): valid examples, defaults, every error with its
 * exact message, domain XML fixtures, and the format/parse round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_file.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"
#include "test_main.h"

#define NS "xmlns:llc='urn:llcd:llc-policy:1'"

/* The example of docs/llc-policy.md. */
static const char issue_example[] =
	"<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"aggregate\" "
	"isolation=\"core\" topology=\"match\">\n"
	"  <llc:tune aggr-tolerance=\"1\" overaggr-pct=\"50\" imb-pct=\"20\" "
	"epoch-ms=\"10\" affinity-timeout=\"5\"/>\n"
	"  <llc:group name=\"sim\" vcpus=\"0-7\"/>\n"
	"</llc:llc-policy>\n";

/* Parse into a struct that starts as garbage, so that "left at defaults"
 * is really tested. */
static int
parse(const char *xml, int nvcpus, struct policy_annotation *a, struct llcd_err *err)
{
	memset(a, 0xa5, sizeof(*a));
	memset(err->msg, 0, sizeof(err->msg));
	return annot_parse(xml, strlen(xml), nvcpus, a, err);
}

static void
assert_defaults(const struct policy_annotation *a)
{
	struct policy_annotation d;

	policy_annotation_defaults(&d);
	assert_true(annot_equal(a, &d));
	assert_int_equal(a->mode, POLICY_MODE_NONE);
	assert_int_equal(a->ngroups, 0);
}

static char *
slurp(const char *name, size_t *len)
{
	char path[512];
	char *buf;

	snprintf(path, sizeof(path), "%s/domains/%s", LLCD_FIXTURES, name);
	buf = test_read_file(path, len);
	assert_true(*len > 0);
	return buf;
}

static void
test_issue_example(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;
	char list[64];

	assert_int_equal(parse(issue_example, 8, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(a.isolation, POLICY_ISO_CORE);
	assert_int_equal(a.topology, POLICY_TOPO_MATCH);
	assert_int_equal(a.tune.aggr_tolerance, 1);
	assert_int_equal(a.tune.overaggr_pct, 50);
	assert_int_equal(a.tune.imb_pct, 20);
	assert_int_equal(a.tune.epoch_ms, 10);
	assert_int_equal(a.tune.affinity_timeout, 5);
	assert_int_equal(a.tune.max_moves, 2);          /* defaults kept */
	assert_true(a.tune.benefit_check);
	assert_int_equal(a.tune.holddown_s, 60);
	assert_int_equal(a.ngroups, 1);
	assert_string_equal(a.groups[0].name, "sim");
	cpuset_format(&a.groups[0].vcpus, list, sizeof(list));
	assert_string_equal(list, "0-7");
}

static void
test_minimal_and_defaults(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;

	/* Default namespace, single quotes: what llcsim scenarios feed. */
	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1' "
	    "mode='aggregate'/>", 0, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(a.isolation, POLICY_ISO_NONE);
	assert_int_equal(a.topology, POLICY_TOPO_KEEP);
	assert_int_equal(a.infer, POLICY_INFER_WAKEUPS);
	assert_int_equal(a.tune.overaggr_pct, 0);       /* auto */
	assert_int_equal(a.tune.epoch_ms, 0);           /* one sampling period */
	assert_int_equal(a.ngroups, 0);

	/* Nothing set: every default; any prefix will do. */
	assert_int_equal(parse("<x:llc-policy xmlns:x='urn:llcd:llc-policy:1'/>",
	    0, &a, &err), 0);
	assert_defaults(&a);
	assert_int_equal(parse("<?xml version='1.0' encoding='UTF-8'?>\n"
	    "<llc-policy xmlns='urn:llcd:llc-policy:1'>\n  <!-- nothing -->\n"
	    "  <tune/>\n</llc-policy>", 0, &a, &err), 0);
	assert_defaults(&a);
}

/* infer='none' turns wakeup inference off; it is written back only when
 * it is not the default. */
static void
test_infer(void **state)
{
	struct policy_annotation a, b;
	struct llcd_err err;
	char buf[512];

	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1' "
	    "mode='aggregate' infer='none'/>", 0, &a, &err), 0);
	assert_int_equal(a.infer, POLICY_INFER_NONE);
	assert_string_equal(policy_infer_name(a.infer), "none");
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\" infer=\"none\"/>");
	assert_int_equal(annot_parse(buf, strlen(buf), 0, &b, &err), 0);
	assert_true(annot_equal(&a, &b));
	b.infer = POLICY_INFER_WAKEUPS;
	assert_false(annot_equal(&a, &b));
	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1' "
	    "mode='aggregate' infer='wakeups'/>", 0, &a, &err), 0);
	assert_int_equal(a.infer, POLICY_INFER_WAKEUPS);
	assert_string_equal(policy_infer_name(a.infer), "wakeups");
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\"/>");
}

static void
test_every_knob(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;
	char list[64];

	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1' "
	    "mode='spread' isolation='none' topology='keep'>"
	    "<tune aggr-tolerance='100' overaggr-pct='auto' imb-pct='0' "
	    "epoch-ms='60000' affinity-timeout='1000' max-moves='64' "
	    "benefit-check='off' holddown-s='86400'/>"
	    "<group name='a.B_c-9' vcpus='0,2,4'/>"
	    "<group name='g2' vcpus='1-1,3'/>"
	    "<other:thing xmlns:other='urn:example:ext'/>"
	    "</llc-policy>", 5, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_SPREAD);
	assert_int_equal(a.tune.aggr_tolerance, 100);
	assert_int_equal(a.tune.overaggr_pct, 0);
	assert_int_equal(a.tune.imb_pct, 0);
	assert_int_equal(a.tune.epoch_ms, 60000);
	assert_int_equal(a.tune.affinity_timeout, 1000);
	assert_int_equal(a.tune.max_moves, 64);
	assert_false(a.tune.benefit_check);
	assert_int_equal(a.tune.holddown_s, 86400);
	assert_int_equal(a.ngroups, 2);
	assert_string_equal(a.groups[0].name, "a.B_c-9");
	cpuset_format(&a.groups[1].vcpus, list, sizeof(list));
	assert_string_equal(list, "1,3");

	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1' "
	    "mode='static'><tune overaggr-pct='1' epoch-ms='auto' "
	    "benefit-check='on' aggr-tolerance='0'/></llc-policy>", 0, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_STATIC);
	assert_int_equal(a.tune.overaggr_pct, 1);
	assert_int_equal(a.tune.epoch_ms, 0);
	assert_int_equal(a.tune.aggr_tolerance, 0);
	assert_true(a.tune.benefit_check);

	/* nvcpus <= 0: the range check is skipped. */
	assert_int_equal(parse("<llc-policy xmlns='urn:llcd:llc-policy:1'>"
	    "<group name='big' vcpus='0-2047'/></llc-policy>", -1, &a, &err), 0);
	assert_int_equal(cpuset_count(&a.groups[0].vcpus), 2048);
}

static void
test_max_groups(void **state)
{
	char xml[8192];
	size_t off = 0;
	struct policy_annotation a;
	struct llcd_err err;

	off += (size_t)snprintf(xml, sizeof(xml), "<llc-policy xmlns='urn:llcd:llc-policy:1'>");
	for (int i = 0; i < POLICY_MAX_GROUPS; i++)
		off += (size_t)snprintf(xml + off, sizeof(xml) - off,
		    "<group name='g%d' vcpus='%d'/>", i, i);
	snprintf(xml + off, sizeof(xml) - off, "</llc-policy>");
	assert_int_equal(parse(xml, 64, &a, &err), 0);
	assert_int_equal(a.ngroups, POLICY_MAX_GROUPS);

	snprintf(xml + off, sizeof(xml) - off, "<group name='one-more' vcpus='64'/></llc-policy>");
	assert_int_equal(parse(xml, 0, &a, &err), -1);
	assert_string_equal(err.msg, "llc-policy: more than 64 group elements");
	assert_defaults(&a);
}

struct bad {
	const char *xml;
	int nvcpus;
	const char *msg;
};

#define P(body) "<llc-policy xmlns='urn:llcd:llc-policy:1' " body
static const struct bad bad[] = {
	/* the root element's attributes */
	{ P("mode='fast'/>"), 0,
	  "llc-policy: attribute 'mode': 'fast' is not one of none, static, aggregate, spread" },
	{ P("mode='Aggregate'/>"), 0,
	  "llc-policy: attribute 'mode': 'Aggregate' is not one of none, static, aggregate, spread" },
	{ P("mode=''/>"), 0,
	  "llc-policy: attribute 'mode': '' is not one of none, static, aggregate, spread" },
	{ P("isolation='socket'/>"), 0,
	  "llc-policy: attribute 'isolation': 'socket' is not one of none, core" },
	{ P("topology='yes'/>"), 0,
	  "llc-policy: attribute 'topology': 'yes' is not one of keep, match" },
	{ P("infer='off'/>"), 0,
	  "llc-policy: attribute 'infer': 'off' is not one of wakeups, none" },
	{ P("infer='Wakeups'/>"), 0,
	  "llc-policy: attribute 'infer': 'Wakeups' is not one of wakeups, none" },
	{ P("infer=''/>"), 0,
	  "llc-policy: attribute 'infer': '' is not one of wakeups, none" },
	{ P("speed='11'/>"), 0,
	  "llc-policy: unknown attribute 'speed' (allowed, without prefix: mode, isolation, topology, infer)" },
	{ "<llc:llc-policy " NS " llc:mode='aggregate'/>", 0,
	  "llc-policy: unknown attribute 'llc:mode' (allowed, without prefix: mode, isolation, topology, infer)" },
	/* <tune> */
	{ P("><tune aggr-tolerance='101'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'aggr-tolerance': '101' is not an integer in 0..100" },
	{ P("><tune overaggr-pct='0'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'overaggr-pct': '0' is not an integer in 1..100 or auto" },
	{ P("><tune imb-pct='-1'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'imb-pct': '-1' is not an integer in 0..100" },
	{ P("><tune imb-pct=' 20'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'imb-pct': ' 20' is not an integer in 0..100" },
	{ P("><tune epoch-ms='60001'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'epoch-ms': '60001' is not an integer in 1..60000 or auto" },
	{ P("><tune epoch-ms='10ms'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'epoch-ms': '10ms' is not an integer in 1..60000 or auto" },
	{ P("><tune affinity-timeout='0'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'affinity-timeout': '0' is not an integer in 1..1000" },
	{ P("><tune max-moves='65'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'max-moves': '65' is not an integer in 1..64" },
	{ P("><tune max-moves='99999999999999999999'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'max-moves': '99999999999999999999' is not an integer in 1..64" },
	{ P("><tune holddown-s='auto'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'holddown-s': 'auto' is not an integer in 1..86400" },
	{ P("><tune benefit-check='yes'/></llc-policy>"), 0,
	  "llc-policy: tune: attribute 'benefit-check': 'yes' is not one of off, on" },
	{ P("><tune epoch='10'/></llc-policy>"), 0,
	  "llc-policy: tune: unknown attribute 'epoch' (allowed, without prefix: aggr-tolerance, "
	  "overaggr-pct, imb-pct, epoch-ms, affinity-timeout, max-moves, benefit-check, holddown-s)" },
	{ P("><tune/><tune/></llc-policy>"), 0,
	  "llc-policy: more than one tune element (at most one)" },
	{ P("><tune><group name='a' vcpus='0'/></tune></llc-policy>"), 0,
	  "llc-policy: tune: unexpected element 'group' (tune takes attributes only)" },
	/* <group> */
	{ P("><group vcpus='0'/></llc-policy>"), 0,
	  "llc-policy: group #1: missing attribute 'name'" },
	{ P("><group name='a'/></llc-policy>"), 0,
	  "llc-policy: group 'a': missing attribute 'vcpus'" },
	{ P("><group name='a' vcpus='0' cpus='1'/></llc-policy>"), 0,
	  "llc-policy: group #1: unknown attribute 'cpus' (allowed, without prefix: name, vcpus)" },
	{ P("><group name='a b' vcpus='0'/></llc-policy>"), 0,
	  "llc-policy: group #1: attribute 'name': 'a b' is not 1-31 of the characters A-Z a-z 0-9 _ . -" },
	{ P("><group name='' vcpus='0'/></llc-policy>"), 0,
	  "llc-policy: group #1: attribute 'name': '' is not 1-31 of the characters A-Z a-z 0-9 _ . -" },
	{ P("><group name='abcdefghijklmnopqrstuvwxyz012345' vcpus='0'/></llc-policy>"), 0,
	  "llc-policy: group #1: attribute 'name': 'abcdefghijklmnopqrstuvwxyz012345' is not 1-31 "
	  "of the characters A-Z a-z 0-9 _ . -" },
	{ P("><group name='a' vcpus='0'/><group name='a' vcpus='1'/></llc-policy>"), 0,
	  "llc-policy: group #2: attribute 'name': 'a' is already the name of group #1 (names must be unique)" },
	{ P("><group name='a' vcpus='0-7'/><group name='b' vcpus='4-11'/></llc-policy>"), 16,
	  "llc-policy: group 'b': attribute 'vcpus': vCPUs 4-7 also in group 'a' (a vCPU belongs to at most one group)" },
	{ P("><group name='a' vcpus='0-3'/><group name='b' vcpus='3'/></llc-policy>"), 0,
	  "llc-policy: group 'b': attribute 'vcpus': vCPU 3 also in group 'a' (a vCPU belongs to at most one group)" },
	{ P("><group name='a' vcpus=''/></llc-policy>"), 0,
	  "llc-policy: group 'a': attribute 'vcpus' is empty (a group needs at least one vCPU)" },
	{ P("><group name='a' vcpus='0-8'/></llc-policy>"), 8,
	  "llc-policy: group 'a': attribute 'vcpus': vCPU 8 beyond the domain's 8 vCPUs (0-7)" },
	{ P("><group name='a' vcpus='0,2-5'/></llc-policy>"), 1,
	  "llc-policy: group 'a': attribute 'vcpus': vCPUs 2-5 beyond the domain's 1 vCPU (0-0)" },
	{ P("><group name='a' vcpus='0-x'/></llc-policy>"), 0,
	  "llc-policy: group 'a': attribute 'vcpus': invalid CPU list '0-x' at '0-x' "
	  "(expected numbers 0-2047 and ranges like 0-3,8)" },
	{ P("><group name='a' vcpus='4096'/></llc-policy>"), 0,
	  "llc-policy: group 'a': attribute 'vcpus': invalid CPU list '4096' at '4096' "
	  "(expected numbers 0-2047 and ranges like 0-3,8)" },
	/* elements and content */
	{ P("><groups/></llc-policy>"), 0,
	  "llc-policy: unknown element 'groups' (allowed: tune, group)" },
	{ "<llc:llc-policy " NS "><tune/></llc:llc-policy>", 0,
	  "llc-policy: element 'tune' has no namespace (write it in urn:llcd:llc-policy:1, e.g. llc:tune)" },
	{ P(">aggregate</llc-policy>"), 0,
	  "llc-policy: unexpected text (allowed content: tune, group elements)" },
	{ P("><group name='a' vcpus='0'>x</group></llc-policy>"), 0,
	  "llc-policy: group #1: unexpected text (group takes attributes only)" },
	/* namespaces and versions */
	{ "<llc-policy xmlns='urn:llcd:llc-policy:2' mode='aggregate'/>", 0,
	  "llc-policy: unsupported version: namespace 'urn:llcd:llc-policy:2' "
	  "(this llcd reads urn:llcd:llc-policy:1)" },
	{ P("><v2:tune xmlns:v2='urn:llcd:llc-policy:2'/></llc-policy>"), 0,
	  "llc-policy: unsupported version: namespace 'urn:llcd:llc-policy:2' "
	  "(this llcd reads urn:llcd:llc-policy:1)" },
	{ "<llc-policy mode='aggregate'/>", 0,
	  "llc-policy: element 'llc-policy' is in namespace '', not urn:llcd:llc-policy:1" },
	{ "<llc-policy xmlns='urn:llcd:llc-policy' mode='aggregate'/>", 0,
	  "llc-policy: element 'llc-policy' is in namespace 'urn:llcd:llc-policy', not urn:llcd:llc-policy:1" },
	{ "<llc:tune " NS "/>", 0,
	  "llc-policy: unknown element 'tune' (expected llc-policy)" },
	/* malformed XML and defences */
	{ P("mode='aggregate'>"), 0,
	  "llc-policy: malformed XML (line 1): Premature end of data in tag llc-policy line 1" },
	{ P("mode='aggregate' mode='none'/>"), 0,
	  "llc-policy: malformed XML (line 1): Attribute mode redefined" },
	{ "", 0, "llc-policy: malformed XML: empty document" },
	{ "<llc:llc-policy/>", 0,
	  "llc-policy: malformed XML (line 1): Namespace prefix llc on llc-policy is not defined" },
	{ P("mode='&agg;'/>"), 0,
	  "llc-policy: malformed XML (line 1): Entity 'agg' not defined" },
	{ "<!DOCTYPE llc-policy [<!ENTITY a 'aggregate'>]>"
	  P("mode='&a;'/>"), 0,
	  "llc-policy: a DOCTYPE is not allowed" },
	{ "<!DOCTYPE llc-policy SYSTEM 'http://example.com/x.dtd'>" P("/>"), 0,
	  "llc-policy: a DOCTYPE is not allowed" },
};
#undef P

static void
test_errors(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].xml, bad[i].nvcpus, &a, &err);

		if (rc != -1 || strcmp(err.msg, bad[i].msg) != 0)
			fail_msg("case %zu: %s\n  rc %d\n  got:  %s\n  want: %s", i,
			    bad[i].xml, rc, err.msg, bad[i].msg);
		assert_defaults(&a);
	}
}

static void
test_limits(void **state)
{
	size_t n = ANNOT_XML_MAX + 1;
	char *big = malloc(n + 1);
	struct policy_annotation a;
	struct llcd_err err;
	const char *head = "<llc-policy xmlns='urn:llcd:llc-policy:1'>";

	assert_non_null(big);
	/* ANNOT_XML_MAX bytes of valid XML (padded with blanks) are fine ... */
	memset(big, ' ', n);
	memcpy(big, head, strlen(head));
	memcpy(big + n - 1 - strlen("</llc-policy>"), "</llc-policy>", strlen("</llc-policy>"));
	big[n] = '\0';
	assert_int_equal(annot_parse(big, n - 1, 0, &a, &err), 0);
	/* ... one more byte is not */
	assert_int_equal(annot_parse(big, n, 0, &a, &err), -1);
	assert_string_equal(err.msg, "llc-policy: 65537 bytes, more than the 65536 allowed");
	free(big);

	/* Not NUL-terminated: only len bytes are read. */
	assert_int_equal(annot_parse("<llc-policy xmlns='urn:llcd:llc-policy:1'/>garbage",
	    strlen("<llc-policy xmlns='urn:llcd:llc-policy:1'/>"), 0, &a, &err), 0);

	/* NULL err is allowed. */
	assert_int_equal(annot_parse("<x/>", 4, 0, &a, NULL), -1);
}

static void
test_domain_fixtures(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;
	size_t len;
	char *xml, list[64];
	bool found;
	int nvcpus;

	xml = slurp("annotated.xml", &len);
	assert_int_equal(annot_from_domain_xml(xml, len, &nvcpus, &found, &a, &err), 0);
	assert_true(found);
	assert_int_equal(nvcpus, 16);           /* the maximum, not current='8' */
	assert_int_equal(a.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(a.isolation, POLICY_ISO_CORE);
	assert_int_equal(a.topology, POLICY_TOPO_MATCH);
	assert_int_equal(a.tune.epoch_ms, 10);
	assert_int_equal(a.ngroups, 1);
	cpuset_format(&a.groups[0].vcpus, list, sizeof(list));
	assert_string_equal(list, "0-7");
	/* found and nvcpus_out are optional */
	assert_int_equal(annot_from_domain_xml(xml, len, NULL, NULL, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_AGGREGATE);
	free(xml);

	xml = slurp("plain.xml", &len);
	memset(&a, 0x5a, sizeof(a));
	assert_int_equal(annot_from_domain_xml(xml, len, &nvcpus, &found, &a, &err), 0);
	assert_false(found);
	assert_int_equal(nvcpus, 4);
	assert_defaults(&a);
	free(xml);

	xml = slurp("other-metadata.xml", &len);
	memset(&a, 0x5a, sizeof(a));
	assert_int_equal(annot_from_domain_xml(xml, len, &nvcpus, &found, &a, &err), 0);
	assert_false(found);
	assert_int_equal(nvcpus, 16);
	assert_defaults(&a);
	free(xml);
}

static int
domain(const char *md, const char *vcpu, int *nvcpus, bool *found,
    struct policy_annotation *a, struct llcd_err *err)
{
	char xml[2048];

	snprintf(xml, sizeof(xml), "<domain type='kvm'><name>d</name>%s"
	    "<metadata>%s</metadata></domain>", vcpu, md);
	memset(a, 0xa5, sizeof(*a));
	return annot_from_domain_xml(xml, strlen(xml), nvcpus, found, a, err);
}

static void
test_domain_errors(void **state)
{
	struct policy_annotation a;
	struct llcd_err err;
	bool found;
	int nvcpus;

	/* the group range check uses the domain's maximum vCPU count */
	assert_int_equal(domain("<llc-policy xmlns='urn:llcd:llc-policy:1'>"
	    "<group name='g' vcpus='0-15'/></llc-policy>",
	    "<vcpu placement='static' current='16'> 16 </vcpu>", &nvcpus, &found, &a, &err), 0);
	assert_int_equal(nvcpus, 16);
	assert_int_equal(domain("<llc-policy xmlns='urn:llcd:llc-policy:1'>"
	    "<group name='g' vcpus='0-15'/></llc-policy>",
	    "<vcpu current='4'>8</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_true(found);
	assert_int_equal(nvcpus, 8);
	assert_string_equal(err.msg, "llc-policy: group 'g': attribute 'vcpus': "
	    "vCPUs 8-15 beyond the domain's 8 vCPUs (0-7)");
	assert_defaults(&a);

	/* the one vCPU limit of every domain-XML reader (xmlsafe.h) */
	assert_int_equal(domain("", "<vcpu>2049</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_string_equal(err.msg, "domain XML: element 'vcpu': 2049 vCPUs, more than the 2048 llcd reads");
	assert_int_equal(domain("", "<vcpu>2048</vcpu>", &nvcpus, &found, &a, &err), 0);
	assert_int_equal(nvcpus, 2048);

	/* no <vcpu>: libvirt's default of one */
	assert_int_equal(domain("", "", &nvcpus, &found, &a, &err), 0);
	assert_false(found);
	assert_int_equal(nvcpus, 1);

	assert_int_equal(domain("", "<vcpu>many</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_string_equal(err.msg, "domain XML: element 'vcpu': 'many' is not a "
	    "vCPU count (an integer >= 1)");

	assert_int_equal(domain("<p:llc-policy xmlns:p='urn:llcd:llc-policy:2' mode='aggregate'/>",
	    "<vcpu>2</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_true(found);
	assert_string_equal(err.msg, "llc-policy: unsupported version: namespace "
	    "'urn:llcd:llc-policy:2' (this llcd reads urn:llcd:llc-policy:1)");
	assert_defaults(&a);

	assert_int_equal(domain("<a:llc-policy xmlns:a='urn:llcd:llc-policy:1' mode='aggregate'/>"
	    "<b:llc-policy xmlns:b='urn:llcd:llc-policy:1' mode='spread'/>",
	    "<vcpu>2</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_true(found);
	assert_string_equal(err.msg, "llc-policy: more than one element in namespace "
	    "urn:llcd:llc-policy:* in <metadata> (at most one)");

	assert_int_equal(domain("<llc-policy xmlns='urn:llcd:llc-policy:1' mode='fast'/>",
	    "<vcpu>2</vcpu>", &nvcpus, &found, &a, &err), -1);
	assert_true(found);
	assert_string_equal(err.msg, "llc-policy: attribute 'mode': 'fast' is not one of "
	    "none, static, aggregate, spread");

	/* the annotation is only looked for directly in <metadata> */
	assert_int_equal(domain("<x:ext xmlns:x='urn:example'><llc-policy "
	    "xmlns='urn:llcd:llc-policy:1' mode='aggregate'/></x:ext>",
	    "<vcpu>2</vcpu>", &nvcpus, &found, &a, &err), 0);
	assert_false(found);

	assert_int_equal(annot_from_domain_xml("<domain><metadata>", 18, &nvcpus, &found,
	    &a, &err), -1);
	assert_string_equal(err.msg, "domain XML: malformed XML (line 1): Premature end "
	    "of data in tag metadata line 1");
	assert_false(found);
	assert_int_equal(annot_from_domain_xml("<network/>", 10, &nvcpus, &found,
	    &a, &err), -1);
	assert_string_equal(err.msg, "domain XML: root element is 'network', not 'domain'");
	assert_int_equal(annot_from_domain_xml("<domain/>", ANNOT_DOMAIN_XML_MAX + 1,
	    &nvcpus, &found, &a, &err), -1);
	assert_string_equal(err.msg, "domain XML: 4194305 bytes, more than the 4194304 allowed");
}

static void
test_format(void **state)
{
	struct policy_annotation a, b;
	struct llcd_err err;
	char buf[ANNOT_XML_MAX];

	policy_annotation_defaults(&a);
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\"/>");

	assert_int_equal(parse(issue_example, 8, &a, &err), 0);
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\" isolation=\"core\" topology=\"match\">"
	    "<llc:tune overaggr-pct=\"50\" epoch-ms=\"10\"/>"
	    "<llc:group name=\"sim\" vcpus=\"0-7\"/></llc:llc-policy>");
	assert_int_equal(parse(buf, 8, &b, &err), 0);
	assert_true(annot_equal(&a, &b));

	/* too small: an error and an empty string, never half an element */
	assert_int_equal(annot_format(&a, buf, 40, &err), -1);
	assert_string_equal(err.msg, "llc-policy: the annotation does not fit in 40 bytes");
	assert_string_equal(buf, "");

	/* a struct that does not pass the parser's rules is not written */
	a.tune.imb_pct = 101;
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), -1);
	assert_string_equal(err.msg, "llc-policy: tune: attribute 'imb-pct': '101' is "
	    "not an integer in 0..100");
	a.tune.imb_pct = 20;
	a.mode = (enum policy_mode)7;
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), -1);
	assert_string_equal(err.msg, "llc-policy: attribute 'mode': '7' is not one of "
	    "none, static, aggregate, spread");
	a.mode = POLICY_MODE_AGGREGATE;
	a.infer = (enum policy_infer)2;
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), -1);
	assert_string_equal(err.msg, "llc-policy: attribute 'infer': '2' is not one of "
	    "wakeups, none");
	a.infer = POLICY_INFER_WAKEUPS;
	snprintf(a.groups[0].name, sizeof(a.groups[0].name), "a\"b");
	assert_int_equal(annot_format(&a, buf, sizeof(buf), &err), -1);
	assert_string_equal(err.msg, "llc-policy: group #1: attribute 'name': 'a\"b' is "
	    "not 1-31 of the characters A-Z a-z 0-9 _ . -");
	assert_int_equal(annot_check(&a, 0, &err), -1);
}

/* The forms libvirt hands back (checked against libvirt 9.0's test driver):
 * virDomainGetMetadata() strips the namespace; virDomainSetMetadata() with
 * key "llc" refuses an element that already declares xmlns:llc, takes
 * annot_format_metadata()'s default-namespace form and stores it with both
 * declarations. */
static void
test_libvirt_forms(void **state)
{
	struct policy_annotation a, b;
	struct llcd_err err;
	char buf[ANNOT_XML_MAX];
	const char *got = "<llc-policy mode=\"aggregate\" isolation=\"core\">\n"
	    "  <tune max-moves=\"4\"/>\n</llc-policy>";
	const char *got2 = "<llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"spread\">\n  <tune max-moves=\"4\"/>\n</llc-policy>";
	const char *stored = "<domain type='test'><vcpu placement='static'>2</vcpu>"
	    "<metadata><llc-policy xmlns=\"urn:llcd:llc-policy:1\" "
	    "xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"spread\">"
	    "<tune max-moves=\"4\"/></llc-policy></metadata></domain>";
	const char *v2 = "<llc-policy xmlns='urn:llcd:llc-policy:2'/>";
	const char *foo = "<llc-policy><tune foo='1'/></llc-policy>";
	bool found;
	int nvcpus;

	assert_int_equal(annot_parse_metadata(got, strlen(got), 4, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(a.isolation, POLICY_ISO_CORE);
	assert_int_equal(a.tune.max_moves, 4);
	assert_int_equal(annot_parse_metadata(got2, strlen(got2), 4, &a, &err), 0);
	assert_int_equal(a.mode, POLICY_MODE_SPREAD);
	/* without the implied namespace it is not ours */
	assert_int_equal(annot_parse(got, strlen(got), 4, &a, &err), -1);
	assert_string_equal(err.msg, "llc-policy: element 'llc-policy' is in "
	    "namespace '', not urn:llcd:llc-policy:1");
	/* an explicit namespace still counts, other versions still fail */
	assert_int_equal(annot_parse_metadata(issue_example, strlen(issue_example),
	    8, &a, &err), 0);
	assert_int_equal(a.ngroups, 1);
	assert_int_equal(annot_parse_metadata(v2, strlen(v2), 8, &a, &err), -1);
	assert_string_equal(err.msg, "llc-policy: unsupported version: namespace "
	    "'urn:llcd:llc-policy:2' (this llcd reads urn:llcd:llc-policy:1)");
	assert_int_equal(annot_parse_metadata(foo, strlen(foo), 8, &a, &err), -1);
	assert_string_equal(err.msg, "llc-policy: tune: unknown attribute 'foo' (allowed, "
	    "without prefix: aggr-tolerance, overaggr-pct, imb-pct, epoch-ms, "
	    "affinity-timeout, max-moves, benefit-check, holddown-s)");

	assert_int_equal(annot_from_domain_xml(stored, strlen(stored), &nvcpus, &found,
	    &a, &err), 0);
	assert_true(found);
	assert_int_equal(a.mode, POLICY_MODE_SPREAD);
	assert_int_equal(a.tune.max_moves, 4);

	assert_int_equal(parse(issue_example, 8, &a, &err), 0);
	assert_int_equal(annot_format_metadata(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc-policy xmlns=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\" isolation=\"core\" topology=\"match\">"
	    "<tune overaggr-pct=\"50\" epoch-ms=\"10\"/>"
	    "<group name=\"sim\" vcpus=\"0-7\"/></llc-policy>");
	assert_int_equal(annot_parse(buf, strlen(buf), 8, &b, &err), 0);
	assert_true(annot_equal(&a, &b));
	policy_annotation_defaults(&a);
	assert_int_equal(annot_format_metadata(&a, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "<llc-policy xmlns=\"urn:llcd:llc-policy:1\"/>");
}

/* Random valid structs, seeded: format then parse gives the struct back. */
static void
test_roundtrip_random(void **state)
{
	static struct policy_annotation a, b;
	static char buf[ANNOT_XML_MAX];
	unsigned seed = 12345;
	struct llcd_err err;

	for (int iter = 0; iter < 2000; iter++) {
		int next = 0;

		policy_annotation_defaults(&a);
		a.mode = (enum policy_mode)(rand_r(&seed) % 4);
		a.isolation = (enum policy_isolation)(rand_r(&seed) % 2);
		a.topology = (enum policy_topology)(rand_r(&seed) % 2);
		a.infer = (enum policy_infer)(rand_r(&seed) % 2);
		if (rand_r(&seed) % 2) {
			a.tune.aggr_tolerance = rand_r(&seed) % 101;
			a.tune.overaggr_pct = rand_r(&seed) % 101;        /* 0 = auto */
			a.tune.imb_pct = rand_r(&seed) % 101;
			a.tune.epoch_ms = rand_r(&seed) % 60001;
			a.tune.affinity_timeout = 1 + rand_r(&seed) % 1000;
			a.tune.max_moves = 1 + rand_r(&seed) % 64;
			a.tune.benefit_check = rand_r(&seed) % 2;
			a.tune.holddown_s = 1 + rand_r(&seed) % 86400;
		}
		a.ngroups = rand_r(&seed) % (POLICY_MAX_GROUPS + 1);
		for (int i = 0; i < a.ngroups; i++) {
			int n = 1 + rand_r(&seed) % 20;

			snprintf(a.groups[i].name, sizeof(a.groups[i].name), "g%d-%x", i,
			    (unsigned)rand_r(&seed));
			cpuset_zero(&a.groups[i].vcpus);
			for (int k = 0; k < n && next < CPUSET_MAX; k++) {
				cpuset_set(&a.groups[i].vcpus, next);
				next += 1 + rand_r(&seed) % 3;
			}
			if (cpuset_empty(&a.groups[i].vcpus)) {
				a.ngroups = i;
				break;
			}
		}
		if (annot_format(&a, buf, sizeof(buf), &err) != 0)
			fail_msg("seed 12345 iteration %d: format: %s", iter, err.msg);
		if (annot_parse(buf, strlen(buf), next, &b, &err) != 0)
			fail_msg("seed 12345 iteration %d: parse: %s\n%s", iter, err.msg, buf);
		if (!annot_equal(&a, &b))
			fail_msg("seed 12345 iteration %d: round trip differs:\n%s", iter, buf);
		if (annot_format_metadata(&a, buf, sizeof(buf), &err) != 0 ||
		    annot_parse(buf, strlen(buf), next, &b, &err) != 0 ||
		    !annot_equal(&a, &b))
			fail_msg("seed 12345 iteration %d: metadata round trip: %s\n%s",
			    iter, err.msg, buf);
	}
}

TEST_MAIN(
	cmocka_unit_test(test_issue_example),
	cmocka_unit_test(test_minimal_and_defaults),
	cmocka_unit_test(test_every_knob),
	cmocka_unit_test(test_infer),
	cmocka_unit_test(test_max_groups),
	cmocka_unit_test(test_errors),
	cmocka_unit_test(test_limits),
	cmocka_unit_test(test_domain_fixtures),
	cmocka_unit_test(test_domain_errors),
	cmocka_unit_test(test_format),
	cmocka_unit_test(test_libvirt_forms),
	cmocka_unit_test(test_roundtrip_random))
