// SPDX-License-Identifier: GPL-2.0-or-later
/* facts.c - fact rows and a domain's facts (query.h). */
#include "query.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct agent_fact *
add_row(struct agent_facts *f, const char *group, const char *key, enum agent_fact_type type)
{
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 16;
		struct agent_fact *r = realloc(f->rows, sizeof(*r) * (size_t)cap);
		if (r == NULL) {
			f->nomem = true;
			return NULL;
		}
		f->rows = r;
		f->cap = cap;
	}
	struct agent_fact *r = &f->rows[f->n++];
	*r = (struct agent_fact){ .group = group, .key = key, .type = type };
	return r;
}

void
agent_facts_str(struct agent_facts *f, const char *group, const char *key, const char *fmt, ...)
{
	struct agent_fact *r;
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		f->nomem = true;
		return;
	}
	if ((r = add_row(f, group, key, AGENT_FACT_STR)) == NULL) {
		free(s);
		return;
	}
	r->s = s;
}

void
agent_facts_int(struct agent_facts *f, const char *group, const char *key, int64_t v)
{
	struct agent_fact *r = add_row(f, group, key, AGENT_FACT_INT);

	if (r)
		r->i = v;
}

void
agent_facts_bool(struct agent_facts *f, const char *group, const char *key, bool v)
{
	struct agent_fact *r = add_row(f, group, key, AGENT_FACT_BOOL);

	if (r)
		r->i = v;
}

void
agent_facts_null(struct agent_facts *f, const char *group, const char *key)
{
	add_row(f, group, key, AGENT_FACT_NULL);
}

void
agent_facts_cpus(struct agent_facts *f, const char *group, const char *key, const struct cpuset *s)
{
	char buf[CPUSET_MAX * 5];

	if (cpuset_format(s, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(%d CPUs)", cpuset_count(s));
	agent_facts_str(f, group, key, "%s", buf);
}

static bool
same_group(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

const struct agent_fact *
agent_facts_find(const struct agent_facts *f, const char *group, const char *key)
{
	for (int i = 0; i < f->n; i++)
		if (same_group(f->rows[i].group, group) && strcmp(f->rows[i].key, key) == 0)
			return &f->rows[i];
	return NULL;
}

bool
agent_facts_has_group(const struct agent_facts *f, const char *group)
{
	for (int i = 0; i < f->n; i++)
		if (same_group(f->rows[i].group, group))
			return true;
	return false;
}

void
agent_facts_free(struct agent_facts *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->rows[i].s);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

void
agent_dominfo_init(struct agent_dominfo *di)
{
	memset(di, 0, sizeof(*di));
	di->state = AGENT_DOM_UNMANAGED;
	di->pid = di->nvcpus = di->maxvcpus = di->nvcpu_info = -1;
}

void
agent_dominfo_clear(struct agent_dominfo *di)
{
	for (int v = 0; v < di->nvcpu_info && di->vcpus; v++)
		agent_facts_free(&di->vcpus[v].facts);
	free(di->vcpus);
	agent_facts_free(&di->facts);
	agent_dominfo_init(di);
}
