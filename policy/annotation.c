// SPDX-License-Identifier: GPL-2.0-or-later
/* annotation.c - defaults and names for the parsed llc-policy annotation. */
#include "annotation.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

void
policy_tune_defaults(struct policy_tune *t)
{
	t->aggr_tolerance = 1;          /* kernel llc_balancing/aggr_tolerance */
	t->overaggr_pct = 0;            /* auto: 50, or 75 without SMT */
	t->imb_pct = 20;                /* kernel llc_balancing/imb_pct */
	t->epoch_ms = 0;                /* one sampling period (see docs/design.md) */
	t->affinity_timeout = 5;        /* kernel llc_epoch_affinity_timeout */
	t->max_moves = 2;
	t->benefit_check = true;
	t->holddown_s = 60;
}

void
policy_annotation_defaults(struct policy_annotation *a)
{
	memset(a, 0, sizeof(*a));
	policy_annotation_reset(a);
}

void
policy_annotation_reset(struct policy_annotation *a)
{
	memset(a, 0, offsetof(struct policy_annotation, groups));
	a->ngroups = 0;
	a->mode = POLICY_MODE_NONE;
	a->isolation = POLICY_ISO_NONE;
	a->topology = POLICY_TOPO_KEEP;
	a->infer = POLICY_INFER_WAKEUPS;
	policy_tune_defaults(&a->tune);
}

/* The annotation fields whose change means placing the domain afresh. */
bool
policy_annotation_shape_changed(const struct policy_annotation *a, const struct policy_annotation *b)
{
	if (a->mode != b->mode || a->isolation != b->isolation || a->ngroups != b->ngroups)
		return true;
	for (int i = 0; i < a->ngroups; i++)
		if (strcmp(a->groups[i].name, b->groups[i].name) != 0 ||
		    !cpuset_equal(&a->groups[i].vcpus, &b->groups[i].vcpus))
			return true;
	return false;
}

size_t
policy_annotation_size(int ngroups)
{
	if (ngroups < 0)
		ngroups = 0;
	if (ngroups > POLICY_MAX_GROUPS)
		ngroups = POLICY_MAX_GROUPS;
	return offsetof(struct policy_annotation, groups) + sizeof(struct policy_group_spec) * (size_t)ngroups;
}

/* Copy only the groups in use (the struct has room for 64): the struct up to
 * them and those groups, policy_annotation_size's bytes. */
void
policy_annotation_copy(struct policy_annotation *dst, const struct policy_annotation *src)
{
	memcpy(dst, src, policy_annotation_size(src->ngroups));
}

struct policy_annotation *
policy_annotation_dup(const struct policy_annotation *src)
{
	struct policy_annotation *a = malloc(policy_annotation_size(src->ngroups));

	if (a != NULL)
		policy_annotation_copy(a, src);
	return a;
}

LLCD_NAMES(policy_mode, enum policy_mode, POLICY_MODE_SPREAD,
    [POLICY_MODE_NONE] = "none", [POLICY_MODE_STATIC] = "static",
    [POLICY_MODE_AGGREGATE] = "aggregate", [POLICY_MODE_SPREAD] = "spread")
LLCD_NAMES(policy_isolation, enum policy_isolation, POLICY_ISO_CORE,
    [POLICY_ISO_NONE] = "none", [POLICY_ISO_CORE] = "core")
LLCD_NAMES(policy_topology, enum policy_topology, POLICY_TOPO_MATCH,
    [POLICY_TOPO_KEEP] = "keep", [POLICY_TOPO_MATCH] = "match")
LLCD_NAMES(policy_infer, enum policy_infer, POLICY_INFER_NONE,
    [POLICY_INFER_WAKEUPS] = "wakeups", [POLICY_INFER_NONE] = "none")
