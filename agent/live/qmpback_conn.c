// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpback_conn.c - one QMP socket's connection (qmpback_int.h): connect
 * and check the peer, the greeting and the four queries, the VM from their
 * answers handed to the live back-end as an ext domain, its events (held
 * connections), the re-read on hot-plug, and the VM's policy file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-c/json.h>

#include "annotation_xml.h"
#include "log.h"
#include "qmpback_int.h"
#include "safefile.h"
#include "virt.h"

static struct log_ratelimit refuse_rl = LOG_RATELIMIT_INIT("QMP socket refusals");

static const char *const queries[NQUERIES] = {
	"query-name", "query-uuid", "query-cpus-fast", "query-hotpluggable-cpus",
};

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

void
qvm_close(struct qmpback *q, struct qvm *v)
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
void
qvm_answered(struct qmpback *q, struct qvm *v)
{
	v->why[0] = '\0';
	v->backoff_ms = BACKOFF_MIN_MS;
	clear_replies(v);
	if (q->hold) {
		v->st = QVM_HELD;
	} else {
		qvm_close(q, v);
		v->st = QVM_CLOSED;
	}
}

void
qvm_drop_domain(struct qmpback *q, struct qvm *v, const char *why)
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
void
qvm_refuse(struct qmpback *q, struct qvm *v, uint64_t now, const char *fmt, ...)
{
	char msg[LLCD_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	qvm_close(q, v);
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
void
qvm_policy_check(struct qmpback *q, struct qvm *v, bool force)
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
	if (qvm_plain_name(v->name) && strcmp(v->name, v->id) != 0 &&
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
		qvm_refuse(q, v, now, "query-cpus-fast failed");
		return;
	}
	if (qmp_cpus_parse(v->ret[2], &cpus, &e) < 0) {
		qvm_refuse(q, v, now, "%s", e.msg);
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
		qvm_refuse(q, v, now, "query-cpus-fast: %d vCPUs (max %d), want 1..%d", nv, maxv, CPUSET_MAX);
		goto out;
	}
	if ((tids = calloc((size_t)maxv, sizeof(int))) == NULL) {
		qvm_refuse(q, v, now, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cpus->n; i++) {
		int idx = cpus->cpu[i].cpu_index, tid = (int)cpus->cpu[i].tid;
		if (idx < 0 || tids[idx] != 0) {
			qvm_refuse(q, v, now, "query-cpus-fast: cpu-index %d twice or negative", idx);
			goto out;
		}
		for (int k = 0; k < maxv; k++)
			if (tids[k] == tid) {
				qvm_refuse(q, v, now, "query-cpus-fast: thread-id %d for two vCPUs", tid);
				goto out;
			}
		/* the peer may name only its own threads */
		if (!is_task(q, v->pid, tid)) {
			qvm_refuse(q, v, now, "vCPU %d: thread-id %d is not a thread of the socket's process (pid %d)", idx,
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
			qvm_refuse(q, v, now, "%s", e.msg);
			goto out;
		}
		q->st.rereads++;
		qvm_answered(q, v);
		goto out;
	}
	if (live_ext_add(q->live, &xd, &v->key, &e) < 0) {
		qvm_refuse(q, v, now, "%s", e.msg);
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
	qvm_policy_check(q, v, true);
	qvm_answered(q, v);
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
			qvm_refuse(q, v, now, "%s: %s", queries[i], e.msg);
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
void
qvm_start_connect(struct qmpback *q, struct qvm *v, uint64_t now)
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
		qvm_refuse(q, v, now, "%s", e.msg);
		return;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		qvm_refuse(q, v, now, "the socket file is owned by uid %u, not root or llcd's user", (unsigned)st.st_uid);
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
		qvm_drop_domain(q, v, "the guest shut down (QMP SHUTDOWN)");
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

void
qvm_step(struct qmpback *q, struct qvm *v, uint64_t now)
{
	struct llcd_err e;
	struct json_object *ev;

	if (v->q == NULL)
		return;
	if (qmp_step(v->q, &e) < 0) {
		if (v->key != 0 && v->st == QVM_HELD) {
			/* the monitor closed under a VM: its exit is the pidfd's to say */
			log_dom(LOG_INFO, v->name, -1, 0, "QMP connection closed: %s", e.msg);
			qvm_close(q, v);
			v->st = QVM_CLOSED;
			return;
		}
		qvm_refuse(q, v, now, "%s", e.msg);
		return;
	}
	if (v->st == QVM_HANDSHAKE && qmp_state(v->q) == QMP_STATE_READY) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		if (getsockopt(qmp_fd(v->q), SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.pid <= 0) {
			qvm_refuse(q, v, now, "no peer credentials (SO_PEERCRED): %s", strerror(errno));
			return;
		}
		if (cr.uid != 0 && cr.uid != geteuid()) {
			qvm_refuse(q, v, now, "its process (pid %d) runs as uid %u, not root or llcd's user", (int)cr.pid,
			    (unsigned)cr.uid);
			return;
		}
		if (v->key != 0 && v->pid != cr.pid)
			qvm_drop_domain(q, v, "its QEMU process changed");
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
					qvm_refuse(q, v, now, "%s", e.msg);
					return;
				}
				if (i == 2) {
					qvm_refuse(q, v, now, "query-cpus-fast: %s", e.msg);
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
 * back-off of a failed one: qvm_refuse()). */
void
qvm_requery(struct qmpback *q, struct qvm *v, uint64_t now)
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
		qvm_start_connect(q, v, now);
		if (v->st == QVM_HANDSHAKE)
			qvm_step(q, v, now);
	}
}
