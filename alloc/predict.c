/* The allocator mirror (see predict.h and reference/dra-allocator.md sections 2-4 and 9).
 *
 * One struct search per (node, scan order): a flat scan list of the node's devices in pool, slice
 * and device order, a memo of selector results per (request alternative, device), and the picks
 * made so far. The recursion is the allocator's: claim -> request -> alternative -> device slot,
 * rescanning from the start for each slot. */
#include "alloc/predict.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/list_constraints.h"
#include "alloc/predict-private.h"

#define STEP_BUDGET          200000UL /* device checks per scan order */
#define NODE_BUDGET          400000UL /* device checks per node, over all scan orders */
#define RF_MAX_CLAIM_RESULTS 32
#define BEST_STEP_BUDGET     100000UL

/* The search's return values: > 0 found, 0 no solution in this branch, -1 fatal (s->fatal), and
 * LIMIT: the claim would exceed AllocationResultsMaxSize. Like the allocator's
 * errAllocationResultMaxSizeExceeded, LIMIT skips the other devices of the requests before it
 * (their counts, not their devices, decide) up to the nearest firstAvailable choice or the claim
 * boundary: without it a 32 + 32 request pair rescans C(64, 32) device sets. */
#define LIMIT (-2)

const char *
rf_search_status_name(enum rf_search_status s)
{
	switch (s) {
	case RF_SEARCH_FOUND:
		return "found";
	case RF_SEARCH_INFEASIBLE:
		return "infeasible";
	case RF_SEARCH_CEL_ERROR:
		return "cel-error";
	case RF_SEARCH_POOL_ERROR:
		return "pool-error";
	case RF_SEARCH_BUDGET:
		return "budget";
	case RF_SEARCH_TOO_MANY:
		return "too-many-devices";
	case RF_SEARCH_SCHEDULER_CRASH:
		return "scheduler-crash";
	}
	return "?";
}

/* Does the device carry a list-typed attribute? (1.36 without DRAListTypeAttributes cannot
 * hand such a device to CEL.) The first one, or NULL. */
static const struct rf_attr *
list_attribute(const struct rf_device *d)
{
	for (size_t i = 0; i < d->n_attrs; i++)
		if (d->attrs[i].kind == RF_ATTR_LIST)
			return &d->attrs[i];
	return NULL;
}

/* Class selectors, then request selectors, stopping at the first false (dra-allocator.md 8). */
enum memo
rf_search_selectable(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
		     size_t aid, const struct scan_item *it, bool record_error)
{
	unsigned char *m = &s->memo[aid * s->n_devs + it->ni];
	bool want_msg = *m == M_ERROR && record_error && s->err && !s->err[0];
	if (*m != M_UNKNOWN && !want_msg)
		return *m;
	struct rf_cel_device view = rf_device_cel_view(it->dev);
	struct rf_cel_error err; /* large: set only what is read when no error fills it */
	enum memo res = M_YES;
	const char *text = NULL;
	const struct rf_attr *la;
	err.pos = 0;
	err.msg[0] = 0;
	view.list_attributes = s->lists.cel;
	const struct rf_class *cls = s->classes[aid];
	if (s->ver == RF_DRA_1_36 && !s->lists.cel && alt->n_selectors &&
	    (la = list_attribute(it->dev)) && (!cls || cls->n_selectors == 0)) {
		/* 1.36 converts every attribute before evaluating (D362 cel/compile.go
		 * DeviceMatches); a list is an error there unless DRAListTypeAttributes is on. A
		 * class with selectors reports it first (rf_class_matches). */
		res = M_ERROR;
		text = alt->selector_texts[0];
		snprintf(
			err.msg, sizeof(err.msg),
			"attribute %s: unsupported attribute value (a list: Kubernetes 1.36 reads it "
			"only with the DRAListTypeAttributes feature gate)",
			la->name);
		goto done;
	}
	/* the allocator converts all of a device's attributes before it evaluates a selector: an
	 * attribute of a kind it does not know fails every selector on the device */
	if ((cls && cls->n_selectors) || alt->n_selectors) {
		for (size_t i = 0; i < it->dev->n_attrs && res == M_YES; i++)
			if (it->dev->attrs[i].kind == RF_ATTR_OTHER) {
				res = M_ERROR;
				text = "(every selector)";
				snprintf(err.msg, sizeof(err.msg),
					 "attribute %s: unsupported attribute value",
					 it->dev->attrs[i].name);
			}
	}
	if (cls && res == M_YES) {
		int r = rf_class_matches(s->req->cluster, cls, it->dev, record_error ? &err : NULL,
					 &text);
		res = r < 0 ? M_ERROR : r == 0 ? M_NO : M_YES;
	}
	for (size_t i = 0; i < alt->n_selectors && res == M_YES; i++) {
		int r = rf_cel_eval(alt->selectors[i], &view, &err);
		if (r < 0) {
			res = M_ERROR;
			text = alt->selector_texts[i];
		} else if (r == 0) {
			res = M_NO;
		}
	}
done:
	if (res == M_ERROR && record_error && s->err && !s->err[0])
		snprintf(s->err, s->errlen,
			 "claim %s/%s request %s: selector \"%s\" on device %s/%s/%s: %s", cl->ns,
			 cl->name, alt->name, text ? text : "?", it->dev->pool->driver,
			 it->dev->pool->name, it->dev->name, err.msg);
	*m = (unsigned char)res;
	return res;
}

