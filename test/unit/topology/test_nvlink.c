/* NVLink in the topology layer: hwloc's NVLinkBandwidth distances on the real DGX-2 export, the
 * GPU-to-GPU link counts through NVSwitch fabrics, the NV# table cells, the annotation's version 2
 * (links between classes) next to version 1, and a generated 8 x L4 node without NVLink. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <hwloc.h>

#include "topology/annotation.h"
#include "topology/hwloc_import.h"
#include "topology/hwloc_nvlink.h"
#include "topology/pcitree.h"

Suite *nvlink_suite(void);

static struct rf_pcitopo *
load(const char *name)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[1024];
	hwloc_topology_t topo;
	struct rf_pcitree *tree = NULL;
	struct rf_pcitopo *t = NULL;

	snprintf(path, sizeof(path), "%s/topology/%s", dir ? dir : "test/data", name);
	ck_assert_int_eq(hwloc_topology_init(&topo), 0);
	ck_assert_int_eq(rf_hwloc_set_filters(topo), 0);
	ck_assert_msg(hwloc_topology_set_xml(topo, path) == 0, "cannot use %s", path);
	ck_assert_msg(hwloc_topology_load(topo) == 0, "cannot load %s", path);
	ck_assert_int_eq(rf_hwloc_import(topo, &tree), 0);
	ck_assert_int_eq(rf_hwloc_import_nvlinks(topo, tree), 0);
	hwloc_topology_destroy(topo);
	ck_assert_int_eq(rf_pcitopo_compute(tree, &t), 0);
	rf_pcitree_free(tree);
	return t;
}

static bool
has_note(const struct rf_pcitopo *t, const char *needle)
{
	for (size_t i = 0; i < t->n_notes; i++)
		if (strstr(t->notes[i], needle))
			return true;
	return false;
}

START_TEST(test_nvlink_count)
{
	ck_assert_uint_eq(rf_nvlink_count(0), 0);
	ck_assert_uint_eq(rf_nvlink_count(25000), 1);
	ck_assert_uint_eq(rf_nvlink_count(150000), 6);
	ck_assert_uint_eq(rf_nvlink_count(20000), 1);  /* NVLink 1 */
	ck_assert_uint_eq(rf_nvlink_count(80000), 4);  /* 4 x 20000, not 3.2 x 25000 */
	ck_assert_uint_eq(rf_nvlink_count(100000), 4); /* 25000 first */
	ck_assert_uint_eq(rf_nvlink_count(1), 1);
	ck_assert_uint_eq(rf_nvlink_count(1000000000ULL), 255);
}
END_TEST

