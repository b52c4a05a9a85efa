// SPDX-License-Identifier: GPL-2.0-or-later
/* annotation_xml.c - the llc-policy annotation <-> XML (libxml2).
 *
 * The parser validates the whole element into a scratch struct and copies
 * it to the caller only when everything is right, so that an error never
 * leaves a half-meaningful annotation behind (out gets the defaults).
 */
#include "annotation_xml.h"
#include "xmlsafe.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>

#define ROOT "llc-policy"

/* Parser options: no network, no DTD loading or validation, no entity
 * substitution, no XInclude; errors are collected, never printed. */

/* The names of the annotation's enums are the engine's (annotation.h:
 * policy_mode_names, ...); benefit-check is on or off. */
static const char *const on_off_tab[] = { [0] = "off", [1] = "on" };
static const struct llcd_names on_off = { on_off_tab, 2 };

/* The integer knobs of <tune>; "auto" is stored as 0 where allowed. */
struct tune_knob {
	const char *attr;
	size_t off;             /* offsetof(struct policy_tune, ...) */
	int lo, hi;
	bool has_auto;
};

static const struct tune_knob knobs[] = {
	{ "aggr-tolerance", offsetof(struct policy_tune, aggr_tolerance), 0, 100, false },
	{ "overaggr-pct", offsetof(struct policy_tune, overaggr_pct), 1, 100, true },
	{ "imb-pct", offsetof(struct policy_tune, imb_pct), 0, 100, false },
	{ "epoch-ms", offsetof(struct policy_tune, epoch_ms), 1, 60000, true },
	{ "affinity-timeout", offsetof(struct policy_tune, affinity_timeout), 1, 1000, false },
	{ "max-moves", offsetof(struct policy_tune, max_moves), 1, 64, false },
	{ "holddown-s", offsetof(struct policy_tune, holddown_s), 1, 86400, false },
};
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static const char *const root_attrs[] = { "mode", "isolation", "topology", "infer",
	NULL };
static const char *const tune_attrs[] = { "aggr-tolerance", "overaggr-pct",
	"imb-pct", "epoch-ms", "affinity-timeout", "max-moves", "benefit-check",
	"holddown-s", NULL };
static const char *const group_attrs[] = { "name", "vcpus", NULL };

static int *
knob_ptr(struct policy_tune *t, const struct tune_knob *k)
{
	return (int *)(void *)((char *)t + k->off);
}

static int
knob_get(const struct policy_tune *t, const struct tune_knob *k)
{
	int v;

	memcpy(&v, (const char *)t + k->off, sizeof(v));
	return v;
}

static const char *
join_names(const char *const *names, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; *names != NULL; names++) {
		int n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", *names);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	return buf;
}

static bool
in_list(const char *const *names, const char *s)
{
	for (; *names != NULL; names++)
		if (strcmp(*names, s) == 0)
			return true;
	return false;
}

/* At most 64 characters of an untrusted value, for messages. */
#define SHOWN 64
#define SHOW(s) (strlen(s) > SHOWN ? SHOWN : (int)strlen(s)), (s), \
	(strlen(s) > SHOWN ? "..." : "")

static int
enum_error(struct llcd_err *err, const char *where, const char *attr,
    const char *value, const struct llcd_names *allowed)
{
	char list[128];

	llcd_names_list(allowed, list, sizeof(list));
	return llcd_err_set(err, "%s: attribute '%s': '%.*s%s' is not one of %s",
	    where, attr, SHOW(value), list);
}

static int
range_error(struct llcd_err *err, const char *where, const struct tune_knob *k,
    const char *value)
{
	return llcd_err_set(err, "%s: attribute '%s': '%.*s%s' is not an integer "
	    "in %d..%d%s", where, k->attr, SHOW(value), k->lo, k->hi,
	    k->has_auto ? " or auto" : "");
}

