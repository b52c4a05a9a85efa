// SPDX-License-Identifier: GPL-2.0-or-later
/* llcctl - query and steer llcd, the way virsh does for libvirt.
 * See llcctl(8) and docs/llcctl.md. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cliopt.h"
#include "ctl.h"

#define DEFAULT_SOCKET "/run/llcd/llcd.sock"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CONNECT = 3, EXIT_DISAGREE = 4 };

static bool opt_json;
static bool opt_color;

/* Each option of a command is one member of its request: its long name
 * with '-' as '_', the argument as a string, or true for a flag. Every
 * command's parser knows the options of all, so that one given to the
 * wrong command is named as such. */
enum {
	OPT_JSON = CLIOPT_LONG,
	OPT_MODE, OPT_ISOLATION, OPT_TOPOLOGY, OPT_INFER, OPT_XML, OPT_LIVE, OPT_CONFIG,
	OPT_APPLY, OPT_DRY_RUN, OPT_RESET, OPT_ADD,
};
static const struct cliopt policy_opts[] = {
	{ OPT_MODE, "mode", "aggregate|spread|static|none", NULL },
	{ OPT_ISOLATION, "isolation", "core|none", NULL },
	{ OPT_TOPOLOGY, "topology", "match|keep", NULL },
	{ OPT_INFER, "infer", "wakeups|none", "groups from vCPU wakeups (aggregate), or not" },
	{ OPT_XML, "xml", "XML", "the whole <llc-policy> element" },
	{ OPT_LIVE, "live", NULL, "change the running domain only" },
	{ OPT_CONFIG, "config", NULL, "change the persistent definition only\n(neither: both)" },
	CLIOPT_END
};
static const struct cliopt topology_opts[] = {
	{ OPT_APPLY, "apply", NULL, "rewrite the domain's persistent definition with the recommended\n"
	  "<cpu> topology, cache, NUMA cells, <cputune> and <numatune> (root;\n"
	  "takes effect at the next boot)" },
	{ OPT_DRY_RUN, "dry-run", NULL, "print the XML diff only" },
	CLIOPT_END
};
static const struct cliopt tune_opts[] = {
	{ OPT_RESET, "reset", NULL, "drop every runtime tune: the configuration file's values again" },
	CLIOPT_END
};
static const struct cliopt guest_channel_opts[] = {
	{ OPT_ADD, "add", NULL, "add the channel (required)" },
	CLIOPT_END
};
static const struct cliopt cmd_common[] = {
	{ OPT_JSON, "json", NULL, "print llcd's answer as JSON (for scripts)" },
	{ 'h', "help", NULL, "this help" },
	CLIOPT_END
};

/* An llcctl command: its request, what it takes and how its answer prints.
 * Operands fill the request members named in keys, in order; nargs says
 * how many it takes (bit n: n operands), nargs_opt how many when one of
 * its options is given, and then the request is opt_type (0: type). */
#define N(n) (1u << (n))
struct cmd {
	const char *name;
	uint16_t type;
	const char *args;               /* usage after the name */
	const char *help;
	const struct cliopt *opts;      /* its own options; NULL none */
	unsigned nargs, nargs_opt;
	uint16_t opt_type;
	const char *const *keys;        /* request members of the operands */
	void (*print)(json_object *r);  /* one reply (a page of list), as text */
	const char *notes;              /* more help lines; NULL none */
};

static const char *const k_domain[] = { "domain" };
static const char *const k_tune[] = { "knob", "value" };

static void print_topology_any(json_object *r);
static void print_list(json_object *r);
static void print_dominfo(json_object *r);
static void print_vcpuinfo(json_object *r);
static void print_policy_any(json_object *r);
static void print_hot(json_object *r);
static void print_wakeups(json_object *r);
static void print_map(json_object *r);
static void print_event(json_object *r);
static void print_metrics(json_object *r);
static void print_tune(json_object *r);
static void print_message(json_object *r);
static void print_release(json_object *r);
static void print_check(json_object *r);
static void print_guest_channel(json_object *r);
static void print_kv(json_object *r);

