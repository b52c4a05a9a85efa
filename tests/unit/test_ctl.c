// SPDX-License-Identifier: GPL-2.0-or-later
/* test_ctl.c - control protocol framing and the control socket server:
 * round trips, hostile frames, the root-only rule with a real non-root
 * peer, events, a client that never reads, and the limits on hostile local
 * clients (slots kept for root, per-uid bound, idle timeout, back-pressure,
 * the per-dispatch work budget, half-close). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "clock.h"
#include "ctl.h"
#include "test_main.h"

/* --- framing ---------------------------------------------------------------- */

static void
test_hdr_roundtrip(void **state)
{
	struct ctl_hdr h = { CTL_MAGIC, CTL_VERSION, CTL_DOMINFO, 17, 0xdeadbeef, -3, 0, 0 }, g;
	uint8_t buf[CTL_HDR_LEN];
	struct llcd_err err;

	ctl_hdr_encode(&h, buf);
	assert_int_equal(buf[0], 'L');
	assert_int_equal(buf[3], 'D');
	assert_int_equal(ctl_hdr_decode(buf, &g, 100, &err), CTL_OK);
	assert_memory_equal(&h, &g, sizeof(h));
	assert_int_equal(ctl_hdr_decode(buf, &g, 16, &err), CTL_E_TOOBIG);
	assert_string_equal(err.msg, "control: frame of 17 bytes exceeds the limit of 16");
	buf[5] = 9;
	assert_int_equal(ctl_hdr_decode(buf, &g, 100, &err), CTL_E_VERSION);
	assert_string_equal(err.msg, "control: protocol version 9, this side speaks 1");
	buf[0] = 'X';
	assert_int_equal(ctl_hdr_decode(buf, &g, 100, &err), CTL_E_PROTO);
	assert_true(ctl_type_mutates(CTL_TUNE));
	assert_false(ctl_type_mutates(CTL_LIST));
	assert_string_equal(ctl_type_name(CTL_POLICY_SET), "policy-set");
	assert_string_equal(ctl_result_name(CTL_E_PERM), "permission denied");
}

static void
test_reader_split_and_batched(void **state)
{
	size_t l1, l2, used;
	uint8_t *f1 = ctl_frame(CTL_LIST, 1, 0, "{\"a\":1}", 7, &l1);
	uint8_t *f2 = ctl_frame(CTL_PING, 2, 0, NULL, 0, &l2);
	uint8_t all[128];
	struct ctl_reader r;
	struct llcd_err err;

	memcpy(all, f1, l1);
	memcpy(all + l1, f2, l2);
	/* every split point of the two frames, fed in two pieces */
	for (size_t cut = 0; cut <= l1 + l2; cut++) {
		int frames = 0;
		ctl_reader_init(&r, 1024);
		size_t pieces[2][2] = { { 0, cut }, { cut, l1 + l2 } };
		for (int p = 0; p < 2; p++) {
			size_t off = pieces[p][0];
			while (off < pieces[p][1]) {
				int rc = ctl_reader_feed(&r, all + off, pieces[p][1] - off, &used, &err);
				assert_true(rc >= 0);
				off += used;
				if (rc == 1) {
					frames++;
					if (frames == 1) {
						assert_int_equal(r.hdr.type, CTL_LIST);
						assert_string_equal((char *)r.payload, "{\"a\":1}");
					} else {
						assert_int_equal(r.hdr.type, CTL_PING);
						assert_int_equal(r.hdr.len, 0);
					}
					ctl_reader_next(&r);
				} else if (used == 0) {
					break;
				}
			}
		}
		/* a zero-length frame completes with its header */
		if (r.have_hdr && r.hdr.len == 0) {
			assert_int_equal(ctl_reader_feed(&r, all, 0, &used, &err), 1);
			frames++;
		}
		assert_int_equal(frames, 2);
		ctl_reader_reset(&r);
	}
	/* a NUL inside the payload is refused */
	uint8_t *f3 = ctl_frame(CTL_LIST, 3, 0, "{\"\0\":1}", 7, &l1);
	ctl_reader_init(&r, 1024);
	assert_int_equal(ctl_reader_feed(&r, f3, l1, &used, &err), -CTL_E_PROTO);
	assert_string_equal(err.msg, "control: payload contains a NUL byte");
	ctl_reader_reset(&r);
	free(f1);
	free(f2);
	free(f3);
}

/* --- server ------------------------------------------------------------------ */

#define BIG_REPLY (1536 * 1024)

struct srv {
	struct control *c;
	char dir[64], path[128];
	pthread_t th;
	volatile int stop;
	int handled, mutating, lists;
	volatile long loops;            /* srv_main's polls */
	uint64_t deferred_client;       /* the last CTL_TOPOLOGY, deferred */
	uint32_t deferred_seq;
	pthread_mutex_t mu;
};

/* The server's counters now. */
static struct control_stats
stats_of(const struct control *c)
{
	struct control_stats st;

	control_get_stats(c, &st);
	return st;
}

