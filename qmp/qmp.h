// SPDX-License-Identifier: GPL-2.0-or-later
/* qmp.h - libqmp: a QEMU Machine Protocol client on json-c.
 *
 * One struct qmp is one connection to one QEMU monitor (a UNIX socket made
 * with `-qmp unix:PATH,server=on,wait=off` or by libvirt).  The library
 * never exits, never logs and never raises signals (it writes with
 * MSG_NOSIGNAL); every failing call fills a struct llcd_err.
 *
 * Two ways to use it:
 *
 *   Blocking: qmp_connect() (connect + greeting + qmp_capabilities), then
 *   qmp_execute() or the typed helpers, each with a timeout in ms.
 *
 *       struct qmp *q = qmp_new();
 *       if (qmp_connect(q, "/run/vm.qmp", 2000, &err) == -1) ...
 *       struct qmp_cpus *cpus;
 *       if (qmp_query_cpus_fast(q, 2000, &cpus, &err) != QMP_OK) ...
 *       qmp_cpus_free(cpus);
 *       qmp_free(q);
 *
 *   From an event loop: qmp_connect_start() or qmp_attach(), then poll
 *   qmp_fd() for qmp_poll_events() and call qmp_step() when it is ready.
 *   The connection is usable once qmp_state() is QMP_STATE_READY.  Send
 *   with qmp_send() (returns the request id), collect the answer with
 *   qmp_reply_take(), read events with qmp_event_next().
 *
 *   Without a socket ("sans I/O"): qmp_feed() bytes received by any
 *   transport, and drain what must be sent with qmp_out_peek() and
 *   qmp_out_consume().  The fuzz target and the unit tests use this.
 *
 * Hostile peers.  Messages are framed by a scanner that tracks JSON
 * nesting and strings, so any split of the byte stream (one byte per read,
 * many messages per read) gives the same messages.  A message longer than
 * QMP_MSG_MAX bytes, a byte that cannot start a message, invalid JSON,
 * invalid UTF-8, a top-level value that is not an object, a reply whose id
 * was never sent, and the peer closing the socket (mid-message or not) all
 * put the connection into QMP_STATE_BROKEN with a message saying which;
 * every later call then fails with QMP_ERR_CONN and that message.
 */
#ifndef LLCD_QMP_H
#define LLCD_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "err.h"

/* Hard bound on one message from QEMU, in bytes (including whitespace
 * before it).  query-cpus-fast for 1024 vCPUs is about 220 KiB. */
#define QMP_MSG_MAX (1024 * 1024)
/* At most this many events are queued; older ones are dropped (counted by
 * qmp_events_dropped()). */
#define QMP_EVENTS_MAX 1024
/* At most this many requests may be in flight or unclaimed at once. */
#define QMP_PENDING_MAX 256
/* Bound on bytes queued for sending. */
#define QMP_OUT_MAX (1024 * 1024)

struct qmp;

enum qmp_state {
	QMP_STATE_GREETING,    /* new: waiting for QEMU's {"QMP": ...} greeting */
	QMP_STATE_NEGOTIATING, /* qmp_capabilities sent, waiting for its reply */
	QMP_STATE_READY,       /* commands may be sent */
	QMP_STATE_BROKEN,      /* closed or failed; qmp_broken_reason() says why */
};

/* Result of a command. */
enum qmp_rc {
	QMP_OK = 0,       /* QEMU returned: *ret holds the "return" value */
	QMP_PENDING,      /* qmp_reply_take() only: no reply yet */
	QMP_ERR_COMMAND,  /* QEMU answered with an error: *ret holds the
	                   * "error" object {"class","desc"}, err holds
	                   * "CLASS: desc"; the connection stays usable */
	QMP_ERR_TIMEOUT,  /* no reply in time; the connection stays usable and
	                   * a late reply is silently dropped */
	QMP_ERR_REPLY,    /* a typed helper got an answer of the wrong shape;
	                   * the connection stays usable */
	QMP_ERR_CONN,     /* no connection, I/O error, protocol violation or
	                   * invalid arguments (err says which) */
};

enum qmp_dir { QMP_DIR_IN, QMP_DIR_OUT };
/* Called with each whole message, exactly as received (IN, without the
 * whitespace between messages) or as sent (OUT, without "\r\n"). */
typedef void qmp_trace_fn(void *arg, enum qmp_dir dir, const char *msg, size_t len);

/* --- life cycle ------------------------------------------------------- */

struct qmp *qmp_new(void);                 /* NULL only on ENOMEM */
void qmp_free(struct qmp *q);              /* closes the socket; NULL ok */

/* Connect to the socket at path, read the greeting and negotiate
 * capabilities, all within timeout_ms (-1: no limit).  Returns 0 when the
 * connection is QMP_STATE_READY, -1 otherwise. */
int qmp_connect(struct qmp *q, const char *path, int timeout_ms, struct llcd_err *err);
/* Non-blocking connect: start connecting; drive it with qmp_step(). */
int qmp_connect_start(struct qmp *q, const char *path, struct llcd_err *err);
/* Take over an already connected stream socket (made non-blocking and
 * close-on-exec; closed by qmp_free()). The greeting is expected next. */
int qmp_attach(struct qmp *q, int fd, struct llcd_err *err);
/* Wait (blocking) until the handshake of qmp_connect_start()/qmp_attach()
 * completes. Returns 0 when ready, -1 on failure or timeout. */
int qmp_handshake(struct qmp *q, int timeout_ms, struct llcd_err *err);

enum qmp_state qmp_state(const struct qmp *q);
const char *qmp_broken_reason(const struct qmp *q);  /* "" unless BROKEN */