static const struct cmd cmds[] = {
	{ "topology", CTL_TOPOLOGY, "[DOMAIN [--apply] [--dry-run]]", "the host as llcd sees it (packages, NUMA nodes, LLCs, SMT, reserved CPUs, core scheduling, sampler); with DOMAIN, its guest topology next to the one llcd recommends",
	  topology_opts, N(0) | N(1), N(1), CTL_TOPOLOGY_APPLY, k_domain, print_topology_any, NULL },
	{ "list", CTL_LIST, "", "domains with mode, isolation, LLCs in use and state (managed, unmanaged, error)",
	  NULL, N(0), 0, 0, NULL, print_list, NULL },
	{ "dominfo", CTL_DOMINFO, "DOMAIN", "one domain: state, policy, allotment, guest topology, vCPU groups",
	  NULL, N(1), 0, 0, k_domain, print_dominfo, NULL },
	{ "vcpuinfo", CTL_VCPUINFO, "DOMAIN", "per vCPU: thread, guest position, pin, last CPU, LLC, use, group",
	  NULL, N(1), 0, 0, k_domain, print_vcpuinfo, NULL },
	{ "policy", CTL_POLICY_GET, "DOMAIN [--mode M] [--isolation I] [--topology T] [--infer I] [--xml XML] [--live] [--config]",
	  "show the llc-policy annotation, or write it into the domain's metadata through libvirt",
	  policy_opts, N(1), N(1), CTL_POLICY_SET, k_domain, print_policy_any, NULL },
	{ "hot", CTL_HOT, "DOMAIN", "hot processes the guest helper last reported, and the groups formed from them and from wakeups",
	  NULL, N(1), 0, 0, k_domain, print_hot, NULL },
	{ "wakeups", CTL_WAKEUPS, "DOMAIN", "the strongest wakeup edges between the domain's vCPUs, the background rate, and which pairs are grouped",
	  NULL, N(1), 0, 0, k_domain, print_wakeups, NULL },
	{ "map", CTL_MAP, "", "every LLC and core with the vCPUs that ran on each CPU last period",
	  NULL, N(0), 0, 0, NULL, print_map, NULL },
	{ "events", CTL_EVENTS, "", "follow llcd's decisions live (pins, preference switches, refusals)",
	  NULL, N(0), 0, 0, NULL, print_event, NULL },
	{ "stats", CTL_STATS, "", "counters: domains, moves, preference switches, errors, policy step time",
	  NULL, N(0), 0, 0, NULL, print_kv, NULL },
	{ "metrics", CTL_METRICS, "", "the counters in the Prometheus text exposition format",
	  NULL, N(0), 0, 0, NULL, print_metrics, NULL },
	{ "tune", CTL_TUNE, "[KNOB VALUE | --reset]", "change a daemon-wide knob (kept across restarts until a reload or --reset); alone, list the runtime tunes (root)",
	  tune_opts, N(0) | N(2), N(0), 0, k_tune, print_tune,
	  "  knobs: period-ms, max-moves, overcommit, overcommit-isolated, log-level, counters,\n"
	  "         unjudged-groups, default-mode, default-isolation, reserved-cpus, shared-pool\n"
	  "         (see llcd.conf(5))\n" },
	{ "reload", CTL_RELOAD, "", "re-read llcd.conf and report the result (root)",
	  NULL, N(0), 0, 0, NULL, print_message, NULL },
	{ "release", CTL_RELEASE, "DOMAIN", "give a domain back to the default scheduler (root)",
	  NULL, N(1), 0, 0, k_domain, print_release, NULL },
	{ "check", CTL_CHECK, "DOMAIN", "warn where the guest topology and the real pinning disagree",
	  NULL, N(1), 0, 0, k_domain, print_check, NULL },
	{ "guest-channel", CTL_GUEST_CHANNEL, "DOMAIN --add", "add the llc-guest channel (org.llcd.guest.0) to the persistent definition of a running or stopped domain, used from its next start; a domain that has it already is left alone (root)",
	  guest_channel_opts, N(1), N(1), 0, k_domain, print_guest_channel, NULL },
	{ "version", CTL_PING, "", "llcd's version, protocol and back-end",
	  NULL, N(0), 0, 0, NULL, print_kv, NULL },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cliopt global_opts[] = {
	{ 'c', "socket", "PATH", "llcd's control socket (default $LLCD_SOCKET or " DEFAULT_SOCKET ")" },
	{ OPT_JSON, "json", NULL, "print llcd's answer as JSON (for scripts)" },
	{ 'h', "help", NULL, "this help; 'llcctl COMMAND --help' for one command" },
	CLIOPT_END
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: llcctl [-c SOCKET] [--json] COMMAND [ARGS]\n");
	cliopt_help(global_opts, f);
	fprintf(f, "\ncommands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
}

static void
cmd_usage(FILE *f, const struct cmd *c)
{
	fprintf(f, "usage: llcctl %s %s\n  %s\n", c->name, c->args, c->help);
	if (c->notes)
		fputs(c->notes, f);
	struct cliopt all[CLIOPT_MAX + 1];
	size_t n = 0;
	for (const struct cliopt *o = c->opts; o && o->key && n < CLIOPT_MAX; o++)
		all[n++] = *o;
	for (const struct cliopt *o = cmd_common; o->key && n < CLIOPT_MAX; o++)
		all[n++] = *o;
	all[n] = (struct cliopt)CLIOPT_END;
	cliopt_help(all, f);           /* its own and the common ones, in one column */
}

/* --- output helpers ----------------------------------------------------- */

static const char *
js(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return "-";
	return json_object_get_string(v);
}

static int64_t
ji(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static json_object *
ja(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

static void
print_topology(json_object *r)
{
	json_object *a;

	printf("host:      %s\n", js(r, "summary"));
	printf("source:    %s\n", js(r, "source"));
	printf("reserved:  %s\n", *js(r, "reserved") ? js(r, "reserved") : "none");
	printf("shared:    %s\n", js(r, "shared_pool"));
	json_object *cs;
	if (json_object_object_get_ex(r, "core_scheduling", &cs))
		printf("core-sched: %s (%s)\n", json_object_get_boolean(json_object_object_get(cs, "available")) ?
		    "available" : "unavailable", js(cs, "reason"));
	json_object *sm;
	if (json_object_object_get_ex(r, "sampler", &sm)) {
		json_object *why;
		printf("sampler:   %s", json_object_get_string(sm));
		if (json_object_object_get_ex(r, "sampler_reason", &why))
			printf(" (%s)", json_object_get_string(why));
		else if (!strcmp(json_object_get_string(sm), "bpf"))
			printf(" (in-kernel tracer)");
		printf("\n");
	}
	json_object *qb;
	if (json_object_object_get_ex(r, "qmp", &qb)) {
		int ns = json_object_get_int(json_object_object_get(qb, "sockets"));
		int nv = json_object_get_int(json_object_object_get(qb, "vms"));
		printf("qmp:       %s: %d socket%s, %d VM%s, %lld refused connection%s; policy files in %s\n",
		    js(qb, "socket_glob"), ns, ns == 1 ? "" : "s", nv, nv == 1 ? "" : "s",
		    (long long)json_object_get_int64(json_object_object_get(qb, "refusals")),
		    json_object_get_int64(json_object_object_get(qb, "refusals")) == 1 ? "" : "s",
		    *js(qb, "policy_dir") ? js(qb, "policy_dir") : "(none)");
	}
	json_object *lv, *sg;
	if (json_object_object_get_ex(r, "libvirt", &lv) && json_object_object_get_ex(lv, "socket_glob", &sg)) {
		int nd = json_object_get_int(json_object_object_get(lv, "daemons"));
		printf("libvirt:   %s: %d daemon%s, %d connected; %lld domain%s\n", json_object_get_string(sg), nd,
		    nd == 1 ? "" : "s", json_object_get_int(json_object_object_get(lv, "daemons_connected")),
		    (long long)ji(lv, "domains"), ji(lv, "domains") == 1 ? "" : "s");
	}
	json_object *kc;
	if (json_object_object_get_ex(r, "kernel_cas", &kc))
		printf("kernel cache-aware scheduling: %s\n", json_object_get_string(kc));
	json_object *jg;
	if (json_object_object_get_ex(r, "judges", &jg)) {
		static const char *const names[][2] = { { "counters", "counters" },
			{ "bandwidth_monitoring", "bandwidth" }, { "run_delay", "run delay" } };
		printf("judges:\n");
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			json_object *x = json_object_object_get(jg, names[i][0]);
			if (x == NULL)
				continue;
			printf("  %-10s %-3s %s; judges %s\n", names[i][1],
			    json_object_get_boolean(json_object_object_get(x, "available")) ? "yes" : "no",
			    js(x, "detail"), js(x, "judges"));
		}
		printf("  inferred groups: %s\n", js(jg, "inferred_groups"));
	}
	printf("\n%-4s %-4s %-5s %-6s %-10s %s\n", "LLC", "PKG", "NUMA", "CORES", "SIZE", "CPUS");
	if ((a = ja(r, "llcs")) != NULL)
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *l = json_object_array_get_idx(a, i);
			char size[32];
			int64_t b = ji(l, "size_bytes");
			if (b >= 1 << 20)
				snprintf(size, sizeof(size), "%lld MiB", (long long)(b >> 20));
			else if (b > 0)
				snprintf(size, sizeof(size), "%lld KiB", (long long)(b >> 10));
			else
				snprintf(size, sizeof(size), "-");
			printf("%-4lld %-4lld %-5lld %-6lld %-10s %s\n", (long long)ji(l, "llc"), (long long)ji(l, "package"),
			    (long long)ji(l, "numa_node"), (long long)ji(l, "cores"), size, js(l, "cpus"));
		}
}

static void
print_guest_topology(json_object *r)
{
	json_object *c = json_object_object_get(r, "current"), *m = json_object_object_get(r, "recommended");

	printf("%-12s sockets=%lld dies=%lld cores=%lld threads=%lld\n", "now:", (long long)ji(c, "sockets"),
	    (long long)ji(c, "dies"), (long long)ji(c, "cores"), (long long)ji(c, "threads"));
	printf("%-12s sockets=%lld dies=%lld cores=%lld threads=%lld, L3 cache %s, %lld NUMA cells\n",
	    "recommended:", (long long)ji(m, "sockets"), (long long)ji(m, "dies"), (long long)ji(m, "cores"),
	    (long long)ji(m, "threads"), js(m, "cache"), (long long)ji(m, "numa_cells"));
	printf("%s\n\n%s", json_object_get_boolean(json_object_object_get(r, "matches")) ?
	    "the domain already has this topology" :
	    "differs: 'llcctl topology DOMAIN --dry-run' shows the change, --apply writes it", js(r, "text"));
}

static void
print_check(json_object *r)
{
	json_object *a = ja(r, "issues");

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *x = json_object_array_get_idx(a, i);
		printf("%s: %s\n", strcmp(js(x, "kind"), "smt-loose") ? "WARNING" : "note", js(x, "message"));
	}
	printf("%s: %s\n", js(r, "name"), json_object_get_boolean(json_object_object_get(r, "agree")) ?
	    "guest topology and pinning agree" : "guest topology and pinning disagree");
}

/* one page of the list: the header before the first */
static void
print_list(json_object *r)
{
	static bool header_done;
	bool header = !header_done;
	json_object *a = ja(r, "domains");
	bool conn = false;

	header_done = true;
	/* several libvirt daemons: which one each domain came from */
	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		conn |= json_object_object_get_ex(json_object_array_get_idx(a, i), "connection", NULL);
	if (header)
		printf("%-20s %-9s %-9s %-9s %5s %-10s %s%s\n", "NAME", "STATE", "MODE", "ISOLATION", "VCPUS", "LLCS",
		    conn ? "CONNECTION  " : "", "REASON");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *d = json_object_array_get_idx(a, i);
		printf("%-20s %-9s %-9s %-9s %5lld %-10s ", js(d, "name"), js(d, "state"), js(d, "mode"),
		    js(d, "isolation"), (long long)ji(d, "vcpus"), *js(d, "llcs") ? js(d, "llcs") : "-");
		if (conn)
			printf("%s  ", *js(d, "connection") ? js(d, "connection") : "-");
		printf("%s\n", js(d, "reason"));
	}
}

