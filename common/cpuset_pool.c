// SPDX-License-Identifier: GPL-2.0-or-later
/* cpuset_pool.c - interned CPU sets (cpuset_pool.h). A chained hash table of
 * entries, each a set, its reference count and its hash; a slot's pointer is
 * the entry's first member, so it leads back to its entry. */
#include "cpuset_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	struct cpuset set;              /* first: a slot's pointer is the entry's */
	struct ent *next;               /* same bucket */
	uint64_t hash;
	size_t refs;
};

struct cpuset_pool {
	struct ent **b;                 /* nb buckets (a power of 2) */
	size_t nb, n;
	size_t nomem;                   /* cpuset_pool_set's failures */
	bool defer;                     /* unused entries wait for collect */
};

struct cpuset_pool *
cpuset_pool_new(void)
{
	struct cpuset_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->nb = 64;
	p->b = calloc(p->nb, sizeof(*p->b));
	if (p->b == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

void
cpuset_pool_free(struct cpuset_pool *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->nb; i++)
		for (struct ent *e = p->b[i], *next; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	free(p->b);
	free(p);
}

/* Over the words up to the last one set, so that a host's sets cost what
 * the host's PUs take, not CPUSET_WORDS. */
static uint64_t
set_hash(const struct cpuset *s)
{
	uint64_t h = 0x9e3779b97f4a7c15u;
	int last = CPUSET_WORDS - 1;

	while (last >= 0 && s->w[last] == 0)
		last--;
	for (int i = 0; i <= last; i++) {
		h ^= s->w[i] + (uint64_t)i;
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	return h;
}

static void
grow(struct cpuset_pool *p)
{
	size_t nb = p->nb * 2;
	struct ent **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return;                 /* longer chains, still correct */
	for (size_t i = 0; i < p->nb; i++)
		for (struct ent *e = p->b[i], *next; e != NULL; e = next) {
			next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	free(p->b);
	p->b = b;
	p->nb = nb;
}

/* The entry of set with a reference taken, made if new; NULL out of memory. */
static const struct cpuset *
intern(struct cpuset_pool *p, const struct cpuset *set)
{
	uint64_t h = set_hash(set);
	struct ent *e;

	for (e = p->b[h & (p->nb - 1)]; e != NULL; e = e->next)
		if (e->hash == h && memcmp(&e->set, set, sizeof(*set)) == 0) {
			e->refs++;
			return &e->set;
		}
	e = malloc(sizeof(*e));
	if (e == NULL)
		return NULL;
	e->set = *set;
	e->hash = h;
	e->refs = 1;
	e->next = p->b[h & (p->nb - 1)];
	p->b[h & (p->nb - 1)] = e;
	if (++p->n > p->nb)
		grow(p);
	return &e->set;
}

static void
unref(struct cpuset_pool *p, const struct cpuset *s)
{
	if (s == NULL || s == &cpuset_none)
		return;
	struct ent *e = (struct ent *)(uintptr_t)s;
	if (--e->refs > 0 || p->defer)
		return;
	for (struct ent **pp = &p->b[e->hash & (p->nb - 1)]; *pp != NULL; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	p->n--;
	free(e);
}

int
cpuset_pool_set(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *set)
{
	const struct cpuset *old = *slot, *n;

	if (old != NULL && (old == set || cpuset_equal(old, set)))
		return 0;
	if (cpuset_empty(set))
		n = &cpuset_none;
	else if ((n = intern(p, set)) == NULL) {
		p->nomem++;
		return -1;
	}
	*slot = n;
	unref(p, old);
	return 0;
}

void
cpuset_pool_set_or_none(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *set)
{
	if (cpuset_pool_set(p, slot, set) < 0)
		cpuset_pool_drop(p, slot);
}

void
cpuset_pool_share(struct cpuset_pool *p, const struct cpuset **slot, const struct cpuset *src)
{
	const struct cpuset *old = *slot;

	if (old == src)
		return;
	if (src != &cpuset_none)
		((struct ent *)(uintptr_t)src)->refs++;
	*slot = src;
	unref(p, old);
}

void
cpuset_pool_drop(struct cpuset_pool *p, const struct cpuset **slot)
{
	unref(p, *slot);
	*slot = &cpuset_none;
}

void
cpuset_pool_defer(struct cpuset_pool *p)
{
	p->defer = true;
}

void
cpuset_pool_collect(struct cpuset_pool *p)
{
	for (size_t i = 0; i < p->nb; i++)
		for (struct ent **pp = &p->b[i]; *pp != NULL;) {
			struct ent *e = *pp;
			if (e->refs > 0) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			p->n--;
			free(e);
		}
}

size_t
cpuset_pool_count(const struct cpuset_pool *p)
{
	return p->n;
}

size_t
cpuset_pool_nomem(const struct cpuset_pool *p)
{
	return p->nomem;
}
