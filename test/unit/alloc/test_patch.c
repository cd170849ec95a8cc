/* A layout patched from the previous one (alloc/model/model-patch.c) reads exactly like a layout
 * built in full from the same objects: random sequences of ResourceSlice, Node and DeviceClass
 * changes (and claim and pod events between them) over a small fleet from alloc/gen, each
 * generation compared with a full build (nodes, pools, devices, attributes, taints, rails, usage,
 * class selector results, claims, warnings) and with explain documents of pending pods. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/explain.h"
#include "alloc/gen/gen_cluster.h"
#include "alloc/memo.h"
#include "alloc/model/json_get.h"
#include "alloc/model/model-private.h"
#include "alloc/model/model.h"
#include "alloc/model/slice.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *patch_suite(void);
static void same_usage(const struct rf_cluster *a, const struct rf_cluster *b);
static json_t *inserted(const json_t *arr, size_t i, json_t *v);

/* railfit topology --xml test/data/topology/gen-dgx-h100.xml -o annotation */
static const char TOPO[] =
	"{\"v\":1,\"d\":[\"0000:1b:00.0\",\"0000:43:00.0\",\"0000:52:00.0\",\"0000:61:00.0\","
	"\"0000:9d:00.0\",\"0000:c3:00.0\",\"0000:d1:00.0\",\"0000:df:00.0\",\"0000:18:00.0\","
	"\"0000:2a:00.0\",\"0000:2a:00.1\",\"0000:40:00.0\",\"0000:4f:00.0\",\"0000:5e:00.0\","
	"\"0000:9a:00.0\",\"0000:c0:00.0\",\"0000:ce:00.0\",\"0000:dc:00.0\"],\"k\":"
	"\"ggggggggnnnnnnnnnn\",\"n\":[0,0,0,0,1,1,1,1,0,0,0,0,0,0,1,1,1,1],\"c\":[0,1,2,3,4,5,"
	"6,7,0,8,8,1,2,3,4,5,6,7],\"m\":\"PNNNSSSSNPNNSSSSNPNSSSSNPSSSSNPNNNSPNNSPNSPSP\"}";

struct world {
	struct rf_config cfg;
	struct rf_cel_cache *cel;
	json_t *nodes, *pods, *claims, *classes, *templates, *rules, *slices;
	struct rf_slice **recs; /* parallel to slices */
	size_t n_recs;
	json_t *gone;       /* slices deleted, to put back */
	json_t *pending[4]; /* the last one only some tests add */
	uint64_t rng;
	bool dups; /* "a device more" sometimes repeats a name (then layouts are built in full) */
};

static unsigned
below(struct world *w, unsigned n)
{
	w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((w->rng >> 33) % n);
}

/* a copy of the array with element i replaced by v (a new reference; NULL: removed) */
static json_t *
replaced(const json_t *arr, size_t i, json_t *v)
{
	json_t *out = json_array();
	for (size_t k = 0; k < json_array_size(arr); k++) {
		if (k != i)
			json_array_append(out, json_array_get(arr, k));
		else if (v)
			json_array_append(out, v);
	}
	if (i >= json_array_size(arr) && v)
		json_array_append(out, v);
	json_decref(v);
	return out;
}

static void
set_array(json_t **dst, json_t *arr)
{
	json_decref(*dst);
	*dst = arr;
}

/* the slice at i becomes v (NULL: deleted; i == n_recs: added) */
static void
put_slice(struct world *w, size_t i, json_t *v)
{
	struct rf_slice *rec = NULL;
	if (v)
		ck_assert_int_eq(rf_slice_parse(v, &w->cfg, &rec), 0);
	set_array(&w->slices, replaced(w->slices, i, v));
	if (i < w->n_recs) {
		rf_slice_unref(w->recs[i]);
		if (rec) {
			w->recs[i] = rec;
		} else {
			memmove(w->recs + i, w->recs + i + 1,
				(w->n_recs - i - 1) * sizeof(*w->recs));
			w->n_recs--;
		}
	} else if (rec) {
		w->recs = realloc(w->recs, (w->n_recs + 1) * sizeof(*w->recs));
		w->recs[w->n_recs++] = rec;
	}
}

static void
add_json(json_t *arr, const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);
	ck_assert_msg(v != NULL, "%s", err.text);
	json_array_append_new(arr, v);
}

static void
world_init_nodes(struct world *w, uint64_t seed, int nodes)
{
	memset(w, 0, sizeof(*w));
	w->rng = seed * 2654435761u + 1;
	rf_config_init(&w->cfg);
	w->cel = rf_cel_cache_new();
	struct rf_gen_options go = {
		.nodes = nodes, .seed = seed, .used = 0.5, .pods_per_node = 2
	};
	json_t *doc = rf_gen_cluster(&go);
	ck_assert_ptr_nonnull(doc);
	w->nodes = json_array();
	w->pods = json_array();
	w->claims = json_array();
	w->classes = json_array();
	w->templates = json_array();
	w->rules = json_array();
	w->gone = json_array();
	json_t *slices = json_array();
	json_t *items = json_object_get(doc, "items");
	for (size_t i = 0; i < json_array_size(items); i++) {
		json_t *it = json_array_get(items, i);
		const char *kind = json_string_value(json_object_get(it, "kind"));
		json_t *dst = !strcmp(kind, "Node")            ? w->nodes
			      : !strcmp(kind, "Pod")           ? w->pods
			      : !strcmp(kind, "ResourceClaim") ? w->claims
			      : !strcmp(kind, "DeviceClass")   ? w->classes
			      : !strcmp(kind, "ResourceSlice") ? slices
							       : NULL;
		ck_assert_ptr_nonnull(dst);
		json_array_append(dst, it);
	}
	json_decref(doc);
	w->slices = json_array();
	for (size_t i = 0; i < json_array_size(slices); i++)
		put_slice(w, w->n_recs, json_incref(json_array_get(slices, i)));
	json_decref(slices);
	/* DeviceTaintRules: one on a GPU of every node (patched pools get it too), one not
	 * understood (a warning patched layouts repeat) */
	add_json(w->rules, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"r1\"},"
			   "\"spec\":{\"deviceSelector\":{\"driver\":\"gpu.nvidia.com\","
			   "\"device\":\"gpu-1\"},\"taint\":{\"key\":\"test.railfit.io/t\","
			   "\"effect\":\"NoSchedule\"}}}");
	add_json(w->rules, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"r2\"},"
			   "\"spec\":{\"taint\":{\"effect\":\"NoSchedule\"}}}");
	/* pending pods with their claims, explained on every generation */
	const char *specs[] = { SPEC_GPU_NIC_ALIGNED, SPEC_GPU_ONLY, SPEC_GPU_NIC_LOOSE };
	for (int i = 0; i < 3; i++) {
		char buf[2048];
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"pend-%d\","
			 "\"namespace\":\"ml\",\"uid\":\"pend-uid-%d\"},\"spec\":%s}",
			 i, i, specs[i]);
		add_json(w->claims, buf);
		w->pending[i] = fixture_pod(i == 0   ? "p0"
					    : i == 1 ? "p1"
						     : "p2",
					    i == 0   ? "pend-0"
					    : i == 1 ? "pend-1"
						     : "pend-2",
					    NULL);
		json_array_append(w->pods, w->pending[i]);
	}
}

static void
world_init(struct world *w, uint64_t seed)
{
	world_init_nodes(w, seed, 5);
}

static void
world_release(struct world *w)
{
	for (size_t i = 0; i < w->n_recs; i++)
		rf_slice_unref(w->recs[i]);
	free(w->recs);
	json_t *arrs[] = { w->nodes,     w->pods,  w->claims, w->classes,
			   w->templates, w->rules, w->slices, w->gone };
	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++)
		json_decref(arrs[i]);
	for (int i = 0; i < 4; i++)
		json_decref(w->pending[i]);
	rf_cel_cache_free(w->cel);
	rf_config_release(&w->cfg);
}

static struct rf_cluster_objects
objects(struct world *w)
{
	return (struct rf_cluster_objects){ .nodes = w->nodes,
					    .pods = w->pods,
					    .slices = w->slices,
					    .claims = w->claims,
					    .classes = w->classes,
					    .templates = w->templates,
					    .taint_rules = w->rules,
					    .slice_recs = w->recs,
					    .n_slice_recs = w->n_recs };
}

/* ---- the changes ---- */

static json_t *
copy_at(const json_t *arr, size_t i)
{
	json_t *v = json_deep_copy(json_array_get(arr, i));
	ck_assert_ptr_nonnull(v);
	return v;
}

/* The slice at i changes: its first device's attribute test.railfit.io/x becomes value. */
static void
slice_attr_changed(struct world *w, size_t i, int value)
{
	json_t *s = copy_at(w->slices, i);
	json_t *dev = json_array_get(rf_jpath(s, "spec.devices"), 0);
	json_object_set_new(json_object_get(dev, "attributes"), "test.railfit.io/x",
			    json_pack("{s:i}", "int", value));
	put_slice(w, i, s);
}

/* A new pool on a node that has a Node object: a copy of a slice (its driver's devices), of a
 * pool name sorting before or after the node's others, the slice of that pool alone. */
static void
new_pool(struct world *w, int step)
{
	size_t i = below(w, (unsigned)w->n_recs);
	json_t *s = copy_at(w->slices, i);
	json_t *spec = json_object_get(s, "spec");
	char buf[64];
	snprintf(buf, sizeof(buf), "%s-extra-%d", below(w, 2) ? "a" : "zz", step);
	json_object_set_new(json_object_get(spec, "pool"), "name", json_string(buf));
	json_object_set_new(json_object_get(spec, "pool"), "generation", json_integer(1));
	json_object_set_new(json_object_get(spec, "pool"), "resourceSliceCount", json_integer(1));
	json_object_set_new(json_object_get(s, "metadata"), "name", json_string(buf));
	const json_t *nj = json_array_get(w->nodes, below(w, (unsigned)json_array_size(w->nodes)));
	json_object_set(spec, "nodeName", (json_t *)rf_jpath(nj, "metadata.name"));
	put_slice(w, w->n_recs, s); /* appended */
}

/* Every slice of one node deleted (its driver gone, or the node leaving): its pools go. */
static void
drop_node_slices(struct world *w)
{
	const char *node = w->recs[below(w, (unsigned)w->n_recs)]->node;
	if (!node)
		return;
	char name[128];
	snprintf(name, sizeof(name), "%s", node);
	for (size_t i = w->n_recs; i-- > 0;)
		if (w->recs[i]->node && strcmp(w->recs[i]->node, name) == 0) {
			json_array_append(w->gone, json_array_get(w->slices, i));
			put_slice(w, i, NULL);
		}
}

/* @return true when the change is one the layout reads (the store marks it so) */
static bool
change_slice(struct world *w, int step)
{
	size_t n = w->n_recs;
	unsigned what = below(w, 9);
	if (what == 7 && n) { /* pools come: a new one on some node */
		new_pool(w, step);
		return true;
	}
	if (what == 8 && n) { /* pools go: all of one node's */
		drop_node_slices(w);
		return true;
	}
	if (what >= 6 && json_array_size(w->gone)) { /* one put back (maybe a pool back) */
		size_t g = below(w, (unsigned)json_array_size(w->gone));
		put_slice(w, n, json_incref(json_array_get(w->gone, g)));
		set_array(&w->gone, replaced(w->gone, g, NULL));
		return true;
	}
	if (!n)
		return false;
	size_t i = below(w, (unsigned)n);
	if (what == 5) { /* deleted */
		json_array_append(w->gone, json_array_get(w->slices, i));
		put_slice(w, i, NULL);
		return true;
	}
	json_t *s = copy_at(w->slices, i);
	json_t *spec = json_object_get(s, "spec");
	json_t *devs = json_object_get(spec, "devices");
	size_t nd = json_array_size(devs);
	char buf[64];
	switch (what) {
	case 0: /* an attribute value (as many devices as before) */
		if (nd) {
			json_t *attrs = json_object_get(
				json_array_get(devs, below(w, (unsigned)nd)), "attributes");
			json_object_set_new(attrs, "test.railfit.io/x",
					    json_pack("{s:i}", "int", step));
		}
		break;
	case 1: /* a device fewer */
		if (nd > 1)
			json_array_remove(devs, below(w, (unsigned)nd));
		break;
	case 2: /* a device more */
		if (nd) {
			json_t *d = json_deep_copy(json_array_get(devs, 0));
			snprintf(buf, sizeof(buf), "extra-%d", step);
			if (!w->dups || below(w, 3)) /* else a duplicate name: an invalid pool */
				json_object_set_new(d, "name", json_string(buf));
			json_array_append_new(devs, d);
		}
		break;
	case 3: { /* a new generation, sometimes announcing a slice that is not there */
		json_t *pool = json_object_get(spec, "pool");
		json_object_set_new(
			pool, "generation",
			json_integer(json_integer_value(json_object_get(pool, "generation")) + 1));
		json_object_set_new(pool, "resourceSliceCount", json_integer(1 + below(w, 2)));
		break;
	}
	case 4: /* moved to another node */
	default: {
		const json_t *nj =
			json_array_get(w->nodes, below(w, (unsigned)json_array_size(w->nodes)));
		json_object_set(spec, "nodeName", (json_t *)rf_jpath(nj, "metadata.name"));
		break;
	}
	}
	put_slice(w, i, s);
	return true;
}

/* @return true when the layout reads it; false for a status-only change */
static bool
change_node(struct world *w)
{
	size_t i = below(w, (unsigned)json_array_size(w->nodes));
	json_t *nj = copy_at(w->nodes, i);
	json_t *meta = json_object_get(nj, "metadata");
	json_t *labels = json_object_get(meta, "labels"),
	       *ann = json_object_get(meta, "annotations");
	if (!ann) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	const char *blocks[] = { "b1", "b2" };
	bool layout = true;
	switch (below(w, 7)) {
	case 0:
		json_object_set_new(labels, "network.topology.kubernetes.io/block",
				    json_string(blocks[below(w, 2)]));
		break;
	case 1:
		json_object_set_new(labels, "network.topology.kubernetes.io/spine",
				    json_string(blocks[below(w, 2)]));
		break;
	case 2:
		json_object_set_new(ann, "railfit.io/pci-topology", json_string(TOPO));
		break;
	case 3:
		json_object_del(ann, "railfit.io/pci-topology");
		json_object_del(labels, "network.topology.kubernetes.io/block");
		break;
	case 4:
		json_object_set_new(ann, "railfit.io/frontend-bandwidth",
				    json_string(below(w, 4) ? "200G" : "lots")); /* a warning */
		break;
	case 5:
		json_object_set_new(ann, "railfit.io/pci-topology",
				    json_string(below(w, 4) ? TOPO : "{bad")); /* a warning */
		break;
	default: { /* status only: Ready flips */
		json_t *st = json_pack("{s:[{s:s,s:s}]}", "conditions", "type", "Ready", "status",
				       below(w, 2) ? "True" : "False");
		json_object_set_new(nj, "status", st);
		layout = false;
		break;
	}
	}
	set_array(&w->nodes, replaced(w->nodes, i, nj));
	if (below(w, 4) == 0) { /* the objects handed over in another order */
		json_t *rev = json_array();
		for (size_t k = json_array_size(w->nodes); k-- > 0;)
			json_array_append(rev, json_array_get(w->nodes, k));
		set_array(&w->nodes, rev);
	}
	return layout;
}

/* A pool of the driver's, at random (NULL when it has none). */
static const char *
some_pool(struct world *w, const char *driver)
{
	size_t n = w->n_recs, start = below(w, (unsigned)n + 1);
	for (size_t i = 0; i < n; i++) {
		const struct rf_slice *s = w->recs[(start + i) % n];
		if (!s->skip && s->driver && strcmp(s->driver, driver) == 0)
			return s->pool;
	}
	return NULL;
}

/* DeviceTaintRules: one added on a device of one pool or on one device name of every GPU pool,
 * one removed, one replaced by a new object with another taint, one not understood added, or
 * two swapped (their order is a device's taints' order: built in full). */
static void
change_rules(struct world *w, int step)
{
	size_t n = json_array_size(w->rules);
	json_t *r = json_copy(w->rules);
	char buf[1024];
	const char *pool = some_pool(w, "gpu.nvidia.com");
	switch (below(w, 6)) {
	case 0:
	case 1:
		if (!pool)
			break;
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"one-%d\"},"
			 "\"spec\":{\"deviceSelector\":{\"driver\":\"gpu.nvidia.com\",\"pool\":"
			 "\"%s\"%s},\"taint\":{\"key\":\"test.railfit.io/one\",\"value\":\"%d\","
			 "\"effect\":\"%s\"}}}",
			 step, pool, below(w, 2) ? ",\"device\":\"gpu-2\"" : "", step,
			 below(w, 2) ? "NoSchedule" : "NoExecute");
		add_json(r, buf);
		break;
	case 2:
		if (n)
			json_array_remove(r, below(w, (unsigned)n));
		break;
	case 3:
		if (n) {
			size_t i = below(w, (unsigned)n);
			json_t *v = copy_at(r, i);
			json_t *t = json_object_get(json_object_get(v, "spec"), "taint");
			if (json_is_object(t))
				json_object_set_new(t, "value", json_integer(step));
			json_array_set_new(r, i, v);
		}
		break;
	case 4:
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"bad-%d\"},"
			 "\"spec\":{\"deviceSelector\":{\"device\":7},\"taint\":{\"key\":\"k\","
			 "\"effect\":\"NoSchedule\"}}}",
			 step);
		add_json(r, buf);
		break;
	default:
		if (n >= 2) {
			json_t *first = json_incref(json_array_get(r, 0));
			json_array_remove(r, 0);
			json_array_append_new(r, first);
		}
		break;
	}
	set_array(&w->rules, r);
}

/* A copy of node object nj named name, its block label set (NULL: none). */
static json_t *
node_named(const json_t *nj, const char *name, const char *block)
{
	json_t *o = json_deep_copy(nj);
	json_t *meta = json_object_get(o, "metadata");
	json_object_set_new(meta, "name", json_string(name));
	json_object_del(meta, "annotations");
	if (!json_is_object(json_object_get(meta, "labels")))
		json_object_set_new(meta, "labels", json_object());
	json_object_set_new(json_object_get(meta, "labels"), "kubernetes.io/hostname",
			    json_string(name));
	if (block)
		json_object_set_new(json_object_get(meta, "labels"),
				    "network.topology.kubernetes.io/block", json_string(block));
	return o;
}

/* Nodes come and go: a Node object added (a node joining, before its driver publishes), one
 * deleted (sometimes one that still has slices: then only the slices name it), or one that only
 * slices name gains its object. @return true (the layout reads it). */
static bool
change_node_set(struct world *w, int step)
{
	size_t n = json_array_size(w->nodes);
	char name[64];
	switch (below(w, 4)) {
	case 0:
	case 1: /* added, its name before or after the others */
		snprintf(name, sizeof(name), "%s-node-%d", below(w, 2) ? "a" : "zz", step);
		set_array(&w->nodes,
			  inserted(w->nodes, below(w, (unsigned)n + 1),
				   node_named(json_array_get(w->nodes, below(w, (unsigned)n)), name,
					      below(w, 2) ? "b3" : NULL)));
		break;
	case 2: /* deleted */
		if (n > 2)
			set_array(&w->nodes, replaced(w->nodes, below(w, (unsigned)n), NULL));
		break;
	default: /* a node only slices name gets its object */
		for (size_t i = 0; i < w->n_recs; i++) {
			const char *sn = w->recs[i]->node;
			bool has = false;
			for (size_t k = 0; sn && !has && k < n; k++)
				has = strcmp(json_string_value(rf_jpath(json_array_get(w->nodes, k),
									"metadata.name")),
					     sn) == 0;
			if (sn && !has) {
				set_array(&w->nodes,
					  inserted(w->nodes, n,
						   node_named(json_array_get(w->nodes, 0), sn,
							      NULL)));
				break;
			}
		}
		break;
	}
	return true;
}

static void
change_class(struct world *w, int step)
{
	size_t n = json_array_size(w->classes);
	unsigned what = below(w, 3);
	if (what == 0 && n < 4) { /* a new class */
		char buf[512];
		snprintf(
			buf, sizeof(buf),
			"{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"extra-%d\"},\"spec\":"
			"{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'dra.net'\"}}]}}",
			step);
		json_t *arr = json_copy(w->classes);
		add_json(arr, buf);
		set_array(&w->classes, arr);
		return;
	}
	size_t i = below(w, (unsigned)n);
	const char *name =
		json_string_value(rf_jpath(json_array_get(w->classes, i), "metadata.name"));
	if (what == 1 && strncmp(name, "extra-", 6) == 0) { /* removed */
		set_array(&w->classes, replaced(w->classes, i, NULL));
		return;
	}
	/* a selector changed: narrower or back to what it was */
	json_t *c = copy_at(w->classes, i);
	json_t *sel = json_array_get(json_object_get(json_object_get(c, "spec"), "selectors"), 0);
	json_t *cel = json_object_get(sel, "cel");
	if (cel) {
		const char *e = json_string_value(json_object_get(cel, "expression"));
		char buf[1024];
		const char *tail = " && device.attributes['test.railfit.io'].x != 3";
		size_t el = strlen(e), tl = strlen(tail);
		if (el > tl && strcmp(e + el - tl, tail) == 0)
			snprintf(buf, sizeof(buf), "%.*s", (int)(el - tl), e);
		else
			snprintf(buf, sizeof(buf), "%s%s", e, tail);
		json_object_set_new(cel, "expression", json_string(buf));
	}
	set_array(&w->classes, replaced(w->classes, i, c));
}

/* a claim event: a pending claim allocated on some node's devices, or back to pending */
static void
change_claim(struct world *w)
{
	size_t i = json_array_size(w->claims) - 1 - below(w, 3); /* one of pend-0..2 */
	json_t *c = copy_at(w->claims, i);
	if (json_object_get(c, "status")) {
		json_object_del(c, "status");
	} else {
		size_t s = below(w, (unsigned)w->n_recs);
		const struct rf_slice *sl = w->recs[s];
		if (!sl->n_devices || !sl->node) {
			json_decref(c);
			return;
		}
		json_t *st = json_pack("{s:{s:{s:[{s:s,s:s,s:s,s:s}]}}}", "allocation", "devices",
				       "results", "request", "gpu", "driver", sl->driver, "pool",
				       sl->pool, "device",
				       sl->devices[below(w, (unsigned)sl->n_devices)].name);
		json_object_set_new(c, "status", st);
	}
	set_array(&w->claims, replaced(w->claims, i, c));
}

/* ---- the comparison ---- */

static void
same_str(const char *a, const char *b, const char *what)
{
	ck_assert_msg((!a && !b) || (a && b && strcmp(a, b) == 0), "%s: %s vs %s", what,
		      a ? a : "(null)", b ? b : "(null)");
}

