/* Golden cases of the allocator mirror on the HGX H100 shape of reference/dra-examples (one GPU
 * and one rail NIC per PCIe root; gpu-k pairs with the k-th NIC in name order). Each case says why
 * that is the allocator's answer (reference/dra-allocator.md sections 3 and 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/predict.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *predict_suite(void);

static struct rf_search_result *
predict(struct fixture *f, const char *node, const char *claim_ns, const char *claim_name,
	bool ignore_usage)
{
	struct rf_cluster *c = f->c;
	const struct rf_claim *cl = rf_cluster_claim(c, claim_ns, claim_name);
	ck_assert_ptr_nonnull(cl);
	ck_assert_msg(cl->unsupported == NULL, "unsupported: %s", cl->unsupported);
	struct rf_search_request req = { .cluster = c,
					 .node = rf_cluster_node(c, node),
					 .claims = &cl,
					 .n_claims = 1,
					 .ignore_usage = ignore_usage };
	ck_assert_ptr_nonnull(req.node);
	struct rf_search_result *res = malloc(sizeof(*res));
	ck_assert_int_eq(rf_predict(&req, res), 0);
	return res;
}

static void
expect_devices(const struct rf_search_result *res, const char *const *want)
{
	ck_assert_int_eq(res->status, RF_SEARCH_FOUND);
	ck_assert_uint_eq(res->n_outcomes, 1);
	const struct rf_assignment *a = &res->outcomes[0];
	size_t n = 0;
	while (want[n])
		n++;
	ck_assert_uint_eq(a->n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(a->picks[i].dev->name, want[i]);
}

START_TEST(test_predict_aligned_pair_on_free_node)
{
	/* first GPU in device order (gpu-0) that has a free NIC on its root: pci-0000-18-00-0 */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_claim(&f, "ml", "want", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "want", false);
	expect_devices(r, (const char *[]){ "gpu-0", "pci-0000-18-00-0", NULL });
	ck_assert(r->orders_exhaustive);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_first_fit_misaligns_without_constraint)
{
	/* gpu-0 is held by a GPU-only claim, its NIC pci-0000-18-00-0 stays free. Without a
	 * constraint the allocator takes the first free GPU (gpu-1) and the first free rdma NIC
	 * (pci-0000-18-00-0): different roots, although gpu-1's own NIC is free. */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	const char *held[] = { "gpu.nvidia.com:gpu-0", NULL };
	fixture_add_claim(&f, "ml", "other", SPEC_GPU_ONLY, "n1", held);
	fixture_add_claim(&f, "ml", "loose", SPEC_GPU_NIC_LOOSE, NULL, NULL);
	fixture_add_claim(&f, "ml", "aligned", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "loose", false);
	expect_devices(r, (const char *[]){ "gpu-1", "pci-0000-18-00-0", NULL });
	free(r);
	/* with matchAttribute pcieRoot the NIC must share gpu-1's root */
	r = predict(&f, "n1", "ml", "aligned", false);
	expect_devices(r, (const char *[]){ "gpu-1", "pci-0000-40-00-0", NULL });
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_constraint_backtracks_over_gpus)
{
	/* NICs of roots 0..5 are held; GPUs 0..5 are free. The constraint makes slot "nic" fail
	 * for gpu-0..gpu-5, so the search backtracks into the GPU request until gpu-6, whose
	 * NIC pci-0000-ce-00-0 is free. */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	const char *nics[] = { "dra.net:pci-0000-18-00-0",
			       "dra.net:pci-0000-40-00-0",
			       "dra.net:pci-0000-4f-00-0",
			       "dra.net:pci-0000-5e-00-0",
			       "dra.net:pci-0000-9a-00-0",
			       "dra.net:pci-0000-c0-00-0",
			       NULL };
	fixture_add_claim(&f, "ml", "nics",
			  "{\"devices\":{\"requests\":[{\"name\":\"nic\","
			  "\"exactly\":{\"deviceClassName\":\"rdma-nic\","
			  "\"count\":6}}]}}",
			  "n1", nics);
	fixture_add_claim(&f, "ml", "want", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "want", false);
	expect_devices(r, (const char *[]){ "gpu-6", "pci-0000-ce-00-0", NULL });
	ck_assert_uint_gt(r->steps, 16);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_two_pairs_template)
{
	/* the 2-pair claim of dra-examples: gpu-a+nic-a on one root, gpu-b+nic-b on another,
	 * both NICs on one NUMA node: the first solution in scan order is roots 0 and 1 */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	char *t = fixture_read("dra/resourceclaimtemplate-2pairs-pcieroot.json");
	json_t *tmpl = json_loads(t, 0, NULL);
	free(t);
	char *spec = json_dumps(json_object_get(json_object_get(tmpl, "spec"), "spec"), 0);
	fixture_add_claim(&f, "ml", "pairs", spec, NULL, NULL);
	free(spec);
	json_decref(tmpl);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "pairs", false);
	expect_devices(r, (const char *[]){ "gpu-0", "pci-0000-18-00-0", "gpu-1",
					    "pci-0000-40-00-0", NULL });
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_infeasible_and_ignore_usage)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	const char *held[] = {
		"gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1", "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3", "gpu.nvidia.com:gpu-4", "gpu.nvidia.com:gpu-5",
		"gpu.nvidia.com:gpu-6", "gpu.nvidia.com:gpu-7", NULL
	};
	fixture_add_claim(&f, "ml", "all",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\","
			  "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
			  "\"count\":8}}]}}",
			  "n1", held);
	fixture_add_claim(&f, "ml", "want", SPEC_GPU_ONLY, NULL, NULL);
	fixture_add_claim(&f, "ml", "nine",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\","
			  "\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
			  "\"count\":9}}]}}",
			  NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "want", false);
	ck_assert_int_eq(r->status, RF_SEARCH_INFEASIBLE);
	free(r);
	r = predict(&f, "n1", "ml", "want", true);
	expect_devices(r, (const char *[]){ "gpu-0", NULL });
	free(r);
	/* 9 GPUs can never fit on an 8-GPU node */
	r = predict(&f, "n1", "ml", "nine", true);
	ck_assert_int_eq(r->status, RF_SEARCH_INFEASIBLE);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_first_available_and_all)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	/* firstAvailable: 16 GPUs cannot fit, so the second subrequest (2 GPUs) is used */
	fixture_add_claim(
		&f, "ml", "fa",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"firstAvailable\":["
		"{\"name\":\"big\",\"deviceClassName\":\"gpu.nvidia.com\",\"count\":16},"
		"{\"name\":\"small\",\"deviceClassName\":\"gpu.nvidia.com\",\"count\":2}]}]}}",
		NULL, NULL);
	/* All: every rdma NIC of the node (the front-end X710 is not rdma) */
	fixture_add_claim(&f, "ml", "all",
			  "{\"devices\":{\"requests\":[{\"name\":\"nic\",\"exactly\":{"
			  "\"deviceClassName\":\"rdma-nic\",\"allocationMode\":\"All\"}}]}}",
			  NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "fa", false);
	expect_devices(r, (const char *[]){ "gpu-0", "gpu-1", NULL });
	ck_assert_str_eq(r->outcomes[0].picks[0].request, "gpu/small");
	free(r);
	r = predict(&f, "n1", "ml", "all", false);
	ck_assert_int_eq(r->status, RF_SEARCH_FOUND);
	ck_assert_uint_eq(r->outcomes[0].n, 8);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_selector_runtime_error)
{
	/* NVIDIA dropped the "index" attribute in v25.8: a demo selector on it raises a CEL
	 * runtime error on the first GPU the scan reaches, which fails the whole attempt */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_claim(
		&f, "ml", "idx",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
		"\"deviceClassName\":\"gpu.nvidia.com\",\"selectors\":[{\"cel\":{"
		"\"expression\":\"device.attributes['gpu.nvidia.com'].index == 0\"}}]}}]}}",
		NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "idx", false);
	ck_assert_msg(r->status == RF_SEARCH_CEL_ERROR, "status %d: %s", r->status, r->error);
	ck_assert_msg(strstr(r->error, "gpu-0") && strstr(r->error, "ml/idx"), "%s", r->error);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_random_pool_order_is_explored)
{
	/* two NIC pools on the node (dranet and a second node-local pool of the same driver):
	 * the allocator visits pools in random order, so a claim for one NIC has two outcomes */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_json(&f, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"extra\"},"
			     "\"spec\":{\"driver\":\"dra.net\",\"pool\":{\"name\":\"n1-extra\","
			     "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n1\","
			     "\"devices\":[{\"name\":\"pci-0001-01-00-0\",\"attributes\":{"
			     "\"dra.net/rdma\":{\"bool\":true}}}]}}");
	fixture_add_claim(&f, "ml", "nic",
			  "{\"devices\":{\"requests\":[{\"name\":\"nic\","
			  "\"exactly\":{\"deviceClassName\":\"rdma-nic\"}}]}}",
			  NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "nic", false);
	ck_assert_int_eq(r->status, RF_SEARCH_FOUND);
	ck_assert_uint_eq(r->n_outcomes, 2);
	ck_assert_uint_eq(r->n_orders, 2);
	free(r);
	fixture_release(&f);
}
END_TEST

