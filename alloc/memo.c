/* Verdicts remembered per demand shape (see memo.h). */
#include "alloc/memo.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/rail_target.h"
#include "config/hash.h"

#define SHAPE_MAX (16 * 1024) /* a demand whose canonical text is longer is not memoized */

/* A remembered judgement: immutable once published. Replaced (never changed) when the node's
 * usage changes; the one it replaces is kept until the shape goes, since a request may still be
 * reading its message. */
struct record {
	struct rf_judgement j; /* owned: msg of a selector error (filter_msg: the shape's) */
	uint64_t node_fp;      /* the node's usage fingerprint (struct rf_node_use) */
	uint64_t node_rev;     /* the layout that built the node (struct rf_node) */
	uint64_t group_rails;
	uint64_t ident; /* the identity (pod's claims) the message names, 0 when none */
	struct record *retired_next;
	struct rf_memo_pick picks[];
};

#define IDENTS_MAX 256 /* identities (pods) per shape whose failure messages are kept */

/* The failure messages of a shape's records, each text once: the nodes that fail, fail alike
 * (at 5,000 nodes ~1,700 failing records hold ~200 distinct messages), so they take a fraction
 * of the memory, and filter writes them from a few hot lines instead of one cold copy per node.
 * Open addressing, at most half full; grows. */
struct msg_set {
	char **v;
	size_t mask, n;
};

/* A shape's records, packed in the order they were made rather than scattered over the heap:
 * a warm request reads every node's record in node order, and reading them from contiguous
 * memory lets the hardware prefetch them (one cache and TLB miss per record otherwise, the
 * largest cost of a warm request at 5,000 nodes). Records live as long as the shape anyway
 * (replaced ones are retired, not freed), so blocks are only freed with it. */
struct arena {
	struct arena *next;
	size_t used, cap;
	_Alignas(16) char data[];
};

#define ARENA_MIN (4 * 1024)
#define ARENA_MAX (256 * 1024)

struct rf_memo_shape {
	atomic_int refs;
	char *shape;
	pthread_mutex_t lock; /* idents, retired, msgs, arena */
	struct msg_set msgs;
	struct arena *arena; /* the newest block first */
	struct ident {
		char *text;
		uint64_t id;
	} idents[IDENTS_MAX];
	size_t n_idents, next_ident;
	uint64_t ident_clock;
	struct record *retired;
	struct rf_memo *memo;
	unsigned long used; /* LRU stamp, under the table lock */
	size_t n;
	_Atomic(struct record *) entries[];
};

struct rf_memo {
	atomic_int refs;
	pthread_mutex_t lock;
	size_t slots, cap; /* node indexes per shape, shapes */
	unsigned long clock;
	atomic_size_t retired; /* records replaced, over all shapes */
	struct rf_memo_shape **shapes;
};

struct rf_memo *
rf_memo_new(size_t n_nodes, size_t shapes)
{
	struct rf_memo *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->shapes = calloc(shapes ? shapes : 1, sizeof(*m->shapes));
	if (!m->shapes) {
		free(m);
		return NULL;
	}
	atomic_init(&m->refs, 1);
	pthread_mutex_init(&m->lock, NULL);
	/* room for nodes that join while the table is carried (they take the next indexes) */
	m->slots = n_nodes + n_nodes / 8 + 64;
	m->cap = shapes ? shapes : 1;
	return m;
}

size_t
rf_memo_slots(const struct rf_memo *m)
{
	return m->slots;
}

struct rf_memo *
rf_memo_ref(struct rf_memo *m)
{
	if (m)
		atomic_fetch_add(&m->refs, 1);
	return m;
}

/* What a record owns (its memory is the shape's arena's). */
static void
record_release(struct record *r)
{
	if (r)
		free((char *)r->j.msg);
}

