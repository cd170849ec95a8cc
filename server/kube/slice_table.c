/* The store's ResourceSlices, parsed and packed (see slice_table.h). */
#include "server/kube/slice_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"
#include "server/snapshot/snapshot.h"

int
rf_slice_entry_make(const char *key, const json_t *slim, const struct rf_config *cfg,
		    struct rf_slice_entry *ret)
{
	struct rf_slice_entry e = { strdup(key), rf_snapshot_pack_object(slim), NULL };
	if (!e.key || !e.blob || rf_slice_parse(slim, cfg, &e.rec) < 0) {
		rf_slice_entry_release(&e);
		memset(ret, 0, sizeof(*ret));
		return -ENOMEM;
	}
	*ret = e;
	return 0;
}

void
rf_slice_entry_release(struct rf_slice_entry *e)
{
	free(e->key);
	json_decref(e->blob);
	rf_slice_unref(e->rec);
	memset(e, 0, sizeof(*e));
}

bool
rf_slice_entry_same(const struct rf_slice_entry *a, const struct rf_slice_entry *b)
{
	return json_equal(a->blob, b->blob);
}

/* The index of key, or where it would go (*ret_found false). */
static size_t
position(const struct rf_slice_table *t, const char *key, bool *ret_found)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(key, t->v[mid].key);
		if (r == 0) {
			*ret_found = true;
			return mid;
		}
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*ret_found = false;
	return lo;
}

struct rf_slice_entry *
rf_slice_table_find(const struct rf_slice_table *t, const char *key)
{
	bool found;
	size_t i = position(t, key, &found);
	return found ? &t->v[i] : NULL;
}

int
rf_slice_table_put(struct rf_slice_table *t, struct rf_slice_entry *e,
		   struct rf_slice_entry *ret_old)
{
	bool found;
	size_t i = position(t, e->key, &found);
	memset(ret_old, 0, sizeof(*ret_old));
	if (found) {
		*ret_old = t->v[i];
	} else {
		if (rf_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
			return -ENOMEM;
		/* a memmove of pointers: microseconds even at 10,000 slices */
		memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
		t->n++;
	}
	t->v[i] = *e;
	memset(e, 0, sizeof(*e));
	return 0;
}

bool
rf_slice_table_take(struct rf_slice_table *t, const char *key, struct rf_slice_entry *ret)
{
	bool found;
	size_t i = position(t, key, &found);
	if (!found)
		return false;
	*ret = t->v[i];
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
	t->n--;
	return true;
}

struct ordered {
	struct rf_slice_entry e;
	size_t pos;
};

static int
ordered_cmp(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	int r = strcmp(x->e.key, y->e.key);
	return r ? r : (x->pos > y->pos) - (x->pos < y->pos);
}

int
rf_slice_table_from(struct rf_slice_entry *v, size_t n, struct rf_slice_table *ret)
{
	struct ordered *o = calloc(n ? n : 1, sizeof(*o));
	struct rf_slice_table t = { 0 };
	if (!o || !(t.v = calloc(n ? n : 1, sizeof(*t.v)))) {
		free(o);
		for (size_t i = 0; i < n; i++)
			rf_slice_entry_release(&v[i]);
		return -ENOMEM;
	}
	t.cap = n ? n : 1;
	for (size_t i = 0; i < n; i++)
		o[i] = (struct ordered){ v[i], i };
	qsort(o, n, sizeof(*o), ordered_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && strcmp(o[i].e.key, o[i + 1].e.key) == 0) {
			rf_slice_entry_release(&o[i].e); /* a later one of the same name wins */
			continue;
		}
		t.v[t.n++] = o[i].e;
	}
	free(o);
	*ret = t;
	return 0;
}

void
rf_slice_table_release(struct rf_slice_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		rf_slice_entry_release(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

struct rf_slice_view *
rf_slice_view_new(const struct rf_slice_table *t)
{
	struct rf_slice_view *v = calloc(1, sizeof(*v) + (t->n + 1) * sizeof(v->recs[0]));
	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	if (!(v->blobs = json_array()))
		goto oom;
	for (size_t i = 0; i < t->n; i++) {
		if (json_array_append(v->blobs, t->v[i].blob) < 0)
			goto oom;
		v->recs[i] = rf_slice_ref(t->v[i].rec);
		v->n = i + 1;
	}
	return v;
oom:
	rf_slice_view_unref(v);
	return NULL;
}

struct rf_slice_view *
rf_slice_view_ref(struct rf_slice_view *v)
{
	atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
	return v;
}

void
rf_slice_view_unref(struct rf_slice_view *v)
{
	if (!v || atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < v->n; i++)
		rf_slice_unref(v->recs[i]);
	json_decref(v->blobs);
	free(v);
}
