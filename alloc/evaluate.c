/* Filter and score of one node for one pod (see evaluate.h, DESIGN section 7). */
#include "alloc/evaluate.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

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
	static const char *const names[] = { "alignment", "bandwidth", "rail", "packing" };
	return p < RF_PART_COUNT ? names[p] : "?";
}

static void __attribute__((format(printf, 2, 3)))
reason(struct rf_node_eval *e, const char *fmt, ...)
{
	if (e->n_reasons >= RF_MAX_REASONS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->reasons[e->n_reasons], RF_REASON_LEN, fmt, ap);
	va_end(ap);
	rf_utf8_trim(e->reasons[e->n_reasons++]);
}

/* An informational reason: only explain shows it, so filter and prioritize do not format it. */
#define note(e, ...)                                                                               \
	do {                                                                                       \
		if ((e)->explain)                                                                  \
			reason((e), __VA_ARGS__);                                                  \
	} while (0)

/* A failing reason goes first: the first reason is the filter message. */
static void __attribute__((format(printf, 3, 4)))
fail(struct rf_node_eval *e, enum rf_verdict v, const char *fmt, ...)
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
		reason(e, "%s", msg);
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

struct score_ctx {
	const struct rf_node *node;
	const struct rf_config *cfg;
};

static double
alignment_score_fn(const struct rf_assignment *a, void *userdata)
{
	const struct score_ctx *sc = userdata;
	double pts = 0;
	if (!rf_assignment_alignment(sc->node, sc->cfg, a, NULL, &pts))
		return 0;
	return pts;
}

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

/* Pools the allocator of kube.draVersion searches for ExactCount requests. */
static bool
searchable(const struct rf_cluster *c, const struct rf_pool *p)
{
	if (rf_cluster_dra_version(c) == RF_DRA_1_34)
		return !p->invalid;
	return p->complete && !p->invalid;
}

static bool
untolerated_taint(const struct rf_request_alt *alt, const struct rf_device *d)
{
	for (size_t i = 0; i < d->n_taints; i++) {
		const struct rf_taint *t = &d->taints[i];
		if (strcmp(t->effect, "NoSchedule") != 0 && strcmp(t->effect, "NoExecute") != 0)
			continue;
		bool ok = false;
		for (size_t k = 0; k < alt->n_tolerations && !ok; k++) {
			const struct rf_toleration *tol = &alt->tolerations[k];
			bool exists = tol->op && strcmp(tol->op, "Exists") == 0;
			bool key = !tol->key || !tol->key[0] || strcmp(tol->key, t->key) == 0;
			bool effect = !tol->effect || !tol->effect[0] ||
				      strcmp(tol->effect, t->effect) == 0;
			bool value = exists || strcmp(tol->value ? tol->value : "",
						      t->value ? t->value : "") == 0;
			ok = key && effect && value && (exists || (tol->key && tol->key[0]));
		}
		if (!ok)
			return true;
	}
	return false;
}

