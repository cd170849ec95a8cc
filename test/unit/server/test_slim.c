/* Unit tests of server/slim.c (what railfit keeps of each kind, the interner) and of the promise
 * behind it: whatever path an object takes into railfit (snapshot file, List, watch, relist), the
 * cache and /debug/snapshot never hold pod env, volumes, commands or secrets. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "alloc/explain.h"
#include "alloc/gen/gen_cluster.h"
#include "server/kube/cache.h"
#include "server/kube/store.h"
#include "server/snapshot/pack.h"
#include "server/snapshot/slim.h"
#include "server/snapshot/snapshot.h"

static json_t *
parse(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);
	ck_assert_msg(v != NULL, "%s: %s", text, err.text);
	return v;
}

/* got equals the JSON text want (key order ignored, as json_equal does) */
static void
assert_json(json_t *got, const char *want)
{
	json_t *w = parse(want);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
	char *ws = json_dumps(w, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_msg(json_equal(got, w), "got %s\nwant %s", g, ws);
	free(g);
	free(ws);
	json_decref(w);
}

/* A pod with everything a real one carries, secrets included. */
static const char *const fat_pod =
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	" \"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\","
	"  \"generateName\":\"p-\",\"creationTimestamp\":\"2025-01-01T00:00:00Z\","
	"  \"labels\":{\"job-name\":\"j\"},"
	"  \"annotations\":{\"railfit.io/group\":\"g\",\"kubernetes.io/egress-bandwidth\":\"1G\","
	"   \"kubernetes.io/ingress-bandwidth\":\"2G\",\"railfit.io/min-alignment\":\"PHB\","
	"   \"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"env\\\":\\\"SECRET-1\\\"}\"},"
	"  \"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\"}],"
	"  \"managedFields\":[{\"manager\":\"kubectl\"}]},"
	" \"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"railfit\","
	"  \"containers\":[{\"name\":\"c\",\"image\":\"i\",\"command\":[\"sh\",\"-c\",\"SECRET-2\"],"
	"   \"env\":[{\"name\":\"TOKEN\",\"value\":\"SECRET-3\"},"
	"    {\"name\":\"PW\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"SECRET-4\",\"key\":\"k\"}}}],"
	"   \"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}],"
	"  \"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"SECRET-5\"}}],"
	"  \"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\",\"x\":1},"
	"   {\"name\":\"nic\",\"resourceClaimName\":\"c2\"}]},"
	" \"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\","
	"  \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
	"  \"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":\"p-gpu-x\"}]}}";

/* A pod asking for an extended resource keeps its containers' names and resources (the
 * requests kube-scheduler makes are named by container and resource index), nothing else of
 * them; and its extendedResourceClaimStatus. */
START_TEST(test_slim_pod_extended_resources)
{
	json_t *pod = parse(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
		"\"initContainers\":[{\"name\":\"i\",\"image\":\"x\",\"env\":[{\"name\":\"T\","
		"\"value\":\"SECRET\"}],\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		"\"containers\":[{\"name\":\"c\",\"command\":[\"SECRET\"],\"resources\":{\"limits\":"
		"{\"nvidia.com/gpu\":\"2\",\"memory\":\"1Gi\"},\"claims\":[]}}]},"
		"\"status\":{\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"p-er-x\"}}}");
	json_t *s = rf_slim_object(RF_SLIM_POD, pod, NULL, NULL);
	assert_json(s, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
		       "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":"
		       "\"1\"}}}],\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
		       "\"nvidia.com/gpu\":\"2\",\"memory\":\"1Gi\"}}}]},\"status\":{"
		       "\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"p-er-x\"}}}");
	json_decref(s);
	json_decref(pod);
}
END_TEST

START_TEST(test_slim_pod)
{
	json_t *pod = parse(fat_pod);
	json_t *s = rf_slim_object(RF_SLIM_POD, pod, NULL, NULL);
	assert_json(s, "{"
		       " \"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\","
		       "  \"resourceVersion\":\"7\",\"labels\":{\"job-name\":\"j\"},"
		       "  \"annotations\":{\"railfit.io/group\":\"g\","
		       "   \"kubernetes.io/egress-bandwidth\":\"1G\","
		       "   \"kubernetes.io/ingress-bandwidth\":\"2G\","
		       "   \"railfit.io/min-alignment\":\"PHB\"}},"
		       " \"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"railfit\","
		       "  \"resourceClaims\":["
		       "  {\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\"},"
		       "  {\"name\":\"nic\",\"resourceClaimName\":\"c2\"}]},"
		       " \"status\":{\"phase\":\"Running\",\"resourceClaimStatuses\":["
		       "  {\"name\":\"gpu\",\"resourceClaimName\":\"p-gpu-x\"}]}}");
	/* the original is untouched, key order is kept */
	ck_assert_ptr_nonnull(json_object_get(json_object_get(pod, "spec"), "containers"));
	ck_assert_str_eq(json_object_iter_key(json_object_iter(s)), "metadata");
	json_decref(s);

	/* only the labels of groups.labels, when the caller knows them */
	char *names[] = { "railfit.io/group", "job-name" };
	struct rf_strv lbl = { names, 1 };
	struct rf_slim_options o = { .pod_labels = &lbl };
	s = rf_slim_object(RF_SLIM_POD, pod, &o, NULL);
	ck_assert_uint_eq(
		json_object_size(json_object_get(json_object_get(s, "metadata"), "labels")), 0);
	json_decref(s);
	lbl.n = 2;
	s = rf_slim_object(RF_SLIM_POD, pod, &o, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_object_get(s, "metadata"), "labels"), "job-name")),
		"j");
	json_decref(s);

	/* a bare pod keeps its (empty) spec and metadata objects */
	json_t *bare = parse("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"containers\":[]}}");
	s = rf_slim_object(RF_SLIM_POD, bare, NULL, NULL);
	assert_json(s, "{\"metadata\":{\"name\":\"b\"},\"spec\":{}}");
	json_decref(s);
	json_decref(bare);
	json_decref(pod);
}
END_TEST

