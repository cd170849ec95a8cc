/* Reading cluster snapshots: what `kubectl get nodes,pods,resourceslices,resourceclaims,
 * deviceclasses -A -o json` prints (a v1 List whose items carry kind/apiVersion), split into
 * objects by kind. */
#ifndef RF_SERVER_SNAPSHOT_LOAD_H
#define RF_SERVER_SNAPSHOT_LOAD_H

#include <stddef.h>

#include <jansson.h>

#include "alloc/model/model.h" /* struct rf_cluster_objects only */
#include "config/config.h"
#include "server/snapshot/slim.h"

/* The kinds a snapshot holds, one per array of struct rf_cluster_objects. */
#define RF_SNAPSHOT_N_KINDS 7
struct rf_snapshot_kind {
	const char *kind, *list_kind, *api_version;
	size_t offset; /* of its array in struct rf_cluster_objects */
};
extern const struct rf_snapshot_kind rf_snapshot_kinds[RF_SNAPSHOT_N_KINDS];

/** The array of kind i (rf_snapshot_kinds order) in o. */
json_t **rf_snapshot_slot(struct rf_cluster_objects *o, size_t i);

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

/**
 * The same for a snapshot already in memory (what rf_snapshot_load() does after mapping the
 * file); name stands for the file in messages.
 */
int rf_snapshot_load_buffer(const char *name, const char *buf, size_t len,
			    const struct rf_slim_options *opts, struct rf_cluster_objects *ret,
			    size_t *ret_skipped, char *err, size_t errlen);

/**
 * rf_snapshot_load() in the form a server that never rebuilds its generation keeps (what the
 * live store keeps, server/kube/store.h), made item by item as the file is read so that the
 * slim trees of all ResourceSlices never exist together: each ResourceSlice is parsed into its
 * record with cfg (ret->slice_recs, in the order of ret->slices; the model reads nothing else of
 * them) and kept packed (rf_snapshot_pack_object()) for /debug/snapshot; each ResourceClaim is
 * kept packed too but for those rf_snapshot_claim_referenced() (objects, as before); the rest
 * are the slim objects rf_snapshot_load() gives. ret->expand is rf_snapshot_expand. Same inputs
 * accepted, same messages.
 */
int rf_snapshot_load_kept(const char *path, const struct rf_slim_options *opts,
			  const struct rf_config *cfg, struct rf_cluster_objects *ret,
			  size_t *ret_skipped, char *err, size_t errlen);
int rf_snapshot_load_buffer_kept(const char *name, const char *buf, size_t len,
				 const struct rf_slim_options *opts, const struct rf_config *cfg,
				 struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
				 size_t errlen);

/** Drop the arrays (accepts empty ones) and the slices' records when set (references the
 * holder owns: set by rf_snapshot_load_kept()). */
void rf_cluster_objects_release(struct rf_cluster_objects *o);

#endif
