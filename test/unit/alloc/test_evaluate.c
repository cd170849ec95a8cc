/* Filter and score per node (DESIGN section 7) on HGX H100 nodes in different states. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/memo.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *evaluate_suite(void);

/* a: all free; b: gpu-0 held without its NIC; c: only GPUs 6,7 and NICs of roots 0..5 free */
static void
three_nodes(struct fixture *f)
{
	fixture_init(f);
	fixture_add_hgx(f, "a");
	fixture_add_hgx(f, "b");
	fixture_add_hgx(f, "c");
	const char *b_held[] = { "gpu.nvidia.com:gpu-0", NULL };
	fixture_add_claim(f, "ml", "b-used", SPEC_GPU_ONLY, "b", b_held);
	const char *c_held[] = {
		"gpu.nvidia.com:gpu-0",     "gpu.nvidia.com:gpu-1",     "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3",     "gpu.nvidia.com:gpu-4",     "gpu.nvidia.com:gpu-5",
		"dra.net:pci-0000-ce-00-0", "dra.net:pci-0000-dc-00-0", NULL
	};
	fixture_add_claim(f, "ml", "c-used", SPEC_GPU_ONLY, "c", c_held);
	fixture_add_claim(f, "ml", "aligned", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_add_claim(f, "ml", "loose", SPEC_GPU_NIC_LOOSE, NULL, NULL);
	fixture_build(f);
}

static void
eval(struct fixture *f, json_t *p, const char *node, struct rf_node_eval *e, bool explain)
{
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f->c, p, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f->c, &d, node, explain, e), 0);
	rf_demand_release(&d);
}

