/* Usage by difference (alloc/model/model-delta.c): after random sequences of claim and pod
 * changes on a generated fleet-shaped cluster, the generation built from the previous one's
 * usage equals a build from scratch of the same objects — every device's holder, shares,
 * consumed capacity and annotated bandwidth, every node's pods, free GPUs/NICs and front-end
 * use, every rail group — and a node's fingerprint is the one a walk from the same previous
 * generation gives, and changes exactly when its usage does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/gen/gen_cluster.h"
#include "alloc/model/model-private.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *model_delta_suite(void);

struct world {
	struct fixture f;
	struct rf_cluster *gen; /* the chain built step after step */
	uint64_t rng;
	unsigned serial;
	size_t deltas, walks;
	char gone_ns[64], gone_name[64]; /* the last claim deleted */
};

static uint64_t
rnd(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned
below(struct world *w, size_t n)
{
	return n ? (unsigned)(rnd(w) % n) : 0;
}

static void
world_init_nodes(struct world *w, uint64_t seed, int nodes)
{
	memset(w, 0, sizeof(*w));
	w->rng = seed;
	fixture_init(&w->f);
	struct rf_gen_options go = {
		.nodes = nodes, .seed = seed, .used = 0.5, .pods_per_node = 2
	};
	json_t *doc = rf_gen_cluster(&go), *it;
	size_t i;
	json_decref(w->f.objs.classes);
	w->f.objs.classes = json_array();
	json_array_foreach (json_object_get(doc, "items"), i, it) {
		char *txt = json_dumps(it, 0);
		fixture_add_json(&w->f, txt);
		free(txt);
	}
	json_decref(doc);
	ck_assert_int_eq(
		rf_cluster_build_next(NULL, &w->f.objs, &w->f.cfg, w->f.cel, false, &w->gen), 0);
}

static void
world_init(struct world *w, uint64_t seed)
{
	world_init_nodes(w, seed, 6);
}

/* A random device of a random node: free ones mostly (a device held twice is a warning, which
 * the walk must handle; it is drawn now and then too). */
static const struct rf_device *
pick_device(struct world *w, const struct rf_node **ret_node)
{
	const struct rf_node *n = rf_cluster_node_at(w->gen, below(w, rf_cluster_n_nodes(w->gen)));
	*ret_node = n;
	for (int tries = 0; tries < 8; tries++) {
		const struct rf_device *d = n->devices[below(w, n->n_devices)];
		if (rf_device_is_free(w->gen, d) || below(w, 20) == 0)
			return d;
	}
	return n->devices[0];
}

/* An allocation of 1-3 devices of one node: exclusive, or a share consuming capacity, or with
 * admin access. */
static json_t *
allocation(struct world *w)
{
	const struct rf_node *n;
	json_t *results = json_array();
	unsigned k = 1 + below(w, 3);
	for (unsigned i = 0; i < k; i++) {
		const struct rf_device *d = pick_device(w, &n);
		if (i && strcmp(n->name, json_string_value(json_object_get(
						 json_array_get(results, 0), "node"))) != 0)
			continue;
		json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s}", "request", "req", "driver",
				      d->pool->driver, "pool", d->pool->name, "device", d->name,
				      "node", n->name);
		unsigned kind = below(w, 6);
		if (kind == 0 && d->n_caps) {
			char share[64], q[16];
			snprintf(share, sizeof(share), "00000000-0000-4000-a000-%012u",
				 ++w->serial);
			snprintf(q, sizeof(q), "%uGi", 1 + below(w, 40));
			json_object_set_new(r, "shareID", json_string(share));
			json_object_set_new(r, "consumedCapacity",
					    json_pack("{s:s}", d->caps[0].raw_name, q));
		} else if (kind == 1) {
			json_object_set_new(r, "adminAccess", json_true());
		}
		json_array_append_new(results, r);
	}
	const char *node = json_string_value(json_object_get(json_array_get(results, 0), "node"));
	json_t *alloc =
		json_pack("{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}", "devices", "results",
			  json_deep_copy(results), "nodeSelector", "nodeSelectorTerms",
			  "matchFields", "key", "metadata.name", "operator", "In", "values", node);
	json_decref(results);
	json_t *res = json_object_get(json_object_get(alloc, "devices"), "results");
	for (size_t i = 0; i < json_array_size(res); i++)
		json_object_del(json_array_get(res, i), "node");
	return alloc;
}

