/* Large buffers kept for the next request. With nodeCacheCapable: false, kube-scheduler sends
 * every Node object (1.8 MB for 500 nodes) and railfit echoes those that pass: a body and a reply
 * of a few MB per request. glibc serves such sizes from fresh mmap'd pages it gives back on free,
 * so each request paid a page fault per 4 KB twice over — five times the cost of decoding and
 * judging. Buffers of at least RF_BUFPOOL_MIN bytes (smaller ones are glibc's own business) are
 * kept, a few of them and a bounded total (resident for the process's life: at most
 * RF_BUFPOOL_BYTES), and handed out again. Any thread; one lock. */
#ifndef RF_SERVER_HTTP_BUFPOOL_H
#define RF_SERVER_HTTP_BUFPOOL_H

#include <stddef.h>

#define RF_BUFPOOL_MIN  ((size_t)256 * 1024)      /* glibc mmaps from 128 KB */
#define RF_BUFPOOL_MAX  ((size_t)8 * 1024 * 1024) /* larger buffers are freed */
#define RF_BUFPOOL_KEEP 8                         /* buffers kept at most */
/* and bytes kept at most: two connections' 1.8 MB bodies and their replies */
#define RF_BUFPOOL_BYTES ((size_t)8 * 1024 * 1024)

/**
 * A malloc'd buffer of at least want bytes (*ret_cap: how many it has): the smallest kept one
 * that is large enough, else a new one. NULL when out of memory.
 */
void *rf_bufpool_get(size_t want, size_t *ret_cap);

/** Take (steal) a malloc'd buffer back (NULL is fine): kept when it is worth keeping, else freed.
 * A kept buffer is poisoned under ASan until it is handed out again: a use after its owner gave
 * it back is reported as if it had been freed. */
void rf_bufpool_put(void *p);

/** Free every kept buffer (at exit, for leak checkers; tests). */
void rf_bufpool_drain(void);

/** Buffers and bytes kept now (tests). */
size_t rf_bufpool_kept(size_t *ret_bytes);

#endif
