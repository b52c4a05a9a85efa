// SPDX-License-Identifier: GPL-2.0-or-later
/* coresched.c - core-scheduling cookies through prctl(PR_SCHED_CORE). */
#include "coresched.h"
#include "names.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#endif
#ifndef PR_SCHED_CORE_GET
#define PR_SCHED_CORE_GET 0
#define PR_SCHED_CORE_CREATE 1
#define PR_SCHED_CORE_SHARE_TO 2
#define PR_SCHED_CORE_SHARE_FROM 3
#endif
#ifndef PR_SCHED_CORE_SCOPE_THREAD
#define PR_SCHED_CORE_SCOPE_THREAD 0
#define PR_SCHED_CORE_SCOPE_THREAD_GROUP 1
#endif

struct coresched {
	struct coresched_ops ops;
	enum coresched_avail avail;
	int probe_errno;
	char reason[160];
};

static int
real_prctl(void *arg, int option, unsigned long a2, unsigned long a3,
    unsigned long a4, unsigned long a5)
{
	return prctl(option, a2, a3, a4, a5);
}

struct coresched *
coresched_new(const struct coresched_ops *ops)
{
	struct coresched *cs;

	if ((cs = calloc(1, sizeof(*cs))) == NULL)
		return NULL;
	if (ops != NULL)
		cs->ops = *ops;
	else
		cs->ops.prctl = real_prctl;
	snprintf(cs->reason, sizeof(cs->reason), "not probed");
	return cs;
}

void
coresched_free(struct coresched *cs)
{
	free(cs);
}

LLCD_NAME_FUNCTION(coresched_result_name, enum coresched_result, CORESCHED_UNAVAILABLE,
    [CORESCHED_OK] = "ok", [CORESCHED_TRANSIENT] = "transient", [CORESCHED_GONE] = "gone",
    [CORESCHED_PERMANENT] = "permanent", [CORESCHED_UNAVAILABLE] = "unavailable")

LLCD_NAME_FUNCTION(coresched_avail_name, enum coresched_avail, CORESCHED_AVAIL_NO,
    [CORESCHED_AVAIL_UNKNOWN] = "unknown", [CORESCHED_AVAIL_YES] = "available",
    [CORESCHED_AVAIL_NO] = "unavailable")

static int
sc(struct coresched *cs, unsigned long cmd, int pid, unsigned long scope,
    uint64_t *cookie)
{
	int r;

	do
		r = cs->ops.prctl(cs->ops.arg, PR_SCHED_CORE, cmd, (unsigned long)pid,
		    scope, (unsigned long)(uintptr_t)cookie);
	while (r < 0 && errno == EINTR);
	return r;
}

enum coresched_avail
coresched_probe(struct coresched *cs)
{
	uint64_t cookie = 0;

	if (cs->avail != CORESCHED_AVAIL_UNKNOWN)
		return cs->avail;
	if (sc(cs, PR_SCHED_CORE_GET, 0, PR_SCHED_CORE_SCOPE_THREAD, &cookie) == 0) {
		cs->avail = CORESCHED_AVAIL_YES;
		cs->probe_errno = 0;
		snprintf(cs->reason, sizeof(cs->reason), "available");
		return cs->avail;
	}
	cs->probe_errno = errno;
	cs->avail = CORESCHED_AVAIL_NO;
	if (errno == EINVAL)
		snprintf(cs->reason, sizeof(cs->reason),
		    "kernel without core scheduling (CONFIG_SCHED_CORE): prctl(PR_SCHED_CORE) fails with EINVAL");
	else if (errno == ENODEV)
		snprintf(cs->reason, sizeof(cs->reason),
		    "no SMT on this host: prctl(PR_SCHED_CORE) fails with ENODEV");
	else
		snprintf(cs->reason, sizeof(cs->reason),
		    "prctl(PR_SCHED_CORE, GET) failed: %s", strerror(errno));
	return cs->avail;
}

const char *
coresched_reason(const struct coresched *cs)
{
	return cs->reason;
}

int
coresched_probe_errno(const struct coresched *cs)
{
	return cs->probe_errno;
}

static enum coresched_result
classify(int e)
{
	switch (e) {
	case 0: return CORESCHED_OK;
	case ESRCH: return CORESCHED_GONE;
	case ENOMEM:
	case EAGAIN: return CORESCHED_TRANSIENT;
	default: return CORESCHED_PERMANENT;
	}
}

static enum coresched_result
fail(int e, struct llcd_err *err, const char *what, int id)
{
	llcd_err_set(err, "prctl(PR_SCHED_CORE, %s, %d): %s", what, id, strerror(e));
	return classify(e);
}

/* The helper thread: pulls a cookie, pushes it, exits with it. */
struct helper {
	struct coresched *cs;
	int from_tid;
	int to_pid;                     /* SHARE_TO this thread group, or 0 */
	const int *tids;                /* or these threads */
	int n;
	/* results */
	int nshared;
	int err_errno;
	int err_id;
	const char *err_what;
};

