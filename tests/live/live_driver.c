// SPDX-License-Identifier: GPL-2.0-or-later
/* live_driver.c - runs the agent loop with the live back-end (live.h) for N
 * periods against a libvirt URI and an hwloc topology, and prints every
 * action of every plan as one JSON line on stdout. A test program, not
 * installed: the e2e tests use it until the daemon (llcd) can be run
 * instead, and it is handy to try the live back-end by hand:
 *
 *   live_driver --topology host.xml --periods 10 --period-ms 1000 -v
 *
 * Options: options[] below (-v: debug log on stderr).
 *
 * Output lines:
 *   {"period":3,"domain":"web","key":"...","action":"pin-vcpu","vcpu":1,
 *    "cpus":"0","result":"ok","reason":"placement: LLC 0 [0] ..."}
 *   {"period":3,"summary":true,"actions":2,"ok":2,...}   when actions > 0
 * SIGTERM / SIGINT end the run after the current period; pins stay.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cliopt.h"
#include "clock.h"
#include "daemon.h"
#include "live.h"
#include "log.h"
#include "loop.h"
#include "topo_hwloc.h"

static volatile sig_atomic_t quit;
static uint64_t cur_period;
static struct live *g_live;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static const char *
domain_name(uint64_t key, char *buf, size_t len)
{
	struct agent_dominfo di;

	snprintf(buf, len, "?");
	if (live_describe(g_live, key, &di) == 0)
		snprintf(buf, len, "%s", di.name);
	agent_dominfo_clear(&di);
	return buf;
}

static void
print_action(const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct json_object *o = json_object_new_object();
	char buf[1024];

	json_object_object_add(o, "period", json_object_new_int64((int64_t)cur_period));
	json_object_object_add(o, "domain", json_object_new_string(domain_name(a->key, buf, sizeof(buf))));
	snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)a->key);
	json_object_object_add(o, "key", json_object_new_string(buf));
	json_object_object_add(o, "action", json_object_new_string(policy_action_name(a->type)));
	json_object_object_add(o, "vcpu", json_object_new_int(a->vcpu));
	if (cpuset_format(&a->cpus, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "?");
	json_object_object_add(o, "cpus", json_object_new_string(buf));
	json_object_object_add(o, "result", json_object_new_string(agent_result_name(r)));
	if (msg && *msg)
		json_object_object_add(o, "error", json_object_new_string(msg));
	json_object_object_add(o, "reason", json_object_new_string(a->reason));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
}

/* The live ops, printing every action with its result. */
static int
drv_observe(void *ctx, uint64_t now_ns, struct agent_obs *obs, struct llcd_err *err)
{
	return live_agent_ops.observe(ctx, now_ns, obs, err);
}

static enum agent_result
drv_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	enum agent_result r = live_agent_ops.apply(ctx, a, err);

	print_action(a, r, r == AGENT_OK ? NULL : err->msg);
	return r;
}

static void
drv_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	live_agent_ops.report(ctx, a, r, msg);
}

static const struct agent_ops drv_ops = {
	.name = "libvirt",
	.observe = drv_observe,
	.apply = drv_apply,
	.report = drv_report,
};

static void
write_status(const char *path)
{
	char tmp[4096];
	uint64_t keys[1024];
	int n = live_domains(g_live, keys, 1024);
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warn("%s", tmp);
		return;
	}
	for (int i = 0; i < n && i < 1024; i++) {
		struct agent_dominfo di;
		if (live_describe(g_live, keys[i], &di) == 0) {
			/* what the back-end knows, as llcd's dominfo prints it */
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "key", json_object_new_string(di.key));
			json_object_object_add(o, "name", json_object_new_string(di.name));
			json_object_object_add(o, "state", json_object_new_string(agent_dom_state_name(di.state)));
			json_object_object_add(o, "reason", json_object_new_string(di.reason));
			json_object_object_add(o, "vcpus", json_object_new_int(di.nvcpus));
			daemon_dominfo_json(&di, o);
			fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
			json_object_put(o);
		}
		agent_dominfo_clear(&di);
	}
	fclose(f);
	if (rename(tmp, path) < 0)
		log_warn("rename %s", tmp);
}

enum { OPT_URI = CLIOPT_LONG, OPT_TOPOLOGY, OPT_PERIODS, OPT_PERIOD_MS, OPT_STATE_DIR, OPT_RESERVED, OPT_OVERCOMMIT, OPT_OVERCOMMIT_ISOLATED, OPT_STATUS, OPT_DRY_RUN, OPT_ALLOW_QMP };

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt options[] = {
	{ OPT_URI, "uri", "URI", "libvirt URI (default qemu:///system)" },
	{ OPT_TOPOLOGY, "topology", "SRC", "hwloc XML file or synthetic string (default:\nthis host)" },
	{ OPT_PERIODS, "periods", "N", "stop after N periods (default 0: until SIGTERM)" },
	{ OPT_PERIOD_MS, "period-ms", "MS", "sampling period (default 1000)" },
	{ OPT_STATE_DIR, "state-dir", "DIR", "state file directory (\"\" for none; default\n/var/lib/llcd)" },
	{ OPT_RESERVED, "reserved", "LIST", "reserved CPUs" },
	{ OPT_OVERCOMMIT, "overcommit", "X", "vCPUs per PU in the shared pool (default 1)" },
	{ OPT_OVERCOMMIT_ISOLATED, "overcommit-isolated", "X", "vCPUs per PU for isolated domains (default 1)" },
	{ OPT_STATUS, "status", "FILE", "after every period, write live_describe() of\nevery domain to FILE (one JSON line each,\natomically)" },
	{ OPT_DRY_RUN, "dry-run", NULL, "apply nothing" },
	{ OPT_ALLOW_QMP, "allow-qmp", NULL, "cross-check vCPU positions with QMP in --status" },
	{ 'v', NULL, NULL, "debug log on stderr" },
	CLIOPT_END
};