START_TEST(test_nvlink_dgx2)
{
	/* 16 V100s, each with one link to each of the 6 NVSwitches of its baseboard (nvml0-7 to
	 * 61..67, nvml8-15 to c1..c7), no switch-to-switch entries: NV6 within a board, nothing
	 * across; the PCIe levels stay as they were */
	struct rf_pcitopo *t = load("nvidiaDGX2.xml");
	ck_assert_uint_eq(t->n_gpus, 16);
	ck_assert_ptr_nonnull(t->nvlinks);
	for (size_t i = 0; i < 16; i++)
		for (size_t j = 0; j < 16; j++) {
			bool board = (i < 8) == (j < 8);
			unsigned want = i != j && board ? 6 : 0;
			ck_assert_uint_eq(rf_pcitopo_nvlinks(t, i, j), want);
			if (i == j)
				continue;
			ck_assert_int_eq(rf_pcitopo_gpu_level(t, i, j),
					 board ? RF_LEVEL_NVL : rf_pcitopo_level(t, i, j));
		}
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 1), RF_LEVEL_PIX);
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 8), RF_LEVEL_SYS);
	ck_assert_int_eq(rf_pcitopo_gpu_level(t, 0, 8), RF_LEVEL_SYS);
	ck_assert(has_note(t, "56 GPU pairs share NVLinks, 64 pairs"));

	char cell[16], *text = NULL;
	ck_assert_str_eq(rf_pcitopo_cell(t, 0, 7, cell), "NV6");
	ck_assert_str_eq(rf_pcitopo_cell(t, 0, 8, cell), "SYS");
	ck_assert_int_eq(rf_pcitopo_table(t, &text), 0);
	ck_assert_ptr_nonnull(strstr(text, "NV#     = Connection traversing a bonded set"));
	free(text);

	json_t *j = rf_pcitopo_json(t, "test");
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_object_get(json_object_get(j, "nvlinks"), "0000:34:00.0"),
				 "0000:57:00.0")),
			 6);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(j, "matrix"), "0000:34:00.0"),
				 "0000:57:00.0")),
			 "NODE");
	json_decref(j);

	/* the annotation: version 2, links read back for every pair */
	char *v = NULL, err[256];
	struct rf_topo_annotation *a = NULL;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	ck_assert_ptr_nonnull(strstr(v, "{\"v\":2,"));
	ck_assert_msg(rf_topo_annotation_decode(v, strlen(v), &a, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert(rf_topo_annotation_has_nvlinks(a));
	for (size_t i = 0; i < 16; i++)
		for (size_t k = 0; k < 16; k++) {
			unsigned links = 99;
			enum rf_level l;
			ck_assert_int_eq(rf_topo_annotation_nvlinks(a, t->devices[i].pci,
								    t->devices[k].pci, &links),
					 0);
			ck_assert_uint_eq(links, rf_pcitopo_nvlinks(t, i, k));
			ck_assert_int_eq(rf_topo_annotation_level(a, t->devices[i].pci,
								  t->devices[k].pci, &l),
					 0);
			ck_assert_int_eq(l, rf_pcitopo_level(t, i, k));
		}
	rf_topo_annotation_free(a);
	free(v);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_nvlink_switch_fabric)
{
	/* by hand: GPUs g0 g1 g2, switches s0 s1; g0 and g1 have 2 links into s0, g2 3 into s1;
	 * a direct g1-g2 link; then a link s0-s1 joins the fabrics */
	for (int joined = 0; joined < 2; joined++) {
		struct rf_pcitree *tree = rf_pcitree_new();
		struct rf_pcitree_node hb = { .type = RF_PCITREE_HOSTBRIDGE, .parent = -1 };
		int h = rf_pcitree_add(tree, &hb), idx[5];
		static const char *const pci[] = { "0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
						   "0000:04:00.0", "0000:05:00.0" };
		for (int i = 0; i < 5; i++) {
			struct rf_pcitree_node n = { .type = RF_PCITREE_DEVICE, .parent = h };
			snprintf(n.pci, sizeof(n.pci), "%s", pci[i]);
			n.vendor_id = 0x10de;
			n.class_id = i < 3 ? 0x0302 : 0x0680;
			idx[i] = rf_pcitree_add(tree, &n);
			ck_assert_int_ge(idx[i], 0);
		}
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[0], idx[3], 2), 0);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[1], idx[3], 1), 0);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[3], idx[1], 1), 0); /* adds up */
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[2], idx[4], 3), 0);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[1], idx[2], 1), 0);
		if (joined)
			ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[3], idx[4], 4), 0);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[0], idx[0], 1), -EINVAL);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[0], h, 1), -EINVAL);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[0], idx[1], 0), -EINVAL);
		ck_assert_int_eq(rf_pcitree_add_nvlink(tree, idx[0], 99, 1), -EINVAL);
		struct rf_pcitopo *t = NULL;
		ck_assert_int_eq(rf_pcitopo_compute(tree, &t), 0);
		ck_assert_uint_eq(t->n_gpus, 3);
		ck_assert_uint_eq(rf_pcitopo_nvlinks(t, 0, 1), 2); /* min(2, 2) through s0 */
		ck_assert_uint_eq(rf_pcitopo_nvlinks(t, 1, 2), joined ? 3 : 1);
		ck_assert_uint_eq(rf_pcitopo_nvlinks(t, 0, 2), joined ? 2 : 0);
		ck_assert_uint_eq(rf_pcitopo_nvlinks(t, 0, 0), 0);
		ck_assert_int_eq(rf_pcitopo_gpu_level(t, 0, 2),
				 joined ? RF_LEVEL_NVL : RF_LEVEL_PHB);
		ck_assert(joined == !has_note(t, "no NVLink path"));
		rf_pcitopo_free(t);
		rf_pcitree_free(tree);
	}
}
END_TEST

