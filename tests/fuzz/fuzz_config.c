// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_config.c - libFuzzer target for the llcd.conf parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	struct llcd_err err;
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	config_defaults(&c);
	err.msg[0] = '\0';
	if (config_parse(&c, text, "fuzz.conf", &err) < 0 && strncmp(err.msg, "fuzz.conf:", 10) != 0)
		abort();                /* every error names file:line */
	if (c.period_ms < 10 || c.period_ms > 600000 || c.overcommit < 0.1 || c.max_moves < 1)
		abort();                /* nothing out of range gets in */
	free(text);
	return 0;
}
