// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c - stderr in the foreground, syslog otherwise. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool log_fg = true;
static int log_verbose;
static void (*log_sink)(int, const char *, void *);
static void *log_sink_arg;

void
log_init(bool foreground, int verbosity)
{
	log_fg = foreground;
	log_verbose = verbosity;
	if (!foreground)
		openlog("llcd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_setverbose(int verbosity)
{
	log_verbose = verbosity;
}

int
log_getverbose(void)
{
	return log_verbose;
}

void
log_set_sink(void (*fn)(int, const char *, void *), void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

void
log_discard(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)msg;
	(void)arg;
}

static void
emit(int pri, const char *msg)
{
	char line[LOG_MSG_MAX + 40];
	int n;

	if (log_sink != NULL) {
		log_sink(pri, msg, log_sink_arg);
		return;
	}
	if (!log_fg) {
		syslog(pri, "%s", msg);
		return;
	}
	/* on a terminal the foreground log (-d) carries the time, as the
	 * journal would; redirected, lines stay as they are (scripts anchor
	 * on them) */
	if (isatty(STDERR_FILENO)) {
		struct timespec ts;
		struct tm tm;
		char stamp[24] = "";
		clock_gettime(CLOCK_REALTIME, &ts);
		if (localtime_r(&ts.tv_sec, &tm) == NULL ||
		    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
			stamp[0] = '\0';
		n = snprintf(line, sizeof(line), "%s.%03d %s\n", stamp, (int)(ts.tv_nsec / 1000000), msg);
	} else {
		n = snprintf(line, sizeof(line), "%s\n", msg);
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

/* Format prefix + fmt (+ ": strerror") into one message. A message that
 * does not fit ends in "..." rather than being dropped. */
static void
vlog(int pri, const char *prefix, bool with_errno, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];
	size_t off = 0;
	int saved = errno, n;

	if (pri == LOG_DEBUG && log_verbose < 1)
		return;
	if (prefix != NULL && *prefix != '\0') {
		n = snprintf(msg, sizeof(msg), "%s", prefix);
		off = n < 0 ? 0 : ((size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	}
	n = vsnprintf(msg + off, sizeof(msg) - off, fmt, ap);
	if (n > 0)
		off += (size_t)n < sizeof(msg) - off ? (size_t)n : sizeof(msg) - off - 1;
	if (with_errno && off < sizeof(msg) - 1) {
		n = snprintf(msg + off, sizeof(msg) - off, ": %s", strerror(saved));
		if (n > 0)
			off += (size_t)n < sizeof(msg) - off ? (size_t)n : sizeof(msg) - off - 1;
	}
	if (off == sizeof(msg) - 1)
		memcpy(msg + sizeof(msg) - 4, "...", 4);
	emit(pri, msg);
	errno = saved;
}

#define LOG_FN(fname, pri, witherr)                                     \
	void                                                            \
	fname(const char *fmt, ...)                                     \
	{                                                               \
		va_list ap;                                             \
		va_start(ap, fmt);                                      \
		vlog(pri, NULL, witherr, fmt, ap);                      \
		va_end(ap);                                             \
	}

LOG_FN(log_warn, LOG_WARNING, true)
LOG_FN(log_warnx, LOG_WARNING, false)
LOG_FN(log_info, LOG_INFO, false)
LOG_FN(log_debug, LOG_DEBUG, false)

void
log_vdom(int pri, const char *domain, int vcpu, int tid, const char *fmt, va_list ap)
{
	char prefix[320], v[24] = "", t[24] = "";
	const char *p = prefix;

	if (vcpu >= 0)
		snprintf(v, sizeof(v), " vcpu %d", vcpu);
	if (tid > 0)
		snprintf(t, sizeof(t), " tid %d", tid);
	if (domain == NULL && v[0] == '\0' && t[0] == '\0')
		prefix[0] = '\0';
	else
		snprintf(prefix, sizeof(prefix), "%s%.256s%s%s: ",
		    domain != NULL ? "domain " : "", domain != NULL ? domain : "", v, t);
	if (*p == ' ')
		p++;            /* no domain: "vcpu 3 tid 9: " */
	vlog(pri, p, false, fmt, ap);
}

void
log_dom(int pri, const char *domain, int vcpu, int tid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vdom(pri, domain, vcpu, tid, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, "fatal: ", true, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, "fatal: ", false, fmt, ap);
	va_end(ap);
	exit(1);
}