/* size bytes for a record from the shape's arena, under its lock. NULL on OOM. */
static struct record *
record_alloc(struct rf_memo_shape *s, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	struct arena *a = s->arena;
	if (!a || a->cap - a->used < size) {
		size_t cap = a ? 2 * a->cap : ARENA_MIN;
		if (cap > ARENA_MAX)
			cap = ARENA_MAX;
		if (cap < size)
			cap = size;
		struct arena *b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		*b = (struct arena){ .next = a, .cap = cap };
		s->arena = a = b;
	}
	struct record *r = (struct record *)(a->data + a->used);
	a->used += size;
	return r;
}

void
rf_memo_shape_put(struct rf_memo_shape *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (size_t i = 0; i < s->n; i++)
		record_release(atomic_load(&s->entries[i]));
	for (struct record *r = s->retired, *next; r; r = next) {
		next = r->retired_next;
		record_release(r);
	}
	for (size_t i = 0; i < s->n_idents; i++)
		free(s->idents[i].text);
	for (size_t i = 0; s->msgs.v && i <= s->msgs.mask; i++)
		free(s->msgs.v[i]);
	free(s->msgs.v);
	for (struct arena *a = s->arena, *next; a; a = next) {
		next = a->next;
		free(a);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->shape);
	free(s);
}

uint64_t
rf_memo_ident(struct rf_memo_shape *s, const char *ident)
{
	uint64_t ret = 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_idents && !ret; i++)
		if (strcmp(s->idents[i].text, ident) == 0)
			ret = s->idents[i].id;
	if (!ret) {
		/* the oldest identity makes room: records naming it stop matching (ids are never
		 * reused) */
		char *text = strdup(ident);
		if (text) {
			size_t i = s->n_idents;
			if (i < IDENTS_MAX) {
				s->n_idents++;
			} else {
				i = s->next_ident;
				s->next_ident = (i + 1) % IDENTS_MAX;
				free(s->idents[i].text);
			}
			s->idents[i] = (struct ident){ text, ++s->ident_clock };
			ret = s->idents[i].id;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void
rf_memo_unref(struct rf_memo *m)
{
	if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	for (size_t i = 0; i < m->cap; i++)
		rf_memo_shape_put(m->shapes[i]);
	free(m->shapes);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

size_t
rf_memo_retired(const struct rf_memo *m)
{
	return atomic_load_explicit(&((struct rf_memo *)m)->retired, memory_order_relaxed);
}

struct rf_memo_shape *
rf_memo_shape_get(struct rf_memo *m, const char *shape)
{
	struct rf_memo_shape *s = NULL;
	size_t victim = 0;
	pthread_mutex_lock(&m->lock);
	m->clock++;
	for (size_t i = 0; i < m->cap; i++) {
		struct rf_memo_shape *x = m->shapes[i];
		if (x && strcmp(x->shape, shape) == 0) {
			s = x;
			break;
		}
		if (!x || (m->shapes[victim] && x->used < m->shapes[victim]->used))
			victim = i;
	}
	if (!s) {
		s = calloc(1, sizeof(*s) + m->slots * sizeof(s->entries[0]));
		if (s && !(s->shape = strdup(shape))) {
			free(s);
			s = NULL;
		}
		if (s) {
			pthread_mutex_init(&s->lock, NULL);
			s->n = m->slots;
			s->memo = m;
			atomic_init(&s->refs, 1); /* the table's */
			rf_memo_shape_put(m->shapes[victim]);
			m->shapes[victim] = s;
		}
	}
	if (s) {
		s->used = m->clock;
		atomic_fetch_add(&s->refs, 1);
	}
	pthread_mutex_unlock(&m->lock);
	return s;
}

bool
rf_memo_lookup(struct rf_memo_shape *s, size_t idx, uint64_t node_fp, uint64_t node_rev,
	       uint64_t group_rails, uint64_t ident, bool need_msg, struct rf_judgement *ret)
{
	if (!s || idx >= s->n)
		return false;
	const struct record *e = atomic_load_explicit(&s->entries[idx], memory_order_acquire);
	if (!e || e->node_fp != node_fp || e->node_rev != node_rev || e->group_rails != group_rails)
		return false;
	if (need_msg && (e->j.msg || e->j.filter_msg) && (!ident || e->ident != ident))
		return false;
	*ret = e->j;
	if (!need_msg)
		ret->msg = ret->filter_msg = NULL;
	return true;
}

/* The set's copy of text[0..n) (NUL-terminated), added when new. NULL on OOM. Under the shape's
 * lock. */
static const char *
msg_intern(struct msg_set *set, const char *text, size_t n)
{
	if (2 * (set->n + 1) > (set->v ? set->mask + 1 : 0)) {
		size_t cap = set->v ? 2 * (set->mask + 1) : 64;
		char **v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; set->v && i <= set->mask; i++) {
			if (!set->v[i])
				continue;
			size_t k = rf_hash_bytes(set->v[i], strlen(set->v[i])) & (cap - 1);
			while (v[k])
				k = (k + 1) & (cap - 1);
			v[k] = set->v[i];
		}
		free(set->v);
		set->v = v;
		set->mask = cap - 1;
	}
	size_t k = rf_hash_bytes(text, n) & set->mask;
	for (; set->v[k]; k = (k + 1) & set->mask)
		if (strcmp(set->v[k], text) == 0)
			return set->v[k];
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, text, n + 1);
	set->v[k] = copy;
	set->n++;
	return copy;
}

/* rf_filter_message() into buf[0..cap); its length, or cap when it does not fit. */
static size_t
filter_message_into(const char *reason, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "railfit: %s", reason);
	if (n < 0 || (size_t)n >= cap)
		return cap;
	for (char *p = buf; *p; p++)
		if (*p == '%')
			*p = ' ';
	return (size_t)n;
}

