/* The reflector's decisions as pure functions (no I/O, no logging, no clock, no randomness of
 * their own): backoff and timeouts, resourceVersion order, and the choices reflector.c makes
 * around each list and watch. reflector.c does the requests, the logging and the counting;
 * test/unit/server/test_reflector.c (suite reflector) drives the decisions from tables. */
#ifndef RF_SERVER_REFLECTOR_POLICY_H
#define RF_SERVER_REFLECTOR_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/kube/watch_stream.h"

/**
 * client-go's backoff manager (k8s.io/apimachinery wait.Backoff + backoffManager) with a lower
 * cap: client-go's 30 s (jitter 1.0, so up to 60 s) protects the API server from thousands of
 * kubelets; railfit has five watches, and must notice an API server that is back within 10 s.
 * Delays 0.8, 1.6, 3.2, 4, 4, ... s, each jittered up to +50% (at most 6 s).
 */
struct rf_backoff {
	double initial, cap, factor, jitter, reset_after; /* 0.8, 4, 2, 0.5, 120 */
	double next;                                      /* the next base delay */
	double last;                                      /* time of the last step; < 0 = never */
};

#define RF_BACKOFF_CAP       4.0
#define RF_RETRY_AFTER_MAX_S 120 /* a Retry-After beyond this is taken as this */

void rf_backoff_init(struct rf_backoff *b);
/** The next delay at time now, jittered with rand01 in [0, 1): in [d, d * (1 + jitter)). */
double rf_backoff_step(struct rf_backoff *b, double now, double rand01);
/** Back to the initial delay: a list or watch succeeded. */
void rf_backoff_reset(struct rf_backoff *b);
/** The sleep before the next attempt: the backoff delay, or the server's Retry-After (seconds,
 * -1 = none) when longer, also above the cap, up to RF_RETRY_AFTER_MAX_S. */
double rf_backoff_delay(double backoff, int retry_after);

/**
 * Has the API server's resourceVersion gone backwards (an etcd restore): is now, an RV the
 * server just gave, lower than last, one it gave before? RVs that are not decimal numbers
 * (opaque elsewhere) or an empty last never count.
 */
bool rf_rv_went_backwards(const char *last, const char *now);

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

/**
 * Append "&key=value" to a request path, or "?key=value" when it has no query yet; value is
 * URL-escaped.
 * @return 0, -ENAMETOOLONG (buf[len] too small; its content is then unspecified) or -ENOMEM.
 */
int rf_path_add_param(char *buf, size_t len, const char *key, const char *value);

/* ---- list: client-go's relistResourceVersion and its retry ---- */

/** Items per page of a paginated list. */
#define RF_LIST_PAGE_SIZE 500

/**
 * The resourceVersion of the next list: "" once an RV was found expired or too large (a
 * consistent read), "0" before the first list completed (any cached state will do), else the
 * last RV seen (at least that fresh). @return a static string or last_rv itself.
 */
const char *rf_list_rv(bool rv_unavailable, bool synced, const char *last_rv);

/**
 * The limit of a list at rv: RF_LIST_PAGE_SIZE for "" and "0", and for every list once an RV
 * "0" list came back paginated (paginated_before); 0 (no limit) for a list at a given RV, which
 * the API server serves whole from its watch cache.
 */
int rf_list_page_size(const char *rv, bool paginated_before);

/** Is a failed list's answer "resourceVersion too large" (504 naming ResourceVersionTooLarge)?
 * body may be NULL. */
bool rf_list_rv_too_large(long status, const char *body);

/** Does a failed list's answer (the RV expired, or too_large) call for a list with RV "" at
 * once, without a backoff? */
bool rf_list_retry_without_rv(long status, const char *reason, bool too_large);

/**
 * The restart reason of a failed list: rc 1 (the API server answered status) gives http-429,
 * http-5xx, expired or http-4xx; a negative rc (transport) gives timeout, closed, connect or
 * error. *ret_retry_after gets the Retry-After to honour: retry_after for 429 and 5xx, else -1.
 * @return a static string.
 */
const char *rf_list_failure(int rc, long status, int retry_after, int *ret_retry_after);

/* ---- watch ---- */

/**
 * The watch request path: base?allowWatchBookmarks=true[&fieldSelector=..]&resourceVersion=rv
 * &timeoutSeconds=timeout_s&watch=true, values escaped. field_selector may be NULL.
 * @return 0, -ENAMETOOLONG or -ENOMEM.
 */
int rf_watch_path(char *buf, size_t len, const char *base, const char *field_selector,
		  const char *rv, long timeout_s);

