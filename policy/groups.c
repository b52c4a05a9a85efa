// SPDX-License-Identifier: GPL-2.0-or-later
/* groups.c - the vCPU groups of an aggregate domain: those of the
 * annotation (<llc:group>), the whole domain when it fits one LLC, and the
 * hot processes the guest helper reports, and the groups the wakeup rule
 * (wakeups.c) infers. groups_update() is the group-formation stage of a
 * step (docs/design.md, "vCPU groups").
 *
 * Precedence: annotation groups own their vCPUs; guest-reported groups take
 * any other vCPU (an inferred group loses it); inferred groups get what is
 * left. The size and benefit guards (steer.c, benefit.c) apply to all.
 */
#include "policy_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
groups_clear(struct grp *g)
{
	free(g->rt_ns);
	free(g->tot_ns);
	g->rt_ns = g->tot_ns = NULL;
}

void
groups_unfollow(struct policy_state *s, struct grp *g)
{
	if (g->tot_ns == NULL && (g->tot_ns = malloc(sizeof(double) * (size_t)s->ncpu)) == NULL) {
		s->stats.nomem++;
		return;
	}
	memcpy(g->tot_ns, s->cpu_rt_prev, sizeof(double) * (size_t)s->ncpu);
	g->tot_follows = false;
}

static int
grp_init(struct policy_state *s, struct grp *g, const char *name, enum policy_group_rule rule,
         const struct cpuset *vcpus)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->rule = rule;
	g->vcpus = *vcpus;
	g->pref_llc = -1;
	g->best_llc = -1;
	g->rt_ns = calloc((size_t)s->ncpu, sizeof(double));
	g->born_step = s->step;
	if (g->rt_ns == NULL) {
		groups_clear(g);
		return -1;
	}
	g->tot_follows = true;          /* s->cpu_rt's values from now on */
	g->tot_step = s->step;
	return 0;
}

/* A new group; NULL when the domain has POLICY_MAX_GROUPS already or out
 * of memory (counted in stats.nomem). */
static struct grp *
grp_add(struct policy_state *s, struct dom *d, const char *name, enum policy_group_rule rule,
        const struct cpuset *vcpus)
{
	struct grp *v;

	if (d->ngroups >= POLICY_MAX_GROUPS)
		return NULL;
	v = realloc(d->groups, sizeof(*v) * (size_t)(d->ngroups + 1));
	if (v == NULL) {
		s->stats.nomem++;
		return NULL;
	}
	d->groups = v;
	if (grp_init(s, &v[d->ngroups], name, rule, vcpus) < 0) {
		s->stats.nomem++;
		return NULL;
	}
	return &v[d->ngroups++];
}

static void
send_home(struct dom *d, const struct grp *g)
{
	int v;

	POLICY_FOREACH(v, &g->vcpus, (d->nvcpus + 63) / 64)
		if (v < d->nvcpus)
			dom_pin_share(d, &d->want[v], d->home[v]);
}

void
groups_send_home(const struct policy_state *s, struct dom *d, struct grp *g)
{
	/* idle and guarded groups come here every period: when no pin of
	 * the domain was written since their vCPUs were all sent home, they
	 * still are (most of the time), and the vCPUs' arrays are not read */
	if (s->incremental && g->home_ok && g->home_gen == d->pin_gen && g->home_w0 == g->vcpus.w[0])
		return;
	send_home(d, g);
	g->home_ok = d->nvcpus <= 64;
	g->home_gen = d->pin_gen;
	g->home_w0 = g->vcpus.w[0];
}

void
groups_release(struct dom *d, struct grp *g)
{
	send_home(d, g);
	g->pref_llc = -1;
	g->forbid_fails = 0;
	if (g->bstate != BENEFIT_HOLD)
		g->bstate = BENEFIT_IDLE;
}

bool
groups_judged(const struct policy_input *in, const struct dom *d)
{
	return d->annot->tune.benefit_check && (in->host.counters || d->mbm_seen);
}

