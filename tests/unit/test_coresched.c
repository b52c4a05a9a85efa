// SPDX-License-Identifier: GPL-2.0-or-later
/* test_coresched.c - cookie logic against a fake kernel (the prctl seam),
 * and the availability probe against the real kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coresched.h"
#include "test_main.h"

/* ---- the fake kernel --------------------------------------------------
 * Tasks with a tgid and a cookie; the caller ("current") is whoever calls
 * (gettid()), added on first sight as a thread of this process. */
#define FK_MAX 64

struct fk_task {
	int tid, tgid;
	uint64_t cookie;
};

struct fake_kernel {
	struct fk_task t[FK_MAX];
	int n;
	uint64_t next_cookie;
	int fail_all;                   /* errno for every call (EINVAL: no SCHED_CORE) */
	int eperm_tid;                  /* EPERM for this target */
	int calls[4];                   /* per PR_SCHED_CORE_* command */
	int ncalls;
	int last_create_tid, last_share_to_pid;
	unsigned long last_share_to_scope;
};

static struct fk_task *
fk_find(struct fake_kernel *k, int tid)
{
	for (struct fk_task *t = k->t; t < k->t + k->n; t++)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void
fk_add(struct fake_kernel *k, int tid, int tgid, uint64_t cookie)
{
	assert_true(k->n < FK_MAX);
	k->t[k->n++] = (struct fk_task){ tid, tgid, cookie };
}

static void
fk_remove(struct fake_kernel *k, int tid)
{
	struct fk_task *t = fk_find(k, tid);

	assert_non_null(t);
	*t = k->t[--k->n];
}

static struct fk_task *
fk_current(struct fake_kernel *k)
{
	struct fk_task *t = fk_find(k, gettid());

	if (t == NULL) {
		fk_add(k, gettid(), getpid(), 0);
		t = fk_find(k, gettid());
	}
	return t;
}

static int
fake_prctl(void *arg, int option, unsigned long cmd, unsigned long pid,
    unsigned long scope, unsigned long uaddr)
{
	struct fake_kernel *k = arg;
	struct fk_task *cur = fk_current(k), *t;
	int i;

	assert_int_equal(option, PR_SCHED_CORE);
	assert_true(cmd < 4);
	k->calls[cmd]++;
	k->ncalls++;
	if (k->fail_all) {
		errno = k->fail_all;
		return -1;
	}
	t = pid == 0 ? cur : fk_find(k, (int)pid);
	if (t == NULL) {
		errno = ESRCH;
		return -1;
	}
	if (t->tid == k->eperm_tid) {
		errno = EPERM;
		return -1;
	}
	switch (cmd) {
	case 0:         /* GET */
		assert_int_equal(scope, 0);
		*(uint64_t *)(uintptr_t)uaddr = t->cookie;
		return 0;
	case 1:         /* CREATE */
		k->last_create_tid = t->tid;
		assert_int_equal(scope, 0);     /* the brief: on one thread */
		t->cookie = ++k->next_cookie;
		return 0;
	case 2:         /* SHARE_TO */
		k->last_share_to_pid = t->tid;
		k->last_share_to_scope = scope;
		if (scope == 0) {
			t->cookie = cur->cookie;
		} else {
			int tgid = t->tgid;
			for (i = 0; i < k->n; i++)
				if (k->t[i].tgid == tgid)
					k->t[i].cookie = cur->cookie;
		}
		return 0;
	case 3:         /* SHARE_FROM */
		assert_int_equal(scope, 0);
		cur->cookie = t->cookie;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

static struct fake_kernel fk;

static struct coresched *
fake_new(void)
{
	struct coresched_ops ops = { fake_prctl, &fk };

	memset(&fk, 0, sizeof(fk));
	fk.next_cookie = 0x1000;
	/* domain A: QEMU pid 1000, vCPU threads 1001-1002, emulator 1003 */
	fk_add(&fk, 1000, 1000, 0);
	fk_add(&fk, 1001, 1000, 0);
	fk_add(&fk, 1002, 1000, 0);
	fk_add(&fk, 1003, 1000, 0);
	/* domain B: pid 2000 */
	fk_add(&fk, 2000, 2000, 0);
	fk_add(&fk, 2001, 2000, 0);
	return coresched_new(&ops);
}

static uint64_t
cookie_of(int tid)
{
	struct fk_task *t = fk_find(&fk, tid);

	assert_non_null(t);
	return t->cookie;
}

static void
test_unavailable_einval(void **state)
{
	struct coresched *cs = fake_new();
	struct llcd_err err;
	uint64_t c;
	int tids[1] = { 1001 };

	fk.fail_all = EINVAL;
	assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_NO);
	assert_int_equal(coresched_probe_errno(cs), EINVAL);
	assert_non_null(strstr(coresched_reason(cs), "CONFIG_SCHED_CORE"));
	assert_int_equal(fk.ncalls, 1);
	/* detected once: nothing reaches the kernel any more */
	assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_NO);
	assert_int_equal(coresched_assign(cs, 1000, 1001, &err), CORESCHED_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "core scheduling unavailable: kernel without"));
	assert_int_equal(coresched_share(cs, 1001, tids, 1, NULL, &err), CORESCHED_UNAVAILABLE);
	assert_int_equal(coresched_get(cs, 1001, &c, &err), CORESCHED_UNAVAILABLE);
	assert_int_equal(fk.ncalls, 1);
	assert_string_equal(coresched_avail_name(CORESCHED_AVAIL_NO), "unavailable");
	coresched_free(cs);
}

