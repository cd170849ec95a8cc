/* Filter and score of one node for one pod (see evaluate.h, DESIGN section 7): the decision
 * pipeline. evaluate() below reads top to bottom; its steps follow it in the same order. */
#include "alloc/evaluate.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/evaluate-private.h"
#include "alloc/rail_target.h"
#include "config/grow.h"

const char *
rf_verdict_name(enum rf_verdict v)
{
	switch (v) {
	case RF_VERDICT_PASS:
		return "pass";
	case RF_VERDICT_FAIL:
		return "fail";
	case RF_VERDICT_UNRESOLVABLE:
		return "unresolvable";
	}
	return "?";
}

const char *
rf_part_name(enum rf_part p)
{
	static const char *const names[] = { "alignment", "bandwidth", "rail", "packing",
					     "gpu",       "locality",  "cpu" };
	_Static_assert(sizeof(names) / sizeof(names[0]) == RF_PART_COUNT, "a name per part");
	return p < RF_PART_COUNT ? names[p] : "?";
}

double
rf_part_weight(const struct rf_config *cfg, enum rf_part p)
{
	switch (p) {
	case RF_PART_ALIGNMENT:
		return cfg->scoring.w_alignment;
	case RF_PART_BANDWIDTH:
		return cfg->scoring.w_bandwidth;
	case RF_PART_RAIL:
		return cfg->scoring.w_rail;
	case RF_PART_PACKING:
		return cfg->scoring.w_packing;
	case RF_PART_GPU:
		return cfg->scoring.w_gpu;
	case RF_PART_LOCALITY:
		return cfg->scoring.w_locality;
	case RF_PART_CPU:
		return cfg->scoring.w_cpu;
	case RF_PART_COUNT:
		break;
	}
	return 0;
}

const char *
rf_place_name(enum rf_place p)
{
	switch (p) {
	case RF_PLACE_BLOCK:
		return "same-block";
	case RF_PLACE_SPINE:
		return "same-spine";
	case RF_PLACE_ELSEWHERE:
		return "elsewhere";
	case RF_PLACE_UNLABELLED:
		return "unlabelled";
	case RF_PLACE_NONE:
		break;
	}
	return "none";
}

static bool
place_has(const char *const *arr, size_t n, const char *v)
{
	for (size_t i = 0; v && i < n; i++)
		if (strcmp(arr[i], v) == 0)
			return true;
	return false;
}

enum rf_place
rf_demand_place(const struct rf_demand *d, const struct rf_node *n)
{
	const struct rf_group_places *g = &d->places;
	if (!n || (!g->n_blocks && !g->n_spines))
		return RF_PLACE_NONE;
	if (!n->block && !n->spine)
		return RF_PLACE_UNLABELLED;
	if (place_has(g->blocks, g->n_blocks, n->block))
		return RF_PLACE_BLOCK;
	if (place_has(g->spines, g->n_spines, n->spine))
		return RF_PLACE_SPINE;
	return RF_PLACE_ELSEWHERE;
}

/* Points of a level (scoring.levels; NVL has its own key). */
static double
level_points(const struct rf_config *cfg, enum rf_level l)
{
	if (l == RF_LEVEL_NVL)
		return cfg->scoring.level_nvl;
	if ((int)l < 0 || (int)l >= RF_LEVEL_COUNT)
		l = RF_LEVEL_UNKNOWN;
	return cfg->scoring.levels[l];
}

bool
rf_eval_is_whole_gpu(const struct rf_device *d)
{
	return d->kind == RF_DEV_GPU && !d->partition;
}

bool
rf_assignment_gpu_alignment(const struct rf_node *n, const struct rf_config *cfg,
			    const struct rf_assignment *a, enum rf_level *ret_worst,
			    double *ret_points, enum rf_level_source *ret_src)
{
	enum rf_level worst = RF_LEVEL_NVL;
	enum rf_level_source src = RF_SRC_DRA;
	double sum = 0;
	size_t pairs = 0, known = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *g = a->picks[i].dev;
		if (!rf_eval_is_whole_gpu(g))
			continue;
		for (size_t j = i + 1; j < a->n; j++) {
			const struct rf_device *h = a->picks[j].dev;
			enum rf_level_source s;
			if (!rf_eval_is_whole_gpu(h) || h == g)
				continue;
			enum rf_level l = rf_node_gpu_level(n, g, h, &s, NULL);
			pairs++;
			known += l != RF_LEVEL_UNKNOWN;
			sum += level_points(cfg, l);
			if (!rf_level_at_least(l, worst))
				worst = l;
			if (s == RF_SRC_ANNOTATION)
				src = s;
		}
	}
	if (!known)
		return false;
	if (ret_worst)
		*ret_worst = worst;
	if (ret_points)
		*ret_points = sum / (double)pairs;
	if (ret_src)
		*ret_src = src;
	return true;
}

void
rf_eval_reason(struct rf_node_eval *e, const char *fmt, ...)
{
	if (e->n_reasons >= RF_MAX_REASONS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->reasons[e->n_reasons], RF_REASON_LEN, fmt, ap);
	va_end(ap);
	rf_utf8_trim(e->reasons[e->n_reasons++]);
}

/* A failing reason goes first: the first reason is the filter message. */
void
rf_eval_fail(struct rf_node_eval *e, enum rf_verdict v, const char *fmt, ...)
{
	char msg[RF_REASON_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rf_utf8_trim(msg);
	if (e->verdict == RF_VERDICT_PASS) {
		/* make room at the front */
		size_t n = e->n_reasons < RF_MAX_REASONS ? e->n_reasons : RF_MAX_REASONS - 1;
		memmove(e->reasons[1], e->reasons[0], n * RF_REASON_LEN);
		snprintf(e->reasons[0], RF_REASON_LEN, "%s", msg);
		e->n_reasons = n + 1;
	} else {
		rf_eval_reason(e, "%s", msg);
	}
	if (v > e->verdict)
		e->verdict = v;
}

bool
rf_assignment_alignment(const struct rf_node *n, const struct rf_config *cfg,
			const struct rf_assignment *a, enum rf_level *ret_worst, double *ret_points)
{
	enum rf_level worst = RF_LEVEL_PIX;
	double sum = 0;
	size_t gpus = 0, nics = 0;
	for (size_t i = 0; i < a->n; i++)
		nics += a->picks[i].dev->kind == RF_DEV_NIC;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *g = a->picks[i].dev;
		if (g->kind != RF_DEV_GPU)
			continue;
		enum rf_level best = RF_LEVEL_UNKNOWN;
		for (size_t j = 0; j < a->n; j++) {
			const struct rf_device *nic = a->picks[j].dev;
			if (nic->kind != RF_DEV_NIC)
				continue;
			enum rf_level l = rf_node_level(n, g, nic, NULL);
			if (l < best)
				best = l;
		}
		gpus++;
		sum += cfg->scoring.levels[best];
		if (best > worst)
			worst = best;
	}
	if (!gpus || !nics)
		return false;
	if (ret_worst)
		*ret_worst = worst;
	if (ret_points)
		*ret_points = sum / (double)gpus;
	return true;
}

