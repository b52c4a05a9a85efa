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
 * microseconds, the policy's share, and the ratio llcd / baseline. With
 * --numad it also runs Debian's numad on the same processes (numad -i 1:1
 * -H 0, log and pid file under a /tmp directory bind-mounted over
 * /var/log and /var/run in a private mount namespace, since numad 0.5 has
 * neither a foreground switch nor a log-file option) for --numad-s seconds
 * and prints its CPU time per scan (utime + stime of /proc/<pid>/stat,
 * scans counted in its log).
 *
 * It prints numbers; it never passes or fails on a time.
 *
 *   bench_agent_overhead [--threads 1000,4000,8000] [--per-proc 16]
 *                        [--periods 20] [--numad] [--numad-s 10]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "live.h"
#include "log.h"
#include "loop.h"
#include "procstat.h"
#include "topo_hwloc.h"

#define HOST_TOPO "pack:2 [numa] l3:8 core:8 pu:2"

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stand-in processes ------------------------------------------------ */

static void *
idle_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", (int)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
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
		fprintf(stderr, "baseline: found %d of %d threads\n", k, n);
	return (double)t0 / 1000.0 / (double)n / (double)periods;
}

/* ---- llcd ------------------------------------------------------------------ */

static double
llcd(const struct topo *t, const pid_t *pids, int nproc, int per_proc, int periods, double *policy_us,
     int *actions_steady, int *actions_warm)
{
	struct live_config cfg;
	struct policy_host host;
	struct policy_annotation a;
	struct agent_step_stats st;
	struct llcd_err err;
	struct agent_loop *loop;
	struct live *l;
	uint64_t now = llcd_mono_ns(), t0, pol = 0;
	int n = nproc * per_proc, acts = 0;
	char name[32];

	memset(&cfg, 0, sizeof(cfg));
	cfg.uri = LIVE_URI_NONE;
	cfg.topo = t;
	cfg.state_dir = "";
	cfg.dry_run = true;
	if ((l = live_new(&cfg, &err)) == NULL) {
		fprintf(stderr, "live_new: %s\n", err.msg);
		exit(1);
	}
	policy_annotation_defaults(&a);
	a.mode = POLICY_MODE_AGGREGATE;
	for (int p = 0; p < nproc; p++) {
		snprintf(name, sizeof(name), "standin-%d", p);
		if (live_add_process(l, name, pids[p], per_proc, &a, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
	}
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
	t0 = cpu_ns();
	for (int r = 0; r < periods; r++) {
		now += 1000000000ull;
		agent_loop_step(loop, now, &st, &err);
		pol += st.policy_wall_ns;
		acts += st.actions;
	}
	t0 = cpu_ns() - t0;
	agent_loop_free(loop);
	live_free(l);
	*policy_us = (double)pol / 1000.0 / (double)n / (double)periods;
	*actions_steady = acts;
	return (double)t0 / 1000.0 / (double)n / (double)periods;
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

static void
quiet(int pri, const char *msg, void *arg)
{
	(void)pri;
	(void)msg;
	(void)arg;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "per-proc", required_argument, NULL, 'p' },
		{ "periods", required_argument, NULL, 'n' },
		{ "numad", no_argument, NULL, 'N' },
		{ "numad-s", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	char list[256] = "1000,4000,8000";
	int per_proc = 16, periods = 20, with_numad = 0, numad_s = 10, c;
	struct llcd_err err;
	struct topo *t;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': snprintf(list, sizeof(list), "%s", optarg); break;
		case 'p': per_proc = atoi(optarg); break;
		case 'n': periods = atoi(optarg); break;
		case 'N': with_numad = 1; break;
		case 's': numad_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench_agent_overhead [--threads N,N..] [--per-proc T] [--periods M] "
			    "[--numad] [--numad-s S]\n");
			return 2;
		}
	}
	if (per_proc < 1 || periods < 1)
		return 2;
	log_init(true, 0);
	log_set_sink(quiet, NULL);      /* the back-end logs every placement */
	if ((t = topo_load(HOST_TOPO, &err)) == NULL) {
		fprintf(stderr, "topology: %s\n", err.msg);
		return 1;
	}
	printf("# agent overhead: CPU time per vCPU thread per period (us); host model %s, %d threads per "
	    "stand-in process, %d periods\n", HOST_TOPO, per_proc, periods);
	printf("%8s %6s %12s %12s %12s %8s %9s %10s%s\n", "threads", "procs", "baseline_us", "llcd_us", "policy_us",
	    "ratio", "warm_act", "steady_act", with_numad ? "  numad_ms/scan numad_us/thread" : "");
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int n = atoi(tok), nproc = (n + per_proc - 1) / per_proc;
		pid_t *pids = calloc((size_t)nproc, sizeof(pid_t));
		double b, lc, pol, nm = 0;
		int acts = 0, warm = 0, scans = 0;
		for (int p = 0; p < nproc; p++) {
			if ((pids[p] = spawn(per_proc)) < 0) {
				fprintf(stderr, "spawn: %s\n", strerror(errno));
				return 1;
			}
		}
		n = nproc * per_proc;
		b = baseline(pids, nproc, per_proc, periods, t->max_cpu + 1);
		lc = llcd(t, pids, nproc, per_proc, periods, &pol, &acts, &warm);
		if (with_numad && numad_run(numad_s, &nm, &scans) < 0)
			nm = -1;
		printf("%8d %6d %12.2f %12.2f %12.2f %8.2f %9d %10d", n, nproc, b, lc, pol, lc / b, warm, acts);
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
	return 0;
}
