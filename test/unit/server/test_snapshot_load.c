/* Reading snapshots from memory (server/snapshot_load.h): the streaming splitter and the one-tree
 * path give the same objects, and errors name the input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "alloc/model/slice.h"
#include "server/snapshot/snapshot.h"
#include "server/snapshot/snapshot_load.h"

Suite *snapshot_load_suite(void);

static const char LIST[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\"}},"
	"{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s\"}},"
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\","
	"\"uid\":\"u\"},\"spec\":{\"nodeName\":\"n1\"}},"
	"{\"kind\":\"DeviceClass\",\"apiVersion\":\"resource.k8s.io/v1\","
	"\"metadata\":{\"name\":\"gpu\"},\"spec\":{}}]}";

static void
load(const char *text, struct rf_cluster_objects *ret, size_t *ret_skipped)
{
	char err[512] = "";
	int r = rf_snapshot_load_buffer("t.json", text, strlen(text), NULL, ret, ret_skipped, err,
					sizeof(err));
	ck_assert_msg(r == 0, "%d %s", r, err);
}

static void
assert_same(struct rf_cluster_objects *a, struct rf_cluster_objects *b)
{
	for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++)
		ck_assert_msg(json_equal(*rf_snapshot_slot(a, i), *rf_snapshot_slot(b, i)), "%s",
			      rf_snapshot_kinds[i].kind);
}

START_TEST(test_snapshot_load_fast_and_slow_agree)
{
	struct rf_cluster_objects fast = { 0 }, tree = { 0 };
	size_t skipped = 0;
	load(LIST, &fast, &skipped);
	ck_assert_uint_eq(skipped, 1);
	ck_assert_uint_eq(json_array_size(fast.nodes), 1);
	ck_assert_uint_eq(json_array_size(fast.pods), 1);
	ck_assert_uint_eq(json_array_size(fast.classes), 1);

	char err[256];
	json_t *doc = json_loads(LIST, 0, NULL);
	ck_assert_int_eq(rf_snapshot_split(doc, &tree, NULL, err, sizeof(err)), 0);
	assert_same(&fast, &tree);
	rf_cluster_objects_release(&tree);
	json_decref(doc);

	/* a typed list goes the one-tree way: the same objects */
	struct rf_cluster_objects typed = { 0 };
	load("{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"n1\"}}]}", &typed, NULL);
	ck_assert_uint_eq(json_array_size(typed.nodes), 1);
	ck_assert(json_equal(json_object_get(json_array_get(typed.nodes, 0), "metadata"),
			     json_object_get(json_array_get(fast.nodes, 0), "metadata")));
	rf_cluster_objects_release(&typed);
	rf_cluster_objects_release(&fast);
}
END_TEST

