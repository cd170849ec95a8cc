/* The live-cluster building blocks without a network: kubeconfig parsing (the ways users write
 * them, and every error a person can act on), the watch stream splitter and decoder (event
 * boundaries anywhere, oversize, garbage, truncation), client-go's backoff and watch-timeout
 * arithmetic, resourceVersion ordering, the token bucket, Retry-After and version parsing, the
 * bind helpers, and the object store's event semantics (duplicate ADDED, unknown DELETED,
 * relist deletions, assumed placements). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>
#include <microhttpd.h>

#include "alloc/demand.h"
#include "alloc/memo.h"
#include "config/kubeconfig.h"
#include "server/http/metrics.h"
#include "server/kube/bind.h"
#include "server/kube/cache.h"
#include "server/kube/kube.h"
#include "server/kube/reflector.h"
#include "server/kube/store.h"
#include "server/kube/watch_stream.h"
#include "server/snapshot/snapshot.h"

/* "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" */
#define PEM_TEXT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define PEM_B64  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static int
parse(const char *doc, const char *dir, const char *ctx, struct rf_kubeconfig *kc, char *err)
{
	return rf_kubeconfig_parse(doc, strlen(doc), dir, ctx, kc, err, 512);
}

/* A kubeconfig as kubectl/kind write it: https with CA data, a token user. */
static const char *kc_https = "apiVersion: v1\n"
			      "kind: Config\n"
			      "preferences: {}\n"
			      "clusters:\n"
			      "- cluster:\n"
			      "    certificate-authority-data: " PEM_B64 "\n"
			      "    server: https://127.0.0.1:6443/\n"
			      "  name: kind-kind\n"
			      "- cluster:\n"
			      "    server: http://127.0.0.1:8001\n"
			      "  name: local\n"
			      "contexts:\n"
			      "- context:\n"
			      "    cluster: kind-kind\n"
			      "    user: kind-kind\n"
			      "    namespace: gpu\n"
			      "  name: kind-kind\n"
			      "- context:\n"
			      "    cluster: local\n"
			      "    user: filetoken\n"
			      "  name: local\n"
			      "current-context: kind-kind\n"
			      "users:\n"
			      "- name: kind-kind\n"
			      "  user:\n"
			      "    token: \"abc.def\"\n"
			      "- name: filetoken\n"
			      "  user:\n"
			      "    tokenFile: secrets/token\n";

START_TEST(test_kubeconfig_https_ca_data_token)
{
	struct rf_kubeconfig kc;
	char err[512];
	ck_assert_int_eq(parse(kc_https, "/etc/kube", NULL, &kc, err), 0);
	ck_assert_str_eq(kc.context, "kind-kind");
	ck_assert_str_eq(kc.cluster_name, "kind-kind");
	ck_assert_str_eq(kc.server, "https://127.0.0.1:6443");
	ck_assert_uint_eq(kc.ca_data_len, strlen(PEM_TEXT));
	ck_assert_mem_eq(kc.ca_data, PEM_TEXT, strlen(PEM_TEXT));
	ck_assert_ptr_null(kc.ca_file);
	ck_assert(!kc.insecure_skip_tls_verify);
	ck_assert_str_eq(kc.token, "abc.def");
	ck_assert_ptr_null(kc.token_file);
	ck_assert_str_eq(kc.namespace, "gpu");
	rf_kubeconfig_release(&kc);
}
END_TEST

START_TEST(test_kubeconfig_context_override_http_token_file)
{
	struct rf_kubeconfig kc;
	char err[512];
	ck_assert_int_eq(parse(kc_https, "/etc/kube", "local", &kc, err), 0);
	ck_assert_str_eq(kc.server, "http://127.0.0.1:8001");
	ck_assert_ptr_null(kc.ca_data);
	ck_assert_ptr_null(kc.token);
	/* relative paths resolve against the kubeconfig's directory */
	ck_assert_str_eq(kc.token_file, "/etc/kube/secrets/token");
	ck_assert_ptr_null(kc.namespace);
	rf_kubeconfig_release(&kc);

	ck_assert_int_eq(parse(kc_https, "/etc/kube", "nope", &kc, err), -EINVAL);
	ck_assert_str_eq(err, "context \"nope\" does not exist");
}
END_TEST

START_TEST(test_kubeconfig_client_cert_files_and_data)
{
	const char *doc = "clusters:\n"
			  "- name: c\n"
			  "  cluster:\n"
			  "    server: https://api.example:6443\n"
			  "    certificate-authority: /pki/ca.crt\n"
			  "    tls-server-name: kubernetes.default\n"
			  "users:\n"
			  "- name: files\n"
			  "  user:\n"
			  "    client-certificate: admin.crt\n"
			  "    client-key: /abs/admin.key\n"
			  "- name: data\n"
			  "  user:\n"
			  "    client-certificate-data: " PEM_B64 "\n"
			  "    client-key-data: " PEM_B64 "\n"
			  "contexts:\n"
			  "- {name: a, context: {cluster: c, user: files}}\n"
			  "- {name: b, context: {cluster: c, user: data}}\n"
			  "current-context: a\n";
	struct rf_kubeconfig kc;
	char err[512];
	ck_assert_int_eq(parse(doc, "/home/u/.kube", NULL, &kc, err), 0);
	ck_assert_str_eq(kc.ca_file, "/pki/ca.crt");
	ck_assert_str_eq(kc.tls_server_name, "kubernetes.default");
	ck_assert_str_eq(kc.client_cert_file, "/home/u/.kube/admin.crt");
	ck_assert_str_eq(kc.client_key_file, "/abs/admin.key");
	ck_assert_ptr_null(kc.client_cert_data);
	rf_kubeconfig_release(&kc);
	ck_assert_int_eq(parse(doc, "/home/u/.kube", "b", &kc, err), 0);
	ck_assert_ptr_null(kc.client_cert_file);
	ck_assert_mem_eq(kc.client_cert_data, PEM_TEXT, strlen(PEM_TEXT));
	ck_assert_mem_eq(kc.client_key_data, PEM_TEXT, strlen(PEM_TEXT));
	rf_kubeconfig_release(&kc);
}
END_TEST

START_TEST(test_kubeconfig_insecure_json_and_anchors)
{
	/* kubeconfigs may be JSON */
	const char *json = "{\"apiVersion\":\"v1\",\"clusters\":[{\"name\":\"x\",\"cluster\":"
			   "{\"server\":\"10.0.0.1:6443\",\"insecure-skip-tls-verify\":true}}],"
			   "\"users\":[{\"name\":\"u\",\"user\":{\"username\":\"admin\","
			   "\"password\":\"s3cret\"}}],\"contexts\":[{\"name\":\"x\",\"context\":"
			   "{\"cluster\":\"x\",\"user\":\"u\"}}],\"current-context\":\"x\"}";
	struct rf_kubeconfig kc;
	char err[512];
	ck_assert_int_eq(parse(json, NULL, NULL, &kc, err), 0);
	ck_assert_str_eq(kc.server, "https://10.0.0.1:6443"); /* no scheme means https */
	ck_assert(kc.insecure_skip_tls_verify);
	ck_assert_str_eq(kc.username, "admin");
	ck_assert_str_eq(kc.password, "s3cret");
	rf_kubeconfig_release(&kc);

	const char *yaml = "clusters:\n"
			   "- name: x\n"
			   "  cluster: &c {server: 'https://h:1', insecure-skip-tls-verify: yes}\n"
			   "users: []\n"
			   "contexts:\n"
			   "- name: x\n"
			   "  context: {cluster: x}\n"
			   "current-context: x\n";
	ck_assert_int_eq(parse(yaml, NULL, NULL, &kc, err), 0);
	ck_assert(kc.insecure_skip_tls_verify);
	ck_assert_ptr_null(kc.token);
	ck_assert_str_eq(kc.user_name, "");
	rf_kubeconfig_release(&kc);
}
END_TEST