bool
rf_release_has_claim(const struct rf_release *r, const struct rf_claim *cl)
{
	for (size_t i = 0; r && i < r->n_claims; i++)
		if (r->claims[i] == cl)
			return true;
	return false;
}

/* Drop the picks of claim ci after the first n, newest first (the allocator's rollbacks). */
static void
unwind(struct search *s, size_t ci, size_t n)
{
	while (s->cur.n > n) {
		const struct rf_pick *pk = &s->cur.picks[s->cur.n - 1];
		const struct rf_device *d = pk->dev;
		/* whether this pick reserved counters is what rf_search_counters_skipped() said
		 * when it was taken: nothing about d changed since (a later pick of d skipped the
		 * check) */
		if (!s->best && rules_undo_leak(s) && !pk->pinned && d->allow_multiple &&
		    d->n_counters && !rf_search_counters_skipped(s, d, s->cur.n - 1) &&
		    s->n_leaked < RF_MAX_LEAKED) {
			s->leaked_undo[s->n_leaked] = true;
			s->leaked[s->n_leaked++] = d;
		}
		s->cur.n--;
		rf_search_constraints_release(s, ci, pk->request, d);
	}
}

static bool
in_use(const struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
       const struct rf_device *d)
{
	if (alt->admin_access)
		return !d->allow_multiple && picked(s, d, cl);
	/* an allocation without a shareID holds the device whole, even one that is (now)
	 * multi-allocatable: the allocator counts it among the allocated devices */
	const struct rf_claim *holder = rf_dev_use(s->req->cluster, d)->holder;
	if (holder && !s->req->ignore_usage && !rf_release_has_claim(s->req->release, holder))
		return true;
	if (d->allow_multiple)
		return false; /* shared: capacity decides */
	return picked(s, d, NULL);
}

static int push(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
		const struct rf_device *d);

static int dfs_request(struct search *s, size_t ci, size_t ri);

static int
leaf(struct search *s)
{
	if (!s->best)
		return 1;
	double sc = s->score ? s->score(&s->cur, s->userdata) : 0;
	if (!s->found || sc > s->best_score) {
		s->found = true;
		s->best_score = sc;
		rf_assignment_copy(s->best_out, &s->cur);
	}
	return 0;
}

static int
next_request(struct search *s, size_t ci, size_t ri)
{
	if (ri + 1 < s->req->claims[ci]->n_requests)
		return dfs_request(s, ci, ri + 1);
	if (ci + 1 < s->req->n_claims) {
		int r = dfs_request(s, ci + 1, 0);
		return r == LIMIT ? 0 : r; /* another choice in an earlier claim may fit */
	}
	return leaf(s);
}

static int
fatal(struct search *s, enum rf_search_status st)
{
	if (s->fatal == RF_SEARCH_FOUND)
		s->fatal = st;
	return -1;
}

static bool
pool_searchable(const struct search *s, const struct scan_item *it, int *ret_fatal)
{
	const struct rf_pool *p = it->dev->pool;
	*ret_fatal = 0;
	if (s->ver == RF_DRA_1_34) {
		if (p->invalid) {
			*ret_fatal = 1;
			return false;
		}
		return true; /* 1.34 searches incomplete pools */
	}
	return p->complete && !p->invalid;
}

/* AllocationResultsMaxSize: a claim gets at most 32 devices. Would `more` further devices
 * exceed it? */
