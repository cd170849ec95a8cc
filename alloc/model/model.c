/* Building one generation of the cluster model from Kubernetes objects, and reading it.
 *
 * Runs on one thread (the cache writer); the result is immutable and shared by reference count.
 * Everything a generation owns comes from one arena, so dropping it is a single free of a few
 * chunks. Objects that cannot be understood become warnings, never failures. The build steps
 * live in model-devices.c, model-nodes.c and model-usage.c. */
#include "alloc/model/model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/memo.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"
#include "config/grow.h"
#include "config/hash.h"

/* demand shapes remembered per generation: a job's pods share one, a few jobs are pending at
 * a time; each costs ~80 bytes per node, plus the failure messages of the nodes that fail */
#define MEMO_SHAPES 8
/* replaced judgements are kept until the table goes (a request may be reading one): a chain of
 * generations starts a new table once it holds this many per node */
#define MEMO_RETIRED_MAX 16

/* What a node's or pool's rev is (model.h): a stamp per layout built, process-wide, so that no
 * two layouts share one whichever generations they were built from. */
static atomic_uint_fast64_t layout_stamps;

uint64_t
rf_model_next_stamp(void)
{
	return (uint64_t)atomic_fetch_add(&layout_stamps, 1) + 1;
}

uint64_t
rf_node_rev(const struct rf_cluster *c, const struct rf_node *n)
{
	uint64_t s = c->node_stamps && n->idx < c->n_node_stamps ? c->node_stamps[n->idx] : 0;
	return s > n->rev ? s : n->rev;
}

void __attribute__((format(printf, 2, 3)))
rf_cluster_warn(struct rf_cluster *c, const char *fmt, ...)
{
	if (c->n_warnings >= MAX_WARNINGS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char *s = rf_arena_strdup(c->arena, buf);
	if (s)
		c->warnings[c->n_warnings++] = s;
}

const char *
rf_dev_kind_name(enum rf_dev_kind k)
{
	switch (k) {
	case RF_DEV_GPU:
		return "gpu";
	case RF_DEV_NIC:
		return "nic";
	case RF_DEV_CPU:
		return "cpu";
	case RF_DEV_OTHER:
		break;
	}
	return "other";
}

/* ---- small sorted-array helpers ---- */

uint64_t
rf_model_pool_key(const char *driver, const char *pool)
{
	return rf_fingerprint(driver, pool, NULL) | 1;
}

uint64_t
rf_model_slice_key(const struct rf_slice *s)
{
	return s->skip ? 0 : rf_model_pool_key(s->driver, s->pool);
}

int
rf_model_cmp_nsname(const char *ans, const char *an, const char *bns, const char *bn)
{
	int r = strcmp(ans ? ans : "", bns ? bns : "");
	return r ? r : strcmp(an, bn);
}

static int
hold_objects(struct rf_cluster *c, const struct rf_cluster_objects *objs)
{
	json_t **dst[] = { &c->objs.nodes,      &c->objs.pods,    &c->objs.slices,
			   &c->objs.claims,     &c->objs.classes, &c->objs.templates,
			   &c->objs.taint_rules };
	json_t *src[] = { objs->nodes,   objs->pods,      objs->slices,     objs->claims,
			  objs->classes, objs->templates, objs->taint_rules };
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		*dst[i] = json_is_array(src[i]) ? json_incref(src[i]) : json_array();
		if (!*dst[i])
			return -ENOMEM;
	}
	return 0;
}

int
rf_model_slice_arrays_new(struct rf_layout *l, size_t n)
{
	struct rf_slice_arrays *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	atomic_init(&a->refs, 1);
	l->slice_arrays = a;
	l->n_slices = 0;
	if (!(a->slices = l->slices = calloc(n + 1, sizeof(*a->slices))) ||
	    !(a->keys = l->slice_keys = calloc(n + 1, sizeof(*a->keys))))
		return -ENOMEM;
	return 0;
}

void
rf_model_slice_arrays_share(struct rf_layout *l, const struct rf_layout *from)
{
	atomic_fetch_add_explicit(&from->slice_arrays->refs, 1, memory_order_relaxed);
	l->slice_arrays = from->slice_arrays;
	l->slices = from->slices;
	l->slice_keys = from->slice_keys;
	l->n_slices = from->n_slices;
}

static void
slice_arrays_unref(struct rf_slice_arrays *a)
{
	if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < a->n; i++)
		rf_slice_unref(a->slices[i]);
	free(a->slices);
	free(a->keys);
	free(a);
}

/* What only the generations using the layout read: once none does, a layout that later layouts
 * were patched from keeps only the pieces they share (its arena). */
static void
layout_drop_arrays(struct rf_layout *l)
{
	slice_arrays_unref(l->slice_arrays);
	l->slice_arrays = NULL;
	l->slices = NULL;
	l->slice_keys = NULL;
	l->n_slices = 0;
	free(l->class_memo);
	l->class_memo = NULL;
	free(l->own_pools);
	free(l->own_devices);
	free(l->own_nodes);
	l->own_pools = l->own_devices = l->own_nodes = NULL;
	free(l->own_pool_order);
	free(l->own_node_order);
	free(l->own_node_index);
	l->own_pool_order = l->own_node_order = l->own_node_index = NULL;
	free(l->own_dev_taints);
	l->own_dev_taints = NULL;
	free(l->own_node_stamps);
	l->own_node_stamps = NULL;
	if (l->own_node_objs) { /* the objects its own nodes point into, no more */
		json_decref(l->nodes);
		l->nodes = l->own_node_objs;
		l->own_node_objs = NULL;
	}
	/* built for the generations using it (model-delta.c): ~24 bytes per pool */
	pthread_mutex_lock(&l->extra_lock);
	rf_model_pool_nodes_free(l->pool_nodes);
	l->pool_nodes = NULL;
	pthread_mutex_unlock(&l->extra_lock);
}

static struct rf_layout *layout_free(struct rf_layout *l);

void
rf_model_layout_release(struct rf_layout *l)
{
	if (l && atomic_fetch_sub(&l->users, 1) == 1)
		layout_drop_arrays(l);
	rf_model_layout_unref(l);
}

void
rf_model_layout_unref(struct rf_layout *l)
{
	/* a loop, not a recursion, down a chain of patches (hundreds of layouts) */
	while (l && atomic_fetch_sub(&l->refs, 1) == 1)
		l = layout_free(l);
}

