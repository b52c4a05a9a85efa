// SPDX-License-Identifier: GPL-2.0-or-later
/* test_qmpback.c - the QMP back-end (agent/qmpback/) and the cgroup v2
 * cpuset helper (agent/drivers/cgcpuset.c).
 *
 * The back-end runs on the real live back-end (uri "none") against QMP
 * peers played by threads of this test: a peer that answers like QEMU 7.2
 * (greeting and replies as recorded in tests/fixtures/qmp) naming threads of
 * this process as its vCPUs, and hostile ones. The real stack (TCG QEMU,
 * Proxmox's command line) is e2e_qmp_backend.
 *
 * The cgroup tests use a directory tree in the shape of cgroup v2 files:
 * this machine's cgroup v2 hierarchy has no cpuset controller (cpuset is
 * bound to v1 here), so the real files cannot be written (a seam for what
 * this machine lacks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cgcpuset.h"
#include "clock.h"
#include "live.h"
#include "log.h"
#include "policyrule.h"
#include "qmpback.h"
#include "topo.h"
#include "topo_hwloc.h"
#include "test_file.h"

static char tmp[TEST_TMPDIR_LEN];

static void
put(const char *rel, const char *text)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%.500s", tmp, rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static void
get(const char *rel, char *buf, size_t len)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%.500s", tmp, rel);
	assert_non_null(f = fopen(p, "r"));
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* ---- cgcpuset ---------------------------------------------------------- */

static void
test_cgcpuset(void **state)
{
	char dir[512], buf[1024], p[512];
	struct cpuset want;
	struct llcd_err e;

	snprintf(p, sizeof(p), "%s/proc/123", tmp);
	assert_int_equal(system(((void)snprintf(buf, sizeof(buf), "mkdir -p %s %s/cg/qemu.slice/100.scope", p, tmp), buf)), 0);
	put("proc/123/cgroup", "0::/qemu.slice/100.scope\n");
	snprintf(p, sizeof(p), "%s/proc", tmp);
	snprintf(buf, sizeof(buf), "%s/cg", tmp);
	assert_int_equal(cgcpuset_dir(p, buf, 123, dir, sizeof(dir), &e), 0);
	snprintf(buf, sizeof(buf), "%s/cg/qemu.slice/100.scope", tmp);
	assert_string_equal(dir, buf);
	/* a path the kernel cannot give */
	put("proc/123/cgroup", "0::/../etc\n");
	assert_int_equal(cgcpuset_dir(p, tmp, 123, dir, sizeof(dir), &e), -1);
	assert_non_null(strstr(e.msg, "unexpected cgroup path '/../etc'"));
	put("proc/123/cgroup", "0::/qemu.slice/100.scope\n");
	assert_int_equal(cgcpuset_dir(p, tmp, 123, dir, sizeof(dir), &e), 0);
	snprintf(dir, sizeof(dir), "%s/cg/qemu.slice/100.scope", tmp);

	/* no cpuset controller: nothing to do */
	cpuset_parse(&want, "2", &e);
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_OK);
	/* allowed already: nothing written */
	put("cg/qemu.slice/100.scope/cpuset.cpus.effective", "0-3\n");
	put("cg/qemu.slice/100.scope/cpuset.cpus", "\n");
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_OK);
	get("cg/qemu.slice/100.scope/cpuset.cpus", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* the VM's own cpuset.cpus restricts it: widened by the pin's CPUs */
	put("cg/qemu.slice/100.scope/cpuset.cpus.effective", "0\n");
	put("cg/qemu.slice/100.scope/cpuset.cpus", "0\n");
	put("cg/qemu.slice/cpuset.cpus.effective", "0-3\n");
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_WIDENED);
	get("cg/qemu.slice/100.scope/cpuset.cpus", buf, sizeof(buf));
	assert_string_equal(buf, "0,2");
	assert_non_null(strstr(e.msg, "cpuset.cpus widened to 0,2"));
	/* the parent does not allow it: refused, nothing written */
	put("cg/qemu.slice/100.scope/cpuset.cpus", "0\n");
	put("cg/qemu.slice/cpuset.cpus.effective", "0-1\n");
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_REFUSED);
	snprintf(buf, sizeof(buf), "cgroup %s allows only CPUs 0-1 (its parent %s/cg/qemu.slice), which llcd does not "
	    "change, not 2", dir, tmp);
	assert_string_equal(e.msg, buf);
	get("cg/qemu.slice/100.scope/cpuset.cpus", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	/* no cpuset.cpus of its own: the restriction is a parent's */
	put("cg/qemu.slice/100.scope/cpuset.cpus", "\n");
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_REFUSED);
	assert_non_null(strstr(e.msg, "(from a parent cgroup, which llcd does not change)"));
	/* garbage in a file */
	put("cg/qemu.slice/100.scope/cpuset.cpus.effective", "zz\n");
	assert_int_equal(cgcpuset_allow(dir, &want, &e), CGCPUSET_ERROR);
	assert_non_null(strstr(e.msg, "cpuset.cpus.effective: "));
}