char *
rf_filter_message(const char *reason)
{
	size_t len = strlen(reason) + sizeof("railfit: ");
	char *m = malloc(len);
	if (!m)
		return NULL;
	snprintf(m, len, "railfit: %s", reason);
	for (char *p = m; *p; p++)
		if (*p == '%')
			*p = ' ';
	return m;
}

void
rf_judgement_from_eval(const struct rf_demand *d, const struct rf_node_eval *e,
		       struct rf_memo_pick *picks, struct rf_judgement *ret)
{
	*ret = (struct rf_judgement){
		.verdict = e->verdict,
		.score = e->score,
		.cel_error = e->cel_error,
		.scheduler_crash = e->scheduler_crash,
		.has_predicted = e->has_predicted,
		.level_applies = e->alignment_applies,
		.level = e->predicted_level,
		.msg = e->verdict != RF_VERDICT_PASS || e->cel_error ? e->reasons[0] : NULL,
		.picks = picks,
	};
	if (!e->has_predicted)
		return;
	for (size_t i = 0; i < e->predicted.n; i++) {
		const struct rf_pick *pk = &e->predicted.picks[i];
		int idx = rf_demand_claim_index(d, pk->claim);
		if (idx < 0)
			continue; /* a pinned claim's device: not a prediction */
		unsigned ci = (unsigned)idx;
		picks[ret->n_picks++] = (struct rf_memo_pick){
			.claim = ci,
			.pinned = pk->pinned,
			.dev = pk->dev,
			.fp = rf_fingerprint(pk->dev->pool->driver, pk->dev->pool->name,
					     pk->dev->name),
		};
	}
}

