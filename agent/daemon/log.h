// SPDX-License-Identifier: GPL-2.0-or-later
/* log.h - the daemon's one logging API (OpenBGPD's log.c, in short).
 *
 * Foreground (llcd -d): one line per message on stderr, after the local
 * time (2025-01-31T12:00:00.123), unless stderr is the journal's stream
 * (JOURNAL_STREAM names it), which stamps lines itself. Otherwise syslog
 * (LOG_DAEMON), which journald picks up on systemd hosts. Messages about a
 * domain go through log_dom(), which names the domain, the vCPU and the
 * thread the message is about in one fixed form:
 *     domain web1 vcpu 3 tid 12345: <message>
 * (vcpu is left out when negative, tid when 0 or negative), so that one
 * domain or one thread can be grepped out of the log.
 *
 * Thread-safe: each message is formatted into a buffer first and written
 * with one call.
 */
#ifndef LLCD_LOG_H
#define LLCD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#define LOG_MSG_MAX 1024

/* foreground: stderr instead of syslog. verbosity: 0 = warnings and info,
 * 1 or more = debug too. May be called again (e.g. after daemonising). */
void log_init(bool foreground, int verbosity);
void log_setverbose(int verbosity);
int log_getverbose(void);

/* Tests: receive every message (already filtered by verbosity) instead of
 * stderr/syslog. fn NULL restores the normal sink. */
void log_set_sink(void (*fn)(int pri, const char *msg, void *arg), void *arg);
/* A sink that drops every message: log_set_sink(log_discard, NULL). */
void log_discard(int pri, const char *msg, void *arg);

/* log_warn appends ": strerror(errno)"; log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A message about a domain (and a vCPU, and a thread). pri is LOG_WARNING,
 * LOG_INFO or LOG_DEBUG; domain may be NULL. */
void log_dom(int pri, const char *domain, int vcpu, int tid,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void log_vdom(int pri, const char *domain, int vcpu, int tid,
    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Repeated warnings: one rate limit per kind of message (a call site, or
 * one subject of many), declared where the message is made:
 *
 *     static struct log_ratelimit rl = LOG_RATELIMIT_INIT("refused metrics connections");
 *     log_rl(&rl, LOG_WARNING, "metrics: connection from %s refused: ...", addr);
 *
 * Of one limiter at most burst messages (LOG_RL_BURST) per interval
 * (LOG_RL_INTERVAL_NS) are written; the others are counted, never
 * formatted. The first message written after some were suppressed, or
 * log_ratelimit_flush() once the interval is over, says how many:
 *     refused metrics connections: 141640 more suppressed in the last 60 s
 * log_suppressed_total() is every message suppressed since start (llcctl
 * stats: log_suppressed). The journal's own rate limit drops messages
 * without saying which; this one keeps the first of each kind and the
 * count of the rest. Thread-safe (one mutex; the metrics thread logs too).
 * A limiter lives as long as the program (static, or never freed once
 * used: log_ratelimit_flush() walks all that were used). */
#define LOG_RL_BURST 5
#define LOG_RL_INTERVAL_NS (60ull * 1000000000ull)
struct log_ratelimit {
	const char *what;               /* names the messages in the count line */
	unsigned burst;                 /* 0: LOG_RL_BURST */
	uint64_t interval_ns;           /* 0: LOG_RL_INTERVAL_NS */
	/* the logger's */
	uint64_t begin_ns;              /* the interval's start */
	unsigned n;                     /* written in it */
	uint64_t suppressed;            /* not written in it */
	int pri;                        /* the most urgent of those */
	bool listed;
	struct log_ratelimit *next;
};
#define LOG_RATELIMIT_INIT(w) { .what = (w) }
void log_rl(struct log_ratelimit *rl, int pri, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void log_rl_dom(struct log_ratelimit *rl, int pri, const char *domain, int vcpu, int tid,
    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Say the counts of the limiters whose interval is over (the daemon calls
 * it every period); now_ns monotonic. */
void log_ratelimit_flush(uint64_t now_ns);
uint64_t log_suppressed_total(void);

/* Start-up only (or a broken invariant): log and exit(1). fatal appends
 * strerror(errno). */
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
