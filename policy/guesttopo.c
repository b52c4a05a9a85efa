// SPDX-License-Identifier: GPL-2.0-or-later
/* guesttopo.c - the guest CPU definition that mirrors the host LLCs under a
 * domain's vCPUs, and the check of a running guest against its pins. */
#include "guesttopo.h"
#include "alloc.h"
#include "names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- small helpers -------------------------------------------------------- */

static void
rec_reset(struct guesttopo_rec *r)
{
	free(r->dies);
	free(r->cells);
	free(r->pins);
	memset(r, 0, sizeof(*r));
}

LLCD_DEFINE_NEW(guesttopo_rec_new, struct guesttopo_rec)

void
guesttopo_rec_free(struct guesttopo_rec *r)
{
	if (r == NULL)
		return;
	rec_reset(r);
	free(r);
}

static void reason(struct guesttopo_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
reason(struct guesttopo_rec *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nreasons >= GUESTTOPO_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(r->reasons[r->nreasons++], GUESTTOPO_REASON, fmt, ap);
	va_end(ap);
}

/* "a" or "a-b" for a vCPU range. */
static const char *
fmt_range(char *buf, size_t len, int first, int n)
{
	if (n <= 1)
		snprintf(buf, len, "%d", first);
	else
		snprintf(buf, len, "%d-%d", first, first + n - 1);
	return buf;
}

/* Append to buf at *off, keeping it terminated; sets *trunc on overflow. */
static void append(char *buf, size_t len, size_t *off, bool *trunc, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
append(char *buf, size_t len, size_t *off, bool *trunc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len) {
		*trunc = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off) {
		*off = len;
		*trunc = true;
		return;
	}
	*off += (size_t)n;
}

static int
gcd(int a, int b)
{
	while (b) {
		int r = a % b;
		a = b;
		b = r;
	}
	return a;
}

static int
pkg_of(const struct topo *t, int cpu)
{
	int p = t->pu_pkg[cpu];
	return p < 0 ? 0 : p;
}

/* Host NUMA node (OS index) a vCPU on this PU follows: the node holding
 * most of its LLC, so that a guest die never straddles two guest cells
 * (Intel SNC puts one LLC over two nodes); -1 without NUMA information. */
static int
node_of(const struct topo *t, int cpu)
{
	int l = t->pu_llc[cpu];
	int k = l >= 0 ? t->llc_numa[l] : -1;
	return k < 0 ? -1 : topo_get(t, TOPO_NUMA, k)->os_index;
}

/* --- the computation ------------------------------------------------------ */

struct run {
	int first, len, llc;
};

/* threads: the host SMT width when every group of smt consecutive vCPUs
 * sits on distinct PUs of one host core; else 1, with the reason. */
static int
pick_threads(const struct topo *t, const struct guesttopo_alloc *a, struct guesttopo_rec *r)
{
	int smt = t->smt, n = a->nvcpus;

	if (smt <= 1) {
		reason(r, "threads=1: the host has no SMT");
		return 1;
	}
	if (n % smt) {
		reason(r, "threads=1: %d vCPUs is not a multiple of the host SMT width %d", n, smt);
		return 1;
	}
	for (int g = 0; g < n; g += smt) {
		int core = t->pu_core[a->slots[g]];
		for (int i = 1; i < smt; i++) {
			int v = g + i, pu = a->slots[v];
			if (t->pu_core[pu] != core) {
				reason(r, "threads=1: vCPUs %d and %d are not on sibling PUs of one host core "
				    "(PU %d on core %d, PU %d on core %d)", g, v, a->slots[g], core, pu,
				    t->pu_core[pu]);
				return 1;
			}
			for (int j = 0; j < i; j++)
				if (a->slots[g + j] == pu) {
					reason(r, "threads=1: vCPUs %d and %d share host PU %d (overcommit), "
					    "not a pair of sibling PUs", g + j, v, pu);
					return 1;
				}
		}
	}
	char b[64];
	struct cpuset c0;
	cpuset_zero(&c0);
	for (int i = 0; i < smt; i++)
		cpuset_set(&c0, a->slots[i]);
	reason(r, "threads=%d: every %d consecutive vCPUs sit on the %d sibling PUs of one host core "
	    "(vCPUs 0-%d on PUs %s of core %d)", smt, smt, smt, smt - 1, cpuset_str(&c0, b, sizeof(b)),
	    t->pu_core[a->slots[0]]);
	return smt;
}

/* Smallest guest socket count >= the host packages used that divides the
 * dies and keeps every guest socket inside one host package. */
static int
pick_sockets(const struct topo *t, const struct guesttopo_alloc *a, int ndies, int per_die,
             struct guesttopo_rec *r)
{
	int n = a->nvcpus, npkg = 0, s;
	int *seen = calloc((size_t)topo_count(t, TOPO_PACKAGE) + 1, sizeof(int));
	int *cnt = calloc((size_t)topo_count(t, TOPO_PACKAGE) + 1, sizeof(int));

	if (seen == NULL || cnt == NULL) {
		free(seen);
		free(cnt);
		return -1;
	}
	for (int v = 0; v < n; v += per_die) {
		int p = pkg_of(t, a->slots[v]);
		if (!seen[p]++)
			npkg++;
		cnt[p]++;
	}
	for (s = npkg; s < ndies; s++) {
		if (ndies % s)
			continue;
		int per = n / s;
		bool ok = true;
		for (int v = 0; v < n && ok; v++)
			ok = pkg_of(t, a->slots[v]) == pkg_of(t, a->slots[v / per * per]);
		if (ok)
			break;
	}
	if (s > ndies)
		s = ndies;
	if (npkg == 1) {
		reason(r, "sockets=1: every vCPU is on host package %d", pkg_of(t, a->slots[0]));
	} else if (s == npkg) {
		reason(r, "sockets=%d: one guest socket per host package used (%d die%s each)", s, ndies / s,
		    ndies / s == 1 ? "" : "s");
	} else {
		char b[128];
		size_t off = 0;
		bool tr = false;
		b[0] = '\0';
		for (int p = 0; p < topo_count(t, TOPO_PACKAGE); p++)
			if (cnt[p])
				append(b, sizeof(b), &off, &tr, "%s%d", off ? "+" : "", cnt[p]);
		reason(r, "sockets=%d: the vCPUs span %d host packages unevenly (%s guest dies); %d guest "
		    "sockets of %d die%s keep every guest socket inside one host package", s, npkg, b, s,
		    ndies / s, ndies / s == 1 ? "" : "s");
	}
	free(seen);
	free(cnt);
	return s;
}

int
guesttopo_compute(const struct topo *t, const struct guesttopo_alloc *a,
                  struct guesttopo_rec *rec, struct llcd_err *err)
{
	struct run *runs = NULL;
	int n, nruns = 0, threads, die, ndies, sockets, rc = -1;
	char b1[256], b2[256];

	if (rec == NULL)
		return llcd_err_set(err, "guesttopo: no recommendation to fill");
	rec_reset(rec);
	if (t == NULL || a == NULL || a->slots == NULL)
		return llcd_err_set(err, "guesttopo: no topology or allocation");
	n = a->nvcpus;
	if (n < 1 || n > CPUSET_MAX)
		return llcd_err_set(err, "guesttopo: %d vCPUs (allowed 1-%d)", n, CPUSET_MAX);
	for (int v = 0; v < n; v++) {
		int pu = a->slots[v];
		if (pu < 0 || pu > t->max_cpu || t->pu_llc[pu] < 0)
			return llcd_err_set(err, "guesttopo: vCPU %d: slot %d is not a PU of the host (%s)",
			    v, pu, cpuset_str(&t->all, b1, sizeof(b1)));
		if (a->pins && (cpuset_empty(&a->pins[v]) || !cpuset_subset(&a->pins[v], &t->all)))
			return llcd_err_set(err, "guesttopo: vCPU %d: pin [%s] is empty or not within the "
			    "host's PUs", v, cpuset_str(&a->pins[v], b1, sizeof(b1)));
	}
	rec->nvcpus = n;
	rec->cache_mode = "emulate";
	runs = calloc((size_t)n, sizeof(*runs));
	rec->dies = calloc((size_t)n, sizeof(*rec->dies));
	rec->cells = calloc((size_t)topo_count(t, TOPO_NUMA) + 1, sizeof(*rec->cells));
	rec->pins = calloc((size_t)n, sizeof(*rec->pins));
	if (!runs || !rec->dies || !rec->cells || !rec->pins) {
		llcd_err_set(err, "guesttopo: out of memory");
		goto out;
	}

	/* Runs of consecutive vCPUs on one host LLC: the engine fills guest
	 * dies into LLCs in order, so each run is one LLC's share. */
	for (int v = 0; v < n; v++) {
		int l = t->pu_llc[a->slots[v]];
		if (nruns == 0 || runs[nruns - 1].llc != l)
			runs[nruns++] = (struct run){ v, 0, l };
		runs[nruns - 1].len++;
	}
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < i; j++)
			if (runs[j].llc == runs[i].llc) {
				reason(rec, "host LLC %d holds two separate vCPU ranges (%s and %s): the guest "
				    "sees them as two L3 domains", runs[i].llc,
				    fmt_range(b1, sizeof(b1), runs[j].first, runs[j].len),
				    fmt_range(b2, sizeof(b2), runs[i].first, runs[i].len));
				break;
			}

	threads = pick_threads(t, a, rec);
	die = 0;
	bool even = true;
	for (int i = 0; i < nruns; i++) {
		die = gcd(die, runs[i].len);
		if (runs[i].len != runs[0].len)
			even = false;
	}
	if (die % threads) {
		/* cannot happen: sibling groups never straddle two LLCs */
		reason(rec, "threads=1: an LLC share of %d vCPUs is not whole SMT groups", die);
		threads = 1;
	}
	ndies = n / die;
	{
		size_t o1 = 0, o2 = 0;
		bool tr = false;
		b1[0] = b2[0] = '\0';
		for (int i = 0; i < nruns; i++) {
			append(b1, sizeof(b1), &o1, &tr, "%s%d", i ? "+" : "", runs[i].len);
			append(b2, sizeof(b2), &o2, &tr, "%s%d", i ? "," : "", runs[i].llc);
		}
	}
	if (even)
		reason(rec, "dies: %d guest die%s of %d vCPUs, each exactly one host LLC's share "
		    "(host LLC%s %s)", ndies, ndies == 1 ? "" : "s", die, nruns == 1 ? "" : "s", b2);
	else
		reason(rec, "dies: the allocation is uneven across host LLCs (%s vCPUs on LLCs %s): "
		    "guest dies of %d vCPUs, the largest size that divides every LLC's share, so that "
		    "no guest die spans two host LLCs; %d dies, so some host LLCs hold several guest dies",
		    b1, b2, die, ndies);
	sockets = pick_sockets(t, a, ndies, die, rec);
	if (sockets < 0) {
		llcd_err_set(err, "guesttopo: out of memory");
		goto out;
	}
	rec->topo = (struct policy_guest_topo){ sockets, ndies / sockets, 1, die / threads, threads };
	rec->ndies = ndies;
	for (int i = 0; i < ndies; i++) {
		int first = i * die;
		rec->dies[i] = (struct guesttopo_die){ first, die, t->pu_llc[a->slots[first]],
		                                       pkg_of(t, a->slots[first]) };
	}
	reason(rec, "cache: <cache level='3' mode='emulate'/>: QEMU describes one L3 per guest die "
	    "(CPUID leaf 4, and 0x8000001D with topoext), so the guest's L3 domains are the host "
	    "LLCs under it; passthrough would copy the host's sharing counts, which describe a whole "
	    "host LLC, not this domain's share of it");

	/* NUMA cells follow the host nodes of the LLCs, in vCPU order. */
	int nnodes = 0;
	bool snc = false;
	for (int v = 0; v < n; v++) {
		int node = node_of(t, a->slots[v]), c;
		int pn = t->pu_numa[a->slots[v]];
		if (pn >= 0 && topo_get(t, TOPO_NUMA, pn)->os_index != node)
			snc = true;
		if (node < 0)
			continue;
		for (c = 0; c < nnodes && rec->cells[c].host_node != node; c++)
			;
		if (c == nnodes) {
			rec->cells[nnodes++].host_node = node;
			cpuset_set(&rec->nodeset, node);
		}
		cpuset_set(&rec->cells[c].vcpus, v);
		rec->cells[c].nvcpus++;
	}
	if (nnodes == 0) {
		reason(rec, "numa: the host topology has no NUMA information: no guest cells, no numatune");
	} else if (nnodes == 1) {
		reason(rec, "numa: every vCPU is on host NUMA node %d: no guest NUMA cells; memory bound "
		    "to node %d", rec->cells[0].host_node, rec->cells[0].host_node);
	} else {
		size_t off = 0;
		bool tr = false;
		b1[0] = '\0';
		for (int c = 0; c < nnodes; c++)
			append(b1, sizeof(b1), &off, &tr, "%s%d (%d vCPUs)", c ? ", " : "",
			    rec->cells[c].host_node, rec->cells[c].nvcpus);
		reason(rec, "numa: the vCPUs sit on host NUMA nodes %s: %d guest cells, memory split in "
		    "proportion to vCPUs, each cell's memory bound to its host node", b1, nnodes);
		rec->ncells = nnodes;
	}
	if (snc)
		reason(rec, "numa: a host LLC spans NUMA nodes (sub-NUMA clustering); its guest die "
		    "follows the node holding most of the LLC");

	cpuset_zero(&rec->emulator);
	for (int v = 0; v < n; v++) {
		if (a->pins)
			rec->pins[v] = a->pins[v];
		else {
			cpuset_zero(&rec->pins[v]);
			cpuset_set(&rec->pins[v], a->slots[v]);
		}
		cpuset_or(&rec->emulator, &rec->emulator, &rec->pins[v]);
	}
	if (a->emulator && !cpuset_empty(a->emulator))
		rec->emulator = *a->emulator;
	rc = 0;
out:
	free(runs);
	if (rc < 0)
		rec_reset(rec);
	return rc;
}

