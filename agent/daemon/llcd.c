// SPDX-License-Identifier: GPL-2.0-or-later
/* llcd - place KVM guests' vCPU threads on host last-level caches.
 * See llcd(8), llcd.conf(5) and docs/. The same daemon on a simulated host
 * is llcd-sim (sim/llcd-sim.c); llcd links nothing of the simulator. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cliopt.h"
#include "config.h"
#include "daemon.h"
#include "daemon_cli.h"
#include "fileio.h"
#include "live.h"
#include "log.h"
#include "qmpback.h"
#include "topo_hwloc.h"

#define DEFAULT_CONFIG "/etc/llcd/llcd.conf"

/* STATUS= of the service: waiting for libvirt, or connected */
static bool
connected(void *arg)
{
	return live_connected(arg);
}

enum { OPT_SIMULATE = DAEMON_CLI_OPT_LAST };

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt opts[] = {
	DAEMON_CLI_ROW_DEBUG,
	{ 'n', "check", NULL, "check the configuration and exit (-nv: print it normalised)" },
	DAEMON_CLI_ROW_VERBOSE,
	{ 'f', "config", "FILE", "configuration file (default " DEFAULT_CONFIG "; a missing default is fine)" },
	{ DAEMON_CLI_OPT_TOPOLOGY, "topology", "SRC",
	  "host topology: hwloc XML file or synthetic string (default: live host)" },
	{ DAEMON_CLI_OPT_URI, "uri", "URI", "libvirt URI (default qemu:///system)" },
	{ DAEMON_CLI_OPT_SOCKET, "socket", "PATH", "control socket (default /run/llcd/llcd.sock)" },
	{ DAEMON_CLI_OPT_PERIOD, "period-ms", "MS", "sampling period (default 1000)" },
	DAEMON_CLI_ROW_ONESHOT,
	DAEMON_CLI_ROW_DRY_RUN,
	{ OPT_SIMULATE, "simulate", "FILE", "moved: run llcd-sim FILE instead (llcd-sim(8)); exits 2" },
	DAEMON_CLI_ROW_HELP,
	CLIOPT_END
};

static void
usage(FILE *f)
{
	fputs("usage: llcd [-d] [-n] [-v] [-f FILE] [--topology SPEC|FILE.xml] [--uri URI]\n"
	      "            [--socket PATH] [--period-ms MS] [--oneshot] [--dry-run]\n", f);
	cliopt_help(opts, f);
	fputs("On a simulated host: llcd-sim SCENARIO.json (llcd-sim(8)).\n", f);
}

/* llcd keeps descriptors open per domain (its QEMU's task directory and
 * cgroup file) and per vCPU thread (the counters): the soft limit of open
 * files is raised to the hard one (systemd's default is 1024 soft, 524288
 * hard), as llcd starts nothing that could mind (no child, poll() only). */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rlim_t was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_debug("open files: the soft limit raised from %llu to the hard one, %llu", (unsigned long long)was,
		    (unsigned long long)rl.rlim_max);
	else
		log_warn("open files: the soft limit stays %llu (setrlimit)", (unsigned long long)was);
}

/* A topology given in the configuration (synthetic string or hwloc XML)
 * must name only CPUs this host has online: the live back-end pins to
 * them. A synthetic topology's PUs are OS CPUs 0..N-1 (llcd.conf(5)).
 * Seam: libvirt's test driver (a test:// URI) pins nothing in the kernel
 * (its domains have no QEMU and no threads), so any topology goes there;
 * that is how the scale tests run a large host on a small machine. */
static int
check_topology_cpus(const struct config *cfg, const struct topo *t)
{
	char missing_s[256], online_s[256];
	struct cpuset online, missing;
	struct llcd_err err;

	if (cfg->topology[0] == '\0')
		return 0;               /* the live host itself */
	if (strncmp(cfg->uri, "test:", 5) == 0)
		return 0;               /* libvirt's test driver: no kernel pins */
	if (llcd_online_cpus(NULL, &online, &err) != 0)
		return 0;               /* nothing to check against */
	cpuset_andnot(&missing, &t->all, &online);
	if (cpuset_empty(&missing))
		return 0;
	cpuset_format(&missing, missing_s, sizeof(missing_s));
	cpuset_format(&online, online_s, sizeof(online_s));
	fprintf(stderr, "llcd: topology '%s' names CPUs %s, which this host does not have online (online: %s); "
	    "a synthetic topology's PUs are OS CPUs 0..N-1\n", cfg->topology, missing_s, online_s);
	return 1;
}

