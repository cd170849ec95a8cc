/* Tests of rf_gen_cluster() and rf_gen_demo(): determinism, object shapes against the reference
 * files in $RF_TEST_DATA/dra/, allocation consistency, and the states the demo promises. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "alloc/gen/gen_cluster.h"

#define MAX_DEV 16

Suite *gen_cluster_suite(void);
Suite *gen_oom_suite(void);

/* ---- helpers ----------------------------------------------------------------------------------
 */

static json_t *
load_ref(const char *file)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[4096];
	json_error_t err;
	json_t *j;

	ck_assert_msg(dir != NULL, "RF_TEST_DATA is not set");
	snprintf(path, sizeof(path), "%s/dra/%s", dir, file);
	j = json_load_file(path, 0, &err);
	ck_assert_msg(j != NULL, "%s: %s", path, err.text);
	return j;
}

static json_t *
gen(unsigned nodes, uint64_t seed, double used)
{
	struct rf_gen_options o = { .nodes = nodes, .seed = seed, .used = used };
	json_t *l = rf_gen_cluster(&o);
	ck_assert_ptr_nonnull(l);
	return l;
}

static const char *
str_at(json_t *j, const char *k1, const char *k2)
{
	json_t *v = json_object_get(j, k1);
	if (k2)
		v = json_object_get(v, k2);
	return json_string_value(v);
}

static const char *
kind_of(json_t *item)
{
	return str_at(item, "kind", NULL);
}

static const char *
name_of(json_t *item)
{
	return str_at(item, "metadata", "name");
}

static const char *
ns_of(json_t *item)
{
	const char *ns = str_at(item, "metadata", "namespace");
	return ns ? ns : "";
}

static const char *
label(json_t *obj, const char *key)
{
	return str_at(json_object_get(json_object_get(obj, "metadata"), "labels"), key, NULL);
}

static const char *
annotation(json_t *obj, const char *key)
{
	return str_at(json_object_get(json_object_get(obj, "metadata"), "annotations"), key, NULL);
}

static bool
is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static size_t
count_kind(json_t *list, const char *kind)
{
	size_t i, n = 0;
	json_t *it;
	json_array_foreach (json_object_get(list, "items"), i, it)
		if (is(kind_of(it), kind))
			n++;
	return n;
}

static json_t *
find(json_t *list, const char *kind, const char *ns, const char *name)
{
	size_t i;
	json_t *it;
	json_array_foreach (json_object_get(list, "items"), i, it)
		if (is(kind_of(it), kind) && is(ns_of(it), ns ? ns : "") && is(name_of(it), name))
			return it;
	return NULL;
}

static json_t *
find_slice(json_t *list, const char *node, const char *driver)
{
	size_t i;
	json_t *it;
	json_array_foreach (json_object_get(list, "items"), i, it)
		if (is(kind_of(it), "ResourceSlice") && is(str_at(it, "spec", "nodeName"), node) &&
		    is(str_at(it, "spec", "driver"), driver))
			return it;
	return NULL;
}

static json_t *
find_device(json_t *slice, const char *name)
{
	size_t i;
	json_t *d;
	json_array_foreach (json_object_get(json_object_get(slice, "spec"), "devices"), i, d)
		if (is(str_at(d, "name", NULL), name))
			return d;
	return NULL;
}

/* The value of a device attribute, whatever its type; NULL when absent. */
static json_t *
attr_val(json_t *dev, const char *key)
{
	json_t *a = json_object_get(json_object_get(dev, "attributes"), key);
	const char *k;
	json_t *v;
	json_object_foreach (a, k, v)
		return v;
	return NULL;
}

static const char *
attr_str(json_t *dev, const char *key)
{
	return json_string_value(attr_val(dev, key));
}

/* Empty when @p a and @p b have the same keys, else a description of the first difference. */
static const char *
key_diff(json_t *a, json_t *b, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	buf[0] = '\0';
	json_object_foreach (a, k, v)
		if (!json_object_get(b, k)) {
			snprintf(buf, len, "'%s' only in the generated object", k);
			return buf;
		}
	json_object_foreach (b, k, v)
		if (!json_object_get(a, k)) {
			snprintf(buf, len, "'%s' only in the reference", k);
			return buf;
		}
	return buf;
}

#define ck_assert_same_keys(a, b, what)                                                            \
	do {                                                                                       \
		char kd_[256];                                                                     \
		ck_assert_msg(*key_diff((a), (b), kd_, sizeof(kd_)) == '\0', "%s: %s", (what),     \
			      kd_);                                                                \
	} while (0)

/* Same attribute names, each with the same value type. */
static void
check_attr_shape(json_t *dev, json_t *ref_dev, const char *what)
{
	json_t *attrs = json_object_get(dev, "attributes"),
	       *ref = json_object_get(ref_dev, "attributes");
	const char *k;
	json_t *v;
	ck_assert_ptr_nonnull(attrs);
	ck_assert_same_keys(attrs, ref, what);
	json_object_foreach (attrs, k, v) {
		ck_assert_int_eq(json_object_size(v), 1);
		ck_assert_same_keys(v, json_object_get(ref, k), k);
	}
}

/* ---- a node's devices and what is allocated ------------------------------------------------- */

struct node_view {
	int n_gpus, n_nics;
	json_t *gpu[MAX_DEV], *nic[MAX_DEV]; /* borrowed devices */
	bool gpu_used[MAX_DEV], nic_used[MAX_DEV];
};

static int
index_of(json_t *const *devs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (is(str_at(devs[i], "name", NULL), name))
			return i;
	return -1;
}

static void
view_node(json_t *list, const char *node, struct node_view *v)
{
	json_t *gs = find_slice(list, node, "gpu.nvidia.com"),
	       *ns = find_slice(list, node, "dra.net");
	json_t *d, *it;
	size_t i, j;

	memset(v, 0, sizeof(*v));
	json_array_foreach (json_object_get(json_object_get(gs, "spec"), "devices"), i, d) {
		ck_assert_int_lt(v->n_gpus, MAX_DEV);
		v->gpu[v->n_gpus++] = d;
	}
	json_array_foreach (json_object_get(json_object_get(ns, "spec"), "devices"), i, d) {
		ck_assert_int_lt(v->n_nics, MAX_DEV);
		v->nic[v->n_nics++] = d;
	}
	json_array_foreach (json_object_get(list, "items"), i, it) {
		json_t *res, *r;
		if (!is(kind_of(it), "ResourceClaim"))
			continue;
		res = json_object_get(json_object_get(json_object_get(json_object_get(it, "status"),
								      "allocation"),
						      "devices"),
				      "results");
		json_array_foreach (res, j, r) {
			int k;
			if (!is(str_at(r, "pool", NULL), node))
				continue;
			if (is(str_at(r, "driver", NULL), "gpu.nvidia.com")) {
				k = index_of(v->gpu, v->n_gpus, str_at(r, "device", NULL));
				ck_assert_int_ge(k, 0);
				v->gpu_used[k] = true;
			} else {
				k = index_of(v->nic, v->n_nics, str_at(r, "device", NULL));
				ck_assert_int_ge(k, 0);
				v->nic_used[k] = true;
			}
		}
	}
}

static int
used_gpus(const struct node_view *v)
{
	int n = 0;
	for (int i = 0; i < v->n_gpus; i++)
		n += v->gpu_used[i];
	return n;
}

