/* What a layout built in full costs next to the generation it replaces (issue 9's peak: two
 * layouts and two claim and pod tables at once): load a snapshot, parse its slices into records
 * as the live store keeps them (lent to layouts: one builder thread), build a generation, then
 * build the next one with the layout built in full (rf_cluster_objects.full_layout) while the
 * first is still held, as the publisher does while filter threads read the published one.
 * Prints the heap in use (mallinfo2) after each step; run under heaptrack for what the peak is
 * made of.
 *
 *   build/test/bench/full_build_mem SNAPSHOT.json [ROUNDS] [PATCHES]
 *
 * PATCHES (default 0): before the rounds, that many generations each with one Node's label
 * changed (a patched layout each: a chain of patches, as a live cluster's events make one).
 *
 * Each round builds one generation in full next to the previous one, then drops the previous
 * one (the first round's replaces a layout holding the records' devices; the next, one that
 * does not, and so on alternately). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc/cel/cel.h"
#include "alloc/model/model.h"
#include "alloc/model/slice.h"
#include "config/config.h"
#include "server/snapshot/snapshot_load.h"

static double
heap_mb(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (double)(mi.uordblks + mi.hblkhd) / 1e6;
}

/* One Node's label changed (a new object in a new array), as the store hands it over. */
static void
node_event(struct rf_cluster_objects *o, size_t r)
{
	size_t n = json_array_size(o->nodes), i = (r * 7919) % n;
	json_t *nj = json_deep_copy(json_array_get(o->nodes, i));
	json_t *md = json_object_get(nj, "metadata");
	if (!json_is_object(json_object_get(md, "labels")))
		json_object_set_new(md, "labels", json_object());
	json_object_set_new(json_object_get(md, "labels"), "bench.railfit.io/round",
			    json_integer((json_int_t)r));
	json_t *next = json_array();
	json_array_extend(next, o->nodes);
	json_array_set_new(next, i, nj);
	json_decref(o->nodes);
	o->nodes = next;
}

/* The store hands over new arrays of the same objects. */
static void
new_arrays(struct rf_cluster_objects *o)
{
	json_t **same[] = { &o->claims, &o->pods, &o->nodes };
	for (size_t k = 0; k < 3; k++) {
		json_t *copy = json_array();
		json_array_extend(copy, *same[k]);
		json_decref(*same[k]);
		*same[k] = copy;
	}
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAPSHOT.json [ROUNDS [PATCHES]]\n", argv[0]);
		return 2;
	}
	size_t rounds = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 2;
	size_t patches = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 0;
	struct rf_config cfg;
	struct rf_cluster_objects objs;
	struct rf_cel_cache *cel = rf_cel_cache_new();
	size_t skipped;
	char err[512];
	rf_config_init(&cfg);
	struct rf_slim_options slim = { 0 };
	/* what snapshot mode keeps: slices as records, claims packed */
	if (!cel ||
	    rf_snapshot_load_kept(argv[1], &slim, &cfg, &objs, &skipped, err, sizeof(err)) < 0) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
		return 1;
	}
	objs.lend_records = true; /* one builder thread, as the live publisher */
	double h0 = heap_mb();
	struct rf_cluster *gen = NULL;
	if (rf_cluster_build_next(NULL, &objs, &cfg, cel, false, &gen) < 0)
		return 1;
	double h1 = heap_mb();
	printf("objects and slice records %.1f MB; one generation +%.1f MB\n", h0, h1 - h0);
	for (size_t r = 0; r < patches; r++) {
		struct rf_cluster *next = NULL;
		new_arrays(&objs);
		node_event(&objs, r);
		if (rf_cluster_build_next(gen, &objs, &cfg, cel, false, &next) < 0)
			return 1;
		rf_cluster_unref(gen);
		gen = next;
	}
	if (patches)
		printf("after %zu patched generations: +%.1f MB\n", patches, heap_mb() - h0);
	for (size_t r = 0; r < rounds; r++) {
		struct rf_cluster *next = NULL;
		new_arrays(&objs);
		objs.full_layout = true;
		if (rf_cluster_build_next(gen, &objs, &cfg, cel, false, &next) < 0)
			return 1;
		double h2 = heap_mb();
		rf_cluster_unref(gen);
		gen = next;
		double h3 = heap_mb();
		printf("round %zu: built in full next to it +%.1f MB; once the previous one goes "
		       "+%.1f MB\n",
		       r, h2 - h0, h3 - h0);
	}
	rf_cluster_unref(gen);
	rf_cluster_objects_release(&objs);
	rf_cel_cache_free(cel);
	return 0;
}
