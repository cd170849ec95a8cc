/* Public face of the CEL evaluator (alloc/cel.h): compile, evaluate, free, and the program cache.
 *
 * The lexer/parser live in cel-parse.c, the evaluator in cel-eval.c, RE2-on-POSIX regexes in
 * cel-regex.c and value helpers in cel-value.c. Programs are immutable after compilation.
 * The cache is a chained hash table behind one mutex; compilation runs outside the lock (a lost
 * race frees its own copy and returns the winner's). Entries live until rf_cel_cache_free(). */
#include "alloc/cel/cel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel-private.h"

int
rf_cel_compile(const char *expr, struct rf_cel_program **ret, struct rf_cel_error *err)
{
	struct rf_cel_error tmp;
	if (!err)
		err = &tmp;
	err->pos = 0;
	err->msg[0] = '\0';
	if (!expr || !ret) {
		snprintf(err->msg, sizeof(err->msg), "no expression");
		return -EINVAL;
	}
	struct rf_cel_program *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	rf_arena_init(&p->arena, 0);
	int rc = cel_parse(expr, p, err);
	if (rc != 0) {
		rf_cel_program_free(p);
		return rc;
	}
	*ret = p;
	return 0;
}

void
rf_cel_program_free(struct rf_cel_program *p)
{
	if (!p)
		return;
	for (struct cel_regex_list *r = p->regexes; r; r = r->next)
		cel_regex_free(&r->rx);
	rf_arena_release(&p->arena);
	free(p);
}

int
rf_cel_eval(const struct rf_cel_program *p, const struct rf_cel_device *d, struct rf_cel_error *err)
{
	if (!p || !d || !p->root) {
		if (err) {
			err->pos = 0;
			snprintf(err->msg, sizeof(err->msg), "no program or device");
		}
		return -EINVAL;
	}
	return cel_eval_program(p, d, err);
}

/* ---- cache ---------------------------------------------------------------------------------- */

#define CACHE_BUCKETS 1024

struct cache_entry {
	struct cache_entry *next;
	uint64_t hash;
	int rc;
	struct rf_cel_program *prog;
	struct rf_cel_error err;
	char expr[];
};

struct rf_cel_cache {
	pthread_mutex_t lock;
	size_t n;
	size_t bytes;
	struct cache_entry *buckets[CACHE_BUCKETS];
};

/* Memory a program holds: its arena plus an estimate of glibc's compiled regexes. */
static size_t
program_bytes(const struct rf_cel_program *p)
{
	if (!p)
		return 0;
	size_t n = sizeof(*p) + p->arena.total;
	for (const struct cel_regex_list *r = p->regexes; r; r = r->next)
		n += 256 * r->rx.weight;
	return n;
}

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

struct rf_cel_cache *
rf_cel_cache_new(void)
{
	struct rf_cel_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void
rf_cel_cache_free(struct rf_cel_cache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < CACHE_BUCKETS; b++) {
		struct cache_entry *e = c->buckets[b];
		while (e) {
			struct cache_entry *next = e->next;
			rf_cel_program_free(e->prog);
			free(e);
			e = next;
		}
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct cache_entry *
lookup(struct rf_cel_cache *c, const char *expr, uint64_t h)
{
	for (struct cache_entry *e = c->buckets[h % CACHE_BUCKETS]; e; e = e->next)
		if (e->hash == h && strcmp(e->expr, expr) == 0)
			return e;
	return NULL;
}

static int
cache_full(struct rf_cel_error *err)
{
	if (err) {
		err->pos = 0;
		snprintf(err->msg, sizeof(err->msg),
			 "CEL program cache full (%d expressions or %d MiB); compile it uncached",
			 RF_CEL_CACHE_MAX, RF_CEL_CACHE_MAX_BYTES >> 20);
	}
	return -ENOSPC;
}

static int
entry_result(const struct cache_entry *e, const struct rf_cel_program **ret,
	     struct rf_cel_error *err)
{
	if (e->rc == 0) {
		*ret = e->prog;
		return 0;
	}
	if (err)
		*err = e->err;
	return e->rc;
}

int
rf_cel_cache_get(struct rf_cel_cache *c, const char *expr, const struct rf_cel_program **ret,
		 struct rf_cel_error *err)
{
	if (!c || !expr || !ret) {
		if (err) {
			err->pos = 0;
			snprintf(err->msg, sizeof(err->msg), "no cache or expression");
		}
		return -EINVAL;
	}
	size_t len = strlen(expr);
	if (len > CEL_MAX_EXPR_LEN) {
		/* not worth keeping: fails the same way every time */
		struct rf_cel_program *p = NULL;
		int rc = rf_cel_compile(expr, &p, err);
		rf_cel_program_free(p);
		return rc == 0 ? -E2BIG : rc;
	}
	uint64_t h = hash_str(expr);
	pthread_mutex_lock(&c->lock);
	struct cache_entry *e = lookup(c, expr, h);
	if (e) {
		int rc = entry_result(e, ret, err);
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	bool full = c->n >= RF_CEL_CACHE_MAX || c->bytes >= RF_CEL_CACHE_MAX_BYTES;
	pthread_mutex_unlock(&c->lock);
	if (full)
		return cache_full(err);

	struct cache_entry *ne = malloc(sizeof(*ne) + len + 1);
	if (!ne) {
		if (err) {
			err->pos = 0;
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		}
		return -ENOMEM;
	}
	memcpy(ne->expr, expr, len + 1);
	ne->hash = h;
	ne->prog = NULL;
	ne->rc = rf_cel_compile(expr, &ne->prog, &ne->err);
	if (ne->rc == -ENOMEM) {
		if (err)
			*err = ne->err;
		free(ne);
		return -ENOMEM;
	}

	pthread_mutex_lock(&c->lock);
	e = lookup(c, expr, h);
	if (e) {
		/* another thread compiled it meanwhile */
		int rc = entry_result(e, ret, err);
		pthread_mutex_unlock(&c->lock);
		rf_cel_program_free(ne->prog);
		free(ne);
		return rc;
	}
	size_t cost = sizeof(*ne) + len + 1 + program_bytes(ne->prog);
	if (c->n >= RF_CEL_CACHE_MAX || c->bytes + cost > RF_CEL_CACHE_MAX_BYTES) {
		pthread_mutex_unlock(&c->lock);
		rf_cel_program_free(ne->prog);
		free(ne);
		return cache_full(err);
	}
	ne->next = c->buckets[h % CACHE_BUCKETS];
	c->buckets[h % CACHE_BUCKETS] = ne;
	c->n++;
	c->bytes += cost;
	int rc = entry_result(ne, ret, err);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

size_t
rf_cel_cache_count(struct rf_cel_cache *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	size_t n = c->n;
	pthread_mutex_unlock(&c->lock);
	return n;
}
