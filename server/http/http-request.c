/* One request, from MHD's first call of the access handler to its completion (DESIGN section 4):
 * the head checks, the route and who may call it, the body, the handler, the answer and its
 * metrics. One `struct req` per request, allocated by the URI callback (http-head.c) or at the
 * first call, freed in the NOTIFY_COMPLETED callback on every path, including aborts and
 * timeouts. Runs on MHD's polling threads, so route handlers run concurrently; the route table is
 * read-only, metrics and logging lock internally. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "server/http/bufpool.h"
#include "server/http/http-private.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/http/tls.h"

void
rf_http_count_rejected(const char *reason)
{
	char l[64];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_HTTP_REJECTED_TOTAL, reason, NULL) >= 0)
		rf_metric_add(RF_METRIC_HTTP_REJECTED_TOTAL, l, 1);
}

static double
elapsed_s(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

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

/* Queue resp (taking its body) and destroy the MHD response at once. */
static enum MHD_Result
send_response(struct MHD_Connection *conn, struct req *r, const char *method, const char *url,
	      struct rf_http_response *resp, const char *hname, const char *hvalue)
{
	struct MHD_Response *mr;
	if (resp->body)
		mr = MHD_create_response_from_buffer_with_free_callback(resp->body_len, resp->body,
									rf_bufpool_put);
	else
		mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		rf_bufpool_put(resp->body);
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
	rf_http_conn_mark(r->srv, conn, true); /* answered: no arrival deadline until it is sent */
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

enum MHD_Result
rf_http_send_error(struct MHD_Connection *conn, struct req *r, const char *method, const char *url,
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

enum MHD_Result
rf_http_send_busy(struct MHD_Connection *conn, struct req *r, const char *method, const char *url)
{
	char detail[256];
	snprintf(detail, sizeof(detail),
		 "request bodies being received exceed server.maxBufferedBytes (%lld bytes); "
		 "retry later",
		 (long long)r->srv->max_buffered);
	rf_http_count_rejected("budget");
	return rf_http_send_error(conn, r, method, url, 503, "server busy", detail, NULL);
}

static enum MHD_Result
send_route_error(struct MHD_Connection *conn, struct req *r, const char *method, const char *url)
{
	struct rf_http_server *s = r->srv;
	char detail[2048];
	if (r->pending_status == 405) {
		snprintf(detail, sizeof(detail), "%s %s: allowed methods are %s", method, url,
			 r->allow);
		return rf_http_send_error(conn, r, method, url, 405, "method not allowed", detail,
					  r->allow);
	}
	snprintf(detail, sizeof(detail), "no route for %s %s; routes are: %s", method, url,
		 s->route_list);
	return rf_http_send_error(conn, r, method, url, 404, "not found", detail, NULL);
}

static enum MHD_Result
first_call(struct rf_http_server *s, struct MHD_Connection *conn, struct req *r, const char *url,
	   const char *method)
{
	bool known = false, done = false;
	unsigned long long cl_value = 0;
	bool have_cl = false;
	struct head h = { 0 };
	enum MHD_Result ret = rf_http_check_head(conn, r, url, method, &h, &done);
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
		return rf_http_send_error(conn, r, method, url, denied, "unauthorized", why, NULL);
	if (!have_cl)
		return MHD_YES;
	return rf_http_body_expect(s, conn, r, url, method, cl_value);
}

static enum MHD_Result
dispatch(struct rf_http_server *s, struct MHD_Connection *conn, struct req *r, const char *url,
	 const char *method)
{
	if (r->overflow) {
		char detail[256];
		snprintf(detail, sizeof(detail),
			 "the request body exceeds server.maxBodyBytes (%zu bytes)", s->max_body);
		return rf_http_send_error(conn, r, method, url, MHD_HTTP_CONTENT_TOO_LARGE,
					  "request body too large", detail, NULL);
	}
	if (r->over_budget)
		return rf_http_send_busy(conn, r, method, url);
	if (r->oom)
		return rf_http_send_error(conn, r, method, url, 500, "internal error",
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
	rf_http_body_release(r);
	rf_http_budget_release(r);
	if (rc != 0 || resp.status < 100 || resp.status > 599) {
		rf_bufpool_put(resp.body);
		char detail[256];
		if (rc != 0)
			snprintf(detail, sizeof(detail), "handler for %s %s failed: %s", method,
				 url, rc < 0 ? strerror(-rc) : "error");
		else
			snprintf(detail, sizeof(detail), "handler for %s %s set status %d", method,
				 url, resp.status);
		rf_error("request handler failed", "method", method, "path", url, "err", detail);
		return rf_http_send_error(conn, r, method, url, 500, "internal error", detail,
					  NULL);
	}
	return send_response(conn, r, method, url, &resp, NULL, NULL);
}

enum MHD_Result
rf_http_access_handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
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
		rf_http_body_append(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		if (r->discarded > RF_HTTP_DISCARD_MAX) {
			rf_warn("request body far above server.maxBodyBytes; closing connection",
				"method", method, "path", url);
			return MHD_NO;
		}
		return MHD_YES;
	}
	rf_http_conn_mark(s, conn, true); /* the handler's own time budget applies from here */
	return dispatch(s, conn, r, url, method);
}

void
rf_http_request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;
	rf_http_conn_mark(cls, conn, false);
	if (!r)
		return;
	if (!r->responded && toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		rf_v(1, "request cut off by server.requestTimeout before it was complete");
	rf_http_budget_release(r);
	rf_http_body_release(r);
	free(r);
	*con_cls = NULL;
}
