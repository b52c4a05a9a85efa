// SPDX-License-Identifier: GPL-2.0-or-later
/* test_httpd.c - the metrics endpoint (agent/daemon/httpd.c) against hostile
 * local clients on the loopback (any user may connect to 127.0.0.1): a
 * slowloris on every slot and every address, one that keeps reconnecting,
 * a reader that never finishes, a flood of connections over the limit.
 * Real sockets, real libmicrohttpd, the shipped limits unless a test says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "httpd.h"
#include "log.h"
#include "test_main.h"

/* A TCP connection to port from 127.0.0.<host>; -1 when refused. */
static int
dial(unsigned port, int host)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	src.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
	dst.sin_addr.s_addr = htonl(0x7f000001u);
	dst.sin_port = htons((uint16_t)port);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A scrape from 127.0.0.<host> as Prometheus makes it (the request at
 * once, the reply read whole): true when it got 200 and the exposition. */
static bool
scrape(unsigned port, int host, int timeout_ms)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Prometheus/2.42.0\r\n"
	                          "Accept: text/plain\r\nConnection: close\r\n\r\n";
	char buf[8192];
	size_t have = 0;
	int fd = dial(port, host);
	uint64_t end = llcd_mono_ns() + (uint64_t)timeout_ms * 1000000ull;

	if (fd < 0)
		return false;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return false;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = llcd_mono_ns();
		if (now >= end || poll(&p, 1, (int)((end - now) / 1000000) + 1) != 1)
			break;
		ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have == sizeof(buf) - 1)
			break;
	}
	buf[have] = '\0';
	close(fd);
	return strncmp(buf, "HTTP/1.1 200 OK", 15) == 0 && strstr(buf, "llcd_test_metric 1") != NULL;
}

/* ---- a slowloris that keeps every slot ----------------------------------- */

struct loris {
	unsigned port;
	int n, hosts;                   /* n connections over 127.0.0.1 .. hosts */
	int byte_ms;                    /* one header byte this often */
	atomic_int stop;
	atomic_int reconnects;
	pthread_t th;
};

