// SPDX-License-Identifier: GPL-2.0-or-later
/* test_live_tracer.c - the live back-end sampling through the in-kernel
 * tracer (sampler auto|bpf|proc): real threads of this process named like
 * QEMU's vCPU threads, the real BPF programs, observe() as the agent loop
 * calls it. Root; fails, never skips, where the tracer cannot load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "clock.h"
#include "live.h"
#include "live_int.h"
#include "log.h"
#include "backend.h"
#include "topo_hwloc.h"

/* vCPU threads: 0 burns, 1 and 3 ping-pong through pipes, 2 sleeps */
struct vth {
	pthread_t t;
	atomic_int tid;
	int n;
	int in[2];
};
static struct vth V[4];
static atomic_int stop;

static void *
vth_main(void *arg)
{
	struct vth *v = arg;
	char name[16], c = 'x';

	snprintf(name, sizeof(name), "CPU %d/TCG", v->n);
	prctl(PR_SET_NAME, name);
	atomic_store(&v->tid, gettid());
	while (!atomic_load(&stop)) {
		if (v->n == 0) {
			volatile uint64_t x = 0;
			for (int i = 0; i < 100000; i++)
				x++;
		} else if (v->n == 1) {
			if (write(V[3].in[1], &c, 1) != 1 || read(v->in[0], &c, 1) != 1)
				break;
		} else if (v->n == 3) {
			if (read(v->in[0], &c, 1) != 1 || write(V[1].in[1], &c, 1) != 1)
				break;
		} else {
			usleep(10000);
		}
	}
	return NULL;
}

static void
start_threads(void)
{
	atomic_store(&stop, 0);
	for (int i = 0; i < 4; i++) {
		V[i].n = i;
		atomic_store(&V[i].tid, 0);
		assert_int_equal(pipe(V[i].in), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&V[i].t, NULL, vth_main, &V[i]), 0);
	for (int i = 0; i < 4; i++)
		while (atomic_load(&V[i].tid) == 0)
			usleep(1000);
}

static void
stop_threads(void)
{
	char c = 'q';

	atomic_store(&stop, 1);
	/* unblock the ping-pong */
	if (write(V[3].in[1], &c, 1) != 1 || write(V[1].in[1], &c, 1) != 1)
		fail();
	for (int i = 0; i < 4; i++) {
		pthread_join(V[i].t, NULL);
		close(V[i].in[0]);
		close(V[i].in[1]);
	}
}

static int
nfds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static struct live *
mk_live(const struct topo *t, int sampler, struct llcd_err *err)
{
	struct live_config cfg;

	live_config_none(&cfg, t, sampler);
	cfg.dry_run = true;
	return live_new(&cfg, err);
}

static const char *
host_str(struct live *l, const char *key)
{
	static char buf[512];
	struct agent_hostinfo hi;

	memset(&hi, 0, sizeof(hi));
	live_describe_host(l, &hi);
	const struct agent_fact *f = agent_facts_find(&hi.facts, NULL, key);
	snprintf(buf, sizeof(buf), "%s", f && f->type == AGENT_FACT_STR ? f->s : "");
	agent_facts_free(&hi.facts);
	return buf;
}

/* Two observe()s 500 ms apart; the second's domain slot. */
static struct agent_obs *
observe_twice(struct live *l)
{
	struct agent_obs *obs = agent_obs_new();
	struct llcd_err err;
	uint64_t now = llcd_mono_ns();

	assert_non_null(obs);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(agent_obs_begin(obs, 2, &err), 0);
		assert_int_equal(live_agent_ops.observe(l, now, obs, &err), 0);
		if (k == 0) {
			usleep(500000);
			now = llcd_mono_ns();
		}
	}
	assert_int_equal(obs->ndomains, 1);
	return obs;
}

