/* The route table dispatch of server/http/http-route.c at the function level (rf_http_route_find,
 * no network) over a table shaped like railfit's own (server/cmd/serve.c): exact and prefix paths,
 * HEAD on GET routes, any-method routes, first match wins, 404 against 405 with its Allow list;
 * then the body cap through a server on 127.0.0.1:0 at the sizes where the request buffer grows
 * (its 16 KiB start, doubling, the cap, an announced Content-Length). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "server/http/http.h"

static int
h_route(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	return rf_http_reply_text(resp, 200, "");
}

/* The shape of railfit's route table (server/cmd/serve.c). */
static const struct rf_http_route table[] = {
	{ "POST", "/filter", false, "filter", h_route, NULL },
	{ "POST", "/prioritize", false, "prioritize", h_route, NULL },
	{ "POST", "/bind", false, "bind", h_route, NULL },
	{ "GET", "/healthz", false, "healthz", h_route, NULL },
	{ "GET", "/metrics", false, "metrics", h_route, NULL },
	{ "GET", "/debug/nodes", false, "debug", h_route, NULL },
	{ "GET", "/debug/nodes/", true, "debug", h_route, NULL },
	{ "POST", "/debug/explain", false, "explain", h_route, NULL },
	{ "GET", "/debug/explain/", true, "explain", h_route, NULL },
	{ "DELETE", "/debug/explain/", true, "explain", h_route, NULL },
	{ "GET", "/debug/explain/", true, "shadowed", h_route, NULL },
	{ NULL, "/any", false, "any", h_route, NULL },
};
#define N_TABLE (sizeof(table) / sizeof(table[0]))

static const struct {
	const char *method, *path;
	int want; /* index into table, or -404 / -405 */
	const char *allow;
} cases[] = {
	{ "POST", "/filter", 0, "" },
	{ "POST", "/bind", 2, "" },
	{ "GET", "/healthz", 3, "" },
	{ "HEAD", "/healthz", 3, "" },       /* HEAD is a GET without the body */
	{ "HEAD", "/filter", -405, "POST" }, /* ...but not a POST */
	{ "GET", "/filter", -405, "POST" },
	{ "PUT", "/healthz", -405, "GET, HEAD" },
	{ "GET", "/debug/nodes", 5, "" },    /* the exact route */
	{ "GET", "/debug/nodes/n1", 6, "" }, /* the prefix route */
	{ "GET", "/debug/nodes/", 6, "" },
	{ "GET", "/debug/explain", -405, "POST" },
	{ "POST", "/debug/explain", 7, "" },
	{ "GET", "/debug/explain/ns/p", 8, "" }, /* the first of two GET prefix routes */
	{ "DELETE", "/debug/explain/ns/p", 9, "" },
	/* every method once, in table order, GET bringing HEAD */
	{ "POST", "/debug/explain/ns/p", -405, "GET, HEAD, DELETE" },
	{ "PATCH", "/any", 11, "" }, /* no method: any */
	{ "GET", "/any", 11, "" },
	{ "GET", "/nope", -404, "" },
	{ "GET", "/healthz/x", -404, "" }, /* exact paths match whole */
	{ "GET", "/healthzz", -404, "" },
	{ "GET", "/debug/node", -404, "" },
	{ "GET", "/", -404, "" },
	{ "GET", "", -404, "" },
	{ "POST", "/FILTER", -404, "" }, /* paths are case-sensitive */
};

START_TEST(test_routes_find)
{
	bool known = true;
	char allow[128];
	memset(allow, 'x', sizeof(allow));
	int want = cases[_i].want;
	const struct rf_http_route *rt = rf_http_route_find(
		table, N_TABLE, cases[_i].method, cases[_i].path, &known, allow, sizeof(allow));
	if (want >= 0) {
		ck_assert_msg(rt == &table[want], "%s %s: route %td, want %d", cases[_i].method,
			      cases[_i].path, rt ? rt - table : -1, want);
	} else {
		ck_assert_msg(rt == NULL, "%s %s: route %td, want none", cases[_i].method,
			      cases[_i].path, rt ? rt - table : -1);
		ck_assert_msg(known == (want == -405), "%s %s: known %d", cases[_i].method,
			      cases[_i].path, known);
		ck_assert_str_eq(allow, cases[_i].allow);
	}
}
END_TEST

/* The Allow list is cut to its buffer, always NUL-terminated, never overrun. */
START_TEST(test_routes_allow_bounded)
{
	bool known = false;
	char allow[12];
	memset(allow, 'x', sizeof(allow));
	ck_assert_ptr_null(
		rf_http_route_find(table, N_TABLE, "POST", "/debug/explain/a", &known, allow, 10));
	ck_assert(known);
	ck_assert_str_eq(allow, "GET, HEAD");
	ck_assert_int_eq(allow[10], 'x');
	ck_assert_int_eq(allow[11], 'x');
	/* an empty table knows nothing */
	ck_assert_ptr_null(rf_http_route_find(table, 0, "GET", "/healthz", &known, allow, 10));
	ck_assert(!known);
	ck_assert_str_eq(allow, "");
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * The body cap through a server
 */

#define CAP ((size_t)64 * 1024)

static unsigned long long
checksum(const char *p, size_t n)
{
	unsigned long long sum = 0;
	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)p[i];
	return sum & 0x7fffffffffffffffULL;
}

