// SPDX-License-Identifier: GPL-2.0-or-later
/* qmp.c - libqmp: the connection, message framing and dispatch. */
#include "qmp.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "jsonget.h"

#define JSON_DEPTH 64          /* QMP replies nest a few levels; bound it */
#define READS_PER_STEP 16      /* fairness: at most this many reads per step */
/* Every byte JSON allows outside strings.  Checked by the framer, so that
 * json-c's leniencies (single quotes, NaN, Infinity) never reach callers. */
#define JSON_OUTSIDE " \t\r\n{}[]:,\"0123456789+-.eEtruefalsn"


enum pend_state { PEND_WAITING, PEND_DONE, PEND_ABANDONED };

struct pending {
	uint64_t id;
	enum pend_state st;
	enum qmp_rc rc;            /* PEND_DONE: QMP_OK or QMP_ERR_COMMAND */
	struct json_object *val;   /* PEND_DONE: "return" or "error" value */
	char cmd[64];              /* for error messages */
};

struct qmp {
	int fd;
	enum qmp_state state;
	char broken[LLCD_ERR_MSG];
	struct json_tokener *tok;

	/* framing of the incoming stream */
	bool in_msg, in_str, esc;
	size_t depth;
	size_t ws;                 /* whitespace bytes before the current message */
	char *msg;                 /* the current message, up to QMP_MSG_MAX */
	size_t msg_len, msg_cap;

	/* outgoing bytes: out[out_off .. out_len) */
	char *out;
	size_t out_off, out_len, out_cap;

	/* greeting */
	int ver_major, ver_minor, ver_micro;
	char package[128];
	struct json_object *caps;

	uint64_t next_id, caps_id;
	struct pending pend[QMP_PENDING_MAX];
	size_t npend;

	struct json_object *ev[QMP_EVENTS_MAX];
	size_t ev_head, ev_n;
	uint64_t ev_dropped;

	qmp_trace_fn *trace;
	void *trace_arg;
};

