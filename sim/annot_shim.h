/* annot_shim.h - the llc-policy annotation parser llcd uses.
 *
 * The real parser is policy/annotation_xml.h (annot_parse). Until it is
 * on main, annot_shim.c provides the same signature with a minimal
 * libxml2 reading (mode, isolation, topology, groups); once the header
 * exists this file includes it and the shim compiles to nothing.
 * Delete both files when annotation_xml.h has landed.
 */
#ifndef LLCSIM_ANNOT_SHIM_H
#define LLCSIM_ANNOT_SHIM_H

#if __has_include("annotation_xml.h")
#include "annotation_xml.h"
#else
#define LLCSIM_ANNOT_SHIM 1
#include <stddef.h>

#include "annotation.h"
#include "err.h"

int annot_parse(const char *xml, size_t len, int nvcpus, struct policy_annotation *out,
                struct llcd_err *err);
#endif

#endif
