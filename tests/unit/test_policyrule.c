// SPDX-License-Identifier: GPL-2.0-or-later
/* test_policyrule.c - llcd.conf's policy-rule (policy/policyrule.c): the
 * rule syntax and its exact errors, the three kinds of MATCH on domain
 * XML fixtures written the way Nova and KubeVirt write theirs, first match
 * wins, and the format/parse round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyrule.h"
#include "test_file.h"
#include "test_main.h"

static char *
slurp(const char *name)
{
	char path[512];
	size_t len;

	snprintf(path, sizeof(path), "%s/domains/%s", LLCD_FIXTURES, name);
	return test_read_file(path, &len);
}

/* a set of the rules given, one a string */
static struct policyrule_set *
rules(const char *const *lines, int n)
{
	struct policyrule_set *s = policyrule_set_new();
	struct policyrule *r = malloc(sizeof(*r));
	struct llcd_err err;

	assert_non_null(s);
	assert_non_null(r);
	for (int i = 0; i < n; i++) {
		char where[32];
		snprintf(where, sizeof(where), "t.conf:%d", i + 1);
		if (policyrule_parse(lines[i], where, r, &err) < 0)
			fail_msg("rule '%s': %s", lines[i], err.msg);
		assert_int_equal(policyrule_set_add(s, r, &err), 0);
	}
	free(r);
	return s;
}

static int
find(const char *rule, const char *name, const char *xml)
{
	struct policyrule_set *s = rules(&rule, 1);
	struct llcd_err err;
	int i = policyrule_find(s, name, xml, xml ? strlen(xml) : 0, &err);

	policyrule_set_free(s);
	return i;
}

static void
test_parse_forms(void **state)
{
	struct policyrule r;
	struct llcd_err err;
	char buf[2048];

	assert_int_equal(policyrule_parse("flavor=m1.llc.* mode=aggregate isolation=core", "a:1", &r, &err), 0);
	assert_int_equal(r.nmatch, 1);
	assert_int_equal(r.m[0].kind, POLICYRULE_FLAVOR);
	assert_true(r.need_metadata);
	assert_int_equal(r.annot.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(r.annot.isolation, POLICY_ISO_CORE);
	assert_string_equal(r.where, "a:1");
	policyrule_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "flavor=m1.llc.* <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" "
	    "mode=\"aggregate\" isolation=\"core\"/>");

	/* inline XML, a tune knob, the canonical form */
	assert_int_equal(policyrule_parse("  name=default_*   <llc-policy xmlns='urn:llcd:llc-policy:1' mode='spread'>"
	    "<tune max-moves='4'/></llc-policy>", "a:2", &r, &err), 0);
	assert_false(r.need_metadata);
	assert_int_equal(r.annot.mode, POLICY_MODE_SPREAD);
	assert_int_equal(r.annot.tune.max_moves, 4);

	/* several MATCHes; a quoted glob with a space; meta in every form */
	assert_int_equal(policyrule_parse("name=instance-* flavor=\"gpu large*\" "
	    "meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc "
	    "meta={http://kubevirt.io}uid meta=\"{urn:x}el@a=b c\" mode=static", "a:3", &r, &err), 0);
	assert_int_equal(r.nmatch, 5);
	assert_string_equal(r.m[1].glob, "gpu large*");
	assert_string_equal(r.m[2].ns, "http://openstack.org/xmlns/libvirt/nova/*");
	assert_string_equal(r.m[2].element, "project");
	assert_string_equal(r.m[2].attr, "");
	assert_true(r.m[2].has_value);
	assert_string_equal(r.m[2].glob, "hpc");
	assert_false(r.m[3].has_value);
	assert_string_equal(r.m[4].attr, "a");
	assert_string_equal(r.m[4].glob, "b c");
	assert_string_equal(r.match, "name=instance-* flavor=\"gpu large*\" "
	    "meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc meta={http://kubevirt.io}uid "
	    "meta=\"{urn:x}el@a=b c\"");

	/* KubeVirt's: namespace, label and annotation (the hook's <pod>) */
	assert_int_equal(policyrule_parse("namespace=hpc* label=app=db annotation=llcd.io/llc-policy "
	    "label=\"tier.example.org/class=gold plus\" mode=aggregate", "a:5", &r, &err), 0);
	assert_int_equal(r.nmatch, 4);
	assert_true(r.need_metadata);
	assert_int_equal(r.m[0].kind, POLICYRULE_NAMESPACE);
	assert_string_equal(r.m[0].glob, "hpc*");
	assert_int_equal(r.m[1].kind, POLICYRULE_LABEL);
	assert_string_equal(r.m[1].key, "app");
	assert_true(r.m[1].has_value);
	assert_string_equal(r.m[1].glob, "db");
	assert_int_equal(r.m[2].kind, POLICYRULE_ANNOTATION);
	assert_string_equal(r.m[2].key, "llcd.io/llc-policy");
	assert_false(r.m[2].has_value);
	assert_string_equal(r.m[3].glob, "gold plus");
	assert_string_equal(r.match, "namespace=hpc* label=app=db annotation=llcd.io/llc-policy "
	    "label=\"tier.example.org/class=gold plus\"");
	struct policyrule rn;
	assert_int_equal(policyrule_parse("namespace=hpc mode=static", "a:6", &rn, &err), 0);
	assert_false(rn.need_metadata);         /* the name is enough */
	policyrule_format(&rn, buf, sizeof(buf));
	assert_string_equal(buf, "namespace=hpc <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"static\"/>");
	{
		struct policyrule r3;
		char b3[2048], b4[2048];
		policyrule_format(&r, b3, sizeof(b3));
		assert_int_equal(policyrule_parse(b3, "a:7", &r3, &err), 0);
		policyrule_format(&r3, b4, sizeof(b4));
		assert_string_equal(b3, b4);
	}
	assert_int_equal(policyrule_parse("name=instance-* flavor=\"gpu large*\" "
	    "meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc "
	    "meta={http://kubevirt.io}uid meta=\"{urn:x}el@a=b c\" mode=static", "a:3", &r, &err), 0);

	/* format -> parse gives the same rule */
	struct policyrule r2;
	char buf2[2048];
	policyrule_format(&r, buf, sizeof(buf));
	assert_int_equal(policyrule_parse(buf, "a:4", &r2, &err), 0);
	policyrule_format(&r2, buf2, sizeof(buf2));
	assert_string_equal(buf, buf2);
}

