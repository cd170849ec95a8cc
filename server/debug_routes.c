/* Debugging routes (DESIGN section 4): nodes, one node in depth, the snapshot, the effective
 * configuration and explain. Each takes one cache generation for the whole request. */
#include "server/debug_routes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "config/strbuf.h"
#include "server/app_state.h"
#include "server/explain_table.h"
#include "server/http/extender.h"
#include "server/predictions.h"
#include "server/snapshot/snapshot.h"

static struct rf_cluster *
take_gen(struct rf_app *app, struct rf_http_response *resp)
{
	struct rf_cluster *gen = rf_cache_get(app->cache);
	if (!gen)
		rf_http_reply_error(resp, 503, "not ready", "the cluster cache is not loaded yet");
	return gen;
}

static enum rf_level
best_free_level(const struct rf_cluster *c, const struct rf_node *n)
{
	enum rf_level best = RF_LEVEL_UNKNOWN;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *g = n->devices[i];
		if (g->kind != RF_DEV_GPU || !rf_device_is_free(c, g))
			continue;
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct rf_device *nic = n->devices[j];
			if (nic->kind != RF_DEV_NIC || !rf_device_is_free(c, nic))
				continue;
			enum rf_level l = rf_node_level(n, g, nic, NULL);
			if (l < best)
				best = l;
		}
	}
	return best;
}

static void
nic_headroom(const struct rf_cluster *c, const struct rf_node *n, const struct rf_config *cfg,
	     struct rf_quantity *ret_min, struct rf_quantity *ret_max, bool *ret_any)
{
	*ret_any = false;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind != RF_DEV_NIC)
			continue;
		struct rf_quantity h = rf_quantity_sub(rf_device_bw_capacity(d, cfg, NULL),
						       rf_device_bw_used(c, d));
		if (!*ret_any || rf_quantity_cmp(h, *ret_min) < 0)
			*ret_min = h;
		if (!*ret_any || rf_quantity_cmp(h, *ret_max) > 0)
			*ret_max = h;
		*ret_any = true;
	}
}

static json_t *
node_row(const struct rf_cluster *c, const struct rf_node *n, const struct rf_config *cfg,
	 const char *age)
{
	const struct rf_node_use *u = rf_node_use(c, n);
	char b1[RF_QUANTITY_FMT_MAX], b2[RF_QUANTITY_FMT_MAX];
	struct rf_quantity mn = { 0 }, mx = { 0 };
	bool any;
	nic_headroom(c, n, cfg, &mn, &mx, &any);
	enum rf_level bl = best_free_level(c, n);
	/* block and spine only where the node has them: rows of unlabelled fleets stay as they were
	 */
	return json_pack("{s:s, s:b, s:i, s:i, s:i, s:i, s:s?, s:s?, s:s?, s:i, s:i, s:s, s:s*, "
			 "s:s*}",
			 "node", n->name, "ready", rf_cluster_node_ready(c, n), "gpusFree",
			 (int)u->n_gpus_free, "gpus", (int)n->n_gpus, "nicsFree",
			 (int)u->n_nics_free, "nics", (int)n->n_nics, "bestFreeAlignment",
			 u->n_gpus_free && u->n_nics_free ? rf_level_name(bl) : NULL,
			 "nicHeadroomMin", any ? rf_quantity_format(mn, b1) : NULL,
			 "nicHeadroomMax", any ? rf_quantity_format(mx, b2) : NULL, "pools",
			 (int)n->n_pools, "pods", (int)u->n_pods, "dataAge", age, "block", n->block,
			 "spine", n->spine);
}

