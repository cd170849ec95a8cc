/* Cluster model: a pool as one node sees it. The allocator gathers pools per node (GatherPools,
 * structured/internal/{stable,incubating}/pools_*.go): of a pool it takes the slices that serve
 * the node, at the newest generation among those, and judges completeness and duplicate device
 * names over them. 1.34 stops there (a pool spread over nodes is incomplete on each). From 1.35
 * a pool the node's slices do not complete is looked at whole: obsolete when a newer generation
 * serves other nodes, else complete when all slices of the generation are. So a node whose own
 * slices of an older generation are complete keeps that generation while a newer one is
 * published for another node (v0.35.6 allocator_testing.go "multi-host-resource-pool-*").
 *
 * The model builds each pool once, at its newest generation (model-devices.c); this gives a node
 * its own copy where what it sees differs. The usual pool (every node sees all its newest slices,
 * or the verdict over the node's slices is the pool's) costs one comparison. Pure logic. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"

/* From 1.35 a slice with sharedCounters is part of every node's view of its pool. */
static bool
slice_relevant(const struct rf_slice *s, const struct rf_node *n, enum rf_dra_version ver)
{
	if (ver != RF_DRA_1_34 && s->n_counter_sets)
		return true;
	return rf_model_slice_serves(s, n);
}

static bool
dup_names(struct rf_slice *const *rel, unsigned n_rel)
{
	for (unsigned a = 0; a < n_rel; a++)
		for (size_t i = 0; i < rel[a]->n_devices; i++)
			for (unsigned b = 0; b <= a; b++)
				for (size_t j = 0; j < (b == a ? i : rel[b]->n_devices); j++)
					if (strcmp(rel[a]->devices[i].name,
						   rel[b]->devices[j].name) == 0)
						return true;
	return false;
}

static bool
same_attr(const struct rf_attr *a, const struct rf_attr *b)
{
	if (strcmp(a->name, b->name) != 0 || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case RF_ATTR_INT:
		return a->i == b->i;
	case RF_ATTR_BOOL:
		return a->b == b->b;
	case RF_ATTR_STRING:
	case RF_ATTR_VERSION:
		return strcmp(a->s, b->s) == 0;
	case RF_ATTR_LIST:
		if (a->list->elem != b->list->elem || a->list->n != b->list->n)
			return false;
		for (size_t k = 0; k < a->list->n; k++) {
			bool eq = a->list->elem == RF_ATTR_INT ? a->list->i[k] == b->list->i[k]
				  : a->list->elem == RF_ATTR_BOOL
					  ? a->list->b[k] == b->list->b[k]
					  : strcmp(a->list->s[k], b->list->s[k]) == 0;
			if (!eq)
				return false;
		}
		return true;
	default:
		return false; /* a kind this build does not know: not compared */
	}
}

/* Does the older slice's device o publish what the newest generation's device cur does (the
 * taints DeviceTaintRules added to cur aside)? Consumable-capacity policies and counters are not
 * compared: such a device counts as different. cur->taints, not rf_device_taints(): only the
 * slice's own taints (those before the rules') are compared, and those a taint patch never
 * changes (model-patch.c keeps a device's struct only when its slice is the same). */
static bool
same_device(const struct rf_device *o, const struct rf_device *cur)
{
	if (o->n_attrs != cur->n_attrs || o->n_caps != cur->n_caps ||
	    o->allow_multiple != cur->allow_multiple ||
	    o->has_binding_conditions != cur->has_binding_conditions || o->n_counters ||
	    cur->n_counters || o->n_taints > cur->n_taints)
		return false;
	for (size_t i = 0; i < o->n_attrs; i++)
		if (!same_attr(&o->attrs[i], &cur->attrs[i]))
			return false;
	for (size_t i = 0; i < o->n_caps; i++) {
		const struct rf_capacity *x = &o->caps[i], *y = &cur->caps[i];
		if (strcmp(x->raw_name, y->raw_name) != 0 ||
		    rf_quantity_cmp(x->value, y->value) != 0 || x->has_policy || y->has_policy)
			return false;
	}
	for (size_t i = 0; i < cur->n_taints; i++) {
		const struct rf_taint *t = &cur->taints[i];
		if (i >= o->n_taints) {
			if (!t->rule)
				return false;
			continue;
		}
		const struct rf_taint *u = &o->taints[i];
		if (t->rule || strcmp(t->key, u->key) != 0 || strcmp(t->effect, u->effect) != 0 ||
		    (!t->value) != (!u->value) || (t->value && strcmp(t->value, u->value) != 0))
			return false;
	}
	return true;
}

