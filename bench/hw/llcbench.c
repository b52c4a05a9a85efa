// SPDX-License-Identifier: GPL-2.0-or-later
/* llcbench.c - the workload of llcd's hardware benchmark kit (bench/hw/).
 *
 *   llcbench run [--mode share|triad|private] [--threads N] [--cpus LIST|none]
 *                [--seconds S] [--max-steps N] [--ws-kb K] [--exchange L]
 *                [--buffer-mb M] [--format json|line] [--tag TEXT]
 *   llcbench pingpong --cpus LIST [--ms-per-pair MS] [--budget-s S]
 *   llcbench kvm
 *
 * run: N threads, thread i pinned to the i-th CPU of LIST (--cpus none:
 * left to the kernel), for S seconds (or N steps, whichever comes first).
 *
 *   share    every step each thread writes L cache lines of its outbox,
 *            meets the others at a barrier, reads the outboxes of all the
 *            other threads (the L lines of its ring neighbour, one line of
 *            everyone else) and updates its share of a K KiB working set
 *            (K/N KiB each). The seed's case: a multi-threaded simulator
 *            whose threads exchange signals every cycle.
 *   triad    STREAM's triad a[i] = b[i] + s*c[i] over three arrays of M/3
 *            MiB in total, each thread its own chunk, a barrier per sweep;
 *            one step is one sweep. Bandwidth-bound: M should be far
 *            larger than the LLC.
 *   private  each thread updates its own K/N KiB, never shares a line and
 *            never waits for the others; steps = iterations per thread
 *            (the mean over threads).
 *
 * The result is one line on stdout: JSON (default) or, with --format line,
 * "LLCBENCH key=value ..." for consoles (the guest). Every step's data is
 * checked (share: the values read are the ones their writer wrote that
 * step); a wrong value is an error, exit status 1.
 *
 * pingpong: for every pair of CPUs in LIST, two threads pinned to them pass
 * a cache line back and forth for MS milliseconds (default: --budget-s,
 * default 10, split over the pairs, at least 2 ms, at most 200 ms each);
 * prints {"cpus":[...],"ns":[[...]...]} with the one-way latency in ns
 * (half the median round trip of 64 batches), 0 on the diagonal.
 *
 * kvm: exit 0 and print "kvm usable" when /dev/kvm opens, KVM_CREATE_VM
 * works and kvm_intel or kvm_amd is loaded, else exit 1 and say why.
 *
 * Static C with pthreads only, so that it runs in a busybox initramfs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"

#define LINE 64
#define MAX_THREADS 1024
#define MAX_CPUS 4096

enum mode { MODE_SHARE, MODE_TRIAD, MODE_PRIVATE };
static const char *const mode_names[] = { "share", "triad", "private" };

struct opts {
	enum mode mode;
	int threads;
	int ncpus; /* 0: not pinned */
	int cpus[MAX_THREADS];
	double seconds;
	uint64_t max_steps;
	long ws_kb;
	int exchange;
	long buffer_mb;
	int line_format;
	const char *tag;
};

static double now_s(void)
{
	return (double)llcd_mono_ns() * 1e-9;
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "llcbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "llcbench: %s: '%s' is not an integer in [%ld, %ld]\n", opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static double parse_dbl(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "llcbench: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* ------------------------------------------------------------------------
 * Barrier: sense-reversing, spins a while, then yields (so that more
 * threads than CPUs, e.g. a whole group on one PU, still make progress).
 * The last thread to arrive runs `leader` before releasing the others. */
struct barrier {
	_Alignas(LINE) atomic_int count;
	_Alignas(LINE) atomic_int sense;
	int n;
};

static void barrier_wait(struct barrier *b, int *local_sense, void (*leader)(void *), void *arg)
{
	int s = !*local_sense;

	*local_sense = s;
	if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
		atomic_store_explicit(&b->count, 0, memory_order_relaxed);
		if (leader)
			leader(arg);
		atomic_store_explicit(&b->sense, s, memory_order_release);
		return;
	}
	for (unsigned spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != s; spins++) {
		if (spins < 4096)
			cpu_relax();
		else
			sched_yield();
	}
}

