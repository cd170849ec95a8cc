/* What the ResourceSlice records cost in memory: load a snapshot, parse every slice as the live
 * store does (rf_slice_parse), and report the heap they hold (mallinfo2: bytes in use after the
 * parse less before), per slice and per device, and the CPU time of the parse. Then drop them
 * and report what stays (the process-wide interner of slice strings, alloc/model/strtab.h).
 *
 *   build/test/bench/slice_mem SNAPSHOT.json [ROUNDS]
 *
 * ROUNDS (default 3) parses of every slice, each after the previous round's records are freed:
 * memory is the last round's (what a replaced slice costs once the interner holds its strings). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static size_t
heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAPSHOT.json [ROUNDS]\n", argv[0]);
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	struct rf_config cfg;
	struct rf_cluster_objects objs;
	size_t skipped;
	char err[512];
	rf_config_init(&cfg);
	if (rf_snapshot_load_file(argv[1], &objs, &skipped, err, sizeof(err)) < 0) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
		return 1;
	}
	size_t n = json_array_size(objs.slices);
	struct rf_slice **recs = calloc(n + 1, sizeof(*recs));
	if (!recs || rounds < 1)
		return 1;
	size_t first = heap_used();
	for (int round = 1; round <= rounds; round++) {
		size_t before = heap_used(), devices = 0, attrs = 0, caps = 0;
		double t0 = cpu_ms();
		for (size_t i = 0; i < n; i++) {
			if (rf_slice_parse(json_array_get(objs.slices, i), &cfg, &recs[i]) < 0) {
				fprintf(stderr, "slice %zu: out of memory\n", i);
				return 1;
			}
		}
		double t1 = cpu_ms();
		size_t held = heap_used() - before;
		for (size_t i = 0; i < n; i++) {
			devices += recs[i]->n_devices;
			for (size_t k = 0; k < recs[i]->n_devices; k++) {
				attrs += recs[i]->devices[k].n_attrs;
				caps += recs[i]->devices[k].n_caps;
			}
		}
		printf("round %d: %zu slices, %zu devices, %zu attributes, %zu capacities: "
		       "%zu bytes held, %.0f per slice, %.0f per device; parse %.0f ms CPU "
		       "(%.1f us per slice)\n",
		       round, n, devices, attrs, caps, held, (double)held / (double)n,
		       devices ? (double)held / (double)devices : 0.0, t1 - t0,
		       (t1 - t0) * 1e3 / (double)n);
		for (size_t i = 0; i < n; i++)
			rf_slice_unref(recs[i]);
	}
	printf("after freeing every record: %zd bytes still held (the shared strings)\n",
	       (ssize_t)(heap_used() - first));
	free(recs);
	rf_cluster_objects_release(&objs);
	rf_config_release(&cfg);
	return 0;
}
