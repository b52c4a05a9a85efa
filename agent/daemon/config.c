// SPDX-License-Identifier: GPL-2.0-or-later
/* config.c - llcd.conf: the table of directives and its parser. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void
config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->uri, sizeof(c->uri), "qemu:///system");
	snprintf(c->libvirt_socket_uri, sizeof(c->libvirt_socket_uri), "qemu:///system");
	c->period_ms = 1000;
	c->default_mode = POLICY_MODE_NONE;
	c->overcommit = 1.0;
	c->overcommit_isolated = 1.0;
	c->max_moves = 256;
	c->counters = AGENT_COUNTERS_AUTO;
	c->unjudged_groups = CONFIG_UNJUDGED_SHOW;
	c->sampler = AGENT_SAMPLER_AUTO;
	snprintf(c->socket, sizeof(c->socket), "/run/llcd/llcd.sock");
	snprintf(c->socket_group, sizeof(c->socket_group), "llcd");
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/llcd");
	snprintf(c->guest_channel_dir, sizeof(c->guest_channel_dir), "/run/llcd/channels");
	c->backend = CONFIG_BACKEND_LIBVIRT;
	snprintf(c->qmp_socket_glob, sizeof(c->qmp_socket_glob), "/var/run/qemu-server/*.qmp");
	snprintf(c->policy_dir, sizeof(c->policy_dir), "/etc/llcd/policy");
	c->log_level = 1;
}

/* --- parsers: one per kind of value ----------------------------------------- */

static int
set_str(char *dst, size_t len, const char *key, const char *v, struct llcd_err *err)
{
	if (strlen(v) >= len)
		return llcd_err_set(err, "'%s': value longer than %zu characters", key, len - 1);
	snprintf(dst, len, "%s", v);
	return 0;
}

/* a string; dir->empty (if any) stands for "" */
static int
p_string(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	if (dir->empty && !strcmp(v, dir->empty))
		v = "";
	return set_str(field, dir->size, dir->name, v, err);
}

static void
f_string(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	const char *v = field;
	snprintf(buf, len, "%s", v[0] == '\0' && dir->empty ? dir->empty : v);
}

#define f_cpus f_string
#define f_path f_string

/* an absolute path, at most dir->hi characters when hi is set */
static int
p_path(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	if (v[0] != '/')
		return llcd_err_set(err, "'%s': '%s' is not an absolute path", dir->name, v);
	if (dir->hi > 0 && strlen(v) > (size_t)dir->hi)
		return llcd_err_set(err, "'%s': path longer than %.0f characters", dir->name, dir->hi);
	return set_str(field, dir->size, dir->name, v, err);
}

/* an absolute path, or dir->empty for "" */
static int
p_optpath(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	if (dir->empty && !strcmp(v, dir->empty))
		return set_str(field, dir->size, dir->name, "", err);
	return p_path(dir, field, v, err);
}

#define f_optpath f_string

/* an int from dir->lo to dir->hi */
static int
p_int(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < dir->lo || x > dir->hi)
		return llcd_err_set(err, "'%s': '%s' is not %s from %g to %g", dir->name, v, dir->what, dir->lo, dir->hi);
	*(int *)field = (int)x;
	return 0;
}

static void
f_int(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%d", *(const int *)field);
}

/* a double from dir->lo to dir->hi */
static int
p_double(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || *end || !isfinite(x) || x < dir->lo || x > dir->hi)
		return llcd_err_set(err, "'%s': '%s' is not %s from %g to %g", dir->name, v, dir->what, dir->lo, dir->hi);
	*(double *)field = x;
	return 0;
}

static void
f_double(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%g", *(const double *)field);
}

/* a CPU list, checked here and kept as written; dir->empty stands for "" */
static int
p_cpus(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	struct cpuset s;
	struct llcd_err e2;

	if (!strcmp(v, dir->empty))
		v = "";
	if (cpuset_parse(&s, v, &e2) < 0)
		return llcd_err_set(err, "'%s': %s", dir->name, e2.msg);
	return set_str(field, dir->size, dir->name, v, err);
}

/* one of dir->choices, into an int-sized enum */
static int
p_choice(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	long x = llcd_from_name(dir->choices, v);
	char names[256];

	if (x >= 0) {
		*(int *)field = (int)x;
		return 0;
	}
	llcd_names_list(dir->choices, names, sizeof(names));
	return llcd_err_set(err, "'%s': '%s' is not one of %s", dir->name, v, names);
}

static void
f_choice(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%s", llcd_name(dir->choices->names, dir->choices->n, *(const int *)field));
}

static int
p_bool(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "true")) {
		*(bool *)field = true;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "false")) {
		*(bool *)field = false;
		return 0;
	}
	return llcd_err_set(err, "'%s': '%s' is not yes or no", dir->name, v);
}

static void
f_bool(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
}