static const struct {
	const char *doc;
	const char *want; /* substring of the error */
} kc_errors[] = {
	{ "", "empty" },
	{ "- a\n- b\n", "not a mapping" },
	{ "clusters: [\n", "yaml: line" },
	{ "current-context: x\ncurrent-context: y\n", "defined twice" },
	{ "clusters: []\ncontexts: []\n", "current-context: not set" },
	{ "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "cluster \"c\" was not found for context \"a\"" },
	{ "clusters: [{name: c, cluster: {server: https://h}}]\n"
	  "contexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: a\n",
	  "user \"u\" was not found for context \"a\"" },
	{ "clusters: [{name: c, cluster: {}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "clusters[name=\"c\"].cluster.server: missing" },
	{ "clusters: [{name: c, cluster: {server: 'ftp://h'}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "expected an https:// or http:// URL" },
	{ "clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: true, "
	  "certificate-authority: /ca}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "root certificates file with the insecure flag is not allowed" },
	{ "clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: maybe}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "insecure-skip-tls-verify: expected true or false" },
	{ "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: "
	  "'!!notbase64'}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "certificate-authority-data: not valid base64" },
	{ "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
	  "users: [{name: u, user: {exec: {command: aws}}}]\n"
	  "contexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: a\n",
	  "users[name=\"u\"].user.exec: exec credential plugins are not supported" },
	{ "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
	  "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n"
	  "contexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: a\n",
	  "auth-provider: auth provider plugins are not supported" },
	{ "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
	  "users: [{name: u, user: {client-certificate: /a.crt}}]\n"
	  "contexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: a\n",
	  "client certificate without its key" },
	{ "clusters: {name: c}\ncontexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "clusters: expected a list" },
	{ "clusters: [{name: c, cluster: {server: [1]}}]\n"
	  "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
	  "cluster.server: expected a string" },
	{ "a: *unknown\n", "unknown anchor" },
};

START_TEST(test_kubeconfig_errors)
{
	struct rf_kubeconfig kc;
	char err[512];
	const char *doc = kc_errors[_i].doc;
	ck_assert_int_eq(rf_kubeconfig_parse(doc, strlen(doc), NULL, NULL, &kc, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, kc_errors[_i].want) != NULL, "case %d: got \"%s\", want \"%s\"",
		      _i, err, kc_errors[_i].want);
}
END_TEST

START_TEST(test_kubeconfig_in_cluster)
{
	struct rf_kubeconfig kc;
	char err[256];
	ck_assert_int_eq(rf_kubeconfig_in_cluster("10.96.0.1", "443", "/sa", &kc, err, sizeof(err)),
			 0);
	ck_assert_str_eq(kc.server, "https://10.96.0.1:443");
	ck_assert_str_eq(kc.token_file, "/sa/token");
	ck_assert_str_eq(kc.ca_file, "/sa/ca.crt");
	rf_kubeconfig_release(&kc);
	ck_assert_int_eq(rf_kubeconfig_in_cluster("fd00::1", "6443", "/sa", &kc, err, sizeof(err)),
			 0);
	ck_assert_str_eq(kc.server, "https://[fd00::1]:6443");
	rf_kubeconfig_release(&kc);
	ck_assert_int_eq(rf_kubeconfig_in_cluster("", "443", "/sa", &kc, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_HOST"));
}
END_TEST

START_TEST(test_base64)
{
	unsigned char *out;
	size_t n;
	ck_assert_int_eq(rf_base64_decode("aGVsbG8=", 8, &out, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq((char *)out, "hello");
	free(out);
	ck_assert_int_eq(rf_base64_decode("aGVs\nbG8", 8, &out, &n), 0); /* no padding, newline */
	ck_assert_str_eq((char *)out, "hello");
	free(out);
	ck_assert_int_eq(rf_base64_decode("", 0, &out, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(out);
	ck_assert_int_eq(rf_base64_decode("a", 1, &out, &n), -EINVAL);
	ck_assert_int_eq(rf_base64_decode("aGVsbG8=x", 9, &out, &n), -EINVAL);
	ck_assert_int_eq(rf_base64_decode("aGVs*G8=", 8, &out, &n), -EINVAL);
	ck_assert_int_eq(rf_base64_decode("aGVsbG8===", 10, &out, &n), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Watch stream
 */

struct collected {
	json_t *events; /* [[type, name or rv], ...] */
	int stop_after; /* return -EIO after this many events; 0 = never */
};

static int
collect(void *ud, struct rf_watch_event *ev)
{
	struct collected *c = ud;
	const char *name =
		json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
	json_array_append_new(c->events, json_pack("[s, s]", rf_watch_type_name(ev->type),
						   name     ? name
						   : ev->rv ? ev->rv
							    : (ev->reason ? ev->reason : "")));
	rf_watch_event_release(ev);
	if (c->stop_after && json_array_size(c->events) >= (size_t)c->stop_after)
		return -EIO;
	return 0;
}

static const char stream3[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
	"\"resourceVersion\":\"10\"},\"spec\":{\"x\":\"\xc3\xa9t\xc3\xa9\"}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p2\"}}}\n"
	"\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
	"\"12746\"},\"spec\":{\"containers\":null},\"status\":{}}}\r\n";

/* Every split of the stream into two chunks, and byte-by-byte, decodes the same three events. */
START_TEST(test_watch_stream_boundaries_anywhere)
{
	size_t len = strlen(stream3);
	char err[256];
	for (size_t cut = 0; cut <= len + 1; cut++) {
		struct rf_watch_stream ws;
		struct collected c = { json_array(), 0 };
		rf_watch_stream_init(&ws, 0);
		if (cut <= len) {
			ck_assert_int_eq(rf_watch_stream_feed(&ws, stream3, cut, collect, &c, err,
							      sizeof(err)),
					 0);
			ck_assert_int_eq(rf_watch_stream_feed(&ws, stream3 + cut, len - cut,
							      collect, &c, err, sizeof(err)),
					 0);
		} else {
			for (size_t i = 0; i < len; i++)
				ck_assert_int_eq(rf_watch_stream_feed(&ws, stream3 + i, 1, collect,
								      &c, err, sizeof(err)),
						 0);
		}
		ck_assert_uint_eq(rf_watch_stream_pending(&ws), 0);
		char *got = json_dumps(c.events, JSON_COMPACT);
		ck_assert_str_eq(got, "[[\"ADDED\",\"p1\"],[\"MODIFIED\",\"p2\"],"
				      "[\"BOOKMARK\",\"12746\"]]");
		ck_assert_uint_eq(ws.events, 3);
		free(got);
		json_decref(c.events);
		rf_watch_stream_release(&ws);
	}
}
END_TEST

START_TEST(test_watch_stream_empty_chunks_and_truncation)
{
	struct rf_watch_stream ws;
	struct collected c = { json_array(), 0 };
	char err[256];
	rf_watch_stream_init(&ws, 0);
	ck_assert_int_eq(rf_watch_stream_feed(&ws, "", 0, collect, &c, err, sizeof(err)), 0);
	const char *part = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na";
	ck_assert_int_eq(
		rf_watch_stream_feed(&ws, part, strlen(part), collect, &c, err, sizeof(err)), 0);
	/* the connection closes here: the partial event is pending, never applied */
	ck_assert_uint_eq(json_array_size(c.events), 0);
	ck_assert_uint_eq(rf_watch_stream_pending(&ws), strlen(part));
	rf_watch_stream_reset(&ws);
	ck_assert_uint_eq(rf_watch_stream_pending(&ws), 0);
	ck_assert_int_eq(rf_watch_stream_feed(&ws, "  \n\n", 4, collect, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(rf_watch_stream_pending(&ws), 0);
	json_decref(c.events);
	rf_watch_stream_release(&ws);
}
END_TEST

START_TEST(test_watch_stream_oversize)
{
	struct rf_watch_stream ws;
	struct collected c = { json_array(), 0 };
	char err[256], big[300];
	rf_watch_stream_init(&ws, 100);
	/* an event of exactly the limit passes */
	int n = snprintf(big, sizeof(big),
			 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"");
	while (n < 100 - 4) /* 100 bytes, then the newline */
		big[n++] = 'a';
	memcpy(big + n, "\"}}}\n", 5);
	n += 5;
	ck_assert_int_eq(rf_watch_stream_feed(&ws, big, (size_t)n, collect, &c, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(json_array_size(c.events), 1);
	/* one byte more, fed in small pieces, fails before the line is complete */
	big[n - 5] = 'b';
	memmove(big + n - 4, "\"}}}\n", 5);
	n++;
	int r = 0;
	for (int i = 0; i < n && r == 0; i += 7)
		r = rf_watch_stream_feed(&ws, big + i, (size_t)(n - i < 7 ? n - i : 7), collect, &c,
					 err, sizeof(err));
	ck_assert_int_eq(r, -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(err, "larger than 100 bytes"));
	/* the stream stays failed until reset */
	ck_assert_int_eq(rf_watch_stream_feed(&ws, "\n", 1, collect, &c, err, sizeof(err)),
			 -EPROTO);
	rf_watch_stream_reset(&ws);
	ck_assert_int_eq(rf_watch_stream_feed(&ws, big, 0, collect, &c, err, sizeof(err)), 0);
	json_decref(c.events);
	rf_watch_stream_release(&ws);
}
END_TEST

static const struct {
	const char *line;
	const char *want;
} garbage[] = {
	{ "not json\n", "not JSON" },
	{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}\n", "not JSON" },
	{ "[1,2]\n", "not a JSON object" },
	{ "{\"type\":\"UPSERTED\",\"object\":{}}\n", "invalid watch event type: \"UPSERTED\"" },
	{ "{\"object\":{}}\n", "invalid watch event type: \"(missing)\"" },
	{ "{\"type\":\"ADDED\"}\n", "has no object" },
	{ "{\"type\":\"ADDED\",\"object\":\"x\"}\n", "has no object" },
	{ "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}\n", "duplicate" },
	{ "{\"type\":\"ADDED\",\"object\":{}}{\"type\":\"ADDED\",\"object\":{}}\n", "not JSON" },
};

START_TEST(test_watch_stream_garbage)
{
	struct rf_watch_stream ws;
	struct collected c = { json_array(), 0 };
	char err[256];
	rf_watch_stream_init(&ws, 0);
	const char *ok = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%s%s", ok, garbage[_i].line, ok);
	ck_assert_int_eq(rf_watch_stream_feed(&ws, buf, strlen(buf), collect, &c, err, sizeof(err)),
			 -EPROTO);
	ck_assert_msg(strstr(err, garbage[_i].want) != NULL, "got \"%s\", want \"%s\"", err,
		      garbage[_i].want);
	/* the event before the garbage was delivered, the one after it was not */
	ck_assert_uint_eq(json_array_size(c.events), 1);
	json_decref(c.events);
	rf_watch_stream_release(&ws);
}
END_TEST

START_TEST(test_watch_stream_error_event_and_callback_stop)
{
	struct rf_watch_event ev;
	char err[256];
	const char *line =
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
		"version: 10245 (11873)\",\"reason\":\"Expired\",\"code\":410}}";
	ck_assert_int_eq(rf_watch_event_decode(line, strlen(line), &ev, err, sizeof(err)), 0);
	ck_assert_int_eq(ev.type, RF_WATCH_ERROR);
	ck_assert_int_eq(ev.code, 410);
	ck_assert_str_eq(ev.reason, "Expired");
	ck_assert_ptr_nonnull(strstr(ev.message, "too old"));
	ck_assert(rf_kube_is_expired(ev.code, ev.reason));
	ck_assert(rf_kube_is_expired(500, "Gone"));
	ck_assert(!rf_kube_is_expired(500, "InternalError"));
	rf_watch_event_release(&ev);

	struct rf_watch_stream ws;
	struct collected c = { json_array(), 2 };
	rf_watch_stream_init(&ws, 0);
	ck_assert_int_eq(
		rf_watch_stream_feed(&ws, stream3, strlen(stream3), collect, &c, err, sizeof(err)),
		-EIO);
	ck_assert_uint_eq(json_array_size(c.events), 2);
	json_decref(c.events);
	rf_watch_stream_release(&ws);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Arithmetic
 */

START_TEST(test_backoff_client_go)
{
	/* client-go's shape (0.8 s doubling, reset after 2 idle minutes) with a 4 s cap */
	struct rf_backoff b;
	rf_backoff_init(&b);
	const double want[] = { 0.8, 1.6, 3.2, 4, 4, 4, 4 };
	double t = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_double_eq_tol(rf_backoff_step(&b, t, 0), want[i], 1e-9);
		t += 1;
	}
	/* jitter 0.5: each delay in [d, 1.5 d), never above 6 s */
	ck_assert_double_eq_tol(rf_backoff_step(&b, t, 0.5), 5, 1e-9);
	ck_assert(rf_backoff_step(&b, t + 1, 0.9999999) < 6);
	/* more than 2 minutes since the last step: back to 0.8 s */
	ck_assert_double_eq_tol(rf_backoff_step(&b, t + 200, 0), 0.8, 1e-9);
	ck_assert_double_eq_tol(rf_backoff_step(&b, t + 201, 0), 1.6, 1e-9);
	/* a success resets it at once */
	rf_backoff_step(&b, t + 202, 0);
	rf_backoff_reset(&b);
	ck_assert_double_eq_tol(rf_backoff_step(&b, t + 203, 0), 0.8, 1e-9);
}
END_TEST

START_TEST(test_watch_timeouts)
{
	ck_assert_int_eq(rf_watch_timeout_seconds(300, 0), 300);
	ck_assert_int_eq(rf_watch_timeout_seconds(300, 0.5), 450);
	ck_assert_int_eq(rf_watch_timeout_seconds(300, 0.9999), 599);
	ck_assert_int_eq(rf_watch_timeout_seconds(5, 0.99), 9);
	ck_assert_int_eq(rf_watch_timeout_seconds(0.2, 0), 1);
	ck_assert_int_eq(rf_watch_idle_ms(300000), 90000);
	ck_assert_int_eq(rf_watch_idle_ms(5000), 5000);
	ck_assert_int_eq(rf_watch_idle_ms(1000), 5000);
	ck_assert_int_eq(rf_watch_idle_ms(30000), 30000);
}
END_TEST

START_TEST(test_rv_compare)
{
	int c = 99;
	ck_assert_int_eq(rf_rv_compare("10", "9", &c), 0);
	ck_assert_int_eq(c, 1);
	ck_assert_int_eq(rf_rv_compare("123", "124", &c), 0);
	ck_assert_int_eq(c, -1);
	ck_assert_int_eq(rf_rv_compare("0010", "10", &c), 0);
	ck_assert_int_eq(c, 0);
	ck_assert_int_eq(rf_rv_compare("0", "0", &c), 0);
	ck_assert_int_eq(c, 0);
	ck_assert_int_eq(rf_rv_compare("99999999999999999999999", "100000000000000000000000", &c),
			 0);
	ck_assert_int_eq(c, -1);
	ck_assert_int_eq(rf_rv_compare("12a", "1", &c), -EINVAL);
	ck_assert_int_eq(rf_rv_compare("", "1", &c), -EINVAL);
	ck_assert_int_eq(rf_rv_compare(NULL, "1", &c), -EINVAL);
}
END_TEST

START_TEST(test_token_bucket)
{
	struct rf_token_bucket b;
	rf_token_bucket_init(&b, 2, 2, 100);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 100), 0, 1e-9);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 100), 0, 1e-9);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 100), 0.5, 1e-9);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 100), 1.0, 1e-9);
	/* 10 s later the bucket is full again, not fuller */
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 110), 0, 1e-9);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 110), 0, 1e-9);
	ck_assert_double_eq_tol(rf_token_bucket_reserve(&b, 110), 0.5, 1e-9);
	rf_token_bucket_init(&b, 0, 1, 0); /* no limit */
	for (int i = 0; i < 1000; i++)
		ck_assert_double_eq(rf_token_bucket_reserve(&b, 0), 0);
	rf_token_bucket_init(&b, INFINITY, 1, 0);
	ck_assert_double_eq(rf_token_bucket_reserve(&b, 0), 0);
	ck_assert_double_eq(rf_token_bucket_reserve(&b, 0), 0);
}
END_TEST

START_TEST(test_parse_helpers)
{
	ck_assert_int_eq(rf_kube_parse_retry_after(" 3\r\n"), 3);
	ck_assert_int_eq(rf_kube_parse_retry_after("32"), 32);
	ck_assert_int_eq(rf_kube_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
	ck_assert_int_eq(rf_kube_parse_retry_after(""), -1);
	ck_assert_int_eq(rf_kube_parse_retry_after("-1"), -1);
	ck_assert_int_eq(rf_kube_minor_version("v1.34.2"), 134);
	ck_assert_int_eq(rf_kube_minor_version("v1.35.0-rc.1+abc"), 135);
	ck_assert_int_eq(rf_kube_minor_version("v1.36.0"), 136);
	ck_assert_int_eq(rf_kube_minor_version("1.33.1"), 133);
	ck_assert_int_eq(rf_kube_minor_version("devel"), 0);
	ck_assert_int_eq(rf_kube_minor_version(NULL), 0);
}
END_TEST

START_TEST(test_describe_failure)
{
	struct rf_kube_response r = { .status = 403 };
	char buf[1024];
	snprintf(r.error, sizeof(r.error),
		 "GET /api/v1/pods: 403 Forbidden: pods is forbidden: User \"x\" cannot list "
		 "resource \"pods\" in API group \"\" at the cluster scope");
	rf_kube_describe_failure(&r, "list", "pods", "", buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "cannot list resource \"pods\""));
	ck_assert_ptr_nonnull(
		strstr(buf, "the RBAC role of railfit needs verb \"list\" on resource \"pods\""));
	r.status = 401;
	rf_kube_describe_failure(&r, "list", "pods", "", buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "rejected railfit's credentials"));
	r.status = 404;
	rf_kube_describe_failure(&r, "list", "resourceslices", "resource.k8s.io", buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "Kubernetes 1.34 or newer"));
}
END_TEST

START_TEST(test_bind_helpers)
{
	const char *m = "POST /x: 409 Conflict: Operation cannot be fulfilled on pods/binding "
			"\"p1\": pod p1 is already assigned to node \"node-a\"";
	ck_assert(rf_bind_conflict_same_node(m, "node-a"));
	ck_assert(!rf_bind_conflict_same_node(m, "node-b"));
	ck_assert(!rf_bind_conflict_same_node(m, "node-"));
	ck_assert(!rf_bind_conflict_same_node("pod p1 is being deleted", "node-a"));
	char *t = rf_bind_error_text("100% of \"x\"\n\xc3\xa9");
	ck_assert_str_eq(t, "100pct of \"x\"???");
	free(t);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Store
 */

struct store_fixture {
	struct rf_config cfg;
	struct rf_cache *cache;
	struct rf_cel_cache *cel;
	struct rf_store *store;
};

static void
store_setup(struct store_fixture *f)
{
	rf_config_init(&f->cfg);
	f->cache = rf_cache_new();
	f->cel = rf_cel_cache_new();
	struct rf_store_options o = {
		.cache = f->cache, .cfg = &f->cfg, .cel = f->cel, .min_interval_ms = 10
	};
	ck_assert_int_eq(rf_store_new(&o, &f->store), 0);
}

static void
store_teardown(struct store_fixture *f)
{
	rf_store_free(f->store);
	rf_cache_free(f->cache);
	rf_cel_cache_free(f->cel);
	rf_config_release(&f->cfg);
}

static json_t *
pod(const char *ns, const char *name, const char *uid, const char *node)
{
	json_t *p = json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}, s:{s:[]}, s:{s:s}}", "metadata",
			      "name", name, "namespace", ns, "uid", uid, "managedFields", "manager",
			      "kubectl", "spec", "containers", "status", "phase", "Pending");
	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	return p;
}

/* The generation once every change so far is published. */
static struct rf_cluster *
settled(struct store_fixture *f)
{
	ck_assert(rf_store_wait_published(f->store, rf_store_changes(f->store), 5000));
	return rf_cache_get(f->cache);
}

START_TEST(test_store_events_like_client_go)
{
	struct store_fixture f;
	store_setup(&f);
	json_t *items = json_pack("[o, o]", pod("a", "p1", "u1", NULL), pod("a", "p2", "u2", NULL));
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, items), 2);
	/* managedFields are dropped before anyone shares the object */
	ck_assert_ptr_null(json_object_get(json_object_get(json_array_get(items, 0), "metadata"),
					   "managedFields"));
	json_decref(items);

	/* duplicate ADDED updates, MODIFIED of an unknown key adds, DELETED of an unknown key is
	 * ignored */
	json_t *p1b = pod("a", "p1", "u1", "n1");
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_ADDED, p1b), 1);
	json_t *p3 = pod("b", "p3", "u3", NULL);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p3), 1);
	json_t *ghost = pod("a", "ghost", "u9", NULL);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_DELETED, ghost), 0);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_BOOKMARK, ghost), 0);
	json_t *noname = json_pack("{s:{}}", "metadata");
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_ADDED, noname), -EINVAL);
	json_decref(noname);

	struct rf_cluster *g = settled(&f);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(rf_cluster_counts(g).pods, 3);
	ck_assert_str_eq(rf_cluster_pod(g, "a", "p1")->node_name, "n1");
	ck_assert_ptr_nonnull(rf_cluster_pod(g, "b", "p3"));
	rf_cluster_unref(g);

	/* a relist missing objects deletes them */
	items = json_pack("[O]", p3);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, items), 1);
	json_decref(items);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_DELETED, p3), 1);
	g = settled(&f);
	ck_assert_uint_eq(rf_cluster_counts(g).pods, 0);
	rf_cluster_unref(g);

	json_decref(p1b);
	json_decref(p3);
	json_decref(ghost);
	store_teardown(&f);
}
END_TEST

