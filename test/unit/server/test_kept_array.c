/* server/kube/kept_array.h: the store's objects as the arrays builds take, changed in place
 * between builds and copied when a build holds them. */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "server/kube/kept_array.h"

/* Whether arr holds the map's values in the map's order. */
static bool
mirrors(const json_t *arr, const json_t *map)
{
	const char *key;
	json_t *v;
	size_t i = 0;
	if (json_array_size(arr) != json_object_size(map))
		return false;
	json_object_foreach ((json_t *)map, key, v)
		if (json_array_get(arr, i++) != v)
			return false;
	return true;
}

struct held {
	json_t *arr;
	json_t **elems; /* what it held when handed */
	size_t n;
};

START_TEST(test_kept_array_follows_the_map)
{
	/* random adds, changes and deletes of 40 keys, as watch events make them; now and then a
	 * build takes the array (and keeps it), now and then a relist drops it */
	srand(1000 + (unsigned)_i);
	json_t *map = json_object();
	struct rf_kept_array k = { 0 };
	struct held held[64];
	size_t n_held = 0, copies = 0;
	for (int step = 0; step < 2000; step++) {
		char key[16];
		snprintf(key, sizeof(key), "ns/pod-%d", rand() % 40);
		json_t *old = json_object_get(map, key), *now = NULL, *released = NULL;
		int op = rand() % 10;
		if (op < 7) { /* added or changed */
			now = json_pack("{s:s, s:i}", "name", key, "step", step);
			json_incref(old); /* (the map drops it) */
			ck_assert_int_eq(json_object_set_new(map, key, now), 0);
			released = rf_kept_array_follow(&k, old, now);
			json_decref(old);
		} else if (op < 9 && old) {
			json_incref(old);
			ck_assert_int_eq(json_object_del(map, key), 0);
			released = rf_kept_array_follow(&k, old, NULL);
			json_decref(old);
		} else if (op == 9 && rand() % 8 == 0) {
			released = rf_kept_array_drop(&k); /* a relist */
		} else if (n_held < 64) {
			json_t *arr = rf_kept_array_hand(&k, map);
			ck_assert_ptr_nonnull(arr);
			ck_assert(mirrors(arr, map));
			struct held *h = &held[n_held++];
			h->arr = arr;
			h->n = json_array_size(arr);
			h->elems = malloc((h->n + 1) * sizeof(*h->elems));
			for (size_t i = 0; i < h->n; i++)
				h->elems[i] = json_incref(json_array_get(arr, i));
		}
		copies += released != NULL;
		json_decref(released);
		if (k.arr)
			ck_assert(mirrors(k.arr, map));
	}
	ck_assert_uint_gt(copies, 10); /* the copy on write was taken */
	/* what the builds took never changed */
	for (size_t h = 0; h < n_held; h++) {
		ck_assert_uint_eq(json_array_size(held[h].arr), held[h].n);
		for (size_t i = 0; i < held[h].n; i++) {
			ck_assert_ptr_eq(json_array_get(held[h].arr, i), held[h].elems[i]);
			json_decref(held[h].elems[i]);
		}
		free(held[h].elems);
		json_decref(held[h].arr);
	}
	json_t *arr = rf_kept_array_hand(&k, map);
	ck_assert(mirrors(arr, map));
	json_decref(arr);
	json_decref(rf_kept_array_drop(&k));
	json_decref(map);
}
END_TEST

START_TEST(test_kept_array_unknown_old_drops_it)
{
	/* a change the array cannot place (its old value not in it): dropped, made again */
	json_t *map = json_pack("{s:{}, s:{}}", "a", "b"), *stray = json_object();
	struct rf_kept_array k = { 0 };
	json_decref(rf_kept_array_hand(&k, map));
	json_t *released = rf_kept_array_follow(&k, stray, json_object_get(map, "a"));
	json_decref(released); /* the handed array, replaced by its copy */
	ck_assert_ptr_null(k.arr);
	json_t *arr = rf_kept_array_hand(&k, map);
	ck_assert(mirrors(arr, map));
	json_decref(arr);
	json_decref(rf_kept_array_drop(&k));
	json_decref(stray);
	json_decref(map);
}
END_TEST

Suite *kept_array_suite(void);

Suite *
kept_array_suite(void)
{
	Suite *s = suite_create("kept_array");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, test_kept_array_follows_the_map, 0, 4);
	tcase_add_test(tc, test_kept_array_unknown_old_drops_it);
	suite_add_tcase(s, tc);
	return s;
}
