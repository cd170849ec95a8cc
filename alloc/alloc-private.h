/* Internals shared by the files of alloc/: the arena that owns everything of one generation
 * (config/arena.h), jansson accessors (json_get.h), claim parsing and the selector cache. Never
 * included from another folder. */
#ifndef RF_ALLOC_PRIVATE_H
#define RF_ALLOC_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "alloc/model/json_get.h"
#include "alloc/model/model.h"
#include "config/arena.h"
#include "config/utf8.h" /* rf_utf8_trim */

/** Parse a claim spec (ResourceClaimSpec) into *claim using the arena; sets claim->unsupported
 * when something cannot be evaluated. -ENOMEM only. */
int rf_claim_parse_spec(struct rf_arena *a, const struct rf_cluster *c, struct rf_claim *claim,
			const json_t *spec);

/** The claim name a pod's spec.resourceClaims entry resolves to, or NULL (template not yet
 * instantiated). */
const char *rf_pod_claim_name(const json_t *pod, const json_t *entry);

/** True when the pod's status.resourceClaimStatuses has an entry for this pod claim without a
 * resourceClaimName: the controller decided no claim is needed, and the scheduler skips it. */
bool rf_pod_claim_not_needed(const json_t *pod, const json_t *entry);

struct rf_cel_cache *rf_cluster_cel(const struct rf_cluster *c);

struct rf_demand;

/**
 * The extended resources a pod asks for that DRA serves (1.36+): the synthetic claim and its
 * per-node variants into d (alloc/demand_ext.c). @return 0, 1 (err says why the demand cannot be
 * evaluated), or -ENOMEM.
 */
int rf_demand_add_extended(const struct rf_cluster *c, const json_t *pod, struct rf_demand *d,
			   char *err, size_t errlen);

/**
 * A compiled selector for expr: from the process-wide cache, or, when that cache is full, compiled
 * for this generation alone. Same returns as rf_cel_compile(). Thread-safe.
 */
int rf_cluster_selector(const struct rf_cluster *c, const char *expr,
			const struct rf_cel_program **ret, struct rf_cel_error *err);

#endif
