/* Cluster snapshots: what `kubectl get nodes,pods,resourceslices,resourceclaims,deviceclasses -A
 * -o json` prints (a v1 List whose items carry kind/apiVersion), read into objects by kind, and
 * the cache dumped back in the same format for /debug/snapshot. */
#ifndef RF_SERVER_SNAPSHOT_H
#define RF_SERVER_SNAPSHOT_H

#include <stddef.h>

#include <jansson.h>

#include "alloc/model.h"
#include "server/slim.h"

/* Every object is slimmed as it is split (server/slim.h): the result holds only the fields railfit
 * reads. opts NULL keeps every Node annotation (the caller does not know which topology
 * annotation is configured). */

/**
 * Split a List (or a typed list such as a NodeList, or a single object) into objects by kind.
 * Items of kinds railfit does not use are skipped and counted in *ret_skipped.
 * @return 0, -EINVAL (err says what was expected) or -ENOMEM. ret owns new array references.
 */
int rf_snapshot_split(const json_t *doc, struct rf_cluster_objects *ret, size_t *ret_skipped,
		      char *err, size_t errlen);
int rf_snapshot_split_opts(const json_t *doc, const struct rf_slim_options *opts,
			   struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
			   size_t errlen);

/**
 * Read and split a JSON file; -ENOENT/-EACCES/-EINVAL/-EMSGSIZE with a message in err. The file
 * is mapped and its items are parsed and slimmed one by one (on up to two threads), so the whole
 * document never exists as one tree; anything unusual (and every error) goes the slow way, one
 * json_loadb() of the whole file, for the same result and the same messages.
 */
int rf_snapshot_load_file(const char *path, struct rf_cluster_objects *ret, size_t *ret_skipped,
			  char *err, size_t errlen);
int rf_snapshot_load(const char *path, const struct rf_slim_options *opts,
		     struct rf_cluster_objects *ret, size_t *ret_skipped, char *err, size_t errlen);

void rf_cluster_objects_release(struct rf_cluster_objects *o);

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

/** @return 0 or -ENOMEM. */
int rf_snapshot_pack_prepare(const struct rf_cluster_objects *objs,
			     struct rf_snapshot_packed **ret);
/**
 * Swap the packed blobs in; frees p (accepts NULL). @return the objects replaced, as a new array
 * reference for the caller to drop when convenient (freeing them takes a while: a helper thread
 * can do it while the server starts); NULL on OOM, then nothing was swapped.
 */
json_t *rf_snapshot_pack_commit(struct rf_cluster_objects *objs, struct rf_snapshot_packed *p);

/** The generation's objects as a kubectl-style List. New reference. */
json_t *rf_snapshot_dump(const struct rf_cluster *c);

#endif
