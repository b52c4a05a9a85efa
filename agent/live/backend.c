// SPDX-License-Identifier: GPL-2.0-or-later
/* backend.c - the live back-end's hooks for llcd's daemon core. */
#include "live_backend.h"
#include "live_int.h"

#include <string.h>

static int
h_event_fd(void *ctx)
{
	return live_event_fd(ctx);
}

static int
h_handle_events(void *ctx, uint64_t now_ns, struct llcd_err *err)
{
	return live_handle_events(ctx, now_ns, err);
}

/* The daemon has already filled name, key, state and reason from the
 * engine; add what the back-end knows without overwriting those, except
 * that a back-end error (a permanent pin failure, an invalid annotation)
 * makes the domain an error. */
static int
h_describe(void *ctx, uint64_t key, struct json_object *out)
{
	struct json_object *tmp = json_object_new_object(), *st, *why;
	int rc = live_describe(ctx, key, tmp);

	if (rc == 0) {
		json_object_object_foreach(tmp, k, v) {
			if (json_object_object_get_ex(out, k, NULL))
				continue;
			json_object_object_add(out, k, json_object_get(v));
		}
		if (json_object_object_get_ex(tmp, "state", &st) && strcmp(json_object_get_string(st), "error") == 0 &&
		    json_object_object_get_ex(tmp, "reason", &why)) {
			json_object_object_add(out, "state", json_object_get(st));
			json_object_object_add(out, "reason", json_object_get(why));
		}
		if (json_object_object_get_ex(tmp, "key", &st))
			json_object_object_add(out, "libvirt_key", json_object_get(st));
	}
	json_object_put(tmp);
	return rc;
}

static int
h_describe_host(void *ctx, struct json_object *out)
{
	return live_describe_host(ctx, out);
}

static int
h_get_annotation(void *ctx, uint64_t key, char **xml, struct llcd_err *err)
{
	return live_get_annotation(ctx, key, xml, err);
}

static int
h_set_annotation(void *ctx, uint64_t key, const char *xml, bool live, bool config, struct llcd_err *err)
{
	return live_set_annotation(ctx, key, xml, live, config, err);
}

static int
h_get_xml(void *ctx, uint64_t key, bool inactive, char **xml, struct llcd_err *err)
{
	return live_get_xml(ctx, key, inactive, xml, err);
}

static int
h_define_xml(void *ctx, const char *xml, struct llcd_err *err)
{
	return live_define_xml(ctx, xml, err);
}

static int
h_add_guest_channel(void *ctx, uint64_t key, bool live, char *path, size_t len, struct llcd_err *err)
{
	return live_add_guest_channel(ctx, key, live, path, len, err);
}

static void
h_set_topology(void *ctx, const struct topo *t)
{
	live_set_topology(ctx, t);
}

static bool
h_is_running(void *ctx, uint64_t key)
{
	return live_is_running(ctx, key);
}

void
live_backend_fill(struct live *l, struct daemon_backend *be)
{
	memset(be, 0, sizeof(*be));
	be->name = "libvirt";
	be->ops = &live_agent_ops;
	be->ctx = l;
	be->hook_ctx = l;
	be->counters = live_counters(l);
	be->event_fd = h_event_fd;
	be->handle_events = h_handle_events;
	be->describe = h_describe;
	be->describe_host = h_describe_host;
	be->get_annotation = h_get_annotation;
	be->set_annotation = h_set_annotation;
	be->get_xml = h_get_xml;
	be->define_xml = h_define_xml;
	be->is_running = h_is_running;
	be->set_topology = h_set_topology;
	be->add_guest_channel = h_add_guest_channel;
}
