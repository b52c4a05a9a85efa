/* config.h - llcd.conf: one `keyword value` per line, '#' comments.
 * Every directive is documented in llcd.conf(5) and docs/llcd.conf.md. */
#ifndef LLCD_CONFIG_H
#define LLCD_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "annotation.h"
#include "cpuset.h"
#include "err.h"

#define CONFIG_PATH_MAX 256

struct config {
	char uri[CONFIG_PATH_MAX];              /* libvirt URI */
	char topology[CONFIG_PATH_MAX];         /* "" live host, XML file or synthetic */
	int period_ms;                          /* sampling period */
	enum policy_mode default_mode;          /* for unannotated domains */
	bool default_isolation;                 /* default-isolation core|none */
	char reserved[CONFIG_PATH_MAX];         /* CPU list, as written */
	char shared_pool[CONFIG_PATH_MAX];      /* CPU list, "" = dynamic */
	double overcommit, overcommit_isolated;
	int max_moves;                          /* vCPU moves per period, all domains */
	char counters[8];                       /* auto|on|off */
	char socket[CONFIG_PATH_MAX];
	char socket_group[64];                  /* "" = leave root's group */
	char state_dir[CONFIG_PATH_MAX];
	char guest_channel_dir[CONFIG_PATH_MAX];
	int log_level;                          /* 0 warning, 1 info, 2 debug */
	bool qmp_passthrough;                   /* allow tainting QMP passthrough */
	bool release_on_exit;                   /* give domains back on SIGTERM */
	char metrics_listen[128];               /* "" off, else ADDRESS:PORT (httpd.h) */
};

void config_defaults(struct config *c);
/* Parse a config file; on error err says "file:line: reason" and c holds
 * the defaults overlaid with what was read before the error. A missing
 * file is an error unless missing_ok. */
int config_load(struct config *c, const char *path, bool missing_ok, struct llcd_err *err);
/* Parse text (tests); name is used in messages. */
int config_parse(struct config *c, const char *text, const char *name, struct llcd_err *err);
/* Set one directive (llcctl tune uses the same names). */
int config_set(struct config *c, const char *key, const char *value, struct llcd_err *err);
/* Print the normalised configuration (llcd -nv). */
void config_print(const struct config *c, FILE *f);
const char *config_log_level_name(int level);
/* Parse a metrics-listen value: "PORT" (127.0.0.1), "ADDRESS:PORT" with a
 * numeric IPv4 address, "localhost" or "*" (every IPv4 address), or
 * "[IPv6]:PORT" ("[::]" every address). Fills addr (a struct
 * sockaddr_storage; addrlen: the bytes used) when not NULL. */
int config_parse_listen(const char *spec, void *addr, unsigned *addrlen, struct llcd_err *err);

#endif
