// SPDX-License-Identifier: GPL-2.0-or-later
/* conns.c - the live back-end's libvirt connections: the one of `uri`, and
 * one per libvirt daemon that socket_glob finds (a KubeVirt node runs a
 * daemon in each virt-launcher pod, reachable only through the pod's mount
 * namespace: /proc/PID/root/run/libvirt/...). Every connection keeps the
 * single connection's rules (virt.h): events through its own queue, a
 * reconnect with back-off after a loss, a re-list after a reconnect or an
 * overflow, the pins left as they are meanwhile (fail-static). All their
 * domains are one host to the engine: one occupancy, one move budget, one
 * state file.
 *
 * Discovery. The glob is expanded every rescan_ms (5 s) and at start; a
 * match must be a socket (stat, through the magic /proc links); it is
 * known by its directory's device and inode, so the many processes of one
 * pod (virt-launcher, its daemon, QEMU) that show the same socket give one
 * connection, and a daemon restarted in the same pod is the same
 * connection, reconnected. A connection whose socket no scan has found for
 * 30 s while it is down is dropped with its domains (the pod is gone).
 *
 * Event fds: one epoll set over every connection's event fd, so the daemon
 * polls one fd (live_event_fd).
 */
#include "live_int.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define RESCAN_NS 5000000000ull
#define MISSING_DROP_NS 30000000000ull

/* A virt for c (its uri and sock), its event fd in the epoll set. */
static struct virt *
conn_virt(struct live *l, struct lconn *c, struct llcd_err *err)
{
	char pid_dir[PATH_MAX], pid_root[PATH_MAX], *slash;
	struct virt *v;
	struct virt_config vc = {
		.uri = c->uri, .pid_dir = l->cfg.pid_dir, .proc_root = l->cfg.proc_root,
		.backoff_min_ms = l->cfg.backoff_min_ms, .backoff_max_ms = l->cfg.backoff_max_ms,
	};

	if (c->sock[0]) {
		/* the daemon's pid files beside its socket (qemu:///system:
		 * /run/libvirt/qemu); its QEMU found under the same root
		 * when they name another PID namespace's pid */
		snprintf(pid_dir, sizeof(pid_dir), "%s", c->sock);
		if ((slash = strrchr(pid_dir, '/')) != NULL)
			snprintf(slash, sizeof(pid_dir) - (size_t)(slash - pid_dir), "/qemu");
		vc.pid_dir = pid_dir;
		snprintf(pid_root, sizeof(pid_root), "%s", c->sock);
		if (strncmp(pid_root, "/proc/", 6) == 0 && (slash = strstr(pid_root + 6, "/root/")) != NULL) {
			slash[5] = '\0';
			vc.pid_root = pid_root;
		}
	}
	if ((v = virt_new(&vc, err)) == NULL)
		return NULL;
	if (l->epfd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, virt_event_fd(v), &ev) < 0) {
			llcd_err_set(err, "epoll: %s", strerror(errno));
			virt_free(v);
			return NULL;
		}
	}
	return v;
}

static void
conn_virt_free(struct live *l, struct virt *v)
{
	if (l->epfd >= 0)
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, virt_event_fd(v), NULL);
	virt_free(v);
}

static struct lconn *
conn_new(struct live *l, const char *uri, const char *sock, const struct stat *dir, struct llcd_err *err)
{
	struct lconn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(c->uri, sizeof(c->uri), "%s", uri ? uri : VIRT_DEFAULT_URI);
	if (sock != NULL) {
		snprintf(c->sock, sizeof(c->sock), "%s", sock);
		c->dev = (unsigned long long)dir->st_dev;
		c->ino = (unsigned long long)dir->st_ino;
	}
	if (l->nconns == l->conns_cap) {
		int ncap = l->conns_cap ? l->conns_cap * 2 : 8;
		struct lconn **n = realloc(l->conns, sizeof(*n) * (size_t)ncap);
		if (n == NULL) {
			llcd_err_set(err, "out of memory");
			free(c);
			return NULL;
		}
		l->conns = n;
		l->conns_cap = ncap;
	}
	if ((c->virt = conn_virt(l, c, err)) == NULL) {
		free(c);
		return NULL;
	}
	c->need_relist = true;
	l->conns[l->nconns++] = c;
	return c;
}

