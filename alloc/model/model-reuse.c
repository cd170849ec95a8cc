/* Claims and pods kept from one generation to the next (struct rf_reuse in model-private.h).
 *
 * In live mode a watch event changes one object; rebuilding a generation must not re-parse the
 * 12,000 claims and pods that did not change. The store hands over the same json_t for an
 * unchanged object, so the object's address is the key: the table holds a reference to every
 * object it parsed, so an address cannot be reused for another object while it is a key. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"

struct rf_reuse *
rf_reuse_new(void)
{
	struct rf_reuse *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	atomic_init(&r->refs, 1);
	r->arena = rf_arena_new();
	r->mask = 1023;
	r->slots = calloc(r->mask + 1, sizeof(*r->slots));
	if (!r->arena || !r->slots) {
		rf_arena_free(r->arena);
		free(r->slots);
		free(r);
		return NULL;
	}
	return r;
}

struct rf_reuse *
rf_reuse_ref(struct rf_reuse *r)
{
	if (r)
		atomic_fetch_add(&r->refs, 1);
	return r;
}

void
rf_reuse_unref(struct rf_reuse *r)
{
	if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	rf_reuse_seal(r);
	for (size_t i = 0; i <= r->mask; i++)
		json_decref(r->slots[i].keep);
	free(r->slots);
	rf_arena_free(r->arena);
	free(r);
}

void
rf_reuse_seal(struct rf_reuse *r)
{
	if (r->sealed)
		return;
	for (size_t i = 0; i <= r->mask; i++)
		json_decref((json_t *)r->slots[i].obj);
	r->sealed = true;
}

static size_t
slot_of(const json_t *obj, size_t mask)
{
	uint64_t h = (uint64_t)(uintptr_t)obj * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20) & mask;
}

static int
grow(struct rf_reuse *r)
{
	size_t mask = r->mask * 2 + 1;
	struct reuse_slot *slots = calloc(mask + 1, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= r->mask; i++) {
		if (!r->slots[i].obj)
			continue;
		size_t j = slot_of(r->slots[i].obj, mask);
		while (slots[j].obj)
			j = (j + 1) & mask;
		slots[j] = r->slots[i];
	}
	free(r->slots);
	r->slots = slots;
	r->mask = mask;
	return 0;
}

struct reuse_slot *
rf_reuse_find(struct rf_reuse *r, const json_t *obj)
{
	/* at most three quarters full: 24,000 claims and pods in 32,768 slots, not 65,536 (linear
	 * probing's ~8 probes for an object not in it, at a full build, cost less than 1 MB) */
	if (4 * (r->used + 1) > 3 * (r->mask + 1) && grow(r) < 0)
		return NULL;
	size_t i = slot_of(obj, r->mask);
	while (r->slots[i].obj && r->slots[i].obj != obj)
		i = (i + 1) & r->mask;
	return &r->slots[i];
}

const struct reuse_slot *
rf_reuse_lookup(const struct rf_reuse *r, const json_t *obj)
{
	size_t i = slot_of(obj, r->mask);
	while (r->slots[i].obj && r->slots[i].obj != obj)
		i = (i + 1) & r->mask;
	return r->slots[i].obj ? &r->slots[i] : NULL;
}

int
rf_reuse_fill(struct rf_reuse *r, struct reuse_slot *slot, const json_t *obj, void *val,
	      json_t *keep, struct rf_cluster *c, size_t first_warning)
{
	size_t n = c->n_warnings > first_warning ? c->n_warnings - first_warning : 0;
	slot->warnings = NULL;
	if (n) {
		slot->warnings = rf_arena_calloc(r->arena, n + 1, sizeof(char *));
		if (!slot->warnings) {
			json_decref(keep);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			if (!(slot->warnings[i] =
				      rf_arena_strdup(r->arena, c->warnings[first_warning + i]))) {
				json_decref(keep);
				return -ENOMEM;
			}
	}
	slot->obj = json_incref((json_t *)obj);
	slot->val = val;
	slot->keep = keep;
	r->used++;
	return 0;
}

void
rf_reuse_warn(struct rf_cluster *c, const struct reuse_slot *slot)
{
	for (const char *const *w = slot->warnings; w && *w; w++)
		rf_cluster_warn(c, "%s", *w);
}

bool
rf_reuse_stale(const struct rf_reuse *r)
{
	/* objects replaced since it was started outnumber the live ones: parse afresh (each
	 * object once more), which bounds what it holds to about twice the cluster */
	return r->sealed || r->abandoned || r->used > 2 * r->live + 4096;
}

static struct rf_build_marks *
marks_of(void *v, size_t off)
{
	return (struct rf_build_marks *)((char *)v + off);
}

int
rf_reuse_merge(struct rf_arena *a, void *const *prev_arr, size_t n_prev, void **fresh,
	       size_t n_fresh, size_t marks_off, unsigned long mark,
	       int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n)
{
	return rf_reuse_merge_gone(a, prev_arr, n_prev, fresh, n_fresh, marks_off, mark, cmp, ret,
				   ret_n, NULL, NULL);
}

int
rf_reuse_merge_gone(struct rf_arena *a, void *const *prev_arr, size_t n_prev, void **fresh,
		    size_t n_fresh, size_t marks_off, unsigned long mark,
		    int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n,
		    int (*gone)(void *arg, void *v), void *arg)
{
	void **out = rf_arena_calloc(a, n_prev + n_fresh + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	qsort(fresh, n_fresh, sizeof(*fresh), cmp);
	size_t i = 0, j = 0, n = 0;
	while (i < n_prev || j < n_fresh) {
		if (i < n_prev && marks_of(prev_arr[i], marks_off)->seen != mark) {
			/* gone, or replaced by a fresh object */
			if (gone && gone(arg, prev_arr[i]) < 0)
				return -ENOMEM;
			i++;
			continue;
		}
		if (j == n_fresh || (i < n_prev && cmp(&prev_arr[i], &fresh[j]) <= 0))
			out[n++] = prev_arr[i++];
		else
			out[n++] = fresh[j++];
	}
	*ret = out;
	*ret_n = n;
	return 0;
}
