// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers.c - llcd's answers to llcctl's requests (daemon_handle): one
 * h_* function per request type of ctl.h, reading the daemon's last
 * observation, the engine's per-domain facts and the back-end's hooks; the
 * answers about a domain's guest topology and channel are in
 * handlers_guest.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"
#include "guesttopo.h"
#include "handlers_int.h"
#include "httpd.h"
#include "log.h"
#include "topo_hwloc.h"

static int
obs_index(const struct daemon *d, const struct policy_domain_in *in)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	return (int)(in - o->domains);
}

/* A back-end's fact rows as members of o: one object per group, made at
 * its first row, in the order the rows came (query.h). */
static void
facts_json(const struct agent_facts *f, json_object *o)
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

static json_object *
topology_json(const struct daemon *d)
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
			facts_json(&hi.facts, o);
			if (hi.have_judges)
				judges_json(d, &hi.judges, o);
		}
		agent_facts_free(&hi.facts);
	}
	return o;
}

/* LLCs in use: where the domain's vCPUs last ran. */
static json_object *
llcs_in_use(const struct daemon *d, const struct policy_domain_in *in)
{
	struct cpuset l;
	int v;

	cpuset_zero(&l);
	for (v = 0; v < in->nvcpus; v++) {
		int llc = topo_llc_of(d->topo, in->vcpus[v].last_cpu);
		if (llc >= 0)
			cpuset_set(&l, llc);
	}
	return cpuset_json(&l);
}

void
daemon_dominfo_json(const struct agent_dominfo *di, json_object *o)
{
	char buf[ANNOT_XML_MAX];
	struct llcd_err e;

	if (di->pid >= 0)
		json_object_object_add(o, "pid", json_object_new_int(di->pid));
	if (di->maxvcpus >= 0)
		json_object_object_add(o, "max_vcpus", json_object_new_int(di->maxvcpus));
	if (di->annotation_error[0])
		json_object_object_add(o, "annotation_error", jstr(di->annotation_error));
	if (di->annotated && annot_format(&di->annot, buf, sizeof(buf), &e) == 0)
		json_object_object_add(o, "annotation", jstr(buf));
	if (di->rule > 0) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "number", json_object_new_int(di->rule));
		json_object_object_add(r, "where", jstr(di->rule_where));
		json_object_object_add(r, "match", jstr(di->rule_match));
		json_object_object_add(o, "policy_rule", r);
	}
	if (di->have_guest_topo) {
		snprintf(buf, sizeof(buf), "sockets=%d dies=%d clusters=%d cores=%d threads=%d", di->guest.sockets,
		    di->guest.dies, di->guest.clusters, di->guest.cores, di->guest.threads);
		json_object_object_add(o, "guest_topology", jstr(buf));
	}
	facts_json(&di->facts, o);
	if (di->nvcpu_info >= 0) {
		json_object *arr = json_object_new_array();
		for (int v = 0; v < di->nvcpu_info && di->vcpus; v++) {
			const struct agent_vcpu_info *c = &di->vcpus[v];
			json_object *x = json_object_new_object();
			json_object_object_add(x, "vcpu", json_object_new_int(v));
			json_object_object_add(x, "tid", json_object_new_int(c->tid));
			json_object_object_add(x, "last_cpu", json_object_new_int(c->last_cpu));
			json_object_object_add(x, "affinity", cpuset_json(&c->affinity));
			if (!cpuset_empty(&c->pinned_by_llcd))
				json_object_object_add(x, "pinned_by_llcd", cpuset_json(&c->pinned_by_llcd));
			json_object_object_add(x, "socket", json_object_new_int(c->socket));
			json_object_object_add(x, "die", json_object_new_int(c->die));
			json_object_object_add(x, "cluster", json_object_new_int(c->cluster));
			json_object_object_add(x, "core", json_object_new_int(c->core));
			json_object_object_add(x, "thread", json_object_new_int(c->thread));
			if (di->have_qmp)
				json_object_object_add(x, "qmp", jstr(c->qmp));
			json_object_array_add(arr, x);
		}
		json_object_object_add(o, "vcpu_threads", arr);
	}
	if (di->key[0])
		json_object_object_add(o, "libvirt_key", jstr(di->key));
}

