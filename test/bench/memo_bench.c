/* What the first filter after a layout event costs: remembered verdicts carried across a patched
 * layout (alloc/model/model.c memo_carries) against a new table, in one run.
 *
 *   build-bench/test/bench/memo_bench SNAPSHOT.json [EVENTS]
 *
 * Loads the snapshot, adds one pending Job worker (the next pod of job-0: one GPU and one NIC
 * with a pcieRoot matchAttribute, its own claim) and judges every node for it as filter does
 * (rf_judge_node with messages, on this one thread), twice: the first fills the table, the
 * second is what a remembered filter costs. Then EVENTS layout events, in turn one
 * ResourceSlice (an attribute of a device), one Node label (its block), a node added (a Node
 * object of a new name, no slices yet), a DeviceClass the pod does not name added or removed, the
 * node added before removed (its Node object), and the GPU class the pod names changed (a clause
 * selecting the same devices) or changed back, as the live store hands them over (the slice
 * parsed, new arrays of the same claims and pods). Each event is built
 * twice from the same generation: as railfit does (the table carried, only the rebuilt node
 * judged again) and with a new table (rf_cluster_objects.fresh_memo: what every such event cost
 * before); every node is then judged on both, in alternating order, in thread CPU time, and the
 * two must agree node by node (verdict, score, message). Prints the median and max per kind and
 * how many nodes were evaluated rather than remembered. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/cel/cel.h"
#include "alloc/demand.h"
#include "alloc/memo.h"
#include "alloc/model/model.h"
#include "alloc/model/slice.h"
#include "config/config.h"
#include "server/snapshot/snapshot.h"

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

/* A copy of the array with element i replaced by v (v's reference taken). */
static json_t *
with(const json_t *arr, size_t i, json_t *v)
{
	json_t *out = json_array();
	json_array_extend(out, (json_t *)arr);
	json_array_set_new(out, i, v);
	return out;
}

static json_t *
copy_of(const json_t *arr)
{
	json_t *out = json_array();
	json_array_extend(out, (json_t *)arr);
	return out;
}

/* One node's judgement as filter sends it. */
struct verdict {
	int verdict, score;
	char *msg;
};

struct judged {
	double cpu_ms;
	size_t evaluated; /* not remembered */
};

/* Every node judged for the pod on c, as filter does; each judgement into out[i]. */
static int
judge_all(const struct rf_cluster *c, const json_t *pod, struct rf_judge_scratch *scratch,
	  struct verdict *out, struct judged *ret)
{
	struct rf_demand d;
	struct rf_judge_ctx ctx;
	double t0 = cpu_ms();
	int r = rf_demand_resolve(c, pod, &d);
	if (r < 0)
		return r;
	if ((r = rf_judge_begin(c, &d, &ctx)) < 0) {
		rf_demand_release(&d);
		return r;
	}
	*ret = (struct judged){ 0 };
	for (size_t i = 0; i < rf_cluster_n_nodes(c) && r == 0; i++) {
		struct rf_judgement j;
		if ((r = rf_judge_node(&ctx, rf_cluster_node_at(c, i)->name, true, scratch, &j)) <
		    0)
			break;
		ret->evaluated += j.picks == scratch->picks;
		out[i].verdict = j.verdict;
		out[i].score = j.score;
		free(out[i].msg);
		out[i].msg = NULL;
		if (j.verdict != RF_VERDICT_PASS)
			out[i].msg = j.filter_msg ? strdup(j.filter_msg)
						  : rf_filter_message(j.msg ? j.msg : "");
	}
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	ret->cpu_ms = cpu_ms() - t0;
	return r;
}

enum { EV_SLICE, EV_NODE, EV_NODE_ADD, EV_CLASS_OTHER, EV_NODE_DEL, EV_CLASS_POD, EV_COUNT };
static const char *const ev_names[EV_COUNT] = {
	"one ResourceSlice (a device attribute)",
	"one Node label (its block)",
	"a node added (its Node object)",
	"a DeviceClass the pod does not name added or removed",
	"a node removed (its Node object: the one added before)",
	"the GPU class the pod names changed or changed back",
};

/* The object of arr named name, or -1. */
static long
find_named(const json_t *arr, const char *name)
{
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *md = json_object_get(json_array_get(arr, i), "metadata");
		if (strcmp(json_string_value(json_object_get(md, "name")), name) == 0)
			return (long)i;
	}
	return -1;
}

/* A node added: a copy of node i's object under a new name, no slices (a node joining, before
 * its drivers publish). */