/* Strict decimal: digits only, no sign, no space, lo..hi. */
static int
parse_int(const char *s, int lo, int hi, int *out)
{
	long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	if (v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static bool
valid_group_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= POLICY_GROUP_NAME)
		return false;
	for (; *s != '\0'; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static int
name_error(struct llcd_err *err, int idx, const char *value)
{
	return llcd_err_set(err, ROOT ": group #%d: attribute 'name': '%.*s%s' is "
	    "not 1-%d of the characters A-Z a-z 0-9 _ . -", idx + 1, SHOW(value),
	    POLICY_GROUP_NAME - 1);
}

/* "vCPU 8" or "vCPUs 8-11,20" for messages. */
static void
show_vcpus(const struct cpuset *s, char *buf, size_t len)
{
	char list[96];
	int n = snprintf(buf, len, "vCPU%s ", cpuset_count(s) > 1 ? "s" : "");

	if (cpuset_format(s, list, sizeof(list)) < 0)
		memcpy(list + sizeof(list) - 4, "...", 4);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s", list);
}

/* The checks that span groups; shared by the parser and annot_check(). */
static int
check_group(const struct policy_annotation *a, int i, int nvcpus,
    struct llcd_err *err)
{
	const struct policy_group_spec *g = &a->groups[i];
	char shown[128];
	struct cpuset bad;

	if (cpuset_empty(&g->vcpus))
		return llcd_err_set(err, ROOT ": group '%s': attribute 'vcpus' is "
		    "empty (a group needs at least one vCPU)", g->name);
	if (nvcpus > 0 && cpuset_last(&g->vcpus) >= nvcpus) {
		cpuset_zero(&bad);
		for (int c = nvcpus; c < CPUSET_MAX; c++)
			if (cpuset_isset(&g->vcpus, c))
				cpuset_set(&bad, c);
		show_vcpus(&bad, shown, sizeof(shown));
		return llcd_err_set(err, ROOT ": group '%s': attribute 'vcpus': %s "
		    "beyond the domain's %d vCPU%s (0-%d)", g->name, shown, nvcpus,
		    nvcpus > 1 ? "s" : "", nvcpus - 1);
	}
	for (int j = 0; j < i; j++) {
		if (strcmp(a->groups[j].name, g->name) == 0)
			return llcd_err_set(err, ROOT ": group #%d: attribute 'name': "
			    "'%s' is already the name of group #%d (names must be "
			    "unique)", i + 1, g->name, j + 1);
		if (cpuset_intersects(&a->groups[j].vcpus, &g->vcpus)) {
			cpuset_and(&bad, &a->groups[j].vcpus, &g->vcpus);
			show_vcpus(&bad, shown, sizeof(shown));
			return llcd_err_set(err, ROOT ": group '%s': attribute 'vcpus': "
			    "%s also in group '%s' (a vCPU belongs to at most one "
			    "group)", g->name, shown, a->groups[j].name);
		}
	}
	return 0;
}

int
annot_check(const struct policy_annotation *a, int nvcpus, struct llcd_err *err)
{
	char v[16];

	if (a->mode < POLICY_MODE_NONE || a->mode > POLICY_MODE_SPREAD) {
		snprintf(v, sizeof(v), "%d", (int)a->mode);
		return enum_error(err, ROOT, "mode", v, &policy_mode_names);
	}
	if (a->isolation != POLICY_ISO_NONE && a->isolation != POLICY_ISO_CORE) {
		snprintf(v, sizeof(v), "%d", (int)a->isolation);
		return enum_error(err, ROOT, "isolation", v, &policy_isolation_names);
	}
	if (a->topology != POLICY_TOPO_KEEP && a->topology != POLICY_TOPO_MATCH) {
		snprintf(v, sizeof(v), "%d", (int)a->topology);
		return enum_error(err, ROOT, "topology", v, &policy_topology_names);
	}
	if (a->infer != POLICY_INFER_WAKEUPS && a->infer != POLICY_INFER_NONE) {
		snprintf(v, sizeof(v), "%d", (int)a->infer);
		return enum_error(err, ROOT, "infer", v, &policy_infer_names);
	}
	for (size_t k = 0; k < NKNOBS; k++) {
		int x = knob_get(&a->tune, &knobs[k]);

		if (knobs[k].has_auto && x == 0)
			continue;
		if (x < knobs[k].lo || x > knobs[k].hi) {
			snprintf(v, sizeof(v), "%d", x);
			return range_error(err, ROOT ": tune", &knobs[k], v);
		}
	}
	if (a->ngroups < 0 || a->ngroups > POLICY_MAX_GROUPS)
		return llcd_err_set(err, ROOT ": %d groups (at most %d)",
		    a->ngroups, POLICY_MAX_GROUPS);
	for (int i = 0; i < a->ngroups; i++) {
		const char *name = a->groups[i].name;

		if (memchr(name, '\0', POLICY_GROUP_NAME) == NULL)
			return name_error(err, i, "(unterminated)");
		if (!valid_group_name(name))
			return name_error(err, i, name);
		if (check_group(a, i, nvcpus, err) < 0)
			return -1;
	}
	return 0;
}

bool
annot_equal(const struct policy_annotation *a, const struct policy_annotation *b)
{
	if (a->mode != b->mode || a->isolation != b->isolation ||
	    a->topology != b->topology || a->infer != b->infer ||
	    a->ngroups != b->ngroups)
		return false;
	for (size_t k = 0; k < NKNOBS; k++)
		if (knob_get(&a->tune, &knobs[k]) != knob_get(&b->tune, &knobs[k]))
			return false;
	if (a->tune.benefit_check != b->tune.benefit_check)
		return false;
	for (int i = 0; i < a->ngroups && i < POLICY_MAX_GROUPS; i++) {
		if (strncmp(a->groups[i].name, b->groups[i].name, POLICY_GROUP_NAME) != 0 ||
		    !cpuset_equal(&a->groups[i].vcpus, &b->groups[i].vcpus))
			return false;
	}
	return true;
}

/* ---- reading the element ------------------------------------------- */

static bool
is_ours(const xmlNode *n)
{
	return n->ns != NULL && n->ns->href != NULL &&
	    strcmp((const char *)n->ns->href, POLICY_NS) == 0;
}

/* urn:llcd:llc-policy:<anything but 1> */
static bool
is_other_version(const xmlNs *ns)
{
	const char *href;

	if (ns == NULL || ns->href == NULL)
		return false;
	href = (const char *)ns->href;
	return strncmp(href, ANNOT_NS_BASE, strlen(ANNOT_NS_BASE)) == 0 &&
	    strcmp(href, POLICY_NS) != 0;
}

static int
version_error(struct llcd_err *err, const xmlNs *ns)
{
	const char *href = (const char *)ns->href;

	return llcd_err_set(err, ROOT ": unsupported version: namespace "
	    "'%.*s%s' (this llcd reads " POLICY_NS ")", SHOW(href));
}

static bool
blank(const xmlChar *s)
{
	for (; s != NULL && *s != '\0'; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

/* Attributes: unprefixed ones must be in `allowed`; attributes in the llc
 * namespace (any version) are refused; other namespaces are someone
 * else's and ignored. */
static int
check_attrs(const xmlNode *n, const char *where, const char *const *allowed,
    struct llcd_err *err)
{
	char list[160];

	for (const xmlAttr *at = n->properties; at != NULL; at = at->next) {
		const char *name = (const char *)at->name;

		if (at->ns == NULL) {
			if (in_list(allowed, name))
				continue;
		} else if (strncmp((const char *)at->ns->href, ANNOT_NS_BASE,
		    strlen(ANNOT_NS_BASE)) != 0) {
			continue;
		}
		return llcd_err_set(err, "%s: unknown attribute '%s%s%.*s%s' "
		    "(allowed, without prefix: %s)", where,
		    at->ns && at->ns->prefix ? (const char *)at->ns->prefix : "",
		    at->ns && at->ns->prefix ? ":" : "", SHOW(name),
		    join_names(allowed, list, sizeof(list)));
	}
	return 0;
}

/* <tune> and <group> take attributes only. */
static int
check_empty(const xmlNode *n, const char *where, struct llcd_err *err)
{
	for (const xmlNode *c = n->children; c != NULL; c = c->next) {
		if (c->type == XML_ELEMENT_NODE)
			return llcd_err_set(err, "%s: unexpected element '%.*s%s' "
			    "(%s takes attributes only)", where,
			    SHOW((const char *)c->name), (const char *)n->name);
		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) &&
		    !blank(c->content))
			return llcd_err_set(err, "%s: unexpected text (%s takes "
			    "attributes only)", where, (const char *)n->name);
	}
	return 0;
}

/* The unprefixed attribute `name` of n, or NULL; free with xmlFree. */
static char *
attr(const xmlNode *n, const char *name)
{
	return (char *)xmlGetNoNsProp(n, (const xmlChar *)name);
}

static int
parse_enum_attr(const xmlNode *n, const char *where, const char *name,
    const struct llcd_names *allowed, int *out, struct llcd_err *err)
{
	char *v = attr(n, name);
	long x;
	int rc = 0;

	if (v == NULL)
		return 0;
	if ((x = llcd_from_name(allowed, v)) < 0)
		rc = enum_error(err, where, name, v, allowed);
	else
		*out = (int)x;
	xmlFree(v);
	return rc;
}

static int
parse_tune(const xmlNode *n, struct policy_tune *t, struct llcd_err *err)
{
	const char *where = ROOT ": tune";
	int on;

	if (check_attrs(n, where, tune_attrs, err) < 0 ||
	    check_empty(n, where, err) < 0)
		return -1;
	for (size_t k = 0; k < NKNOBS; k++) {
		char *v = attr(n, knobs[k].attr);
		int rc = 0;

		if (v == NULL)
			continue;
		if (knobs[k].has_auto && strcmp(v, "auto") == 0)
			*knob_ptr(t, &knobs[k]) = 0;
		else if (parse_int(v, knobs[k].lo, knobs[k].hi, knob_ptr(t, &knobs[k])) < 0)
			rc = range_error(err, where, &knobs[k], v);
		xmlFree(v);
		if (rc < 0)
			return -1;
	}
	on = t->benefit_check;
	if (parse_enum_attr(n, where, "benefit-check", &on_off, &on, err) < 0)
		return -1;
	t->benefit_check = on;
	return 0;
}

static int
parse_group(const xmlNode *n, struct policy_annotation *a, int nvcpus,
    struct llcd_err *err)
{
	int i = a->ngroups;
	struct policy_group_spec *g = &a->groups[i];
	char where[64], *name = NULL, *vcpus = NULL;
	int rc = -1;

	snprintf(where, sizeof(where), ROOT ": group #%d", i + 1);
	if (check_attrs(n, where, group_attrs, err) < 0 ||
	    check_empty(n, where, err) < 0)
		goto cleanup;
	name = attr(n, "name");
	if (name == NULL) {
		llcd_err_set(err, "%s: missing attribute 'name'", where);
		goto cleanup;
	}
	if (!valid_group_name(name)) {
		name_error(err, i, name);
		goto cleanup;
	}
	memcpy(g->name, name, strlen(name) + 1);
	snprintf(where, sizeof(where), ROOT ": group '%s'", g->name);
	vcpus = attr(n, "vcpus");
	if (vcpus == NULL) {
		llcd_err_set(err, "%s: missing attribute 'vcpus'", where);
		goto cleanup;
	}
	if (cpuset_parse(&g->vcpus, vcpus, err) < 0) {
		llcd_err_prefix(err, "%s: attribute 'vcpus'", where);
		goto cleanup;
	}
	if (check_group(a, i, nvcpus, err) < 0)
		goto cleanup;
	a->ngroups++;
	rc = 0;
cleanup:
	xmlFree(name);
	xmlFree(vcpus);
	return rc;
}

/* The <llc-policy> element itself (already known to be in our namespace). */
static int
parse_element(const xmlNode *root, int nvcpus, struct policy_annotation *a,
    struct llcd_err *err)
{
	int v, ntune = 0;

	policy_annotation_defaults(a);
	if (strcmp((const char *)root->name, ROOT) != 0)
		return llcd_err_set(err, ROOT ": unknown element '%.*s%s' (expected "
		    ROOT ")", SHOW((const char *)root->name));
	if (check_attrs(root, ROOT, root_attrs, err) < 0)
		return -1;
	/* a named attribute into its enum member (kept when absent) */
#define ENUM_ATTR(member, attr, names)                                                  \
	do {                                                                            \
		v = a->member;                                                          \
		if (parse_enum_attr(root, ROOT, attr, &names, &v, err) < 0)             \
			return -1;                                                      \
		a->member = v;                                                          \
	} while (0)
	ENUM_ATTR(mode, "mode", policy_mode_names);
	ENUM_ATTR(isolation, "isolation", policy_isolation_names);
	ENUM_ATTR(topology, "topology", policy_topology_names);
	ENUM_ATTR(infer, "infer", policy_infer_names);
#undef ENUM_ATTR

	for (const xmlNode *c = root->children; c != NULL; c = c->next) {
		const char *name = (const char *)c->name;

		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) &&
		    !blank(c->content))
			return llcd_err_set(err, ROOT ": unexpected text (allowed "
			    "content: tune, group elements)");
		if (c->type != XML_ELEMENT_NODE)
			continue;               /* comments, processing instructions */
		if (c->ns == NULL)
			return llcd_err_set(err, ROOT ": element '%.*s%s' has no "
			    "namespace (write it in " POLICY_NS ", e.g. llc:%.*s%s)",
			    SHOW(name), SHOW(name));
		if (is_other_version(c->ns))
			return version_error(err, c->ns);
		if (!is_ours(c))
			continue;               /* another application's extension */
		if (strcmp(name, "tune") == 0) {
			if (++ntune > 1)
				return llcd_err_set(err, ROOT ": more than one tune "
				    "element (at most one)");
			if (parse_tune(c, &a->tune, err) < 0)
				return -1;
		} else if (strcmp(name, "group") == 0) {
			if (a->ngroups >= POLICY_MAX_GROUPS)
				return llcd_err_set(err, ROOT ": more than %d group "
				    "elements", POLICY_MAX_GROUPS);
			if (parse_group(c, a, nvcpus, err) < 0)
				return -1;
		} else {
			return llcd_err_set(err, ROOT ": unknown element '%.*s%s' "
			    "(allowed: tune, group)", SHOW(name));
		}
	}
	return 0;
}

