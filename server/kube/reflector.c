/* Reflectors (see reflector.h).
 *
 * Threads: one per kind, each owning its rf_kube_conn (one CURL handle), its watch stream buffer
 * and its list/watch state; they share only the thread-safe client, store and cache. A reflector
 * blocks only in libcurl or in rf_kube_sleep(), both of which return within about a second of
 * rf_kube_stop(). No lock of this file's own.
 *
 * The decisions (which RV to list at, the watch request, what to do with an event and with the
 * end of a watch) are the pure functions of reflector_policy.c; this file does the requests, the
 * logging and the counting around them. */
#include "server/kube/reflector.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/http/heap.h"
#include "server/http/jscan.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/kube/list_stream.h"

#define RV_MAX         128
#define LOG_REPEAT     60.0  /* seconds between repeated warnings of one failing kind */
#define ABSENT_RECHECK 300.0 /* seconds between lists of an optional kind the server lacks */
#define LIST_ABSENT    (-2)  /* do_list(): an optional kind the server does not serve */

#define OLDER_PATHS 2

struct kind_spec {
	const char *path;
	const char *field_selector;
	const char *group;
	bool optional; /* a 404 means the server does not serve the kind: not watched */
	/* an optional kind's paths in older API versions, tried in order after a 404 */
	const char *older[OLDER_PATHS];
};

static const struct kind_spec specs[RF_KIND_COUNT] = {
	[RF_KIND_NODES] = { "/api/v1/nodes", NULL, "" },
	/* kube-scheduler's pod informer: terminated pods are not its business */
	[RF_KIND_PODS] = { "/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed", "" },
	[RF_KIND_SLICES] = { "/apis/resource.k8s.io/v1/resourceslices", NULL, "resource.k8s.io" },
	[RF_KIND_CLAIMS] = { "/apis/resource.k8s.io/v1/resourceclaims", NULL, "resource.k8s.io" },
	[RF_KIND_CLASSES] = { "/apis/resource.k8s.io/v1/deviceclasses", NULL, "resource.k8s.io" },
	/* GA in 1.37; 1.36 serves v1beta2 only with its DRADeviceTaintRules gate on (off by
	 * default), 1.35 v1alpha3 with the alpha gate: kube-scheduler then applies them alike
	 * (D362 resourceslice/tracker/tracker.go:122, 669-716: driver, pool, device) */
	[RF_KIND_TAINT_RULES] = { "/apis/resource.k8s.io/v1/devicetaintrules",
				  NULL,
				  "resource.k8s.io",
				  true,
				  { "/apis/resource.k8s.io/v1beta2/devicetaintrules",
				    "/apis/resource.k8s.io/v1alpha3/devicetaintrules" } },
};

struct reflector {
	struct rf_reflectors *set;
	enum rf_kind kind;
	const struct kind_spec *spec;
	const char *resource;
	pthread_t thread;
	bool started;
	struct rf_kube_conn *conn;
	struct rf_watch_stream ws;
	uint64_t rng;

	char last_rv[RV_MAX];
	bool synced;           /* the initial list completed */
	bool absent;           /* an optional kind the server answered 404 for */
	unsigned version;      /* spec->path (0) or spec->older[version - 1]: the one listed */
	bool rv_unavailable;   /* relist with RV "" */
	bool paginated_before; /* an RV "0" list came back paginated: always page */
	struct rf_backoff backoff;
	int retry_after;  /* seconds, from the last failure; -1 = none */
	bool list_failed; /* the last failure was a list's: a list that works resets the backoff */
	bool check_rv;    /* ask for the current RV before the next watch (rf_watch_check_rv) */
	unsigned epoch;   /* the set's rv_epoch this reflector has acted on */

	/* failure reporting */
	unsigned streak;
	double last_warn;
	char msg[1200];

	/* the running watch */
	size_t n_events;
	enum rf_stream_failure failure; /* recorded by the event callback */
	int err_code;
	char err_reason[64];
	char err_text[600];
	double last_touch;
	unsigned long counts[RF_WATCH_TYPE_COUNT];
};

struct rf_reflectors {
	struct rf_kube *kube;
	struct rf_store *store;
	struct rf_cache *cache;
	int64_t watch_timeout_ms;
	long idle_ms;
	bool detect_version;
	/* bumped when the API server's resourceVersion went backwards: every reflector relists */
	atomic_uint rv_epoch;
	pthread_mutex_t reset_lock; /* one reflector raises a reset; the others take it */
	struct reflector r[RF_KIND_COUNT];
};

/* The path of the kind's API version being listed and watched. */
static const char *
kind_path(const struct reflector *r)
{
	return r->version ? r->spec->older[r->version - 1] : r->spec->path;
}

/* ---------------------------------------------------------------------------------------------
 * Helpers of one reflector
 */

