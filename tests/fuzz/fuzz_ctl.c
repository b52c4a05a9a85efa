// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_ctl.c - libFuzzer target for the control protocol's frame reader
 * and payload parser (what llcd does with bytes from a client). The input
 * is fed in pieces whose sizes come from the input itself. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_reader r;
	struct llcd_err err;
	size_t off = 0;

	ctl_reader_init(&r, CTL_MAX_REQUEST);
	while (off < size) {
		size_t piece = 1 + data[off] % 97, used;
		if (piece > size - off)
			piece = size - off;
		size_t end = off + piece;
		while (off < end) {
			int rc = ctl_reader_feed(&r, data + off, end - off, &used, &err);
			off += used;
			if (rc < 0) {
				if (err.msg[0] == '\0')
					abort();        /* every rejection says why */
				ctl_reader_reset(&r);
				return 0;
			}
			if (rc == 1) {
				if (r.hdr.len > CTL_MAX_REQUEST || r.payload[r.hdr.len] != '\0')
					abort();
				json_object *o = ctl_parse_object((const char *)r.payload, r.hdr.len);
				if (o && !json_object_is_type(o, json_type_object))
					abort();
				json_object_put(o);
				ctl_reader_next(&r);
			} else if (used == 0) {
				break;
			}
		}
	}
	ctl_reader_reset(&r);
	return 0;
}
