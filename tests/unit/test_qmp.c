// SPDX-License-Identifier: GPL-2.0-or-later
/* test_qmp.c - libqmp framing, dispatch and hostile peers, mostly through
 * the sans-I/O API (qmp_feed / qmp_out_peek), and the vCPU parsers.  Each
 * failure is checked for its exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qmp.h"
#include "test_main.h"

static const char greeting[] =
	"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, "
	"\"package\": \"Debian 1:7.2+dfsg-7+deb12u18+b3\"}, \"capabilities\": [\"oob\"]}}\r\n";

static void
feed_ok(struct qmp *q, const char *s)
{
	struct llcd_err err;

	if (qmp_feed(q, s, strlen(s), &err) != 0)
		fail_msg("feed: %s", err.msg);
}

static void
feed_fails(struct qmp *q, const void *buf, size_t len, const char *msg)
{
	struct llcd_err err;

	assert_int_equal(qmp_feed(q, buf, len, &err), -1);
	assert_string_equal(err.msg, msg);
	assert_int_equal(qmp_state(q), QMP_STATE_BROKEN);
	assert_string_equal(qmp_broken_reason(q), msg);
	/* and every later call fails the same way */
	assert_int_equal(qmp_feed(q, "{}", 2, &err), -1);
	assert_string_equal(err.msg, msg);
	assert_int_equal(qmp_send(q, "query-status", NULL, NULL, &err), -1);
	assert_string_equal(err.msg, msg);
}

/* Take the next command from the output queue; return its "execute". */
static char *
take_sent(struct qmp *q, uint64_t *id)
{
	size_t len;
	const char *out = qmp_out_peek(q, &len);
	const char *nl = memchr(out, '\n', len);
	struct json_object *o, *x;
	char *cmd;

	assert_non_null(nl);
	assert_true(nl > out && nl[-1] == '\r');
	cmd = strndup(out, (size_t)(nl - out));
	o = json_tokener_parse(cmd);
	free(cmd);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "execute", &x));
	cmd = strdup(json_object_get_string(x));
	assert_true(json_object_object_get_ex(o, "id", &x));
	*id = (uint64_t)json_object_get_int64(x);
	json_object_put(o);
	qmp_out_consume(q, (size_t)(nl + 1 - out));
	return cmd;
}

/* A client past the handshake, in sans-I/O mode. */
static struct qmp *
ready(void)
{
	struct qmp *q = qmp_new();
	uint64_t id;
	char *cmd, reply[64];

	assert_non_null(q);
	assert_int_equal(qmp_state(q), QMP_STATE_GREETING);
	feed_ok(q, greeting);
	assert_int_equal(qmp_state(q), QMP_STATE_NEGOTIATING);
	cmd = take_sent(q, &id);
	assert_string_equal(cmd, "qmp_capabilities");
	free(cmd);
	snprintf(reply, sizeof(reply), "{\"return\": {}, \"id\": %" PRIu64 "}\r\n", id);
	feed_ok(q, reply);
	assert_int_equal(qmp_state(q), QMP_STATE_READY);
	return q;
}

