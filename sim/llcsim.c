// SPDX-License-Identifier: GPL-2.0-or-later
/* llcsim.c - command line: run a scenario under a policy, compare policies,
 * or show the README demo (spec/llcsim.md; docs/llcsim.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "run.h"
#include "embedded_scenario.h"

#define MAX_POLICIES 8

/* the options, once: the getopt table is read from this text (cliopt.h) */
static const char usage_text[] =
    "usage: llcsim SCENARIO.json [--policy NAME] [--seed N] [--trace FILE.jsonl] [--json]\n"
    "       llcsim SCENARIO.json --compare NAME[,NAME...] [--seed N] [--json]\n"
    "       llcsim [SCENARIO.json] --demo [--seed N]\n"
    "  -p, --policy NAME         the policy to run (default llcd)\n"
    "  -c, --compare NAME[,NAME...] run each policy and print them side by side\n"
    "  -s, --seed N              seed of the simulation's random choices\n"
    "  -t, --trace FILE.jsonl    write every move, rate, action and violation as JSON lines\n"
    "  -j, --json                print the summary as JSON\n"
    "  -d, --demo                the README demo, on SCENARIO.json or the embedded 8-LLC host\n"
    "  -h, --help                this help\n"
    "policies: llcd (default), none, static, kernel-cas\n"
    "exit: 0 ok, 1 invariant violated, 2 bad scenario or usage, 3 internal error\n";

static void
usage(FILE *f)
{
	cliopt_print(usage_text, f);
}

static int
run_or_report(struct sim_run *r, const struct sim_scenario *sc, enum sim_policy p, uint64_t seed,
              FILE *trace, int snap)
{
	struct llcd_err err;
	int rc = sim_run(r, sc, p, seed, trace, snap, &err);

	if (rc < 0) {
		fprintf(stderr, "llcsim: %s\n", err.msg);
		sim_run_fini(r);
		return rc == -1 ? 2 : 3;
	}
	for (int i = 0; i < r->w->nviol; i++)
		fprintf(stderr, "llcsim: %s: invariant violated: %s\n", sim_policy_name(p), r->w->viol[i]);
	return 0;
}

static void
print_text(const struct sim_run *r)
{
	const struct sim_scenario *sc = r->sc;

	printf("llcsim: %s, policy %s, seed %llu, %ld periods of %g ms\n", sc->name,
	    sim_policy_name(r->policy), (unsigned long long)r->seed, r->w->period, sc->period_ms);
	printf("%-28s %10s %10s %9s %9s\n", "domain/group", "throughput", "llc-spread", "llc-moves", "settle-s");
	for (int g = 0; g < sc->ngroups; g++) {
		const struct sim_group_state *S = &r->w->grp[g];
		char name[POLICY_NAME + POLICY_GROUP_NAME + 2];
		snprintf(name, sizeof(name), "%s/%s", sc->domains[sc->groups[g].domain].name, sc->groups[g].name);
		printf("%-28s %10.4f %10.2f %9llu ", name, sim_run_throughput(r, g),
		    S->spread_n ? S->spread_sum / (double)S->spread_n : 0.0,
		    (unsigned long long)S->llc_moves);
		if (S->first_busy_s >= 0 && S->last_spread == 1)
			printf("%9.1f\n", fmax(S->first_busy_s, S->unsettled_until));
		else
			printf("%9s\n", "-");
	}
	printf("all groups (time-weighted)   %10.4f\n", sim_run_throughput_avg(r));
	printf("invariants: %s\n", r->w->nviol ? "VIOLATED" : "ok");
}

static int
parse_policies(const char *list, enum sim_policy *out, int *n)
{
	char buf[256], *save = NULL;

	*n = 0;
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -1;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_POLICIES || sim_policy_from_name(tok, &out[*n]) < 0) {
			fprintf(stderr, "llcsim: --compare: unknown policy '%s' (llcd, none, static, kernel-cas)\n", tok);
			return -1;
		}
		(*n)++;
	}
	return *n ? 0 : -1;
}

/* Runs policies pol[0..n-1] into runs[]; on a failure frees the runs made
 * so far and returns run_or_report's code; sets *rc to 1 when a run
 * violated an invariant. */
static int
run_each(struct sim_run *runs, const struct sim_scenario *sc, const enum sim_policy *pol, int n,
    uint64_t seed, int snap, int *rc)
{
	for (int i = 0; i < n; i++) {
		int e = run_or_report(&runs[i], sc, pol[i], seed, NULL, snap);
		if (e) {
			for (int j = 0; j < i; j++)
				sim_run_fini(&runs[j]);
			return e;
		}
		if (runs[i].w->nviol)
			*rc = 1;
	}
	return 0;
}