static bool
claim_exceeds(const struct search *s, const struct rf_claim *cl, int64_t more)
{
	int64_t n = 0;
	for (size_t i = 0; i < s->cur.n; i++)
		n += s->cur.picks[i].claim == cl;
	return n + more > RF_MAX_CLAIM_RESULTS;
}

static int
dfs_all(struct search *s, size_t ci, size_t ri, size_t ai)
{
	const struct rf_claim *cl = s->req->claims[ci];
	const struct rf_request_alt *alt = &cl->requests[ri].alts[ai];
	size_t aid = alt_id(s, ci, ri, ai), start = s->cur.n, n = 0;

	/* any incomplete or invalid pool on the node is fatal for All, matching devices or not */
	for (size_t p = 0; p < s->req->node->n_pools; p++) {
		const struct rf_pool *pool = s->req->node->pools[p];
		if (pool->complete && !pool->invalid)
			continue;
		if (s->err && !s->err[0])
			snprintf(
				s->err, s->errlen,
				"claim %s/%s request %s (allocationMode All): pool %s/%s on the node "
				"is %s",
				cl->ns, cl->name, alt->name, pool->driver, pool->name,
				pool->invalid ? "invalid" : "incomplete");
		return fatal(s, RF_SEARCH_POOL_ERROR);
	}
	for (size_t i = 0; i < s->n_scan; i++) {
		const struct scan_item *it = &s->scan[i];
		enum memo m = rf_search_selectable(s, cl, alt, aid, it, true);
		if (m == M_ERROR)
			return fatal(s, RF_SEARCH_CEL_ERROR);
		if (m != M_YES)
			continue;
		/* consumable capacity: "all" is the devices whose capacity can serve the request
		 * (the allocator leaves the others out), after what is allocated from 1.35 on
		 * (v0.34.9's suite expects a device used up by allocations to fail All) */
		if (!rf_search_capacity_fits_state(s, alt, it->dev, s->ver != RF_DRA_1_34, false))
			continue;
		s->steps++;
		if (in_use(s, cl, alt, it->dev) || !capacity_fits(s, alt, it->dev))
			goto fail;
		if (it->dev->n_counters && rules_all_counters_panic(s) &&
		    !rf_search_counters_skipped(s, it->dev, s->cur.n)) {
			/* v0.36.0-v0.36.1: All-mode candidates lack their pool (#138885) */
			if (s->err && !s->err[0])
				snprintf(
					s->err, s->errlen,
					"claim %s/%s request %s (allocationMode All): device %s/%s/%s "
					"consumes counters, which crashes kube-scheduler %s "
					"(kubernetes#138885, fixed in 1.36.2)",
					cl->ns, cl->name, alt->name, it->dev->pool->driver,
					it->dev->pool->name, it->dev->name,
					s->patch == 0 ? "1.36.0" : "1.36.1");
			return fatal(s, RF_SEARCH_SCHEDULER_CRASH);
		}
		if (!rf_search_counters_check(s, it->dev) || !taints_ok(s, alt, it->dev))
			goto fail;
		if (!rf_search_constraints_take(s, ci, alt->name, it->dev)) {
			if (s->err && !s->err[0])
				snprintf(s->err, s->errlen,
					 "claim %s/%s request %s (allocationMode All): device %s "
					 "violates a constraint",
					 cl->ns, cl->name, alt->name, it->dev->name);
			return fatal(s, RF_SEARCH_POOL_ERROR);
		}
		if (claim_exceeds(s, cl, 1)) {
			rf_search_constraints_release(s, ci, alt->name, it->dev);
			unwind(s, ci, start);
			return LIMIT;
		}
		if (push(s, cl, alt, it->dev) < 0)
			return -1;
		n++;
	}
	if (n == 0)
		goto fail;
	int r = next_request(s, ci, ri);
	if (r == 0 || r == LIMIT)
		unwind(s, ci, start);
	return r;
fail:
	unwind(s, ci, start);
	return 0;
}

static int
push(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
     const struct rf_device *d)
{
	if (s->cur.n >= RF_MAX_PICKS)
		return fatal(s, RF_SEARCH_TOO_MANY);
	struct rf_pick *pk = &s->cur.picks[s->cur.n++];
	*pk = (struct rf_pick){ .claim = cl, .request = alt->name, .dev = d, .alt = alt };
	if (d->allow_multiple && d->bandwidth) {
		pk->has_bw = rf_search_consumption(s, alt, d->bandwidth, &pk->bw);
	}
	return 0;
}