START_TEST(test_snapshot_load_errors_name_the_input)
{
	struct rf_cluster_objects o = { 0 };
	char err[512];
	const char *bad = "{\"kind\":\"List\",\"items\":[";
	ck_assert_int_eq(rf_snapshot_load_buffer("t.json", bad, strlen(bad), NULL, &o, NULL, err,
						 sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strncmp(err, "cannot parse 't.json' as JSON: ", 31) == 0, "%s", err);
	const char *arr = "[1,2]";
	ck_assert_int_eq(rf_snapshot_load_buffer("t.json", arr, strlen(arr), NULL, &o, NULL, err,
						 sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "'t.json': expected a JSON object (a v1 List), got an array");
	const char *nokind = "{\"kind\":\"List\",\"items\":[{\"metadata\":{}}]}";
	ck_assert_int_eq(rf_snapshot_load_buffer("t.json", nokind, strlen(nokind), NULL, &o, NULL,
						 err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "items[0]: expected an object with a \"kind\""), "%s", err);
}
END_TEST

/* A List with a slice and two claims, one of them with a consumedCapacity (kept an object). */
static const char KEPT[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\"}},"
	"{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
	"{\"name\":\"c1\",\"namespace\":\"ml\"},\"status\":{\"allocation\":{\"devices\":"
	"{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"n1\",\"device\":"
	"\"nic0\",\"consumedCapacity\":{\"bandwidth\":\"10G\"}}]}}}},"
	"{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
	"{\"name\":\"s1\"},\"spec\":{\"driver\":\"d\",\"nodeName\":\"n1\",\"pool\":"
	"{\"name\":\"n1\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":"
	"\"nic0\",\"attributes\":{\"x\":{\"int\":1.5e300}}}]}},"
	"{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
	"{\"name\":\"c2\",\"namespace\":\"ml\"},\"spec\":{}}]}";

/* Both forms of a load hold the same objects; the kept one the slices' records and packed
 * blobs. */
static void
assert_kept_same(const char *text)
{
	struct rf_cluster_objects objs = { 0 }, kept = { 0 };
	struct rf_config cfg;
	char err[512] = "";
	rf_config_init(&cfg);
	load(text, &objs, NULL);
	ck_assert_int_eq(rf_snapshot_load_buffer_kept("t.json", text, strlen(text), NULL, &cfg,
						      &kept, NULL, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(kept.n_slice_recs, json_array_size(objs.slices));
	ck_assert(kept.expand == rf_snapshot_expand);
	for (size_t i = 0; i < kept.n_slice_recs; i++)
		ck_assert_str_eq(
			kept.slice_recs[i]->name,
			json_string_value(json_object_get(
				json_object_get(json_array_get(objs.slices, i), "metadata"),
				"name")));
	for (size_t s = 0; s < RF_SNAPSHOT_N_KINDS; s++) {
		json_t *a = *rf_snapshot_slot(&objs, s), *b = *rf_snapshot_slot(&kept, s);
		ck_assert_uint_eq(json_array_size(a), json_array_size(b));
		for (size_t i = 0; i < json_array_size(a); i++) {
			json_t *o = rf_snapshot_expand(json_array_get(b, i), NULL);
			ck_assert_msg(json_equal(o, json_array_get(a, i)), "%s %zu",
				      rf_snapshot_kinds[s].kind, i);
			json_decref(o);
		}
	}
	/* pods, slices and claims without consumedCapacity packed; other claims and the other
	 * kinds objects */
	for (size_t i = 0; i < json_array_size(kept.pods); i++)
		ck_assert(json_is_string(json_array_get(kept.pods, i)));
	for (size_t i = 0; i < json_array_size(kept.slices); i++)
		ck_assert(json_is_string(json_array_get(kept.slices, i)));
	for (size_t i = 0; i < json_array_size(kept.claims); i++)
		ck_assert(json_is_string(json_array_get(kept.claims, i)) !=
			  rf_snapshot_claim_referenced(json_array_get(objs.claims, i)));
	for (size_t i = 0; i < json_array_size(kept.nodes); i++)
		ck_assert(json_is_object(json_array_get(kept.nodes, i)));
	for (size_t i = 0; i < json_array_size(kept.classes); i++)
		ck_assert(json_is_object(json_array_get(kept.classes, i)));
	rf_cluster_objects_release(&kept);
	rf_cluster_objects_release(&objs);
	rf_config_release(&cfg);
}

START_TEST(test_snapshot_load_kept_holds_the_same_objects)
{
	assert_kept_same(LIST);
	assert_kept_same(KEPT);
	/* the one-tree path (a member before items that the splitter does not take: an escaped
	 * key) gives the same form */
	char *odd = malloc(sizeof(KEPT) + 16);
	ck_assert_ptr_nonnull(odd);
	snprintf(odd, sizeof(KEPT) + 16, "{\"\\u0078\":1,%s", KEPT + 1);
	assert_kept_same(odd);
	free(odd);

	/* the claim with a consumedCapacity (first in the file) goes after the packed one: the
	 * order pack_commit leaves */
	struct rf_cluster_objects kept = { 0 };
	struct rf_config cfg;
	char err[512] = "";
	rf_config_init(&cfg);
	ck_assert_int_eq(rf_snapshot_load_buffer_kept("t.json", KEPT, strlen(KEPT), NULL, &cfg,
						      &kept, NULL, err, sizeof(err)),
			 0);
	ck_assert(json_is_object(json_array_get(kept.claims, 0)));
	ck_assert(json_is_string(json_array_get(kept.claims, 1)));
	ck_assert_int_eq(rf_snapshot_kept_order(&kept), 0);
	ck_assert(json_is_string(json_array_get(kept.claims, 0)));
	ck_assert(json_is_object(json_array_get(kept.claims, 1)));
	rf_cluster_objects_release(&kept);
	rf_config_release(&cfg);
}
END_TEST

START_TEST(test_snapshot_load_kept_errors_are_the_same)
{
	struct rf_cluster_objects o = { 0 };
	struct rf_config cfg;
	char err[512], kerr[512];
	rf_config_init(&cfg);
	const char *bad[] = {
		"{\"kind\":\"List\",\"items\":[", "[1,2]",
		"{\"kind\":\"List\",\"items\":[{\"metadata\":{}}]}",
		"{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"kind\":\"Node\"}]}"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int r = rf_snapshot_load_buffer("t.json", bad[i], strlen(bad[i]), NULL, &o, NULL,
						err, sizeof(err));
		int rk = rf_snapshot_load_buffer_kept("t.json", bad[i], strlen(bad[i]), NULL, &cfg,
						      &o, NULL, kerr, sizeof(kerr));
		ck_assert_int_eq(r, -EINVAL);
		ck_assert_int_eq(rk, -EINVAL);
		ck_assert_str_eq(err, kerr);
	}
	rf_config_release(&cfg);
}
END_TEST

Suite *
snapshot_load_suite(void)
{
	Suite *s = suite_create("snapshot_load");
	TCase *tc = tcase_create("snapshot_load");
	tcase_add_test(tc, test_snapshot_load_fast_and_slow_agree);
	tcase_add_test(tc, test_snapshot_load_errors_name_the_input);
	tcase_add_test(tc, test_snapshot_load_kept_holds_the_same_objects);
	tcase_add_test(tc, test_snapshot_load_kept_errors_are_the_same);
	suite_add_tcase(s, tc);
	return s;
}