/* text written whole by the QEMU end of a socket pair */
static void
qemu_says(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* A client attached to sv[1] of a new socket pair; the QEMU end, sv[0],
 * has sent the greeting and the reply to qmp_capabilities (id 1). */
static struct qmp *
socket_client(int sv[2])
{
	static const char caps[] = "{\"return\": {}, \"id\": 1}\r\n";
	struct llcd_err err;
	struct qmp *q = qmp_new();

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	qemu_says(sv[0], greeting);
	qemu_says(sv[0], caps);
	assert_int_equal(qmp_attach(q, sv[1], &err), 0);
	return q;
}

static uint64_t
send_cmd(struct qmp *q, const char *cmd)
{
	struct llcd_err err;
	uint64_t id, sent;
	char *c;

	assert_int_equal(qmp_send(q, cmd, NULL, &id, &err), 0);
	c = take_sent(q, &sent);
	assert_string_equal(c, cmd);
	assert_int_equal(sent, id);
	free(c);
	return id;
}

static void
test_free_null(void **state)
{
	qmp_free(NULL);
	qmp_cpus_free(NULL);
	qmp_hotcpus_free(NULL);
}

/* found by fuzz_qmp: peeking before anything was queued */
static void
test_out_peek_empty(void **state)
{
	struct qmp *q = qmp_new();
	size_t len = 1;

	assert_string_equal(qmp_out_peek(q, &len), "");
	assert_int_equal(len, 0);
	qmp_out_consume(q, 10);
	assert_int_equal(qmp_fd(q), -1);
	assert_int_equal(qmp_poll_events(q), 0);
	qmp_free(q);
}

static void
test_greeting_errors(void **state)
{
	struct qmp *q;

	q = qmp_new();
	feed_fails(q, "{\"return\": {}}", 14, "expected the QMP greeting ({\"QMP\": ...}) first");
	qmp_free(q);

	q = qmp_new();
	const char *g = "{\"QMP\": {\"version\": {\"qemu\": {\"major\": 7}}, \"capabilities\": []}}";
	feed_fails(q, g, strlen(g),
	           "malformed QMP greeting: no version.qemu.{major,minor,micro}");
	qmp_free(q);

	q = qmp_new();
	g = "{\"QMP\": {\"version\": {\"qemu\": {\"major\": 7, \"minor\": 2, \"micro\": 0}}}}";
	feed_fails(q, g, strlen(g), "malformed QMP greeting: no capabilities array");
	qmp_free(q);

	/* qmp_capabilities refused */
	struct llcd_err err;
	uint64_t id;
	char *cmd;
	q = qmp_new();
	feed_ok(q, greeting);
	cmd = take_sent(q, &id);
	free(cmd);
	g = "{\"id\": 1, \"error\": {\"class\": \"GenericError\", \"desc\": \"no\"}}";
	feed_fails(q, g, strlen(g), "qmp_capabilities failed: no");
	assert_int_equal(qmp_feed_eof(q, &err), -1);
	assert_string_equal(err.msg, "qmp_capabilities failed: no");
	qmp_free(q);

	/* a second greeting */
	q = ready();
	feed_fails(q, greeting, strlen(greeting), "second QMP greeting from QEMU");
	qmp_free(q);
}

/* Several messages in one read, and each split byte by byte. */
static void
test_many_and_split(void **state)
{
	static const char *const chunk =
		"{\"return\": {\"a\": 1}, \"id\": 2}\r\n"
		"{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"STOP\"}\r\n"
		"{\"id\": 3, \"error\": {\"class\": \"GenericError\", \"desc\": \"bad\"}}\r\n"
		"{\"return\": [1, \"}]\\\"{[\", {\"x\": \"\\\\\"}], \"id\": 4}\r\n"
		"{\"event\": \"RESUME\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 3}}\r\n";
	size_t split;

	/* split == 0: everything in one feed; else feed split bytes at a time */
	for (split = 0; split <= 7; split++) {
		struct qmp *q = ready();
		struct json_object *ret, *x;
		struct llcd_err err;
		size_t off, len = strlen(chunk);

		assert_int_equal(send_cmd(q, "a"), 2);
		assert_int_equal(send_cmd(q, "b"), 3);
		assert_int_equal(send_cmd(q, "c"), 4);
		for (off = 0; off < len; off += split ? split : len) {
			size_t n = split && len - off > split ? split : len - off;

			assert_int_equal(qmp_feed(q, chunk + off, n, &err), 0);
			if (off + n < strcspn(chunk, "\r"))   /* first reply incomplete */
				assert_int_equal(qmp_reply_take(q, 2, NULL, &err), QMP_PENDING);
		}
		/* replies can be claimed in any order */
		assert_int_equal(qmp_reply_take(q, 4, &ret, &err), QMP_OK);
		assert_int_equal(json_object_array_length(ret), 3);
		assert_string_equal(json_object_get_string(json_object_array_get_idx(ret, 1)),
		                    "}]\"{[");
		assert_true(json_object_object_get_ex(json_object_array_get_idx(ret, 2), "x", &x));
		assert_string_equal(json_object_get_string(x), "\\");
		json_object_put(ret);
		assert_int_equal(qmp_reply_take(q, 3, &ret, &err), QMP_ERR_COMMAND);
		assert_string_equal(err.msg, "b: GenericError: bad");
		json_object_put(ret);
		assert_int_equal(qmp_reply_take(q, 2, &ret, &err), QMP_OK);
		assert_true(json_object_object_get_ex(ret, "a", &x));
		json_object_put(ret);
		assert_int_equal(qmp_events_queued(q), 2);
		x = qmp_event_next(q);
		assert_string_equal(qmp_event_name(x), "STOP");
		json_object_put(x);
		x = qmp_event_next(q);
		assert_string_equal(qmp_event_name(x), "RESUME");
		json_object_put(x);
		assert_null(qmp_event_next(q));
		assert_int_equal(qmp_state(q), QMP_STATE_READY);
		qmp_free(q);
	}
}

/* QEMU's pretty=on output spans lines; framing does not depend on lines. */
static void
test_pretty(void **state)
{
	struct qmp *q = ready();
	struct json_object *ret;
	struct llcd_err err;

	send_cmd(q, "query-status");
	feed_ok(q, "{\n    \"return\": {\n        \"status\": \"running\"\n    },\n    \"id\": 2\n}\n");
	assert_int_equal(qmp_reply_take(q, 2, &ret, &err), QMP_OK);
	json_object_put(ret);
	qmp_free(q);
}

static void
test_oversized(void **state)
{
	static const char head[] = "{\"return\": \"";
	static const char tail[] = "\", \"id\": 2}";
	size_t n = QMP_MSG_MAX - strlen(head) - strlen(tail);
	char *big = malloc(QMP_MSG_MAX + 2);
	struct json_object *ret;
	struct llcd_err err;
	struct qmp *q;

	/* exactly QMP_MSG_MAX bytes is accepted */
	memcpy(big, head, strlen(head));
	memset(big + strlen(head), 'a', n);
	memcpy(big + strlen(head) + n, tail, strlen(tail));
	q = ready();
	send_cmd(q, "x");
	assert_int_equal(qmp_feed(q, big, QMP_MSG_MAX, &err), 0);
	assert_int_equal(qmp_reply_take(q, 2, &ret, &err), QMP_OK);
	assert_int_equal(json_object_get_string_len(ret), (int)n);
	json_object_put(ret);
	qmp_free(q);

	/* one byte more is refused, whether fed at once or in pieces */
	memcpy(big + strlen(head), "aa", 2);
	memmove(big + strlen(head) + 1, big + strlen(head), QMP_MSG_MAX - strlen(head));
	q = ready();
	send_cmd(q, "x");
	feed_fails(q, big, QMP_MSG_MAX + 1, "message from QEMU exceeds 1048576 bytes");
	qmp_free(q);
	q = ready();
	assert_int_equal(qmp_feed(q, big, 4096, &err), 0);
	feed_fails(q, big + 4096, QMP_MSG_MAX, "message from QEMU exceeds 1048576 bytes");
	qmp_free(q);

	/* an endless run of whitespace is bounded too */
	memset(big, ' ', QMP_MSG_MAX + 1);
	q = ready();
	feed_fails(q, big, QMP_MSG_MAX + 1, "more than 1048576 bytes of whitespace from QEMU");
	qmp_free(q);
	free(big);
}

static void
test_invalid_json(void **state)
{
	static const struct {
		const char *in;
		size_t len;            /* 0: strlen */
		const char *msg;
	} cases[] = {
		{ "{\"return\": \"\xff\xfe\", \"id\": 2}", 0,
		  "invalid JSON from QEMU at byte 12: invalid utf-8 string" },
		{ "{\"return\": \"\xc3\", \"id\": 2}", 0,
		  "invalid JSON from QEMU at byte 13: invalid utf-8 string" },
		{ "{\"return\": [1,,2], \"id\": 2}", 0,
		  "invalid JSON from QEMU at byte 14: unexpected character" },
		{ "{\"return\": tru, \"id\": 2}", 0,
		  "invalid JSON from QEMU at byte 14: boolean expected" },
		{ "{'return': 1}", 0,
		  "invalid JSON from QEMU: unexpected byte 0x27 outside a string" },
		{ "{\"return\": NaN, \"id\": 2}", 0,
		  "invalid JSON from QEMU: unexpected byte 0x4e outside a string" },
		{ "{\"return\": [1]\x01, \"id\": 2}", 0,
		  "invalid JSON from QEMU: unexpected byte 0x01 outside a string" },
		{ "{\"return\": {}, \"id\": 2]", 0,
		  "invalid JSON from QEMU at byte 22: object value separator ',' expected" },
		{ "x{}", 0, "unexpected byte 0x78 from QEMU where a message should start" },
		{ "[1]", 0, "unexpected byte 0x5b from QEMU where a message should start" },
		{ "{\"return\": \"a\0b\", \"id\": 2}", 26, "NUL byte in a message from QEMU" },
		{ "{\"foo\": 1}", 0, "unexpected message from QEMU: {\"foo\": 1}" },
		{ "{\"\x01\": 1}", 0, "invalid JSON from QEMU: control character 0x01 in a string" },
		{ "{\"return\": \"\\x41\", \"id\": 2}", 0,
		  "invalid JSON from QEMU at byte 13: invalid string sequence" },
		{ "{\"event\": 5}", 0, "event from QEMU without a name" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct qmp *q = ready();

		send_cmd(q, "x");
		feed_fails(q, cases[i].in, cases[i].len ? cases[i].len : strlen(cases[i].in),
		           cases[i].msg);
		qmp_free(q);
	}
}

static void
test_deep_nesting(void **state)
{
	char buf[300];
	struct qmp *q = ready();

	memset(buf, '[', sizeof(buf));
	buf[0] = '{';
	send_cmd(q, "x");
	/* still framing (no closing bracket yet): not an error until parsed */
	feed_ok(q, "{\"return\": ");
	feed_ok(q, "");
	qmp_free(q);

	q = ready();
	send_cmd(q, "x");
	char msg[1000];
	size_t o = 0, k;
	o += (size_t)snprintf(msg + o, sizeof(msg) - o, "{\"return\": ");
	for (k = 0; k < 100; k++)
		msg[o++] = '[';
	for (k = 0; k < 100; k++)
		msg[o++] = ']';
	o += (size_t)snprintf(msg + o, sizeof(msg) - o, ", \"id\": 2}");
	feed_fails(q, msg, o, "invalid JSON from QEMU at byte 74: nesting too deep");
	qmp_free(q);
}

static void
test_bad_ids(void **state)
{
	static const struct {
		const char *in, *msg;
	} cases[] = {
		{ "{\"return\": {}, \"id\": 99}", "reply from QEMU with unknown id 99" },
		{ "{\"return\": {}, \"id\": \"2\"}", "reply from QEMU with unknown id \"2\"" },
		{ "{\"return\": {}, \"id\": -2}", "reply from QEMU with unknown id -2" },
		{ "{\"return\": {}}", "reply from QEMU without an id" },
		{ "{\"return\": {}, \"id\": 2}{\"return\": {}, \"id\": 2}",
		  "second reply from QEMU for id 2" },
		{ "{\"id\": 2, \"error\": \"x\"}", "malformed error reply from QEMU (id 2)" },
		{ "{\"id\": 2, \"error\": {\"class\": \"E\"}}", "malformed error reply from QEMU (id 2)" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct qmp *q = ready();

		send_cmd(q, "x");
		feed_fails(q, cases[i].in, strlen(cases[i].in), cases[i].msg);
		qmp_free(q);
	}
}

static void
test_eof(void **state)
{
	struct llcd_err err;
	struct qmp *q = ready();

	send_cmd(q, "x");
	feed_ok(q, "{\"return\": [1, 2, ");
	assert_int_equal(qmp_feed_eof(q, &err), -1);
	assert_string_equal(err.msg, "QEMU closed the connection in the middle of a message "
	                    "(18 bytes received)");
	/* the pending request fails with the reason */
	assert_int_equal(qmp_reply_take(q, 2, NULL, &err), QMP_ERR_CONN);
	assert_string_equal(err.msg, "QEMU closed the connection in the middle of a message "
	                    "(18 bytes received)");
	qmp_free(q);

	q = ready();
	feed_ok(q, "\r\n");
	assert_int_equal(qmp_feed_eof(q, &err), -1);
	assert_string_equal(err.msg, "QEMU closed the connection");
	qmp_free(q);
}

static void
test_send_errors(void **state)
{
	struct qmp *q = qmp_new();
	struct json_object *arr = json_object_new_array();
	struct llcd_err err;
	uint64_t id;
	int i;

	assert_int_equal(qmp_send(q, "x", NULL, &id, &err), -1);
	assert_string_equal(err.msg, "cannot send 'x': QMP handshake not complete");
	qmp_free(q);

	q = ready();
	assert_int_equal(qmp_send(q, "x", arr, &id, &err), -1);
	assert_string_equal(err.msg, "arguments of 'x' must be a JSON object");
	assert_int_equal(qmp_send(q, "", NULL, &id, &err), -1);
	assert_string_equal(err.msg, "empty command name");
	json_object_put(arr);
	for (i = 0; i < QMP_PENDING_MAX; i++)
		assert_int_equal(qmp_send(q, "x", NULL, &id, &err), 0);
	assert_int_equal(qmp_send(q, "x", NULL, &id, &err), -1);
	assert_string_equal(err.msg, "cannot send 'x': 256 requests already pending");
	/* abandoned requests: their replies are dropped quietly */
	qmp_reply_abandon(q, 2);
	feed_ok(q, "{\"return\": {}, \"id\": 2}");
	assert_int_equal(qmp_reply_take(q, 2, NULL, &err), QMP_ERR_CONN);
	assert_string_equal(err.msg, "no request with id 2");
	assert_int_equal(qmp_send(q, "x", NULL, &id, &err), 0);
	assert_int_equal(qmp_state(q), QMP_STATE_READY);
	qmp_free(q);      /* frees 256 pending requests */

	/* the output queue is bounded */
	q = ready();
	struct json_object *a = json_object_new_object();
	char *s = malloc(QMP_OUT_MAX / 2);
	memset(s, 'a', QMP_OUT_MAX / 2 - 1);
	s[QMP_OUT_MAX / 2 - 1] = '\0';
	json_object_object_add(a, "s", json_object_new_string(s));
	assert_int_equal(qmp_send(q, "x", a, &id, &err), 0);
	assert_int_equal(qmp_send(q, "x", a, &id, &err), -1);
	assert_non_null(strstr(err.msg, "cannot send 'x': output queue full"));
	json_object_put(a);
	free(s);
	qmp_free(q);
}

static void
test_event_overflow(void **state)
{
	struct qmp *q = ready();
	struct json_object *ev, *data, *n;
	char buf[128];
	int i;

	for (i = 0; i < QMP_EVENTS_MAX + 5; i++) {
		snprintf(buf, sizeof(buf), "{\"event\": \"E\", \"data\": {\"n\": %d}}", i);
		feed_ok(q, buf);
	}
	assert_int_equal(qmp_events_queued(q), QMP_EVENTS_MAX);
	assert_int_equal(qmp_events_dropped(q), 5);
	ev = qmp_event_next(q);
	assert_true(json_object_object_get_ex(ev, "data", &data));
	assert_true(json_object_object_get_ex(data, "n", &n));
	assert_int_equal(json_object_get_int(n), 5);     /* the oldest were dropped */
	json_object_put(ev);
	assert_string_equal(qmp_event_name(NULL), "");
	qmp_free(q);       /* frees the queued events */
}

/* Over a socket: a timeout, the late reply dropped, the connection still
 * usable; a peer that closes mid-message. */
static void
test_socket_timeout_and_close(void **state)
{
	static const char late[] = "{\"return\": {}, \"id\": 2}\r\n"
	                           "{\"return\": {\"x\": 1}, \"id\": 3}\r\n";
	struct json_object *ret, *x;
	struct llcd_err err;
	int sv[2];
	struct qmp *q = socket_client(sv);

	assert_int_equal(qmp_attach(q, sv[1], &err), -1);
	assert_string_equal(err.msg, "QMP connection already in use");
	assert_int_equal(qmp_handshake(q, 1000, &err), 0);
	assert_int_equal(qmp_execute(q, "slow", NULL, 50, &ret, &err), QMP_ERR_TIMEOUT);
	assert_string_equal(err.msg, "slow: no reply within 50 ms");
	assert_null(ret);
	qemu_says(sv[0], late);
	assert_int_equal(qmp_execute(q, "fast", NULL, 1000, &ret, &err), QMP_OK);
	assert_true(json_object_object_get_ex(ret, "x", &x));
	json_object_put(ret);

	/* drain what the client sent (else closing resets the connection),
	 * then close in the middle of a message */
	char sink[4096];
	assert_true(read(sv[0], sink, sizeof(sink)) > 0);
	assert_int_equal(write(sv[0], "{\"return\": [1,", 14), 14);
	close(sv[0]);
	assert_int_equal(qmp_execute(q, "cut", NULL, 1000, &ret, &err), QMP_ERR_CONN);
	assert_string_equal(err.msg, "cut: QEMU closed the connection in the middle of a "
	                    "message (14 bytes received)");
	assert_int_equal(qmp_poll_events(q), 0);
	qmp_free(q);
}

static void
test_connect_errors(void **state)
{
	struct llcd_err err;
	struct qmp *q = qmp_new();
	char longpath[200];
	int sv[2];

	assert_int_equal(qmp_connect(q, "/nonexistent/qmp.sock", 100, &err), -1);
	assert_string_equal(err.msg, "connect to /nonexistent/qmp.sock: No such file or directory");
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(qmp_connect(q, longpath, 100, &err), -1);
	assert_non_null(strstr(err.msg, ": socket path too long"));

	/* a monitor that never greets (another client holds it) */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(qmp_attach(q, sv[1], &err), 0);
	assert_int_equal(qmp_handshake(q, 30, &err), -1);
	assert_string_equal(err.msg, "no QMP greeting within 30 ms (does another client hold "
	                    "the monitor?)");
	close(sv[0]);
	qmp_free(q);
}

/* --- parsers ---------------------------------------------------------- */

/* Both parsers' refusals: the message, and no result. */
static void
test_cpus_parse_errors(void **state)
{
	enum { CPUS, HOTCPUS };         /* query-cpus-fast, query-hotpluggable-cpus */
	static const struct {
		int parser;
		const char *in, *msg;
	} cases[] = {
		{ CPUS, "{}",
		  "query-cpus-fast: reply is not an array" },
		{ CPUS, "[1]",
		  "query-cpus-fast[0]: not an object" },
		{ CPUS, "[{\"thread-id\": 5}]",
		  "query-cpus-fast[0]: no \"cpu-index\"" },
		{ CPUS, "[{\"cpu-index\": 0}]",
		  "query-cpus-fast[0]: no \"thread-id\"" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": \"5\"}]",
		  "query-cpus-fast[0]: \"thread-id\" is not an integer" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 0}]",
		  "query-cpus-fast[0]: \"thread-id\" 0 out of range 1-2147483647" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 99999999999}]",
		  "query-cpus-fast[0]: \"thread-id\" 99999999999 out of range 1-2147483647" },
		{ CPUS, "[{\"cpu-index\": -1, \"thread-id\": 5}]",
		  "query-cpus-fast[0]: \"cpu-index\" -1 out of range 0-1000000" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 5, \"props\": []}]",
		  "query-cpus-fast[0]: \"props\" is not an object" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 5}, "
		  "{\"cpu-index\": 1, \"thread-id\": 6, \"props\": {\"core-id\": -3}}]",
		  "props: query-cpus-fast[1]: \"core-id\" -3 out of range 0-1000000" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 5, \"qom-path\": 1}]",
		  "query-cpus-fast[0]: \"qom-path\" is not a string" },
		{ CPUS, "[{\"cpu-index\": 0, \"thread-id\": 5, \"props\": {\"die-id\": 1.5}}]",
		  "props: query-cpus-fast[0]: \"die-id\" is not an integer" },
		{ HOTCPUS, "null",
		  "query-hotpluggable-cpus: reply is not an array" },
		{ HOTCPUS, "[{\"vcpus-count\": 1}]",
		  "query-hotpluggable-cpus[0]: no \"type\"" },
		{ HOTCPUS, "[{\"type\": \"t\"}]",
		  "query-hotpluggable-cpus[0]: no \"vcpus-count\"" },
		{ HOTCPUS, "[{\"type\": \"t\", \"vcpus-count\": 0}]",
		  "query-hotpluggable-cpus[0]: \"vcpus-count\" 0 out of range 1-1000000" },
		{ HOTCPUS, "[{\"type\": 1, \"vcpus-count\": 1}]",
		  "query-hotpluggable-cpus[0]: \"type\" is not a string" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *o = json_tokener_parse(cases[i].in);
		struct qmp_cpus *c = (void *)1;
		struct qmp_hotcpus *h = (void *)1;
		struct llcd_err err;

		if (cases[i].parser == CPUS) {
			assert_int_equal(qmp_cpus_parse(o, &c, &err), -1);
			assert_null(c);
		} else {
			assert_int_equal(qmp_hotcpus_parse(o, &h, &err), -1);
			assert_null(h);
		}
		assert_string_equal(err.msg, cases[i].msg);
		json_object_put(o);
	}
}

