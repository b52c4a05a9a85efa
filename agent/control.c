/* control.c - llcd's control socket server. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	bool events;
	bool closing;           /* close once the queue is flushed */
	struct ctl_reader rd;
	uint8_t *out;
	size_t outlen, outoff, outcap;
};

struct control {
	int lfd;
	char path[108];
	control_handler handler;
	void *ctx;
	struct client *clients[CONTROL_MAX_CLIENTS];
	int nclients;
	struct control_stats stats;
};

static void
client_free(struct client *cl)
{
	if (cl == NULL)
		return;
	if (cl->fd >= 0)
		close(cl->fd);
	ctl_reader_reset(&cl->rd);
	free(cl->out);
	free(cl);
}

static void
client_drop(struct control *c, int i)
{
	client_free(c->clients[i]);
	c->clients[i] = c->clients[--c->nclients];
	c->clients[c->nclients] = NULL;
}

/* Queue a frame; false (and the client marked for dropping) when its queue
 * would exceed the bound. */
static bool
client_queue(struct control *c, struct client *cl, uint16_t type, uint32_t seq, int32_t result,
             const char *payload, size_t len)
{
	size_t flen;
	uint8_t *f;

	if (cl->outlen - cl->outoff + CTL_HDR_LEN + len > CONTROL_MAX_QUEUE) {
		cl->closing = true;
		cl->outlen = cl->outoff = 0;    /* drop what it did not read */
		c->stats.dropped_clients++;
		return false;
	}
	f = ctl_frame(type, seq, result, payload, len, &flen);
	if (f == NULL)
		return false;
	if (cl->outoff > 0 && cl->outoff == cl->outlen)
		cl->outoff = cl->outlen = 0;
	if (cl->outlen + flen > cl->outcap) {
		size_t cap = cl->outcap ? cl->outcap : 4096;
		while (cap < cl->outlen + flen)
			cap *= 2;
		uint8_t *n = realloc(cl->out, cap);
		if (n == NULL) {
			free(f);
			return false;
		}
		cl->out = n;
		cl->outcap = cap;
	}
	memcpy(cl->out + cl->outlen, f, flen);
	cl->outlen += flen;
	free(f);
	return true;
}

static void
client_end(struct control *c, struct client *cl, uint32_t seq, int32_t result, const char *error)
{
	if (result == CTL_OK || error == NULL || *error == '\0') {
		client_queue(c, cl, CTL_END, seq, result, NULL, 0);
		return;
	}
	json_object *o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(error));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	client_queue(c, cl, CTL_END, seq, result, s, strlen(s));
	json_object_put(o);
}

struct control *
control_new(const char *path, gid_t gid, control_handler h, void *ctx, struct llcd_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control *c;
	struct stat st;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		llcd_err_set(err, "control socket path too long: %s", path);
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			llcd_err_set(err, "control socket path %s exists and is not a socket", path);
			return NULL;
		}
		unlink(path);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->handler = h;
	c->ctx = ctx;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		llcd_err_set(err, "control socket: %s", strerror(errno));
		free(c);
		return NULL;
	}
	mode_t old = umask(0117);
	int rc = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(c->lfd, 16) < 0) {
		llcd_err_set(err, "control socket %s: %s", path, strerror(errno));
		close(c->lfd);
		free(c);
		return NULL;
	}
	if ((gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) || chmod(path, 0660) < 0) {
		llcd_err_set(err, "control socket %s: cannot set group/mode: %s", path, strerror(errno));
		close(c->lfd);
		unlink(path);
		free(c);
		return NULL;
	}
	return c;
}

void
control_free(struct control *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->nclients; i++)
		client_free(c->clients[i]);
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->path);
	}
	free(c);
}

int
control_pollfds(const struct control *c, struct pollfd *pfd, int max)
{
	int n = 0;

	if (max < 1)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
	for (int i = 0; i < c->nclients && n < max; i++) {
		const struct client *cl = c->clients[i];
		short ev = cl->closing ? 0 : POLLIN;
		if (cl->outlen > cl->outoff)
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){ .fd = cl->fd, .events = ev };
	}
	return n;
}

static void
accept_clients(struct control *c)
{
	for (;;) {
		int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (c->nclients >= CONTROL_MAX_CLIENTS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			c->stats.dropped_clients++;
			continue;
		}
		struct client *cl = calloc(1, sizeof(*cl));
		if (cl == NULL) {
			close(fd);
			continue;
		}
		cl->fd = fd;
		cl->uid = cred.uid;
		cl->pid = cred.pid;
		ctl_reader_init(&cl->rd, CTL_MAX_REQUEST);
		c->clients[c->nclients++] = cl;
	}
}

