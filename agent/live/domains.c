// SPDX-License-Identifier: GPL-2.0-or-later
/* domains.c - the live back-end's domains: listed from libvirt (or added
 * with live_add_process), kept current by libvirt's events, their
 * annotation read and their vCPU threads discovered in /proc. */
#include "live_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "annotation_xml.h"
#include "guestchan.h"
#include "qmp.h"
#include "log.h"
#include "procstat.h"
#include "tracer.h"

#define RELIST_RETRY_NS 2000000000ull

struct ldom *
ldom_by_key(const struct live *l, uint64_t key)
{
	for (int i = 0; i < l->ndoms; i++)
		if (l->doms[i]->key == key)
			return l->doms[i];
	return NULL;
}

struct ldom *
ldom_by_uuid(const struct live *l, const struct lconn *c, const char *uuid)
{
	uint64_t k = virt_uuid_key(uuid);

	for (int i = 0; k != 0 && i < l->ndoms; i++)
		if (l->doms[i]->conn == c && virt_uuid_key(l->doms[i]->uuid) == k)
			return l->doms[i];
	return NULL;
}

/* Any domain of that UUID (live_add_process's made-up ones too). */
static struct ldom *
dom_by_uuid(const struct live *l, const char *uuid)
{
	uint64_t k = virt_uuid_key(uuid);

	for (int i = 0; k != 0 && i < l->ndoms; i++)
		if (virt_uuid_key(l->doms[i]->uuid) == k)
			return l->doms[i];
	return NULL;
}

static void
vcpu_close(struct ldom *d, struct lvcpu *c)
{
	if (c->tr_slot >= 0 && d->tracer != NULL)
		tracer_thread_remove(d->tracer, c->tr_slot);
	c->tr_slot = -1;
	c->prev_delay = 0;
	if (c->perf_fd >= 0)
		close(c->perf_fd);
	c->perf_fd = -1;
	c->have_instr = false;
	procstat_thread_free(c->th);
	c->th = NULL;
	c->tid = 0;
	c->have_prev = false;
	c->last_cpu = -1;
	lvcpu_clear(d, &c->affinity);
}

void
ldom_str_set(char **m, size_t cap, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (cap > sizeof(buf))
		cap = sizeof(buf);
	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (*m != NULL && strcmp(*m, buf) == 0)
		return;
	free(*m);
	*m = buf[0] ? strdup(buf) : NULL;
}

void
ldom_str_clear(char **m)
{
	free(*m);
	*m = NULL;
}

void
ldom_free(struct ldom *d)
{
	if (d == NULL)
		return;
	ldom_str_clear(&d->gc_refused);
	ldom_str_clear(&d->qmp.why);
	ldom_str_clear(&d->rule_where);
	ldom_str_clear(&d->rule_match);
	ldom_str_clear(&d->annot_err);
	ldom_str_clear(&d->refuse_msg);
	ldom_str_clear(&d->error_msg);
	ldom_str_clear(&d->bound.error);
	for (int v = 0; v < d->maxvcpus; v++) {
		vcpu_close(d, &d->v[v]);
		lvcpu_clear(d, &d->v[v].applied);
	}
	if (d->tracer != NULL && d->tr_dom >= 0)
		tracer_domain_remove(d->tracer, d->tr_dom);
	procstat_proc_free(d->qemu);
	free(d->lv.pins);
	live_mbm_forget(d);
	guestchan_free(d->gc);
	qmp_cpus_free(d->qmp.cpus);
	live_ext_forget(d);
	free(d->bound.cg_cgroup);
	free(d->bound.cg_dir);
	free(d->bound.cg_path);
	if (d->bound.cg_fd >= 0)
		close(d->bound.cg_fd);
	free(d->annot);
	free(d->mem.maps);
	free(d->v);
	free(d);
}