START_TEST(test_slim_node)
{
	json_t *node = parse(
		"{\"metadata\":{\"name\":\"n\",\"uid\":\"u\",\"labels\":{\"a\":\"b\"},"
		"  \"annotations\":{\"railfit.io/pci-topology\":\"{}\",\"example.com/topo\":\"t\","
		"   \"railfit.io/frontend-bandwidth\":\"10G\",\"flannel.alpha.coreos.com/x\":\"y\"}},"
		" \"spec\":{\"podCIDR\":\"10.0.0.0/24\",\"taints\":[]},"
		" \"status\":{\"images\":[{\"names\":[\"i\"]}],\"capacity\":{\"cpu\":\"8\"},"
		"  \"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
		"   {\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"KubeletNotReady\","
		"    \"lastHeartbeatTime\":\"t\"}]}}");
	json_t *s = rf_slim_object(RF_SLIM_NODE, node, NULL, NULL);
	assert_json(s, "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"b\"},"
		       "  \"annotations\":{\"railfit.io/pci-topology\":\"{}\","
		       "   \"railfit.io/frontend-bandwidth\":\"10G\"}},"
		       " \"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
	json_decref(s);
	/* a configured topology annotation is kept; all of them when the caller cannot know */
	struct rf_slim_options o = { .topology_annotation = "example.com/topo" };
	s = rf_slim_object(RF_SLIM_NODE, node, &o, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(s, "metadata"), "annotations"),
				 "example.com/topo")),
			 "t");
	ck_assert_uint_eq(
		json_object_size(json_object_get(json_object_get(s, "metadata"), "annotations")),
		3);
	json_decref(s);
	o = (struct rf_slim_options){ .all_node_annotations = true };
	s = rf_slim_object(RF_SLIM_NODE, node, &o, NULL);
	ck_assert_uint_eq(
		json_object_size(json_object_get(json_object_get(s, "metadata"), "annotations")),
		4);
	json_decref(s);
	json_decref(node);
}
END_TEST