/* ------------------------------------------------------------------------
 * run */

struct run {
	const struct opts *o;
	struct barrier bar;
	_Alignas(LINE) atomic_int stop;
	atomic_int bad;
	atomic_int pin_failed;
	atomic_int pin_errno;
	uint64_t steps; /* written by the leader */
	double t_end;
	/* share */
	size_t outbox_lines;        /* per thread per parity */
	uint64_t *outbox;           /* [thread][parity][line][8] */
	size_t ws_words;            /* per thread */
	uint64_t *ws;               /* [thread][ws_words] */
	/* triad */
	double *a, *b, *c;
	size_t triad_n;
	/* private */
	uint64_t priv_steps[MAX_THREADS];
	uint64_t sink[MAX_THREADS];
};

struct worker {
	struct run *r;
	int id;
	pthread_t th;
};

static void leader_step(void *arg)
{
	struct run *r = arg;

	r->steps++;
	/* the clock every 16 steps (share steps take microseconds), every
	 * step for the triad (a sweep takes milliseconds) */
	if ((r->steps & 15) == 0 || r->o->mode == MODE_TRIAD || r->steps >= r->o->max_steps) {
		if (now_s() >= r->t_end || r->steps >= r->o->max_steps)
			atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
	}
}

static uint64_t *outbox_line(struct run *r, int t, int parity, size_t l)
{
	return r->outbox + (((size_t)t * 2 + (size_t)parity) * r->outbox_lines + l) * (LINE / 8);
}

static void share_loop(struct run *r, int id)
{
	int n = r->o->threads, sense = 0;
	uint64_t *ws = r->ws + (size_t)id * r->ws_words, acc = 0;
	size_t wpos = 0;

	barrier_wait(&r->bar, &sense, NULL, NULL); /* start together */
	for (uint64_t step = 1;; step++) {
		int par = (int)(step & 1);
		/* write: every word of L lines of my outbox carries (id, step) */
		for (size_t l = 0; l < r->outbox_lines; l++) {
			uint64_t *p = outbox_line(r, id, par, l);
			for (int w = 0; w < LINE / 8; w++)
				p[w] = (step << 16) ^ ((uint64_t)id << 4) ^ (uint64_t)w;
		}
		barrier_wait(&r->bar, &sense, leader_step, r);
		/* read: all of the ring neighbour's lines, one line of everyone else */
		for (int k = 1; k < n; k++) {
			int t = (id + k) % n;
			size_t lines = k == 1 ? r->outbox_lines : 1;
			for (size_t l = 0; l < lines; l++) {
				size_t li = k == 1 ? l : (size_t)(step + (uint64_t)id) % r->outbox_lines;
				const uint64_t *p = outbox_line(r, t, par, li);
				for (int w = 0; w < LINE / 8; w++) {
					uint64_t want = (step << 16) ^ ((uint64_t)t << 4) ^ (uint64_t)w;
					if (p[w] != want)
						atomic_store_explicit(&r->bad, 1, memory_order_relaxed);
					acc += p[w];
				}
			}
		}
		/* compute: a pass over a slice of my working set */
		for (size_t i = 0; i < 512 && r->ws_words; i++) {
			ws[wpos] = ws[wpos] * 6364136223846793005ULL + acc;
			acc ^= ws[wpos];
			wpos = wpos + 8 < r->ws_words ? wpos + 8 : (wpos + 1) % 8;
		}
		if (atomic_load_explicit(&r->stop, memory_order_relaxed))
			break;
	}
	r->sink[id] = acc;
}

