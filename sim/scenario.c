// SPDX-License-Identifier: GPL-2.0-or-later
/* scenario.c - parse and check an llcsim scenario (json-c). Every error
 * names the field and says why; unknown fields are errors too, so that a
 * typo never silently falls back to a default. */
#include "scenario.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"

void
sim_model_defaults(struct sim_model *m)
{
	*m = (struct sim_model){
		.smt_share = { 1.0, 0.6, 0.45, 0.35 },
		.migration = 0.7, .imbalance = 2.0, .busy_util = 0.5,
		.instructions_per_s = 1e9, .remote_memory = 0.8,
		.kcas_epoch_ms = 10, .kcas_affinity_timeout = 5, .kcas_aggr_tolerance = 1,
		.kcas_overaggr_pct = 0, .kcas_imb_pct = 20, .kcas_pulls_per_s = 20,
		.kcas_min_util = 0.1,
	};
}

/* --- field access with paths ------------------------------------------ */

struct ctx {
	const char *file;
	struct llcd_err *err;
};

static int
fail(struct ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct ctx *c, const char *path, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return llcd_err_set(c->err, "%s: %s: %s", c->file, path, why);
}

static void
join(char *out, size_t n, const char *path, const char *key)
{
	if (snprintf(out, n, "%s%s%s", path, *path ? "." : "", key) >= (int)n)
		out[n - 1] = '\0';
}

