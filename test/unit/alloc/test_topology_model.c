/* The node annotation in the cluster model (DESIGN section 5, source 1): HGX H100 nodes that are
 * identical by their DRA attributes (GPU and NIC on one pcieRoot: PHB) but carry hwloc
 * annotations that see below the root complex: PIX on one (GPU and NIC behind one PCIe switch),
 * PXB on the other (a card switch in between). The annotations are computed from the generated
 * DGX H100 topologies, whose PCI addresses are those of the ResourceSlices in test/data/dra. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <hwloc.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "test/unit/alloc/alloc_fixture.h"
#include "topology/annotation.h"
#include "topology/hwloc_import.h"

Suite *topology_model_suite(void);

/* The annotation value railfit topology -o annotation prints for a test/data/topology file. */
static char *
annotation_of(const char *name)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[1024];
	hwloc_topology_t topo;
	struct rf_pcitree *tree;
	struct rf_pcitopo *t;
	char *v;

	snprintf(path, sizeof(path), "%s/topology/%s", dir ? dir : "test/data", name);
	ck_assert_int_eq(hwloc_topology_init(&topo), 0);
	ck_assert_int_eq(rf_hwloc_set_filters(topo), 0);
	ck_assert_int_eq(hwloc_topology_set_xml(topo, path), 0);
	ck_assert_int_eq(hwloc_topology_load(topo), 0);
	ck_assert_int_eq(rf_hwloc_import(topo, &tree), 0);
	hwloc_topology_destroy(topo);
	ck_assert_int_eq(rf_pcitopo_compute(tree, &t), 0);
	rf_pcitree_free(tree);
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	rf_pcitopo_free(t);
	return v;
}

/* Set metadata.annotations[key] on the Node named `node` (value stolen). */
static void
annotate(struct fixture *f, const char *node, const char *key, json_t *value)
{
	for (size_t i = 0; i < json_array_size(f->objs.nodes); i++) {
		json_t *n = json_array_get(f->objs.nodes, i);
		json_t *md = json_object_get(n, "metadata");
		if (strcmp(json_string_value(json_object_get(md, "name")), node) != 0)
			continue;
		json_t *ann = json_object_get(md, "annotations");
		if (!ann) {
			ann = json_object();
			json_object_set_new(md, "annotations", ann);
		}
		json_object_set_new(ann, key, value);
		return;
	}
	ck_abort_msg("no node %s", node);
}

static void
annotate_file(struct fixture *f, const char *node, const char *file)
{
	char *v = annotation_of(file);
	annotate(f, node, RF_TOPO_ANNOTATION_KEY, json_string(v));
	free(v);
}

static const struct rf_device *
device(const struct rf_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (strcmp(n->devices[i]->name, name) == 0)
			return n->devices[i];
	ck_abort_msg("no device %s on %s", name, n->name);
	return NULL;
}

static enum rf_level
level(const struct rf_cluster *c, const char *node, const char *a, const char *b,
      enum rf_level_source *src)
{
	const struct rf_node *n = rf_cluster_node(c, node);
	ck_assert_ptr_nonnull(n);
	return rf_node_level(n, device(n, a), device(n, b), src);
}

static bool
has_warning(const struct rf_cluster *c, const char *needle)
{
	for (size_t i = 0; i < rf_cluster_n_warnings(c); i++)
		if (strstr(rf_cluster_warning(c, i), needle))
			return true;
	return false;
}

static json_t *
pod_with_claim(const char *claim)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"trainer\",\"namespace\":\"ml\"},\"spec\":{"
		 "\"resourceClaims\":[{\"name\":\"c\",\"resourceClaimName\":\"%s\"}]}}",
		 claim);
	json_t *p = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Evaluate the pod on a node with explain on; returns the node's explain JSON. */
static json_t *
evaluate(struct fixture *f, json_t *pod, const char *node, struct rf_node_eval *e)
{
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f->c, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f->c, &d, node, true, e), 0);
	rf_demand_release(&d);
	json_t *j = rf_node_eval_json(f->c, e);
	ck_assert_ptr_nonnull(j);
	return j;
}

