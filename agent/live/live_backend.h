/* live_backend.h - the live back-end (live.h) behind llcd's daemon core
 * (daemon.h): fills a struct daemon_backend with live_agent_ops and the
 * hooks llcctl's requests need (events, describe, annotations, domain XML). */
#ifndef LLCD_LIVE_BACKEND_H
#define LLCD_LIVE_BACKEND_H

#include "daemon.h"
#include "live.h"

void live_backend_fill(struct live *l, struct daemon_backend *be);

#endif