/* What the store tells the publisher: an update with nothing railfit reads changed is no
 * change, a relist of the same objects changes nothing, a pod event builds on the previous
 * generation (same layout) and a node event rebuilds it. */
START_TEST(test_store_builds_only_what_changed)
{
	struct store_fixture f;
	struct rf_store_stats st;
	store_setup(&f);
	json_t *node = json_pack("{s:{s:s}}", "metadata", "name", "n1");
	json_t *nodes = json_pack("[O]", node);
	json_t *p1 = pod("a", "p1", "u1", "n1"), *p2 = pod("a", "p2", "u2", NULL);
	json_t *pods = json_pack("[O, O]", p1, p2);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_NODES, nodes), 1);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, pods), 2);
	struct rf_cluster *g1 = settled(&f);
	const struct rf_node *n1 = rf_cluster_node(g1, "n1");
	ck_assert_ptr_nonnull(n1);

	/* the same objects again: no change at all */
	int64_t seq = rf_store_changes(f.store);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p1), 0);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, pods), 2);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_NODES, nodes), 1);
	ck_assert_int_eq(rf_store_changes(f.store), seq);

	/* a pod event: the next generation shares the layout, and the unchanged pod */
	rf_store_stats(f.store, &st);
	uint64_t incremental = st.incremental;
	json_object_set_new(json_object_get(p2, "spec"), "nodeName", json_string("n1"));
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p2), 1);
	struct rf_cluster *g2 = settled(&f);
	ck_assert_ptr_eq(rf_cluster_node(g2, "n1"), n1);
	ck_assert_ptr_eq(rf_cluster_pod(g2, "a", "p1"), rf_cluster_pod(g1, "a", "p1"));
	ck_assert_str_eq(rf_cluster_pod(g2, "a", "p2")->node_name, "n1");
	ck_assert_uint_eq(rf_node_use(g2, n1)->n_pods, 2);
	ck_assert_uint_eq(rf_node_use(g1, n1)->n_pods, 1);
	rf_store_stats(f.store, &st);
	ck_assert_uint_gt(st.incremental, incremental);

	/* the node turns NotReady (its status only): the layout stays, Ready is the new one; as
	 * part of a relist too */
	ck_assert(rf_cluster_node_ready(g2, n1));
	json_object_set_new(
		node, "status",
		json_pack("{s:[{s:s, s:s}]}", "conditions", "type", "Ready", "status", "False"));
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_NODES, RF_WATCH_MODIFIED, node), 1);
	struct rf_cluster *g2b = settled(&f);
	ck_assert_ptr_eq(rf_cluster_node(g2b, "n1"), n1);
	ck_assert(!rf_cluster_node_ready(g2b, n1));
	ck_assert(rf_cluster_node_ready(g2, n1));
	json_t *relisted = json_pack("[o]", json_deep_copy(node));
	json_object_set_new(json_object_get(json_array_get(relisted, 0), "status"), "conditions",
			    json_pack("[{s:s, s:s}]", "type", "Ready", "status", "True"));
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_NODES, relisted), 1);
	json_decref(relisted);
	struct rf_cluster *g2c = settled(&f);
	ck_assert_ptr_eq(rf_cluster_node(g2c, "n1"), n1);
	ck_assert(rf_cluster_node_ready(g2c, n1));
	rf_cluster_unref(g2b);
	rf_cluster_unref(g2c);

	/* its allocatable changes (a device plugin registers): a new layout, whose node holds the
	 * new allocatable (it decides who serves an extended resource there) */
	json_object_set_new(json_object_get(node, "status"), "allocatable",
			    json_pack("{s:s}", "nvidia.com/gpu", "8"));
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_NODES, RF_WATCH_MODIFIED, node), 1);
	struct rf_cluster *g2d = settled(&f);
	ck_assert_ptr_ne(rf_cluster_node(g2d, "n1"), n1);
	ck_assert_ptr_nonnull(json_object_get(
		json_object_get(json_object_get(rf_cluster_node(g2d, "n1")->json, "status"),
				"allocatable"),
		"nvidia.com/gpu"));
	json_object_del(json_object_get(node, "status"), "allocatable");
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_NODES, RF_WATCH_MODIFIED, node), 1);
	rf_cluster_unref(g2d);
	g2d = settled(&f); /* held to the end: n1 is compared with the next layout's node */
	n1 = rf_cluster_node(g2d, "n1");

	/* a node event: a new layout */
	json_object_set_new(json_object_get(node, "metadata"), "labels",
			    json_pack("{s:s}", "zone", "b"));
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_NODES, RF_WATCH_MODIFIED, node), 1);
	struct rf_cluster *g3 = settled(&f);
	ck_assert(rf_cluster_node(g3, "n1") != n1);
	ck_assert_uint_eq(rf_node_use(g3, rf_cluster_node(g3, "n1"))->n_pods, 2);

	rf_cluster_unref(g1);
	rf_cluster_unref(g2);
	rf_cluster_unref(g3);
	rf_cluster_unref(g2d);
	json_decref(node);
	json_decref(nodes);
	json_decref(p1);
	json_decref(p2);
	json_decref(pods);
	store_teardown(&f);
}
END_TEST