static void
test_policy_file(void **state)
{
	char path[] = "/tmp/llcd-policyrule-XXXXXX";
	int fd = mkstemp(path);
	struct policyrule r;
	struct llcd_err err;
	char line[512], buf[2048];
	static const char xml[] = "<llc:llc-policy xmlns:llc='urn:llcd:llc-policy:1' mode='aggregate' "
	    "topology='match'>\n  <llc:group name='db' vcpus='0-3'/>\n</llc:llc-policy>\n";

	assert_true(fd >= 0);
	assert_int_equal(write(fd, xml, sizeof(xml) - 1), (ssize_t)sizeof(xml) - 1);
	close(fd);
	snprintf(line, sizeof(line), "flavor=db.* @%s", path);
	assert_int_equal(policyrule_parse(line, "a:1", &r, &err), 0);
	assert_int_equal(r.annot.topology, POLICY_TOPO_MATCH);
	assert_int_equal(r.annot.ngroups, 1);
	policyrule_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, line);
	/* the groups are checked against each domain's vCPUs */
	struct policy_annotation a;
	assert_int_equal(policyrule_annotation(&r, 8, &a, &err), 0);
	assert_int_equal(a.ngroups, 1);
	assert_int_equal(policyrule_annotation(&r, 2, &a, &err), -1);
	assert_non_null(strstr(err.msg, "policy-rule a:1: "));
	assert_non_null(strstr(err.msg, "group 'db'"));
	assert_int_equal(a.mode, POLICY_MODE_NONE);     /* never half a policy */
	unlink(path);
	snprintf(line, sizeof(line), "flavor=db.* @%s", path);
	assert_int_equal(policyrule_parse(line, "a:1", &r, &err), -1);
	snprintf(buf, sizeof(buf), "'policy-rule': @%s: No such file or directory", path);
	assert_string_equal(err.msg, buf);
}

