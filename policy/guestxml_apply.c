// SPDX-License-Identifier: GPL-2.0-or-later
/* guestxml_apply.c - splice a guest topology recommendation into libvirt
 * domain XML without touching anything else (guestxml_apply()). */
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

/* --- the scanner: byte ranges of the elements libxml2 found --------------- */

struct el {
	size_t start;           /* '<' of the start tag */
	size_t stag_end;        /* after the start tag's '>' */
	size_t etag_start;      /* '<' of the end tag (= end when empty) */
	size_t end;             /* after the element */
	bool empty;             /* <x/> */
	const char *name;
	size_t namelen;
	int parent;             /* index, -1 for the root */
};

struct scan {
	const char *s;
	size_t len;
	struct el *els;
	int n, cap;
};

static long
find(const char *s, size_t from, size_t len, const char *pat)
{
	size_t m = strlen(pat);

	for (size_t i = from; i + m <= len; i++)
		if (memcmp(s + i, pat, m) == 0)
			return (long)i;
	return -1;
}

static bool
at(const char *s, size_t p, size_t len, const char *pat)
{
	size_t m = strlen(pat);
	return p + m <= len && memcmp(s + p, pat, m) == 0;
}

static bool
is_name_end(char c)
{
	return c == '>' || c == '/' || isspace((unsigned char)c);
}

/* Tokenize the (already well-formed) document: comments, CDATA, PIs, start,
 * empty and end tags, quoted attribute values (which may hold '>'). */
static int
scan_doc(struct scan *sc, struct llcd_err *err)
{
	const char *s = sc->s;
	size_t len = sc->len, p = 0;
	int stack[MAX_DEPTH], depth = 0;

	while (p < len) {
		const char *lt = memchr(s + p, '<', len - p);
		long q;
		if (lt == NULL)
			break;
		p = (size_t)(lt - s);
		if (at(s, p, len, "<!--")) {
			if ((q = find(s, p + 4, len, "-->")) < 0)
				goto bad;
			p = (size_t)q + 3;
		} else if (at(s, p, len, "<![CDATA[")) {
			if ((q = find(s, p + 9, len, "]]>")) < 0)
				goto bad;
			p = (size_t)q + 3;
		} else if (at(s, p, len, "<?")) {
			if ((q = find(s, p + 2, len, "?>")) < 0)
				goto bad;
			p = (size_t)q + 2;
		} else if (at(s, p, len, "<!")) {
			return llcd_err_set(err, WHAT ": a DOCTYPE is not allowed");
		} else if (at(s, p, len, "</")) {
			size_t ns = p + 2, ne = ns;
			while (ne < len && !is_name_end(s[ne]))
				ne++;
			if ((q = find(s, ne, len, ">")) < 0 || depth == 0)
				goto bad;
			struct el *e = &sc->els[stack[depth - 1]];
			if (e->namelen != ne - ns || memcmp(e->name, s + ns, ne - ns) != 0)
				goto bad;
			e->etag_start = p;
			e->end = (size_t)q + 1;
			depth--;
			p = (size_t)q + 1;
		} else {
			size_t ns = p + 1, ne = ns, r;
			struct el e = { 0 };
			while (ne < len && !is_name_end(s[ne]))
				ne++;
			if (ne == ns)
				goto bad;
			for (r = ne; r < len; r++) {
				if (s[r] == '\'' || s[r] == '"') {
					const char *cq = memchr(s + r + 1, s[r], len - r - 1);
					if (cq == NULL)
						goto bad;
					r = (size_t)(cq - s);
				} else if (s[r] == '>') {
					e.stag_end = r + 1;
					break;
				} else if (s[r] == '/' && r + 1 < len && s[r + 1] == '>') {
					e.stag_end = r + 2;
					e.empty = true;
					break;
				}
			}
			if (r >= len)
				goto bad;
			e.start = p;
			e.name = s + ns;
			e.namelen = ne - ns;
			e.parent = depth > 0 ? stack[depth - 1] : -1;
			if (e.empty)
				e.etag_start = e.end = e.stag_end;
			if (sc->n == sc->cap) {
				int cap = sc->cap ? sc->cap * 2 : 256;
				void *np = realloc(sc->els, sizeof(*sc->els) * (size_t)cap);
				if (np == NULL)
					return llcd_err_set(err, WHAT ": out of memory");
				sc->els = np;
				sc->cap = cap;
			}
			sc->els[sc->n] = e;
			if (!e.empty) {
				if (depth == MAX_DEPTH)
					return llcd_err_set(err, WHAT ": elements nested deeper than %d", MAX_DEPTH);
				stack[depth++] = sc->n;
			}
			sc->n++;
			p = e.stag_end;
		}
	}
	if (depth != 0)
		goto bad;
	return 0;
bad:
	return llcd_err_set(err, WHAT ": internal: cannot find the element boundaries near byte %zu", p);
}