START_TEST(test_slim_dra_kinds)
{
	json_t *slice =
		parse("{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\",\"uid\":\"u\","
		      "  \"ownerReferences\":[{\"kind\":\"Node\"}]},"
		      " \"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\",\"generation\":1,"
		      "  \"resourceSliceCount\":1},\"nodeName\":\"n\",\"sharedCounters\":[],"
		      "  \"devices\":[{\"name\":\"g0\",\"attributes\":{\"x\":{\"int\":1}},"
		      "   \"capacity\":{\"mem\":{\"value\":\"1Gi\"}},\"taints\":[]}]}}");
	json_t *s = rf_slim_object(RF_SLIM_SLICE, slice, NULL, NULL);
	assert_json(s, "{\"metadata\":{\"name\":\"s\"},"
		       " \"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\",\"generation\":1,"
		       "  \"resourceSliceCount\":1},\"nodeName\":\"n\",\"sharedCounters\":[],"
		       "  \"devices\":[{\"name\":\"g0\",\"attributes\":{\"x\":{\"int\":1}},"
		       "   \"capacity\":{\"mem\":{\"value\":\"1Gi\"}},\"taints\":[]}]}}");
	json_decref(s);
	json_decref(slice);

	json_t *claim = parse(
		"{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u\","
		"  \"annotations\":{\"a\":\"b\"},\"finalizers\":[\"f\"]},"
		" \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
		"  {\"deviceClassName\":\"g\"}}],\"constraints\":[{\"matchAttribute\":\"m\"}],"
		"  \"config\":[{\"opaque\":{\"parameters\":{\"password\":\"SECRET\"}}}]}},"
		" \"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
		"  \"driver\":\"d\",\"pool\":\"p\",\"device\":\"g0\",\"shareID\":\"s1\","
		"  \"consumedCapacity\":{\"bw\":\"1G\"}}],\"config\":[{\"opaque\":{}}]},"
		"  \"nodeSelector\":{\"nodeSelectorTerms\":[]},\"allocationTimestamp\":\"t\"},"
		"  \"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pu\"}],"
		"  \"devices\":[{\"networkData\":{\"ips\":[\"10.0.0.1\"]}}]}}");
	s = rf_slim_object(RF_SLIM_CLAIM, claim, NULL, NULL);
	assert_json(
		s, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u\"},"
		   " \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
		   "  {\"deviceClassName\":\"g\"}}],\"constraints\":[{\"matchAttribute\":\"m\"}]}},"
		   " \"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
		   "  \"driver\":\"d\",\"pool\":\"p\",\"device\":\"g0\",\"shareID\":\"s1\","
		   "  \"consumedCapacity\":{\"bw\":\"1G\"}}]},"
		   "  \"nodeSelector\":{\"nodeSelectorTerms\":[]}},"
		   "  \"reservedFor\":[{\"uid\":\"pu\"}]}}");
	json_decref(s);
	json_decref(claim);

	json_t *cls = parse("{\"metadata\":{\"name\":\"g\",\"uid\":\"u\"},\"spec\":{\"selectors\":"
			    "[{\"cel\":{\"expression\":\"true\"}}],\"extendedResourceName\":\"x\","
			    "\"config\":[]}}");
	s = rf_slim_object(RF_SLIM_CLASS, cls, NULL, NULL);
	/* extendedResourceName stays: it maps extended resources to the class (1.36+) */
	assert_json(s, "{\"metadata\":{\"name\":\"g\"},\"spec\":{\"selectors\":"
		       "[{\"cel\":{\"expression\":\"true\"}}],\"extendedResourceName\":\"x\"}}");
	json_decref(s);
	json_decref(cls);

	json_t *t =
		parse("{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\",\"labels\":{}},"
		      "\"spec\":{\"metadata\":{\"labels\":{}},\"spec\":{\"devices\":{\"requests\":"
		      "[{\"name\":\"r\"}],\"config\":[]}}}}");
	s = rf_slim_object(RF_SLIM_TEMPLATE, t, NULL, NULL);
	assert_json(s, "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\"},\"spec\":{\"spec\":"
		       "{\"devices\":{\"requests\":[{\"name\":\"r\"}]}}}}");
	json_decref(s);
	json_decref(t);

	/* an unusual apiVersion stays; resourceVersion goes when asked */
	json_t *beta = parse("{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"metadata\":"
			     "{\"name\":\"c\",\"resourceVersion\":\"9\"}}");
	struct rf_slim_options nover = { .drop_resource_version = true };
	s = rf_slim_object(RF_SLIM_CLAIM, beta, &nover, NULL);
	assert_json(s,
		    "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"metadata\":{\"name\":\"c\"}}");
	json_decref(s);
	s = rf_slim_object(RF_SLIM_CLAIM, beta, NULL, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s, "metadata"),
							   "resourceVersion")),
			 "9");
	json_decref(s);
	json_decref(beta);

	ck_assert_int_eq(rf_slim_kind_of("ResourceClaimTemplate"), RF_SLIM_TEMPLATE);
	ck_assert_int_eq(rf_slim_kind_of("Secret"), -1);
}
END_TEST

/* Fields of an unexpected type are kept as they are: readers see what they saw before. */
START_TEST(test_slim_odd_types)
{
	json_t *pod = parse("{\"metadata\":\"m\",\"spec\":{\"resourceClaims\":{\"a\":1}},"
			    "\"status\":[1]}");
	json_t *s = rf_slim_object(RF_SLIM_POD, pod, NULL, NULL);
	ck_assert(json_equal(s, pod));
	json_decref(s);
	json_decref(pod);
	json_t *arr = parse("[1,2]");
	s = rf_slim_object(RF_SLIM_NODE, arr, NULL, NULL);
	ck_assert(json_equal(s, arr));
	json_decref(s);
	json_decref(arr);
}
END_TEST

/* rf_slim_text() of an object's text is rf_slim_object() of its tree, member order included,
 * with and without an interner, for every option; or -EINVAL when the text is not taken (then the
 * tree path is used). Returns whether the text was taken. */
static bool
assert_text_slims_like_tree(enum rf_slim_kind kind, const char *text)
{
	static char *label_names[] = { "job-name", "app" };
	static const struct rf_strv labels = { label_names, 2 };
	const struct rf_slim_options opts[] = {
		{ 0 },
		{ .keep_requests = true },
		{ .drop_resource_version = true, .topology_annotation = "topo/x" },
		{ .pod_labels = &labels, .all_node_annotations = true },
	};
	bool taken = false;
	for (size_t o = 0; o <= sizeof(opts) / sizeof(opts[0]); o++) {
		const struct rf_slim_options *op = o ? &opts[o - 1] : NULL;
		struct rf_intern *in = o % 2 ? rf_intern_new() : NULL;
		json_t *tree = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *got = NULL;
		int r = rf_slim_text(kind, text, strlen(text), op, in, &got);
		if (r == 0) {
			ck_assert_msg(tree != NULL, "taken but jansson refuses: %s", text);
			json_t *want = rf_slim_object(kind, tree, op, in);
			char *g = json_dumps(got, JSON_COMPACT),
			     *w = json_dumps(want, JSON_COMPACT);
			ck_assert_msg(json_equal(got, want) && strcmp(g, w) == 0,
				      "kind %d opts %zu: text path %s\ntree path %s", kind, o, g,
				      w);
			free(g);
			free(w);
			json_decref(want);
			taken = true;
		} else {
			ck_assert_int_eq(r, -EINVAL);
			ck_assert_ptr_null(got);
		}
		json_decref(got);
		json_decref(tree);
		rf_intern_free(in);
	}
	return taken;
}

