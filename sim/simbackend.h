// SPDX-License-Identifier: GPL-2.0-or-later
/* simbackend.h - llcd on a simulated host (llcd-sim SCENARIO.json):
 * llcsim's world and ops back-end behind the daemon, one simulated period
 * per daemon period, so that llcd and llcctl run anywhere. */
#ifndef LLCD_SIMBACKEND_H
#define LLCD_SIMBACKEND_H

#include "daemon.h"

struct simbe;

/* Load the scenario; *topo receives its host (owned by the back-end). */
struct simbe *simbe_new(const char *scenario_path, struct llcd_err *err);
void simbe_free(struct simbe *s);
const struct topo *simbe_topo(const struct simbe *s);
double simbe_period_ms(const struct simbe *s);
const char *simbe_reserved(const struct simbe *s, char *buf, size_t len);
/* Fill the daemon back-end for it. */
void simbe_backend(struct simbe *s, struct daemon_backend *be);

#endif