static void
test_cpus_parse_ok(void **state)
{
	struct json_object *o = json_tokener_parse(
		"[{\"cpu-index\": 3, \"thread-id\": 77, \"unknown\": [1],"
		" \"props\": {\"node-id\": 1, \"socket-id\": 2, \"cluster-id\": 4, \"core-id\": 5}}]");
	struct qmp_cpus *c;
	struct llcd_err err;

	assert_int_equal(qmp_cpus_parse(o, &c, &err), 0);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->cpu[0].cpu_index, 3);
	assert_int_equal(c->cpu[0].tid, 77);
	assert_int_equal(c->cpu[0].props.node_id, 1);
	assert_int_equal(c->cpu[0].props.socket_id, 2);
	assert_int_equal(c->cpu[0].props.die_id, -1);
	assert_int_equal(c->cpu[0].props.cluster_id, 4);
	assert_int_equal(c->cpu[0].props.core_id, 5);
	assert_int_equal(c->cpu[0].props.thread_id, -1);
	assert_null(c->cpu[0].qom_path);
	assert_null(c->cpu[0].target);
	qmp_cpus_free(c);
	json_object_put(o);

	o = json_tokener_parse("[]");
	assert_int_equal(qmp_cpus_parse(o, &c, &err), 0);
	assert_int_equal(c->n, 0);
	qmp_cpus_free(c);
	json_object_put(o);
}