static json_t *
new_claim(struct world *w, const char *ns)
{
	char name[64];
	snprintf(name, sizeof(name), "claim-%u", ++w->serial);
	json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}", "kind",
			      "ResourceClaim", "apiVersion", "resource.k8s.io/v1", "metadata",
			      "name", name, "namespace", ns, "spec", "devices", "requests", "name",
			      "req", "exactly", "deviceClassName", "gpu.nvidia.com");
	if (below(w, 4))
		json_object_set_new(c, "status", json_pack("{s:o}", "allocation", allocation(w)));
	return c;
}

static const char *
ns_of(const json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
}

static const char *
name_of(const json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

static void
set_annotation(json_t *o, const char *key, const char *value)
{
	json_t *md = json_object_get(o, "metadata");
	if (!json_is_object(json_object_get(md, "annotations")))
		json_object_set_new(md, "annotations", json_object());
	json_t *a = json_object_get(md, "annotations");
	if (value)
		json_object_set_new(a, key, json_string(value));
	else
		json_object_del(a, key);
}

/* A claim name of namespace ns from the current claims (or a name no claim has). */
static const char *
some_claim(struct world *w, const char *ns)
{
	json_t *claims = w->f.objs.claims;
	size_t n = json_array_size(claims), start = below(w, n);
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(claims, (start + i) % n);
		if (ns && strcmp(ns_of(c), ns) == 0)
			return name_of(c);
	}
	return "no-such-claim";
}

static json_t *
new_pod(struct world *w)
{
	const char *nss[] = { "ml-train", "ml-serve" };
	const char *ns = nss[below(w, 2)];
	char name[64];
	snprintf(name, sizeof(name), "pod-%u", ++w->serial);
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}, s:{s:s}}", "kind",
			      "Pod", "apiVersion", "v1", "metadata", "name", name, "namespace", ns,
			      "uid", name, "spec", "resourceClaims", "name", "c",
			      "resourceClaimName", some_claim(w, ns), "status", "phase", "Running");
	if (below(w, 4)) {
		const struct rf_node *n =
			rf_cluster_node_at(w->gen, below(w, rf_cluster_n_nodes(w->gen)));
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(n->name));
	}
	return p;
}

