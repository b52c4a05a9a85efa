// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan.c - the host end of the guest helper's channel (see
 * guestchan.h and docs/guest-channel.md). */
#include "guestchan.h"
#include "names.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestproto.h"
#include "jsonget.h"
#include "safefile.h"

#define PID_LIMIT 4194304               /* PID_MAX_LIMIT on 64-bit Linux */
#define SHARE_LIMIT 4096.0              /* cpu_share: CPUs */
#define LLCS_LIMIT 2048                 /* entries in "llcs" */
#define JSON_DEPTH 5                    /* json-c counts 1 more than object > procs > proc > vcpus */

struct guestchan {
	char domain[POLICY_NAME];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int nvcpus;
	struct guestchan_limits lim;
	int fd;
	enum guestchan_state state;
	uint64_t next_ns;               /* reconnect / throttle end / back-off end */
	uint64_t connected_ns;
	uint64_t backoff_ns;            /* the next back-off */
	uint64_t last_ns;               /* bucket refill time */
	double tokens, strikes;
	bool discarding;                /* inside an over-long line */
	size_t len;                     /* bytes in buf */
	char *buf;                      /* max_line bytes */
	int nrep;
	struct policy_hot_report *rep;  /* max_procs: the last valid report */
	struct policy_hot_report *scratch;      /* max_procs: parse target */
	struct guestchan_stats st;
};

void
guestchan_limits_default(struct guestchan_limits *l)
{
	l->max_line = GUESTPROTO_MAX_LINE;
	l->max_procs = GUESTPROTO_MAX_PROCS;
	l->rate = 10;
	l->burst = 20;
	l->strikes = 10;
	l->strike_refill = 0.1;
	l->backoff_ns = UINT64_C(30) * 1000000000;
	l->backoff_max_ns = UINT64_C(600) * 1000000000;
	l->reconnect_ns = UINT64_C(2) * 1000000000;
	l->report_timeout_ns = UINT64_C(10) * 1000000000;
	l->max_read = 64 * 1024;
}

LLCD_NAME_FUNCTION(guestchan_state_name, enum guestchan_state, GUESTCHAN_BACKOFF,
    [GUESTCHAN_DISCONNECTED] = "disconnected", [GUESTCHAN_CONNECTED] = "connected",
    [GUESTCHAN_THROTTLED] = "throttled", [GUESTCHAN_BACKOFF] = "backoff")

/* ---- the parser ------------------------------------------------------- */

void
guestchan_sanitize_name(const char *name, size_t len, int pid, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < POLICY_GROUP_NAME - 1; i++) {
		unsigned char ch = (unsigned char)name[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		          (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';

		out[n++] = ok ? (char)ch : '_';
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, POLICY_GROUP_NAME, "pid%d", pid);
}

/* An optional integer: absent is fine (*v = -1), present must be in range. */
static bool
opt_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
	enum jget r = jget_int(o, key, lo, hi, v);

	if (r == JGET_ABSENT)
		*v = -1;
	return r == JGET_OK || r == JGET_ABSENT;
}

static int
parse_proc(json_object *p, int i, int nvcpus, struct policy_hot_report *r,
           struct llcd_err *err)
{
	json_object *x;
	int64_t pid, v;
	double share;
	enum jget got;
	size_t n;