void
rf_memo_store(struct rf_memo_shape *s, size_t idx, uint64_t node_fp, uint64_t node_rev,
	      uint64_t group_rails, uint64_t ident, const struct rf_demand *d,
	      const struct rf_node_eval *e, uint64_t name_fp)
{
	if (!s || idx >= s->n)
		return;
	if (!ident && (e->verdict != RF_VERDICT_PASS || e->cel_error))
		return; /* a message for claims the shape keeps no identity for */
	struct record *old = atomic_load_explicit(&s->entries[idx], memory_order_acquire);
	if (old && old->node_fp == node_fp && old->node_rev == node_rev &&
	    old->group_rails == group_rails &&
	    (old->ident == ident || (!old->j.msg && !old->j.filter_msg)))
		return; /* someone else remembered it */
	struct rf_memo_pick tmp[RF_MAX_PICKS];
	struct rf_judgement j;
	rf_judgement_from_eval(d, e, tmp, &j);
	pthread_mutex_lock(&s->lock);
	struct record *r = record_alloc(s, sizeof(*r) + j.n_picks * sizeof(r->picks[0]));
	pthread_mutex_unlock(&s->lock);
	if (!r)
		return;
	memcpy(r->picks, tmp, j.n_picks * sizeof(r->picks[0]));
	r->j = j;
	r->j.picks = r->picks;
	r->j.name_fp = name_fp; /* the rev it is found by is the node's: so is the name */
	r->j.msg = r->j.filter_msg = NULL;
	r->node_fp = node_fp;
	r->node_rev = node_rev;
	r->group_rails = group_rails;
	r->ident = ident;
	r->retired_next = NULL;
	/* one copy of the message: as filter sends a failure (one per text in the shape), as the
	 * log shows a selector error */
	if (j.verdict != RF_VERDICT_PASS) {
		char buf[RF_REASON_LEN + 64], *big = NULL;
		const char *text = buf;
		size_t n = filter_message_into(j.msg, buf, sizeof(buf));
		if (n == sizeof(buf)) { /* longer than a reason is */
			if (!(big = rf_filter_message(j.msg)))
				goto forget;
			text = big;
			n = strlen(big);
		}
		pthread_mutex_lock(&s->lock);
		r->j.filter_msg = msg_intern(&s->msgs, text, n);
		pthread_mutex_unlock(&s->lock);
		free(big);
		if (!r->j.filter_msg)
			goto forget;
	} else if (j.msg && !(r->j.msg = strdup(j.msg))) {
		goto forget;
	}
	if (!atomic_compare_exchange_strong(&s->entries[idx], &old, r))
		goto forget; /* another thread replaced it meanwhile: theirs is as good */
	if (old) {
		pthread_mutex_lock(&s->lock);
		old->retired_next = s->retired;
		s->retired = old;
		pthread_mutex_unlock(&s->lock);
		atomic_fetch_add_explicit(&s->memo->retired, 1, memory_order_relaxed);
	}
	return;
forget: /* out of memory, or lost a race (its room in the arena stays unused) */
	record_release(r);
}

/* e's copy in shape s for the node mv says, its picks' devices those of dev_fps (mv->node's
 * devices' fingerprints); false when one is not there, or on OOM. */
static bool
carry_record(struct rf_memo_shape *s, const struct record *e, const struct rf_memo_move *mv,
	     const uint64_t *dev_fps)
{
	struct rf_memo_pick picks[RF_MAX_PICKS];
	size_t n = e->j.n_picks < RF_MAX_PICKS ? e->j.n_picks : RF_MAX_PICKS;
	if (e->node_rev != mv->old_rev)
		return false; /* judged before a patch rebuilt the node or retainted its devices */
	for (size_t i = 0; i < n; i++) {
		picks[i] = e->picks[i];
		picks[i].dev = NULL;
		for (size_t k = 0; k < mv->node->n_devices && !picks[i].dev; k++)
			if (dev_fps[k] == e->picks[i].fp)
				picks[i].dev = mv->node->devices[k];
		if (!picks[i].dev)
			return false;
	}
	pthread_mutex_lock(&s->lock);
	struct record *r = record_alloc(s, sizeof(*r) + n * sizeof(r->picks[0]));
	const char *fmsg = r && e->j.filter_msg
				   ? msg_intern(&s->msgs, e->j.filter_msg, strlen(e->j.filter_msg))
				   : NULL;
	pthread_mutex_unlock(&s->lock);
	if (!r || (e->j.filter_msg && !fmsg))
		return false;
	*r = *e;
	memcpy(r->picks, picks, n * sizeof(r->picks[0]));
	r->j.picks = r->picks;
	r->j.n_picks = n;
	r->j.filter_msg = fmsg;
	r->j.msg = NULL;
	r->node_fp = e->node_fp ^ mv->fp_xor;
	r->node_rev = mv->rev;
	r->retired_next = NULL;
	if (e->j.msg && !(r->j.msg = strdup(e->j.msg)))
		return false;
	atomic_store_explicit(&s->entries[mv->node->idx], r, memory_order_release);
	return true;
}

