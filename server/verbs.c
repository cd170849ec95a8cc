/* The extender verbs (reference/extender-protocol.md section 3): decode with the wire codec, take
 * one cache generation for the whole request, resolve the pod's demand once, evaluate every node,
 * answer in kube-scheduler's exact shape. Runs on MHD pool threads; never blocks on I/O. */
#include "server/verbs.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/memo.h"
#include "server/app_state.h"
#include "server/http/extender.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/predictions.h"

/* A 400 that carries both railfit's error body and the verb's own Error field. */
static int
reply_bad_args(struct rf_http_response *resp, const char *what, const char *detail, bool filter)
{
	json_t *o = json_object();
	if (!o)
		return -ENOMEM;
	if (filter) {
		json_object_set_new(o, "Nodes", json_null());
		json_object_set_new(o, "NodeNames", json_null());
		json_object_set_new(o, "FailedNodes", json_null());
		json_object_set_new(o, "FailedAndUnresolvableNodes", json_null());
		json_object_set_new(o, "Error", json_string(detail));
	}
	json_object_set_new(o, "error", json_string(what));
	json_object_set_new(o, "detail", json_string(detail));
	return rf_http_reply_json(resp, 400, o);
}

/* An ExtenderFilterResult (or its error shape, error non-NULL) as the reply; ranks: each
 * name's place in name order, or NULL (rf_extender_write_filter_result_ranked). */
static int
reply_filter(struct rf_http_response *resp, const struct rf_extender_args *a,
	     const enum rf_filter_outcome *outcomes, const char *const *msgs, const uint32_t *ranks,
	     const char *error)
{
	struct rf_strbuf b = { 0 };
	if (rf_extender_write_filter_result_ranked(a, outcomes, msgs, ranks, error, &b) < 0)
		b.oom = true; /* a 500, as a result the tree version could not build */
	return rf_http_reply_strbuf(resp, 200, &b);
}

/* Malformed annotations are reported once per pod: a small ring of recently reported pods. */
#define REPORTED_RING 1024
static pthread_mutex_t reported_lock = PTHREAD_MUTEX_INITIALIZER;
static char *reported[REPORTED_RING];
static size_t reported_next;

static bool
first_report(const char *key)
{
	bool first = true;
	pthread_mutex_lock(&reported_lock);
	for (size_t i = 0; i < REPORTED_RING && first; i++)
		if (reported[i] && strcmp(reported[i], key) == 0)
			first = false;
	if (first) {
		free(reported[reported_next]);
		reported[reported_next] = strdup(key);
		reported_next = (reported_next + 1) % REPORTED_RING;
	}
	pthread_mutex_unlock(&reported_lock);
	return first;
}

struct verb_ctx {
	struct rf_app *app;
	struct rf_extender_args args;
	struct rf_cluster *gen;
	struct rf_demand demand;
	bool have_demand;
};

static void
verb_ctx_release(struct verb_ctx *v)
{
	if (v->have_demand)
		rf_demand_release(&v->demand);
	rf_cluster_unref(v->gen);
	rf_extender_args_release(&v->args);
}

/* filter.whenNotReady (DESIGN section 8): before every watched kind has synced, or while a watch
 * has been failing longer than kube.staleAfter, answer with an Error for the pods railfit would
 * judge (or for every pod, or not at all). Returns 1 when a reply was queued. */
static int
check_cache_state(struct verb_ctx *v, struct rf_http_response *resp, bool filter)
{
	const struct rf_config *cfg = &v->app->cfg;
	json_t *detail = NULL;
	if (rf_cache_ready(v->app->cache, cfg->kube.stale_after_ms, &detail)) {
		json_decref(detail);
		return 0;
	}
	enum rf_when_not_ready mode = cfg->filter.when_not_ready;
	bool refuse = mode == RF_WHEN_NOT_READY_ERROR ||
		      (mode == RF_WHEN_NOT_READY_ERROR_FOR_RAILFIT_PODS &&
		       v->demand.kind != RF_DEMAND_NONE);
	char kinds[256] = "";
	size_t off = 0;
	const char *k;
	json_t *kv;
	json_object_foreach (detail, k, kv) {
		if (json_is_true(json_object_get(kv, "synced")) &&
		    !json_is_true(json_object_get(kv, "stale")))
			continue;
		if (off < sizeof(kinds))
			off += (size_t)snprintf(
				kinds + off, sizeof(kinds) - off, "%s%s (%s)", off ? ", " : "", k,
				json_is_true(json_object_get(kv, "synced")) ? "stale"
									    : "not synced");
	}
	json_decref(detail);
	if (!refuse)
		return 0;
	char msg[512];
	snprintf(msg, sizeof(msg), "railfit: cache not ready: %s; retry later",
		 kinds[0] ? kinds : "no cluster data yet");
	rf_v(1, "refused while not ready", "pod", v->demand.pod_key, "kinds", kinds);
	if (filter)
		return reply_filter(resp, &v->args, NULL, NULL, NULL, msg) < 0 ? -ENOMEM : 1;
	/* prioritize errors are ignored by kube-scheduler: say so with a status */
	return rf_http_reply_error(resp, 503, "not ready", msg) < 0 ? -ENOMEM : 1;
}

