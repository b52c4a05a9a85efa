// SPDX-License-Identifier: GPL-2.0-or-later
/* guestxml.c - read the guest topology and vCPU pins of libvirt domain
 * XML, and a line diff for --dry-run; the splicing writer is in
 * guestxml_apply.c. */
#include "guestxml_int.h"
#include "xmlsafe.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>

/* --- growable string ------------------------------------------------------ */

void
guestxml_sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int need;

	if (b->oom)
		return;
	va_start(ap, fmt);
	need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0) {
		b->oom = true;
		return;
	}
	if (b->n + (size_t)need + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + (size_t)need + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)need;
}

void
guestxml_sb_mem(struct sbuf *b, const char *s, size_t n)
{
	if (n > INT_MAX) {
		b->oom = true;
		return;
	}
	guestxml_sb_printf(b, "%.*s", (int)n, s);
}

/* --- reading: libxml2 for well-formedness and content --------------------- */

xmlDocPtr
guestxml_read_doc(const char *buf, size_t len, struct llcd_err *err)
{
	return xmlsafe_read_domain(buf, len, err);
}

bool
guestxml_is_el(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && n->ns == NULL &&
	       strcmp((const char *)n->name, name) == 0;
}

xmlNodePtr
guestxml_child(const xmlNode *parent, const char *name)
{
	if (parent == NULL)
		return NULL;
	for (xmlNodePtr c = parent->children; c; c = c->next)
		if (guestxml_is_el(c, name))
			return c;
	return NULL;
}

/* libvirt's memory units (virScaleInteger): no unit = KiB; b/bytes; k, KiB
 * = 1024; KB = 1000; and so on up to E. Rounded up to KiB, as libvirt does. */
static int
parse_memory(const xmlNode *n, uint64_t *kib, struct llcd_err *err)
{
	xmlChar *text = xmlNodeGetContent(n), *unit = xmlGetProp(n, (const xmlChar *)"unit");
	const char *u = unit ? (const char *)unit : "KiB";
	unsigned long long x, scale = 0, base = 1024;
	char *end;
	int rc = -1;

	errno = 0;
	x = strtoull(text ? (const char *)text : "", &end, 10);
	while (end && isspace((unsigned char)*end))
		end++;
	if (text == NULL || errno || end == (char *)text || *end != '\0' || strchr((const char *)text, '-')) {
		llcd_err_set(err, WHAT ": <memory>: '%.32s' is not a size", text ? (const char *)text : "");
		goto out;
	}
	if (u[0] == '\0' || strcmp(u, "b") == 0 || strcmp(u, "byte") == 0 || strcmp(u, "bytes") == 0) {
		scale = 1;
	} else {
		const char *p = strchr("kmgtpe", tolower((unsigned char)u[0]));
		if (p == NULL)
			goto bad;
		if (u[1] == '\0' || strcmp(u + 1, "iB") == 0)
			base = 1024;
		else if ((u[1] == 'B' || u[1] == 'b') && u[2] == '\0')
			base = 1000;
		else
			goto bad;
		scale = 1;
		for (const char *q = "kmgtpe"; q <= p; q++)
			scale *= base;
	}
	if (x > (UINT64_MAX - 1023) / scale) {
		llcd_err_set(err, WHAT ": <memory>: %llu %s is too large", x, u);
		goto out;
	}
	*kib = (x * scale + 1023) / 1024;      /* libvirt rounds up to KiB */
	rc = 0;
	goto out;
bad:
	llcd_err_set(err, WHAT ": <memory unit='%.16s'>: unknown unit", u);
out:
	xmlFree(text);
	xmlFree(unit);
	return rc;
}

