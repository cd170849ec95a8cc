/* How long a watch event takes to reach a published generation, without the network: load a
 * snapshot, build the first generation, then apply events the way the live store hands them over
 * (a new object for the claim or pod that changed, the same objects for everything else) and
 * time rf_cluster_build_next() for each, next to a build from scratch of the same objects.
 *
 *   build/test/bench/build_bench SNAPSHOT.json [EVENTS]
 *
 * Each event takes an allocated claim and drops its allocation (as when its pod is deleted) or
 * gives it back, and flips a label on a Running pod, alternating. Prints the full build, then
 * the median, p99 and max of the incremental builds, and a second full build for comparison.
 *
 * Each event is built twice from the same generation: as railfit does (usage from the previous
 * generation's plus what changed, alloc/model/model-delta.c), and with usage walked over every
 * claim and pod (rf_cluster_objects.walk_usage: what a build cost before), in alternating order
 * so that neither always finds the caches warm. Both in thread CPU time.
 *
 * Then the layout events (issue 9), each built three times from the same generation: with the
 * layout patched where the event touched it (alloc/model/model-patch.c) and usage by difference
 * (what railfit does); patched, with usage walked over every claim and pod (walk_usage, what a
 * patched layout cost before its usage was carried over); and with the layout built in full
 * (rf_cluster_objects.full_layout, what every such event cost before patches): one
 * ResourceSlice changed (an attribute of a device), one Node label changed (its block), one
 * DeviceClass changed (its selector), and (last) one DeviceTaintRule on one GPU of one node
 * (replacing the previous round's: two pools rebuilt). Slices are handed over parsed, and claims
 * and pods as the same arrays when they did not change, as the live store keeps them.
 *
 * Then a node leaving and joining again, as a fleet sees it, one node per round (20 nodes, the
 * same in each step): its ResourceSlices deleted (its pools go), its Node object deleted with
 * the pods bound to it (the pod garbage collector's deletions, in the same build as the store
 * coalesces them), its Node object back, its slices published again (its pools come).
 *
 * Then a node leaving in the order a real cluster deletes its objects, on 20 other nodes: its Node
 * object deleted first (its slices and pods stay: it stays, as a node only slices name), its
 * ResourceSlices garbage-collected after it (the node goes; its pods are still listed Running,
 * bound to it), the pods bound to it deleted in a later build (a pod event: usage only, as the
 * store builds it, next to a walk of every claim and pod and a full build), and last its Node
 * object and its slices back in one build.
 *
 * Last, a pool on every node (an allNodes ResourceSlice of one device, of a driver no class
 * names, as a network-attached device): published and deleted in turn, then replaced each round,
 * then, with it present, a node leaving with its slices and pods in one build and coming back
 * with its slices in one build, on 20 other nodes.
 *
 * Then a DeviceTaintRule over a whole driver (every GPU, as a driver upgrade drains them) added
 * and removed in turn.
 *
 * Last, a long chain (CHAIN events, third argument, default 1024): one Node label and one
 * ResourceSlice attribute changed in turn, on 64 nodes and 64 slices in turn, each built
 * from the last generation only, as the live store builds them. Every 32 events: the process's
 * resident memory, the chain's depth and the bytes its layouts that no generation uses still
 * keep, the full builds so far, and the median and max thread CPU of the builds.
 *
 *   build/test/bench/build_bench SNAPSHOT.json 0 CHAIN compact
 *
 * With EVENTS 0 the long chain alone; with `compact` then a compaction as the live store runs
 * it (server/kube/store.c): the chain's objects built in full while, at each of its checks, the
 * chain goes on with a layout event, then the chain moved onto it with one build of the events
 * since, then 8 more events on the new chain (thread CPU, wall time and minor faults of each:
 * what the first builds after the move cost), as the store builds them, on one thread.
 * BB_THREAD=1 builds the compaction on a thread of its own, taking turns with the events on the
 * main thread, as the store did in session 17's first try (its allocations then go to another
 * malloc arena); BB_TRIM=1 trims the heap after the old chain went, as the store did then (the
 * next builds fault the pages back in). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "alloc/cel/cel.h"
#include "alloc/model/model.h"
#include "alloc/model/slice.h"
#include "config/config.h"
#include "server/snapshot/snapshot.h"

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this thread: what a build costs whatever else the machine runs */
static double
cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A copy of the claim with its status removed, or the original back: a new object either way. */
static json_t *
claim_event(json_t *orig, size_t round)
{
	json_t *c = json_copy(orig);
	if (c && round % 2 == 0)
		json_object_del(c, "status");
	return c;
}

static json_t *
pod_event(json_t *orig, size_t round)
{
	json_t *p = json_deep_copy(orig);
	json_t *md = json_object_get(p, "metadata");
	if (!json_is_object(json_object_get(md, "labels")))
		json_object_set_new(md, "labels", json_object());
	json_object_set_new(json_object_get(md, "labels"), "bench-round",
			    json_integer((json_int_t)round));
	return p;
}

/* A copy of the array with element i replaced by v (v's reference taken). */
static json_t *
with(const json_t *arr, size_t i, json_t *v)
{
	json_t *out = json_array();
	json_array_extend(out, (json_t *)arr);
	json_array_set_new(out, i, v);
	return out;
}