/* The scanner and libxml2 must agree on every element, in document order;
 * node->_private gets the element's index + 1. */
static int
match_nodes(xmlNodePtr n, struct scan *sc, int *i, struct llcd_err *err)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		/* prefix:name against the scanner's name, whatever its length
		 * (a buffer cut a name over 255 bytes: fuzz_guestxml) */
		const char *pfx = n->ns && n->ns->prefix ? (const char *)n->ns->prefix : NULL;
		const char *nm = (const char *)n->name;
		size_t pl = pfx ? strlen(pfx) : 0, nl = strlen(nm), ql = pfx ? pl + 1 + nl : nl;
		const struct el *e = *i < sc->n ? &sc->els[*i] : NULL;
		if (e == NULL || e->namelen != ql ||
		    (pfx && (memcmp(e->name, pfx, pl) != 0 || e->name[pl] != ':')) ||
		    memcmp(e->name + (pfx ? pl + 1 : 0), nm, nl) != 0)
			return llcd_err_set(err, WHAT ": internal: element #%d <%s%s%.*s> not where libxml2 has it",
			    *i, pfx ? pfx : "", pfx ? ":" : "", nl > 200 ? 200 : (int)nl, nm);
		n->_private = (void *)(intptr_t)(*i + 1);
		(*i)++;
		if (match_nodes(n->children, sc, i, err) < 0)
			return -1;
	}
	return 0;
}

static const struct el *
el_of(const struct scan *sc, const xmlNode *n)
{
	intptr_t i = n ? (intptr_t)n->_private : 0;
	return i > 0 && i <= sc->n ? &sc->els[i - 1] : NULL;
}

/* --- edits ---------------------------------------------------------------- */

struct edit {
	size_t at, del;         /* replace [at, at + del) */
	char *text;
	int seq;
};

struct editor {
	const struct scan *sc;
	struct edit *e;
	int n, cap;
	bool oom;
	char unit[32];          /* one level of indentation */
};

static void
add_edit(struct editor *ed, size_t at_, size_t end, const char *text)
{
	if (ed->oom)
		return;
	/* inserts at one position merge, in the order they are made */
	if (end == at_)
		for (int i = 0; i < ed->n; i++)
			if (ed->e[i].del == 0 && ed->e[i].at == at_) {
				size_t a = strlen(ed->e[i].text), b = strlen(text);
				char *p = realloc(ed->e[i].text, a + b + 1);
				if (p == NULL) {
					ed->oom = true;
					return;
				}
				memcpy(p + a, text, b + 1);
				ed->e[i].text = p;
				return;
			}
	if (ed->n == ed->cap) {
		int cap = ed->cap ? ed->cap * 2 : 16;
		void *p = realloc(ed->e, sizeof(*ed->e) * (size_t)cap);
		if (p == NULL) {
			ed->oom = true;
			return;
		}
		ed->e = p;
		ed->cap = cap;
	}
	ed->e[ed->n] = (struct edit){ at_, end - at_, strdup(text), ed->n };
	if (ed->e[ed->n].text == NULL)
		ed->oom = true;
	ed->n++;
}

/* Insert TEXT on a new line indented by IND at AT. */
static void
insert_line(struct editor *ed, size_t at, const char *ind, const char *text)
{
	struct sbuf t = { 0 };

	guestxml_sb_printf(&t, "\n%s%s", ind, text);
	add_edit(ed, at, at, t.p ? t.p : "");
	ed->oom |= t.oom;
	free(t.p);
}

/* Indentation before pos when pos starts its line; -1 otherwise. */
static long
indent_len(const struct scan *sc, size_t pos)
{
	size_t k = pos;

	while (k > 0 && (sc->s[k - 1] == ' ' || sc->s[k - 1] == '\t'))
		k--;
	if (k > 0 && sc->s[k - 1] != '\n')
		return -1;
	return (long)(pos - k);
}

