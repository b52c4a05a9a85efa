// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon_cli.c - the start-up and serving llcd and llcd-sim share. */
#include "daemon_cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "clock.h"
#include "log.h"

static struct daemon *the_daemon;

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

int
daemon_cli_check_args(const struct daemon_cli *cli, int argc, char **argv, int optind, void (*usage)(FILE *f))
{
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", cli->prog, argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cli->dry && !cli->oneshot) {
		fprintf(stderr, "%s: --dry-run goes with --oneshot\n", cli->prog);
		return 2;
	}
	return 0;
}

int
daemon_cli_options(struct daemon_cli *cli, int argc, char **argv, const struct cliopt_parser *co,
                   void (*usage)(FILE *f), int (*own)(struct daemon_cli *cli, int c, const char *arg))
{
	int c, rc;

	while ((c = cliopt_getopt(co, argc, argv)) != -1) {
		switch (c) {
		case 'd': cli->foreground = true; break;
		case 'n': cli->check = true; break;
		case 'v': cli->verbose++; break;
		case 'f': cli->config_path = optarg; break;
		case DAEMON_CLI_OPT_TOPOLOGY: cli->topology = optarg; break;
		case DAEMON_CLI_OPT_URI: cli->uri = optarg; break;
		case DAEMON_CLI_OPT_SOCKET: cli->socket = optarg; break;
		case DAEMON_CLI_OPT_PERIOD: cli->period = optarg; break;
		case DAEMON_CLI_OPT_ONESHOT: cli->oneshot = true; break;
		case DAEMON_CLI_OPT_DRY_RUN: cli->dry = true; break;
		case 'h': usage(stdout); return 0;
		case '?': usage(stderr); return 2;
		default:
			if (own == NULL) {
				usage(stderr);
				return 2;
			}
			if ((rc = own(cli, c, optarg)) >= 0)
				return rc;
		}
	}
	return -1;
}

int
daemon_cli_config(struct daemon_cli *cli, struct config *cfg)
{
	struct llcd_err err;
	const char *path = cli->config_path ? cli->config_path : cli->default_config;

	if (path && config_load(cfg, path, cli->config_path == NULL, &err) < 0) {
		fprintf(stderr, "%s: %s\n", cli->prog, err.msg);
		return 1;
	}
	if ((cli->topology && config_set(cfg, "topology", cli->topology, &err) < 0) ||
	    (cli->uri && config_set(cfg, "uri", cli->uri, &err) < 0) ||
	    (cli->socket && config_set(cfg, "socket", cli->socket, &err) < 0) ||
	    (cli->period && config_set(cfg, "period-ms", cli->period, &err) < 0)) {
		fprintf(stderr, "%s: option: %s\n", cli->prog, err.msg);
		return 2;
	}
	/* reload re-reads the file the daemon started with: -f, or the
	 * default when it exists */
	if (cli->config_path == NULL && cli->default_config && access(cli->default_config, R_OK) == 0)
		cli->config_path = cli->default_config;
	return 0;
}

int
daemon_cli_check(const struct daemon_cli *cli, const struct config *cfg, const struct topo *t)
{
	struct cpuset r;
	struct llcd_err err;

	if (cpuset_parse(&r, cfg->reserved, &err) == 0 && !cpuset_subset(&r, &t->all)) {
		fprintf(stderr, "%s: reserved-cpus: %s names CPUs this host (%s) does not have\n", cli->prog,
		    cfg->reserved, t->desc);
		return 1;
	}
	if (cli->verbose) {
		config_print(cfg, stdout);
		char kv[DAEMON_MAX_TUNES][2][CONFIG_PATH_MAX];
		int n = cli->tunes_file ? daemon_read_tunes(cli->tunes_file, kv, DAEMON_MAX_TUNES) : 0;
		if (n > 0)
			printf("# runtime tunes from %s, applied over the above at start\n"
			    "# (a reload or 'llcctl tune --reset' drops them):\n", cli->tunes_file);
		for (int i = 0; i < n; i++)
			printf("# %s %s\n", kv[i][0], kv[i][1]);
	} else {
		printf("%s: configuration OK\n", cli->prog);
	}
	return 0;
}

void
daemon_cli_log(const struct daemon_cli *cli, const struct config *cfg)
{
	log_init(cli->foreground || cli->oneshot, cfg->log_level + cli->verbose);
}