static int
handler(void *ctx, struct control_request *req)
{
	struct srv *s = ctx;
	s->handled++;
	switch (req->type) {
	case CTL_PING:
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "version", json_object_new_string("test"));
		return CTL_OK;
	case CTL_DOMINFO: {
		json_object *d;
		if (!json_object_object_get_ex(req->args, "domain", &d)) {
			snprintf(req->error, sizeof(req->error), "missing 'domain'");
			return CTL_E_INVAL;
		}
		snprintf(req->error, sizeof(req->error), "domain '%s' not found", json_object_get_string(d));
		return CTL_E_NODOMAIN;
	}
	case CTL_EVENTS:
		return CTL_OK;
	case CTL_TUNE:
		s->mutating++;
		return CTL_OK;
	case CTL_LIST:
		s->lists++;
		return CTL_OK;
	case CTL_MAP: {                 /* a big reply (map of 2,000 domains) */
		char *big = malloc(BIG_REPLY + 1);
		memset(big, 'm', BIG_REPLY);
		big[BIG_REPLY] = '\0';
		req->reply = json_object_new_object();
		json_object_object_add(req->reply, "blob", json_object_new_string(big));
		free(big);
		return CTL_OK;
	}
	case CTL_TOPOLOGY:              /* answered later (control_answer) */
		s->deferred_client = req->client;
		s->deferred_seq = req->seq;
		return CONTROL_DEFER;
	default:
		return CTL_E_UNSUPPORTED;
	}
}

