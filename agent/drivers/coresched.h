// SPDX-License-Identifier: GPL-2.0-or-later
/* coresched.h - core-scheduling cookies for a domain's QEMU threads.
 *
 * With isolation="core" a domain owns whole cores; where the kernel has
 * core scheduling (CONFIG_SCHED_CORE, prctl PR_SCHED_CORE) the domain's
 * threads also get their own cookie, so that the kernel never runs another
 * domain's thread on an SMT sibling of one of them, even when placement
 * alone does not prevent it (a thread the policy does not pin, a pin
 * window during a move).
 *
 * The kernel's primitives, and how this module uses them:
 *   CREATE   a new cookie on one thread            coresched_assign()
 *   SHARE_TO push the caller's cookie to a thread  (or a thread group)
 *   SHARE_FROM pull a thread's cookie to the caller
 *   GET      a thread's cookie id (equal ids = same cookie)
 * llcd is not part of the QEMU process, so to spread a cookie it pulls it
 * into a short-lived helper thread (SHARE_FROM), pushes it from there
 * (SHARE_TO), and lets the helper exit: no llcd thread ever keeps a
 * domain's cookie. Threads QEMU creates later (hot-plugged vCPUs) inherit
 * the cookie of the thread that creates them; coresched_share() checks
 * each new thread (GET) and shares only where the cookie differs.
 *
 * Availability is probed once (GET on the caller): EINVAL means the kernel
 * lacks CONFIG_SCHED_CORE (every Debian 12 kernel flavour), ENODEV means
 * no SMT; both make the module "unavailable", after which every call
 * returns CORESCHED_UNAVAILABLE without a syscall.
 *
 * prctl is reached through a seam (struct coresched_ops) so that tests can
 * replace the kernel.
 */
#ifndef LLCD_CORESCHED_H
#define LLCD_CORESCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

enum coresched_avail {
	CORESCHED_AVAIL_UNKNOWN = 0,          /* not probed yet */
	CORESCHED_AVAIL_YES,
	CORESCHED_AVAIL_NO,
};

/* Same order and meaning as the agent's result classes (backend.h). */
enum coresched_result {
	CORESCHED_OK = 0,
	CORESCHED_TRANSIENT,            /* ENOMEM, EAGAIN: try again later */
	CORESCHED_GONE,                 /* ESRCH: the thread or process vanished */
	CORESCHED_PERMANENT,            /* EPERM, bad arguments: give up on it */
	CORESCHED_UNAVAILABLE,          /* no core scheduling on this host */
};

struct coresched_ops {
	/* prctl(2): returns -1 and sets errno on failure. */
	int (*prctl)(void *arg, int option, unsigned long a2, unsigned long a3,
	             unsigned long a4, unsigned long a5);
	void *arg;
};

struct coresched;

/* ops NULL: the real prctl. Does not probe yet. */
struct coresched *coresched_new(const struct coresched_ops *ops);
void coresched_free(struct coresched *cs);

/* Probe once (later calls return the cached answer). */
enum coresched_avail coresched_probe(struct coresched *cs);
/* Why unavailable (or "available"), for the start-up message and
 * `llcctl topology`. */
const char *coresched_reason(const struct coresched *cs);
/* The errno the probe saw (0 when available or not probed). */
int coresched_probe_errno(const struct coresched *cs);

/* Give a domain's QEMU process one new cookie: CREATE on tid (one of its
 * threads), then share it to every thread of process pid (one SHARE_TO
 * with thread-group scope). */
enum coresched_result coresched_assign(struct coresched *cs, int pid, int tid,
    struct llcd_err *err);
/* Share the cookie of from_tid to each of tids[0..n) that does not carry it
 * yet (hot-plugged vCPUs). *nshared (may be NULL) counts the threads that
 * were changed. A tid that vanished is skipped (not an error); from_tid
 * vanishing is CORESCHED_GONE. */
enum coresched_result coresched_share(struct coresched *cs, int from_tid,
    const int *tids, int n, int *nshared, struct llcd_err *err);
/* A thread's cookie id (0: none). */
enum coresched_result coresched_get(struct coresched *cs, int tid,
    uint64_t *cookie, struct llcd_err *err);

const char *coresched_result_name(enum coresched_result r);
const char *coresched_avail_name(enum coresched_avail a);

#endif
