/* railfit simulate on small hand-built clusters where the better placement is known, both columns
 * asserted; the table against a golden file; the workload grammar. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/gen/gen_cluster.h"
#include "alloc/sim/report.h"
#include "alloc/sim/simulate.h"
#include "alloc/sim/workload.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *simulate_suite(void);

static const struct rf_sim_options OPTS = { .seed = 1, .extender_weight = 5 };

static json_t *
simulate(struct fixture *f, json_t *queue, const struct rf_sim_options *o)
{
	json_t *report = NULL;
	char err[256] = "";
	int r = rf_simulate(&f->objs, queue, &f->cfg, f->cel, o, &report, err, sizeof(err));
	ck_assert_msg(r == 0, "rf_simulate: %d %s", r, err);
	ck_assert_ptr_nonnull(report);
	return report;
}

static const json_t *
col(const json_t *report, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach (json_object_get(report, "columns"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
			return c;
	ck_abort_msg("no column %s", name);
	return NULL;
}

static long long
num(const json_t *c, const char *key)
{
	const json_t *v = json_object_get(c, key);
	ck_assert_msg(json_is_integer(v), "%s is not an integer", key);
	return json_integer_value(v);
}

static long long
level(const json_t *c, const char *lvl)
{
	return json_integer_value(json_object_get(json_object_get(c, "levels"), lvl));
}

static const char *
placed_on(const json_t *report, size_t q, const char *column)
{
	const json_t *p =
		json_object_get(json_array_get(json_object_get(report, "placements"), q), column);
	return json_string_value(json_object_get(p, "node"));
}

/* Node n1 has its first rail NIC (root 15, with gpu-0) taken: DRA first-fit there gives gpu-0 and
 * the NIC on root 37 (NODE). Node n2 has every NIC free but one GPU taken, so kube-scheduler's
 * LeastAllocated prefers n1; the aligned pair gpu-0 + NIC on root 15 (PHB) is free only on n2. */
static void
aligned_pair_cluster(struct fixture *f)
{
	fixture_init(f);
	fixture_add_hgx(f, "n1");
	fixture_add_hgx(f, "n2");
	fixture_add_claim(f, "ml", "held-nic", SPEC_GPU_NIC_LOOSE, "n1",
			  (const char *[]){ "dra.net:pci-0000-18-00-0", NULL });
	fixture_add_claim(f, "ml", "held-gpu", SPEC_GPU_ONLY, "n2",
			  (const char *[]){ "gpu.nvidia.com:gpu-7", NULL });
	fixture_add_claim(f, "ml", "a-c", SPEC_GPU_NIC_LOOSE, NULL, NULL);
}