static char *
nodes_table(const json_t *rows)
{
	struct rf_strbuf b = { 0 };
	rf_strbuf_printf(&b, "%-20s %-6s %-9s %-9s %-10s %-12s %-12s %s\n", "NODE", "READY", "GPUS",
			 "NICS", "BEST-FREE", "NIC-HR-MIN", "NIC-HR-MAX", "PODS");
	size_t i;
	json_t *r;
	json_array_foreach (rows, i, r) {
		char g[24], n[24];
		snprintf(g, sizeof(g), "%lld/%lld",
			 (long long)json_integer_value(json_object_get(r, "gpusFree")),
			 (long long)json_integer_value(json_object_get(r, "gpus")));
		snprintf(n, sizeof(n), "%lld/%lld",
			 (long long)json_integer_value(json_object_get(r, "nicsFree")),
			 (long long)json_integer_value(json_object_get(r, "nics")));
		const char *bf = json_string_value(json_object_get(r, "bestFreeAlignment"));
		const char *hmin = json_string_value(json_object_get(r, "nicHeadroomMin"));
		const char *hmax = json_string_value(json_object_get(r, "nicHeadroomMax"));
		rf_strbuf_printf(&b, "%-20s %-6s %-9s %-9s %-10s %-12s %-12s %lld\n",
				 json_string_value(json_object_get(r, "node")),
				 json_is_true(json_object_get(r, "ready")) ? "True" : "False", g, n,
				 bf ? bf : "-", hmin ? hmin : "-", hmax ? hmax : "-",
				 (long long)json_integer_value(json_object_get(r, "pods")));
	}
	return rf_strbuf_steal(&b);
}

static json_t *
attrs_json(const struct rf_device *d)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < d->n_attrs; i++) {
		const struct rf_attr *a = &d->attrs[i];
		switch (a->kind) {
		case RF_ATTR_INT:
			json_object_set_new(o, a->name, json_integer(a->i));
			break;
		case RF_ATTR_BOOL:
			json_object_set_new(o, a->name, json_boolean(a->b));
			break;
		case RF_ATTR_STRING:
		case RF_ATTR_VERSION:
			json_object_set_new(o, a->name, json_string(a->s));
			break;
		case RF_ATTR_OTHER:
			json_object_set_new(o, a->name, json_string("<unsupported value kind>"));
			break;
		case RF_ATTR_LIST: {
			json_t *l = json_array();
			for (size_t k = 0; l && k < a->list->n; k++)
				json_array_append_new(l, a->list->elem == RF_ATTR_INT
								 ? json_integer(a->list->i[k])
							 : a->list->elem == RF_ATTR_BOOL
								 ? json_boolean(a->list->b[k])
								 : json_string(a->list->s[k]));
			json_object_set_new(o, a->name, l);
			break;
		}
		}
	}
	return o;
}