/* Frees a layout no one holds; returns its base, whose reference it held. */
static struct rf_layout *
layout_free(struct rf_layout *l)
{
	for (size_t i = 0; i < l->n_nodes; i++) /* decoded annotations live outside the arena */
		rf_topo_annotation_free((struct rf_topo_annotation *)l->node_list[i]->topo);
	layout_drop_arrays(l);
	json_decref(l->nodes);
	json_decref(l->classes);
	json_decref(l->templates);
	for (size_t i = 0; i < l->n_extra; i++)
		rf_cel_program_free(l->extra_programs[i]);
	free(l->extra_programs);
	pthread_mutex_destroy(&l->extra_lock);
	rf_model_pool_nodes_free(l->pool_nodes);
	rf_arena_free(l->arena);
	for (size_t i = 0; i < l->n_lent; i++) { /* no pool uses their devices any more */
		atomic_store(&l->lent[i]->lent, false);
		rf_slice_unref(l->lent[i]);
	}
	free(l->lent);
	struct rf_layout *base = l->base;
	free(l);
	return base;
}

/* The layout's ResourceSlices: the caller's parsed ones, or c's objects parsed here. */
static int
hold_slices(struct rf_layout *l, const struct rf_cluster *c, const struct rf_cluster_objects *objs)
{
	size_t n = objs->slice_recs ? objs->n_slice_recs : json_array_size(c->objs.slices);
	if (rf_model_slice_arrays_new(l, n) < 0)
		return -ENOMEM;
	l->from_recs = objs->slice_recs != NULL;
	for (size_t i = 0; i < n; i++) {
		if (objs->slice_recs)
			l->slices[i] = rf_slice_ref(objs->slice_recs[i]);
		else if (rf_slice_parse(json_array_get(c->objs.slices, i), c->cfg, &l->slices[i]) <
			 0)
			return -ENOMEM;
		l->slice_keys[i] = rf_model_slice_key(l->slices[i]);
		l->slice_arrays->n = l->n_slices = i + 1;
	}
	return 0;
}

/* -ECANCELED when the caller asks a full build to stop (rf_cluster_objects.stop). */
static int
stopped(const struct rf_cluster_objects *objs)
{
	return objs->stop && objs->stop(objs->stop_userdata) ? -ECANCELED : 0;
}

/* Nodes, pools, devices, classes and what derives from them alone, into a new layout (its arena
 * is c->arena while this runs). */
static int
build_layout(struct rf_cluster *c, const struct rf_cluster_objects *objs)
{
	struct rf_layout *l = calloc(1, sizeof(*l));
	int r;
	if (!l)
		return -ENOMEM;
	atomic_init(&l->refs, 1);
	atomic_init(&l->users, 1);
	pthread_mutex_init(&l->extra_lock, NULL);
	c->layout = l;
	if (!(l->arena = c->arena = rf_arena_new()))
		return -ENOMEM;
	l->nodes = json_incref(c->objs.nodes);
	l->classes = json_incref(c->objs.classes);
	l->templates = json_incref(c->objs.templates);
	c->warnings = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
	if (!c->warnings)
		return -ENOMEM;
	if ((r = hold_slices(l, c, objs)) < 0 ||
	    (r = rf_model_build_pools(c, l->slices, l->n_slices)) < 0 || (r = stopped(objs)) < 0)
		return r;
	l->rule_warnings[0] = c->n_warnings; /* where a patched layout finds them */
	if ((r = rf_model_apply_taint_rules(c, c->objs.taint_rules)) < 0)
		return r;
	l->rule_warnings[1] = c->n_warnings;
	if ((r = rf_model_build_nodes(c, c->objs.nodes)) < 0 ||
	    (r = rf_model_attach_pools(c)) < 0 || (r = stopped(objs)) < 0)
		return r;
	l->class_warnings[0] = c->n_warnings;
	if ((r = rf_model_build_classes(c, c->objs.classes)) < 0)
		return r;
	l->class_warnings[1] = c->n_warnings;
	if ((r = rf_model_build_templates(c)) < 0)
		return r;
	l->class_memo = c->class_memo;
	l->node_list = c->nodes;
	for (size_t i = 0; i < c->n_nodes; i++) {
		if ((r = rf_model_stopping(c, i + 1)) < 0 ||
		    (r = rf_model_finish_node(c, c->nodes[i])) < 0)
			return r;
		l->n_nodes = i + 1;
	}
	if ((r = stopped(objs)) < 0)
		return r;
	l->n_nodes = c->n_nodes;
	for (size_t i = 0; i < c->n_nodes; i++) {
		c->nodes[i]->idx = (unsigned)i;
		l->n_node_objs += c->nodes[i]->json != NULL;
	}
	c->node_order = c->nodes;
	c->n_node_order = c->n_nodes;
	if ((r = rf_model_index_node_names(c)) < 0 || (r = rf_model_node_frontend(c)) < 0)
		return r;
	uint64_t rev = rf_model_next_stamp(); /* every node and pool is this layout's */
	for (size_t i = 0; i < c->n_nodes; i++)
		c->nodes[i]->rev = rev;
	for (size_t i = 0; i < c->n_pools; i++)
		c->pools[i]->rev = rev;
	l->warnings = c->warnings;
	l->n_warnings = c->n_warnings;
	l->full_bytes = rf_arena_used(l->arena);
	for (size_t i = 0; i < l->n_lent; i++) /* devices it uses from the records */
		l->full_bytes += rf_arena_used(l->lent[i]->arena);
	return 0;
}

/* The layout's arrays, borrowed from the generation it was built for. */
static int
share_layout(struct rf_cluster *c, const struct rf_cluster *prev)
{
	atomic_fetch_add(&prev->layout->refs, 1);
	atomic_fetch_add(&prev->layout->users, 1);
	c->layout = prev->layout;
	c->nodes = prev->nodes;
	c->n_nodes = prev->n_nodes;
	c->node_order = prev->node_order;
	c->n_node_order = prev->n_node_order;
	c->pools = prev->pools;
	c->n_pools = prev->n_pools;
	c->pool_order = prev->pool_order;
	c->n_pool_order = prev->n_pool_order;
	c->devices = prev->devices;
	c->n_devices = prev->n_devices;
	c->classes = prev->classes;
	c->n_classes = prev->n_classes;
	c->templates = prev->templates;
	c->n_templates = prev->n_templates;
	c->node_slots = prev->node_slots;
	c->node_mask = prev->node_mask;
	c->node_names = prev->node_names;
	c->class_memo = prev->class_memo;
	c->dev_taints = prev->dev_taints;
	c->node_stamps = prev->node_stamps;
	c->n_node_stamps = prev->n_node_stamps;
	if (!(c->arena = rf_arena_new()))
		return -ENOMEM;
	c->warnings = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
	if (!c->warnings)
		return -ENOMEM;
	memcpy(c->warnings, c->layout->warnings, c->layout->n_warnings * sizeof(char *));
	c->n_warnings = c->layout->n_warnings;
	return 0;
}