bool
groups_unjudged_hold(struct policy_state *s, const struct policy_input *in, struct dom *d,
                  struct grp *g, struct policy_plan *plan)
{
	g->unjudged = g->rule == POLICY_GROUP_WAKEUPS && !groups_judged(in, d) && !in->host.act_unjudged;
	if (!g->unjudged)
		return false;
	if (g->pref_llc >= 0) {
		policy_plan_add(s, plan, POLICY_ACT_PREFER, d, -1, NULL,
		    "group '%s': preference for LLC %d dropped: inferred from wakeups, and nothing can judge it "
		    "any more", g->name, g->pref_llc);
		groups_release(d, g);
	}
	snprintf(g->why, sizeof(g->why), "inferred from wakeups, not acted on: %s can judge whether "
	    "gathering it pays (llcd.conf unjudged-groups act acts on it; an <llc:group> in the annotation names it)",
	    d->annot->tune.benefit_check ? "no instruction counters or memory bandwidth monitoring on this host" :
	    "the benefit check is off (benefit-check='off'), so nothing");
	return true;
}

/* Remove group i (its vCPUs back to their placement). */
static void
grp_remove(struct dom *d, int i)
{
	struct grp *g = &d->groups[i];

	groups_release(d, g);
	groups_clear(g);
	memmove(g, g + 1, sizeof(*g) * (size_t)(d->ngroups - i - 1));
	d->ngroups--;
}