static void
print_groups(json_object *a)
{
	if (a == NULL || json_object_array_length(a) == 0) {
		printf("groups:    none\n");
		return;
	}
	printf("\n%-14s %-10s %-12s %5s %9s %5s %s\n", "GROUP", "RULE", "VCPUS", "PREF", "OCCUPANCY", "BEST", "WHY");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *g = json_object_array_get_idx(a, i);
		char pref[16], best[16];
		/* -1 is "none": a dash, so that WHY's numbers are not read as an LLC */
		snprintf(pref, sizeof(pref), ji(g, "preferred_llc") < 0 ? "-" : "%lld", (long long)ji(g, "preferred_llc"));
		snprintf(best, sizeof(best), ji(g, "best_llc") < 0 ? "-" : "%lld", (long long)ji(g, "best_llc"));
		printf("%-14s %-10s %-12s %5s %9.2f %5s %s\n", js(g, "name"), js(g, "rule"), js(g, "vcpus"), pref,
		    json_object_get_double(json_object_object_get(g, "occupancy")), best, js(g, "why"));
	}
}

/* A trial object of dominfo (home_trial, a group's trial) as lines:
 * "home_trial  measuring (2 of 5 periods) at 8 busy vCPUs, 8.2 CPUs" and
 * one line per failed trial it remembers. */