static bool
nic_is_rdma(const struct node_view *v, int i)
{
	return json_is_true(attr_val(v->nic[i], "dra.net/rdma"));
}

/* The free rdma NIC on the free GPU @p g's root, or -1. */
static int
free_nic_on_root(const struct node_view *v, int g)
{
	const char *root = attr_str(v->gpu[g], "resource.kubernetes.io/pcieRoot");
	for (int i = 0; i < v->n_nics; i++)
		if (!v->nic_used[i] && nic_is_rdma(v, i) &&
		    is(attr_str(v->nic[i], "resource.kubernetes.io/pcieRoot"), root))
			return i;
	return -1;
}

static int
count_free_aligned(const struct node_view *v)
{
	int n = 0;
	for (int g = 0; g < v->n_gpus; g++)
		if (!v->gpu_used[g] && free_nic_on_root(v, g) >= 0)
			n++;
	return n;
}

/* A GPU's NUMA node: that of an rdma NIC on its root (GPUs publish none), or -1. */
static int
gpu_numa(const struct node_view *v, int g)
{
	const char *root = attr_str(v->gpu[g], "resource.kubernetes.io/pcieRoot");
	for (int i = 0; i < v->n_nics; i++)
		if (is(attr_str(v->nic[i], "resource.kubernetes.io/pcieRoot"), root) &&
		    attr_val(v->nic[i], "dra.net/numaNode"))
			return (int)json_integer_value(attr_val(v->nic[i], "dra.net/numaNode"));
	return -1;
}

/* ---- invariants every generated snapshot keeps ---------------------------------------------- */

static json_t *
claim_of(json_t *list, json_t *pod, json_t *entry)
{
	const char *name = str_at(entry, "resourceClaimName", NULL);
	size_t i;
	json_t *s;
	if (!name) {
		json_array_foreach (
			json_object_get(json_object_get(pod, "status"), "resourceClaimStatuses"), i,
			s)
			if (is(str_at(s, "name", NULL), str_at(entry, "name", NULL)))
				name = str_at(s, "resourceClaimName", NULL);
	}
	ck_assert_msg(name != NULL, "pod %s: claim entry %s unresolved", name_of(pod),
		      str_at(entry, "name", NULL));
	return find(list, "ResourceClaim", ns_of(pod), name);
}

static void
check_invariants(json_t *list)
{
	json_t *items = json_object_get(list, "items"), *it, *devs = json_object(),
	       *taken = json_object();
	size_t i, j;

	ck_assert_str_eq(str_at(list, "apiVersion", NULL), "v1");
	ck_assert_str_eq(str_at(list, "kind", NULL), "List");
	ck_assert_str_eq(str_at(list, "metadata", "resourceVersion"), "");
	ck_assert(json_is_array(items));
	json_array_foreach (items, i, it) {
		const char *k = kind_of(it), *api = str_at(it, "apiVersion", NULL);
		ck_assert_ptr_nonnull(k);
		ck_assert_ptr_nonnull(api);
		ck_assert_ptr_nonnull(name_of(it));
		ck_assert_ptr_nonnull(str_at(it, "metadata", "uid"));
		if (is(k, "Node") || is(k, "Pod"))
			ck_assert_str_eq(api, "v1");
		else if (is(k, "ResourceSlice") || is(k, "ResourceClaim") || is(k, "DeviceClass"))
			ck_assert_str_eq(api, "resource.k8s.io/v1");
		else
			ck_abort_msg("unexpected kind %s", k);
		if (is(k, "ResourceSlice")) {
			json_t *d;
			const char *node = str_at(it, "spec", "nodeName");
			ck_assert_ptr_nonnull(find(list, "Node", NULL, node));
			ck_assert_str_eq(str_at(json_object_get(it, "spec"), "pool", "name"), node);
			json_array_foreach (json_object_get(json_object_get(it, "spec"), "devices"),
					    j, d) {
				char key[256];
				snprintf(key, sizeof(key), "%s/%s/%s", str_at(it, "spec", "driver"),
					 node, str_at(d, "name", NULL));
				ck_assert_msg(!json_object_get(devs, key), "device %s twice", key);
				json_object_set_new(devs, key, json_true());
			}
		}
	}
	/* every allocated device exists on the claim's node, once; the claim is reserved by a
	 * Running pod on that node which references it */
	json_array_foreach (items, i, it) {
		json_t *alloc, *r, *rsv, *pod, *e;
		const char *node;
		bool referenced = false;
		if (!is(kind_of(it), "ResourceClaim"))
			continue;
		alloc = json_object_get(json_object_get(it, "status"), "allocation");
		if (!alloc)
			continue;
		node = json_string_value(json_array_get(
			json_object_get(
				json_array_get(
					json_object_get(
						json_array_get(
							json_object_get(
								json_object_get(alloc,
										"nodeSelector"),
								"nodeSelectorTerms"),
							0),
						"matchFields"),
					0),
				"values"),
			0));
		ck_assert_ptr_nonnull(node);
		json_array_foreach (json_object_get(json_object_get(alloc, "devices"), "results"),
				    j, r) {
			char key[256];
			ck_assert_str_eq(str_at(r, "pool", NULL), node);
			snprintf(key, sizeof(key), "%s/%s/%s", str_at(r, "driver", NULL), node,
				 str_at(r, "device", NULL));
			ck_assert_msg(json_object_get(devs, key), "allocated %s not in any slice",
				      key);
			ck_assert_msg(!json_object_get(taken, key), "%s allocated twice", key);
			json_object_set_new(taken, key, json_true());
		}
		rsv = json_object_get(json_object_get(it, "status"), "reservedFor");
		ck_assert_int_eq(json_array_size(rsv), 1);
		ck_assert_str_eq(str_at(json_array_get(rsv, 0), "resource", NULL), "pods");
		pod = find(list, "Pod", ns_of(it), str_at(json_array_get(rsv, 0), "name", NULL));
		ck_assert_msg(pod != NULL, "claim %s reserved for a missing pod", name_of(it));
		ck_assert_str_eq(str_at(json_array_get(rsv, 0), "uid", NULL),
				 str_at(pod, "metadata", "uid"));
		ck_assert_str_eq(str_at(pod, "spec", "nodeName"), node);
		ck_assert_str_eq(str_at(pod, "status", "phase"), "Running");
		json_array_foreach (json_object_get(json_object_get(pod, "spec"), "resourceClaims"),
				    j, e)
			if (claim_of(list, pod, e) == it)
				referenced = true;
		ck_assert_msg(referenced, "pod %s does not reference claim %s", name_of(pod),
			      name_of(it));
	}
	/* every pod's claims exist; a Running pod's are allocated and reserved for it */
	json_array_foreach (items, i, it) {
		json_t *e;
		if (!is(kind_of(it), "Pod"))
			continue;
		ck_assert_str_eq(str_at(it, "spec", "schedulerName"), "railfit");
		json_array_foreach (json_object_get(json_object_get(it, "spec"), "resourceClaims"),
				    j, e) {
			json_t *c = claim_of(list, it, e), *st;
			ck_assert_msg(c != NULL, "pod %s: claim missing", name_of(it));
			st = json_object_get(c, "status");
			if (is(str_at(it, "status", "phase"), "Running")) {
				ck_assert_ptr_nonnull(json_object_get(st, "allocation"));
				ck_assert_str_eq(
					str_at(json_array_get(json_object_get(st, "reservedFor"),
							      0),
					       "name", NULL),
					name_of(it));
			} else {
				ck_assert_ptr_null(json_object_get(st, "allocation"));
				ck_assert_ptr_null(json_object_get(st, "reservedFor"));
			}
		}
	}
	json_decref(devs);
	json_decref(taken);
}