/* ---- the pipeline: one node, top to bottom ----
 *
 * demand -> node state -> predict (the allocator mirror, worst outcome over the scan orders) ->
 * score parts of the predicted devices (measuring headroom and alignment) -> verdict (claims
 * allocatable, headroom, min-alignment). Each step is a small function below, in this order, but
 * for the judges beyond the NIC (min-gpu-alignment, DRA CPUs: evaluate-beyond-nic.c); the
 * pipeline's state is struct pipeline (evaluate-private.h). The order of the reasons is the
 * contract with explain and the filter message (the first failing reason is the message). */

static bool demand_concerns_node(const struct rf_demand *d, struct rf_node_eval *e);
static bool node_state(const struct rf_demand *d, const char *node_name, struct rf_node_eval *e);
static int predict(struct pipeline *p);
static void score_parts(const struct pipeline *p, const struct rf_assignment *a,
			struct rf_node_eval *e);
static void judge_headroom(const struct pipeline *p);
static int judge_alignment(struct pipeline *p);
static void judge_spread(struct pipeline *p);

static int
evaluate(const struct rf_cluster *c, const struct rf_demand *d, const char *node_name, bool explain,
	 const struct rf_release *rel, struct rf_eval_work *work, struct rf_node_eval *e)
{
	memset(e, 0, offsetof(struct rf_node_eval, reasons));
	e->predicted.n = 0;
	e->best.n = 0;
	e->explain = explain;
	snprintf(e->node_name, sizeof(e->node_name), "%s", node_name);
	e->predicted_level = RF_LEVEL_UNKNOWN;
	e->best_level = RF_LEVEL_UNKNOWN;
	e->deterministic = true;
	e->node = rf_cluster_node(c, node_name);
	e->gpu_level = RF_LEVEL_UNKNOWN;

	if (!demand_concerns_node(d, e) || !node_state(d, node_name, e))
		return 0;

	/* not zero-initialised: the pinned assignment is large and predict() fills what it uses */
	struct pipeline p;
	p.c = c;
	p.cfg = rf_cluster_config(c);
	p.d = d;
	p.n = e->node;
	p.rel = rel;
	p.work = work;
	p.worst_level = RF_LEVEL_PIX;
	p.worst_gpu_level = RF_LEVEL_NVL;
	p.e = e;
	size_t n_claims = 0;
	for (size_t i = 0; i < d->n_claims; i++) {
		const struct rf_claim *cl = rf_demand_node_claim(d, i, e->node);
		if (cl) {
			p.classes[n_claims] = rf_demand_classes(d, cl);
			p.claims[n_claims++] = cl;
		}
	}
	p.sr = (struct rf_search_request){ .cluster = c,
					   .node = e->node,
					   .claims = p.claims,
					   .n_claims = n_claims,
					   .classes = p.classes,
					   .pinned = &p.pinned,
					   .release = rel };
	int r = predict(&p);
	if (r < 0 || !e->has_predicted)
		return r;
	score_parts(&p, &e->predicted, e);
	judge_headroom(&p);
	judge_spread(&p);
	if ((r = judge_alignment(&p)) < 0 || (r = rf_judge_gpu_alignment(&p)) < 0)
		return r;
	return rf_judge_cpu_alignment(&p);
}

/* ---- 1. demand: does the pod ask railfit anything? ---- */

static bool
demand_concerns_node(const struct rf_demand *d, struct rf_node_eval *e)
{
	if (d->kind == RF_DEMAND_NONE) {
		rf_eval_reason(e,
			       "the pod asks for no devices or bandwidth: not railfit's business");
		return false;
	}
	if (d->kind == RF_DEMAND_UNKNOWN) {
		rf_eval_reason(
			e, "demand unknown (%s): railfit passes every node and scores all equally",
			d->unknown_reason);
		return false;
	}
	return true;
}

/* ---- 2. node state: claims bound elsewhere, the node in the cache ---- */

/* Node a pinned claim is bound to: its nodeSelector, else the node of its devices' pools. */
static const char *
pinned_node(const struct rf_claim *cl)
{
	if (cl->alloc_node)
		return cl->alloc_node;
	for (size_t r = 0; r < cl->n_results; r++)
		if (cl->results[r].dev && cl->results[r].dev->pool->node)
			return cl->results[r].dev->pool->node;
	return NULL;
}

static bool
node_state(const struct rf_demand *d, const char *node_name, struct rf_node_eval *e)
{
	for (size_t i = 0; i < d->n_pinned; i++) {
		const char *pn = pinned_node(d->pinned[i]);
		if (pn && strcmp(pn, node_name) != 0) {
			rf_eval_fail(e, RF_VERDICT_UNRESOLVABLE,
				     "claim %s/%s is already allocated on node %s",
				     d->pinned[i]->ns, d->pinned[i]->name, pn);
			return false;
		}
	}
	if (!e->node) {
		rf_eval_fail(e, RF_VERDICT_FAIL, "node %s is not in railfit's cache (yet)",
			     node_name);
		return false;
	}
	if (d->bad_annotation[0])
		rf_eval_reason(e, "%s", d->bad_annotation);
	return true;
}

/* ---- 3. predict: the allocator mirror on the node's state ---- */

static void
pinned_assignment(const struct rf_demand *d, struct rf_assignment *a)
{
	a->n = 0;
	for (size_t i = 0; i < d->n_pinned; i++) {
		const struct rf_claim *cl = d->pinned[i];
		for (size_t r = 0; r < cl->n_results && a->n < RF_MAX_PICKS; r++) {
			const struct rf_alloc_result *ar = &cl->results[r];
			if (!ar->dev || ar->admin_access)
				continue;
			a->picks[a->n++] = (struct rf_pick){
				.claim = cl, .request = ar->request, .dev = ar->dev, .pinned = true
			};
		}
	}
}

static int judge_infeasible(struct pipeline *p);