static void
same_device(const struct rf_cluster *a, const struct rf_device *x, const struct rf_cluster *b,
	    const struct rf_device *y)
{
	same_str(x->name, y->name, "device");
	same_str(x->pool->driver, y->pool->driver, "driver");
	same_str(x->pool->name, y->pool->name, "pool");
	ck_assert_uint_eq(x->slice, y->slice);
	ck_assert_uint_eq(x->idx, y->idx);
	ck_assert_int_eq(x->kind, y->kind);
	ck_assert_uint_eq(x->n_attrs, y->n_attrs);
	for (size_t i = 0; i < x->n_attrs; i++) {
		same_str(x->attrs[i].name, y->attrs[i].name, "attr");
		ck_assert_int_eq(x->attrs[i].kind, y->attrs[i].kind);
	}
	ck_assert_uint_eq(x->n_caps, y->n_caps);
	size_t nx, ny;
	const struct rf_taint *tx = rf_device_taints(a, x, &nx), *ty = rf_device_taints(b, y, &ny);
	ck_assert_uint_eq(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		same_str(tx[i].key, ty[i].key, "taint");
		same_str(tx[i].value, ty[i].value, "taint value");
		same_str(tx[i].effect, ty[i].effect, "taint effect");
		same_str(tx[i].rule, ty[i].rule, "taint rule");
	}
	ck_assert_int_eq(x->loc.numa, y->loc.numa);
	same_str(x->loc.pcie_root, y->loc.pcie_root, "pcieRoot");
	same_str(x->numa_source, y->numa_source, "numa source");
	same_str(x->pci, y->pci, "pci");
	ck_assert_int_eq(x->rdma, y->rdma);
	ck_assert_int_eq(x->rail, y->rail);
	ck_assert_int_eq(x->partition, y->partition);
	ck_assert_int_eq(!x->bandwidth, !y->bandwidth);
	const struct rf_dev_use *u = rf_dev_use(a, x), *v = rf_dev_use(b, y);
	ck_assert_int_eq(!u->holder, !v->holder);
	if (u->holder)
		same_str(u->holder->name, v->holder->name, "holder");
	ck_assert_uint_eq(u->n_shares, v->n_shares);
	ck_assert_int_eq(rf_quantity_cmp(rf_device_bw_used(a, x), rf_device_bw_used(b, y)), 0);
	for (size_t k = 0; k < rf_cluster_n_classes(b); k++) {
		const struct rf_class *ca = rf_cluster_class_at(a, k),
				      *cb = rf_cluster_class_at(b, k);
		ck_assert_int_eq(rf_class_matches(a, ca, x, NULL, NULL),
				 rf_class_matches(b, cb, y, NULL, NULL));
	}
}

static void
same_generation(struct world *w, const struct rf_cluster *a, const struct rf_cluster *b)
{
	ck_assert_uint_eq(rf_cluster_n_warnings(a), rf_cluster_n_warnings(b));
	for (size_t i = 0; i < rf_cluster_n_warnings(a); i++)
		same_str(rf_cluster_warning(a, i), rf_cluster_warning(b, i), "warning");
	ck_assert_uint_eq(rf_cluster_n_classes(a), rf_cluster_n_classes(b));
	for (size_t i = 0; i < rf_cluster_n_classes(a); i++) {
		same_str(rf_cluster_class_at(a, i)->name, rf_cluster_class_at(b, i)->name, "class");
		same_str(rf_cluster_class_at(a, i)->unsupported,
			 rf_cluster_class_at(b, i)->unsupported, "class unsupported");
	}
	ck_assert_uint_eq(rf_cluster_n_nodes(a), rf_cluster_n_nodes(b));
	size_t walk_a = 0, walk_b = 0, none = 1;
	ck_assert_ptr_null(rf_cluster_node_hint(a, "no such node", &none));
	ck_assert_uint_eq(none, 1 | RF_HINT_COLD); /* no guess for the next name */
	for (size_t i = 0; i < rf_cluster_n_nodes(a); i++) {
		const struct rf_node *x = rf_cluster_node_at(a, i), *y = rf_cluster_node_at(b, i);
		same_str(x->name, y->name, "node");
		ck_assert_ptr_eq(rf_cluster_node(a, x->name), x);
		/* the index's names by index, whatever the guess: right, next, or any other */
		ck_assert_ptr_eq(rf_cluster_node_hint(a, x->name, &walk_a), x);
		ck_assert_uint_eq(walk_a & ~RF_HINT_COLD, x->idx + 1);
		ck_assert_ptr_eq(rf_cluster_node_hint(b, y->name, &walk_b), y);
		/* the right guess, the next, the first, past the end */
		size_t guesses[] = { x->idx, x->idx + 1, 0, rf_cluster_n_nodes(a) + 1 };
		for (size_t g = 0; g < sizeof(guesses) / sizeof(guesses[0]); g++) {
			size_t hint = guesses[g];
			ck_assert_ptr_eq(rf_cluster_node_hint(a, x->name, &hint), x);
			/* a wrong guess leaves the next one cold */
			ck_assert_uint_eq(hint,
					  (x->idx + 1) | (guesses[g] == x->idx ? 0 : RF_HINT_COLD));
			/* cold: found by its name, and warm again where the guess would have been
			 */
			hint = guesses[g] | RF_HINT_COLD;
			ck_assert_ptr_eq(rf_cluster_node_hint(a, x->name, &hint), x);
			ck_assert_uint_eq(hint,
					  (x->idx + 1) | (guesses[g] == x->idx ? 0 : RF_HINT_COLD));
		}
		/* looked up with its hash known (the lookahead of judge_chunk): found, and the
		 * slot the prefetch reads is its own; a wrong hash finds nothing */
		uint64_t hx = rf_cluster_name_hash(x->name);
		size_t cold = RF_HINT_COLD;
		ck_assert_ptr_eq(rf_cluster_node_hint_hashed(a, x->name, hx, &cold), x);
		ck_assert_ptr_eq(rf_cluster_node_hashed(a, x->name, hx), x);
		ck_assert_ptr_null(rf_cluster_node_hashed(a, x->name, ~hx));
		/* (two names of a few dozen sharing a hash's high 32 bits: never) */
		ck_assert_uint_eq(rf_cluster_prefetch_node(a, hx), x->idx);
		ck_assert_int_eq(rf_cluster_node_ready(a, x), rf_cluster_node_ready(b, y));
		ck_assert_int_eq(!x->json, !y->json);
		ck_assert_uint_eq(x->n_pools, y->n_pools);
		for (size_t p = 0; p < x->n_pools; p++) {
			const struct rf_pool *o = x->pools[p], *q = y->pools[p];
			same_str(o->driver, q->driver, "pool driver");
			same_str(o->name, q->name, "pool name");
			same_str(o->node, q->node, "pool node");
			ck_assert_int_eq(o->generation, q->generation);
			ck_assert_int_eq(o->complete, q->complete);
			ck_assert_int_eq(o->invalid, q->invalid);
			ck_assert_uint_eq(o->n_slices, q->n_slices);
			ck_assert_uint_eq(o->n_devices, q->n_devices);
		}
		ck_assert_uint_eq(x->n_devices, y->n_devices);
		for (size_t d = 0; d < x->n_devices; d++)
			same_device(a, x->devices[d], b, y->devices[d]);
		ck_assert_uint_eq(x->n_gpus, y->n_gpus);
		ck_assert_uint_eq(x->n_nics, y->n_nics);
		ck_assert_uint_eq(x->n_rails, y->n_rails);
		ck_assert_int_eq(rf_quantity_cmp(x->fe_capacity, y->fe_capacity), 0);
		same_str(x->fe_source, y->fe_source, "fe source");
		ck_assert_int_eq(!x->topo, !y->topo);
		same_str(x->topo_error, y->topo_error, "topo error");
		same_str(x->block, y->block, "block");
		same_str(x->spine, y->spine, "spine");
		const struct rf_node_use *u = rf_node_use(a, x), *v = rf_node_use(b, y);
		ck_assert_uint_eq(u->n_pods, v->n_pods);
		ck_assert_uint_eq(u->n_gpus_free, v->n_gpus_free);
		ck_assert_uint_eq(u->n_nics_free, v->n_nics_free);
		ck_assert_int_eq(rf_quantity_cmp(u->fe_egress_used, v->fe_egress_used), 0);
	}
	for (size_t i = 0; i < json_array_size(w->claims); i++) {
		const json_t *cj = json_array_get(w->claims, i);
		const char *ns = json_string_value(rf_jpath(cj, "metadata.namespace"));
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		const struct rf_claim *x = rf_cluster_claim(a, ns, name),
				      *y = rf_cluster_claim(b, ns, name);
		ck_assert_int_eq(!x, !y);
		if (!x)
			continue;
		ck_assert_uint_eq(x->n_results, y->n_results);
		for (size_t r = 0; r < x->n_results; r++) {
			const struct rf_alloc_result *p = &x->results[r], *q = &y->results[r];
			ck_assert_int_eq(!p->dev, !q->dev);
			if (p->dev) {
				same_str(p->dev->name, q->dev->name, "result device");
				ck_assert_uint_eq(p->gidx, p->dev->gidx);
				ck_assert_int_eq(p->rail, q->rail);
				ck_assert_ptr_eq(rf_dev_use(a, p->dev)->holder ? p->dev : NULL,
						 rf_dev_use(a, p->dev)->holder ? p->dev : NULL);
			}
		}
		/* claims name their classes; the generation holds them */
		ck_assert_uint_eq(x->n_requests, y->n_requests);
		for (size_t r = 0; r < x->n_requests; r++)
			for (size_t k = 0; k < x->requests[r].n_alts; k++) {
				const char *cx = x->requests[r].alts[k].class_name;
				same_str(cx, y->requests[r].alts[k].class_name, "class name");
				ck_assert_int_eq(!cx || !rf_cluster_class(a, cx),
						 !cx || !rf_cluster_class(b, cx));
			}
	}
	ck_assert_uint_eq(rf_cluster_n_pods(a), rf_cluster_n_pods(b));
	for (int i = 0; i < 3; i++) {
		json_t *ea = rf_explain_pod(a, w->pending[i], NULL);
		json_t *eb = rf_explain_pod(b, w->pending[i], NULL);
		char *sa = json_dumps(ea, JSON_SORT_KEYS), *sb = json_dumps(eb, JSON_SORT_KEYS);
		ck_assert_ptr_nonnull(sa);
		ck_assert_msg(strcmp(sa, sb) == 0, "explain of p%d differs:\n%s\n%s", i, sa, sb);
		free(sa);
		free(sb);
		json_decref(ea);
		json_decref(eb);
	}
}

/* Under valgrind (test/meson.build's setup) the random chains are shorter: the same kinds of
 * event in every chain, a memory error shows on the first, and the plain and ASan builds run
 * them whole. */
static int
chain_steps(int full)
{
	return getenv("RF_UNDER_VALGRIND") ? full * 2 / 5 : full;
}

/* Random changes over a chain of generations, each checked against a full build. */
START_TEST(test_patched_layout_equals_full_build)
{
	struct world w;
	world_init(&w, (uint64_t)_i + 1);
	w.dups = _i == 0;
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	ck_assert(!rf_cluster_layout_patched(prev));
	unsigned patched = 0, layout_changes = 0;
	for (int step = 0, n = chain_steps(50); step < n; step++) {
		bool layout = true;
		switch (below(&w, 8)) {
		case 0:
		case 1:
		case 2:
			layout = change_slice(&w, step);
			break;
		case 3:
			layout = below(&w, 3) ? change_node(&w) : change_node_set(&w, step);
			break;
		case 4:
			layout = change_node(&w);
			break;
		case 5:
			if (below(&w, 2) == 0)
				change_rules(&w, step);
			else
				change_class(&w, step);
			break;
		default:
			change_claim(&w);
			layout = false;
			break;
		}
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		if (layout) {
			layout_changes++;
			patched += rf_cluster_layout_patched(g);
		}
		/* the new generation must not need the one it followed */
		rf_cluster_unref(prev);
		prev = g;
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		ck_assert(!rf_cluster_layout_patched(full));
		same_generation(&w, g, full);
		rf_cluster_unref(full);
	}

	/* most layout changes were patched, not built in full (the rest: warnings, chains) */
	ck_assert_msg(w.dups || patched * 2 >= layout_changes, "%u of %u layout changes patched",
		      patched, layout_changes);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* d is one of c's devices (not one of a layout c does not use): one a node sees, or of a pool
 * no node sees (a nodeSelector no node matches). */
static bool
device_of(const struct rf_cluster *c, const struct rf_device *d)
{
	if (rf_model_find_device(c, d->pool->driver, d->pool->name, d->name) == d)
		return true;
	for (size_t i = 0; i < rf_cluster_n_nodes(c); i++) {
		const struct rf_node *n = rf_cluster_node_at(c, i);
		for (size_t k = 0; k < n->n_devices; k++)
			if (n->devices[k] == d)
				return true;
	}
	return false;
}

static void
results_are_mine(struct world *w, const struct rf_cluster *c)
{
	for (size_t i = 0; i < json_array_size(w->claims); i++) {
		const json_t *cj = json_array_get(w->claims, i);
		const struct rf_claim *cl =
			rf_cluster_claim(c, json_string_value(rf_jpath(cj, "metadata.namespace")),
					 json_string_value(rf_jpath(cj, "metadata.name")));
		for (size_t r = 0; cl && r < cl->n_results; r++)
			ck_assert_msg(!cl->results[r].dev || device_of(c, cl->results[r].dev),
				      "claim %s: result %s is a device of another layout", cl->name,
				      cl->results[r].device);
	}
}

/* A slice change replaces only its pool and node: every other node, pool and device is shared
 * with the previous layout (and keeps its gidx); claims on other nodes are not copied. Run with
 * the same claim and pod arrays, and (_i == 1) with new arrays of the same objects, as the live
 * store hands them over (claims are then found by position, model-walk.c). */
START_TEST(test_patch_shares_what_did_not_change)
{
	struct world w;
	world_init(&w, 7);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g1 = NULL, *g2 = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	/* an attribute of the first slice's first device */
	const char *node = w.recs[0]->node;
	slice_attr_changed(&w, 0, 1);
	if (_i == 1) {
		set_array(&w.claims, json_copy(w.claims));
		set_array(&w.pods, json_copy(w.pods));
	}
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(rf_cluster_layout_patched(g2));
	size_t shared_claims = 0;
	for (size_t i = 0; i < rf_cluster_n_nodes(g2); i++) {
		const struct rf_node *a = rf_cluster_node_at(g1, i), *b = rf_cluster_node_at(g2, i);
		if (strcmp(a->name, node) == 0) {
			ck_assert_ptr_ne(a, b);
			ck_assert_ptr_ne(a->devices[0], b->devices[0]);
			continue;
		}
		ck_assert_ptr_eq(a, b);
		for (size_t d = 0; d < b->n_devices; d++)
			ck_assert_ptr_eq(a->devices[d], b->devices[d]);
	}
	for (size_t i = 0; i < json_array_size(w.claims); i++) {
		const json_t *cj = json_array_get(w.claims, i);
		const char *ns = json_string_value(rf_jpath(cj, "metadata.namespace"));
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		const struct rf_claim *a = rf_cluster_claim(g1, ns, name),
				      *b = rf_cluster_claim(g2, ns, name);
		bool on_node = a->alloc_node && strcmp(a->alloc_node, node) == 0;
		if (!on_node && a->n_results)
			shared_claims += a == b;
		if (on_node)
			ck_assert_ptr_ne(a, b); /* relinked to the new devices */
	}
	ck_assert_uint_gt(shared_claims, 0);
	results_are_mine(&w, g2);
	struct rf_cluster *full = NULL;
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	rf_cluster_unref(g1);
	same_generation(&w, g2, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g2);
	world_release(&w);
}
END_TEST

/* Claims whose requests say the same (one template's) share one copy of them, parsed or
 * relinked (a layout built in full relinks every claim), others keep their own, and the
 * generation is the one a fresh build makes (claims, explain of the pending pods). */
START_TEST(test_full_build_shares_equal_requests)
{
	struct world w;
	world_init(&w, 11);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	objs.full_layout = true;
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(!rf_cluster_layout_patched(g2));
	size_t n = json_array_size(w.claims), with_requests = 0, shared = 0;
	const struct rf_claim **a = calloc(n, sizeof(*a)), **b = calloc(n, sizeof(*b));
	ck_assert(a && b);
	for (size_t i = 0; i < n; i++) {
		const json_t *cj = json_array_get(w.claims, i);
		const char *ns = json_string_value(rf_jpath(cj, "metadata.namespace"));
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		a[i] = rf_cluster_claim(g1, ns, name);
		b[i] = rf_cluster_claim(g2, ns, name);
		ck_assert_ptr_nonnull(a[i]);
		ck_assert_ptr_nonnull(b[i]);
		ck_assert_ptr_ne(a[i], b[i]); /* relinked */
		with_requests += b[i]->n_requests > 0;
	}
	/* each claim's requests parsed on their own, as a template's are (nothing shared) */
	struct rf_claim **fresh = calloc(n, sizeof(*fresh));
	ck_assert(fresh);
	for (size_t i = 0; i < n; i++) {
		json_t *t = json_pack("{s:{s:O}}", "spec", "spec",
				      json_object_get(json_array_get(w.claims, i), "spec"));
		const char *why = NULL;
		fresh[i] = rf_claim_from_template(g1, "ml", "p", "c", t, &why);
		ck_assert_ptr_nonnull(fresh[i]);
		json_decref(t);
	}
	size_t shared_parsed = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			bool sa = a[i]->n_requests && a[i]->requests == a[j]->requests,
			     sb = b[i]->n_requests && b[i]->requests == b[j]->requests;
			/* one copy of each: what the parse shared, the relink shares too */
			ck_assert_int_eq(sa, sb);
			shared_parsed += sa;
			shared += sb;
			if (!sa)
				continue;
			/* only requests that say the same, parsed (g1) or relinked (g2) */
			const struct rf_request *x = fresh[i]->requests, *y = fresh[j]->requests;
			ck_assert_uint_eq(fresh[i]->n_requests, fresh[j]->n_requests);
			ck_assert_uint_eq(fresh[i]->n_requests, a[i]->n_requests);
			for (size_t r = 0; r < fresh[i]->n_requests; r++) {
				same_str(x[r].name, y[r].name, "request");
				ck_assert_int_eq(x[r].first_available, y[r].first_available);
				ck_assert_uint_eq(x[r].n_alts, y[r].n_alts);
				for (size_t k = 0; k < x[r].n_alts; k++) {
					const struct rf_request_alt *p = &x[r].alts[k],
								    *q = &y[r].alts[k];
					same_str(p->name, q->name, "alternative");
					same_str(p->class_name, q->class_name, "class");
					ck_assert_int_eq(p->count, q->count);
					ck_assert_int_eq(p->all, q->all);
					ck_assert_int_eq(p->admin_access, q->admin_access);
					ck_assert_uint_eq(p->n_selectors, q->n_selectors);
					for (size_t e = 0; e < p->n_selectors; e++)
						same_str(p->selector_texts[e], q->selector_texts[e],
							 "selector");
					ck_assert_uint_eq(p->n_tolerations, q->n_tolerations);
					ck_assert_uint_eq(p->n_cap_requests, q->n_cap_requests);
				}
			}
		}
	for (size_t i = 0; i < n; i++)
		rf_claim_free(fresh[i]);
	free(fresh);
	ck_assert_uint_gt(with_requests, 3);
	ck_assert_uint_gt(shared, 0);
	ck_assert_uint_gt(shared_parsed, 0);
	/* the pending claims: GPU and NIC aligned and loose differ in their constraints alone
	 * (their own), GPU only in its requests */
	const struct rf_claim *pend[3];
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "pend-%d", i);
		pend[i] = rf_cluster_claim(g2, "ml", name);
		ck_assert_ptr_nonnull(pend[i]);
	}
	ck_assert_ptr_ne(pend[0]->requests, pend[1]->requests);
	ck_assert_ptr_eq(pend[0]->requests, pend[2]->requests);
	ck_assert_uint_gt(pend[0]->n_constraints, 0);
	ck_assert_uint_eq(pend[2]->n_constraints, 0);
	ck_assert_ptr_ne(pend[1]->requests, pend[2]->requests);
	/* and so does the parse */
	ck_assert_ptr_eq(rf_cluster_claim(g1, "ml", "pend-0")->requests,
			 rf_cluster_claim(g1, "ml", "pend-2")->requests);
	ck_assert_ptr_ne(rf_cluster_claim(g1, "ml", "pend-0")->requests,
			 rf_cluster_claim(g1, "ml", "pend-1")->requests);
	free(a);
	free(b);
	rf_cluster_unref(g1);
	results_are_mine(&w, g2);
	objs.full_layout = false;
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g2, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g2);
	world_release(&w);
}
END_TEST

/* Claims that differ only where the cache of shared requests does not look first (a selector,
 * a toleration, a capacity request, adminAccess, a second request) keep their own requests,
 * parsed and relinked; claims that say the same in other words (allocationMode ExactCount
 * spelled out) share them. Each claim reads what its own spec says. */
START_TEST(test_shared_requests_only_when_equal)
{
	struct world w;
	world_init(&w, 5);
	static const char *const specs[] = {
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"allocationMode\":\"ExactCount\",\"count\":1}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1,\"selectors\":[{\"cel\":{\"expression\":"
		"\"device.attributes['gpu.nvidia.com'].index == 1\"}}]}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1,\"selectors\":[{\"cel\":{\"expression\":"
		"\"device.attributes['gpu.nvidia.com'].index == 2\"}}]}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1,\"tolerations\":[{\"key\":\"k\",\"operator\":"
		"\"Exists\",\"effect\":\"NoSchedule\"}]}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1,\"adminAccess\":true}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1}},{\"name\":\"nic\",\"exactly\":{"
		"\"deviceClassName\":\"rdma-nic\",\"count\":1}}]}}",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
		"\"gpu.nvidia.com\",\"count\":1,\"capacity\":{\"requests\":{\"memory\":\"1Gi\"}}}}]}}",
	};
	enum { N = sizeof(specs) / sizeof(*specs) };
	/* each variant right after a claim of the first spec: the one the cache holds then */
	/* and then two that differ in their selector's text alone */
	for (int i = 0; i < 2 * N + 2; i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"eq-%d\","
			 "\"namespace\":\"ml\",\"uid\":\"eq-uid-%d\"},\"spec\":%s}",
			 i, i,
			 specs[i >= 2 * N ? i - 2 * N + 2
			       : i % 2    ? i / 2
					  : 0]);
		add_json(w.claims, buf);
	}
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g[2] = { NULL, NULL };
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g[0]), 0);
	objs.full_layout = true; /* every claim relinked */
	ck_assert_int_eq(rf_cluster_build_next(g[0], &objs, &w.cfg, w.cel, false, &g[1]), 0);
	for (int k = 0; k < 2; k++) {
		const struct rf_claim *cl[2 * N + 2];
		for (int i = 0; i < 2 * N + 2; i++) {
			char name[16];
			snprintf(name, sizeof(name), "eq-%d", i);
			cl[i] = rf_cluster_claim(g[k], "ml", name);
			ck_assert_ptr_nonnull(cl[i]);
			ck_assert_ptr_null(cl[i]->unsupported);
		}
		/* eq-(2v+1) is specs[v], after a plain claim (specs[0]); specs[1] says the same
		 * as specs[0] */
		ck_assert_ptr_eq(cl[0]->requests, cl[1]->requests);
		ck_assert_ptr_eq(cl[2]->requests, cl[3]->requests);
		for (int v = 2; v < N; v++)
			ck_assert_msg(cl[2 * v]->requests != cl[2 * v + 1]->requests,
				      "generation %d: variant %d shares the plain claim's requests",
				      k, v);
		const struct rf_request_alt *a2 = &cl[5]->requests[0].alts[0],
					    *a3 = &cl[7]->requests[0].alts[0];
		ck_assert_uint_eq(a2->n_selectors, 1);
		ck_assert_uint_eq(a3->n_selectors, 1);
		ck_assert_ptr_nonnull(strstr(a2->selector_texts[0], "== 1"));
		ck_assert_ptr_nonnull(strstr(a3->selector_texts[0], "== 2"));
		ck_assert_ptr_ne(cl[2 * N]->requests, cl[2 * N + 1]->requests);
		ck_assert_ptr_nonnull(
			strstr(cl[2 * N + 1]->requests[0].alts[0].selector_texts[0], "== 2"));
		ck_assert_uint_eq(cl[9]->requests[0].alts[0].n_tolerations, 1);
		ck_assert_uint_eq(cl[0]->requests[0].alts[0].n_tolerations, 0);
		ck_assert(cl[11]->requests[0].alts[0].admin_access);
		ck_assert(!cl[0]->requests[0].alts[0].admin_access);
		ck_assert_uint_eq(cl[13]->n_requests, 2);
		ck_assert_uint_eq(cl[0]->n_requests, 1);
		ck_assert_uint_eq(cl[15]->requests[0].alts[0].n_cap_requests, 1);
		ck_assert_uint_eq(cl[0]->requests[0].alts[0].n_cap_requests, 0);
	}
	rf_cluster_unref(g[0]);
	rf_cluster_unref(g[1]);
	world_release(&w);
}
END_TEST