START_TEST(test_simulate_aligned_pair_on_second_node)
{
	struct fixture f;
	aligned_pair_cluster(&f);
	json_t *queue = json_array();
	json_array_append_new(queue, fixture_pod("a", "a-c", NULL));
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");

	ck_assert_str_eq(placed_on(report, 0, "kube-scheduler"), "n1");
	ck_assert_int_eq(num(base, "placed"), 1);
	ck_assert_int_eq(level(base, "NODE"), 1);
	ck_assert_int_eq(level(base, "PHB"), 0);
	ck_assert_int_eq(num(base, "multiDeviceBelowPHB"), 1);

	ck_assert_str_eq(placed_on(report, 0, "railfit"), "n2");
	ck_assert_int_eq(num(rf, "placed"), 1);
	ck_assert_int_eq(level(rf, "PHB"), 1);
	ck_assert_int_eq(level(rf, "NODE"), 0);
	ck_assert_int_eq(num(rf, "multiDeviceBelowPHB"), 0);
	/* the placement was really applied: n2 lost its free aligned pair on root 15, n1 the
	 * pair on root 37 */
	ck_assert_int_eq(num(base, "freeAlignedPairs"), 7 + 7 - 1);
	ck_assert_int_eq(num(rf, "freeAlignedPairs"), 7 + 7 - 1);
	ck_assert_int_eq(num(base, "freeWholeNodes"), 0);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

START_TEST(test_simulate_min_alignment_and_sequence)
{
	/* two pods asking PHB: kube-scheduler puts both on n1 (NODE, then the next pair is PHB
	 * again since root 37's GPU is gone: gpu-2 + NIC on root 48); railfit sends the first to
	 * n2. Each pod sees the state the previous one left. */
	struct fixture f;
	aligned_pair_cluster(&f);
	fixture_add_claim(&f, "ml", "b-c", SPEC_GPU_NIC_LOOSE, NULL, NULL);
	json_t *queue = json_array();
	json_array_append_new(queue,
			      fixture_pod("a", "a-c", "\"railfit.io/min-alignment\":\"PHB\""));
	json_array_append_new(queue,
			      fixture_pod("b", "b-c", "\"railfit.io/min-alignment\":\"PHB\""));
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");
	ck_assert_int_eq(num(base, "placed"), 2);
	ck_assert_int_eq(num(rf, "placed"), 2);
	const json_t *mb = json_object_get(base, "minAlignment");
	const json_t *mr = json_object_get(rf, "minAlignment");
	ck_assert_int_eq(json_integer_value(json_object_get(mb, "asked")), 2);
	ck_assert_int_lt(json_integer_value(json_object_get(mb, "met")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(mr, "asked")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(mr, "met")), 2);
	ck_assert_int_eq(level(rf, "NODE") + level(rf, "SYS"), 0);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* Two nodes with shared rail NICs (netbw.example.com, 400G, allowMultipleAllocations); n2 has a
 * GPU taken, so LeastAllocated prefers n1 for both pods, and DRA first-fit gives both a share of
 * rail0: 2 x (300G declared + 10G default consumption) on a 400G NIC. railfit's bandwidth part
 * sends the second pod to n2. */
START_TEST(test_simulate_noisy_neighbour_nic)
{
	struct fixture f;
	fixture_init(&f);
	free(f.cfg.devices.nic_drivers.v[0]);
	f.cfg.devices.nic_drivers.v[0] = strdup("netbw.example.com");
	const char *names[] = { "n1", "n2" };
	for (int i = 0; i < 2; i++) {
		char node[256];
		snprintf(node, sizeof(node),
			 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},\"status\":{"
			 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			 names[i]);
		fixture_add_json(&f, node);
		const char *files[] = { "dra/resourceslice-gpu-nvidia-8xh100.json",
					"dra/resourceslice-nic-consumable-bandwidth.json" };
		for (int k = 0; k < 2; k++) {
			char *t = fixture_read(files[k]);
			char *at;
			/* the pool and node name "hgx-h100-node-01" (16 chars) become n1 / n2 */
			while ((at = strstr(t, "hgx-h100-node-01")) != NULL) {
				memcpy(at, names[i], 2);
				memmove(at + 2, at + 16, strlen(at + 16) + 1);
			}
			fixture_add_json(&f, t);
			free(t);
		}
	}
	fixture_add_claim(&f, "ml", "held-gpu", SPEC_GPU_ONLY, "n2",
			  (const char *[]){ "gpu.nvidia.com:gpu-7", NULL });
	const char *spec = "{\"devices\":{\"requests\":[{\"name\":\"nic\",\"exactly\":{"
			   "\"deviceClassName\":\"nic-bandwidth.example.com\",\"count\":1}}]}}";
	fixture_add_claim(&f, "ml", "p1-c", spec, NULL, NULL);
	fixture_add_claim(&f, "ml", "p2-c", spec, NULL, NULL);
	json_t *queue = json_array();
	json_array_append_new(queue,
			      fixture_pod("p1", "p1-c", "\"railfit.io/nic-bandwidth\":\"300G\""));
	json_array_append_new(queue,
			      fixture_pod("p2", "p2-c", "\"railfit.io/nic-bandwidth\":\"300G\""));
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");
	ck_assert_str_eq(placed_on(report, 0, "kube-scheduler"), "n1");
	ck_assert_str_eq(placed_on(report, 1, "kube-scheduler"), "n1");
	ck_assert_int_eq(num(base, "nicsOvercommitted"), 1);
	ck_assert_str_ne(placed_on(report, 0, "railfit"), placed_on(report, 1, "railfit"));
	ck_assert_int_eq(num(rf, "nicsOvercommitted"), 0);
	ck_assert_int_eq(num(rf, "placed"), 2);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* Data loaders with no device at all: 60G egress each through a 100G front-end NIC. Three on
 * two nodes: kube-scheduler must double up somewhere; railfit places two and keeps the third
 * pending, saying why. */
START_TEST(test_simulate_frontend_overcommit)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_hgx(&f, "n2");
	json_t *queue = json_array();
	const char *names[] = { "l1", "l2", "l3" };
	for (int i = 0; i < 3; i++)
		json_array_append_new(
			queue,
			fixture_pod(names[i], NULL, "\"kubernetes.io/egress-bandwidth\":\"60G\""));
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct rf_sim_options o = OPTS;
		o.seed = seed;
		json_t *report = simulate(&f, queue, &o);
		const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");
		ck_assert_int_eq(num(base, "placed"), 3);
		ck_assert_int_ge(num(base, "frontendOvercommitted"), 1);
		ck_assert_int_eq(num(rf, "placed"), 2);
		ck_assert_int_eq(num(rf, "pending"), 1);
		ck_assert_int_eq(num(rf, "frontendOvercommitted"), 0);
		ck_assert_int_eq(
			json_integer_value(json_object_get(json_object_get(rf, "pendingReasons"),
							   "railfit: front-end bandwidth")),
			1);
		json_decref(report);
	}
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

START_TEST(test_simulate_deterministic_per_seed)
{
	struct fixture f;
	fixture_init(&f);
	const char *nodes[] = { "n1", "n2", "n3", "n4" };
	for (int i = 0; i < 4; i++)
		fixture_add_hgx(&f, nodes[i]);
	struct rf_workload w;
	char err[256];
	ck_assert_int_eq(rf_workload_generate("6x1gpu1nic,3x2pair,4x2gpu-job2,4xloader-egress20G",
					      &f.cfg, 7, &w, err, sizeof(err)),
			 0);
	json_array_extend(f.objs.claims, w.claims);
	json_array_extend(f.objs.classes, w.classes);
	json_t *a = simulate(&f, w.pods, &OPTS);
	struct rf_sim_options two = OPTS;
	two.threads = 2;
	json_t *b = simulate(&f, w.pods, &two);
	ck_assert(json_equal(a, b));
	const json_t *rf = col(a, "railfit");
	ck_assert_int_eq(num(rf, "placed") + num(rf, "pending"), 17);
	ck_assert_int_eq(num(col(a, "kube-scheduler"), "placed") +
				 num(col(a, "kube-scheduler"), "pending"),
			 17);
	json_decref(a);
	json_decref(b);
	rf_workload_release(&w);
	fixture_release(&f);
}
END_TEST

/* 150 generated nodes: kube-scheduler looks at 100 per pod, round robin, so most decisions judge
 * nodes no earlier placement touched and the next generation is built lazily; the decisions must
 * be exactly those of a build after every placement. */
START_TEST(test_simulate_lazy_builds_agree)
{
	struct fixture f;
	fixture_init(&f);
	struct rf_gen_options go = { .nodes = 150, .seed = 5, .used = 0.5, .pods_per_node = 2 };
	json_t *doc = rf_gen_cluster(&go);
	size_t i;
	json_t *it;
	json_decref(f.objs.classes);
	f.objs.classes = json_array();
	json_array_foreach (json_object_get(doc, "items"), i, it) {
		char *txt = json_dumps(it, 0);
		fixture_add_json(&f, txt);
		free(txt);
	}
	json_decref(doc);
	struct rf_workload w;
	char err[256];
	ck_assert_int_eq(
		rf_workload_generate("40x1gpu1nic,10x2pair,8x2gpu-job4,20xloader-egress30G,"
				     "6x1gpu1nic-minPHB",
				     &f.cfg, 3, &w, err, sizeof(err)),
		0);
	json_array_extend(f.objs.claims, w.claims);
	json_array_extend(f.objs.classes, w.classes);
	struct rf_sim_options each = OPTS;
	each.rebuild_each = true;
	json_t *lazy = simulate(&f, w.pods, &OPTS), *eager = simulate(&f, w.pods, &each);
	for (int k = 0; k < 2; k++) {
		const char *cn = k ? "railfit" : "kube-scheduler";
		long long built = num(col(lazy, cn), "generationsBuilt");
		ck_assert_int_eq(num(col(eager, cn), "generationsBuilt"),
				 num(col(eager, cn), "placed"));
		ck_assert_int_lt(built, num(col(lazy, cn), "placed"));
		json_object_del((json_t *)col(lazy, cn), "generationsBuilt");
		json_object_del((json_t *)col(eager, cn), "generationsBuilt");
	}
	ck_assert(json_equal(lazy, eager));
	ck_assert_int_gt(num(col(lazy, "railfit"), "placed"), 50);
	json_decref(lazy);
	json_decref(eager);
	rf_workload_release(&w);
	fixture_release(&f);
}
END_TEST

/* Two pending pods whose claim the resourceclaim controller has not created yet (a template):
 * simulate creates it as the controller would, the pods share nothing, and each gets an aligned
 * pair on its node; the second sees the first's devices taken. */
START_TEST(test_simulate_claim_templates)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	char *t = fixture_read("dra/resourceclaimtemplate-gpu-nic-pcieroot.json");
	fixture_add_json(&f, t);
	free(t);
	json_t *queue = json_array();
	const char *names[] = { "t1", "t2" };
	for (int i = 0; i < 2; i++) {
		char pod[512];
		snprintf(
			pod, sizeof(pod),
			"{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml-train\",\"uid\":\"%s\"},"
			"\"spec\":{\"resourceClaims\":[{\"name\":\"pair\","
			"\"resourceClaimTemplateName\":\"gpu-nic-aligned\"}]}}",
			names[i], names[i]);
		json_array_append_new(queue, json_loads(pod, 0, NULL));
	}
	json_t *report = simulate(&f, queue, &OPTS);
	for (int k = 0; k < 2; k++) {
		const json_t *c = col(report, k ? "railfit" : "kube-scheduler");
		ck_assert_int_eq(num(c, "placed"), 2);
		ck_assert_int_eq(level(c, "PHB"), 2);
		ck_assert_int_eq(num(c, "freeAlignedPairs"), 8 - 2);
	}
	/* the objects the caller passed are not changed */
	ck_assert_uint_eq(json_array_size(f.objs.claims), 0);
	ck_assert_ptr_null(json_object_get(json_array_get(queue, 0), "status"));
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* 150 nodes: kube-scheduler stops at 100 feasible nodes, here hgx-001..hgx-100, whose front-end
 * NICs already carry 50G each. railfit fails all of them for a 60G loader; as kube-scheduler
 * requeues the pod, its next attempt searches on from hgx-101, where railfit passes. */
START_TEST(test_simulate_retry_after_the_window)
{
	struct fixture f;
	fixture_init(&f);
	struct rf_gen_options go = { .nodes = 150, .seed = 2, .used = 0 };
	json_t *doc = rf_gen_cluster(&go);
	size_t i;
	json_t *it;
	json_decref(f.objs.classes);
	f.objs.classes = json_array();
	json_array_foreach (json_object_get(doc, "items"), i, it) {
		char *txt = json_dumps(it, 0);
		fixture_add_json(&f, txt);
		free(txt);
	}
	json_decref(doc);
	for (int n = 1; n <= 100; n++) {
		char pod[512];
		snprintf(
			pod, sizeof(pod),
			"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"busy-%d\",\"namespace\":\"ml\","
			"\"uid\":\"busy-%d\",\"annotations\":{\"kubernetes.io/egress-bandwidth\":"
			"\"50G\"}},\"spec\":{\"nodeName\":\"hgx-%03d\"},\"status\":{\"phase\":"
			"\"Running\"}}",
			n, n, n);
		fixture_add_json(&f, pod);
	}
	json_t *queue = json_array();
	json_array_append_new(
		queue, fixture_pod("loader", NULL, "\"kubernetes.io/egress-bandwidth\":\"60G\""));
	json_t *report = simulate(&f, queue, &OPTS);
	ck_assert_int_eq(num(col(report, "kube-scheduler"), "placed"), 1);
	ck_assert_int_eq(num(col(report, "kube-scheduler"), "frontendOvercommitted"), 1);
	ck_assert_int_eq(num(col(report, "railfit"), "placed"), 1);
	ck_assert_int_eq(num(col(report, "railfit"), "frontendOvercommitted"), 0);
	ck_assert_str_ge(placed_on(report, 0, "railfit"), "hgx-101");
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* text against test/data/<relpath>; RF_UPDATE_GOLDEN=1 meson test ... rewrites the file */
static void
golden(const char *text, const char *relpath)
{
	ck_assert_ptr_nonnull(text);
	if (getenv("RF_UPDATE_GOLDEN")) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", getenv("RF_TEST_DATA"), relpath);
		FILE *out = fopen(path, "w");
		ck_assert_ptr_nonnull(out);
		fputs(text, out);
		fclose(out);
	}
	char *want = fixture_read(relpath);
	ck_assert_str_eq(text, want);
	free(want);
}

START_TEST(test_simulate_golden_table)
{
	struct fixture f;
	aligned_pair_cluster(&f);
	json_t *queue = json_array();
	json_array_append_new(queue, fixture_pod("a", "a-c", NULL));
	const char *loaders[] = { "l1", "l2", "l3" }; /* the third one cannot fit with railfit */
	for (int i = 0; i < 3; i++)
		json_array_append_new(queue,
				      fixture_pod(loaders[i], NULL,
						  "\"kubernetes.io/egress-bandwidth\":\"60G\""));
	json_t *report = simulate(&f, queue, &OPTS);
	char *table = rf_sim_table(report);
	golden(table, "simulate/aligned-pair.table");
	free(table);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* ---- beyond the NIC (issue 15): GPU to GPU, GPU to CPU, Jobs in the network ---- */

static const char *const SPEC_TWO_GPUS =
	"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
	"\"gpu.nvidia.com\",\"count\":2}}]}}";

static long long
sub(const json_t *c, const char *obj, const char *key)
{
	const json_t *v = json_object_get(json_object_get(c, obj), key);
	ck_assert_msg(json_is_integer(v), "%s.%s is not an integer", obj, key);
	return json_integer_value(v);
}

/* Two 8 x L4 nodes without NVLink (DRA attributes: two GPUs per pcieRoot, four per NUMA node).
 * l4a has gpu-0 taken: first fit gives a 2-GPU pod gpu-1 + gpu-2, on two root complexes
 * (NODE). l4b has gpu-0 and gpu-1 taken: gpu-2 + gpu-3 share a root (PHB), but l4b has fewer
 * free GPUs, so LeastAllocated prefers l4a. */
static void
l4_pair_cluster(struct fixture *f)
{
	fixture_init(f);
	fixture_add_node(f, "l4a", NULL, NULL);
	fixture_add_node(f, "l4b", NULL, NULL);
	fixture_add_gpus(f, "l4a", 8, FIXTURE_L4_PCI, FIXTURE_L4_ROOTS, FIXTURE_L4_NUMA);
	fixture_add_gpus(f, "l4b", 8, FIXTURE_L4_PCI, FIXTURE_L4_ROOTS, FIXTURE_L4_NUMA);
	fixture_add_claim(f, "ml", "held-a", SPEC_GPU_ONLY, "l4a",
			  (const char *[]){ "gpu.nvidia.com:gpu-0", NULL });
	fixture_add_claim(f, "ml", "held-b", SPEC_TWO_GPUS, "l4b",
			  (const char *[]){ "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1", NULL });
	fixture_add_claim(f, "ml", "two-1", SPEC_TWO_GPUS, NULL, NULL);
	fixture_add_claim(f, "ml", "two-2", SPEC_TWO_GPUS, NULL, NULL);
}

START_TEST(test_simulate_two_gpus_without_nvlink)
{
	struct fixture f;
	l4_pair_cluster(&f);
	json_t *queue = json_array();
	json_array_append_new(queue, fixture_pod("first", "two-1", NULL));
	/* the second asks its GPUs to share a root complex */
	json_array_append_new(
		queue, fixture_pod("second", "two-2", "\"railfit.io/min-gpu-alignment\":\"PHB\""));
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");
	const json_t *pl = json_object_get(report, "placements");

	/* kube-scheduler: the first on l4a (gpu-1 + gpu-2, NODE); then l4b has more free GPUs
	 * (6 against 5): gpu-2 + gpu-3 (PHB) */
	ck_assert_str_eq(placed_on(report, 0, "kube-scheduler"), "l4a");
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_array_get(pl, 0), "kube-scheduler"), "gpuLevel")),
		"NODE");
	ck_assert_str_eq(placed_on(report, 1, "kube-scheduler"), "l4b");
	ck_assert_int_eq(num(base, "multiGpuPods"), 2);
	ck_assert_int_eq(sub(base, "gpuLevels", "NODE"), 1);
	ck_assert_int_eq(sub(base, "gpuLevels", "PHB"), 1);
	ck_assert_int_eq(num(base, "multiGpuBelowPHB"), 1);
	ck_assert_int_eq(sub(base, "minGpuAlignment", "asked"), 1);
	ck_assert_int_eq(sub(base, "minGpuAlignment", "met"), 1);

	/* railfit: the first on l4b (gpu-2 + gpu-3, PHB); the second would get gpu-1 + gpu-2 on
	 * l4a (NODE, below its PHB): filtered; gpu-4 + gpu-5 on l4b share a root */
	ck_assert_str_eq(placed_on(report, 0, "railfit"), "l4b");
	ck_assert_str_eq(placed_on(report, 1, "railfit"), "l4b");
	ck_assert_int_eq(num(rf, "multiGpuPods"), 2);
	ck_assert_int_eq(sub(rf, "gpuLevels", "PHB"), 2);
	ck_assert_int_eq(sub(rf, "gpuLevels", "NODE") + sub(rf, "gpuLevels", "SYS"), 0);
	ck_assert_int_eq(num(rf, "multiGpuBelowPHB"), 0);
	ck_assert_int_eq(sub(rf, "minGpuAlignment", "met"), 1);
	/* no NIC, no CPU claim, no Job: those parts of the report stay empty */
	ck_assert_int_eq(num(rf, "gpuNicPods"), 0);
	ck_assert_int_eq(sub(rf, "cpuClaims", "pods"), 0);
	ck_assert_int_eq(sub(rf, "jobLocality", "jobs"), 0);

	char *table = rf_sim_table(report), *svg = rf_sim_svg(report);
	golden(table, "simulate/l4-two-gpus.table");
	golden(svg, "simulate/l4-two-gpus.svg");
	free(table);
	free(svg);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* kubernetes-sigs/dra-driver-cpu in grouped mode (one consumable dra.cpu/cpu device per NUMA
 * node) on two HGX nodes. On a the GPUs of NUMA 0 are taken: a pod asking one GPU and 8 CPUs
 * gets gpu-4 (NUMA 1) and CPUs of cpudevnuma000 (NUMA 0, first in the slice). On b the GPUs
 * of NUMA 1 and gpu-3 are taken: gpu-0 and NUMA 0's CPUs. a has more free GPUs. */
