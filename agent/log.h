// SPDX-License-Identifier: GPL-2.0-or-later
/* log.h - the daemon's one logging API (OpenBGPD's log.c, in short).
 *
 * Foreground (llcd -d): one line per message on stderr. Otherwise syslog
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

/* Start-up only (or a broken invariant): log and exit(1). fatal appends
 * strerror(errno). */
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