int
guestxml_read_domain(xmlDocPtr doc, struct guestxml_domain *d, struct llcd_err *err)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), n, cpu, topo;
	xmlChar *v;

	memset(d, 0, sizeof(*d));
	if (!guestxml_is_el(root, "domain"))
		return llcd_err_set(err, WHAT ": the root element is <%s>, not <domain>",
		    root ? (const char *)root->name : "");
	if ((n = guestxml_child(root, "name")) != NULL) {
		v = xmlNodeGetContent(n);
		snprintf(d->name, sizeof(d->name), "%s", v ? (const char *)v : "");
		xmlFree(v);
	}
	d->vcpus = 1;
	if ((n = guestxml_child(root, "vcpu")) != NULL) {
		char *end;
		long x;
		v = xmlNodeGetContent(n);
		errno = 0;
		x = strtol(v ? (const char *)v : "", &end, 10);
		while (end && isspace((unsigned char)*end))
			end++;
		if (v == NULL || errno || end == (char *)v || *end != '\0' || x < 1 || x > XMLSAFE_MAX_VCPUS) {
			llcd_err_set(err, WHAT ": <vcpu>: '%.32s' is not a vCPU count in 1..%d",
			    v ? (const char *)v : "", XMLSAFE_MAX_VCPUS);
			xmlFree(v);
			return -1;
		}
		xmlFree(v);
		d->vcpus = (int)x;
	}
	d->vcpus_current = d->vcpus;
	if (n && xmlsafe_attr_int(n, "current", 1, d->vcpus, &d->vcpus_current, WHAT, err) < 0)
		return -1;
	if ((n = guestxml_child(root, "memory")) != NULL && parse_memory(n, &d->memory_kib, err) < 0)
		return -1;
	d->topo = (struct policy_guest_topo){ d->vcpus, 1, 1, 1, 1 };
	cpu = guestxml_child(root, "cpu");
	if (cpu) {
		if ((v = xmlGetProp(cpu, (const xmlChar *)"mode")) != NULL) {
			snprintf(d->cpu_mode, sizeof(d->cpu_mode), "%s", (const char *)v);
			xmlFree(v);
		}
		if ((n = guestxml_child(cpu, "model")) != NULL && (v = xmlNodeGetContent(n)) != NULL) {
			snprintf(d->cpu_model, sizeof(d->cpu_model), "%s", (const char *)v);
			xmlFree(v);
		}
		if ((n = guestxml_child(cpu, "numa")) != NULL)
			for (xmlNodePtr c = n->children; c; c = c->next)
				if (guestxml_is_el(c, "cell"))
					d->ncells++;
	}
	if ((topo = guestxml_child(cpu, "topology")) != NULL) {
		struct policy_guest_topo g = { 1, 1, 1, 1, 1 };
		d->has_topology = true;
		if (xmlsafe_attr_int(topo, "sockets", 1, XMLSAFE_MAX_VCPUS, &g.sockets, WHAT, err) < 0 ||
		    xmlsafe_attr_int(topo, "dies", 1, XMLSAFE_MAX_VCPUS, &g.dies, WHAT, err) < 0 ||
		    xmlsafe_attr_int(topo, "clusters", 1, XMLSAFE_MAX_VCPUS, &g.clusters, WHAT, err) < 0 ||
		    xmlsafe_attr_int(topo, "cores", 1, XMLSAFE_MAX_VCPUS, &g.cores, WHAT, err) < 0 ||
		    xmlsafe_attr_int(topo, "threads", 1, XMLSAFE_MAX_VCPUS, &g.threads, WHAT, err) < 0)
			return -1;
		d->topo = g;
	}
	return 0;
}

int
guestxml_read(const char *xml, size_t len, struct guestxml_domain *d, struct llcd_err *err)
{
	xmlDocPtr doc = guestxml_read_doc(xml, len, err);
	int rc;

	if (doc == NULL)
		return -1;
	rc = guestxml_read_domain(doc, d, err);
	xmlFreeDoc(doc);
	return rc;
}

/* libvirt cpuset syntax: a CPU list whose items may be "^N" exclusions. */
static int
parse_libvirt_cpuset(const char *what, const char *list, struct cpuset *out, struct llcd_err *err)
{
	char buf[4096], pos[4096], *tok, *save = NULL;
	struct cpuset neg;
	size_t o = 0;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return llcd_err_set(err, WHAT ": %s: cpuset too long", what);
	cpuset_zero(&neg);
	pos[0] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (*tok == '^') {
			char *end;
			long c;
			errno = 0;
			c = strtol(tok + 1, &end, 10);
			if (errno || end == tok + 1 || *end != '\0' || c < 0 || c >= CPUSET_MAX)
				return llcd_err_set(err, WHAT ": %s: cpuset '%.64s': bad exclusion '%.16s'",
				    what, list, tok);
			cpuset_set(&neg, (int)c);
		} else {
			int n = snprintf(pos + o, sizeof(pos) - o, "%s%s", o ? "," : "", tok);
			if (n < 0 || (size_t)n >= sizeof(pos) - o)
				return llcd_err_set(err, WHAT ": %s: cpuset too long", what);
			o += (size_t)n;
		}
	}
	if (cpuset_parse(out, pos, err) < 0)
		return llcd_err_prefix(err, WHAT ": %s: cpuset '%.64s'", what, list);
	cpuset_andnot(out, out, &neg);
	return 0;
}

