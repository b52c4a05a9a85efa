// SPDX-License-Identifier: GPL-2.0-or-later
/* httpd.c - the metrics endpoint on libmicrohttpd (see httpd.h). */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "metrics.h"

/* A connection's life, as libmicrohttpd's callbacks tell it. */
enum hconn_state {
	HC_HEADERS,                     /* accepted, its request's headers not all in */
	HC_REQUEST,                     /* headers in: the reply is made and sent */
	HC_IDLE,                        /* reply sent (keep-alive): the next request */
};

struct hconn {
	struct hconn *next;
	int fd;                         /* a dup of the connection's socket: shut
	                                 * down at a deadline (the socket stays the
	                                 * same socket whatever libmicrohttpd does
	                                 * with its own descriptor) */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	enum hconn_state st;
	uint64_t since_ns;              /* in st since */
	bool cut;                       /* shut down: leaving */
};

struct httpd {
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;
	char *text;                     /* the last exposition published */
	size_t len;
	uint64_t at_ns;                 /* when it was rendered (monotonic) */
	char spec[128];
	char url[160];                  /* http://ADDRESS:PORT/metrics */
	/* connections and their deadlines (cmu: the HTTP thread's callbacks
	 * and the watchdog) */
	pthread_mutex_t cmu;
	pthread_cond_t cv;
	struct hconn *conns;
	int nconns;                     /* not cut */
	struct httpd_limits lim;
	struct httpd_stats st;
	pthread_t watchdog;
	bool stop, have_watchdog;
};

static struct log_ratelimit refused_rl = LOG_RATELIMIT_INIT("refused metrics connections");
static struct log_ratelimit mhd_rl = LOG_RATELIMIT_INIT("libmicrohttpd messages");

void
httpd_limits_default(struct httpd_limits *l)
{
	l->max_clients = HTTPD_MAX_CLIENTS;
	l->max_per_addr = HTTPD_MAX_PER_IP;
	l->header_ms = HTTPD_HEADER_MS;
	l->request_ms = HTTPD_REQUEST_MS;
	l->idle_ms = HTTPD_TIMEOUT_S * 1000;
}

static bool
same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
		    sizeof(struct in6_addr)) == 0;
	return false;
}

static void
addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
	else if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
	else
		snprintf(buf, len, "?");
}

/* Under cmu: cut a connection (its deadline passed, or it makes room):
 * shutdown wakes the HTTP thread, which closes it (NOTIFY_CLOSED). A
 * reply not read in time is thrown away with it, not sent on to the slow
 * reader from the kernel's buffers. */
static void
cut(struct httpd *h, struct hconn *c)
{
	if (c->cut)
		return;
	c->cut = true;
	h->nconns--;
	if (c->st == HC_REQUEST) {
		/* connect to AF_UNSPEC: TCP's disconnect, a reset with the
		 * queued reply thrown away (no need to wait for libmicrohttpd
		 * to close its descriptor) */
		struct sockaddr sa = { .sa_family = AF_UNSPEC };
		if (connect(c->fd, &sa, sizeof(sa)) == 0)
			return;
	}
	shutdown(c->fd, SHUT_RDWR);
}

static uint64_t
deadline_of(const struct httpd *h, const struct hconn *c)
{
	unsigned ms = c->st == HC_HEADERS ? h->lim.header_ms : c->st == HC_REQUEST ? h->lim.request_ms : h->lim.idle_ms;

	return c->since_ns + (uint64_t)ms * 1000000ull;
}

/* The watchdog: every connection's deadline, whatever the client sends. */
static void *
watchdog(void *arg)
{
	struct httpd *h = arg;

	pthread_mutex_lock(&h->cmu);
	while (!h->stop) {
		uint64_t now = llcd_mono_ns(), next = UINT64_MAX;
		for (struct hconn *c = h->conns; c != NULL; c = c->next) {
			if (c->cut)
				continue;
			uint64_t d = deadline_of(h, c);
			if (d <= now) {
				if (c->st == HC_HEADERS)
					h->st.header_timeouts++;
				else if (c->st == HC_REQUEST)
					h->st.request_timeouts++;
				else
					h->st.idle_closed++;
				cut(h, c);
			} else if (d < next) {
				next = d;
			}
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&h->cv, &h->cmu);
		} else {
			struct timespec ts;
			uint64_t wait = next - now + 1000000ull;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (time_t)(wait / 1000000000ull);
			ts.tv_nsec += (long)(wait % 1000000000ull);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&h->cv, &h->cmu, &ts);
		}
	}
	pthread_mutex_unlock(&h->cmu);
	return NULL;
}

