/* The HTTP front end on libmicrohttpd (DESIGN section 4, STYLE 3.4/3.5).
 *
 * Owns: the listening socket, the MHD daemon and one `struct req` per request (allocated on the
 * first access-handler call, freed in the NOTIFY_COMPLETED callback on every path, including
 * aborts and timeouts). Threads: MHD's internal polling threads (a pool of min(4, ncpu) by
 * default) run the access handler, so route handlers run concurrently; the route table is
 * read-only, metrics and logging lock internally. Shared state of this file: each server's list
 * of connections (under its lock, read by its reaper thread) and the process-wide count of
 * buffered body bytes (atomic).
 *
 * Request bodies are bounded by max_body_bytes: a Content-Length above it is answered 413 before
 * any body byte is read (MHD then refuses the body and closes the connection); chunked bodies keep
 * a running total, are discarded once over the cap (up to RF_HTTP_DISCARD_MAX more bytes, then the
 * connection is closed) and answered 413 at their end. A body is an rf_strbuf bounded by the cap
 * (and by Content-Length, when announced), so it grows geometrically and never past either.
 * Stalled clients are cut off by MHD's idle timeout (request_timeout_ms rounded up to seconds).
 * A client that trickles bytes never goes idle: a reaper thread shuts down every connection
 * whose request (head and body) has not arrived within request_timeout_ms of the connection's
 * opening or of its previous response (MHD's CLOSED notice comes before it closes the socket,
 * and both take the server's lock, so the reaper never touches a reused descriptor).
 *
 * Limits per client and in total: MHD's per-address and total connection limits; a budget for
 * the request bodies held at once, shared by every server of the process (a Content-Length is
 * reserved whole before the body is read, a chunked body as its buffer grows; beyond it 503 with
 * Retry-After); the request head is checked against RF_HTTP_MAX_* before routing (JSON 414 and
 * 431). libmicrohttpd parses a query string into records in the connection's memory pool before
 * the application sees the request, runs out of pool on a few hundred parameters and then never
 * sends the 431 it decides on (0.9.75): the URI callback sees the target first and empties an
 * oversized query, so that our 414 goes out instead. */
#include "server/http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/http/gojson.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/http/tls.h"

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

/* Bytes of request bodies held (or reserved) by every server of the process. */
static atomic_llong buffered_bytes;

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

static void
count_rejected(const char *reason)
{
	char l[64];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_HTTP_REJECTED_TOTAL, reason, NULL) >= 0)
		rf_metric_add(RF_METRIC_HTTP_REJECTED_TOTAL, l, 1);
}

/* Take bytes more of the body budget for r (all or nothing). */
static bool
budget_take(struct rf_http_server *s, struct req *r, long long bytes)
{
	long long cur = atomic_load(&buffered_bytes);
	do {
		if (s->max_buffered > 0 && cur + bytes > s->max_buffered)
			return false;
	} while (!atomic_compare_exchange_weak(&buffered_bytes, &cur, cur + bytes));
	r->reserved += bytes;
	return true;
}

static void
budget_release(struct req *r)
{
	if (r->reserved)
		atomic_fetch_sub(&buffered_bytes, r->reserved);
	r->reserved = 0;
}

