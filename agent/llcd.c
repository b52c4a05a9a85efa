/* llcd - place KVM guests' vCPU threads on host last-level caches.
 * See llcd(8), llcd.conf(5) and docs/. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "clock.h"
#include "config.h"
#include "daemon.h"
#include "live_backend.h"
#include "log.h"
#include "simbackend.h"
#include "topo_hwloc.h"

#define DEFAULT_CONFIG "/etc/llcd/llcd.conf"

static struct daemon *the_daemon;

/* The service manager hears from llcd after each period: READY=1 after
 * the first one (the socket listens, the topology is read, the domains
 * libvirt lists are observed and placed), STATUS= whenever the libvirt
 * connection comes or goes. Without libvirt llcd is ready too, and says
 * that it waits (systemctl status llcd). */
struct notify_ctx {
	struct live *live;
	const char *uri;
	int connected;                  /* -1 not told yet */
	bool ready;
};

static void
notify_period(void *arg)
{
#ifdef HAVE_SYSTEMD
	struct notify_ctx *n = arg;
	int c = n->live ? live_connected(n->live) : 1;

	if (c != n->connected) {
		if (n->live && !c)
			sd_notifyf(0, "STATUS=waiting for libvirt at %s (retrying, backoff up to 30 s); pins stay as they are",
			    n->uri);
		else if (n->live)
			sd_notifyf(0, "STATUS=connected to libvirt at %s", n->uri);
		else
			sd_notify(0, "STATUS=simulated host");
		n->connected = c;
	}
	if (!n->ready) {
		sd_notify(0, "READY=1");
		n->ready = true;
	}
#else
	(void)arg;
#endif
}

static void
on_signal(int sig)
{
	if (the_daemon == NULL)
		return;
	if (sig == SIGHUP)
		daemon_request_reload(the_daemon);
	else
		daemon_stop(the_daemon);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: llcd [-d] [-n] [-v] [-f FILE] [--topology SPEC|FILE.xml] [--uri URI]\n"
	    "            [--socket PATH] [--period-ms MS] [--simulate SCENARIO.json]\n"
	    "            [--oneshot] [--dry-run]\n"
	    "  -d, --debug        stay in the foreground and log to stderr (-dv: debug messages)\n"
	    "  -n, --check        check the configuration and exit (-nv: print it normalised)\n"
	    "  -v, --verbose      more output (repeatable)\n"
	    "  -f, --config FILE  configuration file (default %s; a missing default is fine)\n"
	    "  --topology SRC     host topology: hwloc XML file or synthetic string (default: live host)\n"
	    "  --uri URI          libvirt URI (default qemu:///system)\n"
	    "  --socket PATH      control socket (default /run/llcd/llcd.sock)\n"
	    "  --period-ms MS     sampling period (default 1000)\n"
	    "  --simulate FILE    run on llcsim's simulated host described by FILE\n"
	    "  --oneshot          run one period and exit\n"
	    "  --dry-run          with --oneshot: print the plan as JSON lines, apply nothing\n",
	    DEFAULT_CONFIG);
}