static void
domain_summary(struct daemon *d, const struct policy_domain_in *in, json_object *o)
{
	struct policy_domain_info info;
	bool known = policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0;
	enum agent_dom_state state = AGENT_DOM_UNMANAGED;
	const char *reason = "";

	if (daemon_is_released(d, in->key)) {
		reason = "released by llcctl release";
	} else if (!in->annotated) {
		reason = "no llc-policy annotation";
	} else if (in->annot.mode == POLICY_MODE_NONE) {
		reason = "mode none";
	} else if (known && info.refused) {
		state = AGENT_DOM_ERROR;
		reason = info.reason;
	} else if (known && info.managed) {
		state = AGENT_DOM_MANAGED;
	} else if (agent_loop_abandoned(d->loop, in->key)) {
		state = AGENT_DOM_ERROR;
		reason = "a pin failed permanently; llcd stopped managing it (see the log)";
	}
	json_object_object_add(o, "name", jstr(in->name));
	json_object_object_add(o, "key", json_object_new_int64((int64_t)in->key));
	json_object_object_add(o, "vcpus", json_object_new_int(in->nvcpus));
	json_object_object_add(o, "annotated", json_object_new_boolean(in->annotated));
	json_object_object_add(o, "mode", jstr(in->annotated ? policy_mode_name(in->annot.mode) : "none"));
	json_object_object_add(o, "isolation", jstr(in->annotated ? policy_isolation_name(in->annot.isolation) : "none"));
	json_object_object_add(o, "topology", jstr(in->annotated ? policy_topology_name(in->annot.topology) : "keep"));
	json_object_object_add(o, "state", jstr(agent_dom_state_name(state)));
	json_object_object_add(o, "reason", jstr(reason));
	json_object_object_add(o, "llcs", llcs_in_use(d, in));
	if (known)
		json_object_object_add(o, "allotment", cpuset_json(&info.allotment));
	if (d->be.query->describe) {
		struct agent_dominfo di;
		agent_dominfo_init(&di);
		if (d->be.query->describe(d->be.ctx, in->key, &di) == 0) {
			/* where the policy comes from: the back-end knows an
			 * annotation from a rule; what it lacks is default-mode's */
			json_object_object_add(o, "policy_source", jstr(daemon_is_released(d, in->key) ? "released" :
			    di.rule > 0 ? "rule" : di.annotated ? "annotation" : in->annotated ? "default-mode" : "none"));
			/* the back-end's own error (a pin failed permanently, an
			 * invalid annotation) wins over the engine's view */
			if (di.backend_error) {
				json_object_object_add(o, "state", jstr(agent_dom_state_name(AGENT_DOM_ERROR)));
				json_object_object_add(o, "reason", jstr(di.reason));
			}
			daemon_dominfo_json(&di, o);
			/* the annotation's own message is the better reason */
			if (di.annotation_error[0]) {
				json_object_object_add(o, "state", jstr(agent_dom_state_name(AGENT_DOM_ERROR)));
				json_object_object_add(o, "reason", jstr(di.annotation_error));
			}
		}
		agent_dominfo_clear(&di);
	}
}

/* A check's trial (policy_trial_info): its state, the load shape it
 * watches or judges in, and the failed trials it remembers. */
static json_object *
trial_json(const struct policy_trial_info *t, bool home)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(o, "state", jstr(policy_trial_state_name(t->state)));
	json_object_object_add(o, "periods", json_object_new_int(t->periods));
	json_object_object_add(o, "window", json_object_new_int(t->window));
	if (t->busy >= 0) {
		json_object_object_add(o, "busy_vcpus", json_object_new_int(t->busy));
		json_object_object_add(o, "cpus", json_object_new_double(round(t->cpus * 10) / 10));
	}
	for (int i = 0; i < t->nmemo; i++) {
		const struct policy_trial_memo *m = &t->memo[i];
		json_object *e = json_object_new_object();
		json_object_object_add(e, "busy_vcpus", json_object_new_int(m->busy));
		json_object_object_add(e, "cpus", json_object_new_double(round(m->cpus * 10) / 10));
		json_object_object_add(e, "change", jstr(!home ? "gather" : m->wider ? "wider" : "narrower"));
		if (home)
			json_object_object_add(e, "from_llcs", json_object_new_int(m->from_llcs));
		json_object_object_add(e, "ratio", json_object_new_double(round(m->ratio * 1000) / 1000));
		json_object_object_add(e, "fails", json_object_new_int(m->fails));
		json_object_object_add(e, "age_s", json_object_new_int64((int64_t)m->age_s));
		json_object_object_add(e, "retry_in_s", json_object_new_int64((int64_t)ceil(m->retry_in_s)));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "failed", a);
	return o;
}

static json_object *
groups_json(const struct policy_domain_info *info)
{
	json_object *a = json_object_new_array();

	for (int g = 0; g < info->ngroups; g++) {
		const struct policy_group_info *gi = &info->groups[g];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", jstr(gi->name));
		json_object_object_add(o, "rule", jstr(policy_group_rule_name(gi->rule)));
		json_object_object_add(o, "vcpus", cpuset_json(&gi->vcpus));
		json_object_object_add(o, "preferred_llc", json_object_new_int(gi->pref_llc));
		json_object_object_add(o, "occupancy", json_object_new_double(round(gi->pref_occ * 100) / 100));
		json_object_object_add(o, "best_llc", json_object_new_int(gi->best_llc));
		json_object_object_add(o, "best_occupancy", json_object_new_double(round(gi->best_occ * 100) / 100));
		json_object_object_add(o, "guarded", json_object_new_boolean(gi->guarded));
		json_object_object_add(o, "backed_off", json_object_new_boolean(gi->backed_off));
		json_object_object_add(o, "acted_on", json_object_new_boolean(!gi->unjudged));
		if (gi->rule == POLICY_GROUP_WAKEUPS) {
			json_object_object_add(o, "wakeups_hz", json_object_new_double(round(gi->wakeups_hz * 10) / 10));
			json_object_object_add(o, "wakeup_pairs", json_object_new_int(gi->wakeup_pairs));
		}
		json_object_object_add(o, "why", jstr(gi->why));
		json_object_object_add(o, "trial", trial_json(&gi->trial, false));
		json_object_array_add(a, o);
	}
	return a;
}

