/* The GPU-to-GPU part and railfit.io/min-gpu-alignment (issue 15), on an 8 x L4 node without
 * NVLink (DRA attributes alone, then its hwloc annotation from test/data/topology/gen-l4-8.xml)
 * and on the real DGX-2 export (NVLink through NVSwitches, annotation version 2); and the
 * network-locality part and railfit.io/max-spread on a 3-block cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <hwloc.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/memo.h"
#include "test/unit/alloc/alloc_fixture.h"
#include "topology/annotation.h"
#include "topology/hwloc_import.h"
#include "topology/hwloc_nvlink.h"

Suite *gpu_locality_suite(void);

static const char *const SPEC_TWO_GPUS =
	"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
	"\"gpu.nvidia.com\",\"count\":2}}]}}";

/* What `railfit topology --xml F -o annotation` prints. */
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
	ck_assert_int_eq(rf_hwloc_import_nvlinks(topo, tree), 0);
	hwloc_topology_destroy(topo);
	ck_assert_int_eq(rf_pcitopo_compute(tree, &t), 0);
	rf_pcitree_free(tree);
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	rf_pcitopo_free(t);
	return v;
}

static const char *const DGX2_PCI[] = {
	"0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",
	"0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",
	"0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
	"0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0",
};

/* Evaluate a pod (claim `claim`, annotations) on a node with explain. */
static int
eval(struct fixture *f, const char *claim, const char *ann, const char *node,
     struct rf_node_eval *e, enum rf_demand_kind want_kind)
{
	json_t *pod = fixture_pod("p", claim, ann);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f->c, pod, &d), 0);
	ck_assert_int_eq(d.kind, want_kind);
	int r = want_kind == RF_DEMAND_KNOWN ? rf_evaluate_node(f->c, &d, node, true, e) : 0;
	if (want_kind != RF_DEMAND_KNOWN)
		snprintf(e->reasons[0], RF_REASON_LEN, "%s", d.unknown_reason);
	rf_demand_release(&d);
	json_decref(pod);
	return r;
}

static bool
has_reason(const struct rf_node_eval *e, const char *needle)
{
	for (size_t i = 0; i < e->n_reasons; i++)
		if (strstr(e->reasons[i], needle))
			return true;
	return false;
}

static void
l4_node(struct fixture *f, bool annotated, bool hold_gpu0)
{
	fixture_init(f);
	char *v = annotated ? annotation_of("gen-l4-8.xml") : NULL;
	fixture_add_node(f, "l4", NULL, v);
	free(v);
	fixture_add_gpus(f, "l4", 8, FIXTURE_L4_PCI, FIXTURE_L4_ROOTS, FIXTURE_L4_NUMA);
	fixture_add_claim(f, "ml", "two", SPEC_TWO_GPUS, NULL, NULL);
	fixture_add_claim(f, "ml", "one", SPEC_GPU_ONLY, NULL, NULL);
	if (hold_gpu0)
		fixture_add_claim(f, "ml", "held", SPEC_GPU_ONLY, "l4",
				  (const char *const[]){ "gpu.nvidia.com:gpu-0", NULL });
	fixture_build(f);
}

