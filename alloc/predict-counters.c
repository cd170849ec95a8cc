/* Counters of partitionable devices (step 4 of the checks, reference/dra-allocator.md section 7
 * and dra-allocator-1.36.md 3.2): what allocated devices consume, what the search has taken and
 * leaked, and whether a device's consumption still fits; the rules up to 1.35 and from 1.36. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/predict-private.h"

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

/* sum plus what consumption cons takes of counter name */
static struct rf_quantity
add_consumed(struct rf_quantity sum, const struct rf_counter_consumption *cons, const char *name)
{
	for (size_t k = 0; k < cons->n; k++)
		if (strcmp(cons->names[k], name) == 0)
			sum = rf_quantity_add(sum, cons->values[k]);
	return sum;
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
			sum = add_consumed(sum, cons, name);
		}
	}
	return sum;
}

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
bool
rf_search_counters_skipped(const struct search *s, const struct rf_device *d, size_t upto)
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
		if (i < s->cur.n && (s->cur.picks[i].pinned || rf_search_counters_skipped(s, d, i)))
			continue; /* allocated already (counter_used), or counted at its first pick
				   */
		if (!counter_pools_share(s, d->pool, pool))
			continue;
		for (size_t c = 0; c < d->n_counters; c++) {
			const struct rf_counter_consumption *cons = &d->counters[c];
			if (strcmp(cons->counter_set, set) != 0)
				continue;
			sum = add_consumed(sum, cons, name);
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
	if (rf_search_counters_skipped(s, d, s->cur.n))
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

bool
rf_search_counters_fit(const struct search *s, const struct rf_device *d)
{
	if (!d->n_counters)
		return true;
	return s->ver >= RF_DRA_1_36 ? counters_fit_136(s, d) : counters_fit_135(s, d);
}

/* The allocator's own counter check (not railfit's pruning): 1.36 fixes here which pool's
 * counters stand for a pool name, the first time a device of that name reaches the check. */
bool
rf_search_counters_check(struct search *s, const struct rf_device *d)
{
	if (d->n_counters && s->counter_owner) {
		size_t pi = node_pool_index(s, d->pool);
		const struct rf_node *n = s->req->node;
		if (pi != SIZE_MAX && s->counter_owner[pi] == SIZE_MAX)
			for (size_t p = 0; p < n->n_pools; p++)
				if (strcmp(n->pools[p]->name, d->pool->name) == 0)
					s->counter_owner[p] = pi;
	}
	return rf_search_counters_fit(s, d);
}

/* Consumption of the node's allocated devices, once per search. */
int
rf_search_counters_init(struct search *s)
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

void
rf_search_counters_release(struct search *s)
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