/* `list` pages: domains in key order after the key `after`, as many as fit
 * in `max_bytes` (default LIST_PAGE_BYTES, at least one domain); "next" is
 * the key to ask after when more remain. So no reply nears CTL_MAX_REPLY
 * however many domains the host runs, and a page is consistent with the
 * others even when domains come and go between them. */
#define LIST_PAGE_BYTES (1024 * 1024)
#define LIST_PAGE_MIN 4096

static int
key_order(const void *a, const void *b)
{
	uint64_t x = (*(const struct policy_domain_in *const *)a)->key;
	uint64_t y = (*(const struct policy_domain_in *const *)b)->key;

	return x < y ? -1 : x > y;
}

static int
h_list(struct daemon *d, struct control_request *req)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	int n = o ? o->ndomains : 0;
	const struct policy_domain_in **by_key = calloc((size_t)(n ? n : 1), sizeof(*by_key));
	json_object *v, *arr;
	uint64_t after = 0;
	bool have_after = false;
	int64_t max_bytes = LIST_PAGE_BYTES;
	size_t used = 0;

	if (by_key == NULL) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	if (json_object_object_get_ex(req->args, "after", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			free(by_key);
			snprintf(req->error, sizeof(req->error), "'after' must be a domain key (an integer)");
			return CTL_E_INVAL;
		}
		after = (uint64_t)json_object_get_int64(v);
		have_after = true;
	}
	if (json_object_object_get_ex(req->args, "max_bytes", &v)) {
		max_bytes = json_object_get_int64(v);
		if (!json_object_is_type(v, json_type_int) || max_bytes < LIST_PAGE_MIN ||
		    max_bytes > CTL_MAX_REPLY / 2) {
			free(by_key);
			snprintf(req->error, sizeof(req->error), "'max_bytes' must be %d-%d", LIST_PAGE_MIN,
			    CTL_MAX_REPLY / 2);
			return CTL_E_INVAL;
		}
	}
	for (int i = 0; i < n; i++)
		by_key[i] = &o->domains[i];
	qsort(by_key, (size_t)n, sizeof(*by_key), key_order);
	arr = json_object_new_array();
	req->reply = json_object_new_object();
	for (int i = 0; i < n; i++) {
		if (have_after && by_key[i]->key <= after)
			continue;
		json_object *e = json_object_new_object();
		domain_summary(d, by_key[i], e);
		size_t len = strlen(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN)) + 1;
		if (json_object_array_length(arr) > 0 && used + len > (size_t)max_bytes) {
			json_object_put(e);
			json_object_object_add(req->reply, "next",
			    json_object_new_int64((int64_t)by_key[i - 1]->key));
			break;
		}
		used += len;
		json_object_array_add(arr, e);
	}
	json_object_object_add(req->reply, "domains", arr);
	free(by_key);
	return CTL_OK;
}

static int
h_dominfo(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	req->reply = json_object_new_object();
	domain_summary(d, in, req->reply);
	json_object *g = json_object_new_object();
	const struct policy_guest_topo *gt = &in->guest;
	json_object_object_add(g, "sockets", json_object_new_int(gt->sockets));
	json_object_object_add(g, "dies", json_object_new_int(gt->dies));
	json_object_object_add(g, "clusters", json_object_new_int(gt->clusters));
	json_object_object_add(g, "cores", json_object_new_int(gt->cores));
	json_object_object_add(g, "threads", json_object_new_int(gt->threads));
	json_object_object_add(req->reply, "guest_topology", g);
	if (policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0) {
		json_object_object_add(req->reply, "groups", groups_json(&info));
		json_object_object_add(req->reply, "preferred_llc_switches", json_object_new_int64((int64_t)info.pref_switches));
		json_object_object_add(req->reply, "vcpu_moves", json_object_new_int64((int64_t)info.vcpu_moves));
		/* the home check's last word (policy/home.c), once it said one */
		if (info.home_why[0] != '\0') {
			json_object_object_add(req->reply, "home", json_object_new_string(info.home_why));
			json_object_object_add(req->reply, "home_widened", json_object_new_boolean(info.home_widened));
			json_object_object_add(req->reply, "home_trial", trial_json(&info.home_trial, true));
		}
	}
	return CTL_OK;
}

