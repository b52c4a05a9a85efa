/* guestchan_probe.c - drive agent/guestchan.c like llcd will, for the e2e
 * test: one channel per argument DOMAIN:NVCPUS:SOCKET, polled for SECONDS,
 * printing each valid report and, at the end, each channel's counters and
 * the probe's own CPU time and peak RSS.
 *
 *   guestchan-probe [-t SECONDS] [-e EXIT_AFTER_REPORTS] DOM:NVCPUS:SOCK...
 *
 *   REPORT dom=D seq=N name=spin pid=142 vcpus=0,2,4,6
 *   STATS dom=D state=connected lines=.. reports=.. bad=.. too_long=..
 *         throttles=.. backoffs=.. bytes=.. mem=.. last_error="..."
 *   PROBE cpu_ms=.. maxrss_kb=..
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "guestchan.h"

#define MAXCH 8

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	struct guestchan *ch[MAXCH];
	char names[MAXCH][64];
	struct guestchan_limits lim;
	double seconds = 10;
	long exit_after = 0, got = 0;
	int n = 0, opt;
	uint64_t end, seen[MAXCH] = { 0 };

	guestchan_limits_default(&lim);
	lim.reconnect_ns = 200000000;   /* 0.2 s: the test is short */
	while ((opt = getopt(argc, argv, "t:e:")) != -1) {
		if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'e')
			exit_after = atol(optarg);
		else
			return 2;
	}
	for (int i = optind; i < argc && n < MAXCH; i++) {
		char *a = strdup(argv[i]), *c1 = strchr(a, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2) {
			fprintf(stderr, "guestchan-probe: want DOMAIN:NVCPUS:SOCKET, got %s\n", argv[i]);
			return 2;
		}
		*c1 = *c2 = '\0';
		snprintf(names[n], sizeof(names[n]), "%s", a);
		ch[n] = guestchan_new(a, atoi(c1 + 1), c2 + 1, &lim);
		if (!ch[n]) {
			fprintf(stderr, "guestchan-probe: bad channel %s\n", argv[i]);
			return 2;
		}
		n++;
		free(a);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end && !(exit_after && got >= exit_after)) {
		struct pollfd pfd[MAXCH];
		uint64_t t = now_ns(), next = t + 100000000;    /* llcd: its period */

		for (int i = 0; i < n; i++) {
			pfd[i].fd = guestchan_fd(ch[i]);
			pfd[i].events = POLLIN;
			if (guestchan_next_ns(ch[i]) < next)
				next = guestchan_next_ns(ch[i]);
		}
		poll(pfd, (nfds_t)n, next > t ? (int)((next - t) / 1000000) + 1 : 0);
		t = now_ns();
		for (int i = 0; i < n; i++) {
			struct policy_hot_report rep[16];
			struct guestchan_stats st;
			int ev = guestchan_handle(ch[i], t), k;

			guestchan_stats(ch[i], &st);
			if (ev & GUESTCHAN_EV_CONNECTED)
				printf("EVENT dom=%s connected\n", names[i]);
			if (ev & GUESTCHAN_EV_THROTTLED)
				printf("EVENT dom=%s throttled\n", names[i]);
			if (ev & GUESTCHAN_EV_BACKOFF)
				printf("EVENT dom=%s backoff: %s\n", names[i], st.last_error);
			if (!(ev & GUESTCHAN_EV_REPORT) || st.reports == seen[i])
				continue;
			seen[i] = st.reports;
			k = guestchan_reports(ch[i], rep, 16, t);
			got++;
			printf("REPORTS dom=%s n=%d\n", names[i], k);
			for (int r = 0; r < k; r++) {
				char list[1024];

				cpuset_format(&rep[r].vcpus, list, sizeof(list));
				printf("REPORT dom=%s name=%s pid=%d vcpus=%s\n", names[i], rep[r].name,
				       rep[r].pid, list);
			}
		}
	}
	for (int i = 0; i < n; i++) {
		struct guestchan_stats st;

		guestchan_stats(ch[i], &st);
		printf("STATS dom=%s state=%s lines=%llu reports=%llu bad=%llu too_long=%llu "
		       "throttles=%llu backoffs=%llu bytes=%llu mem=%zu last_error=\"%s\"\n",
		       names[i], guestchan_state_name(st.state), (unsigned long long)st.lines,
		       (unsigned long long)st.reports, (unsigned long long)st.bad,
		       (unsigned long long)st.too_long, (unsigned long long)st.throttles,
		       (unsigned long long)st.backoffs, (unsigned long long)st.bytes, st.mem_bytes,
		       st.last_error);
		guestchan_free(ch[i]);
	}
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("PROBE cpu_ms=%ld maxrss_kb=%ld\n",
		       ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
		       ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000, ru.ru_maxrss);
	}
	return 0;
}