static void
add_cpu_slice(struct fixture *f, const char *node)
{
	char *t = fixture_read("dra/resourceslice-dra-cpu-grouped.json");
	json_t *s = json_loads(t, 0, NULL);
	free(t);
	ck_assert_ptr_nonnull(s);
	json_t *spec = json_object_get(s, "spec");
	json_object_set_new(spec, "nodeName", json_string(node));
	json_object_set_new(json_object_get(spec, "pool"), "name", json_string(node));
	json_object_set_new(json_object_get(s, "metadata"), "name", json_string(node));
	json_array_append_new(f->objs.slices, s);
}

START_TEST(test_simulate_cpus_on_the_gpus_numa)
{
	struct fixture f;
	fixture_init(&f);
	char *t = fixture_read("dra/deviceclass-dra.cpu.json");
	fixture_add_json(&f, t);
	free(t);
	fixture_add_hgx(&f, "a");
	fixture_add_hgx(&f, "b");
	add_cpu_slice(&f, "a");
	add_cpu_slice(&f, "b");
	static const char *const SPEC_4 = "{\"devices\":{\"requests\":[{\"name\":\"gpu\","
					  "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
					  "\"count\":4}}]}}";
	fixture_add_claim(&f, "ml", "held-a", SPEC_4, "a",
			  (const char *[]){ "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1",
					    "gpu.nvidia.com:gpu-2", "gpu.nvidia.com:gpu-3", NULL });
	fixture_add_claim(&f, "ml", "held-b", SPEC_4, "b",
			  (const char *[]){ "gpu.nvidia.com:gpu-4", "gpu.nvidia.com:gpu-5",
					    "gpu.nvidia.com:gpu-6", "gpu.nvidia.com:gpu-7", NULL });
	fixture_add_claim(&f, "ml", "held-b3", SPEC_GPU_ONLY, "b",
			  (const char *[]){ "gpu.nvidia.com:gpu-3", NULL });
	fixture_add_claim(&f, "ml", "gpu-cpus",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}},{\"name\":"
			  "\"cpus\",\"exactly\":{\"deviceClassName\":\"dra.cpu\",\"capacity\":{"
			  "\"requests\":{\"dra.cpu/cpu\":\"8\"}}}}]}}",
			  NULL, NULL);
	json_t *queue = json_array();
	json_array_append_new(queue, fixture_pod("p", "gpu-cpus", NULL));
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");
	const json_t *pl = json_array_get(json_object_get(report, "placements"), 0);

	ck_assert_str_eq(placed_on(report, 0, "kube-scheduler"), "a");
	ck_assert_int_eq(sub(base, "cpuClaims", "pods"), 1);
	ck_assert_int_eq(sub(base, "cpuClaims", "podsAligned"), 0);
	ck_assert_int_eq(sub(base, "cpuClaims", "devicesKnown"), 1);
	ck_assert_int_eq(sub(base, "cpuClaims", "devicesOnGpuNuma"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pl, "kube-scheduler"),
							   "cpusOnGpuNuma")),
			 "0 of 1");

	ck_assert_str_eq(placed_on(report, 0, "railfit"), "b");
	ck_assert_int_eq(sub(rf, "cpuClaims", "pods"), 1);
	ck_assert_int_eq(sub(rf, "cpuClaims", "podsAligned"), 1);
	ck_assert_int_eq(sub(rf, "cpuClaims", "devicesOnGpuNuma"), 1);
	ck_assert_int_eq(num(rf, "multiGpuPods"), 0); /* one GPU: no GPU-GPU level */

	char *table = rf_sim_table(report);
	golden(table, "simulate/cpu-claims.table");
	free(table);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* Three network blocks of two 2-GPU nodes (b1 and b2 in spine s1, b3 in s2) and a Job of four
 * one-GPU pods. kube-scheduler's LeastAllocated puts each pod on a node with both GPUs free: four
 * nodes, so at least two blocks. railfit's locality part keeps the Job in the block of its first
 * pod (two nodes, four GPUs). */
