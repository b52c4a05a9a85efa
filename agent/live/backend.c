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

static int
h_describe(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	return live_describe(ctx, key, out);
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
