// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_policy.c - llcd's answers about a domain's policy: the
 * annotation and what llcd makes of it (policy get), writing a new one
 * (policy set). */
#include <stdlib.h>

#include "annotation_xml.h"
#include "handlers_int.h"

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

int
daemon_policy_get(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct llcd_err err;
	char *xml = NULL;

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
			json_object_object_add(req->reply, "policy_rule", daemon_rule_json(&di));
			st = "rule";
		}
		agent_dominfo_clear(&di);
		json_object_object_add(req->reply, "status", jstr(st));
	}
	if (in->annotated)
		annot_json(&in->annot, req->reply);
	return CTL_OK;
}

int
daemon_policy_set(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct policy_annotation a;
	struct llcd_err err;
	const char *v;
	char *cur = NULL, out[65536];
	int rc;

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
