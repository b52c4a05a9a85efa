// SPDX-License-Identifier: GPL-2.0-or-later
/* control.h - llcd's control socket server (the daemon side of ctl.h).
 *
 * A UNIX stream socket created with mode 0660 and the configured group.
 * Mutating requests need uid 0 (SO_PEERCRED). Limits on hostile local
 * clients (a read-only member of group llcd can connect; docs/protocol.md):
 *
 * - Slots: CONTROL_MAX_CLIENTS connections, of which CONTROL_ROOT_SLOTS are
 *   kept for uid 0, and at most CONTROL_MAX_PER_UID for any other uid. A
 *   connection over a limit gets one CTL_E_BUSY frame naming the limit and
 *   is closed.
 * - Deadlines (every connection, root's too): a client that sends nothing
 *   for CONTROL_IDLE_MS and waits for nothing is closed (event followers
 *   are not idle); a request (frame) must be whole within
 *   CONTROL_REQUEST_MS of its first byte, else it gets a CTL_E_PROTO
 *   result and is closed (one byte now and then holds no slot); a reply,
 *   or a follower's event backlog, must be read whole within
 *   CONTROL_REPLY_MS of being queued, else the client is dropped (a client
 *   that never reads holds no memory and no share of the queue for long).
 *   A client whose peer closed both directions (POLLHUP, POLLERR) is
 *   dropped at once, whatever state its request is in (deferred, blocked
 *   by back-pressure, half read): poll reports a hang-up whatever events
 *   are asked, and such a client kept in the poll set makes the loop spin.
 *   A peer that shuts down only its write side still gets its replies.
 * - Work: one control_dispatch() handles at most CONTROL_BUDGET_FRAMES
 *   requests and stops starting new ones after CONTROL_BUDGET_NS, one
 *   request per client per round, root's clients first, the others from a
 *   rotating start. Input not handled yet stays buffered
 *   (CONTROL_IN_BUF per client, which stops reading from it) and
 *   control_pending() tells the loop to come back without sleeping. So
 *   control work delays a period by at most the budget plus the one
 *   request that was running when it ran out; a request that would cost
 *   much more (topology DOMAIN) is deferred (CONTROL_DEFER) and computed
 *   off the loop.
 * - Memory: a client's next request is handled only once its previous
 *   reply has been sent (back-pressure: one reply of at most CTL_MAX_REPLY
 *   queued per client), events queue up to CONTROL_MAX_EVENT_QUEUE per
 *   follower (past it the follower is dropped), and while all clients
 *   together have CONTROL_MAX_TOTAL_QUEUE bytes queued, or the clients of
 *   its uid CONTROL_MAX_UID_QUEUE, no request of a non-root client is
 *   handled. Queued replies thus stay under CONTROL_MAX_TOTAL_QUEUE +
 *   CTL_MAX_REPLY for non-root clients, and no one uid holds more than
 *   CONTROL_MAX_UID_QUEUE + CTL_MAX_REPLY of it: a third of the whole
 *   queue at most, so two uids that never read leave room for a third.
 * - A client that half-closes (shutdown(SHUT_WR)) after its requests still
 *   gets every reply before llcd closes it.
 * - A handler may answer later (CONTROL_DEFER, control_answer()): the work
 *   runs off the loop (topology DOMAIN's dry placement) and the client
 *   waits, with no further request of it handled.
 * - Malformed or oversized frames get an error result and the connection is
 *   closed.
 */
#ifndef LLCD_CONTROL_H
#define LLCD_CONTROL_H

#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"
#include "err.h"

