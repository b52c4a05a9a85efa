// SPDX-License-Identifier: GPL-2.0-or-later
/* procstat.c - per-thread and per-CPU samples from /proc. */
#include "procstat.h"
#include "names.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#define STAT_BUF 1536           /* 52 fields of <= 20 digits + a 64-byte comm */
#define SCHEDSTAT_BUF 96        /* three u64 */
#define CPUSTAT_BUF_MIN 4096
#define CPUSTAT_BUF_MAX (64 * 1024 * 1024)

struct procstat {
	char root[PATH_MAX];
	uint64_t tick_ns;
	int stat_fd;                    /* <root>/stat, opened on first use */
	char *cpubuf;
	size_t cpubuf_len;
};

struct procstat_thread {
	int tid;
	int stat_fd;
	int sched_fd;                   /* -1 without schedstat */
	uint64_t tick_ns;
};

static bool
is_gone_errno(int e)
{
	return e == ENOENT || e == ESRCH;
}

struct procstat *
procstat_new(const char *procroot, struct llcd_err *err)
{
	struct procstat *ps;
	long hz;

	if (procroot == NULL)
		procroot = "/proc";
	hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0) {
		llcd_err_set(err, "sysconf(_SC_CLK_TCK) failed");
		return NULL;
	}
	if ((ps = calloc(1, sizeof(*ps))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	if (snprintf(ps->root, sizeof(ps->root), "%s", procroot) >= (int)sizeof(ps->root)) {
		llcd_err_set(err, "proc root too long: %s", procroot);
		free(ps);
		return NULL;
	}
	ps->tick_ns = 1000000000ULL / (uint64_t)hz;
	ps->stat_fd = -1;
	return ps;
}

void
procstat_free(struct procstat *ps)
{
	if (ps == NULL)
		return;
	if (ps->stat_fd >= 0)
		close(ps->stat_fd);
	free(ps->cpubuf);
	free(ps);
}

uint64_t
procstat_tick_ns(const struct procstat *ps)
{
	return ps->tick_ns;
}

LLCD_NAME_FUNCTION(procstat_kind_name, enum procstat_kind, PROCSTAT_IOTHREAD,
    [PROCSTAT_VCPU] = "vcpu", [PROCSTAT_EMULATOR] = "emulator",
    [PROCSTAT_IOTHREAD] = "iothread")

LLCD_NAME_FUNCTION(procstat_status_name, enum procstat_status, PROCSTAT_ERROR,
    [PROCSTAT_OK] = "ok", [PROCSTAT_GONE] = "gone", [PROCSTAT_ERROR] = "error")

/* Parse a decimal int of at most 9 digits at *p; advance *p. */
static bool
parse_small_uint(const char **p, int *out)
{
	const char *s = *p;
	int v = 0, nd = 0;

	while (isdigit((unsigned char)*s) && nd < 9) {
		v = v * 10 + (*s - '0');
		s++;
		nd++;
	}
	if (nd == 0 || isdigit((unsigned char)*s))
		return false;
	*p = s;
	*out = v;
	return true;
}

enum procstat_kind
procstat_classify(const char *comm, int *index)
{
	const char *p;
	int n;

	*index = -1;
	/* "CPU <n>/KVM" or "CPU <n>/TCG" and nothing after */
	if (strncmp(comm, "CPU ", 4) == 0) {
		p = comm + 4;
		if (parse_small_uint(&p, &n) &&
		    (strcmp(p, "/KVM") == 0 || strcmp(p, "/TCG") == 0)) {
			*index = n;
			return PROCSTAT_VCPU;
		}
	}
	/* "IO iothread<n>": libvirt names its <iothread> objects iothread<id> */
	if (strncmp(comm, "IO iothread", 11) == 0) {
		p = comm + 11;
		if (parse_small_uint(&p, &n) && *p == '\0') {
			*index = n;
			return PROCSTAT_IOTHREAD;
		}
	}
	return PROCSTAT_EMULATOR;
}

/* Read a small file in one go; returns bytes or -1 with errno. */
static ssize_t
read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len);
	if (n < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return n;
}