/* A search that gave no answer: the node is passed and the reason says why. */
static void
search_error(const struct rf_search_result *res, struct rf_node_eval *e)
{
	switch (res->status) {
	case RF_SEARCH_CEL_ERROR:
		e->cel_error = true;
		rf_eval_reason(
			e,
			"selector error: %s; kube-scheduler's DRA plugin fails the pod's whole "
			"scheduling attempt on this (guard the lookup with has()); railfit passes the "
			"node",
			res->error);
		break;
	case RF_SEARCH_POOL_ERROR:
		rf_eval_reason(e, "allocator error: %s; railfit passes the node", res->error);
		break;
	case RF_SEARCH_SCHEDULER_CRASH:
		/* kube-scheduler never places the pod: railfit predicts no placement either */
		e->scheduler_crash = true;
		rf_eval_fail(e, RF_VERDICT_FAIL,
			     "warning: %s; fix: upgrade to 1.36.2 or drop allocationMode All",
			     res->error);
		break;
	case RF_SEARCH_BUDGET:
	case RF_SEARCH_TOO_MANY:
		rf_eval_reason(e, "railfit's bounded search gave up (%s); the node is not judged",
			       rf_search_status_name(res->status));
		break;
	case RF_SEARCH_FOUND:
	case RF_SEARCH_INFEASIBLE:
		break;
	}
}

/* The outcome with the lowest score: what railfit scores when the pick is not deterministic. */
static int
worst_outcome(const struct pipeline *p, const struct rf_search_result *res, size_t *ret)
{
	size_t worst = 0;
	if (res->n_outcomes > 1) {
		struct rf_node_eval *tmp = malloc(sizeof(*tmp));
		int worst_score = 11;
		if (!tmp)
			return -ENOMEM;
		for (size_t i = 0; i < res->n_outcomes; i++) {
			tmp->verdict = RF_VERDICT_PASS;
			tmp->n_reasons = 0;
			tmp->explain = false;
			score_parts(p, &res->outcomes[i], tmp);
			if (tmp->score < worst_score) {
				worst_score = tmp->score;
				worst = i;
			}
		}
		free(tmp);
	}
	*ret = worst;
	return 0;
}

/* Explain: the node's devices a DeviceTaintRule taints, with the rule (the search treats them as
 * slice taints; this says where a taint came from). At most 4. */
static void
note_rule_taints(const struct pipeline *p)
{
	size_t shown = 0;
	if (!p->e->explain)
		return;
	for (size_t i = 0; i < p->n->n_devices && shown < 4; i++) {
		const struct rf_device *d = p->n->devices[i];
		size_t n;
		const struct rf_taint *taints = rf_device_taints(p->c, d, &n);
		for (size_t t = 0; t < n && shown < 4; t++) {
			const struct rf_taint *tt = &taints[t];
			if (!tt->rule)
				continue;
			note(p->e, "device %s carries taint %s%s%s:%s from DeviceTaintRule %s",
			     d->name, tt->key, tt->value ? "=" : "", tt->value ? tt->value : "",
			     tt->effect, tt->rule);
			shown++;
		}
	}
}

/* Fills e->predicted (has_predicted) when the search found a solution; otherwise the verdict or
 * the reason is already set. */
static int
predict(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	struct rf_search_result *res = NULL;
	size_t worst;
	int r = 0;

	pinned_assignment(d, &p->pinned);
	if (p->sr.n_claims == 0) {
		e->status = RF_SEARCH_FOUND;
		e->has_predicted = true;
		rf_assignment_copy(&e->predicted, &p->pinned);
		e->deterministic = true;
		e->orders_exhaustive = true;
		if (d->n_pinned)
			note(e, "claims already allocated on this node: devices are fixed");
		return 0;
	}

	note_rule_taints(p);
	res = p->work ? &p->work->res : malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	if ((r = rf_predict(&p->sr, res)) < 0)
		goto out;
	e->status = res->status;
	e->n_orders = res->n_orders;
	e->orders_exhaustive = res->orders_exhaustive;
	if (res->status == RF_SEARCH_INFEASIBLE) {
		r = judge_infeasible(p);
		goto out;
	}
	if (res->status != RF_SEARCH_FOUND) {
		search_error(res, e);
		goto out;
	}

	e->n_outcomes = res->n_outcomes;
	e->deterministic = res->n_outcomes <= 1 && res->orders_exhaustive;
	if ((r = worst_outcome(p, res, &worst)) < 0)
		goto out;
	/* min-alignment is judged on the worst level any scan order gives */
	for (size_t i = 0; i < res->n_outcomes; i++) {
		enum rf_level l;
		if (rf_assignment_alignment(p->n, p->cfg, &res->outcomes[i], &l, NULL) &&
		    l > p->worst_level)
			p->worst_level = l;
		if (p->d->has_min_gpu_alignment &&
		    rf_assignment_gpu_alignment(p->n, p->cfg, &res->outcomes[i], &l, NULL, NULL) &&
		    !rf_level_at_least(l, p->worst_gpu_level))
			p->worst_gpu_level = l;
	}
	rf_assignment_copy(&e->predicted, &res->outcomes[worst]);
	e->has_predicted = true;
	if (res->n_outcomes > 1)
		note(e,
		     "the allocator's pick is not deterministic here (%zu outcomes over %u scan "
		     "orders of pools/slices): scored the worst",
		     res->n_outcomes, res->n_orders);
	else if (!res->orders_exhaustive)
		note(e,
		     "the allocator visits pools/slices in random order; railfit tried %u of the "
		     "orders and saw one outcome",
		     res->n_orders);
out:
	if (!p->work)
		free(res);
	return r;
}

/* ---- 4. score parts: each in [0,1], left out of the mean when it does not apply; they measure
 * the headroom and the alignment the verdict then judges ---- */

static double
clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

static double
fraction(struct rf_quantity part, struct rf_quantity whole)
{
	double w = rf_quantity_to_double(whole);
	return w > 0 ? rf_quantity_to_double(part) / w : 0;
}

static void
part_alignment(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	enum rf_level worst;
	double pts;
	e->alignment_applies = rf_assignment_alignment(p->n, p->cfg, a, &worst, &pts);
	e->predicted_level = e->alignment_applies ? worst : RF_LEVEL_UNKNOWN;
	if (e->alignment_applies) {
		e->parts[RF_PART_ALIGNMENT] = pts;
		e->part_applies[RF_PART_ALIGNMENT] = true;
	}
}

static bool
victim_holds(const struct rf_cluster *c, const struct rf_pod *p, const struct rf_device *dev)
{
	for (size_t e = 0; e < p->n_claim_names; e++) {
		const struct rf_claim *cl = rf_cluster_claim(c, p->ns, p->claim_names[e]);
		for (size_t r = 0; cl && r < cl->n_results; r++)
			if (cl->results[r].dev == dev && !cl->results[r].admin_access)
				return true;
	}
	return false;
}

