// SPDX-License-Identifier: GPL-2.0-or-later
/* qmpback.c - the QMP back-end (qmpback.h): QEMU processes found by their
 * QMP sockets (the socket list: glob, inotify, rescan), handed to the live
 * back-end's code as ext domains through one socket's connection
 * (qmpback_conn.c); its life cycle and the discovery source it is to the
 * live back-end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "annotation_xml.h"
#include "clock.h"
#include "log.h"
#include "qmpback_int.h"
#include "safefile.h"

/* ---- small helpers -------------------------------------------------------- */

/* A name fit for a file name: letters, digits, . _ -, no leading dot. */
bool
qvm_plain_name(const char *s)
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
			ins = *p == 'n' ? (qvm_plain_name(name) ? name : vmid) : *p == 'i' ? vmid : *p == '%' ? "%" : NULL;
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
	qvm_drop_domain(q, v, why);
	qvm_close(q, v);
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
			qvm_drop_domain(q, v, "its QMP socket is gone");
			qvm_close(q, v);
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
				qvm_drop_domain(q, v, "its QEMU process exited");
				qvm_close(q, v);
				v->st = QVM_WAIT;       /* a new QEMU may bind the socket again */
				v->retry_ns = now + (uint64_t)BACKOFF_MIN_MS * 1000000ull;
				v->why[0] = '\0';
			}
		}
		switch (v->st) {
		case QVM_WAIT:
			if (now >= v->retry_ns)
				qvm_start_connect(q, v, now);
			if (v->st != QVM_HANDSHAKE)
				break;
			/* the connect may be done already */
			__attribute__((fallthrough));
		case QVM_HANDSHAKE:
		case QVM_QUERY:
		case QVM_HELD:
			qvm_step(q, v, now);
			if ((v->st == QVM_HANDSHAKE || v->st == QVM_QUERY) && now >= v->deadline_ns)
				qvm_refuse(q, v, now, "no %s within %d ms", v->st == QVM_HANDSHAKE ?
				    "QMP greeting and capabilities" : "answer to the queries", q->timeout_ms);
			break;
		case QVM_CLOSED:
			break;
		}
		if (look || v->requery)
			qvm_requery(q, v, now);
		if (v->key != 0)
			qvm_policy_check(q, v, false);
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
		qvm_close(q, q->vms[i]);
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
	for (int v = 0; v < out->nvcpu_info; v++)
		agent_facts_free(&out->vcpus[v].facts);
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
		/* as qvm_policy_check() read it: no symbolic link followed */
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
