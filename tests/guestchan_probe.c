// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan_probe.c - drive agent/drivers/guestchan.c like llcd will, for the e2e
 * test: one channel per argument DOMAIN:NVCPUS:SOCKET, polled for SECONDS,
 * printing each valid report and, at the end, each channel's counters and
 * the probe's own CPU time and peak RSS.
 *
 *   guestchan-probe [-t SECONDS] [-e EXIT_AFTER_REPORTS] [-H SOCK] DOM:NVCPUS:SOCK...
 *
 * -H SOCK forks a hostile peer that plays libvirt's bound socket at SOCK
 * and, to whoever connects, writes garbage, lines of a wrong version or
 * with out-of-range vCPUs, a 1 MiB line without a newline, and then a
 * flood of lines as fast as the socket takes them.
 *
 *   REPORT dom=D seq=N name=spin pid=142 vcpus=0,2,4,6
 *   STATS dom=D state=connected lines=.. reports=.. bad=.. too_long=..
 *         throttles=.. backoffs=.. bytes=.. mem=.. last_error="..."
 *   PROBE cpu_ms=.. maxrss_kb=..
 */
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "guestchan.h"

#define MAXCH 8

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void
writeall(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static pid_t
hostile_peer(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pid_t pid = fork();
	int l;

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
		_exit(1);
	for (;;) {
		static char big[1 << 20];
		static const char *bad[] = {
			"garbage\n", "{'v':1}\n", "{\"v\":2,\"procs\":[]}\n",
			"{\"v\":1,\"procs\":[{\"name\":\"x\",\"pid\":1,\"vcpus\":[999]}]}\n",
		};
		static const char flood[] = "{\"v\":1,\"procs\":[{\"name\":\"flood\",\"pid\":9,\"vcpus\":[0,1]}]}\n";
		int c = accept(l, NULL, NULL);

		if (c < 0)
			continue;
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			writeall(c, bad[i], strlen(bad[i]));
		memset(big, 'A', sizeof(big));
		writeall(c, big, sizeof(big));
		writeall(c, "\n", 1);
		for (;;) {
			if (write(c, flood, sizeof(flood) - 1) <= 0)
				break;
		}
		close(c);
	}
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
	pid_t peer = 0;

	while ((opt = getopt(argc, argv, "t:e:H:")) != -1) {
		if (opt == 'H')
			peer = hostile_peer(optarg);
		else if (opt == 't')
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
	signal(SIGTERM, on_term);       /* ends the run, counters still printed */
	end = llcd_mono_ns() + (uint64_t)(seconds * 1e9);
	while (!stop && llcd_mono_ns() < end && !(exit_after && got >= exit_after)) {
		struct pollfd pfd[MAXCH];
		uint64_t t = llcd_mono_ns(), next = t + 100000000;    /* llcd: its period */

		for (int i = 0; i < n; i++) {
			pfd[i].fd = guestchan_fd(ch[i]);
			pfd[i].events = POLLIN;
			if (guestchan_next_ns(ch[i]) < next)
				next = guestchan_next_ns(ch[i]);
		}
		poll(pfd, (nfds_t)n, next > t ? (int)((next - t) / 1000000) + 1 : 0);
		t = llcd_mono_ns();
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
	if (peer > 0) {
		kill(peer, SIGKILL);
		waitpid(peer, NULL, 0);
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
