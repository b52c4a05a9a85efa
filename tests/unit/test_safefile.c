// SPDX-License-Identifier: GPL-2.0-or-later
/* test_safefile.c - common/safefile.c on real directories under /tmp:
 * which directories are refused and why, symbolic links on the way and at
 * the end, a replace that never writes through a planted name, a socket
 * connected to the inode that was found. Runs as root (the suite does):
 * the files of another owner are made with chown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "safefile.h"
#include "test_file.h"
#include "test_main.h"

static char top[TEST_TMPDIR_LEN];

static void
path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", top, rel);
}

static void
mk(const char *rel, mode_t mode)
{
	char p[256];

	path(p, sizeof(p), rel);
	assert_int_equal(mkdir(p, mode), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void
put(const char *rel, const char *text, mode_t mode)
{
	char p[256];
	int fd;

	path(p, sizeof(p), rel);
	assert_true((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode)) >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Which directories are used, which refused, and the reasons. */
static void
test_opendir(void **state)
{
	struct llcd_err err;
	char p[256], want[512];
	int fd;

	if (getuid() != 0)
		fail_msg("this test needs root (chown); run the suite as root");
	mk("ok", 0755);
	mk("ok/sub", 0700);
	mk("world", 0777);
	mk("sticky", 01777);
	mk("sticky/mine", 0755);
	mk("group", 0775);
	mk("user", 0755);
	assert_int_equal(chown((path(p, sizeof(p), "user"), p), 1000, 1000), 0);
	mk("world/below", 0755);

	path(p, sizeof(p), "ok/sub");
	assert_true((fd = safefile_opendir(p, 0, &err)) >= 0);   /* /tmp on the way is sticky */
	close(fd);
	path(p, sizeof(p), "world");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	snprintf(want, sizeof(want), "directory %s is writable by others (mode 0777, owner uid 0, group 0): llcd, as root, "
	    "does not use files in it (chmod go-w)", p);
	assert_string_equal(err.msg, want);
	path(p, sizeof(p), "sticky");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);     /* sticky is not enough for the directory itself */
	assert_true((fd = safefile_opendir(p, SAFEFILE_STICKY_OK, &err)) >= 0);
	close(fd);
	path(p, sizeof(p), "sticky/mine");
	assert_true((fd = safefile_opendir(p, 0, &err)) >= 0);  /* below a sticky one: fine */
	close(fd);
	path(p, sizeof(p), "world/below");                     /* below a world-writable one: not */
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	snprintf(want, sizeof(want), "%s/world is writable by others and not sticky (mode 0777): whoever may write it "
	    "could replace what lies below (chmod go-w)", top);
	assert_string_equal(err.msg, want);
	path(p, sizeof(p), "group");
	assert_int_equal(chown(p, 0, 0), 0);
	/* root's group may write it: 0775 root:root is fine */
	assert_true((fd = safefile_opendir(p, 0, &err)) >= 0);
	close(fd);
	assert_int_equal(chown(p, 0, 100), 0);                  /* group 100 may not */
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	assert_non_null(strstr(err.msg, "is writable by its group"));
	path(p, sizeof(p), "user");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	assert_non_null(strstr(err.msg, "is owned by uid 1000, not root"));
	assert_true((fd = safefile_opendir(p, SAFEFILE_ANY_OWNER, &err)) >= 0);
	close(fd);
	path(p, sizeof(p), "missing");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	assert_int_equal(errno, ENOENT);
}

/* Links on the way are followed (their directory passed); one into a
 * directory that does not pass leads to a refusal there. */
static void
test_links(void **state)
{
	struct llcd_err err;
	char p[256], t[256];
	int fd;

	mk("real", 0755);
	mk("real/d", 0755);
	mk("bad", 0777);
	mk("bad/d", 0755);
	path(p, sizeof(p), "abs");
	path(t, sizeof(t), "real");
	assert_int_equal(symlink(t, p), 0);
	path(p, sizeof(p), "rel");
	assert_int_equal(symlink("real/d", p), 0);
	path(p, sizeof(p), "tobad");
	assert_int_equal(symlink("bad/d", p), 0);
	path(p, sizeof(p), "loop");
	assert_int_equal(symlink("loop", p), 0);

	path(p, sizeof(p), "abs/d");
	assert_true((fd = safefile_opendir(p, 0, &err)) >= 0);
	close(fd);
	path(p, sizeof(p), "rel");
	assert_true((fd = safefile_opendir(p, 0, &err)) >= 0);
	close(fd);
	path(p, sizeof(p), "tobad");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	assert_non_null(strstr(err.msg, "/bad is writable by others and not sticky"));
	path(p, sizeof(p), "loop/x");
	assert_int_equal(safefile_opendir(p, 0, &err), -1);
	assert_int_equal(errno, ELOOP);
	assert_true((fd = safefile_opendir("/var/run", 0, &err)) >= 0);  /* -> /run on Debian */
	close(fd);
}

