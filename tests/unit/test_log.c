// SPDX-License-Identifier: GPL-2.0-or-later
/* test_log.c - message format: domain / vCPU / TID prefix, strerror,
 * verbosity; the time on a terminal (a real pty). */
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
#include <unistd.h>

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


/* -d on a terminal: each line starts with the local time; redirected to a
 * pipe, the line is the message alone (issue 16 item 7). */
static void
test_foreground_time(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), saved = dup(STDERR_FILENO), p[2];
	char buf[512] = "";
	regex_t re;

	assert_true(master >= 0 && saved >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	log_set_sink(NULL, NULL);
	log_init(true, 0);
	dup2(slave, STDERR_FILENO);
	log_warnx("libvirt connection lost (eof: libvirtd closed it)");
	dup2(saved, STDERR_FILENO);
	ssize_t n = read(master, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(regcomp(&re, "^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3} "
	    "libvirt connection lost \\(eof: libvirtd closed it\\)\r?\n", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, buf, 0, NULL, 0), 0);
	regfree(&re);
	assert_int_equal(pipe(p), 0);
	dup2(p[1], STDERR_FILENO);
	log_warnx("plain");
	dup2(saved, STDERR_FILENO);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	assert_string_equal(buf, "plain\n");
	close(p[0]);
	close(p[1]);
	close(slave);
	close(master);
	close(saved);
}

TEST_MAIN(
	cmocka_unit_test(test_format),
	cmocka_unit_test(test_foreground_time))
