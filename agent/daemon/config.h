// SPDX-License-Identifier: GPL-2.0-or-later
/* config.h - llcd.conf: one `keyword value` per line, '#' comments.
 * Every directive is one row of config_directives[] (config.c), which
 * parsing, `llcd -nv`, `llcctl tune`, reload and the man-page check
 * (tests/packaging/test_man.sh) all read; each is documented in
 * llcd.conf(5) (packaging/man/llcd.conf.5) and docs/llcd.md. */
#ifndef LLCD_CONFIG_H
#define LLCD_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "annotation.h"
#include "cpuset.h"
#include "err.h"
#include "modes.h"
#include "names.h"
#include "policyrule.h"

#define CONFIG_PATH_MAX 256
#define CONFIG_RULES POLICYRULE_MAX

/* policy-rule lines (policyrule.h), in file order: each as normalised text
 * (MATCHes, the canonical policy), the @file it came from ("" inline)
 * and where it was written ("file:line"). Kept as text so that struct
 * config stays a plain value; config_rules() builds the matcher's set. */
struct config_rules {
	int n;
	struct config_rule {
		char match[POLICYRULE_TEXT];
		char policy[POLICYRULE_TEXT];
		char source[POLICYRULE_SOURCE];
		char where[POLICYRULE_WHERE];
	} r[CONFIG_RULES];
};

/* unjudged-groups: groups inferred from wakeups where nothing can judge
 * them (policy_host.act_unjudged) */
enum config_unjudged {
	CONFIG_UNJUDGED_SHOW = 0,               /* shown, not acted on */
	CONFIG_UNJUDGED_ACT = 1,                /* acted on without a judge */
};
LLCD_NAMES_DECLARE(config_unjudged, enum config_unjudged);

/* backend: where domains come from (llcd.c) */
enum config_backend {
	CONFIG_BACKEND_LIBVIRT = 0,             /* libvirt (agent/live/) */
	CONFIG_BACKEND_QMP = 1,                 /* QMP sockets, no libvirt (agent/qmpback/) */
};
LLCD_NAMES_DECLARE(config_backend, enum config_backend);

struct config {
	enum config_backend backend;
	char uri[CONFIG_PATH_MAX];              /* libvirt URI */
	char topology[CONFIG_PATH_MAX];         /* "" live host, XML file or synthetic */
	int period_ms;                          /* sampling period */
	enum policy_mode default_mode;          /* for unannotated domains */
	enum policy_isolation default_isolation;        /* for unannotated domains */
	char reserved[CONFIG_PATH_MAX];         /* CPU list, as written */
	char shared_pool[CONFIG_PATH_MAX];      /* CPU list, "" = dynamic */
	double overcommit, overcommit_isolated;
	int max_moves;                          /* vCPU moves per period, all domains */
	enum agent_counters counters;
	enum config_unjudged unjudged_groups;
	enum agent_sampler sampler;
	char socket[CONFIG_PATH_MAX];
	char socket_group[64];                  /* "" = leave root's group */
	char state_dir[CONFIG_PATH_MAX];
	char guest_channel_dir[CONFIG_PATH_MAX];
	int log_level;                          /* 0 warning, 1 info, 2 debug */
	bool qmp_passthrough;                   /* allow tainting QMP passthrough */
	bool release_on_exit;                   /* give domains back on SIGTERM */
	char metrics_listen[128];               /* "" off, else ADDRESS:PORT (httpd.h) */
	struct config_rules rules;              /* policy-rule, repeatable */
	/* backend qmp (qmpback.h) */
	char qmp_socket_glob[CONFIG_PATH_MAX];
	bool qmp_hold;                          /* keep the monitor connection */
	char policy_dir[CONFIG_PATH_MAX];       /* NAME.xml / VMID.xml; "" none */
	char guest_channel_path[CONFIG_PATH_MAX];       /* %n %i pattern; "" none */
	char libvirt_socket_glob[CONFIG_PATH_MAX];      /* many daemons; "" none */
	char libvirt_socket_uri[CONFIG_PATH_MAX];       /* their URI, ?socket= added */
};

/* One directive: its name, the parser that reads its value into its
 * field of struct config, and when a change takes effect. */
enum {
	CONFIG_RELOAD = 1 << 0,                 /* reload applies it (else: the next start) */
	CONFIG_TUNE = 1 << 1,                   /* llcctl tune may set it (implies CONFIG_RELOAD) */
	CONFIG_LIST = 1 << 2,                   /* repeatable: each line adds one (policy-rule);
	                                         * -nv prints one line per value */
};
struct config_directive {
	const char *name;
	/* parse v into field; err says "'name': reason" */
	int (*parse)(const struct config_directive *dir, void *field, const char *v, struct llcd_err *err);
	/* the normalised value, as -nv prints it and parse reads it back */
	void (*format)(const struct config_directive *dir, const void *field, char *buf, size_t len);
	size_t offset, size;                    /* the field in struct config */
	unsigned flags;                         /* CONFIG_RELOAD, CONFIG_TUNE */
	/* the parser's parameters */
	double lo, hi;                          /* numbers: the range; paths: hi is the longest */
	const char *what;                       /* numbers: "a number of milliseconds" */
	const char *empty;                      /* strings, CPU lists: the word for "" ("live") */
	const struct llcd_names *choices;       /* one of these names (names.h) */
};
/* Every directive, in the order -nv prints them; { NULL } last. */
extern const struct config_directive config_directives[];
/* The directive called name, NULL if there is none. */
const struct config_directive *config_directive(const char *name);
/* A directive's normalised value in c. */
void config_format(const struct config *c, const struct config_directive *dir, char *buf, size_t len);
/* Whether the directive has the same value in a and b. */
bool config_same(const struct config *a, const struct config *b, const struct config_directive *dir);
/* Copy the directive's value from src to dst. */
void config_copy(struct config *dst, const struct config *src, const struct config_directive *dir);
/* The names of the directives with all of flags, ", "-separated (messages). */
void config_list(unsigned flags, char *buf, size_t len);

void config_defaults(struct config *c);
/* Parse a config file; on error err says "file:line: reason" and c holds
 * the defaults overlaid with what was read before the error. A missing
 * file is an error unless missing_ok. */
int config_load(struct config *c, const char *path, bool missing_ok, struct llcd_err *err);
/* Parse text (tests); name is used in messages. */
int config_parse(struct config *c, const char *text, const char *name, struct llcd_err *err);
/* Set one directive (llcctl tune uses the same names). */
int config_set(struct config *c, const char *key, const char *value, struct llcd_err *err);
/* The policy-rule set of c (policyrule_set_free()); NULL with err when a
 * rule no longer parses (its @file changed: err names file:line). */
struct policyrule_set *config_rules(const struct config *c, struct llcd_err *err);
/* Print the normalised configuration (llcd -nv). */
void config_print(const struct config *c, FILE *f);
/* Parse a metrics-listen value: "PORT" (127.0.0.1), "ADDRESS:PORT" with a
 * numeric IPv4 address, "localhost" or "*" (every IPv4 address), or
 * "[IPv6]:PORT" ("[::]" every address). Fills addr (a struct
 * sockaddr_storage; addrlen: the bytes used) when not NULL. */
int config_parse_listen(const char *spec, void *addr, unsigned *addrlen, struct llcd_err *err);

#endif