/* Bandwidth a NIC would carry once the release set's pods are gone. */
static struct rf_quantity
nic_used(const struct rf_cluster *c, const struct rf_device *dev, const struct rf_release *rel)
{
	struct rf_quantity used = rf_device_bw_used(c, dev);
	for (size_t i = 0; rel && i < rel->n_pods; i++)
		if (rel->pods[i]->has_nic_bw && victim_holds(c, rel->pods[i], dev))
			used = rf_quantity_sub(used, rel->pods[i]->nic_bw);
	for (size_t i = 0; rel && dev->bandwidth && i < rel->n_claims; i++)
		used = rf_quantity_sub(used,
				       rf_claim_consumed(rel->claims[i], dev, dev->bandwidth));
	return used;
}

/* The front-end NIC's two directions, with what the release set's pods stop using. */
struct fe_dir {
	bool has;
	struct rf_quantity ask, used;
	const char *name;
};

static void
frontend_dirs(const struct rf_demand *d, const struct rf_node_eval *e, struct fe_dir ret[2])
{
	ret[0] = (struct fe_dir){ d->has_egress, d->egress, e->fe_egress_used, "egress" };
	ret[1] = (struct fe_dir){ d->has_ingress, d->ingress, e->fe_ingress_used, "ingress" };
}

static struct rf_quantity
fe_free_after(const struct rf_node_eval *e, const struct fe_dir *dir)
{
	return rf_quantity_sub(rf_quantity_sub(e->fe_capacity, dir->used), dir->ask);
}

/* Headroom of every NIC of the assignment and of the front-end NIC, after placement. */
static void
measure_headroom(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	const struct rf_demand *d = p->d;
	const struct rf_node *n = p->n;
	const struct rf_release *rel = p->rel;
	e->n_nics = 0;
	for (size_t i = 0; i < a->n && e->n_nics < RF_MAX_NICS; i++) {
		const struct rf_pick *pk = &a->picks[i];
		if (pk->dev->kind != RF_DEV_NIC)
			continue;
		struct rf_nic_headroom *h = &e->nics[e->n_nics++];
		h->dev = pk->dev;
		h->capacity = rf_device_bw_capacity(pk->dev, p->cfg, &h->capacity_source);
		h->used = nic_used(p->c, pk->dev, rel);
		h->asked = pk->has_bw      ? pk->bw
			   : d->has_nic_bw ? d->nic_bw
					   : rf_quantity_from_int(0);
		if (pk->pinned)
			h->asked = d->has_nic_bw ? d->nic_bw : rf_quantity_from_int(0);
		h->free_after = rf_quantity_sub(rf_quantity_sub(h->capacity, h->used), h->asked);
	}
	e->fe_applies = d->has_egress || d->has_ingress;
	if (!e->fe_applies)
		return;
	e->fe_capacity = n->fe_capacity;
	e->fe_egress_used = rf_node_use(p->c, n)->fe_egress_used;
	e->fe_ingress_used = rf_node_use(p->c, n)->fe_ingress_used;
	e->fe_source = n->fe_source;
	for (size_t i = 0; rel && i < rel->n_pods; i++) {
		const struct rf_pod *v = rel->pods[i];
		if (!v->node_name || strcmp(v->node_name, n->name) != 0)
			continue;
		if (v->has_egress)
			e->fe_egress_used = rf_quantity_sub(e->fe_egress_used, v->egress);
		if (v->has_ingress)
			e->fe_ingress_used = rf_quantity_sub(e->fe_ingress_used, v->ingress);
	}
}

/* The minimum free fraction over the predicted NICs and the front-end directions asked. */
static void
part_bandwidth(const struct pipeline *p, struct rf_node_eval *e)
{
	const struct rf_demand *d = p->d;
	double min_frac = 2;
	for (size_t i = 0; i < e->n_nics; i++) {
		double f = fraction(e->nics[i].free_after, e->nics[i].capacity);
		if (f < min_frac)
			min_frac = f;
	}
	if (e->fe_applies) {
		struct fe_dir dirs[2];
		frontend_dirs(d, e, dirs);
		for (int k = 0; k < 2; k++) {
			double f = dirs[k].has
					   ? fraction(fe_free_after(e, &dirs[k]), e->fe_capacity)
					   : 2;
			if (f < min_frac)
				min_frac = f;
		}
	}
	/* bandwidth only ranks nodes when something consumes it: the pod declares bandwidth, or a
	 * predicted NIC already carries traffic; otherwise it would be 1.0 everywhere and only
	 * dilute the other parts */
	bool bw_matters = d->has_nic_bw || e->fe_applies;
	for (size_t i = 0; i < e->n_nics && !bw_matters; i++)
		bw_matters = !rf_quantity_is_zero(e->nics[i].used) ||
			     !rf_quantity_is_zero(e->nics[i].asked);
	if (bw_matters && min_frac <= 1.5) {
		min_frac = clamp01(min_frac);
		e->parts[RF_PART_BANDWIDTH] =
			p->cfg->scoring.bandwidth_policy == RF_BW_BINPACK ? 1 - min_frac : min_frac;
		e->part_applies[RF_PART_BANDWIDTH] = true;
	}
}

/* k >= 2 rails of a pod: the share of them inside one aligned block of the node's rails (b = k
 * rounded up to a power of two, rails j*b .. j*b+b-1). Those are the sets DRA's first fit gives on
 * an empty node and on a node whose other blocks hold pods of the same size, so the group's next
 * pods can get the same rails; an arbitrary free subset of a partly used node ({2,3,6,7}) is rarely
 * free anywhere else. Pods with one rail: any rail is a block. */
static bool
block_fit(uint64_t rails, double *ret)
{
	unsigned k = (unsigned)__builtin_popcountll(rails), b = 1, best = 0;
	if (k < 2)
		return false;
	while (b < k)
		b <<= 1;
	const uint64_t block = b >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << b) - 1;
	for (unsigned j = 0; j < 64; j += b) {
		unsigned in = (unsigned)__builtin_popcountll(rails & (block << j));
		if (in > best)
			best = in;
	}
	*ret = (double)best / (double)k;
	return true;
}

/* Share of the assignment's rails in the rail set the pod's group uses on (most of) its other
 * nodes; neutral while the group has none (DESIGN section 7.4: the group's first pod is the
 * packing part's business). */
static void
part_rail(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	const struct rf_demand *d = p->d;
	uint64_t mine = 0;
	e->group_rails = d->group[0] ? rf_rail_target_for(&d->rail_target, p->c, p->n) : 0;
	if (!d->group[0])
		return;
	size_t rails = 0, same = 0;
	for (size_t i = 0; i < a->n; i++) {
		int r = a->picks[i].dev->kind == RF_DEV_NIC ? a->picks[i].dev->rail : -1;
		if (r < 0)
			continue;
		rails++;
		same += (e->group_rails >> r) & 1;
		if (r < 64)
			mine |= UINT64_C(1) << r;
	}
	if (rails && e->group_rails) {
		double fit;
		e->parts[RF_PART_RAIL] = (double)same / (double)rails;
		e->part_applies[RF_PART_RAIL] = true;
		/* the group's nodes hold more rails than the pod gets (two of its pods share a
		 * node): every subset matches as well; an aligned block is what a sibling can
		 * take next to it, completing the node's set */
		if ((unsigned)__builtin_popcountll(e->group_rails) > rails &&
		    block_fit(mine, &fit)) {
			e->parts[RF_PART_RAIL] *= fit;
			e->rail_block = true;
			note(e,
			     "rails: group %s holds more rails per node than the pod gets; %.0f%% of "
			     "its %zu rails in one aligned block",
			     d->group, fit * 100, rails);
		}
	}
}

