// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_annotation.c - libFuzzer target for the llc-policy annotation parser.
 *
 * Every input goes to annot_parse() and annot_parse_metadata() (as a
 * standalone element) and to annot_from_domain_xml() (as a domain XML). Besides the sanitizers, it
 * checks the parser's contract: an error leaves the defaults and a message;
 * a success survives the annot_format() / annot_parse() round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct policy_annotation a, b, defaults;
static char buf[ANNOT_XML_MAX];

static void
check(int rc, int nvcpus, const struct llcd_err *err)
{
	struct llcd_err err2;

	if (rc != 0) {
		if (err->msg[0] == '\0' || !annot_equal(&a, &defaults)) {
			fprintf(stderr, "error without message or defaults: '%s'\n", err->msg);
			abort();
		}
		return;
	}
	if (annot_format(&a, buf, sizeof(buf), &err2) != 0) {
		fprintf(stderr, "a parsed annotation does not format: %s\n", err2.msg);
		abort();
	}
	if (annot_parse(buf, strlen(buf), nvcpus, &b, &err2) != 0 ||
	    !annot_equal(&a, &b)) {
		fprintf(stderr, "round trip differs: %s\n%s\n", err2.msg, buf);
		abort();
	}
	if (annot_format_metadata(&a, buf, sizeof(buf), &err2) != 0 ||
	    annot_parse(buf, strlen(buf), nvcpus, &b, &err2) != 0 ||
	    !annot_equal(&a, &b)) {
		fprintf(stderr, "metadata round trip differs: %s\n%s\n", err2.msg, buf);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llcd_err err;
	bool found;
	int rc, nvcpus;

	policy_annotation_defaults(&defaults);
	err.msg[0] = '\0';
	rc = annot_parse((const char *)data, size, 64, &a, &err);
	check(rc, 64, &err);

	err.msg[0] = '\0';
	rc = annot_parse_metadata((const char *)data, size, 8, &a, &err);
	check(rc, 8, &err);

	err.msg[0] = '\0';
	rc = annot_from_domain_xml((const char *)data, size, &nvcpus, &found, &a, &err);
	if (rc == 0 && !found && !annot_equal(&a, &defaults))
		abort();
	check(rc, nvcpus, &err);
	return 0;
}
