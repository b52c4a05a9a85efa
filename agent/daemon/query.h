// SPDX-License-Identifier: GPL-2.0-or-later
/* query.h - what llcctl asks of a back-end, through the daemon: what it
 * knows of a domain and of the host, a domain's annotation and XML, the
 * guest helper's channel, and its counters. The loop's verbs are
 * backend.h; nothing here is called by the loop.
 *
 * Facts come in two kinds. The daemon reasons about a few (a domain's
 * state, name, vCPUs, annotation, the judges of the host): those are
 * typed, below. Everything else a back-end knows (where a domain's memory
 * lives, its CPU bound, its connection, how the host is reached) is rows
 * of struct agent_facts: a key, optionally under a group, and a value.
 * The daemon turns rows into the JSON llcctl reads, one object per group,
 * in the order they were added, and never looks inside; so a new fact is
 * one row where the back-end knows it (and its line in llcctl's output).
 */
#ifndef LLCD_AGENT_QUERY_H
#define LLCD_AGENT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "cpuset.h"
#include "err.h"
#include "policy.h"
#include "policyrule.h"

struct llcd_stats;

/* --- fact rows ------------------------------------------------------------ */

enum agent_fact_type {
	AGENT_FACT_STR,
	AGENT_FACT_INT,
	AGENT_FACT_BOOL,
	AGENT_FACT_NULL,        /* known to be nothing (JSON null) */
};

struct agent_fact {
	const char *group;      /* NULL: top level; else the object it is in */
	const char *key;        /* both string literals: rows are not copied */
	enum agent_fact_type type;
	int64_t i;              /* INT, BOOL */
	char *s;                /* STR, malloc'd */
};

/* Rows in the order added; a row that cannot be stored (out of memory) is
 * dropped and nomem set. Zero-initialise, agent_facts_free() after. */
struct agent_facts {
	struct agent_fact *rows;
	int n, cap;
	bool nomem;
};

