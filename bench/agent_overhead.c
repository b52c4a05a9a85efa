// SPDX-License-Identifier: GPL-2.0-or-later
/* agent_overhead.c - what llcd's sampling and policy cost per period, per
 * vCPU thread, next to a bare loop that only reads the same /proc files.
 *
 * For each thread count N it starts stand-in processes (N / --per-proc of
 * them) whose threads are named like QEMU's vCPU threads ("CPU n/KVM") and
 * sleep, like idle guests' vCPUs. Then, in this process:
 *
 *   baseline  opens /proc/<pid>/task/<tid>/{schedstat,stat} of every thread
 *             once and preads both per thread per period, plus /proc/stat:
 *             the least any sampler of these files can do
 *   llcd      the agent loop with the live back-end (live.h) on those
 *             processes (no libvirt: live_add_process, --dry-run pins, so
 *             that the steady state is reached without moving anything),
 *             each process an annotated aggregate domain, on a synthetic
 *             2-socket host (pack:2 [numa] l3:8 core:8 pu:2, 256 PUs) with
 *             the overcommit that fits every vCPU: observe (the same preads,
 *             plus the back-end's bookkeeping and the periodic affinity
 *             re-read) + policy_step + apply
 *
 * and prints CPU time (CLOCK_PROCESS_CPUTIME_ID) per thread per period in
 * microseconds: the baseline (the /proc floor), llcd's whole loop and each
 * of its parts (observe, policy, apply: the loop's own thread-CPU times,
 * agent_step_stats), and the ratio llcd / baseline. With
 * --numad it also runs Debian's numad on the same processes (numad -i 1:1
 * -H 0, log and pid file under a /tmp directory bind-mounted over
 * /var/log and /var/run in a private mount namespace, since numad 0.5 has
 * neither a foreground switch nor a log-file option) for --numad-s seconds
 * and prints its CPU time per scan (utime + stime of /proc/<pid>/stat,
 * scans counted in its log).
 *
 * With --sampler bpf the same run adds the in-kernel tracer
 * (agent/drivers/tracer.h): every stand-in thread registered as a vCPU, then
 * per period what a sampler on the tracer does (read every thread's
 * figures through the mapping, drain the wakeup edges), timed like the
 * baseline, plus the programs' own run time (kernel.bpf_stats_enabled,
 * run_time_ns of each program) over --bpf-s seconds of real time while the
 * stand-in threads wake --wake-hz times a second (idle guests' vCPUs wake
 * on their timer ticks), and `whole`: llcd's loop plus the programs. In
 * the same seconds an empty program on the wakeup program's tracepoint
 * (bench/floor.bpf.c) is timed too: what bpf_stats' own timing adds to
 * each run (floor_ns/run), so that the wakeup program's own cost
 * (wake_own_ns) and the whole loop without that timing (whole_own_us)
 * are printed beside the timed figures. With
 * --wake-hz the measured periods are 1.5 wake intervals of real time
 * apart (not counted), so that every thread woke since the last one, as
 * in a real period. --storm ROUNDS instead measures what the
 * programs add to a host context switch: two threads pinned to one CPU
 * ping-pong through pipes, with the programs detached / attached
 * (untracked threads) / attached with both threads tracked as vCPUs of one
 * domain (every switch and wakeup takes the counting path), the best of 11
 * alternating runs each.
 *
 * It prints numbers; it never passes or fails on a time. Its options:
 * options[] below (before main).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cliopt.h"
#include "clock.h"
#include "live.h"
#include "log.h"
#include "loop.h"
#include "procstat.h"
#include "topo_hwloc.h"
#include "tracer.h"
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "floor.skel.h"

#define HOST_TOPO "pack:2 [numa] l3:8 core:8 pu:2"

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stand-in processes ------------------------------------------------ */

static int wake_hz;             /* stand-in threads wake this often; 0: never */

/* Between measured periods: with waking stand-ins, 1.5 wake intervals of
 * real time, so that every thread woke since the last period as in a real
 * period (CPU time is measured, the sleep does not count); idle ones need
 * none. */
static void
between_periods(void)
{
	if (wake_hz > 0)
		usleep((useconds_t)(1500000 / wake_hz));
}

