// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_domain.c - llcd's answers about the domains it sees: the list
 * (in pages), a domain's summary and facts (dominfo), its vCPUs (vcpuinfo),
 * the guest's reports and the groups (hot), the wakeup pairs (wakeups). */
#include <math.h>
#include <stdlib.h>

#include "annotation_xml.h"
#include "guesttopo.h"
#include "handlers_int.h"

/* A guest topology as {sockets, dies, clusters, cores, threads}. */
json_object *
daemon_gtopo_json(const struct policy_guest_topo *g)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "sockets", json_object_new_int(g->sockets));
	json_object_object_add(o, "dies", json_object_new_int(g->dies));
	json_object_object_add(o, "clusters", json_object_new_int(g->clusters));
	json_object_object_add(o, "cores", json_object_new_int(g->cores));
	json_object_object_add(o, "threads", json_object_new_int(g->threads));
	return o;
}

/* The policy rule that gives a domain its policy (policy-rule, config.h). */
json_object *
daemon_rule_json(const struct agent_dominfo *di)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "number", json_object_new_int(di->rule));
	json_object_object_add(r, "where", jstr(di->rule_where));
	json_object_object_add(r, "match", jstr(di->rule_match));
	return r;
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
	if (di->rule > 0)
		json_object_object_add(o, "policy_rule", daemon_rule_json(di));
	if (di->have_guest_topo) {
		snprintf(buf, sizeof(buf), "sockets=%d dies=%d clusters=%d cores=%d threads=%d", di->guest.sockets,
		    di->guest.dies, di->guest.clusters, di->guest.cores, di->guest.threads);
		json_object_object_add(o, "guest_topology", jstr(buf));
	}
	daemon_facts_json(&di->facts, o);
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
			daemon_facts_json(&c->facts, x);
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

int
daemon_list(struct daemon *d, struct control_request *req)
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

int
daemon_dominfo(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct policy_domain_info info;

	req->reply = json_object_new_object();
	domain_summary(d, in, req->reply);
	json_object_object_add(req->reply, "guest_topology", daemon_gtopo_json(&in->guest));
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

int
daemon_vcpuinfo(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct policy_domain_info info;
	bool have_info;

	have_info = policy_domain_info(agent_loop_policy(d->loop), in->key, &info) == 0;
	/* an empty sample pin is "not placed by llcd" (query.h): show the
	 * thread's real affinity, as the kernel has it (a released domain) */
	struct agent_dominfo di;
	bool have_di = false;
	agent_dominfo_init(&di);
	for (int v = 0; v < in->nvcpus && !have_di; v++)
		if (cpuset_empty(policy_sample_pin(&in->vcpus[v])) && d->be.query->describe)
			have_di = d->be.query->describe(d->be.ctx, in->key, &di) == 0;
	json_object *arr = json_object_new_array();
	for (int v = 0; v < in->nvcpus; v++) {
		const struct policy_vcpu_sample *s = &in->vcpus[v];
		const struct cpuset *pin = policy_sample_pin(s);
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

int
daemon_hot(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct policy_domain_info info;

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
int
daemon_wakeups(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct wakeups_pair_info pairs[WAKEUP_PAIRS_SHOWN];
	struct policy_wakeups_info wi;
	int n;

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
