// SPDX-License-Identifier: GPL-2.0-or-later
/* test_guestchan.c - llcd's end of the guest channel: every rejection of
 * the report parser with its exact message, name sanitising, the socket
 * path and channel XML, and the channel itself against a real UNIX socket
 * (the test plays libvirt's bound socket) with a fake clock: reports and
 * their ageing, over-long lines, rate limit, throttle, back-off and its
 * doubling, reconnect, and bounded memory and reads under a flood. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestchan.h"
#include "guestproto.h"
#include "test_main.h"

#define S 1000000000ull

static const char good[] =
	"{\"v\":1,\"t\":12.5,\"seq\":3,\"ncpus\":8,\"nllcs\":2,\"dropped\":0,\"procs\":["
	"{\"name\":\"spin\",\"pid\":100,\"threads\":5,\"busy_threads\":4,\"cpu_share\":3.9,"
	"\"vcpus\":[0,2,4,6],\"llcs\":[0,1]}]}";

static int
parse(const char *line, char *msg)
{
	struct policy_hot_report out[GUESTPROTO_MAX_PROCS];
	struct llcd_err err = { "" };
	int n = guestchan_parse(line, strlen(line), 8, GUESTPROTO_MAX_PROCS, out, NULL, &err);

	strcpy(msg, err.msg);
	return n;
}

static void
test_parse_good(void **state)
{
	struct policy_hot_report out[GUESTPROTO_MAX_PROCS];
	struct guestchan_meta meta;
	struct llcd_err err;
	char list[64];

	assert_int_equal(guestchan_parse(good, strlen(good), 8, 16, out, &meta, &err), 1);
	assert_string_equal(out[0].name, "spin");
	assert_int_equal(out[0].pid, 100);
	cpuset_format(&out[0].vcpus, list, sizeof(list));
	assert_string_equal(list, "0,2,4,6");
	assert_int_equal(meta.version, 1);
	assert_int_equal(meta.seq, 3);
	assert_int_equal(meta.dropped, 0);
	/* empty report, unknown keys ignored, trailing \r accepted */
	assert_int_equal(guestchan_parse("{\"v\":1,\"procs\":[],\"future\":{\"x\":1}}\r", 35, 8, 16, out, NULL, &err), 0);
	/* not NUL-terminated: only len bytes are read */
	assert_int_equal(guestchan_parse("{\"v\":1,\"procs\":[]}garbage", 18, 8, 16, out, NULL, &err), 0);
	/* names: sanitised, escapes decoded first, truncated, empty -> pid */
	assert_int_equal(guestchan_parse("{\"v\":1,\"procs\":[{\"name\":\"a b/\\u00e9\\u0000x\",\"pid\":7,\"vcpus\":[1]},"
	    "{\"name\":\"\",\"pid\":8,\"vcpus\":[]},"
	    "{\"name\":\"0123456789012345678901234567890123456789\",\"pid\":9,\"vcpus\":[7]}]}",
	    strlen("{\"v\":1,\"procs\":[{\"name\":\"a b/\\u00e9\\u0000x\",\"pid\":7,\"vcpus\":[1]},"
	    "{\"name\":\"\",\"pid\":8,\"vcpus\":[]},"
	    "{\"name\":\"0123456789012345678901234567890123456789\",\"pid\":9,\"vcpus\":[7]}]}"),
	    8, 16, out, NULL, &err), 3);
	assert_string_equal(out[0].name, "a_b____x");
	assert_string_equal(out[1].name, "pid8");
	assert_string_equal(out[2].name, "0123456789012345678901234567890");
}