static double
rand01(struct reflector *r)
{
	/* xorshift64*: jitter only, no need for more */
	uint64_t x = r->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->rng = x;
	return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static void
count_restart(struct reflector *r, const char *reason)
{
	char l[128];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_WATCH_RESTARTS_TOTAL, r->resource, reason,
			     NULL) >= 0)
		rf_metric_add(RF_METRIC_WATCH_RESTARTS_TOTAL, l, 1);
}

static void
flush_counts(struct reflector *r)
{
	char l[128];
	for (int t = 0; t < RF_WATCH_TYPE_COUNT; t++) {
		if (!r->counts[t])
			continue;
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_WATCH_EVENTS_TOTAL, r->resource,
				     rf_watch_type_name(t), NULL) >= 0)
			rf_metric_add(RF_METRIC_WATCH_EVENTS_TOTAL, l, (double)r->counts[t]);
		r->counts[t] = 0;
	}
}

static void
touch(struct reflector *r, bool force)
{
	double now = rf_kube_now();
	if (force || now - r->last_touch >= 0.1) {
		r->last_touch = now;
		rf_cache_touch(r->set->cache, r->kind);
	}
}

/* A failure: counted, remembered for the backoff, logged (first of a streak, then once a minute,
 * the rest at -v 2). */
static void failed(struct reflector *r, const char *reason, int retry_after, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
failed(struct reflector *r, const char *reason, int retry_after, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	count_restart(r, reason);
	rf_store_end_first_sync(r->set->store);
	r->retry_after = retry_after;
	r->streak++;
	double now = rf_kube_now();
	if (r->streak == 1 || now - r->last_warn >= LOG_REPEAT) {
		r->last_warn = now;
		char n[16];
		snprintf(n, sizeof(n), "%u", r->streak);
		rf_warn("watch of the API server failed", "resource", r->resource, "reason", reason,
			"failures", n, "err", r->msg);
	} else {
		rf_v(2, "watch of the API server failed", "resource", r->resource, "reason", reason,
		     "err", r->msg);
	}
}

/* Drop what this reflector knows of the API server's RVs: the next list is a consistent read
 * and marks the kind synced again once its generation is published. */
static void
forget_rv(struct reflector *r)
{
	r->synced = false;
	r->rv_unavailable = true;
	r->last_rv[0] = '\0';
	r->check_rv = false;
}

/* The API server answered now_rv below an RV it gave before: etcd was restored from a backup
 * (or the server's storage replaced). Every kind is unsynced first (/readyz 503 at once, and no
 * reflector can mark itself synced before it noticed), then the epoch tells the others to relist;
 * this one relists (or applies the list it just got). */
static void
rv_went_backwards(struct reflector *r, const char *now_rv, const char *where)
{
	struct rf_reflectors *set = r->set;
	char l[128];
	pthread_mutex_lock(&set->reset_lock);
	unsigned e = atomic_load(&set->rv_epoch);
	if (e != r->epoch) {
		/* another reflector saw the same restore a moment ago */
		pthread_mutex_unlock(&set->reset_lock);
		r->epoch = e;
		forget_rv(r);
		return;
	}
	rf_error("the API server's resourceVersion went backwards (etcd restored from a backup?); "
		 "relisting every resource",
		 "resource", r->resource, "seen", where, "last", r->last_rv, "now", now_rv);
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_RV_RESETS_TOTAL, r->resource, NULL) >= 0)
		rf_metric_add(RF_METRIC_RV_RESETS_TOTAL, l, 1);
	for (int k = 0; k < RF_KIND_COUNT; k++)
		rf_cache_set_synced(set->cache, (enum rf_kind)k, false);
	r->epoch = atomic_fetch_add(&set->rv_epoch, 1) + 1;
	pthread_mutex_unlock(&set->reset_lock);
	forget_rv(r);
}

/* Another reflector saw the RV go backwards since this one last looked: true (relist). */
static bool
notice_rv_reset(struct reflector *r)
{
	unsigned e = atomic_load(&r->set->rv_epoch);
	if (e == r->epoch)
		return false;
	r->epoch = e;
	forget_rv(r);
	return true;
}

static void
healthy(struct reflector *r, const char *what)
{
	if (r->streak) {
		char n[16];
		snprintf(n, sizeof(n), "%u", r->streak);
		rf_info("watch of the API server recovered", "resource", r->resource, "after", what,
			"failures", n);
	}
	r->streak = 0;
	r->retry_after = -1;
}

/* ---------------------------------------------------------------------------------------------
 * List
 */

/* A list page's items parsed one at a time, each slimmed at once, into page; *ret_md gets the
 * list's metadata. The tree of a whole list never exists: an API server serving a list from its
 * cache ignores limit, and 12,000 pods in one tree are gigabytes. @return 0; 1 when the text is
 * not a list this scanner takes (the caller parses it whole, for jansson's exact error); or
 * -ENOMEM. */