/* A build that failed leaves the claims it relinked in the shared table; the next build starts
 * from the same generation again (server/kube/store.c) and must still hold its own copies
 * (built here twice from one generation, with new arrays as the store hands them over). */
START_TEST(test_patch_again_from_the_same_generation)
{
	struct world w;
	world_init(&w, 11);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *g3 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	slice_attr_changed(&w, 0, 1);
	set_array(&w.claims, json_copy(w.claims));
	set_array(&w.pods, json_copy(w.pods));
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(rf_cluster_layout_patched(g2));
	rf_cluster_unref(g2);
	set_array(&w.claims, json_copy(w.claims));
	set_array(&w.pods, json_copy(w.pods));
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g3), 0);
	ck_assert(rf_cluster_layout_patched(g3));
	results_are_mine(&w, g3);
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	rf_cluster_unref(g1);
	same_generation(&w, g3, full);
	same_usage(g3, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g3);
	world_release(&w);
}
END_TEST

/* A DeviceTaintRule on one device of one pool is patched: that pool and its node are rebuilt, the
 * device carries the taint, every other node is shared; removing it, and adding one that is not
 * understood (a warning, nothing rebuilt), are patched too; each generation reads like a full
 * build. */
START_TEST(test_taint_rule_patches_its_pools)
{
	struct world w;
	world_init(&w, 5);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g[4] = { NULL }, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g[0]), 0);
	const struct rf_slice *gpu = NULL;
	for (size_t i = 0; !gpu && i < w.n_recs; i++)
		if (strcmp(w.recs[i]->driver, "gpu.nvidia.com") == 0)
			gpu = w.recs[i];
	ck_assert_ptr_nonnull(gpu);
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"bad-gpu\"},\"spec\":"
		 "{\"deviceSelector\":{\"driver\":\"gpu.nvidia.com\",\"pool\":\"%s\",\"device\":"
		 "\"gpu-3\"},\"taint\":{\"key\":\"test.railfit.io/xid\",\"value\":\"79\","
		 "\"effect\":\"NoExecute\"}}}",
		 gpu->pool);
	json_t *with = json_copy(w.rules), *without = json_copy(w.rules);
	add_json(with, buf);
	json_t *bad = json_copy(without);
	add_json(bad, "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"b\"},"
		      "\"spec\":{\"deviceSelector\":[],\"taint\":{\"key\":\"k\","
		      "\"effect\":\"NoSchedule\"}}}");
	json_t *steps[] = { with, without, bad };
	for (int s = 0; s < 3; s++) {
		set_array(&w.rules, json_incref(steps[s]));
		objs = objects(&w);
		ck_assert_int_eq(
			rf_cluster_build_next(g[s], &objs, &w.cfg, w.cel, false, &g[s + 1]), 0);
		ck_assert_msg(rf_cluster_layout_patched(g[s + 1]), "step %d not patched", s);
		size_t rebuilt = 0;
		for (size_t i = 0; i < rf_cluster_n_nodes(g[s + 1]); i++) {
			const struct rf_node *a = rf_cluster_node_at(g[s], i),
					     *b = rf_cluster_node_at(g[s + 1], i);
			bool mine = strcmp(b->name, gpu->node) == 0;
			/* the node that sees the rule's device is kept, with a new rev (its
			 * remembered verdicts read the taint) */
			bool again = rf_node_rev(g[s + 1], b) != rf_node_rev(g[s], a);
			ck_assert_msg(a == b, "step %d: node %s copied", s, b->name);
			ck_assert_msg((mine && s < 2) || !again, "step %d: node %s judged again", s,
				      b->name);
			rebuilt += again;
			for (size_t d = 0; mine && s == 0 && d < b->n_devices; d++) {
				const struct rf_device *dv = b->devices[d];
				bool tainted = false;
				size_t nt;
				const struct rf_taint *tt = rf_device_taints(g[s + 1], dv, &nt);
				for (size_t t = 0; t < nt; t++)
					tainted |= tt[t].rule && strcmp(tt[t].rule, "bad-gpu") == 0;
				ck_assert_int_eq(tainted, strcmp(dv->pool->name, gpu->pool) == 0 &&
								  strcmp(dv->name, "gpu-3") == 0);
			}
		}
		ck_assert_uint_eq(rebuilt, s < 2 ? 1 : 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g[s + 1], full);
		same_usage(g[s + 1], full);
		rf_cluster_unref(full);
	}
	ck_assert_uint_eq(rf_cluster_n_warnings(g[3]), rf_cluster_n_warnings(g[2]) + 1);
	/* a rule and a class in one build, both warned about (the rules' warnings are kept apart
	 * from the classes', which are written first) */
	struct rf_cluster *g4 = NULL;
	set_array(&w.rules, json_incref(with));
	json_t *classes = json_copy(w.classes);
	add_json(classes, "{\"kind\":\"DeviceClass\",\"metadata\":{},\"spec\":{}}");
	set_array(&w.classes, classes);
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g[3], &objs, &w.cfg, w.cel, false, &g4), 0);
	ck_assert(rf_cluster_layout_patched(g4));
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g4, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g4);
	for (int s = 0; s < 4; s++)
		rf_cluster_unref(g[s]);
	json_decref(with);
	json_decref(without);
	json_decref(bad);
	world_release(&w);
}
END_TEST

/* ---- usage by difference across patched layouts ---- */

/* A copy of arr (a new array of the same objects) with v inserted at i (its reference taken). */
static json_t *
inserted(const json_t *arr, size_t i, json_t *v)
{
	json_t *out = json_array();
	json_array_extend(out, (json_t *)arr);
	json_array_insert_new(out, i, v);
	return out;
}

static const char *
meta_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

/* An allocation of 1-3 devices of one node of g: exclusive, a share consuming capacity, or
 * admin access; now and then a device already held (the walk warns: usage is walked then). */
static json_t *
usage_allocation(struct world *w, const struct rf_cluster *g, unsigned *serial)
{
	const struct rf_node *n = rf_cluster_node_at(g, below(w, (unsigned)rf_cluster_n_nodes(g)));
	json_t *results = json_array();
	unsigned k = 1 + below(w, 3);
	for (unsigned i = 0; n->n_devices && i < k; i++) {
		const struct rf_device *d = n->devices[below(w, (unsigned)n->n_devices)];
		bool any = below(w, 60) == 0;
		for (int tries = 0; tries < 16 && !any && !rf_device_is_free(g, d); tries++)
			d = n->devices[below(w, (unsigned)n->n_devices)];
		if (!any && !rf_device_is_free(g, d))
			continue;
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "request", "req", "driver",
				      d->pool->driver, "pool", d->pool->name, "device", d->name);
		unsigned kind = below(w, 6);
		if (kind == 0 && d->n_caps) {
			char share[64], q[16];
			snprintf(share, sizeof(share), "00000000-0000-4000-a000-%012u", ++*serial);
			snprintf(q, sizeof(q), "%uGi", 1 + below(w, 40));
			json_object_set_new(r, "shareID", json_string(share));
			json_object_set_new(r, "consumedCapacity",
					    json_pack("{s:s}", d->caps[0].raw_name, q));
		} else if (kind == 1) {
			json_object_set_new(r, "adminAccess", json_true());
		}
		json_array_append_new(results, r);
	}
	return json_pack("{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}", "devices", "results",
			 results, "nodeSelector", "nodeSelectorTerms", "matchFields", "key",
			 "metadata.name", "operator", "In", "values", n->name);
}

/* A claim name of namespace ns from the current claims (or a name no claim has). */
static const char *
claim_in(struct world *w, const char *ns)
{
	size_t n = json_array_size(w->claims), start = below(w, (unsigned)n + 1);
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(w->claims, (start + i) % n);
		if (strcmp(meta_str(c, "namespace"), ns) == 0)
			return meta_str(c, "name");
	}
	return "no-such-claim";
}

static void
annotate(json_t *o, const char *key, const char *value)
{
	json_t *md = json_object_get(o, "metadata");
	if (!json_is_object(json_object_get(md, "annotations")))
		json_object_set_new(md, "annotations", json_object());
	if (value)
		json_object_set_new(json_object_get(md, "annotations"), key, json_string(value));
	else
		json_object_del(json_object_get(md, "annotations"), key);
}

/* One claim or pod event, as the store hands it over: a new array, a new object for what
 * changed (added at any place, as the store's order is its map's). */
static void
change_usage(struct world *w, const struct rf_cluster *g, unsigned *serial)
{
	const char *nss[] = { "ml-train", "ml-serve" };
	char name[64], q[16];
	bool pod = below(w, 2);
	json_t **arr = pod ? &w->pods : &w->claims;
	size_t n = json_array_size(*arr), i = below(w, (unsigned)n);
	unsigned op = below(w, 10);
	if (op == 0 || !n) {
		const char *ns = nss[below(w, 2)];
		json_t *o;
		snprintf(name, sizeof(name), "u-%u", ++*serial);
		if (pod) {
			o = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}, s:{s:s}}",
				      "kind", "Pod", "metadata", "name", name, "namespace", ns,
				      "uid", name, "spec", "resourceClaims", "name", "c",
				      "resourceClaimName", claim_in(w, ns), "status", "phase",
				      "Running");
			if (below(w, 4)) {
				const struct rf_node *nd = rf_cluster_node_at(
					g, below(w, (unsigned)rf_cluster_n_nodes(g)));
				json_object_set_new(json_object_get(o, "spec"), "nodeName",
						    json_string(nd->name));
			}
			if (below(w, 2))
				annotate(o, "railfit.io/group", below(w, 2) ? "a" : "b");
		} else {
			o = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}",
				      "kind", "ResourceClaim", "metadata", "name", name,
				      "namespace", ns, "uid", name, "spec", "devices", "requests",
				      "name", "req", "exactly", "deviceClassName",
				      "gpu.nvidia.com");
			if (below(w, 4))
				json_object_set_new(o, "status",
						    json_pack("{s:o}", "allocation",
							      usage_allocation(w, g, serial)));
		}
		set_array(arr, inserted(*arr, below(w, (unsigned)n + 1), o));
		return;
	}
	if (op == 1) { /* deleted */
		set_array(arr, replaced(*arr, i, NULL));
		return;
	}
	json_t *o = copy_at(*arr, i);
	if (!pod) {
		if (op < 5)
			json_object_del(o, "status");
		else
			json_object_set_new(
				o, "status",
				json_pack("{s:o}", "allocation", usage_allocation(w, g, serial)));
		set_array(arr, replaced(*arr, i, o));
		return;
	}
	json_t *spec = json_object_get(o, "spec");
	if (!json_is_object(json_object_get(o, "status")))
		json_object_set_new(o, "status", json_object());
	json_t *st = json_object_get(o, "status");
	switch (op) {
	case 2: /* bound, or bound elsewhere */
		json_object_set_new(
			spec, "nodeName",
			json_string(rf_cluster_node_at(g, below(w, (unsigned)rf_cluster_n_nodes(g)))
					    ->name));
		json_object_set_new(st, "phase", json_string("Running"));
		break;
	case 3: /* terminated */
		json_object_set_new(st, "phase", json_string(below(w, 2) ? "Succeeded" : "Failed"));
		break;
	case 4: /* another group */
		annotate(o, "railfit.io/group", below(w, 3) ? (below(w, 2) ? "a" : "b") : NULL);
		break;
	case 5:
		annotate(o, "railfit.io/nic-bandwidth", below(w, 5) ? "25G" : NULL);
		break;
	case 6:
		snprintf(q, sizeof(q), "%uG", below(w, 30));
		annotate(o,
			 below(w, 2) ? "kubernetes.io/egress-bandwidth"
				     : "kubernetes.io/ingress-bandwidth",
			 below(w, 4) ? q : NULL);
		break;
	case 7: /* names another claim */
		json_object_set_new(spec, "resourceClaims",
				    json_pack("[{s:s, s:s}]", "name", "c", "resourceClaimName",
					      claim_in(w, meta_str(o, "namespace"))));
		break;
	default: /* nothing railfit reads */
		annotate(o, "bench", "x");
		break;
	}
	set_array(arr, replaced(*arr, i, o));
}

/* A device of a slice renamed: its pool keeps as many devices, in another order (a claim that
 * named one by its old gidx must find it by name). */
static bool
rename_device(struct world *w, int step)
{
	if (!w->n_recs)
		return false;
	size_t i = below(w, (unsigned)w->n_recs);
	json_t *s = copy_at(w->slices, i);
	json_t *devs = json_object_get(json_object_get(s, "spec"), "devices");
	char buf[64];
	snprintf(buf, sizeof(buf), "a-renamed-%d", step);
	if (json_array_size(devs))
		json_object_set_new(json_array_get(devs, below(w, (unsigned)json_array_size(devs))),
				    "name", json_string(buf));
	put_slice(w, i, s);
	return true;
}

/* Usage of a and b (from the same objects) agrees device by device and node by node, beyond
 * what same_generation() looks at: consumed capacity, annotated bandwidth, pods, rail groups. */
static void
same_usage(const struct rf_cluster *a, const struct rf_cluster *b)
{
	for (size_t i = 0; i < rf_cluster_n_nodes(a); i++) {
		const struct rf_node *x = rf_cluster_node_at(a, i), *y = rf_cluster_node_at(b, i);
		const struct rf_node_use *u = rf_node_use(a, x), *v = rf_node_use(b, y);
		ck_assert_uint_eq(u->n_pods, v->n_pods);
		for (size_t k = 0; k < u->n_pods; k++) {
			same_str(u->pods[k]->ns, v->pods[k]->ns, "pod ns");
			same_str(u->pods[k]->name, v->pods[k]->name, "pod");
		}
		ck_assert_int_eq(rf_quantity_cmp(u->fe_ingress_used, v->fe_ingress_used), 0);
		for (size_t d = 0; d < x->n_devices; d++) {
			const struct rf_dev_use *p = rf_dev_use(a, x->devices[d]),
						*q = rf_dev_use(b, y->devices[d]);
			ck_assert_uint_eq(p->n_consumed, q->n_consumed);
			ck_assert_int_eq(!p->consumed, !q->consumed);
			for (unsigned k = 0; k < p->n_consumed; k++)
				ck_assert_int_eq(rf_quantity_cmp(p->consumed[k], q->consumed[k]),
						 0);
			ck_assert_msg(rf_quantity_cmp(p->annotated_bw, q->annotated_bw) == 0,
				      "node %s device %s: annotated bandwidth", x->name,
				      x->devices[d]->name);
		}
	}
	for (size_t i = 0; i < rf_cluster_n_pods(a); i++) {
		const char *g = rf_cluster_pod_at(a, i)->group;
		const struct rf_group *ga = g ? rf_cluster_group(a, g) : NULL,
				      *gb = g ? rf_cluster_group(b, g) : NULL;
		ck_assert_int_eq(!ga, !gb);
		for (size_t k = 0; g && k < rf_cluster_n_nodes(a); k++)
			ck_assert_msg(
				rf_group_rails_elsewhere(a, ga, rf_cluster_node_at(a, k)) ==
					rf_group_rails_elsewhere(b, gb, rf_cluster_node_at(b, k)),
				"group %s: rails", g);
		struct rf_group_places pa, pb;
		rf_cluster_group_places(a, g, &pa);
		rf_cluster_group_places(b, g, &pb);
		ck_assert_uint_eq(pa.members, pb.members);
		ck_assert_uint_eq(pa.n_blocks, pb.n_blocks);
		for (size_t k = 0; k < pa.n_blocks; k++)
			same_str(pa.blocks[k], pb.blocks[k], "group block");
	}
}

static bool
held_twice(const struct rf_cluster *g)
{
	for (size_t i = 0; i < rf_cluster_n_warnings(g); i++)
		if (strstr(rf_cluster_warning(g, i), "is allocated by both"))
			return true;
	return false;
}

/* Layout events (slices, Node labels and annotations, DeviceClasses) mixed with claim and pod
 * events, sometimes in one build (the store coalesces), the arrays handed over as the store
 * does: a generation on a patched layout computes its usage from the previous generation's
 * (model-delta.c), which must equal a full build of the same objects, and every node's
 * fingerprint must be the one a walk of the same claims and pods gives. */
START_TEST(test_patched_usage_by_difference)
{
	struct world w;
	world_init_nodes(&w, 103 + (uint64_t)_i, 10);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL, *walked = NULL;
	unsigned serial = 0, patched = 0, patched_delta = 0, delta = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	int steps = chain_steps(36);
	for (int step = 0; step < steps; step++) {
		bool layout = false;
		/* now and then a burst (a Job's pods at once) instead of a layout event: more than
		 * an eighth of the claims and pods change, and usage is walked (class events take
		 * the difference: without bursts a short chain may never walk) */
		bool burst = step % 6 == 5;
		unsigned what = burst ? 9 : below(&w, 10);
		if (what < 3)
			layout = change_slice(&w, step);
		else if (what < 5)
			layout = below(&w, 4) ? change_node(&w) : change_node_set(&w, step);
		else if (what == 5)
			change_class(&w, step), layout = true;
		else if (what == 6)
			layout = rename_device(&w, step);
		if (!layout || below(&w, 2)) /* usage events, alone or with the layout's */
			for (unsigned k = 1 + below(&w, 3); k > 0; k--)
				change_usage(&w, prev, &serial);
		for (unsigned k = 0; burst && k < 16; k++) { /* labels: nothing else changes */
			size_t i = below(&w, (unsigned)json_array_size(w.pods));
			json_t *o = copy_at(w.pods, i);
			char v[16];
			snprintf(v, sizeof(v), "%u", ++serial);
			annotate(o, "bench", v);
			set_array(&w.pods, replaced(w.pods, i, o));
		}
		if (below(&w, 4)) { /* new arrays of the same objects, as the store hands them */
			set_array(&w.claims, json_copy(w.claims));
			set_array(&w.pods, json_copy(w.pods));
		}
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		/* after a device held twice, usage is walked until that is over (the walk's order
		 * decides the holder) */
		bool p = rf_cluster_layout_patched(g) && layout && !held_twice(prev);
		patched += p;
		patched_delta += p && rf_cluster_usage_delta(g);
		delta += rf_cluster_usage_delta(g);
		ck_assert_msg(!burst || !rf_cluster_usage_delta(g),
			      "step %d: a burst by difference", step);
		rf_cluster_unref(prev);
		prev = g;
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		same_usage(g, full);
		results_are_mine(&w, g);
		rf_cluster_unref(full);
		/* the same claims and pods walked (nothing changed since g: the same structs) */
		struct rf_cluster_objects wo = objs;
		wo.walk_usage = true;
		ck_assert_int_eq(rf_cluster_build_next(g, &wo, &w.cfg, w.cel, true, &walked), 0);
		ck_assert(!rf_cluster_usage_delta(walked));
		for (size_t i = 0; i < rf_cluster_n_nodes(g); i++) {
			const struct rf_node *n = rf_cluster_node_at(g, i);
			ck_assert_msg(rf_node_use(g, n)->fp == rf_node_use(walked, n)->fp,
				      "step %d node %s: fingerprint differs from the walk's", step,
				      n->name);
			for (size_t k = 0; k < n->n_devices; k++)
				ck_assert(rf_dev_use(g, n->devices[k])->holder ==
					  rf_dev_use(walked, n->devices[k])->holder);
		}
		same_usage(g, walked);
		rf_cluster_unref(walked);
	}
	/* the comparison is not of a walk with itself: half the patched generations or more took
	 * the difference (the others changed too much of this small cluster at once) */
	ck_assert_msg(patched * 36 >= 10 * (unsigned)steps && patched_delta * 2 >= patched,
		      "%u generations on a patched layout after an exact one, %u of them by "
		      "difference",
		      patched, patched_delta);
	ck_assert_uint_lt(delta, (unsigned)steps);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* ---- remembered verdicts across patched layouts (alloc/memo.c) ---- */

/* The judgement as filter (or prioritize) sends it equals the fresh evaluation e of the same
 * generation: verdict, score, flags, message, and the same devices predicted. */
static void
same_judgement(const struct rf_demand *d, const struct rf_judgement *j, bool filter,
	       const struct rf_node_eval *e, const char *node)
{
	struct rf_memo_pick picks[RF_MAX_PICKS];
	struct rf_judgement f;
	rf_judgement_from_eval(d, e, picks, &f);
	ck_assert_msg(j->verdict == f.verdict && j->score == f.score, "node %s: %d/%d vs %d/%d",
		      node, j->verdict, j->score, f.verdict, f.score);
	ck_assert_int_eq(j->cel_error, f.cel_error);
	ck_assert_int_eq(j->scheduler_crash, f.scheduler_crash);
	ck_assert_int_eq(j->has_predicted, f.has_predicted);
	ck_assert_int_eq(j->level_applies, f.level_applies);
	ck_assert_int_eq(j->level, f.level);
	if (filter && (j->verdict != RF_VERDICT_PASS || j->cel_error)) {
		/* what keep_result() (server/verbs.c) sends */
		char *got = j->filter_msg ? NULL : rf_filter_message(j->msg ? j->msg : "");
		char *want = rf_filter_message(f.msg ? f.msg : "");
		ck_assert_msg(strcmp(j->filter_msg ? j->filter_msg : got, want) == 0,
			      "node %s: %s vs %s", node, j->filter_msg ? j->filter_msg : got, want);
		if (j->cel_error)
			same_str(j->msg, f.msg, "selector error");
		free(got);
		free(want);
	}
	ck_assert_uint_eq(j->n_picks, f.n_picks);
	for (size_t i = 0; i < j->n_picks; i++) {
		ck_assert_uint_eq(j->picks[i].claim, f.picks[i].claim);
		ck_assert_int_eq(j->picks[i].pinned, f.picks[i].pinned);
		ck_assert_ptr_eq(j->picks[i].dev, f.picks[i].dev); /* this generation's device */
		ck_assert(j->picks[i].fp == f.picks[i].fp);
	}
}

struct memo_counts {
	unsigned judged, remembered;
	unsigned rebuilt;      /* judged on a node the patch rebuilt (its rev changed) */
	unsigned carried_kept; /* remembered on an untouched node of a patched layout */
};

/* Every node of g judged through its memo for the pod, for filter then prioritize, each
 * judgement equal to a fresh evaluation of g and (verdict, score, message) of full, the same
 * objects built in full. On a patched layout that carried prev's memo, a node the patch rebuilt
 * must not be remembered the first time it is judged. ret_remembered (n_nodes entries, may be
 * NULL): whether the filter judgement of each node was remembered. */
static void
judge_all(const struct rf_cluster *g, const struct rf_cluster *prev, const struct rf_cluster *full,
	  json_t *pod, struct memo_counts *cnt, bool *ret_remembered)
{
	struct rf_demand d, df;
	struct rf_judge_ctx ctx;
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	struct rf_node_eval *e = malloc(sizeof(*e)), *ef = malloc(sizeof(*ef));
	ck_assert(scratch && e && ef);
	ck_assert_int_eq(rf_demand_resolve(g, pod, &d), 0);
	ck_assert_int_eq(rf_demand_resolve(full, pod, &df), 0);
	ck_assert_int_eq(rf_judge_begin(g, &d, &ctx), 0);
	bool carried = prev && rf_cluster_memo(prev) == rf_cluster_memo(g) &&
		       rf_cluster_layout_patched(g) && prev != g;
	for (size_t i = 0; i < rf_cluster_n_nodes(g); i++) {
		const struct rf_node *n = rf_cluster_node_at(g, i);
		/* by name: nodes added or removed shift the order; one added is a new struct */
		const struct rf_node *o = carried ? rf_cluster_node(prev, n->name) : NULL;
		bool rebuilt = carried && (!o || rf_node_rev(g, n) != rf_node_rev(prev, o));
		ck_assert_int_eq(rf_evaluate_node(g, &d, n->name, false, e), 0);
		ck_assert_int_eq(rf_evaluate_node(full, &df, n->name, false, ef), 0);
		for (int filter = 1; filter >= 0; filter--) {
			struct rf_judgement j;
			ck_assert_int_eq(rf_judge_node(&ctx, n->name, filter, scratch, &j), 0);
			/* remembered: the picks are the memo's, not the scratch's */
			bool hit = j.picks != scratch->picks;
			same_judgement(&d, &j, filter, e, n->name);
			if (filter) {
				cnt->judged++;
				cnt->remembered += hit;
				cnt->rebuilt += rebuilt;
				cnt->carried_kept += carried && !rebuilt && hit;
				ck_assert_msg(!(rebuilt && hit),
					      "node %s: rebuilt by the patch, yet remembered",
					      n->name);
				if (ret_remembered)
					ret_remembered[i] = hit;
			}
		}
		/* the full build decides the same */
		ck_assert_int_eq(e->verdict, ef->verdict);
		ck_assert_int_eq(e->score, ef->score);
		ck_assert_uint_eq(e->n_reasons, ef->n_reasons);
		for (size_t k = 0; k < e->n_reasons; k++)
			same_str(e->reasons[k], ef->reasons[k], "reason");
		ck_assert_uint_eq(e->predicted.n, ef->predicted.n);
		for (size_t k = 0; k < e->predicted.n; k++)
			same_str(e->predicted.picks[k].dev->name, ef->predicted.picks[k].dev->name,
				 "predicted device");
	}
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	rf_demand_release(&df);
	free(scratch);
	free(e);
	free(ef);
}

/* A pending pod of the first Job with running workers (its rail group), asking for max-spread
 * block, with its own claim pend-g. */
static json_t *
group_pod(struct world *w, const char *spec)
{
	const char *job = NULL;
	for (size_t i = 0; i < json_array_size(w->pods) && !job; i++) {
		const json_t *p = json_array_get(w->pods, i);
		if (rf_jpath(p, "spec.nodeName"))
			job = json_string_value(json_object_get(rf_jpath(p, "metadata.labels"),
								"batch.kubernetes.io/job-name"));
	}
	ck_assert_ptr_nonnull(job);
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"pend-g\","
		 "\"namespace\":\"ml-train\",\"uid\":\"pend-uid-g\"},\"spec\":%s}",
		 spec);
	add_json(w->claims, buf);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ml-train\",\"labels\":{"
		 "\"batch.kubernetes.io/job-name\":\"%s\"},\"annotations\":{"
		 "\"railfit.io/max-spread\":\"block\"}},\"spec\":{\"resourceClaims\":[{\"name\":"
		 "\"c\",\"resourceClaimName\":\"pend-g\"}]}}",
		 job);
	json_error_t err;
	json_t *p = json_loads(buf, 0, &err);
	ck_assert_msg(p != NULL, "%s", err.text);
	return p;
}