START_TEST(test_nvlink_l4_without_nvlink)
{
	/* 8 x L4 (10de:27b8, class 0302) on PCIe switches, 2 per switch, 2 switches per socket:
	 * no NVLink data at all; GPU to GPU is PIX behind one switch, NODE on the socket, SYS */
	struct rf_pcitopo *t = load("gen-l4-8.xml");
	ck_assert_uint_eq(t->n_gpus, 8);
	ck_assert_ptr_null(t->nvlinks);
	for (size_t i = 0; i < 8; i++) {
		ck_assert_uint_eq(t->devices[i].device_id, 0x27b8);
		for (size_t j = 0; j < 8; j++) {
			if (i == j)
				continue;
			enum rf_level want = i / 2 == j / 2   ? RF_LEVEL_PIX
					     : i / 4 == j / 4 ? RF_LEVEL_NODE
							      : RF_LEVEL_SYS;
			ck_assert_int_eq(rf_pcitopo_gpu_level(t, i, j), want);
			ck_assert_uint_eq(rf_pcitopo_nvlinks(t, i, j), 0);
		}
	}
	char *v = NULL, *text = NULL;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	ck_assert_ptr_nonnull(strstr(v, "{\"v\":1,")); /* older readers keep reading it */
	ck_assert_ptr_null(strstr(v, "\"l\""));
	ck_assert_int_eq(rf_pcitopo_table(t, &text), 0);
	ck_assert_ptr_null(strstr(text, "NV#"));
	free(text);
	free(v);
	rf_pcitopo_free(t);
}
END_TEST

/* 16 GPUs + 16 NICs in 32 distinct positions, every GPU pair NVLinked with its own count: the
 * worst case of version 2 */