/* One random change to the objects: a new array, a new object for what changed. */
static void
mutate(struct world *w)
{
	bool pod = below(w, 2);
	json_t **arr = pod ? &w->f.objs.pods : &w->f.objs.claims;
	json_t *next = json_array();
	json_array_extend(next, *arr);
	json_decref(*arr);
	*arr = next;
	size_t n = json_array_size(next), i = below(w, n);
	unsigned op = below(w, 10);
	if (op == 0 || !n) { /* a new object */
		const json_t *p0 = json_array_get(w->f.objs.pods, 0);
		json_array_append_new(next, pod ? new_pod(w) : new_claim(w, p0 ? ns_of(p0) : "ml"));
		return;
	}
	if (op == 1) { /* deleted */
		if (!pod) {
			snprintf(w->gone_ns, sizeof(w->gone_ns), "%s",
				 ns_of(json_array_get(next, i)));
			snprintf(w->gone_name, sizeof(w->gone_name), "%s",
				 name_of(json_array_get(next, i)));
		}
		json_array_remove(next, i);
		return;
	}
	if (op == 9 && below(w, 3) == 0) { /* two objects change places */
		size_t k = below(w, n);
		json_t *a = json_incref(json_array_get(next, i));
		json_array_set(next, i, json_array_get(next, k));
		json_array_set_new(next, k, a);
		return;
	}
	json_t *o = json_deep_copy(json_array_get(next, i));
	if (!pod) {
		if (op < 5)
			json_object_del(o, "status");
		else
			json_object_set_new(o, "status",
					    json_pack("{s:o}", "allocation", allocation(w)));
	} else {
		json_t *spec = json_object_get(o, "spec"), *st = json_object_get(o, "status");
		const char *groups[] = { "a", "b", "c", NULL };
		const char *bws[] = { "10G", "25G", "100G", "bogus", NULL };
		char q[16];
		switch (op) {
		case 2: /* bound, or bound elsewhere */
			json_object_set_new(
				spec, "nodeName",
				json_string(rf_cluster_node_at(w->gen,
							       below(w, rf_cluster_n_nodes(w->gen)))
						    ->name));
			json_object_set_new(st, "phase", json_string("Running"));
			break;
		case 3: /* terminated */
			json_object_set_new(st, "phase",
					    json_string(below(w, 2) ? "Succeeded" : "Failed"));
			break;
		case 4: /* another group */
			set_annotation(o, "railfit.io/group", groups[below(w, 4)]);
			break;
		case 5:
			set_annotation(o, "railfit.io/nic-bandwidth", bws[below(w, 5)]);
			break;
		case 6:
			snprintf(q, sizeof(q), "%uG", below(w, 30));
			set_annotation(o,
				       below(w, 2) ? "kubernetes.io/egress-bandwidth"
						   : "kubernetes.io/ingress-bandwidth",
				       below(w, 4) ? q : NULL);
			break;
		case 7: /* names another claim */
			json_object_set_new(spec, "resourceClaims",
					    json_pack("[{s:s, s:s}]", "name", "c",
						      "resourceClaimName",
						      some_claim(w, ns_of(o))));
			break;
		default: /* a label nobody reads: a new object, the same usage */
			set_annotation(o, "bench", "x");
			break;
		}
	}
	json_array_set_new(next, i, o);
}

static bool
same_q(struct rf_quantity a, struct rf_quantity b)
{
	return rf_quantity_cmp(a, b) == 0;
}

static void
same_holder(const struct rf_claim *a, const struct rf_claim *b, const char *dev)
{
	ck_assert_msg(!a == !b, "device %s: held in one build only", dev);
	if (a)
		ck_assert_msg(strcmp(a->ns, b->ns) == 0 && strcmp(a->name, b->name) == 0,
			      "device %s: held by %s/%s and %s/%s", dev, a->ns, a->name, b->ns,
			      b->name);
}

static void
compare_devices(const struct rf_cluster *x, const struct rf_cluster *y, const struct rf_pool *p)
{
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct rf_device *d = p->devices[i];
		const struct rf_dev_use *a = rf_dev_use(x, d), *b = rf_dev_use(y, d);
		same_holder(a->holder, b->holder, d->name);
		ck_assert_uint_eq(a->n_shares, b->n_shares);
		ck_assert_uint_eq(a->n_consumed, b->n_consumed);
		ck_assert(!a->consumed == !b->consumed);
		for (unsigned k = 0; k < a->n_consumed; k++)
			ck_assert(same_q(a->consumed[k], b->consumed[k]));
		ck_assert_msg(same_q(a->annotated_bw, b->annotated_bw), "device %s: bandwidth",
			      d->name);
	}
}

static void
compare_groups(const struct rf_cluster *x, const struct rf_cluster *y)
{
	for (size_t i = 0; i < rf_cluster_n_pods(y); i++) {
		const char *g = rf_cluster_pod_at(y, i)->group;
		if (!g)
			continue;
		const struct rf_group *gx = rf_cluster_group(x, g), *gy = rf_cluster_group(y, g);
		ck_assert_msg(!gx == !gy, "group %s: indexed in one build only", g);
		ck_assert(rf_group_rails_elsewhere(x, gx, NULL) ==
			  rf_group_rails_elsewhere(y, gy, NULL));
		for (size_t k = 0; k < rf_cluster_n_nodes(y); k++) {
			const struct rf_node *n = rf_cluster_node_at(y, k);
			ck_assert_msg(rf_group_rails_elsewhere(x, gx, n) ==
					      rf_group_rails_elsewhere(y, gy, n),
				      "group %s: rails elsewhere than %s", g, n->name);
		}
		struct rf_group_places px, py;
		rf_cluster_group_places(x, g, &px);
		rf_cluster_group_places(y, g, &py);
		ck_assert_uint_eq(px.members, py.members);
		ck_assert_uint_eq(px.n_blocks, py.n_blocks);
		ck_assert_uint_eq(px.n_spines, py.n_spines);
	}
}