static int
task_cmp(const void *a, const void *b)
{
	const struct procstat_task *x = a, *y = b;

	if ((x->kind == PROCSTAT_VCPU) != (y->kind == PROCSTAT_VCPU))
		return x->kind == PROCSTAT_VCPU ? -1 : 1;
	if (x->kind == PROCSTAT_VCPU && x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

enum procstat_status
procstat_list_tasks(struct procstat *ps, int pid, struct procstat_task **tasks,
    int *n, struct llcd_err *err)
{
	struct procstat_task *v = NULL, *nv;
	struct dirent *de;
	char path[PATH_MAX + 64], comm[PROCSTAT_COMM_MAX];
	DIR *d;
	int cnt = 0, cap = 0, tid;
	ssize_t len;
	const char *p;

	*tasks = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/%d/task", ps->root, pid);
	if ((d = opendir(path)) == NULL) {
		if (is_gone_errno(errno))
			return PROCSTAT_GONE;
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return PROCSTAT_ERROR;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		p = de->d_name;
		if (!parse_small_uint(&p, &tid) || *p != '\0' || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", ps->root, pid, tid);
		if ((len = read_small(path, comm, sizeof(comm) - 1)) < 0) {
			if (is_gone_errno(errno))
				continue;       /* exited meanwhile */
			llcd_err_set(err, "%s: %s", path, strerror(errno));
			goto fail;
		}
		comm[len] = '\0';
		if (len > 0 && comm[len - 1] == '\n')
			comm[len - 1] = '\0';
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(v, (size_t)cap * sizeof(*v))) == NULL) {
				llcd_err_set(err, "out of memory");
				goto fail;
			}
			v = nv;
		}
		v[cnt].tid = tid;
		v[cnt].kind = procstat_classify(comm, &v[cnt].index);
		memcpy(v[cnt].comm, comm, sizeof(comm));
		cnt++;
	}
	if (errno != 0) {
		if (is_gone_errno(errno)) {
			closedir(d);
			free(v);
			return PROCSTAT_GONE;
		}
		llcd_err_set(err, "reading %s/%d/task: %s", ps->root, pid, strerror(errno));
		goto fail;
	}
	closedir(d);
	if (cnt == 0) {                 /* a process has at least one thread */
		free(v);
		return PROCSTAT_GONE;
	}
	qsort(v, (size_t)cnt, sizeof(*v), task_cmp);
	*tasks = v;
	*n = cnt;
	return PROCSTAT_OK;
fail:
	closedir(d);
	free(v);
	return PROCSTAT_ERROR;
}