/* kube-scheduler gives an extender 5 s by default (httpTimeout) and fails the whole attempt when
 * it is late: nodes still unjudged when this budget is spent pass unjudged (filter) or get 0
 * (prioritize), rather than everything failing. */
#define VERB_BUDGET_MS 3000

static double
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static double
verb_deadline(const struct rf_app *app)
{
	double budget = (double)app->cfg.server.request_timeout_ms / 2;
	if (budget > VERB_BUDGET_MS)
		budget = VERB_BUDGET_MS;
	return mono_ms() + budget;
}

static void
note_deadline(const struct verb_ctx *v, const char *verb, size_t done, size_t total)
{
	char d[32], t[32];
	snprintf(d, sizeof(d), "%zu", done);
	snprintf(t, sizeof(t), "%zu", total);
	rf_warn("time budget spent: the remaining nodes are not judged", "verb", verb, "pod",
		v->demand.pod_key, "judged", d, "nodes", t);
	rf_metric_add(RF_METRIC_UNJUDGED_NODES_TOTAL, "", (double)(total - done));
}

/* Age of the device data: the stalest of the kinds that decide allocations. */
static double
device_data_age(struct rf_app *app)
{
	static const enum rf_kind kinds[] = { RF_KIND_SLICES, RF_KIND_CLAIMS, RF_KIND_PODS,
					      RF_KIND_NODES };
	double age = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double a = rf_cache_staleness(app->cache, kinds[i]);
		if (a > age)
			age = a;
	}
	return age;
}

/* Decode, take a generation, resolve the demand. Returns 1 when a reply was already queued. */
static int
verb_prepare(struct verb_ctx *v, const struct rf_http_request *req, struct rf_http_response *resp,
	     bool filter)
{
	char err[512];
	int r = rf_extender_args_parse(req->body, req->body_len, &v->args, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		rf_v(2, "rejected ExtenderArgs", "err", err);
		return reply_bad_args(resp, "invalid ExtenderArgs", err, filter) < 0 ? -ENOMEM : 1;
	}
	v->gen = rf_cache_get(v->app->cache);
	if (!v->gen) {
		if (filter)
			return reply_filter(resp, &v->args, NULL, NULL, NULL,
					    "railfit: cluster cache not loaded yet") < 0
				       ? -ENOMEM
				       : 1;
		return rf_http_reply_error(resp, 503, "not ready", "cluster cache not loaded yet") <
				       0
			       ? -ENOMEM
			       : 1;
	}
	if ((r = rf_demand_resolve(v->gen, v->args.pod, &v->demand)) < 0)
		return r;
	v->have_demand = true;
	if ((r = check_cache_state(v, resp, filter)) != 0)
		return r;
	char labels[32];
	snprintf(labels, sizeof(labels), "demand=\"%s\"", rf_demand_kind_name(v->demand.kind));
	rf_metric_add(RF_METRIC_PODS_TOTAL, labels, 1);
	if (v->demand.kind == RF_DEMAND_UNKNOWN)
		rf_v(1, "pod demand unknown", "pod", v->demand.pod_key, "reason",
		     v->demand.unknown_reason);
	if (v->demand.bad_annotation[0] && first_report(v->demand.pod_key)) {
		rf_warn("ignoring a malformed pod annotation", "pod", v->demand.pod_key, "err",
			v->demand.bad_annotation);
		rf_metric_add(RF_METRIC_ANNOTATION_ERRORS_TOTAL, "", 1);
	}
	return 0;
}