/* The delta-built generation x against the walk y of the same objects. */
static void
compare(const struct rf_cluster *x, const struct rf_cluster *y)
{
	ck_assert_uint_eq(rf_cluster_n_warnings(x), rf_cluster_n_warnings(y));
	for (size_t i = 0; i < rf_cluster_n_warnings(x); i++)
		ck_assert_str_eq(rf_cluster_warning(x, i), rf_cluster_warning(y, i));
	ck_assert_uint_eq(rf_cluster_n_pods(x), rf_cluster_n_pods(y));
	for (size_t i = 0; i < rf_cluster_n_pods(x); i++) {
		const struct rf_pod *a = rf_cluster_pod_at(x, i), *b = rf_cluster_pod_at(y, i);
		ck_assert_str_eq(a->ns, b->ns);
		ck_assert_str_eq(a->name, b->name);
		ck_assert(rf_cluster_pod(x, a->ns, a->name) == a);
		if (a->uid)
			ck_assert_str_eq(rf_cluster_pod_by_uid(x, a->uid)->name,
					 rf_cluster_pod_by_uid(y, a->uid)->name);
	}
	const json_t *objs = rf_cluster_objects(y)->claims, *o;
	size_t i;
	json_array_foreach (objs, i, o) {
		const struct rf_claim *a = rf_cluster_claim(x, ns_of(o), name_of(o)),
				      *b = rf_cluster_claim(y, ns_of(o), name_of(o));
		ck_assert(a && b);
		ck_assert_uint_eq(a->n_results, b->n_results);
		ck_assert_str_eq(a->uid ? a->uid : "", b->uid ? b->uid : "");
	}
	ck_assert_uint_eq(rf_cluster_n_nodes(x), rf_cluster_n_nodes(y));
	for (i = 0; i < rf_cluster_n_nodes(x); i++) {
		const struct rf_node *nx = rf_cluster_node_at(x, i), *ny = rf_cluster_node_at(y, i);
		ck_assert_str_eq(nx->name, ny->name);
		const struct rf_node_use *a = rf_node_use(x, nx), *b = rf_node_use(y, ny);
		ck_assert_msg(a->n_pods == b->n_pods, "node %s: %zu pods, %zu in the walk",
			      nx->name, a->n_pods, b->n_pods);
		for (size_t k = 0; k < a->n_pods; k++) {
			ck_assert_str_eq(a->pods[k]->ns, b->pods[k]->ns);
			ck_assert_str_eq(a->pods[k]->name, b->pods[k]->name);
		}
		ck_assert_uint_eq(a->n_gpus_free, b->n_gpus_free);
		ck_assert_uint_eq(a->n_nics_free, b->n_nics_free);
		ck_assert(same_q(a->fe_egress_used, b->fe_egress_used));
		ck_assert(same_q(a->fe_ingress_used, b->fe_ingress_used));
		ck_assert_uint_eq(nx->n_pools, ny->n_pools);
		for (size_t p = 0; p < nx->n_pools; p++)
			compare_devices(x, y, nx->pools[p]);
	}
	compare_groups(x, y);
}

/* Whether a node's usage is the same in two generations of one chain (claims compared by
 * address: the fingerprint is). */