	if (!json_object_is_type(p, json_type_object))
		return llcd_err_set(err, "process %d: not an object", i);
	if (jget_int(p, "pid", 1, PID_LIMIT, &pid) != JGET_OK)
		return llcd_err_set(err, "process %d: \"pid\" missing or not an integer in 1..%d", i, PID_LIMIT);
	if (jget_typed(p, "name", json_type_string, &x) != JGET_OK ||
	    (n = (size_t)json_object_get_string_len(x)) > GUESTPROTO_MAX_NAME)
		return llcd_err_set(err, "process %d: \"name\" missing, not a string or longer than %d bytes",
		                    i, GUESTPROTO_MAX_NAME);
	memset(r, 0, sizeof(*r));
	r->pid = (int)pid;
	guestchan_sanitize_name(json_object_get_string(x), n, r->pid, r->name);
	if (!opt_int(p, "threads", 0, PID_LIMIT, &v))
		return llcd_err_set(err, "process %d: \"threads\" not an integer in 0..%d", i, PID_LIMIT);
	if (!opt_int(p, "busy_threads", 0, PID_LIMIT, &v))
		return llcd_err_set(err, "process %d: \"busy_threads\" not an integer in 0..%d", i, PID_LIMIT);
	switch (jget_num(p, "cpu_share", 0, SHARE_LIMIT, &share)) {
	case JGET_OK:
	case JGET_ABSENT:
		break;
	case JGET_RANGE:
		return llcd_err_set(err, "process %d: \"cpu_share\" not in 0..%g", i, SHARE_LIMIT);
	default:
		return llcd_err_set(err, "process %d: \"cpu_share\" not a number", i);
	}
	if ((got = jget_typed(p, "llcs", json_type_array, &x)) != JGET_ABSENT) {
		/* the guest's LLCs: at most one per vCPU */
		int most = nvcpus < LLCS_LIMIT ? nvcpus : LLCS_LIMIT;
		if (got != JGET_OK || json_object_array_length(x) > (size_t)most)
			return llcd_err_set(err, "process %d: \"llcs\" not an array of at most %d entries (the domain's vCPUs)",
			    i, most);
		for (size_t k = 0; k < json_object_array_length(x); k++) {
			if (!json_object_is_type(json_object_array_get_idx(x, k), json_type_int))
				return llcd_err_set(err, "process %d: \"llcs\" entry %zu not an integer", i, k);
		}
	}
	if (jget_typed(p, "vcpus", json_type_array, &x) != JGET_OK)
		return llcd_err_set(err, "process %d: \"vcpus\" missing or not an array", i);
	n = json_object_array_length(x);
	if (n > (size_t)nvcpus)
		return llcd_err_set(err, "process %d: %zu vCPUs listed, the domain has %d", i, n, nvcpus);
	for (size_t k = 0; k < n; k++) {
		json_object *e = json_object_array_get_idx(x, k);

		if (!json_object_is_type(e, json_type_int))
			return llcd_err_set(err, "process %d: vCPU entry %zu not an integer", i, k);
		errno = 0;
		v = json_object_get_int64(e);
		if (errno || v < 0 || v >= nvcpus)
			return llcd_err_set(err, "process %d: vCPU %lld out of range (the domain has %d vCPUs)",
			                    i, (long long)v, nvcpus);
		cpuset_set(&r->vcpus, (int)v);
	}
	return 0;
}

int
guestchan_parse(const char *line, size_t len, int nvcpus, int max_procs,
                struct policy_hot_report *out, struct guestchan_meta *meta,
                struct llcd_err *err)
{
	json_tokener *tok;
	json_object *root, *x, *procs;
	enum json_tokener_error jerr;
	int64_t v;
	size_t n, end;
	int rc = -1;