/* GPU to GPU, for pods that get two GPUs or more: the mean points over the pairs. */
static void
part_gpu(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	double pts;
	e->n_gpus = 0;
	for (size_t i = 0; i < a->n; i++)
		e->n_gpus += rf_eval_is_whole_gpu(a->picks[i].dev);
	e->gpu_applies =
		rf_assignment_gpu_alignment(p->n, p->cfg, a, &e->gpu_level, &pts, &e->gpu_source);
	if (!e->gpu_applies) {
		e->gpu_level = RF_LEVEL_UNKNOWN;
		return;
	}
	e->parts[RF_PART_GPU] = pts;
	e->part_applies[RF_PART_GPU] = true;
}

/* The node's block/spine against those where the pod's group runs. */
static void
part_locality(const struct pipeline *p, struct rf_node_eval *e)
{
	static const double points[] = { [RF_PLACE_BLOCK] = 1.0,
					 [RF_PLACE_SPINE] = 0.5,
					 [RF_PLACE_ELSEWHERE] = 0,
					 [RF_PLACE_UNLABELLED] = 0 };
	e->place = rf_demand_place(p->d, p->n);
	if (e->place == RF_PLACE_NONE)
		return;
	e->parts[RF_PART_LOCALITY] = points[e->place];
	e->part_applies[RF_PART_LOCALITY] = true;
}

/* A device's NUMA node: its DRA attributes, else the node's hwloc annotation; -1 unknown. */
static int
device_numa(const struct rf_node *n, const struct rf_device *d)
{
	if (d->loc.numa >= 0)
		return d->loc.numa;
	int i = n && n->topo && d->pci[0] ? rf_topo_annotation_find(n->topo, d->pci) : -1;
	return i >= 0 ? rf_topo_annotation_numa(n->topo, (size_t)i) : -1;
}

/* CPUs of an assignment against the NUMA nodes of its GPUs (else NICs). False when it has no
 * CPU device with a known NUMA node or no accelerator with one. */
bool
rf_eval_cpu_alignment(const struct rf_node *n, const struct rf_assignment *a, unsigned *ret_cpus,
		      unsigned *ret_known, unsigned *ret_aligned, uint64_t *ret_mask)
{
	uint64_t gpus = 0, nics = 0, mask;
	unsigned cpus = 0, known = 0, aligned = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *d = a->picks[i].dev;
		int numa = d->kind == RF_DEV_GPU || d->kind == RF_DEV_NIC ? device_numa(n, d) : -1;
		if (numa < 0 || numa > 63)
			continue;
		if (d->kind == RF_DEV_GPU)
			gpus |= UINT64_C(1) << numa;
		else
			nics |= UINT64_C(1) << numa;
	}
	mask = gpus ? gpus : nics;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *d = a->picks[i].dev;
		if (d->kind != RF_DEV_CPU)
			continue;
		cpus++;
		if (d->loc.numa < 0 || d->loc.numa > 63)
			continue;
		known++;
		aligned += (mask >> d->loc.numa) & 1;
	}
	if (ret_cpus)
		*ret_cpus = cpus;
	if (ret_known)
		*ret_known = known;
	if (ret_aligned)
		*ret_aligned = aligned;
	if (ret_mask)
		*ret_mask = mask;
	return known && mask;
}

bool
rf_assignment_cpu_alignment(const struct rf_node *n, const struct rf_assignment *a,
			    unsigned *ret_cpus, unsigned *ret_known, unsigned *ret_aligned)
{
	return rf_eval_cpu_alignment(n, a, ret_cpus, ret_known, ret_aligned, NULL);
}

/* The share of the pod's DRA CPUs on its GPUs' NUMA node. */
static void
part_cpu(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	e->cpu_applies = rf_eval_cpu_alignment(p->n, a, &e->n_cpus, &e->n_cpus_known,
					       &e->n_cpus_aligned, &e->accel_numa);
	if (!e->cpu_applies)
		return;
	e->parts[RF_PART_CPU] = (double)e->n_cpus_aligned / (double)e->n_cpus_known;
	e->part_applies[RF_PART_CPU] = true;
}

/* Prefer nodes already in use, so that whole aligned sets stay free for big jobs; the first pod
 * of a rail group with 2+ rails also by how well its rails fit one aligned block (block_fit()):
 * the rails it takes are the ones its siblings will be asked to match. */
static void
part_packing(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	const struct rf_node *n = p->n;
	size_t new_gpus = 0, new_nics = 0, rails = 0;
	uint64_t mine = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_device *dv = a->picks[i].dev;
		if (dv->kind == RF_DEV_NIC && dv->rail >= 0 && dv->rail < 64) {
			mine |= UINT64_C(1) << dv->rail;
			rails++;
		}
		if (a->picks[i].pinned || dv->allow_multiple)
			continue;
		new_gpus += dv->kind == RF_DEV_GPU;
		new_nics += dv->kind == RF_DEV_NIC;
	}
	if (new_gpus && n->n_gpus) {
		e->parts[RF_PART_PACKING] =
			clamp01((double)(n->n_gpus - rf_node_use(p->c, n)->n_gpus_free + new_gpus) /
				n->n_gpus);
		e->part_applies[RF_PART_PACKING] = true;
	} else if (new_nics && n->n_nics) {
		e->parts[RF_PART_PACKING] =
			clamp01((double)(n->n_nics - rf_node_use(p->c, n)->n_nics_free + new_nics) /
				n->n_nics);
		e->part_applies[RF_PART_PACKING] = true;
	}
	double fit;
	if (e->part_applies[RF_PART_PACKING] && p->d->group[0] && !e->group_rails &&
	    block_fit(mine, &fit)) {
		e->parts[RF_PART_PACKING] *= fit;
		e->rail_block = true;
		note(e,
		     "packing: the first pod of group %s with rails; %.0f%% of its %zu rails in one "
		     "aligned block (the sets the group's next pods can get too)",
		     p->d->group, fit * 100, rails);
	}
}