START_TEST(test_slim_text_like_tree)
{
	/* every object of generated clusters, compact and indented */
	const struct rf_gen_options gens[] = {
		{ .nodes = 6, .seed = 3, .used = 0.5, .pods_per_node = 2.4, .blocks = 2 },
		{ .nodes = 4, .seed = 5, .used = 0.7, .cpu_slices = true },
	};
	for (size_t g = 0; g < 3; g++) {
		json_t *doc = g < 2 ? rf_gen_cluster(&gens[g]) : rf_gen_demo();
		json_t *items = json_object_get(doc, "items");
		ck_assert(json_array_size(items) > 10);
		for (size_t i = 0; i < json_array_size(items); i++) {
			json_t *it = json_array_get(items, i);
			int kind = rf_slim_kind_of(json_string_value(json_object_get(it, "kind")));
			if (kind < 0)
				continue;
			for (size_t f = 0; f < 2; f++) {
				char *t = json_dumps(it, f ? JSON_INDENT(1) : JSON_COMPACT);
				ck_assert_msg(assert_text_slims_like_tree(kind, t), "%s", t);
				free(t);
			}
		}
		json_decref(doc);
	}
	ck_assert(assert_text_slims_like_tree(RF_SLIM_POD, fat_pod));
	/* odd shapes, escapes, numbers, an extended resource, conditions without Ready */
	static const struct {
		enum rf_slim_kind kind;
		const char *text;
		bool taken;
	} cases[] = {
		{ RF_SLIM_POD,
		  "{\"metadata\":\"m\",\"spec\":{\"resourceClaims\":{\"a\":1}},\"status\":[1]}",
		  true },
		{ RF_SLIM_POD, "{\"metadata\":{\"labels\":[1],\"annotations\":null},\"spec\":[]}",
		  true },
		{ RF_SLIM_POD,
		  "{\"spec\":{\"containers\":[1,{\"name\":\"c\",\"resources\":{\"requests\":"
		  "{\"cpu\":\"1\",\"example.com/gpu\":\"2\"},\"claims\":[{\"name\":\"x\"}]}}],"
		  "\"initContainers\":[{\"name\":\"i\",\"env\":[{\"name\":\"S\"}]}]},"
		  "\"status\":{\"extendedResourceClaimStatus\":{\"x\":[1,2.5,-0,1e3,true,false,null]}}}",
		  true },
		{ RF_SLIM_POD,
		  "{\"spec\":{\"initContainers\":[{\"resources\":{\"limits\":"
		  "{\"deviceclass.resource.kubernetes.io/gpu\":\"1\"}}}]}}",
		  true },
		{ RF_SLIM_POD,
		  "{\"apiVersion\":\"v2\",\"metadata\":{\"name\":\"\\u00e9\\ud83d\\ude00\\n\"}}",
		  true },
		{ RF_SLIM_POD,
		  "{\"apiVersion\":1,\"metadata\":{\"annotations\":{\"railfit.io/a\":"
		  "{\"x\":[1,2,3,4,5,6,7,8,9,10],\"y\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,"
		  "\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9}}}}}",
		  true },
		{ RF_SLIM_NODE,
		  "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"topo/x\":\"a\",\"other\":\"b\"}},"
		  "\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\"},2,{\"type\":\"Ready\","
		  "\"status\":\"True\",\"reason\":\"r\"}],\"allocatable\":{\"cpu\":\"1\"},"
		  "\"images\":[{\"names\":[\"a\"]}]}}",
		  true },
		{ RF_SLIM_NODE, "{\"status\":{\"conditions\":{\"type\":\"Ready\"}}}", true },
		{ RF_SLIM_SLICE,
		  "{\"spec\":{\"devices\":[{\"name\":\"d\",\"attributes\":{\"a\":"
		  "{\"int\":9223372036854775807},\"b\":{\"int\":-9223372036854775808},"
		  "\"c\":{\"string\":\"x\\\"y\\\\z\\/\"}}}]}}",
		  true },
		{ RF_SLIM_CLAIM, " {\"metadata\":{}} ", false }, /* leading space: not at '{' */
		{ RF_SLIM_CLAIM, "{\"metadata\":{}} ", true },
		{ RF_SLIM_CLAIM, "{\"metadata\":{},\"metadata\":{}}", false }, /* duplicate key */
		{ RF_SLIM_CLAIM, "{\"spec\":{\"x\":1,\"x\":2}}",
		  false },                                           /* duplicate, dropped part */
		{ RF_SLIM_CLAIM, "{\"m\\u0065tadata\":{}}", false }, /* escaped key */
		{ RF_SLIM_CLAIM, "{\"spec\":{\"a\":12345678901234567890}}", false },
		{ RF_SLIM_CLAIM, "{\"spec\":{\"a\":1e999}}", false },
		{ RF_SLIM_CLAIM, "{\"spec\":{\"a\":\"\\u0000\"}}", false },
		{ RF_SLIM_CLAIM, "{\"spec\":{}", false },
		{ RF_SLIM_CLAIM, "{\"spec\":{}}x", false },
		{ RF_SLIM_CLAIM, "[1]", false },
		{ RF_SLIM_CLASS, "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(assert_text_slims_like_tree(cases[i].kind, cases[i].text) ==
				      cases[i].taken,
			      "case %zu: %s", i, cases[i].text);
}
END_TEST

START_TEST(test_intern_shares_and_prunes)
{
	struct rf_intern *in = rf_intern_new();
	json_t *a =
		parse("{\"spec\":{\"devices\":[{\"name\":\"d0\",\"attributes\":"
		      "{\"t\":{\"string\":\"gpu\"},\"n\":{\"int\":0},\"r\":{\"real\":0.5}}},"
		      "{\"name\":\"d1\",\"attributes\":"
		      "{\"t\":{\"string\":\"gpu\"},\"n\":{\"int\":0},\"r\":{\"real\":0.5}}}]}}");
	json_t *s = rf_slim_object(RF_SLIM_SLICE, a, NULL, in);
	ck_assert(json_equal(s, a));
	const json_t *devs = json_object_get(json_object_get(s, "spec"), "devices");
	const json_t *a0 = json_object_get(json_array_get(devs, 0), "attributes");
	const json_t *a1 = json_object_get(json_array_get(devs, 1), "attributes");
	/* equal small values are one value; the attribute maps themselves too (3 members) */
	ck_assert_ptr_eq(json_object_get(a0, "t"), json_object_get(a1, "t"));
	ck_assert_ptr_eq(json_object_get(a0, "r"), json_object_get(a1, "r"));
	ck_assert_ptr_eq(a0, a1);
	ck_assert_ptr_ne(json_array_get(devs, 0), json_array_get(devs, 1));
	/* a second object shares with the first */
	json_t *s2 = rf_slim_object(RF_SLIM_SLICE, a, NULL, in);
	ck_assert_ptr_eq(
		json_object_get(
			json_array_get(json_object_get(json_object_get(s2, "spec"), "devices"), 0),
			"attributes"),
		a0);
	size_t held = rf_intern_size(in);
	ck_assert_uint_gt(held, 5);
	rf_intern_prune(in); /* everything is still used */
	ck_assert_uint_eq(rf_intern_size(in), held);
	json_decref(s);
	json_decref(s2);
	rf_intern_prune(in); /* nothing is */
	ck_assert_uint_eq(rf_intern_size(in), 0);
	/* an interner grows past its first table and copies stay equal */
	json_t *big = json_array();
	for (int i = 0; i < 5000; i++)
		json_array_append_new(big, json_pack("{s:i, s:s}", "i", i, "s", "x"));
	json_t *c = rf_intern_copy(in, big);
	ck_assert(json_equal(c, big));
	ck_assert_ptr_eq(json_object_get(json_array_get(c, 0), "s"),
			 json_object_get(json_array_get(c, 4999), "s"));
	json_decref(c);
	json_decref(big);
	rf_intern_free(in);
	json_decref(a);
}
END_TEST

static void
assert_no_secret(json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!strstr(text, "SECRET"), "leaked: %s", text);
	ck_assert_ptr_null(strstr(text, "\"env\""));
	ck_assert_ptr_null(strstr(text, "\"volumes\""));
	ck_assert_ptr_null(strstr(text, "\"containers\""));
	ck_assert_ptr_null(strstr(text, "managedFields"));
	free(text);
}

