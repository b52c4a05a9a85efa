// SPDX-License-Identifier: GPL-2.0-or-later
/* test_live.c - the live back-end without libvirt: the state file, kernel
 * cache-aware scheduling detection, and
 * the agent loop driving real threads of this process named like QEMU's
 * vCPU threads (pinned with sched_setaffinity, since there is no libvirt),
 * with core-scheduling cookies through a fake prctl. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "cgbound.h"
#include "test_file.h"
#include "kcas.h"
#include "live.h"
#include "live_int.h"        /* the NUMA reader's counts (test_numa_node_low_rate) */
#include "stats.h"
#include "memnode.h"
#include "log.h"
#include "loop.h"
#include "procstat.h"
#include "state.h"
#include "topo_hwloc.h"

/* ---- helpers ------------------------------------------------------------ */

static char *
tmpdir(void)
{
	char *d = strdup("/tmp/test_live.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void
rmtree(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Writes text to path: live_state_read fails with a message containing msg. */
static void
expect_bad_state(const char *path, struct live_state *r, const char *text, const char *msg)
{
	struct llcd_err err;

	write_file(path, text);
	assert_int_equal(live_state_read(path, r, &err), -1);
	assert_non_null(strstr(err.msg, msg));
}

/* ---- pure helpers ------------------------------------------------------- */

static void
test_kernel_cas(void **state)
{
	char *d = tmpdir(), path[512], detail[512];

	assert_int_equal(live_kernel_cas(d, detail, sizeof(detail)), LIVE_KCAS_ABSENT);
	assert_non_null(strstr(detail, "no kernel cache-aware scheduling"));
	snprintf(path, sizeof(path), "%s/enabled", d);
	write_file(path, "0\n");
	assert_int_equal(live_kernel_cas(d, detail, sizeof(detail)), LIVE_KCAS_DISABLED);
	write_file(path, "1\n");
	assert_int_equal(live_kernel_cas(d, detail, sizeof(detail)), LIVE_KCAS_ENABLED);
	assert_non_null(strstr(detail, "llcd's pins override it"));
	assert_string_equal(live_kcas_name(LIVE_KCAS_ENABLED), "enabled");
	/* this host: whatever it says, it must not crash */
	(void)live_kernel_cas(NULL, NULL, 0);
	rmtree(d);
	free(d);
}

/* ---- state file --------------------------------------------------------- */

static void
test_state_roundtrip(void **state)
{
	char *d = tmpdir(), path[512], tmp[600];
	struct live_state s = { 0 }, r = { 0 };
	struct llcd_err err;
	struct live_state_dom doms[2];
	struct cpuset v0[3], v1[2];

	memset(doms, 0, sizeof(doms));
	memset(v0, 0, sizeof(v0));
	memset(v1, 0, sizeof(v1));
	doms[0].key = 0x1234abcdull;
	snprintf(doms[0].uuid, sizeof(doms[0].uuid), "6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b");
	snprintf(doms[0].name, sizeof(doms[0].name), "web 1");        /* a space in the name */
	doms[0].nvcpus = 3;
	doms[0].vcpus = v0;
	cpuset_set_range(&v0[0], 0, 3);
	cpuset_set(&v0[2], 7);                  /* vCPU 1 never pinned */
	cpuset_set(&doms[0].emulator, 8);
	doms[1].key = 0xffffffffffffffffull;
	snprintf(doms[1].uuid, sizeof(doms[1].uuid), "-");
	snprintf(doms[1].name, sizeof(doms[1].name), "db");
	doms[1].nvcpus = 2;
	doms[1].vcpus = v1;
	cpuset_set(&v1[1], 1);
	s.n = 2;
	s.doms = doms;

	snprintf(path, sizeof(path), "%s/live.state", d);
	assert_int_equal(live_state_read(path, &r, &err), 0);   /* missing: empty */
	assert_int_equal(r.n, 0);
	assert_int_equal(live_state_write(path, &s, &err), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);                /* renamed away */
	/* no fixed temporary file shared by two writers:
	 * another writer's live.state.tmp is left alone, nothing else stays */
	write_file(tmp, "another writer's\n");
	assert_int_equal(live_state_write(path, &s, &err), 0);
	{
		char buf[64] = "";
		FILE *f = fopen(tmp, "r");
		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_string_equal(buf, "another writer's\n");
		unlink(tmp);
		DIR *dir = opendir(d);
		struct dirent *e;
		int n = 0;
		assert_non_null(dir);
		while ((e = readdir(dir)) != NULL)
			n += e->d_name[0] != '.';
		closedir(dir);
		assert_int_equal(n, 1);                         /* live.state only */
	}
	assert_int_equal(live_state_read(path, &r, &err), 0);
	assert_int_equal(r.n, 2);
	assert_true(r.doms[0].key == 0x1234abcdull);
	assert_string_equal(r.doms[0].name, "web 1");
	assert_string_equal(r.doms[0].uuid, "6f1c2e3a-9b7d-4c1e-8a2b-3c4d5e6f7a8b");
	assert_int_equal(r.doms[0].nvcpus, 3);
	assert_true(cpuset_equal(&r.doms[0].vcpus[0], &v0[0]));
	assert_true(cpuset_empty(&r.doms[0].vcpus[1]));
	assert_true(cpuset_equal(&r.doms[0].vcpus[2], &v0[2]));
	assert_true(cpuset_equal(&r.doms[0].emulator, &doms[0].emulator));
	assert_true(r.doms[1].key == 0xffffffffffffffffull);
	assert_true(cpuset_isset(&r.doms[1].vcpus[1], 1));
	assert_true(cpuset_empty(&r.doms[1].emulator));
	live_state_clear(&r);

	/* bad files: the exact message names file:line */
	expect_bad_state(path, &r, "something else\n", ":1: not an llcd state file");
	expect_bad_state(path, &r, "llcd-live-state 1\nvcpu 0 1\n", ":2: vcpu line before any domain line");
	expect_bad_state(path, &r, "llcd-live-state 1\ndomain 1f x 2 a\nvcpu 2 1\n",
	    ":3: vCPU 2 out of range (domain has 2)");
	expect_bad_state(path, &r, "llcd-live-state 1\ndomain 1f x 2 a\nvcpu 1 1-x\n", ":3: ");
	expect_bad_state(path, &r, "llcd-live-state 1\nfrobnicate\n", ":2: unknown keyword 'frobnicate'");
	assert_int_equal(r.n, 0);
	rmtree(d);
	free(d);
}

/* ---- a fake kernel for core scheduling ----------------------------------- */

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { int tid; uint64_t cookie; } fk[64];
static int fk_n, fk_calls[4];
static uint64_t fk_next;

static uint64_t *
fk_cookie(int tid)
{
	for (int i = 0; i < fk_n; i++)
		if (fk[i].tid == tid)
			return &fk[i].cookie;
	assert_true(fk_n < 64);
	fk[fk_n].tid = tid;
	fk[fk_n].cookie = 0;
	return &fk[fk_n++].cookie;
}

static int
fake_prctl(void *arg, int option, unsigned long cmd, unsigned long pid,
    unsigned long scope, unsigned long uaddr)
{
	(void)arg;
	int cur = gettid(), target = pid ? (int)pid : cur;

	assert_int_equal(option, PR_SCHED_CORE);
	pthread_mutex_lock(&fk_lock);
	fk_calls[cmd]++;
	switch (cmd) {
	case 0: *(uint64_t *)(uintptr_t)uaddr = *fk_cookie(target); break;
	case 1: *fk_cookie(target) = ++fk_next; break;
	case 2:
		if (scope == 0) {
			*fk_cookie(target) = *fk_cookie(cur);
		} else {        /* thread group: every thread of this process */
			uint64_t c = *fk_cookie(cur);
			for (int i = 0; i < fk_n; i++)
				fk[i].cookie = c;
		}
		break;
	case 3: *fk_cookie(cur) = *fk_cookie(target); break;
	}
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

/* ---- real threads named like QEMU's vCPU threads -------------------------- */

static pthread_mutex_t th_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t th_cond = PTHREAD_COND_INITIALIZER;
static int th_stop;

struct vth {
	pthread_t t;
	int tid;
	char name[16];
	volatile int ready;
};

static void *
vth_main(void *arg)
{
	struct vth *v = arg;

	prctl(PR_SET_NAME, v->name);
	v->tid = gettid();
	v->ready = 1;
	pthread_mutex_lock(&th_lock);
	while (!th_stop)
		pthread_cond_wait(&th_cond, &th_lock);
	pthread_mutex_unlock(&th_lock);
	return NULL;
}

static void
vth_start(struct vth *v, int n)
{
	snprintf(v->name, sizeof(v->name), "CPU %d/TCG", n);
	v->ready = 0;
	assert_int_equal(pthread_create(&v->t, NULL, vth_main, v), 0);
	while (!v->ready)
		usleep(1000);
}

static void
vth_stop_all(struct vth *v, int n)
{
	pthread_mutex_lock(&th_lock);
	th_stop = 1;
	pthread_cond_broadcast(&th_cond);
	pthread_mutex_unlock(&th_lock);
	for (int i = 0; i < n; i++)
		pthread_join(v[i].t, NULL);
	th_stop = 0;
}

static int
affinity_one(int tid)
{
	struct cpuset s;
	struct llcd_err err;

	assert_int_equal(procstat_affinity(tid, &s, &err), PROCSTAT_OK);
	return cpuset_count(&s) == 1 ? cpuset_first(&s) : -1;
}

static void
set_affinity(int tid, int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	assert_int_equal(sched_setaffinity(tid, sizeof(s), &s), 0);
}

static struct live *
mk_live(const struct topo *t, const char *dir, const struct coresched_ops *cso)
{
	struct live_config cfg;
	struct llcd_err err;
	struct live *l;

	live_config_none(&cfg, t, AGENT_SAMPLER_AUTO);
	cfg.state_dir = dir;
	cfg.coresched_ops = cso;
	l = live_new(&cfg, &err);
	if (l == NULL)
		fail_msg("live_new: %s", err.msg);
	return l;
}

static void
test_loop_real_threads(void **state)
{
	struct vth v[3];
	struct llcd_err err;
	struct topo *t;
	struct policy_host host;
	struct policy_annotation a;
	struct agent_loop *loop;
	struct agent_step_stats st;
	struct live_stats ls;
	struct coresched_ops cso = { .prctl = fake_prctl };
	char *dir = tmpdir();
	uint64_t key, now = 1000000000ull;
	struct live *l;
	int c0, c1;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rmtree(dir);
		free(dir);
		skip();
	}
	/* this host's CPUs 0 and 1 as two LLCs of one PU */
	t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	assert_non_null(t);
	policy_host_defaults(&host, t);
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_STATIC;
	a.isolation = POLICY_ISO_CORE;
	host.overcommit_isolated = 2;

	vth_start(&v[0], 0);
	vth_start(&v[1], 1);
	/* let them start anywhere */
	set_affinity(v[0].tid, 0);
	cpu_set_t any;
	CPU_ZERO(&any);
	CPU_SET(0, &any);
	CPU_SET(1, &any);
	sched_setaffinity(v[0].tid, sizeof(any), &any);
	sched_setaffinity(v[1].tid, sizeof(any), &any);

	l = mk_live(t, dir, &cso);
	/* 3 vCPUs, the third not started yet (a hot-plug later) */
	assert_int_equal(live_add_process(l, "self", getpid(), 3, &a, &err), 0);
	assert_int_equal(live_find(l, "self", &key), 0);
	assert_int_equal(live_find(l, "nope", &key), -1);
	loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_non_null(loop);

	/* period 1: placed; the vCPU threads are pinned where the plan says */
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	assert_true(st.actions >= 2);
	/* vCPU 2 has no thread yet: its pin is "gone" (no libvirt here) */
	assert_int_equal(st.transient + st.permanent, 0);
	assert_true(st.gone <= 1);
	const struct policy_plan *p = agent_loop_plan(loop);
	for (int i = 0; i < p->n; i++) {
		const struct policy_action *act = &p->actions[i];
		if (act->type != POLICY_ACT_PIN_VCPU || act->vcpu > 1)
			continue;
		assert_int_equal(cpuset_count(&act->cpus), 1);
		assert_int_equal(affinity_one(v[act->vcpu].tid), cpuset_first(&act->cpus));
	}
	c0 = affinity_one(v[0].tid);
	c1 = affinity_one(v[1].tid);
	assert_true(c0 >= 0 && c1 >= 0);
	/* one cookie for the process, created once */
	assert_int_equal(fk_calls[1], 1);

	/* period 2: nothing to do */
	now += 1000000000ull;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	for (int i = 0; i < agent_loop_plan(loop)->n; i++)
		assert_int_not_equal(agent_loop_plan(loop)->actions[i].type, POLICY_ACT_PIN_VCPU);

	/* describe */
	struct agent_dominfo di;
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_string_equal(agent_dom_state_name(di.state), "managed");
	assert_int_equal(di.nvcpu_info, 3);
	assert_int_equal(di.vcpus[0].tid, v[0].tid);
	agent_dominfo_clear(&di);

	/* hot-plug: vCPU 2 appears and gets the domain's cookie */
	vth_start(&v[2], 2);
	now += 1000000000ull;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	pthread_mutex_lock(&fk_lock);
	uint64_t ck0 = *fk_cookie(v[0].tid), ck2 = *fk_cookie(v[2].tid);
	pthread_mutex_unlock(&fk_lock);
	assert_true(ck0 != 0);
	assert_true(ck2 == ck0);
	assert_int_equal(fk_calls[1], 1);       /* still one CREATE */
	live_stats(l, &ls);
	assert_int_equal(ls.coresched_assigned, 1);
	assert_int_equal(ls.pins_transient + ls.pins_permanent, 0);

	/* "restart": a new back-end reads the state file and sees the pins
	 * where it left them; the engine adopts them and pins nothing */
	agent_loop_free(loop);
	live_free(l);
	c0 = affinity_one(v[0].tid);
	l = mk_live(t, dir, &cso);
	assert_int_equal(live_add_process(l, "self", getpid(), 3, &a, &err), 0);
	loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	for (int i = 0; i < agent_loop_plan(loop)->n; i++)
		assert_int_not_equal(agent_loop_plan(loop)->actions[i].type, POLICY_ACT_PIN_VCPU);
	live_stats(l, &ls);
	assert_int_equal(ls.adopted_vcpus, 3);
	assert_int_equal(fk_calls[1], 1);       /* the cookie is kept, not re-made */
	assert_int_equal(ls.coresched_assigned, 0);
	assert_int_equal(ls.moved_by_others, 0);

	/* someone else moves vCPU 0 and it runs there: the next sample shows
	 * it ran off its affinity, the period after reads it again, and the
	 * engine puts it back */
	now += 1000000000ull;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	set_affinity(v[0].tid, c0 == 0 ? 1 : 0);
	pthread_mutex_lock(&th_lock);
	pthread_cond_broadcast(&th_cond);       /* they run once, and wait again */
	pthread_mutex_unlock(&th_lock);
	usleep(20000);
	for (int k = 0; k < 2; k++) {
		now += 1000000000ull;
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	}
	live_stats(l, &ls);
	assert_int_equal(ls.moved_by_others, 1);
	assert_int_equal(affinity_one(v[0].tid), c0);
	/* moved while it sleeps: the periodic re-read notices, within its 60
	 * periods */
	set_affinity(v[0].tid, c0 == 0 ? 1 : 0);
	for (int k = 0; k < 60 && ls.moved_by_others == 1; k++) {
		now += 1000000000ull;
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
		live_stats(l, &ls);
	}
	assert_int_equal(ls.moved_by_others, 2);
	now += 1000000000ull;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	assert_int_equal(affinity_one(v[0].tid), c0);

	agent_loop_free(loop);
	live_free(l);
	vth_stop_all(v, 3);
	topo_free(t);
	rmtree(dir);
	free(dir);
}


/* The state directory is full (a 4 KiB tmpfs): the write fails, the state
 * stays dirty, the failure is counted, and once there is room again the
 * file is written without any new change. */
/* The state file is root's: not read through a symbolic link planted in
 * its place (it was, at start), and a state directory others may write is
 * refused at start with the reason. */
/* Two LLCs of one PU (this host's CPUs 0 and 1), a static annotation and
 * two vCPU threads started (v[0], v[1]). */
static struct topo *
two_threads_static(struct vth *v, struct policy_host *host, struct policy_annotation *a)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);

	assert_non_null(t);
	policy_host_defaults(host, t);
	policy_annotation_defaults(a);
	a->mode = POLICY_MODE_STATIC;
	vth_start(&v[0], 0);
	vth_start(&v[1], 1);
	return t;
}

/* The live back-end marks each domain's samples (policy_domain_in.vcpus_gen,
 * observe.c sample_domain()): idle vCPU threads keep their domain's mark
 * from one period to the next, so that the engine skips them without a
 * compare; a thread that ran gives it a new one. */
static uint64_t
obs_mark(const struct agent_loop *loop, uint64_t key)
{
	const struct agent_obs *o = agent_loop_obs(loop);

	for (int i = 0; i < o->ndomains; i++)
		if (o->domains[i].key == key)
			return o->domains[i].vcpus_gen;
	fail_msg("domain %llu not in the observation", (unsigned long long)key);
	return 0;
}

static void
test_obs_marks(void **state)
{
	struct vth v[2];
	struct llcd_err err;
	struct policy_host host;
	struct policy_annotation a;
	struct agent_step_stats st;
	struct coresched_ops cso = { .prctl = fake_prctl };
	char *dir = tmpdir();
	uint64_t key, now = 1000000000ull, m[4];

	(void)state;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rmtree(dir);
		free(dir);
		skip();
	}
	struct topo *t = two_threads_static(v, &host, &a);
	struct live *l = mk_live(t, dir, &cso);
	assert_int_equal(live_add_process(l, "self", getpid(), 2, &a, &err), 0);
	assert_int_equal(live_find(l, "self", &key), 0);
	struct agent_loop *loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_non_null(loop);
	for (int i = 0; i < 4; i++) {     /* placed and pinned, then idle */
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
		m[i] = obs_mark(loop, key);
		assert_true(m[i] != 0);
		now += 1000000000ull;
	}
	/* the first periods differ (no runtime yet, then the pins) */
	assert_true(m[0] != m[1]);
	/* idle, unmoved: the same samples, the same mark */
	assert_true(m[3] == m[2]);
	/* woken (they run to check th_stop and wait again): a runtime, a new
	 * mark; idle again, none, and then a mark that stays */
	pthread_mutex_lock(&th_lock);
	pthread_cond_broadcast(&th_cond);
	pthread_mutex_unlock(&th_lock);
	usleep(20000);
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	uint64_t w = obs_mark(loop, key);
	assert_true(w != m[3]);
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	assert_true(obs_mark(loop, key) != w);
	w = obs_mark(loop, key);
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	assert_true(obs_mark(loop, key) == w);
	agent_loop_free(loop);
	live_free(l);
	vth_stop_all(v, 2);
	topo_free(t);
	rmtree(dir);
	free(dir);
}

