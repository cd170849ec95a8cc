/* Upstream's own allocator test suite as railfit's yardstick (issue 16). The table-driven cases
 * of k8s.io/dynamic-resource-allocation's structured/internal/allocatortesting, translated by
 * tools/upstream-allocator into test/data/upstream-allocator/<tag>/cases.json, are replayed on
 * the allocator mirror (rf_predict) with the kube.draVersion of their tag.
 *
 * Per case: the ResourceSlices, DeviceClasses and the Node as objects; the claims to allocate in
 * namespace "default"; upstream's allocated devices (and consumed capacity) as one allocated
 * claim. Compared: success or failure, and on success every device of every claim (request,
 * driver, pool, device, adminAccess), in upstream's order where its test asserts one, for every
 * scan order railfit considers possible. An expected error must be a failure in railfit too.
 * Not compared: node selectors, device configuration, tolerations, binding conditions and the
 * consumed capacity copied into results, and upstream's count of allocateOne calls.
 *
 * A case is "not applicable" when its objects carry a field of a feature the case turns off:
 * the API server drops such fields with the feature gate off, and railfit follows every field it
 * is served (DESIGN 7.1), so the case describes objects railfit never sees. List-typed
 * attributes are the exception: railfit models that switch (kube.featureGates; the case's
 * ListTypeAttributes is the library's own feature, set on the configuration). Known failures are
 * listed with their reason in test/data/upstream-allocator/known-failures.txt; a listed case that
 * passes fails the test too, so that the list stays true. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/predict.h"
#include "config/config.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *upstream_suite(void);

struct tag {
	const char *tag;
	const char *dra; /* kube.draVersion of that minor */
};

static const struct tag tags[] = {
	{ "v0.34.9", "1.34" },
	{ "v0.35.6", "1.35" },
	{ "v0.36.2", "1.36" },
};

#define N_TAGS (sizeof(tags) / sizeof(tags[0]))

static json_t *
load(const char *tag, const char *file)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "upstream-allocator/%s/%s", tag, file);
	char *text = fixture_read(rel);
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);
	ck_assert_msg(j != NULL, "%s: line %d: %s", rel, err.line, err.text);
	free(text);
	return j;
}

/* ---- the count check ---- */

struct source_case {
	char name[256];
	int line;
	bool seen;
};

/* Length of the name in `name": {` or `name": {},` (the rest of a case's first line); 0 when the
 * line is something else. */
static size_t
case_key_len(const char *s, size_t len)
{
	const char *q = memchr(s, '"', len);
	if (!q)
		return 0;
	size_t nl = (size_t)(q - s), rest = len - nl;
	if ((rest == 4 && strncmp(q, "\": {", 4) == 0) ||
	    (rest == 6 && strncmp(q, "\": {},", 6) == 0))
		return nl;
	return 0;
}

/* The keys of the `testcases := map[...]{` table of a Go source: lines `\t\t"name": {`
 * between that line and the table's closing `\t}`. */
static size_t
source_cases(const char *text, struct source_case **ret)
{
	size_t n = 0, cap = 0;
	struct source_case *v = NULL;
	bool in_table = false;
	int line = 1;
	size_t nl;
	for (const char *p = text; *p; line++) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (!in_table && len > 17 &&
		    strncmp(p + strspn(p, "\t"), "testcases := map[", 17) == 0)
			in_table = true;
		else if (in_table && len == 2 && p[0] == '\t' && p[1] == '}')
			in_table = false;
		else if (in_table && len > 7 && strncmp(p, "\t\t\"", 3) == 0 &&
			 (nl = case_key_len(p + 3, len - 3)) > 0) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				v = realloc(v, cap * sizeof(*v));
				ck_assert_ptr_nonnull(v);
			}
			ck_assert_uint_lt(nl, sizeof(v[n].name));
			memcpy(v[n].name, p + 3, nl);
			v[n].name[nl] = 0;
			v[n].line = line;
			v[n].seen = false;
			n++;
		}
		p = eol ? eol + 1 : p + len;
	}
	*ret = v;
	return n;
}

