// SPDX-License-Identifier: GPL-2.0-or-later
/* virt.c - libvirt connection, events, domains, annotations, pinning. */
#include "virt.h"
#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "clock.h"
#include "log.h"

_Static_assert(VIRT_LIFECYCLE_STARTED == VIR_DOMAIN_EVENT_STARTED, "VIRT_LIFECYCLE_STARTED is libvirt's");

#define QUEUE_MAX 4096
#define NCALLBACKS 3

struct virt {
	char uri[512];
	char pid_dir[PATH_MAX];
	char proc_root[PATH_MAX];
	char pid_root[PATH_MAX];        /* "" none (virt_config.pid_root) */
	unsigned backoff_min, backoff_max;
	int ka_interval;
	unsigned ka_count;

	/* agent thread only */
	virConnectPtr conn;
	int cb_ids[NCALLBACKS];
	unsigned backoff;               /* current delay, ms */
	uint64_t retry_at;              /* ms; 0 when connected */
	unsigned reconnects;
	bool ever_connected;
	int host_cpus;                  /* virNodeGetCPUMap, per connection */
	/* the last domain looked up (one reference held), per connection: a
	 * placement pins every vCPU of one domain in a row, and each
	 * virDomainLookupByUUIDString is a round trip to libvirtd; calls on
	 * the handle name the domain by UUID, so it stays right across a
	 * restart of the domain (and says "no domain" once it is undefined) */
	virDomainPtr dom_cache;
	char dom_cache_uuid[VIRT_UUID_LEN];

	/* shared with the event thread */
	atomic_bool lost;
	pthread_mutex_t qlock;
	struct virt_event *q;
	int qhead, qlen;
	bool overflow;
	int efd;
};

/* ---- the process-wide event loop thread --------------------------------- */

static pthread_mutex_t evloop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t evloop_once = PTHREAD_ONCE_INIT;
static int evloop_users;
static pthread_t evloop_thread;
static atomic_bool evloop_quit;
static int evloop_init_rc;

static void
silent_error(void *arg, virErrorPtr e)
{
	/* libvirt prints every error to stderr by default; we report the
	 * errors we care about ourselves, with domain, vCPU and TID. */
}

static void
evloop_init(void)
{
	virSetErrorFunc(NULL, silent_error);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0)
		evloop_init_rc = -1;
}

static void *
evloop_main(void *arg)
{
	while (!atomic_load(&evloop_quit))
		if (virEventRunDefaultImpl() < 0)
			usleep(100000);         /* never spin on a broken loop */
	return NULL;
}

static void
wake_cb(int timer, void *arg)
{
	virEventRemoveTimeout(timer);
}

static int
evloop_get(struct llcd_err *err)
{
	int rc = 0;

	pthread_once(&evloop_once, evloop_init);
	if (evloop_init_rc < 0)
		return llcd_err_set(err, "libvirt: cannot initialise the event loop");
	pthread_mutex_lock(&evloop_lock);
	if (evloop_users == 0) {
		atomic_store(&evloop_quit, false);
		if (pthread_create(&evloop_thread, NULL, evloop_main, NULL) != 0)
			rc = llcd_err_set(err, "libvirt: cannot start the event thread");
	}
	if (rc == 0)
		evloop_users++;
	pthread_mutex_unlock(&evloop_lock);
	return rc;
}

static void
evloop_put(void)
{
	pthread_mutex_lock(&evloop_lock);
	if (--evloop_users == 0) {
		atomic_store(&evloop_quit, true);
		virEventAddTimeout(0, wake_cb, NULL, NULL);     /* interrupts poll() */
		pthread_join(evloop_thread, NULL);
	}
	pthread_mutex_unlock(&evloop_lock);
}

/* ---- the event queue ---------------------------------------------------- */

static void
push(struct virt *v, const struct virt_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&v->qlock);
	if (v->qlen == QUEUE_MAX) {
		v->overflow = true;
	} else {
		v->q[(v->qhead + v->qlen) % QUEUE_MAX] = *ev;
		v->qlen++;
	}
	(void)!write(v->efd, &one, sizeof(one));
	pthread_mutex_unlock(&v->qlock);
}