static void
indent_of(const struct scan *sc, const struct el *e, char *buf, size_t len)
{
	long n = indent_len(sc, e->start);

	/* an indentation that does not fit is dropped, not cut: a cut one
	 * would be read back as another, and a second apply would move the
	 * lines again (fuzz_guestxml: apply twice gives the same XML) */
	if (n < 0 || (size_t)n >= len)
		n = 0;
	memcpy(buf, sc->s + e->start - (size_t)n, (size_t)n);
	buf[n] = '\0';
}

static const struct el *
first_child(const struct scan *sc, const struct el *p)
{
	int pi = (int)(p - sc->els);
	return pi + 1 < sc->n && sc->els[pi + 1].parent == pi ? &sc->els[pi + 1] : NULL;
}

static const struct el *
last_child(const struct scan *sc, const struct el *p)
{
	int pi = (int)(p - sc->els);
	const struct el *last = NULL;

	for (int i = pi + 1; i < sc->n && sc->els[i].start < p->end; i++)
		if (sc->els[i].parent == pi)
			last = &sc->els[i];
	return last;
}

/* Indentation for a child of p: that of its first child on a line of its
 * own, else p's plus one unit. */
static void
child_indent(const struct editor *ed, const struct el *p, char *buf, size_t len)
{
	const struct el *c = first_child(ed->sc, p);

	if (c && indent_len(ed->sc, c->start) >= 0) {
		indent_of(ed->sc, c, buf, len);
		return;
	}
	indent_of(ed->sc, p, buf, len);
	if (strlen(buf) + strlen(ed->unit) >= len)
		buf[0] = '\0';         /* does not fit: none (indent_of) */
	else
		strcat(buf, ed->unit);
}

/* Remove an element, with its line when it has one of its own. */
static void
remove_el(struct editor *ed, const struct el *e)
{
	long n = indent_len(ed->sc, e->start);
	size_t from = e->start;

	if (n >= 0 && e->start - (size_t)n > 0)
		from = e->start - (size_t)n - 1;        /* the newline before it */
	add_edit(ed, from, e->end, "");
}

/* Insert text (a series of "\n<indent><element>") as the last children of
 * p, which is not empty (<p/>). */
static void
append_children(struct editor *ed, const struct el *p, const char *text)
{
	const struct el *last = last_child(ed->sc, p);

	if (last) {
		add_edit(ed, last->end, last->end, text);
		return;
	}
	add_edit(ed, p->stag_end, p->stag_end, text);
	if (memchr(ed->sc->s + p->stag_end, '\n', p->etag_start - p->stag_end) == NULL) {
		char ind[128];
		indent_of(ed->sc, p, ind, sizeof(ind));
		struct sbuf b = { 0 };
		guestxml_sb_printf(&b, "\n%s", ind);
		if (b.oom)
			ed->oom = true;
		else
			add_edit(ed, p->stag_end, p->stag_end, b.p);
		free(b.p);
	}
}

/* Turn <p .../> into <p ...> text \n</p>. */
static void
open_empty(struct editor *ed, const struct el *p, const char *text)
{
	char ind[128];
	struct sbuf b = { 0 };

	indent_of(ed->sc, p, ind, sizeof(ind));
	guestxml_sb_printf(&b, ">%s\n%s</%.*s>", text, ind, (int)p->namelen, p->name);
	if (b.oom)
		ed->oom = true;
	else
		add_edit(ed, p->end - 2, p->end, b.p);
	free(b.p);
}

static int
cmp_edit(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if ((x->del == 0) != (y->del == 0))
		return x->del == 0 ? -1 : 1;    /* inserts before a replacement there */
	return x->seq - y->seq;
}

/* --- the elements we write ------------------------------------------------ */

static const char *
fmt_cpus(const struct cpuset *s, char *buf, size_t len)
{
	if (cpuset_format(s, buf, len) < 0)
		return NULL;
	return buf;
}

/* Attributes of an existing <cell> other than the ones we write
 * (memAccess, discard, ...), as " name='value'" text. */
