// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_host.c - llcd's answers about the host: its topology, the
 * back-end's host facts and what can judge llcd's changes here (topology
 * with no domain), and where every vCPU last ran (map). */
#include <math.h>
#include <stdlib.h>

#include "handlers_int.h"

/* A back-end's fact rows as members of o: one object per group, made at
 * its first row, in the order the rows came (query.h). */
void
daemon_facts_json(const struct agent_facts *f, json_object *o)
{
	for (int i = 0; i < f->n; i++) {
		const struct agent_fact *r = &f->rows[i];
		json_object *to = o, *v = NULL;
		if (r->group != NULL && !json_object_object_get_ex(o, r->group, &to)) {
			to = json_object_new_object();
			json_object_object_add(o, r->group, to);
		}
		switch (r->type) {
		case AGENT_FACT_STR: v = jstr(r->s); break;
		case AGENT_FACT_INT: v = json_object_new_int64(r->i); break;
		case AGENT_FACT_BOOL: v = json_object_new_boolean(r->i != 0); break;
		case AGENT_FACT_NULL: v = NULL; break;
		}
		json_object_object_add(to, r->key, v);
	}
}

/* What can judge llcd's adaptive changes here: a group
 * gathered from wakeups, a wider home. */
static void
judges_json(const struct daemon *d, const struct agent_judges *jd, json_object *o)
{
	json_object *j = json_object_new_object(), *x;
	bool judged = d->host.counters || jd->mbm;

	x = json_object_new_object();
	json_object_object_add(x, "available", json_object_new_boolean(d->host.counters));
	json_object_object_add(x, "detail", jstr(jd->counters_reason));
	json_object_object_add(x, "judges", jstr("gathered groups (benefit check), homes (home check)"));
	json_object_object_add(j, "counters", x);
	x = json_object_new_object();
	json_object_object_add(x, "available", json_object_new_boolean(jd->mbm));
	json_object_object_add(x, "detail", jstr(jd->mbm_reason));
	json_object_object_add(x, "judges", jstr("gathered groups (benefit check), homes (home check)"));
	json_object_object_add(j, "bandwidth_monitoring", x);
	x = json_object_new_object();
	json_object_object_add(x, "available", json_object_new_boolean(true));
	json_object_object_add(x, "detail", jstr(jd->run_delay));
	json_object_object_add(x, "judges", jstr("a home's CPU wait only (not what gathering costs in memory bandwidth)"));
	json_object_object_add(j, "run_delay", x);
	json_object_object_add(j, "unjudged_groups", jstr(d->host.act_unjudged ? "act" : "show"));
	json_object_object_add(j, "inferred_groups", jstr(judged ?
	    "acted on, and judged by the benefit check (unless an annotation turns it off)" :
	    d->host.act_unjudged ? "acted on without a judge (unjudged-groups act)" :
	    "shown, not acted on: nothing here can judge them (unjudged-groups show)"));
	json_object_object_add(o, "judges", j);
}

json_object *
daemon_topology_json(const struct daemon *d)
{
	const struct topo *t = d->topo;
	json_object *o = json_object_new_object(), *llcs = json_object_new_array(),
	            *nodes = json_object_new_array(), *pkgs = json_object_new_array();
	char sum[256];

	topo_summary(t, sum, sizeof(sum));
	json_object_object_add(o, "summary", jstr(sum));
	json_object_object_add(o, "source", jstr(t->desc));
	json_object_object_add(o, "smt", json_object_new_int(t->smt));
	json_object_object_add(o, "cpus", cpuset_json(&t->all));
	json_object_object_add(o, "reserved", cpuset_json(&d->host.reserved));
	json_object_object_add(o, "shared_pool", d->cfg.shared_pool[0] ? cpuset_json(&d->host.shared_pool) : jstr("dynamic"));
	for (int i = 0; i < topo_count(t, TOPO_PACKAGE); i++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "package", json_object_new_int(i));
		json_object_object_add(p, "cpus", cpuset_json(&topo_get(t, TOPO_PACKAGE, i)->cpus));
		json_object_array_add(pkgs, p);
	}
	for (int i = 0; i < topo_count(t, TOPO_NUMA); i++) {
		const struct topo_node *n = topo_get(t, TOPO_NUMA, i);
		json_object *p = json_object_new_object();
		json_object_object_add(p, "node", json_object_new_int(n->os_index));
		json_object_object_add(p, "cpus", cpuset_json(&n->cpus));
		json_object_object_add(p, "memory_bytes", json_object_new_int64((int64_t)n->size));
		json_object_array_add(nodes, p);
	}
	for (int i = 0; i < topo_count(t, TOPO_LLC); i++) {
		const struct topo_node *n = topo_get(t, TOPO_LLC, i);
		json_object *p = json_object_new_object();
		int ncores = 0;
		for (int c = 0; c < n->nchildren; c++)
			ncores += n->children[c]->type == TOPO_CORE;
		json_object_object_add(p, "llc", json_object_new_int(i));
		json_object_object_add(p, "cpus", cpuset_json(&n->cpus));
		json_object_object_add(p, "cores", json_object_new_int(ncores));
		json_object_object_add(p, "size_bytes", json_object_new_int64((int64_t)n->size));
		json_object_object_add(p, "numa_node", json_object_new_int(t->llc_numa[i] >= 0 ?
		    topo_get(t, TOPO_NUMA, t->llc_numa[i])->os_index : -1));
		json_object_object_add(p, "package", json_object_new_int(t->pu_pkg[cpuset_first(&n->cpus)]));
		json_object_array_add(llcs, p);
	}
	json_object_object_add(o, "packages", pkgs);
	json_object_object_add(o, "numa_nodes", nodes);
	json_object_object_add(o, "llcs", llcs);
	if (d->be.query->describe_host) {
		struct agent_hostinfo hi;
		memset(&hi, 0, sizeof(hi));
		if (d->be.query->describe_host(d->be.ctx, &hi) == 0) {
			daemon_facts_json(&hi.facts, o);
			if (hi.have_judges)
				judges_json(d, &hi.judges, o);
		}
		agent_facts_free(&hi.facts);
	}
	return o;
}

