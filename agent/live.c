/* live.c - the live back-end of the agent loop: libvirt + /proc. */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libvirt/libvirt.h>

#include "annotation_xml.h"
#include "guestchan.h"
#include "guestproto.h"
#include "xmlsafe.h"
#include "log.h"
#include "perfcount.h"
#include "procstat.h"
#include "qmp.h"
#include "virt.h"

#define TRANSIENT_STREAK 3              /* periods in a row before backing off */
#define BACKOFF_MAX_PERIODS 64
#define REDISCOVER_PERIODS 10           /* thread-count hint: at most this often */
#define RELIST_RETRY_NS 2000000000ull

struct lvcpu {
	int tid;                        /* 0: thread not found */
	struct procstat_thread *th;
	uint64_t prev_runtime;
	bool have_prev;
	int last_cpu;
	struct cpuset affinity;         /* cached kernel affinity; empty unknown */
	struct cpuset applied;          /* what llcd last pinned; empty: nothing */
	int perf_fd;                    /* instruction counter; -1 none, -2 failed */
	uint64_t prev_instr;
	bool have_instr;
};

struct ldom {
	uint64_t key;
	char uuid[VIRT_UUID_LEN];
	char name[VIRT_NAME_MAX];
	int pid;
	int nvcpus, maxvcpus;
	bool persistent;
	bool fake;                      /* live_add_process */
	struct policy_guest_topo guest;
	bool annotated;
	struct policy_annotation annot;
	char annot_err[LLCD_ERR_MSG];
	bool annot_read;                /* read at least once */
	bool error;                     /* permanent failure */
	char error_msg[LLCD_ERR_MSG];
	bool refused;
	char refuse_msg[POLICY_REASON];
	struct lvcpu *v;                /* maxvcpus */
	int nthreads_seen;
	uint64_t discovered_period;
	bool need_discover, need_annot, need_affinity, obs_dirty;
	bool threads_missing;
	struct cpuset emu_applied;
	struct cpuset emu_pending;      /* an emulator pin that failed transiently */
	int transient_streak;
	uint64_t last_transient_period;
	uint64_t backoff_until;         /* period number */
	bool cs_done;
	int cs_tid;
	bool state_checked;
	bool touched;                   /* llcd tried to pin it (or the state file says so) */
	bool seen;
	struct guestchan *gc;           /* the guest helper's channel, or NULL */
	bool gc_looked;                 /* domain XML searched for the channel */
};

struct live {
	struct live_config cfg;
	char state_path[PATH_MAX];
	bool state_enabled;
	struct virt *virt;
	struct procstat *ps;
	struct coresched *cs;
	struct ldom **doms;
	int ndoms, cap;
	bool need_relist;
	bool listed_once;
	uint64_t relist_due_ns;
	uint64_t now_ns;
	uint64_t period;
	struct live_state saved;        /* state file read at start */
	bool state_dirty;
	int ncpus;
	uint64_t *cpu_prev, *cpu_cur;
	bool have_cpu_prev;
	struct live_stats st;
	enum live_kcas kcas;
	char kcas_detail[256];
	struct cpuset everywhere;       /* topology CPUs this host has online */
	bool counters;                  /* instruction counters are read */
	char counters_reason[256];
};

/* ---- pure helpers ------------------------------------------------------- */

uint64_t
live_uuid_key(const char *uuid)
{
	unsigned char b[16];
	int n = 0;
	uint64_t hi = 0, lo = 0, k;

	for (const char *p = uuid; p && *p; p++) {
		int x;
		if (*p == '-')
			continue;
		if (*p >= '0' && *p <= '9')
			x = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			x = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			x = *p - 'A' + 10;
		else
			return 0;
		if (n >= 32)
			return 0;
		if (n % 2 == 0)
			b[n / 2] = (unsigned char)(x << 4);
		else
			b[n / 2] |= (unsigned char)x;
		n++;
	}
	if (n != 32)
		return 0;
	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | b[i];
		lo = lo << 8 | b[8 + i];
	}
	/* version-4 UUIDs are random in both halves; fold them */
	k = hi ^ (lo * 0x9e3779b97f4a7c15ull);
	return k ? k : 1;
}

uint64_t
live_domain_key(const char *uuid, int pid)
{
	uint64_t k = live_uuid_key(uuid);

	if (k == 0)
		return 0;
	k ^= (uint64_t)(unsigned)pid * 0xff51afd7ed558ccdull;
	return k ? k : 1;
}

void
live_guest_position(const struct policy_guest_topo *g, int vcpu, struct live_vcpu_pos *pos)
{
	int th = g->threads > 0 ? g->threads : 1;
	int co = g->cores > 0 ? g->cores : 1;
	int cl = g->clusters > 0 ? g->clusters : 1;
	int di = g->dies > 0 ? g->dies : 1;

	pos->thread = vcpu % th;
	pos->core = (vcpu / th) % co;
	pos->cluster = (vcpu / (th * co)) % cl;
	pos->die = (vcpu / (th * co * cl)) % di;
	pos->socket = vcpu / (th * co * cl * di);
}

static void
guest_topo(const struct virt_topology *t, int maxvcpus, struct policy_guest_topo *g)
{
	if (t->sockets == 0 && t->dies == 0 && t->clusters == 0 && t->cores == 0 && t->threads == 0) {
		/* no <topology>: QEMU's -smp N gives N sockets of one core */
		g->sockets = maxvcpus > 0 ? maxvcpus : 1;
		g->dies = g->clusters = g->cores = g->threads = 1;
		return;
	}
	g->sockets = t->sockets > 0 ? t->sockets : 1;
	g->dies = t->dies > 0 ? t->dies : 1;
	g->clusters = t->clusters > 0 ? t->clusters : 1;
	g->cores = t->cores > 0 ? t->cores : 1;
	g->threads = t->threads > 0 ? t->threads : 1;
}

const char *
live_kcas_name(enum live_kcas k)
{
	switch (k) {
	case LIVE_KCAS_ABSENT: return "absent";
	case LIVE_KCAS_DISABLED: return "disabled";
	case LIVE_KCAS_ENABLED: return "enabled";
	}
	return "?";
}

enum live_kcas
live_kernel_cas(const char *dir, char *detail, size_t len)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	if (dir == NULL)
		dir = LIVE_DEFAULT_KCAS_ROOT;
	if (detail && len)
		detail[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/enabled", dir) >= (int)sizeof(path))
		return LIVE_KCAS_ABSENT;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (detail && len)
			snprintf(detail, len, "no kernel cache-aware scheduling (%s: %s)", path, strerror(errno));
		return LIVE_KCAS_ABSENT;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		if (detail && len)
			snprintf(detail, len, "%s unreadable", path);
		return LIVE_KCAS_ABSENT;
	}
	buf[n] = '\0';
	if (buf[0] == '0') {
		if (detail && len)
			snprintf(detail, len, "kernel cache-aware scheduling present but off (%s = 0)", path);
		return LIVE_KCAS_DISABLED;
	}
	if (detail && len)
		snprintf(detail, len, "kernel cache-aware scheduling on (%s = 1): "
		    "it balances unpinned threads; llcd's pins override it for managed vCPUs", path);
	return LIVE_KCAS_ENABLED;
}

/* ---- state file ----------------------------------------------------------- */

void
live_state_clear(struct live_state *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->doms[i].vcpus);
	free(s->doms);
	s->doms = NULL;
	s->n = 0;
}

static struct live_state_dom *
state_find(const struct live_state *s, uint64_t key)
{
	for (int i = 0; i < s->n; i++)
		if (s->doms[i].key == key)
			return &s->doms[i];
	return NULL;
}

