// SPDX-License-Identifier: GPL-2.0-or-later
/* alloc.h - the constructor of an object whose every member starts at zero
 * (its empty state), defined once instead of once per type:
 *
 *	LLCD_DEFINE_NEW(topo_new, struct topo)
 *
 * defines struct topo *topo_new(void), which returns a zeroed struct topo or
 * NULL when memory is short. The header declares the function as usual. */
#ifndef LLCD_ALLOC_H
#define LLCD_ALLOC_H

#include <stdlib.h>

#define LLCD_DEFINE_NEW(fn, type)                                              \
	type *fn(void)                                                         \
	{                                                                      \
		return calloc(1, sizeof(type));                                \
	}

#endif
