#include "test/unit/alloc/alloc_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "topology/annotation.h"

const char *const SPEC_GPU_NIC_ALIGNED =
	"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
	"\"allocationMode\":\"ExactCount\",\"count\":1}},{\"name\":\"nic\",\"exactly\":{"
	"\"deviceClassName\":\"rdma-nic\",\"allocationMode\":\"ExactCount\",\"count\":1}}],"
	"\"constraints\":[{\"requests\":[\"gpu\",\"nic\"],\"matchAttribute\":"
	"\"resource.kubernetes.io/pcieRoot\"}]}}";
const char *const SPEC_GPU_NIC_LOOSE =
	"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
	"\"count\":1}},{\"name\":\"nic\",\"exactly\":{\"deviceClassName\":\"rdma-nic\",\"count\":1}}]}}";
const char *const SPEC_GPU_ONLY =
	"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
	"\"count\":1}}]}}";

char *
fixture_read(const char *relpath)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "test/data", relpath);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static char *
replace_all(const char *s, const char *from, const char *to)
{
	size_t n = 0, fl = strlen(from), tl = strlen(to);
	for (const char *p = s; (p = strstr(p, from)); p += fl)
		n++;
	char *out = malloc(strlen(s) + n * (tl + 1) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	const char *p = s, *q;
	while ((q = strstr(p, from))) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, tl);
		o += tl;
		p = q + fl;
	}
	strcpy(o, p);
	return out;
}

void
fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	rf_config_init(&f->cfg);
	/* the cases written for the 1.35 allocator (a snapshot's default is now the newest);
	 * the 1.36/1.37 cases set their version */
	f->cfg.kube.dra_version = RF_DRA_1_35;
	f->cel = rf_cel_cache_new();
	f->objs.nodes = json_array();
	f->objs.pods = json_array();
	f->objs.slices = json_array();
	f->objs.claims = json_array();
	f->objs.classes = json_array();
	f->objs.templates = json_array();
	f->objs.taint_rules = json_array();
	const char *classes[] = { "dra/deviceclass-gpu.nvidia.com.json",
				  "dra/deviceclass-rdma-nic-dranet.json",
				  "dra/deviceclass-nic-bandwidth.json" };
	for (size_t i = 0; i < 3; i++) {
		char *t = fixture_read(classes[i]);
		fixture_add_json(f, t);
		free(t);
	}
}

void
fixture_add_json(struct fixture *f, const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	ck_assert_msg(o != NULL, "bad fixture JSON: %s", err.text);
	const char *kind = json_string_value(json_object_get(o, "kind"));
	ck_assert_ptr_nonnull(kind);
	json_t *arr = strcmp(kind, "Node") == 0                    ? f->objs.nodes
		      : strcmp(kind, "Pod") == 0                   ? f->objs.pods
		      : strcmp(kind, "ResourceSlice") == 0         ? f->objs.slices
		      : strcmp(kind, "ResourceClaim") == 0         ? f->objs.claims
		      : strcmp(kind, "DeviceClass") == 0           ? f->objs.classes
		      : strcmp(kind, "ResourceClaimTemplate") == 0 ? f->objs.templates
		      : strcmp(kind, "DeviceTaintRule") == 0       ? f->objs.taint_rules
								   : NULL;
	ck_assert_ptr_nonnull(arr);
	json_array_append_new(arr, o);
}

void
fixture_add_hgx(struct fixture *f, const char *name)
{
	char node[512];
	snprintf(
		node, sizeof(node),
		"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"labels\":"
		"{\"kubernetes.io/hostname\":\"%s\"}},\"status\":{\"conditions\":[{\"type\":"
		"\"Ready\",\"status\":\"True\"}]}}",
		name, name);
	fixture_add_json(f, node);
	const char *files[] = { "dra/resourceslice-gpu-nvidia-8xh100.json",
				"dra/resourceslice-dranet-8xcx7-plus-frontend.json" };
	for (size_t i = 0; i < 2; i++) {
		char *t = fixture_read(files[i]);
		char *r = replace_all(t, "hgx-h100-node-01", name);
		fixture_add_json(f, r);
		free(r);
		free(t);
	}
}

void
fixture_add_claim(struct fixture *f, const char *ns, const char *name, const char *spec_json,
		  const char *alloc_node, const char *const *devices)
{
	json_error_t err;
	json_t *spec = json_loads(spec_json, 0, &err);
	ck_assert_msg(spec != NULL, "bad spec: %s", err.text);
	json_t *claim = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "kind", "ResourceClaim",
				  "apiVersion", "resource.k8s.io/v1", "metadata", "name", name,
				  "namespace", ns, "uid", name, "spec", spec);
	ck_assert_ptr_nonnull(claim);
	if (alloc_node) {
		json_t *results = json_array();
		for (size_t i = 0; devices && devices[i]; i++) {
			char drv[128];
			const char *colon = strchr(devices[i], ':');
			ck_assert_ptr_nonnull(colon);
			snprintf(drv, sizeof(drv), "%.*s", (int)(colon - devices[i]), devices[i]);
			const char *req = strcmp(drv, "dra.net") == 0 ? "nic" : "gpu";
			json_array_append_new(results, json_pack("{s:s, s:s, s:s, s:s}", "request",
								 req, "driver", drv, "pool",
								 alloc_node, "device", colon + 1));
		}
		json_t *status = json_pack(
			"{s:{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "allocation", "devices",
			"results", results, "nodeSelector", "nodeSelectorTerms", "matchFields",
			"key", "metadata.name", "operator", "In", "values", alloc_node);
		ck_assert_ptr_nonnull(status);
		json_object_set_new(claim, "status", status);
	}
	json_array_append_new(f->objs.claims, claim);
}

