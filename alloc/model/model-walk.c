/* Cluster model: the claims and pods of a generation found by position. The store hands each
 * build new arrays of the objects it keeps, in the order it keeps them: an object that did not
 * change is the very same json_t at the same place (or one place off after a deletion). So the
 * previous generation's arrays are compared element by element, pointers only; what is at the
 * same place is what the previous generation parsed there, and only the few elements that differ
 * are looked up in the reuse table (model-reuse.c) or parsed. The sorted arrays of claims and
 * pods are then the previous ones, less what went away, plus what came, placed by binary
 * search: no claim or pod struct that did not change is read. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"

/* how far ahead a mismatch looks for the element it lost (a deletion shifts by one) */
#define LOOKAHEAD 8
/* past this share of elements out of place, the plain walk is cheaper */
#define WALK_MAX_SHARE 8 /* 1/8 */

void
rf_model_walk_free(struct rf_walk *w)
{
	free(w->fresh);
	free(w->gone);
	w->fresh = w->gone = NULL;
	w->n_fresh = w->n_gone = 0;
}

static int
ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
	return (x > y) - (x < y);
}

static bool
has_ptr(void *const *sorted, size_t n, const void *v)
{
	return n && bsearch(&v, sorted, n, sizeof(*sorted), ptr_cmp) != NULL;
}

int
rf_model_walk(struct rf_cluster *c, struct rf_walk *w)
{
	size_t n = json_array_size(w->arr), m = json_array_size(w->prev_arr);
	size_t *added = NULL, n_added = 0, *removed = NULL, n_removed = 0;
	size_t limit = (n + m) / WALK_MAX_SHARE + 16;
	void **vals = NULL, **a_vals = NULL;
	int r = 0;
	if (!(added = malloc(limit * sizeof(*added))) ||
	    !(removed = malloc(limit * sizeof(*removed))) ||
	    !(vals = rf_arena_alloc(c->arena, (n + 1) * sizeof(*vals)))) { /* each one set */
		r = -ENOMEM;
		goto out;
	}
	/* pass 1, pointers only: which elements are where they were */
	size_t i = 0, j = 0;
	while (i < n || j < m) {
		const json_t *e = i < n ? json_array_get(w->arr, i) : NULL;
		const json_t *p = j < m ? json_array_get(w->prev_arr, j) : NULL;
		if (e && e == p) {
			vals[i++] = w->prev_vals[j++];
			continue;
		}
		size_t ahead_p = 0, ahead_e = 0;
		for (size_t k = 1; e && !ahead_p && k <= LOOKAHEAD && j + k < m; k++)
			if (json_array_get(w->prev_arr, j + k) == e)
				ahead_p = k;
		for (size_t k = 1; p && !ahead_e && !ahead_p && k <= LOOKAHEAD && i + k < n; k++)
			if (json_array_get(w->arr, i + k) == p)
				ahead_e = k;
		size_t drop_p = ahead_p ? ahead_p : ahead_e ? 0 : p != NULL;
		size_t take_e = ahead_e ? ahead_e : ahead_p ? 0 : e != NULL;
		if (n_removed + drop_p > limit || n_added + take_e > limit)
			goto out; /* declined */
		for (; drop_p; drop_p--)
			removed[n_removed++] = j++;
		for (; take_e; take_e--)
			added[n_added++] = i++;
	}
	/* pass 2: the elements that moved or are new, looked up or parsed in array order (their
	 * warnings come in the order a walk gives them) */
	size_t w0 = c->n_warnings;
	for (size_t k = 0; k < n_added; k++) {
		size_t at = added[k];
		if ((r = w->get(c, w->arg, json_array_get(w->arr, at), at, &vals[at])) < 0)
			goto out;
	}
	w->warned = c->n_warnings != w0 || c->n_warnings >= MAX_WARNINGS;
	/* what came and what went: a value both dropped and added only moved */
	if (!(w->gone = malloc((n_removed + 1) * sizeof(*w->gone))) ||
	    !(w->fresh = malloc((n_added + 1) * sizeof(*w->fresh))) ||
	    !(a_vals = malloc((n_added + 1) * sizeof(*a_vals)))) {
		r = -ENOMEM;
		goto out;
	}
	size_t n_a = 0;
	for (size_t k = 0; k < n_added; k++)
		if (vals[added[k]])
			a_vals[n_a++] = vals[added[k]];
	qsort(a_vals, n_a, sizeof(*a_vals), ptr_cmp);
	for (size_t k = 0; k < n_removed; k++) {
		void *v = w->prev_vals[removed[k]];
		if (v && !has_ptr(a_vals, n_a, v))
			w->gone[w->n_gone++] = v;
	}
	qsort(w->gone, w->n_gone, sizeof(*w->gone), ptr_cmp);
	void **r_vals = malloc((n_removed + 1) * sizeof(*r_vals));
	size_t n_r = 0;
	if (!r_vals) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n_removed; k++)
		if (w->prev_vals[removed[k]])
			r_vals[n_r++] = w->prev_vals[removed[k]];
	qsort(r_vals, n_r, sizeof(*r_vals), ptr_cmp);
	for (size_t k = 0; k < n_added; k++) {
		void *v = vals[added[k]];
		if (v && !has_ptr(r_vals, n_r, v))
			w->fresh[w->n_fresh++] = v;
	}
	free(r_vals);
	w->vals = vals;
	r = 1;