struct qmp *
qmp_new(void)
{
	struct qmp *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->tok = json_tokener_new_ex(JSON_DEPTH);
	if (q->tok == NULL) {
		free(q);
		return NULL;
	}
	json_tokener_set_flags(q->tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	q->fd = -1;
	q->state = QMP_STATE_GREETING;
	q->next_id = 1;
	q->ver_major = q->ver_minor = q->ver_micro = -1;
	return q;
}

void
qmp_free(struct qmp *q)
{
	size_t i;

	if (q == NULL)
		return;
	if (q->fd != -1)
		close(q->fd);
	json_tokener_free(q->tok);
	for (i = 0; i < q->npend; i++)
		json_object_put(q->pend[i].val);
	while (q->ev_n > 0)
		json_object_put(qmp_event_next(q));
	json_object_put(q->caps);
	free(q->msg);
	free(q->out);
	free(q);
}

/* --- small helpers ---------------------------------------------------- */

/* Mark the connection broken; the reason goes to q->broken and err. */
static int __attribute__((format(printf, 3, 4)))
set_broken(struct qmp *q, struct llcd_err *err, const char *fmt, ...)
{
	va_list ap;

	if (q->state != QMP_STATE_BROKEN) {
		va_start(ap, fmt);
		vsnprintf(q->broken, sizeof(q->broken), fmt, ap);
		va_end(ap);
		q->state = QMP_STATE_BROKEN;
	}
	return llcd_err_set(err, "%s", q->broken);
}

static int
fail_if_broken(const struct qmp *q, struct llcd_err *err)
{
	if (q->state == QMP_STATE_BROKEN)
		return llcd_err_set(err, "%s", q->broken);
	return 0;
}

/* A printable excerpt of untrusted bytes for error messages. */
static const char *
excerpt(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isprint(c) && c < 0x80)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	if (i < len && o + 4 <= size) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* --- output ----------------------------------------------------------- */

static int
out_append(struct qmp *q, const char *s, size_t len, struct llcd_err *err)
{
	size_t live = q->out_len - q->out_off;

	if (live + len + 2 > QMP_OUT_MAX)
		return llcd_err_set(err, "output queue full (%zu bytes pending, limit %d)",
		                    live, QMP_OUT_MAX);
	if (q->out_off > 0) {
		memmove(q->out, q->out + q->out_off, live);
		q->out_off = 0;
		q->out_len = live;
	}
	if (q->out_len + len + 2 > q->out_cap) {
		size_t cap = q->out_cap ? q->out_cap : 4096;
		char *n;

		while (cap < q->out_len + len + 2)
			cap *= 2;
		n = realloc(q->out, cap);
		if (n == NULL)
			return llcd_err_set(err, "out of memory");
		q->out = n;
		q->out_cap = cap;
	}
	memcpy(q->out + q->out_len, s, len);
	memcpy(q->out + q->out_len + len, "\r\n", 2);
	q->out_len += len + 2;
	if (q->trace != NULL)
		q->trace(q->trace_arg, QMP_DIR_OUT, s, len);
	return 0;
}

const char *
qmp_out_peek(const struct qmp *q, size_t *len)
{
	*len = q->out_len - q->out_off;
	return q->out != NULL ? q->out + q->out_off : "";
}

void
qmp_out_consume(struct qmp *q, size_t n)
{
	size_t live = q->out_len - q->out_off;

	q->out_off += n < live ? n : live;
	if (q->out_off == q->out_len)
		q->out_off = q->out_len = 0;
}

/* Serialize and queue one command with id. */
static int
queue_command(struct qmp *q, const char *command, struct json_object *args, uint64_t id,
              struct llcd_err *err)
{
	struct json_object *o;
	const char *s;
	size_t len;
	int rc;

	o = json_object_new_object();
	if (o == NULL)
		return llcd_err_set(err, "out of memory");
	json_object_object_add(o, "execute", json_object_new_string(command));
	if (args != NULL)
		json_object_object_add(o, "arguments", json_object_get(args));
	json_object_object_add(o, "id", json_object_new_uint64(id));
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	if (s == NULL)
		rc = llcd_err_set(err, "out of memory");
	else
		rc = out_append(q, s, len, err);
	json_object_put(o);
	return rc;
}

/* --- pending requests ------------------------------------------------- */

static struct pending *
pend_find(struct qmp *q, uint64_t id)
{
	size_t i;

	for (i = 0; i < q->npend; i++)
		if (q->pend[i].id == id)
			return &q->pend[i];
	return NULL;
}

static void
pend_remove(struct qmp *q, struct pending *p)
{
	json_object_put(p->val);
	*p = q->pend[--q->npend];
	memset(&q->pend[q->npend], 0, sizeof(q->pend[0]));
}

int
qmp_send(struct qmp *q, const char *command, struct json_object *args, uint64_t *id,
         struct llcd_err *err)
{
	struct pending *p;
	uint64_t n;

	if (fail_if_broken(q, err) == -1)
		return -1;
	if (q->state != QMP_STATE_READY)
		return llcd_err_set(err, "cannot send '%s': QMP handshake not complete", command);
	if (command == NULL || command[0] == '\0')
		return llcd_err_set(err, "empty command name");
	if (args != NULL && !json_object_is_type(args, json_type_object))
		return llcd_err_set(err, "arguments of '%s' must be a JSON object", command);
	if (q->npend == QMP_PENDING_MAX)
		return llcd_err_set(err, "cannot send '%s': %d requests already pending",
		                    command, QMP_PENDING_MAX);
	n = q->next_id++;
	if (queue_command(q, command, args, n, err) == -1)
		return llcd_err_prefix(err, "cannot send '%s'", command);
	p = &q->pend[q->npend++];
	memset(p, 0, sizeof(*p));
	p->id = n;
	p->st = PEND_WAITING;
	snprintf(p->cmd, sizeof(p->cmd), "%s", command);
	if (id != NULL)
		*id = n;
	return 0;
}

enum qmp_rc
qmp_reply_take(struct qmp *q, uint64_t id, struct json_object **ret, struct llcd_err *err)
{
	struct pending *p = pend_find(q, id);
	enum qmp_rc rc;

	if (ret != NULL)
		*ret = NULL;
	if (p == NULL || p->st == PEND_ABANDONED) {
		llcd_err_set(err, "no request with id %" PRIu64, id);
		return QMP_ERR_CONN;
	}
	if (p->st == PEND_WAITING) {
		if (fail_if_broken(q, err) == -1)
			return QMP_ERR_CONN;
		return QMP_PENDING;
	}
	rc = p->rc;
	if (rc == QMP_ERR_COMMAND) {
		struct json_object *c = NULL, *d = NULL;

		json_object_object_get_ex(p->val, "class", &c);
		json_object_object_get_ex(p->val, "desc", &d);
		llcd_err_set(err, "%s: %s: %s", p->cmd, json_object_get_string(c),
		             json_object_get_string(d));
	}
	if (ret != NULL) {
		*ret = p->val;
		p->val = NULL;
	}
	pend_remove(q, p);
	return rc;
}

void
qmp_reply_abandon(struct qmp *q, uint64_t id)
{
	struct pending *p = pend_find(q, id);

	if (p == NULL)
		return;
	if (p->st == PEND_DONE || q->state == QMP_STATE_BROKEN)
		pend_remove(q, p);
	else
		p->st = PEND_ABANDONED;
}

/* --- incoming messages ------------------------------------------------ */

static void
event_push(struct qmp *q, struct json_object *ev)
{
	if (q->ev_n == QMP_EVENTS_MAX) {
		json_object_put(qmp_event_next(q));
		q->ev_dropped++;
	}
	q->ev[(q->ev_head + q->ev_n) % QMP_EVENTS_MAX] = ev;
	q->ev_n++;
}

struct json_object *
qmp_event_next(struct qmp *q)
{
	struct json_object *ev;

	if (q->ev_n == 0)
		return NULL;
	ev = q->ev[q->ev_head];
	q->ev[q->ev_head] = NULL;
	q->ev_head = (q->ev_head + 1) % QMP_EVENTS_MAX;
	q->ev_n--;
	return ev;
}

size_t
qmp_events_queued(const struct qmp *q)
{
	return q->ev_n;
}

uint64_t
qmp_events_dropped(const struct qmp *q)
{
	return q->ev_dropped;
}

const char *
qmp_event_name(struct json_object *ev)
{
	struct json_object *n;

	if (!json_object_object_get_ex(ev, "event", &n) || !json_object_is_type(n, json_type_string))
		return "";
	return json_object_get_string(n);
}

/* A version number: an integer in 0..1000000. */
static bool
get_int(struct json_object *o, const char *key, int *v)
{
	int64_t i;

	if (jget_int(o, key, 0, 1000000, &i) != JGET_OK)
		return false;
	*v = (int)i;
	return true;
}

static int
on_greeting(struct qmp *q, struct json_object *m, struct llcd_err *err)
{
	struct json_object *g, *ver, *qemu, *pkg, *caps;
	size_t i;

	if (!json_object_object_get_ex(m, "QMP", &g) || !json_object_is_type(g, json_type_object))
		return set_broken(q, err, "expected the QMP greeting ({\"QMP\": ...}) first");
	if (!json_object_object_get_ex(g, "version", &ver) ||
	    !json_object_object_get_ex(ver, "qemu", &qemu) ||
	    !get_int(qemu, "major", &q->ver_major) || !get_int(qemu, "minor", &q->ver_minor) ||
	    !get_int(qemu, "micro", &q->ver_micro))
		return set_broken(q, err, "malformed QMP greeting: no version.qemu.{major,minor,micro}");
	if (json_object_object_get_ex(ver, "package", &pkg) &&
	    json_object_is_type(pkg, json_type_string))
		snprintf(q->package, sizeof(q->package), "%s", json_object_get_string(pkg));
	if (!json_object_object_get_ex(g, "capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_array))
		return set_broken(q, err, "malformed QMP greeting: no capabilities array");
	for (i = 0; i < json_object_array_length(caps); i++)
		if (!json_object_is_type(json_object_array_get_idx(caps, i), json_type_string))
			return set_broken(q, err, "malformed QMP greeting: capability is not a string");
	q->caps = json_object_get(caps);
	q->caps_id = q->next_id++;
	if (queue_command(q, "qmp_capabilities", NULL, q->caps_id, err) == -1)
		return set_broken(q, err, "cannot send qmp_capabilities: %s", err ? err->msg : "");
	q->state = QMP_STATE_NEGOTIATING;
	return 0;
}

static int
on_reply(struct qmp *q, struct json_object *m, bool ok, struct json_object *val,
         struct llcd_err *err)
{
	struct json_object *idv, *c, *d;
	struct pending *p;
	uint64_t id;

	if (!json_object_object_get_ex(m, "id", &idv))
		return set_broken(q, err, "reply from QEMU without an id");
	if (!json_object_is_type(idv, json_type_int) || json_object_get_int64(idv) < 0)
		return set_broken(q, err, "reply from QEMU with unknown id %s",
		                  json_object_to_json_string(idv));
	id = json_object_get_uint64(idv);
	if (!ok && (!json_object_is_type(val, json_type_object) ||
	            !json_object_object_get_ex(val, "class", &c) ||
	            !json_object_is_type(c, json_type_string) ||
	            !json_object_object_get_ex(val, "desc", &d) ||
	            !json_object_is_type(d, json_type_string)))
		return set_broken(q, err, "malformed error reply from QEMU (id %" PRIu64 ")", id);
	if (q->state == QMP_STATE_NEGOTIATING && id == q->caps_id) {
		if (!ok) {
			json_object_object_get_ex(val, "desc", &d);
			return set_broken(q, err, "qmp_capabilities failed: %s",
			                  json_object_get_string(d));
		}
		q->state = QMP_STATE_READY;
		return 0;
	}
	p = pend_find(q, id);
	if (p == NULL)
		return set_broken(q, err, "reply from QEMU with unknown id %" PRIu64, id);
	if (p->st == PEND_DONE)
		return set_broken(q, err, "second reply from QEMU for id %" PRIu64, id);
	if (p->st == PEND_ABANDONED) {
		pend_remove(q, p);
		return 0;
	}
	p->st = PEND_DONE;
	p->rc = ok ? QMP_OK : QMP_ERR_COMMAND;
	p->val = json_object_get(val);
	return 0;
}

/* One whole message (starting with '{', ending with the matching '}'). */
static int
dispatch(struct qmp *q, const char *msg, size_t len, struct llcd_err *err)
{
	struct json_object *m, *v;
	enum json_tokener_error jerr;
	char ex[100];
	int rc;

	if (q->trace != NULL)
		q->trace(q->trace_arg, QMP_DIR_IN, msg, len);
	json_tokener_reset(q->tok);
	m = json_tokener_parse_ex(q->tok, msg, (int)len);
	jerr = json_tokener_get_error(q->tok);
	if (m == NULL || jerr != json_tokener_success || json_tokener_get_parse_end(q->tok) != len) {
		json_object_put(m);
		if (jerr == json_tokener_success || jerr == json_tokener_continue)
			return set_broken(q, err, "invalid JSON from QEMU: incomplete or trailing data");
		return set_broken(q, err, "invalid JSON from QEMU at byte %zu: %s",
		                  json_tokener_get_parse_end(q->tok), json_tokener_error_desc(jerr));
	}
	if (!json_object_is_type(m, json_type_object)) {
		json_object_put(m);
		return set_broken(q, err, "message from QEMU is not a JSON object");
	}
	if (q->state == QMP_STATE_GREETING)
		rc = on_greeting(q, m, err);
	else if (json_object_object_get_ex(m, "event", &v)) {
		if (!json_object_is_type(v, json_type_string)) {
			rc = set_broken(q, err, "event from QEMU without a name");
		} else {
			event_push(q, json_object_get(m));
			rc = 0;
		}
	} else if (json_object_object_get_ex(m, "return", &v))
		rc = on_reply(q, m, true, v, err);
	else if (json_object_object_get_ex(m, "error", &v))
		rc = on_reply(q, m, false, v, err);
	else if (json_object_object_get_ex(m, "QMP", &v))
		rc = set_broken(q, err, "second QMP greeting from QEMU");
	else
		rc = set_broken(q, err, "unexpected message from QEMU: %s",
		                excerpt(msg, len, ex, sizeof(ex)));
	json_object_put(m);
	return rc;
}

static int
msg_append(struct qmp *q, const char *s, size_t n, struct llcd_err *err)
{
	if (q->msg_len + n > QMP_MSG_MAX)
		return set_broken(q, err, "message from QEMU exceeds %d bytes", QMP_MSG_MAX);
	if (q->msg_len + n > q->msg_cap) {
		size_t cap = q->msg_cap ? q->msg_cap : 4096;
		char *m;

		while (cap < q->msg_len + n)
			cap *= 2;
		if (cap > QMP_MSG_MAX)
			cap = QMP_MSG_MAX;
		m = realloc(q->msg, cap);
		if (m == NULL)
			return set_broken(q, err, "out of memory");
		q->msg = m;
		q->msg_cap = cap;
	}
	memcpy(q->msg + q->msg_len, s, n);
	q->msg_len += n;
	return 0;
}

int
qmp_feed(struct qmp *q, const void *buf, size_t len, struct llcd_err *err)
{
	const char *p = buf;
	size_t i, start = 0;

	if (fail_if_broken(q, err) == -1)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!q->in_msg) {
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
				if (++q->ws > QMP_MSG_MAX)
					return set_broken(q, err, "more than %d bytes of whitespace from QEMU",
					                  QMP_MSG_MAX);
				continue;
			}
			if (c != '{')
				return set_broken(q, err, "unexpected byte 0x%02x from QEMU where a "
				                  "message should start", c);
			q->in_msg = true;
			q->in_str = q->esc = false;
			q->depth = 0;
			q->msg_len = 0;
			start = i;
		}
		if (c == '\0')
			return set_broken(q, err, "NUL byte in a message from QEMU");
		if (q->in_str) {
			if (c < 0x20)
				return set_broken(q, err, "invalid JSON from QEMU: control character "
				                  "0x%02x in a string", c);
			if (q->esc)
				q->esc = false;
			else if (c == '\\')
				q->esc = true;
			else if (c == '"')
				q->in_str = false;
			continue;
		}
		if (strchr(JSON_OUTSIDE, c) == NULL)
			return set_broken(q, err, "invalid JSON from QEMU: unexpected byte 0x%02x "
			                  "outside a string", c);
		if (c == '"') {
			q->in_str = true;
		} else if (c == '{' || c == '[') {
			q->depth++;
		} else if ((c == '}' || c == ']') && --q->depth == 0) {
			if (msg_append(q, p + start, i + 1 - start, err) == -1)
				return -1;
			q->in_msg = false;
			q->ws = 0;
			if (dispatch(q, q->msg, q->msg_len, err) == -1)
				return -1;
			q->msg_len = 0;
		}
	}
	if (q->in_msg && msg_append(q, p + start, len - start, err) == -1)
		return -1;
	return 0;
}

