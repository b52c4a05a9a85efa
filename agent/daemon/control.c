// SPDX-License-Identifier: GPL-2.0-or-later
/* control.c - llcd's control socket server. */
#include "control.h"

#include "clock.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	bool events;
	bool closing;           /* close once the queue is flushed; read no more */
	bool eof;               /* the peer shut its write side: answer, then close */
	bool waiting;           /* a deferred request is not answered yet */
	uint32_t wait_seq;
	uint16_t wait_type;
	uint64_t id;            /* control_answer()'s handle */
	struct ctl_reader rd;
	uint8_t in[CONTROL_IN_BUF];     /* received, not yet fed to rd */
	size_t inoff, inlen;
	uint8_t *out;
	size_t outlen, outoff, outcap;
	uint64_t active_ns;     /* last byte received or sent */
	uint64_t frame_ns;      /* the frame rd holds part of began (fed) */
	uint64_t out_ns;        /* the queue was last empty */
};

struct control {
	int lfd;
	char path[108];
	int lockfd;             /* path.lock, flock'ed for the server's lifetime */
	dev_t dev;              /* the socket this server created */
	ino_t ino;
	control_handler handler;
	void *ctx;
	struct client *clients[CONTROL_MAX_CLIENTS];
	int nclients;
	unsigned rr;            /* rotating start among non-root clients */
	uint64_t next_id;
	uint64_t idle_ns, request_ns, reply_ns;
	size_t max_total, max_uid;
	size_t queued;          /* sum of (outlen - outoff) over all clients */
	size_t freed;           /* bytes of big reply buffers freed since the
	                         * heap was last trimmed (control_dispatch) */
	struct control_stats stats;
};

/* A client's reply buffer bigger than this is freed once it is drained or
 * discarded (not kept at its largest reply's size for the client's life),
 * and past CONTROL_TRIM_BYTES of them the heap is trimmed, so that what
 * the replies leave behind goes back to the system, not only what stays
 * queued (docs/protocol.md's bounds are on resident memory). */
#define CONTROL_KEEP_OUT (64 * 1024)
#define CONTROL_TRIM_BYTES (1024 * 1024)

/* Time from t to now; 0 when t is later (set during this dispatch). */
static uint64_t
since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static size_t
client_queued(const struct client *cl)
{
	return cl->outlen - cl->outoff;
}

/* A drained reply buffer past CONTROL_KEEP_OUT is given back. */
static void
out_release(struct control *c, struct client *cl)
{
	if (cl->outcap <= CONTROL_KEEP_OUT || cl->outoff != cl->outlen)
		return;
	free(cl->out);
	cl->out = NULL;
	c->freed += cl->outcap;
	cl->outcap = 0;
	cl->outlen = cl->outoff = 0;
}

/* Forget what the client did not read (it is gone or being dropped). */
static void
client_discard(struct control *c, struct client *cl)
{
	c->queued -= client_queued(cl);
	cl->outlen = cl->outoff = 0;
	out_release(c, cl);
}

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
	client_discard(c, c->clients[i]);
	c->freed += c->clients[i]->outcap;
	client_free(c->clients[i]);
	c->clients[i] = c->clients[--c->nclients];
	c->clients[c->nclients] = NULL;
}

/* Queue a frame; false (and the client marked for dropping) when its queue
 * would exceed its bound: one reply, or CONTROL_MAX_EVENT_QUEUE of events. */