static int
h_vcpuinfo(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);
	bool have_info;

	if (rc != CTL_OK)
		return rc;
	have_info = policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0;
	/* an empty sample pin is "not placed by llcd" (query.h): show the
	 * thread's real affinity, as the kernel has it (a released domain) */
	struct agent_dominfo di;
	bool have_di = false;
	agent_dominfo_init(&di);
	for (int v = 0; v < in->nvcpus && !have_di; v++)
		if (cpuset_empty(&in->vcpus[v].pinned) && d->be.query->describe)
			have_di = d->be.query->describe(d->be.ctx, in->key, &di) == 0;
	json_object *arr = json_object_new_array();
	for (int v = 0; v < in->nvcpus; v++) {
		const struct policy_vcpu_sample *s = &in->vcpus[v];
		const struct cpuset *pin = &s->pinned;
		if (cpuset_empty(pin) && have_di && v < di.nvcpu_info && di.vcpus)
			pin = &di.vcpus[v].affinity;
		json_object *o = json_object_new_object();
		struct guesttopo_pos pos;
		guesttopo_position(&in->guest, v, &pos);
		json_object_object_add(o, "vcpu", json_object_new_int(v));
		json_object_object_add(o, "tid", json_object_new_int(s->tid));
		json_object_object_add(o, "socket", json_object_new_int(pos.socket));
		json_object_object_add(o, "die", json_object_new_int(pos.die));
		json_object_object_add(o, "cluster", json_object_new_int(pos.cluster));
		json_object_object_add(o, "core", json_object_new_int(pos.core));
		json_object_object_add(o, "thread", json_object_new_int(pos.thread));
		json_object_object_add(o, "pinned", cpuset_json(pin));
		json_object_object_add(o, "last_cpu", json_object_new_int(s->last_cpu));
		json_object_object_add(o, "llc", json_object_new_int(topo_llc_of(d->topo, s->last_cpu)));
		json_object_object_add(o, "util", json_object_new_double(
		    round((double)s->runtime_ns / (double)(d->cfg.period_ms * 1000000ull) * 1000) / 1000));
		const struct policy_group_info *gi = NULL;
		for (int g = 0; have_info && g < info.ngroups; g++)
			if (cpuset_isset(&info.groups[g].vcpus, v))
				gi = &info.groups[g];
		json_object_object_add(o, "group", gi ? jstr(gi->name) : NULL);
		json_object_object_add(o, "preferred_llc", json_object_new_int(gi ? gi->pref_llc : -1));
		json_object_object_add(o, "occupancy", json_object_new_double(gi ? round(gi->pref_occ * 100) / 100 : 0));
		json_object_array_add(arr, o);
	}
	agent_dominfo_clear(&di);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "vcpus", arr);
	return CTL_OK;
}

static void
annot_json(const struct policy_annotation *a, json_object *o)
{
	json_object *t = json_object_new_object(), *g = json_object_new_array();

	json_object_object_add(o, "mode", jstr(policy_mode_name(a->mode)));
	json_object_object_add(o, "isolation", jstr(policy_isolation_name(a->isolation)));
	json_object_object_add(o, "topology", jstr(policy_topology_name(a->topology)));
	json_object_object_add(o, "infer", jstr(policy_infer_name(a->infer)));
	json_object_object_add(t, "aggr-tolerance", json_object_new_int(a->tune.aggr_tolerance));
	json_object_object_add(t, "overaggr-pct", a->tune.overaggr_pct ? json_object_new_int(a->tune.overaggr_pct) : jstr("auto"));
	json_object_object_add(t, "imb-pct", json_object_new_int(a->tune.imb_pct));
	json_object_object_add(t, "epoch-ms", a->tune.epoch_ms ? json_object_new_int(a->tune.epoch_ms) : jstr("auto"));
	json_object_object_add(t, "affinity-timeout", json_object_new_int(a->tune.affinity_timeout));
	json_object_object_add(t, "max-moves", json_object_new_int(a->tune.max_moves));
	json_object_object_add(t, "benefit-check", jstr(a->tune.benefit_check ? "on" : "off"));
	json_object_object_add(t, "holddown-s", json_object_new_int(a->tune.holddown_s));
	json_object_object_add(o, "tune", t);
	for (int i = 0; i < a->ngroups; i++) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "name", jstr(a->groups[i].name));
		json_object_object_add(e, "vcpus", cpuset_json(&a->groups[i].vcpus));
		json_object_array_add(g, e);
	}
	json_object_object_add(o, "groups", g);
}