static json_t *
node_detail(const struct rf_cluster *c, const struct rf_node *n, const char *age)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	json_t *o = node_row(c, n, cfg, age);
	json_t *devs = json_array(), *pools = json_array(), *matrix = json_object();
	char b[RF_QUANTITY_FMT_MAX];
	if (!o || !devs || !pools || !matrix)
		goto fail;
	for (size_t i = 0; i < n->n_pools; i++) {
		const struct rf_pool *p = n->pools[i];
		json_array_append_new(
			pools, json_pack("{s:s, s:s, s:I, s:I, s:I, s:b, s:b}", "driver", p->driver,
					 "pool", p->name, "generation", (json_int_t)p->generation,
					 "resourceSliceCount", (json_int_t)p->slice_count, "slices",
					 (json_int_t)p->n_seen, "complete", p->complete, "invalid",
					 p->invalid));
	}
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		json_t *dj = json_pack("{s:s, s:s, s:s, s:s}", "device", d->name, "driver",
				       d->pool->driver, "pool", d->pool->name, "kind",
				       rf_dev_kind_name(d->kind));
		if (!dj)
			goto fail;
		json_object_set_new(dj, "pci", d->pci[0] ? json_string(d->pci) : json_null());
		json_object_set_new(dj, "pcieRoot",
				    d->loc.pcie_root ? json_string(d->loc.pcie_root) : json_null());
		json_object_set_new(dj, "numa",
				    d->loc.numa >= 0 ? json_integer(d->loc.numa) : json_null());
		json_object_set_new(dj, "numaSource",
				    d->numa_source ? json_string(d->numa_source) : json_null());
		json_object_set_new(dj, "rail", d->rail >= 0 ? json_integer(d->rail) : json_null());
		if (d->rdma >= 0)
			json_object_set_new(dj, "rdma", json_boolean(d->rdma));
		const struct rf_dev_use *du = rf_dev_use(c, d);
		if (du->holder) {
			char key[512];
			snprintf(key, sizeof(key), "%s/%s", du->holder->ns, du->holder->name);
			json_object_set_new(dj, "allocatedTo", json_string(key));
		} else {
			json_object_set_new(dj, "allocatedTo", json_null());
		}
		if (du->n_shares)
			json_object_set_new(dj, "shares", json_integer(du->n_shares));
		if (d->kind == RF_DEV_NIC) {
			const char *src;
			struct rf_quantity cap = rf_device_bw_capacity(d, cfg, &src);
			struct rf_quantity used = rf_device_bw_used(c, d);
			json_object_set_new(dj, "bandwidth",
					    json_string(rf_quantity_format(cap, b)));
			json_object_set_new(dj, "bandwidthSource", json_string(src));
			json_object_set_new(dj, "bandwidthUsed",
					    json_string(rf_quantity_format(used, b)));
		}
		json_object_set_new(dj, "attributes", attrs_json(d));
		size_t n_taints;
		const struct rf_taint *taints = rf_device_taints(c, d, &n_taints);
		if (n_taints) {
			/* source: "slice", or the DeviceTaintRule that put it there */
			json_t *ta = json_array();
			for (size_t t = 0; ta && t < n_taints; t++) {
				const struct rf_taint *tt = &taints[t];
				json_t *tj = json_pack("{s:s, s:s, s:s}", "key", tt->key, "effect",
						       tt->effect, "source",
						       tt->rule ? "DeviceTaintRule" : "slice");
				if (tj && tt->value)
					json_object_set_new(tj, "value", json_string(tt->value));
				if (tj && tt->rule)
					json_object_set_new(tj, "rule", json_string(tt->rule));
				json_array_append_new(ta, tj);
			}
			json_object_set_new(dj, "taints", ta);
		}
		json_array_append_new(devs, dj);
	}
	/* GPU x NIC locality, like nvidia-smi topo -m, with the source of each level */
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *g = n->devices[i];
		if (g->kind != RF_DEV_GPU)
			continue;
		json_t *row = json_object();
		for (size_t j = 0; row && j < n->n_devices; j++) {
			const struct rf_device *nic = n->devices[j];
			enum rf_level_source src;
			if (nic->kind != RF_DEV_NIC)
				continue;
			enum rf_level l = rf_node_level(n, g, nic, &src);
			char cell[48];
			snprintf(cell, sizeof(cell), "%s (%s)", rf_level_name(l),
				 rf_level_source_name(src));
			json_object_set_new(row, nic->name, json_string(cell));
		}
		json_object_set_new(matrix, g->name, row);
	}
	/* GPU x GPU: NV# where the annotation says they share NVLinks, else the PCIe level */
	json_t *gm = json_object();
	for (size_t i = 0; gm && i < n->n_devices; i++) {
		const struct rf_device *g = n->devices[i];
		if (g->kind != RF_DEV_GPU || g->partition)
			continue;
		json_t *row = json_object();
		for (size_t j = 0; row && j < n->n_devices; j++) {
			const struct rf_device *h = n->devices[j];
			enum rf_level_source src;
			unsigned links;
			char cell[48];
			if (h == g || h->kind != RF_DEV_GPU || h->partition)
				continue;
			enum rf_level l = rf_node_gpu_level(n, g, h, &src, &links);
			if (links)
				snprintf(cell, sizeof(cell), "NV%u (%s)", links,
					 rf_level_source_name(src));
			else
				snprintf(cell, sizeof(cell), "%s (%s)", rf_level_name(l),
					 rf_level_source_name(src));
			json_object_set_new(row, h->name, json_string(cell));
		}
		json_object_set_new(gm, g->name, row);
	}
	json_object_set_new(o, "gpuMatrix", gm);
	if (n->block || n->spine)
		json_object_set_new(o, "network",
				    json_pack("{s:s?, s:s?, s:s}", "block", n->block, "spine",
					      n->spine, "source", "node labels"));
	json_object_set_new(o, "pools", pools);
	json_object_set_new(o, "devices", devs);
	json_object_set_new(o, "matrix", matrix);
	json_object_set_new(o, "topologyAnnotation",
			    json_pack("{s:b, s:s?}", "used", n->topo != NULL && !n->topo_error,
				      "error", n->topo_error));
	json_object_set_new(o, "rails", json_integer(n->n_rails));
	json_object_set_new(o, "railsSource", json_string(cfg->devices.rails));
	json_object_set_new(o, "frontendBandwidth",
			    json_string(rf_quantity_format(n->fe_capacity, b)));
	json_object_set_new(o, "frontendBandwidthSource", json_string(n->fe_source));
	json_object_set_new(o, "frontendEgressUsed",
			    json_string(rf_quantity_format(rf_node_use(c, n)->fe_egress_used, b)));
	json_object_set_new(o, "frontendIngressUsed",
			    json_string(rf_quantity_format(rf_node_use(c, n)->fe_ingress_used, b)));
	return o;
