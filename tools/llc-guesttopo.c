// SPDX-License-Identifier: GPL-2.0-or-later
/* llc-guesttopo: the guest CPU topology llcd recommends for a domain, on
 * the live host or a what-if host; no daemon, no libvirt connection.
 *
 *   llc-guesttopo [--topology SPEC|FILE.xml] [--reserved LIST]
 *                 [--mode MODE] [--isolation core|none] [--guest-only]
 *                 [--dry-run | --apply | --check] (DOMAIN.xml | --vcpus N)
 *
 * Prints the recommendation and its reasons; --dry-run prints the diff of
 * the domain XML instead, --apply the rewritten XML (stdout), --check the
 * disagreements between the XML's guest topology and its vCPU pins (exit 1
 * when there are any; siblings that merely may run apart are a note). The domain is
 * placed as llcd would place it on an otherwise empty host
 * (guesttopo_dry_place()). docs/guest-topology.md documents it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"
#include "cliopt.h"
#include "guesttopo.h"
#include "guestxml.h"
#include "policy.h"
#include "topo_hwloc.h"

/* the options, once: the getopt table is read from this text (cliopt.h) */
static const char usage_text[] =
    "usage: llc-guesttopo [--topology SPEC|FILE.xml] [--reserved LIST] [--mode MODE]\n"
    "                     [--isolation core|none] [--guest-only]\n"
    "                     [--dry-run | --apply | --check]\n"
    "                     (DOMAIN.xml | --vcpus N)\n"
    "  -t, --topology SPEC|FILE.xml\n"
    "                         hwloc synthetic description or XML file (default: this host)\n"
    "  -r, --reserved LIST    host CPUs never used for vCPUs\n"
    "  -n, --vcpus N          a domain of N vCPUs instead of DOMAIN.xml\n"
    "  -m, --mode MODE        aggregate|spread|static (default: the domain's llc-policy\n"
    "                         annotation, else aggregate)\n"
    "  -i, --isolation core|none\n"
    "                         (default: the annotation's, else none)\n"
    "  -g, --guest-only       write only <topology>, <cache> and <numa>, not the host\n"
    "                         bindings (<cputune> pins, <numatune>)\n"
    "  -d, --dry-run          print the diff of DOMAIN.xml\n"
    "  -a, --apply            print the rewritten DOMAIN.xml\n"
    "  -c, --check            compare DOMAIN.xml's guest topology with its vCPU pins\n"
    "                         (<cputune>; of a running domain: virsh dumpxml); exit 1\n"
    "                         when they disagree\n"
    "  -h, --help             this help\n";

static void
usage(FILE *f)
{
	cliopt_print(usage_text, f);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > GUESTXML_MAX + 4096 + 1) {
				cap = GUESTXML_MAX + 4096 + 1;
				if (n + 1 >= cap)
					break;  /* guestxml refuses it with a message */
			}
			char *p = realloc(buf, cap);
			if (p == NULL) {
				free(buf);
				buf = NULL;
				goto out;
			}
			buf = p;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	buf[n] = '\0';
	*len = n;
out:
	if (f != stdin)
		fclose(f);
	return buf;
}

/* a mode that places vCPUs (none places nothing to show the guest) */
static int
parse_mode(const char *s, enum policy_mode *m)
{
	return policy_mode_from_name(s, m) < 0 || *m == POLICY_MODE_NONE ? -1 : 0;
}