/* Parse a whole document; a DOCTYPE stops the parser before any of its
 * declarations are read. */
static xmlDocPtr
read_doc(const char *buf, size_t len, size_t max, const char *what,
    struct llcd_err *err)
{
	return xmlsafe_read(buf, len, max, what, XML_PARSE_NOCDATA, err);
}

static int
parse_root(const xmlNode *root, int nvcpus, struct policy_annotation *out,
    struct llcd_err *err)
{
	struct policy_annotation *a;
	int rc;

	if (is_other_version(root->ns))
		return version_error(err, root->ns);
	if (!is_ours(root)) {
		const char *href = root->ns ? (const char *)root->ns->href : "";

		return llcd_err_set(err, ROOT ": element '%.*s%s' is in namespace "
		    "'%.*s%s', not " POLICY_NS, SHOW((const char *)root->name),
		    SHOW(href));
	}
	/* The struct is ~17 KiB (64 cpusets): keep it off the stack. */
	a = malloc(sizeof(*a));
	if (a == NULL)
		return llcd_err_set(err, ROOT ": out of memory");
	rc = parse_element(root, nvcpus, a, err);
	if (rc == 0)
		memcpy(out, a, sizeof(*a));
	free(a);
	return rc;
}

/* What virDomainGetMetadata() returns has its namespace stripped: put
 * elements without a namespace into ours, as libvirt does on the way in. */
