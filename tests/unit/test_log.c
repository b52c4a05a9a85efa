/* test_log.c - message format: domain / vCPU / TID prefix, strerror,
 * verbosity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