static json_t *
dump_of(const struct rf_cluster_objects *objs, struct rf_config *cfg, struct rf_cel_cache *cel)
{
	struct rf_cluster *c = NULL;
	ck_assert_int_eq(rf_cluster_build(objs, cfg, cel, &c), 0);
	ck_assert_uint_eq(rf_cluster_counts(c).pods, 1);
	ck_assert_str_eq(rf_cluster_pod(c, "ns", "p")->node_name, "n1");
	json_t *d = rf_snapshot_dump(c);
	rf_cluster_unref(c);
	return d;
}

/* /debug/snapshot is rf_snapshot_dump() of the generation: from a List, from a file (both the
 * streaming and the slow path) and from the live store, no secret gets there. */
START_TEST(test_debug_snapshot_never_leaks_pod_secrets)
{
	struct rf_config cfg;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	struct rf_cluster_objects objs = { 0 };
	char err[512];
	rf_config_init(&cfg);

	size_t list_len = strlen(fat_pod) + 256;
	char *list_text = malloc(list_len);
	ck_assert_ptr_nonnull(list_text);
	snprintf(list_text, list_len,
		 "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[%s,"
		 "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"SECRET-6\"}}]}",
		 fat_pod);
	json_t *list = parse(list_text);
	size_t skipped = 0;
	ck_assert_int_eq(rf_snapshot_split(list, &objs, &skipped, err, sizeof(err)), 0);
	ck_assert_uint_eq(skipped, 1);
	json_t *d = dump_of(&objs, &cfg, cel);
	assert_no_secret(d);
	/* what is read survives */
	json_t *p = json_array_get(json_object_get(d, "items"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(p, "metadata"), "annotations"),
				 "railfit.io/group")),
			 "g");
	json_decref(d);
	rf_cluster_objects_release(&objs);

	/* a file, the streaming way and (with a duplicate top-level key) the slow way */
	for (int slow = 0; slow < 2; slow++) {
		char path[] = "/tmp/railfit-slim-XXXXXX";
		int fd = mkstemp(path);
		ck_assert_int_ge(fd, 0);
		FILE *f = fdopen(fd, "w");
		fprintf(f, "%s%s", slow ? "{\"kind\":\"List\",\"kind\":\"List\"," : "",
			list_text + (slow ? 1 : 0));
		fclose(f);
		int r = rf_snapshot_load_file(path, &objs, &skipped, err, sizeof(err));
		if (slow) { /* jansson rejects the duplicate key, with its message */
			ck_assert_int_eq(r, -EINVAL);
			ck_assert_msg(strstr(err, "duplicate"), "%s", err);
		} else {
			ck_assert_int_eq(r, 0);
			d = dump_of(&objs, &cfg, cel);
			assert_no_secret(d);
			json_decref(d);
			rf_cluster_objects_release(&objs);
		}
		unlink(path);
	}

	/* the live store: a relist and a watch event */
	struct rf_cache *cache = rf_cache_new();
	struct rf_store *store = NULL;
	struct rf_store_options o = {
		.cache = cache, .cfg = &cfg, .cel = cel, .min_interval_ms = 10
	};
	ck_assert_int_eq(rf_store_new(&o, &store), 0);
	json_t *pod = parse(fat_pod);
	json_t *items = json_pack("[O]", pod);
	ck_assert_int_eq(rf_store_replace(store, RF_KIND_PODS, items), 1);
	/* the same object again changes nothing railfit reads: not a change */
	ck_assert_int_eq(rf_store_apply(store, RF_KIND_PODS, RF_WATCH_MODIFIED, pod), 0);
	json_object_set_new(json_object_get(pod, "metadata"), "labels",
			    json_pack("{s:s}", "batch.kubernetes.io/job-name", "j"));
	ck_assert_int_eq(rf_store_apply(store, RF_KIND_PODS, RF_WATCH_MODIFIED, pod), 1);
	ck_assert(rf_store_wait_published(store, rf_store_changes(store), 5000));
	struct rf_cluster *g = rf_cache_get(cache);
	ck_assert_ptr_nonnull(rf_cluster_pod(g, "ns", "p"));
	d = rf_snapshot_dump(g);
	assert_no_secret(d);
	json_decref(d);
	rf_cluster_unref(g);
	rf_store_free(store);
	rf_cache_free(cache);
	json_decref(items);
	json_decref(pod);

	json_decref(list);
	free(list_text);
	rf_cel_cache_free(cel);
	rf_config_release(&cfg);
}
END_TEST