static int
inject_ns(xmlNodePtr root, struct llcd_err *err)
{
	xmlNsPtr ns;

	if (root->ns != NULL)
		return 0;
	ns = xmlNewNs(root, (const xmlChar *)POLICY_NS, NULL);
	if (ns == NULL)
		return llcd_err_set(err, ROOT ": cannot put the element into "
		    "namespace " POLICY_NS);
	xmlSetNs(root, ns);
	for (xmlNodePtr c = root->children; c != NULL; c = c->next)
		if (c->type == XML_ELEMENT_NODE && c->ns == NULL)
			xmlSetNs(c, ns);
	return 0;
}

static int
parse_standalone(const char *xml, size_t len, int nvcpus, bool implied_ns,
    struct policy_annotation *out, struct llcd_err *err)
{
	xmlDocPtr doc;
	int rc;

	policy_annotation_defaults(out);
	doc = read_doc(xml, len, ANNOT_XML_MAX, ROOT, err);
	if (doc == NULL)
		return -1;
	rc = implied_ns ? inject_ns(xmlDocGetRootElement(doc), err) : 0;
	if (rc == 0)
		rc = parse_root(xmlDocGetRootElement(doc), nvcpus, out, err);
	xmlFreeDoc(doc);
	if (rc < 0)
		policy_annotation_defaults(out);
	return rc;
}

