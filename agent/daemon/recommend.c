// SPDX-License-Identifier: GPL-2.0-or-later
/* recommend.c - topology DOMAIN's dry placements on a worker thread. */
#include "recommend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpuset_pool.h"

/* A copy of the observation, shared by the jobs on one fingerprint. */
struct snap {
	int refs;                       /* under the mutex */
	uint64_t fp;
	struct policy_host host;
	int ndomains;
	struct policy_domain_in *domains;
	struct policy_vcpu_sample *vcpus;
	struct policy_hot_report *reports;
	/* the vCPUs' pins and the domains' bounds: they point into the
	 * back-end's sets and the observation's, which last only until its
	 * next observation (policy.h), and a job may run after it; copied
	 * here, one copy per distinct set */
	struct cpuset_pool *pins;
};

struct job {
	struct job *next;
	struct snap *snap;
	uint64_t key;
	struct recommend_result *res;   /* when done */
};

struct recommend {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, started;
	int efd;
	struct job *queue, *running, *done;     /* queue and done: FIFO lists */
	int njobs;                      /* queued + running + done */
	struct snap *last;              /* the newest snapshot (one ref) */
};

int
recommend_compute(const struct policy_host *host, const struct policy_domain_in *in,
                  const struct policy_domain_in *all, int n, struct guesttopo_rec *rec,
                  struct llcd_err *err)
{
	int nv = in->nvcpus, rc = -1, no = 0;
	int *slots = calloc((size_t)(nv > 0 ? nv : 1), sizeof(int));
	struct cpuset *pins = calloc((size_t)(nv > 0 ? nv : 1), sizeof(struct cpuset)), emu;
	struct policy_domain_in *others = calloc((size_t)n + 1, sizeof(*others));