static int
page_items(struct reflector *r, const char *body, size_t len, json_t *page, json_t **ret_md)
{
	struct rf_jscan sc;
	struct rf_jscan_span key, span;
	json_t *md = NULL;
	int rc = 1;
	rf_jscan_init(&sc, body, len);
	rf_jscan_ws(&sc);
	size_t frame = rf_jscan_peek(&sc) == '{' ? rf_jscan_object_open(&sc) : 0;
	while (frame && rf_jscan_object_next(&sc, frame, &key)) {
		bool items = key.len == 5 && memcmp(key.s, "items", 5) == 0;
		bool meta = key.len == 8 && memcmp(key.s, "metadata", 8) == 0;
		if (items && rf_jscan_peek(&sc) == '[') {
			size_t count = 0;
			rf_jscan_array_open(&sc);
			while (rf_jscan_array_next(&sc, &count)) {
				if (rf_jscan_value(&sc, &span) != RF_JSCAN_OBJECT)
					goto out; /* the store skips it; the whole parse says why */
				/* slimmed from the text; what the scanner does not take, from
				 * jansson's tree */
				json_t *slim = NULL;
				int sr = rf_store_slim_text(r->set->store, r->kind, span.s,
							    span.len, &slim);
				if (sr == -EINVAL) {
					json_t *it = json_loadb(span.s, span.len,
								JSON_REJECT_DUPLICATES, NULL);
					slim = it ? rf_store_slim(r->set->store, r->kind, it)
						  : NULL;
					json_decref(it);
					if (!it)
						goto out;
				}
				if (!slim || json_array_append_new(page, slim) < 0) {
					rc = -ENOMEM;
					goto out;
				}
			}
		} else if (items && rf_jscan_peek(&sc) != 'n') {
			goto out; /* not an array: the whole parse reports it */
		} else if (meta) {
			if (md || rf_jscan_value(&sc, &span) != RF_JSCAN_OBJECT ||
			    !(md = json_loadb(span.s, span.len, JSON_REJECT_DUPLICATES, NULL)))
				goto out;
		} else if (rf_jscan_value(&sc, NULL) == RF_JSCAN_ERROR) {
			goto out;
		}
	}
	rf_jscan_ws(&sc);
	if (!frame || sc.err || sc.pos != len || !md)
		goto out;
	*ret_md = md;
	md = NULL;
	rc = 0;
out:
	json_decref(md);
	rf_jscan_release(&sc);
	return rc;
}

/* A list page being received: its items slimmed as they stream in. */
struct stream_page {
	struct reflector *r;
	json_t *page; /* the slim items so far */
	struct rf_list_stream ls;
};

static int
stream_feed(void *userdata, const char *data, size_t len)
{
	return rf_list_stream_feed(userdata, data, len);
}

/* An item of the list: slimmed from its text (the scanner validates it whole); what the scanner
 * does not take is left, with the rest of the list, to the skeleton's parse (page_items()). */
static int
stream_item(void *arg, const char *text, size_t len)
{
	struct stream_page *sp = arg;
	json_t *slim = NULL;
	int r = rf_store_slim_text(sp->r->set->store, sp->r->kind, text, len, &slim);
	if (r == -EINVAL)
		return 1;
	if (r < 0)
		return r;
	return json_array_append_new(sp->page, slim) < 0 ? -ENOMEM : 0;
}

/* One paginated (page_size > 0) or full list at rv. On success *ret_items and ret_rv hold the
 * result; returns 0, 1 when the API answered an error (resp describes it), or -errno (transport,
 * resp->error describes it). */
