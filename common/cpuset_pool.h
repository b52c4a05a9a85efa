// SPDX-License-Identifier: GPL-2.0-or-later
/* cpuset_pool.h - interned CPU sets: one refcounted copy of each distinct set.
 *
 * A struct cpuset is 256 bytes (CPUSET_MAX 2048 bits) whatever the host, and
 * llcd keeps several per vCPU (the engine's home, wanted and sent pins, the
 * back-end's cached affinity and applied pin). Most vCPUs of a host share a
 * handful of distinct sets (an LLC's PUs, a PU, the shared pool), so a
 * per-vCPU slot holds a pointer to the pool's copy instead: 8 bytes, not 256
 * (32,000 vCPUs: ~1 MB, not ~40 MB).
 *
 * A slot is a `const struct cpuset *`, never NULL once initialised: the
 * empty set is &cpuset_none (cpuset.h), which the pool hands out without
 * counting.
 * Readers dereference it; writers go through cpuset_pool_set (by value:
 * hashed and looked up, unless equal to the slot's set) or
 * cpuset_pool_share (another slot's pointer: no hashing). Sets are never
 * changed in place. Memory: one entry (~280 bytes) per distinct set held;
 * an entry is freed when its last slot lets go.
 */
#ifndef LLCD_CPUSET_POOL_H
#define LLCD_CPUSET_POOL_H

#include <stddef.h>

#include "cpuset.h"

struct cpuset_pool;

struct cpuset_pool *cpuset_pool_new(void);
/* Frees the pool and every entry: slots still pointing into it dangle. */
void cpuset_pool_free(struct cpuset_pool *p);

/* *slot becomes the pool's copy of set (*slot may be NULL: nothing held).
 * Returns 0, or -1 out of memory with *slot unchanged. */
int cpuset_pool_set(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *set);
/* cpuset_pool_set, and out of memory *slot becomes &cpuset_none (counted in
 * cpuset_pool_nomem): for holders to whom an empty set means "unknown, made
 * again" (the engine's pins, the live back-end's affinities). */
void cpuset_pool_set_or_none(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *set);
/* *slot becomes src, a set of this pool or &cpuset_none (another slot's). */
void cpuset_pool_share(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *src);
/* *slot lets go of its set and becomes &cpuset_none. */
void cpuset_pool_drop(struct cpuset_pool *p, const struct cpuset **slot);

/* From now on a set no slot holds stays, and stays valid, until the next
 * cpuset_pool_collect (the live back-end hands its sets to the engine's
 * samples, which are read until its next observation). */
void cpuset_pool_defer(struct cpuset_pool *p);
void cpuset_pool_collect(struct cpuset_pool *p);

/* Distinct sets held (for tests and stats). */
size_t cpuset_pool_count(const struct cpuset_pool *p);
/* cpuset_pool_set calls that failed for memory. */
size_t cpuset_pool_nomem(const struct cpuset_pool *p);

#endif
