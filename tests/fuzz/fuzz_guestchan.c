// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_guestchan.c - libFuzzer on llcd's end of the guest channel: the
 * report parser on every input (for 1..130 vCPUs taken from the first
 * byte), and the channel reading the input through a real socket with a
 * fake clock (line splitting, over-long lines, throttle, back-off).
 * Checks: no crash or leak, every accepted vCPU in range, names sanitised.
 * SIGPIPE is ignored: once the channel backs off it closes its end while
 * the harness is still writing (corpus seed backoff-sigpipe). */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guestchan.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness writes the input into the channel; a write after llcd's end
 * closed must fail with EPIPE, as in llcd (which ignores SIGPIPE), rather
 * than kill the fuzzer. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void
check(const struct policy_hot_report *r, int n, int nvcpus)
{
	for (int i = 0; i < n; i++) {
		if (cpuset_last(&r[i].vcpus) >= nvcpus)
			abort();
		for (const char *p = r[i].name; *p; p++) {
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p))
				abort();
		}
		if (r[i].pid < 1)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	struct policy_hot_report rep[16];
	struct llcd_err err;
	int nvcpus = size ? 1 + data[0] % 130 : 8, n;

	n = guestchan_parse((const char *)data, size, nvcpus, 16, rep, NULL, &err);
	if (n > 16)
		abort();
	if (n > 0)
		check(rep, n, nvcpus);

	/* the same bytes through a channel */
	if (!dir[0]) {
		strcpy(dir, "/tmp/fuzz_guestchan.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	char path[128];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(path, sizeof(path), "%s/s", dir);
	unlink(path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
		abort();
	struct guestchan_limits lim;
	guestchan_limits_default(&lim);
	lim.max_line = 256;
	struct guestchan *c = guestchan_new("fuzz", nvcpus, path, &lim);
	uint64_t t = 1000000000;
	guestchan_handle(c, t);
	int p = accept(l, NULL, NULL);
	if (p >= 0) {
		size_t off = 0;
		while (off < size) {
			ssize_t w = write(p, data + off, size - off > 4096 ? 4096 : size - off);
			if (w <= 0)
				break;
			off += (size_t)w;
			for (int k = 0; k < 3; k++) {
				t += 50000000;
				guestchan_handle(c, t);
			}
		}
		close(p);
		for (int k = 0; k < 5; k++) {
			t += 200000000;
			guestchan_handle(c, t);
		}
		n = guestchan_reports(c, rep, 16, t);
		check(rep, n, nvcpus);
	}
	guestchan_free(c);
	close(l);
	unlink(path);
	return 0;
}
