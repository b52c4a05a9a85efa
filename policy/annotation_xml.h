// SPDX-License-Identifier: GPL-2.0-or-later
/* annotation_xml.h - the llc-policy annotation <-> XML (libxml2).
 *
 * Reads the <llc-policy xmlns="urn:llcd:llc-policy:1"> element, standalone
 * or inside a libvirt domain XML's <metadata>, into struct
 * policy_annotation, and writes the canonical form back (for
 * virDomainSetMetadata). The element is recognised by its namespace; the
 * prefix does not matter. docs/llc-policy.md documents every attribute.
 *
 * Every function validates completely: on error it returns -1, fills err
 * with a message that names the element, the attribute and the allowed
 * values, and leaves *out at policy_annotation_defaults() so that a caller
 * can never act on a half-parsed annotation (the domain stays unmanaged).
 *
 * Untrusted input: sizes are bounded, the network and DTDs are never
 * loaded, a DOCTYPE (and so any entity declaration) is refused.
 */
#ifndef LLCD_ANNOTATION_XML_H
#define LLCD_ANNOTATION_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "annotation.h"
#include "err.h"
#include "xmlsafe.h"

#define ANNOT_XML_MAX (64 * 1024)               /* a standalone element */
#define ANNOT_DOMAIN_XML_MAX XMLSAFE_DOMAIN_MAX    /* a whole domain XML */
#define ANNOT_NS_PREFIX "llc"                   /* used by annot_format() */
#define ANNOT_NS_BASE "urn:llcd:llc-policy:"    /* + version; ours is 1 */

/* Parse a standalone <llc-policy> element (xml need not be terminated).
 * nvcpus is the domain's vCPU count for the group range check; <= 0 means
 * unknown and skips that check. */
int annot_parse(const char *xml, size_t len, int nvcpus,
    struct policy_annotation *out, struct llcd_err *err);

/* The same for what virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
 * POLICY_NS, ...) returns: libvirt strips the namespace there, so elements
 * without a namespace are taken as ours (as libvirt does on the way in). */
int annot_parse_metadata(const char *xml, size_t len, int nvcpus,
    struct policy_annotation *out, struct llcd_err *err);

/* Find the annotation among the <metadata> children of a libvirt domain
 * XML and parse it. *nvcpus_out gets the domain's maximum vCPU count (the
 * <vcpu> text; its 'current' attribute is not what bounds vCPU numbers).
 * No annotation is not an error: *found = false, *out = defaults, 0.
 * nvcpus_out and found may be NULL. */
int annot_from_domain_xml(const char *domxml, size_t len, int *nvcpus_out,
    bool *found, struct policy_annotation *out, struct llcd_err *err);

/* Check a parsed (or hand-built) annotation against the same rules the
 * parser applies; nvcpus <= 0 skips the vCPU range check. */
int annot_check(const struct policy_annotation *a, int nvcpus,
    struct llcd_err *err);

/* Field by field equality (group names up to their NUL, groups up to
 * ngroups), e.g. to notice that a domain's annotation changed. */
bool annot_equal(const struct policy_annotation *a,
    const struct policy_annotation *b);

/* Write the canonical element: prefix llc, only non-default attributes,
 * <tune> only when a knob differs from its default, groups in order, one
 * line, NUL-terminated. annot_parse() of the result gives back *a. Fails
 * (-1) when annot_check() fails or buf is too small; ANNOT_XML_MAX always
 * suffices. */
int annot_format(const struct policy_annotation *a, char *buf, size_t len,
    struct llcd_err *err);

/* The same with a default namespace and no prefix: the value to pass to
 * virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, buf, "llc",
 * POLICY_NS, flags). libvirt declares the key's prefix on the element and
 * fails ("failed to create a new XML namespace") when the element already
 * declares xmlns:llc, which annot_format()'s output does. */
int annot_format_metadata(const struct policy_annotation *a, char *buf,
    size_t len, struct llcd_err *err);

#endif