/* Shapes of the HGX slices against the reference files (same DGX wiring). */
static void
check_hgx_slices(json_t *list, const char *node)
{
	json_t *ref_gpu = load_ref("resourceslice-gpu-nvidia-8xh100.json"),
	       *ref_nic = load_ref("resourceslice-dranet-8xcx7-plus-frontend.json"),
	       *gs = find_slice(list, node, "gpu.nvidia.com"),
	       *ns = find_slice(list, node, "dra.net"), *rdevs, *d;
	char gen_name[128];
	size_t i;

	ck_assert_ptr_nonnull(gs);
	ck_assert_ptr_nonnull(ns);
	ck_assert_same_keys(gs, ref_gpu, "gpu slice");
	ck_assert_same_keys(json_object_get(gs, "metadata"), json_object_get(ref_gpu, "metadata"),
			    "gpu slice metadata");
	ck_assert_same_keys(json_object_get(gs, "spec"), json_object_get(ref_gpu, "spec"),
			    "gpu spec");
	ck_assert_same_keys(json_object_get(ns, "metadata"), json_object_get(ref_nic, "metadata"),
			    "nic slice metadata");
	ck_assert_same_keys(json_object_get(ns, "spec"), json_object_get(ref_nic, "spec"),
			    "nic spec");
	ck_assert_same_keys(
		json_array_get(json_object_get(json_object_get(gs, "metadata"), "ownerReferences"),
			       0),
		json_array_get(
			json_object_get(json_object_get(ref_gpu, "metadata"), "ownerReferences"),
			0),
		"ownerReferences");
	ck_assert_str_eq(str_at(json_array_get(json_object_get(json_object_get(gs, "metadata"),
							       "ownerReferences"),
					       0),
				"uid", NULL),
			 str_at(find(list, "Node", NULL, node), "metadata", "uid"));
	snprintf(gen_name, sizeof(gen_name), "%s-gpu.nvidia.com-", node);
	ck_assert_str_eq(str_at(gs, "metadata", "generateName"), gen_name);
	ck_assert_uint_eq(strlen(name_of(gs)), strlen(gen_name) + 5);
	ck_assert_int_eq(strncmp(name_of(gs), gen_name, strlen(gen_name)), 0);
	snprintf(gen_name, sizeof(gen_name), "%s-dra.net-", node);
	ck_assert_str_eq(str_at(ns, "metadata", "generateName"), gen_name);
	ck_assert_uint_eq(strlen(name_of(ns)), strlen(gen_name) + 5);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_object_get(json_object_get(gs, "spec"), "pool"),
				 "resourceSliceCount")),
			 1);

	/* GPUs: same names, attribute names and types, same wiring and product; own UUIDs */
	rdevs = json_object_get(json_object_get(ref_gpu, "spec"), "devices");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(gs, "spec"), "devices")),
			  json_array_size(rdevs));
	json_array_foreach (rdevs, i, d) {
		json_t *g = find_device(gs, str_at(d, "name", NULL));
		const char *k;
		json_t *v;
		ck_assert_msg(g != NULL, "%s missing", str_at(d, "name", NULL));
		check_attr_shape(g, d, "gpu attributes");
		ck_assert(
			json_equal(json_object_get(g, "capacity"), json_object_get(d, "capacity")));
		json_object_foreach (json_object_get(d, "attributes"), k, v)
			if (strcmp(k, "uuid") != 0)
				ck_assert_msg(json_equal(attr_val(g, k), attr_val(d, k)), "%s", k);
		ck_assert_str_ne(attr_str(g, "uuid"), attr_str(d, "uuid"));
		ck_assert_int_eq(strncmp(attr_str(g, "uuid"), "GPU-", 4), 0);
	}
	/* NICs: same names in the same (sorted) order, attribute sets by kind, same wiring */
	rdevs = json_object_get(json_object_get(ref_nic, "spec"), "devices");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(ns, "spec"), "devices")),
			  json_array_size(rdevs));
	json_array_foreach (rdevs, i, d) {
		json_t *n =
			json_array_get(json_object_get(json_object_get(ns, "spec"), "devices"), i);
		static const char *const same[] = {
			"dra.net/pciAddress", "dra.net/numaNode", "dra.net/rdma",
			"dra.net/rdmaDevice", "dra.net/ifName",   "dra.net/pciDevice",
			"dra.net/pciVendor",  "dra.net/mtu",      "resource.kubernetes.io/pcieRoot"
		};
		ck_assert_str_eq(str_at(n, "name", NULL), str_at(d, "name", NULL));
		check_attr_shape(n, d, str_at(d, "name", NULL));
		ck_assert_ptr_null(json_object_get(n, "capacity"));
		for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++)
			ck_assert_msg(json_equal(attr_val(n, same[k]), attr_val(d, same[k])) ||
					      (!attr_val(n, same[k]) && !attr_val(d, same[k])),
				      "%s %s", str_at(d, "name", NULL), same[k]);
	}
	json_decref(ref_gpu);
	json_decref(ref_nic);
}

/* ---- rf_gen_cluster ------------------------------------------------------------------------- */

START_TEST(test_gen_cluster_deterministic)
{
	json_t *a = gen(12, 42, 0.5), *b = gen(12, 42, 0.5), *c = gen(12, 43, 0.5),
	       *d = gen(12, 42, 0.25);
	char *sa = json_dumps(a, 0), *sb = json_dumps(b, 0), *sc = json_dumps(c, 0),
	     *sd = json_dumps(d, 0);

	ck_assert_ptr_nonnull(sa);
	ck_assert_ptr_nonnull(sb);
	ck_assert_ptr_nonnull(sc);
	ck_assert_ptr_nonnull(sd);
	ck_assert_str_eq(sa, sb);
	ck_assert_str_ne(sa, sc);
	ck_assert_str_ne(sa, sd);
	free(sa);
	free(sb);
	free(sc);
	free(sd);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
}
END_TEST

START_TEST(test_gen_cluster_counts)
{
	static const unsigned sizes[] = { 1, 2, 5, 33 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		json_t *l = gen(sizes[s], 7 + s, 0.4);
		char name[16];
		ck_assert_uint_eq(count_kind(l, "Node"), sizes[s]);
		ck_assert_uint_eq(count_kind(l, "ResourceSlice"), 2 * sizes[s]);
		ck_assert_uint_eq(count_kind(l, "DeviceClass"), 2);
		for (unsigned i = 1; i <= sizes[s]; i++) {
			snprintf(name, sizeof(name), "hgx-%03u", i);
			ck_assert_ptr_nonnull(find(l, "Node", NULL, name));
			ck_assert_ptr_nonnull(find_slice(l, name, "gpu.nvidia.com"));
			ck_assert_ptr_nonnull(find_slice(l, name, "dra.net"));
		}
		check_invariants(l);
		json_decref(l);
	}
}
END_TEST