static int
list_once(struct reflector *r, const char *rv, int page_size, json_t **ret_items, char *ret_rv,
	  bool *ret_paginated, struct rf_kube_response *resp)
{
	json_t *items = json_array();
	char path[4096], cont[2048] = "";
	int rc = 0, pages = 0;
	bool restarted = false, paginated = false;
	memset(resp, 0, sizeof(*resp));
	if (!items) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		snprintf(path, sizeof(path), "%s", kind_path(r));
		if ((cont[0] &&
		     (rc = rf_path_add_param(path, sizeof(path), "continue", cont)) < 0) ||
		    (r->spec->field_selector &&
		     (rc = rf_path_add_param(path, sizeof(path), "fieldSelector",
					     r->spec->field_selector)) < 0))
			goto out;
		if (page_size > 0) {
			char lim[16];
			snprintf(lim, sizeof(lim), "%d", page_size);
			if ((rc = rf_path_add_param(path, sizeof(path), "limit", lim)) < 0)
				goto out;
		}
		if (!cont[0] && rv[0] &&
		    (rc = rf_path_add_param(path, sizeof(path), "resourceVersion", rv)) < 0)
			goto out;
		/* the body is split into its items as it arrives (list_stream.h) */
		struct stream_page sp = { .r = r, .page = json_array() };
		struct rf_kube_request req = { .path = path,
					       .idle_ms = r->set->idle_ms,
					       .on_data = stream_feed,
					       .userdata = &sp.ls };
		rf_list_stream_init(&sp.ls, stream_item, &sp);
		rf_kube_response_release(resp);
		rc = sp.page ? rf_kube_do(r->conn, &req, resp) : -ENOMEM;
		if (rc == 0 && resp->status == 200 && (rc = rf_list_stream_finish(&sp.ls)) < 0)
			snprintf(resp->error, sizeof(resp->error), "GET %.300s: out of memory",
				 path);
		if (rc < 0 || resp->status != 200) {
			json_decref(sp.page);
			rf_list_stream_release(&sp.ls);
		}
		if (rc < 0)
			goto out;
		if (resp->status != 200) {
			if (pages > 0 && rf_kube_is_expired(resp->status, resp->reason) &&
			    !restarted) {
				/* continue token expired: one full list at the original RV
				 * (client-go's pager; never the inconsistent token the Status may
				 * carry) */
				restarted = true;
				page_size = 0;
				cont[0] = 0;
				pages = 0;
				json_array_clear(items);
				continue;
			}
			rc = 1;
			goto out;
		}
		json_error_t jerr = { 0 };
		json_t *doc = NULL, *page = sp.page, *pmd = NULL;
		const char *body = sp.ls.skel;
		size_t body_len = sp.ls.skel_len;
		size_t streamed = json_array_size(page);
		int pr = page_items(r, body, body_len, page, &pmd);
		if (pr == 0) {
			/* the metadata alone stands for the document below */
			if (!(doc = json_object()))
				json_decref(pmd);
			if (!doc || json_object_set_new(doc, "metadata", pmd) < 0 ||
			    json_array_extend(items, page) < 0)
				pr = -ENOMEM;
		} else if (pr > 0) {
			/* the streamed items stay; the skeleton's come from its tree below */
			while (json_array_size(page) > streamed)
				json_array_remove(page, json_array_size(page) - 1);
			if (json_array_extend(items, page) < 0)
				pr = -ENOMEM;
		}
		json_decref(page);
		if (pr < 0) {
			json_decref(doc);
			rf_list_stream_release(&sp.ls);
			rc = -ENOMEM;
			goto out;
		}
		if (pr > 0) /* one tree, for jansson's exact error */
			doc = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
		rf_list_stream_release(&sp.ls);
		json_t *its = json_object_get(doc, "items");
		json_t *md = json_object_get(doc, "metadata");
		const char *lrv = json_string_value(json_object_get(md, "resourceVersion"));
		const char *c = json_string_value(json_object_get(md, "continue"));
		if (!doc || (!json_is_array(its) && !json_is_null(its) && its) || !lrv) {
			snprintf(resp->error, sizeof(resp->error),
				 "GET %.300s: the answer is not a %s list (%.200s)", path,
				 r->resource,
				 doc ? "no items or metadata.resourceVersion" : jerr.text);
			json_decref(doc);
			rc = -EPROTO;
			goto out;
		}
		/* slim page by page: the full objects of a 10,000-slice list never coexist */
		for (size_t i = 0; i < json_array_size(its); i++) {
			json_t *it = json_array_get(its, i), *slim;
			if (!json_is_object(it))
				continue; /* the store skips what has no name; this has none */
			if (!(slim = rf_store_slim(r->set->store, r->kind, it)) ||
			    json_array_append_new(items, slim) < 0) {
				json_decref(doc);
				rc = -ENOMEM;
				goto out;
			}
		}
		snprintf(ret_rv, RV_MAX, "%s", lrv);
		pages++;
		if (c && *c && page_size > 0) {
			paginated = true;
			if (strlen(c) >= sizeof(cont)) {
				snprintf(resp->error, sizeof(resp->error),
					 "continue token too long");
				json_decref(doc);
				rc = -EPROTO;
				goto out;
			}
			snprintf(cont, sizeof(cont), "%s", c);
			json_decref(doc);
			continue;
		}
		json_decref(doc);
		break;
	}
	*ret_paginated = paginated;
	*ret_items = items;
	items = NULL;
	rc = 0;
out:
	json_decref(items);
	return rc;
}

static void
detect_version(struct reflector *r)
{
	char gv[64], err[512];
	struct rf_reflectors *set = r->set;
	if (!set->detect_version)
		return;
	if (rf_kube_server_version(r->conn, gv, sizeof(gv), err, sizeof(err)) < 0) {
		rf_v(2, "cannot read the API server version yet", "err", err);
		return;
	}
	rf_reflectors_use_server_version(set->store, gv);
	set->detect_version = false;
}

