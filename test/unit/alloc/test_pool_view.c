/* A pool as each node sees it (alloc/model/model-pool-view.c): the allocator's GatherPools takes
 * a pool's generation, completeness and duplicate names from the slices that serve the node.
 * Sources: v0.34.9 structured/internal/stable/pools_stable.go GatherPools (completeness over the
 * node's slices only) and allocator_stable.go:431 (All refuses an incomplete pool); v0.35.6 and
 * v0.36.2 pools_incubating.go GatherPools with checkSlicesInPool (an obsolete generation is
 * dropped, a pool the node's slices do not complete is judged whole). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/predict.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *pool_view_suite(void);

/* A slice of pool "p" of driver a.example: name, node, generation, resourceSliceCount, devices. */
static void
add_slice(struct fixture *f, const char *name, const char *node, int gen, int count,
	  const char *devices)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
		 "\"driver\":\"a.example\",\"pool\":{\"name\":\"p\",\"generation\":%d,"
		 "\"resourceSliceCount\":%d},\"nodeName\":\"%s\",\"devices\":%s}}",
		 name, gen, count, node, devices);
	fixture_add_json(f, buf);
}

static void
setup(struct fixture *f)
{
	fixture_init(f);
	fixture_add_json(f, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"any\"},"
			    "\"spec\":{}}");
	fixture_add_node(f, "n1", NULL, NULL);
	fixture_add_node(f, "n2", NULL, NULL);
	fixture_add_claim(f, "ml", "one",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"any\",\"count\":1}}]}}",
			  NULL, NULL);
	fixture_add_claim(f, "ml", "two",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"any\",\"count\":2}}]}}",
			  NULL, NULL);
	fixture_add_claim(f, "ml", "all",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"any\",\"allocationMode\":\"All\"}}]}}",
			  NULL, NULL);
}

/* Predict claim on node under version v; the result is the caller's to free. */
static struct rf_search_result *
run(struct fixture *f, enum rf_dra_version v, const char *node, const char *claim)
{
	f->cfg.kube.dra_version = v;
	fixture_build(f);
	const struct rf_claim *cl = rf_cluster_claim(f->c, "ml", claim);
	ck_assert_ptr_nonnull(cl);
	struct rf_search_request req = {
		.cluster = f->c, .node = rf_cluster_node(f->c, node), .claims = &cl, .n_claims = 1
	};
	ck_assert_ptr_nonnull(req.node);
	struct rf_search_result *res = malloc(sizeof(*res));
	ck_assert_ptr_nonnull(res);
	ck_assert_int_eq(rf_predict(&req, res), 0);
	return res;
}

/* Every outcome picks exactly want ("dev dev ..."). */
static void
expect_picks(struct rf_search_result *r, const char *want)
{
	ck_assert_msg(r->status == RF_SEARCH_FOUND, "status %s: %s",
		      rf_search_status_name(r->status), r->error);
	for (size_t i = 0; i < r->n_outcomes; i++) {
		char buf[256];
		size_t off = 0;
		buf[0] = 0;
		for (size_t k = 0; k < r->outcomes[i].n && off < sizeof(buf); k++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", k ? " " : "",
						r->outcomes[i].picks[k].dev->name);
		ck_assert_str_eq(buf, want);
	}
	free(r);
}

static void
expect_status(struct rf_search_result *r, enum rf_search_status st)
{
	ck_assert_msg(r->status == st, "status %s, want %s (%s)", rf_search_status_name(r->status),
		      rf_search_status_name(st), r->error);
	free(r);
}

static bool
has_warning(const struct rf_cluster *c, const char *part)
{
	for (size_t i = 0; i < rf_cluster_n_warnings(c); i++)
		if (strstr(rf_cluster_warning(c, i), part))
			return true;
	return false;
}

START_TEST(test_multi_host_pool_all)
{
	/* one pool, a slice on each node: 1.34 calls it incomplete on each node (All fails there,
	 * a count is still served); from 1.35 the pool is complete as a whole (v0.35.6
	 * "allocation-mode-all-with-multi-host-resource-pool") */
	struct fixture f;
	setup(&f);
	add_slice(&f, "s1", "n1", 1, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "s2", "n2", 1, 2, "[{\"name\":\"d2\"}]");
	expect_status(run(&f, RF_DRA_1_34, "n1", "all"), RF_SEARCH_POOL_ERROR);
	expect_picks(run(&f, RF_DRA_1_34, "n1", "one"), "d1");
	expect_picks(run(&f, RF_DRA_1_35, "n1", "all"), "d1");
	expect_picks(run(&f, RF_DRA_1_36, "n2", "all"), "d2");
	expect_picks(run(&f, RF_DRA_1_36, "n1", "one"), "d1");
	fixture_release(&f);
}
END_TEST

START_TEST(test_stale_generation)
{
	/* n1 keeps one slice of generation 1 (of 2), generation 2 serves n2: from 1.35 the node's
	 * generation is obsolete (v0.35.6 "multi-host-resource-pool-with-stale-slice-for-current-
	 * node"); 1.34 has no such check and serves the node's incomplete generation */
	struct fixture f;
	setup(&f);
	add_slice(&f, "old", "n1", 1, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "new-a", "n2", 2, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "new-b", "n2", 2, 2, "[{\"name\":\"d2\"}]");
	expect_status(run(&f, RF_DRA_1_35, "n1", "one"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_36, "n1", "one"), RF_SEARCH_INFEASIBLE);
	expect_picks(run(&f, RF_DRA_1_36, "n2", "two"), "d1 d2");
	expect_picks(run(&f, RF_DRA_1_34, "n1", "one"), "d1");
	expect_status(run(&f, RF_DRA_1_34, "n1", "all"), RF_SEARCH_POOL_ERROR);
	fixture_release(&f);
}
END_TEST