START_TEST(test_gpu_l4_dra_attributes)
{
	/* no annotation: GPUs on one pcieRoot are PHB, on one NUMA node NODE, else SYS */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	l4_node(&f, false, false);
	ck_assert_int_eq(eval(&f, "two", NULL, "l4", e, RF_DEMAND_KNOWN), 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_str_eq(e->predicted.picks[0].dev->name, "gpu-0");
	ck_assert_str_eq(e->predicted.picks[1].dev->name, "gpu-1");
	ck_assert(e->gpu_applies);
	ck_assert_int_eq(e->gpu_level, RF_LEVEL_PHB);
	ck_assert_int_eq(e->gpu_source, RF_SRC_DRA);
	ck_assert(e->part_applies[RF_PART_GPU]);
	ck_assert_double_eq_tol(e->parts[RF_PART_GPU], 0.7, 1e-9);
	ck_assert(has_reason(e, "GPUs gpu-0 + gpu-1: PHB (dra)"));

	/* one GPU: the part does not apply, nothing else moves */
	ck_assert_int_eq(eval(&f, "one", NULL, "l4", e, RF_DEMAND_KNOWN), 0);
	ck_assert(!e->gpu_applies);
	ck_assert(!e->part_applies[RF_PART_GPU]);
	ck_assert(!e->part_applies[RF_PART_LOCALITY]);

	/* min-gpu-alignment on one GPU: nothing to check */
	ck_assert_int_eq(eval(&f, "one", "\"railfit.io/min-gpu-alignment\":\"PIX\"", "l4", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert(has_reason(e, "no pair to check"));

	/* a bad value makes the demand unknown, naming the vocabulary */
	eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"NV6\"", "l4", e, RF_DEMAND_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(e->reasons[0], "expected one of NVL, PIX"));
	fixture_release(&f);

	/* gpu-0 held: the allocator takes gpu-1 + gpu-2 (NODE); gpu-2 + gpu-3 share a root */
	l4_node(&f, false, true);
	ck_assert_int_eq(eval(&f, "two", NULL, "l4", e, RF_DEMAND_KNOWN), 0);
	ck_assert_int_eq(e->gpu_level, RF_LEVEL_NODE);
	ck_assert_double_eq_tol(e->parts[RF_PART_GPU], 0.4, 1e-9);
	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"NODE\"", "l4", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"PHB\"", "l4", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_str_eq(
		e->reasons[0],
		"min-gpu-alignment PHB: allocator would pick gpu-1 + gpu-2 (NODE); gpu-2 + "
		"gpu-3 (PHB) are free: add constraint matchAttribute "
		"resource.kubernetes.io/pcieRoot over request [gpu] to claim ml/two");
	fixture_release(&f);
	free(e);
}
END_TEST

START_TEST(test_gpu_l4_annotation)
{
	/* the hwloc annotation sees the switches: GPUs behind one switch are PIX */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	l4_node(&f, true, true);
	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"PIX\"", "l4", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_int_eq(e->gpu_source, RF_SRC_ANNOTATION);
	ck_assert_str_eq(
		e->reasons[0],
		"min-gpu-alignment PIX: allocator would pick gpu-1 + gpu-2 (NODE); gpu-2 + "
		"gpu-3 (PIX) are free: add constraint matchAttribute "
		"resource.kubernetes.io/pcieRoot over request [gpu] to claim ml/two");
	/* no NVLink on an L4 node, whatever is freed */
	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"NVL\"", "l4", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	ck_assert_str_eq(e->reasons[0],
			 "min-gpu-alignment NVL: allocator would pick gpu-1 + gpu-2 (NODE) and no "
			 "free set is better; best on this node even with every device free: PIX");

	/* explain's JSON names the part, its weight, the level and its source */
	json_t *j = rf_node_eval_json(f.c, e);
	ck_assert_str_eq(json_string_value(json_object_get(j, "gpuLevel")), "NODE");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "sources"), "gpu")),
			 "annotation");
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(json_object_get(j, "parts"), "gpu")), 0.4, 1e-9);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(json_object_get(j, "weights"), "gpu")), 3, 1e-9);
	json_decref(j);
	fixture_release(&f);
	free(e);
}
END_TEST

