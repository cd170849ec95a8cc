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

/* ---- pure helpers, unit-tested ---- */

/** client-go's backoff manager (k8s.io/apimachinery wait.Backoff + backoffManager). */
struct rf_backoff {
	double initial, cap, factor, jitter, reset_after; /* 0.8, 30, 2, 1.0, 120 */
	double next;                                      /* the next base delay */
	double last;                                      /* time of the last step; < 0 = never */
};

void rf_backoff_init(struct rf_backoff *b);
/** The next delay at time now, jittered with rand01 in [0, 1): in [d, d * (1 + jitter)). */
double rf_backoff_step(struct rf_backoff *b, double now, double rand01);

/** The watch's timeoutSeconds: floor(min_s * (1 + rand01)), at least 1 (client-go). */
long rf_watch_timeout_seconds(double min_s, double rand01);

/** How long a watch (or a list) may stay silent before it is restarted: clamp(watchTimeout, 5 s,
 * 90 s) - kube-apiserver sends a bookmark about every minute. */
long rf_watch_idle_ms(int64_t watch_timeout_ms);

/**
 * Compare two resourceVersions as kube-apiserver orders them (decimal integers of any size:
 * by length, then bytewise; leading zeros ignored). *ret is -1, 0 or 1.
 * @return 0, or -EINVAL when either is not a decimal number (RVs are opaque elsewhere).
 */
int rf_rv_compare(const char *a, const char *b, int *ret);

/** Does a failed response mean "resourceVersion expired" (410, or reason Expired/Gone)? */
bool rf_kube_is_expired(long status, const char *reason);

#endif
