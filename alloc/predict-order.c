/* Scan orders: the flat scan list of a node's devices in one order of pools and slices (devices
 * with bindingConditions last), the orders' enumeration, and which pools and slices can change
 * the outcome (up to 1.35 the allocator's pool and slice order is random). */
#include <errno.h>
#include <stdlib.h>

#include "alloc/predict-private.h"

int
rf_order_identity(const struct rf_node *n, struct order *o)
{
	o->pool_perm = calloc(n->n_pools + 1, sizeof(unsigned));
	o->slice_perm = calloc(n->n_pools + 1, sizeof(unsigned *));
	if (!o->pool_perm || !o->slice_perm)
		return -ENOMEM;
	for (size_t p = 0; p < n->n_pools; p++) {
		o->pool_perm[p] = (unsigned)p;
		o->slice_perm[p] = calloc(n->pools[p]->n_slices + 1, sizeof(unsigned));
		if (!o->slice_perm[p])
			return -ENOMEM;
		for (unsigned q = 0; q < n->pools[p]->n_slices; q++)
			o->slice_perm[p][q] = q;
	}
	return 0;
}

void
rf_order_release(const struct rf_node *n, struct order *o)
{
	for (size_t p = 0; o->slice_perm && p < n->n_pools; p++)
		free(o->slice_perm[p]);
	free(o->slice_perm);
	free(o->pool_perm);
	o->slice_perm = NULL;
	o->pool_perm = NULL;
}

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

bool
rf_order_node_has_binding(const struct rf_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i]->has_binding_conditions)
			return true;
	return false;
}

/* The scan list in order o. Pools holding binding-condition devices go last; up to 1.35 (the
 * experimental allocator) also such slices within their pool (demote_slices), not from 1.36. */
size_t
rf_order_build_scan(const struct rf_node *n, bool binding, bool demote_slices,
		    const struct order *o, struct scan_item *scan)
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

bool
rf_order_next_permutation(unsigned *a, size_t n)
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

/* Which pools and slices can change the outcome: those holding candidates of a request
 * alternative that has candidates in more than one of them. */
void
rf_order_relevant_units(struct search *s, bool *pool_rel, bool **slice_rel)
{
	const struct rf_node *n = s->req->node;
	struct order ident = { 0 };
	if (rf_order_identity(n, &ident) < 0)
		goto out;
	s->n_scan = rf_order_build_scan(n, s->binding, true, &ident, s->scan);
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
					if (rf_search_selectable(s, cl, alt, aid, &s->scan[i],
								 false) == M_NO)
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
						    rf_search_selectable(s, cl, alt, aid,
									 &s->scan[i],
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
	rf_order_release(n, &ident);
}
