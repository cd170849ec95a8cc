/* Unit tests of server/kube/list_stream.c: a List's items split out of its body in any chunking,
 * and whatever is not the plain shape left whole to the skeleton, so that the usual parse of the
 * skeleton plus the items handed out is the parse of the whole body: the same items in the same
 * order, the same other fields, and an error exactly when the body is not valid JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "server/kube/list_stream.h"

struct got {
	json_t *items; /* handed out, parsed */
	size_t calls;
};

/* Takes an item unless it is not valid JSON (as the store's scanner would not) or says "leave". */
static int
take(void *arg, const char *text, size_t len)
{
	struct got *g = arg;
	g->calls++;
	ck_assert(len > 0 && text[0] == '{' && text[len - 1] == '}');
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!v || json_object_get(v, "leave")) {
		json_decref(v);
		return 1;
	}
	json_array_append_new(g->items, v);
	return 0;
}

/* Streams text in chunks of `chunk` bytes; checks the promise above. */
static void
check_split(const char *text, size_t chunk, size_t want_handed)
{
	struct rf_list_stream s;
	struct got g = { json_array(), 0 };
	size_t n = strlen(text);
	rf_list_stream_init(&s, take, &g);
	for (size_t i = 0; i < n; i += chunk)
		ck_assert_int_eq(rf_list_stream_feed(&s, text + i, i + chunk > n ? n - i : chunk),
				 0);
	ck_assert_int_eq(rf_list_stream_finish(&s), 0);
	ck_assert_uint_eq(s.items, json_array_size(g.items));
	json_t *whole = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
	json_t *skel = json_loadb(s.skel, s.skel_len, JSON_REJECT_DUPLICATES, NULL);
	ck_assert_msg(!whole == !skel, "%s\nskeleton %s (chunk %zu)", text, s.skel, chunk);
	if (whole) {
		json_t *its = json_object_get(skel, "items");
		if (json_is_array(its))
			json_array_extend(g.items, its);
		if (json_array_size(g.items) || json_is_array(its))
			json_object_set(skel, "items", g.items);
		char *a = json_dumps(whole, JSON_COMPACT | JSON_SORT_KEYS);
		char *b = json_dumps(skel, JSON_COMPACT | JSON_SORT_KEYS);
		ck_assert_msg(json_equal(whole, skel), "%s\nrebuilt %s (chunk %zu)", a, b, chunk);
		free(a);
		free(b);
		ck_assert_uint_eq(s.items, want_handed);
	}
	json_decref(whole);
	json_decref(skel);
	json_decref(g.items);
	rf_list_stream_release(&s);
}

START_TEST(test_list_stream_splits_in_any_chunking)
{
	static const struct {
		const char *text;
		size_t handed; /* items handed out when the text is valid */
	} cases[] = {
		{ "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},"
		  "\"items\":[{\"a\":1},{\"b\":\"}]{[\\\"\"},\n {\"c\":[{\"d\":[]}]}]}",
		  3 },
		{ " { \"items\" : [ ] , \"metadata\" : { \"continue\" : \"x\" } } ", 0 },
		{ "{\"items\":[{\"x\":1}],\"metadata\":{\"items\":[{\"y\":2}]}}", 1 },
		{ "{\"metadata\":{\"items\":[{\"y\":2}]},\"items\":[{\"x\":1}]}", 1 },
		{ "{\"items\":null,\"metadata\":{}}", 0 },
		{ "{\"items\":{\"a\":[{\"b\":1}]},\"x\":[{\"c\":2}]}", 0 },
		{ "{\"kind\":\"items\",\"v\":[{\"c\":2}],\"items\":[{\"a\":1}]}", 1 },
		{ "{\"\\u0069tems\":[{\"a\":1}]}", 0 },
		{ "{\"items\":[{\"a\":1},{\"leave\":1},{\"b\":2}]}", 1 },
		{ "{\"items\":[{\"a\":1},5,{\"b\":2}]}", 1 },
		{ "{\"items\":[7,{\"b\":2}]}", 0 },
		{ "{\"items\":[{\"a\":1}],\"items\":[{\"b\":2}]}", 0 },
		{ "[{\"items\":[{\"a\":1}]}]", 0 },
		/* not valid: the skeleton is not either */
		{ "{\"items\":[{\"a\":1},]}", 0 },
		{ "{\"items\":[{\"a\":1}{\"b\":2}]}", 0 },
		{ "{\"items\":[{\"a\":1},{\"b\":2}", 0 },
		{ "{\"items\":[{\"a\":1},{\"b\":", 0 },
		{ "{\"items\":[{\"a\":}]}", 0 },
		{ "{\"items\":[{\"a\":1}] x}", 0 },
		{ "{\"items\":[{\"a\":1}]", 0 },
		{ "", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].text);
		for (size_t chunk = 1; chunk <= n + 1; chunk++)
			check_split(cases[i].text, chunk, cases[i].handed);
	}
}
END_TEST

static int
fail_item(void *arg, const char *text, size_t len)
{
	(void)arg;
	(void)text;
	(void)len;
	return -ENOSPC;
}

START_TEST(test_list_stream_item_failure_is_sticky)
{
	struct rf_list_stream s;
	rf_list_stream_init(&s, fail_item, NULL);
	ck_assert_int_eq(rf_list_stream_feed(&s, "{\"items\":[{\"a\"", 14), 0);
	ck_assert_int_eq(rf_list_stream_feed(&s, ":1},", 4), -ENOSPC);
	ck_assert_int_eq(rf_list_stream_feed(&s, "{}]}", 4), -ENOSPC);
	ck_assert_int_eq(rf_list_stream_finish(&s), -ENOSPC);
	rf_list_stream_release(&s);
}
END_TEST

Suite *list_stream_suite(void);

Suite *
list_stream_suite(void)
{
	Suite *s = suite_create("list_stream");
	TCase *tc = tcase_create("list_stream");
	tcase_add_test(tc, test_list_stream_splits_in_any_chunking);
	tcase_add_test(tc, test_list_stream_item_failure_is_sticky);
	suite_add_tcase(s, tc);
	return s;
}