static void
print_trial(const char *label, json_object *t)
{
	json_object *a = ja(t, "failed"), *v;
	char what[64];

	if (json_object_object_get_ex(t, "busy_vcpus", &v))
		printf("%-23s %s (%lld of %lld periods) at %lld busy vCPU%s, %.1f CPUs\n", label, js(t, "state"),
		    (long long)ji(t, "periods"), (long long)ji(t, "window"), (long long)ji(t, "busy_vcpus"),
		    ji(t, "busy_vcpus") == 1 ? "" : "s", json_object_get_double(json_object_object_get(t, "cpus")));
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(e, "from_llcs", &v))
			snprintf(what, sizeof(what), "%s from %lld LLC%s", js(e, "change"), (long long)ji(e, "from_llcs"),
			    ji(e, "from_llcs") == 1 ? "" : "s");
		else
			snprintf(what, sizeof(what), "%s", js(e, "change"));
		printf("%-23s %s at %lld busy vCPU%s, %.1f CPUs: %+.0f%% (%lld failure%s, %lld s ago); again in %lld s\n",
		    "  failed", what, (long long)ji(e, "busy_vcpus"), ji(e, "busy_vcpus") == 1 ? "" : "s",
		    json_object_get_double(json_object_object_get(e, "cpus")),
		    100.0 * (json_object_get_double(json_object_object_get(e, "ratio")) - 1.0), (long long)ji(e, "fails"),
		    ji(e, "fails") == 1 ? "" : "s", (long long)ji(e, "age_s"), (long long)ji(e, "retry_in_s"));
	}
}

static void
print_dominfo(json_object *r)
{
	static const char *const keys[] = { "name", "key", "state", "reason", "policy_source", "mode", "isolation",
		"topology", "vcpus", "llcs", "allotment", "uuid", "pid", "preferred_llc_switches", "vcpu_moves", "home",
		"home_widened" };
	json_object *g;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_object *v;
		if (json_object_object_get_ex(r, keys[i], &v) && v)
			printf("%-23s %s\n", keys[i], json_object_get_string(v));
		if (!strcmp(keys[i], "policy_source") && json_object_object_get_ex(r, "policy_rule", &g) && g)
			printf("%-23s %lld (%s) %s\n", "policy_rule", (long long)ji(g, "number"), js(g, "where"),
			    js(g, "match"));
	}
	if (json_object_object_get_ex(r, "guest_topology", &g))
		printf("%-23s sockets=%lld dies=%lld clusters=%lld cores=%lld threads=%lld\n", "guest_topology",
		    (long long)ji(g, "sockets"), (long long)ji(g, "dies"), (long long)ji(g, "clusters"),
		    (long long)ji(g, "cores"), (long long)ji(g, "threads"));
	if (json_object_object_get_ex(r, "memory", &g) && g) {
		json_object *n;
		if (json_object_object_get_ex(g, "error", &n))
			printf("%-23s unknown: %s\n", "memory_node", json_object_get_string(n));
		else if (json_object_object_get_ex(g, "node", &n) && n)
			printf("%-23s %d (%lld of %lld sampled pages resident)\n", "memory_node", json_object_get_int(n),
			    (long long)ji(g, "resident_pages"), (long long)ji(g, "sampled_pages"));
		else
			printf("%-23s none (%lld of %lld sampled pages resident, no node holds 75 %%)\n", "memory_node",
			    (long long)ji(g, "resident_pages"), (long long)ji(g, "sampled_pages"));
	}
	if (json_object_object_get_ex(r, "connection", &g) && g)
		printf("%-23s %s\n", "connection", json_object_get_string(g));
	if (json_object_object_get_ex(r, "cpu_bound", &g) && g) {
		json_object *n;
		printf("%-23s %s (by the %s)\n", "cpu_bound", js(g, "cpus"), js(g, "by"));
		if (json_object_object_get_ex(g, "cgroup", &n) && n)
			printf("%-23s %s\n", "cpu_bound_cgroup", json_object_get_string(n));
		if (json_object_object_get_ex(g, "error", &n) && n)
			printf("%-23s %s\n", "cpu_bound_error", json_object_get_string(n));
	}
	if (json_object_object_get_ex(r, "home_trial", &g) && g)
		print_trial("home_trial", g);
	print_groups(ja(r, "groups"));
	json_object *ga = ja(r, "groups");
	for (size_t i = 0; ga && i < json_object_array_length(ga); i++) {
		json_object *gr = json_object_array_get_idx(ga, i), *t;
		char label[64];
		if (!json_object_object_get_ex(gr, "trial", &t) || ja(t, "failed") == NULL ||
		    json_object_array_length(ja(t, "failed")) == 0)
			continue;
		snprintf(label, sizeof(label), "group %s", js(gr, "name"));
		print_trial(label, t);
	}
}