static void
cell_extra_attrs(struct sbuf *b, const xmlNode *cell)
{
	static const char *const ours[] = { "id", "cpus", "memory", "unit", NULL };

	for (const xmlAttr *a = cell ? cell->properties : NULL; a; a = a->next) {
		bool skip = false;
		for (const char *const *o = ours; *o; o++)
			skip |= a->ns == NULL && strcmp((const char *)a->name, *o) == 0;
		if (skip)
			continue;
		xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
		guestxml_sb_printf(b, " %s%s%s='", a->ns && a->ns->prefix ? (const char *)a->ns->prefix : "",
		    a->ns && a->ns->prefix ? ":" : "", (const char *)a->name);
		for (const char *p = v ? (const char *)v : ""; *p; p++) {
			if (*p == '\'')
				guestxml_sb_printf(b, "&apos;");
			else if (*p == '&')
				guestxml_sb_printf(b, "&amp;");
			else if (*p == '<')
				guestxml_sb_printf(b, "&lt;");
			else
				guestxml_sb_printf(b, "%c", *p);
		}
		guestxml_sb_printf(b, "'");
		xmlFree(v);
	}
}

/* <numa> with the recommendation's cells; cell i keeps the extra
 * attributes of old cell i (or of the last old cell). */
static void
numa_text(struct sbuf *b, const char *ind, const char *unit, const struct guesttopo_rec *rec,
          const uint64_t *mem, const xmlNode *old_numa)
{
	char cpus[8192];
	const xmlNode *old[64];
	int nold = 0;

	for (const xmlNode *c = old_numa ? old_numa->children : NULL; c && nold < 64; c = c->next)
		if (guestxml_is_el(c, "cell"))
			old[nold++] = c;
	guestxml_sb_printf(b, "<numa>");
	for (int c = 0; c < rec->ncells; c++) {
		if (fmt_cpus(&rec->cells[c].vcpus, cpus, sizeof(cpus)) == NULL) {
			b->oom = true;
			return;
		}
		guestxml_sb_printf(b, "\n%s%s<cell id='%d' cpus='%s' memory='%llu' unit='KiB'", ind, unit, c,
		    cpus, (unsigned long long)mem[c]);
		if (nold > 0)
			cell_extra_attrs(b, old[c < nold ? c : nold - 1]);
		guestxml_sb_printf(b, "/>");
	}
	guestxml_sb_printf(b, "\n%s</numa>", ind);
}

/* The <cpu> children we write, each as "\n<ind><element>". */
static void
cpu_children(struct sbuf *b, const char *ind, const char *unit, const struct guesttopo_rec *rec,
             unsigned parts, const uint64_t *mem)
{
	if (parts & GUESTXML_TOPOLOGY)
		guestxml_sb_printf(b, "\n%s<topology sockets='%d' dies='%d' cores='%d' threads='%d'/>", ind,
		    rec->topo.sockets, rec->topo.dies, rec->topo.cores, rec->topo.threads);
	if (parts & GUESTXML_CACHE)
		guestxml_sb_printf(b, "\n%s<cache level='3' mode='%s'/>", ind, rec->cache_mode);
	if ((parts & GUESTXML_NUMA) && rec->ncells > 0) {
		guestxml_sb_printf(b, "\n%s", ind);
		numa_text(b, ind, unit, rec, mem, NULL);
	}
}

static void
pins_text(struct sbuf *b, const char *ind, const struct guesttopo_rec *rec, bool lead)
{
	char cpus[8192];

	for (int v = 0; v < rec->nvcpus; v++) {
		if (fmt_cpus(&rec->pins[v], cpus, sizeof(cpus)) == NULL) {
			b->oom = true;
			return;
		}
		guestxml_sb_printf(b, "%s%s<vcpupin vcpu='%d' cpuset='%s'/>", lead || v ? "\n" : "",
		    lead || v ? ind : "", v, cpus);
	}
	if (fmt_cpus(&rec->emulator, cpus, sizeof(cpus)) == NULL) {
		b->oom = true;
		return;
	}
	guestxml_sb_printf(b, "\n%s<emulatorpin cpuset='%s'/>", ind, cpus);
}