static double
elapsed_s(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---------------------------------------------------------------------------------------------
 * Replies
 */

int
rf_http_reply_json(struct rf_http_response *resp, int status, json_t *j)
{
	if (!j) {
		rf_http_reply_error(resp, 500, "internal error", "out of memory");
		return -ENOMEM;
	}
	size_t len = 0;
	char *s = rf_json_dump_go(j, &len);
	json_decref(j);
	if (!s) {
		rf_http_reply_error(resp, 500, "internal error", "out of memory");
		return -ENOMEM;
	}
	free(resp->body);
	resp->status = status;
	resp->body = s;
	resp->body_len = len;
	resp->content_type = NULL;
	return 0;
}

int
rf_http_reply_strbuf(struct rf_http_response *resp, int status, struct rf_strbuf *b)
{
	size_t len = b->len;
	char *s = rf_strbuf_steal(b);
	if (!s) {
		rf_http_reply_error(resp, 500, "internal error", "out of memory");
		return -ENOMEM;
	}
	free(resp->body);
	resp->status = status;
	resp->body = s;
	resp->body_len = len;
	resp->content_type = NULL;
	return 0;
}

int
rf_http_reply_error(struct rf_http_response *resp, int status, const char *error,
		    const char *detail)
{
	free(resp->body);
	resp->body = NULL;
	resp->body_len = 0;
	resp->content_type = NULL;
	resp->status = status;
	/* Details can quote request paths, which need not be UTF-8: take the bytes unchecked and
	 * let the Go-style dumper turn invalid sequences into U+FFFD. */
	json_t *j = json_object();
	if (!j || json_object_set_new(j, "error", json_string_nocheck(error ? error : "")) ||
	    json_object_set_new(j, "detail", json_string_nocheck(detail ? detail : ""))) {
		json_decref(j);
		resp->status = 500;
		return -ENOMEM;
	}
	size_t len = 0;
	char *s = rf_json_dump_go(j, &len);
	json_decref(j);
	if (!s) {
		resp->status = 500;
		return -ENOMEM;
	}
	resp->body = s;
	resp->body_len = len;
	return 0;
}

int
rf_http_reply_text(struct rf_http_response *resp, int status, const char *text)
{
	size_t len = text ? strlen(text) : 0;
	char *s = malloc(len + 1);
	if (!s)
		return rf_http_reply_error(resp, 500, "internal error", "out of memory");
	if (len)
		memcpy(s, text, len);
	s[len] = '\0';
	free(resp->body);
	resp->status = status;
	resp->body = s;
	resp->body_len = len;
	resp->content_type = "text/plain; charset=utf-8";
	return 0;
}

int
rf_http_status_from_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return 200;
	case EINVAL:
		return 400;
	case EMSGSIZE:
		return 413;
	case ENOENT:
		return 404;
	case ETIMEDOUT:
		return 504;
	default:
		return 500;
	}
}

const char *
rf_http_query(const struct rf_http_request *req, const char *key)
{
	if (!req || !req->conn || !key)
		return NULL;
	return MHD_lookup_connection_value((struct MHD_Connection *)req->conn,
					   MHD_GET_ARGUMENT_KIND, key);
}

/* ---------------------------------------------------------------------------------------------
 * Request handling
 */

static const char *
verb_of(const struct rf_http_route *route)
{
	return route && route->metric_verb ? route->metric_verb : "other";
}

static void
count_request(const struct req *r, int status)
{
	char labels[256], code[16];
	const char *verb = verb_of(r->route);
	snprintf(code, sizeof(code), "%d", status);
	if (rf_metric_labels(labels, sizeof(labels), RF_METRIC_REQUESTS_TOTAL, verb, code, NULL) >=
	    0)
		rf_metric_add(RF_METRIC_REQUESTS_TOTAL, labels, 1);
	if (rf_metric_labels(labels, sizeof(labels), RF_METRIC_REQUEST_DURATION_SECONDS, verb,
			     NULL) >= 0)
		rf_metric_observe(RF_METRIC_REQUEST_DURATION_SECONDS, labels, elapsed_s(&r->start));
}

static void conn_mark(struct rf_http_server *s, struct MHD_Connection *conn, bool busy);

/* Queue resp (taking its body) and destroy the MHD response at once. */
static enum MHD_Result
send_response(struct MHD_Connection *conn, struct req *r, const char *method, const char *url,
	      struct rf_http_response *resp, const char *hname, const char *hvalue)
{
	struct MHD_Response *mr;
	if (resp->body)
		mr = MHD_create_response_from_buffer_with_free_callback(resp->body_len, resp->body,
									free);
	else
		mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		free(resp->body);
		resp->body = NULL;
		rf_error("cannot create response", "method", method, "path", url);
		return MHD_NO;
	}
	resp->body = NULL; /* owned by mr now */
	const char *ctype = resp->content_type ? resp->content_type : "application/json";
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (hname && hvalue)
		MHD_add_response_header(mr, hname, hvalue);
	count_request(r, resp->status);
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned int)resp->status, mr);
	MHD_destroy_response(mr);
	r->responded = true;
	conn_mark(r->srv, conn, true); /* answered: no arrival deadline until it is sent */
	if (rf_log_verbosity() >= 2) {
		char code[16], dur[32];
		snprintf(code, sizeof(code), "%d", resp->status);
		snprintf(dur, sizeof(dur), "%.6f", elapsed_s(&r->start));
		rf_v(2, "http request", "method", method, "path", url, "code", code, "seconds",
		     dur);
	}
	if (ret != MHD_YES)
		rf_warn("cannot queue response", "method", method, "path", url);
	return ret;
}

