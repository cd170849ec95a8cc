/* Explain documents (DESIGN section 4): what /debug/explain and `railfit explain` show for a pod,
 * built from the per-node evaluations of evaluate.h. Pure logic; any thread. */
#ifndef RF_ALLOC_EXPLAIN_H
#define RF_ALLOC_EXPLAIN_H

#include <stddef.h>

#include <jansson.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/model/model.h"

/** Explain JSON of one node (DESIGN section 4 shape). New reference, NULL on OOM. */
json_t *rf_node_eval_json(const struct rf_cluster *c, const struct rf_node_eval *e);

/** The whole explain document for a pod: {"pod","demand","unknownReason","nodes":[...]}. */
json_t *rf_explain_json(const struct rf_cluster *c, const struct rf_demand *d,
			const struct rf_node_eval *evals, size_t n);

/** Explain a pod over a generation: every node evaluated (or only_node), failing nodes last, then
 * by score and name. New reference, NULL on OOM. */
json_t *rf_explain_pod(const struct rf_cluster *c, const json_t *pod, const char *only_node);

#endif
