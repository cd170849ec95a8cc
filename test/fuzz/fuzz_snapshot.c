/* Fuzz target: untrusted cluster objects (a snapshot, or what a watch delivers) through the whole
 * model: build a generation, then explain a pod that asks for a GPU+NIC pair on every node. Must
 * never crash, hang or leak, whatever the objects say. */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
split(json_t *doc, struct rf_cluster_objects *o)
{
	static const char *const kinds[] = {
		"Node",          "Pod",         "ResourceSlice",
		"ResourceClaim", "DeviceClass", "ResourceClaimTemplate"
	};
	json_t **slots[] = {
		&o->nodes, &o->pods, &o->slices, &o->claims, &o->classes, &o->templates
	};
	for (size_t i = 0; i < 6; i++)
		*slots[i] = json_array();
	json_t *items = json_object_get(doc, "items");
	size_t i;
	json_t *it;
	json_array_foreach (items, i, it) {
		const char *k = json_string_value(json_object_get(it, "kind"));
		for (size_t s = 0; k && s < 6; s++)
			if (strcmp(k, kinds[s]) == 0)
				json_array_append(*slots[s], it);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return 0;
	struct rf_config cfg;
	struct rf_cluster_objects objs = { 0 };
	struct rf_cluster *c = NULL;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	rf_config_init(&cfg);
	split(doc, &objs);
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
	json_decref(objs.nodes);
	json_decref(objs.pods);
	json_decref(objs.slices);
	json_decref(objs.claims);
	json_decref(objs.classes);
	json_decref(objs.templates);
	rf_config_release(&cfg);
	json_decref(doc);
	return 0;
}
