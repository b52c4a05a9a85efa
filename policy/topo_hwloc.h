// SPDX-License-Identifier: GPL-2.0-or-later
/* topo_hwloc.h - build the topology model from hwloc: the live host, an
 * hwloc XML file, or a synthetic description such as
 * "pack:1 [numa] l3:8 core:8 pu:2". Kept apart from the pure policy core. */
#ifndef LLCD_TOPO_HWLOC_H
#define LLCD_TOPO_HWLOC_H

#include "err.h"
#include "topo.h"

/* source: NULL or "" = the live host; a string ending in ".xml" or naming an
 * existing file = hwloc XML; anything else = hwloc synthetic description. */
struct topo *topo_load(const char *source, struct llcd_err *err);

#endif
