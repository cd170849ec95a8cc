/* State shared by the HTTP handlers of one railfit process: configuration, the cluster cache, the
 * CEL program cache, and process facts for /version and /debug. Handlers only read it; the cache
 * does its own locking. */
#ifndef RF_SERVER_APP_H
#define RF_SERVER_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/cel/cel.h"
#include "config/config.h"
#include "server/http/http.h"
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

/** The extender verbs: POST /filter, /prioritize (and /preempt). */
int rf_verb_filter(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_verb_prioritize(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_verb_preempt(void *app, const struct rf_http_request *req, struct rf_http_response *resp);

/** Operations and debugging routes. */
int rf_route_healthz(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_route_readyz(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_route_version(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_route_metrics(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_route_debug_nodes(void *app, const struct rf_http_request *req,
			 struct rf_http_response *resp);
int rf_route_debug_snapshot(void *app, const struct rf_http_request *req,
			    struct rf_http_response *resp);
int rf_route_debug_config(void *app, const struct rf_http_request *req,
			  struct rf_http_response *resp);
int rf_route_debug_explain(void *app, const struct rf_http_request *req,
			   struct rf_http_response *resp);

#endif