int
guesttopo_cell_memory(const struct guesttopo_rec *rec, uint64_t total_kib, uint64_t *out,
                      struct llcd_err *err)
{
	uint64_t mib = total_kib / 1024, used = 0;

	if (rec->ncells == 0)
		return 0;
	if (mib < (uint64_t)rec->ncells)
		return llcd_err_set(err, "guesttopo: %llu KiB of memory cannot give %d NUMA cells 1 MiB each",
		    (unsigned long long)total_kib, rec->ncells);
	for (int c = 0; c < rec->ncells; c++) {
		uint64_t m;
		if (c == rec->ncells - 1)
			m = mib - used;
		else {
			m = mib * (uint64_t)rec->cells[c].nvcpus / (uint64_t)rec->nvcpus;
			if (m == 0)
				m = 1;
		}
		used += m;
		out[c] = m * 1024;
	}
	out[rec->ncells - 1] += total_kib % 1024;
	return 0;
}

int
guesttopo_format(const struct topo *t, const struct guesttopo_rec *rec, char *buf, size_t len)
{
	size_t off = 0;
	bool tr = false;
	char b[512];

	if (len == 0)
		return -1;
	buf[0] = '\0';
	append(buf, len, &off, &tr, "topology: sockets=%d dies=%d cores=%d threads=%d (%d vCPUs)\n",
	    rec->topo.sockets, rec->topo.dies, rec->topo.cores, rec->topo.threads, rec->nvcpus);
	append(buf, len, &off, &tr, "cache:    level 3 mode %s\n", rec->cache_mode);
	for (int i = 0; i < rec->ndies; i++) {
		const struct guesttopo_die *d = &rec->dies[i];
		struct cpuset pus;
		cpuset_zero(&pus);
		for (int v = d->first_vcpu; v < d->first_vcpu + d->nvcpus; v++)
			cpuset_or(&pus, &pus, &rec->pins[v]);
		append(buf, len, &off, &tr, "die %-3d  socket %d, vCPUs %s -> host LLC %d (package %d), "
		    "pins [%s]\n", i, i / rec->topo.dies,
		    fmt_range(b, sizeof(b), d->first_vcpu, d->nvcpus), d->host_llc, d->host_pkg,
		    cpuset_str(&pus, b + 64, sizeof(b) - 64));
	}
	if (rec->ncells == 0)
		append(buf, len, &off, &tr, "numa:     no guest cells\n");
	for (int c = 0; c < rec->ncells; c++)
		append(buf, len, &off, &tr, "cell %-3d vCPUs %s -> host node %d\n", c,
		    cpuset_str(&rec->cells[c].vcpus, b, sizeof(b)), rec->cells[c].host_node);
	append(buf, len, &off, &tr, "emulatorpin: %s\n", cpuset_str(&rec->emulator, b, sizeof(b)));
	if (!cpuset_empty(&rec->nodeset))
		append(buf, len, &off, &tr, "numatune: nodeset %s\n", cpuset_str(&rec->nodeset, b, sizeof(b)));
	append(buf, len, &off, &tr, "why:\n");
	for (int i = 0; i < rec->nreasons; i++)
		append(buf, len, &off, &tr, "  - %s\n", rec->reasons[i]);
	(void)t;
	return tr ? -1 : 0;
}