static void
test_expand(void **state)
{
	char buf[64];

	assert_int_equal(qmpback_expand("/run/llcd/channels/%n.sock", "web1", "100", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/llcd/channels/web1.sock");
	assert_int_equal(qmpback_expand("/c/%i-%n%%%x", "web1", "100", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/c/100-web1%%x");
	/* a name that is not a plain file name: the VMID instead */
	assert_int_equal(qmpback_expand("/c/%n.sock", "../../etc/x", "100", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/c/100.sock");
	assert_int_equal(qmpback_expand("/c/%n.sock", "a b", "101", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/c/101.sock");
	assert_int_equal(qmpback_expand("/a-very-long-directory-name/for/the/channel/%n.sock", "name", "1", buf, 40), -1);
}

/* ---- the back-end against peers played by threads ------------------------ */

#define GREETING "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}, " \
	"\"package\": \"Debian 1:7.2+dfsg-7+deb12u6\"}, \"capabilities\": [\"oob\"]}}\r\n"

enum peer_kind { PEER_QEMU, PEER_GARBAGE, PEER_SILENT, PEER_LIAR };

struct peer {
	enum peer_kind kind;
	char path[108];
	int lfd;
	pthread_t th;
	atomic_int tids[4];             /* PEER_QEMU: "vCPU" threads of this process */
	atomic_int ncpus, slots;        /* PEER_QEMU: vCPUs plugged, of slots (2, 2) */
	atomic_int stop;
	atomic_int conn;                /* PEER_QEMU: the connection being served; -1 */
};

static void
reply(int c, const char *line, const struct peer *p)
{
	char out[4096];
	const char *id = strstr(line, "\"id\"");
	long n = id ? strtol(strchr(id, ':') + 1, NULL, 10) : -1;
	int o = 0;

	if (strstr(line, "qmp_capabilities"))
		snprintf(out, sizeof(out), "{\"return\": {}, \"id\": %ld}\r\n", n);
	else if (strstr(line, "query-name"))
		snprintf(out, sizeof(out), "{\"return\": {\"name\": \"web1\"}, \"id\": %ld}\r\n", n);
	else if (strstr(line, "query-uuid"))
		snprintf(out, sizeof(out), "{\"return\": {\"UUID\": \"00000000-0000-0000-0000-000000000000\"}, \"id\": %ld}\r\n", n);
	else if (strstr(line, "query-cpus-fast")) {
		/* vCPU i on core i, as QEMU 7.2 answers (tests/fixtures/qmp) */
		o = snprintf(out, sizeof(out), "{\"return\": [");
		for (int i = 0; i < p->ncpus && i < 4; i++)
			o += snprintf(out + o, sizeof(out) - (size_t)o, "%s{\"thread-id\": %d, \"props\": {\"core-id\": %d, "
			    "\"thread-id\": 0, \"die-id\": 0, \"socket-id\": 0}, \"qom-path\": \"/machine/unattached/device[%d]\", "
			    "\"cpu-index\": %d, \"target\": \"x86_64\"}", i ? ", " : "",
			    p->kind == PEER_LIAR && i == 0 ? 1 : p->tids[i], i, i, i);
		snprintf(out + o, sizeof(out) - (size_t)o, "], \"id\": %ld}\r\n", n);
	} else if (strstr(line, "query-hotpluggable-cpus")) {
		o = snprintf(out, sizeof(out), "{\"return\": [");
		for (int i = p->slots - 1; i >= 0; i--) {
			char qom[64] = "";
			if (i < p->ncpus)
				snprintf(qom, sizeof(qom), ", \"qom-path\": \"/machine/unattached/device[%d]\"", i);
			o += snprintf(out + o, sizeof(out) - (size_t)o, "%s{\"props\": {\"core-id\": %d, \"thread-id\": 0, "
			    "\"die-id\": 0, \"socket-id\": 0}, \"vcpus-count\": 1%s, \"type\": \"qemu64-x86_64-cpu\"}",
			    i < p->slots - 1 ? ", " : "", i, qom);
		}
		snprintf(out + o, sizeof(out) - (size_t)o, "], \"id\": %ld}\r\n", n);
	} else
		snprintf(out, sizeof(out), "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"no\"}, \"id\": %ld}\r\n", n);
	(void)!write(c, out, strlen(out));
}

static void *
peer_main(void *arg)
{
	struct peer *p = arg;
	int held[16], nheld = 0;

	while (!p->stop) {
		int c = accept(p->lfd, NULL, NULL);
		if (c < 0)
			break;
		if (p->kind == PEER_GARBAGE) {
			(void)!write(c, "hello, I am not QEMU\n", 21);
		} else if (p->kind == PEER_SILENT) {
			if (nheld < 16)
				held[nheld++] = c;
			continue;
		} else {
			char buf[4096], *nl;
			size_t have = 0;
			ssize_t r;
			p->conn = c;
			(void)!write(c, GREETING, strlen(GREETING));
			while ((r = read(c, buf + have, sizeof(buf) - 1 - have)) > 0) {
				have += (size_t)r;
				buf[have] = '\0';
				while ((nl = strchr(buf, '\n')) != NULL) {
					*nl = '\0';
					reply(c, buf, p);
					memmove(buf, nl + 1, have - (size_t)(nl + 1 - buf) + 1);
					have -= (size_t)(nl + 1 - buf);
				}
			}
		}
		p->conn = -1;
		close(c);
	}
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	return NULL;
}

static atomic_int spin_stop;

static void *
spinner(void *arg)
{
	atomic_int *tid = arg;

	*tid = (int)syscall(SYS_gettid);
	while (!spin_stop)
		usleep(1000);
	return NULL;
}

static void
peer_start(struct peer *p, enum peer_kind kind, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->conn = -1;
	p->ncpus = p->slots = 2;
	snprintf(p->path, sizeof(p->path), "%.40s/sock/%.20s", tmp, name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->path);
	assert_true((p->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(p->lfd, 8), 0);
	assert_int_equal(pthread_create(&p->th, NULL, peer_main, p), 0);
}

static void
peer_stop(struct peer *p)
{
	p->stop = 1;
	shutdown(p->lfd, SHUT_RDWR);
	pthread_join(p->th, NULL);
	close(p->lfd);
	unlink(p->path);
}

/* Run the back-end for up to ms, until n VMs are known; its counters
 * then in *st. */
static void
run_until(struct qmpback *q, int n, int ms, struct qmpback_stats *st)
{
	for (int i = 0; i < ms / 10; i++) {
		qmpback_handle(q, llcd_mono_ns());
		qmpback_stats(q, st);
		if (st->vms == n && n > 0)
			return;
		usleep(10000);
	}
	qmpback_stats(q, st);
}

/* Run the back-end for up to 0.5 s, until *count (one of st's counters)
 * reaches want. */
static void
handle_until(struct qmpback *q, struct qmpback_stats *st, const uint64_t *count, uint64_t want)
{
	for (int i = 0; i < 50 && *count < want; i++) {
		usleep(10000);
		qmpback_handle(q, llcd_mono_ns());
		qmpback_stats(q, st);
	}
}

/* A dry-run back-end over no hypervisor (the QMP back-end adds the VMs)
 * on a host of two 1-PU LLCs, *t. */
static struct live *
qmp_live(struct topo **t)
{
	struct llcd_err e;
	struct live *l;

	assert_non_null(*t = topo_load("pack:1 l3:2 core:1 pu:1", &e));
	struct live_config lc = { .uri = LIVE_URI_NONE, .topo = *t, .state_dir = "", .sampler = AGENT_SAMPLER_PROC,
	    .counters = -1, .dry_run = true, .cgroup_root = "" };
	assert_non_null(l = live_new(&lc, &e));
	return l;
}

/* The QMP back-end on l watching the sockets tmp/sock/NAME.qmp (qc->socket_glob), with
 * qc's other settings and a 300 ms timeout unless qc sets one. */
static struct qmpback *
qb_new(struct live *l, struct qmpback_config *qc)
{
	static char glob[600];
	struct llcd_err e;
	struct qmpback *q;

	snprintf(glob, sizeof(glob), "%s/sock/*.qmp", tmp);
	qc->socket_glob = glob;
	if (qc->timeout_ms == 0)
		qc->timeout_ms = 300;
	if ((q = qmpback_new(l, qc, &e)) == NULL)
		fail_msg("qmpback_new: %s", e.msg);
	return q;
}

/* The well-behaved QEMU peer at sock/100.qmp, its two vCPU threads
 * spinning (sp) until spinners_stop(). */
static void
good_peer_start(struct peer *good, pthread_t sp[2])
{
	spin_stop = 0;
	peer_start(good, PEER_QEMU, "100.qmp");
	assert_int_equal(pthread_create(&sp[0], NULL, spinner, &good->tids[0]), 0);
	assert_int_equal(pthread_create(&sp[1], NULL, spinner, &good->tids[1]), 0);
	while (!good->tids[0] || !good->tids[1])
		usleep(1000);
}

static void
spinners_stop(pthread_t sp[2])
{
	spin_stop = 1;
	pthread_join(sp[0], NULL);
	pthread_join(sp[1], NULL);
}

/* The end of a test of q on l (host t) with good_peer_start's peer: all
 * stopped and freed. */
static void
good_done(struct qmpback *q, struct peer *good, pthread_t sp[2], struct live *l, struct topo *t)
{
	qmpback_free(q);
	peer_stop(good);
	spinners_stop(sp);
	live_free(l);
	topo_free(t);
}

static void
test_backend(void **state)
{
	char buf[1024];
	struct llcd_err e;
	struct topo *t;
	struct qmpback_stats st;
	struct peer good, garbage, silent, liar;
	pthread_t sp[2];
	uint64_t key;
	struct agent_dominfo di;

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock %s/pol", tmp, tmp);
	assert_int_equal(system(buf), 0);
	struct live *l = qmp_live(&t);
	snprintf(buf, sizeof(buf), "%s/pol", tmp);
	struct qmpback_config qc = { .policy_dir = buf };
	struct qmpback *q = qb_new(l, &qc);

	/* a peer in the socket directory's place that is not a socket, and a
	 * symlink to a real one: neither is connected */
	put("sock/999.qmp", "not a socket\n");
	good_peer_start(&good, sp);
	peer_start(&garbage, PEER_GARBAGE, "900.qmp");
	peer_start(&silent, PEER_SILENT, "901.qmp");
	peer_start(&liar, PEER_LIAR, "902.qmp");
	snprintf(buf, sizeof(buf), "ln -s %s %s/sock/903.qmp", good.path, tmp);
	assert_int_equal(system(buf), 0);

	/* an invalid policy file: the parser's message, with the file's path */
	put("pol/100.xml", "<llc-policy xmlns=\"urn:llcd:llc-policy:1\" mode=\"sideways\"/>");
	run_until(q, 1, 3000, &st);
	assert_int_equal(st.vms, 1);            /* the good peer only */
	assert_int_equal(st.sockets, 4);        /* the file and the symlink are not sockets */
	assert_int_equal(live_domains(l, &key, 1), 1);
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_string_equal(di.name, "web1");
	assert_int_equal(di.pid, getpid());
	assert_int_equal(di.nvcpus, 2);
	assert_int_equal(di.guest.cores, 2);
	assert_int_equal(di.guest.sockets, 1);
	assert_int_equal(di.state, AGENT_DOM_ERROR);
	snprintf(buf, sizeof(buf), "%s/pol/100.xml: llc-policy: attribute 'mode': 'sideways' is not one of none, static, "
	    "aggregate, spread", tmp);
	assert_string_equal(di.annotation_error, buf);
	agent_dominfo_clear(&di);

	/* fixed: re-read within a handle() */
	put("pol/100.xml", "<llc-policy xmlns=\"urn:llcd:llc-policy:1\" mode=\"static\"/>");
	qmpback_handle(q, llcd_mono_ns());
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.state, AGENT_DOM_MANAGED);
	assert_true(di.annotated);
	assert_int_equal(di.annot.mode, POLICY_MODE_STATIC);
	agent_dominfo_clear(&di);

	/* no policy file: llcd.conf's name= policy-rules apply to QMP VMs too
	 * (a metadata rule cannot: there is no domain XML) */
	struct policyrule_set *rules = policyrule_set_new();
	struct policyrule rule;
	assert_int_equal(policyrule_parse("name=web* mode=aggregate", "llcd.conf:9", &rule, &e), 0);
	assert_int_equal(policyrule_set_add(rules, &rule, &e), 0);
	live_hooks.set_rules(l, rules);
	snprintf(buf, sizeof(buf), "%s/pol/100.xml", tmp);
	assert_int_equal(unlink(buf), 0);
	qmpback_handle(q, llcd_mono_ns());
	struct agent_obs *obs = agent_obs_new();
	assert_int_equal(agent_obs_begin(obs, 2, &e), 0);
	assert_int_equal(live_agent_ops.observe(l, llcd_mono_ns(), obs, &e), 0);
	assert_int_equal(obs->ndomains, 1);
	assert_true(obs->domains[0].annotated);
	assert_int_equal(obs->domains[0].annot.mode, POLICY_MODE_AGGREGATE);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.rule, 1);
	assert_string_equal(di.rule_where, "llcd.conf:9");
	agent_dominfo_clear(&di);
	/* the file back: it wins over the rule */
	put("pol/100.xml", "<llc-policy xmlns=\"urn:llcd:llc-policy:1\" mode=\"spread\"/>");
	qmpback_handle(q, llcd_mono_ns());
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.annot.mode, POLICY_MODE_SPREAD);
	assert_int_equal(di.rule, 0);
	agent_dominfo_clear(&di);
	agent_obs_free(obs);

	/* the hostile peers were refused (garbage at once, the liar by its
	 * thread-id, the silent one after the timeout) and never became VMs */
	run_until(q, 0, 700, &st);
	assert_int_equal(st.vms, 1);
	assert_true(st.refusals >= 3);

	/* the socket goes: the VM goes */
	peer_stop(&good);
	run_until(q, 0, 100, &st);
	assert_int_equal(st.vms, 0);
	assert_int_equal(live_domains(l, &key, 1), 0);

	peer_stop(&garbage);
	peer_stop(&silent);
	peer_stop(&liar);
	spinners_stop(sp);
	qmpback_free(q);
	live_free(l);
	policyrule_set_free(rules);
	topo_free(t);
}

static void
event(struct peer *p, const char *name)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"%s\"}\r\n", name);
	assert_true(p->conn >= 0);
	assert_int_equal(write(p->conn, buf, strlen(buf)), (ssize_t)strlen(buf));
}

/* qmp-hold: the connection stays; SHUTDOWN drops the VM, RESUME reads it
 * again, STOP is only logged; without hold the monitor is left at once */
static void
test_hold(void **state)
{
	char buf[1024];
	struct topo *t;
	struct qmpback_stats st;
	struct peer good;
	pthread_t sp[2];
	uint64_t key;

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	struct live *l = qmp_live(&t);
	struct qmpback_config qc = { .hold = true };
	struct qmpback *q = qb_new(l, &qc);
	good_peer_start(&good, sp);
	run_until(q, 1, 3000, &st);
	assert_int_equal(st.vms, 1);
	assert_true(good.conn >= 0);            /* held */

	event(&good, "STOP");
	handle_until(q, &st, &st.events, 1);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.vms, 1);            /* paused: still placed */
	event(&good, "SHUTDOWN");
	run_until(q, 0, 500, &st);
	assert_int_equal(st.vms, 0);
	assert_int_equal(live_domains(l, &key, 1), 0);
	event(&good, "RESUME");
	run_until(q, 1, 1000, &st);
	assert_int_equal(st.vms, 1);
	assert_int_equal(st.vms_added, 2);
	assert_int_equal(st.connects, 1);       /* the same connection */
	assert_int_equal(live_domains(l, &key, 1), 1);
	/* a device event (device_add / device_del of any device): QMP is
	 * read again on the held connection, the VM kept */
	event(&good, "DEVICE_DELETED");
	handle_until(q, &st, &st.rereads, 1);
	assert_int_equal(st.requeries, 1);
	assert_int_equal(st.rereads, 1);
	assert_int_equal(st.connects, 1);
	assert_int_equal(st.vms_added, 2);
	assert_int_equal(st.vms, 1);
	good_done(q, &good, sp, l, t);
}

/* A thread of this process named as QEMU names a vCPU thread
 * (debug-threads=on): "CPU n/TCG"; it runs until its stop is set. */
struct named {
	char name[16];
	atomic_int *tid;
	atomic_int stop;
	pthread_t th;
};

static void *
named_main(void *arg)
{
	struct named *n = arg;

	pthread_setname_np(pthread_self(), n->name);
	*n->tid = (int)syscall(SYS_gettid);
	while (!n->stop)
		usleep(1000);
	return NULL;
}

static void
named_start(struct named *n, const char *name, atomic_int *tid)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->tid = tid;
	*tid = 0;
	assert_int_equal(pthread_create(&n->th, NULL, named_main, n), 0);
	while (!*tid)
		usleep(1000);
}

static void
named_stop(struct named *n)
{
	n->stop = 1;
	pthread_join(n->th, NULL);
}

static void *
worker_main(void *arg)
{
	(void)arg;
	usleep(20000);
	return NULL;
}

/* Periods of the live back-end with the QMP back-end's handling first (as
 * h_observe does), until the VM has want vCPUs online and the back-end has
 * applied rereads re-reads (up to max periods, 10 ms apart); the periods
 * it took, or -1. */
static int
periods_until(struct qmpback *q, struct live *l, uint64_t key, int want, uint64_t rereads, int max)
{
	struct agent_obs *obs = agent_obs_new();
	struct qmpback_stats st;
	struct agent_dominfo di;
	struct llcd_err e;
	int got = -1;

	assert_non_null(obs);
	for (int i = 1; i <= max && got < 0; i++) {
		qmpback_handle(q, llcd_mono_ns());
		assert_int_equal(agent_obs_begin(obs, 2, &e), 0);
		assert_int_equal(live_agent_ops.observe(l, llcd_mono_ns(), obs, &e), 0);
		qmpback_stats(q, &st);
		agent_dominfo_init(&di);
		if (live_describe(l, key, &di) == 0 && di.nvcpus == want && st.rereads == rereads)
			got = i;
		agent_dominfo_clear(&di);
		usleep(10000);
	}
	agent_obs_free(obs);
	return got;
}

/* vCPU hot-plug without qmp-hold: the threads QEMU names as vCPUs are the
 * hint (looked at when the thread count changes, at most every 10
 * periods); only when they differ from QMP's last answer is the monitor
 * read again, and the answer checked as the first one was */
static void
test_hotplug(void **state)
{
	char buf[1024];
	struct topo *t;
	struct qmpback_stats st;
	struct peer good;
	struct named cpu[3];
	uint64_t key;
	struct agent_dominfo di;

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	struct live *l = qmp_live(&t);
	struct qmpback_config qc = { .requery_ms = 100 };
	struct qmpback *q = qb_new(l, &qc);
	peer_start(&good, PEER_QEMU, "100.qmp");
	good.slots = 3;                 /* -smp 2,maxcpus=3 */
	named_start(&cpu[0], "CPU 0/TCG", &good.tids[0]);
	named_start(&cpu[1], "CPU 1/TCG", &good.tids[1]);
	run_until(q, 1, 3000, &st);
	assert_int_equal(st.vms, 1);
	assert_int_equal(live_domains(l, &key, 1), 1);
	assert_true(periods_until(q, l, key, 2, 0, 1) > 0);
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.maxvcpus, 3);
	assert_int_equal(di.guest.cores, 3);
	agent_dominfo_clear(&di);

	/* worker threads come and go (the thread count changes): QMP is not
	 * asked again while the vCPU-named threads are the same */
	pthread_t w[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&w[i], NULL, worker_main, NULL), 0);
	assert_int_equal(periods_until(q, l, key, 2, 1, 25), -1);
	for (int i = 0; i < 3; i++)
		pthread_join(w[i], NULL);
	assert_int_equal(periods_until(q, l, key, 2, 1, 15), -1);
	qmpback_stats(q, &st);
	assert_int_equal(st.requeries, 0);
	assert_int_equal(st.connects, 1);

	/* device_add: a thread "CPU 2/TCG"; a QMP answer naming a thread of
	 * another process for it is refused like a first answer, the VM
	 * keeping its two vCPUs */
	atomic_int tid2;
	named_start(&cpu[2], "CPU 2/TCG", &tid2);
	good.tids[2] = 1;
	good.ncpus = 3;
	assert_int_equal(periods_until(q, l, key, 3, 1, 30), -1);
	qmpback_stats(q, &st);
	assert_int_equal(st.requeries, 1);
	assert_int_equal(st.rereads, 0);
	assert_true(st.refusals >= 1);
	assert_int_equal(st.vms, 1);
	assert_int_equal(live_domains(l, &key, 1), 1);
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.nvcpus, 2);
	agent_dominfo_clear(&di);
	/* the right thread: read again after the back-off (1 s), the third
	 * vCPU is found, the first two keep their threads */
	good.tids[2] = tid2;
	assert_true(periods_until(q, l, key, 3, 1, 300) > 0);
	assert_true(periods_until(q, l, key, 3, 1, 2) > 0);     /* the threads found */
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.nvcpu_info, 3);
	assert_int_equal(di.vcpus[0].tid, good.tids[0]);
	assert_int_equal(di.vcpus[1].tid, good.tids[1]);
	assert_int_equal(di.vcpus[2].tid, tid2);
	assert_int_equal(di.guest.cores, 3);
	agent_dominfo_clear(&di);
	qmpback_stats(q, &st);
	assert_int_equal(st.vms_added, 1);      /* the same VM, not a new one */
	assert_int_equal(st.vms_removed, 0);

	/* device_del: the thread ends; QMP is read again and the vCPU dropped */
	good.ncpus = 2;
	named_stop(&cpu[2]);
	int np = periods_until(q, l, key, 2, 2, 50);
	assert_true(np > 0);
	assert_true(periods_until(q, l, key, 2, 2, 2) > 0);
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_int_equal(di.nvcpu_info, 2);
	assert_int_equal(di.vcpus[1].tid, good.tids[1]);
	agent_dominfo_clear(&di);
	qmpback_stats(q, &st);
	assert_int_equal(st.requeries, 2);      /* plug (refused, retried after the back-off: not a new one), unplug */
	assert_int_equal(st.vms_added, 1);
	/* and settled: no more re-reads */
	assert_int_equal(periods_until(q, l, key, 2, 3, 25), -1);

	qmpback_free(q);
	peer_stop(&good);
	named_stop(&cpu[0]);
	named_stop(&cpu[1]);
	live_free(l);
	topo_free(t);
}