static void *
srv_main(void *arg)
{
	struct srv *s = arg;
	while (!s->stop) {
		struct pollfd pfd[CONTROL_MAX_CLIENTS + 1];
		pthread_mutex_lock(&s->mu);
		int n = control_pollfds(s->c, pfd, CONTROL_MAX_CLIENTS + 1);
		pthread_mutex_unlock(&s->mu);
		if (poll(pfd, (nfds_t)n, 20) < 0)
			continue;
		pthread_mutex_lock(&s->mu);
		control_dispatch(s->c, pfd, n);
		s->loops++;
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

static int
srv_setup(void **state)
{
	struct srv *s = calloc(1, sizeof(*s));
	struct llcd_err err;
	snprintf(s->dir, sizeof(s->dir), "/tmp/llcd-ctl-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	chmod(s->dir, 0755);
	snprintf(s->path, sizeof(s->path), "%s/llcd.sock", s->dir);
	s->c = control_new(s->path, (gid_t)-1, handler, s, &err);
	assert_non_null(s->c);
	pthread_mutex_init(&s->mu, NULL);
	pthread_create(&s->th, NULL, srv_main, s);
	*state = s;
	return 0;
}

static int
srv_teardown(void **state)
{
	struct srv *s = *state;
	s->stop = 1;
	pthread_join(s->th, NULL);
	control_free(s->c);
	char lock[sizeof(s->path) + 8];
	snprintf(lock, sizeof(lock), "%s.lock", s->path);
	unlink(lock);                   /* the lock file stays by design */
	rmdir(s->dir);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return 0;
}

/* The first frame of a reply on fd, into r (initialised here); fails the
 * test unless one comes. */
static void
first_frame(int fd, struct ctl_reader *r)
{
	struct llcd_err err;

	ctl_reader_init(r, CTL_MAX_REPLY);
	if (ctl_recv(fd, r, &err) != 1)
		fail_msg("no reply frame: %s", err.msg);
}

/* The frame on fd after the one r holds; fails the test unless one comes. */
static void
next_frame(int fd, struct ctl_reader *r)
{
	struct llcd_err err;

	ctl_reader_next(r);
	if (ctl_recv(fd, r, &err) != 1)
		fail_msg("no next frame: %s", err.msg);
}

/* A client's end: its reader reset, its connection closed; rc returned. */
static int
hang_up(struct ctl_reader *r, int fd, int rc)
{
	ctl_reader_reset(r);
	close(fd);
	return rc;
}

/* Send one request and collect frames until END; returns END's result. */
static int
request(const char *path, uint16_t type, const char *json, char *data, size_t datalen, char *error,
        size_t errlen)
{
	struct llcd_err err;
	struct ctl_reader r;
	int fd = ctl_connect(path, &err), result = -1;

	assert_true(fd >= 0);
	assert_int_equal(ctl_send(fd, type, 42, json, &err), 0);
	ctl_reader_init(&r, CTL_MAX_REPLY);
	if (data)
		data[0] = '\0';
	if (error)
		error[0] = '\0';
	while (ctl_recv(fd, &r, &err) == 1) {
		assert_int_equal(r.hdr.seq, 42);
		if (r.hdr.type == CTL_DATA && data)
			snprintf(data, datalen, "%s", (char *)r.payload);
		if (r.hdr.type == CTL_END) {
			result = r.hdr.result;
			if (error && r.hdr.len)
				snprintf(error, errlen, "%s", (char *)r.payload);
			ctl_reader_next(&r);
			break;
		}
		ctl_reader_next(&r);
	}
	return hang_up(&r, fd, result);
}

static void
test_server_requests(void **state)
{
	struct srv *s = *state;
	char data[256], error[256];
	struct stat st;

	assert_int_equal(stat(s->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	assert_int_equal(request(s->path, CTL_PING, NULL, data, sizeof(data), error, sizeof(error)), CTL_OK);
	assert_string_equal(data, "{\"version\":\"test\"}");
	assert_int_equal(request(s->path, CTL_DOMINFO, "{\"domain\":\"vm1\"}", data, sizeof(data), error,
	    sizeof(error)), CTL_E_NODOMAIN);
	assert_string_equal(error, "{\"error\":\"domain 'vm1' not found\"}");
	assert_int_equal(request(s->path, CTL_DOMINFO, "{}", NULL, 0, error, sizeof(error)), CTL_E_INVAL);
	assert_int_equal(request(s->path, 999, "{}", NULL, 0, error, sizeof(error)), CTL_E_UNKNOWN);
	assert_int_equal(request(s->path, CTL_LIST, "[1,2]", NULL, 0, error, sizeof(error)), CTL_E_PROTO);
	assert_string_equal(error, "{\"error\":\"payload is not one JSON object\"}");
	assert_int_equal(request(s->path, CTL_LIST, "{\"a\":1} trailing", NULL, 0, NULL, 0), CTL_E_PROTO);
	/* root may mutate */
	assert_int_equal(request(s->path, CTL_TUNE, "{\"knob\":\"x\"}", NULL, 0, NULL, 0), CTL_OK);
	assert_int_equal(s->mutating, 1);
}

static void
test_server_hostile_frames(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	struct ctl_reader r;
	uint8_t hdr[CTL_HDR_LEN];

	/* an oversized frame: error result, then the connection closes */
	struct ctl_hdr h = { CTL_MAGIC, CTL_VERSION, CTL_LIST, CTL_MAX_REQUEST + 1, 7, 0, 0, 0 };
	ctl_hdr_encode(&h, hdr);
	int fd = ctl_connect(s->path, &err);
	assert_int_equal(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	first_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_END);
	assert_int_equal(r.hdr.result, CTL_E_TOOBIG);
	ctl_reader_next(&r);
	assert_int_equal(ctl_recv(fd, &r, &err), 0);   /* closed */
	close(fd);
	/* garbage that is not a frame */
	fd = ctl_connect(s->path, &err);
	assert_int_equal(send(fd, "GET / HTTP/1.0\r\n\r\n0123456789", 28, 0), 28);
	assert_int_equal(ctl_recv(fd, &r, &err), 1);
	assert_int_equal(r.hdr.result, CTL_E_PROTO);
	ctl_reader_next(&r);
	assert_int_equal(ctl_recv(fd, &r, &err), 0);
	close(fd);
	ctl_reader_reset(&r);
	/* a client that connects and stalls mid-header does not block others */
	int stall = ctl_connect(s->path, &err);
	assert_int_equal(send(stall, hdr, 5, 0), 5);
	char data[64];
	assert_int_equal(request(s->path, CTL_PING, NULL, data, sizeof(data), NULL, 0), CTL_OK);
	close(stall);
}

static void
test_server_nonroot_refused(void **state)
{
	struct srv *s = *state;

	if (getuid() != 0)
		fail_msg("this test needs root to switch to an unprivileged uid (run the suite as root)");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the child becomes 'nobody' and talks to the socket it may use */
		chown(s->path, 65534, (gid_t)-1);
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		char error[256];
		struct llcd_err err;
		int fd = ctl_connect(s->path, &err);
		if (fd < 0)
			_exit(11);
		close(fd);
		if (request(s->path, CTL_PING, NULL, NULL, 0, NULL, 0) != CTL_OK)
			_exit(12);
		if (request(s->path, CTL_TUNE, "{}", NULL, 0, error, sizeof(error)) != CTL_E_PERM)
			_exit(13);
		if (strcmp(error, "{\"error\":\"'tune' changes llcd's state and needs root (you are uid 65534)\"}"))
			_exit(14);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	chown(s->path, 0, (gid_t)-1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(s->mutating, 0);
	assert_int_equal(stats_of(s->c).refused, 1);
}

/* A client of s that asked for events (request seq). */
static int
follow_events(struct srv *s, uint32_t seq)
{
	struct llcd_err err;
	int fd = ctl_connect(s->path, &err);

	assert_int_equal(ctl_send(fd, CTL_EVENTS, seq, "{}", &err), 0);
	return fd;
}

static void
test_server_events_and_slow_reader(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	struct ctl_reader r;

	/* a follower gets broadcasts */
	int fd = follow_events(s, 5);
	/* a second follower never reads */
	int slow = follow_events(s, 6);
	int rcvbuf = 4096;
	setsockopt(slow, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	usleep(100000);
	assert_int_equal(control_nclients(s->c), 2);
	json_object *ev = json_object_new_object();
	json_object_object_add(ev, "event", json_object_new_string("pin"));
	pthread_mutex_lock(&s->mu);
	control_broadcast(s->c, ev);
	pthread_mutex_unlock(&s->mu);
	first_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_DATA);
	assert_string_equal((char *)r.payload, "{\"event\":\"pin\"}");
	ctl_reader_next(&r);
	/* flood: the slow reader's queue overflows and it is dropped; the
	 * other follower keeps up and stays */
	char *big = malloc(256 * 1024);
	memset(big, 'x', 256 * 1024 - 1);
	big[256 * 1024 - 1] = '\0';
	json_object *bev = json_object_new_object();
	json_object_object_add(bev, "blob", json_object_new_string(big));
	for (int i = 0; i < 64; i++) {
		pthread_mutex_lock(&s->mu);
		control_broadcast(s->c, bev);
		pthread_mutex_unlock(&s->mu);
		assert_int_equal(ctl_recv(fd, &r, &err), 1);
		assert_int_equal(r.hdr.len, strlen(json_object_to_json_string_ext(bev, JSON_C_TO_STRING_PLAIN)));
		ctl_reader_next(&r);
	}
	usleep(100000);
	assert_true(stats_of(s->c).dropped_clients >= 1);
	assert_int_equal(control_nclients(s->c), 1);
	ctl_reader_reset(&r);
	json_object_put(ev);
	json_object_put(bev);
	free(big);
	close(fd);
	close(slow);
}


/* A client that sends its request and shuts down its write side still gets
 * the reply. */
static void
test_server_half_close(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	struct ctl_reader r;
	int fd = ctl_connect(s->path, &err);

	assert_true(fd >= 0);
	assert_int_equal(ctl_send(fd, CTL_PING, 9, NULL, &err), 0);
	assert_int_equal(ctl_send(fd, CTL_DOMINFO, 10, "{}", &err), 0);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	first_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_DATA);
	assert_string_equal((char *)r.payload, "{\"version\":\"test\"}");
	next_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_END);
	assert_int_equal(r.hdr.seq, 9);
	assert_int_equal(r.hdr.result, CTL_OK);
	next_frame(fd, &r);
	assert_int_equal(r.hdr.seq, 10);
	assert_int_equal(r.hdr.result, CTL_E_INVAL);
	ctl_reader_next(&r);
	assert_int_equal(ctl_recv(fd, &r, &err), 0);   /* then llcd closes */
	ctl_reader_reset(&r);
	close(fd);
}

/* Four unprivileged uids open 16 connections each (64, every slot there
 * is) and keep them: the per-uid bound and the slots kept for root leave
 * root a way in, and the connections over a limit are told why. */
static void
test_server_root_slots(void **state)
{
	struct srv *s = *state;
	int ready[2], hold[2];

	if (getuid() != 0)
		fail_msg("this test needs root to switch to unprivileged uids (run the suite as root)");
	assert_int_equal(chmod(s->path, 0666), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid_t kids[4];
	for (int u = 0; u < 4; u++) {
		kids[u] = fork();
		assert_true(kids[u] >= 0);
		if (kids[u] > 0)
			continue;
		close(ready[0]);
		close(hold[1]);
		uid_t uid = (uid_t)(65534 - u);
		if (setgid(65534) < 0 || setuid(uid) < 0)
			_exit(10);
		int fds[18], busy = 0;
		struct llcd_err err;
		for (int i = 0; i < 18; i++) {
			fds[i] = ctl_connect(s->path, &err);
			if (fds[i] < 0)
				_exit(11);
			usleep(20000);  /* let the server accept in order */
		}
		/* the server answers connections over a limit with CTL_E_BUSY */
		for (int i = 0; i < 18; i++) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };
			if (poll(&p, 1, 200) == 1) {
				struct ctl_reader r;
				ctl_reader_init(&r, CTL_MAX_REPLY);
				if (ctl_recv(fds[i], &r, &err) == 1 && r.hdr.result == CTL_E_BUSY)
					busy++;
				ctl_reader_reset(&r);
			}
		}
		char b = (char)busy;
		if (write(ready[1], &b, 1) != 1)
			_exit(12);
		if (read(hold[0], &b, 1) < 0)   /* hold the others open until told */
			_exit(13);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	int busy = 0;
	for (int u = 0; u < 4; u++) {
		char b;
		assert_int_equal(read(ready[0], &b, 1), 1);
		busy += b;
	}
	/* 72 tried: 16 per uid at most, 56 for all of them together */
	assert_int_equal(control_nclients(s->c), CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS);
	assert_int_equal(busy, 4 * 18 - (CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS));
	char data[64];
	assert_int_equal(request(s->path, CTL_PING, NULL, data, sizeof(data), NULL, 0), CTL_OK);
	assert_string_equal(data, "{\"version\":\"test\"}");
	close(hold[1]);
	for (int u = 0; u < 4; u++) {
		int status;
		waitpid(kids[u], &status, 0);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	close(ready[0]);
	chmod(s->path, 0660);
	assert_int_equal(stats_of(s->c).busy_refused, (uint64_t)busy);
}

/* A client that sends nothing is closed after the idle timeout; a follower
 * of events is not. */
static void
test_server_idle_timeout(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	struct ctl_reader r;

	pthread_mutex_lock(&s->mu);
	control_set_idle_timeout(s->c, 200);
	pthread_mutex_unlock(&s->mu);
	int idle = ctl_connect(s->path, &err);
	int follower = follow_events(s, 1);
	struct pollfd p = { .fd = idle, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);        /* closed by llcd */
	ctl_reader_init(&r, CTL_MAX_REPLY);
	assert_int_equal(ctl_recv(idle, &r, &err), 0);
	usleep(300000);
	assert_int_equal(control_nclients(s->c), 1);  /* the follower stays */
	assert_int_equal(stats_of(s->c).idle_closed, 1);
	ctl_reader_reset(&r);
	close(idle);
	close(follower);
}


/* Polls of the server thread over ms. */
static long
loops_over(struct srv *s, int ms)
{
	long l0 = s->loops;

	usleep((useconds_t)ms * 1000);
	return s->loops - l0;
}

/* A client that sends a deferred request (topology DOMAIN) and closes at
 * once is dropped at once: it used to stay in the poll set until its
 * answer, and poll's POLLHUP made the loop spin (66,512
 * polls in 3 s). The server thread polls with a 20 ms timeout: about 50
 * polls a second when nothing happens. */
static void
test_server_hangup_deferred(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;

	long quiet = loops_over(s, 500);
	int fd = ctl_connect(s->path, &err);
	assert_int_equal(ctl_send(fd, CTL_TOPOLOGY, 3, "{\"domain\":\"vm1\"}", &err), 0);
	for (int i = 0; i < 100 && s->deferred_seq != 3; i++)
		usleep(10000);
	assert_int_equal(s->deferred_seq, 3);   /* deferred: waiting for its answer */
	close(fd);
	long polls = loops_over(s, 1000);
	print_message("polls in 1 s: %ld with the client closed (%ld in 0.5 s before it)\n", polls, quiet);
	assert_true(polls < 500);
	assert_int_equal(control_nclients(s->c), 0);
	assert_int_equal(stats_of(s->c).hangups, 1);
	/* its answer comes later and is dropped */
	pthread_mutex_lock(&s->mu);
	assert_int_equal(control_answer(s->c, s->deferred_client, 3, CTL_OK, json_object_new_object(), NULL), -1);
	pthread_mutex_unlock(&s->mu);
}

/* fork a child that becomes uid and runs fn(s, arg); returns its pid */
static pid_t
as_uid(struct srv *s, uid_t uid, int (*fn)(struct srv *, int), int arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(uid) < 0)
			_exit(10);
		_exit(fn(s, arg));
	}
	return pid;
}

static int
wait_child(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int hold_pipe[2];

/* n connections, each asks for a big reply and never reads it; held until
 * hold_pipe is closed */
static int
never_read(struct srv *s, int n)
{
	struct llcd_err err;
	int fds[CONTROL_MAX_PER_UID];
	char b;

	close(hold_pipe[1]);
	for (int i = 0; i < n; i++) {
		int rcvbuf = 4096;
		if ((fds[i] = ctl_connect(s->path, &err)) < 0)
			return 11;
		setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		if (ctl_send(fds[i], CTL_MAP, 1, NULL, &err) < 0)
			return 12;
	}
	if (read(hold_pipe[0], &b, 1) < 0)
		return 13;
	return 0;
}

/* a ping answered within 3 s, else 20 (refused or reset: 21) */
static int
ping_soon(struct srv *s, int unused)
{
	struct llcd_err err;
	struct ctl_reader r;
	struct pollfd p;
	int fd = ctl_connect(s->path, &err), rc = 20;

	(void)unused;
	close(hold_pipe[1]);
	if (fd < 0 || ctl_send(fd, CTL_PING, 5, NULL, &err) < 0)
		return 21;
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 3000) != 1)
		return 20;
	ctl_reader_init(&r, CTL_MAX_REPLY);
	if (ctl_recv(fd, &r, &err) == 1 && r.hdr.type == CTL_DATA)
		rc = 0;
	else
		rc = 21;
	return hang_up(&r, fd, rc);
}

/* Two member uids fill 16 connections each with a big reply they never
 * read: their share of the queue is bounded (CONTROL_MAX_UID_QUEUE), so a
 * third uid is answered at once; it used to wait until it was reset
 * (32 MiB held for ever). And a reply nobody reads is
 * dropped after the reply deadline, its memory freed. */
static void
test_server_queue_share(void **state)
{
	struct srv *s = *state;

	if (getuid() != 0)
		fail_msg("this test needs root to switch to unprivileged uids (run the suite as root)");
	assert_int_equal(chmod(s->path, 0666), 0);
	assert_int_equal(pipe(hold_pipe), 0);
	pid_t a = as_uid(s, 65534, never_read, CONTROL_MAX_PER_UID);
	pid_t b = as_uid(s, 65533, never_read, CONTROL_MAX_PER_UID);
	size_t q = 0;
	for (int i = 0; i < 300; i++) {         /* until both have filled what they may */
		usleep(10000);
		pthread_mutex_lock(&s->mu);
		size_t now = control_queued(s->c);
		pthread_mutex_unlock(&s->mu);
		if (now == q && i > 50)
			break;
		q = now;
	}
	print_message("queued by two uids that never read: %zu MiB (bound %d + %d per uid)\n", q >> 20,
	    CONTROL_MAX_UID_QUEUE >> 20, CTL_MAX_REPLY >> 20);
	assert_true(q <= 2 * (size_t)(CONTROL_MAX_UID_QUEUE + CTL_MAX_REPLY));
	pid_t c = as_uid(s, 65532, ping_soon, 0);
	assert_int_equal(wait_child(c), 0);     /* a third member is answered */
	/* the reply deadline: what they never read is dropped */
	struct control_limits lim = { CONTROL_IDLE_MS, CONTROL_REQUEST_MS, 300, CONTROL_MAX_TOTAL_QUEUE,
	                              CONTROL_MAX_UID_QUEUE };
	pthread_mutex_lock(&s->mu);
	control_set_limits(s->c, &lim);
	pthread_mutex_unlock(&s->mu);
	for (int i = 0; i < 300 && stats_of(s->c).reply_timeouts < 2 * CONTROL_MAX_PER_UID; i++)
		usleep(10000);
	assert_int_equal(stats_of(s->c).reply_timeouts, 2 * CONTROL_MAX_PER_UID);
	pthread_mutex_lock(&s->mu);
	assert_int_equal(control_queued(s->c), 0);
	pthread_mutex_unlock(&s->mu);
	close(hold_pipe[0]);
	close(hold_pipe[1]);
	assert_int_equal(wait_child(a), 0);
	assert_int_equal(wait_child(b), 0);
	chmod(s->path, 0660);
}

/* A client blocked by back-pressure (the whole queue is full) that closes
 * is dropped at once too (0.93 CPU spinning). */
static void
test_server_hangup_blocked(void **state)
{
	struct srv *s = *state;
	struct control_limits lim = { CONTROL_IDLE_MS, CONTROL_REQUEST_MS, CONTROL_REPLY_MS, 4096,
	                              CONTROL_MAX_UID_QUEUE };
	struct llcd_err err;

	if (getuid() != 0)
		fail_msg("this test needs root to switch to unprivileged uids (run the suite as root)");
	assert_int_equal(chmod(s->path, 0666), 0);
	pthread_mutex_lock(&s->mu);
	control_set_limits(s->c, &lim);
	pthread_mutex_unlock(&s->mu);
	assert_int_equal(pipe(hold_pipe), 0);
	pid_t a = as_uid(s, 65534, never_read, 1);      /* fills the (small) queue */
	for (int i = 0; i < 300 && control_queued(s->c) < 4096; i++)
		usleep(10000);
	assert_true(control_queued(s->c) >= 4096);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {                 /* a member whose request waits, and who closes */
		if (setgid(65534) < 0 || setuid(65533) < 0)
			_exit(10);
		int fd = ctl_connect(s->path, &err);
		if (fd < 0 || ctl_send(fd, CTL_PING, 1, NULL, &err) < 0)
			_exit(11);
		usleep(100000);
		_exit(0);               /* closes */
	}
	assert_int_equal(wait_child(pid), 0);
	long polls = loops_over(s, 1000);
	print_message("polls in 1 s with a blocked client closed: %ld\n", polls);
	assert_true(polls < 500);
	assert_int_equal(control_nclients(s->c), 1);    /* the reader that holds the queue */
	assert_true(stats_of(s->c).hangups >= 1);
	close(hold_pipe[0]);
	close(hold_pipe[1]);
	assert_int_equal(wait_child(a), 0);
	chmod(s->path, 0660);
}

/* A request must be whole within the request deadline of its first byte:
 * one header byte every 100 ms kept a connection for ever (the idle
 * timeout counts from the last byte); now it gets an error and is closed. */
static void
test_server_request_deadline(void **state)
{
	struct srv *s = *state;
	struct control_limits lim = { 200, 500, CONTROL_REPLY_MS, CONTROL_MAX_TOTAL_QUEUE, CONTROL_MAX_UID_QUEUE };
	struct llcd_err err;
	struct ctl_reader r;
	uint8_t hdr[CTL_HDR_LEN];
	struct ctl_hdr h = { CTL_MAGIC, CTL_VERSION, CTL_PING, 0, 7, 0, 0, 0 };

	pthread_mutex_lock(&s->mu);
	control_set_limits(s->c, &lim);
	pthread_mutex_unlock(&s->mu);
	ctl_hdr_encode(&h, hdr);
	int fd = ctl_connect(s->path, &err);
	uint64_t t0 = llcd_mono_ns();
	bool closed = false;
	for (int i = 0; i < CTL_HDR_LEN - 1 && !closed; i++) {
		if (send(fd, hdr + i, 1, MSG_NOSIGNAL) != 1)
			closed = true;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) == 1)
			closed = true;
	}
	assert_true(closed);
	double s_after = (double)(llcd_mono_ns() - t0) / 1e9;
	print_message("closed after %.2f s (deadline 0.5 s)\n", s_after);
	assert_true(s_after < 2.0);
	first_frame(fd, &r);
	assert_int_equal(r.hdr.result, CTL_E_PROTO);
	assert_string_equal((char *)r.payload, "{\"error\":\"request not complete within 500 ms of its first byte\"}");
	ctl_reader_next(&r);
	assert_int_equal(ctl_recv(fd, &r, &err), 0);
	ctl_reader_reset(&r);
	close(fd);
	assert_int_equal(stats_of(s->c).request_timeouts, 1);
	/* a whole request sent slowly within the deadline is answered */
	fd = ctl_connect(s->path, &err);
	for (int i = 0; i < CTL_HDR_LEN; i++) {
		assert_int_equal(send(fd, hdr + i, 1, MSG_NOSIGNAL), 1);
		usleep(5000);
	}
	first_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_DATA);
	ctl_reader_reset(&r);
	close(fd);
}

