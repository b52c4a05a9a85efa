// SPDX-License-Identifier: GPL-2.0-or-later
/* httpd.c - the metrics endpoint on libmicrohttpd (see httpd.h). */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
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

struct httpd {
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;
	char *text;                     /* the last exposition published */
	size_t len;
	uint64_t at_ns;                 /* when it was rendered (monotonic) */
	char spec[128];
	char url[160];                  /* http://ADDRESS:PORT/metrics */
};

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
	log_warnx("metrics-listen %s: %s", h->spec, msg);
}

struct httpd *
httpd_new(const char *spec, struct llcd_err *err)
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
	snprintf(h->spec, sizeof(h->spec), "%s", spec);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, serve, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,      /* first, or MHD logs before it */
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTPD_MAX_CLIENTS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTPD_MAX_PER_IP,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_TIMEOUT_S,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		int e = errno;
		llcd_err_set(err, "metrics-listen %s: cannot listen: %s", spec, strerror(e ? e : EADDRNOTAVAIL));
		pthread_mutex_destroy(&h->lock);
		free(h);
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
	MHD_stop_daemon(h->mhd);
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
