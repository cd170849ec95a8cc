/* The request head against the documented limits (RF_HTTP_MAX_*: JSON 414 and 431) and the
 * framing rules this server takes (RFC 9112 section 6), before routing. libmicrohttpd parses a
 * query string into records in the connection's memory pool before the application sees the
 * request, runs out of pool on a few hundred parameters and then never sends the 431 it decides
 * on (0.9.75): the URI callback sees the target first and empties an oversized query, so that our
 * 414 goes out instead. Runs on MHD's threads; no shared state. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <microhttpd.h>

#include "server/http/http-private.h"

/* MHD shows the request target here before it parses the query: the request's state starts
 * here, and a target over the limits is answered 414 at the first call. */
void *
rf_http_target_seen(void *cls, const char *uri, struct MHD_Connection *conn)
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
enum MHD_Result
rf_http_check_head(struct MHD_Connection *conn, struct req *r, const char *url, const char *method,
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
		rf_http_count_rejected("target");
		return rf_http_send_error(conn, r, method, url, MHD_HTTP_URI_TOO_LONG,
					  "request target too long", detail, NULL);
	}
	MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, h);
	if (h->count > RF_HTTP_MAX_HEADERS || h->bytes > RF_HTTP_MAX_HEADER_BYTES) {
		snprintf(detail, sizeof(detail),
			 "the request has %zu header fields of %zu bytes; at most %u fields and %u "
			 "bytes are accepted",
			 h->count, h->bytes, RF_HTTP_MAX_HEADERS, RF_HTTP_MAX_HEADER_BYTES);
		rf_http_count_rejected("headers");
		return rf_http_send_error(conn, r, method, url,
					  MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
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
		rf_http_count_rejected("framing");
		return rf_http_send_error(conn, r, method, url, status,
					  status == 400 ? "bad request framing"
							: "transfer encoding not implemented",
					  bad, NULL);
	}
	*done = false;
	return MHD_YES;
}
