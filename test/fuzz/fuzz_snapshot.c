/* Fuzz target: untrusted cluster objects (a snapshot, or what a watch delivers) through the real
 * snapshot reader (its streaming splitter, and the one-tree path it falls back to), in both forms
 * (slim objects, and what `railfit serve` keeps: slices parsed and packed, claims packed, which
 * must hold the same objects), and the whole model: build a generation from the kept form, then
 * explain every pod of the input on the first nodes. Must never crash, hang or leak, whatever the
 * bytes say. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/model/model.h"
#include "server/snapshot/snapshot.h"
#include "server/snapshot/snapshot_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rf_config cfg;
	struct rf_cluster_objects objs = { 0 }, kept = { 0 };
	struct rf_cluster *c = NULL;
	char err[512], kerr[512];
	rf_config_init(&cfg);
	int r = rf_snapshot_load_buffer("fuzz", (const char *)data, size, NULL, &objs, NULL, err,
					sizeof(err));
	int rk = rf_snapshot_load_buffer_kept("fuzz", (const char *)data, size, NULL, &cfg, &kept,
					      NULL, kerr, sizeof(kerr));
	/* both forms take the same inputs, with the same messages, and hold the same objects */
	if (r != rk || (r == -EINVAL && strcmp(err, kerr) != 0))
		abort();
	if (r < 0) {
		rf_config_release(&cfg);
		return 0;
	}
	if (kept.n_slice_recs != json_array_size(objs.slices))
		abort();
	for (size_t s = 0; s < RF_SNAPSHOT_N_KINDS; s++) {
		json_t *a = *rf_snapshot_slot(&objs, s), *b = *rf_snapshot_slot(&kept, s);
		if (json_array_size(a) != json_array_size(b))
			abort();
		for (size_t i = 0; i < json_array_size(a); i++) {
			json_t *o = rf_snapshot_expand(json_array_get(b, i), NULL);
			/* NULL only on OOM */
			if (o && !json_equal(o, json_array_get(a, i)))
				abort();
			json_decref(o);
		}
	}
	struct rf_cel_cache *cel = rf_cel_cache_new();
	if (cel && rf_cluster_build(&kept, &cfg, cel, &c) == 0) {
		/* every Pod of the input is explained on every node */
		for (size_t p = 0; p < json_array_size(objs.pods); p++) {
			struct rf_demand d;
			if (rf_demand_resolve(c, json_array_get(objs.pods, p), &d) < 0)
				continue;
			static struct rf_node_eval e;
			for (size_t n = 0; n < rf_cluster_n_nodes(c) && n < 8; n++) {
				if (rf_evaluate_node(c, &d, rf_cluster_node_at(c, n)->name, true,
						     &e) == 0) {
					json_t *j = rf_node_eval_json(c, &e);
					json_decref(j);
				}
			}
			rf_demand_release(&d);
		}
	}
	rf_cluster_unref(c);
	rf_cel_cache_free(cel);
	rf_cluster_objects_release(&objs);
	rf_cluster_objects_release(&kept);
	rf_config_release(&cfg);
	return 0;
}
