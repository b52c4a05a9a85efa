// SPDX-License-Identifier: GPL-2.0-or-later
/* order.c - the last stage of a step: the order of the plan
 * (docs/design.md, "The order of actions"). The stages before it say
 * where every vCPU should be; this one says in which order the caller may
 * move them so that, at every moment between two actions, no core may run
 * a vCPU of an isolated domain and a vCPU of another domain (shared or
 * isolated): "vacate before occupy, narrow before widen", for isolated
 * and shared domains alike.
 *
 * A pin moves a vCPU from the PUs it may reach now (R: its observed
 * affinity; every PU when it was never placed) to its new pin (T). It
 * occupies the cores of T it did not reach and vacates the cores of R it
 * leaves. Two domains conflict when one of them is isolated (placed on
 * cores of its own). The rules (order_deps()):
 *  - a pin of a domain without isolation that only narrows (T within R),
 *    or whose new cores no vCPU of an isolated domain touches this period
 *    (now or after its pins), waits for nothing;
 *  - one whose new cores an isolated vCPU touches waits for the pins that
 *    take every such vCPU off them;
 *  - a pin of an isolated domain waits for the pins that take every vCPU
 *    of a domain without isolation off the cores of T (all of them: an
 *    isolated domain's pins land only on cores no shared vCPU may reach),
 *    and every vCPU of another isolated domain off the cores it takes
 *    (two isolated domains that shared cores before, e.g. both confined to
 *    the shared pool until they were placed, narrow onto their own cores
 *    in either order: a narrowing never adds a shared core);
 *  - a pin of a domain without isolation that would both leave cores an
 *    isolated domain takes and take cores one leaves is split: first its
 *    narrowing (T within what it reaches, or within cores no isolated
 *    vCPU touches), then the rest, which waits (narrow before widen);
 *  - where prerequisites form a cycle (an isolated domain confined to the
 *    shared pool until it was placed reaches every core, so a shared vCPU
 *    moving off its cores waits for it as it waits for the shared vCPU),
 *    an isolated pin that narrows goes first: a narrowing never adds a
 *    shared core;
 *  - a pin that would wait for a vCPU that stays (no pin of this plan
 *    takes it off, or its new pin keeps the core) is held back, and so is
 *    one whose prerequisites still would wait for it; held pins are
 *    planned again next step, and so is everything that waits for them.
 * Emulator threads are not observed: their pins occupy every core of T
 * and wait like a vCPU's, but nothing waits for them; the cores of the
 * reserved CPUs, where isolated domains' emulator threads go, are shared
 * with the host by design and wait for nothing.
 *
 * The plan comes out sorted by stage (NARROW, ISOLATE, WIDEN), each
 * action's prerequisites (policy_plan_deps()) before it. Pure, like every
 * stage: no I/O; allocation failures hold every pin back (counted in
 * stats.nomem) rather than hand out an unordered plan.
 */
#include "policy_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One action of the plan being ordered. */
struct item {
	int dom;                        /* input index of its domain */
	int flat;                       /* PIN_VCPU: flat vCPU index; else -1 */
	int narrow;                     /* the final half of a split pin: its
	                                 * narrowing item; else -1 */
	const struct cpuset *from;      /* PIN_VCPU: the reach before it */
	int dep0, ndeps;                /* into order.deps: item indices */
	int pos;                        /* place in the ordered plan, -1 not yet */
	enum policy_stage stage;
	bool held;
};

enum who { WHO_ISOLATED, WHO_SHARED };