static bool
client_queue(struct control *c, struct client *cl, uint16_t type, uint32_t seq, int32_t result,
             const char *payload, size_t len)
{
	size_t flen;
	uint8_t *f;
	bool event = type == CTL_DATA && seq == 0 && cl->events;
	size_t bound = CONTROL_MAX_EVENT_QUEUE + (event ? 0 : CTL_MAX_REPLY + 2 * CTL_HDR_LEN + 1024);

	if (cl->closing && cl->outlen == cl->outoff && event)
		return false;
	if (client_queued(cl) + CTL_HDR_LEN + len > bound) {
		cl->closing = true;
		client_discard(c, cl);  /* drop what it did not read */
		c->stats.dropped_clients++;
		return false;
	}
	f = ctl_frame(type, seq, result, payload, len, &flen);
	if (f == NULL)
		return false;
	if (cl->outoff == cl->outlen) {
		cl->outoff = cl->outlen = 0;
		cl->out_ns = llcd_mono_ns();    /* the reply deadline runs from here */
	}
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
	c->queued += flen;
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

/* Take path.lock (created 0644 if missing, never followed if a symlink)
 * before touching the socket: one server per path. Returns the locked fd,
 * -1 with err set (another instance holds it: its pid is in the file). */
static int
take_lock(const char *path, struct llcd_err *err)
{
	char lock[sizeof(((struct control *)0)->path) + 8], pid[32];
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	if ((fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		llcd_err_set(err, "control socket lock %s: %s", lock, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (e == EWOULDBLOCK)
			llcd_err_set(err, "control socket %s: another instance (pid %s) holds %s; stop it first, "
			    "or give this one another socket", path, pid[0] ? pid : "?", lock);
		else
			llcd_err_set(err, "control socket lock %s: %s", lock, strerror(e));
		return -1;
	}
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		llcd_err_set(err, "control socket lock %s: %s", lock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct control *
control_new(const char *path, gid_t gid, control_handler h, void *ctx, struct llcd_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char tmp[sizeof(sa.sun_path)];
	struct control *c;
	struct stat st;
	int lockfd;

	/* bound under a temporary name, given its group and mode, then renamed
	 * over the path: a client never finds the socket before its group is
	 * set, and the group is set with lchown (no symlink followed) */
	if (strlen(path) >= sizeof(sa.sun_path) ||
	    snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		llcd_err_set(err, "control socket path too long: %s", path);
		return NULL;
	}
	/* root creates, renames and chowns names in the socket's directory:
	 * not in one others may write, unless sticky (/tmp: others cannot
	 * rename or remove llcd's names there, and each is made O_EXCL) */
	if (path[0] == '/') {
		const char *base;
		struct llcd_err e;
		int dfd = safefile_opendir_of(path, SAFEFILE_STICKY_OK, &base, &e);
		if (dfd < 0) {
			llcd_err_set(err, "control socket %s: %s", path, e.msg);
			return NULL;
		}
		close(dfd);
	}
	/* one server per path: with the lock held, a socket at path is a
	 * stale one, which the rename below replaces */
	if ((lockfd = take_lock(path, err)) < 0)
		return NULL;
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		llcd_err_set(err, "control socket path %s exists and is not a socket", path);
		close(lockfd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		llcd_err_set(err, "out of memory");
		close(lockfd);
		return NULL;
	}
	c->lockfd = lockfd;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tmp);
	c->handler = h;
	c->ctx = ctx;
	c->idle_ns = (uint64_t)CONTROL_IDLE_MS * 1000000ull;
	c->request_ns = (uint64_t)CONTROL_REQUEST_MS * 1000000ull;
	c->reply_ns = (uint64_t)CONTROL_REPLY_MS * 1000000ull;
	c->max_total = CONTROL_MAX_TOTAL_QUEUE;
	c->max_uid = CONTROL_MAX_UID_QUEUE;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		llcd_err_set(err, "control socket: %s", strerror(errno));
		close(lockfd);
		free(c);
		return NULL;
	}
	unlink(tmp);                    /* a leftover of a crashed start with this pid */
	mode_t old = umask(0117);       /* the socket is created 0660 */
	int rc = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(c->lfd, 16) < 0) {
		llcd_err_set(err, "control socket %s: %s", path, strerror(errno));
		close(c->lfd);
		unlink(tmp);
		close(lockfd);
		free(c);
		return NULL;
	}
	if (lstat(tmp, &st) < 0 || (gid != (gid_t)-1 && lchown(tmp, (uid_t)-1, gid) < 0) ||
	    rename(tmp, path) < 0) {
		llcd_err_set(err, "control socket %s: cannot set its group or put it in place: %s", path,
		    strerror(errno));
		close(c->lfd);
		unlink(tmp);
		close(lockfd);
		free(c);
		return NULL;
	}
	c->dev = st.st_dev;             /* the socket this server created */
	c->ino = st.st_ino;
	return c;
}

void
control_free(struct control *c)
{
	struct stat st;

	if (c == NULL)
		return;
	for (int i = 0; i < c->nclients; i++)
		client_free(c->clients[i]);
	if (c->lfd >= 0) {
		close(c->lfd);
		/* only the socket this server created: never one that took
		 * its place */
		if (lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
			unlink(c->path);
	}
	/* the lock file stays (unlinking it would let two servers hold locks
	 * on two different files); closing releases the lock */
	if (c->lockfd >= 0)
		close(c->lockfd);
	free(c);
}

/* Bytes queued for all clients of uid. */
static size_t
uid_queued(const struct control *c, uid_t uid)
{
	size_t n = 0;

	for (int i = 0; i < c->nclients; i++)
		if (c->clients[i]->uid == uid)
			n += client_queued(c->clients[i]);
	return n;
}

/* A client whose previous reply is still queued, or (not root) while its
 * uid's clients have their share queued or all clients together have
 * too much queued, gets no new request handled: back-pressure instead of
 * memory, and no one uid can fill the whole queue for the others. */
static bool
client_blocked(const struct control *c, const struct client *cl)
{
	if (cl->closing || cl->waiting || client_queued(cl) > 0)
		return true;
	if (cl->uid == 0)
		return false;
	return c->queued >= c->max_total || uid_queued(c, cl->uid) >= c->max_uid;
}

static bool
client_wants_input(const struct control *c, const struct client *cl)
{
	return !cl->closing && !cl->eof && cl->inlen < sizeof(cl->in) && !client_blocked(c, cl);
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
		short ev = client_wants_input(c, cl) ? POLLIN : 0;
		if (cl->outlen > cl->outoff)
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){ .fd = cl->fd, .events = ev };
	}
	return n;
}

bool
control_pending(const struct control *c)
{
	for (int i = 0; c != NULL && i < c->nclients; i++) {
		const struct client *cl = c->clients[i];
		if (cl->inlen > cl->inoff && !client_blocked(c, cl))
			return true;
	}
	return false;
}

void
control_set_idle_timeout(struct control *c, unsigned ms)
{
	c->idle_ns = (uint64_t)ms * 1000000ull;
}

void
control_set_limits(struct control *c, const struct control_limits *l)
{
	c->idle_ns = (uint64_t)l->idle_ms * 1000000ull;
	c->request_ns = (uint64_t)l->request_ms * 1000000ull;
	c->reply_ns = (uint64_t)l->reply_ms * 1000000ull;
	c->max_total = l->max_total_queue;
	c->max_uid = l->max_uid_queue;
}

size_t
control_queued(const struct control *c)
{
	return c->queued;
}

/* Refuse a connection over a slot limit with one frame that says which. */
static void
refuse_busy(struct control *c, int fd, const char *why)
{
	json_object *o = json_object_new_object();
	size_t flen;

	json_object_object_add(o, "error", json_object_new_string(why));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	uint8_t *f = ctl_frame(CTL_END, 0, CTL_E_BUSY, s, strlen(s), &flen);
	if (f != NULL && send(fd, f, flen, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the peer may be gone already; it learns from the close */
	}
	free(f);
	json_object_put(o);
	close(fd);
	c->stats.busy_refused++;
	c->stats.dropped_clients++;
}

static void
accept_clients(struct control *c, uint64_t now)
{
	for (;;) {
		int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			c->stats.dropped_clients++;
			continue;
		}
		int mine = 0, others = 0;
		for (int i = 0; i < c->nclients; i++) {
			if (c->clients[i]->uid == cred.uid)
				mine++;
			if (c->clients[i]->uid != 0)
				others++;
		}
		char why[160];
		if (c->nclients >= CONTROL_MAX_CLIENTS) {
			snprintf(why, sizeof(why), "llcd has %d control connections, its limit", c->nclients);
			refuse_busy(c, fd, why);
			continue;
		}
		if (cred.uid != 0 && others >= CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS) {
			snprintf(why, sizeof(why), "the control connections not kept for root (%d) are all in use",
			    CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS);
			refuse_busy(c, fd, why);
			continue;
		}
		if (cred.uid != 0 && mine >= CONTROL_MAX_PER_UID) {
			snprintf(why, sizeof(why), "uid %u has %d control connections, the limit per user",
			    (unsigned)cred.uid, mine);
			refuse_busy(c, fd, why);
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
		cl->active_ns = cl->out_ns = now;
		cl->id = ++c->next_id;
		ctl_reader_init(&cl->rd, CTL_MAX_REQUEST);
		c->clients[c->nclients++] = cl;
	}
}

static void finish_request(struct control *c, struct client *cl, uint16_t type, uint32_t seq, int rc,
                           struct json_object *reply, char *error);
static void write_client(struct control *c, struct client *cl, uint64_t now);

static void
handle_frame(struct control *c, struct client *cl)
{
	const struct ctl_hdr *h = &cl->rd.hdr;
	struct control_request req = { .type = h->type, .seq = h->seq, .uid = cl->uid, .pid = cl->pid,
	                               .client = cl->id };
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
	if (rc == CONTROL_DEFER) {
		json_object_put(req.reply);
		json_object_put(req.args);
		cl->waiting = true;
		cl->wait_seq = h->seq;
		cl->wait_type = h->type;
		return;
	}
	finish_request(c, cl, h->type, h->seq, rc, req.reply, req.error);
	json_object_put(req.args);
}

/* Queue the reply (taken over) and the END frame of one request. */
static void
finish_request(struct control *c, struct client *cl, uint16_t type, uint32_t seq, int rc,
               struct json_object *reply, char *error)
{
	if (reply) {
		const char *s = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
		size_t len = strlen(s);
		if (len > CTL_MAX_REPLY) {
			rc = CTL_E_TOOBIG;
			snprintf(error, sizeof(((struct control_request *)0)->error), "reply of %zu bytes exceeds %d",
			    len, CTL_MAX_REPLY);
		} else {
			client_queue(c, cl, CTL_DATA, seq, 0, s, len);
		}
		json_object_put(reply);
	}
	if (type == CTL_EVENTS && rc == CTL_OK) {
		cl->events = true;      /* the stream ends when the client closes */
		return;
	}
	client_end(c, cl, seq, rc, error);
}

int
control_answer(struct control *c, uint64_t client, uint32_t seq, int rc, struct json_object *reply,
               const char *error)
{
	struct control_request r;

	for (int i = 0; i < c->nclients; i++) {
		struct client *cl = c->clients[i];
		if (cl->id != client || !cl->waiting || cl->wait_seq != seq)
			continue;
		cl->waiting = false;
		snprintf(r.error, sizeof(r.error), "%s", error ? error : "");
		if (cl->closing) {              /* reset meanwhile: nobody to answer */
			json_object_put(reply);
			return -1;
		}
		finish_request(c, cl, cl->wait_type, seq, rc, reply, r.error);
		write_client(c, cl, llcd_mono_ns());
		cl->active_ns = llcd_mono_ns();
		return 0;
	}
	json_object_put(reply);
	return -1;
}

/* One recv into the client's input buffer (at most CONTROL_IN_BUF held). */
static void
read_client(struct control *c, struct client *cl, uint64_t now)
{
	if (cl->inoff > 0 && cl->inoff == cl->inlen)
		cl->inoff = cl->inlen = 0;
	if (cl->inoff > 0 && cl->inlen == sizeof(cl->in)) {
		memmove(cl->in, cl->in + cl->inoff, cl->inlen - cl->inoff);
		cl->inlen -= cl->inoff;
		cl->inoff = 0;
	}
	if (cl->inlen == sizeof(cl->in))
		return;
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				cl->closing = true;     /* reset: nobody to answer */
				client_discard(c, cl);
			}
			return;
		}
		if (n == 0) {
			cl->eof = true;         /* answer what it sent, then close */
			return;
		}
		cl->inlen += (size_t)n;
		cl->active_ns = now;
		return;
	}
}

