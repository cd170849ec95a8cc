/* The status routes of a running server, as route handlers for server/http/http.h: liveness,
 * readiness, /version and /metrics. userdata is the process's struct rf_app
 * (server/app_state.h). */
#ifndef RF_SERVER_STATUS_ROUTES_H
#define RF_SERVER_STATUS_ROUTES_H

#include "server/http/http.h"

/** GET /healthz and /livez. */
int rf_route_healthz(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
/** GET /readyz. */
int rf_route_readyz(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
/** GET /version. */
int rf_route_version(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
/** GET /metrics. */
int rf_route_metrics(void *app, const struct rf_http_request *req, struct rf_http_response *resp);

#endif