static int
h_policy_get(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	int rc = find_domain(d, req, &in);
	struct llcd_err err;
	char *xml = NULL;

	if (rc != CTL_OK)
		return rc;
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	if (d->be.query->get_annotation) {
		if (d->be.query->get_annotation(d->be.ctx, in->key, &xml, &err) < 0) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_INTERNAL;
		}
		json_object_object_add(req->reply, "xml", xml ? jstr(xml) : NULL);
		free(xml);
	}
	json_object_object_add(req->reply, "annotated", json_object_new_boolean(in->annotated));
	/* what llcd makes of it: an annotation it cannot use is not "none" */
	json_object *x;
	const char *xs = json_object_object_get_ex(req->reply, "xml", &x) && x ? json_object_get_string(x) : NULL;
	if (daemon_is_released(d, in->key)) {
		json_object_object_add(req->reply, "status", jstr("released"));
	} else if (xs != NULL && !in->annotated) {
		struct policy_annotation a;
		json_object_object_add(req->reply, "status", jstr("invalid"));
		if (annot_parse_metadata(xs, strlen(xs), in->nvcpus, &a, &err) < 0)
			json_object_object_add(req->reply, "error", jstr(err.msg));
	} else {
		/* no annotation: a policy-rule's policy, default-mode's, or none */
		struct agent_dominfo di;
		const char *st = xs != NULL ? "valid" : in->annotated ? "default" : "absent";
		agent_dominfo_init(&di);
		if (xs == NULL && d->be.query->describe && d->be.query->describe(d->be.ctx, in->key, &di) == 0 &&
		    di.rule > 0) {
			json_object *r = json_object_new_object();
			json_object_object_add(r, "number", json_object_new_int(di.rule));
			json_object_object_add(r, "where", jstr(di.rule_where));
			json_object_object_add(r, "match", jstr(di.rule_match));
			json_object_object_add(req->reply, "policy_rule", r);
			st = "rule";
		}
		agent_dominfo_clear(&di);
		json_object_object_add(req->reply, "status", jstr(st));
	}
	if (in->annotated)
		annot_json(&in->annot, req->reply);
	return CTL_OK;
}

static int
h_policy_set(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_annotation a;
	struct llcd_err err;
	const char *v;
	char *cur = NULL, out[65536];
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (d->be.query->set_annotation == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end cannot write annotations", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	if ((v = arg_str(req, "xml")) != NULL) {
		if (annot_parse_metadata(v, strlen(v), in->nvcpus, &a, &err) < 0 &&
		    annot_parse(v, strlen(v), in->nvcpus, &a, &err) < 0) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_INVAL;
		}
	} else {
		/* start from the domain's current annotation */
		policy_annotation_defaults(&a);
		if (d->be.query->get_annotation && d->be.query->get_annotation(d->be.ctx, in->key, &cur, &err) == 0 && cur &&
		    annot_parse_metadata(cur, strlen(cur), in->nvcpus, &a, &err) < 0)
			policy_annotation_defaults(&a);
		free(cur);
		_Static_assert(sizeof(a.mode) == sizeof(int) && sizeof(a.isolation) == sizeof(int) &&
		    sizeof(a.topology) == sizeof(int) && sizeof(a.infer) == sizeof(int), "sel writes an int");
		const struct { const char *key; const struct llcd_names *names; int *field; } sel[] = {
			{ "mode", &policy_mode_names, (int *)&a.mode },
			{ "isolation", &policy_isolation_names, (int *)&a.isolation },
			{ "topology", &policy_topology_names, (int *)&a.topology },
			{ "infer", &policy_infer_names, (int *)&a.infer },
		};
		for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
			long k;
			if ((v = arg_str(req, sel[i].key)) == NULL)
				continue;
			if ((k = llcd_from_name(sel[i].names, v)) < 0) {
				char allowed[128];
				llcd_names_list(sel[i].names, allowed, sizeof(allowed));
				snprintf(req->error, sizeof(req->error), "--%s: '%.64s' is not one of %s", sel[i].key, v, allowed);
				return CTL_E_INVAL;
			}
			*sel[i].field = (int)k;
		}
	}
	if (annot_check(&a, in->nvcpus, &err) < 0 || annot_format_metadata(&a, out, sizeof(out), &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INVAL;
	}
	bool live = arg_bool(req, "live", false), config = arg_bool(req, "config", false);
	if (!live && !config)
		live = config = true;
	if ((rc = d->be.query->set_annotation(d->be.ctx, in->key, out, live, config, &err)) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return rc == AGENT_QUERY_REFUSED ? CTL_E_UNSUPPORTED : CTL_E_INTERNAL;
	}
	daemon_unrelease(d, in->key);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "xml", jstr(out));
	json_object_object_add(req->reply, "live", json_object_new_boolean(live));
	json_object_object_add(req->reply, "config", json_object_new_boolean(config));
	return CTL_OK;
}

