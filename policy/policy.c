/* policy.c - the LLC placement engine (see policy.h and docs/design.md).
 *
 * A step runs in four stages, always over domains in key order so that the
 * order of the input never changes the plan:
 *   1. reconcile: match input domains to the state, forget stopped ones,
 *      reset those whose annotation changed shape;
 *   2. account: decay per-CPU runtime, measure per-LLC utilisation, rebuild
 *      core ownership (isolated domains) and shared-pool load;
 *   3. place: adopt current pins of new domains where they are valid,
 *      place the rest (initial placement), confine unmanaged domains to the
 *      shared pool while isolated domains exist;
 *   4. steer: the preferred-LLC hysteresis for aggregate groups, spreading
 *      for spread domains, the benefit check; then emit one PIN per vCPU
 *      whose wanted pin differs from what was observed.
 */
#include "policy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcrules.h"

#define MAX_VCPUS CPUSET_MAX
#define RETRY_FAILS 2           /* kernel: cache_nice_tries + 1 */
#define SETTLE_PERIODS 3        /* benefit check: periods after the last move */
#define MEASURE_PERIODS 5       /* benefit check: periods measured after */
#define BENEFIT_LOSS 0.05       /* back off when progress drops by > 5 % */
#define BUSY_PU 0.5             /* a PU at least this busy counts as busy */
#define BUSY_VCPU 0.5           /* spread: a vCPU this busy is a busy one */
#define ACTIVE_CPUS 0.5         /* a group using less is idle */
#define ACTIVE_PERIODS 2        /* active periods before a preference */

enum bstate { B_IDLE, B_AGGREGATING, B_SETTLING, B_MEASURING, B_KEPT, B_HOLD };

struct grp {
	char name[POLICY_GROUP_NAME];
	enum policy_group_rule rule;
	int pid;                        /* guest groups: reported pid */
	struct cpuset vcpus;
	double *rt;                     /* decayed runtime per CPU (ns) */
	int pref;
	double idle_epochs, nr_avg;
	bool nr_init;
	int active_periods;
	double m_load;                  /* CPUs in use when last measured */
	int load_changed;
	uint64_t recheck_after_ns;
	int fail;
	uint64_t retry_after_ns;
	uint64_t last_report_step;
	bool guarded;
	double pref_occ, best_occ;
	int best_llc;
	/* benefit check */
	enum bstate b;
	double rate_ewma, baseline, m_instr, m_rt;
	bool rate_valid;
	int b_count;
	uint64_t hold_until_ns;
	char why[POLICY_REASON];
};

enum dstate { D_NEW, D_PLACED, D_REFUSED, D_UNMANAGED };

struct dom {
	uint64_t key;
	char name[POLICY_NAME];
	int nvcpus;
	struct policy_guest_topo guest;
	bool annotated;
	struct policy_annotation annot;
	enum dstate st;
	bool isolated;
	bool confined;                  /* unmanaged, pinned to the shared pool */
	bool no_adopt;                  /* re-placed: do not adopt old pins */
	bool released_sent;
	struct cpuset allot;            /* PUs placed on (isolated: owned) */
	int *slot;                      /* per vCPU: the PU its slot is on */
	struct cpuset *home, *want;     /* per vCPU pins */
	struct cpuset *sent;            /* per vCPU: the pin last emitted (empty: none) */
	double *vutil;
	struct cpuset emu_want;
	bool emu_sent;
	int ngroups;
	struct grp *groups;
	int *vgroup;
	uint64_t refused_gen;
	char refuse_reason[POLICY_REASON];
	uint64_t pref_switches, moves;
	int in_idx;                     /* index in this step's input */
	bool seen;
};

struct policy_state {
	const struct topo *topo;
	int ncpu;                       /* max_cpu + 1 */
	int nllc;
	struct dom **doms;              /* sorted by key */
	int ndoms;
	double *cpu_rt;                 /* decayed busy runtime per CPU */
	double *llc_util, *llc_cap;     /* busy PUs per LLC this period */
	int *core_owner;                /* per core: index into doms, -1 */
	int *llc_load;                  /* shared-pool vCPU slots per LLC */
	int *pu_load;                   /* vCPU slots per PU */
	uint64_t res_gen;               /* bumped when resources are freed */
	int nwords;                     /* cpuset words that can hold host PUs */
	struct cpuset pool, prev_pool;  /* shared pool this step and the last */
	uint64_t step;
	int moves_left;
	struct policy_stats stats;
};

/* --- plan --------------------------------------------------------------- */

struct policy_plan *
policy_plan_new(void)
{
	return calloc(1, sizeof(struct policy_plan));
}

void
policy_plan_free(struct policy_plan *p)
{
	if (p == NULL)
		return;
	free(p->actions);
	free(p);
}

void
policy_plan_clear(struct policy_plan *p)
{
	p->n = 0;
}

