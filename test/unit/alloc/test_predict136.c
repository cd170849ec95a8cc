/* Golden cases for the 1.36 and 1.37 allocator rules (reference/dra-allocator-1.36.md section 5):
 * the same objects under several kube.draVersion values, with the pick each version's allocator
 * makes. Each case names the upstream source of the difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/predict.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *predict136_suite(void);

/* A DeviceClass per test driver (a.example, b.example) and one that takes any device. */
static void
add_classes(struct fixture *f)
{
	fixture_add_json(f, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"any\"},"
			    "\"spec\":{}}");
	fixture_add_json(f, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"a\"},\"spec\":{"
			    "\"selectors\":[{\"cel\":{\"expression\":"
			    "\"device.driver == 'a.example'\"}}]}}");
	fixture_add_json(f, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"b\"},\"spec\":{"
			    "\"selectors\":[{\"cel\":{\"expression\":"
			    "\"device.driver == 'b.example'\"}}]}}");
}

/* A slice of node n1: name, driver, pool, number of slices in the pool, devices (JSON array
 * text) and extra spec members (JSON text starting with a comma, or ""). */
static void
add_slice(struct fixture *f, const char *name, const char *driver, const char *pool, int count,
	  const char *devices, const char *extra)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
		 "\"driver\":\"%s\",\"pool\":{\"name\":\"%s\",\"generation\":1,"
		 "\"resourceSliceCount\":%d},\"nodeName\":\"n1\",\"devices\":%s%s}}",
		 name, driver, pool, count, devices, extra);
	fixture_add_json(f, buf);
}

/* A claim "ml/<name>": one request "r" of class cls, count (0 = allocationMode All). */
static void
add_request_claim(struct fixture *f, const char *name, const char *cls, int count,
		  const char *constraints)
{
	char buf[2048];
	if (count > 0)
		snprintf(buf, sizeof(buf),
			 "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			 "\"deviceClassName\":\"%s\",\"count\":%d}}]%s}}",
			 cls, count, constraints ? constraints : "");
	else
		snprintf(buf, sizeof(buf),
			 "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			 "\"deviceClassName\":\"%s\",\"allocationMode\":\"All\"}}]}}",
			 cls);
	fixture_add_claim(f, "ml", name, buf, NULL, NULL);
}

static struct rf_search_result *
run(struct fixture *f, enum rf_dra_version v, int patch, const char *claim)
{
	f->cfg.kube.dra_version = v;
	f->cfg.kube.dra_patch = patch;
	fixture_build(f);
	const struct rf_claim *cl = rf_cluster_claim(f->c, "ml", claim);
	ck_assert_ptr_nonnull(cl);
	ck_assert_msg(cl->unsupported == NULL, "unsupported: %s", cl->unsupported);
	struct rf_search_request req = {
		.cluster = f->c, .node = rf_cluster_node(f->c, "n1"), .claims = &cl, .n_claims = 1
	};
	ck_assert_ptr_nonnull(req.node);
	struct rf_search_result *res = malloc(sizeof(*res));
	ck_assert_int_eq(rf_predict(&req, res), 0);
	return res;
}

/* outcome i's devices, "name name ..." */
static const char *
picks(const struct rf_search_result *r, size_t i, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t k = 0; k < r->outcomes[i].n && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? " " : "",
					r->outcomes[i].picks[k].dev->name);
	return buf;
}

/* The search found exactly one outcome, want, in one scan order. */
static void
expect_one(struct rf_search_result *r, const char *want)
{
	char buf[512];
	ck_assert_msg(r->status == RF_SEARCH_FOUND, "status %s: %s",
		      rf_search_status_name(r->status), r->error);
	ck_assert_uint_eq(r->n_outcomes, 1);
	ck_assert_str_eq(picks(r, 0, buf, sizeof(buf)), want);
	free(r);
}

/* The search found these outcomes (1.35: over its scan orders), in any order. */
static void
expect_outcomes(struct rf_search_result *r, const char *const *want)
{
	char buf[512];
	size_t n = 0;
	ck_assert_int_eq(r->status, RF_SEARCH_FOUND);
	while (want[n])
		n++;
	ck_assert_uint_eq(r->n_outcomes, n);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(picks(r, k, buf, sizeof(buf)), want[i]) == 0;
		ck_assert_msg(found, "outcome %s missing", want[i]);
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

#define DEV(n) "{\"name\":\"" n "\"}"

START_TEST(test_136_pools_sorted_by_driver_then_name)
{
	/* D362 pools_incubating.go:176-202: pools by (driver, pool name), byte-wise. 1.35 visits
	 * them in map order: both picks are possible, railfit scores the worst */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s-b", "b.example", "pool-0", 1, "[" DEV("b0") "]", "");
	add_slice(&f, "s-a2", "a.example", "pool-z", 1, "[" DEV("az") "]", "");
	add_slice(&f, "s-a1", "a.example", "pool-y", 1, "[" DEV("ay") "]", "");
	add_request_claim(&f, "one", "any", 1, NULL);
	expect_outcomes(run(&f, RF_DRA_1_35, -1, "one"),
			(const char *[]){ "b0", "az", "ay", NULL });
	struct rf_search_result *r = run(&f, RF_DRA_1_36, -1, "one");
	ck_assert_uint_eq(r->n_orders, 1);
	ck_assert(r->orders_exhaustive);
	expect_one(r, "ay");
	expect_one(run(&f, RF_DRA_1_37, -1, "one"), "ay");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_slices_sorted_by_name)
{
	/* D362 pools_incubating.go:189-193, 235-239: a pool's slices by metadata.name */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "00001-a.example-n1-x", "a.example", "n1", 2, "[" DEV("dev-1") "]", "");
	add_slice(&f, "00000-a.example-n1-y", "a.example", "n1", 2, "[" DEV("dev-0") "]", "");
	add_request_claim(&f, "one", "a", 1, NULL);
	expect_outcomes(run(&f, RF_DRA_1_35, -1, "one"),
			(const char *[]){ "dev-0", "dev-1", NULL });
	expect_one(run(&f, RF_DRA_1_36, -1, "one"), "dev-0");
	expect_one(run(&f, RF_DRA_1_37, -1, "one"), "dev-0");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_binding_pools_last_slices_not_demoted)
{
	/* Pools with a bindingConditions device go after the others (D362 pools_incubating.go:
	 * 127-130, 168-184); within a pool 1.36 no longer demotes such slices (upstream test
	 * lexicographical-sorting-slices-with-binding-conditions): slice-1's device first.
	 * 1.35's experimental allocator put slice-2 (no binding conditions) first. */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "slice-1", "a.example", "p", 2,
		  "[{\"name\":\"bound\",\"bindingConditions\":[\"attached\"]}]", "");
	add_slice(&f, "slice-2", "a.example", "p", 2, "[" DEV("plain") "]", "");
	add_slice(&f, "fab", "a.example", "a-fabric", 1,
		  "[{\"name\":\"fab-0\",\"bindingConditions\":[\"attached\"]}]", "");
	add_slice(&f, "zz", "a.example", "zz-local", 1, "[" DEV("local") "]", "");
	add_request_claim(&f, "two", "a", 2, NULL);
	/* 1.36: zz-local (no binding) first, then a-fabric and p (both have binding devices) by
	 * name: fab-0 second */
	expect_one(run(&f, RF_DRA_1_36, -1, "two"), "local fab-0");
	add_request_claim(&f, "three", "a", 3, NULL);
	expect_one(run(&f, RF_DRA_1_36, -1, "three"), "local fab-0 bound");
	expect_one(run(&f, RF_DRA_1_37, -1, "three"), "local fab-0 bound");
	/* 1.35: the binding pools in either order, slice-2 before slice-1 */
	expect_outcomes(run(&f, RF_DRA_1_35, -1, "three"),
			(const char *[]){ "local fab-0 plain", "local plain bound", NULL });
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_multi_allocatable_not_reused_in_request)
{
	/* 1.35 (experimental) rescans from the start for slot 2 and may take the shared device
	 * again; 1.36 scans after slot 1's position (D362 allocator_incubating.go:888-905,
	 * 1149-1158), so a request's devices are distinct */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	const char *devs = "[{\"name\":\"nic-0\",\"allowMultipleAllocations\":true,\"capacity\":"
			   "{\"bandwidth\":{\"value\":\"400G\",\"requestPolicy\":{\"default\":"
			   "\"100G\"}}}},{\"name\":\"nic-1\",\"allowMultipleAllocations\":true,"
			   "\"capacity\":{\"bandwidth\":{\"value\":\"400G\",\"requestPolicy\":{"
			   "\"default\":\"100G\"}}}}]";
	add_slice(&f, "s", "a.example", "n1", 1, devs, "");
	add_request_claim(&f, "two", "a", 2, NULL);
	expect_one(run(&f, RF_DRA_1_35, -1, "two"), "nic-0 nic-0");
	expect_one(run(&f, RF_DRA_1_36, -1, "two"), "nic-0 nic-1");
	expect_one(run(&f, RF_DRA_1_37, -1, "two"), "nic-0 nic-1");
	fixture_release(&f);
}
END_TEST