	if (meta)
		*meta = (struct guestchan_meta){ 0, 0, -1, -1 };
	if (len == 0)
		return llcd_err_set(err, "empty line");
	if (memchr(line, '\0', len))
		return llcd_err_set(err, "line contains a NUL byte");
	if (len > INT32_MAX)
		return llcd_err_set(err, "line too long");
	/* one pass before json-c: it takes 'single-quoted' names and strings
	 * even when strict; and no array may hold more entries than the guest
	 * can have (vCPUs, LLCs: at most its vCPUs; processes: max_procs), so
	 * a line of 1,500 small numbers costs one pass, not 1,500 json-c
	 * objects (165 us against 6 us) */
	int limit = (nvcpus > max_procs ? nvcpus : max_procs) + 1, depth = 0;
	struct { int n; bool arr; } lv[JSON_DEPTH + 1];         /* the open brackets */
	for (size_t i = 0, in = 0; i < len; i++) {
		char ch = line[i];
		if (in) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in = 0;
			continue;
		}
		int top = depth - 1 <= JSON_DEPTH ? depth - 1 : -1;     /* deeper: json-c refuses it */
		if (ch == '"') {
			in = 1;
		} else if (ch == '\'') {
			return llcd_err_set(err, "invalid JSON: single quote outside a string");
		} else if (ch == '[' || ch == '{') {
			if (depth <= JSON_DEPTH) {
				lv[depth].n = 0;
				lv[depth].arr = ch == '[';
			}
			depth++;
		} else if (ch == ']' || ch == '}') {
			if (depth > 0)
				depth--;
		} else if (ch == ',' && top >= 0 && lv[top].arr && ++lv[top].n >= limit) {
			return llcd_err_set(err, "an array of more than %d entries (the domain has %d vCPUs, a report at most "
			    "%d processes)", limit, nvcpus, max_procs);
		}
	}
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok)
		return llcd_err_set(err, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!root && jerr == json_tokener_continue) {
		/* complete values such as numbers end only at the end of input */
		root = json_tokener_parse_ex(tok, "", 1);
		end = len;
	}
	json_tokener_free(tok);
	if (!root) {
		llcd_err_set(err, "invalid JSON: %s", jerr == json_tokener_continue ?
		             "unexpected end of line" : json_tokener_error_desc(jerr));
		goto out;
	}
	for (; end < len; end++) {
		if (line[end] != ' ' && line[end] != '\t' && line[end] != '\r') {
			llcd_err_set(err, "invalid JSON: trailing data after the object");
			goto out;
		}
	}
	if (!json_object_is_type(root, json_type_object)) {
		llcd_err_set(err, "not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(root, "v", &x) || !json_object_is_type(x, json_type_int)) {
		llcd_err_set(err, "\"v\" (protocol version) missing or not an integer");
		goto out;
	}
	v = json_object_get_int64(x);
	if (v != GUESTPROTO_VERSION) {
		llcd_err_set(err, "unsupported protocol version %lld (llcd speaks %d)",
		             (long long)v, GUESTPROTO_VERSION);
		goto out;
	}
	if (meta)
		meta->version = (int)v;
	if (json_object_object_get_ex(root, "t", &x)) {
		if (!json_object_is_type(x, json_type_double) && !json_object_is_type(x, json_type_int)) {
			llcd_err_set(err, "\"t\" not a number");
			goto out;
		}
		if (!isfinite(json_object_get_double(x)) || json_object_get_double(x) < 0) {
			/* json-c takes NaN, Infinity and 1e999 (inf) */
			llcd_err_set(err, "\"t\" not a finite number of seconds (0 or more)");
			goto out;
		}
		if (meta)
			meta->t = json_object_get_double(x);
	}
	if (!opt_int(root, "seq", 0, INT64_MAX, &v)) {
		llcd_err_set(err, "\"seq\" not a non-negative integer");
		goto out;
	}
	if (meta)
		meta->seq = v;
	if (!opt_int(root, "dropped", 0, INT64_MAX, &v)) {
		llcd_err_set(err, "\"dropped\" not a non-negative integer");
		goto out;
	}
	if (meta)
		meta->dropped = v;
	if (jget_typed(root, "procs", json_type_array, &procs) != JGET_OK) {
		llcd_err_set(err, "\"procs\" missing or not an array");
		goto out;
	}
	n = json_object_array_length(procs);
	if (n > (size_t)max_procs) {
		llcd_err_set(err, "too many processes (%zu, limit %d)", n, max_procs);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_proc(json_object_array_get_idx(procs, i), (int)i, nvcpus, &out[i], err) < 0)
			goto out;
		for (size_t k = 0; k < i; k++) {
			if (out[k].pid == out[i].pid) {
				llcd_err_set(err, "process %zu: pid %d listed twice", i, out[i].pid);
				goto out;
			}
		}
	}
	rc = (int)n;
out:
	json_object_put(root);
	return rc;
}

/* ---- the channel ------------------------------------------------------ */

struct guestchan *
guestchan_new(const char *domain, int nvcpus, const char *sock_path,
              const struct guestchan_limits *lim)
{
	struct guestchan *c;

	if (!domain || !sock_path || nvcpus < 1 || nvcpus > CPUSET_MAX)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (lim)
		c->lim = *lim;
	else
		guestchan_limits_default(&c->lim);
	if (c->lim.max_line < 64)
		c->lim.max_line = 64;
	if (c->lim.max_procs < 1)
		c->lim.max_procs = 1;
	if (c->lim.max_read < c->lim.max_line)
		c->lim.max_read = c->lim.max_line;
	if (snprintf(c->domain, sizeof(c->domain), "%s", domain) >= (int)sizeof(c->domain) ||
	    snprintf(c->path, sizeof(c->path), "%s", sock_path) >= (int)sizeof(c->path)) {
		free(c);
		return NULL;
	}
	c->nvcpus = nvcpus;
	c->fd = -1;
	/* the line buffer and the reports are made on the first connection
	 * (try_connect): a domain whose helper never connects holds none */
	c->backoff_ns = c->lim.backoff_ns;
	c->state = GUESTCHAN_DISCONNECTED;
	c->next_ns = 0;
	return c;
}

