/* Prediction bookkeeping against the claims watch: railfit_prediction_total,
 * railfit_placement_alignment_total{level} and what /debug/placements lists (server/predictions.h),
 * on a one-node generated cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/gen/gen_cluster.h"
#include "alloc/memo.h"
#include "server/http/metrics.h"
#include "server/kube/cache.h"
#include "server/predictions.h"
#include "server/snapshot/snapshot.h"

Suite *predictions_suite(void);

struct fx {
	struct rf_config cfg;
	struct rf_cel_cache *cel;
	struct rf_cluster_objects objs;
	struct rf_cache *cache;
	struct rf_cluster *gen;
};

static void
fx_start(struct fx *f)
{
	struct rf_gen_options go = { .nodes = 1, .seed = 1, .used = 0 };
	char err[256];
	memset(f, 0, sizeof(*f));
	rf_config_init(&f->cfg);
	f->cel = rf_cel_cache_new();
	json_t *doc = rf_gen_cluster(&go);
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(rf_snapshot_split(doc, &f->objs, NULL, err, sizeof(err)), 0);
	json_decref(doc);
	ck_assert_int_eq(rf_cluster_build(&f->objs, &f->cfg, f->cel, &f->gen), 0);
	f->cache = rf_cache_new();
	rf_cache_publish(f->cache, rf_cluster_ref(f->gen));
	rf_metrics_reset();
	rf_metrics_declare_railfit("test", "test");
	rf_predictions_reset();
}

static void
fx_stop(struct fx *f)
{
	rf_predictions_reset();
	rf_cache_free(f->cache);
	rf_cluster_unref(f->gen);
	rf_cluster_objects_release(&f->objs);
	rf_cel_cache_free(f->cel);
	rf_config_release(&f->cfg);
}

static struct rf_memo_pick
pick(const struct rf_cluster *gen, const char *name)
{
	const struct rf_node *n = rf_cluster_node(gen, "hgx-001");
	ck_assert_ptr_nonnull(n);
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (strcmp(d->name, name) == 0)
			return (struct rf_memo_pick){
				.claim = 0,
				.dev = d,
				.fp = rf_fingerprint(d->pool->driver, d->pool->name, d->name),
			};
	}
	ck_abort_msg("no device %s", name);
	return (struct rf_memo_pick){ 0 };
}

/* A claim as the DRA plugin leaves it: allocated on hgx-001 to a GPU and a NIC. */
static json_t *
allocated(const char *name, const char *gpu, const char *nic)
{
	json_t *c = json_pack(
		"{s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]}, s:{s:[{s:[{s:s, "
		"s:s, s:[s]}]}]}}, s:[{s:s}]}}",
		"metadata", "namespace", "ml", "name", name, "status", "allocation", "devices",
		"results", "request", "gpu", "driver", "gpu.nvidia.com", "pool", "hgx-001",
		"device", gpu, "request", "nic", "driver", "dra.net", "pool", "hgx-001", "device",
		nic, "nodeSelector", "nodeSelectorTerms", "matchFields", "key", "metadata.name",
		"operator", "In", "values", "hgx-001", "reservedFor", "uid", "no-such-pod");
	ck_assert_ptr_nonnull(c);
	return c;
}

static double
metric(const char *line_prefix)
{
	size_t len;
	char *text = rf_metrics_render(&len);
	ck_assert_ptr_nonnull(text);
	const char *at = strstr(text, line_prefix);
	double v = at ? strtod(at + strlen(line_prefix), NULL) : -1;
	free(text);
	return v;
}