/* The names of a generation's pods, in the order of the array it was built from. */
static void
pod_order_is(const struct rf_cluster *g, const char *want)
{
	const json_t *arr = rf_cluster_objects(g)->pods;
	char got[256] = "";
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *o = rf_snapshot_expand(json_array_get(arr, i), NULL);
		const char *name =
			json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
		strncat(got, i ? " " : "", sizeof(got) - strlen(got) - 1);
		strncat(got, name ? name : "?", sizeof(got) - strlen(got) - 1);
		json_decref(o);
	}
	ck_assert_str_eq(got, want);
}

/* The arrays a build takes are kept to the next build where nothing of their kind changed, and
 * changed in place where something did (store.c, kept_array.h), in the order a map of the
 * objects keeps (a new one last, a changed one at its place, a deleted one gone); a generation's
 * arrays never change after it was built. */
START_TEST(test_store_keeps_the_arrays_builds_take)
{
	struct store_fixture f;
	store_setup(&f);
	json_t *nodes = json_pack("[{s:{s:s}}]", "metadata", "name", "n1");
	json_t *pods = json_pack("[o, o, o]", pod("a", "p1", "u1", NULL),
				 pod("a", "p2", "u2", NULL), pod("a", "p3", "u3", NULL));
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_NODES, nodes), 1);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, pods), 3);
	struct rf_cluster *g1 = settled(&f);
	pod_order_is(g1, "p1 p2 p3");
	const json_t *g1_pods = rf_cluster_objects(g1)->pods;
	json_t *was[3];
	for (size_t i = 0; i < 3; i++)
		was[i] = json_array_get(g1_pods, i);

	/* a Node event: the next build gets the very same pods array */
	json_t *n1 = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "n1", "labels", "a", "b");
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_NODES, RF_WATCH_MODIFIED, n1), 1);
	struct rf_cluster *g2 = settled(&f);
	ck_assert_ptr_eq(rf_cluster_objects(g2)->pods, g1_pods);
	ck_assert_ptr_ne(rf_cluster_objects(g2)->nodes, rf_cluster_objects(g1)->nodes);

	/* pod events: p2 changes at its place, p4 comes last, p1 goes; g1's array stays */
	json_t *p2 = pod("a", "p2", "u2", "n1"), *p4 = pod("a", "p4", "u4", NULL),
	       *p1 = pod("a", "p1", "u1", NULL);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p2), 1);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_ADDED, p4), 1);
	ck_assert_int_eq(rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_DELETED, p1), 1);
	struct rf_cluster *g3 = settled(&f);
	pod_order_is(g3, "p2 p3 p4");
	ck_assert_str_eq(rf_cluster_pod(g3, "a", "p2")->node_name, "n1");
	ck_assert_ptr_eq(json_array_get(rf_cluster_objects(g3)->pods, 1), was[2]);
	pod_order_is(g1, "p1 p2 p3");
	for (size_t i = 0; i < 3; i++)
		ck_assert_ptr_eq(json_array_get(g1_pods, i), was[i]);

	/* a relist: made again from what it lists, in its order */
	json_t *relist = json_pack("[O, O]", p4, p2);
	ck_assert_int_eq(rf_store_replace(f.store, RF_KIND_PODS, relist), 2);
	struct rf_cluster *g4 = settled(&f);
	pod_order_is(g4, "p4 p2");
	pod_order_is(g3, "p2 p3 p4");

	rf_cluster_unref(g1);
	rf_cluster_unref(g2);
	rf_cluster_unref(g3);
	rf_cluster_unref(g4);
	json_decref(relist);
	json_decref(p1);
	json_decref(p2);
	json_decref(p4);
	json_decref(n1);
	json_decref(nodes);
	json_decref(pods);
	store_teardown(&f);
}
END_TEST