int
live_state_read(const char *path, struct live_state *s, struct llcd_err *err)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = -1;
	struct live_state_dom *cur = NULL;

	memset(s, 0, sizeof(*s));
	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT)
			return 0;
		return llcd_err_set(err, "%s: %s", path, strerror(errno));
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char kw[16], cpus[16384];
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (lineno == 1 || sscanf(line, "%15s", kw) != 1) {
			if (strcmp(line, "llcd-live-state 1") != 0) {
				llcd_err_set(err, "%s:%d: not an llcd state file (want \"llcd-live-state 1\")", path, lineno);
				goto out;
			}
			continue;
		}
		if (strcmp(kw, "llcd-live-state") == 0) {
			llcd_err_set(err, "%s:%d: header repeated", path, lineno);
			goto out;
		} else if (strcmp(kw, "domain") == 0) {
			unsigned long long key;
			int nv, off = 0;
			char uuid[40];
			struct live_state_dom *d;
			if (sscanf(line, "domain %llx %39s %d %n", &key, uuid, &nv, &off) != 3 || off == 0 ||
			    nv < 0 || nv > CPUSET_MAX || key == 0) {
				llcd_err_set(err, "%s:%d: bad domain line (want: domain KEY UUID NVCPUS NAME)", path, lineno);
				goto out;
			}
			d = realloc(s->doms, sizeof(*d) * (size_t)(s->n + 1));
			if (d == NULL) {
				llcd_err_set(err, "out of memory");
				goto out;
			}
			s->doms = d;
			cur = &s->doms[s->n++];
			memset(cur, 0, sizeof(*cur));
			cur->key = key;
			snprintf(cur->uuid, sizeof(cur->uuid), "%s", uuid);
			snprintf(cur->name, sizeof(cur->name), "%s", line + off);
			cur->nvcpus = nv;
			if ((cur->vcpus = calloc(nv > 0 ? (size_t)nv : 1, sizeof(struct cpuset))) == NULL) {
				llcd_err_set(err, "out of memory");
				goto out;
			}
		} else if (strcmp(kw, "vcpu") == 0 || strcmp(kw, "emulator") == 0) {
			int v = -1;
			struct cpuset set;
			struct llcd_err cerr;
			bool vc = kw[0] == 'v';
			if (cur == NULL) {
				llcd_err_set(err, "%s:%d: %s line before any domain line", path, lineno, kw);
				goto out;
			}
			if ((vc && sscanf(line, "vcpu %d %16383s", &v, cpus) != 2) ||
			    (!vc && sscanf(line, "emulator %16383s", cpus) != 1)) {
				llcd_err_set(err, "%s:%d: bad %s line", path, lineno, kw);
				goto out;
			}
			if (vc && (v < 0 || v >= cur->nvcpus)) {
				llcd_err_set(err, "%s:%d: vCPU %d out of range (domain has %d)", path, lineno, v, cur->nvcpus);
				goto out;
			}
			if (cpuset_parse(&set, cpus, &cerr) < 0) {
				llcd_err_set(err, "%s:%d: %s", path, lineno, cerr.msg);
				goto out;
			}
			if (vc)
				cur->vcpus[v] = set;
			else
				cur->emulator = set;
		} else {
			llcd_err_set(err, "%s:%d: unknown keyword '%s'", path, lineno, kw);
			goto out;
		}
	}
	if (lineno == 0) {
		rc = 0;         /* empty file: empty state */
		goto out;
	}
	rc = 0;
out:
	free(line);
	fclose(f);
	if (rc < 0)
		live_state_clear(s);
	return rc;
}

static int
fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
live_state_write(const char *path, const struct live_state *s, struct llcd_err *err)
{
	char tmp[PATH_MAX + 16], buf[16384];
	FILE *f;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return llcd_err_set(err, "state file path too long");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return llcd_err_set(err, "%s: %s", tmp, strerror(errno));
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return llcd_err_set(err, "%s: %s", tmp, strerror(errno));
	}
	fprintf(f, "llcd-live-state 1\n"
	    "# written by llcd (docs/agent.md): the pins llcd last applied per domain\n");
	for (int i = 0; i < s->n; i++) {
		const struct live_state_dom *d = &s->doms[i];
		char name[POLICY_NAME];
		snprintf(name, sizeof(name), "%s", d->name);
		for (char *p = name; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = '?';
		fprintf(f, "domain %016llx %s %d %s\n", (unsigned long long)d->key,
		    d->uuid[0] ? d->uuid : "-", d->nvcpus, name);
		for (int v = 0; v < d->nvcpus; v++)
			if (!cpuset_empty(&d->vcpus[v]) && cpuset_format(&d->vcpus[v], buf, sizeof(buf)) == 0)
				fprintf(f, "vcpu %d %s\n", v, buf);
		if (!cpuset_empty(&d->emulator) && cpuset_format(&d->emulator, buf, sizeof(buf)) == 0)
			fprintf(f, "emulator %s\n", buf);
	}
	if (fflush(f) != 0 || fsync(fd) != 0) {
		llcd_err_set(err, "%s: %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) != 0) {
		unlink(tmp);
		return llcd_err_set(err, "%s: %s", tmp, strerror(errno));
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return llcd_err_set(err, "rename %s -> %s: %s", tmp, path, strerror(e));
	}
	if (fsync_dir(path) < 0)
		return llcd_err_set(err, "fsync of the directory of %s: %s", path, strerror(errno));
	return 0;
}

int
live_save_state(struct live *l, struct llcd_err *err)
{
	struct live_state s = { 0 };
	int rc;

	if (!l->state_enabled || !l->state_dirty)
		return 0;
	/* current domains with anything applied, plus domains of the file
	 * read at start that have not been listed yet (libvirt down) */
	s.doms = calloc((size_t)(l->ndoms + l->saved.n + 1), sizeof(*s.doms));
	if (s.doms == NULL)
		return llcd_err_set(err, "out of memory");
	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		const struct live_state_dom *sd = d->state_checked ? NULL : state_find(&l->saved, d->key);
		if (sd != NULL) {
			/* threads not found yet: keep what the file said */
			struct live_state_dom *o = &s.doms[s.n++];
			*o = *sd;
			if ((o->vcpus = calloc((size_t)(sd->nvcpus > 0 ? sd->nvcpus : 1), sizeof(struct cpuset))) == NULL) {
				live_state_clear(&s);
				return llcd_err_set(err, "out of memory");
			}
			memcpy(o->vcpus, sd->vcpus, sizeof(struct cpuset) * (size_t)sd->nvcpus);
			continue;
		}
		bool any = !cpuset_empty(&d->emu_applied);
		for (int v = 0; v < d->maxvcpus && !any; v++)
			any = !cpuset_empty(&d->v[v].applied);
		if (!any)
			continue;
		struct live_state_dom *o = &s.doms[s.n++];
		o->key = d->key;
		snprintf(o->uuid, sizeof(o->uuid), "%s", d->uuid);
		snprintf(o->name, sizeof(o->name), "%.*s", (int)sizeof(o->name) - 1, d->name);
		o->nvcpus = d->maxvcpus;
		o->emulator = d->emu_applied;
		if ((o->vcpus = calloc((size_t)(d->maxvcpus > 0 ? d->maxvcpus : 1), sizeof(struct cpuset))) == NULL) {
			live_state_clear(&s);
			return llcd_err_set(err, "out of memory");
		}
		for (int v = 0; v < d->maxvcpus; v++)
			o->vcpus[v] = d->v[v].applied;
	}
	if (!l->listed_once) {
		for (int i = 0; i < l->saved.n; i++) {
			const struct live_state_dom *sd = &l->saved.doms[i];
			if (state_find(&s, sd->key))
				continue;
			struct live_state_dom *o = &s.doms[s.n++];
			*o = *sd;
			if ((o->vcpus = calloc((size_t)(sd->nvcpus > 0 ? sd->nvcpus : 1), sizeof(struct cpuset))) == NULL) {
				live_state_clear(&s);
				return llcd_err_set(err, "out of memory");
			}
			memcpy(o->vcpus, sd->vcpus, sizeof(struct cpuset) * (size_t)sd->nvcpus);
		}
	}
	rc = live_state_write(l->state_path, &s, err);
	live_state_clear(&s);
	if (rc == 0)
		l->state_dirty = false;
	return rc;
}

/* ---- domains -------------------------------------------------------------- */

static struct ldom *
dom_by_key(const struct live *l, uint64_t key)
{
	for (int i = 0; i < l->ndoms; i++)
		if (l->doms[i]->key == key)
			return l->doms[i];
	return NULL;
}

static struct ldom *
dom_by_uuid(const struct live *l, const char *uuid)
{
	uint64_t k = live_uuid_key(uuid);

	for (int i = 0; k != 0 && i < l->ndoms; i++)
		if (live_uuid_key(l->doms[i]->uuid) == k)
			return l->doms[i];
	return NULL;
}

static void
vcpu_close(struct lvcpu *c)
{
	if (c->perf_fd >= 0)
		close(c->perf_fd);
	c->perf_fd = -1;
	c->have_instr = false;
	procstat_thread_free(c->th);
	c->th = NULL;
	c->tid = 0;
	c->have_prev = false;
	c->last_cpu = -1;
	cpuset_zero(&c->affinity);
}

static void
dom_free(struct ldom *d)
{
	if (d == NULL)
		return;
	for (int v = 0; v < d->maxvcpus; v++)
		vcpu_close(&d->v[v]);
	guestchan_free(d->gc);
	free(d->v);
	free(d);
}

static void
dom_remove(struct live *l, struct ldom *d, const char *why)
{
	for (int i = 0; i < l->ndoms; i++) {
		if (l->doms[i] != d)
			continue;
		log_dom(LOG_INFO, d->name, -1, 0, "no longer managed: %s", why);
		memmove(&l->doms[i], &l->doms[i + 1], sizeof(l->doms[0]) * (size_t)(l->ndoms - i - 1));
		l->ndoms--;
		dom_free(d);
		return;
	}
}

static int
dom_resize(struct ldom *d, int maxvcpus)
{
	struct lvcpu *v;

	if (maxvcpus < 1)
		maxvcpus = 1;
	if (maxvcpus <= d->maxvcpus && d->v != NULL) {
		for (int i = maxvcpus; i < d->maxvcpus; i++)
			vcpu_close(&d->v[i]);
		d->maxvcpus = maxvcpus;
		return 0;
	}
	if ((v = realloc(d->v, sizeof(*v) * (size_t)maxvcpus)) == NULL)
		return -1;
	for (int i = d->v ? d->maxvcpus : 0; i < maxvcpus; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].last_cpu = -1;
		v[i].perf_fd = -1;
	}
	d->v = v;
	d->maxvcpus = maxvcpus;
	return 0;
}