struct rf_memo *
rf_memo_carry(struct rf_memo *from, size_t n_nodes, size_t shapes, const struct rf_memo_move *map,
	      size_t n_map)
{
	struct rf_memo *to = rf_memo_new(n_nodes, shapes);
	struct rf_memo_shape *src[64], *dst[64];
	size_t n_src = 0;
	uint64_t *dev_fps = NULL;
	size_t cap_fps = 0;
	if (!to)
		return NULL;
	/* the shapes, with their identities (records name them by number) */
	pthread_mutex_lock(&from->lock);
	for (size_t i = 0; i < from->cap && n_src < 64; i++)
		if (from->shapes[i]) {
			atomic_fetch_add(&from->shapes[i]->refs, 1);
			src[n_src++] = from->shapes[i];
		}
	pthread_mutex_unlock(&from->lock);
	size_t n_dst = 0;
	for (; n_dst < n_src; n_dst++) {
		struct rf_memo_shape *s = src[n_dst], *t = rf_memo_shape_get(to, s->shape);
		if (!t)
			goto oom;
		dst[n_dst] = t;
		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < s->n_idents; i++) {
			if (!(t->idents[i].text = strdup(s->idents[i].text))) {
				pthread_mutex_unlock(&s->lock);
				t->n_idents = i;
				n_dst++;
				goto oom;
			}
			t->idents[i].id = s->idents[i].id;
		}
		t->n_idents = s->n_idents;
		t->next_ident = s->next_ident;
		t->ident_clock = s->ident_clock;
		pthread_mutex_unlock(&s->lock);
	}
	/* node by node: its devices' fingerprints once, then its record in every shape */
	for (size_t i = 0; i < n_map; i++) {
		const struct rf_memo_move *mv = &map[i];
		if (!mv->node || mv->node->idx >= to->slots)
			continue;
		if (mv->node->n_devices > cap_fps) {
			uint64_t *v = realloc(dev_fps, mv->node->n_devices * sizeof(*v));
			if (!v)
				goto oom;
			dev_fps = v;
			cap_fps = mv->node->n_devices;
		}
		for (size_t k = 0; k < mv->node->n_devices; k++) {
			const struct rf_device *d = mv->node->devices[k];
			dev_fps[k] = rf_fingerprint(d->pool->driver, d->pool->name, d->name);
		}
		for (size_t k = 0; k < n_src; k++) {
			const struct record *e =
				i < src[k]->n ? atomic_load_explicit(&src[k]->entries[i],
								     memory_order_acquire)
					      : NULL;
			if (e)
				carry_record(dst[k], e, mv, dev_fps);
		}
	}
	free(dev_fps);
	for (size_t k = 0; k < n_src; k++) {
		/* identities a request added to `from` while this ran may name records carried:
		 * the new table's next ones come after them (a record naming one no identity
		 * text maps to never matches) */
		pthread_mutex_lock(&src[k]->lock);
		uint64_t clock = src[k]->ident_clock;
		pthread_mutex_unlock(&src[k]->lock);
		pthread_mutex_lock(&dst[k]->lock);
		if (clock > dst[k]->ident_clock)
			dst[k]->ident_clock = clock;
		pthread_mutex_unlock(&dst[k]->lock);
		rf_memo_shape_put(src[k]);
		rf_memo_shape_put(dst[k]);
	}
	return to;
oom:
	free(dev_fps);
	for (size_t k = 0; k < n_src; k++)
		rf_memo_shape_put(src[k]);
	for (size_t k = 0; k < n_dst; k++)
		rf_memo_shape_put(dst[k]);
	rf_memo_unref(to);
	return NULL;
}

