/* The HTTP front end against real sockets: the server on 127.0.0.1:0 with a few test routes,
 * driven by libcurl (and raw sockets for misbehaving clients): routing, 404/405, bodies up to and
 * over the cap (Content-Length and chunked), keep-alive, slow and stalled clients, concurrency,
 * metrics, listen-address parsing. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "server/http/bufpool.h"
#include "server/http/http.h"
#include "server/http/log.h"
#include "server/http/metrics.h"

/* ---------------------------------------------------------------------------------------------
 * Test routes
 */

static int
h_healthz(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_json(resp, 200, json_pack("{s:b}", "ok", 1));
}

/* Echo: the body's length and a checksum, plus the first bytes. */
static int
h_echo(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	unsigned long long sum = 0;
	for (size_t i = 0; i < req->body_len; i++)
		sum = sum * 31 + (unsigned char)req->body[i];
	if (req->body[req->body_len] != '\0')
		return rf_http_reply_error(resp, 500, "not terminated", "");
	char head[33];
	size_t n = req->body_len < 32 ? req->body_len : 32;
	memcpy(head, req->body, n);
	head[n] = '\0';
	return rf_http_reply_json(resp, 200,
				  json_pack("{s:I,s:I,s:s%}", "len", (json_int_t)req->body_len,
					    "sum", (json_int_t)(sum & 0x7fffffffffffffffULL),
					    "head", head, n));
}

static int
h_query(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	const char *o = rf_http_query(req, "o");
	const char *missing = rf_http_query(req, "missing");
	return rf_http_reply_json(resp, 200,
				  json_pack("{s:s?,s:b}", "o", o, "missing", missing != NULL));
}

static int
h_items(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_json(resp, 200,
				  json_pack("{s:s,s:s,s:s}", "path", req->path, "subpath",
					    req->subpath, "method", req->method));
}

static int
h_fail(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	/* A body set before failing must not leak. */
	rf_http_reply_text(resp, 200, "partial");
	return -EIO;
}

static int
h_badstatus(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	resp->status = 0;
	return 0;
}

static int
h_text(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_text(resp, 200, "hello\n");
}

static int
h_empty(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	resp->status = 204;
	return 0;
}

static int
h_slow(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return rf_http_reply_json(resp, 200, json_pack("{s:s}", "slow", "done"));
}

static int
h_any(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_json(resp, 202, json_pack("{s:s}", "method", req->method));
}

static int
h_oom(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_json(resp, 200, NULL);
}

static const struct rf_http_route routes[] = {
	{ "GET", "/healthz", false, NULL, h_healthz, NULL },
	{ "POST", "/echo", false, "echo", h_echo, NULL },
	{ "PUT", "/echo", false, "echo", h_echo, NULL },
	{ "GET", "/q", false, NULL, h_query, NULL },
	{ "GET", "/items/", true, NULL, h_items, NULL },
	{ "DELETE", "/items/", true, NULL, h_items, NULL },
	{ "POST", "/fail", false, "fail", h_fail, NULL },
	{ "GET", "/badstatus", false, NULL, h_badstatus, NULL },
	{ "GET", "/text", false, NULL, h_text, NULL },
	{ "GET", "/empty", false, NULL, h_empty, NULL },
	{ "GET", "/slow", false, "slow", h_slow, NULL },
	{ NULL, "/any", false, NULL, h_any, NULL },
	{ "GET", "/oom", false, NULL, h_oom, NULL },
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

#define SMALL_MAX 1024

static struct rf_http_server *
start_server(int64_t max_body, int64_t timeout_ms, unsigned threads)
{
	struct rf_http_options o = {
		.listen = "127.0.0.1:0",
		.max_body_bytes = max_body,
		.request_timeout_ms = timeout_ms,
		.threads = threads,
	};
	struct rf_http_server *s = NULL;
	char err[256] = "";
	int r = rf_http_start(&o, routes, N_ROUTES, &s, err, sizeof(err));
	ck_assert_msg(r == 0, "rf_http_start: %d %s", r, err);
	ck_assert_uint_ne(rf_http_port(s), 0);
	return s;
}

/* ---------------------------------------------------------------------------------------------
 * libcurl client
 */

struct buf {
	char *p;
	size_t len;
};

static size_t
on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t n = size * nmemb;
	char *np = realloc(b->p, b->len + n + 1);
	if (!np)
		return 0;
	memcpy(np + b->len, data, n);
	b->p = np;
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

struct reply {
	long status;
	struct buf body;
	struct buf headers;
	long new_connects;
	CURLcode rc;
};

static void
reply_free(struct reply *r)
{
	free(r->body.p);
	free(r->headers.p);
	*r = (struct reply){ 0 };
}

/* Chunked upload source. */
struct src {
	const char *p;
	size_t len, pos;
};

static size_t
on_read(char *dst, size_t size, size_t nmemb, void *ud)
{
	struct src *s = ud;
	size_t n = size * nmemb;
	if (n > 1000)
		n = 1000; /* many small chunks */
	if (n > s->len - s->pos)
		n = s->len - s->pos;
	memcpy(dst, s->p + s->pos, n);
	s->pos += n;
	return n;
}

enum body_mode { BODY_LENGTH, BODY_CHUNKED };

static void
request(CURL *c, uint16_t port, const char *method, const char *path, const char *body,
	size_t body_len, enum body_mode mode, bool expect_100, struct reply *ret)
{
	char url[512];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	*ret = (struct reply){ 0 };
	bool own = c == NULL;
	if (own)
		c = curl_easy_init();
	ck_assert_ptr_nonnull(c);
	struct curl_slist *hdrs = NULL;
	struct src src = { body, body_len, 0 };
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &ret->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &ret->headers);
	if (strcmp(method, "HEAD") != 0 && strcmp(method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	} else {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c, CURLOPT_NOBODY, strcmp(method, "HEAD") == 0 ? 1L : 0L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		if (mode == BODY_CHUNKED) {
			curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
			curl_easy_setopt(c, CURLOPT_READDATA, &src);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
			hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
		} else {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		}
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	}
	hdrs = curl_slist_append(hdrs, expect_100 ? "Expect: 100-continue" : "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	ret->rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
	curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &ret->new_connects);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (own)
		curl_easy_cleanup(c);
	if (!ret->body.p)
		ret->body.p = calloc(1, 1);
	if (!ret->headers.p)
		ret->headers.p = calloc(1, 1);
}

static json_t *
body_json(const struct reply *r)
{
	json_error_t e;
	json_t *j = json_loads(r->body.p, 0, &e);
	ck_assert_msg(j != NULL, "not JSON: %s (%s)", r->body.p, e.text);
	return j;
}

/* Value of a response header (case-insensitive name), copied into out. */
static bool
header(const struct reply *r, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	for (const char *p = r->headers.p; p && *p;) {
		const char *eol = strstr(p, "\r\n");
		if (!eol)
			break;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ')
				v++;
			size_t vl = (size_t)(eol - v);
			if (vl >= outlen)
				vl = outlen - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return true;
		}
		p = eol + 2;
	}
	return false;
}