static struct ldom *
dom_add(struct live *l, uint64_t key, const char *uuid, const char *name, int pid,
        int nvcpus, int maxvcpus)
{
	struct ldom *d;

	if (l->ndoms == l->cap) {
		int ncap = l->cap ? l->cap * 2 : 16;
		struct ldom **n = realloc(l->doms, sizeof(*n) * (size_t)ncap);
		if (n == NULL)
			return NULL;
		l->doms = n;
		l->cap = ncap;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	if (dom_resize(d, maxvcpus) < 0) {
		free(d);
		return NULL;
	}
	d->key = key;
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->pid = pid;
	d->nvcpus = nvcpus;
	d->need_discover = true;
	d->need_annot = true;
	d->obs_dirty = true;
	policy_annotation_defaults(&d->annot);
	l->doms[l->ndoms++] = d;
	return d;
}

static void
set_error(struct ldom *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_error(struct ldom *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->error_msg, sizeof(d->error_msg), fmt, ap);
	va_end(ap);
	d->error = true;
}

/* Read and parse the annotation; VIRT_TRANSIENT leaves it for later. */
static void
read_annotation(struct live *l, struct ldom *d)
{
	struct policy_annotation a;
	struct llcd_err e = { "" };
	char *xml = NULL;
	enum virt_result r;
	bool was = d->annotated;
	char old_err[LLCD_ERR_MSG];

	if (l->virt == NULL) {
		d->need_annot = false;
		return;
	}
	r = virt_get_annotation(l->virt, d->uuid, &xml, &e);
	if (r != VIRT_OK) {
		if (r == VIRT_TRANSIENT)
			return;         /* need_annot stays: retried next period */
		log_dom(LOG_WARNING, d->name, -1, 0, "cannot read the llc-policy annotation: %s", e.msg);
		d->need_annot = false;
		return;
	}
	l->st.annot_reads++;
	d->need_annot = false;
	snprintf(old_err, sizeof(old_err), "%s", d->annot_err);
	d->annot_err[0] = '\0';
	if (xml == NULL) {
		d->annotated = false;
		policy_annotation_defaults(&d->annot);
		if (was || !d->annot_read)
			log_dom(LOG_INFO, d->name, -1, 0, "no llc-policy annotation: left to the default scheduler "
			    "(confined to the shared pool as a whole while isolated domains exist)");
	} else if (annot_parse_metadata(xml, strlen(xml), d->maxvcpus, &a, &e) < 0) {
		d->annotated = false;
		policy_annotation_defaults(&d->annot);
		snprintf(d->annot_err, sizeof(d->annot_err), "%s", e.msg);
		if (strcmp(old_err, d->annot_err) != 0)
			log_dom(LOG_WARNING, d->name, -1, 0, "invalid llc-policy annotation, domain left unmanaged: %s", e.msg);
	} else {
		if (!d->annotated || !annot_equal(&a, &d->annot))
			log_dom(LOG_INFO, d->name, -1, 0, "annotation: mode %s, isolation %s, topology %s, %d group%s",
			    policy_mode_name(a.mode), policy_isolation_name(a.isolation),
			    policy_topology_name(a.topology), a.ngroups, a.ngroups == 1 ? "" : "s");
		d->annotated = true;
		d->annot = a;
	}
	d->annot_read = true;
	d->obs_dirty = true;
	free(xml);
}

/* Insert or update a running domain from libvirt. */
static void
upsert(struct live *l, const struct virt_domain *vd)
{
	uint64_t key = live_domain_key(vd->uuid, vd->pid);
	struct ldom *d = dom_by_uuid(l, vd->uuid);
	int maxv = vd->maxvcpus > vd->nvcpus ? vd->maxvcpus : vd->nvcpus;

	if (key == 0)
		return;
	if (d != NULL && d->pid != vd->pid) {
		/* a new QEMU (restarted between two looks, or its pid just
		 * became known): a new key, so the engine places it afresh */
		dom_remove(l, d, d->pid ? "its QEMU process changed" : "its QEMU pid is known now");
		d = NULL;
	}
	if (d == NULL) {
		d = dom_add(l, key, vd->uuid, vd->name, vd->pid, vd->nvcpus, maxv);
		if (d == NULL) {
			log_dom(LOG_WARNING, vd->name, -1, 0, "out of memory; not managed");
			return;
		}
		log_dom(LOG_INFO, d->name, -1, 0, "running: QEMU pid %d, %d vCPU%s (max %d)", vd->pid,
		    vd->nvcpus, vd->nvcpus == 1 ? "" : "s", vd->maxvcpus);
	}
	if (d->nvcpus != vd->nvcpus || d->maxvcpus < maxv) {
		if (d->maxvcpus < maxv && dom_resize(d, maxv) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "out of memory");
			return;
		}
		if (d->nvcpus != vd->nvcpus)
			log_dom(LOG_INFO, d->name, -1, 0, "%d vCPUs online (was %d)", vd->nvcpus, d->nvcpus);
		d->nvcpus = vd->nvcpus;
		d->need_discover = true;
		d->obs_dirty = true;
	}
	snprintf(d->name, sizeof(d->name), "%s", vd->name);
	d->pid = vd->pid;
	d->persistent = vd->persistent;
	guest_topo(&vd->topo, vd->maxvcpus, &d->guest);
	d->seen = true;
	l->st.refreshes++;
}

static void
refresh_uuid(struct live *l, const char *uuid)
{
	struct virt_domain vd;
	struct llcd_err e;
	enum virt_result r = virt_domain_get(l->virt, uuid, &vd, &e);
	struct ldom *d = dom_by_uuid(l, uuid);

	if (r == VIRT_OK && vd.active) {
		upsert(l, &vd);
		if ((d = dom_by_uuid(l, uuid)) != NULL && d->need_annot)
			read_annotation(l, d);
	} else if (r == VIRT_OK || r == VIRT_GONE) {
		if (d != NULL)
			dom_remove(l, d, r == VIRT_GONE ? "undefined" : "not running");
	} else if (r == VIRT_TRANSIENT) {
		l->need_relist = true;
	} else {
		log_warnx("domain %s: %s", uuid, e.msg);
	}
}

static void
check_saved_state(struct live *l, struct ldom *d)
{
	struct live_state_dom *sd = state_find(&l->saved, d->key);
	int same = 0, moved = 0;
	char a[256], b[256];

	d->state_checked = true;
	if (sd == NULL)
		return;
	for (int v = 0; v < d->maxvcpus && v < sd->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		if (cpuset_empty(&sd->vcpus[v]))
			continue;
		c->applied = sd->vcpus[v];
		d->touched = true;
		if (cpuset_empty(&c->affinity))
			continue;
		if (cpuset_equal(&c->affinity, &sd->vcpus[v])) {
			same++;
			continue;
		}
		cpuset_format(&sd->vcpus[v], a, sizeof(a));
		cpuset_format(&c->affinity, b, sizeof(b));
		log_dom(LOG_WARNING, d->name, v, c->tid, "moved by someone else while llcd was not running: "
		    "llcd left it on %s, it is on %s now", a, b);
		moved++;
	}
	d->emu_applied = sd->emulator;
	l->st.adopted_vcpus += (uint64_t)same;
	l->st.moved_by_others += (uint64_t)moved;
	log_dom(LOG_INFO, d->name, -1, 0, "state file: %d vCPU%s where llcd left them, %d moved by someone else",
	    same, same == 1 ? "" : "s", moved);
}

static void
coresched_domain(struct live *l, struct ldom *d, const int *newtids, int nnew)
{
	struct llcd_err e;
	enum coresched_result r;

	if (!d->annotated || d->annot.isolation != POLICY_ISO_CORE || d->annot.mode == POLICY_MODE_NONE ||
	    d->pid <= 0 || nnew == 0)
		return;
	if (coresched_probe(l->cs) != CORESCHED_AVAIL_YES)
		return;         /* said once at start */
	if (!d->cs_done) {
		uint64_t ck = 0;
		/* a cookie already there (llcd restarted): keep it, share it to
		 * any thread that lacks it */
		if (coresched_get(l->cs, newtids[0], &ck, &e) == CORESCHED_OK && ck != 0) {
			d->cs_done = true;
			d->cs_tid = newtids[0];
			log_dom(LOG_INFO, d->name, -1, newtids[0], "core-scheduling cookie already set; kept");
			if (nnew > 1)
				coresched_domain(l, d, newtids + 1, nnew - 1);
			return;
		}
		r = coresched_assign(l->cs, d->pid, newtids[0], &e);
		if (r == CORESCHED_OK) {
			d->cs_done = true;
			d->cs_tid = newtids[0];
			l->st.coresched_assigned++;
			log_dom(LOG_INFO, d->name, -1, newtids[0], "core-scheduling cookie for QEMU pid %d", d->pid);
		} else if (r != CORESCHED_TRANSIENT) {
			d->cs_done = true;      /* do not retry gone / permanent */
			log_dom(LOG_WARNING, d->name, -1, newtids[0], "core scheduling: %s [%s]", e.msg,
			    coresched_result_name(r));
		}
		return;
	}
	if (d->cs_tid > 0) {
		int nshared = 0;
		r = coresched_share(l->cs, d->cs_tid, newtids, nnew, &nshared, &e);
		if (r != CORESCHED_OK)
			log_dom(LOG_WARNING, d->name, -1, d->cs_tid, "core scheduling: sharing to new vCPU threads: %s [%s]",
			    e.msg, coresched_result_name(r));
		else if (nshared)
			log_dom(LOG_INFO, d->name, -1, d->cs_tid, "core-scheduling cookie shared to %d new thread%s",
			    nshared, nshared == 1 ? "" : "s");
	}
}

