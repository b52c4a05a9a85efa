// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpback_int.h - what the QMP back-end's two files share: a socket's
 * state (struct qvm), the back-end's (struct qmpback), and the steps of one
 * socket's connection (qmpback_conn.c) that the socket list (qmpback.c)
 * drives. Private to them. */
#ifndef LLCD_QMPBACK_INT_H
#define LLCD_QMPBACK_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "qmp.h"
#include "qmpback.h"

#define RESCAN_NS 5000000000ull
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
#define NQUERIES 4
#define REQUERY_MS 5000                 /* hot-plug: at most one re-read per VM this often */
#define GONE_KEEP_NS 60000000000ull     /* a vanished socket's back-off is kept this long */
#define GONE_MAX 256                    /* ... for this many sockets at most */

/* A socket's life (struct qvm.st):
 *   WAIT       not connected; connect at retry_ns
 *   HANDSHAKE  connecting, greeting, qmp_capabilities (deadline)
 *   QUERY      the four queries sent (deadline)
 *   HELD       hold: connected, reading events
 *   CLOSED     done and closed (not hold), or its QEMU exited and the
 *              socket has not come back yet */
enum qvm_state { QVM_WAIT, QVM_HANDSHAKE, QVM_QUERY, QVM_HELD, QVM_CLOSED };

struct qvm {
	char path[PATH_MAX];
	char id[NAME_MAX + 1];          /* basename without .qmp: the VMID */
	enum qvm_state st;
	struct qmp *q;
	int qfd;                        /* registered in epoll; -1 */
	uint64_t deadline_ns, retry_ns;
	int backoff_ms;
	char why[LLCD_ERR_MSG];         /* the last refusal, said once */
	uint64_t ids[NQUERIES];
	struct json_object *ret[NQUERIES];
	bool done[NQUERIES];
	int pid, uid;                   /* the peer (SO_PEERCRED) */
	int pidfd;
	uint64_t key;                   /* in live; 0 none */
	char name[POLICY_NAME];
	/* the policy file last read: which, and its identity */
	char pol_path[PATH_MAX];
	struct stat pol_st;
	bool pol_have;
	bool seen;
	bool gone;                      /* its socket is gone: kept GONE_KEEP_NS with
	                                 * its back-off and reason (a socket flipped
	                                 * away and back is no new socket) */
	uint64_t gone_ns, tried_ns;     /* gone since; last connect begun */
	bool shut_down;                 /* hold: SHUTDOWN heard */
	bool requery;                   /* hold: a DEVICE_ADDED / DEVICE_DELETED heard */
	uint64_t requery_ns;            /* hot-plug: no re-read before */
};

struct qmpback {
	struct live *live;
	bool registered;                /* the live back-end's source (live_set_source) */
	char glob[PATH_MAX], dir[PATH_MAX], policy_dir[PATH_MAX], channel[PATH_MAX];
	const char *pattern;            /* the glob's last component */
	int dfd, pol_dfd;               /* the two directories, checked (safefile.h) at
	                                 * each scan; -1 absent or refused */
	char dir_why[LLCD_ERR_MSG], pol_why[LLCD_ERR_MSG];      /* refused: said once */
	bool hold;
	int timeout_ms, requery_ms;
	const char *proc_root;
	int epfd, infd, wd_sock, wd_pol;
	struct qvm **vms;
	int n, cap;
	uint64_t next_scan_ns;
	bool scan_now, listed;
	uint64_t started_ns;
	uint64_t change_gen;            /* live_ext_change_gen() last looked at */
	bool requery_due;               /* a changed VM waits for its re-read */
	int added;
	struct qmpback_stats st;
};

/* qmpback.c: a name fit for a file name (letters, digits, . _ -) */
bool qvm_plain_name(const char *s);

/* qmpback_conn.c: one socket's connection, from the connect to the VM
 * handed to the live back-end, and its policy file */
void qvm_close(struct qmpback *q, struct qvm *v);
void qvm_answered(struct qmpback *q, struct qvm *v);
void qvm_drop_domain(struct qmpback *q, struct qvm *v, const char *why);
/* A connection failed: close it and try again after a back-off; a reason
 * is said once (a new reason is said again). */
void qvm_refuse(struct qmpback *q, struct qvm *v, uint64_t now, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void qvm_policy_check(struct qmpback *q, struct qvm *v, bool force);
void qvm_start_connect(struct qmpback *q, struct qvm *v, uint64_t now);
void qvm_step(struct qmpback *q, struct qvm *v, uint64_t now);
void qvm_requery(struct qmpback *q, struct qvm *v, uint64_t now);

#endif