enum layout_event {
	EV_SLICE,
	EV_NODE,
	EV_CLASS,
	EV_POOLS_GO,
	EV_NODE_GOES,
	EV_NODE_COMES,
	EV_POOLS_COME,
	EV_OBJ_GOES,
	EV_SLICES_GC,
	EV_PODS_GC,
	EV_NODE_BACK,
	EV_RULE,
	EV_SHARED_ADD,
	EV_SHARED_REPLACE,
	EV_SHARED_NODE_GOES,
	EV_SHARED_NODE_COMES,
	EV_RULE_DRIVER,
	EV_COUNT
};
static const char *const ev_names[EV_COUNT] = {
	"one ResourceSlice (a device attribute)",
	"one Node label (its block)",
	"one DeviceClass (its selector)",
	"a node's ResourceSlices deleted (its pools go)",
	"a Node object deleted with its pods (it has no slices left)",
	"a Node object added (no slices yet)",
	"a node's ResourceSlices published (its pools come)",
	"real order 1: a Node object deleted (its slices and pods stay)",
	"real order 2: that node's ResourceSlices deleted (its pods stay, Running)",
	"real order 3: the pods bound to it deleted (a pod event: patched = the layout shared)",
	"real order 4: its Node object and its slices back in one build",
	"one DeviceTaintRule (on a GPU of one node, replacing the last one's)",
	"an allNodes ResourceSlice published, then deleted, alternating (one device of a driver "
	"no class names)",
	"that allNodes ResourceSlice replaced (a new generation, an attribute)",
	"with it present: a node's Node object, its ResourceSlices and its pods deleted in one build",
	"with it present: that node's Node object and its slices back in one build",
	"a DeviceTaintRule over a whole driver (every GPU) added, then removed, alternating"
};

#define NODE_ROUNDS 20

struct world {
	struct rf_cluster_objects objs;
	struct rf_slice **recs; /* room for every slice of the snapshot */
	const struct rf_config *cfg;
	/* the node of each round of the leave-and-join events, its Node object and slices while
	 * they are away */
	char *names[NODE_ROUNDS];
	json_t *node_objs[NODE_ROUNDS], *slices_away[NODE_ROUNDS];
	/* the same for the nodes leaving in the real order */
	char *real_names[NODE_ROUNDS];
	json_t *real_objs[NODE_ROUNDS], *real_slices[NODE_ROUNDS];
	/* the same for the nodes leaving while a pool on every node exists */
	char *shared_names[NODE_ROUNDS];
	json_t *shared_objs[NODE_ROUNDS], *shared_slices[NODE_ROUNDS];
	size_t cap_recs;
	/* nonzero: the Node or slice one event changes is one of this many (see chain_events) */
	size_t cycle;
};

static const char *
name_of(const json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

/* The slices on the node deleted (their records dropped): kept in *away. */
static void
slices_go(struct world *w, const char *name, json_t **away)
{
	json_t *keep = json_array();
	*away = json_array();
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(w->objs.slices); i++) {
		json_t *s = json_array_get(w->objs.slices, i);
		const char *node =
			json_string_value(json_object_get(json_object_get(s, "spec"), "nodeName"));
		if (node && strcmp(node, name) == 0) {
			json_array_append(*away, s);
			rf_slice_unref(w->recs[i]);
			continue;
		}
		json_array_append(keep, s);
		w->recs[n++] = w->recs[i];
	}
	w->objs.n_slice_recs = n;
	json_decref(w->objs.slices);
	w->objs.slices = keep;
}

/* The leave-and-join events of round r (below NODE_ROUNDS): new arrays of nodes or slices. */
static int
node_event(struct world *w, enum layout_event ev, size_t r)
{
	json_t *nodes = w->objs.nodes, *slices = w->objs.slices;
	if (ev == EV_POOLS_GO) {
		const json_t *nj = json_array_get(nodes, (r * 7919) % json_array_size(nodes));
		if (!name_of(nj) || !(w->names[r] = strdup(name_of(nj))))
			return -ENOMEM;
		slices_go(w, w->names[r], &w->slices_away[r]);
		return 0;
	}
	if (ev == EV_POOLS_COME) { /* new objects, parsed as the store parses them */
		json_t *next = json_array();
		json_array_extend(next, slices);
		for (size_t i = 0; i < json_array_size(w->slices_away[r]); i++) {
			json_t *s = json_deep_copy(json_array_get(w->slices_away[r], i));
			struct rf_slice *rec;
			if (!s || rf_slice_parse(s, w->cfg, &rec) < 0)
				return -ENOMEM;
			w->recs[w->objs.n_slice_recs++] = rec;
			json_array_append_new(next, s);
		}
		json_decref(w->slices_away[r]);
		w->slices_away[r] = NULL;
		json_decref(w->objs.slices);
		w->objs.slices = next;
		return 0;
	}
	json_t *next = json_array();
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *nj = json_array_get(nodes, i);
		if (ev == EV_NODE_GOES && strcmp(name_of(nj), w->names[r]) == 0)
			w->node_objs[r] = json_incref(nj);
		else
			json_array_append(next, nj);
	}
	if (ev == EV_NODE_COMES) {
		json_array_append_new(next, json_deep_copy(w->node_objs[r]));
		json_decref(w->node_objs[r]);
		w->node_objs[r] = NULL;
	}
	json_decref(w->objs.nodes);
	w->objs.nodes = next;
	if (ev == EV_NODE_GOES) { /* and the pods bound to it */
		json_t *pods = json_array();
		for (size_t i = 0; i < json_array_size(w->objs.pods); i++) {
			json_t *p = json_array_get(w->objs.pods, i);
			const char *node = json_string_value(
				json_object_get(json_object_get(p, "spec"), "nodeName"));
			if (!node || strcmp(node, w->names[r]) != 0)
				json_array_append(pods, p);
		}
		json_decref(w->objs.pods);
		w->objs.pods = pods;
	}
	return 0;
}