/* A necessary condition for a request: at least count devices that pass every check except the
 * constraints. Pruning a branch that cannot succeed never changes the first solution found. */
static bool
enough_candidates(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
		  size_t aid)
{
	int64_t n = 0;
	for (size_t i = 0; i < s->n_scan && n < alt->count; i++) {
		const struct scan_item *it = &s->scan[i];
		int pool_fatal;
		if (!pool_searchable(s, it, &pool_fatal)) {
			if (pool_fatal)
				return true; /* let the search reach it and report */
			continue;
		}
		if (in_use(s, cl, alt, it->dev))
			continue;
		enum memo m = rf_search_selectable(s, cl, alt, aid, it, false);
		if (m == M_ERROR)
			return true; /* the search must reach it in scan order to decide */
		/* a counter-consuming candidate that 1.36's search visits can leave counters
		 * reserved although the request fails (I-LEAK, the success-undo leak), which later
		 * branches see: the search must visit it (railfit's 1.34/1.35 rules keep pruning)
		 */
		if (m == M_YES && it->dev->n_counters && s->ver == RF_DRA_1_36 && !s->best &&
		    capacity_fits(s, alt, it->dev))
			return true;
		/* with 1.36's pool-name keyed counters the check depends on which pool a later
		 * device makes the owner: not a test a necessary condition may use */
		if (m == M_YES && capacity_fits(s, alt, it->dev) &&
		    (s->counter_owner || rf_search_counters_fit(s, it->dev)) &&
		    taints_ok(s, alt, it->dev))
			n += it->dev->allow_multiple ? alt->count
						     : 1; /* a shared device may serve again */
	}
	return n >= alt->count;
}

static int
dfs_slot(struct search *s, size_t ci, size_t ri, size_t ai, int64_t k, size_t from)
{
	const struct rf_claim *cl = s->req->claims[ci];
	const struct rf_request_alt *alt = &cl->requests[ri].alts[ai];

	if (alt->all)
		return dfs_all(s, ci, ri, ai);
	if (k == alt->count)
		return next_request(s, ci, ri);

	if (claim_exceeds(s, cl, alt->count - k))
		return LIMIT;
	size_t aid = alt_id(s, ci, ri, ai);
	if (k == 0 && !enough_candidates(s, cl, alt, aid))
		return 0; /* cannot succeed in any order: skip the factorial rescans */
	/* best mode enumerates combinations; so does the 1.36 allocator (slot k+1 after slot k) */
	for (size_t i = s->best || rules_sorted(s) ? from : 0; i < s->n_scan; i++) {
		const struct scan_item *it = &s->scan[i];
		int pool_fatal;
		if (++s->steps > s->budget)
			return fatal(s, RF_SEARCH_BUDGET);
		if (!pool_searchable(s, it, &pool_fatal)) {
			if (pool_fatal && !s->best) {
				if (s->err && !s->err[0])
					snprintf(s->err, s->errlen,
						 "pool %s/%s has duplicate device names: the 1.34 "
						 "allocator aborts when its scan reaches it",
						 it->dev->pool->driver, it->dev->pool->name);
				return fatal(s, RF_SEARCH_POOL_ERROR);
			}
			continue;
		}
		if (in_use(s, cl, alt, it->dev))
			continue;
		enum memo m = rf_search_selectable(s, cl, alt, aid, it, !s->best);
		if (m == M_ERROR) {
			if (s->best)
				continue;
			return fatal(s, RF_SEARCH_CEL_ERROR);
		}
		if (m != M_YES || !capacity_fits(s, alt, it->dev) ||
		    (s->best ? !rf_search_counters_fit(s, it->dev)
			     : !rf_search_counters_check(s, it->dev)))
			continue;
		if (!taints_ok(s, alt, it->dev) ||
		    !rf_search_constraints_take(s, ci, alt->name, it->dev)) {
			/* the released allocators up to 1.36 keep this candidate's counters
			 * reserved */
			if (!s->best && it->dev->n_counters && rules_counter_leak(s) &&
			    !(s->ver >= RF_DRA_1_36 &&
			      rf_search_counters_skipped(s, it->dev, s->cur.n)) &&
			    s->n_leaked < RF_MAX_LEAKED) {
				s->leaked_undo[s->n_leaked] = false;
				s->leaked[s->n_leaked++] = it->dev;
			}
			continue;
		}
		if (push(s, cl, alt, it->dev) < 0)
			return -1;
		int r = dfs_slot(s, ci, ri, ai, k + 1, i + 1);
		if (r > 0 || r == -1)
			return r; /* keep the picks: they are the solution */
		unwind(s, ci, s->cur.n - 1);
		if (r == LIMIT)
			return LIMIT;
	}
	return 0;
}

