/* The HTTP front: libmicrohttpd with a thread pool, a route table, bounded request bodies,
 * per-request timeouts and JSON error bodies (DESIGN section 4, STYLE 3.4/3.5).
 *
 * Handlers run on MHD pool threads, concurrently; they must only read shared state through
 * references they hold (the cache generation). The server owns connections and request buffers;
 * a handler fills an rf_http_response whose body the server frees after queueing. */
#ifndef RF_SERVER_HTTP_H
#define RF_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/strbuf.h"
#include "server/http/auth.h"

struct rf_tls;
struct rf_token;

struct rf_http_request {
	const char *method;  /* "GET", "POST", ... */
	const char *path;    /* without the query string, e.g. "/debug/nodes/n1" */
	const char *subpath; /* for prefix routes: the part after the route's path, else "" */
	const char *body; /* NUL-terminated copy of the body (may contain NULs before body_len) */
	size_t body_len;
	void *conn; /* struct MHD_Connection *, for rf_http_query() */
};

struct rf_http_response {
	int status;
	char *body; /* malloc'd, owned by the server after return; NULL = empty */
	size_t body_len;
	const char *content_type; /* static string; NULL = application/json */
};

/** A handler fills *resp; returning non-zero means "internal error" and yields a 500 JSON body. */
typedef int rf_http_handler(void *userdata, const struct rf_http_request *req,
			    struct rf_http_response *resp);

struct rf_http_route {
	const char *method; /* "GET" or "POST"; NULL = any (handler checks) */
	const char *path;   /* exact path, or prefix when prefix is true */
	bool prefix;
	const char *metric_verb; /* label for railfit_requests_total{verb}; NULL = "other" */
	rf_http_handler *fn;
	void *userdata;
};

struct rf_http_options {
	const char *listen; /* "host:port", "[::1]:port" or ":port"; port 0 picks a free one */
	int64_t max_body_bytes;
	int64_t request_timeout_ms; /* idle timeout, and the deadline for a request's arrival */
	unsigned threads;           /* 0 = min(4, ncpu) */
	unsigned max_connections;   /* 0 = RF_HTTP_CONNECTION_LIMIT */
	unsigned max_per_address;   /* connections from one client address; 0 = no limit */
	/* request bodies held at once, over every server of the process (the smallest budget any
	 * running server was given applies); 0 = no budget */
	int64_t max_buffered_bytes;
	struct rf_tls *tls;     /* HTTPS with these credentials (tls.h); NULL = plain HTTP */
	struct rf_token *token; /* bearer token of RF_HTTP_OPERATOR routes; NULL = none */
	/* who may call each route (auth.h), parallel to the routes; NULL = all RF_HTTP_OPEN */
	const enum rf_http_access *access;
};

/* The documented request-head limits: a longer request target, or more query parameters, gets a
 * JSON 414; more header bytes or lines a JSON 431 (see README "Limits"). */
#define RF_HTTP_CONNECTION_LIMIT 1024u
#define RF_HTTP_MAX_TARGET       8192u
#define RF_HTTP_MAX_QUERY_PARAMS 256u
#define RF_HTTP_MAX_HEADER_BYTES 16384u
#define RF_HTTP_MAX_HEADERS      100u

struct rf_http_server;

/**
 * Start serving. Routes are copied by pointer: the array must outlive the server.
 * Unknown paths answer 404, a known path with the wrong method 405, both with a JSON error body;
 * bodies above max_body_bytes answer 413 before they are read in full, bodies beyond the shared
 * max_buffered_bytes budget 503 with Retry-After. A request (head and body) must arrive within
 * request_timeout_ms of the connection's opening or of the previous response, else the
 * connection is closed.
 * @return 0 and the server in *ret, or -errno (-EADDRINUSE, -EINVAL bad listen address) with a
 * message in err.
 */
int rf_http_start(const struct rf_http_options *o, const struct rf_http_route *routes,
		  size_t n_routes, struct rf_http_server **ret, char *err, size_t errlen);

/**
 * The route the server dispatches method and path to: the first in table order whose path is
 * equal (or, for a prefix route, a prefix of path) and whose method is equal, NULL (any), or GET
 * when method is HEAD. Without one, NULL with *ret_known telling a path served for other methods
 * (405; allow then lists them once each, GET routes adding HEAD: "GET, HEAD, DELETE", cut to
 * allow_len) from an unknown one (404). The server calls it with the path without the query.
 */
const struct rf_http_route *rf_http_route_find(const struct rf_http_route *routes, size_t n_routes,
					       const char *method, const char *path,
					       bool *ret_known, char *allow, size_t allow_len);

/** The bound port (useful with port 0). */
uint16_t rf_http_port(const struct rf_http_server *s);

/** Stop and free; accepts NULL. */
void rf_http_stop(struct rf_http_server *s);

/** A query-string argument of the request, or NULL. Borrowed for the request's lifetime. */
const char *rf_http_query(const struct rf_http_request *req, const char *key);

/** Reply with a JSON document (steals j; a NULL j means OOM and yields a 500). */
int rf_http_reply_json(struct rf_http_response *resp, int status, json_t *j);

/**
 * Reply with the JSON text in b, taking its memory (b is emptied). A buffer that failed to grow
 * (b->oom) yields the same 500 as rf_http_reply_json(NULL), and -ENOMEM.
 */
int rf_http_reply_strbuf(struct rf_http_response *resp, int status, struct rf_strbuf *b);

/** Reply with {"error": error, "detail": detail}. */
int rf_http_reply_error(struct rf_http_response *resp, int status, const char *error,
			const char *detail);

/** Reply with plain text (copied). */
int rf_http_reply_text(struct rf_http_response *resp, int status, const char *text);

/** Map a negative errno to an HTTP status: EINVAL 400, EMSGSIZE 413, ENOENT 404, ETIMEDOUT 504,
 * else 500. */
int rf_http_status_from_errno(int err);

#endif