/* Node n's label rack=r<i>, as a watch event, and the generation that shows it. */
/* A store of 4 nodes n0..n3 (label rack=r0) and n_pods pods bound to them in turn, with these
 * options (the fixture's cache, configuration and CEL cache filled in), its first generation out.
 */
static void
store_world(struct store_fixture *f, struct rf_store_options o, int n_pods)
{
	rf_config_init(&f->cfg);
	f->cache = rf_cache_new();
	f->cel = rf_cel_cache_new();
	o.cache = f->cache;
	o.cfg = &f->cfg;
	o.cel = f->cel;
	ck_assert_int_eq(rf_store_new(&o, &f->store), 0);
	json_t *nodes = json_array();
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		json_array_append_new(nodes, json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name",
						       name, "labels", "rack", "r0"));
	}
	ck_assert_int_eq(rf_store_replace(f->store, RF_KIND_NODES, nodes), 4);
	json_decref(nodes);
	if (n_pods) {
		json_t *pods = json_array();
		for (int i = 0; i < n_pods; i++) {
			char name[16], uid[16], node[16];
			snprintf(name, sizeof(name), "p%d", i);
			snprintf(uid, sizeof(uid), "u%d", i);
			snprintf(node, sizeof(node), "n%d", i % 4);
			json_array_append_new(pods, pod("a", name, uid, node));
		}
		ck_assert_int_eq(rf_store_replace(f->store, RF_KIND_PODS, pods), n_pods);
		json_decref(pods);
	}
	rf_cluster_unref(settled(f));
}

/* Node `node` labelled rack=r<i> (a watch event). */
static void
put_label(struct store_fixture *f, const char *node, int i)
{
	char rack[16];
	snprintf(rack, sizeof(rack), "r%d", i);
	json_t *n =
		json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", node, "labels", "rack", rack);
	ck_assert_int_eq(rf_store_apply(f->store, RF_KIND_NODES, RF_WATCH_MODIFIED, n), 1);
	json_decref(n);
}

/* The same, waited for until published. */
static void
relabel(struct store_fixture *f, const char *node, int i)
{
	char rack[16];
	snprintf(rack, sizeof(rack), "r%d", i);
	put_label(f, node, i);
	struct rf_cluster *g = settled(f);
	const struct rf_node *rn = rf_cluster_node(g, node);
	ck_assert_str_eq(json_string_value(json_object_get(rn->labels, "rack")), rack);
	ck_assert_uint_eq(rf_cluster_counts(g).nodes, 4);
	rf_cluster_unref(g);
}

/* A chain of patched layouts worn at 64 patches is built in full (beside it, by the publisher
 * between the events), not before; with no change meanwhile that generation is published as it is,
 * and the next events patch it. */