static struct policy_action *
plan_add(struct policy_plan *p, enum policy_action_type type, const struct dom *d,
         int vcpu, const struct cpuset *cpus, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static struct policy_action *
plan_add(struct policy_plan *p, enum policy_action_type type, const struct dom *d,
         int vcpu, const struct cpuset *cpus, const char *fmt, ...)
{
	struct policy_action *a;
	va_list ap;

	if (p->n == p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		struct policy_action *v = realloc(p->actions, sizeof(*v) * (size_t)cap);
		if (v == NULL)
			return NULL;
		p->actions = v;
		p->cap = cap;
	}
	a = &p->actions[p->n++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->key = d->key;
	a->domain = d->in_idx;
	a->vcpu = vcpu;
	a->llc = -1;
	if (cpus)
		a->cpus = *cpus;
	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	return a;
}

const char *
policy_action_name(enum policy_action_type t)
{
	switch (t) {
	case POLICY_ACT_PIN_VCPU: return "pin-vcpu";
	case POLICY_ACT_PIN_EMULATOR: return "pin-emulator";
	case POLICY_ACT_RELEASE: return "release";
	case POLICY_ACT_REFUSE: return "refuse";
	case POLICY_ACT_PREFER: return "prefer";
	case POLICY_ACT_BACKOFF: return "backoff";
	}
	return "?";
}

const char *
policy_group_rule_name(enum policy_group_rule r)
{
	switch (r) {
	case POLICY_GROUP_ANNOTATION: return "annotation";
	case POLICY_GROUP_GUEST: return "guest";
	case POLICY_GROUP_DOMAIN: return "domain";
	}
	return "?";
}

void
policy_host_defaults(struct policy_host *h, const struct topo *t)
{
	memset(h, 0, sizeof(*h));
	h->topo = t;
	h->overcommit = 1.0;
	h->overcommit_isolated = 1.0;
	h->max_moves_total = 256;
}

/* --- state -------------------------------------------------------------- */

static void
grp_clear(struct grp *g)
{
	free(g->rt);
	g->rt = NULL;
}

static void
dom_free(struct dom *d)
{
	if (d == NULL)
		return;
	for (int i = 0; i < d->ngroups; i++)
		grp_clear(&d->groups[i]);
	free(d->groups);
	free(d->slot);
	free(d->home);
	free(d->want);
	free(d->sent);
	free(d->vutil);
	free(d->vgroup);
	free(d);
}

static void
state_reset(struct policy_state *s)
{
	for (int i = 0; i < s->ndoms; i++)
		dom_free(s->doms[i]);
	free(s->doms);
	free(s->cpu_rt);
	free(s->llc_util);
	free(s->llc_cap);
	free(s->core_owner);
	free(s->llc_load);
	free(s->pu_load);
	s->doms = NULL;
	s->ndoms = 0;
	s->cpu_rt = s->llc_util = s->llc_cap = NULL;
	s->core_owner = s->llc_load = s->pu_load = NULL;
	s->topo = NULL;
}

struct policy_state *
policy_state_new(void)
{
	return calloc(1, sizeof(struct policy_state));
}

void
policy_state_free(struct policy_state *s)
{
	if (s == NULL)
		return;
	state_reset(s);
	free(s);
}

static int
state_bind_topo(struct policy_state *s, const struct topo *t)
{
	if (s->topo == t)
		return 0;
	state_reset(s);
	s->topo = t;
	s->ncpu = t->max_cpu + 1;
	s->nwords = t->max_cpu / 64 + 1;
	s->nllc = topo_count(t, TOPO_LLC);
	s->cpu_rt = calloc((size_t)s->ncpu, sizeof(double));
	s->llc_util = calloc((size_t)s->nllc, sizeof(double));
	s->llc_cap = calloc((size_t)s->nllc, sizeof(double));
	s->core_owner = calloc((size_t)topo_count(t, TOPO_CORE), sizeof(int));
	s->llc_load = calloc((size_t)s->nllc, sizeof(int));
	s->pu_load = calloc((size_t)s->ncpu, sizeof(int));
	if (!s->cpu_rt || !s->llc_util || !s->llc_cap || !s->core_owner || !s->llc_load || !s->pu_load) {
		state_reset(s);
		return -1;
	}
	return 0;
}

static struct dom *
dom_new(const struct policy_domain_in *in)
{
	struct dom *d = calloc(1, sizeof(*d));
	size_t n = (size_t)in->nvcpus;

	if (d == NULL)
		return NULL;
	d->key = in->key;
	d->nvcpus = in->nvcpus;
	d->slot = calloc(n, sizeof(int));
	d->home = calloc(n, sizeof(struct cpuset));
	d->want = calloc(n, sizeof(struct cpuset));
	d->sent = calloc(n, sizeof(struct cpuset));
	d->vutil = calloc(n, sizeof(double));
	d->vgroup = calloc(n, sizeof(int));
	if (!d->slot || !d->home || !d->want || !d->sent || !d->vutil || !d->vgroup) {
		dom_free(d);
		return NULL;
	}
	return d;
}

static int
dom_find(const struct policy_state *s, uint64_t key)
{
	int lo = 0, hi = s->ndoms - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (s->doms[mid]->key == key)
			return mid;
		if (s->doms[mid]->key < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int
dom_insert(struct policy_state *s, struct dom *d)
{
	struct dom **v = realloc(s->doms, sizeof(*v) * (size_t)(s->ndoms + 1));
	int i;

	if (v == NULL)
		return -1;
	s->doms = v;
	for (i = s->ndoms; i > 0 && s->doms[i - 1]->key > d->key; i--)
		s->doms[i] = s->doms[i - 1];
	s->doms[i] = d;
	s->ndoms++;
	return 0;
}

static bool
dom_managed_mode(const struct dom *d)
{
	return d->annotated && d->annot.mode != POLICY_MODE_NONE;
}

/* The annotation fields whose change means placing the domain afresh. */
static bool
annot_shape_changed(const struct policy_annotation *a, const struct policy_annotation *b)
{
	if (a->mode != b->mode || a->isolation != b->isolation || a->ngroups != b->ngroups)
		return true;
	for (int i = 0; i < a->ngroups; i++)
		if (strcmp(a->groups[i].name, b->groups[i].name) != 0 ||
		    !cpuset_equal(&a->groups[i].vcpus, &b->groups[i].vcpus))
			return true;
	return false;
}

/* Copy only the groups in use (the struct has room for 64). */
static void
annot_copy(struct policy_annotation *dst, const struct policy_annotation *src)
{
	dst->mode = src->mode;
	dst->isolation = src->isolation;
	dst->topology = src->topology;
	dst->tune = src->tune;
	dst->ngroups = src->ngroups;
	for (int i = 0; i < src->ngroups && i < POLICY_MAX_GROUPS; i++)
		dst->groups[i] = src->groups[i];
}

/* Forget placement and groups; the domain will be placed again. */
static void
dom_unplace(struct policy_state *s, struct dom *d)
{
	for (int i = 0; i < d->ngroups; i++)
		grp_clear(&d->groups[i]);
	free(d->groups);
	d->groups = NULL;
	d->ngroups = 0;
	cpuset_zero(&d->allot);
	d->st = D_NEW;
	d->emu_sent = false;
	d->no_adopt = true;
	s->res_gen++;
}

/* --- helpers ------------------------------------------------------------ */

static struct llc_rules
rules_of(const struct policy_state *s, const struct dom *d)
{
	struct llc_rules r = {
		.aggr_tolerance = d->annot.tune.aggr_tolerance,
		.overaggr_pct = d->annot.tune.overaggr_pct,
		.imb_pct = d->annot.tune.imb_pct,
		.smt = s->topo->smt,
		.kernel = false,
	};
	return r;
}

static const struct cpuset *
llc_cpus(const struct policy_state *s, int llc)
{
	return &topo_get(s->topo, TOPO_LLC, llc)->cpus;
}

/* Set comparisons over the words that can hold host PUs only: every set
 * the engine builds lies within the host, so the rest is zero. */
static bool
set_eq(const struct policy_state *s, const struct cpuset *a, const struct cpuset *b)
{
	uint64_t diff = 0;

	for (int i = 0; i < s->nwords; i++)
		diff |= a->w[i] ^ b->w[i];
	return diff == 0;
}

static bool
set_empty(const struct policy_state *s, const struct cpuset *a)
{
	for (int i = 0; i < s->nwords; i++)
		if (a->w[i])
			return false;
	return true;
}

static bool
set_sub(const struct policy_state *s, const struct cpuset *sub, const struct cpuset *super)
{
	for (int i = 0; i < s->nwords; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

/* The single LLC a pin lies in, or -1 when it spans several or none. */
static int
pin_llc(const struct policy_state *s, const struct cpuset *pin)
{
	int first = cpuset_first(pin), llc;

	if (first < 0)
		return -1;
	llc = topo_llc_of(s->topo, first);
	if (llc < 0 || !set_sub(s, pin, &topo_get(s->topo, TOPO_LLC, llc)->cpus))
		return -1;
	return llc;
}

static void
fmt_set(const struct cpuset *c, char *buf, size_t len)
{
	if (cpuset_format(c, buf, len) < 0 && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* The PUs that non-isolated domains may use now. */
static void
shared_pool(const struct policy_state *s, const struct policy_host *h, struct cpuset *out)
{
	const struct topo *t = s->topo;

	if (!cpuset_empty(&h->shared_pool))
		cpuset_and(out, &h->shared_pool, &t->all);
	else
		*out = t->all;
	cpuset_andnot(out, out, &h->reserved);
	for (int c = 0; c < topo_count(t, TOPO_CORE); c++)
		if (s->core_owner[c] >= 0)
			cpuset_andnot(out, out, &topo_get(t, TOPO_CORE, c)->cpus);
}

/* Where a managed domain's vCPUs may go: isolated ones stay on their cores,
 * shared ones anywhere in the shared pool. */
static void
dom_allowed(const struct policy_state *s, const struct dom *d, struct cpuset *out)
{
	*out = d->isolated ? d->allot : s->pool;
}

/* --- stage 2: accounting ------------------------------------------------ */

static void
account(struct policy_state *s, const struct policy_input *in, double k)
{
	const struct topo *t = s->topo;
	double period = (double)in->period_ns;
	double *busy = calloc((size_t)s->ncpu, sizeof(double));
	int cpu;

	if (busy == NULL)
		return;
	if (in->cpu_busy_ns) {
		CPUSET_FOREACH(cpu, &t->all)
			busy[cpu] = (double)in->cpu_busy_ns[cpu];
	} else {
		for (int i = 0; i < in->ndomains; i++) {
			const struct policy_domain_in *di = &in->domains[i];
			for (int v = 0; v < di->nvcpus; v++) {
				int c = di->vcpus[v].last_cpu;
				if (c >= 0 && c < s->ncpu)
					busy[c] += (double)di->vcpus[v].runtime_ns;
			}
		}
	}
	for (int l = 0; l < s->nllc; l++) {
		s->llc_util[l] = 0;
		s->llc_cap[l] = topo_llc_weight(t, l);
	}
	CPUSET_FOREACH(cpu, &t->all) {
		double f = busy[cpu] / period;
		s->cpu_rt[cpu] = s->cpu_rt[cpu] * k + busy[cpu];
		if (f > 1.0)
			f = 1.0;
		if (f >= BUSY_PU)
			s->llc_util[topo_llc_of(t, cpu)] += f;
	}
	free(busy);
}

static void
rebuild_ownership(struct policy_state *s)
{
	const struct topo *t = s->topo;
	int cpu;

	for (int c = 0; c < topo_count(t, TOPO_CORE); c++)
		s->core_owner[c] = -1;
	memset(s->llc_load, 0, sizeof(int) * (size_t)s->nllc);
	memset(s->pu_load, 0, sizeof(int) * (size_t)s->ncpu);
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		if (d->st != D_PLACED)
			continue;
		if (d->isolated) {
			CPUSET_FOREACH(cpu, &d->allot)
				s->core_owner[topo_core_of(t, cpu)] = i;
		}
		for (int v = 0; v < d->nvcpus; v++) {
			s->pu_load[d->slot[v]]++;
			if (!d->isolated)
				s->llc_load[t->pu_llc[d->slot[v]]]++;
		}
	}
}

/* --- stage 3: placement -------------------------------------------------- */

struct cand {
	int llc;
	int free;               /* vCPU slots available */
	int numa;
};

/* Cores of an LLC available to an isolated domain, least shared load first. */
static int
llc_free_cores(const struct policy_state *s, const struct policy_host *h, int llc, int *cores)
{
	const struct topo_node *ln = topo_get(s->topo, TOPO_LLC, llc);
	int n = 0;

	for (int i = 0; i < ln->nchildren; i++) {
		const struct topo_node *core = ln->children[i];
		if (core->type != TOPO_CORE || s->core_owner[core->index] >= 0)
			continue;
		if (cpuset_intersects(&core->cpus, &h->reserved) ||
		    (!cpuset_empty(&h->shared_pool) && cpuset_intersects(&core->cpus, &h->shared_pool)))
			continue;
		cores[n++] = core->index;
	}
	/* stable insertion sort by shared load on the core */
	for (int i = 1; i < n; i++) {
		int c = cores[i], lc = 0, j = i - 1, cpu;
		CPUSET_FOREACH(cpu, &topo_get(s->topo, TOPO_CORE, c)->cpus)
			lc += s->pu_load[cpu];
		while (j >= 0) {
			int lj = 0;
			CPUSET_FOREACH(cpu, &topo_get(s->topo, TOPO_CORE, cores[j])->cpus)
				lj += s->pu_load[cpu];
			if (lj <= lc)
				break;
			cores[j + 1] = cores[j];
			j--;
		}
		cores[j + 1] = c;
	}
	return n;
}

static int
slots_per_core(const struct policy_state *s, const struct policy_host *h)
{
	int n = (int)floor(s->topo->smt * h->overcommit_isolated + 1e-9);
	return n < 1 ? 1 : n;
}

static int
llc_free_slots(const struct policy_state *s, const struct policy_host *h, int llc,
               bool isolated, const struct cpuset *pool, int *cores_buf)
{
	if (isolated)
		return llc_free_cores(s, h, llc, cores_buf) * slots_per_core(s, h);
	struct cpuset x;
	cpuset_and(&x, llc_cpus(s, llc), pool);
	int cap = (int)floor(cpuset_count(&x) * h->overcommit + 1e-9) - s->llc_load[llc];
	return cap > 0 ? cap : 0;
}

/* Whole cores first: cores of an LLC whose PUs are all in the pool and
 * carry no vCPU slot yet. Used for guests without SMT, so that each vCPU
 * gets a core of its own before any shares a core with a sibling. */
static int
llc_free_whole_cores(const struct policy_state *s, int llc, const struct cpuset *pool, int *first_pus)
{
	const struct topo_node *ln = topo_get(s->topo, TOPO_LLC, llc);
	int n = 0, cpu;

	for (int i = 0; i < ln->nchildren; i++) {
		const struct topo_node *core = ln->children[i];
		bool ok = core->type == TOPO_CORE && cpuset_subset(&core->cpus, pool);
		if (ok)
			CPUSET_FOREACH(cpu, &core->cpus)
				if (s->pu_load[cpu] != 0)
					ok = false;
		if (ok) {
			if (first_pus)
				first_pus[n] = cpuset_first(&core->cpus);
			n++;
		}
	}
	return n;
}

/* An isolated domain may not shrink a dynamic shared pool below what the
 * domains running in it need (their vCPUs / overcommit, at least one
 * core): shared and unmanaged domains, and isolated ones already refused.
 * Returns how many more whole cores isolated domains may take, or -1 when
 * the shared pool is configured (isolated cores never come from it). */
static int
iso_budget_cores(const struct policy_state *s, const struct policy_host *h, const struct dom *d,
                 const struct cpuset *pool, int *need_out)
{
	long need_vcpus = 0;
	int need_pus, budget;

	if (!cpuset_empty(&h->shared_pool))
		return -1;
	for (int i = 0; i < s->ndoms; i++) {
		const struct dom *o = s->doms[i];
		if (o != d && o->seen && (!o->isolated || o->st == D_REFUSED))
			need_vcpus += o->nvcpus;
	}
	need_pus = (int)ceil((double)need_vcpus / h->overcommit - 1e-9);
	if (need_vcpus > 0 && need_pus < s->topo->smt)
		need_pus = s->topo->smt;
	budget = (cpuset_count(pool) - need_pus) / s->topo->smt;
	if (need_out)
		*need_out = need_pus;
	return budget < 0 ? 0 : budget;
}

static int
cmp_cand_free_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->free != y->free)
		return y->free - x->free;
	return x->llc - y->llc;
}

/* Choose LLCs for n slots: one LLC if any fits (best fit); else whole LLCs
 * inside one NUMA node (fewest LLCs, then least left over); else across
 * nodes. Returns the number of LLCs chosen, 0 when the host is full. */
static int
choose_llcs(const struct policy_state *s, struct cand *c, int nc, int n, int *out)
{
	int best = -1, total = 0, nnuma = topo_count(s->topo, TOPO_NUMA);
	int best_k = 0, best_left = 0;

	for (int i = 0; i < nc; i++) {
		total += c[i].free;
		if (c[i].free >= n && (best < 0 || c[i].free < c[best].free))
			best = i;
	}
	if (best >= 0) {
		out[0] = c[best].llc;
		return 1;
	}
	if (total < n)
		return 0;
	qsort(c, (size_t)nc, sizeof(*c), cmp_cand_free_desc);
	best = -2;
	for (int node = 0; node < nnuma; node++) {
		int k = 0, got = 0;
		for (int i = 0; i < nc && got < n; i++)
			if (c[i].numa == node && c[i].free > 0) {
				got += c[i].free;
				k++;
			}
		if (got >= n && (best == -2 || k < best_k || (k == best_k && got - n < best_left))) {
			best = node;
			best_k = k;
			best_left = got - n;
		}
	}
	int k = 0, got = 0;
	for (int i = 0; i < nc && got < n; i++) {
		if (c[i].free <= 0 || (best != -2 && c[i].numa != best))
			continue;
		out[k++] = c[i].llc;
		got += c[i].free;
	}
	return k;
}

static int
guest_per_die(const struct dom *d)
{
	const struct policy_guest_topo *g = &d->guest;
	long per = (long)(g->clusters > 0 ? g->clusters : 1) * (g->cores > 0 ? g->cores : 1) *
	           (g->threads > 0 ? g->threads : 1);
	long dies = (long)(g->sockets > 0 ? g->sockets : 1) * (g->dies > 0 ? g->dies : 1);

	if (per <= 0 || per * dies != d->nvcpus)
		return d->nvcpus;       /* topology absent or inconsistent */
	return (int)per;
}

/* Set a vCPU's home and wanted pin from its slot PU:
 *  - static: the PU itself;
 *  - topology="match": the slot's LLC share of what the domain may use
 *    (its own cores, or the shared pool), so that guest die i stays on
 *    host LLC i and the guest's view is true;
 *  - otherwise: everything the domain may use; the kernel balances the
 *    vCPUs there and only groups are steered (the slot counts capacity).
 */
static void
set_home(struct policy_state *s, struct dom *d, int v, const struct cpuset *pool)
{
	const struct cpuset *allowed = d->isolated ? &d->allot : pool;
	struct cpuset pin;

	cpuset_zero(&pin);
	if (d->annot.mode == POLICY_MODE_STATIC)
		cpuset_set(&pin, d->slot[v]);
	else if (d->annot.topology == POLICY_TOPO_MATCH)
		cpuset_and(&pin, llc_cpus(s, topo_llc_of(s->topo, d->slot[v])), allowed);
	else
		pin = *allowed;
	d->home[v] = pin;
	d->want[v] = pin;
}

/* Assign vCPUs [first, first+count) round-robin over the PUs of the given
 * cores (siblings adjacent), so guest SMT pairs land on host sibling pairs. */
static void
fill_slots(struct policy_state *s, struct dom *d, int first, int count,
           const int *pus, int npus)
{
	for (int i = 0; i < count; i++) {
		int pu = pus[i % npus];
		d->slot[first + i] = pu;
		cpuset_set(&d->allot, pu);
		s->pu_load[pu]++;
	}
}

static int
place_domain(struct policy_state *s, const struct policy_host *h, struct dom *d,
             struct policy_plan *plan)
{
	const struct topo *t = s->topo;
	int nllc = s->nllc, n = d->nvcpus, per_die = guest_per_die(d);
	struct cand *c = calloc((size_t)nllc, sizeof(*c));
	int *chosen = calloc((size_t)nllc, sizeof(int));
	int *cores = calloc((size_t)topo_count(t, TOPO_CORE) + 1, sizeof(int));
	int *pus = calloc((size_t)s->ncpu + 1, sizeof(int));
	struct cpuset pool;
	int nc = 0, k, rc = -1, v = 0, pool_need_pus = 0;

	if (!c || !chosen || !cores || !pus)
		goto out;
	shared_pool(s, h, &pool);
	/* guests without SMT in the shared pool: a core per vCPU when possible */
	bool corefirst = !d->isolated && t->smt > 1 && d->guest.threads <= 1 && h->overcommit <= 1.0;
	k = 0;
	if (corefirst) {
		for (int l = 0; l < nllc; l++) {
			c[nc].llc = l;
			c[nc].numa = t->llc_numa[l];
			c[nc].free = llc_free_whole_cores(s, l, &pool, NULL);
			if (c[nc].free > 0)
				nc++;
		}
		k = choose_llcs(s, c, nc, n, chosen);
		corefirst = k > 0;
	}
	int iso_budget = d->isolated ? iso_budget_cores(s, h, d, &pool, &pool_need_pus) : -1;
	if (!corefirst) {
		nc = 0;
		for (int l = 0; l < nllc; l++) {
			c[nc].llc = l;
			c[nc].numa = t->llc_numa[l];
			c[nc].free = llc_free_slots(s, h, l, d->isolated, &pool, cores);
			if (c[nc].free > 0)
				nc++;
		}
		k = choose_llcs(s, c, nc, n, chosen);
		if (iso_budget >= 0 && (n + slots_per_core(s, h) - 1) / slots_per_core(s, h) > iso_budget) {
			k = 0;
			for (int i = 0; i < nc; i++)        /* report what may be taken */
				c[i].free = 0;
			if (nc > 0)
				c[0].free = iso_budget * slots_per_core(s, h);
		}
	}
	if (k == 0) {
		int total = 0;
		for (int i = 0; i < nc; i++)
			total += c[i].free;
		char rs[64];
		fmt_set(&h->reserved, rs, sizeof(rs));
		if (d->isolated)
			snprintf(d->refuse_reason, sizeof(d->refuse_reason),
			    "needs %d whole cores for %d vCPUs (isolation=core, SMT%d, overcommit %.2g); "
			    "only %d free outside reserved CPUs [%s] and the shared pool%s",
			    (n + slots_per_core(s, h) - 1) / slots_per_core(s, h), n, t->smt,
			    h->overcommit_isolated, total / slots_per_core(s, h), rs,
			    iso_budget >= 0 && pool_need_pus > 0 ? " (which keeps the PUs its domains need)" : "");
		else
			snprintf(d->refuse_reason, sizeof(d->refuse_reason),
			    "needs %d vCPU slots in the shared pool (overcommit %.2g); only %d free",
			    n, h->overcommit, total);
		d->st = D_REFUSED;
		d->refused_gen = s->res_gen;
		s->stats.refusals++;
		plan_add(plan, POLICY_ACT_REFUSE, d, -1, NULL, "%s", d->refuse_reason);
		rc = 0;
		goto out;
	}
	cpuset_zero(&d->allot);
	/* Guest die by guest die onto the chosen LLCs, in order. */
	for (int i = 0; i < k && v < n; i++) {
		int llc = chosen[i], free, npus = 0, take, cpu;
		if (d->isolated) {
			int ncores = llc_free_cores(s, h, llc, cores);
			int spc = slots_per_core(s, h);
			int left = n - v, need = (left + spc - 1) / spc;
			if (need > ncores)
				need = ncores;
			for (int j = 0; j < need; j++) {
				CPUSET_FOREACH(cpu, &topo_get(t, TOPO_CORE, cores[j])->cpus)
					pus[npus++] = cpu;
				s->core_owner[cores[j]] = -2;  /* taken by this placement */
			}
			free = need * spc;
		} else if (corefirst) {
			npus = llc_free_whole_cores(s, llc, &pool, pus);
			free = npus;
		} else {
			/* least-loaded PUs first, then core by core with siblings
			 * adjacent (whatever the OS numbering) */
			const struct topo_node *ln = topo_get(t, TOPO_LLC, llc);
			int inpool = 0;
			for (int j = 0; j < ln->nchildren; j++) {
				struct cpuset x;
				cpuset_and(&x, &ln->children[j]->cpus, &pool);
				inpool += cpuset_count(&x);
			}
			for (int load = 0; npus < inpool; load++)
				for (int j = 0; j < ln->nchildren; j++)
					CPUSET_FOREACH(cpu, &ln->children[j]->cpus)
						if (cpuset_isset(&pool, cpu) && s->pu_load[cpu] == load)
							pus[npus++] = cpu;
			free = llc_free_slots(s, h, llc, false, &pool, cores);
		}
		take = n - v < free ? n - v : free;
		/* keep guest dies whole where the next LLC can hold the rest */
		if (i + 1 < k && take < n - v && per_die < n && take % per_die && take > per_die)
			take -= take % per_die;
		if (take <= 0 || npus == 0)
			continue;
		fill_slots(s, d, v, take, pus, npus);
		if (!d->isolated)
			s->llc_load[llc] += take;
		v += take;
	}
	for (int cidx = 0; cidx < topo_count(t, TOPO_CORE); cidx++)
		if (s->core_owner[cidx] == -2)
			s->core_owner[cidx] = -1;       /* rebuilt next by the caller */
	if (v < n) {
		/* cannot happen when choose_llcs() counted right; refuse loudly */
		snprintf(d->refuse_reason, sizeof(d->refuse_reason),
		    "internal: placed only %d of %d vCPUs", v, n);
		d->st = D_REFUSED;
		plan_add(plan, POLICY_ACT_REFUSE, d, -1, NULL, "%s", d->refuse_reason);
		rc = 0;
		goto out;
	}
	if (d->isolated) {
		/* own the whole cores touched */
		int cpu;
		struct cpuset whole;
		cpuset_zero(&whole);
		CPUSET_FOREACH(cpu, &d->allot)
			cpuset_or(&whole, &whole, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
		d->allot = whole;
	}
	for (int i = 0; i < n; i++)
		set_home(s, d, i, &pool);
	d->st = D_PLACED;
	rc = 0;
out:
	free(c);
	free(chosen);
	free(cores);
	free(pus);
	return rc;
}

/* Adopt the pins a domain already has (llcd restarted) when they are a
 * valid placement for its mode; returns true when adopted. */
static bool
adopt_domain(struct policy_state *s, const struct policy_host *h, struct dom *d,
             const struct policy_domain_in *in)
{
	const struct topo *t = s->topo;
	struct cpuset u, pool, whole;
	int cpu;

	cpuset_zero(&u);
	for (int v = 0; v < d->nvcpus; v++) {
		const struct cpuset *p = &in->vcpus[v].pinned;
		if (cpuset_empty(p) || !cpuset_subset(p, &t->all) || cpuset_intersects(p, &h->reserved))
			return false;
		if (d->annot.mode == POLICY_MODE_STATIC && cpuset_count(p) != 1)
			return false;
		if (d->annot.mode != POLICY_MODE_STATIC && d->annot.topology == POLICY_TOPO_MATCH && pin_llc(s, p) < 0)
			return false;
		cpuset_or(&u, &u, p);
	}
	cpuset_zero(&whole);
	CPUSET_FOREACH(cpu, &u)
		cpuset_or(&whole, &whole, &topo_get(t, TOPO_CORE, topo_core_of(t, cpu))->cpus);
	if (d->isolated) {
		if (!cpuset_equal(&whole, &u) || cpuset_intersects(&whole, &h->reserved) ||
		    (!cpuset_empty(&h->shared_pool) && cpuset_intersects(&whole, &h->shared_pool)))
			return false;
		CPUSET_FOREACH(cpu, &whole)
			if (s->core_owner[topo_core_of(t, cpu)] >= 0)
				return false;
		/* exactly the cores it needs (libvirt's default pin, every CPU,
		 * is not an allocation), within the shared pool's budget */
		int ncores = cpuset_count(&whole) / t->smt, spc = slots_per_core(s, h);
		if (d->nvcpus > ncores * spc || ncores > (d->nvcpus + spc - 1) / spc)
			return false;
		shared_pool(s, h, &pool);
		int budget = iso_budget_cores(s, h, d, &pool, NULL);
		if (budget >= 0 && ncores > budget)
			return false;
	} else {
		shared_pool(s, h, &pool);
		if (!cpuset_subset(&u, &pool))
			return false;
	}
	d->allot = u;
	for (int v = 0; v < d->nvcpus; v++) {
		const struct cpuset *p = &in->vcpus[v].pinned;
		/* slot: the least-loaded PU of its pin */
		int best = cpuset_first(p);
		CPUSET_FOREACH(cpu, p)
			if (s->pu_load[cpu] < s->pu_load[best])
				best = cpu;
		d->slot[v] = best;
		s->pu_load[best]++;
		if (!d->isolated)
			s->llc_load[topo_llc_of(t, best)]++;
		d->home[v] = *p;
		d->want[v] = *p;
		d->sent[v] = *p;
	}
	if (d->isolated) {
		int idx = -1;
		for (int i = 0; i < s->ndoms; i++)
			if (s->doms[i] == d)
				idx = i;
		CPUSET_FOREACH(cpu, &whole)
			s->core_owner[topo_core_of(t, cpu)] = idx;
	}
	d->st = D_PLACED;
	return true;
}

static int
grp_init(struct policy_state *s, struct grp *g, const char *name, enum policy_group_rule rule,
         const struct cpuset *vcpus)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->rule = rule;
	g->vcpus = *vcpus;
	g->pref = -1;
	g->best_llc = -1;
	g->rt = calloc((size_t)s->ncpu, sizeof(double));
	return g->rt ? 0 : -1;
}

static struct grp *
grp_add(struct policy_state *s, struct dom *d, const char *name, enum policy_group_rule rule,
        const struct cpuset *vcpus)
{
	struct grp *v;

	if (d->ngroups >= POLICY_MAX_GROUPS)
		return NULL;
	v = realloc(d->groups, sizeof(*v) * (size_t)(d->ngroups + 1));
	if (v == NULL)
		return NULL;
	d->groups = v;
	if (grp_init(s, &v[d->ngroups], name, rule, vcpus) < 0)
		return NULL;
	return &v[d->ngroups++];
}

/* Groups fixed at placement: annotation groups, else the whole domain
 * when it fits one LLC. */
static void
init_groups(struct policy_state *s, struct dom *d)
{
	if (d->annot.mode != POLICY_MODE_AGGREGATE)
		return;
	for (int i = 0; i < d->annot.ngroups; i++)
		grp_add(s, d, d->annot.groups[i].name, POLICY_GROUP_ANNOTATION, &d->annot.groups[i].vcpus);
	if (d->annot.ngroups == 0) {
		int minw = CPUSET_MAX;
		for (int l = 0; l < s->nllc; l++)
			if (topo_llc_weight(s->topo, l) < minw)
				minw = topo_llc_weight(s->topo, l);
		if (d->nvcpus <= minw && d->nvcpus > 1) {
			struct cpuset all;
			cpuset_zero(&all);
			cpuset_set_range(&all, 0, d->nvcpus - 1);
			grp_add(s, d, "domain", POLICY_GROUP_DOMAIN, &all);
		}
	}
}

/* --- stage 4: steering --------------------------------------------------- */

static int
vcpu_llc(const struct policy_state *s, const struct dom *d, const struct policy_domain_in *in, int v)
{
	int l = pin_llc(s, &d->want[v]);

	return l >= 0 ? l : topo_llc_of(s->topo, in->vcpus[v].last_cpu);
}

static void
grp_release(struct policy_state *s, struct dom *d, struct grp *g)
{
	int v;

	CPUSET_FOREACH(v, &g->vcpus)
		if (v < d->nvcpus)
			d->want[v] = d->home[v];
	g->pref = -1;
	g->fail = 0;
	if (g->b != B_HOLD)
		g->b = B_IDLE;
	(void)s;
}

static void
benefit_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
               const struct policy_domain_in *di, struct grp *g, bool all_in, bool moved,
               double load, struct policy_plan *plan)
{
	double instr = 0, rt = 0;
	int v;

	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		instr += (double)di->vcpus[v].instructions;
		rt += (double)di->vcpus[v].runtime_ns;
	}
	double rate = rt > 0 ? instr / rt : 0;

	switch (g->b) {
	case B_IDLE:
		/* the baseline: progress while the group runs as placed */
		if (g->active_periods == 0) {
			g->rate_valid = false;
		} else if (rt > 0) {
			g->rate_ewma = g->rate_valid ? 0.5 * g->rate_ewma + 0.5 * rate : rate;
			g->rate_valid = true;
		}
		if (moved && g->rate_valid) {
			g->baseline = g->rate_ewma;
			g->b = B_AGGREGATING;
		}
		break;
	case B_KEPT:
		/* the load changed since the measurement (e.g. a new phase of
		 * the guest's work): measure again, at most once per hold-down */
		if (fabs(load - g->m_load) >= 1.0)
			g->load_changed++;
		else
			g->load_changed = 0;
		if (g->load_changed >= 2 && in->now_ns >= g->recheck_after_ns) {
			snprintf(g->why, sizeof(g->why), "load changed from %.1f to %.1f CPUs since the measurement: "
			    "measuring again", g->m_load, load);
			grp_release(s, d, g);
			g->b = B_IDLE;
			g->rate_valid = false;
			g->load_changed = 0;
			g->recheck_after_ns = in->now_ns + (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
			g->retry_after_ns = in->now_ns + 2 * in->period_ns;
		}
		break;
	case B_AGGREGATING:
		if (all_in) {
			g->b = B_SETTLING;
			g->b_count = 0;
		}
		break;
	case B_SETTLING:
		if (moved) {
			g->b = B_AGGREGATING;
		} else if (++g->b_count >= SETTLE_PERIODS) {
			g->b = B_MEASURING;
			g->b_count = 0;
			g->m_instr = g->m_rt = 0;
		}
		break;
	case B_MEASURING:
		g->m_instr += instr;
		g->m_rt += rt;
		g->m_load = load;
		if (++g->b_count >= MEASURE_PERIODS) {
			double after = g->m_rt > 0 ? g->m_instr / g->m_rt : 0;
			if (after < g->baseline * (1.0 - BENEFIT_LOSS)) {
				g->hold_until_ns = in->now_ns + (uint64_t)d->annot.tune.holddown_s * 1000000000ull;
				snprintf(g->why, sizeof(g->why),
				    "backed off: progress per CPU-second %.3g after aggregation vs %.3g before (-%.0f%%); "
				    "hold-down %ds", after, g->baseline, 100.0 * (1.0 - after / g->baseline),
				    d->annot.tune.holddown_s);
				plan_add(plan, POLICY_ACT_BACKOFF, d, -1, NULL, "group '%s': %s", g->name, g->why);
				s->stats.backoffs++;
				grp_release(s, d, g);
				g->b = B_HOLD;
			} else {
				g->b = B_KEPT;
				g->rate_ewma = after;
				snprintf(g->why, sizeof(g->why),
				    "kept: progress per CPU-second %.3g after aggregation vs %.3g before",
				    after, g->baseline);
			}
		}
		break;
	case B_HOLD:
		if (in->now_ns >= g->hold_until_ns) {
			g->b = B_IDLE;
			g->rate_valid = false;
		}
		break;
	}
}

static void
steer_group(struct policy_state *s, const struct policy_input *in, struct dom *d,
            const struct policy_domain_in *di, struct grp *g, double k, double epochs_per_period,
            const struct cpuset *allowed, struct policy_plan *plan)
{
	const struct topo *t = s->topo;
	struct llc_rules r = rules_of(s, d);
	double period = (double)in->period_ns, cpus_in_use = 0, sum_rt = 0;
	int nthreads = 0, v, cpu, nllc = s->nllc;
	int *order = NULL;

	/* decayed per-CPU runtime of the group */
	for (cpu = 0; cpu < s->ncpu; cpu++)
		g->rt[cpu] *= k;
	CPUSET_FOREACH(v, &g->vcpus) {
		if (v >= d->nvcpus)
			break;
		nthreads++;
		const struct policy_vcpu_sample *sm = &di->vcpus[v];
		if (sm->last_cpu >= 0 && sm->last_cpu < s->ncpu && cpuset_isset(&t->all, sm->last_cpu))
			g->rt[sm->last_cpu] += (double)sm->runtime_ns;
		cpus_in_use += (double)sm->runtime_ns / period;
		sum_rt += (double)sm->runtime_ns;
	}
	/* active: at least half a CPU's worth of runtime this period */
	bool active = cpus_in_use >= ACTIVE_CPUS;
	g->active_periods = active ? g->active_periods + 1 : 0;
	g->idle_epochs = active ? 0 : g->idle_epochs + epochs_per_period;
	(void)sum_rt;

	/* occupancy: the group's share of each CPU, summed per LLC */
	double occ_best = -1, occ_pref = 0;
	int best = -1;
	double *occ = calloc((size_t)nllc, sizeof(double));
	if (occ == NULL)
		return;
	CPUSET_FOREACH(cpu, allowed)
		if (g->rt[cpu] > 0)
			occ[topo_llc_of(t, cpu)] += g->rt[cpu] / (s->cpu_rt[cpu] + 1.0);
	for (int l = 0; l < nllc; l++) {
		if (!cpuset_intersects(llc_cpus(s, l), allowed))
			continue;
		if (occ[l] > occ_best) {
			occ_best = occ[l];
			best = l;
		}
	}
	int wbest = best >= 0 ? topo_llc_weight(t, best) : 0;
	if (!g->nr_init) {
		g->nr_avg = cpus_in_use;        /* start from the first sample */
		g->nr_init = true;
	} else {
		g->nr_avg += (cpus_in_use - g->nr_avg) / llc_nr_avg_div(wbest > 0 ? wbest : 16);
	}
	g->best_llc = best;
	g->best_occ = occ_best > 0 ? occ_best : 0;

	/* guards */
	g->guarded = llc_invalid_nr(&r, nthreads, g->nr_avg, g->pref >= 0 ? topo_llc_weight(t, g->pref) : wbest);
	if (g->guarded) {
		if (g->pref >= 0) {
			plan_add(plan, POLICY_ACT_PREFER, d, -1, NULL,
			    "group '%s': preference for LLC %d dropped: %.1f busy threads x SMT%d exceed the LLC's %d PUs "
			    "(aggr-tolerance %d)", g->name, g->pref, g->nr_avg, t->smt,
			    topo_llc_weight(t, g->pref), r.aggr_tolerance);
			grp_release(s, d, g);
		}
		snprintf(g->why, sizeof(g->why), "not aggregated: %d threads, %.1f busy on average, SMT%d, LLC of %d PUs "
		    "(aggr-tolerance %d)", nthreads, g->nr_avg, t->smt, wbest, r.aggr_tolerance);
		goto out;
	}
	if (g->idle_epochs > d->annot.tune.affinity_timeout) {
		if (g->pref >= 0) {
			plan_add(plan, POLICY_ACT_PREFER, d, -1, NULL,
			    "group '%s': preference for LLC %d dropped after %.0f idle epochs",
			    g->name, g->pref, g->idle_epochs);
			grp_release(s, d, g);
		}
		snprintf(g->why, sizeof(g->why), "idle");
		goto out;
	}
	occ_pref = g->pref >= 0 ? occ[g->pref] : 0;
	if (best >= 0 && best != g->pref && g->active_periods >= ACTIVE_PERIODS &&
	    llc_should_switch(occ_best, occ_pref)) {
		struct policy_action *a = plan_add(plan, POLICY_ACT_PREFER, d, -1, llc_cpus(s, best),
		    "group '%s': preferred LLC %d -> %d: occupancy %.2f > 2 x %.2f",
		    g->name, g->pref, best, occ_best, occ_pref);
		if (a)
			a->llc = best;
		g->pref = best;
		g->fail = 0;
		d->pref_switches++;
		s->stats.pref_switches++;
		occ_pref = occ_best;
	}
	g->pref_occ = occ_pref;
	if (g->pref < 0)
		goto out;

	bool counters = in->host.counters && d->annot.tune.benefit_check;
	bool hold = counters && g->b == B_HOLD;
	int P = g->pref, moved = 0, forbid = 0, outside = 0;
	struct cpuset dst;
	cpuset_and(&dst, llc_cpus(s, P), allowed);

	/* into the preferred LLC, busiest threads first */
	order = calloc((size_t)d->nvcpus, sizeof(int));
	if (order == NULL)
		goto out;
	int no = 0;
	CPUSET_FOREACH(v, &g->vcpus)
		if (v < d->nvcpus && pin_llc(s, &d->want[v]) != P)
			order[no++] = v;
	for (int i = 1; i < no; i++) {
		int x = order[i], j = i - 1;
		while (j >= 0 && d->vutil[order[j]] < d->vutil[x]) {
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = x;
	}
	outside = no;
	if (!hold && in->now_ns >= g->retry_after_ns && !cpuset_empty(&dst)) {
		for (int i = 0; i < no; i++) {
			v = order[i];
			/* where it runs now: its pin's LLC, or where it last ran */
			int src = vcpu_llc(s, d, di, v);
			double tu = d->vutil[v];
			if (src == P) {
				/* already there, only not held: pin it, no migration */
				d->want[v] = dst;
				outside--;
				continue;
			}
			enum llc_mig m = src < 0 ? LLC_MIG_LLC :
			    llc_can_migrate(&r, s->llc_util[src], s->llc_cap[src], s->llc_util[P], s->llc_cap[P], tu, true);
			if (m == LLC_MIG_FORBID) {
				forbid++;
				continue;
			}
			if (m != LLC_MIG_LLC || moved >= d->annot.tune.max_moves || s->moves_left <= 0)
				continue;
			d->want[v] = dst;
			if (src >= 0)
				s->llc_util[src] -= tu;
			s->llc_util[P] += tu;
			moved++;
			outside--;
			s->moves_left--;
			d->moves++;
		}
		if (moved)
			g->fail = 0;
		else if (forbid)
			g->fail++;
		if (g->fail >= RETRY_FAILS) {
			snprintf(g->why, sizeof(g->why), "LLC %d too busy to take the group (%.1f of %.0f PUs busy); "
			    "released to its placement, retry in %d epochs", P, s->llc_util[P], s->llc_cap[P],
			    d->annot.tune.affinity_timeout);
			grp_release(s, d, g);
			g->retry_after_ns = in->now_ns +
			    (uint64_t)((double)d->annot.tune.affinity_timeout / epochs_per_period * period);
			goto bench;
		}
	}
	/* out of the preferred LLC: one thread per period when it is overloaded */
	if (!hold) {
		int D = -1;
		double du = 0;
		for (int l = 0; l < nllc; l++) {
			if (l == P || !cpuset_intersects(llc_cpus(s, l), allowed))
				continue;
			double u = s->llc_util[l] / s->llc_cap[l];
			if (D < 0 || u < du) {
				D = l;
				du = u;
			}
		}
		if (D >= 0) {
			CPUSET_FOREACH(v, &g->vcpus) {
				if (v >= d->nvcpus || pin_llc(s, &d->want[v]) != P || pin_llc(s, &d->home[v]) == P)
					continue;
				double tu = d->vutil[v];
				if (llc_can_migrate(&r, s->llc_util[P], s->llc_cap[P], s->llc_util[D], s->llc_cap[D],
				                    tu, false) == LLC_MIG_FORBID)
					break;
				d->want[v] = d->home[v];
				s->llc_util[P] -= tu;
				s->llc_util[D] += tu;
				snprintf(g->why, sizeof(g->why), "LLC %d overloaded (%.1f of %.0f PUs busy): vCPU %d back to its placement",
				    P, s->llc_util[P] + tu, s->llc_cap[P], v);
				break;
			}
		}
	}
	if (moved)
		snprintf(g->why, sizeof(g->why), "moving into preferred LLC %d (occupancy %.2f): %d moved, %d outside",
		    P, occ_pref, moved, outside);
	else if (outside == 0 && !hold && g->b != B_KEPT)
		snprintf(g->why, sizeof(g->why), "on preferred LLC %d (occupancy %.2f)%s", P, occ_pref,
		    counters ? "" : "; no instruction counters: kernel guards only");
bench:
	if (counters)
		benefit_update(s, in, d, di, g, outside == 0, moved > 0, cpus_in_use, plan);
out:
	free(order);
	free(occ);
}

/* Rebuild guest-reported groups from this period's reports. */
static void
update_guest_groups(struct policy_state *s, const struct policy_input *in, struct dom *d,
                    const struct policy_domain_in *di, double epochs_per_period)
{
	struct cpuset taken, all;
	bool any_guest = false;

	for (int i = 0; i < d->ngroups; i++)
		any_guest |= d->groups[i].rule == POLICY_GROUP_GUEST;
	if (di->nreports == 0 && !any_guest)
		return;
	cpuset_zero(&all);
	cpuset_set_range(&all, 0, d->nvcpus - 1);
	cpuset_zero(&taken);
	for (int i = 0; i < d->ngroups; i++)
		if (d->groups[i].rule != POLICY_GROUP_GUEST)
			cpuset_or(&taken, &taken, &d->groups[i].vcpus);
	if (d->ngroups > 0 && d->groups[0].rule == POLICY_GROUP_DOMAIN)
		return;         /* the whole domain is one group already */
	for (int r = 0; r < di->nreports; r++) {
		const struct policy_hot_report *rep = &di->reports[r];
		struct cpuset vc;
		struct grp *g = NULL;

		char name[POLICY_GROUP_NAME];
		size_t j;

		/* sanitise the untrusted name */
		for (j = 0; j + 1 < sizeof(name) && j < sizeof(rep->name) && rep->name[j]; j++) {
			char c = rep->name[j];
			name[j] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			          c == '-' || c == '_' || c == '.' ? c : '_';
		}
		name[j] = '\0';
		cpuset_and(&vc, &rep->vcpus, &all);
		cpuset_andnot(&vc, &vc, &taken);
		for (int i = 0; i < d->ngroups; i++)
			if (d->groups[i].rule == POLICY_GROUP_GUEST && d->groups[i].pid == rep->pid &&
			    strcmp(d->groups[i].name, name) == 0)
				g = &d->groups[i];
		if (cpuset_count(&vc) < 2 && g == NULL)
			continue;
		if (g == NULL) {
			g = grp_add(s, d, name, POLICY_GROUP_GUEST, &vc);
			if (g == NULL)
				continue;
			g->pid = rep->pid;
		} else {
			/* vCPUs that left the group go back to their placement */
			struct cpuset gone;
			int v;
			cpuset_andnot(&gone, &g->vcpus, &vc);
			CPUSET_FOREACH(v, &gone)
				d->want[v] = d->home[v];
			g->vcpus = vc;
		}
		g->last_report_step = s->step;
		cpuset_or(&taken, &taken, &vc);
	}
	/* dissolve groups not reported for affinity-timeout epochs; a silent
	 * group keeps only vCPUs no fresh report claimed */
	for (int i = 0; i < d->ngroups; i++) {
		struct grp *g = &d->groups[i];
		if (g->rule != POLICY_GROUP_GUEST)
			continue;
		if (g->last_report_step != s->step)
			cpuset_andnot(&g->vcpus, &g->vcpus, &taken);
		double silent = (double)(s->step - g->last_report_step) * epochs_per_period;
		if (silent <= d->annot.tune.affinity_timeout && !cpuset_empty(&g->vcpus))
			continue;
		grp_release(s, d, g);
		grp_clear(g);
		memmove(g, g + 1, sizeof(*g) * (size_t)(d->ngroups - i - 1));
		d->ngroups--;
		i--;
	}
	(void)in;
}

static void
steer_spread(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
             const struct cpuset *allowed)
{
	int nllc = s->nllc, moved = 0;
	int *nbusy = calloc((size_t)nllc, sizeof(int));

	if (nbusy == NULL)
		return;
	for (int v = 0; v < d->nvcpus; v++)
		if (d->vutil[v] >= BUSY_VCPU) {
			int l = vcpu_llc(s, d, di, v);
			if (l >= 0)
				nbusy[l]++;
		}
	for (int v = d->nvcpus - 1; v >= 0 && moved < d->annot.tune.max_moves && s->moves_left > 0; v--) {
		int src = vcpu_llc(s, d, di, v), dst = -1;
		if (d->vutil[v] < BUSY_VCPU || src < 0 || nbusy[src] < 2)
			continue;
		for (int l = 0; l < nllc; l++) {
			if (nbusy[l] != 0 || !cpuset_intersects(llc_cpus(s, l), allowed))
				continue;
			if (dst < 0 || s->llc_util[l] / s->llc_cap[l] < s->llc_util[dst] / s->llc_cap[dst])
				dst = l;
		}
		if (dst < 0)
			break;
		cpuset_and(&d->want[v], llc_cpus(s, dst), allowed);
		nbusy[src]--;
		nbusy[dst]++;
		s->llc_util[src] -= d->vutil[v];
		s->llc_util[dst] += d->vutil[v];
		moved++;
		s->moves_left--;
		d->moves++;
	}
	free(nbusy);
}

/* --- the step ------------------------------------------------------------ */

static int
validate(const struct policy_input *in, struct llcd_err *err)
{
	if (in->host.topo == NULL)
		return llcd_err_set(err, "policy: no topology");
	if (in->period_ns == 0)
		return llcd_err_set(err, "policy: sampling period must be > 0");
	if (in->host.overcommit <= 0 || in->host.overcommit_isolated <= 0)
		return llcd_err_set(err, "policy: overcommit ratios must be > 0");
	if (!cpuset_empty(&in->host.shared_pool)) {
		struct cpuset x;
		cpuset_and(&x, &in->host.shared_pool, &in->host.topo->all);
		cpuset_andnot(&x, &x, &in->host.reserved);
		if (cpuset_empty(&x))
			return llcd_err_set(err, "policy: the shared pool has no CPU of this host outside the reserved CPUs");
	}
	if (in->ndomains < 0 || (in->ndomains > 0 && in->domains == NULL))
		return llcd_err_set(err, "policy: bad domain list");
	for (int i = 0; i < in->ndomains; i++) {
		const struct policy_domain_in *d = &in->domains[i];
		if (d->nvcpus < 1 || d->nvcpus > MAX_VCPUS)
			return llcd_err_set(err, "policy: domain '%s' has %d vCPUs (allowed 1-%d)",
			    d->name, d->nvcpus, MAX_VCPUS);
		if (d->vcpus == NULL)
			return llcd_err_set(err, "policy: domain '%s' has no vCPU samples", d->name);
		if (d->nreports < 0 || (d->nreports > 0 && d->reports == NULL))
			return llcd_err_set(err, "policy: domain '%s' has a bad report list", d->name);
		for (int j = 0; j < i; j++)
			if (in->domains[j].key == d->key)
				return llcd_err_set(err, "policy: domains '%s' and '%s' share key %llu",
				    in->domains[j].name, d->name, (unsigned long long)d->key);
	}
	return 0;
}

static int
cmp_in_key(const void *a, const void *b, void *arg)
{
	const struct policy_domain_in *in = arg;
	uint64_t x = in[*(const int *)a].key, y = in[*(const int *)b].key;

	return x < y ? -1 : x > y;
}

int
policy_step(struct policy_state *s, const struct policy_input *in,
            struct policy_plan *plan, struct llcd_err *err)
{
	const struct topo *t;
	int *order = NULL;
	double period_ms, epoch_ms, k;

	if (validate(in, err) < 0)
		return -1;
	t = in->host.topo;
	if (state_bind_topo(s, t) < 0)
		return llcd_err_set(err, "policy: out of memory");
	policy_plan_clear(plan);
	s->step++;
	s->stats.steps++;
	s->moves_left = in->host.max_moves_total > 0 ? in->host.max_moves_total : 256;
	period_ms = (double)in->period_ns / 1e6;

	/* 1. reconcile */
	order = malloc(sizeof(int) * (size_t)(in->ndomains + 1));
	if (order == NULL)
		return llcd_err_set(err, "policy: out of memory");
	for (int i = 0; i < in->ndomains; i++)
		order[i] = i;
	qsort_r(order, (size_t)in->ndomains, sizeof(int), cmp_in_key, (void *)in->domains);
	for (int i = 0; i < s->ndoms; i++)
		s->doms[i]->seen = false;
	for (int oi = 0; oi < in->ndomains; oi++) {
		const struct policy_domain_in *di = &in->domains[order[oi]];
		int idx = dom_find(s, di->key);
		struct dom *d = idx >= 0 ? s->doms[idx] : NULL;

		if (d && (d->nvcpus != di->nvcpus || d->annotated != di->annotated ||
		          (di->annotated && annot_shape_changed(&d->annot, &di->annot)))) {
			/* re-place: vCPU count or annotation shape changed */
			bool was_managed = d->st == D_PLACED || d->confined;
			if (d->nvcpus != di->nvcpus) {
				/* arrays are sized by nvcpus: start over */
				for (int j = idx; j < s->ndoms - 1; j++)
					s->doms[j] = s->doms[j + 1];
				s->ndoms--;
				dom_free(d);
				s->res_gen++;
				d = NULL;
			} else {
				dom_unplace(s, d);
				d->released_sent = !was_managed;
			}
		}
		if (d == NULL) {
			d = dom_new(di);
			if (d == NULL || dom_insert(s, d) < 0) {
				dom_free(d);
				free(order);
				return llcd_err_set(err, "policy: out of memory");
			}
			d->released_sent = true;
		}
		snprintf(d->name, sizeof(d->name), "%s", di->name);
		d->guest = di->guest;
		d->annotated = di->annotated;
		if (di->annotated)
			annot_copy(&d->annot, &di->annot);
		else
			policy_annotation_defaults(&d->annot);
		d->isolated = dom_managed_mode(d) && d->annot.isolation == POLICY_ISO_CORE;
		d->in_idx = order[oi];
		d->seen = true;
	}
	for (int i = 0; i < s->ndoms; i++) {
		if (s->doms[i]->seen)
			continue;
		dom_free(s->doms[i]);
		memmove(&s->doms[i], &s->doms[i + 1], sizeof(s->doms[0]) * (size_t)(s->ndoms - i - 1));
		s->ndoms--;
		s->res_gen++;
		i--;
	}

	/* 2. account */
	k = llc_decay(period_ms, period_ms);   /* per-CPU totals decay per period */
	account(s, in, k);
	rebuild_ownership(s);

	/* 3. place: adopt valid pins, then place new isolated, then shared */
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		if (d->st == D_REFUSED && d->refused_gen != s->res_gen)
			d->st = D_NEW;
		if (d->st == D_NEW && !d->no_adopt && dom_managed_mode(d) && adopt_domain(s, &in->host, d, &in->domains[d->in_idx]))
			init_groups(s, d);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->ndoms; i++) {
			struct dom *d = s->doms[i];
			if (d->st != D_NEW || !dom_managed_mode(d) || d->isolated != (pass == 0))
				continue;
			place_domain(s, &in->host, d, plan);
			if (d->st == D_PLACED)
				init_groups(s, d);
			rebuild_ownership(s);
		}
	}
	/* shared domains overlapping cores that isolated domains now own */
	{
		struct cpuset pool;
		shared_pool(s, &in->host, &pool);
		for (int i = 0; i < s->ndoms; i++) {
			struct dom *d = s->doms[i];
			if (d->st != D_PLACED || d->isolated || cpuset_subset(&d->allot, &pool))
				continue;
			dom_unplace(s, d);
			rebuild_ownership(s);
			place_domain(s, &in->host, d, plan);
			if (d->st == D_PLACED)
				init_groups(s, d);
			rebuild_ownership(s);
		}
	}

	/* 4. steer and emit, in key order */
	bool any_isolated = false;
	for (int i = 0; i < s->ndoms; i++)
		if (s->doms[i]->st == D_PLACED && s->doms[i]->isolated)
			any_isolated = true;
	shared_pool(s, &in->host, &s->pool);
	const struct cpuset pool = s->pool;
	bool pool_changed = !set_eq(s, &s->pool, &s->prev_pool);
	s->prev_pool = s->pool;
	for (int i = 0; i < s->ndoms; i++) {
		struct dom *d = s->doms[i];
		const struct policy_domain_in *di = &in->domains[d->in_idx];
		struct cpuset allowed, all_host;
		char buf[128];

		for (int v = 0; v < d->nvcpus; v++) {
			double u = (double)di->vcpus[v].runtime_ns / (double)in->period_ns;
			d->vutil[v] = 0.5 * d->vutil[v] + 0.5 * (u > 1 ? 1 : u);
		}
		if (d->st != D_PLACED) {
			/* unmanaged: confined to the shared pool as a whole while
			 * isolated domains exist, released otherwise */
			if (any_isolated) {
				for (int v = 0; v < d->nvcpus; v++)
					d->want[v] = pool;
				if (!cpuset_empty(&pool) && (!d->confined || !cpuset_equal(&d->emu_want, &pool))) {
					fmt_set(&pool, buf, sizeof(buf));
					plan_add(plan, POLICY_ACT_PIN_EMULATOR, d, -1, &pool,
					    "unmanaged domain confined to the shared pool [%s] while isolated domains exist", buf);
					d->emu_want = pool;
				}
				d->confined = true;
				d->released_sent = false;
			} else {
				if ((d->confined || !d->released_sent)) {
					all_host = t->all;
					cpuset_andnot(&all_host, &all_host, &in->host.reserved);
					plan_add(plan, POLICY_ACT_RELEASE, d, -1, &all_host,
					    d->confined ? "no isolated domain left: back to the default scheduler"
					                : "no longer managed: back to the default scheduler");
					for (int v = 0; v < d->nvcpus; v++)
						d->want[v] = all_host;
					for (int v = 0; v < d->nvcpus; v++)
						d->sent[v] = all_host;
				}
				d->confined = false;
				d->released_sent = true;
				continue;
			}
		} else {
			dom_allowed(s, d, &allowed);
			double epoch_ms_d = d->annot.tune.epoch_ms > 0 ? d->annot.tune.epoch_ms : period_ms;
			double epochs = period_ms / epoch_ms_d;
			epoch_ms = epoch_ms_d;
			if (d->annot.mode == POLICY_MODE_AGGREGATE) {
				double kd = llc_decay(period_ms, epoch_ms);
				update_guest_groups(s, in, d, di, epochs);
				for (int g = 0; g < d->ngroups; g++)
					steer_group(s, in, d, di, &d->groups[g], kd, epochs, &allowed, plan);
			} else if (d->annot.mode == POLICY_MODE_SPREAD) {
				steer_spread(s, d, di, &allowed);
			}
			/* emulator threads: reserved CPUs for isolated domains when
			 * there are any, else the domain's own PUs */
			struct cpuset emu = d->allot;
			if (d->isolated && !cpuset_empty(&in->host.reserved))
				emu = in->host.reserved;
			if (!cpuset_empty(&emu) && (!d->emu_sent || !cpuset_equal(&emu, &d->emu_want))) {
				fmt_set(&emu, buf, sizeof(buf));
				plan_add(plan, POLICY_ACT_PIN_EMULATOR, d, -1, &emu, "emulator threads on %s [%s]",
				    d->isolated && !cpuset_empty(&in->host.reserved) ? "the reserved CPUs" : "the domain's PUs",
				    buf);
				d->emu_want = emu;
				d->emu_sent = true;
			}
		}
		/* shared-pool pins never reach cores an isolated domain owns now */
		if (d->st == D_PLACED && !d->isolated && pool_changed) {
			for (int v = 0; v < d->nvcpus; v++) {
				cpuset_and(&d->home[v], &d->home[v], &pool);
				cpuset_and(&d->want[v], &d->want[v], &pool);
				if (cpuset_empty(&d->want[v]))
					d->want[v] = d->home[v];
			}
		}
		/* one PIN per vCPU whose wanted pin differs from what was seen */
		for (int v = 0; v < d->nvcpus; v++) {
			const struct cpuset *seen = &di->vcpus[v].pinned;
			/* compare with what was observed, or, when the back-end
			 * cannot observe pins, with what was last sent */
			bool differs = !set_eq(s, set_empty(s, seen) ? &d->sent[v] : seen, &d->want[v]);
			if (!differs || set_empty(s, &d->want[v]))
				continue;       /* never pin to nothing */
			int l = pin_llc(s, &d->want[v]);
			fmt_set(&d->want[v], buf, sizeof(buf));
			if (d->confined)
				plan_add(plan, POLICY_ACT_PIN_VCPU, d, v, &d->want[v], "shared pool [%s]", buf);
			else if (cpuset_equal(&d->want[v], &d->home[v]))
				plan_add(plan, POLICY_ACT_PIN_VCPU, d, v, &d->want[v], "placement: LLC %d [%s] (%s, %s)",
				    l, buf, policy_mode_name(d->annot.mode), d->isolated ? "isolated cores" : "shared pool");
			else
				plan_add(plan, POLICY_ACT_PIN_VCPU, d, v, &d->want[v], "%s LLC %d [%s]",
				    d->annot.mode == POLICY_MODE_SPREAD ? "spread to" : "preferred", l, buf);
			d->sent[v] = d->want[v];
			s->stats.pins++;
		}
	}
	(void)epoch_ms;
	free(order);
	return 0;
}

/* --- introspection -------------------------------------------------------- */

int
policy_domain_info(const struct policy_state *s, uint64_t key, struct policy_domain_info *info)
{
	int idx = dom_find(s, key);
	const struct dom *d;

	if (idx < 0)
		return -1;
	d = s->doms[idx];
	memset(info, 0, sizeof(*info));
	info->key = d->key;
	snprintf(info->name, sizeof(info->name), "%s", d->name);
	info->mode = d->annot.mode;
	info->managed = d->st == D_PLACED;
	info->refused = d->st == D_REFUSED;
	if (info->refused)
		snprintf(info->reason, sizeof(info->reason), "%s", d->refuse_reason);
	info->allotment = d->allot;
	info->pref_switches = d->pref_switches;
	info->vcpu_moves = d->moves;
	info->ngroups = d->ngroups;
	for (int i = 0; i < d->ngroups; i++) {
		const struct grp *g = &d->groups[i];
		struct policy_group_info *gi = &info->groups[i];
		snprintf(gi->name, sizeof(gi->name), "%s", g->name);
		gi->rule = g->rule;
		gi->vcpus = g->vcpus;
		gi->pref_llc = g->pref;
		gi->pref_occ = g->pref_occ;
		gi->best_llc = g->best_llc;
		gi->best_occ = g->best_occ;
		gi->guarded = g->guarded;
		gi->backed_off = g->b == B_HOLD;
		snprintf(gi->why, sizeof(gi->why), "%s", g->why);
	}
	return 0;
}

int
policy_domain_slots(const struct policy_state *s, uint64_t key, int *slots,
                    struct cpuset *home, int n)
{
	int idx = dom_find(s, key);
	const struct dom *d;

	if (idx < 0 || s->doms[idx]->st != D_PLACED)
		return -1;
	d = s->doms[idx];
	for (int v = 0; v < n && v < d->nvcpus; v++) {
		if (slots)
			slots[v] = d->slot[v];
		if (home)
			home[v] = d->home[v];
	}
	return d->nvcpus;
}

void
policy_stats(const struct policy_state *s, struct policy_stats *st)
{
	*st = s->stats;
}