int
qmp_feed_eof(struct qmp *q, struct llcd_err *err)
{
	if (fail_if_broken(q, err) == -1)
		return -1;
	if (q->in_msg)
		return set_broken(q, err, "QEMU closed the connection in the middle of a message "
		                  "(%zu bytes received)", q->msg_len);
	return set_broken(q, err, "QEMU closed the connection");
}

/* --- sockets ---------------------------------------------------------- */

int
qmp_attach(struct qmp *q, int fd, struct llcd_err *err)
{
	int fl;

	if (q->fd != -1 || q->state != QMP_STATE_GREETING || q->in_msg)
		return llcd_err_set(err, "QMP connection already in use");
	fl = fcntl(fd, F_GETFL);
	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		return llcd_err_set(err, "fcntl: %s", strerror(errno));
	q->fd = fd;
	return 0;
}

int
qmp_connect_start(struct qmp *q, const char *path, struct llcd_err *err)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >= (int)sizeof(sa.sun_path))
		return llcd_err_set(err, "%s: socket path too long", path);
	if (q->fd != -1 || q->state != QMP_STATE_GREETING)
		return llcd_err_set(err, "QMP connection already in use");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return llcd_err_set(err, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		int e = errno;

		close(fd);
		return llcd_err_set(err, "connect to %s: %s", path, strerror(e));
	}
	if (qmp_attach(q, fd, err) == -1) {
		close(fd);
		return -1;
	}
	return 0;
}