/* A generation sharing its layout sees the Node objects it was given, not the layout's: the
 * server rebuilds no layout when only a Node's status changed (a Ready condition flipping on
 * hundreds of nodes during an outage must not rebuild the whole cluster hundreds of times), so
 * Ready is read from the current objects here. Nothing else of the status is read. */
static int
refresh_ready(struct rf_cluster *c)
{
	const json_t *cur = c->objs.nodes, *was = c->layout->nodes;
	size_t n = json_array_size(cur);
	bool same = n == json_array_size(was);
	for (size_t i = 0; same && i < n; i++)
		same = json_array_get(cur, i) == json_array_get(was, i);
	if (same)
		return 0;
	if (!(c->node_ready = rf_arena_alloc(c->arena, (c->n_nodes + 1) * sizeof(bool))))
		return -ENOMEM;
	for (size_t i = 0; i < c->n_nodes; i++)
		c->node_ready[i] =
			c->nodes[i] && c->nodes[i]->ready; /* else a removed node's hole */
	for (size_t i = 0; i < n; i++) {
		const json_t *nj = json_array_get(cur, i);
		const char *name = json_string_value(rf_jpath(nj, "metadata.name"));
		const struct rf_node *nd = name ? rf_cluster_node(c, name) : NULL;
		if (nd && nd->json)
			c->node_ready[nd->idx] = rf_model_node_ready(nj);
	}
	return 0;
}

/* A patched layout: the nodes and pools it made (its own structs, nobody reads them yet) get its
 * stamp: those it rebuilt or replaced, and the nodes it copied to point at a new object with equal
 * labels and annotations (their status may differ, and a demand for extended resources reads
 * status.allocatable). Those it shares with prev keep their rev. */
static void
stamp_patched(struct rf_cluster *c, const struct rf_cluster *prev)
{
	uint64_t rev = rf_model_next_stamp();
	for (size_t i = 0; i < c->n_nodes; i++) /* NULL: a hole (model-patch.c) */
		if (c->nodes[i] && (i >= prev->n_nodes || c->nodes[i] != prev->nodes[i]))
			c->nodes[i]->rev = rev;
	for (size_t i = 0; i < c->n_pools; i++)
		if (c->pools[i] && (i >= prev->n_pools || c->pools[i] != prev->pools[i]))
			c->pools[i]->rev = rev;
}

/* Whether c's nodes fit prev's table by index: the table holds them all (rf_memo_slots), no
 * index went away, and every node at an index whose struct is not prev's is one the patch made
 * (stamp_patched: a new rev, which no entry written before names). Then an entry, found by the
 * node's index and rev, is only ever one written for that very struct: a node removed leaves a
 * hole whose entries no node looks up again, one added takes an index no entry names with its
 * rev, and a node that returns under the same name is a new struct wherever it goes. */
static bool
nodes_fit(const struct rf_cluster *c, const struct rf_cluster *prev)
{
	if (c->n_nodes < prev->n_nodes || c->n_nodes > rf_memo_slots(prev->memo))
		return false;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct rf_node *n = c->nodes[i],
				     *o = i < prev->n_nodes ? prev->nodes[i] : NULL;
		if (n && (n->idx != i || (o && n != o && n->rev == o->rev)))
			return false;
	}
	return true;
}

/* Whether the previous generation's remembered verdicts hold for c (it shares prev's table of
 * claims and pods: a node's usage fingerprint names claims by address, unique while the table
 * lives). A verdict is keyed by the node's index, its usage fingerprint, its rev, the group's
 * rails elsewhere and its place against the group (alloc/memo.c), and the demand's shape, which
 * names pinned devices with their pool's rev and the DeviceClasses the search reads. With the
 * same layout that is all it reads. A patched layout (patched 1: prev's table, the claims it
 * touched relinked into it) makes new structs of the nodes and pools it touches, with new revs,
 * and shares the rest with their revs, devices and gidx: so an untouched node reads what it read
 * before, and
 *   - nodes added (the next indexes) or removed (holes) keep the table while it has room for
 *     them (nodes_fit);
 *   - a DeviceClass changed, added or removed keeps it too: the shape holds the selectors of
 *     every class the demand's claims name (or that a class is missing), and which class serves
 *     an extended resource, so a verdict for a class before its change is never found for the
 *     class after it (rf_demand_shape; a demand whose classes were not resolved is not
 *     remembered at all).
 * Replaced judgements are kept until the table goes: past MEMO_RETIRED_MAX per node a chain
 * starts a new one (entries a patch made stale count when they are replaced, as any other). */
static bool
memo_carries(const struct rf_cluster *c, const struct rf_cluster *prev, int patched)
{
	if (rf_memo_retired(prev->memo) >= MEMO_RETIRED_MAX * c->n_nodes)
		return false;
	if (!patched)
		return true;
	return patched == 1 && nodes_fit(c, prev);
}

/* Whether c was built from the very objects prev was (the same Node, pod, claim, class, template
 * and rule objects and slice records, in the same order): then every node decides as it did. */
static bool
same_objects(const struct rf_cluster *c, const struct rf_cluster *prev)
{
	const json_t *a[] = { c->objs.nodes,   c->objs.pods,      c->objs.claims,
			      c->objs.classes, c->objs.templates, c->objs.taint_rules },
		     *b[] = { prev->objs.nodes,   prev->objs.pods,      prev->objs.claims,
			      prev->objs.classes, prev->objs.templates, prev->objs.taint_rules };
	for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++) {
		size_t n = json_array_size(a[k]);
		if (n != json_array_size(b[k]))
			return false;
		for (size_t i = 0; i < n; i++)
			if (json_array_get(a[k], i) != json_array_get(b[k], i))
				return false;
	}
	const struct rf_layout *x = c->layout, *y = prev->layout;
	if (!x->slices || !y->slices || x->n_slices != y->n_slices)
		return false;
	for (size_t i = 0; i < x->n_slices; i++)
		if (x->slices[i] != y->slices[i])
			return false;
	return true;
}