int
guestxml_read_pins(const char *xml, size_t len, int nvcpus, const struct cpuset *all,
                   struct cpuset *pins, struct cpuset *emulator, struct llcd_err *err)
{
	xmlDocPtr doc = guestxml_read_doc(xml, len, err);
	struct guestxml_domain d;
	struct cpuset def = *all;
	xmlNodePtr root, n;
	xmlChar *c = NULL;
	int rc = -1;

	if (doc == NULL)
		return -1;
	if (guestxml_read_domain(doc, &d, err) < 0)
		goto out;
	if (d.vcpus != nvcpus) {
		llcd_err_set(err, WHAT ": domain '%s' has %d vCPUs, not %d", d.name, d.vcpus, nvcpus);
		goto out;
	}
	root = xmlDocGetRootElement(doc);
	if ((n = guestxml_child(root, "vcpu")) != NULL && (c = xmlGetProp(n, (const xmlChar *)"cpuset")) != NULL) {
		if (parse_libvirt_cpuset("<vcpu cpuset>", (const char *)c, &def, err) < 0)
			goto out;
	}
	for (int i = 0; i < nvcpus; i++)
		pins[i] = def;
	if (emulator)
		*emulator = def;
	n = guestxml_child(root, "cputune");
	for (n = n ? n->children : NULL; n; n = n->next) {
		int vcpu = -1;
		if (guestxml_is_el(n, "emulatorpin") && emulator) {
			xmlFree(c);
			if ((c = xmlGetProp(n, (const xmlChar *)"cpuset")) == NULL ||
			    parse_libvirt_cpuset("<emulatorpin>", (const char *)c, emulator, err) < 0) {
				if (c == NULL)
					llcd_err_set(err, WHAT ": <emulatorpin> without cpuset");
				goto out;
			}
		}
		if (!guestxml_is_el(n, "vcpupin"))
			continue;
		if (xmlsafe_attr_int(n, "vcpu", 0, nvcpus - 1, &vcpu, WHAT, err) < 0)
			goto out;
		xmlFree(c);
		c = NULL;       /* (freed again at out: not when vcpu < 0 keeps it) */
		if (vcpu < 0 || (c = xmlGetProp(n, (const xmlChar *)"cpuset")) == NULL) {
			llcd_err_set(err, WHAT ": <vcpupin> without vcpu or cpuset");
			goto out;
		}
		if (parse_libvirt_cpuset("<vcpupin>", (const char *)c, &pins[vcpu], err) < 0)
			goto out;
	}
	rc = 0;
out:
	xmlFree(c);
	xmlFreeDoc(doc);
	return rc;
}

/* --- line diff ------------------------------------------------------------ */

struct lines {
	const char **p;
	size_t *len;
	int n;
};

static int
split_lines(const char *s, size_t len, struct lines *l)
{
	int cap = 1;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n')
			cap++;
	l->p = calloc((size_t)cap, sizeof(*l->p));
	l->len = calloc((size_t)cap, sizeof(*l->len));
	l->n = 0;
	if (l->p == NULL || l->len == NULL)
		return -1;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - s) : len;
		l->p[l->n] = s + i;
		l->len[l->n++] = e - i;
		i = e + 1;
	}
	return 0;
}