/* The pending pods the memo tests judge: the world's three, a group's worker and one with an
 * egress annotation (the last two owned). */
#define MEMO_PODS 5
static void
memo_pods(struct world *w, json_t *pods[MEMO_PODS])
{
	pods[0] = w->pending[0];
	pods[1] = w->pending[1];
	pods[2] = w->pending[2];
	pods[3] = group_pod(w, SPEC_GPU_NIC_ALIGNED);
	pods[4] = fixture_pod("pe", "pend-1", "\"kubernetes.io/egress-bandwidth\":\"150G\"");
}

static void
memo_pods_release(json_t *pods[MEMO_PODS])
{
	json_decref(pods[3]);
	json_decref(pods[4]);
}

/* Random slice, Node and DeviceClass changes and claim events: on every generation every node
 * is judged through the memo (carried across patched layouts) for pending pods, a group's
 * among them, and must decide as a fresh evaluation and a full build do. */
START_TEST(test_memo_across_patched_layouts)
{
	struct world w;
	world_init_nodes(&w, 31 + (uint64_t)_i, 8);
	json_t *pods[MEMO_PODS];
	memo_pods(&w, pods);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	struct memo_counts cnt = { 0 };
	unsigned carried = 0, patched = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (size_t k = 0; k < sizeof(pods) / sizeof(pods[0]); k++)
		judge_all(prev, NULL, prev, pods[k], &cnt, NULL);
	for (int step = 0, n = chain_steps(30); step < n; step++) {
		bool layout = true;
		unsigned what = below(&w, 10);
		if (what < 4)
			layout = change_slice(&w, step);
		else if (what < 7)
			layout = change_node(&w);
		else if (what == 7)
			change_class(&w, step);
		else
			change_claim(&w), layout = false;
		if (layout && below(&w, 3) == 0)
			change_claim(&w); /* coalesced with the layout's */
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		bool patch = rf_cluster_layout_patched(g) && layout;
		patched += patch;
		carried += patch && rf_cluster_memo(g) == rf_cluster_memo(prev);
		for (size_t k = 0; k < sizeof(pods) / sizeof(pods[0]); k++)
			judge_all(g, prev, full, pods[k], &cnt, NULL);
		rf_cluster_unref(full);
		rf_cluster_unref(prev);
		prev = g;
	}
	/* the carry is exercised: patched layouts kept the table, and untouched nodes their
	 * verdicts, while rebuilt nodes were judged again */
	ck_assert_msg(carried * 3 >= patched && carried > 0, "%u of %u patched layouts carried",
		      carried, patched);
	ck_assert_msg(cnt.carried_kept > 0 && cnt.rebuilt > 0, "kept %u, rebuilt %u",
		      cnt.carried_kept, cnt.rebuilt);
	rf_cluster_unref(prev);
	memo_pods_release(pods);
	world_release(&w);
}
END_TEST

static void add_rule(struct world *w, bool front, const char *name, const char *selector,
		     const char *key, const char *effect);

/* A layout built in full from the very objects of the previous generation (the live store's
 * compaction of a worn chain) carries its remembered verdicts, keyed again for its own nodes:
 * every node judged before is remembered at once, and decides as a fresh evaluation does; a
 * full build from other objects starts a new table. */
START_TEST(test_memo_carried_across_compaction)
{
	struct world w;
	world_init_nodes(&w, 71 + (uint64_t)_i, 8);
	json_t *pods[MEMO_PODS];
	memo_pods(&w, pods);
	size_t n_pods = MEMO_PODS;
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL;
	struct memo_counts before = { 0 }, after = { 0 }, other = { 0 };
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	/* a chain: its indexes and revs not a full build's (no claim changed: an allocated claim's
	 * devices are named in its shape with their pool's rev, which a full build renews, so a
	 * pod with one is judged again after it) */
	for (int step = 0; step < 8; step++) {
		bool layout = step % 3 ? change_node(&w) : change_slice(&w, step);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		rf_cluster_unref(prev);
		prev = g;
	}
	for (size_t k = 0; k < n_pods; k++)
		judge_all(prev, NULL, prev, pods[k], &before, NULL);
	objs = objects(&w);
	objs.full_layout = true;
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
	ck_assert(!rf_cluster_layout_patched(g));
	ck_assert_ptr_ne(rf_cluster_memo(g), rf_cluster_memo(prev));
	for (size_t k = 0; k < n_pods; k++)
		judge_all(g, NULL, g, pods[k], &after, NULL);
	ck_assert_uint_gt(after.judged, 0);
	ck_assert_uint_eq(after.remembered, after.judged);
	/* a patch that retaints every GPU (a NoSchedule rule over the driver: the nodes' revs
	 * move, their usage does not), no request after it, then a compaction: the records made
	 * before the patch are stale and must not be carried (they would say pass) */
	rf_cluster_unref(prev);
	prev = g;
	add_rule(&w, false, "drain", "\"driver\":\"gpu.nvidia.com\"", "test.railfit.io/drain",
		 "NoSchedule");
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
	ck_assert(rf_cluster_layout_patched(g));
	rf_cluster_unref(prev);
	prev = g;
	objs = objects(&w);
	objs.full_layout = true;
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
	struct memo_counts stale = { 0 };
	for (size_t k = 0; k < n_pods; k++)
		judge_all(g, NULL, g, pods[k], &stale, NULL);
	/* (judge_all asserts each judgement equals a fresh evaluation: a stale record carried
	 * fails it; nodes without a GPU kept their rev, and their verdicts) */
	ck_assert_uint_lt(stale.remembered, stale.judged);
	/* other objects (a Node changed): nothing carried */
	change_node(&w);
	objs = objects(&w);
	objs.full_layout = true;
	rf_cluster_unref(prev);
	prev = g;
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
	judge_all(g, NULL, g, pods[0], &other, NULL);
	ck_assert_uint_eq(other.remembered, 0);
	rf_cluster_unref(g);
	rf_cluster_unref(prev);
	memo_pods_release(pods);
	world_release(&w);
}
END_TEST

/* Nodes joining and leaving (change_node_set), with DeviceClass, slice and claim changes between:
 * the table carries across them (nodes added take the next indexes, removed ones leave holes),
 * and on every generation every node judged through it decides as a fresh evaluation and a
 * full build do; a node added or rebuilt is never remembered the first time. */
START_TEST(test_memo_across_node_set_changes)
{
	struct world w;
	world_init_nodes(&w, 61 + (uint64_t)_i, 8);
	json_t *pg = group_pod(&w, SPEC_GPU_NIC_ALIGNED);
	json_t *pods[] = { w.pending[0], w.pending[1], pg };
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	struct memo_counts cnt = { 0 };
	unsigned carried_set = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (size_t k = 0; k < sizeof(pods) / sizeof(pods[0]); k++)
		judge_all(prev, NULL, prev, pods[k], &cnt, NULL);
	for (int step = 0, n = chain_steps(30); step < n; step++) {
		bool layout = true, set = false;
		unsigned what = below(&w, 10);
		if (what < 5)
			layout = set = change_node_set(&w, step);
		else if (what < 7)
			change_class(&w, step);
		else if (what < 9)
			layout = change_slice(&w, step);
		else
			change_claim(&w), layout = false;
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		carried_set += set && rf_cluster_layout_patched(g) &&
			       rf_cluster_memo(g) == rf_cluster_memo(prev);
		for (size_t k = 0; k < sizeof(pods) / sizeof(pods[0]); k++)
			judge_all(g, prev, full, pods[k], &cnt, NULL);
		rf_cluster_unref(full);
		rf_cluster_unref(prev);
		prev = g;
	}
	ck_assert_msg(carried_set > 0, "no node set change carried the table");
	ck_assert_msg(cnt.carried_kept > 0, "kept %u", cnt.carried_kept);
	rf_cluster_unref(prev);
	json_decref(pg);
	world_release(&w);
}
END_TEST

/* The index of node's slice of driver's pool. */
static size_t
slice_of(struct world *w, const char *node, const char *driver)
{
	for (size_t s = 0; s < w->n_recs; s++)
		if (w->recs[s]->node && strcmp(w->recs[s]->node, node) == 0 &&
		    strcmp(w->recs[s]->driver, driver) == 0)
			return s;
	ck_abort_msg("node %s has no %s slice", node, driver);
	return 0;
}

/* Node i of w's objects gets labels[key] = value (annotations when ann). */
static void
label_node(struct world *w, size_t i, bool ann, const char *key, const char *value)
{
	json_t *nj = copy_at(w->nodes, i);
	json_t *meta = json_object_get(nj, "metadata");
	const char *what = ann ? "annotations" : "labels";
	if (!json_is_object(json_object_get(meta, what)))
		json_object_set_new(meta, what, json_object());
	json_object_set_new(json_object_get(meta, what), key, json_string(value));
	set_array(&w->nodes, replaced(w->nodes, i, nj));
}

static size_t
node_object(struct world *w, const char *name)
{
	for (size_t i = 0; i < json_array_size(w->nodes); i++)
		if (strcmp(meta_str(json_array_get(w->nodes, i), "name"), name) == 0)
			return i;
	ck_abort_msg("no node %s", name);
	return 0;
}

/* A Node label event changes no slice: the patched layout shares its base's slice references
 * and keys (struct rf_slice_arrays), which stay while it uses them after the base's last
 * generation went; a slice event gives the next layout arrays of its own. */
START_TEST(test_patch_shares_slice_arrays)
{
	struct world w;
	world_init(&w, 7);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *g3 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	label_node(&w, 0, false, "network.topology.kubernetes.io/block", "b9");
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(rf_cluster_layout_patched(g2));
	ck_assert_ptr_nonnull(g2->layout->slice_arrays);
	ck_assert_ptr_eq(g2->layout->slice_arrays, g1->layout->slice_arrays);
	ck_assert_ptr_eq(g2->layout->slices, g1->layout->slices);
	rf_cluster_unref(g1); /* its layout drops its arrays: g2's stay */
	ck_assert_uint_eq(g2->layout->n_slices, w.n_recs);
	for (size_t i = 0; i < g2->layout->n_slices; i++) {
		ck_assert_ptr_eq(g2->layout->slices[i], w.recs[i]);
		ck_assert(g2->layout->slice_keys[i] == rf_model_slice_key(w.recs[i]));
	}
	slice_attr_changed(&w, 0, 1);
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g2, &objs, &w.cfg, w.cel, false, &g3), 0);
	ck_assert(rf_cluster_layout_patched(g3));
	ck_assert_ptr_ne(g3->layout->slice_arrays, g2->layout->slice_arrays);
	ck_assert_ptr_eq(g3->layout->slices[0], w.recs[0]);
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g3, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g2);
	rf_cluster_unref(g3);
	world_release(&w);
}
END_TEST

/* No claim holds a device of the pool any more (their allocations dropped). */
static void
release_pool(struct world *w, const char *driver, const char *pool)
{
	for (size_t i = 0; i < json_array_size(w->claims); i++) {
		const json_t *results =
			rf_jpath(json_array_get(w->claims, i), "status.allocation.devices.results");
		bool on = false;
		for (size_t r = 0; r < json_array_size(results); r++) {
			const json_t *res = json_array_get(results, r);
			on |= strcmp(json_string_value(json_object_get(res, "driver")), driver) ==
				      0 &&
			      strcmp(json_string_value(json_object_get(res, "pool")), pool) == 0;
		}
		if (!on)
			continue;
		json_t *c = copy_at(w->claims, i);
		json_object_del(c, "status");
		set_array(&w->claims, replaced(w->claims, i, c));
	}
}

/* One node X changes so that its verdict for a pod changes, the layout patched: _i 0 its GPU
 * slice taints every device, 1 its front-end bandwidth annotation lets the pod's egress fit, 2 its
 * block label puts it where the pod's group runs (max-spread). The next generation keeps the
 * table: every other node's judgement is remembered, X's is judged again, and each equals a
 * fresh evaluation (judge_all). _i 3: a pod's allocated claim holds a device of X's pool, which
 * moves to node Z under the same names and gidx: on every other node the failure message must
 * name Z, not the X a remembered one would. _i 4: the DeviceClass the pod asks for selects
 * nothing any more: the table carries, but the pod's shape is another, every node judged again. _i
 * 5: Z's GPU slice changes and, in the same build, X's object but for its labels and annotations:
 * both are judged again (X's status may say what a demand for extended resources reads). */
START_TEST(test_memo_patch_judges_touched_node_again)
{
	struct world w;
	world_init_nodes(&w, 5, 6);
	json_t *pod = NULL;
	size_t n_nodes = json_array_size(w.nodes);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *full = NULL;
	struct rf_cluster_objects objs;
	struct memo_counts cnt = { 0 };
	bool *hit = calloc(n_nodes, sizeof(*hit));
	struct rf_demand d;
	struct rf_node_eval *e = malloc(sizeof(*e));
	ck_assert(hit && e);
	if (_i == 0) {
		pod = json_incref(w.pending[1]);
	} else if (_i == 1) {
		pod = fixture_pod("pe", "pend-1", "\"kubernetes.io/egress-bandwidth\":\"150G\"");
	} else if (_i == 2) {
		pod = group_pod(&w, SPEC_GPU_ONLY);
		for (size_t i = 0; i < n_nodes; i++)
			label_node(&w, i, false, "network.topology.kubernetes.io/block", "b1");
	} else {
		pod = json_incref(w.pending[1]);
	}
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	/* X: a node where the GPU-only pod fits, hosting no worker of the pod's group */
	const char *x = NULL, *z = NULL;
	ck_assert_int_eq(rf_demand_resolve(g1, w.pending[1], &d), 0);
	for (size_t i = 0; i < rf_cluster_n_nodes(g1) && !x; i++) {
		const struct rf_node *n = rf_cluster_node_at(g1, i);
		ck_assert_int_eq(rf_evaluate_node(g1, &d, n->name, false, e), 0);
		bool member = false;
		for (size_t k = 0; k < rf_node_use(g1, n)->n_pods; k++)
			member |= rf_node_use(g1, n)->pods[k]->group != NULL;
		if (e->verdict == RF_VERDICT_PASS && !(_i == 2 && member))
			x = n->name;
		else if (!z)
			z = n->name;
	}
	rf_demand_release(&d);
	ck_assert_ptr_nonnull(x);
	if (!z)
		z = rf_cluster_node_at(g1, 0)->name;
	ck_assert_str_ne(x, z);
	if (_i == 2) { /* X away from the group, in block b2 */
		label_node(&w, node_object(&w, x), false, "network.topology.kubernetes.io/block",
			   "b2");
		objs = objects(&w);
		struct rf_cluster *g = NULL;
		ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g), 0);
		rf_cluster_unref(g1);
		g1 = g;
	}
	if (_i == 0) {
		/* nothing held in X's GPU pool: its usage fingerprint is the same after the
		 * change (no claim relinked), only its rev tells */
		const struct rf_slice *sl = w.recs[slice_of(&w, x, "gpu.nvidia.com")];
		release_pool(&w, sl->driver, sl->pool);
		objs = objects(&w);
		struct rf_cluster *g = NULL;
		ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, true, &g), 0);
		rf_cluster_unref(g1);
		g1 = g;
	}
	if (_i == 3) { /* the pod's claim allocated a free GPU of X, no node selector */
		const struct rf_node *n = rf_cluster_node(g1, x);
		const struct rf_device *dev = NULL;
		for (size_t k = 0; k < n->n_devices && !dev; k++)
			if (n->devices[k]->kind == RF_DEV_GPU &&
			    rf_device_is_free(g1, n->devices[k]))
				dev = n->devices[k];
		ck_assert_ptr_nonnull(dev);
		size_t ci = json_array_size(w.claims) - 2; /* pend-1 */
		ck_assert_str_eq(meta_str(json_array_get(w.claims, ci), "name"), "pend-1");
		json_t *c = copy_at(w.claims, ci);
		json_object_set_new(c, "status",
				    json_pack("{s:{s:{s:[{s:s,s:s,s:s,s:s}]}}}", "allocation",
					      "devices", "results", "request", "gpu", "driver",
					      dev->pool->driver, "pool", dev->pool->name, "device",
					      dev->name));
		set_array(&w.claims, replaced(w.claims, ci, c));
		objs = objects(&w);
		struct rf_cluster *g = NULL;
		ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, true, &g), 0);
		rf_cluster_unref(g1);
		g1 = g;
	}
	judge_all(g1, NULL, g1, pod, &cnt, NULL);
	struct memo_counts again = { 0 };
	judge_all(g1, g1, g1, pod, &again, hit);
	ck_assert_uint_eq(again.remembered, again.judged); /* all remembered */
	ck_assert_int_eq(rf_demand_resolve(g1, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(g1, &d, x, false, e), 0);
	enum rf_verdict before = e->verdict;
	char before_msg[RF_REASON_LEN];
	ck_assert_int_eq(rf_evaluate_node(g1, &d, z, false, e), 0);
	snprintf(before_msg, sizeof(before_msg), "%s", e->n_reasons ? e->reasons[0] : "");
	rf_demand_release(&d);

	size_t s = slice_of(&w, x, "gpu.nvidia.com");
	if (_i == 0) {
		/* every device tainted NoSchedule: as many devices, at the same gidx */
		json_t *sl = copy_at(w.slices, s);
		json_t *devs = json_object_get(json_object_get(sl, "spec"), "devices");
		for (size_t k = 0; k < json_array_size(devs); k++)
			json_object_set_new(json_array_get(devs, k), "taints",
					    json_pack("[{s:s,s:s}]", "key", "test.railfit.io/down",
						      "effect", "NoSchedule"));
		put_slice(&w, s, sl);
	} else if (_i == 1) {
		label_node(&w, node_object(&w, x), true, "railfit.io/frontend-bandwidth", "400G");
	} else if (_i == 2) {
		label_node(&w, node_object(&w, x), false, "network.topology.kubernetes.io/block",
			   "b1");
	} else if (_i == 3) {
		json_t *sl = copy_at(w.slices, s);
		json_object_set_new(json_object_get(sl, "spec"), "nodeName", json_string(z));
		put_slice(&w, s, sl);
	} else if (_i == 5) {
		/* Z's GPU slice tainted, and in the same build X's object changes but for its
		 * labels and annotations (its status): X is copied, pointing at the new object */
		size_t zs = slice_of(&w, z, "gpu.nvidia.com");
		json_t *sl = copy_at(w.slices, zs);
		json_t *devs = json_object_get(json_object_get(sl, "spec"), "devices");
		for (size_t k = 0; k < json_array_size(devs); k++)
			json_object_set_new(json_array_get(devs, k), "taints",
					    json_pack("[{s:s,s:s}]", "key", "test.railfit.io/down",
						      "effect", "NoSchedule"));
		put_slice(&w, zs, sl);
		size_t xi = node_object(&w, x);
		json_t *nj = copy_at(w.nodes, xi);
		json_object_set_new(
			nj, "status",
			json_pack("{s:{s:s}}", "allocatable", "example.com/thing", "1"));
		set_array(&w.nodes, replaced(w.nodes, xi, nj));
	} else { /* the class the pod asks for selects nothing any more */
		size_t k = 0;
		while (strcmp(meta_str(json_array_get(w.classes, k), "name"), "gpu.nvidia.com"))
			k++;
		json_t *c = copy_at(w.classes, k);
		json_object_set_new(c, "spec",
				    json_pack("{s:[{s:{s:s}}]}", "selectors", "cel", "expression",
					      "device.driver == 'no-such-driver'"));
		set_array(&w.classes, replaced(w.classes, k, c));
	}
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(rf_cluster_layout_patched(g2));
	/* the table carries, a DeviceClass change too (the shape holds the class's selectors) */
	ck_assert_ptr_eq(rf_cluster_memo(g2), rf_cluster_memo(g1));
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	memset(&cnt, 0, sizeof(cnt));
	judge_all(g2, g1, full, pod, &cnt, hit);
	if (_i == 0)
		ck_assert(rf_node_use(g2, rf_cluster_node(g2, x))->fp ==
			  rf_node_use(g1, rf_cluster_node(g1, x))->fp);
	ck_assert_int_eq(rf_demand_resolve(g2, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(g2, &d, x, false, e), 0);
	if (_i != 3) {
		if (_i != 5)
			ck_assert_int_ne(e->verdict, before);
		for (size_t i = 0; i < rf_cluster_n_nodes(g2); i++) {
			const char *name = rf_cluster_node_at(g2, i)->name;
			bool judged = _i == 4 || strcmp(name, x) == 0 ||
				      (_i == 5 && strcmp(name, z) == 0);
			ck_assert_msg(hit[i] == !judged, "node %s: remembered %d", name, hit[i]);
		}
	} else {
		/* Z: the device's node now; the message names it (the shape is a new one) */
		const char *y = NULL;
		for (size_t i = 0; i < rf_cluster_n_nodes(g2) && !y; i++) {
			const char *name = rf_cluster_node_at(g2, i)->name;
			if (strcmp(name, x) != 0 && strcmp(name, z) != 0)
				y = name;
		}
		ck_assert_ptr_nonnull(y);
		ck_assert_int_eq(rf_evaluate_node(g2, &d, y, false, e), 0);
		char want[256];
		snprintf(want, sizeof(want), "claim ml/pend-1 is already allocated on node %s", x);
		ck_assert_str_eq(before_msg, want);
		snprintf(want, sizeof(want), "claim ml/pend-1 is already allocated on node %s", z);
		ck_assert_uint_gt(e->n_reasons, 0);
		ck_assert_str_eq(e->reasons[0], want);
	}
	rf_demand_release(&d);
	rf_cluster_unref(full);
	rf_cluster_unref(g2);
	rf_cluster_unref(g1);
	json_decref(pod);
	free(hit);
	free(e);
	world_release(&w);
}
END_TEST

/* ---- a DeviceClass most claims name ---- */

/* What the GPU class's selector becomes: the generator's (NULL), narrower ones that drop devices
 * out of it and back, one that raises a CEL runtime error on every GPU (a missing attribute),
 * and the class removed. */
static const char *const GPU_CLASS_TAILS[] = {
	NULL,
	" && device.attributes['resource.kubernetes.io'].pcieRoot in ['pci0000:15', 'pci0000:37']",
	" && !device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:1b')",
	" && device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:d7'",
	" && device.attributes['gpu.nvidia.com'].nosuch == 1",
	"removed",
};
#define N_GPU_CLASS_TAILS (sizeof(GPU_CLASS_TAILS) / sizeof(GPU_CLASS_TAILS[0]))

static size_t
class_index(const struct world *w, const char *name)
{
	for (size_t i = 0; i < json_array_size(w->classes); i++)
		if (strcmp(meta_str(json_array_get(w->classes, i), "name"), name) == 0)
			return i;
	return SIZE_MAX;
}

/* The class `orig` (as the generator made it) with tail appended to its selector, in place of
 * the class of that name (or added last); tail "removed" removes it. */
static void
put_class(struct world *w, const json_t *orig, const char *tail)
{
	size_t i = class_index(w, meta_str(orig, "name"));
	if (tail && strcmp(tail, "removed") == 0) {
		if (i != SIZE_MAX)
			set_array(&w->classes, replaced(w->classes, i, NULL));
		return;
	}
	json_t *c = json_deep_copy(orig);
	json_t *cel = (json_t *)rf_jpath(
		json_array_get(json_object_get(json_object_get(c, "spec"), "selectors"), 0), "cel");
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s%s", json_string_value(json_object_get(cel, "expression")),
		 tail ? tail : "");
	json_object_set_new(cel, "expression", json_string(buf));
	set_array(&w->classes,
		  replaced(w->classes, i == SIZE_MAX ? json_array_size(w->classes) : i, c));
}