/* A validRange with fractional bounds: 1.36 rounds in whole units (Quantity.Value(), rounded up:
 * D362 consumable_capacity.go:114-134), so 1.2 against min 0.5 and step 0.5 becomes 1 + 1 = 2;
 * 1.37 rounds in milli-units (DRAFractionalCapacityRange, #140161): 1.5. With 1.5 of 3 held by
 * an allocated share, 1.36 finds no room, 1.37 fills the device; railfit's 1.35 rules round
 * exactly as they did. */
START_TEST(test_137_fractional_capacity_range)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"fr\",\"allowMultipleAllocations\":true,\"capacity\":{\"bw\":{"
		  "\"value\":\"3\",\"requestPolicy\":{\"validRange\":{\"min\":\"500m\","
		  "\"step\":\"500m\"}}}}}]",
		  "");
	fixture_add_json(&f, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"sh\","
			     "\"namespace\":\"ml\",\"uid\":\"sh\"},\"spec\":{\"devices\":{"
			     "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"
			     "\"a\"}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
			     "\"request\":\"r\",\"driver\":\"a.example\",\"pool\":\"n1\","
			     "\"device\":\"fr\",\"shareID\":\"0b6a8f9e-3\","
			     "\"consumedCapacity\":{\"bw\":\"1500m\"}}]}}}}");
	fixture_add_claim(
		&f, "ml", "want",
		"{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
		"\"deviceClassName\":\"a\",\"capacity\":{\"requests\":{\"bw\":\"1.2\"}}}}]}}",
		NULL, NULL);
	fixture_add_claim(
		&f, "ml", "small",
		"{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
		"\"deviceClassName\":\"a\",\"capacity\":{\"requests\":{\"bw\":\"200m\"}}}}]}}",
		NULL, NULL);
	expect_status(run(&f, RF_DRA_1_36, 2, "want"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "want"), "fr");
	expect_one(run(&f, RF_DRA_1_35, -1, "want"), "fr");
	/* below min: min itself (0.5), in every version */
	expect_one(run(&f, RF_DRA_1_36, 2, "small"), "fr");
	expect_one(run(&f, RF_DRA_1_37, -1, "small"), "fr");
	fixture_release(&f);
}
END_TEST

/* nodeAllocatableResourceMappings (KEP-5517, alpha) is not read by the allocator (no reference in
 * D362 or DM structured/internal/): a device carrying it is picked like any other. */
START_TEST(test_136_node_allocatable_mappings_do_not_change_the_pick)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"cpu0\",\"capacity\":{\"cores\":{\"value\":\"8\"}},"
		  "\"nodeAllocatableResourceMappings\":{\"cpu\":{\"capacityKey\":\"cores\","
		  "\"allocationMultiplier\":\"1\"}}},{\"name\":\"cpu1\"}]",
		  "");
	add_request_claim(&f, "one", "a", 1, NULL);
	expect_one(run(&f, RF_DRA_1_36, 2, "one"), "cpu0");
	expect_one(run(&f, RF_DRA_1_37, -1, "one"), "cpu0");
	fixture_release(&f);
}
END_TEST

static const char *const COLORS =
	"[{\"name\":\"c0\",\"attributes\":{\"color\":{\"string\":\"red\"}}},"
	"{\"name\":\"c1\",\"attributes\":{\"color\":{\"string\":\"blue\"}}},"
	"{\"name\":\"c2\",\"attributes\":{\"color\":{\"string\":\"red\"}}},"
	"{\"name\":\"c3\",\"attributes\":{\"color\":{\"string\":\"green\"}}}]";

START_TEST(test_136_distinct_attribute_by_version)
{
	/* count 3 with distinctAttribute color: up to 1.36 the constraint keeps one value per
	 * request (D362 incubating/constraint.go:40-81), so only the latest device is compared and
	 * red, blue, red passes; 1.37 (#140600) compares all: red, blue, green */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1, COLORS, "");
	add_request_claim(&f, "three", "a", 3,
			  ",\"constraints\":[{\"distinctAttribute\":\"a.example/color\"}]");
	expect_one(run(&f, RF_DRA_1_35, -1, "three"), "c0 c1 c2");
	expect_one(run(&f, RF_DRA_1_36, 2, "three"), "c0 c1 c2");
	expect_one(run(&f, RF_DRA_1_37, -1, "three"), "c0 c1 c3");
	fixture_release(&f);
}
END_TEST

