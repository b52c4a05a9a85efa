// SPDX-License-Identifier: GPL-2.0-or-later
/* Files read by unit tests: a fixture read whole into memory, a field of a
 * /proc status file, a scratch directory (cmocka: include after
 * <cmocka.h>). */
#ifndef LLCD_TEST_FILE_H
#define LLCD_TEST_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file at path, NUL-terminated, its length in *len; fails the test
 * when it cannot be read. The caller frees it. */
static inline char *
test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The number after "key:" in the /proc status file at path (as
 * /proc/PID/status), -1 when it has no such line; fails the test when the
 * file cannot be opened. */
static inline long long
test_status_field(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	size_t klen = strlen(key);
	long long v = -1;
	char line[256];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The first memory node a cgroup v1 cpuset hierarchy's root allows (its
 * cpuset.mems cut at the first '-', ',' or newline) into mems, for a new
 * cpuset's cpuset.mems; "0" when it cannot be read. */
static inline void
test_v1_first_mem(const char *v1, char *mems, size_t len)
{
	char path[4160];
	FILE *f;

	snprintf(mems, len, "0");
	snprintf(path, sizeof(path), "%s/cpuset.mems", v1);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(mems, (int)len, f))
		mems[strcspn(mems, "\n-,")] = '\0';
	fclose(f);
}

/* A new empty directory /tmp/NAME.XXXXXX, its path in dir (len bytes);
 * fails the test when it cannot be made. */
static inline void
test_tmpdir(char *dir, size_t len, const char *name)
{
	assert_true((size_t)snprintf(dir, len, "/tmp/%s.XXXXXX", name) < len);
	assert_non_null(mkdtemp(dir));
}

/* Remove dir and all below it: 0, or -1 when rm fails. */
static inline int
test_rmtree(const char *dir)
{
	char cmd[300];

	assert_true((size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < sizeof(cmd));
	return system(cmd) == 0 ? 0 : -1;
}

/* A test run in a scratch directory of its own: TEST_IN_TMPDIR(test, dir),
 * dir a char[TEST_TMPDIR_LEN] that holds the directory's path while the
 * test runs (cmocka's initial state; the setup makes the directory, the
 * teardown removes it with all below it). */
#define TEST_TMPDIR_LEN 64
#define TEST_IN_TMPDIR(f, dir) cmocka_unit_test_prestate_setup_teardown(f, test_tmpdir_setup, test_tmpdir_teardown, dir)

static inline int
test_tmpdir_setup(void **state)
{
	test_tmpdir(*state, TEST_TMPDIR_LEN, "llcd-test");
	return 0;
}

static inline int
test_tmpdir_teardown(void **state)
{
	return test_rmtree(*state);
}

#endif