/* Judging the nodes of one request, in chunks on every core (server/parallel.h). Each node's
 * outcome is kept compactly: what the reply, the metrics and the prediction bookkeeping need. */
#define JUDGE_CHUNK 64

struct node_result {
	bool judged; /* false: the time budget ran out first */
	enum rf_verdict verdict;
	int score;
	bool cel_error;
	bool scheduler_crash;
	const char *msg; /* "railfit: ..." for a failing node (filter): own_msg or the memo's */
	char *own_msg;
	bool has_predicted, level_applies;
	enum rf_level level;
	size_t n_picks;
	uint64_t name_fp;
	uint32_t name_rank;
	const struct rf_memo_pick *picks; /* in the memo, or own_picks */
	struct rf_memo_pick *own_picks;
	char *cel_msg; /* the selector error (filter), malloc'd */
};

/* Names in no order (kube-scheduler's) miss the cache at every step of finding a node and its
 * remembered verdict: once the next-index guess has gone cold, each name is hashed AHEAD - 1
 * names before it is judged (its slot in the name index fetched), and what its judgement reads
 * first is fetched NEAR - 1 names before, so that those misses overlap. A worker's chunk that
 * starts where its last one ended (the calling thread's, one after another; a pool worker's
 * when it takes the next chunk) goes on with the guess and the hashes of that one. */
enum { AHEAD = 8, NEAR = 4 };

struct lookahead {
	bool used;
	size_t end;        /* where the worker's last chunk ended */
	size_t hint;       /* rf_cluster_node_hint()'s guess there */
	size_t ahead;      /* the names before it are hashed */
	size_t at[AHEAD];  /* the name index each hash is of */
	uint64_t h[AHEAD]; /* rf_cluster_name_hash() of names[at[k]] */
};

struct judge_job {
	struct verb_ctx *v;
	struct rf_judge_ctx jc;
	bool filter;
	double deadline;
	struct node_result *res;
	struct rf_judge_scratch **scratch; /* per worker */
	struct lookahead *ahead;           /* per worker */
	atomic_int error;
	atomic_bool owned;     /* some result holds its own message or picks (to free) */
	atomic_bool evaluated; /* some node was evaluated, not remembered */
	size_t base;           /* of the indexes rf_parallel_for() passes */
};

static int
keep_result(struct judge_job *job, struct node_result *out, const struct rf_judgement *j,
	    const struct rf_memo_pick *scratch_picks)
{
	out->judged = true;
	out->verdict = j->verdict;
	out->score = j->score;
	out->cel_error = j->cel_error;
	out->scheduler_crash = j->scheduler_crash;
	out->has_predicted = j->has_predicted;
	out->level_applies = j->level_applies;
	out->level = j->level;
	out->n_picks = j->n_picks;
	out->name_fp = j->name_fp;
	out->name_rank = j->name_rank;
	out->picks = j->picks;
	if (!job->filter)
		return 0;
	if (j->verdict != RF_VERDICT_PASS) {
		out->msg =
			j->filter_msg; /* remembered: the shape is held until the reply is sent */
		if (!out->msg) {
			atomic_store_explicit(&job->owned, true, memory_order_relaxed);
			if (!(out->msg = out->own_msg = rf_filter_message(j->msg ? j->msg : "")))
				return -ENOMEM;
		}
	}
	if (j->cel_error) {
		atomic_store_explicit(&job->owned, true, memory_order_relaxed);
		if (!(out->cel_msg = strdup(j->msg ? j->msg : "")))
			return -ENOMEM;
	}
	if (j->n_picks && j->picks == scratch_picks) {
		atomic_store_explicit(&job->owned, true, memory_order_relaxed);
		/* not remembered: the scratch is reused for the next node */
		out->own_picks = malloc(j->n_picks * sizeof(*out->own_picks));
		if (!out->own_picks)
			return -ENOMEM;
		memcpy(out->own_picks, j->picks, j->n_picks * sizeof(*out->own_picks));
		out->picks = out->own_picks;
	}
	return 0;
}

