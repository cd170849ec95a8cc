/* Explain documents (DESIGN section 4): per node the verdict, reasons, score parts, predicted and
 * best devices with their levels, headroom and where each fact came from. Pure logic. */
#include "alloc/explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

static json_t *
qjson(struct rf_quantity q)
{
	char buf[RF_QUANTITY_FMT_MAX];
	return json_string(rf_quantity_format(q, buf));
}

static json_t *
pick_json(const struct rf_node *n, const struct rf_assignment *a, size_t i)
{
	const struct rf_pick *p = &a->picks[i];
	const struct rf_device *d = p->dev;
	json_t *o = json_object();
	if (!o)
		return NULL;
	char claim[512];
	snprintf(claim, sizeof(claim), "%s/%s", p->claim->ns, p->claim->name);
	json_object_set_new(o, "claim", json_string(claim));
	json_object_set_new(o, "request", json_string(p->request));
	json_object_set_new(o, "driver", json_string(d->pool->driver));
	json_object_set_new(o, "pool", json_string(d->pool->name));
	json_object_set_new(o, "device", json_string(d->name));
	json_object_set_new(o, "kind", json_string(rf_dev_kind_name(d->kind)));
	/* level: to the nearest device of the other kind in the same assignment */
	enum rf_level best = RF_LEVEL_UNKNOWN;
	enum rf_level_source src = RF_SRC_NONE;
	const struct rf_device *peer = NULL;
	if (d->kind == RF_DEV_GPU || d->kind == RF_DEV_NIC) {
		enum rf_dev_kind want = d->kind == RF_DEV_GPU ? RF_DEV_NIC : RF_DEV_GPU;
		for (size_t j = 0; j < a->n; j++) {
			const struct rf_device *o2 = a->picks[j].dev;
			enum rf_level_source s2;
			if (o2->kind != want)
				continue;
			enum rf_level l = rf_node_level(n, d, o2, &s2);
			if (!peer || l < best) {
				best = l;
				src = s2;
				peer = o2;
			}
		}
	}
	json_object_set_new(o, "level", peer ? json_string(rf_level_name(best)) : json_null());
	if (peer) {
		json_object_set_new(o, "peer", json_string(peer->name));
		json_object_set_new(o, "levelSource", json_string(rf_level_source_name(src)));
	}
	json_object_set_new(o, "rail", d->rail >= 0 ? json_integer(d->rail) : json_null());
	if (d->pci[0])
		json_object_set_new(o, "pci", json_string(d->pci));
	json_object_set_new(o, "pcieRoot",
			    d->loc.pcie_root ? json_string(d->loc.pcie_root) : json_null());
	json_object_set_new(o, "numa", d->loc.numa >= 0 ? json_integer(d->loc.numa) : json_null());
	if (p->pinned)
		json_object_set_new(o, "allocated", json_true());
	return o;
}

