// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_int.h - what the files of llcd's answers (handlers.c and
 * handlers_{host,domain,policy,guest}.c) share: the request arguments, the
 * domain a request names, the JSON pieces more than one answer holds, and
 * each file's answers, which daemon_handle (handlers.c) dispatches to.
 * Private to them. */
#ifndef LLCD_HANDLERS_INT_H
#define LLCD_HANDLERS_INT_H

#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "daemon_int.h"
#include "jsonget.h"

static inline json_object *
jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static inline const char *
arg_str(const struct control_request *req, const char *key)
{
	const char *v;

	return jget_str(req->args, key, &v) == JGET_OK ? v : NULL;
}

static inline bool
arg_bool(const struct control_request *req, const char *key, bool def)
{
	json_object *v;

	if (!json_object_object_get_ex(req->args, key, &v))
		return def;
	return json_object_get_boolean(v);
}

/* Find the domain named by args.domain (name, or key in decimal). */
static inline int
find_domain(struct daemon *d, struct control_request *req, const struct policy_domain_in **out)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);
	const char *name = arg_str(req, "domain");

	if (name == NULL) {
		snprintf(req->error, sizeof(req->error), "this command needs a domain name");
		return CTL_E_INVAL;
	}
	for (int i = 0; o && i < o->ndomains; i++) {
		char key[32];
		snprintf(key, sizeof(key), "%llu", (unsigned long long)o->domains[i].key);
		if (!strcmp(o->domains[i].name, name) || !strcmp(key, name)) {
			*out = &o->domains[i];
			return CTL_OK;
		}
	}
	snprintf(req->error, sizeof(req->error), "no running domain '%.200s' (llcctl list shows the domains llcd sees)",
	    name);
	return CTL_E_NODOMAIN;
}

/* A request about one running domain (args.domain): the dispatch finds it
 * (find_domain) before the handler runs, and answers for it when it is not
 * there. */
typedef int domain_handler(struct daemon *d, struct control_request *req,
                           const struct policy_domain_in *in);

/* handlers_host.c: topology (no domain), map; a back-end's fact rows as
 * members of o (one object per group, made at its first row) */
json_object *daemon_topology_json(const struct daemon *d);
int daemon_map(struct daemon *d, struct control_request *req);
void daemon_facts_json(const struct agent_facts *f, json_object *o);

/* handlers_domain.c: list, dominfo, vcpuinfo, hot, wakeups; a guest
 * topology's and a policy rule's JSON */
int daemon_list(struct daemon *d, struct control_request *req);
domain_handler daemon_dominfo;
domain_handler daemon_vcpuinfo;
domain_handler daemon_hot;
domain_handler daemon_wakeups;
json_object *daemon_gtopo_json(const struct policy_guest_topo *g);
json_object *daemon_rule_json(const struct agent_dominfo *di);

/* handlers_policy.c: policy get, policy set */
domain_handler daemon_policy_get;
domain_handler daemon_policy_set;

/* handlers_guest.c: topology DOMAIN, topology --apply, check, guest-channel */
domain_handler daemon_topology_domain;
domain_handler daemon_topology_apply;
domain_handler daemon_check;
int daemon_guest_channel(struct daemon *d, struct control_request *req);

#endif