void
guestchan_free(struct guestchan *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c->rep);
	free(c->scratch);
	free(c);
}

int
guestchan_fd(const struct guestchan *c)
{
	return c->state == GUESTCHAN_CONNECTED ? c->fd : -1;
}

uint64_t
guestchan_next_ns(const struct guestchan *c)
{
	return c->state == GUESTCHAN_CONNECTED ? UINT64_MAX : c->next_ns;
}

void
guestchan_set_nvcpus(struct guestchan *c, int nvcpus)
{
	if (nvcpus >= 1 && nvcpus <= CPUSET_MAX && nvcpus != c->nvcpus) {
		c->nvcpus = nvcpus;
		c->nrep = 0;
		c->st.last_report_ns = 0;
	}
}

static void
refill(struct guestchan *c, uint64_t now)
{
	double dt = now > c->last_ns ? (double)(now - c->last_ns) / 1e9 : 0;

	c->tokens += dt * c->lim.rate;
	if (c->tokens > c->lim.burst)
		c->tokens = c->lim.burst;
	c->strikes += dt * c->lim.strike_refill;
	if (c->strikes > c->lim.strikes)
		c->strikes = c->lim.strikes;
	c->last_ns = now;
}

static void
disconnect(struct guestchan *c, enum guestchan_state st, uint64_t next)
{
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
		c->st.disconnects++;
	}
	c->state = st;
	c->next_ns = next;
	c->len = 0;
	c->discarding = false;
}

/* One strike; returns true when the channel went into back-off. */
static bool
strike(struct guestchan *c, uint64_t now, int *ev)
{
	c->strikes -= 1;
	if (c->strikes >= 0)
		return false;
	disconnect(c, GUESTCHAN_BACKOFF, now + c->backoff_ns);
	snprintf(c->st.last_error, sizeof(c->st.last_error),
	         "closed for %llu s: abuse persists (%llu bad lines, %llu throttles)",
	         (unsigned long long)(c->backoff_ns / 1000000000), (unsigned long long)c->st.bad,
	         (unsigned long long)c->st.throttles);
	c->backoff_ns = c->backoff_ns * 2 > c->lim.backoff_max_ns ? c->lim.backoff_max_ns : c->backoff_ns * 2;
	c->st.backoffs++;
	c->nrep = 0;                    /* a hostile guest's report is not kept */
	c->st.last_report_ns = 0;
	*ev |= GUESTCHAN_EV_BACKOFF | GUESTCHAN_EV_DISCONNECTED;
	return true;
}

/* Take a token; without one, throttle. Returns false when not allowed. */
static bool
take_token(struct guestchan *c, uint64_t now, int *ev)
{
	if (c->tokens >= 1) {
		c->tokens -= 1;
		return true;
	}
	c->state = GUESTCHAN_THROTTLED;
	c->next_ns = now + (uint64_t)((1 - c->tokens) / c->lim.rate * 1e9) + 1;
	c->st.throttles++;
	*ev |= GUESTCHAN_EV_THROTTLED;
	strike(c, now, ev);
	return false;
}

static void
bad_line(struct guestchan *c, const char *why, uint64_t now, int *ev)
{
	size_t n = strnlen(why, sizeof(c->st.last_error) - 1);  /* truncated on purpose */

	c->st.bad++;
	memcpy(c->st.last_error, why, n);
	c->st.last_error[n] = '\0';
	*ev |= GUESTCHAN_EV_BAD;
	strike(c, now, ev);
}

static void
one_line(struct guestchan *c, const char *line, size_t len, uint64_t now, int *ev)
{
	struct llcd_err err = { "" };
	struct guestchan_meta meta;
	int n;

	c->st.lines++;
	n = guestchan_parse(line, len, c->nvcpus, c->lim.max_procs, c->scratch, &meta, &err);
	if (n < 0) {
		bad_line(c, err.msg, now, ev);
		return;
	}
	memcpy(c->rep, c->scratch, sizeof(*c->rep) * (size_t)n);
	c->nrep = n;
	c->st.reports++;
	c->st.last_report_ns = now;
	if (meta.dropped >= 0)
		c->st.guest_dropped = (uint64_t)meta.dropped;
	*ev |= GUESTCHAN_EV_REPORT;
}