out:
	if (r <= 0)
		rf_model_walk_free(w);
	free(added);
	free(removed);
	free(a_vals);
	return r;
}

/* Where key goes in a sorted array: after every element that does not sort after it. */
static size_t
upper_bound(void *const *arr, size_t n, void *const *key, int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(&arr[mid], key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

int
rf_model_sorted_patch(struct rf_arena *a, void *const *prev, size_t n_prev, void *const *gone,
		      size_t n_gone, void **fresh, size_t n_fresh,
		      int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n)
{
	size_t *at = malloc((n_gone + n_fresh + 1) * sizeof(*at)), *ins = at + n_gone;
	int r = -ENOMEM;
	if (!at)
		return -ENOMEM;
	/* the places of what went: among the elements that sort equal to it */
	for (size_t k = 0; k < n_gone; k++) {
		size_t hi = upper_bound(prev, n_prev, &gone[k], cmp), lo = hi;
		while (lo > 0 && prev[lo - 1] != gone[k] && cmp(&prev[lo - 1], &gone[k]) == 0)
			lo--;
		if (lo == 0 || prev[lo - 1] != gone[k]) {
			r = 0; /* not where it sorts: let the walk decide */
			goto out;
		}
		at[k] = lo - 1;
	}
	qsort(at, n_gone, sizeof(*at), size_cmp);
	for (size_t k = 1; k < n_gone; k++)
		if (at[k] == at[k - 1]) {
			r = 0; /* one element twice */
			goto out;
		}
	qsort(fresh, n_fresh, sizeof(*fresh), cmp);
	for (size_t k = 0; k < n_fresh; k++)
		ins[k] = upper_bound(prev, n_prev, &fresh[k], cmp);
	void **out = rf_arena_alloc(a, (n_prev + n_fresh + 1) * sizeof(*out));
	if (!out)
		goto out;
	size_t i = 0, gi = 0, fi = 0, n = 0;
	for (;;) {
		size_t stop = n_prev;
		if (gi < n_gone && at[gi] < stop)
			stop = at[gi];
		if (fi < n_fresh && ins[fi] < stop)
			stop = ins[fi];
		memcpy(out + n, prev + i, (stop - i) * sizeof(*out));
		n += stop - i;
		i = stop;
		if (fi < n_fresh && ins[fi] == i)
			out[n++] = fresh[fi++];
		else if (gi < n_gone && at[gi] == i)
			i++, gi++;
		else
			break;
	}
	*ret = out;
	*ret_n = n;
	r = 1;
out:
	free(at);
	return r;
}