START_TEST(test_store_compacts_worn_layouts)
{
	struct store_fixture f;
	struct rf_store_stats st;
	rf_metrics_reset();
	rf_metrics_declare_railfit("t", "c");
	store_world(&f, (struct rf_store_options){ .min_interval_ms = 10 }, 0);
	/* 40 patches, then a while: not worn, nothing built again */
	for (int i = 1; i <= 40; i++)
		relabel(&f, i % 2 ? "n1" : "n2", i);
	nanosleep(&(struct timespec){ 0, 600 * 1000 * 1000 }, NULL);
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.compacted, 0);
	/* 64 patches, worn at the last: built in full (polled: 5 s at most) */
	for (int i = 41; i <= 64; i++)
		relabel(&f, i % 2 ? "n1" : "n2", i);
	for (int k = 0; k < 500 && st.compacted == 0; k++) {
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
		rf_store_stats(f.store, &st);
	}
	ck_assert_uint_eq(st.compacted, 1);
	ck_assert_uint_eq(st.caught_up, 0);
	struct rf_cluster *g = rf_cache_get(f.cache);
	ck_assert(!rf_cluster_layout_patched(g));
	ck_assert_str_eq(
		json_string_value(json_object_get(rf_cluster_node(g, "n2")->labels, "rack")),
		"r64");
	rf_cluster_unref(g);
	/* the compacted layout is not worn: no second one; the next event patches it */
	nanosleep(&(struct timespec){ 0, 600 * 1000 * 1000 }, NULL);
	relabel(&f, "n3", 65);
	g = rf_cache_get(f.cache);
	ck_assert(rf_cluster_layout_patched(g));
	ck_assert_uint_eq(rf_cluster_layout_chain(g, NULL), 1);
	rf_cluster_unref(g);
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.compacted, 1);
	/* the first build and the compaction the only ones in full; the metric says so */
	ck_assert_uint_eq(st.builds - st.incremental - st.patched, 2);
	char *m = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(strstr(m, "\nrailfit_cache_builds_total{layout=\"compacted\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(m, "\nrailfit_cache_builds_total{layout=\"rebuilt\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(m, "\nrailfit_cache_builds_total{layout=\"patched\"} 65\n"));
	free(m);
	rf_metrics_reset();
	store_teardown(&f);
}
END_TEST

/* Whether g's judgement of node for pod (filter) was remembered (judged now otherwise). */
static bool
judged_remembered(const struct rf_cluster *g, const json_t *pod, const char *node,
		  struct rf_judge_scratch *scratch)
{
	struct rf_demand d;
	struct rf_judge_ctx ctx;
	struct rf_judgement j;
	ck_assert_int_eq(rf_demand_resolve(g, pod, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_KNOWN);
	ck_assert_int_eq(rf_judge_begin(g, &d, &ctx), 0);
	ck_assert_ptr_nonnull(ctx.shape);
	ck_assert_int_eq(rf_judge_node(&ctx, node, true, scratch, &j), 0);
	bool hit = j.picks != scratch->picks; /* the memo's, not the scratch's */
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	return hit;
}

/* Events that keep coming while a worn chain is compacted are built on the chain from within the
 * compaction's checks; its generation then takes the changes since its objects in one patch.
 * Label events 3 ms apart (builds 1 ms apart at least: worn after 64 of them; 6,000 pods to
 * relink, ~10 ms, checked every 1,024) until a compaction was caught up, 100 at least: every
 * event shown, the chain started again. */
START_TEST(test_store_compacts_under_events)
{
	struct store_fixture f;
	struct rf_store_stats st;
	/* pods enough for a compaction to take a while: it asks every 1,024 it relinks */
	store_world(&f, (struct rf_store_options){ .min_interval_ms = 1 }, 6000);
	unsigned compacted_at_1 = 0;
	int i; /* (bounded by time: builds are slower under valgrind, and 64 of them come first) */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1;; i++) {
		put_label(&f, i % 2 ? "n1" : "n2", i);
		nanosleep(&(struct timespec){ 0, 3 * 1000 * 1000 }, NULL);
		rf_store_stats(f.store, &st);
		if (st.caught_up && !compacted_at_1)
			compacted_at_1 = (unsigned)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((i >= 100 && st.caught_up && st.built_in_compaction) ||
		    t.tv_sec - t0.tv_sec > 20)
			break;
	}
	int last_put = i;
	/* a compaction with changes after its objects (caught up) happened amid the events, and
	 * built some of them from within its checks */
	ck_assert_uint_gt(compacted_at_1, 0);
	rf_store_stats(f.store, &st);
	ck_assert_uint_gt(st.built_in_compaction, 0);
	struct rf_cluster *g = settled(&f);
	int last = 0;
	for (int k = 0; k < 2; k++) {
		const char *v = json_string_value(
			json_object_get(rf_cluster_node(g, k ? "n2" : "n1")->labels, "rack"));
		ck_assert_ptr_nonnull(v);
		last = atoi(v + 1) > last ? atoi(v + 1) : last;
	}
	rf_store_stats(f.store, &st);
	/* the last event shown; the chain now is shorter than the patches built */
	ck_assert_int_eq(last, last_put);
	ck_assert_uint_lt(rf_cluster_layout_chain(g, NULL), st.patched);
	ck_assert_uint_ge(st.compacted, 1);
	rf_cluster_unref(g);
	store_teardown(&f);
}
END_TEST

/* A verdict remembered on a worn chain for a node no event touches (n3) is still remembered
 * after the chain moved onto its compaction, although changes came meanwhile (label events one
 * after another, builds 10 ms apart; 6,000 pods, so that the compaction takes ~10 ms and some
 * come during it, however the threads are scheduled): the compaction builds the objects of
 * the generation it relinks from, so it carries that one's verdicts (a snapshot of that moment
 * holds other objects: a new table). */
START_TEST(test_store_compaction_carries_verdicts)
{
	struct store_fixture f;
	struct rf_store_stats st;
	store_world(&f, (struct rf_store_options){ .min_interval_ms = 10 }, 6000);
	/* a pending pod railfit judges (an egress bandwidth): remembered once judged */
	json_t *pending = pod("a", "pending", "u-pending", NULL);
	json_object_set_new(json_object_get(pending, "metadata"), "annotations",
			    json_pack("{s:s}", "kubernetes.io/egress-bandwidth", "1G"));
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	ck_assert_ptr_nonnull(scratch);
	struct rf_cluster *g = settled(&f);
	ck_assert(!judged_remembered(g, pending, "n3", scratch));
	ck_assert(judged_remembered(g, pending, "n3", scratch));
	rf_cluster_unref(g);
	unsigned judged = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 1;; i++) {
		put_label(&f, i % 2 ? "n1" : "n2", i);
		/* judged on the chain: a generation published before any compaction ended */
		g = rf_cache_get(f.cache);
		rf_store_stats(f.store, &st);
		if (!st.compacted) {
			judged_remembered(g, pending, "n3", scratch);
			judged++;
		}
		rf_cluster_unref(g);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (st.caught_up || t.tv_sec - t0.tv_sec > 20)
			break;
	}
	ck_assert_uint_gt(st.caught_up, 0);
	ck_assert_uint_gt(judged, 0);
	/* carried across the compaction, and kept by the patch that caught it up */
	g = settled(&f);
	ck_assert(judged_remembered(g, pending, "n3", scratch));
	rf_cluster_unref(g);
	free(scratch);
	json_decref(pending);
	store_teardown(&f);
}
END_TEST

/* The heap a full build freed is given back once nothing was built for trim_idle_ms, not while
 * changes keep coming (the builds after a trim fault in again what it gave back), and only once
 * for one full build. */
START_TEST(test_store_trims_when_idle)
{
	struct store_fixture f;
	struct rf_store_stats st;
	/* its first build: in full */
	store_world(&f, (struct rf_store_options){ .min_interval_ms = 10, .trim_idle_ms = 1000 },
		    0);
	/* a change every 50 ms for 0.6 s: never idle for 1 s, nothing given back */
	for (int i = 1; i <= 12; i++) {
		relabel(&f, "n1", i);
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.trims, 0);
	/* then idle: given back once (polled: 5 s at most) */
	for (int k = 0; k < 500 && st.trims == 0; k++) {
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
		rf_store_stats(f.store, &st);
	}
	ck_assert_uint_eq(st.trims, 1);
	/* not again: nothing was freed since (a patched build owes nothing) */
	relabel(&f, "n2", 13);
	nanosleep(&(struct timespec){ 1, 300 * 1000 * 1000 }, NULL);
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.trims, 1);
	store_teardown(&f);
}
END_TEST

START_TEST(test_store_assumed_placements)
{
	struct store_fixture f;
	store_setup(&f);
	json_t *items = json_pack("[o, o]", pod("a", "p1", "u1", NULL), pod("a", "p2", "u2", NULL));
	rf_store_replace(f.store, RF_KIND_PODS, items);
	json_decref(items);

	int64_t seq = rf_store_assume(f.store, "a", "p1", "u1", "n7", 60000);
	ck_assert_int_gt(seq, 0);
	ck_assert(rf_store_wait_published(f.store, seq, 5000));
	struct rf_cluster *g = rf_cache_get(f.cache);
	ck_assert_str_eq(rf_cluster_pod(g, "a", "p1")->node_name, "n7");
	ck_assert_ptr_null(rf_cluster_pod(g, "a", "p2")->node_name);
	rf_cluster_unref(g);
	struct rf_store_stats st;
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.assumed, 1);

	/* an update that does not bind keeps the assumption on the new object */
	json_t *p1 = pod("a", "p1", "u1", NULL);
	/* (a label of groups.labels: the store keeps no other, issue 12) */
	json_object_set_new(json_object_get(p1, "metadata"), "labels",
			    json_pack("{s:s}", "railfit.io/group", "y"));
	rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p1);
	g = settled(&f);
	ck_assert_str_eq(rf_cluster_pod(g, "a", "p1")->node_name, "n7");
	json_t *seen = rf_snapshot_expand(rf_cluster_pod(g, "a", "p1")->json, NULL);
	ck_assert_ptr_nonnull(json_object_get(
		json_object_get(json_object_get(seen, "metadata"), "labels"), "railfit.io/group"));
	json_decref(seen);
	rf_cluster_unref(g);
	json_decref(p1);

	/* the watch confirms: the assumption goes */
	p1 = pod("a", "p1", "u1", "n7");
	rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p1);
	g = settled(&f);
	rf_cluster_unref(g);
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.assumed, 0);
	json_decref(p1);

	/* an unconfirmed placement expires after the TTL */
	seq = rf_store_assume(f.store, "a", "p2", "u2", "n8", 200);
	ck_assert(rf_store_wait_published(f.store, seq, 5000));
	g = rf_cache_get(f.cache);
	ck_assert_str_eq(rf_cluster_pod(g, "a", "p2")->node_name, "n8");
	rf_cluster_unref(g);
	nanosleep(&(struct timespec){ 0, 500 * 1000 * 1000 }, NULL);
	g = settled(&f);
	ck_assert_ptr_null(rf_cluster_pod(g, "a", "p2")->node_name);
	rf_cluster_unref(g);
	rf_store_stats(f.store, &st);
	ck_assert_uint_eq(st.assumed, 0);

	/* a pod recreated under the same name (other UID) drops the assumption */
	seq = rf_store_assume(f.store, "a", "p2", "u2", "n8", 60000);
	json_t *p2 = pod("a", "p2", "u2-new", NULL);
	rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_ADDED, p2);
	g = settled(&f);
	ck_assert_ptr_null(rf_cluster_pod(g, "a", "p2")->node_name);
	rf_cluster_unref(g);
	json_decref(p2);
	store_teardown(&f);
}
END_TEST

