// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan.h - llcd's end of the guest helper's channel: one per running
 * domain, a non-blocking client of the UNIX socket libvirt binds for the
 * domain's virtio-serial port org.llcd.guest.0, reading llc-guest's report
 * lines (docs/guest-channel.md) into policy_hot_report entries.
 *
 * Everything that comes from the guest is hostile until checked:
 *  - a line is at most limits.max_line bytes (4096 with its newline); a
 *    longer one is discarded up to the next newline;
 *  - it must be one strict JSON object (json-c, nesting depth 4) of
 *    protocol version 1, with at most limits.max_procs processes (16),
 *    each naming only this domain's vCPUs (0 .. nvcpus-1); names are
 *    sanitised to [A-Za-z0-9_.-] and 31 bytes;
 *  - a line that fails any check is dropped whole, counted, and remembered
 *    with the reason (guestchan_stats.last_error);
 *  - every line, and every max_line bytes discarded, costs a token of a
 *    bucket of limits.burst (20) refilled at limits.rate (10/s); with no
 *    token left the channel is THROTTLED: its fd is not polled or read
 *    until a token is back (the guest's writes then back up in its own
 *    kernel and llc-guest drops them, never blocking);
 *  - bad lines and throttles are strikes against a second bucket of
 *    limits.strikes (10), forgiven at limits.strike_refill (0.1/s); when it
 *    runs out the channel is closed for a back-off of limits.backoff_ns
 *    (30 s), doubling up to limits.backoff_max_ns (10 min), back to 30 s
 *    after a connection lasted backoff_max_ns without abuse. The last
 *    report is forgotten when a channel is closed for abuse.
 * So one channel holds sizeof(struct guestchan) + max_line + 2 x max_procs *
 * sizeof(struct policy_hot_report) bytes (14 KiB with the
 * defaults; guestchan_stats.mem_bytes), plus json-c's transient objects
 * for one line while it is parsed; and reads at most max_read bytes per
 * guestchan_handle() call and (burst + rate x seconds) lines over time.
 *
 * Time is passed in (CLOCK_MONOTONIC ns), never read: tests use a fake
 * clock.
 */
#ifndef LLCD_GUESTCHAN_H
#define LLCD_GUESTCHAN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "policy.h"

struct guestchan_limits {
	size_t max_line;                /* bytes, newline included: 4096 */
	int max_procs;                  /* per line: 16 */
	double rate;                    /* lines per second: 10 */
	double burst;                   /* lines: 20 */
	double strikes;                 /* abuse tolerated before back-off: 10 */
	double strike_refill;           /* strikes forgiven per second: 0.1 */
	uint64_t backoff_ns;            /* first back-off: 30 s */
	uint64_t backoff_max_ns;        /* longest back-off: 600 s */
	uint64_t reconnect_ns;          /* retry an absent or closed socket: 2 s */
	uint64_t report_timeout_ns;     /* a report older than this is ignored: 10 s */
	size_t max_read;                /* bytes read per guestchan_handle(): 64 KiB */
};

void guestchan_limits_default(struct guestchan_limits *l);

enum guestchan_state {
	GUESTCHAN_DISCONNECTED,         /* not connected; retries at next_ns */
	GUESTCHAN_CONNECTED,            /* reading */
	GUESTCHAN_THROTTLED,            /* connected, not reading until next_ns */
	GUESTCHAN_BACKOFF,              /* closed for abuse until next_ns */
};

/* What guestchan_handle() did (a bit mask), for the caller's log. */
enum {
	GUESTCHAN_EV_CONNECTED = 1,
	GUESTCHAN_EV_DISCONNECTED = 2,
	GUESTCHAN_EV_REPORT = 4,        /* a valid report arrived */
	GUESTCHAN_EV_BAD = 8,           /* a line was dropped (last_error says why) */
	GUESTCHAN_EV_THROTTLED = 16,
	GUESTCHAN_EV_BACKOFF = 32,      /* closed for abuse */
};

struct guestchan_stats {
	enum guestchan_state state;
	uint64_t next_ns;               /* DISCONNECTED/THROTTLED/BACKOFF: until */
	uint64_t connects, disconnects;
	uint64_t bytes;                 /* read */
	uint64_t lines;                 /* complete lines seen */
	uint64_t reports;               /* valid reports */
	uint64_t bad;                   /* lines dropped by the parser ... */
	uint64_t too_long;              /* ... of which over max_line */
	uint64_t throttles;             /* times the rate limit stopped reading */
	uint64_t backoffs;              /* times the channel was closed for abuse */
	uint64_t guest_dropped;         /* "dropped" in the guest's last report */
	uint64_t last_report_ns;        /* 0: none */
	int nreports;                   /* processes in the last report */
	size_t mem_bytes;               /* memory this channel holds */
	char last_error[256];           /* why the last line was dropped */
};

struct guestchan;