/* Feed buffered input until one whole frame is handled; false when the
 * buffer holds no whole frame. */
static bool
frame_started(const struct client *cl)
{
	return cl->rd.hdrgot > 0 || cl->rd.have_hdr;
}

static bool
handle_one(struct control *c, struct client *cl, uint64_t now)
{
	struct llcd_err err;

	while (cl->inoff < cl->inlen && !cl->closing) {
		size_t used;
		bool started = frame_started(cl);
		int rc = ctl_reader_feed(&cl->rd, cl->in + cl->inoff, cl->inlen - cl->inoff, &used, &err);
		cl->inoff += used;
		if (!started && used > 0)
			cl->frame_ns = now;     /* the request deadline runs from here */
		if (rc < 0) {
			c->stats.malformed++;
			client_end(c, cl, cl->rd.hdr.seq, -rc, err.msg);
			cl->closing = true;
			return true;
		}
		if (rc == 1) {
			handle_frame(c, cl);
			ctl_reader_next(&cl->rd);
			return true;
		}
	}
	return false;
}

static void
write_client(struct control *c, struct client *cl, uint64_t now)
{
	while (cl->outoff < cl->outlen) {
		ssize_t n = send(cl->fd, cl->out + cl->outoff, cl->outlen - cl->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				cl->closing = true;
				client_discard(c, cl);
			}
			return;
		}
		cl->outoff += (size_t)n;
		c->queued -= (size_t)n;
		cl->active_ns = now;
	}
	cl->outoff = cl->outlen = 0;
	cl->out_ns = now;
	out_release(c, cl);
}

