// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon_cli.h - what llcd (agent/daemon/llcd.c, the live host) and llcd-sim
 * (sim/llcd-sim.c, a simulated host) share once each has read its own
 * options and made its back-end: the configuration with the command line
 * over the file, `-n`/`-nv`, and serving (--oneshot, or the control socket
 * until SIGTERM, with SIGHUP reloading). */
#ifndef LLCD_DAEMON_CLI_H
#define LLCD_DAEMON_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "cliopt.h"
#include "config.h"
#include "daemon.h"

struct daemon_cli {
	const char *prog;               /* "llcd", "llcd-sim": messages */
	const char *config_path;        /* -f FILE; NULL: default_config */
	const char *default_config;     /* read when it exists; NULL: none */
	/* command-line settings over the file (NULL: not given); they stay
	 * over it across reloads */
	const char *topology, *uri, *socket, *period;
	bool foreground, check, oneshot, dry;
	int verbose;
	bool period_is_override;        /* cfg.period_ms stays over the file (llcd-sim: the scenario's) */
	bool watch_cpus;                /* re-read the live host on CPU hotplug */
	/* whether the back-end reaches libvirt now, for the service manager's
	 * STATUS= (NULL: no libvirt, e.g. a simulated host) */
	bool (*connected)(void *arg);
	void *connected_arg;
	const char *tunes_file;         /* runtime tunes kept across restarts
	                                 * (llcd: STATE-DIR/tunes); NULL: none */
};

/* The options both programs have: their keys, and the rows of those whose
 * words are the same in both (each program's option table lists them with
 * its own; cliopt.h). -n and -f are 'n' and 'f'. */
enum {
	DAEMON_CLI_OPT_TOPOLOGY = CLIOPT_LONG,
	DAEMON_CLI_OPT_URI,
	DAEMON_CLI_OPT_SOCKET,
	DAEMON_CLI_OPT_PERIOD,
	DAEMON_CLI_OPT_ONESHOT,
	DAEMON_CLI_OPT_DRY_RUN,
	DAEMON_CLI_OPT_LAST,            /* a program's own long-only keys start here */
};
#define DAEMON_CLI_ROW_DEBUG \
	{ 'd', "debug", NULL, "stay in the foreground and log to stderr (-dv: debug messages)" }
#define DAEMON_CLI_ROW_VERBOSE { 'v', "verbose", NULL, "more output (repeatable)" }
#define DAEMON_CLI_ROW_ONESHOT { DAEMON_CLI_OPT_ONESHOT, "oneshot", NULL, "run one period and exit" }
#define DAEMON_CLI_ROW_DRY_RUN \
	{ DAEMON_CLI_OPT_DRY_RUN, "dry-run", NULL, "with --oneshot: print the plan as JSON lines, apply nothing" }
#define DAEMON_CLI_ROW_HELP { 'h', "help", NULL, "this help" }

/* Read those options into cli; what is left in argv[optind..] is the
 * caller's (see daemon_cli_check_args). An option of co outside that set
 * goes to own (NULL: none), which returns -1 to go on or an exit code.
 * Returns -1 to go on, or the exit code (0 after --help). */
int daemon_cli_options(struct daemon_cli *cli, int argc, char **argv, const struct cliopt_parser *co,
                       void (*usage)(FILE *f), int (*own)(struct daemon_cli *cli, int c, const char *arg));

/* Load the file into cfg (defaults already in it) and put the command line
 * over it. Returns 0, or the exit code after a message on stderr. */
int daemon_cli_config(struct daemon_cli *cli, struct config *cfg);
/* After the options: no argument left over (argv[optind..]) and --dry-run
 * only with --oneshot. Returns 0, or the exit code (2) after a message on
 * stderr. usage prints the program's usage to a stream. */
int daemon_cli_check_args(const struct daemon_cli *cli, int argc, char **argv, int optind,
                          void (*usage)(FILE *f));
/* -n: the settings must also fit the host t. Returns the exit code. */
int daemon_cli_check(const struct daemon_cli *cli, const struct config *cfg, const struct topo *t);
/* Start logging (-d, -v, log-level). */
void daemon_cli_log(const struct daemon_cli *cli, const struct config *cfg);
/* Run the daemon on be and t (borrowed): one period with --oneshot, else
 * the control socket until a signal. Returns the exit code. */
int daemon_cli_serve(struct daemon_cli *cli, const struct config *cfg, const struct topo *t,
                     const struct daemon_backend *be);

#endif