static void
judge_chunk(void *ctx, unsigned worker, size_t begin, size_t end)
{
	struct judge_job *job = ctx;
	struct verb_ctx *v = job->v;
	begin += job->base;
	end += job->base;
	if (atomic_load(&job->error))
		return;
	if (!job->scratch[worker] && !(job->scratch[worker] = malloc(sizeof(**job->scratch)))) {
		atomic_store(&job->error, -ENOMEM);
		return;
	}
	struct lookahead *la = &job->ahead[worker];
	if (!la->used || la->end != begin) {
		la->used = true;
		la->hint = begin; /* if the names come in index order, the chunk's first is there */
		la->ahead = begin;
		for (size_t k = 0; k < AHEAD; k++)
			la->at[k] = SIZE_MAX;
	}
	size_t n = v->args.n_nodes, *at = la->at;
	uint64_t *h = la->h;
	for (size_t i = begin; i < end; la->end = ++i) {
		if (((i - begin) & 15) == 0 && mono_ms() > job->deadline)
			return; /* the rest of the chunk stays unjudged */
		if (la->hint & RF_HINT_COLD) {
			if (la->ahead < i)
				la->ahead = i;
			/* past the chunk's end too, for a chunk that follows on this worker */
			for (size_t k; (k = la->ahead) < i + AHEAD && k < n; la->ahead++) {
				h[k % AHEAD] = rf_cluster_name_hash(v->args.node_names[k]);
				at[k % AHEAD] = k;
				rf_cluster_prefetch_slot(job->jc.cluster, h[k % AHEAD]);
				if (k > i + NEAR)
					rf_judge_prefetch(&job->jc, h[(k - NEAR) % AHEAD]);
			}
		}
		uint64_t name_hash = at[i % AHEAD] == i ? h[i % AHEAD] : 0;
		struct rf_judgement j;
		int r = rf_judge_node_hint(&job->jc, v->args.node_names[i], name_hash, &la->hint,
					   job->filter, job->scratch[worker], &j);
		if (r == 0 && j.picks == job->scratch[worker]->picks)
			atomic_store_explicit(&job->evaluated, true, memory_order_relaxed);
		if (r == 0)
			r = keep_result(job, &job->res[i], &j, job->scratch[worker]->picks);
		if (r < 0) {
			atomic_store(&job->error, r);
			return;
		}
	}
}

static void
judge_job_release(struct judge_job *job, size_t n)
{
	/* nothing to free unless some result set owned (a message or picks of its own) */
	bool owned = atomic_load(&job->owned);
	for (size_t i = 0; owned && job->res && i < n; i++) {
		free(job->res[i].own_msg);
		free(job->res[i].cel_msg);
		free(job->res[i].own_picks);
	}
	free(job->res);
	for (unsigned w = 0; job->scratch && w < rf_parallel_width(job->v->app->parallel); w++)
		free(job->scratch[w]);
	free(job->scratch);
	free(job->ahead);
	rf_judge_end(&job->jc);
}

/* Judge every node of the request; unjudged ones (time budget) are counted and logged. */
static int
judge_nodes(struct verb_ctx *v, struct judge_job *job, bool filter, const char *verb)
{
	size_t n = v->args.n_nodes;
	unsigned width = rf_parallel_width(v->app->parallel);
	*job = (struct judge_job){ .v = v, .filter = filter, .deadline = verb_deadline(v->app) };
	atomic_init(&job->error, 0);
	atomic_init(&job->owned, false);
	atomic_init(&job->evaluated, false);
	job->res = calloc(n + 1, sizeof(*job->res));
	job->scratch = calloc(width, sizeof(*job->scratch));
	job->ahead = calloc(width, sizeof(*job->ahead));
	if (!job->res || !job->scratch || !job->ahead)
		return -ENOMEM;
	int r = rf_judge_begin(v->gen, &v->demand, &job->jc);
	if (r < 0)
		return r;
	/* Remembered verdicts cost less than waking the pool's workers and waiting for them: a
	 * warm request (the pod's shape judged on unchanged nodes) is judged on this thread
	 * alone (~10% less CPU for filter, ~14% for prioritize at 5,000 nodes). After the first
	 * group of nodes with one to evaluate, the rest goes to every core; past the time budget,
	 * or after an error, nothing more is judged. */
	size_t done = 0;
	bool late = false;
	while (done < n && !late && !atomic_load(&job->evaluated) && !atomic_load(&job->error)) {
		size_t end = done + JUDGE_CHUNK / 4 < n ? done + JUDGE_CHUNK / 4 : n;
		judge_chunk(job, 0, done, end);
		done = end;
		late = mono_ms() > job->deadline;
	}
	if (done < n && !late && !atomic_load(&job->error)) {
		job->base = done;
		rf_parallel_for(v->app->parallel, n - done, JUDGE_CHUNK, judge_chunk, job);
	}
	if ((r = atomic_load(&job->error)) < 0)
		return r;
	size_t judged = 0;
	for (size_t i = 0; i < n; i++)
		judged += job->res[i].judged;
	if (judged < n)
		note_deadline(v, verb, judged, n);
	return 0;
}