int
rf_reflectors_use_server_version(struct rf_store *store, const char *git_version)
{
	static atomic_bool warned;
	enum rf_dra_version v;
	int patch, r;
	bool newer;
	char rules[RF_DRA_VERSION_LEN];
	if (rf_dra_version_from_git(git_version, &v, &patch, &newer) < 0) {
		rf_warn("the API server's gitVersion is not v<major>.<minor>.<patch>; keeping the DRA "
			"rules railfit uses now",
			"gitVersion", git_version);
		return -EINVAL;
	}
	rf_dra_version_format(v, patch, rules);
	if ((r = rf_store_set_dra_version(store, git_version, v, patch, newer)) < 0)
		rf_warn("cannot switch the DRA rules", "gitVersion", git_version, "error",
			strerror(-r));
	else if (newer && !atomic_exchange(&warned, true))
		rf_warn("the API server is newer than the newest DRA allocator railfit knows; "
			"predicting with the newest rules",
			"gitVersion", git_version, "draRules", rules);
	else
		rf_info("detected the API server version", "gitVersion", git_version, "draRules",
			rules);
	/* the rules follow the server only with draVersion auto (an explicit older version with
	 * the gate is refused when the configuration is read) */
	const struct rf_config *cfg = rf_store_config(store);
	if (r == 0 && v < RF_DRA_1_36 && cfg->kube.dra_version == RF_DRA_AUTO &&
	    cfg->kube.gates.list_type_attributes)
		rf_warn("kube.featureGates.DRAListTypeAttributes is set but the API server predates "
			"the gate (Kubernetes 1.36): it changes nothing",
			"gitVersion", git_version);
	return r;
}

/* client-go's list(): returns 0, or -1 after recording the failure. */
static int
do_list(struct reflector *r)
{
	struct rf_kube_response resp;
	json_t *items = NULL;
	char rv[RV_MAX], list_rv[RV_MAX] = "";
	bool paginated = false;
	if (r->kind == RF_KIND_NODES)
		detect_version(r);
	/* client-go's relistResourceVersion */
	snprintf(rv, sizeof(rv), "%s", rf_list_rv(r->rv_unavailable, r->synced, r->last_rv));
	int page = rf_list_page_size(rv, r->paginated_before);
	int rc = list_once(r, rv, page, &items, list_rv, &paginated, &resp);
	if (rc == 1 && rf_list_retry_without_rv(resp.status, resp.reason,
						rf_list_rv_too_large(resp.status, resp.body))) {
		/* the RV is gone (or not there yet): a consistent list, at once */
		r->rv_unavailable = true;
		rf_v(2, "relisting without a resourceVersion", "resource", r->resource, "err",
		     resp.error);
		rf_kube_response_release(&resp);
		rc = list_once(r, "", page, &items, list_rv, &paginated, &resp);
	}
	if (rc == 1 && resp.status == 404 && r->spec->optional && r->version < OLDER_PATHS &&
	    r->spec->older[r->version]) {
		/* e.g. v1 DeviceTaintRules on a 1.36 server: its v1beta2 ones, if served */
		rf_kube_response_release(&resp);
		r->version++;
		r->rv_unavailable = true; /* an RV of another version's list means nothing here */
		return do_list(r);
	}
	if (rc == 1 && resp.status == 404 && r->spec->optional) {
		/* e.g. DeviceTaintRules on a 1.36 server with the gate off: nothing to watch,
		 * nothing to wait for; forget what an earlier list found, look again later (from
		 * the newest version: the server may have been upgraded) */
		rf_kube_response_release(&resp);
		r->version = 0;
		json_t *none = json_array();
		int n = none ? rf_store_replace_slim(r->set->store, r->kind, none) : -ENOMEM;
		json_decref(none);
		if (n < 0) {
			failed(r, "error", -1, "list %s: out of memory", r->resource);
			return -1;
		}
		if (!r->absent)
			rf_info("the API server does not serve this kind; not watching it",
				"resource", r->resource, "path", kind_path(r));
		r->absent = true;
		r->synced = false;
		rf_cache_set_synced(r->set->cache, r->kind, false);
		rf_cache_set_absent(r->set->cache, r->kind, true);
		if (r->streak)
			healthy(r, "list");
		return LIST_ABSENT;
	}
	if (rc != 0) {
		if (rc == -ECANCELED) {
			rf_kube_response_release(&resp);
			return -1;
		}
		char text[1000];
		if (rc == 1)
			rf_kube_describe_failure(&resp, "list", r->resource, r->spec->group, text,
						 sizeof(text));
		else
			snprintf(text, sizeof(text), "%s", resp.error);
		int retry_after;
		const char *reason =
			rf_list_failure(rc, resp.status, resp.retry_after, &retry_after);
		failed(r, reason, retry_after, "list %s: %s", r->resource, text);
		r->list_failed = true;
		rf_kube_response_release(&resp);
		return -1;
	}
	rf_kube_response_release(&resp);
	if (r->synced && rf_rv_went_backwards(r->last_rv, list_rv))
		rv_went_backwards(r, list_rv, "list"); /* this list is the relist */
	if (!strcmp(rv, "0") && paginated)
		r->paginated_before = true;
	int n = rf_store_replace_slim(r->set->store, r->kind, items);
	json_decref(items);
	rf_heap_trim(); /* the pages' parse trees are gone: give their memory back */
	if (n < 0) {
		failed(r, "error", -1, "list %s: out of memory", r->resource);
		return -1;
	}
	snprintf(r->last_rv, sizeof(r->last_rv), "%s", list_rv);
	r->rv_unavailable = false;
	if (!r->synced) {
		/* synced means "in the generation readers get": wait for its publication, which
		 * need not wait for the spacing between builds (the previous build at start-up may
		 * have been long, and nothing of this kind is ready until then) */
		int64_t seq = rf_store_changes(r->set->store);
		rf_store_publish_soon(r->set->store);
		while (!rf_store_wait_published(r->set->store, seq, 200))
			if (rf_kube_stopping(r->set->kube))
				return -1;
		char cnt[24];
		snprintf(cnt, sizeof(cnt), "%d", n);
		rf_info("initial list done", "resource", r->resource, "objects", cnt,
			"resourceVersion", list_rv);
		r->synced = true;
		rf_cache_set_synced(r->set->cache, r->kind, true);
		if (r->absent) {
			r->absent = false;
			rf_cache_set_absent(r->set->cache, r->kind, false);
		}
	}
	touch(r, true);
	healthy(r, "list");
	if (r->list_failed) /* what was failing works again; a list alone proves no watch */
		rf_backoff_reset(&r->backoff);
	r->list_failed = false;
	return 0;
}

