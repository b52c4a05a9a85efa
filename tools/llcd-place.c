// SPDX-License-Identifier: GPL-2.0-or-later
/* llcd-place: print the initial placement the engine computes for a set of
 * domains on a host topology (a what-if tool; no I/O beyond hwloc).
 *
 *   llcd-place [--topology SPEC|FILE.xml] [--reserved LIST]
 *              [NAME:VCPUS[:MODE[:ISOLATION[:DIES]]] ...]
 *
 * Default: the built-in 8-CCX host "pack:1 [numa] l3:8 core:8 pu:2" and one
 * 128-vCPU aggregate domain with 8 guest dies (the seed's EPYC 9T24 guest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "policy.h"
#include "topo_hwloc.h"

#define DEFAULT_TOPOLOGY "pack:1 [numa] l3:8 core:8 pu:2"

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt options[] = {
	{ 't', "topology", "SPEC|FILE.xml", "host topology (default below)" },
	{ 'r', "reserved", "LIST", "host CPUs never used for vCPUs" },
	{ 'h', "help", NULL, "this help" },
	CLIOPT_END
};

static void
usage(FILE *f)
{
	char modes[64], isos[32];

	llcd_names_list(&policy_mode_names, modes, sizeof(modes));
	llcd_names_list(&policy_isolation_names, isos, sizeof(isos));
	fputs("usage: llcd-place [--topology SPEC|FILE.xml] [--reserved LIST] "
	      "[NAME:VCPUS[:MODE[:ISOLATION[:DIES]]] ...]\n", f);
	cliopt_help(options, f);
	fprintf(f, "  MODE: %s (default aggregate)\n"
	    "  ISOLATION: %s (default none)\n"
	    "  default: --topology '" DEFAULT_TOPOLOGY "' xs:128:aggregate:none:8\n", modes, isos);
}

static int
parse_domain(const char *arg, struct policy_domain_in *d, int key)
{
	char buf[256], *tok, *save = NULL;
	int field = 0, dies = 1;

	snprintf(buf, sizeof(buf), "%s", arg);
	memset(d, 0, sizeof(*d));
	d->key = (uint64_t)key;
	d->annotated = true;
	policy_annotation_defaults(&d->annot);
	d->annot.mode = POLICY_MODE_AGGREGATE;
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save), field++) {
		switch (field) {
		case 0: snprintf(d->name, sizeof(d->name), "%s", tok); break;
		case 1: d->nvcpus = atoi(tok); break;
		case 2:
			if (policy_mode_from_name(tok, &d->annot.mode) < 0)
				return -1;
			break;
		case 3:
			if (policy_isolation_from_name(tok, &d->annot.isolation) < 0)
				return -1;
			break;
		case 4: dies = atoi(tok); break;
		default: return -1;
		}
	}
	if (d->nvcpus < 1 || d->nvcpus > CPUSET_MAX || dies < 1 || d->nvcpus % dies)
		return -1;
	d->guest = (struct policy_guest_topo){ 1, dies, 1, d->nvcpus / dies, 1 };
	return 0;
}

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	const char *topology = DEFAULT_TOPOLOGY, *reserved = "";
	struct llcd_err err;
	int c, nd, rc = 1;

	cliopt_build(&co, "llcd-place", options, false);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 't': topology = optarg; break;
		case 'r': reserved = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	nd = argc - optind > 0 ? argc - optind : 1;
	struct topo *t = topo_load(topology, &err);
	if (t == NULL) {
		fprintf(stderr, "llcd-place: %s\n", err.msg);
		return 2;
	}
	struct policy_domain_in *doms = calloc((size_t)nd, sizeof(*doms));
	struct policy_vcpu_sample **samples = calloc((size_t)nd, sizeof(*samples));
	struct policy_state *st = policy_state_new();
	struct policy_plan *plan = policy_plan_new();
	struct policy_input in;
	char sum[256];

	policy_host_defaults(&in.host, t);
	if (cpuset_parse(&in.host.reserved, reserved, &err) < 0) {
		fprintf(stderr, "llcd-place: --reserved: %s\n", err.msg);
		rc = 2;
		goto out;
	}
	for (int i = 0; i < nd; i++) {
		const char *arg = argc - optind > 0 ? argv[optind + i] : "xs:128:aggregate:none:8";
		if (parse_domain(arg, &doms[i], i + 1) < 0) {
			fprintf(stderr, "llcd-place: bad domain '%s'\n", arg);
			usage(stderr);
			rc = 2;
			goto out;
		}
		samples[i] = calloc((size_t)doms[i].nvcpus, sizeof(**samples));
		for (int v = 0; v < doms[i].nvcpus; v++) {
			samples[i][v].last_cpu = -1;
			samples[i][v].pinned = &t->all;
		}
		doms[i].vcpus = samples[i];
	}
	in.ndomains = nd;
	in.domains = doms;
	in.cpu_busy_ns = NULL;
	in.now_ns = 0;
	in.period_ns = 1000000000ull;
	if (policy_step(st, &in, plan, &err) < 0) {
		fprintf(stderr, "llcd-place: %s\n", err.msg);
		goto out;
	}
	topo_summary(t, sum, sizeof(sum));
	printf("host: %s (%s)\n\n", topology, sum);
	for (int i = 0; i < plan->n; i++) {
		const struct policy_action *a = &plan->actions[i];
		char cs[256];
		cpuset_format(&a->cpus, cs, sizeof(cs));
		if (a->type == POLICY_ACT_PIN_VCPU)
			continue;
		printf("%-8s %-12s %s%s%s\n", doms[a->domain].name, policy_action_name(a->type), a->reason,
		    a->type == POLICY_ACT_REFUSE ? "" : "", "");
	}
	/* map: per LLC, which vCPUs of which domain */
	printf("\nLLC  PUs          vCPUs\n");
	for (int l = 0; l < topo_count(t, TOPO_LLC); l++) {
		char cs[128], line[4096];
		size_t off = 0;
		cpuset_format(&topo_get(t, TOPO_LLC, l)->cpus, cs, sizeof(cs));
		line[0] = '\0';
		for (int i = 0; i < plan->n; i++) {
			const struct policy_action *a = &plan->actions[i];
			if (a->type != POLICY_ACT_PIN_VCPU || topo_llc_of(t, cpuset_first(&a->cpus)) != l ||
			    topo_llc_of(t, cpuset_last(&a->cpus)) != l)
				continue;       /* pins spanning LLCs are listed above */
			int n = snprintf(line + off, sizeof(line) - off, "%s%s:%d", off ? " " : "",
			    doms[a->domain].name, a->vcpu);
			if (n < 0 || (size_t)n >= sizeof(line) - off)
				break;
			off += (size_t)n;
		}
		printf("%-4d %-12s %s\n", l, cs, off ? line : "-");
	}
	rc = 0;
out:
	for (int i = 0; i < nd; i++)
		free(samples[i]);
	free(samples);
	free(doms);
	policy_plan_free(plan);
	policy_state_free(st);
	topo_free(t);
	return rc;
}