/* What filter sends for a judgement: its failure message, and a selector error's text. */
static char *
filter_message(const struct rf_judgement *j)
{
	if (j->filter_msg)
		return strdup(j->filter_msg);
	if (j->verdict != RF_VERDICT_PASS && j->msg)
		return rf_filter_message(j->msg);
	return NULL;
}

/* Filter's judgement of every node for the pending pods on g, through g's remembered verdicts
 * (twice: the second time from them), against a fresh evaluation on the full build. */
static void
same_judgements(struct world *w, const struct rf_cluster *g, const struct rf_cluster *full,
		struct rf_judge_scratch *sg, struct rf_judge_scratch *sf)
{
	for (size_t p = 0; p < sizeof(w->pending) / sizeof(w->pending[0]) && w->pending[p]; p++) {
		struct rf_demand dg, df;
		struct rf_judge_ctx ctx;
		ck_assert_int_eq(rf_demand_resolve(g, w->pending[p], &dg), 0);
		ck_assert_int_eq(rf_demand_resolve(full, w->pending[p], &df), 0);
		ck_assert_int_eq(dg.kind, df.kind);
		same_str(dg.unknown_reason, df.unknown_reason, "unknown reason");
		ck_assert_int_eq(rf_judge_begin(g, &dg, &ctx), 0);
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < rf_cluster_n_nodes(full); i++) {
				const char *node = rf_cluster_node_at(full, i)->name;
				struct rf_judgement a, b;
				ck_assert_int_eq(rf_judge_node(&ctx, node, true, sg, &a), 0);
				ck_assert_int_eq(rf_evaluate_node_work(full, &df, node, false,
								       &sf->work, &sf->eval),
						 0);
				rf_judgement_from_eval(&df, &sf->eval, sf->picks, &b);
				ck_assert_msg(
					a.verdict == b.verdict && a.score == b.score &&
						a.cel_error == b.cel_error &&
						a.has_predicted == b.has_predicted &&
						a.level == b.level && a.n_picks == b.n_picks,
					"pod %zu node %s (pass %d): verdict %d/%d score %d/%d", p,
					node, pass, a.verdict, b.verdict, a.score, b.score);
				for (size_t k = 0; k < a.n_picks; k++) {
					ck_assert_uint_eq(a.picks[k].claim, b.picks[k].claim);
					same_str(a.picks[k].dev->name, b.picks[k].dev->name,
						 "pick");
				}
				char *ma = filter_message(&a), *mb = filter_message(&b);
				same_str(ma, mb, "filter message");
				free(ma);
				free(mb);
				if (a.verdict == RF_VERDICT_PASS && a.cel_error && a.msg)
					same_str(a.msg, b.msg, "selector error");
			}
		rf_judge_end(&ctx);
		rf_demand_release(&dg);
		rf_demand_release(&df);
	}
}

/* The GPU class, which nearly every claim names, changes again and again (devices drop out of
 * it and come back, its selector fails on every GPU, it goes and comes back), now and then the
 * NIC class too, between claim and pod events: every generation reads like a full build
 * (explain of pending pods, one of them asking for an extended resource the GPU class serves,
 * and filter's judgements through remembered verdicts), and a class change alone relinks no
 * claim or pod and takes the usage by difference. */
START_TEST(test_class_most_claims_name)
{
	struct world w;
	world_init_nodes(&w, 211 + (uint64_t)_i, 6);
	/* a fourth pending pod: nvidia.com/gpu, the GPU class's extendedResourceName */
	w.pending[3] =
		json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name",
			  "p3", "namespace", "ml", "uid", "p3-uid", "spec", "containers", "name",
			  "main", "resources", "requests", "nvidia.com/gpu", "2");
	json_array_append(w.pods, w.pending[3]);
	const json_t *gpu = json_array_get(w.classes, class_index(&w, "gpu.nvidia.com"));
	const json_t *nic = json_array_get(w.classes, class_index(&w, "rdma-nic"));
	ck_assert_ptr_nonnull(gpu);
	ck_assert_ptr_nonnull(nic);
	json_t *gpu_orig = json_deep_copy(gpu), *nic_orig = json_deep_copy(nic);
	struct rf_judge_scratch *sg = malloc(sizeof(*sg)), *sf = malloc(sizeof(*sf));
	ck_assert(sg && sf);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	unsigned serial = 0, class_only = 0, class_delta = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0, n = chain_steps(40); step < n; step++) {
		/* what prev remembers may be carried over: judge on it first */
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_judgements(&w, prev, full, sg, sf);
		rf_cluster_unref(full);
		unsigned what = below(&w, 8);
		bool layout = what < 5, only_class = layout;
		if (what < 4)
			put_class(&w, gpu_orig, GPU_CLASS_TAILS[below(&w, N_GPU_CLASS_TAILS)]);
		else if (what == 4)
			put_class(&w, nic_orig,
				  below(&w, 2) ? " && device.attributes['dra.net'].numaNode == 0"
					       : NULL);
		if (!layout || below(&w, 3) == 0) { /* claim and pod events, or with the class */
			only_class = false;
			if (below(&w, 2))
				change_claim(&w);
			for (unsigned k = below(&w, 3); k > 0; k--)
				change_usage(&w, prev, &serial);
		}
		if (below(&w, 2)) { /* new arrays of the same objects, as the store hands them */
			set_array(&w.claims, json_copy(w.claims));
			set_array(&w.pods, json_copy(w.pods));
		}
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		if (only_class) {
			class_only++;
			ck_assert(rf_cluster_layout_patched(g));
			/* a device held twice is walked until that is over (see above) */
			ck_assert(held_twice(prev) || rf_cluster_usage_delta(g));
			class_delta += rf_cluster_usage_delta(g);
			for (size_t i = 0; i < json_array_size(w.claims); i++) {
				const json_t *cj = json_array_get(w.claims, i);
				ck_assert_ptr_eq(rf_cluster_claim(prev, meta_str(cj, "namespace"),
								  meta_str(cj, "name")),
						 rf_cluster_claim(g, meta_str(cj, "namespace"),
								  meta_str(cj, "name")));
			}
			ck_assert_uint_eq(rf_cluster_n_pods(prev), rf_cluster_n_pods(g));
			for (size_t i = 0; i < rf_cluster_n_pods(g); i++)
				ck_assert_ptr_eq(rf_cluster_pod_at(prev, i),
						 rf_cluster_pod_at(g, i));
		}
		rf_cluster_unref(prev);
		prev = g;
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		same_usage(g, full);
		same_judgements(&w, g, full, sg, sf);
		for (size_t i = 0; i < sizeof(w.pending) / sizeof(w.pending[0]); i++) {
			json_t *ea = rf_explain_pod(g, w.pending[i], NULL);
			json_t *eb = rf_explain_pod(full, w.pending[i], NULL);
			ck_assert_msg(json_equal(ea, eb), "step %d: explain of p%zu differs", step,
				      i);
			json_decref(ea);
			json_decref(eb);
		}
		rf_cluster_unref(full);
	}
	ck_assert_msg(class_delta > 0 && class_delta * 2 >= class_only,
		      "%u class changes alone, %u of them with usage by difference", class_only,
		      class_delta);
	rf_cluster_unref(prev);
	free(sg);
	free(sf);
	json_decref(gpu_orig);
	json_decref(nic_orig);
	world_release(&w);
}
END_TEST

/* Every node's fingerprint and every device's holder in g are those a walk of the same claims
 * and pods gives (on g's layout). */
static void
same_as_walked(struct world *w, const struct rf_cluster *g, struct rf_cluster_objects objs)
{
	struct rf_cluster *walked = NULL;
	objs.walk_usage = true;
	ck_assert_int_eq(rf_cluster_build_next(g, &objs, &w->cfg, w->cel, true, &walked), 0);
	for (size_t i = 0; i < rf_cluster_n_nodes(g); i++) {
		const struct rf_node *n = rf_cluster_node_at(g, i);
		ck_assert_msg(rf_node_use(g, n)->fp == rf_node_use(walked, n)->fp,
			      "node %s: fingerprint differs from the walk's", n->name);
		for (size_t k = 0; k < n->n_devices; k++)
			ck_assert(rf_dev_use(g, n->devices[k])->holder ==
				  rf_dev_use(walked, n->devices[k])->holder);
	}
	same_usage(g, walked);
	rf_cluster_unref(walked);
}

/* The next generation from w's objects, built on *prev (which it replaces) and compared with a
 * full build, the usage walk and the claims' devices. @return whether its layout was patched. */
static bool
next_equals_full(struct world *w, struct rf_cluster **prev)
{
	struct rf_cluster_objects objs = objects(w);
	struct rf_cluster *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(*prev, &objs, &w->cfg, w->cel, false, &g), 0);
	rf_cluster_unref(*prev);
	*prev = g;
	ck_assert_int_eq(rf_cluster_build(&objs, &w->cfg, w->cel, &full), 0);
	same_generation(w, g, full);
	same_usage(g, full);
	results_are_mine(w, g);
	rf_cluster_unref(full);
	same_as_walked(w, g, objs);
	return rf_cluster_layout_patched(g);
}
/* Pools come and go on nodes that keep their Node objects (a driver installed or removed, a
 * node's slices garbage-collected and published again), with claims allocated on their
 * devices: each such change is patched (new pools take the next indexes, removed ones leave
 * holes) and reads like a full build, usage included. */
START_TEST(test_patch_pools_come_and_go)
{
	struct world w;
	world_init_nodes(&w, 17 + (uint64_t)_i, 20);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	unsigned serial = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0, n = chain_steps(9); step < n; step++) {
		size_t n_recs = w.n_recs;
		switch (step % 3) {
		case 0: /* a pool more, sometimes two */
			new_pool(&w, step);
			if (below(&w, 2))
				new_pool(&w, 100 + step);
			break;
		case 1: /* one node's pools go */
			drop_node_slices(&w);
			ck_assert_uint_lt(w.n_recs, n_recs);
			break;
		default: /* and come back */
			while (json_array_size(w.gone)) {
				put_slice(&w, w.n_recs, json_incref(json_array_get(w.gone, 0)));
				set_array(&w.gone, replaced(w.gone, 0, NULL));
			}
			break;
		}
		if (_i == 1) /* with claim and pod events, new arrays as the store hands them */
			for (unsigned k = 1 + below(&w, 3); k > 0; k--)
				change_usage(&w, prev, &serial);
		ck_assert_msg(next_equals_full(&w, &prev), "step %d: built in full", step);
	}
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A node leaves in one build, as the store may coalesce it: its drivers' ResourceSlices, its
 * Node object and the pods bound to it deleted together. Patched (its pools and its index become
 * holes), the same as a full build; then every other node leaves the same way, one a build,
 * until the holes' bound starts a full build. */
START_TEST(test_patch_node_leaves_with_its_slices)
{
	struct world w;
	world_init_nodes(&w, 41 + (uint64_t)_i, 12);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	unsigned serial = 0, patched = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0; json_array_size(w.nodes) > 2; step++) {
		size_t at = below(&w, (unsigned)json_array_size(w.nodes));
		char name[128];
		snprintf(name, sizeof(name), "%s",
			 json_string_value(rf_jpath(json_array_get(w.nodes, at), "metadata.name")));
		for (size_t i = w.n_recs; i-- > 0;)
			if (w.recs[i]->node && strcmp(w.recs[i]->node, name) == 0)
				put_slice(&w, i, NULL);
		set_array(&w.nodes, replaced(w.nodes, at, NULL));
		for (size_t i = json_array_size(w.pods); i-- > 0;) {
			const char *on = json_string_value(
				rf_jpath(json_array_get(w.pods, i), "spec.nodeName"));
			if (on && strcmp(on, name) == 0)
				set_array(&w.pods, replaced(w.pods, i, NULL));
		}
		if (_i == 1) /* with claim and pod events elsewhere */
			change_usage(&w, prev, &serial);
		bool p = next_equals_full(&w, &prev);
		/* the first leaves make no more holes than a quarter of the nodes */
		ck_assert_msg(p || step >= 2, "step %d: %s built in full", step, name);
		patched += p;
		ck_assert_ptr_null(rf_cluster_node(prev, name));
	}
	ck_assert_uint_ge(patched, 2);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A node with a warning (a front-end bandwidth annotation not understood) and no slices comes and
 * goes: patched both times, its warning there and then gone, as in a full build. */
START_TEST(test_patch_node_warning_goes_with_it)
{
	struct world w;
	world_init_nodes(&w, 53, 6);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *g3 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g1), 0);
	json_t *n = node_named(json_array_get(w.nodes, 0), "zz-bad", NULL);
	annotate(n, "railfit.io/frontend-bandwidth", "lots");
	set_array(&w.nodes, inserted(w.nodes, json_array_size(w.nodes), n));
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g1, &objs, &w.cfg, w.cel, false, &g2), 0);
	ck_assert(rf_cluster_layout_patched(g2));
	ck_assert_uint_eq(rf_cluster_n_warnings(g2), rf_cluster_n_warnings(g1) + 1);
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g2, full);
	rf_cluster_unref(full);
	set_array(&w.nodes, replaced(w.nodes, json_array_size(w.nodes) - 1, NULL));
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g2, &objs, &w.cfg, w.cel, false, &g3), 0);
	ck_assert(rf_cluster_layout_patched(g3));
	ck_assert_uint_eq(rf_cluster_n_warnings(g3), rf_cluster_n_warnings(g1));
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g3, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g1);
	rf_cluster_unref(g2);
	rf_cluster_unref(g3);
	world_release(&w);
}
END_TEST

/* A Running pod of group g bound to node. */
static json_t *
running_group_pod(const char *name, const char *node, const char *g)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s}, s:{s:s}}", "kind", "Pod",
			      "metadata", "name", name, "namespace", "ml-train", "uid", name,
			      "spec", "nodeName", node, "status", "phase", "Running");
	annotate(o, "railfit.io/group", g);
	return o;
}

/* A node joins (its Node object, then its driver's slices: new pools) and pods of a group run
 * on it and on another node: patched every time, with the new node's index after the others
 * but its place by name first (its group's blocks in name order, as a full build has them).
 * Then it leaves (its slices, then its object while a pod is still bound to it: patched, the pod
 * relinked to no node), the pod goes, and it joins again (patched); a node without pods or
 * slices comes and goes (patched: its index becomes a hole). */
START_TEST(test_patch_node_joins)
{
	struct world w;
	world_init_nodes(&w, 29 + (uint64_t)_i, 12);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	const char *first =
		json_string_value(rf_jpath(json_array_get(w.nodes, 0), "metadata.name"));
	char other[64];
	snprintf(other, sizeof(other), "%s", first);
	/* the slices the new node's driver publishes: copies of another node's */
	json_t *its = json_array();
	for (size_t i = 0; i < w.n_recs; i++)
		if (w.recs[i]->node && strcmp(w.recs[i]->node, "hgx-003") == 0)
			json_array_append_new(its, json_deep_copy(json_array_get(w.slices, i)));
	ck_assert_uint_gt(json_array_size(its), 0);
	for (int step = 0; step < 10; step++) {
		bool patched = true;
		switch (step) {
		case 0: /* its Node object, in another block than the other node's */
			set_array(&w.nodes, inserted(w.nodes, _i ? 0 : json_array_size(w.nodes),
						     node_named(json_array_get(w.nodes, 1),
								"a-joined", "b9")));
			break;
		case 1: /* its slices (one pool per driver, named after the node) */
			for (size_t i = 0; i < json_array_size(its); i++) {
				json_t *s = json_deep_copy(json_array_get(its, i));
				json_t *spec = json_object_get(s, "spec");
				json_object_set_new(spec, "nodeName", json_string("a-joined"));
				json_object_set_new(json_object_get(spec, "pool"), "name",
						    json_string("a-joined"));
				put_slice(&w, w.n_recs, s);
			}
			break;
		case 2: { /* pods of a group on it and on another node (usage events) */
			json_t *mine = running_group_pod("g-1", "a-joined", "grp"),
			       *theirs = running_group_pod("g-2", other, "grp");
			set_array(&w.pods, inserted(w.pods, 0, mine));
			set_array(&w.pods, inserted(w.pods, 1, theirs));
			break;
		}
		case 3: { /* the other node in its block */
			for (size_t i = 0; i < json_array_size(w.nodes); i++) {
				json_t *nj = json_array_get(w.nodes, i);
				if (strcmp(json_string_value(rf_jpath(nj, "metadata.name")), other))
					continue;
				json_t *o = json_deep_copy(nj);
				json_object_set_new(
					json_object_get(json_object_get(o, "metadata"), "labels"),
					"network.topology.kubernetes.io/block", json_string("b1"));
				set_array(&w.nodes, replaced(w.nodes, i, o));
				break;
			}
			break;
		}
		case 4: /* its slices go */
			for (size_t i = w.n_recs; i-- > 0;)
				if (w.recs[i]->node && strcmp(w.recs[i]->node, "a-joined") == 0)
					put_slice(&w, i, NULL);
			break;
		case 5: /* its object goes, its pod still bound to it */
		case 9: /* it comes back, with no pod bound to it any more */
			for (size_t i = 0; i < json_array_size(w.nodes); i++)
				if (strcmp(json_string_value(rf_jpath(json_array_get(w.nodes, i),
								      "metadata.name")),
					   "a-joined") == 0)
					set_array(&w.nodes, replaced(w.nodes, i, NULL));
			if (step == 9)
				set_array(&w.nodes, inserted(w.nodes, 0,
							     node_named(json_array_get(w.nodes, 1),
									"a-joined", "b9")));
			break;
		case 6: /* the pod goes (a usage event) */
			for (size_t i = 0; i < json_array_size(w.pods); i++)
				if (strcmp(meta_str(json_array_get(w.pods, i), "name"), "g-1") == 0)
					set_array(&w.pods, replaced(w.pods, i, NULL));
			break;
		case 7: /* a node that was never there */
			set_array(&w.nodes, inserted(w.nodes, _i ? 0 : json_array_size(w.nodes),
						     node_named(json_array_get(w.nodes, 1),
								"zz-joined", NULL)));
			break;
		default: /* and goes, with no slice and no pod: a hole */
			for (size_t i = 0; i < json_array_size(w.nodes); i++)
				if (strcmp(json_string_value(rf_jpath(json_array_get(w.nodes, i),
								      "metadata.name")),
					   "zz-joined") == 0)
					set_array(&w.nodes, replaced(w.nodes, i, NULL));
			break;
		}
		objs = objects(&w);
		bool usage = step == 2 || step == 6;
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, usage, &g), 0);
		if (!usage)
			ck_assert_msg(rf_cluster_layout_patched(g) == patched, "step %d: %s", step,
				      patched ? "built in full" : "patched");
		rf_cluster_unref(prev);
		prev = g;
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		same_usage(g, full);
		results_are_mine(&w, g);
		if (step == 3) { /* the joined node first by name: its block first */
			struct rf_group_places pl;
			rf_cluster_group_places(g, "ml-train/grp", &pl);
			if (pl.n_blocks != 2)
				rf_cluster_group_places(g, "grp", &pl);
			ck_assert_uint_eq(pl.n_blocks, 2);
			ck_assert_str_eq(pl.blocks[0], "b9");
		}
		rf_cluster_unref(full);
		same_as_walked(&w, g, objs);
	}
	json_decref(its);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* ---- a node leaving in the real order (its object, then its slices and pods), coming back ---- */

static const char *
node_name_at(const json_t *nodes, size_t i)
{
	return meta_str(json_array_get(nodes, i), "name");
}

static bool
has_node_object(struct world *w, const char *name)
{
	for (size_t i = 0; i < json_array_size(w->nodes); i++)
		if (strcmp(node_name_at(w->nodes, i), name) == 0)
			return true;
	return false;
}

/* Its Node object deleted (kept in `left`, to come back as a new object). */
static void
delete_node_object(struct world *w, const char *name, json_t *left)
{
	size_t i = node_object(w, name);
	json_array_append(left, json_array_get(w->nodes, i));
	set_array(&w->nodes, replaced(w->nodes, i, NULL));
}

/* The node's Node object again (a new object, as a node registering anew), at any place. */
static void
node_comes_back(struct world *w, const char *name, json_t *left)
{
	for (size_t i = 0; i < json_array_size(left); i++) {
		if (strcmp(node_name_at(left, i), name) != 0)
			continue;
		set_array(&w->nodes,
			  inserted(w->nodes, below(w, (unsigned)json_array_size(w->nodes) + 1),
				   copy_at(left, i)));
		json_array_remove(left, i);
		return;
	}
	ck_abort_msg("node %s never left", name);
}

/* The node's slices deleted (to w->gone): those of one driver (NULL: all). @return how many. */
static size_t
delete_slices_of(struct world *w, const char *name, const char *driver)
{
	size_t n = 0;
	for (size_t i = w->n_recs; i-- > 0;)
		if (w->recs[i]->node && strcmp(w->recs[i]->node, name) == 0 &&
		    (!driver || strcmp(w->recs[i]->driver, driver) == 0)) {
			json_array_append(w->gone, json_array_get(w->slices, i));
			put_slice(w, i, NULL);
			n++;
		}
	return n;
}