/* The real-order events of round r: a node (not one of the leave-and-join rounds') loses its
 * object, then its slices, then its pods; then its object and its slices come back together. */
static int
real_event(struct world *w, enum layout_event ev, size_t r)
{
	json_t *nodes = w->objs.nodes;
	size_t n = json_array_size(nodes);
	if (ev == EV_OBJ_GOES) {
		const json_t *nj = NULL;
		for (size_t k = 0; k < n && !nj; k++) {
			nj = json_array_get(nodes, (r * 6007 + 3 + k) % n);
			for (size_t q = 0; q < NODE_ROUNDS && nj; q++)
				if ((w->names[q] && strcmp(w->names[q], name_of(nj)) == 0) ||
				    (w->real_names[q] &&
				     strcmp(w->real_names[q], name_of(nj)) == 0))
					nj = NULL;
		}
		if (!nj || !(w->real_names[r] = strdup(name_of(nj))))
			return -ENOMEM;
		json_t *next = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_array_get(nodes, i);
			if (strcmp(name_of(o), w->real_names[r]) == 0)
				w->real_objs[r] = json_incref(o);
			else
				json_array_append(next, o);
		}
		json_decref(w->objs.nodes);
		w->objs.nodes = next;
		return 0;
	}
	if (ev == EV_SLICES_GC) {
		slices_go(w, w->real_names[r], &w->real_slices[r]);
		return 0;
	}
	if (ev == EV_PODS_GC) {
		json_t *pods = json_array();
		for (size_t i = 0; i < json_array_size(w->objs.pods); i++) {
			json_t *p = json_array_get(w->objs.pods, i);
			const char *node = json_string_value(
				json_object_get(json_object_get(p, "spec"), "nodeName"));
			if (!node || strcmp(node, w->real_names[r]) != 0)
				json_array_append(pods, p);
		}
		json_decref(w->objs.pods);
		w->objs.pods = pods;
		return 0;
	}
	/* EV_NODE_BACK: new objects, the slices parsed as the store parses them */
	json_t *next = json_array(), *slices = json_array();
	json_array_extend(next, nodes);
	json_array_append_new(next, json_deep_copy(w->real_objs[r]));
	json_array_extend(slices, w->objs.slices);
	for (size_t i = 0; i < json_array_size(w->real_slices[r]); i++) {
		json_t *s = json_deep_copy(json_array_get(w->real_slices[r], i));
		struct rf_slice *rec;
		if (!s || rf_slice_parse(s, w->cfg, &rec) < 0)
			return -ENOMEM;
		w->recs[w->objs.n_slice_recs++] = rec;
		json_array_append_new(slices, s);
	}
	json_decref(w->real_objs[r]);
	json_decref(w->real_slices[r]);
	w->real_objs[r] = w->real_slices[r] = NULL;
	json_decref(w->objs.nodes);
	json_decref(w->objs.slices);
	w->objs.nodes = next;
	w->objs.slices = slices;
	return 0;
}

/* The allNodes slice bench-shared: put (generation gen; 0: deleted), as the store parses it. */
static int
shared_slice(struct world *w, size_t gen)
{
	json_t *next = json_array();
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(w->objs.slices); i++) {
		json_t *s = json_array_get(w->objs.slices, i);
		if (strcmp(name_of(s), "bench-shared") == 0) {
			rf_slice_unref(w->recs[i]);
			continue;
		}
		json_array_append(next, s);
		w->recs[n++] = w->recs[i];
	}
	w->objs.n_slice_recs = n;
	json_decref(w->objs.slices);
	w->objs.slices = next;
	if (!gen)
		return 0;
	json_t *s = json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:s, s:b, s:{s:s, s:I, s:i}, s:[{s:s, "
		"s:{s:{s:I}}}]}}",
		"apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name",
		"bench-shared", "spec", "driver", "bench.railfit.io", "allNodes", 1, "pool", "name",
		"bench-shared", "generation", (json_int_t)gen, "resourceSliceCount", 1, "devices",
		"name", "shared-0", "attributes", "bench.railfit.io/round", "int", (json_int_t)gen);
	struct rf_slice *rec;
	if (!s || rf_slice_parse(s, w->cfg, &rec) < 0)
		return -ENOMEM;
	if (n + 1 > w->cap_recs) {
		struct rf_slice **recs = realloc(w->recs, (n + 2) * sizeof(*recs));
		if (!recs)
			return -ENOMEM;
		w->recs = recs;
		w->objs.slice_recs = recs;
		w->cap_recs = n + 1;
	}
	w->recs[w->objs.n_slice_recs++] = rec;
	json_array_append_new(next, s);
	return 0;
}

/* With the allNodes slice there: a node (not one of the other rounds') leaves with its slices
 * and pods in one build, and comes back with its slices in one build. */