/* Why a claim cannot be allocated: per request, which devices match and which of them are free. */
static void
describe_infeasible(const struct rf_cluster *c, const struct rf_node *n, const struct rf_demand *d,
		    char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "claims cannot be allocated on this node:");
	for (size_t ci = 0; ci < d->n_claims && off < len; ci++) {
		const struct rf_claim *cl = d->claims[ci];
		off += (size_t)snprintf(buf + off, len - off, " claim %s/%s", cl->ns, cl->name);
		for (size_t r = 0; r < cl->n_requests && off < len; r++) {
			const struct rf_request_alt *alt = &cl->requests[r].alts[0];
			size_t match = 0, nfree = 0, shown = 0, skipped = 0, tainted = 0;
			char names[160] = "", extra[96] = "";
			size_t noff = 0;
			for (size_t i = 0; i < n->n_devices; i++) {
				const struct rf_device *dev = n->devices[i];
				struct rf_cel_device v = rf_device_cel_view(dev);
				bool ok = !alt->class ||
					  rf_class_matches(c, alt->class, dev, NULL, NULL) == 1;
				for (size_t s = 0; ok && s < alt->n_selectors; s++)
					ok = rf_cel_eval(alt->selectors[s], &v, NULL) == 1;
				if (!ok)
					continue;
				match++;
				if (rf_dev_use(c, dev)->holder && !dev->allow_multiple)
					continue;
				if (!searchable(c, dev->pool)) {
					skipped++;
					continue;
				}
				if (untolerated_taint(alt, dev)) {
					tainted++;
					continue;
				}
				nfree++;
				if (shown < 4 && noff < sizeof(names)) {
					noff += (size_t)snprintf(names + noff, sizeof(names) - noff,
								 "%s%s", shown ? " " : "",
								 dev->name);
					shown++;
				}
			}
			const char *count_txt = alt->all ? "all" : NULL;
			char cnt[24];
			if (!count_txt) {
				snprintf(cnt, sizeof(cnt), "%lld", (long long)alt->count);
				count_txt = cnt;
			}
			if (skipped || tainted)
				snprintf(extra, sizeof(extra),
					 " (%zu more in pools the allocator skips, "
					 "%zu with an untolerated taint)",
					 skipped, tainted);
			off += (size_t)snprintf(
				buf + off, len - off,
				"%s request %s needs %s of class %s, %zu match, %zu free%s%s%s%s",
				r ? ";" : ":", alt->name, count_txt, alt->class_name, match, nfree,
				shown ? " (" : "", names,
				shown ? (nfree > shown ? " ...)" : ")") : "", extra);
		}
		for (size_t k = 0; k < cl->n_constraints && off < len; k++) {
			const struct rf_constraint *co = &cl->constraints[k];
			if (!co->match_attribute)
				continue;
			off += (size_t)snprintf(buf + off, len - off,
						"; constraint matchAttribute %s",
						co->match_attribute);
		}
	}
	for (size_t p = 0; p < n->n_pools && off < len; p++) {
		const struct rf_pool *pool = n->pools[p];
		if (pool->complete && !pool->invalid)
			continue;
		off += (size_t)snprintf(
			buf + off, len - off, "; pool %s/%s is %s (%u of %lld slices)",
			pool->driver, pool->name,
			pool->invalid ? "invalid (duplicate device names)" : "incomplete",
			pool->n_slices, (long long)pool->slice_count);
	}
	rf_utf8_trim(buf);
}

static const char *
constraint_hint(const struct rf_demand *d, const struct rf_assignment *a, char *buf, size_t len)
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
	(void)d;
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