static void *
helper_main(void *arg)
{
	struct helper *h = arg;
	int i;

	if (sc(h->cs, PR_SCHED_CORE_SHARE_FROM, h->from_tid, PR_SCHED_CORE_SCOPE_THREAD, NULL) < 0) {
		h->err_errno = errno;
		h->err_id = h->from_tid;
		h->err_what = "SHARE_FROM";
		return NULL;
	}
	if (h->to_pid > 0) {
		if (sc(h->cs, PR_SCHED_CORE_SHARE_TO, h->to_pid, PR_SCHED_CORE_SCOPE_THREAD_GROUP, NULL) < 0) {
			h->err_errno = errno;
			h->err_id = h->to_pid;
			h->err_what = "SHARE_TO thread group";
		}
		return NULL;
	}
	for (i = 0; i < h->n; i++) {
		if (sc(h->cs, PR_SCHED_CORE_SHARE_TO, h->tids[i], PR_SCHED_CORE_SCOPE_THREAD, NULL) < 0) {
			if (errno == ESRCH)
				continue;       /* that thread exited: nothing to share to */
			h->err_errno = errno;
			h->err_id = h->tids[i];
			h->err_what = "SHARE_TO";
			return NULL;
		}
		h->nshared++;
	}
	return NULL;
}

static enum coresched_result
run_helper(struct helper *h, struct llcd_err *err)
{
	pthread_t th;
	int e;

	if ((e = pthread_create(&th, NULL, helper_main, h)) != 0) {
		llcd_err_set(err, "core scheduling helper thread: %s", strerror(e));
		return CORESCHED_TRANSIENT;
	}
	pthread_join(th, NULL);
	if (h->err_errno != 0)
		return fail(h->err_errno, err, h->err_what, h->err_id);
	return CORESCHED_OK;
}

enum coresched_result
coresched_assign(struct coresched *cs, int pid, int tid, struct llcd_err *err)
{
	struct helper h = { .cs = cs, .from_tid = tid, .to_pid = pid };

	if (coresched_probe(cs) != CORESCHED_AVAIL_YES) {
		llcd_err_set(err, "core scheduling unavailable: %s", cs->reason);
		return CORESCHED_UNAVAILABLE;
	}
	if (pid <= 0 || tid <= 0) {
		llcd_err_set(err, "coresched_assign: bad pid %d / tid %d", pid, tid);
		return CORESCHED_PERMANENT;
	}
	if (sc(cs, PR_SCHED_CORE_CREATE, tid, PR_SCHED_CORE_SCOPE_THREAD, NULL) < 0)
		return fail(errno, err, "CREATE", tid);
	return run_helper(&h, err);
}

enum coresched_result
coresched_get(struct coresched *cs, int tid, uint64_t *cookie,
    struct llcd_err *err)
{
	if (coresched_probe(cs) != CORESCHED_AVAIL_YES) {
		llcd_err_set(err, "core scheduling unavailable: %s", cs->reason);
		return CORESCHED_UNAVAILABLE;
	}
	*cookie = 0;
	if (sc(cs, PR_SCHED_CORE_GET, tid, PR_SCHED_CORE_SCOPE_THREAD, cookie) < 0)
		return fail(errno, err, "GET", tid);
	return CORESCHED_OK;
}

enum coresched_result
coresched_share(struct coresched *cs, int from_tid, const int *tids, int n,
    int *nshared, struct llcd_err *err)
{
	struct helper h = { .cs = cs, .from_tid = from_tid };
	enum coresched_result r;
	uint64_t want, have;
	int *todo, i, ntodo = 0;

	if (nshared != NULL)
		*nshared = 0;
	if ((r = coresched_get(cs, from_tid, &want, err)) != CORESCHED_OK)
		return r;
	if (want == 0) {
		llcd_err_set(err, "thread %d carries no core-scheduling cookie to share", from_tid);
		return CORESCHED_PERMANENT;
	}
	if (n <= 0)
		return CORESCHED_OK;
	if ((todo = calloc((size_t)n, sizeof(*todo))) == NULL) {
		llcd_err_set(err, "out of memory");
		return CORESCHED_TRANSIENT;
	}
	for (i = 0; i < n; i++) {
		r = coresched_get(cs, tids[i], &have, err);
		if (r == CORESCHED_GONE)
			continue;
		if (r != CORESCHED_OK) {
			free(todo);
			return r;
		}
		if (have != want)
			todo[ntodo++] = tids[i];
	}
	if (ntodo > 0) {
		h.tids = todo;
		h.n = ntodo;
		r = run_helper(&h, err);
		if (r == CORESCHED_GONE && h.err_id == from_tid)
			llcd_err_prefix(err, "source thread vanished");
	} else {
		r = CORESCHED_OK;
	}
	if (nshared != NULL)
		*nshared = h.nshared;
	free(todo);
	return r;
}