/* The slot of domain key in the loop's observation (fails when absent). */
static const struct policy_domain_in *
obs_slot_of(const struct agent_loop *loop, uint64_t key, int *slot)
{
	const struct agent_obs *o = agent_loop_obs(loop);

	for (int i = 0; i < o->ndomains; i++)
		if (o->domains[i].key == key) {
			*slot = i;
			return &o->domains[i];
		}
	fail_msg("domain %llu not in the observation", (unsigned long long)key);
	return NULL;
}

/* The annotation's and reports' marks (annot_gen, reports_gen, observe.c):
 * they stay while nothing changes; a new annotation gives a new mark with
 * the new annotation in the slot; a domain whose slot moves (the one
 * before it removed) gets new marks and its own annotation in its new
 * slot. Two ext domains of this process (one vCPU thread each), mode
 * none: nothing is pinned. */
static void
test_obs_annot_marks(void **state)
{
	static const char none_xml[] =
	    "<llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"none\" isolation=\"core\"/>";
	struct vth v[2];
	struct llcd_err err;
	struct policy_host host;
	struct policy_annotation a;
	struct agent_step_stats st;
	struct coresched_ops cso = { .prctl = fake_prctl };
	char *dir = tmpdir();
	uint64_t ka, kb, now = 1000000000ull, am[4], rm[4];
	int slot;

	(void)state;
	struct topo *t = two_threads_static(v, &host, &a);
	struct live *l = mk_live(t, dir, &cso);
	struct live_ext_domain x = { .name = "a", .uuid = "6e1b8f4c-2b1a-4c55-9e10-3f1c6b2a0001",
	                             .pid = getpid(), .nvcpus = 1, .maxvcpus = 1, .tids = &v[0].tid,
	                             .guest = { 1, 1, 1, 1, 1 } };
	assert_int_equal(live_ext_add(l, &x, &ka, &err), 0);
	x.name = "b";
	x.uuid = "6e1b8f4c-2b1a-4c55-9e10-3f1c6b2a0002";
	x.tids = &v[1].tid;
	assert_int_equal(live_ext_add(l, &x, &kb, &err), 0);
	live_ext_annotation(l, ka, none_xml, sizeof(none_xml) - 1, "a.xml");
	live_ext_annotation(l, kb, none_xml, sizeof(none_xml) - 1, "b.xml");
	struct agent_loop *loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_non_null(loop);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
		now += 1000000000ull;
		const struct policy_domain_in *in = obs_slot_of(loop, kb, &slot);
		assert_int_equal(slot, 1);
		assert_true(in->annotated && in->annot.isolation == POLICY_ISO_CORE);
		am[i] = in->annot_gen;
		rm[i] = in->reports_gen;
		assert_true(am[i] != 0 && rm[i] != 0);
	}
	assert_true(am[3] == am[1] && am[2] == am[1]);  /* nothing changed */
	assert_true(rm[3] == rm[1] && rm[2] == rm[1]);
	/* a new annotation: a new mark, and the slot holds it */
	live_ext_annotation(l, kb, NULL, 0, "b.xml");
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	const struct policy_domain_in *in = obs_slot_of(loop, kb, &slot);
	assert_int_equal(slot, 1);
	assert_false(in->annotated);
	assert_true(in->annot_gen != am[3]);
	assert_true(in->reports_gen == rm[3]);  /* (no reports, as before) */
	uint64_t m = in->annot_gen;
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	assert_true(obs_slot_of(loop, kb, &slot)->annot_gen == m);
	/* a's removal moves b to slot 0, which held a's: new marks, b's
	 * annotation (none) there */
	live_ext_remove(l, ka, "test");
	assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	now += 1000000000ull;
	in = obs_slot_of(loop, kb, &slot);
	assert_int_equal(slot, 0);
	assert_false(in->annotated);
	assert_true(in->annot_gen != m && in->reports_gen != rm[3]);
	agent_loop_free(loop);
	live_free(l);
	vth_stop_all(v, 2);
	topo_free(t);
	rmtree(dir);
	free(dir);
}