static enum agent_result
dry_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	(void)ctx;
	(void)a;
	(void)err;
	return AGENT_OK;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "debug", no_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "config", required_argument, NULL, 'f' },
		{ "topology", required_argument, NULL, 't' },
		{ "uri", required_argument, NULL, 'u' },
		{ "socket", required_argument, NULL, 's' },
		{ "period-ms", required_argument, NULL, 'p' },
		{ "simulate", required_argument, NULL, 'S' },
		{ "oneshot", no_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = NULL, *simulate = NULL;
	const char *o_topology = NULL, *o_uri = NULL, *o_socket = NULL, *o_period = NULL;
	bool foreground = false, check = false, oneshot = false, dry = false;
	int verbose = 0, c, rc = 1;
	struct config cfg;
	struct llcd_err err;
	struct topo *topo = NULL;
	struct simbe *sim = NULL;
	struct live *live = NULL;
	struct daemon_backend be;
	struct agent_ops dry_ops;

	while ((c = getopt_long(argc, argv, "dnvf:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': foreground = true; break;
		case 'n': check = true; break;
		case 'v': verbose++; break;
		case 'f': config_path = optarg; break;
		case 't': o_topology = optarg; break;
		case 'u': o_uri = optarg; break;
		case 's': o_socket = optarg; break;
		case 'p': o_period = optarg; break;
		case 'S': simulate = optarg; break;
		case 'o': oneshot = true; break;
		case 'D': dry = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "llcd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (dry && !oneshot) {
		fprintf(stderr, "llcd: --dry-run goes with --oneshot\n");
		return 2;
	}

	config_defaults(&cfg);
	if (config_load(&cfg, config_path ? config_path : DEFAULT_CONFIG, config_path == NULL, &err) < 0) {
		fprintf(stderr, "llcd: %s\n", err.msg);
		return 1;
	}
	if ((o_topology && config_set(&cfg, "topology", o_topology, &err) < 0) ||
	    (o_uri && config_set(&cfg, "uri", o_uri, &err) < 0) ||
	    (o_socket && config_set(&cfg, "socket", o_socket, &err) < 0) ||
	    (o_period && config_set(&cfg, "period-ms", o_period, &err) < 0)) {
		fprintf(stderr, "llcd: option: %s\n", err.msg);
		return 2;
	}
	if (check) {
		/* the host settings must also fit the topology they will run on */
		struct topo *t = topo_load(cfg.topology, &err);
		struct daemon_backend nb = { .name = "check", .ops = NULL };
		(void)nb;
		if (t == NULL) {
			fprintf(stderr, "llcd: topology: %s\n", err.msg);
			return 1;
		}
		struct cpuset r;
		if (cpuset_parse(&r, cfg.reserved, &err) == 0 && !cpuset_subset(&r, &t->all)) {
			fprintf(stderr, "llcd: reserved-cpus: %s names CPUs this host (%s) does not have\n", cfg.reserved, t->desc);
			topo_free(t);
			return 1;
		}
		topo_free(t);
		if (verbose)
			config_print(&cfg, stdout);
		else
			printf("llcd: configuration OK\n");
		return 0;
	}
	log_init(foreground || oneshot, cfg.log_level + verbose);

	if (simulate) {
		if ((sim = simbe_new(simulate, &err)) == NULL) {
			fprintf(stderr, "llcd: --simulate: %s\n", err.msg);
			return 1;
		}
		simbe_backend(sim, &be);
		cfg.period_ms = o_period ? cfg.period_ms : (int)simbe_period_ms(sim);
		if (cfg.reserved[0] == '\0')
			simbe_reserved(sim, cfg.reserved, sizeof(cfg.reserved));
	} else {
		if ((topo = topo_load(cfg.topology, &err)) == NULL) {
			fprintf(stderr, "llcd: %s\n", err.msg);
			return 1;
		}
		/* the live back-end: libvirt, /proc, core scheduling (live.h) */
		struct live_config lc;
		memset(&lc, 0, sizeof(lc));
		lc.uri = cfg.uri[0] ? cfg.uri : NULL;
		lc.topo = topo;
		lc.allow_qmp_passthrough = cfg.qmp_passthrough;
		lc.state_dir = cfg.state_dir;
		lc.dry_run = dry;
		lc.guest_channel_dir = cfg.guest_channel_dir;
		lc.counters = (int)cfg.counters;        /* the same values */
		if (cpuset_parse(&lc.reserved, cfg.reserved, &err) < 0 ||
		    (live = live_new(&lc, &err)) == NULL) {
			fprintf(stderr, "llcd: %s\n", err.msg);
			topo_free(topo);
			return 1;
		}
		live_backend_fill(live, &be);
	}
	if (dry) {
		dry_ops = *be.ops;
		dry_ops.apply = dry_apply;
		be.ops = &dry_ops;
	}
	/* reload re-reads the file llcd started with: -f, or the default
	 * when it exists */
	if (config_path == NULL && access(DEFAULT_CONFIG, R_OK) == 0)
		config_path = DEFAULT_CONFIG;
	the_daemon = daemon_new(&cfg, config_path, sim ? simbe_topo(sim) : topo, &be, &err);
	if (the_daemon == NULL) {
		fprintf(stderr, "llcd: %s\n", err.msg);
		goto out;
	}
	{
		const char *kv[8];
		int n = 0;
		if (o_topology) { kv[2 * n] = "topology"; kv[2 * n + 1] = o_topology; n++; }
		if (o_uri) { kv[2 * n] = "uri"; kv[2 * n + 1] = o_uri; n++; }
		if (o_socket) { kv[2 * n] = "socket"; kv[2 * n + 1] = o_socket; n++; }
		if (o_period || simulate) {
			static char p[16];
			snprintf(p, sizeof(p), "%d", cfg.period_ms);
			kv[2 * n] = "period-ms";
			kv[2 * n + 1] = p;
			n++;
		}
		daemon_set_overrides(the_daemon, kv, n, &err);
		/* CPU hotplug: re-read the live host when its online CPUs change */
		if (!simulate && cfg.topology[0] == '\0')
			daemon_watch_cpus(the_daemon, true);
	}
	if (oneshot) {
		if (daemon_step(the_daemon, llcd_mono_ns(), &err) < 0) {
			fprintf(stderr, "llcd: %s\n", err.msg);
			goto out;
		}
		daemon_print_plan(the_daemon, stdout);
		rc = 0;
		goto out;
	}
	/* the socket's directory (e.g. /run/llcd) */
	char dir[CONFIG_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", cfg.socket);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "llcd: cannot create %s: %s\n", dir, strerror(errno));
			goto out;
		}
	}
	if (daemon_listen(the_daemon, &err) < 0) {
		fprintf(stderr, "llcd: %s\n", err.msg);
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_info("llcd %s started: %s back-end, period %d ms, socket %s", LLCD_VERSION, be.name, cfg.period_ms, cfg.socket);
	struct notify_ctx nctx = { live, cfg.uri, -1, false };
	daemon_set_period_hook(the_daemon, notify_period, &nctx);
	rc = daemon_run(the_daemon);
#ifdef HAVE_SYSTEMD
	sd_notify(0, "STOPPING=1");
#endif
	log_info("llcd stopping: pins stay where they are (fail-static)");
out:
	daemon_free(the_daemon);
	the_daemon = NULL;
	live_free(live);
	topo_free(topo);
	simbe_free(sim);
	return rc;
}