static int
dfs_request(struct search *s, size_t ci, size_t ri)
{
	const struct rf_request *rq = &s->req->claims[ci]->requests[ri];
	if (!rq->first_available)
		return dfs_slot(s, ci, ri, 0, 0, 0);
	/* firstAvailable: the whole rest of the search for subrequest i before i+1; LIMIT only
	 * when every subrequest hit the limit */
	bool all_limit = true;
	for (size_t a = 0; a < rq->n_alts; a++) {
		int r = dfs_slot(s, ci, ri, a, 0, 0);
		if (r == LIMIT)
			continue;
		all_limit = false;
		if (r != 0)
			return r;
	}
	return all_limit && rq->n_alts ? LIMIT : 0;
}

static int
search_init(struct search *s, const struct rf_search_request *req)
{
	const struct rf_node *n = req->node;
	memset(s, 0, offsetof(struct search, cur));
	s->cur.n = 0;
	s->req = req;
	s->ver = rf_cluster_dra_version(req->cluster);
	s->patch = rf_cluster_dra_patch(req->cluster);
	s->lists = rf_cluster_dra_list_rules(req->cluster);
	s->binding = rf_order_node_has_binding(n);
	s->n_devs = n->n_devices;
	size_t n_req = 0, n_alts = 0;
	for (size_t c = 0; c < req->n_claims; c++)
		for (size_t r = 0; r < req->claims[c]->n_requests; r++, n_req++)
			n_alts += req->claims[c]->requests[r].n_alts;
	/* alt_base and classes in one block */
	s->alt_base = malloc((n_req + 1) * sizeof(size_t) + (n_alts + 1) * sizeof(*s->classes));
	if (!s->alt_base)
		return -ENOMEM;
	s->classes = (const struct rf_class **)(s->alt_base + n_req + 1);
	size_t k = 0;
	for (size_t c = 0; c < req->n_claims; c++) {
		const struct rf_claim *cl = req->claims[c];
		const struct rf_class *const *known = req->classes ? req->classes[c] : NULL;
		for (size_t r = 0, j = 0; r < cl->n_requests; r++) {
			s->alt_base[k++] = s->n_alt_ids;
			for (size_t a = 0; a < cl->requests[r].n_alts; a++, j++) {
				const char *cn = cl->requests[r].alts[a].class_name;
				s->classes[s->n_alt_ids++] =
					known ? known[j]
					: cn  ? rf_cluster_class(req->cluster, cn)
					      : NULL;
			}
		}
	}
	s->memo = calloc(s->n_alt_ids * s->n_devs + 1, 1);
	s->scan = calloc(s->n_devs + 1, sizeof(*s->scan));
	if (!s->memo || !s->scan)
		return -ENOMEM;
	if (req->pinned) {
		rf_assignment_copy(&s->cur, req->pinned);
		s->n_pinned = req->pinned->n;
	}
	return rf_search_counters_init(s);
}

static void
search_release(struct search *s)
{
	rf_lc_free(s->lc);
	s->lc = NULL;
	rf_search_counters_release(s);
	free(s->alt_base);
	free(s->memo);
	free(s->scan);
}

/* Two outcomes are the same when they give the same devices to the same requests, in any order
 * (a count-2 request served from two pools in either order is one outcome). */
static bool
same_assignment(const struct rf_assignment *a, const struct rf_assignment *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		bool found = false;
		for (size_t j = 0; j < b->n && !found; j++)
			found = a->picks[i].dev == b->picks[j].dev &&
				strcmp(a->picks[i].request, b->picks[j].request) == 0;
		if (!found)
			return false;
	}
	return true;
}