START_TEST(test_simulate_job_in_one_block)
{
	static const struct {
		const char *name, *labels;
	} nodes[] = {
#define BLOCK(b, s)                                                                                \
	"\"network.topology.kubernetes.io/block\":\"" b "\","                                      \
	"\"network.topology.kubernetes.io/spine\":\"" s "\""
		{ "n1", BLOCK("b1", "s1") }, { "n2", BLOCK("b1", "s1") },
		{ "n3", BLOCK("b2", "s1") }, { "n4", BLOCK("b2", "s1") },
		{ "n5", BLOCK("b3", "s2") }, { "n6", BLOCK("b3", "s2") },
#undef BLOCK
	};
	struct fixture f;
	fixture_init(&f);
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		fixture_add_node(&f, nodes[i].name, nodes[i].labels, NULL);
		fixture_add_gpus(&f, nodes[i].name, 2, FIXTURE_L4_PCI, FIXTURE_L4_ROOTS,
				 FIXTURE_L4_NUMA);
	}
	json_t *queue = json_array();
	for (int i = 0; i < 4; i++) {
		char name[16], claim[16];
		snprintf(name, sizeof(name), "train-%d", i);
		snprintf(claim, sizeof(claim), "train-%d-c", i);
		fixture_add_claim(&f, "ml", claim, SPEC_GPU_ONLY, NULL, NULL);
		json_t *pod = fixture_pod(name, claim, NULL);
		json_object_set_new(json_object_get(pod, "metadata"), "labels",
				    json_pack("{s:s}", "batch.kubernetes.io/job-name", "train"));
		json_array_append_new(queue, pod);
	}
	json_t *report = simulate(&f, queue, &OPTS);
	const json_t *base = col(report, "kube-scheduler"), *rf = col(report, "railfit");

	ck_assert_int_eq(num(base, "placed"), 4);
	ck_assert_int_eq(sub(base, "jobLocality", "jobs"), 1);
	ck_assert_int_eq(sub(base, "jobLocality", "oneBlock"), 0);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < i; k++)
			ck_assert_str_ne(placed_on(report, (size_t)i, "kube-scheduler"),
					 placed_on(report, (size_t)k, "kube-scheduler"));

	ck_assert_int_eq(num(rf, "placed"), 4);
	ck_assert_int_eq(sub(rf, "jobLocality", "jobs"), 1);
	ck_assert_int_eq(sub(rf, "jobLocality", "oneBlock"), 1);
	ck_assert_int_eq(sub(rf, "jobLocality", "spread") + sub(rf, "jobLocality", "unlabelled"),
			 0);

	char *table = rf_sim_table(report);
	golden(table, "simulate/three-blocks.table");
	free(table);
	json_decref(report);
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* Rails of a Job, node by node: four HGX nodes with two free GPUs each, rails 0-1 free on a and c,
 * 2-3 on b and d. A Job of two pods of two aligned pairs: wherever the first goes, railfit puts
 * the second on the node with the same free rails; kube-scheduler picks at random. */
