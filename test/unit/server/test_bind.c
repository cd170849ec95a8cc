/* The binder (server/kube/bind.c) against a tiny in-process API server on 127.0.0.1:0: the
 * Binding it sends (path, content type, body byte for byte as kube-scheduler's DefaultBinder),
 * how it reads the answer (201, 409 on the same or another node, 404, 403, 422, 5xx, a dropped
 * connection that is retried once, a timeout), the ExtenderBindingResult it replies with, the
 * railfit_bind_total{result} counter, and the placement it records in the store. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>

#include "alloc/cel/cel.h"
#include "config/config.h"
#include "server/http/metrics.h"
#include "server/kube/bind.h"
#include "server/kube/cache.h"
#include "server/kube/kube.h"
#include "server/kube/store.h"

/* What the fake API server answers to the next POSTs. */
enum answer {
	ANSWER_CREATED,     /* 201 with the Binding */
	ANSWER_CONFLICT,    /* 409: already assigned to node "n1" */
	ANSWER_NOT_FOUND,   /* 404 Status */
	ANSWER_FORBIDDEN,   /* 403 Status */
	ANSWER_INVALID,     /* 422 Status, with a '%' in the message */
	ANSWER_UNAVAILABLE, /* 503 text body */
	ANSWER_DROP_ONCE,   /* close the first connection without a reply, then 201 */
	ANSWER_SLOW,        /* 201 after 1.5 s */
};

struct apiserver {
	struct MHD_Daemon *d;
	uint16_t port;
	enum answer answer;
	atomic_int posts;
	char method[16], path[256], ctype[128], body[2048];
};

struct upload {
	char buf[2048];
	size_t len;
};

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned code, const char *ctype, const char *body)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", ctype);
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

#define STATUS(code, reason, msg)                                                                  \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","       \
	"\"message\":\"" msg "\",\"reason\":\"" reason "\",\"code\":" #code "}"

static enum MHD_Result
handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct apiserver *as = cls;
	if (!*con_cls) {
		*con_cls = calloc(1, sizeof(struct upload));
		return *con_cls ? MHD_YES : MHD_NO;
	}
	struct upload *u = *con_cls;
	if (*upload_size) {
		size_t room = sizeof(u->buf) - 1 - u->len;
		size_t n = *upload_size < room ? *upload_size : room;
		memcpy(u->buf + u->len, upload_data, n);
		u->len += n;
		*upload_size = 0;
		return MHD_YES;
	}
	u->buf[u->len] = '\0';
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	snprintf(as->method, sizeof(as->method), "%s", method);
	snprintf(as->path, sizeof(as->path), "%s", url);
	snprintf(as->ctype, sizeof(as->ctype), "%s", ct ? ct : "");
	snprintf(as->body, sizeof(as->body), "%s", u->buf);
	int n = atomic_fetch_add(&as->posts, 1);
	switch (as->answer) {
	case ANSWER_CREATED:
		return reply(c, 201, "application/json", u->buf);
	case ANSWER_CONFLICT:
		return reply(
			c, 409, "application/json",
			STATUS(409, "Conflict",
			       "Operation cannot be fulfilled on pods/binding \\\"p1\\\": pod p1 "
			       "is already assigned to node \\\"n1\\\""));
	case ANSWER_NOT_FOUND:
		return reply(c, 404, "application/json",
			     STATUS(404, "NotFound", "pods \\\"p1\\\" not found"));
	case ANSWER_FORBIDDEN:
		return reply(c, 403, "application/json",
			     STATUS(403, "Forbidden",
				    "pods \\\"p1\\\" is forbidden: User \\\"u\\\" cannot create "
				    "resource \\\"pods/binding\\\""));
	case ANSWER_INVALID:
		return reply(c, 422, "application/json",
			     STATUS(422, "Invalid", "100% of the node is taken"));
	case ANSWER_UNAVAILABLE:
		return reply(c, 503, "text/plain", "service unavailable\n");
	case ANSWER_DROP_ONCE:
		if (n == 0)
			return MHD_NO; /* MHD closes the connection without a reply */
		return reply(c, 201, "application/json", u->buf);
	case ANSWER_SLOW:
		nanosleep(&(struct timespec){ 1, 500 * 1000 * 1000 }, NULL);
		return reply(c, 201, "application/json", u->buf);
	}
	return MHD_NO;
}