void
ldom_remove(struct live *l, struct ldom *d, const char *why)
{
	for (int i = 0; i < l->ndoms; i++) {
		if (l->doms[i] != d)
			continue;
		log_dom(LOG_INFO, d->name, -1, 0, "no longer managed: %s", why);
		memmove(&l->doms[i], &l->doms[i + 1], sizeof(l->doms[0]) * (size_t)(l->ndoms - i - 1));
		l->ndoms--;
		ldom_free(d);
		return;
	}
}

int
ldom_resize(struct ldom *d, int maxvcpus)
{
	struct lvcpu *v;

	if (maxvcpus < 1)
		maxvcpus = 1;
	if (maxvcpus <= d->maxvcpus && d->v != NULL) {
		for (int i = maxvcpus; i < d->maxvcpus; i++) {
			vcpu_close(d, &d->v[i]);
			lvcpu_clear(d, &d->v[i].applied);
		}
		d->maxvcpus = maxvcpus;
		return 0;
	}
	if ((v = realloc(d->v, sizeof(*v) * (size_t)maxvcpus)) == NULL)
		return -1;
	for (int i = d->v ? d->maxvcpus : 0; i < maxvcpus; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].last_cpu = -1;
		v[i].perf_fd = -1;
		v[i].tr_slot = -1;
		v[i].affinity = v[i].applied = &cpuset_none;
	}
	d->v = v;
	d->maxvcpus = maxvcpus;
	return 0;
}

void
ldom_set_nvcpus(struct ldom *d, int nvcpus)
{
	if (nvcpus == d->nvcpus || nvcpus > d->maxvcpus)
		return;
	log_dom(LOG_INFO, d->name, -1, 0, "%d vCPU%s online (was %d)", nvcpus, nvcpus == 1 ? "" : "s", d->nvcpus);
	for (int v = d->nvcpus; v < nvcpus; v++) {
		lvcpu_clear(d, &d->v[v].applied);
		d->v[v].hotplugged = true;
	}
	for (int v = nvcpus; v < d->nvcpus; v++) {
		lvcpu_clear(d, &d->v[v].applied);
		d->v[v].hotplugged = false;
	}
	d->nvcpus = nvcpus;
	d->todo |= LDOM_TODO_DISCOVER | LDOM_TODO_OBS;
}

struct ldom *
ldom_add(struct live *l, uint64_t key, const char *uuid, const char *name, int pid,
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
	d->sets = l->sets;
	d->tracer = l->tracer;
	d->tr_dom = -1;
	d->bound.cg_fd = -1;
	if (ldom_set_annot(d, NULL) < 0 || ldom_resize(d, maxvcpus) < 0) {
		free(d->annot);
		free(d->v);
		free(d);
		return NULL;
	}
	d->key = key;
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->pid = pid;
	d->nvcpus = nvcpus;
	d->state = LDOM_NEW;
	d->todo = LDOM_TODO_DISCOVER | LDOM_TODO_ANNOT | LDOM_TODO_OBS;
	l->doms[l->ndoms++] = d;
	return d;
}