static void
test_parse_rejections(void **state)
{
	char m[LLCD_ERR_MSG], big[8192];
	static const struct { const char *line, *msg; } cases[] = {
		{ "", "empty line" },
		{ "{\"v\":1,", "invalid JSON: unexpected end of line" },
		{ "{'v':1}", "invalid JSON: single quote outside a string" },
		{ "{\"v\":1,\"procs\":[]} {}", "invalid JSON: unexpected character" },
		{ "[1,2]", "not a JSON object" },
		{ "42", "not a JSON object" },
		{ "{\"procs\":[]}", "\"v\" (protocol version) missing or not an integer" },
		{ "{\"v\":\"1\",\"procs\":[]}", "\"v\" (protocol version) missing or not an integer" },
		{ "{\"v\":2,\"procs\":[]}", "unsupported protocol version 2 (llcd speaks 1)" },
		{ "{\"v\":1,\"t\":\"x\",\"procs\":[]}", "\"t\" not a number" },
		{ "{\"v\":1,\"seq\":-1,\"procs\":[]}", "\"seq\" not a non-negative integer" },
		{ "{\"v\":1,\"dropped\":1.5,\"procs\":[]}", "\"dropped\" not a non-negative integer" },
		{ "{\"v\":1}", "\"procs\" missing or not an array" },
		{ "{\"v\":1,\"procs\":{}}", "\"procs\" missing or not an array" },
		{ "{\"v\":1,\"procs\":[1]}", "process 0: not an object" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"vcpus\":[]}]}",
		  "process 0: \"pid\" missing or not an integer in 1..4194304" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":0,\"vcpus\":[]}]}",
		  "process 0: \"pid\" missing or not an integer in 1..4194304" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":4194305,\"vcpus\":[]}]}",
		  "process 0: \"pid\" missing or not an integer in 1..4194304" },
		{ "{\"v\":1,\"procs\":[{\"pid\":1,\"vcpus\":[]}]}",
		  "process 0: \"name\" missing, not a string or longer than 255 bytes" },
		{ "{\"v\":1,\"procs\":[{\"name\":5,\"pid\":1,\"vcpus\":[]}]}",
		  "process 0: \"name\" missing, not a string or longer than 255 bytes" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"threads\":-1,\"vcpus\":[]}]}",
		  "process 0: \"threads\" not an integer in 0..4194304" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"busy_threads\":\"x\",\"vcpus\":[]}]}",
		  "process 0: \"busy_threads\" not an integer in 0..4194304" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"cpu_share\":\"x\",\"vcpus\":[]}]}",
		  "process 0: \"cpu_share\" not a number" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"cpu_share\":-0.5,\"vcpus\":[]}]}",
		  "process 0: \"cpu_share\" not in 0..4096" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"cpu_share\":1e9,\"vcpus\":[]}]}",
		  "process 0: \"cpu_share\" not in 0..4096" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"llcs\":3,\"vcpus\":[]}]}",
		  "process 0: \"llcs\" not an array of at most 8 entries (the domain's vCPUs)" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"llcs\":[0,1,2,3,4,5,6,7,8],\"vcpus\":[]}]}",
		  "process 0: \"llcs\" not an array of at most 8 entries (the domain's vCPUs)" },
		{ "{\"v\":1,\"t\":NaN,\"procs\":[]}", "\"t\" not a finite number of seconds (0 or more)" },
		{ "{\"v\":1,\"t\":Infinity,\"procs\":[]}", "\"t\" not a finite number of seconds (0 or more)" },
		{ "{\"v\":1,\"t\":1e999,\"procs\":[]}", "\"t\" not a finite number of seconds (0 or more)" },
		{ "{\"v\":1,\"t\":-1,\"procs\":[]}", "\"t\" not a finite number of seconds (0 or more)" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"llcs\":[0,\"x\"],\"vcpus\":[]}]}",
		  "process 0: \"llcs\" entry 1 not an integer" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1}]}",
		  "process 0: \"vcpus\" missing or not an array" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[0,1,2,3,4,5,6,7,0]}]}",
		  "process 0: 9 vCPUs listed, the domain has 8" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[0,\"1\"]}]}",
		  "process 0: vCPU entry 1 not an integer" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[0,8]}]}",
		  "process 0: vCPU 8 out of range (the domain has 8 vCPUs)" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[-1]}]}",
		  "process 0: vCPU -1 out of range (the domain has 8 vCPUs)" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[99999999999999999999]}]}",
		  "process 0: vCPU 9223372036854775807 out of range (the domain has 8 vCPUs)" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[]},{\"name\":\"b\",\"pid\":1,\"vcpus\":[]}]}",
		  "process 1: pid 1 listed twice" },
		{ "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[[[0]]]}]}",
		  "invalid JSON: nesting too deep" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = parse(cases[i].line, m);

		if (n != -1 || strcmp(m, cases[i].msg) != 0)
			fail_msg("line %s: got %d \"%s\", want \"%s\"", cases[i].line, n, m, cases[i].msg);
	}
	/* 17 processes */
	strcpy(big, "{\"v\":1,\"procs\":[");
	for (int i = 0; i < 17; i++)
		sprintf(big + strlen(big), "%s{\"name\":\"p\",\"pid\":%d,\"vcpus\":[]}", i ? "," : "", i + 1);
	strcat(big, "]}");
	assert_int_equal(parse(big, m), -1);
	assert_string_equal(m, "too many processes (17, limit 16)");
	/* 1,500 entries in "llcs" of a guest of 8 vCPUs: refused before json-c
	 * makes an object of each (165 us a line) */
	strcpy(big, "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[0],\"llcs\":[0");
	for (int i = 1; i < 1500; i++)
		strcat(big, ",0");
	strcat(big, "]}]}");
	assert_true(strlen(big) < GUESTPROTO_MAX_LINE);
	assert_int_equal(parse(big, m), -1);
	assert_string_equal(m, "an array of more than 17 entries (the domain has 8 vCPUs, a report at most 16 processes)");
	/* a 256-byte name */
	snprintf(big, sizeof(big), "{\"v\":1,\"procs\":[{\"name\":\"%0256d\",\"pid\":1,\"vcpus\":[]}]}", 0);
	assert_int_equal(parse(big, m), -1);
	assert_string_equal(m, "process 0: \"name\" missing, not a string or longer than 255 bytes");
	/* a NUL byte */
	{
		struct policy_hot_report out[1];
		struct llcd_err err;

		assert_int_equal(guestchan_parse("{\"v\":1,\0\"procs\":[]}", 19, 8, 1, out, NULL, &err), -1);
		assert_string_equal(err.msg, "line contains a NUL byte");
	}
}