static void triad_loop(struct run *r, int id)
{
	int n = r->o->threads, sense = 0;
	size_t chunk = r->triad_n / (size_t)n, lo = chunk * (size_t)id;
	size_t hi = id == n - 1 ? r->triad_n : lo + chunk;
	double s = 3.0;

	/* first touch by the thread that uses the chunk */
	for (size_t i = lo; i < hi; i++) {
		r->a[i] = 0.0;
		r->b[i] = 1.0;
		r->c[i] = 2.0;
	}
	barrier_wait(&r->bar, &sense, NULL, NULL);
	if (id == 0)
		r->t_end = now_s() + r->o->seconds; /* after the first touch */
	barrier_wait(&r->bar, &sense, NULL, NULL);
	for (;;) {
		for (size_t i = lo; i < hi; i++)
			r->a[i] = r->b[i] + s * r->c[i];
		barrier_wait(&r->bar, &sense, leader_step, r);
		if (atomic_load_explicit(&r->stop, memory_order_relaxed))
			break;
	}
	if (hi > lo && (r->a[lo] != 7.0 || r->a[hi - 1] != 7.0))
		atomic_store_explicit(&r->bad, 1, memory_order_relaxed);
}

static void private_loop(struct run *r, int id)
{
	uint64_t *ws = r->ws + (size_t)id * r->ws_words, acc = (uint64_t)id + 1, steps = 0;
	int sense = 0;

	barrier_wait(&r->bar, &sense, NULL, NULL);
	for (;;) {
		for (size_t i = 0; i < r->ws_words; i += 8) {
			ws[i] = ws[i] * 6364136223846793005ULL + acc;
			acc ^= ws[i] >> 7;
		}
		steps++;
		if ((steps & 7) == 0 &&
		    (atomic_load_explicit(&r->stop, memory_order_relaxed) || now_s() >= r->t_end ||
		     steps >= r->o->max_steps)) {
			atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
			break;
		}
	}
	r->priv_steps[id] = steps;
	r->sink[id] = acc;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;

	if (r->o->ncpus && pin_self(r->o->cpus[w->id]) != 0) {
		atomic_store(&r->pin_errno, errno);
		atomic_store(&r->pin_failed, r->o->cpus[w->id] + 1);
	}
	switch (r->o->mode) {
	case MODE_SHARE: share_loop(r, w->id); break;
	case MODE_TRIAD: triad_loop(r, w->id); break;
	case MODE_PRIVATE: private_loop(r, w->id); break;
	}
	return NULL;
}

static void *xalloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n ? n : LINE) != 0) {
		fprintf(stderr, "llcbench: cannot allocate %zu bytes\n", n);
		exit(2);
	}
	memset(p, 0, n);
	return p;
}