static int
compare(const struct sim_scenario *sc, const enum sim_policy *pol, int n, uint64_t seed, bool json)
{
	struct sim_run runs[MAX_POLICIES];
	int rc = 0;

	int e = run_each(runs, sc, pol, n, seed, -1, &rc);
	if (e)
		return e;
	if (json) {
		printf("{ \"scenario\": \"%s\", \"seed\": %llu, \"baseline\": \"%s\",\n\"runs\": [\n",
		    sc->name, (unsigned long long)seed, sim_policy_name(pol[0]));
		for (int i = 0; i < n; i++) {
			sim_run_json(&runs[i], stdout);
			if (i + 1 < n)
				puts(",");
		}
		puts("],\n\"ratios\": [");
		for (int g = 0; g < sc->ngroups; g++) {
			double base = sim_run_throughput(&runs[0], g);
			printf("  { \"domain\": \"%s\", \"group\": \"%s\"", sc->domains[sc->groups[g].domain].name,
			    sc->groups[g].name);
			for (int i = 0; i < n; i++) {
				double v = sim_run_throughput(&runs[i], g) / base;
				if (isnan(v) || isinf(v))
					printf(", \"%s\": null", sim_policy_name(pol[i]));
				else
					printf(", \"%s\": %.4f", sim_policy_name(pol[i]), v);
			}
			printf(" }%s\n", g + 1 < sc->ngroups ? "," : "");
		}
		puts("] }");
	} else {
		printf("llcsim: %s, seed %llu: throughput, and ratio against %s\n", sc->name,
		    (unsigned long long)seed, sim_policy_name(pol[0]));
		printf("%-28s", "domain/group");
		for (int i = 0; i < n; i++)
			printf(" %18s", sim_policy_name(pol[i]));
		putchar('\n');
		for (int g = -1; g < sc->ngroups; g++) {
			char name[POLICY_NAME + POLICY_GROUP_NAME + 2];
			double base = g < 0 ? sim_run_throughput_avg(&runs[0]) : sim_run_throughput(&runs[0], g);
			if (g < 0)
				snprintf(name, sizeof(name), "all groups (time-weighted)");
			else
				snprintf(name, sizeof(name), "%s/%s", sc->domains[sc->groups[g].domain].name,
				    sc->groups[g].name);
			printf("%-28s", name);
			for (int i = 0; i < n; i++) {
				double v = g < 0 ? sim_run_throughput_avg(&runs[i]) : sim_run_throughput(&runs[i], g);
				if (isnan(v))
					printf(" %18s", "-");
				else
					printf("      %.4f %6.3fx", v, v / base);
			}
			putchar('\n');
		}
		for (int i = 0; i < n; i++)
			printf("%s: invariants %s\n", sim_policy_name(pol[i]), runs[i].w->nviol ? "VIOLATED" : "ok");
	}
	for (int i = 0; i < n; i++)
		sim_run_fini(&runs[i]);
	return rc;
}

/* --- the README demo ----------------------------------------------------- */

static void
map_row(const struct sim_snapshot *s, int llc, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int v = 0; v < s->nvcpus && n + 8 < len; v++)
		if (s->llc[v] == llc)
			n += (size_t)snprintf(buf + n, len - n, "%sv%d", n ? " " : "", v);
	if (n == 0)
		snprintf(buf, len, ".");
}

/* One row per CCX: where the group's busy vCPUs sat at the end under
 * none and kernel-cas, and under llcd before it acted and at the end. */
static void
print_maps(const struct sim_run *runs)
{
	char c0[160], c1[160], c2[160], c3[160], h2[32], h3[32];

	snprintf(h2, sizeof(h2), "t=%.1f s", runs[2].before.t);
	snprintf(h3, sizeof(h3), "t=%.1f s", runs[2].after.t);
	printf("\nWhich busy vCPU of group '%s' sits on which CCX (LLC):\n",
	    runs[0].sc->groups[runs[0].snap_group].name);
	printf("  %-5s %-13s %-13s %-14s %s\n", "", "none", "kernel-cas", "llcd: before", "llcd: after");
	printf("  %-5s %-13s %-13s %-14s %s\n", "", h3, h3, h2, h3);
	for (int l = 0; l < runs[0].w->nllc; l++) {
		char label[16];
		map_row(&runs[0].after, l, c0, sizeof(c0));
		map_row(&runs[1].after, l, c1, sizeof(c1));
		map_row(&runs[2].before, l, c2, sizeof(c2));
		map_row(&runs[2].after, l, c3, sizeof(c3));
		snprintf(label, sizeof(label), "CCX%d", l);
		printf("  %-5s %-13s %-13s %-14s %s\n", label, c0, c1, c2, c3);
	}
}