/* 0..10 = round(10 x weighted mean of the parts that apply) */
static void
weighted_score(const struct rf_config *cfg, struct rf_node_eval *e)
{
	double num = 0, den = 0;
	for (int i = 0; i < RF_PART_COUNT; i++)
		if (e->part_applies[i]) {
			double w = rf_part_weight(cfg, (enum rf_part)i);
			num += w * e->parts[i];
			den += w;
		}
	e->score = den > 0 ? (int)lround(10.0 * num / den) : 0;
	if (e->score < 0)
		e->score = 0;
	if (e->score > 10)
		e->score = 10;
}

/* Every part and the score of one assignment; headroom is measured here for judge_headroom. */
static void
score_parts(const struct pipeline *p, const struct rf_assignment *a, struct rf_node_eval *e)
{
	for (int i = 0; i < RF_PART_COUNT; i++) {
		e->parts[i] = 0;
		e->part_applies[i] = false;
	}
	e->rail_block = false;
	part_alignment(p, a, e);
	measure_headroom(p, a, e);
	part_bandwidth(p, e);
	part_rail(p, a, e);
	part_packing(p, a, e);
	part_gpu(p, a, e);
	part_locality(p, e);
	part_cpu(p, a, e);
	weighted_score(p->cfg, e);
}

/* ---- 5. verdict: claims allocatable (judge_infeasible, from predict), headroom, alignment ---- */

static const char *
fmt_q(struct rf_quantity q, char buf[RF_QUANTITY_FMT_MAX])
{
	return rf_quantity_format(q, buf);
}

/* "gpu-1 + pci-0000-18-00-0" */
static void
describe_devices(const struct rf_assignment *a, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < a->n && off < len; i++) {
		if (a->picks[i].dev->kind == RF_DEV_OTHER)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " + " : "",
					a->picks[i].dev->name);
	}
	if (!buf[0])
		snprintf(buf, len, "(no GPU or NIC)");
}

/* One request's line of the infeasible message, from the search's rejection record. */
static size_t
describe_request(const struct rf_request_rejects *rj, bool first, char *buf, size_t len)
{
	const struct rf_request_alt *alt = rj->alt;
	size_t match = 0, nfree, shown = 0, noff = 0;
	size_t skipped = rj->by[RF_REJECT_POOL], tainted = rj->by[RF_REJECT_TAINT];
	char names[160] = "", extra[320] = "", cnt[24];
	const char *count_txt = "all";

	for (int k = 0; k < RF_REJECT_COUNT; k++)
		match += k == RF_REJECT_SELECTOR ? 0 : rj->by[k];
	/* "free": matching, unused, searched and tolerated (capacity and counters are not shown) */
	nfree = rj->by[RF_REJECT_NONE] + rj->by[RF_REJECT_CAPACITY] + rj->by[RF_REJECT_COUNTERS];
	for (size_t i = 0; i < rj->n_named && shown < 4 && noff < sizeof(names); i++, shown++)
		noff += (size_t)snprintf(names + noff, sizeof(names) - noff, "%s%s",
					 shown ? " " : "", rj->named[i]->name);
	if (!alt->all) {
		snprintf(cnt, sizeof(cnt), "%lld", (long long)alt->count);
		count_txt = cnt;
	}
	if (skipped || tainted) {
		size_t eo = (size_t)snprintf(
			extra, sizeof(extra),
			" (%zu more in pools the allocator skips, %zu with an untolerated taint)",
			skipped, tainted);
		/* which taint, and where it comes from: the slice or a DeviceTaintRule */
		if (rj->taint && eo < sizeof(extra))
			snprintf(extra + eo, sizeof(extra) - eo, " [%s: %s%s%s:%s from %s%s]",
				 rj->tainted->name, rj->taint->key, rj->taint->value ? "=" : "",
				 rj->taint->value ? rj->taint->value : "", rj->taint->effect,
				 rj->taint->rule ? "DeviceTaintRule " : "its slice",
				 rj->taint->rule ? rj->taint->rule : "");
	}
	return (size_t)snprintf(
		buf, len, "%s request %s needs %s of class %s, %zu match, %zu free%s%s%s%s",
		first ? ":" : ";", alt->name, count_txt, alt->class_name, match, nfree,
		shown ? " (" : "", names, shown ? (nfree > shown ? " ...)" : ")") : "", extra);
}

/* Why the claims cannot be allocated: per request, what the search rejected and why; then the
 * claims' constraints and the node's pools the allocator may not search. */
static int
describe_infeasible(const struct pipeline *p, char *buf, size_t len)
{
	const struct rf_node *n = p->n;
	struct rf_request_rejects *rj = calloc(rf_search_n_requests(&p->sr) + 1, sizeof(*rj));
	size_t k = 0;
	int r = -ENOMEM;
	if (!rj || (r = rf_predict_rejects(&p->sr, rj)) < 0)
		goto out;
	size_t off = (size_t)snprintf(buf, len, "claims cannot be allocated on this node:");
	for (size_t ci = 0; ci < p->sr.n_claims && off < len; ci++) {
		const struct rf_claim *cl = p->sr.claims[ci];
		off += (size_t)snprintf(buf + off, len - off, " claim %s/%s", cl->ns, cl->name);
		for (size_t ri = 0; ri < cl->n_requests && off < len; ri++)
			off += describe_request(&rj[k + ri], ri == 0, buf + off, len - off);
		k += cl->n_requests;
		for (size_t i = 0; i < cl->n_constraints && off < len; i++) {
			const struct rf_constraint *co = &cl->constraints[i];
			if (!co->match_attribute)
				continue;
			off += (size_t)snprintf(buf + off, len - off,
						"; constraint matchAttribute %s",
						co->match_attribute);
		}
	}
	for (size_t i = 0; i < n->n_pools && off < len; i++) {
		const struct rf_pool *pool = n->pools[i];
		if (pool->complete && !pool->invalid)
			continue;
		off += (size_t)snprintf(
			buf + off, len - off, "; pool %s/%s is %s (%u of %lld slices)",
			pool->driver, pool->name,
			pool->invalid ? "invalid (duplicate device names)" : "incomplete",
			pool->n_seen, (long long)pool->slice_count);
	}
	rf_utf8_trim(buf);
out:
	free(rj);
	return r;
}

/* No solution: FailedNodes, or unresolvable when not even a node with every device free has one. */
static int
judge_infeasible(struct pipeline *p)
{
	struct rf_search_result *again = p->work ? &p->work->again : malloc(sizeof(*again));
	char buf[RF_REASON_LEN];
	if (!again)
		return -ENOMEM;
	p->sr.ignore_usage = true;
	int r = rf_predict(&p->sr, again);
	p->sr.ignore_usage = false;
	bool never = r == 0 && again->status == RF_SEARCH_INFEASIBLE;
	if (!p->work)
		free(again);
	if (r < 0 || (r = describe_infeasible(p, buf, sizeof(buf))) < 0)
		return r;
	rf_eval_fail(p->e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL, "%s%s", buf,
		     never ? " (even with every device free)" : "");
	return 0;
}