/* A layout built in full from the objects prev was built from (the live store's compaction of a
 * worn chain): prev's remembered verdicts hold, keyed again for c's nodes (rf_memo_carry), so
 * that the first filter of each demand shape after it is not cold. Else c keeps its new table.
 * -ENOMEM only (for the map; a table that cannot be carried is not). */
static int
carry_memo(struct rf_cluster *c, const struct rf_cluster *prev)
{
	if (!same_objects(c, prev))
		return 0;
	struct rf_memo_move *map = calloc(prev->n_nodes + 1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < prev->n_nodes; i++) {
		const struct rf_node *o = prev->nodes[i],
				     *n = o ? rf_cluster_node(c, o->name) : NULL;
		if (!n)
			continue;
		map[i] = (struct rf_memo_move){
			.node = n,
			.fp_xor = rf_node_use(prev, o)->fp ^ rf_node_use(c, n)->fp,
			.old_rev = rf_node_rev(prev, o),
			.rev = rf_node_rev(c, n),
		};
	}
	struct rf_memo *m = rf_memo_carry(prev->memo, c->n_nodes, MEMO_SHAPES, map, prev->n_nodes);
	free(map);
	if (!m)
		return 0; /* out of memory: c keeps its new table (a speed-up, not a need) */
	rf_memo_unref(c->memo);
	c->memo = m;
	return 0;
}

bool
rf_cluster_node_ready(const struct rf_cluster *c, const struct rf_node *n)
{
	return c->node_ready ? c->node_ready[n->idx] : n->ready;
}

/* Claims, pods and what they use: the part of a generation that changes with every event.
 * Usage is the previous generation's plus what changed when that is possible (model-delta.c),
 * else a walk of every claim and pod. */
static int
build_usage(struct rf_cluster *c)
{
	int r, delta = 0;
	c->reuse->marker++;
	if ((r = rf_model_delta_begin(c)) < 0 ||
	    (r = rf_model_build_claims(c, c->objs.claims)) < 0 ||
	    (r = rf_model_index_claims_next(c)) < 0 || (r = delta = rf_model_delta_claims(c)) < 0 ||
	    (!delta && (r = rf_model_account_usage(c)) < 0) ||
	    (r = rf_model_build_pods(c, c->objs.pods)) < 0 ||
	    (delta && (r = delta = rf_model_delta_pods(c)) < 0) ||
	    (!delta &&
	     (!(c->node_use = rf_arena_calloc(c->arena, c->n_nodes + 1, sizeof(*c->node_use))) ||
	      (r = rf_model_place_pods(c)) < 0 || (r = rf_model_node_usage(c)) < 0))) {
		r = r < 0 ? r : -ENOMEM;
		goto out;
	}
	c->usage_delta = delta > 0;
	r = 0;
out:
	rf_model_delta_end(c);
	return r;
}