static void
numatune_text(struct sbuf *b, const char *ind, const char *unit, const struct guesttopo_rec *rec,
              const char *mode)
{
	char nodes[1024];
	const char *cell_mode = strcmp(mode, "preferred") == 0 ? "preferred" : "strict";

	if (fmt_cpus(&rec->nodeset, nodes, sizeof(nodes)) == NULL) {
		b->oom = true;
		return;
	}
	guestxml_sb_printf(b, "<numatune>\n%s%s<memory mode='%s' nodeset='%s'/>", ind, unit, mode, nodes);
	for (int c = 0; c < rec->ncells; c++)
		guestxml_sb_printf(b, "\n%s%s<memnode cellid='%d' mode='%s' nodeset='%d'/>", ind, unit, c,
		    cell_mode, rec->cells[c].host_node);
	guestxml_sb_printf(b, "\n%s</numatune>", ind);
}

/* Root children: first of names present, by document order. */
static const struct el *
root_child(const struct scan *sc, xmlNodePtr root, const char *name)
{
	return el_of(sc, guestxml_child(root, name));
}

/* The latest-ending of the named root children, or NULL. */
static const struct el *
last_of(const struct scan *sc, xmlNodePtr root, const char *const *names)
{
	const struct el *best = NULL;

	for (const char *const *nm = names; *nm; nm++) {
		const struct el *e = root_child(sc, root, *nm);
		if (e && (best == NULL || e->end > best->end))
			best = e;
	}
	return best;
}

/* The end of an edit_* function: a failed allocation in b is the editor's,
 * and b's text goes (add_edit copied what it keeps). Returns 0. */
static int
edit_end(struct editor *ed, struct sbuf *b)
{
	ed->oom |= b->oom;
	free(b->p);
	return 0;
}

static int
edit_cpu(struct editor *ed, xmlNodePtr root, const struct guesttopo_rec *rec, unsigned parts,
         const uint64_t *mem, uint64_t total_kib)
{
	const struct scan *sc = ed->sc;
	xmlNodePtr cpu = guestxml_child(root, "cpu");
	const struct el *ce = el_of(sc, cpu), *root_el = el_of(sc, root);
	char ind[128], cind[192];
	struct sbuf b = { 0 };

	parts &= GUESTXML_GUEST;
	if (parts == 0)
		return 0;
	if (ce == NULL) {
		static const char *const after[] = { "features", "os", "vcpu", NULL };
		const struct el *anchor = last_of(sc, root, after);
		child_indent(ed, root_el, ind, sizeof(ind));
		snprintf(cind, sizeof(cind), "%s%s", ind, ed->unit);
		struct sbuf kids = { 0 };
		cpu_children(&kids, cind, ed->unit, rec, parts, mem);
		if (kids.n > 0)
			guestxml_sb_printf(&b, "\n%s<cpu>%s\n%s</cpu>", ind, kids.p, ind);
		free(kids.p);
		if (b.n > 0) {
			if (anchor)
				add_edit(ed, anchor->end, anchor->end, b.p);
			else
				append_children(ed, root_el, b.p);
		}
		goto out;
	}
	child_indent(ed, ce, cind, sizeof(cind));
	if (ce->empty) {
		cpu_children(&b, cind, ed->unit, rec, parts, mem);
		if (b.n > 0)
			open_empty(ed, ce, b.p);
		goto out;
	}
	/* <cpu> with content: replace in place, insert after model/vendor */
	const struct el *topo = el_of(sc, guestxml_child(cpu, "topology"));
	const struct el *model = el_of(sc, guestxml_child(cpu, "model"));
	const struct el *vendor = el_of(sc, guestxml_child(cpu, "vendor"));
	const struct el *numa = el_of(sc, guestxml_child(cpu, "numa"));
	size_t anchor = ce->stag_end;
	bool anchored = false, inserted = false;
	if (model && model->end > anchor) {
		anchor = model->end;
		anchored = true;
	}
	if (vendor && vendor->end > anchor) {
		anchor = vendor->end;
		anchored = true;
	}
	if (parts & GUESTXML_TOPOLOGY) {
		guestxml_sb_printf(&b, "<topology sockets='%d' dies='%d' cores='%d' threads='%d'/>",
		    rec->topo.sockets, rec->topo.dies, rec->topo.cores, rec->topo.threads);
		if (topo)
			add_edit(ed, topo->start, topo->end, b.p ? b.p : "");
		else {
			insert_line(ed, anchor, cind, b.p ? b.p : "");
			inserted = true;
		}
		b.n = 0;
	}
	if (parts & GUESTXML_CACHE) {
		bool done = false;
		guestxml_sb_printf(&b, "<cache level='3' mode='%s'/>", rec->cache_mode);
		for (xmlNodePtr c = cpu->children; c; c = c->next) {
			if (!guestxml_is_el(c, "cache"))
				continue;
			if (!done)
				add_edit(ed, el_of(sc, c)->start, el_of(sc, c)->end, b.p);
			else
				remove_el(ed, el_of(sc, c));
			done = true;
		}
		if (!done) {
			insert_line(ed, topo ? topo->end : anchor, cind, b.p ? b.p : "");
			inserted |= topo == NULL;
		}
		b.n = 0;
	}
	if (parts & GUESTXML_NUMA) {
		if (rec->ncells == 0) {
			if (numa && total_kib > 0) {
				/* one host node: a single cell, keeping what the old
				 * cells said besides cpus and memory (memAccess='shared'
				 * for vhost-user and virtiofs) */
				struct guesttopo_rec one = *rec;
				struct guesttopo_cell cell = { -1, { { 0 } }, rec->nvcpus };
				struct sbuf t = { 0 };
				cpuset_set_range(&cell.vcpus, 0, rec->nvcpus - 1);
				one.ncells = 1;
				one.cells = &cell;
				indent_of(sc, numa, ind, sizeof(ind));
				numa_text(&t, ind, ed->unit, &one, &total_kib, guestxml_child(cpu, "numa"));
				add_edit(ed, numa->start, numa->end, t.p ? t.p : "");
				ed->oom |= t.oom;
				free(t.p);
			} else if (numa) {
				remove_el(ed, numa);
			}
		} else {
			struct sbuf t = { 0 };
			if (numa) {
				indent_of(sc, numa, ind, sizeof(ind));
				numa_text(&t, ind, ed->unit, rec, mem, guestxml_child(cpu, "numa"));
				add_edit(ed, numa->start, numa->end, t.p ? t.p : "");
			} else {
				const struct el *last = last_child(sc, ce);
				size_t where = last && last->end > anchor ? last->end : anchor;
				guestxml_sb_printf(&t, "\n%s", cind);
				numa_text(&t, cind, ed->unit, rec, mem, NULL);
				add_edit(ed, where, where, t.p ? t.p : "");
				inserted |= where == anchor;
			}
			ed->oom |= t.oom;
			free(t.p);
		}
	}
	if (inserted && !anchored && first_child(sc, ce) == NULL &&
	    memchr(sc->s + ce->stag_end, '\n', ce->etag_start - ce->stag_end) == NULL) {
		/* <cpu ...></cpu>: close on a line of its own */
		indent_of(sc, ce, ind, sizeof(ind));
		insert_line(ed, ce->etag_start, ind, "");
	}
out:
	return edit_end(ed, &b);
}