START_TEST(test_gpu_dgx2_nvlink)
{
	/* the DGX-2 export: NV6 inside each baseboard, the PCIe level across */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	char *v = annotation_of("nvidiaDGX2.xml");
	fixture_add_node(&f, "dgx2", NULL, v);
	free(v);
	fixture_add_gpus(&f, "dgx2", 16, DGX2_PCI, NULL, NULL);
	fixture_add_claim(&f, "ml", "two", SPEC_TWO_GPUS, NULL, NULL);
	fixture_build(&f);

	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"NVL\"", "dgx2", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_int_eq(e->gpu_level, RF_LEVEL_NVL);
	ck_assert_double_eq_tol(e->parts[RF_PART_GPU], 1.0, 1e-9);
	ck_assert(has_reason(e, "GPUs gpu-0 + gpu-1: NVL (annotation)"));
	const struct rf_node *n = rf_cluster_node(f.c, "dgx2");
	unsigned links = 0;
	ck_assert_int_eq(rf_node_gpu_level(n, n->devices[0], n->devices[7], NULL, &links),
			 RF_LEVEL_NVL);
	ck_assert_uint_eq(links, 6);
	ck_assert_int_eq(rf_node_gpu_level(n, n->devices[0], n->devices[8], NULL, &links),
			 RF_LEVEL_SYS);
	ck_assert_uint_eq(links, 0);
	/* GPU to GPU never leaks into the GPU-NIC level */
	ck_assert_int_eq(rf_node_level(n, n->devices[0], n->devices[1], NULL), RF_LEVEL_PIX);

	/* gpu-0..6 held: the allocator takes gpu-7 + gpu-8, across the boards (SYS) */
	fixture_add_claim(&f, "ml", "held",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":7}}]}}",
			  "dgx2",
			  (const char *const[]){ "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1",
						 "gpu.nvidia.com:gpu-2", "gpu.nvidia.com:gpu-3",
						 "gpu.nvidia.com:gpu-4", "gpu.nvidia.com:gpu-5",
						 "gpu.nvidia.com:gpu-6", NULL });
	fixture_build(&f);
	ck_assert_int_eq(eval(&f, "two", NULL, "dgx2", e, RF_DEMAND_KNOWN), 0);
	ck_assert_int_eq(e->gpu_level, RF_LEVEL_SYS);
	ck_assert_double_eq_tol(e->parts[RF_PART_GPU], 0.1, 1e-9);
	ck_assert_int_eq(eval(&f, "two", "\"railfit.io/min-gpu-alignment\":\"NVL\"", "dgx2", e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_str_eq(e->reasons[0],
			 "min-gpu-alignment NVL: allocator would pick gpu-7 + gpu-8 (SYS); gpu-8 + "
			 "gpu-9 (NVL) are free; no DRA attribute names NVLink domains, so no claim "
			 "constraint can ask for NVL");
	fixture_release(&f);
	free(e);
}
END_TEST

/* ---- GPU to CPU: kubernetes-sigs/dra-driver-cpu slices (test/data/dra/resourceslice-dra-cpu-*,
 * shaped as the driver's docs/user/device-attributes.md shows them: grouped mode with one
 * consumable dra.cpu/cpu device per NUMA node, individual mode with one device per CPU) ---- */

static void
hgx_with_cpus(struct fixture *f, const char *mode, bool hold_numa0_gpus)
{
	char path[128], *t;
	fixture_init(f);
	t = fixture_read("dra/deviceclass-dra.cpu.json");
	fixture_add_json(f, t);
	free(t);
	fixture_add_hgx(f, "hgx-h100-node-01");
	snprintf(path, sizeof(path), "dra/resourceslice-dra-cpu-%s.json", mode);
	t = fixture_read(path);
	fixture_add_json(f, t);
	free(t);
	if (hold_numa0_gpus)
		fixture_add_claim(f, "ml", "held",
				  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
				  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":4}}]}}",
				  "hgx-h100-node-01",
				  (const char *const[]){
					  "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1",
					  "gpu.nvidia.com:gpu-2", "gpu.nvidia.com:gpu-3", NULL });
	/* one GPU and 8 CPUs from a grouped device; the same with the GPU's NIC (pcieRoot) */
	fixture_add_claim(f, "ml", "gpu-cpus",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}},{\"name\":"
			  "\"cpus\",\"exactly\":{\"deviceClassName\":\"dra.cpu\",\"capacity\":{"
			  "\"requests\":{\"dra.cpu/cpu\":\"8\"}}}}]}}",
			  NULL, NULL);
	fixture_add_claim(
		f, "ml", "gpu-nic-cpus",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
		"\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}},{\"name\":\"nic\","
		"\"exactly\":{\"deviceClassName\":\"rdma-nic\",\"count\":1}},{\"name\":"
		"\"cpus\",\"exactly\":{\"deviceClassName\":\"dra.cpu\",\"capacity\":{"
		"\"requests\":{\"dra.cpu/cpu\":\"8\"}}}}],\"constraints\":[{\"requests\":"
		"[\"gpu\",\"nic\"],\"matchAttribute\":\"resource.kubernetes.io/pcieRoot\"}]}}",
		NULL, NULL);
	/* individual mode: two CPU devices */
	fixture_add_claim(f, "ml", "gpu-2cpus",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}},{\"name\":"
			  "\"cpus\",\"exactly\":{\"deviceClassName\":\"dra.cpu\",\"count\":2}}]}}",
			  NULL, NULL);
	fixture_add_claim(f, "ml", "gpu", SPEC_GPU_ONLY, NULL, NULL);
	fixture_build(f);
}

static const char *
pick(const struct rf_node_eval *e, enum rf_dev_kind kind, size_t nth)
{
	for (size_t i = 0; i < e->predicted.n; i++)
		if (e->predicted.picks[i].dev->kind == kind && nth-- == 0)
			return e->predicted.picks[i].dev->name;
	return "(none)";
}