static enum agent_result
dry_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	(void)ctx;
	(void)a;
	(void)err;
	return AGENT_OK;
}

/* the socket's directory (e.g. /run/llcd) */
static int
make_socket_dir(const struct daemon_cli *cli, const char *socket)
{
	char dir[CONFIG_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", socket);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", cli->prog, dir, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The service manager hears from llcd after each period: READY=1 after
 * the first one (the socket listens, the topology is read, the domains
 * libvirt lists are observed and placed), STATUS= whenever the libvirt
 * connection comes or goes. Without libvirt llcd is ready too, and says
 * that it waits (systemctl status llcd). */
struct notify_ctx {
	const struct daemon_cli *cli;
	const char *uri;
	int connected;                  /* -1 not told yet */
	bool ready;
};

static void
notify_period(void *arg)
{
#ifdef HAVE_SYSTEMD
	struct notify_ctx *n = arg;
	int c = n->cli->connected ? n->cli->connected(n->cli->connected_arg) : 1;

	if (c != n->connected) {
		if (n->cli->connected && !c)
			sd_notifyf(0, "STATUS=waiting for libvirt at %s (retrying, backoff up to 30 s); pins stay as they are",
			    n->uri);
		else if (n->cli->connected)
			sd_notifyf(0, "STATUS=connected to libvirt at %s", n->uri);
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

int
daemon_cli_serve(struct daemon_cli *cli, const struct config *cfg, const struct topo *t,
                 const struct daemon_backend *bein)
{
	struct daemon_backend be = *bein;
	struct agent_ops dry_ops;
	struct llcd_err err;
	int rc = 1;

	if (cli->dry) {
		dry_ops = *be.ops;
		dry_ops.apply = dry_apply;
		be.ops = &dry_ops;
	}
	the_daemon = daemon_new(cfg, cli->config_path, t, &be, &err);
	if (the_daemon == NULL) {
		fprintf(stderr, "%s: %s\n", cli->prog, err.msg);
		goto out;
	}
	{
		const char *kv[8];
		char p[16];
		int n = 0;
		if (cli->topology) { kv[2 * n] = "topology"; kv[2 * n + 1] = cli->topology; n++; }
		if (cli->uri) { kv[2 * n] = "uri"; kv[2 * n + 1] = cli->uri; n++; }
		if (cli->socket) { kv[2 * n] = "socket"; kv[2 * n + 1] = cli->socket; n++; }
		if (cli->period || cli->period_is_override) {
			snprintf(p, sizeof(p), "%d", cfg->period_ms);
			kv[2 * n] = "period-ms";
			kv[2 * n + 1] = p;
			n++;
		}
		daemon_set_overrides(the_daemon, kv, n, &err);
		if (cli->tunes_file && daemon_set_tunes_file(the_daemon, cli->tunes_file, &err) < 0)
			log_warnx("runtime tunes not kept: %s", err.msg);
		/* CPU hotplug: re-read the live host when its online CPUs change */
		if (cli->watch_cpus)
			daemon_watch_cpus(the_daemon, true);
	}
	if (cli->oneshot) {
		if (daemon_step(the_daemon, llcd_mono_ns(), &err) < 0) {
			fprintf(stderr, "%s: %s\n", cli->prog, err.msg);
			goto out;
		}
		daemon_print_plan(the_daemon, stdout);
		rc = 0;
		goto out;
	}
	if (make_socket_dir(cli, cfg->socket) < 0)
		goto out;
	if (daemon_listen(the_daemon, &err) < 0) {
		fprintf(stderr, "%s: %s\n", cli->prog, err.msg);
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_info("%s %s started: %s back-end, period %d ms, socket %s", cli->prog, LLCD_VERSION, be.name ? be.name : be.ops->name,
	    cfg->period_ms, cfg->socket);
	struct notify_ctx nctx = { cli, cfg->uri, -1, false };
	daemon_set_period_hook(the_daemon, notify_period, &nctx);
	rc = daemon_run(the_daemon);
#ifdef HAVE_SYSTEMD
	sd_notify(0, "STOPPING=1");
#endif
	log_info("%s stopping: pins stay where they are (fail-static)", cli->prog);
out:
	daemon_free(the_daemon);
	the_daemon = NULL;
	return rc;
}