/* --- dry placement -------------------------------------------------------- */

int
guesttopo_dry_place(const struct policy_host *host, const struct policy_domain_in *dom,
                    const struct policy_domain_in *others, int nothers,
                    int *slots, struct cpuset *pins, struct cpuset *emulator,
                    struct llcd_err *err)
{
	struct policy_state *st = NULL;
	struct policy_plan *plan = NULL;
	struct policy_domain_in *doms = NULL;
	struct policy_vcpu_sample *samples = NULL;
	struct policy_input in;
	int rc = -1, idx = nothers;

	if (host == NULL || host->topo == NULL || dom == NULL || slots == NULL ||
	    (nothers > 0 && others == NULL) || nothers < 0)
		return llcd_err_set(err, "guesttopo: dry placement needs a host and a domain");
	if (dom->nvcpus < 1 || dom->nvcpus > CPUSET_MAX)
		return llcd_err_set(err, "guesttopo: domain '%s' has %d vCPUs (allowed 1-%d)", dom->name,
		    dom->nvcpus, CPUSET_MAX);
	for (int i = 0; i < nothers; i++)
		if (others[i].key == dom->key)
			return llcd_err_set(err, "guesttopo: domain '%s' is also listed among the others",
			    dom->name);
	st = policy_state_new();
	plan = policy_plan_new();
	doms = calloc((size_t)nothers + 1, sizeof(*doms));
	samples = calloc((size_t)dom->nvcpus, sizeof(*samples));
	if (!st || !plan || !doms || !samples) {
		llcd_err_set(err, "guesttopo: out of memory");
		goto out;
	}
	if (nothers > 0)
		memcpy(doms, others, sizeof(*doms) * (size_t)nothers);
	doms[idx] = *dom;
	/* no pins: the engine places it afresh, as it would at first sight */
	for (int v = 0; v < dom->nvcpus; v++) {
		samples[v].last_cpu = -1;
		samples[v].pinned = NULL;
	}
	doms[idx].vcpus = samples;
	doms[idx].nreports = 0;
	doms[idx].reports = NULL;
	if (!dom->annotated || dom->annot.mode == POLICY_MODE_NONE) {
		if (!dom->annotated)
			policy_annotation_defaults(&doms[idx].annot);
		doms[idx].annotated = true;
		doms[idx].annot.mode = POLICY_MODE_AGGREGATE;
	}
	/* the recommendation is for a guest shaped like its LLCs: place it
	 * with topology="match" (pins per guest die) and, where the vCPU count
	 * allows, as SMT pairs, so that vCPU 2k, 2k+1 land on sibling PUs */
	doms[idx].annot.topology = POLICY_TOPO_MATCH;
	int smt = host->topo->smt;
	if (smt > 1 && dom->nvcpus % smt == 0)
		doms[idx].guest = (struct policy_guest_topo){ 1, 1, 1, dom->nvcpus / smt, smt };
	in.host = *host;
	in.ndomains = nothers + 1;
	in.domains = doms;
	in.cpu_busy_ns = NULL;
	in.now_ns = 0;
	in.period_ns = 1000000000ull;
	if (policy_step(st, &in, plan, err) < 0) {
		llcd_err_prefix(err, "guesttopo: dry placement");
		goto out;
	}
	for (int i = 0; i < plan->n; i++) {
		const struct policy_action *a = &plan->actions[i];
		if (a->key == dom->key && a->type == POLICY_ACT_REFUSE) {
			llcd_err_set(err, "guesttopo: llcd cannot place '%s' on this host: %s", dom->name,
			    a->reason);
			goto out;
		}
	}
	if (policy_domain_slots(st, dom->key, slots, pins, dom->nvcpus) != dom->nvcpus) {
		llcd_err_set(err, "guesttopo: the engine did not place '%s'", dom->name);
		goto out;
	}
	if (emulator) {
		cpuset_zero(emulator);
		for (int i = 0; i < plan->n; i++)
			if (plan->actions[i].key == dom->key &&
			    plan->actions[i].type == POLICY_ACT_PIN_EMULATOR)
				*emulator = plan->actions[i].cpus;
		if (cpuset_empty(emulator))
			for (int v = 0; v < dom->nvcpus; v++)
				cpuset_set(emulator, slots[v]);
	}
	rc = 0;
out:
	free(samples);
	free(doms);
	policy_plan_free(plan);
	policy_state_free(st);
	return rc;
}