struct order {
	struct policy_state *s;
	const struct policy_input *in;
	const struct topo *t;
	struct dom **dom;               /* per input index */
	int *base;                      /* per input index: first flat vCPU */
	int nflat;
	const struct cpuset **reach;    /* per flat vCPU: where it may run now */
	const struct cpuset **target;   /* per flat vCPU: where it may run after */
	int *it0, *it1;                 /* per flat vCPU: first and last item; -1 */
	int *isoi;                      /* per input index: into iso_*, -1 shared */
	struct cpuset *touch;           /* per input index: PUs its vCPUs may reach
	                                 * now or after */
	int niso;
	struct cpuset *iso_reach;       /* per isolated domain: PUs it reaches now */
	struct cpuset *iso_touch_dom;   /* ... whole cores it touches now or after */
	struct cpuset *iso_held_dom;    /* ... the same, without the reach of
	                                 * vCPUs never placed (allowed on every PU) */
	struct cpuset iso_touch;        /* whole cores any isolated vCPU touches */
	struct cpuset sh_touch;         /* whole cores other vCPUs touch */
	struct cpuset sh_held;          /* ... without the never placed ones' reach */
	struct cpuset usable;           /* host PUs outside the reserved CPUs */
	struct policy_action *acts;     /* the items' actions, in item order */
	struct item *it;
	int n, cap;
	int *deps;
	int ndeps, deps_cap;
	bool nomem;
	int memo;                       /* the last PIN_VCPU item order_deps() did */
	int why_item;                   /* the item hold() last held ... */
	char why[POLICY_REASON];        /* ... and why */
};

/* Set operations over the words that can hold host PUs (policy.c's
 * set_*: every set here lies within the host, and the CPUs of an observed
 * affinity beyond it do not matter): the order stage runs over every vCPU
 * of a step. */
static void
u_or(const struct policy_state *s, struct cpuset *d, const struct cpuset *a)
{
	for (int i = 0; i < s->nwords; i++)
		d->w[i] |= a->w[i];
}

