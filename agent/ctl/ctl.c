// SPDX-License-Identifier: GPL-2.0-or-later
/* ctl.c - the llcd control protocol: framing shared by llcd and llcctl. */
#include "ctl.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

bool
ctl_type_mutates(uint16_t type)
{
	return type >= 64 && type < 128;
}

static const struct {
	uint16_t type;
	const char *name;
} types[] = {
	{ CTL_TOPOLOGY, "topology" }, { CTL_LIST, "list" }, { CTL_DOMINFO, "dominfo" },
	{ CTL_VCPUINFO, "vcpuinfo" }, { CTL_POLICY_GET, "policy" }, { CTL_HOT, "hot" },
	{ CTL_MAP, "map" }, { CTL_EVENTS, "events" }, { CTL_STATS, "stats" },
	{ CTL_METRICS, "metrics" }, { CTL_CHECK, "check" }, { CTL_PING, "ping" },
	{ CTL_WAKEUPS, "wakeups" },
	{ CTL_POLICY_SET, "policy-set" }, { CTL_TUNE, "tune" }, { CTL_RELOAD, "reload" },
	{ CTL_RELEASE, "release" }, { CTL_TOPOLOGY_APPLY, "topology-apply" },
	{ CTL_GUEST_CHANNEL, "guest-channel" }, { CTL_DATA, "data" }, { CTL_END, "end" },
};

bool
ctl_type_known(uint16_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return true;
	return false;
}

const char *
ctl_type_name(uint16_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return types[i].name;
	return "unknown";
}

const char *
ctl_result_name(int32_t result)
{
	static const char *const names[] = {
		"ok", "protocol error", "unsupported protocol version", "unknown request",
		"permission denied", "no such domain", "invalid argument", "frame too large",
		"busy", "internal error", "not supported",
	};
	if (result < 0 || (size_t)result >= sizeof(names) / sizeof(names[0]))
		return "unknown result";
	return names[result];
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return ntohl(v);
}

static uint16_t
get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return ntohs(v);
}

void
ctl_hdr_encode(const struct ctl_hdr *h, uint8_t out[CTL_HDR_LEN])
{
	put32(out, h->magic);
	put16(out + 4, h->version);
	put16(out + 6, h->type);
	put32(out + 8, h->len);
	put32(out + 12, h->seq);
	put32(out + 16, (uint32_t)h->result);
	put32(out + 20, h->flags);
	put32(out + 24, h->reserved);
}

int
ctl_hdr_decode(const uint8_t in[CTL_HDR_LEN], struct ctl_hdr *h, uint32_t max_len,
               struct llcd_err *err)
{
	h->magic = get32(in);
	h->version = get16(in + 4);
	h->type = get16(in + 6);
	h->len = get32(in + 8);
	h->seq = get32(in + 12);
	h->result = (int32_t)get32(in + 16);
	h->flags = get32(in + 20);
	h->reserved = get32(in + 24);
	if (h->magic != CTL_MAGIC) {
		llcd_err_set(err, "control: bad magic 0x%08x (not an llcd control frame)", h->magic);
		return CTL_E_PROTO;
	}
	if (h->version != CTL_VERSION) {
		llcd_err_set(err, "control: protocol version %u, this side speaks %u", h->version, CTL_VERSION);
		return CTL_E_VERSION;
	}
	if (h->len > max_len) {
		llcd_err_set(err, "control: frame of %u bytes exceeds the limit of %u", h->len, max_len);
		return CTL_E_TOOBIG;
	}
	return CTL_OK;
}

void
ctl_reader_init(struct ctl_reader *r, uint32_t max_len)
{
	memset(r, 0, sizeof(*r));
	r->max_len = max_len;
}

void
ctl_reader_reset(struct ctl_reader *r)
{
	free(r->payload);
	r->payload = NULL;
	r->hdrgot = 0;
	r->got = 0;
	r->have_hdr = false;
}

void
ctl_reader_next(struct ctl_reader *r)
{
	ctl_reader_reset(r);
}

int
ctl_reader_feed(struct ctl_reader *r, const uint8_t *buf, size_t n, size_t *used,
                struct llcd_err *err)
{
	size_t off = 0;