int
annot_parse(const char *xml, size_t len, int nvcpus,
    struct policy_annotation *out, struct llcd_err *err)
{
	return parse_standalone(xml, len, nvcpus, false, out, err);
}

int
annot_parse_metadata(const char *xml, size_t len, int nvcpus,
    struct policy_annotation *out, struct llcd_err *err)
{
	return parse_standalone(xml, len, nvcpus, true, out, err);
}

static const xmlNode *
child(const xmlNode *n, const char *name)
{
	for (const xmlNode *c = n->children; c != NULL; c = c->next)
		if (c->type == XML_ELEMENT_NODE && c->ns == NULL &&
		    strcmp((const char *)c->name, name) == 0)
			return c;
	return NULL;
}

/* <vcpu placement='static' current='4'>8</vcpu>: 8 bounds the vCPU
 * numbers; without the element libvirt's default is 1. */
static int
domain_vcpus(const xmlNode *dom, int *nvcpus, struct llcd_err *err)
{
	const xmlNode *v = child(dom, "vcpu");
	char *text, *s, *e;
	int rc;

	*nvcpus = 1;
	if (v == NULL)
		return 0;
	text = (char *)xmlNodeGetContent(v);
	if (text == NULL)
		return llcd_err_set(err, "domain XML: out of memory");
	for (s = text; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'; s++)
		;
	for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' ||
	    e[-1] == '\n' || e[-1] == '\r'); e--)
		;
	*e = '\0';
	rc = parse_int(s, 1, INT_MAX, nvcpus);
	if (rc < 0)
		llcd_err_set(err, "domain XML: element 'vcpu': '%.*s%s' is not a "
		    "vCPU count (an integer >= 1)", SHOW(s));
	else if (*nvcpus > XMLSAFE_MAX_VCPUS)
		rc = llcd_err_set(err, "domain XML: element 'vcpu': %d vCPUs, more than the %d "
		    "llcd reads", *nvcpus, XMLSAFE_MAX_VCPUS);
	xmlFree(text);
	if (rc < 0)
		*nvcpus = 1;
	return rc;
}