static void *
idle_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", (int)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
	if (wake_hz > 0) {
		struct timespec ts = { 0, 1000000000L / wake_hz };
		for (;;)
			nanosleep(&ts, NULL);
	}
	for (;;)
		pause();
	return NULL;
}

/* A child with n vCPU-named threads; returns its pid once they all run. */
static pid_t
spawn(int n)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		pthread_attr_t at;
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 * 1024);
		for (int i = 0; i < n; i++) {
			pthread_t t;
			if (pthread_create(&t, &at, idle_thread, (void *)(intptr_t)i) != 0)
				_exit(1);
		}
		usleep(20000);          /* let them name themselves */
		if (write(p[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

/* ---- baseline ------------------------------------------------------------ */

static double
baseline(const pid_t *pids, int nproc, int per_proc, int periods, int ncpus)
{
	int n = nproc * per_proc, k = 0, statfd;
	int *fds = calloc((size_t)n * 2, sizeof(int));
	char buf[4096], path[128];
	uint64_t t0;

	for (int p = 0; p < nproc; p++) {
		struct procstat_task *tasks;
		struct procstat *ps = procstat_new(NULL, NULL);
		int nt;
		procstat_list_tasks(ps, pids[p], &tasks, &nt, NULL);
		for (int i = 0; i < nt; i++) {
			if (tasks[i].kind != PROCSTAT_VCPU)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pids[p], tasks[i].tid);
			fds[2 * k] = open(path, O_RDONLY | O_CLOEXEC);
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pids[p], tasks[i].tid);
			fds[2 * k + 1] = open(path, O_RDONLY | O_CLOEXEC);
			if (fds[2 * k] < 0 || fds[2 * k + 1] < 0) {     /* out of descriptors */
				if (fds[2 * k] >= 0)
					close(fds[2 * k]);
				if (fds[2 * k + 1] >= 0)
					close(fds[2 * k + 1]);
				break;
			}
			k++;
		}
		free(tasks);
		procstat_free(ps);
	}
	statfd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	(void)ncpus;
	t0 = cpu_ns();
	for (int r = 0; r < periods; r++) {
		for (int i = 0; i < 2 * k; i++)
			if (pread(fds[i], buf, sizeof(buf), 0) < 0)
				perror("pread");
		if (pread(statfd, buf, sizeof(buf), 0) < 0)
			perror("pread /proc/stat");
	}
	t0 = cpu_ns() - t0;
	for (int i = 0; i < 2 * k; i++)
		close(fds[i]);
	close(statfd);
	free(fds);
	if (k != n)
		fprintf(stderr, "baseline: opened the files of %d of %d threads (RLIMIT_NOFILE); per thread of those\n",
		    k, n);
	return k ? (double)t0 / 1000.0 / (double)k / (double)periods : 0;
}

/* ---- llcd ------------------------------------------------------------------ */

/* A dry-run live back-end over no hypervisor with every stand-in process
 * added as an aggregate domain "standin-P"; exits when live_new fails and,
 * if strict, when adding a process fails. */
static struct live *
standin_live(const struct topo *t, const pid_t *pids, int nproc, int per_proc, enum agent_sampler sampler, bool strict)
{
	struct live_config cfg;
	struct policy_annotation a;
	struct llcd_err err;
	struct live *l;
	char name[32];

	live_config_none(&cfg, t, sampler);
	cfg.dry_run = true;
	if ((l = live_new(&cfg, &err)) == NULL) {
		fprintf(stderr, "live_new: %s\n", err.msg);
		exit(1);
	}
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_AGGREGATE;
	for (int p = 0; p < nproc; p++) {
		snprintf(name, sizeof(name), "standin-%d", p);
		if (live_add_process(l, name, pids[p], per_proc, &a, &err) < 0 && strict) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
	}
	return l;
}

/* CPU time of the loop's phases, per thread per period (us) */
struct phases {
	double observe, policy, apply;
};

static double
llcd(const struct topo *t, const pid_t *pids, int nproc, int per_proc, int periods, enum agent_sampler sampler,
     struct phases *ph, int *actions_steady, int *actions_warm)
{
	struct policy_host host;
	struct agent_step_stats st;
	struct llcd_err err;
	struct agent_loop *loop;
	struct live *l;
	uint64_t now = llcd_mono_ns(), t0, obs = 0, pol = 0, app = 0;
	int n = nproc * per_proc, acts = 0;

	l = standin_live(t, pids, nproc, per_proc, sampler, true);
	policy_host_defaults(&host, t);
	host.overcommit = (double)((n + t->count[TOPO_PU] - 1) / t->count[TOPO_PU] + 1);
	if ((loop = agent_loop_new(&live_agent_ops, l, &host, 1000000000ull, &err)) == NULL) {
		fprintf(stderr, "agent loop: %s\n", err.msg);
		exit(1);
	}
	/* warm-up: find threads, place every domain, settle */
	*actions_warm = 0;
	for (int r = 0; r < 3; r++) {
		now += 1000000000ull;
		if (agent_loop_step(loop, now, &st, &err) < 0) {
			fprintf(stderr, "step: %s\n", err.msg);
			exit(1);
		}
		*actions_warm += st.actions;
	}
	uint64_t slept = 0;
	t0 = cpu_ns();
	for (int r = 0; r < periods; r++) {
		uint64_t c = cpu_ns();
		between_periods();
		slept += cpu_ns() - c;
		now += 1000000000ull;
		agent_loop_step(loop, now, &st, &err);
		obs += st.observe_cpu_ns;
		pol += st.policy_cpu_ns;
		app += st.apply_cpu_ns;
		acts += st.actions;
	}
	t0 = cpu_ns() - t0 - slept;
	agent_loop_free(loop);
	live_free(l);
	ph->observe = (double)obs / 1000.0 / (double)n / (double)periods;
	ph->policy = (double)pol / 1000.0 / (double)n / (double)periods;
	ph->apply = (double)app / 1000.0 / (double)n / (double)periods;
	*actions_steady = acts;
	return (double)t0 / 1000.0 / (double)n / (double)periods;
}

/* llcd's sampling alone: the live back-end's observe() (no policy, no
 * apply) with the given sampler, CPU time per thread per period after 3
 * warm-up periods. */
static double
observe_only(const struct topo *t, const pid_t *pids, int nproc, int per_proc, int periods, enum agent_sampler sampler)
{
	struct llcd_err err;
	struct agent_obs *obs = agent_obs_new();
	struct live *l;
	uint64_t now = llcd_mono_ns(), t0 = 0;

	l = standin_live(t, pids, nproc, per_proc, sampler, false);
	for (int r = 0; r < 3 + periods; r++) {
		if (r == 3)
			t0 = cpu_ns();
		if (r >= 3) {
			uint64_t c = cpu_ns();
			between_periods();
			t0 += cpu_ns() - c;     /* the sleep's own syscalls are not the sampler's */
		}
		now += 1000000000ull;
		agent_obs_begin(obs, t->max_cpu + 1, &err);
		if (live_agent_ops.observe(l, now, obs, &err) < 0)
			fprintf(stderr, "observe: %s\n", err.msg);
	}
	t0 = cpu_ns() - t0;
	agent_obs_free(obs);
	live_free(l);
	return (double)t0 / 1000.0 / (double)(nproc * per_proc) / (double)periods;
}

/* ---- the tracer -------------------------------------------------------------- */

static int
bpf_stats_enable(int on)
{
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDWR | O_CLOEXEC), old = -1;
	char c;

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) == 1)
		old = c == '1';
	if (pwrite(fd, on ? "1" : "0", 1, 0) != 1)
		old = -1;
	close(fd);
	return old;
}