static int
h_echo(void *ud, const struct rf_http_request *req, struct rf_http_response *resp)
{
	/* the body is NUL-terminated for the handler */
	if (req->body[req->body_len] != '\0')
		return rf_http_reply_error(resp, 500, "body", "not NUL-terminated");
	return rf_http_reply_json(resp, 200,
				  json_pack("{s:I,s:I}", "len", (json_int_t)req->body_len, "sum",
					    (json_int_t)checksum(req->body, req->body_len)));
}

static const struct rf_http_route echo_routes[] = {
	{ "POST", "/echo", false, "echo", h_echo, NULL },
};

struct sink {
	char buf[4096];
	size_t len;
};

static size_t
on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;
	size_t room = sizeof(s->buf) - 1 - s->len;
	memcpy(s->buf + s->len, data, n < room ? n : room);
	s->len += n < room ? n : room;
	s->buf[s->len] = '\0';
	return n;
}

struct src {
	const char *p;
	size_t len, pos;
};

static size_t
on_read(char *dst, size_t size, size_t nmemb, void *ud)
{
	struct src *s = ud;
	size_t n = size * nmemb;
	if (n > 3000)
		n = 3000; /* chunks of odd sizes */
	if (n > s->len - s->pos)
		n = s->len - s->pos;
	memcpy(dst, s->p + s->pos, n);
	s->pos += n;
	return n;
}

/* POST n bytes of body to /echo, announced (Content-Length) or chunked; the status. */
static long
post(uint16_t port, const char *body, size_t n, bool chunked, struct sink *out)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/echo", port);
	CURL *c = curl_easy_init();
	ck_assert_ptr_nonnull(c);
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	struct src src = { body, n, 0 };
	memset(out, 0, sizeof(*out));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (chunked) {
		h = curl_slist_append(h, "Transfer-Encoding: chunked");
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &src);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
	} else {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	ck_assert_msg(rc == CURLE_OK, "curl: %s", curl_easy_strerror(rc));
	return status;
}

/* Sizes around where the buffer grows: under and over its 16 KiB start, doubling, the cap. */
static const size_t sizes[] = { 1, 16383, 16384, 16385, 40000, CAP - 1, CAP };

START_TEST(test_routes_body_up_to_the_cap)
{
	struct rf_http_options o = { .listen = "127.0.0.1:0",
				     .max_body_bytes = (int64_t)CAP,
				     .request_timeout_ms = 10000,
				     .threads = 1 };
	struct rf_http_server *s = NULL;
	char err[256];
	ck_assert_int_eq(rf_http_start(&o, echo_routes, 1, &s, err, sizeof(err)), 0);
	char *body = malloc(CAP + 2);
	ck_assert_ptr_nonnull(body);
	for (size_t i = 0; i < CAP + 2; i++)
		body[i] = (char)('a' + (i * 13) % 26);
	struct sink out;
	char want[128];
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int chunked = 0; chunked <= 1; chunked++) {
			ck_assert_int_eq(post(rf_http_port(s), body, sizes[k], chunked, &out), 200);
			snprintf(want, sizeof(want), "{\"len\":%zu,\"sum\":%llu}", sizes[k],
				 checksum(body, sizes[k]));
			ck_assert_str_eq(out.buf, want);
		}
	}
	/* one byte over: 413 either way (announced: before the body is read) */
	ck_assert_int_eq(post(rf_http_port(s), body, CAP + 1, false, &out), 413);
	ck_assert_ptr_nonnull(strstr(out.buf, "Content-Length 65537 exceeds server.maxBodyBytes"));
	ck_assert_int_eq(post(rf_http_port(s), body, CAP + 1, true, &out), 413);
	ck_assert_ptr_nonnull(strstr(out.buf, "the request body exceeds server.maxBodyBytes"));
	/* and the server goes on */
	ck_assert_int_eq(post(rf_http_port(s), body, 10, true, &out), 200);
	free(body);
	rf_http_stop(s);
}
END_TEST

static void
setup(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void
teardown(void)
{
	curl_global_cleanup();
}

Suite *routes_suite(void);

Suite *
routes_suite(void)
{
	Suite *s = suite_create("routes");
	TCase *tc = tcase_create("find");
	tcase_add_loop_test(tc, test_routes_find, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_routes_allow_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("body");
	tcase_set_timeout(tc, 30);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_routes_body_up_to_the_cap);
	suite_add_tcase(s, tc);
	return s;
}
