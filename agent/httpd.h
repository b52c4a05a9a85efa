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
 * Limits on hostile clients: GET and HEAD of /metrics (and /) only, no
 * request body, at most HTTPD_MAX_CLIENTS connections (HTTPD_MAX_PER_IP
 * per address), idle connections closed after HTTPD_TIMEOUT_S seconds.
 * Memory: two copies of the exposition (a few KiB) plus libmicrohttpd's
 * per-connection pool (32 KiB each by default). */
#ifndef LLCD_HTTPD_H
#define LLCD_HTTPD_H

#include <stdint.h>

#include "err.h"

#define HTTPD_MAX_CLIENTS 16
#define HTTPD_MAX_PER_IP 4
#define HTTPD_TIMEOUT_S 10

struct httpd;

/* spec: a metrics-listen value (config_parse_listen). */
/* Listen on spec and serve from a thread of its own. */
struct httpd *httpd_new(const char *spec, struct llcd_err *err);
void httpd_free(struct httpd *h);

/* Replace the exposition served (copied); now_ns is the loop's monotonic
 * clock at the time it was rendered. */
void httpd_publish(struct httpd *h, const char *text, uint64_t now_ns);

/* The port bound ("PORT" 0 picks one) and the endpoint's URL. */
unsigned httpd_port(const struct httpd *h);
const char *httpd_url(const struct httpd *h);

#endif