static bool
line_eq(const struct lines *a, int i, const struct lines *b, int j)
{
	return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

struct op {
	char c;                 /* ' ', '-', '+' */
	int ai, bi;             /* line index in a (for ' ' and '-') and b (' ' and '+') */
};

int
guestxml_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
              const char *label_b, char **out, struct llcd_err *err)
{
	struct lines la = { 0 }, lb = { 0 };
	struct op *ops = NULL;
	uint32_t *L = NULL;
	struct sbuf o = { 0 };
	int nops = 0, rc = -1, pre = 0, suf = 0;

	*out = NULL;
	if (split_lines(a, alen, &la) < 0 || split_lines(b, blen, &lb) < 0)
		goto oom;
	ops = calloc((size_t)la.n + (size_t)lb.n + 1, sizeof(*ops));
	if (ops == NULL)
		goto oom;
	while (pre < la.n && pre < lb.n && line_eq(&la, pre, &lb, pre))
		pre++;
	while (suf < la.n - pre && suf < lb.n - pre && line_eq(&la, la.n - 1 - suf, &lb, lb.n - 1 - suf))
		suf++;
	for (int i = 0; i < pre; i++)
		ops[nops++] = (struct op){ ' ', i, i };
	int m1 = la.n - pre - suf, m2 = lb.n - pre - suf;
	size_t cells = (size_t)(m1 + 1) * (size_t)(m2 + 1);
	if (m1 > 0 && m2 > 0 && cells <= 64u * 1024 * 1024 / sizeof(uint32_t)) {
		/* L[i][j]: longest common subsequence of a[pre+i..] and b[pre+j..] */
		L = calloc(cells, sizeof(*L));
		if (L == NULL)
			goto oom;
#define LL(i, j) L[(size_t)(i) * (size_t)(m2 + 1) + (size_t)(j)]
		for (int i = m1 - 1; i >= 0; i--)
			for (int j = m2 - 1; j >= 0; j--)
				LL(i, j) = line_eq(&la, pre + i, &lb, pre + j) ? LL(i + 1, j + 1) + 1
				         : (LL(i + 1, j) >= LL(i, j + 1) ? LL(i + 1, j) : LL(i, j + 1));
		int i = 0, j = 0;
		while (i < m1 || j < m2) {
			if (i < m1 && j < m2 && line_eq(&la, pre + i, &lb, pre + j)) {
				ops[nops++] = (struct op){ ' ', pre + i, pre + j };
				i++;
				j++;
			} else if (j >= m2 || (i < m1 && LL(i + 1, j) >= LL(i, j + 1))) {
				ops[nops++] = (struct op){ '-', pre + i, pre + j };
				i++;
			} else {
				ops[nops++] = (struct op){ '+', pre + i, pre + j };
				j++;
			}
		}
#undef LL
	} else {
		/* too large to match line by line (or one side empty): all out, all in */
		for (int i = 0; i < m1; i++)
			ops[nops++] = (struct op){ '-', pre + i, pre };
		for (int j = 0; j < m2; j++)
			ops[nops++] = (struct op){ '+', pre + m1, pre + j };
	}
	for (int i = 0; i < suf; i++)
		ops[nops++] = (struct op){ ' ', la.n - suf + i, lb.n - suf + i };

	/* hunks: each change with 3 lines of context, merged when they touch */
	bool any = false;
	for (int k = 0; k < nops;) {
		if (ops[k].c == ' ') {
			k++;
			continue;
		}
		int h0 = k - 3 < 0 ? 0 : k - 3, h1 = k, last = k;
		while (h1 < nops) {
			if (ops[h1].c != ' ')
				last = h1;
			else if (h1 - last > 6)
				break;
			h1++;
		}
		h1 = last + 3 < nops - 1 ? last + 3 : nops - 1;   /* inclusive */
		int na = 0, nb = 0;
		for (int q = h0; q <= h1; q++) {
			na += ops[q].c != '+';
			nb += ops[q].c != '-';
		}
		if (!any)
			guestxml_sb_printf(&o, "--- %s\n+++ %s\n", label_a ? label_a : "a", label_b ? label_b : "b");
		any = true;
		guestxml_sb_printf(&o, "@@ -%d,%d +%d,%d @@\n", na ? ops[h0].ai + 1 : ops[h0].ai, na,
		    nb ? ops[h0].bi + 1 : ops[h0].bi, nb);
		for (int q = h0; q <= h1; q++) {
			const char *p = ops[q].c == '+' ? lb.p[ops[q].bi] : la.p[ops[q].ai];
			size_t n = ops[q].c == '+' ? lb.len[ops[q].bi] : la.len[ops[q].ai];
			guestxml_sb_printf(&o, "%c", ops[q].c);
			guestxml_sb_mem(&o, p, n);
			guestxml_sb_printf(&o, "\n");
		}
		k = h1 + 1;
	}
	if (o.oom)
		goto oom;
	if (o.p == NULL && (o.p = strdup("")) == NULL)
		goto oom;
	*out = o.p;
	o.p = NULL;
	rc = 0;
	goto done;
oom:
	llcd_err_set(err, "guestxml: diff: out of memory");
done:
	free(la.p);
	free(la.len);
	free(lb.p);
	free(lb.len);
	free(ops);
	free(L);
	free(o.p);
	return rc;
}