static enum MHD_Result
send_error(struct MHD_Connection *conn, struct req *r, const char *method, const char *url,
	   int status, const char *error, const char *detail, const char *allow)
{
	struct rf_http_response resp = { 0 };
	rf_http_reply_error(&resp, status, error, detail);
	if (status == 503)
		return send_response(conn, r, method, url, &resp, MHD_HTTP_HEADER_RETRY_AFTER,
				     RF_HTTP_RETRY_AFTER);
	return send_response(conn, r, method, url, &resp, allow ? MHD_HTTP_HEADER_ALLOW : NULL,
			     allow);
}

static enum MHD_Result
send_busy(struct MHD_Connection *conn, struct req *r, const char *method, const char *url)
{
	char detail[256];
	snprintf(detail, sizeof(detail),
		 "request bodies being received exceed server.maxBufferedBytes (%lld bytes); "
		 "retry later",
		 (long long)r->srv->max_buffered);
	count_rejected("budget");
	return send_error(conn, r, method, url, 503, "server busy", detail, NULL);
}

static bool
method_matches(const char *route_method, const char *method)
{
	if (!route_method)
		return true;
	if (strcmp(route_method, method) == 0)
		return true;
	/* HEAD is a GET without the body (MHD drops the body). */
	return strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0;
}

static bool
path_matches(const struct rf_http_route *rt, const char *path)
{
	if (!rt->path)
		return false;
	if (rt->prefix)
		return strncmp(path, rt->path, strlen(rt->path)) == 0;
	return strcmp(path, rt->path) == 0;
}

const struct rf_http_route *
rf_http_route_find(const struct rf_http_route *routes, size_t n_routes, const char *method,
		   const char *path, bool *ret_known, char *allow, size_t allow_len)
{
	bool known = false;
	size_t pos = 0;
	allow[0] = '\0';
	for (size_t i = 0; i < n_routes; i++) {
		const struct rf_http_route *rt = &routes[i];
		if (!path_matches(rt, path))
			continue;
		if (method_matches(rt->method, method))
			return rt;
		known = true;
		const char *m = rt->method;
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1) {
				if (strcmp(rt->method, "GET") != 0)
					break;
				m = "HEAD";
			}
			/* Skip methods already listed. */
			bool dup = false;
			for (const char *p = allow; (p = strstr(p, m)) != NULL; p += strlen(m)) {
				size_t ml = strlen(m);
				if ((p == allow || p[-1] == ' ') &&
				    (p[ml] == ',' || p[ml] == '\0')) {
					dup = true;
					break;
				}
			}
			if (dup)
				continue;
			int n = snprintf(allow + pos, allow_len - pos, "%s%s", pos ? ", " : "", m);
			if (n > 0 && (size_t)n < allow_len - pos)
				pos += (size_t)n;
		}
	}
	*ret_known = known;
	return NULL;
}

static enum MHD_Result
send_route_error(struct MHD_Connection *conn, struct req *r, const char *method, const char *url)
{
	struct rf_http_server *s = r->srv;
	char detail[2048];
	if (r->pending_status == 405) {
		snprintf(detail, sizeof(detail), "%s %s: allowed methods are %s", method, url,
			 r->allow);
		return send_error(conn, r, method, url, 405, "method not allowed", detail,
				  r->allow);
	}
	snprintf(detail, sizeof(detail), "no route for %s %s; routes are: %s", method, url,
		 s->route_list);
	return send_error(conn, r, method, url, 404, "not found", detail, NULL);
}

/* What the request head holds, for the checks before routing. */
struct head {
	size_t count, bytes;
	size_t n_length;      /* Content-Length headers */
	const char *length;   /* the first */
	bool lengths_differ;  /* a later one has another value */
	const char *encoding; /* Transfer-Encoding */
};

static enum MHD_Result
scan_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct head *h = cls;
	h->count++;
	h->bytes += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " and CRLF */
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		if (h->n_length++ == 0)
			h->length = value;
		else if (strcmp(value ? value : "", h->length ? h->length : "") != 0)
			h->lengths_differ = true;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) && !h->encoding) {
		h->encoding = value ? value : "";
	}
	return MHD_YES;
}

/* The request head against the documented limits and the framing rules this server takes
 * (RFC 9112 section 6): an answer now, or MHD_YES with *done false. */