static void
handle_frame(struct control *c, struct client *cl)
{
	const struct ctl_hdr *h = &cl->rd.hdr;
	struct control_request req = { .type = h->type, .seq = h->seq, .uid = cl->uid, .pid = cl->pid };
	int rc;

	c->stats.requests++;
	if (!ctl_type_known(h->type) || h->type >= CTL_DATA) {
		client_end(c, cl, h->seq, CTL_E_UNKNOWN, "unknown request type");
		return;
	}
	if (ctl_type_mutates(h->type) && cl->uid != 0) {
		char msg[128];
		c->stats.refused++;
		snprintf(msg, sizeof(msg), "'%s' changes llcd's state and needs root (you are uid %u)",
		    ctl_type_name(h->type), (unsigned)cl->uid);
		client_end(c, cl, h->seq, CTL_E_PERM, msg);
		return;
	}
	req.args = ctl_parse_object((const char *)cl->rd.payload, h->len);
	if (req.args == NULL) {
		c->stats.malformed++;
		client_end(c, cl, h->seq, CTL_E_PROTO, "payload is not one JSON object");
		cl->closing = true;
		return;
	}
	rc = c->handler(c->ctx, &req);
	if (req.reply) {
		const char *s = json_object_to_json_string_ext(req.reply, JSON_C_TO_STRING_PLAIN);
		size_t len = strlen(s);
		if (len > CTL_MAX_REPLY) {
			rc = CTL_E_TOOBIG;
			snprintf(req.error, sizeof(req.error), "reply of %zu bytes exceeds %d", len, CTL_MAX_REPLY);
		} else {
			client_queue(c, cl, CTL_DATA, h->seq, 0, s, len);
		}
		json_object_put(req.reply);
	}
	json_object_put(req.args);
	if (h->type == CTL_EVENTS && rc == CTL_OK) {
		cl->events = true;      /* the stream ends when the client closes */
		return;
	}
	client_end(c, cl, h->seq, rc, req.error);
}

static void
read_client(struct control *c, struct client *cl)
{
	uint8_t buf[8192];
	struct llcd_err err;

	/* at most 32 reads per wake-up, so one chatty client cannot hold the
	 * daemon's loop */
	for (int reads = 0; reads < 32; reads++) {
		ssize_t n = recv(cl->fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				cl->closing = true, cl->outlen = cl->outoff = 0;
			return;
		}
		if (n == 0) {
			cl->closing = true;
			cl->outlen = cl->outoff = 0;    /* peer gone: nothing to flush */
			return;
		}
		size_t off = 0;
		while (off < (size_t)n && !cl->closing) {
			size_t used;
			int rc = ctl_reader_feed(&cl->rd, buf + off, (size_t)n - off, &used, &err);
			off += used;
			if (rc < 0) {
				c->stats.malformed++;
				client_end(c, cl, cl->rd.hdr.seq, -rc, err.msg);
				cl->closing = true;
				return;
			}
			if (rc == 1) {
				handle_frame(c, cl);
				ctl_reader_next(&cl->rd);
			}
		}
	}
}

static void
write_client(struct client *cl)
{
	while (cl->outoff < cl->outlen) {
		ssize_t n = send(cl->fd, cl->out + cl->outoff, cl->outlen - cl->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				cl->closing = true;
				cl->outlen = cl->outoff = 0;
			}
			return;
		}
		cl->outoff += (size_t)n;
	}
	cl->outoff = cl->outlen = 0;
}

void
control_dispatch(struct control *c, const struct pollfd *pfd, int n)
{
	for (int k = 1; k < n; k++) {
		for (int i = 0; i < c->nclients; i++) {
			struct client *cl = c->clients[i];
			if (cl->fd != pfd[k].fd)
				continue;
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				read_client(c, cl);
			if (cl->outlen > cl->outoff)
				write_client(cl);
			break;
		}
	}
	for (int i = 0; i < c->nclients; i++) {
		struct client *cl = c->clients[i];
		if (cl->closing && cl->outlen == cl->outoff) {
			client_drop(c, i);
			i--;
		}
	}
	if (n > 0 && (pfd[0].revents & POLLIN))
		accept_clients(c);
}

void
control_broadcast(struct control *c, struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);

	for (int i = 0; i < c->nclients; i++) {
		struct client *cl = c->clients[i];
		if (cl->events && !cl->closing) {
			client_queue(c, cl, CTL_DATA, 0, 0, s, len);
			write_client(cl);
		}
	}
}

int
control_nclients(const struct control *c)
{
	return c->nclients;
}

void
control_get_stats(const struct control *c, struct control_stats *st)
{
	*st = c->stats;
}
