// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpback.c - the QMP back-end (qmpback.h): QEMU processes found by their
 * QMP sockets, handed to the live back-end's code as ext domains. */
#include "qmpback.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-c/json.h>

#include "annotation_xml.h"
#include "clock.h"
#include "log.h"
#include "qmp.h"
#include "safefile.h"
#include "virt.h"

#define RESCAN_NS 5000000000ull
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
#define NQUERIES 4
#define REQUERY_MS 5000                 /* hot-plug: at most one re-read per VM this often */
#define GONE_KEEP_NS 60000000000ull     /* a vanished socket's back-off is kept this long */
#define GONE_MAX 256                    /* ... for this many sockets at most */

static struct log_ratelimit refuse_rl = LOG_RATELIMIT_INIT("QMP socket refusals");

/* A socket's life (struct qvm.st):
 *   WAIT       not connected; connect at retry_ns
 *   HANDSHAKE  connecting, greeting, qmp_capabilities (deadline)
 *   QUERY      the four queries sent (deadline)
 *   HELD       hold: connected, reading events
 *   CLOSED     done and closed (not hold), or its QEMU exited and the
 *              socket has not come back yet */
enum qvm_state { QVM_WAIT, QVM_HANDSHAKE, QVM_QUERY, QVM_HELD, QVM_CLOSED };

static const char *const queries[NQUERIES] = {
	"query-name", "query-uuid", "query-cpus-fast", "query-hotpluggable-cpus",
};

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

/* ---- small helpers -------------------------------------------------------- */