int
annot_from_domain_xml(const char *domxml, size_t len, int *nvcpus_out,
    bool *found, struct policy_annotation *out, struct llcd_err *err)
{
	const xmlNode *dom, *md, *hit = NULL;
	xmlDocPtr doc;
	int nvcpus = 0, rc = -1;

	policy_annotation_defaults(out);
	if (found != NULL)
		*found = false;
	if (nvcpus_out != NULL)
		*nvcpus_out = 0;
	doc = read_doc(domxml, len, ANNOT_DOMAIN_XML_MAX, "domain XML", err);
	if (doc == NULL)
		return -1;
	dom = xmlDocGetRootElement(doc);
	if (dom->ns != NULL || strcmp((const char *)dom->name, "domain") != 0) {
		llcd_err_set(err, "domain XML: root element is '%.*s%s', not "
		    "'domain'", SHOW((const char *)dom->name));
		goto cleanup;
	}
	if (domain_vcpus(dom, &nvcpus, err) < 0)
		goto cleanup;
	if (nvcpus_out != NULL)
		*nvcpus_out = nvcpus;
	md = child(dom, "metadata");
	for (const xmlNode *c = md ? md->children : NULL; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (!is_ours(c) && !is_other_version(c->ns))
			continue;               /* another application's metadata */
		if (hit != NULL) {
			if (found != NULL)
				*found = true;
			llcd_err_set(err, ROOT ": more than one element in namespace "
			    ANNOT_NS_BASE "* in <metadata> (at most one)");
			goto cleanup;
		}
		hit = c;
	}
	if (hit == NULL) {
		rc = 0;
		goto cleanup;
	}
	if (found != NULL)
		*found = true;
	rc = parse_root(hit, nvcpus, out, err);
cleanup:
	xmlFreeDoc(doc);
	if (rc < 0)
		policy_annotation_defaults(out);
	return rc;
}

