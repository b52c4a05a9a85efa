// SPDX-License-Identifier: GPL-2.0-or-later
/* recommend.h - the guest topology llcd recommends for a domain (llcctl
 * topology DOMAIN), computed off the loop.
 *
 * A recommendation is a dry placement of the domain beside all the others
 * (guesttopo_dry_place: a full policy step on a fresh engine, ~0.3 s on a
 * host of 2,000 domains of 4 vCPUs), far more than a period may wait for.
 * So the loop takes a snapshot of its observation (one per placement
 * fingerprint, shared by every request on it) and a worker thread at nice
 * 19 computes; the daemon answers the waiting requests (control_answer)
 * and caches the answer by domain key and fingerprint (handlers_guest.c).
 *
 * The fingerprint (recommend_fingerprint) covers what the dry placement
 * keeps of the observation: the topology (its generation), the host
 * settings, and every domain's key, vCPU count, guest topology,
 * annotation and pins. Runtimes and last CPUs change every period and are
 * left out: the answer is recomputed when the placement changes, not when
 * only the load does.
 *
 * Memory: a snapshot is a copy of the observation's domains, vCPU samples
 * and hot reports (~5 MB for 2,000 domains of 4 vCPUs), and of the
 * samples' pins, one copy per distinct set (the back-end's sets they
 * point at last only until its next observation, and a job may run
 * later); at most
 * RECOMMEND_MAX_JOBS jobs wait, each a key and a reference to a snapshot,
 * and a snapshot is freed with its last job. The worker reads the
 * snapshot's topology, which the daemon keeps alive while
 * recommend_uses_topo() says so.
 */
#ifndef LLCD_RECOMMEND_H
#define LLCD_RECOMMEND_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "guesttopo.h"
#include "backend.h"
#include "policy.h"

#define RECOMMEND_MAX_JOBS 64

struct recommend;

/* One finished job. */
struct recommend_result {
	uint64_t key;                   /* the domain */
	uint64_t fp;                    /* the fingerprint it was computed on */
	int rc;                         /* 0, or -1 with error */
	char error[LLCD_ERR_MSG];
	struct guesttopo_rec *rec;      /* rc 0 */
	const struct topo *topo;        /* what rec was computed on */
	char name[POLICY_NAME];
	struct policy_guest_topo guest; /* the domain's guest topology now */
	double compute_s;               /* the worker's time for it */
};

/* The dry placement itself (also used synchronously by topology --apply):
 * in placed afresh beside all[0..n-1] less itself. */
int recommend_compute(const struct policy_host *host, const struct policy_domain_in *in,
                      const struct policy_domain_in *all, int n, struct guesttopo_rec *rec,
                      struct llcd_err *err);

/* A fingerprint of what the dry placement reads of obs on host (topo_gen
 * names the topology). */
uint64_t recommend_fingerprint(const struct policy_host *host, uint64_t topo_gen,
                               const struct agent_obs *obs);

/* Start the worker. */
struct recommend *recommend_new(struct llcd_err *err);
/* Stop the worker (it finishes the job it is on) and free everything. */
void recommend_free(struct recommend *r);
/* Readable (an eventfd) when results are ready. */
int recommend_fd(const struct recommend *r);
/* Queue a job for the domain with key, on the observation obs on host
 * (copied once per fingerprint fp). -1: the queue is full, or out of
 * memory (err says which). */
int recommend_submit(struct recommend *r, const struct policy_host *host, uint64_t fp,
                     const struct agent_obs *obs, uint64_t key, struct llcd_err *err);
/* Take one finished job (NULL: none); free it with recommend_result_free. */
struct recommend_result *recommend_take(struct recommend *r);
void recommend_result_free(struct recommend_result *res);
/* Whether a queued or running job reads topology t. */
bool recommend_uses_topo(struct recommend *r, const struct topo *t);
/* Jobs queued or running. */
int recommend_pending(struct recommend *r);

#endif
