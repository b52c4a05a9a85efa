// SPDX-License-Identifier: GPL-2.0-or-later
/* xmlsafe.c - hardened libxml2 reading (see xmlsafe.h). */
#include "xmlsafe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"

_Static_assert(XMLSAFE_MAX_VCPUS <= CPUSET_MAX, "a vCPU per modelled CPU at most");

static int doctype_seen;        /* only its address is used, as a marker */

static void
refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *eid, const xmlChar *sid)
{
	xmlParserCtxtPtr ctxt = ctx;

	(void)name;
	(void)eid;
	(void)sid;
	ctxt->_private = &doctype_seen;
	xmlStopParser(ctxt);
}

xmlDocPtr
xmlsafe_read(const char *buf, size_t len, size_t max, const char *what, int extra_options,
             struct llcd_err *err)
{
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc = NULL;

	if (len > max) {
		llcd_err_set(err, "%s: %zu bytes, more than the %zu allowed", what, len, max);
		return NULL;
	}
	if (len == 0) {
		llcd_err_set(err, "%s: malformed XML: empty document", what);
		return NULL;
	}
	if (memchr(buf, 0, len) != NULL) {
		/* libxml2 would stop at it and ignore the rest */
		llcd_err_set(err, "%s: contains a NUL byte", what);
		return NULL;
	}
	xmlInitParser();
	ctxt = xmlCreateMemoryParserCtxt(buf, (int)len);
	if (ctxt == NULL) {
		llcd_err_set(err, "%s: out of memory", what);
		return NULL;
	}
	ctxt->sax->internalSubset = refuse_doctype;
	ctxt->sax->externalSubset = NULL;
	ctxt->sax->entityDecl = NULL;
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | extra_options);
	xmlParseDocument(ctxt);
	if (ctxt->_private == &doctype_seen) {
		llcd_err_set(err, "%s: a DOCTYPE is not allowed", what);
	} else if (!ctxt->wellFormed || !ctxt->nsWellFormed || ctxt->myDoc == NULL) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		const char *m = e != NULL && e->message ? e->message : "parse error";
		size_t n = strcspn(m, "\n");

		llcd_err_set(err, "%s: malformed XML (line %d): %.*s", what, e != NULL ? e->line : 0,
		    (int)(n > 200 ? 200 : n), m);
	} else {
		doc = ctxt->myDoc;
		ctxt->myDoc = NULL;
	}
	if (ctxt->myDoc != NULL)
		xmlFreeDoc(ctxt->myDoc);
	xmlFreeParserCtxt(ctxt);
	return doc;
}

xmlDocPtr
xmlsafe_read_domain(const char *xml, size_t len, struct llcd_err *err)
{
	return xmlsafe_read(xml, len, XMLSAFE_DOMAIN_MAX, "domain XML", 0, err);
}

int
xmlsafe_attr_int(const xmlNode *n, const char *name, int lo, int hi, int *out,
                 const char *what, struct llcd_err *err)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	char *end;
	long x;

	if (v == NULL)
		return 0;
	errno = 0;
	x = strtol((const char *)v, &end, 10);
	if (errno || end == (char *)v || *end != '\0' || x < lo || x > hi) {
		llcd_err_set(err, "%s: <%s %s='%.32s'>: not an integer in %d..%d", what, n->name, name,
		    (const char *)v, lo, hi);
		xmlFree(v);
		return -1;
	}
	xmlFree(v);
	*out = (int)x;
	return 0;
}
