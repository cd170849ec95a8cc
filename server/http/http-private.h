/* Internals of the HTTP front shared by server/http/http*.c: the server, connection and request
 * structs, the limits' constants and the steps one file calls in another. Never included outside
 * server/http/.
 *
 * http.c          starting and stopping a server (the MHD daemon and its options)
 * http-listen.c   the listening socket from "host:port"
 * http-conns.c    connections and the arrival deadline (the reaper thread)
 * http-head.c     the request head against the documented limits and framing rules
 * http-body.c     request bodies: their size cap, buffers and the process-wide budget
 * http-request.c  one request from its first call to its answer (MHD's access handler)
 * http-route.c    the route table: matching, 404/405, the route list
 * http-reply.c    the replies handlers build (JSON, text, errors) and query arguments */
#ifndef RF_SERVER_HTTP_HTTP_PRIVATE_H
#define RF_SERVER_HTTP_HTTP_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <microhttpd.h>

#include "config/strbuf.h"
#include "server/http/http.h"

#define RF_HTTP_CONNECTION_MEMORY ((size_t)64 * 1024)
#define RF_HTTP_DISCARD_MAX       ((size_t)1024 * 1024)
#define RF_HTTP_INITIAL_BUFFER    ((size_t)16 * 1024)
#define RF_HTTP_FIRST_BUFFER_MAX  ((size_t)1024 * 1024)
#define RF_HTTP_BACKLOG           511
#define RF_HTTP_REAP_INTERVAL_MS  100
#define RF_HTTP_RETRY_AFTER       "1"

/* One connection, from MHD's STARTED notice to its CLOSED notice (under the server's lock). */
struct conn {
	struct conn *prev, *next;
	int fd;
	struct timespec since; /* when its current request began to be awaited */
	bool busy;             /* the request has arrived: handler or response under way */
	bool cut;              /* shut down by the reaper */
};

struct rf_http_server {
	struct MHD_Daemon *daemon;
	int listen_fd;
	uint16_t port;
	const struct rf_http_route *routes;
	size_t n_routes;
	size_t max_body;
	int64_t timeout_ms;
	char *route_list;   /* "GET /healthz, POST /filter, GET /debug/nodes/..." for 404 details */
	struct rf_tls *tls; /* borrowed; NULL = plain HTTP */
	struct rf_token *token;      /* borrowed */
	enum rf_http_access *access; /* per route; NULL = all open */
	int64_t max_buffered;        /* 0 = no budget */
	struct MHD_OptionItem limits[6];

	pthread_mutex_t lock; /* conns, stopping */
	pthread_cond_t wake;
	struct conn *conns;
	bool stopping;
	pthread_t reaper;
	bool reaper_started;
};

struct req {
	struct rf_http_server *srv;
	struct timespec start;
	const struct rf_http_route *route;
	struct rf_strbuf body; /* .max: max_body, or Content-Length when announced */
	size_t discarded;
	int pending_status; /* 404 or 405, answered once the (discarded) body has been read */
	char allow[128];    /* for 405 */
	long long reserved; /* bytes of the body budget this request holds */
	int head_status;    /* 414 decided by the URI callback, answered at the first call */
	size_t target_len, target_params;
	bool started; /* the access handler saw the request */
	bool responded;
	bool overflow;
	bool over_budget;
	bool oom;
};

/* What the request head holds, for the checks before routing. */
struct head {
	size_t count, bytes;
	size_t n_length;      /* Content-Length headers */
	const char *length;   /* the first */
	bool lengths_differ;  /* a later one has another value */
	const char *encoding; /* Transfer-Encoding */
};

/* http-listen.c: bind and listen on "host:port", "[v6]:port" or ":port" (any address, IPv6
 * with IPv4 when the host has it); the descriptor and its family, or -errno with err set. */
int rf_http_listen_on(const char *listen, int *ret_fd, int *ret_family, char *err, size_t errlen);

/* http-conns.c: MHD's connection notices (tracking, for the deadline), the reaper thread, and the
 * mark of a request that has arrived (busy) or been answered (awaited again from now). */
void rf_http_connection_notice(void *cls, struct MHD_Connection *conn, void **socket_context,
			       enum MHD_ConnectionNotificationCode code);
void *rf_http_reaper(void *arg);
void rf_http_conn_mark(struct rf_http_server *s, struct MHD_Connection *conn, bool busy);

/* http-head.c: the URI callback that starts a request's state and measures its target, and the
 * head checks at the first call: an answer now, or MHD_YES with *done false and *h filled. */
void *rf_http_target_seen(void *cls, const char *uri, struct MHD_Connection *conn);
enum MHD_Result rf_http_check_head(struct MHD_Connection *conn, struct req *r, const char *url,
				   const char *method, struct head *h, bool *done);

/* http-body.c: the process-wide body budget; a body announced by Content-Length (answered now
 * when it is too big or over the budget); body bytes as they arrive. */
bool rf_http_budget_take(struct rf_http_server *s, struct req *r, long long bytes);
void rf_http_budget_release(struct req *r);
enum MHD_Result rf_http_body_expect(struct rf_http_server *s, struct MHD_Connection *conn,
				    struct req *r, const char *url, const char *method,
				    unsigned long long n);
void rf_http_body_append(struct rf_http_server *s, struct req *r, const char *data, size_t n);
/* The body's buffer back to server/http/bufpool.h (or freed); the body is empty after. */
void rf_http_body_release(struct req *r);

/* http-request.c: MHD's access handler and completion callback, the error answers the checks
 * send, and the count of requests rejected by a limit (railfit_http_rejected_total). */
enum MHD_Result rf_http_access_handler(void *cls, struct MHD_Connection *conn, const char *url,
				       const char *method, const char *version,
				       const char *upload_data, size_t *upload_data_size,
				       void **con_cls);
void rf_http_request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			       enum MHD_RequestTerminationCode toe);
enum MHD_Result rf_http_send_error(struct MHD_Connection *conn, struct req *r, const char *method,
				   const char *url, int status, const char *error,
				   const char *detail, const char *allow);
enum MHD_Result rf_http_send_busy(struct MHD_Connection *conn, struct req *r, const char *method,
				  const char *url);
void rf_http_count_rejected(const char *reason);

/* http-route.c: "GET /healthz, POST /filter, GET /debug/nodes/..." (malloc'd), or NULL on OOM. */
char *rf_http_describe_routes(const struct rf_http_route *routes, size_t n);

#endif