static int
check_keys(struct ctx *c, json_object *o, const char *path, const char *const *allowed)
{
	json_object_object_foreach(o, key, val) {
		int ok = 0;
		(void)val;
		for (int i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				ok = 1;
		if (!ok) {
			char p[256];
			join(p, sizeof(p), path, key);
			return fail(c, p, "unknown field");
		}
	}
	return 0;
}

/* Number field: absent -> *v unchanged (return 0) unless required. */
static int
get_num(struct ctx *c, json_object *o, const char *path, const char *key, bool required,
        double lo, double hi, double *v)
{
	double d;
	char p[256];

	join(p, sizeof(p), path, key);
	switch (jget_num(o, key, lo, hi, &d)) {
	case JGET_OK:
		*v = d;
		return 0;
	case JGET_ABSENT:
	case JGET_NULL:
		return required ? fail(c, p, "missing (required)") : 0;
	case JGET_TYPE:
		return fail(c, p, "must be a number, got %s",
		            json_type_to_name(json_object_get_type(json_object_object_get(o, key))));
	case JGET_RANGE:
	default:
		return fail(c, p, "must be in [%g, %g], got %g", lo, hi, d);
	}
}

static int
get_int(struct ctx *c, json_object *o, const char *path, const char *key, bool required,
        int lo, int hi, int *v)
{
	double d = *v;
	char p[256];

	if (get_num(c, o, path, key, required, lo, hi, &d) < 0)
		return -1;
	if (d != floor(d)) {
		join(p, sizeof(p), path, key);
		return fail(c, p, "must be an integer, got %g", d);
	}
	*v = (int)d;
	return 0;
}

static int
get_bool(struct ctx *c, json_object *o, const char *path, const char *key, bool *v)
{
	enum jget r = jget_bool(o, key, v);
	char p[256];

	if (r == JGET_OK || r == JGET_ABSENT || r == JGET_NULL)
		return 0;
	join(p, sizeof(p), path, key);
	return fail(c, p, "must be true or false");
}

/* String field; absent or null -> NULL (error if required). */
static int
get_str(struct ctx *c, json_object *o, const char *path, const char *key, bool required,
        const char **v)
{
	enum jget r;
	char p[256];

	join(p, sizeof(p), path, key);
	*v = NULL;
	r = jget_str(o, key, v);
	if (r == JGET_OK)
		return 0;
	if (r == JGET_ABSENT || r == JGET_NULL)
		return required ? fail(c, p, "missing (required)") : 0;
	return fail(c, p, "must be a string");
}

static int
get_obj(struct ctx *c, json_object *o, const char *path, const char *key, bool required,
        json_type type, json_object **v)
{
	enum jget r;
	char p[256];

	join(p, sizeof(p), path, key);
	*v = NULL;
	r = jget_typed(o, key, type, v);
	if (r == JGET_OK)
		return 0;
	if (r == JGET_ABSENT || r == JGET_NULL)
		return required ? fail(c, p, "missing (required)") : 0;
	return fail(c, p, "must be %s", type == json_type_array ? "an array" : "an object");
}

/* --- sections ---------------------------------------------------------- */

static int
parse_model(struct ctx *c, json_object *o, struct sim_model *m)
{
	static const char *const keys[] = { "smt_share", "migration", "imbalance", "busy_util",
		"instructions_per_s", "remote_memory", "kcas_epoch_ms", "kcas_affinity_timeout",
		"kcas_aggr_tolerance", "kcas_overaggr_pct", "kcas_imb_pct", "kcas_pulls_per_s",
		"kcas_min_util", NULL };
	json_object *a;

	if (check_keys(c, o, "model", keys) < 0)
		return -1;
	if (get_obj(c, o, "model", "smt_share", false, json_type_array, &a) < 0)
		return -1;
	if (a) {
		if (json_object_array_length(a) != 4)
			return fail(c, "model.smt_share", "must list 4 factors (1, 2, 3, >=4 busy PUs)");
		for (int i = 0; i < 4; i++) {
			json_object *e = json_object_array_get_idx(a, (size_t)i);
			double d = json_object_get_double(e);
			char p[64];
			snprintf(p, sizeof(p), "model.smt_share[%d]", i);
			if (!json_object_is_type(e, json_type_int) && !json_object_is_type(e, json_type_double))
				return fail(c, p, "must be a number");
			if (!(d > 0 && d <= 1))
				return fail(c, p, "must be in (0, 1], got %g", d);
			m->smt_share[i] = d;
		}
	}
	if (get_num(c, o, "model", "migration", false, 0.01, 1, &m->migration) < 0 ||
	    get_num(c, o, "model", "imbalance", false, 0.1, 1e6, &m->imbalance) < 0 ||
	    get_num(c, o, "model", "busy_util", false, 0.01, 1, &m->busy_util) < 0 ||
	    get_num(c, o, "model", "instructions_per_s", false, 1, 1e13, &m->instructions_per_s) < 0 ||
	    get_num(c, o, "model", "remote_memory", false, 0.01, 1, &m->remote_memory) < 0 ||
	    get_num(c, o, "model", "kcas_epoch_ms", false, 0.1, 1e5, &m->kcas_epoch_ms) < 0 ||
	    get_int(c, o, "model", "kcas_affinity_timeout", false, 0, 1000000, &m->kcas_affinity_timeout) < 0 ||
	    get_int(c, o, "model", "kcas_aggr_tolerance", false, 0, 100, &m->kcas_aggr_tolerance) < 0 ||
	    get_int(c, o, "model", "kcas_overaggr_pct", false, 0, 100, &m->kcas_overaggr_pct) < 0 ||
	    get_int(c, o, "model", "kcas_imb_pct", false, 0, 100, &m->kcas_imb_pct) < 0 ||
	    get_num(c, o, "model", "kcas_pulls_per_s", false, 0, 1e6, &m->kcas_pulls_per_s) < 0 ||
	    get_num(c, o, "model", "kcas_min_util", false, 0, 1, &m->kcas_min_util) < 0)
		return -1;
	return 0;
}

static int
parse_host(struct ctx *c, json_object *o, struct sim_scenario *s)
{
	static const char *const keys[] = { "topology", "reserved_cpus", "llc_bw_gbs",
		"perf_counters", "wakeup_trace", "wakeup_noise_hz", "mbm", "unjudged_groups", "overcommit", NULL };
	const char *str;
	struct llcd_err e;

	if (check_keys(c, o, "host", keys) < 0)
		return -1;
	if (get_str(c, o, "host", "topology", true, &str) < 0)
		return -1;
	if (*str == '\0')
		return fail(c, "host.topology", "must not be empty (an hwloc synthetic string or XML path)");
	if (snprintf(s->topology, sizeof(s->topology), "%s", str) >= (int)sizeof(s->topology))
		return fail(c, "host.topology", "too long");
	if (get_str(c, o, "host", "reserved_cpus", false, &str) < 0)
		return -1;
	if (str && cpuset_parse(&s->reserved, str, &e) < 0)
		return fail(c, "host.reserved_cpus", "%s", e.msg);
	if (get_num(c, o, "host", "llc_bw_gbs", false, 0, 1e9, &s->llc_bw_gbs) < 0 ||
	    get_bool(c, o, "host", "perf_counters", &s->perf_counters) < 0 ||
	    get_bool(c, o, "host", "wakeup_trace", &s->wakeup_trace) < 0 ||
	    get_bool(c, o, "host", "mbm", &s->mbm) < 0)
		return -1;
	s->wakeup_noise_hz = 20;
	if (get_num(c, o, "host", "wakeup_noise_hz", false, 0, 1e5, &s->wakeup_noise_hz) < 0)
		return -1;
	/* llcd.conf's unjudged-groups for the llcd and static runs */
	if (get_str(c, o, "host", "unjudged_groups", false, &str) < 0)
		return -1;
	if (str && strcmp(str, "act") != 0 && strcmp(str, "show") != 0)
		return fail(c, "host.unjudged_groups", "must be \"show\" or \"act\", got \"%s\"", str);
	s->act_unjudged = str && strcmp(str, "act") == 0;
	/* llcd.conf's overcommit (vCPUs per PU of the shared pool) */
	s->overcommit = 1.0;
	if (get_num(c, o, "host", "overcommit", false, 0.01, 1000, &s->overcommit) < 0)
		return -1;
	return 0;
}

static int
find_group(struct sim_scenario *s, int dom, const char *name)
{
	for (int i = 0; i < s->ngroups; i++)
		if (s->groups[i].domain == dom && strcmp(s->groups[i].name, name) == 0)
			return i;
	return -1;
}

/* A vCPU list field of a domain with nvcpus: non-empty and in range. */
static int
get_vcpus(struct ctx *c, json_object *o, const char *path, int nvcpus, struct cpuset *out)
{
	const char *str;
	struct llcd_err e;
	char p[256];

	if (get_str(c, o, path, "vcpus", true, &str) < 0)
		return -1;
	join(p, sizeof(p), path, "vcpus");
	if (cpuset_parse(out, str, &e) < 0)
		return fail(c, p, "%s", e.msg);
	if (cpuset_empty(out))
		return fail(c, p, "must name at least one vCPU");
	if (cpuset_last(out) >= nvcpus)
		return fail(c, p, "vCPU %d out of range (the domain has %d)", cpuset_last(out), nvcpus);
	return 0;
}

#define SIM_MAX_WAKES 64        /* `wakes` entries per load entry */

/* "wakes": [ { "vcpus": "1-6", "hz": 500 } ] of a load entry. */
static int
parse_wakes(struct ctx *c, json_object *a, const char *path, int nvcpus, struct sim_load *l)
{
	static const char *const keys[] = { "vcpus", "hz", NULL };
	size_t n = json_object_array_length(a);
	char p[256];

	if (n > SIM_MAX_WAKES)
		return fail(c, path, "at most %d entries", SIM_MAX_WAKES);
	l->wakes = calloc(n ? n : 1, sizeof(*l->wakes));
	if (l->wakes == NULL)
		return fail(c, path, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct sim_wakes *k = &l->wakes[i];
		int v, j = 0;
		if (snprintf(p, sizeof(p), "%s[%zu]", path, i) >= (int)sizeof(p))
			return fail(c, path, "path too long");
		if (!json_object_is_type(e, json_type_object))
			return fail(c, p, "must be an object");
		if (check_keys(c, e, p, keys) < 0 || get_vcpus(c, e, p, nvcpus, &k->vcpus) < 0 ||
		    get_num(c, e, p, "hz", true, 0, 1e6, &k->hz) < 0)
			return -1;
		l->nwakes++;
		k->n = cpuset_count(&k->vcpus);
		if ((k->list = malloc(sizeof(int) * (size_t)k->n)) == NULL)
			return fail(c, p, "out of memory");
		CPUSET_FOREACH(v, &k->vcpus)
			k->list[j++] = v;
	}
	return 0;
}

static int
parse_load(struct ctx *c, json_object *o, const char *path, struct sim_scenario *s,
           int dom, struct sim_load *l)
{
	static const char *const keys[] = { "from_s", "to_s", "vcpus", "util", "group", "sharing",
		"bw_gbs", "barrier", "wakeups_hz", "wakes", NULL };
	struct sim_domain *d = &s->domains[dom];
	const char *gname;
	double sharing = -1;
	bool barrier = false, has_barrier;
	json_object *wk;
	char p[256];

	if (check_keys(c, o, path, keys) < 0)
		return -1;
	l->from_s = 0;
	l->to_s = INFINITY;
	l->util = 0;
	l->bw_gbs = 0;
	l->wakeups_hz = 0;
	l->group = -1;
	if (get_num(c, o, path, "from_s", false, 0, 1e9, &l->from_s) < 0 ||
	    get_num(c, o, path, "to_s", false, 0, 1e9, &l->to_s) < 0 ||
	    get_num(c, o, path, "util", true, 0, 1, &l->util) < 0 ||
	    get_num(c, o, path, "bw_gbs", false, 0, 1e9, &l->bw_gbs) < 0 ||
	    get_num(c, o, path, "sharing", false, 0, 1000, &sharing) < 0 ||
	    get_num(c, o, path, "wakeups_hz", false, 0, 1e6, &l->wakeups_hz) < 0)
		return -1;
	if (!(l->to_s > l->from_s)) {
		join(p, sizeof(p), path, "to_s");
		return fail(c, p, "must be after from_s (%g), got %g", l->from_s, l->to_s);
	}
	if (get_vcpus(c, o, path, d->nvcpus, &l->vcpus) < 0)
		return -1;
	if (get_obj(c, o, path, "wakes", false, json_type_array, &wk) < 0)
		return -1;
	join(p, sizeof(p), path, "wakes");
	if (wk && parse_wakes(c, wk, p, d->nvcpus, l) < 0)
		return -1;
	has_barrier = json_object_object_get_ex(o, "barrier", NULL);
	if (get_bool(c, o, path, "barrier", &barrier) < 0 || get_str(c, o, path, "group", false, &gname) < 0)
		return -1;
	if (gname == NULL) {
		if (sharing >= 0 || has_barrier || json_object_object_get_ex(o, "wakeups_hz", NULL)) {
			join(p, sizeof(p), path, sharing >= 0 ? "sharing" : has_barrier ? "barrier" : "wakeups_hz");
			return fail(c, p, "only meaningful with a group");
		}
		return 0;
	}
	join(p, sizeof(p), path, "group");
	if (*gname == '\0' || strlen(gname) >= POLICY_GROUP_NAME)
		return fail(c, p, "must be 1..%d characters", POLICY_GROUP_NAME - 1);
	int g = find_group(s, dom, gname);
	if (g < 0) {
		struct sim_group *ng = realloc(s->groups, sizeof(*ng) * (size_t)(s->ngroups + 1));
		if (ng == NULL)
			return fail(c, p, "out of memory");
		s->groups = ng;
		g = s->ngroups++;
		memset(&s->groups[g], 0, sizeof(s->groups[g]));
		snprintf(s->groups[g].name, sizeof(s->groups[g].name), "%s", gname);
		s->groups[g].domain = dom;
		s->groups[g].sharing = sharing >= 0 ? sharing : 0;
		s->groups[g].barrier = barrier;
	} else {
		struct sim_group *G = &s->groups[g];
		if (sharing >= 0 && sharing != G->sharing) {
			join(p, sizeof(p), path, "sharing");
			return fail(c, p, "group '%s' already has sharing %g", gname, G->sharing);
		}
		if (has_barrier && barrier != G->barrier) {
			join(p, sizeof(p), path, "barrier");
			return fail(c, p, "group '%s' already has barrier %s", gname, G->barrier ? "true" : "false");
		}
	}
	cpuset_or(&s->groups[g].vcpus, &s->groups[g].vcpus, &l->vcpus);
	l->group = g;
	return 0;
}

static int
parse_guest_topo(struct ctx *c, json_object *o, const char *path, struct sim_domain *d)
{
	static const char *const keys[] = { "sockets", "dies", "clusters", "cores", "threads", NULL };
	struct policy_guest_topo *g = &d->guest;

	if (check_keys(c, o, path, keys) < 0)
		return -1;
	if (get_int(c, o, path, "sockets", false, 1, 4096, &g->sockets) < 0 ||
	    get_int(c, o, path, "dies", false, 1, 4096, &g->dies) < 0 ||
	    get_int(c, o, path, "clusters", false, 1, 4096, &g->clusters) < 0 ||
	    get_int(c, o, path, "cores", false, 1, 4096, &g->cores) < 0 ||
	    get_int(c, o, path, "threads", false, 1, 64, &g->threads) < 0)
		return -1;
	long total = (long)g->sockets * g->dies * g->clusters * g->cores * g->threads;
	if (total != d->nvcpus)
		return fail(c, path, "sockets*dies*clusters*cores*threads = %ld, but the domain has %d vCPUs",
		    total, d->nvcpus);
	return 0;
}

#define SIM_MAX_QEMU_THREADS 4096       /* qemu_threads of one domain, summed */

/* "qemu_threads": [ { "count": 2, "util": 0.35 } ] of a domain. */
static int
parse_qemu_threads(struct ctx *c, json_object *a, const char *path, struct sim_domain *d)
{
	static const char *const keys[] = { "count", "util", NULL };
	size_t n = json_object_array_length(a);
	char p[256];

	if (n > 64)
		return fail(c, path, "at most 64 entries");
	d->qemu = calloc(n ? n : 1, sizeof(*d->qemu));
	if (d->qemu == NULL)
		return fail(c, path, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct sim_qemu *q = &d->qemu[i];
		if (snprintf(p, sizeof(p), "%s[%zu]", path, i) >= (int)sizeof(p))
			return fail(c, path, "path too long");
		if (!json_object_is_type(e, json_type_object))
			return fail(c, p, "must be an object");
		if (check_keys(c, e, p, keys) < 0 ||
		    get_int(c, e, p, "count", true, 1, SIM_MAX_QEMU_THREADS, &q->count) < 0 ||
		    get_num(c, e, p, "util", true, 0, 1, &q->util) < 0)
			return -1;
		d->nqemu++;
		if (d->qemu_count + q->count > SIM_MAX_QEMU_THREADS)
			return fail(c, p, "more than %d QEMU threads in the domain", SIM_MAX_QEMU_THREADS);
		d->qemu_count += q->count;
	}
	return 0;
}

static int
parse_domain(struct ctx *c, json_object *o, int idx, struct sim_scenario *s)
{
	static const char *const keys[] = { "name", "vcpus", "start_s", "stop_s", "guest_topology",
		"llc_policy", "guest_helper", "memory_node", "load", "qemu_threads", NULL };
	struct sim_domain *d = &s->domains[idx];
	char path[64], p[256];
	const char *str;
	json_object *f;

	snprintf(path, sizeof(path), "domains[%d]", idx);
	if (!json_object_is_type(o, json_type_object))
		return fail(c, path, "must be an object");
	if (check_keys(c, o, path, keys) < 0)
		return -1;
	if (get_str(c, o, path, "name", true, &str) < 0)
		return -1;
	join(p, sizeof(p), path, "name");
	if (*str == '\0' || strlen(str) >= POLICY_NAME)
		return fail(c, p, "must be 1..%d characters", POLICY_NAME - 1);
	for (const char *q = str; *q; q++)
		if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
			return fail(c, p, "must not contain quotes, backslashes or control characters");
	snprintf(d->name, sizeof(d->name), "%s", str);
	for (int i = 0; i < idx; i++)
		if (strcmp(s->domains[i].name, d->name) == 0)
			return fail(c, p, "'%s' already names domains[%d]", d->name, i);
	if (get_int(c, o, path, "vcpus", true, 1, CPUSET_MAX, &d->nvcpus) < 0)
		return -1;
	d->start_s = 0;
	d->stop_s = INFINITY;
	if (get_num(c, o, path, "start_s", false, 0, 1e9, &d->start_s) < 0)
		return -1;
	if (json_object_object_get_ex(o, "stop_s", &f) && f != NULL) {
		if (get_num(c, o, path, "stop_s", false, 0, 1e9, &d->stop_s) < 0)
			return -1;
		if (!(d->stop_s > d->start_s)) {
			join(p, sizeof(p), path, "stop_s");
			return fail(c, p, "must be after start_s (%g), got %g", d->start_s, d->stop_s);
		}
	}
	d->guest = (struct policy_guest_topo){ 1, 1, 1, d->nvcpus, 1 };
	if (get_obj(c, o, path, "guest_topology", false, json_type_object, &f) < 0)
		return -1;
	if (f) {
		d->guest = (struct policy_guest_topo){ 1, 1, 1, 1, 1 };
		join(p, sizeof(p), path, "guest_topology");
		if (parse_guest_topo(c, f, p, d) < 0)
			return -1;
	}
	if (get_str(c, o, path, "llc_policy", false, &str) < 0)
		return -1;
	if (str && (d->llc_policy = strdup(str)) == NULL)
		return fail(c, path, "out of memory");
	if (get_bool(c, o, path, "guest_helper", &d->guest_helper) < 0)
		return -1;
	d->memory_node = -1;            /* checked against the host in sim_world_new() */
	if (get_int(c, o, path, "memory_node", false, 0, 4095, &d->memory_node) < 0)
		return -1;
	if (get_obj(c, o, path, "qemu_threads", false, json_type_array, &f) < 0)
		return -1;
	join(p, sizeof(p), path, "qemu_threads");
	if (f && parse_qemu_threads(c, f, p, d) < 0)
		return -1;
	if (get_obj(c, o, path, "load", false, json_type_array, &f) < 0)
		return -1;
	if (f) {
		size_t n = json_object_array_length(f);
		if (n > 4096)
			return fail(c, path, "load: at most 4096 entries");
		d->load = calloc(n ? n : 1, sizeof(*d->load));
		if (d->load == NULL)
			return fail(c, path, "out of memory");
		d->load_cap = (int)n;
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(f, i);
			snprintf(p, sizeof(p), "%s.load[%zu]", path, i);
			if (!json_object_is_type(e, json_type_object))
				return fail(c, p, "must be an object");
			if (parse_load(c, e, p, s, idx, &d->load[i]) < 0)
				return -1;
			d->nload++;
		}
	}
	return 0;
}