int
main(int argc, char **argv)
{
	struct cliopt co;
	const char *topology = "", *reserved = "", *mode = NULL, *iso = NULL, *path = NULL;
	bool guest_only = false, dry = false, apply = false, check = false;
	int c, vcpus = 0, rc = 1;
	struct llcd_err err;
	struct topo *t = NULL;
	char *xml = NULL, *out = NULL, *diff = NULL, *text = NULL;
	size_t xlen = 0, olen = 0;
	int *slots = NULL;
	struct cpuset *pins = NULL, emu;
	struct guesttopo_rec *rec = NULL;
	struct policy_domain_in dom;
	struct policy_host host;

	cliopt_build(&co, "llc-guesttopo", usage_text);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 't': topology = optarg; break;
		case 'r': reserved = optarg; break;
		case 'n': vcpus = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'i': iso = optarg; break;
		case 'g': guest_only = true; break;
		case 'd': dry = true; break;
		case 'a': apply = true; break;
		case 'c': check = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc || (path == NULL) == (vcpus == 0) || dry + apply + check > 1 ||
	    ((dry || apply || check) && path == NULL) || vcpus < 0 || vcpus > CPUSET_MAX) {
		usage(stderr);
		return 2;
	}
	memset(&dom, 0, sizeof(dom));
	dom.key = 1;
	snprintf(dom.name, sizeof(dom.name), "guest");
	dom.annotated = true;
	policy_annotation_defaults(&dom.annot);
	dom.annot.mode = POLICY_MODE_AGGREGATE;
	if (path) {
		struct guestxml_domain d;
		bool found = false;
		if ((xml = slurp(path, &xlen)) == NULL) {
			fprintf(stderr, "llc-guesttopo: %s: cannot read\n", path);
			goto out;
		}
		if (guestxml_read(xml, xlen, &d, &err) < 0 ||
		    annot_from_domain_xml(xml, xlen, NULL, &found, &dom.annot, &err) < 0) {
			fprintf(stderr, "llc-guesttopo: %s: %s\n", path, err.msg);
			goto out;
		}
		if (!found || dom.annot.mode == POLICY_MODE_NONE)
			dom.annot.mode = POLICY_MODE_AGGREGATE;
		vcpus = d.vcpus;
		dom.guest = d.topo;
		snprintf(dom.name, sizeof(dom.name), "%s", d.name);
	} else {
		dom.guest = (struct policy_guest_topo){ 1, 1, 1, vcpus, 1 };
	}
	dom.nvcpus = vcpus;
	if (mode && parse_mode(mode, &dom.annot.mode) < 0) {
		fprintf(stderr, "llc-guesttopo: --mode: '%s' is not one of aggregate, spread, static\n", mode);
		rc = 2;
		goto out;
	}
	if (iso && policy_isolation_from_name(iso, &dom.annot.isolation) < 0) {
		char names[64];
		llcd_names_list(&policy_isolation_names, names, sizeof(names));
		fprintf(stderr, "llc-guesttopo: --isolation: '%s' is not one of %s\n", iso, names);
		rc = 2;
		goto out;
	}
	if ((t = topo_load(topology, &err)) == NULL) {
		fprintf(stderr, "llc-guesttopo: %s\n", err.msg);
		goto out;
	}
	policy_host_defaults(&host, t);
	if (cpuset_parse(&host.reserved, reserved, &err) < 0) {
		fprintf(stderr, "llc-guesttopo: --reserved: %s\n", err.msg);
		rc = 2;
		goto out;
	}
	slots = calloc((size_t)vcpus, sizeof(*slots));
	pins = calloc((size_t)vcpus, sizeof(*pins));
	if (check) {
		struct guesttopo_check *chk = guesttopo_check_new();
		int n;
		if (pins == NULL || chk == NULL) {
			fprintf(stderr, "llc-guesttopo: out of memory\n");
			guesttopo_check_free(chk);
			goto out;
		}
		if (guestxml_read_pins(xml, xlen, vcpus, &t->all, pins, NULL, &err) < 0 ||
		    (n = guesttopo_check(t, &dom.guest, vcpus, pins, 0, chk, &err)) < 0) {
			fprintf(stderr, "llc-guesttopo: %s: %s\n", path, err.msg);
			guesttopo_check_free(chk);
			goto out;
		}
		printf("%s: guest topology sockets=%d dies=%d cores=%d threads=%d, %d vCPUs: %s\n",
		    dom.name, dom.guest.sockets, dom.guest.dies, dom.guest.cores, dom.guest.threads,
		    vcpus, n - chk->notes == 0 ? "agrees with its pins" : "disagrees with its pins");
		for (int i = 0; i < chk->n; i++)
			printf("%s: %s\n", guesttopo_issue_name(chk->issues[i].kind), chk->issues[i].msg);
		if (chk->total > chk->n)
			printf("... and %d more\n", chk->total - chk->n);
		rc = n - chk->notes == 0 ? 0 : 1;
		guesttopo_check_free(chk);
		goto out;
	}
	rec = guesttopo_rec_new();
	text = malloc(1 << 20);
	if (!slots || !pins || !rec || !text) {
		fprintf(stderr, "llc-guesttopo: out of memory\n");
		goto out;
	}
	if (guesttopo_dry_place(&host, &dom, NULL, 0, slots, pins, &emu, &err) < 0 ||
	    guesttopo_compute(t, &(struct guesttopo_alloc){ vcpus, slots, pins, &emu }, rec, &err) < 0) {
		fprintf(stderr, "llc-guesttopo: %s\n", err.msg);
		goto out;
	}
	if (dry || apply) {
		unsigned parts = guest_only ? GUESTXML_GUEST : GUESTXML_ALL;
		if (guestxml_apply(xml, xlen, rec, parts, &out, &olen, &err) < 0) {
			fprintf(stderr, "llc-guesttopo: %s: %s\n", path, err.msg);
			goto out;
		}
		if (apply) {
			fwrite(out, 1, olen, stdout);
		} else {
			char la[4200], lb[4200];
			snprintf(la, sizeof(la), "%s", path);
			snprintf(lb, sizeof(lb), "%s (llcd)", path);
			if (guestxml_diff(xml, xlen, out, olen, la, lb, &diff, &err) < 0) {
				fprintf(stderr, "llc-guesttopo: %s\n", err.msg);
				goto out;
			}
			fputs(diff, stdout);
		}
	} else {
		char sum[256];
		topo_summary(t, sum, sizeof(sum));
		printf("host: %s (%s)\ndomain: %s, %d vCPUs, mode %s%s\n", t->desc, sum, dom.name, vcpus,
		    policy_mode_name(dom.annot.mode),
		    dom.annot.isolation == POLICY_ISO_CORE ? ", isolation core" : "");
		if (guesttopo_format(t, rec, text, 1 << 20) < 0)
			fprintf(stderr, "llc-guesttopo: output truncated\n");
		fputs(text, stdout);
	}
	rc = 0;
out:
	free(xml);
	free(out);
	free(diff);
	free(text);
	free(slots);
	free(pins);
	guesttopo_rec_free(rec);
	topo_free(t);
	return rc;
}
