/* Cluster snapshots: reading them (snapshot_load.h), packing a generation's objects, and the cache
 * dumped back as a kubectl-style List for /debug/snapshot. */
#ifndef RF_SERVER_SNAPSHOT_H
#define RF_SERVER_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "alloc/model/model.h"
#include "server/snapshot/snapshot_load.h"

/*
 * Packing, for a generation that will never be rebuilt from its objects (a snapshot, the demo):
 * the model keeps no pointer into ResourceSlices, nor into ResourceClaims without
 * consumedCapacity, once it is built, and only rf_snapshot_dump() reads them again. Those objects
 * are replaced by packed blobs (their compact JSON, compressed with server/pack.h) in the arrays
 * the generation holds; rf_snapshot_dump() unpacks them.
 *
 * rf_snapshot_pack_prepare() only reads objs: it may run on another thread while the generation
 * is built from the same objects. rf_snapshot_pack_commit() changes the arrays: call it after the
 * build and before the generation is published.
 */
struct rf_snapshot_packed;

/** Whether the model keeps a pointer into this (slim) ResourceClaim once built: a
 * consumedCapacity in its allocation's results. Such claims stay objects. */
bool rf_snapshot_claim_referenced(const json_t *claim);

/** @return 0 or -ENOMEM. */
int rf_snapshot_pack_prepare(const struct rf_cluster_objects *objs,
			     struct rf_snapshot_packed **ret);
/**
 * Swap the packed blobs in; frees p (accepts NULL). @return the objects replaced, as a new array
 * reference for the caller to drop when convenient (freeing them takes a while: a helper thread
 * can do it while the server starts); NULL on OOM, then nothing was swapped.
 */
json_t *rf_snapshot_pack_commit(struct rf_cluster_objects *objs, struct rf_snapshot_packed *p);

/**
 * After the build from objects of rf_snapshot_load_kept(), before the generation is published:
 * the packed ResourceClaims first, then those kept as objects (the order
 * rf_snapshot_pack_commit() leaves, which /debug/snapshot lists them in). @return 0 or -ENOMEM
 * (then the order is the file's).
 */
int rf_snapshot_kept_order(struct rf_cluster_objects *objs);

/**
 * One object as a packed blob of its own (what the live store keeps of a ResourceSlice once it is
 * parsed): rf_snapshot_dump() expands it where it finds it in the generation's arrays, and two
 * blobs are json_equal() exactly when the objects' compact texts are equal.
 * @return a new reference, or NULL on OOM.
 */
json_t *rf_snapshot_pack_object(const json_t *obj);

/**
 * The object a blob of rf_snapshot_pack_object() holds, or v itself when it is an object (a new
 * reference either way); NULL on OOM or when v is neither. The shape of
 * rf_cluster_objects.expand (userdata unused).
 */
json_t *rf_snapshot_expand(const json_t *v, void *unused);

/** The generation's objects as a kubectl-style List. New reference. */
json_t *rf_snapshot_dump(const struct rf_cluster *c);

#endif