/* Every case of the Go sources is a fixture or listed as untranslated, at the line it names. */
START_TEST(test_upstream_case_count)
{
	const char *tag = tags[_i].tag;
	json_t *cases = load(tag, "cases.json");
	json_t *untr = load(tag, "untranslated.json");
	json_t *sources = json_object_get(cases, "sources");
	size_t total = 0, si;
	json_t *src;
	json_array_foreach (sources, si, src) {
		char file[128];
		snprintf(file, sizeof(file), "upstream-allocator/%s/%s.txt", tag,
			 json_string_value(src));
		char *text = fixture_read(file);
		struct source_case *sc = NULL;
		size_t n = source_cases(text, &sc);
		ck_assert_msg(n > 0, "%s: no test case table found", file);
		json_t *lists[2] = { json_object_get(cases, "cases"),
				     json_object_get(untr, "cases") };
		for (size_t l = 0; l < 2; l++) {
			size_t i;
			json_t *c;
			json_array_foreach (lists[l], i, c) {
				if (strcmp(json_string_value(json_object_get(c, "source")),
					   json_string_value(src)) != 0)
					continue;
				const char *name = json_string_value(json_object_get(c, "case"));
				int line = (int)json_integer_value(json_object_get(c, "line"));
				size_t k = 0;
				while (k < n && strcmp(sc[k].name, name) != 0)
					k++;
				ck_assert_msg(k < n, "%s: case %s is not in %s", tag, name, file);
				ck_assert_msg(!sc[k].seen, "%s: case %s appears twice", tag, name);
				ck_assert_msg(sc[k].line == line,
					      "%s: case %s is at line %d, not %d", tag, name,
					      sc[k].line, line);
				sc[k].seen = true;
			}
		}
		for (size_t k = 0; k < n; k++)
			ck_assert_msg(sc[k].seen,
				      "%s: case %s (%s:%d) is neither a fixture nor listed", tag,
				      sc[k].name, file, sc[k].line);
		total += n;
		free(sc);
		free(text);
	}
	ck_assert_uint_eq(json_array_size(json_object_get(cases, "cases")) +
				  json_array_size(json_object_get(untr, "cases")),
			  total);
	json_decref(cases);
	json_decref(untr);
}
END_TEST

/* ---- applicability ---- */

static bool
has_feature(const json_t *fx, const char *a, const char *b)
{
	size_t i;
	json_t *f;
	json_array_foreach (json_object_get(fx, "features"), i, f) {
		const char *s = json_string_value(f);
		if (strcmp(s, a) == 0 || (b && strcmp(s, b) == 0))
			return true;
	}
	return false;
}

/* One request or subrequest: fields of gated features. */
static const char *
request_gate(const json_t *r)
{
	if (json_is_true(json_object_get(r, "adminAccess")))
		return "AdminAccess";
	if (json_object_get(r, "tolerations"))
		return "DeviceTaints";
	if (json_object_get(r, "capacity"))
		return "ConsumableCapacity";
	return NULL;
}

/* The first feature whose fields the case's objects carry while the case turns it off, with
 * the field; NULL when the case is applicable. */
