/* Unit tests of what the live store keeps instead of object trees: ResourceSlice entries (parsed
 * record + packed text, server/kube/slice_table.c) and packed objects expanded again
 * (rf_snapshot_pack_object / rf_snapshot_expand). */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "config/config.h"
#include "server/kube/slice_table.h"
#include "server/snapshot/snapshot.h"

Suite *slice_table_suite(void);

static json_t *
slice(const char *name, const char *node, int mtu)
{
	json_t *s = json_pack("{s:{s:s},s:{s:s,s:{s:s,s:i,s:i},s:s,s:[{s:s,s:{s:{s:i},s:{s:b}}}]}}",
			      "metadata", "name", name, "spec", "driver", "dra.net", "pool", "name",
			      node, "generation", 1, "resourceSliceCount", 1, "nodeName", node,
			      "devices", "name", "pci-0000-18-00-0", "attributes", "dra.net/mtu",
			      "int", mtu, "dra.net/rdma", "bool", 1);
	ck_assert_ptr_nonnull(s);
	return s;
}

static struct rf_slice_entry
entry(const struct rf_config *cfg, const char *name, const char *node, int mtu)
{
	struct rf_slice_entry e;
	json_t *s = slice(name, node, mtu);
	ck_assert_int_eq(rf_slice_entry_make(name, s, cfg, &e), 0);
	json_decref(s);
	return e;
}

START_TEST(test_entry_parsed_and_packed)
{
	struct rf_config cfg;
	rf_config_init(&cfg);
	struct rf_slice_entry a = entry(&cfg, "s1", "n1", 9000);
	struct rf_slice_entry b = entry(&cfg, "s1", "n1", 9000);
	struct rf_slice_entry c = entry(&cfg, "s1", "n1", 1500);
	ck_assert_str_eq(a.rec->driver, "dra.net");
	ck_assert_str_eq(a.rec->node, "n1");
	ck_assert_ptr_null(a.rec->skip);
	ck_assert_uint_eq(a.rec->n_devices, 1);
	ck_assert_int_eq(a.rec->devices[0].kind, RF_DEV_NIC);
	ck_assert_int_eq(a.rec->devices[0].rdma, 1);
	ck_assert(rf_slice_entry_same(&a, &b));  /* equal texts */
	ck_assert(!rf_slice_entry_same(&a, &c)); /* one attribute differs */
	/* the packed text is the slim object again */
	json_t *back = rf_snapshot_expand(a.blob, NULL);
	ck_assert_int_eq(
		json_integer_value(json_object_get(
			json_object_get(
				json_object_get(
					json_array_get(
						json_object_get(json_object_get(back, "spec"),
								"devices"),
						0),
					"attributes"),
				"dra.net/mtu"),
			"int")),
		9000);
	json_decref(back);
	rf_slice_entry_release(&a);
	rf_slice_entry_release(&b);
	rf_slice_entry_release(&c);
	rf_config_release(&cfg);
}
END_TEST

START_TEST(test_table_sorted_put_take_from)
{
	struct rf_config cfg;
	rf_config_init(&cfg);
	struct rf_slice_table t = { 0 };
	struct rf_slice_entry old;
	const char *names[] = { "m", "c", "x", "a" };
	for (size_t i = 0; i < 4; i++) {
		struct rf_slice_entry e = entry(&cfg, names[i], "n1", 9000);
		ck_assert_int_eq(rf_slice_table_put(&t, &e, &old), 0);
		ck_assert_ptr_null(old.rec); /* new key */
		ck_assert_ptr_null(e.rec);   /* taken */
	}
	ck_assert_uint_eq(t.n, 4);
	for (size_t i = 1; i < t.n; i++)
		ck_assert_int_lt(strcmp(t.v[i - 1].key, t.v[i].key), 0);
	/* the same key replaces, the old entry comes back */
	struct rf_slice_entry e = entry(&cfg, "c", "n2", 9000);
	ck_assert_int_eq(rf_slice_table_put(&t, &e, &old), 0);
	ck_assert_str_eq(old.rec->node, "n1");
	rf_slice_entry_release(&old);
	ck_assert_str_eq(rf_slice_table_find(&t, "c")->rec->node, "n2");
	ck_assert_uint_eq(t.n, 4);
	ck_assert(rf_slice_table_take(&t, "m", &old));
	rf_slice_entry_release(&old);
	ck_assert(!rf_slice_table_take(&t, "m", &old));
	ck_assert_ptr_null(rf_slice_table_find(&t, "m"));
	ck_assert_uint_eq(t.n, 3);
	rf_slice_table_release(&t);

	/* a list with one name twice: the later one wins */
	struct rf_slice_entry v[3] = { entry(&cfg, "b", "first", 1), entry(&cfg, "a", "n", 1),
				       entry(&cfg, "b", "second", 1) };
	ck_assert_int_eq(rf_slice_table_from(v, 3, &t), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_str_eq(t.v[0].key, "a");
	ck_assert_str_eq(rf_slice_table_find(&t, "b")->rec->node, "second");
	rf_slice_table_release(&t);
	rf_config_release(&cfg);
}
END_TEST

START_TEST(test_expand_refuses_what_is_not_packed)
{
	json_t *o = json_pack("{s:s}", "a", "b"), *s = json_string("not packed");
	json_t *same = rf_snapshot_expand(o, NULL);
	ck_assert_ptr_eq(same, o); /* an object is itself */
	json_decref(same);
	ck_assert_ptr_null(rf_snapshot_expand(s, NULL));
	ck_assert_ptr_null(rf_snapshot_expand(NULL, NULL));
	json_t *blob = rf_snapshot_pack_object(o);
	json_t *back = rf_snapshot_expand(blob, NULL);
	ck_assert(json_equal(back, o));
	json_decref(back);
	json_decref(blob);
	json_decref(o);
	json_decref(s);
}
END_TEST

Suite *
slice_table_suite(void)
{
	Suite *s = suite_create("slice_table");
	TCase *tc = tcase_create("slice_table");
	tcase_add_test(tc, test_entry_parsed_and_packed);
	tcase_add_test(tc, test_table_sorted_put_take_from);
	tcase_add_test(tc, test_expand_refuses_what_is_not_packed);
	suite_add_tcase(s, tc);
	return s;
}