static int
shared_node_event(struct world *w, enum layout_event ev, size_t r)
{
	json_t *nodes = w->objs.nodes;
	size_t n = json_array_size(nodes);
	if (ev == EV_SHARED_NODE_GOES) {
		const json_t *nj = NULL;
		for (size_t k = 0; k < n && !nj; k++) {
			nj = json_array_get(nodes, (r * 4001 + 11 + k) % n);
			for (size_t q = 0; q < NODE_ROUNDS && nj; q++)
				if ((w->names[q] && strcmp(w->names[q], name_of(nj)) == 0) ||
				    (w->real_names[q] &&
				     strcmp(w->real_names[q], name_of(nj)) == 0) ||
				    (w->shared_names[q] &&
				     strcmp(w->shared_names[q], name_of(nj)) == 0))
					nj = NULL;
		}
		if (!nj || !(w->shared_names[r] = strdup(name_of(nj))))
			return -ENOMEM;
		const char *name = w->shared_names[r];
		json_t *next = json_array(), *pods = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_array_get(nodes, i);
			if (strcmp(name_of(o), name) == 0)
				w->shared_objs[r] = json_incref(o);
			else
				json_array_append(next, o);
		}
		json_decref(w->objs.nodes);
		w->objs.nodes = next;
		for (size_t i = 0; i < json_array_size(w->objs.pods); i++) {
			json_t *p = json_array_get(w->objs.pods, i);
			const char *node = json_string_value(
				json_object_get(json_object_get(p, "spec"), "nodeName"));
			if (!node || strcmp(node, name) != 0)
				json_array_append(pods, p);
		}
		json_decref(w->objs.pods);
		w->objs.pods = pods;
		slices_go(w, name, &w->shared_slices[r]);
		return 0;
	}
	json_t *next = json_array(), *slices = json_array();
	json_array_extend(next, nodes);
	json_array_append_new(next, json_deep_copy(w->shared_objs[r]));
	json_array_extend(slices, w->objs.slices);
	for (size_t i = 0; i < json_array_size(w->shared_slices[r]); i++) {
		json_t *s = json_deep_copy(json_array_get(w->shared_slices[r], i));
		struct rf_slice *rec;
		if (!s || rf_slice_parse(s, w->cfg, &rec) < 0)
			return -ENOMEM;
		w->recs[w->objs.n_slice_recs++] = rec;
		json_array_append_new(slices, s);
	}
	json_decref(w->shared_objs[r]);
	json_decref(w->shared_slices[r]);
	w->shared_objs[r] = w->shared_slices[r] = NULL;
	json_decref(w->objs.nodes);
	json_decref(w->objs.slices);
	w->objs.nodes = next;
	w->objs.slices = slices;
	return 0;
}

/* A DeviceTaintRule on one GPU of a GPU pool chosen by round r (replacing the previous one). */
static int
rule_event(struct world *w, size_t r)
{
	size_t n = json_array_size(w->objs.slices);
	const char *pool = NULL;
	for (size_t k = 0; k < n && !pool; k++) {
		const json_t *s = json_array_get(w->objs.slices, (r * 7919 + k) % n);
		const json_t *spec = json_object_get(s, "spec");
		const char *driver = json_string_value(json_object_get(spec, "driver"));
		if (driver && strcmp(driver, "gpu.nvidia.com") == 0)
			pool = json_string_value(
				json_object_get(json_object_get(spec, "pool"), "name"));
	}
	if (!pool)
		return -EINVAL;
	json_t *rules = json_pack("[{s:s, s:{s:s}, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}]",
				  "kind", "DeviceTaintRule", "metadata", "name", "bench-xid",
				  "spec", "deviceSelector", "driver", "gpu.nvidia.com", "pool",
				  pool, "device", "gpu-3", "taint", "key", "bench.railfit.io/xid",
				  "value", "79", "effect", "NoSchedule");
	if (!rules)
		return -ENOMEM;
	json_decref(w->objs.taint_rules);
	w->objs.taint_rules = rules;
	return 0;
}

/* A DeviceTaintRule over every GPU (driver gpu.nvidia.com, no pool or device: a driver upgrade
 * drains them) added after the other rules in even rounds, removed in odd ones. */
static int
driver_rule_event(struct world *w, size_t r)
{
	json_t *rules = json_array();
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(w->objs.taint_rules); i++) {
		json_t *v = json_array_get(w->objs.taint_rules, i);
		if (strcmp(name_of(v), "bench-drain") != 0)
			json_array_append(rules, v);
	}
	if (r % 2 == 0)
		json_array_append_new(rules,
				      json_pack("{s:s, s:{s:s}, s:{s:{s:s}, s:{s:s, s:s}}}", "kind",
						"DeviceTaintRule", "metadata", "name",
						"bench-drain", "spec", "deviceSelector", "driver",
						"gpu.nvidia.com", "taint", "key",
						"bench.railfit.io/drain", "effect", "NoSchedule"));
	json_decref(w->objs.taint_rules);
	w->objs.taint_rules = rules;
	return 0;
}

/* The objects after one layout event of kind ev (round r): a new array of the kind it changed,
 * one object new; the other kinds' arrays as they were (the store keeps them: arrays_frozen). */