/* An empty program's run time and runs (bench/floor.bpf.c); 0 when it
 * cannot be read. */
static void
floor_stats(struct floor_bpf *fl, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*ns = *cnt = 0;
	if (fl && bpf_obj_get_info_by_fd(bpf_program__fd(fl->progs.bench_floor_waking), &info, &len) == 0) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

/* What the programs cost per run, timed (with bpf_stats) and their own. */
struct prog_costs {
	double prog_us;         /* the programs' run time per thread per second */
	double prog_ns_run;     /* per program run */
	double wake_ns_run;     /* per run of the wakeup program alone */
	double runs_per_s;
	double floor_ns_run;    /* per run of an empty program on the same
	                         * tracepoint in the same seconds: bpf_stats'
	                         * own timing (0: not measured) */
	double prog_net_us;     /* prog_us less the floor for each run */
};

/* Every stand-in vCPU registered; per period: read each thread through the
 * mapping and drain the edges (CPU time per thread per period, like the
 * baseline). Then the programs' run time over bpf_s seconds of real time,
 * with the empty program of bench/floor.bpf.c attached beside them. */
static double
bpf_floor(struct tracer *tr, const pid_t *pids, int nproc, int periods, int bpf_s, struct prog_costs *pc)
{
	struct floor_bpf *fl;
	uint64_t fns0, fcnt0, fns1, fcnt1;
	struct tracer_prog_stats a, b;
	struct tracer_sample smp;
	struct llcd_err err;
	int *slots, *doms = calloc((size_t)nproc, sizeof(int)), n = 0, cap = 0;
	uint64_t t0, w0, sum = 0;

	slots = NULL;
	for (int p = 0; p < nproc; p++) {
		struct procstat_task *tasks;
		struct procstat *ps = procstat_new(NULL, NULL);
		int nt;
		if ((doms[p] = tracer_domain_add(tr, &err)) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
		procstat_list_tasks(ps, pids[p], &tasks, &nt, NULL);
		for (int i = 0; i < nt; i++) {
			if (tasks[i].kind != PROCSTAT_VCPU)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				slots = realloc(slots, sizeof(int) * (size_t)cap);
			}
			if ((slots[n] = tracer_thread_add(tr, doms[p], tasks[i].tid, tasks[i].index, &err)) < 0) {
				fprintf(stderr, "%s\n", err.msg);
				exit(1);
			}
			n++;
		}
		free(tasks);
		procstat_free(ps);
	}
	t0 = cpu_ns();
	for (int r = 0; r < periods; r++) {
		uint64_t c = cpu_ns();
		between_periods();
		t0 += cpu_ns() - c;
		if (tracer_refresh(tr, &err) < 0)
			fprintf(stderr, "%s\n", err.msg);
		for (int i = 0; i < n; i++)
			if (tracer_thread_read(tr, slots[i], &smp) == 0)
				sum += smp.runtime_ns;
		if (tracer_drain_edges(tr, &err) < 0)
			fprintf(stderr, "%s\n", err.msg);
	}
	t0 = cpu_ns() - t0;
	/* the programs' own time, over real seconds, and the floor's */
	fl = floor_bpf__open_and_load();
	if (fl && floor_bpf__attach(fl) != 0) {
		floor_bpf__destroy(fl);
		fl = NULL;
	}
	if (fl == NULL)
		fprintf(stderr, "bench/floor.bpf.c: not loaded (%s): floor_ns/run not measured\n", strerror(errno));
	floor_stats(fl, &fns0, &fcnt0);
	tracer_prog_stats(tr, &a, &err);
	w0 = llcd_mono_ns();
	sleep((unsigned)bpf_s);
	tracer_prog_stats(tr, &b, &err);
	floor_stats(fl, &fns1, &fcnt1);
	w0 = llcd_mono_ns() - w0;
	floor_bpf__destroy(fl);
	double secs = (double)w0 / 1e9;
	pc->prog_us = (double)(b.run_time_ns - a.run_time_ns) / 1000.0 / (double)n / secs;
	pc->prog_ns_run = b.run_cnt > a.run_cnt ?
	    (double)(b.run_time_ns - a.run_time_ns) / (double)(b.run_cnt - a.run_cnt) : 0;
	pc->runs_per_s = (double)(b.run_cnt - a.run_cnt) / secs;
	pc->wake_ns_run = 0;
	for (int i = 0; i < b.nprogs; i++)
		if (strcmp(b.prog[i].name, "llcd_waking") == 0 && b.prog[i].run_cnt > a.prog[i].run_cnt)
			pc->wake_ns_run = (double)(b.prog[i].run_time_ns - a.prog[i].run_time_ns) /
			    (double)(b.prog[i].run_cnt - a.prog[i].run_cnt);
	pc->floor_ns_run = fcnt1 > fcnt0 ? (double)(fns1 - fns0) / (double)(fcnt1 - fcnt0) : 0;
	/* each run less the floor, never below nothing */
	double net = (double)(b.run_time_ns - a.run_time_ns) - pc->floor_ns_run * (double)(b.run_cnt - a.run_cnt);
	pc->prog_net_us = (net > 0 ? net : 0) / 1000.0 / (double)n / secs;
	for (int p = 0; p < nproc; p++)
		tracer_domain_remove(tr, doms[p]);
	free(doms);
	free(slots);
	(void)sum;
	return (double)t0 / 1000.0 / (double)n / (double)periods;
}

/* ---- context-switch storm --------------------------------------------------- */

struct pp {
	int a[2], b[2];
	int rounds;
	atomic_int tid;
};

static void
pin_cpu0(void)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static void *
pong(void *arg)
{
	struct pp *p = arg;
	char c;

	pin_cpu0();
	atomic_store(&p->tid, gettid());
	for (;;) {
		if (read(p->a[0], &c, 1) != 1 || c == 'q')
			return NULL;
		if (write(p->b[1], &c, 1) != 1)
			return NULL;
	}
}

static clockid_t pong_clock;

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU ns of both threads per round trip (two switches, two wakeups): CPU
 * time, not wall time, so that other work on CPU 0 of a shared machine
 * does not count */
static double
storm_once(struct pp *p)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) + clock_ns(pong_clock);
	char c = 'x';

	for (int i = 0; i < p->rounds; i++)
		if (write(p->a[1], &c, 1) != 1 || read(p->b[0], &c, 1) != 1)
			break;
	return (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) + clock_ns(pong_clock) - t0) / (double)p->rounds;
}