/* The flags the node sees differ from the pool's: a copy of the pool with the node's flags, and
 * of the node's devices (a device points to its pool). Devices keep their gidx: they are the
 * same. A pool with counter sets keeps all its devices: what other nodes' allocated devices
 * consume of them counts on this node too. */
static struct rf_pool *
flag_view(struct rf_cluster *c, const struct rf_pool *p, const struct rf_node *n, unsigned n_rel,
	  bool complete, bool invalid)
{
	struct rf_pool *v = rf_arena_alloc(c->arena, sizeof(*v));
	if (!v)
		return NULL;
	*v = *p;
	v->n_seen = n_rel;
	v->complete = complete;
	v->invalid = invalid;
	v->node_view = !p->n_counter_sets;
	size_t nd = v->node_view ? rf_model_devices_on_node(p, n, NULL) : p->n_devices;
	v->devices = rf_arena_calloc(c->arena, nd + 1, sizeof(*v->devices));
	struct rf_device *copies = rf_arena_calloc(c->arena, nd + 1, sizeof(*copies));
	if (!v->devices || !copies)
		return NULL;
	if (v->node_view)
		rf_model_devices_on_node(p, n, v->devices);
	else
		memcpy(v->devices, p->devices, nd * sizeof(*v->devices));
	v->n_devices = nd;
	for (size_t i = 0; i < nd; i++) {
		copies[i] = *v->devices[i];
		copies[i].pool = v;
		copies[i].idx = (unsigned)i;
		v->devices[i] = &copies[i];
	}
	return v;
}

/* The node sees an older generation (rel, its slices of it): the devices of rel that serve the
 * node, each the newest generation's device of that name when it publishes the same (what
 * claims hold is per device name, so the two share their usage); a device of the older
 * generation that differs, or that the newest one lacks, is left out with a warning. */
static struct rf_pool *
older_view(struct rf_cluster *c, const struct rf_pool *p, const struct rf_node *n,
	   struct rf_slice **rel, unsigned n_rel, bool complete, bool invalid)
{
	struct rf_pool *v = rf_arena_alloc(c->arena, sizeof(*v));
	if (!v)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->driver = p->driver;
	v->name = p->name;
	v->idx = p->idx;
	v->first_gidx = p->first_gidx;
	v->generation = rel[0]->generation;
	v->slice_count = rel[0]->count;
	v->n_slices = v->n_seen = n_rel;
	v->slices = rel;
	v->complete = complete;
	v->invalid = invalid;
	v->node_view = true;
	v->node = rel[0]->node;
	size_t ndev = 0, left = 0;
	const char *first_left = NULL;
	for (unsigned s = 0; s < n_rel; s++) {
		ndev += rel[s]->n_devices;
		if (!rel[s]->node || !v->node || strcmp(rel[s]->node, v->node) != 0)
			v->node = NULL;
	}
	v->devices = rf_arena_calloc(c->arena, ndev + 1, sizeof(*v->devices));
	struct rf_device *copies = rf_arena_calloc(c->arena, ndev + 1, sizeof(*copies));
	if (!v->devices || !copies)
		return NULL;
	for (unsigned s = 0; s < n_rel; s++)
		for (size_t i = 0; i < rel[s]->n_devices; i++) {
			if (!rf_model_slice_device_serves(rel[s], i, n))
				continue;
			/* as published: a layout may have lent the older slice its devices */
			struct rf_device pub = rel[s]->devices[i], *o = &pub;
			rf_slice_device_as_published(rel[s], i, o);
			const struct rf_device *cur =
				rf_model_find_device(c, p->driver, p->name, o->name);
			if (!cur || !same_device(o, cur)) {
				if (!left++)
					first_left = o->name;
				continue;
			}
			struct rf_device *d = &copies[v->n_devices];
			*d = *cur;
			d->pool = v;
			d->slice = s;
			d->idx = (unsigned)v->n_devices;
			v->devices[v->n_devices++] = d;
		}
	if (left) {
		c->n_view_warnings++;
		rf_cluster_warn(
			c,
			"pool %s/%s: node %s still sees generation %lld of it (the allocator "
			"keeps a node's own complete generation while generation %lld serves "
			"other nodes); %zu of its devices (%s first) are not the same in "
			"generation %lld, railfit leaves them out there",
			p->driver, p->name, n->name, (long long)v->generation,
			(long long)p->generation, left, first_left, (long long)p->generation);
	}
	return v;
}

