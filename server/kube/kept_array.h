/* The store's objects of one kind as the array a build takes (rf_cluster_objects), kept between
 * builds and changed as the objects change, so that a build costs what changed and not a copy
 * of every object: at 5,000 nodes, copying the 40,000 objects of every kind into new arrays,
 * and freeing them with the generation they went to, was a third of a Node label event's build
 * and of a pod event's.
 *
 * The array holds the values of a jansson object (the store's map of that kind) in the map's
 * order, which is insertion order: a new key comes last, a changed value stays at its place, a
 * deleted one leaves. A build holds the array it was handed and must see it unchanged: the first
 * change after a hand-over copies it (pointers only). Not thread-safe: the store guards it with
 * its lock. */
#ifndef RF_SERVER_KEPT_ARRAY_H
#define RF_SERVER_KEPT_ARRAY_H

#include <stdbool.h>

#include <jansson.h>

struct rf_kept_array {
	json_t *arr; /* NULL: made again from the map at the next hand-over */
	bool handed; /* a build holds arr: copy before changing it */
};

/**
 * The map's values as an array (a new reference), made from map when there is none; the
 * array is never changed afterwards. @return NULL on OOM.
 */
json_t *rf_kept_array_hand(struct rf_kept_array *k, const json_t *map);

/**
 * Follow a change of the map: old (NULL: a new key) was replaced by now (NULL: deleted). Call
 * after the map changed. When the array cannot follow (no memory, old not in it) it is dropped
 * and made again at the next hand-over. @return what the caller releases outside its lock (an
 * array no build holds any more, to json_decref), or NULL.
 */
json_t *rf_kept_array_follow(struct rf_kept_array *k, json_t *old, json_t *now);

/** Drop the array (the map was replaced). @return the array for the caller to json_decref
 * outside its lock, or NULL. */
json_t *rf_kept_array_drop(struct rf_kept_array *k);

#endif