/* Find the vCPU threads of a domain's QEMU and open them. */
static void
discover(struct live *l, struct ldom *d)
{
	struct procstat_task *tasks = NULL;
	struct llcd_err e;
	enum procstat_status st;
	int n = 0, nfound = 0, nnew = 0;
	int *newtids;
	bool *found;

	d->need_discover = false;
	d->discovered_period = l->period;
	if (d->pid <= 0) {
		d->threads_missing = true;
		return;
	}
	st = procstat_list_tasks(l->ps, d->pid, &tasks, &n, &e);
	if (st == PROCSTAT_GONE) {
		d->threads_missing = true;
		if (l->virt)
			refresh_uuid(l, d->uuid);   /* stopped? */
		return;
	}
	if (st != PROCSTAT_OK) {
		log_dom(LOG_WARNING, d->name, -1, 0, "listing QEMU threads: %s", e.msg);
		d->threads_missing = true;
		return;
	}
	l->st.discoveries++;
	newtids = calloc((size_t)d->maxvcpus, sizeof(int));
	found = calloc((size_t)d->maxvcpus, sizeof(bool));
	if (newtids == NULL || found == NULL) {
		free(newtids);
		free(found);
		free(tasks);
		d->need_discover = true;
		return;
	}
	for (int i = 0; i < n; i++) {
		int v = tasks[i].index;
		struct lvcpu *c;
		if (tasks[i].kind != PROCSTAT_VCPU || v < 0)
			continue;
		if (v >= d->nvcpus && l->virt != NULL && !l->need_relist) {
			/* hot-plugged (setvcpus sends no event): libvirt's
			 * count is re-read, then the threads again */
			log_dom(LOG_INFO, d->name, v, tasks[i].tid, "vCPU beyond the %d online; re-reading the domain",
			    d->nvcpus);
			l->need_relist = true;
		}
		if (v >= d->maxvcpus)
			continue;
		found[v] = true;
		c = &d->v[v];
		if (c->tid == tasks[i].tid && c->th != NULL)
			continue;
		vcpu_close(c);
		c->th = procstat_thread_open(l->ps, d->pid, tasks[i].tid, &st, &e);
		if (c->th == NULL) {
			if (st != PROCSTAT_GONE)
				log_dom(LOG_WARNING, d->name, v, tasks[i].tid, "cannot open /proc files: %s", e.msg);
			found[v] = false;
			continue;
		}
		c->tid = tasks[i].tid;
		if (procstat_affinity(c->tid, &c->affinity, &e) != PROCSTAT_OK)
			cpuset_zero(&c->affinity);
		newtids[nnew++] = c->tid;
		log_dom(LOG_DEBUG, d->name, v, c->tid, "vCPU thread found");
	}
	for (int v = 0; v < d->maxvcpus; v++) {
		if (!found[v] && d->v[v].tid) {
			log_dom(LOG_INFO, d->name, v, d->v[v].tid, "vCPU thread gone");
			vcpu_close(&d->v[v]);
			if (v < d->nvcpus && l->virt != NULL)
				l->need_relist = true;  /* hot-unplug, or the guest stopped */
		}
		if (v < d->nvcpus && d->v[v].tid)
			nfound++;
	}
	d->threads_missing = nfound < d->nvcpus;
	d->nthreads_seen = n;
	if (!d->state_checked && !d->threads_missing)
		check_saved_state(l, d);
	coresched_domain(l, d, newtids, nnew);
	free(newtids);
	free(found);
	free(tasks);
}

static void
relist(struct live *l)
{
	struct virt_domain *vds = NULL;
	struct llcd_err e;
	int n = 0;

	if (virt_list_domains(l->virt, &vds, &n, &e) < 0) {
		log_warnx("listing domains: %s", e.msg);
		l->need_relist = true;
		l->relist_due_ns = l->now_ns + RELIST_RETRY_NS;
		return;
	}
	l->st.relists++;
	l->need_relist = false;
	for (int i = 0; i < l->ndoms; i++)
		l->doms[i]->seen = l->doms[i]->fake;
	for (int i = 0; i < n; i++)
		if (vds[i].active)
			upsert(l, &vds[i]);
	for (int i = 0; i < l->ndoms; i++) {
		if (!l->doms[i]->seen) {
			dom_remove(l, l->doms[i], "not running");
			i--;
		}
	}
	for (int i = 0; i < l->ndoms; i++)
		if (l->doms[i]->need_annot)
			read_annotation(l, l->doms[i]);
	if (!l->listed_once) {
		for (int i = 0; i < l->saved.n; i++)
			if (dom_by_key(l, l->saved.doms[i].key) == NULL)
				log_info("state file: domain %s (%s) is no longer running", l->saved.doms[i].name,
				    l->saved.doms[i].uuid);
		l->listed_once = true;
		l->state_dirty = true;  /* drop what is gone from the file */
	}
	free(vds);
}

/* ---- events --------------------------------------------------------------- */

int
live_event_fd(const struct live *l)
{
	return l->virt ? virt_event_fd(l->virt) : -1;
}

uint64_t
live_next_due_ns(const struct live *l)
{
	if (l->virt == NULL)
		return 0;
	if (!virt_connected(l->virt))
		return virt_retry_at_ms(l->virt) * 1000000ull;
	if (l->need_relist)
		return l->relist_due_ns ? l->relist_due_ns : 1;
	return 0;
}

int
live_handle_events(struct live *l, uint64_t now_ns, struct llcd_err *err)
{
	struct virt_event ev;
	struct llcd_err e;
	struct ldom *d;
	bool was = false;

	if (l->virt == NULL)
		return 0;
	l->now_ns = now_ns;
	was = virt_connected(l->virt);
	if (virt_maintain(l->virt, now_ns / 1000000u, &e) == 1 && !was)
		l->need_relist = true;
	while (virt_next_event(l->virt, &ev) == 1) {
		switch (ev.type) {
		case VIRT_EV_LIFECYCLE:
			log_dom(LOG_DEBUG, ev.name, -1, 0, "lifecycle event %d/%d", ev.event, ev.detail);
			if (virt_connected(l->virt))
				refresh_uuid(l, ev.uuid);
			break;
		case VIRT_EV_METADATA:
			if (ev.text[0] && strcmp(ev.text, VIRT_POLICY_NS) != 0)
				break;
			if ((d = dom_by_uuid(l, ev.uuid)) != NULL) {
				log_dom(LOG_INFO, d->name, -1, 0, "llc-policy annotation changed");
				d->need_annot = true;
				read_annotation(l, d);
			}
			break;
		case VIRT_EV_TUNABLE:
			if ((d = dom_by_uuid(l, ev.uuid)) != NULL)
				d->need_affinity = true;
			break;
		case VIRT_EV_DISCONNECTED:
			log_warnx("libvirt connection lost (reason %d); pins stay as they are, reconnecting", ev.event);
			break;
		case VIRT_EV_RECONNECTED:
			log_info("libvirt reconnected after %u reconnect%s; re-listing domains",
			    virt_reconnects(l->virt), virt_reconnects(l->virt) == 1 ? "" : "s");
			l->need_relist = true;
			break;
		case VIRT_EV_OVERFLOW:
			log_warnx("libvirt event queue overflowed; re-listing domains");
			l->need_relist = true;
			break;
		}
	}
	if (l->need_relist && virt_connected(l->virt) && now_ns >= l->relist_due_ns) {
		relist(l);
		if (l->need_relist)
			return llcd_err_set(err, "re-listing libvirt domains failed; retrying");
	}
	return 0;
}

/* ---- observe -------------------------------------------------------------- */

static void note_result(struct live *l, struct ldom *d, enum agent_result r, const char *msg);
static enum agent_result pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus,
    bool *called, struct llcd_err *err);

static void
refresh_affinity(struct live *l, struct ldom *d)
{
	struct llcd_err e;
	char a[256], b[256];

	d->need_affinity = false;
	for (int v = 0; v < d->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		struct cpuset now;
		if (c->tid == 0 || procstat_affinity(c->tid, &now, &e) != PROCSTAT_OK)
			continue;
		if (l->cfg.dry_run)
			continue;       /* the pins are only remembered, not in the kernel */
		if (!cpuset_empty(&c->applied) && !cpuset_equal(&now, &c->applied) &&
		    !cpuset_equal(&now, &c->affinity)) {
			cpuset_format(&c->applied, a, sizeof(a));
			cpuset_format(&now, b, sizeof(b));
			log_dom(LOG_WARNING, d->name, v, c->tid, "moved by someone else: llcd pinned it to %s, it is on %s now",
			    a, b);
			l->st.moved_by_others++;
		}
		c->affinity = now;
	}
}

static void
sample_domain(struct live *l, struct ldom *d, struct policy_domain_in *in,
              struct policy_vcpu_sample *out)
{
	struct procstat_sample s;
	struct llcd_err e;
	bool rediscover = false;