static int cmd_run(struct opts *o)
{
	struct run *r = xalloc(sizeof(*r));
	struct worker *w = xalloc(sizeof(*w) * (size_t)o->threads);
	double t0, t1, secs;
	uint64_t steps;

	r->o = o;
	r->bar.n = o->threads;
	r->outbox_lines = (size_t)o->exchange;
	r->ws_words = (size_t)o->ws_kb * 1024 / 8 / (size_t)o->threads;
	r->ws_words &= ~(size_t)7;
	if (o->mode == MODE_SHARE)
		r->outbox = xalloc((size_t)o->threads * 2 * r->outbox_lines * LINE);
	if (o->mode != MODE_TRIAD)
		r->ws = xalloc((size_t)o->threads * r->ws_words * 8 + LINE);
	if (o->mode == MODE_TRIAD) {
		r->triad_n = (size_t)o->buffer_mb * 1024 * 1024 / 3 / sizeof(double);
		if (r->triad_n < (size_t)o->threads)
			die("--buffer-mb %ld is too small for %d threads", o->buffer_mb, o->threads);
		/* malloc, not xalloc: the threads touch their own chunks first */
		if (posix_memalign((void **)&r->a, 4096, r->triad_n * sizeof(double)) ||
		    posix_memalign((void **)&r->b, 4096, r->triad_n * sizeof(double)) ||
		    posix_memalign((void **)&r->c, 4096, r->triad_n * sizeof(double))) {
			fprintf(stderr, "llcbench: cannot allocate %ld MiB for the triad\n", o->buffer_mb);
			return 2;
		}
	}
	t0 = now_s();
	r->t_end = t0 + o->seconds;
	for (int i = 0; i < o->threads; i++) {
		w[i].r = r;
		w[i].id = i;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "llcbench: pthread_create: %s\n", strerror(errno));
			return 2;
		}
	}
	for (int i = 0; i < o->threads; i++)
		pthread_join(w[i].th, NULL);
	t1 = now_s();
	if (atomic_load(&r->pin_failed)) {
		fprintf(stderr, "llcbench: cannot pin a thread to CPU %d: sched_setaffinity: %s\n",
			atomic_load(&r->pin_failed) - 1, strerror(atomic_load(&r->pin_errno)));
		return 2;
	}
	if (o->mode == MODE_PRIVATE) {
		uint64_t sum = 0;
		for (int i = 0; i < o->threads; i++)
			sum += r->priv_steps[i];
		steps = sum / (uint64_t)o->threads;
		secs = t1 - t0;
	} else {
		steps = r->steps;
		secs = t1 - (o->mode == MODE_TRIAD ? r->t_end - o->seconds : t0);
	}
	if (secs <= 0)
		secs = 1e-9;

	double sps = (double)steps / secs;
	double gbs = o->mode == MODE_TRIAD ? sps * 4.0 * (double)r->triad_n * sizeof(double) / 1e9 : 0;
	int ok = !atomic_load(&r->bad);
	char cpus[4096] = "none";
	size_t off = 0;
	for (int i = 0; i < o->ncpus && off < sizeof(cpus) - 16; i++)
		off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", i ? "," : "", o->cpus[i]);

	if (o->line_format)
		printf("LLCBENCH tag=%s mode=%s threads=%d cpus=%s seconds=%.3f steps=%llu "
		       "steps_per_s=%.1f gb_per_s=%.3f ws_kb=%ld exchange=%d buffer_mb=%ld ok=%d\n",
		       o->tag ? o->tag : "-", mode_names[o->mode], o->threads, cpus, secs,
		       (unsigned long long)steps, sps, gbs, o->ws_kb, o->exchange,
		       o->mode == MODE_TRIAD ? o->buffer_mb : 0, ok);
	else
		printf("{\"tag\":\"%s\",\"mode\":\"%s\",\"threads\":%d,\"cpus\":\"%s\",\"seconds\":%.3f,"
		       "\"steps\":%llu,\"steps_per_s\":%.1f,\"gb_per_s\":%.3f,\"ws_kb\":%ld,"
		       "\"exchange\":%d,\"buffer_mb\":%ld,\"ok\":%s}\n",
		       o->tag ? o->tag : "", mode_names[o->mode], o->threads, cpus, secs,
		       (unsigned long long)steps, sps, gbs, o->ws_kb, o->exchange,
		       o->mode == MODE_TRIAD ? o->buffer_mb : 0, ok ? "true" : "false");
	fflush(stdout);
	if (!ok)
		fprintf(stderr, "llcbench: data check failed (a value read was not the one written)\n");
	return ok ? 0 : 1;
}

/* ------------------------------------------------------------------------
 * pingpong */

struct pp {
	_Alignas(LINE) atomic_uint_fast64_t ball;
	_Alignas(LINE) atomic_int go;
	int cpu_a, cpu_b;
	double ms;
	double rtt_ns[64];
	int batches;
	int fail;
};