/* A pool "n1" of driver drv with counter set "mem" of `total` and devices consuming `each`. */
static void
add_counter_pool(struct fixture *f, const char *slice, const char *drv, const char *prefix, int n,
		 int total, int each, const char *taint_dev)
{
	char devs[4096];
	size_t off = 0;
	off += (size_t)snprintf(devs + off, sizeof(devs) - off, "[");
	for (int i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		bool taint = taint_dev && strcmp(taint_dev, name) == 0;
		off += (size_t)snprintf(
			devs + off, sizeof(devs) - off,
			"%s{\"name\":\"%s\",\"consumesCounters\":[{\"counterSet\":\"mem\","
			"\"counters\":{\"c\":{\"value\":\"%d\"}}}]%s}",
			i ? "," : "", name, each,
			taint ? ",\"taints\":[{\"key\":\"bad\",\"effect\":\"NoSchedule\"}]" : "");
	}
	snprintf(devs + off, sizeof(devs) - off, "]");
	char extra[256];
	snprintf(extra, sizeof(extra),
		 ",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"%d\"}}}]",
		 total);
	add_slice(f, slice, drv, "n1", 1, devs, extra);
}

/* The per-request entry is also dropped wholesale when any device of the request is given back
 * (D362 incubating/constraint.go:76-85): r takes c0 red, c1 blue, c2 green; s needs c2, so c2
 * goes back, and with it the request's only entry, so c3 (blue, as c1) is compared with nothing
 * and taken: r = c0 c1 c3, s = c2. 1.37 compares every device and finds no third color. */
START_TEST(test_136_distinct_entry_dropped_on_give_back)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"c0\",\"attributes\":{\"color\":{\"string\":\"red\"}}},"
		  "{\"name\":\"c1\",\"attributes\":{\"color\":{\"string\":\"blue\"}}},"
		  "{\"name\":\"c2\",\"attributes\":{\"color\":{\"string\":\"green\"}}},"
		  "{\"name\":\"c3\",\"attributes\":{\"color\":{\"string\":\"blue\"}}}]",
		  "");
	fixture_add_claim(&f, "ml", "rs",
			  "{\"devices\":{\"requests\":["
			  "{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"a\",\"count\":3}},"
			  "{\"name\":\"s\",\"exactly\":{\"deviceClassName\":\"a\",\"selectors\":[{"
			  "\"cel\":{\"expression\":\"device.attributes['a.example'].color == "
			  "'green'\"}}]}}],"
			  "\"constraints\":[{\"distinctAttribute\":\"a.example/color\","
			  "\"requests\":[\"r\"]}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_36, 2, "rs"), "c0 c1 c3 c2");
	expect_status(run(&f, RF_DRA_1_37, -1, "rs"), RF_SEARCH_INFEASIBLE);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_counter_leak_fixed_in_137)
{
	/* I-LEAK (D362 allocator_incubating.go:1335-1384): d0 reserves one of the set's 2 units,
	 * then fails its taint and keeps the reservation, so d1 takes the last unit and d2 finds
	 * none up to 1.36; 1.37 (#140431) releases it and takes d1 + d2 */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_counter_pool(&f, "s", "a.example", "d", 3, 2, 1, "d0");
	add_request_claim(&f, "two", "a", 2, NULL);
	expect_status(run(&f, RF_DRA_1_35, -1, "two"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_36, 2, "two"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "two"), "d1 d2");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_counters_keyed_by_pool_name)
{
	/* Two drivers both name their pool after the node, each with a counter set "mem" of 1:
	 * 1.36 keys available and consumed counters by pool name (D362 :1495, :1552), so a0's
	 * unit and b0's unit come out of one set and the claim cannot be allocated; 1.35 and 1.37
	 * (#140435) keep the pools apart */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_counter_pool(&f, "sa", "a.example", "a", 1, 1, 1, NULL);
	add_counter_pool(&f, "sb", "b.example", "b", 1, 1, 1, NULL);
	fixture_add_claim(&f, "ml", "ab",
			  "{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{"
			  "\"deviceClassName\":\"a\"}},{\"name\":\"b\",\"exactly\":{"
			  "\"deviceClassName\":\"b\"}}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_35, -1, "ab"), "a0 b0");
	expect_status(run(&f, RF_DRA_1_36, 2, "ab"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "ab"), "a0 b0");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_overdrawn_counter_set_blocks_pool)
{
	/* 1.36 checks every counter set of the pool after adding the candidate (D362
	 * :1585-1592): the allocated x0 overdraws set "other" (2 of 1), so d0, which consumes only
	 * "mem", is refused; 1.35 looks only at the sets the device consumes */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"x0\",\"consumesCounters\":[{\"counterSet\":\"other\",\"counters\":"
		  "{\"c\":{\"value\":\"2\"}}}]},{\"name\":\"d0\",\"consumesCounters\":[{"
		  "\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]}]",
		  ",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"4\"}}},"
		  "{\"name\":\"other\",\"counters\":{\"c\":{\"value\":\"1\"}}}]");
	const char *held[] = { "a.example:x0", NULL };
	fixture_add_claim(&f, "ml", "held",
			  "{\"devices\":{\"requests\":[{\"name\":\"gpu\","
			  "\"exactly\":{\"deviceClassName\":\"a\"}}]}}",
			  "n1", held);
	add_request_claim(&f, "one", "a", 1, NULL);
	expect_one(run(&f, RF_DRA_1_35, -1, "one"), "d0");
	expect_status(run(&f, RF_DRA_1_36, -1, "one"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_37, -1, "one"), RF_SEARCH_INFEASIBLE);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_shared_device_counters_from_1362)
{
	/* A device allocated as shared (shareID) consumes its counters from 1.36.2 on (D362
	 * allocatedstate.go:63-85, commit 3caec45); 1.36.0-1.36.1 forget them and over-allocate */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(
		&f, "s", "a.example", "n1", 1,
		"[{\"name\":\"shared\",\"allowMultipleAllocations\":true,\"consumesCounters\":[{"
		"\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]},{\"name\":"
		"\"solo\",\"consumesCounters\":[{\"counterSet\":\"mem\",\"counters\":{\"c\":{"
		"\"value\":\"1\"}}}]}]",
		",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]");
	fixture_add_json(&f, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"sh\","
			     "\"namespace\":\"ml\",\"uid\":\"sh\"},\"spec\":{\"devices\":{"
			     "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"
			     "\"a\"}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
			     "\"request\":\"r\",\"driver\":\"a.example\",\"pool\":\"n1\","
			     "\"device\":\"shared\",\"shareID\":\"0b6a8f9e-1\"}]}}}}");
	fixture_add_claim(&f, "ml", "want",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"a\",\"selectors\":[{\"cel\":{\"expression\":"
			  "\"device.allowMultipleAllocations == false\"}}]}}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_36, 1, "want"), "solo");
	expect_status(run(&f, RF_DRA_1_36, 2, "want"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_36, -1, "want"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_37, -1, "want"), RF_SEARCH_INFEASIBLE);
	fixture_release(&f);
}
END_TEST

/* A shared allocation recorded by its shareID alone (the device has no capacities, so the
 * scheduler wrote no consumedCapacity): from 1.36.2 its counters are subtracted (3caec45), but up
 * to 1.36 only a consumedCapacity entry lets a further share skip the counter check (D362
 * allocator_incubating.go:1340, :1603-1606), so the new share is charged again and refused;
 * 1.36.0-1.36.1 charge it once; 1.37 skips the check (#140437). With capacities (and
 * consumedCapacity) every version from 1.36 skips it. */
START_TEST(test_137_persisted_share_skips_counters)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"shared\",\"allowMultipleAllocations\":true,\"consumesCounters\":[{"
		  "\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]},"
		  "{\"name\":\"shcap\",\"allowMultipleAllocations\":true,\"capacity\":{\"bw\":{"
		  "\"value\":\"10\"}},\"consumesCounters\":[{\"counterSet\":\"mem2\",\"counters\":{"
		  "\"c\":{\"value\":\"1\"}}}]}]",
		  ",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}},"
		  "{\"name\":\"mem2\",\"counters\":{\"c\":{\"value\":\"1\"}}}]");
	fixture_add_json(&f, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"sh\","
			     "\"namespace\":\"ml\",\"uid\":\"sh\"},\"spec\":{\"devices\":{"
			     "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":"
			     "\"a\"}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
			     "\"request\":\"r\",\"driver\":\"a.example\",\"pool\":\"n1\","
			     "\"device\":\"shared\",\"shareID\":\"0b6a8f9e-1\"},{"
			     "\"request\":\"r\",\"driver\":\"a.example\",\"pool\":\"n1\","
			     "\"device\":\"shcap\",\"shareID\":\"0b6a8f9e-2\","
			     "\"consumedCapacity\":{\"bw\":\"10\"}}]}}}}");
	fixture_add_claim(&f, "ml", "again",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"a\",\"selectors\":[{\"cel\":{\"expression\":"
			  "\"device.attributes['a.example'].size() == 0 && "
			  "!('bw' in device.capacity['a.example'])\"}}]}}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_36, 1, "again"), "shared");
	expect_status(run(&f, RF_DRA_1_36, 2, "again"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "again"), "shared");
	/* shcap (consumedCapacity 10 of 10 in use): the counter check is skipped, the capacity
	 * refuses it; a request for none of it gets it in 1.36.2 and 1.37 alike */
	fixture_add_claim(
		&f, "ml", "cap",
		"{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
		"\"deviceClassName\":\"a\",\"capacity\":{\"requests\":{\"bw\":\"0\"}}}}]}}",
		NULL, NULL);
	expect_one(run(&f, RF_DRA_1_36, 2, "cap"), "shcap");
	expect_one(run(&f, RF_DRA_1_37, -1, "cap"), "shcap");
	fixture_release(&f);
}
END_TEST

