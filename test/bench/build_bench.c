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
 * so that neither always finds the caches warm. Both in thread CPU time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/cel/cel.h"
#include "alloc/model/model.h"
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

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAPSHOT.json [EVENTS]\n", argv[0]);
		return 2;
	}
	size_t events = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 200;
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

	double t0 = now_ms();
	struct rf_cluster *gen = NULL;
	if (rf_cluster_build_next(NULL, &objs, &cfg, cel, false, &gen) < 0)
		return 1;
	double full_ms = now_ms() - t0;

	double *ms = calloc(events, sizeof(*ms)), *cpu = calloc(events, sizeof(*cpu));
	double *walk_cpu = calloc(events, sizeof(*walk_cpu));
	size_t n_delta = 0;
	json_t *claims = objs.claims, *pods = objs.pods;
	for (size_t i = 0; ms && cpu && i < events; i++) {
		/* the store hands over new arrays of the same objects, but the one that changed */
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
	rf_cluster_unref(gen);
	rf_cluster_objects_release(&objs);
	rf_cel_cache_free(cel);
	rf_config_release(&cfg);
	free(ms);
	free(cpu);
	free(walk_cpu);
	return 0;
}