static int
edit_cputune(struct editor *ed, xmlNodePtr root, const struct guesttopo_rec *rec,
             const struct el **cputune_out)
{
	const struct scan *sc = ed->sc;
	xmlNodePtr ct = guestxml_child(root, "cputune");
	const struct el *cte = el_of(sc, ct), *root_el = el_of(sc, root);
	char ind[128], cind[192];
	struct sbuf b = { 0 };

	*cputune_out = cte;
	if (cte == NULL) {
		static const char *const after[] = { "vcpu", "vcpus", "iothreads", "iothreadids", NULL };
		const struct el *anchor = last_of(sc, root, after);
		child_indent(ed, root_el, ind, sizeof(ind));
		snprintf(cind, sizeof(cind), "%s%s", ind, ed->unit);
		guestxml_sb_printf(&b, "\n%s<cputune>", ind);
		pins_text(&b, cind, rec, true);
		guestxml_sb_printf(&b, "\n%s</cputune>", ind);
		if (!b.oom) {
			if (anchor)
				add_edit(ed, anchor->end, anchor->end, b.p);
			else
				add_edit(ed, root_el->stag_end, root_el->stag_end, b.p);
		}
		goto out;
	}
	child_indent(ed, cte, cind, sizeof(cind));
	if (cte->empty) {
		pins_text(&b, cind, rec, true);
		if (!b.oom)
			open_empty(ed, cte, b.p);
		goto out;
	}
	bool replaced = false;
	for (xmlNodePtr c = ct->children; c; c = c->next) {
		if (!guestxml_is_el(c, "vcpupin") && !guestxml_is_el(c, "emulatorpin"))
			continue;
		if (!replaced) {
			pins_text(&b, cind, rec, false);
			if (!b.oom)
				add_edit(ed, el_of(sc, c)->start, el_of(sc, c)->end, b.p);
			replaced = true;
		} else {
			remove_el(ed, el_of(sc, c));
		}
	}
	if (!replaced) {
		static const char *const before[] = { "iothreadpin", "vcpusched", "iothreadsched",
			"emulatorsched", "cachetune", "memorytune", NULL };
		const struct el *next = NULL;
		for (xmlNodePtr c = ct->children; c && next == NULL; c = c->next)
			for (const char *const *nm = before; *nm && next == NULL; nm++)
				if (guestxml_is_el(c, *nm))
					next = el_of(sc, c);
		pins_text(&b, cind, rec, true);
		if (b.oom)
			goto out;
		long il = next ? indent_len(sc, next->start) : -1;
		if (next && il >= 0 && next->start - (size_t)il > 0)
			add_edit(ed, next->start - (size_t)il - 1, next->start - (size_t)il - 1, b.p);
		else
			append_children(ed, cte, b.p);
	}
out:
	return edit_end(ed, &b);
}