void agent_facts_str(struct agent_facts *f, const char *group, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void agent_facts_int(struct agent_facts *f, const char *group, const char *key, int64_t v);
void agent_facts_bool(struct agent_facts *f, const char *group, const char *key, bool v);
void agent_facts_null(struct agent_facts *f, const char *group, const char *key);
/* A CPU list, as text ("0-3,8"). */
void agent_facts_cpus(struct agent_facts *f, const char *group, const char *key, const struct cpuset *s);
/* The row of group (NULL: top level) and key, NULL when there is none. */
const struct agent_fact *agent_facts_find(const struct agent_facts *f, const char *group, const char *key);
/* Whether any row is in group. */
bool agent_facts_has_group(const struct agent_facts *f, const char *group);
void agent_facts_free(struct agent_facts *f);

/* --- a domain --------------------------------------------------------------- */

/* One vCPU as a back-end sees it. */
struct agent_vcpu_info {
	int tid;                        /* 0: thread not found */
	int last_cpu;
	struct cpuset affinity;         /* the kernel's, as last read */
	struct cpuset pinned_by_llcd;   /* empty: llcd holds no pin */
	int socket, die, cluster, core, thread;    /* guest position */
	struct agent_facts facts;       /* the rest (a cross-check of the
	                                 * position), shown after it */
};

/* What a back-end knows of one domain (llcctl dominfo, vcpuinfo, list):
 * the typed facts the daemon uses, and the rest as rows. Fields a back-end
 * does not know stay as agent_dominfo_init() left them ("" strings, -1,
 * false) and are not shown. */
struct agent_dominfo {
	enum agent_dom_state state;     /* the back-end's own view ... */
	char reason[LLCD_ERR_MSG];
	bool backend_error;             /* ... which wins over the engine's when
	                                 * the error is the back-end's own (a pin
	                                 * failed permanently, the annotation is
	                                 * invalid) */
	char name[POLICY_NAME];
	char key[17];                   /* the back-end's key, hex; "" none */
	int pid;                        /* -1 unknown */
	int nvcpus, maxvcpus;           /* -1 unknown */
	char annotation_error[LLCD_ERR_MSG];
	bool annotated;
	struct policy_annotation annot; /* when annotated */
	int rule;                       /* the policy-rule that gave annot: its
	                                 * number from 1 in file order; 0: none
	                                 * (an annotation, or nothing) */
	char rule_where[POLICYRULE_WHERE];      /* its file:line */
	char rule_match[POLICYRULE_TEXT];       /* its MATCHes */
	bool have_guest_topo;
	struct policy_guest_topo guest;
	int nvcpu_info;                 /* entries in vcpus (malloc'd); -1: the
	                                 * back-end does not list vCPU threads */
	struct agent_vcpu_info *vcpus;
	struct agent_facts facts;       /* the rest (group "guest_channel": the
	                                 * guest helper's channel, shown by hot too) */
};
void agent_dominfo_init(struct agent_dominfo *di);
/* Free what the back-end allocated (vcpus, facts) and init again. */
void agent_dominfo_clear(struct agent_dominfo *di);

/* --- the host ----------------------------------------------------------------- */

/* What can judge llcd's adaptive changes on this host (llcctl topology
 * "judges"; docs/design.md, "No judge, no harm"): the back-end's probes;
 * the daemon adds whether counters are used and the unjudged-groups
 * setting. */
struct agent_judges {
	char counters_reason[256];      /* what the counter probe found */
	bool mbm;                       /* memory bandwidth monitoring */
	char mbm_reason[LLCD_ERR_MSG + 128];
	char run_delay[128];            /* where run delay comes from */
};

/* What a back-end knows of the host beyond its topology (llcctl
 * topology): rows, and the judges when it probed them. Zeroed by the
 * caller; agent_facts_free(&facts) after. */
struct agent_hostinfo {
	struct agent_facts facts;
	bool have_judges;
	struct agent_judges judges;
};

/* --- the interface ------------------------------------------------------------ */

/* A request the back-end cannot serve by design (it has no such thing to
 * write): the entries that can refuse return it, with err saying why and
 * what to do instead. */
#define AGENT_QUERY_REFUSED (-3)

/* Every entry is optional (NULL: the back-end cannot), all with one ctx. */
struct agent_query {
	/* what it knows of a domain (agent_dominfo_init()ed by the caller);
	 * 0, or -1 when it does not know the domain */
	int (*describe)(void *ctx, uint64_t key, struct agent_dominfo *out);
	/* what it knows of the host */
	int (*describe_host)(void *ctx, struct agent_hostinfo *out);
	/* the raw llc-policy element (NULL: none), malloc'd */
	int (*get_annotation)(void *ctx, uint64_t key, char **xml, struct llcd_err *err);
	/* write (xml) or remove (NULL) the annotation: of the running domain
	 * (running: libvirt's "live") and/or its definition (config); 0, -1,
	 * or AGENT_QUERY_REFUSED */
	int (*set_annotation)(void *ctx, uint64_t key, const char *xml, bool running, bool config,
	                      struct llcd_err *err);
	/* the domain XML (inactive: the persistent definition), malloc'd */
	int (*get_xml)(void *ctx, uint64_t key, bool inactive, char **xml, struct llcd_err *err);
	/* redefine the persistent definition */
	int (*define_xml)(void *ctx, const char *xml, struct llcd_err *err);
	/* whether the domain runs now */
	bool (*is_running)(void *ctx, uint64_t key);
	/* add the guest helper's channel to the domain's persistent definition
	 * (llcctl guest-channel): the running domain of key, or with key 0 the
	 * defined domain called name (running or not); 0 added, 1 it has the
	 * channel already (path filled, nothing changed), -1 err, -2 no such
	 * domain (err says so); running: to the running domain as well
	 * (libvirt's "live") */
	int (*add_guest_channel)(void *ctx, uint64_t key, const char *name, bool running, char *path, size_t len,
	                         struct llcd_err *err);
	/* its rows of llcctl stats: it fills its members of st->v and sets
	 * the blocks (stats.h) they are in */
	void (*stats)(void *ctx, struct llcd_stats *st);
};

#endif