static void
print_vcpuinfo(json_object *r)
{
	json_object *a = ja(r, "vcpus");

	printf("%-5s %-8s %-9s %-14s %-5s %-4s %-5s %-12s %-5s %s\n", "VCPU", "TID", "S/D/C/T", "PINNED", "LAST",
	    "LLC", "UTIL", "GROUP", "PREF", "OCC");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *v = json_object_array_get_idx(a, i);
		char pos[32];
		snprintf(pos, sizeof(pos), "%lld/%lld/%lld/%lld", (long long)ji(v, "socket"), (long long)ji(v, "die"),
		    (long long)ji(v, "core"), (long long)ji(v, "thread"));
		printf("%-5lld %-8lld %-9s %-14s %-5lld %-4lld %-5.2f %-12s %-5lld %.2f\n", (long long)ji(v, "vcpu"),
		    (long long)ji(v, "tid"), pos, js(v, "pinned"), (long long)ji(v, "last_cpu"), (long long)ji(v, "llc"),
		    json_object_get_double(json_object_object_get(v, "util")), js(v, "group"),
		    (long long)ji(v, "preferred_llc"), json_object_get_double(json_object_object_get(v, "occupancy")));
	}
}

static void
print_policy(json_object *r)
{
	const char *st = js(r, "status");
	if (!strcmp(st, "invalid"))
		printf("%s: invalid llc-policy annotation, llcd leaves the domain alone: %s\n", js(r, "name"),
		    *js(r, "error") ? js(r, "error") : "(see llcctl dominfo)");
	else if (!strcmp(st, "released"))
		printf("%s: released by llcctl release (the annotation below is kept; changing it ends the release)\n",
		    js(r, "name"));
	else if (!strcmp(st, "default"))
		printf("%s: no llc-policy annotation; llcd's default-mode applies\n", js(r, "name"));
	else if (!strcmp(st, "rule"))
		printf("%s: no llc-policy annotation; policy-rule %lld (%s: %s) applies\n", js(r, "name"),
		    (long long)ji(json_object_object_get(r, "policy_rule"), "number"),
		    js(json_object_object_get(r, "policy_rule"), "where"), js(json_object_object_get(r, "policy_rule"), "match"));
	else
		printf("%s: %s\n", js(r, "name"), json_object_get_boolean(json_object_object_get(r, "annotated")) ?
		    "annotated" : "no llc-policy annotation");
	json_object *x;
	if (json_object_object_get_ex(r, "xml", &x) && x)
		printf("%s\n", json_object_get_string(x));
	if (json_object_object_get_ex(r, "mode", &x)) {
		printf("mode %s, isolation %s, topology %s, infer %s\n", js(r, "mode"), js(r, "isolation"),
		    js(r, "topology"), js(r, "infer"));
		json_object *t;
		if (json_object_object_get_ex(r, "tune", &t)) {
			json_object_object_foreach(t, k, v)
				printf("  %s = %s\n", k, json_object_get_string(v));
		}
	}
}

static void
print_hot(json_object *r)
{
	json_object *a = ja(r, "reports");

	printf("%-16s %-8s %s\n", "PROCESS", "PID", "VCPUS");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *p = json_object_array_get_idx(a, i);
		printf("%-16s %-8lld %s\n", js(p, "name"), (long long)ji(p, "pid"), js(p, "vcpus"));
	}
	json_object *gc = json_object_object_get(r, "guest_channel");
	if ((a == NULL || json_object_array_length(a) == 0) && gc != NULL && ji(gc, "reports") > 0)
		printf("(no hot process: the guest channel is %s, %lld report%s so far, none naming a busy process)\n",
		    js(gc, "state"), (long long)ji(gc, "reports"), ji(gc, "reports") == 1 ? "" : "s");
	else if ((a == NULL || json_object_array_length(a) == 0) && gc != NULL)
		printf("(no report: the guest channel is %s and has sent none; is llc-guest running in the guest?)\n",
		    js(gc, "state"));
	else if (a == NULL || json_object_array_length(a) == 0)
		printf("(no report: is llc-guest running in the guest, with its channel?)\n");
	print_groups(ja(r, "groups"));
	json_object *g = ja(r, "groups");
	bool head = false;
	for (size_t i = 0; g && i < json_object_array_length(g); i++) {
		json_object *x = json_object_array_get_idx(g, i);
		if (strcmp(js(x, "rule"), "wakeups") != 0)
			continue;
		if (!head)
			printf("\ninferred from wakeups (background %.2f/s per pair; llcctl wakeups for the edges):\n",
			    json_object_get_double(json_object_object_get(r, "wakeup_background_hz")));
		head = true;
		printf("%-14s vCPUs %s: %lld pairs, %.1f wakeups/s\n", js(x, "name"), js(x, "vcpus"),
		    (long long)ji(x, "wakeup_pairs"), json_object_get_double(json_object_object_get(x, "wakeups_hz")));
	}
}