static bool
same_usage(const struct rf_cluster *a, const struct rf_cluster *b, const struct rf_node *n)
{
	const struct rf_node_use *x = rf_node_use(a, n), *y = rf_node_use(b, n);
	if (!same_q(x->fe_egress_used, y->fe_egress_used) ||
	    !same_q(x->fe_ingress_used, y->fe_ingress_used))
		return false;
	for (size_t p = 0; p < n->n_pools; p++) {
		for (size_t i = 0; i < n->pools[p]->n_devices; i++) {
			const struct rf_device *d = n->pools[p]->devices[i];
			const struct rf_dev_use *u = rf_dev_use(a, d), *v = rf_dev_use(b, d);
			if (u->holder != v->holder || u->n_shares != v->n_shares ||
			    u->n_consumed != v->n_consumed ||
			    !same_q(u->annotated_bw, v->annotated_bw))
				return false;
			for (unsigned k = 0; k < u->n_consumed; k++)
				if (!same_q(u->consumed[k], v->consumed[k]))
					return false;
		}
	}
	return true;
}

static void
run(uint64_t seed, int steps)
{
	struct world w;
	world_init(&w, seed);
	for (int step = 0; step < steps; step++) {
		/* mostly a few changes; now and then a burst past the delta's limit */
		int changes = step % 25 == 24 ? 30 : 1 + (int)below(&w, 4);
		for (int k = 0; k < changes; k++)
			mutate(&w);
		struct rf_cluster *next = NULL, *full = NULL;
		ck_assert_int_eq(
			rf_cluster_build_next(w.gen, &w.f.objs, &w.f.cfg, w.f.cel, true, &next), 0);
		ck_assert_int_eq(rf_cluster_build(&w.f.objs, &w.f.cfg, w.f.cel, &full), 0);
		compare(next, full);
		/* a deleted claim is not found by name (unless another object took the name) */
		if (w.gone_name[0])
			ck_assert(!rf_cluster_claim(next, w.gone_ns, w.gone_name) ==
				  !rf_cluster_claim(full, w.gone_ns, w.gone_name));
		/* the same step with usage walked from the same previous generation: the same
		 * claim and pod structs, so the very same fingerprints */
		struct rf_cluster_objects wo = w.f.objs;
		struct rf_cluster *walked = NULL;
		wo.walk_usage = true;
		ck_assert_int_eq(
			rf_cluster_build_next(w.gen, &wo, &w.f.cfg, w.f.cel, true, &walked), 0);
		ck_assert(!rf_cluster_usage_delta(walked));
		compare(next, walked);
		for (size_t i = 0; i < rf_cluster_n_nodes(next); i++) {
			const struct rf_node *n = rf_cluster_node_at(next, i);
			ck_assert_msg(rf_node_use(next, n)->fp == rf_node_use(walked, n)->fp,
				      "step %d node %s: fingerprint differs from the walk's", step,
				      n->name);
			for (size_t k = 0; k < n->n_devices; k++)
				ck_assert(rf_dev_use(next, n->devices[k])->holder ==
					  rf_dev_use(walked, n->devices[k])->holder);
		}
		rf_cluster_unref(walked);
		bool delta = rf_cluster_usage_delta(next);
		w.deltas += delta;
		w.walks += !delta;
		for (size_t i = 0; i < rf_cluster_n_nodes(next); i++) {
			const struct rf_node *n = rf_cluster_node_at(next, i);
			bool same = same_usage(w.gen, next, n);
			uint64_t fa = rf_node_use(w.gen, n)->fp, fb = rf_node_use(next, n)->fp;
			ck_assert_msg(same == (fa == fb),
				      "step %d node %s: usage %s but fingerprint %s (delta %d)",
				      step, n->name, same ? "same" : "changed",
				      fa == fb ? "same" : "changed", delta);
		}
		rf_cluster_unref(full);
		rf_cluster_unref(w.gen);
		w.gen = next;
	}
	/* both ways were taken: the comparison is not of a walk with itself */
	ck_assert_msg(w.deltas > (size_t)steps / 2, "only %zu of %d generations by difference",
		      w.deltas, steps);
	ck_assert_msg(w.walks > 0, "no generation walked everything");
	rf_cluster_unref(w.gen);
	fixture_release(&w.f);
}