static void
usage(void)
{
	fputs("usage: live_driver [options]\n", stderr);
	cliopt_help(options, stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	struct live_config cfg;
	struct policy_host host;
	struct agent_loop *loop;
	struct llcd_err err;
	struct topo *topo;
	const char *topo_src = NULL, *reserved = NULL, *status = NULL;
	double oc = 1.0, oci = 1.0;
	long periods = 0, period_ms = 1000;
	int verbose = 0, c;
	uint64_t next;

	memset(&cfg, 0, sizeof(cfg));
	cliopt_build(&co, "live_driver", options, false);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case OPT_URI: cfg.uri = optarg; break;
		case OPT_TOPOLOGY: topo_src = optarg; break;
		case OPT_PERIODS: periods = strtol(optarg, NULL, 10); break;
		case OPT_PERIOD_MS: period_ms = strtol(optarg, NULL, 10); break;
		case OPT_STATE_DIR: cfg.state_dir = optarg; break;
		case OPT_RESERVED: reserved = optarg; break;
		case OPT_OVERCOMMIT: oc = strtod(optarg, NULL); break;
		case OPT_OVERCOMMIT_ISOLATED: oci = strtod(optarg, NULL); break;
		case OPT_STATUS: status = optarg; break;
		case OPT_DRY_RUN: cfg.dry_run = true; break;
		case OPT_ALLOW_QMP: cfg.allow_qmp_passthrough = true; break;
		case 'v': verbose++; break;
		default: usage();
		}
	}
	if (optind != argc || period_ms <= 0 || periods < 0 || oc <= 0 || oci <= 0)
		usage();
	log_init(true, verbose);
	if ((topo = topo_load(topo_src, &err)) == NULL)
		fatalx("topology: %s", err.msg);
	policy_host_defaults(&host, topo);
	host.overcommit = oc;
	host.overcommit_isolated = oci;
	if (reserved && cpuset_parse(&host.reserved, reserved, &err) < 0)
		fatalx("--reserved: %s", err.msg);
	cfg.topo = topo;
	cfg.reserved = host.reserved;
	if ((g_live = live_new(&cfg, &err)) == NULL)
		fatalx("live back-end: %s", err.msg);
	if ((loop = agent_loop_new(&drv_ops, g_live, &host, (uint64_t)period_ms * 1000000ull, &err)) == NULL)
		fatalx("agent loop: %s", err.msg);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	log_info("live_driver: topology %s, period %ld ms, %ld periods", topo->desc, period_ms, periods);

	next = llcd_mono_ns();
	while (!quit) {
		uint64_t now = llcd_mono_ns();
		if (now >= next) {
			struct agent_step_stats st;
			cur_period++;
			if (agent_loop_step(loop, now, &st, &err) < 0)
				log_warnx("period %llu: %s", (unsigned long long)cur_period, err.msg);
			else if (st.actions > 0) {
				printf("{\"period\":%llu,\"summary\":true,\"actions\":%d,\"ok\":%d,\"transient\":%d,"
				    "\"gone\":%d,\"permanent\":%d,\"skipped\":%d}\n", (unsigned long long)cur_period,
				    st.actions, st.ok, st.transient, st.gone, st.permanent, st.skipped);
				fflush(stdout);
			}
			if (live_save_state(g_live, &err) < 0)
				log_warnx("state file: %s", err.msg);
			if (status)
				write_status(status);
			if (periods > 0 && (long)cur_period >= periods)
				break;
			next += (uint64_t)period_ms * 1000000ull;
			if (next <= now)
				next = now + (uint64_t)period_ms * 1000000ull;
			continue;
		}
		struct pollfd pfd = { .fd = live_event_fd(g_live), .events = POLLIN };
		uint64_t due = live_next_due_ns(g_live), wake = next;
		if (due && due < wake)
			wake = due;
		int ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		if (poll(&pfd, pfd.fd >= 0 ? 1 : 0, ms) < 0 && errno != EINTR)
			fatal("poll");
		if (live_handle_events(g_live, llcd_mono_ns(), &err) < 0)
			log_warnx("%s", err.msg);
	}
	log_info("live_driver: stopping after %llu periods; pins stay as they are",
	    (unsigned long long)cur_period);
	agent_loop_free(loop);
	live_free(g_live);
	topo_free(topo);
	return 0;
}
