// SPDX-License-Identifier: GPL-2.0-or-later
/* test_qmp_replay.c - libqmp against transcripts recorded from QEMU 7.2,
 * replayed by a fake server (tests/unit/qmp_fake.c) in three ways: one
 * write per message, each message split into small pieces, and several
 * messages in one write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "qmp.h"
#include "qmp_fake.h"
#include "test_main.h"

#define T_MS 5000

static const enum qmp_fake_mode modes[] = { QMP_FAKE_WHOLE, QMP_FAKE_SPLIT, QMP_FAKE_COALESCE };
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct session {
	struct qmp *q;
	struct qmp_fake *fake;
};

/* Connect a fresh client to a fake server replaying fixture name. */
static void
open_session(struct session *s, const char *name, enum qmp_fake_mode mode, int close_at_end)
{
	char path[512];
	struct llcd_err err;
	int fd;

	snprintf(path, sizeof(path), "%s/qmp/%s.txt", LLCD_FIXTURES, name);
	s->fake = qmp_fake_start(path, mode, close_at_end, &fd);
	assert_non_null(s->fake);
	s->q = qmp_new();
	assert_non_null(s->q);
	assert_int_equal(qmp_attach(s->q, fd, &err), 0);
	if (qmp_handshake(s->q, T_MS, &err) != 0)
		fail_msg("handshake: %s", err.msg);
	assert_int_equal(qmp_state(s->q), QMP_STATE_READY);
}

static void
close_session(struct session *s)
{
	char msg[512];

	qmp_free(s->q);
	if (qmp_fake_join(s->fake, msg, sizeof(msg)) != 0)
		fail_msg("fake server: %s", msg);
}

static void
test_greeting(void **state)
{
	struct session s;
	int maj, min, mic;

	open_session(&s, "cpus-fast", QMP_FAKE_SPLIT, 0);
	qmp_version(s.q, &maj, &min, &mic);
	assert_int_equal(maj, 7);
	assert_int_equal(min, 2);
	assert_int_equal(mic, 22);
	assert_string_equal(qmp_package(s.q), "Debian 1:7.2+dfsg-7+deb12u18+b3");
	assert_true(qmp_has_capability(s.q, "oob"));
	assert_false(qmp_has_capability(s.q, "nope"));
	/* the transcript continues with query-cpus-fast: send it */
	struct qmp_cpus *c;
	struct llcd_err err;
	assert_int_equal(qmp_query_cpus_fast(s.q, T_MS, &c, &err), QMP_OK);
	qmp_cpus_free(c);
	close_session(&s);
}

/* -smp 8,sockets=1,dies=2,cores=2,threads=2: vCPU i is die i/4, core
 * (i/2)%2, thread i%2, each on its own host thread. */
static void
check_cpus_8(const struct qmp_cpus *c)
{
	size_t i, j;

	assert_int_equal(c->n, 8);
	for (i = 0; i < c->n; i++) {
		const struct qmp_cpu *cpu = &c->cpu[i];

		assert_int_equal(cpu->cpu_index, (int)i);
		assert_true(cpu->tid > 0);
		for (j = 0; j < i; j++)
			assert_int_not_equal(cpu->tid, c->cpu[j].tid);
		assert_int_equal(cpu->props.socket_id, 0);
		assert_int_equal(cpu->props.die_id, (int)i / 4);
		assert_int_equal(cpu->props.core_id, (int)(i / 2) % 2);
		assert_int_equal(cpu->props.thread_id, (int)i % 2);
		assert_int_equal(cpu->props.cluster_id, -1);    /* absent in 7.2 x86 */
		assert_int_equal(cpu->props.node_id, -1);
		assert_string_equal(cpu->target, "x86_64");
		assert_non_null(strstr(cpu->qom_path, "/machine/unattached/device["));
	}
}

static void
test_cpus_fast(void **state)
{
	size_t m;

	for (m = 0; m < NMODES; m++) {
		struct session s;
		struct qmp_cpus *c;
		struct llcd_err err;

		open_session(&s, "cpus-fast", modes[m], 0);
		if (qmp_query_cpus_fast(s.q, T_MS, &c, &err) != QMP_OK)
			fail_msg("mode %zu: %s", m, err.msg);
		check_cpus_8(c);
		qmp_cpus_free(c);
		close_session(&s);
	}
}