static void
test_state_hostile(void **state)
{
	struct llcd_err err;
	struct live_state r;
	char *d = tmpdir(), path[512], victim[512], want[700];
	struct live_config cfg;

	snprintf(victim, sizeof(victim), "%s/elsewhere", d);
	write_file(victim, "llcd-live-state 1\ndomain 1 - 1 planted\nvcpu 0 0\n");
	snprintf(path, sizeof(path), "%s/live.state", d);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(live_state_read(path, &r, &err), -1);
	snprintf(want, sizeof(want), "%s: live.state is a symbolic link: not followed", d);
	assert_string_equal(err.msg, want);
	/* written: the link replaced, its target untouched */
	struct live_state_dom dom = { .key = 7, .nvcpus = 1 };
	struct cpuset v0;
	cpuset_zero(&v0);
	cpuset_set(&v0, 1);
	dom.vcpus = &v0;
	snprintf(dom.name, sizeof(dom.name), "web");
	struct live_state s = { .n = 1, .doms = &dom };
	assert_int_equal(live_state_write(path, &s, &err), 0);
	assert_int_equal(live_state_read(victim, &r, &err), 0);
	assert_string_equal(r.doms[0].name, "planted");
	live_state_clear(&r);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* a state directory others may write */
	struct topo *t = topo_load("pack:1 l3:1 core:1 pu:1", &err);
	assert_int_equal(chmod(d, 0777), 0);
	live_config_none(&cfg, t, AGENT_SAMPLER_PROC);
	cfg.state_dir = d;
	assert_null(live_new(&cfg, &err));
	snprintf(want, sizeof(want), "state-dir: directory %s is writable by others (mode 0777, owner uid 0, group 0): "
	    "llcd, as root, does not use files in it (chmod go-w)", d);
	assert_string_equal(err.msg, want);
	assert_int_equal(live_state_write(path, &s, &err), -1);
	topo_free(t);
	rmtree(d);
	free(d);
}