START_TEST(test_simulate_job_rails)
{
	static const char *const TWO_PAIRS =
		"{\"devices\":{\"requests\":[{\"name\":\"g0\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1}},{\"name\":\"n0\",\"exactly\":{"
		"\"deviceClassName\":\"rdma-nic\",\"count\":1}},{\"name\":\"g1\",\"exactly\":{"
		"\"deviceClassName\":\"gpu.nvidia.com\",\"count\":1}},{\"name\":\"n1\",\"exactly\":{"
		"\"deviceClassName\":\"rdma-nic\",\"count\":1}}],\"constraints\":[{\"requests\":["
		"\"g0\",\"n0\"],\"matchAttribute\":\"resource.kubernetes.io/pcieRoot\"},{"
		"\"requests\":[\"g1\",\"n1\"],\"matchAttribute\":"
		"\"resource.kubernetes.io/pcieRoot\"}]}}";
	static const char *const SIX = "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
				       "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":6}}]}}";
	struct fixture f;
	fixture_init(&f);
	const char *names[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++) {
		char claim[16];
		const char *held[7];
		int first_free = i % 2 ? 2 : 0;
		char dev[6][32];
		for (int g = 0, k = 0; g < 8; g++)
			if (g != first_free && g != first_free + 1) {
				snprintf(dev[k], sizeof(dev[k]), "gpu.nvidia.com:gpu-%d", g);
				held[k] = dev[k];
				k++;
			}
		held[6] = NULL;
		fixture_add_hgx(&f, names[i]);
		snprintf(claim, sizeof(claim), "held-%s", names[i]);
		fixture_add_claim(&f, "ml", claim, SIX, names[i], held);
	}
	json_t *queue = json_array();
	for (int i = 0; i < 2; i++) {
		char name[16], claim[16];
		snprintf(name, sizeof(name), "train-%d", i);
		snprintf(claim, sizeof(claim), "train-%d-c", i);
		fixture_add_claim(&f, "ml", claim, TWO_PAIRS, NULL, NULL);
		json_t *pod = fixture_pod(name, claim, NULL);
		json_object_set_new(json_object_get(pod, "metadata"), "labels",
				    json_pack("{s:s}", "batch.kubernetes.io/job-name", "train"));
		json_array_append_new(queue, pod);
	}
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct rf_sim_options o = OPTS;
		o.seed = seed;
		json_t *report = simulate(&f, queue, &o);
		const json_t *pl = json_object_get(report, "placements");
		for (int k = 0; k < 2; k++) {
			const char *cn = k ? "railfit" : "kube-scheduler";
			const json_t *c = col(report, cn);
			const json_t *r0 = json_object_get(
				json_object_get(json_array_get(pl, 0), cn), "rails");
			const json_t *r1 = json_object_get(
				json_object_get(json_array_get(pl, 1), cn), "rails");
			ck_assert_int_eq(num(c, "placed"), 2);
			ck_assert_uint_eq(json_array_size(r0), 2);
			ck_assert_str_ne(placed_on(report, 0, cn), placed_on(report, 1, cn));
			/* the metric is what the placements say */
			ck_assert_int_eq(num(c, "jobsOnSameRails"), json_equal(r0, r1) ? 1 : 0);
			ck_assert_uint_eq(json_array_size(json_object_get(c, "jobs")), 1);
			if (k)
				ck_assert_int_eq(num(c, "jobsOnSameRails"), 1);
		}
		json_decref(report);
	}
	json_decref(queue);
	fixture_release(&f);
}
END_TEST

