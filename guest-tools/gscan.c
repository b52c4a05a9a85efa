// SPDX-License-Identifier: GPL-2.0-or-later
/* gscan.c - /proc snapshots and hot processes (see gscan.h). */
#include "gscan.h"
#include "alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PF_KTHREAD 0x00200000UL

LLCD_DEFINE_NEW(gscan_snap_new, struct gscan_snap)

void
gscan_snap_free(struct gscan_snap *s)
{
	if (!s)
		return;
	free(s->procs);
	free(s->threads);
	free(s);
}

int
gscan_parse_stat(const char *line, char *comm, unsigned long *flags,
                 uint64_t *ticks, int *cpu)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	const char *p;
	unsigned long long utime = 0, stime = 0;
	size_t n;
	int field = 3;

	if (!open || !close || close < open || close[1] != ' ')
		return -1;
	n = (size_t)(close - open - 1);
	if (n >= GSCAN_COMM)
		n = GSCAN_COMM - 1;
	if (comm) {
		memcpy(comm, open + 1, n);
		comm[n] = '\0';
	}
	*flags = 0;
	*cpu = -1;
	p = close + 2;
	/* fields 3 (state) .. 39 (processor), space separated */
	while (*p && field <= 39) {
		char *end;
		unsigned long long v;

		if (field > 3) {
			v = strtoull(p, &end, 10);     /* takes a sign too */
			if (end == p)
				return -1;
			if (field == 9)
				*flags = (unsigned long)v;
			else if (field == 14)
				utime = v;
			else if (field == 15)
				stime = v;
			else if (field == 39)
				*cpu = v > 1000000 ? -1 : (int)v;
			p = end;
		} else {
			p += strcspn(p, " ");
		}
		if (*p == ' ')
			p++;
		field++;
	}
	if (field <= 15)
		return -1;
	*ticks = utime + stime;
	return 0;
}

/* Read <dir>/stat into buf; -1 if it vanished. */
static int
read_stat(int dirfd, const char *rel, char *buf, size_t len)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int
numeric(const char *s)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v <= 0 || v > 0x7fffffff)
		return -1;
	return (int)v;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Numeric entries of a directory, sorted; *n of them (malloc'd). */
static int *
list_numeric(int dirfd, const char *rel, int *n)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	int *v = NULL, cap = 0;

	*n = 0;
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	while ((e = readdir(d))) {
		int id = numeric(e->d_name);

		if (id < 0)
			continue;
		if (*n == cap) {
			int *nv = realloc(v, sizeof(int) * (size_t)(cap ? cap * 2 : 64));

			if (!nv)
				break;
			v = nv;
			cap = cap ? cap * 2 : 64;
		}
		v[(*n)++] = id;
	}
	closedir(d);
	if (v)
		qsort(v, (size_t)*n, sizeof(int), cmp_int);
	return v;
}

static int
grow(void **p, int *cap, int need, size_t size)
{
	int nc = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, size * (size_t)nc);
	if (!np)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

int
gscan_read(struct gscan_snap *s, const char *proc_root, uint64_t t_ns,
           struct llcd_err *err)
{
	int root = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int *pids, npids;
	char buf[2048], rel[64];

	if (root < 0)
		return llcd_err_set(err, "%s: %s", proc_root, strerror(errno));
	s->t_ns = t_ns;
	s->nprocs = 0;
	s->nthreads = 0;
	pids = list_numeric(root, ".", &npids);
	for (int i = 0; i < npids; i++) {
		struct gscan_proc *p;
		unsigned long flags;
		uint64_t ticks;
		int cpu, *tids, ntids;
		char comm[GSCAN_COMM];

		snprintf(rel, sizeof(rel), "%d/stat", pids[i]);
		if (read_stat(root, rel, buf, sizeof(buf)) < 0 ||
		    gscan_parse_stat(buf, comm, &flags, &ticks, &cpu) < 0)
			continue;
		if (flags & PF_KTHREAD)
			continue;
		snprintf(rel, sizeof(rel), "%d/task", pids[i]);
		tids = list_numeric(root, rel, &ntids);
		if (!tids)
			continue;
		if (grow((void **)&s->procs, &s->cap_procs, s->nprocs + 1, sizeof(*s->procs)) < 0 ||
		    grow((void **)&s->threads, &s->cap_threads, s->nthreads + ntids,
		         sizeof(*s->threads)) < 0 || s->nthreads + ntids > GSCAN_MAX_THREADS) {
			free(tids);
			free(pids);
			close(root);
			return llcd_err_set(err, "%s: too many threads to track", proc_root);
		}
		p = &s->procs[s->nprocs];
		p->pid = pids[i];
		memcpy(p->comm, comm, sizeof(comm));
		p->first = s->nthreads;
		p->nth = 0;
		for (int k = 0; k < ntids; k++) {
			struct gscan_thread *t = &s->threads[s->nthreads];

			snprintf(rel, sizeof(rel), "%d/task/%d/stat", pids[i], tids[k]);
			if (read_stat(root, rel, buf, sizeof(buf)) < 0 ||
			    gscan_parse_stat(buf, NULL, &flags, &t->ticks, &t->cpu) < 0)
				continue;
			t->tid = tids[k];
			s->nthreads++;
			p->nth++;
		}
		free(tids);
		if (p->nth > 0)
			s->nprocs++;
		else
			s->nthreads = p->first;
	}
	free(pids);
	close(root);
	return 0;
}

