/* The /debug routes (DESIGN section 4), as route handlers for server/http/http.h. userdata is
 * the process's struct rf_app (server/app_state.h); each takes one cache generation for the whole
 * request. */
#ifndef RF_SERVER_DEBUG_ROUTES_H
#define RF_SERVER_DEBUG_ROUTES_H

#include "server/http/http.h"

/** GET /debug/nodes (a table of all nodes) and /debug/nodes/<name> (one node in depth). */
int rf_route_debug_nodes(void *app, const struct rf_http_request *req,
			 struct rf_http_response *resp);
/** GET /debug/snapshot. */
int rf_route_debug_snapshot(void *app, const struct rf_http_request *req,
			    struct rf_http_response *resp);
/** GET /debug/config: the effective configuration. */
int rf_route_debug_config(void *app, const struct rf_http_request *req,
			  struct rf_http_response *resp);
/** POST /debug/explain (a pod in the body) and GET /debug/explain/<namespace>/<pod>. */
int rf_route_debug_explain(void *app, const struct rf_http_request *req,
			   struct rf_http_response *resp);

/** GET /debug/placements: the latest claims railfit predicted that became allocated, with the
 * predicted and the actual devices and levels (server/predictions.h). */
int rf_route_debug_placements(void *app, const struct rf_http_request *req,
			      struct rf_http_response *resp);

#endif