/* A channel for domain (a name used in messages) with nvcpus vCPUs,
 * connecting to sock_path; lim NULL = defaults. NULL on bad arguments
 * (nvcpus outside 1..CPUSET_MAX, path too long for a UNIX socket) or out
 * of memory. It connects at the first guestchan_handle(). */
struct guestchan *guestchan_new(const char *domain, int nvcpus, const char *sock_path,
                                const struct guestchan_limits *lim);
void guestchan_free(struct guestchan *c);

/* The fd to poll for POLLIN, or -1 when there is nothing to read now
 * (disconnected, throttled, backing off): call guestchan_handle() at
 * guestchan_next_ns() then. */
int guestchan_fd(const struct guestchan *c);
/* When guestchan_handle() has work without fd activity; UINT64_MAX none. */
uint64_t guestchan_next_ns(const struct guestchan *c);

/* Connect if due, read what is there (bounded), parse complete lines.
 * Never blocks. Returns a mask of GUESTCHAN_EV_*. */
int guestchan_handle(struct guestchan *c, uint64_t now_ns);

/* Copy the last valid report (at most max entries) into out, unless it is
 * older than limits.report_timeout_ns. Returns the number copied. */
int guestchan_reports(const struct guestchan *c, struct policy_hot_report *out, int max,
                      uint64_t now_ns);

void guestchan_stats(const struct guestchan *c, struct guestchan_stats *st);
const char *guestchan_state_name(enum guestchan_state s);

/* The domain's vCPU count changed (hotplug); the last report is dropped. */
void guestchan_set_nvcpus(struct guestchan *c, int nvcpus);

/* --- pieces, exposed for tests, the fuzzer and llcctl ------------------ */

struct guestchan_meta {
	int version;
	double t;
	int64_t seq, dropped;           /* -1 when absent */
};

/* Parse one line (without its newline; len bytes, need not be
 * NUL-terminated) from a domain of nvcpus vCPUs into out[0..max_procs-1].
 * Returns the number of processes, or -1 with err set to the reason (the
 * exact messages are in docs/guest-channel.md). meta may be NULL. */
int guestchan_parse(const char *line, size_t len, int nvcpus, int max_procs,
                    struct policy_hot_report *out, struct guestchan_meta *meta,
                    struct llcd_err *err);

/* Sanitise a guest process name into out (POLICY_GROUP_NAME bytes):
 * bytes outside [A-Za-z0-9_.-] become '_', truncated; empty -> "pid<pid>". */
void guestchan_sanitize_name(const char *name, size_t len, int pid, char *out);

/* The socket path for a domain under dir: "<dir>/<id>.sock", id sanitised
 * like a name (pass the domain UUID: stable across renames). -1 with err if
 * it does not fit a UNIX socket address (107 bytes). */
int guestchan_sock_path(const char *dir, const char *id, char *buf, size_t len,
                        struct llcd_err *err);

/* The <channel> element for the domain's persistent definition
 * (llcctl guest-channel DOMAIN --add), for virDomainDefineXML or
 * virDomainAttachDeviceFlags(..., VIR_DOMAIN_AFFECT_CONFIG):
 *   <channel type='unix'>
 *     <source mode='bind' path='SOCK'/>
 *     <target type='virtio' name='org.llcd.guest.0'/>
 *   </channel>
 * Returns the length, or -1 with err set (truncation). */
int guestchan_channel_xml(const char *sock_path, char *buf, size_t len, struct llcd_err *err);

/* The host end of the guest helper's channel as a domain XML defines it
 * (the element above: type 'unix', target name org.llcd.guest.0): its
 * socket path into path. The XML is read with xmlsafe_read_domain()
 * (guestchan_xml.c). Returns 0, or -1 when the XML has no such channel
 * (or is not a readable domain XML, or the path does not fit plen). */
int guestchan_from_domain_xml(const char *xml, size_t len, char *path, size_t plen);
/* The same, with the source's mode ("bind" where the XML says none, as
 * libvirt does) into mode. */
int guestchan_channel_from_xml(const char *xml, size_t len, char *path, size_t plen, char *mode, size_t mlen);

/* libvirt's own directory of a domain's channel sockets (the path it
 * generates for <source mode='bind'/> without a path lives below it). */
#define GUESTCHAN_LIBVIRT_DIR "/var/lib/libvirt/qemu/channel"
/* Whether llcd may connect to the channel a domain XML names: mode bind
 * (QEMU listens, llcd connects), an absolute path whose directory (symbolic
 * links resolved) is below libvirt_dir or own_dir (guest-channel-dir), and
 * no file there that is not a socket (a symbolic link is refused). Returns
 * 0, or -1 with the reason in why (for the log and dominfo). */
int guestchan_channel_allowed(const char *path, const char *mode, const char *libvirt_dir, const char *own_dir,
                              char *why, size_t len);

#endif