	for (int v = 0; v < d->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		struct policy_vcpu_sample *o = &out[v];
		o->tid = c->tid;
		o->runtime_ns = 0;
		o->instructions = 0;
		o->last_cpu = c->last_cpu;
		if (c->th != NULL) {
			enum procstat_status st = procstat_thread_read(c->th, &s, &e);
			if (st == PROCSTAT_OK) {
				o->runtime_ns = c->have_prev && s.runtime_ns >= c->prev_runtime ?
				    s.runtime_ns - c->prev_runtime : 0;
				c->prev_runtime = s.runtime_ns;
				c->have_prev = true;
				o->last_cpu = c->last_cpu = s.last_cpu;
				if (l->counters && c->perf_fd == -1 && c->tid > 0) {
					c->perf_fd = perfcount_open(c->tid, &e);
					if (c->perf_fd < 0) {
						c->perf_fd = -2;        /* do not retry this thread */
						log_dom(LOG_INFO, d->name, v, c->tid, "%s", e.msg);
					}
				}
				uint64_t instr;
				if (c->perf_fd >= 0 && perfcount_read(c->perf_fd, &instr, &e) == 0) {
					o->instructions = c->have_instr && instr >= c->prev_instr ? instr - c->prev_instr : 0;
					c->prev_instr = instr;
					c->have_instr = true;
				}
				if (s.num_threads != d->nthreads_seen &&
				    l->period - d->discovered_period >= REDISCOVER_PERIODS)
					rediscover = true;
			} else {
				if (st == PROCSTAT_ERROR)
					log_dom(LOG_WARNING, d->name, v, c->tid, "sampling: %s", e.msg);
				rediscover = true;
			}
		}
		/* A thread allowed on every CPU of the host, in a domain llcd
		 * has not pinned (since it was found, or per the state file),
		 * is not placed at all (libvirt's default): report "unknown",
		 * so that the engine places the domain instead of adopting
		 * "everywhere" as a placement. Once llcd pinned the domain the
		 * real affinity is reported, so that a hot-plugged vCPU or one
		 * someone else released is pinned again. */
		if (!d->touched && cpuset_subset(&l->everywhere, &c->affinity))
			cpuset_zero(&o->pinned);
		else
			o->pinned = c->affinity;
	}
	if (d->threads_missing)
		rediscover = true;
	if (rediscover)
		d->need_discover = true;
	(void)in;
}

/* The host end of the guest helper's channel as the running domain defines
 * it: <channel type='unix'><source mode='bind' path='P'/><target
 * type='virtio' name='org.llcd.guest.0'/></channel>. Returns 0 and the path,
 * or -1 when the domain has no such channel. */
static int
channel_from_xml(const char *xml, char *path, size_t len)
{
	struct llcd_err e;
	xmlDocPtr doc = xmlsafe_read(xml, strlen(xml), 4u << 20, "domain XML", 0, &e);
	int rc = -1;

	if (doc == NULL)
		return -1;
	xmlNodePtr root = xmlDocGetRootElement(doc), devs = NULL;
	for (xmlNodePtr n = root ? root->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, BAD_CAST "devices"))
			devs = n;
	for (xmlNodePtr ch = devs ? devs->children : NULL; ch && rc < 0; ch = ch->next) {
		if (ch->type != XML_ELEMENT_NODE || xmlStrcmp(ch->name, BAD_CAST "channel"))
			continue;
		xmlChar *type = xmlGetProp(ch, BAD_CAST "type"), *src = NULL, *tname = NULL;
		for (xmlNodePtr c = ch->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE)
				continue;
			if (!xmlStrcmp(c->name, BAD_CAST "source") && src == NULL)
				src = xmlGetProp(c, BAD_CAST "path");
			if (!xmlStrcmp(c->name, BAD_CAST "target") && tname == NULL)
				tname = xmlGetProp(c, BAD_CAST "name");
		}
		if (type && !xmlStrcmp(type, BAD_CAST "unix") && src && tname &&
		    !xmlStrcmp(tname, BAD_CAST GUESTPROTO_PORT) && strlen((const char *)src) < len) {
			snprintf(path, len, "%s", (const char *)src);
			rc = 0;
		}
		xmlFree(type);
		xmlFree(src);
		xmlFree(tname);
	}
	xmlFreeDoc(doc);
	return rc;
}

/* Open the guest helper's channel of a domain, once: the socket the domain
 * XML names, else the one `llcctl guest-channel --add` would add. */
static void
open_channel(struct live *l, struct ldom *d)
{
	char path[PATH_MAX], *xml = NULL;
	struct llcd_err e;

	if (d->gc_looked || d->fake || !d->uuid[0] || l->virt == NULL)
		return;
	d->gc_looked = true;
	if (virt_get_xml(l->virt, d->uuid, false, &xml, &e) == VIRT_OK && channel_from_xml(xml, path, sizeof(path)) == 0) {
		d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
		log_dom(LOG_INFO, d->name, -1, 0, "guest helper channel: %s", path);
	} else if (l->cfg.guest_channel_dir && l->cfg.guest_channel_dir[0] &&
	           guestchan_sock_path(l->cfg.guest_channel_dir, d->uuid, path, sizeof(path), &e) == 0) {
		d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
	}
	free(xml);
}

static int
live_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	struct live *l = ctx;
	struct llcd_err e;
	int refresh = l->cfg.affinity_refresh > 0 ? l->cfg.affinity_refresh : 10;

	l->period++;
	l->now_ns = now_ns;
	if (live_handle_events(l, now_ns, &e) < 0)
		log_warnx("%s", e.msg);
	if (live_save_state(l, &e) < 0) {
		log_warnx("state file: %s", e.msg);
		l->state_dirty = false;         /* try again after the next change */
	}

	/* per-CPU busy time over the period */
	if (obs->ncpus > 0) {
		if (obs->ncpus > l->ncpus) {
			uint64_t *p = realloc(l->cpu_prev, sizeof(uint64_t) * (size_t)obs->ncpus);
			uint64_t *c = p ? realloc(l->cpu_cur, sizeof(uint64_t) * (size_t)obs->ncpus) : NULL;
			if (p)
				l->cpu_prev = p;
			if (c == NULL)
				return llcd_err_set(err, "out of memory");
			l->cpu_cur = c;
			l->ncpus = obs->ncpus;
			l->have_cpu_prev = false;
		}
		if (procstat_cpu_busy(l->ps, l->cpu_cur, obs->ncpus, NULL, &e) == 0) {
			for (int i = 0; i < obs->ncpus && l->have_cpu_prev; i++)
				obs->cpu_busy_ns[i] = l->cpu_cur[i] >= l->cpu_prev[i] ? l->cpu_cur[i] - l->cpu_prev[i] : 0;
			memcpy(l->cpu_prev, l->cpu_cur, sizeof(uint64_t) * (size_t)obs->ncpus);
			l->have_cpu_prev = true;
		} else {
			log_warnx("/proc/stat: %s", e.msg);
		}
	}

	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		int slot;
		if (d->need_annot)
			read_annotation(l, d);
		if (d->need_discover)
			discover(l, d);
		if (i >= l->ndoms || l->doms[i] != d) {     /* removed meanwhile */
			i--;
			continue;
		}
		if (d->need_affinity || (l->period % (uint64_t)refresh) == 0)
			refresh_affinity(l, d);
		if (!cpuset_empty(&d->emu_pending)) {
			if (l->period < d->backoff_until) {
				l->st.backoff_skips++;
			} else {
				struct cpuset want = d->emu_pending;
				bool called;
				enum agent_result r = pin_emulator(l, d, &want, &called, &e);
				note_result(l, d, r, e.msg);
				if (r == AGENT_OK)
					log_dom(LOG_INFO, d->name, -1, 0, "emulator threads pinned to the CPUs of an earlier "
					    "plan after a transient failure");
				else if (r != AGENT_TRANSIENT)
					cpuset_zero(&d->emu_pending);
			}
		}
		/* the guest helper's reports (read once per period; the
		 * channel bounds what one guest can make llcd read) */
		struct policy_hot_report reps[GUESTPROTO_MAX_PROCS];
		int nrep = 0;
		open_channel(l, d);
		if (d->gc) {
			guestchan_set_nvcpus(d->gc, d->nvcpus);
			int ev = guestchan_handle(d->gc, now_ns);
			if (ev & (GUESTCHAN_EV_BAD | GUESTCHAN_EV_BACKOFF)) {
				struct guestchan_stats gs;
				guestchan_stats(d->gc, &gs);
				log_dom(LOG_WARNING, d->name, -1, 0, "guest channel: %s%s", gs.last_error,
				    ev & GUESTCHAN_EV_BACKOFF ? "; closed for a back-off" : "");
			}
			nrep = guestchan_reports(d->gc, reps, GUESTPROTO_MAX_PROCS, now_ns);
			if (nrep < 0)
				nrep = 0;
		}
		if ((slot = agent_obs_add(obs, d->nvcpus, nrep, err)) < 0)
			return -1;
		struct policy_domain_in *in = &obs->domains[slot];
		if (nrep > 0)
			memcpy(obs->reports[slot], reps, sizeof(reps[0]) * (size_t)nrep);
		in->reports = obs->reports[slot];
		in->nreports = nrep;
		if (in->key != d->key || d->obs_dirty) {
			in->key = d->key;
			snprintf(in->name, sizeof(in->name), "%.*s", (int)sizeof(in->name) - 1, d->name);
			in->guest = d->guest;
			in->annotated = d->annotated;
			if (d->annotated)
				in->annot = d->annot;
			else
				policy_annotation_defaults(&in->annot);
			d->obs_dirty = false;
		}
		sample_domain(l, d, in, obs->vcpus[slot]);
	}
	return 0;
}