static const char *
missing_gate(const json_t *fx, const char **ret_field)
{
	struct gate_use {
		const char *feature, *alias, *field;
	} used[16];
	size_t n = 0;
	/* one entry per feature (the first field that needs it): there are fewer than 16 */
#define USE(f, a, fld)                                                                             \
	do {                                                                                       \
		size_t u_ = 0;                                                                     \
		while (u_ < n && strcmp(used[u_].feature, f) != 0)                                 \
			u_++;                                                                      \
		if (u_ == n && n < 16)                                                             \
			used[n++] = (struct gate_use){ f, a, fld };                                \
	} while (0)
	size_t i, j, k;
	json_t *o, *d, *r;
	json_array_foreach (json_object_get(fx, "slices"), i, o) {
		const json_t *spec = json_object_get(o, "spec");
		if (json_object_get(spec, "sharedCounters"))
			USE("PartitionableDevices", NULL, "sharedCounters");
		if (json_object_get(spec, "perDeviceNodeSelection"))
			USE("PartitionableDevices", NULL, "perDeviceNodeSelection");
		json_array_foreach (json_object_get(spec, "devices"), j, d) {
			if (json_object_get(d, "consumesCounters"))
				USE("PartitionableDevices", NULL, "consumesCounters");
			if (json_object_get(d, "nodeName") || json_object_get(d, "nodeSelector") ||
			    json_object_get(d, "allNodes"))
				USE("PartitionableDevices", NULL, "device node selection");
			if (json_object_get(d, "taints"))
				USE("DeviceTaints", NULL, "taints");
			if (json_object_get(d, "allowMultipleAllocations"))
				USE("ConsumableCapacity", NULL, "allowMultipleAllocations");
			if (json_object_get(d, "bindingConditions") ||
			    json_object_get(d, "bindingFailureConditions") ||
			    json_object_get(d, "bindsToNode")) {
				USE("DeviceBindingAndStatus", "DeviceBinding", "bindingConditions");
				if (!has_feature(fx, "DeviceBindingAndStatus", NULL))
					USE("DeviceStatus", NULL, "bindingConditions");
			}
			/* list attributes: railfit models the feature (kube.featureGates) */
			const char *an;
			json_t *av;
			json_object_foreach (json_object_get(d, "capacity"), an, av)
				if (json_object_get(av, "requestPolicy"))
					USE("ConsumableCapacity", NULL, "requestPolicy");
		}
	}
	json_array_foreach (json_object_get(fx, "claims"), i, o) {
		json_array_foreach (
			json_object_get(json_object_get(json_object_get(o, "spec"), "devices"),
					"requests"),
			j, r) {
			const json_t *fa = json_object_get(r, "firstAvailable");
			if (fa)
				USE("PrioritizedList", NULL, "firstAvailable");
			const char *g = request_gate(json_object_get(r, "exactly"));
			if (g)
				USE(g, NULL, "a request field");
			json_array_foreach (fa, k, d)
				if ((g = request_gate(d)))
					USE(g, NULL, "a subrequest field");
		}
	}
	if (json_array_size(json_object_get(fx, "allocatedCapacity")) ||
	    json_array_size(json_object_get(fx, "allocatedSharedDevices")))
		USE("ConsumableCapacity", NULL, "shared allocations");
#undef USE
	for (size_t u = 0; u < n; u++)
		if (!has_feature(fx, used[u].feature, used[u].alias)) {
			*ret_field = used[u].field;
			return used[u].feature;
		}
	return NULL;
}

/* ---- one case ---- */

static json_t *
copy_items(json_t *arr)
{
	json_t *out = json_array();
	size_t i;
	json_t *o;
	json_array_foreach (arr, i, o)
		json_array_append_new(out, json_deep_copy(o));
	return out;
}

/* upstream's allocated devices: one allocated claim holding them (and the shares) */
static json_t *
allocated_claim(const json_t *fx)
{
	json_t *results = json_array();
	const char *lists[] = { "allocatedDevices", "allocatedSharedDevices", "allocatedCapacity" };
	for (size_t l = 0; l < 3; l++) {
		size_t i;
		json_t *d;
		json_array_foreach (json_object_get(fx, lists[l]), i, d) {
			json_t *r = json_pack("{s:s, s:O, s:O, s:O}", "request", "upstream",
					      "driver", json_object_get(d, "driver"), "pool",
					      json_object_get(d, "pool"), "device",
					      json_object_get(d, "device"));
			if (l > 0) {
				const json_t *sid = json_object_get(d, "shareID");
				json_object_set_new(r, "shareID",
						    json_string(sid ? json_string_value(sid)
								    : "upstream-share"));
			}
			if (l == 2)
				json_object_set(r, "consumedCapacity",
						json_object_get(d, "consumedCapacity"));
			json_array_append_new(results, r);
		}
	}
	if (!json_array_size(results)) {
		json_decref(results);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[]}, s:{s:{s:{s:o}}}}", "kind",
			 "ResourceClaim", "apiVersion", "resource.k8s.io/v1", "metadata", "name",
			 "upstream-allocated", "namespace", "upstream", "uid", "upstream-allocated",
			 "spec", "devices", "status", "allocation", "devices", "results", results);
}

enum verdict { V_EXACT, V_NA, V_FAIL };

#define NO_NODE "upstream-no-node"

struct run {
	char detail[1024];
	size_t one_of; /* exact, and one of that many outcomes (scan orders); 0 = the only one */
	bool infeasible_for_error; /* upstream fails with an error, railfit finds no solution */
};