static void
test_parse_errors(void **state)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "mode=aggregate", "'policy-rule': 'mode=aggregate' does not start with a MATCH (name=GLOB, "
		  "flavor=GLOB, meta={URI}ELEMENT..., namespace=GLOB, label=KEY[=GLOB] or annotation=KEY[=GLOB])" },
		{ "", "'policy-rule': '' does not start with a MATCH (name=GLOB, flavor=GLOB, meta={URI}ELEMENT..., namespace=GLOB, label=KEY[=GLOB] or annotation=KEY[=GLOB])" },
		{ "name=x", "'policy-rule': no policy after 'name=x' (an <llc-policy> element, @FILE or "
		  "mode=... isolation=...)" },
		{ "name=x mode=fast", "'policy-rule': llc-policy: attribute 'mode': 'fast' is not one of none, static, "
		  "aggregate, spread" },
		{ "name=x bogus=1", "'policy-rule': llc-policy: unknown attribute 'bogus' (allowed, without prefix: "
		  "mode, isolation, topology, infer)" },
		{ "name=x static", "'policy-rule': 'static' is not ATTRIBUTE=VALUE (or name=, flavor=, meta=, "
		  "namespace=, label=, annotation= before the policy)" },
		{ "name=x mo:de=static", "'policy-rule': 'mo:de' is not an attribute name" },
		{ "flavor= mode=static", "'policy-rule': flavor= needs a glob (* matches every flavor)" },
		{ "namespace= mode=static", "'policy-rule': namespace= needs a glob (* matches every namespace)" },
		{ "label= mode=static", "'policy-rule': label= needs a key (label=KEY or label=KEY=GLOB)" },
		{ "annotation==x mode=static", "'policy-rule': annotation= needs a key (annotation=KEY or annotation=KEY=GLOB)" },
		{ "label=a*b mode=static", "'policy-rule': label key 'a*b' is not a Kubernetes key (letters, digits, '-', '_', '.', one '/')" },
		{ "name=\"x mode=static", "'policy-rule': a double quote is not closed" },
		{ "meta=project mode=static", "'policy-rule': meta='project' is not "
		  "{NAMESPACE-URI}ELEMENT[@ATTRIBUTE][=GLOB]" },
		{ "meta={}project mode=static", "'policy-rule': meta='{}project': the namespace URI is empty "
		  "(metadata elements always have one)" },
		{ "meta={urn:x} mode=static", "'policy-rule': meta='{urn:x}' names no element after the namespace" },
		{ "meta={urn:x}el@ mode=static", "'policy-rule': meta='{urn:x}el@' names no attribute after '@'" },
		{ "name=x @relative.xml", "'policy-rule': @relative.xml: a policy file is named by an absolute path" },
		{ "name=x @/etc/hostname mode=static", "'policy-rule': 'mode=static' after the policy file "
		  "@/etc/hostname" },
		{ "name=x <llc-policy", "'policy-rule': llc-policy: malformed XML (line 1): Couldn't find end of "
		  "Start Tag llc-policy line 1" },
		{ "name=x <llc-policy xmlns='urn:other' mode='static'/>", NULL },
		{ "name=x name=y name=z name=a name=b name=c name=d name=e name=f mode=static",
		  "'policy-rule': more than 8 MATCHes in one rule" },
	};
	struct policyrule r;
	struct llcd_err err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (policyrule_parse(cases[i].text, "t:1", &r, &err) != -1)
			fail_msg("accepted '%s'", cases[i].text);
		if (cases[i].msg == NULL) {     /* the annotation parser's own words */
			assert_non_null(strstr(err.msg, "'policy-rule': llc-policy"));
			continue;
		}
		if (strcmp(err.msg, cases[i].msg) != 0)
			fail_msg("'%s':\n got  %s\n want %s", cases[i].text, err.msg, cases[i].msg);
	}
}

/* Rules MATCHed against the domain XML fixtures, written the way Nova and
 * KubeVirt write theirs: find()'s result, 0 (the rule matches) or -1. */