static bool
meets(const struct policy_state *s, const struct cpuset *a, const struct cpuset *b)
{
	for (int i = 0; i < s->nwords; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

/* The PUs of the whole cores the PUs of in lie on. */
static void
whole(const struct policy_state *s, const struct cpuset *in, struct cpuset *out)
{
	const struct topo *t = s->topo;
	struct cpuset w;
	int cpu;

	cpuset_zero(&w);
	CPUSET_FOREACH(cpu, in) {
		int c;
		if (cpu > t->max_cpu)
			break;
		if (cpuset_isset(&w, cpu) || (c = topo_core_of(t, cpu)) < 0)
			continue;
		u_or(s, &w, &topo_get(t, TOPO_CORE, c)->cpus);
	}
	*out = w;
}

static bool
is_pin(enum policy_action_type type)
{
	return type == POLICY_ACT_PIN_VCPU || type == POLICY_ACT_PIN_EMULATOR || type == POLICY_ACT_RELEASE;
}

/* --- the fast path -------------------------------------------------------- */

/* Where vCPU v of input domain di may run now, as far as the engine knows:
 * its observed affinity, else (not observed: never placed, or a back-end
 * that cannot tell) every PU of the host. */
static const struct cpuset *
observed_reach(const struct policy_state *s, const struct policy_domain_in *di, int v)
{
	const struct cpuset *p = policy_sample_pin(&di->vcpus[v]);

	return policy_set_empty(s, p) ? &s->topo->all : p;
}

/* No isolated domain placed (or nothing to pin): nothing can conflict, the
 * plan keeps its order, every action in NARROW, rollbacks to the observed
 * affinity. */
static void
order_trivial(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan)
{
	plan->ndeps = 0;
	for (int i = 0; i < plan->n; i++) {
		struct policy_action *a = &plan->actions[i];
		a->stage = POLICY_STAGE_NARROW;
		a->dep0 = a->ndeps = 0;
		a->held = false;
		cpuset_zero(&a->undo);
		if (a->type == POLICY_ACT_PIN_VCPU && a->domain >= 0 && a->domain < in->ndomains &&
		    a->vcpu >= 0 && a->vcpu < in->domains[a->domain].nvcpus)
			a->undo = *observed_reach(s, &in->domains[a->domain], a->vcpu);
	}
}

/* Out of memory: hold back every pin (planned again next step) rather than
 * hand out a plan whose order is not known to keep isolation. */
static void
hold_all(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan)
{
	order_trivial(s, in, plan);
	s->stats.nomem++;
	for (int i = 0; i < plan->n; i++) {
		struct policy_action *a = &plan->actions[i];
		if (!is_pin(a->type))
			continue;
		a->held = true;
		policy_action_not_applied(s, a);
		snprintf(a->reason, sizeof(a->reason), "not applied: out of memory ordering the plan, so isolation=core "
		    "could not be kept while pinning; planned again next period");
	}
}

/* --- building the items ----------------------------------------------------- */

static void
order_free(struct order *o)
{
	free(o->dom);
	free(o->base);
	free(o->reach);
	free(o->target);
	free(o->it0);
	free(o->it1);
	free(o->isoi);
	free(o->touch);
	free(o->iso_reach);
	free(o->iso_touch_dom);
	free(o->iso_held_dom);
	free(o->acts);
	free(o->it);
	free(o->deps);
}

static struct item *
item_add(struct order *o, const struct policy_action *a, int dom, int flat)
{
	if (o->n == o->cap) {
		o->nomem = true;        /* sized up front: cannot happen */
		return NULL;
	}
	o->acts[o->n] = *a;
	struct item *x = &o->it[o->n++];
	*x = (struct item){ .dom = dom, .flat = flat, .narrow = -1, .pos = -1 };
	return x;
}

static bool
dep_add(struct order *o, int item)
{
	if (o->ndeps == o->deps_cap) {
		int ncap = o->deps_cap ? 2 * o->deps_cap : 256;
		int *d = realloc(o->deps, sizeof(int) * (size_t)ncap);
		if (d == NULL) {
			o->nomem = true;
			return false;
		}
		o->deps = d;
		o->deps_cap = ncap;
	}
	o->deps[o->ndeps++] = item;
	return true;
}

static int
order_alloc(struct order *o, const struct policy_plan *plan)
{
	const struct policy_input *in = o->in;
	int nd = in->ndomains > 0 ? in->ndomains : 1;

	o->dom = calloc((size_t)nd, sizeof(*o->dom));
	o->base = calloc((size_t)nd + 1, sizeof(int));
	o->isoi = calloc((size_t)nd, sizeof(int));
	o->touch = calloc((size_t)nd, sizeof(struct cpuset));
	if (!o->dom || !o->base || !o->isoi || !o->touch)
		return -1;
	for (int i = 0; i < in->ndomains; i++) {
		o->base[i] = o->nflat;
		o->nflat += in->domains[i].nvcpus;
	}
	o->base[in->ndomains] = o->nflat;
	size_t nf = (size_t)(o->nflat > 0 ? o->nflat : 1);
	o->reach = calloc(nf, sizeof(*o->reach));
	o->target = calloc(nf, sizeof(*o->target));
	o->it0 = malloc(nf * sizeof(int));
	o->it1 = malloc(nf * sizeof(int));
	o->cap = 2 * plan->n + 1;
	o->acts = malloc(sizeof(*o->acts) * (size_t)o->cap);
	o->it = malloc(sizeof(*o->it) * (size_t)o->cap);
	if (!o->reach || !o->target || !o->it0 || !o->it1 || !o->acts || !o->it)
		return -1;
	for (int f = 0; f < o->nflat; f++)
		o->it0[f] = o->it1[f] = -1;
	for (int j = 0; j < o->s->ndoms; j++) {
		struct dom *d = o->s->doms[j];
		if (d->seen && d->in_idx >= 0 && d->in_idx < in->ndomains)
			o->dom[d->in_idx] = d;
	}
	for (int i = 0; i < in->ndomains; i++) {
		const struct dom *d = o->dom[i];
		o->isoi[i] = d && d->state == DOM_PLACED && d->isolated ? o->niso++ : -1;
	}
	o->iso_reach = calloc((size_t)(o->niso ? o->niso : 1), sizeof(struct cpuset));
	o->iso_touch_dom = calloc((size_t)(o->niso ? o->niso : 1), sizeof(struct cpuset));
	o->iso_held_dom = calloc((size_t)(o->niso ? o->niso : 1), sizeof(struct cpuset));
	return o->iso_reach && o->iso_touch_dom && o->iso_held_dom ? 0 : -1;
}

/* Each vCPU's reach now and after the plan, and the cores each side
 * touches. */
static void
order_reach(struct order *o, const struct policy_plan *plan)
{
	const struct policy_input *in = o->in;
	struct cpuset sh, shh;

	cpuset_andnot(&o->usable, &o->t->all, &in->host.reserved);
	for (int i = 0; i < plan->n; i++) {
		const struct policy_action *a = &plan->actions[i];
		int di = a->domain;
		if (di < 0 || di >= in->ndomains)
			continue;
		if (a->type == POLICY_ACT_PIN_VCPU && a->vcpu >= 0 && a->vcpu < in->domains[di].nvcpus)
			o->target[o->base[di] + a->vcpu] = &a->cpus;
		else if (a->type == POLICY_ACT_RELEASE)
			for (int v = 0; v < in->domains[di].nvcpus; v++)
				o->target[o->base[di] + v] = &a->cpus;
	}
	cpuset_zero(&sh);
	cpuset_zero(&shh);
	cpuset_zero(&o->iso_touch);
	for (int i = 0; i < in->ndomains; i++) {
		const struct policy_domain_in *di = &in->domains[i];
		const struct dom *d = o->dom[i];
		int k = o->isoi[i];
		struct cpuset touch, held;
		cpuset_zero(&touch);
		cpuset_zero(&held);
		const int nw = o->s->nwords;
		for (int v = 0; v < di->nvcpus; v++) {
			int f = o->base[i] + v;
			const struct cpuset *p = policy_sample_pin(&di->vcpus[v]);
			/* not observed and not pinned now: what the engine sent */
			if (o->target[f] == NULL && d != NULL && policy_set_empty(o->s, p) && !policy_set_empty(o->s, d->want[v]))
				o->reach[f] = d->want[v];
			else
				o->reach[f] = policy_set_empty(o->s, p) ? &o->t->all : p;
			if (o->target[f] == NULL)
				o->target[f] = o->reach[f];
			/* one pass over the words (this runs for every vCPU):
			 * touch |= R | T, held |= T (| R unless R is every usable
			 * PU: never placed) */
			const uint64_t *r = o->reach[f]->w, *t = o->target[f]->w, *u = o->usable.w;
			uint64_t missing = 0;
			for (int w = 0; w < nw; w++) {
				touch.w[w] |= r[w] | t[w];
				missing |= u[w] & ~r[w];
			}
			for (int w = 0; w < nw; w++)
				held.w[w] |= t[w] | (missing ? r[w] : 0);
			if (k >= 0)
				u_or(o->s, &o->iso_reach[k], o->reach[f]);
		}
		o->touch[i] = touch;
		if (k >= 0) {
			whole(o->s, &touch, &o->iso_touch_dom[k]);
			whole(o->s, &held, &o->iso_held_dom[k]);
			u_or(o->s, &o->iso_touch, &o->iso_touch_dom[k]);
		} else {
			u_or(o->s, &sh, &touch);
			u_or(o->s, &shh, &held);
		}
	}
	whole(o->s, &sh, &o->sh_touch);
	whole(o->s, &shh, &o->sh_held);
}

/* The cores no vCPU of a domain conflicting with input domain i touches
 * this period (as PUs). For a rollback (undo), the reach of vCPUs never
 * placed does not count: they may run everywhere until their pins land,
 * and a rollback must only keep clear of where they land. */
static void
safe_for(const struct order *o, int i, bool undo, struct cpuset *out)
{
	struct cpuset bad;

	if (o->isoi[i] < 0) {
		cpuset_zero(&bad);
		if (!undo)
			bad = o->iso_touch;
		for (int j = 0; undo && j < o->in->ndomains; j++)
			if (o->isoi[j] >= 0)
				cpuset_or(&bad, &bad, &o->iso_held_dom[o->isoi[j]]);
	} else {
		bad = undo ? o->sh_held : o->sh_touch;
		for (int j = 0; j < o->in->ndomains; j++)
			if (j != i && o->isoi[j] >= 0)
				cpuset_or(&bad, &bad, undo ? &o->iso_held_dom[o->isoi[j]] : &o->iso_touch_dom[o->isoi[j]]);
	}
	cpuset_andnot(out, &o->t->all, &bad);
}

/* The narrowing half of a pin of vCPU f (domain i, not isolated) from R to
 * T that both leaves and takes contested cores, into n; false when it
 * needs none (or none exists). */
static bool
narrowing(const struct order *o, int i, int f, const struct cpuset *T, struct cpuset *n)
{
	const struct cpuset *R = o->reach[f];
	struct cpuset rc, tc, x, safe;

	if (policy_set_sub(o->s, T, R))
		return false;                   /* only narrows */
	whole(o->s, R, &rc);
	whole(o->s, T, &tc);
	cpuset_andnot(&x, &tc, &rc);            /* cores it takes ... */
	if (!cpuset_intersects(&x, &o->iso_touch))
		return false;                   /* ... none contested */
	cpuset_andnot(&x, &rc, &tc);            /* cores it leaves ... */
	if (!cpuset_intersects(&x, &o->iso_touch))
		return false;                   /* ... none contested: no cycle */
	safe_for(o, i, false, &safe);
	cpuset_or(&x, &rc, &safe);
	cpuset_and(n, T, &x);                   /* where it goes, inside what is safe */
	if (policy_set_empty(o->s, n))
		cpuset_and(n, R, &safe);        /* where it is, inside what is safe */
	if (policy_set_empty(o->s, n))
		cpuset_and(n, &o->s->pool, &safe);
	return !policy_set_empty(o->s, n) && !policy_set_eq(o->s, n, R);
}

static int
order_items(struct order *o, const struct policy_plan *plan)
{
	const struct policy_input *in = o->in;

	for (int i = 0; i < plan->n; i++) {
		const struct policy_action *a = &plan->actions[i];
		int di = a->domain, f = -1;
		bool ok_dom = di >= 0 && di < in->ndomains;
		if (a->type == POLICY_ACT_PIN_VCPU && ok_dom && a->vcpu >= 0 && a->vcpu < in->domains[di].nvcpus)
			f = o->base[di] + a->vcpu;
		struct cpuset nar;
		if (f >= 0 && o->isoi[di] < 0 && narrowing(o, di, f, &a->cpus, &nar)) {
			char buf[128];
			struct item *x = item_add(o, a, di, f);
			if (x == NULL)
				return -1;
			struct policy_action *na = &o->acts[o->n - 1];
			na->cpus = nar;
			x->from = o->reach[f];
			cpuset_str(&nar, buf, sizeof(buf));
			policy_reason_printf(na->reason, sizeof(na->reason), "narrowed to [%s] first: cores an isolated domain "
			    "takes are left before cores it leaves are taken (%s)", buf, a->reason);
			o->it0[f] = o->n - 1;
			o->s->stats.pins++;
		}
		struct item *x = item_add(o, a, ok_dom ? di : -1, f);
		if (x == NULL)
			return -1;
		if (f >= 0) {
			x->narrow = o->it0[f];
			x->from = x->narrow >= 0 ? &o->acts[x->narrow].cpus : o->reach[f];
			if (o->it0[f] < 0)
				o->it0[f] = o->n - 1;
			o->it1[f] = o->n - 1;
		} else if (a->type == POLICY_ACT_RELEASE && ok_dom) {
			for (int v = 0; v < in->domains[di].nvcpus; v++) {
				int g = o->base[di] + v;
				if (o->it0[g] < 0)
					o->it0[g] = o->n - 1;
				o->it1[g] = o->n - 1;
			}
		}
	}
	return 0;
}

/* --- prerequisites ------------------------------------------------------------ */

/* The item after which vCPU f never reaches the cores K again (its first
 * item from which every pin misses K), or -1 when it stays (no item, or its
 * last pin keeps a core of K). */
static int
leaver(const struct order *o, int f, const struct cpuset *K)
{
	int a = o->it0[f], b = o->it1[f];

	if (b < 0 || meets(o->s, &o->acts[b].cpus, K))
		return -1;
	return a >= 0 && a != b && !meets(o->s, &o->acts[a].cpus, K) ? a : b;
}

static void __attribute__((format(printf, 3, 4)))
hold(struct order *o, int k, const char *fmt, ...)
{
	struct policy_action *a = &o->acts[k];
	char why[POLICY_REASON], old[POLICY_REASON];
	va_list ap;

	if (o->it[k].held)
		return;
	o->it[k].held = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	o->why_item = k;
	snprintf(o->why, sizeof(o->why), "%s", why);
	snprintf(old, sizeof(old), "%s", a->reason);
	policy_reason_printf(a->reason, sizeof(a->reason), "not applied: %s, so isolation=core would not hold there; "
	    "planned again next period (%s)", why, old);
}

/* Item k must not run before every vCPU (of the domains who says, other
 * than its own) that touches the cores K is off them for good: add those
 * prerequisites, or hold k back when one stays. */
static void
need(struct order *o, int k, const struct cpuset *K, enum who who)
{
	const struct policy_input *in = o->in;
	int mine = o->it[k].dom, last = -1;

	if (cpuset_empty(K))
		return;
	if (who == WHO_SHARED && !meets(o->s, K, &o->sh_touch))
		return;
	for (int j = 0; j < in->ndomains && !o->it[k].held; j++) {
		int kj = o->isoi[j];
		if (j == mine || (who == WHO_ISOLATED) != (kj >= 0))
			continue;
		if (!meets(o->s, K, &o->touch[j]))
			continue;
		for (int v = 0; v < in->domains[j].nvcpus; v++) {
			int f = o->base[j] + v;
			const struct cpuset *R = o->reach[f], *T = o->target[f];
			bool now = meets(o->s, R, K), after = meets(o->s, T, K);
			if (!now && !after)
				continue;
			int l = leaver(o, f, K);
			if (l < 0) {
				struct cpuset x;
				char pus[64];
				cpuset_and(&x, after ? T : R, K);
				int c = topo_core_of(o->t, cpuset_first(&x));
				cpuset_str(&topo_get(o->t, TOPO_CORE, c)->cpus, pus, sizeof(pus));
				hold(o, k, "domain '%s' vCPU %d %s core %d [%s]%s", in->domains[j].name, v,
				    after ? "is to run on" : "may still run on", c, pus,
				    after ? "" : " and no pin of this period takes it off");
				return;
			}
			if (l != last && !dep_add(o, l))
				return;
			last = l;
		}
	}
}

/* The prerequisites of item k. */
static void
order_deps(struct order *o, int k)
{
	const struct policy_input *in = o->in;
	const struct policy_action *a = &o->acts[k];
	struct item *x = &o->it[k];
	int i = x->dom;
	struct cpuset K, tc, rc;

	x->dep0 = o->ndeps;
	if (i < 0 || !is_pin(a->type))
		return;
	/* the vCPUs of a domain mostly move alike (a whole allotment, an
	 * LLC share): the same pin from the same reach has the same
	 * prerequisites, kept once */
	if (a->type == POLICY_ACT_PIN_VCPU && x->narrow < 0 && x->flat >= 0) {
		int m = o->memo;
		o->memo = k;
		if (m >= 0 && o->it[m].dom == i && policy_set_eq(o->s, &o->acts[m].cpus, &a->cpus) &&
		    policy_set_eq(o->s, o->it[m].from, x->from)) {
			x->dep0 = o->it[m].dep0;
			x->ndeps = o->it[m].ndeps;
			if (o->it[m].held && o->why_item == m) {
				char why[POLICY_REASON];
				snprintf(why, sizeof(why), "%s", o->why);
				hold(o, k, "%s", why);
			}
			return;
		}
	}
	if (x->narrow >= 0 && !dep_add(o, x->narrow))
		return;
	whole(o->s, &a->cpus, &tc);
	if (a->type == POLICY_ACT_PIN_EMULATOR) {
		/* emulator threads on the reserved CPUs share them with the
		 * host and every isolated domain's by design: only the rest of
		 * an emulator pin waits */
		struct cpuset res;
		whole(o->s, &o->in->host.reserved, &res);
		cpuset_andnot(&tc, &tc, &res);
	}
	if (o->isoi[i] >= 0) {
		/* an isolated domain: every core of its pin clear of domains
		 * without isolation, the cores it takes clear of other
		 * isolated domains (an emulator's are all new to it) */
		need(o, k, &tc, WHO_SHARED);
		if (x->flat >= 0) {
			whole(o->s, x->from, &rc);
			cpuset_andnot(&K, &tc, &rc);
			need(o, k, &K, WHO_ISOLATED);
		} else {
			need(o, k, &tc, WHO_ISOLATED);
		}
	} else if (a->type == POLICY_ACT_PIN_VCPU && x->flat >= 0) {
		if (!policy_set_sub(o->s, &a->cpus, x->from)) {
			whole(o->s, x->from, &rc);
			cpuset_andnot(&K, &tc, &rc);
			cpuset_and(&K, &K, &o->iso_touch);
			need(o, k, &K, WHO_ISOLATED);
		}
	} else if (a->type == POLICY_ACT_RELEASE) {
		cpuset_zero(&K);
		for (int v = 0; v < in->domains[i].nvcpus; v++) {
			struct cpuset nk;
			whole(o->s, o->reach[o->base[i] + v], &rc);
			cpuset_andnot(&nk, &tc, &rc);
			cpuset_or(&K, &K, &nk);
		}
		cpuset_and(&K, &K, &o->iso_touch);
		need(o, k, &K, WHO_ISOLATED);
	} else {
		/* an emulator pin: where its threads are is not observed */
		cpuset_and(&K, &tc, &o->iso_touch);
		need(o, k, &K, WHO_ISOLATED);
	}
	x->ndeps = o->ndeps - x->dep0;
}

/* --- the order ------------------------------------------------------------------ */

static bool
deps_placed(const struct order *o, int k)
{
	for (int j = 0; j < o->it[k].ndeps; j++)
		if (o->it[o->deps[o->it[k].dep0 + j]].pos < 0)
			return false;
	return true;
}

/* Positions: NARROW items in plan order, ISOLATE items each after its
 * prerequisites (lowest first), WIDEN items in plan order; an item whose
 * prerequisites do not come first is held. Then an item that waits for a
 * held one is held too. */
static void
order_positions(struct order *o, int *by_pos)
{
	int pos = 0;

	for (int k = 0; k < o->n; k++) {
		struct item *x = &o->it[k];
		bool iso = x->dom >= 0 && o->isoi[x->dom] >= 0;
		x->stage = x->ndeps == 0 ? POLICY_STAGE_NARROW : iso ? POLICY_STAGE_ISOLATE : POLICY_STAGE_WIDEN;
	}
	for (int k = 0; k < o->n; k++)
		if (o->it[k].stage == POLICY_STAGE_NARROW) {
			o->it[k].pos = pos;
			by_pos[pos++] = k;
		}
	for (bool progress = true; progress;) {
		progress = false;
		for (int k = 0; k < o->n && !progress; k++)
			if (o->it[k].stage == POLICY_STAGE_ISOLATE && o->it[k].pos < 0 && deps_placed(o, k)) {
				o->it[k].pos = pos;
				by_pos[pos++] = k;
				progress = true;        /* lowest first again */
			}
		/* a cycle: an isolated vCPU narrowing onto its cores waits for a
		 * vCPU whose move waits for it (a domain confined to the shared
		 * pool until it was placed reaches every core). A narrowing never
		 * adds a shared core: it goes first, and what waited for it
		 * follows */
		for (int k = 0; k < o->n && !progress; k++) {
			struct item *x = &o->it[k];
			if (x->stage != POLICY_STAGE_ISOLATE || x->pos >= 0 || x->flat < 0 ||
			    !policy_set_sub(o->s, &o->acts[k].cpus, x->from))
				continue;
			/* its placed prerequisites only, in a list of its own
			 * (lists are shared) */
			int d0 = o->ndeps, n0 = x->ndeps, s0 = x->dep0;
			for (int j = 0; j < n0; j++)
				if (o->it[o->deps[s0 + j]].pos >= 0 && !dep_add(o, o->deps[s0 + j]))
					break;
			x->dep0 = d0;
			x->ndeps = o->ndeps - d0;
			x->pos = pos;
			by_pos[pos++] = k;
			progress = true;
		}
	}
	for (int stage = POLICY_STAGE_ISOLATE; stage <= POLICY_STAGE_WIDEN; stage++)
		for (int k = 0; k < o->n; k++) {
			struct item *x = &o->it[k];
			if (x->stage != (enum policy_stage)stage || x->pos >= 0)
				continue;
			if (!deps_placed(o, k)) {
				/* a prerequisite comes later: it waits, directly or
				 * not, for this one */
				int d = -1;
				for (int j = 0; j < x->ndeps && d < 0; j++)
					if (o->it[o->deps[x->dep0 + j]].pos < 0)
						d = o->deps[x->dep0 + j];
				const struct policy_action *da = &o->acts[d];
				hold(o, k, "it would wait for the %s of domain '%s' vCPU %d, which waits for it",
				    policy_action_name(da->type), da->domain >= 0 ? o->in->domains[da->domain].name : "?",
				    da->vcpu);
			}
			x->pos = pos;
			by_pos[pos++] = k;
		}
	for (int p = 0; p < o->n; p++) {
		int k = by_pos[p];
		for (int j = 0; j < o->it[k].ndeps && !o->it[k].held; j++) {
			int d = o->deps[o->it[k].dep0 + j];
			if (o->it[d].held) {
				const struct policy_action *da = &o->acts[d];
				hold(o, k, "it waits for the %s of domain '%s' vCPU %d, held back", policy_action_name(da->type),
				    da->domain >= 0 ? o->in->domains[da->domain].name : "?", da->vcpu);
			}
		}
	}
}

/* Write the ordered items back into the plan. */
static int
order_write(struct order *o, struct policy_plan *plan, const int *by_pos)
{
	if (o->n > plan->cap) {
		struct policy_action *v = realloc(plan->actions, sizeof(*v) * (size_t)o->n);
		if (v == NULL)
			return -1;
		plan->actions = v;
		plan->cap = o->n;
	}
	if (o->ndeps > plan->deps_cap) {
		int *d = realloc(plan->deps, sizeof(int) * (size_t)o->ndeps);
		if (d == NULL)
			return -1;
		plan->deps = d;
		plan->deps_cap = o->ndeps;
	}
	plan->ndeps = 0;
	int last_src = -1, last_dst = 0;        /* a list shared by consecutive items */
	for (int p = 0; p < o->n; p++) {
		int k = by_pos[p];
		struct item *x = &o->it[k];
		struct policy_action *a = &plan->actions[p];
		*a = o->acts[k];
		a->stage = x->stage;
		a->held = x->held;
		a->ndeps = x->ndeps;
		if (x->ndeps > 0 && x->dep0 == last_src) {
			a->dep0 = last_dst;
		} else {
			a->dep0 = plan->ndeps;
			last_src = x->dep0;
			last_dst = plan->ndeps;
			for (int j = 0; j < x->ndeps; j++)
				plan->deps[plan->ndeps++] = o->it[o->deps[x->dep0 + j]].pos;
		}
		cpuset_zero(&a->undo);
		if (a->type == POLICY_ACT_PIN_VCPU && x->flat >= 0) {
			struct cpuset safe;
			safe_for(o, x->dom, true, &safe);
			cpuset_and(&a->undo, o->reach[x->flat], &safe);
		}
	}
	plan->n = o->n;
	return 0;
}

void
order_stage(struct policy_state *s, const struct policy_input *in, struct policy_plan *plan)
{
	struct order o = { .s = s, .in = in, .t = s->topo, .memo = -1, .why_item = -1 };
	bool any_iso = false, any_pin = false;
	int *by_pos = NULL;

	for (int i = 0; i < s->ndoms; i++)
		any_iso |= s->doms[i]->state == DOM_PLACED && s->doms[i]->isolated;
	for (int i = 0; i < plan->n; i++)
		any_pin |= is_pin(plan->actions[i].type);
	if (!any_iso || !any_pin) {
		order_trivial(s, in, plan);
		return;
	}
	if (order_alloc(&o, plan) < 0)
		goto nomem;
	order_reach(&o, plan);
	if (order_items(&o, plan) < 0)
		goto nomem;
	for (int k = 0; k < o.n && !o.nomem; k++)
		order_deps(&o, k);
	if (o.nomem || (by_pos = malloc(sizeof(int) * (size_t)(o.n + 1))) == NULL)
		goto nomem;
	order_positions(&o, by_pos);
	if (o.nomem || order_write(&o, plan, by_pos) < 0)
		goto nomem;
	for (int p = 0; p < plan->n; p++)
		if (plan->actions[p].held)
			policy_action_not_applied(s, &plan->actions[p]);        /* planned again */
	free(by_pos);
	order_free(&o);
	return;
nomem:
	free(by_pos);
	order_free(&o);
	hold_all(s, in, plan);
}