/* The success-undo leak (D362 allocator_incubating.go:1439-1458): giving back a
 * multi-allocatable device releases its counters only for other devices. r1 takes m (1 of the 1
 * unit of "mem"), r2's only device y has g=2 where m has g=1, so r1 gives m back: 1.36 keeps
 * m's unit reserved and x, the next candidate for r1, finds none; 1.37 (#140431) releases it:
 * r1 = x, r2 = y. (y consumes no counters, so no rejected candidate leaks here.) */
START_TEST(test_136_success_undo_counter_leak)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(
		&f, "s", "a.example", "n1", 1,
		"[{\"name\":\"m\",\"allowMultipleAllocations\":true,\"attributes\":{\"g\":{"
		"\"int\":1}},\"consumesCounters\":[{\"counterSet\":\"mem\",\"counters\":{\"c\":"
		"{\"value\":\"1\"}}}]},"
		"{\"name\":\"x\",\"attributes\":{\"g\":{\"int\":2}},\"consumesCounters\":[{"
		"\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]},"
		"{\"name\":\"y\",\"attributes\":{\"g\":{\"int\":2},\"kind\":{\"string\":\"y\"}}}]",
		",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]");
	fixture_add_claim(
		&f, "ml", "pair",
		"{\"devices\":{\"requests\":["
		"{\"name\":\"r1\",\"exactly\":{\"deviceClassName\":\"a\",\"selectors\":[{"
		"\"cel\":{\"expression\":\"!('kind' in device.attributes['a.example'])\"}}]}},"
		"{\"name\":\"r2\",\"exactly\":{\"deviceClassName\":\"a\",\"selectors\":[{"
		"\"cel\":{\"expression\":\"'kind' in device.attributes['a.example']\"}}]}}],"
		"\"constraints\":[{\"matchAttribute\":\"a.example/g\"}]}}",
		NULL, NULL);
	expect_status(run(&f, RF_DRA_1_36, 2, "pair"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "pair"), "x y");
	fixture_release(&f);
}
END_TEST

/* A request that cannot succeed still leaks: firstAvailable subrequest "b" has one candidate,
 * b1, tainted; 1.36 reserves b1's unit of "mem" (2) before the taint check refuses it and keeps
 * it (I-LEAK), so subrequest "a" finds room for a1 only. railfit must not skip "b" for having
 * too few candidates. 1.37 (#140431) takes a1 a2. */