static bool
plain_name(const char *s)
{
	if (s[0] == '\0' || s[0] == '.' || strlen(s) > 200)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

int
qmpback_expand(const char *pattern, const char *name, const char *vmid, char *buf, size_t len)
{
	size_t o = 0;

	for (const char *p = pattern; *p; p++) {
		const char *ins = NULL;
		char one[2] = { *p, '\0' };
		if (*p == '%' && p[1]) {
			p++;
			ins = *p == 'n' ? (plain_name(name) ? name : vmid) : *p == 'i' ? vmid : *p == '%' ? "%" : NULL;
			if (ins == NULL) {
				one[0] = '%';
				ins = one;
				p--;
			}
		} else {
			ins = one;
		}
		size_t k = strlen(ins);
		if (o + k >= len)
			return -1;
		memcpy(buf + o, ins, k);
		o += k;
	}
	buf[o] = '\0';
	return 0;
}

static void
ep_set(struct qmpback *q, struct qvm *v)
{
	int fd = v->q ? qmp_fd(v->q) : -1;
	struct epoll_event ev = { .data.ptr = v };

	if (fd < 0) {
		if (v->qfd >= 0)
			epoll_ctl(q->epfd, EPOLL_CTL_DEL, v->qfd, NULL);
		v->qfd = -1;
		return;
	}
	ev.events = EPOLLIN | ((qmp_poll_events(v->q) & POLLOUT) ? EPOLLOUT : 0);
	if (v->qfd == fd) {
		epoll_ctl(q->epfd, EPOLL_CTL_MOD, fd, &ev);
	} else {
		if (v->qfd >= 0)
			epoll_ctl(q->epfd, EPOLL_CTL_DEL, v->qfd, NULL);
		epoll_ctl(q->epfd, EPOLL_CTL_ADD, fd, &ev);
		v->qfd = fd;
	}
}

static void
clear_replies(struct qvm *v)
{
	for (int i = 0; i < NQUERIES; i++) {
		json_object_put(v->ret[i]);
		v->ret[i] = NULL;
		v->done[i] = false;
		v->ids[i] = 0;
	}
}

static void
close_conn(struct qmpback *q, struct qvm *v)
{
	if (v->qfd >= 0)
		epoll_ctl(q->epfd, EPOLL_CTL_DEL, v->qfd, NULL);
	v->qfd = -1;
	qmp_free(v->q);
	v->q = NULL;
	clear_replies(v);
}

/* All queries answered and the answer taken: the back-off and reason
 * reset, and the connection held for events (qmp-hold) or closed. */
static void
answered(struct qmpback *q, struct qvm *v)
{
	v->why[0] = '\0';
	v->backoff_ms = BACKOFF_MIN_MS;
	clear_replies(v);
	if (q->hold) {
		v->st = QVM_HELD;
	} else {
		close_conn(q, v);
		v->st = QVM_CLOSED;
	}
}

static void
drop_vm_domain(struct qmpback *q, struct qvm *v, const char *why)
{
	if (v->key != 0) {
		live_ext_remove(q->live, v->key, why);
		q->st.vms_removed++;
	}
	v->key = 0;
	v->pol_have = false;
	v->pol_path[0] = '\0';
	if (v->pidfd >= 0) {
		epoll_ctl(q->epfd, EPOLL_CTL_DEL, v->pidfd, NULL);
		close(v->pidfd);
	}
	v->pidfd = -1;
}

/* A connection failed: close it and try again after a back-off; a reason
 * is said once (a new reason is said again). */
static void
refuse(struct qmpback *q, struct qvm *v, uint64_t now, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
refuse(struct qmpback *q, struct qvm *v, uint64_t now, const char *fmt, ...)
{
	char msg[LLCD_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	close_conn(q, v);
	q->st.refusals++;
	if (strcmp(msg, v->why) != 0)
		log_rl(&refuse_rl, LOG_WARNING, "QMP socket %s: %s; tried again after a back-off (up to %d s)", v->path,
		    msg, BACKOFF_MAX_MS / 1000);
	else
		log_debug("QMP socket %s: %s (again)", v->path, msg);
	snprintf(v->why, sizeof(v->why), "%s", msg);
	v->retry_ns = now + (uint64_t)v->backoff_ms * 1000000ull;
	v->backoff_ms = v->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : v->backoff_ms * 2;
	v->st = QVM_WAIT;
}

/* ---- the policy file ------------------------------------------------------- */

/* The files of the policy directory are read through its descriptor
 * (q->pol_dfd, checked at each scan): never through a symbolic link, and
 * not at all from a directory others may write. */
static void
policy_check(struct qmpback *q, struct qvm *v, bool force)
{
	char cand[2][PATH_MAX], file[2][NAME_MAX + 1];
	const char *path = "", *fname = "";
	struct stat st;
	int nc = 0;

	if (v->key == 0)
		return;
	if (!q->policy_dir[0]) {
		if (force)      /* no files: the policy-rules alone */
			live_ext_annotation(q->live, v->key, NULL, 0, "");
		return;
	}
	if (snprintf(file[nc], sizeof(file[0]), "%s.xml", v->id) < (int)sizeof(file[0]) &&
	    snprintf(cand[nc], sizeof(cand[0]), "%s/%s", q->policy_dir, file[nc]) < (int)sizeof(cand[0]))
		nc++;
	if (plain_name(v->name) && strcmp(v->name, v->id) != 0 &&
	    snprintf(file[nc], sizeof(file[0]), "%s.xml", v->name) < (int)sizeof(file[0]) &&
	    snprintf(cand[nc], sizeof(cand[0]), "%s/%s", q->policy_dir, file[nc]) < (int)sizeof(cand[0]))
		nc++;
	for (int i = 0; q->pol_dfd >= 0 && i < nc; i++) {
		if (fstatat(q->pol_dfd, file[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
			path = cand[i];
			fname = file[i];
			break;
		}
	}
	if (path[0] == '\0') {
		if (v->pol_have || force) {
			if (v->pol_have)
				log_dom(LOG_INFO, v->name, -1, 0, "policy file %s removed", v->pol_path);
			live_ext_annotation(q->live, v->key, NULL, 0, "");
		}
		v->pol_have = false;
		v->pol_path[0] = '\0';
		return;
	}
	if (!force && v->pol_have && strcmp(path, v->pol_path) == 0 && st.st_ino == v->pol_st.st_ino &&
	    st.st_dev == v->pol_st.st_dev && st.st_size == v->pol_st.st_size &&
	    st.st_mtim.tv_sec == v->pol_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == v->pol_st.st_mtim.tv_nsec)
		return;
	v->pol_have = true;
	v->pol_st = st;
	memcpy(v->pol_path, path, strlen(path) + 1);      /* both PATH_MAX */
	q->st.policy_reads++;
	char *buf = malloc(ANNOT_XML_MAX + 2);
	struct llcd_err e;
	int fd = buf ? safefile_open(q->pol_dfd, fname, O_RDONLY, &e) : -1;
	ssize_t n = -1;
	if (fd >= 0) {
		n = read(fd, buf, ANNOT_XML_MAX + 1);
		if (n < 0)
			snprintf(e.msg, sizeof(e.msg), "%s", strerror(errno));
		close(fd);
	}
	if (n < 0) {
		/* the reason, never the file's content (a link to /etc/shadow
		 * is refused before the parser could quote it) */
		log_dom(LOG_WARNING, v->name, -1, 0, "policy file %s: %s; left unannotated", path,
		    buf == NULL ? "out of memory" : e.msg);
		live_ext_annotation(q->live, v->key, NULL, 0, path);
	} else {
		/* over ANNOT_XML_MAX: the parser says so */
		log_dom(LOG_INFO, v->name, -1, 0, "policy file %s", path);
		live_ext_annotation(q->live, v->key, buf, (size_t)n, path);
	}
	free(buf);
}

/* ---- the VM from the replies ----------------------------------------------- */

static bool
is_task(const struct qmpback *q, int pid, int tid)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%d/task/%d", q->proc_root ? q->proc_root : "/proc", pid, tid);
	return access(p, F_OK) == 0;
}

static void
make_uuid(const char *path, char *buf, size_t len)
{
	uint64_t h = 1469598103934665603ull, g = 0x9e3779b97f4a7c15ull;

	for (const char *p = path; *p; p++) {
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
		g = (g ^ (unsigned char)*p) * 0x100000001b3ull + 7;
	}
	snprintf(buf, len, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(h >> 32), (unsigned)(h >> 16) & 0xffff,
	    (unsigned)h & 0xfff, (unsigned)(g >> 52) & 0xfff, (unsigned long long)(g & 0xffffffffffffull));
}

/* All four answers are in: check them and add the VM. */
static void
vm_from_replies(struct qmpback *q, struct qvm *v, uint64_t now)
{
	struct qmp_cpus *cpus = NULL;
	struct qmp_hotcpus *hot = NULL;
	struct llcd_err e;
	struct json_object *x;
	char uuid[40], name[POLICY_NAME], chan[PATH_MAX];
	int *tids = NULL, nv = 0, maxv = 0;
	struct policy_guest_topo g = { 1, 1, 1, 1, 1 };
	int ms = 0, md = 0, mc = 0, mco = 0, mt = 0;

	if (v->ret[2] == NULL) {
		refuse(q, v, now, "query-cpus-fast failed");
		return;
	}
	if (qmp_cpus_parse(v->ret[2], &cpus, &e) < 0) {
		refuse(q, v, now, "%s", e.msg);
		return;
	}
	/* the name: query-name, else the VMID */
	name[0] = '\0';
	if (v->ret[0] && json_object_object_get_ex(v->ret[0], "name", &x) && json_object_is_type(x, json_type_string))
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, json_object_get_string(x));
	for (char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ' ')
			*p = '_';
	if (name[0] == '\0')
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, v->id);
	uuid[0] = '\0';
	if (v->ret[1] && json_object_object_get_ex(v->ret[1], "UUID", &x) && json_object_is_type(x, json_type_string) &&
	    strspn(json_object_get_string(x), "0-") != strlen(json_object_get_string(x)) &&
	    strlen(json_object_get_string(x)) == 36)
		snprintf(uuid, sizeof(uuid), "%s", json_object_get_string(x));
	if (uuid[0] == '\0' || virt_uuid_key(uuid) == 0)
		make_uuid(v->path, uuid, sizeof(uuid));
	if (v->ret[3] && qmp_hotcpus_parse(v->ret[3], &hot, &e) == 0) {
		for (size_t i = 0; i < hot->n; i++) {
			const struct qmp_cpu_props *p = &hot->cpu[i].props;
			maxv += hot->cpu[i].vcpus_count > 0 ? hot->cpu[i].vcpus_count : 1;
			ms = p->socket_id > ms ? p->socket_id : ms;
			md = p->die_id > md ? p->die_id : md;
			mc = p->cluster_id > mc ? p->cluster_id : mc;
			mco = p->core_id > mco ? p->core_id : mco;
			mt = p->thread_id > mt ? p->thread_id : mt;
		}
	} else {
		for (size_t i = 0; i < cpus->n; i++) {
			const struct qmp_cpu_props *p = &cpus->cpu[i].props;
			ms = p->socket_id > ms ? p->socket_id : ms;
			md = p->die_id > md ? p->die_id : md;
			mc = p->cluster_id > mc ? p->cluster_id : mc;
			mco = p->core_id > mco ? p->core_id : mco;
			mt = p->thread_id > mt ? p->thread_id : mt;
		}
	}
	g.sockets = ms + 1;
	g.dies = md + 1;
	g.clusters = mc + 1;
	g.cores = mco + 1;
	g.threads = mt + 1;
	for (size_t i = 0; i < cpus->n; i++)
		if (cpus->cpu[i].cpu_index + 1 > nv)
			nv = cpus->cpu[i].cpu_index + 1;
	int topo_n = g.sockets * g.dies * g.clusters * g.cores * g.threads;
	if (maxv < nv)
		maxv = nv;
	if (topo_n > maxv && topo_n <= CPUSET_MAX)
		maxv = topo_n;
	if (nv < 1 || maxv > CPUSET_MAX) {
		refuse(q, v, now, "query-cpus-fast: %d vCPUs (max %d), want 1..%d", nv, maxv, CPUSET_MAX);
		goto out;
	}
	if ((tids = calloc((size_t)maxv, sizeof(int))) == NULL) {
		refuse(q, v, now, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cpus->n; i++) {
		int idx = cpus->cpu[i].cpu_index, tid = (int)cpus->cpu[i].tid;
		if (idx < 0 || tids[idx] != 0) {
			refuse(q, v, now, "query-cpus-fast: cpu-index %d twice or negative", idx);
			goto out;
		}
		for (int k = 0; k < maxv; k++)
			if (tids[k] == tid) {
				refuse(q, v, now, "query-cpus-fast: thread-id %d for two vCPUs", tid);
				goto out;
			}
		/* the peer may name only its own threads */
		if (!is_task(q, v->pid, tid)) {
			refuse(q, v, now, "vCPU %d: thread-id %d is not a thread of the socket's process (pid %d)", idx,
			    tid, v->pid);
			goto out;
		}
		tids[idx] = tid;
	}
	chan[0] = '\0';
	if (q->channel[0] && qmpback_expand(q->channel, name, v->id, chan, sizeof(chan)) < 0) {
		log_warnx("QMP socket %s: guest-channel-path too long for %s; no channel", v->path, name);
		chan[0] = '\0';
	}
	struct live_ext_domain xd = {
		.name = name, .uuid = uuid, .pid = v->pid, .nvcpus = nv, .maxvcpus = maxv, .tids = tids,
		.guest = g, .channel = chan[0] ? chan : NULL,
	};
	if (v->key != 0) {
		/* read again (vCPU hot-plug): the same VM, its vCPUs replaced */
		if (live_ext_update(q->live, v->key, &xd, &e) < 0) {
			refuse(q, v, now, "%s", e.msg);
			goto out;
		}
		q->st.rereads++;
		answered(q, v);
		goto out;
	}
	if (live_ext_add(q->live, &xd, &v->key, &e) < 0) {
		refuse(q, v, now, "%s", e.msg);
		goto out;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	log_dom(LOG_INFO, name, -1, 0, "from QMP socket %s: guest topology %d socket%s, %d die%s, %d core%s, %d thread%s",
	    v->path, g.sockets, g.sockets == 1 ? "" : "s", g.dies, g.dies == 1 ? "" : "s", g.cores,
	    g.cores == 1 ? "" : "s", g.threads, g.threads == 1 ? "" : "s");
	q->st.vms_added++;
	q->added++;
	v->shut_down = false;
	/* a pidfd: QEMU's exit is heard at once */
	if (v->pidfd < 0) {
		v->pidfd = (int)syscall(SYS_pidfd_open, v->pid, 0);
		if (v->pidfd >= 0) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
			epoll_ctl(q->epfd, EPOLL_CTL_ADD, v->pidfd, &ev);
		}
	}
	policy_check(q, v, true);
	answered(q, v);
out:
	free(tids);
	qmp_cpus_free(cpus);
	qmp_hotcpus_free(hot);
}

/* ---- one socket's connection --------------------------------------------- */

static void
send_queries(struct qmpback *q, struct qvm *v, uint64_t now)
{
	struct llcd_err e;

	clear_replies(v);
	for (int i = 0; i < NQUERIES; i++) {
		if (qmp_send(v->q, queries[i], NULL, &v->ids[i], &e) < 0) {
			refuse(q, v, now, "%s: %s", queries[i], e.msg);
			return;
		}
	}
	v->st = QVM_QUERY;
	v->requery = false;
	v->deadline_ns = now + (uint64_t)q->timeout_ms * 1000000ull;
}

/* Connect to the socket the directory holds under v's name: the name is
 * opened O_PATH|O_NOFOLLOW in the directory checked at the scan and the
 * connection made to that inode through /proc/self/fd (safefile_connect),
 * so the peer whose credentials are checked is the socket found, never
 * one a symbolic link swapped in meanwhile points to. */
static void
start_connect(struct qmpback *q, struct qvm *v, uint64_t now)
{
	struct llcd_err e;
	struct stat st;
	const char *name = strrchr(v->path, '/') + 1;
	int fd;

	v->tried_ns = now;
	if (q->dfd < 0) {               /* the directory is gone or refused */
		v->st = QVM_WAIT;
		v->retry_ns = now + RESCAN_NS;
		return;
	}
	q->st.connects++;
	if ((fd = safefile_connect(q->dfd, name, &st, &e)) < 0) {
		if (errno == ENOENT || errno == ENOTSOCK) {
			v->st = QVM_WAIT;       /* not a socket (now): the scan decides */
			v->retry_ns = now + RESCAN_NS;
			return;
		}
		refuse(q, v, now, "%s", e.msg);
		return;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		refuse(q, v, now, "the socket file is owned by uid %u, not root or llcd's user", (unsigned)st.st_uid);
		return;
	}
	if ((v->q = qmp_new()) == NULL || qmp_attach(v->q, fd, &e) < 0) {
		close(fd);
		qmp_free(v->q);
		v->q = NULL;
		v->retry_ns = now + 1000000000ull;
		return;
	}
	v->st = QVM_HANDSHAKE;
	v->deadline_ns = now + (uint64_t)q->timeout_ms * 1000000ull;
	ep_set(q, v);
}

static void
handle_event(struct qmpback *q, struct qvm *v, struct json_object *ev, uint64_t now)
{
	const char *name = qmp_event_name(ev);

	q->st.events++;
	if (strcmp(name, "SHUTDOWN") == 0) {
		log_dom(LOG_INFO, v->name, -1, 0, "QMP SHUTDOWN: the guest shut down");
		drop_vm_domain(q, v, "the guest shut down (QMP SHUTDOWN)");
		v->shut_down = true;
	} else if (strcmp(name, "STOP") == 0) {
		log_dom(LOG_INFO, v->name, -1, 0, "QMP STOP: paused (pins stay)");
	} else if ((strcmp(name, "DEVICE_DELETED") == 0 || strcmp(name, "DEVICE_ADDED") == 0) && v->key != 0) {
		/* any device: whether it was a CPU is QMP's to say (rate-limited) */
		v->requery = true;
	} else if (strcmp(name, "RESUME") == 0) {
		log_dom(LOG_INFO, v->name, -1, 0, "QMP RESUME: running");
		if (v->key == 0 && v->st == QVM_HELD)
			send_queries(q, v, now);        /* after a SHUTDOWN and reset */
	}
}

static void
step_conn(struct qmpback *q, struct qvm *v, uint64_t now)
{
	struct llcd_err e;
	struct json_object *ev;

	if (v->q == NULL)
		return;
	if (qmp_step(v->q, &e) < 0) {
		if (v->key != 0 && v->st == QVM_HELD) {
			/* the monitor closed under a VM: its exit is the pidfd's to say */
			log_dom(LOG_INFO, v->name, -1, 0, "QMP connection closed: %s", e.msg);
			close_conn(q, v);
			v->st = QVM_CLOSED;
			return;
		}
		refuse(q, v, now, "%s", e.msg);
		return;
	}
	if (v->st == QVM_HANDSHAKE && qmp_state(v->q) == QMP_STATE_READY) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		if (getsockopt(qmp_fd(v->q), SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.pid <= 0) {
			refuse(q, v, now, "no peer credentials (SO_PEERCRED): %s", strerror(errno));
			return;
		}
		if (cr.uid != 0 && cr.uid != geteuid()) {
			refuse(q, v, now, "its process (pid %d) runs as uid %u, not root or llcd's user", (int)cr.pid,
			    (unsigned)cr.uid);
			return;
		}
		if (v->key != 0 && v->pid != cr.pid)
			drop_vm_domain(q, v, "its QEMU process changed");
		v->pid = cr.pid;
		v->uid = (int)cr.uid;
		send_queries(q, v, now);
		if (v->q == NULL)
			return;
	}
	if (v->st == QVM_QUERY) {
		bool all = true;
		for (int i = 0; i < NQUERIES; i++) {
			if (v->done[i])
				continue;
			struct json_object *ret = NULL;
			enum qmp_rc rc = qmp_reply_take(v->q, v->ids[i], &ret, &e);
			if (rc == QMP_PENDING) {
				all = false;
				continue;
			}
			if (rc == QMP_OK) {
				v->ret[i] = ret;
			} else {
				json_object_put(ret);
				if (rc == QMP_ERR_CONN) {
					refuse(q, v, now, "%s", e.msg);
					return;
				}
				if (i == 2) {
					refuse(q, v, now, "query-cpus-fast: %s", e.msg);
					return;
				}
			}
			v->done[i] = true;
		}
		if (all)
			vm_from_replies(q, v, now);
	}
	while (v->q != NULL && (ev = qmp_event_next(v->q)) != NULL) {
		handle_event(q, v, ev, now);
		json_object_put(ev);
	}
	if (v->q != NULL)
		ep_set(q, v);
}

/* Hot-plug: the threads QEMU names as vCPUs changed (the live back-end's
 * discovery, live_ext_vcpus_changed), or with hold a DEVICE_ADDED /
 * DEVICE_DELETED: the four queries again, on the held connection or a new
 * one closed after them, at most once per requery_ms per VM (and after the
 * back-off of a failed one: refuse()). */
static void
maybe_requery(struct qmpback *q, struct qvm *v, uint64_t now)
{
	if (v->key == 0 || (!v->requery && !live_ext_vcpus_changed(q->live, v->key)))
		return;
	if (v->st == QVM_WAIT)
		return;                 /* a re-read is retried after its back-off */
	if ((v->st != QVM_CLOSED && v->st != QVM_HELD) || now < v->requery_ns) {
		q->requery_due = true;  /* looked at again in the next handle */
		return;
	}
	log_dom(LOG_INFO, v->name, -1, 0, "vCPUs %s; reading QMP socket %s again",
	    v->requery ? "added or removed (a QMP device event)" : "changed (the vCPU threads)", v->path);
	v->requery_ns = now + (uint64_t)q->requery_ms * 1000000ull;
	q->st.requeries++;
	if (v->st == QVM_HELD) {
		send_queries(q, v, now);
		if (v->q != NULL)
			ep_set(q, v);
	} else {
		v->st = QVM_WAIT;
		start_connect(q, v, now);
		if (v->st == QVM_HANDSHAKE)
			step_conn(q, v, now);
	}
}

/* ---- the socket list ------------------------------------------------------- */

static struct qvm *
vm_find(const struct qmpback *q, const char *path)
{
	for (int i = 0; i < q->n; i++)
		if (strcmp(q->vms[i]->path, path) == 0)
			return q->vms[i];
	return NULL;
}

static void
vm_free(struct qmpback *q, struct qvm *v, const char *why)
{
	drop_vm_domain(q, v, why);
	close_conn(q, v);
	free(v);
}

/* (Re)open a directory of the back-end, checked (safefile.h); a refusal
 * is said once per reason, in why. -1: absent or refused. */
static int
reopen_dir(int *fdp, const char *path, const char *what, char *why, size_t len)
{
	struct llcd_err e;

	if (*fdp >= 0)
		close(*fdp);
	*fdp = safefile_opendir(path, 0, &e);
	if (*fdp >= 0) {
		if (why[0])
			log_info("%s %s: usable again", what, path);
		why[0] = '\0';
	} else if (errno != ENOENT && strcmp(why, e.msg) != 0) {
		log_warnx("%s: %s; %s", what, e.msg, what[0] == 'Q' ? "no socket in it is connected" :
		    "its files are not read (the VMs fall back to the policy-rules)");
		snprintf(why, len, "%s", e.msg);
	}
	return *fdp;
}

static void
scan(struct qmpback *q, uint64_t now)
{
	struct dirent *de;
	DIR *dir = NULL;

	q->st.scans++;
	q->next_scan_ns = now + RESCAN_NS;
	q->scan_now = false;
	if (q->wd_sock < 0 && (q->wd_sock = inotify_add_watch(q->infd, q->dir, IN_CREATE | IN_DELETE |
	    IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)) >= 0)
		log_info("watching %s for QMP sockets (%s)", q->dir, q->glob);
	if (q->policy_dir[0] && q->wd_pol < 0)
		q->wd_pol = inotify_add_watch(q->infd, q->policy_dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
		    IN_DELETE | IN_MOVED_FROM | IN_ATTRIB);
	if (q->policy_dir[0])
		reopen_dir(&q->pol_dfd, q->policy_dir, "policy-dir", q->pol_why, sizeof(q->pol_why));
	if (reopen_dir(&q->dfd, q->dir, "QMP socket directory", q->dir_why, sizeof(q->dir_why)) < 0 &&
	    q->dir_why[0])
		return;         /* refused: no socket is connected (start_connect); the VMs known stay */
	for (int i = 0; i < q->n; i++)
		q->vms[i]->seen = false;
	/* the names of the directory that match the glob's last component and
	 * are sockets (not followed: a symbolic link or a file is never
	 * connected) */
	int lfd = q->dfd >= 0 ? fcntl(q->dfd, F_DUPFD_CLOEXEC, 0) : -1;
	if (lfd >= 0 && (dir = fdopendir(lfd)) == NULL)
		close(lfd);
	while (dir != NULL && (de = readdir(dir)) != NULL) {
		char p[PATH_MAX];
		struct stat st;
		struct qvm *v;
		if (fnmatch(q->pattern, de->d_name, FNM_PERIOD) != 0 ||
		    fstatat(q->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
		    snprintf(p, sizeof(p), "%s%s%s", q->dir, strcmp(q->dir, "/") ? "/" : "", de->d_name) >=
		    (int)sizeof(p))
			continue;
		if ((v = vm_find(q, p)) != NULL) {
			if (v->gone) {  /* back: its back-off and reason kept */
				v->gone = false;
				v->st = QVM_WAIT;
				log_debug("QMP socket %s back", p);
			}
			v->seen = true;
			continue;
		}
		if (q->n == q->cap) {
			int nc = q->cap ? q->cap * 2 : 16;
			struct qvm **nv = realloc(q->vms, sizeof(*nv) * (size_t)nc);
			if (nv == NULL)
				break;
			q->vms = nv;
			q->cap = nc;
		}
		if ((v = calloc(1, sizeof(*v))) == NULL)
			break;
		snprintf(v->path, sizeof(v->path), "%s", p);
		snprintf(v->id, sizeof(v->id), "%s", de->d_name);
		size_t bl = strlen(v->id);
		if (bl > 4 && strcmp(v->id + bl - 4, ".qmp") == 0)
			v->id[bl - 4] = '\0';
		v->qfd = v->pidfd = -1;
		v->backoff_ms = BACKOFF_MIN_MS;
		v->retry_ns = now;
		v->st = QVM_WAIT;
		v->seen = true;
		q->vms[q->n++] = v;
		log_debug("QMP socket %s found", p);
	}
	if (dir != NULL)
		closedir(dir);
	int ngone = 0;
	for (int i = q->n - 1; i >= 0; i--)
		ngone += q->vms[i]->gone;
	for (int i = 0; i < q->n; i++) {
		struct qvm *v = q->vms[i];
		if (v->seen)
			continue;
		if (!v->gone) {
			log_debug("QMP socket %s gone", v->path);
			drop_vm_domain(q, v, "its QMP socket is gone");
			close_conn(q, v);
			if (v->why[0] && ngone < GONE_MAX) {
				/* refused before: keep what it taught */
				v->gone = true;
				v->gone_ns = now;
				v->st = QVM_CLOSED;
				ngone++;
				continue;
			}
		} else if (now - v->gone_ns < GONE_KEEP_NS) {
			continue;
		}
		vm_free(q, v, "its QMP socket is gone");
		memmove(&q->vms[i], &q->vms[i + 1], sizeof(q->vms[0]) * (size_t)(q->n - i - 1));
		q->n--;
		i--;
	}
}

static void
drain_inotify(struct qmpback *q, uint64_t now)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(q->infd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ie = (struct inotify_event *)p;
			if (ie->wd == q->wd_sock && (ie->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)))
				q->wd_sock = -1;        /* watched again at the rescan */
			else if (ie->wd == q->wd_pol && (ie->mask & IN_IGNORED))
				q->wd_pol = -1;
			if (ie->wd == q->wd_sock && ie->len && (ie->mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB))) {
				/* a socket (re)made: connect now, whatever its back-off */
				char path[PATH_MAX];
				struct qvm *v = NULL;
				if (snprintf(path, sizeof(path), "%s/%s", q->dir, ie->name) < (int)sizeof(path))
					v = vm_find(q, path);
				/* connect soon, whatever its back-off, but at most once
				 * a second: a socket flipped away and back in a loop
				 * makes no connect loop; the back-off itself is reset
				 * only by a socket that answered (or never refused) */
				if (v != NULL && !v->gone && (v->st == QVM_WAIT || v->st == QVM_CLOSED) && v->key == 0) {
					uint64_t soon = v->tried_ns + (uint64_t)BACKOFF_MIN_MS * 1000000ull;
					if (v->why[0] == '\0')
						v->backoff_ms = BACKOFF_MIN_MS;
					v->retry_ns = soon > now ? soon : now;
					v->st = QVM_WAIT;
				}
			}
			q->scan_now = true;
			p += sizeof(*ie) + ie->len;
		}
	}
}