/* Rounds of one request per client, root's clients first, the others from
 * a rotating start, until the budget is spent or nothing is left. */
static void
handle_requests(struct control *c, uint64_t t0)
{
	int frames = 0;

	for (bool any = true; any;) {
		any = false;
		for (int pass = 0; pass < 2; pass++) {
			int n = c->nclients;
			for (int k = 0; k < n; k++) {
				struct client *cl = c->clients[pass == 0 ? k : (int)((c->rr + (unsigned)k) % (unsigned)n)];
				if ((pass == 0) != (cl->uid == 0) || client_blocked(c, cl) || cl->inoff == cl->inlen)
					continue;
				if (frames >= CONTROL_BUDGET_FRAMES || llcd_mono_ns() - t0 >= CONTROL_BUDGET_NS) {
					c->stats.deferred++;
					return;
				}
				if (handle_one(c, cl, t0)) {
					frames++;
					any = true;
				}
				if (cl->outlen > cl->outoff)
					write_client(c, cl, t0);
			}
		}
	}
}

void
control_dispatch(struct control *c, const struct pollfd *pfd, int n)
{
	uint64_t now = llcd_mono_ns();

	c->rr++;
	for (int k = 1; k < n; k++) {
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR | POLLOUT)))
			continue;
		for (int i = 0; i < c->nclients; i++) {
			struct client *cl = c->clients[i];
			if (cl->fd != pfd[k].fd)
				continue;
			if (pfd[k].revents & (POLLHUP | POLLERR)) {
				/* the peer closed both directions (a shutdown of its
				 * write side alone is POLLIN: answered, then closed):
				 * nobody reads a reply, whatever its request's state
				 * (deferred, blocked, half read). Dropped now: poll
				 * reports POLLHUP whatever events are asked, and a
				 * client kept until its answer made the loop spin */
				if (!cl->closing)
					c->stats.hangups++;
				cl->closing = true;
				client_discard(c, cl);
				break;
			}
			if (cl->outlen > cl->outoff)
				write_client(c, cl, now);
			if ((pfd[k].revents & POLLIN) && !cl->closing && !cl->eof)
				read_client(c, cl, now);
			break;
		}
	}
	handle_requests(c, now);
	for (int i = 0; i < c->nclients; i++) {
		struct client *cl = c->clients[i];
		bool flushed = cl->outlen == cl->outoff;
		bool idle = c->idle_ns > 0 && !cl->events && !cl->waiting && flushed && cl->inoff == cl->inlen &&
		            now - cl->active_ns > c->idle_ns && !frame_started(cl);
		if (idle && !cl->closing)
			c->stats.idle_closed++;
		/* deadlines: a request whole within request_ns of its first
		 * byte (one byte now and then holds no slot), a reply (or an
		 * event backlog) read whole within reply_ns of being queued (a
		 * client that never reads holds no queue) */
		if (!cl->closing && c->request_ns > 0 && frame_started(cl) && cl->inoff == cl->inlen &&
		    since(now, cl->frame_ns) > c->request_ns) {
			char msg[96];
			snprintf(msg, sizeof(msg), "request not complete within %llu ms of its first byte",
			    (unsigned long long)(c->request_ns / 1000000));
			c->stats.request_timeouts++;
			client_end(c, cl, cl->rd.have_hdr ? cl->rd.hdr.seq : 0, CTL_E_PROTO, msg);
			cl->closing = true;
			write_client(c, cl, now);
			flushed = true;         /* said if it fits; closed either way */
		}
		if (!cl->closing && c->reply_ns > 0 && !flushed && since(now, cl->out_ns) > c->reply_ns) {
			c->stats.reply_timeouts++;
			c->stats.dropped_clients++;
			cl->closing = true;
			client_discard(c, cl);
			flushed = true;
		}
		/* a half-closed client is closed once every request it sent is
		 * answered; a follower's stream ends when it closes */
		bool done = cl->eof && flushed && !cl->waiting && (cl->events || cl->inoff == cl->inlen);
		if ((cl->closing && flushed) || done || idle) {
			client_drop(c, i);
			i--;
		}
	}
	if (n > 0 && (pfd[0].revents & POLLIN))
		accept_clients(c, now);
	if (c->freed >= CONTROL_TRIM_BYTES) {
		malloc_trim(0);
		c->freed = 0;
	}
}

void
control_broadcast(struct control *c, struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(s);
	uint64_t now = llcd_mono_ns();

	for (int i = 0; i < c->nclients; i++) {
		struct client *cl = c->clients[i];
		if (cl->events && !cl->closing) {
			client_queue(c, cl, CTL_DATA, 0, 0, s, len);
			write_client(c, cl, now);
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