struct procstat_thread *
procstat_thread_open(struct procstat *ps, int pid, int tid,
    enum procstat_status *st, struct llcd_err *err)
{
	struct procstat_thread *t;
	char path[PATH_MAX + 64];

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		*st = PROCSTAT_ERROR;
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	t->tid = tid;
	t->tick_ns = ps->tick_ns;
	t->sched_fd = -1;
	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", ps->root, pid, tid);
	if ((t->stat_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto fail_errno;
	snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", ps->root, pid, tid);
	if ((t->sched_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			goto fail_errno;
		/* No schedstat file: CONFIG_SCHED_INFO=n, or the thread went
		 * away between the two opens; the next read tells which. */
	}
	*st = PROCSTAT_OK;
	return t;
fail_errno:
	*st = is_gone_errno(errno) ? PROCSTAT_GONE : PROCSTAT_ERROR;
	if (*st == PROCSTAT_ERROR)
		llcd_err_set(err, "%s: %s", path, strerror(errno));
	procstat_thread_free(t);
	return NULL;
}

void
procstat_thread_free(struct procstat_thread *t)
{
	if (t == NULL)
		return;
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	if (t->sched_fd >= 0)
		close(t->sched_fd);
	free(t);
}

int
procstat_thread_tid(const struct procstat_thread *t)
{
	return t->tid;
}

struct procstat_proc {
	int task_fd;                    /* <root>/<pid>/task (procfs only), or -1 */
	struct procstat_thread *main;   /* the main thread's files otherwise */
};

struct procstat_proc *
procstat_proc_open(struct procstat *ps, int pid, enum procstat_status *st, struct llcd_err *err)
{
	struct procstat_proc *p;
	char path[PATH_MAX + 64];
	struct statfs sf;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		*st = PROCSTAT_ERROR;
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%d/task", ps->root, pid);
	if ((p->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		*st = is_gone_errno(errno) ? PROCSTAT_GONE : PROCSTAT_ERROR;
		if (*st == PROCSTAT_ERROR)
			llcd_err_set(err, "%s: %s", path, strerror(errno));
		free(p);
		return NULL;
	}
	if (fstatfs(p->task_fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) {
		*st = PROCSTAT_OK;
		return p;
	}
	close(p->task_fd);
	p->task_fd = -1;
	if ((p->main = procstat_thread_open(ps, pid, pid, st, err)) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

void
procstat_proc_free(struct procstat_proc *p)
{
	if (p == NULL)
		return;
	if (p->task_fd >= 0)
		close(p->task_fd);
	procstat_thread_free(p->main);
	free(p);
}

bool
procstat_proc_by_nlink(const struct procstat_proc *p)
{
	return p->task_fd >= 0;
}

enum procstat_status
procstat_proc_nthreads(struct procstat_proc *p, int *n, struct llcd_err *err)
{
	struct procstat_sample s;
	struct stat sb;
	enum procstat_status st;

	*n = 0;
	if (p->task_fd < 0) {
		if ((st = procstat_thread_read(p->main, &s, err)) == PROCSTAT_OK)
			*n = s.num_threads;
		return st;
	}
	if (fstat(p->task_fd, &sb) < 0) {
		if (is_gone_errno(errno))
			return PROCSTAT_GONE;
		llcd_err_set(err, "fstat of a task directory: %s", strerror(errno));
		return PROCSTAT_ERROR;
	}
	/* "." and "..", then one link per thread; a process that is gone
	 * has only the two */
	if (sb.st_nlink <= 2)
		return PROCSTAT_GONE;
	*n = sb.st_nlink - 2 > INT_MAX ? INT_MAX : (int)(sb.st_nlink - 2);
	return PROCSTAT_OK;
}

/* Parse an unsigned decimal u64 token at *p (after spaces). */
static bool
parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int nd = 0;

	while (s < end && *s == ' ')
		s++;
	while (s < end && isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
		nd++;
	}
	if (nd == 0)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* Parse one stat field: a decimal that may be negative. Fields such as
 * rsslim are u64 (18446744073709551615), so the magnitude is a u64. */
static bool
parse_field(const char **p, const char *end, uint64_t *mag, bool *neg)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	*neg = false;
	if (s < end && *s == '-') {
		*neg = true;
		s++;
	}
	if (!parse_u64(&s, end, mag))
		return false;
	*p = s;
	return true;
}

int
procstat_parse_stat(const char *buf, size_t len, uint64_t tick_ns,
    struct procstat_sample *out, struct llcd_err *err)
{
	const char *end = buf + len, *p = NULL, *s;
	uint64_t v, ticks = 0;
	bool neg;
	int field;

	/* "pid (comm) state ...": comm may hold spaces and parentheses, so
	 * the fields start after the LAST ')'. */
	for (s = buf; s < end; s++)
		if (*s == ')')
			p = s;
	if (p == NULL || p + 2 >= end || p[1] != ' ')
		return llcd_err_set(err, "stat: no ') ' after the command name");
	p += 2;
	out->state = *p++;
	if (!isalpha((unsigned char)out->state))
		return llcd_err_set(err, "stat: bad state '%c'", out->state);
	for (field = 4; field <= 39; field++) {
		if (!parse_field(&p, end, &v, &neg))
			return llcd_err_set(err, "stat: field %d missing or not a number", field);
		switch (field) {
		case 14:
		case 15:
			if (neg)
				return llcd_err_set(err, "stat: field %d (utime/stime) negative", field);
			ticks += v;
			break;
		case 20:
			/* 0 for a thread past __exit_signal (no sighand any
			 * more) but not yet reaped: the caller reports gone */
			if (neg || v > INT_MAX)
				return llcd_err_set(err, "stat: field 20 (num_threads) out of range");
			out->num_threads = (int)v;
			break;
		case 39:
			if (neg || v >= CPUSET_MAX)
				return llcd_err_set(err, "stat: field 39 (processor) out of range");
			out->last_cpu = (int)v;
			break;
		default:
			break;
		}
	}
	out->runtime_ns = ticks * tick_ns;
	out->wait_ns = 0;
	out->runtime_from_ticks = true;
	return 0;
}

int
procstat_parse_schedstat(const char *buf, size_t len, uint64_t *run_ns,
    uint64_t *wait_ns, struct llcd_err *err)
{
	const char *p = buf, *end = buf + len;
	uint64_t slices;

	if (!parse_u64(&p, end, run_ns) || !parse_u64(&p, end, wait_ns) ||
	    !parse_u64(&p, end, &slices))
		return llcd_err_set(err, "schedstat: expected three numbers");
	return 0;
}

/* pread a whole small proc file at offset 0 into buf (NUL-terminated). */
static ssize_t
pread_all(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = pread(fd, buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

enum procstat_status
procstat_thread_read(struct procstat_thread *t, struct procstat_sample *out,
    struct llcd_err *err)
{
	char sbuf[STAT_BUF], qbuf[SCHEDSTAT_BUF];
	uint64_t run, wait;
	ssize_t n;

	if ((n = pread_all(t->stat_fd, sbuf, sizeof(sbuf))) < 0)
		goto fail_errno;
	if ((size_t)n >= sizeof(sbuf) - 1) {
		llcd_err_set(err, "tid %d: stat longer than %zu bytes", t->tid, sizeof(sbuf) - 1);
		return PROCSTAT_ERROR;
	}
	if (n == 0)
		return PROCSTAT_GONE;
	if (procstat_parse_stat(sbuf, (size_t)n, t->tick_ns, out, err) < 0) {
		llcd_err_prefix(err, "tid %d", t->tid);
		return PROCSTAT_ERROR;
	}
	if (out->num_threads == 0 || out->state == 'X')
		return PROCSTAT_GONE;   /* exiting: its files vanish next */
	if (t->sched_fd < 0)
		return PROCSTAT_OK;
	if ((n = pread_all(t->sched_fd, qbuf, sizeof(qbuf))) < 0)
		goto fail_errno;
	if (procstat_parse_schedstat(qbuf, (size_t)n, &run, &wait, err) < 0) {
		llcd_err_prefix(err, "tid %d", t->tid);
		return PROCSTAT_ERROR;
	}
	out->runtime_ns = run;
	out->wait_ns = wait;
	out->runtime_from_ticks = false;
	return PROCSTAT_OK;
fail_errno:
	if (is_gone_errno(errno))
		return PROCSTAT_GONE;
	llcd_err_set(err, "tid %d: read: %s", t->tid, strerror(errno));
	return PROCSTAT_ERROR;
}

int
procstat_parse_cpu_stat(const char *buf, size_t len, uint64_t tick_ns,
    uint64_t *busy_ns, int ncpus, int *ncpus_seen, bool *complete,
    struct llcd_err *err)
{
	const char *p = buf, *end = buf + len, *eol;
	uint64_t f[8];
	int cpu, seen = 0, i, nf, line = 0;
	bool done = false;

	for (i = 0; i < ncpus; i++)
		busy_ns[i] = 0;
	while (p < end) {
		line++;
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			break;                  /* a partial last line */
		if (end - p < 3 || memcmp(p, "cpu", 3) != 0) {
			if (line == 1)
				return llcd_err_set(err, "stat: line 1 is not the cpu line");
			done = true;            /* past the cpu lines */
			break;
		}
		if (p[3] == ' ') {              /* the aggregate line */
			p = eol + 1;
			continue;
		}
		p += 3;
		if (!parse_small_uint(&p, &cpu) || *p != ' ')
			return llcd_err_set(err, "stat: line %d: bad cpu number", line);
		/* user nice system idle iowait irq softirq steal [guest guest_nice] */
		for (nf = 0; nf < 8; nf++)
			if (!parse_u64(&p, eol, &f[nf]))
				break;
		if (nf < 8)
			return llcd_err_set(err, "stat: line %d: cpu%d has %d fields, need 8", line, cpu, nf);
		if (cpu < ncpus)
			busy_ns[cpu] = (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * tick_ns;
		if (cpu + 1 > seen)
			seen = cpu + 1;
		p = eol + 1;
	}
	if (len == 0)
		return llcd_err_set(err, "stat: empty");
	if (ncpus_seen != NULL)
		*ncpus_seen = seen;
	if (complete != NULL)
		*complete = done;
	return 0;
}

int
procstat_cpu_busy(struct procstat *ps, uint64_t *busy_ns, int ncpus,
    int *ncpus_seen, struct llcd_err *err)
{
	char path[PATH_MAX + 8];
	bool complete;
	ssize_t n;
	char *nb;

	if (ps->stat_fd < 0) {
		snprintf(path, sizeof(path), "%s/stat", ps->root);
		if ((ps->stat_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return llcd_err_set(err, "%s: %s", path, strerror(errno));
	}
	if (ps->cpubuf == NULL) {
		if ((ps->cpubuf = malloc(CPUSTAT_BUF_MIN)) == NULL)
			return llcd_err_set(err, "out of memory");
		ps->cpubuf_len = CPUSTAT_BUF_MIN;
	}
	for (;;) {
		/* The kernel builds the whole file on each read; we only need
		 * the cpu lines at its start, so a buffer that holds them and
		 * the line after is enough (the intr line can be huge). */
		if ((n = pread_all(ps->stat_fd, ps->cpubuf, ps->cpubuf_len)) < 0)
			return llcd_err_set(err, "%s/stat: read: %s", ps->root, strerror(errno));
		if (procstat_parse_cpu_stat(ps->cpubuf, (size_t)n, ps->tick_ns,
		    busy_ns, ncpus, ncpus_seen, &complete, err) < 0)
			return llcd_err_prefix(err, "%s", ps->root);
		if (complete || (size_t)n < ps->cpubuf_len - 1)
			return 0;
		if (ps->cpubuf_len >= CPUSTAT_BUF_MAX)
			return llcd_err_set(err, "%s/stat: cpu lines exceed %d bytes", ps->root, CPUSTAT_BUF_MAX);
		if ((nb = realloc(ps->cpubuf, ps->cpubuf_len * 2)) == NULL)
			return llcd_err_set(err, "out of memory");
		ps->cpubuf = nb;
		ps->cpubuf_len *= 2;
	}
}

enum procstat_status
procstat_affinity(int tid, struct cpuset *out, struct llcd_err *err)
{
	/* the kernel's mask, read as words (what cpu_set_t is): one pass
	 * over the set bits, not a test per possible CPU */
	unsigned long set[CPUSET_MAX / (8 * sizeof(unsigned long))];
	const int bits = (int)(8 * sizeof(unsigned long));

	memset(set, 0, sizeof(set));
	if (sched_getaffinity(tid, sizeof(set), (cpu_set_t *)(void *)set) < 0) {
		int e = errno;
		if (e == ESRCH)
			return PROCSTAT_GONE;
		llcd_err_set(err, "tid %d: sched_getaffinity: %s", tid, strerror(e));
		return PROCSTAT_ERROR;
	}
	cpuset_zero(out);
	for (int i = 0; i < (int)(sizeof(set) / sizeof(set[0])); i++)
		for (unsigned long b = set[i]; b != 0; b &= b - 1)
			cpuset_set(out, i * bits + __builtin_ctzl(b));
	return PROCSTAT_OK;
}
