/* Prediction bookkeeping (see predictions.h). One mutex guards the table; it is held only to
 * swap or take an entry, never while formatting or computing levels. */
#include "server/predictions.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/grow.h"
#include "server/http/metrics.h"

#define MAX_CLAIMS 64

/* Predictions are kept as fingerprints: filter records one for every passing node of every
 * request, so it must cost a few additions, not strings. A device is its "driver/pool/device"
 * word; a set of devices is the sum of its words' mixed hashes (order-independent, counts
 * repeats); two sets with equal fingerprints are taken to be equal (false match: ~2^-64). */
struct node_pred {
	uint64_t node;     /* fingerprint of the node name */
	uint64_t devices;  /* fingerprint of the predicted devices */
	int level;         /* enum rf_level, or -1 when alignment does not apply */
	uint32_t first, n; /* its devices' own fingerprints: fps[first .. first + n) */
};

struct rf_pred_batch {
	char *key;
	struct node_pred *nodes;
	size_t n, cap;
	uint64_t *fps; /* each predicted device, to name it in /debug/placements */
	size_t n_fps, cap_fps;
	unsigned long stamp;
};

/* The latest placements railfit predicted, for /debug/placements (newest at ring_next - 1). */
#define RING 128
static json_t *ring[RING];
static size_t ring_next;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rf_pred_batch *table[MAX_CLAIMS];
static unsigned long clock_;

static void
batch_free(struct rf_pred_batch *b)
{
	if (!b)
		return;
	free(b->nodes);
	free(b->fps);
	free(b->key);
	free(b);
}

struct rf_pred_batch *
rf_predictions_begin(const char *claim_key)
{
	struct rf_pred_batch *b = calloc(1, sizeof(*b));
	if (!b || !(b->key = strdup(claim_key))) {
		free(b);
		return NULL;
	}
	return b;
}

void
rf_predictions_add(struct rf_pred_batch *b, uint64_t node_fp, unsigned claim,
		   const struct rf_memo_pick *picks, size_t n_picks, enum rf_level level,
		   bool level_applies)
{
	uint64_t devices = 0;
	size_t n = 0, first;
	if (!b)
		return;
	first = b->n_fps;
	for (size_t i = 0; i < n_picks; i++) {
		if (picks[i].claim != claim || picks[i].pinned)
			continue;
		devices += picks[i].fp;
		n++;
		/* once per node of every filter: grown only when full */
		if (b->n_fps < b->cap_fps ||
		    rf_grow(&b->fps, &b->cap_fps, b->n_fps + 1, sizeof(*b->fps)) == 0)
			b->fps[b->n_fps++] = picks[i].fp;
	}
	if (!n)
		return;
	if (b->n >= b->cap && rf_grow(&b->nodes, &b->cap, b->n + 1, sizeof(*b->nodes)) < 0)
		return;
	b->nodes[b->n++] = (struct node_pred){ .node = node_fp,
					       .devices = devices,
					       .level = level_applies ? (int)level : -1,
					       .first = (uint32_t)first,
					       .n = (uint32_t)(b->n_fps - first) };
}

void
rf_predictions_commit(struct rf_pred_batch *b)
{
	struct rf_pred_batch *drop = NULL;
	if (!b)
		return;
	pthread_mutex_lock(&lock);
	b->stamp = ++clock_;
	size_t slot = 0;
	for (size_t i = 0; i < MAX_CLAIMS; i++) {
		if (table[i] && strcmp(table[i]->key, b->key) == 0) {
			slot = i;
			break;
		}
		if (!table[i] || (table[slot] && table[i]->stamp < table[slot]->stamp))
			slot = i; /* an empty slot, else the oldest */
	}
	drop = table[slot];
	table[slot] = b;
	pthread_mutex_unlock(&lock);
	batch_free(drop);
}

static struct rf_pred_batch *
take(const char *key)
{
	struct rf_pred_batch *b = NULL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_CLAIMS; i++)
		if (table[i] && strcmp(table[i]->key, key) == 0) {
			b = table[i];
			table[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&lock);
	return b;
}

/* The node of an allocation (nodeSelector matchFields metadata.name In [node]). */
static const char *
alloc_node(const json_t *alloc)
{
	const json_t *terms =
		json_object_get(json_object_get(alloc, "nodeSelector"), "nodeSelectorTerms");
	const json_t *fields = json_object_get(json_array_get(terms, 0), "matchFields");
	for (size_t i = 0; i < json_array_size(fields); i++) {
		const json_t *f = json_array_get(fields, i);
		const char *k = json_string_value(json_object_get(f, "key"));
		if (k && strcmp(k, "metadata.name") == 0)
			return json_string_value(json_array_get(json_object_get(f, "values"), 0));
	}
	return NULL;
}

