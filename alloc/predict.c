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

#define STEP_BUDGET          200000UL /* device checks per scan order */
#define NODE_BUDGET          400000UL /* device checks per node, over all scan orders */
#define RF_MAX_LEAKED        256
#define RF_MAX_CLAIM_RESULTS 32
#define BEST_STEP_BUDGET     100000UL

enum memo { M_UNKNOWN = 0, M_NO, M_YES, M_ERROR };

/* The search's return values: > 0 found, 0 no solution in this branch, -1 fatal (s->fatal), and
 * LIMIT: the claim would exceed AllocationResultsMaxSize. Like the allocator's
 * errAllocationResultMaxSizeExceeded, LIMIT skips the other devices of the requests before it
 * (their counts, not their devices, decide) up to the nearest firstAvailable choice or the claim
 * boundary: without it a 32 + 32 request pair rescans C(64, 32) device sets. */
#define LIMIT (-2)

struct scan_item {
	const struct rf_device *dev;
	unsigned ni;   /* index in node->devices */
	unsigned pool; /* index in node->pools */
};

struct search {
	const struct rf_search_request *req;
	enum rf_dra_version ver;
	int patch; /* RF_DRA_PATCH_NEWEST or the patch level (1.36.0-1.36.1 differ from 1.36.2) */
	struct rf_dra_list_rules lists; /* list-typed attributes: version and feature gate */
	/* from 1.36: the constraints' own state, added to and removed from as the allocator does
	 * (the stale intersection of lists, distinctAttribute's entry per request); NULL up to
	 * 1.35 and in the best-achievable search */
	struct rf_lc_state *lc;
	struct scan_item *scan;
	size_t n_scan;
	bool binding;        /* the node has devices with bindingConditions */
	bool scan_identity;  /* scan holds the identity order (relevant_units built it) */
	unsigned char *memo; /* [alt_id * n_devs + ni] */
	size_t n_devs;
	size_t *alt_base; /* per (claim, request): first alt id */
	size_t n_alt_ids;
	size_t n_pinned;
	/* best mode */
	bool best;
	rf_assignment_score_fn *score;
	void *userdata;
	double best_score;
	struct rf_assignment *best_out;
	bool found;
	unsigned long steps, budget;
	/* counters (partitionable devices): consumption of allocated devices per node pool, set
	 * and counter; and devices whose counters the allocator reserved although it then rejected
	 * them for a taint or a constraint (it does not roll that back: I-LEAK, v0.34.9/v0.35.6) */
	struct rf_quantity ***counter_used; /* [node pool][set][counter], NULL when no counters */
	/* 1.36 caches the available counters by pool *name*: the node pool whose counter sets
	 * stand for every pool of that name, fixed by the first device checked (SIZE_MAX: none
	 * yet), per node pool */
	size_t *counter_owner;
	size_t n_leaked;
	enum rf_search_status fatal;
	char *err;
	size_t errlen;
	/* the large members last: search_init() clears only what comes before them (about 10 KiB
	 * per node otherwise); only cur.n and n_leaked entries are ever read */
	struct rf_assignment cur;
	const struct rf_device *leaked[RF_MAX_LEAKED];
	/* leaked[i] is a multi-allocatable device taken and given back (the success-undo leak),
	 * not a rejected candidate */
	bool leaked_undo[RF_MAX_LEAKED];
};

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

/* ---- the rules that differ by version (reference/dra-allocator-1.36.md section 5) ---- */

/* 1.36+: pools sorted by driver and name, slices by name: one scan order, and slot k+1 of a
 * request scans after slot k (combinations, not permutations) */
static bool
rules_sorted(const struct search *s)
{
	return s->ver >= RF_DRA_1_36;
}

/* 1.36.0-1.36.1: an allocationMode All device consuming counters crashes kube-scheduler */
static bool
rules_all_counters_panic(const struct search *s)
{
	return s->ver == RF_DRA_1_36 && s->patch >= 0 && s->patch < 2;
}

/* from 1.36.2: devices allocated as shared (shareID) consume their counters too */
static bool
rules_shared_counters(const struct search *s)
{
	return s->ver > RF_DRA_1_36 || (s->ver == RF_DRA_1_36 && !rules_all_counters_panic(s));
}

/* up to 1.36: a candidate rejected after its counters were reserved keeps them (I-LEAK) */
static bool
rules_counter_leak(const struct search *s)
{
	return s->ver <= RF_DRA_1_36;
}

/* 1.36: giving a multi-allocatable device back (backtracking) keeps the counters it reserved
 * (D362 allocator_incubating.go:1439-1458 releases them only for other devices); fixed in 1.37
 * (#140431). The released 1.34/1.35 allocators have the same code; railfit's rules for them are
 * kept as they were. */
static bool
rules_undo_leak(const struct search *s)
{
	return s->ver == RF_DRA_1_36;
}

/* 1.37: a multi-allocatable device allocated as shared skips the counter check even when its
 * allocations carry no consumedCapacity (#140437); up to 1.36 only a consumedCapacity entry
 * (AggregatedCapacity) does (D362 allocator_incubating.go:1603-1606) */
static bool
rules_persisted_share_skips(const struct search *s)
{
	return s->ver >= RF_DRA_1_37;
}

/* 1.36: available and consumed counters keyed by pool name (two drivers' pools of one name
 * share them) */
static bool
rules_counters_by_pool_name(const struct search *s)
{
	return s->ver == RF_DRA_1_36;
}

/* up to 1.36: distinctAttribute keeps one value per request (the latest device's) */
static bool
rules_distinct_per_request(const struct search *s)
{
	return s->ver <= RF_DRA_1_36;
}