static bool
result_eq(const json_t *want, const struct rf_pick *p)
{
	const char *adm = json_is_true(json_object_get(want, "adminAccess")) ? "1" : "0";
	return strcmp(json_string_value(json_object_get(want, "request")), p->request) == 0 &&
	       strcmp(json_string_value(json_object_get(want, "driver")), p->dev->pool->driver) ==
		       0 &&
	       strcmp(json_string_value(json_object_get(want, "pool")), p->dev->pool->name) == 0 &&
	       strcmp(json_string_value(json_object_get(want, "device")), p->dev->name) == 0 &&
	       (adm[0] == '1') == (p->alt && p->alt->admin_access);
}

/* Do the picks of claim cl in a equal one expected claim's results? */
static bool
claim_matches(const json_t *want, const struct rf_assignment *a, const struct rf_claim *cl)
{
	const json_t *res = json_object_get(want, "results");
	bool ordered = json_is_true(json_object_get(want, "ordered"));
	size_t n = 0;
	const struct rf_pick *picks[RF_MAX_PICKS];
	for (size_t i = 0; i < a->n; i++)
		if (a->picks[i].claim == cl)
			picks[n++] = &a->picks[i];
	if (n != json_array_size(res))
		return false;
	bool used[RF_MAX_PICKS] = { 0 };
	for (size_t i = 0; i < n; i++) {
		const json_t *w = json_array_get(res, i);
		if (ordered) {
			if (!result_eq(w, picks[i]))
				return false;
			continue;
		}
		size_t k = 0;
		while (k < n && (used[k] || !result_eq(w, picks[k])))
			k++;
		if (k == n)
			return false;
		used[k] = true;
	}
	return true;
}

/* upstream compares the claims' results with ConsistOf: any claim may match any expectation */
static bool
outcome_matches(const json_t *want_claims, const struct rf_assignment *a,
		const struct rf_claim *const *claims, size_t n_claims)
{
	if (json_array_size(want_claims) != n_claims)
		return false;
	bool used[64] = { 0 };
	size_t i;
	json_t *w;
	json_array_foreach (want_claims, i, w) {
		size_t k = 0;
		while (k < n_claims && (used[k] || !claim_matches(w, a, claims[k])))
			k++;
		if (k == n_claims)
			return false;
		used[k] = true;
	}
	return true;
}

static void
describe(char *buf, size_t len, const struct rf_assignment *a)
{
	size_t o = strlen(buf);
	for (size_t i = 0; i < a->n && o < len; i++) {
		snprintf(buf + o, len - o, "%s%s=%s/%s", i ? " " : "", a->picks[i].request,
			 a->picks[i].dev->pool->name, a->picks[i].dev->name);
		o = strlen(buf);
	}
}