static int
edit_numatune(struct editor *ed, xmlNodePtr root, const struct guesttopo_rec *rec,
              const struct el *cputune)
{
	const struct scan *sc = ed->sc;
	xmlNodePtr nt = guestxml_child(root, "numatune");
	const struct el *nte = el_of(sc, nt), *root_el = el_of(sc, root);
	char ind[128], mode[32] = "strict";
	struct sbuf b = { 0 };

	if (cpuset_empty(&rec->nodeset))
		return 0;               /* nothing known about host NUMA nodes */
	if (nt) {
		xmlNodePtr mem = guestxml_child(nt, "memory");
		xmlChar *m = mem ? xmlGetProp(mem, (const xmlChar *)"mode") : NULL;
		if (m && (!strcmp((const char *)m, "strict") || !strcmp((const char *)m, "preferred") ||
		          !strcmp((const char *)m, "interleave") || !strcmp((const char *)m, "restrictive")))
			snprintf(mode, sizeof(mode), "%s", (const char *)m);
		xmlFree(m);
		indent_of(sc, nte, ind, sizeof(ind));
		numatune_text(&b, ind, ed->unit, rec, mode);
		if (!b.oom)
			add_edit(ed, nte->start, nte->end, b.p);
		goto out;
	}
	child_indent(ed, root_el, ind, sizeof(ind));
	guestxml_sb_printf(&b, "\n%s", ind);
	numatune_text(&b, ind, ed->unit, rec, mode);
	if (b.oom)
		goto out;
	if (cputune == NULL) {
		/* a new <cputune> (if any) went after these; numatune follows it */
		static const char *const after[] = { "vcpu", "vcpus", "iothreads", "iothreadids", NULL };
		cputune = last_of(sc, root, after);
	}
	if (cputune)
		add_edit(ed, cputune->end, cputune->end, b.p);
	else
		add_edit(ed, root_el->stag_end, root_el->stag_end, b.p);
out:
	return edit_end(ed, &b);
}

static void
detect_unit(struct editor *ed)
{
	const struct scan *sc = ed->sc;
	const struct el *root = &sc->els[0], *c = first_child(sc, root);
	long r = indent_len(sc, root->start), k = c ? indent_len(sc, c->start) : -1;

	snprintf(ed->unit, sizeof(ed->unit), "  ");
	if (r < 0)
		r = 0;
	if (k > r && (size_t)(k - r) < sizeof(ed->unit)) {
		memcpy(ed->unit, sc->s + c->start - (size_t)(k - r), (size_t)(k - r));
		ed->unit[k - r] = '\0';
	}
}