static void
test_fixture_matches(void **state)
{
	enum { NOVA, KUBEVIRT, KUBEVIRT_HOOK };
	static const struct {
		const char *file, *name;
	} fx[] = {
		[NOVA] = { "nova-instance.xml", "instance-0000000e" },
		[KUBEVIRT] = { "kubevirt-vmi.xml", "default_vmi-fedora" },
		/* the same after llcd-kubevirt-hook (kubevirt-vmi.json;
		 * tests/packaging/test_kubevirt_hook.sh makes it again) */
		[KUBEVIRT_HOOK] = { "kubevirt-vmi-hook.xml", "default_vmi-fedora" },
	};
	static const struct {
		int fx;
		const char *rule;
		int want;
	} cases[] = {
		/* Nova: the flavor, in the namespace Nova writes (1.1 today, 1.0
		 * before); meta= on its owner and flavor elements */
		{ NOVA, "flavor=m1.llc.* mode=aggregate", 0 },
		{ NOVA, "flavor=m1.llc.large mode=aggregate", 0 },
		{ NOVA, "flavor=m1.small mode=aggregate", -1 },
		{ NOVA, "flavor=M1.LLC.* mode=aggregate", -1 },  /* case matters */
		{ NOVA, "name=instance-* mode=aggregate", 0 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/1.1}project=hpc mode=static", 0 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}project=hp mode=static", -1 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}user@uuid=18509018* mode=static", 0 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}root@type=volume mode=static", -1 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}vcpus=2 mode=static", 0 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}flavor@id mode=static", 0 },
		{ NOVA, "meta={http://openstack.org/xmlns/libvirt/nova/*}flavor@nope mode=static", -1 },
		{ NOVA, "meta={http://kubevirt.io}uid mode=static", -1 },
		/* both MATCHes must hold */
		{ NOVA, "name=instance-* flavor=m1.small mode=aggregate", -1 },
		{ NOVA, "name=default_* flavor=m1.llc.* mode=aggregate", -1 },
		/* KubeVirt: virt-launcher names the domain NAMESPACE_VMINAME and
		 * writes <kubevirt xmlns="http://kubevirt.io"> */
		{ KUBEVIRT, "name=default_* mode=spread", 0 },
		{ KUBEVIRT, "name=*_vmi-* mode=spread", 0 },
		{ KUBEVIRT, "name=prod_* mode=spread", -1 },
		{ KUBEVIRT, "meta={http://kubevirt.io}uid mode=spread", 0 },
		{ KUBEVIRT, "meta={http://kubevirt.io}deletionGracePeriodSeconds=30 mode=spread", 0 },
		{ KUBEVIRT, "meta={http://kubevirt.io}uid=f4686d2c-* mode=spread", 0 },
		{ KUBEVIRT, "flavor=* mode=spread", -1 },
		/* the namespace: the name up to its first '_' */
		{ KUBEVIRT, "namespace=default mode=spread", 0 },
		{ KUBEVIRT, "namespace=def* mode=spread", 0 },
		{ KUBEVIRT, "namespace=default_vmi* mode=spread", -1 },
		{ KUBEVIRT, "namespace=prod mode=spread", -1 },
		/* without the hook the metadata has no labels or annotations */
		{ KUBEVIRT, "label=app mode=spread", -1 },
		{ KUBEVIRT, "annotation=llcd.io/llc-policy mode=spread", -1 },
		/* with it: a key (exact) and a value glob */
		{ KUBEVIRT_HOOK, "label=app mode=spread", 0 },
		{ KUBEVIRT_HOOK, "label=app=db mode=spread", 0 },
		{ KUBEVIRT_HOOK, "label=app=d* mode=spread", 0 },
		{ KUBEVIRT_HOOK, "label=app=web mode=spread", -1 },
		{ KUBEVIRT_HOOK, "label=ap mode=spread", -1 },
		{ KUBEVIRT_HOOK, "label=kubevirt.io/size=large mode=spread", 0 },
		{ KUBEVIRT_HOOK, "label=tier.example.org/class=gold namespace=default mode=spread", 0 },
		{ KUBEVIRT_HOOK, "annotation=llcd.io/llc-policy=aggregate mode=aggregate", 0 },
		{ KUBEVIRT_HOOK, "annotation=llcd.io/llc-policy=spread mode=spread", -1 },
		{ KUBEVIRT_HOOK, "annotation=llcd.io/isolation=core label=app=db mode=aggregate isolation=core", 0 },
		/* a label is not an annotation; the hook copies only llcd.io/ ones */
		{ KUBEVIRT_HOOK, "annotation=app mode=spread", -1 },
		{ KUBEVIRT_HOOK, "annotation=kubectl.kubernetes.io/last-applied-configuration mode=spread", -1 },
		{ KUBEVIRT_HOOK, "meta={urn:llcd:kubevirt:1}pod@namespace=default mode=spread", 0 },
		{ KUBEVIRT_HOOK, "meta={http://kubevirt.io}uid mode=spread", 0 },
	};

	for (size_t f = 0; f < sizeof(fx) / sizeof(fx[0]); f++) {
		char *xml = slurp(fx[f].file);

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (cases[i].fx != (int)f)
				continue;
			int got = find(cases[i].rule, fx[f].name, xml);
			if (got != cases[i].want)
				fail_msg("%s on %s: %d, want %d", cases[i].rule, fx[f].file, got, cases[i].want);
		}
		free(xml);
	}
}

