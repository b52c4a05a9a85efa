// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c - stderr in the foreground, syslog otherwise; rate limits for
 * repeated warnings (log.h). */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

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

/* JOURNAL_STREAM ("DEV:INODE", set by systemd for a unit's stdout and
 * stderr when they go to the journal) names stderr's file. */
static bool
stderr_is_journal(void)
{
	const char *j = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (j == NULL || sscanf(j, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
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
	/* the foreground log (-d) carries the time, on a terminal as in a
	 * file or a pipe, unless stderr is the journal's stream (a unit
	 * running llcd -d): the journal stamps every line itself */
	if (!stderr_is_journal()) {
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

/* fname(fmt, ...): one message at pri, prefix before it, ": strerror(errno)"
 * after it when witherr, then the statement after (fatal's exit). */
#define LOG_FN(fname, pri, prefix, witherr, after)                      \
	void                                                            \
	fname(const char *fmt, ...)                                     \
	{                                                               \
		va_list ap;                                             \
		va_start(ap, fmt);                                      \
		vlog(pri, prefix, witherr, fmt, ap);                    \
		va_end(ap);                                             \
		after;                                                  \
	}

LOG_FN(log_warn, LOG_WARNING, NULL, true, )
LOG_FN(log_warnx, LOG_WARNING, NULL, false, )
LOG_FN(log_info, LOG_INFO, NULL, false, )
LOG_FN(log_debug, LOG_DEBUG, NULL, false, )
LOG_FN(fatal, LOG_CRIT, "fatal: ", true, exit(1))
LOG_FN(fatalx, LOG_CRIT, "fatal: ", false, exit(1))

/* "domain NAME vcpu V tid T: " (parts left out as log.h says) into prefix;
 * returns where it starts. */
static const char *
dom_prefix(char *prefix, size_t len, const char *domain, int vcpu, int tid)
{
	char v[24] = "", t[24] = "";
	const char *p = prefix;

	if (vcpu >= 0)
		snprintf(v, sizeof(v), " vcpu %d", vcpu);
	if (tid > 0)
		snprintf(t, sizeof(t), " tid %d", tid);
	if (domain == NULL && v[0] == '\0' && t[0] == '\0')
		prefix[0] = '\0';
	else
		snprintf(prefix, len, "%s%.256s%s%s: ",
		    domain != NULL ? "domain " : "", domain != NULL ? domain : "", v, t);
	if (*p == ' ')
		p++;            /* no domain: "vcpu 3 tid 9: " */
	return p;
}

void
log_vdom(int pri, const char *domain, int vcpu, int tid, const char *fmt, va_list ap)
{
	char prefix[320];

	vlog(pri, dom_prefix(prefix, sizeof(prefix), domain, vcpu, tid), false, fmt, ap);
}

void
log_dom(int pri, const char *domain, int vcpu, int tid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vdom(pri, domain, vcpu, tid, fmt, ap);
	va_end(ap);
}

/* ---- rate limits (log.h) ------------------------------------------------- */

static pthread_mutex_t rl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct log_ratelimit *rl_list;          /* every limiter used */
static uint64_t rl_total;

static uint64_t
rl_interval(const struct log_ratelimit *rl)
{
	return rl->interval_ns ? rl->interval_ns : LOG_RL_INTERVAL_NS;
}

/* Under rl_mu: the count line of an interval that had suppressed messages
 * into line ("" none), and a new interval from now. */
static void
rl_restart(struct log_ratelimit *rl, uint64_t now, char *line, size_t len, int *pri)
{
	line[0] = '\0';
	if (rl->suppressed > 0) {
		uint64_t s = (now - rl->begin_ns + 500000000ull) / 1000000000ull;
		snprintf(line, len, "%s: %llu more suppressed in the last %llu s (at most %u per %g s are logged)",
		    rl->what ? rl->what : "repeated messages", (unsigned long long)rl->suppressed,
		    (unsigned long long)(s ? s : 1), rl->burst ? rl->burst : LOG_RL_BURST,
		    (double)rl_interval(rl) / 1e9);
		*pri = rl->pri;
	}
	rl->begin_ns = now;
	rl->n = 0;
	rl->suppressed = 0;
	rl->pri = LOG_DEBUG;
}

/* Whether a message of rl may be written now: -1 when not, or the priority
 * of *count (a line or ""), to be written before it. */
static int
rl_admit(struct log_ratelimit *rl, int pri, char *count, size_t len)
{
	uint64_t now = llcd_mono_ns();
	int cpri = pri;
	bool ok;

	count[0] = '\0';
	if (pri == LOG_DEBUG && log_verbose < 1)
		return -1;              /* not written anyway: not counted */
	pthread_mutex_lock(&rl_mu);
	if (!rl->listed) {
		rl->listed = true;
		rl->next = rl_list;
		rl_list = rl;
		rl->begin_ns = now;
		rl->pri = LOG_DEBUG;
	}
	if (now - rl->begin_ns >= rl_interval(rl))
		rl_restart(rl, now, count, len, &cpri);
	ok = rl->n < (rl->burst ? rl->burst : LOG_RL_BURST);
	if (ok) {
		rl->n++;
	} else {
		rl->suppressed++;
		rl_total++;
		if (pri < rl->pri)
			rl->pri = pri;  /* syslog: smaller is more urgent */
	}
	pthread_mutex_unlock(&rl_mu);
	return ok ? cpri : -1;
}

/* A rate-limited message: first the count of the messages rl held back, if
 * any, then this one, unless rl holds it back too. */
static void
vlog_rl(struct log_ratelimit *rl, int pri, const char *prefix, const char *fmt, va_list ap)
{
	char count[LOG_MSG_MAX];
	int cpri = rl_admit(rl, pri, count, sizeof(count));

	if (cpri < 0)
		return;
	if (count[0])
		emit(cpri, count);
	vlog(pri, prefix, false, fmt, ap);
}

void
log_rl(struct log_ratelimit *rl, int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_rl(rl, pri, NULL, fmt, ap);
	va_end(ap);
}

void
log_rl_dom(struct log_ratelimit *rl, int pri, const char *domain, int vcpu, int tid, const char *fmt, ...)
{
	char prefix[320];
	va_list ap;

	va_start(ap, fmt);
	vlog_rl(rl, pri, dom_prefix(prefix, sizeof(prefix), domain, vcpu, tid), fmt, ap);
	va_end(ap);
}

void
log_ratelimit_flush(uint64_t now_ns)
{
	char line[LOG_MSG_MAX];
	int pri;

	for (;;) {
		line[0] = '\0';
		pthread_mutex_lock(&rl_mu);
		for (struct log_ratelimit *rl = rl_list; rl != NULL && line[0] == '\0'; rl = rl->next)
			if (rl->suppressed > 0 && now_ns - rl->begin_ns >= rl_interval(rl))
				rl_restart(rl, now_ns, line, sizeof(line), &pri);
		pthread_mutex_unlock(&rl_mu);
		if (line[0] == '\0')
			return;
		emit(pri, line);        /* outside the lock: a sink may log */
	}
}

uint64_t
log_suppressed_total(void)
{
	uint64_t n;

	pthread_mutex_lock(&rl_mu);
	n = rl_total;
	pthread_mutex_unlock(&rl_mu);
	return n;
}