int
guestxml_apply(const char *xml, size_t len, const struct guesttopo_rec *rec, unsigned parts,
               char **out, size_t *outlen, struct llcd_err *err)
{
	struct scan sc = { xml, len, NULL, 0, 0 };
	struct editor ed = { 0 };
	struct guestxml_domain d, after;
	xmlDocPtr doc = NULL;
	xmlNodePtr root;
	uint64_t *mem = NULL;
	struct sbuf o = { 0 };
	const struct el *cputune = NULL;
	int rc = -1, idx = 0;

	*out = NULL;
	if (outlen)
		*outlen = 0;
	if (rec == NULL || rec->nvcpus < 1)
		return llcd_err_set(err, "guestxml: no recommendation");
	if ((doc = guestxml_read_doc(xml, len, err)) == NULL)
		return -1;
	if (guestxml_read_domain(doc, &d, err) < 0)
		goto out;
	if (d.vcpus != rec->nvcpus) {
		llcd_err_set(err, WHAT ": domain '%s' has %d vCPUs (<vcpu>%d</vcpu>) but the "
		    "recommendation is for %d; compute it for this domain", d.name, d.vcpus, d.vcpus,
		    rec->nvcpus);
		goto out;
	}
	if ((parts & GUESTXML_NUMA) && rec->ncells > 0) {
		if (d.memory_kib == 0) {
			llcd_err_set(err, WHAT ": domain '%s' has no <memory> to split over %d NUMA cells",
			    d.name, rec->ncells);
			goto out;
		}
		mem = calloc((size_t)rec->ncells, sizeof(*mem));
		if (mem == NULL) {
			llcd_err_set(err, "guestxml: out of memory");
			goto out;
		}
		if (guesttopo_cell_memory(rec, d.memory_kib, mem, err) < 0) {
			llcd_err_prefix(err, WHAT ": domain '%s'", d.name);
			goto out;
		}
	}
	if (scan_doc(&sc, err) < 0)
		goto out;
	root = xmlDocGetRootElement(doc);
	if (sc.n == 0 || match_nodes(root, &sc, &idx, err) < 0)
		goto out;
	if (idx != sc.n) {
		llcd_err_set(err, WHAT ": internal: %d elements found, libxml2 has %d", sc.n, idx);
		goto out;
	}
	ed.sc = &sc;
	detect_unit(&ed);
	edit_cpu(&ed, root, rec, parts, mem, d.memory_kib);
	if (parts & GUESTXML_CPUTUNE)
		edit_cputune(&ed, root, rec, &cputune);
	else
		cputune = root_child(&sc, root, "cputune");
	if (parts & GUESTXML_NUMATUNE)
		edit_numatune(&ed, root, rec, cputune);
	if (ed.oom) {
		llcd_err_set(err, "guestxml: out of memory");
		goto out;
	}
	qsort(ed.e, (size_t)ed.n, sizeof(*ed.e), cmp_edit);
	size_t pos = 0;
	for (int i = 0; i < ed.n; i++) {
		if (ed.e[i].at < pos) {
			llcd_err_set(err, WHAT ": internal: overlapping edits at byte %zu", ed.e[i].at);
			goto out;
		}
		guestxml_sb_mem(&o, xml + pos, ed.e[i].at - pos);
		guestxml_sb_printf(&o, "%s", ed.e[i].text);
		pos = ed.e[i].at + ed.e[i].del;
	}
	guestxml_sb_mem(&o, xml + pos, len - pos);
	if (o.oom) {
		llcd_err_set(err, "guestxml: out of memory");
		goto out;
	}
	if (o.p == NULL && (o.p = strdup("")) == NULL) {
		llcd_err_set(err, "guestxml: out of memory");
		goto out;
	}
	/* check what we wrote */
	if (guestxml_read(o.p, o.n, &after, err) < 0) {
		llcd_err_prefix(err, "guestxml: internal: the rewritten XML does not read back");
		goto out;
	}
	if (after.vcpus != rec->nvcpus ||
	    ((parts & GUESTXML_TOPOLOGY) &&
	     memcmp(&after.topo, &rec->topo, sizeof(after.topo)) != 0) ||
	    ((parts & GUESTXML_NUMA) && after.ncells != rec->ncells &&
	     !(rec->ncells == 0 && after.ncells == 1))) {
		llcd_err_set(err, "guestxml: internal: the rewritten XML reads back differently");
		goto out;
	}
	*out = o.p;
	o.p = NULL;
	if (outlen)
		*outlen = o.n;
	rc = 0;
out:
	for (int i = 0; i < ed.n; i++)
		free(ed.e[i].text);
	free(ed.e);
	free(sc.els);
	free(mem);
	free(o.p);
	xmlFreeDoc(doc);
	return rc;
}

