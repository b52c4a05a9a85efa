// SPDX-License-Identifier: GPL-2.0-or-later
/* policyrule.c - llcd.conf's policy-rule (see policyrule.h). */
#include "policyrule.h"
#include "alloc.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "annotation_xml.h"
#include "xmlsafe.h"

#define WHO "'policy-rule'"
#define MAX_DEPTH 64

/* One token of the line: up to whitespace outside double quotes, which
 * are removed. *p moves past it. */
static int
token(const char **p, char *out, size_t len, struct llcd_err *err)
{
	const char *s = *p;
	size_t n = 0;
	bool quoted = false;

	while (*s && (quoted || !isspace((unsigned char)*s))) {
		if (*s == '"') {
			quoted = !quoted;
			s++;
			continue;
		}
		if (n + 1 >= len)
			return llcd_err_set(err, WHO ": a value longer than %zu characters", len - 1);
		out[n++] = *s++;
	}
	if (quoted)
		return llcd_err_set(err, WHO ": a double quote is not closed");
	out[n] = '\0';
	*p = s;
	return 0;
}

static const char *
skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static int
copy(char *dst, size_t len, const char *src, size_t n, const char *what, struct llcd_err *err)
{
	if (n >= len)
		return llcd_err_set(err, WHO ": %s longer than %zu characters", what, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* meta={URI}ELEMENT[@ATTR][=GLOB] (the part after "meta=") */
static int
parse_meta(const char *v, struct policyrule_match *m, struct llcd_err *err)
{
	const char *rb, *el, *at, *eq;

	if (v[0] != '{' || (rb = strchr(v, '}')) == NULL)
		return llcd_err_set(err, WHO ": meta='%s' is not {NAMESPACE-URI}ELEMENT[@ATTRIBUTE][=GLOB]", v);
	if (rb == v + 1)
		return llcd_err_set(err, WHO ": meta='%s': the namespace URI is empty (metadata elements "
		    "always have one)", v);
	if (copy(m->ns, sizeof(m->ns), v + 1, (size_t)(rb - v - 1), "a namespace URI", err) < 0)
		return -1;
	el = rb + 1;
	size_t n = strcspn(el, "@=");
	if (n == 0)
		return llcd_err_set(err, WHO ": meta='%s' names no element after the namespace", v);
	if (copy(m->element, sizeof(m->element), el, n, "an element name", err) < 0)
		return -1;
	at = el + n;
	if (*at == '@') {
		size_t k = strcspn(at + 1, "=");
		if (k == 0)
			return llcd_err_set(err, WHO ": meta='%s' names no attribute after '@'", v);
		if (copy(m->attr, sizeof(m->attr), at + 1, k, "an attribute name", err) < 0)
			return -1;
		eq = at + 1 + k;
	} else {
		eq = at;
	}
	if (*eq == '=') {
		m->has_value = true;
		if (copy(m->glob, sizeof(m->glob), eq + 1, strlen(eq + 1), "a glob", err) < 0)
			return -1;
	}
	return 0;
}

/* label=KEY[=GLOB], annotation=KEY[=GLOB] (the part after "label=") */
static int
parse_kv_match(const char *what, const char *v, struct policyrule_match *m, struct llcd_err *err)
{
	size_t n = strcspn(v, "=");

	if (n == 0)
		return llcd_err_set(err, WHO ": %s= needs a key (%s=KEY or %s=KEY=GLOB)", what, what, what);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("-_./", v[i]))
			return llcd_err_set(err, WHO ": %s key '%.*s' is not a Kubernetes key (letters, digits, "
			    "'-', '_', '.', one '/')", what, (int)n, v);
	if (copy(m->key, sizeof(m->key), v, n, "a key", err) < 0)
		return -1;
	if (v[n] == '=') {
		m->has_value = true;
		if (copy(m->glob, sizeof(m->glob), v + n + 1, strlen(v + n + 1), "a glob", err) < 0)
			return -1;
	}
	return 0;
}

/* a token KEY=VALUE into k and v (pointing into tok) */
static bool
split_kv(char *tok, char **k, char **v)
{
	char *eq = strchr(tok, '=');

	if (eq == NULL || eq == tok)
		return false;
	*eq = '\0';
	*k = tok;
	*v = eq + 1;
	return true;
}

static void __attribute__((format(printf, 3, 4)))
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	if (n < len)
		vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* a value as llcd.conf reads it back: quoted when it holds a space */
static const char *
quote(const char *v, char *buf, size_t len)
{
	bool space = false;

	for (const char *p = v; *p; p++)
		space |= isspace((unsigned char)*p) != 0;
	if (!space && *v)
		return v;
	snprintf(buf, len, "\"%s\"", v);
	return buf;
}

static void
format_match(const struct policyrule_match *m, char *buf, size_t len)
{
	char v[700], q[710];

	switch (m->kind) {
	case POLICYRULE_NAME:
		snprintf(buf, len, "name=%s", quote(m->glob, q, sizeof(q)));
		return;
	case POLICYRULE_FLAVOR:
		snprintf(buf, len, "flavor=%s", quote(m->glob, q, sizeof(q)));
		return;
	case POLICYRULE_META:
		snprintf(v, sizeof(v), "{%s}%s%s%s%s%s", m->ns, m->element, m->attr[0] ? "@" : "", m->attr,
		    m->has_value ? "=" : "", m->has_value ? m->glob : "");
		snprintf(buf, len, "meta=%s", quote(v, q, sizeof(q)));
		return;
	case POLICYRULE_NAMESPACE:
		snprintf(buf, len, "namespace=%s", quote(m->glob, q, sizeof(q)));
		return;
	case POLICYRULE_LABEL:
	case POLICYRULE_ANNOTATION:
		snprintf(v, sizeof(v), "%s%s%s", m->key, m->has_value ? "=" : "", m->has_value ? m->glob : "");
		snprintf(buf, len, "%s=%s", m->kind == POLICYRULE_LABEL ? "label" : "annotation", quote(v, q, sizeof(q)));
		return;
	}
}

/* the XML of an attribute value: ", <, & escaped */
static int
xml_attr(char *buf, size_t len, const char *v, struct llcd_err *err)
{
	size_t n = strlen(buf);

	for (; *v; v++) {
		const char *e = *v == '"' ? "&quot;" : *v == '<' ? "&lt;" : *v == '&' ? "&amp;" : NULL;
		size_t k = e ? strlen(e) : 1;
		if (n + k + 1 >= len)
			return llcd_err_set(err, WHO ": the policy is too long");
		memcpy(buf + n, e ? e : v, k);
		n += k;
	}
	buf[n] = '\0';
	return 0;
}

static char *
read_policy_file(const char *path, size_t *lenp, struct llcd_err *err)
{
	FILE *f;
	char *buf;
	size_t n;

	if (path[0] != '/') {
		llcd_err_set(err, WHO ": @%s: a policy file is named by an absolute path", path);
		return NULL;
	}
	if ((f = fopen(path, "re")) == NULL) {
		llcd_err_set(err, WHO ": @%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((buf = malloc(ANNOT_XML_MAX + 1)) == NULL) {
		fclose(f);
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	n = fread(buf, 1, ANNOT_XML_MAX + 1, f);
	if (ferror(f) || n > ANNOT_XML_MAX) {
		llcd_err_set(err, WHO ": @%s: %s", path, ferror(f) ? "read error" : "more than 64 KiB");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*lenp = n;
	return buf;
}

int
policyrule_parse(const char *text, const char *where, struct policyrule *r, struct llcd_err *err)
{
	const char *p = skip_space(text);
	char tok[POLICYRULE_TEXT], xml[2 * POLICYRULE_TEXT], one[POLICYRULE_TEXT];
	char *file = NULL;
	size_t xlen = 0;
	struct llcd_err e2;
	int rc;

	memset(r, 0, sizeof(*r));
	policy_annotation_defaults(&r->annot);
	snprintf(r->where, sizeof(r->where), "%s", where ? where : "");
	/* the MATCHes */
	for (;;) {
		const char *save = p;
		char *k, *v;
		if (*p == '\0' || *p == '<' || *p == '@')
			break;
		if (token(&p, tok, sizeof(tok), err) < 0)
			return -1;
		if (!split_kv(tok, &k, &v) || (strcmp(k, "name") && strcmp(k, "flavor") && strcmp(k, "meta") &&
		    strcmp(k, "namespace") && strcmp(k, "label") && strcmp(k, "annotation"))) {
			p = save;       /* the policy's attributes start here */
			break;
		}
		if (r->nmatch == POLICYRULE_MATCHES)
			return llcd_err_set(err, WHO ": more than %d MATCHes in one rule", POLICYRULE_MATCHES);
		struct policyrule_match *m = &r->m[r->nmatch];
		if (!strcmp(k, "meta")) {
			m->kind = POLICYRULE_META;
			if (parse_meta(v, m, err) < 0)
				return -1;
		} else if (!strcmp(k, "label") || !strcmp(k, "annotation")) {
			m->kind = !strcmp(k, "label") ? POLICYRULE_LABEL : POLICYRULE_ANNOTATION;
			if (parse_kv_match(k, v, m, err) < 0)
				return -1;
		} else if (!strcmp(k, "namespace")) {
			m->kind = POLICYRULE_NAMESPACE;
			if (*v == '\0')
				return llcd_err_set(err, WHO ": namespace= needs a glob (* matches every namespace)");
			if (copy(m->glob, sizeof(m->glob), v, strlen(v), "a glob", err) < 0)
				return -1;
		} else {
			m->kind = !strcmp(k, "name") ? POLICYRULE_NAME : POLICYRULE_FLAVOR;
			if (*v == '\0')
				return llcd_err_set(err, WHO ": %s= needs a glob (* matches every %s)", k,
				    m->kind == POLICYRULE_NAME ? "name" : "flavor");
			if (copy(m->glob, sizeof(m->glob), v, strlen(v), "a glob", err) < 0)
				return -1;
		}
		r->need_metadata |= m->kind != POLICYRULE_NAME && m->kind != POLICYRULE_NAMESPACE;
		format_match(m, one, sizeof(one));
		append(r->match, sizeof(r->match), "%s%s", r->match[0] ? " " : "", one);
		r->nmatch++;
		p = skip_space(p);
	}
	if (r->nmatch == 0)
		return llcd_err_set(err, WHO ": '%.64s' does not start with a MATCH (name=GLOB, flavor=GLOB, "
		    "meta={URI}ELEMENT..., namespace=GLOB, label=KEY[=GLOB] or annotation=KEY[=GLOB])", p);
	if (*p == '\0')
		return llcd_err_set(err, WHO ": no policy after '%s' (an <llc-policy> element, @FILE or "
		    "mode=... isolation=...)", r->match);
	/* the POLICY */
	if (*p == '<') {
		snprintf(xml, sizeof(xml), "%s", p);
		xlen = strlen(xml);
	} else if (*p == '@') {
		if (token(&p, tok, sizeof(tok), err) < 0)
			return -1;
		if (*skip_space(p) != '\0')
			return llcd_err_set(err, WHO ": '%.64s' after the policy file %s", skip_space(p), tok);
		if (strlen(tok) >= sizeof(r->source))
			return llcd_err_set(err, WHO ": a policy file name longer than %zu characters",
			    sizeof(r->source) - 2);
		if ((file = read_policy_file(tok + 1, &xlen, err)) == NULL)
			return -1;
		snprintf(r->source, sizeof(r->source), "%.*s", (int)sizeof(r->source) - 1, tok);
	} else {
		snprintf(xml, sizeof(xml), "<llc-policy xmlns=\"%s\"", POLICY_NS);
		while (*p) {
			char *k, *v;
			if (token(&p, tok, sizeof(tok), err) < 0)
				return -1;
			if (!split_kv(tok, &k, &v))
				return llcd_err_set(err, WHO ": '%s' is not ATTRIBUTE=VALUE (or name=, flavor=, meta=, "
				    "namespace=, label=, annotation= before the policy)", tok);
			for (const char *c = k; *c; c++)
				if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
					return llcd_err_set(err, WHO ": '%s' is not an attribute name", k);
			append(xml, sizeof(xml), " %s=\"", k);
			if (xml_attr(xml, sizeof(xml), v, err) < 0)
				return -1;
			append(xml, sizeof(xml), "\"");
			p = skip_space(p);
		}
		append(xml, sizeof(xml), "/>");
		xlen = strlen(xml);
	}
	rc = annot_parse(file ? file : xml, xlen, 0, &r->annot, &e2);
	free(file);
	if (rc < 0)
		return llcd_err_set(err, WHO ": %s", e2.msg);
	if (annot_format(&r->annot, r->policy, sizeof(r->policy), &e2) < 0)
		return llcd_err_set(err, WHO ": the policy is longer than %d characters written out",
		    POLICYRULE_TEXT - 1);
	return 0;
}

void
policyrule_format(const struct policyrule *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", r->match, r->source[0] ? r->source : r->policy);
}

LLCD_DEFINE_NEW(policyrule_set_new, struct policyrule_set)

void
policyrule_set_free(struct policyrule_set *s)
{
	if (s == NULL)
		return;
	free(s->r);
	free(s);
}

int
policyrule_set_add(struct policyrule_set *s, const struct policyrule *r, struct llcd_err *err)
{
	struct policyrule *n;

	if (s->n >= POLICYRULE_MAX)
		return llcd_err_set(err, WHO ": more than %d rules", POLICYRULE_MAX);
	if ((n = realloc(s->r, sizeof(*n) * (size_t)(s->n + 1))) == NULL)
		return llcd_err_set(err, "out of memory");
	s->r = n;
	s->r[s->n++] = *r;
	return 0;
}

bool
policyrule_set_need_metadata(const struct policyrule_set *s)
{
	for (int i = 0; s != NULL && i < s->n; i++)
		if (s->r[i].need_metadata)
			return true;
	return false;
}

/* --- matching ------------------------------------------------------------------ */

static bool
glob(const char *pattern, const char *s)
{
	return s != NULL && fnmatch(pattern, s, 0) == 0;
}

/* the whitespace-trimmed text of n */
static bool
text_matches(const xmlNode *n, const char *pattern)
{
	xmlChar *t = xmlNodeGetContent(n);
	bool ok = false;

	if (t != NULL) {
		char *s = (char *)t, *e;
		while (isspace((unsigned char)*s))
			s++;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		ok = glob(pattern, s);
		xmlFree(t);
	}
	return ok;
}

static bool
element_matches(const struct policyrule_match *m, const xmlNode *n)
{
	/* the element's name first: short, and it rules out most elements */
	if (n->ns == NULL || n->ns->href == NULL || !glob(m->element, (const char *)n->name) ||
	    !glob(m->ns, (const char *)n->ns->href))
		return false;
	if (m->attr[0]) {
		xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)m->attr);
		bool ok = v != NULL && (!m->has_value || glob(m->glob, (const char *)v));
		xmlFree(v);
		return ok;
	}
	return !m->has_value || text_matches(n, m->glob);
}

static bool
meta_walk(const struct policyrule_match *m, const xmlNode *n, int depth)
{
	if (depth > MAX_DEPTH)
		return false;
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (element_matches(m, n) || meta_walk(m, n->children, depth + 1))
			return true;
	}
	return false;
}

static bool
is_nova(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && n->ns != NULL && n->ns->href != NULL &&
	    strncmp((const char *)n->ns->href, POLICYRULE_NOVA_NS, strlen(POLICYRULE_NOVA_NS)) == 0 &&
	    strcmp((const char *)n->name, name) == 0;
}

static bool
flavor_matches(const char *pattern, const xmlNode *meta)
{
	for (const xmlNode *i = meta->children; i != NULL; i = i->next) {
		if (!is_nova(i, "instance"))
			continue;
		for (const xmlNode *f = i->children; f != NULL; f = f->next) {
			if (!is_nova(f, "flavor"))
				continue;
			xmlChar *v = xmlGetNoNsProp(f, (const xmlChar *)"name");
			bool ok = glob(pattern, (const char *)v);
			xmlFree(v);
			if (ok)
				return true;
		}
	}
	return false;
}

/* KubeVirt's pod element (llcd-kubevirt-hook): a <label> or <annotation>
 * child with key="KEY" whose text matches (when a value is given). */
static bool
pod_matches(const struct policyrule_match *m, const xmlNode *meta)
{
	const char *el = m->kind == POLICYRULE_LABEL ? "label" : "annotation";

	for (const xmlNode *p = meta->children; p != NULL; p = p->next) {
		if (p->type != XML_ELEMENT_NODE || p->ns == NULL || p->ns->href == NULL ||
		    strcmp((const char *)p->ns->href, POLICYRULE_KUBEVIRT_NS) != 0 || strcmp((const char *)p->name, "pod"))
			continue;
		for (const xmlNode *c = p->children; c != NULL; c = c->next) {
			if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, el) != 0)
				continue;
			xmlChar *k = xmlGetNoNsProp(c, (const xmlChar *)"key");
			bool same = k != NULL && strcmp((const char *)k, m->key) == 0;
			xmlFree(k);
			if (same && (!m->has_value || text_matches(c, m->glob)))
				return true;
		}
	}
	return false;
}