/* --simulate SCENARIO: llcd-sim's now. */
static int
simulate_moved(struct daemon_cli *cli, int c, const char *arg)
{
	(void)cli;
	if (c != OPT_SIMULATE)
		return -1;
	fprintf(stderr, "llcd: --simulate is a program of its own now: llcd-sim %s [options] (llcd-sim(8))\n", arg);
	return 2;
}

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	struct daemon_cli cli = { .prog = "llcd", .default_config = DEFAULT_CONFIG };
	int rc;
	struct config cfg;
	struct llcd_err err;
	struct topo *topo = NULL;
	struct live *live = NULL;
	struct daemon_backend be;

	cliopt_build(&co, "llcd", opts, false);
	if ((rc = daemon_cli_options(&cli, argc, argv, &co, usage, simulate_moved)) >= 0)
		return rc;
	if ((rc = daemon_cli_check_args(&cli, argc, argv, optind, usage)) != 0)
		return rc;

	config_defaults(&cfg);
	if ((rc = daemon_cli_config(&cli, &cfg)) != 0)
		return rc;
	if ((topo = topo_load(cfg.topology, &err)) == NULL) {
		fprintf(stderr, cli.check ? "llcd: topology: %s\n" : "llcd: %s\n", err.msg);
		return 1;
	}
	/* runtime tunes are kept beside the state file (llcd.conf(5)) */
	char tunes[CONFIG_PATH_MAX + 8];
	snprintf(tunes, sizeof(tunes), "%s/tunes", cfg.state_dir);
	cli.tunes_file = tunes;
	if (check_topology_cpus(&cfg, topo) != 0) {
		topo_free(topo);
		return 1;
	}
	if (cli.check) {
		/* the host settings must also fit the topology they will run on */
		rc = daemon_cli_check(&cli, &cfg, topo);
		topo_free(topo);
		return rc;
	}
	daemon_cli_log(&cli, &cfg);
	raise_nofile();

	/* the live back-end: libvirt, /proc, core scheduling (live.h) */
	struct live_config lc;
	memset(&lc, 0, sizeof(lc));
	lc.uri = cfg.backend == CONFIG_BACKEND_QMP ? LIVE_URI_NONE : cfg.uri[0] ? cfg.uri : NULL;
	lc.topo = topo;
	lc.allow_qmp_passthrough = cfg.qmp_passthrough;
	lc.state_dir = cfg.state_dir;
	lc.dry_run = cli.dry;
	lc.guest_channel_dir = cfg.guest_channel_dir;
	lc.socket_glob = cfg.backend == CONFIG_BACKEND_QMP ? NULL : cfg.libvirt_socket_glob;
	lc.socket_uri = cfg.libvirt_socket_uri;
	lc.counters = cfg.counters;
	lc.sampler = cfg.sampler;
	if (cpuset_parse(&lc.reserved, cfg.reserved, &err) < 0 ||
	    (live = live_new(&lc, &err)) == NULL) {
		fprintf(stderr, "llcd: %s\n", err.msg);
		topo_free(topo);
		return 1;
	}
	struct qmpback *qb = NULL;
	be = (struct daemon_backend){ .name = "libvirt", .ops = &live_agent_ops, .ops_ctx = live,
	                              .query = &live_query, .hooks = &live_hooks, .ctx = live };
	cli.connected = connected;
	cli.connected_arg = live;
	if (cfg.backend == CONFIG_BACKEND_QMP) {
		/* QEMU without libvirt (Proxmox VE): QMP sockets (qmpback.h) */
		struct qmpback_config qc = {
			.socket_glob = cfg.qmp_socket_glob, .policy_dir = cfg.policy_dir,
			.channel_path = cfg.guest_channel_path, .hold = cfg.qmp_hold,
		};
		if ((qb = qmpback_new(live, &qc, &err)) == NULL) {
			fprintf(stderr, "llcd: %s\n", err.msg);
			live_free(live);
			topo_free(topo);
			return 1;
		}
		be.name = "qmp";
		be.vm_config = DAEMON_VM_CONFIG_LINES;
		cli.connected = NULL;
	}
	cli.watch_cpus = cfg.topology[0] == '\0';
	rc = daemon_cli_serve(&cli, &cfg, topo, &be);
	qmpback_free(qb);
	live_free(live);
	topo_free(topo);
	return rc;
}
