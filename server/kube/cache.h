/* The current cluster generation, shared by every HTTP thread (STYLE 3.5): readers take a
 * reference under a mutex that guards only the pointer; the writer publishes a complete new
 * generation and drops the old one outside the lock. Also the sync state per watched kind, for
 * /readyz and the railfit_cache_* metrics. */
#ifndef RF_SERVER_CACHE_H
#define RF_SERVER_CACHE_H

#include <stdbool.h>

#include <jansson.h>

#include "alloc/model/model.h"

enum rf_kind {
	RF_KIND_NODES = 0,
	RF_KIND_PODS,
	RF_KIND_SLICES,
	RF_KIND_CLAIMS,
	RF_KIND_CLASSES,
	RF_KIND_TAINT_RULES, /* DeviceTaintRules: optional, a server may not serve them */
	RF_KIND_COUNT
};

const char *rf_kind_resource(enum rf_kind k); /* "nodes", "pods", "resourceslices", ... */

struct rf_cache;

struct rf_cache *rf_cache_new(void);
void rf_cache_free(struct rf_cache *c);

/** Publish a generation (steals the reference). */
void rf_cache_publish(struct rf_cache *c, struct rf_cluster *gen);

/** A new reference to the current generation, or NULL before the first publish. */
struct rf_cluster *rf_cache_get(struct rf_cache *c);

/** Mark a kind synced (initial list done) and record the time of its last good contact. */
void rf_cache_set_synced(struct rf_cache *c, enum rf_kind k, bool synced);
void rf_cache_touch(struct rf_cache *c, enum rf_kind k);
/** An optional kind the API server does not serve (404): not watched, and readiness does not
 * wait for it (until it is synced after all). */
void rf_cache_set_absent(struct rf_cache *c, enum rf_kind k, bool absent);
/** Mark the whole cache static (a snapshot): always synced, never stale. */
void rf_cache_set_static(struct rf_cache *c, const char *source);

/**
 * Readiness per DESIGN section 4: every kind synced and none failing longer than stale_after_ms.
 * *ret_detail (may be NULL) gets a new JSON object describing each kind.
 */
bool rf_cache_ready(struct rf_cache *c, long long stale_after_ms, json_t **ret_detail);

/** Seconds since the last good contact for a kind (0 for a static cache). */
double rf_cache_staleness(struct rf_cache *c, enum rf_kind k);

/** The store's oldest change not yet in the published generation: its time (CLOCK_MONOTONIC
 * seconds; 0 = none). rf_cache_lag(): how long it has waited, 0 when the generation is current
 * (railfit_cache_lag_seconds). */
void rf_cache_set_pending(struct rf_cache *c, double since);
double rf_cache_lag(struct rf_cache *c);

/** "snapshot:<file>", "demo" or "apiserver". Borrowed, lives as long as the cache. */
const char *rf_cache_source(struct rf_cache *c);

#endif