/* Files: no link followed, no FIFO opened, a replace never writes through
 * a name someone planted. */
static void
test_files(void **state)
{
	struct llcd_err err;
	char p[256], t[256], *buf;
	size_t len;
	int dfd, fd;

	mk("d", 0755);
	put("secret", "root:x:0:0\n", 0600);
	put("d/good", "hello\n", 0644);
	path(p, sizeof(p), "d/link");
	path(t, sizeof(t), "secret");
	assert_int_equal(symlink(t, p), 0);
	path(p, sizeof(p), "d/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	path(p, sizeof(p), "d");
	assert_true((dfd = safefile_opendir(p, 0, &err)) >= 0);

	assert_true((fd = safefile_open(dfd, "good", O_RDONLY, &err)) >= 0);
	close(fd);
	assert_int_equal(safefile_open(dfd, "link", O_RDONLY, &err), -1);
	assert_string_equal(err.msg, "link is a symbolic link: not followed");
	assert_int_equal(safefile_open(dfd, "fifo", O_RDONLY, &err), -1);      /* does not block */
	assert_string_equal(err.msg, "fifo is a FIFO: not read");
	path(p, sizeof(p), "d/good");
	assert_int_equal(safefile_read_path(p, 100, &buf, &len, &err), 0);
	assert_string_equal(buf, "hello\n");
	free(buf);
	assert_int_equal(safefile_read_path(p, 3, &buf, &len, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 3 bytes"));
	path(p, sizeof(p), "d/link");
	assert_int_equal(safefile_read_path(p, 100, &buf, &len, &err), -1);
	snprintf(t, sizeof(t), "%s/d: link is a symbolic link: not followed", top);
	assert_string_equal(err.msg, t);

	/* replace over a link: the link is replaced, its target untouched */
	assert_int_equal(safefile_replace(dfd, "link", "new\n", 4, 0600, &err), 0);
	path(p, sizeof(p), "secret");
	assert_int_equal(safefile_read_path(p, 100, &buf, &len, &err), 0);
	assert_string_equal(buf, "root:x:0:0\n");
	free(buf);
	struct stat st;
	assert_int_equal(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	close(dfd);
	/* no temporary left behind */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s/d' | wc -l) = 3", top);
	assert_int_equal(system(cmd), 0);
	/* by path, in a directory others may write: refused, nothing written */
	mk("w", 0777);
	path(p, sizeof(p), "w/tunes");
	assert_int_equal(safefile_replace_path(p, "x\n", 2, 0600, &err), -1);
	assert_non_null(strstr(err.msg, "is writable by others"));
	assert_int_equal(access(p, F_OK), -1);
}

/* The socket connected is the inode found: a name swapped for a link to
 * another socket after the look is not followed (it is never looked up
 * again), and a link is refused. */
static void
test_connect(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct llcd_err err;
	struct stat st;
	char p[256], t[256];
	int l1, l2, dfd, s;

	mk("s", 0755);
	path(p, sizeof(p), "s/a.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", p);
	assert_true((l1 = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(l1, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l1, 4), 0);
	path(t, sizeof(t), "other.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", t);
	assert_true((l2 = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) >= 0);
	assert_int_equal(bind(l2, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l2, 4), 0);
	path(p, sizeof(p), "s/b.sock");
	assert_int_equal(symlink(t, p), 0);
	path(p, sizeof(p), "s");
	assert_true((dfd = safefile_opendir(p, 0, &err)) >= 0);

	assert_true((s = safefile_connect(dfd, "a.sock", &st, &err)) >= 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	int c = accept(l1, NULL, NULL);
	assert_true(c >= 0);
	close(c);
	close(s);
	assert_int_equal(safefile_connect(dfd, "b.sock", &st, &err), -1);
	assert_string_equal(err.msg, "a symbolic link, not a socket: not connected");
	assert_int_equal(safefile_connect(dfd, "none.sock", &st, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(accept(l2, NULL, NULL), -1);           /* never reached */
	close(dfd);
	close(l1);
	close(l2);
}

TEST_MAIN(
	TEST_IN_TMPDIR(test_opendir, top),
	TEST_IN_TMPDIR(test_links, top),
	TEST_IN_TMPDIR(test_files, top),
	TEST_IN_TMPDIR(test_connect, top))