static void
test_state_write_disk_full(void **state)
{
	struct vth v[2];
	struct llcd_err err;
	struct policy_host host;
	struct policy_annotation a;
	struct agent_step_stats st;
	struct live_stats ls;
	char *dir = tmpdir(), fill[512], sf[512];
	uint64_t now = 1000000000ull;

	if (getuid() != 0)
		fail_msg("this test needs root to mount a small tmpfs (run the suite as root)");
	assert_int_equal(mount("tmpfs", dir, "tmpfs", 0, "size=4k,mode=0755"), 0);
	snprintf(fill, sizeof(fill), "%s/fill", dir);
	snprintf(sf, sizeof(sf), "%s/live.state", dir);
	FILE *f = fopen(fill, "w");
	assert_non_null(f);
	char block[1024] = { 0 };
	while (fwrite(block, 1, sizeof(block), f) == sizeof(block) && fflush(f) == 0)
		;
	fclose(f);
	struct topo *t = two_threads_static(v, &host, &a);
	struct live *l = mk_live(t, dir, NULL);
	assert_int_equal(live_add_process(l, "full", getpid(), 2, &a, &err), 0);
	struct agent_loop *loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_non_null(loop);
	for (int k = 0; k < 3; k++, now += 1000000000ull)
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	live_stats(l, &ls);
	assert_true(ls.pins_ok >= 2);
	assert_true(ls.state_write_errors >= 1);
	struct llcd_stats sts;
	memset(&sts, 0, sizeof(sts));
	live_query.stats(l, &sts);                                              /* llcctl stats */
	assert_true(sts.blocks & STATS_STATE);
	assert_int_equal(sts.v.state_write_errors, ls.state_write_errors);
	struct stat sb;
	assert_true(stat(sf, &sb) < 0 || sb.st_size == 0);
	/* room again: written within the retry interval, with no new change */
	assert_int_equal(unlink(fill), 0);
	uint64_t errs = ls.state_write_errors;
	for (int k = 0; k < 7; k++, now += 1000000000ull)
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
	assert_int_equal(stat(sf, &sb), 0);
	assert_true(sb.st_size > 0);
	live_stats(l, &ls);
	assert_int_equal(ls.state_write_errors, errs);
	agent_loop_free(loop);
	live_free(l);
	vth_stop_all(v, 2);
	topo_free(t);
	umount(dir);
	rmtree(dir);
	free(dir);
}