START_TEST(test_136_leak_in_a_request_without_candidates)
{
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(
		&f, "s", "a.example", "n1", 1,
		"[{\"name\":\"b1\",\"attributes\":{\"kind\":{\"string\":\"b\"}},\"taints\":[{"
		"\"key\":\"k\",\"effect\":\"NoSchedule\"}],\"consumesCounters\":[{\"counterSet\":"
		"\"mem\",\"counters\":{\"c\":{\"value\":\"1\"}}}]},"
		"{\"name\":\"a1\",\"attributes\":{\"kind\":{\"string\":\"a\"}},"
		"\"consumesCounters\":[{\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":"
		"\"1\"}}}]},"
		"{\"name\":\"a2\",\"attributes\":{\"kind\":{\"string\":\"a\"}},"
		"\"consumesCounters\":[{\"counterSet\":\"mem\",\"counters\":{\"c\":{\"value\":"
		"\"1\"}}}]}]",
		",\"sharedCounters\":[{\"name\":\"mem\",\"counters\":{\"c\":{\"value\":\"2\"}}}]");
	fixture_add_claim(
		&f, "ml", "fa",
		"{\"devices\":{\"requests\":[{\"name\":\"r\",\"firstAvailable\":["
		"{\"name\":\"b\",\"deviceClassName\":\"a\",\"count\":1,\"selectors\":[{\"cel\":{"
		"\"expression\":\"device.attributes['a.example'].kind == 'b'\"}}]},"
		"{\"name\":\"a\",\"deviceClassName\":\"a\",\"count\":2,\"selectors\":[{\"cel\":{"
		"\"expression\":\"device.attributes['a.example'].kind == 'a'\"}}]}]}]}}",
		NULL, NULL);
	expect_status(run(&f, RF_DRA_1_36, 2, "fa"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_37, -1, "fa"), "a1 a2");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_all_mode_counters_crash_before_1362)
{
	/* allocationMode All with counter-consuming devices: kube-scheduler 1.36.0-1.36.1 panics
	 * (#138885, fixed by f1eff2d in v0.36.2): no placement, and the reason says so */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_counter_pool(&f, "s", "a.example", "d", 2, 4, 1, NULL);
	add_request_claim(&f, "all", "a", 0, NULL);
	struct rf_search_result *r = run(&f, RF_DRA_1_36, 0, "all");
	ck_assert_ptr_nonnull(strstr(r->error, "crashes kube-scheduler 1.36.0"));
	expect_status(r, RF_SEARCH_SCHEDULER_CRASH);
	expect_status(run(&f, RF_DRA_1_36, 1, "all"), RF_SEARCH_SCHEDULER_CRASH);
	expect_one(run(&f, RF_DRA_1_36, 2, "all"), "d0 d1");
	expect_one(run(&f, RF_DRA_1_37, -1, "all"), "d0 d1");
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_all_mode_per_subrequest)
{
	/* firstAvailable: subrequest "none" matches nothing, "every" asks for All of class b;
	 * from 1.36 (e0e0199) subrequest 2's device list is its own */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "sa", "a.example", "pa", 1, "[" DEV("a0") "]", "");
	add_slice(&f, "sb", "b.example", "pb", 1, "[" DEV("b0") "," DEV("b1") "]", "");
	fixture_add_claim(&f, "ml", "fa",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"firstAvailable\":["
			  "{\"name\":\"none\",\"deviceClassName\":\"a\",\"count\":2},"
			  "{\"name\":\"every\",\"deviceClassName\":\"b\",\"allocationMode\":"
			  "\"All\"}]}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_36, 2, "fa"), "b0 b1");
	expect_one(run(&f, RF_DRA_1_37, -1, "fa"), "b0 b1");
	fixture_release(&f);
}
END_TEST

/* The node's evaluation of a pod using claim ml/<claim> (explain's view). */
static void
evaluate(struct fixture *f, const char *claim, struct rf_node_eval *e)
{
	json_t *pod = fixture_pod("p", claim, NULL);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f->c, pod, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_KNOWN);
	ck_assert_int_eq(rf_evaluate_node(f->c, &d, "n1", true, e), 0);
	rf_demand_release(&d);
	json_decref(pod);
}

