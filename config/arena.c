/* Bump allocator (see arena.h). No shared state: an arena is filled by one thread. */
#include "config/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CHUNK 4096
#define MAX_CHUNK (64u << 10) /* chunks stop doubling here */

struct rf_arena_chunk {
	struct rf_arena_chunk *next;
	size_t used;
	size_t cap;
	bool borrowed; /* the caller's memory (rf_arena_init_buf) */
	_Alignas(16) unsigned char data[];
};

void
rf_arena_init(struct rf_arena *a, size_t limit)
{
	a->head = NULL;
	a->total = 0;
	a->limit = limit;
	a->over_limit = false;
}

void
rf_arena_init_buf(struct rf_arena *a, size_t limit, void *buf, size_t len)
{
	rf_arena_init(a, limit);
	uintptr_t p = (uintptr_t)buf;
	uintptr_t aligned = (p + 15) & ~(uintptr_t)15;
	if (len < (aligned - p) + sizeof(struct rf_arena_chunk) + 64)
		return;
	struct rf_arena_chunk *c = (struct rf_arena_chunk *)aligned;
	c->next = NULL;
	c->used = 0;
	c->cap = len - (aligned - p) - sizeof(struct rf_arena_chunk);
	c->borrowed = true;
	a->head = c;
}

void
rf_arena_release(struct rf_arena *a)
{
	struct rf_arena_chunk *c = a->head;
	while (c) {
		struct rf_arena_chunk *next = c->next;
		if (!c->borrowed)
			free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

struct rf_arena *
rf_arena_new(void)
{
	struct rf_arena *a = malloc(sizeof(*a));
	if (a)
		rf_arena_init(a, 0);
	return a;
}

struct rf_arena *
rf_arena_new_sized(size_t n)
{
	struct rf_arena *a = rf_arena_new();
	if (!a || n == 0 || n > SIZE_MAX / 2)
		return a;
	struct rf_arena_chunk *c = malloc(sizeof(*c) + n);
	if (!c) {
		free(a);
		return NULL;
	}
	c->next = NULL;
	c->used = 0;
	c->cap = n;
	c->borrowed = false;
	a->head = c;
	a->total = sizeof(*c) + n;
	return a;
}

size_t
rf_arena_used(const struct rf_arena *a)
{
	size_t n = 0;
	for (const struct rf_arena_chunk *c = a->head; c; c = c->next)
		n += c->used;
	return n;
}

void
rf_arena_free(struct rf_arena *a)
{
	if (!a)
		return;
	rf_arena_release(a);
	free(a);
}

void *
rf_arena_alloc_raw(struct rf_arena *a, size_t n)
{
	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / 2) {
		a->over_limit = true;
		return NULL;
	}
	n = (n + 15) & ~(size_t)15;
	struct rf_arena_chunk *c = a->head;
	if (c && c->cap - c->used >= n) {
		void *r = c->data + c->used;
		c->used += n;
		return r;
	}
	/* the next chunk doubles the last one up to MAX_CHUNK, and holds at least n */
	size_t cap = MIN_CHUNK - sizeof(*c);
	if (c && !c->borrowed)
		cap = c->cap < MAX_CHUNK / 2 ? c->cap * 2 : MAX_CHUNK;
	if (cap < n)
		cap = n;
	if (a->limit && (a->total + cap + sizeof(*c) > a->limit)) {
		a->over_limit = true;
		return NULL;
	}
	struct rf_arena_chunk *nc = malloc(sizeof(*nc) + cap);
	if (!nc) {
		a->over_limit = false;
		return NULL;
	}
	a->total += sizeof(*nc) + cap;
	nc->cap = cap;
	nc->used = n;
	nc->borrowed = false;
	/* keep the chunk with the most room in front */
	if (c && c->cap - c->used > cap - n) {
		nc->next = c->next;
		c->next = nc;
	} else {
		nc->next = c;
		a->head = nc;
	}
	return nc->data;
}

void *
rf_arena_alloc(struct rf_arena *a, size_t n)
{
	void *p = rf_arena_alloc_raw(a, n);
	if (p)
		memset(p, 0, n ? n : 1);
	return p;
}

void *
rf_arena_calloc(struct rf_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return rf_arena_alloc(a, n * size);
}

char *
rf_arena_strndup(struct rf_arena *a, const char *s, size_t n)
{
	char *r = rf_arena_alloc_raw(a, n + 1);
	if (!r)
		return NULL;
	if (n)
		memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

char *
rf_arena_strdup(struct rf_arena *a, const char *s)
{
	return rf_arena_strndup(a, s, strlen(s));
}

char *
rf_arena_printf(struct rf_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = rf_arena_alloc_raw(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