int
rf_verb_filter(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct verb_ctx v = { .app = userdata };
	struct judge_job job = { .v = &v };
	enum rf_filter_outcome *outcomes = NULL;
	const char **msgs = NULL; /* borrowed from the judgements, or stale_msg */
	uint32_t *ranks = NULL;   /* the names' places in name order, once judged */
	char *stale_msg = NULL;
	struct rf_pred_batch **batches = NULL;
	int r = verb_prepare(&v, req, resp, true);
	if (r != 0)
		goto out;

	size_t n = v.args.n_nodes;
	outcomes = calloc(n + 1, sizeof(*outcomes));
	msgs = calloc(n + 1, sizeof(*msgs));
	ranks = malloc((n + 1) * sizeof(*ranks));
	if (!outcomes || !msgs || !ranks) {
		r = -ENOMEM;
		goto out;
	}
	size_t counts[3] = { 0 };
	/* filter.staleAfter / whenStale: data older than that fails every node, or is used anyway
	 */
	double age = device_data_age(v.app);
	bool stale = v.demand.kind == RF_DEMAND_KNOWN &&
		     age * 1000.0 > (double)v.app->cfg.filter.stale_after_ms;
	if (v.demand.kind != RF_DEMAND_KNOWN) {
		counts[0] = n; /* the fast path: no device cache touched */
	} else if (stale && v.app->cfg.filter.when_stale == RF_WHEN_STALE_FAIL) {
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "railfit: device data is stale (no contact with kube-apiserver for %.0fs, "
			 "filter.staleAfter exceeded)",
			 age);
		if (!(stale_msg = strdup(msg))) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			outcomes[i] = RF_FILTER_FAIL;
			msgs[i] = stale_msg;
		}
		counts[1] = n;
	} else {
		if ((r = judge_nodes(&v, &job, true, "filter")) < 0)
			goto out;
		/* remember the per-node picks for railfit_prediction_total (real claims only) */
		batches = calloc(v.demand.n_claims + 1, sizeof(*batches));
		for (size_t k = 0; batches && k < v.demand.n_claims; k++) {
			char key[512];
			if (v.demand.claims[k]->from_template)
				continue;
			snprintf(key, sizeof(key), "%s/%s", v.demand.claims[k]->ns,
				 v.demand.claims[k]->name);
			batches[k] = rf_predictions_begin(key);
		}
		bool cel_error_seen = false, crash_seen = false;
		for (size_t i = 0; i < n; i++) {
			struct node_result *nr = &job.res[i];
			/* remembered picks, last read by whichever core judged them */
			if (i + 8 < n)
				__builtin_prefetch(job.res[i + 8].picks);
			ranks[i] = nr->name_rank;
			if (!nr->judged) {
				outcomes[i] = RF_FILTER_PASS; /* unjudged: never block the pod */
				counts[0]++;
				continue;
			}
			for (size_t k = 0; batches && nr->verdict == RF_VERDICT_PASS &&
					   nr->has_predicted && k < v.demand.n_claims;
			     k++)
				rf_predictions_add(batches[k], nr->name_fp, (unsigned)k, nr->picks,
						   nr->n_picks, nr->level, nr->level_applies);
			outcomes[i] = nr->verdict == RF_VERDICT_PASS   ? RF_FILTER_PASS
				      : nr->verdict == RF_VERDICT_FAIL ? RF_FILTER_FAIL
								       : RF_FILTER_UNRESOLVABLE;
			counts[nr->verdict]++;
			if (nr->scheduler_crash && !crash_seen) {
				crash_seen = true;
				rf_warn("kube-scheduler of this version crashes on the pod: no node is "
					"predicted to take it",
					"pod", v.demand.pod_key, "detail", nr->msg ? nr->msg : "");
			}
			if (nr->cel_error && !cel_error_seen) {
				cel_error_seen = true;
				rf_metric_add(RF_METRIC_SELECTOR_ERRORS_TOTAL, "", 1);
				rf_warn("a claim selector raises a CEL runtime error", "pod",
					v.demand.pod_key, "err", nr->cel_msg);
			}
			msgs[i] = nr->msg;
		}
	}
	if (batches)
		for (size_t k = 0; k < v.demand.n_claims; k++) {
			rf_predictions_commit(batches[k]);
			batches[k] = NULL;
		}
	static const char *const result_labels[] = { "result=\"pass\"", "result=\"fail\"",
						     "result=\"unresolvable\"" };
	for (int k = 0; k < 3; k++)
		if (counts[k])
			rf_metric_add(RF_METRIC_FILTER_NODES_TOTAL, result_labels[k],
				      (double)counts[k]);
	rf_v(2, "pod filtered", "pod", v.demand.pod_key, "demand",
	     rf_demand_kind_name(v.demand.kind));
	/* judged: every name's rank (a failure map sorted without comparing names) */
	r = reply_filter(resp, &v.args, outcomes, msgs, job.res ? ranks : NULL, NULL);
