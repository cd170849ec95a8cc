/* The reflector's decisions without a network (server/kube/reflector_policy.c), from tables: the
 * RV and page size of each list (client-go's relistResourceVersion: "0" paginated, then the last
 * RV unpaginated, "" after an expired or too-large RV), the failed list's restart reason and
 * Retry-After, the watch request path, what each watch event does (apply, bookmark, skip, abort)
 * and how the end of each watch is classified (re-watch, back off, relist, stop; restart reason,
 * failure or routine, Retry-After). The I/O around them is covered by the integration tests
 * against the fake API server (test/fakeapi, suite integration). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "server/kube/reflector_policy.h"
#include "server/kube/watch_stream.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* the label or NULL, printable */
static const char *
str_or_null(const char *s)
{
	return s ? s : "(null)";
}

/* ---------------------------------------------------------------------------------------------
 * List
 */

static const struct list_rv_case {
	const char *name;
	bool rv_unavailable, synced, paginated_before;
	const char *last_rv;
	const char *want_rv;
	int want_page;
} list_rv_cases[] = {
	{ "first list: RV 0, paginated", false, false, false, "", "0", RF_LIST_PAGE_SIZE },
	{ "first list ignores a stale last RV", false, false, false, "77", "0", RF_LIST_PAGE_SIZE },
	{ "relist at the last RV, unpaginated", false, true, false, "10245", "10245", 0 },
	{ "relist at the last RV, paged after a paginated RV 0 list", false, true, true, "10245",
	  "10245", RF_LIST_PAGE_SIZE },
	{ "after 410: RV \"\", paginated", true, true, false, "10245", "", RF_LIST_PAGE_SIZE },
	{ "RV unavailable before the first list", true, false, false, "", "", RF_LIST_PAGE_SIZE },
	{ "RV unavailable wins over paginated_before", true, true, true, "10245", "",
	  RF_LIST_PAGE_SIZE },
};

START_TEST(test_reflector_list_rv)
{
	const struct list_rv_case *c = &list_rv_cases[_i];
	const char *rv = rf_list_rv(c->rv_unavailable, c->synced, c->last_rv);
	ck_assert_msg(!strcmp(rv, c->want_rv), "%s: rv \"%s\", want \"%s\"", c->name, rv,
		      c->want_rv);
	int page = rf_list_page_size(rv, c->paginated_before);
	ck_assert_msg(page == c->want_page, "%s: page size %d, want %d", c->name, page,
		      c->want_page);
}
END_TEST

START_TEST(test_reflector_list_rv_is_the_last_rv)
{
	/* the last RV is handed back, not copied: do_list copies it once */
	const char *last = "10245";
	ck_assert_ptr_eq(rf_list_rv(false, true, last), last);
}
END_TEST

static const struct retry_case {
	const char *name;
	long status;
	const char *reason, *body;
	bool want_too_large, want_retry;
} retry_cases[] = {
	{ "410 Expired", 410, "Expired",
	  "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410}", false, true },
	{ "410 without a reason", 410, "", NULL, false, true },
	{ "old-style Gone", 500, "Gone", NULL, false, true },
	{ "reason Expired on another status", 400, "Expired", NULL, false, true },
	{ "504 ResourceVersionTooLarge", 504, "Timeout",
	  "{\"kind\":\"Status\",\"message\":\"Too large resource version: 20000, current: 13002\","
	  "\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\","
	  "\"message\":\"Too large resource version\"}],\"retryAfterSeconds\":1},\"code\":504}",
	  true, true },
	{ "504 naming only the cause", 504, "Timeout",
	  "{\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\"}]},\"code\":504}",
	  true, true },
	{ "504 naming only the message", 504, "", "Too large resource version: 20000", true, true },
	{ "504 another timeout", 504, "Timeout", "{\"reason\":\"Timeout\",\"code\":504}", false,
	  false },
	{ "504 without a body", 504, "", NULL, false, false },
	{ "ResourceVersionTooLarge on a 500 is not", 500, "InternalError",
	  "ResourceVersionTooLarge", false, false },
	{ "500 InternalError", 500, "InternalError", NULL, false, false },
	{ "429", 429, "", "Too many requests, please try again later.", false, false },
	{ "403", 403, "Forbidden", NULL, false, false },
};