int
daemon_map(struct daemon *d, struct control_request *req)
{
	const struct topo *t = d->topo;
	const struct agent_obs *o = agent_loop_obs(d->loop);
	json_object *llcs = json_object_new_array(), *doms = json_object_new_array();

	for (int i = 0; o && i < o->ndomains; i++) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "name", jstr(o->domains[i].name));
		json_object_object_add(e, "isolated", json_object_new_boolean(o->domains[i].annotated &&
		    o->domains[i].annot.isolation == POLICY_ISO_CORE && o->domains[i].annot.mode != POLICY_MODE_NONE));
		json_object_array_add(doms, e);
	}
	/* the vCPUs by last CPU (a counting sort): one pass over them, not
	 * one per PU (that was PUs x vCPUs: ~0.3 s of the loop per request
	 * on 512 PUs and 8,000 vCPUs) */
	int ncpu = t->max_cpu + 1, total = 0;
	int *first = calloc((size_t)ncpu + 1, sizeof(int));
	int *fill = calloc((size_t)ncpu + 1, sizeof(int));
	uint64_t *at = NULL;
	for (int i = 0; o && i < o->ndomains; i++)
		total += o->domains[i].nvcpus;
	at = calloc((size_t)total + 1, sizeof(*at));
	if (first == NULL || fill == NULL || at == NULL) {
		free(first);
		free(fill);
		free(at);
		json_object_put(llcs);
		json_object_put(doms);
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	for (int i = 0; o && i < o->ndomains; i++)
		for (int v = 0; v < o->domains[i].nvcpus; v++) {
			int c = o->domains[i].vcpus[v].last_cpu;
			if (c >= 0 && c < ncpu)
				first[c + 1]++;
		}
	for (int c = 0; c < ncpu; c++)
		first[c + 1] += first[c];
	memcpy(fill, first, sizeof(int) * (size_t)(ncpu + 1));
	for (int i = 0; o && i < o->ndomains; i++)
		for (int v = 0; v < o->domains[i].nvcpus; v++) {
			int c = o->domains[i].vcpus[v].last_cpu;
			if (c >= 0 && c < ncpu)
				at[fill[c]++] = (uint64_t)i << 32 | (uint32_t)v;
		}
	free(fill);
	for (int l = 0; l < topo_count(t, TOPO_LLC); l++) {
		const struct topo_node *ln = topo_get(t, TOPO_LLC, l);
		json_object *lo = json_object_new_object(), *cores = json_object_new_array();
		json_object_object_add(lo, "llc", json_object_new_int(l));
		for (int c = 0; c < ln->nchildren; c++) {
			const struct topo_node *cn = ln->children[c];
			json_object *co = json_object_new_object(), *pus = json_object_new_array();
			int cpu;
			json_object_object_add(co, "core", json_object_new_int(cn->index));
			CPUSET_FOREACH(cpu, &cn->cpus) {
				json_object *po = json_object_new_object(), *vs = json_object_new_array();
				json_object_object_add(po, "pu", json_object_new_int(cpu));
				json_object_object_add(po, "reserved", json_object_new_boolean(cpuset_isset(&d->host.reserved, cpu)));
				for (int k = cpu < ncpu ? first[cpu] : 0; cpu < ncpu && k < first[cpu + 1]; k++) {
					int i = (int)(at[k] >> 32), v = (int)(at[k] & 0xffffffffu);
					json_object *x = json_object_new_object();
					json_object_object_add(x, "domain", json_object_new_int(i));
					json_object_object_add(x, "vcpu", json_object_new_int(v));
					json_object_object_add(x, "util", json_object_new_double(round(
					    (double)o->domains[i].vcpus[v].runtime_ns /
					    (double)(d->cfg.period_ms * 1000000ull) * 100) / 100));
					json_object_array_add(vs, x);
				}
				json_object_object_add(po, "vcpus", vs);
				json_object_array_add(pus, po);
			}
			json_object_object_add(co, "pus", pus);
			json_object_array_add(cores, co);
		}
		json_object_object_add(lo, "cores", cores);
		json_object_array_add(llcs, lo);
	}
	free(first);
	free(at);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "domains", doms);
	json_object_object_add(req->reply, "llcs", llcs);
	return CTL_OK;
}