int
rf_cluster_build_next(const struct rf_cluster *prev, const struct rf_cluster_objects *objs,
		      const struct rf_config *cfg, struct rf_cel_cache *cel, bool same_layout,
		      struct rf_cluster **ret)
{
	struct rf_cluster *c = calloc(1, sizeof(*c));
	int r = -ENOMEM, patched = 0;
	if (!c)
		return -ENOMEM;
	atomic_init(&c->refs, 1);
	c->cfg = cfg;
	c->cel = cel;
	c->expand = objs->expand;
	c->expand_userdata = objs->expand_userdata;
	c->walk_usage = objs->walk_usage;
	c->arrays_frozen = objs->arrays_frozen;
	c->lend_devices = !objs->slice_recs || objs->lend_records;
	if (hold_objects(c, objs) < 0)
		goto fail;
	c->counts = (struct rf_cluster_counts){
		.nodes = json_array_size(c->objs.nodes),
		.pods = json_array_size(c->objs.pods),
		.slices = objs->slice_recs ? objs->n_slice_recs : json_array_size(c->objs.slices),
		.claims = json_array_size(c->objs.claims),
		.classes = json_array_size(c->objs.classes),
		.templates = json_array_size(c->objs.templates),
		.taint_rules = json_array_size(c->objs.taint_rules),
	};
	bool reuse = prev && same_layout && prev->cfg == cfg && prev->cel == cel;
	/* a changed Node, slice or class: the previous layout patched where it changed
	 * (model-patch.c), or built afresh */
	if (!reuse && prev && prev->cfg == cfg && prev->cel == cel && !objs->full_layout &&
	    (patched = rf_model_patch_layout(c, prev, objs)) < 0) {
		r = patched;
		goto fail;
	}
	/* a layout built in full may stop between its steps and every RF_STOP_EVERY pools,
	 * nodes, claims and pods (a stop while it relinks leaves what it relinked in its own
	 * table, which goes with it: prev's is only read) */
	if (!reuse && !patched) {
		c->stop = objs->stop;
		c->stop_userdata = objs->stop_userdata;
		c->stop_every = objs->stop_every ? objs->stop_every : RF_STOP_EVERY;
	}
	if ((r = reuse     ? share_layout(c, prev)
		 : patched ? 0
			   : build_layout(c, objs)) < 0 ||
	    (reuse && (r = refresh_ready(c)) < 0) ||
	    (!reuse && !patched && (r = stopped(objs)) < 0))
		goto fail;
	if (patched)
		stamp_patched(c, prev);
	if ((reuse || patched) && !rf_reuse_stale(prev->reuse)) {
		/* parsed claims and pods carry over, and so do remembered verdicts where they
		 * hold (memo_carries) */
		c->reuse = rf_reuse_ref(prev->reuse);
		/* on a patched layout the claims pointing at what changed are relinked */
		if (patched && (r = rf_model_patch_claims(c, prev)) == -EAGAIN) {
			rf_reuse_unref(c->reuse);
			c->reuse = NULL;
			patched = 2; /* relink them all, below */
		} else if (r < 0) {
			goto fail;
		} else if (!(c->memo = memo_carries(c, prev, patched) && !objs->fresh_memo
					       ? rf_memo_ref(prev->memo)
					       : rf_memo_new(c->n_nodes, MEMO_SHAPES))) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if (!c->reuse) {
		r = -ENOMEM;
		if (!(c->reuse = rf_reuse_new()) ||
		    (!c->memo && !(c->memo = rf_memo_new(c->n_nodes, MEMO_SHAPES))))
			goto fail;
		/* a new layout (or a table compacted): what the previous generation parsed is
		 * relinked, not parsed again */
		if (prev && prev->cfg == cfg && prev->cel == cel && !prev->reuse->sealed)
			c->relink_from = prev->reuse;
	}
	if (!reuse) {
		/* the layout's arena served its steps; usage gets the generation's own */
		r = -ENOMEM;
		if (!(c->arena = rf_arena_new()))
			goto fail;
		const char **w = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
		if (!w)
			goto fail;
		memcpy(w, c->warnings, c->n_warnings * sizeof(char *));
		c->warnings = w;
	}
	/* the sorted claim and pod arrays follow prev's while the table is the same */
	c->prev = reuse || patched == 1 ? prev : NULL;
	r = build_usage(c);
	c->stop = NULL;
	c->stop_userdata = NULL;
	c->prev = NULL;
	c->relink_from = NULL;
	rf_model_patch_free(c->patch);
	c->patch = NULL;
	if (r < 0 || (!reuse && !patched && prev && prev->cfg == cfg && prev->cel == cel &&
		      !objs->fresh_memo && (r = carry_memo(c, prev)) < 0))
		goto fail;
	if (patched)
		rf_model_patch_account(c);
	*ret = c;
	return 0;
fail:
	/* the copies it put in prev's table point into its layout, which goes now; so may the
	 * claims and pods it parsed into that table for a patched layout (a pod bound to a node
	 * the patch added, a claim on a pool it replaced): the next build starts a new table */
	if (c->relinked_into || (patched == 1 && c->reuse && c->reuse == prev->reuse))
		prev->reuse->abandoned = true;
	rf_cluster_unref(c);
	return r < 0 ? r : -ENOMEM;
}

int
rf_cluster_build(const struct rf_cluster_objects *objs, const struct rf_config *cfg,
		 struct rf_cel_cache *cel, struct rf_cluster **ret)
{
	int r = rf_cluster_build_next(NULL, objs, cfg, cel, false, ret);
	if (r == 0)
		rf_reuse_seal((*ret)->reuse); /* nothing follows: the objects may go (snapshot) */
	return r;
}

bool
rf_cluster_layout_patched(const struct rf_cluster *c)
{
	return c->layout->patched;
}

unsigned
rf_cluster_layout_chain(const struct rf_cluster *c, size_t *kept)
{
	if (kept)
		*kept = c->layout->chain_kept;
	return c->layout->depth;
}

struct rf_cluster *
rf_cluster_ref(struct rf_cluster *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

struct rf_cluster *
rf_cluster_unref(struct rf_cluster *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return NULL;
	json_decref(c->objs.nodes);
	json_decref(c->objs.pods);
	json_decref(c->objs.slices);
	json_decref(c->objs.claims);
	json_decref(c->objs.classes);
	json_decref(c->objs.templates);
	json_decref(c->objs.taint_rules);
	rf_memo_unref(c->memo);
	rf_reuse_unref(c->reuse);
	rf_model_patch_free(c->patch);
	rf_model_use_release(c);
	if (!c->layout || c->arena != c->layout->arena)
		rf_arena_free(c->arena);
	rf_model_layout_release(c->layout);
	free(c);
	return NULL;
}

int
rf_class_matches(const struct rf_cluster *c, const struct rf_class *cls, const struct rf_device *d,
		 struct rf_cel_error *err, const char **ret_selector)
{
	atomic_uchar *m = &c->class_memo[(size_t)cls->idx * c->n_devices + d->gidx];
	unsigned char v = atomic_load_explicit(m, memory_order_relaxed);
	if (v == 1)
		return 0;
	if (v == 2)
		return 1;
	if (v == 3 && !err)
		return -EINVAL;
	/* evaluate (again, for the message of an error); racing threads store the same value */
	struct rf_cel_device view = rf_device_cel_view(d);
	int r = 1;
	enum rf_dra_version ver = rf_cluster_dra_version(c);
	view.list_attributes = rf_cluster_dra_list_rules(c).cel;
	if (ver == RF_DRA_1_36 && !view.list_attributes && cls->n_selectors) {
		/* 1.36 converts every attribute before evaluating: a list is an error unless
		 * DRAListTypeAttributes is on (D362 cel/compile.go DeviceMatches) */
		for (size_t i = 0; i < d->n_attrs && r == 1; i++) {
			if (d->attrs[i].kind != RF_ATTR_LIST)
				continue;
			r = -1;
			if (ret_selector)
				*ret_selector = cls->selector_texts[0];
			if (err) {
				err->pos = 0;
				snprintf(
					err->msg, sizeof(err->msg),
					"attribute %s: unsupported attribute value (a list: "
					"Kubernetes 1.36 reads it only with the DRAListTypeAttributes "
					"feature gate)",
					d->attrs[i].name);
			}
		}
	}
	for (size_t i = 0; i < cls->n_selectors && r == 1; i++) {
		r = rf_cel_eval(cls->selectors[i], &view, err);
		if (r < 0 && ret_selector)
			*ret_selector = cls->selector_texts[i];
	}
	atomic_store_explicit(m, r < 0 ? 3 : r == 0 ? 1 : 2, memory_order_relaxed);
	return r < 0 ? -EINVAL : r;
}

struct rf_cel_device
rf_device_cel_view(const struct rf_device *d)
{
	return (struct rf_cel_device){
		.driver = d->pool->driver,
		.attrs = d->attrs,
		.n_attrs = d->n_attrs,
		.caps = d->caps,
		.n_caps = d->n_caps,
		.allow_multiple_allocations = d->allow_multiple,
	};
}

struct rf_memo *
rf_cluster_memo(const struct rf_cluster *c)
{
	return c->memo;
}

const struct rf_config *
rf_cluster_config(const struct rf_cluster *c)
{
	return c->cfg;
}

enum rf_dra_version
rf_cluster_dra_version(const struct rf_cluster *c)
{
	/* a snapshot carries no server version: the newest rules railfit knows (DESIGN section 8);
	 * the live store hands its builds the version the server reported */
	enum rf_dra_version v = c->cfg->kube.dra_version;
	return v == RF_DRA_AUTO ? RF_DRA_NEWEST : v;
}

struct rf_dra_list_rules
rf_cluster_dra_list_rules(const struct rf_cluster *c)
{
	return rf_dra_list_rules(rf_cluster_dra_version(c), c->cfg->kube.gates.list_type_attributes,
				 c->cfg->kube.dra_library_list_feature);
}

int
rf_cluster_dra_patch(const struct rf_cluster *c)
{
	return c->cfg->kube.dra_version == RF_DRA_AUTO ? RF_DRA_PATCH_NEWEST
						       : c->cfg->kube.dra_patch;
}

struct rf_cel_cache *
rf_cluster_cel(const struct rf_cluster *c)
{
	return c->cel;
}

size_t
rf_cluster_n_nodes(const struct rf_cluster *c)
{
	return c->n_node_order;
}

const struct rf_node *
rf_cluster_node_at(const struct rf_cluster *c, size_t i)
{
	return i < c->n_node_order ? c->node_order[i] : NULL;
}

const struct rf_node *
rf_cluster_node(const struct rf_cluster *c, const char *name)
{
	return rf_cluster_node_hashed(c, name, rf_cluster_name_hash(name));
}

uint64_t
rf_cluster_name_hash(const char *name)
{
	return rf_hash_bytes(name, strlen(name));
}

/* The slot of the name of hash h (c->node_slots set), or, with name NULL, the first slot of h's
 * high bits (the node such a name most likely is: for prefetching); NULL when none. */
static const struct node_slot *
probe(const struct rf_cluster *c, uint64_t h, const char *name)
{
	for (size_t i = h & c->node_mask;; i = (i + 1) & c->node_mask) {
		const struct node_slot *s = &c->node_slots[i];
		if (!s->idx1)
			return NULL;
		if (s->hash_hi == (uint32_t)(h >> 32) &&
		    (!name || strcmp(c->node_names + s->name_off, name) == 0))
			return s;
	}
}

const struct rf_node *
rf_cluster_node_hashed(const struct rf_cluster *c, const char *name, uint64_t h)
{
	if (!c->node_slots)
		return rf_model_find_node(c, name); /* while building */
	const struct node_slot *s = probe(c, h, name);
	return s ? c->nodes[s->idx1 - 1] : NULL;
}

/* After the index's slots: the number of node indexes, then each one's name offset
 * (NO_NAME for a hole), then the names. */
#define NO_NAME UINT32_MAX

static const uint32_t *
name_offs(const struct rf_cluster *c)
{
	return (const uint32_t *)(c->node_slots + c->node_mask + 1);
}

bool
rf_cluster_index_is_name_order(const struct rf_cluster *c)
{
	return !c->layout->nodes_appended;
}

void
rf_cluster_prefetch_slot(const struct rf_cluster *c, uint64_t h)
{
	if (c->node_slots)
		__builtin_prefetch(&c->node_slots[h & c->node_mask]);
}

size_t
rf_cluster_prefetch_node(const struct rf_cluster *c, uint64_t h)
{
	const struct node_slot *s = c->node_slots ? probe(c, h, NULL) : NULL;
	if (!s)
		return SIZE_MAX;
	const struct rf_node *n = c->nodes[s->idx1 - 1];
	__builtin_prefetch(c->node_names + s->name_off);
	if (n) {
		__builtin_prefetch(n);
		__builtin_prefetch(&n->rev);
	}
	__builtin_prefetch(&c->node_use[s->idx1 - 1].fp);
	return s->idx1 - 1;
}

const struct rf_node *
rf_cluster_node_hint(const struct rf_cluster *c, const char *name, size_t *hint)
{
	return rf_cluster_node_hint_hashed(c, name, 0, hint);
}

const struct rf_node *
rf_cluster_node_hint_hashed(const struct rf_cluster *c, const char *name, uint64_t h, size_t *hint)
{
	size_t i = *hint & ~RF_HINT_COLD;
	if (c->node_slots && !(*hint & RF_HINT_COLD)) {
		/* the guess reads the offsets and names in order, where a hashed lookup misses
		 * the cache twice (its slot, its name) */
		const uint32_t *offs = name_offs(c);
		if (i < offs[0] && offs[1 + i] != NO_NAME &&
		    strcmp(c->node_names + offs[1 + i], name) == 0) {
			*hint = i + 1;
			return c->nodes[i];
		}
	}
	/* a wrong guess costs two misses more: no guess after one until a name is found where
	 * the guess would have been (names in no order, as kube-scheduler sends them) */
	const struct rf_node *n =
		rf_cluster_node_hashed(c, name, h ? h : rf_cluster_name_hash(name));
	if (n)
		*hint = (n->idx + 1) | (n->idx == i ? 0 : RF_HINT_COLD);
	else
		*hint |= RF_HINT_COLD;
	return n;
}

/* Every verb looks up each node it is asked about by name: a hash table, not a binary search
 * of thousands of names. At most half full. */
int
rf_model_index_node_names(struct rf_cluster *c)
{
	size_t cap = 16, text = 0;
	while (cap < 2 * c->n_nodes)
		cap *= 2;
	for (size_t n = 0; n < c->n_nodes; n++)
		text += c->nodes[n] ? strlen(c->nodes[n]->name) + 1 : 0; /* else a hole */
	if (text >= NO_NAME)
		return -ENOMEM;
	/* the layout's own, not its arena's: a patched layout whose generations are all gone
	 * frees it (its arena stays while later patches share its pools and nodes) */
	size_t size =
		cap * sizeof(struct node_slot) + (1 + c->n_nodes) * sizeof(uint32_t) + text + 1;
	struct node_slot *slots = calloc(1, size);
	if (!slots)
		return -ENOMEM;
	free(c->layout->own_node_index);
	c->layout->own_node_index = slots;
	c->layout->node_index_size = size;
	uint32_t *offs = (uint32_t *)(slots + cap);
	offs[0] = (uint32_t)c->n_nodes;
	char *names = (char *)(offs + 1 + c->n_nodes);
	size_t off = 0;
	for (size_t n = 0; n < c->n_nodes; n++) {
		offs[1 + n] = NO_NAME;
		if (!c->nodes[n])
			continue;
		uint64_t h = rf_cluster_name_hash(c->nodes[n]->name);
		size_t i = h & (cap - 1);
		while (slots[i].idx1)
			i = (i + 1) & (cap - 1);
		slots[i] =
			(struct node_slot){ (uint32_t)n + 1, (uint32_t)(h >> 32), (uint32_t)off };
		offs[1 + n] = (uint32_t)off;
		size_t len = strlen(c->nodes[n]->name) + 1;
		memcpy(names + off, c->nodes[n]->name, len);
		off += len;
	}
	c->node_mask = cap - 1;
	c->node_slots = slots;
	c->node_names = names;
	return 0;
}

int
rf_model_copy_node_index(struct rf_cluster *c, const struct rf_cluster *prev)
{
	size_t size = prev->layout->node_index_size;
	struct node_slot *slots = malloc(size);
	if (!slots)
		return -ENOMEM;
	memcpy(slots, prev->node_slots, size);
	free(c->layout->own_node_index);
	c->layout->own_node_index = slots;
	c->layout->node_index_size = size;
	c->node_slots = slots;
	c->node_mask = prev->node_mask;
	c->node_names = (char *)slots + (prev->node_names - (const char *)prev->node_slots);
	return 0;
}

/* Lookups in the generation's sorted arrays. */
struct nsname_key {
	const char *ns, *name;
};

static int
claim_key_cmp(const void *k, const void *e)
{
	const struct nsname_key *key = k;
	const struct rf_claim *cl = *(struct rf_claim *const *)e;
	return rf_model_cmp_nsname(key->ns, key->name, cl->ns, cl->name);
}

static int
pod_key_cmp(const void *k, const void *e)
{
	const struct nsname_key *key = k;
	const struct rf_pod *p = *(struct rf_pod *const *)e;
	return rf_model_cmp_nsname(key->ns, key->name, p->ns, p->name);
}

static int
class_key_cmp(const void *k, const void *e)
{
	return strcmp(k, (*(struct rf_class *const *)e)->name);
}

static int
uid_key_cmp(const void *k, const void *e)
{
	return strcmp(k, (*(struct rf_pod *const *)e)->uid);
}

static const void *
lookup(const void *key, void *const *arr, size_t n, int (*cmp)(const void *, const void *))
{
	void *const *hit = n ? bsearch(key, arr, n, sizeof(*arr), cmp) : NULL;
	return hit ? *hit : NULL;
}

uint64_t
rf_claim_key_hash(const char *ns, const char *name)
{
	return rf_fingerprint(ns ? ns : "", name, NULL);
}

uint64_t
rf_group_hash(const char *group)
{
	return rf_fingerprint(group, NULL, NULL);
}

const struct rf_claim *
rf_cluster_claim_hashed(const struct rf_cluster *c, const char *ns, const char *name, uint64_t hash)
{
	if (!c->claim_slots) { /* while building */
		struct nsname_key k = { ns, name };
		return lookup(&k, (void *const *)c->claims, c->n_claims, claim_key_cmp);
	}
	for (size_t i = hash & c->claim_mask;; i = (i + 1) & c->claim_mask) {
		const struct claim_slot *s = &c->claim_slots[i];
		if (!s->claim)
			return NULL;
		if (s->hash == hash && strcmp(s->claim->name, name) == 0 &&
		    strcmp(s->claim->ns, ns ? ns : "") == 0)
			return s->claim;
	}
}

const struct rf_claim *
rf_cluster_claim(const struct rf_cluster *c, const char *ns, const char *name)
{
	return rf_cluster_claim_hashed(c, ns, name, rf_claim_key_hash(ns, name));
}

/* Claims by name: each pod looks up its claims while usage is accounted, and every verb looks
 * up the asking pod's. The first of equal names wins, as the binary search found it. */
int
rf_model_index_claims(struct rf_cluster *c)
{
	size_t cap = 16;
	while (cap < 2 * c->n_claims)
		cap *= 2;
	struct claim_slot *slots = rf_arena_calloc(c->arena, cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t n = 0; n < c->n_claims; n++) {
		const struct rf_claim *cl = c->claims[n];
		size_t i = cl->key_hash & (cap - 1);
		bool dup = false;
		for (; slots[i].claim; i = (i + 1) & (cap - 1))
			dup |= slots[i].hash == cl->key_hash &&
			       rf_model_cmp_nsname(slots[i].claim->ns, slots[i].claim->name, cl->ns,
						   cl->name) == 0;
		if (!dup)
			slots[i] = (struct claim_slot){ cl->key_hash, cl };
		c->claim_dups |= dup;
	}
	c->claim_mask = cap - 1;
	c->claim_slots = slots;
	return 0;
}

size_t
rf_cluster_n_classes(const struct rf_cluster *c)
{
	return c->n_classes;
}

const struct rf_class *
rf_cluster_class_at(const struct rf_cluster *c, size_t i)
{
	return i < c->n_classes ? c->classes[i] : NULL;
}

const struct rf_class *
rf_cluster_class(const struct rf_cluster *c, const char *name)
{
	return lookup(name, (void *const *)c->classes, c->n_classes, class_key_cmp);
}

const struct rf_pod *
rf_cluster_pod(const struct rf_cluster *c, const char *ns, const char *name)
{
	struct nsname_key k = { ns, name };
	return lookup(&k, (void *const *)c->pods, c->n_pods, pod_key_cmp);
}

const struct rf_pod *
rf_cluster_pod_by_uid(const struct rf_cluster *c, const char *uid)
{
	return lookup(uid, (void *const *)c->pods_by_uid, c->n_pods_by_uid, uid_key_cmp);
}

size_t
rf_cluster_n_pods(const struct rf_cluster *c)
{
	return c->n_pods;
}

const struct rf_pod *
rf_cluster_pod_at(const struct rf_cluster *c, size_t i)
{
	return i < c->n_pods ? c->pods[i] : NULL;
}

const json_t *
rf_cluster_template(const struct rf_cluster *c, const char *ns, const char *name)
{
	for (size_t i = 0; i < c->n_templates; i++) {
		const json_t *t = c->templates[i];
		const char *tn = json_string_value(rf_jpath(t, "metadata.name"));
		const char *tns = json_string_value(rf_jpath(t, "metadata.namespace"));
		if (rf_model_cmp_nsname(ns, name, tns, tn) == 0)
			return t;
	}
	return NULL;
}

struct group_key {
	uint64_t hash;
	const char *group;
};

static int
group_key_cmp(const void *key, const void *elem)
{
	const struct group_key *k = key;
	const struct group_index *g = elem;
	if (k->hash != g->hash)
		return k->hash < g->hash ? -1 : 1;
	return strcmp(k->group, g->group);
}

const struct rf_group *
rf_cluster_group(const struct rf_cluster *c, const char *group)
{
	struct group_key k = { rf_group_hash(group), group };
	return bsearch(&k, c->groups, c->n_groups, sizeof(*c->groups), group_key_cmp);
}

uint64_t
rf_group_rails_elsewhere(const struct rf_cluster *c, const struct rf_group *grp,
			 const struct rf_node *n)
{
	const struct group_index *g = (const struct group_index *)grp;
	if (!g)
		return 0;
	/* a rail used on two nodes is used on one other than n; a rail used on one node counts
	 * unless that node is n. The group's entries are sorted by node index: no name compared */
	const struct group_rails *range = &c->group_rails[g->first];
	uint64_t mine = 0;
	size_t lo = 0, hi = g->n;
	while (n && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (range[mid].node_idx < n->idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; n && lo < g->n && range[lo].node_idx == n->idx; lo++)
		mine |= range[lo].rails;
	return g->multi | (g->any & ~mine);
}

static int
node_name_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct rf_node *const *)a)->name,
		      (*(const struct rf_node *const *)b)->name);
}