/* Every section of the report at once, from a report built by hand: the table shows each, the
 * SVG fits its bars in its width (11 groups at most in the third chart). */
START_TEST(test_report_all_sections)
{
	json_t *cols = json_array();
	for (int k = 0; k < 2; k++)
		json_array_append_new(
			cols,
			json_pack(
				"{s:s, s:i, s:i, s:{}, s:{s:i}, s:i, s:i, s:{s:i, s:i}, s:i, s:i, "
				"s:[], s:n, s:i, s:i, s:i, s:i, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i}, "
				"s:i, s:{s:i, s:i}, s:{s:i, s:i, s:i, s:i}, s:{s:i, s:i, s:i, s:i, s:i}}",
				"name", k ? "railfit" : "kube-scheduler", "placed", 9, "pending", 0,
				"pendingReasons", "levels", "PHB", 4, "gpuNicPods", 4,
				"multiDeviceBelowPHB", 0, "minAlignment", "asked", 0, "met", 0,
				"nicsOvercommitted", 0, "frontendOvercommitted", 0, "jobs",
				"railConsistency", "jobsOnSameRails", 0, "freeAlignedPairs", 1,
				"freeWholeNodes", 0, "multiGpuPods", 3, "gpuLevels", "NVL", 1,
				"PIX", 0, "PXB", 0, "PHB", 1, "NODE", 0, "SYS", 1 - k, "UNKNOWN", k,
				"multiGpuBelowPHB", 1, "minGpuAlignment", "asked", 1, "met", k,
				"cpuClaims", "pods", 2, "podsAligned", 1 + k, "devicesKnown", 2,
				"devicesOnGpuNuma", 1 + k, "jobLocality", "jobs", 3, "oneBlock", k,
				"oneSpine", 1, "spread", 1 - k, "unlabelled", 1));
	json_t *report =
		json_pack("{s:i, s:i, s:i, s:s, s:o}", "nodes", 3, "pods", 9, "seed", 1,
			  "approximation", "kube-scheduler is approximated", "columns", cols);
	char *table = rf_sim_table(report), *svg = rf_sim_svg(report);
	ck_assert_ptr_nonnull(table);
	ck_assert_ptr_nonnull(svg);
	static const char *const rows[] = {
		"  NVL                                                        1               1\n",
		"pods given their min-gpu-alignment                      0 of 1          1 of 1\n",
		"pods with every DRA CPU on its GPUs' NUMA               1 of 2          2 of 2\n",
		"jobs inside one network block                           0 of 3          1 of 3\n",
		"jobs on nodes without block/spine labels                1 of 3          1 of 3\n",
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(strstr(table, rows[i]), "no row '%s' in\n%s", rows[i], table);
	/* 7 levels and 4 more groups of two bars, plus the other charts' 10 and 4 groups */
	size_t rects = 0, widest = 0;
	for (const char *p = svg; (p = strstr(p, "<rect x=\"")); p++) {
		int x = atoi(p + 9);
		rects++;
		if ((size_t)x > widest)
			widest = (size_t)x;
	}
	ck_assert_uint_eq(rects, 2 + 2 * (6 + 4 + 11)); /* legend, 6 NIC levels, 4, 11 */
	ck_assert_uint_lt(widest + 22, 760);
	ck_assert_ptr_nonnull(strstr(svg, ">CPU off-NUMA</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
	free(table);
	free(svg);
	json_decref(report);
}
END_TEST

START_TEST(test_workload_grammar)
{
	struct rf_config cfg;
	struct rf_workload w;
	char err[512];
	rf_config_init(&cfg);
	ck_assert_int_eq(rf_workload_generate("200x1gpu1nic,50x2pair,20x8gpu-job4,"
					      "300xloader-egress5G",
					      &cfg, 1, &w, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(json_array_size(w.pods), 570);
	ck_assert_uint_eq(json_array_size(w.claims), 270);
	ck_assert_uint_eq(json_array_size(w.classes), 2);
	/* a job's pods arrive together and carry the job label; 8gpu in a job gets 8 NICs */
	size_t i;
	json_t *p;
	json_array_foreach (w.pods, i, p) {
		const char *job = json_string_value(
			json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"),
					"batch.kubernetes.io/job-name"));
		if (!job)
			continue;
		for (size_t k = 1; k < 4; k++) {
			const char *next = json_string_value(json_object_get(
				json_object_get(
					json_object_get(json_array_get(w.pods, i + k), "metadata"),
					"labels"),
				"batch.kubernetes.io/job-name"));
			ck_assert_ptr_nonnull(next);
			ck_assert_str_eq(next, job);
		}
		break;
	}
	rf_workload_release(&w);
	/* cpu<k>: k CPUs of a shared dra.cpu device in the same claim, and the class for them */
	ck_assert_int_eq(
		rf_workload_generate("2x2gpu-cpu16,1xloader-cpu4", &cfg, 1, &w, err, sizeof(err)),
		0);
	ck_assert_uint_eq(json_array_size(w.claims), 3);
	ck_assert_uint_eq(json_array_size(w.classes), 3);
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_array_get(w.classes, 2), "metadata"), "name")),
		RF_WORKLOAD_CPU_CLASS);
	json_array_foreach (w.claims, i, p) {
		const json_t *reqs = json_object_get(
			json_object_get(json_object_get(p, "spec"), "devices"), "requests");
		const json_t *cpus = json_array_get(reqs, json_array_size(reqs) - 1);
		ck_assert_uint_eq(json_array_size(reqs),
				  strstr(json_string_value(json_object_get(
						 json_object_get(p, "metadata"), "name")),
					 "loader")
					  ? 1
					  : 2);
		ck_assert_str_eq(json_string_value(json_object_get(cpus, "name")), "cpus");
		const json_t *ex = json_object_get(cpus, "exactly");
		ck_assert_str_eq(json_string_value(json_object_get(ex, "deviceClassName")),
				 RF_WORKLOAD_CPU_CLASS);
		ck_assert_ptr_nonnull(json_string_value(json_object_get(
			json_object_get(json_object_get(ex, "capacity"), "requests"),
			"dra.cpu/cpu")));
	}
	rf_workload_release(&w);
	/* without a CPU driver there is nothing to ask */
	struct rf_strv keep = cfg.devices.cpu_drivers;
	cfg.devices.cpu_drivers.n = 0;
	ck_assert_int_eq(rf_workload_generate("1x1gpu-cpu8", &cfg, 1, &w, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "devices.cpuDrivers is empty"));
	cfg.devices.cpu_drivers = keep;
	static const char *const bad[] = {
		"",        "x1gpu",          "0x1gpu",        "5",          "5x17gpu",
		"5x9pair", "5x1gpu-xyz",     "5x1gpu-minSYS", "5x1gpu-bw",  "5xloader-egress-5G",
		"5x1gpu2", "1x1gpu,,1x1gpu", "1x1gpu-cpu0",   "1x1gpu-cpu", "1x1gpu-cpu8x"
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = 0;
		ck_assert_msg(rf_workload_generate(bad[k], &cfg, 1, &w, err, sizeof(err)) ==
				      -EINVAL,
			      "accepted '%s'", bad[k]);
		ck_assert_msg(strstr(err, "--workload") != NULL, "'%s': %s", bad[k], err);
	}
	rf_config_release(&cfg);
}
END_TEST

