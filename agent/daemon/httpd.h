// SPDX-License-Identifier: GPL-2.0-or-later
/* httpd.h - the Prometheus endpoint (metrics-listen in llcd.conf), on
 * libmicrohttpd.
 *
 * Threading: libmicrohttpd runs its own thread (an internal poll() loop)
 * and never calls into the daemon. The loop publishes a rendered
 * exposition with httpd_publish() after each period; the HTTP thread
 * serves a copy of the last one. So a slow, stuck or hostile scraper can
 * cost that thread, never a period, and a scrape never sees a half-updated
 * daemon. The snapshot is at most one period old; llcd_metrics_age_seconds
 * (added at serve time) says how old, so a stalled loop shows.
 *
 * Limits on hostile clients (any local user can connect to 127.0.0.1):
 * GET and HEAD of /metrics (and /) only, no request body, at most
 * HTTPD_MAX_CLIENTS connections, HTTPD_MAX_PER_IP per address. Deadlines,
 * kept by a watchdog thread whatever the client sends (libmicrohttpd's own
 * timeout restarts with every byte): the request's headers whole within
 * HTTPD_HEADER_MS of the connection, the reply sent (read by the client)
 * within HTTPD_REQUEST_MS of the headers, the next request of a
 * keep-alive connection within HTTPD_TIMEOUT_S of the reply; then the
 * connection is shut down. A new connection over a limit makes room by
 * cutting the connection (of its address, for that limit) that has owed
 * its request longest (a slowloris, an idle keep-alive); only when every
 * such slot is sending a reply is it refused, said through a rate-limited
 * log (log_rl). So one byte now and then holds a slot HTTPD_HEADER_MS at
 * most and gives it up to any newcomer, and a scraper that sends its
 * request at once always gets in.
 * Memory: two copies of the exposition (a few KiB) plus libmicrohttpd's
 * per-connection pool (32 KiB each by default) for at most
 * 2 * HTTPD_MAX_CLIENTS connections (cut ones until they are closed). */
#ifndef LLCD_HTTPD_H
#define LLCD_HTTPD_H

#include <stdint.h>

#include "err.h"

#define HTTPD_MAX_CLIENTS 16
#define HTTPD_MAX_PER_IP 4
#define HTTPD_TIMEOUT_S 10             /* idle keep-alive */
#define HTTPD_HEADER_MS 5000
#define HTTPD_REQUEST_MS 10000

struct httpd;

struct httpd_limits {
	int max_clients, max_per_addr;
	unsigned header_ms, request_ms, idle_ms;
};
void httpd_limits_default(struct httpd_limits *l);

/* spec: a metrics-listen value (config_parse_listen). */
/* Listen on spec and serve from a thread of its own. */
struct httpd *httpd_new(const char *spec, struct llcd_err *err);
/* The same with other limits (tests). */
struct httpd *httpd_new_limits(const char *spec, const struct httpd_limits *lim, struct llcd_err *err);
void httpd_free(struct httpd *h);

/* Replace the exposition served (copied); now_ns is the loop's monotonic
 * clock at the time it was rendered. */
void httpd_publish(struct httpd *h, const char *text, uint64_t now_ns);

/* The port bound ("PORT" 0 picks one) and the endpoint's URL. */
unsigned httpd_port(const struct httpd *h);
const char *httpd_url(const struct httpd *h);

struct httpd_stats {
	uint64_t accepted, refused;     /* connections */
	uint64_t evicted;               /* cut to make room for a new one */
	uint64_t header_timeouts;       /* headers not whole in time */
	uint64_t request_timeouts;      /* reply not sent (read) in time */
	uint64_t idle_closed;           /* keep-alive without a next request */
	int connections;                /* now */
};
void httpd_get_stats(struct httpd *h, struct httpd_stats *st);

#endif
