/* control.h - llcd's control socket server (the daemon side of ctl.h).
 *
 * A UNIX stream socket created with mode 0660 and the configured group.
 * Every client is non-blocking with a bounded input frame (CTL_MAX_REQUEST)
 * and a bounded output queue (CONTROL_MAX_QUEUE): a client that sends a
 * malformed or oversized frame gets an error result and is closed; a client
 * that does not read its replies is dropped when its queue is full, so no
 * client can stall the daemon. Mutating requests need uid 0 (SO_PEERCRED).
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
#define CONTROL_MAX_QUEUE (8 * 1024 * 1024)

struct control;

/* A request handed to the daemon. The handler fills `reply` (a JSON object
 * it creates, or NULL for none) and returns a ctl_result; on an error it
 * may set `error` to a message. Returning CTL_OK for CTL_EVENTS subscribes
 * the client to control_broadcast(). */
struct control_request {
	uint16_t type;
	uint32_t seq;
	uid_t uid;
	pid_t pid;
	struct json_object *args;       /* parsed payload (an object) */
	struct json_object *reply;      /* out */
	char error[512];                /* out */
};

typedef int (*control_handler)(void *ctx, struct control_request *req);

/* Listen on path (an existing socket file is replaced; a non-socket file
 * is an error), owned by group gid (-1: leave) with mode 0660. */
struct control *control_new(const char *path, gid_t gid, control_handler h, void *ctx,
                            struct llcd_err *err);
void control_free(struct control *c);

/* Poll integration: fill up to max pollfds; returns how many. */
int control_pollfds(const struct control *c, struct pollfd *pfd, int max);
/* Handle the revents of the pollfds just filled. */
void control_dispatch(struct control *c, const struct pollfd *pfd, int n);
/* Send a CTL_DATA frame with obj to every client following events. */
void control_broadcast(struct control *c, struct json_object *obj);
int control_nclients(const struct control *c);

struct control_stats {
	uint64_t requests, refused, malformed, dropped_clients;
};
void control_get_stats(const struct control *c, struct control_stats *st);

#endif