/* Drop connection c and the domains it gave. */
static void
conn_free(struct live *l, struct lconn *c, const char *why)
{
	for (int i = 0; i < l->ndoms; i++)
		if (l->doms[i]->conn == c) {
			ldom_remove(l, l->doms[i], why);
			i--;
		}
	for (int i = 0; i < l->nconns; i++)
		if (l->conns[i] == c) {
			memmove(&l->conns[i], &l->conns[i + 1], sizeof(*l->conns) * (size_t)(l->nconns - i - 1));
			l->nconns--;
			break;
		}
	if (c->virt == l->virt)
		l->virt = NULL;
	conn_virt_free(l, c->virt);
	free(c);
}

/* The URI of a socket found by the glob: socket_uri with ?socket=PATH. */
static int
socket_uri(const struct live *l, const char *sock, char *buf, size_t len)
{
	const char *base = l->cfg.socket_uri && l->cfg.socket_uri[0] ? l->cfg.socket_uri : VIRT_DEFAULT_URI;

	return snprintf(buf, len, "%s%csocket=%s", base, strchr(base, '?') ? '&' : '?', sock) < (int)len ? 0 : -1;
}

/* Expand the glob: new sockets get a connection, known ones their path
 * refreshed, missing ones are timed. */
static void
scan(struct live *l, uint64_t now_ns)
{
	glob_t g;
	struct llcd_err e;
	char uri[PATH_MAX + 64];
	bool *found;
	int rc;

	l->scan_due_ns = now_ns + RESCAN_NS;
	l->scans++;
	if ((found = calloc((size_t)l->nconns + 1, sizeof(bool))) == NULL)
		return;
	rc = glob(l->cfg.socket_glob, GLOB_NOSORT, NULL, &g);
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];
		char dir[PATH_MAX], *slash;
		struct stat sst, dst;
		int k;
		if (stat(p, &sst) < 0 || !S_ISSOCK(sst.st_mode))
			continue;
		snprintf(dir, sizeof(dir), "%s", p);
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			continue;
		*slash = '\0';
		if (stat(dir, &dst) < 0)
			continue;
		for (k = 0; k < l->nconns; k++)
			if (l->conns[k]->ino == (unsigned long long)dst.st_ino &&
			    l->conns[k]->dev == (unsigned long long)dst.st_dev)
				break;
		if (k < l->nconns) {
			struct lconn *c = l->conns[k];
			struct stat cst;
			if (!found[k] && strcmp(c->sock, p) != 0 && !virt_connected(c->virt) &&
			    stat(c->sock, &cst) < 0 && socket_uri(l, p, uri, sizeof(uri)) == 0) {
				/* the path it was known by may be gone (that process
				 * exited): reconnect by this one (a virt's URI is
				 * fixed: a new virt) */
				char osock[PATH_MAX], ouri[sizeof(c->uri)];
				struct virt *nv;
				snprintf(osock, sizeof(osock), "%s", c->sock);
				snprintf(ouri, sizeof(ouri), "%s", c->uri);
				snprintf(c->sock, sizeof(c->sock), "%s", p);
				snprintf(c->uri, sizeof(c->uri), "%s", uri);
				if ((nv = conn_virt(l, c, &e)) != NULL) {
					log_warnx("libvirt %s: connection lost, and %s with it; the daemon is now reached at %s; "
					    "pins stay as they are, re-listing domains once it answers", ouri, osock, p);
					conn_virt_free(l, c->virt);
					c->virt = nv;
					c->need_relist = true;
					if (virt_connect(c->virt, now_ns / 1000000u, &e) < 0)
						log_warnx("libvirt: %s; retrying with backoff", e.msg);
				} else {
					snprintf(c->sock, sizeof(c->sock), "%s", osock);
					snprintf(c->uri, sizeof(c->uri), "%s", ouri);
				}
			}
			found[k] = true;
			continue;
		}
		if (socket_uri(l, p, uri, sizeof(uri)) < 0) {
			log_warnx("libvirt socket %s: path too long; ignored", p);
			continue;
		}
		struct lconn *c = conn_new(l, uri, p, &dst, &e);
		if (c == NULL) {
			log_warnx("libvirt socket %s: %s", p, e.msg);
			continue;
		}
		bool *nf = realloc(found, sizeof(bool) * ((size_t)l->nconns + 1));
		if (nf == NULL)
			break;
		found = nf;
		found[l->nconns - 1] = true;
		log_info("libvirt daemon found at %s: connecting to %s", p, c->uri);
		if (virt_connect(c->virt, now_ns / 1000000u, &e) < 0)
			log_warnx("libvirt: %s; retrying with backoff", e.msg);
	}
	if (rc == 0)
		globfree(&g);
	for (int k = 0; k < l->nconns; k++) {
		struct lconn *c = l->conns[k];
		if (!c->sock[0])
			continue;       /* the primary one */
		if (found[k]) {
			c->missing_since_ns = 0;
			continue;
		}
		if (c->missing_since_ns == 0)
			c->missing_since_ns = now_ns ? now_ns : 1;
		if (!virt_connected(c->virt) && now_ns - c->missing_since_ns >= MISSING_DROP_NS) {
			log_info("libvirt %s: its socket is gone and the daemon has not answered for %llu s; dropped",
			    c->uri, (unsigned long long)((now_ns - c->missing_since_ns) / 1000000000ull));
			conn_free(l, c, "its libvirt daemon is gone");
			/* found[] follows conns[]: shift it too */
			memmove(&found[k], &found[k + 1], sizeof(bool) * (size_t)(l->nconns - k));
			k--;
		}
	}
	free(found);
}

