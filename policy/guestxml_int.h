// SPDX-License-Identifier: GPL-2.0-or-later
/* guestxml_int.h - what the domain XML reader (guestxml.c) and the
 * splicing writer (guestxml_apply.c) share; private to policy/. */
#ifndef LLCD_GUESTXML_INT_H
#define LLCD_GUESTXML_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "guestxml.h"

#define WHAT "domain XML"
#define MAX_DEPTH 256

/* A growable string; oom once an allocation failed. */
struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

void guestxml_sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void guestxml_sb_mem(struct sbuf *b, const char *s, size_t n);

xmlDocPtr guestxml_read_doc(const char *buf, size_t len, struct llcd_err *err);
bool guestxml_is_el(const xmlNode *n, const char *name);
xmlNodePtr guestxml_child(const xmlNode *parent, const char *name);
/* The guest topology, memory and cells of a parsed domain document. */
int guestxml_read_domain(xmlDocPtr doc, struct guestxml_domain *d, struct llcd_err *err);

#endif