/* Pipeline n requests in one write (small sends would each take a socket
 * buffer's worth of bookkeeping and block long before the bytes add up). */
static void
send_frames(int fd, uint16_t type, int n)
{
	size_t flen, len = 0;
	uint8_t *buf = NULL;

	for (int i = 0; i < n; i++) {
		uint8_t *f = ctl_frame(type, (uint32_t)i + 1, 0, NULL, 0, &flen);
		buf = realloc(buf, len + flen);
		memcpy(buf + len, f, flen);
		len += flen;
		free(f);
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = send(fd, buf + off, len - off, 0);
		assert_true(w > 0);
		off += (size_t)w;
	}
	free(buf);
}

/* A client that pipelines requests and reads no reply gets one reply queued,
 * not one per request; once it reads, every request is answered in order. */
static void
test_server_backpressure(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	struct ctl_reader r;
	enum { N = 2000 };
	int fd = ctl_connect(s->path, &err);
	int rcvbuf = 4096;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	send_frames(fd, CTL_PING, N);
	usleep(300000);
	pthread_mutex_lock(&s->mu);
	int handled = s->handled;
	size_t queued = control_queued(s->c);
	pthread_mutex_unlock(&s->mu);
	assert_true(handled < N);
	assert_true(queued <= 256);    /* at most the reply not yet sent */
	ctl_reader_init(&r, CTL_MAX_REPLY);
	for (int i = 0; i < N; i++) {
		assert_int_equal(ctl_recv(fd, &r, &err), 1);
		assert_int_equal(r.hdr.type, CTL_DATA);
		assert_int_equal(r.hdr.seq, (uint32_t)i + 1);
		ctl_reader_next(&r);
		assert_int_equal(ctl_recv(fd, &r, &err), 1);
		assert_int_equal(r.hdr.type, CTL_END);
		ctl_reader_next(&r);
	}
	ctl_reader_reset(&r);
	close(fd);
}