int
virt_next_event(struct virt *v, struct virt_event *ev)
{
	uint64_t cnt;
	int got = 0;

	pthread_mutex_lock(&v->qlock);
	if (v->qlen > 0) {
		*ev = v->q[v->qhead];
		v->qhead = (v->qhead + 1) % QUEUE_MAX;
		v->qlen--;
		got = 1;
	} else if (v->overflow) {
		memset(ev, 0, sizeof(*ev));
		ev->type = VIRT_EV_OVERFLOW;
		v->overflow = false;
		got = 1;
	}
	if (v->qlen == 0 && !v->overflow)
		(void)!read(v->efd, &cnt, sizeof(cnt));         /* drain */
	pthread_mutex_unlock(&v->qlock);
	return got;
}

int
virt_event_fd(const struct virt *v)
{
	return v->efd;
}

LLCD_NAME_FUNCTION(virt_event_name, enum virt_event_type, VIRT_EV_OVERFLOW,
    [VIRT_EV_LIFECYCLE] = "lifecycle", [VIRT_EV_METADATA] = "metadata-change",
    [VIRT_EV_TUNABLE] = "tunable", [VIRT_EV_DISCONNECTED] = "disconnected",
    [VIRT_EV_RECONNECTED] = "reconnected", [VIRT_EV_OVERFLOW] = "overflow")

static void
ev_domain(struct virt_event *ev, enum virt_event_type type, virDomainPtr dom)
{
	const char *name;

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->mono_ns = llcd_mono_ns();
	if (virDomainGetUUIDString(dom, ev->uuid) < 0)
		ev->uuid[0] = '\0';
	if ((name = virDomainGetName(dom)) != NULL)
		snprintf(ev->name, sizeof(ev->name), "%s", name);
}

/* ---- callbacks (event thread) ------------------------------------------- */

static int
on_lifecycle(virConnectPtr c, virDomainPtr dom, int event, int detail, void *arg)
{
	struct virt_event ev;

	ev_domain(&ev, VIRT_EV_LIFECYCLE, dom);
	ev.event = event;
	ev.detail = detail;
	push(arg, &ev);
	return 0;
}

static void
on_metadata(virConnectPtr c, virDomainPtr dom, int type, const char *nsuri, void *arg)
{
	struct virt_event ev;

	ev_domain(&ev, VIRT_EV_METADATA, dom);
	ev.event = type;
	snprintf(ev.text, sizeof(ev.text), "%s", nsuri != NULL ? nsuri : "");
	push(arg, &ev);
}

static void
on_tunable(virConnectPtr c, virDomainPtr dom, virTypedParameterPtr params,
    int nparams, void *arg)
{
	struct virt_event ev;
	size_t off = 0;
	int i, n;

	ev_domain(&ev, VIRT_EV_TUNABLE, dom);
	for (i = 0; i < nparams && off < sizeof(ev.text) - 1; i++) {
		const char *val = params[i].type == VIR_TYPED_PARAM_STRING ? params[i].value.s : NULL;
		n = snprintf(ev.text + off, sizeof(ev.text) - off, "%s%s%s%s",
		    off ? " " : "", params[i].field, val ? "=" : "", val ? val : "");
		if (n < 0)
			break;
		off += (size_t)n;
	}
	push(arg, &ev);
}

static void
on_close(virConnectPtr c, int reason, void *arg)
{
	struct virt *v = arg;
	struct virt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = VIRT_EV_DISCONNECTED;
	ev.event = reason;
	snprintf(ev.text, sizeof(ev.text), "%s",
	    reason == VIR_CONNECT_CLOSE_REASON_EOF ? "end of file" :
	    reason == VIR_CONNECT_CLOSE_REASON_KEEPALIVE ? "keepalive timeout" :
	    reason == VIR_CONNECT_CLOSE_REASON_CLIENT ? "closed by client" : "error");
	atomic_store(&v->lost, true);
	push(v, &ev);
}

/* ---- connection --------------------------------------------------------- */