static enum verdict
run_case(const json_t *fx, const char *dra, bool deterministic, struct run *run)
{
	run->detail[0] = 0;
	run->one_of = 0;
	run->infeasible_for_error = false;
	const char *field = NULL;
	const char *gate = missing_gate(fx, &field);
	if (gate) {
		snprintf(run->detail, sizeof(run->detail), "%s with %s off", field, gate);
		return V_NA;
	}
	struct rf_config cfg;
	char yaml[64], err[256];
	snprintf(yaml, sizeof(yaml), "kube:\n  draVersion: \"%s\"\n", dra);
	rf_config_init(&cfg);
	ck_assert_msg(rf_config_parse_yaml(yaml, strlen(yaml), &cfg, err, sizeof(err)) == 0,
		      "draVersion %s: %s", dra, err);
	/* upstream hands the allocator library its Features and CEL the same list switch (D362
	 * allocator_testing.go:7249-7252): the library feature itself, which no 1.36
	 * kube-scheduler gate sets (rf_dra_list_rules) */
	cfg.kube.dra_library_list_feature = has_feature(fx, "ListTypeAttributes", NULL);
	struct rf_cel_cache *cel = rf_cel_cache_new();
	struct rf_cluster_objects objs = { 0 };
	objs.nodes = json_array();
	objs.pods = json_array();
	objs.templates = json_array();
	objs.slices = copy_items(json_object_get(fx, "slices"));
	objs.classes = copy_items(json_object_get(fx, "classes"));
	objs.claims = copy_items(json_object_get(fx, "claims"));
	/* upstream's Allocate may get no node (then no slice selects it): a bare Node stands in */
	const json_t *node = json_object_get(fx, "node");
	json_array_append_new(objs.nodes,
			      json_is_object(node)
				      ? json_deep_copy(node)
				      : json_pack("{s:s, s:s, s:{s:s}}", "kind", "Node",
						  "apiVersion", "v1", "metadata", "name", NO_NODE));
	size_t i;
	json_t *c;
	json_array_foreach (objs.claims, i, c) {
		/* upstream hands the allocator claim objects, names unchecked (two may share one);
		 * railfit finds claims by namespace/name, so a repeated name gets a suffix */
		json_t *md = json_object_get(c, "metadata");
		const char *name = json_string_value(json_object_get(md, "name"));
		size_t k;
		json_t *o;
		json_array_foreach (objs.claims, k, o) {
			if (k >= i)
				break;
			const char *other = json_string_value(
				json_object_get(json_object_get(o, "metadata"), "name"));
			if (strcmp(other, name) == 0) {
				char renamed[300];
				snprintf(renamed, sizeof(renamed), "%s-dup%zu", name, i);
				json_object_set_new(md, "name", json_string(renamed));
				break;
			}
		}
		json_object_set_new(md, "namespace", json_string("default"));
		json_object_set(md, "uid", json_object_get(md, "name"));
	}
	json_t *held = allocated_claim(fx);
	if (held)
		json_array_append_new(objs.claims, held);

	enum verdict v = V_FAIL;
	struct rf_cluster *cl = NULL;
	struct rf_search_result *res = NULL;
	struct rf_demand d;
	bool have_demand = false;
	json_t *pod =
		json_pack("{s:{s:s, s:s, s:s}, s:{s:[]}}", "metadata", "name", "upstream",
			  "namespace", "default", "uid", "upstream-pod", "spec", "resourceClaims");
	ck_assert_ptr_nonnull(pod);
	json_array_foreach (objs.claims, i, c) {
		const json_t *nm = json_object_get(json_object_get(c, "metadata"), "name");
		if (held && c == held)
			break;
		char entry[32];
		snprintf(entry, sizeof(entry), "c%zu", i);
		json_array_append_new(
			json_object_get(json_object_get(pod, "spec"), "resourceClaims"),
			json_pack("{s:s, s:O}", "name", entry, "resourceClaimName", nm));
	}
	size_t n_claims = json_array_size(json_object_get(fx, "claims"));
	int r = rf_cluster_build(&objs, &cfg, cel, &cl);
	if (r < 0) {
		snprintf(run->detail, sizeof(run->detail), "model build failed: %s", strerror(-r));
		goto out;
	}
	const json_t *expect = json_object_get(fx, "expect");
	const char *want = json_string_value(json_object_get(expect, "outcome"));
	if (!n_claims) {
		/* nothing to allocate: upstream returns no results and no error */
		v = strcmp(want, "unallocatable") == 0 ? V_EXACT : V_FAIL;
		snprintf(run->detail, sizeof(run->detail), "no claims, expected %s", want);
		goto out;
	}
	/* what railfit does with a pending pod that names these claims */
	ck_assert_int_eq(rf_demand_resolve(cl, pod, &d), 0);
	have_demand = true;
	if (d.kind != RF_DEMAND_KNOWN || d.n_claims != n_claims) {
		/* railfit predicts nothing and says why: what it should do when upstream's
		 * Allocate fails, a mismatch otherwise */
		v = strcmp(want, "error") == 0 && d.kind == RF_DEMAND_UNKNOWN ? V_EXACT : V_FAIL;
		snprintf(run->detail, sizeof(run->detail), "expected %s, railfit: demand %s: %s",
			 want, rf_demand_kind_name(d.kind), d.unknown_reason);
		goto out;
	}
	const char *node_name =
		json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
	const struct rf_node *n = rf_cluster_node(cl, node_name ? node_name : NO_NODE);
	ck_assert_ptr_nonnull(n);
	const struct rf_claim *const *claims = d.claims;
	struct rf_search_request req = {
		.cluster = cl, .node = n, .claims = claims, .n_claims = n_claims
	};
	res = malloc(sizeof(*res));
	ck_assert_ptr_nonnull(res);
	ck_assert_int_eq(rf_predict(&req, res), 0);
	const char *got = rf_search_status_name(res->status);
	if (strcmp(want, "allocated") == 0) {
		if (res->status != RF_SEARCH_FOUND) {
			snprintf(run->detail, sizeof(run->detail),
				 "expected an allocation, got %s%s%s", got,
				 res->error[0] ? ": " : "", res->error);
			goto out;
		}
		/* Up to 1.35 the allocator visits pools and slices in random order and railfit
		 * keeps every outcome a scan order can give. Upstream's suite lists objects in a
		 * fixed order (so its pool order does not matter, its slice order is the list
		 * order): its pick must be one of railfit's outcomes, and is the only one unless
		 * the slices of a pool compete. */
		size_t hit = res->n_outcomes;
		for (size_t k = 0; k < res->n_outcomes && hit == res->n_outcomes; k++)
			if (outcome_matches(json_object_get(expect, "claims"), &res->outcomes[k],
					    claims, n_claims))
				hit = k;
		if (deterministic && res->n_outcomes > 1) {
			/* from 1.36 the allocator sorts pools and slices: one outcome */
			snprintf(run->detail, sizeof(run->detail),
				 "%zu outcomes for an allocator that scans in a fixed order: ",
				 res->n_outcomes);
			describe(run->detail, sizeof(run->detail), &res->outcomes[0]);
			goto out;
		}
		if (hit == res->n_outcomes) {
			snprintf(run->detail, sizeof(run->detail),
				 "%zu outcome(s), none upstream's: ", res->n_outcomes);
			describe(run->detail, sizeof(run->detail), &res->outcomes[0]);
			goto out;
		}
		run->one_of = res->n_outcomes > 1 ? res->n_outcomes : 0;
		v = V_EXACT;
	} else if (strcmp(want, "unallocatable") == 0) {
		v = res->status == RF_SEARCH_INFEASIBLE ? V_EXACT : V_FAIL;
		snprintf(run->detail, sizeof(run->detail), "expected no allocation, got %s%s", got,
			 res->status == RF_SEARCH_FOUND ? ": " : "");
		if (res->status == RF_SEARCH_FOUND)
			describe(run->detail, sizeof(run->detail), &res->outcomes[0]);
	} else {
		/* upstream's Allocate fails; railfit must find no allocation and say why */
		/* "invalid resource pools" fails the node only (ErrFailedAllocationOnNode): no
		 * solution is railfit's match for it; any other error fails the pod's attempt */
		const char *msg = json_string_value(json_object_get(expect, "error"));
		bool node_only = msg && strstr(msg, "invalid resource pools were encountered");
		bool failed = res->status != RF_SEARCH_FOUND && res->status != RF_SEARCH_BUDGET &&
			      (res->status != RF_SEARCH_INFEASIBLE || node_only);
		v = failed ? V_EXACT : V_FAIL;
		run->infeasible_for_error = res->status == RF_SEARCH_INFEASIBLE;
		snprintf(run->detail, sizeof(run->detail), "expected error \"%s\", got %s%s%s",
			 json_string_value(json_object_get(expect, "error")), got,
			 res->status == RF_SEARCH_FOUND ? ": " : "",
			 res->status == RF_SEARCH_FOUND ? "" : res->error);
		if (res->status == RF_SEARCH_FOUND)
			describe(run->detail, sizeof(run->detail), &res->outcomes[0]);
	}
out:
	if (have_demand)
		rf_demand_release(&d);
	json_decref(pod);
	free(res);
	rf_cluster_unref(cl);
	json_decref(objs.nodes);
	json_decref(objs.pods);
	json_decref(objs.templates);
	json_decref(objs.slices);
	json_decref(objs.classes);
	json_decref(objs.claims);
	rf_cel_cache_free(cel);
	rf_config_release(&cfg);
	return v;
}

