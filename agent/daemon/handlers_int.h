// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_int.h - what the files of llcd's answers (handlers.c,
 * handlers_guest.c) share: the request arguments, the domain a request
 * names, and the guest-topology and guest-channel answers. Private to
 * them. */
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

/* handlers_guest.c: topology DOMAIN, topology --apply, check, guest-channel */
int daemon_topology_domain(struct daemon *d, struct control_request *req);
int daemon_topology_apply(struct daemon *d, struct control_request *req);
int daemon_check(struct daemon *d, struct control_request *req);
int daemon_guest_channel(struct daemon *d, struct control_request *req);

#endif