static void
test_names_xml(void **state)
{
	char buf[512];
	struct llcd_err err;

	assert_int_equal(guestchan_sock_path("/run/llcd/guest", "4b5c-9a", buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "/run/llcd/guest/4b5c-9a.sock");
	assert_int_equal(guestchan_sock_path("/run/llcd/guest", "../x y", buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "/run/llcd/guest/_._x_y.sock");
	memset(buf, 'd', 101);
	buf[101] = '\0';
	{
		char out[512];

		assert_int_equal(guestchan_sock_path(buf, "x", out, sizeof(out), &err), -1);
		assert_non_null(strstr(err.msg, "/x.sock is longer than 107 bytes"));
		buf[100] = '\0';
		assert_int_equal(guestchan_sock_path(buf, "x", out, sizeof(out), &err), 0);
	}
	assert_int_equal(guestchan_channel_xml("/run/llcd/guest/a'b&.sock", buf, sizeof(buf), &err) > 0, 1);
	assert_string_equal(buf,
	    "<channel type='unix'>\n"
	    "  <source mode='bind' path='/run/llcd/guest/a&apos;b&amp;.sock'/>\n"
	    "  <target type='virtio' name='org.llcd.guest.0'/>\n"
	    "</channel>\n");
	assert_int_equal(guestchan_channel_xml("/x", buf, 20, &err), -1);
	assert_string_equal(err.msg, "guest channel XML does not fit 20 bytes");
}

/* ---- the channel against a listening socket ---------------------------- */

struct srv {
	char dir[64], path[96];
	int lfd, peer;
};

static void
srv_up(struct srv *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(s->dir, "/tmp/test_guestchan.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/ch.sock", s->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s->lfd, 4), 0);
	s->peer = -1;
}

static void
srv_accept(struct srv *s)
{
	if (s->peer >= 0)
		close(s->peer);
	s->peer = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(s->peer >= 0);
	fcntl(s->peer, F_SETFL, O_NONBLOCK);
}

static void
srv_down(struct srv *s)
{
	if (s->peer >= 0)
		close(s->peer);
	close(s->lfd);
	unlink(s->path);
	rmdir(s->dir);
}

static void
send_str(struct srv *s, const char *str)
{
	assert_int_equal(write(s->peer, str, strlen(str)), (ssize_t)strlen(str));
}

static void
test_channel_reports(void **state)
{
	struct srv s;
	struct guestchan *c;
	struct guestchan_stats st;
	struct policy_hot_report rep[16];
	uint64_t t = 1000 * S;
	char line[8192];

	srv_up(&s);
	assert_null(guestchan_new("d", 0, s.path, NULL));
	assert_null(guestchan_new("d", 8, "/a/path/that/is/much/longer/than/a/unix/socket/address/can/be/"
	                          "because/sun_path/has/only/one/hundred/and/eight/bytes", NULL));
	c = guestchan_new("d", 8, s.path, NULL);
	assert_non_null(c);
	assert_int_equal(guestchan_fd(c), -1);
	assert_int_equal(guestchan_handle(c, t), GUESTCHAN_EV_CONNECTED);
	srv_accept(&s);
	assert_true(guestchan_fd(c) >= 0);
	assert_int_equal(guestchan_next_ns(c), UINT64_MAX);

	/* a line in two pieces */
	send_str(&s, "{\"v\":1,\"procs\":[{\"name\":\"spin\",\"pid\":100,");
	assert_int_equal(guestchan_handle(c, t), 0);
	send_str(&s, "\"vcpus\":[0,4]}]}\n");
	assert_int_equal(guestchan_handle(c, t), GUESTCHAN_EV_REPORT);
	assert_int_equal(guestchan_reports(c, rep, 16, t), 1);
	assert_string_equal(rep[0].name, "spin");
	assert_int_equal(guestchan_reports(c, rep, 0, t), 0);

	/* a bad line keeps the last good report */
	send_str(&s, "{\"v\":1,\"procs\":[{\"name\":\"x\",\"pid\":1,\"vcpus\":[8]}]}\n");
	assert_int_equal(guestchan_handle(c, t + S), GUESTCHAN_EV_BAD);
	guestchan_stats(c, &st);
	assert_string_equal(st.last_error, "process 0: vCPU 8 out of range (the domain has 8 vCPUs)");
	assert_int_equal(st.bad, 1);
	assert_int_equal(guestchan_reports(c, rep, 16, t + S), 1);
	/* ... until it ages out */
	assert_int_equal(guestchan_reports(c, rep, 16, t + 10 * S), 1);
	assert_int_equal(guestchan_reports(c, rep, 16, t + 10 * S + 1), 0);

	/* an over-long line is dropped up to its newline, once */
	memset(line, 'x', sizeof(line));
	memcpy(line + 5000, "\n", 1);
	assert_int_equal(write(s.peer, line, 5001), 5001);
	send_str(&s, good);
	send_str(&s, "\n");
	assert_int_equal(guestchan_handle(c, t + 11 * S), GUESTCHAN_EV_BAD | GUESTCHAN_EV_REPORT);
	guestchan_stats(c, &st);
	assert_int_equal(st.too_long, 1);
	assert_int_equal(st.bad, 2);
	assert_string_equal(st.last_error, "line too long (more than 4096 bytes)");
	assert_int_equal(guestchan_reports(c, rep, 16, t + 11 * S), 1);
	assert_int_equal(rep[0].pid, 100);

	/* the guest goes away: disconnected, retried after reconnect_ns */
	close(s.peer);
	s.peer = -1;
	assert_int_equal(guestchan_handle(c, t + 12 * S), GUESTCHAN_EV_DISCONNECTED);
	guestchan_stats(c, &st);
	assert_int_equal(st.state, GUESTCHAN_DISCONNECTED);
	assert_string_equal(st.last_error, "connection closed");
	assert_int_equal(guestchan_next_ns(c), t + 14 * S);
	assert_int_equal(guestchan_handle(c, t + 13 * S), 0);
	assert_int_equal(guestchan_handle(c, t + 14 * S), GUESTCHAN_EV_CONNECTED);
	srv_accept(&s);
	guestchan_free(c);
	guestchan_free(NULL);

	/* an absent socket: retried, never blocking */
	srv_down(&s);
	c = guestchan_new("d", 8, s.path, NULL);
	assert_int_equal(guestchan_handle(c, t), 0);
	guestchan_stats(c, &st);
	assert_int_equal(st.state, GUESTCHAN_DISCONNECTED);
	assert_int_equal(st.next_ns, t + 2 * S);
	guestchan_free(c);
}

static void
test_channel_rate_backoff(void **state)
{
	struct srv s;
	struct guestchan *c;
	struct guestchan_stats st;
	uint64_t t = 1000 * S;
	char lines[64 * 80] = "";

	srv_up(&s);
	c = guestchan_new("d", 8, s.path, NULL);
	guestchan_handle(c, t);
	srv_accept(&s);
	/* 30 good lines at once: 20 (the burst) are read, then throttled */
	for (int i = 0; i < 30; i++)
		strcat(lines, "{\"v\":1,\"procs\":[]}\n");
	send_str(&s, lines);
	assert_int_equal(guestchan_handle(c, t), GUESTCHAN_EV_REPORT | GUESTCHAN_EV_THROTTLED);
	guestchan_stats(c, &st);
	assert_int_equal(st.reports, 20);
	assert_int_equal(st.throttles, 1);
	assert_int_equal(st.state, GUESTCHAN_THROTTLED);
	assert_int_equal(guestchan_fd(c), -1);
	assert_int_equal(st.next_ns, t + S / 10 + 1);
	/* 1 s later: 10 tokens, 10 more lines */
	assert_int_equal(guestchan_handle(c, t + S) & GUESTCHAN_EV_REPORT, GUESTCHAN_EV_REPORT);
	guestchan_stats(c, &st);
	assert_int_equal(st.reports, 30);
	assert_int_equal(st.state, GUESTCHAN_CONNECTED);

	/* garbage: each line is a strike (so was the throttle; 0.2 strikes
	 * were forgiven in 2 s); the 10th bad line closes for 30 s */
	for (int i = 0; i < 9; i++)
		send_str(&s, "garbage\n");
	assert_int_equal(guestchan_handle(c, t + 2 * S), GUESTCHAN_EV_BAD);
	guestchan_stats(c, &st);
	assert_int_equal(st.bad, 9);
	assert_int_equal(st.state, GUESTCHAN_CONNECTED);
	send_str(&s, "garbage\n");
	assert_int_equal(guestchan_handle(c, t + 2 * S),
	                 GUESTCHAN_EV_BAD | GUESTCHAN_EV_BACKOFF | GUESTCHAN_EV_DISCONNECTED);
	guestchan_stats(c, &st);
	assert_int_equal(st.state, GUESTCHAN_BACKOFF);
	assert_int_equal(st.backoffs, 1);
	assert_int_equal(st.next_ns, t + 32 * S);
	assert_string_equal(st.last_error, "closed for 30 s: abuse persists (10 bad lines, 1 throttles)");
	assert_int_equal(guestchan_reports(c, NULL, 0, t + 2 * S), 0);
	assert_int_equal(guestchan_handle(c, t + 31 * S), 0);         /* still backing off */
	assert_int_equal(guestchan_handle(c, t + 32 * S), GUESTCHAN_EV_CONNECTED);
	srv_accept(&s);
	/* abuse again: 60 s this time, and the doubling stops at 600 s */
	for (int round = 0; round < 6; round++) {
		uint64_t want[] = { 60, 120, 240, 480, 600, 600 };

		for (int i = 0; i < 11; i++)
			send_str(&s, "{\n");
		assert_true(guestchan_handle(c, t + 40 * S) & GUESTCHAN_EV_BACKOFF);
		guestchan_stats(c, &st);
		assert_int_equal(st.next_ns, t + 40 * S + want[round] * S);
		t += want[round] * S;
		assert_int_equal(guestchan_handle(c, t + 40 * S), GUESTCHAN_EV_CONNECTED);
		srv_accept(&s);
	}
	/* a connection that behaves for 10 min earns the short back-off again */
	t += 40 * S;
	for (int i = 0; i < 60; i++) {
		send_str(&s, "{\"v\":1,\"procs\":[]}\n");
		assert_int_equal(guestchan_handle(c, t + (uint64_t)i * 10 * S + 10 * S), GUESTCHAN_EV_REPORT);
	}
	t += 610 * S;
	for (int i = 0; i < 11; i++)
		send_str(&s, "[]\n");
	assert_true(guestchan_handle(c, t) & GUESTCHAN_EV_BACKOFF);
	guestchan_stats(c, &st);
	assert_int_equal(st.next_ns, t + 30 * S);
	guestchan_free(c);
	srv_down(&s);
}

static void
test_channel_flood_bounded(void **state)
{
	struct srv s;
	struct guestchan *c;
	struct guestchan_stats st;
	uint64_t t = 1000 * S;
	char chunk[65536];
	size_t mem0;

	srv_up(&s);
	c = guestchan_new("d", 128, s.path, NULL);
	guestchan_handle(c, t);
	srv_accept(&s);
	guestchan_stats(c, &st);
	mem0 = st.mem_bytes;
	assert_true(mem0 < 16 * 1024);
	/* no newline at all, as fast as the socket takes it */
	memset(chunk, 'A', sizeof(chunk));
	for (int i = 0; i < 4; i++)
		(void)!write(s.peer, chunk, sizeof(chunk));
	guestchan_handle(c, t);
	guestchan_stats(c, &st);
	/* one call reads at most max_read (64 KiB) ... */
	assert_int_equal(st.bytes, 64 * 1024);
	assert_int_equal(st.too_long, 1);
	assert_int_equal(st.mem_bytes, mem0);
	assert_int_equal(st.state, GUESTCHAN_CONNECTED);
	/* ... and over time what the tokens allow (20 x 4 KiB at once) */
	guestchan_handle(c, t);
	guestchan_stats(c, &st);
	assert_int_equal(st.bytes, 20 * 4096 + 4096);
	assert_int_equal(st.state, GUESTCHAN_THROTTLED);
	/* keep flooding with tiny valid lines: throttles pile up into back-off */
	for (int k = 1; k < 40 && st.state != GUESTCHAN_BACKOFF; k++) {
		for (int i = 0; i < 64; i++)
			(void)!write(s.peer, "\n", 1);
		guestchan_handle(c, t + (uint64_t)k * S / 5);
		guestchan_stats(c, &st);
	}
	assert_int_equal(st.state, GUESTCHAN_BACKOFF);
	assert_true(st.lines + st.too_long <= 20 + 40 * 2 + 1);
	assert_int_equal(st.mem_bytes, mem0);
	guestchan_free(c);
	srv_down(&s);
}


/* Which channels llcd connects to: only mode bind, only
 * below libvirt's channel directory or guest-channel-dir (symbolic links in
 * the directory resolved), never a file or a symbolic link in place of the
 * socket; the XML's mode is read (libvirt's default bind when absent). */
static void
test_channel_allowed(void **state)
{
	char base[] = "/tmp/llcd-chan-XXXXXX", lv[128], own[128], other[128], link[128], p[256], why[512], mode[16];

	assert_non_null(mkdtemp(base));
	snprintf(lv, sizeof(lv), "%s/libvirt", base);
	snprintf(own, sizeof(own), "%s/own", base);
	snprintf(other, sizeof(other), "%s/other", base);
	snprintf(link, sizeof(link), "%s/libvirt/escape", base);
	assert_int_equal(mkdir(lv, 0755), 0);
	assert_int_equal(mkdir(own, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(symlink(other, link), 0);      /* a directory link out */

	snprintf(p, sizeof(p), "%s/ch.sock", lv);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "%s/ch.sock", own);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), 0);
	/* connect mode: llcd would be the listener's peer of someone else */
	assert_int_equal(guestchan_channel_allowed(p, "connect", lv, own, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "source mode 'connect'"));
	/* elsewhere, directly or through a link below an allowed directory */
	snprintf(p, sizeof(p), "%s/ch.sock", other);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "outside libvirt's channel directory"));
	snprintf(p, sizeof(p), "%s/ch.sock", link);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "outside libvirt's channel directory"));
	snprintf(p, sizeof(p), "%s/../other/ch.sock", lv);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), -1);
	/* a symbolic link where the socket should be */
	char target[256];
	snprintf(target, sizeof(target), "%s/real.sock", other);
	snprintf(p, sizeof(p), "%s/ch.sock", lv);
	assert_int_equal(symlink(target, p), 0);
	assert_int_equal(guestchan_channel_allowed(p, "bind", lv, own, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "a symbolic link, not a socket"));
	unlink(p);
	/* the XML's mode */
	const char *x1 = "<domain><devices><channel type='unix'><source mode='connect' path='/x/y.sock'/>"
	    "<target type='virtio' name='org.llcd.guest.0'/></channel></devices></domain>";
	assert_int_equal(guestchan_channel_from_xml(x1, strlen(x1), p, sizeof(p), mode, sizeof(mode)), 0);
	assert_string_equal(mode, "connect");
	const char *x2 = "<domain><devices><channel type='unix'><source path='/x/y.sock'/>"
	    "<target type='virtio' name='org.llcd.guest.0'/></channel></devices></domain>";
	assert_int_equal(guestchan_channel_from_xml(x2, strlen(x2), p, sizeof(p), mode, sizeof(mode)), 0);
	assert_string_equal(mode, "bind");
	unlink(link);
	rmdir(lv);
	rmdir(own);
	rmdir(other);
	rmdir(base);
}

