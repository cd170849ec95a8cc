/* The one bump allocator: many small objects that all die together (a cluster generation, a CEL
 * program, one CEL evaluation) come from chunks freed at once. Chunks start at 4 KiB and double
 * up to 64 KiB; a request larger than that gets a chunk of its own. An optional byte limit turns
 * runaway allocation into a failure. Not thread-safe: an arena belongs to one thread while it is
 * filled, and may be read by many afterwards. */
#ifndef RF_CONFIG_ARENA_H
#define RF_CONFIG_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct rf_arena_chunk;

/* Embeddable; set up with rf_arena_init() or rf_arena_init_buf(). */
struct rf_arena {
	struct rf_arena_chunk *head;
	size_t total;    /* bytes taken from malloc */
	size_t limit;    /* 0 = unlimited */
	bool over_limit; /* the last failure was the limit, not malloc */
};

void rf_arena_init(struct rf_arena *a, size_t limit);
/** Seed the arena with the caller's memory (e.g. a stack buffer), never freed here. */
void rf_arena_init_buf(struct rf_arena *a, size_t limit, void *buf, size_t len);
/** Free every chunk; the arena is empty and usable again. */
void rf_arena_release(struct rf_arena *a);

/** A heap-allocated empty arena (NULL on OOM), and its destructor (accepts NULL). */
struct rf_arena *rf_arena_new(void);
/** The same with a first chunk of room for n bytes of allocations (rounded as they are): to
 * fill with a sequence whose rf_arena_used() is known, without a byte of slack. */
struct rf_arena *rf_arena_new_sized(size_t n);
/** Bytes handed out so far (each allocation rounded up to 16). */
size_t rf_arena_used(const struct rf_arena *a);
void rf_arena_free(struct rf_arena *a);

/** 16-byte aligned, uninitialised; NULL on OOM or past the limit. */
void *rf_arena_alloc_raw(struct rf_arena *a, size_t n);
/** The same, zeroed. */
void *rf_arena_alloc(struct rf_arena *a, size_t n);
/** n zeroed elements of size bytes; NULL on overflow too. */
void *rf_arena_calloc(struct rf_arena *a, size_t n, size_t size);
char *rf_arena_strdup(struct rf_arena *a, const char *s);
/** s[0..n) and a NUL. */
char *rf_arena_strndup(struct rf_arena *a, const char *s, size_t n);
char *rf_arena_printf(struct rf_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
