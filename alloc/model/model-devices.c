/* Cluster model, part 1: ResourceSlices into pools (highest generation, completeness, duplicate
 * names) and devices (attributes normalised to domain/id, capacities, taints, counters, locality
 * facts). Runs on the thread building a generation. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/memo.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"
#include "config/grow.h"

static int
dev_key_cmp(const char *driver, const char *pool, const char *name, const struct rf_device *d)
{
	int r = strcmp(driver, d->pool->driver);
	if (!r)
		r = strcmp(pool, d->pool->name);
	if (!r)
		r = strcmp(name, d->name);
	return r;
}

static int
dev_cmp(const void *a, const void *b)
{
	const struct rf_device *x = *(struct rf_device *const *)a;
	return dev_key_cmp(x->pool->driver, x->pool->name, x->name, *(struct rf_device *const *)b);
}

/* The pool (driver, name) among c's pools (c->pool_order: sorted by driver, then name), or
 * NULL. */
struct rf_pool *
rf_model_find_pool(const struct rf_cluster *c, const char *driver, const char *pool)
{
	size_t lo = 0, hi = c->n_pool_order;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(driver, c->pool_order[mid]->driver);
		if (!r)
			r = strcmp(pool, c->pool_order[mid]->name);
		if (r == 0)
			return c->pool_order[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int
rf_model_index_devices(struct rf_cluster *c)
{
	if (c->layout->patched || c->layout->dup_names)
		return 0;
	size_t cap = 16;
	while (cap < 2 * c->n_devices)
		cap *= 2;
	if (!(c->dev_index = calloc(cap, sizeof(*c->dev_index))))
		return -ENOMEM;
	c->dev_index_mask = cap - 1;
	for (size_t i = 0; i < c->n_devices; i++) {
		struct rf_device *d = c->devices[i];
		size_t k = rf_fingerprint(d->pool->driver, d->pool->name, d->name) & (cap - 1);
		while (c->dev_index[k])
			k = (k + 1) & (cap - 1);
		c->dev_index[k] = d;
	}
	return 0;
}

void
rf_model_unindex_devices(struct rf_cluster *c)
{
	free(c->dev_index);
	c->dev_index = NULL;
}

/* The pool first, then the device in the pool's run of gidx (sorted by name): a patched layout
 * (model-patch.c) keeps unchanged pools' gidx, so c->devices is not sorted as a whole. */
struct rf_device *
rf_model_find_device(const struct rf_cluster *c, const char *driver, const char *pool,
		     const char *name)
{
	if (c->dev_index) { /* a layout built in full without duplicate names */
		size_t k = rf_fingerprint(driver, pool, name) & c->dev_index_mask;
		for (; c->dev_index[k]; k = (k + 1) & c->dev_index_mask)
			if (dev_key_cmp(driver, pool, name, c->dev_index[k]) == 0)
				return c->dev_index[k];
		return NULL;
	}
	if (!c->layout || !c->layout->patched) { /* sorted as a whole (a duplicate name finds
						  * the device it always found) */
		size_t lo = 0, hi = c->n_devices;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int r = dev_key_cmp(driver, pool, name, c->devices[mid]);
			if (r == 0)
				return c->devices[mid];
			if (r < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		return NULL;
	}
	const struct rf_pool *p = rf_model_find_pool(c, driver, pool);
	if (!p)
		return NULL;
	struct rf_device *const *run = c->devices + p->first_gidx;
	size_t lo = 0, hi = p->n_devices;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, run[mid]->name);
		if (r == 0)
			return run[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool
rf_model_strv_has(const struct rf_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

/* ---- slices and pools ---- */

static int
slice_cmp(const void *a, const void *b)
{
	const struct rf_slice *x = *(struct rf_slice *const *)a, *y = *(struct rf_slice *const *)b;
	int r = strcmp(x->driver, y->driver);
	if (!r)
		r = strcmp(x->pool, y->pool);
	if (!r)
		r = (x->generation < y->generation) -
		    (x->generation > y->generation); /* newest first */
	if (!r) /* stable, deterministic order of slices within a pool */
		r = strcmp(x->name, y->name);
	return r;
}

/* sharedCounters of the pool's slices at its generation, each told its slice's index */
static int
pool_counter_sets(struct rf_cluster *c, struct rf_pool *p)
{
	size_t n = 0;
	for (unsigned s = 0; s < p->n_slices; s++)
		n += p->slices[s]->n_counter_sets;
	if (!n)
		return 0;
	p->counter_sets = rf_arena_calloc(c->arena, n, sizeof(*p->counter_sets));
	if (!p->counter_sets)
		return -ENOMEM;
	for (unsigned s = 0; s < p->n_slices; s++)
		for (size_t i = 0; i < p->slices[s]->n_counter_sets; i++) {
			p->counter_sets[p->n_counter_sets] = p->slices[s]->counter_sets[i];
			p->counter_sets[p->n_counter_sets++].slice = s;
		}
	return 0;
}

/* From 1.35 a pool whose counter sets repeat a name, or with a device consuming a counter set
 * or counter the pool does not publish (on any node), is invalid (the allocator's buildPool);
 * 1.34 looks counter sets up per slice and does not check. NULL when the pool is fine. */
static const char *
counters_problem(const struct rf_pool *p)
{
	for (size_t i = 0; i < p->n_counter_sets; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->counter_sets[i].name, p->counter_sets[j].name) == 0)
				return "duplicate counter set name";
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct rf_device *d = p->devices[i];
		for (size_t k = 0; k < d->n_counters; k++) {
			const struct rf_counter_set *cs = rf_pool_counter_set(
				p, d->counters[k].counter_set, d->slice, RF_DRA_1_35);
			if (!cs)
				return "a device consumes a counter set the pool does not have";
			for (size_t m = 0; m < d->counters[k].n; m++) {
				size_t c = 0;
				while (c < cs->n &&
				       strcmp(cs->names[c], d->counters[k].names[m]) != 0)
					c++;
				if (c == cs->n)
					return "a device consumes a counter its counter set does not have";
			}
		}
	}
	return NULL;
}

const struct rf_counter_set *
rf_pool_counter_set(const struct rf_pool *p, const char *name, unsigned slice,
		    enum rf_dra_version ver)
{
	for (size_t i = 0; i < p->n_counter_sets; i++) {
		const struct rf_counter_set *cs = &p->counter_sets[i];
		if (strcmp(cs->name, name) == 0 && (ver != RF_DRA_1_34 || cs->slice == slice))
			return cs;
	}
	return NULL;
}

/* The slice's devices themselves for the pools of l, when no other layout uses them: l holds the
 * loan (and a reference) until its arena goes (rf_model_layout_unref). false when another layout
 * has them, or on OOM: the caller copies them. */
static bool
borrow_devices(struct rf_layout *l, struct rf_slice *s)
{
	if (!l || atomic_exchange(&s->lent, true))
		return false;
	if (rf_grow(&l->lent, &l->cap_lent, l->n_lent + 1, sizeof(*l->lent)) < 0) {
		atomic_store(&s->lent, false);
		return false;
	}
	l->lent[l->n_lent++] = rf_slice_ref(s);
	/* what the previous borrower set in them, undone */
	for (size_t i = 0; i < s->n_devices; i++)
		rf_slice_device_as_published(s, i, &s->devices[i]);
	return true;
}

/* One pool from its slices (refs[0..n), one driver and pool, sorted by slice_cmp: newest
 * generation first); its devices are the slices' own when lend_ok (one build at a time uses the
 * records: rf_cluster_objects.lend_records) and no other layout uses them (borrow_devices: the
 * live store keeps a slice's record across layouts, and two of them exist at once while a
 * layout is built in full), else copies. NULL on OOM. */
struct rf_pool *
rf_model_build_pool(struct rf_cluster *c, struct rf_slice *const *refs, size_t n, bool lend_ok)
{
	struct rf_pool *p = rf_arena_alloc(c->arena, sizeof(*p));
	if (!p)
		return NULL;
	p->driver = refs[0]->driver;
	p->name = refs[0]->pool;
	p->generation = refs[0]->generation;
	p->slice_count = refs[0]->count;
	p->node = refs[0]->node;
	size_t ndev = 0;
	for (size_t s = 0; s < n && refs[s]->generation == p->generation; s++) {
		p->n_slices++;
		ndev += refs[s]->n_devices;
		if (!refs[s]->node || !p->node || strcmp(refs[s]->node, p->node) != 0)
			p->node = NULL; /* not node-local as a whole */
	}
	p->complete = (int64_t)p->n_slices == p->slice_count;
	p->n_seen = p->n_slices;
	/* the layout keeps its own list of the pool's slices */
	struct rf_slice **own = rf_arena_calloc(c->arena, p->n_slices, sizeof(*own));
	if (!own)
		return NULL;
	memcpy(own, refs, p->n_slices * sizeof(*own));
	p->slices = own;
	/* older generations matter only where they may reach a node the newest slices do not */
	bool elsewhere = false;
	for (size_t s = p->n_slices; s < n && !elsewhere; s++)
		elsewhere = !p->node || !refs[s]->node || strcmp(refs[s]->node, p->node) != 0;
	if (elsewhere) {
		p->n_older = (unsigned)(n - p->n_slices);
		p->older = rf_arena_calloc(c->arena, p->n_older, sizeof(*p->older));
		if (!p->older)
			return NULL;
		memcpy(p->older, refs + p->n_slices, p->n_older * sizeof(*p->older));
	}
	if (pool_counter_sets(c, p) < 0)
		return NULL;
	for (unsigned s = 0; s < p->n_slices; s++)
		for (size_t w = 0; w < own[s]->n_counter_warnings; w++)
			rf_cluster_warn(c, "%s", own[s]->counter_warnings[w]);
	p->devices = rf_arena_calloc(c->arena, ndev ? ndev : 1, sizeof(*p->devices));
	if (!p->devices)
		return NULL;
	for (unsigned s = 0; s < p->n_slices; s++) {
		bool lend = lend_ok && borrow_devices(c->layout, own[s]);
		struct rf_device *copies =
			lend ? own[s]->devices
			     : rf_arena_calloc(c->arena, own[s]->n_devices + 1, sizeof(*copies));
		if (!copies && own[s]->n_devices)
			return NULL;
		for (size_t w = 0; w < own[s]->n_device_warnings; w++)
			rf_cluster_warn(c, "%s", own[s]->device_warnings[w]);
		for (size_t di = 0; di < own[s]->n_devices; di++) {
			/* the slice's device, with what this layout says about it: its
			 * attributes and capacities stay the slice's */
			struct rf_device *d = &copies[di];
			if (!lend) { /* as published: another layout may use the slice's own */
				*d = own[s]->devices[di];
				rf_slice_device_as_published(own[s], di, d);
			}
			d->pool = p;
			d->slice = s;
			d->idx = (unsigned)p->n_devices;
			p->devices[p->n_devices++] = d;
		}
	}
	const char *why = rf_model_pool_problem(c, p);
	p->invalid = why != NULL;
	if (why && strcmp(why, "duplicate device names") == 0 && c->layout)
		c->layout->dup_names = true;
	if (why)
		rf_cluster_warn(c, "pool %s/%s: %s; the allocator treats the pool as invalid",
				p->driver, p->name, why);
	return p;
}

const char *
rf_model_pool_counters_problem(const struct rf_pool *p)
{
	return counters_problem(p);
}

const char *
rf_model_pool_problem(const struct rf_cluster *c, const struct rf_pool *p)
{
	for (size_t i = 0; i < p->n_devices; i++)
		for (size_t q = 0; q < i; q++)
			if (strcmp(p->devices[q]->name, p->devices[i]->name) == 0)
				return "duplicate device names";
	if (rf_cluster_dra_version(c) != RF_DRA_1_34)
		return counters_problem(p);
	return NULL;
}

void
rf_model_sort_slices(struct rf_slice **refs, size_t n)
{
	qsort(refs, n, sizeof(*refs), slice_cmp);
}

/* A pool's devices by name in c->devices[first_gidx ..], their gidx set. */
void
rf_model_place_pool_devices(struct rf_cluster *c, struct rf_pool *p, unsigned first_gidx)
{
	p->first_gidx = first_gidx;
	memcpy(c->devices + first_gidx, p->devices, p->n_devices * sizeof(*p->devices));
	qsort(c->devices + first_gidx, p->n_devices, sizeof(*c->devices), dev_cmp);
	for (size_t i = 0; i < p->n_devices; i++)
		c->devices[first_gidx + i]->gidx = first_gidx + (unsigned)i;
}

int
rf_model_build_pools(struct rf_cluster *c, struct rf_slice *const *slices, size_t n)
{
	size_t k = 0;
	struct rf_slice **refs = calloc(n ? n : 1, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (slices[i]->skip)
			rf_cluster_warn(c, "%s", slices[i]->skip);
		else
			refs[k++] = slices[i];
	}
	qsort(refs, k, sizeof(*refs), slice_cmp);

	/* count pools, keeping only the highest generation of each */
	int r = -ENOMEM;
	c->pools = rf_arena_calloc(c->arena, k ? k : 1, sizeof(*c->pools));
	if (!c->pools)
		goto out;
	size_t ndev_total = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && strcmp(refs[j]->driver, refs[i]->driver) == 0 &&
		       strcmp(refs[j]->pool, refs[i]->pool) == 0)
			j++;
		if ((r = rf_model_stopping(c, c->n_pools + 1)) < 0)
			goto out;
		r = -ENOMEM;
		struct rf_pool *p = rf_model_build_pool(c, refs + i, j - i, c->lend_devices);
		if (!p)
			goto out;
		ndev_total += p->n_devices;
		p->idx = (unsigned)c->n_pools;
		c->pools[c->n_pools++] = p;
		i = j;
	}
	c->pool_order = c->pools;
	c->n_pool_order = c->n_pools;
	c->devices = rf_arena_calloc(c->arena, ndev_total ? ndev_total : 1, sizeof(*c->devices));
	if (!c->devices)
		goto out;
	/* sorted by driver, pool, name: the pools are in driver, pool order already, so each
	 * pool's devices sorted by name make one run of indexes (no sort of every device) */
	for (size_t i = 0; i < c->n_pools; i++) {
		rf_model_place_pool_devices(c, c->pools[i], (unsigned)c->n_devices);
		c->n_devices += c->pools[i]->n_devices;
	}
	r = 0;
out:
	free(refs);
	return r;
}