/* The streaming loader and the whole-tree split give the same objects. */
START_TEST(test_snapshot_file_paths_agree)
{
	static const char *const text =
		"{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[\n"
		" {\"metadata\":{\"name\":\"n1\",\"annotations\":{\"x/y\":\"z\"}}},\n"
		" {\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
		"  \"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}},\n"
		" {\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"}} ] }\n";
	char path[] = "/tmp/railfit-slim-XXXXXX";
	char err[512];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct rf_cluster_objects a = { 0 }, b = { 0 };
	size_t sa = 0, sb = 0;
	ck_assert_int_eq(rf_snapshot_load_file(path, &a, &sa, err, sizeof(err)), 0);
	json_t *doc = parse(text);
	ck_assert_int_eq(rf_snapshot_split(doc, &b, &sb, err, sizeof(err)), 0);
	ck_assert_uint_eq(sa, 1);
	ck_assert_uint_eq(sb, 1);
	char *an = json_dumps(a.nodes, JSON_COMPACT), *bn = json_dumps(b.nodes, JSON_COMPACT);
	ck_assert_msg(json_equal(a.nodes, b.nodes), "%s != %s", an, bn);
	free(an);
	free(bn);
	ck_assert(json_equal(a.pods, b.pods));
	ck_assert_uint_eq(json_array_size(a.nodes), 1);
	ck_assert_uint_eq(json_array_size(a.pods), 1);
	rf_cluster_objects_release(&a);
	rf_cluster_objects_release(&b);
	json_decref(doc);

	/* a truncated file: jansson's message, with the line */
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, text, 60), 60);
	close(fd);
	ck_assert_int_eq(rf_snapshot_load_file(path, &a, &sa, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "cannot parse") && strstr(err, "line"), "%s", err);
	unlink(path);
}
END_TEST