static void
test_hotpluggable(void **state)
{
	struct session s;
	struct qmp_hotcpus *h;
	struct llcd_err err;
	size_t i;

	open_session(&s, "hotpluggable", QMP_FAKE_WHOLE, 0);
	assert_int_equal(qmp_query_hotpluggable_cpus(s.q, T_MS, &h, &err), QMP_OK);
	assert_int_equal(h->n, 8);
	for (i = 0; i < h->n; i++) {
		/* QEMU lists the slots from the last to the first */
		int v = 7 - (int)i;

		assert_string_equal(h->cpu[i].type, "qemu64-x86_64-cpu");
		assert_int_equal(h->cpu[i].vcpus_count, 1);
		assert_int_equal(h->cpu[i].props.die_id, v / 4);
		assert_int_equal(h->cpu[i].props.core_id, (v / 2) % 2);
		assert_int_equal(h->cpu[i].props.thread_id, v % 2);
		assert_non_null(h->cpu[i].qom_path);
	}
	qmp_hotcpus_free(h);
	close_session(&s);
}

/* maxcpus=16: free slots have no qom-path; a hot-plugged vCPU appears as
 * cpu-index 8 in socket 1 with its own thread. */
static void
test_hotplug(void **state)
{
	struct session s;
	struct qmp_hotcpus *h;
	struct qmp_cpus *c;
	struct json_object *args, *ret;
	struct llcd_err err;
	size_t i, plugged = 0;

	open_session(&s, "hotplug", QMP_FAKE_COALESCE, 0);
	assert_int_equal(qmp_query_hotpluggable_cpus(s.q, T_MS, &h, &err), QMP_OK);
	assert_int_equal(h->n, 16);
	for (i = 0; i < h->n; i++)
		plugged += h->cpu[i].qom_path != NULL;
	assert_int_equal(plugged, 8);
	assert_int_equal(h->cpu[0].props.socket_id, 1);
	assert_null(h->cpu[0].qom_path);
	qmp_hotcpus_free(h);

	args = json_tokener_parse("{\"driver\": \"qemu64-x86_64-cpu\", \"id\": \"cpu8\", "
	                          "\"socket-id\": 1, \"die-id\": 0, \"core-id\": 0, "
	                          "\"thread-id\": 0}");
	assert_int_equal(qmp_execute(s.q, "device_add", args, T_MS, &ret, &err), QMP_OK);
	json_object_put(args);
	assert_true(json_object_is_type(ret, json_type_object));
	assert_int_equal(json_object_object_length(ret), 0);
	json_object_put(ret);

	assert_int_equal(qmp_query_cpus_fast(s.q, T_MS, &c, &err), QMP_OK);
	assert_int_equal(c->n, 9);
	assert_int_equal(c->cpu[8].cpu_index, 8);
	assert_int_equal(c->cpu[8].props.socket_id, 1);
	assert_int_equal(c->cpu[8].props.die_id, 0);
	assert_string_equal(c->cpu[8].qom_path, "/machine/peripheral/cpu8");
	qmp_cpus_free(c);
	close_session(&s);
}

/* QEMU's error replies: each a QMP_ERR_COMMAND with the exact message,
 * the error object in *ret, and the connection still usable. */
static void
test_errors(void **state)
{
	static const struct {
		const char *cmd, *args, *class, *msg;
	} cases[] = {
		{ "no-such-command", NULL, "CommandNotFound",
		  "no-such-command: CommandNotFound: The command no-such-command has not been found" },
		{ "query-cpus-fast", "{\"bogus\": 1}", "GenericError",
		  "query-cpus-fast: GenericError: Parameter 'bogus' is unexpected" },
		{ "device_del", "{\"id\": \"no-such-device\"}", "DeviceNotFound",
		  "device_del: DeviceNotFound: Device 'no-such-device' not found" },
	};
	struct session s;
	struct json_object *ret, *cls, *st;
	struct llcd_err err;
	size_t i;

	open_session(&s, "errors", QMP_FAKE_SPLIT, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *args = cases[i].args ? json_tokener_parse(cases[i].args) : NULL;

		assert_int_equal(qmp_execute(s.q, cases[i].cmd, args, T_MS, &ret, &err),
		                 QMP_ERR_COMMAND);
		assert_string_equal(err.msg, cases[i].msg);
		assert_true(json_object_object_get_ex(ret, "class", &cls));
		assert_string_equal(json_object_get_string(cls), cases[i].class);
		json_object_put(ret);
		json_object_put(args);
	}
	assert_int_equal(qmp_execute(s.q, "query-status", NULL, T_MS, &ret, &err), QMP_OK);
	assert_true(json_object_object_get_ex(ret, "status", &st));
	assert_string_equal(json_object_get_string(st), "prelaunch");
	json_object_put(ret);
	close_session(&s);
}

static void
expect_event(struct qmp *q, const char *name)
{
	struct json_object *ev = qmp_event_next(q);

	if (ev == NULL)
		fail_msg("no event queued, expected %s", name);
	assert_string_equal(qmp_event_name(ev), name);
	json_object_put(ev);
}

