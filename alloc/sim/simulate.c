/* The replay engine of `railfit simulate` (see simulate.h): per column, one pod at a time:
 * demand -> kube-scheduler's filters (and railfit's) -> scores -> the chosen node -> the cluster
 * updated through the next generation. Then what the cluster ended up with. */
#include "alloc/sim/simulate.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/memo.h"
#include "alloc/model/json_get.h"
#include "alloc/sim/overcommit.h"
#include "config/level.h"
#include "config/quantity.h"

/* kube-scheduler: minFeasibleNodesToFind, minFeasibleNodesPercentageToFind */
#define MIN_FEASIBLE     100
#define MIN_FEASIBLE_PCT 5
/* kube-scheduler counts a pod without requests as asking this much when scoring
 * (DefaultMilliCPURequest, DefaultMemoryRequest) */
#define NONZERO_CPU 0.1
#define NONZERO_MEM (200.0 * 1024 * 1024)

size_t
rf_sim_feasible_nodes_to_find(unsigned pct, size_t n)
{
	if (n < MIN_FEASIBLE)
		return n;
	long p = pct;
	if (!pct && (p = 50 - (long)(n / 125)) < MIN_FEASIBLE_PCT)
		p = MIN_FEASIBLE_PCT; /* the adaptive share has a floor, a configured one not */
	size_t k = n * (size_t)p / 100;
	return k < MIN_FEASIBLE ? MIN_FEASIBLE : k;
}

/* What every column shares: the objects before the first pod, the queue, node capacities. */
struct sim {
	const struct rf_config *cfg;
	struct rf_cel_cache *cel;
	const struct rf_sim_options *o;
	struct rf_cluster_objects objs; /* pods and claims: own arrays, the queue's pods bound in */
	size_t n_queue;
	size_t *queue_idx;     /* queue pod i is objs.pods[queue_idx[i]] */
	double *q_cpu, *q_mem; /* requests of queue pod i */
	json_t *claim_idx;     /* "ns/name" -> index in objs.claims */
	const json_t *in_pods; /* every pod of the cluster (the caller's), for CPU and memory */
	char *err;
	size_t errlen;
};

/* One replay: its generation chain and what it saw. */
struct column {
	const char *name;
	bool railfit;
	struct rf_cluster *gen;
	json_t *pods, *claims; /* the arrays gen was built from */
	/* Placements not built into gen yet: the arrays they changed (ours alone until the build)
	 * and what they touched. A decision reads only the nodes it judges, the rails of the pod's
	 * group and the pod's claims, so the next generation is built only when one of those is
	 * touched: with kube-scheduler's round robin most pods judge other nodes first. */
	json_t *work_pods, *work_claims;
	bool *dirty_node; /* by rf_node idx */
	json_t *dirty;    /* "group:ns/name" and "claim:ns/name" keys */
	size_t builds;
	size_t n_nodes;
	const struct rf_node **nodes; /* Nodes kube-scheduler knows (they have an object) */
	double *cpu_alloc, *mem_alloc, *cpu_used, *mem_used; /* by rf_node idx; alloc < 0: none */
	size_t next_start;
	uint64_t rng;
	unsigned share_serial; /* shareIDs of consumable-capacity allocations */
	struct sim *sim;
	struct rf_judge_scratch *scratch;
	struct rf_node_eval *eval;
	struct cand {
		const struct rf_node *node;
		int rf_score;
		unsigned new_gpus;
	} * cands;
	/* what it saw */
	size_t placed, pending, gpu_nic_pods, below_phb, min_asked, min_met;
	size_t levels[RF_LEVEL_COUNT];
	/* GPU to GPU (pods that got 2+ whole GPUs, by their worst pair; [0] NVL, [1 + l] the
	 * others), GPU to CPU (pods with DRA CPU devices) */
	size_t gpu_pods, gpu_levels[RF_LEVEL_COUNT + 1], gpu_min_asked, gpu_min_met;
	size_t cpu_pods, cpu_pods_aligned, cpus_known, cpus_aligned;
	json_t *pending_reasons, *jobs;
	json_t *job_nodes; /* group -> [[block, spine], ...] of its placed pods (null: no label) */
	json_t *entries;   /* per queued pod: {"node","level"} or {"pending"} */
	json_t *summary;
	int rc;
};

/* ---- numbers from objects ---- */

static double
quantity(const json_t *v)
{
	struct rf_quantity q;
	const char *s = json_string_value(v);
	if (json_is_number(v))
		return json_number_value(v);
	if (!s || rf_quantity_parse(s, &q) < 0)
		return 0;
	return rf_quantity_to_double(q);
}

static void
pod_requests(const json_t *pod, double *cpu, double *mem)
{
	const json_t *cs = json_object_get(json_object_get(pod, "spec"), "containers");
	*cpu = *mem = 0;
	for (size_t i = 0; i < json_array_size(cs); i++) {
		const json_t *rq = rf_jpath(json_array_get(cs, i), "resources.requests");
		*cpu += quantity(json_object_get(rq, "cpu"));
		*mem += quantity(json_object_get(rq, "memory"));
	}
}