START_TEST(test_pack_roundtrip)
{
	size_t sizes[] = { 0, 1, 3, 4, 5, 130, 70000, 300000 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int kind = 0; kind < 3; kind++) {
			size_t n = sizes[k];
			char *in = malloc(n + 1), *packed, *out;
			size_t plen, olen;
			for (size_t i = 0; i < n; i++) /* random, repetitive JSON-like, one byte */
				in[i] = kind == 0   ? (char)(rand() & 0xff)
					: kind == 1 ? "{\"dra.net/mtu\":{\"int\":9000},"[i % 29]
						    : 'a';
			ck_assert_int_eq(rf_pack(in, n, &packed, &plen), 0);
			ck_assert(rf_is_packed(packed, plen));
			if (kind && n > 1000)
				ck_assert_uint_lt(plen, n / 10);
			ck_assert_int_eq(rf_unpack(packed, plen, &out, &olen), 0);
			ck_assert_uint_eq(olen, n);
			ck_assert(memcmp(in, out, n) == 0);
			ck_assert_int_eq(out[n], 0);
			free(out);
			/* damage: truncated, or a distance before the start */
			if (plen > 13) {
				ck_assert_int_eq(rf_unpack(packed, plen - 1, &out, &olen), -EINVAL);
			}
			ck_assert_int_eq(
				rf_unpack("RFZ1\x01\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0\x80\x05\0", 23,
					  &out, &olen),
				-EINVAL);
			ck_assert_int_eq(rf_unpack("nope", 4, &out, &olen), -EINVAL);
			free(packed);
			free(in);
		}
	}
	/* frames back to back decode to the texts concatenated */
	char *a, *b, *both, *out;
	size_t alen, blen, olen;
	ck_assert_int_eq(rf_pack("hello hello hello", 17, &a, &alen), 0);
	ck_assert_int_eq(rf_pack(", world", 7, &b, &blen), 0);
	both = malloc(alen + blen);
	memcpy(both, a, alen);
	memcpy(both + alen, b, blen);
	ck_assert_int_eq(rf_unpack(both, alen + blen, &out, &olen), 0);
	ck_assert_str_eq(out, "hello hello hello, world");
	free(out);
	ck_assert_int_eq(rf_unpack(both, alen + blen - 1, &out, &olen), -EINVAL);
	free(a);
	free(b);
	free(both);
}
END_TEST

/* A frame packed with a dictionary reaches back into its text: it decodes with that dictionary
 * only, is smaller than the text packed alone, and is damaged like any other frame. */
static const struct rf_pack_dict *
test_dict(uint32_t id, void *userdata)
{
	return id == 7 ? userdata : NULL;
}

START_TEST(test_pack_dictionary)
{
	const char *dt = "{\"name\":\"gpu-0\",\"attributes\":{\"productName\":{\"string\":"
			 "\"NVIDIA H100 80GB HBM3\"},\"uuid\":{\"string\":\"GPU-0000\"}}}";
	const char *in = "{\"name\":\"gpu-1\",\"attributes\":{\"productName\":{\"string\":"
			 "\"NVIDIA H100 80GB HBM3\"},\"uuid\":{\"string\":\"GPU-1111\"}}}";
	struct rf_pack_dict d = { dt, strlen(dt) }, empty = { "", 0 };
	size_t n = strlen(in), plen, alen, olen;
	char *packed, *alone, *out;
	ck_assert_int_eq(rf_pack_with(in, n, &d, 7, &packed, &plen), 0);
	ck_assert_int_eq(rf_pack(in, n, &alone, &alen), 0);
	ck_assert(rf_is_packed(packed, plen));
	ck_assert_uint_lt(plen * 2, alen);
	ck_assert_int_eq(rf_unpack_with(packed, plen, test_dict, &d, &out, &olen), 0);
	ck_assert_uint_eq(olen, n);
	ck_assert_str_eq(out, in);
	free(out);
	/* without its dictionary, or truncated: not a frame railfit can read */
	ck_assert_int_eq(rf_unpack(packed, plen, &out, &olen), -EINVAL);
	ck_assert_int_eq(rf_unpack_with(packed, plen, test_dict, NULL, &out, &olen), -EINVAL);
	ck_assert_int_eq(rf_unpack_with(packed, plen - 1, test_dict, &d, &out, &olen), -EINVAL);
	ck_assert_int_eq(rf_unpack_with(packed, 23, test_dict, &d, &out, &olen), -EINVAL);
	/* with a dictionary frames without one still decode, back to back */
	char *both = malloc(alen + plen);
	memcpy(both, alone, alen);
	memcpy(both + alen, packed, plen);
	ck_assert_int_eq(rf_unpack_with(both, alen + plen, test_dict, &d, &out, &olen), 0);
	ck_assert_uint_eq(olen, 2 * n);
	ck_assert(memcmp(out, in, n) == 0 && memcmp(out + n, in, n) == 0);
	free(out);
	free(both);
	free(packed);
	/* an empty dictionary is none */
	ck_assert_int_eq(rf_pack_with(in, n, &empty, 7, &packed, &plen), 0);
	ck_assert_uint_eq(plen, alen);
	ck_assert(memcmp(packed, alone, plen) == 0);
	free(packed);
	free(alone);
	/* objects of one shape: the same object packs into the same blob; a second one refers
	 * back into the first one's text */
	json_error_t err;
	json_t *a = json_loads("{\"apiVersion\":\"test.railfit.io/v1\",\"spec\":{\"driver\":"
			       "\"gpu.nvidia.com\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":"
			       "{\"productName\":{\"string\":\"NVIDIA H100 80GB HBM3\"}}}]}}",
			       0, &err);
	json_t *b = json_deep_copy(a);
	json_string_set(
		json_object_get(
			json_array_get(json_object_get(json_object_get(b, "spec"), "devices"), 0),
			"name"),
		"gpu-1");
	json_t *ba = rf_snapshot_pack_object(a), *bb = rf_snapshot_pack_object(b),
	       *ba2 = rf_snapshot_pack_object(a);
	ck_assert(json_equal(ba, ba2));
	ck_assert(!json_equal(ba, bb));
	ck_assert_uint_lt(json_string_length(bb), 64);
	json_t *back = rf_snapshot_expand(bb, NULL);
	ck_assert(json_equal(back, b));
	json_decref(back);
	json_decref(ba);
	json_decref(bb);
	json_decref(ba2);
	json_decref(a);
	json_decref(b);
}
END_TEST

