// SPDX-License-Identifier: GPL-2.0-or-later
/* policyrule.c - what matching llcd.conf's policy-rules costs per domain
 * (policyrule_find), next to parsing the same domain XML once
 * (xmlsafe_read_domain + xmlFreeDoc, the least llcd does with a domain's
 * XML), on a Nova domain XML (tests/fixtures/domains/nova-instance.xml).
 *
 * Side by side in each round:
 *   parse   the baseline: read and free the document
 *   name    1 name= rule: no XML is read at all
 *   flavor  1 flavor= rule that matches
 *   64      63 meta= rules that do not match (each walks the metadata)
 *           and a last flavor= rule that does
 * Prints microseconds per call and each ratio against parse. Matching runs
 * when a domain starts, when its metadata changes and when a reload changes
 * the rules, never per period.
 *
 * usage: bench_policyrule [ROUNDS] [FIXTURE.xml] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "policyrule.h"
#include "xmlsafe.h"

#define CALLS 2000

static struct policyrule_set *
set_of(const char *const *lines, int n)
{
	struct policyrule_set *s = policyrule_set_new();
	static struct policyrule r;
	struct llcd_err err;

	for (int i = 0; i < n; i++)
		if (policyrule_parse(lines[i], "bench", &r, &err) < 0 || policyrule_set_add(s, &r, &err) < 0) {
			fprintf(stderr, "bench_policyrule: %s: %s\n", lines[i], err.msg);
			exit(1);
		}
	return s;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	const char *path = argc > 2 ? argv[2] : LLCD_SRC "/tests/fixtures/domains/nova-instance.xml";
	static char xml[1 << 16];
	FILE *f = fopen(path, "r");
	size_t len;
	struct llcd_err err;
	static const char *name_rule[] = { "name=instance-* mode=aggregate" };
	static const char *flavor_rule[] = { "flavor=m1.llc.* mode=aggregate" };
	static char many_text[64][128];
	const char *many[64];
	double us[4] = { 0 };

	if (f == NULL || (len = fread(xml, 1, sizeof(xml) - 1, f)) == 0) {
		fprintf(stderr, "bench_policyrule: cannot read %s\n", path);
		return 1;
	}
	fclose(f);
	for (int i = 0; i < 63; i++) {
		snprintf(many_text[i], sizeof(many_text[i]),
		    "meta={http://openstack.org/xmlns/libvirt/nova/*}project=team-%d mode=static", i);
		many[i] = many_text[i];
	}
	many[63] = flavor_rule[0];
	struct policyrule_set *sets[3] = { set_of(name_rule, 1), set_of(flavor_rule, 1), set_of(many, 64) };
	const int want[3] = { 0, 0, 63 };

	for (int round = 0; round < rounds; round++) {
		uint64_t t0 = llcd_mono_ns();
		for (int i = 0; i < CALLS; i++) {
			xmlDocPtr d = xmlsafe_read_domain(xml, len, &err);
			if (d == NULL) {
				fprintf(stderr, "bench_policyrule: %s\n", err.msg);
				return 1;
			}
			xmlFreeDoc(d);
		}
		us[0] += (double)(llcd_mono_ns() - t0) / 1e3 / CALLS;
		for (int k = 0; k < 3; k++) {
			t0 = llcd_mono_ns();
			for (int i = 0; i < CALLS; i++)
				if (policyrule_find(sets[k], "instance-0000000e", xml, len, &err) != want[k]) {
					fprintf(stderr, "bench_policyrule: set %d matched the wrong rule\n", k);
					return 1;
				}
			us[k + 1] += (double)(llcd_mono_ns() - t0) / 1e3 / CALLS;
		}
	}
	printf("policy-rule matching on %s (%zu bytes), %d rounds of %d calls\n", path, len, rounds, CALLS);
	printf("%-28s %10s %8s\n", "", "us/call", "ratio");
	static const char *const what[4] = { "parse (baseline)", "1 name= rule", "1 flavor= rule",
		"63 meta= misses + flavor=" };
	for (int k = 0; k < 4; k++)
		printf("%-28s %10.2f %8.2f\n", what[k], us[k] / rounds, us[k] / us[0]);
	for (int k = 0; k < 3; k++)
		policyrule_set_free(sets[k]);
	return 0;
}
