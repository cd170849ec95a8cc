/* The state one railfit process gives its HTTP handlers (the `userdata` of every route in
 * server/verbs.h, server/status_routes.h and server/debug_routes.h): configuration, the cluster
 * cache, the CEL program cache, and process facts for /version and /debug. Handlers only read it;
 * the cache does its own locking. */
#ifndef RF_SERVER_APP_STATE_H
#define RF_SERVER_APP_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/cel/cel.h"
#include "config/config.h"
#include "server/http/parallel.h"
#include "server/kube/cache.h"

struct rf_app {
	struct rf_config cfg;
	struct rf_cache *cache;
	struct rf_cel_cache *cel;
	struct rf_parallel *parallel; /* spreads one large request over the cores; may be NULL */
	double start_time;            /* unix seconds */
	const char *config_path;
};

#endif
