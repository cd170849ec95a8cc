/* What the files of the allocator mirror share: the search of one (node, scan order) and the
 * rules that differ by version; each check in the file of its job (the search and the entry points:
 * predict.c; consumable capacity: predict-capacity.c; counters: predict-counters.c; taints and
 * constraints: predict-constraints.c; scan orders: predict-order.c). Not for use outside alloc/. */
#ifndef RF_ALLOC_PREDICT_PRIVATE_H
#define RF_ALLOC_PREDICT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/alloc-private.h"
#include "alloc/predict.h"

/* counter reservations a search remembers as leaked (struct search leaked[]) */
#define RF_MAX_LEAKED 256

/* A device's selector result for a request alternative (struct search memo[]). */
enum memo { M_UNKNOWN = 0, M_NO, M_YES, M_ERROR };

/* A device in the scan list (predict-order.c). */
struct scan_item {
	const struct rf_device *dev;
	unsigned ni;   /* index in node->devices */
	unsigned pool; /* index in node->pools */
};

/* One search of a node in one scan order (rf_predict), or its best-achievable search
 * (rf_predict_best) or its rejection record (rf_predict_rejects): see predict.c. */
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
	const struct rf_class **classes; /* per alt id: its DeviceClass (NULL: none) */
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

/* A scan order of the node's pools and slices (predict-order.c). */
struct order {
	unsigned *pool_perm;   /* node pool indices in scan order */
	unsigned **slice_perm; /* per node pool: slice indices in scan order */
};

/* ---- the rules that differ by version (reference/dra-allocator-1.36.md section 5) ---- */

/* 1.36+: pools sorted by driver and name, slices by name: one scan order, and slot k+1 of a
 * request scans after slot k (combinations, not permutations) */
static inline bool
rules_sorted(const struct search *s)
{
	return s->ver >= RF_DRA_1_36;
}

/* 1.36.0-1.36.1: an allocationMode All device consuming counters crashes kube-scheduler */
static inline bool
rules_all_counters_panic(const struct search *s)
{
	return s->ver == RF_DRA_1_36 && s->patch >= 0 && s->patch < 2;
}

/* from 1.36.2: devices allocated as shared (shareID) consume their counters too */
static inline bool
rules_shared_counters(const struct search *s)
{
	return s->ver > RF_DRA_1_36 || (s->ver == RF_DRA_1_36 && !rules_all_counters_panic(s));
}

/* up to 1.36: a candidate rejected after its counters were reserved keeps them (I-LEAK) */
static inline bool
rules_counter_leak(const struct search *s)
{
	return s->ver <= RF_DRA_1_36;
}

/* 1.36: giving a multi-allocatable device back (backtracking) keeps the counters it reserved
 * (D362 allocator_incubating.go:1439-1458 releases them only for other devices); fixed in 1.37
 * (#140431). The released 1.34/1.35 allocators have the same code; railfit's rules for them are
 * kept as they were. */
static inline bool
rules_undo_leak(const struct search *s)
{
	return s->ver == RF_DRA_1_36;
}

/* 1.37: a multi-allocatable device allocated as shared skips the counter check even when its
 * allocations carry no consumedCapacity (#140437); up to 1.36 only a consumedCapacity entry
 * (AggregatedCapacity) does (D362 allocator_incubating.go:1603-1606) */
static inline bool
rules_persisted_share_skips(const struct search *s)
{
	return s->ver >= RF_DRA_1_37;
}

/* 1.36: available and consumed counters keyed by pool name (two drivers' pools of one name
 * share them) */
static inline bool
rules_counters_by_pool_name(const struct search *s)
{
	return s->ver == RF_DRA_1_36;
}

/* up to 1.36: distinctAttribute keeps one value per request (the latest device's) */
static inline bool
rules_distinct_per_request(const struct search *s)
{
	return s->ver <= RF_DRA_1_36;
}

static inline size_t
alt_id(const struct search *s, size_t ci, size_t ri, size_t ai)
{
	size_t base = 0;
	for (size_t c = 0; c < ci; c++)
		base += s->req->claims[c]->n_requests;
	return s->alt_base[base + ri] + ai;
}