/* The first predicted entry of the given kind. */
static json_t *
predicted(json_t *node_json, const char *kind)
{
	json_t *arr = json_object_get(node_json, "predicted");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *p = json_array_get(arr, i);
		if (strcmp(json_string_value(json_object_get(p, "kind")), kind) == 0)
			return p;
	}
	ck_abort_msg("no predicted %s", kind);
	return NULL;
}

START_TEST(test_topology_model_annotation_beats_dra)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	fixture_add_hgx(&f, "dra");
	fixture_add_hgx(&f, "pix");
	fixture_add_hgx(&f, "pxb");
	annotate_file(&f, "pix", "gen-dgx-h100.xml");
	annotate_file(&f, "pxb", "gen-dgx-h100-pxb.xml");
	fixture_add_claim(&f, "ml", "aligned", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	ck_assert_uint_eq(rf_cluster_n_warnings(f.c), 0);

	const struct rf_node *pix = rf_cluster_node(f.c, "pix");
	ck_assert_ptr_nonnull(pix->topo);
	ck_assert_ptr_null(pix->topo_error);
	ck_assert_ptr_null(rf_cluster_node(f.c, "dra")->topo);

	/* gpu-0 (1b:00.0) and NIC 18:00.0 share pcieRoot pci0000:15: PHB by DRA attributes */
	enum rf_level_source src;
	ck_assert_int_eq(level(f.c, "dra", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PHB);
	ck_assert_int_eq(src, RF_SRC_DRA);
	/* the annotations see the switch: one switch (PIX), or the GPU switch + a card (PXB) */
	ck_assert_int_eq(level(f.c, "pix", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PIX);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);
	ck_assert_int_eq(level(f.c, "pxb", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PXB);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);
	/* the rest of the annotation agrees with DRA, but is still the source */
	ck_assert_int_eq(level(f.c, "pix", "gpu-0", "pci-0000-40-00-0", &src), RF_LEVEL_NODE);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);
	ck_assert_int_eq(level(f.c, "pix", "gpu-0", "pci-0000-9a-00-0", &src), RF_LEVEL_SYS);
	ck_assert_int_eq(level(f.c, "pix", "gpu-7", "pci-0000-2a-00-1", &src), RF_LEVEL_SYS);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);

	json_t *p = pod_with_claim("aligned");
	json_t *jd = evaluate(&f, p, "dra", e);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_PHB);
	int score_dra = e->score;
	json_t *jx = evaluate(&f, p, "pix", e);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_PIX);
	int score_pix = e->score;
	double align_pix = e->parts[RF_PART_ALIGNMENT];
	json_t *jb = evaluate(&f, p, "pxb", e);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_PXB);
	int score_pxb = e->score;
	double align_pxb = e->parts[RF_PART_ALIGNMENT];

	/* identical by DRA, different below the root complex: the PIX node scores higher */
	ck_assert_msg(score_pix > score_pxb, "pix %d, pxb %d", score_pix, score_pxb);
	ck_assert_msg(score_pxb >= score_dra, "pxb %d, dra %d", score_pxb, score_dra);
	ck_assert_double_eq_tol(align_pix, 1.0, 1e-9);
	ck_assert_double_eq_tol(align_pxb, 0.85, 1e-9);

	/* explain shows the level and where it came from */
	json_t *g = predicted(jx, "gpu");
	ck_assert_str_eq(json_string_value(json_object_get(g, "device")), "gpu-0");
	ck_assert_str_eq(json_string_value(json_object_get(g, "level")), "PIX");
	ck_assert_str_eq(json_string_value(json_object_get(g, "levelSource")), "annotation");
	ck_assert_str_eq(json_string_value(json_object_get(predicted(jx, "nic"), "levelSource")),
			 "annotation");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(jx, "sources"), "locality")),
		"annotation");
	ck_assert_str_eq(json_string_value(json_object_get(predicted(jb, "gpu"), "level")), "PXB");
	g = predicted(jd, "gpu");
	ck_assert_str_eq(json_string_value(json_object_get(g, "level")), "PHB");
	ck_assert_str_eq(json_string_value(json_object_get(g, "levelSource")), "dra");

	json_decref(jd);
	json_decref(jx);
	json_decref(jb);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_topology_model_bad_annotations_fall_back)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "broken");
	fixture_add_hgx(&f, "future");
	fixture_add_hgx(&f, "number");
	fixture_add_hgx(&f, "elsewhere");
	fixture_add_hgx(&f, "nobridges");
	annotate(&f, "broken", RF_TOPO_ANNOTATION_KEY, json_string("{\"v\":1,"));
	annotate(&f, "future", RF_TOPO_ANNOTATION_KEY, json_string("{\"v\":9}"));
	annotate(&f, "number", RF_TOPO_ANNOTATION_KEY, json_integer(3));
	/* an annotation of another machine: none of its addresses is a device of this node */
	annotate_file(&f, "elsewhere", "32em64t-2n8c2t-pci-wholeio.xml");
	/* hwloc without bridges: UNKNOWN within a socket, SYS across sockets */
	annotate_file(&f, "nobridges", "gen-dgx-h100-nobridges.xml");
	fixture_build(&f);

	ck_assert(has_warning(f.c, "node broken: annotation railfit.io/pci-topology: not valid "
				   "JSON"));
	ck_assert(has_warning(f.c, "node future: annotation railfit.io/pci-topology: unknown "
				   "format version 9"));
	ck_assert(has_warning(f.c, "node number: annotation railfit.io/pci-topology: expected a "
				   "string; using DRA attributes"));
	ck_assert(has_warning(f.c, "node elsewhere: annotation railfit.io/pci-topology: none of "
				   "its 7 PCI addresses matches one of the 17 GPUs and NICs"));
	ck_assert(!has_warning(f.c, "node nobridges"));

	const struct rf_node *n = rf_cluster_node(f.c, "broken");
	ck_assert_ptr_null(n->topo);
	ck_assert_ptr_nonnull(strstr(n->topo_error, "not valid JSON"));
	ck_assert_ptr_nonnull(rf_cluster_node(f.c, "elsewhere")->topo);
	ck_assert_ptr_nonnull(rf_cluster_node(f.c, "elsewhere")->topo_error);

	enum rf_level_source src;
	static const char *const nodes[] = { "broken", "future", "number", "elsewhere" };
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(level(f.c, nodes[i], "gpu-0", "pci-0000-18-00-0", &src),
				 RF_LEVEL_PHB);
		ck_assert_int_eq(src, RF_SRC_DRA);
	}
	/* UNKNOWN in the annotation: the DRA attributes decide; SYS there is still used */
	ck_assert_int_eq(level(f.c, "nobridges", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PHB);
	ck_assert_int_eq(src, RF_SRC_DRA);
	ck_assert_int_eq(level(f.c, "nobridges", "gpu-0", "pci-0000-9a-00-0", &src), RF_LEVEL_SYS);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);
	fixture_release(&f);
}
END_TEST