static int
storm(int rounds)
{
	struct pp p = { .rounds = rounds };
	struct llcd_err err;
	struct tracer *tr;
	pthread_t th;
	double off = 1e18, on = 1e18, tracked = 1e18;
	char c = 'q';

	if (pipe(p.a) < 0 || pipe(p.b) < 0)
		return 1;
	pin_cpu0();
	pthread_create(&th, NULL, pong, &p);
	while (atomic_load(&p.tid) == 0)
		usleep(1000);
	if (pthread_getcpuclockid(th, &pong_clock) != 0)
		return 1;
	int stats_old = bpf_stats_enable(0);
	uint64_t prog_ns = 0, prog_runs = 0;
	storm_once(&p);         /* warm */
	for (int k = 0; k < 11; k++) {
		double x = storm_once(&p);
		if (x < off)
			off = x;
		if ((tr = tracer_new(&err)) == NULL) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		x = storm_once(&p);
		if (x < on)
			on = x;
		int d = tracer_domain_add(tr, &err);
		tracer_thread_add(tr, d, gettid(), 0, &err);
		tracer_thread_add(tr, d, atomic_load(&p.tid), 1, &err);
		x = storm_once(&p);
		if (x < tracked)
			tracked = x;
		/* once more with the kernel timing the programs (which costs) */
		struct tracer_prog_stats a, b;
		bpf_stats_enable(1);
		tracer_prog_stats(tr, &a, &err);
		storm_once(&p);
		tracer_prog_stats(tr, &b, &err);
		bpf_stats_enable(0);
		prog_ns += b.run_time_ns - a.run_time_ns;
		prog_runs += b.run_cnt - a.run_cnt;
		tracer_drain_edges(tr, &err);
		tracer_free(tr);
	}
	if (stats_old == 1)
		bpf_stats_enable(1);
	if (write(p.a[1], &c, 1) != 1)
		return 1;
	pthread_join(th, NULL);
	printf("# context-switch storm: two threads on CPU 0 ping-pong through pipes, %d round trips "
	    "(2 switches each), CPU time of both threads, best of 11\n", rounds);
	printf("%22s %12s %12s %14s\n", "", "ns/switch", "ratio", "added_ns/switch");
	printf("%22s %12.1f %12.3f %14s\n", "detached", off / 2, 1.0, "-");
	printf("%22s %12.1f %12.3f %14.1f\n", "attached, untracked", on / 2, on / off, (on - off) / 2);
	printf("%22s %12.1f %12.3f %14.1f\n", "attached, tracked", tracked / 2, tracked / off, (tracked - off) / 2);
	printf("# programs' own run time (run_time_ns, a 4th pass with kernel.bpf_stats_enabled=1), tracked: %.1f ns per run, %.1f runs per switch, "
	    "%.1f ns per switch\n", prog_runs ? (double)prog_ns / (double)prog_runs : 0,
	    (double)prog_runs / (11.0 * 2 * rounds), (double)prog_ns / (11.0 * 2 * rounds));
	return 0;
}