static inline bool
picked(const struct search *s, const struct rf_device *d, const struct rf_claim *only_claim)
{
	for (size_t p = 0; p < s->cur.n; p++)
		if (s->cur.picks[p].dev == d &&
		    (!only_claim || s->cur.picks[p].claim == only_claim))
			return true;
	return false;
}

/* ---- the checks (predict.c) ---- */

/* Class selectors, then request selectors, memoized per (request alternative, device). */
enum memo rf_search_selectable(struct search *s, const struct rf_claim *cl,
			       const struct rf_request_alt *alt, size_t aid,
			       const struct scan_item *it, bool record_error);

/* ---- consumable capacity (predict-capacity.c) ---- */

/* What one allocation of alt consumes of capacity cap; false when cap cannot serve alt. */
bool rf_search_consumption(const struct search *s, const struct rf_request_alt *alt,
			   const struct rf_capacity *cap, struct rf_quantity *ret);
/* Does d have the capacity alt asks, after allocations (with_allocated) and the search's own
 * picks (with_picks)? */
bool rf_search_capacity_fits_state(const struct search *s, const struct rf_request_alt *alt,
				   const struct rf_device *d, bool with_allocated, bool with_picks);

static inline bool
capacity_fits(const struct search *s, const struct rf_request_alt *alt, const struct rf_device *d)
{
	return rf_search_capacity_fits_state(s, alt, d, true, true);
}

/* ---- counters of partitionable devices (predict-counters.c) ---- */

/* The allocated devices' consumption (s->counter_used), once per search: 0 or -ENOMEM. */
int rf_search_counters_init(struct search *s);
void rf_search_counters_release(struct search *s);
/* Do d's counters fit (step 4)? railfit's pruning: rf_search_counters_check() is the
 * allocator's own check. */
bool rf_search_counters_fit(const struct search *s, const struct rf_device *d);
bool rf_search_counters_check(struct search *s, const struct rf_device *d);
/* 1.36+: does d skip the counter check (a multi-allocatable device already in use, counted
 * before pick `upto`)? */
bool rf_search_counters_skipped(const struct search *s, const struct rf_device *d, size_t upto);

/* ---- taints and constraints (predict-constraints.c) ---- */

/* The first taint of d that keeps alt from it, or NULL. */
const struct rf_taint *rf_search_blocking_taint(const struct search *s,
						const struct rf_request_alt *alt,
						const struct rf_device *d);

static inline bool
taints_ok(const struct search *s, const struct rf_request_alt *alt, const struct rf_device *d)
{
	return rf_search_blocking_taint(s, alt, d) == NULL;
}

/* The constraints' state of the 1.36+ allocators (s->lc): 0 or -ENOMEM. */
int rf_search_list_constraints_init(struct search *s);
/* Step 6: may claim ci's request alt_name take d? Then it is taken (until released). */
bool rf_search_constraints_take(struct search *s, size_t ci, const char *alt_name,
				const struct rf_device *d);
void rf_search_constraints_release(struct search *s, size_t ci, const char *alt_name,
				   const struct rf_device *d);

/* ---- scan orders (predict-order.c) ---- */

/* The identity order (pools and slices as the node publishes them): 0 or -ENOMEM; release it
 * with rf_order_release() either way. */
int rf_order_identity(const struct rf_node *n, struct order *o);
void rf_order_release(const struct rf_node *n, struct order *o);
/* Has the node devices with bindingConditions (whose pools the scan visits last)? */
bool rf_order_node_has_binding(const struct rf_node *n);
/* The scan list in order o; returns its length. */
size_t rf_order_build_scan(const struct rf_node *n, bool binding, bool demote_slices,
			   const struct order *o, struct scan_item *scan);
/* The next permutation of a[0..n) in lexicographic order; false (back at the first) after the
 * last. */
bool rf_order_next_permutation(unsigned *a, size_t n);
/* Which pools and slices can change the outcome (up to 1.35); lays out the identity order in
 * s->scan. */
void rf_order_relevant_units(struct search *s, bool *pool_rel, bool **slice_rel);

#endif