/* Parts, headroom and score of one assignment; filter failures for headroom go to e. */
static bool
victim_holds(const struct rf_cluster *c, const struct rf_pod *p, const struct rf_device *dev)
{
	const json_t *entries = rf_jpath(p->json, "spec.resourceClaims");
	for (size_t e = 0; e < json_array_size(entries); e++) {
		const char *cn = rf_pod_claim_name(p->json, json_array_get(entries, e));
		const struct rf_claim *cl = cn ? rf_cluster_claim(c, p->ns, cn) : NULL;
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

static void
score_assignment(const struct rf_cluster *c, const struct rf_demand *d, const struct rf_node *n,
		 const struct rf_assignment *a, const struct rf_release *rel,
		 struct rf_node_eval *e, bool apply_filter)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	enum rf_level worst;
	double pts;
	char b1[RF_QUANTITY_FMT_MAX], b2[RF_QUANTITY_FMT_MAX], b3[RF_QUANTITY_FMT_MAX],
		b4[RF_QUANTITY_FMT_MAX];

	for (int p = 0; p < RF_PART_COUNT; p++) {
		e->parts[p] = 0;
		e->part_applies[p] = false;
	}
	e->alignment_applies = rf_assignment_alignment(n, cfg, a, &worst, &pts);
	e->predicted_level = e->alignment_applies ? worst : RF_LEVEL_UNKNOWN;
	if (e->alignment_applies) {
		e->parts[RF_PART_ALIGNMENT] = pts;
		e->part_applies[RF_PART_ALIGNMENT] = true;
	}

	/* bandwidth: every NIC of the assignment, then the front-end NIC */
	double min_frac = 2;
	e->n_nics = 0;
	for (size_t i = 0; i < a->n && e->n_nics < RF_MAX_NICS; i++) {
		const struct rf_pick *pk = &a->picks[i];
		if (pk->dev->kind != RF_DEV_NIC)
			continue;
		struct rf_nic_headroom *h = &e->nics[e->n_nics++];
		h->dev = pk->dev;
		h->capacity = rf_device_bw_capacity(pk->dev, cfg, &h->capacity_source);
		h->used = nic_used(c, pk->dev, rel);
		h->asked = pk->has_bw      ? pk->bw
			   : d->has_nic_bw ? d->nic_bw
					   : rf_quantity_from_int(0);
		if (pk->pinned)
			h->asked = d->has_nic_bw ? d->nic_bw : rf_quantity_from_int(0);
		h->free_after = rf_quantity_sub(rf_quantity_sub(h->capacity, h->used), h->asked);
		double f = fraction(h->free_after, h->capacity);
		if (f < min_frac)
			min_frac = f;
		if (apply_filter && rf_quantity_cmp(h->free_after, rf_quantity_from_int(0)) < 0) {
			bool never = rf_quantity_cmp(h->asked, h->capacity) > 0;
			fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
			     "NIC %s has %s of %s free, the pod asks %s per NIC", pk->dev->name,
			     fmt_q(rf_quantity_sub(h->capacity, h->used), b1),
			     fmt_q(h->capacity, b2), fmt_q(h->asked, b3));
		}
	}
	e->fe_applies = d->has_egress || d->has_ingress;
	if (e->fe_applies) {
		e->fe_capacity = n->fe_capacity;
		e->fe_egress_used = rf_node_use(c, n)->fe_egress_used;
		e->fe_ingress_used = rf_node_use(c, n)->fe_ingress_used;
		e->fe_source = n->fe_source;
		for (size_t i = 0; rel && i < rel->n_pods; i++) {
			const struct rf_pod *v = rel->pods[i];
			if (!v->node_name || strcmp(v->node_name, n->name) != 0)
				continue;
			if (v->has_egress)
				e->fe_egress_used = rf_quantity_sub(e->fe_egress_used, v->egress);
			if (v->has_ingress)
				e->fe_ingress_used =
					rf_quantity_sub(e->fe_ingress_used, v->ingress);
		}
		struct {
			bool has;
			struct rf_quantity ask, used;
			const char *dir;
		} dirs[2] = { { d->has_egress, d->egress, e->fe_egress_used, "egress" },
			      { d->has_ingress, d->ingress, e->fe_ingress_used, "ingress" } };
		for (int k = 0; k < 2; k++) {
			if (!dirs[k].has)
				continue;
			struct rf_quantity free_after = rf_quantity_sub(
				rf_quantity_sub(n->fe_capacity, dirs[k].used), dirs[k].ask);
			double f = fraction(free_after, n->fe_capacity);
			if (f < min_frac)
				min_frac = f;
			if (apply_filter &&
			    rf_quantity_cmp(free_after, rf_quantity_from_int(0)) < 0) {
				bool never = rf_quantity_cmp(dirs[k].ask, n->fe_capacity) > 0;
				fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
				     "front-end NIC has %s of %s %s free (%s), the pod asks %s",
				     fmt_q(rf_quantity_sub(n->fe_capacity, dirs[k].used), b1),
				     fmt_q(n->fe_capacity, b2), dirs[k].dir, n->fe_source,
				     fmt_q(dirs[k].ask, b4));
			}
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
			cfg->scoring.bandwidth_policy == RF_BW_BINPACK ? 1 - min_frac : min_frac;
		e->part_applies[RF_PART_BANDWIDTH] = true;
	}

	/* rail: share of the assignment's rails the pod's group already uses elsewhere */
	e->group_rails =
		d->group[0] ? rf_group_rails_elsewhere(c, rf_cluster_group(c, d->group), n) : 0;
	if (e->group_rails) {
		size_t rails = 0, same = 0;
		for (size_t i = 0; i < a->n; i++) {
			int r = a->picks[i].dev->kind == RF_DEV_NIC ? a->picks[i].dev->rail : -1;
			if (r < 0)
				continue;
			rails++;
			same += (e->group_rails >> r) & 1;
		}
		if (rails) {
			e->parts[RF_PART_RAIL] = (double)same / (double)rails;
			e->part_applies[RF_PART_RAIL] = true;
		}
	}

	/* packing: prefer nodes already in use, so whole aligned sets stay free for big jobs */
	size_t new_gpus = 0, new_nics = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (a->picks[i].pinned || a->picks[i].dev->allow_multiple)
			continue;
		new_gpus += a->picks[i].dev->kind == RF_DEV_GPU;
		new_nics += a->picks[i].dev->kind == RF_DEV_NIC;
	}
	if (new_gpus && n->n_gpus) {
		e->parts[RF_PART_PACKING] =
			clamp01((double)(n->n_gpus - rf_node_use(c, n)->n_gpus_free + new_gpus) /
				n->n_gpus);
		e->part_applies[RF_PART_PACKING] = true;
	} else if (new_nics && n->n_nics) {
		e->parts[RF_PART_PACKING] =
			clamp01((double)(n->n_nics - rf_node_use(c, n)->n_nics_free + new_nics) /
				n->n_nics);
		e->part_applies[RF_PART_PACKING] = true;
	}

	const double w[RF_PART_COUNT] = { cfg->scoring.w_alignment, cfg->scoring.w_bandwidth,
					  cfg->scoring.w_rail, cfg->scoring.w_packing };
	double num = 0, den = 0;
	for (int p = 0; p < RF_PART_COUNT; p++)
		if (e->part_applies[p]) {
			num += w[p] * e->parts[p];
			den += w[p];
		}
	e->score = den > 0 ? (int)lround(10.0 * num / den) : 0;
	if (e->score < 0)
		e->score = 0;
	if (e->score > 10)
		e->score = 10;
}

