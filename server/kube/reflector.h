/* Reflectors: one thread per watched kind keeping the store equal to the API server's state, as
 * client-go's Reflector does (reference/kube-watch.md section 6):
 *
 *   LIST (RV "0" first, paginated by 500 with continue; later at the last RV without a limit;
 *         "" at once when that RV is Expired or too large)
 *   → WATCH from the list's RV (allowWatchBookmarks, timeoutSeconds jittered in [w, 2w))
 *   → clean end, dropped connection or truncated event: WATCH again from the last RV at once
 *     (unless it lasted < 1 s with no event: back off and relist);
 *     429 or connection refused at start, ERROR 429: back off, WATCH again;
 *     410 (status or ERROR event), other ERROR events, garbage, oversize events, other HTTP
 *     errors: back off, relist at the last RV.
 *
 * Backoff is client-go's: 0.8 s doubling to 30 s, each delay jittered to [d, 2d), reset after
 * 2 minutes without failures; a Retry-After on 429/5xx is honoured when longer. Every successful
 * contact (list, event, bookmark, an open watch) touches the kind in the cache; the first list
 * marks it synced. Counters: railfit_watch_events_total{resource,type} and
 * railfit_watch_restarts_total{resource,reason}, reason one of expired, error, garbage, oversize,
 * timeout, closed, truncated, short, http-429, http-4xx, http-5xx, connect. */
#ifndef RF_SERVER_REFLECTOR_H
#define RF_SERVER_REFLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "server/kube/cache.h"
#include "server/kube/kube.h"
#include "server/kube/reflector_policy.h"
#include "server/kube/store.h"

struct rf_reflectors_options {
	struct rf_kube *kube; /* shared client; outlives the reflectors */
	struct rf_store *store;
	struct rf_cache *cache;
	int64_t watch_timeout_ms; /* kube.watchTimeout: the minimum of the jittered timeoutSeconds
				   */
	bool detect_dra_version;  /* GET /version before the first node list until it works */
};

struct rf_reflectors;

/** Start one thread per kind. @return 0, -ENOMEM or -errno from pthread_create. */
int rf_reflectors_start(const struct rf_reflectors_options *o, struct rf_reflectors **ret);

/** Stop (rf_kube_stop on the shared client) and join every thread, then free. Accepts NULL. */
void rf_reflectors_stop(struct rf_reflectors *r);

/**
 * kube.draVersion auto: the DRA rules for the server's gitVersion (rf_dra_version_from_git())
 * into the store's builds, logged; a server newer than the newest rules railfit knows gets them
 * with a warning, once per process. @return 0, or -EINVAL (not a version: the rules stay).
 */
int rf_reflectors_use_server_version(struct rf_store *store, const char *git_version);

#endif