/* NIC and front-end headroom after placement (measured by score_parts) */
static void
judge_headroom(const struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_quantity zero = rf_quantity_from_int(0);
	char b1[RF_QUANTITY_FMT_MAX], b2[RF_QUANTITY_FMT_MAX], b3[RF_QUANTITY_FMT_MAX];
	for (size_t i = 0; i < e->n_nics; i++) {
		const struct rf_nic_headroom *h = &e->nics[i];
		if (rf_quantity_cmp(h->free_after, zero) >= 0)
			continue;
		bool never = rf_quantity_cmp(h->asked, h->capacity) > 0;
		rf_eval_fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
			     "NIC %s has %s of %s free, the pod asks %s per NIC", h->dev->name,
			     fmt_q(rf_quantity_sub(h->capacity, h->used), b1),
			     fmt_q(h->capacity, b2), fmt_q(h->asked, b3));
	}
	if (!e->fe_applies)
		return;
	struct fe_dir dirs[2];
	frontend_dirs(p->d, e, dirs);
	for (int k = 0; k < 2; k++) {
		if (!dirs[k].has || rf_quantity_cmp(fe_free_after(e, &dirs[k]), zero) >= 0)
			continue;
		bool never = rf_quantity_cmp(dirs[k].ask, e->fe_capacity) > 0;
		rf_eval_fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
			     "front-end NIC has %s of %s %s free (%s), the pod asks %s",
			     fmt_q(rf_quantity_sub(e->fe_capacity, dirs[k].used), b1),
			     fmt_q(e->fe_capacity, b2), dirs[k].name, e->fe_source,
			     fmt_q(dirs[k].ask, b3));
	}
}

static const char *
constraint_hint(const struct rf_assignment *a, char *buf, size_t len)
{
	/* find the claims holding the GPUs and NICs of the assignment */
	const struct rf_claim *gpu_claim = NULL, *nic_claim = NULL;
	const char *gpu_req = NULL, *nic_req = NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_pick *p = &a->picks[i];
		if (p->dev->kind == RF_DEV_GPU && !gpu_claim) {
			gpu_claim = p->claim;
			gpu_req = p->request;
		} else if (p->dev->kind == RF_DEV_NIC && !nic_claim) {
			nic_claim = p->claim;
			nic_req = p->request;
		}
	}
	if (!gpu_claim || !nic_claim)
		return "";
	if (gpu_claim != nic_claim) {
		snprintf(
			buf, len,
			": the GPU (claim %s/%s) and the NIC (claim %s/%s) are in different claims "
			"and constraints only apply within one claim; put requests %s and %s in one "
			"claim with constraint matchAttribute resource.kubernetes.io/pcieRoot",
			gpu_claim->ns, gpu_claim->name, nic_claim->ns, nic_claim->name, gpu_req,
			nic_req);
		return buf;
	}
	for (size_t k = 0; k < gpu_claim->n_constraints; k++) {
		const struct rf_constraint *co = &gpu_claim->constraints[k];
		if (co->match_attribute &&
		    strcmp(co->match_attribute, "resource.kubernetes.io/pcieRoot") == 0)
			return ""; /* already constrained: the free set is the problem */
	}
	snprintf(buf, len,
		 ": add constraint matchAttribute resource.kubernetes.io/pcieRoot over requests "
		 "[%s %s] to claim %s/%s",
		 gpu_req, nic_req, gpu_claim->ns, gpu_claim->name);
	return buf;
}

static double
alignment_score_fn(const struct rf_assignment *a, void *userdata)
{
	const struct score_ctx *sc = userdata;
	double pts = 0;
	if (!rf_assignment_alignment(sc->node, sc->cfg, a, NULL, &pts))
		return 0;
	return pts;
}

/* The best aligned assignment the search can find (e->best), with devices as they are. */
static int
best_achievable(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	struct score_ctx sc = { p->n, p->cfg };
	bool found = false, exh = false;
	int r = rf_predict_best(&p->sr, alignment_score_fn, &sc, &e->best, &found, &exh);
	if (r < 0)
		return r;
	e->has_best = found;
	e->best_exhaustive = exh;
	if (found && !rf_assignment_alignment(p->n, p->cfg, &e->best, &e->best_level, NULL))
		e->best_level = RF_LEVEL_UNKNOWN;
	return 0;
}

/* Could evicting pods ever give an aligned set here? The best level with every device free. */
static int
ideal_level(struct pipeline *p, enum rf_level *ret_level, bool *ret_found, bool *ret_exhaustive)
{
	struct score_ctx sc = { p->n, p->cfg };
	struct rf_assignment *ideal = malloc(sizeof(*ideal));
	enum rf_level il = RF_LEVEL_UNKNOWN;
	bool found = false, exh = false;
	if (!ideal)
		return -ENOMEM;
	p->sr.ignore_usage = true;
	int r = rf_predict_best(&p->sr, alignment_score_fn, &sc, ideal, &found, &exh);
	p->sr.ignore_usage = false;
	if (r == 0 && found && !rf_assignment_alignment(p->n, p->cfg, ideal, &il, NULL))
		il = RF_LEVEL_UNKNOWN;
	free(ideal);
	if (r < 0)
		return r;
	*ret_level = il;
	*ret_found = found;
	*ret_exhaustive = exh;
	return 0;
}

/* Below the pod's min-alignment: say which free set would do, or whether eviction could help. */
static int
judge_min_alignment(struct pipeline *p, enum rf_level check, const char *picked)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	char bb[RF_REASON_LEN / 2], hint[RF_REASON_LEN];
	if (e->has_best && rf_level_at_least(e->best_level, d->min_alignment)) {
		describe_devices(&e->best, bb, sizeof(bb));
		rf_eval_fail(e, RF_VERDICT_FAIL,
			     "min-alignment %s: allocator would pick %s (%s); %s (%s) are free%s",
			     rf_level_name(d->min_alignment), picked, rf_level_name(check), bb,
			     rf_level_name(e->best_level),
			     constraint_hint(&e->best, hint, sizeof(hint)));
		return 0;
	}
	enum rf_level il;
	bool found, exh;
	int r = ideal_level(p, &il, &found, &exh);
	if (r < 0)
		return r;
	/* unresolvable only when a complete search proves it */
	bool never = exh && (!found ||
			     (il != RF_LEVEL_UNKNOWN && !rf_level_at_least(il, d->min_alignment)));
	rf_eval_fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
		     "min-alignment %s: allocator would pick %s (%s) and no free set is "
		     "better; best on this node %s: %s",
		     rf_level_name(d->min_alignment), picked, rf_level_name(check),
		     never ? "even with every device free" : "once devices are freed",
		     found ? rf_level_name(il) : "none");
	return 0;
}