START_TEST(test_delta_equals_walk)
{
	run(1 + (uint64_t)_i, 80);
}
END_TEST

/* The generation after w's from w's objects, same layout: built by difference, every node's
 * usage fingerprint kept. */
static struct rf_cluster *
usage_kept(struct world *w)
{
	struct rf_cluster *next = NULL;
	ck_assert_int_eq(
		rf_cluster_build_next(w->gen, &w->f.objs, &w->f.cfg, w->f.cel, true, &next), 0);
	ck_assert(rf_cluster_usage_delta(next));
	for (size_t i = 0; i < rf_cluster_n_nodes(next); i++) {
		const struct rf_node *n = rf_cluster_node_at(next, i);
		ck_assert(rf_node_use(w->gen, n)->fp == rf_node_use(next, n)->fp);
	}
	return next;
}

/* A generation whose usage did not change at all keeps every fingerprint, and is built by
 * difference (the memo keeps every verdict). */
START_TEST(test_delta_label_only)
{
	struct world w;
	world_init(&w, 7);
	json_t *pods = json_array();
	json_array_extend(pods, w.f.objs.pods);
	json_t *o = json_deep_copy(json_array_get(pods, 0));
	set_annotation(o, "unrelated", "1");
	json_array_set_new(pods, 0, o);
	json_decref(w.f.objs.pods);
	w.f.objs.pods = pods;
	struct rf_cluster *next = usage_kept(&w);
	rf_cluster_unref(next);
	rf_cluster_unref(w.gen);
	fixture_release(&w.f);
}
END_TEST

/* The live store hands a build the previous one's very arrays where nothing of a kind changed
 * (server/kube/kept_array.h) and never changes an array once handed over (arrays_frozen): such a
 * build reads them as unchanged, every claim and pod the previous generation's struct, usage by
 * difference, as reading them anew gives. (Without the promise the same array is read anew:
 * tests change arrays in place.) */
START_TEST(test_delta_same_arrays_frozen)
{
	struct world w;
	world_init(&w, 9);
	w.f.objs.arrays_frozen = true;
	struct rf_cluster *next = usage_kept(&w);
	ck_assert_uint_eq(rf_cluster_n_pods(next), rf_cluster_n_pods(w.gen));
	for (size_t i = 0; i < rf_cluster_n_pods(next); i++)
		ck_assert_ptr_eq(rf_cluster_pod_at(next, i), rf_cluster_pod_at(w.gen, i));
	rf_cluster_unref(next);
	rf_cluster_unref(w.gen);
	fixture_release(&w.f);
}
END_TEST

/* Many claims changed in one build (a burst of allocations coalesced, a relist), their pods
 * unchanged: every pod naming one of them is found (the set of those grows: it was sized for
 * 16 more than the pods gone, and a build with more than 64 such pods spun forever), and usage
 * by difference equals a full build's. */
START_TEST(test_delta_many_claims_changed)
{
	struct world w;
	world_init_nodes(&w, 11, 500);
	json_t *claims = json_array();
	json_array_extend(claims, w.f.objs.claims);
	size_t changed = 0, n = json_array_size(claims);
	for (size_t i = 0; i < n && changed < 70; i++) {
		json_t *o = json_array_get(claims, i);
		if (!json_object_get(o, "status"))
			continue;
		o = json_deep_copy(o);
		json_object_del(o, "status"); /* deallocated */
		json_array_set_new(claims, i, o);
		changed++;
	}
	json_decref(w.f.objs.claims);
	w.f.objs.claims = claims;
	/* more than 64 pods name them; few enough that usage is taken by difference (1/8 of the
	 * objects: each claim counted gone and new, then the pods naming them) */
	ck_assert_uint_eq(changed, 70);
	ck_assert_uint_le(2 * changed * 8, n + json_array_size(w.f.objs.pods) + 64);
	struct rf_cluster *next = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(w.gen, &w.f.objs, &w.f.cfg, w.f.cel, true, &next),
			 0);
	ck_assert(rf_cluster_usage_delta(next));
	ck_assert_int_eq(rf_cluster_build(&w.f.objs, &w.f.cfg, w.f.cel, &full), 0);
	compare(next, full);
	rf_cluster_unref(full);
	rf_cluster_unref(next);
	rf_cluster_unref(w.gen);
	fixture_release(&w.f);
}
END_TEST