/* From the greeting (valid from QMP_STATE_NEGOTIATING on). */
void qmp_version(const struct qmp *q, int *major, int *minor, int *micro);
const char *qmp_package(const struct qmp *q);        /* "" if none */
bool qmp_has_capability(const struct qmp *q, const char *cap);

void qmp_set_trace(struct qmp *q, qmp_trace_fn *fn, void *arg);

/* --- event-loop use --------------------------------------------------- */

int qmp_fd(const struct qmp *q);           /* -1 without a socket */
short qmp_poll_events(const struct qmp *q); /* POLLIN, | POLLOUT if output queued */
/* Write queued output and read what is available, without blocking; parse
 * and dispatch every complete message.  0, or -1 once the connection is
 * broken (err says why; so does qmp_broken_reason()). */
int qmp_step(struct qmp *q, struct llcd_err *err);

/* --- sans-I/O use ------------------------------------------------------- */

/* Parse len bytes as received from QEMU; -1 once the connection is broken. */
int qmp_feed(struct qmp *q, const void *buf, size_t len, struct llcd_err *err);
/* Tell the parser the peer closed the stream; always -1 (BROKEN). */
int qmp_feed_eof(struct qmp *q, struct llcd_err *err);
/* Bytes waiting to be sent to QEMU (qmp_step() sends them itself). */
const char *qmp_out_peek(const struct qmp *q, size_t *len);
void qmp_out_consume(struct qmp *q, size_t n);

/* --- commands --------------------------------------------------------- */

/* Queue {"execute": command, "arguments": args, "id": N}; args may be
 * NULL and is not consumed (a reference is taken while serializing).  On
 * success *id (if not NULL) receives N.  Needs QMP_STATE_READY. */
int qmp_send(struct qmp *q, const char *command, struct json_object *args,
             uint64_t *id, struct llcd_err *err);
/* Claim the answer to request id.  QMP_OK / QMP_ERR_COMMAND: *ret (if not
 * NULL) owns the value (json_object_put() it) and the id is forgotten.
 * QMP_PENDING: not yet.  QMP_ERR_CONN: unknown id or broken connection. */
enum qmp_rc qmp_reply_take(struct qmp *q, uint64_t id, struct json_object **ret,
                           struct llcd_err *err);
/* Give up on request id: its reply will be dropped when it comes. */
void qmp_reply_abandon(struct qmp *q, uint64_t id);

/* Blocking: send, then wait up to timeout_ms (-1: no limit) for the
 * answer.  See enum qmp_rc for *ret; *ret is NULL on other results. */
enum qmp_rc qmp_execute(struct qmp *q, const char *command, struct json_object *args,
                        int timeout_ms, struct json_object **ret, struct llcd_err *err);

/* --- events ----------------------------------------------------------- */

/* Next queued event, the whole object ({"event", "data", "timestamp"}),
 * owned by the caller; NULL when none is queued. */
struct json_object *qmp_event_next(struct qmp *q);
size_t qmp_events_queued(const struct qmp *q);
uint64_t qmp_events_dropped(const struct qmp *q);
/* Blocking: wait up to timeout_ms for the next event.  QMP_OK with *ev,
 * QMP_ERR_TIMEOUT or QMP_ERR_CONN. */
enum qmp_rc qmp_event_wait(struct qmp *q, int timeout_ms, struct json_object **ev,
                           struct llcd_err *err);
/* The event's name ("SHUTDOWN", ...); "" if malformed. */
const char *qmp_event_name(struct json_object *ev);

/* --- typed helpers: vCPUs --------------------------------------------- */

/* Topology properties of a CPU (CpuInstanceProperties); -1 when absent. */
struct qmp_cpu_props {
	int node_id;
	int socket_id;
	int die_id;
	int cluster_id;
	int core_id;
	int thread_id;
};

/* One entry of query-cpus-fast. */
struct qmp_cpu {
	int cpu_index;                /* "cpu-index" */
	pid_t tid;                    /* "thread-id": host thread of the vCPU */
	struct qmp_cpu_props props;
	char *qom_path;               /* "qom-path" */
	char *target;                 /* "target", e.g. "x86_64" */
};

struct qmp_cpus {
	size_t n;
	struct qmp_cpu *cpu;
};

/* One entry of query-hotpluggable-cpus. */
struct qmp_hotcpu {
	char *type;                   /* e.g. "qemu64-x86_64-cpu" */
	int vcpus_count;
	struct qmp_cpu_props props;
	char *qom_path;               /* NULL when the slot is not plugged */
};

struct qmp_hotcpus {
	size_t n;
	struct qmp_hotcpu *cpu;
};

struct qmp_cpus *qmp_cpus_new(void);
void qmp_cpus_free(struct qmp_cpus *c);
struct qmp_hotcpus *qmp_hotcpus_new(void);
void qmp_hotcpus_free(struct qmp_hotcpus *c);

/* Parse the "return" value of query-cpus-fast / query-hotpluggable-cpus.
 * Types and ranges are checked; unknown members are ignored. 0 / -1. */
int qmp_cpus_parse(struct json_object *ret, struct qmp_cpus **out, struct llcd_err *err);
int qmp_hotcpus_parse(struct json_object *ret, struct qmp_hotcpus **out,
                      struct llcd_err *err);

/* Blocking helpers: execute the command and parse its answer (an answer
 * that does not parse gives QMP_ERR_REPLY). */
enum qmp_rc qmp_query_cpus_fast(struct qmp *q, int timeout_ms, struct qmp_cpus **out,
                                struct llcd_err *err);
enum qmp_rc qmp_query_hotpluggable_cpus(struct qmp *q, int timeout_ms,
                                        struct qmp_hotcpus **out, struct llcd_err *err);

#endif