/* The node's slices deleted before published again (the same objects, new records). */
static size_t
restore_slices_of(struct world *w, const char *name)
{
	size_t n = 0;
	for (size_t g = json_array_size(w->gone); g-- > 0;) {
		const char *on =
			json_string_value(rf_jpath(json_array_get(w->gone, g), "spec.nodeName"));
		if (!on || strcmp(on, name) != 0)
			continue;
		put_slice(w, w->n_recs, json_incref(json_array_get(w->gone, g)));
		set_array(&w->gone, replaced(w->gone, g, NULL));
		n++;
	}
	return n;
}

/* The pods bound to the node deleted (kept in `kept` when not NULL). @return how many. */
static size_t
delete_pods_of(struct world *w, const char *name, json_t *kept)
{
	size_t n = 0;
	for (size_t i = json_array_size(w->pods); i-- > 0;) {
		const json_t *p = json_array_get(w->pods, i);
		const char *on = json_string_value(rf_jpath(p, "spec.nodeName"));
		if (!on || strcmp(on, name) != 0)
			continue;
		if (kept)
			json_array_append(kept, (json_t *)p);
		set_array(&w->pods, replaced(w->pods, i, NULL));
		n++;
	}
	return n;
}

/* A node with its object and a Running pod bound to it, or NULL. */
static const char *
busy_node(struct world *w)
{
	size_t n = json_array_size(w->pods), start = below(w, (unsigned)n);
	for (size_t k = 0; k < n; k++) {
		const json_t *p = json_array_get(w->pods, (start + k) % n);
		const char *on = json_string_value(rf_jpath(p, "spec.nodeName"));
		const char *phase = json_string_value(rf_jpath(p, "status.phase"));
		if (on && phase && strcmp(phase, "Running") == 0 && has_node_object(w, on))
			return on;
	}
	return NULL;
}

/* The next generation on *prev, as the store builds it (layout: a Node or slice changed), equal
 * to a full build of the same objects (usage and the walk's fingerprints included), and every
 * node judged for each of the pods as a full build judges it: the verdict, score, messages and
 * predicted devices a filter or explain would send (judge_all). @return whether its layout was
 * patched (always false when !layout: it shares prev's). */
static bool
next_judged(struct world *w, struct rf_cluster **prev, bool layout, json_t *const *pods,
	    size_t n_pods)
{
	if (below(w, 4)) { /* new arrays of the same objects, as the store hands them */
		set_array(&w->claims, json_copy(w->claims));
		set_array(&w->pods, json_copy(w->pods));
	}
	struct rf_cluster_objects objs = objects(w);
	struct rf_cluster *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(*prev, &objs, &w->cfg, w->cel, !layout, &g), 0);
	rf_cluster_unref(*prev);
	*prev = g;
	ck_assert_int_eq(rf_cluster_build(&objs, &w->cfg, w->cel, &full), 0);
	same_generation(w, g, full);
	same_usage(g, full);
	results_are_mine(w, g);
	struct memo_counts cnt = { 0 };
	for (size_t i = 0; i < n_pods; i++)
		judge_all(g, NULL, full, pods[i], &cnt, NULL);
	rf_cluster_unref(full);
	same_as_walked(w, g, objs);
	return layout && rf_cluster_layout_patched(g);
}

/* A node leaves as a real cluster sees it: its Node object is deleted first; its drivers'
 * ResourceSlices are garbage-collected after it (one driver a build, or all at once), while the
 * pods bound to it are still listed Running (their claims hold its devices, a rail group runs
 * on it); the pods go in a later build. _i 2 and 3: the node comes back (a new Node object)
 * while its pods are still bound to it, then its slices. Last, a node joins with its Node
 * object and its slices in one build. Every layout step is patched and reads like a full build;
 * the pending pods (a Job's, max-spread) are judged on every node exactly as a full build
 * judges them. */
START_TEST(test_patch_node_leaves_in_real_order)
{
	struct world w;
	world_init_nodes(&w, 61 + (uint64_t)_i, 12);
	json_t *left = json_array(), *kept = json_array();
	json_t *judged[4] = { w.pending[0], w.pending[1], w.pending[2],
			      group_pod(&w, SPEC_GPU_NIC_ALIGNED) };
	struct rf_cluster *prev = NULL;
	unsigned serial = 0;
	char x[128];
	ck_assert_ptr_nonnull(busy_node(&w));
	snprintf(x, sizeof(x), "%s", busy_node(&w));
	/* a rail group running on x and on another node */
	set_array(&w.pods, inserted(w.pods, 0, running_group_pod("rg-1", x, "rg")));
	set_array(&w.pods,
		  inserted(w.pods, 1, running_group_pod("rg-2", node_name_at(w.nodes, 0), "rg")));
	struct rf_cluster_objects objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	ck_assert(!next_judged(&w, &prev, false, judged, 4));
	size_t bound = rf_node_use(prev, rf_cluster_node(prev, x))->n_pods;
	ck_assert_uint_gt(bound, 1);

	/* 1. the Node object goes: x stays, as a node only its slices name */
	delete_node_object(&w, x, left);
	ck_assert_msg(next_judged(&w, &prev, true, judged, 4),
		      "node object deleted: built in full");
	const struct rf_node *n = rf_cluster_node(prev, x);
	ck_assert_ptr_nonnull(n);
	ck_assert_ptr_null(n->json);
	ck_assert_uint_eq(rf_node_use(prev, n)->n_pods, bound);
	json_t *early = NULL;
	if (_i < 2) { /* one of its pods goes while the node is there (listed again below) */
		for (size_t i = 0; i < json_array_size(w.pods) && !early; i++) {
			json_t *p = json_array_get(w.pods, i);
			const char *on = json_string_value(rf_jpath(p, "spec.nodeName"));
			if (on && strcmp(on, x) == 0) {
				early = json_incref(p);
				set_array(&w.pods, replaced(w.pods, i, NULL));
			}
		}
		ck_assert(!next_judged(&w, &prev, false, judged, 4));
		bound--;
	}

	/* 2. its slices go, one driver a build or all at once; its pods are still Running */
	if (_i % 2) {
		ck_assert_uint_gt(delete_slices_of(&w, x, "gpu.nvidia.com"), 0);
		if (_i == 1)
			change_usage(&w, prev, &serial);
		ck_assert_msg(next_judged(&w, &prev, true, judged, 4), "gpu slices: built in full");
		ck_assert_ptr_nonnull(rf_cluster_node(prev, x));
	}
	ck_assert_uint_gt(delete_slices_of(&w, x, NULL), 0);
	ck_assert_msg(next_judged(&w, &prev, true, judged, 4), "last slices: built in full");
	ck_assert_ptr_null(rf_cluster_node(prev, x));
	size_t n_pods = rf_cluster_n_pods(prev);

	if (_i >= 2) {
		/* 3. it comes back while its pods are still bound to it, then its slices */
		node_comes_back(&w, x, left);
		ck_assert_msg(next_judged(&w, &prev, true, judged, 4), "node back: built in full");
		ck_assert_uint_eq(rf_node_use(prev, rf_cluster_node(prev, x))->n_pods, bound);
		ck_assert_uint_gt(restore_slices_of(&w, x), 0);
		if (_i == 3)
			change_usage(&w, prev, &serial);
		ck_assert_msg(next_judged(&w, &prev, true, judged, 4),
			      "slices back: built in full");
		ck_assert_uint_gt(rf_cluster_node(prev, x)->n_devices, 0);
	} else {
		/* 3. the pod that went before is listed again (its very object: the struct the
		 * table kept points at the node's index, now a hole), Running on no node */
		set_array(&w.pods, inserted(w.pods, 0, early));
		next_judged(&w, &prev, false, judged, 4);
		ck_assert_uint_eq(rf_cluster_n_pods(prev), n_pods + 1);
		/* the pods bound to it go, in a later build (a pod event) */
		ck_assert_uint_eq(delete_pods_of(&w, x, kept), bound + 1);
		next_judged(&w, &prev, false, judged, 4);
		ck_assert_uint_eq(rf_cluster_n_pods(prev), n_pods - bound);
		/* and one of them is listed again (its very object), its node still gone */
		set_array(&w.pods, inserted(w.pods, 0, json_incref(json_array_get(kept, 0))));
		next_judged(&w, &prev, false, judged, 4);
		/* then the node comes back with its slices in one build */
		node_comes_back(&w, x, left);
		ck_assert_uint_gt(restore_slices_of(&w, x), 0);
		ck_assert_msg(next_judged(&w, &prev, true, judged, 4),
			      "node and slices back: built in full");
		ck_assert_uint_eq(rf_node_use(prev, rf_cluster_node(prev, x))->n_pods, 1);
	}

	/* 4. a node never seen joins with its Node object and its slices in one build */
	const char *src = node_name_at(w.nodes, 1);
	for (size_t i = 0, n_recs = w.n_recs; i < n_recs; i++) {
		if (!w.recs[i]->node || strcmp(w.recs[i]->node, src) != 0)
			continue;
		json_t *sl = copy_at(w.slices, i);
		json_t *spec = json_object_get(sl, "spec");
		json_object_set_new(spec, "nodeName", json_string("m-joined"));
		json_object_set_new(json_object_get(spec, "pool"), "name", json_string("m-joined"));
		put_slice(&w, w.n_recs, sl);
	}
	set_array(&w.nodes,
		  inserted(w.nodes, 0, node_named(json_array_get(w.nodes, 1), "m-joined", "b7")));
	ck_assert_msg(next_judged(&w, &prev, true, judged, 4), "node with slices: built in full");
	ck_assert_uint_gt(rf_cluster_node(prev, "m-joined")->n_devices, 0);

	rf_cluster_unref(prev);
	json_decref(judged[3]);
	json_decref(left);
	json_decref(kept);
	world_release(&w);
}
END_TEST

/* Random node lives over a chain of generations: Node objects deleted (while slices and pods
 * name them) and created again, slices deleted one at a time or a node's all at once and
 * published again (sometimes with the Node object in the same build), pods bound to nodes
 * deleted, listed again (their very objects) or created on a node that is gone, and claim and
 * pod events: every generation equals a full build and judges every node as one does. */
START_TEST(test_patch_node_life_random)
{
	struct world w;
	world_init_nodes(&w, 71 + (uint64_t)_i, 12);
	json_t *left = json_array(), *kept = json_array();
	json_t *judged[4] = { w.pending[0], w.pending[1], w.pending[2],
			      group_pod(&w, SPEC_GPU_NIC_ALIGNED) };
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	unsigned serial = 0, patched = 0, layout_changes = 0;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0, n = chain_steps(40); step < n; step++) {
		bool layout = true;
		size_t nn = json_array_size(w.nodes);
		switch (below(&w, 8)) {
		case 0: /* a Node object goes (its slices and pods stay) */
			if (nn > 4 && busy_node(&w)) {
				char x[128];
				snprintf(x, sizeof(x), "%s", busy_node(&w));
				delete_node_object(&w, x, left);
			} else {
				layout = false;
			}
			break;
		case 1: /* a node's slices go (one whose object went, when there is one) */
		case 2: {
			char x[128] = "";
			if (json_array_size(left))
				snprintf(x, sizeof(x), "%s",
					 node_name_at(left,
						      below(&w, (unsigned)json_array_size(left))));
			const char *any =
				w.n_recs ? w.recs[below(&w, (unsigned)w.n_recs)]->node : NULL;
			if ((!x[0] || below(&w, 4) == 0) && any)
				snprintf(x, sizeof(x), "%s", any);
			layout = x[0] &&
				 delete_slices_of(&w, x, below(&w, 2) ? NULL : "gpu.nvidia.com");
			break;
		}
		case 3: /* the pods bound to a node go (kept, to be listed again) */
			if (json_array_size(left))
				delete_pods_of(
					&w,
					node_name_at(left,
						     below(&w, (unsigned)json_array_size(left))),
					kept);
			else
				delete_pods_of(&w, node_name_at(w.nodes, below(&w, (unsigned)nn)),
					       kept);
			layout = false;
			break;
		case 4: /* a node comes back, sometimes with its slices */
			if (json_array_size(left)) {
				char x[128];
				snprintf(x, sizeof(x), "%s",
					 node_name_at(left,
						      below(&w, (unsigned)json_array_size(left))));
				node_comes_back(&w, x, left);
				if (below(&w, 2))
					restore_slices_of(&w, x);
			} else {
				layout = change_node_set(&w, step);
			}
			break;
		case 5: /* slices put back */
			if (json_array_size(w.gone)) {
				const char *on = json_string_value(rf_jpath(
					json_array_get(w.gone, below(&w, (unsigned)json_array_size(
										 w.gone))),
					"spec.nodeName"));
				char x[128];
				snprintf(x, sizeof(x), "%s", on ? on : "");
				layout = restore_slices_of(&w, x) > 0;
			} else {
				layout = change_slice(&w, step);
			}
			break;
		case 6: /* a pod listed again, or a new one Running on a node that left */
			layout = false;
			if (json_array_size(kept) && below(&w, 2)) {
				size_t k = below(&w, (unsigned)json_array_size(kept));
				set_array(&w.pods,
					  inserted(w.pods,
						   below(&w, (unsigned)json_array_size(w.pods) + 1),
						   json_incref(json_array_get(kept, k))));
				json_array_remove(kept, k);
			} else if (json_array_size(left)) {
				char name[64];
				snprintf(name, sizeof(name), "late-%d", step);
				set_array(&w.pods,
					  inserted(w.pods, 0,
						   running_group_pod(name, node_name_at(left, 0),
								     "rg")));
			}
			break;
		default:
			change_usage(&w, prev, &serial);
			layout = false;
			break;
		}
		if (below(&w, 3) == 0) /* claim and pod events in the same build */
			change_usage(&w, prev, &serial);
		bool p = next_judged(&w, &prev, layout, judged, 4);
		layout_changes += layout;
		patched += p;
	}
	/* the rest: holes past a quarter of the nodes start a full build */
	ck_assert_msg(patched * 3 >= layout_changes * 2, "%u of %u layout changes patched", patched,
		      layout_changes);
	rf_cluster_unref(prev);
	json_decref(judged[3]);
	json_decref(left);
	json_decref(kept);
	world_release(&w);
}
END_TEST

/* ---- pools served by selectors or several nodes ---- */

#define SHARED_LABEL "test.railfit.io/shared"

/* The slices of a pool served by more than one node, of a driver no device setting names (no
 * node's derived facts read its devices: patched): allNodes, a nodeSelector on SHARED_LABEL,
 * two slices naming two nodes, or per-device node selection. With gpu, GPUs on a PCIe root
 * (their NUMA and rails are written by every node they serve: built in full). */
static void
put_shared_as(struct world *w, const char *pool, int gen, bool gpu, unsigned how, unsigned n_dev)
{
	unsigned n_slices = how == 2 ? 2 : 1;
	for (unsigned s = 0; s < n_slices; s++) {
		json_t *devs = json_array();
		for (unsigned d = 0; d < n_dev; d++) {
			char name[32];
			snprintf(name, sizeof(name), "s%u-%u", s, d);
			json_t *attrs = json_pack("{s:{s:i}}", "test.railfit.io/x", "int",
						  (int)below(w, 3));
			if (gpu)
				json_object_set_new(attrs, "resource.kubernetes.io/pcieRoot",
						    json_pack("{s:s}", "string", "pci0000:aa"));
			json_t *dev = json_pack("{s:s, s:o}", "name", name, "attributes", attrs);
			if (how == 3) {
				if (below(w, 2))
					json_object_set_new(dev, "allNodes", json_true());
				else
					json_object_set(
						dev, "nodeName",
						(json_t *)rf_jpath(
							json_array_get(
								w->nodes,
								below(w, (unsigned)json_array_size(
										 w->nodes))),
							"metadata.name"));
			}
			json_array_append_new(devs, dev);
		}
		char sname[96];
		snprintf(sname, sizeof(sname), "%s-%u", pool, s);
		json_t *sl = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:i, s:i}, s:o}}",
				       "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
				       "metadata", "name", sname, "spec", "driver",
				       gpu ? "gpu.nvidia.com" : "shared.railfit.io", "pool", "name",
				       pool, "generation", gen, "resourceSliceCount", (int)n_slices,
				       "devices", devs);
		json_t *spec = json_object_get(sl, "spec");
		if (how == 0)
			json_object_set_new(spec, "allNodes", json_true());
		else if (how == 1)
			json_object_set_new(spec, "nodeSelector",
					    json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}",
						      "nodeSelectorTerms", "matchExpressions",
						      "key", SHARED_LABEL, "operator", "In",
						      "values", "yes"));
		else if (how == 2)
			json_object_set(
				spec, "nodeName",
				(json_t *)rf_jpath(
					json_array_get(w->nodes, below(w, (unsigned)json_array_size(
										  w->nodes))),
					"metadata.name"));
		else
			json_object_set_new(spec, "perDeviceNodeSelection", json_true());
		/* replacing: the slice of that name, else appended */
		size_t at = w->n_recs;
		for (size_t i = 0; i < w->n_recs; i++)
			if (strcmp(meta_str(json_array_get(w->slices, i), "name"), sname) == 0)
				at = i;
		put_slice(w, at, sl);
	}
}

static void
put_shared(struct world *w, const char *pool, int gen, bool gpu)
{
	unsigned how = below(w, 4);
	put_shared_as(w, pool, gen, gpu, how, 1 + below(w, 3));
}

/* The slices of the shared pool deleted. @return how many. */
static size_t
drop_shared(struct world *w, const char *pool)
{
	size_t n = 0;
	for (size_t i = w->n_recs; i-- > 0;)
		if (strcmp(w->recs[i]->pool, pool) == 0) {
			put_slice(w, i, NULL);
			n++;
		}
	return n;
}

/* SHARED_LABEL set to yes, to no, or removed on a node (a new object). */
static void
label_shared(struct world *w)
{
	size_t i = below(w, (unsigned)json_array_size(w->nodes));
	json_t *nj = copy_at(w->nodes, i);
	json_t *labels = json_object_get(json_object_get(nj, "metadata"), "labels");
	unsigned how = below(w, 3);
	if (how == 2)
		json_object_del(labels, SHARED_LABEL);
	else
		json_object_set_new(labels, SHARED_LABEL, json_string(how ? "yes" : "no"));
	set_array(&w->nodes, replaced(w->nodes, i, nj));
}

/* A DeviceClass of the shared driver's devices, and a pending pod asking for one of them. */
static json_t *
shared_pod(struct world *w)
{
	add_json(w->classes, "{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"shared-dev\"},"
			     "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"
			     "\"device.driver == 'shared.railfit.io'\"}}]}}");
	add_json(w->claims, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"pend-s\","
			    "\"namespace\":\"ml\",\"uid\":\"pend-uid-s\"},\"spec\":{\"devices\":"
			    "{\"requests\":[{\"name\":\"s\",\"exactly\":{\"deviceClassName\":"
			    "\"shared-dev\",\"count\":2}}]}}}");
	json_t *p = fixture_pod("ps", "pend-s", NULL);
	json_array_append(w->pods, p);
	return p;
}

/* A claim holding a device of a shared pool (allNodes), as the allocator writes it. */
static void
claim_on_shared(struct world *w, const char *name, const char *pool, const char *device)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\","
		 "\"uid\":\"%s\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"s\","
		 "\"exactly\":{\"deviceClassName\":\"shared-dev\"}}]}},\"status\":{\"allocation\":"
		 "{\"devices\":{\"results\":[{\"request\":\"s\",\"driver\":\"shared.railfit.io\","
		 "\"pool\":\"%s\",\"device\":\"%s\"}]}}}}",
		 name, name, pool, device);
	json_t *arr = json_copy(w->claims);
	add_json(arr, buf);
	set_array(&w->claims, arr);
}

/* The next generation (its layout changed: patched), equal to a full build, usage, the walk and
 * the claims' devices included, and every node judged for pod through the memo carried from
 * *prev: a node whose pool list changed is judged again. */
static void
next_shared(struct world *w, struct rf_cluster **prev, json_t *pod, const char *what)
{
	struct rf_cluster_objects objs = objects(w);
	struct rf_cluster *g = NULL, *full = NULL;
	struct memo_counts cnt = { 0 };
	ck_assert_int_eq(rf_cluster_build_next(*prev, &objs, &w->cfg, w->cel, false, &g), 0);
	ck_assert_msg(rf_cluster_layout_patched(g), "%s: built in full", what);
	ck_assert_msg(rf_cluster_memo(g) == rf_cluster_memo(*prev), "%s: memo not carried", what);
	ck_assert_int_eq(rf_cluster_build(&objs, &w->cfg, w->cel, &full), 0);
	same_generation(w, g, full);
	same_usage(g, full);
	results_are_mine(w, g);
	judge_all(g, *prev, full, pod, &cnt, NULL);
	ck_assert_msg(cnt.rebuilt > 0, "%s: no node judged again", what);
	rf_cluster_unref(full);
	same_as_walked(w, g, objs);
	rf_cluster_unref(*prev);
	*prev = g;
}

/* A pool on every node (allNodes) published, replaced (as many devices: their gidx stay; more:
 * a new range), deleted and published again, with claims holding its devices (relinked to the
 * replacement) and a pending pod asking two of them judged on every node through the memo (a
 * node's verdict follows its pool list: no node remembers the pool's absence). Every step
 * patched. */
START_TEST(test_patch_all_nodes_pool_life)
{
	struct world w;
	world_init_nodes(&w, 7, 10);
	json_t *ps = shared_pod(&w);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	struct memo_counts cnt = { 0 };
	judge_all(prev, NULL, prev, ps, &cnt, NULL); /* the memo remembers: no shared device */
	put_shared_as(&w, "everywhere", 1, false, 0, 3);
	next_shared(&w, &prev, ps, "published");
	claim_on_shared(&w, "on-shared-0", "everywhere", "s0-1");
	claim_on_shared(&w, "on-shared-1", "everywhere", "s0-2");
	struct rf_cluster *g = NULL;
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, true, &g), 0);
	rf_cluster_unref(prev);
	prev = g;
	put_shared_as(&w, "everywhere", 2, false, 0, 3);
	next_shared(&w, &prev, ps, "replaced, as many devices");
	put_shared_as(&w, "everywhere", 3, false, 0, 4);
	next_shared(&w, &prev, ps, "replaced, a device more");
	put_shared_as(&w, "everywhere", 4, false, 1, 4); /* a nodeSelector no node matches */
	next_shared(&w, &prev, ps, "served by no node");
	put_shared_as(&w, "everywhere", 5, false, 0, 4);
	next_shared(&w, &prev, ps, "served by every node again");
	drop_shared(&w, "everywhere");
	next_shared(&w, &prev, ps, "deleted");
	put_shared_as(&w, "everywhere", 6, false, 0, 2);
	next_shared(&w, &prev, ps, "published again");
	rf_cluster_unref(prev);
	json_decref(ps);
	world_release(&w);
}
END_TEST

/* An allNodes pool replaced over and over (its devices' health): each change copies every node
 * (their pool lists); along a chain that is bounded (a full build drops the copies, RELIST_MAX in
 * model-patch.c), and the patches go on after it. */
