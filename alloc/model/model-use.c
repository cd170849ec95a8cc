/* A generation's usage by device (struct rf_dev_use), in blocks it shares with the generation
 * it was built from until it writes one (copy on write).
 *
 * Usage by difference (model-delta.c) used to copy the previous generation's whole array
 * (3.4 MB at 5,000 nodes, 85,000 devices) for every pod or claim event, to change a few
 * entries; every generation a reader or a compaction still held kept its own copy. Blocks of
 * RF_USE_BLOCK entries with a reference count each: a generation built by difference takes
 * the previous one's blocks (a pointer and a reference each: ~700 of them) and copies only
 * those it writes (rf_model_use_write). A block is written in place only while this generation
 * alone holds it: blocks are taken only from the generation a build follows (c->prev), and a
 * generation is followed only once its own build returned, so a count of 1 read by the builder
 * cannot grow behind its back (a count read as 2 that another thread has just dropped to 1
 * only costs a copy).
 *
 * A block owns the consumed-capacity arrays of its entries (malloc'd: a block outlives the
 * generation that wrote it, whose arena held them before). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/model/model-private.h"

static size_t
blocks_for(size_t n_devices)
{
	return n_devices / RF_USE_BLOCK + 1; /* (at least one: n_devices may be 0) */
}

static struct rf_use_block *
block_new(void)
{
	struct rf_use_block *b = calloc(1, sizeof(*b));
	if (b)
		atomic_init(&b->refs, 1);
	return b;
}

static void
block_unref(struct rf_use_block *b)
{
	if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < RF_USE_BLOCK; i++)
		free(b->u[i].consumed);
	free(b);
}

void
rf_model_use_release(struct rf_cluster *c)
{
	for (size_t i = 0; c->use && i < c->n_use; i++)
		block_unref(c->use[i]);
	free(c->use);
	c->use = NULL;
	c->n_use = 0;
}

/* c's blocks for c->n_devices: prev's shared as far as they go (prev NULL: none), new zero
 * ones after them. -ENOMEM (rf_model_use_release frees what was made). */
static int
take_blocks(struct rf_cluster *c, const struct rf_cluster *prev)
{
	rf_model_use_release(c);
	size_t n = blocks_for(c->n_devices), shared = prev ? prev->n_use : 0;
	c->use = calloc(n, sizeof(*c->use));
	if (!c->use)
		return -ENOMEM;
	c->n_use = n;
	for (size_t i = 0; i < n && i < shared; i++) {
		atomic_fetch_add_explicit(&prev->use[i]->refs, 1, memory_order_relaxed);
		c->use[i] = prev->use[i];
	}
	for (size_t i = shared; i < n; i++)
		if (!(c->use[i] = block_new()))
			return -ENOMEM;
	return 0;
}

int
rf_model_use_fresh(struct rf_cluster *c)
{
	return take_blocks(c, NULL);
}

int
rf_model_use_share(struct rf_cluster *c, const struct rf_cluster *prev)
{
	int r = take_blocks(c, prev);
	if (r < 0)
		return r;
	/* c's devices past prev's last one start unused. Zero in prev's last block as long as
	 * usage never shrinks along a chain of shared blocks (rf_model_delta_begin declines a
	 * generation with fewer devices); cleared here should that ever change */
	size_t end = prev->n_use * RF_USE_BLOCK < c->n_devices ? prev->n_use * RF_USE_BLOCK
							       : c->n_devices;
	const struct rf_dev_use zero = { 0 };
	for (size_t g = prev->n_devices; g < end; g++) {
		if (memcmp(rf_model_use(c, (unsigned)g), &zero, sizeof(zero)) == 0)
			continue;
		struct rf_dev_use *u = rf_model_use_write(c, (unsigned)g);
		if (!u)
			return -ENOMEM;
		rf_model_use_unconsume(u);
		*u = zero;
	}
	return 0;
}

struct rf_dev_use *
rf_model_use_write(struct rf_cluster *c, unsigned g)
{
	struct rf_use_block **slot = &c->use[g / RF_USE_BLOCK];
	struct rf_use_block *b = *slot;
	if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1)
		return &b->u[g % RF_USE_BLOCK];
	struct rf_use_block *copy = malloc(sizeof(*copy));
	if (!copy)
		return NULL;
	atomic_init(&copy->refs, 1);
	memcpy(copy->u, b->u, sizeof(copy->u));
	for (size_t i = 0; i < RF_USE_BLOCK; i++) {
		struct rf_dev_use *u = &copy->u[i];
		if (!u->consumed)
			continue;
		struct rf_quantity *q = malloc(u->n_consumed * sizeof(*q));
		if (!q) {
			for (size_t j = i; j < RF_USE_BLOCK; j++)
				copy->u[j].consumed = NULL; /* not this copy's: the block's */
			block_unref(copy);
			return NULL;
		}
		memcpy(q, u->consumed, u->n_consumed * sizeof(*q));
		u->consumed = q;
	}
	*slot = copy;
	block_unref(b);
	return &copy->u[g % RF_USE_BLOCK];
}

int
rf_model_use_consume(struct rf_dev_use *u, size_t n_caps)
{
	if (u->consumed || !n_caps)
		return 0;
	u->consumed = calloc(n_caps, sizeof(*u->consumed));
	if (!u->consumed)
		return -ENOMEM;
	u->n_consumed = (unsigned)n_caps;
	return 0;
}

void
rf_model_use_unconsume(struct rf_dev_use *u)
{
	free(u->consumed);
	u->consumed = NULL;
	u->n_consumed = 0;
}

size_t
rf_model_use_shared_blocks(const struct rf_cluster *c, const struct rf_cluster *other)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_use && i < other->n_use; i++)
		n += c->use[i] == other->use[i];
	return n;
}