static void
assert_error_body(const struct reply *r, const char *error, const char *detail_part)
{
	json_t *j = body_json(r);
	const char *e = json_string_value(json_object_get(j, "error"));
	const char *d = json_string_value(json_object_get(j, "detail"));
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(e, error);
	ck_assert_msg(strstr(d, detail_part) != NULL, "detail \"%s\" lacks \"%s\"", d, detail_part);
	char ct[128];
	ck_assert(header(r, "Content-Type", ct, sizeof(ct)));
	ck_assert_str_eq(ct, "application/json");
	json_decref(j);
}

static void
setup(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rf_metrics_reset();
	rf_metrics_declare_railfit("test", "test");
}

static void
teardown(void)
{
	rf_metrics_reset();
	curl_global_cleanup();
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 */

START_TEST(test_http_routes)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 0);
	uint16_t port = rf_http_port(s);
	struct reply r;
	char v[256];

	request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.rc, CURLE_OK);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p, "{\"ok\":true}");
	ck_assert(header(&r, "Content-Type", v, sizeof(v)));
	ck_assert_str_eq(v, "application/json");
	ck_assert(header(&r, "Content-Length", v, sizeof(v)));
	ck_assert_str_eq(v, "11");
	reply_free(&r);

	/* HEAD is served by GET routes, without a body. */
	request(NULL, port, "HEAD", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p, "");
	reply_free(&r);

	/* Query strings are not part of the path. */
	request(NULL, port, "GET", "/q?o=table&x=1", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p, "{\"o\":\"table\",\"missing\":false}");
	reply_free(&r);
	request(NULL, port, "GET", "/q", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_str_eq(r.body.p, "{\"o\":null,\"missing\":false}");
	reply_free(&r);

	/* Prefix routes get the rest of the path. */
	request(NULL, port, "GET", "/items/ns/pod-1", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(
		r.body.p,
		"{\"path\":\"/items/ns/pod-1\",\"subpath\":\"ns/pod-1\",\"method\":\"GET\"}");
	reply_free(&r);
	request(NULL, port, "DELETE", "/items/x", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p,
			 "{\"path\":\"/items/x\",\"subpath\":\"x\",\"method\":\"DELETE\"}");
	reply_free(&r);

	/* Text replies and empty bodies. */
	request(NULL, port, "GET", "/text", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p, "hello\n");
	ck_assert(header(&r, "Content-Type", v, sizeof(v)));
	ck_assert_str_eq(v, "text/plain; charset=utf-8");
	reply_free(&r);
	request(NULL, port, "GET", "/empty", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 204);
	ck_assert_str_eq(r.body.p, "");
	reply_free(&r);

	/* A route without a method takes any method. */
	request(NULL, port, "PATCH", "/any", "{}", 2, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 202);
	ck_assert_str_eq(r.body.p, "{\"method\":\"PATCH\"}");
	reply_free(&r);

	/* Echo of a small body, NUL-terminated for the handler. */
	request(NULL, port, "POST", "/echo", "{\"a\":1}", 7, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	json_t *j = body_json(&r);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "len")), 7);
	ck_assert_str_eq(json_string_value(json_object_get(j, "head")), "{\"a\":1}");
	json_decref(j);
	reply_free(&r);
	/* An empty POST body reaches the handler as "". */
	request(NULL, port, "POST", "/echo", "", 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body.p, "{\"len\":0,\"sum\":0,\"head\":\"\"}");
	reply_free(&r);
	rf_http_stop(s);
}
END_TEST

START_TEST(test_http_not_found_and_method)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 2);
	uint16_t port = rf_http_port(s);
	struct reply r;
	char v[256];

	request(NULL, port, "GET", "/nope", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	assert_error_body(
		&r, "not found",
		"no route for GET /nope; routes are: GET /healthz, POST /echo, PUT /echo, "
		"GET /q, GET /items/*, DELETE /items/*");
	reply_free(&r);
	/* Exact routes do not match longer paths; prefix routes do not match their parent. */
	request(NULL, port, "GET", "/healthz/x", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	reply_free(&r);
	request(NULL, port, "GET", "/items", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	reply_free(&r);
	/* A 404 for a POST with a body. */
	request(NULL, port, "POST", "/nope", "{}", 2, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	assert_error_body(&r, "not found", "no route for POST /nope");
	reply_free(&r);

	request(NULL, port, "POST", "/healthz", "{}", 2, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 405);
	assert_error_body(&r, "method not allowed", "POST /healthz: allowed methods are GET, HEAD");
	ck_assert(header(&r, "Allow", v, sizeof(v)));
	ck_assert_str_eq(v, "GET, HEAD");
	reply_free(&r);
	request(NULL, port, "GET", "/echo", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 405);
	ck_assert(header(&r, "Allow", v, sizeof(v)));
	ck_assert_str_eq(v, "POST, PUT");
	reply_free(&r);
	request(NULL, port, "POST", "/items/a", "x", 1, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 405);
	ck_assert(header(&r, "Allow", v, sizeof(v)));
	ck_assert_str_eq(v, "GET, HEAD, DELETE");
	reply_free(&r);

	/* Handler failures become a 500 JSON body. */
	request(NULL, port, "POST", "/fail", "{}", 2, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 500);
	assert_error_body(&r, "internal error", "handler for POST /fail failed");
	reply_free(&r);
	request(NULL, port, "GET", "/badstatus", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 500);
	assert_error_body(&r, "internal error", "set status 0");
	reply_free(&r);
	request(NULL, port, "GET", "/oom", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 500);
	assert_error_body(&r, "internal error", "");
	reply_free(&r);

	/* The server is still fine. */
	request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	reply_free(&r);
	rf_http_stop(s);
}
END_TEST

static char *
make_body(size_t n)
{
	char *b = malloc(n + 1);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + (i * 7) % 26);
	b[n] = '\0';
	return b;
}

static unsigned long long
checksum(const char *p, size_t n)
{
	unsigned long long sum = 0;
	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)p[i];
	return sum & 0x7fffffffffffffffULL;
}

START_TEST(test_http_body_limits)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 0);
	uint16_t port = rf_http_port(s);
	struct reply r;
	char *body = make_body(SMALL_MAX + 5000);
	CURL *c = curl_easy_init();

	/* Exactly the cap: accepted, with Content-Length and chunked. */
	for (int mode = BODY_LENGTH; mode <= BODY_CHUNKED; mode++) {
		request(c, port, "POST", "/echo", body, SMALL_MAX, (enum body_mode)mode, false, &r);
		ck_assert_int_eq(r.rc, CURLE_OK);
		ck_assert_int_eq(r.status, 200);
		json_t *j = body_json(&r);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "len")), SMALL_MAX);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "sum")),
				 (json_int_t)checksum(body, SMALL_MAX));
		json_decref(j);
		reply_free(&r);
	}

	/* One byte over, announced by Content-Length: 413 before the body is read. */
	request(NULL, port, "POST", "/echo", body, SMALL_MAX + 1, BODY_LENGTH, true, &r);
	ck_assert_int_eq(r.status, 413);
	assert_error_body(&r, "request body too large",
			  "Content-Length 1025 exceeds server.maxBodyBytes (1024 bytes)");
	reply_free(&r);

	/* Chunked: the running total trips the cap; the answer comes at the end of the body. */
	request(c, port, "POST", "/echo", body, SMALL_MAX + 5000, BODY_CHUNKED, false, &r);
	ck_assert_int_eq(r.rc, CURLE_OK);
	ck_assert_int_eq(r.status, 413);
	assert_error_body(&r, "request body too large",
			  "the request body exceeds server.maxBodyBytes (1024 bytes)");
	reply_free(&r);
	/* ...and the connection is still usable afterwards. */
	request(c, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.new_connects, 0);
	reply_free(&r);

	/* The 413s were counted under the route's verb. */
	char *m = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"echo\",code=\"413\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"echo\",code=\"200\"} 2\n"));
	free(m);

	curl_easy_cleanup(c);
	free(body);
	rf_http_stop(s);
}
END_TEST