/* --- check ---------------------------------------------------------------- */

LLCD_DEFINE_NEW(guesttopo_check_new, struct guesttopo_check)

void
guesttopo_check_free(struct guesttopo_check *c)
{
	if (c == NULL)
		return;
	free(c->issues);
	free(c);
}

LLCD_NAME_FUNCTION(guesttopo_issue_name, enum guesttopo_issue_kind, GUESTTOPO_BAD_TOPOLOGY,
    [GUESTTOPO_DIE_SPLIT] = "die-split", [GUESTTOPO_SMT_SPLIT] = "smt-split",
    [GUESTTOPO_SMT_LOOSE] = "smt-loose", [GUESTTOPO_BAD_TOPOLOGY] = "bad-topology")

static int issue(struct guesttopo_check *c, int max, enum guesttopo_issue_kind k, int first,
                 int n, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int
issue(struct guesttopo_check *c, int max, enum guesttopo_issue_kind k, int first, int n,
      const char *fmt, ...)
{
	va_list ap;
	struct guesttopo_issue *is;

	c->total++;
	if (c->n >= max)
		return 0;
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 16;
		void *p = realloc(c->issues, sizeof(*c->issues) * (size_t)cap);
		if (p == NULL)
			return -1;
		c->issues = p;
		c->cap = cap;
	}
	is = &c->issues[c->n++];
	is->kind = k;
	is->first_vcpu = first;
	is->nvcpus = n;
	va_start(ap, fmt);
	vsnprintf(is->msg, sizeof(is->msg), fmt, ap);
	va_end(ap);
	return 0;
}