/* A channel directory others may write is refused (the socket there
 * could be anyone's), and a socket swapped for a symbolic link is never
 * followed: llcd connected to whatever the path led to. */
static void
test_channel_hostile_dir(void **state)
{
	struct srv s, other;
	struct guestchan *c;
	struct guestchan_stats st;
	char want[300], link[128];
	uint64_t t = 1000 * S;

	srv_up(&s);
	srv_up(&other);
	assert_int_equal(chmod(s.dir, 0777), 0);
	c = guestchan_new("d", 8, s.path, NULL);
	assert_int_equal(guestchan_handle(c, t), 0);
	guestchan_stats(c, &st);
	assert_int_equal(st.connects, 0);
	snprintf(want, sizeof(want), "directory %s is writable by others (mode 0777, owner uid 0, group 0): llcd, as root, "
	    "does not use files in it (chmod go-w): not connected", s.dir);
	assert_string_equal(st.last_error, want);
	/* 0755 again, the socket swapped for a link to another's: refused */
	assert_int_equal(chmod(s.dir, 0755), 0);
	snprintf(link, sizeof(link), "%s.new", s.path);
	assert_int_equal(symlink(other.path, link), 0);
	assert_int_equal(rename(link, s.path), 0);
	assert_int_equal(guestchan_handle(c, t + 10 * S), 0);
	guestchan_stats(c, &st);
	assert_int_equal(st.connects, 0);
	snprintf(want, sizeof(want), "%s is a symbolic link, not a socket: not connected", s.path);
	assert_string_equal(st.last_error, want);
	struct pollfd p = { .fd = other.lfd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);     /* nobody knocked */
	guestchan_free(c);
	srv_down(&s);
	srv_down(&other);
}

TEST_MAIN(
	cmocka_unit_test(test_parse_good),
	cmocka_unit_test(test_channel_allowed),
	cmocka_unit_test(test_parse_rejections),
	cmocka_unit_test(test_names_xml),
	cmocka_unit_test(test_channel_reports),
	cmocka_unit_test(test_channel_rate_backoff),
	cmocka_unit_test(test_channel_flood_bounded),
	cmocka_unit_test(test_channel_hostile_dir))