static void
completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
	free(*con_cls);
	*con_cls = NULL;
}

/* The binder with everything it needs: a kube client pointing at the fake API server, and a
 * store (with its cache) that records the assumed placements. */
struct fixture {
	struct apiserver as;
	char dir[32], kubeconfig[64];
	struct rf_kube *kube;
	struct rf_config cfg;
	struct rf_cache *cache;
	struct rf_cel_cache *cel;
	struct rf_store *store;
	struct rf_binder *binder;
};

static void
fixture_start(struct fixture *f, enum answer answer, long timeout_ms)
{
	memset(f, 0, sizeof(*f));
	f->as.answer = answer;
	f->as.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				   0, NULL, NULL, handler, &f->as, MHD_OPTION_NOTIFY_COMPLETED,
				   completed, NULL, MHD_OPTION_END);
	ck_assert_ptr_nonnull(f->as.d);
	f->as.port = MHD_get_daemon_info(f->as.d, MHD_DAEMON_INFO_BIND_PORT)->port;

	snprintf(f->dir, sizeof(f->dir), "/tmp/rf-bind-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->kubeconfig, sizeof(f->kubeconfig), "%s/kubeconfig", f->dir);
	FILE *kc = fopen(f->kubeconfig, "w");
	ck_assert_ptr_nonnull(kc);
	fprintf(kc,
		"clusters: [{name: s, cluster: {server: 'http://127.0.0.1:%u'}}]\n"
		"contexts: [{name: c, context: {cluster: s}}]\ncurrent-context: c\n",
		f->as.port);
	fclose(kc);
	char err[1024];
	struct rf_kube_options ko = { .kubeconfig = f->kubeconfig,
				      .qps = 1000,
				      .user_agent = "railfit/test" };
	ck_assert_int_eq(rf_kube_new(&ko, &f->kube, err, sizeof(err)), 0);

	rf_config_init(&f->cfg);
	f->cache = rf_cache_new();
	f->cel = rf_cel_cache_new();
	struct rf_store_options so = {
		.cache = f->cache, .cfg = &f->cfg, .cel = f->cel, .min_interval_ms = 10
	};
	ck_assert_int_eq(rf_store_new(&so, &f->store), 0);
	struct rf_binder_options bo = {
		.kube = f->kube, .store = f->store, .assume_ttl_ms = 30000, .timeout_ms = timeout_ms
	};
	ck_assert_int_eq(rf_binder_new(&bo, &f->binder), 0);
	rf_metrics_reset();
	rf_metrics_declare_railfit("test", "test");
}

static void
fixture_stop(struct fixture *f)
{
	rf_binder_free(f->binder);
	rf_store_free(f->store);
	rf_cache_free(f->cache);
	rf_cel_cache_free(f->cel);
	rf_config_release(&f->cfg);
	rf_kube_free(f->kube);
	MHD_stop_daemon(f->as.d);
	unlink(f->kubeconfig);
	rmdir(f->dir);
}

static const char bind_args[] =
	"{\"PodName\":\"p1\",\"PodNamespace\":\"ns\",\"PodUID\":\"u1\",\"Node\":\"n1\"}";

/* POST /bind with body; returns the reply's Error field (malloc'd) and checks the status. */
static char *
do_bind(struct fixture *f, const char *body, int want_status)
{
	struct rf_http_request req = { .method = "POST",
				       .path = "/bind",
				       .subpath = "",
				       .body = body,
				       .body_len = strlen(body) };
	struct rf_http_response resp = { .status = 200 };
	ck_assert_int_eq(rf_verb_bind(f->binder, &req, &resp), 0);
	ck_assert_int_eq(resp.status, want_status);
	ck_assert_ptr_null(resp.content_type); /* JSON */
	json_error_t jerr;
	json_t *j = json_loadb(resp.body, resp.body_len, 0, &jerr);
	ck_assert_msg(j != NULL, "reply is not JSON: %.*s", (int)resp.body_len, resp.body);
	const char *e = json_string_value(json_object_get(j, "Error"));
	ck_assert_msg(e != NULL, "reply has no Error: %.*s", (int)resp.body_len, resp.body);
	char *copy = strdup(e);
	json_decref(j);
	free(resp.body);
	return copy;
}