static void *
loris_main(void *arg)
{
	static const char hdr[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
	struct loris *l = arg;
	int fd[64], off[64];

	for (int i = 0; i < l->n; i++) {
		fd[i] = dial(l->port, 1 + i % l->hosts);
		off[i] = 0;
	}
	while (!l->stop) {
		for (int i = 0; i < l->n && !l->stop; i++) {
			char c;
			/* cut (or refused): connect again at once, as an attacker would */
			if (fd[i] >= 0 && recv(fd[i], &c, 1, MSG_DONTWAIT) == 0) {
				close(fd[i]);
				fd[i] = -1;
			}
			if (fd[i] < 0) {
				fd[i] = dial(l->port, 1 + i % l->hosts);
				off[i] = 0;
				l->reconnects++;
				continue;
			}
			if (off[i] < (int)sizeof(hdr) - 1 && send(fd[i], hdr + off[i], 1, MSG_NOSIGNAL) == 1)
				off[i]++;
		}
		usleep((useconds_t)l->byte_ms * 1000);
	}
	for (int i = 0; i < l->n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return NULL;
}

static void
loris_start(struct loris *l, unsigned port, int n, int hosts, int byte_ms)
{
	memset(l, 0, sizeof(*l));
	l->port = port;
	l->n = n;
	l->hosts = hosts;
	l->byte_ms = byte_ms;
	assert_int_equal(pthread_create(&l->th, NULL, loris_main, l), 0);
}

static void
loris_stop(struct loris *l)
{
	l->stop = 1;
	pthread_join(l->th, NULL);
}

static struct httpd *
start(const struct httpd_limits *lim)
{
	struct llcd_err err;
	struct httpd *h = lim ? httpd_new_limits("127.0.0.1:0", lim, &err) : httpd_new("127.0.0.1:0", &err);

	if (h == NULL)
		fail_msg("httpd: %s", err.msg);
	httpd_publish(h, "# TYPE llcd_test_metric gauge\nllcd_test_metric 1\n", llcd_mono_ns());
	return h;
}

/* Every slot held by slowloris connections (16 over four addresses, four
 * of them from 127.0.0.1, one header byte every 250 ms, reconnecting the
 * moment one is cut), and Prometheus on 127.0.0.1 still gets every scrape
 * (0 of 12 in 120 s): a new connection takes the slot of
 * the one that has owed its request longest. */
static void
test_slowloris_every_slot(void **state)
{
	struct httpd *h = start(NULL);
	struct httpd_stats st;
	struct loris l;
	int ok = 0;

	log_set_sink(log_discard, NULL);
	loris_start(&l, httpd_port(h), HTTPD_MAX_CLIENTS, HTTPD_MAX_CLIENTS / HTTPD_MAX_PER_IP, 250);
	usleep(1500000);
	httpd_get_stats(h, &st);
	assert_int_equal(st.connections, HTTPD_MAX_CLIENTS);     /* every slot is the attacker's */
	for (int i = 0; i < 12; i++) {
		ok += scrape(httpd_port(h), 1, 2000);
		usleep(300000);
	}
	loris_stop(&l);
	httpd_get_stats(h, &st);
	print_message("scrapes: %d of 12 with every slot under a slowloris (%llu cut to make room, %d reconnects)\n",
	    ok, (unsigned long long)st.evicted, (int)l.reconnects);
	assert_true(ok >= 11);
	assert_true(st.evicted >= 11);
	httpd_free(h);
	log_set_sink(NULL, NULL);
}

/* A connection that sends one header byte now and then is cut at the
 * header deadline (libmicrohttpd's own timeout starts again with each
 * byte, and such a connection stayed for ever). */
static void
test_header_deadline(void **state)
{
	struct httpd_limits lim;
	struct httpd_stats st;

	httpd_limits_default(&lim);
	lim.header_ms = 800;
	struct httpd *h = start(&lim);
	int fd = dial(httpd_port(h), 1);
	uint64_t t0 = llcd_mono_ns();
	bool closed = false;
	char c;
	assert_true(fd >= 0);
	for (int i = 0; i < 40 && !closed; i++) {
		if (send(fd, "G", 1, MSG_NOSIGNAL) != 1)
			closed = true;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 200) == 1 && recv(fd, &c, 1, 0) <= 0)
			closed = true;
	}
	double s = (double)(llcd_mono_ns() - t0) / 1e9;
	print_message("a byte every 200 ms: cut after %.2f s (header deadline 0.8 s)\n", s);
	assert_true(closed);
	assert_true(s < 3.0);
	close(fd);
	httpd_get_stats(h, &st);
	assert_int_equal(st.header_timeouts, 1);
	/* a request sent at once is served */
	assert_true(scrape(httpd_port(h), 1, 2000));
	httpd_free(h);
}

/* A client that reads its reply a little at a time is cut at the request
 * deadline (each byte read restarted libmicrohttpd's timeout). */
static void
test_reply_deadline(void **state)
{
	struct httpd_limits lim;
	struct httpd_stats st;
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	size_t big = 16u << 20;
	char *text = malloc(big + 1), buf[512];

	httpd_limits_default(&lim);
	lim.request_ms = 1000;
	struct httpd *h = start(&lim);
	memset(text, '#', big);
	text[big] = '\0';
	httpd_publish(h, text, llcd_mono_ns());
	free(text);
	int fd = dial(httpd_port(h), 1), rcvbuf = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
	uint64_t t0 = llcd_mono_ns();
	double cut_s = -1;
	ssize_t n = 1;
	size_t got = 0;
	while (n > 0 && llcd_mono_ns() - t0 < 10000000000ull) {
		usleep(100000);
		n = recv(fd, buf, sizeof(buf), 0);     /* 512 bytes every 100 ms */
		got += n > 0 ? (size_t)n : 0;
		httpd_get_stats(h, &st);
		if (cut_s < 0 && st.request_timeouts == 1)
			cut_s = (double)(llcd_mono_ns() - t0) / 1e9;
	}
	double s = (double)(llcd_mono_ns() - t0) / 1e9;
	close(fd);
	/* what the client's kernel had received before the cut is still
	 * read; nothing after it */
	print_message("a slow reader: cut after %.2f s (request deadline 1 s); %zu bytes read, its end after %.2f s\n",
	    cut_s, got, s);
	assert_true(cut_s > 0 && cut_s < 3.0);
	assert_int_equal(st.request_timeouts, 1);
	assert_true(n <= 0);
	assert_true(got < (1u << 20));
	httpd_free(h);
}

