/* The reflector's decisions as pure functions (no I/O, no logging, no clock, no randomness of
 * their own): backoff and timeouts, resourceVersion order, and the choices reflector.c makes
 * around each list and watch. reflector.c does the requests, the logging and the counting;
 * test/unit/server/test_reflector.c (suite reflector) drives the decisions from tables. */
#ifndef RF_SERVER_REFLECTOR_POLICY_H
#define RF_SERVER_REFLECTOR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

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
