/* POST /bind (see bind.h). Owns a pool of idle API connections guarded by `lock`, which is held
 * only to push or pop a connection. Runs on MHD pool threads. */
#include "server/kube/bind.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "server/http/extender.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/snapshot/snapshot.h"

#define POOL_MAX 16

struct rf_binder {
	struct rf_kube *kube;
	struct rf_store *store;
	int64_t assume_ttl_ms;
	long timeout_ms;
	const struct rf_strv *scheduler_names;
	struct rf_cache *cache;
	pthread_mutex_t lock;
	struct rf_kube_conn *idle[POOL_MAX];
	size_t n_idle;
};

static const char *const results[] = { "ok",        "already_bound", "conflict",  "not_found",
				       "forbidden", "rejected",      "throttled", "timeout",
				       "error",     "invalid",       "refused" };

int
rf_binder_new(const struct rf_binder_options *o, struct rf_binder **ret)
{
	struct rf_binder *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->kube = o->kube;
	b->store = o->store;
	b->assume_ttl_ms = o->assume_ttl_ms;
	b->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 4000;
	b->scheduler_names = o->scheduler_names;
	b->cache = o->cache;
	pthread_mutex_init(&b->lock, NULL);
	char l[64];
	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++)
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_BIND_TOTAL, results[i], NULL) >= 0)
			rf_metric_add(RF_METRIC_BIND_TOTAL, l, 0);
	*ret = b;
	return 0;
}

void
rf_binder_free(struct rf_binder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_idle; i++)
		rf_kube_conn_free(b->idle[i]);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static struct rf_kube_conn *
take_conn(struct rf_binder *b)
{
	struct rf_kube_conn *c = NULL;
	pthread_mutex_lock(&b->lock);
	if (b->n_idle)
		c = b->idle[--b->n_idle];
	pthread_mutex_unlock(&b->lock);
	return c ? c : rf_kube_conn_new(b->kube);
}

static void
give_conn(struct rf_binder *b, struct rf_kube_conn *c)
{
	pthread_mutex_lock(&b->lock);
	if (b->n_idle < POOL_MAX) {
		b->idle[b->n_idle++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	rf_kube_conn_free(c);
}

bool
rf_bind_conflict_same_node(const char *message, const char *node)
{
	const char *p = message ? strstr(message, "is already assigned to node \"") : NULL;
	if (!p || !node)
		return false;
	p += strlen("is already assigned to node \"");
	size_t n = strlen(node);
	return strncmp(p, node, n) == 0 && p[n] == '"';
}

char *
rf_bind_error_text(const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += *p == '%' ? 3 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '%') {
			memcpy(o, "pct", 3);
			o += 3;
		} else {
			/* plain ASCII keeps the JSON string valid whatever the server sent */
			*o++ = c >= 0x20 && c < 0x7f ? (char)c : '?';
		}
	}
	*o = 0;
	return out;
}

static void
count(const char *result)
{
	char l[64];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_BIND_TOTAL, result, NULL) >= 0)
		rf_metric_add(RF_METRIC_BIND_TOTAL, l, 1);
}

/* {"Error": text} with HTTP 200 (the protocol's failure shape); text loses its '%'. */
static int
reply_error(struct rf_http_response *resp, int status, const char *text)
{
	char *clean = rf_bind_error_text(text);
	if (!clean)
		return -ENOMEM;
	json_t *j = rf_extender_bind_result(clean);
	if (j && status != 200) {
		json_object_set_new(j, "error", json_string("invalid ExtenderBindingArgs"));
		json_object_set_new(j, "detail", json_string(clean));
	}
	free(clean);
	return rf_http_reply_json(resp, status, j);
}

/* spec.schedulerName of a Pod object (kube-apiserver defaults it); NULL when it is not a Pod. */
static const char *
scheduler_of(const json_t *pod, const char *uid)
{
	const char *have =
		json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
	if (!json_is_object(pod) || (uid && *uid && have && strcmp(uid, have) != 0))
		return NULL;
	const char *s =
		json_string_value(json_object_get(json_object_get(pod, "spec"), "schedulerName"));
	return s ? s : "default-scheduler";
}

