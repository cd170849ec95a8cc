/* The kube-apiserver client (libcurl): connection facts from a kubeconfig or the in-cluster
 * configuration, bearer-token handling (token files re-read when they change, every minute and
 * after a 401, as client-go does), a client-side QPS limit shared by every request of the process,
 * a user agent, connect and idle limits, and requests that return the status, the body and the
 * parsed Status message. Streaming responses (watches) hand their body to a callback as it arrives.
 *
 * Threads: `struct rf_kube` is shared and thread-safe (its mutable parts - token, rate limiter,
 * stop flag - are locked or atomic). A `struct rf_kube_conn` wraps one CURL easy handle and belongs
 * to one thread at a time (STYLE 3.4: one CURL * per owner thread); it keeps its connection alive
 * between requests. rf_kube_stop() makes every running and future request return -ECANCELED
 * within about a second (a CURLOPT_XFERINFOFUNCTION checks the flag) and wakes rf_kube_sleep(). */
#ifndef RF_SERVER_KUBE_H
#define RF_SERVER_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "config/kubeconfig.h"

/** The service-account directory of the in-cluster configuration. */
#define RF_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct rf_kube_options {
	/* Where the connection facts come from, first match wins: explicit path (--kubeconfig or
	 * kube.kubeconfig; must exist), $KUBECONFIG (the first existing file of the colon list;
	 * files are not merged), ~/.kube/config, then the in-cluster configuration. */
	const char *kubeconfig;
	const char *context;     /* NULL = current-context */
	double qps;              /* requests per second; <= 0 or infinite = no limit */
	unsigned burst;          /* 0 = max(1, 2 * qps) */
	const char *user_agent;  /* e.g. "railfit/0.1.0" */
	long connect_timeout_ms; /* 0 = 10 s */
	const char *sa_dir;      /* NULL = RF_KUBE_SA_DIR (tests point it elsewhere) */
	double token_reread_s;   /* 0 = 60 s: how often a token file is re-read (also at once when
				  * its inode or mtime changes, and after a 401) */
};

/**
 * Options from railfit's configuration: the --kubeconfig flag (may be NULL or "") over
 * kube.kubeconfig, kube.qps, the user agent (borrowed), and $RAILFIT_SA_DIR (tests point the
 * in-cluster service-account directory there).
 */
struct rf_kube_options rf_kube_options_from_config(const struct rf_config *cfg,
						   const char *kubeconfig_flag,
						   const char *user_agent);

struct rf_kube;

/**
 * Resolve the configuration and create the shared client. Reads the kubeconfig (and checks the
 * token, CA and certificate files exist), but does not contact the server.
 * @return 0, -EINVAL (no usable configuration; err says which file/field and why, for exit code 2),
 * -ENOENT (an explicit kubeconfig is missing), or -ENOMEM.
 */
int rf_kube_new(const struct rf_kube_options *o, struct rf_kube **ret, char *err, size_t errlen);
/** Free; every connection must have been freed first. Accepts NULL. */
void rf_kube_free(struct rf_kube *k);

/** Ask every request and sleep to stop (idempotent, any thread). */
void rf_kube_stop(struct rf_kube *k);
bool rf_kube_stopping(const struct rf_kube *k);
/** Sleep up to seconds; returns -ECANCELED at once when stopping, else 0. */
int rf_kube_sleep(struct rf_kube *k, double seconds);

/** The server URL (borrowed) and a description of where it came from, for logs. */
const char *rf_kube_server(const struct rf_kube *k);
const char *
rf_kube_source(const struct rf_kube *k); /* "kubeconfig /p (context c)" or "in-cluster" */

struct rf_kube_conn;

/** A connection for the calling thread. NULL on OOM. */
struct rf_kube_conn *rf_kube_conn_new(struct rf_kube *k);
/** curl_easy_cleanup first, then the header list (STYLE 3.4). Accepts NULL. */
void rf_kube_conn_free(struct rf_kube_conn *c);

struct rf_kube_response {
	long status; /* HTTP status; 0 when no response arrived */
	char *body;  /* NUL-terminated, owned; the error body of a streamed request too */
	size_t body_len;
	int retry_after; /* seconds from Retry-After (or details.retryAfterSeconds), -1 = none */
	char reason[64]; /* Status reason ("Expired", "Forbidden", ...) or "" */
	char error[768]; /* failure text a person can act on: transport error or status + message */
};