/* metrics-listen: dir->empty ("off") or what config_parse_listen() takes */
static int
p_listen(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	struct llcd_err e2;

	if (!strcmp(v, dir->empty) || !strcmp(v, "none"))
		v = "";
	else if (config_parse_listen(v, NULL, NULL, &e2) < 0)
		return llcd_err_set(err, "'%s': %s", dir->name, e2.msg);
	return set_str(field, dir->size, dir->name, v, err);
}

#define f_listen f_string

/* policy-rule: one more rule (config_parse fills in its file:line), or
 * "none": forget the rules given before */
static int
p_rule(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err)
{
	struct config_rules *rs = field;
	struct policyrule *r;
	struct config_rule *cr;

	if (!strcmp(v, dir->empty)) {
		rs->n = 0;
		return 0;
	}
	if (rs->n >= CONFIG_RULES)
		return llcd_err_set(err, "'%s': more than %d rules", dir->name, CONFIG_RULES);
	if ((r = malloc(sizeof(*r))) == NULL)
		return llcd_err_set(err, "out of memory");
	if (policyrule_parse(v, "", r, err) < 0) {
		free(r);
		return -1;
	}
	cr = &rs->r[rs->n];
	snprintf(cr->match, sizeof(cr->match), "%s", r->match);
	snprintf(cr->policy, sizeof(cr->policy), "%s", r->policy);
	snprintf(cr->source, sizeof(cr->source), "%s", r->source);
	cr->where[0] = '\0';
	rs->n++;
	free(r);
	return 0;
}

/* one rule as llcd.conf takes it back */
static void
rule_line(const struct config_rule *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", r->match, r->source[0] ? r->source : r->policy);
}

/* all rules, one a line, "none" when there are none (config_same compares
 * this; config_print prints each rule with its file:line) */
static void
f_rule(const struct config_directive *dir, const void *field, char *buf, size_t len)
{
	const struct config_rules *rs = field;

	buf[0] = '\0';
	if (rs->n == 0)
		snprintf(buf, len, "%s", dir->empty);
	for (int i = 0; i < rs->n; i++) {
		size_t n = strlen(buf);
		if (n + 1 < len) {
			snprintf(buf + n, len - n, "%s", i ? "\n" : "");
			n = strlen(buf);
			rule_line(&rs->r[i], buf + n, len - n);
		}
	}
}

/* --- the directives ---------------------------------------------------------- */

_Static_assert(sizeof(enum policy_mode) == sizeof(int) && sizeof(enum policy_isolation) == sizeof(int) &&
    sizeof(enum agent_counters) == sizeof(int) && sizeof(enum agent_sampler) == sizeof(int) &&
    sizeof(enum config_backend) == sizeof(int) && sizeof(enum config_unjudged) == sizeof(int),
    "p_choice writes an int");

LLCD_NAMES(config_unjudged, enum config_unjudged, CONFIG_UNJUDGED_ACT,
    [CONFIG_UNJUDGED_SHOW] = "show", [CONFIG_UNJUDGED_ACT] = "act")
LLCD_NAMES(config_backend, enum config_backend, CONFIG_BACKEND_QMP,
    [CONFIG_BACKEND_LIBVIRT] = "libvirt", [CONFIG_BACKEND_QMP] = "qmp")
static const char *const log_level_tab[] = { [0] = "warning", [1] = "info", [2] = "debug" };
static const struct llcd_names log_levels = { log_level_tab, 3 };

#define RELOAD CONFIG_RELOAD
#define TUNE (CONFIG_RELOAD | CONFIG_TUNE)
#define RESTART 0
/* name, kind of value (parser p_KIND, format f_KIND), field of struct
 * config, when a change takes effect, the parser's parameters */
#define DIRECTIVE(n, kind, fld, fl, ...) { .name = n, .parse = p_##kind, .format = f_##kind, \
	.offset = offsetof(struct config, fld), .size = sizeof(((struct config *)0)->fld), .flags = fl, __VA_ARGS__ }

/* One row per directive (test_man.sh and test_config.sh read the names,
 * and TUNE, from these lines). */
