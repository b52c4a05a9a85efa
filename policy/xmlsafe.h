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

/* Parse buf (len bytes, at most max) into a document, or NULL with err
 * ("WHAT: ..."). extra_options are added to XML_PARSE_NONET |
 * XML_PARSE_NOERROR | XML_PARSE_NOWARNING. */
xmlDocPtr xmlsafe_read(const char *buf, size_t len, size_t max, const char *what,
                       int extra_options, struct llcd_err *err);

#endif
