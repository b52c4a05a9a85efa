// SPDX-License-Identifier: GPL-2.0-or-later
/* policyrule.h - llcd.conf's policy-rule: an llc-policy for a domain that
 * carries no annotation, chosen by what an orchestrator already writes.
 *
 *   policy-rule MATCH [MATCH ...] POLICY
 *
 *   MATCH  name=GLOB       the domain's name
 *          flavor=GLOB     Nova's flavor: <nova:instance><nova:flavor name=..>
 *                          in the metadata, namespace
 *                          http://openstack.org/xmlns/libvirt/nova/<version>
 *                          (any version: Nova writes 1.0 or 1.1)
 *          meta={URI}ELEMENT[@ATTR][=GLOB]
 *                          an element of namespace URI anywhere in the
 *                          domain's <metadata>; with @ATTR it must carry
 *                          that attribute, with =GLOB the attribute's value
 *                          (or, without @ATTR, the element's text) must
 *                          match. URI and ELEMENT are globs too.
 *          namespace=GLOB  KubeVirt: the namespace of a domain named
 *                          NAMESPACE_NAME (the name up to its first '_';
 *                          a name without '_' has none and never matches)
 *          label=KEY[=GLOB], annotation=KEY[=GLOB]
 *                          KubeVirt: the VMI's label or annotation KEY
 *                          (exact), with a value matching GLOB, as
 *                          <pod xmlns="urn:llcd:kubevirt:1"><label
 *                          key="KEY">VALUE</label>...</pod> in the domain's
 *                          metadata (llcd-kubevirt-hook writes it at the
 *                          domain's definition: virt-launcher itself writes
 *                          neither labels nor annotations there)
 *   POLICY <llc-policy ...>...</llc-policy>   the rest of the line
 *          @/absolute/file.xml                 a file holding the element
 *          ATTR=VALUE ...                      attributes of <llc-policy>:
 *                                              mode=aggregate isolation=core
 *
 * Every MATCH of a rule must hold; the first rule that matches wins (file
 * order). A GLOB is fnmatch(3) without flags (*, ?, [...], case matters);
 * a value may be put in double quotes to hold spaces. The policy goes
 * through annot_parse() (annotation_xml.h), the annotation's own parser,
 * so a rule's policy is refused with the same words as an annotation.
 *
 * This module knows no libvirt: a back-end hands it a domain's name and,
 * if it has one, the XML of its metadata (a whole <domain> or its
 * <metadata> element), read with xmlsafe_read() and bounded as domain
 * XML is (XMLSAFE_DOMAIN_MAX).
 */
#ifndef LLCD_POLICYRULE_H
#define LLCD_POLICYRULE_H

#include <stdbool.h>
#include <stddef.h>

#include "annotation.h"
#include "err.h"

#define POLICYRULE_MAX 64               /* rules in a configuration */
#define POLICYRULE_MATCHES 8            /* MATCHes in one rule */
#define POLICYRULE_TEXT 1024            /* a rule's normalised text */
#define POLICYRULE_WHERE 300            /* "file:line" */
#define POLICYRULE_SOURCE 256           /* "@/path" */
#define POLICYRULE_NOVA_NS "http://openstack.org/xmlns/libvirt/nova/"   /* + version */
#define POLICYRULE_KUBEVIRT_NS "urn:llcd:kubevirt:1"    /* llcd-kubevirt-hook's <pod> */

enum policyrule_kind {
	POLICYRULE_NAME,
	POLICYRULE_FLAVOR,
	POLICYRULE_META,
	POLICYRULE_NAMESPACE,
	POLICYRULE_LABEL,
	POLICYRULE_ANNOTATION,
};

struct policyrule_match {
	enum policyrule_kind kind;
	char glob[256];                 /* name, flavor; meta: the value ("" none) */
	bool has_value;                 /* meta: =GLOB given */
	char ns[256];                   /* meta: namespace URI glob */
	char element[64];               /* meta: element name glob */
	char attr[64];                  /* meta: "" the element's text */
	char key[320];                  /* label, annotation: the key (a
	                                 * Kubernetes key: 253 + 1 + 63) */
};

struct policyrule {
	char where[POLICYRULE_WHERE];   /* "file:line" */
	char match[POLICYRULE_TEXT];    /* the MATCHes, normalised */
	char source[POLICYRULE_SOURCE]; /* "@file" or "" (inline) */
	char policy[POLICYRULE_TEXT];   /* canonical <llc:llc-policy> (annot_format) */
	int nmatch;
	struct policyrule_match m[POLICYRULE_MATCHES];
	bool need_metadata;             /* a flavor= or meta= MATCH */
	struct policy_annotation annot;
};

/* Parse the value of one policy-rule line. where ("file:line") is kept
 * for messages and llcctl; errors do not repeat it (the caller prefixes
 * it). A policy file (@path) is read here, at most ANNOT_XML_MAX bytes. */
int policyrule_parse(const char *text, const char *where, struct policyrule *r, struct llcd_err *err);

/* The rule as llcd.conf takes it back: "MATCH ... POLICY" with the policy
 * as @file or in canonical form. */
void policyrule_format(const struct policyrule *r, char *buf, size_t len);

/* The rules of a configuration, in order (malloc'd: a rule holds a whole
 * annotation). */
struct policyrule_set {
	int n;
	struct policyrule *r;
};
struct policyrule_set *policyrule_set_new(void);
void policyrule_set_free(struct policyrule_set *s);
/* Append a parsed rule (a copy); -1 when POLICYRULE_MAX are there. */
int policyrule_set_add(struct policyrule_set *s, const struct policyrule *r, struct llcd_err *err);
/* Whether some rule needs the domain's metadata (flavor=, meta=). */
bool policyrule_set_need_metadata(const struct policyrule_set *s);

/* The first rule of s (NULL or empty: none) that matches the domain
 * called name with metadata xml (len bytes; NULL: none, so only name=
 * rules can match): its index, -1 when none matches, -2 when the XML is
 * malformed (err says why; no rule applies). */
int policyrule_find(const struct policyrule_set *s, const char *name, const char *xml, size_t len,
                    struct llcd_err *err);

/* Whether one MATCH holds: mostly for tests. meta is the <metadata>
 * element (an xmlNode *) or NULL. */
bool policyrule_match_one(const struct policyrule_match *m, const char *name, const void *meta);

/* The rule's annotation for a domain of nvcpus vCPUs: annot_check()
 * against its vCPU count (a group may name vCPUs it lacks); err then says
 * "policy-rule WHERE: ...". */
int policyrule_annotation(const struct policyrule *r, int nvcpus, struct policy_annotation *out,
                          struct llcd_err *err);

#endif