const struct config_directive config_directives[] = {
	DIRECTIVE("backend", choice, backend, RESTART, .choices = &config_backend_names),
	DIRECTIVE("uri", string, uri, RESTART),
	DIRECTIVE("libvirt-socket-glob", optpath, libvirt_socket_glob, RESTART, .empty = "none"),
	DIRECTIVE("libvirt-socket-uri", string, libvirt_socket_uri, RESTART),
	DIRECTIVE("topology", string, topology, RESTART, .empty = "live"),
	DIRECTIVE("period-ms", int, period_ms, TUNE, .lo = 10, .hi = 600000, .what = "a number of milliseconds"),
	DIRECTIVE("default-mode", choice, default_mode, TUNE, .choices = &policy_mode_names),
	DIRECTIVE("default-isolation", choice, default_isolation, TUNE, .choices = &policy_isolation_names),
	DIRECTIVE("reserved-cpus", cpus, reserved, TUNE, .empty = "none"),
	DIRECTIVE("shared-pool", cpus, shared_pool, TUNE, .empty = "dynamic"),
	DIRECTIVE("overcommit", double, overcommit, TUNE, .lo = 0.1, .hi = 64, .what = "a ratio of vCPUs per CPU"),
	DIRECTIVE("overcommit-isolated", double, overcommit_isolated, TUNE, .lo = 0.1, .hi = 64,
	    .what = "a ratio of vCPUs per CPU"),
	DIRECTIVE("max-moves", int, max_moves, TUNE, .lo = 1, .hi = 100000, .what = "a number"),
	DIRECTIVE("counters", choice, counters, TUNE, .choices = &agent_counters_names),
	DIRECTIVE("unjudged-groups", choice, unjudged_groups, TUNE, .choices = &config_unjudged_names),
	DIRECTIVE("sampler", choice, sampler, RESTART, .choices = &agent_sampler_names),
	DIRECTIVE("socket", path, socket, RESTART, .hi = 107),
	DIRECTIVE("socket-group", string, socket_group, RESTART, .empty = "none"),
	DIRECTIVE("state-dir", path, state_dir, RESTART),
	DIRECTIVE("guest-channel-dir", path, guest_channel_dir, RESTART),
	DIRECTIVE("log-level", choice, log_level, TUNE, .choices = &log_levels),
	DIRECTIVE("qmp-passthrough", bool, qmp_passthrough, RESTART),
	DIRECTIVE("qmp-socket-glob", path, qmp_socket_glob, RESTART),
	DIRECTIVE("qmp-hold", bool, qmp_hold, RESTART),
	DIRECTIVE("policy-dir", optpath, policy_dir, RESTART, .empty = "none"),
	DIRECTIVE("guest-channel-path", optpath, guest_channel_path, RESTART, .empty = "none"),
	DIRECTIVE("release-on-exit", bool, release_on_exit, RELOAD),
	DIRECTIVE("metrics-listen", listen, metrics_listen, RELOAD, .empty = "off"),
	DIRECTIVE("policy-rule", rule, rules, RELOAD | CONFIG_LIST, .empty = "none"),
	{ .name = NULL },
};