static enum MHD_Result
check_head(struct MHD_Connection *conn, struct req *r, const char *url, const char *method,
	   struct head *h, bool *done)
{
	char detail[512];
	*done = true;
	if (r->head_status == 414) {
		snprintf(detail, sizeof(detail),
			 "the request target has %zu bytes and %zu query parameters; at most %u "
			 "bytes and %u parameters are accepted",
			 r->target_len, r->target_params, RF_HTTP_MAX_TARGET,
			 RF_HTTP_MAX_QUERY_PARAMS);
		count_rejected("target");
		return send_error(conn, r, method, url, MHD_HTTP_URI_TOO_LONG,
				  "request target too long", detail, NULL);
	}
	MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, h);
	if (h->count > RF_HTTP_MAX_HEADERS || h->bytes > RF_HTTP_MAX_HEADER_BYTES) {
		snprintf(detail, sizeof(detail),
			 "the request has %zu header fields of %zu bytes; at most %u fields and %u "
			 "bytes are accepted",
			 h->count, h->bytes, RF_HTTP_MAX_HEADERS, RF_HTTP_MAX_HEADER_BYTES);
		count_rejected("headers");
		return send_error(conn, r, method, url, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
				  "request header fields too large", detail, NULL);
	}
	const char *bad = NULL;
	int status = 400;
	if (h->lengths_differ)
		bad = "the request has Content-Length headers with different values";
	else if (h->encoding && h->n_length)
		bad = "the request has both Transfer-Encoding and Content-Length";
	else if (h->encoding && strcasecmp(h->encoding, "chunked") != 0) {
		snprintf(detail, sizeof(detail),
			 "Transfer-Encoding \"%.200s\" is not supported; expected \"chunked\" or a "
			 "Content-Length",
			 h->encoding);
		bad = detail;
		status = MHD_HTTP_NOT_IMPLEMENTED;
	}
	if (bad) {
		count_rejected("framing");
		return send_error(conn, r, method, url, status,
				  status == 400 ? "bad request framing" : "not implemented", bad,
				  NULL);
	}
	*done = false;
	return MHD_YES;
}

static enum MHD_Result
first_call(struct rf_http_server *s, struct MHD_Connection *conn, struct req *r, const char *url,
	   const char *method)
{
	bool known = false, done = false;
	unsigned long long cl_value = 0;
	bool have_cl = false;
	struct head h = { 0 };
	enum MHD_Result ret = check_head(conn, r, url, method, &h, &done);
	if (done)
		return ret;
	const char *cl = h.length;
	if (cl) {
		char *end = NULL;
		errno = 0;
		cl_value = strtoull(cl, &end, 10);
		have_cl = end && end != cl && *end == '\0' && errno == 0 && cl[0] != '-';
	}
	r->route = rf_http_route_find(s->routes, s->n_routes, method, url, &known, r->allow,
				      sizeof(r->allow));
	if (!r->route) {
		r->pending_status = known ? 405 : 404;
		/* Answer after the body so the connection stays usable, unless the body is big or
		 * of unknown size: then answer now, and MHD refuses the body and closes the
		 * connection. */
		if ((have_cl && cl_value > RF_HTTP_DISCARD_MAX) || h.encoding)
			return send_route_error(conn, r, method, url);
		return MHD_YES;
	}
	char why[256];
	int denied = rf_http_access_check(
		s->access ? s->access[r->route - s->routes] : RF_HTTP_OPEN,
		rf_tls_wants_client_cert(s->tls), rf_tls_peer_verified(conn), s->token,
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
		why, sizeof(why));
	if (denied)
		return send_error(conn, r, method, url, denied, "unauthorized", why, NULL);
	if (have_cl) {
		unsigned long long n = cl_value;
		if (n > s->max_body) {
			char detail[256];
			snprintf(detail, sizeof(detail),
				 "Content-Length %llu exceeds server.maxBodyBytes (%zu bytes)", n,
				 s->max_body);
			return send_error(conn, r, method, url, MHD_HTTP_CONTENT_TOO_LARGE,
					  "request body too large", detail, NULL);
		}
		if (n > 0 && !budget_take(s, r, (long long)n + 1))
			return send_busy(conn, r, method, url);
		if (n > 0) {
			/* Buffers grow with the bytes that really arrive (a client announcing a big
			 * body and sending nothing costs little), but never past the announced
			 * size; a wrong Content-Length is MHD's to reject. A first buffer that
			 * cannot be had is tried again with the first bytes. */
			size_t first = (size_t)n + 1;
			if (first > RF_HTTP_FIRST_BUFFER_MAX)
				first = RF_HTTP_FIRST_BUFFER_MAX;
			r->body.max = (size_t)n;
			rf_strbuf_reserve(&r->body, first - 1);
			if (r->body.oom)
				r->body = (struct rf_strbuf){ .max = (size_t)n };
		}
	}
	return MHD_YES;
}