static int
eval_known(const struct rf_cluster *c, const struct rf_demand *d, const struct rf_node *n,
	   bool explain, const struct rf_release *rel, struct rf_eval_work *work,
	   struct rf_node_eval *e)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	struct rf_assignment pinned;
	struct rf_search_result *res = NULL;
	char buf[RF_REASON_LEN], hint[RF_REASON_LEN], b1[RF_REASON_LEN / 2];
	enum rf_level worst_level = RF_LEVEL_PIX;
	int r = 0;

	pinned_assignment(d, &pinned);
	struct rf_search_request sr = { .cluster = c,
					.node = n,
					.claims = d->claims,
					.n_claims = d->n_claims,
					.pinned = &pinned,
					.release = rel };

	if (d->n_claims == 0) {
		e->status = RF_SEARCH_FOUND;
		e->has_predicted = true;
		rf_assignment_copy(&e->predicted, &pinned);
		e->deterministic = true;
		e->orders_exhaustive = true;
		if (d->n_pinned)
			note(e, "claims already allocated on this node: devices are fixed");
		goto judge;
	}

	res = work ? &work->res : malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	if ((r = rf_predict(&sr, res)) < 0)
		goto out;
	e->status = res->status;
	e->n_orders = res->n_orders;
	e->orders_exhaustive = res->orders_exhaustive;
	switch (res->status) {
	case RF_SEARCH_FOUND:
		break;
	case RF_SEARCH_CEL_ERROR:
		e->cel_error = true;
		reason(e,
		       "selector error: %s; kube-scheduler's DRA plugin fails the pod's whole "
		       "scheduling attempt on this (guard the lookup with has()); railfit passes the "
		       "node",
		       res->error);
		goto out;
	case RF_SEARCH_POOL_ERROR:
		reason(e, "allocator error: %s; railfit passes the node", res->error);
		goto out;
	case RF_SEARCH_BUDGET:
	case RF_SEARCH_TOO_MANY:
		reason(e, "railfit's bounded search gave up (%s); the node is not judged",
		       rf_search_status_name(res->status));
		goto out;
	case RF_SEARCH_INFEASIBLE: {
		struct rf_search_result *again = work ? &work->again : malloc(sizeof(*again));
		if (!again) {
			r = -ENOMEM;
			goto out;
		}
		sr.ignore_usage = true;
		r = rf_predict(&sr, again);
		sr.ignore_usage = false;
		bool never = r == 0 && again->status == RF_SEARCH_INFEASIBLE;
		if (!work)
			free(again);
		if (r < 0)
			goto out;
		describe_infeasible(c, n, d, buf, sizeof(buf));
		fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL, "%s%s", buf,
		     never ? " (even with every device free)" : "");
		goto out;
	}
	}

	/* the worst outcome over the scan orders that matter */
	e->n_outcomes = res->n_outcomes;
	e->deterministic = res->n_outcomes <= 1 && res->orders_exhaustive;
	int worst_score = 11;
	size_t worst = 0;
	for (size_t i = 0; i < res->n_outcomes && res->n_outcomes > 1; i++) {
		struct rf_node_eval *tmp = malloc(sizeof(*tmp));
		if (!tmp) {
			r = -ENOMEM;
			goto out;
		}
		tmp->verdict = RF_VERDICT_PASS;
		tmp->n_reasons = 0;
		tmp->explain = false;
		score_assignment(c, d, n, &res->outcomes[i], rel, tmp, false);
		if (tmp->score < worst_score) {
			worst_score = tmp->score;
			worst = i;
		}
		free(tmp);
	}
	/* min-alignment is judged on the worst level any scan order gives */
	for (size_t i = 0; i < res->n_outcomes; i++) {
		enum rf_level l;
		if (rf_assignment_alignment(n, cfg, &res->outcomes[i], &l, NULL) && l > worst_level)
			worst_level = l;
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

judge:
	score_assignment(c, d, n, &e->predicted, rel, e, true);

	enum rf_level check = e->predicted_level > worst_level ? e->predicted_level : worst_level;
	bool unknown = e->alignment_applies && check == RF_LEVEL_UNKNOWN;
	bool below_min =
		e->alignment_applies && !unknown && !rf_level_at_least(check, d->min_alignment);
	/* the devices' names are only needed for explain and for failure messages */
	if (explain || below_min || unknown)
		describe_devices(&e->predicted, b1, sizeof(b1));
	if (e->alignment_applies)
		note(e, "allocator would pick %s (%s)", b1, rf_level_name(e->predicted_level));
	else if (e->predicted.n)
		note(e, "allocator would pick %s", b1);

	/* without locality data a requirement cannot be checked; the default (SYS) asks nothing */
	if (unknown && d->min_alignment != RF_LEVEL_SYS)
		fail(e, RF_VERDICT_FAIL,
		     "min-alignment %s cannot be checked: the alignment of %s is unknown (no "
		     "pcieRoot/NUMA attributes in the ResourceSlices and no usable %s annotation)",
		     rf_level_name(d->min_alignment), b1, cfg->devices.topology_annotation);
	if ((explain || below_min) && e->predicted.n && d->n_claims) {
		struct score_ctx sc = { n, cfg };
		bool found = false, exh = false;
		if ((r = rf_predict_best(&sr, alignment_score_fn, &sc, &e->best, &found, &exh)) < 0)
			goto out;
		e->has_best = found;
		e->best_exhaustive = exh;
		if (found && !rf_assignment_alignment(n, cfg, &e->best, &e->best_level, NULL))
			e->best_level = RF_LEVEL_UNKNOWN;
	}
	if (!below_min && e->has_best && e->alignment_applies &&
	    e->best_level < e->predicted_level) {
		char bb[RF_REASON_LEN / 2];
		describe_devices(&e->best, bb, sizeof(bb));
		reason(e, "better aligned: %s (%s) are free%s", bb, rf_level_name(e->best_level),
		       constraint_hint(d, &e->best, hint, sizeof(hint)));
	}
	if (below_min) {
		char bb[RF_REASON_LEN / 2];
		if (e->has_best && rf_level_at_least(e->best_level, d->min_alignment)) {
			describe_devices(&e->best, bb, sizeof(bb));
			fail(e, RF_VERDICT_FAIL,
			     "min-alignment %s: allocator would pick %s (%s); %s (%s) are free%s",
			     rf_level_name(d->min_alignment), b1, rf_level_name(check), bb,
			     rf_level_name(e->best_level),
			     constraint_hint(d, &e->best, hint, sizeof(hint)));
		} else {
			/* could evicting pods ever give an aligned set here? */
			struct score_ctx sc = { n, cfg };
			struct rf_assignment *ideal = malloc(sizeof(*ideal));
			bool found = false, exh = false;
			enum rf_level il = RF_LEVEL_UNKNOWN;
			if (!ideal) {
				r = -ENOMEM;
				goto out;
			}
			sr.ignore_usage = true;
			r = rf_predict_best(&sr, alignment_score_fn, &sc, ideal, &found, &exh);
			if (r == 0 && found && !rf_assignment_alignment(n, cfg, ideal, &il, NULL))
				il = RF_LEVEL_UNKNOWN;
			free(ideal);
			if (r < 0)
				goto out;
			/* unresolvable only when a complete search proves it */
			bool never = exh && (!found || (il != RF_LEVEL_UNKNOWN &&
							!rf_level_at_least(il, d->min_alignment)));
			fail(e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
			     "min-alignment %s: allocator would pick %s (%s) and no free set is "
			     "better; best on this node %s: %s",
			     rf_level_name(d->min_alignment), b1, rf_level_name(check),
			     never ? "even with every device free" : "once devices are freed",
			     found ? rf_level_name(il) : "none");
		}
	}
out:
	if (!work)
		free(res);
	return r;
}

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

	if (d->kind == RF_DEMAND_NONE) {
		reason(e, "the pod asks for no devices or bandwidth: not railfit's business");
		return 0;
	}
	if (d->kind == RF_DEMAND_UNKNOWN) {
		reason(e, "demand unknown (%s): railfit passes every node and scores all equally",
		       d->unknown_reason);
		return 0;
	}
	for (size_t i = 0; i < d->n_pinned; i++) {
		const char *pn = pinned_node(d->pinned[i]);
		if (pn && strcmp(pn, node_name) != 0) {
			fail(e, RF_VERDICT_UNRESOLVABLE,
			     "claim %s/%s is already allocated on node %s", d->pinned[i]->ns,
			     d->pinned[i]->name, pn);
			return 0;
		}
	}
	if (!e->node) {
		fail(e, RF_VERDICT_FAIL, "node %s is not in railfit's cache (yet)", node_name);
		return 0;
	}
	if (d->bad_annotation[0])
		reason(e, "%s", d->bad_annotation);
	return eval_known(c, d, e->node, explain, rel, work, e);
}

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
		const json_t *entries = rf_jpath(v->json, "spec.resourceClaims");
		for (size_t e = 0; e < json_array_size(entries); e++) {
			const char *cn = rf_pod_claim_name(v->json, json_array_get(entries, e));
			const struct rf_claim *cl = cn ? rf_cluster_claim(c, v->ns, cn) : NULL;
			if (!cl || !cl->allocated || rf_release_has_claim(&r, cl))
				continue;
			bool only_victims = cl->n_reserved > 0;
			for (size_t k = 0; k < cl->n_reserved && only_victims; k++)
				only_victims = is_victim(victims, n, cl->reserved_uids[k]);
			if (!only_victims)
				continue;
			if (r.n_claims == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				const struct rf_claim **nc = realloc(r.claims, ncap * sizeof(*nc));
				if (!nc) {
					rf_release_free(&r);
					return -ENOMEM;
				}
				r.claims = nc;
				cap = ncap;
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