static int
h_hot(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct policy_domain_info info;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	json_object *reps = json_object_new_array();
	for (int r = 0; r < in->nreports; r++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", jstr(in->reports[r].name));
		json_object_object_add(o, "pid", json_object_new_int(in->reports[r].pid));
		json_object_object_add(o, "vcpus", cpuset_json(&in->reports[r].vcpus));
		json_object_array_add(reps, o);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "reports", reps);
	/* with no report, say whether the guest's channel is there at all */
	if (in->nreports == 0 && d->be.query->describe) {
		struct agent_dominfo di;
		const struct agent_fact *st, *n;
		agent_dominfo_init(&di);
		if (d->be.query->describe(d->be.ctx, in->key, &di) == 0 &&
		    (st = agent_facts_find(&di.facts, "guest_channel", "state")) != NULL) {
			json_object *g = json_object_new_object();
			n = agent_facts_find(&di.facts, "guest_channel", "reports");
			json_object_object_add(g, "state", jstr(st->s));
			json_object_object_add(g, "reports", json_object_new_int64(n ? n->i : 0));
			json_object_object_add(req->reply, "guest_channel", g);
		}
		agent_dominfo_clear(&di);
	}
	if (policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0)
		json_object_object_add(req->reply, "groups", groups_json(&info));
	struct policy_wakeups_info wi;
	if (policy_domain_wakeups(agent_loop_policy(d->loop), in->key, &wi, NULL, 0) >= 0)
		json_object_object_add(req->reply, "wakeup_background_hz",
		    json_object_new_double(round(wi.background_hz * 100) / 100));
	return CTL_OK;
}

#define WAKEUP_PAIRS_SHOWN 32

/* The strongest wakeup pairs the engine tracks for a domain (rule:
 * policy/wakeups.h), or why there are none. */
static int
h_wakeups(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	struct wakeups_pair_info pairs[WAKEUP_PAIRS_SHOWN];
	struct policy_wakeups_info wi;
	int rc = find_domain(d, req, &in), n;

	if (rc != CTL_OK)
		return rc;
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	n = policy_domain_wakeups(agent_loop_policy(d->loop), in->key, &wi, pairs, WAKEUP_PAIRS_SHOWN);
	json_object_object_add(req->reply, "available", json_object_new_boolean(n >= 0));
	if (n < 0) {
		json_object_object_add(req->reply, "why", jstr(in->wakeups == NULL ?
		    "no wakeup edges: the in-kernel tracer does not watch this domain (llcctl topology says why)" :
		    "no wakeup history: wakeups are followed for placed domains in mode aggregate"));
		return CTL_OK;
	}
	json_object_object_add(req->reply, "inferring", json_object_new_boolean(wi.inferring));
	json_object_object_add(req->reply, "background_hz", json_object_new_double(round(wi.background_hz * 100) / 100));
	json_object_object_add(req->reply, "total_hz", json_object_new_double(round(wi.total_hz * 10) / 10));
	json_object_object_add(req->reply, "dropped", json_object_new_int64((int64_t)wi.dropped));
	json_object *a = json_object_new_array();
	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "a", json_object_new_int(pairs[i].a));
		json_object_object_add(o, "b", json_object_new_int(pairs[i].b));
		json_object_object_add(o, "rate_hz", json_object_new_double(round(pairs[i].rate_hz * 10) / 10));
		json_object_object_add(o, "a_to_b_hz", json_object_new_double(round(pairs[i].ab_hz * 10) / 10));
		json_object_object_add(o, "b_to_a_hz", json_object_new_double(round(pairs[i].ba_hz * 10) / 10));
		json_object_object_add(o, "state", jstr(pairs[i].formed ? "grouped" :
		    pairs[i].candidate ? "candidate" : "background"));
		json_object_array_add(a, o);
	}
	json_object_object_add(req->reply, "edges", a);
	return CTL_OK;
}

static int
h_map(struct daemon *d, struct control_request *req)
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