/* libvirt unreachable: every pin fails as transient; after 3 periods in a
 * row the domain backs off for 2, then 4 periods (no call at all), and the
 * emulator pin the engine sends once is retried by the back-end */
static void
test_transient_backoff(void **state)
{
	struct vth v[2];
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	struct policy_host host;
	struct policy_annotation a;
	struct agent_step_stats st;
	struct live_config cfg;
	struct live_stats ls;
	struct agent_loop *loop;
	struct live *l;
	uint64_t now = 1000000000ull, before = 0;
	char attempts[32] = "";

	assert_non_null(t);
	vth_start(&v[0], 0);
	vth_start(&v[1], 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.uri = "qemu+unix:///system?socket=/nonexistent/llcd-test.sock";
	cfg.topo = t;
	cfg.state_dir = "";
	l = live_new(&cfg, &err);
	assert_non_null(l);
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_STATIC;
	assert_int_equal(live_add_process(l, "offline", getpid(), 2, &a, &err), 0);
	policy_host_defaults(&host, t);
	loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err);
	assert_non_null(loop);
	for (int p = 1; p <= 12; p++) {
		assert_int_equal(agent_loop_step(loop, now, &st, &err), 0);
		now += 1000000000ull;
		assert_int_equal(st.ok + st.gone + st.permanent, 0);
		live_stats(l, &ls);
		if (ls.pins_transient > before)
			snprintf(attempts + strlen(attempts), sizeof(attempts) - strlen(attempts), "%d,", p);
		before = ls.pins_transient;
	}
	/* libvirt was called in periods 1, 2, 3, then 6 (after 2 periods
	 * off), then 11 (after 4) */
	assert_string_equal(attempts, "1,2,3,6,11,");
	live_stats(l, &ls);
	assert_true(ls.backoff_skips > 0);
	agent_loop_free(loop);
	live_free(l);
	vth_stop_all(v, 2);
	topo_free(t);
}