/* ---- numad ---------------------------------------------------------------- */

static int
numad_run(int seconds, double *cpu_ms_per_scan, int *scans)
{
	char dir[] = "/tmp/llcd-bench-numad.XXXXXX", cmd[1024], path[256], line[512];
	FILE *f;
	int pid = 0;
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long ut = 0, stt = 0;

	if (access("/usr/bin/numad", X_OK) != 0) {
		fprintf(stderr, "numad: /usr/bin/numad missing (apt-get install numad)\n");
		return -1;
	}
	if (mkdtemp(dir) == NULL)
		return -1;
	/* private mount namespace: numad's fixed /var/log/numad.log and
	 * /var/run/numad.pid land in dir; -H 0 leaves khugepaged alone */
	snprintf(cmd, sizeof(cmd),
	    "mkdir -p %s/run && unshare -m sh -c 'mount --bind %s /var/log && mount --bind %s/run /var/run && "
	    "numad -i 1:1 -H 0 -d'", dir, dir, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "numad: could not start it (%s)\n", cmd);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/run/numad.pid", dir);
	for (int i = 0; i < 50 && pid <= 0; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%d", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid <= 0)
			usleep(100000);
	}
	if (pid <= 0) {
		fprintf(stderr, "numad: no pid file %s\n", path);
		return -1;
	}
	sleep((unsigned)seconds);
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), f)) {
			char *p = strrchr(line, ')');
			/* fields after ")": 3 state ... 14 utime 15 stime */
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stt) != 2)
				ut = stt = 0;
		}
		fclose(f);
	}
	kill(pid, SIGTERM);             /* the numad we started, by its pid */
	snprintf(path, sizeof(path), "%s/numad.log", dir);
	*scans = 0;
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f))
			if (strstr(line, ": Nodes: "))
				(*scans)++;
		fclose(f);
	}
	*cpu_ms_per_scan = *scans ? (double)(ut + stt) * 1000.0 / (double)hz / (double)*scans : 0;
	fprintf(stderr, "numad: pid %d, %d scans in %d s, utime+stime %lu ticks, log %s\n", pid, *scans,
	    seconds, ut + stt, path);
	return 0;
}