/* One dispatch handles a bounded amount of work, one request per client per
 * round: a flood of pipelined requests from one client leaves the others'
 * requests answered in the same dispatch and the rest for later. */
static void
test_server_budget(void **state)
{
	struct srv s = { 0 };
	struct llcd_err err;
	struct pollfd pfd[CONTROL_MAX_CLIENTS + 1];
	enum { N = 2000 };

	snprintf(s.dir, sizeof(s.dir), "/tmp/llcd-ctl-XXXXXX");
	assert_non_null(mkdtemp(s.dir));
	snprintf(s.path, sizeof(s.path), "%s/llcd.sock", s.dir);
	s.c = control_new(s.path, (gid_t)-1, handler, &s, &err);
	assert_non_null(s.c);
	int flood = ctl_connect(s.path, &err), other = ctl_connect(s.path, &err);
	int n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
	assert_int_equal(poll(pfd, (nfds_t)n, 1000), 1);
	control_dispatch(s.c, pfd, n);  /* accepts both */
	assert_int_equal(control_nclients(s.c), 2);
	send_frames(flood, CTL_PING, N);
	assert_int_equal(ctl_send(other, CTL_LIST, 1, NULL, &err), 0);
	usleep(50000);
	n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
	assert_true(poll(pfd, (nfds_t)n, 1000) >= 2);
	control_dispatch(s.c, pfd, n);
	assert_int_equal(s.lists, 1);                  /* the other client is served */
	assert_true(s.handled - s.lists <= CONTROL_BUDGET_FRAMES);
	assert_true(s.handled - s.lists < N);
	assert_true(control_pending(s.c));             /* the loop comes back at once */
	assert_true(stats_of(s.c).deferred >= 1);
	/* the rest is served by later dispatches; nothing is lost */
	for (int k = 0; k < 1000 && s.handled - s.lists < N; k++) {
		n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
		poll(pfd, (nfds_t)n, control_pending(s.c) ? 0 : 100);
		control_dispatch(s.c, pfd, n);
		char drain[65536];
		while (recv(flood, drain, sizeof(drain), MSG_DONTWAIT) > 0) {
		}
	}
	assert_int_equal(s.handled - s.lists, N);
	close(flood);
	close(other);
	control_free(s.c);
	rmdir(s.dir);
}