static void
test_unavailable_enodev(void **state)
{
	struct coresched *cs = fake_new();

	fk.fail_all = ENODEV;
	assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_NO);
	assert_string_equal(coresched_reason(cs), "no SMT on this host: prctl(PR_SCHED_CORE) fails with ENODEV");
	coresched_free(cs);
}

static void
test_assign_and_hotplug(void **state)
{
	struct coresched *cs = fake_new();
	struct llcd_err err;
	uint64_t a, b, got;
	int newtids[3] = { 1004, 1005, 1006 }, nshared;

	assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_YES);
	assert_string_equal(coresched_reason(cs), "available");

	/* create on one thread, share to the whole thread group */
	assert_int_equal(coresched_assign(cs, 1000, 1001, &err), CORESCHED_OK);
	assert_int_equal(fk.last_create_tid, 1001);
	assert_int_equal(fk.last_share_to_pid, 1000);
	assert_int_equal(fk.last_share_to_scope, 1);
	a = cookie_of(1001);
	assert_true(a != 0);
	assert_int_equal(cookie_of(1000), a);
	assert_int_equal(cookie_of(1002), a);
	assert_int_equal(cookie_of(1003), a);
	assert_int_equal(cookie_of(2000), 0);           /* other domain untouched */
	/* llcd's own thread never carries a domain cookie (a helper did) */
	assert_int_equal(cookie_of(gettid()), 0);

	/* a second domain gets its own cookie */
	assert_int_equal(coresched_assign(cs, 2000, 2000, &err), CORESCHED_OK);
	b = cookie_of(2001);
	assert_true(b != 0 && b != a);
	assert_int_equal(cookie_of(1001), a);

	/* hot-plug: 1004 and 1005 appeared without the cookie, 1006 inherited it */
	fk_add(&fk, 1004, 1000, 0);
	fk_add(&fk, 1005, 1000, 0);
	fk_add(&fk, 1006, 1000, a);
	fk.calls[2] = 0;
	assert_int_equal(coresched_share(cs, 1001, newtids, 3, &nshared, &err), CORESCHED_OK);
	assert_int_equal(nshared, 2);
	assert_int_equal(fk.calls[2], 2);               /* no SHARE_TO for 1006 */
	assert_int_equal(cookie_of(1004), a);
	assert_int_equal(cookie_of(1005), a);
	assert_int_equal(cookie_of(gettid()), 0);
	assert_int_equal(coresched_get(cs, 1005, &got, &err), CORESCHED_OK);
	assert_int_equal(got, a);

	/* again: nothing to do, no helper, no SHARE_TO */
	fk.calls[2] = fk.calls[3] = 0;
	assert_int_equal(coresched_share(cs, 1001, newtids, 3, &nshared, &err), CORESCHED_OK);
	assert_int_equal(nshared, 0);
	assert_int_equal(fk.calls[2] + fk.calls[3], 0);
	coresched_free(cs);
}