static void
test_invalid_without_libvirt(void **state)
{
	struct llcd_err err;
	struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	struct live *l;

	assert_non_null(t);
	l = mk_live(t, "", NULL);
	assert_int_equal(live_add_process(l, "x", getpid(), 0, NULL, &err), -1);
	assert_string_equal(err.msg, "live_add_process: bad vCPU count 0");
	assert_int_equal(live_add_process(l, "x", getpid(), 1, NULL, &err), 0);
	assert_int_equal(live_add_process(l, "x", getpid(), 1, NULL, &err), -1);
	uint64_t key;
	assert_int_equal(live_find(l, "x", &key), 0);
	assert_int_equal(live_set_annotation(l, key, "<llc-policy/>", true, false, &err), -1);
	assert_string_equal(err.msg, "domain x: no libvirt connection in this back-end");
	struct agent_dominfo di;
	assert_int_equal(live_describe(l, key, &di), 0);
	assert_string_equal(agent_dom_state_name(di.state), "unmanaged");
	agent_dominfo_clear(&di);
	assert_int_equal(live_describe(l, key + 1, &di), -1);
	assert_int_equal(live_event_fd(l), -1);
	live_free(l);
	topo_free(t);
}

/* A host of two 1-PU LLCs (*t), an observation (*obs), two vCPU threads
 * on CPUs 0 and 1, and a /proc-sampled back-end over no hypervisor
 * (resctrl tree resctrl_root) with this process added as the aggregate
 * domain name of 2 vCPUs. */
static struct live *
two_vcpu_live(struct vth v[2], struct topo **t, struct agent_obs **obs,
              const char *resctrl_root, const char *name)
{
	struct live_config cfg;
	struct policy_annotation a;
	struct llcd_err err;
	struct live *l;

	*t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	*obs = agent_obs_new();
	assert_non_null(*t);
	assert_non_null(*obs);
	vth_start(&v[0], 0);
	vth_start(&v[1], 1);
	live_config_none(&cfg, *t, AGENT_SAMPLER_PROC);
	cfg.resctrl_root = resctrl_root;
	l = live_new(&cfg, &err);
	if (l == NULL)
		fail_msg("live_new: %s", err.msg);
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_AGGREGATE;
	assert_int_equal(live_add_process(l, name, getpid(), 2, &a, &err), 0);
	return l;
}

/* One period of the two-vCPU domain: agent_obs_begin, then observe at now. */
static void
observe_at(struct live *l, struct agent_obs *obs, uint64_t now)
{
	struct llcd_err err;

	assert_int_equal(agent_obs_begin(obs, 2, &err), 0);
	assert_int_equal(live_agent_ops.observe(l, now, obs, &err), 0);
}

/* The test playing the kernel: text in the file rel of the resctrl fixture
 * tree's group llcd-web_1. */
static void
group_file(const char *root, const char *rel, const char *text)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/mon_groups/llcd-web_1/%s", root, rel);
	write_file(p, text);
}

/* Bandwidth monitoring against a resctrl FIXTURE TREE (a fake seam: this
 * machine has no resctrl; live_config.resctrl_root points at /tmp, and the
 * test plays the kernel: it makes the group's tasks file and counters after
 * llcd's mkdir). A managed domain gets a group named after it, its vCPU
 * TIDs in tasks, and the growth of mbm_total_bytes as mbm_bytes; the group
 * goes when the back-end does. */
static void
test_mbm_fixture(void **state)
{
	char *root = tmpdir(), p[512];
	struct stat st;
	struct agent_obs *obs;
	struct topo *t;
	struct vth v[2];
	struct live *l;

	snprintf(p, sizeof(p), "mkdir -p '%s/info/L3_MON' '%s/mon_groups'", root, root);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/info/L3_MON/mon_features", root);
	write_file(p, "llc_occupancy\nmbm_total_bytes\n");
	l = two_vcpu_live(v, &t, &obs, root, "web 1");

	/* period 1: the group is made; its tasks file is not there yet */
	observe_at(l, obs, 1000000000ull);
	assert_int_equal(obs->ndomains, 1);
	assert_false(obs->domains[0].mbm_valid);
	snprintf(p, sizeof(p), "%s/mon_groups/llcd-web_1", root);
	assert_int_equal(stat(p, &st), 0);
	/* the kernel's part of the mkdir */
	snprintf(p, sizeof(p), "mkdir -p '%s/mon_groups/llcd-web_1/mon_data/mon_L3_00' "
	    "'%s/mon_groups/llcd-web_1/mon_data/mon_L3_01'", root, root);
	assert_int_equal(system(p), 0);
	group_file(root, "tasks", "");
	group_file(root, "mon_data/mon_L3_00/mbm_total_bytes", "1000\n");
	group_file(root, "mon_data/mon_L3_01/mbm_total_bytes", "Unavailable\n");

	/* period 2: the TIDs written; the first reading is the reference */
	observe_at(l, obs, 2000000000ull);
	assert_false(obs->domains[0].mbm_valid);
	snprintf(p, sizeof(p), "%s/mon_groups/llcd-web_1/tasks", root);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	char buf[128] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want), "%d\n%d\n", v[0].tid, v[1].tid);
	assert_string_equal(buf, want);

	/* period 3: 4000 bytes more */
	group_file(root, "mon_data/mon_L3_00/mbm_total_bytes", "5000\n");
	observe_at(l, obs, 3000000000ull);
	assert_true(obs->domains[0].mbm_valid);
	assert_int_equal(obs->domains[0].mbm_bytes, 4000);
	/* an L3 domain that starts counting is not a jump in bandwidth */
	group_file(root, "mon_data/mon_L3_01/mbm_total_bytes", "900000\n");
	observe_at(l, obs, 4000000000ull);
	assert_false(obs->domains[0].mbm_valid);

	/* the group goes with the back-end (rmdir: the fixture's files are
	 * not the kernel's, so empty it first as the kernel would) */
	snprintf(p, sizeof(p), "rm -rf '%s/mon_groups/llcd-web_1/'*", root);
	assert_int_equal(system(p), 0);
	live_free(l);
	snprintf(p, sizeof(p), "%s/mon_groups/llcd-web_1", root);
	assert_int_equal(stat(p, &st), -1);
	vth_stop_all(v, 2);
	agent_obs_free(obs);
	rmtree(root);
	free(root);
	topo_free(t);
}

