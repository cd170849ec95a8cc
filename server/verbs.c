/* The extender verbs (reference/extender-protocol.md section 3): decode with the wire codec, take
 * one cache generation for the whole request, resolve the pod's demand once, evaluate every node,
 * answer in kube-scheduler's exact shape. Runs on MHD pool threads; never blocks on I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "server/app.h"
#include "server/extender.h"
#include "server/log.h"
#include "server/metrics.h"

/* A 400 that carries both railfit's error body and the verb's own Error field. */
static int
reply_bad_args(struct rf_http_response *resp, const char *what, const char *detail, bool filter)
{
	json_t *o = json_object();
	if (!o)
		return -ENOMEM;
	if (filter) {
		json_object_set_new(o, "Nodes", json_null());
		json_object_set_new(o, "NodeNames", json_null());
		json_object_set_new(o, "FailedNodes", json_null());
		json_object_set_new(o, "FailedAndUnresolvableNodes", json_null());
		json_object_set_new(o, "Error", json_string(detail));
	}
	json_object_set_new(o, "error", json_string(what));
	json_object_set_new(o, "detail", json_string(detail));
	return rf_http_reply_json(resp, 400, o);
}

struct verb_ctx {
	struct rf_app *app;
	struct rf_extender_args args;
	struct rf_cluster *gen;
	struct rf_demand demand;
	bool have_demand;
};

static void
verb_ctx_release(struct verb_ctx *v)
{
	if (v->have_demand)
		rf_demand_release(&v->demand);
	rf_cluster_unref(v->gen);
	rf_extender_args_release(&v->args);
}

/* Decode, take a generation, resolve the demand. Returns 1 when a reply was already queued. */
static int
verb_prepare(struct verb_ctx *v, const struct rf_http_request *req, struct rf_http_response *resp,
	     bool filter)
{
	char err[512];
	int r = rf_extender_args_parse(req->body, req->body_len, &v->args, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		rf_v(2, "rejected ExtenderArgs", "detail", err);
		return reply_bad_args(resp, "invalid ExtenderArgs", err, filter) < 0 ? -ENOMEM : 1;
	}
	v->gen = rf_cache_get(v->app->cache);
	if (!v->gen) {
		if (filter) {
			json_t *res = rf_extender_filter_result(
				&v->args, NULL, NULL, "railfit: cluster cache not loaded yet");
			return rf_http_reply_json(resp, 200, res) < 0 ? -ENOMEM : 1;
		}
		return rf_http_reply_error(resp, 503, "not ready", "cluster cache not loaded yet") <
				       0
			       ? -ENOMEM
			       : 1;
	}
	if ((r = rf_demand_resolve(v->gen, v->args.pod, &v->demand)) < 0)
		return r;
	v->have_demand = true;
	char labels[32];
	snprintf(labels, sizeof(labels), "demand=\"%s\"", rf_demand_kind_name(v->demand.kind));
	rf_metrics_add("railfit_pods_total", labels, 1);
	if (v->demand.kind == RF_DEMAND_UNKNOWN)
		rf_v(1, "pod demand unknown", "pod", v->demand.pod_key, "reason",
		     v->demand.unknown_reason);
	return 0;
}

int
rf_verb_filter(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct verb_ctx v = { .app = userdata };
	enum rf_filter_outcome *outcomes = NULL;
	char **msgs = NULL;
	struct rf_node_eval *e = NULL;
	int r = verb_prepare(&v, req, resp, true);
	if (r != 0)
		goto out;

	size_t n = v.args.n_nodes;
	outcomes = calloc(n + 1, sizeof(*outcomes));
	msgs = calloc(n + 1, sizeof(*msgs));
	e = malloc(sizeof(*e));
	if (!outcomes || !msgs || !e) {
		r = -ENOMEM;
		goto out;
	}
	size_t counts[3] = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (v.demand.kind != RF_DEMAND_KNOWN) {
			outcomes[i] = RF_FILTER_PASS; /* the fast path: no device cache touched */
			counts[0]++;
			continue;
		}
		if ((r = rf_evaluate_node(v.gen, &v.demand, v.args.node_names[i], false, e)) < 0)
			goto out;
		outcomes[i] = e->verdict == RF_VERDICT_PASS ? RF_FILTER_PASS
			      : e->verdict == RF_VERDICT_FAIL ? RF_FILTER_FAIL
							      : RF_FILTER_UNRESOLVABLE;
		counts[e->verdict]++;
		if (e->verdict != RF_VERDICT_PASS) {
			size_t len = strlen(e->reasons[0]) + 16;
			msgs[i] = malloc(len);
			if (!msgs[i]) {
				r = -ENOMEM;
				goto out;
			}
			snprintf(msgs[i], len, "railfit: %s", e->reasons[0]);
			/* kube-scheduler formats Error with fmt.Errorf; keep '%' out of messages */
			for (char *p = msgs[i]; *p; p++)
				if (*p == '%')
					*p = ' ';
		}
	}
	static const char *const result_labels[] = { "result=\"pass\"", "result=\"fail\"",
						     "result=\"unresolvable\"" };
	for (int k = 0; k < 3; k++)
		if (counts[k])
			rf_metrics_add("railfit_filter_nodes_total", result_labels[k],
				       (double)counts[k]);
	rf_v(2, "pod filtered", "pod", v.demand.pod_key, "demand",
	     rf_demand_kind_name(v.demand.kind));
	json_t *res = rf_extender_filter_result(&v.args, outcomes, (const char *const *)msgs, NULL);
	r = rf_http_reply_json(resp, 200, res);
out:
	for (size_t i = 0; msgs && i < v.args.n_nodes; i++)
		free(msgs[i]);
	free(msgs);
	free(outcomes);
	free(e);
	verb_ctx_release(&v);
	return r < 0 ? r : 0;
}

int
rf_verb_prioritize(void *userdata, const struct rf_http_request *req,
		   struct rf_http_response *resp)
{
	struct verb_ctx v = { .app = userdata };
	int *scores = NULL;
	struct rf_node_eval *e = NULL;
	int r = verb_prepare(&v, req, resp, false);
	if (r != 0)
		goto out;
	size_t n = v.args.n_nodes;
	scores = calloc(n + 1, sizeof(*scores));
	e = malloc(sizeof(*e));
	if (!scores || !e) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && v.demand.kind == RF_DEMAND_KNOWN; i++) {
		if ((r = rf_evaluate_node(v.gen, &v.demand, v.args.node_names[i], false, e)) < 0)
			goto out;
		/* a node that would fail filter gets the lowest score */
		scores[i] = e->verdict == RF_VERDICT_PASS ? e->score : 0;
	}
	r = rf_http_reply_json(resp, 200, rf_extender_priority_list(&v.args, scores));
out:
	free(scores);
	free(e);
	verb_ctx_release(&v);
	return r < 0 ? r : 0;
}