static bool
pod_terminated(const json_t *pod)
{
	const char *ph = rf_jstr(json_object_get(pod, "status"), "phase");
	return ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

static uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- preparing the objects: the queue in the pods, claims the controller would create ---- */

static int __attribute__((format(printf, 2, 3))) sim_error(struct sim *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
index_claim(struct sim *s, const json_t *claim, size_t i)
{
	const json_t *md = json_object_get(claim, "metadata");
	char key[512];
	snprintf(key, sizeof(key), "%s/%s",
		 rf_jstr(md, "namespace") ? rf_jstr(md, "namespace") : "",
		 rf_jstr(md, "name") ? rf_jstr(md, "name") : "");
	return json_object_set_new(s->claim_idx, key, json_integer((json_int_t)i)) < 0 ? -ENOMEM
										       : 0;
}

static const json_t *
find_template(const struct sim *s, const char *ns, const char *name)
{
	for (size_t i = 0; i < json_array_size(s->objs.templates); i++) {
		const json_t *md =
			json_object_get(json_array_get(s->objs.templates, i), "metadata");
		const char *tns = rf_jstr(md, "namespace"), *tn = rf_jstr(md, "name");
		if (tn && strcmp(tn, name) == 0 && strcmp(tns ? tns : "", ns) == 0)
			return json_array_get(s->objs.templates, i);
	}
	return NULL;
}

/* The resourceclaim controller's part: a claim for each template entry of a queued pod that has
 * none yet, named as the pod's status says. Returns the pod to queue (maybe a new copy). */
static int
instantiate_templates(struct sim *s, json_t *pod, json_t **ret)
{
	const json_t *md = json_object_get(pod, "metadata");
	const char *ns = rf_jstr(md, "namespace") ? rf_jstr(md, "namespace") : "default";
	const char *pname = rf_jstr(md, "name");
	const json_t *entries = json_object_get(json_object_get(pod, "spec"), "resourceClaims");
	json_t *statuses = NULL, *copy = NULL;
	*ret = json_incref(pod);
	for (size_t i = 0; i < json_array_size(entries); i++) {
		const json_t *e = json_array_get(entries, i);
		const char *entry = rf_jstr(e, "name"),
			   *tn = rf_jstr(e, "resourceClaimTemplateName");
		if (!tn || !entry || rf_jstr(e, "resourceClaimName"))
			continue;
		const json_t *have =
			json_object_get(json_object_get(pod, "status"), "resourceClaimStatuses");
		bool mapped = false;
		for (size_t k = 0; k < json_array_size(have) && !mapped; k++)
			mapped = rf_jstr(json_array_get(have, k), "name") &&
				 strcmp(rf_jstr(json_array_get(have, k), "name"), entry) == 0;
		const json_t *t = find_template(s, ns, tn);
		if (mapped || !t)
			continue; /* an unknown template: the demand says so */
		char cname[320];
		snprintf(cname, sizeof(cname), "%s-%s", pname ? pname : "pod", entry);
		json_t *claim = json_pack(
			"{s:s, s:s, s:{s:s, s:s, s:s+}, s:O?}", "apiVersion", "resource.k8s.io/v1",
			"kind", "ResourceClaim", "metadata", "name", cname, "namespace", ns, "uid",
			"sim-", cname, "spec", json_object_get(json_object_get(t, "spec"), "spec"));
		if (!claim || json_array_append_new(s->objs.claims, claim) < 0 ||
		    index_claim(s, claim, json_array_size(s->objs.claims) - 1) < 0)
			goto oom;
		if (!statuses && !(statuses = json_array()))
			goto oom;
		if (json_array_append_new(statuses, json_pack("{s:s, s:s}", "name", entry,
							      "resourceClaimName", cname)) < 0)
			goto oom;
	}
	if (!statuses)
		return 0;
	json_t *st = json_is_object(json_object_get(pod, "status"))
			     ? json_copy(json_object_get(pod, "status"))
			     : json_object();
	const json_t *have = json_object_get(st, "resourceClaimStatuses");
	if (!st || (json_is_array(have) && json_array_extend(statuses, (json_t *)have) < 0) ||
	    json_object_set(st, "resourceClaimStatuses", statuses) < 0 ||
	    !(copy = json_copy(pod)) || json_object_set(copy, "status", st) < 0) {
		json_decref(st);
		json_decref(copy);
		goto oom;
	}
	json_decref(st);
	json_decref(statuses);
	json_decref(*ret);
	*ret = copy;
	return 0;
oom:
	json_decref(statuses);
	json_decref(*ret);
	*ret = NULL;
	return -ENOMEM;
}

/* Does a pod of the cluster change any decision? A finished pod does not; nor does a bound pod
 * without the bandwidth annotations railfit reads and without a rail group (what its claims
 * hold is the claims' business: a claim stays allocated whoever holds it). Only preemption
 * reads the others, and simulate does not preempt. */
static bool
pod_matters(const struct sim *s, const json_t *pod, const json_t *queue)
{
	static const char *const ann[] = { "railfit.io/nic-bandwidth", "railfit.io/group",
					   "kubernetes.io/egress-bandwidth",
					   "kubernetes.io/ingress-bandwidth" };
	const json_t *md = json_object_get(pod, "metadata");
	if (pod_terminated(pod))
		return false;
	if (!rf_jstr(json_object_get(pod, "spec"), "nodeName") || rf_jarray_holds(queue, pod))
		return true;
	for (size_t i = 0; i < sizeof(ann) / sizeof(ann[0]); i++)
		if (json_object_get(json_object_get(md, "annotations"), ann[i]))
			return true;
	const struct rf_strv *labels = &s->cfg->groups.labels;
	for (size_t i = 0; i < labels->n; i++)
		if (json_object_get(json_object_get(md, "labels"), labels->v[i]))
			return true;
	return false;
}

static int
prepare(struct sim *s, const struct rf_cluster_objects *in, json_t *queue)
{
	s->objs = *in;
	s->objs.pods = s->objs.claims = NULL;
	s->in_pods = in->pods;
	s->n_queue = json_array_size(queue);
	if (!(s->objs.pods = json_array()) || !(s->objs.claims = json_array()) ||
	    !(s->claim_idx = json_object()) ||
	    !(s->queue_idx = calloc(s->n_queue + 1, sizeof(*s->queue_idx))) ||
	    !(s->q_cpu = calloc(s->n_queue + 1, sizeof(double))) ||
	    !(s->q_mem = calloc(s->n_queue + 1, sizeof(double))))
		return -ENOMEM;
	/* pods no decision reads are left out, so every build is that much smaller (their CPU
	 * and memory still count: column_init() reads in->pods) */
	for (size_t i = 0; i < json_array_size(in->pods); i++) {
		json_t *p = json_array_get(in->pods, i);
		if (pod_matters(s, p, queue) && json_array_append(s->objs.pods, p) < 0)
			return -ENOMEM;
	}
	if (in->claims && json_array_extend(s->objs.claims, in->claims) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(s->objs.claims); i++)
		if (index_claim(s, json_array_get(s->objs.claims, i), i) < 0)
			return -ENOMEM;
	for (size_t q = 0; q < s->n_queue; q++) {
		json_t *pod = json_array_get(queue, q), *qp;
		const json_t *md = json_object_get(pod, "metadata");
		if (!json_is_object(pod) || !rf_jstr(md, "name"))
			return sim_error(s, "pod %zu of the queue has no metadata.name", q + 1);
		size_t at = json_array_size(s->objs.pods);
		for (size_t i = 0; i < json_array_size(s->objs.pods); i++)
			if (json_array_get(s->objs.pods, i) == pod)
				at = i;
		if (instantiate_templates(s, pod, &qp) < 0)
			return -ENOMEM;
		int r = at < json_array_size(s->objs.pods)
				? json_array_set_new(s->objs.pods, at, qp)
				: json_array_append_new(s->objs.pods, qp);
		if (r < 0)
			return -ENOMEM;
		s->queue_idx[q] = at;
		pod_requests(qp, &s->q_cpu[q], &s->q_mem[q]);
	}
	return 0;
}

/* ---- a column ---- */

static int
column_init(struct sim *s, struct column *c)
{
	int r;
	struct rf_cluster_objects o = s->objs;
	c->pods = json_incref(s->objs.pods);
	c->claims = json_incref(s->objs.claims);
	c->rng = s->o->seed ^ 0x5eed5eed5eed5eedULL;
	if ((r = rf_cluster_build_next(NULL, &o, s->cfg, s->cel, false, &c->gen)) < 0)
		return r;
	size_t n = rf_cluster_n_nodes(c->gen);
	if (!(c->nodes = calloc(n + 1, sizeof(*c->nodes))) ||
	    !(c->cpu_alloc = calloc(n + 1, sizeof(double))) ||
	    !(c->mem_alloc = calloc(n + 1, sizeof(double))) ||
	    !(c->cpu_used = calloc(n + 1, sizeof(double))) ||
	    !(c->mem_used = calloc(n + 1, sizeof(double))) ||
	    !(c->cands = calloc(n + 1, sizeof(*c->cands))) ||
	    !(c->scratch = malloc(sizeof(*c->scratch))) || !(c->eval = malloc(sizeof(*c->eval))) ||
	    !(c->pending_reasons = json_object()) || !(c->jobs = json_object()) ||
	    !(c->job_nodes = json_object()) || !(c->entries = json_array()) ||
	    !(c->dirty = json_object()) || !(c->dirty_node = calloc(n + 1, sizeof(bool))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rf_node *nd = rf_cluster_node_at(c->gen, i);
		const json_t *al = rf_jpath(nd->json, "status.allocatable");
		if (nd->json)
			c->nodes[c->n_nodes++] = nd;
		c->cpu_alloc[i] =
			json_object_get(al, "cpu") ? quantity(json_object_get(al, "cpu")) : -1;
		c->mem_alloc[i] = json_object_get(al, "memory")
					  ? quantity(json_object_get(al, "memory"))
					  : -1;
	}
	for (size_t i = 0; i < json_array_size(s->in_pods); i++) {
		const json_t *p = json_array_get(s->in_pods, i);
		const char *nn = rf_jstr(json_object_get(p, "spec"), "nodeName");
		const struct rf_node *nd = nn ? rf_cluster_node(c->gen, nn) : NULL;
		double cpu, mem;
		if (!nd || pod_terminated(p))
			continue;
		pod_requests(p, &cpu, &mem);
		c->cpu_used[nd->idx] += cpu;
		c->mem_used[nd->idx] += mem;
	}
	return 0;
}

static void
column_release(struct column *c)
{
	rf_cluster_unref(c->gen);
	json_decref(c->pods);
	json_decref(c->claims);
	json_decref(c->pending_reasons);
	json_decref(c->jobs);
	json_decref(c->job_nodes);
	json_decref(c->entries);
	json_decref(c->summary);
	json_decref(c->work_pods);
	json_decref(c->work_claims);
	json_decref(c->dirty);
	free(c->dirty_node);
	free(c->nodes);
	free(c->cpu_alloc);
	free(c->mem_alloc);
	free(c->cpu_used);
	free(c->mem_used);
	free(c->cands);
	free(c->scratch);
	free(c->eval);
}

static int
count_reason(json_t *obj, const char *reason)
{
	json_int_t n = json_integer_value(json_object_get(obj, reason));
	return json_object_set_new(obj, reason, json_integer(n + 1)) < 0 ? -ENOMEM : 0;
}

/* NodeResourcesFit, LeastAllocated with equal weights over CPU, memory and (when the node has
 * them) GPUs: sum((allocatable - requested) * 100 / allocatable) / resources, integer as in Go. */
static long
least_allocated(const struct column *c, const struct rf_node *n, double cpu, double mem,
		unsigned new_gpus)
{
	long sum = 0, k = 0;
	double ask[2] = { cpu > 0 ? cpu : NONZERO_CPU, mem > 0 ? mem : NONZERO_MEM };
	double alloc[2] = { c->cpu_alloc[n->idx], c->mem_alloc[n->idx] };
	double used[2] = { c->cpu_used[n->idx], c->mem_used[n->idx] };
	for (int r = 0; r < 2; r++) {
		if (alloc[r] <= 0)
			continue;
		double req = used[r] + ask[r];
		sum += req > alloc[r] ? 0 : (long)((alloc[r] - req) * 100 / alloc[r]);
		k++;
	}
	if (n->n_gpus) {
		long used_gpus = (long)n->n_gpus - (long)rf_node_use(c->gen, n)->n_gpus_free;
		long req = used_gpus + (long)new_gpus;
		sum += req > (long)n->n_gpus ? 0 : ((long)n->n_gpus - req) * 100 / (long)n->n_gpus;
		k++;
	}
	return k ? sum / k : 0;
}

/* The category of a railfit failure message, for the pending table. */
static const char *
railfit_category(const char *msg)
{
	if (!msg)
		return "railfit: filter";
	if (strstr(msg, "min-alignment"))
		return "railfit: below min-alignment";
	if (strstr(msg, "front-end NIC"))
		return "railfit: front-end bandwidth";
	if (strncmp(msg, "NIC ", 4) == 0 || strstr(msg, "railfit: NIC "))
		return "railfit: NIC bandwidth";
	if (strstr(msg, "claims cannot be allocated"))
		return "railfit: claims cannot be allocated";
	return "railfit: filter";
}

/* The bound pod: spec.nodeName set, Running. */
static json_t *
bound_pod(const json_t *pod, const char *node)
{
	json_t *p = json_copy((json_t *)pod);
	json_t *spec = json_copy(json_object_get(pod, "spec"));
	json_t *st = json_copy(json_object_get(pod, "status"));
	if (!spec)
		spec = json_object();
	if (!st)
		st = json_object();
	if (!p || !spec || !st || json_object_set_new(spec, "nodeName", json_string(node)) < 0 ||
	    json_object_set_new(st, "phase", json_string("Running")) < 0 ||
	    json_object_set(p, "spec", spec) < 0 || json_object_set(p, "status", st) < 0) {
		json_decref(p);
		p = NULL;
	}
	json_decref(spec);
	json_decref(st);
	return p;
}

/* The claim allocated as the DRA plugin writes it: the picks of this claim, the node selector,
 * reserved for the pod. */
static json_t *
allocated_claim(const struct rf_claim *cl, const json_t *obj, const struct rf_assignment *a,
		const char *node, const char *pod_name, const char *pod_uid, unsigned *share_serial)
{
	json_t *results = json_array(), *status = NULL, *claim = NULL;
	if (!results)
		return NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_pick *pk = &a->picks[i];
		if (pk->claim != cl || pk->pinned)
			continue;
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "request", pk->request, "driver",
				      pk->dev->pool->driver, "pool", pk->dev->pool->name, "device",
				      pk->dev->name);
		if (!r || json_array_append_new(results, r) < 0)
			goto fail;
		if (pk->dev->allow_multiple) {
			/* one share of a device that allows multiple allocations */
			char share[48];
			snprintf(share, sizeof(share), "00000000-0000-4000-a000-%012x",
				 ++*share_serial);
			if (json_object_set_new(r, "shareID", json_string(share)) < 0)
				goto fail;
		}
		if (pk->has_bw && pk->dev->bandwidth) {
			char q[RF_QUANTITY_FMT_MAX];
			rf_quantity_format(pk->bw, q);
			if (json_object_set_new(
				    r, "consumedCapacity",
				    json_pack("{s:s}", pk->dev->bandwidth->raw_name, q)) < 0)
				goto fail;
		}
	}
	status = json_pack("{s:{s:{s:O}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}, s:[{s:s, s:s, s:s}]}",
			   "allocation", "devices", "results", results, "nodeSelector",
			   "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator",
			   "In", "values", node, "reservedFor", "resource", "pods", "name",
			   pod_name, "uid", pod_uid ? pod_uid : "");
	claim = json_copy((json_t *)obj);
	if (!status || !claim || json_object_set(claim, "status", status) < 0)
		goto fail;
	json_decref(results);
	json_decref(status);
	return claim;
fail:
	json_decref(results);
	json_decref(status);
	json_decref(claim);
	return NULL;
}

/* Build the placements made since the last build into the next generation. */
static int
flush(struct sim *s, struct column *c)
{
	if (!c->work_pods)
		return 0;
	struct rf_cluster_objects o = s->objs;
	struct rf_cluster *next = NULL;
	o.pods = c->work_pods;
	o.claims = c->work_claims;
	int r = rf_cluster_build_next(c->gen, &o, s->cfg, s->cel, true, &next);
	if (r < 0)
		return r;
	rf_cluster_unref(c->gen);
	c->gen = next;
	json_decref(c->pods);
	json_decref(c->claims);
	c->pods = c->work_pods;
	c->claims = c->work_claims;
	c->work_pods = c->work_claims = NULL;
	memset(c->dirty_node, 0, rf_cluster_n_nodes(c->gen) * sizeof(bool));
	json_object_clear(c->dirty);
	c->builds++;
	return 0;
}

static int
mark(json_t *dirty, const char *what, const char *ns, const char *name)
{
	char key[600];
	snprintf(key, sizeof(key), "%s:%s/%s", what, ns ? ns : "", name);
	return json_object_set_new(dirty, key, json_true()) < 0 ? -ENOMEM : 0;
}

static bool
marked(const json_t *dirty, const char *what, const char *ns, const char *name)
{
	char key[600];
	snprintf(key, sizeof(key), "%s:%s/%s", what, ns ? ns : "", name);
	return json_object_get(dirty, key) != NULL;
}

/* Bind the pod and allocate its claims (in the arrays of the next generation). */
static int
apply(struct sim *s, struct column *c, size_t q, const struct rf_demand *d, const json_t *pod,
      const struct rf_node *node, const struct rf_assignment *a)
{
	json_t *bp = NULL;
	if (!c->work_pods) {
		if (!(c->work_pods = json_array()) ||
		    json_array_extend(c->work_pods, c->pods) < 0 ||
		    !(c->work_claims = json_array()) ||
		    json_array_extend(c->work_claims, c->claims) < 0)
			return -ENOMEM;
	}
	if (!(bp = bound_pod(pod, node->name)) ||
	    json_array_set_new(c->work_pods, s->queue_idx[q], bp) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < d->n_claims; k++) {
		const struct rf_claim *cl = d->claims[k];
		char key[512];
		snprintf(key, sizeof(key), "%s/%s", cl->ns ? cl->ns : "", cl->name);
		const json_t *idx = json_object_get(s->claim_idx, key);
		if (!idx)
			continue; /* not an object of the cluster: nothing to update */
		size_t at = (size_t)json_integer_value(idx);
		const json_t *md = json_object_get(pod, "metadata");
		json_t *ac =
			allocated_claim(cl, json_array_get(c->work_claims, at), a, node->name,
					rf_jstr(md, "name"), rf_jstr(md, "uid"), &c->share_serial);
		if (!ac || json_array_set_new(c->work_claims, at, ac) < 0 ||
		    mark(c->dirty, "claim", cl->ns, cl->name) < 0)
			return -ENOMEM;
	}
	if (d->group[0] && mark(c->dirty, "group", "", d->group) < 0)
		return -ENOMEM;
	c->dirty_node[node->idx] = true;
	c->cpu_used[node->idx] += s->q_cpu[q];
	c->mem_used[node->idx] += s->q_mem[q];
	return s->o->rebuild_each ? flush(s, c) : 0;
}

/* Does the demand read something a placement changed since the last build? */
static bool
demand_touched(const struct column *c, const struct rf_demand *d)
{
	if (!c->work_pods)
		return false;
	if (d->group[0] && marked(c->dirty, "group", "", d->group))
		return true;
	for (size_t k = 0; k < d->n_claims; k++)
		if (marked(c->dirty, "claim", d->claims[k]->ns, d->claims[k]->name))
			return true;
	for (size_t k = 0; k < d->n_pinned; k++)
		if (marked(c->dirty, "claim", d->pinned[k]->ns, d->pinned[k]->name))
			return true;
	return false;
}

/* GPU to GPU: the worst pair of a pod that got 2+ whole GPUs (UNKNOWN when no pair's level is
 * known); CPU to GPU: its DRA CPUs on its GPUs' NUMA node (the score parts gpu and cpu). */
static int
record_gpu_cpu(struct column *c, const struct rf_demand *d, const struct rf_node *n,
	       const struct rf_assignment *a, json_t *o)
{
	size_t whole = 0;
	enum rf_level l = RF_LEVEL_UNKNOWN;
	unsigned cpus = 0, known = 0, aligned = 0;
	for (size_t i = 0; i < a->n; i++)
		whole += a->picks[i].dev->kind == RF_DEV_GPU && !a->picks[i].dev->partition;
	if (whole >= 2) {
		if (!rf_assignment_gpu_alignment(n, c->sim->cfg, a, &l, NULL, NULL))
			l = RF_LEVEL_UNKNOWN;
		c->gpu_pods++;
		c->gpu_levels[l == RF_LEVEL_NVL ? 0 : 1 + (int)l]++;
		if (d->has_min_gpu_alignment) {
			c->gpu_min_asked++;
			c->gpu_min_met += rf_level_at_least(l, d->min_gpu_alignment);
		}
		if (json_object_set_new(o, "gpuLevel", json_string(rf_level_name(l))) < 0)
			return -ENOMEM;
	}
	/* as the cpu part: pods whose DRA CPUs and GPUs (NICs) have known NUMA nodes */
	if (rf_assignment_cpu_alignment(n, a, &cpus, &known, &aligned)) {
		char v[48];
		c->cpu_pods++;
		c->cpus_known += known;
		c->cpus_aligned += aligned;
		c->cpu_pods_aligned += known && aligned == known;
		snprintf(v, sizeof(v), "%u of %u", aligned, cpus);
		if (json_object_set_new(o, "cpusOnGpuNuma", json_string(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A Job's pod: the rails it got, and where its node sits in the network. */
static int
record_job(struct column *c, const struct rf_demand *d, const struct rf_node *n, uint64_t rails,
	   json_t *o)
{
	json_t *list = json_object_get(c->jobs, d->group);
	if (rails) {
		json_t *r = json_array();
		for (int i = 0; r && i < 64; i++)
			if (((rails >> i) & 1) && json_array_append_new(r, json_integer(i)) < 0)
				break;
		if (!r || json_object_set_new(o, "rails", r) < 0)
			return -ENOMEM;
	}
	if (!d->group[0])
		return 0;
	if (rails) {
		if (!list &&
		    (!(list = json_array()) || json_object_set_new(c->jobs, d->group, list) < 0))
			return -ENOMEM;
		if (json_array_append_new(list, json_pack("[s, I]", n->name, (json_int_t)rails)) <
		    0)
			return -ENOMEM;
	}
	if (!(list = json_object_get(c->job_nodes, d->group)) &&
	    (!(list = json_array()) || json_object_set_new(c->job_nodes, d->group, list) < 0))
		return -ENOMEM;
	return json_array_append_new(list, json_pack("[s?, s?]", n->block, n->spine)) < 0 ? -ENOMEM
											  : 0;
}

/* What the pod got: GPU-to-nearest-NIC levels, min-alignment, GPU-to-GPU and CPU-to-GPU
 * alignment, rails and network place of its job. */
static int
record(struct column *c, const struct rf_demand *d, const struct rf_node *n,
       const struct rf_assignment *a)
{
	size_t gpus = 0, nics = 0;
	enum rf_level worst = RF_LEVEL_PIX;
	uint64_t rails = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *dev = a->picks[i].dev;
		nics += dev->kind == RF_DEV_NIC;
		if (dev->kind == RF_DEV_NIC && dev->rail >= 0 && dev->rail < 64)
			rails |= 1ULL << dev->rail;
	}
	for (size_t i = 0; nics && i < a->n; i++) {
		const struct rf_device *g = a->picks[i].dev;
		if (g->kind != RF_DEV_GPU)
			continue;
		enum rf_level best = RF_LEVEL_UNKNOWN;
		for (size_t j = 0; j < a->n; j++)
			if (a->picks[j].dev->kind == RF_DEV_NIC) {
				enum rf_level l = rf_node_level(n, g, a->picks[j].dev, NULL);
				if (l < best)
					best = l;
			}
		c->levels[best]++;
		gpus++;
		if (best > worst)
			worst = best;
	}
	json_t *o = json_pack("{s:s}", "node", n->name);
	if (!o || json_array_append_new(c->entries, o) < 0)
		return -ENOMEM;
	if (gpus) {
		c->gpu_nic_pods++;
		c->below_phb += worst > RF_LEVEL_PHB;
		json_object_set_new(o, "level", json_string(rf_level_name(worst)));
		if (d->min_alignment_from_pod) {
			c->min_asked++;
			c->min_met += rf_level_at_least(worst, d->min_alignment);
		}
	}
	int r = record_gpu_cpu(c, d, n, a, o);
	return r < 0 ? r : record_job(c, d, n, rails, o);
}

static int
pend(struct column *c, const char *why)
{
	c->pending++;
	if (count_reason(c->pending_reasons, why) < 0 ||
	    json_array_append_new(c->entries, json_pack("{s:s}", "pending", why)) < 0)
		return -ENOMEM;
	return 0;
}

/* kube-scheduler's filters on one node; NULL when it passes, else the reason. */
static const char *
scheduler_filter(const struct column *c, const struct sim *s, size_t q, const struct rf_node *n)
{
	if (!rf_cluster_node_ready(c->gen, n))
		return "node not ready";
	if (c->cpu_alloc[n->idx] >= 0 && c->cpu_used[n->idx] + s->q_cpu[q] > c->cpu_alloc[n->idx])
		return "Insufficient cpu";
	if (c->mem_alloc[n->idx] >= 0 && c->mem_used[n->idx] + s->q_mem[q] > c->mem_alloc[n->idx])
		return "Insufficient memory";
	return NULL;
}

/* The most frequent reason of the nodes that failed (kube-scheduler's "0/N nodes are
 * available: ..."), as the pending reason. */
#define N_REASONS 5
static const char *const scheduler_reasons[N_REASONS] = { "node not ready", "Insufficient cpu",
							  "Insufficient memory",
							  "cannot allocate all claims",
							  "selector error (CEL)" };

static int
place_one(struct sim *s, struct column *c, size_t q)
{
	json_t *pod = json_array_get(c->pods, s->queue_idx[q]);
	struct rf_demand d;
	struct rf_judge_ctx jc = { 0 };
	size_t fails[N_REASONS] = { 0 }, n_cands = 0, processed = 0, rf_failed = 0, scanned = 0;
	const struct rf_node *rf_first_failed = NULL;
	const struct rf_node *best = NULL;
	size_t n = c->n_nodes, want = rf_sim_feasible_nodes_to_find(s->o->pct_nodes_to_score, n);
	int r;
again: /* scanned stays: a build in the middle of an attempt does not start a new one */
	if ((r = rf_demand_resolve(c->gen, pod, &d)) < 0)
		return r;
	if (demand_touched(c, &d)) {
		rf_demand_release(&d);
		if ((r = flush(s, c)) < 0)
			return r;
		goto again;
	}
	if (d.kind == RF_DEMAND_UNKNOWN) {
		char why[600];
		snprintf(why, sizeof(why), "demand unknown: not simulated (%s)", d.unknown_reason);
		r = pend(c, why);
		goto out;
	}
	bool judge = d.kind == RF_DEMAND_KNOWN;
	if (judge && (r = rf_judge_begin(c->gen, &d, &jc)) < 0)
		goto out;
scan:
	for (size_t k = 0; k < n && n_cands < want; k++) {
		const struct rf_node *nd = c->nodes[(c->next_start + k) % n];
		if (c->dirty_node[nd->idx]) {
			/* a placement changed this node: judge it on the next generation, from
			 * the start (the same decisions, on data that is current) */
			rf_judge_end(&jc);
			rf_demand_release(&d);
			if ((r = flush(s, c)) < 0)
				return r;
			memset(fails, 0, sizeof(fails));
			n_cands = processed = rf_failed = 0;
			rf_first_failed = NULL;
			goto again;
		}
		processed++;
		const char *why = scheduler_filter(c, s, q, nd);
		if (why) {
			for (int i = 0; i < N_REASONS; i++)
				fails[i] += strcmp(why, scheduler_reasons[i]) == 0;
			continue;
		}
		struct cand cd = { .node = nd };
		if (judge) {
			struct rf_judgement j;
			if ((r = rf_judge_node(&jc, nd->name, false, c->scratch, &j)) < 0)
				goto out;
			if (j.cel_error) {
				fails[4]++;
				continue;
			}
			if (!j.has_predicted && (d.n_claims || d.n_pinned)) {
				fails[3]++; /* the DRA plugin: the claims cannot be allocated here
					     */
				continue;
			}
			for (size_t i = 0; i < j.n_picks; i++)
				cd.new_gpus +=
					j.picks[i].dev->kind == RF_DEV_GPU && !j.picks[i].pinned;
			if (c->railfit && j.verdict != RF_VERDICT_PASS) {
				/* found feasible by kube-scheduler; the extender's filter drops it
				 */
				if (!rf_failed++)
					rf_first_failed = nd;
				c->cands[n_cands++] = (struct cand){ .node = NULL };
				continue;
			}
			cd.rf_score = j.score;
		}
		c->cands[n_cands++] = cd;
	}
	c->next_start = n ? (c->next_start + processed) % n : 0;
	scanned += processed;
	/* pick the highest score; ties at random (kube-scheduler's selectHost) */
	long best_score = -1, ties = 0;
	for (size_t i = 0; i < n_cands; i++) {
		if (!c->cands[i].node)
			continue;
		long sc = least_allocated(c, c->cands[i].node, s->q_cpu[q], s->q_mem[q],
					  c->cands[i].new_gpus);
		if (c->railfit)
			sc += (long)c->cands[i].rf_score * (long)s->o->extender_weight * 10;
		if (sc > best_score) {
			best_score = sc;
			best = c->cands[i].node;
			ties = 1;
		} else if (sc == best_score && next_rand(&c->rng) % (uint64_t)++ties == 0) {
			best = c->cands[i].node;
		}
	}
	if (!best && rf_failed && scanned < n) {
		/* railfit failed every node of this attempt's window: kube-scheduler requeues the
		 * pod, and its next attempt searches from where this one stopped */
		memset(fails, 0, sizeof(fails));
		n_cands = processed = rf_failed = 0;
		rf_first_failed = NULL;
		goto scan;
	}
	if (!best) {
		const char *why = "no node";
		size_t most = 0;
		char buf[64];
		if (n_cands && rf_failed) {
			/* every node kube-scheduler found feasible fails railfit's filter */
			if ((r = rf_evaluate_node_work(c->gen, &d, rf_first_failed->name, false,
						       &c->scratch->work, c->eval)) < 0)
				goto out;
			why = railfit_category(c->eval->n_reasons ? c->eval->reasons[0] : NULL);
		} else {
			for (int i = 0; i < N_REASONS; i++)
				if (fails[i] > most) {
					most = fails[i];
					why = scheduler_reasons[i];
				}
			if (!n) {
				snprintf(buf, sizeof(buf), "no nodes");
				why = buf;
			}
		}
		r = pend(c, why);
		goto out;
	}
	/* the devices DRA gives on that node: the allocator mirror's prediction */
	c->eval->predicted.n = 0;
	if (judge && (r = rf_evaluate_node_work(c->gen, &d, best->name, false, &c->scratch->work,
						c->eval)) < 0)
		goto out;
	if ((r = record(c, &d, best, &c->eval->predicted)) < 0)
		goto out;
	if ((r = apply(s, c, q, &d, pod, best, &c->eval->predicted)) == 0)
		c->placed++;
out:
	rf_judge_end(&jc);
	rf_demand_release(&d);
	return r;
}

/* ---- what the cluster ended up with ---- */

/* Free GPU+NIC pairs at PHB or better (each rail NIC once, best level first), and nodes whose
 * GPUs and rail NICs are all free. */
static void
free_sets(const struct rf_cluster *g, const struct rf_node *n, size_t *pairs, bool *whole)
{
	const struct rf_device *gpus[64], *nics[64];
	bool used[64] = { false };
	size_t ng = 0, nn = 0, all_g = 0, all_n = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind == RF_DEV_GPU && !d->partition) {
			all_g++;
			if (rf_device_is_free(g, d) && !rf_dev_use(g, d)->n_shares && ng < 64)
				gpus[ng++] = d;
		} else if (d->kind == RF_DEV_NIC && d->rail >= 0) {
			all_n++;
			if (rf_device_is_free(g, d) && !rf_dev_use(g, d)->n_shares && nn < 64)
				nics[nn++] = d;
		}
	}
	*whole = all_g > 0 && ng == all_g && nn == all_n;
	for (enum rf_level l = RF_LEVEL_PIX; l <= RF_LEVEL_PHB; l++)
		for (size_t i = 0; i < ng; i++) {
			if (!gpus[i])
				continue;
			for (size_t j = 0; j < nn; j++)
				if (!used[j] && rf_node_level(n, gpus[i], nics[j], NULL) == l) {
					used[j] = true;
					gpus[i] = NULL;
					(*pairs)++;
					break;
				}
		}
}

/* Jobs of 2+ placed pods by where their nodes sit in the network (groups.blockLabels and
 * .spineLabels): all in one block; in one spine, several blocks; spread over spines (or over
 * blocks whose spine is not labelled); some pod on a node with neither label. */
static json_t *
job_locality(const struct column *c)
{
	size_t jobs = 0, block = 0, spine = 0, spread = 0, unlabelled = 0;
	const char *job;
	json_t *list;
	json_object_foreach (c->job_nodes, job, list) {
		size_t np = json_array_size(list);
		bool one_block = true, one_spine = true, bare = false;
		const char *b0 = json_string_value(json_array_get(json_array_get(list, 0), 0));
		const char *s0 = json_string_value(json_array_get(json_array_get(list, 0), 1));
		if (np < 2)
			continue; /* one pod is in one block */
		jobs++;
		for (size_t i = 0; i < np; i++) {
			const char *b =
				json_string_value(json_array_get(json_array_get(list, i), 0));
			const char *sp =
				json_string_value(json_array_get(json_array_get(list, i), 1));
			one_block = one_block && b && b0 && strcmp(b, b0) == 0;
			one_spine = one_spine && sp && s0 && strcmp(sp, s0) == 0;
			bare = bare || (!b && !sp);
		}
		if (one_block)
			block++;
		else if (one_spine)
			spine++;
		else if (bare)
			unlabelled++;
		else
			spread++;
	}
	(void)job;
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "jobs", (json_int_t)jobs, "oneBlock",
			 (json_int_t)block, "oneSpine", (json_int_t)spine, "spread",
			 (json_int_t)spread, "unlabelled", (json_int_t)unlabelled);
}

/* GPU to GPU and CPU to GPU: what record_gpu_cpu() counted. */
static json_t *
gpu_cpu_summary(const struct column *c)
{
	json_t *lv = json_object();
	for (int l = -1; lv && l < RF_LEVEL_COUNT; l++)
		if (json_object_set_new(lv, rf_level_name(l < 0 ? RF_LEVEL_NVL : (enum rf_level)l),
					json_integer((json_int_t)c->gpu_levels[l + 1])) < 0) {
			json_decref(lv);
			return NULL;
		}
	return json_pack(
		"{s:I, s:o, s:I, s:{s:I, s:I}, s:{s:I, s:I, s:I, s:I}}", "multiGpuPods",
		(json_int_t)c->gpu_pods, "gpuLevels", lv, "multiGpuBelowPHB",
		(json_int_t)(c->gpu_levels[1 + RF_LEVEL_NODE] + c->gpu_levels[1 + RF_LEVEL_SYS] +
			     c->gpu_levels[1 + RF_LEVEL_UNKNOWN]),
		"minGpuAlignment", "asked", (json_int_t)c->gpu_min_asked, "met",
		(json_int_t)c->gpu_min_met, "cpuClaims", "pods", (json_int_t)c->cpu_pods,
		"podsAligned", (json_int_t)c->cpu_pods_aligned, "devicesKnown",
		(json_int_t)c->cpus_known, "devicesOnGpuNuma", (json_int_t)c->cpus_aligned);
}

static int
summarize(const struct sim *s, struct column *c, json_t **ret)
{
	size_t nics_over, fe_over, pairs = 0, whole = 0;
	rf_overcommitted(c->gen, &nics_over, &fe_over);
	for (size_t i = 0; i < rf_cluster_n_nodes(c->gen); i++) {
		bool w;
		free_sets(c->gen, rf_cluster_node_at(c->gen, i), &pairs, &w);
		whole += w;
	}
	json_t *levels = json_object(), *jobs = json_array();
	double sum = 0;
	size_t n_jobs = 0, same = 0;
	const char *job;
	json_t *list;
	if (!levels || !jobs)
		goto oom;
	for (int l = 0; l < RF_LEVEL_COUNT; l++)
		if (json_object_set_new(levels, rf_level_name(l),
					json_integer((json_int_t)c->levels[l])) < 0)
			goto oom;
	json_object_foreach (c->jobs, job, list) {
		/* per node, the rails the Job's pods hold there: pods that share a node use
		 * different NICs, and what crosses the network is node to node */
		size_t np = json_array_size(list), nn = 0, top = 0;
		const char *node[64];
		uint64_t set[64];
		for (size_t i = 0; i < np; i++) {
			const json_t *e = json_array_get(list, i);
			const char *name = json_string_value(json_array_get(e, 0));
			uint64_t r = (uint64_t)json_integer_value(json_array_get(e, 1));
			size_t k = 0;
			while (k < nn && strcmp(node[k], name) != 0)
				k++;
			if (k == nn) {
				if (nn == 64)
					continue; /* a Job on more nodes: its first 64 are judged */
				node[nn] = name;
				set[nn++] = 0;
			}
			set[k] |= r;
		}
		if (nn < 2)
			continue; /* on one node: no rail between its pods */
		for (size_t i = 0; i < nn; i++) {
			size_t k = 0;
			for (size_t j = 0; j < nn; j++)
				k += set[i] == set[j];
			if (k > top)
				top = k;
		}
		double share = (double)top / (double)nn;
		if (json_array_append_new(jobs,
					  json_pack("{s:s, s:I, s:I, s:f}", "job", job, "pods",
						    (json_int_t)np, "nodes", (json_int_t)nn,
						    "railConsistency", share)) < 0)
			goto oom;
		sum += share;
		n_jobs++;
		same += top == nn;
	}
	*ret = json_pack("{s:s, s:I, s:I, s:O, s:o, s:I, s:I, s:{s:I, s:I}, s:I, s:I, s:o, s:o, "
			 "s:I, s:I, s:I}",
			 "name", c->name, "placed", (json_int_t)c->placed, "pending",
			 (json_int_t)c->pending, "pendingReasons", c->pending_reasons, "levels",
			 levels, "gpuNicPods", (json_int_t)c->gpu_nic_pods, "multiDeviceBelowPHB",
			 (json_int_t)c->below_phb, "minAlignment", "asked",
			 (json_int_t)c->min_asked, "met", (json_int_t)c->min_met,
			 "nicsOvercommitted", (json_int_t)nics_over, "frontendOvercommitted",
			 (json_int_t)fe_over, "jobs", jobs, "railConsistency",
			 n_jobs ? json_real(sum / (double)n_jobs) : json_null(), "jobsOnSameRails",
			 (json_int_t)same, "freeAlignedPairs", (json_int_t)pairs, "freeWholeNodes",
			 (json_int_t)whole);
	json_t *gc = *ret ? gpu_cpu_summary(c) : NULL;
	if (*ret && (!gc || json_object_update(*ret, gc) < 0 ||
		     json_object_set_new(*ret, "jobLocality", job_locality(c)) < 0 ||
		     !json_object_get(*ret, "jobLocality") ||
		     json_object_set_new(*ret, "generationsBuilt",
					 json_integer((json_int_t)c->builds)) < 0)) {
		json_decref(*ret);
		*ret = NULL;
	}
	json_decref(gc);
	return *ret ? 0 : -ENOMEM;
oom:
	json_decref(levels);
	json_decref(jobs);
	return -ENOMEM;
}

static void *
run_column(void *arg)
{
	struct column *c = arg;
	struct sim *s = c->sim;
	int r = column_init(s, c);
	for (size_t q = 0; r == 0 && q < s->n_queue; q++)
		r = place_one(s, c, q);
	if (r == 0 && (r = flush(s, c)) == 0)
		r = summarize(s, c, &c->summary);
	/* the generation goes now: the other column may still be running */
	c->gen = rf_cluster_unref(c->gen);
	c->rc = r;
	return NULL;
}

/* The report's placements: per queued pod, what each column did with it. */
static json_t *
placements(const struct sim *s, const struct column *cols)
{
	json_t *out = json_array();
	for (size_t q = 0; out && q < s->n_queue; q++) {
		const json_t *md =
			json_object_get(json_array_get(s->objs.pods, s->queue_idx[q]), "metadata");
		const char *ns = rf_jstr(md, "namespace");
		if (json_array_append_new(
			    out, json_pack("{s:s++, s:O, s:O}", "pod", ns ? ns : "default", "/",
					   rf_jstr(md, "name"), cols[0].name,
					   json_array_get(cols[0].entries, q), cols[1].name,
					   json_array_get(cols[1].entries, q))) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

int
rf_simulate(const struct rf_cluster_objects *objs, json_t *queue, const struct rf_config *cfg,
	    struct rf_cel_cache *cel, const struct rf_sim_options *o, json_t **ret, char *err,
	    size_t errlen)
{
	struct sim s = { .cfg = cfg, .cel = cel, .o = o, .err = err, .errlen = errlen };
	struct column cols[2] = { { .name = "kube-scheduler", .sim = &s },
				  { .name = "railfit", .railfit = true, .sim = &s } };
	pthread_t thread;
	bool threaded = false;
	int r;
	*ret = NULL;
	if ((r = prepare(&s, objs, queue)) < 0)
		goto out;
	/* the columns share nothing but the objects they start from, which nobody changes (their
	 * reference counts are atomic; clean under TSan with the jansson suppressions the live
	 * server needs as well) */
	if (o->threads > 1)
		threaded = pthread_create(&thread, NULL, run_column, &cols[1]) == 0;
	run_column(&cols[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		run_column(&cols[1]);
	if ((r = cols[0].rc) < 0 || (r = cols[1].rc) < 0)
		goto out;
	char approx[512];
	snprintf(
		approx, sizeof(approx),
		"kube-scheduler is approximated: its filters (node Ready, CPU/memory requests, "
		"claims allocatable) on at most %s feasible nodes per pod (round robin), score = "
		"LeastAllocated over CPU, memory and GPUs, ties at random; with railfit, its filter "
		"on those nodes and its score x%u (extender weight %u)",
		o->pct_nodes_to_score ? "percentageOfNodesToScore" : "numFeasibleNodesToFind",
		o->extender_weight * 10, o->extender_weight);
	*ret = json_pack("{s:I, s:I, s:I, s:I, s:s, s:I, s:[O, O], s:o?}", "nodes",
			 (json_int_t)json_array_size(objs->nodes), "pods", (json_int_t)s.n_queue,
			 "seed", (json_int_t)o->seed, "feasibleNodesToFind",
			 (json_int_t)rf_sim_feasible_nodes_to_find(o->pct_nodes_to_score,
								   json_array_size(objs->nodes)),
			 "approximation", approx, "extenderWeight", (json_int_t)o->extender_weight,
			 "columns", cols[0].summary, cols[1].summary, "placements",
			 placements(&s, cols));
	r = *ret && json_array_size(json_object_get(*ret, "placements")) == s.n_queue ? 0 : -ENOMEM;
	if (r < 0) {
		json_decref(*ret);
		*ret = NULL;
	}
out:
	column_release(&cols[0]);
	column_release(&cols[1]);
	json_decref(s.objs.pods);
	json_decref(s.objs.claims);
	json_decref(s.claim_idx);
	free(s.queue_idx);
	free(s.q_cpu);
	free(s.q_mem);
	return r;
}