int
qmpback_handle(struct qmpback *q, uint64_t now)
{
	/* the epoll fd is level-triggered and only tells the daemon to call
	 * here: every connection and pidfd is looked at below, which is what
	 * clears its readiness */
	drain_inotify(q, now);
	if (q->scan_now || now >= q->next_scan_ns)
		scan(q, now);
	/* hot-plug: the VMs are looked up in the live back-end only when one
	 * changed (its table is a list: not once per VM per period) */
	bool look = q->requery_due || live_ext_change_gen(q->live) != q->change_gen;
	q->change_gen = live_ext_change_gen(q->live);
	q->requery_due = false;
	for (int i = 0; i < q->n; i++) {
		struct qvm *v = q->vms[i];
		if (v->gone)
			continue;
		/* QEMU exited (pidfd readable) */
		if (v->pidfd >= 0) {
			struct pollfd p = { .fd = v->pidfd, .events = POLLIN };
			if (poll(&p, 1, 0) == 1) {
				log_dom(LOG_INFO, v->name, -1, v->pid, "QEMU exited");
				drop_vm_domain(q, v, "its QEMU process exited");
				close_conn(q, v);
				v->st = QVM_WAIT;       /* a new QEMU may bind the socket again */
				v->retry_ns = now + (uint64_t)BACKOFF_MIN_MS * 1000000ull;
				v->why[0] = '\0';
			}
		}
		switch (v->st) {
		case QVM_WAIT:
			if (now >= v->retry_ns)
				start_connect(q, v, now);
			if (v->st != QVM_HANDSHAKE)
				break;
			/* the connect may be done already */
			__attribute__((fallthrough));
		case QVM_HANDSHAKE:
		case QVM_QUERY:
		case QVM_HELD:
			step_conn(q, v, now);
			if ((v->st == QVM_HANDSHAKE || v->st == QVM_QUERY) && now >= v->deadline_ns)
				refuse(q, v, now, "no %s within %d ms", v->st == QVM_HANDSHAKE ?
				    "QMP greeting and capabilities" : "answer to the queries", q->timeout_ms);
			break;
		case QVM_CLOSED:
			break;
		}
		if (look || v->requery)
			maybe_requery(q, v, now);
		if (v->key != 0)
			policy_check(q, v, false);
	}
	/* the first look is over once every socket was tried (or 3 timeouts
	 * later): the state file forgets the domains not found */
	if (!q->listed) {
		bool busy = false;
		for (int i = 0; i < q->n; i++)
			busy |= (q->vms[i]->st == QVM_HANDSHAKE || q->vms[i]->st == QVM_QUERY) ||
			    (q->vms[i]->st == QVM_WAIT && q->vms[i]->retry_ns <= now && q->vms[i]->why[0] == '\0');
		if (!busy || now > q->started_ns + 3ull * (uint64_t)q->timeout_ms * 1000000ull) {
			live_ext_listed(q->live);
			q->listed = true;
		}
	}
	q->st.sockets = 0;
	for (int i = 0; i < q->n; i++)
		q->st.sockets += !q->vms[i]->gone;
	q->st.vms = 0;
	for (int i = 0; i < q->n; i++)
		q->st.vms += q->vms[i]->key != 0;
	int n = q->added;
	q->added = 0;
	return n;
}

