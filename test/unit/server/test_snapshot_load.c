/* Reading snapshots from memory (server/snapshot_load.h): the streaming splitter and the one-tree
 * path give the same objects, and errors name the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

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

Suite *
snapshot_load_suite(void)
{
	Suite *s = suite_create("snapshot_load");
	TCase *tc = tcase_create("snapshot_load");
	tcase_add_test(tc, test_snapshot_load_fast_and_slow_agree);
	tcase_add_test(tc, test_snapshot_load_errors_name_the_input);
	suite_add_tcase(s, tc);
	return s;
}