START_TEST(test_cpu_grouped_mode)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	const char *node = "hgx-h100-node-01";
	hgx_with_cpus(&f, "grouped", false);
	const struct rf_node *n = rf_cluster_node(f.c, node);
	size_t cpus = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		if (n->devices[i]->kind == RF_DEV_CPU) {
			cpus++;
			ck_assert(n->devices[i]->allow_multiple);
			ck_assert_int_ge(n->devices[i]->loc.numa, 0);
		}
	ck_assert_uint_eq(cpus, 2);

	/* gpu-0 (NUMA 0 from its root's NIC) and 8 CPUs of cpudevnuma000: aligned */
	ck_assert_int_eq(eval(&f, "gpu-cpus", NULL, node, e, RF_DEMAND_KNOWN), 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_str_eq(pick(e, RF_DEV_GPU, 0), "gpu-0");
	ck_assert_str_eq(pick(e, RF_DEV_CPU, 0), "cpudevnuma000");
	ck_assert(e->cpu_applies);
	ck_assert_double_eq_tol(e->parts[RF_PART_CPU], 1.0, 1e-9);
	ck_assert(has_reason(e, "CPUs cpudevnuma000 (NUMA 0): 1 of 1 on NUMA node 0 of the pod's "
				"GPUs"));
	json_t *j = rf_node_eval_json(f.c, e);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "sources"), "cpu")),
			 "dra");
	ck_assert_int_eq(json_integer_value(
				 json_object_get(json_object_get(j, "cpus"), "onAcceleratorNuma")),
			 1);
	json_decref(j);

	/* a GPU-only pod: CPUs come from kubelet, railfit says it cannot see them */
	ck_assert_int_eq(eval(&f, "gpu", NULL, node, e, RF_DEMAND_KNOWN), 0);
	ck_assert(!e->part_applies[RF_PART_CPU]);
	ck_assert(has_reason(e, "CPUs: from kubelet"));
	j = rf_node_eval_json(f.c, e);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "sources"), "cpu")),
			 "kubelet (not visible to railfit)");
	json_decref(j);
	fixture_release(&f);

	/* GPUs of NUMA 0 held: gpu-4 (NUMA 1) with cpudevnuma000 (NUMA 0, first in the slice) */
	hgx_with_cpus(&f, "grouped", true);
	ck_assert_int_eq(eval(&f, "gpu-cpus", NULL, node, e, RF_DEMAND_KNOWN), 0);
	ck_assert_str_eq(pick(e, RF_DEV_GPU, 0), "gpu-4");
	ck_assert_str_eq(pick(e, RF_DEV_CPU, 0), "cpudevnuma000");
	ck_assert_double_eq_tol(e->parts[RF_PART_CPU], 0, 1e-9);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS); /* nothing asked */
	/* min-alignment NODE covers the CPUs: the other group is free */
	ck_assert_int_eq(eval(&f, "gpu-cpus", "\"railfit.io/min-alignment\":\"NODE\"", node, e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_str_eq(e->reasons[0],
			 "min-alignment NODE: allocator would pick CPUs cpudevnuma000 (NUMA 0) off "
			 "NUMA node 1 of the pod's GPUs; cpudevnuma001 (NUMA 1) are free");
	/* with the NIC in the claim: the constraint both drivers can match */
	ck_assert_int_eq(eval(&f, "gpu-nic-cpus", "\"railfit.io/min-alignment\":\"NODE\"", node, e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_str_eq(
		e->reasons[0],
		"min-alignment NODE: allocator would pick CPUs cpudevnuma000 (NUMA 0) off "
		"NUMA node 1 of the pod's GPUs; cpudevnuma001 (NUMA 1) are free: add "
		"constraint matchAttribute dra.net/numaNode over requests [nic cpus] to claim "
		"ml/gpu-nic-cpus");
	/* SYS asks nothing of the CPUs */
	ck_assert_int_eq(eval(&f, "gpu-cpus", "\"railfit.io/min-alignment\":\"SYS\"", node, e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	/* filter.minAlignment NODE covers them as well */
	f.cfg.filter.min_alignment = RF_LEVEL_NODE;
	fixture_build(&f);
	ck_assert_int_eq(eval(&f, "gpu-cpus", NULL, node, e, RF_DEMAND_KNOWN), 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_ptr_nonnull(
		strstr(e->reasons[0], "min-alignment NODE: allocator would pick CPUs"));
	fixture_release(&f);
	free(e);
}
END_TEST

START_TEST(test_cpu_individual_mode)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	const char *node = "hgx-h100-node-01";
	hgx_with_cpus(&f, "individual", false);
	ck_assert_int_eq(eval(&f, "gpu-2cpus", NULL, node, e, RF_DEMAND_KNOWN), 0);
	ck_assert_str_eq(pick(e, RF_DEV_CPU, 0), "cpudev000");
	ck_assert_str_eq(pick(e, RF_DEV_CPU, 1), "cpudev001");
	ck_assert_uint_eq(e->n_cpus, 2);
	ck_assert_double_eq_tol(e->parts[RF_PART_CPU], 1.0, 1e-9);
	fixture_release(&f);

	/* gpu-4 on NUMA 1, the first two CPUs on NUMA 0: part 0; NODE fails, NUMA 1 CPUs free */
	hgx_with_cpus(&f, "individual", true);
	ck_assert_int_eq(eval(&f, "gpu-2cpus", "\"railfit.io/min-alignment\":\"NODE\"", node, e,
			      RF_DEMAND_KNOWN),
			 0);
	ck_assert_double_eq_tol(e->parts[RF_PART_CPU], 0, 1e-9);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_str_eq(
		e->reasons[0],
		"min-alignment NODE: allocator would pick CPUs cpudev000 (NUMA 0) + cpudev001 "
		"(NUMA 0) off NUMA node 1 of the pod's GPUs; cpudev004 (NUMA 1) + cpudev005 "
		"(NUMA 1) are free");
	fixture_release(&f);
	free(e);
}
END_TEST

/* ---- network locality: three blocks, two spines ---- */

#define BLOCK(b, s)                                                                                \
	"\"network.topology.kubernetes.io/block\":\"" b "\","                                      \
	"\"network.topology.kubernetes.io/spine\":\"" s "\""

static void
three_blocks(struct fixture *f, bool member)
{
	static const struct {
		const char *name, *labels;
	} nodes[] = {
		{ "n1", BLOCK("b1", "s1") },
		{ "n2", BLOCK("b1", "s1") },
		{ "n3", BLOCK("b2", "s1") },
		{ "n4", BLOCK("b2", "s1") },
		{ "n5", BLOCK("b3", "s2") },
		{ "n6", BLOCK("b3", "s2") },
		{ "n7", NULL },
	};
	fixture_init(f);
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		fixture_add_node(f, nodes[i].name, nodes[i].labels, NULL);
		fixture_add_gpus(f, nodes[i].name, 2, FIXTURE_L4_PCI, FIXTURE_L4_ROOTS,
				 FIXTURE_L4_NUMA);
	}
	fixture_add_claim(f, "ml", "c", SPEC_GPU_ONLY, NULL, NULL);
	if (member) {
		/* one pod of group "job" runs on n1 (block b1, spine s1) */
		json_t *p = fixture_pod("member", NULL, "\"railfit.io/group\":\"job\"");
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string("n1"));
		json_object_set_new(p, "status", json_pack("{s:s}", "phase", "Running"));
		json_array_append_new(f->objs.pods, p);
	}
	fixture_build(f);
}

START_TEST(test_locality_three_blocks)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	static const char *const names[] = { "n1", "n2", "n3", "n4", "n5", "n6", "n7" };
	static const enum rf_place want[] = { RF_PLACE_BLOCK,     RF_PLACE_BLOCK,
					      RF_PLACE_SPINE,     RF_PLACE_SPINE,
					      RF_PLACE_ELSEWHERE, RF_PLACE_ELSEWHERE,
					      RF_PLACE_UNLABELLED };
	static const double pts[] = { 1, 1, 0.5, 0.5, 0, 0, 0 };
	int scores[7];

	/* no member yet: the part does not apply, max-spread keeps nothing out */
	three_blocks(&f, false);
	for (size_t i = 0; i < 7; i++) {
		eval(&f, "c", "\"railfit.io/group\":\"job\",\"railfit.io/max-spread\":\"block\"",
		     names[i], e, RF_DEMAND_KNOWN);
		ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
		ck_assert(!e->part_applies[RF_PART_LOCALITY]);
		scores[i] = e->score;
	}
	ck_assert(has_reason(e, "nothing to keep together yet"));
	fixture_release(&f);

	three_blocks(&f, true);
	for (size_t i = 0; i < 7; i++) {
		ck_assert_int_eq(
			eval(&f, "c", "\"railfit.io/group\":\"job\"", names[i], e, RF_DEMAND_KNOWN),
			0);
		ck_assert_int_eq(e->place, want[i]);
		ck_assert(e->part_applies[RF_PART_LOCALITY]);
		ck_assert_double_eq_tol(e->parts[RF_PART_LOCALITY], pts[i], 1e-9);
		ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
		if (i)
			ck_assert_int_ge(scores[i - 1], e->score);
		scores[i] = e->score;
	}
	ck_assert_int_gt(scores[0], scores[2]);
	ck_assert_int_gt(scores[2], scores[4]);
	/* a pod of another group (or none) is not pulled anywhere */
	eval(&f, "c", "\"railfit.io/group\":\"other\"", "n5", e, RF_DEMAND_KNOWN);
	ck_assert(!e->part_applies[RF_PART_LOCALITY]);
	eval(&f, "c", NULL, "n5", e, RF_DEMAND_KNOWN);
	ck_assert(!e->part_applies[RF_PART_LOCALITY]);

	/* max-spread: block keeps b1, spine keeps s1; a node without labels is out either way */
	for (size_t i = 0; i < 7; i++) {
		eval(&f, "c", "\"railfit.io/group\":\"job\",\"railfit.io/max-spread\":\"block\"",
		     names[i], e, RF_DEMAND_KNOWN);
		ck_assert_int_eq(e->verdict, i < 2 ? RF_VERDICT_PASS : RF_VERDICT_UNRESOLVABLE);
		if (i == 2)
			ck_assert_str_eq(e->reasons[0], "max-spread block: node is in block b2, "
							"group ml/job runs in block b1");
		if (i == 6)
			ck_assert_str_eq(e->reasons[0],
					 "max-spread block: node has no block label "
					 "(groups.blockLabels), group ml/job runs in block b1");
		eval(&f, "c", "\"railfit.io/group\":\"job\",\"railfit.io/max-spread\":\"spine\"",
		     names[i], e, RF_DEMAND_KNOWN);
		ck_assert_int_eq(e->verdict, i < 4 ? RF_VERDICT_PASS : RF_VERDICT_UNRESOLVABLE);
	}
	eval(&f, "c", "\"railfit.io/max-spread\":\"rack\"", "n1", e, RF_DEMAND_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(e->reasons[0], "expected block or spine"));

	/* filter and prioritize through the memo: the same verdicts and scores, node by node,
	 * although every node has the same usage fingerprint */
	json_t *pod = fixture_pod(
		"p", "c", "\"railfit.io/group\":\"job\",\"railfit.io/max-spread\":\"spine\"");
	struct rf_demand d;
	struct rf_judge_ctx ctx;
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
	ck_assert_int_eq(rf_judge_begin(f.c, &d, &ctx), 0);
	ck_assert_ptr_nonnull(ctx.shape);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < 7; i++) {
			struct rf_judgement j;
			ck_assert_int_eq(rf_evaluate_node(f.c, &d, names[i], false, e), 0);
			ck_assert_int_eq(rf_judge_node(&ctx, names[i], true, scratch, &j), 0);
			ck_assert_int_eq(j.verdict, e->verdict);
			ck_assert_int_eq(j.score, e->score);
		}
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	json_decref(pod);
	free(scratch);

	/* explain names the node's place and the group's */
	pod = fixture_pod("p", "c", "\"railfit.io/group\":\"job\"");
	json_t *doc = rf_explain_pod(f.c, pod, "n3");
	ck_assert_ptr_nonnull(doc);
	json_t *nj = json_array_get(json_object_get(doc, "nodes"), 0);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(nj, "network"), "place")),
		"same-spine");
	ck_assert_str_eq(
		json_string_value(json_array_get(
			json_object_get(json_object_get(doc, "groupPlaces"), "blocks"), 0)),
		"b1");
	json_decref(doc);
	json_decref(pod);
	fixture_release(&f);
	free(e);
}
END_TEST

Suite *
gpu_locality_suite(void)
{
	Suite *s = suite_create("gpu_locality");
	TCase *tc = tcase_create("gpu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gpu_l4_dra_attributes);
	tcase_add_test(tc, test_gpu_l4_annotation);
	tcase_add_test(tc, test_gpu_dgx2_nvlink);
	suite_add_tcase(s, tc);
	tc = tcase_create("cpu");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cpu_grouped_mode);
	tcase_add_test(tc, test_cpu_individual_mode);
	suite_add_tcase(s, tc);
	tc = tcase_create("locality");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_locality_three_blocks);
	suite_add_tcase(s, tc);
	return s;
}