START_TEST(test_http_big_bodies)
{
	const size_t big = (size_t)24 * 1024 * 1024;
	struct rf_http_server *s = start_server(64 * 1024 * 1024, 20000, 0);
	uint16_t port = rf_http_port(s);
	char *body = make_body(big);
	unsigned long long want = checksum(body, big);
	struct reply r;
	for (int mode = BODY_LENGTH; mode <= BODY_CHUNKED; mode++) {
		size_t n = mode == BODY_LENGTH ? big : big / 8; /* 1000-byte chunks are slow */
		request(NULL, port, "POST", "/echo", body, n, (enum body_mode)mode,
			mode == BODY_LENGTH, &r);
		ck_assert_int_eq(r.rc, CURLE_OK);
		ck_assert_int_eq(r.status, 200);
		json_t *j = body_json(&r);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "len")), (json_int_t)n);
		if (mode == BODY_LENGTH)
			ck_assert_int_eq(json_integer_value(json_object_get(j, "sum")),
					 (json_int_t)want);
		json_decref(j);
		reply_free(&r);
	}
	/* Bodies of Node objects' sizes go through kept buffers (bufpool.h): one used before
	 * for a larger or other body holds exactly this one after. */
	const size_t sizes[] = { 2u << 20, 300u << 10, 1u << 20, 2u << 20, 700u << 10 };
	for (size_t k = 0; k < 2 * sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k % 5], off = k * 4099;
		request(NULL, port, "POST", "/echo", body + off, n, BODY_LENGTH, true, &r);
		ck_assert_int_eq(r.status, 200);
		json_t *j = body_json(&r);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "len")), (json_int_t)n);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "sum")),
				 (json_int_t)checksum(body + off, n));
		json_decref(j);
		reply_free(&r);
	}
	/* a body announced by Content-Length takes a kept buffer whole: with one large buffer
	 * kept, a 2 MB body is read into it (no buffer of its own comes back beside it) */
	rf_bufpool_drain();
	char *seed = malloc(4u << 20);
	ck_assert_ptr_nonnull(seed);
	rf_bufpool_put(seed);
	request(NULL, port, "POST", "/echo", body, 2u << 20, BODY_LENGTH, true, &r);
	ck_assert_int_eq(r.status, 200);
	reply_free(&r);
	size_t kept_bytes;
	ck_assert_uint_eq(rf_bufpool_kept(&kept_bytes), 1);
	ck_assert_uint_ge(kept_bytes, 4u << 20);
	free(body);
	rf_http_stop(s);
}
END_TEST

START_TEST(test_http_keepalive)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 0);
	uint16_t port = rf_http_port(s);
	CURL *c = curl_easy_init();
	struct reply r;
	for (int i = 0; i < 5; i++) {
		if (i % 2)
			request(c, port, "POST", "/echo", "{}", 2, BODY_LENGTH, false, &r);
		else
			request(c, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(r.new_connects == (i == 0 ? 1 : 0), "request %d: %ld new connections",
			      i, r.new_connects);
		reply_free(&r);
	}
	/* Error replies keep the connection too, also when the request had a body. */
	request(c, port, "GET", "/nope", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	ck_assert_int_eq(r.new_connects, 0);
	reply_free(&r);
	request(c, port, "POST", "/nope", "{\"x\":1}", 7, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 404);
	ck_assert_int_eq(r.new_connects, 0);
	reply_free(&r);
	/* A chunked body of unknown size to a path without a route is answered at once, before
	 * the body (which could be endless): the connection closes after the answer. */
	request(c, port, "POST", "/healthz", "{\"x\":1}", 7, BODY_CHUNKED, false, &r);
	ck_assert_int_eq(r.status, 405);
	ck_assert_int_eq(r.new_connects, 0);
	reply_free(&r);
	request(c, port, "POST", "/fail", "{}", 2, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 500);
	ck_assert_int_eq(r.new_connects, 1);
	reply_free(&r);
	request(c, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.new_connects, 0);
	reply_free(&r);
	curl_easy_cleanup(c);
	rf_http_stop(s);
}
END_TEST

static int
connect_raw(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until the server closes fd; returns seconds waited or -1 after limit. Reads whatever the
 * server sends (e.g. nothing, or an error page) until EOF. */
static double
wait_closed(int fd, double limit)
{
	double t0 = now_s();
	while (now_s() - t0 < limit) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) > 0) {
			char b[4096];
			ssize_t n = recv(fd, b, sizeof(b), 0);
			if (n <= 0)
				return now_s() - t0;
		}
	}
	return -1;
}

START_TEST(test_http_stalled_clients)
{
	/* request timeout 1.2 s: MHD's idle timeout is whole seconds, rounded up (2 s). */
	struct rf_http_server *s = start_server(SMALL_MAX, 1200, 0);
	uint16_t port = rf_http_port(s);
	double t0 = now_s();
	/* Stalls in the middle of the body. */
	int a = connect_raw(port);
	const char *req = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
			  "Content-Type: application/json\r\n\r\n{\"partial\":";
	ck_assert_int_eq(send(a, req, strlen(req), 0), (ssize_t)strlen(req));
	/* Stalls in the middle of the headers. */
	int b = connect_raw(port);
	const char *req2 = "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-";
	ck_assert_int_eq(send(b, req2, strlen(req2), 0), (ssize_t)strlen(req2));
	/* Connects and says nothing. */
	int c = connect_raw(port);

	/* Meanwhile everyone else is served at once. */
	struct reply r;
	for (int i = 0; i < 5; i++) {
		double t = now_s();
		request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg(now_s() - t < 0.5, "request took %.3f s", now_s() - t);
		reply_free(&r);
	}
	int fds[] = { a, b, c };
	for (int i = 0; i < 3; i++) {
		double w = wait_closed(fds[i], 6);
		ck_assert_msg(w >= 0, "stalled client %d was not cut off", i);
		close(fds[i]);
	}
	double total = now_s() - t0;
	ck_assert_msg(total >= 1.0 && total < 5.0, "cut off after %.2f s", total);
	request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
	ck_assert_int_eq(r.status, 200);
	reply_free(&r);
	rf_http_stop(s);
}
END_TEST