static int
layout_event(struct world *w, enum layout_event ev, size_t r)
{
	if (ev == EV_RULE) {
		int e = rule_event(w, r);
		return e;
	}
	if (ev == EV_RULE_DRIVER) {
		int e = driver_rule_event(w, r);
		return e;
	}
	if (ev == EV_SHARED_ADD || ev == EV_SHARED_REPLACE) {
		int e = shared_slice(w, ev == EV_SHARED_ADD ? (r % 2 == 0) : r + 2);
		return e;
	}
	if (ev >= EV_SHARED_NODE_GOES) {
		int e = shared_node_event(w, ev, r);
		return e;
	}
	if (ev >= EV_OBJ_GOES) {
		int e = real_event(w, ev, r);
		return e;
	}
	if (ev >= EV_POOLS_GO) {
		int e = node_event(w, ev, r);
		return e;
	}
	json_t **arr = ev == EV_SLICE  ? &w->objs.slices
		       : ev == EV_NODE ? &w->objs.nodes
				       : &w->objs.classes;
	size_t n = json_array_size(*arr);
	if (!n)
		return -EINVAL;
	size_t i = ((w->cycle ? r % w->cycle : r) * 7919) % n;
	json_t *o = json_deep_copy(json_array_get(*arr, i));
	if (!o)
		return -ENOMEM;
	if (ev == EV_SLICE) {
		json_t *d =
			json_array_get(json_object_get(json_object_get(o, "spec"), "devices"), 0);
		json_t *a = json_object_get(d, "attributes");
		if (a)
			json_object_set_new(a, "bench.railfit.io/round",
					    json_pack("{s:I}", "int", (json_int_t)r));
	} else if (ev == EV_NODE) {
		json_t *md = json_object_get(o, "metadata");
		if (!json_is_object(json_object_get(md, "labels")))
			json_object_set_new(md, "labels", json_object());
		char b[32];
		snprintf(b, sizeof(b), "b%zu", r % 4);
		json_object_set_new(json_object_get(md, "labels"),
				    "network.topology.kubernetes.io/block", json_string(b));
	} else {
		json_t *sel =
			json_array_get(json_object_get(json_object_get(o, "spec"), "selectors"), 0);
		json_t *cel = json_object_get(sel, "cel");
		const char *e = json_string_value(json_object_get(cel, "expression"));
		if (e) {
			char *x = malloc(strlen(e) + 32);
			sprintf(x, "(%s) && %s", e, r % 2 ? "true" : "!false");
			json_object_set_new(cel, "expression", json_string(x));
			free(x);
		}
	}
	if (ev == EV_SLICE) {
		struct rf_slice *rec;
		if (rf_slice_parse(o, w->cfg, &rec) < 0)
			return -ENOMEM;
		rf_slice_unref(w->recs[i]);
		w->recs[i] = rec;
	}
	json_t *next = with(*arr, i, o);
	json_decref(*arr);
	*arr = next;
	return 0;
}