/* FNV-1a over the parts joined by '/', then a splitmix64 finaliser so that sums mix well. */
uint64_t
rf_fingerprint(const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < 3 && parts[i]; i++) {
		if (i)
			h = (h ^ '/') * 0x100000001b3ULL;
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
			h = (h ^ *p) * 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* ---- the canonical text of a demand ---- */

struct text {
	char *buf;
	size_t len, cap;
	bool overflow;
};

static void __attribute__((format(printf, 2, 3))) put(struct text *t, const char *fmt, ...)
{
	if (t->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->cap - t->len) {
		t->overflow = true;
		return;
	}
	t->len += (size_t)n;
}

/* Strings are written with their length, so that no separator inside one can fake another. */
static void
put_str(struct text *t, const char *s)
{
	if (!s)
		put(t, "-|");
	else
		put(t, "%zu:%s|", strlen(s), s);
}

static void
put_q(struct text *t, bool has, struct rf_quantity q)
{
	char b[RF_QUANTITY_FMT_MAX];
	put(t, "%s|", has ? rf_quantity_format(q, b) : "-");
}

/* A DeviceClass as the search reads it (all of struct rf_class it reads: the name is the
 * request's, the selectors are compiled from these texts): a class changed, added or removed is
 * another shape, so verdicts remembered for the old class are never found for the new one and
 * the table carries across DeviceClass changes (alloc/model/model.c memo_carries). Which class
 * serves an extended resource (spec.extendedResourceName) shows in the extended-resource
 * claim's class names and in ext_names. */
static void
put_class(struct text *t, const struct rf_class *cls)
{
	if (!cls) {
		put(t, "-|");
		return;
	}
	put(t, "S%zu|", cls->n_selectors);
	for (size_t i = 0; i < cls->n_selectors; i++)
		put_str(t, cls->selector_texts[i]);
	put_str(t, cls->unsupported);
}

/* classes: those of the claim's alternatives (rf_demand_classes), NULL for a pinned claim (the
 * search picks nothing for it) */
static void
put_claim_spec(struct text *t, const struct rf_claim *cl, const struct rf_class *const *classes,
	       bool pinned)
{
	size_t j = 0; /* the alternative's index in the claim */
	put(t, "C%zu,%zu|", cl->n_requests, cl->n_constraints);
	put_str(t, cl->unsupported);
	for (size_t r = 0; r < cl->n_requests; r++) {
		const struct rf_request *rq = &cl->requests[r];
		put(t, "R%d,%zu|", rq->first_available, rq->n_alts);
		put_str(t, rq->name);
		for (size_t a = 0; a < rq->n_alts; a++) {
			const struct rf_request_alt *alt = &rq->alts[a];
			put(t, "A%d,%lld,%d,%zu,%zu,%zu|", alt->all, (long long)alt->count,
			    alt->admin_access, alt->n_selectors, alt->n_tolerations,
			    alt->n_cap_requests);
			put_str(t, alt->name);
			put_str(t, alt->class_name);
			if (!pinned) {
				if (classes)
					put_class(t, classes[j]);
				else /* not resolved (see rf_demand_shape) */
					t->overflow = true;
			}
			j++;
			for (size_t i = 0; i < alt->n_selectors; i++)
				put_str(t, alt->selector_texts[i]);
			for (size_t i = 0; i < alt->n_tolerations; i++) {
				put_str(t, alt->tolerations[i].key);
				put_str(t, alt->tolerations[i].op);
				put_str(t, alt->tolerations[i].value);
				put_str(t, alt->tolerations[i].effect);
			}
			for (size_t i = 0; i < alt->n_cap_requests; i++) {
				put_str(t, alt->cap_request_names[i]);
				put_q(t, true, alt->cap_request_values[i]);
			}
		}
	}
	for (size_t k = 0; k < cl->n_constraints; k++) {
		const struct rf_constraint *co = &cl->constraints[k];
		put(t, "K%zu|", co->n_requests);
		for (size_t i = 0; i < co->n_requests; i++)
			put_str(t, co->requests[i]);
		put_str(t, co->match_attribute);
		put_str(t, co->distinct_attribute);
	}
}

/* An allocated claim fixes devices and a node: its allocation is part of the shape, each device
 * with its pool's rev (a patched layout may rebuild it under the same names and gidx while the
 * verdicts on other nodes, which read it, are kept: see rf_pool.rev). */
static void
put_pinned(struct text *t, const struct rf_claim *cl)
{
	put(t, "P%zu|", cl->n_results);
	put_str(t, cl->alloc_node);
	for (size_t r = 0; r < cl->n_results; r++) {
		const struct rf_alloc_result *ar = &cl->results[r];
		put(t, "%d|", ar->admin_access);
		put_str(t, ar->request);
		put_str(t, ar->driver);
		put_str(t, ar->pool);
		put_str(t, ar->device);
		put(t, "%u,%" PRIu64 "|", ar->dev ? ar->dev->gidx + 1 : 0,
		    ar->dev ? ar->dev->pool->rev : 0);
	}
}

int
rf_demand_shape(const struct rf_demand *d, char **ret_shape, char **ret_ident)
{
	struct text shape = { .buf = malloc(SHAPE_MAX), .cap = SHAPE_MAX };
	struct text ident = { .buf = malloc(SHAPE_MAX), .cap = SHAPE_MAX };
	int r = -ENOMEM;
	if (!shape.buf || !ident.buf)
		goto fail;
	put(&shape, "v1|%d|%d|", (int)d->kind, (int)d->min_alignment);
	/* only when asked, so that the shapes of other pods stay what they were */
	if (d->has_min_gpu_alignment || d->max_spread != RF_SPREAD_ANY)
		put(&shape, "g%d,%d,%d|", d->has_min_gpu_alignment, (int)d->min_gpu_alignment,
		    (int)d->max_spread);
	put_q(&shape, d->has_nic_bw, d->nic_bw);
	put_q(&shape, d->has_egress, d->egress);
	put_q(&shape, d->has_ingress, d->ingress);
	put(&shape, "%zu,%zu|", d->n_claims, d->n_pinned);
	for (size_t i = 0; i < d->n_claims; i++)
		put_claim_spec(&shape, d->claims[i], rf_demand_classes(d, d->claims[i]), false);
	for (size_t i = 0; i < d->n_pinned; i++) {
		put_claim_spec(&shape, d->pinned[i], NULL, true);
		put_pinned(&shape, d->pinned[i]);
	}
	/* which extended resources the last claim serves decides its variant on a node; each
	 * variant's classes are the last claim's (a subset of its requests) */
	put(&shape, "E%zu|", d->n_ext);
	for (size_t i = 0; i < d->n_ext; i++)
		put_str(&shape, d->ext_names[i]);
	for (size_t m = 1; d->n_ext && m < ((size_t)1 << d->n_ext); m++)
		if (!rf_demand_classes(d, d->ext_variants[m]))
			shape.overflow = true;
	/* messages also name the pod's claims, and report a malformed annotation */
	for (size_t i = 0; i < d->n_claims; i++) {
		put_str(&ident, d->claims[i]->ns);
		put_str(&ident, d->claims[i]->name);
	}
	for (size_t i = 0; i < d->n_pinned; i++) {
		put_str(&ident, d->pinned[i]->ns);
		put_str(&ident, d->pinned[i]->name);
	}
	put_str(&ident, d->bad_annotation);
	/* a max-spread message names the group and where it runs */
	if (d->max_spread != RF_SPREAD_ANY) {
		put_str(&ident, d->group);
		for (size_t i = 0; i < d->places.n_blocks; i++)
			put_str(&ident, d->places.blocks[i]);
		put(&ident, "|");
		for (size_t i = 0; i < d->places.n_spines; i++)
			put_str(&ident, d->places.spines[i]);
	}
	r = -E2BIG;
	if (shape.overflow || ident.overflow)
		goto fail;
	*ret_shape = shape.buf;
	*ret_ident = ident.buf;
	return 0;
fail:
	free(shape.buf);
	free(ident.buf);
	return r;
}

/* ---- judging nodes ---- */

int
rf_judge_begin(const struct rf_cluster *c, const struct rf_demand *d, struct rf_judge_ctx *ret)
{
	*ret = (struct rf_judge_ctx){ .cluster = c, .demand = d };
	if (d->kind != RF_DEMAND_KNOWN)
		return 0; /* nothing per node worth remembering */
	ret->group = d->rail_group;
	int r = rf_demand_shape(d, &ret->shape_text, &ret->ident_text);
	if (r == -E2BIG)
		return 0;
	if (r < 0)
		return r;
	ret->shape = rf_memo_shape_get(rf_cluster_memo(c), ret->shape_text);
	if (!ret->shape) {
		rf_judge_end(ret);
		return -ENOMEM;
	}
	ret->ident = rf_memo_ident(ret->shape, ret->ident_text);
	return 0;
}

void
rf_judge_end(struct rf_judge_ctx *ctx)
{
	rf_memo_shape_put(ctx->shape);
	free(ctx->shape_text);
	free(ctx->ident_text);
	ctx->shape = NULL;
	ctx->shape_text = ctx->ident_text = NULL;
	ctx->ident = 0;
}

int
rf_judge_node(struct rf_judge_ctx *ctx, const char *node_name, bool need_msg,
	      struct rf_judge_scratch *scratch, struct rf_judgement *ret)
{
	return rf_judge_node_hint(ctx, node_name, 0, NULL, need_msg, scratch, ret);
}

/* The node's index when a generation's indexes follow the names' order (nodes a patch added
 * come after the others, out of it). */
static uint32_t
name_rank(const struct rf_cluster *c, const struct rf_node *n)
{
	return rf_cluster_index_is_name_order(c) && n->idx < UINT32_MAX ? (uint32_t)n->idx
									: UINT32_MAX;
}

void
rf_judge_prefetch(const struct rf_judge_ctx *ctx, uint64_t name_hash)
{
	size_t idx = rf_cluster_prefetch_node(ctx->cluster, name_hash);
	if (ctx->shape && idx < ctx->shape->n)
		__builtin_prefetch(&ctx->shape->entries[idx]);
}

int
rf_judge_node_hint(struct rf_judge_ctx *ctx, const char *node_name, uint64_t name_hash,
		   size_t *hint, bool need_msg, struct rf_judge_scratch *scratch,
		   struct rf_judgement *ret)
{
	const struct rf_demand *d = ctx->demand;
	const struct rf_node *n = NULL;
	if (ctx->shape)
		n = hint ? rf_cluster_node_hint_hashed(ctx->cluster, node_name, name_hash, hint)
			 : rf_cluster_node(ctx->cluster, node_name);
	uint64_t rails = 0, fp = 0;
	if (n) {
		rails = rf_rail_target_for(&d->rail_target, ctx->cluster, n);
		fp = rf_node_use(ctx->cluster, n)->fp;
		/* the node's network place against the pod's group decides the locality part and
		 * max-spread: part of the key, as the group's rails are */
		enum rf_place place = rf_demand_place(d, n);
		if (place != RF_PLACE_NONE)
			fp ^= (uint64_t)place * 0x9e3779b97f4a7c15ULL;
		/* a group's first pod scores its rails (the rail part's block fit), a pod of no
		 * group does not: not the same judgement for the same shape */
		if (d->group[0] && !rails)
			fp ^= 0xd1b54a32d192ed03ULL;
		if (rf_memo_lookup(ctx->shape, n->idx, fp, rf_node_rev(ctx->cluster, n), rails,
				   ctx->ident, need_msg, ret)) {
			ret->name_rank = name_rank(ctx->cluster, n);
			return 0;
		}
	}
	int r = rf_evaluate_node_work(ctx->cluster, d, node_name, false, &scratch->work,
				      &scratch->eval);
	if (r < 0)
		return r;
	/* what the prediction bookkeeping keys a node on: remembered with the verdict, so that a
	 * warm request hashes no name */
	uint64_t name_fp = rf_fingerprint(node_name, NULL, NULL);
	if (n)
		rf_memo_store(ctx->shape, n->idx, fp, rf_node_rev(ctx->cluster, n), rails,
			      ctx->ident, d, &scratch->eval, name_fp);
	rf_judgement_from_eval(d, &scratch->eval, scratch->picks, ret);
	ret->name_fp = name_fp;
	ret->name_rank = n ? name_rank(ctx->cluster, n) : UINT32_MAX;
	return 0;
}
