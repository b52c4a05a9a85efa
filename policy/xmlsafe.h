// SPDX-License-Identifier: GPL-2.0-or-later
/* xmlsafe.h - the one way llcd reads untrusted XML with libxml2 (domain
 * XML, annotations): bounded size, no NUL bytes, no DOCTYPE (so no entity
 * declarations, no DTD loading), no network, no messages on stderr; an
 * error names what was read and where it broke. */
#ifndef LLCD_XMLSAFE_H
#define LLCD_XMLSAFE_H

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stddef.h>

#include "err.h"

/* A libvirt domain XML: at most this many bytes, and at most this many
 * vCPUs (<vcpu>, and each <cpu><topology> number): CPUSET_MAX, the CPUs the
 * engine models. virt.c (listing domains), guestxml.c (llcctl topology) and
 * the guest channel lookup (guestchan_xml.c) read domain XML through
 * xmlsafe_read_domain() and check vCPU numbers against this one limit. */
#define XMLSAFE_DOMAIN_MAX (4 * 1024 * 1024)
#define XMLSAFE_MAX_VCPUS 2048

/* Parse buf (len bytes, at most max) into a document, or NULL with err
 * ("WHAT: ..."). extra_options are added to XML_PARSE_NONET |
 * XML_PARSE_NOERROR | XML_PARSE_NOWARNING. */
xmlDocPtr xmlsafe_read(const char *buf, size_t len, size_t max, const char *what,
                       int extra_options, struct llcd_err *err);

/* xmlsafe_read() of a whole domain XML: at most XMLSAFE_DOMAIN_MAX bytes,
 * errors start with "domain XML: ". The root element is the caller's to
 * check. */
xmlDocPtr xmlsafe_read_domain(const char *xml, size_t len, struct llcd_err *err);

/* The integer attribute name of n, in lo..hi, into *out: 0 (also when it
 * is absent, *out unchanged), or -1 with err ("WHAT: <ELEMENT NAME='V'>: not
 * an integer in LO..HI"; err may be NULL). */
int xmlsafe_attr_int(const xmlNode *n, const char *name, int lo, int hi, int *out,
                     const char *what, struct llcd_err *err);

#endif