static const struct rf_device *
node_device(const struct rf_node *n, const char *driver, const char *pool, const char *name)
{
	for (size_t i = 0; n && i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (!strcmp(d->name, name) && !strcmp(d->pool->name, pool) &&
		    !strcmp(d->pool->driver, driver))
			return d;
	}
	return NULL;
}

/* railfit_placement_gpu_level_total: the worst level between the GPUs a claim received, when it
 * received two or more (whether or not railfit was asked about it). */
static void
count_gpu_level(const json_t *alloc, const char *node, struct rf_cache *cache)
{
	const json_t *results = json_object_get(json_object_get(alloc, "devices"), "results");
	struct rf_cluster *gen = rf_cache_get(cache);
	const struct rf_node *nd = gen ? rf_cluster_node(gen, node) : NULL;
	struct rf_assignment *a = nd ? calloc(1, sizeof(*a)) : NULL;
	size_t gpus = 0;
	for (size_t i = 0; a && i < json_array_size(results) && a->n < RF_MAX_PICKS; i++) {
		const json_t *r = json_array_get(results, i);
		const char *drv = json_string_value(json_object_get(r, "driver"));
		const char *pool = json_string_value(json_object_get(r, "pool"));
		const char *dev = json_string_value(json_object_get(r, "device"));
		const struct rf_device *d =
			drv && pool && dev ? node_device(nd, drv, pool, dev) : NULL;
		if (!d || d->kind != RF_DEV_GPU || d->partition ||
		    json_is_true(json_object_get(r, "adminAccess")))
			continue;
		a->picks[a->n++].dev = d;
		gpus++;
	}
	if (gpus >= 2) {
		enum rf_level lvl = RF_LEVEL_UNKNOWN;
		char labels[40];
		if (!rf_assignment_gpu_alignment(nd, rf_cluster_config(gen), a, &lvl, NULL, NULL))
			lvl = RF_LEVEL_UNKNOWN;
		if (rf_metric_labels(labels, sizeof(labels), RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL,
				     rf_level_name(lvl), NULL) >= 0)
			rf_metric_add(RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL, labels, 1);
	}
	free(a);
	rf_cluster_unref(gen);
}

/* The predicted devices' names: the node's devices whose fingerprints were predicted. */
static json_t *
predicted_names(const struct rf_node *nd, const struct rf_pred_batch *b, const struct node_pred *p)
{
	json_t *out = json_array();
	for (uint32_t k = 0; out && k < p->n; k++) {
		uint64_t fp = b->fps[p->first + k];
		const struct rf_device *hit = NULL;
		for (size_t i = 0; nd && i < nd->n_devices && !hit; i++) {
			const struct rf_device *d = nd->devices[i];
			if (rf_fingerprint(d->pool->driver, d->pool->name, d->name) == fp)
				hit = d;
		}
		json_array_append_new(out, hit ? json_pack("s++++", hit->pool->driver, "/",
							   hit->pool->name, "/", hit->name)
					       : json_string("(no longer published)"));
	}
	return out;
}

static json_t *
level_json(int level)
{
	return level < 0 ? json_null() : json_string(rf_level_name((enum rf_level)level));
}

/* One placement for /debug/placements: predicted against actual. */
static void
remember(const json_t *claim, const char *key, const char *node, const struct rf_cluster *gen,
	 const struct rf_node *nd, const struct rf_pred_batch *b, const struct node_pred *p,
	 json_t *got, int level, const char *outcome)
{
	const json_t *rf = json_object_get(json_object_get(claim, "status"), "reservedFor");
	const char *uid = json_string_value(json_object_get(json_array_get(rf, 0), "uid"));
	const struct rf_pod *pod = uid && gen ? rf_cluster_pod_by_uid(gen, uid) : NULL;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *e = json_pack("{s:s, s:s?, s:s, s:s, s:{s:o, s:o}, s:{s:O, s:o}, s:s}", "claim",
			      key, "pod", NULL, "node", node, "time", when, "predicted", "devices",
			      predicted_names(nd, b, p), "level", level_json(p->level), "actual",
			      "devices", got, "level", level_json(level), "outcome", outcome);
	if (!e)
		return;
	if (pod) {
		char pk[600];
		snprintf(pk, sizeof(pk), "%s/%s", pod->ns ? pod->ns : "", pod->name);
		json_object_set_new(e, "pod", json_string(pk));
	}
	pthread_mutex_lock(&lock);
	json_t *old = ring[ring_next];
	ring[ring_next] = e;
	ring_next = (ring_next + 1) % RING;
	pthread_mutex_unlock(&lock);
	json_decref(old);
}

