/* The status routes of a running server: liveness (/healthz), readiness (/readyz), /version and
 * /metrics (with the cache gauges refreshed at scrape time). */
#include "server/status_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/app_state.h"
#include "server/http/metrics.h"
#include "server/version.h"

int
rf_route_healthz(void *app, const struct rf_http_request *req, struct rf_http_response *resp)
{
	(void)app;
	(void)req;
	return rf_http_reply_text(resp, 200, "ok\n");
}

int
rf_route_readyz(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct rf_app *app = userdata;
	json_t *detail = NULL;
	bool ready = rf_cache_ready(app->cache, app->cfg.kube.stale_after_ms, &detail);
	json_t *o = json_object();
	(void)req;
	if (!o) {
		json_decref(detail);
		return -1;
	}
	json_object_set_new(o, "ready", json_boolean(ready));
	json_object_set_new(o, "source", json_string(rf_cache_source(app->cache)));
	json_t *not_synced = json_array();
	const char *k;
	json_t *v;
	json_object_foreach (detail, k, v) {
		/* a kind the server does not serve ("served": false) is not waited for */
		if ((!json_is_true(json_object_get(v, "synced")) &&
		     !json_is_false(json_object_get(v, "served"))) ||
		    json_is_true(json_object_get(v, "stale")))
			json_array_append_new(not_synced, json_string(k));
	}
	json_object_set_new(o, "notSynced", not_synced);
	json_object_set_new(o, "kinds", detail);
	return rf_http_reply_json(resp, ready ? 200 : 503, o);
}

int
rf_route_version(void *app, const struct rf_http_request *req, struct rf_http_response *resp)
{
	(void)app;
	(void)req;
	return rf_http_reply_json(resp, 200, rf_version_json());
}

static void
cache_gauges(struct rf_app *app)
{
	struct rf_cluster *gen = rf_cache_get(app->cache);
	json_t *detail = NULL;
	char labels[64];
	rf_cache_ready(app->cache, app->cfg.kube.stale_after_ms, &detail);
	struct rf_cluster_counts cnt = { 0 };
	if (gen)
		cnt = rf_cluster_counts(gen);
	const size_t counts[RF_KIND_COUNT] = { cnt.nodes,  cnt.pods,    cnt.slices,
					       cnt.claims, cnt.classes, cnt.taint_rules };
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		rf_metric_labels(labels, sizeof(labels), RF_METRIC_CACHE_OBJECTS,
				 rf_kind_resource(k), NULL);
		rf_metric_set(RF_METRIC_CACHE_OBJECTS, labels, (double)counts[k]);
		json_t *kd = json_object_get(detail, rf_kind_resource(k));
		rf_metric_set(RF_METRIC_CACHE_SYNCED, labels,
			      json_is_true(json_object_get(kd, "synced")) ? 1 : 0);
		rf_metric_set(RF_METRIC_CACHE_STALENESS_SECONDS, labels,
			      rf_cache_staleness(app->cache, k));
	}
	json_decref(detail);
	size_t bad_topo = 0;
	for (size_t i = 0; gen && i < rf_cluster_n_nodes(gen); i++)
		bad_topo += rf_cluster_node_at(gen, i)->topo_error != NULL;
	rf_metric_set(RF_METRIC_TOPOLOGY_ANNOTATION_ERRORS, "", (double)bad_topo);
	rf_metric_set(RF_METRIC_CACHE_LAG_SECONDS, "", rf_cache_lag(app->cache));
	rf_cluster_unref(gen);
}

int
rf_route_metrics(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	size_t len = 0;
	(void)req;
	cache_gauges(userdata);
	char *text = rf_metrics_render(&len);
	if (!text)
		return -1;
	resp->status = 200;
	resp->body = text;
	resp->body_len = len;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}