static size_t
alt_id(const struct search *s, size_t ci, size_t ri, size_t ai)
{
	size_t base = 0;
	for (size_t c = 0; c < ci; c++)
		base += s->req->claims[c]->n_requests;
	return s->alt_base[base + ri] + ai;
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
static enum memo
selectable(struct search *s, const struct rf_claim *cl, const struct rf_request_alt *alt,
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
	if (s->ver == RF_DRA_1_36 && !s->lists.cel && alt->n_selectors &&
	    (la = list_attribute(it->dev)) && (!alt->class || alt->class->n_selectors == 0)) {
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
	if ((alt->class && alt->class->n_selectors) || alt->n_selectors) {
		for (size_t i = 0; i < it->dev->n_attrs && res == M_YES; i++)
			if (it->dev->attrs[i].kind == RF_ATTR_OTHER) {
				res = M_ERROR;
				text = "(every selector)";
				snprintf(err.msg, sizeof(err.msg),
					 "attribute %s: unsupported attribute value",
					 it->dev->attrs[i].name);
			}
	}
	if (alt->class && res == M_YES) {
		int r = rf_class_matches(s->req->cluster, alt->class, it->dev,
					 record_error ? &err : NULL, &text);
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

static rf_i128
ceil_div(rf_i128 a, rf_i128 b)
{
	return (a + b - 1) / b;
}

#define NANO_PER_MILLI 1000000

/* Is every bound of cap's validRange a whole number of milli-units (and the step at least 1m)?
 * Then 1.37 rounds in milli-units (useMilli). */
static bool
range_in_milli(const struct rf_capacity *cap)
{
	const struct rf_quantity *q[3] = { &cap->range_min,
					   cap->has_range_max ? &cap->range_max : NULL,
					   cap->has_range_step ? &cap->range_step : NULL };
	const rf_i128 max_milli = (rf_i128)INT64_MAX * NANO_PER_MILLI;
	for (size_t i = 0; i < 3; i++)
		if (q[i] && (q[i]->nano % NANO_PER_MILLI != 0 || q[i]->nano > max_milli ||
			     q[i]->nano < -max_milli))
			return false;
	return !cap->has_range_step || cap->range_step.nano >= NANO_PER_MILLI;
}

/* How a validRange with a step rounds a request up: in whole units (Quantity.Value(), itself
 * rounded up, so a min or step of 0.5 counts as 1: D362 consumable_capacity.go:114-134) in 1.36;
 * in 1.37 (DRAFractionalCapacityRange, beta and on, kubernetes#140161) in milli-units when the
 * range is (range_in_milli), else in whole units as before. railfit's rules for 1.34/1.35 (where
 * consumable capacity is an alpha feature, off by default) keep their exact arithmetic. */
static bool
rules_range_whole_units(const struct search *s, const struct rf_capacity *cap)
{
	if (s->ver == RF_DRA_1_36)
		return true;
	return s->ver >= RF_DRA_1_37 && !range_in_milli(cap);
}

/* What one allocation of alt consumes of capacity cap (dra-api.md section 10.5); false when the
 * request cannot be satisfied by this capacity at all. */
static bool
consumption(const struct search *s, const struct rf_request_alt *alt, const struct rf_capacity *cap,
	    struct rf_quantity *ret)
{
	const struct rf_quantity *asked = NULL;
	for (size_t i = 0; i < alt->n_cap_requests; i++)
		if (strcmp(alt->cap_request_names[i], cap->raw_name) == 0)
			asked = &alt->cap_request_values[i];
	if (!asked) {
		*ret = cap->has_default ? cap->def : cap->value;
		return true;
	}
	struct rf_quantity v = *asked;
	if (cap->has_range) {
		if (rf_quantity_cmp(v, cap->range_min) < 0) {
			v = cap->range_min;
		} else if (cap->has_range_step && rules_range_whole_units(s, cap)) {
			rf_i128 step = rf_quantity_value(cap->range_step);
			rf_i128 min = rf_quantity_value(cap->range_min);
			rf_i128 over = (rf_i128)rf_quantity_value(v) - min;
			/* the API requires a step > 0 (0 would panic upstream); past INT64_MAX
			 * upstream cannot represent the result either */
			if (step <= 0)
				return false;
			rf_i128 val = min + (over / step + (over % step != 0)) * step;
			if (val > INT64_MAX || val < INT64_MIN)
				return false;
			v.nano = val * 1000000000;
		} else if (cap->has_range_step && cap->range_step.nano > 0) {
			rf_i128 over = v.nano - cap->range_min.nano;
			v.nano = cap->range_min.nano +
				 ceil_div(over, cap->range_step.nano) * cap->range_step.nano;
		}
		if (cap->has_range_max && rf_quantity_cmp(v, cap->range_max) > 0)
			return false;
	} else if (cap->n_valid_values) {
		size_t i = 0;
		while (i < cap->n_valid_values && rf_quantity_cmp(cap->valid_values[i], v) < 0)
			i++;
		if (i == cap->n_valid_values)
			return false;
		v = cap->valid_values[i];
	}
	*ret = v;
	return true;
}

/* with_allocated, with_picks: count what allocations hold of the device, and what the search
 * itself has taken of it */
static bool
capacity_fits_state(const struct search *s, const struct rf_request_alt *alt,
		    const struct rf_device *d, bool with_allocated, bool with_picks)
{
	/* every requested key must exist on the device */
	for (size_t i = 0; i < alt->n_cap_requests; i++) {
		bool found = false;
		for (size_t c = 0; c < d->n_caps && !found; c++)
			found = strcmp(d->caps[c].raw_name, alt->cap_request_names[i]) == 0;
		if (!found)
			return false;
	}
	if (!d->allow_multiple) {
		/* an exclusive device must simply be large enough */
		for (size_t i = 0; i < alt->n_cap_requests; i++)
			for (size_t c = 0; c < d->n_caps; c++)
				if (strcmp(d->caps[c].raw_name, alt->cap_request_names[i]) == 0 &&
				    rf_quantity_cmp(alt->cap_request_values[i], d->caps[c].value) >
					    0)
					return false;
		return true;
	}
	for (size_t c = 0; c < d->n_caps; c++) {
		const struct rf_capacity *cap = &d->caps[c];
		struct rf_quantity total = { 0 }, q;
		if (!consumption(s, alt, cap, &q))
			return false;
		total = q;
		const struct rf_quantity *used = rf_dev_use(s->req->cluster, d)->consumed;
		if (used && with_allocated && !s->req->ignore_usage) {
			total = rf_quantity_add(total, used[c]);
			for (size_t k = 0; s->req->release && k < s->req->release->n_claims; k++)
				total = rf_quantity_sub(
					total,
					rf_claim_consumed(s->req->release->claims[k], d, cap));
		}
		for (size_t p = 0; with_picks && p < s->cur.n; p++) {
			const struct rf_pick *pk = &s->cur.picks[p];
			if (pk->dev == d && pk->alt && consumption(s, pk->alt, cap, &q))
				total = rf_quantity_add(total, q);
		}
		if (rf_quantity_cmp(total, cap->value) > 0)
			return false;
	}
	return true;
}

static bool
capacity_fits(const struct search *s, const struct rf_request_alt *alt, const struct rf_device *d)
{
	return capacity_fits_state(s, alt, d, true, true);
}

static size_t
node_pool_index(const struct search *s, const struct rf_pool *p)
{
	const struct rf_node *n = s->req->node;
	for (size_t i = 0; i < n->n_pools; i++)
		if (n->pools[i] == p)
			return i;
	return SIZE_MAX;
}

static bool
device_released(const struct search *s, const struct rf_device *d)
{
	return s->req->ignore_usage ||
	       rf_release_has_claim(s->req->release, rf_dev_use(s->req->cluster, d)->holder);
}

/* What the search itself has taken from counter (set, name): picks, plus the leaked ones. */
static struct rf_quantity
counter_taken(const struct search *s, const struct rf_pool *pool, const struct rf_counter_set *cs,
	      const char *name)
{
	struct rf_quantity sum = { 0 };
	size_t n = s->cur.n + s->n_leaked;
	for (size_t i = 0; i < n; i++) {
		const struct rf_device *d =
			i < s->cur.n ? s->cur.picks[i].dev : s->leaked[i - s->cur.n];
		if (i < s->cur.n && s->cur.picks[i].pinned)
			continue; /* already allocated: counted in counter_used */
		if (d->pool != pool)
			continue;
		bool again = false; /* a shared device consumes its counters once */
		for (size_t j = 0; j < i && j < s->cur.n && d->allow_multiple && !again; j++)
			again = s->cur.picks[j].dev == d;
		if (again)
			continue;
		for (size_t c = 0; c < d->n_counters; c++) {
			const struct rf_counter_consumption *cons = &d->counters[c];
			if (rf_pool_counter_set(pool, cons->counter_set, d->slice, s->ver) != cs)
				continue;
			for (size_t k = 0; k < cons->n; k++)
				if (strcmp(cons->names[k], name) == 0)
					sum = rf_quantity_add(sum, cons->values[k]);
		}
	}
	return sum;
}

static bool picked(const struct search *s, const struct rf_device *d,
		   const struct rf_claim *only_claim);

/* Step 4 of the checks (dra-allocator.md section 7): every counter the device consumes must stay
 * >= 0 after what allocated devices and this search already consume (up to 1.35). */
static bool
counters_fit_135(const struct search *s, const struct rf_device *d)
{
	if (!d->n_counters)
		return true;
	/* the allocator skips the check for a multi-allocatable device whose capacity is in use
	 * already (allocated shares, or taken in this search): its counters are consumed once */
	if (d->allow_multiple &&
	    ((rf_dev_use(s->req->cluster, d)->n_shares && !s->req->ignore_usage) ||
	     picked(s, d, NULL)))
		return true;
	const struct rf_pool *pool = d->pool;
	size_t pi = node_pool_index(s, pool);
	for (size_t c = 0; c < d->n_counters; c++) {
		const struct rf_counter_consumption *cons = &d->counters[c];
		const struct rf_counter_set *cs =
			rf_pool_counter_set(pool, cons->counter_set, d->slice, s->ver);
		if (!cs || pi == SIZE_MAX)
			return false; /* a counter set the device names is not published */
		size_t si = (size_t)(cs - pool->counter_sets);
		for (size_t k = 0; k < cons->n; k++) {
			size_t ci = 0;
			while (ci < cs->n && strcmp(cs->names[ci], cons->names[k]) != 0)
				ci++;
			if (ci == cs->n)
				return false;
			struct rf_quantity avail = cs->values[ci];
			if (s->counter_used)
				avail = rf_quantity_sub(avail, s->counter_used[pi][si][ci]);
			avail = rf_quantity_sub(avail, counter_taken(s, pool, cs, cons->names[k]));
			avail = rf_quantity_sub(avail, cons->values[k]);
			if (avail.nano < 0)
				return false;
		}
	}
	return true;
}

/* 1.36+: a device allowing multiple allocations whose capacity is already in use (allocated as
 * shared, or picked by this search before index `upto`) skips the counter check: its counters
 * were counted when it was first taken. */
static bool
counters_skipped(const struct search *s, const struct rf_device *d, size_t upto)
{
	if (!d->allow_multiple)
		return false;
	/* a persisted share: up to 1.36 only one with consumedCapacity counts, and the scheduler
	 * writes consumedCapacity exactly when the device has capacities (D362
	 * allocator_incubating.go:1413-1431), so a device without any is the one recorded only by
	 * its shareID */
	if (rf_dev_use(s->req->cluster, d)->n_shares > 0 && !s->req->ignore_usage &&
	    (rules_persisted_share_skips(s) || d->n_caps > 0))
		return true;
	for (size_t i = 0; i < upto && i < s->cur.n; i++)
		if (s->cur.picks[i].dev == d && !s->cur.picks[i].pinned)
			return true;
	/* given back, the entry of a device without capacities stays in allocatingCapacity (an
	 * empty consumedCapacity is never removed, :1444-1448): it is "in use" for the rest of
	 * the Allocate call */
	for (size_t i = 0; d->n_caps == 0 && i < s->n_leaked; i++)
		if (s->leaked_undo[i] && s->leaked[i] == d)
			return true;
	return false;
}

/* 1.36+: do two pools' devices count against the same counters? The same pool (1.37), any pool
 * of the same name (1.36 keys its counter caches by pool name). */
static bool
counter_pools_share(const struct search *s, const struct rf_pool *a, const struct rf_pool *b)
{
	return a == b || (rules_counters_by_pool_name(s) && strcmp(a->name, b->name) == 0);
}

/* 1.36+: what this search has reserved of counter (set, name) in the pools sharing pool's
 * counters: its picks, the reservations leaked on rejected candidates, and cand (NULL: none). */
static struct rf_quantity
counter_consumed(const struct search *s, const struct rf_pool *pool, const char *set,
		 const char *name, const struct rf_device *cand)
{
	struct rf_quantity sum = { 0 };
	size_t n = s->cur.n + s->n_leaked + (cand != NULL);
	for (size_t i = 0; i < n; i++) {
		const struct rf_device *d = i < s->cur.n                 ? s->cur.picks[i].dev
					    : i < s->cur.n + s->n_leaked ? s->leaked[i - s->cur.n]
									 : cand;
		if (i < s->cur.n && (s->cur.picks[i].pinned || counters_skipped(s, d, i)))
			continue; /* allocated already (counter_used), or counted at its first pick
				   */
		if (!counter_pools_share(s, d->pool, pool))
			continue;
		for (size_t c = 0; c < d->n_counters; c++) {
			const struct rf_counter_consumption *cons = &d->counters[c];
			if (strcmp(cons->counter_set, set) != 0)
				continue;
			for (size_t k = 0; k < cons->n; k++)
				if (strcmp(cons->names[k], name) == 0)
					sum = rf_quantity_add(sum, cons->values[k]);
		}
	}
	return sum;
}

/* The node pool whose counter sets are the available counters for node pool pi. */
static size_t
counter_owner(const struct search *s, size_t pi)
{
	return s->counter_owner && s->counter_owner[pi] != SIZE_MAX ? s->counter_owner[pi] : pi;
}

/* Step 4 from 1.36 (dra-allocator-1.36.md 3.2, D362 checkAvailableCounters): with the device's
 * consumption added, no counter of *any* counter set of the pool may be below what is consumed
 * (an already overdrawn set blocks every counter-consuming device of the pool). */
static bool
counters_fit_136(const struct search *s, const struct rf_device *d)
{
	const struct rf_node *n = s->req->node;
	const struct rf_pool *pool = d->pool;
	size_t pi = node_pool_index(s, pool);
	if (counters_skipped(s, d, s->cur.n))
		return true;
	if (pi == SIZE_MAX)
		return false;
	for (size_t c = 0; c < d->n_counters; c++)
		if (!rf_pool_counter_set(pool, d->counters[c].counter_set, d->slice, s->ver))
			return false; /* a counter set the device names is not published */
	size_t oi = counter_owner(s, pi);
	const struct rf_pool *op = n->pools[oi];
	for (size_t si = 0; si < op->n_counter_sets; si++) {
		const struct rf_counter_set *cs = &op->counter_sets[si];
		for (size_t ci = 0; ci < cs->n; ci++) {
			struct rf_quantity avail = cs->values[ci];
			if (s->counter_used && s->counter_used[oi])
				avail = rf_quantity_sub(avail, s->counter_used[oi][si][ci]);
			struct rf_quantity used =
				counter_consumed(s, op, cs->name, cs->names[ci], d);
			if (rf_quantity_cmp(avail, used) < 0)
				return false;
		}
	}
	return true;
}

static bool
counters_fit(const struct search *s, const struct rf_device *d)
{
	if (!d->n_counters)
		return true;
	return s->ver >= RF_DRA_1_36 ? counters_fit_136(s, d) : counters_fit_135(s, d);
}

/* The allocator's own counter check (not railfit's pruning): 1.36 fixes here which pool's
 * counters stand for a pool name, the first time a device of that name reaches the check. */
static bool
counters_check(struct search *s, const struct rf_device *d)
{
	if (d->n_counters && s->counter_owner) {
		size_t pi = node_pool_index(s, d->pool);
		const struct rf_node *n = s->req->node;
		if (pi != SIZE_MAX && s->counter_owner[pi] == SIZE_MAX)
			for (size_t p = 0; p < n->n_pools; p++)
				if (strcmp(n->pools[p]->name, d->pool->name) == 0)
					s->counter_owner[p] = pi;
	}
	return counters_fit(s, d);
}

/* Consumption of the node's allocated devices, once per search. */
static int
counters_init(struct search *s)
{
	const struct rf_node *n = s->req->node;
	bool any = false;
	for (size_t p = 0; p < n->n_pools; p++)
		any = any || n->pools[p]->n_counter_sets;
	if (!any)
		return 0;
	s->counter_used = calloc(n->n_pools, sizeof(*s->counter_used));
	if (!s->counter_used)
		return -ENOMEM;
	if (rules_counters_by_pool_name(s)) {
		if (!(s->counter_owner = malloc(n->n_pools * sizeof(*s->counter_owner))))
			return -ENOMEM;
		for (size_t p = 0; p < n->n_pools; p++)
			s->counter_owner[p] = SIZE_MAX;
	}
	for (size_t p = 0; p < n->n_pools; p++) {
		const struct rf_pool *pool = n->pools[p];
		if (!pool->n_counter_sets)
			continue;
		s->counter_used[p] = calloc(pool->n_counter_sets, sizeof(**s->counter_used));
		if (!s->counter_used[p])
			return -ENOMEM;
		for (size_t i = 0; i < pool->n_counter_sets; i++) {
			s->counter_used[p][i] =
				calloc(pool->counter_sets[i].n + 1, sizeof(struct rf_quantity));
			if (!s->counter_used[p][i])
				return -ENOMEM;
		}
		for (size_t d = 0; d < pool->n_devices; d++) {
			const struct rf_device *dev = pool->devices[d];
			const struct rf_dev_use *u = rf_dev_use(s->req->cluster, dev);
			/* exclusively allocated devices consume counters; from 1.36.2 also devices
			 * allocated as shared (D362 IsDeviceAllocated) */
			bool allocated = u->holder || (rules_shared_counters(s) && u->n_shares > 0);
			if (!allocated || device_released(s, dev))
				continue;
			for (size_t c = 0; c < dev->n_counters; c++) {
				const struct rf_counter_consumption *cons = &dev->counters[c];
				const struct rf_counter_set *cs = rf_pool_counter_set(
					pool, cons->counter_set, dev->slice, s->ver);
				if (!cs)
					continue;
				size_t si = (size_t)(cs - pool->counter_sets);
				for (size_t k = 0; k < cons->n; k++)
					for (size_t ci = 0; ci < cs->n; ci++)
						if (strcmp(cs->names[ci], cons->names[k]) == 0)
							s->counter_used[p][si][ci] =
								rf_quantity_add(
									s->counter_used[p][si][ci],
									cons->values[k]);
			}
		}
	}
	return 0;
}

static void
counters_release(struct search *s)
{
	const struct rf_node *n = s->req->node;
	free(s->counter_owner);
	s->counter_owner = NULL;
	if (!s->counter_used)
		return;
	for (size_t p = 0; p < n->n_pools; p++) {
		for (size_t i = 0; s->counter_used[p] && i < n->pools[p]->n_counter_sets; i++)
			free(s->counter_used[p][i]);
		free(s->counter_used[p]);
	}
	free(s->counter_used);
	s->counter_used = NULL;
}

static bool
tolerated(const struct rf_request_alt *alt, const struct rf_taint *t)
{
	for (size_t i = 0; i < alt->n_tolerations; i++) {
		const struct rf_toleration *tol = &alt->tolerations[i];
		if (tol->effect && tol->effect[0] && strcmp(tol->effect, t->effect) != 0)
			continue;
		bool exists = tol->op && strcmp(tol->op, "Exists") == 0;
		if (exists) {
			if (!tol->key || !tol->key[0] || strcmp(tol->key, t->key) == 0)
				return true;
			continue;
		}
		if (tol->key && strcmp(tol->key, t->key) == 0 &&
		    strcmp(tol->value ? tol->value : "", t->value ? t->value : "") == 0)
			return true;
	}
	return false;
}

/* The first taint of d that keeps alt from it, or NULL. */
static const struct rf_taint *
blocking_taint(const struct search *s, const struct rf_request_alt *alt, const struct rf_device *d)
{
	for (size_t i = 0; i < d->n_taints; i++) {
		const struct rf_taint *t = &d->taints[i];
		bool counts = s->ver == RF_DRA_1_34 || strcmp(t->effect, "NoSchedule") == 0 ||
			      strcmp(t->effect, "NoExecute") == 0;
		if (counts && !tolerated(alt, t))
			return t;
	}
	return NULL;
}

static bool
taints_ok(const struct search *s, const struct rf_request_alt *alt, const struct rf_device *d)
{
	return blocking_taint(s, alt, d) == NULL;
}

static bool
attr_equal(const struct rf_attr *a, const struct rf_attr *b)
{
	if (a->kind != b->kind || a->kind == RF_ATTR_OTHER)
		return false;
	switch (a->kind) {
	case RF_ATTR_INT:
		return a->i == b->i;
	case RF_ATTR_BOOL:
		return a->b == b->b;
	case RF_ATTR_STRING:
	case RF_ATTR_VERSION:
		return strcmp(a->s, b->s) == 0;
	case RF_ATTR_OTHER:
	case RF_ATTR_LIST: /* the default allocator compares scalars only */
		break;
	}
	return false;
}

static bool
constraints_ok(const struct search *s, const struct rf_claim *cl, const char *alt_name,
	       const struct rf_device *d)
{
	if (s->lists.sets)
		return rf_lc_fits(&s->cur, cl, alt_name, d);
	for (size_t i = 0; i < cl->n_constraints; i++) {
		const struct rf_constraint *co = &cl->constraints[i];
		if (!rf_constraint_covers(co, alt_name))
			continue;
		if (co->match_attribute) {
			const struct rf_attr *mine =
				rf_attr_find(d->attrs, d->n_attrs, co->match_attribute);
			/* up to 1.35 a value it cannot read fails at once; from 1.36 a list is
			 * accepted as the first (reference) value and matches nothing after */
			if (!mine || mine->kind == RF_ATTR_OTHER ||
			    (mine->kind == RF_ATTR_LIST && s->ver < RF_DRA_1_36))
				return false;
			for (size_t p = 0; p < s->cur.n; p++) {
				const struct rf_pick *pk = &s->cur.picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				const struct rf_attr *ref = rf_attr_find(
					pk->dev->attrs, pk->dev->n_attrs, co->match_attribute);
				if (!ref || !attr_equal(ref, mine))
					return false;
				break; /* the first device fixed the reference value */
			}
		}
		if (co->distinct_attribute) {
			const struct rf_attr *mine =
				rf_attr_find(d->attrs, d->n_attrs, co->distinct_attribute);
			/* 1.35 fails on a value of a kind it does not know (the API server's
			 * validation lets none through; a newer kind would be one) */
			if (!mine || (mine->kind == RF_ATTR_OTHER && s->ver != RF_DRA_1_34))
				return false;
			/* v0.35-v0.36 keep one value per request name: the latest device of each
			 * (so does v0.34, comparing the values' pointers: only the same device is
			 * a duplicate); 1.37 compares every device (#140600) */
			for (size_t p = s->cur.n; p-- > 0;) {
				const struct rf_pick *pk = &s->cur.picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				bool latest = true;
				if (!rules_distinct_per_request(s))
					goto compare;
				for (size_t q = p + 1; q < s->cur.n && latest; q++)
					latest = s->cur.picks[q].claim != cl ||
						 strcmp(s->cur.picks[q].request, pk->request) != 0;
				if (!latest)
					continue;
compare:;
				/* a list against any value compared with: the scalar comparison's
				 * "unknown value type" (D362 incubating/constraint.go:125-130) */
				if (mine->kind == RF_ATTR_LIST && s->ver >= RF_DRA_1_36)
					return false;
				const struct rf_attr *o = rf_attr_find(
					pk->dev->attrs, pk->dev->n_attrs, co->distinct_attribute);
				if (s->ver == RF_DRA_1_34 ? pk->dev == d : o && attr_equal(o, mine))
					return false;
			}
		}
	}
	return true;
}

/* Step 6 for claim ci: with list semantics the allocator's constraints keep state, added to
 * here and undone by constraints_release() (list_constraints.h); otherwise, and for the
 * best-achievable search, a check against the picks. */
static bool
constraints_take(struct search *s, size_t ci, const char *alt_name, const struct rf_device *d)
{
	if (s->lc && !s->best)
		return rf_lc_add(s->lc, ci, alt_name, d);
	return constraints_ok(s, s->req->claims[ci], alt_name, d);
}

static void
constraints_release(struct search *s, size_t ci, const char *alt_name, const struct rf_device *d)
{
	if (s->lc && !s->best)
		rf_lc_remove(s->lc, ci, alt_name, d);
}

/* Drop the picks of claim ci after the first n, newest first (the allocator's rollbacks). */
static void
unwind(struct search *s, size_t ci, size_t n)
{
	while (s->cur.n > n) {
		const struct rf_pick *pk = &s->cur.picks[s->cur.n - 1];
		const struct rf_device *d = pk->dev;
		/* whether this pick reserved counters is what counters_skipped() said when it was
		 * taken: nothing about d changed since (a later pick of d skipped the check) */
		if (!s->best && rules_undo_leak(s) && !pk->pinned && d->allow_multiple &&
		    d->n_counters && !counters_skipped(s, d, s->cur.n - 1) &&
		    s->n_leaked < RF_MAX_LEAKED) {
			s->leaked_undo[s->n_leaked] = true;
			s->leaked[s->n_leaked++] = d;
		}
		s->cur.n--;
		constraints_release(s, ci, pk->request, d);
	}
}

static bool
picked(const struct search *s, const struct rf_device *d, const struct rf_claim *only_claim)
{
	for (size_t p = 0; p < s->cur.n; p++)
		if (s->cur.picks[p].dev == d &&
		    (!only_claim || s->cur.picks[p].claim == only_claim))
			return true;
	return false;
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
		enum memo m = selectable(s, cl, alt, aid, it, true);
		if (m == M_ERROR)
			return fatal(s, RF_SEARCH_CEL_ERROR);
		if (m != M_YES)
			continue;
		/* consumable capacity: "all" is the devices whose capacity can serve the request
		 * (the allocator leaves the others out), after what is allocated from 1.35 on
		 * (v0.34.9's suite expects a device used up by allocations to fail All) */
		if (!capacity_fits_state(s, alt, it->dev, s->ver != RF_DRA_1_34, false))
			continue;
		s->steps++;
		if (in_use(s, cl, alt, it->dev) || !capacity_fits(s, alt, it->dev))
			goto fail;
		if (it->dev->n_counters && rules_all_counters_panic(s) &&
		    !counters_skipped(s, it->dev, s->cur.n)) {
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
		if (!counters_check(s, it->dev) || !taints_ok(s, alt, it->dev))
			goto fail;
		if (!constraints_take(s, ci, alt->name, it->dev)) {
			if (s->err && !s->err[0])
				snprintf(s->err, s->errlen,
					 "claim %s/%s request %s (allocationMode All): device %s "
					 "violates a constraint",
					 cl->ns, cl->name, alt->name, it->dev->name);
			return fatal(s, RF_SEARCH_POOL_ERROR);
		}
		if (claim_exceeds(s, cl, 1)) {
			constraints_release(s, ci, alt->name, it->dev);
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
		pk->has_bw = consumption(s, alt, d->bandwidth, &pk->bw);
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
		enum memo m = selectable(s, cl, alt, aid, it, false);
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
		    (s->counter_owner || counters_fit(s, it->dev)) && taints_ok(s, alt, it->dev))
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
		enum memo m = selectable(s, cl, alt, aid, it, !s->best);
		if (m == M_ERROR) {
			if (s->best)
				continue;
			return fatal(s, RF_SEARCH_CEL_ERROR);
		}
		if (m != M_YES || !capacity_fits(s, alt, it->dev) ||
		    (s->best ? !counters_fit(s, it->dev) : !counters_check(s, it->dev)))
			continue;
		if (!taints_ok(s, alt, it->dev) || !constraints_take(s, ci, alt->name, it->dev)) {
			/* the released allocators up to 1.36 keep this candidate's counters
			 * reserved */
			if (!s->best && it->dev->n_counters && rules_counter_leak(s) &&
			    !(s->ver >= RF_DRA_1_36 && counters_skipped(s, it->dev, s->cur.n)) &&
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

/* ---- scan orders ---- */

struct order {
	unsigned *pool_perm;   /* node pool indices in scan order */
	unsigned **slice_perm; /* per node pool: slice indices in scan order */
};

/* Does a pool (or one slice of it, slice < 0 = any) hold devices with bindingConditions? The
 * allocator that handles them (experimental, selected whenever such fields exist since the API
 * server drops them with the gate off) visits those pools and slices after the others. */
static bool
has_binding(const struct rf_node *n, const struct rf_pool *pool, int slice)
{
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->pool == pool && d->has_binding_conditions &&
		    (slice < 0 || d->slice == (unsigned)slice))
			return true;
	}
	return false;
}

static bool
node_has_binding(const struct rf_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i]->has_binding_conditions)
			return true;
	return false;
}

/* The scan list in order o. Pools holding binding-condition devices go last; up to 1.35 (the
 * experimental allocator) also such slices within their pool (demote_slices), not from 1.36. */
static size_t
build_scan(const struct rf_node *n, bool binding, bool demote_slices, const struct order *o,
	   struct scan_item *scan)
{
	size_t k = 0;
	for (int pass = 0; pass < (binding ? 2 : 1); pass++) {
		for (size_t pi = 0; pi < n->n_pools; pi++) {
			unsigned p = o->pool_perm[pi];
			const struct rf_pool *pool = n->pools[p];
			if (binding && has_binding(n, pool, -1) != (pass == 1))
				continue;
			for (int spass = 0; spass < 2; spass++) {
				for (unsigned si = 0; si < pool->n_slices; si++) {
					unsigned sl = o->slice_perm[p][si];
					if (pass == 1 && demote_slices &&
					    has_binding(n, pool, (int)sl) != (spass == 1))
						continue;
					if ((pass == 0 || !demote_slices) && spass == 1)
						continue;
					/* the node's devices of this pool and slice, in published
					 * order */
					for (size_t i = 0; i < n->n_devices; i++) {
						const struct rf_device *d = n->devices[i];
						if (d->pool != pool || d->slice != sl)
							continue;
						scan[k].dev = d;
						scan[k].ni = (unsigned)i;
						scan[k].pool = p;
						k++;
					}
				}
			}
		}
	}
	return k;
}

static bool
next_permutation(unsigned *a, size_t n)
{
	if (n < 2)
		return false;
	size_t i = n - 1;
	while (i > 0 && a[i - 1] >= a[i])
		i--;
	if (i == 0) {
		/* wrap around to the first (ascending) order, so that odometers restart cleanly */
		for (size_t l = 0, r = n - 1; l < r; l++, r--) {
			unsigned t = a[l];
			a[l] = a[r];
			a[r] = t;
		}
		return false;
	}
	size_t j = n - 1;
	while (a[j] <= a[i - 1])
		j--;
	unsigned t = a[i - 1];
	a[i - 1] = a[j];
	a[j] = t;
	for (size_t l = i, r = n - 1; l < r; l++, r--) {
		t = a[l];
		a[l] = a[r];
		a[r] = t;
	}
	return true;
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
	s->binding = node_has_binding(n);
	s->n_devs = n->n_devices;
	size_t n_req = 0;
	for (size_t c = 0; c < req->n_claims; c++)
		n_req += req->claims[c]->n_requests;
	s->alt_base = calloc(n_req + 1, sizeof(size_t));
	if (!s->alt_base)
		return -ENOMEM;
	size_t k = 0;
	for (size_t c = 0; c < req->n_claims; c++)
		for (size_t r = 0; r < req->claims[c]->n_requests; r++) {
			s->alt_base[k++] = s->n_alt_ids;
			s->n_alt_ids += req->claims[c]->requests[r].n_alts;
		}
	s->memo = calloc(s->n_alt_ids * s->n_devs + 1, 1);
	s->scan = calloc(s->n_devs + 1, sizeof(*s->scan));
	if (!s->memo || !s->scan)
		return -ENOMEM;
	if (req->pinned) {
		rf_assignment_copy(&s->cur, req->pinned);
		s->n_pinned = req->pinned->n;
	}
	return counters_init(s);
}

/* The constraints' state of the 1.36+ allocators (rf_predict only; none without constraints). */
static int
list_constraints_init(struct search *s)
{
	const struct rf_node *n = s->req->node;
	size_t max_list = 1, n_constraints = 0;
	/* up to 1.35 railfit's rules check the picks (constraints_ok) */
	if (s->ver < RF_DRA_1_36)
		return 0;
	for (size_t c = 0; c < s->req->n_claims; c++)
		n_constraints += s->req->claims[c]->n_constraints;
	if (!n_constraints)
		return 0;
	for (size_t i = 0; s->lists.sets && i < n->n_devices; i++)
		for (size_t a = 0; a < n->devices[i]->n_attrs; a++)
			if (n->devices[i]->attrs[a].kind == RF_ATTR_LIST &&
			    n->devices[i]->attrs[a].list->n > max_list)
				max_list = n->devices[i]->attrs[a].list->n;
	s->lc = rf_lc_new(s->req->claims, s->req->n_claims, s->lists.sets,
			  !rules_distinct_per_request(s), max_list);
	return s->lc ? 0 : -ENOMEM;
}

static void
search_release(struct search *s)
{
	rf_lc_free(s->lc);
	s->lc = NULL;
	counters_release(s);
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

/* Which pools and slices can change the outcome: those holding candidates of a request
 * alternative that has candidates in more than one of them. */
static void
relevant_units(struct search *s, bool *pool_rel, bool **slice_rel)
{
	const struct rf_node *n = s->req->node;
	struct order ident;
	unsigned *pp = calloc(n->n_pools ? n->n_pools : 1, sizeof(unsigned));
	unsigned **sp = calloc(n->n_pools ? n->n_pools : 1, sizeof(unsigned *));
	if (!pp || !sp)
		goto out;
	for (size_t p = 0; p < n->n_pools; p++) {
		pp[p] = (unsigned)p;
		sp[p] = calloc(n->pools[p]->n_slices + 1, sizeof(unsigned));
		if (!sp[p])
			goto out;
		for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
			sp[p][q] = q;
	}
	ident.pool_perm = pp;
	ident.slice_perm = sp;
	s->n_scan = build_scan(n, s->binding, true, &ident, s->scan);
	s->scan_identity = true;
	for (size_t c = 0; c < s->req->n_claims; c++) {
		const struct rf_claim *cl = s->req->claims[c];
		for (size_t r = 0; r < cl->n_requests; r++)
			for (size_t a = 0; a < cl->requests[r].n_alts; a++) {
				const struct rf_request_alt *alt = &cl->requests[r].alts[a];
				size_t aid = alt_id(s, c, r, a);
				/* mark the pools and slices of this alternative */
				bool hit[64] = { 0 };
				int distinct = 0;
				for (size_t i = 0; i < s->n_scan; i++) {
					if (selectable(s, cl, alt, aid, &s->scan[i], false) == M_NO)
						continue; /* a selector error is order-dependent too
							   */
					unsigned p = s->scan[i].pool;
					if (p < 64 && !hit[p]) {
						hit[p] = true;
						distinct++;
					}
				}
				for (unsigned p = 0; p < n->n_pools && p < 64; p++)
					if (hit[p] && distinct > 1)
						pool_rel[p] = true;
				for (unsigned p = 0; p < n->n_pools && p < 64; p++) {
					if (!hit[p] || n->pools[p]->n_slices < 2)
						continue;
					unsigned first = ~0u;
					bool multi = false;
					for (size_t i = 0; i < s->n_scan; i++) {
						if (s->scan[i].pool != p ||
						    selectable(s, cl, alt, aid, &s->scan[i],
							       false) == M_NO)
							continue;
						if (first == ~0u)
							first = s->scan[i].dev->slice;
						else if (s->scan[i].dev->slice != first)
							multi = true;
					}
					if (multi)
						for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
							slice_rel[p][q] = true;
				}
			}
	}
	/* 1.34 aborts when the scan reaches an invalid pool: whether it gets there first depends
	 * on the pool order */
	bool invalid = false;
	for (size_t p = 0; p < n->n_pools; p++)
		invalid = invalid || n->pools[p]->invalid;
	if (s->ver == RF_DRA_1_34 && invalid && n->n_pools > 1)
		for (size_t p = 0; p < n->n_pools; p++)
			pool_rel[p] = true;
out:
	for (size_t p = 0; sp && p < n->n_pools; p++)
		free(sp[p]);
	free(sp);
	free(pp);
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
	if (search_init(&s, req) < 0 || list_constraints_init(&s) < 0)
		goto out;
	s.budget = STEP_BUDGET;
	s.err = ret->error;
	s.errlen = sizeof(ret->error);

	size_t np = n->n_pools;
	pool_rel = calloc(np + 1, sizeof(bool));
	slice_rel = calloc(np + 1, sizeof(bool *));
	o.pool_perm = calloc(np + 1, sizeof(unsigned));
	o.slice_perm = calloc(np + 1, sizeof(unsigned *));
	rel_pos = calloc(np + 1, sizeof(unsigned));
	rel_perm = calloc(np + 1, sizeof(unsigned));
	if (!pool_rel || !slice_rel || !o.pool_perm || !o.slice_perm || !rel_pos || !rel_perm)
		goto out;
	for (size_t p = 0; p < np; p++) {
		slice_rel[p] = calloc(n->pools[p]->n_slices + 1, sizeof(bool));
		o.slice_perm[p] = calloc(n->pools[p]->n_slices + 1, sizeof(unsigned));
		if (!slice_rel[p] || !o.slice_perm[p])
			goto out;
		o.pool_perm[p] = (unsigned)p;
		for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
			o.slice_perm[p][q] = q;
	}
	/* up to 1.35 pool and slice order is random: the orders that can matter; from 1.36 the
	 * model's order (pools by driver and name, slices by name) is the allocator's, once */
	if (!rules_sorted(&s))
		relevant_units(&s, pool_rel, slice_rel);

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
			/* the first order is the identity, which relevant_units() laid out */
			if (!s.scan_identity)
				s.n_scan = build_scan(n, s.binding, !rules_sorted(&s), &o, s.scan);
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
				bool more = next_permutation(vals, k);
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
		if (ret->status != RF_SEARCH_FOUND || !next_permutation(rel_perm, n_rel))
			break;
	}
done:
	r = 0;
out:
	for (size_t p = 0; p < n->n_pools; p++) {
		if (slice_rel)
			free(slice_rel[p]);
		if (o.slice_perm)
			free(o.slice_perm[p]);
	}
	free(slice_rel);
	free(o.slice_perm);
	free(o.pool_perm);
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
	if (selectable(s, cl, alt, aid, it, false) != M_YES)
		return RF_REJECT_SELECTOR;
	if (in_use(s, cl, alt, it->dev))
		return RF_REJECT_IN_USE;
	if (!pool_searchable(s, it, &pool_fatal))
		return RF_REJECT_POOL;
	if (!taints_ok(s, alt, it->dev))
		return RF_REJECT_TAINT;
	if (!capacity_fits(s, alt, it->dev))
		return RF_REJECT_CAPACITY;
	if (!counters_fit(s, it->dev))
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
					rj->taint = blocking_taint(&s, alt, it.dev);
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
	o.pool_perm = calloc(n->n_pools + 1, sizeof(unsigned));
	o.slice_perm = calloc(n->n_pools + 1, sizeof(unsigned *));
	if (!o.pool_perm || !o.slice_perm)
		goto out;
	for (size_t p = 0; p < n->n_pools; p++) {
		o.pool_perm[p] = (unsigned)p;
		o.slice_perm[p] = calloc(n->pools[p]->n_slices + 1, sizeof(unsigned));
		if (!o.slice_perm[p])
			goto out;
		for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
			o.slice_perm[p][q] = q;
	}
	s.n_scan = build_scan(n, s.binding, !rules_sorted(&s), &o, s.scan);
	s.cur.n = s.n_pinned;
	int dr = req->n_claims ? dfs_request(&s, 0, 0) : leaf(&s);
	if (dr == LIMIT)
		dr = 0;
	*ret_found = s.found;
	*ret_exhaustive = dr >= 0;
	r = 0;
out:
	for (size_t p = 0; o.slice_perm && p < n->n_pools; p++)
		free(o.slice_perm[p]);
	free(o.slice_perm);
	free(o.pool_perm);
	search_release(&s);
	return r;
}