/* A deferred request (CONTROL_DEFER) is answered by control_answer(): the
 * client gets that reply first, and its next pipelined request is handled
 * only then; an answer for a client that went away is dropped. */
static void
test_server_deferred(void **state)
{
	struct srv s = { 0 };
	struct llcd_err err;
	struct pollfd pfd[CONTROL_MAX_CLIENTS + 1];
	struct ctl_reader r;

	snprintf(s.dir, sizeof(s.dir), "/tmp/llcd-ctl-XXXXXX");
	assert_non_null(mkdtemp(s.dir));
	snprintf(s.path, sizeof(s.path), "%s/llcd.sock", s.dir);
	s.c = control_new(s.path, (gid_t)-1, handler, &s, &err);
	assert_non_null(s.c);
	int fd = ctl_connect(s.path, &err);
	int n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
	assert_int_equal(poll(pfd, (nfds_t)n, 1000), 1);
	control_dispatch(s.c, pfd, n);
	assert_int_equal(ctl_send(fd, CTL_TOPOLOGY, 7, NULL, &err), 0);
	assert_int_equal(ctl_send(fd, CTL_PING, 8, NULL, &err), 0);
	usleep(50000);
	for (int k = 0; k < 3; k++) {
		n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
		poll(pfd, (nfds_t)n, 50);
		control_dispatch(s.c, pfd, n);
	}
	assert_int_equal(s.handled, 1);                 /* the ping waits */
	assert_int_equal(s.deferred_seq, 7);
	assert_false(control_pending(s.c));             /* waiting is not pending work */
	json_object *reply = json_object_new_object();
	json_object_object_add(reply, "answer", json_object_new_int(42));
	assert_int_equal(control_answer(s.c, s.deferred_client, 7, CTL_OK, reply, NULL), 0);
	assert_int_equal(control_answer(s.c, s.deferred_client, 7, CTL_OK, NULL, NULL), -1);  /* once */
	first_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_DATA);
	assert_int_equal(r.hdr.seq, 7);
	assert_non_null(strstr((const char *)r.payload, "\"answer\":42"));
	next_frame(fd, &r);
	assert_int_equal(r.hdr.type, CTL_END);
	assert_int_equal(r.hdr.result, CTL_OK);
	ctl_reader_next(&r);
	for (int k = 0; k < 3 && s.handled < 2; k++) {
		n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
		poll(pfd, (nfds_t)n, control_pending(s.c) ? 0 : 50);
		control_dispatch(s.c, pfd, n);
	}
	assert_int_equal(s.handled, 2);                 /* now the ping */
	assert_int_equal(ctl_recv(fd, &r, &err), 1);
	assert_int_equal(r.hdr.seq, 8);
	ctl_reader_reset(&r);
	/* a client that goes away while it waits: the answer is dropped */
	assert_int_equal(ctl_send(fd, CTL_TOPOLOGY, 9, NULL, &err), 0);
	usleep(20000);
	n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
	poll(pfd, (nfds_t)n, 50);
	control_dispatch(s.c, pfd, n);
	assert_int_equal(s.deferred_seq, 9);
	close(fd);
	for (int k = 0; k < 3; k++) {
		n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
		poll(pfd, (nfds_t)n, 20);
		control_dispatch(s.c, pfd, n);
	}
	control_answer(s.c, s.deferred_client, 9, CTL_OK, json_object_new_object(), NULL);
	for (int k = 0; k < 3; k++) {
		n = control_pollfds(s.c, pfd, CONTROL_MAX_CLIENTS + 1);
		poll(pfd, (nfds_t)n, 20);
		control_dispatch(s.c, pfd, n);
	}
	assert_int_equal(control_nclients(s.c), 0);
	assert_int_equal(control_queued(s.c), 0);
	control_free(s.c);
	rmdir(s.dir);
}