int
rf_model_pool_view(struct rf_cluster *c, struct rf_pool *p, const struct rf_node *n,
		   struct rf_pool **ret)
{
	enum rf_dra_version ver = rf_cluster_dra_version(c);
	*ret = p;
	/* the usual pool: a node sees all of its newest slices or none (1.34), or the verdict
	 * over any part of them is the pool's own (from 1.35: complete and valid) */
	if (!p->n_older && (ver == RF_DRA_1_34 ? p->node != NULL : p->complete && !p->invalid))
		return 0;
	/* the newest generation among the slices that serve the node (older: newest first) */
	bool newest = false;
	unsigned n_rel = 0;
	for (unsigned s = 0; s < p->n_slices; s++)
		n_rel += slice_relevant(p->slices[s], n, ver);
	newest = n_rel > 0;
	int64_t gen = p->generation;
	unsigned first = 0;
	for (unsigned s = 0; !newest && s < p->n_older; s++) {
		const struct rf_slice *sl = p->older[s];
		if (n_rel && sl->generation != gen)
			break;
		if (!slice_relevant(sl, n, ver))
			continue;
		if (!n_rel++) {
			gen = sl->generation;
			first = s;
		}
	}
	if (!n_rel) {
		*ret = NULL;
		return 0;
	}
	struct rf_slice *const *all = newest ? p->slices : p->older + first;
	size_t n_all = newest ? p->n_slices : p->n_older - first;
	struct rf_slice **rel = rf_arena_calloc(c->arena, n_rel, sizeof(*rel));
	if (!rel)
		return -ENOMEM;
	for (size_t s = 0, k = 0; s < n_all && k < n_rel; s++)
		if (all[s]->generation == gen && slice_relevant(all[s], n, ver))
			rel[k++] = all[s];
	/* GatherPools: the count of the first slice of the node's generation */
	bool complete = (int64_t)n_rel == rel[0]->count;
	if (!complete && ver != RF_DRA_1_34) {
		if (!newest) { /* obsolete: a newer generation serves other nodes */
			*ret = NULL;
			return 0;
		}
		complete = (int64_t)p->n_slices == rel[0]->count;
	}
	/* all of the newest slices: the pool's own verdict (its duplicate names and, from 1.35,
	 * its counters), without comparing every pair of names again for each node */
	bool invalid = newest && n_rel == p->n_slices ? p->invalid : dup_names(rel, n_rel);
	if (ver != RF_DRA_1_34 && newest && n_rel != p->n_slices)
		invalid = invalid || rf_model_pool_counters_problem(p) != NULL;
	if (newest) {
		if (complete == p->complete && invalid == p->invalid)
			return 0;
		*ret = flag_view(c, p, n, n_rel, complete, invalid);
	} else {
		*ret = older_view(c, p, n, rel, n_rel, complete, invalid);
	}
	return *ret ? 0 : -ENOMEM;
}
