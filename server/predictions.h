/* railfit_prediction_total{outcome}: what railfit predicted the DRA allocator would pick for a
 * claim on each node, compared with the allocation that then appears on the claims watch:
 * "exact" (same devices), "same_level" (other devices, same GPU-to-NIC level), "differs";
 * railfit_placement_alignment_total{level}: the level of the devices the claim really got;
 * the latest of those placements for GET /debug/placements.
 * A bounded table of the most recent claims (older ones are forgotten); thread-safe. */
#ifndef RF_SERVER_PREDICTIONS_H
#define RF_SERVER_PREDICTIONS_H

#include <jansson.h>

#include "alloc/evaluate.h"
#include "alloc/memo.h"
#include "server/kube/cache.h"

struct rf_pred_batch;

/** Start collecting the per-node predictions of one claim ("ns/name"); NULL on OOM. */
struct rf_pred_batch *rf_predictions_begin(const char *claim_key);

/** Add the devices predicted for the claim on the node whose name's rf_fingerprint() is
 * node_fp (struct rf_judgement.name_fp): the picks of claim index `claim` that are not pinned
 * (ignored when there are none). Not thread-safe for one batch. */
void rf_predictions_add(struct rf_pred_batch *b, uint64_t node_fp, unsigned claim,
			const struct rf_memo_pick *picks, size_t n_picks, enum rf_level level,
			bool level_applies);

/** Replace what was known of the claim with the batch (steals it; accepts NULL). */
void rf_predictions_commit(struct rf_pred_batch *b);

/** A claim object from the watch: if it is allocated and railfit predicted it, count the outcome
 * once (the level of the real devices is computed on the current generation of cache). */
void rf_predictions_observe(const json_t *claim, struct rf_cache *cache);

/** The latest placements railfit predicted (at most 128, newest first): per claim, the pod (from
 * reservedFor), the node, the predicted and the actual devices ("driver/pool/device") and levels,
 * the outcome. New reference; NULL on OOM. Each observed claim that has a GPU and a NIC also
 * counts railfit_placement_alignment_total{level} (the level it really got). */
json_t *rf_predictions_placements(void);

/** Forget everything (tests, shutdown). */
void rf_predictions_reset(void);

#endif
