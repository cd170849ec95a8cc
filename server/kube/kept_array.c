/* The store's objects of one kind as a build's array (see kept_array.h). */
#include "server/kube/kept_array.h"

#include <stddef.h>
#include <stdint.h>

json_t *
rf_kept_array_hand(struct rf_kept_array *k, const json_t *map)
{
	if (!k->arr) {
		json_t *arr = json_array(), *v;
		const char *key;
		if (!arr)
			return NULL;
		json_object_foreach ((json_t *)map, key, v) {
			if (json_array_append(arr, v) < 0) {
				json_decref(arr);
				return NULL;
			}
		}
		k->arr = arr;
	}
	k->handed = true;
	return json_incref(k->arr);
}

/* Where v is in arr, from the end (objects that change often, churning pods and claims, came
 * last); SIZE_MAX when it is not. */
static size_t
index_of(const json_t *arr, const json_t *v)
{
	for (size_t i = json_array_size(arr); i-- > 0;)
		if (json_array_get(arr, i) == v)
			return i;
	return SIZE_MAX;
}

json_t *
rf_kept_array_follow(struct rf_kept_array *k, json_t *old, json_t *now)
{
	json_t *released = NULL;
	if (!k->arr)
		return NULL;
	if (k->handed) { /* the build keeps what it got */
		json_t *copy = json_array();
		if (!copy || json_array_extend(copy, k->arr) < 0) {
			json_decref(copy);
			return rf_kept_array_drop(k);
		}
		released = k->arr;
		k->arr = copy;
		k->handed = false;
	}
	int r = -1;
	if (!old) {
		r = now ? json_array_append(k->arr, now) : 0;
	} else {
		size_t i = index_of(k->arr, old);
		if (i != SIZE_MAX)
			r = now ? json_array_set(k->arr, i, now) : json_array_remove(k->arr, i);
	}
	if (r < 0) {
		json_decref(k->arr); /* ours alone: its elements are the map's too */
		k->arr = NULL;
	}
	return released;
}

json_t *
rf_kept_array_drop(struct rf_kept_array *k)
{
	json_t *arr = k->arr;
	k->arr = NULL;
	k->handed = false;
	return arr;
}
