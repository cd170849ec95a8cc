/* The store's ResourceSlices (store.h): not JSON trees but, per slice, the model's parsed record
 * (alloc/model/slice.h: what decisions and explain read) and the slim object packed
 * (server/snapshot/snapshot.h: what /debug/snapshot shows, and what tells an unchanged slice from
 * a changed one). At 10,000 slices this is a small fraction of the trees' memory, and a slice is
 * parsed once, when it arrives, not at every rebuild of the layout.
 *
 * A table sorted by key. Not thread-safe: the store guards it with its lock; the entries' records
 * and blobs are immutable and reference counted, so arrays of them outlive the table's changes. */
#ifndef RF_SERVER_SLICE_TABLE_H
#define RF_SERVER_SLICE_TABLE_H

#include <stdatomic.h>
#include <stddef.h>

#include <jansson.h>

#include "alloc/model/slice.h"
#include "config/config.h"

struct rf_slice_entry {
	char *key;            /* metadata.name */
	json_t *blob;         /* the slim object, packed */
	struct rf_slice *rec; /* parsed */
};

struct rf_slice_table {
	struct rf_slice_entry *v; /* sorted by key */
	size_t n, cap;
};

/**
 * An entry for a slim ResourceSlice (borrowed) named key: parsed with cfg, packed.
 * @return 0 or -ENOMEM (then *ret is empty).
 */
int rf_slice_entry_make(const char *key, const json_t *slim, const struct rf_config *cfg,
			struct rf_slice_entry *ret);
void rf_slice_entry_release(struct rf_slice_entry *e);
/** Whether two entries hold the same slice (equal packed texts). */
bool rf_slice_entry_same(const struct rf_slice_entry *a, const struct rf_slice_entry *b);

/** The entry named key, or NULL. */
struct rf_slice_entry *rf_slice_table_find(const struct rf_slice_table *t, const char *key);

/**
 * Put e in the table (taking its contents), replacing an entry of the same key, which goes to
 * *ret_old (for the caller to release outside its lock; empty when there was none).
 * @return 0 or -ENOMEM (e is untouched).
 */
int rf_slice_table_put(struct rf_slice_table *t, struct rf_slice_entry *e,
		       struct rf_slice_entry *ret_old);

/** Take the entry named key out into *ret. @return true when there was one. */
bool rf_slice_table_take(struct rf_slice_table *t, const char *key, struct rf_slice_entry *ret);

/**
 * A table of the entries in v[0..n) (taking them; any order; of entries with one key the last
 * wins, the others are released). @return 0 or -ENOMEM (then v's entries are all released).
 */
int rf_slice_table_from(struct rf_slice_entry *v, size_t n, struct rf_slice_table *ret);

/** Release every entry and the table's memory. */
void rf_slice_table_release(struct rf_slice_table *t);

/* The table's slices as builds take them (rf_cluster_objects.slice_recs and .slices): the
 * records in key order (references) and the blobs in a JSON array, both never changed, kept by
 * the store from one build to the next while no slice changes (a Node or pod event does not
 * copy 10,000 of each) and held by a build while the table changes. */
struct rf_slice_view {
	atomic_int refs;
	json_t *blobs;
	size_t n;
	struct rf_slice *recs[];
};

/** A view of t (one reference). @return NULL on OOM. */
struct rf_slice_view *rf_slice_view_new(const struct rf_slice_table *t);
struct rf_slice_view *rf_slice_view_ref(struct rf_slice_view *v);
/** Drop a reference (NULL is fine); the last one releases the records and blobs. */
void rf_slice_view_unref(struct rf_slice_view *v);

#endif
