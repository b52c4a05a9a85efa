// SPDX-License-Identifier: GPL-2.0-or-later
/* simbackend.c - llcd-sim's back-end: llcsim's world behind the daemon core. */
#include "simbackend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"
#include "log.h"
#include "policyrule.h"
#include "scenario.h"
#include "simops.h"
#include "topo_hwloc.h"
#include "world.h"

struct simbe {
	char path[256];
	struct sim_scenario *sc;
	struct topo *topo;
	struct sim_world *w;
	struct sim_ops_ctx ops;
	bool over;
	/* policy-rule: the daemon's set, and per domain the number (from 1)
	 * of the rule that gave it its policy, 0 none */
	const struct policyrule_set *rules;
	int *rule;
};

struct simbe *
simbe_new(const char *path, struct llcd_err *err)
{
	struct simbe *s = calloc(1, sizeof(*s));
	struct policy_annotation *annots = NULL;
	bool *annotated = NULL;

	if (s == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	if ((s->sc = sim_scenario_load(path, err)) == NULL)
		goto fail;
	if ((s->topo = topo_load(s->sc->topology, err)) == NULL) {
		llcd_err_prefix(err, "%s: host.topology", path);
		goto fail;
	}
	annots = calloc((size_t)s->sc->ndomains + 1, sizeof(*annots));
	annotated = calloc((size_t)s->sc->ndomains + 1, sizeof(*annotated));
	if (annots == NULL || annotated == NULL) {
		llcd_err_set(err, "out of memory");
		goto fail;
	}
	for (int d = 0; d < s->sc->ndomains; d++) {
		const char *x = s->sc->domains[d].llc_policy;
		policy_annotation_defaults(&annots[d]);
		if (x == NULL)
			continue;
		if (annot_parse(x, strlen(x), s->sc->domains[d].nvcpus, &annots[d], err) < 0) {
			llcd_err_prefix(err, "%s: domains[%d].llc_policy", path, d);
			goto fail;
		}
		annotated[d] = true;
	}
	s->w = sim_world_new(s->sc, s->topo, SIM_POLICY_LLCD, s->sc->seed, annots, annotated, NULL, err);
	if (s->w == NULL)
		goto fail;
	s->ops.w = s->w;
	if ((s->rule = calloc((size_t)s->sc->ndomains + 1, sizeof(*s->rule))) == NULL) {
		llcd_err_set(err, "out of memory");
		goto fail;
	}
	free(annots);
	free(annotated);
	return s;
fail:
	free(annots);
	free(annotated);
	simbe_free(s);
	return NULL;
}

void
simbe_free(struct simbe *s)
{
	if (s == NULL)
		return;
	sim_world_free(s->w);
	topo_free(s->topo);
	sim_scenario_free(s->sc);
	free(s->ops.prefer);
	free(s->rule);
	free(s);
}

const struct topo *
simbe_topo(const struct simbe *s)
{
	return s->topo;
}

double
simbe_period_ms(const struct simbe *s)
{
	return s->sc->period_ms;
}

const char *
simbe_reserved(const struct simbe *s, char *buf, size_t len)
{
	cpuset_format(&s->sc->reserved, buf, len);
	return buf;
}

static void
tick(void *ctx, uint64_t now_ns)
{
	struct simbe *s = ctx;

	(void)now_ns;
	if (s->over)
		return;
	if (!sim_world_step(s->w)) {
		s->over = true;
		log_info("llcsim: scenario %s ended after %.1f s; the host stays as it is",
		    s->sc->name, s->sc->duration_s);
	}
}

static int
find(struct simbe *s, uint64_t key)
{
	for (int d = 0; d < s->sc->ndomains; d++)
		if (s->w->dom[d].key == key && s->w->dom[d].active)
			return d;
	return -1;
}

static int
describe(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	struct simbe *s = ctx;
	int d = find(s, key);

	agent_facts_str(&out->facts, NULL, "backend", "llcsim");
	if (d >= 0) {
		agent_facts_bool(&out->facts, NULL, "guest_helper", s->sc->domains[d].guest_helper);
		out->annotated = s->w->dom[d].annotated;
		if (out->annotated)
			out->annot = s->w->dom[d].annot;
		if (s->rule[d] > 0 && s->rules != NULL && s->rule[d] <= s->rules->n) {
			const struct policyrule *r = &s->rules->r[s->rule[d] - 1];
			out->rule = s->rule[d];
			snprintf(out->rule_where, sizeof(out->rule_where), "%s", r->where);
			snprintf(out->rule_match, sizeof(out->rule_match), "%s", r->match);
		}
	}
	return 0;
}

static int
describe_host(void *ctx, struct agent_hostinfo *out)
{
	struct simbe *s = ctx;

	agent_facts_str(&out->facts, NULL, "scenario", "%s", s->path);
	agent_facts_bool(&out->facts, "core_scheduling", "available", false);
	agent_facts_str(&out->facts, "core_scheduling", "reason", "simulated host");
	out->have_judges = true;
	snprintf(out->judges.counters_reason, sizeof(out->judges.counters_reason), "simulated host: %s",
	    s->sc->perf_counters ? "instruction counters (host.perf_counters)" : "no instruction counters");
	out->judges.mbm = s->sc->mbm;
	snprintf(out->judges.mbm_reason, sizeof(out->judges.mbm_reason), "simulated host: %s",
	    s->sc->mbm ? "memory bandwidth per domain (host.mbm)" : "no bandwidth monitoring");
	snprintf(out->judges.run_delay, sizeof(out->judges.run_delay), "the simulated scheduler");
	return 0;
}

static int
get_annotation(void *ctx, uint64_t key, char **xml, struct llcd_err *err)
{
	struct simbe *s = ctx;
	int d = find(s, key);
	char buf[65536];

	*xml = NULL;
	if (d < 0)
		return llcd_err_set(err, "domain is gone");
	if (!s->w->dom[d].annotated || s->rule[d] > 0)
		return 0;
	if (annot_format_metadata(&s->w->dom[d].annot, buf, sizeof(buf), err) < 0)
		return -1;
	*xml = strdup(buf);
	return *xml ? 0 : llcd_err_set(err, "out of memory");
}

static int
set_annotation(void *ctx, uint64_t key, const char *xml, bool live, bool config, struct llcd_err *err)
{
	struct simbe *s = ctx;
	int d = find(s, key);
	struct policy_annotation a;

	(void)config;
	if (d < 0)
		return llcd_err_set(err, "domain is gone");
	if (annot_parse_metadata(xml, strlen(xml), s->sc->domains[d].nvcpus, &a, err) < 0)
		return -1;
	if (live) {
		s->rule[d] = 0;         /* an annotation wins over the rules */
		s->w->dom[d].annot = a;
		s->w->dom[d].annotated = true;
		s->w->dom[d].isolated = a.mode != POLICY_MODE_NONE && a.isolation == POLICY_ISO_CORE;
	}
	return 0;
}

/* policy-rule on a simulated host: scenario domains have names, no
 * metadata, so name= rules match; a domain annotated in its scenario or by
 * llcctl policy keeps its annotation. */
static void
set_rules(void *ctx, const struct policyrule_set *rules)
{
	struct simbe *s = ctx;
	struct llcd_err e;

	s->rules = rules;
	for (int d = 0; d < s->sc->ndomains; d++) {
		struct sim_dom_state *w = &s->w->dom[d];
		int i;
		if (w->annotated && s->rule[d] == 0)
			continue;
		i = policyrule_find(rules, s->sc->domains[d].name, NULL, 0, &e);
		if (i >= 0 && policyrule_annotation(&rules->r[i], s->sc->domains[d].nvcpus, &w->annot, &e) == 0) {
			if (s->rule[d] != i + 1)
				log_dom(LOG_INFO, s->sc->domains[d].name, -1, 0, "no llc-policy annotation; policy-rule %d "
				    "(%s: %s): mode %s", i + 1, rules->r[i].where, rules->r[i].match,
				    policy_mode_name(w->annot.mode));
			s->rule[d] = i + 1;
			w->annotated = true;
		} else {
			if (i >= 0)
				log_dom(LOG_WARNING, s->sc->domains[d].name, -1, 0, "%s; domain left unmanaged", e.msg);
			s->rule[d] = 0;
			w->annotated = false;
			policy_annotation_defaults(&w->annot);
		}
		w->isolated = w->annotated && w->annot.mode != POLICY_MODE_NONE && w->annot.isolation == POLICY_ISO_CORE;
	}
}

static bool
counters(void *ctx)
{
	struct simbe *s = ctx;

	return s->sc->perf_counters;
}

/* llcctl's questions and the run loop's hooks; the loop's verbs are
 * llcsim's own (simops.h), on their own ctx. */
static const struct agent_query simbe_query = {
	.describe = describe,
	.describe_host = describe_host,
	.get_annotation = get_annotation,
	.set_annotation = set_annotation,
};

static const struct daemon_hooks simbe_hooks = {
	.counters = counters,
	.tick = tick,
	.set_rules = set_rules,
};

void
simbe_backend(struct simbe *s, struct daemon_backend *be)
{
	*be = (struct daemon_backend){ .name = "llcsim", .ops = &sim_agent_ops, .ops_ctx = &s->ops,
	                               .query = &simbe_query, .hooks = &simbe_hooks, .ctx = s };
}