struct rf_cluster *
fixture_build(struct fixture *f)
{
	f->c = rf_cluster_unref(f->c);
	ck_assert_int_eq(rf_cluster_build(&f->objs, &f->cfg, f->cel, &f->c), 0);
	return f->c;
}

void
fixture_release(struct fixture *f)
{
	rf_cluster_unref(f->c);
	json_decref(f->objs.nodes);
	json_decref(f->objs.pods);
	json_decref(f->objs.slices);
	json_decref(f->objs.claims);
	json_decref(f->objs.classes);
	json_decref(f->objs.templates);
	json_decref(f->objs.taint_rules);
	rf_cel_cache_free(f->cel);
	rf_config_release(&f->cfg);
}

json_t *
fixture_pod(const char *name, const char *claim, const char *annotations)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"annotations\":{%s}},"
		 "\"spec\":{\"resourceClaims\":[%s%s%s]}}",
		 name, annotations ? annotations : "",
		 claim ? "{\"name\":\"c\",\"resourceClaimName\":\"" : "", claim ? claim : "",
		 claim ? "\"}" : "");
	json_t *p = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(p);
	return p;
}

const char *const FIXTURE_L4_PCI[] = { "0000:18:00.0", "0000:19:00.0", "0000:3a:00.0",
				       "0000:3b:00.0", "0000:9a:00.0", "0000:9b:00.0",
				       "0000:ba:00.0", "0000:bb:00.0" };
const char *const FIXTURE_L4_ROOTS[] = { "pci0000:15", "pci0000:15", "pci0000:37", "pci0000:37",
					 "pci0000:97", "pci0000:97", "pci0000:b7", "pci0000:b7" };
const int FIXTURE_L4_NUMA[] = { 0, 0, 0, 0, 1, 1, 1, 1 };

/* A Node with labels (JSON members, may be NULL) and annotations (key, value or NULL). */
void
fixture_add_node(struct fixture *f, const char *name, const char *labels, const char *ann_value)
{
	json_t *n = json_pack("{s:s, s:s, s:{s:s, s:{}, s:{}}, s:{s:[{s:s, s:s}]}}", "kind", "Node",
			      "apiVersion", "v1", "metadata", "name", name, "labels", "annotations",
			      "status", "conditions", "type", "Ready", "status", "True");
	ck_assert_ptr_nonnull(n);
	if (labels) {
		char buf[512];
		snprintf(buf, sizeof(buf), "{%s}", labels);
		json_t *l = json_loads(buf, 0, NULL);
		ck_assert_ptr_nonnull(l);
		json_object_set_new(json_object_get(n, "metadata"), "labels", l);
	}
	if (ann_value)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
				    RF_TOPO_ANNOTATION_KEY, json_string(ann_value));
	json_array_append_new(f->objs.nodes, n);
}

/* A gpu.nvidia.com slice: one GPU per PCI address, with a pcieRoot and NUMA node when given. */
void
fixture_add_gpus(struct fixture *f, const char *node, size_t n, const char *const *pci,
		 const char *const *roots, const int *numa)
{
	json_t *devs = json_array();
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gpu-%zu", i);
		json_t *attrs = json_pack("{s:{s:s}, s:{s:s}}", "type", "string", "gpu",
					  "resource.kubernetes.io/pciBusID", "string", pci[i]);
		if (roots)
			json_object_set_new(attrs, "resource.kubernetes.io/pcieRoot",
					    json_pack("{s:s}", "string", roots[i]));
		if (numa)
			json_object_set_new(attrs, "resource.kubernetes.io/numaNode",
					    json_pack("{s:i}", "int", numa[i]));
		json_array_append_new(devs,
				      json_pack("{s:s, s:o}", "name", name, "attributes", attrs));
	}
	json_t *s = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:i, s:i}, s:s, s:o}}", "kind",
			      "ResourceSlice", "apiVersion", "resource.k8s.io/v1", "metadata",
			      "name", node, "spec", "driver", "gpu.nvidia.com", "pool", "name",
			      node, "generation", 1, "resourceSliceCount", 1, "nodeName", node,
			      "devices", devs);
	ck_assert_ptr_nonnull(s);
	json_array_append_new(f->objs.slices, s);
}