START_TEST(test_gen_cluster_shapes)
{
	json_t *l = gen(3, 99, 0.5), *node = find(l, "Node", NULL, "hgx-002"), *labels, *st;
	json_t *ref_gc = load_ref("deviceclass-gpu.nvidia.com.json"),
	       *ref_nc = load_ref("deviceclass-rdma-nic-dranet.json");
	size_t i;
	json_t *c;
	bool ready = false;

	check_hgx_slices(l, "hgx-001");
	check_hgx_slices(l, "hgx-003");

	/* DeviceClasses exactly as the reference ones */
	ck_assert(json_equal(find(l, "DeviceClass", NULL, "gpu.nvidia.com"), ref_gc));
	ck_assert(json_equal(find(l, "DeviceClass", NULL, "rdma-nic"), ref_nc));

	/* a realistic Node */
	ck_assert_ptr_nonnull(node);
	labels = json_object_get(json_object_get(node, "metadata"), "labels");
	ck_assert_str_eq(str_at(labels, "kubernetes.io/hostname", NULL), "hgx-002");
	ck_assert_ptr_nonnull(str_at(labels, "node.kubernetes.io/instance-type", NULL));
	ck_assert_str_eq(str_at(labels, "nvidia.com/gpu.product", NULL), "NVIDIA-H100-80GB-HBM3");
	st = json_object_get(node, "status");
	ck_assert_ptr_nonnull(str_at(st, "capacity", "cpu"));
	ck_assert_ptr_nonnull(str_at(st, "allocatable", "memory"));
	ck_assert_ptr_nonnull(str_at(st, "nodeInfo", "kubeletVersion"));
	ck_assert_int_eq(strncmp(str_at(json_array_get(json_object_get(st, "addresses"), 0),
					"address", NULL),
				 "10.", 3),
			 0);
	json_array_foreach (json_object_get(st, "conditions"), i, c)
		if (is(str_at(c, "type", NULL), "Ready") && is(str_at(c, "status", NULL), "True"))
			ready = true;
	ck_assert(ready);

	json_decref(ref_gc);
	json_decref(ref_nc);
	json_decref(l);
}
END_TEST

/* An aligned GPU+NIC claim and its pod have the reference shapes. */
START_TEST(test_gen_cluster_claim_shape)
{
	json_t *l = gen(8, 5, 0.6), *ref = load_ref("resourceclaim-allocated-gpu-rdma-nic.json"),
	       *ref_pod = load_ref("pod-with-resourceclaims.json"), *it, *pair = NULL,
	       *gpu_only = NULL;
	size_t i;

	json_array_foreach (json_object_get(l, "items"), i, it) {
		json_t *reqs;
		if (!is(kind_of(it), "ResourceClaim"))
			continue;
		reqs = json_object_get(json_object_get(json_object_get(it, "spec"), "devices"),
				       "requests");
		if (json_array_size(reqs) == 2 &&
		    json_object_get(json_object_get(json_object_get(it, "spec"), "devices"),
				    "constraints"))
			pair = it;
		if (json_array_size(reqs) == 1)
			gpu_only = it;
	}
	ck_assert_ptr_nonnull(pair);
	ck_assert_ptr_nonnull(gpu_only);

	ck_assert_same_keys(pair, ref, "claim");
	ck_assert_same_keys(json_object_get(pair, "metadata"), json_object_get(ref, "metadata"),
			    "claim metadata");
	ck_assert(json_equal(json_object_get(pair, "spec"), json_object_get(ref, "spec")));
	ck_assert_same_keys(json_object_get(pair, "status"), json_object_get(ref, "status"),
			    "claim status");
	ck_assert_same_keys(json_object_get(json_object_get(pair, "status"), "allocation"),
			    json_object_get(json_object_get(ref, "status"), "allocation"),
			    "allocation");
	ck_assert(json_equal(json_object_get(json_object_get(pair, "metadata"), "finalizers"),
			     json_object_get(json_object_get(ref, "metadata"), "finalizers")));
	ck_assert(json_equal(json_object_get(json_object_get(pair, "metadata"), "annotations"),
			     json_object_get(json_object_get(ref, "metadata"), "annotations")));
	{
		json_t *res = json_object_get(
			json_object_get(
				json_object_get(json_object_get(pair, "status"), "allocation"),
				"devices"),
			"results");
		json_t *rres = json_object_get(
			json_object_get(
				json_object_get(json_object_get(ref, "status"), "allocation"),
				"devices"),
			"results");
		ck_assert_uint_eq(json_array_size(res), 2);
		ck_assert_same_keys(json_array_get(res, 0), json_array_get(rres, 0), "result");
		ck_assert_str_eq(str_at(json_array_get(res, 0), "request", NULL), "gpu");
		ck_assert_str_eq(str_at(json_array_get(res, 1), "request", NULL), "nic");
	}
	/* the pair is aligned: GPU and NIC on one root */
	{
		json_t *res = json_object_get(
			json_object_get(
				json_object_get(json_object_get(pair, "status"), "allocation"),
				"devices"),
			"results");
		const char *node = str_at(json_array_get(res, 0), "pool", NULL);
		json_t *gd = find_device(find_slice(l, node, "gpu.nvidia.com"),
					 str_at(json_array_get(res, 0), "device", NULL));
		json_t *nd = find_device(find_slice(l, node, "dra.net"),
					 str_at(json_array_get(res, 1), "device", NULL));
		ck_assert_str_eq(attr_str(gd, "resource.kubernetes.io/pcieRoot"),
				 attr_str(nd, "resource.kubernetes.io/pcieRoot"));
	}
	/* the generated claim name and the pod holding it */
	{
		json_t *owner = json_array_get(
			json_object_get(json_object_get(pair, "metadata"), "ownerReferences"), 0);
		json_t *pod = find(l, "Pod", "ml-train", str_at(owner, "name", NULL));
		json_t *rc = json_array_get(
			json_object_get(json_object_get(pod, "spec"), "resourceClaims"), 0);
		json_t *rcs = json_array_get(
			json_object_get(json_object_get(pod, "status"), "resourceClaimStatuses"),
			0);
		json_t *ctr = json_array_get(
			json_object_get(json_object_get(pod, "spec"), "containers"), 0);
		char prefix[128];
		ck_assert_ptr_nonnull(pod);
		ck_assert_str_eq(str_at(owner, "kind", NULL), "Pod");
		ck_assert_str_eq(str_at(owner, "uid", NULL), str_at(pod, "metadata", "uid"));
		snprintf(prefix, sizeof(prefix), "%s-gpu-nic-", name_of(pod));
		ck_assert_str_eq(str_at(pair, "metadata", "generateName"), prefix);
		ck_assert_uint_eq(strlen(name_of(pair)), strlen(prefix) + 5);
		ck_assert_int_eq(strncmp(name_of(pod), "job-", 4), 0);
		ck_assert_ptr_nonnull(strstr(name_of(pod), "-worker-"));
		ck_assert_ptr_nonnull(label(pod, "batch.kubernetes.io/job-name"));
		ck_assert_ptr_nonnull(str_at(rc, "resourceClaimTemplateName", NULL));
		ck_assert_str_eq(str_at(rc, "name", NULL), "gpu-nic");
		ck_assert_str_eq(str_at(rcs, "name", NULL), "gpu-nic");
		ck_assert_str_eq(str_at(rcs, "resourceClaimName", NULL), name_of(pair));
		ck_assert_str_eq(
			str_at(json_array_get(
				       json_object_get(json_object_get(ctr, "resources"), "claims"),
				       0),
			       "name", NULL),
			"gpu-nic");
		ck_assert_same_keys(rc,
				    json_array_get(json_object_get(json_object_get(ref_pod, "spec"),
								   "resourceClaims"),
						   0),
				    "pod resourceClaims entry");
		ck_assert_same_keys(
			rcs,
			json_array_get(json_object_get(json_object_get(ref_pod, "status"),
						       "resourceClaimStatuses"),
				       0),
			"pod resourceClaimStatuses entry");
		ck_assert_str_eq(str_at(pod, "status", "phase"), "Running");
		ck_assert_str_eq(str_at(pod, "spec", "schedulerName"), "railfit");
	}
	ck_assert_ptr_null(json_object_get(
		json_object_get(json_object_get(gpu_only, "spec"), "devices"), "constraints"));
	json_decref(ref);
	json_decref(ref_pod);
	json_decref(l);
}
END_TEST