/* The current RV of the API server (a list with limit=1, a consistent read) against the last
 * one seen: a watch at an RV a restored server has not reached would only be silent.
 * @return true when the reflector relists: the RV went backwards, or the server answered the
 * check with an error (counted and backed off like a failed list). */
static bool
ask_current_rv(struct reflector *r)
{
	struct rf_kube_response resp;
	char path[512], rv[RV_MAX], text[1000];
	bool relist = false;
	snprintf(path, sizeof(path), "%s", kind_path(r));
	if (rf_path_add_param(path, sizeof(path), "limit", "1") < 0)
		return false;
	struct rf_kube_request req = { .path = path, .idle_ms = r->set->idle_ms };
	int rc = rf_kube_do(r->conn, &req, &resp);
	if (rc == 0 && resp.status == 200) {
		json_t *doc = json_loadb(resp.body, resp.body_len, 0, NULL);
		const char *v = json_string_value(
			json_object_get(json_object_get(doc, "metadata"), "resourceVersion"));
		if (v && strlen(v) < sizeof(rv)) {
			snprintf(rv, sizeof(rv), "%s", v);
			relist = rf_rv_went_backwards(r->last_rv, rv);
		}
		json_decref(doc);
		if (relist)
			rv_went_backwards(r, rv, "a check after a reconnect");
	} else if (rc != -ECANCELED) {
		int retry_after;
		const char *reason = rf_list_failure(rc == 0 ? 1 : rc, resp.status,
						     resp.retry_after, &retry_after);
		if (rc == 0)
			rf_kube_describe_failure(&resp, "list", r->resource, r->spec->group, text,
						 sizeof(text));
		else
			snprintf(text, sizeof(text), "%s", resp.error);
		failed(r, reason, retry_after, "list %s (current resourceVersion): %s", r->resource,
		       text);
		relist = true;
	}
	rf_kube_response_release(&resp);
	return relist;
}

/* ---------------------------------------------------------------------------------------------
 * Watch
 */