/* ---- known failures ---- */

/* Is "<tag> <case>" listed in known-failures.txt (lines "<tag> <case> <reason>", # comments)? */
static bool
known_failure(const char *list, const char *tag, const char *name)
{
	size_t tl = strlen(tag), nl = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *eol = strchr(p, '\n');
		if (*p != '#' && strncmp(p, tag, tl) == 0 && p[tl] == ' ' &&
		    strncmp(p + tl + 1, name, nl) == 0 &&
		    (p[tl + 1 + nl] == ' ' || p[tl + 1 + nl] == '\n' || !p[tl + 1 + nl]))
			return true;
		p = eol ? eol + 1 : NULL;
	}
	return false;
}

/* The dra version railfit's configuration accepts for a tag: its own, or (for a minor railfit
 * does not model yet) the newest one it knows, which the summary line names. */
static const char *
usable_dra(const char *want)
{
	static const char *const known[] = { "1.37", "1.36", "1.35", "1.34" };
	struct rf_config cfg;
	char yaml[64], err[256];
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(known[i], want) > 0)
			continue;
		snprintf(yaml, sizeof(yaml), "kube:\n  draVersion: \"%s\"\n", known[i]);
		rf_config_init(&cfg);
		int r = rf_config_parse_yaml(yaml, strlen(yaml), &cfg, err, sizeof(err));
		rf_config_release(&cfg);
		if (r == 0)
			return known[i];
	}
	return NULL;
}