/* Host cores (logical indexes) reachable from a pin. */
static void
cores_of(const struct topo *t, const struct cpuset *pin, struct cpuset *cores)
{
	int cpu;

	cpuset_zero(cores);
	CPUSET_FOREACH(cpu, pin)
		if (cpu <= t->max_cpu && t->pu_core[cpu] >= 0)
			cpuset_set(cores, t->pu_core[cpu]);
}

int
guesttopo_check(const struct topo *t, const struct policy_guest_topo *g, int nvcpus,
                const struct cpuset *pins, int max_issues, struct guesttopo_check *out,
                struct llcd_err *err)
{
	char b1[256], b2[256], b3[256];
	long per_die, ndies;
	int loose = 0, groups = 0, ex_first = -1, cpu;
	struct cpuset ex_pin;

	if (t == NULL || g == NULL || pins == NULL || out == NULL)
		return llcd_err_set(err, "guesttopo: check needs a topology, a guest topology and pins");
	if (nvcpus < 1 || nvcpus > CPUSET_MAX)
		return llcd_err_set(err, "guesttopo: %d vCPUs (allowed 1-%d)", nvcpus, CPUSET_MAX);
	if (max_issues <= 0)
		max_issues = 256;
	out->n = 0;
	out->total = 0;
	out->notes = 0;
	per_die = (long)g->clusters * g->cores * g->threads;
	ndies = (long)g->sockets * g->dies;
	if (g->sockets < 1 || g->dies < 1 || g->clusters < 1 || g->cores < 1 || g->threads < 1 ||
	    per_die * ndies != nvcpus) {
		if (issue(out, max_issues, GUESTTOPO_BAD_TOPOLOGY, 0, nvcpus,
		    "guest topology sockets=%d dies=%d clusters=%d cores=%d threads=%d does not describe "
		    "the domain's %d vCPUs", g->sockets, g->dies, g->clusters, g->cores, g->threads,
		    nvcpus) < 0)
			goto oom;
		return out->total;
	}
	cpuset_zero(&ex_pin);
	for (long d = 0; d < ndies; d++) {
		int first = (int)(d * per_die);
		struct cpuset llcs, pus;
		cpuset_zero(&llcs);
		cpuset_zero(&pus);
		for (int v = first; v < first + per_die; v++) {
			cpuset_or(&pus, &pus, &pins[v]);
			CPUSET_FOREACH(cpu, &pins[v])
				if (cpu <= t->max_cpu && t->pu_llc[cpu] >= 0)
					cpuset_set(&llcs, t->pu_llc[cpu]);
		}
		if (cpuset_count(&llcs) > 1 &&
		    issue(out, max_issues, GUESTTOPO_DIE_SPLIT, first, (int)per_die,
		    "guest die %ld (socket %ld, vCPUs %s) is pinned across %d host LLCs (%s, PUs %s): "
		    "the guest believes these vCPUs share one L3",
		    d, d / g->dies, fmt_range(b1, sizeof(b1), first, (int)per_die), cpuset_count(&llcs),
		    cpuset_str(&llcs, b2, sizeof(b2)), cpuset_str(&pus, b3, sizeof(b3))) < 0)
			goto oom;
	}
	if (g->threads > 1) {
		for (int first = 0; first < nvcpus; first += g->threads) {
			struct cpuset all, one;
			bool known = true, single = true;
			cpuset_zero(&all);
			for (int v = first; v < first + g->threads; v++) {
				if (cpuset_empty(&pins[v]))
					known = false;
				cores_of(t, &pins[v], &one);
				if (cpuset_count(&one) != 1)
					single = false;
				cpuset_or(&all, &all, &one);
			}
			if (!known || cpuset_count(&all) <= 1)
				continue;
			groups++;
			if (single) {
				size_t off = 0;
				bool tr = false;
				b2[0] = '\0';
				for (int v = first; v < first + g->threads; v++)
					append(b2, sizeof(b2), &off, &tr, "%svCPU %d on PU %s (core %d)",
					    v > first ? ", " : "", v, cpuset_str(&pins[v], b3, sizeof(b3)),
					    t->pu_core[cpuset_first(&pins[v])]);
				if (issue(out, max_issues, GUESTTOPO_SMT_SPLIT, first, g->threads,
				    "guest SMT siblings %s (die %d, core %d) are pinned to different host "
				    "cores: %s", fmt_range(b1, sizeof(b1), first, g->threads),
				    (int)(first / per_die), (int)(first % per_die) / g->threads, b2) < 0)
					goto oom;
			} else {
				if (loose++ == 0) {
					ex_first = first;
					for (int v = first; v < first + g->threads; v++)
						cpuset_or(&ex_pin, &ex_pin, &pins[v]);
				}
			}
		}
		if (loose > 0 &&
		    issue(out, max_issues, GUESTTOPO_SMT_LOOSE, ex_first, g->threads,
		    "%d of %d guest SMT sibling groups have pins spanning several host cores (e.g. "
		    "vCPUs %s on PUs %s): the host may run siblings on different cores; mode=\"static\" "
		    "pins each vCPU to its PU", loose, nvcpus / g->threads,
		    fmt_range(b1, sizeof(b1), ex_first, g->threads), cpuset_str(&ex_pin, b2, sizeof(b2))) < 0)
			goto oom;
		if (loose > 0)
			out->notes++;
	}
	(void)groups;
	return out->total;
oom:
	return llcd_err_set(err, "guesttopo: out of memory");
}

void
guesttopo_position(const struct policy_guest_topo *g, int vcpu, struct guesttopo_pos *pos)
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