static int
parse_root(struct ctx *c, json_object *root, struct sim_scenario *s)
{
	static const char *const keys[] = { "host", "period_ms", "duration_s", "seed", "model",
		"domains", "description", NULL };
	json_object *f;
	double seed = 1;

	if (!json_object_is_type(root, json_type_object))
		return fail(c, "(top level)", "must be an object");
	if (check_keys(c, root, "", keys) < 0)
		return -1;
	if (get_obj(c, root, "", "host", true, json_type_object, &f) < 0 || parse_host(c, f, s) < 0)
		return -1;
	s->period_ms = 100;
	if (get_num(c, root, "", "period_ms", false, 1, 60000, &s->period_ms) < 0 ||
	    get_num(c, root, "", "duration_s", true, 0.001, 1e7, &s->duration_s) < 0 ||
	    get_num(c, root, "", "seed", false, 0, 9007199254740992.0, &seed) < 0)
		return -1;
	if (seed != floor(seed))
		return fail(c, "seed", "must be an integer");
	s->seed = (uint64_t)seed;
	if (s->duration_s * 1000 / s->period_ms > 1e7)
		return fail(c, "duration_s", "more than 10 million periods");
	if (get_obj(c, root, "", "model", false, json_type_object, &f) < 0 || (f && parse_model(c, f, &s->model) < 0))
		return -1;
	if (get_obj(c, root, "", "domains", true, json_type_array, &f) < 0)
		return -1;
	size_t n = json_object_array_length(f);
	if (n > 100000)
		return fail(c, "domains", "at most 100000 domains");
	s->domains = calloc(n ? n : 1, sizeof(*s->domains));
	if (s->domains == NULL)
		return fail(c, "domains", "out of memory");
	for (size_t i = 0; i < n; i++) {
		s->ndomains = (int)i + 1;
		if (parse_domain(c, json_object_array_get_idx(f, i), (int)i, s) < 0)
			return -1;
	}
	return 0;
}

