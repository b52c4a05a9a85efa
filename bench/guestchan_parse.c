// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan_parse.c - the cost of one guest report line (agent/drivers/guestchan.c's
 * guestchan_parse) for a guest of 8 vCPUs: a normal line, and a hostile one
 * that fills the 4 KiB line with a 1,500-entry "llcs" array, side by side.
 * Prints microseconds per line and the ratio; passes or fails on nothing.
 * usage: bench_guestchan_parse [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "guestchan.h"
#include "guestproto.h"

static double
us_per_line(const char *line, int rounds)
{
	struct policy_hot_report out[GUESTPROTO_MAX_PROCS];
	struct llcd_err err;
	uint64_t t0 = llcd_mono_ns();

	for (int i = 0; i < rounds; i++)
		(void)guestchan_parse(line, strlen(line), 8, GUESTPROTO_MAX_PROCS, out, NULL, &err);
	return (double)(llcd_mono_ns() - t0) / 1e3 / rounds;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;
	static const char normal[] = "{\"v\":1,\"t\":12.345,\"seq\":7,\"ncpus\":8,\"nllcs\":2,\"dropped\":0,\"procs\":"
	    "[{\"name\":\"spin\",\"pid\":142,\"threads\":5,\"busy_threads\":4,\"cpu_share\":3.97,\"vcpus\":[0,2,4,6],"
	    "\"llcs\":[0,1]}]}";
	char hostile[GUESTPROTO_MAX_LINE];

	snprintf(hostile, sizeof(hostile), "{\"v\":1,\"procs\":[{\"name\":\"a\",\"pid\":1,\"vcpus\":[0],\"llcs\":[0");
	for (int i = 1; i < 1500; i++)
		strcat(hostile, ",0");
	strcat(hostile, "]}]}");
	if (rounds < 1)
		rounds = 1;
	double n = us_per_line(normal, rounds), h = us_per_line(hostile, rounds);
	n = (n + us_per_line(normal, rounds)) / 2;      /* once more, interleaved */
	printf("guestchan_parse, 8 vCPUs, %d rounds: normal line %.2f us, 1,500-entry llcs line %.2f us (%.2fx)\n",
	    rounds, n, h, h / n);
	return 0;
}