START_TEST(test_reflector_list_retry_without_rv)
{
	const struct retry_case *c = &retry_cases[_i];
	bool too_large = rf_list_rv_too_large(c->status, c->body);
	ck_assert_msg(too_large == c->want_too_large, "%s: too large %d, want %d", c->name,
		      too_large, c->want_too_large);
	bool retry = rf_list_retry_without_rv(c->status, c->reason, too_large);
	ck_assert_msg(retry == c->want_retry, "%s: retry without RV %d, want %d", c->name, retry,
		      c->want_retry);
}
END_TEST

static const struct list_failure_case {
	int rc;
	long status;
	int retry_after;
	const char *want_reason;
	int want_retry_after;
} list_failure_cases[] = {
	{ 1, 429, 3, "http-429", 3 },
	{ 1, 429, -1, "http-429", -1 },
	{ 1, 503, 1, "http-5xx", 1 },
	{ 1, 500, -1, "http-5xx", -1 },
	{ 1, 504, 1, "http-5xx", 1 },
	{ 1, 410, 5, "expired", -1 },
	{ 1, 403, 5, "http-4xx", -1 },
	{ 1, 404, -1, "http-4xx", -1 },
	{ -ECONNREFUSED, 0, -1, "connect", -1 },
	{ -EHOSTUNREACH, 0, -1, "connect", -1 },
	{ -ETIMEDOUT, 0, -1, "timeout", -1 },
	{ -ECONNRESET, 0, -1, "closed", -1 },
	{ -EPROTO, 0, 3, "error", -1 },
	{ -ENOMEM, 0, -1, "error", -1 },
};

START_TEST(test_reflector_list_failure)
{
	const struct list_failure_case *c = &list_failure_cases[_i];
	int retry_after = 12345;
	const char *reason = rf_list_failure(c->rc, c->status, c->retry_after, &retry_after);
	ck_assert_msg(!strcmp(reason, c->want_reason), "rc %d status %ld: reason %s, want %s",
		      c->rc, c->status, reason, c->want_reason);
	ck_assert_msg(retry_after == c->want_retry_after,
		      "rc %d status %ld: Retry-After %d, want %d", c->rc, c->status, retry_after,
		      c->want_retry_after);
}
END_TEST

/* The RVs of a reflector's lists over its life, with the state changes do_list makes between
 * them: "0" (paginated) → the last RV (unpaginated) → 410 → "" at once (with the page size of
 * the list that failed, as client-go's pager) → a later list after a failure at "" (paginated)
 * → back to the last RV once a list succeeded. */