struct sim_scenario *
sim_scenario_parse(const char *json, size_t len, const char *name, struct llcd_err *err)
{
	struct ctx c = { name ? name : "scenario", err };
	struct sim_scenario *s = calloc(1, sizeof(*s));
	struct json_tokener *tok;
	json_object *root;

	if (s == NULL) {
		llcd_err_set(err, "%s: out of memory", c.file);
		return NULL;
	}
	sim_model_defaults(&s->model);
	snprintf(s->name, sizeof(s->name), "%s", c.file);
	if ((tok = json_tokener_new()) == NULL) {
		free(s);
		llcd_err_set(err, "%s: out of memory", c.file);
		return NULL;
	}
	root = json_tokener_parse_ex(tok, json, (int)len);
	if (root == NULL || (size_t)json_tokener_get_parse_end(tok) < len) {
		enum json_tokener_error je = json_tokener_get_error(tok);
		size_t end = json_tokener_get_parse_end(tok);
		int line = 1;
		for (size_t i = 0; i < end && i < len; i++)
			line += json[i] == '\n';
		if (root && je == json_tokener_success) {
			/* trailing text after the document */
			int only_space = 1;
			for (size_t i = end; i < len; i++)
				if (json[i] != ' ' && json[i] != '\n' && json[i] != '\t' && json[i] != '\r')
					only_space = 0;
			if (!only_space) {
				llcd_err_set(err, "%s:%d: not JSON: text after the document", c.file, line);
				goto fail;
			}
		} else {
			llcd_err_set(err, "%s:%d: not JSON: %s", c.file, line,
			    je == json_tokener_continue ? "unexpected end of file" : json_tokener_error_desc(je));
			goto fail;
		}
	}
	if (parse_root(&c, root, s) < 0)
		goto fail;
	json_object_put(root);
	json_tokener_free(tok);
	return s;
fail:
	json_object_put(root);
	json_tokener_free(tok);
	sim_scenario_free(s);
	return NULL;
}