static json_t *
assignment_json(const struct rf_node *n, const struct rf_assignment *a)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < a->n; i++) {
		json_t *p = pick_json(n, a, i);
		if (!p || json_array_append_new(arr, p) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *
rf_node_eval_json(const struct rf_cluster *c, const struct rf_node_eval *e)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	json_t *o = json_object(), *reasons = json_array(), *parts = json_object(),
	       *sources = json_object();
	if (!o || !reasons || !parts || !sources)
		goto fail;
	json_object_set_new(o, "node", json_string(e->node_name));
	json_object_set_new(o, "verdict", json_string(rf_verdict_name(e->verdict)));
	for (size_t i = 0; i < e->n_reasons; i++)
		json_array_append_new(reasons, json_string(e->reasons[i]));
	json_object_set_new(o, "reasons", reasons);
	reasons = NULL;
	json_object_set_new(o, "score", json_integer(e->score));
	for (int p = 0; p < RF_PART_COUNT; p++)
		if (e->part_applies[p])
			json_object_set_new(parts, rf_part_name(p),
					    json_real(round(e->parts[p] * 1000) / 1000));
	json_object_set_new(o, "parts", parts);
	parts = NULL;
	json_t *weights = json_object();
	for (int p = 0; weights && p < RF_PART_COUNT; p++)
		json_object_set_new(weights, rf_part_name(p),
				    json_real(rf_part_weight(cfg, (enum rf_part)p)));
	json_object_set_new(o, "weights", weights);
	if (e->node && e->status != RF_SEARCH_FOUND)
		json_object_set_new(o, "search", json_string(rf_search_status_name(e->status)));
	if (e->has_predicted && e->node) {
		json_object_set_new(o, "predicted", assignment_json(e->node, &e->predicted));
		json_object_set_new(o, "level",
				    e->alignment_applies
					    ? json_string(rf_level_name(e->predicted_level))
					    : json_null());
	}
	if (e->gpu_applies) {
		json_object_set_new(o, "gpuLevel", json_string(rf_level_name(e->gpu_level)));
		json_object_set_new(sources, "gpu",
				    json_string(rf_level_source_name(e->gpu_source)));
	}
	if (e->n_cpus) {
		json_t *mask = json_array();
		for (int i = 0; mask && i < 64; i++)
			if ((e->accel_numa >> i) & 1)
				json_array_append_new(mask, json_integer(i));
		json_object_set_new(o, "cpus",
				    json_pack("{s:i, s:i, s:i, s:o?}", "devices", (int)e->n_cpus,
					      "knownNuma", (int)e->n_cpus_known,
					      "onAcceleratorNuma", (int)e->n_cpus_aligned,
					      "acceleratorNuma", mask));
		json_object_set_new(sources, "cpu", json_string("dra"));
	} else if (e->n_gpus && e->has_predicted) {
		json_object_set_new(sources, "cpu",
				    json_string("kubelet (not visible to railfit)"));
	}
	if (e->place != RF_PLACE_NONE && e->node) {
		json_object_set_new(o, "network",
				    json_pack("{s:s?, s:s?, s:s}", "block", e->node->block, "spine",
					      e->node->spine, "place", rf_place_name(e->place)));
		json_object_set_new(sources, "network", json_string("node labels"));
	}
	if (e->has_best && e->node) {
		json_object_set_new(o, "best", assignment_json(e->node, &e->best));
		json_object_set_new(o, "bestLevel", json_string(rf_level_name(e->best_level)));
	}
	json_object_set_new(o, "deterministic", json_boolean(e->deterministic));
	if (e->n_orders) {
		json_object_set_new(o, "scanOrders", json_integer(e->n_orders));
		json_object_set_new(o, "outcomes", json_integer((json_int_t)e->n_outcomes));
	}
	if (e->n_nics) {
		json_t *nics = json_array();
		for (size_t i = 0; nics && i < e->n_nics; i++) {
			const struct rf_nic_headroom *h = &e->nics[i];
			json_t *nj = json_object();
			if (!nj)
				break;
			json_object_set_new(nj, "device", json_string(h->dev->name));
			json_object_set_new(nj, "capacity", qjson(h->capacity));
			json_object_set_new(nj, "used", qjson(h->used));
			json_object_set_new(nj, "asked", qjson(h->asked));
			json_object_set_new(nj, "freeAfter", qjson(h->free_after));
			json_object_set_new(nj, "capacitySource", json_string(h->capacity_source));
			json_array_append_new(nics, nj);
		}
		json_object_set_new(o, "nics", nics);
	}
	if (e->fe_applies) {
		json_t *fe = json_object();
		if (fe) {
			json_object_set_new(fe, "capacity", qjson(e->fe_capacity));
			json_object_set_new(fe, "egressUsed", qjson(e->fe_egress_used));
			json_object_set_new(fe, "ingressUsed", qjson(e->fe_ingress_used));
			json_object_set_new(fe, "capacitySource", json_string(e->fe_source));
		}
		json_object_set_new(o, "frontend", fe);
	}
	/* where the facts came from */
	const char *loc = "none";
	for (size_t i = 0; e->node && i < e->predicted.n; i++) {
		const struct rf_device *d = e->predicted.picks[i].dev;
		for (size_t j = 0; j < e->predicted.n; j++) {
			enum rf_level_source s;
			const struct rf_device *o2 = e->predicted.picks[j].dev;
			if (d->kind == RF_DEV_GPU && o2->kind == RF_DEV_NIC) {
				rf_node_level(e->node, d, o2, &s);
				if (s == RF_SRC_ANNOTATION || strcmp(loc, "annotation") != 0)
					loc = s == RF_SRC_NONE && strcmp(loc, "none") != 0
						      ? loc
						      : rf_level_source_name(s);
			}
		}
	}
	json_object_set_new(sources, "locality", json_string(loc));
	if (e->n_nics)
		json_object_set_new(sources, "bandwidth", json_string(e->nics[0].capacity_source));
	if (e->fe_applies)
		json_object_set_new(sources, "frontend", json_string(e->fe_source));
	json_object_set_new(sources, "rails", json_string(cfg->devices.rails));
	json_object_set_new(o, "sources", sources);
	if (e->group_rails) {
		json_t *gr = json_array();
		for (int r = 0; gr && r < 64; r++)
			if ((e->group_rails >> r) & 1)
				json_array_append_new(gr, json_integer(r));
		json_object_set_new(o, "groupRails", gr);
	}
	return o;
fail:
	json_decref(o);
	json_decref(reasons);
	json_decref(parts);
	json_decref(sources);
	return NULL;
}

json_t *
rf_explain_json(const struct rf_cluster *c, const struct rf_demand *d,
		const struct rf_node_eval *evals, size_t n)
{
	json_t *o = json_object(), *nodes = json_array();
	if (!o || !nodes) {
		json_decref(o);
		json_decref(nodes);
		return NULL;
	}
	json_object_set_new(o, "pod", json_string(d->pod_key));
	json_object_set_new(o, "demand", json_string(rf_demand_kind_name(d->kind)));
	if (d->kind == RF_DEMAND_UNKNOWN)
		json_object_set_new(o, "unknownReason", json_string(d->unknown_reason));
	json_t *claims = json_array();
	for (size_t i = 0; claims && i < d->n_claims; i++) {
		char key[512];
		snprintf(key, sizeof(key), "%s/%s", d->claims[i]->ns, d->claims[i]->name);
		json_array_append_new(claims, json_string(key));
	}
	json_object_set_new(o, "claims", claims);
	json_t *pinned = json_array();
	for (size_t i = 0; pinned && i < d->n_pinned; i++) {
		char key[512];
		snprintf(key, sizeof(key), "%s/%s", d->pinned[i]->ns, d->pinned[i]->name);
		json_array_append_new(pinned, json_string(key));
	}
	json_object_set_new(o, "allocatedClaims", pinned);
	json_object_set_new(o, "minAlignment", json_string(rf_level_name(d->min_alignment)));
	if (d->has_nic_bw)
		json_object_set_new(o, "nicBandwidth", qjson(d->nic_bw));
	if (d->has_egress)
		json_object_set_new(o, "egressBandwidth", qjson(d->egress));
	if (d->has_ingress)
		json_object_set_new(o, "ingressBandwidth", qjson(d->ingress));
	if (d->bad_annotation[0])
		json_object_set_new(o, "annotationError", json_string(d->bad_annotation));
	if (d->group[0])
		json_object_set_new(o, "group", json_string(d->group));
	if (d->has_min_gpu_alignment)
		json_object_set_new(o, "minGpuAlignment",
				    json_string(rf_level_name(d->min_gpu_alignment)));
	if (d->max_spread != RF_SPREAD_ANY)
		json_object_set_new(
			o, "maxSpread",
			json_string(d->max_spread == RF_SPREAD_BLOCK ? "block" : "spine"));
	if (d->places.n_blocks || d->places.n_spines) {
		json_t *gb = json_array(), *gs = json_array();
		for (size_t i = 0; gb && i < d->places.n_blocks; i++)
			json_array_append_new(gb, json_string(d->places.blocks[i]));
		for (size_t i = 0; gs && i < d->places.n_spines; i++)
			json_array_append_new(gs, json_string(d->places.spines[i]));
		json_object_set_new(o, "groupPlaces",
				    json_pack("{s:I, s:o?, s:o?}", "members",
					      (json_int_t)d->places.members, "blocks", gb, "spines",
					      gs));
	}
	for (size_t i = 0; i < n; i++) {
		json_t *nj = rf_node_eval_json(c, &evals[i]);
		if (!nj || json_array_append_new(nodes, nj) < 0) {
			json_decref(o);
			json_decref(nodes);
			return NULL;
		}
	}
	json_object_set_new(o, "nodes", nodes);
	return o;
}

/* One node's explain entry and what the order needs: nodes are evaluated one at a time into one
 * scratch evaluation (~24 KiB each; thousands of them at once would be hundreds of MB). */
struct ranked {
	enum rf_verdict verdict;
	int score;
	const char *name;
	json_t *json;
};

static int
rank_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->verdict != y->verdict)
		return (int)x->verdict - (int)y->verdict;
	if (x->score != y->score)
		return y->score - x->score;
	return strcmp(x->name, y->name);
}

