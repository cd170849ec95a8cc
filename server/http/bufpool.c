/* Large buffers kept for the next request (see bufpool.h). A buffer's size is what
 * malloc_usable_size() says, so a buffer comes back through any free callback that takes only
 * the pointer (MHD's response free callback). Shared state: the kept list, under one lock. */
#include "server/http/bufpool.h"

#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define RF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_ASAN 1
#endif
#endif
#ifdef RF_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *kept[RF_BUFPOOL_KEEP];
static size_t kept_cap[RF_BUFPOOL_KEEP];
static size_t n_kept, kept_bytes;

void *
rf_bufpool_get(size_t want, size_t *ret_cap)
{
	void *p = NULL;
	size_t cap = 0;
	if (want >= RF_BUFPOOL_MIN) {
		pthread_mutex_lock(&lock);
		size_t best = n_kept;
		for (size_t i = 0; i < n_kept; i++)
			if (kept_cap[i] >= want && (best == n_kept || kept_cap[i] < kept_cap[best]))
				best = i;
		if (best < n_kept) {
			p = kept[best];
			cap = kept_cap[best];
			UNPOISON(p, cap);
			kept_bytes -= cap;
			kept[best] = kept[--n_kept];
			kept_cap[best] = kept_cap[n_kept];
		}
		pthread_mutex_unlock(&lock);
	}
	if (!p) {
		/* what was asked for, not malloc_usable_size(): writes past the request are
		 * what _FORTIFY_SOURCE=3 stops */
		cap = want ? want : 1;
		if (!(p = malloc(cap)))
			return NULL;
	}
	*ret_cap = cap;
	return p;
}

void
rf_bufpool_put(void *p)
{
	if (!p)
		return;
	size_t cap = malloc_usable_size(p);
	if (cap >= RF_BUFPOOL_MIN && cap <= RF_BUFPOOL_MAX) {
		pthread_mutex_lock(&lock);
		bool keep = n_kept < RF_BUFPOOL_KEEP && kept_bytes + cap <= RF_BUFPOOL_BYTES;
		if (keep) {
			POISON(p, cap);
			kept[n_kept] = p;
			kept_cap[n_kept++] = cap;
			kept_bytes += cap;
		}
		pthread_mutex_unlock(&lock);
		if (keep)
			return;
	}
	free(p);
}

void
rf_bufpool_drain(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_kept; i++) {
		UNPOISON(kept[i], kept_cap[i]);
		free(kept[i]);
	}
	n_kept = kept_bytes = 0;
	pthread_mutex_unlock(&lock);
}

size_t
rf_bufpool_kept(size_t *ret_bytes)
{
	pthread_mutex_lock(&lock);
	size_t n = n_kept;
	if (ret_bytes)
		*ret_bytes = kept_bytes;
	pthread_mutex_unlock(&lock);
	return n;
}