void rf_kube_response_release(struct rf_kube_response *r);

/** Streaming body callback: 0 to go on, a negative errno to abort the transfer with it. */
typedef int rf_kube_data_cb(void *userdata, const char *data, size_t len);
/** Called about once a second while a streamed 2xx response is open (liveness): 0 to go on, a
 * negative errno to abort the transfer with it. */
typedef int rf_kube_tick_cb(void *userdata);

struct rf_kube_request {
	const char *method; /* "GET" (default), "POST", "PATCH", "PUT", "DELETE" */
	const char *path;   /* "/api/v1/nodes?limit=500", already escaped */
	const char *body;   /* request body, or NULL */
	size_t body_len;
	const char *content_type; /* of the body; NULL = application/json */
	long timeout_ms;          /* hard limit of the whole exchange; 0 = none (idle limit only) */
	long idle_ms;             /* abort when no byte moves for this long; 0 = 60 s */
	size_t max_body;          /* bound of a buffered body; 0 = 1 GiB */
	rf_kube_data_cb *on_data; /* when set, a 2xx body is streamed here instead of buffered */
	rf_kube_tick_cb *on_tick;
	void *userdata;
};

/**
 * Perform one request (after waiting for the rate limiter). A 401 re-reads the token file and
 * retries once.
 * @return 0 when a complete response arrived (any status: look at ret->status), or a negative
 * errno with ret->error filled: -ECANCELED (stopping), -ETIMEDOUT (timeout or idle limit),
 * -ECONNREFUSED / -EHOSTUNREACH (cannot connect or resolve), -ECONNRESET (the connection broke,
 * also mid-body: ret->status tells whether headers had arrived), -EPROTO (TLS or HTTP failure),
 * -EMSGSIZE (body above max_body), -ENOMEM, or the negative value on_data or on_tick returned.
 * ret is always initialised; release it.
 */
int rf_kube_do(struct rf_kube_conn *c, const struct rf_kube_request *req,
	       struct rf_kube_response *ret);

/**
 * GET /version → gitVersion ("v1.35.0") into buf.
 * @return 0, -EPROTO (no gitVersion), or rf_kube_do's errors (ret_error gets the message).
 */
int rf_kube_server_version(struct rf_kube_conn *c, char *buf, size_t len, char *err, size_t errlen);

/** "v1.34.2" → 134, "v1.35.0-rc.1" → 135, 0 when unparseable. */
int rf_kube_minor_version(const char *git_version);

/**
 * Merge-patch one annotation of a Node (value NULL removes it), as `railfit topology --publish`
 * needs: PATCH /api/v1/nodes/{node} with application/merge-patch+json
 * {"metadata":{"annotations":{key:value}}}.
 * @return 0 on 200, -ENOENT (404), -EACCES (401/403, err names the missing RBAC rule), -EPROTO
 * (other status) or rf_kube_do's errors; err holds the message.
 */
int rf_kube_patch_node_annotation(struct rf_kube_conn *c, const char *node, const char *key,
				  const char *value, char *err, size_t errlen);

/* ---- pure helpers, unit-tested ---- */

/** Token bucket: `rate` tokens per second, at most `burst` stored. rate <= 0 = unlimited. */
struct rf_token_bucket {
	double rate, burst, tokens, last;
};
void rf_token_bucket_init(struct rf_token_bucket *b, double rate, double burst, double now);
/** Take one token; returns the seconds to wait before using it (0 = now). */
double rf_token_bucket_reserve(struct rf_token_bucket *b, double now);

/** Retry-After header value → seconds (integer form only, as client-go), -1 when unusable. */
int rf_kube_parse_retry_after(const char *value);

/**
 * Human text for an API failure, for logs and Error fields: e.g. `403 Forbidden: pods is
 * forbidden: User "x" cannot list resource "pods" ... (the RBAC role of railfit needs verb "list"
 * on "pods" in API group "")`. verb/resource/group describe the attempted call (may be NULL).
 */
void rf_kube_describe_failure(const struct rf_kube_response *r, const char *verb,
			      const char *resource, const char *group, char *buf, size_t len);

/** Monotonic clock in seconds. */
double rf_kube_now(void);

#endif