START_TEST(test_upstream_cases)
{
	const struct tag *t = &tags[_i];
	const char *dra = usable_dra(t->dra);
	ck_assert_ptr_nonnull(dra);
	json_t *cases = load(t->tag, "cases.json");
	char *known = fixture_read("upstream-allocator/known-failures.txt");
	size_t n = json_array_size(json_object_get(cases, "cases"));
	size_t exact = 0, na = 0, failing = 0, unexpected = 0, fixed = 0, one_of = 0, weak = 0;
	char *bad = calloc(1, 8192);
	ck_assert_ptr_nonnull(bad);
	size_t i;
	json_t *fx;
	json_array_foreach (json_object_get(cases, "cases"), i, fx) {
		const char *name = json_string_value(json_object_get(fx, "case"));
		struct run run;
		enum verdict v = run_case(fx, dra, strcmp(t->dra, "1.36") >= 0, &run);
		bool listed = known_failure(known, t->tag, name);
		if (v == V_EXACT && run.one_of) {
			one_of++;
			fprintf(stderr,
				"  %s %s: upstream's pick is one of %zu scan-order outcomes\n",
				t->tag, name, run.one_of);
		}
		if (v == V_EXACT && run.infeasible_for_error)
			weak++;
		if (v == V_EXACT)
			exact++;
		else if (v == V_NA)
			na++;
		else
			failing++;
		if (v == V_FAIL)
			fprintf(stderr, "  %s %s%s (line %lld): %s\n", t->tag, name,
				listed ? " [known]" : "",
				(long long)json_integer_value(json_object_get(fx, "line")),
				run.detail);
		if (v == V_FAIL && !listed) {
			unexpected++;
			size_t o = strlen(bad);
			snprintf(bad + o, 8192 - o, " %s", name);
		}
		if (v != V_FAIL && listed) {
			fixed++;
			size_t o = strlen(bad);
			snprintf(bad + o, 8192 - o, " %s(passes: remove from known-failures)",
				 name);
		}
		if (v == V_NA && getenv("RF_UPSTREAM_VERBOSE"))
			fprintf(stderr, "  %s %s: not applicable: %s\n", t->tag, name, run.detail);
	}
	fprintf(stderr,
		"upstream allocator %s: %zu/%zu exact, %zu not applicable, %zu failing%s%s (of the "
		"exact: %zu one of several scan-order outcomes, %zu a node-only upstream error where "
		"railfit finds no solution)\n",
		t->tag, exact, n - na, na, failing, strcmp(dra, t->dra) ? " (railfit has no " : "",
		strcmp(dra, t->dra) ? "rules for this minor yet: run with its newest)" : "", one_of,
		weak);
	ck_assert_msg(unexpected == 0 && fixed == 0, "upstream allocator %s:%s", t->tag, bad);
	free(bad);
	free(known);
	json_decref(cases);
}
END_TEST

Suite *
upstream_suite(void)
{
	Suite *s = suite_create("upstream");
	TCase *tc = tcase_create("upstream");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_upstream_case_count, 0, N_TAGS);
	tcase_add_loop_test(tc, test_upstream_cases, 0, N_TAGS);
	suite_add_tcase(s, tc);
	return s;
}