/* NVIDIA DynamicMIG slices (dra-examples): one H100 with a counter set and its MIG placements. */
static const char *const MIG_CLASS =
	"{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"mig.nvidia.com\"},\"spec\":{\"selectors\":"
	"[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com' && "
	"device.attributes['gpu.nvidia.com'].type == 'mig'\"}}]}}";

static char *
mig_spec(const char *profile, int count)
{
	char *buf = malloc(512);
	snprintf(buf, 512,
		 "{\"devices\":{\"requests\":[{\"name\":\"mig\",\"exactly\":{\"deviceClassName\":"
		 "\"mig.nvidia.com\",\"count\":%d,\"selectors\":[{\"cel\":{\"expression\":"
		 "\"device.attributes['gpu.nvidia.com'].profile == '%s'\"}}]}}]}}",
		 count, profile);
	return buf;
}

/* the 1.34 layout: counter set and devices in one slice; slice_count patches resourceSliceCount */
static void
add_mig_k134(struct fixture *f, int slice_count)
{
	char *t = fixture_read("dra/resourceslice-gpu-nvidia-mig-partitionable-k134.json");
	json_t *o = json_loads(t, 0, NULL);
	free(t);
	json_object_set_new(json_object_get(json_object_get(o, "spec"), "pool"),
			    "resourceSliceCount", json_integer(slice_count));
	char *txt = json_dumps(o, 0);
	fixture_add_json(f, txt);
	free(txt);
	json_decref(o);
	fixture_add_json(f, MIG_CLASS);
}