START_TEST(test_reflector_list_rv_sequence)
{
	bool synced = false, unavailable = false, paginated_before = false;
	char last_rv[128] = "";

	/* 1: the first list, answered whole from the watch cache (limit ignored) */
	const char *rv = rf_list_rv(unavailable, synced, last_rv);
	ck_assert_str_eq(rv, "0");
	ck_assert_int_eq(rf_list_page_size(rv, paginated_before), RF_LIST_PAGE_SIZE);
	bool paginated = false;
	if (!strcmp(rv, "0") && paginated)
		paginated_before = true;
	snprintf(last_rv, sizeof(last_rv), "%s", "10245");
	synced = true;

	/* watch events move the last RV on; a 410 ends the watch: relist */
	snprintf(last_rv, sizeof(last_rv), "%s", "11873");

	/* 2: the relist at the last RV, unpaginated; answered 410 */
	rv = rf_list_rv(unavailable, synced, last_rv);
	ck_assert_str_eq(rv, "11873");
	int page = rf_list_page_size(rv, paginated_before);
	ck_assert_int_eq(page, 0);
	ck_assert(rf_list_retry_without_rv(410, "Expired", rf_list_rv_too_large(410, NULL)));
	unavailable = true;

	/* 3: at once, RV "" with the same page size; say it fails with a 503 */
	rv = rf_list_rv(unavailable, synced, last_rv);
	ck_assert_str_eq(rv, "");
	int retry_after;
	ck_assert_str_eq(rf_list_failure(1, 503, 1, &retry_after), "http-5xx");
	ck_assert_int_eq(retry_after, 1);

	/* 4: after the backoff, still "", now paginated; it succeeds at 13002 */
	rv = rf_list_rv(unavailable, synced, last_rv);
	ck_assert_str_eq(rv, "");
	ck_assert_int_eq(rf_list_page_size(rv, paginated_before), RF_LIST_PAGE_SIZE);
	snprintf(last_rv, sizeof(last_rv), "%s", "13002");
	unavailable = false;

	/* 5: the next relist is at the last RV again */
	rv = rf_list_rv(unavailable, synced, last_rv);
	ck_assert_str_eq(rv, "13002");
	ck_assert_int_eq(rf_list_page_size(rv, paginated_before), 0);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Watch request path
 */

#define PODS_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"

static const struct path_case {
	const char *base, *field_selector, *rv;
	long timeout_s;
	const char *want;
} path_cases[] = {
	{ "/api/v1/pods", PODS_SELECTOR, "10245", 412,
	  "/api/v1/pods?allowWatchBookmarks=true&fieldSelector=status.phase%21%3DSucceeded%2C"
	  "status.phase%21%3DFailed&resourceVersion=10245&timeoutSeconds=412&watch=true" },
	{ "/api/v1/nodes", NULL, "10245", 412,
	  "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=10245&timeoutSeconds=412"
	  "&watch=true" },
	{ "/apis/resource.k8s.io/v1/resourceslices", NULL, "9811", 1,
	  "/apis/resource.k8s.io/v1/resourceslices?allowWatchBookmarks=true&resourceVersion=9811"
	  "&timeoutSeconds=1&watch=true" },
	{ "/api/v1/nodes", NULL, "", 599,
	  "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=&timeoutSeconds=599"
	  "&watch=true" },
	{ "/api/v1/nodes", NULL, "a b&c", 300,
	  "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=a%20b%26c&timeoutSeconds=300"
	  "&watch=true" },
};

START_TEST(test_reflector_watch_path)
{
	const struct path_case *c = &path_cases[_i];
	char buf[512];
	ck_assert_int_eq(
		rf_watch_path(buf, sizeof(buf), c->base, c->field_selector, c->rv, c->timeout_s),
		0);
	ck_assert_str_eq(buf, c->want);

	/* the exact size fits; one byte less does not */
	size_t need = strlen(c->want) + 1;
	ck_assert_int_eq(rf_watch_path(buf, need, c->base, c->field_selector, c->rv, c->timeout_s),
			 0);
	ck_assert_str_eq(buf, c->want);
	ck_assert_int_eq(
		rf_watch_path(buf, need - 1, c->base, c->field_selector, c->rv, c->timeout_s),
		-ENAMETOOLONG);
}
END_TEST

START_TEST(test_reflector_path_too_small)
{
	char buf[16];
	ck_assert_int_eq(rf_watch_path(buf, 0, "/api/v1/nodes", NULL, "1", 300), -ENAMETOOLONG);
	ck_assert_int_eq(rf_watch_path(buf, 8, "/api/v1/nodes", NULL, "1", 300), -ENAMETOOLONG);
	ck_assert_int_eq(rf_watch_path(buf, sizeof(buf), "/api/v1/nodes", NULL, "1", 300),
			 -ENAMETOOLONG);

	char path[64] = "/api/v1/pods";
	ck_assert_int_eq(rf_path_add_param(path, sizeof(path), "limit", "500"), 0);
	ck_assert_int_eq(rf_path_add_param(path, sizeof(path), "continue", "a=b"), 0);
	ck_assert_str_eq(path, "/api/v1/pods?limit=500&continue=a%3Db");
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Watch events
 */

static const struct event_case {
	const char *name;
	const char *line;
	size_t rv_max;
	enum rf_event_action want;
	const char *want_rv;
} event_cases[] = {
	{ "ADDED",
	  "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
	  "\"resourceVersion\":\"10596\"}}}",
	  128, RF_EVENT_APPLY, "10596" },
	{ "MODIFIED",
	  "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
	  "\"resourceVersion\":\"11020\"}}}",
	  128, RF_EVENT_APPLY, "11020" },
	{ "DELETED",
	  "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p0\","
	  "\"resourceVersion\":\"11021\"}}}",
	  128, RF_EVENT_APPLY, "11021" },
	{ "BOOKMARK: the RV only",
	  "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
	  "{\"resourceVersion\":\"12746\"},\"spec\":{\"containers\":null},\"status\":{}}}",
	  128, RF_EVENT_BOOKMARK, "12746" },
	{ "ERROR 410: abort",
	  "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	  "\"status\":\"Failure\",\"message\":\"too old resource version: 10245 (11873)\","
	  "\"reason\":\"Expired\",\"code\":410}}",
	  128, RF_EVENT_ABORT, NULL },
	{ "ERROR with an RV: abort, RV not taken",
	  "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"metadata\":{\"resourceVersion\":"
	  "\"99999\"},\"code\":500}}",
	  128, RF_EVENT_ABORT, NULL },
	{ "another kind: skip",
	  "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
	  "\"resourceVersion\":\"10600\"}}}",
	  128, RF_EVENT_SKIP, NULL },
	{ "a bookmark of another kind: skip",
	  "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"resourceVersion\":"
	  "\"12000\"}}}",
	  128, RF_EVENT_SKIP, NULL },
	{ "no kind: taken as the right one",
	  "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p2\",\"resourceVersion\":"
	  "\"10700\"}}}",
	  128, RF_EVENT_APPLY, "10700" },
	{ "no RV: applied, RV kept",
	  "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\"}}}",
	  128, RF_EVENT_APPLY, NULL },
	{ "RV that does not fit: applied, RV kept",
	  "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
	  "\"resourceVersion\":\"12345\"}}}",
	  5, RF_EVENT_APPLY, NULL },
	{ "RV that just fits",
	  "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
	  "\"resourceVersion\":\"1234\"}}}",
	  5, RF_EVENT_APPLY, "1234" },
};

static const char *const action_names[] = { "APPLY", "BOOKMARK", "SKIP", "ABORT" };

static void
decode(const char *line, struct rf_watch_event *ev)
{
	char err[256];
	int rc = rf_watch_event_decode(line, strlen(line), ev, err, sizeof(err));
	ck_assert_msg(rc == 0, "cannot decode %s: %s", line, err);
}

START_TEST(test_reflector_event_action)
{
	const struct event_case *c = &event_cases[_i];
	struct rf_watch_event ev;
	const char *rv = "(untouched)";
	decode(c->line, &ev);
	enum rf_event_action a = rf_watch_event_action(&ev, "Pod", c->rv_max, &rv);
	ck_assert_msg(a == c->want, "%s: %s, want %s", c->name, action_names[a],
		      action_names[c->want]);
	if (c->want_rv)
		ck_assert_msg(rv && !strcmp(rv, c->want_rv), "%s: rv %s, want %s", c->name,
			      str_or_null(rv), c->want_rv);
	else
		ck_assert_msg(!rv, "%s: rv %s, want none", c->name, str_or_null(rv));
	rf_watch_event_release(&ev);
}
END_TEST

/* A stream folded through the decisions as on_event does: bookmarks advance the RV without a
 * store change, a foreign object changes nothing, an ERROR stops the stream before anything
 * after it. */
START_TEST(test_reflector_event_stream)
{
	static const char *const lines[] = {
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
		"\"resourceVersion\":\"10596\"}}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{"
		"\"resourceVersion\":\"12746\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
		"\"resourceVersion\":\"12800\"}}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{"
		"\"resourceVersion\":\"13000\"}}}",
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"reason\":\"Expired\","
		"\"code\":410}}",
		"{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
		"\"resourceVersion\":\"13100\"}}}",
	};
	/* the last RV after each line, and how many events reached the store */
	static const char *const want_rv[] = { "10596", "12746", "12746", "13000", "13000" };
	static const int want_applied[] = { 1, 1, 1, 1, 1 };
	char last_rv[128] = "10245";
	int applied = 0;
	size_t i;
	for (i = 0; i < N_ELEMS(lines); i++) {
		struct rf_watch_event ev;
		const char *rv;
		decode(lines[i], &ev);
		enum rf_event_action a = rf_watch_event_action(&ev, "Pod", sizeof(last_rv), &rv);
		if (rv)
			snprintf(last_rv, sizeof(last_rv), "%s", rv);
		if (a == RF_EVENT_APPLY)
			applied++;
		rf_watch_event_release(&ev);
		if (a == RF_EVENT_ABORT)
			break;
		ck_assert_msg(!strcmp(last_rv, want_rv[i]), "line %zu: rv %s, want %s", i, last_rv,
			      want_rv[i]);
		ck_assert_msg(applied == want_applied[i], "line %zu: %d applied, want %d", i,
			      applied, want_applied[i]);
	}
	ck_assert_uint_eq(i, 4); /* stopped at the ERROR, the DELETED after it never seen */
	ck_assert_str_eq(last_rv, "13000");
	ck_assert_int_eq(applied, 1);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * The end of a watch
 */

#define REWATCH  RF_NEXT_REWATCH
#define BACKOFF  RF_NEXT_BACKOFF_REWATCH
#define RELIST   RF_NEXT_RELIST
#define STOP     RF_NEXT_STOP
#define D_NONE   RF_DETAIL_NONE
#define D_STREAM RF_DETAIL_STREAM
#define D_BROKEN RF_DETAIL_BROKEN
#define D_SHORT  RF_DETAIL_SHORT
#define D_TRANSP RF_DETAIL_TRANSPORT
#define D_HTTP   RF_DETAIL_HTTP

static const struct end_case {
	const char *name;
	struct rf_watch_end end;
	struct rf_watch_verdict want;
} end_cases[] = {
	/* stopping */
	{ "stopping before any answer",
	  { .rc = -ECANCELED, .status = 0, .retry_after = -1, .elapsed = 0.1, .timeout_s = 412 },
	  { STOP, NULL, false, -1, false, D_NONE } },
	{ "stopping during a stream",
	  { .rc = -ECANCELED,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 30,
	    .timeout_s = 412,
	    .n_events = 4 },
	  { STOP, NULL, false, -1, false, D_NONE } },

	/* ERROR events in a 200 stream (the callback aborts the transfer) */
	{ "ERROR 410 Expired",
	  { .rc = -ECONNABORTED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 410,
	    .err_reason = "Expired",
	    .elapsed = 0.01,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { RELIST, "expired", true, -1, false, D_STREAM } },
	{ "ERROR 410 without a reason, mid-stream",
	  { .rc = -ECONNABORTED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 410,
	    .err_reason = "",
	    .elapsed = 40,
	    .timeout_s = 412,
	    .n_events = 9 },
	  { RELIST, "expired", true, -1, false, D_STREAM } },
	{ "ERROR old-style Gone without a code",
	  { .rc = -ECONNABORTED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 0,
	    .err_reason = "Gone",
	    .elapsed = 1,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { RELIST, "expired", true, -1, false, D_STREAM } },
	{ "ERROR 429: back off, watch again",
	  { .rc = -ECONNABORTED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 429,
	    .err_reason = "TooManyRequests",
	    .elapsed = 0.2,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { BACKOFF, "http-429", true, -1, false, D_STREAM } },
	{ "ERROR 500 InternalError",
	  { .rc = -ECONNABORTED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 500,
	    .err_reason = "InternalError",
	    .elapsed = 3,
	    .timeout_s = 412,
	    .n_events = 2 },
	  { RELIST, "error", true, -1, false, D_STREAM } },
	{ "ERROR event even when stopping",
	  { .rc = -ECANCELED,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_ERROR_EVENT,
	    .err_code = 410,
	    .err_reason = "Expired",
	    .elapsed = 3,
	    .timeout_s = 412,
	    .n_events = 2 },
	  { RELIST, "expired", true, -1, false, D_STREAM } },

	/* broken streams */
	{ "garbage line",
	  { .rc = -EPROTO,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_GARBAGE,
	    .elapsed = 2,
	    .timeout_s = 412,
	    .n_events = 3 },
	  { RELIST, "garbage", true, -1, false, D_BROKEN } },
	{ "oversize event",
	  { .rc = -EMSGSIZE,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_OVERSIZE,
	    .elapsed = 2,
	    .timeout_s = 412 },
	  { RELIST, "oversize", true, -1, false, D_STREAM } },
	{ "the store out of memory",
	  { .rc = -ENOMEM,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_STORE,
	    .elapsed = 2,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { RELIST, "error", true, -1, false, D_STREAM } },

	/* ends of a 200 stream */
	{ "clean end at timeoutSeconds",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 411.6,
	    .timeout_s = 412,
	    .n_events = 7 },
	  { REWATCH, "timeout", false, -1, true, D_NONE } },
	{ "clean end at timeoutSeconds without any event",
	  { .rc = 0, .status = 200, .retry_after = -1, .elapsed = 412.0, .timeout_s = 412 },
	  { REWATCH, "timeout", false, -1, true, D_NONE } },
	{ "clean end exactly 1 s before timeoutSeconds",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 411.0,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { REWATCH, "timeout", false, -1, true, D_NONE } },
	{ "clean end just over 1 s early: closed",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 410.99,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { REWATCH, "closed", false, -1, true, D_NONE } },
	{ "clean end long before timeoutSeconds",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 30,
	    .timeout_s = 412,
	    .n_events = 2 },
	  { REWATCH, "closed", false, -1, true, D_NONE } },
	{ "idle limit",
	  { .rc = -ETIMEDOUT, .status = 200, .retry_after = -1, .elapsed = 90, .timeout_s = 412 },
	  { REWATCH, "timeout", false, -1, true, D_NONE } },
	{ "connection dropped after events",
	  { .rc = -ECONNRESET,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 5,
	    .timeout_s = 412,
	    .n_events = 2 },
	  { REWATCH, "closed", false, -1, true, D_NONE } },
	{ "connection dropped inside an event",
	  { .rc = -ECONNRESET,
	    .status = 200,
	    .retry_after = -1,
	    .pending = true,
	    .elapsed = 5,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { REWATCH, "truncated", false, -1, true, D_NONE } },
	{ "an incomplete event at a clean end",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .pending = true,
	    .elapsed = 412,
	    .timeout_s = 412,
	    .n_events = 3 },
	  { REWATCH, "truncated", false, -1, true, D_NONE } },
	{ "a quick end with an event is no short watch",
	  { .rc = 0,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 0.3,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { REWATCH, "closed", false, -1, true, D_NONE } },
	{ "a short watch: under 1 s, no event",
	  { .rc = 0, .status = 200, .retry_after = -1, .elapsed = 0.2, .timeout_s = 412 },
	  { RELIST, "short", true, -1, false, D_SHORT } },
	{ "a short watch dropped",
	  { .rc = -ECONNRESET,
	    .status = 200,
	    .retry_after = -1,
	    .elapsed = 0.05,
	    .timeout_s = 412 },
	  { RELIST, "short", true, -1, false, D_SHORT } },
	{ "a short watch with only part of an event",
	  { .rc = -ECONNRESET,
	    .status = 200,
	    .retry_after = -1,
	    .pending = true,
	    .elapsed = 0.1,
	    .timeout_s = 412 },
	  { RELIST, "short", true, -1, false, D_SHORT } },
	{ "a 1 s timeoutSeconds ending in under 1 s is short",
	  { .rc = 0, .status = 200, .retry_after = -1, .elapsed = 0.99, .timeout_s = 1 },
	  { RELIST, "short", true, -1, false, D_SHORT } },
	{ "another 2xx streams too",
	  { .rc = 0,
	    .status = 203,
	    .retry_after = -1,
	    .elapsed = 60,
	    .timeout_s = 412,
	    .n_events = 1 },
	  { REWATCH, "closed", false, -1, true, D_NONE } },

	{ "the resourceVersion went backwards: relist",
	  { .rc = -ESTALE,
	    .status = 200,
	    .retry_after = -1,
	    .failure = RF_SF_RV_RESET,
	    .elapsed = 3,
	    .timeout_s = 412,
	    .n_events = 4 },
	  { RELIST, "rv-reset", true, -1, false, D_STREAM } },

	/* no response */
	{ "connection refused: back off, watch again",
	  { .rc = -ECONNREFUSED,
	    .status = 0,
	    .retry_after = -1,
	    .elapsed = 0.001,
	    .timeout_s = 412 },
	  { BACKOFF, "connect", true, -1, false, D_TRANSP } },
	{ "cannot resolve",
	  { .rc = -EHOSTUNREACH,
	    .status = 0,
	    .retry_after = -1,
	    .elapsed = 0.01,
	    .timeout_s = 412 },
	  { RELIST, "connect", true, -1, false, D_TRANSP } },
	{ "no answer",
	  { .rc = -ETIMEDOUT, .status = 0, .retry_after = -1, .elapsed = 90, .timeout_s = 412 },
	  { RELIST, "timeout", true, -1, false, D_TRANSP } },
	{ "connection closed before the headers",
	  { .rc = -ECONNRESET, .status = 0, .retry_after = -1, .elapsed = 0.5, .timeout_s = 412 },
	  { RELIST, "closed", true, -1, false, D_TRANSP } },
	{ "TLS or a broken response",
	  { .rc = -EPROTO, .status = 0, .retry_after = -1, .elapsed = 0.5, .timeout_s = 412 },
	  { RELIST, "error", true, -1, false, D_TRANSP } },
	{ "an error status whose body broke off",
	  { .rc = -ECONNRESET, .status = 503, .retry_after = 5, .elapsed = 0.5, .timeout_s = 412 },
	  { RELIST, "closed", true, -1, false, D_TRANSP } },

	/* error statuses */
	{ "HTTP 410 at watch start",
	  { .rc = 0, .status = 410, .retry_after = -1, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "expired", true, -1, false, D_HTTP } },
	{ "HTTP 429 with Retry-After",
	  { .rc = 0, .status = 429, .retry_after = 3, .elapsed = 0.01, .timeout_s = 412 },
	  { BACKOFF, "http-429", true, 3, false, D_HTTP } },
	{ "HTTP 429 without Retry-After",
	  { .rc = 0, .status = 429, .retry_after = -1, .elapsed = 0.01, .timeout_s = 412 },
	  { BACKOFF, "http-429", true, -1, false, D_HTTP } },
	{ "HTTP 503 with Retry-After",
	  { .rc = 0, .status = 503, .retry_after = 1, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "http-5xx", true, 1, false, D_HTTP } },
	{ "HTTP 500",
	  { .rc = 0, .status = 500, .retry_after = -1, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "http-5xx", true, -1, false, D_HTTP } },
	{ "HTTP 403 ignores Retry-After",
	  { .rc = 0, .status = 403, .retry_after = 5, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "http-4xx", true, -1, false, D_HTTP } },
	{ "HTTP 404 (no resource.k8s.io/v1)",
	  { .rc = 0, .status = 404, .retry_after = -1, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "http-4xx", true, -1, false, D_HTTP } },
	{ "HTTP 422",
	  { .rc = 0, .status = 422, .retry_after = -1, .elapsed = 0.01, .timeout_s = 412 },
	  { RELIST, "http-4xx", true, -1, false, D_HTTP } },
};

static const char *const next_names[] = { "REWATCH", "BACKOFF_REWATCH", "RELIST", "STOP" };

START_TEST(test_reflector_watch_classify)
{
	const struct end_case *c = &end_cases[_i];
	struct rf_watch_verdict v = rf_watch_classify(&c->end);
	ck_assert_msg(v.next == c->want.next, "%s: next %s, want %s", c->name, next_names[v.next],
		      next_names[c->want.next]);
	ck_assert_msg((!v.reason && !c->want.reason) ||
			      (v.reason && c->want.reason && !strcmp(v.reason, c->want.reason)),
		      "%s: reason %s, want %s", c->name, str_or_null(v.reason),
		      str_or_null(c->want.reason));
	ck_assert_msg(v.failure == c->want.failure, "%s: failure %d, want %d", c->name, v.failure,
		      c->want.failure);
	ck_assert_msg(v.retry_after == c->want.retry_after, "%s: Retry-After %d, want %d", c->name,
		      v.retry_after, c->want.retry_after);
	ck_assert_msg(v.healthy == c->want.healthy, "%s: healthy %d, want %d", c->name, v.healthy,
		      c->want.healthy);
	ck_assert_msg(v.detail == c->want.detail, "%s: detail %d, want %d", c->name, v.detail,
		      c->want.detail);
	/* a failure always says why; a routine restart never carries a failure text */
	ck_assert_msg(v.failure == (v.detail != RF_DETAIL_NONE), "%s: failure/detail disagree",
		      c->name);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Recovery: backoff delays, Retry-After, resourceVersions going backwards, the RV check
 */

static const struct delay_case {
	double backoff;
	int retry_after;
	double want;
} delay_cases[] = {
	{ 0.8, -1, 0.8 },   /* no Retry-After */
	{ 3.2, 1, 3.2 },    /* a shorter Retry-After does not shorten the backoff */
	{ 1.6, 5, 5 },      /* a longer one wins */
	{ 4.0, 30, 30 },    /* also above the backoff's cap */
	{ 4.0, 3600, 120 }, /* within reason */
};

START_TEST(test_reflector_backoff_delay)
{
	const struct delay_case *c = &delay_cases[_i];
	ck_assert_double_eq_tol(rf_backoff_delay(c->backoff, c->retry_after), c->want, 1e-9);
}
END_TEST

/* The sequence of delays over a fault storm stays within 6 s; a fault that clears is seen
 * within 10 s of clearing whatever the jitter. */
START_TEST(test_reflector_backoff_bounded)
{
	struct rf_backoff b;
	rf_backoff_init(&b);
	double t = 0, worst = 0;
	for (int i = 0; i < 200; i++) {
		double d = rf_backoff_delay(rf_backoff_step(&b, t, (double)(i % 10) / 10.0), -1);
		worst = d > worst ? d : worst;
		t += d;
	}
	ck_assert_msg(worst <= 6.0, "a delay of %.2f s", worst);
	ck_assert_msg(worst >= 4.0, "the cap is never reached: %.2f s", worst);
}
END_TEST

static const struct backwards_case {
	const char *last, *now;
	bool want;
} backwards_cases[] = {
	{ "5000", "3001", true },    { "5000", "5000", false },  { "5000", "5001", false },
	{ "10000", "9999", true },   { "9999", "10000", false }, { "", "3", false },
	{ NULL, "3", false },        { "5000", "abc", false },   { "opaque", "3", false },
	{ "0005000", "4999", true },
};

START_TEST(test_reflector_rv_went_backwards)
{
	const struct backwards_case *c = &backwards_cases[_i];
	ck_assert_msg(rf_rv_went_backwards(c->last, c->now) == c->want, "%s -> %s",
		      str_or_null(c->last), c->now);
}
END_TEST

START_TEST(test_reflector_check_rv)
{
	struct rf_watch_verdict v = { .next = RF_NEXT_REWATCH, .reason = "timeout" };
	ck_assert(!rf_watch_check_rv(&v)); /* the routine end of a watch */
	v.reason = "closed";
	ck_assert(rf_watch_check_rv(&v)); /* a dropped connection: the server may be another */
	v.reason = "truncated";
	ck_assert(rf_watch_check_rv(&v));
	v = (struct rf_watch_verdict){ .next = RF_NEXT_BACKOFF_REWATCH, .reason = "connect" };
	ck_assert(rf_watch_check_rv(&v));
	v.next = RF_NEXT_RELIST; /* the list compares */
	ck_assert(!rf_watch_check_rv(&v));
	v.next = RF_NEXT_STOP;
	ck_assert(!rf_watch_check_rv(&v));
}
END_TEST

Suite *reflector_suite(void);

Suite *
reflector_suite(void)
{
	Suite *s = suite_create("reflector");
	TCase *tc = tcase_create("list");
	tcase_add_loop_test(tc, test_reflector_list_rv, 0, (int)N_ELEMS(list_rv_cases));
	tcase_add_test(tc, test_reflector_list_rv_is_the_last_rv);
	tcase_add_loop_test(tc, test_reflector_list_retry_without_rv, 0, (int)N_ELEMS(retry_cases));
	tcase_add_loop_test(tc, test_reflector_list_failure, 0, (int)N_ELEMS(list_failure_cases));
	tcase_add_test(tc, test_reflector_list_rv_sequence);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch");
	tcase_add_loop_test(tc, test_reflector_watch_path, 0, (int)N_ELEMS(path_cases));
	tcase_add_test(tc, test_reflector_path_too_small);
	tcase_add_loop_test(tc, test_reflector_event_action, 0, (int)N_ELEMS(event_cases));
	tcase_add_test(tc, test_reflector_event_stream);
	tcase_add_loop_test(tc, test_reflector_watch_classify, 0, (int)N_ELEMS(end_cases));
	tcase_add_loop_test(tc, test_reflector_backoff_delay, 0, (int)N_ELEMS(delay_cases));
	tcase_add_test(tc, test_reflector_backoff_bounded);
	tcase_add_loop_test(tc, test_reflector_rv_went_backwards, 0, (int)N_ELEMS(backwards_cases));
	tcase_add_test(tc, test_reflector_check_rv);
	suite_add_tcase(s, tc);
	return s;
}