/* Append body bytes: the buffer starts at RF_HTTP_INITIAL_BUFFER (or at the size first_call()
 * gave it) and doubles, never past its max + 1 (room for the NUL). */
static void
append_body(struct rf_http_server *s, struct req *r, const char *data, size_t n)
{
	if (r->overflow || r->oom || r->over_budget) {
		r->discarded += n;
		return;
	}
	if (n > s->max_body - r->body.len) {
		r->overflow = true;
		r->discarded += n;
		rf_strbuf_release(&r->body);
		return;
	}
	if (!r->body.cap) {
		if (!r->body.max)
			r->body.max = s->max_body;
		size_t first = RF_HTTP_INITIAL_BUFFER - 1;
		rf_strbuf_reserve(&r->body, first < r->body.max ? first : r->body.max);
	}
	rf_strbuf_putn(&r->body, data, n);
	if (r->body.oom) {
		r->oom = true;
		r->discarded += n;
		rf_strbuf_release(&r->body);
		return;
	}
	/* A chunked body holds the budget as its buffer grows (a Content-Length reserved it
	 * whole); past the budget it is discarded and answered 503. */
	if ((long long)r->body.cap > r->reserved &&
	    !budget_take(s, r, (long long)r->body.cap - r->reserved)) {
		r->over_budget = true;
		r->discarded += r->body.len;
		rf_strbuf_release(&r->body);
		budget_release(r);
	}
}

static enum MHD_Result
dispatch(struct rf_http_server *s, struct MHD_Connection *conn, struct req *r, const char *url,
	 const char *method)
{
	if (r->overflow) {
		char detail[256];
		snprintf(detail, sizeof(detail),
			 "the request body exceeds server.maxBodyBytes (%zu bytes)", s->max_body);
		return send_error(conn, r, method, url, MHD_HTTP_CONTENT_TOO_LARGE,
				  "request body too large", detail, NULL);
	}
	if (r->over_budget)
		return send_busy(conn, r, method, url);
	if (r->oom)
		return send_error(conn, r, method, url, 500, "internal error",
				  "out of memory while reading the request body", NULL);
	const struct rf_http_route *rt = r->route;
	struct rf_http_request hreq = {
		.method = method,
		.path = url,
		.subpath = rt->prefix ? url + strlen(rt->path) : "",
		.body = r->body.len ? r->body.s : "",
		.body_len = r->body.len,
		.conn = conn,
	};
	struct rf_http_response resp = { .status = 200 };
	int rc = rt->fn(rt->userdata, &hreq, &resp);
	/* the handler is done with the body: its memory and its share of the budget go now, not
	 * once the client has read the answer (a client that reads slowly holds no budget) */
	rf_strbuf_release(&r->body);
	budget_release(r);
	if (rc != 0 || resp.status < 100 || resp.status > 599) {
		free(resp.body);
		char detail[256];
		if (rc != 0)
			snprintf(detail, sizeof(detail), "handler for %s %s failed: %s", method,
				 url, rc < 0 ? strerror(-rc) : "error");
		else
			snprintf(detail, sizeof(detail), "handler for %s %s set status %d", method,
				 url, resp.status);
		rf_error("request handler failed", "method", method, "path", url, "err", detail);
		return send_error(conn, r, method, url, 500, "internal error", detail, NULL);
	}
	return send_response(conn, r, method, url, &resp, NULL, NULL);
}

/* ---------------------------------------------------------------------------------------------
 * Connections and their deadline
 */

static struct conn *
conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The request on conn has arrived (busy) or been answered (a new one is awaited from now). */
static void
conn_mark(struct rf_http_server *s, struct MHD_Connection *conn, bool busy)
{
	struct conn *c = conn_of(conn);
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	c->busy = busy;
	if (!busy)
		clock_gettime(CLOCK_MONOTONIC, &c->since);
	pthread_mutex_unlock(&s->lock);
}