fail:
	json_decref(o);
	json_decref(devs);
	json_decref(pools);
	json_decref(matrix);
	return NULL;
}

int
rf_route_debug_nodes(void *userdata, const struct rf_http_request *req,
		     struct rf_http_response *resp)
{
	struct rf_app *app = userdata;
	struct rf_cluster *gen = take_gen(app, resp);
	int r = 0;
	if (!gen)
		return 0;
	/* how old the device data is: a snapshot is static; live data is as old as the last
	 * contact for ResourceSlices or ResourceClaims */
	char age[32] = "static";
	if (strncmp(rf_cache_source(app->cache), "apiserver", 9) == 0) {
		double a = rf_cache_staleness(app->cache, RF_KIND_SLICES);
		double b = rf_cache_staleness(app->cache, RF_KIND_CLAIMS);
		snprintf(age, sizeof(age), "%.0fs", a > b ? a : b);
	}
	const char *name = req->subpath;
	if (name && name[0]) {
		const struct rf_node *n = rf_cluster_node(gen, name);
		if (!n)
			r = rf_http_reply_error(resp, 404, "node not found", name);
		else
			r = rf_http_reply_json(resp, 200, node_detail(gen, n, age));
		goto out;
	}
	json_t *rows = json_array();
	for (size_t i = 0; rows && i < rf_cluster_n_nodes(gen); i++)
		json_array_append_new(rows,
				      node_row(gen, rf_cluster_node_at(gen, i), &app->cfg, age));
	const char *o = rf_http_query(req, "o");
	if (o && strcmp(o, "table") == 0) {
		char *t = nodes_table(rows);
		json_decref(rows);
		if (!t) {
			r = -ENOMEM;
			goto out;
		}
		resp->status = 200;
		resp->body = t;
		resp->body_len = strlen(t);
		resp->content_type = "text/plain; charset=utf-8";
		goto out;
	}
	if (o && strcmp(o, "json") != 0) {
		json_decref(rows);
		r = rf_http_reply_error(resp, 400, "bad query parameter o",
					"expected o=table or o=json");
		goto out;
	}
	r = rf_http_reply_json(resp, 200, rows);
out:
	rf_cluster_unref(gen);
	return r;
}

int
rf_route_debug_snapshot(void *userdata, const struct rf_http_request *req,
			struct rf_http_response *resp)
{
	struct rf_cluster *gen = take_gen(userdata, resp);
	(void)req;
	if (!gen)
		return 0;
	int r = rf_http_reply_json(resp, 200, rf_snapshot_dump(gen));
	rf_cluster_unref(gen);
	return r;
}

/* The DRA rules the current generation predicts with, and where they came from. */
static json_t *
dra_rules_json(const struct rf_cluster *gen)
{
	const struct rf_config *cfg = rf_cluster_config(gen);
	char v[RF_DRA_VERSION_LEN];
	/* the store's builds carry the server's version in a copy naming the rules it chose */
	const char *from = cfg->kube.dra_server_version[0]        ? "server"
			   : cfg->kube.dra_version != RF_DRA_AUTO ? "configured"
								  : "default (no server version)";
	json_t *o = json_pack(
		"{s:s, s:s}", "version",
		rf_dra_version_format(rf_cluster_dra_version(gen), rf_cluster_dra_patch(gen), v),
		"from", from);
	if (o && cfg->kube.dra_server_version[0])
		json_object_set_new(o, "serverVersion", json_string(cfg->kube.dra_server_version));
	if (o && cfg->kube.dra_server_newer)
		json_object_set_new(o, "warning",
				    json_string("the API server is newer than the newest DRA "
						"allocator railfit knows: predicting with the "
						"newest rules"));
	return o;
}