static void
add_place(const char **arr, size_t *n, const char *v, bool *overflow)
{
	if (!v)
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(arr[i], v) == 0)
			return;
	if (*n == RF_MAX_PLACES) {
		*overflow = true;
		return;
	}
	arr[(*n)++] = v;
}

void
rf_cluster_group_places(const struct rf_cluster *c, const char *group, struct rf_group_places *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!group || !group[0])
		return;
	/* the group's entries are adjacent: a binary search for the first, then one per pod */
	uint64_t h = rf_group_hash(group);
	size_t lo = 0, hi = c->n_group_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct group_node *g = &c->group_nodes[mid];
		if (g->hash < h || (g->hash == h && strcmp(g->group, group) < 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < c->n_group_nodes && c->group_nodes[end].hash == h &&
	       strcmp(c->group_nodes[end].group, group) == 0)
		end++;
	ret->members = end - lo;
	/* the entries are in node index order: name order, but for nodes a patch added */
	const struct rf_node **by_name = NULL;
	if (c->layout->nodes_appended && end > lo &&
	    (by_name = malloc((end - lo) * sizeof(*by_name)))) {
		for (size_t i = lo; i < end; i++)
			by_name[i - lo] = c->nodes[c->group_nodes[i].node_idx];
		qsort(by_name, end - lo, sizeof(*by_name), node_name_cmp);
	}
	const struct rf_node *last = NULL;
	for (size_t i = lo; i < end; i++) {
		const struct rf_node *n =
			by_name ? by_name[i - lo] : c->nodes[c->group_nodes[i].node_idx];
		if (n == last)
			continue;
		last = n;
		add_place(ret->blocks, &ret->n_blocks, n->block, &ret->overflow);
		add_place(ret->spines, &ret->n_spines, n->spine, &ret->overflow);
	}
	free(by_name);
}