/* ---- hostile directories and names ---------------- */

static atomic_int nlines;
static char line_match[128];

static void
count_sink(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)arg;
	if (strstr(msg, line_match) != NULL)
		nlines++;
}

/* A socket directory others may write is refused, at start with the
 * reason, and at a scan when it becomes so: no socket in it is
 * connected (a non-member planted names there and made llcd pin a root
 * QEMU's threads under its policy). */
static void
test_dir_refused(void **state)
{
	char buf[1024], conf[512], want[700];
	struct llcd_err e;
	struct topo *t;
	struct qmpback_stats st;
	struct peer good;
	pthread_t sp[2];

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock && chmod 0777 %s/sock", tmp, tmp);
	assert_int_equal(system(buf), 0);
	struct live *l = qmp_live(&t);
	snprintf(conf, sizeof(conf), "%s/sock/*.qmp", tmp);
	struct qmpback_config qc = { .socket_glob = conf, .timeout_ms = 300 };
	assert_null(qmpback_new(l, &qc, &e));
	snprintf(want, sizeof(want), "qmp-socket-glob: directory %s/sock is writable by others (mode 0777, owner uid 0, "
	    "group 0): llcd, as root, does not use files in it (chmod go-w)", tmp);
	assert_string_equal(e.msg, want);
	/* safe at start, writable later: nothing new is connected */
	snprintf(buf, sizeof(buf), "chmod 0755 %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	struct qmpback *q = qmpback_new(l, &qc, &e);
	assert_non_null(q);
	snprintf(buf, sizeof(buf), "chmod 0777 %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	good_peer_start(&good, sp);
	run_until(q, 1, 1500, &st);
	assert_int_equal(st.vms, 0);
	assert_int_equal(st.connects, 0);
	/* made safe again: found */
	snprintf(buf, sizeof(buf), "chmod 0755 %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	qmpback_handle(q, llcd_mono_ns() + 6000000000ull);     /* the next rescan */
	run_until(q, 1, 3000, &st);
	assert_int_equal(st.vms, 1);
	good_done(q, &good, sp, l, t);
}

/* an "outside" QEMU: a listening socket outside the glob that counts the
 * connections made to it */
struct outside {
	int lfd;
	atomic_int accepted, stop;
	pthread_t th;
};

static void *
outside_main(void *arg)
{
	struct outside *o = arg;

	while (!o->stop) {
		int c = accept(o->lfd, NULL, NULL);
		if (c < 0)
			break;
		o->accepted++;
		(void)!send(c, GREETING, strlen(GREETING), MSG_NOSIGNAL);
		close(c);
	}
	return NULL;
}

struct flipper {
	char dir[128];
	int n;
	atomic_int stop;
	atomic_long flips;
	pthread_t th;
};

/* every name sock/8NN.qmp flips between a socket (a hard link of .s, a
 * peer that talks garbage) and a symbolic link to the outside socket,
 * each change one atomic rename */
static void *
flipper_main(void *arg)
{
	struct flipper *f = arg;
	char a[256], b[256], name[256], s[256], out[256];

	snprintf(s, sizeof(s), "%s/.s", f->dir);
	snprintf(out, sizeof(out), "%s/../outside.sock", f->dir);
	while (!f->stop) {
		for (int i = 0; i < f->n; i++) {
			snprintf(name, sizeof(name), "%s/8%02d.qmp", f->dir, i);
			snprintf(a, sizeof(a), "%s/.a%d", f->dir, i);
			snprintf(b, sizeof(b), "%s/.b%d", f->dir, i);
			unlink(a);
			unlink(b);
			if (link(s, a) == 0)
				rename(a, name);
			if (symlink(out, b) == 0)
				rename(b, name);
		}
		f->flips++;
	}
	return NULL;
}

/* Names swapped between a socket and a symbolic link to a socket outside
 * the glob, as fast as rename() goes: llcd never connects outside (it
 * did, 28-67 times in 30 s, taking a root QEMU outside the glob for a VM
 * of the attacker's file name: the glob was checked with lstat(), then
 * connected by path). */
static void
test_symlink_race(void **state)
{
	char buf[1024];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct topo *t;
	struct qmpback_stats st;
	struct outside o = { 0 };
	struct peer garbage;
	struct flipper f = { .n = 16 };

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/outside.sock", tmp);
	assert_true((o.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(o.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(o.lfd, 64), 0);
	assert_int_equal(pthread_create(&o.th, NULL, outside_main, &o), 0);
	peer_start(&garbage, PEER_GARBAGE, ".s");
	snprintf(f.dir, sizeof(f.dir), "%s/sock", tmp);
	assert_int_equal(pthread_create(&f.th, NULL, flipper_main, &f), 0);
	struct live *l = qmp_live(&t);
	struct qmpback_config qc = { 0 };
	struct qmpback *q = qb_new(l, &qc);
	log_set_sink(log_discard, NULL);
	uint64_t end = llcd_mono_ns() + 4000000000ull;
	while (llcd_mono_ns() < end) {
		qmpback_handle(q, llcd_mono_ns());
		usleep(500);
	}
	log_set_sink(NULL, NULL);
	qmpback_stats(q, &st);
	f.stop = 1;
	pthread_join(f.th, NULL);
	print_message("%ld flips of 16 names, %llu connects, %d of them to the socket outside the glob\n",
	    (long)f.flips, (unsigned long long)st.connects, (int)o.accepted);
	assert_true(f.flips > 100);
	assert_true(st.connects > 0);
	assert_int_equal(o.accepted, 0);
	assert_int_equal(st.vms, 0);
	qmpback_free(q);
	live_free(l);
	o.stop = 1;
	shutdown(o.lfd, SHUT_RDWR);
	pthread_join(o.th, NULL);
	close(o.lfd);
	peer_stop(&garbage);
	topo_free(t);
}

/* A socket that vanishes and comes back in a loop (refused each time)
 * says its reason once and is connected about once a second: it used to
 * start afresh each time (260,301 log lines in 30 s). */
static void
test_flip_flood(void **state)
{
	char buf[1024], name[256], a[256];
	struct topo *t;
	struct qmpback_stats st;
	struct peer garbage;

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock", tmp);
	assert_int_equal(system(buf), 0);
	peer_start(&garbage, PEER_GARBAGE, ".s");
	struct live *l = qmp_live(&t);
	struct qmpback_config qc = { 0 };
	struct qmpback *q = qb_new(l, &qc);
	snprintf(name, sizeof(name), "%s/sock/777.qmp", tmp);
	snprintf(a, sizeof(a), "%s/sock/.a", tmp);
	snprintf(line_match, sizeof(line_match), "777.qmp");
	nlines = 0;
	log_set_sink(count_sink, NULL);
	uint64_t t0 = llcd_mono_ns(), end = t0 + 3000000000ull;
	int flips = 0;
	while (llcd_mono_ns() < end) {
		if (link(garbage.path, a) == 0 && rename(a, name) == 0) {
			qmpback_handle(q, llcd_mono_ns());
			usleep(2000);
			qmpback_handle(q, llcd_mono_ns());
		}
		unlink(name);
		qmpback_handle(q, llcd_mono_ns());
		usleep(1000);
		flips++;
	}
	log_set_sink(NULL, NULL);
	qmpback_stats(q, &st);
	print_message("%d flips in 3 s: %d log lines about the socket, %llu connects\n", flips, (int)nlines,
	    (unsigned long long)st.connects);
	assert_true(flips > 200);
	assert_true(nlines >= 1 && nlines <= 3);
	assert_true(st.connects <= 8);
	qmpback_free(q);
	live_free(l);
	peer_stop(&garbage);
	topo_free(t);
}

/* A policy file that is a symbolic link (vm1.xml -> a root-only file) is
 * not followed: the VM is left unannotated with the reason, and nothing
 * of the target's content reaches the annotation error a member can read
 * (the parser's first error quoted it). */
static void
test_policy_symlink(void **state)
{
	char buf[1024], pol[512], want[700];
	struct llcd_err e;
	struct topo *t;
	struct qmpback_stats st;
	struct peer good;
	pthread_t sp[2];
	uint64_t key;
	struct agent_dominfo di;

	snprintf(buf, sizeof(buf), "mkdir -p %s/sock %s/pol && printf 'root:$y$j9T$secret:19000::::::\\n' > %s/shadow && "
	    "chmod 0600 %s/shadow && ln -s %s/shadow %s/pol/100.xml", tmp, tmp, tmp, tmp, tmp, tmp);
	assert_int_equal(system(buf), 0);
	struct live *l = qmp_live(&t);
	snprintf(pol, sizeof(pol), "%s/pol", tmp);
	struct qmpback_config qc = { .policy_dir = pol };
	struct qmpback *q = qb_new(l, &qc);
	good_peer_start(&good, sp);
	run_until(q, 1, 3000, &st);
	assert_int_equal(st.vms, 1);
	assert_int_equal(live_domains(l, &key, 1), 1);
	agent_dominfo_init(&di);
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_false(di.annotated);
	assert_null(strstr(di.annotation_error, "secret"));
	assert_null(strstr(di.annotation_error, "root:"));
	agent_dominfo_clear(&di);
	char *xml = NULL;
	assert_int_equal(live_query.get_annotation(l, key, &xml, &e), -1);
	assert_null(xml);
	snprintf(want, sizeof(want), "%s/pol: 100.xml is a symbolic link: not followed", tmp);
	assert_string_equal(e.msg, want);
	/* a policy directory others may write is refused at start */
	snprintf(buf, sizeof(buf), "chmod 0777 %s/pol", tmp);
	assert_int_equal(system(buf), 0);
	assert_null(qmpback_new(l, &qc, &e));
	assert_non_null(strstr(e.msg, "policy-dir: directory "));
	assert_non_null(strstr(e.msg, "is writable by others"));
	good_done(q, &good, sp, l, t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		TEST_IN_TMPDIR(test_cgcpuset, tmp),
		cmocka_unit_test(test_expand),
		/* first: the refusals of the others would use up the log's burst */
		TEST_IN_TMPDIR(test_flip_flood, tmp),
		TEST_IN_TMPDIR(test_backend, tmp),
		TEST_IN_TMPDIR(test_hold, tmp),
		TEST_IN_TMPDIR(test_hotplug, tmp),
		TEST_IN_TMPDIR(test_dir_refused, tmp),
		TEST_IN_TMPDIR(test_symlink_race, tmp),
		TEST_IN_TMPDIR(test_policy_symlink, tmp),
	};
	log_init(true, 0);
	signal(SIGPIPE, SIG_IGN);       /* the peers write to connections llcd closed */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