enum { OPT_THREADS = CLIOPT_LONG, OPT_PER_PROC, OPT_PERIODS, OPT_NUMAD, OPT_NUMAD_S, OPT_SAMPLER, OPT_WAKE_HZ, OPT_BPF_S, OPT_STORM, OPT_ONLY };

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt options[] = {
	{ OPT_THREADS, "threads", "N,N..", "thread counts (default 1000,4000,8000)" },
	{ OPT_PER_PROC, "per-proc", "T", "threads per stand-in process (default 16)" },
	{ OPT_PERIODS, "periods", "M", "periods per measurement (default 20)" },
	{ OPT_NUMAD, "numad", NULL, "also run numad on the same processes" },
	{ OPT_NUMAD_S, "numad-s", "S", "for S seconds (default 10)" },
	{ OPT_SAMPLER, "sampler", "proc|bpf", "with bpf, add the in-kernel tracer (default proc)" },
	{ OPT_WAKE_HZ, "wake-hz", "H", "with bpf: stand-in threads wake H times a second (default 0)" },
	{ OPT_BPF_S, "bpf-s", "S", "with bpf: the programs' run time over S seconds (default 5)" },
	{ OPT_STORM, "storm", "ROUNDS", "what the programs add to a context switch, instead" },
	{ OPT_ONLY, "only", "PART", "run one part alone (baseline, llcd, bpf_read, obs_proc, obs_bpf; the others "
	  "print 0), e.g. under perf record" },
	CLIOPT_END
};

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	char list[256] = "1000,4000,8000";
	int per_proc = 16, periods = 20, with_numad = 0, numad_s = 10, c, bpf = 0, bpf_s = 5;
	int storm_rounds = 0, stats_old = -1;
	const char *only = NULL;
	struct llcd_err err;
	struct topo *t;

	cliopt_build(&co, "bench_agent_overhead", options, false);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case OPT_THREADS: snprintf(list, sizeof(list), "%s", optarg); break;
		case OPT_PER_PROC: per_proc = atoi(optarg); break;
		case OPT_PERIODS: periods = atoi(optarg); break;
		case OPT_NUMAD: with_numad = 1; break;
		case OPT_NUMAD_S: numad_s = atoi(optarg); break;
		case OPT_SAMPLER: {
			enum agent_sampler s;
			if (agent_sampler_from_name(optarg, &s) < 0 || s == AGENT_SAMPLER_AUTO) {
				fprintf(stderr, "--sampler: bpf or proc, not '%s'\n", optarg);
				return 2;
			}
			bpf = s == AGENT_SAMPLER_BPF;
			break;
		}
		case OPT_WAKE_HZ: wake_hz = atoi(optarg); break;
		case OPT_BPF_S: bpf_s = atoi(optarg); break;
		case OPT_STORM: storm_rounds = atoi(optarg); break;
		case OPT_ONLY:
			if (strcmp(optarg, "baseline") && strcmp(optarg, "llcd") && strcmp(optarg, "bpf_read") &&
			    strcmp(optarg, "obs_proc") && strcmp(optarg, "obs_bpf")) {
				fprintf(stderr, "--only: baseline, llcd, bpf_read, obs_proc or obs_bpf, not '%s'\n", optarg);
				return 2;
			}
			only = optarg;
			break;
		default:
			fputs("usage: bench_agent_overhead [options]\n"
			      "       bench_agent_overhead --storm ROUNDS\n", stderr);
			cliopt_help(options, stderr);
			return 2;
		}
	}
	if (per_proc < 1 || periods < 1 || wake_hz < 0 || wake_hz > 1000 || bpf_s < 1)
		return 2;
	if (storm_rounds > 0)
		return storm(storm_rounds);
	/* the baseline and the back-end each hold 2 descriptors per thread:
	 * raise the limit for the largest count (root may raise the hard one) */
	{
		int most = 0;
		char copy[256];
		snprintf(copy, sizeof(copy), "%s", list);
		for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
			if (atoi(tok) > most)
				most = atoi(tok);
		struct rlimit rl;
		rlim_t want = (rlim_t)most * 4 + 4096;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
			rl.rlim_cur = want;
			if (rl.rlim_max < want)
				rl.rlim_max = want;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				fprintf(stderr, "RLIMIT_NOFILE %llu: %s (fewer threads will be found)\n",
				    (unsigned long long)want, strerror(errno));
		}
	}
	if (bpf)
		stats_old = bpf_stats_enable(1);
	log_init(true, 0);
	log_set_sink(log_discard, NULL);      /* the back-end logs every placement */
	if ((t = topo_load(HOST_TOPO, &err)) == NULL) {
		fprintf(stderr, "topology: %s\n", err.msg);
		return 1;
	}
	printf("# agent overhead: CPU time per vCPU thread per period (us); host model %s, %d threads per "
	    "stand-in process, %d periods\n", HOST_TOPO, per_proc, periods);
	if (bpf)
		printf("# bpf: stand-in threads wake %d times a second; programs' run time over %d s\n", wake_hz, bpf_s);
	printf("# baseline: the /proc floor; llcd: the whole loop = observe + policy + apply; ratio: llcd / baseline%s\n",
	    bpf ? "; whole: llcd + the programs' run time (bpf_prog), whole/base its ratio to the baseline" : "");
	if (bpf)
		printf("# floor_ns/run: an empty program on the wakeup program's tracepoint, same seconds (bpf_stats' own timing); "
		    "wake_own_ns: wake_ns/run less it; whole_own_us: llcd + the programs' run time less the floor for each run\n");
	printf("%8s %6s %12s %10s %10s %10s %10s %8s %9s %10s%s%s\n", "threads", "procs", "baseline_us", "llcd_us",
	    "observe_us", "policy_us", "apply_us", "ratio", "warm_act", "steady_act",
	    bpf ? "  bpf_read_us bpf_prog_us   whole_us whole/base prog_ns/run wake_ns/run runs/s obs_proc_us obs_bpf_us"
	          " floor_ns/run wake_own_ns whole_own_us" : "",
	    with_numad ? "  numad_ms/scan numad_us/thread" : "");
