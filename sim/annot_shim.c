/* annot_shim.c - stand-in for policy/annotation_xml.c until it lands. */
#include "annot_shim.h"

#ifdef LLCSIM_ANNOT_SHIM
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

static int
attr(xmlNode *n, const char *name, char *buf, size_t len)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int rc;

	if (v == NULL)
		return 0;
	rc = snprintf(buf, len, "%s", (const char *)v) < (int)len ? 1 : -1;
	xmlFree(v);
	return rc;
}

int
annot_parse(const char *xml, size_t len, int nvcpus, struct policy_annotation *out,
            struct llcd_err *err)
{
	xmlDoc *doc = xmlReadMemory(xml, (int)len, "llc-policy.xml", NULL,
	    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNode *root;
	char buf[256];
	int rc = -1;

	policy_annotation_defaults(out);
	if (doc == NULL)
		return llcd_err_set(err, "llc-policy: not well-formed XML");
	root = xmlDocGetRootElement(doc);
	if (root == NULL || strcmp((const char *)root->name, "llc-policy") != 0 ||
	    root->ns == NULL || strcmp((const char *)root->ns->href, POLICY_NS) != 0) {
		llcd_err_set(err, "llc-policy: root must be <llc-policy xmlns='%s'>", POLICY_NS);
		goto out;
	}
	if (attr(root, "mode", buf, sizeof(buf)) > 0) {
		if (strcmp(buf, "none") == 0) out->mode = POLICY_MODE_NONE;
		else if (strcmp(buf, "static") == 0) out->mode = POLICY_MODE_STATIC;
		else if (strcmp(buf, "aggregate") == 0) out->mode = POLICY_MODE_AGGREGATE;
		else if (strcmp(buf, "spread") == 0) out->mode = POLICY_MODE_SPREAD;
		else {
			llcd_err_set(err, "llc-policy: mode: unknown value '%s'", buf);
			goto out;
		}
	}
	if (attr(root, "isolation", buf, sizeof(buf)) > 0) {
		if (strcmp(buf, "core") == 0) out->isolation = POLICY_ISO_CORE;
		else if (strcmp(buf, "none") == 0) out->isolation = POLICY_ISO_NONE;
		else {
			llcd_err_set(err, "llc-policy: isolation: unknown value '%s'", buf);
			goto out;
		}
	}
	if (attr(root, "topology", buf, sizeof(buf)) > 0)
		out->topology = strcmp(buf, "match") == 0 ? POLICY_TOPO_MATCH : POLICY_TOPO_KEEP;
	for (xmlNode *n = root->children; n; n = n->next) {
		struct policy_group_spec *g;
		if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "group") != 0)
			continue;
		if (out->ngroups == POLICY_MAX_GROUPS) {
			llcd_err_set(err, "llc-policy: more than %d groups", POLICY_MAX_GROUPS);
			goto out;
		}
		g = &out->groups[out->ngroups];
		if (attr(n, "name", g->name, sizeof(g->name)) <= 0) {
			llcd_err_set(err, "llc-policy: group: name missing or too long");
			goto out;
		}
		if (attr(n, "vcpus", buf, sizeof(buf)) <= 0 || cpuset_parse(&g->vcpus, buf, err) < 0 ||
		    cpuset_last(&g->vcpus) >= nvcpus) {
			llcd_err_set(err, "llc-policy: group '%s': vcpus missing or out of range", g->name);
			goto out;
		}
		out->ngroups++;
	}
	rc = 0;
out:
	xmlFreeDoc(doc);
	return rc;
}
#else
typedef int llcsim_annot_shim_unused;
#endif