/* KubeVirt's NAMESPACE_NAME: the name up to its first '_' */
static bool
namespace_matches(const char *pattern, const char *name)
{
	const char *us = name ? strchr(name, '_') : NULL;
	char ns[256];

	if (us == NULL || us == name || (size_t)(us - name) >= sizeof(ns))
		return false;
	memcpy(ns, name, (size_t)(us - name));
	ns[us - name] = '\0';
	return glob(pattern, ns);
}

bool
policyrule_match_one(const struct policyrule_match *m, const char *name, const void *metap)
{
	const xmlNode *meta = metap;

	switch (m->kind) {
	case POLICYRULE_NAME:
		return glob(m->glob, name);
	case POLICYRULE_FLAVOR:
		return meta != NULL && flavor_matches(m->glob, meta);
	case POLICYRULE_META:
		return meta != NULL && meta_walk(m, meta->children, 0);
	case POLICYRULE_NAMESPACE:
		return namespace_matches(m->glob, name);
	case POLICYRULE_LABEL:
	case POLICYRULE_ANNOTATION:
		return meta != NULL && pod_matches(m, meta);
	}
	return false;
}

static bool
is_el(const xmlNode *n, const char *name)
{
	return n != NULL && n->type == XML_ELEMENT_NODE && n->ns == NULL && strcmp((const char *)n->name, name) == 0;
}

