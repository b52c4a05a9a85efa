// SPDX-License-Identifier: GPL-2.0-or-later
/* llcd-sim - llcd's daemon, control socket and policy on the simulated host
 * of an llcsim scenario: one simulated period per daemon period, so that
 * llcd and llcctl can be tried and tested without libvirt or guests.
 * See llcd-sim(8). The production llcd links none of this. */
#include <stdio.h>
#include <string.h>

#include "cliopt.h"
#include "config.h"
#include "daemon_cli.h"
#include "simbackend.h"

/* not the service's socket (/run/llcd/llcd.sock): a simulated daemon must
 * never answer in place of the real one */
#define SIM_SOCKET "/run/llcd-sim/llcd.sock"

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt opts[] = {
	DAEMON_CLI_ROW_DEBUG,
	{ 'n', "check", NULL, "check the configuration against the scenario's host and exit\n"
	  "(-nv: print it normalised)" },
	DAEMON_CLI_ROW_VERBOSE,
	{ 'f', "config", "FILE", "an llcd.conf(5) file (default: none, the built-in defaults)" },
	{ DAEMON_CLI_OPT_SOCKET, "socket", "PATH", "control socket (default " SIM_SOCKET ")" },
	{ DAEMON_CLI_OPT_PERIOD, "period-ms", "MS", "period (default: the scenario's)" },
	DAEMON_CLI_ROW_ONESHOT,
	DAEMON_CLI_ROW_DRY_RUN,
	DAEMON_CLI_ROW_HELP,
	CLIOPT_END
};

static void
usage(FILE *f)
{
	fputs("usage: llcd-sim [-d] [-n] [-v] [-f FILE] [--socket PATH] [--period-ms MS]\n"
	      "                [--oneshot] [--dry-run] SCENARIO.json\n", f);
	cliopt_help(opts, f);
}

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	struct daemon_cli cli = { .prog = "llcd-sim", .default_config = NULL };
	const char *scenario;
	int rc;
	struct config cfg;
	struct llcd_err err;
	struct simbe *sim;
	struct daemon_backend be;

	cliopt_build(&co, "llcd-sim", opts, false);
	if ((rc = daemon_cli_options(&cli, argc, argv, &co, usage, NULL)) >= 0)
		return rc;
	if (optind >= argc) {
		fprintf(stderr, "llcd-sim: which scenario? (e.g. /usr/share/llcd-sim/scenarios/xiangshan-8ccx.json)\n");
		usage(stderr);
		return 2;
	}
	scenario = argv[optind++];
	if ((rc = daemon_cli_check_args(&cli, argc, argv, optind, usage)) != 0)
		return rc;

	config_defaults(&cfg);
	snprintf(cfg.socket, sizeof(cfg.socket), "%s", SIM_SOCKET);
	if ((rc = daemon_cli_config(&cli, &cfg)) != 0)
		return rc;
	if ((sim = simbe_new(scenario, &err)) == NULL) {
		fprintf(stderr, "llcd-sim: %s\n", err.msg);
		return 1;
	}
	/* the scenario's host, period and reserved CPUs, unless the command
	 * line (period) or the file (reserved-cpus) says otherwise */
	if (cli.period == NULL) {
		cfg.period_ms = (int)simbe_period_ms(sim);
		cli.period_is_override = true;
	}
	if (cfg.reserved[0] == '\0')
		simbe_reserved(sim, cfg.reserved, sizeof(cfg.reserved));
	if (cli.check) {
		rc = daemon_cli_check(&cli, &cfg, simbe_topo(sim));
		simbe_free(sim);
		return rc;
	}
	daemon_cli_log(&cli, &cfg);
	simbe_backend(sim, &be);
	rc = daemon_cli_serve(&cli, &cfg, simbe_topo(sim), &be);
	simbe_free(sim);
	return rc;
}