int
rf_route_debug_config(void *userdata, const struct rf_http_request *req,
		      struct rf_http_response *resp)
{
	struct rf_app *app = userdata;
	(void)req;
	json_t *o = rf_config_to_json(&app->cfg);
	struct rf_cluster *gen = rf_cache_get(app->cache);
	if (o && gen)
		json_object_set_new(o, "draRules", dra_rules_json(gen));
	rf_cluster_unref(gen);
	return rf_http_reply_json(resp, 200, o);
}

int
rf_route_debug_placements(void *userdata, const struct rf_http_request *req,
			  struct rf_http_response *resp)
{
	(void)userdata;
	(void)req;
	json_t *list = rf_predictions_placements();
	if (!list)
		return -ENOMEM;
	return rf_http_reply_json(resp, 200, json_pack("{s:o}", "placements", list));
}

int
rf_route_debug_explain(void *userdata, const struct rf_http_request *req,
		       struct rf_http_response *resp)
{
	struct rf_app *app = userdata;
	json_t *pod = NULL, *doc = NULL;
	struct rf_cluster *gen = NULL;
	int r = 0;

	if (strcmp(req->method, "POST") == 0) {
		json_error_t jerr;
		pod = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
		if (!pod || !json_is_object(pod)) {
			char d[300];
			snprintf(d, sizeof(d), "expected a Pod as a JSON object: %s",
				 pod ? "got another JSON value" : jerr.text);
			r = rf_http_reply_error(resp, 400, "invalid pod", d);
			goto out;
		}
		char d[300];
		if (!json_is_object(json_object_get(pod, "metadata"))) {
			r = rf_http_reply_error(resp, 400, "invalid pod",
						"expected a Pod with metadata.name");
			goto out;
		}
		if (rf_extender_pod_check(pod, "", d, sizeof(d)) < 0) {
			r = rf_http_reply_error(resp, 400, "invalid pod", d);
			goto out;
		}
	}
	if (!(gen = take_gen(app, resp)))
		goto out;
	if (!pod) {
		/* GET /debug/explain/{namespace}/{pod} */
		char ns[256];
		const char *slash = strchr(req->subpath, '/');
		size_t nl = slash ? (size_t)(slash - req->subpath) : 0;
		if (!slash || nl == 0 || nl >= sizeof(ns) || !slash[1] || strchr(slash + 1, '/')) {
			r = rf_http_reply_error(resp, 400, "bad path",
						"expected /debug/explain/{namespace}/{pod}");
			goto out;
		}
		memcpy(ns, req->subpath, nl);
		ns[nl] = 0;
		const struct rf_pod *p = rf_cluster_pod(gen, ns, slash + 1);
		if (!p) {
			char d[600];
			snprintf(d, sizeof(d), "pod %s/%s is not in the cache", ns, slash + 1);
			r = rf_http_reply_error(resp, 404, "pod not found", d);
			goto out;
		}
		/* the cache keeps it packed: the object again, for explain */
		if (!(pod = rf_snapshot_expand(p->json, NULL))) {
			r = -ENOMEM;
			goto out;
		}
	}
	doc = rf_explain_pod(gen, pod, rf_http_query(req, "node"));
	if (!doc) {
		r = -ENOMEM;
		goto out;
	}
	const char *o = rf_http_query(req, "o");
	if (o && strcmp(o, "table") == 0) {
		char *t = rf_explain_table(doc);
		if (!t) {
			r = -ENOMEM;
			goto out;
		}
		resp->status = 200;
		resp->body = t;
		resp->body_len = strlen(t);
		resp->content_type = "text/plain; charset=utf-8";
		goto out;
	}
	r = rf_http_reply_json(resp, 200, doc);
	doc = NULL;
out:
	json_decref(doc);
	json_decref(pod);
	rf_cluster_unref(gen);
	return r;
}