/** What the reflector does with one watch event. */
enum rf_event_action {
	RF_EVENT_APPLY,    /* record its RV, apply it to the store */
	RF_EVENT_BOOKMARK, /* record its RV only */
	RF_EVENT_SKIP,     /* an object of another kind (client-go skips it): nothing */
	RF_EVENT_ABORT,    /* an ERROR event: stop the watch, the Status says why */
};

/**
 * Decide about ev for a reflector of kind (rf_kind_name: "Pod", ...). An event whose object has
 * no "kind" is taken as of the right kind. *ret_rv gets the RV to record as the last one (ev->rv,
 * borrowed) when the action is APPLY or BOOKMARK and ev->rv is shorter than rv_max, else NULL.
 */
enum rf_event_action rf_watch_event_action(const struct rf_watch_event *ev, const char *kind,
					   size_t rv_max, const char **ret_rv);

/** Why the event callback stopped a watch stream (RF_SF_NONE: it did not). */
enum rf_stream_failure {
	RF_SF_NONE = 0,
	RF_SF_ERROR_EVENT, /* an ERROR event */
	RF_SF_GARBAGE,     /* a line that is no event */
	RF_SF_OVERSIZE,    /* an event over the line limit */
	RF_SF_STORE,       /* the store could not take an event (out of memory) */
	RF_SF_RV_RESET,    /* the resourceVersion went backwards (here or in another reflector) */
};

/** How one watch request ended: what watch_once knows after rf_kube_do. */
struct rf_watch_end {
	int rc;          /* rf_kube_do's return */
	long status;     /* HTTP status, 0 = none */
	int retry_after; /* the response's Retry-After, -1 = none */
	enum rf_stream_failure failure;
	int err_code;           /* the ERROR event's Status code (0 = absent) */
	const char *err_reason; /* and reason ("" or NULL = absent) */
	bool pending;           /* an incomplete event was left in the stream buffer */
	double elapsed;         /* seconds the request took */
	long timeout_s;         /* the timeoutSeconds asked for */
	size_t n_events;        /* events received */
};

enum rf_watch_next {
	RF_NEXT_REWATCH,         /* watch again from the last RV at once */
	RF_NEXT_BACKOFF_REWATCH, /* back off, then watch again */
	RF_NEXT_RELIST,          /* back off, then list at the last RV */
	RF_NEXT_STOP,            /* the client is stopping */
};

/** Which failure text goes with a verdict (the caller formats it, with the resource). */
enum rf_watch_detail {
	RF_DETAIL_NONE,      /* no failure */
	RF_DETAIL_STREAM,    /* the text the event callback recorded */
	RF_DETAIL_BROKEN,    /* "broken stream: " and the decoder's text */
	RF_DETAIL_SHORT,     /* "ended after ... without any event" */
	RF_DETAIL_TRANSPORT, /* the transport error (no response) */
	RF_DETAIL_HTTP,      /* the API server's error answer */
};

struct rf_watch_verdict {
	enum rf_watch_next next;
	const char *reason; /* railfit_watch_restarts_total's reason (static), NULL for STOP */
	bool failure;       /* a failure (backoff streak, warning) rather than a routine restart */
	int retry_after;    /* Retry-After to honour in the backoff, -1 = none */
	bool healthy;       /* a routine restart after a watch that lived: ends a failure streak */
	enum rf_watch_detail detail;
};

/**
 * Classify the end of a watch, in this order (reflector.h lists the cases): rc -ECANCELED without
 * a stream failure → STOP; a 2xx status with a stream failure → by the failure (ERROR
 * 410/Expired/Gone: relist "expired", ERROR 429: back off and re-watch "http-429", other ERROR
 * events: relist "error"; garbage, oversize, store: relist); a 2xx stream that ended under 1 s
 * without any event → relist "short"; any other end of a 2xx stream → re-watch at once,
 * "truncated" when an incomplete event was left, "timeout" at the idle limit or a clean end
 * within 1 s of timeout_s, else "closed"; rc < 0 otherwise (no complete response, whatever the
 * status) → "connect" (refused: back off and re-watch) or timeout/closed/error (relist); an error
 * status → 429: back off and re-watch honouring Retry-After, else relist ("expired" for 410,
 * http-4xx, http-5xx honouring Retry-After).
 */
struct rf_watch_verdict rf_watch_classify(const struct rf_watch_end *e);

/**
 * Whether, before the next watch after v, the reflector asks the API server for its current
 * resourceVersion (a list with limit=1): after a watch that did not end by its own timeout (a
 * dropped connection, a restarted API server), a watch at a resourceVersion a restored API
 * server has not reached would stay silent until its idle limit (kube-watch.md: "a watch at a
 * future RV just waits"). False for STOP and RELIST (the list itself compares).
 */
bool rf_watch_check_rv(const struct rf_watch_verdict *v);

#endif