static atomic_int nlog;

static void
count_log(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)arg;
	if (strstr(msg, "metrics-listen") != NULL)
		nlog++;
}

/* 2,000 connections over the per-address limit: refused, and logged a
 * few times with the count of the rest (every refused
 * connection was a warning, 141,646 lines in 10 s). The four slots of
 * the address are held by clients that never read a large reply (they
 * give their slot to no newcomer until the request deadline). */
static void
test_refused_flood(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct httpd_limits lim;
	struct httpd_stats st;
	int hold[HTTPD_MAX_PER_IP];
	size_t big = 16u << 20;
	char *text = malloc(big + 1);

	httpd_limits_default(&lim);
	lim.request_ms = 60000;
	lim.idle_ms = 60000;            /* libmicrohttpd's own timeout: no write progress */
	struct httpd *h = start(&lim);
	memset(text, '#', big);
	text[big] = '\0';
	httpd_publish(h, text, llcd_mono_ns());
	free(text);
	nlog = 0;
	log_set_sink(count_log, NULL);
	for (int i = 0; i < HTTPD_MAX_PER_IP; i++) {
		int rcvbuf = 4096;
		assert_true((hold[i] = dial(httpd_port(h), 9)) >= 0);
		setsockopt(hold[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		assert_int_equal(send(hold[i], req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
	}
	for (int i = 0; i < HTTPD_MAX_PER_IP; i++) {    /* each is sending its reply */
		struct pollfd p = { .fd = hold[i], .events = POLLIN };
		assert_int_equal(poll(&p, 1, 5000), 1);
	}
	for (int i = 0; i < 2000; i++) {
		int fd = dial(httpd_port(h), 9);
		if (fd >= 0) {
			char c;
			struct pollfd p = { .fd = fd, .events = POLLIN };
			if (poll(&p, 1, 200) == 1)      /* closed by the server */
				(void)!recv(fd, &c, 1, MSG_DONTWAIT);
			close(fd);
		}
	}
	httpd_get_stats(h, &st);
	print_message("%llu refused, %d log lines about them\n", (unsigned long long)st.refused, (int)nlog);
	assert_true(st.refused >= 1990);
	assert_true(nlog <= LOG_RL_BURST + 1);
	assert_true(nlog >= 1);
	assert_true(log_suppressed_total() >= st.refused - LOG_RL_BURST);
	for (int i = 0; i < HTTPD_MAX_PER_IP; i++)
		close(hold[i]);
	/* the slots are free again (once the HTTP thread saw the four go) */
	for (int i = 0; i < 250; i++) {
		httpd_get_stats(h, &st);
		if (st.connections == 0)
			break;
		usleep(20000);
	}
	assert_int_equal(st.connections, 0);
	httpd_publish(h, "# TYPE llcd_test_metric gauge\nllcd_test_metric 1\n", llcd_mono_ns());
	assert_true(scrape(httpd_port(h), 9, 2000));
	httpd_free(h);
	log_set_sink(NULL, NULL);
}

TEST_MAIN(
	cmocka_unit_test(test_slowloris_every_slot),
	cmocka_unit_test(test_header_deadline),
	cmocka_unit_test(test_reply_deadline),
	cmocka_unit_test(test_refused_flood))
