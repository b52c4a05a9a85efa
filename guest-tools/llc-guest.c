// SPDX-License-Identifier: GPL-2.0-or-later
/* llc-guest - the in-guest helper of llcd: finds the guest's hot
 * multi-threaded processes every period, reports them to the host over a
 * virtio-serial port (docs/guest-channel.md) and, with --aggregate, keeps
 * each one's threads on one virtual LLC (docs/llc-guest.md, llc-guest(8)).
 *
 * Statically linked: it depends on libc, common/ and policy/ only, so that it runs
 * in any Linux guest, a busybox initramfs included.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cliopt.h"
#include "clock.h"
#include "gaggr.h"
#include "greport.h"
#include "gscan.h"
#include "gtopo.h"
#include "guestproto.h"

#ifndef LLCD_VERSION
#define LLCD_VERSION "0.1.0"
#endif

struct opts {
	double period;          /* seconds */
	double window;          /* seconds */
	struct gscan_opts scan;
	const char *port;
	const char *device;     /* explicit device or file */
	const char *proc_root, *sys_root, *dev_root;
	int aggregate;          /* 0 no, 1 yes, 2 force */
	bool report_only;
	bool once, to_stdout;
	int tolerance;
	int timeout;
	int verbose;
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void
sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };

	while (!quit && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

enum { OPT_TIMEOUT = CLIOPT_LONG, OPT_PROC, OPT_SYS };

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt options[] = {
	{ 'p', "period", "SEC", "sampling period (default 1)" },
	{ 'w', "window", "SEC", "CPU time is measured over this window (default 2)" },
	{ 'T', "threshold", "SHARE", "a process is hot from SHARE of one CPU (default 0.5)" },
	{ 'b', "busy", "SHARE", "a thread is busy from SHARE of one CPU (default 0.25)" },
	{ 'P', "port", "NAME", "virtio-serial port (default " GUESTPROTO_PORT ")" },
	{ 'D', "device", "PATH", "write to PATH instead of looking the port up" },
	{ 'a', "aggregate", "[=force]", "confine each hot process to one virtual LLC" },
	{ 't', "tolerance", "N", "aggregation size guard (default 1; 0 off, >=100 no guard)" },
	{ OPT_TIMEOUT, "timeout", "N", "periods not hot before a process is released (default 5)" },
	{ 'r', "report-only", NULL, "never change affinities (with -a: say what it would do)" },
	{ '1', "once", NULL, "one window, one report, exit" },
	{ 's', "stdout", NULL, "write reports to stdout instead of the port" },
	{ OPT_PROC, "proc", "DIR", "proc root (default /proc)" },
	{ OPT_SYS, "sys", "DIR", "sysfs root (default /sys)" },
	{ 'v', "verbose", NULL, "say what happens (repeat for every report on stderr)" },
	{ 'V', "version", NULL, "print the version" },
	{ 'h', "help", NULL, "this text" },
	CLIOPT_END
};

static void
usage(FILE *f)
{
	fputs("usage: llc-guest [options]\n", f);
	cliopt_help(options, f);
}

static int
parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	struct cliopt_parser co;
	int c;
	double d;

	cliopt_build(&co, "llc-guest", options, false);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			if (parse_double(optarg, 0.01, 3600, &o->period) < 0)
				goto bad;
			break;
		case 'w':
			if (parse_double(optarg, 0.01, 3600, &o->window) < 0)
				goto bad;
			break;
		case 'T':
			if (parse_double(optarg, 0, 4096, &o->scan.hot_share) < 0)
				goto bad;
			break;
		case 'b':
			if (parse_double(optarg, 0.001, 1, &o->scan.busy_share) < 0)
				goto bad;
			break;
		case 'P':
			o->port = optarg;
			break;
		case 'D':
			o->device = optarg;
			break;
		case 'a':
			if (!optarg)
				o->aggregate = 1;
			else if (strcmp(optarg, "force") == 0)
				o->aggregate = 2;
			else
				goto bad;
			break;
		case 't':
			if (parse_double(optarg, 0, 1000, &d) < 0 || d != floor(d))
				goto bad;
			o->tolerance = (int)d;
			break;
		case OPT_TIMEOUT:
			if (parse_double(optarg, 1, 100000, &d) < 0 || d != floor(d))
				goto bad;
			o->timeout = (int)d;
			break;
		case 'r':
			o->report_only = true;
			break;
		case '1':
			o->once = true;
			break;
		case 's':
			o->to_stdout = true;
			break;
		case OPT_PROC:
			o->proc_root = optarg;
			break;
		case OPT_SYS:
			o->sys_root = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			printf("llc-guest %s (protocol %d)\n", LLCD_VERSION, GUESTPROTO_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "llc-guest: invalid value '%s' for -%c\n", optarg ? optarg : "", c);
		return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "llc-guest: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* ---- the port --------------------------------------------------------- */

struct port {
	int fd;
	char path[512];
	char pending[GUESTPROTO_MAX_LINE];      /* tail of a partial write */
	size_t npending;
	uint64_t dropped, written;
	bool host_gone;                         /* last write could not go */
	bool warned;
};

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Find the port called name: /dev/virtio-ports/NAME (udev), else the
 * vportNpM under /sys/class/virtio-ports whose name matches, opened by its
 * device number (mknod'ed if devtmpfs lacks it). */
static int
port_open(struct port *p, const struct opts *o)
{
	char pat[600], buf[256], dev[600];
	glob_t g;
	int fd = -1;

	if (o->device) {
		snprintf(p->path, sizeof(p->path), "%s", o->device);
		fd = open(p->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_APPEND | O_CREAT, 0644);
		goto out;
	}
	snprintf(p->path, sizeof(p->path), "%s/virtio-ports/%s", o->dev_root, o->port);
	fd = open(p->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 || errno == EBUSY)
		goto out;
	snprintf(pat, sizeof(pat), "%s/class/virtio-ports/*/name", o->sys_root);
	if (glob(pat, 0, NULL, &g) != 0) {
		errno = ENOENT;
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc && fd < 0; i++) {
		char *slash, port[64];
		unsigned maj, min;
		struct stat st;

		if (read_line(g.gl_pathv[i], buf, sizeof(buf)) < 0 || strcmp(buf, o->port) != 0)
			continue;
		/* .../virtio-ports/vportNpM/name -> port vportNpM, .../vportNpM/dev */
		snprintf(dev, sizeof(dev), "%s", g.gl_pathv[i]);
		slash = strrchr(dev, '/');
		*slash = '\0';
		snprintf(port, sizeof(port), "%s", strrchr(dev, '/') + 1);
		snprintf(slash, sizeof(dev) - (size_t)(slash - dev), "/dev");
		if (read_line(dev, buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		snprintf(p->path, sizeof(p->path), "%s/%s", o->dev_root, port);
		if (stat(p->path, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(maj, min)) {
			/* no devtmpfs node (or a wrong one): make our own */
			snprintf(p->path, sizeof(p->path), "%s/llc-guest-%s", o->dev_root, port);
			unlink(p->path);
			if (mknod(p->path, S_IFCHR | 0600, makedev(maj, min)) < 0) {
				snprintf(p->path, sizeof(p->path), "/tmp/llc-guest-%s", port);
				unlink(p->path);
				if (mknod(p->path, S_IFCHR | 0600, makedev(maj, min)) < 0)
					continue;
			}
		}
		fd = open(p->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	}
	globfree(&g);
	if (fd < 0 && errno == 0)
		errno = ENOENT;
out:
	if (fd >= 0)
		p->fd = fd;
	return fd;
}

/* Write one line without ever blocking: finish a partial line first; if the
 * host is not reading (EAGAIN: virtio-serial says so while the host side is
 * closed), drop the line and count it. */
static void
port_write(struct port *p, const char *line, size_t len, int verbose)
{
	ssize_t n;

	if (p->npending) {
		n = write(p->fd, p->pending, p->npending);
		if (n > 0) {
			memmove(p->pending, p->pending + n, p->npending - (size_t)n);
			p->npending -= (size_t)n;
		}
		if (p->npending) {
			p->dropped++;
			goto failed;
		}
	}
	n = write(p->fd, line, len);
	if (n == (ssize_t)len) {
		p->written++;
		if (p->host_gone && verbose)
			fprintf(stderr, "llc-guest: %s: host is reading again (%llu lines dropped so far)\n",
			        p->path, (unsigned long long)p->dropped);
		p->host_gone = false;
		return;
	}
	if (n > 0) {            /* the rest goes first next period */
		memcpy(p->pending, line + n, len - (size_t)n);
		p->npending = len - (size_t)n;
		p->written++;
		return;
	}
	p->dropped++;
failed:
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		if (!p->host_gone && verbose)
			fprintf(stderr, "llc-guest: %s: host not reading, dropping reports\n", p->path);
		p->host_gone = true;
		return;
	}
	fprintf(stderr, "llc-guest: %s: write: %s; reopening\n", p->path, strerror(errno));
	close(p->fd);
	p->fd = -1;
	p->npending = 0;
}

/* ---- main --------------------------------------------------------------- */

static bool
kernel_cas_enabled(const char *sys_root)
{
	char path[512], buf[32];

	snprintf(path, sizeof(path), "%s/kernel/debug/sched/llc_balancing/enabled", sys_root);
	return read_line(path, buf, sizeof(buf)) == 0 && atoi(buf) == 1;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.period = 1, .window = 2,
		.scan = { .hot_share = 0.5, .busy_share = 0.25 },
		.port = GUESTPROTO_PORT, .proc_root = "/proc", .sys_root = "/sys", .dev_root = "/dev",
		.tolerance = 1, .timeout = 5,
	};
	struct port port = { .fd = -1 };
	struct gtopo *topo;
	struct gaggr *aggr = NULL;
	struct gscan_snap **ring;
	struct gscan_hotlist hot = { 0 };
	struct llcd_err err = { "" };
	int nring, cur = 0, have = 0, rc = 0;
	uint64_t seq = 0, next;
	char line[GUESTPROTO_MAX_LINE + 1], list[256];
	bool warned_open = false;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	o.scan.hz = sysconf(_SC_CLK_TCK);
	topo = malloc(sizeof(*topo));
	if (!topo || gtopo_read(topo, o.sys_root, &err) < 0) {
		fprintf(stderr, "llc-guest: topology: %s\n", topo ? err.msg : "out of memory");
		return 1;
	}
	if (o.verbose) {
		fprintf(stderr, "llc-guest: %d CPUs, %d virtual LLCs (L%d), SMT%d:", cpuset_count(&topo->online),
		        topo->nllc, topo->cache_level, topo->smt);
		for (int l = 0; l < topo->nllc; l++) {
			cpuset_format(&topo->llc[l], list, sizeof(list));
			fprintf(stderr, " %s", list);
		}
		fprintf(stderr, "\n");
	}
	if (o.aggregate) {
		if (kernel_cas_enabled(o.sys_root) && o.aggregate != 2) {
			fprintf(stderr, "llc-guest: the guest kernel does cache-aware scheduling "
			        "(%s/kernel/debug/sched/llc_balancing/enabled is 1): reporting only; "
			        "--aggregate=force aggregates anyway\n", o.sys_root);
			o.aggregate = 0;
		}
	}
	if (o.aggregate) {
		struct gaggr_opts ao;

		gaggr_opts_default(&ao, topo);
		ao.rules.aggr_tolerance = o.tolerance;
		ao.timeout = o.timeout;
		ao.dry_run = o.report_only;
		ao.log = stderr;
		aggr = gaggr_new(topo, &ao);
		if (!aggr) {
			fprintf(stderr, "llc-guest: out of memory\n");
			return 1;
		}
		if (topo->nllc < 2)
			fprintf(stderr, "llc-guest: one virtual LLC: nothing to aggregate, reporting only\n");
	}
	nring = (int)lround(o.window / o.period);
	if (nring < 1)
		nring = 1;
	nring++;
	ring = calloc((size_t)nring, sizeof(*ring));
	for (int i = 0; ring && i < nring; i++) {
		ring[i] = gscan_snap_new();
		if (!ring[i])
			ring = NULL;
	}
	if (!ring) {
		fprintf(stderr, "llc-guest: out of memory\n");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);

	next = llcd_mono_ns();
	while (!quit) {
		uint64_t t = llcd_mono_ns();
		struct gscan_snap *now = ring[cur], *old;
		int omitted = 0, len;

		if (gscan_read(now, o.proc_root, t, &err) < 0) {
			fprintf(stderr, "llc-guest: %s\n", err.msg);
			rc = 1;
			break;
		}
		have = have < nring ? have + 1 : nring;
		if (have == 1) {                /* nothing to compare with yet */
			cur = (cur + 1) % nring;
			next += (uint64_t)((o.once ? o.window : o.period) * 1e9);
			sleep_until(next);
			continue;
		}
		old = ring[(cur + nring - (have - 1)) % nring];
		cur = (cur + 1) % nring;
		if (gscan_hot(old, now, topo, &o.scan, &hot, &err) < 0) {
			fprintf(stderr, "llc-guest: %s\n", err.msg);
			rc = 1;
			break;
		}
		if (aggr && topo->nllc > 1)
			gaggr_step(aggr, &hot, now);
		len = greport_line(line, sizeof(line),
		    &(struct greport_hdr){ (double)t / 1e9, ++seq, port.dropped },
		    topo, &hot, aggr, &omitted);
		if (len > 0) {
			if (o.to_stdout) {
				fwrite(line, 1, (size_t)len, stdout);
				fflush(stdout);
			} else {
				if (port.fd < 0) {
					if (port_open(&port, &o) < 0) {
						port.dropped++;
						if (!warned_open)
							fprintf(stderr, "llc-guest: port %s: %s (retrying every period)\n",
							        o.port, strerror(errno));
						warned_open = true;
					} else {
						if (warned_open || o.verbose)
							fprintf(stderr, "llc-guest: writing reports to %s\n", port.path);
						warned_open = false;
					}
				}
				if (port.fd >= 0)
					port_write(&port, line, (size_t)len, o.verbose);
				if (o.verbose > 1)
					fputs(line, stderr);
			}
		}
		if (omitted && o.verbose)
			fprintf(stderr, "llc-guest: %d hot processes left out of the report\n", omitted);
		if (o.once)
			break;
		next += (uint64_t)(o.period * 1e9);
		if (next < llcd_mono_ns())            /* we fell behind: do not catch up */
			next = llcd_mono_ns();
		sleep_until(next);
	}
	if (aggr) {
		if (quit && gscan_read(ring[cur], o.proc_root, llcd_mono_ns(), &err) == 0)
			gaggr_release_all(aggr, ring[cur]);
		gaggr_free(aggr);
	}
	gscan_hotlist_free(&hot);
	for (int i = 0; i < nring; i++)
		gscan_snap_free(ring[i]);
	free(ring);
	free(topo);
	if (port.fd >= 0)
		close(port.fd);
	return rc;
}