static void
test_gone_and_permanent(void **state)
{
	struct coresched *cs = fake_new();
	struct llcd_err err;
	int tids[3] = { 1002, 1007, 1003 }, nshared;

	/* CREATE on a thread that is gone */
	assert_int_equal(coresched_assign(cs, 1000, 1234, &err), CORESCHED_GONE);
	assert_string_equal(err.msg, "prctl(PR_SCHED_CORE, CREATE, 1234): No such process");
	/* the whole process gone between CREATE and SHARE_TO */
	assert_int_equal(coresched_assign(cs, 1999, 1001, &err), CORESCHED_GONE);
	assert_string_equal(err.msg, "prctl(PR_SCHED_CORE, SHARE_TO thread group, 1999): No such process");

	assert_int_equal(coresched_assign(cs, 1000, 1001, &err), CORESCHED_OK);
	/* a target vanishing during the share is skipped, not an error */
	fk_remove(&fk, 1002);
	fk_add(&fk, 1007, 1000, 0);
	fk_find(&fk, 1003)->cookie = 0;
	assert_int_equal(coresched_share(cs, 1001, tids, 3, &nshared, &err), CORESCHED_OK);
	assert_int_equal(nshared, 2);
	/* the source thread is gone */
	assert_int_equal(coresched_share(cs, 4242, tids, 2, &nshared, &err), CORESCHED_GONE);
	/* a source without a cookie */
	assert_int_equal(coresched_share(cs, 2001, tids, 2, &nshared, &err), CORESCHED_PERMANENT);
	assert_string_equal(err.msg, "thread 2001 carries no core-scheduling cookie to share");
	/* not allowed: permanent */
	fk.eperm_tid = 2001;
	assert_int_equal(coresched_assign(cs, 2000, 2001, &err), CORESCHED_PERMANENT);
	assert_string_equal(err.msg, "prctl(PR_SCHED_CORE, CREATE, 2001): Operation not permitted");
	assert_string_equal(coresched_result_name(CORESCHED_PERMANENT), "permanent");
	coresched_free(cs);
	coresched_free(NULL);
}

/* The real kernel: whatever it supports, the probe must agree with what a
 * raw prctl(PR_SCHED_CORE, GET) says. On Debian 12 kernels (and this CI
 * machine) that is EINVAL -> unavailable. */
static void
test_real_kernel(void **state)
{
	struct coresched *cs = coresched_new(NULL);
	struct llcd_err err;
	uint64_t cookie = 0, c1, c2;
	int rc, e, status;
	pid_t child;

	rc = prctl(PR_SCHED_CORE, 0 /* GET */, 0, 0, (unsigned long)&cookie);
	e = errno;
	if (rc == 0) {
		assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_YES);
		assert_int_equal(coresched_probe_errno(cs), 0);
		/* and it works: a child process gets a cookie we did not */
		child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			pause();
			_exit(0);
		}
		assert_int_equal(coresched_assign(cs, child, child, &err), CORESCHED_OK);
		assert_int_equal(coresched_get(cs, child, &c1, &err), CORESCHED_OK);
		assert_int_equal(coresched_get(cs, gettid(), &c2, &err), CORESCHED_OK);
		assert_true(c1 != 0);
		assert_true(c1 != c2);
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	} else {
		assert_int_equal(coresched_probe(cs), CORESCHED_AVAIL_NO);
		print_message("real kernel: prctl(PR_SCHED_CORE) fails with %s: %s\n",
		    strerror(e), coresched_reason(cs));
		assert_int_equal(coresched_probe_errno(cs), e);
		if (e == EINVAL)
			assert_non_null(strstr(coresched_reason(cs), "CONFIG_SCHED_CORE"));
		assert_int_equal(coresched_assign(cs, getpid(), gettid(), &err), CORESCHED_UNAVAILABLE);
	}
	coresched_free(cs);
}

TEST_MAIN(
	cmocka_unit_test(test_unavailable_einval),
	cmocka_unit_test(test_unavailable_enodev),
	cmocka_unit_test(test_assign_and_hotplug),
	cmocka_unit_test(test_gone_and_permanent),
	cmocka_unit_test(test_real_kernel))
