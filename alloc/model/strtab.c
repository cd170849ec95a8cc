/* Interned strings of one generation (see strtab.h): an open-addressing hash set of arena copies;
 * and the process-wide interner of slice records, the same set over never-freed blocks. */
#include "alloc/model/strtab.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

#define SHARED_BIT  0x80000000u /* in hits: s is the process-wide copy */
#define NOSHARE_BIT 0x40000000u /* in hits: never to be shared */
#define HITS_MAX    0x3fffffffu
#define ROUND16(n)  (((n) + 15) & ~(size_t)15) /* as the arena counts an allocation */

struct slot {
	const char *s;
	uint32_t hash;
	uint32_t hits; /* times asked for, and SHARED_BIT */
};

struct rf_strtab {
	struct rf_arena *arena;
	struct slot *slots;
	size_t cap, n;
	size_t arena_bytes;    /* taken from the arena */
	char *pack, *pack_end; /* rf_strtab_reserve()'s room */
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

static uint32_t
hash_str(const char *s, size_t *ret_len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p = (const unsigned char *)s;
	for (; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	*ret_len = (size_t)(p - (const unsigned char *)s);
	return (uint32_t)(h ^ (h >> 32));
}

/* slots twice as many, rehashed; -1 on OOM */
static int
grow_slots(struct slot **slotsp, size_t *capp)
{
	size_t cap = *capp * 2;
	struct slot *old = *slotsp, *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < *capp; i++) {
		if (!old[i].s)
			continue;
		size_t j = old[i].hash & (cap - 1);
		while (slots[j].s)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
	}
	free(old);
	*slotsp = slots;
	*capp = cap;
	return 0;
}

/* the slot holding s, or the empty one where it would go */
static struct slot *
find_slot(struct slot *slots, size_t cap, const char *s, uint32_t h)
{
	size_t i = h & (cap - 1);
	for (; slots[i].s; i = (i + 1) & (cap - 1))
		if (slots[i].hash == h && strcmp(slots[i].s, s) == 0)
			break;
	return &slots[i];
}

/* ---- the process-wide interner ---- */

#define INTERN_MAX_STRINGS 32768
#define INTERN_MAX_BYTES   (2u << 20)
#define INTERN_MAX_LEN     1024
#define INTERN_BLOCK       16384

struct intern_block {
	struct intern_block *next;
	char data[];
};

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *intern_slots;
static size_t intern_cap, intern_n, intern_bytes;
static struct intern_block *intern_blocks; /* reachable until exit, by design */
static size_t intern_left;                 /* room in intern_blocks' first */
static char *intern_next;

static const char *
intern_locked(const char *s, size_t len, uint32_t h)
{
	if (!intern_slots) {
		if (!(intern_slots = calloc(1024, sizeof(*intern_slots))))
			return NULL;
		intern_cap = 1024;
	}
	struct slot *sl = find_slot(intern_slots, intern_cap, s, h);
	if (sl->s)
		return sl->s;
	if (intern_n >= INTERN_MAX_STRINGS || intern_bytes + len + 1 > INTERN_MAX_BYTES)
		return NULL;
	if (len + 1 > intern_left) {
		struct intern_block *b = malloc(sizeof(*b) + INTERN_BLOCK);
		if (!b)
			return NULL;
		b->next = intern_blocks;
		intern_blocks = b;
		intern_next = b->data;
		intern_left = INTERN_BLOCK;
	}
	if ((intern_n + 1) * 2 > intern_cap) {
		if (grow_slots(&intern_slots, &intern_cap) < 0)
			return NULL;
		sl = find_slot(intern_slots, intern_cap, s, h);
	}
	char *copy = intern_next;
	memcpy(copy, s, len + 1);
	intern_next += len + 1;
	intern_left -= len + 1;
	intern_bytes += len + 1;
	sl->s = copy;
	sl->hash = h;
	intern_n++;
	return copy;
}

static const char *
intern_hashed(const char *s, size_t len, uint32_t h)
{
	if (len > INTERN_MAX_LEN)
		return NULL;
	pthread_mutex_lock(&intern_lock);
	const char *r = intern_locked(s, len, h);
	pthread_mutex_unlock(&intern_lock);
	return r;
}

const char *
rf_intern(const char *s)
{
	size_t len;
	if (!s)
		return NULL;
	uint32_t h = hash_str(s, &len);
	return intern_hashed(s, len, h);
}

/* ---- one table ---- */

static char *
copy_str(struct rf_strtab *t, const char *s, size_t len)
{
	char *copy;
	if ((size_t)(t->pack_end - t->pack) > len) {
		copy = t->pack;
		t->pack += len + 1;
	} else {
		if (!(copy = rf_arena_alloc_raw(t->arena, len + 1)))
			return NULL;
		t->arena_bytes += ROUND16(len + 1);
	}
	memcpy(copy, s, len + 1);
	return copy;
}

enum share { SHARE_NOW, SHARE_LATER, SHARE_NEVER };

static const char *
get(struct rf_strtab *t, const char *s, enum share share, int *ret_oom)
{
	size_t len;
	if (!s)
		return NULL;
	uint32_t h = hash_str(s, &len);
	struct slot *sl = find_slot(t->slots, t->cap, s, h);
	if (sl->s) {
		if ((sl->hits & HITS_MAX) < HITS_MAX)
			sl->hits++;
		if (share == SHARE_NEVER)
			sl->hits |= NOSHARE_BIT;
		return sl->s;
	}
	const char *shared = share == SHARE_NOW ? intern_hashed(s, len, h) : NULL;
	const char *copy = shared ? shared : copy_str(t, s, len);
	if (!copy) {
		if (ret_oom)
			*ret_oom = 1;
		return NULL;
	}
	if ((t->n + 1) * 2 > t->cap) {
		if (grow_slots(&t->slots, &t->cap) < 0)
			return copy; /* not shared later, still correct */
		sl = find_slot(t->slots, t->cap, s, h);
	}
	sl->hash = h;
	sl->s = copy;
	sl->hits = 1 | (shared ? SHARED_BIT : 0) | (share == SHARE_NEVER ? NOSHARE_BIT : 0);
	t->n++;
	return copy;
}

const char *
rf_strtab_get(struct rf_strtab *t, const char *s, int *ret_oom)
{
	return get(t, s, SHARE_LATER, ret_oom);
}

const char *
rf_strtab_get_shared(struct rf_strtab *t, const char *s, int *ret_oom)
{
	return get(t, s, SHARE_NOW, ret_oom);
}

const char *
rf_strtab_get_unshared(struct rf_strtab *t, const char *s, int *ret_oom)
{
	return get(t, s, SHARE_NEVER, ret_oom);
}

void
rf_strtab_share_repeated(struct rf_strtab *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct slot *sl = &t->slots[i];
		if (!sl->s || (sl->hits & (SHARED_BIT | NOSHARE_BIT)) || (sl->hits & HITS_MAX) < 2)
			continue;
		const char *shared = intern_hashed(sl->s, strlen(sl->s), sl->hash);
		if (shared) {
			sl->s = shared; /* the arena copy stays unused */
			sl->hits |= SHARED_BIT;
		}
	}
}

bool
rf_strtab_lookup(const struct rf_strtab *t, const char *s, const char **ret_shared)
{
	size_t len;
	uint32_t h = hash_str(s, &len);
	const struct slot *sl = find_slot(t->slots, t->cap, s, h);
	*ret_shared = sl->s && (sl->hits & SHARED_BIT) ? sl->s : NULL;
	return sl->s != NULL;
}

size_t
rf_strtab_local_bytes(const struct rf_strtab *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].s && !(t->slots[i].hits & SHARED_BIT))
			n += strlen(t->slots[i].s) + 1;
	return n;
}

size_t
rf_strtab_arena_bytes(const struct rf_strtab *t)
{
	return t->arena_bytes;
}

int
rf_strtab_reserve(struct rf_strtab *t, size_t n)
{
	if (n == 0)
		return 0;
	char *p = rf_arena_alloc_raw(t->arena, n);
	if (!p)
		return -ENOMEM;
	t->arena_bytes += ROUND16(n);
	t->pack = p;
	t->pack_end = p + n;
	return 0;
}