int
policyrule_find(const struct policyrule_set *s, const char *name, const char *xml, size_t len,
                struct llcd_err *err)
{
	xmlDocPtr doc = NULL;
	const xmlNode *meta = NULL;
	int found = -1;

	if (s == NULL || s->n == 0)
		return -1;
	if (xml != NULL && policyrule_set_need_metadata(s)) {
		if ((doc = xmlsafe_read(xml, len, XMLSAFE_DOMAIN_MAX, "domain metadata", 0, err)) == NULL)
			return -2;
		const xmlNode *root = xmlDocGetRootElement(doc);
		if (is_el(root, "domain")) {
			for (const xmlNode *c = root->children; c != NULL && meta == NULL; c = c->next)
				if (is_el(c, "metadata"))
					meta = c;
		} else if (is_el(root, "metadata")) {
			meta = root;
		} else {
			llcd_err_set(err, "domain metadata: the root element is <%.64s>, not <domain> or <metadata>",
			    root ? (const char *)root->name : "");
			xmlFreeDoc(doc);
			return -2;
		}
	}
	for (int i = 0; i < s->n && found < 0; i++) {
		bool all = true;
		for (int k = 0; k < s->r[i].nmatch && all; k++)
			all = policyrule_match_one(&s->r[i].m[k], name, meta);
		if (all)
			found = i;
	}
	xmlFreeDoc(doc);
	return found;
}

int
policyrule_annotation(const struct policyrule *r, int nvcpus, struct policy_annotation *out,
                      struct llcd_err *err)
{
	struct llcd_err e2;

	if (annot_check(&r->annot, nvcpus, &e2) < 0) {
		policy_annotation_defaults(out);
		return llcd_err_set(err, "policy-rule %s: %s", r->where, e2.msg);
	}
	*out = r->annot;
	return 0;
}