static void
print_wakeups(json_object *r)
{
	json_object *a = ja(r, "edges");

	if (!json_object_get_boolean(json_object_object_get(r, "available"))) {
		printf("%s: %s\n", js(r, "name"), js(r, "why"));
		return;
	}
	printf("%s: %.1f wakeups/s between vCPUs, background %.2f/s per pair, %lld dropped (edge cap)%s\n",
	    js(r, "name"), json_object_get_double(json_object_object_get(r, "total_hz")),
	    json_object_get_double(json_object_object_get(r, "background_hz")), (long long)ji(r, "dropped"),
	    json_object_get_boolean(json_object_object_get(r, "inferring")) ? "" :
	    "; inference off (infer='none' or not aggregate)");
	printf("%-6s %-6s %10s %10s %10s %s\n", "VCPU", "VCPU", "RATE/s", "A->B/s", "B->A/s", "STATE");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		printf("%-6lld %-6lld %10.1f %10.1f %10.1f %s\n", (long long)ji(e, "a"), (long long)ji(e, "b"),
		    json_object_get_double(json_object_object_get(e, "rate_hz")),
		    json_object_get_double(json_object_object_get(e, "a_to_b_hz")),
		    json_object_get_double(json_object_object_get(e, "b_to_a_hz")), js(e, "state"));
	}
	if (a == NULL || json_object_array_length(a) == 0)
		printf("(no edges yet)\n");
}

static const char *const palette[] = { "31", "32", "33", "34", "35", "36", "91", "92", "93", "94", "95", "96" };

static void
print_map(json_object *r)
{
	json_object *doms = ja(r, "domains"), *llcs = ja(r, "llcs");
	size_t nd = doms ? json_object_array_length(doms) : 0;

	/* letters follow the names: A for the first name in sort order */
	int *rank = calloc(nd ? nd : 1, sizeof(*rank));
	for (size_t i = 0; rank && i < nd; i++) {
		const char *ni = js(json_object_array_get_idx(doms, i), "name");
		for (size_t j = 0; j < nd; j++) {
			int c = strcmp(js(json_object_array_get_idx(doms, j), "name"), ni);
			if (c < 0 || (c == 0 && j < i))
				rank[i]++;
		}
	}
#define MAP_TAG(i) (rank && (size_t)(i) < nd ? rank[(i)] : (int)(i))
	printf("legend:");
	for (size_t j = 0; j < nd; j++) {
		size_t i = j;
		for (size_t k = 0; rank && k < nd; k++)
			if (rank[k] == (int)j)
				i = k;
		json_object *d = json_object_array_get_idx(doms, i);
		char tag = (char)('A' + (MAP_TAG(i) % 26));
		if (opt_color)
			printf(" \033[%sm%c\033[0m=%s%s", palette[MAP_TAG(i) % 12], tag, js(d, "name"),
			    json_object_get_boolean(json_object_object_get(d, "isolated")) ? "(isolated)" : "");
		else
			printf(" %c=%s%s", tag, js(d, "name"),
			    json_object_get_boolean(json_object_object_get(d, "isolated")) ? "(isolated)" : "");
	}
	printf("%s  .=idle  r=reserved; a cell is PU:domain+vCPU, lower case = under half busy\n", nd ? "" : " (no domains)");
	for (size_t l = 0; llcs && l < json_object_array_length(llcs); l++) {
		json_object *lo = json_object_array_get_idx(llcs, l), *cores = ja(lo, "cores");
		printf("LLC %-3lld", (long long)ji(lo, "llc"));
		for (size_t c = 0; cores && c < json_object_array_length(cores); c++) {
			json_object *co = json_object_array_get_idx(cores, c), *pus = ja(co, "pus");
			printf(" [");
			for (size_t p = 0; pus && p < json_object_array_length(pus); p++) {
				json_object *po = json_object_array_get_idx(pus, p), *vs = ja(po, "vcpus");
				if (p)
					printf(" ");
				printf("%lld:", (long long)ji(po, "pu"));
				if (vs == NULL || json_object_array_length(vs) == 0) {
					printf("%s", json_object_get_boolean(json_object_object_get(po, "reserved")) ? "r" : ".");
					continue;
				}
				for (size_t k = 0; k < json_object_array_length(vs); k++) {
					json_object *x = json_object_array_get_idx(vs, k);
					int64_t di = ji(x, "domain");
					double u = json_object_get_double(json_object_object_get(x, "util"));
					int t = di >= 0 ? MAP_TAG(di) : 0;
					char tag = (char)((u >= 0.5 ? 'A' : 'a') + (t % 26));
					if (k)
						printf(",");
					if (opt_color)
						printf("\033[%sm%c%lld\033[0m", palette[t % 12], tag, (long long)ji(x, "vcpu"));
					else
						printf("%c%lld", tag, (long long)ji(x, "vcpu"));
				}
			}
			printf("]");
		}
		printf("\n");
	}
#undef MAP_TAG
	free(rank);
}