START_TEST(test_patch_relisting_bounded)
{
	struct world w;
	world_init_nodes(&w, 3, 10);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	int first_full = -1, patched_after = 0;
	for (int step = 0; step < 60; step++) {
		put_shared_as(&w, "flapping", step + 1, false, 0, 2);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		rf_cluster_unref(full);
		if (!rf_cluster_layout_patched(g) && first_full < 0)
			first_full = step;
		patched_after += first_full >= 0 && rf_cluster_layout_patched(g);
		rf_cluster_unref(prev);
		prev = g;
	}
	/* every node copied once a change: 16 changes per node, and a little slack */
	ck_assert_msg(first_full >= 16 && first_full < 40, "first full build at step %d",
		      first_full);
	ck_assert_int_gt(patched_after, 10);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A world of `nodes` nodes and its first generation, built in full: a chain's start. */
static struct rf_cluster *
chain_start(struct world *w, uint64_t seed, int nodes, struct rf_cluster_objects *objs)
{
	struct rf_cluster *g = NULL;
	world_init_nodes(w, seed, nodes);
	*objs = objects(w);
	ck_assert_int_eq(rf_cluster_build_next(NULL, objs, &w->cfg, w->cel, false, &g), 0);
	ck_assert(!rf_cluster_layout_patched(g));
	return g;
}

/* A chain of patches, each a Node's label and a claim changed: its depth grows by one a patch
 * up to a bound, where a full build starts a new chain: here the Node objects the chain keeps
 * (one a label change: at most CHAIN_OBJS_MIN, 256, in a cluster of fewer nodes). It is worn
 * (rf_cluster_layout_worn: a caller may build it in full early) from 64 patches on, halfway
 * (rf_cluster_layout_halfway) past 128 Node objects kept. A layout no
 * generation uses keeps neither the array of every Node object it was built from (only the
 * objects its own nodes point into) nor its table of the nodes that see each pool. */
START_TEST(test_patch_chain_bounded)
{
	struct world w;
	struct rf_cluster_objects objs;
	struct rf_cluster *prev = chain_start(&w, 41, 4, &objs), *g = NULL;
	ck_assert_uint_eq(rf_cluster_layout_chain(prev, NULL), 0);
	ck_assert(!rf_cluster_layout_worn(prev));
	unsigned full_at[4] = { 0 }, n_full = 0, built_pool_nodes = 0, released = 0, builds = 0;
	for (unsigned step = 1; step <= 140; step++) {
		char v[16];
		snprintf(v, sizeof(v), "b%u", step);
		json_t *arr = NULL;
		struct rf_layout *l = NULL;
		for (int k = 0; k < 2; k++) { /* a Node label and a claim; another label */
			label_node(&w, (step + (unsigned)k) % json_array_size(w.nodes), false,
				   k ? "railfit.io/x" : "network.topology.kubernetes.io/block", v);
			if (k == 0)
				change_claim(&w);
			objs = objects(&w);
			ck_assert_int_eq(
				rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
			builds++;
			size_t kept = 0;
			unsigned depth = rf_cluster_layout_chain(g, &kept);
			if (!rf_cluster_layout_patched(g)) {
				ck_assert_uint_eq(depth, 0);
				ck_assert_uint_eq(rf_cluster_layout_chain(prev, NULL), 257);
				full_at[n_full++ % 4] = builds;
			} else {
				ck_assert_uint_eq(depth, rf_cluster_layout_chain(prev, NULL) + 1);
				ck_assert_uint_gt(kept, 0);
			}
			ck_assert_int_eq(rf_cluster_layout_worn(g), depth >= 64);
			/* halfway: the Node objects kept (one a patch) past half their bound */
			ck_assert_int_eq(rf_cluster_layout_halfway(g), depth > 128);
			if (k == 0) { /* the next build replaces it: its layout stays (the chain
				       * holds it), its arrays go */
				arr = json_incref(w.nodes);
				l = g->layout;
				built_pool_nodes += l->pool_nodes != NULL;
			}
			rf_cluster_unref(prev);
			prev = g;
		}
		/* l is alive while g's layout was patched from it (the chain holds it) */
		if (rf_cluster_layout_patched(g) && l->patched) {
			ck_assert_ptr_null(l->pool_nodes);
			ck_assert_int_eq(arr->refcount, 1); /* no layout holds it */
			released++;
		}
		json_decref(arr);
	}
	/* a full build once the chain keeps more than 256 Node objects: the 258th build */
	ck_assert_uint_eq(n_full, 1);
	ck_assert_uint_eq(full_at[0], 258);
	ck_assert_uint_gt(released, 100);
	ck_assert_uint_gt(built_pool_nodes, 0);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* The pools a full build makes of the world's slices: one per driver and pool name. */
static size_t
pools_of(const struct world *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n_recs; i++) {
		size_t j = 0;
		while (j < i && (strcmp(w->recs[j]->driver, w->recs[i]->driver) != 0 ||
				 strcmp(w->recs[j]->pool, w->recs[i]->pool) != 0))
			j++;
		n += j == i;
	}
	return n;
}

/* A stop hook that says stop at its n-th call (0: never), counting its calls. */
struct stop_at {
	unsigned n, calls;
};

static bool
stop_at(void *userdata)
{
	struct stop_at *k = userdata;
	return ++k->calls == k->n;
}

/* A layout built in full (a compaction) stops where its hook says, between the layout's steps or
 * while it relinks claims and pods (into its own table): -ECANCELED, and the chain goes on from
 * prev as if it had not been tried, equal to a full build of the same objects. */
START_TEST(test_patch_full_build_stops)
{
	struct world w;
	struct rf_cluster_objects objs;
	/* the chain's first layout copies every device; later builds may borrow the records, as
	 * the live store's do: a cancelled build borrows the free ones and must give them back */
	struct rf_cluster *prev = chain_start(&w, 59, 6, &objs), *g = NULL, *full = NULL;
	for (unsigned step = 1; step <= 3; step++) { /* a chain of a few patches and claims */
		label_node(&w, step % json_array_size(w.nodes), false,
			   "network.topology.kubernetes.io/block", step % 2 ? "b1" : "b2");
		change_claim(&w);
		if (step == 2)
			new_pool(&w, (int)step);
		objs = objects(&w);
		objs.lend_records = true;
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		ck_assert(rf_cluster_layout_patched(g));
		rf_cluster_unref(prev);
		prev = g;
	}
	/* claims and pods to relink: a stop at the first pod drops a table of relinked claims */
	ck_assert_uint_gt(json_array_size(w.claims), 0);
	ck_assert_uint_gt(json_array_size(w.pods), 0);
	/* asked between the steps and every 1,024 items (here: the first claim and pod only),
	 * then at every pool, node, claim and pod */
	for (unsigned every = 0; every <= 1; every++) {
		unsigned checks = 0;
		for (unsigned n = 1;; n++) {
			struct stop_at k = { .n = n };
			objs = objects(&w);
			objs.lend_records = true;
			objs.full_layout = true;
			objs.stop = stop_at;
			objs.stop_userdata = &k;
			objs.stop_every = every;
			int r = rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g);
			if (r == 0) { /* past its last check: built */
				ck_assert_uint_eq(k.calls, checks);
				ck_assert(!rf_cluster_layout_patched(g));
				rf_cluster_unref(g);
				break;
			}
			ck_assert_int_eq(r, -ECANCELED);
			ck_assert_uint_eq(k.calls, n);
			checks = n;
			/* the next event patches prev, its table shared, as if nothing had been
			 * tried; the records read as published (a full build of the same objects
			 * borrows them) */
			char v[16];
			snprintf(v, sizeof(v), "c%u", n);
			label_node(&w, 0, false, "network.topology.kubernetes.io/block", v);
			change_claim(&w);
			objs = objects(&w);
			objs.lend_records = true;
			ck_assert_int_eq(
				rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
			ck_assert(rf_cluster_layout_patched(g));
			ck_assert_ptr_eq(g->reuse, prev->reuse);
			ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
			same_generation(&w, g, full);
			rf_cluster_unref(full);
			rf_cluster_unref(prev);
			prev = g;
		}
		/* between the layout's steps, before relinking, at the first claim, at the first
		 * pod (the claims relinked then); at each item: also at every pool, node (made,
		 * then finished), claim and pod */
		if (!every)
			ck_assert_uint_ge(checks, 6);
		else
			ck_assert_uint_eq(checks, 4 + pools_of(&w) + 2 * json_array_size(w.nodes) +
							  json_array_size(w.claims) +
							  json_array_size(w.pods));
	}
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* The live store's compaction: a layout built in full from the objects of one moment while, at
 * each of its checks, the chain goes on with a patch (a Node label, a claim, a slice; a new pool
 * once), as the publisher builds the events that come meanwhile. The full build reads the
 * chain's claim table as the patches write it. The chain's next build then starts from the full
 * one and patches it with everything since its objects: equal to a full build of the objects
 * of now, and so is the chain. */
struct interleave {
	struct world *w;
	struct rf_cluster *chain;
	unsigned calls;
};

static bool
interleave_patch(void *userdata)
{
	struct interleave *k = userdata;
	struct world *w = k->w;
	k->calls++;
	label_node(w, k->calls % json_array_size(w->nodes), false,
		   "network.topology.kubernetes.io/block", k->calls % 2 ? "b1" : "b2");
	change_claim(w);
	if (k->calls == 2)
		new_pool(w, 100);
	else
		change_slice(w, (int)k->calls + 100);
	struct rf_cluster_objects objs = objects(w);
	objs.lend_records = true;
	objs.arrays_frozen = true;
	struct rf_cluster *g = NULL;
	ck_assert_int_eq(rf_cluster_build_next(k->chain, &objs, &w->cfg, w->cel, false, &g), 0);
	rf_cluster_unref(k->chain);
	k->chain = g;
	return false;
}

START_TEST(test_patch_full_build_interleaved)
{
	struct world w;
	struct rf_cluster_objects objs;
	struct interleave k = { .w = &w, .chain = chain_start(&w, 61, 6, &objs) };
	for (unsigned step = 1; step <= 3; step++) { /* a chain with a table of its own */
		label_node(&w, step, false, "network.topology.kubernetes.io/block", "b0");
		change_claim(&w);
		objs = objects(&w);
		objs.lend_records = true;
		objs.arrays_frozen = true; /* (the world replaces its arrays, as the store) */
		struct rf_cluster *g = NULL;
		ck_assert_int_eq(rf_cluster_build_next(k.chain, &objs, &w.cfg, w.cel, false, &g),
				 0);
		ck_assert(rf_cluster_layout_patched(g));
		rf_cluster_unref(k.chain);
		k.chain = g;
	}
	/* the objects of this moment, held: the world's arrays and records are replaced as the
	 * chain goes on */
	objs = objects(&w);
	struct rf_slice **recs = malloc((w.n_recs + 1) * sizeof(*recs));
	ck_assert_ptr_nonnull(recs);
	for (size_t i = 0; i < w.n_recs; i++)
		recs[i] = rf_slice_ref(w.recs[i]);
	objs.slice_recs = recs;
	json_t *held[] = { json_incref(objs.nodes),      json_incref(objs.pods),
			   json_incref(objs.slices),     json_incref(objs.claims),
			   json_incref(objs.classes),    json_incref(objs.templates),
			   json_incref(objs.taint_rules) };
	objs.lend_records = true;
	objs.arrays_frozen = true;
	objs.full_layout = true;
	objs.stop = interleave_patch;
	objs.stop_userdata = &k;
	objs.stop_every = 1;
	struct rf_cluster *from = rf_cluster_ref(k.chain), *full = NULL, *g = NULL, *now = NULL;
	ck_assert_int_eq(rf_cluster_build_next(from, &objs, &w.cfg, w.cel, false, &full), 0);
	ck_assert(!rf_cluster_layout_patched(full));
	/* the chain went on at every check: each pool, node, claim and pod */
	ck_assert_uint_ge(k.calls, json_array_size(w.claims) + json_array_size(w.pods));
	ck_assert_ptr_ne(full->reuse, k.chain->reuse);
	rf_cluster_unref(from);
	for (size_t i = 0; i < objs.n_slice_recs; i++)
		rf_slice_unref(recs[i]);
	free(recs);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		json_decref(held[i]);
	/* the chain moves onto it: one build with everything since (a patch, or in full where
	 * a change is one a patch does not compose) */
	objs = objects(&w);
	objs.lend_records = true;
	objs.arrays_frozen = true;
	ck_assert_int_eq(rf_cluster_build_next(full, &objs, &w.cfg, w.cel, false, &g), 0);
	ck_assert_uint_le(rf_cluster_layout_chain(g, NULL), 1);
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &now), 0);
	same_generation(&w, g, now);
	same_generation(&w, k.chain, now);
	rf_cluster_unref(now);
	rf_cluster_unref(g);
	rf_cluster_unref(full);
	rf_cluster_unref(k.chain);
	world_release(&w);
}
END_TEST

/* Worn before 64 patches: 3 of 16 nodes leaving in one event (Node objects and slices) leave
 * holes in the node, pool and device indexes past an eighth (a quarter builds in full). */
START_TEST(test_patch_worn_by_holes)
{
	struct world w;
	struct rf_cluster_objects objs;
	struct rf_cluster *prev = chain_start(&w, 53, 16, &objs), *g = NULL;
	json_t *left = json_array();
	for (int k = 0; k < 2; k++) { /* one node, then two more */
		for (int j = 0; j < (k ? 2 : 1); j++) {
			char name[128];
			snprintf(name, sizeof(name), "%s", node_name_at(w.nodes, 0));
			delete_node_object(&w, name, left);
			delete_slices_of(&w, name, NULL);
		}
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		ck_assert(rf_cluster_layout_patched(g));
		ck_assert_uint_eq(rf_cluster_layout_chain(g, NULL), (unsigned)k + 1);
		ck_assert_int_eq(rf_cluster_layout_worn(g), k == 1);
		rf_cluster_unref(prev);
		prev = g;
	}
	json_decref(left);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A chain of ResourceSlice changes (a device attribute) keeps no Node object: it reaches the
 * depth bound, 512 patches, where a full build starts a new chain. */
START_TEST(test_patch_chain_depth_bound)
{
	if (getenv("RF_UNDER_VALGRIND"))
		return; /* 520 builds; test_patch_chain_bounded walks the same code */
	struct world w;
	struct rf_cluster_objects objs;
	struct rf_cluster *prev = chain_start(&w, 43, 4, &objs), *g = NULL;
	size_t i = 0;
	while (!w.recs[i]->node) /* a node's own pool */
		i++;
	unsigned n_full = 0;
	for (unsigned step = 1; step <= 520; step++) {
		json_t *v = copy_at(w.slices, i);
		json_t *dev =
			json_array_get(json_object_get(json_object_get(v, "spec"), "devices"), 0);
		if (!json_is_object(json_object_get(dev, "attributes")))
			json_object_set_new(dev, "attributes", json_object());
		json_object_set_new(json_object_get(dev, "attributes"), "bench.railfit.io/probe",
				    json_pack("{s:i}", "int", (int)step));
		put_slice(&w, i, v);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		if (!rf_cluster_layout_patched(g)) {
			ck_assert_uint_eq(rf_cluster_layout_chain(prev, NULL), 512);
			ck_assert_uint_eq(step, 513);
			n_full++;
		} else {
			size_t kept = 0;
			ck_assert_uint_eq(rf_cluster_layout_chain(g, &kept),
					  rf_cluster_layout_chain(prev, NULL) + 1);
			/* under CHAIN_KEPT_MIN: the bound met is the depth's */
			ck_assert_uint_lt(kept, (size_t)4 << 20);
		}
		rf_cluster_unref(prev);
		prev = g;
	}
	ck_assert_uint_eq(n_full, 1);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A Node's Ready condition flipping between two patches: the next patch keeps the node's
 * older object (it reads the same but for Ready) and the chain holds no object for it; its
 * allocatable changing keeps the new one. A node added by a patch, whose status then changes,
 * keeps pointing into the object it was added from after the generations that had it go. */
static json_t *
with_status(const json_t *node, const char *ready, const char *gpus)
{
	json_t *nj = json_deep_copy(node);
	if (!json_is_object(json_object_get(nj, "status")))
		json_object_set_new(nj, "status", json_object());
	json_t *st = json_object_get(nj, "status");
	json_object_set_new(st, "conditions",
			    json_pack("[{s:s,s:s}]", "type", "Ready", "status", ready));
	if (gpus) {
		if (!json_is_object(json_object_get(st, "allocatable")))
			json_object_set_new(st, "allocatable", json_object());
		json_object_set_new(json_object_get(st, "allocatable"), "example.com/gpu",
				    json_string(gpus));
	}
	return nj;
}

START_TEST(test_patch_status_keeps_no_object)
{
	struct world w;
	world_init_nodes(&w, 45, 4);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	/* a node of a new name joins (no slices): patched, the object kept */
	json_t *added = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind",
				  "Node", "metadata", "name", "zz-joined", "labels", "a", "b");
	set_array(&w.nodes, inserted(w.nodes, json_array_size(w.nodes), added));
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
	ck_assert(rf_cluster_layout_patched(g));
	rf_cluster_unref(prev);
	prev = g;
	for (int step = 0; step < 6; step++) {
		/* every node's status changes (the joined one's too), one node's label too */
		size_t n = json_array_size(w.nodes);
		const char *gpus = step == 4 ? "2" : NULL; /* allocatable: the object is read */
		json_t *objs_before[8] = { NULL };
		for (size_t i = 0; i < n && i < 8; i++) {
			json_t *nj = with_status(json_array_get(w.nodes, i),
						 step % 2 ? "False" : "True", i == 0 ? gpus : NULL);
			objs_before[i] = json_incref(nj);
			set_array(&w.nodes, replaced(w.nodes, i, nj));
		}
		char v[16];
		snprintf(v, sizeof(v), "b%d", step);
		label_node(&w, 1, false, "network.topology.kubernetes.io/block", v);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		ck_assert(rf_cluster_layout_patched(g));
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		rf_cluster_unref(full);
		/* the labelled node's object, and the one whose allocatable changed */
		size_t kept = json_array_size(g->layout->own_node_objs);
		ck_assert_msg(kept == (gpus ? 2u : 1u), "step %d: %zu objects kept", step, kept);
		const struct rf_node *first = rf_cluster_node(g, meta_str(objs_before[0], "name"));
		ck_assert(gpus ? first->json == objs_before[0] : first->json != objs_before[0]);
		for (size_t i = 0; i < n && i < 8; i++) {
			const struct rf_node *nd =
				rf_cluster_node(g, meta_str(objs_before[i], "name"));
			ck_assert_int_eq(rf_cluster_node_ready(g, nd), step % 2 == 0);
			json_decref(objs_before[i]);
		}
		rf_cluster_unref(prev);
		prev = g;
		/* the joined node's name points into the object it joined with */
		ck_assert_str_eq(rf_cluster_node(prev, "zz-joined")->name, "zz-joined");
	}
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* Patches that rebuild every pool (a device attribute of every slice): the chain ends when what
 * its layouts keep for the pieces they replaced passes the full build's own bytes (with a
 * floor of 4 MiB), before its depth. */
START_TEST(test_patch_chain_bytes_bounded)
{
	struct world w;
	world_init_nodes(&w, 43, 10);
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	unsigned full_at = 0;
	for (unsigned step = 1; step <= 127 && !full_at; step++) {
		char v[16];
		snprintf(v, sizeof(v), "b%u", step);
		for (size_t i = 0; i < w.n_recs;
		     i++) { /* every pool rebuilt, no Node object kept */
			json_t *sl = copy_at(w.slices, i);
			json_t *dev = json_array_get(rf_jpath(sl, "spec.devices"), 0);
			if (json_is_object(json_object_get(dev, "attributes")))
				json_object_set_new(json_object_get(dev, "attributes"),
						    "test.railfit.io/step",
						    json_pack("{s:s}", "string", v));
			put_slice(&w, i, sl);
		}
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, false, &g), 0);
		const struct rf_layout *pl = prev->layout;
		size_t bound = pl->full_bytes > (4u << 20) ? pl->full_bytes : (4u << 20);
		ck_assert_int_eq(rf_cluster_layout_patched(g), pl->chain_kept <= bound);
		if (!rf_cluster_layout_patched(g))
			full_at = step;
		rf_cluster_unref(prev);
		prev = g;
	}
	ck_assert_msg(full_at > 2 && full_at < 127, "full build at step %u", full_at);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* A pool of two slices, one naming node a and one naming node b (a pool on several nodes). */
static void
pair_pool(struct world *w, const char *pool, const char *a, const char *b)
{
	const char *on[2] = { a, b };
	for (int s = 0; s < 2; s++) {
		char sname[96];
		snprintf(sname, sizeof(sname), "%s-%d", pool, s);
		json_t *sl =
			json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, "
				  "s:[{s:s}]}}",
				  "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
				  "metadata", "name", sname, "spec", "driver", "shared.railfit.io",
				  "nodeName", on[s], "pool", "name", pool, "generation", 1,
				  "resourceSliceCount", 2, "devices", "name", s ? "b-0" : "a-0");
		put_slice(w, w->n_recs, sl);
	}
}

/* A pool in two generations, the older one naming node X with devices the newer one (on node
 * Y) does not have: a full build warns that X still sees the older generation, between the
 * rules' and the classes' warnings. A later DeviceTaintRule elsewhere must not drop that
 * warning (a patch composed the warnings without it: built in full while it stands). */
START_TEST(test_patch_keeps_older_generation_warning)
{
	struct world w;
	world_init(&w, 41);
	size_t gi = 0;
	while (strcmp(w.recs[gi]->driver, "gpu.nvidia.com") != 0)
		gi++;
	const char *x = node_name_at(w.nodes, 1), *y = node_name_at(w.nodes, 2);
	for (int gen = 1; gen <= 2; gen++) {
		json_t *sl = copy_at(w.slices, gi), *spec = json_object_get(sl, "spec");
		char name[32];
		snprintf(name, sizeof(name), "multi-%d", gen);
		json_object_set_new(json_object_get(sl, "metadata"), "name", json_string(name));
		json_object_set_new(json_object_get(spec, "pool"), "name", json_string("multi"));
		json_object_set_new(json_object_get(spec, "pool"), "generation", json_integer(gen));
		json_object_set_new(json_object_get(spec, "pool"), "resourceSliceCount",
				    json_integer(1));
		json_object_set_new(spec, "nodeName", json_string(gen == 1 ? x : y));
		if (gen == 2) /* none of generation 1's devices */
			json_object_set_new(json_array_get(json_object_get(spec, "devices"), 0),
					    "name", json_string("other-0"));
		if (gen == 2)
			while (json_array_size(json_object_get(spec, "devices")) > 1)
				json_array_remove(json_object_get(spec, "devices"), 1);
		put_slice(&w, w.n_recs, sl);
	}
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *g0 = NULL, *g1 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &g0), 0);
	bool warned = false;
	for (size_t i = 0; i < rf_cluster_n_warnings(g0); i++)
		warned |= strstr(rf_cluster_warning(g0, i), "still sees generation 1") != NULL;
	ck_assert_msg(warned, "no warning of the older generation to keep");
	char buf[512];
	snprintf(
		buf, sizeof(buf),
		"{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"bad-gpu\"},\"spec\":"
		"{\"deviceSelector\":{\"driver\":\"gpu.nvidia.com\",\"pool\":\"%s\",\"device\":"
		"\"gpu-3\"},\"taint\":{\"key\":\"test.railfit.io/xid\",\"effect\":\"NoSchedule\"}}}",
		w.recs[gi]->pool);
	json_t *rules = json_copy(w.rules);
	add_json(rules, buf);
	set_array(&w.rules, rules);
	objs = objects(&w);
	ck_assert_int_eq(rf_cluster_build_next(g0, &objs, &w.cfg, w.cel, false, &g1), 0);
	ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
	same_generation(&w, g1, full);
	rf_cluster_unref(full);
	rf_cluster_unref(g1);
	rf_cluster_unref(g0);
	world_release(&w);
}
END_TEST

/* A node leaving in the real order while a pool of two slices names it and another node: its
 * Node object goes (it stays, a node only slices name), then its own drivers' slices: the pool's
 * slice that names it makes no node (the pool is no node's own), so it goes, as in a full
 * build. Every step patched. */
START_TEST(test_patch_node_named_by_a_pool_of_two)
{
	struct world w;
	world_init_nodes(&w, 5, 8);
	char x[128], y[128];
	snprintf(x, sizeof(x), "%s", node_name_at(w.nodes, 2));
	snprintf(y, sizeof(y), "%s", node_name_at(w.nodes, 5));
	json_t *left = json_array();
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	pair_pool(&w, "pair", x, y);
	ck_assert(next_equals_full(&w, &prev));
	delete_node_object(&w, x, left);
	ck_assert(next_equals_full(&w, &prev));
	ck_assert_ptr_nonnull(rf_cluster_node(prev, x));
	ck_assert_uint_gt(delete_slices_of(&w, x, "gpu.nvidia.com") +
				  delete_slices_of(&w, x, "dra.net") +
				  delete_slices_of(&w, x, "dra.cpu"),
			  0);
	ck_assert(next_equals_full(&w, &prev));
	ck_assert_ptr_null(rf_cluster_node(prev, x));
	node_comes_back(&w, x, left);
	ck_assert(next_equals_full(&w, &prev));
	ck_assert_uint_eq(rf_cluster_node(prev, x)->n_pools, 1); /* the pair's slice there */
	rf_cluster_unref(prev);
	json_decref(left);
	world_release(&w);
}
END_TEST