/* Alignment of the predicted devices: unknown, below the pod's minimum, or a better free set. */
static int
judge_alignment(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	char picked[RF_REASON_LEN / 2], bb[RF_REASON_LEN / 2], hint[RF_REASON_LEN];

	enum rf_level check =
		e->predicted_level > p->worst_level ? e->predicted_level : p->worst_level;
	bool unknown = e->alignment_applies && check == RF_LEVEL_UNKNOWN;
	bool below_min =
		e->alignment_applies && !unknown && !rf_level_at_least(check, d->min_alignment);
	/* the devices' names are only needed for explain and for failure messages */
	if (e->explain || below_min || unknown)
		describe_devices(&e->predicted, picked, sizeof(picked));
	if (e->alignment_applies)
		note(e, "allocator would pick %s (%s)", picked, rf_level_name(e->predicted_level));
	else if (e->predicted.n)
		note(e, "allocator would pick %s", picked);

	/* without locality data a requirement cannot be checked; the default (SYS) asks nothing */
	if (unknown && d->min_alignment != RF_LEVEL_SYS)
		rf_eval_fail(
			e, RF_VERDICT_FAIL,
			"min-alignment %s cannot be checked: the alignment of %s is unknown (no "
			"pcieRoot/NUMA attributes in the ResourceSlices and no usable %s annotation)",
			rf_level_name(d->min_alignment), picked,
			p->cfg->devices.topology_annotation);
	if ((e->explain || below_min) && e->predicted.n && p->sr.n_claims) {
		int r = best_achievable(p);
		if (r < 0)
			return r;
	}
	if (below_min)
		return judge_min_alignment(p, check, picked);
	if (e->has_best && e->alignment_applies && e->best_level < e->predicted_level) {
		describe_devices(&e->best, bb, sizeof(bb));
		rf_eval_reason(e, "better aligned: %s (%s) are free%s", bb,
			       rf_level_name(e->best_level),
			       constraint_hint(&e->best, hint, sizeof(hint)));
	}
	return 0;
}

/* railfit.io/max-spread: once the group runs somewhere, nodes outside its blocks (spines) fail.
 * Evicting pods here cannot move the node: unresolvable. */
static void
judge_spread(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	const struct rf_group_places *g = &d->places;
	bool block = d->max_spread == RF_SPREAD_BLOCK;
	char where[256];
	size_t off = 0;

	if (e->place != RF_PLACE_NONE)
		note(e, "network: node in block %s, spine %s; group %s runs %zu pod%s, %s here",
		     p->n->block ? p->n->block : "-", p->n->spine ? p->n->spine : "-", d->group,
		     g->members, g->members == 1 ? "" : "s", rf_place_name(e->place));
	if (d->max_spread == RF_SPREAD_ANY)
		return;
	const char *const *vals = block ? g->blocks : g->spines;
	size_t nv = block ? g->n_blocks : g->n_spines;
	if (!d->group[0] || !nv) {
		note(e, "max-spread %s: %s; nothing to keep together yet",
		     block ? "block" : "spine",
		     d->group[0] ? "the group has no pod on a node with that label"
				 : "the pod has no group");
		return;
	}
	const char *mine = block ? p->n->block : p->n->spine;
	if (place_has(vals, nv, mine))
		return;
	where[0] = 0;
	for (size_t i = 0; i < nv && off < sizeof(where); i++)
		off += (size_t)snprintf(where + off, sizeof(where) - off, "%s%s", i ? ", " : "",
					vals[i]);
	if (mine)
		rf_eval_fail(e, RF_VERDICT_UNRESOLVABLE,
			     "max-spread %s: node is in %s %s, group %s runs in %s %s%s",
			     block ? "block" : "spine", block ? "block" : "spine", mine, d->group,
			     block ? "block" : "spine", where, g->overflow ? " and more" : "");
	else
		rf_eval_fail(
			e, RF_VERDICT_UNRESOLVABLE,
			"max-spread %s: node has no %s label (groups.%sLabels), group %s runs in %s "
			"%s%s",
			block ? "block" : "spine", block ? "block" : "spine",
			block ? "block" : "spine", d->group, block ? "block" : "spine", where,
			g->overflow ? " and more" : "");
}

/* ---- entry points ---- */

int
rf_evaluate_node(const struct rf_cluster *c, const struct rf_demand *d, const char *node_name,
		 bool explain, struct rf_node_eval *e)
{
	return evaluate(c, d, node_name, explain, NULL, NULL, e);
}

int
rf_evaluate_node_work(const struct rf_cluster *c, const struct rf_demand *d, const char *node_name,
		      bool explain, struct rf_eval_work *work, struct rf_node_eval *e)
{
	return evaluate(c, d, node_name, explain, NULL, work, e);
}

int
rf_evaluate_node_released(const struct rf_cluster *c, const struct rf_demand *d,
			  const char *node_name, const struct rf_release *rel,
			  struct rf_node_eval *e)
{
	return evaluate(c, d, node_name, false, rel, NULL, e);
}

static bool
is_victim(const struct rf_pod *const *victims, size_t n, const char *uid)
{
	for (size_t i = 0; uid && i < n; i++)
		if (victims[i]->uid && strcmp(victims[i]->uid, uid) == 0)
			return true;
	return false;
}

int
rf_release_from_victims(const struct rf_cluster *c, const struct rf_pod *const *victims, size_t n,
			struct rf_release *ret)
{
	struct rf_release r = { 0 };
	size_t cap = 0;
	r.pods = calloc(n + 1, sizeof(*r.pods));
	if (!r.pods)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rf_pod *v = victims[i];
		r.pods[r.n_pods++] = v;
		for (size_t e = 0; e < v->n_claim_names; e++) {
			const struct rf_claim *cl = rf_cluster_claim(c, v->ns, v->claim_names[e]);
			if (!cl || !cl->allocated || rf_release_has_claim(&r, cl))
				continue;
			bool only_victims = cl->n_reserved > 0;
			for (size_t k = 0; k < cl->n_reserved && only_victims; k++)
				only_victims = is_victim(victims, n, cl->reserved_uids[k]);
			if (!only_victims)
				continue;
			if (rf_grow(&r.claims, &cap, r.n_claims + 1, sizeof(*r.claims)) < 0) {
				rf_release_free(&r);
				return -ENOMEM;
			}
			r.claims[r.n_claims++] = cl;
		}
	}
	*ret = r;
	return 0;
}

void
rf_release_free(struct rf_release *r)
{
	free(r->pods);
	free(r->claims);
	memset(r, 0, sizeof(*r));
}