START_TEST(test_136_explain_deterministic)
{
	/* explain: 1.35 says the pick is not deterministic (three pools, three outcomes); 1.36
	 * scans once and says deterministic */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s-b", "b.example", "pool-0", 1, "[" DEV("b0") "]", "");
	add_slice(&f, "s-a1", "a.example", "pool-y", 1, "[" DEV("ay") "]", "");
	add_request_claim(&f, "one", "any", 1, NULL);
	free(run(&f, RF_DRA_1_35, -1, "one"));
	evaluate(&f, "one", e);
	ck_assert(!e->deterministic);
	free(run(&f, RF_DRA_1_36, -1, "one"));
	evaluate(&f, "one", e);
	ck_assert(e->deterministic);
	ck_assert_uint_eq(e->n_orders, 1);
	ck_assert_str_eq(e->predicted.picks[0].dev->name, "ay");
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_explain_scheduler_crash)
{
	/* the crash of 1.36.0-1.36.1 fails the node with a warning naming the fix */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	add_classes(&f);
	add_counter_pool(&f, "s", "a.example", "d", 2, 4, 1, NULL);
	add_request_claim(&f, "all", "a", 0, NULL);
	free(run(&f, RF_DRA_1_36, 1, "all"));
	evaluate(&f, "all", e);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	ck_assert(!e->has_predicted);
	ck_assert_msg(strstr(e->reasons[0], "warning:") && strstr(e->reasons[0], "1.36.1") &&
			      strstr(e->reasons[0], "upgrade to 1.36.2"),
		      "%s", e->reasons[0]);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_137_device_taint_rules)
{
	/* DeviceTaintRules add their taint to the devices their selector names (driver, pool,
	 * device; absent = any), as kube-scheduler's slice tracker does (D alpha.2
	 * resourceslice/tracker applyPatches); a NoSchedule taint keeps untolerating requests
	 * off the device, None does nothing, a rule the model cannot read is a warning */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1, "[" DEV("d0") "," DEV("d1") "," DEV("d2") "]", "");
	fixture_add_json(&f, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"drain-d0\"},"
			     "\"spec\":{\"deviceSelector\":{\"driver\":\"a.example\",\"pool\":"
			     "\"n1\",\"device\":\"d0\"},\"taint\":{\"key\":\"maint\",\"value\":"
			     "\"fw\",\"effect\":\"NoSchedule\"}}}");
	fixture_add_json(&f, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"other\"},"
			     "\"spec\":{\"deviceSelector\":{\"driver\":\"b.example\"},\"taint\":{"
			     "\"key\":\"x\",\"effect\":\"NoExecute\"}}}");
	fixture_add_json(&f, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"soft\"},"
			     "\"spec\":{\"taint\":{\"key\":\"note\",\"effect\":\"None\"}}}");
	fixture_add_json(&f, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"broken\"},"
			     "\"spec\":{\"taint\":{\"effect\":\"NoSchedule\"}}}");
	add_request_claim(&f, "one", "a", 1, NULL);
	add_request_claim(&f, "three", "a", 3, NULL);
	fixture_add_claim(&f, "ml", "tol",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"a\",\"tolerations\":[{\"key\":\"maint\","
			  "\"operator\":\"Exists\"}]}}]}}",
			  NULL, NULL);
	expect_one(run(&f, RF_DRA_1_37, -1, "one"), "d1");
	expect_one(run(&f, RF_DRA_1_37, -1, "tol"), "d0");
	expect_status(run(&f, RF_DRA_1_37, -1, "three"), RF_SEARCH_INFEASIBLE);
	/* the device carries its slice's taints and the rules', each with its source */
	const struct rf_node *n = rf_cluster_node(f.c, "n1");
	ck_assert_uint_eq(n->devices[0]->n_taints, 2);
	ck_assert_str_eq(n->devices[0]->taints[0].rule, "drain-d0");
	ck_assert_str_eq(n->devices[0]->taints[1].rule, "soft");
	ck_assert_uint_eq(n->devices[1]->n_taints, 1);
	bool warned = false;
	for (size_t i = 0; i < rf_cluster_n_warnings(f.c); i++)
		warned = warned || strstr(rf_cluster_warning(f.c, i), "devicetaintrule broken");
	ck_assert(warned);
	/* the failure message names the taint and the rule */
	evaluate(&f, "three", e);
	ck_assert_int_ne(e->verdict, RF_VERDICT_PASS);
	ck_assert_msg(strstr(e->reasons[0], "[d0: maint=fw:NoSchedule from DeviceTaintRule "
					    "drain-d0]"),
		      "%s", e->reasons[0]);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_list_attributes_by_version)
{
	/* ids is a list-typed attribute (KEP-5491). 1.36 (DRAListTypeAttributes off) converts
	 * every attribute before evaluating a selector: a device carrying a list is a CEL error
	 * that fails the pod's attempt, whether the selector reads it or not; 1.37 converts lists
	 * always, and includes() works. Without selectors nothing is evaluated. matchAttribute on a
	 * list: the first device sets the value from 1.36 on, later ones never match (the default
	 * allocator compares scalars); railfit's 1.35 rules refuse it at once, as before. */
	struct fixture f;
	fixture_init(&f);
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"d0\",\"attributes\":{\"ids\":{\"ints\":[1,2]},\"x\":{\"int\":1}}},"
		  "{\"name\":\"d1\",\"attributes\":{\"ids\":{\"ints\":[3]},\"x\":{\"int\":1}}}]",
		  "");
	add_request_claim(&f, "cls", "a", 1, NULL);
	fixture_add_claim(&f, "ml", "incl",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"any\",\"selectors\":[{\"cel\":{\"expression\":"
			  "\"device.attributes['a.example'].ids.includes(3)\"}}]}}]}}",
			  NULL, NULL);
	add_request_claim(&f, "match1", "any", 1,
			  ",\"constraints\":[{\"matchAttribute\":\"a.example/ids\"}]");
	add_request_claim(&f, "match2", "any", 2,
			  ",\"constraints\":[{\"matchAttribute\":\"a.example/ids\"}]");
	struct rf_search_result *r = run(&f, RF_DRA_1_36, 2, "cls");
	ck_assert_msg(strstr(r->error, "a.example/ids") &&
			      strstr(r->error, "DRAListTypeAttributes"),
		      "%s", r->error);
	expect_status(r, RF_SEARCH_CEL_ERROR);
	expect_status(run(&f, RF_DRA_1_36, 2, "incl"), RF_SEARCH_CEL_ERROR);
	expect_one(run(&f, RF_DRA_1_37, -1, "cls"), "d0");
	expect_one(run(&f, RF_DRA_1_37, -1, "incl"), "d1");
	expect_one(run(&f, RF_DRA_1_35, -1, "cls"), "d0"); /* lazy, as before */
	expect_status(run(&f, RF_DRA_1_35, -1, "incl"), RF_SEARCH_CEL_ERROR);
	expect_status(run(&f, RF_DRA_1_35, -1, "match1"), RF_SEARCH_INFEASIBLE);
	expect_one(run(&f, RF_DRA_1_36, 2, "match1"), "d0");
	expect_one(run(&f, RF_DRA_1_37, -1, "match1"), "d0");
	expect_status(run(&f, RF_DRA_1_37, -1, "match2"), RF_SEARCH_INFEASIBLE);
	fixture_release(&f);
}
END_TEST

/* kube.featureGates.DRAListTypeAttributes (reference/dra-allocator-1.36.md 1.2, 3.9): 1.36
 * passes the gate to CEL only (lists readable, no error), AllocatorFeatures() gets it from 1.37
 * (#139332): then matchAttribute and distinctAttribute compare sets (D362
 * experimental/allocator_experimental.go:865-963, experimental/constraint.go:96-125, unchanged
 * in DM). Without the sets a list matches nothing after the first device, and distinct refuses
 * a list against any value (D362 incubating/constraint.go:125-130). */