int
live_conns_open(struct live *l, struct llcd_err *err)
{
	struct llcd_err e;
	struct lconn *c;

	l->epfd = -1;
	if ((l->cfg.socket_glob && l->cfg.socket_glob[0]) &&
	    (l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return llcd_err_set(err, "epoll: %s", strerror(errno));
	if (l->cfg.uri == NULL || strcmp(l->cfg.uri, LIVE_URI_NONE) != 0) {
		if ((c = conn_new(l, l->cfg.uri, NULL, NULL, err)) == NULL)
			return -1;
		l->virt = c->virt;
		if (virt_connect(c->virt, 0, &e) < 0)
			log_warnx("libvirt: %s; retrying with backoff", e.msg);
	}
	if (l->cfg.socket_glob && l->cfg.socket_glob[0]) {
		log_info("libvirt daemons: every socket at %s (rescanned every %llu s)", l->cfg.socket_glob,
		    RESCAN_NS / 1000000000ull);
		scan(l, 0);
	}
	return 0;
}

void
live_conns_close(struct live *l)
{
	/* the domains are freed already (live_free) */
	for (int i = 0; i < l->nconns; i++) {
		conn_virt_free(l, l->conns[i]->virt);
		free(l->conns[i]);
	}
	l->nconns = 0;
	l->virt = NULL;
	free(l->conns);
	l->conns = NULL;
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

int
live_conns_up(const struct live *l)
{
	int n = 0;

	for (int i = 0; i < l->nconns; i++)
		n += virt_connected(l->conns[i]->virt);
	return n;
}

int
live_conns_event_fd(const struct live *l)
{
	if (l->epfd >= 0)
		return l->epfd;
	return l->virt ? virt_event_fd(l->virt) : -1;
}

uint64_t
live_next_due_ns(const struct live *l)
{
	uint64_t due = 0;

	for (int i = 0; i < l->nconns; i++) {
		const struct lconn *c = l->conns[i];
		uint64_t t = 0;
		if (!virt_connected(c->virt))
			t = virt_retry_at_ms(c->virt) * 1000000ull;
		else if (c->need_relist)
			t = c->relist_due_ns ? c->relist_due_ns : 1;
		if (t && (!due || t < due))
			due = t;
	}
	if (l->cfg.socket_glob && l->cfg.socket_glob[0] && (!due || l->scan_due_ns < due))
		due = l->scan_due_ns ? l->scan_due_ns : 1;
	return due;
}

/* One connection's upkeep and events. */
static void
conn_events(struct live *l, struct lconn *c, uint64_t now_ns)
{
	struct virt_event ev;
	struct llcd_err e;
	struct ldom *d;
	bool was = virt_connected(c->virt);
	char nb[32], who[sizeof(c->uri) + 3];

	/* the daemons of the glob are named; the uri's one, as ever, not */
	snprintf(who, sizeof(who), "%s%s%s", c->sock[0] ? " " : "", c->sock[0] ? c->uri : "", c->sock[0] ? ":" : "");

	if (virt_maintain(c->virt, now_ns / 1000000u, &e) == 1 && !was)
		c->need_relist = true;
	while (virt_next_event(c->virt, &ev) == 1) {
		switch (ev.type) {
		case VIRT_EV_LIFECYCLE:
			log_dom(LOG_DEBUG, ev.name, -1, 0, "lifecycle event %s (detail %d)",
			    virt_lifecycle_name(ev.event, nb, sizeof(nb)), ev.detail);
			if (virt_connected(c->virt))
				ldom_refresh(l, c, ev.uuid);
			/* a run that this event started (not observed yet): time
			 * llcd's reaction to it */
			if (ev.event == VIRT_LIFECYCLE_STARTED && (d = ldom_by_uuid(l, c, ev.uuid)) != NULL &&
			    d->react.period == 0 && d->react.started_ns == 0)
				d->react.started_ns = ev.mono_ns;
			break;
		case VIRT_EV_METADATA:
			/* another namespace's element (Nova's, KubeVirt's) matters
			 * when a policy-rule reads the metadata */
			if (ev.text[0] && strcmp(ev.text, VIRT_POLICY_NS) != 0 && !policyrule_set_need_metadata(l->rules))
				break;
			if ((d = ldom_by_uuid(l, c, ev.uuid)) != NULL) {
				if (!ev.text[0] || !strcmp(ev.text, VIRT_POLICY_NS))
					log_dom(LOG_INFO, d->name, -1, 0, "llc-policy annotation changed");
				else
					log_dom(LOG_DEBUG, d->name, -1, 0, "metadata %s changed: policy-rules matched again",
					    ev.text);
				d->todo |= LDOM_TODO_ANNOT;
				ldom_read_annotation(l, d);
			}
			break;
		case VIRT_EV_TUNABLE:
			if ((d = ldom_by_uuid(l, c, ev.uuid)) != NULL)
				d->todo |= LDOM_TODO_AFFINITY;
			break;
		case VIRT_EV_DISCONNECTED:
			log_warnx("libvirt%s connection lost (%s); pins stay as they are, reconnecting", who,
			    virt_close_reason_name(ev.event, nb, sizeof(nb)));
			break;
		case VIRT_EV_RECONNECTED:
			log_info("libvirt%s reconnected after %u reconnect%s; re-listing domains", who,
			    virt_reconnects(c->virt), virt_reconnects(c->virt) == 1 ? "" : "s");
			c->need_relist = true;
			break;
		case VIRT_EV_OVERFLOW:
			log_warnx("libvirt%s event queue overflowed; re-listing domains", who);
			c->need_relist = true;
			break;
		}
	}
	if (c->need_relist && virt_connected(c->virt) && now_ns >= c->relist_due_ns)
		live_relist(l, c);
}

int
live_conns_handle(struct live *l, uint64_t now_ns, struct llcd_err *err)
{
	struct epoll_event evs[64];
	bool failed = false, all_listed = true;

	if (l->nconns == 0 && !(l->cfg.socket_glob && l->cfg.socket_glob[0]))
		return 0;
	l->now_ns = now_ns;
	if (l->epfd >= 0)
		while (epoll_wait(l->epfd, evs, 64, 0) == 64)
			;       /* level-triggered: only drained; each queue is read below */
	/* the connections' events first (a lost one is said), then the scan
	 * (which may reach a lost daemon by another path) */
	for (int i = 0; i < l->nconns; i++)
		conn_events(l, l->conns[i], now_ns);
	if (l->cfg.socket_glob && l->cfg.socket_glob[0] && now_ns >= l->scan_due_ns)
		scan(l, now_ns);
	for (int i = 0; i < l->nconns; i++) {
		struct lconn *c = l->conns[i];
		failed |= c->need_relist && virt_connected(c->virt) && now_ns >= c->relist_due_ns;
		all_listed &= c->listed_once;
	}
	/* the state file's domains that no daemon runs any more: once every
	 * connection has listed (live_ext_listed does it once) */
	if (all_listed && l->nconns > 0)
		live_ext_listed(l);
	if (failed)
		return llcd_err_set(err, "re-listing libvirt domains failed; retrying");
	/* how many domains started: the daemon places them now, not at the
	 * next period */
	int n = l->new_domains;
	l->new_domains = 0;
	return n;
}
