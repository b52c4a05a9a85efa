// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_qmp.c - libFuzzer target for libqmp's message parser: the framer,
 * dispatch (greeting, replies, events) and the vCPU parsers.
 *
 * Input: byte 0 selects the set-up, byte 1 the feed size, the rest is what
 * "QEMU" sends.
 *   byte 0 bit 0: start past the handshake (else the input must greet)
 *   byte 0 bits 1-2: number of commands sent first (ids 2, 3, 4)
 *   byte 1: bytes per qmp_feed() call, 1-256 (0 = everything at once)
 * Built with clang -fsanitize=fuzzer,address,undefined; run by
 * tests/fuzz/run-fuzz.sh for a bounded time. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char greeting[] =
	"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, \"minor\": 2, \"major\": 7}, "
	"\"package\": \"Debian\"}, \"capabilities\": [\"oob\"]}}\r\n"
	"{\"return\": {}, \"id\": 1}\r\n";

static void
use_reply(struct json_object *ret)
{
	struct qmp_cpus *c;
	struct qmp_hotcpus *h;

	if (qmp_cpus_parse(ret, &c, NULL) == 0)
		qmp_cpus_free(c);
	if (qmp_hotcpus_parse(ret, &h, NULL) == 0)
		qmp_hotcpus_free(h);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *o;
	struct llcd_err err;
	struct qmp *q;
	size_t step, off, len, olen;
	uint64_t id;
	int i, ncmd;
	bool sent;

	if (size < 2)
		return 0;
	q = qmp_new();
	if (q == NULL)
		return 0;
	ncmd = (data[0] >> 1) & 3;
	step = data[1];
	sent = false;
	if (data[0] & 1) {
		if (qmp_feed(q, greeting, strlen(greeting), &err) != 0 ||
		    qmp_state(q) != QMP_STATE_READY)
			__builtin_trap();
	}
	data += 2;
	size -= 2;
	for (off = 0;; off += len) {
		if (!sent && qmp_state(q) == QMP_STATE_READY) {
			/* the commands whose replies the input may carry */
			for (i = 0; i < ncmd; i++)
				if (qmp_send(q, "query-cpus-fast", NULL, &id, &err) != 0)
					__builtin_trap();
			sent = true;
		}
		qmp_out_peek(q, &olen);         /* as if written to the socket */
		qmp_out_consume(q, olen);
		if (off >= size)
			break;
		len = step == 0 || size - off < step ? size - off : step;
		if (qmp_feed(q, data + off, len, &err) != 0)
			break;
	}
	for (id = 2; id < 2 + (uint64_t)ncmd; id++) {
		qmp_reply_take(q, id, &o, &err);
		if (o != NULL)
			use_reply(o);
		json_object_put(o);
	}
	while ((o = qmp_event_next(q)) != NULL) {
		(void)qmp_event_name(o);
		json_object_put(o);
	}
	qmp_feed_eof(q, &err);
	qmp_free(q);
	return 0;
}
