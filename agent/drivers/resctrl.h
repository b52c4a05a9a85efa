// SPDX-License-Identifier: GPL-2.0-or-later
/* resctrl.h - memory bandwidth and LLC occupancy per domain from the
 * kernel's resctrl filesystem (Documentation/arch/x86/resctrl.rst),
 * for the engine's home check (policy_domain_in.mbm_bytes).
 *
 * The layout read, below the root (normally /sys/fs/resctrl):
 *
 *   info/L3_MON/mon_features          one event per line; llcd needs
 *                                     mbm_total_bytes (llc_occupancy is
 *                                     read where listed)
 *   mon_groups/NAME/                  a monitoring group of the default
 *                                     control group, made with mkdir
 *   mon_groups/NAME/tasks             one TID per write() moves a thread in
 *   mon_groups/NAME/mon_data/mon_L3_XX/mbm_total_bytes   bytes since the
 *                                     group was made, per L3 domain XX
 *   mon_groups/NAME/mon_data/mon_L3_XX/llc_occupancy     bytes in that L3 now
 *
 * A counter file may read "Unavailable" (no RMID counter assigned, or the
 * domain's CPUs are offline) or "Error": that L3 domain is left out of the
 * sum and the sample says how many domains were read.
 *
 * The root is a parameter: the tests point it at a fixture tree of the
 * documented layout (tests/unit/test_resctrl.c), a FAKE SEAM for a
 * machine without resctrl; the daemon uses RESCTRL_ROOT. Group names are
 * llcd's own (resctrl_group_name); nothing read here is trusted beyond a
 * bounded decimal number.
 */
#ifndef LLCD_RESCTRL_H
#define LLCD_RESCTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define RESCTRL_ROOT "/sys/fs/resctrl"
#define RESCTRL_NAME_MAX 64

struct resctrl;

/* Open the resctrl filesystem at root: NULL with err saying why when it is
 * not mounted there or has no L3 bandwidth monitoring (mbm_total_bytes). */
struct resctrl *resctrl_open(const char *root, struct llcd_err *err);
void resctrl_free(struct resctrl *r);
/* llc_occupancy is listed in mon_features. */
bool resctrl_has_occupancy(const struct resctrl *r);

/* The monitoring group name for a domain: "llcd-" and the domain name with
 * anything outside [A-Za-z0-9_.-] replaced by '_', truncated to fit. */
void resctrl_group_name(const char *domain, char *buf, size_t len);

/* mkdir mon_groups/NAME (an existing one is reused). -1 with err: no RMID
 * left (ENOSPC), or another failure. */
int resctrl_group_create(struct resctrl *r, const char *name, struct llcd_err *err);
/* Move threads into the group (one write per TID). A thread that is gone
 * (ESRCH) is skipped; returns the number moved, or -1 with err. */
int resctrl_group_add_tasks(struct resctrl *r, const char *name, const int *tids, int n,
                            struct llcd_err *err);
/* rmdir the group (its threads fall back to the default group). */
int resctrl_group_remove(struct resctrl *r, const char *name, struct llcd_err *err);

struct resctrl_sample {
	uint64_t mbm_total_bytes;       /* summed over the L3 domains read */
	uint64_t llc_occupancy_bytes;   /* summed; 0 without llc_occupancy */
	int ndomains;                   /* mon_L3_XX directories found */
	int nread;                      /* ... whose mbm_total_bytes read a number */
};

/* Read the group's counters. -1 with err when the group or its mon_data is
 * missing or no L3 domain has a number. */
int resctrl_group_read(struct resctrl *r, const char *name, struct resctrl_sample *out,
                       struct llcd_err *err);

#endif