START_TEST(test_nvlink_annotation_size_16_16)
{
	struct rf_pcitopo *t = calloc(1, sizeof(*t));
	size_t n = 32;
	unsigned x = 777;
	t->devices = calloc(n, sizeof(*t->devices));
	t->levels = calloc(n * n, 1);
	t->nvlinks = calloc(n * n, 1);
	t->n_devices = n;
	t->n_gpus = t->n_nics = 16;
	for (size_t i = 0; i < n; i++) {
		snprintf(t->devices[i].pci, sizeof(t->devices[i].pci), "0000:%02zx:00.0", i + 0x10);
		t->devices[i].kind = i < 16 ? RF_PCI_GPU : RF_PCI_NIC;
		t->devices[i].numa = (int)(i >= 16);
		for (size_t j = i + 1; j < n; j++) {
			x = x * 1103515245u + 12345u;
			t->levels[i * n + j] = t->levels[j * n + i] =
				(unsigned char)((x >> 16) % RF_LEVEL_UNKNOWN);
			if (j < 16)
				t->nvlinks[i * n + j] = t->nvlinks[j * n + i] =
					(unsigned char)(100 + i * 8 + j);
		}
	}
	char *v = NULL, err[256];
	struct rf_topo_annotation *a = NULL;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	ck_assert_uint_lt(strlen(v), 4096);
	ck_assert_msg(rf_topo_annotation_decode(v, strlen(v), &a, err, sizeof(err)) == 0, "%s",
		      err);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			unsigned links;
			ck_assert_int_eq(rf_topo_annotation_nvlinks(a, t->devices[i].pci,
								    t->devices[j].pci, &links),
					 0);
			ck_assert_uint_eq(links, rf_pcitopo_nvlinks(t, i, j));
		}
	rf_topo_annotation_free(a);
	free(v);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_nvlink_annotation_versions)
{
	/* version 1, as railfit wrote it before NVLink: still read, no links */
	static const char v1[] =
		"{\"v\":1,\"d\":[\"0000:1b:00.0\",\"0000:1c:00.0\",\"0000:18:00.0\"],"
		"\"k\":\"ggn\",\"n\":[0,0,0],\"c\":[0,0,1],\"m\":\"PP-\"}";
	/* version 2: the two GPUs (class 0) share 12 links */
	static const char v2[] =
		"{\"v\":2,\"d\":[\"0000:1b:00.0\",\"0000:1c:00.0\",\"0000:18:00.0\"],"
		"\"k\":\"ggn\",\"n\":[0,0,0],\"c\":[0,0,1],\"m\":\"PP-\","
		"\"l\":[[0,0,12]]}";
	struct {
		const char *value;
		const char *needle;
	} bad[] = {
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\",\"0000:18:00.0\"],\"k\":\"gn\",\"n\":[0,0],"
		  "\"c\":[0,1],\"m\":\"-P-\",\"l\":[[0,1,4]]}",
		  "hold a NIC" },
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\"],\"k\":\"g\",\"n\":[0],\"c\":[0],\"m\":\"-\","
		  "\"l\":[[0,1,4]]}",
		  "expected [class, class, links]" },
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\"],\"k\":\"g\",\"n\":[0],\"c\":[0],\"m\":\"-\","
		  "\"l\":[[0,0,0]]}",
		  "links 1..255" },
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\"],\"k\":\"g\",\"n\":[0],\"c\":[0],\"m\":\"-\","
		  "\"l\":[[0,0,1],[0,0,2]]}",
		  "listed twice" },
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\"],\"k\":\"g\",\"n\":[0],\"c\":[0],\"m\":\"-\","
		  "\"l\":{}}",
		  "expected an array" },
		{ "{\"v\":2,\"d\":[\"0000:1b:00.0\"],\"k\":\"g\",\"n\":[0],\"c\":[0],\"m\":\"-\","
		  "\"l\":[\"x\"]}",
		  "expected [class, class, links]" },
	};
	struct rf_topo_annotation *a = NULL;
	char err[256];
	unsigned links = 99;

	ck_assert_int_eq(rf_topo_annotation_decode(v1, strlen(v1), &a, err, sizeof(err)), 0);
	ck_assert(!rf_topo_annotation_has_nvlinks(a));
	ck_assert_int_eq(rf_topo_annotation_nvlinks(a, "0000:1b:00.0", "0000:1c:00.0", &links), 0);
	ck_assert_uint_eq(links, 0);
	rf_topo_annotation_free(a);

	ck_assert_int_eq(rf_topo_annotation_decode(v2, strlen(v2), &a, err, sizeof(err)), 0);
	ck_assert(rf_topo_annotation_has_nvlinks(a));
	ck_assert_int_eq(rf_topo_annotation_nvlinks(a, "1b:00.0", "0000:1c:00.0", &links), 0);
	ck_assert_uint_eq(links, 12);
	ck_assert_int_eq(rf_topo_annotation_nvlinks(a, "0000:1b:00.0", "0000:1b:00.0", &links), 0);
	ck_assert_uint_eq(links, 0);
	ck_assert_int_eq(rf_topo_annotation_nvlinks(a, "0000:1b:00.0", "0000:18:00.0", &links), 0);
	ck_assert_uint_eq(links, 0);
	ck_assert_int_eq(rf_topo_annotation_nvlinks(a, "0000:1b:00.0", "0000:99:00.0", &links),
			 -ENOENT);
	rf_topo_annotation_free(a);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = NULL;
		err[0] = 0;
		ck_assert_int_eq(rf_topo_annotation_decode(bad[i].value, strlen(bad[i].value), &a,
							   err, sizeof(err)),
				 -EINVAL);
		ck_assert_ptr_null(a);
		ck_assert_msg(strstr(err, bad[i].needle), "case %zu: %s", i, err);
	}
}
END_TEST

Suite *
nvlink_suite(void)
{
	Suite *s = suite_create("nvlink");
	TCase *tc = tcase_create("nvlink");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_nvlink_count);
	tcase_add_test(tc, test_nvlink_dgx2);
	tcase_add_test(tc, test_nvlink_switch_fabric);
	tcase_add_test(tc, test_nvlink_l4_without_nvlink);
	tcase_add_test(tc, test_nvlink_annotation_size_16_16);
	tcase_add_test(tc, test_nvlink_annotation_versions);
	suite_add_tcase(s, tc);
	return s;
}
