/* A bump allocator: one generation of the cluster model is thousands of small strings and
 * structs that all die together, so they come from chunks freed at once. Not thread-safe; a
 * generation is built by one thread and only read afterwards. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

#define CHUNK_SIZE (64 * 1024)
#define ALIGN      16

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct rf_arena {
	struct chunk *head;
};

struct rf_arena *
rf_arena_new(void)
{
	return calloc(1, sizeof(struct rf_arena));
}

void
rf_arena_free(struct rf_arena *a)
{
	if (!a)
		return;
	struct chunk *c = a->head;
	while (c) {
		struct chunk *next = c->next;
		free(c);
		c = next;
	}
	free(a);
}

void *
rf_arena_alloc(struct rf_arena *a, size_t size)
{
	size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (size == 0)
		size = ALIGN;
	struct chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t csize = size > CHUNK_SIZE ? size : CHUNK_SIZE;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->size = csize;
		c->used = 0;
		/* keep the partially used head in front when the new chunk is a one-off big block
		 */
		if (a->head && size > CHUNK_SIZE) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
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
rf_arena_strdup(struct rf_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = rf_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
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
	char *p = rf_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

const char *
rf_jstr(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

const json_t *
rf_jpath(const json_t *obj, const char *path)
{
	char key[128];
	const char *p = path;
	while (obj && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		obj = json_object_get(obj, key);
		p += n + (dot ? 1 : 0);
	}
	return obj;
}

long long
rf_jint(const json_t *obj, const char *key, long long def)
{
	const json_t *v = json_object_get(obj, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == (double)(long long)d)
			return (long long)d;
	}
	return def;
}

bool
rf_jbool(const json_t *obj, const char *key, bool def)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}
