// SPDX-License-Identifier: GPL-2.0-or-later
/* ctl.h - the llcd control protocol, shared by the daemon and llcctl.
 *
 * A connection to llcd's UNIX socket carries frames. Each frame is a fixed
 * 28-byte header in network byte order followed by `len` payload bytes:
 *
 *   magic   u32  "LLCD" (0x4c4c4344)
 *   version u16  CTL_VERSION
 *   type    u16  enum ctl_type
 *   len     u32  payload length (requests <= CTL_MAX_REQUEST,
 *                replies <= CTL_MAX_REPLY)
 *   seq     u32  chosen by the client, echoed in every reply frame
 *   result  i32  enum ctl_result (replies; 0 in requests)
 *   flags   u32  reserved, 0
 *   reserved u32 0
 *
 * The payload is one JSON object (UTF-8). A request is answered by zero
 * or more CTL_DATA frames and exactly one CTL_END frame whose `result`
 * field is the request's single result code (its payload, if any, is
 * {"error": "..."}). `events` keeps sending CTL_DATA frames until the
 * client closes. Read-only requests are open to every member of the
 * socket's group; mutating ones (ctl_type_mutates()) need uid 0, decided
 * by SO_PEERCRED. A malformed or oversized frame gets a CTL_END with
 * CTL_E_PROTO or CTL_E_TOOBIG and the connection is closed.
 */
#ifndef LLCD_CTL_H
#define LLCD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CTL_MAGIC 0x4c4c4344u
#define CTL_VERSION 1
#define CTL_HDR_LEN 28
#define CTL_MAX_REQUEST (64 * 1024)
#define CTL_MAX_REPLY (4 * 1024 * 1024)

enum ctl_type {
	/* read-only */
	CTL_TOPOLOGY = 1,       /* {"domain"?: name} host (or domain) topology */
	CTL_LIST = 2,           /* {} domains */
	CTL_DOMINFO = 3,        /* {"domain"} */
	CTL_VCPUINFO = 4,       /* {"domain"} */
	CTL_POLICY_GET = 5,     /* {"domain"} annotation */
	CTL_HOT = 6,            /* {"domain"} guest reports and groups */
	CTL_MAP = 7,            /* {} every LLC and core with its vCPUs */
	CTL_EVENTS = 8,         /* {} follow decisions (stream) */
	CTL_STATS = 9,          /* {} counters */
	CTL_METRICS = 10,       /* {} Prometheus text in {"text"} */
	CTL_CHECK = 11,         /* {"domain"} guest topology vs pins */
	CTL_PING = 12,          /* {} liveness and version */
	CTL_WAKEUPS = 13,       /* {"domain"} strongest vCPU wakeup edges */
	/* mutating */
	CTL_POLICY_SET = 64,    /* {"domain", "xml", "live", "config"} */
	CTL_TUNE = 65,          /* {"knob", "value"} */
	CTL_RELOAD = 66,        /* {} re-read the config */
	CTL_RELEASE = 67,       /* {"domain"} back to the default scheduler */
	CTL_TOPOLOGY_APPLY = 68,/* {"domain", "dry_run"} */
	CTL_GUEST_CHANNEL = 69, /* {"domain", "add"} */
	/* replies */
	CTL_DATA = 200,
	CTL_END = 201,
};

enum ctl_result {
	CTL_OK = 0,
	CTL_E_PROTO = 1,        /* malformed frame or payload */
	CTL_E_VERSION = 2,      /* unsupported protocol version */
	CTL_E_UNKNOWN = 3,      /* unknown request type */
	CTL_E_PERM = 4,         /* mutating request from a non-root peer */
	CTL_E_NODOMAIN = 5,     /* no such domain */
	CTL_E_INVAL = 6,        /* bad argument (message says which) */
	CTL_E_TOOBIG = 7,       /* frame over the size limit */
	CTL_E_BUSY = 8,         /* try again */
	CTL_E_INTERNAL = 9,     /* daemon-side failure (message says what) */
	CTL_E_UNSUPPORTED = 10, /* not available on this back-end or host */
};

struct ctl_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;
	uint32_t seq;
	int32_t result;
	uint32_t flags;
	uint32_t reserved;
};

bool ctl_type_mutates(uint16_t type);
bool ctl_type_known(uint16_t type);
const char *ctl_type_name(uint16_t type);
const char *ctl_result_name(int32_t result);

/* Encode hdr into 28 bytes (network order). */
void ctl_hdr_encode(const struct ctl_hdr *h, uint8_t out[CTL_HDR_LEN]);
/* Decode and check magic, version and length against max_len; returns a
 * ctl_result (CTL_OK, CTL_E_PROTO, CTL_E_VERSION, CTL_E_TOOBIG) and fills
 * err with the reason. */
int ctl_hdr_decode(const uint8_t in[CTL_HDR_LEN], struct ctl_hdr *h, uint32_t max_len,
                   struct llcd_err *err);

/* Incremental frame reader over a byte stream (partial reads, several
 * frames per read). */
struct ctl_reader {
	uint32_t max_len;
	uint8_t hdrbuf[CTL_HDR_LEN];
	size_t hdrgot;
	struct ctl_hdr hdr;
	uint8_t *payload;       /* len + 1 bytes, NUL-terminated */
	size_t got;
	bool have_hdr;
};

void ctl_reader_init(struct ctl_reader *r, uint32_t max_len);
void ctl_reader_reset(struct ctl_reader *r);    /* frees the payload */
/* Feed bytes; consumes up to n and sets *used. Returns 1 when a whole
 * frame is ready (r->hdr, r->payload), 0 when more bytes are needed, or a
 * negative -ctl_result on a bad frame (err filled). After 1, call
 * ctl_reader_next() before feeding again. */
int ctl_reader_feed(struct ctl_reader *r, const uint8_t *buf, size_t n, size_t *used,
                    struct llcd_err *err);
void ctl_reader_next(struct ctl_reader *r);

/* Parse a payload that must be exactly one JSON object (an empty payload
 * is {}). Returns the object (the caller puts it) or NULL. */
struct json_object;
struct json_object *ctl_parse_object(const char *payload, size_t len);

/* Build a whole frame (header + payload) in a malloc'd buffer. */
uint8_t *ctl_frame(uint16_t type, uint32_t seq, int32_t result, const char *payload,
                   size_t len, size_t *frame_len);

/* Blocking client helpers (llcctl): connect, send a request, read one
 * frame. */
int ctl_connect(const char *path, struct llcd_err *err);
int ctl_send(int fd, uint16_t type, uint32_t seq, const char *json, struct llcd_err *err);
/* Read one frame into r (blocking). Returns 1 on a frame, 0 on EOF, -1 on
 * error. */
int ctl_recv(int fd, struct ctl_reader *r, struct llcd_err *err);

#endif