int
ldom_set_annot(struct ldom *d, const struct policy_annotation *a)
{
	struct policy_annotation *n;

	if (a != NULL) {
		n = policy_annotation_dup(a);
	} else {
		struct policy_annotation def;   /* (the full struct: the stack's) */
		policy_annotation_defaults(&def);
		n = policy_annotation_dup(&def);
	}
	if (n == NULL)
		return -1;
	free(d->annot);
	d->annot = n;
	return 0;
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

void
live_set_rules(struct live *l, const struct policyrule_set *rules)
{
	l->rules = rules;
	for (int i = 0; i < l->ndoms; i++) {
		/* the rule's strings stay until the domain is matched again */
		if (!l->doms[i]->fake || l->doms[i]->ext)
			l->doms[i]->todo |= LDOM_TODO_ANNOT;
	}
}

/* A domain without an annotation: the first policy-rule that matches it
 * (its name, and the metadata of its live XML when a rule needs them).
 * 1: a rule applies (d->annot, d->rule; or INVALID when its groups do not
 * fit), 0: none, -1: a transient error (read again next period). */
static int
apply_rules(struct live *l, struct ldom *d)
{
	struct policy_annotation a;
	struct llcd_err e = { "" };
	char *xml = NULL;
	int i, old = d->rule;
	bool fresh = d->state == LDOM_NEW;

	if (l->rules == NULL || l->rules->n == 0) {
		d->rule = 0;
		return 0;
	}
	if (policyrule_set_need_metadata(l->rules) && !d->ext && ldom_virt(d) != NULL) {
		/* (an ext domain has no domain XML: its name= rules apply) */
		enum virt_result r = virt_get_xml(ldom_virt(d), d->uuid, false, &xml, &e);
		if (r == VIRT_TRANSIENT)
			return -1;
		if (r != VIRT_OK) {
			log_dom(LOG_WARNING, d->name, -1, 0, "policy-rule: cannot read the domain XML, only name= "
			    "rules apply: %s", e.msg);
			free(xml);
			xml = NULL;
		}
	}
	i = policyrule_find(l->rules, d->name, xml, xml ? strlen(xml) : 0, &e);
	free(xml);
	d->rule = 0;
	if (i == -2) {
		log_dom(LOG_WARNING, d->name, -1, 0, "policy-rule: %s; no rule applies", e.msg);
		return 0;
	}
	if (i < 0)
		return 0;
	const struct policyrule *r = &l->rules->r[i];
	bool same = old == i + 1 && !strcmp(ldom_str(d->rule_where), r->where) &&
	    !strcmp(ldom_str(d->rule_match), r->match);
	d->rule = i + 1;
	ldom_str_set(&d->rule_where, POLICYRULE_WHERE, "%s", r->where);
	ldom_str_set(&d->rule_match, POLICYRULE_TEXT, "%s", r->match);
	if (policyrule_annotation(r, d->maxvcpus, &a, &e) < 0) {
		d->state = LDOM_INVALID;
		if (strcmp(ldom_str(d->annot_err), e.msg) != 0)
			log_dom(LOG_WARNING, d->name, -1, 0, "%s; domain left unmanaged", e.msg);
		ldom_str_set(&d->annot_err, LLCD_ERR_MSG, "%s", e.msg);
		return 1;
	}
	if (ldom_set_annot(d, &a) < 0)
		return -1;      /* out of memory: read again next period */
	ldom_str_clear(&d->annot_err);
	if (fresh || !same)
		log_dom(LOG_INFO, d->name, -1, 0, "no llc-policy annotation; policy-rule %d (%s: %s): mode %s, "
		    "isolation %s", d->rule, r->where, r->match, policy_mode_name(d->annot->mode),
		    policy_isolation_name(d->annot->isolation));
	d->state = d->refuse_msg != NULL ? LDOM_REFUSED : LDOM_MANAGED;
	return 1;
}

/* Read and parse the annotation (the state's moves from NEW, UNANNOTATED,
 * INVALID, MANAGED and REFUSED: live_int.h); VIRT_TRANSIENT leaves it for
 * later. */
void
ldom_read_annotation(struct live *l, struct ldom *d)
{
	struct policy_annotation a;
	struct llcd_err e = { "" };
	char *xml = NULL;
	enum virt_result r;
	bool was = ldom_annotated(d);
	char old_err[LLCD_ERR_MSG];

	if (d->ext) {
		/* another source's text (a policy file): the same parser */
		r = VIRT_OK;
		if (d->ext_annot != NULL && (xml = strdup(d->ext_annot)) == NULL)
			return;         /* out of memory: tried again next period */
	} else if (ldom_virt(d) == NULL) {
		d->todo &= ~(unsigned)LDOM_TODO_ANNOT;
		return;
	} else {
		r = virt_get_annotation(ldom_virt(d), d->uuid, &xml, &e);
	}
	if (r != VIRT_OK) {
		if (r == VIRT_TRANSIENT)
			return;         /* LDOM_TODO_ANNOT stays: retried next period */
		log_dom(LOG_WARNING, d->name, -1, 0, "cannot read the llc-policy annotation: %s", e.msg);
		d->todo &= ~(unsigned)LDOM_TODO_ANNOT;
		return;
	}
	l->st.annot_reads++;
	snprintf(old_err, sizeof(old_err), "%s", ldom_str(d->annot_err));
	if (xml == NULL) {
		int rr = apply_rules(l, d);
		if (rr < 0)
			return;         /* LDOM_TODO_ANNOT stays: retried next period */
		d->todo &= ~(unsigned)LDOM_TODO_ANNOT;
		d->todo |= LDOM_TODO_OBS;
		if (rr > 0)
			return;
		(void)ldom_set_annot(d, NULL);  /* (out of memory: the old one, unread) */
		ldom_str_clear(&d->annot_err);
		if (was || d->state == LDOM_NEW)
			log_dom(LOG_INFO, d->name, -1, 0, "no llc-policy annotation: left to the default scheduler "
			    "(confined to the shared pool as a whole while isolated domains exist)");
		d->state = LDOM_UNANNOTATED;
		return;
	}
	d->todo &= ~(unsigned)LDOM_TODO_ANNOT;
	ldom_str_clear(&d->annot_err);
	d->rule = 0;            /* an annotation wins over every rule */
	if (annot_parse_metadata(xml, strlen(xml), d->maxvcpus, &a, &e) < 0) {
		d->state = LDOM_INVALID;
		(void)ldom_set_annot(d, NULL);  /* (out of memory: the old one, unread) */
		if (d->ext && d->ext_src != NULL && d->ext_src[0])
			ldom_str_set(&d->annot_err, LLCD_ERR_MSG, "%.200s: %.300s", d->ext_src, e.msg);
		else
			ldom_str_set(&d->annot_err, LLCD_ERR_MSG, "%s", e.msg);
		if (strcmp(old_err, ldom_str(d->annot_err)) != 0)
			log_dom(LOG_WARNING, d->name, -1, 0, "invalid llc-policy annotation, domain left unmanaged: %s",
			    ldom_str(d->annot_err));
	} else {
		bool changed = !was || !annot_equal(&a, d->annot);
		if (ldom_set_annot(d, &a) < 0) {
			d->todo |= LDOM_TODO_ANNOT;     /* out of memory: read again */
			free(xml);
			return;
		}
		if (changed)
			log_dom(LOG_INFO, d->name, -1, 0, "annotation: mode %s, isolation %s, topology %s, %d group%s",
			    policy_mode_name(a.mode), policy_isolation_name(a.isolation),
			    policy_topology_name(a.topology), a.ngroups, a.ngroups == 1 ? "" : "s");
		d->state = d->refuse_msg != NULL ? LDOM_REFUSED : LDOM_MANAGED;
	}
	d->todo |= LDOM_TODO_OBS;
	free(xml);
}

/* Insert or update a running domain from connection c. */
static void
upsert(struct live *l, struct lconn *c, const struct virt_domain *vd)
{
	uint64_t key = virt_domain_key(vd->uuid, vd->pid);
	struct ldom *d = ldom_by_uuid(l, c, vd->uuid);
	int maxv = vd->maxvcpus > vd->nvcpus ? vd->maxvcpus : vd->nvcpus;

	if (key == 0)
		return;
	if (d != NULL && d->pid > 0 && vd->pid == 0) {
		/* its QEMU is gone while libvirt still says active (being
		 * destroyed): not a new run to place with no threads; the
		 * stopped event follows (a relist adds a run whose pid stays
		 * unknown) */
		ldom_remove(l, d, "its QEMU process exited");
		return;
	}
	if (d != NULL && d->pid != vd->pid) {
		/* a new QEMU (restarted between two looks, or its pid just
		 * became known): a new key, so the engine places it afresh */
		ldom_remove(l, d, d->pid ? "its QEMU process changed" : "its QEMU pid is known now");
		d = NULL;
	}
	if (d == NULL) {
		if (ldom_by_key(l, key) != NULL) {
			/* the same run through another connection (two paths to
			 * one daemon): the first one keeps it */
			return;
		}
		d = ldom_add(l, key, vd->uuid, vd->name, vd->pid, vd->nvcpus, maxv);
		if (d == NULL) {
			log_dom(LOG_WARNING, vd->name, -1, 0, "out of memory; not managed");
			return;
		}
		d->conn = c;
		if (l->nconns > 1 || c->sock[0])
			log_dom(LOG_INFO, d->name, -1, 0, "running: QEMU pid %d, %d vCPU%s (max %d), libvirt %s", vd->pid,
			    vd->nvcpus, vd->nvcpus == 1 ? "" : "s", vd->maxvcpus, c->uri);
		else
			log_dom(LOG_INFO, d->name, -1, 0, "running: QEMU pid %d, %d vCPU%s (max %d)", vd->pid,
			    vd->nvcpus, vd->nvcpus == 1 ? "" : "s", vd->maxvcpus);
		l->new_domains++;
	}
	if (d->nvcpus != vd->nvcpus || d->maxvcpus < maxv) {
		if (d->maxvcpus < maxv && ldom_resize(d, maxv) < 0) {
			log_dom(LOG_WARNING, d->name, -1, 0, "out of memory");
			return;
		}
		ldom_set_nvcpus(d, vd->nvcpus);
		d->todo |= LDOM_TODO_DISCOVER | LDOM_TODO_OBS;
	}
	snprintf(d->name, sizeof(d->name), "%s", vd->name);
	d->pid = vd->pid;
	d->persistent = vd->persistent;
	guest_topo(&vd->topo, vd->maxvcpus, &d->guest);
	d->seen = true;
	l->st.refreshes++;
}

void
ldom_refresh(struct live *l, struct lconn *c, const char *uuid)
{
	struct virt_domain vd;
	struct llcd_err e;
	enum virt_result r = virt_domain_get(c->virt, uuid, &vd, &e);
	struct ldom *d = ldom_by_uuid(l, c, uuid);

	if (r == VIRT_OK && vd.active) {
		upsert(l, c, &vd);
		if ((d = ldom_by_uuid(l, c, uuid)) != NULL && (d->todo & LDOM_TODO_ANNOT))
			ldom_read_annotation(l, d);
	} else if (r == VIRT_OK || r == VIRT_GONE) {
		if (d != NULL)
			ldom_remove(l, d, r == VIRT_GONE ? "undefined" : "not running");
	} else if (r == VIRT_TRANSIENT) {
		c->need_relist = true;
	} else {
		log_warnx("domain %s: %s", uuid, e.msg);
	}
}

/* Track a vCPU thread just found with the in-kernel tracer: the domain
 * first, then the thread. Past a cap (logged once per domain) the thread
 * is sampled from /proc. */
static void
tracer_register(struct live *l, struct ldom *d, int v, struct lvcpu *c)
{
	struct llcd_err e;

	if (d->tracer == NULL)
		return;
	if (d->tr_dom < 0 && (d->tr_dom = tracer_domain_add(d->tracer, &e)) < 0) {
		log_dom(LOG_WARNING, d->name, -1, 0, "%s; its threads are sampled from /proc", e.msg);
		d->tracer = NULL;       /* not again */
		return;
	}
	if (d->qemu == NULL) {
		enum procstat_status st;
		d->qemu = procstat_proc_open(l->ps, d->pid, &st, &e);
	}
	c->tr_slot = tracer_thread_add(d->tracer, d->tr_dom, c->tid, v, &e);
	if (c->tr_slot < 0) {
		if (!d->tr_warned)      /* once per domain: a cap is reached */
			log_dom(LOG_WARNING, d->name, v, c->tid, "%s", e.msg);
		d->tr_warned = true;
		return;
	}
	/* registered after it was listed: if it exited in between, the
	 * programs never saw it go (tgkill with signal 0: is it there?) */
	if (syscall(SYS_tgkill, d->pid, c->tid, 0) != 0 && errno == ESRCH) {
		tracer_thread_remove(d->tracer, c->tr_slot);
		c->tr_slot = -1;
	}
}

/* Whether the tracer saw the thread in c exit (its TID may be reused). */
static bool
tracer_exited(const struct ldom *d, const struct lvcpu *c)
{
	struct tracer_sample ts;

	return d->tracer == NULL || tracer_thread_read(d->tracer, c->tr_slot, &ts) < 0 || ts.exited;
}

/* Find the vCPU threads of a domain's QEMU and open them. */
void
ldom_discover(struct live *l, struct ldom *d)
{
	struct procstat_task *tasks = NULL;
	struct llcd_err e;
	enum procstat_status st;
	int n = 0, nfound = 0, nnew = 0, nwant = 0;
	uint64_t named_sig = 0;
	int *newtids;
	bool *found;

	d->todo &= ~(unsigned)LDOM_TODO_DISCOVER;
	d->discovered_period = l->period;
	if (d->pid <= 0) {
		d->threads_missing = true;
		return;
	}
	st = procstat_list_tasks(l->ps, d->pid, &tasks, &n, &e);
	if (st == PROCSTAT_GONE) {
		d->threads_missing = true;
		if (d->conn)
			ldom_refresh(l, d->conn, d->uuid);   /* stopped? */
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
		d->todo |= LDOM_TODO_DISCOVER;
		return;
	}
	for (int i = 0; i < n; i++) {
		int v = tasks[i].index;
		struct lvcpu *c;
		if (d->ext) {
			/* the source named the vCPU threads (QMP thread-id); the
			 * threads QEMU names as vCPUs only say when to ask it
			 * again (hot-plug) */
			if (tasks[i].kind == PROCSTAT_VCPU)
				named_sig += ((uint64_t)(unsigned)tasks[i].tid + 1) * 0x9e3779b97f4a7c15ull;
			if ((v = live_ext_vcpu_of(d, tasks[i].tid)) < 0)
				continue;
		} else if (tasks[i].kind != PROCSTAT_VCPU || v < 0) {
			continue;
		}
		if (v >= d->nvcpus && d->conn != NULL && !d->conn->need_relist) {
			/* hot-plugged (setvcpus sends no event): libvirt's
			 * count is re-read, then the threads again */
			log_dom(LOG_INFO, d->name, v, tasks[i].tid, "vCPU beyond the %d online; re-reading the domain",
			    d->nvcpus);
			d->conn->need_relist = true;
		}
		if (v >= d->maxvcpus)
			continue;
		found[v] = true;
		c = &d->v[v];
		if (c->tid == tasks[i].tid && (c->th != NULL || (c->tr_slot >= 0 && !tracer_exited(d, c))))
			continue;
		vcpu_close(d, c);
		/* the tracer, or the thread's /proc files (the tracer needs no
		 * descriptor per thread, /proc two) */
		c->tid = tasks[i].tid;
		tracer_register(l, d, v, c);
		if (c->tr_slot < 0 &&
		    (c->th = procstat_thread_open(l->ps, d->pid, tasks[i].tid, &st, &e)) == NULL) {
			if (st != PROCSTAT_GONE)
				log_dom(LOG_WARNING, d->name, v, tasks[i].tid, "cannot open /proc files: %s", e.msg);
			c->tid = 0;
			found[v] = false;
			continue;
		}
		struct cpuset aff;
		if (procstat_affinity(c->tid, &aff, &e) != PROCSTAT_OK)
			cpuset_zero(&aff);
		lvcpu_set(d, &c->affinity, &aff);
		newtids[nnew++] = c->tid;
		log_dom(LOG_DEBUG, d->name, v, c->tid, "vCPU thread found");
	}
	for (int v = 0; v < d->maxvcpus; v++) {
		if (!found[v] && d->v[v].tid) {
			log_dom(LOG_INFO, d->name, v, d->v[v].tid, "vCPU thread gone");
			vcpu_close(d, &d->v[v]);
			if (v < d->nvcpus && d->conn != NULL)
				d->conn->need_relist = true;  /* hot-unplug, or the guest stopped */
		}
		if (v < d->nvcpus && d->v[v].tid)
			nfound++;
		/* an ext domain's cpu-indexes may have holes (a vCPU
		 * unplugged below the highest): only those the source named */
		if (v < d->nvcpus && (!d->ext || (d->ext_tids && d->ext_tids[v])))
			nwant++;
	}
	if (d->ext)
		live_ext_threads_seen(l, d, found, named_sig);
	d->threads_missing = nfound < nwant;
	d->nthreads_seen = n;
	if (!d->state_checked && !d->threads_missing)
		live_state_check(l, d);
	live_coresched(l, d, newtids, nnew);
	free(newtids);
	free(found);
	free(tasks);
}

void
live_relist(struct live *l, struct lconn *c)
{
	struct virt_domain *vds = NULL;
	struct llcd_err e;
	int n = 0;

	if (virt_list_domains(c->virt, &vds, &n, &e) < 0) {
		log_warnx("listing domains: %s", e.msg);
		c->need_relist = true;
		c->relist_due_ns = l->now_ns + RELIST_RETRY_NS;
		return;
	}
	l->st.relists++;
	c->need_relist = false;
	c->listed_once = true;
	for (int i = 0; i < l->ndoms; i++)
		l->doms[i]->seen = l->doms[i]->fake || l->doms[i]->conn != c;
	for (int i = 0; i < n; i++)
		if (vds[i].active)
			upsert(l, c, &vds[i]);
	for (int i = 0; i < l->ndoms; i++) {
		if (!l->doms[i]->seen) {
			ldom_remove(l, l->doms[i], "not running");
			i--;
		}
	}
	for (int i = 0; i < l->ndoms; i++)
		if (l->doms[i]->conn == c && (l->doms[i]->todo & LDOM_TODO_ANNOT))
			ldom_read_annotation(l, l->doms[i]);
	free(vds);
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
	if ((d = ldom_add(l, virt_domain_key(uuid, pid), uuid, name, pid, nvcpus, nvcpus)) == NULL)
		return llcd_err_set(err, "out of memory");
	d->fake = true;
	/* pinned through the uri's libvirt when there is one (live.h) */
	for (int i = 0; i < l->nconns; i++)
		if (!l->conns[i]->sock[0])
			d->conn = l->conns[i];
	d->todo &= ~(unsigned)LDOM_TODO_ANNOT;
	d->state = LDOM_UNANNOTATED;
	d->guest.sockets = 1;
	d->guest.dies = d->guest.clusters = d->guest.threads = 1;
	d->guest.cores = nvcpus;
	if (a != NULL) {
		if (ldom_set_annot(d, a) < 0) {
			ldom_remove(l, d, "out of memory");
			return llcd_err_set(err, "out of memory");
		}
		d->state = LDOM_MANAGED;
	}
	return 0;
}

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
	uint64_t k = virt_uuid_key(name_or_uuid);

	for (int i = 0; i < l->ndoms; i++) {
		if ((k != 0 && virt_uuid_key(l->doms[i]->uuid) == k) || strcmp(l->doms[i]->name, name_or_uuid) == 0) {
			*key = l->doms[i]->key;
			return 0;
		}
	}
	return -1;
}

bool
live_is_running(const struct live *l, uint64_t key)
{
	return ldom_by_key(l, key) != NULL;
}