json_t *
rf_predictions_placements(void)
{
	json_t *out = json_array();
	pthread_mutex_lock(&lock);
	for (size_t k = 1; out && k <= RING; k++) {
		json_t *e = ring[(ring_next + RING - k) % RING];
		if (e && json_array_append(out, e) < 0) {
			json_decref(out);
			out = NULL;
		}
	}
	pthread_mutex_unlock(&lock);
	return out;
}

void
rf_predictions_observe(const json_t *claim, struct rf_cache *cache)
{
	const json_t *md = json_object_get(claim, "metadata");
	const json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *node = alloc_node(alloc);
	char key[512];
	if (!json_is_object(alloc) || !ns || !name || !node)
		return;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	count_gpu_level(alloc, node, cache);
	struct rf_pred_batch *b = take(key);
	if (!b)
		return; /* railfit was not asked about this claim (or forgot it) */
	const struct node_pred *p = NULL;
	uint64_t node_fp = rf_fingerprint(node, NULL, NULL);
	for (size_t i = 0; i < b->n && !p; i++)
		if (b->nodes[i].node == node_fp)
			p = &b->nodes[i];
	if (!p) {
		batch_free(b);
		return; /* placed on a node railfit did not judge */
	}
	const json_t *results = json_object_get(json_object_get(alloc, "devices"), "results");
	uint64_t actual = 0;
	size_t n = 0;
	struct rf_cluster *gen = rf_cache_get(cache);
	const struct rf_node *nd = gen ? rf_cluster_node(gen, node) : NULL;
	struct rf_assignment *a = calloc(1, sizeof(*a));
	json_t *got = json_array();
	for (size_t i = 0; a && i < json_array_size(results) && n < RF_MAX_PICKS; i++) {
		const json_t *r = json_array_get(results, i);
		const char *drv = json_string_value(json_object_get(r, "driver"));
		const char *pool = json_string_value(json_object_get(r, "pool"));
		const char *dev = json_string_value(json_object_get(r, "device"));
		if (!drv || !pool || !dev || json_is_true(json_object_get(r, "adminAccess")))
			continue;
		actual += rf_fingerprint(drv, pool, dev);
		n++;
		json_array_append_new(got, json_pack("s++++", drv, "/", pool, "/", dev));
		const struct rf_device *d = node_device(nd, drv, pool, dev);
		if (d && a->n < RF_MAX_PICKS)
			a->picks[a->n++].dev = d;
	}
	/* the level of the devices the claim really got (each GPU to its nearest NIC) */
	enum rf_level lvl = RF_LEVEL_UNKNOWN;
	bool applies = a && nd && gen &&
		       rf_assignment_alignment(nd, rf_cluster_config(gen), a, &lvl, NULL);
	const char *outcome = "differs";
	if (n && actual == p->devices)
		outcome = "exact";
	else if (a && nd && gen && (applies ? (int)lvl : -1) == p->level)
		outcome = "same_level";
	char labels[40];
	snprintf(labels, sizeof(labels), "outcome=\"%s\"", outcome);
	rf_metric_add(RF_METRIC_PREDICTION_TOTAL, labels, 1);
	if (applies) {
		snprintf(labels, sizeof(labels), "level=\"%s\"", rf_level_name(lvl));
		rf_metric_add(RF_METRIC_PLACEMENT_ALIGNMENT_TOTAL, labels, 1);
	}
	remember(claim, key, node, gen, nd, b, p, got, applies ? (int)lvl : -1, outcome);
	json_decref(got);
	free(a);
	rf_cluster_unref(gen);
	batch_free(b);
}

void
rf_predictions_reset(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_CLAIMS; i++) {
		batch_free(table[i]);
		table[i] = NULL;
	}
	for (size_t i = 0; i < RING; i++) {
		json_decref(ring[i]);
		ring[i] = NULL;
	}
	ring_next = 0;
	pthread_mutex_unlock(&lock);
}