uint64_t
rf_cluster_group_rails(const struct rf_cluster *c, const char *group, const char *node)
{
	return rf_group_rails_elsewhere(c, rf_cluster_group(c, group), rf_cluster_node(c, node));
}

size_t
rf_cluster_n_warnings(const struct rf_cluster *c)
{
	return c->n_warnings;
}

const char *
rf_cluster_warning(const struct rf_cluster *c, size_t i)
{
	return i < c->n_warnings ? c->warnings[i] : NULL;
}

struct rf_cluster_counts
rf_cluster_counts(const struct rf_cluster *c)
{
	return c->counts;
}

const struct rf_cluster_objects *
rf_cluster_objects(const struct rf_cluster *c)
{
	return &c->objs;
}

const char *
rf_pod_claim_name(const json_t *pod, const json_t *entry)
{
	const char *direct = rf_jstr(entry, "resourceClaimName");
	if (direct)
		return direct;
	const char *name = rf_jstr(entry, "name");
	const json_t *st = rf_jpath(pod, "status.resourceClaimStatuses");
	for (size_t i = 0; name && i < json_array_size(st); i++) {
		const json_t *s = json_array_get(st, i);
		const char *sn = rf_jstr(s, "name");
		if (sn && strcmp(sn, name) == 0)
			return rf_jstr(s, "resourceClaimName");
	}
	return NULL;
}

