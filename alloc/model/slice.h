/* One ResourceSlice as the model uses it: parsed once, when it arrives, into devices with
 * normalised attributes, capacities, taints, counters and locality facts, and shared by every
 * layout built while the slice stays the same. The live store keeps these instead of the slices'
 * JSON trees (a 10,000-slice fleet is most of a cluster's objects), so a changed slice costs its
 * own parse, not a re-parse of every slice.
 *
 * Immutable once parsed (but for what a layout borrowing its devices sets in them: `lent`);
 * reference counted (atomically): any thread may hold one. Pure logic. */
#ifndef RF_ALLOC_SLICE_H
#define RF_ALLOC_SLICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "alloc/model/model.h"
#include "config/config.h"

struct rf_slice {
	atomic_int refs;
	struct rf_arena *arena;           /* everything below */
	const char *name;                 /* metadata.name ("?" when missing) */
	const char *driver, *pool, *node; /* spec.driver, spec.pool.name, spec.nodeName */
	int64_t generation, count;        /* spec.pool.generation, resourceSliceCount */
	bool all_nodes;
	json_t *node_selector; /* spec.nodeSelector (a reference), or NULL */
	/* spec.perDeviceNodeSelection: each device names the nodes it serves, in device_nodes
	 * (one per device; NULL for other slices) */
	bool per_device;
	struct rf_device_nodes {
		const char *node; /* nodeName */
		bool all_nodes;
		json_t *selector; /* nodeSelector (a reference), or NULL */
	} * device_nodes;
	/* why the model skips it (a warning naming the slice), NULL when usable */
	const char *skip;
	/* sharedCounters; slice is 0 here (the pool sets its own index when it copies them) */
	struct rf_counter_set *counter_sets;
	size_t n_counter_sets;
	/* devices, as published; pool, slice, idx and gidx are the layout's to set on its copy */
	struct rf_device *devices;
	size_t n_devices;
	/* Lent to a layout: its pool uses `devices` themselves instead of copies (~150 bytes a
	 * device, a layout's largest part) and sets that layout's facts in them: pool and indexes,
	 * DeviceTaintRules' taints, NUMA inherited from a NIC, rails. One layout at a time holds
	 * the loan (until its arena goes); the others copy. rf_model_device_as_published() undoes
	 * those facts: what a copy and the next loan start from. Lent and copied only by the one
	 * build at a time that uses these records (rf_cluster_objects.lend_records). */
	atomic_bool lent;
	/* each device's taints as published (the rules' replace a lent device's), or NULL when
	 * none has any */
	struct rf_taint_span {
		struct rf_taint *v;
		size_t n;
	} * own_taints;
	/* warnings about parts of it, emitted by every layout that uses it: about its counters,
	 * then about its devices (in device order) */
	const char **counter_warnings, **device_warnings;
	size_t n_counter_warnings, n_device_warnings;
};

/**
 * Parse one ResourceSlice (as the API server sends it, or slim). Device kinds and bandwidth
 * capacities follow cfg->devices; a slice is parsed again only when it changes, so that section
 * must stay the same for the process (it does: configuration is read once). Bad content becomes
 * `skip` or warnings, never a failure.
 * @return 0, or -ENOMEM.
 */
int rf_slice_parse(const json_t *slice, const struct rf_config *cfg, struct rf_slice **ret);

/** Device i of s as published (*d a copy of s->devices[i], lent or not): what a layout sets in
 * a device it uses (pool, indexes, rules' taints, inherited NUMA, rail) undone. */
void rf_slice_device_as_published(const struct rf_slice *s, size_t i, struct rf_device *d);

struct rf_slice *rf_slice_ref(struct rf_slice *s);
/** Drop a reference. Accepts NULL. */
void rf_slice_unref(struct rf_slice *s);

#endif