struct sim_scenario *
sim_scenario_load(const char *path, struct llcd_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, name[128];
	size_t len = 0, cap = 0, n;
	struct sim_scenario *s;
	const char *base = strrchr(path, '/');

	if (f == NULL) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = len + 65536 + cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				llcd_err_set(err, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0 && len < (64u << 20));
	if (ferror(f) || len >= (64u << 20)) {
		llcd_err_set(err, "%s: %s", path, ferror(f) ? "read error" : "larger than 64 MiB");
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	s = sim_scenario_parse(buf, len, path, err);
	free(buf);
	if (s) {
		base = base ? base + 1 : path;
		snprintf(name, sizeof(name), "%s", base);
		char *dot = strrchr(name, '.');
		if (dot && strcmp(dot, ".json") == 0)
			*dot = '\0';
		snprintf(s->name, sizeof(s->name), "%s", name);
	}
	return s;
}

void
sim_scenario_free(struct sim_scenario *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->ndomains; i++) {
		struct sim_domain *d = &s->domains[i];
		free(d->llc_policy);
		/* every allocated entry: one that failed half-way may hold wakes */
		for (int j = 0; d->load && j < d->load_cap; j++) {
			for (int k = 0; k < d->load[j].nwakes; k++)
				free(d->load[j].wakes[k].list);
			free(d->load[j].wakes);
		}
		free(d->load);
		free(d->qemu);
	}
	free(s->domains);
	free(s->groups);
	free(s);
}
