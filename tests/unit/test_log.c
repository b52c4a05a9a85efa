// SPDX-License-Identifier: GPL-2.0-or-later
/* test_log.c - message format: domain / vCPU / TID prefix, strerror,
 * verbosity; the time in the foreground (a real pty, a pipe, the journal's
 * stream); the rate limits of repeated warnings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"

#include "log.h"
#include "test_main.h"

static char last[LOG_MSG_MAX];
static int last_pri, count;

static void
sink(int pri, const char *msg, void *arg)
{
	snprintf(last, sizeof(last), "%s", msg);
	last_pri = pri;
	count++;
}

static void
test_format(void **state)
{
	char big[2000];

	log_init(true, 0);
	log_set_sink(sink, NULL);
	log_dom(LOG_WARNING, "web1", 3, 12345, "pin to %s failed", "2-3");
	assert_string_equal(last, "domain web1 vcpu 3 tid 12345: pin to 2-3 failed");
	assert_int_equal(last_pri, LOG_WARNING);
	log_dom(LOG_INFO, "web1", -1, 0, "adopted");
	assert_string_equal(last, "domain web1: adopted");
	log_dom(LOG_INFO, NULL, 2, 77, "x");
	assert_string_equal(last, "vcpu 2 tid 77: x");
	log_dom(LOG_INFO, NULL, -1, -1, "plain");
	assert_string_equal(last, "plain");

	errno = ENOENT;
	log_warn("open %s", "/x");
	assert_string_equal(last, "open /x: No such file or directory");
	assert_int_equal(errno, ENOENT);        /* preserved */
	log_warnx("no errno");
	assert_string_equal(last, "no errno");

	count = 0;
	log_debug("hidden");
	assert_int_equal(count, 0);
	log_setverbose(1);
	log_debug("shown %d", 1);
	assert_int_equal(count, 1);
	assert_int_equal(last_pri, LOG_DEBUG);
	assert_int_equal(log_getverbose(), 1);

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_info("%s", big);                    /* truncated, marked */
	assert_int_equal(strlen(last), LOG_MSG_MAX - 1);
	assert_string_equal(last + LOG_MSG_MAX - 4, "...");
	log_set_sink(NULL, NULL);
}


/* -d: each line starts with the local time, on a terminal and redirected
 * to a pipe or a file alike (`llcd -d >file` had none);
 * only when stderr is the journal's stream (JOURNAL_STREAM names it) is
 * the line the message alone, the journal stamping it. */
static void
test_foreground_time(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), saved = dup(STDERR_FILENO), p[2];
	char buf[512] = "", js[64];
	regex_t re;
	struct stat st;

	assert_true(master >= 0 && saved >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	log_set_sink(NULL, NULL);
	log_init(true, 0);
	unsetenv("JOURNAL_STREAM");
	dup2(slave, STDERR_FILENO);
	log_warnx("libvirt connection lost (eof: libvirtd closed it)");
	dup2(saved, STDERR_FILENO);
	ssize_t n = read(master, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(regcomp(&re, "^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3} "
	    "libvirt connection lost \\(eof: libvirtd closed it\\)\r?\n$", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, buf, 0, NULL, 0), 0);
	regfree(&re);
	/* a pipe (llcd -d 2>&1 | tee): stamped too */
	assert_int_equal(pipe(p), 0);
	dup2(p[1], STDERR_FILENO);
	log_warnx("plain");
	dup2(saved, STDERR_FILENO);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_int_equal(regcomp(&re, "^20[0-9-]{8}T[0-9:]{8}\\.[0-9]{3} plain\n$", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, buf, 0, NULL, 0), 0);
	regfree(&re);
	/* the journal's stream: as it is */
	assert_int_equal(fstat(p[1], &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	dup2(p[1], STDERR_FILENO);
	log_warnx("plain");
	dup2(saved, STDERR_FILENO);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_string_equal(buf, "plain\n");
	/* another stream named there (stdout to the journal, stderr not) */
	setenv("JOURNAL_STREAM", "1:2", 1);
	dup2(p[1], STDERR_FILENO);
	log_warnx("plain");
	dup2(saved, STDERR_FILENO);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_true(n > 6 && strcmp(buf + n - 6, "plain\n") == 0 && buf[0] == '2');
	unsetenv("JOURNAL_STREAM");
	close(p[0]);
	close(p[1]);
	close(slave);
	close(master);
	close(saved);
}

static char lines[64][LOG_MSG_MAX];
static int nlines;

static void
collect(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)arg;
	if (nlines < 64)
		snprintf(lines[nlines], sizeof(lines[0]), "%s", msg);
	nlines++;
}

/* A flood through one limiter: the first burst written, the rest counted
 * and said in one line, by the next message written after the interval or
 * by log_ratelimit_flush(); limiters are independent; debug messages that
 * are not shown are not counted. */
static void
test_ratelimit(void **state)
{
	static struct log_ratelimit a = { .what = "refused test connections", .burst = 3,
	                                  .interval_ns = 300000000ull };
	static struct log_ratelimit b = LOG_RATELIMIT_INIT("other");
	uint64_t before = log_suppressed_total();

	log_init(true, 0);
	log_set_sink(collect, NULL);
	nlines = 0;
	for (int i = 0; i < 10000; i++)
		log_rl(&a, LOG_WARNING, "connection %d refused", i);
	log_rl_dom(&b, LOG_WARNING, "web1", 2, 0, "something else");
	log_rl(&b, LOG_DEBUG, "not shown, not counted");
	assert_int_equal(nlines, 4);
	assert_string_equal(lines[0], "connection 0 refused");
	assert_string_equal(lines[2], "connection 2 refused");
	assert_string_equal(lines[3], "domain web1 vcpu 2: something else");
	assert_int_equal(log_suppressed_total() - before, 9997);
	/* within the interval a flush says nothing yet */
	log_ratelimit_flush(llcd_mono_ns());
	assert_int_equal(nlines, 4);
	usleep(350000);
	log_rl(&a, LOG_WARNING, "connection %d refused", 10000);
	assert_int_equal(nlines, 6);
	assert_non_null(strstr(lines[4], "refused test connections: 9997 more suppressed in the last "));
	assert_string_equal(lines[5], "connection 10000 refused");
	/* suppressed again; this time the flush says it */
	for (int i = 0; i < 50; i++)
		log_rl(&a, LOG_WARNING, "connection refused");
	assert_int_equal(nlines, 8);
	usleep(350000);
	log_ratelimit_flush(llcd_mono_ns());
	assert_int_equal(nlines, 9);
	assert_non_null(strstr(lines[8], "refused test connections: 48 more suppressed in the last "));
	log_ratelimit_flush(llcd_mono_ns());    /* said once */
	assert_int_equal(nlines, 9);
	assert_int_equal(log_suppressed_total() - before, 9997 + 48);
	log_set_sink(NULL, NULL);
}

TEST_MAIN(
	cmocka_unit_test(test_format),
	cmocka_unit_test(test_foreground_time),
	cmocka_unit_test(test_ratelimit))