/* ---- writing it back ------------------------------------------------ */

struct outbuf {
	char *buf;
	size_t len, off;
	bool overflow;
};

static void
put(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off)
		o->overflow = true;
	else
		o->off += (size_t)n;
}

static int
format(const struct policy_annotation *a, bool prefixed, char *buf,
    size_t len, struct llcd_err *err)
{
	const char *pfx = prefixed ? ANNOT_NS_PREFIX ":" : "";
	struct outbuf o = { buf, len, 0, false };
	struct policy_tune def;
	char list[ANNOT_XML_MAX / 4];
	bool tune = false;

	if (len == 0)
		return llcd_err_set(err, ROOT ": no room to format the annotation");
	buf[0] = '\0';
	if (annot_check(a, 0, err) < 0)
		return -1;
	policy_tune_defaults(&def);
	if (prefixed)
		put(&o, "<" ANNOT_NS_PREFIX ":" ROOT " xmlns:" ANNOT_NS_PREFIX "=\""
		    POLICY_NS "\"");
	else
		put(&o, "<" ROOT " xmlns=\"" POLICY_NS "\"");
	if (a->mode != POLICY_MODE_NONE)
		put(&o, " mode=\"%s\"", policy_mode_name(a->mode));
	if (a->isolation != POLICY_ISO_NONE)
		put(&o, " isolation=\"%s\"", policy_isolation_name(a->isolation));
	if (a->topology != POLICY_TOPO_KEEP)
		put(&o, " topology=\"%s\"", policy_topology_name(a->topology));
	if (a->infer != POLICY_INFER_WAKEUPS)
		put(&o, " infer=\"%s\"", policy_infer_name(a->infer));
	for (size_t k = 0; k < NKNOBS; k++)
		tune |= knob_get(&a->tune, &knobs[k]) != knob_get(&def, &knobs[k]);
	tune |= a->tune.benefit_check != def.benefit_check;
	if (!tune && a->ngroups == 0) {
		put(&o, "/>");
		goto done;
	}
	put(&o, ">");
	if (tune) {
		put(&o, "<%stune", pfx);
		for (size_t k = 0; k < NKNOBS; k++) {
			int v = knob_get(&a->tune, &knobs[k]);

			if (v == knob_get(&def, &knobs[k]))
				continue;
			if (knobs[k].has_auto && v == 0)
				put(&o, " %s=\"auto\"", knobs[k].attr);
			else
				put(&o, " %s=\"%d\"", knobs[k].attr, v);
		}
		if (a->tune.benefit_check != def.benefit_check)
			put(&o, " benefit-check=\"%s\"", a->tune.benefit_check ? "on" : "off");
		put(&o, "/>");
	}
	for (int i = 0; i < a->ngroups; i++) {
		if (cpuset_format(&a->groups[i].vcpus, list, sizeof(list)) < 0) {
			o.overflow = true;
			break;
		}
		/* Names and CPU lists need no escaping: annot_check() passed. */
		put(&o, "<%sgroup name=\"%s\" vcpus=\"%s\"/>", pfx,
		    a->groups[i].name, list);
	}
	put(&o, "</%s" ROOT ">", pfx);
done:
	if (o.overflow) {
		buf[0] = '\0';
		return llcd_err_set(err, ROOT ": the annotation does not fit in %zu "
		    "bytes", len);
	}
	return 0;
}

int
annot_format(const struct policy_annotation *a, char *buf, size_t len,
    struct llcd_err *err)
{
	return format(a, true, buf, len, err);
}

int
annot_format_metadata(const struct policy_annotation *a, char *buf, size_t len,
    struct llcd_err *err)
{
	return format(a, false, buf, len, err);
}
