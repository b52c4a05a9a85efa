// SPDX-License-Identifier: GPL-2.0-or-later
/* state.c - the live back-end's state file (state.h): the pins llcd last
 * applied per domain, written atomically each period that changed them and
 * read back at start to adopt the domains llcd left. */
#include "live_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "safefile.h"
#include "state.h"

void
live_state_clear(struct live_state *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->doms[i].vcpus);
	free(s->doms);
	s->doms = NULL;
	s->n = 0;
}

/* The entry of key in s (NULL: none, or no s). */
static struct live_state_dom *
state_find(const struct live_state *s, uint64_t key)
{
	for (int i = 0; s != NULL && i < s->n; i++)
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
	/* not through a symbolic link, in a directory only root may write
	 * (safefile.h): the file says which threads llcd pins */
	int fd = safefile_open_path(path, O_RDONLY, 0, err);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
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

int
live_state_write(const char *path, const struct live_state *s, struct llcd_err *err)
{
	char buf[16384], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	/* made in memory, then a file of its own (O_EXCL, never a fixed name
	 * two instances would share nor one planted there) renamed over path
	 * (safefile_replace) */
	if ((f = open_memstream(&text, &len)) == NULL)
		return llcd_err_set(err, "out of memory");
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
	if (fclose(f) != 0) {
		free(text);
		return llcd_err_set(err, "out of memory");
	}
	rc = safefile_replace_path(path, text, len, 0644, err);
	free(text);
	return rc;
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
	s.doms = calloc((size_t)(l->ndoms + (l->saved ? l->saved->n : 0) + 1), sizeof(*s.doms));
	if (s.doms == NULL)
		return llcd_err_set(err, "out of memory");
	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		const struct live_state_dom *sd = d->state_checked ? NULL : state_find(l->saved, d->key);
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
			any = d->v[v].applied != &cpuset_none;
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
			o->vcpus[v] = *d->v[v].applied;
	}
	if (!l->listed_once) {
		for (int i = 0; l->saved != NULL && i < l->saved->n; i++) {
			const struct live_state_dom *sd = &l->saved->doms[i];
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

void
live_state_check(struct live *l, struct ldom *d)
{
	struct live_state_dom *sd = state_find(l->saved, d->key);
	int same = 0, moved = 0;
	char a[256], b[256];

	d->state_checked = true;
	if (sd == NULL)
		return;
	for (int v = 0; v < d->maxvcpus && v < sd->nvcpus; v++) {
		struct lvcpu *c = &d->v[v];
		if (cpuset_empty(&sd->vcpus[v]))
			continue;
		lvcpu_set(d, &c->applied, &sd->vcpus[v]);
		d->touched = true;
		if (c->affinity == &cpuset_none)
			continue;
		if (cpuset_equal(c->affinity, &sd->vcpus[v])) {
			same++;
			continue;
		}
		cpuset_format(&sd->vcpus[v], a, sizeof(a));
		cpuset_format(c->affinity, b, sizeof(b));
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

void
live_state_open(struct live *l)
{
	struct llcd_err e;

	if ((l->saved = calloc(1, sizeof(*l->saved))) == NULL) {
		log_warnx("state file ignored: out of memory");
		return;
	}
	if (live_state_read(l->state_path, l->saved, &e) < 0)
		log_warnx("state file ignored: %s", e.msg);
	else if (l->saved->n)
		log_info("state file %s: %d domain%s llcd pinned before", l->state_path, l->saved->n,
		    l->saved->n == 1 ? "" : "s");
}

void
live_state_listed(const struct live *l)
{
	for (int i = 0; l->saved != NULL && i < l->saved->n; i++)
		if (ldom_by_key(l, l->saved->doms[i].key) == NULL)
			log_info("state file: domain %s (%s) is no longer running", l->saved->doms[i].name,
			    l->saved->doms[i].uuid);
}

void
live_state_close(struct live *l)
{
	if (l->saved == NULL)
		return;
	live_state_clear(l->saved);
	free(l->saved);
	l->saved = NULL;
}