START_TEST(test_gen_cluster_usage)
{
	static const double fractions[] = { 0.0, 0.05, 0.37, 0.5, 0.9, 1.0 };
	static const unsigned sizes[] = { 1, 7, 40 };
	for (size_t f = 0; f < sizeof(fractions) / sizeof(fractions[0]); f++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			unsigned n = sizes[s];
			json_t *l = gen(n, 1000 + f * 10 + s, fractions[f]);
			int used = 0;
			double want = fractions[f] * 8.0 * n;
			for (unsigned i = 1; i <= n; i++) {
				struct node_view v;
				char name[16];
				snprintf(name, sizeof(name), "hgx-%03u", i);
				view_node(l, name, &v);
				ck_assert_int_eq(v.n_gpus, 8);
				ck_assert_int_eq(v.n_nics, 9);
				used += used_gpus(&v);
			}
			ck_assert_msg(fabs(used - want) <= 0.5, "used %d GPUs for %.2f of %u nodes",
				      used, fractions[f], n);
			check_invariants(l);
			json_decref(l);
		}
}
END_TEST

/* Over a big enough cluster the spread has full, empty and partial nodes, and leftovers that
 * make alignment matter: a free NIC whose GPU is taken and a free GPU whose NIC is taken. */
START_TEST(test_gen_cluster_spread)
{
	json_t *l = gen(60, 2024, 0.5);
	int full = 0, empty = 0, partial = 0, nic_orphan = 0, gpu_orphan = 0;
	for (unsigned i = 1; i <= 60; i++) {
		struct node_view v;
		char name[16];
		int u;
		snprintf(name, sizeof(name), "hgx-%03u", i);
		view_node(l, name, &v);
		u = used_gpus(&v);
		full += u == 8;
		empty += u == 0;
		partial += u > 0 && u < 8;
		for (int g = 0; g < v.n_gpus; g++) {
			const char *root = attr_str(v.gpu[g], "resource.kubernetes.io/pcieRoot");
			for (int k = 0; k < v.n_nics; k++) {
				if (!is(attr_str(v.nic[k], "resource.kubernetes.io/pcieRoot"),
					root))
					continue;
				nic_orphan += v.gpu_used[g] && !v.nic_used[k];
				gpu_orphan += !v.gpu_used[g] && v.nic_used[k];
			}
		}
	}
	ck_assert_int_gt(full, 0);
	ck_assert_int_gt(empty, 0);
	ck_assert_int_gt(partial, 0);
	ck_assert_int_gt(nic_orphan, 0);
	ck_assert_int_gt(gpu_orphan, 0);
	json_decref(l);
}
END_TEST

START_TEST(test_gen_cluster_edges)
{
	json_t *l = gen(0, 1, 0.5);
	ck_assert_uint_eq(json_array_size(json_object_get(l, "items")), 2);
	json_decref(l);
	l = gen(2, 1, -3.0);
	ck_assert_uint_eq(count_kind(l, "ResourceClaim"), 0);
	ck_assert_uint_eq(count_kind(l, "Pod"), 0);
	json_decref(l);
	l = gen(2, 1, NAN);
	ck_assert_uint_eq(count_kind(l, "ResourceClaim"), 0);
	json_decref(l);
	l = gen(2, 1, 7.0);
	ck_assert_uint_eq(count_kind(l, "Pod"), 16);
	check_invariants(l);
	json_decref(l);
}
END_TEST

/* ---- OOM: every allocation failure gives NULL, never a crash or a leak ------------------------
 */

static long fail_after = -1, n_allocs;

static void *
failing_malloc(size_t n)
{
	if (fail_after >= 0 && n_allocs >= fail_after)
		return NULL;
	n_allocs++;
	return malloc(n);
}

static void
oom_sweep(json_t *(*make)(void), long max_steps)
{
	long total, step;
	json_t *l;

	json_set_alloc_funcs(failing_malloc, free);
	fail_after = -1;
	n_allocs = 0;
	l = make();
	total = n_allocs;
	ck_assert_ptr_nonnull(l);
	json_decref(l);
	step = total / max_steps + 1;
	for (long k = 0; k < total; k += step) {
		fail_after = k;
		n_allocs = 0;
		l = make();
		ck_assert_msg(l == NULL, "allocation %ld of %ld failed but a result came back", k,
			      total);
	}
	fail_after = -1;
	json_set_alloc_funcs(malloc, free);
}

/* The fleet shape of the benchmark: about P Running pods per node, half of them Job workers, the
 * GPU share as asked, and the same output for the same seed. */
START_TEST(test_gen_cluster_fleet_shape)
{
	struct rf_gen_options o = { .nodes = 200, .seed = 1, .used = 0.5, .pods_per_node = 2.4 };
	json_t *l = rf_gen_cluster(&o), *again = rf_gen_cluster(&o), *item;
	size_t i, pods = 0, workers = 0, gpus = 0, used = 0;
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(again);
	ck_assert(json_equal(l, again));
	json_array_foreach (json_object_get(l, "items"), i, item) {
		const char *kind = kind_of(item);
		if (strcmp(kind, "Pod") == 0) {
			pods++;
			workers +=
				json_object_get(json_object_get(json_object_get(item, "metadata"),
								"labels"),
						"batch.kubernetes.io/job-name") != NULL;
		} else if (strcmp(kind, "ResourceSlice") == 0 &&
			   strcmp(str_at(item, "spec", "driver"), "gpu.nvidia.com") == 0) {
			gpus += json_array_size(
				json_object_get(json_object_get(item, "spec"), "devices"));
		} else if (strcmp(kind, "ResourceClaim") == 0) {
			json_t *res = json_object_get(
				json_object_get(json_object_get(json_object_get(item, "status"),
								"allocation"),
						"devices"),
				"results");
			json_t *r;
			size_t k;
			json_array_foreach (res, k, r)
				used += strcmp(str_at(r, "driver", NULL), "gpu.nvidia.com") == 0;
		}
	}
	ck_assert_msg(pods >= 470 && pods <= 490, "%zu pods", pods);
	ck_assert_msg(workers * 10 >= pods * 4 && workers * 10 <= pods * 6, "%zu of %zu", workers,
		      pods);
	ck_assert_uint_eq(gpus, 1600);
	ck_assert_uint_eq(used, 800);
	json_decref(l);
	json_decref(again);
}
END_TEST

static json_t *
make_small(void)
{
	struct rf_gen_options o = { .nodes = 2, .seed = 3, .used = 0.6 };
	return rf_gen_cluster(&o);
}

START_TEST(test_gen_cluster_oom)
{
	oom_sweep(make_small, 1500);
}
END_TEST

START_TEST(test_gen_demo_oom)
{
	oom_sweep(rf_gen_demo, 300);
}
END_TEST

/* ---- rf_gen_demo ------------------------------------------------------------------------------
 */