/* The pod's scheduler name into out: from the cache, else from the API server (a list by name,
 * which the list permission railfit holds anyway allows). 0, -ENOENT (no such pod, or another
 * UID), or an error with err set. */
static int
pod_scheduler(struct rf_binder *b, struct rf_kube_conn *conn, const struct rf_extender_bind_args *a,
	      char *out, size_t outlen, char *err, size_t errlen)
{
	const char *name = NULL;
	json_t *pod = NULL, *list = NULL;
	struct rf_kube_response kr = { 0 };
	int r = -ENOENT;
	struct rf_cluster *gen = b->cache ? rf_cache_get(b->cache) : NULL;
	const struct rf_pod *p = gen ? rf_cluster_pod(gen, a->pod_namespace, a->pod_name) : NULL;
	if (p && (pod = rf_snapshot_expand(p->json, NULL)))
		name = scheduler_of(pod, a->pod_uid);
	rf_cluster_unref(gen);
	if (!name) {
		char path[1200], *ens = curl_easy_escape(NULL, a->pod_namespace, 0),
				 *sel = curl_easy_escape(NULL, a->pod_name, 0);
		if (!ens || !sel) {
			curl_free(ens);
			curl_free(sel);
			r = -ENOMEM;
			goto out;
		}
		snprintf(path, sizeof(path),
			 "/api/v1/namespaces/%s/pods?fieldSelector=metadata.name%%3D%s&limit=1",
			 ens, sel);
		curl_free(ens);
		curl_free(sel);
		struct rf_kube_request kreq = { .path = path,
						.timeout_ms = b->timeout_ms / 2,
						.max_body = 4 << 20 };
		r = rf_kube_do(conn, &kreq, &kr);
		if (r < 0 || kr.status != 200) {
			snprintf(err, errlen, "cannot read pod %s/%s: %s", a->pod_namespace,
				 a->pod_name,
				 r < 0 || kr.error[0] ? kr.error : "unexpected status");
			r = r < 0 ? r : -EIO;
			goto out;
		}
		list = json_loadb(kr.body, kr.body_len, 0, NULL);
		name = scheduler_of(json_array_get(json_object_get(list, "items"), 0), a->pod_uid);
		r = -ENOENT;
	}
	if (name) {
		snprintf(out, outlen, "%s", name);
		r = 0;
	} else {
		snprintf(err, errlen, "pod %s/%s%s%s not found", a->pod_namespace, a->pod_name,
			 a->pod_uid && *a->pod_uid ? " with UID " : "",
			 a->pod_uid ? a->pod_uid : "");
	}
out:
	json_decref(pod);
	json_decref(list);
	rf_kube_response_release(&kr);
	return r;
}

static bool
served_profile(const struct rf_binder *b, const char *name)
{
	for (size_t i = 0; i < b->scheduler_names->n; i++)
		if (strcmp(b->scheduler_names->v[i], name) == 0)
			return true;
	return false;
}

static char *
binding_body(const struct rf_extender_bind_args *a)
{
	json_t *md = json_pack("{s:s, s:s}", "name", a->pod_name, "namespace", a->pod_namespace);
	if (md && a->pod_uid && *a->pod_uid)
		json_object_set_new(md, "uid", json_string(a->pod_uid));
	json_t *j = md ? json_pack("{s:s, s:s, s:o, s:{s:s, s:s}}", "kind", "Binding", "apiVersion",
				   "v1", "metadata", md, "target", "kind", "Node", "name", a->node)
		       : NULL;
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return s;
}