int
rf_predict(const struct rf_search_request *req, struct rf_search_result *ret)
{
	const struct rf_node *n = req->node;
	struct search s;
	int r = -ENOMEM;
	bool *pool_rel = NULL;
	bool **slice_rel = NULL;
	struct order o = { 0 };
	unsigned *rel_pos = NULL, *rel_perm = NULL;

	memset(ret, 0, offsetof(struct rf_search_result, outcomes));
	ret->status = RF_SEARCH_INFEASIBLE;
	if (search_init(&s, req) < 0 || rf_search_list_constraints_init(&s) < 0)
		goto out;
	s.budget = STEP_BUDGET;
	s.err = ret->error;
	s.errlen = sizeof(ret->error);

	size_t np = n->n_pools;
	pool_rel = calloc(np + 1, sizeof(bool));
	slice_rel = calloc(np + 1, sizeof(bool *));
	rel_pos = calloc(np + 1, sizeof(unsigned));
	rel_perm = calloc(np + 1, sizeof(unsigned));
	if (!pool_rel || !slice_rel || !rel_pos || !rel_perm || rf_order_identity(n, &o) < 0)
		goto out;
	for (size_t p = 0; p < np; p++)
		if (!(slice_rel[p] = calloc(n->pools[p]->n_slices + 1, sizeof(bool))))
			goto out;
	/* up to 1.35 pool and slice order is random: the orders that can matter; from 1.36 the
	 * model's order (pools by driver and name, slices by name) is the allocator's, once */
	if (!rules_sorted(&s))
		rf_order_relevant_units(&s, pool_rel, slice_rel);

	/* the permutable units: relevant pools (by position), then each pool's relevant slices */
	size_t n_rel = 0;
	for (size_t p = 0; p < np; p++)
		if (pool_rel[p])
			rel_pos[n_rel++] = (unsigned)p;
	for (size_t i = 0; i < n_rel; i++)
		rel_perm[i] = rel_pos[i];

	ret->orders_exhaustive = true;
	for (;;) {
		/* apply the pool permutation at the relevant positions */
		for (size_t i = 0; i < n_rel; i++)
			o.pool_perm[rel_pos[i]] = rel_perm[i];
		/* slices: odometer over pools with more than one relevant slice */
		for (;;) {
			if (ret->n_orders >= RF_MAX_ORDERS || ret->steps > NODE_BUDGET) {
				ret->orders_exhaustive = false;
				goto done;
			}
			/* the first order is the identity, which rf_order_relevant_units() laid out
			 */
			if (!s.scan_identity)
				s.n_scan = rf_order_build_scan(n, s.binding, !rules_sorted(&s), &o,
							       s.scan);
			s.scan_identity = false;
			s.cur.n = s.n_pinned;
			if (s.lc)
				rf_lc_reset(s.lc);
			s.n_leaked = 0; /* one Allocate call per scan order */
			s.steps = 0;
			s.fatal = RF_SEARCH_FOUND;
			int dr = req->n_claims ? dfs_request(&s, 0, 0) : 1;
			if (dr == LIMIT) {
				/* unreachable for claims within the limit (rf_claim_parse_spec):
				 * an All request matching more devices */
				snprintf(ret->error, sizeof(ret->error),
					 "a claim exceeds the limit of %d devices",
					 RF_MAX_CLAIM_RESULTS);
				dr = fatal(&s, RF_SEARCH_TOO_MANY);
			}
			ret->n_orders++;
			ret->steps += s.steps;
			if (dr < 0) {
				ret->status = s.fatal;
				r = 0;
				goto out;
			}
			if (dr > 0) {
				bool dup = false;
				for (size_t i = 0; i < ret->n_outcomes && !dup; i++)
					dup = same_assignment(&ret->outcomes[i], &s.cur);
				if (!dup && ret->n_outcomes < RF_MAX_OUTCOMES)
					rf_assignment_copy(&ret->outcomes[ret->n_outcomes++],
							   &s.cur);
				ret->status = RF_SEARCH_FOUND;
			} else if (ret->n_outcomes) {
				/* feasible in one order and not in another: cannot happen for the
				 * allocator's search (it is complete); keep the feasible ones */
			}
			if (ret->status != RF_SEARCH_FOUND)
				break; /* infeasible does not depend on the order */
			/* advance the slice odometer */
			size_t p = 0;
			for (; p < np; p++) {
				size_t nrs = 0;
				for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
					nrs += slice_rel[p][q];
				if (nrs < 2)
					continue;
				/* permute the relevant slice ids in place within slice_perm */
				unsigned vals[64];
				size_t k = 0;
				for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
					if (slice_rel[p][o.slice_perm[p][q]] && k < 64)
						vals[k++] = o.slice_perm[p][q];
				bool more = rf_order_next_permutation(vals, k);
				k = 0;
				for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
					if (slice_rel[p][o.slice_perm[p][q]] && k < 64)
						o.slice_perm[p][q] = vals[k++];
				if (more)
					break;
			}
			if (p == np)
				break;
		}
		if (ret->status != RF_SEARCH_FOUND || !rf_order_next_permutation(rel_perm, n_rel))
			break;
	}
done:
	r = 0;
out:
	for (size_t p = 0; slice_rel && p < n->n_pools; p++)
		free(slice_rel[p]);
	free(slice_rel);
	rf_order_release(n, &o);
	free(pool_rel);
	free(rel_pos);
	free(rel_perm);
	search_release(&s);
	return r;
}

