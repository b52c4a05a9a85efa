// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_policyrule.c - libFuzzer target for the policy-rule matcher.
 *
 * The input is split at its first NUL byte-free newline: the first line is
 * parsed as a rule (policyrule_parse), the rest is a domain's metadata XML
 * matched against a fixed set of rules of every kind plus the input's rule
 * when it parses (policyrule_find). Besides the sanitizers it checks the
 * contract: an error has a message, a parsed rule formats and parses back to
 * the same text, and a match is -2 (with a message), -1 or a rule index.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyrule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed[] = {
	"name=instance-* flavor=m1.llc.* mode=aggregate isolation=core",
	"meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc mode=static",
	"meta={http://kubevirt.io}uid=* mode=spread",
	"meta={urn:*}*@a=b* mode=static",
	"name=* flavor=* mode=none",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policyrule r, r2;
	struct policyrule_set *s = policyrule_set_new();
	struct llcd_err err;
	char *text = malloc(size + 1), *nl, buf[4096], buf2[4096];
	int i;

	if (text == NULL || s == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
		if (policyrule_parse(fixed[k], "fixed", &r, &err) < 0 || policyrule_set_add(s, &r, &err) < 0)
			abort();
	nl = memchr(text, '\n', size);
	if (nl != NULL)
		*nl = '\0';
	err.msg[0] = '\0';
	if (strlen(text) < POLICYRULE_TEXT && policyrule_parse(text, "fuzz:1", &r, &err) == 0) {
		policyrule_format(&r, buf, sizeof(buf));
		if (policyrule_parse(buf, "fuzz:2", &r2, &err) < 0)
			abort();        /* the formatted rule reads back */
		policyrule_format(&r2, buf2, sizeof(buf2));
		if (strcmp(buf, buf2) != 0)
			abort();
		if (policyrule_set_add(s, &r, &err) < 0)
			abort();
	} else if (strlen(text) < POLICYRULE_TEXT && err.msg[0] == '\0') {
		abort();                /* every error says why */
	}
	if (nl != NULL) {
		const char *xml = nl + 1;
		size_t len = size - (size_t)(xml - text);
		err.msg[0] = '\0';
		i = policyrule_find(s, "instance-0000000e", xml, len, &err);
		if (i < -2 || i >= s->n || (i == -2 && err.msg[0] == '\0'))
			abort();
	}
	policyrule_set_free(s);
	free(text);
	return 0;
}
