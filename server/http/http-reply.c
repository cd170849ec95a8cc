/* The replies route handlers build (DESIGN section 4, STYLE 3.5): JSON written the Go way, plain
 * text, the {"error", "detail"} body of every error, the errno to status mapping, and a request's
 * query arguments. No state; any thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "server/http/gojson.h"
#include "server/http/http.h"

/* A JSON body s (malloc'd, taken; NULL: out of memory, a 500 instead). */
static int
set_body(struct rf_http_response *resp, int status, char *s, size_t len)
{
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
rf_http_reply_json(struct rf_http_response *resp, int status, json_t *j)
{
	if (!j) {
		rf_http_reply_error(resp, 500, "internal error", "out of memory");
		return -ENOMEM;
	}
	size_t len = 0;
	char *s = rf_json_dump_go(j, &len);
	json_decref(j);
	return set_body(resp, status, s, len);
}

int
rf_http_reply_strbuf(struct rf_http_response *resp, int status, struct rf_strbuf *b)
{
	size_t len = b->len;
	return set_body(resp, status, rf_strbuf_steal(b), len);
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