out:
	free(ranks);
	free(msgs);
	free(stale_msg);
	free(outcomes);
	if (batches) {
		for (size_t k = 0; k < v.demand.n_claims; k++)
			rf_predictions_commit(batches[k]); /* also on error: nothing is lost */
		free(batches);
	}
	judge_job_release(&job, v.args.n_nodes);
	verb_ctx_release(&v);
	return r < 0 ? r : 0;
}

int
rf_verb_prioritize(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct verb_ctx v = { .app = userdata };
	struct judge_job job = { .v = &v };
	int *scores = NULL;
	int r = verb_prepare(&v, req, resp, false);
	if (r != 0)
		goto out;
	size_t n = v.args.n_nodes;
	scores = calloc(n + 1, sizeof(*scores));
	if (!scores) {
		r = -ENOMEM;
		goto out;
	}
	if (v.demand.kind == RF_DEMAND_KNOWN) {
		if ((r = judge_nodes(&v, &job, false, "prioritize")) < 0)
			goto out;
		/* a node that would fail filter gets the lowest score, unjudged ones too */
		for (size_t i = 0; i < n; i++)
			scores[i] = job.res[i].judged && job.res[i].verdict == RF_VERDICT_PASS
					    ? job.res[i].score
					    : 0;
	}
	struct rf_strbuf b = { 0 };
	if (rf_extender_write_priority_list(&v.args, scores, &b) < 0)
		b.oom = true;
	r = rf_http_reply_strbuf(resp, 200, &b);
out:
	free(scores);
	judge_job_release(&job, v.args.n_nodes);
	verb_ctx_release(&v);
	return r < 0 ? r : 0;
}

/* POST /preempt (extender-protocol.md section 3.3): keep a candidate node only when evicting the
 * victims kube-scheduler proposes would let the pod pass railfit's filter there; victims of kept
 * nodes are returned exactly as received. */