/* Usage by difference shares the previous generation's usage blocks but those it writes
 * (alloc/model/model-use.c): one claim deallocated on a 500-node cluster copies the block(s)
 * of its devices only, and the previous generation, which readers may still hold, keeps its
 * own usage (the device still held there). A walk shares none. */
START_TEST(test_delta_shares_usage_blocks)
{
	struct world w;
	world_init_nodes(&w, 13, 500);
	ck_assert_uint_gt(w.gen->n_use, 40);
	json_t *claims = json_array();
	json_array_extend(claims, w.f.objs.claims);
	const struct rf_claim *gone = NULL;
	for (size_t i = 0; i < json_array_size(claims) && !gone; i++) {
		json_t *o = json_array_get(claims, i);
		const char *ns = json_string_value(
			json_object_get(json_object_get(o, "metadata"), "namespace"));
		const char *name =
			json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
		const struct rf_claim *cl = rf_cluster_claim(w.gen, ns ? ns : "", name ? name : "");
		if (!cl || !cl->n_results || !cl->results[0].dev)
			continue;
		gone = cl;
		o = json_deep_copy(o);
		json_object_del(o, "status"); /* deallocated */
		json_array_set_new(claims, i, o);
	}
	ck_assert_ptr_nonnull(gone);
	const struct rf_device *d = gone->results[0].dev;
	ck_assert_ptr_eq(rf_dev_use(w.gen, d)->holder, gone);
	json_decref(w.f.objs.claims);
	w.f.objs.claims = claims;
	struct rf_cluster *next = NULL, *walked = NULL;
	ck_assert_int_eq(rf_cluster_build_next(w.gen, &w.f.objs, &w.f.cfg, w.f.cel, true, &next),
			 0);
	ck_assert(rf_cluster_usage_delta(next));
	ck_assert_ptr_null(rf_dev_use(next, d)->holder);
	ck_assert_ptr_eq(rf_dev_use(w.gen, d)->holder, gone); /* the previous one's unchanged */
	/* copied: the blocks of the claim's devices (its pod's NIC bandwidth is on them too) */
	size_t written = 0;
	for (size_t r = 0; r < gone->n_results; r++) {
		bool seen = false;
		for (size_t q = 0; q < r; q++)
			seen |= gone->results[q].gidx / RF_USE_BLOCK ==
				gone->results[r].gidx / RF_USE_BLOCK;
		written += !seen && gone->results[r].dev && !gone->results[r].admin_access;
	}
	ck_assert_uint_gt(written, 0);
	ck_assert_uint_eq(rf_model_use_shared_blocks(next, w.gen), next->n_use - written);
	struct rf_cluster_objects wo = w.f.objs;
	wo.walk_usage = true;
	ck_assert_int_eq(rf_cluster_build_next(next, &wo, &w.f.cfg, w.f.cel, true, &walked), 0);
	ck_assert_uint_eq(rf_model_use_shared_blocks(walked, next), 0);
	rf_cluster_unref(walked);
	rf_cluster_unref(next);
	rf_cluster_unref(w.gen);
	fixture_release(&w.f);
}
END_TEST

Suite *
model_delta_suite(void)
{
	Suite *s = suite_create("model_delta");
	TCase *tc = tcase_create("model_delta");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_delta_equals_walk, 0, 3);
	tcase_add_test(tc, test_delta_label_only);
	tcase_add_test(tc, test_delta_same_arrays_frozen);
	tcase_add_test(tc, test_delta_many_claims_changed);
	tcase_add_test(tc, test_delta_shares_usage_blocks);
	suite_add_tcase(s, tc);
	return s;
}