	*used = 0;
	if (!r->have_hdr) {
		size_t want = CTL_HDR_LEN - r->hdrgot, take = n < want ? n : want;
		memcpy(r->hdrbuf + r->hdrgot, buf, take);
		r->hdrgot += take;
		off += take;
		if (r->hdrgot < CTL_HDR_LEN) {
			*used = off;
			return 0;
		}
		int rc = ctl_hdr_decode(r->hdrbuf, &r->hdr, r->max_len, err);
		if (rc != CTL_OK) {
			*used = off;
			return -rc;
		}
		r->payload = malloc((size_t)r->hdr.len + 1);
		if (r->payload == NULL) {
			llcd_err_set(err, "control: out of memory for a %u-byte frame", r->hdr.len);
			*used = off;
			return -CTL_E_INTERNAL;
		}
		r->have_hdr = true;
		r->got = 0;
	}
	size_t want = r->hdr.len - r->got, take = n - off < want ? n - off : want;
	memcpy(r->payload + r->got, buf + off, take);
	r->got += take;
	off += take;
	*used = off;
	if (r->got < r->hdr.len)
		return 0;
	r->payload[r->hdr.len] = '\0';
	if (memchr(r->payload, '\0', r->hdr.len) != NULL) {
		llcd_err_set(err, "control: payload contains a NUL byte");
		return -CTL_E_PROTO;
	}
	return 1;
}

struct json_object *
ctl_parse_object(const char *payload, size_t len)
{
	struct json_tokener *tok;
	json_object *o;
	bool whole;

	if (len == 0)
		return json_object_new_object();
	if (len > INT32_MAX || (tok = json_tokener_new_ex(32)) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, payload, (int)len);
	whole = json_tokener_get_error(tok) == json_tokener_success &&
	        json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	if (!whole || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

uint8_t *
ctl_frame(uint16_t type, uint32_t seq, int32_t result, const char *payload, size_t len,
          size_t *frame_len)
{
	struct ctl_hdr h = {
		.magic = CTL_MAGIC, .version = CTL_VERSION, .type = type,
		.len = (uint32_t)len, .seq = seq, .result = result,
	};
	uint8_t *f;

	if (len > UINT32_MAX - CTL_HDR_LEN)
		return NULL;
	f = malloc(CTL_HDR_LEN + len);
	if (f == NULL)
		return NULL;
	ctl_hdr_encode(&h, f);
	if (len)
		memcpy(f + CTL_HDR_LEN, payload, len);
	*frame_len = CTL_HDR_LEN + len;
	return f;
}

int
ctl_connect(const char *path, struct llcd_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return llcd_err_set(err, "control socket path too long: %s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return llcd_err_set(err, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return llcd_err_set(err, "cannot connect to llcd at %s: %s%s", path, strerror(e),
		    e == ENOENT || e == ECONNREFUSED ? " (is llcd running?)" :
		    e == EACCES ? " (are you in the socket's group?)" : "");
	}
	return fd;
}

static int
write_all(int fd, const uint8_t *p, size_t n, struct llcd_err *err)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return llcd_err_set(err, "control: write: %s", strerror(errno));
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
ctl_send(int fd, uint16_t type, uint32_t seq, const char *json, struct llcd_err *err)
{
	size_t len = json ? strlen(json) : 0, flen;
	uint8_t *f;
	int rc;

	if (len > CTL_MAX_REQUEST)
		return llcd_err_set(err, "control: request of %zu bytes exceeds the limit of %d", len,
		    CTL_MAX_REQUEST);
	f = ctl_frame(type, seq, 0, json, len, &flen);
	if (f == NULL)
		return llcd_err_set(err, "control: out of memory");
	rc = write_all(fd, f, flen, err);
	free(f);
	return rc;
}

int
ctl_recv(int fd, struct ctl_reader *r, struct llcd_err *err)
{
	uint8_t buf[65536];

	for (;;) {
		/* read no further than the current frame, so that nothing of
		 * the next frame is lost between calls */
		ssize_t n = recv(fd, buf, r->have_hdr ? (r->hdr.len - r->got < sizeof(buf) ?
		    r->hdr.len - r->got : sizeof(buf)) : CTL_HDR_LEN - r->hdrgot, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return llcd_err_set(err, "control: read: %s", strerror(errno));
		}
		if (n == 0) {
			if (r->hdrgot == 0 && !r->have_hdr)
				return 0;
			return llcd_err_set(err, "control: llcd closed the connection mid-frame");
		}
		size_t used;
		int rc = ctl_reader_feed(r, buf, (size_t)n, &used, err);
		if (rc < 0)
			return -1;
		if (rc == 1)
			return 1;
	}
}