/* A body that keeps trickling in is cut off once the request is older than the timeout. */
START_TEST(test_http_slow_body)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 1000, 0);
	uint16_t port = rf_http_port(s);
	int fd = connect_raw(port);
	const char *req = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n";
	ck_assert_int_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	double t0 = now_s();
	bool closed = false;
	for (int i = 0; i < 60 && !closed; i++) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (send(fd, "x", 1, MSG_NOSIGNAL) < 0)
			closed = true;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 0) > 0) {
			char b[256];
			if (recv(fd, b, sizeof(b), 0) <= 0)
				closed = true;
		}
	}
	ck_assert_msg(closed, "slow body was not cut off");
	ck_assert_msg(now_s() - t0 < 4.0, "cut off after %.2f s", now_s() - t0);
	close(fd);
	rf_http_stop(s);
}
END_TEST

#define N_CLIENTS  16
#define N_REQUESTS 15

struct client_arg {
	uint16_t port;
	int ok;
};

static void *
client_thread(void *p)
{
	struct client_arg *a = p;
	CURL *c = curl_easy_init();
	char body[64];
	for (int i = 0; i < N_REQUESTS; i++) {
		struct reply r;
		int n = snprintf(body, sizeof(body), "{\"i\":%d}", i);
		if (i % 5 == 4)
			request(c, a->port, "GET", "/slow", NULL, 0, BODY_LENGTH, false, &r);
		else
			request(c, a->port, "POST", "/echo", body, (size_t)n, BODY_LENGTH, false,
				&r);
		if (r.rc == CURLE_OK && r.status == 200)
			a->ok++;
		reply_free(&r);
	}
	curl_easy_cleanup(c);
	return NULL;
}

START_TEST(test_http_concurrent)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 4);
	pthread_t t[N_CLIENTS];
	struct client_arg args[N_CLIENTS];
	for (int i = 0; i < N_CLIENTS; i++) {
		args[i] = (struct client_arg){ rf_http_port(s), 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, client_thread, &args[i]), 0);
	}
	int ok = 0;
	for (int i = 0; i < N_CLIENTS; i++) {
		pthread_join(t[i], NULL);
		ok += args[i].ok;
	}
	ck_assert_int_eq(ok, N_CLIENTS * N_REQUESTS);
	char *m = rf_metrics_render(NULL);
	char want[128];
	snprintf(want, sizeof(want), "railfit_requests_total{verb=\"echo\",code=\"200\"} %d\n",
		 N_CLIENTS * N_REQUESTS * 4 / 5);
	ck_assert_msg(strstr(m, want) != NULL, "metrics lack %s", want);
	snprintf(want, sizeof(want), "railfit_request_duration_seconds_count{verb=\"slow\"} %d\n",
		 N_CLIENTS * N_REQUESTS / 5);
	ck_assert_msg(strstr(m, want) != NULL, "metrics lack %s", want);
	free(m);
	rf_http_stop(s);
}
END_TEST

START_TEST(test_http_metrics)
{
	struct rf_http_server *s = start_server(SMALL_MAX, 5000, 1);
	uint16_t port = rf_http_port(s);
	struct reply r;
	request(NULL, port, "POST", "/echo", "{}", 2, BODY_LENGTH, false, &r);
	reply_free(&r);
	request(NULL, port, "GET", "/nope", NULL, 0, BODY_LENGTH, false, &r);
	reply_free(&r);
	request(NULL, port, "GET", "/echo", NULL, 0, BODY_LENGTH, false, &r);
	reply_free(&r);
	request(NULL, port, "POST", "/fail", "", 0, BODY_LENGTH, false, &r);
	reply_free(&r);
	char *m = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"echo\",code=\"200\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"other\",code=\"404\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"other\",code=\"405\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(m, "railfit_requests_total{verb=\"fail\",code=\"500\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(m, "railfit_request_duration_seconds_count{verb=\"echo\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(
		m, "railfit_request_duration_seconds_bucket{verb=\"other\",le=\"+Inf\"} 2\n"));
	free(m);
	rf_http_stop(s);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Hostile clients: deadline, per-address limit, body budget, head limits, framing
 */

static struct rf_http_server *
start_limited(int64_t max_body, int64_t timeout_ms, unsigned per_address, int64_t budget)
{
	struct rf_http_options o = {
		.listen = "127.0.0.1:0",
		.max_body_bytes = max_body,
		.request_timeout_ms = timeout_ms,
		.max_per_address = per_address,
		.max_buffered_bytes = budget,
	};
	struct rf_http_server *s = NULL;
	char err[256] = "";
	int r = rf_http_start(&o, routes, N_ROUTES, &s, err, sizeof(err));
	ck_assert_msg(r == 0, "rf_http_start: %d %s", r, err);
	return s;
}

/* A connection from 127.0.0.<host> (Linux routes all of 127/8 to lo). */
static int
connect_from(uint16_t port, int host)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in src = { .sin_family = AF_INET };
	src.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* strcasestr is a GNU extension */
static const char *
ci_strstr(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return hay;
	return NULL;
}

struct raw_reply {
	int status;
	char head[4096];
	char *body; /* after the blank line, NUL-terminated */
	size_t len;
};

/* Send req on fd (n bytes), then read until the server closes or a whole Content-Length
 * response arrived, for at most limit seconds. status -1: nothing came back. */
static void
raw_exchange(int fd, const char *req, size_t n, double limit, struct raw_reply *ret)
{
	*ret = (struct raw_reply){ .status = -1 };
	size_t sent = 0;
	while (sent < n) {
		ssize_t k = send(fd, req + sent, n - sent, MSG_NOSIGNAL);
		if (k <= 0)
			break; /* the server may answer and close before the body is sent */
		sent += (size_t)k;
	}
	char *buf = NULL;
	size_t len = 0;
	double t0 = now_s();
	while (now_s() - t0 < limit) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		char b[8192];
		ssize_t k = recv(fd, b, sizeof(b), 0);
		if (k <= 0)
			break;
		buf = realloc(buf, len + (size_t)k + 1);
		memcpy(buf + len, b, (size_t)k);
		len += (size_t)k;
		buf[len] = '\0';
		char *eoh = strstr(buf, "\r\n\r\n");
		const char *cl = eoh ? ci_strstr(buf, "\r\nContent-Length: ") : NULL;
		if (cl && cl < eoh && len - (size_t)(eoh + 4 - buf) >= strtoul(cl + 18, NULL, 10))
			break;
	}
	if (!buf)
		return;
	sscanf(buf, "HTTP/1.%*d %d", &ret->status);
	char *eoh = strstr(buf, "\r\n\r\n");
	size_t hl = eoh ? (size_t)(eoh - buf) : len;
	snprintf(ret->head, sizeof(ret->head), "%.*s", (int)hl, buf);
	ret->body = strdup(eoh ? eoh + 4 : "");
	ret->len = strlen(ret->body);
	free(buf);
}

static void
raw_once(uint16_t port, const char *req, size_t n, struct raw_reply *ret)
{
	int fd = connect_raw(port);
	raw_exchange(fd, req, n, 5.0, ret);
	close(fd);
}