static void
connection_notice(void *cls, struct MHD_Connection *conn, void **socket_context,
		  enum MHD_ConnectionNotificationCode code)
{
	struct rf_http_server *s = cls;
	struct conn *c = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(c = calloc(1, sizeof(*c))))
			return; /* untracked: only the idle timeout applies */
		c->fd = ci->connect_fd;
		clock_gettime(CLOCK_MONOTONIC, &c->since);
		pthread_mutex_lock(&s->lock);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&s->lock);
	free(c);
	*socket_context = NULL;
}

/* Shuts down connections whose request is overdue; MHD then sees the end of the stream and
 * closes them (its CLOSED notice waits for the lock held here). */
static void *
reaper(void *arg)
{
	struct rf_http_server *s = arg;
	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct timespec now, until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += RF_HTTP_REAP_INTERVAL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
		clock_gettime(CLOCK_MONOTONIC, &now);
		unsigned cut = 0;
		for (struct conn *c = s->conns; c; c = c->next) {
			double age = (double)(now.tv_sec - c->since.tv_sec) * 1000.0 +
				     (double)(now.tv_nsec - c->since.tv_nsec) / 1e6;
			if (c->busy || c->cut || age <= (double)s->timeout_ms)
				continue;
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			cut++;
		}
		if (cut) {
			pthread_mutex_unlock(&s->lock);
			char n[16];
			snprintf(n, sizeof(n), "%u", cut);
			rf_v(1,
			     "closed connections whose request did not arrive within "
			     "server.requestTimeout",
			     "connections", n);
			for (unsigned i = 0; i < cut; i++)
				count_rejected("deadline");
			pthread_mutex_lock(&s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* MHD shows the request target here before it parses the query: the request's state starts
 * here, and a target over the limits is answered 414 at the first call. */
static void *
target_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct rf_http_server *s = cls;
	struct req *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->srv = s;
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	if (!uri)
		return r;
	/* MHD hands over its own (writable) copy of the line. */
	char *q = strchr(uri, '?');
	r->target_len = strlen(uri);
	if (q) {
		r->target_params = 1;
		for (const char *p = q + 1; *p; p++)
			r->target_params += *p == '&';
	}
	if (r->target_len > RF_HTTP_MAX_TARGET || r->target_params > RF_HTTP_MAX_QUERY_PARAMS) {
		r->head_status = 414;
		if (q)
			q[1] = '\0'; /* MHD parses what follows the '?' into pool records */
	}
	return r;
}

static enum MHD_Result
access_handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	       const char *version, const char *upload_data, size_t *upload_data_size,
	       void **con_cls)
{
	struct rf_http_server *s = cls;
	struct req *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->srv = s;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		*con_cls = r;
	}
	if (!r->started) {
		r->started = true;
		return first_call(s, conn, r, url, method);
	}
	if (r->responded) {
		/* Answered early (404/405/413); MHD refuses the rest of the body. */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0 && r->pending_status) {
		r->discarded += *upload_data_size;
		*upload_data_size = 0;
		return r->discarded > RF_HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (r->pending_status)
		return send_route_error(conn, r, method, url);
	if (*upload_data_size > 0) {
		if (s->timeout_ms > 0 && elapsed_s(&r->start) * 1000.0 > (double)s->timeout_ms) {
			rf_warn("request body not received within server.requestTimeout; closing "
				"connection",
				"method", method, "path", url);
			return MHD_NO;
		}
		append_body(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		if (r->discarded > RF_HTTP_DISCARD_MAX) {
			rf_warn("request body far above server.maxBodyBytes; closing connection",
				"method", method, "path", url);
			return MHD_NO;
		}
		return MHD_YES;
	}
	conn_mark(s, conn, true); /* the handler's own time budget applies from here */
	return dispatch(s, conn, r, url, method);
}

static void
request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		  enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;
	conn_mark(cls, conn, false);
	if (!r)
		return;
	if (!r->responded && toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		rf_v(1, "request cut off by server.requestTimeout before it was complete");
	budget_release(r);
	rf_strbuf_release(&r->body);
	free(r);
	*con_cls = NULL;
}

__attribute__((format(printf, 2, 0))) static void
mhd_logger(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	rf_warn(msg, "component", "libmicrohttpd");
}

/* ---------------------------------------------------------------------------------------------
 * Listening
 */

/* Split "host:port", "[v6]:port" or ":port" into host (may be "") and port. */
static int
split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
	if (!listen || !*listen)
		return -EINVAL;
	const char *colon;
	const char *h;
	size_t hl;
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = listen + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
		if (hl == 0)
			return -EINVAL;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -EINVAL;
		h = listen;
		hl = (size_t)(colon - listen);
		if (memchr(h, ':', hl)) /* a bare IPv6 address needs brackets */
			return -EINVAL;
	}
	const char *p = colon + 1;
	size_t pl = strlen(p);
	if (pl == 0 || pl >= portlen || hl >= hostlen)
		return -EINVAL;
	for (size_t i = 0; i < pl; i++)
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
	char *end;
	unsigned long v = strtoul(p, &end, 10);
	if (*end || v > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, p, pl + 1);
	return 0;
}

