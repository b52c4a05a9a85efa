/* config.c - llcd.conf parser. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->uri, sizeof(c->uri), "qemu:///system");
	c->period_ms = 1000;
	c->default_mode = POLICY_MODE_NONE;
	c->overcommit = 1.0;
	c->overcommit_isolated = 1.0;
	c->max_moves = 256;
	snprintf(c->counters, sizeof(c->counters), "auto");
	snprintf(c->socket, sizeof(c->socket), "/run/llcd/llcd.sock");
	snprintf(c->socket_group, sizeof(c->socket_group), "llcd");
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/llcd");
	snprintf(c->guest_channel_dir, sizeof(c->guest_channel_dir), "/run/llcd/channels");
	c->log_level = 1;
}

const char *
config_log_level_name(int level)
{
	return level <= 0 ? "warning" : level == 1 ? "info" : "debug";
}

static int
parse_int(const char *v, long lo, long hi, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int
parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "false")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int
set_str(char *dst, size_t len, const char *key, const char *v, struct llcd_err *err)
{
	if (strlen(v) >= len)
		return llcd_err_set(err, "'%s': value longer than %zu characters", key, len - 1);
	snprintf(dst, len, "%s", v);
	return 0;
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
	long n;
	bool b;

	if (!strcmp(key, "uri"))
		return set_str(c->uri, sizeof(c->uri), key, v, err);
	if (!strcmp(key, "topology"))
		return set_str(c->topology, sizeof(c->topology), key, strcmp(v, "live") ? v : "", err);
	if (!strcmp(key, "period-ms")) {
		if (parse_int(v, 10, 600000, &n) < 0)
			return llcd_err_set(err, "'period-ms': '%s' is not a number of milliseconds from 10 to 600000", v);
		c->period_ms = (int)n;
		return 0;
	}
	if (!strcmp(key, "default-mode")) {
		static const struct { const char *n; enum policy_mode m; } modes[] = {
			{ "none", POLICY_MODE_NONE }, { "static", POLICY_MODE_STATIC },
			{ "aggregate", POLICY_MODE_AGGREGATE }, { "spread", POLICY_MODE_SPREAD },
		};
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (!strcmp(v, modes[i].n)) {
				c->default_mode = modes[i].m;
				return 0;
			}
		return llcd_err_set(err, "'default-mode': '%s' is not one of none, static, aggregate, spread", v);
	}
	if (!strcmp(key, "default-isolation")) {
		if (!strcmp(v, "core") || !strcmp(v, "none")) {
			c->default_isolation = !strcmp(v, "core");
			return 0;
		}
		return llcd_err_set(err, "'default-isolation': '%s' is not one of core, none", v);
	}
	if (!strcmp(key, "reserved-cpus") || !strcmp(key, "shared-pool")) {
		struct cpuset s;
		struct llcd_err e2;
		if (!strcmp(v, !strcmp(key, "reserved-cpus") ? "none" : "dynamic"))
			v = "";
		if (cpuset_parse(&s, v, &e2) < 0)
			return llcd_err_set(err, "'%s': %s", key, e2.msg);
		return set_str(!strcmp(key, "reserved-cpus") ? c->reserved : c->shared_pool,
		    sizeof(c->reserved), key, v, err);
	}
	if (!strcmp(key, "overcommit") || !strcmp(key, "overcommit-isolated")) {
		char *end;
		double d = strtod(v, &end);
		if (end == v || *end || !isfinite(d) || d < 0.1 || d > 64)
			return llcd_err_set(err, "'%s': '%s' is not a ratio of vCPUs per CPU from 0.1 to 64", key, v);
		if (!strcmp(key, "overcommit"))
			c->overcommit = d;
		else
			c->overcommit_isolated = d;
		return 0;
	}
	if (!strcmp(key, "max-moves")) {
		if (parse_int(v, 1, 100000, &n) < 0)
			return llcd_err_set(err, "'max-moves': '%s' is not a number from 1 to 100000", v);
		c->max_moves = (int)n;
		return 0;
	}
	if (!strcmp(key, "counters")) {
		if (strcmp(v, "auto") && strcmp(v, "on") && strcmp(v, "off"))
			return llcd_err_set(err, "'counters': '%s' is not one of auto, on, off", v);
		return set_str(c->counters, sizeof(c->counters), key, v, err);
	}
	if (!strcmp(key, "socket")) {
		if (v[0] != '/')
			return llcd_err_set(err, "'socket': '%s' is not an absolute path", v);
		if (strlen(v) >= 108)
			return llcd_err_set(err, "'socket': path longer than 107 characters");
		return set_str(c->socket, sizeof(c->socket), key, v, err);
	}
	if (!strcmp(key, "socket-group"))
		return set_str(c->socket_group, sizeof(c->socket_group), key, strcmp(v, "none") ? v : "", err);
	if (!strcmp(key, "state-dir") || !strcmp(key, "guest-channel-dir")) {
		if (v[0] != '/')
			return llcd_err_set(err, "'%s': '%s' is not an absolute path", key, v);
		return set_str(!strcmp(key, "state-dir") ? c->state_dir : c->guest_channel_dir,
		    sizeof(c->state_dir), key, v, err);
	}
	if (!strcmp(key, "log-level")) {
		if (!strcmp(v, "warning"))
			c->log_level = 0;
		else if (!strcmp(v, "info"))
			c->log_level = 1;
		else if (!strcmp(v, "debug"))
			c->log_level = 2;
		else
			return llcd_err_set(err, "'log-level': '%s' is not one of warning, info, debug", v);
		return 0;
	}
	if (!strcmp(key, "qmp-passthrough") || !strcmp(key, "release-on-exit")) {
		if (parse_bool(v, &b) < 0)
			return llcd_err_set(err, "'%s': '%s' is not yes or no", key, v);
		if (!strcmp(key, "qmp-passthrough"))
			c->qmp_passthrough = b;
		else
			c->release_on_exit = b;
		return 0;
	}
	if (!strcmp(key, "metrics-listen")) {
		struct llcd_err e2;
		if (!strcmp(v, "off") || !strcmp(v, "none"))
			v = "";
		else if (config_parse_listen(v, NULL, NULL, &e2) < 0)
			return llcd_err_set(err, "'metrics-listen': %s", e2.msg);
		return set_str(c->metrics_listen, sizeof(c->metrics_listen), key, v, err);
	}
	return llcd_err_set(err, "unknown directive '%s' (see llcd.conf(5))", key);
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
		if ((end = strchr(buf, '#')) != NULL)
			*end = '\0';
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
	fprintf(f, "uri %s\n", c->uri);
	fprintf(f, "topology %s\n", c->topology[0] ? c->topology : "live");
	fprintf(f, "period-ms %d\n", c->period_ms);
	fprintf(f, "default-mode %s\n", policy_mode_name(c->default_mode));
	fprintf(f, "default-isolation %s\n", c->default_isolation ? "core" : "none");
	fprintf(f, "reserved-cpus %s\n", c->reserved[0] ? c->reserved : "none");
	fprintf(f, "shared-pool %s\n", c->shared_pool[0] ? c->shared_pool : "dynamic");
	fprintf(f, "overcommit %g\n", c->overcommit);
	fprintf(f, "overcommit-isolated %g\n", c->overcommit_isolated);
	fprintf(f, "max-moves %d\n", c->max_moves);
	fprintf(f, "counters %s\n", c->counters);
	fprintf(f, "socket %s\n", c->socket);
	fprintf(f, "socket-group %s\n", c->socket_group[0] ? c->socket_group : "none");
	fprintf(f, "state-dir %s\n", c->state_dir);
	fprintf(f, "guest-channel-dir %s\n", c->guest_channel_dir);
	fprintf(f, "log-level %s\n", config_log_level_name(c->log_level));
	fprintf(f, "qmp-passthrough %s\n", c->qmp_passthrough ? "yes" : "no");
	fprintf(f, "release-on-exit %s\n", c->release_on_exit ? "yes" : "no");
	fprintf(f, "metrics-listen %s\n", c->metrics_listen[0] ? c->metrics_listen : "off");
}