static void
assert_raw_error(const struct raw_reply *r, int status, const char *error, const char *detail)
{
	ck_assert_msg(r->status == status, "status %d, want %d (%s)", r->status, status, r->head);
	ck_assert_msg(ci_strstr(r->head, "Content-Type: application/json") != NULL, "%s", r->head);
	json_error_t e;
	json_t *j = json_loads(r->body, 0, &e);
	ck_assert_msg(j != NULL, "not JSON: %s", r->body);
	ck_assert_str_eq(json_string_value(json_object_get(j, "error")), error);
	const char *d = json_string_value(json_object_get(j, "detail"));
	ck_assert_msg(d && strstr(d, detail), "detail \"%s\" lacks \"%s\"", d ? d : "", detail);
	json_decref(j);
}

/* Slow headers: a byte every 100 ms never leaves MHD idle, but the request must have arrived
 * within the timeout of the connection's opening. Everyone else is served meanwhile. */
START_TEST(test_http_slow_headers_deadline)
{
	struct rf_http_server *s = start_limited(SMALL_MAX, 1000, 0, 0);
	uint16_t port = rf_http_port(s);
	enum { N = 20 };
	int fds[N];
	for (int i = 0; i < N; i++)
		fds[i] = connect_raw(port);
	const char *req =
		"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	double t0 = now_s();
	bool closed[N] = { false };
	int n_closed = 0;
	for (size_t k = 0; k < strlen(req) && n_closed < N && now_s() - t0 < 5; k++) {
		for (int i = 0; i < N; i++)
			if (!closed[i] && send(fds[i], req + k, 1, MSG_NOSIGNAL) < 0) {
				closed[i] = true;
				n_closed++;
			}
		struct reply r;
		request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &r);
		ck_assert_int_eq(r.status, 200);
		reply_free(&r);
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < N; i++) {
		double w = wait_closed(fds[i], 3);
		ck_assert_msg(w >= 0, "slow client %d was not cut off", i);
		close(fds[i]);
	}
	double took = now_s() - t0;
	ck_assert_msg(took >= 0.9 && took < 2.5, "cut off after %.2f s", took);
	char *m = rf_metrics_render(NULL);
	ck_assert_msg(strstr(m, "railfit_http_rejected_total{reason=\"deadline\"} 20\n"), "%s", m);
	free(m);

	/* keep-alive: the next request must arrive within the timeout of the previous answer */
	int fd = connect_raw(port);
	struct raw_reply rr;
	const char *ok = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_exchange(fd, ok, strlen(ok), 2, &rr);
	ck_assert_int_eq(rr.status, 200);
	free(rr.body);
	t0 = now_s();
	for (int i = 0; i < 30; i++) {
		if (send(fd, "G", 1, MSG_NOSIGNAL) < 0)
			break;
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	ck_assert_msg(wait_closed(fd, 3) >= 0, "slow second request was not cut off");
	ck_assert_msg(now_s() - t0 < 2.5, "second request cut off after %.2f s", now_s() - t0);
	close(fd);
	rf_http_stop(s);
}
END_TEST

/* At most max_per_address connections from one address; other addresses are not affected. */
START_TEST(test_http_per_address_limit)
{
	struct rf_http_server *s = start_limited(SMALL_MAX, 5000, 3, 0);
	uint16_t port = rf_http_port(s);
	int held[3];
	for (int i = 0; i < 3; i++)
		held[i] = connect_from(port, 2);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	/* the fourth from 127.0.0.2 is closed without an answer */
	int extra = connect_from(port, 2);
	struct raw_reply r;
	const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_exchange(extra, req, strlen(req), 2, &r);
	ck_assert_int_eq(r.status, -1);
	close(extra);
	/* 127.0.0.1 and 127.0.0.3 are served */
	for (int host = 1; host <= 3; host += 2) {
		int fd = connect_from(port, host);
		raw_exchange(fd, req, strlen(req), 2, &r);
		ck_assert_msg(r.status == 200, "from 127.0.0.%d: %d", host, r.status);
		free(r.body);
		close(fd);
	}
	/* a slot freed is a slot again */
	close(held[0]);
	nanosleep(&ts, NULL);
	int again = connect_from(port, 2);
	raw_exchange(again, req, strlen(req), 2, &r);
	ck_assert_int_eq(r.status, 200);
	free(r.body);
	close(again);
	close(held[1]);
	close(held[2]);
	rf_http_stop(s);
}
END_TEST

/* Bodies held at once are bounded: a Content-Length is reserved whole, a chunked body as it
 * grows; beyond the budget 503 with Retry-After and a JSON body, and the budget comes back. */