/* Under cmu: the connection that makes room for a new one from addr
 * (NULL: any address): of those that owe their request (headers not in,
 * or idle after a reply), the one that has owed it longest. A client that
 * sends its request at once (Prometheus) owes it only until the HTTP
 * thread reads it, which it does before it accepts another connection;
 * one that holds a slot by sending slowly gives it up to any newcomer.
 * NULL when every slot is sending a reply (each bounded by the request
 * deadline; a reply of a few KiB is in the kernel's buffers at once). */
static struct hconn *
victim(struct httpd *h, const struct sockaddr_storage *addr)
{
	struct hconn *best = NULL;

	for (struct hconn *c = h->conns; c != NULL; c = c->next) {
		if (c->cut || c->st == HC_REQUEST || (addr != NULL && !same_addr(&c->addr, addr)))
			continue;
		if (best == NULL || c->since_ns < best->since_ns)
			best = c;
	}
	return best;
}

/* Accept policy (before libmicrohttpd takes the connection): the limits
 * of connections and per address are this daemon's, with room made by
 * cutting one that holds a slot without asking (see victim()). */
static enum MHD_Result
accept_policy(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct httpd *h = cls;
	struct sockaddr_storage addr;
	int mine = 0;
	const char *why = NULL;

	memset(&addr, 0, sizeof(addr));
	memcpy(&addr, sa, len < sizeof(addr) ? len : sizeof(addr));
	pthread_mutex_lock(&h->cmu);
	for (struct hconn *c = h->conns; c != NULL; c = c->next)
		if (!c->cut && same_addr(&c->addr, &addr))
			mine++;
	if (mine >= h->lim.max_per_addr) {
		struct hconn *v = victim(h, &addr);
		if (v == NULL)
			why = "per address";
		else
			cut(h, v), h->st.evicted++;
	}
	if (why == NULL && h->nconns >= h->lim.max_clients) {
		struct hconn *v = victim(h, NULL);
		if (v == NULL)
			why = "in all";
		else
			cut(h, v), h->st.evicted++;
	}
	if (why != NULL)
		h->st.refused++;
	else
		h->st.accepted++;
	pthread_mutex_unlock(&h->cmu);
	if (why != NULL) {
		char a[INET6_ADDRSTRLEN];
		addr_text(sa, a, sizeof(a));
		log_rl(&refused_rl, LOG_WARNING, "metrics-listen %s: connection from %s refused: %d connections %s "
		    "(limits %d, %d per address), each sending its request", h->spec, a,
		    why[0] == 'p' ? h->lim.max_per_addr : h->lim.max_clients, why, h->lim.max_clients, h->lim.max_per_addr);
		return MHD_NO;
	}
	return MHD_YES;
}

static void
notify_connection(void *cls, struct MHD_Connection *conn, void **ctx, enum MHD_ConnectionNotificationCode code)
{
	struct httpd *h = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		struct hconn *c = calloc(1, sizeof(*c));
		if (c == NULL || fi == NULL || (c->fd = fcntl(fi->connect_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			/* no deadline could be kept: not served */
			if (fi != NULL)
				shutdown(fi->connect_fd, SHUT_RDWR);
			free(c);
			*ctx = NULL;
			return;
		}
		if (ai != NULL && ai->client_addr != NULL)
			memcpy(&c->addr, ai->client_addr, ai->client_addr->sa_family == AF_INET6 ?
			    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
		c->st = HC_HEADERS;
		c->since_ns = llcd_mono_ns();
		pthread_mutex_lock(&h->cmu);
		c->next = h->conns;
		h->conns = c;
		h->nconns++;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->cmu);
		*ctx = c;
		return;
	}
	/* MHD_CONNECTION_NOTIFY_CLOSED */
	struct hconn *c = *ctx;
	if (c == NULL)
		return;
	pthread_mutex_lock(&h->cmu);
	for (struct hconn **pp = &h->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (!c->cut)
		h->nconns--;
	pthread_mutex_unlock(&h->cmu);
	close(c->fd);
	free(c);
	*ctx = NULL;
}

/* The connection's record, from the access handler's side. */
static struct hconn *
hconn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i != NULL ? i->socket_context : NULL;
}

static void
set_state(struct httpd *h, struct hconn *c, enum hconn_state st)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&h->cmu);
	c->st = st;
	c->since_ns = llcd_mono_ns();
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->cmu);
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)con_cls;
	(void)toe;
	set_state(cls, hconn_of(conn), HC_IDLE);
}