START_TEST(test_136_list_attributes_feature_gate)
{
	struct fixture f;
	fixture_init(&f);
	f.cfg.kube.gates.list_type_attributes = true;
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"d0\",\"attributes\":{\"ids\":{\"ints\":[1,2]}}},"
		  "{\"name\":\"d1\",\"attributes\":{\"ids\":{\"ints\":[2,3]}}},"
		  "{\"name\":\"d2\",\"attributes\":{\"ids\":{\"ints\":[3,4]}}},"
		  "{\"name\":\"d3\",\"attributes\":{\"ids\":{\"ints\":[1]}}},"
		  "{\"name\":\"d4\",\"attributes\":{\"ids\":{\"ints\":[5]}}}]",
		  "");
	add_request_claim(&f, "cls", "a", 1, NULL);
	fixture_add_claim(&f, "ml", "incl",
			  "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
			  "\"deviceClassName\":\"any\",\"selectors\":[{\"cel\":{\"expression\":"
			  "\"device.attributes['a.example'].ids.includes(4)\"}}]}}]}}",
			  NULL, NULL);
	add_request_claim(&f, "match2", "any", 2,
			  ",\"constraints\":[{\"matchAttribute\":\"a.example/ids\"}]");
	add_request_claim(&f, "distinct2", "any", 2,
			  ",\"constraints\":[{\"distinctAttribute\":\"a.example/ids\"}]");
	add_request_claim(&f, "distinct3", "any", 3,
			  ",\"constraints\":[{\"distinctAttribute\":\"a.example/ids\"}]");
	/* 1.36 with the gate: CEL reads the lists, the constraints stay scalar */
	expect_one(run(&f, RF_DRA_1_36, 2, "cls"), "d0");
	expect_one(run(&f, RF_DRA_1_36, 2, "incl"), "d2");
	expect_status(run(&f, RF_DRA_1_36, 2, "match2"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_36, 2, "distinct2"), RF_SEARCH_INFEASIBLE);
	/* 1.37 with the gate: sets; d1 shares 2 with d0, d2 shares nothing */
	expect_one(run(&f, RF_DRA_1_37, -1, "match2"), "d0 d1");
	expect_one(run(&f, RF_DRA_1_37, -1, "distinct2"), "d0 d2");
	/* distinct over three devices: 1.37 compares every device (#140600), so d3 (1, as d0)
	 * is refused; the library at v0.36.2 keeps the latest device of the request only */
	expect_one(run(&f, RF_DRA_1_37, -1, "distinct3"), "d0 d2 d4");
	f.cfg.kube.dra_library_list_feature = true;
	expect_one(run(&f, RF_DRA_1_36, 2, "distinct3"), "d0 d2 d3");
	expect_one(run(&f, RF_DRA_1_36, 2, "match2"), "d0 d1");
	f.cfg.kube.dra_library_list_feature = false;
	/* 1.37 without the gate: scalar constraints again */
	f.cfg.kube.gates.list_type_attributes = false;
	expect_status(run(&f, RF_DRA_1_37, -1, "match2"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_37, -1, "distinct2"), RF_SEARCH_INFEASIBLE);
	expect_status(run(&f, RF_DRA_1_36, 2, "cls"), RF_SEARCH_CEL_ERROR);
	fixture_release(&f);
}
END_TEST

/* matchAttribute with sets keeps a running intersection that remove() does not widen again
 * (D362 experimental/allocator_experimental.go:965-973; the fix #140326 was closed): r1 takes
 * d0 {1,2} and d1 {1} (intersection {1}); r2 finds nothing with 1; d1 goes but the
 * intersection stays {1}, so d2 {2} is refused although d0 and d2 share 2. The allocator ends
 * with r1 = d2 d3, r2 = d0; the order-free meaning would give r1 = d0 d2, r2 = d3. */
START_TEST(test_137_list_match_stale_intersection)
{
	struct fixture f;
	fixture_init(&f);
	f.cfg.kube.gates.list_type_attributes = true;
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"d0\",\"attributes\":{\"ids\":{\"ints\":[1,2]}}},"
		  "{\"name\":\"d1\",\"attributes\":{\"ids\":{\"ints\":[1]}}},"
		  "{\"name\":\"d2\",\"attributes\":{\"ids\":{\"ints\":[2]}}},"
		  "{\"name\":\"d3\",\"attributes\":{\"ids\":{\"int\":2}}}]",
		  "");
	fixture_add_claim(
		&f, "ml", "two",
		"{\"devices\":{\"requests\":["
		"{\"name\":\"r1\",\"exactly\":{\"deviceClassName\":\"any\",\"count\":2}},"
		"{\"name\":\"r2\",\"exactly\":{\"deviceClassName\":\"any\",\"count\":1}}],"
		"\"constraints\":[{\"matchAttribute\":\"a.example/ids\"}]}}",
		NULL, NULL);
	expect_one(run(&f, RF_DRA_1_37, -1, "two"), "d2 d3 d0");
	fixture_release(&f);

	/* A later constraint refusing the device undoes the earlier ones (remove), which narrows
	 * the intersection all the same: e1 {1} passes matchAttribute, then distinctAttribute
	 * refuses it (red, as e0), so the intersection stays {1} and e2 {2} is refused; e3 {1,3}
	 * is taken. Order-free: e0 e2. */
	fixture_init(&f);
	f.cfg.kube.gates.list_type_attributes = true;
	add_classes(&f);
	add_slice(&f, "s", "a.example", "n1", 1,
		  "[{\"name\":\"e0\",\"attributes\":{\"ids\":{\"ints\":[1,2]},\"color\":{"
		  "\"string\":\"red\"}}},"
		  "{\"name\":\"e1\",\"attributes\":{\"ids\":{\"ints\":[1]},\"color\":{"
		  "\"string\":\"red\"}}},"
		  "{\"name\":\"e2\",\"attributes\":{\"ids\":{\"ints\":[2]},\"color\":{"
		  "\"string\":\"blue\"}}},"
		  "{\"name\":\"e3\",\"attributes\":{\"ids\":{\"ints\":[1,3]},\"color\":{"
		  "\"string\":\"green\"}}}]",
		  "");
	add_request_claim(&f, "pair", "any", 2,
			  ",\"constraints\":[{\"matchAttribute\":\"a.example/ids\"},"
			  "{\"distinctAttribute\":\"a.example/color\"}]");
	expect_one(run(&f, RF_DRA_1_37, -1, "pair"), "e0 e3");
	fixture_release(&f);
}
END_TEST

/* ---- extended resources backed by DRA (1.36+) ---- */

static json_t *
ext_pod(const char *name, const char *containers, const char *claims)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"u-%s\"},"
		 "\"spec\":{%s\"resourceClaims\":[%s]}}",
		 name, name, containers, claims ? claims : "");
	json_t *p = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void
ext_eval(struct fixture *f, enum rf_dra_version v, const json_t *pod, const char *node,
	 struct rf_demand *d, struct rf_node_eval *e)
{
	f->cfg.kube.dra_version = v;
	f->cfg.kube.dra_patch = -1;
	fixture_build(f);
	ck_assert_int_eq(rf_demand_resolve(f->c, pod, d), 0);
	if (d->kind == RF_DEMAND_KNOWN)
		ck_assert_int_eq(rf_evaluate_node(f->c, d, node, true, e), 0);
}

static void
expect_picks(const struct rf_node_eval *e, const char *want)
{
	char buf[512];
	size_t off = 0;
	buf[0] = 0;
	ck_assert_msg(e->has_predicted, "no prediction: %s", e->reasons[0]);
	for (size_t k = 0; k < e->predicted.n && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s:%s", k ? " " : "",
					e->predicted.picks[k].request,
					e->predicted.picks[k].dev->name);
	ck_assert_str_eq(buf, want);
}