static int
item_cmp(const void *a, const void *b)
{
	char *x = json_dumps(*(json_t *const *)a, JSON_SORT_KEYS | JSON_COMPACT);
	char *y = json_dumps(*(json_t *const *)b, JSON_SORT_KEYS | JSON_COMPACT);
	int r = strcmp(x, y);
	free(x);
	free(y);
	return r;
}

/* the items of a dump, in a canonical order */
static json_t *
sorted_items(json_t *dump)
{
	json_t *items = json_object_get(dump, "items");
	size_t n = json_array_size(items);
	json_t **v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(items, i);
	qsort(v, n, sizeof(*v), item_cmp);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	return out;
}

/* Packing the objects of a built generation changes neither /debug/snapshot nor a decision, and
 * the model keeps no pointer into what was packed (ASan would see it). */
START_TEST(test_snapshot_pack_keeps_dump_and_decisions)
{
	struct rf_config cfg;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	struct rf_cluster_objects objs = { 0 };
	struct rf_cluster *c = NULL;
	char err[256];
	rf_config_init(&cfg);
	json_t *doc = rf_gen_demo();
	ck_assert_int_eq(rf_snapshot_split(doc, &objs, NULL, err, sizeof(err)), 0);
	json_decref(doc);
	/* strings and numbers the packer must write back exactly */
	json_array_append_new(
		objs.slices,
		parse("{\"metadata\":{\"name\":\"odd\"},\"spec\":{\"driver\":\"x.io\","
		      "\"pool\":{\"name\":\"p\\\"q\",\"generation\":1,"
		      "\"resourceSliceCount\":1},\"allNodes\":true,\"devices\":[{\"name\":"
		      "\"d\",\"attributes\":{\"s\":{\"string\":\"a\\\\b\\n\\u0001\\u00e9\\\"\"},"
		      "\"r\":{\"real\":0.1},\"w\":{\"real\":1e300},\"i\":{\"int\":-9007199254740993},"
		      "\"n\":{\"x\":null,\"t\":true,\"f\":false,\"e\":{},\"a\":[]}}}]}}"));
	ck_assert_int_eq(rf_cluster_build(&objs, &cfg, cel, &c), 0);
	json_t *before = rf_snapshot_dump(c);
	size_t n_pods = rf_cluster_n_pods(c);
	json_t **explained = calloc(n_pods + 1, sizeof(*explained));
	for (size_t i = 0; i < n_pods; i++)
		explained[i] = rf_explain_pod(c, rf_cluster_pod_at(c, i)->json, NULL);

	struct rf_snapshot_packed *p = NULL;
	ck_assert_int_eq(rf_snapshot_pack_prepare(&objs, &p), 0);
	json_t *replaced = rf_snapshot_pack_commit(&objs, p);
	ck_assert_uint_gt(json_array_size(replaced), 5);
	json_decref(replaced);
	ck_assert_uint_eq(json_array_size(objs.slices), 1); /* one blob */
	ck_assert(json_is_string(json_array_get(objs.slices, 0)));

	json_t *after = rf_snapshot_dump(c);
	json_t *a = sorted_items(before), *b = sorted_items(after);
	ck_assert_uint_gt(json_array_size(a), 10);
	ck_assert(json_equal(a, b));
	for (size_t i = 0; i < n_pods; i++) {
		json_t *e = rf_explain_pod(c, rf_cluster_pod_at(c, i)->json, NULL);
		ck_assert(json_equal(e, explained[i]));
		json_decref(e);
		json_decref(explained[i]);
	}
	free(explained);
	json_decref(a);
	json_decref(b);
	json_decref(before);
	json_decref(after);
	rf_cluster_unref(c);
	rf_cluster_objects_release(&objs);
	rf_cel_cache_free(cel);
	rf_config_release(&cfg);
}
END_TEST

Suite *slim_suite(void);

Suite *
slim_suite(void)
{
	Suite *s = suite_create("slim");
	TCase *tc = tcase_create("slim");
	tcase_add_test(tc, test_slim_pod);
	tcase_add_test(tc, test_slim_pod_extended_resources);
	tcase_add_test(tc, test_slim_node);
	tcase_add_test(tc, test_slim_dra_kinds);
	tcase_add_test(tc, test_slim_odd_types);
	tcase_add_test(tc, test_slim_text_like_tree);
	tcase_add_test(tc, test_intern_shares_and_prunes);
	tcase_add_test(tc, test_debug_snapshot_never_leaks_pod_secrets);
	tcase_add_test(tc, test_snapshot_file_paths_agree);
	tcase_add_test(tc, test_pack_roundtrip);
	tcase_add_test(tc, test_pack_dictionary);
	tcase_add_test(tc, test_snapshot_pack_keeps_dump_and_decisions);
	suite_add_tcase(s, tc);
	return s;
}