static json_t *
added_node(const json_t *nodes, size_t i, size_t r)
{
	json_t *o = json_deep_copy(json_array_get(nodes, i));
	json_t *md = json_object_get(o, "metadata");
	char name[64];
	snprintf(name, sizeof(name), "bench-node-%zu", r);
	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(md, "uid", json_string(name));
	if (json_is_object(json_object_get(md, "labels")))
		json_object_set_new(json_object_get(md, "labels"), "kubernetes.io/hostname",
				    json_string(name));
	return o;
}

/* The objects after one layout event of kind ev (round r): new arrays, one object new. */
static int
layout_event(struct rf_cluster_objects *objs, struct rf_slice **recs, const struct rf_config *cfg,
	     int ev, size_t r)
{
	json_t **arr = ev == EV_SLICE                               ? &objs->slices
		       : ev == EV_CLASS_OTHER || ev == EV_CLASS_POD ? &objs->classes
								    : &objs->nodes;
	size_t n = json_array_size(*arr), i = (r * 7919) % n;
	json_t *next = NULL, *o = NULL;
	char name[64];
	if (ev == EV_NODE_ADD) {
		next = copy_of(*arr);
		json_array_append_new(next, added_node(*arr, i, r));
	} else if (ev == EV_NODE_DEL) {
		snprintf(name, sizeof(name), "bench-node-%zu", r);
		long k = find_named(*arr, name);
		if (k < 0)
			return -ENOENT;
		next = copy_of(*arr);
		json_array_remove(next, (size_t)k);
	} else if (ev == EV_CLASS_OTHER) {
		/* added on odd rounds, removed on even ones */
		long k = find_named(*arr, "bench-extra.example.com");
		next = copy_of(*arr);
		if (k >= 0)
			json_array_remove(next, (size_t)k);
		else
			json_array_append_new(
				next, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "kind",
						"DeviceClass", "apiVersion", "resource.k8s.io/v1",
						"metadata", "name", "bench-extra.example.com",
						"spec", "selectors", "cel", "expression",
						"device.driver == 'bench.example.com'"));
	} else if (ev == EV_CLASS_POD) {
		/* a clause that selects the same devices added, then taken away again */
		long k = find_named(*arr, "gpu.nvidia.com");
		if (k < 0)
			return -ENOENT;
		o = json_deep_copy(json_array_get(*arr, (size_t)k));
		json_t *sel =
			json_array_get(json_object_get(json_object_get(o, "spec"), "selectors"), 0);
		json_t *cel = json_object_get(sel, "cel");
		const char *e = json_string_value(json_object_get(cel, "expression"));
		const char *tail = " && device.driver != 'bench.example.com'";
		char buf[1024];
		size_t el = e ? strlen(e) : 0, tl = strlen(tail);
		if (!e)
			return -ENOENT;
		if (el > tl && strcmp(e + el - tl, tail) == 0)
			snprintf(buf, sizeof(buf), "%.*s", (int)(el - tl), e);
		else
			snprintf(buf, sizeof(buf), "%s%s", e, tail);
		json_object_set_new(cel, "expression", json_string(buf));
		next = with(*arr, (size_t)k, o);
	} else {
		o = json_deep_copy(json_array_get(*arr, i));
		if (!o)
			return -ENOMEM;
		if (ev == EV_SLICE) {
			json_t *d = json_array_get(
				json_object_get(json_object_get(o, "spec"), "devices"), 0);
			json_t *a = json_object_get(d, "attributes");
			if (a)
				json_object_set_new(a, "bench.railfit.io/round",
						    json_pack("{s:I}", "int", (json_int_t)r));
			struct rf_slice *rec;
			if (rf_slice_parse(o, cfg, &rec) < 0)
				return -ENOMEM;
			rf_slice_unref(recs[i]);
			recs[i] = rec;
		} else {
			json_t *md = json_object_get(o, "metadata");
			if (!json_is_object(json_object_get(md, "labels")))
				json_object_set_new(md, "labels", json_object());
			char b[32];
			snprintf(b, sizeof(b), "b%zu", r % 4);
			json_object_set_new(json_object_get(md, "labels"),
					    "network.topology.kubernetes.io/block", json_string(b));
		}
		next = with(*arr, i, o);
	}
	if (!next)
		return -ENOMEM;
	json_decref(*arr);
	*arr = next;
	json_t **same[] = { &objs->claims, &objs->pods };
	for (size_t k = 0; k < 2; k++) {
		json_t *copy = copy_of(*same[k]);
		json_decref(*same[k]);
		*same[k] = copy;
	}
	return 0;
}