const struct config_directive *
config_directive(const char *name)
{
	for (const struct config_directive *d = config_directives; d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

void
config_format(const struct config *c, const struct config_directive *dir, char *buf, size_t len)
{
	dir->format(dir, (const char *)c + dir->offset, buf, len);
}

bool
config_same(const struct config *a, const struct config *b, const struct config_directive *dir)
{
	size_t len = dir->flags & CONFIG_LIST ? sizeof(struct config_rules) : CONFIG_PATH_MAX + 32;
	char *x = malloc(len), *y = malloc(len);
	bool same = false;

	if (x != NULL && y != NULL) {
		config_format(a, dir, x, len);
		config_format(b, dir, y, len);
		same = !strcmp(x, y);
	}
	free(x);
	free(y);
	return same;
}

void
config_copy(struct config *dst, const struct config *src, const struct config_directive *dir)
{
	memcpy((char *)dst + dir->offset, (const char *)src + dir->offset, dir->size);
}

void
config_list(unsigned flags, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const struct config_directive *d = config_directives; d->name; d++)
		if ((d->flags & flags) == flags)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", d->name);
}

int
config_parse_listen(const char *spec, void *addr, unsigned *addrlen, struct llcd_err *err)
{
	struct sockaddr_storage ss;
	char host[64];
	const char *colon, *port;
	char *end;
	long p;

	memset(&ss, 0, sizeof(ss));
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (rb == NULL || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
			return llcd_err_set(err, "'%s' is not [IPv6]:PORT", spec);
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = '\0';
		port = rb + 2;
	} else if ((colon = strrchr(spec, ':')) != NULL) {
		if ((size_t)(colon - spec) >= sizeof(host) || strchr(spec, ':') != colon)
			return llcd_err_set(err, "'%s' is not ADDRESS:PORT (an IPv6 address goes in brackets)", spec);
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = '\0';
		port = colon + 1;
	} else {
		snprintf(host, sizeof(host), "127.0.0.1");
		port = spec;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 0 || p > 65535)
		return llcd_err_set(err, "'%s': '%s' is not a port number from 0 to 65535", spec, port);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (!strcmp(host, "*"))
		snprintf(host, sizeof(host), "0.0.0.0");
	if (spec[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return llcd_err_set(err, "'%s': '%s' is not an IPv6 address", spec, host);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		if (addrlen)
			*addrlen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return llcd_err_set(err, "'%s': '%s' is not an IPv4 address, localhost or *", spec, host);
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		if (addrlen)
			*addrlen = sizeof(*s4);
	}
	if (addr)
		memcpy(addr, &ss, sizeof(ss));
	return 0;
}

int
config_set(struct config *c, const char *key, const char *v, struct llcd_err *err)
{
	const struct config_directive *d = config_directive(key);

	if (d == NULL)
		return llcd_err_set(err, "unknown directive '%s' (see llcd.conf(5))", key);
	return d->parse(d, (char *)c + d->offset, v, err);
}

int
config_parse(struct config *c, const char *text, const char *name, struct llcd_err *err)
{
	const char *p = text;
	int line = 0;

	while (*p) {
		char buf[1024], *key, *val, *end;
		size_t n = strcspn(p, "\n");
		line++;
		if (n >= sizeof(buf))
			return llcd_err_set(err, "%s:%d: line longer than %zu characters", name, line, sizeof(buf) - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n;
		if (*p == '\n')
			p++;
		/* a comment: '#' at the start or after a blank (a URI's '#' stays) */
		for (end = buf; (end = strchr(end, '#')) != NULL; end++)
			if (end == buf || isspace((unsigned char)end[-1])) {
				*end = '\0';
				break;
			}
		key = buf;
		while (isspace((unsigned char)*key))
			key++;
		end = key + strlen(key);
		while (end > key && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (*key == '\0')
			continue;
		val = key;
		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val == '\0')
			return llcd_err_set(err, "%s:%d: '%s' needs a value", name, line, key);
		*val++ = '\0';
		while (isspace((unsigned char)*val))
			val++;
		if (config_set(c, key, val, err) < 0)
			return llcd_err_prefix(err, "%s:%d", name, line);
		if (!strcmp(key, "policy-rule") && c->rules.n > 0 && c->rules.r[c->rules.n - 1].where[0] == '\0')
			snprintf(c->rules.r[c->rules.n - 1].where, sizeof(c->rules.r[0].where), "%s:%d", name, line);
	}
	return 0;
}

int
config_load(struct config *c, const char *path, bool missing_ok, struct llcd_err *err)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;
	int rc;

	if (f == NULL) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return llcd_err_set(err, "%s: %s", path, strerror(errno));
	}
	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 || len > 1 << 20) {
		fclose(f);
		return llcd_err_set(err, "%s: not a readable config file of at most 1 MiB", path);
	}
	text = malloc((size_t)len + 1);
	if (text == NULL || fread(text, 1, (size_t)len, f) != (size_t)len) {
		free(text);
		fclose(f);
		return llcd_err_set(err, "%s: read error", path);
	}
	text[len] = '\0';
	fclose(f);
	if (memchr(text, '\0', (size_t)len)) {
		free(text);
		return llcd_err_set(err, "%s: contains a NUL byte", path);
	}
	rc = config_parse(c, text, path, err);
	free(text);
	return rc;
}

void
config_print(const struct config *c, FILE *f)
{
	char buf[CONFIG_PATH_MAX + 32];
	char one[sizeof(struct config_rule)];

	for (const struct config_directive *d = config_directives; d->name; d++) {
		if (d->flags & CONFIG_LIST) {
			const struct config_rules *rs = &c->rules;
			if (rs->n == 0)
				fprintf(f, "%s %s\n", d->name, d->empty);
			for (int i = 0; i < rs->n; i++) {
				rule_line(&rs->r[i], one, sizeof(one));
				fprintf(f, "%s %s    # rule %d, %s\n", d->name, one, i + 1,
				    rs->r[i].where[0] ? rs->r[i].where : "command line");
			}
			continue;
		}
		config_format(c, d, buf, sizeof(buf));
		fprintf(f, "%s %s\n", d->name, buf);
	}
}

struct policyrule_set *
config_rules(const struct config *c, struct llcd_err *err)
{
	struct policyrule_set *s = policyrule_set_new();
	struct policyrule *r = malloc(sizeof(*r));

	if (s == NULL || r == NULL) {
		free(r);
		policyrule_set_free(s);
		llcd_err_set(err, "out of memory");
		return NULL;
	}
	for (int i = 0; i < c->rules.n; i++) {
		const struct config_rule *cr = &c->rules.r[i];
		char text[2 * POLICYRULE_TEXT + 2];
		snprintf(text, sizeof(text), "%s %s", cr->match, cr->policy);
		if (policyrule_parse(text, cr->where, r, err) < 0 || policyrule_set_add(s, r, err) < 0) {
			llcd_err_prefix(err, "%s", cr->where[0] ? cr->where : "policy-rule");
			free(r);
			policyrule_set_free(s);
			return NULL;
		}
		snprintf(s->r[s->n - 1].source, sizeof(s->r[0].source), "%s", cr->source);
	}
	free(r);
	return s;
}