/* ---- apply ---------------------------------------------------------------- */

static enum agent_result
to_agent(enum virt_result r)
{
	switch (r) {
	case VIRT_OK: return AGENT_OK;
	case VIRT_TRANSIENT: return AGENT_TRANSIENT;
	case VIRT_GONE: return AGENT_GONE;
	case VIRT_PERMANENT: return AGENT_PERMANENT;
	}
	return AGENT_PERMANENT;
}

static void
note_result(struct live *l, struct ldom *d, enum agent_result r, const char *msg)
{
	switch (r) {
	case AGENT_OK:
		l->st.pins_ok++;
		d->transient_streak = 0;
		d->backoff_until = 0;
		break;
	case AGENT_TRANSIENT:
		l->st.pins_transient++;
		if (d->last_transient_period == l->period)
			break;
		/* in a row: the period after the last failure, or the first one
		 * after a back-off */
		d->transient_streak = d->last_transient_period + 1 == l->period ||
		    (d->backoff_until != 0 && l->period == d->backoff_until) ? d->transient_streak + 1 : 1;
		d->last_transient_period = l->period;
		if (d->transient_streak >= TRANSIENT_STREAK) {
			int sh = d->transient_streak - TRANSIENT_STREAK + 1;
			uint64_t n = sh >= 6 ? BACKOFF_MAX_PERIODS : (uint64_t)1 << sh;
			d->backoff_until = l->period + 1 + n;
			log_dom(LOG_WARNING, d->name, -1, 0, "%d periods in a row with transient failures (%s): "
			    "no pinning for %llu periods", d->transient_streak, msg, (unsigned long long)n);
		}
		break;
	case AGENT_GONE:
		l->st.pins_gone++;
		d->need_discover = true;
		break;
	case AGENT_PERMANENT:
		l->st.pins_permanent++;
		if (!d->error)
			set_error(d, "%s", msg);
		break;
	}
}

static enum agent_result
pin_vcpu(struct live *l, struct ldom *d, int v, const struct cpuset *cpus, struct llcd_err *err)
{
	struct lvcpu *c = &d->v[v];
	enum agent_result r;

	if (l->cfg.dry_run) {
		r = AGENT_OK;
	} else if (l->virt != NULL) {
		r = to_agent(virt_pin_vcpu(l->virt, d->uuid, d->name, v, c->tid, cpus, err));
	} else {
		/* no libvirt (live_add_process): the thread directly */
		cpu_set_t *set = CPU_ALLOC(CPUSET_MAX);
		size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
		int cpu;
		if (set == NULL)
			return AGENT_TRANSIENT;
		CPU_ZERO_S(sz, set);
		CPUSET_FOREACH(cpu, cpus)
			CPU_SET_S((size_t)cpu, sz, set);
		r = AGENT_OK;
		if (c->tid <= 0 || sched_setaffinity(c->tid, sz, set) < 0) {
			int en = c->tid <= 0 ? ESRCH : errno;
			llcd_err_set(err, "sched_setaffinity: %s", strerror(en));
			r = en == ESRCH ? AGENT_GONE : AGENT_PERMANENT;
		}
		CPU_FREE(set);
	}
	if (r == AGENT_OK) {
		c->applied = *cpus;
		c->affinity = *cpus;
		d->touched = true;
		l->state_dirty = true;
	}
	return r;
}

static enum agent_result
pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus, bool *called,
    struct llcd_err *err)
{
	enum agent_result r = AGENT_OK;
	struct cpuset now;
	struct llcd_err e;

	*called = true;
	/* after a restart the engine re-sends the emulator pin it cannot
	 * observe; where llcd left it and the kernel agrees, do not call */
	if (cpuset_equal(&d->emu_applied, cpus) && d->pid > 0 &&
	    procstat_affinity(d->pid, &now, &e) == PROCSTAT_OK && cpuset_equal(&now, cpus)) {
		log_dom(LOG_DEBUG, d->name, -1, d->pid, "emulator threads already on the wanted CPUs");
		*called = false;
		return AGENT_OK;
	}
	if (!l->cfg.dry_run && l->virt != NULL)
		r = to_agent(virt_pin_emulator(l->virt, d->uuid, d->name, cpus, err));
	if (r == AGENT_OK) {
		d->emu_applied = *cpus;
		cpuset_zero(&d->emu_pending);
		l->state_dirty = true;
	} else if (r == AGENT_TRANSIENT) {
		/* the engine cannot observe emulator pins and does not send
		 * this one again: the back-end retries it, once per period */
		d->emu_pending = *cpus;
	}
	return r;
}

static enum agent_result
worse(enum agent_result a, enum agent_result b)
{
	static const int rank[] = { [AGENT_OK] = 0, [AGENT_TRANSIENT] = 1, [AGENT_PERMANENT] = 2, [AGENT_GONE] = 3 };
	return rank[b] > rank[a] ? b : a;
}

static enum agent_result
live_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct live *l = ctx;
	struct ldom *d = dom_by_key(l, a->key);
	enum agent_result r = AGENT_OK;
	char buf[256];

	if (d == NULL) {
		llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)a->key);
		return AGENT_GONE;
	}
	switch (a->type) {
	case POLICY_ACT_PIN_VCPU:
	case POLICY_ACT_PIN_EMULATOR:
	case POLICY_ACT_RELEASE:
		if (l->period < d->backoff_until) {
			l->st.backoff_skips++;
			llcd_err_set(err, "domain %s: backing off after %d periods of transient failures", d->name,
			    d->transient_streak);
			return AGENT_TRANSIENT;
		}
		break;
	default:
		break;
	}
	if (a->type == POLICY_ACT_PIN_VCPU || a->type == POLICY_ACT_PIN_EMULATOR)
		d->touched = true;      /* from now on report the real affinity, so
		                         * that a failed pin is planned again */
	switch (a->type) {
	case POLICY_ACT_PIN_VCPU:
		if (a->vcpu < 0 || a->vcpu >= d->nvcpus) {
			llcd_err_set(err, "domain %s has no vCPU %d (%d online)", d->name, a->vcpu, d->nvcpus);
			r = AGENT_PERMANENT;
			break;
		}
		r = pin_vcpu(l, d, a->vcpu, &a->cpus, err);
		if (r == AGENT_OK) {
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, a->vcpu, d->v[a->vcpu].tid, "pinned to %s: %s", buf, a->reason);
		}
		break;
	case POLICY_ACT_PIN_EMULATOR: {
		bool called;
		r = pin_emulator(l, d, &a->cpus, &called, err);
		if (r == AGENT_OK && called) {
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, -1, 0, "emulator threads pinned to %s: %s", buf, a->reason);
		}
		break;
	}
	case POLICY_ACT_RELEASE: {
		struct llcd_err one;
		one.msg[0] = '\0';
		for (int v = 0; v < d->nvcpus; v++) {
			enum agent_result rv = pin_vcpu(l, d, v, &a->cpus, &one);
			if (rv != AGENT_OK && r == AGENT_OK)
				llcd_err_set(err, "vcpu %d: %s", v, one.msg);
			r = worse(r, rv);
		}
		bool called;
		enum agent_result re = pin_emulator(l, d, &a->cpus, &called, &one);
		if (re == AGENT_TRANSIENT)
			cpuset_zero(&d->emu_pending);   /* RELEASE is planned again */
		if (re != AGENT_OK && r == AGENT_OK)
			llcd_err_set(err, "emulator: %s", one.msg);
		r = worse(r, re);
		if (r == AGENT_OK) {
			/* released: llcd no longer holds these pins */
			for (int v = 0; v < d->maxvcpus; v++)
				cpuset_zero(&d->v[v].applied);
			cpuset_zero(&d->emu_applied);
			d->touched = false;
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, -1, 0, "released to %s: %s", buf, a->reason);
		}
		break;
	}
	case POLICY_ACT_REFUSE:
		if (!d->refused || strcmp(d->refuse_msg, a->reason) != 0)
			log_dom(LOG_WARNING, d->name, -1, 0, "not placed: %s", a->reason);
		d->refused = true;
		snprintf(d->refuse_msg, sizeof(d->refuse_msg), "%s", a->reason);
		return AGENT_OK;
	case POLICY_ACT_PREFER:
		log_dom(LOG_DEBUG, d->name, -1, 0, "%s", a->reason);
		return AGENT_OK;
	case POLICY_ACT_BACKOFF:
		log_dom(LOG_INFO, d->name, -1, 0, "%s", a->reason);
		return AGENT_OK;
	}
	if (a->type == POLICY_ACT_PIN_VCPU && r == AGENT_OK)
		d->refused = false;
	note_result(l, d, r, err->msg);
	return r;
}

static void
live_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct live *l = ctx;
	struct ldom *d = dom_by_key(l, a->key);

	if (r == AGENT_PERMANENT)
		log_dom(LOG_WARNING, d ? d->name : NULL, a->vcpu, d && a->vcpu >= 0 && a->vcpu < d->maxvcpus ?
		    d->v[a->vcpu].tid : 0, "%s failed permanently, domain no longer managed: %s",
		    policy_action_name(a->type), msg);
}