START_TEST(test_evaluate_aligned_claim_across_nodes)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	json_t *p = fixture_pod("t", "aligned", "\"railfit.io/min-alignment\":\"PHB\"");
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_PHB);
	int score_a = e->score;
	eval(&f, p, "c", e, false);
	/* no free GPU shares a root with a free NIC: the claim cannot be allocated, but evicting
	 * could help, so FailedNodes; the message names the free devices */
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_msg(strstr(e->reasons[0], "ml/aligned") && strstr(e->reasons[0], "gpu-6") &&
			      strstr(e->reasons[0], "resource.kubernetes.io/pcieRoot"),
		      "%s", e->reasons[0]);
	eval(&f, p, "b", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_str_eq(e->predicted.picks[0].dev->name, "gpu-1");
	/* b has one GPU in use already: packing prefers it, alignment is equal */
	ck_assert_int_ge(e->score, score_a);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_min_alignment_message_names_the_fix)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	json_t *p = fixture_pod("t", "loose", "\"railfit.io/min-alignment\":\"PHB\"");
	eval(&f, p, "b", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_msg(strstr(e->reasons[0], "gpu-1 + pci-0000-18-00-0 (NODE)") &&
			      strstr(e->reasons[0], "(PHB) are free") &&
			      strstr(e->reasons[0], "add constraint matchAttribute "
						    "resource.kubernetes.io/pcieRoot over requests "
						    "[gpu nic] to claim ml/loose"),
		      "%s", e->reasons[0]);
	/* c: the allocator would pick gpu-6 + pci-0000-18-00-0 across sockets; nothing better is
	 * free, but freeing devices would give PHB: resolvable */
	eval(&f, p, "c", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_SYS);
	eval(&f, p, "a", e, true);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert(e->has_best);
	ck_assert_int_eq(e->best_level, RF_LEVEL_PHB);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_scores_prefer_aligned_nodes)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	json_t *p = fixture_pod("t", "loose", NULL);
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	int a = e->score;
	eval(&f, p, "b", e, false);
	int b = e->score;
	eval(&f, p, "c", e, false);
	int c = e->score;
	/* a: PHB; b: NODE; c: SYS */
	ck_assert_msg(a > b && b > c, "scores a=%d b=%d c=%d", a, b, c);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_pinned_none_unknown)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	json_t *p = fixture_pod("t", "b-used", NULL);
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	ck_assert_msg(strstr(e->reasons[0], "already allocated on node b"), "%s", e->reasons[0]);
	eval(&f, p, "b", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	json_decref(p);

	p = fixture_pod("web", NULL, NULL);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_NONE);
	rf_demand_release(&d);
	json_decref(p);

	p = fixture_pod("t", "missing", NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_UNKNOWN);
	ck_assert_msg(strstr(d.unknown_reason, "ml/missing"), "%s", d.unknown_reason);
	rf_demand_release(&d);
	eval(&f, p, "c", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	json_decref(p);

	p = fixture_pod("t", "aligned", "\"railfit.io/min-alignment\":\"CLOSE\"");
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_UNKNOWN);
	ck_assert_msg(strstr(d.unknown_reason, "railfit.io/min-alignment"), "%s", d.unknown_reason);
	rf_demand_release(&d);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_bandwidth_headroom)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	/* 500G per NIC can never fit a 400G NIC: unresolvable */
	json_t *p = fixture_pod("t", "aligned", "\"railfit.io/nic-bandwidth\":\"500G\"");
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	ck_assert_msg(strstr(e->reasons[0], "pci-0000-18-00-0 has 400G of 400G free, the pod asks "
					    "500G"),
		      "%s", e->reasons[0]);
	json_decref(p);
	p = fixture_pod("t", "aligned", "\"railfit.io/nic-bandwidth\":\"100G\"");
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert(e->part_applies[RF_PART_BANDWIDTH]);
	ck_assert_double_eq_tol(e->parts[RF_PART_BANDWIDTH], 0.75, 1e-9);
	json_decref(p);
	/* malformed: reported, not counted */
	p = fixture_pod("t", "aligned", "\"railfit.io/nic-bandwidth\":\"fast\"");
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	bool seen = false;
	for (size_t i = 0; i < e->n_reasons; i++)
		seen = seen || strstr(e->reasons[i], "railfit.io/nic-bandwidth");
	ck_assert(seen);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_frontend_noisy_neighbour)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	fixture_add_hgx(&f, "a");
	fixture_add_hgx(&f, "b");
	/* two data loaders already download 40G each on node a (front-end 100G by default) */
	for (int i = 0; i < 2; i++) {
		char buf[512];
		snprintf(
			buf, sizeof(buf),
			"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"loader-%d\",\"namespace\":\"ml\","
			"\"annotations\":{\"kubernetes.io/ingress-bandwidth\":\"40G\"}},\"spec\":{"
			"\"nodeName\":\"a\"},\"status\":{\"phase\":\"Running\"}}",
			i);
		fixture_add_json(&f, buf);
	}
	fixture_build(&f);
	json_t *p = fixture_pod("new", NULL, "\"kubernetes.io/ingress-bandwidth\":\"30G\"");
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_msg(strstr(e->reasons[0], "front-end NIC has 20G of 100G ingress free"), "%s",
		      e->reasons[0]);
	eval(&f, p, "b", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_double_eq_tol(e->parts[RF_PART_BANDWIDTH], 0.7, 1e-9);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_explain_json_shape)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	json_t *p = fixture_pod("t", "loose", NULL);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "b", true, e), 0);
	json_t *doc = rf_explain_json(f.c, &d, e, 1);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "pod")), "ml/t");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "demand")), "known");
	json_t *n = json_array_get(json_object_get(doc, "nodes"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(n, "node")), "b");
	ck_assert_str_eq(json_string_value(json_object_get(n, "verdict")), "pass");
	ck_assert(json_is_integer(json_object_get(n, "score")));
	ck_assert(json_is_number(json_object_get(json_object_get(n, "parts"), "alignment")));
	json_t *p0 = json_array_get(json_object_get(n, "predicted"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p0, "claim")), "ml/loose");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "device")), "gpu-1");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "level")), "NODE");
	ck_assert_str_eq(json_string_value(json_object_get(p0, "driver")), "gpu.nvidia.com");
	json_t *b0 = json_array_get(json_object_get(n, "best"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(b0, "level")), "PHB");
	ck_assert(json_is_true(json_object_get(n, "deterministic")));
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(n, "sources"), "locality")),
		"dra");
	json_decref(doc);
	rf_demand_release(&d);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_preemption_release)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	fixture_add_hgx(&f, "a");
	/* every GPU of node a is held by one claim reserved by pod big; a second claim holding
	 * NIC 18 is shared by big and keeper */
	const char *gpus[] = {
		"gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1", "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3", "gpu.nvidia.com:gpu-4", "gpu.nvidia.com:gpu-5",
		"gpu.nvidia.com:gpu-6", "gpu.nvidia.com:gpu-7", NULL
	};
	fixture_add_claim(&f, "ml", "all-gpus", SPEC_GPU_ONLY, "a", gpus);
	const char *nic[] = { "dra.net:pci-0000-18-00-0", NULL };
	fixture_add_claim(&f, "ml", "shared-nic", SPEC_GPU_ONLY, "a", nic);
	fixture_add_claim(&f, "ml", "aligned", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	json_t *claims = f.objs.claims;
	for (size_t i = 0; i < json_array_size(claims); i++) {
		json_t *cl = json_array_get(claims, i);
		const char *n =
			json_string_value(json_object_get(json_object_get(cl, "metadata"), "name"));
		json_t *st = json_object_get(cl, "status");
		if (strcmp(n, "all-gpus") == 0)
			json_object_set_new(st, "reservedFor",
					    json_pack("[{s:s, s:s, s:s}]", "resource", "pods",
						      "name", "big", "uid", "u-big"));
		if (strcmp(n, "shared-nic") == 0)
			json_object_set_new(st, "reservedFor",
					    json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "big",
						      "uid", "u-big", "name", "keeper", "uid",
						      "u-keeper"));
	}
	fixture_add_json(&f,
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"big\",\"namespace\":\"ml\","
			 "\"uid\":\"u-big\"},\"spec\":{\"nodeName\":\"a\",\"resourceClaims\":["
			 "{\"name\":\"g\",\"resourceClaimName\":\"all-gpus\"},{\"name\":\"n\","
			 "\"resourceClaimName\":\"shared-nic\"}]}}");
	fixture_add_json(
		&f, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"keeper\",\"namespace\":"
		    "\"ml\",\"uid\":\"u-keeper\"},\"spec\":{\"nodeName\":\"a\","
		    "\"resourceClaims\":[{\"name\":\"n\",\"resourceClaimName\":\"shared-nic\"}]}}");
	fixture_build(&f);
	json_t *p = fixture_pod("t", "aligned", NULL);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "a", false, e), 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	const struct rf_pod *big = rf_cluster_pod_by_uid(f.c, "u-big");
	ck_assert_ptr_nonnull(big);
	struct rf_release rel;
	ck_assert_int_eq(rf_release_from_victims(f.c, &big, 1, &rel), 0);
	/* all-gpus is released; shared-nic is still reserved by keeper */
	ck_assert_uint_eq(rel.n_claims, 1);
	ck_assert_str_eq(rel.claims[0]->name, "all-gpus");
	ck_assert_int_eq(rf_evaluate_node_released(f.c, &d, "a", &rel, e), 0);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	/* gpu-0's NIC stays held: the aligned pick is gpu-1 + pci-0000-40-00-0 */
	ck_assert_str_eq(e->predicted.picks[0].dev->name, "gpu-1");
	ck_assert_str_eq(e->predicted.picks[1].dev->name, "pci-0000-40-00-0");
	rf_release_free(&rel);
	rf_demand_release(&d);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_evaluate_unknown_alignment)
{
	/* the GPU publishes no NUMA node and no NIC shares its root: the level is UNKNOWN. The
	 * default minimum (SYS) asks nothing; a pod asking PHB fails, but not as unresolvable */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	fixture_add_json(
		&f,
		"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"g\"},\"spec\":{"
		"\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"n1\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\","
		"\"attributes\":{\"type\":{\"string\":\"gpu\"},\"resource.kubernetes.io/pcieRoot\":"
		"{\"string\":\"pci0000:10\"}}}]}}");
	fixture_add_json(&f,
			 "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"n\"},\"spec\":{"
			 "\"driver\":\"dra.net\",\"pool\":{\"name\":\"n1\",\"generation\":1,"
			 "\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":"
			 "\"pci-0000-21-00-0\",\"attributes\":{\"dra.net/rdma\":{\"bool\":true},"
			 "\"dra.net/numaNode\":{\"int\":0},\"resource.kubernetes.io/pcieRoot\":"
			 "{\"string\":\"pci0000:20\"}}}]}}");
	fixture_add_claim(&f, "ml", "loose", SPEC_GPU_NIC_LOOSE, NULL, NULL);
	fixture_build(&f);
	json_t *p = fixture_pod("t", "loose", NULL);
	eval(&f, p, "n1", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_UNKNOWN);
	json_decref(p);
	p = fixture_pod("t", "loose", "\"railfit.io/min-alignment\":\"PHB\"");
	eval(&f, p, "n1", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert_msg(strstr(e->reasons[0], "cannot be checked"), "%s", e->reasons[0]);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

/* The infeasible message is built from the search's own checks: an adminAccess request may use
 * devices other claims hold, so they count as free (the message once counted them as held). */
START_TEST(test_evaluate_infeasible_admin_access_counts_held_devices)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	three_nodes(&f);
	fixture_add_claim(&f, "ml", "admin9",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":9,"
			  "\"adminAccess\":true}}]}}",
			  NULL, NULL);
	fixture_build(&f);
	json_t *p = fixture_pod("t", "admin9", NULL);
	eval(&f, p, "c", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	ck_assert_msg(strstr(e->reasons[0], "needs 9 of class gpu.nvidia.com, 8 match, 8 free "
					    "(gpu-0 gpu-1 gpu-2 gpu-3 ...)"),
		      "%s", e->reasons[0]);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

/* 1.34 rejects a device for any untolerated taint, effect None included (1.35 only for
 * NoSchedule and NoExecute); the message counts what the search rejected. */
START_TEST(test_evaluate_infeasible_taint_by_version)
{
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	fixture_add_hgx(&f, "a");
	for (size_t i = 0; i < json_array_size(f.objs.slices); i++) {
		json_t *spec = json_object_get(json_array_get(f.objs.slices, i), "spec");
		json_t *devs = json_object_get(spec, "devices");
		if (strcmp(json_string_value(json_object_get(spec, "driver")), "gpu.nvidia.com"))
			continue;
		for (size_t k = 0; k < 3; k++)
			json_object_set_new(
				json_array_get(devs, k), "taints",
				json_pack("[{s:s, s:s}]", "key", "k", "effect", "None"));
	}
	fixture_add_claim(&f, "ml", "six",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
			  "\"deviceClassName\":\"gpu.nvidia.com\",\"count\":6}}]}}",
			  NULL, NULL);
	f.cfg.kube.dra_version = RF_DRA_1_34;
	fixture_build(&f);
	json_t *p = fixture_pod("t", "six", NULL);
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	ck_assert_msg(strstr(e->reasons[0], "8 match, 5 free (gpu-3 gpu-4 gpu-5 gpu-6 ...) (0 more "
					    "in pools the allocator skips, 3 with an untolerated "
					    "taint)"),
		      "%s", e->reasons[0]);
	f.cfg.kube.dra_version = RF_DRA_1_35;
	fixture_build(&f);
	eval(&f, p, "a", e, false);
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

/* A group's first pod with 2+ rails (no rails of its group elsewhere yet): the rail part stays
 * neutral (DESIGN 7.4) and the packing part counts the share of its rails in one aligned block.
 * On x, gpu-0 and gpu-1 are taken: two aligned pairs get rails 2 and 3 (a block of two); on y
 * only gpu-0 is: rails 1 and 2 straddle two blocks. A pod of no group has no block fit, and the
 * memo keeps the two judgements apart. */
START_TEST(test_evaluate_rails_of_a_groups_first_pod)
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
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	fixture_init(&f);
	fixture_add_hgx(&f, "x");
	fixture_add_hgx(&f, "y");
	fixture_add_claim(&f, "ml", "held-x", SPEC_GPU_ONLY, "x",
			  (const char *[]){ "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1", NULL });
	fixture_add_claim(&f, "ml", "held-y", SPEC_GPU_ONLY, "y",
			  (const char *[]){ "gpu.nvidia.com:gpu-0", NULL });
	fixture_add_claim(&f, "ml", "pairs", TWO_PAIRS, NULL, NULL);
	fixture_build(&f);
	json_t *grouped = fixture_pod("w", "pairs", "\"railfit.io/group\":\"g\"");
	json_t *alone = fixture_pod("w", "pairs", NULL);
	int score[2][2]; /* [grouped?][x, y] */
	for (int g = 0; g < 2; g++) {
		struct rf_demand d;
		ck_assert_int_eq(rf_demand_resolve(f.c, g ? grouped : alone, &d), 0);
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(rf_evaluate_node(f.c, &d, k ? "y" : "x", true, e), 0);
			ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
			ck_assert_int_eq(e->group_rails, 0);
			/* DESIGN 7.4: the rail part is neutral while the group has no rails */
			ck_assert(!e->part_applies[RF_PART_RAIL]);
			ck_assert(e->rail_block == (g == 1));
			/* packing: x 4 of 8 GPUs in use after, y 3 of 8; y's rails half a block */
			ck_assert(e->part_applies[RF_PART_PACKING]);
			ck_assert_double_eq_tol(e->parts[RF_PART_PACKING],
						k ? (g ? 0.375 * 0.5 : 0.375) : 0.5, 1e-9);
			score[g][k] = e->score;
			bool noted = false;
			for (size_t i = 0; i < e->n_reasons; i++)
				noted = noted ||
					strstr(e->reasons[i], "the first pod of group ml/g");
			ck_assert(noted == (g == 1));
		}
		/* through the memo, one shape for both pods: each gets its own judgement */
		struct rf_judge_ctx ctx;
		ck_assert_int_eq(rf_judge_begin(f.c, &d, &ctx), 0);
		ck_assert_ptr_nonnull(ctx.shape);
		for (int round = 0; round < 2; round++)
			for (int k = 0; k < 2; k++) {
				struct rf_judgement j;
				ck_assert_int_eq(
					rf_judge_node(&ctx, k ? "y" : "x", false, scratch, &j), 0);
				ck_assert_int_eq(j.score, score[g][k]);
			}
		rf_judge_end(&ctx);
		rf_demand_release(&d);
	}
	ck_assert_int_gt(score[1][0], score[1][1]);

	/* a member of g on z holds the NICs of rails 0-3: the group's nodes hold more rails than
	 * the pod gets, every pair of them is inside; the aligned block decides again */
	fixture_add_hgx(&f, "z");
	fixture_build(&f);
	const struct rf_node *z = rf_cluster_node(f.c, "z");
	char nics[4][128];
	const char *held[5] = { NULL };
	for (size_t i = 0; i < z->n_devices; i++) {
		const struct rf_device *dv = z->devices[i];
		if (dv->kind == RF_DEV_NIC && dv->rail >= 0 && dv->rail < 4) {
			snprintf(nics[dv->rail], sizeof(nics[0]), "dra.net:%s", dv->name);
			held[dv->rail] = nics[dv->rail];
		}
	}
	for (int r = 0; r < 4; r++)
		ck_assert_ptr_nonnull(held[r]);
	fixture_add_claim(&f, "ml", "member-c", SPEC_GPU_ONLY, "z", held);
	fixture_add_json(&f, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"member\",\"namespace\":"
			     "\"ml\",\"uid\":\"u-m\",\"annotations\":{\"railfit.io/group\":\"g\"}},"
			     "\"spec\":{\"nodeName\":\"z\",\"resourceClaims\":[{\"name\":\"c\","
			     "\"resourceClaimName\":\"member-c\"}]},\"status\":{\"phase\":"
			     "\"Running\"}}");
	fixture_build(&f);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f.c, grouped, &d), 0);
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(rf_evaluate_node(f.c, &d, k ? "y" : "x", true, e), 0);
		ck_assert_uint_eq(e->group_rails, 0xf);
		ck_assert(e->part_applies[RF_PART_RAIL]);
		ck_assert(e->rail_block);
		ck_assert_double_eq_tol(e->parts[RF_PART_RAIL], k ? 0.5 : 1.0, 1e-9);
	}
	rf_demand_release(&d);
	json_decref(grouped);
	json_decref(alone);
	free(e);
	free(scratch);
	fixture_release(&f);
}
END_TEST

Suite *
evaluate_suite(void)
{
	Suite *s = suite_create("evaluate");
	TCase *tc = tcase_create("evaluate");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_evaluate_aligned_claim_across_nodes);
	tcase_add_test(tc, test_evaluate_min_alignment_message_names_the_fix);
	tcase_add_test(tc, test_evaluate_scores_prefer_aligned_nodes);
	tcase_add_test(tc, test_evaluate_pinned_none_unknown);
	tcase_add_test(tc, test_evaluate_bandwidth_headroom);
	tcase_add_test(tc, test_evaluate_frontend_noisy_neighbour);
	tcase_add_test(tc, test_evaluate_explain_json_shape);
	tcase_add_test(tc, test_evaluate_preemption_release);
	tcase_add_test(tc, test_evaluate_unknown_alignment);
	tcase_add_test(tc, test_evaluate_infeasible_admin_access_counts_held_devices);
	tcase_add_test(tc, test_evaluate_infeasible_taint_by_version);
	tcase_add_test(tc, test_evaluate_rails_of_a_groups_first_pod);
	suite_add_tcase(s, tc);
	return s;
}