START_TEST(test_136_extended_resource_pod)
{
	/* limits nvidia.com/gpu: 2 and the class gpu.nvidia.com naming it: from 1.36 a claim
	 * "<pod>-extended-resources" with request container-0-request-1 (memory sorts first),
	 * predicted like any claim; up to 1.35 (gate off) the pod is not railfit's business */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	struct rf_demand d;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	json_t *pod = ext_pod("p",
			      "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
			      "\"nvidia.com/gpu\":\"2\",\"memory\":\"1Gi\"}}}],",
			      NULL);
	ext_eval(&f, RF_DRA_1_35, pod, "n1", &d, e);
	ck_assert_int_eq(d.kind, RF_DEMAND_NONE);
	rf_demand_release(&d);
	ext_eval(&f, RF_DRA_1_36, pod, "n1", &d, e);
	ck_assert_int_eq(d.kind, RF_DEMAND_KNOWN);
	ck_assert_uint_eq(d.n_claims, 1);
	ck_assert_str_eq(d.claims[0]->name, "p-extended-resources");
	ck_assert_str_eq(d.ext_names[0], "nvidia.com/gpu");
	expect_picks(e, "container-0-request-1:gpu-0 container-0-request-1:gpu-1");
	ck_assert_int_eq(e->verdict, RF_VERDICT_PASS);
	rf_demand_release(&d);
	/* the implicit name of a class works too; zero and non-integer requests ask nothing */
	json_t *implicit = ext_pod(
		"q",
		"\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{"
		"\"deviceclass.resource.kubernetes.io/gpu.nvidia.com\":\"1\"}}}],"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":"
		"\"0\",\"example.com/foo\":\"1\"}}}],",
		NULL);
	ext_eval(&f, RF_DRA_1_37, implicit, "n1", &d, e);
	ck_assert_uint_eq(d.n_claims, 1);
	expect_picks(e, "container-0-request-0:gpu-0");
	rf_demand_release(&d);
	json_decref(implicit);
	json_decref(pod);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_extended_resource_after_claims_and_device_plugin)
{
	/* the synthetic claim comes after the pod's own claims (in the same search: the NIC
	 * claim's pick is made first); on a node whose allocatable has nvidia.com/gpu (a device
	 * plugin) the scheduler leaves the GPUs to the plugin and asks DRA only for the NIC */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	struct rf_demand d;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_hgx(&f, "n2");
	for (size_t i = 0; i < json_array_size(f.objs.nodes); i++) {
		json_t *n = json_array_get(f.objs.nodes, i);
		if (strcmp(json_string_value(
				   json_object_get(json_object_get(n, "metadata"), "name")),
			   "n2") == 0)
			json_object_set_new(json_object_get(n, "status"), "allocatable",
					    json_pack("{s:s}", "nvidia.com/gpu", "8"));
	}
	fixture_add_claim(&f, "ml", "nic",
			  "{\"devices\":{\"requests\":[{\"name\":\"nic\",\"exactly\":{"
			  "\"deviceClassName\":\"rdma-nic\"}}]}}",
			  NULL, NULL);
	json_t *pod = ext_pod("p",
			      "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
			      "\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"b\",\"resources\":{"
			      "\"requests\":{\"nvidia.com/gpu\":\"1\"}}}],",
			      "{\"name\":\"n\",\"resourceClaimName\":\"nic\"}");
	ext_eval(&f, RF_DRA_1_36, pod, "n1", &d, e);
	ck_assert_uint_eq(d.n_claims, 2);
	ck_assert_str_eq(d.claims[0]->name, "nic");
	expect_picks(e, "nic:pci-0000-18-00-0 container-0-request-0:gpu-0 "
			"container-1-request-0:gpu-1");
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "n2", true, e), 0);
	expect_picks(e, "nic:pci-0000-18-00-0");
	rf_demand_release(&d);
	json_decref(pod);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_136_extended_resource_newest_class_wins)
{
	/* two classes name nvidia.com/gpu: the newer one serves it (extended.DeviceClassMapping);
	 * here it selects NICs, so the pod gets a NIC */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	struct rf_demand d;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_json(&f, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"zz-newer\","
			     "\"creationTimestamp\":\"2030-01-01T00:00:00Z\"},\"spec\":{"
			     "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
			     "'dra.net'\"}}],\"extendedResourceName\":\"nvidia.com/gpu\"}}");
	json_t *pod = ext_pod("p",
			      "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
			      "\"nvidia.com/gpu\":\"1\"}}}],",
			      NULL);
	ext_eval(&f, RF_DRA_1_37, pod, "n1", &d, e);
	ck_assert_str_eq(d.claims[0]->requests[0].alts[0].class_name, "zz-newer");
	ck_assert_int_eq(e->predicted.picks[0].dev->kind, RF_DEV_NIC);
	rf_demand_release(&d);
	json_decref(pod);
	free(e);
	fixture_release(&f);
}
END_TEST

Suite *
predict136_suite(void)
{
	Suite *s = suite_create("predict136");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_136_pools_sorted_by_driver_then_name);
	tcase_add_test(tc, test_136_slices_sorted_by_name);
	tcase_add_test(tc, test_136_binding_pools_last_slices_not_demoted);
	tcase_add_test(tc, test_136_multi_allocatable_not_reused_in_request);
	tcase_add_test(tc, test_136_distinct_attribute_by_version);
	tcase_add_test(tc, test_136_counter_leak_fixed_in_137);
	tcase_add_test(tc, test_136_counters_keyed_by_pool_name);
	tcase_add_test(tc, test_136_overdrawn_counter_set_blocks_pool);
	tcase_add_test(tc, test_136_shared_device_counters_from_1362);
	tcase_add_test(tc, test_136_all_mode_counters_crash_before_1362);
	tcase_add_test(tc, test_136_all_mode_per_subrequest);
	tcase_add_test(tc, test_136_explain_deterministic);
	tcase_add_test(tc, test_136_explain_scheduler_crash);
	tcase_add_test(tc, test_137_device_taint_rules);
	tcase_add_test(tc, test_136_list_attributes_by_version);
	tcase_add_test(tc, test_136_list_attributes_feature_gate);
	tcase_add_test(tc, test_136_distinct_entry_dropped_on_give_back);
	tcase_add_test(tc, test_137_persisted_share_skips_counters);
	tcase_add_test(tc, test_136_success_undo_counter_leak);
	tcase_add_test(tc, test_136_leak_in_a_request_without_candidates);
	tcase_add_test(tc, test_137_fractional_capacity_range);
	tcase_add_test(tc, test_136_node_allocatable_mappings_do_not_change_the_pick);
	tcase_add_test(tc, test_137_list_match_stale_intersection);
	tcase_add_test(tc, test_136_extended_resource_pod);
	tcase_add_test(tc, test_136_extended_resource_after_claims_and_device_plugin);
	tcase_add_test(tc, test_136_extended_resource_newest_class_wins);
	suite_add_tcase(s, tc);
	return s;
}