START_TEST(test_predicted_against_actual)
{
	struct fx f;
	fx_start(&f);
	/* filter predicted the aligned pair gpu-0 + the NIC on its root (PHB) on hgx-001 */
	struct rf_memo_pick picks[2] = { pick(f.gen, "gpu-0"), pick(f.gen, "pci-0000-18-00-0") };
	struct rf_pred_batch *b = rf_predictions_begin("ml/c1");
	rf_predictions_add(b, rf_fingerprint("hgx-001", NULL, NULL), 0, picks, 2, RF_LEVEL_PHB,
			   true);
	rf_predictions_commit(b);
	b = rf_predictions_begin("ml/c2");
	rf_predictions_add(b, rf_fingerprint("hgx-001", NULL, NULL), 0, picks, 2, RF_LEVEL_PHB,
			   true);
	rf_predictions_commit(b);

	/* c1 got exactly that; c2 got gpu-0 with the NIC on another root of the same NUMA node */
	json_t *c1 = allocated("c1", "gpu-0", "pci-0000-18-00-0");
	json_t *c2 = allocated("c2", "gpu-0", "pci-0000-40-00-0");
	json_t *c3 = allocated("c3", "gpu-1", "pci-0000-40-00-0"); /* never predicted */
	rf_predictions_observe(c1, f.cache);
	rf_predictions_observe(c2, f.cache);
	rf_predictions_observe(c3, f.cache);
	rf_predictions_observe(c1, f.cache); /* counted once */

	ck_assert(metric("railfit_prediction_total{outcome=\"exact\"} ") == 1);
	ck_assert(metric("railfit_prediction_total{outcome=\"differs\"} ") == 1);
	ck_assert(metric("railfit_placement_alignment_total{level=\"PHB\"} ") == 1);
	ck_assert(metric("railfit_placement_alignment_total{level=\"NODE\"} ") == 1);
	ck_assert(metric("railfit_placement_alignment_total{level=\"SYS\"} ") == 0);

	json_t *list = rf_predictions_placements();
	ck_assert_uint_eq(json_array_size(list), 2);
	const json_t *e = json_array_get(list, 0); /* newest first */
	ck_assert_str_eq(json_string_value(json_object_get(e, "claim")), "ml/c2");
	ck_assert_str_eq(json_string_value(json_object_get(e, "node")), "hgx-001");
	ck_assert_str_eq(json_string_value(json_object_get(e, "outcome")), "differs");
	ck_assert(json_is_null(json_object_get(e, "pod"))); /* reservedFor names no cached pod */
	const json_t *pred = json_object_get(e, "predicted"), *act = json_object_get(e, "actual");
	ck_assert_str_eq(json_string_value(json_object_get(pred, "level")), "PHB");
	ck_assert_str_eq(json_string_value(json_object_get(act, "level")), "NODE");
	json_t *want_pred = json_pack("[s, s]", "gpu.nvidia.com/hgx-001/gpu-0",
				      "dra.net/hgx-001/pci-0000-18-00-0");
	json_t *want_act = json_pack("[s, s]", "gpu.nvidia.com/hgx-001/gpu-0",
				     "dra.net/hgx-001/pci-0000-40-00-0");
	ck_assert(json_equal(json_object_get(pred, "devices"), want_pred));
	ck_assert(json_equal(json_object_get(act, "devices"), want_act));
	e = json_array_get(list, 1);
	ck_assert_str_eq(json_string_value(json_object_get(e, "outcome")), "exact");
	ck_assert(json_equal(json_object_get(json_object_get(e, "actual"), "devices"), want_pred));

	json_decref(want_pred);
	json_decref(want_act);
	json_decref(list);
	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	fx_stop(&f);
}
END_TEST

START_TEST(test_placements_ring_is_bounded)
{
	struct fx f;
	fx_start(&f);
	struct rf_memo_pick picks[2] = { pick(f.gen, "gpu-1"), pick(f.gen, "pci-0000-40-00-0") };
	for (int i = 0; i < 300; i++) {
		char key[48], name[32];
		snprintf(name, sizeof(name), "r%d", i);
		snprintf(key, sizeof(key), "ml/%s", name);
		struct rf_pred_batch *b = rf_predictions_begin(key);
		rf_predictions_add(b, rf_fingerprint("hgx-001", NULL, NULL), 0, picks, 2,
				   RF_LEVEL_PHB, true);
		rf_predictions_commit(b);
		json_t *c = allocated(name, "gpu-1", "pci-0000-40-00-0");
		rf_predictions_observe(c, f.cache);
		json_decref(c);
	}
	json_t *list = rf_predictions_placements();
	ck_assert_uint_eq(json_array_size(list), 128);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "claim")),
			 "ml/r299");
	ck_assert(metric("railfit_placement_alignment_total{level=\"PHB\"} ") == 300);
	json_decref(list);
	fx_stop(&f);
}
END_TEST

Suite *
predictions_suite(void)
{
	Suite *s = suite_create("predictions");
	TCase *tc = tcase_create("predictions");
	tcase_add_test(tc, test_predicted_against_actual);
	tcase_add_test(tc, test_placements_ring_is_bounded);
	suite_add_tcase(s, tc);
	return s;
}