static int
on_event(void *userdata, struct rf_watch_event *ev)
{
	struct reflector *r = userdata;
	const char *rv;
	r->n_events++;
	r->counts[ev->type]++;
	enum rf_event_action a =
		rf_watch_event_action(ev, rf_kind_name(r->kind), sizeof(r->last_rv), &rv);
	if (a == RF_EVENT_ABORT) {
		r->failure = RF_SF_ERROR_EVENT;
		r->err_code = ev->code;
		snprintf(r->err_reason, sizeof(r->err_reason), "%s", ev->reason ? ev->reason : "");
		snprintf(r->err_text, sizeof(r->err_text), "ERROR event %d %s: %s", ev->code,
			 ev->reason ? ev->reason : "", ev->message ? ev->message : "");
		rf_watch_event_release(ev);
		return -ECONNABORTED;
	}
	if (a == RF_EVENT_SKIP) {
		rf_v(2, "skipped a watch event of an unexpected kind", "resource", r->resource,
		     "kind", json_string_value(json_object_get(ev->object, "kind")));
		rf_watch_event_release(ev);
		return 0;
	}
	if (rv && rf_rv_went_backwards(r->last_rv, rv)) {
		/* real servers never do this within a stream (kube-watch.md section 15): the
		 * server's storage went back */
		rv_went_backwards(r, rv, "watch event");
		r->failure = RF_SF_RV_RESET;
		snprintf(r->err_text, sizeof(r->err_text),
			 "the resourceVersion went backwards to %s", rv);
		rf_watch_event_release(ev);
		return -ESTALE;
	}
	if (rv)
		snprintf(r->last_rv, sizeof(r->last_rv), "%s", rv);
	if (a == RF_EVENT_APPLY) {
		int c = rf_store_apply(r->set->store, r->kind, ev->type, ev->object);
		if (c == -ENOMEM) {
			r->failure = RF_SF_STORE;
			snprintf(r->err_text, sizeof(r->err_text), "out of memory");
			rf_watch_event_release(ev);
			return -ENOMEM;
		}
		if (c == -EINVAL)
			rf_v(2, "skipped a watch event without metadata.name", "resource",
			     r->resource, "type", rf_watch_type_name(ev->type));
	}
	rf_watch_event_release(ev);
	touch(r, false);
	return 0;
}

static int
on_data(void *userdata, const char *data, size_t len)
{
	struct reflector *r = userdata;
	char err[512];
	int rc = rf_watch_stream_feed(&r->ws, data, len, on_event, r, err, sizeof(err));
	if (rc < 0 && r->failure == RF_SF_NONE) {
		r->failure = rc == -EMSGSIZE ? RF_SF_OVERSIZE : RF_SF_GARBAGE;
		snprintf(r->err_text, sizeof(r->err_text), "%s", err);
	}
	return rc;
}

static int
on_tick(void *userdata)
{
	struct reflector *r = userdata;
	if (notice_rv_reset(r)) {
		r->failure = RF_SF_RV_RESET;
		snprintf(r->err_text, sizeof(r->err_text),
			 "the API server's resourceVersion went backwards; relisting");
		return -ESTALE;
	}
	touch(r, false); /* the watch is open and within its idle limit */
	flush_counts(r);
	return 0;
}

/* One watch request; its end classified by rf_watch_classify(), here only logged and counted. */
static enum rf_watch_next
watch_once(struct reflector *r)
{
	struct rf_reflectors *set = r->set;
	char path[2048], text[1000];
	struct rf_kube_response resp = { 0 };
	long timeout_s =
		rf_watch_timeout_seconds((double)set->watch_timeout_ms / 1000.0, rand01(r));
	if (rf_watch_path(path, sizeof(path), kind_path(r), r->spec->field_selector, r->last_rv,
			  timeout_s) < 0) {
		failed(r, "error", -1, "watch %s: cannot build the request", r->resource);
		return RF_NEXT_RELIST;
	}

	rf_watch_stream_reset(&r->ws);
	r->n_events = 0;
	r->failure = RF_SF_NONE;
	r->err_code = 0;
	r->err_reason[0] = 0;
	r->err_text[0] = 0;
	struct rf_kube_request req = { .path = path,
				       .idle_ms = set->idle_ms,
				       .on_data = on_data,
				       .on_tick = on_tick,
				       .userdata = r };
	double start = rf_kube_now();
	int rc = rf_kube_do(r->conn, &req, &resp);
	double elapsed = rf_kube_now() - start;
	flush_counts(r);
	struct rf_watch_end end = { .rc = rc,
				    .status = resp.status,
				    .retry_after = resp.retry_after,
				    .failure = r->failure,
				    .err_code = r->err_code,
				    .err_reason = r->err_reason,
				    .pending = rf_watch_stream_pending(&r->ws) > 0,
				    .elapsed = elapsed,
				    .timeout_s = timeout_s,
				    .n_events = r->n_events };
	struct rf_watch_verdict v = rf_watch_classify(&end);
	switch (v.detail) {
	case RF_DETAIL_NONE:
		break;
	case RF_DETAIL_STREAM:
		failed(r, v.reason, v.retry_after, "watch %s: %s", r->resource, r->err_text);
		break;
	case RF_DETAIL_BROKEN:
		failed(r, v.reason, v.retry_after, "watch %s: broken stream: %s", r->resource,
		       r->err_text);
		break;
	case RF_DETAIL_SHORT:
		failed(r, v.reason, v.retry_after,
		       "watch %s: ended after %.3f s without any event (%s)", r->resource, elapsed,
		       rc < 0 ? resp.error : "clean end");
		break;
	case RF_DETAIL_TRANSPORT:
		failed(r, v.reason, v.retry_after, "watch %s: %s", r->resource, resp.error);
		break;
	case RF_DETAIL_HTTP:
		rf_kube_describe_failure(&resp, "watch", r->resource, r->spec->group, text,
					 sizeof(text));
		failed(r, v.reason, v.retry_after, "watch %s: %s", r->resource, text);
		break;
	}
	if (v.next == RF_NEXT_REWATCH) {
		count_restart(r, v.reason);
		rf_v(4, "watch ended; watching again", "resource", r->resource, "reason", v.reason,
		     "resourceVersion", r->last_rv);
		if (r->streak && v.healthy)
			healthy(r, "watch");
		if (v.healthy)
			rf_backoff_reset(&r->backoff);
	}
	if (v.failure)
		r->list_failed = false;
	r->check_rv = r->last_rv[0] && rf_watch_check_rv(&v);
	rf_kube_response_release(&resp);
	return v.next;
}