static void
percentiles(const uint64_t *hist, int count, uint64_t *p50, uint64_t *p99, uint64_t *max)
{
	int n = count < STEP_HIST ? count : STEP_HIST;
	uint64_t v[STEP_HIST];

	*p50 = *p99 = 0;
	if (max)
		*max = 0;
	if (n == 0)
		return;
	memcpy(v, hist, sizeof(uint64_t) * (size_t)n);
	for (int i = 1; i < n; i++) {           /* small: insertion sort */
		uint64_t x = v[i];
		int j = i - 1;
		while (j >= 0 && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
	*p50 = v[n / 2];
	*p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	if (max)
		*max = v[n - 1];
}

/* round x to one decimal of a microsecond, from ns */
static double
us1(uint64_t ns)
{
	return round((double)ns / 100) / 10;
}

static void
stats_fill(struct daemon *d, struct llcd_stats *st)
{
	const struct agent_obs *ob = agent_loop_obs(d->loop);
	struct stats_values *v = &st->v;
	struct policy_stats ps;
	uint64_t p50, p99, l50, l99, lmax, c50, c99, cmax, u50, u99, umax;

	memset(st, 0, sizeof(*st));
	st->backend = d->be.name;
	policy_stats(agent_loop_policy(d->loop), &ps);
	for (int i = 0; ob && i < ob->ndomains; i++) {
		struct policy_domain_info info;
		if (policy_domain_info(agent_loop_policy(d->loop), ob->domains[i].key, &info) == 0 && info.managed)
			v->domains_managed++;
	}
	percentiles(d->step_ns, d->nstep, &p50, &p99, NULL);
	percentiles(d->late_ns, d->nlate, &l50, &l99, &lmax);
	percentiles(d->period_ns, d->nperiod, &c50, &c99, &cmax);
	percentiles(d->period_cpu_ns, d->nperiod, &u50, &u99, &umax);
	v->uptime_s = round((double)(d->now_ns - d->start_ns) / 1e7) / 100;
	v->periods = d->periods;
	v->period_ms = (uint64_t)d->cfg.period_ms;
	v->domains = ob ? (uint64_t)ob->ndomains : 0;
	v->pins = d->actions[POLICY_ACT_PIN_VCPU];
	v->emulator_pins = d->actions[POLICY_ACT_PIN_EMULATOR];
	if (d->be.query->stats)
		d->be.query->stats(d->be.ctx, st);     /* its counters (pin calls, state file) */
	v->releases = d->actions[POLICY_ACT_RELEASE];
	v->refusals = d->actions[POLICY_ACT_REFUSE];
	v->preference_switches = ps.pref_switches;
	v->backoffs = ps.backoffs;
	v->errors_transient = d->results[AGENT_TRANSIENT];
	v->errors_gone = d->results[AGENT_GONE];
	v->errors_permanent = d->results[AGENT_PERMANENT];
	v->period_errors = d->errors;
	v->isolation_held = d->isolation_held;
	v->isolation_overlaps = (uint64_t)d->isolation_overlaps;
	v->isolation_overlap_periods = d->isolation_overlap_periods;
	v->policy_step_us_p50 = us1(p50);
	v->policy_step_us_p99 = us1(p99);
	v->policy_step_us_max = us1(d->step_max_ns);
	v->period_us_p50 = us1(c50);
	v->period_us_p99 = us1(c99);
	v->period_us_max = us1(cmax);
	v->period_cpu_us_p50 = us1(u50);
	v->period_cpu_us_p99 = us1(u99);
	v->period_cpu_us_max = us1(umax);
	v->period_late_us_p50 = us1(l50);
	v->period_late_us_p99 = us1(l99);
	v->period_late_us_max = us1(lmax);
	v->recommend_computed = d->rec_computed;
	v->recommend_cached = d->rec_cached;
	v->recommend_compute_s_max = round(d->rec_compute_max_s * 1000) / 1000;
	v->log_suppressed = log_suppressed_total();
	if (d->httpd) {
		struct httpd_stats hs;
		st->blocks |= STATS_HTTP;
		httpd_get_stats(d->httpd, &hs);
		v->http_accepted = hs.accepted;
		v->http_refused = hs.refused;
		v->http_evicted = hs.evicted;
		v->http_header_timeouts = hs.header_timeouts;
		v->http_request_timeouts = hs.request_timeouts;
		v->http_idle_closed = hs.idle_closed;
		v->http_connections = (uint64_t)hs.connections;
	}
	if (d->ctl) {
		struct control_stats cs;
		st->blocks |= STATS_CONTROL;
		control_get_stats(d->ctl, &cs);
		v->control_requests = cs.requests;
		v->control_refused = cs.refused;
		v->control_malformed = cs.malformed;
		v->control_dropped_clients = cs.dropped_clients;
		v->control_busy_refused = cs.busy_refused;
		v->control_idle_closed = cs.idle_closed;
		v->control_deferred = cs.deferred;
		v->control_request_timeouts = cs.request_timeouts;
		v->control_reply_timeouts = cs.reply_timeouts;
		v->control_hangups = cs.hangups;
		v->control_queued_bytes = control_queued(d->ctl);
	}
}

/* `llcctl metrics` and the HTTP endpoint: one renderer (metrics.h). */
char *
daemon_metrics_text(struct daemon *d)
{
	struct llcd_stats st;

	stats_fill(d, &st);
	return metrics_render(&st, &d->step_hist, LLCD_VERSION);
}

static int
h_metrics(struct daemon *d, struct control_request *req)
{
	char *text = daemon_metrics_text(d);

	if (text == NULL) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "text", jstr(text));
	free(text);
	return CTL_OK;
}

/* The reply of a request whose outcome is one message (reload, tune
 * --reset): msg as the error when rc is not CTL_OK, else {"message": msg}. */
static int
message_reply(struct control_request *req, int rc, const char *msg)
{
	if (rc != CTL_OK) {
		snprintf(req->error, sizeof(req->error), "%s", msg);
		return rc;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "message", jstr(msg));
	return CTL_OK;
}

static int
h_tune(struct daemon *d, struct control_request *req)
{
	const char *k = arg_str(req, "knob"), *v = arg_str(req, "value");
	const struct config_directive *dir;
	struct config c = d->cfg;
	struct llcd_err err;

	if (arg_bool(req, "reset", false)) {
		char msg[512];
		int rc = message_reply(req, daemon_reset_tunes(d, msg, sizeof(msg)), msg);
		if (rc == CTL_OK)
			json_object_object_add(req->reply, "tunes", json_object_new_array());
		return rc;
	}
	if (k == NULL && v == NULL) {
		json_object *a = json_object_new_array();
		for (int i = 0; i < d->ntunes; i++) {
			json_object *t = json_object_new_object();
			json_object_object_add(t, "knob", jstr(d->tunes[i][0]));
			json_object_object_add(t, "value", jstr(d->tunes[i][1]));
			json_object_array_add(a, t);
		}
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "tunes", a);
		json_object_object_add(req->reply, "file", jstr(d->tunes_file));
		return CTL_OK;
	}
	if (k == NULL || v == NULL) {
		snprintf(req->error, sizeof(req->error), "tune needs a knob and a value");
		return CTL_E_INVAL;
	}
	if ((dir = config_directive(k)) == NULL || !(dir->flags & CONFIG_TUNE)) {
		char knobs[512];
		config_list(CONFIG_TUNE, knobs, sizeof(knobs));
		snprintf(req->error, sizeof(req->error), "unknown knob '%.64s' (%.400s)", k, knobs);
		return CTL_E_INVAL;
	}
	if (config_set(&c, k, v, &err) < 0 || daemon_apply_config(d, &c, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return CTL_E_INVAL;
	}
	log_info("tune %s %s (by uid %u)", k, v, (unsigned)req->uid);
	bool kept = d->tunes_file[0] != '\0';
	if (daemon_keep_tune(d, k, v, &err) < 0) {
		log_warnx("tune %s %s holds until llcd restarts: cannot keep it: %s", k, v, err.msg);
		kept = false;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "knob", jstr(k));
	json_object_object_add(req->reply, "value", jstr(v));
	json_object_object_add(req->reply, "kept", json_object_new_boolean(kept));
	if (d->tunes_file[0] != '\0' && !kept)
		json_object_object_add(req->reply, "not_kept", jstr(err.msg));
	return CTL_OK;
}

static int
h_release(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in;
	int rc = find_domain(d, req, &in);

	if (rc != CTL_OK)
		return rc;
	if (daemon_release(d, in) < 0) {
		snprintf(req->error, sizeof(req->error), "out of memory");
		return CTL_E_INTERNAL;
	}
	log_dom(LOG_INFO, in->name, -1, 0, "released by uid %u: back to the default scheduler at the next period",
	    (unsigned)req->uid);
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "released", json_object_new_boolean(true));
	(void)obs_index;
	return CTL_OK;
}