int
rf_verb_preempt(void *userdata, const struct rf_http_request *req, struct rf_http_response *resp)
{
	struct rf_app *app = userdata;
	struct rf_extender_preempt_args args;
	struct rf_cluster *gen = NULL;
	struct rf_demand demand;
	bool have_demand = false;
	bool *keep = NULL;
	const struct rf_pod **victims = NULL;
	struct rf_node_eval *e = NULL;
	char err[512];
	int r = rf_extender_preempt_args_parse(req->body, req->body_len, &args, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return reply_bad_args(resp, "invalid ExtenderPreemptionArgs", err, false) < 0
			       ? -ENOMEM
			       : 0;
	keep = calloc(args.n_nodes + 1, sizeof(*keep));
	e = malloc(sizeof(*e));
	if (!keep || !e) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < args.n_nodes; i++)
		keep[i] = true;
	gen = rf_cache_get(app->cache);
	if (!gen)
		goto reply; /* nothing known: do not narrow kube-scheduler's choice */
	if ((r = rf_demand_resolve(gen, args.pod, &demand)) < 0)
		goto out;
	have_demand = true;
	if (demand.kind != RF_DEMAND_KNOWN)
		goto reply;
	/* the filter's time budget: candidates left when it is spent are kept (kube-scheduler's
	 * own choice stands), as filter passes the nodes it did not judge */
	double deadline = verb_deadline(app);
	for (size_t i = 0; i < args.n_nodes; i++) {
		const struct rf_extender_victims *v = &args.nodes[i];
		if (mono_ms() > deadline) {
			char d[32], t[32];
			snprintf(d, sizeof(d), "%zu", i);
			snprintf(t, sizeof(t), "%zu", args.n_nodes);
			rf_warn("time budget spent: the remaining candidates are kept unjudged",
				"verb", "preempt", "pod", demand.pod_key, "judged", d, "nodes", t);
			rf_metric_add(RF_METRIC_UNJUDGED_NODES_TOTAL, "",
				      (double)(args.n_nodes - i));
			break;
		}
		struct rf_release rel;
		size_t nv = 0;
		free(victims);
		victims = calloc(v->n_pods + 1, sizeof(*victims));
		if (!victims) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < v->n_pods; k++) {
			const struct rf_pod *p =
				v->uids[k] ? rf_cluster_pod_by_uid(gen, v->uids[k]) : NULL;
			if (p)
				victims[nv++] =
					p; /* unknown victims free nothing railfit can see */
		}
		if ((r = rf_release_from_victims(gen, victims, nv, &rel)) < 0)
			goto out;
		r = rf_evaluate_node_released(gen, &demand, v->node, &rel, e);
		rf_release_free(&rel);
		if (r < 0)
			goto out;
		keep[i] = e->verdict == RF_VERDICT_PASS;
		if (!keep[i])
			rf_v(2, "preemption candidate dropped", "pod", demand.pod_key, "node",
			     v->node, "reason", e->reasons[0]);
	}
reply:
	r = rf_http_reply_json(resp, 200, rf_extender_preempt_result(&args, keep));
out:
	free(victims);
	free(keep);
	free(e);
	if (have_demand)
		rf_demand_release(&demand);
	rf_cluster_unref(gen);
	rf_extender_preempt_args_release(&args);
	return r < 0 ? r : 0;
}

/* ExtenderBindingResult{Error} plus the error body every 4xx/5xx carries. */
static int
bind_refused(struct rf_http_response *resp, int status, const char *error, const char *text)
{
	json_t *j = rf_extender_bind_result(text);
	if (j && (json_object_set_new(j, "error", json_string(error)) < 0 ||
		  json_object_set_new(j, "detail", json_string(text)) < 0)) {
		json_decref(j);
		j = NULL;
	}
	char l[64];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_BIND_TOTAL, "refused", NULL) >= 0)
		rf_metric_add(RF_METRIC_BIND_TOTAL, l, 1);
	return rf_http_reply_json(resp, status, j);
}

/* Bad ExtenderBindingArgs get the 400 a binding railfit gives them; 1 when answered. */
static int
bind_args_invalid(const struct rf_http_request *req, struct rf_http_response *resp, int *ret)
{
	struct rf_extender_bind_args a = { 0 };
	char err[1024];
	int r = rf_extender_bind_args_parse(req->body, req->body_len, &a, err, sizeof(err));
	rf_extender_bind_args_release(&a);
	if (r == 0)
		return 0;
	*ret = r == -ENOMEM ? r : bind_refused(resp, 400, "invalid ExtenderBindingArgs", err);
	return 1;
}

int
rf_verb_bind_static(void *app, const struct rf_http_request *req, struct rf_http_response *resp)
{
	(void)app;
	int r;
	if (bind_args_invalid(req, resp, &r))
		return r;
	return bind_refused(resp, 501, "not implemented",
			    "railfit serves a static snapshot: binding needs a live cluster "
			    "(railfit serve without --snapshot or --demo, and bind.enabled: true)");
}

int
rf_verb_bind_disabled(void *app, const struct rf_http_request *req, struct rf_http_response *resp)
{
	(void)app;
	int r;
	if (bind_args_invalid(req, resp, &r))
		return r;
	return bind_refused(
		resp, 403, "binding disabled",
		"binding is disabled in the configuration (bind.enabled: false); "
		"kube-scheduler binds the pod itself when the extender has no bindVerb");
}
