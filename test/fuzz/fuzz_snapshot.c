/* Fuzz target: untrusted cluster objects (a snapshot, or what a watch delivers) through the real
 * snapshot reader (its streaming splitter, and the one-tree path it falls back to) and the whole
 * model: build a generation, then explain every pod of the input on the first nodes. Must never
 * crash, hang or leak, whatever the bytes say. */
#include <stdint.h>

#include <jansson.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/model/model.h"
#include "server/snapshot/snapshot_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rf_config cfg;
	struct rf_cluster_objects objs = { 0 };
	struct rf_cluster *c = NULL;
	char err[512];
	if (rf_snapshot_load_buffer("fuzz", (const char *)data, size, NULL, &objs, NULL, err,
				    sizeof(err)) < 0)
		return 0;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	rf_config_init(&cfg);
	if (cel && rf_cluster_build(&objs, &cfg, cel, &c) == 0) {
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
	rf_config_release(&cfg);
	return 0;
}