#define RUN_PART(name) (only == NULL || strcmp(only, name) == 0)
	/* the counts first: the code measured may use strtok() itself */
	int counts[32], ncounts = 0;
	for (char *tok = strtok(list, ","); tok && ncounts < 32; tok = strtok(NULL, ","))
		counts[ncounts++] = atoi(tok);
	for (int ci = 0; ci < ncounts; ci++) {
		int n = counts[ci], nproc = (n + per_proc - 1) / per_proc;
		pid_t *pids = calloc((size_t)nproc, sizeof(pid_t));
		double b, lc, nm = 0, br = 0, op = 0, ob = 0;
		struct prog_costs pc = { 0 };
		int acts = 0, warm = 0, scans = 0;
		struct phases ph;
		for (int p = 0; p < nproc; p++) {
			if ((pids[p] = spawn(per_proc)) < 0) {
				fprintf(stderr, "spawn: %s (process %d of %d; kernel.pid_max and kernel.threads-max bound "
				    "the threads, bench/agent-overhead raises pid_max for the run)\n", strerror(errno), p, nproc);
				return 1;
			}
		}
		n = nproc * per_proc;
		memset(&ph, 0, sizeof(ph));
		b = RUN_PART("baseline") ? baseline(pids, nproc, per_proc, periods, t->max_cpu + 1) : 0;
		lc = RUN_PART("llcd") ? llcd(t, pids, nproc, per_proc, periods, bpf ? AGENT_SAMPLER_BPF : AGENT_SAMPLER_PROC,
		    &ph, &acts, &warm) : 0;
		if (bpf && RUN_PART("bpf_read")) {
			struct llcd_err e;
			struct tracer *tr = tracer_new(&e);
			if (tr == NULL) {
				fprintf(stderr, "--sampler bpf: %s\n", e.msg);
				return 1;
			}
			br = bpf_floor(tr, pids, nproc, periods, bpf_s, &pc);
			tracer_free(tr);
		}
		if (bpf && RUN_PART("obs_proc"))
			op = observe_only(t, pids, nproc, per_proc, periods, AGENT_SAMPLER_PROC);
		if (bpf && RUN_PART("obs_bpf"))
			ob = observe_only(t, pids, nproc, per_proc, periods, AGENT_SAMPLER_BPF);
		if (with_numad && numad_run(numad_s, &nm, &scans) < 0)
			nm = -1;
		printf("%8d %6d %12.3f %10.3f %10.3f %10.3f %10.3f %8.3f %9d %10d", n, nproc, b, lc, ph.observe, ph.policy,
		    ph.apply, b > 0 ? lc / b : 0, warm, acts);
		if (bpf)
			printf("  %11.3f %11.3f %10.3f %10.3f %11.1f %11.1f %6.0f %11.3f %10.3f %12.1f %12.1f %12.3f",
			    br, pc.prog_us, lc + pc.prog_us, b > 0 ? (lc + pc.prog_us) / b : 0,
			    pc.prog_ns_run, pc.wake_ns_run, pc.runs_per_s, op, ob, pc.floor_ns_run,
			    pc.floor_ns_run > 0 ? pc.wake_ns_run - pc.floor_ns_run : 0,
			    pc.floor_ns_run > 0 ? lc + pc.prog_net_us : 0);
		if (with_numad)
			printf("  %13.2f %15.3f", nm, nm >= 0 ? nm * 1000.0 / n : -1);
		printf("\n");
		fflush(stdout);
		for (int p = 0; p < nproc; p++)
			kill(pids[p], SIGKILL);
		for (int p = 0; p < nproc; p++)
			waitpid(pids[p], NULL, 0);
		free(pids);
	}
	topo_free(t);
	if (stats_old == 0)
		bpf_stats_enable(0);
	return 0;
}