static void
test_bpf_sampling(void **state)
{
	struct llcd_err err = { "" };
	struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
	struct policy_annotation a;
	struct live *l;
	struct agent_obs *obs;

	assert_non_null(t);
	start_threads();
	l = mk_live(t, AGENT_SAMPLER_BPF, &err);
	if (l == NULL)
		fail_msg("sampler bpf: live_new: %s", err.msg);
	assert_string_equal(host_str(l, "sampler"), "bpf");
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_AGGREGATE;
	int fd0 = nfds();
	assert_int_equal(live_add_process(l, "self", getpid(), 4, &a, &err), 0);
	obs = observe_twice(l);
	/* no /proc descriptors per traced thread: QEMU's main thread's two
	 * and /proc/stat */
	assert_true(nfds() - fd0 <= 3);
	const struct policy_domain_in *in = &obs->domains[0];
	const struct policy_vcpu_sample *s = obs->vcpus[0];
	/* the burner is always runnable: it ran or waited for a CPU the whole
	 * 500 ms (how much of each depends on the shared machine) */
	print_message("runtime %llu %llu %llu %llu ns, run delay %llu ns, last CPU %d\n",
	    (unsigned long long)s[0].runtime_ns, (unsigned long long)s[1].runtime_ns,
	    (unsigned long long)s[2].runtime_ns, (unsigned long long)s[3].runtime_ns,
	    (unsigned long long)s[0].run_delay_ns, s[0].last_cpu);
	assert_true(s[0].runtime_ns + s[0].run_delay_ns > 350000000ull);
	assert_true(s[0].runtime_ns > 5000000ull);
	assert_true(s[2].runtime_ns < 5000000ull);     /* sleeps */
	assert_true(s[0].last_cpu == 0 || s[0].last_cpu == 1);
	for (int v = 0; v < 4; v++)
		assert_int_equal(s[v].tid, atomic_load(&V[v].tid));
	/* the edges of the period: 1 <-> 3 and nothing else */
	assert_non_null(in->wakeups);
	const struct policy_wakeups *w = in->wakeups;
	uint64_t c13 = 0, c31 = 0, other = 0;
	for (int i = 0; i < w->nedges; i++) {
		const struct policy_wakeup_edge *e = &w->edges[i];
		if (e->waker == 1 && e->wakee == 3)
			c13 += e->count;
		else if (e->waker == 3 && e->wakee == 1)
			c31 += e->count;
		else
			other += e->count;
	}
	print_message("edges over %llu ms: 1->3 %llu, 3->1 %llu, others %llu, dropped %llu\n",
	    (unsigned long long)(w->period_ns / 1000000), (unsigned long long)c13, (unsigned long long)c31,
	    (unsigned long long)other, (unsigned long long)w->dropped);
	assert_true(w->period_ns >= 400000000ull);
	assert_true(c13 > 100 && c31 > 100);
	assert_int_equal(other, 0);
	assert_int_equal(w->dropped, 0);
	agent_obs_free(obs);
	live_free(l);

	/* sampler proc: the same figures from /proc, no edges */
	l = mk_live(t, AGENT_SAMPLER_PROC, &err);
	assert_non_null(l);
	assert_string_equal(host_str(l, "sampler"), "proc");
	assert_string_equal(host_str(l, "sampler_reason"), "sampler proc in llcd.conf");
	fd0 = nfds();
	assert_int_equal(live_add_process(l, "self", getpid(), 4, &a, &err), 0);
	obs = observe_twice(l);
	assert_true(nfds() - fd0 >= 8);         /* schedstat + stat per thread */
	assert_null(obs->domains[0].wakeups);
	assert_true(obs->vcpus[0][0].runtime_ns + obs->vcpus[0][0].run_delay_ns > 350000000ull);
	agent_obs_free(obs);
	live_free(l);
	stop_threads();
	topo_free(t);
}

/* Without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (dropped in a child):
 * sampler bpf refuses to start, auto falls back to /proc and says why. */
static void
test_fallback(void **state)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
		struct __user_cap_data_struct d[2];
		struct llcd_err err = { "" };
		struct topo *t = topo_load("pack:1 l3:2 core:1 pu:1", &err);
		struct live *l;
		if (syscall(SYS_capget, &h, d) != 0)
			_exit(10);
		d[0].effective &= ~(1u << CAP_SYS_ADMIN);
		d[1].effective &= ~((1u << (38 - 32)) | (1u << (39 - 32)));     /* CAP_PERFMON, CAP_BPF */
		if (syscall(SYS_capset, &h, d) != 0)
			_exit(11);
		if ((l = mk_live(t, AGENT_SAMPLER_BPF, &err)) != NULL)
			_exit(12);
		if (strcmp(err.msg, "sampler bpf: llcd lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)") != 0) {
			fprintf(stderr, "unexpected: %s\n", err.msg);
			_exit(13);
		}
		if ((l = mk_live(t, AGENT_SAMPLER_AUTO, &err)) == NULL)
			_exit(14);
		if (strcmp(host_str(l, "sampler"), "proc") != 0)
			_exit(15);
		if (strcmp(host_str(l, "sampler_reason"), "llcd lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)") != 0)
			_exit(16);
		live_free(l);
		topo_free(t);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bpf_sampling),
		cmocka_unit_test(test_fallback),
	};

	log_init(true, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