#define CONTROL_MAX_CLIENTS 64
#define CONTROL_ROOT_SLOTS 8
#define CONTROL_MAX_PER_UID 16
#define CONTROL_IDLE_MS 30000
#define CONTROL_REQUEST_MS 10000
#define CONTROL_REPLY_MS 60000
#define CONTROL_BUDGET_FRAMES 256
#define CONTROL_BUDGET_NS (20 * 1000000ull)
#define CONTROL_IN_BUF (64 * 1024)
#define CONTROL_MAX_EVENT_QUEUE (1024 * 1024)
#define CONTROL_MAX_TOTAL_QUEUE (32 * 1024 * 1024)
#define CONTROL_MAX_UID_QUEUE (8 * 1024 * 1024)

struct control;

/* A handler's result for a request it answers later with control_answer()
 * (work done off the loop); the client gets no other request handled until
 * then, and is not idle. */
#define CONTROL_DEFER 0x10000

/* A request handed to the daemon. The handler fills `reply` (a JSON object
 * it creates, or NULL for none) and returns a ctl_result; on an error it
 * may set `error` to a message. Returning CTL_OK for CTL_EVENTS subscribes
 * the client to control_broadcast(). */
struct control_request {
	uint16_t type;
	uint32_t seq;
	uid_t uid;
	pid_t pid;
	uint64_t client;                /* the connection, for control_answer() */
	struct json_object *args;       /* parsed payload (an object) */
	struct json_object *reply;      /* out */
	char error[512];                /* out */
};

typedef int (*control_handler)(void *ctx, struct control_request *req);

/* Listen on path, owned by group gid (-1: leave) with mode 0660. First
 * the lock file path.lock (beside the socket, in the runtime directory) is
 * flock'ed and holds this process's pid: while another instance holds it
 * this fails and names that pid, and the other's socket stays untouched.
 * With the lock, an existing socket file is a stale one and is replaced;
 * a non-socket file is an error. control_free() removes the socket only
 * if the path still is the one this server created, and leaves the lock
 * file (closing it releases the lock). */
struct control *control_new(const char *path, gid_t gid, control_handler h, void *ctx,
                            struct llcd_err *err);
void control_free(struct control *c);

/* Poll integration: fill up to max pollfds; returns how many. */
int control_pollfds(const struct control *c, struct pollfd *pfd, int max);
/* Handle the revents of the pollfds just filled (call it after every poll,
 * also one that timed out: idle clients are closed here). */
void control_dispatch(struct control *c, const struct pollfd *pfd, int n);
/* True when buffered requests wait for the next dispatch: poll with a zero
 * timeout. */
bool control_pending(const struct control *c);
/* Close clients idle for longer than ms (0: never). */
void control_set_idle_timeout(struct control *c, unsigned ms);
/* Tests: the deadlines (ms; 0 none) and queue bounds (bytes) above. */
struct control_limits {
	unsigned idle_ms, request_ms, reply_ms;
	size_t max_total_queue, max_uid_queue;
};
void control_set_limits(struct control *c, const struct control_limits *l);
/* Bytes queued for all clients now. */
size_t control_queued(const struct control *c);
/* The answer to a request whose handler returned CONTROL_DEFER: reply (a
 * JSON object, or NULL; taken over) and rc/error as a handler gives them.
 * Returns -1 when that connection is gone (the answer is dropped). */
int control_answer(struct control *c, uint64_t client, uint32_t seq, int rc, struct json_object *reply,
                   const char *error);
/* Send a CTL_DATA frame with obj to every client following events. */
void control_broadcast(struct control *c, struct json_object *obj);
int control_nclients(const struct control *c);

struct control_stats {
	uint64_t requests, refused, malformed, dropped_clients;
	uint64_t busy_refused;          /* connections over a slot limit */
	uint64_t idle_closed;           /* clients closed after the idle timeout */
	uint64_t deferred;              /* dispatches that left requests for the next */
	uint64_t request_timeouts;      /* closed: a request not whole in time */
	uint64_t reply_timeouts;        /* dropped: a reply not read in time */
	uint64_t hangups;               /* dropped: the peer closed (POLLHUP) */
};
void control_get_stats(const struct control *c, struct control_stats *st);

#endif