START_TEST(test_store_coalesces_bursts)
{
	struct store_fixture f;
	store_setup(&f);
	for (int i = 0; i < 2000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p%d", i % 50);
		json_t *p = pod("a", name, "u", NULL);
		rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_ADDED, p);
		json_decref(p);
	}
	struct rf_cluster *g = settled(&f);
	ck_assert_uint_eq(rf_cluster_counts(g).pods, 50);
	rf_cluster_unref(g);
	struct rf_store_stats st;
	rf_store_stats(f.store, &st);
	ck_assert_uint_lt(st.builds, 200); /* far fewer generations than events */
	ck_assert_uint_eq(st.objects[RF_KIND_PODS], 50);
	store_teardown(&f);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * The client against a small scripted API server (libmicrohttpd, thread per connection)
 */

struct stub {
	struct MHD_Daemon *d;
	unsigned port;
	atomic_int n_401, n_auth, n_patch;
	atomic_int stream_hold; /* the stream callback stalls while set */
	char patch_ct[128];
	char patch_body[1024];
};

struct upload {
	char buf[1024];
	size_t len;
};

static ssize_t
stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stub *st = cls;
	static const char ev[] = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
				 "{\"resourceVersion\":\"5\"}}}\n";
	if (pos == 0) {
		size_t n = sizeof(ev) - 1 < max ? sizeof(ev) - 1 : max;
		memcpy(buf, ev, n);
		return (ssize_t)n;
	}
	/* then silence, until the test lets go (or 20 s) */
	for (int i = 0; i < 400 && atomic_load(&st->stream_hold); i++)
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned code, const char *ctype, const char *body,
      const char *hname, const char *hvalue)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", ctype);
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	enum MHD_Result ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
stub_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	     const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct stub *st = cls;
	if (!*con_cls) {
		*con_cls = calloc(1, sizeof(struct upload));
		return MHD_YES;
	}
	struct upload *u = *con_cls;
	if (*upload_size) {
		size_t n = *upload_size < sizeof(u->buf) - 1 - u->len ? *upload_size
								      : sizeof(u->buf) - 1 - u->len;
		memcpy(u->buf + u->len, upload_data, n);
		u->len += n;
		*upload_size = 0;
		return MHD_YES;
	}
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *ua = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "User-Agent");
	if (!ua || strncmp(ua, "railfit/", 8) != 0)
		return reply(c, 400, "text/plain", "bad user agent", NULL, NULL);
	if (!strcmp(url, "/version"))
		return reply(c, 200, "application/json",
			     "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.3\"}", NULL,
			     NULL);
	if (!strcmp(url, "/auth")) {
		atomic_fetch_add(&st->n_auth, 1);
		if (auth && !strcmp(auth, "Bearer new"))
			return reply(c, 200, "application/json", "{}", NULL, NULL);
		atomic_fetch_add(&st->n_401, 1);
		return reply(
			c, 401, "application/json",
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
			"\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
			"\"code\":401}",
			NULL, NULL);
	}
	if (!strcmp(url, "/429"))
		return reply(c, 429, "text/plain; charset=utf-8",
			     "Too many requests, please try again later.\n", "Retry-After", "7");
	if (!strcmp(url, "/403"))
		return reply(
			c, 403, "application/json",
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
			"\"Failure\",\"message\":\"nodes is forbidden: User \\\"u\\\" cannot watch "
			"resource \\\"nodes\\\" in API group \\\"\\\" at the cluster scope\","
			"\"reason\":\"Forbidden\",\"details\":{\"kind\":\"nodes\"},\"code\":403}",
			NULL, NULL);
	if (!strcmp(url, "/api/v1/nodes/n1") && !strcmp(method, "PATCH")) {
		atomic_fetch_add(&st->n_patch, 1);
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
		snprintf(st->patch_ct, sizeof(st->patch_ct), "%s", ct ? ct : "");
		u->buf[u->len] = 0;
		snprintf(st->patch_body, sizeof(st->patch_body), "%s", u->buf);
		return reply(c, 200, "application/json", "{\"kind\":\"Node\"}", NULL, NULL);
	}
	if (!strcmp(url, "/stream")) {
		struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024,
									   stream_cb, st, NULL);
		enum MHD_Result ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	return reply(c, 404, "application/json",
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
		     "\"Failure\",\"message\":\"nodes \\\"missing\\\" not found\",\"reason\":"
		     "\"NotFound\",\"code\":404}",
		     NULL, NULL);
}

static void
stub_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
	free(*con_cls);
	*con_cls = NULL;
}