int
rf_cluster_selector(const struct rf_cluster *c, const char *expr, const struct rf_cel_program **ret,
		    struct rf_cel_error *err)
{
	int r = rf_cel_cache_get(c->cel, expr, ret, err);
	if (r != -ENOSPC)
		return r;
	struct rf_cel_program *p;
	if ((r = rf_cel_compile(expr, &p, err)) < 0)
		return r;
	struct rf_layout *mc = c->layout; /* the extra list is the one mutable part */
	pthread_mutex_lock(&mc->extra_lock);
	if (rf_grow(&mc->extra_programs, &mc->cap_extra, mc->n_extra + 1,
		    sizeof(*mc->extra_programs)) < 0) {
		pthread_mutex_unlock(&mc->extra_lock);
		rf_cel_program_free(p);
		return -ENOMEM;
	}
	mc->extra_programs[mc->n_extra++] = p;
	pthread_mutex_unlock(&mc->extra_lock);
	*ret = p;
	return 0;
}

bool
rf_pod_claim_not_needed(const json_t *pod, const json_t *entry)
{
	const char *name = rf_jstr(entry, "name");
	const json_t *st = rf_jpath(pod, "status.resourceClaimStatuses");
	if (rf_jstr(entry, "resourceClaimName"))
		return false;
	for (size_t i = 0; name && i < json_array_size(st); i++) {
		const json_t *s = json_array_get(st, i);
		const char *sn = rf_jstr(s, "name");
		if (sn && strcmp(sn, name) == 0)
			return !rf_jstr(s, "resourceClaimName");
	}
	return false;
}