/* Shared pools published, replaced and deleted, nodes labelled into and out of a nodeSelector
 * pool, joining and leaving (the Node object first, its slices later), with slice, claim and pod
 * events between (claims allocated on the shared pools' devices): every generation reads like a
 * full build (usage and the walk's fingerprints included), and every node is judged through the
 * memo carried across the patches for a pod asking the shared pools' devices as a fresh
 * evaluation and a full build judge it, a node whose pool list changed never remembered the
 * first time. Patched, but while a shared pool of GPUs with a PCIe root exists (_i 1 adds
 * some): built in full then. */
static void add_rule(struct world *w, bool front, const char *name, const char *selector,
		     const char *key, const char *effect);
static void drop_rule(struct world *w, const char *name);

START_TEST(test_patch_shared_pools_random)
{
	struct world w;
	world_init_nodes(&w, 91 + (uint64_t)_i, 12);
	json_t *ps = shared_pod(&w);
	json_t *left = json_array();
	json_t *judged[2] = { ps, w.pending[1] };
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	unsigned serial = 0, patched = 0, plain = 0, relisted = 0;
	int gpu_pools = 0;
	struct memo_counts cnt = { 0 };
	char pools[8][32];
	int n_pools = 0;
	bool rules_on_shared = false;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0, n = chain_steps(60); step < n; step++) {
		bool layout = true;
		size_t nn = json_array_size(w.nodes);
		switch (below(&w, 11)) {
		case 0: /* a shared pool published */
		case 1:
			if (n_pools < 8) {
				bool gpu = _i == 1 && below(&w, 4) == 0;
				snprintf(pools[n_pools], sizeof(pools[0]), "%sshared-%d",
					 gpu ? "gpu-" : (below(&w, 2) ? "a" : "z"), step);
				put_shared(&w, pools[n_pools++], 1, gpu);
				gpu_pools += gpu;
				break;
			}
			/* fall through */
		case 2: /* one replaced (another selection, devices, generation) */
			if (n_pools) {
				int k = (int)below(&w, (unsigned)n_pools);
				drop_shared(&w, pools[k]); /* its slices may be fewer now */
				put_shared(&w, pools[k], step, strncmp(pools[k], "gpu-", 4) == 0);
			} else {
				layout = change_slice(&w, step);
			}
			break;
		case 3: /* one deleted */
			if (n_pools) {
				int k = (int)below(&w, (unsigned)n_pools);
				drop_shared(&w, pools[k]);
				gpu_pools -= strncmp(pools[k], "gpu-", 4) == 0;
				memmove(pools[k], pools[n_pools - 1], sizeof(pools[0]));
				n_pools--;
			} else {
				layout = false;
			}
			break;
		case 4: /* a node into or out of the nodeSelector's */
			label_shared(&w);
			break;
		case 5: /* nodes join, leave with their objects, get their objects (not one that
			 * left below: it comes back there) */
			layout = !json_array_size(left) && change_node_set(&w, step);
			break;
		case 6: /* a node leaves in the real order: its object first, its slices later */
			if (json_array_size(left) && below(&w, 2)) {
				char x[128];
				snprintf(x, sizeof(x), "%s", node_name_at(left, 0));
				if (below(&w, 2)) {
					/* all of them, or its drivers' (a slice of a pool
					 * naming several nodes stays: it makes no node) */
					layout = below(&w, 2) ? delete_slices_of(&w, x, NULL) > 0
							      : delete_slices_of(&w, x,
										 "gpu.nvidia.com") +
										delete_slices_of(
											&w, x,
											"dra.net") +
										delete_slices_of(
											&w, x,
											"dra.cpu") >
									0;
				} else {
					node_comes_back(&w, x, left);
					restore_slices_of(&w, x);
				}
			} else if (nn > 6) {
				char x[128];
				snprintf(x, sizeof(x), "%s",
					 node_name_at(w.nodes, below(&w, (unsigned)nn)));
				delete_node_object(&w, x, left);
			} else {
				layout = false;
			}
			break;
		case 7:
			layout = change_slice(&w, step);
			break;
		case 8: /* a DeviceTaintRule over the shared pools' driver, or one device of it,
			 * put or taken away (the pools kept, their nodes' views stamped) */
			if (rules_on_shared) {
				drop_rule(&w, "on-shared");
				rules_on_shared = false;
			} else {
				add_rule(&w, below(&w, 2), "on-shared",
					 below(&w, 2)
						 ? "\"driver\":\"shared.railfit.io\""
						 : "\"driver\":\"shared.railfit.io\",\"device\":"
						   "\"s0-0\"",
					 "test.railfit.io/shared", "NoSchedule");
				rules_on_shared = true;
			}
			break;
		default:
			change_usage(&w, prev, &serial);
			layout = false;
			break;
		}
		if (below(&w, 3) == 0)
			change_usage(&w, prev, &serial);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		same_generation(&w, g, full);
		same_usage(g, full);
		results_are_mine(&w, g);
		for (size_t k = 0; k < 2; k++)
			judge_all(g, prev, full, judged[k], &cnt, NULL);
		rf_cluster_unref(full);
		same_as_walked(&w, g, objs);
		if (layout && !gpu_pools) {
			plain++;
			patched += rf_cluster_layout_patched(g);
		}
		relisted += rf_cluster_layout_patched(g) && n_pools;
		rf_cluster_unref(prev);
		prev = g;
	}
	if (getenv("DBG"))
		fprintf(stderr, "%u of %u patched, relisted %u, rebuilt %u kept %u\n", patched,
			plain, relisted, cnt.rebuilt, cnt.carried_kept);
	/* the rest: the holes' bounds, warnings */
	ck_assert_msg(patched * 4 >= plain * 3, "%u of %u layout changes patched", patched, plain);
	ck_assert_msg(relisted > 0 && cnt.rebuilt > 0, "relisted %u, rebuilt %u", relisted,
		      cnt.rebuilt);
	rf_cluster_unref(prev);
	json_decref(ps);
	json_decref(left);
	world_release(&w);
}
END_TEST

/* ---- DeviceTaintRules over many pools: the pools kept, the taints the layout's ---- */

static void
add_rule(struct world *w, bool front, const char *name, const char *selector, const char *key,
	 const char *effect)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
		 "\"deviceSelector\":{%s},\"taint\":{\"key\":\"%s\",\"value\":\"v-%s\","
		 "\"effect\":\"%s\"}}}",
		 name, selector, key, name, effect);
	json_t *arr = json_array();
	if (!front)
		json_array_extend(arr, w->rules);
	add_json(arr, buf);
	if (front)
		json_array_extend(arr, w->rules);
	set_array(&w->rules, arr);
}

static void
drop_rule(struct world *w, const char *name)
{
	for (size_t i = 0; i < json_array_size(w->rules); i++)
		if (strcmp(json_string_value(
				   rf_jpath(json_array_get(w->rules, i), "metadata.name")),
			   name) == 0) {
			set_array(&w->rules, replaced(w->rules, i, NULL));
			return;
		}
	ck_abort_msg("no rule %s", name);
}

/* An attribute of the first device of the first slice of the driver's (its pool is replaced). */
static const char *
touch_driver_slice(struct world *w, const char *driver, int step)
{
	for (size_t i = 0; i < w->n_recs; i++) {
		if (w->recs[i]->skip || strcmp(w->recs[i]->driver, driver) != 0)
			continue;
		slice_attr_changed(w, i, step);
		return w->recs[i]->pool;
	}
	ck_abort_msg("no slice of %s", driver);
	return NULL;
}

/* The first two devices of the first slice of the driver carry a taint of their own (the rules'
 * come after it). */
static void
own_taint(struct world *w, const char *driver)
{
	for (size_t i = 0; i < w->n_recs; i++) {
		if (w->recs[i]->skip || strcmp(w->recs[i]->driver, driver) != 0 ||
		    w->recs[i]->n_devices < 2)
			continue;
		json_t *s = copy_at(w->slices, i);
		for (size_t d = 0; d < 2; d++)
			json_object_set_new(
				json_array_get(rf_jpath(s, "spec.devices"), d), "taints",
				json_pack("[{s:s, s:s, s:s}]", "key", "test.railfit.io/own",
					  "value", "mine", "effect", "NoSchedule"));
		put_slice(w, i, s);
		return;
	}
	ck_abort_msg("no slice of %s", driver);
}

/* The next generation after a rules' change (and maybe slices'): patched (unless full), equal to
 * a full build, with the memo carried and every node judged through it for the pending pods
 * (a node whose devices' taints changed is judged again: the GPU pod's verdicts follow the
 * taints). The pools of the driver other than `replaced` are prev's structs (kept, their taints
 * the layout's) when kept_driver is set. */
static void
next_rules(struct world *w, struct rf_cluster **prev, bool full_expected, const char *kept_driver,
	   const char *replaced, const char *what)
{
	struct rf_cluster_objects objs = objects(w);
	struct rf_cluster *g = NULL, *full = NULL;
	struct memo_counts cnt = { 0 };
	ck_assert_int_eq(rf_cluster_build_next(*prev, &objs, &w->cfg, w->cel, false, &g), 0);
	ck_assert_msg(rf_cluster_layout_patched(g) == !full_expected, "%s: %s", what,
		      full_expected ? "patched" : "built in full");
	ck_assert_int_eq(rf_cluster_build(&objs, &w->cfg, w->cel, &full), 0);
	same_generation(w, g, full);
	same_usage(g, full);
	results_are_mine(w, g);
	size_t kept = 0;
	for (size_t i = 0; kept_driver && i < rf_cluster_n_nodes(g); i++) {
		const struct rf_node *n = rf_cluster_node_at(g, i),
				     *o = rf_cluster_node_at(*prev, i);
		ck_assert_uint_eq(n->n_pools, o->n_pools);
		for (size_t e = 0; e < n->n_pools; e++) {
			if (strcmp(n->pools[e]->driver, kept_driver) != 0)
				continue;
			bool mine = replaced && strcmp(n->pools[e]->name, replaced) == 0;
			ck_assert_msg(mine == (n->pools[e] != o->pools[e]), "%s: pool %s %s", what,
				      n->pools[e]->name, mine ? "kept" : "replaced");
			kept += !mine;
		}
	}
	ck_assert(!kept_driver || kept > 0);
	if (!full_expected)
		ck_assert_msg(rf_cluster_memo(g) == rf_cluster_memo(*prev), "%s: memo not carried",
			      what);
	for (int k = 0; k < 3; k++)
		judge_all(g, *prev, full, w->pending[k], &cnt, NULL);
	rf_cluster_unref(full);
	same_as_walked(w, g, objs);
	rf_cluster_unref(*prev);
	*prev = g;
}

/* How many of g's devices of the driver carry a taint of key (through rf_device_taints), each
 * at position at (SIZE_MAX: anywhere). */
static size_t
tainted(const struct rf_cluster *g, const char *driver, const char *key, size_t at)
{
	size_t n = 0;
	for (size_t i = 0; i < rf_cluster_n_nodes(g); i++) {
		const struct rf_node *nd = rf_cluster_node_at(g, i);
		for (size_t d = 0; d < nd->n_devices; d++) {
			size_t nt;
			const struct rf_taint *t = rf_device_taints(g, nd->devices[d], &nt);
			if (strcmp(nd->devices[d]->pool->driver, driver) != 0)
				continue;
			for (size_t k = 0; k < nt; k++)
				if (strcmp(t[k].key, key) == 0) {
					ck_assert(at == SIZE_MAX || k == at);
					n++;
				}
		}
	}
	return n;
}

/* A DeviceTaintRule over a whole driver (every GPU: a driver upgrade drains them) and its
 * neighbours: added, a rule over one pool beside it, one over a device name of every pool of
 * the driver in the same build as slices changing, the whole-driver one removed, rules reordered
 * (built in full), one put before the others, and a slice change on a layout holding the
 * taints. Every step reads like a full build, keeps the pools the rules alone touched, and
 * judges again (through the carried memo) the nodes whose devices' taints changed. */
START_TEST(test_patch_taint_rule_over_a_driver)
{
	struct world w;
	world_init_nodes(&w, 13, 8);
	own_taint(&w, "gpu.nvidia.com");
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL;
	const char *gpu = "gpu.nvidia.com";
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	struct memo_counts cnt = { 0 };
	for (int k = 0; k < 3; k++) /* remembered, to be judged again */
		judge_all(prev, NULL, prev, w.pending[k], &cnt, NULL);
	size_t gpus = 0;
	for (size_t i = 0; i < rf_cluster_n_nodes(prev); i++)
		gpus += rf_cluster_node_at(prev, i)->n_gpus;
	ck_assert_uint_gt(gpus, 8);

	add_rule(&w, false, "drain", "\"driver\":\"gpu.nvidia.com\"", "test.railfit.io/drain",
		 "NoSchedule");
	next_rules(&w, &prev, false, gpu, NULL, "whole driver added");
	ck_assert_uint_ge(tainted(prev, gpu, "test.railfit.io/drain", SIZE_MAX), gpus);
	ck_assert_uint_eq(tainted(prev, gpu, "test.railfit.io/own", 0), 2);

	char sel[256];
	snprintf(sel, sizeof(sel), "\"driver\":\"gpu.nvidia.com\",\"pool\":\"%s\"",
		 some_pool(&w, gpu));
	add_rule(&w, false, "one-pool", sel, "test.railfit.io/one", "NoExecute");
	next_rules(&w, &prev, false, gpu, NULL, "one pool beside it");
	ck_assert_uint_gt(tainted(prev, gpu, "test.railfit.io/one", SIZE_MAX), 0);

	add_rule(&w, false, "gpu-2s", "\"driver\":\"gpu.nvidia.com\",\"device\":\"gpu-2\"",
		 "test.railfit.io/two", "NoSchedule");
	const char *changed = touch_driver_slice(&w, gpu, 1);
	touch_driver_slice(&w, "dra.net", 1);
	next_rules(&w, &prev, false, gpu, changed, "device selector, slices changed");
	ck_assert_uint_gt(tainted(prev, gpu, "test.railfit.io/two", SIZE_MAX), 0);

	drop_rule(&w, "drain");
	next_rules(&w, &prev, false, gpu, NULL, "whole driver removed");
	ck_assert_uint_eq(tainted(prev, gpu, "test.railfit.io/drain", SIZE_MAX), 0);

	drop_rule(&w, "gpu-2s");
	add_rule(&w, false, "gpu-2s", "\"driver\":\"gpu.nvidia.com\",\"device\":\"gpu-2\"",
		 "test.railfit.io/two", "NoSchedule"); /* a new object, last */
	json_t *first = json_incref(json_array_get(w.rules, 0));
	set_array(&w.rules, replaced(w.rules, 0, NULL));
	json_array_append_new(w.rules, first); /* r1 moves behind the others */
	next_rules(&w, &prev, true, NULL, NULL, "rules reordered");

	/* before the others: the drain taint comes first on every GPU without its own */
	add_rule(&w, true, "drain", "\"driver\":\"gpu.nvidia.com\"", "test.railfit.io/drain",
		 "NoSchedule");
	next_rules(&w, &prev, false, gpu, NULL, "whole driver first");
	ck_assert_uint_ge(tainted(prev, gpu, "test.railfit.io/drain", SIZE_MAX), gpus);
	ck_assert_uint_eq(tainted(prev, gpu, "test.railfit.io/own", 0), 2); /* still first */

	changed = touch_driver_slice(&w, gpu, 2);
	next_rules(&w, &prev, false, gpu, changed, "a slice alone, on a layout holding taints");
	drop_rule(&w, "one-pool");
	changed = touch_driver_slice(&w, gpu, 3);
	next_rules(&w, &prev, false, gpu, changed, "one pool's rule removed, a slice changed");
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

/* Rules over whole drivers, device names of a driver and single pools, added, removed and
 * reordered at random, with slice, Node and claim changes between and in the same builds:
 * every generation equal to a full build, every node judged through the memo as a fresh
 * evaluation and a full build judge it. */
START_TEST(test_patch_taint_rules_random)
{
	struct world w;
	world_init_nodes(&w, 41 + (uint64_t)_i, 6);
	own_taint(&w, "gpu.nvidia.com");
	own_taint(&w, "dra.net");
	struct rf_cluster_objects objs = objects(&w);
	struct rf_cluster *prev = NULL, *g = NULL, *full = NULL;
	struct memo_counts cnt = { 0 };
	unsigned patched = 0, rule_steps = 0;
	const char *drivers[] = { "gpu.nvidia.com", "dra.net" };
	ck_assert_int_eq(rf_cluster_build_next(NULL, &objs, &w.cfg, w.cel, false, &prev), 0);
	for (int step = 0, n = chain_steps(30); step < n; step++) {
		bool layout = true, rules = false;
		char name[32], sel[256];
		snprintf(name, sizeof(name), "r-%d", step);
		const char *driver = drivers[below(&w, 2)];
		switch (below(&w, 8)) {
		case 0:
		case 1:
			snprintf(sel, sizeof(sel), "\"driver\":\"%s\"", driver);
			add_rule(&w, below(&w, 2), name, sel, "test.railfit.io/all",
				 below(&w, 2) ? "NoSchedule" : "NoExecute");
			rules = true;
			break;
		case 2:
			snprintf(sel, sizeof(sel), "\"driver\":\"%s\",\"device\":\"%s\"", driver,
				 strcmp(driver, "dra.net") == 0 ? "nic-1" : "gpu-0");
			add_rule(&w, below(&w, 2), name, sel, "test.railfit.io/dev", "NoSchedule");
			rules = true;
			break;
		case 3:
			if (some_pool(&w, driver)) {
				snprintf(sel, sizeof(sel), "\"driver\":\"%s\",\"pool\":\"%s\"",
					 driver, some_pool(&w, driver));
				add_rule(&w, false, name, sel, "test.railfit.io/pool",
					 "NoSchedule");
				rules = true;
			}
			break;
		case 4:
			if (json_array_size(w.rules)) {
				set_array(&w.rules,
					  replaced(w.rules,
						   below(&w, (unsigned)json_array_size(w.rules)),
						   NULL));
				rules = true;
			}
			break;
		case 5:
			change_rules(&w, step);
			rules = true;
			break;
		case 6:
			layout = change_node(&w);
			break;
		default:
			layout = change_slice(&w, step);
			break;
		}
		if (rules && below(&w, 3) == 0)
			change_slice(&w, step); /* in the same build */
		if (below(&w, 4) == 0)
			change_claim(&w);
		objs = objects(&w);
		ck_assert_int_eq(rf_cluster_build_next(prev, &objs, &w.cfg, w.cel, !layout, &g), 0);
		ck_assert_int_eq(rf_cluster_build(&objs, &w.cfg, w.cel, &full), 0);
		rule_steps += rules;
		patched += rules && rf_cluster_layout_patched(g);
		same_generation(&w, g, full);
		same_usage(g, full);
		for (int k = 0; k < 3; k++)
			judge_all(g, prev, full, w.pending[k], &cnt, NULL);
		rf_cluster_unref(full);
		rf_cluster_unref(prev);
		prev = g;
	}
	ck_assert_msg(patched * 2 >= rule_steps && cnt.rebuilt > 0 && cnt.carried_kept > 0,
		      "%u of %u rule changes patched, %u judged again, %u kept", patched,
		      rule_steps, cnt.rebuilt, cnt.carried_kept);
	rf_cluster_unref(prev);
	world_release(&w);
}
END_TEST

Suite *
patch_suite(void)
{
	Suite *s = suite_create("patch");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_patched_layout_equals_full_build, 0, 5);
	tcase_add_loop_test(tc, test_patch_shares_what_did_not_change, 0, 2);
	tcase_add_test(tc, test_patch_shares_slice_arrays);
	tcase_add_test(tc, test_patch_again_from_the_same_generation);
	tcase_add_test(tc, test_full_build_shares_equal_requests);
	tcase_add_test(tc, test_shared_requests_only_when_equal);
	tcase_add_test(tc, test_taint_rule_patches_its_pools);
	tcase_add_loop_test(tc, test_patch_pools_come_and_go, 0, 2);
	tcase_add_loop_test(tc, test_patch_node_joins, 0, 2);
	tcase_add_loop_test(tc, test_patch_node_leaves_with_its_slices, 0, 2);
	tcase_add_test(tc, test_patch_node_warning_goes_with_it);
	suite_add_tcase(s, tc);
	TCase *life = tcase_create("node life");
	tcase_set_timeout(life, 120);
	/* under valgrind one order of each kind: a driver's slices a build (1), the node back
	 * while its pods are bound to it (2) */
	if (getenv("RF_UNDER_VALGRIND"))
		tcase_add_loop_test(life, test_patch_node_leaves_in_real_order, 1, 3);
	else
		tcase_add_loop_test(life, test_patch_node_leaves_in_real_order, 0, 4);
	tcase_add_loop_test(life, test_patch_node_life_random, 0,
			    getenv("RF_UNDER_VALGRIND") ? 1 : 4);
	suite_add_tcase(s, life);
	TCase *shared = tcase_create("shared pools");
	tcase_set_timeout(shared, 120);
	tcase_add_test(shared, test_patch_all_nodes_pool_life);
	tcase_add_test(shared, test_patch_relisting_bounded);
	tcase_add_test(shared, test_patch_chain_bounded);
	tcase_add_test(shared, test_patch_chain_depth_bound);
	tcase_add_test(shared, test_patch_worn_by_holes);
	tcase_add_test(shared, test_patch_full_build_stops);
	tcase_add_test(shared, test_patch_full_build_interleaved);
	tcase_add_test(shared, test_patch_chain_bytes_bounded);
	tcase_add_test(shared, test_patch_status_keeps_no_object);
	tcase_add_test(shared, test_patch_node_named_by_a_pool_of_two);
	tcase_add_test(shared, test_patch_keeps_older_generation_warning);
	tcase_add_loop_test(shared, test_patch_shared_pools_random, 0,
			    getenv("RF_UNDER_VALGRIND") ? 1 : 4);
	suite_add_tcase(s, shared);
	TCase *rules = tcase_create("taint rules");
	tcase_set_timeout(rules, 120);
	tcase_add_test(rules, test_patch_taint_rule_over_a_driver);
	tcase_add_loop_test(rules, test_patch_taint_rules_random, 0,
			    getenv("RF_UNDER_VALGRIND") ? 1 : 4);
	suite_add_tcase(s, rules);
	TCase *usage = tcase_create("usage");
	tcase_set_timeout(usage, 120);
	tcase_add_loop_test(usage, test_patched_usage_by_difference, 0, 2);
	suite_add_tcase(s, usage);
	TCase *memo = tcase_create("memo");
	tcase_set_timeout(memo, 120);
	tcase_add_loop_test(memo, test_memo_patch_judges_touched_node_again, 0, 6);
	tcase_add_loop_test(memo, test_memo_across_patched_layouts, 0, 3);
	tcase_add_loop_test(memo, test_memo_carried_across_compaction, 0, 3);
	tcase_add_loop_test(memo, test_memo_across_node_set_changes, 0, 3);
	suite_add_tcase(s, memo);
	TCase *classes = tcase_create("classes");
	tcase_set_timeout(classes, 120);
	/* one chain under valgrind (its events are those of the others) */
	tcase_add_loop_test(classes, test_class_most_claims_name, 0,
			    getenv("RF_UNDER_VALGRIND") ? 1 : 3);
	suite_add_tcase(s, classes);
	return s;
}
