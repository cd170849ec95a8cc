/* The extender verbs kube-scheduler calls (reference/extender-protocol.md section 3), as route
 * handlers for server/http/http.h. userdata is the process's struct rf_app (server/app_state.h).
 * They run on MHD pool threads, concurrently, and never block on I/O. */
#ifndef RF_SERVER_VERBS_H
#define RF_SERVER_VERBS_H

#include "server/http/http.h"

/** POST /filter, /prioritize and /preempt. */
int rf_verb_filter(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_verb_prioritize(void *app, const struct rf_http_request *req, struct rf_http_response *resp);
int rf_verb_preempt(void *app, const struct rf_http_request *req, struct rf_http_response *resp);

/** POST /bind where railfit does not bind: 501 on a snapshot or the demo (binding needs a live
 * cluster), 403 when bind.enabled is false; both with the verb's Error. userdata: the app. */
int rf_verb_bind_static(void *app, const struct rf_http_request *req,
			struct rf_http_response *resp);
int rf_verb_bind_disabled(void *app, const struct rf_http_request *req,
			  struct rf_http_response *resp);

#endif