size_t
rf_search_n_requests(const struct rf_search_request *req)
{
	size_t n = 0;
	for (size_t c = 0; c < req->n_claims; c++)
		n += req->claims[c]->n_requests;
	return n;
}

/* The first check (in enum rf_reject order) that rejects the device, using the search's checks. */
static enum rf_reject
reject_reason(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
	      size_t aid, const struct scan_item *it)
{
	int pool_fatal;
	if (rf_search_selectable(s, cl, alt, aid, it, false) != M_YES)
		return RF_REJECT_SELECTOR;
	if (in_use(s, cl, alt, it->dev))
		return RF_REJECT_IN_USE;
	if (!pool_searchable(s, it, &pool_fatal))
		return RF_REJECT_POOL;
	if (!taints_ok(s, alt, it->dev))
		return RF_REJECT_TAINT;
	if (!capacity_fits(s, alt, it->dev))
		return RF_REJECT_CAPACITY;
	if (!rf_search_counters_fit(s, it->dev))
		return RF_REJECT_COUNTERS;
	return RF_REJECT_NONE;
}

int
rf_predict_rejects(const struct rf_search_request *req, struct rf_request_rejects *ret)
{
	const struct rf_node *n = req->node;
	struct search s;
	size_t k = 0;
	int r = search_init(&s, req);
	if (r < 0)
		goto out;
	for (size_t ci = 0; ci < req->n_claims; ci++) {
		const struct rf_claim *cl = req->claims[ci];
		for (size_t ri = 0; ri < cl->n_requests; ri++) {
			struct rf_request_rejects *rj = &ret[k++];
			const struct rf_request_alt *alt = &cl->requests[ri].alts[0];
			size_t aid = alt_id(&s, ci, ri, 0);
			*rj = (struct rf_request_rejects){ .claim = cl, .alt = alt };
			for (size_t i = 0; i < n->n_devices; i++) {
				struct scan_item it = { .dev = n->devices[i], .ni = (unsigned)i };
				enum rf_reject why = reject_reason(&s, cl, alt, aid, &it);
				rj->by[why]++;
				if (why == RF_REJECT_TAINT && !rj->tainted) {
					rj->tainted = it.dev;
					rj->taint = rf_search_blocking_taint(&s, alt, it.dev);
				}
				if (why != RF_REJECT_NONE && why < RF_REJECT_CAPACITY)
					continue;
				if (rj->n_named < RF_REJECT_NAMED)
					rj->named[rj->n_named++] = it.dev;
			}
		}
	}
out:
	search_release(&s);
	return r;
}

int
rf_predict_best(const struct rf_search_request *req, rf_assignment_score_fn *score, void *userdata,
		struct rf_assignment *ret, bool *ret_found, bool *ret_exhaustive)
{
	const struct rf_node *n = req->node;
	struct search s;
	struct order o = { 0 };
	int r = -ENOMEM;

	if (search_init(&s, req) < 0)
		goto out;
	s.best = true;
	s.score = score;
	s.userdata = userdata;
	s.best_out = ret;
	s.budget = BEST_STEP_BUDGET;
	s.fatal = RF_SEARCH_FOUND;
	if (rf_order_identity(n, &o) < 0)
		goto out;
	s.n_scan = rf_order_build_scan(n, s.binding, !rules_sorted(&s), &o, s.scan);
	s.cur.n = s.n_pinned;
	int dr = req->n_claims ? dfs_request(&s, 0, 0) : leaf(&s);
	if (dr == LIMIT)
		dr = 0;
	*ret_found = s.found;
	*ret_exhaustive = dr >= 0;
	r = 0;
out:
	rf_order_release(n, &o);
	search_release(&s);
	return r;
}