static int
cmp_proc(const void *key, const void *el)
{
	int pid = *(const int *)key, o = ((const struct gscan_proc *)el)->pid;

	return (pid > o) - (pid < o);
}

const struct gscan_proc *
gscan_find(const struct gscan_snap *s, int pid)
{
	if (!s || s->nprocs == 0)
		return NULL;
	return bsearch(&pid, s->procs, (size_t)s->nprocs, sizeof(*s->procs), cmp_proc);
}

static const struct gscan_thread *
find_thread(const struct gscan_snap *s, const struct gscan_proc *p, int tid)
{
	int lo = 0, hi = p->nth - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct gscan_thread *t = &s->threads[p->first + mid];

		if (t->tid == tid)
			return t;
		if (t->tid < tid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

void
gscan_hotlist_free(struct gscan_hotlist *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		free(l->p[i].th);
	free(l->p);
	l->p = NULL;
	l->n = l->cap = 0;
}

static int
cmp_hot(const void *a, const void *b)
{
	const struct gscan_hot *x = a, *y = b;

	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int
cmp_hot_thread(const void *a, const void *b)
{
	const struct gscan_hot_thread *x = a, *y = b;

	if (x->util != y->util)
		return x->util < y->util ? 1 : -1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int
gscan_hot(const struct gscan_snap *old, const struct gscan_snap *cur,
          const struct gtopo *topo, const struct gscan_opts *o,
          struct gscan_hotlist *out, struct llcd_err *err)
{
	double secs = (double)(cur->t_ns - old->t_ns) / 1e9;

	for (int i = 0; i < out->n; i++)
		free(out->p[i].th);
	out->n = 0;
	if (cur->t_ns <= old->t_ns || o->hz <= 0)
		return 0;
	for (int i = 0; i < cur->nprocs; i++) {
		const struct gscan_proc *p = &cur->procs[i];
		const struct gscan_proc *op = gscan_find(old, p->pid);
		struct gscan_hot h;
		int busy = 0;
		double share = 0;

		/* a reused pid with another name is another process */
		if (op && strcmp(op->comm, p->comm) != 0)
			op = NULL;
		memset(&h, 0, sizeof(h));
		for (int k = 0; k < p->nth; k++) {
			const struct gscan_thread *t = &cur->threads[p->first + k];
			const struct gscan_thread *ot = op ? find_thread(old, op, t->tid) : NULL;
			uint64_t d = ot && ot->ticks <= t->ticks ? t->ticks - ot->ticks : ot ? 0 : t->ticks;
			double u = (double)d / (double)o->hz / secs;

			share += u;
			if (u >= o->busy_share)
				busy++;
		}
		if (share < o->hot_share || busy < 2)
			continue;
		h.pid = p->pid;
		memcpy(h.comm, p->comm, sizeof(h.comm));
		h.nthreads = p->nth;
		h.busy_threads = busy;
		h.share = share;
		h.th = calloc((size_t)p->nth, sizeof(*h.th));
		if (!h.th)
			return llcd_err_set(err, "out of memory");
		h.nth = p->nth;
		for (int k = 0; k < p->nth; k++) {
			const struct gscan_thread *t = &cur->threads[p->first + k];
			const struct gscan_thread *ot = op ? find_thread(old, op, t->tid) : NULL;
			uint64_t d = ot && ot->ticks <= t->ticks ? t->ticks - ot->ticks : ot ? 0 : t->ticks;

			h.th[k].tid = t->tid;
			h.th[k].cpu = t->cpu;
			h.th[k].util = (double)d / (double)o->hz / secs;
			if (h.th[k].util >= o->busy_share && t->cpu >= 0) {
				int l = topo ? gtopo_llc_of(topo, t->cpu) : -1;

				cpuset_set(&h.vcpus, t->cpu);
				if (l >= 0)
					cpuset_set(&h.llcs, l);
			}
		}
		qsort(h.th, (size_t)h.nth, sizeof(*h.th), cmp_hot_thread);
		if (grow((void **)&out->p, &out->cap, out->n + 1, sizeof(*out->p)) < 0) {
			free(h.th);
			return llcd_err_set(err, "out of memory");
		}
		out->p[out->n++] = h;
	}
	if (out->n > 1)
		qsort(out->p, (size_t)out->n, sizeof(*out->p), cmp_hot);
	return 0;
}