START_TEST(test_feasible_nodes_to_find)
{
	/* kube-scheduler's numFeasibleNodesToFind */
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(0, 50), 50);
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(0, 1000), 420);
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(0, 5000), 500);
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(0, 200), 100);
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(100, 5000), 5000);
	ck_assert_uint_eq(rf_sim_feasible_nodes_to_find(1, 5000), 100);
}
END_TEST

Suite *
simulate_suite(void)
{
	Suite *s = suite_create("simulate");
	TCase *tc = tcase_create("simulate");
	tcase_add_test(tc, test_simulate_aligned_pair_on_second_node);
	tcase_add_test(tc, test_simulate_min_alignment_and_sequence);
	tcase_add_test(tc, test_simulate_noisy_neighbour_nic);
	tcase_add_test(tc, test_simulate_frontend_overcommit);
	tcase_add_test(tc, test_simulate_deterministic_per_seed);
	tcase_add_test(tc, test_simulate_lazy_builds_agree);
	tcase_add_test(tc, test_simulate_claim_templates);
	tcase_add_test(tc, test_simulate_retry_after_the_window);
	tcase_add_test(tc, test_simulate_golden_table);
	tcase_add_test(tc, test_simulate_two_gpus_without_nvlink);
	tcase_add_test(tc, test_simulate_cpus_on_the_gpus_numa);
	tcase_add_test(tc, test_simulate_job_in_one_block);
	tcase_add_test(tc, test_simulate_job_rails);
	tcase_add_test(tc, test_report_all_sections);
	tcase_add_test(tc, test_workload_grammar);
	tcase_add_test(tc, test_feasible_nodes_to_find);
	suite_add_tcase(s, tc);
	return s;
}
