/* Explain: the document behind /debug/explain and `railfit explain`, and its table for people. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "config/strbuf.h"
#include "server/app.h"

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

static const char *
part(const json_t *parts, const char *name, char *buf, size_t len)
{
	const json_t *v = json_object_get(parts, name);
	if (!json_is_number(v))
		return "-";
	snprintf(buf, len, "%.2f", json_number_value(v));
	return buf;
}

static void
devices_cell(const json_t *arr, char *buf, size_t len)
{
	size_t off = 0, i;
	json_t *p;
	buf[0] = 0;
	json_array_foreach (arr, i, p) {
		const char *k = json_string_value(json_object_get(p, "kind"));
		if (k && strcmp(k, "other") == 0)
			continue;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "+" : "",
						json_string_value(json_object_get(p, "device")));
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

char *
rf_explain_table(const json_t *doc)
{
	struct rf_strbuf b = { 0 };
	const json_t *nodes = json_object_get(doc, "nodes");
	size_t i;
	json_t *n;

	rf_strbuf_printf(&b, "pod %s: demand %s", json_string_value(json_object_get(doc, "pod")),
			 json_string_value(json_object_get(doc, "demand")));
	const char *ur = json_string_value(json_object_get(doc, "unknownReason"));
	if (ur)
		rf_strbuf_printf(&b, " (%s)", ur);
	const char *ma = json_string_value(json_object_get(doc, "minAlignment"));
	if (ma)
		rf_strbuf_printf(&b, ", min-alignment %s", ma);
	json_t *claims = json_object_get(doc, "claims");
	if (json_array_size(claims)) {
		rf_strbuf_printf(&b, ", claims");
		json_array_foreach (claims, i, n)
			rf_strbuf_printf(&b, " %s", json_string_value(n));
	}
	rf_strbuf_printf(&b, "\n\n%-16s %-13s %5s %6s %6s %6s %6s %-7s %-7s %-34s %s\n", "NODE",
			 "VERDICT", "SCORE", "ALIGN", "BW", "RAIL", "PACK", "LEVEL", "BEST",
			 "PREDICTED", "REASON");
	json_array_foreach (nodes, i, n) {
		char a[16], bw[16], rl[16], pk[16], dev[256];
		const json_t *parts = json_object_get(n, "parts");
		const char *lvl = json_string_value(json_object_get(n, "level"));
		const char *best = json_string_value(json_object_get(n, "bestLevel"));
		const json_t *reasons = json_object_get(n, "reasons");
		devices_cell(json_object_get(n, "predicted"), dev, sizeof(dev));
		rf_strbuf_printf(
			&b, "%-16s %-13s %5lld %6s %6s %6s %6s %-7s %-7s %-34s %s\n",
			json_string_value(json_object_get(n, "node")),
			json_string_value(json_object_get(n, "verdict")),
			(long long)json_integer_value(json_object_get(n, "score")),
			part(parts, "alignment", a, sizeof(a)),
			part(parts, "bandwidth", bw, sizeof(bw)),
			part(parts, "rail", rl, sizeof(rl)), part(parts, "packing", pk, sizeof(pk)),
			lvl ? lvl : "-", best ? best : "-", dev,
			json_array_size(reasons) ? json_string_value(json_array_get(reasons, 0))
						 : "");
		for (size_t k = 1; k < json_array_size(reasons); k++)
			rf_strbuf_printf(&b, "%-16s %s\n", "",
					 json_string_value(json_array_get(reasons, k)));
	}
	return rf_strbuf_steal(&b);
}