int
daemon_handle(void *ctx, struct control_request *req)
{
	struct daemon *d = ctx;

	switch (req->type) {
	case CTL_PING:
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "version", jstr(LLCD_VERSION));
		json_object_object_add(req->reply, "protocol", json_object_new_int(CTL_VERSION));
		json_object_object_add(req->reply, "backend", jstr(d->be.name));
		return CTL_OK;
	case CTL_TOPOLOGY:
		if (arg_str(req, "domain"))
			return daemon_topology_domain(d, req);
		req->reply = topology_json(d);
		return CTL_OK;
	case CTL_LIST: return h_list(d, req);
	case CTL_DOMINFO: return h_dominfo(d, req);
	case CTL_VCPUINFO: return h_vcpuinfo(d, req);
	case CTL_POLICY_GET: return h_policy_get(d, req);
	case CTL_POLICY_SET: return h_policy_set(d, req);
	case CTL_HOT: return h_hot(d, req);
	case CTL_WAKEUPS: return h_wakeups(d, req);
	case CTL_MAP: return h_map(d, req);
	case CTL_EVENTS: return CTL_OK;
	case CTL_STATS: {
		struct llcd_stats st;
		stats_fill(d, &st);
		req->reply = json_object_new_object();
		stats_json(&st, req->reply);
		return CTL_OK;
	}
	case CTL_METRICS: return h_metrics(d, req);
	case CTL_TUNE: return h_tune(d, req);
	case CTL_RELOAD: {
		char msg[512];
		return message_reply(req, daemon_reload(d, msg, sizeof(msg)), msg);
	}
	case CTL_RELEASE: return h_release(d, req);
	case CTL_CHECK: return daemon_check(d, req);
	case CTL_TOPOLOGY_APPLY: return daemon_topology_apply(d, req);
	case CTL_GUEST_CHANNEL: return daemon_guest_channel(d, req);
	}
	snprintf(req->error, sizeof(req->error), "unknown request");
	return CTL_E_UNKNOWN;
}