/* Nova: without metadata only name= can match; the older namespace, 1.0,
 * and just the <metadata> element */
static void
test_nova(void **state)
{
	const char *name = "instance-0000000e";

	assert_int_equal(find("flavor=* mode=aggregate", name, NULL), -1);
	assert_int_equal(find("name=instance-* mode=aggregate", name, NULL), 0);

	/* Nova's older namespace, 1.0, and just the <metadata> element */
	static const char v10[] = "<metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.0'>"
	    "<nova:flavor name='m1.llc.small'><nova:vcpus>1</nova:vcpus></nova:flavor></nova:instance></metadata>";
	assert_int_equal(find("flavor=m1.llc.* mode=aggregate", "x", v10), 0);
	/* a flavor outside Nova's namespace, or not in <nova:instance>, is no flavor */
	static const char other[] = "<metadata><x:instance xmlns:x='urn:example'><x:flavor name='m1.llc.small'/>"
	    "</x:instance><nova:flavor xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1' name='m1.llc.a'/>"
	    "</metadata>";
	assert_int_equal(find("flavor=m1.llc.* mode=aggregate", "x", other), -1);
}

/* the first rule that matches wins; -1 when none does */
static void
test_first_match(void **state)
{
	static const char *const lines[] = {
		"name=db-* mode=static",
		"flavor=m1.llc.* mode=aggregate isolation=core",
		"name=instance-* mode=spread",
		"name=* mode=none",
	};
	struct policyrule_set *s = rules(lines, 4);
	char *nova = slurp("nova-instance.xml"), *kv = slurp("kubevirt-vmi.xml");
	struct llcd_err err;

	assert_true(policyrule_set_need_metadata(s));
	assert_int_equal(policyrule_find(s, "instance-0000000e", nova, strlen(nova), &err), 1);
	assert_int_equal(policyrule_find(s, "db-1", nova, strlen(nova), &err), 0);
	assert_int_equal(policyrule_find(s, "default_vmi-fedora", kv, strlen(kv), &err), 3);
	assert_int_equal(policyrule_find(s, "instance-0000000e", NULL, 0, &err), 2);
	assert_int_equal(policyrule_find(NULL, "x", NULL, 0, &err), -1);
	/* malformed or hostile metadata: no rule, and why */
	assert_int_equal(policyrule_find(s, "x", "<domain><metadata>", 18, &err), -2);
	assert_non_null(strstr(err.msg, "domain metadata: malformed XML"));
	static const char doctype[] = "<!DOCTYPE d [<!ENTITY e 'x'>]><domain/>";
	assert_int_equal(policyrule_find(s, "x", doctype, strlen(doctype), &err), -2);
	assert_string_equal(err.msg, "domain metadata: a DOCTYPE is not allowed");
	assert_int_equal(policyrule_find(s, "x", "<other/>", 8, &err), -2);
	assert_string_equal(err.msg, "domain metadata: the root element is <other>, not <domain> or <metadata>");
	/* a set of name= rules never parses the XML */
	static const char *const names[] = { "name=a* mode=static" };
	struct policyrule_set *n = rules(names, 1);
	assert_false(policyrule_set_need_metadata(n));
	assert_int_equal(policyrule_find(n, "ab", "<not xml", 8, &err), 0);
	policyrule_set_free(n);
	policyrule_set_free(s);
	policyrule_set_free(NULL);
	free(nova);
	free(kv);
}

static void
test_set_limit(void **state)
{
	struct policyrule_set *s = policyrule_set_new();
	struct policyrule r;
	struct llcd_err err;

	assert_int_equal(policyrule_parse("name=* mode=static", "t:1", &r, &err), 0);
	for (int i = 0; i < POLICYRULE_MAX; i++)
		assert_int_equal(policyrule_set_add(s, &r, &err), 0);
	assert_int_equal(policyrule_set_add(s, &r, &err), -1);
	assert_string_equal(err.msg, "'policy-rule': more than 64 rules");
	policyrule_set_free(s);
}

TEST_MAIN(
	cmocka_unit_test(test_parse_forms),
	cmocka_unit_test(test_policy_file),
	cmocka_unit_test(test_parse_errors),
	cmocka_unit_test(test_fixture_matches),
	cmocka_unit_test(test_nova),
	cmocka_unit_test(test_first_match),
	cmocka_unit_test(test_set_limit))