/* Connect to the channel's socket: its directory checked (not writable
 * by others or a non-root group; its owner may be QEMU's user, whose
 * directory libvirt's is), the socket opened O_PATH|O_NOFOLLOW there and
 * connected as that inode (safefile_connect): a symbolic link swapped in
 * is refused, never followed, at any moment. */
static void
try_connect(struct guestchan *c, uint64_t now, int *ev)
{
	struct llcd_err e;
	const char *base;
	struct stat st;
	int dfd, fd = -1;

	if ((dfd = safefile_opendir_of(c->path, SAFEFILE_ANY_OWNER, &base, &e)) >= 0) {
		fd = safefile_connect(dfd, base, &st, &e);
		if (fd < 0 && errno == ENOTSOCK)
			snprintf(c->st.last_error, sizeof(c->st.last_error), "%.120s is %.120s", c->path, e.msg);
		close(dfd);
	} else if (errno != ENOENT) {
		snprintf(c->st.last_error, sizeof(c->st.last_error), "%.230s: not connected", e.msg);
	}
	if (fd >= 0 && c->buf == NULL) {
		c->buf = malloc(c->lim.max_line);
		c->rep = calloc((size_t)c->lim.max_procs, sizeof(*c->rep));
		c->scratch = calloc((size_t)c->lim.max_procs, sizeof(*c->scratch));
		if (!c->buf || !c->rep || !c->scratch) {
			free(c->buf);
			free(c->rep);
			free(c->scratch);
			c->buf = NULL;
			c->rep = c->scratch = NULL;
			close(fd);
			fd = -1;
			snprintf(c->st.last_error, sizeof(c->st.last_error), "out of memory for the channel's buffers");
		}
	}
	if (fd < 0) {
		c->state = GUESTCHAN_DISCONNECTED;
		c->next_ns = now + c->lim.reconnect_ns;
		return;
	}
	if (c->state == GUESTCHAN_BACKOFF || c->st.connects == 0)
		c->strikes = c->lim.strikes;
	c->fd = fd;
	c->state = GUESTCHAN_CONNECTED;
	c->connected_ns = now;
	c->tokens = c->lim.burst;
	c->last_ns = now;
	c->len = 0;
	c->discarding = false;
	c->st.connects++;
	*ev |= GUESTCHAN_EV_CONNECTED;
}

