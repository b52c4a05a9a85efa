// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_guestxml.c - libFuzzer target for the domain XML writer.
 *
 * Every input is a domain XML: guestxml_read(), guestxml_read_pins(), and
 * guestxml_apply() of a fixed 4-vCPU recommendation (2 sockets, 2 NUMA
 * cells, pins) when the input has 4 vCPUs. Besides the sanitizers it checks
 * the writer's contract: an error has a message and no output; a rewrite
 * reads back with the recommended topology, applying it again changes
 * nothing, and the diff of input and output is produced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestxml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct guesttopo_rec rec;
static struct guesttopo_cell cells[2];
static struct cpuset pins[4];

static void
init(void)
{
	static int done;

	if (done++)
		return;
	rec.nvcpus = 4;
	rec.topo = (struct policy_guest_topo){ 2, 1, 1, 1, 2 };
	rec.cache_mode = "emulate";
	rec.ncells = 2;
	rec.cells = cells;
	rec.pins = pins;
	for (int c = 0; c < 2; c++) {
		cells[c].host_node = c;
		cells[c].nvcpus = 2;
		cpuset_set_range(&cells[c].vcpus, 2 * c, 2 * c + 1);
		cpuset_set(&rec.nodeset, c);
	}
	for (int v = 0; v < 4; v++)
		cpuset_set(&pins[v], v);
	cpuset_set_range(&rec.emulator, 0, 3);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *xml = (const char *)data;
	struct guestxml_domain d;
	struct llcd_err err;
	struct cpuset all, p[4];
	char *out = NULL, *out2 = NULL, *diff = NULL;
	size_t olen = 0, o2len = 0;

	init();
	cpuset_zero(&all);
	cpuset_set_range(&all, 0, 7);
	err.msg[0] = '\0';
	if (guestxml_read(xml, size, &d, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	if (d.vcpus == 4)
		(void)guestxml_read_pins(xml, size, 4, &all, p, NULL, &err);
	err.msg[0] = '\0';
	if (guestxml_apply(xml, size, &rec, GUESTXML_ALL, &out, &olen, &err) != 0) {
		if (err.msg[0] == '\0' || out != NULL)
			abort();
		/* the library's own consistency checks say ": internal: ";
		 * the input (a domain name, say) may contain the word */
		if (strncmp(err.msg, "domain XML: internal: ", 22) == 0 ||
		    strncmp(err.msg, "guestxml: internal: ", 20) == 0) {
			fprintf(stderr, "internal error: %s\n", err.msg);
			abort();
		}
		return 0;
	}
	if (guestxml_read(out, olen, &d, &err) != 0 ||
	    memcmp(&d.topo, &rec.topo, sizeof(d.topo)) != 0) {
		fprintf(stderr, "rewrite does not read back: %s\n", err.msg);
		abort();
	}
	if (guestxml_apply(out, olen, &rec, GUESTXML_ALL, &out2, &o2len, &err) != 0 ||
	    o2len != olen || memcmp(out, out2, olen) != 0) {
		fprintf(stderr, "second apply differs: %s\n", err.msg);
		abort();
	}
	if (guestxml_diff(xml, size, out, olen, "a", "b", &diff, &err) != 0)
		abort();
	free(out);
	free(out2);
	free(diff);
	return 0;
}