/* The value of railfit_bind_total{result="<result>"}, 0 when the series is absent. */
static double
bind_total(const char *result)
{
	char series[128];
	snprintf(series, sizeof(series), "railfit_bind_total{result=\"%s\"} ", result);
	char *m = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(m);
	const char *p = strstr(m, series);
	double v = p ? strtod(p + strlen(series), NULL) : 0;
	free(m);
	return v;
}

static char *
read_data(const char *name)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof(path), "%s/extender/%s", dir ? dir : "test/data", name);
	FILE *fp = fopen(path, "rb");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	static char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return buf;
}

START_TEST(test_bind_created)
{
	struct fixture f;
	fixture_start(&f, ANSWER_CREATED, 4000);
	int64_t before = rf_store_changes(f.store);
	char *e = do_bind(&f, bind_args, 200);
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_int_eq(atomic_load(&f.as.posts), 1);
	ck_assert_str_eq(f.as.method, "POST");
	ck_assert_str_eq(f.as.path, "/api/v1/namespaces/ns/pods/p1/binding");
	ck_assert_str_eq(f.as.ctype, "application/json");
	ck_assert_str_eq(
		f.as.body,
		"{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\","
		"\"namespace\":\"ns\",\"uid\":\"u1\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}");
	ck_assert_double_eq(bind_total("ok"), 1);
	/* the placement is recorded at once (an assumed pod), before the watch confirms it */
	ck_assert_int_gt(rf_store_changes(f.store), before);
	fixture_stop(&f);
}
END_TEST

/* The body is DefaultBinder's, byte for byte: the golden pair in test/data/extender/. */
START_TEST(test_bind_golden_body)
{
	struct fixture f;
	fixture_start(&f, ANSWER_CREATED, 4000);
	char *args = strdup(read_data("bind-request-nocache.json"));
	char *e = do_bind(&f, args, 200);
	ck_assert_str_eq(e, "");
	free(e);
	free(args);
	ck_assert_str_eq(f.as.path, "/api/v1/namespaces/default/pods/demo-pod/binding");
	ck_assert_str_eq(f.as.body, read_data("apiserver-binding-request.json"));
	fixture_stop(&f);
}
END_TEST

/* No PodUID: no metadata.uid (the API server then skips its UID precondition). */
START_TEST(test_bind_without_uid)
{
	struct fixture f;
	fixture_start(&f, ANSWER_CREATED, 4000);
	char *e = do_bind(&f, "{\"PodName\":\"p1\",\"PodNamespace\":\"ns\",\"Node\":\"n1\"}", 200);
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_str_eq(
		f.as.body,
		"{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\","
		"\"namespace\":\"ns\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}");
	fixture_stop(&f);
}
END_TEST

/* 409 "already assigned to node n1" for a bind to n1 is a retried bind whose first answer was
 * lost: success. The same 409 for another node is a real conflict. */
START_TEST(test_bind_conflict)
{
	struct fixture f;
	fixture_start(&f, ANSWER_CONFLICT, 4000);
	char *e = do_bind(&f, bind_args, 200);
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_double_eq(bind_total("already_bound"), 1);

	e = do_bind(
		&f,
		"{\"PodName\":\"p1\",\"PodNamespace\":\"ns\",\"PodUID\":\"u1\",\"Node\":\"n2\"}",
		200);
	ck_assert_str_eq(e,
			 "pods/binding \"p1\" failed: POST /api/v1/namespaces/ns/pods/p1/binding: "
			 "409 Conflict: Operation cannot be fulfilled on pods/binding \"p1\": "
			 "pod p1 is already assigned to node \"n1\"");
	free(e);
	ck_assert_double_eq(bind_total("conflict"), 1);
	ck_assert_double_eq(bind_total("ok"), 0);
	fixture_stop(&f);
}
END_TEST