int
guestchan_handle(struct guestchan *c, uint64_t now)
{
	size_t nread = 0;
	int ev = 0;

	if (c->state == GUESTCHAN_DISCONNECTED || c->state == GUESTCHAN_BACKOFF) {
		if (now < c->next_ns)
			return 0;
		try_connect(c, now, &ev);
		if (c->state != GUESTCHAN_CONNECTED)
			return ev;
	}
	refill(c, now);
	if (c->state == GUESTCHAN_THROTTLED) {
		if (now < c->next_ns || c->tokens < 1)
			return ev;
		c->state = GUESTCHAN_CONNECTED;
	}
	/* a connection that behaved for a long time earns a short back-off */
	if (now - c->connected_ns >= c->lim.backoff_max_ns)
		c->backoff_ns = c->lim.backoff_ns;

	while (c->state == GUESTCHAN_CONNECTED && nread < c->lim.max_read) {
		size_t room = c->lim.max_line - c->len, start = 0;
		ssize_t n;

		/* complete lines first (a throttle may have left some) */
		for (;;) {
			char *nl = memchr(c->buf + start, '\n', c->len - start);
			size_t ll;

			if (!nl)
				break;
			ll = (size_t)(nl - (c->buf + start));
			if (!take_token(c, now, &ev))
				break;
			if (c->discarding) {
				c->discarding = false;  /* the end of an over-long line */
			} else {
				one_line(c, c->buf + start, ll, now, &ev);
			}
			start += ll + 1;
			if (c->state != GUESTCHAN_CONNECTED)
				break;
		}
		if (c->fd < 0)
			return ev;
		if (start) {
			memmove(c->buf, c->buf + start, c->len - start);
			c->len -= start;
		}
		if (c->state != GUESTCHAN_CONNECTED)
			break;
		if (c->len == c->lim.max_line) {
			/* no newline in max_line bytes: drop them, costs a token */
			if (!take_token(c, now, &ev))
				break;
			c->len = 0;
			if (!c->discarding) {
				char msg[96];

				c->st.too_long++;
				snprintf(msg, sizeof(msg), "line too long (more than %zu bytes)", c->lim.max_line);
				c->discarding = true;
				bad_line(c, msg, now, &ev);
			}
			continue;
		}
		room = c->lim.max_line - c->len;
		n = read(c->fd, c->buf + c->len, room);
		if (n > 0) {
			c->len += (size_t)n;
			c->st.bytes += (uint64_t)n;
			nread += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			break;
		/* EOF or error: the domain stopped, or libvirt closed the socket */
		snprintf(c->st.last_error, sizeof(c->st.last_error), "%s",
		         n == 0 ? "connection closed" : strerror(errno));
		disconnect(c, GUESTCHAN_DISCONNECTED, now + c->lim.reconnect_ns);
		ev |= GUESTCHAN_EV_DISCONNECTED;
		break;
	}
	return ev;
}

int
guestchan_reports(const struct guestchan *c, struct policy_hot_report *out, int max,
                  uint64_t now)
{
	int n = c->nrep < max ? c->nrep : max;

	if (c->st.last_report_ns == 0 || now - c->st.last_report_ns > c->lim.report_timeout_ns)
		return 0;
	if (n > 0)
		memcpy(out, c->rep, sizeof(*out) * (size_t)n);
	return n > 0 ? n : 0;
}

void
guestchan_stats(const struct guestchan *c, struct guestchan_stats *st)
{
	*st = c->st;
	st->state = c->state;
	st->next_ns = guestchan_next_ns(c);
	st->nreports = c->nrep;
	st->mem_bytes = sizeof(*c) + c->lim.max_line +
	                2 * (size_t)c->lim.max_procs * sizeof(struct policy_hot_report);
}

/* ---- names and XML ------------------------------------------------------ */

int
guestchan_sock_path(const char *dir, const char *id, char *buf, size_t len,
                    struct llcd_err *err)
{
	char safe[POLICY_GROUP_NAME * 4];
	size_t n = 0, max = sizeof(((struct sockaddr_un *)0)->sun_path);

	for (const char *p = id; *p && n < sizeof(safe) - 1; p++) {
		unsigned char ch = (unsigned char)*p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		          (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';

		safe[n] = ok && !(n == 0 && ch == '.') ? (char)ch : '_';
		n++;
	}
	safe[n] = '\0';
	if (n == 0)
		return llcd_err_set(err, "guest channel: empty domain id");
	if (snprintf(buf, len, "%s/%s.sock", dir, safe) >= (int)(len < max ? len : max))
		return llcd_err_set(err, "guest channel socket path %s/%s.sock is longer than %zu bytes",
		                    dir, safe, max - 1);
	return 0;
}

int
guestchan_channel_xml(const char *sock_path, char *buf, size_t len, struct llcd_err *err)
{
	char esc[sizeof(((struct sockaddr_un *)0)->sun_path) * 6];
	size_t n = 0;
	int w;

	for (const char *p = sock_path; *p; p++) {
		const char *r = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" :
		                *p == '\'' ? "&apos;" : *p == '"' ? "&quot;" : NULL;
		size_t rl = r ? strlen(r) : 1;

		if (n + rl + 1 > sizeof(esc))
			return llcd_err_set(err, "guest channel socket path too long");
		if (r)
			memcpy(esc + n, r, rl);
		else
			esc[n] = *p;
		n += rl;
	}
	esc[n] = '\0';
	w = snprintf(buf, len,
	             "<channel type='unix'>\n"
	             "  <source mode='bind' path='%s'/>\n"
	             "  <target type='virtio' name='%s'/>\n"
	             "</channel>\n", esc, GUESTPROTO_PORT);
	if (w < 0 || (size_t)w >= len)
		return llcd_err_set(err, "guest channel XML does not fit %zu bytes", len);
	return w;
}