struct virt *
virt_new(const struct virt_config *cfg, struct llcd_err *err)
{
	struct virt_config dflt = { 0 };
	struct virt *v;
	int i;

	if (cfg == NULL)
		cfg = &dflt;
	if ((v = calloc(1, sizeof(*v))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	v->efd = -1;
	if (snprintf(v->uri, sizeof(v->uri), "%s", cfg->uri ? cfg->uri : VIRT_DEFAULT_URI) >= (int)sizeof(v->uri) ||
	    snprintf(v->pid_dir, sizeof(v->pid_dir), "%s", cfg->pid_dir ? cfg->pid_dir : VIRT_DEFAULT_PID_DIR) >= (int)sizeof(v->pid_dir) ||
	    snprintf(v->proc_root, sizeof(v->proc_root), "%s", cfg->proc_root ? cfg->proc_root : "/proc") >= (int)sizeof(v->proc_root) ||
	    snprintf(v->pid_root, sizeof(v->pid_root), "%s", cfg->pid_root ? cfg->pid_root : "") >= (int)sizeof(v->pid_root)) {
		llcd_err_set(err, "virt: URI or path too long");
		free(v);
		return NULL;
	}
	v->backoff_min = cfg->backoff_min_ms ? cfg->backoff_min_ms : 500;
	v->backoff_max = cfg->backoff_max_ms ? cfg->backoff_max_ms : 30000;
	if (v->backoff_max < v->backoff_min)
		v->backoff_max = v->backoff_min;
	v->backoff = v->backoff_min;
	v->ka_interval = cfg->keepalive_interval ? cfg->keepalive_interval : 5;
	v->ka_count = cfg->keepalive_count ? cfg->keepalive_count : 3;
	for (i = 0; i < NCALLBACKS; i++)
		v->cb_ids[i] = -1;
	pthread_mutex_init(&v->qlock, NULL);
	if ((v->q = calloc(QUEUE_MAX, sizeof(*v->q))) == NULL ||
	    (v->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		llcd_err_set(err, "virt: %s", v->q ? strerror(errno) : "out of memory");
		goto fail;
	}
	if (evloop_get(err) < 0)
		goto fail;
	return v;
fail:
	if (v->efd >= 0)
		close(v->efd);
	free(v->q);
	pthread_mutex_destroy(&v->qlock);
	free(v);
	return NULL;
}

/* Drop the connection (dead or alive) and everything registered on it. */
static void
drop_conn(struct virt *v)
{
	int i;

	if (v->dom_cache != NULL)
		virDomainFree(v->dom_cache);
	v->dom_cache = NULL;
	if (v->conn == NULL)
		return;
	for (i = 0; i < NCALLBACKS; i++) {
		if (v->cb_ids[i] >= 0)
			virConnectDomainEventDeregisterAny(v->conn, v->cb_ids[i]);
		v->cb_ids[i] = -1;
	}
	virConnectUnregisterCloseCallback(v->conn, on_close);
	virConnectClose(v->conn);
	v->conn = NULL;
	v->host_cpus = 0;
}

void
virt_free(struct virt *v)
{
	if (v == NULL)
		return;
	drop_conn(v);
	evloop_put();
	close(v->efd);
	free(v->q);
	pthread_mutex_destroy(&v->qlock);
	free(v);
}

static const char *
last_error(void)
{
	virErrorPtr e = virGetLastError();

	return e != NULL && e->message != NULL ? e->message : "unknown libvirt error";
}

int
virt_connect(struct virt *v, uint64_t now_ms, struct llcd_err *err)
{
	struct virt_event ev;
	int i;

	drop_conn(v);
	atomic_store(&v->lost, false);
	if ((v->conn = virConnectOpen(v->uri)) == NULL) {
		llcd_err_set(err, "cannot connect to %s: %s", v->uri, last_error());
		goto retry;
	}
	if (v->ka_interval > 0 && virConnectSetKeepAlive(v->conn, v->ka_interval, v->ka_count) < 0)
		log_warnx("libvirt %s: no keepalive: %s", v->uri, last_error());
	if (virConnectRegisterCloseCallback(v->conn, on_close, v, NULL) < 0) {
		llcd_err_set(err, "%s: close callback: %s", v->uri, last_error());
		goto retry_drop;
	}
	v->cb_ids[0] = virConnectDomainEventRegisterAny(v->conn, NULL,
	    VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), v, NULL);
	v->cb_ids[1] = virConnectDomainEventRegisterAny(v->conn, NULL,
	    VIR_DOMAIN_EVENT_ID_METADATA_CHANGE, VIR_DOMAIN_EVENT_CALLBACK(on_metadata), v, NULL);
	v->cb_ids[2] = virConnectDomainEventRegisterAny(v->conn, NULL,
	    VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(on_tunable), v, NULL);
	for (i = 0; i < NCALLBACKS; i++)
		if (v->cb_ids[i] < 0) {
			llcd_err_set(err, "%s: event registration: %s", v->uri, last_error());
			goto retry_drop;
		}
	v->backoff = v->backoff_min;
	v->retry_at = 0;
	if (v->ever_connected) {
		v->reconnects++;
		log_info("libvirt %s: reconnected", v->uri);
		memset(&ev, 0, sizeof(ev));
		ev.type = VIRT_EV_RECONNECTED;
		push(v, &ev);
	} else {
		log_info("libvirt %s: connected", v->uri);
	}
	v->ever_connected = true;
	return 0;
retry_drop:
	drop_conn(v);
retry:
	v->retry_at = now_ms + v->backoff;
	v->backoff = v->backoff * 2 > v->backoff_max ? v->backoff_max : v->backoff * 2;
	return -1;
}

bool
virt_connected(const struct virt *v)
{
	return v->conn != NULL && !atomic_load(&v->lost);
}

uint64_t
virt_retry_at_ms(const struct virt *v)
{
	return virt_connected(v) ? 0 : v->retry_at;
}

unsigned
virt_reconnects(const struct virt *v)
{
	return v->reconnects;
}

int
virt_maintain(struct virt *v, uint64_t now_ms, struct llcd_err *err)
{
	if (v->conn != NULL && atomic_load(&v->lost)) {
		log_warnx("libvirt %s: connection lost; reconnecting (backoff %u ms, cap %u ms)",
		    v->uri, v->backoff, v->backoff_max);
		drop_conn(v);
		v->retry_at = now_ms + v->backoff;
		v->backoff = v->backoff * 2 > v->backoff_max ? v->backoff_max : v->backoff * 2;
	}
	if (v->conn != NULL)
		return 1;
	if (now_ms < v->retry_at) {
		llcd_err_set(err, "libvirt %s: not connected; next attempt in %llu ms",
		    v->uri, (unsigned long long)(v->retry_at - now_ms));
		return 0;
	}
	return virt_connect(v, now_ms, err) == 0 ? 1 : 0;
}

/* ---- error classes ------------------------------------------------------ */

LLCD_NAME_FUNCTION(virt_result_name, enum virt_result, VIRT_PERMANENT,
    [VIRT_OK] = "ok", [VIRT_TRANSIENT] = "transient", [VIRT_GONE] = "gone",
    [VIRT_PERMANENT] = "permanent")

enum virt_result
virt_classify(int code, int int1, bool conn_alive, int dom_active)
{
	if (!conn_alive)
		return VIRT_TRANSIENT;          /* the reconnect will tell */
	switch (code) {
	case VIR_ERR_OK:
		return VIRT_OK;
	case VIR_ERR_NO_DOMAIN:
		return VIRT_GONE;
	case VIR_ERR_OPERATION_INVALID:
		/* "domain is not running": gone for a live pin. With the
		 * domain running it is a real refusal. */
		return dom_active == 1 ? VIRT_PERMANENT : VIRT_GONE;
	case VIR_ERR_NO_CONNECT:
	case VIR_ERR_INVALID_CONN:
	case VIR_ERR_RPC:
	case VIR_ERR_OPERATION_TIMEOUT:         /* e.g. another job holds the domain */
	case VIR_ERR_OPERATION_ABORTED:
	case VIR_ERR_AGENT_UNRESPONSIVE:
	case VIR_ERR_RESOURCE_BUSY:
		return VIRT_TRANSIENT;
	case VIR_ERR_SYSTEM_ERROR:
		/* cgroup writes and the like: int1 is the errno */
		if (int1 == EINTR || int1 == EAGAIN || int1 == EBUSY || int1 == ENOMEM)
			return VIRT_TRANSIENT;
		if (int1 == ESRCH)
			return VIRT_GONE;
		return VIRT_PERMANENT;
	default:
		/* INVALID_ARG (vCPU or CPU out of range), CONFIG_UNSUPPORTED,
		 * OPERATION_UNSUPPORTED, NO_SUPPORT, ACCESS_DENIED,
		 * OPERATION_DENIED, INTERNAL_ERROR, ...: retrying the same call
		 * cannot help, and a retry storm is worse than stopping. */
		return VIRT_PERMANENT;
	}
}

/* Classify the last libvirt error of a call on dom (may be NULL). */
static enum virt_result
classify_last(struct virt *v, virDomainPtr dom, struct llcd_err *err, const char *what)
{
	/* copy first: every libvirt call below resets the thread's last error */
	virErrorPtr e = virSaveLastError();
	int code = e ? e->code : VIR_ERR_INTERNAL_ERROR, int1 = e ? e->int1 : 0;
	bool alive = v->conn != NULL && virConnectIsAlive(v->conn) == 1;
	int active = dom != NULL && alive ? virDomainIsActive(dom) : -1;
	enum virt_result r;

	if (!alive)
		atomic_store(&v->lost, true);
	r = virt_classify(code, int1, alive, active);
	llcd_err_set(err, "%s: %s [%s]", what, e && e->message ? e->message : "unknown libvirt error",
	    virt_result_name(r));
	virFreeError(e);
	return r;
}

static virDomainPtr
lookup(struct virt *v, const char *uuid, enum virt_result *r, struct llcd_err *err)
{
	virDomainPtr dom;

	if (!virt_connected(v)) {
		llcd_err_set(err, "libvirt %s: not connected [transient]", v->uri);
		*r = VIRT_TRANSIENT;
		return NULL;
	}
	if ((dom = virDomainLookupByUUIDString(v->conn, uuid)) == NULL)
		*r = classify_last(v, NULL, err, "lookup");
	return dom;
}

/* lookup() for the pin calls, through dom_cache: the handle's own id and
 * state are those of the lookup (virDomainGetID would be stale), so only
 * calls that libvirtd resolves by UUID use it. */
static virDomainPtr
lookup_pin(struct virt *v, const char *uuid, enum virt_result *r, struct llcd_err *err)
{
	virDomainPtr dom;

	if (virt_connected(v) && v->dom_cache != NULL && strcmp(v->dom_cache_uuid, uuid) == 0 &&
	    virDomainRef(v->dom_cache) == 0)
		return v->dom_cache;
	if ((dom = lookup(v, uuid, r, err)) == NULL)
		return NULL;
	if (strlen(uuid) < sizeof(v->dom_cache_uuid) && virDomainRef(dom) == 0) {
		if (v->dom_cache != NULL)
			virDomainFree(v->dom_cache);
		v->dom_cache = dom;
		snprintf(v->dom_cache_uuid, sizeof(v->dom_cache_uuid), "%s", uuid);
	}
	return dom;
}

/* ---- domains (the XML, the QEMU pid and the keys: virt_domxml.c) -------- */

static enum virt_result
fill_domain(struct virt *v, virDomainPtr dom, struct virt_domain *d, struct llcd_err *err)
{
	const char *name;
	char *xml;
	unsigned int id;
	enum virt_result r;
	struct llcd_err perr;
	int rc;

	memset(d, 0, sizeof(*d));
	if ((name = virDomainGetName(dom)) == NULL || virDomainGetUUIDString(dom, d->uuid) < 0)
		return classify_last(v, dom, err, "domain name/uuid");
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (virDomainGetState(dom, &d->state, &d->reason, 0) < 0)
		return classify_last(v, dom, err, "virDomainGetState");
	id = virDomainGetID(dom);
	d->id = id == (unsigned int)-1 ? -1 : (int)id;
	d->active = virDomainIsActive(dom) == 1;
	d->persistent = virDomainIsPersistent(dom) == 1;
	if ((xml = virDomainGetXMLDesc(dom, 0)) == NULL)
		return classify_last(v, dom, err, "virDomainGetXMLDesc");
	rc = virt_parse_domain_xml(xml, strlen(xml), d, err);
	free(xml);
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (rc < 0) {
		llcd_err_prefix(err, "domain %s", d->name);
		return VIRT_PERMANENT;
	}
	if (d->active) {
		r = virt_qemu_pid(v->pid_dir, v->proc_root, d->name, d->uuid, &d->pid, &perr);
		if (r != VIRT_OK && v->pid_root[0])
			r = virt_qemu_pid_scan(v->proc_root, v->pid_root, d->uuid, &d->pid, &perr);
		if (r != VIRT_OK)
			log_dom(LOG_DEBUG, d->name, -1, 0, "QEMU pid unknown: %s", perr.msg);
	}
	return VIRT_OK;
}

int
virt_list_domains(struct virt *v, struct virt_domain **doms, int *n,
    struct llcd_err *err)
{
	virDomainPtr *list = NULL;
	struct virt_domain *out;
	struct llcd_err derr;
	enum virt_result r;
	int cnt, i, k = 0;

	*doms = NULL;
	*n = 0;
	if (!virt_connected(v))
		return llcd_err_set(err, "libvirt %s: not connected", v->uri);
	if ((cnt = virConnectListAllDomains(v->conn, &list, 0)) < 0) {
		classify_last(v, NULL, err, "virConnectListAllDomains");
		return -1;
	}
	if ((out = calloc(cnt > 0 ? (size_t)cnt : 1, sizeof(*out))) == NULL) {
		for (i = 0; i < cnt; i++)
			virDomainFree(list[i]);
		free(list);
		return llcd_err_set(err, "out of memory");
	}
	for (i = 0; i < cnt; i++) {
		r = fill_domain(v, list[i], &out[k], &derr);
		virDomainFree(list[i]);
		if (r == VIRT_OK)
			k++;
		else if (r == VIRT_TRANSIENT) {
			llcd_err_set(err, "%s", derr.msg);
			for (i++; i < cnt; i++)
				virDomainFree(list[i]);
			free(list);
			free(out);
			return -1;
		} else if (r == VIRT_PERMANENT)
			log_dom(LOG_WARNING, out[k].name, -1, 0, "left out: %s", derr.msg);
	}
	free(list);
	*doms = out;
	*n = k;
	return 0;
}

enum virt_result
virt_domain_get(struct virt *v, const char *uuid, struct virt_domain *d,
    struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;

	if ((dom = lookup(v, uuid, &r, err)) == NULL)
		return r;
	r = fill_domain(v, dom, d, err);
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_domain_by_name(struct virt *v, const char *name, struct virt_domain *d,
    struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;
	virErrorPtr e;

	if (!virt_connected(v)) {
		llcd_err_set(err, "libvirt %s: not connected [transient]", v->uri);
		return VIRT_TRANSIENT;
	}
	if ((dom = virDomainLookupByName(v->conn, name)) == NULL) {
		e = virGetLastError();
		if (e != NULL && e->code == VIR_ERR_NO_DOMAIN) {
			llcd_err_set(err, "no domain '%.200s' is defined in libvirt %s", name, v->uri);
			return VIRT_GONE;
		}
		return classify_last(v, NULL, err, "virDomainLookupByName");
	}
	r = fill_domain(v, dom, d, err);
	virDomainFree(dom);
	return r;
}

/* ---- annotation --------------------------------------------------------- */

enum virt_result
virt_get_annotation(struct virt *v, const char *uuid, char **xml,
    struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;
	virErrorPtr e;

	*xml = NULL;
	if ((dom = lookup(v, uuid, &r, err)) == NULL)
		return r;
	*xml = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, VIRT_POLICY_NS,
	    VIR_DOMAIN_AFFECT_CURRENT);
	r = VIRT_OK;
	if (*xml == NULL) {
		e = virGetLastError();
		if (e == NULL || e->code != VIR_ERR_NO_DOMAIN_METADATA)
			r = classify_last(v, dom, err, "virDomainGetMetadata");
	}
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_set_annotation(struct virt *v, const char *uuid, const char *xml,
    struct llcd_err *err)
{
	/* no explicit target: the running domain and, if it has one, its
	 * persistent definition; a shut-off domain's definition */
	return virt_set_annotation_flags(v, uuid, xml, false, false, err);
}

/* ---- pinning ------------------------------------------------------------ */

static int
host_cpus(struct virt *v)
{
	int n;

	if (v->host_cpus <= 0 && (n = virNodeGetCPUMap(v->conn, NULL, NULL, 0)) > 0)
		v->host_cpus = n;
	return v->host_cpus;
}

/* cpuset -> libvirt cpumap (bit i of byte i/8). */
static unsigned char *
to_cpumap(const struct cpuset *cpus, int *maplen)
{
	unsigned char *map;
	int last = cpuset_last(cpus), cpu;

	*maplen = VIR_CPU_MAPLEN(last < 0 ? 1 : last + 1);
	if ((map = calloc((size_t)*maplen, 1)) == NULL)
		return NULL;
	CPUSET_FOREACH(cpu, cpus)
		VIR_USE_CPU(map, cpu);
	return map;
}


/* Seam: libvirt's test driver (test:// URIs, the scale tests) accepts only
 * flags 0 (VIR_DOMAIN_AFFECT_CURRENT) for virDomainPinVcpuFlags; on its
 * running domains that is the live state. Every other driver gets
 * AFFECT_LIVE, so that a domain that stopped meanwhile fails instead of
 * having its persistent definition changed. */
static unsigned
vcpu_pin_flags(const struct virt *v)
{
	return strncmp(v->uri, "test:", 5) == 0 ? 0 : VIR_DOMAIN_AFFECT_LIVE;
}

static enum virt_result
pin(struct virt *v, const char *uuid, const char *name, int vcpu, int tid,
    const struct cpuset *cpus, struct llcd_err *err)
{
	char list[256];
	unsigned char *map;
	enum virt_result r;
	virDomainPtr dom;
	int maplen, rc;
	const char *what = vcpu >= 0 ? "vcpupin" : "emulatorpin";

	if (cpuset_format(cpus, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "(%d CPUs)", cpuset_count(cpus));
	if (cpuset_empty(cpus)) {
		llcd_err_set(err, "%s: empty CPU set [permanent]", what);
		r = VIRT_PERMANENT;
		goto log;
	}
	if ((dom = lookup_pin(v, uuid, &r, err)) == NULL)
		goto log;
	if ((map = to_cpumap(cpus, &maplen)) == NULL) {
		virDomainFree(dom);
		llcd_err_set(err, "out of memory [transient]");
		r = VIRT_TRANSIENT;
		goto log;
	}
	if (vcpu >= 0)
		rc = virDomainPinVcpuFlags(dom, (unsigned)vcpu, map, maplen, vcpu_pin_flags(v));
	else
		rc = virDomainPinEmulator(dom, map, maplen, VIR_DOMAIN_AFFECT_LIVE);
	r = rc < 0 ? classify_last(v, dom, err, vcpu >= 0 ? "virDomainPinVcpuFlags" : "virDomainPinEmulator") : VIRT_OK;
	if (vcpu < 0 && r == VIRT_OK) {
		/* the domain's I/O threads go with its emulator threads */
		virDomainIOThreadInfoPtr *info = NULL;
		int nio = virDomainGetIOThreadInfo(dom, &info, VIR_DOMAIN_AFFECT_LIVE);
		for (int i = 0; i < nio && r == VIRT_OK; i++)
			if (virDomainPinIOThread(dom, info[i]->iothread_id, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
				r = classify_last(v, dom, err, "virDomainPinIOThread");
		for (int i = 0; i < nio; i++)
			virDomainIOThreadInfoFree(info[i]);
		free(info);
		if (nio < 0)
			virResetLastError();    /* no I/O threads to pin (unsupported) */
	}
	free(map);
	virDomainFree(dom);
log:
	if (r == VIRT_OK)
		log_dom(LOG_DEBUG, name, vcpu, tid, "%s %s", what, list);
	else
		log_dom(r == VIRT_GONE ? LOG_INFO : LOG_WARNING, name, vcpu, tid,
		    "%s %s failed: %s", what, list, err ? err->msg : virt_result_name(r));
	return r;
}

enum virt_result
virt_pin_vcpu(struct virt *v, const char *uuid, const char *name, int vcpu,
    int tid, const struct cpuset *cpus, struct llcd_err *err)
{
	struct llcd_err local;

	if (vcpu < 0) {
		llcd_err_set(err, "vcpupin: negative vCPU %d", vcpu);
		return VIRT_PERMANENT;
	}
	return pin(v, uuid, name, vcpu, tid, cpus, err ? err : &local);
}

enum virt_result
virt_pin_emulator(struct virt *v, const char *uuid, const char *name,
    const struct cpuset *cpus, struct llcd_err *err)
{
	struct llcd_err local;

	return pin(v, uuid, name, -1, 0, cpus, err ? err : &local);
}

static void
from_cpumap(const unsigned char *map, int ncpus, struct cpuset *out)
{
	int cpu;

	cpuset_zero(out);
	for (cpu = 0; cpu < ncpus && cpu < CPUSET_MAX; cpu++)
		if (VIR_CPU_USABLE(map, VIR_CPU_MAPLEN(ncpus), 0, cpu))
			cpuset_set(out, cpu);
}

enum virt_result
virt_get_pins(struct virt *v, const char *uuid, struct cpuset *vcpus, int max,
    int *n, struct cpuset *emulator, struct llcd_err *err)
{
	unsigned char *maps = NULL;
	enum virt_result r;
	virDomainPtr dom;
	int ncpus, maplen, got, i;

	*n = 0;
	if ((dom = lookup_pin(v, uuid, &r, err)) == NULL)
		return r;
	if ((ncpus = host_cpus(v)) <= 0) {
		r = classify_last(v, dom, err, "virNodeGetCPUMap");
		goto out;
	}
	maplen = VIR_CPU_MAPLEN(ncpus);
	if (max > 0) {
		if ((maps = calloc((size_t)max, (size_t)maplen)) == NULL) {
			llcd_err_set(err, "out of memory");
			r = VIRT_TRANSIENT;
			goto out;
		}
		if ((got = virDomainGetVcpuPinInfo(dom, max, maps, maplen, VIR_DOMAIN_AFFECT_LIVE)) < 0) {
			r = classify_last(v, dom, err, "virDomainGetVcpuPinInfo");
			goto out;
		}
		for (i = 0; i < got && i < max; i++)
			from_cpumap(maps + (size_t)i * (size_t)maplen, ncpus, &vcpus[i]);
		*n = got < max ? got : max;
	}
	if (emulator != NULL) {
		free(maps);
		if ((maps = calloc(1, (size_t)maplen)) == NULL) {
			llcd_err_set(err, "out of memory");
			r = VIRT_TRANSIENT;
			goto out;
		}
		if (virDomainGetEmulatorPinInfo(dom, maps, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0) {
			r = classify_last(v, dom, err, "virDomainGetEmulatorPinInfo");
			goto out;
		}
		from_cpumap(maps, ncpus, emulator);
	}
	r = VIRT_OK;
out:
	free(maps);
	virDomainFree(dom);
	return r;
}

/* ---- explicit metadata targets, QMP passthrough (live back-end) --------- */

enum virt_result
virt_set_annotation_flags(struct virt *v, const char *uuid, const char *xml,
    bool live, bool config, struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;
	unsigned flags = 0;

	if ((dom = lookup(v, uuid, &r, err)) == NULL)
		return r;
	if (!live && !config) {
		int active = virDomainIsActive(dom), persistent = virDomainIsPersistent(dom);
		if (active == 1)
			flags = VIR_DOMAIN_AFFECT_LIVE | (persistent == 1 ? VIR_DOMAIN_AFFECT_CONFIG : 0);
		else
			flags = VIR_DOMAIN_AFFECT_CONFIG;
	} else {
		if (live)
			flags |= VIR_DOMAIN_AFFECT_LIVE;
		if (config)
			flags |= VIR_DOMAIN_AFFECT_CONFIG;
	}
	r = VIRT_OK;
	if (virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
	    xml != NULL ? VIRT_POLICY_PREFIX : NULL, VIRT_POLICY_NS, flags) < 0)
		r = classify_last(v, dom, err, "virDomainSetMetadata");
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_qemu_monitor(struct virt *v, const char *uuid, const char *cmd, char **reply,
    struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;

	*reply = NULL;
	if ((dom = lookup(v, uuid, &r, err)) == NULL)
		return r;
	r = VIRT_OK;
	if (virDomainQemuMonitorCommand(dom, cmd, reply, 0) < 0)
		r = classify_last(v, dom, err, "virDomainQemuMonitorCommand");
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_get_xml(struct virt *v, const char *uuid, bool inactive, char **xml,
    struct llcd_err *err)
{
	enum virt_result r;
	virDomainPtr dom;

	*xml = NULL;
	if ((dom = lookup(v, uuid, &r, err)) == NULL)
		return r;
	r = VIRT_OK;
	if ((*xml = virDomainGetXMLDesc(dom, inactive ? VIR_DOMAIN_XML_INACTIVE : 0)) == NULL)
		r = classify_last(v, dom, err, "virDomainGetXMLDesc");
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_attach_device(struct virt *v, const char *uuid, const char *xml, bool live, struct llcd_err *err)
{
	enum virt_result r = VIRT_OK;
	virDomainPtr dom = lookup(v, uuid, &r, err);
	unsigned flags = VIR_DOMAIN_AFFECT_CONFIG | (live ? VIR_DOMAIN_AFFECT_LIVE : 0);

	if (dom == NULL)
		return r;
	if (virDomainAttachDeviceFlags(dom, xml, flags) < 0)
		r = classify_last(v, dom, err, "virDomainAttachDeviceFlags");
	virDomainFree(dom);
	return r;
}

enum virt_result
virt_define_xml(struct virt *v, const char *xml, struct llcd_err *err)
{
	virDomainPtr dom;

	if (!virt_connected(v)) {
		llcd_err_set(err, "libvirt %s: not connected [transient]", v->uri);
		return VIRT_TRANSIENT;
	}
	if ((dom = virDomainDefineXML(v->conn, xml)) == NULL)
		return classify_last(v, NULL, err, "virDomainDefineXML");
	virDomainFree(dom);
	return VIRT_OK;
}