/* ---- life cycle ------------------------------------------------------------ */

static const struct live_source qmp_source;

struct qmpback *
qmpback_new(struct live *l, const struct qmpback_config *cfg, struct llcd_err *err)
{
	struct qmpback *q;
	const char *g = cfg->socket_glob && cfg->socket_glob[0] ? cfg->socket_glob : QMPBACK_DEFAULT_GLOB;
	char *slash;

	if (g[0] != '/')
		return llcd_err_set(err, "qmp-socket-glob '%s': want an absolute path", g), NULL;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return llcd_err_set(err, "out of memory"), NULL;
	q->live = l;
	q->epfd = q->infd = q->wd_sock = q->wd_pol = q->dfd = q->pol_dfd = -1;
	if (snprintf(q->glob, sizeof(q->glob), "%s", g) >= (int)sizeof(q->glob) ||
	    snprintf(q->policy_dir, sizeof(q->policy_dir), "%s", cfg->policy_dir ? cfg->policy_dir : "") >=
	    (int)sizeof(q->policy_dir) ||
	    snprintf(q->channel, sizeof(q->channel), "%s", cfg->channel_path ? cfg->channel_path : "") >=
	    (int)sizeof(q->channel)) {
		llcd_err_set(err, "qmp back-end: a path is too long");
		goto fail;
	}
	snprintf(q->dir, sizeof(q->dir), "%s", q->glob);
	slash = strrchr(q->dir, '/');
	if (slash == q->dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (strpbrk(q->dir, "*?[") != NULL) {
		llcd_err_set(err, "qmp-socket-glob '%s': wildcards only in the file name (inotify watches one directory)", g);
		goto fail;
	}
	q->pattern = strrchr(q->glob, '/') + 1;
	/* root connects to what is there and reads its policy: directories
	 * others may write are refused now (and at every scan after) */
	{
		struct llcd_err e;
		int fd = safefile_opendir(q->dir, 0, &e);
		if (fd < 0 && errno != ENOENT) {
			llcd_err_set(err, "qmp-socket-glob: %s", e.msg);
			goto fail;
		}
		if (fd >= 0)
			close(fd);
		fd = q->policy_dir[0] ? safefile_opendir(q->policy_dir, 0, &e) : -1;
		if (fd < 0 && q->policy_dir[0] && errno != ENOENT) {
			llcd_err_set(err, "policy-dir: %s", e.msg);
			goto fail;
		}
		if (fd >= 0)
			close(fd);
	}
	q->hold = cfg->hold;
	q->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : QMPBACK_TIMEOUT_MS;
	q->requery_ms = cfg->requery_ms > 0 ? cfg->requery_ms : REQUERY_MS;
	q->proc_root = cfg->proc_root;
	if ((q->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (q->infd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		llcd_err_set(err, "qmp back-end: %s", strerror(errno));
		goto fail;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->infd, &ev) < 0) {
		llcd_err_set(err, "qmp back-end: epoll: %s", strerror(errno));
		goto fail;
	}
	q->started_ns = llcd_mono_ns();
	q->scan_now = true;
	struct live_source src = qmp_source;
	src.ctx = q;
	if (live_set_source(l, &src, err) < 0)
		goto fail;
	q->registered = true;
	log_info("QMP back-end: sockets %s, policy files %s, guest channels %s, monitor %s", q->glob,
	    q->policy_dir[0] ? q->policy_dir : "(none)", q->channel[0] ? q->channel : "(none)",
	    q->hold ? "held (events)" : "closed after the queries");
	return q;
fail:
	qmpback_free(q);
	return NULL;
}

void
qmpback_free(struct qmpback *q)
{
	if (q == NULL)
		return;
	if (q->registered)
		live_set_source(q->live, NULL, NULL);
	for (int i = 0; i < q->n; i++) {
		/* fail-static: the domains keep their pins; only llcd's view goes */
		close_conn(q, q->vms[i]);
		if (q->vms[i]->pidfd >= 0)
			close(q->vms[i]->pidfd);
		free(q->vms[i]);
	}
	free(q->vms);
	if (q->dfd >= 0)
		close(q->dfd);
	if (q->pol_dfd >= 0)
		close(q->pol_dfd);
	if (q->infd >= 0)
		close(q->infd);
	if (q->epfd >= 0)
		close(q->epfd);
	free(q);
}

int
qmpback_event_fd(const struct qmpback *q)
{
	return q->epfd;
}

void
qmpback_stats(const struct qmpback *q, struct qmpback_stats *st)
{
	*st = q->st;
}

/* ---- the discovery source of the live back-end (live.h) ---------------- */

static int
src_event_fd(void *ctx)
{
	return qmpback_event_fd(ctx);
}

static int
src_handle(void *ctx, uint64_t now_ns)
{
	return qmpback_handle(ctx, now_ns);
}

/* Where its vCPU threads and policy came from; no QMP cross-check through
 * libvirt (there is none: QMP itself named the threads). */
static void
src_describe(void *ctx, uint64_t key, struct agent_dominfo *out)
{
	struct qmpback *q = ctx;

	for (int i = 0; i < q->n; i++)
		if (q->vms[i]->key == key)
			agent_facts_str(&out->facts, NULL, "qmp", "vCPU threads and guest topology from QMP (%.200s)%s%.200s",
			    q->vms[i]->path, q->vms[i]->pol_have ? ", policy file " : "",
			    q->vms[i]->pol_have ? q->vms[i]->pol_path : "");
	out->have_qmp = false;
	for (int v = 0; v < out->nvcpu_info; v++)
		out->vcpus[v].qmp[0] = '\0';
}

static void
src_describe_host(void *ctx, struct agent_hostinfo *out)
{
	struct qmpback *q = ctx;
	struct agent_facts *f = &out->facts;

	agent_facts_str(f, "qmp", "socket_glob", "%s", q->glob);
	agent_facts_str(f, "qmp", "policy_dir", "%s", q->policy_dir);
	agent_facts_int(f, "qmp", "sockets", q->st.sockets);
	agent_facts_int(f, "qmp", "vms", q->st.vms);
	agent_facts_int(f, "qmp", "refusals", (int64_t)q->st.refusals);
	agent_facts_int(f, "qmp", "rereads", (int64_t)q->st.rereads);
	agent_facts_bool(f, "qmp", "hold", q->hold);
}

/* The VM's policy file as it is now (NULL: none). */
static int
src_get_annotation(void *ctx, uint64_t key, char **xml, struct llcd_err *err)
{
	struct qmpback *q = ctx;

	*xml = NULL;
	for (int i = 0; i < q->n; i++) {
		struct qvm *v = q->vms[i];
		if (v->key != key || !v->pol_have)
			continue;
		/* as policy_check() read it: no symbolic link followed */
		int fd = q->pol_dfd >= 0 ? safefile_open(q->pol_dfd, strrchr(v->pol_path, '/') + 1, O_RDONLY, err) : -1;
		if (fd < 0)
			return q->pol_dfd >= 0 ? llcd_err_prefix(err, "%s", q->policy_dir) :
			    llcd_err_set(err, "%s: the policy directory is refused or gone", v->pol_path);
		char *buf = calloc(1, ANNOT_XML_MAX + 1);
		if (buf != NULL)
			(void)!read(fd, buf, ANNOT_XML_MAX);
		close(fd);
		*xml = buf;
		return buf ? 0 : llcd_err_set(err, "out of memory");
	}
	return 0;
}

static const struct live_source qmp_source = {
	.name = "qmp",
	.event_fd = src_event_fd,
	.handle = src_handle,
	.describe = src_describe,
	.describe_host = src_describe_host,
	.get_annotation = src_get_annotation,
	.annotation_refused = "the qmp back-end reads the llc-policy from policy files "
	    "(policy-dir in llcd.conf: VMID.xml or NAME.xml); edit the file",
	.channel_refused = "the qmp back-end does not edit VM configurations: give the VM the guest helper's "
	    "channel in its own configuration (guest-channel-path in llcd.conf names the socket llcd connects to)",
};