/* Events arrive before the replies that caused them, and are queued. */
static void
test_events(void **state)
{
	size_t m;

	for (m = 0; m < NMODES; m++) {
		struct session s;
		struct json_object *ret, *ev, *data, *reason;
		struct llcd_err err;

		open_session(&s, "events", modes[m], 1);
		assert_int_equal(qmp_execute(s.q, "cont", NULL, T_MS, NULL, &err), QMP_OK);
		assert_int_equal(qmp_events_queued(s.q), 1);
		expect_event(s.q, "RESUME");
		assert_int_equal(qmp_execute(s.q, "stop", NULL, T_MS, NULL, &err), QMP_OK);
		expect_event(s.q, "STOP");
		assert_int_equal(qmp_execute(s.q, "query-status", NULL, T_MS, &ret, &err), QMP_OK);
		json_object_put(ret);
		assert_null(qmp_event_next(s.q));
		assert_int_equal(qmp_execute(s.q, "quit", NULL, T_MS, NULL, &err), QMP_OK);
		assert_int_equal(qmp_event_wait(s.q, T_MS, &ev, &err), QMP_OK);
		assert_string_equal(qmp_event_name(ev), "SHUTDOWN");
		assert_true(json_object_object_get_ex(ev, "data", &data));
		assert_true(json_object_object_get_ex(data, "reason", &reason));
		assert_string_equal(json_object_get_string(reason), "host-qmp-quit");
		json_object_put(ev);
		/* then QEMU closes the socket */
		assert_int_equal(qmp_event_wait(s.q, T_MS, &ev, &err), QMP_ERR_CONN);
		assert_string_equal(err.msg, "QEMU closed the connection");
		assert_int_equal(qmp_state(s.q), QMP_STATE_BROKEN);
		assert_int_equal(qmp_execute(s.q, "query-status", NULL, T_MS, NULL, &err),
		                 QMP_ERR_CONN);
		assert_string_equal(err.msg, "QEMU closed the connection");
		close_session(&s);
	}
}

/* The event-loop API: poll qmp_fd() for qmp_poll_events(), qmp_step(). */
static void
test_event_loop(void **state)
{
	char path[512], msg[512];
	struct qmp_fake *fake;
	struct qmp *q = qmp_new();
	struct json_object *ret;
	struct qmp_cpus *c;
	struct llcd_err err;
	enum qmp_rc rc;
	uint64_t id;
	int fd, steps = 0;

	snprintf(path, sizeof(path), "%s/qmp/cpus-fast.txt", LLCD_FIXTURES);
	fake = qmp_fake_start(path, QMP_FAKE_SPLIT, 0, &fd);
	assert_int_equal(qmp_attach(q, fd, &err), 0);
	assert_int_equal(qmp_fd(q), fd);
	assert_int_equal(qmp_send(q, "query-cpus-fast", NULL, &id, &err), -1);
	assert_string_equal(err.msg, "cannot send 'query-cpus-fast': QMP handshake not complete");
	while (qmp_state(q) != QMP_STATE_READY) {
		struct pollfd pfd = { qmp_fd(q), qmp_poll_events(q), 0 };

		assert_int_equal(poll(&pfd, 1, T_MS), 1);
		assert_int_equal(qmp_step(q, &err), 0);
		steps++;
	}
	assert_true(steps > 1);      /* the greeting came in pieces */
	assert_int_equal(qmp_send(q, "query-cpus-fast", NULL, &id, &err), 0);
	assert_int_equal(id, 2);
	assert_true(qmp_poll_events(q) & POLLOUT);
	while ((rc = qmp_reply_take(q, id, &ret, &err)) == QMP_PENDING) {
		struct pollfd pfd = { qmp_fd(q), qmp_poll_events(q), 0 };

		assert_int_equal(poll(&pfd, 1, T_MS), 1);
		assert_int_equal(qmp_step(q, &err), 0);
	}
	assert_int_equal(rc, QMP_OK);
	assert_int_equal(qmp_cpus_parse(ret, &c, &err), 0);
	check_cpus_8(c);
	qmp_cpus_free(c);
	json_object_put(ret);
	/* the id is claimed: asking again is an error */
	assert_int_equal(qmp_reply_take(q, id, &ret, &err), QMP_ERR_CONN);
	assert_string_equal(err.msg, "no request with id 2");
	qmp_free(q);
	assert_int_equal(qmp_fake_join(fake, msg, sizeof(msg)), 0);
}

TEST_MAIN(
	cmocka_unit_test(test_greeting),
	cmocka_unit_test(test_cpus_fast),
	cmocka_unit_test(test_hotpluggable),
	cmocka_unit_test(test_hotplug),
	cmocka_unit_test(test_errors),
	cmocka_unit_test(test_events),
	cmocka_unit_test(test_event_loop))