/* Resident memory of this process, in MB. */
static double
rss_mb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0, res = 0;
	if (f) {
		if (fscanf(f, "%lu %lu", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (double)res * 4096.0 / 1e6;
}

#define CHAIN_REPORT 32

/* n layout events in a row, each built from the last generation (see the file's comment). */
static int
chain_events(struct world *w, struct rf_cluster **gen, struct rf_cel_cache *cel, size_t n)
{
	double cpu[CHAIN_REPORT];
	size_t full = 0, k = 0;
	/* a new object is a copy, larger than the snapshot loader's (shared strings): the events
	 * go round 64 nodes and slices so that the bench's own objects stop growing */
	w->cycle = 64;
	printf("chain of layout events: before them RSS %.1f MB\n", rss_mb());
	for (size_t i = 0; i < n; i++) {
		if (layout_event(w, i % 2 ? EV_SLICE : EV_NODE, 1000 + i / 2) < 0)
			return -ENOMEM;
		struct rf_cluster *next = NULL;
		double c0 = cpu_ms();
		int r = rf_cluster_build_next(*gen, &w->objs, w->cfg, cel, false, &next);
		cpu[k++] = cpu_ms() - c0;
		if (r < 0) {
			fprintf(stderr, "build: %s\n", strerror(-r));
			return r;
		}
		full += !rf_cluster_layout_patched(next);
		rf_cluster_unref(*gen);
		*gen = next;
		if (k < CHAIN_REPORT && i + 1 < n)
			continue;
		qsort(cpu, k, sizeof(*cpu), cmp_double);
		size_t kept = 0;
		unsigned depth = rf_cluster_layout_chain(*gen, &kept);
		printf("chain of layout events (a Node label, a ResourceSlice attribute, in turn), "
		       "%zu events: RSS %.1f MB, depth %u, dead layouts keep %.2f MB, full builds %zu; "
		       "last %zu builds CPU median %.2f ms, max %.2f ms\n",
		       i + 1, rss_mb(), depth, (double)kept / 1e6, full, k, cpu[k / 2], cpu[k - 1]);
		k = 0;
	}
	return 0;
}

/* A compaction as the live store runs it (server/kube/store.c): the objects of one moment built
 * in full while, at each of its checks, the chain goes on with a layout event (a Node label and
 * a ResourceSlice attribute in turn), then the chain moved onto it with one build of everything
 * since, then more events on the new chain. Each build's CPU time. */
struct compaction {
	struct world *w;
	struct rf_cluster **chain;
	struct rf_cel_cache *cel;
	size_t events;
	double cpu[4096];
	int r;
};

static bool
compaction_event(void *userdata)
{
	struct compaction *k = userdata;
	if (k->r < 0 || k->events >= sizeof(k->cpu) / sizeof(k->cpu[0]))
		return false;
	size_t i = k->events;
	struct rf_cluster *next = NULL;
	if ((k->r = layout_event(k->w, i % 2 ? EV_SLICE : EV_NODE, 5000 + i / 2)) < 0)
		return false;
	double c0 = cpu_ms();
	k->r = rf_cluster_build_next(*k->chain, &k->w->objs, k->w->cfg, k->cel, false, &next);
	k->cpu[k->events++] = cpu_ms() - c0;
	if (k->r == 0) {
		rf_cluster_unref(*k->chain);
		*k->chain = next;
	}
	return false;
}

/* BB_THREAD: the compaction on a thread of its own, the events at its checks on the main thread
 * (taking turns, as the live store did in session 17's first try) */
static pthread_mutex_t baton_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t baton_cond = PTHREAD_COND_INITIALIZER;
static int baton_want, baton_done;

static bool
baton_event(void *userdata)
{
	(void)userdata;
	pthread_mutex_lock(&baton_lock);
	baton_want = 1;
	pthread_cond_broadcast(&baton_cond);
	while (baton_want)
		pthread_cond_wait(&baton_cond, &baton_lock);
	pthread_mutex_unlock(&baton_lock);
	return false;
}

struct bthread {
	const struct rf_cluster *from;
	struct rf_cluster_objects *objs;
	const struct rf_config *cfg;
	struct rf_cel_cache *cel;
	struct rf_cluster *full;
	int r;
	double cpu;
};

static void *
baton_thread(void *arg)
{
	struct bthread *b = arg;
	double c0 = cpu_ms();
	b->r = rf_cluster_build_next(b->from, b->objs, b->cfg, b->cel, false, &b->full);
	b->cpu = cpu_ms() - c0;
	pthread_mutex_lock(&baton_lock);
	baton_done = 1;
	pthread_cond_broadcast(&baton_cond);
	pthread_mutex_unlock(&baton_lock);
	return NULL;
}

static long
minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static int
interleaved_compaction(struct world *w, struct rf_cluster **gen, struct rf_cel_cache *cel)
{
	struct compaction *k = calloc(1, sizeof(*k));
	struct rf_cluster_objects objs = w->objs;
	struct rf_slice **recs = malloc((objs.n_slice_recs + 1) * sizeof(*recs));
	struct rf_cluster *full = NULL, *from = rf_cluster_ref(*gen), *next = NULL;
	json_t *held[] = { objs.nodes, objs.pods, objs.slices, objs.claims, objs.classes };
	if (!k || !recs) {
		free(k);
		free(recs);
		rf_cluster_unref(from);
		return -ENOMEM;
	}
	for (size_t i = 0; i < objs.n_slice_recs; i++)
		recs[i] = rf_slice_ref(w->recs[i]);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		json_incref(held[i]);
	objs.slice_recs = recs;
	objs.full_layout = true;
	objs.lend_records = true;
	objs.stop = compaction_event;
	objs.stop_userdata = k;
	*k = (struct compaction){ .w = w, .chain = gen, .cel = cel };
	double c0 = cpu_ms(), rss0 = rss_mb();
	int r;
	double full_cpu;
	if (getenv("BB_THREAD")) {
		objs.stop = baton_event;
		struct bthread b = { .from = from, .objs = &objs, .cfg = w->cfg, .cel = cel };
		pthread_t t;
		baton_done = baton_want = 0;
		pthread_create(&t, NULL, baton_thread, &b);
		pthread_mutex_lock(&baton_lock);
		while (!baton_done) {
			if (baton_want) {
				pthread_mutex_unlock(&baton_lock);
				compaction_event(k);
				pthread_mutex_lock(&baton_lock);
				baton_want = 0;
				pthread_cond_broadcast(&baton_cond);
				continue;
			}
			pthread_cond_wait(&baton_cond, &baton_lock);
		}
		pthread_mutex_unlock(&baton_lock);
		pthread_join(t, NULL);
		r = b.r;
		full = b.full;
		full_cpu = b.cpu;
		printf("compaction: on a thread of its own\n");
	} else {
		r = rf_cluster_build_next(from, &objs, w->cfg, cel, false, &full);
		full_cpu = cpu_ms() - c0;
		for (size_t i = 0; i < k->events; i++)
			full_cpu -= k->cpu[i];
	}
	double rss1 = rss_mb();
	for (size_t i = 0; i < objs.n_slice_recs; i++)
		rf_slice_unref(recs[i]);
	free(recs);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		json_decref(held[i]);
	rf_cluster_unref(from);
	if (r < 0 || k->r < 0) {
		int e = r < 0 ? r : k->r;
		fprintf(stderr, "compaction: %s\n", strerror(-e));
		free(k);
		return e;
	}
	double mx = 0;
	for (size_t i = 0; i < k->events; i++)
		mx = k->cpu[i] > mx ? k->cpu[i] : mx;
	printf("compaction: built in full in %.1f ms CPU (RSS %.1f -> %.1f MB), %zu events built "
	       "on the chain at its checks (CPU max %.2f ms)\n",
	       full_cpu, rss0, rss1, k->events, mx);
	c0 = cpu_ms();
	r = rf_cluster_build_next(full, &w->objs, w->cfg, cel, false, &next);
	printf("compaction: the chain moved onto it, the %zu events since in one build: %.2f ms CPU "
	       "(%s)\n",
	       k->events, cpu_ms() - c0,
	       r < 0                             ? strerror(-r)
	       : rf_cluster_layout_patched(next) ? "patched"
						 : "in full");
	rf_cluster_unref(full);
	if (r < 0) {
		free(k);
		return r;
	}
	c0 = cpu_ms();
	long f0 = minflt();
	rf_cluster_unref(*gen);
	printf("compaction: the old chain freed in %.2f ms CPU, RSS %.1f MB, %ld faults\n",
	       cpu_ms() - c0, rss_mb(), minflt() - f0);
	if (getenv("BB_TRIM")) {
		c0 = cpu_ms();
		f0 = minflt();
		malloc_trim(0);
		printf("compaction: malloc_trim(0) %.2f ms CPU, RSS %.1f MB, %ld faults\n",
		       cpu_ms() - c0, rss_mb(), minflt() - f0);
	}
	*gen = next;
	for (size_t i = 0; i < 8; i++) {
		struct rf_cluster *n2 = NULL;
		if ((r = layout_event(w, i % 2 ? EV_SLICE : EV_NODE, 9000 + i / 2)) < 0)
			break;
		c0 = cpu_ms();
		double wl0 = now_ms();
		f0 = minflt();
		r = rf_cluster_build_next(*gen, &w->objs, w->cfg, cel, false, &n2);
		printf("compaction: event %zu after it: %.2f ms CPU %.2f wall %ld faults (%s), RSS "
		       "%.1f MB\n",
		       i + 1, cpu_ms() - c0, now_ms() - wl0, minflt() - f0,
		       r < 0                           ? strerror(-r)
		       : rf_cluster_layout_patched(n2) ? "patched"
						       : "in full",
		       rss_mb());
		if (r < 0)
			break;
		rf_cluster_unref(*gen);
		*gen = n2;
	}
	free(k);
	return r < 0 ? r : 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAPSHOT.json [EVENTS [CHAIN]]\n", argv[0]);
		return 2;
	}
	size_t events = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 200;
	size_t chain = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 1024;
	struct rf_config cfg;
	struct rf_cluster_objects objs;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	size_t skipped;
	char err[512];
	rf_config_init(&cfg);
	if (!cel || rf_snapshot_load_file(argv[1], &objs, &skipped, err, sizeof(err)) < 0) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
		return 1;
	}
	size_t n_claims = json_array_size(objs.claims), n_pods = json_array_size(objs.pods);
	printf("snapshot: %zu nodes, %zu pods, %zu slices, %zu claims\n",
	       json_array_size(objs.nodes), n_pods, json_array_size(objs.slices), n_claims);
	if (!n_claims || !n_pods)
		return 1;

	/* slices parsed once, as the live store keeps them */
	struct world w = { .cfg = &cfg };
	size_t n_slices = json_array_size(objs.slices);
	w.cap_recs = n_slices + 1;
	w.recs = calloc(n_slices + 1, sizeof(*w.recs));
	for (size_t i = 0; w.recs && i < n_slices; i++)
		if (rf_slice_parse(json_array_get(objs.slices, i), &cfg, &w.recs[i]) < 0)
			return 1;
	if (!w.recs)
		return 1;
	objs.slice_recs = w.recs;
	objs.n_slice_recs = n_slices;
	/* an array is never changed once handed over: a kind that did not change is handed over
	 * as the same array, as the live store keeps it (server/kube/kept_array.h) */
	objs.arrays_frozen = true;

	double t0 = now_ms();
	struct rf_cluster *gen = NULL;
	if (rf_cluster_build_next(NULL, &objs, &cfg, cel, false, &gen) < 0)
		return 1;
	double full_ms = now_ms() - t0;

	if (!events) { /* the chain alone, from the first generation */
		struct world cw = { .cfg = &cfg, .objs = objs, .recs = w.recs };
		int r = chain_events(&cw, &gen, cel, chain);
		if (r == 0 && argc > 4 && strcmp(argv[4], "compact") == 0)
			r = interleaved_compaction(&cw, &gen, cel);
		rf_cluster_unref(gen);
		objs = cw.objs;
		for (size_t i = 0; i < objs.n_slice_recs; i++)
			rf_slice_unref(w.recs[i]);
		free(w.recs);
		objs.slice_recs = NULL;
		objs.n_slice_recs = 0;
		rf_cluster_objects_release(&objs);
		rf_cel_cache_free(cel);
		rf_config_release(&cfg);
		return r < 0;
	}
	double *ms = calloc(events, sizeof(*ms)), *cpu = calloc(events, sizeof(*cpu));
	double *walk_cpu = calloc(events, sizeof(*walk_cpu));
	size_t n_delta = 0;
	json_t *claims = objs.claims, *pods = objs.pods;
	for (size_t i = 0; ms && cpu && i < events; i++) {
		/* a new array of the kind that changed: the same objects, but the one that changed
		 */
		objs.claims = json_array();
		objs.pods = json_array();
		json_array_extend(objs.claims, claims);
		json_array_extend(objs.pods, pods);
		size_t ci = (i * 7919) % n_claims, pi = (i * 104729) % n_pods;
		json_array_set_new(objs.claims, ci, claim_event(json_array_get(claims, ci), i));
		json_array_set_new(objs.pods, pi, pod_event(json_array_get(pods, pi), i));
		struct rf_cluster *next = NULL, *walked = NULL;
		struct rf_cluster_objects wo = objs;
		wo.walk_usage = true;
		int r = 0;
		for (int k = 0; k < 2 && r == 0; k++) {
			if ((k == 0) == (i % 2 == 0)) {
				double w0 = cpu_ms();
				r = rf_cluster_build_next(gen, &wo, &cfg, cel, true, &walked);
				walk_cpu[i] = cpu_ms() - w0;
				continue;
			}
			t0 = now_ms();
			double c0 = cpu_ms();
			r = rf_cluster_build_next(gen, &objs, &cfg, cel, true, &next);
			ms[i] = now_ms() - t0;
			cpu[i] = cpu_ms() - c0;
		}
		rf_cluster_unref(walked);
		n_delta += next && rf_cluster_usage_delta(next);
		if (r < 0) {
			fprintf(stderr, "build: %s\n", strerror(-r));
			return 1;
		}
		rf_cluster_unref(gen);
		gen = next;
		json_decref(claims);
		json_decref(pods);
		claims = objs.claims;
		pods = objs.pods;
	}
	if (!ms || !cpu || !walk_cpu)
		return 1;
	qsort(ms, events, sizeof(*ms), cmp_double);
	qsort(cpu, events, sizeof(*cpu), cmp_double);
	qsort(walk_cpu, events, sizeof(*walk_cpu), cmp_double);
	t0 = now_ms();
	struct rf_cluster *again = NULL;
	if (rf_cluster_build(&objs, &cfg, cel, &again) < 0)
		return 1;
	double full2_ms = now_ms() - t0;
	printf("full build: %.1f ms (first), %.1f ms (after the events)\n", full_ms, full2_ms);
	printf("incremental build after one claim + one pod event, %zu events: median %.2f ms, "
	       "p99 %.2f ms, max %.2f ms\n",
	       events, ms[events / 2], ms[events * 99 / 100], ms[events - 1]);
	printf("  the same in thread CPU time: median %.2f ms, p99 %.2f ms (usage by difference in "
	       "%zu of %zu)\n",
	       cpu[events / 2], cpu[events * 99 / 100], n_delta, events);
	printf("  usage walked over every claim and pod instead (thread CPU): median %.2f ms, p99 "
	       "%.2f ms\n",
	       walk_cpu[events / 2], walk_cpu[events * 99 / 100]);
	rf_cluster_unref(again);

	/* layout events: patched (usage by difference), patched with usage walked, and built in
	 * full, all from the same generation */
	size_t rounds = events < NODE_ROUNDS ? events : NODE_ROUNDS;
	w.objs = objs;
	enum { PATCHED, WALKED, FULL, WAYS };
	double *wall[WAYS], *cpus[WAYS];
	for (int k = 0; k < WAYS; k++)
		if (!(wall[k] = calloc(rounds, sizeof(double))) ||
		    !(cpus[k] = calloc(rounds, sizeof(double))))
			return 1;
	for (int ev = 0; ev < EV_COUNT; ev++) {
		size_t patched = 0, by_difference = 0;
		for (size_t r = 0; r < rounds; r++) {
			if (layout_event(&w, (enum layout_event)ev, r) < 0)
				return 1;
			struct rf_cluster *built[WAYS] = { NULL };
			for (int k = 0; k < WAYS; k++) {
				/* rotate which goes first, so that none always finds the caches
				 * warm */
				int way = (int)((k + r) % WAYS);
				w.objs.full_layout = way == FULL;
				w.objs.walk_usage = way == WALKED;
				t0 = now_ms();
				double c0 = cpu_ms();
				/* the pods' deletion is a pod event: the layout stays, as the
				 * store builds it (the full build: the layout too) */
				bool same = ev == EV_PODS_GC && way != FULL;
				int rr = rf_cluster_build_next(gen, &w.objs, &cfg, cel, same,
							       &built[way]);
				wall[way][r] = now_ms() - t0;
				cpus[way][r] = cpu_ms() - c0;
				if (rr < 0) {
					fprintf(stderr, "build: %s\n", strerror(-rr));
					return 1;
				}
			}
			w.objs.full_layout = w.objs.walk_usage = false;
			patched += rf_cluster_layout_patched(built[PATCHED]);
			by_difference += rf_cluster_usage_delta(built[PATCHED]);
			/* the chain goes on from the patched one built last: the claims the
			 * reuse table holds are relinked to its layout (the live store never
			 * builds twice from one generation) */
			int last = (int)((WAYS - 1 + r) % WAYS) == PATCHED   ? PATCHED
				   : (int)((WAYS - 1 + r) % WAYS) == WALKED  ? WALKED
				   : (int)((WAYS - 2 + r) % WAYS) == PATCHED ? PATCHED
									     : WALKED;
			rf_cluster_unref(gen);
			gen = built[last];
			rf_cluster_unref(built[last == PATCHED ? WALKED : PATCHED]);
			rf_cluster_unref(built[FULL]);
		}
		for (int k = 0; k < WAYS; k++) {
			qsort(wall[k], rounds, sizeof(double), cmp_double);
			qsort(cpus[k], rounds, sizeof(double), cmp_double);
		}
		printf("layout event, %s, %zu events (%zu patched, usage by difference in %zu): "
		       "patched median %.2f ms (CPU %.2f, max %.2f); patched with usage walked "
		       "median %.2f ms (CPU %.2f, max %.2f); full layout median %.2f ms (CPU %.2f, "
		       "max %.2f)\n",
		       ev_names[ev], rounds, patched, by_difference, wall[PATCHED][rounds / 2],
		       cpus[PATCHED][rounds / 2], cpus[PATCHED][rounds - 1],
		       wall[WALKED][rounds / 2], cpus[WALKED][rounds / 2], cpus[WALKED][rounds - 1],
		       wall[FULL][rounds / 2], cpus[FULL][rounds / 2], cpus[FULL][rounds - 1]);
	}
	for (int k = 0; k < WAYS; k++) {
		free(wall[k]);
		free(cpus[k]);
	}
	if (chain_events(&w, &gen, cel, chain) < 0)
		return 1;
	objs = w.objs;
	rf_cluster_unref(gen);
	for (size_t i = 0; i < w.objs.n_slice_recs; i++)
		rf_slice_unref(w.recs[i]);
	for (size_t r = 0; r < NODE_ROUNDS; r++) {
		free(w.names[r]);
		json_decref(w.node_objs[r]);
		json_decref(w.slices_away[r]);
		free(w.real_names[r]);
		json_decref(w.real_objs[r]);
		json_decref(w.real_slices[r]);
		free(w.shared_names[r]);
		json_decref(w.shared_objs[r]);
		json_decref(w.shared_slices[r]);
	}
	free(w.recs);
	objs.slice_recs = NULL; /* freed above */
	objs.n_slice_recs = 0;
	rf_cluster_objects_release(&objs);
	rf_cel_cache_free(cel);
	rf_config_release(&cfg);
	free(ms);
	free(cpu);
	free(walk_cpu);
	return 0;
}
