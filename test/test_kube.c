/* The live-cluster building blocks without a network: kubeconfig parsing (the ways users write
 * them, and every error a person can act on), the watch stream splitter and decoder (event
 * boundaries anywhere, oversize, garbage, truncation), client-go's backoff and watch-timeout
 * arithmetic, resourceVersion ordering, the token bucket, Retry-After and version parsing, the
 * bind helpers, and the object store's event semantics (duplicate ADDED, unknown DELETED,
 * relist deletions, assumed placements). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <jansson.h>

#include "config/kubeconfig.h"
#include "server/bind.h"
#include "server/cache.h"
#include "server/kube.h"
#include "server/reflector.h"
#include "server/store.h"
#include "server/watch_stream.h"

/* "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" */
#define PEM_TEXT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define PEM_B64                                                                                    \
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

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
	ck_assert_int_eq(rf_kubeconfig_in_cluster("", "443", "/sa", &kc, err, sizeof(err)), -EINVAL);
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
	const char *name = json_string_value(
		json_object_get(json_object_get(ev->object, "metadata"), "name"));
	json_array_append_new(c->events,
			      json_pack("[s, s]", rf_watch_type_name(ev->type),
					name ? name : ev->rv ? ev->rv : (ev->reason ? ev->reason : "")));
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
			ck_assert_int_eq(rf_watch_stream_feed(&ws, stream3 + cut, len - cut, collect,
							      &c, err, sizeof(err)),
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
	ck_assert_int_eq(rf_watch_stream_feed(&ws, part, strlen(part), collect, &c, err, sizeof(err)),
			 0);
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
	int n = snprintf(big, sizeof(big), "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"");
	while (n < 100 - 4) /* 100 bytes, then the newline */
		big[n++] = 'a';
	memcpy(big + n, "\"}}}\n", 5);
	n += 5;
	ck_assert_int_eq(rf_watch_stream_feed(&ws, big, (size_t)n, collect, &c, err, sizeof(err)), 0);
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
	ck_assert_int_eq(rf_watch_stream_feed(&ws, "\n", 1, collect, &c, err, sizeof(err)), -EPROTO);
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
	const char *line = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
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
	ck_assert_int_eq(rf_watch_stream_feed(&ws, stream3, strlen(stream3), collect, &c, err,
					      sizeof(err)),
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
	struct rf_backoff b;
	rf_backoff_init(&b);
	const double want[] = { 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30 };
	double t = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_double_eq_tol(rf_backoff_step(&b, t, 0), want[i], 1e-9);
		t += 1;
	}
	/* jitter 1.0: each delay in [d, 2d) */
	ck_assert_double_eq_tol(rf_backoff_step(&b, t, 0.5), 45, 1e-9);
	ck_assert(rf_backoff_step(&b, t + 1, 0.9999999) < 60);
	/* more than 2 minutes since the last step: back to 0.8 s */
	ck_assert_double_eq_tol(rf_backoff_step(&b, t + 200, 0), 0.8, 1e-9);
	ck_assert_double_eq_tol(rf_backoff_step(&b, t + 201, 0), 1.6, 1e-9);
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
	ck_assert_int_eq(rf_rv_compare("99999999999999999999999", "100000000000000000000000", &c), 0);
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
	struct rf_store_options o = { .cache = f->cache, .cfg = &f->cfg, .cel = f->cel,
				      .min_interval_ms = 10 };
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
	json_t *p = json_pack("{s:{s:s, s:s, s:s, s:[{s:s}]}, s:{s:[]}, s:{s:s}}", "metadata", "name",
			      name, "namespace", ns, "uid", uid, "managedFields", "manager", "kubectl",
			      "spec", "containers", "status", "phase", "Pending");
	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	return p;
}

/* The generation once every change so far is published. */
static struct rf_cluster *
settled(struct store_fixture *f)
{
	int64_t seq = rf_store_assume(f->store, "-", "-", "", "-", 0); /* the current change number */
	ck_assert(rf_store_wait_published(f->store, seq, 5000));
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
	json_object_set_new(json_object_get(p1, "metadata"), "labels", json_pack("{s:s}", "x", "y"));
	rf_store_apply(f.store, RF_KIND_PODS, RF_WATCH_MODIFIED, p1);
	g = settled(&f);
	ck_assert_str_eq(rf_cluster_pod(g, "a", "p1")->node_name, "n7");
	ck_assert_ptr_nonnull(json_object_get(rf_cluster_pod(g, "a", "p1")->labels, "x"));
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

	tc = tcase_create("store");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_store_events_like_client_go);
	tcase_add_test(tc, test_store_assumed_placements);
	tcase_add_test(tc, test_store_coalesces_bursts);
	suite_add_tcase(s, tc);
	return s;
}
