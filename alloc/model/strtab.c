/* Interned strings of one generation (see strtab.h): an open-addressing hash set of arena copies.
 */
#include "alloc/model/strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

struct slot {
	uint64_t hash;
	const char *s;
};

struct rf_strtab {
	struct rf_arena *arena;
	struct slot *slots;
	size_t cap, n;
};

struct rf_strtab *
rf_strtab_new(struct rf_arena *a)
{
	return rf_strtab_new_sized(a, 4096);
}

struct rf_strtab *
rf_strtab_new_sized(struct rf_arena *a, size_t cap)
{
	struct rf_strtab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->arena = a;
	for (t->cap = 16; t->cap < cap; t->cap *= 2)
		;
	if (!(t->slots = calloc(t->cap, sizeof(*t->slots)))) {
		free(t);
		return NULL;
	}
	return t;
}

void
rf_strtab_free(struct rf_strtab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static uint64_t
hash_str(const char *s, size_t *ret_len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p = (const unsigned char *)s;
	for (; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	*ret_len = (size_t)(p - (const unsigned char *)s);
	return h;
}

static int
grow(struct rf_strtab *t)
{
	size_t cap = t->cap * 2;
	struct slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].s)
			continue;
		size_t j = (size_t)t->slots[i].hash & (cap - 1);
		while (slots[j].s)
			j = (j + 1) & (cap - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *
rf_strtab_get(struct rf_strtab *t, const char *s, int *ret_oom)
{
	size_t len;
	if (!s)
		return NULL;
	uint64_t h = hash_str(s, &len);
	size_t i = (size_t)h & (t->cap - 1);
	for (; t->slots[i].s; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].hash == h && strcmp(t->slots[i].s, s) == 0)
			return t->slots[i].s;
	char *copy = rf_arena_alloc(t->arena, len + 1);
	if (!copy) {
		if (ret_oom)
			*ret_oom = 1;
		return NULL;
	}
	memcpy(copy, s, len + 1);
	if ((t->n + 1) * 2 > t->cap) {
		if (grow(t) < 0)
			return copy; /* not shared later, still correct */
		for (i = (size_t)h & (t->cap - 1); t->slots[i].s; i = (i + 1) & (t->cap - 1))
			;
	}
	t->slots[i].hash = h;
	t->slots[i].s = copy;
	t->n++;
	return copy;
}