/* The NUMA node of a domain's memory (numa.c): the real
 * reader on this process's largest anonymous region (node 0 on this
 * one-node host), read again only every 10 s of loop time, less often
 * while the answer stays the same. */
static void
test_numa_node_low_rate(void **state)
{
	size_t big = 96u << 20;
	char *ram = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct agent_obs *obs;
	struct topo *t;
	struct vth v[2];

	assert_true(ram != MAP_FAILED);
	memset(ram, 1, big);                    /* resident: the "guest RAM" */
	struct live *l = two_vcpu_live(v, &t, &obs, "", "db");
	observe_at(l, obs, 1000000000ull);
	assert_int_equal(obs->domains[0].nvcpus, 2);
	assert_true(obs->domains[0].mem_node_valid);
	assert_int_equal(obs->domains[0].mem_node, 0);
	struct agent_dominfo di;
	assert_int_equal(live_query.describe(l, obs->domains[0].key, &di), 0);
	const struct agent_fact *node = agent_facts_find(&di.facts, "memory", "node");      /* llcctl dominfo's memory_node */
	const struct agent_fact *sampled = agent_facts_find(&di.facts, "memory", "sampled_pages");
	const struct agent_fact *resident = agent_facts_find(&di.facts, "memory", "resident_pages");
	assert_non_null(node);
	assert_int_equal(node->type, AGENT_FACT_INT);
	assert_int_equal(node->i, 0);
	assert_non_null(sampled);
	assert_int_equal(sampled->i, MEMNODE_DEFAULT_PAGES);
	assert_true(resident != NULL && resident->i > 0 && resident->i <= sampled->i);
	assert_null(agent_facts_find(&di.facts, "memory", "error"));
	agent_dominfo_clear(&di);
	/* a much larger untouched region now (shared: not merged with the
	 * other; over 4x its size, and 4x a sanitizer's 256 MiB low shadow:
	 * those are no longer taken for guest RAM): the next read finds
	 * nothing resident, but it is 10 s away */
	char *cold = mmap(NULL, 16 * big, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(cold != MAP_FAILED);
	observe_at(l, obs, 10900000000ull);
	assert_true(obs->domains[0].mem_node_valid);    /* not read again */
	assert_int_equal(obs->domains[0].mem_node, 0);
	observe_at(l, obs, 11000000000ull);
	assert_false(obs->domains[0].mem_node_valid);   /* read: nothing resident */
	/* the answer changed: the next read 10 s later (node 0 again with
	 * the cold region gone); the same answer again at 31 s makes the
	 * next one 20 s away, not 10 */
	munmap(cold, 16 * big);
	observe_at(l, obs, 20900000000ull);
	assert_false(obs->domains[0].mem_node_valid);
	observe_at(l, obs, 21000000000ull);
	assert_true(obs->domains[0].mem_node_valid);
	struct ldom *d = l->doms[0];
	unsigned confirms = d->mem.confirms;
	observe_at(l, obs, 31000000000ull);
	assert_true(obs->domains[0].mem_node_valid);    /* the same: 20 s to the next */
	/* confirmed on the small sample: the figures shown stay the full read's */
	assert_int_equal(d->mem.confirms, confirms + 1);
	assert_int_equal(d->mem.sampled, MEMNODE_DEFAULT_PAGES);
	assert_int_equal(live_query.describe(l, obs->domains[0].key, &di), 0);
	sampled = agent_facts_find(&di.facts, "memory", "sampled_pages");
	assert_true(sampled != NULL && sampled->i == MEMNODE_DEFAULT_PAGES);
	agent_dominfo_clear(&di);
	cold = mmap(NULL, 16 * big, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(cold != MAP_FAILED);
	observe_at(l, obs, 45000000000ull);
	assert_true(obs->domains[0].mem_node_valid);    /* not read at 41 s */
	observe_at(l, obs, 51000000000ull);
	assert_false(obs->domains[0].mem_node_valid);   /* read at 51 s */
	/* the small sample said otherwise: the full one decided */
	assert_int_equal(d->mem.confirms, confirms + 1);
	munmap(cold, 16 * big);
	munmap(ram, big);
	live_free(l);
	vth_stop_all(v, 2);
	agent_obs_free(obs);
	topo_free(t);
}

/* A child process with two vCPU-named threads (a cgroup move takes the
 * child, not this process); its pid once both threads run. */
static pid_t
vcpu_child(void)
{
	int p[2];
	char c;

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct vth v[2];
		prctl(PR_SET_PDEATHSIG, SIGKILL);       /* a failed check leaves no child */
		vth_start(&v[0], 0);
		vth_start(&v[1], 1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void
cg_write(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	write_file(path, text);
}

static void
assert_bound(const struct policy_domain_in *in, const char *want)
{
	char got[64] = "";

	/* (no bound: NULL, never an empty set, agent_obs_bound()) */
	if (in->bound != NULL) {
		assert_false(cpuset_empty(in->bound));
		cpuset_format(in->bound, got, sizeof(got));
	}
	assert_string_equal(got, want);
}

/* The periodic bound read (every 10 periods here) reads the cgroup's CPU
 * set every time and takes the cgroup's path from /proc/PID/cgroup once in
 * LIVE_BOUND_PATH_REUSE reads: a cpuset change is seen at the next read,
 * a move to another cgroup within LIVE_BOUND_PATH_REUSE reads, at the next
 * periodic read after a check before a pin (live_bound_check, which reads
 * the path itself), or at the next observe after live_bound_soon (a thread
 * moved by someone else).
 * Real cgroup v1 cpusets (this machine's hierarchy), a child process moved
 * between two of them. */
static void
test_bound_path_reuse(void **state)
{
	struct cgbound_mounts m;
	struct llcd_err err;
	char base[PATH_MAX + 64], a[PATH_MAX + 72], b[PATH_MAX + 72], mems[64] = "0", pidbuf[32];

	(void)state;
	assert_int_equal(cgbound_mounts_read(NULL, &m, &err), 0);
	if (!m.v1[0] || (m.v2[0] && m.v2_cpuset) || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		print_message("no cgroup v1 cpuset hierarchy or one CPU here: the bound's path reuse is not tested\n");
		skip();
	}
	snprintf(base, sizeof(base), "%s/llcd-test-bound-%d", m.v1, (int)getpid());
	snprintf(a, sizeof(a), "%s/a", base);
	snprintf(b, sizeof(b), "%s/b", base);
	test_v1_first_mem(m.v1, mems, sizeof(mems));
	assert_int_equal(mkdir(base, 0755), 0);
	cg_write(base, "cpuset.mems", mems);
	cg_write(base, "cpuset.cpus", "0-1");
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	cg_write(a, "cpuset.mems", mems);
	cg_write(a, "cpuset.cpus", "0");
	cg_write(b, "cpuset.mems", mems);
	cg_write(b, "cpuset.cpus", "1");

	pid_t child = vcpu_child();
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)child);
	cg_write(a, "cgroup.procs", pidbuf);

	struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	struct agent_obs *obs = agent_obs_new();
	struct live_config cfg;
	struct policy_annotation an;
	assert_non_null(t);
	assert_non_null(obs);
	live_config_none(&cfg, t, AGENT_SAMPLER_PROC);
	struct live *l = live_new(&cfg, &err);
	if (l == NULL)
		fail_msg("live_new: %s", err.msg);
	policy_annotation_defaults(&an);
	an.mode = POLICY_MODE_AGGREGATE;
	assert_int_equal(live_add_process(l, "pod", child, 2, &an, &err), 0);
	uint64_t now = 1000000000ull;
	int period = 0;
#define STEP() (observe_at(l, obs, now += 1000000000ull), period++)
	STEP();                                 /* period 1: read */
	assert_bound(&obs->domains[0], "0");
	/* kubelet's reconcile: the cgroup's set, read at the next read */
	cg_write(a, "cpuset.cpus", "1");
	while (period < 10)
		STEP();
	assert_bound(&obs->domains[0], "0");    /* not due yet */
	STEP();                                 /* period 11 */
	assert_bound(&obs->domains[0], "1");
	/* moved to another cgroup: the path read again within
	 * LIVE_BOUND_PATH_REUSE reads (periods 21 ... 51 take a's path) */
	cg_write(b, "cpuset.cpus", "0");
	cg_write(b, "cgroup.procs", pidbuf);
	while (period < 1 + 10 * (LIVE_BOUND_PATH_REUSE - 1))
		STEP();
	assert_bound(&obs->domains[0], "1");
	while (period < 1 + 10 * LIVE_BOUND_PATH_REUSE)
		STEP();
	assert_bound(&obs->domains[0], "0");
	/* moved back, and a pin checked (a full read: a's set): the next
	 * periodic read takes the path again, not b's kept one */
	cg_write(a, "cgroup.procs", pidbuf);
	struct cpuset one;
	assert_int_equal(cpuset_parse(&one, "1", &err), 0);
	assert_int_equal(live_bound_check(l, l->doms[0], &one, &err), AGENT_OK);
	int checked = period;
	while (period < checked + 10)
		STEP();
	assert_bound(&obs->domains[0], "1");
	/* moved again, a thread seen moved by someone else: the next observe */
	cg_write(b, "cgroup.procs", pidbuf);
	STEP();
	assert_bound(&obs->domains[0], "1");
	live_bound_soon(l->doms[0]);
	STEP();
	assert_bound(&obs->domains[0], "0");
#undef STEP
	live_free(l);
	agent_obs_free(obs);
	topo_free(t);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(rmdir(a), 0);
	assert_int_equal(rmdir(b), 0);
	assert_int_equal(rmdir(base), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_cas),
		cmocka_unit_test(test_state_roundtrip),
		cmocka_unit_test(test_loop_real_threads),
		cmocka_unit_test(test_obs_marks),
	cmocka_unit_test(test_obs_annot_marks),
		cmocka_unit_test(test_state_write_disk_full),
		cmocka_unit_test(test_state_hostile),
		cmocka_unit_test(test_transient_backoff),
		cmocka_unit_test(test_invalid_without_libvirt),
		cmocka_unit_test(test_mbm_fixture),
		cmocka_unit_test(test_numa_node_low_rate),
		cmocka_unit_test(test_bound_path_reuse),
	};
	log_init(true, getenv("TEST_LIVE_DEBUG") ? 2 : 0);
	if (getenv("TEST_LIVE_VERBOSE") == NULL)
		log_set_sink(log_discard, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