int
qmp_fd(const struct qmp *q)
{
	return q->fd;
}

short
qmp_poll_events(const struct qmp *q)
{
	if (q->fd == -1 || q->state == QMP_STATE_BROKEN)
		return 0;
	return (short)(POLLIN | (q->out_len > q->out_off ? POLLOUT : 0));
}

int
qmp_step(struct qmp *q, struct llcd_err *err)
{
	char buf[65536];
	int i, werr = 0;
	ssize_t n;

	if (fail_if_broken(q, err) == -1)
		return -1;
	if (q->fd == -1)
		return llcd_err_set(err, "QMP connection has no socket");
	while (q->out_len > q->out_off) {
		n = send(q->fd, q->out + q->out_off, q->out_len - q->out_off,
		         MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				werr = errno;   /* read first: EOF is the better reason */
			break;
		}
		qmp_out_consume(q, (size_t)n);
	}
	for (i = 0; i < READS_PER_STEP; i++) {
		n = recv(q->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			/* a peer that exits with our bytes unread resets the
			 * connection: that too is QEMU closing it */
			if (errno == ECONNRESET)
				return qmp_feed_eof(q, err);
			return set_broken(q, err, "read from QEMU: %s", strerror(errno));
		}
		if (n == 0)
			return qmp_feed_eof(q, err);
		if (qmp_feed(q, buf, (size_t)n, err) == -1)
			return -1;
		if ((size_t)n < sizeof(buf) && werr == 0)
			break;
	}
	if (werr != 0)
		return set_broken(q, err, "write to QEMU: %s", strerror(werr));
	/* a greeting queues qmp_capabilities: send it now */
	if (q->out_len > q->out_off && q->state != QMP_STATE_BROKEN) {
		n = send(q->fd, q->out + q->out_off, q->out_len - q->out_off,
		         MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			qmp_out_consume(q, (size_t)n);
		else if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return set_broken(q, err, "write to QEMU: %s", strerror(errno));
	}
	return 0;
}

/* Poll and step until done(q, arg) or the deadline. */
static enum qmp_rc
wait_for(struct qmp *q, int timeout_ms, bool (*done)(struct qmp *, void *), void *arg,
         struct llcd_err *err)
{
	int64_t deadline = timeout_ms < 0 ? -1 : (int64_t)llcd_mono_ms() + timeout_ms;

	for (;;) {
		struct pollfd pfd;
		int left = -1, r;

		if (done(q, arg))
			return QMP_OK;
		if (fail_if_broken(q, err) == -1)
			return QMP_ERR_CONN;
		if (q->fd == -1) {
			llcd_err_set(err, "QMP connection has no socket");
			return QMP_ERR_CONN;
		}
		if (deadline >= 0) {
			int64_t l = deadline - (int64_t)llcd_mono_ms();

			if (l <= 0)
				return QMP_ERR_TIMEOUT;
			left = l > INT32_MAX ? INT32_MAX : (int)l;
		}
		pfd.fd = q->fd;
		pfd.events = qmp_poll_events(q);
		pfd.revents = 0;
		r = poll(&pfd, 1, left);
		if (r == -1 && errno != EINTR) {
			llcd_err_set(err, "poll: %s", strerror(errno));
			return QMP_ERR_CONN;
		}
		if (r > 0 && qmp_step(q, err) == -1)
			return QMP_ERR_CONN;
	}
}

static bool
is_ready(struct qmp *q, void *arg)
{
	return q->state == QMP_STATE_READY;
}

int
qmp_handshake(struct qmp *q, int timeout_ms, struct llcd_err *err)
{
	switch (wait_for(q, timeout_ms, is_ready, NULL, err)) {
	case QMP_OK:
		return 0;
	case QMP_ERR_TIMEOUT:
		if (q->state == QMP_STATE_GREETING)
			return llcd_err_set(err, "no QMP greeting within %d ms (does another client "
			                    "hold the monitor?)", timeout_ms);
		return llcd_err_set(err, "no reply to qmp_capabilities within %d ms", timeout_ms);
	default:
		return -1;
	}
}

int
qmp_connect(struct qmp *q, const char *path, int timeout_ms, struct llcd_err *err)
{
	if (qmp_connect_start(q, path, err) == -1)
		return -1;
	if (qmp_handshake(q, timeout_ms, err) == -1)
		return llcd_err_prefix(err, "%s", path);
	return 0;
}

static bool
is_answered(struct qmp *q, void *arg)
{
	struct pending *p = pend_find(q, *(uint64_t *)arg);

	return p == NULL || p->st == PEND_DONE;
}

enum qmp_rc
qmp_execute(struct qmp *q, const char *command, struct json_object *args, int timeout_ms,
            struct json_object **ret, struct llcd_err *err)
{
	enum qmp_rc rc;
	uint64_t id;

	if (ret != NULL)
		*ret = NULL;
	if (qmp_send(q, command, args, &id, err) == -1)
		return QMP_ERR_CONN;
	rc = wait_for(q, timeout_ms, is_answered, &id, err);
	if (rc == QMP_ERR_TIMEOUT) {
		qmp_reply_abandon(q, id);
		llcd_err_set(err, "%s: no reply within %d ms", command, timeout_ms);
		return rc;
	}
	if (rc != QMP_OK) {
		qmp_reply_abandon(q, id);
		llcd_err_prefix(err, "%s", command);
		return rc;
	}
	return qmp_reply_take(q, id, ret, err);
}

static bool
has_event(struct qmp *q, void *arg)
{
	return q->ev_n > 0;
}

enum qmp_rc
qmp_event_wait(struct qmp *q, int timeout_ms, struct json_object **ev, struct llcd_err *err)
{
	enum qmp_rc rc;

	*ev = NULL;
	if (q->ev_n == 0 && q->state != QMP_STATE_READY && q->state != QMP_STATE_BROKEN) {
		llcd_err_set(err, "QMP handshake not complete");
		return QMP_ERR_CONN;
	}
	rc = wait_for(q, timeout_ms, has_event, NULL, err);
	if (rc == QMP_OK)
		*ev = qmp_event_next(q);
	else if (rc == QMP_ERR_TIMEOUT)
		llcd_err_set(err, "no event within %d ms", timeout_ms);
	return rc;
}

/* --- accessors -------------------------------------------------------- */

enum qmp_state
qmp_state(const struct qmp *q)
{
	return q->state;
}

const char *
qmp_broken_reason(const struct qmp *q)
{
	return q->state == QMP_STATE_BROKEN ? q->broken : "";
}

void
qmp_version(const struct qmp *q, int *major, int *minor, int *micro)
{
	if (major != NULL)
		*major = q->ver_major;
	if (minor != NULL)
		*minor = q->ver_minor;
	if (micro != NULL)
		*micro = q->ver_micro;
}

const char *
qmp_package(const struct qmp *q)
{
	return q->package;
}

bool
qmp_has_capability(const struct qmp *q, const char *cap)
{
	size_t i;

	if (q->caps == NULL)
		return false;
	for (i = 0; i < json_object_array_length(q->caps); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(q->caps, i)), cap) == 0)
			return true;
	return false;
}

void
qmp_set_trace(struct qmp *q, qmp_trace_fn *fn, void *arg)
{
	q->trace = fn;
	q->trace_arg = arg;
}
