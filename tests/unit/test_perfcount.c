// SPDX-License-Identifier: GPL-2.0-or-later
/* test_perfcount.c - the instruction counter probe agrees with what the
 * kernel says, and where counters exist they count a busy loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfcount.h"
#include "test_main.h"

static void
test_probe_consistent(void **state)
{
	char reason[256];
	struct llcd_err err;
	bool avail = perfcount_available(reason, sizeof(reason));
	int fd = perfcount_open((pid_t)syscall(SYS_gettid), &err);

	if (avail) {
		assert_true(fd >= 0);
		uint64_t a, b;
		volatile uint64_t x = 0;
		assert_int_equal(perfcount_read(fd, &a, &err), 0);
		for (int i = 0; i < 1000000; i++)
			x += (uint64_t)i;
		assert_int_equal(perfcount_read(fd, &b, &err), 0);
		assert_true(b - a > 1000000);     /* at least one instruction per iteration */
		close(fd);
	} else {
		/* unavailable here (a VM without a PMU, like this project's CI):
		 * the reason names the kernel's error and the fallback */
		assert_int_equal(fd, -1);
		assert_non_null(strstr(reason, "perf_event_open: "));
		assert_non_null(strstr(reason, "the kernel's guards alone decide"));
		assert_non_null(strstr(err.msg, "perf_event_open(thread "));
	}
	/* a thread that does not exist is an error either way */
	assert_int_equal(perfcount_open(0x7ffffff0, &err), -1);
}

TEST_MAIN(
	cmocka_unit_test(test_probe_consistent))