static int
demo(const struct sim_scenario *sc, uint64_t seed)
{
	static const enum sim_policy pol[] = { SIM_POLICY_NONE, SIM_POLICY_KCAS, SIM_POLICY_LLCD };
	struct sim_run runs[3];
	int snap = -1, rc = 0;
	char summary[256];

	for (int g = 0; g < sc->ngroups && snap < 0; g++)
		if (sc->groups[g].barrier)
			snap = g;
	if (snap < 0 && sc->ngroups)
		snap = 0;
	int e = run_each(runs, sc, pol, 3, seed, snap, &rc);
	if (e)
		return e;
	topo_summary(runs[0].topo, summary, sizeof(summary));
	printf("llcsim demo: scenario %s, seed %llu, %g s in %g ms periods\n", sc->name,
	    (unsigned long long)seed, sc->duration_s, sc->period_ms);
	printf("host: %s (%s)\n", sc->topology, summary);
	if (snap >= 0) {
		const struct sim_group *G = &sc->groups[snap];
		char vc[256];
		cpuset_format(&G->vcpus, vc, sizeof(vc));
		printf("workload: domain '%s' (%d vCPUs), group '%s' on vCPUs %s, sharing %.2f%s\n",
		    sc->domains[G->domain].name, sc->domains[G->domain].nvcpus, G->name, vc, G->sharing,
		    G->barrier ? ", barrier" : "");
	}
	printf("\n%-12s %10s %9s %11s %10s %9s\n", "policy", "throughput", "vs none", "LLC spread",
	    "llc moves", "settle");
	for (int i = 0; i < 3 && snap >= 0; i++) {
		const struct sim_group_state *S = &runs[i].w->grp[snap];
		double tp = sim_run_throughput(&runs[i], snap);
		printf("%-12s %10.3f %8.2fx %11.2f %10llu ", sim_policy_name(pol[i]), tp,
		    tp / sim_run_throughput(&runs[0], snap),
		    S->spread_n ? S->spread_sum / (double)S->spread_n : 0.0, (unsigned long long)S->llc_moves);
		if (S->first_busy_s >= 0 && S->last_spread == 1)
			printf("%7.1f s\n", fmax(S->first_busy_s, S->unsettled_until));
		else
			printf("%9s\n", "never");
	}
	if (snap >= 0)
		print_maps(runs);
	for (int i = 0; i < 3; i++) {
		if (runs[i].w->nviol)
			printf("%s: invariant violated: %s\n", sim_policy_name(pol[i]), runs[i].w->viol[0]);
		sim_run_fini(&runs[i]);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct cliopt co;
	enum sim_policy policy = SIM_POLICY_LLCD, cmp[MAX_POLICIES];
	const char *trace_path = NULL, *compare_list = NULL;
	bool json = false, have_seed = false, do_demo = false;
	uint64_t seed = 0;
	struct sim_scenario *sc;
	struct llcd_err err;
	int c, ncmp = 0, rc;

	cliopt_build(&co, "llcsim", usage_text);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (sim_policy_from_name(optarg, &policy) < 0) {
				fprintf(stderr, "llcsim: --policy: unknown policy '%s' (llcd, none, static, kernel-cas)\n", optarg);
				return 2;
			}
			break;
		case 's': {
			char *end;
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || *optarg == '-' || *optarg == '\0') {
				fprintf(stderr, "llcsim: --seed: not an unsigned integer: '%s'\n", optarg);
				return 2;
			}
			have_seed = true;
			break;
		}
		case 't': trace_path = optarg; break;
		case 'j': json = true; break;
		case 'c': compare_list = optarg; break;
		case 'd': do_demo = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind > 1 || (argc - optind == 0 && !do_demo)) {
		usage(stderr);
		return 2;
	}
	if (compare_list && parse_policies(compare_list, cmp, &ncmp) < 0)
		return 2;
	if (argc - optind == 1)
		sc = sim_scenario_load(argv[optind], &err);
	else
		sc = sim_scenario_parse((const char *)llcsim_embedded_scenario,
		    sizeof(llcsim_embedded_scenario), "xiangshan-8ccx", &err);
	if (sc == NULL) {
		fprintf(stderr, "llcsim: %s\n", err.msg);
		return 2;
	}
	if (!have_seed)
		seed = sc->seed;
	if (do_demo) {
		rc = demo(sc, seed);
	} else if (compare_list) {
		rc = compare(sc, cmp, ncmp, seed, json);
	} else {
		struct sim_run r;
		FILE *trace = NULL;
		if (trace_path && (trace = fopen(trace_path, "w")) == NULL) {
			fprintf(stderr, "llcsim: --trace: %s: %s\n", trace_path, strerror(errno));
			sim_scenario_free(sc);
			return 2;
		}
		rc = run_or_report(&r, sc, policy, seed, trace, -1);
		if (rc == 0) {
			if (json)
				sim_run_json(&r, stdout);
			else
				print_text(&r);
			rc = r.w->nviol ? 1 : 0;
			sim_run_fini(&r);
		}
		if (trace && fclose(trace) != 0) {
			fprintf(stderr, "llcsim: --trace: %s: %s\n", trace_path, strerror(errno));
			rc = rc ? rc : 3;
		}
	}
	sim_scenario_free(sc);
	return rc;
}