static void
add_mig_claim(struct fixture *f, const char *name, const char *profile, int count,
	      const char *const *held)
{
	char *spec = mig_spec(profile, count);
	fixture_add_claim(f, "ml", name, spec, held ? "hgx-h100-node-01" : NULL, held);
	free(spec);
}

START_TEST(test_predict_mig_counters_k134)
{
	/* gpu-0-mig-3g40gb-9-0 is allocated: it takes memory slices 0-3, 60 SMs, 40448Mi. A second
	 * 3g.40gb fits only at placement 4 (slices 4-7); a third has no memory slice left; the full
	 * GPU conflicts on every counter; two 1g.10gb take the first placements whose slice is
	 * free (19-4, 19-5) */
	struct fixture f;
	fixture_init(&f);
	add_mig_k134(&f, 1);
	const char *held[] = { "gpu.nvidia.com:gpu-0-mig-3g40gb-9-0", NULL };
	add_mig_claim(&f, "running", "3g.40gb", 1, held);
	add_mig_claim(&f, "second", "3g.40gb", 1, NULL);
	add_mig_claim(&f, "small", "1g.10gb", 2, NULL);
	fixture_add_claim(&f, "ml", "full", SPEC_GPU_ONLY, NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "hgx-h100-node-01", "ml", "second", false);
	expect_devices(r, (const char *[]){ "gpu-0-mig-3g40gb-9-4", NULL });
	free(r);
	r = predict(&f, "hgx-h100-node-01", "ml", "small", false);
	expect_devices(r,
		       (const char *[]){ "gpu-0-mig-1g10gb-19-4", "gpu-0-mig-1g10gb-19-5", NULL });
	free(r);
	r = predict(&f, "hgx-h100-node-01", "ml", "full", false);
	ck_assert_int_eq(r->status, RF_SEARCH_INFEASIBLE);
	free(r);
	/* with every device free the full GPU is the first candidate of class gpu.nvidia.com */
	r = predict(&f, "hgx-h100-node-01", "ml", "full", true);
	expect_devices(r, (const char *[]){ "gpu-0", NULL });
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_mig_incomplete_pool_by_version)
{
	/* the k134 example announces 8 slices of which one is present: 1.34 searches incomplete
	 * pools for ExactCount requests, 1.35 skips them (dra-allocator.md section 2) */
	struct fixture f;
	fixture_init(&f);
	add_mig_k134(&f, 8);
	add_mig_claim(&f, "one", "1g.10gb", 1, NULL);
	f.cfg.kube.dra_version = RF_DRA_1_34;
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "hgx-h100-node-01", "ml", "one", false);
	expect_devices(r, (const char *[]){ "gpu-0-mig-1g10gb-19-0", NULL });
	free(r);
	f.cfg.kube.dra_version = RF_DRA_1_35;
	fixture_build(&f);
	r = predict(&f, "hgx-h100-node-01", "ml", "one", false);
	ck_assert_int_eq(r->status, RF_SEARCH_INFEASIBLE);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_mig_counters_k135_layout)
{
	/* 1.35 layout: the counter sets live in their own slice of the pool; the device slice
	 * references them by name. 1.35 resolves sets pool-wide; 1.34 only within the device's
	 * slice, so there the devices are never selectable */
	struct fixture f;
	fixture_init(&f);
	char *t = fixture_read("dra/resourceslice-gpu-nvidia-countersets-k135.json");
	json_t *sets = json_loads(t, 0, NULL);
	free(t);
	t = fixture_read("dra/resourceslice-gpu-nvidia-mig-partitionable-k134.json");
	json_t *devs = json_loads(t, 0, NULL);
	free(t);
	json_object_del(json_object_get(devs, "spec"), "sharedCounters");
	json_object_set_new(json_object_get(devs, "metadata"), "name", json_string("devices-0"));
	json_t *pool = json_object_get(json_object_get(devs, "spec"), "pool");
	json_object_set_new(pool, "generation", json_integer(3));
	json_object_set_new(pool, "resourceSliceCount", json_integer(2));
	json_object_set_new(json_object_get(json_object_get(sets, "spec"), "pool"),
			    "resourceSliceCount", json_integer(2));
	char *a = json_dumps(sets, 0), *b = json_dumps(devs, 0);
	fixture_add_json(&f, a);
	fixture_add_json(&f, b);
	free(a);
	free(b);
	json_decref(sets);
	json_decref(devs);
	fixture_add_json(&f, MIG_CLASS);
	const char *held[] = { "gpu.nvidia.com:gpu-0-mig-4g40gb-5-0", NULL };
	add_mig_claim(&f, "running", "4g.40gb", 1, held);
	add_mig_claim(&f, "want", "3g.40gb", 1, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "hgx-h100-node-01", "ml", "want", false);
	expect_devices(r, (const char *[]){ "gpu-0-mig-3g40gb-9-4", NULL });
	free(r);
	f.cfg.kube.dra_version = RF_DRA_1_34;
	fixture_build(&f);
	r = predict(&f, "hgx-h100-node-01", "ml", "want", false);
	ck_assert_int_eq(r->status, RF_SEARCH_INFEASIBLE);
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_binding_conditions_last)
{
	/* two GPU pools on the node: the one whose devices carry bindingConditions (a GPU attached
	 * over a fabric, say) is visited after the other, whatever the pool order */
	struct fixture f;
	fixture_init(&f);
	fixture_add_json(
		&f,
		"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"a\"},\"spec\":{"
		"\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"a-fabric\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"fab-0\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"}},\"bindingConditions\":"
		"[\"attached\"]}]}}");
	fixture_add_json(
		&f,
		"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"b\"},\"spec\":{"
		"\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"b-local\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}}");
	fixture_add_claim(&f, "ml", "one", SPEC_GPU_ONLY, NULL, NULL);
	fixture_build(&f);
	struct rf_search_result *r = predict(&f, "n1", "ml", "one", false);
	expect_devices(r, (const char *[]){ "gpu-0", NULL });
	free(r);
	fixture_release(&f);
}
END_TEST