static const char CLAIM[] =
	"{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":"
	"\"bench-worker-gpu\",\"namespace\":\"ml-train\",\"uid\":\"bench-claim-uid\"},\"spec\":{"
	"\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia."
	"com\",\"allocationMode\":\"ExactCount\",\"count\":1}},{\"name\":\"nic\",\"exactly\":{"
	"\"deviceClassName\":\"rdma-nic\",\"allocationMode\":\"ExactCount\",\"count\":1}}],"
	"\"constraints\":[{\"requests\":[\"gpu\",\"nic\"],\"matchAttribute\":\"resource.kubernetes."
	"io/pcieRoot\"}]}}}";
static const char POD[] =
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"bench-worker\","
	"\"namespace\":\"ml-train\",\"uid\":\"bench-pod-uid\",\"labels\":{\"batch.kubernetes.io/"
	"job-name\":\"job-0\"}},\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\","
	"\"resourceClaimName\":\"bench-worker-gpu\"}]},\"status\":{\"phase\":\"Pending\"}}";

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAPSHOT.json [EVENTS]\n", argv[0]);
		return 2;
	}
	size_t events = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 20;
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
	json_t *pod = json_loads(POD, 0, NULL), *claim = json_loads(CLAIM, 0, NULL);
	if (!pod || !claim || json_array_append_new(objs.claims, claim) < 0 ||
	    json_array_append(objs.pods, pod) < 0)
		return 1;
	size_t n_slices = json_array_size(objs.slices);
	struct rf_slice **recs = calloc(n_slices + 1, sizeof(*recs));
	for (size_t i = 0; recs && i < n_slices; i++)
		if (rf_slice_parse(json_array_get(objs.slices, i), &cfg, &recs[i]) < 0)
			return 1;
	if (!recs)
		return 1;
	objs.slice_recs = recs;
	objs.n_slice_recs = n_slices;
	struct rf_cluster *gen = NULL;
	if (rf_cluster_build_next(NULL, &objs, &cfg, cel, false, &gen) < 0)
		return 1;
	size_t n_nodes = rf_cluster_n_nodes(gen);
	printf("snapshot: %zu nodes, %zu pods, %zu slices, %zu claims\n", n_nodes,
	       json_array_size(objs.pods), n_slices, json_array_size(objs.claims));

	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	/* nodes added by the events are judged too */
	struct verdict *a = calloc(n_nodes + events + 1, sizeof(*a)),
		       *b = calloc(n_nodes + events + 1, sizeof(*b));
	double *cpu[2][EV_COUNT], *fresh[2][EV_COUNT];
	size_t n_ev[EV_COUNT] = { 0 }, carried_ev[EV_COUNT] = { 0 }, passed = 0;
	struct judged j1, j2;
	if (!scratch || !a || !b || judge_all(gen, pod, scratch, a, &j1) < 0 ||
	    judge_all(gen, pod, scratch, a, &j2) < 0)
		return 1;
	for (size_t i = 0; i < n_nodes; i++)
		passed += a[i].verdict == RF_VERDICT_PASS;
	printf("filter, %zu nodes on one thread (%zu pass): first %.1f ms CPU (%zu evaluated), "
	       "remembered %.1f ms (%zu evaluated)\n",
	       n_nodes, passed, j1.cpu_ms, j1.evaluated, j2.cpu_ms, j2.evaluated);
	for (int k = 0; k < 2; k++)
		for (int e = 0; e < EV_COUNT; e++) {
			cpu[k][e] = calloc(events + 1, sizeof(double));
			fresh[k][e] = calloc(events + 1, sizeof(double));
			if (!cpu[k][e] || !fresh[k][e])
				return 1;
		}
	size_t patched = 0, carried = 0;
	for (size_t r = 0; r < events; r++) {
		int ev = (int)(r % EV_COUNT);
		if (layout_event(&objs, recs, &cfg, ev, r / EV_COUNT + 1) < 0) {
			fprintf(stderr, "event %zu (%s): cannot make it\n", r, ev_names[ev]);
			return 1;
		}
		struct rf_cluster_objects fo = objs;
		fo.fresh_memo = true;
		struct rf_cluster *next = NULL, *cold = NULL;
		if (rf_cluster_build_next(gen, &objs, &cfg, cel, false, &next) < 0 ||
		    rf_cluster_build_next(gen, &fo, &cfg, cel, false, &cold) < 0)
			return 1;
		patched += rf_cluster_layout_patched(next);
		carried += rf_cluster_memo(next) == rf_cluster_memo(gen);
		carried_ev[ev] += rf_cluster_memo(next) == rf_cluster_memo(gen);
		if (rf_cluster_n_nodes(next) > n_nodes + events) {
			fprintf(stderr, "event %zu: more nodes than expected\n", r);
			return 1;
		}
		/* alternate which one is judged first, so that neither always finds caches warm */
		struct judged jn, jc;
		int rc = r % 4 < 2 ? judge_all(next, pod, scratch, a, &jn) ||
					     judge_all(cold, pod, scratch, b, &jc)
				   : judge_all(cold, pod, scratch, b, &jc) ||
					     judge_all(next, pod, scratch, a, &jn);
		if (rc)
			return 1;
		for (size_t i = 0; i < rf_cluster_n_nodes(next); i++)
			if (a[i].verdict != b[i].verdict || a[i].score != b[i].score ||
			    (a[i].msg && strcmp(a[i].msg, b[i].msg ? b[i].msg : "") != 0) ||
			    (!a[i].msg != !b[i].msg)) {
				fprintf(stderr, "event %zu node %zu: carried and fresh differ\n", r,
					i);
				return 1;
			}
		size_t k = n_ev[ev]++;
		cpu[0][ev][k] = jn.cpu_ms;
		cpu[1][ev][k] = (double)jn.evaluated;
		fresh[0][ev][k] = jc.cpu_ms;
		fresh[1][ev][k] = (double)jc.evaluated;
		rf_cluster_unref(cold);
		rf_cluster_unref(gen);
		gen = next;
	}
	printf("%zu layout events, %zu patched, %zu carried the table; the first filter after "
	       "each, every node, one thread, thread CPU median (max), nodes evaluated median:\n",
	       events, patched, carried);
	for (int e = 0; e < EV_COUNT; e++) {
		size_t n = n_ev[e];
		if (!n)
			continue;
		for (int k = 0; k < 2; k++) {
			qsort(cpu[k][e], n, sizeof(double), cmp_double);
			qsort(fresh[k][e], n, sizeof(double), cmp_double);
		}
		printf("  %s, %zu events (%zu carried the table): table carried %.2f ms (%.2f), "
		       "%.0f evaluated; new table %.2f ms (%.2f), %.0f evaluated\n",
		       ev_names[e], n, carried_ev[e], cpu[0][e][n / 2], cpu[0][e][n - 1],
		       cpu[1][e][n / 2], fresh[0][e][n / 2], fresh[0][e][n - 1],
		       fresh[1][e][n / 2]);
	}
	/* a compaction: the same objects built in full (the live store's, once a chain is worn),
	 * its table carried (keyed again for its nodes) against a new one */
	struct rf_cluster_objects co = objs, fo = objs;
	co.full_layout = fo.full_layout = fo.fresh_memo = true;
	struct rf_cluster *full = NULL, *cold = NULL;
	struct judged jf, jc;
	double c0 = cpu_ms();
	if (rf_cluster_build_next(gen, &co, &cfg, cel, false, &full) < 0)
		return 1;
	double build_ms = cpu_ms() - c0;
	c0 = cpu_ms();
	if (rf_cluster_build_next(gen, &fo, &cfg, cel, false, &cold) < 0)
		return 1;
	double cold_build_ms = cpu_ms() - c0;
	if (judge_all(cold, pod, scratch, b, &jc) || judge_all(full, pod, scratch, a, &jf))
		return 1;
	for (size_t i = 0; i < rf_cluster_n_nodes(full); i++)
		if (a[i].verdict != b[i].verdict || a[i].score != b[i].score ||
		    (a[i].msg && strcmp(a[i].msg, b[i].msg ? b[i].msg : "") != 0) ||
		    (!a[i].msg != !b[i].msg)) {
			fprintf(stderr, "compaction node %zu: carried and fresh differ\n", i);
			return 1;
		}
	printf("a compaction (the same objects built in full): %.1f ms CPU with the table carried, "
	       "%.1f ms with a new one; the first filter after it %.2f ms (%zu evaluated) against "
	       "%.2f ms (%zu evaluated)\n",
	       build_ms, cold_build_ms, jf.cpu_ms, jf.evaluated, jc.cpu_ms, jc.evaluated);
	rf_cluster_unref(full);
	rf_cluster_unref(cold);
	return 0;
}