START_TEST(test_topology_model_configured_key)
{
	struct fixture f;
	fixture_init(&f);
	free(f.cfg.devices.topology_annotation);
	f.cfg.devices.topology_annotation = strdup("example.com/pci");
	fixture_add_hgx(&f, "a");
	fixture_add_hgx(&f, "b");
	char *v = annotation_of("gen-dgx-h100-pxb.xml");
	annotate(&f, "a", "example.com/pci", json_string(v));
	annotate(&f, "b", RF_TOPO_ANNOTATION_KEY, json_string(v)); /* not the configured key */
	free(v);
	fixture_build(&f);
	enum rf_level_source src;
	ck_assert_int_eq(level(f.c, "a", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PXB);
	ck_assert_int_eq(src, RF_SRC_ANNOTATION);
	ck_assert_int_eq(level(f.c, "b", "gpu-0", "pci-0000-18-00-0", &src), RF_LEVEL_PHB);
	ck_assert_int_eq(src, RF_SRC_DRA);
	fixture_release(&f);
}
END_TEST

Suite *
topology_model_suite(void)
{
	Suite *s = suite_create("topology_model");
	TCase *tc = tcase_create("annotation");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_topology_model_annotation_beats_dra);
	tcase_add_test(tc, test_topology_model_bad_annotations_fall_back);
	tcase_add_test(tc, test_topology_model_configured_key);
	suite_add_tcase(s, tc);
	return s;
}