START_TEST(test_gen_demo_nodes)
{
	static const char *const names[] = { "hgx-01", "hgx-02", "hgx-03", "hgx-04",
					     "hgx-05", "hgx-06", "hgx-07", "hgx-08",
					     "hgx-09", "hgx-10", "p4d-01", "p4d-02",
					     "l4-01",  "l4-02",  "cpu-01", "cpu-02" };
	json_t *a = rf_gen_demo(), *b = rf_gen_demo();
	char *sa, *sb;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	sa = json_dumps(a, 0);
	sb = json_dumps(b, 0);
	ck_assert_str_eq(sa, sb);
	free(sa);
	free(sb);
	ck_assert_uint_eq(count_kind(a, "Node"), sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(find(a, "Node", NULL, names[i]) != NULL, "%s", names[i]);
	check_invariants(a);
	check_hgx_slices(a, "hgx-01");
	check_hgx_slices(a, "hgx-04");
	for (int i = 1; i <= 8; i++) {
		char n[16];
		snprintf(n, sizeof(n), "hgx-%02d", i);
		ck_assert_ptr_nonnull(find_slice(a, n, "gpu.nvidia.com"));
		ck_assert_ptr_nonnull(find_slice(a, n, "dra.net"));
	}
	json_decref(a);
	json_decref(b);
}
END_TEST

START_TEST(test_gen_demo_hgx_states)
{
	json_t *l = rf_gen_demo();
	struct node_view v;
	bool numa_pair = false;

	ck_assert_ptr_nonnull(l);
	view_node(l, "hgx-01", &v);
	ck_assert_int_eq(used_gpus(&v), 0);
	ck_assert_int_eq(count_free_aligned(&v), 8);
	view_node(l, "hgx-02", &v);
	ck_assert_int_eq(used_gpus(&v), 0);

	/* hgx-03: 6 used; no free GPU has a free rdma NIC on its root; a NODE pair exists */
	view_node(l, "hgx-03", &v);
	ck_assert_int_eq(used_gpus(&v), 6);
	ck_assert_int_eq(count_free_aligned(&v), 0);
	for (int g = 0; g < v.n_gpus; g++)
		for (int k = 0; k < v.n_nics; k++)
			if (!v.gpu_used[g] && !v.nic_used[k] && nic_is_rdma(&v, k) &&
			    gpu_numa(&v, g) >= 0 &&
			    json_integer_value(attr_val(v.nic[k], "dra.net/numaNode")) ==
				    gpu_numa(&v, g))
				numa_pair = true;
	ck_assert(numa_pair);

	/* hgx-04: 7 used, exactly one aligned pair left: gpu-5 + pci-0000-c0-00-0 */
	view_node(l, "hgx-04", &v);
	ck_assert_int_eq(used_gpus(&v), 7);
	ck_assert_int_eq(count_free_aligned(&v), 1);
	{
		int g = index_of(v.gpu, v.n_gpus, "gpu-5");
		int k = free_nic_on_root(&v, g);
		ck_assert(!v.gpu_used[g]);
		ck_assert_int_ge(k, 0);
		ck_assert_str_eq(str_at(v.nic[k], "name", NULL), "pci-0000-c0-00-0");
	}

	/* hgx-05: gpu-0 taken alone; first fit for an unconstrained gpu+nic is gpu-1 + NIC 18 */
	view_node(l, "hgx-05", &v);
	ck_assert_int_eq(used_gpus(&v), 1);
	ck_assert(v.gpu_used[index_of(v.gpu, v.n_gpus, "gpu-0")]);
	ck_assert(!v.nic_used[index_of(v.nic, v.n_nics, "pci-0000-18-00-0")]);
	{
		int fg = -1, fk = -1;
		for (int g = 0; g < v.n_gpus && fg < 0; g++)
			if (!v.gpu_used[g])
				fg = g;
		for (int k = 0; k < v.n_nics && fk < 0; k++)
			if (!v.nic_used[k] && nic_is_rdma(&v, k))
				fk = k;
		ck_assert_str_eq(str_at(v.gpu[fg], "name", NULL), "gpu-1");
		ck_assert_str_eq(str_at(v.nic[fk], "name", NULL), "pci-0000-18-00-0");
		ck_assert_str_ne(attr_str(v.gpu[fg], "resource.kubernetes.io/pcieRoot"),
				 attr_str(v.nic[fk], "resource.kubernetes.io/pcieRoot"));
		ck_assert_int_eq(gpu_numa(&v, fg),
				 json_integer_value(attr_val(v.nic[fk], "dra.net/numaNode")));
	}

	/* hgx-06: everything used */
	view_node(l, "hgx-06", &v);
	ck_assert_int_eq(used_gpus(&v), 8);
	for (int k = 0; k < v.n_nics; k++)
		ck_assert(v.nic_used[k] || !nic_is_rdma(&v, k));

	/* hgx-07/08: half used, in aligned pairs */
	view_node(l, "hgx-07", &v);
	ck_assert_int_eq(used_gpus(&v), 4);
	ck_assert_int_eq(count_free_aligned(&v), 4);
	view_node(l, "hgx-08", &v);
	ck_assert_int_eq(used_gpus(&v), 4);
	ck_assert_int_eq(count_free_aligned(&v), 4);

	/* a running pod of group llm-a on hgx-07 */
	{
		json_t *p = find(l, "Pod", "demo", "llm-a-worker-0");
		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(str_at(p, "spec", "nodeName"), "hgx-07");
		ck_assert_str_eq(label(p, "railfit.io/group"), "llm-a");
	}
	json_decref(l);
}
END_TEST

START_TEST(test_gen_demo_other_nodes)
{
	json_t *l = rf_gen_demo(), *d, *s;
	struct node_view v;
	size_t i;

	ck_assert_ptr_nonnull(l);
	/* p4d: 8 A100 on 4 roots; per root one EFA (rdma) and one ENA (no rdma) */
	for (int p = 1; p <= 2; p++) {
		char name[16];
		int efa = 0, ena = 0;
		snprintf(name, sizeof(name), "p4d-%02d", p);
		view_node(l, name, &v);
		ck_assert_int_eq(v.n_gpus, 8);
		ck_assert_int_eq(v.n_nics, 8);
		for (int g = 0; g < v.n_gpus; g++) {
			const char *root = attr_str(v.gpu[g], "resource.kubernetes.io/pcieRoot");
			ck_assert_str_eq(attr_str(v.gpu[g], "productName"),
					 "NVIDIA A100-SXM4-40GB");
			ck_assert_str_eq(
				str_at(json_object_get(json_object_get(v.gpu[g], "capacity"),
						       "memory"),
				       "value", NULL),
				"40Gi");
			ck_assert(is(root, "pci0000:10") || is(root, "pci0000:20") ||
				  is(root, "pci0000:90") || is(root, "pci0000:a0"));
		}
		for (int k = 0; k < v.n_nics; k++) {
			if (nic_is_rdma(&v, k)) {
				efa++;
				ck_assert_str_eq(attr_str(v.nic[k], "dra.net/pciDevice"),
						 "Elastic Fabric Adapter (EFA)");
			} else {
				ena++;
			}
			ck_assert_ptr_nonnull(
				attr_str(v.nic[k], "resource.kubernetes.io/pcieRoot"));
		}
		ck_assert_int_eq(efa, 4);
		ck_assert_int_eq(ena, 4);
		if (p == 1)
			ck_assert_int_eq(used_gpus(&v), 0);
		else
			ck_assert(used_gpus(&v) > 0 && used_gpus(&v) < 8);
	}
	/* L4: four GPUs, no dranet slice */
	for (int p = 1; p <= 2; p++) {
		char name[16];
		snprintf(name, sizeof(name), "l4-%02d", p);
		ck_assert_ptr_null(find_slice(l, name, "dra.net"));
		view_node(l, name, &v);
		ck_assert_int_eq(v.n_gpus, 4);
		ck_assert_str_eq(attr_str(v.gpu[0], "productName"), "NVIDIA L4");
	}
	/* CPU nodes: no slices */
	ck_assert_ptr_null(find_slice(l, "cpu-01", "gpu.nvidia.com"));
	ck_assert_ptr_null(find_slice(l, "cpu-01", "dra.net"));
	ck_assert_ptr_null(find_slice(l, "cpu-02", "gpu.nvidia.com"));
	ck_assert_ptr_null(find_slice(l, "cpu-02", "dra.net"));
	/* hgx-09: older dranet without dra.net/numaNode, GPUs free */
	s = find_slice(l, "hgx-09", "dra.net");
	ck_assert_ptr_nonnull(s);
	json_array_foreach (json_object_get(json_object_get(s, "spec"), "devices"), i, d) {
		ck_assert_ptr_null(attr_val(d, "dra.net/numaNode"));
		ck_assert_ptr_nonnull(attr_val(d, "resource.kubernetes.io/pcieRoot"));
	}
	view_node(l, "hgx-09", &v);
	ck_assert_int_eq(used_gpus(&v), 0);
	/* hgx-10: two allocated NICs lost their host-side attributes, kept PCI ones */
	view_node(l, "hgx-10", &v);
	{
		int lost = 0;
		for (int k = 0; k < v.n_nics; k++) {
			bool gone = !attr_val(v.nic[k], "dra.net/ifName");
			if (gone) {
				static const char *const host[] = { "dra.net/mac", "dra.net/ipv4",
								    "dra.net/mtu",
								    "dra.net/state" };
				lost++;
				ck_assert(v.nic_used[k]);
				for (size_t h = 0; h < 4; h++)
					ck_assert_ptr_null(attr_val(v.nic[k], host[h]));
				ck_assert_ptr_nonnull(
					attr_val(v.nic[k], "resource.kubernetes.io/pcieRoot"));
				ck_assert_ptr_nonnull(attr_val(v.nic[k], "dra.net/pciAddress"));
			}
		}
		ck_assert_int_eq(lost, 2);
	}
	/* the front-end annotation on l4-02, and the loaders on cpu-01 */
	ck_assert_str_eq(
		annotation(find(l, "Node", NULL, "l4-02"), "railfit.io/frontend-bandwidth"), "25G");
	ck_assert_str_eq(str_at(find(l, "Pod", "etl", "ingest-0"), "spec", "nodeName"), "cpu-01");
	json_decref(l);
}
END_TEST

static json_t *
pending_pod(json_t *l, const char *name)
{
	json_t *p = find(l, "Pod", "demo", name);
	ck_assert_msg(p != NULL, "demo/%s missing", name);
	ck_assert_str_eq(str_at(p, "status", "phase"), "Pending");
	ck_assert_ptr_null(str_at(p, "spec", "nodeName"));
	ck_assert_str_eq(str_at(p, "spec", "schedulerName"), "railfit");
	return p;
}

/* The pod's only claim (by resourceClaimName), unallocated. */
static json_t *
pending_claim(json_t *l, json_t *pod, const char *claim)
{
	json_t *rcs = json_object_get(json_object_get(pod, "spec"), "resourceClaims"), *c;
	ck_assert_uint_eq(json_array_size(rcs), 1);
	ck_assert_str_eq(str_at(json_array_get(rcs, 0), "resourceClaimName", NULL), claim);
	c = find(l, "ResourceClaim", "demo", claim);
	ck_assert_msg(c != NULL, "claim %s missing", claim);
	ck_assert(json_is_object(json_object_get(c, "status")));
	ck_assert_ptr_null(json_object_get(json_object_get(c, "status"), "allocation"));
	ck_assert_ptr_null(json_object_get(json_object_get(c, "status"), "reservedFor"));
	return c;
}

START_TEST(test_gen_demo_pending)
{
	json_t *l = rf_gen_demo(), *p, *c, *ref, *devs, *reqs;
	size_t i;
	json_t *r;

	ck_assert_ptr_nonnull(l);
	p = pending_pod(l, "trainer-aligned");
	c = pending_claim(l, p, "trainer-aligned-gpu-nic");
	ck_assert_str_eq(annotation(p, "railfit.io/min-alignment"), "PHB");
	ck_assert_str_eq(label(p, "railfit.io/group"), "llm-a");
	ref = load_ref("resourceclaim-allocated-gpu-rdma-nic.json");
	ck_assert(json_equal(json_object_get(c, "spec"), json_object_get(ref, "spec")));
	json_decref(ref);

	p = pending_pod(l, "trainer-loose");
	c = pending_claim(l, p, "trainer-loose-gpu-nic");
	devs = json_object_get(json_object_get(c, "spec"), "devices");
	ck_assert_uint_eq(json_array_size(json_object_get(devs, "requests")), 2);
	ck_assert_ptr_null(json_object_get(devs, "constraints"));

	p = pending_pod(l, "trainer-2pairs");
	c = pending_claim(l, p, "trainer-2pairs-gpu-nic");
	ref = load_ref("resourceclaimtemplate-2pairs-pcieroot.json");
	devs = json_object_get(json_object_get(c, "spec"), "devices");
	{
		json_t *rdevs = json_object_get(
			json_object_get(json_object_get(ref, "spec"), "spec"), "devices");
		json_t *rreqs = json_object_get(rdevs, "requests");
		ck_assert(json_equal(json_object_get(devs, "constraints"),
				     json_object_get(rdevs, "constraints")));
		reqs = json_object_get(devs, "requests");
		ck_assert_uint_eq(json_array_size(reqs), 4);
		json_array_foreach (rreqs, i, r) {
			json_t *mine = json_array_get(reqs, i);
			ck_assert_str_eq(str_at(mine, "name", NULL), str_at(r, "name", NULL));
			ck_assert_str_eq(str_at(mine, "exactly", "deviceClassName"),
					 str_at(r, "exactly", "deviceClassName"));
			ck_assert_str_eq(str_at(mine, "exactly", "allocationMode"), "ExactCount");
		}
	}
	json_decref(ref);

	p = pending_pod(l, "inference-1gpu");
	c = pending_claim(l, p, "inference-1gpu-gpu");
	reqs = json_object_get(json_object_get(json_object_get(c, "spec"), "devices"), "requests");
	ck_assert_uint_eq(json_array_size(reqs), 1);
	ck_assert_str_eq(
		str_at(json_object_get(
			       json_array_get(
				       json_object_get(
					       json_object_get(json_array_get(reqs, 0), "exactly"),
					       "selectors"),
				       0),
			       "cel"),
		       "expression", NULL),
		"device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100')");
	ck_assert_str_eq(str_at(json_array_get(reqs, 0), "exactly", "deviceClassName"),
			 "gpu.nvidia.com");

	p = pending_pod(l, "loader");
	ck_assert_ptr_null(json_object_get(json_object_get(p, "spec"), "resourceClaims"));
	ck_assert_str_eq(annotation(p, "kubernetes.io/egress-bandwidth"), "20G");
	ck_assert_str_eq(annotation(p, "kubernetes.io/ingress-bandwidth"), "40G");

	p = pending_pod(l, "web");
	ck_assert_ptr_null(json_object_get(json_object_get(p, "spec"), "resourceClaims"));
	ck_assert_ptr_null(json_object_get(json_object_get(p, "metadata"), "annotations"));

	/* exactly those six pods are pending */
	{
		int pending = 0;
		json_array_foreach (json_object_get(l, "items"), i, r)
			if (is(kind_of(r), "Pod") && is(str_at(r, "status", "phase"), "Pending"))
				pending++;
		ck_assert_int_eq(pending, 6);
	}
	json_decref(l);
}
END_TEST

/* --blocks: consecutive nodes in blocks of (about) equal size, four blocks a spine; the rest of
 * the output is what it is without the option. */
START_TEST(test_gen_cluster_blocks)
{
	struct rf_gen_options o = { .nodes = 10, .seed = 4, .used = 0.5, .blocks = 3 };
	json_t *with = rf_gen_cluster(&o), *without = gen(10, 4, 0.5);
	static const char *const want[10] = {
		"block-0", "block-0", "block-0", "block-0", "block-1",
		"block-1", "block-1", "block-2", "block-2", "block-2"
	};
	size_t i, k = 0;
	json_t *it;
	ck_assert_ptr_nonnull(with);
	json_array_foreach (json_object_get(with, "items"), i, it) {
		if (strcmp(kind_of(it), "Node") != 0)
			continue;
		json_t *labels = json_object_get(json_object_get(it, "metadata"), "labels");
		ck_assert_uint_lt(k, 10);
		ck_assert_str_eq(str_at(labels, "network.topology.kubernetes.io/block", NULL),
				 want[k]);
		ck_assert_str_eq(str_at(labels, "network.topology.kubernetes.io/spine", NULL),
				 "spine-0");
		json_t *other = json_array_get(json_object_get(without, "items"), i);
		json_t *ol = json_object_get(json_object_get(other, "metadata"), "labels");
		ck_assert_ptr_null(json_object_get(ol, "network.topology.kubernetes.io/block"));
		json_object_del(labels, "network.topology.kubernetes.io/block");
		json_object_del(labels, "network.topology.kubernetes.io/spine");
		k++;
	}
	ck_assert_uint_eq(k, 10);
	ck_assert(json_equal(with, without));
	json_decref(with);
	json_decref(without);

	/* nine blocks: the spines take four blocks each */
	o = (struct rf_gen_options){ .nodes = 9, .seed = 1, .used = 0.5, .blocks = 9 };
	with = rf_gen_cluster(&o);
	k = 0;
	json_array_foreach (json_object_get(with, "items"), i, it)
		if (strcmp(kind_of(it), "Node") == 0) {
			char b[32], sp[32];
			json_t *labels = json_object_get(json_object_get(it, "metadata"), "labels");
			snprintf(b, sizeof(b), "block-%zu", k);
			snprintf(sp, sizeof(sp), "spine-%zu", k / 4);
			ck_assert_str_eq(
				str_at(labels, "network.topology.kubernetes.io/block", NULL), b);
			ck_assert_str_eq(
				str_at(labels, "network.topology.kubernetes.io/spine", NULL), sp);
			k++;
		}
	ck_assert_uint_eq(k, 9);
	json_decref(with);
}
END_TEST

/* --cpu-slices: a dra.cpu slice per node in the DRA CPU driver's grouped mode (the shape of
 * test/data/dra/resourceslice-dra-cpu-grouped.json) and the DeviceClass dra.cpu. */
START_TEST(test_gen_cluster_cpu_slices)
{
	struct rf_gen_options o = { .nodes = 2, .seed = 1, .used = 0.5, .cpu_slices = true };
	json_t *l = rf_gen_cluster(&o), *want = load_ref("resourceslice-dra-cpu-grouped.json");
	size_t i, slices = 0, classes = 0;
	json_t *it;
	ck_assert_ptr_nonnull(l);
	json_array_foreach (json_object_get(l, "items"), i, it) {
		if (strcmp(kind_of(it), "DeviceClass") == 0)
			classes += strcmp(str_at(it, "metadata", "name"), "dra.cpu") == 0;
		if (strcmp(kind_of(it), "ResourceSlice") != 0 ||
		    strcmp(str_at(it, "spec", "driver"), "dra.cpu") != 0)
			continue;
		slices++;
		json_t *devs = json_object_get(json_object_get(it, "spec"), "devices");
		json_t *ref = json_object_get(json_object_get(want, "spec"), "devices");
		ck_assert_uint_eq(json_array_size(devs), 2);
		for (size_t k = 0; k < 2; k++) {
			json_t *d = json_array_get(devs, k), *r = json_array_get(ref, k);
			ck_assert_str_eq(str_at(d, "name", NULL), str_at(r, "name", NULL));
			ck_assert(json_is_true(json_object_get(d, "allowMultipleAllocations")));
			/* the same attribute names as the driver publishes */
			const char *key;
			json_t *v;
			json_object_foreach (json_object_get(r, "attributes"), key, v)
				ck_assert_msg(
					json_object_get(json_object_get(d, "attributes"), key),
					"no %s", key);
			ck_assert_int_eq(json_integer_value(json_object_get(
						 json_object_get(json_object_get(d, "attributes"),
								 "resource.kubernetes.io/numaNode"),
						 "int")),
					 (json_int_t)k);
			ck_assert_str_eq(
				str_at(json_object_get(d, "capacity"), "dra.cpu/cpu", "value"),
				"112");
		}
	}
	ck_assert_uint_eq(slices, 2);
	ck_assert_uint_eq(classes, 1);
	json_decref(l);
	json_decref(want);
}
END_TEST

Suite *
gen_cluster_suite(void)
{
	Suite *s = suite_create("gen_cluster");
	TCase *tc = tcase_create("cluster");

	tcase_add_test(tc, test_gen_cluster_deterministic);
	tcase_add_test(tc, test_gen_cluster_counts);
	tcase_add_test(tc, test_gen_cluster_shapes);
	tcase_add_test(tc, test_gen_cluster_claim_shape);
	tcase_add_test(tc, test_gen_cluster_usage);
	tcase_add_test(tc, test_gen_cluster_spread);
	tcase_add_test(tc, test_gen_cluster_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("demo");
	tcase_add_test(tc, test_gen_demo_nodes);
	tcase_add_test(tc, test_gen_demo_hgx_states);
	tcase_add_test(tc, test_gen_demo_other_nodes);
	tcase_add_test(tc, test_gen_demo_pending);
	tcase_add_test(tc, test_gen_cluster_fleet_shape);
	tcase_add_test(tc, test_gen_cluster_blocks);
	tcase_add_test(tc, test_gen_cluster_cpu_slices);
	suite_add_tcase(s, tc);
	return s;
}

/* The allocation-failure sweeps are a suite of their own, a meson test of their own: the longest
 * part of this file under valgrind (~7 million allocations each), run alongside the rest. */
Suite *
gen_oom_suite(void)
{
	Suite *s = suite_create("gen_oom");
	TCase *tc = tcase_create("oom");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gen_cluster_oom);
	tcase_add_test(tc, test_gen_demo_oom);
	suite_add_tcase(s, tc);
	return s;
}