/* A second server on the same path is refused (the lock file beside the
 * socket, flock'ed), names the holder's pid, and leaves the first one's
 * socket alone (it used to unlink it and answer in its
 * place). */
static void
test_server_single_instance(void **state)
{
	struct srv *s = *state;
	struct llcd_err err;
	char want[64], lock[sizeof(s->path) + 8];
	struct stat before, after;

	assert_int_equal(lstat(s->path, &before), 0);
	assert_null(control_new(s->path, (gid_t)-1, handler, s, &err));
	snprintf(want, sizeof(want), "(pid %d)", (int)getpid());
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "another instance"));
	snprintf(lock, sizeof(lock), "%s.lock", s->path);
	assert_non_null(strstr(err.msg, lock));
	assert_int_equal(lstat(s->path, &after), 0);
	assert_true(before.st_ino == after.st_ino);     /* the same socket */
	assert_int_equal(request(s->path, CTL_PING, NULL, NULL, 0, NULL, 0), CTL_OK);
}

/* A server removes its socket at the end only if the path still is the
 * socket it created. */
static void
test_server_unlinks_only_its_own(void **state)
{
	char dir[] = "/tmp/llcd-ctl-XXXXXX", path[128], moved[140], lock[140];
	struct llcd_err err;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/llcd.sock", dir);
	snprintf(moved, sizeof(moved), "%s.moved", path);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	struct control *c = control_new(path, (gid_t)-1, handler, NULL, &err);
	assert_non_null(c);
	assert_int_equal(rename(path, moved), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);   /* someone else's file now */
	assert_true(fd >= 0);
	close(fd);
	control_free(c);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));               /* left alone */
	/* and its own socket is removed */
	unlink(path);
	unlink(moved);
	c = control_new(path, (gid_t)-1, handler, NULL, &err);
	assert_non_null(c);
	control_free(c);
	assert_int_equal(lstat(path, &st), -1);
	/* the lock file stays, free for the next instance */
	c = control_new(path, (gid_t)-1, handler, NULL, &err);
	assert_non_null(c);
	control_free(c);
	unlink(lock);
	assert_int_equal(rmdir(dir), 0);
}

/* A test of the control server, on srv_setup's server in a fresh directory. */
#define SRV_TEST(f) cmocka_unit_test_setup_teardown(f, srv_setup, srv_teardown)

TEST_MAIN(
	cmocka_unit_test(test_hdr_roundtrip),
	cmocka_unit_test(test_reader_split_and_batched),
	SRV_TEST(test_server_requests),
	SRV_TEST(test_server_hostile_frames),
	SRV_TEST(test_server_nonroot_refused),
	SRV_TEST(test_server_events_and_slow_reader),
	SRV_TEST(test_server_half_close),
	SRV_TEST(test_server_root_slots),
	SRV_TEST(test_server_idle_timeout),
	SRV_TEST(test_server_hangup_deferred),
	SRV_TEST(test_server_hangup_blocked),
	SRV_TEST(test_server_queue_share),
	SRV_TEST(test_server_request_deadline),
	SRV_TEST(test_server_backpressure),
	cmocka_unit_test(test_server_budget),
	cmocka_unit_test(test_server_deferred),
	SRV_TEST(test_server_single_instance),
	cmocka_unit_test(test_server_unlinks_only_its_own))