static void
stub_start(struct stub *st)
{
	memset(st, 0, sizeof(*st));
	st->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
				 NULL, NULL, stub_handler, st, MHD_OPTION_NOTIFY_COMPLETED,
				 stub_done, NULL, MHD_OPTION_END);
	ck_assert_ptr_nonnull(st->d);
	st->port = MHD_get_daemon_info(st->d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* A kubeconfig for the stub with a token file holding `token`; returns its path in buf. */
static void
stub_kubeconfig(const struct stub *st, char *dir, char *kc, size_t len, const char *token)
{
	char doc[1024], tok[512];
	snprintf(tok, sizeof(tok), "%s/token", dir);
	write_file(tok, token);
	snprintf(
		doc, sizeof(doc),
		"apiVersion: v1\nclusters:\n- name: s\n  cluster:\n    server: http://127.0.0.1:%u\n"
		"users:\n- name: u\n  user:\n    tokenFile: token\n"
		"contexts:\n- name: c\n  context: {cluster: s, user: u}\ncurrent-context: c\n",
		st->port);
	snprintf(kc, len, "%s/kubeconfig", dir);
	write_file(kc, doc);
}

struct streamed {
	size_t bytes;
};

static int
count_bytes(void *ud, const char *data, size_t len)
{
	((struct streamed *)ud)->bytes += len;
	return 0;
}

struct stopper {
	struct rf_kube *k;
	double after;
};

static void *
stop_later(void *arg)
{
	struct stopper *s = arg;
	nanosleep(&(struct timespec){ 0, (long)(s->after * 1e9) }, NULL);
	rf_kube_stop(s->k);
	return NULL;
}

START_TEST(test_kube_client_against_stub)
{
	struct stub st;
	char dir[] = "/tmp/rf-kube-XXXXXX", kc[600], err[1024], gv[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	stub_start(&st);
	stub_kubeconfig(&st, dir, kc, sizeof(kc), "old\n");
	struct rf_kube_options o = { .kubeconfig = kc, .qps = 1000, .user_agent = "railfit/test" };
	struct rf_kube *k = NULL;
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(rf_kube_source(k), "kubeconfig"));
	struct rf_kube_conn *c = rf_kube_conn_new(k);
	ck_assert_ptr_nonnull(c);

	ck_assert_int_eq(rf_kube_server_version(c, gv, sizeof(gv), err, sizeof(err)), 0);
	ck_assert_str_eq(gv, "v1.34.3");

	/* the annotation patch railfit topology --publish sends */
	ck_assert_int_eq(rf_kube_patch_node_annotation(c, "n1", "railfit.io/pci-topology", "v", err,
						       sizeof(err)),
			 0);
	ck_assert_str_eq(st.patch_ct, "application/merge-patch+json");
	ck_assert_str_eq(st.patch_body,
			 "{\"metadata\":{\"annotations\":{\"railfit.io/pci-topology\":\"v\"}}}");
	ck_assert_int_eq(rf_kube_patch_node_annotation(c, "missing", "a", NULL, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "404 Not Found: nodes \"missing\" not found"));

	/* the token file is rewritten in place with its old mtime: only the 401 tells */
	char tok[600];
	struct stat before;
	snprintf(tok, sizeof(tok), "%s/token", dir);
	ck_assert_int_eq(stat(tok, &before), 0);
	write_file(tok, "new\n");
	struct timespec times[2] = { before.st_atim, before.st_mtim };
	ck_assert_int_eq(utimensat(AT_FDCWD, tok, times, 0), 0);
	struct rf_kube_response resp;
	struct rf_kube_request req = { .path = "/auth" };
	ck_assert_int_eq(rf_kube_do(c, &req, &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_int_eq(atomic_load(&st.n_401), 1);
	ck_assert_int_eq(atomic_load(&st.n_auth), 2);
	rf_kube_response_release(&resp);

	/* APF's 429: text body, Retry-After */
	req.path = "/429";
	ck_assert_int_eq(rf_kube_do(c, &req, &resp), 0);
	ck_assert_int_eq(resp.status, 429);
	ck_assert_int_eq(resp.retry_after, 7);
	ck_assert_ptr_nonnull(strstr(resp.error, "429 Too Many Requests: Too many requests"));
	rf_kube_response_release(&resp);

	/* 403: the Status message and what the role lacks */
	req.path = "/403";
	ck_assert_int_eq(rf_kube_do(c, &req, &resp), 0);
	ck_assert_int_eq(resp.status, 403);
	ck_assert_str_eq(resp.reason, "Forbidden");
	rf_kube_describe_failure(&resp, "watch", "nodes", "", err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(err, "cannot watch resource \"nodes\""));
	ck_assert_ptr_nonnull(strstr(err, "needs verb \"watch\" on resource \"nodes\""));
	rf_kube_response_release(&resp);

	/* a stream that goes silent hits the idle limit, with the 200 known */
	struct streamed sd = { 0 };
	atomic_store(&st.stream_hold, 1);
	struct rf_kube_request sreq = {
		.path = "/stream", .idle_ms = 1000, .on_data = count_bytes, .userdata = &sd
	};
	double t0 = rf_kube_now();
	ck_assert_int_eq(rf_kube_do(c, &sreq, &resp), -ETIMEDOUT);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_gt(sd.bytes, 10);
	ck_assert(rf_kube_now() - t0 < 5);
	rf_kube_response_release(&resp);

	/* rf_kube_stop ends a silent stream within about a second */
	struct stopper sp = { k, 0.3 };
	pthread_t th;
	pthread_create(&th, NULL, stop_later, &sp);
	sreq.idle_ms = 30000;
	t0 = rf_kube_now();
	ck_assert_int_eq(rf_kube_do(c, &sreq, &resp), -ECANCELED);
	ck_assert(rf_kube_now() - t0 < 2.5);
	ck_assert(rf_kube_stopping(k));
	ck_assert_int_eq(rf_kube_sleep(k, 10), -ECANCELED);
	pthread_join(th, NULL);
	rf_kube_response_release(&resp);
	atomic_store(&st.stream_hold, 0);

	rf_kube_conn_free(c);
	rf_kube_free(k);
	MHD_stop_daemon(st.d);
	unlink(tok);
	unlink(kc);
	rmdir(dir);
}
END_TEST

START_TEST(test_kube_client_rate_limit_and_refused)
{
	struct stub st;
	char dir[] = "/tmp/rf-kube-XXXXXX", kc[600], err[1024], gv[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	stub_start(&st);
	stub_kubeconfig(&st, dir, kc, sizeof(kc), "new");
	struct rf_kube_options o = {
		.kubeconfig = kc, .qps = 10, .burst = 1, .user_agent = "railfit/test"
	};
	struct rf_kube *k = NULL;
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), 0);
	struct rf_kube_conn *c = rf_kube_conn_new(k);
	double t0 = rf_kube_now();
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(rf_kube_server_version(c, gv, sizeof(gv), err, sizeof(err)), 0);
	ck_assert(rf_kube_now() - t0 >= 0.45); /* 10/s, burst 1: 5 waits of 0.1 s */
	rf_kube_conn_free(c);
	rf_kube_free(k);
	unsigned port = st.port;
	MHD_stop_daemon(st.d);

	/* nothing listens there any more */
	char tok[600];
	snprintf(tok, sizeof(tok), "%s/token", dir);
	st.port = port;
	stub_kubeconfig(&st, dir, kc, sizeof(kc), "new");
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), 0);
	c = rf_kube_conn_new(k);
	struct rf_kube_response resp;
	struct rf_kube_request req = { .path = "/version" };
	ck_assert_int_eq(rf_kube_do(c, &req, &resp), -ECONNREFUSED);
	ck_assert_int_eq(resp.status, 0);
	ck_assert_ptr_nonnull(
		strstr(resp.error, "cannot connect to the API server at http://127.0.0.1:"));
	rf_kube_response_release(&resp);
	rf_kube_conn_free(c);
	rf_kube_free(k);
	unlink(tok);
	unlink(kc);
	rmdir(dir);
}
END_TEST

START_TEST(test_kube_new_errors)
{
	char dir[] = "/tmp/rf-kube-XXXXXX", path[600], err[1024];
	struct rf_kube *k = NULL;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nope", dir);
	struct rf_kube_options o = { .kubeconfig = path };
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot read kubeconfig"));

	/* a tokenFile that does not exist is a configuration error naming it */
	write_file(path, "clusters: [{name: s, cluster: {server: 'http://h:1'}}]\n"
			 "users: [{name: u, user: {tokenFile: /nonexistent/token}}]\n"
			 "contexts: [{name: c, context: {cluster: s, user: u}}]\n"
			 "current-context: c\n");
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "cannot read token file '/nonexistent/token'"));

	/* no configuration anywhere (this runs in Check's forked child: the environment is ours) */
	setenv("HOME", dir, 1);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	o.kubeconfig = NULL;
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no kube-apiserver configuration found"));

	/* $KUBECONFIG: the first file that exists */
	char env[1300];
	snprintf(env, sizeof(env), "%s/missing:%s", dir, path);
	setenv("KUBECONFIG", env, 1);
	write_file(path, "clusters: [{name: s, cluster: {server: 'http://h:1'}}]\n"
			 "contexts: [{name: c, context: {cluster: s}}]\ncurrent-context: c\n");
	ck_assert_int_eq(rf_kube_new(&o, &k, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(rf_kube_source(k), "from $KUBECONFIG"));
	ck_assert_str_eq(rf_kube_server(k), "http://h:1");
	rf_kube_free(k);
	unlink(path);
	rmdir(dir);
}
END_TEST

Suite *kube_suite(void);

Suite *
kube_suite(void)
{
	Suite *s = suite_create("kube");
	TCase *tc = tcase_create("kubeconfig");
	tcase_add_test(tc, test_kubeconfig_https_ca_data_token);
	tcase_add_test(tc, test_kubeconfig_context_override_http_token_file);
	tcase_add_test(tc, test_kubeconfig_client_cert_files_and_data);
	tcase_add_test(tc, test_kubeconfig_insecure_json_and_anchors);
	tcase_add_loop_test(tc, test_kubeconfig_errors, 0,
			    (int)(sizeof(kc_errors) / sizeof(kc_errors[0])));
	tcase_add_test(tc, test_kubeconfig_in_cluster);
	tcase_add_test(tc, test_base64);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch_stream");
	tcase_add_test(tc, test_watch_stream_boundaries_anywhere);
	tcase_add_test(tc, test_watch_stream_empty_chunks_and_truncation);
	tcase_add_test(tc, test_watch_stream_oversize);
	tcase_add_loop_test(tc, test_watch_stream_garbage, 0,
			    (int)(sizeof(garbage) / sizeof(garbage[0])));
	tcase_add_test(tc, test_watch_stream_error_event_and_callback_stop);
	suite_add_tcase(s, tc);

	tc = tcase_create("arithmetic");
	tcase_add_test(tc, test_backoff_client_go);
	tcase_add_test(tc, test_watch_timeouts);
	tcase_add_test(tc, test_rv_compare);
	tcase_add_test(tc, test_token_bucket);
	tcase_add_test(tc, test_parse_helpers);
	tcase_add_test(tc, test_describe_failure);
	tcase_add_test(tc, test_bind_helpers);
	suite_add_tcase(s, tc);

	tc = tcase_create("client");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_kube_client_against_stub);
	tcase_add_test(tc, test_kube_client_rate_limit_and_refused);
	tcase_add_test(tc, test_kube_new_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("store");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_store_events_like_client_go);
	tcase_add_test(tc, test_store_compacts_worn_layouts);
	tcase_add_test(tc, test_store_compacts_under_events);
	tcase_add_test(tc, test_store_compaction_carries_verdicts);
	tcase_add_test(tc, test_store_trims_when_idle);
	tcase_add_test(tc, test_store_assumed_placements);
	tcase_add_test(tc, test_store_builds_only_what_changed);
	tcase_add_test(tc, test_store_keeps_the_arrays_builds_take);
	tcase_add_test(tc, test_store_coalesces_bursts);
	suite_add_tcase(s, tc);
	return s;
}