const struct agent_ops live_agent_ops = {
	.name = "libvirt",
	.observe = live_observe,
	.apply = live_apply,
	.report = live_report,
};

/* ---- life cycle ----------------------------------------------------------- */

/* "allowed everywhere" = every CPU of the topology this host has online
 * (an hwloc XML or synthetic host may name CPUs it lacks). */
static void
set_everywhere(struct live *l)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096];
	struct cpuset on;
	struct llcd_err e;

	l->everywhere = l->cfg.topo->all;
	if (f == NULL)
		return;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		if (cpuset_parse(&on, buf, &e) == 0 && cpuset_intersects(&on, &l->cfg.topo->all))
			cpuset_and(&l->everywhere, &l->everywhere, &on);
	}
	fclose(f);
}

void
live_set_topology(struct live *l, const struct topo *t)
{
	l->cfg.topo = t;
	set_everywhere(l);
	for (int i = 0; i < l->ndoms; i++)
		l->doms[i]->need_affinity = true;
}

struct live *
live_new(const struct live_config *cfg, struct llcd_err *err)
{
	struct live *l;
	const char *dir;
	struct llcd_err e;

	if (cfg == NULL || cfg->topo == NULL) {
		llcd_err_set(err, "live: no topology");
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	l->cfg = *cfg;
	if ((l->ps = procstat_new(cfg->proc_root, err)) == NULL)
		goto fail;
	if ((l->cs = coresched_new(cfg->coresched_ops)) == NULL) {
		llcd_err_set(err, "out of memory");
		goto fail;
	}
	if (coresched_probe(l->cs) != CORESCHED_AVAIL_YES)
		log_info("core scheduling unavailable (%s): isolation=\"core\" relies on placement alone",
		    coresched_reason(l->cs));
	l->kcas = live_kernel_cas(NULL, l->kcas_detail, sizeof(l->kcas_detail));
	set_everywhere(l);
	if (l->kcas != LIVE_KCAS_ABSENT)
		log_info("%s", l->kcas_detail);
	/* instruction counters for the benefit check */
	if (cfg->counters < 0) {
		snprintf(l->counters_reason, sizeof(l->counters_reason), "instruction counters off (counters off)");
	} else {
		l->counters = perfcount_available(l->counters_reason, sizeof(l->counters_reason));
		if (!l->counters && cfg->counters > 0)
			log_warnx("counters on: %s", l->counters_reason);
		else
			log_info("%s", l->counters_reason);
	}

	dir = cfg->state_dir ? cfg->state_dir : LIVE_DEFAULT_STATE_DIR;
	if (dir[0] != '\0') {
		if (snprintf(l->state_path, sizeof(l->state_path), "%s/%s", dir, LIVE_STATE_FILE) >=
		    (int)sizeof(l->state_path)) {
			llcd_err_set(err, "state directory path too long: %s", dir);
			goto fail;
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			llcd_err_set(err, "state directory %s: %s", dir, strerror(errno));
			goto fail;
		}
		l->state_enabled = true;
		if (live_state_read(l->state_path, &l->saved, &e) < 0)
			log_warnx("state file ignored: %s", e.msg);
		else if (l->saved.n)
			log_info("state file %s: %d domain%s llcd pinned before", l->state_path, l->saved.n,
			    l->saved.n == 1 ? "" : "s");
	}

	if (cfg->uri == NULL || strcmp(cfg->uri, LIVE_URI_NONE) != 0) {
		struct virt_config vc = {
			.uri = cfg->uri, .pid_dir = cfg->pid_dir, .proc_root = cfg->proc_root,
			.backoff_min_ms = cfg->backoff_min_ms, .backoff_max_ms = cfg->backoff_max_ms,
		};
		if ((l->virt = virt_new(&vc, err)) == NULL)
			goto fail;
		l->need_relist = true;
		if (virt_connect(l->virt, 0, &e) < 0)
			log_warnx("libvirt: %s; retrying with backoff", e.msg);
	}
	return l;
fail:
	live_free(l);
	return NULL;
}

bool
live_connected(const struct live *l)
{
	return l->virt != NULL && virt_connected(l->virt);
}

void
live_free(struct live *l)
{
	struct llcd_err e;

	if (l == NULL)
		return;
	if (live_save_state(l, &e) < 0)
		log_warnx("state file: %s", e.msg);
	for (int i = 0; i < l->ndoms; i++)
		dom_free(l->doms[i]);
	free(l->doms);
	virt_free(l->virt);
	procstat_free(l->ps);
	coresched_free(l->cs);
	live_state_clear(&l->saved);
	free(l->cpu_prev);
	free(l->cpu_cur);
	free(l);
}

void
live_stats(const struct live *l, struct live_stats *st)
{
	*st = l->st;
}

int
live_add_process(struct live *l, const char *name, int pid, int nvcpus,
    const struct policy_annotation *a, struct llcd_err *err)
{
	char uuid[VIRT_UUID_LEN];
	struct ldom *d;

	if (nvcpus < 1 || nvcpus > CPUSET_MAX)
		return llcd_err_set(err, "live_add_process: bad vCPU count %d", nvcpus);
	/* a made-up UUID from the pid, so that keys stay stable */
	snprintf(uuid, sizeof(uuid), "00000000-0000-4000-8000-%012x", (unsigned)pid);
	if (dom_by_uuid(l, uuid) != NULL)
		return llcd_err_set(err, "live_add_process: pid %d already added", pid);
	if ((d = dom_add(l, live_domain_key(uuid, pid), uuid, name, pid, nvcpus, nvcpus)) == NULL)
		return llcd_err_set(err, "out of memory");
	d->fake = true;
	d->need_annot = false;
	d->annot_read = true;
	d->guest.sockets = 1;
	d->guest.dies = d->guest.clusters = d->guest.threads = 1;
	d->guest.cores = nvcpus;
	if (a != NULL) {
		d->annotated = true;
		d->annot = *a;
	}
	return 0;
}

/* ---- llcctl --------------------------------------------------------------- */

int
live_domains(const struct live *l, uint64_t *keys, int max)
{
	for (int i = 0; i < l->ndoms && i < max; i++)
		keys[i] = l->doms[i]->key;
	return l->ndoms;
}

int
live_find(struct live *l, const char *name_or_uuid, uint64_t *key)
{
	uint64_t k = live_uuid_key(name_or_uuid);

	for (int i = 0; i < l->ndoms; i++) {
		if ((k != 0 && live_uuid_key(l->doms[i]->uuid) == k) || strcmp(l->doms[i]->name, name_or_uuid) == 0) {
			*key = l->doms[i]->key;
			return 0;
		}
	}
	return -1;
}

int
live_set_annotation(struct live *l, uint64_t key, const char *xml, bool live, bool config,
    struct llcd_err *err)
{
	struct ldom *d = dom_by_key(l, key);

	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (l->virt == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_set_annotation_flags(l->virt, d->uuid, xml, live, config, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	if (live || !config) {
		/* the metadata event follows; read now so describe is current */
		d->need_annot = true;
		read_annotation(l, d);
	}
	return 0;
}

static void
json_add_set(struct json_object *o, const char *k, const struct cpuset *s)
{
	char buf[1024];

	if (cpuset_format(s, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(%d CPUs)", cpuset_count(s));
	json_object_object_add(o, k, json_object_new_string(buf));
}

/* QMP query-cpus-fast through libvirt: NULL when not allowed or failed
 * (*why says why). */
static struct qmp_cpus *
qmp_cpus(struct live *l, struct ldom *d, char *why, size_t len)
{
	struct qmp_cpus *cpus = NULL;
	struct json_object *reply, *ret;
	struct llcd_err e;
	char *txt = NULL;

	if (!l->cfg.allow_qmp_passthrough || l->virt == NULL) {
		snprintf(why, len, "QMP cross-check off (allow_qmp_passthrough is not set)");
		return NULL;
	}
	if (virt_qemu_monitor(l->virt, d->uuid, "{\"execute\":\"query-cpus-fast\"}", &txt, &e) != VIRT_OK) {
		snprintf(why, len, "%s", e.msg);
		return NULL;
	}
	reply = json_tokener_parse(txt);
	free(txt);
	if (reply == NULL || !json_object_object_get_ex(reply, "return", &ret)) {
		snprintf(why, len, "query-cpus-fast: no \"return\" in the reply");
	} else if (qmp_cpus_parse(ret, &cpus, &e) < 0) {
		snprintf(why, len, "query-cpus-fast: %.400s", e.msg);
		cpus = NULL;
	}
	json_object_put(reply);
	return cpus;
}

int
live_describe(struct live *l, uint64_t key, struct json_object *out)
{
	struct ldom *d = dom_by_key(l, key);
	struct json_object *arr;
	struct qmp_cpus *qc;
	char buf[ANNOT_XML_MAX], why[LLCD_ERR_MSG] = "";
	const char *state, *reason;
	struct llcd_err e;

	if (d == NULL)
		return -1;
	if (d->error) {
		state = "error";
		reason = d->error_msg;
	} else if (d->annot_err[0]) {
		state = "error";
		reason = "invalid llc-policy annotation: left unmanaged";
	} else if (!d->annotated) {
		state = "unmanaged";
		reason = "no llc-policy annotation";
	} else if (d->annot.mode == POLICY_MODE_NONE) {
		state = "unmanaged";
		reason = "mode none";
	} else if (d->refused) {
		state = "unmanaged";
		reason = d->refuse_msg;
	} else if (d->threads_missing) {
		state = "managed";
		reason = "some vCPU threads not found yet";
	} else {
		state = "managed";
		reason = "";
	}
	snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)d->key);
	json_object_object_add(out, "key", json_object_new_string(buf));
	json_object_object_add(out, "uuid", json_object_new_string(d->uuid));
	json_object_object_add(out, "name", json_object_new_string(d->name));
	json_object_object_add(out, "pid", json_object_new_int(d->pid));
	json_object_object_add(out, "state", json_object_new_string(state));
	json_object_object_add(out, "reason", json_object_new_string(reason));
	json_object_object_add(out, "vcpus", json_object_new_int(d->nvcpus));
	json_object_object_add(out, "max_vcpus", json_object_new_int(d->maxvcpus));
	if (d->annot_err[0])
		json_object_object_add(out, "annotation_error", json_object_new_string(d->annot_err));
	if (d->annotated && annot_format(&d->annot, buf, sizeof(buf), &e) == 0)
		json_object_object_add(out, "annotation", json_object_new_string(buf));
	snprintf(buf, sizeof(buf), "sockets=%d dies=%d clusters=%d cores=%d threads=%d", d->guest.sockets,
	    d->guest.dies, d->guest.clusters, d->guest.cores, d->guest.threads);
	json_object_object_add(out, "guest_topology", json_object_new_string(buf));
	if (d->annotated && d->annot.isolation == POLICY_ISO_CORE)
		json_object_object_add(out, "core_scheduling", json_object_new_string(
		    d->cs_done && d->cs_tid ? "cookie assigned" : coresched_reason(l->cs)));
	if (!cpuset_empty(&d->emu_applied))
		json_add_set(out, "emulator_pin", &d->emu_applied);
	if (d->gc) {
		struct guestchan_stats gs;
		struct json_object *g = json_object_new_object();
		guestchan_stats(d->gc, &gs);
		json_object_object_add(g, "state", json_object_new_string(guestchan_state_name(gs.state)));
		json_object_object_add(g, "reports", json_object_new_int64((int64_t)gs.reports));
		json_object_object_add(g, "bad_lines", json_object_new_int64((int64_t)gs.bad));
		json_object_object_add(g, "throttles", json_object_new_int64((int64_t)gs.throttles));
		json_object_object_add(g, "backoffs", json_object_new_int64((int64_t)gs.backoffs));
		json_object_object_add(g, "guest_dropped", json_object_new_int64((int64_t)gs.guest_dropped));
		if (gs.last_error[0])
			json_object_object_add(g, "last_error", json_object_new_string(gs.last_error));
		json_object_object_add(out, "guest_channel", g);
	}
	qc = qmp_cpus(l, d, why, sizeof(why));
	if (qc == NULL)
		json_object_object_add(out, "qmp", json_object_new_string(why));
	arr = json_object_new_array();
	for (int v = 0; v < d->nvcpus; v++) {
		struct json_object *o = json_object_new_object();
		struct live_vcpu_pos p;
		const struct lvcpu *c = &d->v[v];
		live_guest_position(&d->guest, v, &p);
		json_object_object_add(o, "vcpu", json_object_new_int(v));
		json_object_object_add(o, "tid", json_object_new_int(c->tid));
		json_object_object_add(o, "last_cpu", json_object_new_int(c->last_cpu));
		json_add_set(o, "affinity", &c->affinity);
		if (!cpuset_empty(&c->applied))
			json_add_set(o, "pinned_by_llcd", &c->applied);
		json_object_object_add(o, "socket", json_object_new_int(p.socket));
		json_object_object_add(o, "die", json_object_new_int(p.die));
		json_object_object_add(o, "cluster", json_object_new_int(p.cluster));
		json_object_object_add(o, "core", json_object_new_int(p.core));
		json_object_object_add(o, "thread", json_object_new_int(p.thread));
		if (qc != NULL) {
			const struct qmp_cpu *q = NULL;
			for (size_t k = 0; k < qc->n; k++)
				if (qc->cpu[k].cpu_index == v)
					q = &qc->cpu[k];
			if (q == NULL)
				snprintf(why, sizeof(why), "not in query-cpus-fast");
			else if (q->tid != c->tid)
				snprintf(why, sizeof(why), "QMP thread-id %d, /proc says %d", (int)q->tid, c->tid);
			else if ((q->props.socket_id >= 0 && q->props.socket_id != p.socket) ||
			         (q->props.die_id >= 0 && q->props.die_id != p.die) ||
			         (q->props.core_id >= 0 && q->props.core_id != p.core) ||
			         (q->props.thread_id >= 0 && q->props.thread_id != p.thread))
				snprintf(why, sizeof(why), "QMP says socket %d die %d core %d thread %d",
				    q->props.socket_id, q->props.die_id, q->props.core_id, q->props.thread_id);
			else
				snprintf(why, sizeof(why), "match");
			json_object_object_add(o, "qmp", json_object_new_string(why));
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(out, "vcpu_threads", arr);
	qmp_cpus_free(qc);
	return 0;
}

/* ---- more for llcctl (through the daemon's back-end hooks) ----------------- */

int
live_get_annotation(struct live *l, uint64_t key, char **xml, struct llcd_err *err)
{
	struct ldom *d = dom_by_key(l, key);

	*xml = NULL;
	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (l->virt == NULL) {
		char buf[ANNOT_XML_MAX];
		if (d->annotated && annot_format_metadata(&d->annot, buf, sizeof(buf), err) == 0 &&
		    (*xml = strdup(buf)) == NULL)
			return llcd_err_set(err, "out of memory");
		return 0;
	}
	if (virt_get_annotation(l->virt, d->uuid, xml, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	return 0;
}

int
live_get_xml(struct live *l, uint64_t key, bool inactive, char **xml, struct llcd_err *err)
{
	struct ldom *d = dom_by_key(l, key);

	*xml = NULL;
	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (l->virt == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_get_xml(l->virt, d->uuid, inactive, xml, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	return 0;
}

int
live_define_xml(struct live *l, const char *xml, struct llcd_err *err)
{
	if (l->virt == NULL)
		return llcd_err_set(err, "no libvirt connection in this back-end");
	return virt_define_xml(l->virt, xml, err) == VIRT_OK ? 0 : -1;
}

bool
live_counters(const struct live *l)
{
	return l->counters;
}

int
live_add_guest_channel(struct live *l, uint64_t key, bool live, char *path, size_t len,
                       struct llcd_err *err)
{
	struct ldom *d = dom_by_key(l, key);
	char xml[1024];

	if (d == NULL || d->fake)
		return llcd_err_set(err, "no such libvirt domain");
	if (l->cfg.guest_channel_dir == NULL || l->cfg.guest_channel_dir[0] == '\0')
		return llcd_err_set(err, "guest-channel-dir is not set in llcd.conf");
	if (mkdir(l->cfg.guest_channel_dir, 0750) < 0 && errno != EEXIST)
		return llcd_err_set(err, "cannot create %s: %s", l->cfg.guest_channel_dir, strerror(errno));
	if (guestchan_sock_path(l->cfg.guest_channel_dir, d->uuid, path, len, err) < 0 ||
	    guestchan_channel_xml(path, xml, sizeof(xml), err) < 0)
		return -1;
	if (virt_attach_device(l->virt, d->uuid, xml, live, err) != VIRT_OK)
		return -1;
	log_dom(LOG_INFO, d->name, -1, 0, "guest channel added (%s): %s", live ? "live and config" : "config", path);
	/* connect at the next period (live) or after the next start */
	guestchan_free(d->gc);
	d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
	d->gc_looked = true;
	return 0;
}

bool
live_is_running(const struct live *l, uint64_t key)
{
	return dom_by_key(l, key) != NULL;
}

int
live_describe_host(struct live *l, struct json_object *out)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uri", json_object_new_string(l->virt ? (l->cfg.uri ? l->cfg.uri : VIRT_DEFAULT_URI) :
	    LIVE_URI_NONE));
	json_object_object_add(o, "connected", json_object_new_boolean(l->virt && virt_connected(l->virt)));
	json_object_object_add(o, "reconnects", json_object_new_int(l->virt ? (int)virt_reconnects(l->virt) : 0));
	json_object_object_add(o, "domains", json_object_new_int(l->ndoms));
	json_object_object_add(o, "state_file", json_object_new_string(l->state_enabled ? l->state_path : ""));
	json_object_object_add(o, "dry_run", json_object_new_boolean(l->cfg.dry_run));
	json_object_object_add(out, "libvirt", o);
	json_object_object_add(out, "core_scheduling", json_object_new_string(
	    coresched_probe(l->cs) == CORESCHED_AVAIL_YES ? "available" : coresched_reason(l->cs)));
	o = json_object_new_object();
	json_object_object_add(o, "state", json_object_new_string(live_kcas_name(l->kcas)));
	json_object_object_add(o, "detail", json_object_new_string(l->kcas_detail));
	json_object_object_add(out, "kernel_cache_aware_scheduling", o);
	return 0;
}