static int
open_listener(const struct addrinfo *ai, bool dual_stack)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, RF_HTTP_BACKLOG) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int
listen_on(const char *listen, int *ret_fd, int *ret_family, char *err, size_t errlen)
{
	char host[256], port[16];
	if (split_listen(listen, host, sizeof(host), port, sizeof(port)) < 0) {
		snprintf(err, errlen,
			 "invalid listen address \"%s\": expected host:port, [ipv6]:port or :port",
			 listen ? listen : "");
		return -EINVAL;
	}
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	bool any = host[0] == '\0';
	if (any)
		hints.ai_family = AF_INET6;
	int gai = getaddrinfo(any ? NULL : host, port, &hints, &res);
	if (gai != 0 && any) {
		hints.ai_family = AF_INET;
		gai = getaddrinfo(NULL, port, &hints, &res);
	}
	if (gai != 0) {
		snprintf(err, errlen, "invalid listen address \"%s\": %s", listen,
			 gai_strerror(gai));
		return -EINVAL;
	}
	int fd = -EADDRNOTAVAIL;
	int family = AF_UNSPEC;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = open_listener(ai, any);
		if (fd >= 0) {
			family = ai->ai_family;
			break;
		}
	}
	freeaddrinfo(res);
	if (fd < 0 && any) {
		/* No IPv6 on this host: all IPv4 interfaces. */
		struct addrinfo h4 = { .ai_family = AF_INET,
				       .ai_socktype = SOCK_STREAM,
				       .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
		if (getaddrinfo(NULL, port, &h4, &res) == 0) {
			for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
				fd = open_listener(ai, false);
				if (fd >= 0) {
					family = ai->ai_family;
					break;
				}
			}
			freeaddrinfo(res);
		}
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on \"%s\": %s", listen, strerror(-fd));
		return fd;
	}
	*ret_fd = fd;
	*ret_family = family;
	return 0;
}

/* "GET /healthz, POST /filter, GET /debug/nodes/..." (malloc'd), or NULL on OOM. */
static char *
describe_routes(const struct rf_http_route *routes, size_t n)
{
	struct rf_strbuf b = { 0 };
	for (size_t i = 0; i < n; i++)
		rf_strbuf_printf(&b, "%s%s %s%s", i ? ", " : "",
				 routes[i].method ? routes[i].method : "*",
				 routes[i].path ? routes[i].path : "", routes[i].prefix ? "*" : "");
	return rf_strbuf_steal(&b);
}

static void
free_server(struct rf_http_server *s)
{
	/* MHD sent a CLOSED notice for every connection it started */
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s->route_list);
	free(s->access);
	free(s);
}

/* The options this file adds to MHD's (an MHD_OPTION_ARRAY, so that the daemon's argument list
 * stays as it was): connection tracking, the target check, the per-address limit. */
static void
set_limits(struct rf_http_server *s, const struct rf_http_options *o)
{
	size_t i = 0;
	s->limits[i++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
						  (intptr_t)connection_notice, s };
	s->limits[i++] =
		(struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)target_seen, s };
	if (o->max_per_address)
		s->limits[i++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
							  (intptr_t)o->max_per_address, NULL };
	s->limits[i] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

