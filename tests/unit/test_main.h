// SPDX-License-Identifier: GPL-2.0-or-later
/* The main() of a cmocka test program that runs one group of tests with no
 * group set-up: TEST_MAIN(cmocka_unit_test(a), cmocka_unit_test(b), ...).
 * Include after <cmocka.h>. */
#ifndef LLCD_TEST_MAIN_H
#define LLCD_TEST_MAIN_H

#define TEST_MAIN(...)                                                  \
	int                                                             \
	main(void)                                                      \
	{                                                               \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };      \
		return cmocka_run_group_tests(tests, NULL, NULL);       \
	}

#endif
