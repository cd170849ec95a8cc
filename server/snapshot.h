/* Cluster snapshots: what `kubectl get nodes,pods,resourceslices,resourceclaims,deviceclasses -A
 * -o json` prints (a v1 List whose items carry kind/apiVersion), read into objects by kind, and
 * the cache dumped back in the same format for /debug/snapshot. */
#ifndef RF_SERVER_SNAPSHOT_H
#define RF_SERVER_SNAPSHOT_H

#include <jansson.h>
#include <stddef.h>

#include "alloc/model.h"

/**
 * Split a List (or a typed list such as a NodeList, or a single object) into objects by kind.
 * Items of kinds railfit does not use are skipped and counted in *ret_skipped.
 * @return 0, -EINVAL (err says what was expected) or -ENOMEM. ret owns new array references.
 */
int rf_snapshot_split(const json_t *doc, struct rf_cluster_objects *ret, size_t *ret_skipped,
		      char *err, size_t errlen);

/** Read and split a JSON file; -ENOENT/-EACCES/-EINVAL/-EMSGSIZE with a message in err. */
int rf_snapshot_load_file(const char *path, struct rf_cluster_objects *ret, size_t *ret_skipped,
			  char *err, size_t errlen);

void rf_cluster_objects_release(struct rf_cluster_objects *o);

/** The generation's objects as a kubectl-style List. New reference. */
json_t *rf_snapshot_dump(const struct rf_cluster *c);

#endif