static const char index_page[] =
	"<html><head><title>llcd</title></head><body><h1>llcd</h1>"
	"<p><a href=\"/metrics\">metrics</a></p></body></html>\n";

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *type, const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
serve(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
      const char *upload, size_t *upload_len, void **con_cls)
{
	static const char plain[] = "text/plain; charset=utf-8";
	struct httpd *h = cls;
	enum MHD_Result rc;
	char *body;
	int n;

	(void)version;
	(void)upload;
	if (*con_cls == NULL) {         /* first call: headers only */
		*con_cls = h;
		set_state(h, hconn_of(c), HC_REQUEST);  /* the reply's deadline */
		return MHD_YES;
	}
	if (*upload_len != 0)
		return MHD_NO;          /* no request bodies: close */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, plain, "GET or HEAD only\n", 17);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page, sizeof(index_page) - 1);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, plain, "not found: llcd serves /metrics\n", 32);
	pthread_mutex_lock(&h->lock);
	if (h->text == NULL) {
		pthread_mutex_unlock(&h->lock);
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, plain, "no period completed yet\n", 24);
	}
	{
		char age[64];
		metrics_format_value(age, sizeof(age), (double)((llcd_mono_ns() - h->at_ns) / 1000000) / 1000);
		n = asprintf(&body, "%s# HELP llcd_metrics_age_seconds Age of this snapshot: the loop publishes one "
		    "each period.\n# TYPE llcd_metrics_age_seconds gauge\nllcd_metrics_age_seconds %s\n", h->text, age);
	}
	pthread_mutex_unlock(&h->lock);
	if (n < 0)
		return MHD_NO;
	rc = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, (size_t)n);
	free(body);
	return rc;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct httpd *h = cls;
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_rl(&mhd_rl, LOG_WARNING, "metrics-listen %s: %s", h->spec, msg);
}

struct httpd *
httpd_new(const char *spec, struct llcd_err *err)
{
	struct httpd_limits l;

	httpd_limits_default(&l);
	return httpd_new_limits(spec, &l, err);
}

struct httpd *
httpd_new_limits(const char *spec, const struct httpd_limits *lim, struct llcd_err *err)
{
	struct sockaddr_storage ss;
	unsigned len;
	struct httpd *h;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;

	if (config_parse_listen(spec, &ss, &len, err) < 0)
		return NULL;
	/* llcd.service gives llcd no network: say so rather than MHD's guess */
	int probe = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		llcd_err_set(err, "metrics-listen %s: cannot create an %s socket: %s (llcd.service allows AF_UNIX "
		    "only: add the drop-in /usr/share/doc/llcd/examples/metrics.conf.example, docs/install.md)",
		    spec, ss.ss_family == AF_INET6 ? "AF_INET6" : "AF_INET", strerror(errno));
		return NULL;
	}
	close(probe);
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->cmu, NULL);
	{
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&h->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	h->lim = *lim;
	snprintf(h->spec, sizeof(h->spec), "%s", spec);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (pthread_create(&h->watchdog, NULL, watchdog, h) != 0) {
		llcd_err_set(err, "metrics-listen %s: cannot start its thread", spec);
		httpd_free(h);
		return NULL;
	}
	h->have_watchdog = true;
	/* the limits are accept_policy()'s; libmicrohttpd's own, set above
	 * them, only bound what a cut connection holds until it is closed */
	h->mhd = MHD_start_daemon(flags, 0, accept_policy, h, serve, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,      /* first, or MHD logs before it */
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * lim->max_clients),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)((lim->idle_ms + 999) / 1000),
	    MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, h,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		int e = errno;
		llcd_err_set(err, "metrics-listen %s: cannot listen: %s", spec, strerror(e ? e : EADDRNOTAVAIL));
		httpd_free(h);
		return NULL;
	}
	if (ss.ss_family == AF_INET6) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		snprintf(h->url, sizeof(h->url), "http://[%s]:%u/metrics", a, httpd_port(h));
	} else {
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		snprintf(h->url, sizeof(h->url), "http://%s:%u/metrics", a, httpd_port(h));
	}
	return h;
}

void
httpd_free(struct httpd *h)
{
	if (h == NULL)
		return;
	if (h->mhd != NULL)
		MHD_stop_daemon(h->mhd);        /* closes every connection (NOTIFY_CLOSED) */
	if (h->have_watchdog) {
		pthread_mutex_lock(&h->cmu);
		h->stop = true;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->cmu);
		pthread_join(h->watchdog, NULL);
	}
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->cmu);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}

void
httpd_publish(struct httpd *h, const char *text, uint64_t now_ns)
{
	char *copy = strdup(text), *old;

	if (copy == NULL)
		return;                 /* keep serving the previous one */
	pthread_mutex_lock(&h->lock);
	old = h->text;
	h->text = copy;
	h->len = strlen(copy);
	h->at_ns = now_ns;
	pthread_mutex_unlock(&h->lock);
	free(old);
}

unsigned
httpd_port(const struct httpd *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

const char *
httpd_url(const struct httpd *h)
{
	return h->url;
}

void
httpd_get_stats(struct httpd *h, struct httpd_stats *st)
{
	pthread_mutex_lock(&h->cmu);
	*st = h->st;
	st->connections = h->nconns;
	pthread_mutex_unlock(&h->cmu);
}