START_TEST(test_predict_rejects_by_first_failing_check)
{
	/* six of eight GPUs held by another claim: the record counts them as in use, the NICs as
	 * not matching the GPU class, and names the two candidates */
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	const char *held[] = { "gpu.nvidia.com:gpu-0",
			       "gpu.nvidia.com:gpu-1",
			       "gpu.nvidia.com:gpu-2",
			       "gpu.nvidia.com:gpu-3",
			       "gpu.nvidia.com:gpu-4",
			       "gpu.nvidia.com:gpu-5",
			       NULL };
	fixture_add_claim(&f, "ml", "used", SPEC_GPU_ONLY, "n1", held);
	fixture_add_claim(&f, "ml", "want", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	const struct rf_claim *cl = rf_cluster_claim(f.c, "ml", "want");
	const struct rf_node *n = rf_cluster_node(f.c, "n1");
	struct rf_search_request req = { .cluster = f.c, .node = n, .claims = &cl, .n_claims = 1 };
	ck_assert_uint_eq(rf_search_n_requests(&req), 2);
	struct rf_request_rejects rj[2];
	ck_assert_int_eq(rf_predict_rejects(&req, rj), 0);
	ck_assert_str_eq(rj[0].alt->name, "gpu");
	ck_assert_uint_eq(rj[0].by[RF_REJECT_IN_USE], 6);
	ck_assert_uint_eq(rj[0].by[RF_REJECT_NONE], 2);
	ck_assert_uint_eq(rj[0].by[RF_REJECT_SELECTOR], n->n_devices - 8);
	ck_assert_uint_eq(rj[0].n_named, 2);
	ck_assert_str_eq(rj[0].named[0]->name, "gpu-6");
	ck_assert_str_eq(rj[0].named[1]->name, "gpu-7");
	/* every device is counted once */
	size_t total = 0;
	for (int k = 0; k < RF_REJECT_COUNT; k++)
		total += rj[1].by[k];
	ck_assert_uint_eq(total, n->n_devices);
	ck_assert_uint_eq(rj[1].by[RF_REJECT_IN_USE], 0);
	fixture_release(&f);
}
END_TEST

Suite *
predict_suite(void)
{
	Suite *s = suite_create("predict");
	TCase *tc = tcase_create("predict");
	tcase_add_test(tc, test_predict_aligned_pair_on_free_node);
	tcase_add_test(tc, test_predict_first_fit_misaligns_without_constraint);
	tcase_add_test(tc, test_predict_constraint_backtracks_over_gpus);
	tcase_add_test(tc, test_predict_two_pairs_template);
	tcase_add_test(tc, test_predict_infeasible_and_ignore_usage);
	tcase_add_test(tc, test_predict_first_available_and_all);
	tcase_add_test(tc, test_predict_selector_runtime_error);
	tcase_add_test(tc, test_predict_random_pool_order_is_explored);
	tcase_add_test(tc, test_predict_mig_counters_k134);
	tcase_add_test(tc, test_predict_mig_incomplete_pool_by_version);
	tcase_add_test(tc, test_predict_mig_counters_k135_layout);
	tcase_add_test(tc, test_predict_binding_conditions_last);
	tcase_add_test(tc, test_predict_rejects_by_first_failing_check);
	suite_add_tcase(s, tc);
	return s;
}