int
rf_http_start(const struct rf_http_options *o, const struct rf_http_route *routes, size_t n_routes,
	      struct rf_http_server **ret, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!o || (!routes && n_routes > 0) || !ret) {
		snprintf(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	if (o->max_body_bytes < 0) {
		snprintf(err, errlen, "server.maxBodyBytes: expected a size >= 0");
		return -EINVAL;
	}
	for (size_t i = 0; i < n_routes; i++) {
		if (!routes[i].path || !routes[i].fn) {
			snprintf(err, errlen, "route %zu: path and handler are required", i);
			return -EINVAL;
		}
	}
	struct rf_http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->listen_fd = -1;
	s->routes = routes;
	s->n_routes = n_routes;
	s->max_body = (uint64_t)o->max_body_bytes > SIZE_MAX - 1 ? SIZE_MAX - 1
								 : (size_t)o->max_body_bytes;
	s->timeout_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 1000;
	s->max_buffered = o->max_buffered_bytes > 0 ? o->max_buffered_bytes : 0;
	s->tls = o->tls;
	s->token = o->token;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (o->access && n_routes && (s->access = malloc(n_routes * sizeof(*s->access))))
		memcpy(s->access, o->access, n_routes * sizeof(*s->access));
	if (o->access && n_routes && !s->access) {
		free_server(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->route_list = describe_routes(routes, n_routes);
	if (!s->route_list) {
		free_server(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}

	int family = AF_UNSPEC;
	int r = listen_on(o->listen, &s->listen_fd, &family, err, errlen);
	if (r < 0) {
		free_server(s);
		return r;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(s->listen_fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			s->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			s->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}

	unsigned threads = o->threads;
	if (threads == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		threads = ncpu < 1 ? 1 : ncpu > 4 ? 4 : (unsigned)ncpu;
	}
	int64_t tmo_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 1000;
	int64_t tmo_s64 = (tmo_ms + 999) / 1000;
	unsigned int tmo_s = tmo_s64 < 1 ? 1u : tmo_s64 > 86400 ? 86400u : (unsigned int)tmo_s64;

	unsigned int conn_limit =
		o->max_connections ? o->max_connections : RF_HTTP_CONNECTION_LIMIT;
	set_limits(s, o);

	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	if (family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* HTTPS: the certificate callback and its friends (tls.c) */
	static const struct MHD_OptionItem no_tls[] = { { MHD_OPTION_END, 0, NULL } };
	const struct MHD_OptionItem *tls_opts = no_tls;
	if (o->tls) {
		flags |= MHD_USE_TLS;
		tls_opts = rf_tls_mhd_options(o->tls);
	}

	if (threads > 1)
		s->daemon = MHD_start_daemon(
			flags, 0, NULL, NULL, access_handler, s, MHD_OPTION_EXTERNAL_LOGGER,
			mhd_logger, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd,
			MHD_OPTION_CONNECTION_TIMEOUT, tmo_s, MHD_OPTION_CONNECTION_LIMIT,
			conn_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT, RF_HTTP_CONNECTION_MEMORY,
			MHD_OPTION_NOTIFY_COMPLETED, request_completed, s,
			MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads, MHD_OPTION_ARRAY,
			s->limits, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	else
		s->daemon = MHD_start_daemon(
			flags, 0, NULL, NULL, access_handler, s, MHD_OPTION_EXTERNAL_LOGGER,
			mhd_logger, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd,
			MHD_OPTION_CONNECTION_TIMEOUT, tmo_s, MHD_OPTION_CONNECTION_LIMIT,
			conn_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT, RF_HTTP_CONNECTION_MEMORY,
			MHD_OPTION_NOTIFY_COMPLETED, request_completed, s, MHD_OPTION_ARRAY,
			s->limits, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server on \"%s\" (libmicrohttpd)",
			 o->listen);
		close(s->listen_fd);
		free_server(s);
		return -EIO;
	}
	int e = pthread_create(&s->reaper, NULL, reaper, s);
	if (e) {
		snprintf(err, errlen, "cannot start the HTTP server's reaper thread: %s",
			 strerror(e));
		rf_http_stop(s);
		return -e;
	}
	s->reaper_started = true;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (di && di->port)
		s->port = di->port;
	*ret = s;
	return 0;
}

uint16_t
rf_http_port(const struct rf_http_server *s)
{
	return s ? s->port : 0;
}

void
rf_http_stop(struct rf_http_server *s)
{
	if (!s)
		return;
	if (s->reaper_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reaper, NULL);
	}
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	/* MHD closes a listen socket it was given along with the daemon. */
	free_server(s);
}