/* Failures answer 200 with the Error field (the protocol's failure shape), one result each. */
static const struct {
	enum answer answer;
	const char *result;
	const char *error;
} failures[] = {
	{ ANSWER_NOT_FOUND, "not_found",
	  "pods/binding \"p1\" failed: POST /api/v1/namespaces/ns/pods/p1/binding: 404 Not Found: "
	  "pods \"p1\" not found" },
	{ ANSWER_FORBIDDEN, "forbidden",
	  "pods/binding \"p1\" failed: POST /api/v1/namespaces/ns/pods/p1/binding: 403 Forbidden: "
	  "pods \"p1\" is forbidden: User \"u\" cannot create resource \"pods/binding\" (the RBAC "
	  "role of railfit needs verb \"create\" on resource \"pods/binding\" in API group \"\")" },
	/* kube-scheduler formats Error with Sprintf: a '%' would garble it */
	{ ANSWER_INVALID, "rejected",
	  "pods/binding \"p1\" failed: POST /api/v1/namespaces/ns/pods/p1/binding: 422 "
	  "Unprocessable Entity: 100pct of the node is taken" },
	{ ANSWER_UNAVAILABLE, "error",
	  "pods/binding \"p1\" failed: POST /api/v1/namespaces/ns/pods/p1/binding: 503 Service "
	  "Unavailable: service unavailable" },
};

START_TEST(test_bind_failures)
{
	struct fixture f;
	fixture_start(&f, failures[_i].answer, 4000);
	int64_t before = rf_store_changes(f.store);
	char *e = do_bind(&f, bind_args, 200);
	ck_assert_str_eq(e, failures[_i].error);
	free(e);
	ck_assert_double_eq(bind_total(failures[_i].result), 1);
	ck_assert_double_eq(bind_total("ok"), 0);
	/* nothing assumed */
	ck_assert_int_eq(rf_store_changes(f.store), before);
	fixture_stop(&f);
}
END_TEST

/* A connection that breaks before any answer is tried once more: the retry's 201 is success. */
START_TEST(test_bind_retry_after_dropped_connection)
{
	struct fixture f;
	fixture_start(&f, ANSWER_DROP_ONCE, 4000);
	char *e = do_bind(&f, bind_args, 200);
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_int_eq(atomic_load(&f.as.posts), 2);
	ck_assert_double_eq(bind_total("ok"), 1);
	fixture_stop(&f);
}
END_TEST

/* The whole bind has a hard budget: a slow API server is a timeout, answered in time. */
START_TEST(test_bind_timeout)
{
	struct fixture f;
	fixture_start(&f, ANSWER_SLOW, 300);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *e = do_bind(&f, bind_args, 200);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(took < 1.2, "bind took %.3f s with a 300 ms budget", took);
	ck_assert_msg(strncmp(e, "pods/binding \"p1\" failed: ", 26) == 0, "Error: %s", e);
	free(e);
	ck_assert_double_eq(bind_total("timeout"), 1);
	ck_assert_int_eq(atomic_load(&f.as.posts), 1);
	fixture_stop(&f);
}
END_TEST

/* Arguments that cannot be bound are a 400 with the Error field, and nothing is sent. */
START_TEST(test_bind_invalid_args)
{
	struct fixture f;
	fixture_start(&f, ANSWER_CREATED, 4000);
	char *e = do_bind(&f, "{\"PodName\":\"p1\",\"PodNamespace\":\"\",\"Node\":\"n1\"}", 400);
	ck_assert_str_eq(e, "PodNamespace: expected a non-empty string");
	free(e);
	e = do_bind(&f, "{\"PodName\":", 400);
	ck_assert_str_ne(e, "");
	free(e);
	e = do_bind(&f, "[]", 400);
	ck_assert_str_ne(e, "");
	free(e);
	ck_assert_int_eq(atomic_load(&f.as.posts), 0);
	ck_assert_double_eq(bind_total("invalid"), 3);
	fixture_stop(&f);
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
	rf_metrics_reset();
	curl_global_cleanup();
}

Suite *bind_suite(void);

Suite *
bind_suite(void)
{
	Suite *s = suite_create("bind");
	TCase *tc = tcase_create("binder");
	tcase_set_timeout(tc, 30);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bind_created);
	tcase_add_test(tc, test_bind_golden_body);
	tcase_add_test(tc, test_bind_without_uid);
	tcase_add_test(tc, test_bind_conflict);
	tcase_add_loop_test(tc, test_bind_failures, 0,
			    (int)(sizeof(failures) / sizeof(failures[0])));
	tcase_add_test(tc, test_bind_retry_after_dropped_connection);
	tcase_add_test(tc, test_bind_timeout);
	tcase_add_test(tc, test_bind_invalid_args);
	suite_add_tcase(s, tc);
	return s;
}