static void
print_tune(json_object *r)
{
	json_object *a = ja(r, "tunes");

	if (*js(r, "knob")) {
		printf("%s set to %s%s\n", js(r, "knob"), js(r, "value"),
		    json_object_get_boolean(json_object_object_get(r, "kept")) ?
		    " (kept across restarts until a reload or 'llcctl tune --reset')" : " (until the next reload)");
		if (*js(r, "not_kept"))
			printf("not kept across a restart: %s\n", js(r, "not_kept"));
		return;
	}
	if (*js(r, "message"))
		printf("%s\n", js(r, "message"));
	if (a == NULL)
		return;
	if (json_object_array_length(a) == 0)
		printf("no runtime tunes: every knob has its configuration file's value\n");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *t = json_object_array_get_idx(a, i);
		printf("%-22s %s\n", js(t, "knob"), js(t, "value"));
	}
	if (*js(r, "file"))
		printf("(kept in %s)\n", js(r, "file"));
}

static void
print_kv(json_object *r)
{
	json_object_object_foreach(r, k, v) {
		if (json_object_is_type(v, json_type_double))
			printf("%-26s %.1f\n", k, json_object_get_double(v));
		else
			printf("%-26s %s\n", k, json_object_get_string(v));
	}
}

static void
print_event(json_object *e)
{
	printf("%9.1f  %-12s %-16s", json_object_get_double(json_object_object_get(e, "t")), js(e, "action"), js(e, "domain"));
	if (ji(e, "vcpu") >= 0)
		printf(" vcpu %-3lld", (long long)ji(e, "vcpu"));
	if (*js(e, "cpus"))
		printf(" -> %s", js(e, "cpus"));
	printf("  %s", js(e, "reason"));
	if (strcmp(js(e, "result"), "ok"))
		printf("  [%s: %s]", js(e, "result"), js(e, "error"));
	printf("\n");
	fflush(stdout);
}

static void
print_topology_any(json_object *r)
{
	if (json_object_object_get_ex(r, "diff", NULL))             /* --apply, --dry-run */
		printf("%s%s: %s\n", js(r, "diff"), js(r, "name"), js(r, "message"));
	else if (json_object_object_get_ex(r, "recommended", NULL))  /* DOMAIN */
		print_guest_topology(r);
	else
		print_topology(r);
}

static bool
jbool(json_object *o, const char *key)
{
	return json_object_get_boolean(json_object_object_get(o, key));
}

static void
print_policy_any(json_object *r)
{
	if (!json_object_object_get_ex(r, "xml", NULL) || !json_object_object_get_ex(r, "live", NULL)) {
		print_policy(r);
		return;
	}
	printf("%s: llc-policy written (%s%s%s):\n%s\n", js(r, "name"), jbool(r, "live") ? "live" : "",
	    jbool(r, "live") && jbool(r, "config") ? ", " : "", jbool(r, "config") ? "config" : "", js(r, "xml"));
}

static void
print_guest_channel(json_object *r)
{
	if (!jbool(r, "added"))
		printf("%s: has the llc-guest channel already (nothing changed); socket %s\n", js(r, "name"),
		    js(r, "socket"));
	else
		printf("%s: guest channel added to the persistent definition (used from the next start%s); socket %s\n",
		    js(r, "name"), jbool(r, "running") ? "; the running guest does not get it" : "", js(r, "socket"));
}

static void
print_metrics(json_object *r)
{
	fputs(js(r, "text"), stdout);
}

static void
print_message(json_object *r)
{
	printf("%s\n", js(r, "message"));
}

static void
print_release(json_object *r)
{
	printf("%s: released to the default scheduler\n", js(r, "name"));
}

/* --- main ------------------------------------------------------------------- */

static const struct cmd *
find_cmd(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* The command whose option key is, NULL when none (a common one). */
static const struct cmd *
owner_of(int key)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (cmds[i].opts && cliopt_find(cmds[i].opts, key))
			return &cmds[i];
	return NULL;
}

/* Parse the command's options and operands into its request: *type and
 * args. Returns -1 to go on, or the exit code. */