json_t *
rf_explain_pod(const struct rf_cluster *c, const json_t *pod, const char *only_node)
{
	struct rf_demand d;
	struct rf_node_eval *e = NULL;
	struct rf_eval_work *work = NULL;
	struct ranked *rk = NULL;
	json_t *doc = NULL;
	size_t n = only_node ? 1 : rf_cluster_n_nodes(c), done = 0;

	if (rf_demand_resolve(c, pod, &d) < 0)
		return NULL;
	e = malloc(sizeof(*e));
	work = malloc(sizeof(*work));
	rk = calloc(n ? n : 1, sizeof(*rk));
	if (!e || !work || !rk)
		goto out;
	for (; done < n; done++) {
		const char *name = only_node ? only_node : rf_cluster_node_at(c, done)->name;
		if (rf_evaluate_node_work(c, &d, name, true, work, e) < 0)
			goto out;
		rk[done] = (struct ranked){ e->verdict, e->score, name, rf_node_eval_json(c, e) };
		if (!rk[done].json)
			goto out;
	}
	qsort(rk, n, sizeof(*rk), rank_cmp);
	doc = rf_explain_json(c, &d, NULL, 0);
	json_t *nodes = json_object_get(doc, "nodes");
	for (size_t i = 0; doc && i < n; i++) {
		if (json_array_append_new(nodes, rk[i].json) < 0) {
			json_decref(doc);
			doc = NULL;
		}
		rk[i].json = NULL;
	}
out:
	for (size_t i = 0; rk && i < done; i++)
		json_decref(rk[i].json);
	free(rk);
	free(work);
	free(e);
	rf_demand_release(&d);
	return doc;
}