static void *pp_responder(void *arg)
{
	struct pp *p = arg;

	if (pin_self(p->cpu_b) != 0) {
		p->fail = 1;
		atomic_store(&p->go, -1);
		return NULL;
	}
	atomic_store(&p->go, 1);
	for (;;) {
		uint64_t v = atomic_load_explicit(&p->ball, memory_order_acquire);
		if (v == UINT64_MAX)
			break;
		if (v & 1)
			atomic_store_explicit(&p->ball, v + 1, memory_order_release);
		else
			cpu_relax();
	}
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* median one-way latency in ns between two CPUs, -1 on failure */
static double pp_pair(int a, int b, double ms)
{
	struct pp *p = xalloc(sizeof(*p));
	pthread_t th;
	double res = -1, t_end;
	int nb = 0;

	p->cpu_a = a;
	p->cpu_b = b;
	if (pin_self(a) != 0)
		goto out;
	if (pthread_create(&th, NULL, pp_responder, p) != 0)
		goto out;
	while (atomic_load(&p->go) == 0)
		sched_yield();
	if (atomic_load(&p->go) < 0) {
		pthread_join(th, NULL);
		goto out;
	}
	t_end = now_s() + ms / 1000.0;
	uint64_t v = 0;
	/* 64 batches, each of as many round trips as fit in ms/64 */
	for (nb = 0; nb < 64; nb++) {
		double t0 = now_s(), tb = t0 + (t_end - t0) / (64 - nb);
		uint64_t trips = 0;
		double t1;
		do {
			for (int k = 0; k < 32; k++) {
				atomic_store_explicit(&p->ball, v + 1, memory_order_release);
				while (atomic_load_explicit(&p->ball, memory_order_acquire) != v + 2)
					cpu_relax();
				v += 2;
			}
			trips += 32;
			t1 = now_s();
		} while (t1 < tb);
		p->rtt_ns[nb] = (t1 - t0) * 1e9 / (double)trips;
	}
	atomic_store_explicit(&p->ball, UINT64_MAX, memory_order_release);
	pthread_join(th, NULL);
	qsort(p->rtt_ns, 64, sizeof(double), cmp_dbl);
	res = (p->rtt_ns[31] + p->rtt_ns[32]) / 4.0; /* half the median round trip */
out:
	free(p);
	return res;
}

static int cmd_pingpong(const int *cpus, int n, double ms_per_pair, double budget_s)
{
	int pairs = n * (n - 1) / 2;
	double ms = ms_per_pair;
	double *m = xalloc(sizeof(double) * (size_t)n * (size_t)n);

	if (n < 2)
		die("pingpong: --cpus needs at least 2 CPUs");
	if (ms <= 0) {
		ms = budget_s * 1000.0 / pairs;
		if (ms > 200)
			ms = 200;
		if (ms < 2)
			ms = 2;
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			double ns = pp_pair(cpus[i], cpus[j], ms);
			if (ns < 0) {
				fprintf(stderr, "llcbench: pingpong: cannot pin to CPUs %d and %d\n", cpus[i], cpus[j]);
				return 2;
			}
			m[i * n + j] = m[j * n + i] = ns;
		}
	printf("{\"cpus\":[");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", cpus[i]);
	printf("],\"ms_per_pair\":%.1f,\"ns\":[", ms);
	for (int i = 0; i < n; i++) {
		printf("%s[", i ? "," : "");
		for (int j = 0; j < n; j++)
			printf("%s%.1f", j ? "," : "", m[i * n + j]);
		printf("]");
	}
	printf("]}\n");
	free(m);
	return 0;
}

/* ------------------------------------------------------------------------
 * kvm */

static int cmd_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm, api;

	if (fd < 0) {
		printf("kvm not usable: open /dev/kvm: %s\n", strerror(errno));
		return 1;
	}
	api = ioctl(fd, 0xAE00 /* KVM_GET_API_VERSION */, 0);
	if (api != 12) {
		printf("kvm not usable: KVM_GET_API_VERSION gave %d\n", api);
		close(fd);
		return 1;
	}
	vm = ioctl(fd, 0xAE01 /* KVM_CREATE_VM */, 0);
	if (vm < 0) {
		printf("kvm not usable: KVM_CREATE_VM: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	close(vm);
	close(fd);
	/* KVM-PVM (a kernel without kvm_intel/kvm_amd) opens /dev/kvm and
	 * creates VMs, but a stock guest hangs in it: hardware KVM only */
	if (access("/sys/module/kvm_intel", F_OK) != 0 && access("/sys/module/kvm_amd", F_OK) != 0) {
		printf("kvm not usable: /dev/kvm works but neither kvm_intel nor kvm_amd is loaded%s\n",
		       access("/sys/module/kvm_pvm", F_OK) == 0 ? " (KVM-PVM)" : "");
		return 1;
	}
	printf("kvm usable\n");
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: llcbench run [--mode share|triad|private] [--threads N] [--cpus LIST|none]\n"
	      "                    [--seconds S] [--max-steps N] [--ws-kb K] [--exchange LINES]\n"
	      "                    [--buffer-mb M] [--format json|line] [--tag TEXT]\n"
	      "       llcbench pingpong --cpus LIST [--ms-per-pair MS] [--budget-s S]\n"
	      "       llcbench kvm\n",
	      f);
}

int main(int argc, char **argv)
{
	static struct opts o = {
		.mode = MODE_SHARE, .threads = 2, .seconds = 2.0, .max_steps = UINT64_MAX,
		.ws_kb = 256, .exchange = 16, .buffer_mb = 1024,
	};
	int pp = 0, kvm = 0, cpus_given = 0;
	double ms_per_pair = 0, budget_s = 10;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "run"))
		;
	else if (!strcmp(argv[1], "pingpong"))
		pp = 1;
	else if (!strcmp(argv[1], "kvm"))
		kvm = 1;
	else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	} else
		die("unknown command '%s' (run, pingpong, kvm)", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("%s needs a value", a);
		i++;
		if (!strcmp(a, "--mode")) {
			if (!strcmp(v, "share")) o.mode = MODE_SHARE;
			else if (!strcmp(v, "triad")) o.mode = MODE_TRIAD;
			else if (!strcmp(v, "private")) o.mode = MODE_PRIVATE;
			else die("--mode '%s': want share, triad or private", v);
		} else if (!strcmp(a, "--threads")) {
			o.threads = (int)parse_num(a, v, 1, MAX_THREADS);
		} else if (!strcmp(a, "--cpus")) {
			cpus_given = 1;
			if (!strcmp(v, "none"))
				o.ncpus = 0;
			else if ((o.ncpus = cpulist_parse(v, MAX_CPUS, o.cpus, MAX_THREADS)) < 0)
				die("--cpus '%s': want a CPU list such as 0,2-3, or none", v);
		} else if (!strcmp(a, "--seconds")) {
			o.seconds = parse_dbl(a, v, 0.01, 3600);
		} else if (!strcmp(a, "--max-steps")) {
			o.max_steps = (uint64_t)parse_num(a, v, 1, 1L << 62);
		} else if (!strcmp(a, "--ws-kb")) {
			o.ws_kb = parse_num(a, v, 0, 64L * 1024 * 1024);
		} else if (!strcmp(a, "--exchange")) {
			o.exchange = (int)parse_num(a, v, 1, 65536);
		} else if (!strcmp(a, "--buffer-mb")) {
			o.buffer_mb = parse_num(a, v, 1, 1L << 20);
		} else if (!strcmp(a, "--format")) {
			if (!strcmp(v, "json")) o.line_format = 0;
			else if (!strcmp(v, "line")) o.line_format = 1;
			else die("--format '%s': want json or line", v);
		} else if (!strcmp(a, "--tag")) {
			for (const char *c = v; *c; c++)
				if (*c == '"' || *c == '\\' || *c == ' ' || (unsigned char)*c < 0x20)
					die("--tag '%s': no spaces, quotes or backslashes", v);
			o.tag = v;
		} else if (!strcmp(a, "--ms-per-pair")) {
			ms_per_pair = parse_dbl(a, v, 0.1, 10000);
		} else if (!strcmp(a, "--budget-s")) {
			budget_s = parse_dbl(a, v, 0.01, 3600);
		} else {
			die("unknown option '%s'", a);
		}
	}
	if (kvm)
		return cmd_kvm();
	if (pp) {
		if (!cpus_given || o.ncpus < 2)
			die("pingpong: --cpus LIST with at least 2 CPUs is required");
		return cmd_pingpong(o.cpus, o.ncpus, ms_per_pair, budget_s);
	}
	if (o.ncpus && o.ncpus != o.threads) {
		die("--cpus gives %d CPUs for %d threads: one CPU per thread, or none", o.ncpus, o.threads);
	}
	return cmd_run(&o);
}