START_TEST(test_http_body_budget)
{
	struct rf_http_server *s = start_limited(4096, 5000, 0, 6000);
	uint16_t port = rf_http_port(s);
	/* holds 4001 bytes of the budget, sending no body yet */
	int a = connect_raw(port);
	const char *ha = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n";
	ck_assert_int_eq(send(a, ha, strlen(ha), 0), (ssize_t)strlen(ha));
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	struct raw_reply r;
	char big[3000 + 200];
	int n = snprintf(big, sizeof(big),
			 "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n\r\n");
	memset(big + n, 'x', 3000);
	raw_once(port, big, (size_t)n + 3000, &r);
	assert_raw_error(&r, 503, "server busy", "server.maxBufferedBytes (6000 bytes)");
	ck_assert_msg(ci_strstr(r.head, "Retry-After: 1"), "%s", r.head);
	free(r.body);
	/* a small one still fits */
	const char *small = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
	raw_once(port, small, strlen(small), &r);
	ck_assert_int_eq(r.status, 200);
	free(r.body);
	/* a chunked body that outgrows what is left */
	char chunked[4096];
	n = snprintf(chunked, sizeof(chunked),
		     "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
	for (int i = 0; i < 6; i++) {
		n += snprintf(chunked + n, sizeof(chunked) - (size_t)n, "1f4\r\n");
		memset(chunked + n, 'y', 500);
		n += 500;
		n += snprintf(chunked + n, sizeof(chunked) - (size_t)n, "\r\n");
	}
	n += snprintf(chunked + n, sizeof(chunked) - (size_t)n, "0\r\n\r\n");
	raw_once(port, chunked, (size_t)n, &r);
	assert_raw_error(&r, 503, "server busy", "retry later");
	free(r.body);
	/* the held request completes; its share comes back */
	char body[4000];
	memset(body, 'z', sizeof(body));
	raw_exchange(a, body, sizeof(body), 5, &r);
	ck_assert_int_eq(r.status, 200);
	free(r.body);
	close(a);
	raw_once(port, big,
		 (size_t)snprintf(big, 80,
				  "POST /echo HTTP/1.1\r\nHost: x\r\n"
				  "Content-Length: 3000\r\n\r\n") +
			 3000,
		 &r);
	ck_assert_int_eq(r.status, 200);
	free(r.body);
	char *m = rf_metrics_render(NULL);
	ck_assert_msg(strstr(m, "railfit_http_rejected_total{reason=\"budget\"} 2\n"), "%s", m);
	free(m);
	rf_http_stop(s);
}
END_TEST

/* Request heads beyond the documented limits: JSON 414/431 at once, never a hang. */
START_TEST(test_http_head_limits)
{
	struct rf_http_server *s = start_limited(SMALL_MAX, 5000, 0, 0);
	uint16_t port = rf_http_port(s);
	size_t cap = 64 * 1024;
	char *req = malloc(cap);
	struct raw_reply r;
	double t0;

	/* 1,000 query parameters (6.9 KB): libmicrohttpd alone ran out of pool and hung */
	int n = snprintf(req, cap, "GET /q?o=1");
	for (int i = 0; i < 999; i++)
		n += snprintf(req + n, cap - (size_t)n, "&p%d=", i);
	n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\n\r\n");
	t0 = now_s();
	raw_once(port, req, (size_t)n, &r);
	assert_raw_error(&r, 414, "request target too long", "1000 query parameters");
	ck_assert_msg(now_s() - t0 < 1.0, "answered after %.2f s", now_s() - t0);
	free(r.body);
	/* 256 parameters are fine */
	n = snprintf(req, cap, "GET /q?o=table");
	for (int i = 0; i < 255; i++)
		n += snprintf(req + n, cap - (size_t)n, "&p%d=", i);
	n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_once(port, req, (size_t)n, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(strstr(r.body, "\"o\":\"table\""), "%s", r.body);
	free(r.body);
	/* at the limits at once: an 8,000-byte target with 256 parameters and 99 fields of 15.5 KB
	 * fit the connection's memory and are answered */
	n = snprintf(req, cap, "GET /q?o=edge");
	for (int i = 0; i < 255; i++)
		n += snprintf(req + n, cap - (size_t)n, "&p%03d=%s", i, "vvvvvvvvvvvvvvvvvvvvv");
	ck_assert_int_le(n, 8000);
	memset(req + n, 'w', (size_t)(8000 - n));
	n = 8000;
	n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\n");
	for (int i = 0; i < 98; i++) {
		n += snprintf(req + n, cap - (size_t)n, "X-Edge-%02d: ", i);
		memset(req + n, 'e', 145);
		n += 145;
		n += snprintf(req + n, cap - (size_t)n, "\r\n");
	}
	n += snprintf(req + n, cap - (size_t)n, "\r\n");
	raw_once(port, req, (size_t)n, &r);
	ck_assert_msg(r.status == 200, "status %d: %s", r.status, r.body ? r.body : "");
	ck_assert_msg(strstr(r.body, "\"o\":\"edge\""), "%s", r.body);
	free(r.body);
	/* a 9,000-byte path */
	n = snprintf(req, cap, "GET /");
	memset(req + n, 'a', 9000);
	n += 9000;
	n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_once(port, req, (size_t)n, &r);
	assert_raw_error(&r, 414, "request target too long", "at most 8192 bytes");
	free(r.body);
	/* 150 header fields */
	n = snprintf(req, cap, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
	for (int i = 0; i < 150; i++)
		n += snprintf(req + n, cap - (size_t)n, "X-H%d: v\r\n", i);
	n += snprintf(req + n, cap - (size_t)n, "\r\n");
	raw_once(port, req, (size_t)n, &r);
	assert_raw_error(&r, 431, "request header fields too large", "at most 100 fields");
	free(r.body);
	/* a 20 KB header */
	n = snprintf(req, cap, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(req + n, 'b', 20000);
	n += 20000;
	n += snprintf(req + n, cap - (size_t)n, "\r\n\r\n");
	raw_once(port, req, (size_t)n, &r);
	assert_raw_error(&r, 431, "request header fields too large", "16384 bytes");
	free(r.body);
	/* beyond the connection's memory (3,000 header lines): libmicrohttpd's own 431, which has
	 * an HTML body, but an answer and at once */
	n = snprintf(req, cap, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
	for (int i = 0; i < 3000; i++)
		n += snprintf(req + n, cap - (size_t)n, "a:\r\n");
	n += snprintf(req + n, cap - (size_t)n, "\r\n");
	t0 = now_s();
	raw_once(port, req, (size_t)n, &r);
	ck_assert_int_eq(r.status, 431);
	ck_assert_msg(now_s() - t0 < 1.0, "answered after %.2f s", now_s() - t0);
	free(r.body);
	free(req);
	char *m = rf_metrics_render(NULL);
	ck_assert_msg(strstr(m, "railfit_http_rejected_total{reason=\"target\"} 2\n"), "%s", m);
	ck_assert_msg(strstr(m, "railfit_http_rejected_total{reason=\"headers\"} 2\n"), "%s", m);
	free(m);
	rf_http_stop(s);
}
END_TEST

/* Framing this server does not take: conflicting lengths, Transfer-Encoding other than chunked
 * or together with a length; bodies of unknown size to unknown routes answered at once. */
START_TEST(test_http_framing)
{
	struct rf_http_server *s = start_limited(SMALL_MAX, 5000, 0, 0);
	uint16_t port = rf_http_port(s);
	struct raw_reply r;
	const char *two = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
			  "Content-Length: 5\r\n\r\n{}";
	raw_once(port, two, strlen(two), &r);
	assert_raw_error(&r, 400, "bad request framing", "different values");
	free(r.body);
	const char *same = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
			   "Content-Length: 2\r\n\r\n{}";
	raw_once(port, same, strlen(same), &r);
	ck_assert_int_eq(r.status, 200);
	free(r.body);
	const char *both = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
	raw_once(port, both, strlen(both), &r);
	assert_raw_error(&r, 400, "bad request framing", "both Transfer-Encoding");
	free(r.body);
	const char *gz = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nxx";
	raw_once(port, gz, strlen(gz), &r);
	assert_raw_error(&r, 501, "transfer encoding not implemented",
			 "Transfer-Encoding \"gzip\"");
	free(r.body);
	/* 2 MiB chunked to a path without a route: 404 before the body */
	size_t cap = 2200 * 1024, n = 0;
	char *req = malloc(cap);
	n += (size_t)snprintf(
		req, cap,
		"POST /nowhere HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
	for (int i = 0; i < 64; i++) {
		n += (size_t)snprintf(req + n, cap - n, "8000\r\n");
		memset(req + n, 'c', 0x8000);
		n += 0x8000;
		n += (size_t)snprintf(req + n, cap - n, "\r\n");
	}
	n += (size_t)snprintf(req + n, cap - n, "0\r\n\r\n");
	raw_once(port, req, n, &r);
	assert_raw_error(&r, 404, "not found", "no route for POST /nowhere");
	free(r.body);
	free(req);
	rf_http_stop(s);
}
END_TEST

static int
count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

START_TEST(test_http_listen)
{
	static const char *const bad[] = {
		"",       "nonsense", "1.2.3.4", "host:", ":abc", ":70000",
		"::1:80", "[::1]80",  "[]:80",   ":-1",   ":8 0", "no.such.host.invalid:80"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rf_http_options o = { .listen = bad[i],
					     .max_body_bytes = 10,
					     .request_timeout_ms = 1000 };
		struct rf_http_server *s = NULL;
		char err[256] = "";
		int r = rf_http_start(&o, routes, N_ROUTES, &s, err, sizeof(err));
		ck_assert_msg(r == -EINVAL, "\"%s\": got %d (%s)", bad[i], r, err);
		ck_assert_ptr_null(s);
		ck_assert_msg(strstr(err, "invalid listen address") != NULL, "\"%s\": %s", bad[i],
			      err);
	}
	struct rf_http_options o = { .listen = NULL,
				     .max_body_bytes = 10,
				     .request_timeout_ms = 1000 };
	struct rf_http_server *s = NULL;
	char err[256];
	ck_assert_int_eq(rf_http_start(&o, routes, N_ROUTES, &s, err, sizeof(err)), -EINVAL);

	int fds_before = count_fds();
	static const char *const good[] = { "127.0.0.1:0", ":0",      "0.0.0.0:0",
					    "localhost:0", "[::1]:0", "[::]:0" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		o.listen = good[i];
		s = NULL;
		int r = rf_http_start(&o, routes, N_ROUTES, &s, err, sizeof(err));
		if (r != 0 && good[i][0] == '[') {
			fprintf(stderr, "no IPv6 here (%s); skipping %s\n", err, good[i]);
			continue;
		}
		ck_assert_msg(r == 0, "\"%s\": %d %s", good[i], r, err);
		uint16_t port = rf_http_port(s);
		ck_assert_uint_ne(port, 0);
		struct reply rep;
		if (good[i][0] != '[') {
			request(NULL, port, "GET", "/healthz", NULL, 0, BODY_LENGTH, false, &rep);
			ck_assert_int_eq(rep.status, 200);
			reply_free(&rep);
		}
		/* The port is taken now. */
		char taken[64];
		snprintf(taken, sizeof(taken), "%s", good[i]);
		char *colon = strrchr(taken, ':');
		snprintf(colon + 1, sizeof(taken) - (size_t)(colon + 1 - taken), "%u", port);
		struct rf_http_options o2 = o;
		o2.listen = taken;
		struct rf_http_server *s2 = NULL;
		if (strcmp(good[i], "127.0.0.1:0") == 0) {
			ck_assert_int_eq(
				rf_http_start(&o2, routes, N_ROUTES, &s2, err, sizeof(err)),
				-EADDRINUSE);
			ck_assert_ptr_nonnull(strstr(err, "cannot listen on \"127.0.0.1:"));
		}
		rf_http_stop(s);
	}
	/* Starting and stopping leaks no descriptors (the listen socket is closed). */
	ck_assert_int_eq(count_fds(), fds_before);
	rf_http_stop(NULL);
}
END_TEST

START_TEST(test_http_helpers)
{
	ck_assert_int_eq(rf_http_status_from_errno(-EINVAL), 400);
	ck_assert_int_eq(rf_http_status_from_errno(-EMSGSIZE), 413);
	ck_assert_int_eq(rf_http_status_from_errno(-ENOENT), 404);
	ck_assert_int_eq(rf_http_status_from_errno(-ETIMEDOUT), 504);
	ck_assert_int_eq(rf_http_status_from_errno(-ENOMEM), 500);
	ck_assert_int_eq(rf_http_status_from_errno(-EIO), 500);
	ck_assert_int_eq(rf_http_status_from_errno(EINVAL), 400);

	struct rf_http_response resp = { 0 };
	ck_assert_int_eq(rf_http_reply_error(&resp, 400, "bad request", "Pod: \"x\" <y>"), 0);
	ck_assert_int_eq(resp.status, 400);
	ck_assert_str_eq(resp.body, "{\"error\":\"bad request\",\"detail\":\"Pod: \\\"x\\\" "
				    "\\u003cy\\u003e\"}");
	ck_assert_uint_eq(resp.body_len, strlen(resp.body));
	ck_assert_ptr_null(resp.content_type);
	/* Replacing a reply frees the previous body. */
	ck_assert_int_eq(rf_http_reply_json(&resp, 201, json_pack("[i]", 1)), 0);
	ck_assert_str_eq(resp.body, "[1]");
	ck_assert_int_eq(resp.status, 201);
	ck_assert_int_eq(rf_http_reply_json(&resp, 200, NULL), -ENOMEM);
	ck_assert_int_eq(resp.status, 500);
	ck_assert_ptr_nonnull(strstr(resp.body, "out of memory"));
	ck_assert_int_eq(rf_http_reply_text(&resp, 200, "t"), 0);
	ck_assert_str_eq(resp.body, "t");
	ck_assert_str_eq(resp.content_type, "text/plain; charset=utf-8");
	ck_assert_int_eq(rf_http_reply_error(&resp, 404, NULL, NULL), 0);
	ck_assert_str_eq(resp.body, "{\"error\":\"\",\"detail\":\"\"}");
	/* Not UTF-8 (a path quoted in a detail): replaced, as Go would. */
	ck_assert_int_eq(rf_http_reply_error(&resp, 404, "bad", "/\xff"), 0);
	ck_assert_int_eq(resp.status, 404);
	ck_assert_str_eq(resp.body, "{\"error\":\"bad\",\"detail\":\"/\\ufffd\"}");
	free(resp.body);
	ck_assert_ptr_null(rf_http_query(NULL, "x"));
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Logging (server/log.c): what the HTTP server and main write to stderr
 */

typedef void log_fn(void);

/* Run fn with stderr redirected to a file; return what it wrote. */
static char *
capture_stderr(log_fn *fn)
{
	fflush(stderr);
	char path[] = "/tmp/rf-log-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	int saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	struct stat st;
	fstat(fd, &st);
	char *buf = malloc((size_t)st.st_size + 1);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	buf[st.st_size] = '\0';
	close(fd);
	unlink(path);
	return buf;
}

static void
assert_matches(const char *text, const char *pattern)
{
	regex_t re;
	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	int r = regexec(&re, text, 0, NULL, 0);
	regfree(&re);
	ck_assert_msg(r == 0, "\"%s\" does not match /%s/", text, pattern);
}

static int log_line;

static void
log_text_lines(void)
{
	rf_log_setup(RF_LOG_TEXT, 0);
	log_line = __LINE__ + 1;
	rf_info("pod filtered", "pod", "ns/name", "node", "n\"1\\\n\t\x01\x7f\xff", "gpus", "2");
	rf_warn("watch failing", "resource", "nodes");
	rf_error("cannot bind", "err", NULL);
	rf_infof("formatted %d %s", 42, "x");
	rf_v(1, "not shown at -v 0");
	rf_log_setup(RF_LOG_TEXT, 2);
	rf_v(2, "shown at -v 2", "k", "v");
	rf_v(3, "not shown at -v 2");
	rf_log_kv(RF_LOG_INFO, 3, __FILE__, __LINE__, "not shown either", NULL);
	rf_log_setup(RF_LOG_TEXT, 0);
}

START_TEST(test_log_text)
{
	char *out = capture_stderr(log_text_lines);
	char *lines[8] = { 0 };
	int n = 0;
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l && n < 8;
	     l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	ck_assert_int_eq(n, 5);
	char pat[512];
	snprintf(pat, sizeof(pat),
		 "^I[01][0-9][0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{6} +%d "
		 "test_http\\.c:%d\\] ",
		 (int)getpid(), log_line);
	assert_matches(lines[0], pat);
	/* klog pads the pid to 7 columns. */
	char pid[16];
	snprintf(pid, sizeof(pid), "%7d ", (int)getpid());
	ck_assert_ptr_nonnull(strstr(lines[0], pid));
	const char *kv = strstr(lines[0], "] ");
	ck_assert_str_eq(
		kv, "] \"pod filtered\" pod=\"ns/name\" node=\"n\\\"1\\\\\\n\\t\\x01\\x7f\\xff\" "
		    "gpus=2"); /* integers bare, as klog writes them */
	assert_matches(lines[1], "^W[0-9]{4} .* test_http\\.c:[0-9]+\\] \"watch failing\" "
				 "resource=\"nodes\"$");
	assert_matches(lines[2], "^E[0-9]{4} .*\\] \"cannot bind\" err=<nil>$");
	assert_matches(lines[3], "^I[0-9]{4} .*\\] \"formatted 42 x\"$");
	assert_matches(lines[4], "^I[0-9]{4} .*\\] \"shown at -v 2\" k=\"v\"$");
	free(out);
	ck_assert_int_eq(rf_log_verbosity(), 0);
	rf_log_setup(RF_LOG_TEXT, -3);
	ck_assert_int_eq(rf_log_verbosity(), 0);
}
END_TEST

static void
log_json_lines(void)
{
	rf_log_setup(RF_LOG_JSON, 1);
	rf_info("pod filtered", "pod", "ns/name", "node", "<n\"1\n\x01\xff>");
	rf_v(1, "verbose", "k", "v");
	rf_warn("w");
	rf_errorf("e %d", 7);
	rf_log_setup(RF_LOG_TEXT, 0);
}

START_TEST(test_log_json)
{
	char *out = capture_stderr(log_json_lines);
	const char *p = out;
	static const char *const levels[] = { "info", "info", "warning", "error" };
	static const int vs[] = { 0, 1, 0, 0 };
	for (int i = 0; i < 4; i++) {
		const char *nl = strchr(p, '\n');
		ck_assert_ptr_nonnull(nl);
		json_error_t e;
		json_t *j = json_loadb(p, (size_t)(nl - p), 0, &e);
		ck_assert_msg(j != NULL, "line %d not JSON: %s", i, e.text);
		/* Keys in the component-base order. */
		const char *want_keys[] = { "ts", "level", "v", "caller", "msg" };
		void *it = json_object_iter(j);
		for (int k = 0; k < 5; k++, it = json_object_iter_next(j, it))
			ck_assert_str_eq(json_object_iter_key(it), want_keys[k]);
		double ts = json_number_value(json_object_get(j, "ts"));
		ck_assert(ts > 1.5e12 && ts < 1e13); /* milliseconds since the epoch */
		ck_assert_str_eq(json_string_value(json_object_get(j, "level")), levels[i]);
		ck_assert_int_eq(json_integer_value(json_object_get(j, "v")), vs[i]);
		assert_matches(json_string_value(json_object_get(j, "caller")),
			       "^test_http\\.c:[0-9]+$");
		if (i == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(j, "msg")),
					 "pod filtered");
			ck_assert_str_eq(json_string_value(json_object_get(j, "pod")), "ns/name");
			ck_assert_str_eq(json_string_value(json_object_get(j, "node")),
					 "<n\"1\n\x01\xef\xbf\xbd>");
		}
		if (i == 3)
			ck_assert_str_eq(json_string_value(json_object_get(j, "msg")), "e 7");
		json_decref(j);
		p = nl + 1;
	}
	ck_assert_str_eq(p, "");
	free(out);
}
END_TEST

static char *long_value;

static void
log_long_line(void)
{
	rf_info("long", "v", long_value);
	rf_infof("%s", long_value);
}

START_TEST(test_log_long_lines)
{
	long_value = malloc(200 * 1024);
	memset(long_value, 'x', 200 * 1024 - 1);
	long_value[200 * 1024 - 1] = '\0';
	char *out = capture_stderr(log_long_line);
	char *nl = strchr(out, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_uint_le((size_t)(nl - out) + 1, 64 * 1024);
	ck_assert_int_eq(strncmp(nl - 12, " [truncated]", 12), 0);
	char *nl2 = strchr(nl + 1, '\n');
	ck_assert_ptr_nonnull(nl2);
	ck_assert_int_eq(nl2[1], '\0');
	ck_assert_int_eq(strncmp(nl2 - 12, " [truncated]", 12), 0);
	free(out);
	free(long_value);
}
END_TEST

#define LOG_THREADS 8
#define LOG_LINES   300

static void *
log_thread(void *arg)
{
	char v[400];
	memset(v, 'a' + (int)(intptr_t)arg, sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	for (int i = 0; i < LOG_LINES; i++)
		rf_info("line", "v", v);
	return NULL;
}

static void
log_from_threads(void)
{
	pthread_t t[LOG_THREADS];
	for (intptr_t i = 0; i < LOG_THREADS; i++)
		pthread_create(&t[i], NULL, log_thread, (void *)i);
	for (int i = 0; i < LOG_THREADS; i++)
		pthread_join(t[i], NULL);
}

START_TEST(test_log_threads)
{
	char *out = capture_stderr(log_from_threads);
	int n = 0;
	const char *torn = NULL; /* the first line that is not whole */
	/* Plain checks per line and one assert at the end: every passing ck_assert writes a record
	 * to Check's log, and 2,400 lines x 400 characters of them took minutes under valgrind. */
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save), n++) {
		if (torn)
			continue;
		/* Whole lines only: the header, then one value made of a single letter. */
		const char *v = strstr(l, "] \"line\" v=\"");
		if (l[0] != 'I' || !v) {
			torn = l;
			continue;
		}
		v += strlen("] \"line\" v=\"");
		if (v[0] < 'a' || v[0] >= 'a' + LOG_THREADS ||
		    strspn(v, (char[]){ v[0], 0 }) != 399 || strcmp(v + 399, "\"") != 0)
			torn = l;
	}
	ck_assert_msg(!torn, "torn or mixed log line: %.120s", torn ? torn : "");
	ck_assert_int_eq(n, LOG_THREADS * LOG_LINES);
	free(out);
}
END_TEST

Suite *http_suite(void);

Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("server");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_http_routes);
	tcase_add_test(tc, test_http_not_found_and_method);
	tcase_add_test(tc, test_http_body_limits);
	tcase_add_test(tc, test_http_big_bodies);
	tcase_add_test(tc, test_http_keepalive);
	tcase_add_test(tc, test_http_stalled_clients);
	tcase_add_test(tc, test_http_slow_body);
	tcase_add_test(tc, test_http_concurrent);
	tcase_add_test(tc, test_http_metrics);
	tcase_add_test(tc, test_http_listen);
	tcase_add_test(tc, test_http_helpers);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_http_slow_headers_deadline);
	tcase_add_test(tc, test_http_per_address_limit);
	tcase_add_test(tc, test_http_body_budget);
	tcase_add_test(tc, test_http_head_limits);
	tcase_add_test(tc, test_http_framing);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("log");
	tcase_add_test(tc, test_log_text);
	tcase_add_test(tc, test_log_json);
	tcase_add_test(tc, test_log_long_lines);
	tcase_add_test(tc, test_log_threads);
	suite_add_tcase(s, tc);
	return s;
}