static void
test_hotcpus_parse(void **state)
{
	struct json_object *o;
	struct qmp_hotcpus *h;
	struct llcd_err err;

	o = json_tokener_parse("[{\"type\": \"t\", \"vcpus-count\": 2, \"props\": {\"socket-id\": 1}},"
	                       " {\"type\": \"t\", \"vcpus-count\": 2, \"qom-path\": \"/p\"}]");
	assert_int_equal(qmp_hotcpus_parse(o, &h, &err), 0);
	assert_int_equal(h->n, 2);
	assert_int_equal(h->cpu[0].vcpus_count, 2);
	assert_int_equal(h->cpu[0].props.socket_id, 1);
	assert_null(h->cpu[0].qom_path);
	assert_string_equal(h->cpu[1].qom_path, "/p");
	assert_int_equal(h->cpu[1].props.socket_id, -1);
	qmp_hotcpus_free(h);
	json_object_put(o);
}

/* A reply of the wrong shape to a typed helper: QMP_ERR_REPLY, usable. */
static void
test_typed_bad_reply(void **state)
{
	struct qmp_cpus *c;
	struct qmp_hotcpus *h;
	struct llcd_err err;
	int sv[2];
	struct qmp *q = socket_client(sv);

	assert_int_equal(qmp_handshake(q, 1000, &err), 0);
	/* a reply to a request not sent yet would be an unknown id: write
	 * each reply once the client has read the previous one */
	qemu_says(sv[0], "{\"return\": {\"not\": \"a list\"}, \"id\": 2}\r\n");
	assert_int_equal(qmp_query_cpus_fast(q, 1000, &c, &err), QMP_ERR_REPLY);
	assert_string_equal(err.msg, "query-cpus-fast: reply is not an array");
	assert_null(c);
	qemu_says(sv[0], "{\"return\": [], \"id\": 3}\r\n");
	assert_int_equal(qmp_query_hotpluggable_cpus(q, 1000, &h, &err), QMP_OK);
	assert_int_equal(h->n, 0);
	qmp_hotcpus_free(h);
	close(sv[0]);
	qmp_free(q);
}

TEST_MAIN(
	cmocka_unit_test(test_free_null),
	cmocka_unit_test(test_out_peek_empty),
	cmocka_unit_test(test_greeting_errors),
	cmocka_unit_test(test_many_and_split),
	cmocka_unit_test(test_pretty),
	cmocka_unit_test(test_oversized),
	cmocka_unit_test(test_invalid_json),
	cmocka_unit_test(test_deep_nesting),
	cmocka_unit_test(test_bad_ids),
	cmocka_unit_test(test_eof),
	cmocka_unit_test(test_send_errors),
	cmocka_unit_test(test_event_overflow),
	cmocka_unit_test(test_socket_timeout_and_close),
	cmocka_unit_test(test_connect_errors),
	cmocka_unit_test(test_cpus_parse_errors),
	cmocka_unit_test(test_cpus_parse_ok),
	cmocka_unit_test(test_hotcpus_parse),
	cmocka_unit_test(test_typed_bad_reply))