void
groups_init(struct policy_state *s, struct dom *d)
{
	if (d->annot->mode != POLICY_MODE_AGGREGATE)
		return;
	for (int i = 0; i < d->annot->ngroups; i++)
		grp_add(s, d, d->annot->groups[i].name, POLICY_GROUP_ANNOTATION, &d->annot->groups[i].vcpus);
	if (d->annot->ngroups == 0) {
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

/* The untrusted process name with anything but [A-Za-z0-9._-] as '_'. */
static void
sanitise_name(const struct policy_hot_report *rep, char *name, size_t len)
{
	size_t j;

	for (j = 0; j + 1 < len && j < sizeof(rep->name) && rep->name[j]; j++) {
		char c = rep->name[j];
		name[j] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		          c == '-' || c == '_' || c == '.' ? c : '_';
	}
	name[j] = '\0';
}

static struct grp *
guest_group_find(struct dom *d, int pid, const char *name)
{
	struct grp *g = NULL;

	for (int i = 0; i < d->ngroups; i++)
		if (d->groups[i].rule == POLICY_GROUP_GUEST && d->groups[i].pid == pid &&
		    strcmp(d->groups[i].name, name) == 0)
			g = &d->groups[i];
	return g;
}

/* One report: a new guest group, or the reported group's vCPUs updated.
 * vCPUs in taken (other groups, earlier reports) are not the report's to
 * claim; the ones it claims are added to taken. */
static void
apply_report(struct policy_state *s, struct dom *d, const struct policy_hot_report *rep,
             const struct cpuset *all, struct cpuset *taken, bool *changed)
{
	char name[POLICY_GROUP_NAME];
	struct cpuset vc;
	struct grp *g;

	sanitise_name(rep, name, sizeof(name));
	cpuset_and(&vc, &rep->vcpus, all);
	cpuset_andnot(&vc, &vc, taken);
	g = guest_group_find(d, rep->pid, name);
	if (cpuset_count_upto(&vc, 2) < 2 && g == NULL)
		return;
	if (g == NULL) {
		*changed = true;        /* (a group made, or one that could not be) */
		g = grp_add(s, d, name, POLICY_GROUP_GUEST, &vc);
		if (g == NULL)
			return;
		g->pid = rep->pid;
	} else if (!cpuset_equal(&g->vcpus, &vc)) {
		/* vCPUs that left the group go back to their placement */
		struct cpuset gone;
		int v;
		cpuset_andnot(&gone, &g->vcpus, &vc);
		CPUSET_FOREACH(v, &gone)
			dom_pin_share(d, &d->want[v], d->home[v]);
		g->vcpus = vc;
		*changed = true;
	}
	g->last_report_step = s->step;
	cpuset_or(taken, taken, &vc);
}

/* Dissolve guest groups not reported for affinity-timeout epochs; a silent
 * group keeps only vCPUs no fresh report claimed (those in taken). */
static void
dissolve_silent(struct policy_state *s, struct dom *d, const struct cpuset *taken,
                double epochs_per_period)
{
	for (int i = 0; i < d->ngroups; i++) {
		struct grp *g = &d->groups[i];
		if (g->rule != POLICY_GROUP_GUEST)
			continue;
		if (g->last_report_step != s->step)
			cpuset_andnot(&g->vcpus, &g->vcpus, taken);
		double silent = (double)(s->step - g->last_report_step) * epochs_per_period;
		if (silent <= d->annot->tune.affinity_timeout && !cpuset_empty(&g->vcpus))
			continue;
		grp_remove(d, i--);
	}
}

/* The vCPUs of every group with one of the rules in mask (1 << rule). */
static void
rule_vcpus(const struct dom *d, unsigned mask, struct cpuset *out)
{
	cpuset_zero(out);
	for (int i = 0; i < d->ngroups; i++)
		if (mask & (1u << d->groups[i].rule))
			cpuset_or(out, out, &d->groups[i].vcpus);
}

/* The domain's vCPUs as a set. */
static void
all_vcpus(const struct dom *d, struct cpuset *all)
{
	cpuset_zero(all);
	cpuset_set_range(all, 0, d->nvcpus - 1);
}

/* The last step's update changed nothing, and nothing it reads changed
 * since: the same reports (policy_dom_reports_same()), the same annotation
 * groups' vCPUs (taken), its guest groups (only this update makes them;
 * as many as then: none dropped since), each reported then, the same
 * affinity-timeout and epochs per period. The same update then changes
 * nothing again but each guest group's report step (every one is
 * reported again, so none is silent). */
static bool
guest_groups_again(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
                   const struct cpuset *taken, int nguest, double epochs_per_period)
{
	/* (compared every time: the chain of steps it needs) */
	bool same = policy_dom_reports_same(s, d, di);

	if (!s->incremental || !same || !d->gg_noop || d->gg_step + 1 != s->step ||
	    nguest != d->gg_nguest || d->annot->tune.affinity_timeout != d->gg_timeout ||
	    epochs_per_period != d->gg_epochs || !cpuset_equal(taken, &d->gg_taken))
		return false;
	for (int i = 0; i < d->ngroups; i++)
		if (d->groups[i].rule == POLICY_GROUP_GUEST && d->groups[i].last_report_step + 1 != s->step)
			return false;
	for (int i = 0; i < d->ngroups; i++)
		if (d->groups[i].rule == POLICY_GROUP_GUEST)
			d->groups[i].last_report_step = s->step;
	d->gg_step = s->step;
	return true;
}

static void
guest_groups_update(struct policy_state *s, struct dom *d, const struct policy_domain_in *di,
                    double epochs_per_period)
{
	struct cpuset taken, taken0, all;
	int nguest = 0, ngroups = d->ngroups;
	bool changed = false;

	for (int i = 0; i < d->ngroups; i++)
		nguest += d->groups[i].rule == POLICY_GROUP_GUEST;
	if (di->nreports == 0 && nguest == 0)
		return;
	/* reports win over inferred groups: only annotation groups are taken */
	rule_vcpus(d, 1u << POLICY_GROUP_ANNOTATION, &taken);
	if (guest_groups_again(s, d, di, &taken, nguest, epochs_per_period))
		return;
	taken0 = taken;
	all_vcpus(d, &all);
	for (int r = 0; r < di->nreports; r++)
		apply_report(s, d, &di->reports[r], &all, &taken, &changed);
	dissolve_silent(s, d, &taken, epochs_per_period);
	/* what the next step's guest_groups_again() compares */
	nguest = 0;
	for (int i = 0; i < d->ngroups; i++) {
		const struct grp *g = &d->groups[i];
		if (g->rule != POLICY_GROUP_GUEST)
			continue;
		nguest++;
		changed |= g->last_report_step != s->step;
	}
	d->gg_noop = s->incremental && !changed && d->ngroups == ngroups;
	d->gg_step = s->step;
	d->gg_nguest = nguest;
	d->gg_timeout = d->annot->tune.affinity_timeout;
	d->gg_epochs = epochs_per_period;
	d->gg_taken = taken0;
}

/* Match the rule's components with the domain's wakeups groups: a group
 * keeps its name while it overlaps a component (the largest overlap wins),
 * takes the component's vCPUs that annotation and guest groups leave, and
 * is dropped when no component (or fewer than two free vCPUs) is left. */
static void
wakeup_groups_update(struct policy_state *s, struct dom *d)
{
	struct cpuset comp[POLICY_MAX_GROUPS], taken, all;
	bool used[POLICY_MAX_GROUPS] = { false };
	int nc = 0;

	if (d->annot->infer == POLICY_INFER_WAKEUPS && d->wk != NULL)
		nc = wakeups_groups(d->wk, comp, POLICY_MAX_GROUPS);
	if (nc == 0) {
		/* no component: nothing to add, and only wakeups groups to
		 * drop (most domains, every period: no sets to build) */
		for (int i = 0; i < d->ngroups; i++)
			if (d->groups[i].rule == POLICY_GROUP_WAKEUPS)
				grp_remove(d, i--);
		return;
	}
	all_vcpus(d, &all);
	rule_vcpus(d, 1u << POLICY_GROUP_ANNOTATION | 1u << POLICY_GROUP_GUEST, &taken);
	for (int c = 0; c < nc; c++) {
		cpuset_and(&comp[c], &comp[c], &all);
		cpuset_andnot(&comp[c], &comp[c], &taken);
	}
	for (int i = 0; i < d->ngroups; i++) {
		struct grp *g = &d->groups[i];
		int best = -1, bestn = 0;
		if (g->rule != POLICY_GROUP_WAKEUPS)
			continue;
		for (int c = 0; c < nc; c++) {
			struct cpuset x;
			cpuset_and(&x, &comp[c], &g->vcpus);
			int n = cpuset_count(&x);
			if (!used[c] && n > bestn && cpuset_count(&comp[c]) >= 2) {
				best = c;
				bestn = n;
			}
		}
		if (best < 0) {
			grp_remove(d, i--);
			continue;
		}
		used[best] = true;
		struct cpuset gone;
		int v;
		cpuset_andnot(&gone, &g->vcpus, &comp[best]);
		CPUSET_FOREACH(v, &gone)
			dom_pin_share(d, &d->want[v], d->home[v]);
		g->vcpus = comp[best];
	}
	for (int c = 0; c < nc; c++) {
		char name[POLICY_GROUP_NAME];
		if (used[c] || cpuset_count(&comp[c]) < 2)
			continue;
		snprintf(name, sizeof(name), "wakeups-%d", cpuset_first(&comp[c]));
		grp_add(s, d, name, POLICY_GROUP_WAKEUPS, &comp[c]);
	}
}

void
groups_update(struct policy_state *s, const struct policy_input *in, struct dom *d,
              const struct policy_domain_in *di, double epochs_per_period)
{
	/* the wakeup history is kept whether or not it may form groups, so
	 * that llcctl wakeups shows it */
	if (di->wakeups != NULL && d->wk == NULL) {
		d->wk = wakeups_state_new();
		if (d->wk == NULL)
			s->stats.nomem++;
	}
	if (d->wk != NULL && wakeups_update(d->wk, d->nvcpus, di->wakeups, in->period_ns,
	                                    in->now_ns) < 0)
		s->stats.nomem++;
	if (d->ngroups > 0 && d->groups[0].rule == POLICY_GROUP_DOMAIN)
		return;         /* the whole domain is one group already */
	guest_groups_update(s, d, di, epochs_per_period);
	wakeup_groups_update(s, d);
}