static int
parse_command(const struct cmd *cmd, int argc, char **argv, uint16_t *type, json_object *args)
{
	struct cliopt_parser p;
	bool any = false;
	int c;

	cliopt_build(&p, "llcctl", cmd_common, false);
	for (size_t i = 0; i < NCMDS; i++)
		if (cmds[i].opts)
			cliopt_extend(&p, "llcctl", cmds[i].opts);
	optind = 0;             /* 0: reinitialise getopt (the global parse stopped at the command) */
	while ((c = cliopt_getopt(&p, argc, argv)) != -1) {
		const struct cliopt *o = cmd->opts ? cliopt_find(cmd->opts, c) : NULL;
		const struct cmd *owner;
		char key[64];

		if (c == 'h') {
			cmd_usage(stdout, cmd);
			return EXIT_OK;
		}
		if (c == OPT_JSON) {
			opt_json = true;
			continue;
		}
		if (o == NULL) {
			if (c != '?' && (owner = owner_of(c)) != NULL)
				fprintf(stderr, "llcctl: --%s goes with '%s'\n", cliopt_find(owner->opts, c)->name,
				    owner->name);
			cmd_usage(stderr, cmd);
			return EXIT_USAGE;
		}
		snprintf(key, sizeof(key), "%s", o->name);
		for (char *k = key; *k; k++)
			if (*k == '-')
				*k = '_';
		json_object_object_add(args, key, o->arg ? json_object_new_string(optarg) : json_object_new_boolean(true));
		any = true;
	}
	int n = argc - optind;
	if (n >= 32 || !((any ? cmd->nargs_opt : cmd->nargs) & N(n))) {
		if (any && (cmd->nargs & N(n)))
			fprintf(stderr, "llcctl %s: these options take %s\n", cmd->name,
			    cmd->nargs_opt == N(0) ? "no other argument" : cmd->nargs_opt == N(1) ? "DOMAIN" : cmd->args);
		else
			fprintf(stderr, "llcctl %s: expected %s\n", cmd->name, *cmd->args ? cmd->args : "no arguments");
		cmd_usage(stderr, cmd);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		json_object_object_add(args, cmd->keys[i], json_object_new_string(argv[optind + i]));
	*type = any && cmd->opt_type ? cmd->opt_type : cmd->type;
	return -1;
}

int
main(int argc, char **argv)
{
	struct cliopt_parser gp;
	const char *sock = getenv("LLCD_SOCKET");
	const struct cmd *cmd;
	struct llcd_err err;
	uint16_t type;
	int c, rc;

	if (sock == NULL || *sock == '\0')
		sock = DEFAULT_SOCKET;
	/* global options stop at the command name */
	cliopt_build(&gp, "llcctl", global_opts, true);
	while ((c = cliopt_getopt(&gp, argc, argv)) != -1) {
		switch (c) {
		case 'c': sock = optarg; break;
		case OPT_JSON: opt_json = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((cmd = find_cmd(argv[optind])) == NULL) {
		fprintf(stderr, "llcctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	json_object *args = json_object_new_object();
	if ((rc = parse_command(cmd, argc - optind, argv + optind, &type, args)) >= 0) {
		json_object_put(args);
		return rc;
	}
	opt_color = !opt_json && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;

	int fd = ctl_connect(sock, &err);
	if (fd < 0) {
		fprintf(stderr, "llcctl: %s\n", err.msg);
		json_object_put(args);
		return EXIT_CONNECT;
	}
	if (ctl_send(fd, type, 1, json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN), &err) < 0) {
		fprintf(stderr, "llcctl: %s\n", err.msg);
		json_object_put(args);
		close(fd);
		return EXIT_CONNECT;
	}
	json_object_put(args);

	struct ctl_reader rd;
	int got;
	bool disagree = false;
	/* `list` comes in pages (docs/protocol.md): ask for the next one on the
	 * same connection until llcd names none; --json prints them as one */
	json_object *pages = type == CTL_LIST && opt_json ? json_object_new_array() : NULL;
	bool more = false;
	int64_t next = 0;
	rc = EXIT_FAIL;
	ctl_reader_init(&rd, CTL_MAX_REPLY);
	while ((got = ctl_recv(fd, &rd, &err)) == 1) {
		if (rd.hdr.type == CTL_END) {
			if (rd.hdr.result == CTL_OK && more) {
				json_object *a2 = json_object_new_object();
				json_object_object_add(a2, "after", json_object_new_int64(next));
				more = false;
				int s2 = ctl_send(fd, CTL_LIST, rd.hdr.seq + 1,
				    json_object_to_json_string_ext(a2, JSON_C_TO_STRING_PLAIN), &err);
				json_object_put(a2);
				ctl_reader_next(&rd);
				if (s2 < 0) {
					fprintf(stderr, "llcctl: %s\n", err.msg);
					break;
				}
				continue;
			}
			if (rd.hdr.result == CTL_OK) {
				rc = EXIT_OK;
			} else {
				json_object *e = json_tokener_parse((const char *)rd.payload);
				fprintf(stderr, "llcctl: %s: %s\n", ctl_result_name(rd.hdr.result),
				    e ? js(e, "error") : "(no message)");
				json_object_put(e);
			}
			break;
		}
		json_object *r = json_tokener_parse((const char *)rd.payload);
		if (r == NULL) {
			fprintf(stderr, "llcctl: llcd sent a reply that is not JSON\n");
			break;
		}
		if (type == CTL_LIST) {
			json_object *nx;
			more = json_object_object_get_ex(r, "next", &nx);
			next = more ? json_object_get_int64(nx) : 0;
		}
		if (pages) {
			json_object *a = ja(r, "domains");
			for (size_t i = 0; a && i < json_object_array_length(a); i++)
				json_object_array_add(pages, json_object_get(json_object_array_get_idx(a, i)));
		} else if (opt_json) {
			printf("%s\n", json_object_to_json_string_ext(r, type == CTL_EVENTS ? JSON_C_TO_STRING_PLAIN :
			    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			fflush(stdout);
		} else {
			cmd->print(r);
		}
		if (type == CTL_CHECK && !jbool(r, "agree"))
			disagree = true;
		json_object_put(r);
		ctl_reader_next(&rd);
	}
	if (got == 0 && type == CTL_EVENTS) {
		fprintf(stderr, "llcctl: llcd closed the connection (stopped or restarted): no more events\n");
		rc = EXIT_CONNECT;
	} else if (got < 0) {
		fprintf(stderr, "llcctl: %s\n", err.msg);
	}
	if (pages) {
		if (rc == EXIT_OK) {
			json_object *all = json_object_new_object();
			json_object_object_add(all, "domains", json_object_get(pages));
			printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(all);
		}
		json_object_put(pages);
	}
	if (rc == EXIT_OK && disagree)
		rc = EXIT_DISAGREE;     /* `check`: scripts can tell */
	ctl_reader_reset(&rd);
	close(fd);
	return rc;
}