int
rf_verb_bind(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct rf_binder *b = userdata;
	struct rf_extender_bind_args a = { 0 };
	struct rf_kube_response kr = { 0 };
	struct rf_kube_conn *conn = NULL;
	char err[1200], path[1024];
	char *body = NULL, *ens = NULL, *ename = NULL;
	int r = rf_extender_bind_args_parse(req->body, req->body_len, &a, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		count("invalid");
		rf_v(2, "rejected ExtenderBindingArgs", "err", err);
		return reply_error(resp, 400, err);
	}
	if (!a.pod_name || !*a.pod_name || !a.pod_namespace || !*a.pod_namespace || !a.node ||
	    !*a.node) {
		count("invalid");
		r = reply_error(resp, 400,
				"ExtenderBindingArgs: PodName, PodNamespace and Node "
				"must not be empty");
		goto out;
	}
	if (!(conn = take_conn(b)) || !(body = binding_body(&a)) ||
	    !(ens = curl_easy_escape(NULL, a.pod_namespace, 0)) ||
	    !(ename = curl_easy_escape(NULL, a.pod_name, 0))) {
		r = -ENOMEM;
		goto out;
	}
	char sched[256];
	char pod[600];
	snprintf(pod, sizeof(pod), "%s/%s", a.pod_namespace, a.pod_name);
	/* without a list of profiles (tests), any pod */
	r = b->scheduler_names ? pod_scheduler(b, conn, &a, sched, sizeof(sched), err, sizeof(err))
			       : 0;
	if (r == -ENOMEM)
		goto out;
	if (r == 0 && b->scheduler_names && !served_profile(b, sched)) {
		snprintf(err, sizeof(err),
			 "pod %s has schedulerName \"%s\", which is not in bind.schedulerNames: "
			 "railfit binds only the pods of the profiles it serves",
			 pod, sched);
		r = -EPERM;
	}
	if (r < 0) {
		const char *res = r == -ENOENT ? "not_found" : r == -EPERM ? "refused" : "error";
		count(res);
		rf_warn("cannot bind pod", "pod", pod, "node", a.node, "result", res, "err", err);
		r = reply_error(resp, 200, err);
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", ens, ename);
	double start = rf_kube_now();
	for (int attempt = 0;; attempt++) {
		long left = b->timeout_ms - (long)((rf_kube_now() - start) * 1000.0);
		struct rf_kube_request kreq = { .method = "POST",
						.path = path,
						.body = body,
						.body_len = strlen(body),
						.timeout_ms = left > 100 ? left : 100,
						.max_body = 1024 * 1024 };
		rf_kube_response_release(&kr);
		r = rf_kube_do(conn, &kreq, &kr);
		/* the connection broke, maybe after the server committed: one more try answers
		 * 201 or "already assigned to this node" (both success) */
		if ((r == -ECONNRESET || r == -ECONNREFUSED) && attempt == 0 &&
		    (rf_kube_now() - start) * 1000.0 < b->timeout_ms / 2)
			continue;
		break;
	}
	const char *result = NULL;
	if (r < 0) {
		result = r == -ETIMEDOUT ? "timeout" : "error";
		snprintf(err, sizeof(err), "pods/binding \"%s\" failed: %s", a.pod_name, kr.error);
	} else if (kr.status == 201 || kr.status == 200) {
		result = "ok";
	} else if (kr.status == 409 && rf_bind_conflict_same_node(kr.error, a.node)) {
		result = "already_bound";
	} else {
		char text[1000];
		rf_kube_describe_failure(&kr, "create", "pods/binding", "", text, sizeof(text));
		snprintf(err, sizeof(err), "pods/binding \"%s\" failed: %s", a.pod_name, text);
		result = kr.status == 409                       ? "conflict"
			 : kr.status == 404                     ? "not_found"
			 : kr.status == 401 || kr.status == 403 ? "forbidden"
			 : kr.status == 429                     ? "throttled"
			 : kr.status >= 500                     ? "error"
								: "rejected";
	}
	count(result);
	if (strcmp(result, "ok") != 0 && strcmp(result, "already_bound") != 0) {
		rf_warn("cannot bind pod", "pod", pod, "node", a.node, "result", result, "err",
			err);
		r = reply_error(resp, 200, err);
		goto out;
	}
	int64_t seq = rf_store_assume(b->store, a.pod_namespace, a.pod_name, a.pod_uid, a.node,
				      b->assume_ttl_ms);
	/* count the placement before answering, so the next filter sees it (a second at most: a
	 * layout built in full, 0.2-0.4 s at 5,000 nodes, may be under way) */
	if (seq > 0)
		rf_store_wait_published(b->store, seq, 1000);
	rf_v(2, "bound pod", "pod", pod, "node", a.node, "result", result);
	r = rf_http_reply_json(resp, 200, rf_extender_bind_result(""));
out:
	if (conn)
		give_conn(b, conn);
	rf_kube_response_release(&kr);
	curl_free(ens);
	curl_free(ename);
	free(body);
	rf_extender_bind_args_release(&a);
	return r;
}
