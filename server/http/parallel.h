/* A fork-join pool for one large request: the nodes of a filter or prioritize call over
 * thousands of nodes are judged in chunks by the calling thread and the pool's workers together,
 * so that one request uses every core. The caller takes chunks too, so a request never waits
 * for a busy pool: at worst it does everything itself. Any thread may call rf_parallel_for(). */
#ifndef RF_SERVER_PARALLEL_H
#define RF_SERVER_PARALLEL_H

#include <stddef.h>

struct rf_parallel;

/** Judge items [begin, end) of the job; `worker` is 0 for the caller, 1.. for pool threads. */
typedef void rf_parallel_fn(void *ctx, unsigned worker, size_t begin, size_t end);

/** Start `threads` workers (0: none, everything runs on the caller). NULL on failure. */
struct rf_parallel *rf_parallel_new(unsigned threads);
/** Stop and join the workers. Accepts NULL. No job may be running. */
void rf_parallel_free(struct rf_parallel *p);

/** Workers a job may see, the caller included (for per-worker scratch arrays). */
unsigned rf_parallel_width(const struct rf_parallel *p);

/**
 * Run fn over [0, n) in chunks of `chunk` items, on the caller and idle workers; returns when
 * every chunk is done. p may be NULL (the caller does everything).
 */
void rf_parallel_for(struct rf_parallel *p, size_t n, size_t chunk, rf_parallel_fn *fn, void *ctx);

#endif