	if (!slots || !pins || !others) {
		llcd_err_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (all[i].key != in->key)
			others[no++] = all[i];
	if (guesttopo_dry_place(host, in, others, no, slots, pins, &emu, err) < 0)
		goto out;
	rc = guesttopo_compute(host->topo, &(struct guesttopo_alloc){ nv, slots, pins, &emu }, rec, err);
out:
	free(slots);
	free(pins);
	free(others);
	return rc;
}

/* --- the fingerprint ---------------------------------------------------- */

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t
mix_set(uint64_t h, const struct cpuset *s, int words)
{
	for (int w = 0; w < words; w++)
		h = mix(h, s->w[w]);
	return h;
}

static uint64_t
mix_double(uint64_t h, double x)
{
	uint64_t v;

	memcpy(&v, &x, sizeof(v));
	return mix(h, v);
}

uint64_t
recommend_fingerprint(const struct policy_host *host, uint64_t topo_gen, const struct agent_obs *obs)
{
	int words = host->topo ? host->topo->max_cpu / 64 + 1 : 1;
	uint64_t h = mix(0x6c6c6364ull, topo_gen);

	if (words > CPUSET_WORDS)
		words = CPUSET_WORDS;
	h = mix_set(h, &host->reserved, words);
	h = mix_set(h, &host->shared_pool, words);
	h = mix_double(h, host->overcommit);
	h = mix_double(h, host->overcommit_isolated);
	h = mix(h, (uint64_t)host->max_moves_total);
	h = mix(h, (uint64_t)host->counters);
	h = mix(h, (uint64_t)obs->ndomains);
	for (int i = 0; i < obs->ndomains; i++) {
		const struct policy_domain_in *d = &obs->domains[i];
		const struct policy_annotation *a = &d->annot;
		h = mix(h, d->key);
		h = mix(h, (uint64_t)d->nvcpus);
		h = mix(h, ((uint64_t)d->guest.sockets << 48) ^ ((uint64_t)d->guest.dies << 36) ^
		    ((uint64_t)d->guest.clusters << 24) ^ ((uint64_t)d->guest.cores << 12) ^ (uint64_t)d->guest.threads);
		h = mix(h, d->annotated);
		if (d->annotated) {
			h = mix(h, ((uint64_t)a->mode << 24) ^ ((uint64_t)a->isolation << 16) ^
			    ((uint64_t)a->topology << 8) ^ (uint64_t)a->infer);
			const struct policy_tune *tu = &a->tune;
			h = mix(h, ((uint64_t)(unsigned)tu->aggr_tolerance << 32) ^ (uint64_t)(unsigned)tu->overaggr_pct);
			h = mix(h, ((uint64_t)(unsigned)tu->imb_pct << 32) ^ (uint64_t)(unsigned)tu->epoch_ms);
			h = mix(h, ((uint64_t)(unsigned)tu->affinity_timeout << 32) ^ (uint64_t)(unsigned)tu->max_moves);
			h = mix(h, ((uint64_t)tu->benefit_check << 32) ^ (uint64_t)(unsigned)tu->holddown_s);
			h = mix(h, (uint64_t)a->ngroups);
			for (int g = 0; g < a->ngroups && g < POLICY_MAX_GROUPS; g++)
				h = mix_set(h, &a->groups[g].vcpus, CPUSET_WORDS);
		}
		for (int v = 0; v < d->nvcpus; v++)
			h = mix_set(h, policy_sample_pin(&d->vcpus[v]), words);
		h = mix(h, (uint64_t)d->nreports);
		/* the bound limits where the dry placement may go */
		h = mix_set(h, d->bound != NULL ? d->bound : &cpuset_none, words);
	}
	return h;
}

/* --- snapshots ------------------------------------------------------------ */

static void
snap_free(struct snap *s)
{
	free(s->domains);
	free(s->vcpus);
	free(s->reports);
	cpuset_pool_free(s->pins);
	free(s);
}

static void
snap_put(struct recommend *r, struct snap *s)
{
	bool last;

	if (s == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	snap_free(s);
}

static struct snap *
snap_new(const struct policy_host *host, uint64_t fp, const struct agent_obs *obs, struct llcd_err *err)
{
	struct snap *s = calloc(1, sizeof(*s));
	size_t nv = 0, nr = 0;

	if (s == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	for (int i = 0; i < obs->ndomains; i++) {
		nv += (size_t)obs->domains[i].nvcpus;
		nr += (size_t)obs->domains[i].nreports;
	}
	s->refs = 1;
	s->fp = fp;
	s->host = *host;
	s->ndomains = obs->ndomains;
	s->domains = calloc((size_t)obs->ndomains + 1, sizeof(*s->domains));
	s->vcpus = calloc(nv + 1, sizeof(*s->vcpus));
	s->reports = calloc(nr + 1, sizeof(*s->reports));
	s->pins = cpuset_pool_new();
	if (!s->domains || !s->vcpus || !s->reports || !s->pins) {
		snap_free(s);
		llcd_err_set(err, "out of memory for a copy of %d domains", obs->ndomains);
		return NULL;
	}
	nv = nr = 0;
	for (int i = 0; i < obs->ndomains; i++) {
		const struct policy_domain_in *d = &obs->domains[i];
		struct policy_domain_in *c = &s->domains[i];
		*c = *d;
		memcpy(s->vcpus + nv, d->vcpus, sizeof(*s->vcpus) * (size_t)d->nvcpus);
		for (int v = 0; v < d->nvcpus; v++) {
			struct policy_vcpu_sample *sm = &s->vcpus[nv + (size_t)v];
			const struct cpuset *own = NULL;
			if (sm->pinned == NULL)
				continue;
			if (cpuset_pool_set(s->pins, &own, sm->pinned) < 0) {
				snap_free(s);
				llcd_err_set(err, "out of memory for a copy of %d domains' pins", obs->ndomains);
				return NULL;
			}
			sm->pinned = own;
		}
		c->vcpus = s->vcpus + nv;
		nv += (size_t)d->nvcpus;
		if (d->nreports > 0)
			memcpy(s->reports + nr, d->reports, sizeof(*s->reports) * (size_t)d->nreports);
		c->reports = s->reports + nr;
		nr += (size_t)d->nreports;
		c->wakeups = NULL;      /* a fresh engine infers nothing from one period */
		if (d->bound != NULL) {  /* the observation's, overwritten next period */
			const struct cpuset *own = NULL;
			if (cpuset_pool_set(s->pins, &own, d->bound) < 0) {
				snap_free(s);
				llcd_err_set(err, "out of memory for a copy of %d domains' bounds", obs->ndomains);
				return NULL;
			}
			c->bound = own;
		}
	}
	return s;
}

/* --- the worker ------------------------------------------------------------ */

static void
run_job(struct job *j)
{
	struct recommend_result *res = calloc(1, sizeof(*res));
	const struct snap *s = j->snap;
	struct llcd_err err;
	uint64_t t0 = llcd_mono_ns();

	j->res = res;
	if (res == NULL)
		return;
	res->key = j->key;
	res->fp = s->fp;
	res->topo = s->host.topo;
	res->rc = -1;
	for (int i = 0; i < s->ndomains; i++) {
		if (s->domains[i].key != j->key)
			continue;
		snprintf(res->name, sizeof(res->name), "%s", s->domains[i].name);
		res->guest = s->domains[i].guest;
		if ((res->rec = guesttopo_rec_new()) == NULL) {
			snprintf(res->error, sizeof(res->error), "out of memory");
			break;
		}
		res->rc = recommend_compute(&s->host, &s->domains[i], s->domains, s->ndomains, res->rec, &err);
		if (res->rc < 0)
			snprintf(res->error, sizeof(res->error), "%s", err.msg);
		break;
	}
	if (res->name[0] == '\0')
		snprintf(res->error, sizeof(res->error), "the domain is gone");
	res->compute_s = (double)(llcd_mono_ns() - t0) / 1e9;
}

static void *
worker(void *arg)
{
	struct recommend *r = arg;
	uint64_t one = 1;

	/* the loop's periods come first: this thread only uses what is left */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) < 0) {
		/* a lower priority is a courtesy; computing works without it */
	}
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stop && r->queue == NULL)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		struct job *j = r->queue;
		r->queue = j->next;
		j->next = NULL;
		r->running = j;
		pthread_mutex_unlock(&r->mu);
		run_job(j);
		pthread_mutex_lock(&r->mu);
		r->running = NULL;
		struct job **tail = &r->done;
		while (*tail)
			tail = &(*tail)->next;
		*tail = j;
		if (write(r->efd, &one, sizeof(one)) < 0) {
			/* the counter is far from overflowing; nothing to do */
		}
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

struct recommend *
recommend_new(struct llcd_err *err)
{
	struct recommend *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if ((r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		llcd_err_set(err, "eventfd: %s", strerror(errno));
		recommend_free(r);
		return NULL;
	}
	int e = pthread_create(&r->thread, NULL, worker, r);
	if (e != 0) {
		llcd_err_set(err, "recommendation thread: %s", strerror(e));
		recommend_free(r);
		return NULL;
	}
	r->started = true;
	return r;
}

static void
job_free(struct recommend *r, struct job *j)
{
	snap_put(r, j->snap);
	recommend_result_free(j->res);
	free(j);
}

void
recommend_free(struct recommend *r)
{
	if (r == NULL)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	for (struct job *lists[] = { r->queue, r->done }, **l = lists; l < lists + 2; l++)
		while (*l) {
			struct job *j = *l;
			*l = j->next;
			job_free(r, j);
		}
	snap_put(r, r->last);
	if (r->efd >= 0)
		close(r->efd);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

int
recommend_fd(const struct recommend *r)
{
	return r->efd;
}

int
recommend_submit(struct recommend *r, const struct policy_host *host, uint64_t fp,
                 const struct agent_obs *obs, uint64_t key, struct llcd_err *err)
{
	struct job *j;
	struct snap *s;

	pthread_mutex_lock(&r->mu);
	int n = r->njobs;
	pthread_mutex_unlock(&r->mu);
	if (n >= RECOMMEND_MAX_JOBS)
		return llcd_err_set(err, "llcd is computing %d recommendations already; ask again later", n);
	if (r->last == NULL || r->last->fp != fp || r->last->host.topo != host->topo) {
		if ((s = snap_new(host, fp, obs, err)) == NULL)
			return -1;
		snap_put(r, r->last);
		r->last = s;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return llcd_err_set(err, "out of memory");
	j->key = key;
	pthread_mutex_lock(&r->mu);
	j->snap = r->last;
	r->last->refs++;
	struct job **tail = &r->queue;
	while (*tail)
		tail = &(*tail)->next;
	*tail = j;
	r->njobs++;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

struct recommend_result *
recommend_take(struct recommend *r)
{
	struct recommend_result *res = NULL;
	uint64_t cnt;
	struct job *j;

	if (read(r->efd, &cnt, sizeof(cnt)) < 0) {
		/* EAGAIN: nothing signalled since the last take; look anyway */
	}
	pthread_mutex_lock(&r->mu);
	j = r->done;
	if (j != NULL) {
		r->done = j->next;
		r->njobs--;
		res = j->res;
		j->res = NULL;
		if (r->done != NULL) {
			uint64_t one = 1;       /* more to take: stay readable */
			if (write(r->efd, &one, sizeof(one)) < 0) {
			}
		}
	}
	pthread_mutex_unlock(&r->mu);
	if (j != NULL)
		job_free(r, j);
	return res;
}

void
recommend_result_free(struct recommend_result *res)
{
	if (res == NULL)
		return;
	guesttopo_rec_free(res->rec);
	free(res);
}

bool
recommend_uses_topo(struct recommend *r, const struct topo *t)
{
	bool uses = false;

	if (r == NULL)
		return false;
	pthread_mutex_lock(&r->mu);
	for (struct job *lists[] = { r->queue, r->running, r->done }, **l = lists; !uses && l < lists + 3; l++)
		for (struct job *j = *l; j && !uses; j = j->next)
			uses = j->snap->host.topo == t;
	pthread_mutex_unlock(&r->mu);
	return uses;
}

int
recommend_pending(struct recommend *r)
{
	int n;

	pthread_mutex_lock(&r->mu);
	n = r->njobs;
	pthread_mutex_unlock(&r->mu);
	return n;
}