static int
backoff_sleep(struct reflector *r)
{
	double d = rf_backoff_delay(rf_backoff_step(&r->backoff, rf_kube_now(), rand01(r)),
				    r->retry_after);
	char secs[32];
	snprintf(secs, sizeof(secs), "%.3f", d);
	r->retry_after = -1;
	rf_v(2, "backing off before the next request", "resource", r->resource, "seconds", secs);
	return rf_kube_sleep(r->set->kube, d);
}

/* client-go's ListAndWatch: returns when a relist is due (after a failure), when stopping, or
 * (LIST_ABSENT) when the server does not serve an optional kind. */
static int
list_and_watch(struct reflector *r)
{
	int lr = do_list(r);
	if (lr < 0)
		return lr;
	for (;;) {
		if (notice_rv_reset(r) || (r->check_rv && ask_current_rv(r)))
			return 0; /* relist */
		switch (watch_once(r)) {
		case RF_NEXT_REWATCH:
			continue;
		case RF_NEXT_BACKOFF_REWATCH:
			if (backoff_sleep(r) < 0)
				return -1;
			continue;
		case RF_NEXT_RELIST:
		case RF_NEXT_STOP:
			return 0;
		}
	}
}

static void *
run(void *arg)
{
	struct reflector *r = arg;
	while (!rf_kube_stopping(r->set->kube)) {
		int lr = list_and_watch(r);
		if (rf_kube_stopping(r->set->kube))
			break;
		if (lr == LIST_ABSENT) {
			if (rf_kube_sleep(r->set->kube, ABSENT_RECHECK) < 0)
				break;
			continue;
		}
		if (backoff_sleep(r) < 0)
			break;
	}
	return NULL;
}

int
rf_reflectors_start(const struct rf_reflectors_options *o, struct rf_reflectors **ret)
{
	struct rf_reflectors *set = calloc(1, sizeof(*set));
	int rc = -ENOMEM;
	if (!set)
		return -ENOMEM;
	set->kube = o->kube;
	set->store = o->store;
	set->cache = o->cache;
	set->watch_timeout_ms = o->watch_timeout_ms > 0 ? o->watch_timeout_ms : 300000;
	set->idle_ms = rf_watch_idle_ms(set->watch_timeout_ms);
	set->detect_version = o->detect_dra_version;
	pthread_mutex_init(&set->reset_lock, NULL);

	/* every label value from the first scrape */
	char l[128];
	for (int k = 0; k < RF_KIND_COUNT; k++)
		for (int t = 0; t < RF_WATCH_TYPE_COUNT; t++)
			if (rf_metric_labels(l, sizeof(l), RF_METRIC_WATCH_EVENTS_TOTAL,
					     rf_kind_resource(k), rf_watch_type_name(t), NULL) >= 0)
				rf_metric_add(RF_METRIC_WATCH_EVENTS_TOTAL, l, 0);

	/* the first generation holds every kind (or what there is once a list fails) */
	rf_store_defer_until_listed(set->store);
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		struct reflector *r = &set->r[k];
		r->set = set;
		r->kind = (enum rf_kind)k;
		r->spec = &specs[k];
		r->resource = rf_kind_resource(k);
		r->rng = (seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(k + 1)) | 1;
		r->retry_after = -1;
		rf_backoff_init(&r->backoff);
		rf_watch_stream_init(&r->ws, 0);
		if (!(r->conn = rf_kube_conn_new(set->kube)))
			goto fail;
	}
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		struct reflector *r = &set->r[k];
		int e = pthread_create(&r->thread, NULL, run, r);
		if (e) {
			rc = -e;
			goto fail;
		}
		r->started = true;
	}
	*ret = set;
	return 0;
fail:
	rf_reflectors_stop(set);
	return rc;
}

void
rf_reflectors_stop(struct rf_reflectors *set)
{
	if (!set)
		return;
	rf_kube_stop(set->kube);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		struct reflector *r = &set->r[k];
		if (r->started)
			pthread_join(r->thread, NULL);
		rf_kube_conn_free(r->conn);
		rf_watch_stream_release(&r->ws);
	}
	pthread_mutex_destroy(&set->reset_lock);
	free(set);
}