START_TEST(test_own_complete_generation)
{
	/* n1's slices of generation 1 are complete by themselves: n1 keeps them while generation 2
	 * serves n2 (v0.35.6 "multi-host-resource-pool-complete-update-from-node-1-to-node-2") */
	struct fixture f;
	setup(&f);
	add_slice(&f, "old-a", "n1", 1, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "old-b", "n1", 1, 2, "[{\"name\":\"d2\"}]");
	add_slice(&f, "new-a", "n2", 2, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "new-b", "n2", 2, 2, "[{\"name\":\"d2\"}]");
	for (enum rf_dra_version v = RF_DRA_1_34; v <= RF_DRA_1_36; v++) {
		expect_picks(run(&f, v, "n1", "two"), "d1 d2");
		expect_picks(run(&f, v, "n1", "all"), "d1 d2");
		expect_picks(run(&f, v, "n2", "two"), "d1 d2");
	}
	/* what a claim holds is per device name: d1 held stops n1's d1 too */
	fixture_add_json(&f, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"held\","
			     "\"namespace\":\"ml\",\"uid\":\"held\"},\"spec\":{\"devices\":{"
			     "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"
			     "\"any\"}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
			     "\"request\":\"r\",\"driver\":\"a.example\",\"pool\":\"p\","
			     "\"device\":\"d1\"}]}}}}");
	expect_status(run(&f, RF_DRA_1_36, "n1", "two"), RF_SEARCH_INFEASIBLE);
	expect_picks(run(&f, RF_DRA_1_36, "n1", "one"), "d2");
	fixture_release(&f);
}
END_TEST

START_TEST(test_older_device_not_in_newest)
{
	/* a device of the node's older generation that the newest one lacks or publishes
	 * differently is left out there, with a warning (its usage has no place in the model) */
	struct fixture f;
	setup(&f);
	add_slice(&f, "old-a", "n1", 1, 2, "[{\"name\":\"d1\"},{\"name\":\"d3\"}]");
	add_slice(&f, "old-b", "n1", 1, 2,
		  "[{\"name\":\"d2\",\"attributes\":{\"model\":{\"string\":\"x\"}}}]");
	add_slice(&f, "new-a", "n2", 2, 2, "[{\"name\":\"d1\"}]");
	add_slice(&f, "new-b", "n2", 2, 2,
		  "[{\"name\":\"d2\",\"attributes\":{\"model\":{\"string\":\"y\"}}}]");
	expect_picks(run(&f, RF_DRA_1_36, "n1", "one"), "d1");
	expect_status(run(&f, RF_DRA_1_36, "n1", "two"), RF_SEARCH_INFEASIBLE);
	ck_assert(has_warning(f.c, "node n1 still sees generation 1"));
	ck_assert(has_warning(f.c, "2 of its devices (d3 first)"));
	fixture_release(&f);
}
END_TEST

START_TEST(test_duplicate_names_across_nodes)
{
	/* each node's slices are checked for duplicate names, not the whole pool's (the allocator
	 * validates the slices it gathered for the node) */
	struct fixture f;
	setup(&f);
	add_slice(&f, "s1", "n1", 1, 2, "[{\"name\":\"gpu-0\"}]");
	add_slice(&f, "s2", "n2", 1, 2, "[{\"name\":\"gpu-0\"}]");
	for (enum rf_dra_version v = RF_DRA_1_34; v <= RF_DRA_1_36; v++) {
		expect_picks(run(&f, v, "n1", "one"), "gpu-0");
		expect_picks(run(&f, v, "n2", "one"), "gpu-0");
	}
	/* two slices for the same node repeating a name: invalid there */
	add_slice(&f, "s3", "n1", 1, 2, "[{\"name\":\"gpu-0\"}]");
	expect_status(run(&f, RF_DRA_1_36, "n1", "one"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_34, "n1", "one"), RF_SEARCH_POOL_ERROR);
	/* n2: three slices of a pool of two, incomplete from 1.35 (1.34 still serves it) */
	expect_status(run(&f, RF_DRA_1_36, "n2", "one"), RF_SEARCH_INFEASIBLE);
	expect_picks(run(&f, RF_DRA_1_34, "n2", "one"), "gpu-0");
	/* the node's reason counts the slices that serve it */
	f.cfg.kube.dra_version = RF_DRA_1_36;
	fixture_build(&f);
	json_t *pod = fixture_pod("p", "one", NULL);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
	struct rf_node_eval *e = malloc(sizeof(*e));
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "n2", false, e), 0);
	bool said = false;
	for (size_t i = 0; i < e->n_reasons; i++)
		said = said ||
		       strstr(e->reasons[i], "pool a.example/p is incomplete (1 of 2 slices)");
	ck_assert_msg(said, "reason: %s", e->n_reasons ? e->reasons[0] : "(none)");
	free(e);
	rf_demand_release(&d);
	json_decref(pod);
	fixture_release(&f);
}
END_TEST

Suite *
pool_view_suite(void)
{
	Suite *s = suite_create("pool_view");
	TCase *tc = tcase_create("pool_view");
	tcase_add_test(tc, test_multi_host_pool_all);
	tcase_add_test(tc, test_stale_generation);
	tcase_add_test(tc, test_own_complete_generation);
	tcase_add_test(tc, test_older_device_not_in_newest);
	tcase_add_test(tc, test_duplicate_names_across_nodes);
	suite_add_tcase(s, tc);
	return s;
}
