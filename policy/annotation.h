// SPDX-License-Identifier: GPL-2.0-or-later
/* annotation.h - the parsed llc-policy annotation of one domain.
 *
 * Users write, inside the domain XML's <metadata>:
 *   <llc:llc-policy xmlns:llc="urn:llcd:llc-policy:1" mode="aggregate"
 *                   isolation="core" topology="match" infer="wakeups">
 *     <llc:tune aggr-tolerance="1" overaggr-pct="50" imb-pct="20"
 *               epoch-ms="10" affinity-timeout="5"/>
 *     <llc:group name="sim" vcpus="0-7"/>
 *   </llc:llc-policy>
 * The pure policy only sees this struct; the libxml2 parser is
 * annotation_xml.h (outside the pure core). docs/llc-policy.md documents
 * every attribute.
 */
#ifndef LLCD_ANNOTATION_H
#define LLCD_ANNOTATION_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "names.h"

#define POLICY_NS "urn:llcd:llc-policy:1"
#define POLICY_MAX_GROUPS 64
#define POLICY_GROUP_NAME 32

enum policy_mode {
	POLICY_MODE_NONE,       /* not managed; its load still counts */
	POLICY_MODE_STATIC,     /* initial placement only, never moved */
	POLICY_MODE_AGGREGATE,  /* preferred-LLC hysteresis on vCPU groups */
	POLICY_MODE_SPREAD,     /* busy vCPUs on distinct LLCs */
};

enum policy_isolation {
	POLICY_ISO_NONE,        /* may share cores with other domains */
	POLICY_ISO_CORE,        /* owns whole physical cores */
};

enum policy_topology {
	POLICY_TOPO_KEEP,       /* leave the guest CPU topology alone */
	POLICY_TOPO_MATCH,      /* shape the guest's dies/caches like its LLCs */
};

enum policy_infer {
	POLICY_INFER_WAKEUPS,   /* aggregate: groups from vCPU wakeups (default) */
	POLICY_INFER_NONE,      /* only annotated and reported groups */
};

/* Per-domain knobs; defaults are the kernel's (policy_tune_defaults()). */
struct policy_tune {
	int aggr_tolerance;     /* 0 off, 1 strict .. >=100 ignore size guard */
	int overaggr_pct;       /* 1..100; 0 = auto: 50 with SMT, 75 without */
	int imb_pct;            /* 0..100 */
	int epoch_ms;           /* decay half-life; 0 = one sampling period */
	int affinity_timeout;   /* epochs without activity before dropping */
	int max_moves;          /* vCPU moves per group per period, 1..64 */
	bool benefit_check;     /* back off when counters show a slowdown */
	int holddown_s;         /* seconds to stay backed off, 1..86400 */
};

struct policy_group_spec {
	char name[POLICY_GROUP_NAME];
	struct cpuset vcpus;    /* vCPU numbers */
};

struct policy_annotation {
	enum policy_mode mode;
	enum policy_isolation isolation;
	enum policy_topology topology;
	enum policy_infer infer;
	struct policy_tune tune;
	int ngroups;
	struct policy_group_spec groups[POLICY_MAX_GROUPS];
};

void policy_tune_defaults(struct policy_tune *t);
/* Whether b changes a's mode, isolation or groups: fields whose change
 * places the domain afresh. */
bool policy_annotation_shape_changed(const struct policy_annotation *a, const struct policy_annotation *b);
/* Copy only the groups in use (the struct has room for POLICY_MAX_GROUPS). */
void policy_annotation_copy(struct policy_annotation *dst, const struct policy_annotation *src);
/* An annotation with every default (mode none, no isolation, keep). */
void policy_annotation_defaults(struct policy_annotation *a);
/* The same, written only up to its groups: for a copy cut after them
 * (policy_annotation_size). */
void policy_annotation_reset(struct policy_annotation *a);
/* The bytes an annotation of ngroups groups needs: the struct cut after
 * its groups in use (a domain's copy, kept for as long as the domain). */
size_t policy_annotation_size(int ngroups);
/* A heap copy of src cut after its groups in use (policy_annotation_size):
 * read it, copy from it with policy_annotation_copy, free() it; never copy
 * it by value or write groups past its ngroups. NULL: out of memory. */
struct policy_annotation *policy_annotation_dup(const struct policy_annotation *src);

/* Their names (names.h: X_name(), X_from_name(), the table X_names), the
 * words of the annotation's attributes, llcd.conf's default-mode and
 * default-isolation, and llcctl policy's options. */
LLCD_NAMES_DECLARE(policy_mode, enum policy_mode);
LLCD_NAMES_DECLARE(policy_isolation, enum policy_isolation);
LLCD_NAMES_DECLARE(policy_topology, enum policy_topology);
LLCD_NAMES_DECLARE(policy_infer, enum policy_infer);

#endif
