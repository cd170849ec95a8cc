/* A layout patched from the previous one (issue 9: a watch event updates only what it touches).
 *
 * A ResourceSlice, a Node's labels or annotations, a DeviceClass or a DeviceTaintRule changed:
 * instead of building every pool, device and node again (~150 ms at 5,000 nodes) and relinking
 * every claim and pod (~0.2 s), the new layout takes the previous one's pools, devices, nodes
 * and classes and replaces only
 *   - the pools whose slices changed, and the nodes they serve (pools added and removed
 *     included: a driver publishing on a node that has its Node object, a node's slices gone);
 *   - the nodes whose labels or annotations changed, and their pools (a node's derived facts,
 *     NUMA inherited from NICs and rails, are written into its devices);
 *   - the classes that changed (their selector results are evaluated again, the others' kept);
 *   - the taints of the devices a DeviceTaintRule added or removed may select (diff_rules):
 *     their pools and devices are kept, the layout holds every device's taints by gidx
 *     (rf_cluster.dev_taints: read rf_device_taints()) and the nodes that see them get a new
 *     stamp (rf_cluster.node_stamps, rf_node_rev(): remembered verdicts are judged again);
 *   - the pools served by allNodes, a nodeSelector, several nodes or per-device node selection
 *     (shared pools) whose slices changed, added and removed too: the nodes they served and
 *     serve get copies with their pool lists composed again (relisted: compose_pools), their
 *     own pools and derived facts kept. That holds when no node's facts read the shared pool's
 *     devices (shared_inert: no GPU, NIC or CPU, no PCIe root, no older generation): then a
 *     node's NUMA inheritance, rails, GPU and NIC counts and topology match are the same with
 *     or without them, and a node's rebuild never writes into them. A shared pool of GPUs,
 *     NICs or CPUs, or of devices on a PCIe root, has its devices' facts written by every node
 *     it serves: any change that touches it or a node it serves is built in full.
 *     A node rebuilt, added, gaining or losing its object or labels takes the views of the
 *     shared pools that serve it now (rf_model_pool_view, as rf_model_attach_pools).
 * Claims keep being reused but for those whose results name a replaced, removed or added pool:
 * those are relinked (model-relink.c), and the generation's usage is the previous one's with
 * them taken back and added again (model-delta.c). A class change relinks no claim: claims name
 * their classes, and the demand looks them up in the generation that judges it
 * (alloc/demand.c). Pods point at nodes by index, and node indexes stay (added nodes come after
 * them, removed ones leave holes).
 *
 * Ownership: the patched layout holds its base (the layout it was patched from), whose arena owns
 * the shared pools, devices, nodes and classes; a chain of patches is bounded (PATCH_DEPTH_MAX,
 * what its layouts keep for replaced pieces: chain_kept_max, and the holes below), after which a
 * full build starts a new chain. A layout's arrays of every pool, device and node, its selector
 * results, its slice references, its table of the nodes that see each pool and its array of
 * every Node object (but the objects its own nodes point into) go as soon as no generation uses
 * it (struct rf_layout users), so a layout in the middle of a chain costs only the pieces it
 * built: ~7 KB of arena and ~15 KB resident a Node label or slice event at 5,000 nodes
 * (build_bench's chain: 3.4 MB kept at 512 events, RSS +5.8 MB from 128 to 512). A persistent
 * structure with per-piece reference counts would free replaced pieces sooner, but every piece (a
 * pool's devices, a node's arrays) would need its own allocation and count; a bounded chain of
 * arenas keeps the one-arena-per-layout model.
 *
 * Stable indexes: unchanged pools keep their devices' gidx (claims cache it, usage arrays are
 * indexed by it); a replaced pool with as many devices takes its old range, else a new range at
 * the end, and the old one becomes a hole (c->devices NULL there). Pools do the same: an added
 * pool (a driver publishing on a node, a node's slices coming back) takes the next index and a
 * gidx range at the end, a removed one (all its slices gone) leaves a hole in c->pools and in
 * c->devices; c->pool_order is the pools by name without holes, for lookups by name and for
 * what lists pools in order (a node's pools, the warnings), so a patched layout reads like a
 * full build although its indexes are not the full build's. Holes beyond a quarter of the
 * devices or of the pool indexes start a new chain with a full build.
 *   The other design, a monotonic remap (every index past an inserted one shifted by one),
 * keeps the arrays in name order but changes the index of every pool after the insertion
 * point, and devices (which claims hold) and node pool lists point at pools: every one of
 * them would need a new copy, which is the full build's cost again. With stable indexes
 * nothing that is shared needs to change: pool_fp[] and the pools' node lists (model-delta.c)
 * are indexed by pool idx and merely grow.
 *   Nodes the same way: a node of a new name (its Node object, its drivers' slices, or both in
 * one build) takes the next index, a node that nothing names any more (no object, no slice)
 * leaves a hole (c->nodes NULL there); c->node_order is the nodes by name without holes (what
 * rf_cluster_node_at() lists, the warnings' order; lookups by name use the hash, rebuilt), and
 * the one reader of a group's nodes in order (rf_cluster_group_places: the blocks in node
 * order) sorts them by name when the layout has added nodes. Arrays by node index
 * (node_use[], the memo) grow by the added ones; loops over them skip holes. A node leaves in
 * the real world's order: its Node object is deleted first (it stays, at its index, as a node
 * only its slices name: rebuilt without labels and annotations, with its pools), its slices
 * are garbage-collected after it (the last one gone, it becomes a hole), its pods last; a node
 * coming back gets its object again at its index, or a new index once it was a hole.
 *   Pods point at their node by index (rf_pod.node_idx1) and are shared by the generations of
 * a reuse table: the pods of the previous generation bound to a node added or removed are
 * relinked like the claims (copies with the index found again by name, rf_model_patch_claims),
 * and a pod whose object comes back after its node moved is relinked when it is reused
 * (model-usage.c). The other choice, a hole read as "no node" wherever node_idx1 is read,
 * would spread over every reader (usage, its deltas, groups) and still leave a node coming
 * back to a new index wrong for the pods bound to its old one; relinking keeps node_idx1 the
 * full build's everywhere, and model-delta.c takes a relinked pod back where it was and adds it
 * where it is, as any changed pod.
 *
 * Equality is the bar: a patched layout must read exactly like a full build from the same
 * objects (test/unit/alloc/test_patch.c checks random sequences of changes), warnings in the
 * full build's order included (they are composed again from the pools, nodes and classes).
 * What is built in full instead: a shared pool that is not shared_inert() changed, or serving
 * (before or after) a node that is rebuilt, added, relisted or removed, or present at all when
 * a node is added or gains or loses its object; DeviceTaintRules reordered, a previous layout at
 * the warnings' bound, holes past a quarter of the devices, pools or nodes, and layouts whose
 * slices were not the caller's parsed records; and a new reuse table (every claim and pod relinked)
 * when more than an eighth of the claims or pods are touched. A relisted node is a new struct (a
 * new rev: the memo judges it again, alloc/memo.c), and the claims holding a replaced shared pool's
 * devices are relinked like any replaced pool's. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"
#include "alloc/model/strtab.h"
#include "config/grow.h"

/* layouts in a chain: each one no generation uses keeps only its arena (the pieces it built)
 * and the objects they point into (~7 KB of arena, and a label change's Node object, at 5,000
 * nodes); at 512 of them a full build, which holds the chain while it runs. A caller that can
 * wait for a quiet moment builds in full long before (rf_cluster_layout_worn: 64 patches) */
#define PATCH_DEPTH_MAX  512
#define PATCH_DEPTH_WORN 64
#define CHAIN_KEPT_MIN   ((size_t)4 << 20)
/* Node objects a chain keeps (each a few KB, not counted in chain_kept): at most as many as
 * there are nodes, or this many */
#define CHAIN_OBJS_MIN  256
#define PATCH_POOLS_MAX 256 /* more replaced pools than this: a full build is as cheap */
/* node copies for shared pools' changes along a chain, per node (~400 bytes each: 2 MB per
 * change of an allNodes pool at 5,000 nodes) */
#define RELIST_MAX 16

/* A map from the previous generation's claims to their relinked copies (open addressing). */
struct relink_map {
	struct relinked {
		const void *old;
		void *now;
		bool walked; /* rf_model_patch_walk met it */
	} * v;
	size_t mask, n;
	size_t n_pods; /* of n: pods (the rest claims) */
};

struct rf_patch {
	struct rf_pool **old_pools, **new_pools; /* replaced, and what replaces each */
	size_t n_pools, cap_pools;
	struct rf_pool **added, **removed; /* pools new in the layout, pools gone from it */
	size_t n_added, cap_added, n_removed, cap_removed;
	unsigned *nodes; /* indexes of the nodes rebuilt */
	size_t n_nodes, cap_nodes;
	/* indexes of the nodes only a shared pool's change reached: copies with a new pool list */
	unsigned *relisted;
	size_t n_relisted;
	size_t first_new_node, n_new_nodes; /* nodes added, at indexes after the previous ones */
	size_t n_gone_nodes;                /* nodes removed (holes) */
	/* the names of the nodes added or removed: the pods bound to them point at them by index
	 * (rf_pod.node_idx1), so those pods are relinked (rf_model_patch_claims) */
	const char **moved;
	size_t n_moved, cap_moved;
	/* DeviceTaintRules changed: their warnings as a full build emits them (patch_devices) */
	bool rules_changed;
	const char **rule_warns;
	size_t n_rule_warns;
	struct relink_map *relinked; /* the claims relinked (rf_model_patch_claims) */
};

void
rf_model_patch_free(struct rf_patch *p)
{
	if (!p)
		return;
	free(p->old_pools);
	free(p->new_pools);
	free(p->added);
	free(p->removed);
	free(p->nodes);
	free(p->relisted);
	free(p->moved);
	if (p->relinked)
		free(p->relinked->v);
	free(p->relinked);
	free(p);
}

/* ---- a set of pointers (open addressing) ---- */

struct ptrset {
	const void **v;
	size_t mask;
};

static int
ptrset_init(struct ptrset *s, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	s->mask = cap - 1;
	s->v = calloc(cap, sizeof(*s->v));
	return s->v ? 0 : -ENOMEM;
}

static size_t
ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static void
ptrset_add(struct ptrset *s, const void *p)
{
	size_t i = ptr_hash(p) & s->mask;
	while (s->v[i] && s->v[i] != p)
		i = (i + 1) & s->mask;
	s->v[i] = p;
}

static bool
ptrset_has(const struct ptrset *s, const void *p)
{
	for (size_t i = ptr_hash(p) & s->mask; s->v[i]; i = (i + 1) & s->mask)
		if (s->v[i] == p)
			return true;
	return false;
}

/* ---- what changed ---- */

static bool
same_elements(const json_t *a, const json_t *b)
{
	size_t n = json_array_size(a);
	if (n != json_array_size(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (json_array_get(a, i) != json_array_get(b, i))
			return false;
	return true;
}

/* The pool is served by exactly one node, by name (what a patch can replace). */
static bool
single_node(const struct rf_pool *p)
{
	if (!p->node || p->n_older) /* older generations may serve other nodes */
		return false;
	for (unsigned s = 0; s < p->n_slices; s++)
		if (p->slices[s]->per_device)
			return false;
	return true;
}

/* A pool served by selectors or several nodes whose devices no node's derived facts read or
 * write: no GPU, NIC or CPU (rails, the GPU and NIC counts, the topology annotation's match read
 * those kinds) and no PCIe root (NUMA inherited from NICs on a root: rf_model_finish_node). Then
 * a change to it only changes its nodes' pool lists, and a node's facts never depend on it. No
 * older generation either: a node seeing one gets a view whose warnings come from attaching
 * (model-pool-view.c), which a patch does not compose. */
static bool
shared_inert(const struct rf_pool *p)
{
	if (p->n_older)
		return false;
	for (size_t d = 0; d < p->n_devices; d++)
		if (p->devices[d]->kind != RF_DEV_OTHER || p->devices[d]->loc.pcie_root)
			return false;
	return true;
}

struct patcher {
	struct rf_cluster *c;
	const struct rf_cluster *prev;
	struct rf_slice *const *cur;
	size_t n_cur;
	struct rf_patch *p;
	unsigned char *node_state; /* per prev node index: enum node_state */
	const json_t **node_json;  /* per prev node index: its new object, or NULL */
	/* per prev node index: its Node object went while slices still name it (it stays, rebuilt
	 * as a node only slices name) */
	unsigned char *obj_gone;
	struct added_node {
		const char *name;
		const json_t *json; /* NULL: only slices name it (so far) */
	} * new_nodes;              /* nodes added */
	size_t n_new_nodes, cap_new_nodes;
	unsigned *gone_nodes; /* the indexes of nodes removed */
	size_t n_gone_nodes, cap_gone_nodes;
	size_t n_left;      /* nodes of prev whose object went (removed, or staying without it) */
	size_t n_came;      /* nodes of prev only slices named that got their object */
	size_t n_gone_objs; /* nodes removed that had an object */
	/* every pool of prev is single_node() or shared_inert() (scan_shared) */
	int all_single;
	unsigned *shared_prev; /* the indexes of prev's pools that are not single_node() */
	size_t n_shared_prev;
	unsigned char *relist; /* per prev node index: its pool list changes (a shared pool) */
	/* the new layout's pools that are not single_node(), by name */
	struct rf_pool **shared_now;
	size_t n_shared_now, cap_relisted;
	struct rf_pool **scratch; /* compose_pools' */
	size_t cap_scratch;
	unsigned char *changed; /* per pool index of c: a shared pool (before or after) replaced,
				 * added or removed */
	/* per prev pool index: DeviceTaintRules changed its devices' taints (rule_pools); kept
	 * with new taints unless replaced anyway (retaint_nodes, patch_taints) */
	unsigned char *retaint;
	size_t n_retaint;
	unsigned char *restamp; /* by prev's node idx: kept, its devices' taints changed */
	bool bail;
	/* the slices were handed over in the previous order, and none that changed is or was
	 * skipped: the skipped slices' warnings are the previous layout's */
	bool skips_same;
};

enum node_state { NODE_SAME, NODE_COPY, NODE_REBUILT, NODE_GONE };

/* Every pool of prev is served by its one node, by name, or is shared_inert(): a pool that
 * serves by selectors or several nodes changes only the pool lists of the nodes that come, go,
 * or gain or lose their object and labels. Notes prev's shared pools. */
static int
scan_shared(struct patcher *k)
{
	size_t cap = 0;
	k->all_single = 1;
	for (size_t i = 0; i < k->prev->n_pool_order; i++) {
		const struct rf_pool *p = k->prev->pool_order[i];
		if (single_node(p))
			continue;
		k->all_single &= shared_inert(p);
		if (rf_grow(&k->shared_prev, &cap, k->n_shared_prev + 1, sizeof(*k->shared_prev)) <
		    0)
			return -ENOMEM;
		k->shared_prev[k->n_shared_prev++] = p->idx;
	}
	return 0;
}

static bool
all_single(struct patcher *k)
{
	return k->all_single > 0;
}

/* A node of a name prev did not have: its object (nj; NULL: a pool names it) or its pools may
 * come first, the other in the same build. */
static int
add_new_node(struct patcher *k, const char *name, const json_t *nj)
{
	for (size_t i = 0; i < k->n_new_nodes; i++) {
		struct added_node *a = &k->new_nodes[i];
		if (strcmp(a->name, name) != 0)
			continue;
		if (nj && a->json) {
			k->bail = true; /* named twice: the full build warns */
			return 0;
		}
		if (nj) {
			a->json = nj;
			a->name = name;
		}
		return 0;
	}
	if (!all_single(k)) {
		k->bail = true;
		return 0;
	}
	if (rf_grow(&k->new_nodes, &k->cap_new_nodes, k->n_new_nodes + 1, sizeof(*k->new_nodes)) <
	    0)
		return -ENOMEM;
	k->new_nodes[k->n_new_nodes++] = (struct added_node){ name, nj };
	return 0;
}

/* The node of this name is rebuilt (a node new in this build is added). */
static int
add_node(struct patcher *k, const char *name)
{
	if (!name) {
		k->bail = true;
		return 0;
	}
	const struct rf_node *n = rf_cluster_node(k->prev, name);
	if (!n) /* a pool on a node prev did not have (its object may come in this build) */
		return add_new_node(k, name, NULL);
	if (k->node_state[n->idx] == NODE_GONE) {
		k->bail = true; /* removed, yet named again */
		return 0;
	}
	if (k->node_state[n->idx] == NODE_REBUILT)
		return 0;
	k->node_state[n->idx] = NODE_REBUILT;
	if (rf_grow(&k->p->nodes, &k->p->cap_nodes, k->p->n_nodes + 1, sizeof(*k->p->nodes)) < 0)
		return -ENOMEM;
	k->p->nodes[k->p->n_nodes++] = n->idx;
	return 0;
}

static bool
pool_is(const struct rf_pool *p, const char *driver, const char *name)
{
	return strcmp(p->name, name) == 0 && strcmp(p->driver, driver) == 0;
}

static bool
pool_in(struct rf_pool *const *v, size_t n, const char *driver, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (pool_is(v[i], driver, name))
			return true;
	return false;
}

static int
push_pool(struct rf_pool ***v, size_t *n, size_t *cap, struct rf_pool *p)
{
	if (rf_grow(v, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = p;
	return 0;
}

/* The pool (driver, name) is replaced by what the current slices make of it: added when the
 * previous layout had none of that name, removed when no current slice makes it. */
static int
add_pool(struct patcher *k, const char *driver, const char *name)
{
	struct rf_patch *p = k->p;
	if (pool_in(p->old_pools, p->n_pools, driver, name) ||
	    pool_in(p->added, p->n_added, driver, name) ||
	    pool_in(p->removed, p->n_removed, driver, name))
		return 0;
	struct rf_pool *old = rf_model_find_pool(k->prev, driver, name);
	/* a shared pool whose devices nodes' facts read: every node it serves would be rebuilt */
	if ((old && !single_node(old) && !shared_inert(old)) ||
	    p->n_pools + p->n_added + p->n_removed >= PATCH_POOLS_MAX) {
		k->bail = true;
		return 0;
	}
	size_t n = 0;
	struct rf_slice **refs = malloc((k->n_cur ? k->n_cur : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	const uint64_t key = rf_model_pool_key(driver, name), *keys = k->c->layout->slice_keys;
	for (size_t i = 0; i < k->n_cur; i++)
		if (keys[i] == key && strcmp(k->cur[i]->driver, driver) == 0 &&
		    strcmp(k->cur[i]->pool, name) == 0)
			refs[n++] = k->cur[i];
	struct rf_pool *np = NULL;
	if (n) {
		rf_model_sort_slices(refs, n);
		np = rf_model_build_pool(k->c, refs, n, k->c->lend_devices);
	}
	free(refs);
	if (!n && !old)
		return 0; /* neither then nor now */
	/* a pool served by one node rebuilds it; a shared one changes its nodes' pool lists
	 * (find_relisted, compose_pools) */
	if (!n) { /* the pool is gone: its node loses it */
		if (push_pool(&p->removed, &p->n_removed, &p->cap_removed, old) < 0)
			return -ENOMEM;
		return single_node(old) ? add_node(k, old->node) : 0;
	}
	if (!np)
		return -ENOMEM;
	if (!single_node(np) && !shared_inert(np)) {
		k->bail = true;
		return 0;
	}
	if (!old) { /* a new pool: its index comes after the previous ones (patch_devices) */
		if (push_pool(&p->added, &p->n_added, &p->cap_added, np) < 0)
			return -ENOMEM;
		return single_node(np) ? add_node(k, np->node) : 0;
	}
	np->idx = old->idx;
	if (rf_grow(&p->old_pools, &p->cap_pools, p->n_pools + 1, sizeof(*p->old_pools)) < 0)
		return -ENOMEM;
	/* new_pools grows with old_pools: same capacity */
	struct rf_pool **nw = realloc(p->new_pools, p->cap_pools * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	p->new_pools = nw;
	p->old_pools[p->n_pools] = old;
	p->new_pools[p->n_pools++] = np;
	int r = single_node(old) ? add_node(k, old->node) : 0;
	return r < 0 || !single_node(np) ? r : add_node(k, np->node);
}

/* Slices: those of the previous layout that are not among the current ones, and the current ones
 * that are new, name the pools to replace. */
static int
diff_slices(struct patcher *k)
{
	const struct rf_layout *pl = k->prev->layout;
	struct ptrset was = { 0 }, now = { 0 };
	int r = 0;
	if (k->n_cur == pl->n_slices) {
		/* the same order (as the store hands them over): the positions that differ name
		 * every pool that changed (and maybe some that did not: rebuilt the same) */
		k->skips_same = true;
		for (size_t i = 0; i < k->n_cur && !k->bail && r == 0; i++) {
			const struct rf_slice *a = k->cur[i], *b = pl->slices[i];
			if (a == b)
				continue;
			k->skips_same &= !a->skip && !b->skip;
			if (!a->skip)
				r = add_pool(k, a->driver, a->pool);
			if (!b->skip && r == 0 && !k->bail)
				r = add_pool(k, b->driver, b->pool);
		}
		return r;
	}
	r = -ENOMEM;
	if (ptrset_init(&was, pl->n_slices) < 0 || ptrset_init(&now, k->n_cur) < 0)
		goto out;
	for (size_t i = 0; i < pl->n_slices; i++)
		ptrset_add(&was, pl->slices[i]);
	for (size_t i = 0; i < k->n_cur; i++)
		ptrset_add(&now, k->cur[i]);
	r = 0;
	/* a skipped slice is in no pool (only in the warnings) */
	for (size_t i = 0; i < k->n_cur && !k->bail && r == 0; i++)
		if (!k->cur[i]->skip && !ptrset_has(&was, k->cur[i]))
			r = add_pool(k, k->cur[i]->driver, k->cur[i]->pool);
	for (size_t i = 0; i < pl->n_slices && !k->bail && r == 0; i++)
		if (!pl->slices[i]->skip && !ptrset_has(&now, pl->slices[i]))
			r = add_pool(k, pl->slices[i]->driver, pl->slices[i]->pool);
out:
	free(was.v);
	free(now.v);
	return r;
}

/* The pools served by the node alone are rebuilt with it (its facts are written into their
 * devices); a shared pool it sees stays when inert (its list is composed again: patch_nodes). */
static int
own_pools(struct patcher *k, const struct rf_node *n)
{
	int r = 0;
	for (size_t i = 0; i < n->n_pools && !k->bail && r == 0; i++) {
		const struct rf_pool *q = k->prev->pools[n->pools[i]->idx]; /* a view's pool */
		if (!single_node(q)) {
			k->bail |= !shared_inert(q);
			continue;
		}
		r = add_pool(k, q->driver, q->name);
	}
	return r;
}

/* Equal JSON values, both absent included (json_equal() says no to NULL). */
static bool
same_json(const json_t *a, const json_t *b)
{
	return a == b || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* A node with a new object: rebuilt when its labels or annotations changed (with its pools: the
 * node's facts are written into their devices), else a copy pointing at the new object. */
static int
node_changed(struct patcher *k, const struct rf_node *old, const json_t *nj)
{
	k->node_json[old->idx] = nj;
	if (same_json(rf_jpath(nj, "metadata.labels"), old->labels) &&
	    same_json(rf_jpath(nj, "metadata.annotations"), old->annotations)) {
		if (k->node_state[old->idx] != NODE_REBUILT)
			k->node_state[old->idx] = NODE_COPY;
		return 0;
	}
	int r = add_node(k, old->name);
	return r < 0 ? r : own_pools(k, old);
}

static const char *
node_name(const json_t *nj)
{
	return json_string_value(rf_jpath(nj, "metadata.name"));
}

/* A Node object of a name the previous layout did not have: a node added (a node joining, or
 * one coming back), with or without pools in this build. Pods bound to its name are relinked to
 * its index (rf_model_patch_claims). A pool that does not name its one node may serve it: then
 * it is not patched. */
static int
new_node(struct patcher *k, const json_t *nj)
{
	return add_new_node(k, node_name(nj), nj);
}

/* Every pool the node had alone goes in this patch (its slices were deleted in the same build,
 * as a node leaving with its drivers' slices); the shared pools it saw stay, inert (they merely
 * serve one node fewer). */
static bool
pools_all_removed(const struct patcher *k, const struct rf_node *old)
{
	for (size_t i = 0; i < old->n_pools; i++) {
		const struct rf_pool *q = k->prev->pools[old->pools[i]->idx];
		if (!single_node(q)) {
			if (!shared_inert(q))
				return false;
			continue;
		}
		bool found = false;
		for (size_t j = 0; j < k->p->n_removed && !found; j++)
			found = k->p->removed[j] == old->pools[i];
		if (!found)
			return false;
	}
	return true;
}

/* The pool (driver, name) of the new layout: replaced or added by the patch, else prev's. */
static const struct rf_pool *
pool_now(const struct patcher *k, const char *driver, const char *name)
{
	const struct rf_patch *p = k->p;
	for (size_t i = 0; i < p->n_pools; i++)
		if (pool_is(p->new_pools[i], driver, name))
			return p->new_pools[i];
	for (size_t i = 0; i < p->n_added; i++)
		if (pool_is(p->added[i], driver, name))
			return p->added[i];
	return rf_model_find_pool(k->prev, driver, name);
}

/* A pool of the new layout is the node's by name (rf_pool.node: all its slices name it): a full
 * build makes a node of it even without its object. A slice naming the node in a pool that
 * serves several nodes does not. */
static bool
slices_name(const struct patcher *k, const char *name)
{
	for (size_t i = 0; i < k->n_cur; i++) {
		const struct rf_slice *s = k->cur[i];
		if (s->skip || !s->node || strcmp(s->node, name) != 0)
			continue;
		const struct rf_pool *q = pool_now(k, s->driver, s->pool);
		if (q && q->node && strcmp(q->node, name) == 0)
			return true;
	}
	return false;
}

/* The node goes: its index becomes a hole; the pods bound to it are relinked to no node
 * (rf_model_patch_claims). Only when no pool it had stays (one that serves it by a selector
 * or allNodes would serve no node then). */
static int
remove_node(struct patcher *k, const struct rf_node *old)
{
	if (old->n_pools && !pools_all_removed(k, old)) {
		k->bail = true;
		return 0;
	}
	if (rf_grow(&k->gone_nodes, &k->cap_gone_nodes, k->n_gone_nodes + 1,
		    sizeof(*k->gone_nodes)) < 0)
		return -ENOMEM;
	k->gone_nodes[k->n_gone_nodes++] = old->idx;
	k->n_gone_objs += old->json != NULL;
	/* its pools' removal marked it to be rebuilt: it is not there to rebuild */
	if (k->node_state[old->idx] == NODE_REBUILT) {
		size_t w = 0;
		for (size_t i = 0; i < k->p->n_nodes; i++)
			if (k->p->nodes[i] != old->idx)
				k->p->nodes[w++] = k->p->nodes[i];
		k->p->n_nodes = w;
	}
	k->node_state[old->idx] = NODE_GONE;
	return 0;
}

/* A node whose Node object went (a node leaving: the object is deleted first, its drivers'
 * slices and its pods are garbage-collected after it). While slices still name it, it stays as
 * a node only slices name, at its index (the pods bound to it keep it), rebuilt without its
 * labels and annotations (and its pools with it: its facts are written into their devices);
 * else it goes (remove_node). */
static int
gone_node(struct patcher *k, const struct rf_node *old)
{
	k->n_left++;
	if (!slices_name(k, old->name))
		return remove_node(k, old);
	if (!all_single(k)) {
		k->bail = true;
		return 0;
	}
	k->obj_gone[old->idx] = 1;
	return add_node(k, old->name);
}

/* The rebuilt nodes without an object (only slices named them, or their object went) that no
 * current slice names any more (their last pools went): removed, as a full build would not make
 * them. */
static int
drop_unnamed(struct patcher *k)
{
	int r = 0;
	for (size_t i = k->p->n_nodes; i-- > 0 && !k->bail && r == 0;) {
		unsigned idx = k->p->nodes[i];
		const struct rf_node *old = k->prev->nodes[idx];
		bool objectless = k->obj_gone[idx] || (!old->json && !k->node_json[idx]);
		if (objectless && !slices_name(k, old->name))
			r = all_single(k) ? remove_node(k, old) : (k->bail = true, 0);
	}
	return r;
}

/* Nodes: the same names as before, each once. The store hands over the objects in the same order
 * (a new array, the same elements but the changed ones): then only the changed positions are
 * looked at; otherwise every node is looked up by name. */
static int
diff_nodes(struct patcher *k)
{
	const json_t *nodes = k->c->objs.nodes, *was = k->prev->layout->nodes;
	size_t n = json_array_size(nodes);
	int r = 0;
	if (json_array_size(was) != k->prev->layout->n_node_objs) {
		k->bail = true; /* the previous layout had nodes without a name, or twice */
		return 0;
	}
	bool aligned = n == json_array_size(was);
	for (size_t i = 0; aligned && i < n; i++) {
		const json_t *nj = json_array_get(nodes, i), *oj = json_array_get(was, i);
		if (nj == oj)
			continue;
		const char *name = node_name(nj), *oname = node_name(oj);
		aligned = name && oname && strcmp(name, oname) == 0;
	}
	if (aligned) {
		for (size_t i = 0; i < n && !k->bail && r == 0; i++) {
			const json_t *nj = json_array_get(nodes, i);
			if (nj != json_array_get(was, i))
				r = node_changed(k, rf_cluster_node(k->prev, node_name(nj)), nj);
		}
		return r;
	}
	unsigned char *seen = calloc(k->prev->n_nodes + 1, 1);
	size_t matched = 0;
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < n && !k->bail && r == 0; i++) {
		const json_t *nj = json_array_get(nodes, i);
		const char *name = node_name(nj);
		const struct rf_node *old = name && name[0] ? rf_cluster_node(k->prev, name) : NULL;
		if (!old && name && name[0]) {
			r = new_node(k, nj);
			continue;
		}
		if (!old || seen[old->idx]) {
			k->bail = true; /* unnamed, or named twice */
			break;
		}
		seen[old->idx] = 1;
		if (!old->json) { /* a node only slices named gets its object (a node returning) */
			if (!all_single(k)) {
				k->bail = true;
				break;
			}
			k->node_json[old->idx] = nj;
			k->n_came++;
			r = add_node(k, old->name);
			continue;
		}
		matched++;
		if (old->json != nj)
			r = node_changed(k, old, nj);
	}
	/* the nodes that went */
	const struct rf_cluster *prev = k->prev;
	for (size_t i = 0;
	     i < prev->n_node_order && matched < prev->layout->n_node_objs && !k->bail && r == 0;
	     i++) {
		const struct rf_node *old = prev->node_order[i];
		if (old->json && !seen[old->idx])
			r = gone_node(k, old);
	}
	if (matched + k->n_left != prev->layout->n_node_objs)
		k->bail = true;
	free(seen);
	return r;
}

/* Every pool of a rebuilt node is rebuilt too (the node's facts are written into its devices),
 * and every node a replaced pool serves is rebuilt: until nothing is added. */
static int
close_over(struct patcher *k)
{
	int r = 0;
	for (size_t i = 0; i < k->p->n_nodes && !k->bail && r == 0; i++)
		r = own_pools(k, k->prev->nodes[k->p->nodes[i]]);
	return r;
}

/* The elements of a that b holds too, in a's order, equal those of b that a holds, in b's. */
static bool
same_common_order(const json_t *a, const json_t *b)
{
	size_t i = 0, j = 0, na = json_array_size(a), nb = json_array_size(b);
	for (;;) {
		while (i < na && !rf_jarray_holds(b, json_array_get(a, i)))
			i++;
		while (j < nb && !rf_jarray_holds(a, json_array_get(b, j)))
			j++;
		if (i == na || j == nb)
			return i == na && j == nb;
		if (json_array_get(a, i++) != json_array_get(b, j++))
			return false;
	}
}

static void
mark_retaint(struct patcher *k, const struct rf_pool *p)
{
	k->n_retaint += !k->retaint[p->idx];
	k->retaint[p->idx] = 1;
}

/* The pools of the previous layout whose devices the rule may select get their devices' taints
 * again (patch_taints), their structs kept. */
static int
rule_pools(struct patcher *k, const json_t *rule)
{
	const char *driver, *pool, *device;
	if (!rf_model_taint_rule_selects(rule, &driver, &pool, &device))
		return 0; /* ignored: only its warning changes */
	if (!k->retaint && !(k->retaint = calloc(k->prev->n_pools + 1, 1)))
		return -ENOMEM;
	if (driver && pool) {
		const struct rf_pool *p = rf_model_find_pool(k->prev, driver, pool);
		if (p)
			mark_retaint(k, p);
		return 0;
	}
	for (size_t i = 0; i < k->prev->n_pool_order; i++) {
		const struct rf_pool *p = k->prev->pool_order[i]; /* no holes */
		if ((!driver || strcmp(driver, p->driver) == 0) &&
		    (!pool || strcmp(pool, p->name) == 0))
			mark_retaint(k, p);
	}
	return 0;
}

/* DeviceTaintRules: a rule added or removed (a changed rule is a new object) changes the taints
 * of the devices it selects; the rules both layouts hold must keep their order (a device's
 * taints are in rule order). The pools it may select keep their structs and devices (a rule
 * over a whole driver selects a pool on every node: replacing them, their nodes and the claims
 * holding their devices would cost a full build): the layout holds every device's taints
 * (rf_cluster.dev_taints, patch_taints), and the nodes that see them get a new stamp
 * (rf_node_rev(): remembered verdicts read the taints, alloc/memo.c), their structs kept. */
#define PATCH_RULES_MAX 256
static int
diff_rules(struct patcher *k)
{
	const json_t *now = k->c->objs.taint_rules, *was = k->prev->objs.taint_rules;
	if (same_elements(now, was))
		return 0;
	if (json_array_size(now) > PATCH_RULES_MAX || json_array_size(was) > PATCH_RULES_MAX ||
	    !same_common_order(was, now)) {
		k->bail = true;
		return 0;
	}
	k->p->rules_changed = true;
	int r = 0;
	for (size_t i = 0; i < json_array_size(was) && !k->bail && r == 0; i++)
		if (!rf_jarray_holds(now, json_array_get(was, i)))
			r = rule_pools(k, json_array_get(was, i));
	for (size_t i = 0; i < json_array_size(now) && !k->bail && r == 0; i++)
		if (!rf_jarray_holds(was, json_array_get(now, i)))
			r = rule_pools(k, json_array_get(now, i));
	return r;
}

/* The pools whose slices or node changed too are replaced (their devices get the rules' taints
 * as they are built): not kept. The nodes that see the others (by their pools' index: a view of
 * a shared pool has its pool's) and are not rebuilt are kept and stamped again
 * (patch_node_stamps): no node is copied. */
static int
retaint_nodes(struct patcher *k)
{
	if (!k->n_retaint)
		return 0;
	for (size_t i = 0; i < k->p->n_pools; i++)
		k->retaint[k->p->old_pools[i]->idx] = 0;
	for (size_t i = 0; i < k->p->n_removed; i++)
		k->retaint[k->p->removed[i]->idx] = 0;
	k->n_retaint = 0;
	for (size_t i = 0; i < k->prev->n_pools; i++)
		k->n_retaint += k->retaint[i] != 0;
	for (size_t i = 0; i < k->prev->n_nodes && k->n_retaint; i++) {
		const struct rf_node *old = k->prev->nodes[i];
		if (!old || k->node_state[i] != NODE_SAME)
			continue;
		for (size_t e = 0; e < old->n_pools; e++)
			if (k->retaint[old->pools[e]->idx]) {
				if (!k->restamp && !(k->restamp = calloc(k->prev->n_nodes + 1, 1)))
					return -ENOMEM;
				k->restamp[i] = 1;
				break;
			}
	}
	return 0;
}

/* The nodes' stamps (rf_cluster.node_stamps) when the patch kept nodes whose devices' taints it
 * changed (retaint_nodes), or prev had stamps: prev's, a new one for those nodes. */
static int
patch_node_stamps(struct rf_cluster *c, const struct rf_cluster *prev, struct patcher *k)
{
	if (!k->restamp && !prev->node_stamps)
		return 0;
	uint64_t *s = calloc(c->n_nodes + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	c->node_stamps = c->layout->own_node_stamps = s;
	c->n_node_stamps = c->n_nodes;
	size_t from = prev->n_node_stamps < c->n_nodes ? prev->n_node_stamps : c->n_nodes;
	if (prev->node_stamps)
		memcpy(s, prev->node_stamps, from * sizeof(*s));
	uint64_t now = k->restamp ? rf_model_next_stamp() : 0;
	for (size_t i = 0; k->restamp && i < prev->n_nodes && i < c->n_nodes; i++)
		if (k->restamp[i] && c->nodes[i] == prev->nodes[i])
			s[i] = now;
	return 0;
}

/* ---- the new layout ---- */

static int
new_layout(struct rf_cluster *c, const struct rf_cluster *prev,
	   const struct rf_cluster_objects *objs)
{
	struct rf_layout *l = calloc(1, sizeof(*l)), *pl = prev->layout;
	if (!l)
		return -ENOMEM;
	atomic_init(&l->refs, 1);
	atomic_init(&l->users, 1);
	pthread_mutex_init(&l->extra_lock, NULL);
	c->layout = l;
	atomic_fetch_add(&pl->refs, 1);
	l->base = pl;
	l->patched = l->from_recs = true;
	l->depth = pl->depth + 1;
	l->full_bytes = pl->full_bytes;
	l->n_node_objs = pl->n_node_objs;
	l->holes = pl->holes;
	l->pool_holes = pl->pool_holes;
	l->nodes_appended = pl->nodes_appended;
	l->node_holes = pl->node_holes;
	l->relisted = pl->relisted;
	if (!(l->arena = c->arena = rf_arena_new()))
		return -ENOMEM;
	l->nodes = json_incref(c->objs.nodes);
	l->classes = json_incref(c->objs.classes);
	l->templates = json_incref(c->objs.templates);
	/* the store hands the slices over in the same order: the keys of those at their place
	 * are the previous layout's, and when all are (no slice changed) so are the arrays */
	bool aligned = objs->n_slice_recs == pl->n_slices && pl->slice_arrays;
	size_t same = 0;
	while (aligned && same < pl->n_slices && pl->slices[same] == objs->slice_recs[same])
		same++;
	if (aligned && same == pl->n_slices) {
		rf_model_slice_arrays_share(l, pl);
	} else {
		if (rf_model_slice_arrays_new(l, objs->n_slice_recs) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < objs->n_slice_recs; i++) {
			struct rf_slice *s = objs->slice_recs[i];
			l->slice_keys[i] = aligned && pl->slices[i] == s ? pl->slice_keys[i]
									 : rf_model_slice_key(s);
			l->slices[i] = rf_slice_ref(s);
			l->slice_arrays->n = l->n_slices = i + 1;
		}
	}
	c->warnings = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
	return c->warnings ? 0 : -ENOMEM;
}

static int
pool_name_cmp(const void *a, const void *b)
{
	const struct rf_pool *x = *(struct rf_pool *const *)a, *y = *(struct rf_pool *const *)b;
	int r = strcmp(x->driver, y->driver);
	return r ? r : strcmp(x->name, y->name);
}

/* The pools by name: the previous order, each pool the one at its index now (replaced or
 * removed), merged with the added ones. */
static int
order_pools(struct rf_cluster *c, const struct rf_cluster *prev, struct rf_patch *p)
{
	c->pool_order = c->layout->own_pool_order =
		calloc(prev->n_pool_order + p->n_added + 1, sizeof(*c->pool_order));
	struct rf_pool **add = calloc(p->n_added + 1, sizeof(*add));
	if (!c->pool_order || !add) {
		free(add);
		return -ENOMEM;
	}
	if (!p->n_added && !p->n_removed) {
		/* the same pools in the same places: the previous order, the replaced ones found by
		 * name (no read of every pool) */
		memcpy(c->pool_order, prev->pool_order,
		       prev->n_pool_order * sizeof(*c->pool_order));
		c->n_pool_order = prev->n_pool_order;
		for (size_t i = 0; i < p->n_pools; i++) {
			struct rf_pool **at = bsearch(&p->new_pools[i], c->pool_order,
						      c->n_pool_order, sizeof(*at), pool_name_cmp);
			if (at)
				*at = p->new_pools[i];
		}
		free(add);
		return 0;
	}
	if (p->n_added) {
		memcpy(add, p->added, p->n_added * sizeof(*add));
		qsort(add, p->n_added, sizeof(*add), pool_name_cmp);
	}
	size_t n = 0, ai = 0;
	for (size_t i = 0; i < prev->n_pool_order; i++) {
		struct rf_pool *q = c->pools[prev->pool_order[i]->idx];
		if (!q)
			continue;
		while (ai < p->n_added && pool_name_cmp(&add[ai], &q) < 0)
			c->pool_order[n++] = add[ai++];
		c->pool_order[n++] = q;
	}
	while (ai < p->n_added)
		c->pool_order[n++] = add[ai++];
	c->n_pool_order = n;
	free(add);
	return 0;
}

/* Pools and devices: the previous ones but the replaced, which keep their gidx range when they
 * have as many devices, else take one at the end; a removed pool leaves holes (its index, its
 * devices' gidx), an added one takes the next index and a range at the end. */
static int
patch_devices(struct rf_cluster *c, const struct rf_cluster *prev, struct rf_patch *p)
{
	size_t appended = 0, holes = 0;
	for (size_t i = 0; i < p->n_pools; i++)
		if (p->new_pools[i]->n_devices != p->old_pools[i]->n_devices) {
			appended += p->new_pools[i]->n_devices;
			holes += p->old_pools[i]->n_devices;
		}
	for (size_t i = 0; i < p->n_removed; i++)
		holes += p->removed[i]->n_devices;
	for (size_t i = 0; i < p->n_added; i++)
		appended += p->added[i]->n_devices;
	c->layout->holes += holes;
	c->layout->pool_holes += p->n_removed;
	c->n_pools = prev->n_pools + p->n_added;
	c->pools = c->layout->own_pools = calloc(c->n_pools + 1, sizeof(*c->pools));
	c->n_devices = prev->n_devices + appended;
	c->devices = c->layout->own_devices = calloc(c->n_devices + 1, sizeof(*c->devices));
	struct rf_pool **fresh = calloc(p->n_pools + p->n_added + 1, sizeof(*fresh));
	int r = -ENOMEM;
	if (!c->pools || !c->devices || !fresh)
		goto out;
	memcpy(c->pools, prev->pools, prev->n_pools * sizeof(*c->pools));
	memcpy(c->devices, prev->devices, prev->n_devices * sizeof(*c->devices));
	size_t end = prev->n_devices;
	for (size_t i = 0; i < p->n_pools; i++) {
		struct rf_pool *o = p->old_pools[i], *n = p->new_pools[i];
		c->pools[n->idx] = n;
		fresh[i] = n;
		if (n->n_devices == o->n_devices) {
			rf_model_place_pool_devices(c, n, o->first_gidx);
			continue;
		}
		memset(c->devices + o->first_gidx, 0, o->n_devices * sizeof(*c->devices));
		rf_model_place_pool_devices(c, n, (unsigned)end);
		end += n->n_devices;
	}
	for (size_t i = 0; i < p->n_removed; i++) {
		const struct rf_pool *o = p->removed[i];
		c->pools[o->idx] = NULL;
		memset(c->devices + o->first_gidx, 0, o->n_devices * sizeof(*c->devices));
	}
	for (size_t i = 0; i < p->n_added; i++) {
		struct rf_pool *n = p->added[i];
		n->idx = (unsigned)(prev->n_pools + i);
		c->pools[n->idx] = n;
		fresh[p->n_pools + i] = n;
		rf_model_place_pool_devices(c, n, (unsigned)end);
		end += n->n_devices;
	}
	if ((r = order_pools(c, prev, p)) < 0)
		goto out;
	/* DeviceTaintRules on the new pools' devices; the rules' own warnings (a rule not
	 * understood), emitted once per rule whatever the pools, are the full build's */
	struct rf_pool **all = c->pools;
	size_t n_all = c->n_pools, first = c->n_warnings;
	c->pools = fresh;
	c->n_pools = p->n_pools + p->n_added;
	r = rf_model_apply_taint_rules(c, c->objs.taint_rules);
	c->pools = all;
	c->n_pools = n_all;
	/* copied: c->warnings is written again from its start (the classes', then all) */
	p->n_rule_warns = c->n_warnings - first;
	p->rule_warns = rf_arena_calloc(c->arena, p->n_rule_warns + 1, sizeof(*p->rule_warns));
	if (!p->rule_warns) {
		r = -ENOMEM;
		goto out;
	}
	if (p->n_rule_warns)
		memcpy(p->rule_warns, c->warnings + first,
		       p->n_rule_warns * sizeof(*p->rule_warns));
out:
	free(fresh);
	return r;
}

static int
node_name_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_node *const *)a)->name, (*(struct rf_node *const *)b)->name);
}

/* The nodes by name: the previous order, each node the one at its index now, merged with the
 * added ones. */
static int
order_nodes(struct rf_cluster *c, const struct rf_cluster *prev, const struct patcher *k)
{
	size_t n_add = k->n_new_nodes;
	c->node_order = c->layout->own_node_order = calloc(c->n_nodes + 1, sizeof(*c->node_order));
	if (!c->node_order)
		return -ENOMEM;
	if (!n_add && !k->n_gone_nodes) {
		/* the same nodes in the same places: the previous order, the new copies of the
		 * changed ones found by name (no read of every node) */
		c->n_node_order = prev->n_node_order;
		size_t changed = 0;
		for (size_t i = 0; i < prev->n_nodes; i++)
			changed += k->node_state[i] != NODE_SAME;
		if (changed * 16 > prev->n_nodes) { /* most (a rule over a driver): by index */
			for (size_t i = 0; i < c->n_node_order; i++)
				c->node_order[i] = c->nodes[prev->node_order[i]->idx];
			return 0;
		}
		memcpy(c->node_order, prev->node_order,
		       prev->n_node_order * sizeof(*c->node_order));
		for (size_t i = 0; i < prev->n_nodes; i++) {
			if (!k->node_state[i])
				continue;
			struct rf_node **at = bsearch(&c->nodes[i], c->node_order, c->n_node_order,
						      sizeof(*at), node_name_cmp);
			if (at)
				*at = c->nodes[i];
		}
		return 0;
	}
	struct rf_node **add = c->nodes + prev->n_nodes;
	if (n_add) {
		if (!(add = malloc(n_add * sizeof(*add))))
			return -ENOMEM;
		memcpy(add, c->nodes + prev->n_nodes, n_add * sizeof(*add));
		qsort(add, n_add, sizeof(*add), node_name_cmp);
	}
	size_t n = 0, ai = 0;
	for (size_t i = 0; i < prev->n_node_order; i++) {
		struct rf_node *q = c->nodes[prev->node_order[i]->idx];
		if (!q)
			continue; /* removed */
		while (ai < n_add && node_name_cmp(&add[ai], &q) < 0)
			c->node_order[n++] = add[ai++];
		c->node_order[n++] = q;
	}
	while (ai < n_add)
		c->node_order[n++] = add[ai++];
	c->n_node_order = n;
	if (n_add)
		free(add);
	return 0;
}

/* The replaced and added pools served by the node of this name alone. */
static size_t
pools_of(const struct rf_patch *p, const char *name, struct rf_pool **mine)
{
	size_t n = 0;
	for (size_t q = 0; q < p->n_pools; q++)
		if (single_node(p->new_pools[q]) && strcmp(p->new_pools[q]->node, name) == 0)
			mine[n++] = p->new_pools[q];
	for (size_t q = 0; q < p->n_added; q++)
		if (single_node(p->added[q]) && strcmp(p->added[q]->node, name) == 0)
			mine[n++] = p->added[q];
	return n;
}

static void
mark_changed(struct patcher *k, const struct rf_pool *was, const struct rf_pool *now)
{
	if ((was && !single_node(was)) || (now && !single_node(now)))
		k->changed[(now ? now : was)->idx] = 1;
}

/* The shared pools of the new layout (prev's, but those replaced or removed, and those the patch
 * made), and which of them changed. */
static int
find_shared(struct rf_cluster *c, struct patcher *k)
{
	const struct rf_patch *p = k->p;
	size_t cap = k->n_shared_prev + p->n_pools + p->n_added + 1, n = 0;
	unsigned char *in = calloc(c->n_pools + 1, 1);
	k->changed = calloc(c->n_pools + 1, 1);
	k->shared_now = malloc(cap * sizeof(*k->shared_now));
	if (!in || !k->changed || !k->shared_now) {
		free(in);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_pools; i++)
		mark_changed(k, p->old_pools[i], p->new_pools[i]);
	for (size_t i = 0; i < p->n_added; i++)
		mark_changed(k, NULL, p->added[i]);
	for (size_t i = 0; i < p->n_removed; i++)
		mark_changed(k, p->removed[i], NULL);
	for (size_t i = 0; i < k->n_shared_prev + p->n_pools + p->n_added; i++) {
		size_t j = i - k->n_shared_prev;
		unsigned idx = i < k->n_shared_prev ? k->shared_prev[i]
			       : j < p->n_pools     ? p->new_pools[j]->idx
						    : p->added[j - p->n_pools]->idx;
		struct rf_pool *q = c->pools[idx];
		if (q && !in[idx] && !single_node(q))
			k->shared_now[n++] = q;
		in[idx] = 1;
	}
	free(in);
	qsort(k->shared_now, n, sizeof(*k->shared_now), pool_name_cmp);
	k->n_shared_now = n;
	return 0;
}

/* The nodes that saw a changed shared pool or see it now, and are not rebuilt: their pool
 * lists are composed again (copies of them, compose_pools), nothing else of them changes. */
static int
find_relisted(struct rf_cluster *c, struct patcher *k)
{
	const struct rf_cluster *prev = k->prev;
	bool any = false;
	for (size_t i = 0; i < c->n_pools && !any; i++)
		any = k->changed[i];
	if (!any)
		return 0;
	for (size_t i = 0; i < prev->n_nodes; i++) {
		const struct rf_node *old = prev->nodes[i];
		if (!old || k->node_state[i] == NODE_GONE || k->node_state[i] == NODE_REBUILT)
			continue;
		for (size_t e = 0; e < old->n_pools && !k->relist[i]; e++)
			k->relist[i] = k->changed[old->pools[e]->idx];
	}
	for (size_t s = 0; s < k->n_shared_now; s++) {
		struct rf_pool *q = k->shared_now[s];
		if (!k->changed[q->idx])
			continue;
		for (size_t i = 0; i < prev->n_nodes; i++) {
			const struct rf_node *old = prev->nodes[i];
			if (!old || k->relist[i] || k->node_state[i] == NODE_GONE ||
			    k->node_state[i] == NODE_REBUILT)
				continue;
			struct rf_pool *v;
			if (rf_model_pool_view(c, q, old, &v) < 0)
				return -ENOMEM;
			k->relist[i] = v && rf_model_devices_on_node(v, old, NULL) > 0;
		}
	}
	/* a shared pool that changes often (its devices' health) copies its nodes each time:
	 * past RELIST_MAX times the nodes along the chain, a full build drops the copies */
	size_t n = 0;
	for (size_t i = 0; i < prev->n_nodes; i++)
		n += k->relist[i];
	if ((c->layout->relisted += n) > RELIST_MAX * prev->n_nodes + 64) {
		k->bail = true;
		return 0;
	}
	for (size_t i = 0; i < prev->n_nodes; i++) {
		if (!k->relist[i])
			continue;
		if (k->node_state[i] == NODE_SAME)
			k->node_state[i] = NODE_COPY;
		if (rf_grow(&k->p->relisted, &k->cap_relisted, k->p->n_relisted + 1,
			    sizeof(*k->p->relisted)) < 0)
			return -ENOMEM;
		k->p->relisted[k->p->n_relisted++] = (unsigned)i;
	}
	return 0;
}

/* Every device's taints, by gidx, when a rule's change kept pools (retaint) or prev's layout
 * held them: prev's for the devices it shares, the devices' own (RF_TAINTS_OWN) for those the
 * patch made (the rules applied as they were built, patch_devices), then the kept pools' made
 * again. No device is read but the kept pools' (100,000 of them at 5,000 nodes). */
static int
patch_taints(struct rf_cluster *c, const struct rf_cluster *prev, struct patcher *k)
{
	if (!k->n_retaint && !prev->dev_taints)
		return 0;
	struct rf_taint_span *t = calloc(c->n_devices + 1, sizeof(*t));
	struct rf_pool **kept = calloc(k->n_retaint + 1, sizeof(*kept));
	int r = -ENOMEM;
	if (!t || !kept) {
		free(t);
		goto out;
	}
	c->dev_taints = c->layout->own_dev_taints = t;
	size_t from = prev->dev_taints ? prev->n_devices : 0;
	if (from)
		memcpy(t, prev->dev_taints, from * sizeof(*t));
	for (size_t g = from; g < c->n_devices; g++) /* the rest appended (patch_devices) */
		t[g].n = RF_TAINTS_OWN;
	for (size_t i = 0; i < k->p->n_pools; i++) /* replaced in place, or appended */
		for (size_t d = 0; d < k->p->new_pools[i]->n_devices; d++)
			t[k->p->new_pools[i]->first_gidx + d].n = RF_TAINTS_OWN;
	size_t n = 0;
	for (size_t i = 0; i < prev->n_pools && n < k->n_retaint; i++)
		if (k->retaint[i])
			kept[n++] = c->pools[i];
	r = rf_model_retaint_pools(c, c->objs.taint_rules, kept, n, t);
out:
	free(kept);
	return r;
}

/* The node's pools as a full build pairs them (rf_model_attach_pools): those it alone is served
 * by (rebuilt: the patch's, else its previous ones), and the views of the shared pools that
 * serve it (unchanged ones on a node not rebuilt: its previous views), in name order. A shared
 * pool whose devices the node's facts read (not shared_inert) is not patched. */
static int
compose_pools(struct rf_cluster *c, struct patcher *k, struct rf_node *nd,
	      const struct rf_node *old, bool rebuilt)
{
	size_t cap = (rebuilt ? k->p->n_pools + k->p->n_added : old->n_pools) + k->n_shared_now,
	       n = 0;
	if (rf_grow(&k->scratch, &k->cap_scratch, cap + 1, sizeof(*k->scratch)) < 0)
		return -ENOMEM;
	struct rf_pool **mine = k->scratch;
	int r = -ENOMEM;
	if (rebuilt)
		n = pools_of(k->p, nd->name, mine);
	else
		for (size_t e = 0; e < old->n_pools; e++)
			if (single_node(k->prev->pools[old->pools[e]->idx]))
				mine[n++] = old->pools[e];
	for (size_t s = 0; s < k->n_shared_now; s++) {
		struct rf_pool *q = k->shared_now[s], *v = NULL;
		if (!rebuilt && !k->changed[q->idx]) {
			for (size_t e = 0; e < old->n_pools && !v; e++)
				if (old->pools[e]->idx == q->idx)
					v = old->pools[e];
		} else if (rf_model_pool_view(c, q, nd, &v) < 0) {
			goto out;
		}
		if (v && !shared_inert(q)) { /* even an empty view may warn */
			k->bail = true;
			r = 0;
			goto out;
		}
		if (!v || !rf_model_devices_on_node(v, nd, NULL))
			continue;
		mine[n++] = v;
	}
	qsort(mine, n, sizeof(*mine), pool_name_cmp);
	r = rf_model_attach_node_pools(c, nd, mine, n);
out:
	return r;
}

/* A node from its object, or (nj NULL) as a full build makes a node only slices name. */
static int
node_from(struct rf_cluster *c, struct rf_node *nd, const char *name, const json_t *nj)
{
	memset(nd, 0, sizeof(*nd));
	/* a name from slices is copied: the slice records of this layout go before the nodes
	 * later layouts share */
	nd->name = nj ? node_name(nj) : rf_arena_strdup(c->arena, name);
	nd->json = nj;
	nd->labels = rf_jpath(nj, "metadata.labels");
	nd->annotations = rf_jpath(nj, "metadata.annotations");
	nd->ready = nj ? rf_model_node_ready(nj) : true;
	return nd->name ? 0 : -ENOMEM;
}

static int
note_moved(struct rf_patch *p, const char *name)
{
	if (rf_grow(&p->moved, &p->cap_moved, p->n_moved + 1, sizeof(*p->moved)) < 0)
		return -ENOMEM;
	p->moved[p->n_moved++] = name;
	return 0;
}

/* Whether a Node's new object differs from the old one only in what a patch copies without
 * reading it: its status but allocatable (extended resources read it, alloc/demand_ext.c).
 * Labels and annotations are equal already (node_changed). */
static bool
status_only(const json_t *old, const json_t *now)
{
	if (!old)
		return false;
	return same_json(rf_jpath(old, "status.allocatable"), rf_jpath(now, "status.allocatable"));
}

/* A Node object a node of the layout points into (struct rf_layout.own_node_objs). */
static int
keep_node_obj(struct rf_layout *l, const json_t *obj)
{
	return json_array_append(l->own_node_objs, (json_t *)obj) < 0 ? -ENOMEM : 0;
}

/* Nodes: the previous ones, copies of those with a new object, rebuilt ones where labels,
 * annotations, pools or the object itself changed, and the added ones. */
static int
patch_nodes(struct rf_cluster *c, const struct rf_cluster *prev, struct patcher *k)
{
	struct rf_patch *p = k->p;
	struct rf_layout *l = c->layout;
	c->n_nodes = prev->n_nodes + k->n_new_nodes;
	c->nodes = l->own_nodes = calloc(c->n_nodes + 1, sizeof(*c->nodes));
	l->node_list =
		rf_arena_calloc(c->arena, p->n_nodes + k->n_new_nodes + 1, sizeof(*l->node_list));
	int r = -ENOMEM;
	if (!c->nodes || !l->node_list)
		goto out;
	if ((r = find_shared(c, k)) < 0 || (r = find_relisted(c, k)) < 0 || k->bail)
		goto out;
	r = -ENOMEM;
	memcpy(c->nodes, prev->nodes, prev->n_nodes * sizeof(*c->nodes));
	if (!(l->own_node_objs = json_array()))
		goto out;
	for (size_t i = 0; i < k->n_gone_nodes; i++) {
		c->nodes[k->gone_nodes[i]] = NULL;
		if (note_moved(p, prev->nodes[k->gone_nodes[i]]->name) < 0)
			goto out;
	}
	for (size_t i = 0; i < prev->n_nodes; i++) {
		if (k->node_state[i] == NODE_SAME || k->node_state[i] == NODE_GONE)
			continue;
		const struct rf_node *old = prev->nodes[i];
		const json_t *nj = k->node_json[i]  ? k->node_json[i]
				   : k->obj_gone[i] ? NULL
						    : old->json;
		struct rf_node *nd = rf_arena_alloc(c->arena, sizeof(*nd));
		if (!nd || (k->node_json[i] && k->node_state[i] != NODE_COPY &&
			    keep_node_obj(l, k->node_json[i]) < 0))
			goto out;
		if (k->node_state[i] == NODE_COPY) {
			*nd = *old; /* labels and annotations equal: derived facts stay */
			if (k->node_json[i] && status_only(old->json, nj)) {
				/* its Ready condition alone: what else railfit reads of it is the
				 * old object's, which an older layout holds (as a generation
				 * sharing its layout reads it): a chain keeps no object for each
				 * node's status change between two patches */
				nd->ready = rf_model_node_ready(nj);
			} else if (k->node_json[i]) {
				if (keep_node_obj(l, nj) < 0)
					goto out;
				nd->json = nj;
				nd->labels = rf_jpath(nj, "metadata.labels");
				nd->annotations = rf_jpath(nj, "metadata.annotations");
				nd->ready = rf_model_node_ready(nj);
			}
		} else if (node_from(c, nd, old->name, nj) < 0) {
			goto out;
		}
		nd->idx = old->idx;
		/* block and spine point into its own labels (a relisted node's, or one whose status
		 * alone changed, are its old ones) */
		if (k->node_state[i] != NODE_COPY || nd->json != old->json)
			rf_model_network_place(c, nd);
		c->nodes[i] = nd;
	}
	/* a shared pool changed: its nodes' lists; their facts do not read it (shared_inert) */
	for (size_t i = 0; i < p->n_relisted && !k->bail; i++) {
		unsigned idx = p->relisted[i];
		if ((r = compose_pools(c, k, c->nodes[idx], prev->nodes[idx], false)) < 0)
			goto out;
	}
	for (size_t i = 0; i < p->n_nodes && !k->bail; i++) {
		struct rf_node *nd = c->nodes[p->nodes[i]];
		if ((r = compose_pools(c, k, nd, NULL, true)) < 0 || k->bail ||
		    (r = rf_model_finish_node(c, nd)) < 0)
			goto out;
		l->node_list[l->n_nodes++] = nd; /* its decoded annotation is this layout's */
	}
	r = 0;
	if (k->bail)
		goto out;
	/* nodes added, at the next indexes: with their object, or as only slices name them */
	size_t new_objs = 0;
	for (size_t i = 0; i < k->n_new_nodes; i++) {
		const struct added_node *a = &k->new_nodes[i];
		struct rf_node *nd = rf_arena_alloc(c->arena, sizeof(*nd));
		r = -ENOMEM;
		if (!nd || (a->json && keep_node_obj(l, a->json) < 0) ||
		    node_from(c, nd, a->name, a->json) < 0)
			goto out;
		new_objs += a->json != NULL;
		nd->idx = (unsigned)(prev->n_nodes + i);
		rf_model_network_place(c, nd);
		c->nodes[nd->idx] = nd;
		if ((r = compose_pools(c, k, nd, NULL, true)) < 0 || k->bail)
			goto out;
		if ((r = rf_model_finish_node(c, nd)) < 0 || (r = note_moved(p, nd->name)) < 0)
			goto out;
		l->node_list[l->n_nodes++] = nd;
	}
	p->first_new_node = prev->n_nodes;
	p->n_new_nodes = k->n_new_nodes;
	p->n_gone_nodes = k->n_gone_nodes;
	size_t lost = 0;
	for (size_t i = 0; i < prev->n_nodes; i++)
		lost += k->obj_gone[i] && k->node_state[i] != NODE_GONE;
	l->n_node_objs = l->n_node_objs + new_objs + k->n_came - k->n_gone_objs - lost;
	l->node_holes += k->n_gone_nodes;
	l->nodes_appended = prev->layout->nodes_appended || k->n_new_nodes;
	/* front-end bandwidth of the rebuilt nodes only */
	struct rf_node **all = c->nodes, **rebuilt = l->node_list;
	size_t n_all = c->n_nodes;
	c->nodes = rebuilt;
	c->n_nodes = l->n_nodes;
	r = rf_model_node_frontend(c);
	c->nodes = all;
	c->n_nodes = n_all;
	if (r < 0 || (r = order_nodes(c, prev, k)) < 0)
		goto out;
	if (k->n_new_nodes || k->n_gone_nodes) {
		r = rf_model_index_node_names(c);
	} else { /* the same names at the same indexes: prev's index copied (each layout's goes
		  * with its last generation) */
		r = rf_model_copy_node_index(c, prev);
	}
out:
	return r;
}

/* Classes: shared when no DeviceClass changed; otherwise built again, each unchanged one (the
 * same object at the same index) replaced by its previous struct. Selector results are carried
 * over for unchanged classes and devices; a changed class's are evaluated again when asked. */
static int
patch_classes(struct rf_cluster *c, const struct rf_cluster *prev, struct rf_patch *p)
{
	bool same = same_elements(c->objs.classes, prev->layout->classes);
	int r;
	bool *keep = NULL;
	if (same) {
		c->classes = prev->classes;
		c->n_classes = prev->n_classes;
		c->class_memo = calloc(c->n_classes * c->n_devices + 1, sizeof(*c->class_memo));
		if (!c->class_memo)
			return -ENOMEM;
	} else if ((r = rf_model_build_classes(c, c->objs.classes)) < 0) {
		return r;
	}
	c->layout->class_memo = c->class_memo;
	if (!(keep = calloc(c->n_classes + 1, sizeof(*keep))))
		return -ENOMEM;
	r = 0;
	for (size_t i = 0; i < c->n_classes; i++) {
		const struct rf_class *old = rf_cluster_class(prev, c->classes[i]->name);
		keep[i] = same || (old && old->json == c->classes[i]->json && old->idx == i);
		if (keep[i])
			c->classes[i] = (struct rf_class *)old;
	}
	/* selector results of kept classes on devices that stay (readers of prev may be writing
	 * them: atomic loads) */
	unsigned char *gone = calloc(prev->n_devices + 1, 1);
	if (!gone)
		r = -ENOMEM;
	for (size_t q = 0; gone && q < p->n_pools; q++)
		memset(gone + p->old_pools[q]->first_gidx, 1, p->old_pools[q]->n_devices);
	for (size_t i = 0; r == 0 && i < c->n_classes; i++) {
		if (!keep[i])
			continue;
		atomic_uchar *dst = c->class_memo + i * c->n_devices;
		const atomic_uchar *src = prev->class_memo + i * prev->n_devices;
		for (size_t d = 0; d < prev->n_devices; d++)
			if (!gone[d])
				atomic_store_explicit(&dst[d],
						      atomic_load_explicit((atomic_uchar *)&src[d],
									   memory_order_relaxed),
						      memory_order_relaxed);
	}
	free(gone);
	free(keep);
	return r;
}

static void
put(struct rf_cluster *c, const char *w)
{
	if (c->n_warnings < MAX_WARNINGS)
		c->warnings[c->n_warnings++] = w;
}

/* The layout's warnings as a full build emits them: skipped slices, each pool's (its slices'
 * counters, their devices, the pool invalid), DeviceTaintRules', DeviceClasses', then per node
 * its topology annotation's and its front-end bandwidth's. c->warnings holds the classes'. */
static bool
pool_warns(const struct rf_pool *p)
{
	for (unsigned s = 0; s < p->n_slices; s++)
		if (p->slices[s]->n_counter_warnings || p->slices[s]->n_device_warnings)
			return true;
	return p->invalid;
}

static bool
node_warns(const struct rf_node *n)
{
	const char *fe = rf_jstr(n->annotations, "railfit.io/frontend-bandwidth");
	return n->topo_error || (fe && strcmp(n->fe_source, "annotation") != 0);
}

/* Whether the warnings of the layout, but the classes', are the previous layout's: the same
 * skipped slices, and no replaced pool or rebuilt node warns, before or after (the others are
 * the previous layout's, at the same places). */
static bool
warnings_carry(const struct patcher *k)
{
	const struct rf_patch *p = k->p;
	if (!k->skips_same || p->rules_changed)
		return false;
	for (size_t i = 0; i < p->n_pools; i++)
		if (pool_warns(p->old_pools[i]) || pool_warns(p->new_pools[i]))
			return false;
	for (size_t i = 0; i < p->n_added; i++)
		if (pool_warns(p->added[i]))
			return false;
	for (size_t i = 0; i < p->n_removed; i++)
		if (pool_warns(p->removed[i]))
			return false;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (node_warns(k->prev->nodes[p->nodes[i]]) || node_warns(k->c->nodes[p->nodes[i]]))
			return false;
	for (size_t i = 0; i < k->n_new_nodes; i++)
		if (node_warns(k->c->nodes[k->prev->n_nodes + i]))
			return false;
	for (size_t i = 0; i < k->n_gone_nodes; i++) /* its warnings go with it */
		if (node_warns(k->prev->nodes[k->gone_nodes[i]]))
			return false;
	return true;
}

static int
compose_warnings(struct rf_cluster *c, const struct rf_cluster *prev,
		 const struct rf_cluster_objects *objs, bool carry)
{
	const struct rf_layout *pl = prev->layout;
	struct rf_layout *l = c->layout;
	bool same_classes = same_elements(c->objs.classes, pl->classes);
	const char **cls = same_classes ? pl->warnings + pl->class_warnings[0] : c->warnings;
	size_t n_cls = same_classes ? pl->class_warnings[1] - pl->class_warnings[0] : c->n_warnings;
	c->warnings = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
	c->n_warnings = 0;
	if (!c->warnings)
		return -ENOMEM;
	if (carry) {
		/* the previous layout's, the classes' put in place of its classes' (it is below
		 * the bound: see rf_model_patch_layout) */
		for (size_t i = 0; i < pl->class_warnings[0]; i++)
			put(c, pl->warnings[i]);
		l->rule_warnings[0] = pl->rule_warnings[0];
		l->rule_warnings[1] = pl->rule_warnings[1];
		l->class_warnings[0] = pl->class_warnings[0];
		for (size_t i = 0; i < n_cls; i++)
			put(c, cls[i]);
		l->class_warnings[1] = c->n_warnings;
		for (size_t i = pl->class_warnings[1]; i < pl->n_warnings; i++)
			put(c, pl->warnings[i]);
		return 0;
	}
	for (size_t i = 0; i < objs->n_slice_recs; i++)
		if (objs->slice_recs[i]->skip)
			put(c, objs->slice_recs[i]->skip);
	for (size_t i = 0; i < c->n_pool_order; i++) {
		const struct rf_pool *p = c->pool_order[i];
		for (unsigned s = 0; s < p->n_slices; s++)
			for (size_t w = 0; w < p->slices[s]->n_counter_warnings; w++)
				put(c, p->slices[s]->counter_warnings[w]);
		for (unsigned s = 0; s < p->n_slices; s++)
			for (size_t w = 0; w < p->slices[s]->n_device_warnings; w++)
				put(c, p->slices[s]->device_warnings[w]);
		if (p->invalid)
			rf_cluster_warn(c,
					"pool %s/%s: %s; the allocator treats the pool as invalid",
					p->driver, p->name, rf_model_pool_problem(c, p));
	}
	l->rule_warnings[0] = c->n_warnings;
	if (c->patch->rules_changed)
		for (size_t i = 0; i < c->patch->n_rule_warns; i++)
			put(c, c->patch->rule_warns[i]);
	else
		for (size_t i = pl->rule_warnings[0]; i < pl->rule_warnings[1]; i++)
			put(c, pl->warnings[i]);
	l->rule_warnings[1] = l->class_warnings[0] = c->n_warnings;
	for (size_t i = 0; i < n_cls; i++)
		put(c, cls[i]);
	l->class_warnings[1] = c->n_warnings;
	for (size_t i = 0; i < c->n_node_order; i++)
		if (c->node_order[i]->topo_error)
			rf_cluster_warn(c, "node %s: %s; using DRA attributes",
					c->node_order[i]->name, c->node_order[i]->topo_error);
	for (size_t i = 0; i < c->n_node_order; i++) {
		const struct rf_node *n = c->node_order[i];
		const char *fe = rf_jstr(n->annotations, "railfit.io/frontend-bandwidth");
		if (fe && strcmp(n->fe_source, "annotation") != 0)
			rf_model_warn_frontend(c, n, fe);
	}
	return 0;
}

/* The layout's parts back to nothing, for a full build to start from. */
static void
unpatch(struct rf_cluster *c)
{
	rf_model_layout_unref(c->layout);
	c->layout = NULL;
	c->arena = NULL;
	c->warnings = NULL;
	c->n_warnings = 0;
	c->nodes = NULL;
	c->n_nodes = 0;
	c->node_order = NULL;
	c->n_node_order = 0;
	c->pools = NULL;
	c->n_pools = 0;
	c->pool_order = NULL;
	c->n_pool_order = 0;
	c->devices = NULL;
	c->n_devices = 0;
	c->classes = NULL;
	c->n_classes = 0;
	c->templates = NULL;
	c->n_templates = 0;
	c->node_slots = NULL;
	c->node_mask = 0;
	c->node_names = NULL;
	c->class_memo = NULL;
	c->dev_taints = NULL;
	c->node_stamps = NULL;
	c->n_node_stamps = 0;
	rf_model_patch_free(c->patch);
	c->patch = NULL;
}

/* What a chain may keep for replaced pieces: as much as its full build (a patch that rebuilt
 * hundreds of nodes keeps hundreds of nodes' pieces), and never less than CHAIN_KEPT_MIN. */
static size_t
chain_kept_max(const struct rf_layout *l)
{
	return l->full_bytes > CHAIN_KEPT_MIN ? l->full_bytes : CHAIN_KEPT_MIN;
}

void
rf_model_patch_account(struct rf_cluster *c)
{
	struct rf_layout *l = c->layout;
	size_t built =
		rf_arena_used(l->arena) + json_array_size(l->own_node_objs) * sizeof(json_t *);
	for (size_t i = 0; i < l->n_lent; i++) /* what it built its pools from */
		built += rf_arena_used(l->lent[i]->arena);
	/* what it built stands for what it replaced, which the chain keeps */
	l->chain_kept = l->base->chain_kept + built;
	l->chain_objs = l->base->chain_objs + json_array_size(l->own_node_objs);
}

static size_t
chain_objs_max(const struct rf_layout *l)
{
	return l->n_node_objs > CHAIN_OBJS_MIN ? l->n_node_objs : CHAIN_OBJS_MIN;
}

/* past `depth` patches, or halfway to any other bound rf_model_patch_layout keeps */
static bool
worn_past(const struct rf_cluster *c, unsigned depth)
{
	const struct rf_layout *l = c->layout;
	return l->patched && (l->depth >= depth || l->chain_kept > chain_kept_max(l) / 2 ||
			      l->chain_objs > chain_objs_max(l) / 2 ||
			      (l->holes && l->holes * 8 > c->n_devices) ||
			      (l->pool_holes && l->pool_holes * 8 > c->n_pools) ||
			      (l->node_holes && l->node_holes * 8 > c->n_nodes) ||
			      l->relisted * 2 > RELIST_MAX * c->n_nodes + 64);
}

bool
rf_cluster_layout_worn(const struct rf_cluster *c)
{
	return worn_past(c, PATCH_DEPTH_WORN);
}

bool
rf_cluster_layout_halfway(const struct rf_cluster *c)
{
	return worn_past(c, PATCH_DEPTH_MAX / 2);
}

int
rf_model_patch_layout(struct rf_cluster *c, const struct rf_cluster *prev,
		      const struct rf_cluster_objects *objs)
{
	const struct rf_layout *pl = prev->layout;
	if (!objs->slice_recs || !pl->from_recs || pl->dup_names ||
	    pl->n_warnings >= MAX_WARNINGS || pl->depth >= PATCH_DEPTH_MAX ||
	    pl->chain_kept > chain_kept_max(pl) || pl->chain_objs > chain_objs_max(pl))
		return 0;
	struct patcher k = { .c = c,
			     .prev = prev,
			     .cur = objs->slice_recs,
			     .n_cur = objs->n_slice_recs,
			     .all_single = 1 };
	int r = -ENOMEM;
	if (!(c->patch = k.p = calloc(1, sizeof(*k.p))) ||
	    !(k.node_state = calloc(prev->n_nodes + 1, 1)) ||
	    !(k.node_json = calloc(prev->n_nodes + 1, sizeof(*k.node_json))) ||
	    !(k.obj_gone = calloc(prev->n_nodes + 1, 1)) ||
	    !(k.relist = calloc(prev->n_nodes + 1, 1)) || (r = scan_shared(&k)) < 0 ||
	    (r = new_layout(c, prev, objs)) < 0 || (r = diff_slices(&k)) < 0 || k.bail ||
	    (r = diff_nodes(&k)) < 0 || k.bail || (r = diff_rules(&k)) < 0 || k.bail ||
	    (r = close_over(&k)) < 0 || k.bail || (r = drop_unnamed(&k)) < 0 || k.bail ||
	    (r = retaint_nodes(&k)) < 0 || k.bail || (k.bail = c->layout->dup_names))
		goto out;
	/* holes beyond a quarter of the devices: a full build compacts them */
	size_t holes = pl->holes;
	for (size_t i = 0; i < k.p->n_pools; i++)
		if (k.p->new_pools[i]->n_devices != k.p->old_pools[i]->n_devices)
			holes += k.p->old_pools[i]->n_devices;
	for (size_t i = 0; i < k.p->n_removed; i++)
		holes += k.p->removed[i]->n_devices;
	/* and beyond a quarter of the pools' or the nodes' indexes */
	size_t pool_holes = pl->pool_holes + k.p->n_removed,
	       node_holes = pl->node_holes + k.n_gone_nodes;
	if ((holes && holes * 4 > prev->n_devices) ||
	    (pool_holes && pool_holes * 4 > prev->n_pools) ||
	    (node_holes && node_holes * 4 > prev->n_nodes)) {
		k.bail = true;
		goto out;
	}
	/* a node seeing an older generation of a pool warns between the rules' and the classes'
	 * warnings (rf_model_pool_view), which compose_warnings does not place: built in full
	 * while one does, before or after (a driver's upgrade, for a while) */
	c->n_view_warnings = 0;
	if (pl->class_warnings[0] != pl->rule_warnings[1]) {
		k.bail = true;
		goto out;
	}
	if ((r = patch_devices(c, prev, k.p)) < 0 || (r = patch_taints(c, prev, &k)) < 0 ||
	    (r = patch_nodes(c, prev, &k)) < 0 || k.bail ||
	    (r = patch_node_stamps(c, prev, &k)) < 0)
		goto out;
	if (c->n_view_warnings) {
		k.bail = true;
		goto out;
	}
	if (c->n_warnings >= MAX_WARNINGS) { /* the rules' warnings may be cut short */
		k.bail = true;
		goto out;
	}
	c->n_warnings = 0; /* the classes' own, then all of them in the full build's order */
	if ((r = patch_classes(c, prev, k.p)) < 0 || (r = rf_model_build_templates(c)) < 0 ||
	    (r = compose_warnings(c, prev, objs, warnings_carry(&k))) < 0)
		goto out;
	c->layout->warnings = c->warnings;
	c->layout->n_warnings = c->n_warnings;
	r = 1;
out:
	free(k.node_state);
	free(k.node_json);
	free(k.restamp);
	free(k.obj_gone);
	free(k.new_nodes);
	free(k.gone_nodes);
	free(k.shared_prev);
	free(k.relist);
	free(k.shared_now);
	free(k.changed);
	free(k.scratch);
	free(k.retaint);
	if (r <= 0 || k.bail) {
		unpatch(c);
		return r < 0 ? r : 0;
	}
	return 1;
}

/* ---- claims ---- */

static bool
claim_touched(const struct rf_patch *p, const struct rf_claim *cl)
{
	for (size_t i = 0; i < cl->n_results; i++) {
		const struct rf_alloc_result *ar = &cl->results[i];
		for (size_t q = 0; q < p->n_pools && ar->driver && ar->pool; q++) {
			const struct rf_pool *o = p->old_pools[q];
			/* a device found is one of the old pool's when its gidx is (the previous
			 * layout's claims point into it): no string read */
			if (ar->dev ? ar->gidx >= o->first_gidx &&
					      ar->gidx - o->first_gidx < o->n_devices
				    : strcmp(ar->pool, o->name) == 0 &&
					      strcmp(ar->driver, o->driver) == 0)
				return true;
		}
	}
	return false;
}

/* A result of the claim is a device of a removed pool, or names an added pool (found now). */
static bool
claim_pools_came_or_went(const struct rf_patch *p, const struct rf_claim *cl)
{
	for (size_t i = 0; i < cl->n_results; i++) {
		const struct rf_alloc_result *ar = &cl->results[i];
		for (size_t q = 0; ar->dev && q < p->n_removed; q++) {
			const struct rf_pool *o = p->removed[q];
			if (ar->gidx >= o->first_gidx && ar->gidx - o->first_gidx < o->n_devices)
				return true;
		}
		for (size_t q = 0; !ar->dev && ar->driver && ar->pool && q < p->n_added; q++)
			if (pool_is(p->added[q], ar->driver, ar->pool))
				return true;
	}
	return false;
}

static struct relinked *
relink_slot(const struct relink_map *m, const void *old)
{
	size_t i = ptr_hash(old) & m->mask;
	while (m->v[i].old && m->v[i].old != old)
		i = (i + 1) & m->mask;
	return &m->v[i];
}

/* The claims of prev whose results name what the patch replaced, removed or added: copies
 * relinked to c's layout into the table. */
static int
relink_claims(struct rf_cluster *c, const struct rf_cluster *prev, struct relink_map *m,
	      struct rf_strtab *st)
{
	struct rf_patch *p = c->patch;
	/* the previous generation's claims by position in its array (its objects): a claim
	 * that stayed is that struct, whatever the table holds now (a build from the same
	 * generation may have relinked it already, and failed) */
	const json_t *objs = prev->objs.claims;
	size_t n = json_array_size(objs);
	if (!prev->claim_vals || prev->n_claim_vals != n)
		return -EAGAIN;
	/* the old copies stay in the table's arena: a change that touches many claims (pools
	 * most of them hold devices of) starts a new table instead, which relinks everything
	 * once and drops the old copies with the old table */
	size_t budget = n / 8 + 16;
	size_t *touched = malloc((budget + 1) * sizeof(*touched)), n_touched = 0;
	if (!touched)
		return -ENOMEM;
	/* which ones first: past the budget nothing is relinked in this table at all */
	for (size_t i = 0; i < n && n_touched <= budget; i++) {
		const struct rf_claim *old = prev->claim_vals[i];
		if (old && (claim_touched(p, old) || claim_pools_came_or_went(p, old)) &&
		    n_touched++ < budget)
			touched[n_touched - 1] = i;
	}
	int r = n_touched > budget ? -EAGAIN : 0;
	for (size_t t = 0; t < n_touched && r == 0; t++) {
		size_t i = touched[t];
		const struct rf_claim *old = prev->claim_vals[i];
		struct relinked *e = relink_slot(m, old);
		if (e->old)
			continue; /* one object twice in the array */
		struct reuse_slot *slot = rf_reuse_find(c->reuse, json_array_get(objs, i));
		if (!slot || slot->obj != json_array_get(objs, i)) {
			r = -EAGAIN;
			break;
		}
		/* the previous generations keep the old copy (the table's arena holds both) */
		void *v = rf_model_relink_claim(c, st, old);
		if (!v) {
			r = -EAGAIN;
			break;
		}
		*e = (struct relinked){ old, v, false };
		m->n++;
		slot->val = v;
		c->relinked_into = true;
	}
	free(touched);
	return r;
}

/* The patch added or removed the node of this name (its pods' node index changes). */
static bool
node_moved(const struct rf_patch *p, const char *name)
{
	for (size_t i = 0; i < p->n_moved; i++)
		if (strcmp(p->moved[i], name) == 0)
			return true;
	return false;
}

/* The pod as c's: the same but for its node index, found again by name (a hole is no node). The
 * copy shares the strings of the old one, which the same table holds. */
static struct rf_pod *
relinked_pod(struct rf_cluster *c, const struct rf_pod *old)
{
	struct rf_pod *p = rf_arena_alloc(c->reuse->arena, sizeof(*p));
	if (!p)
		return NULL;
	*p = *old;
	memset(&p->marks, 0, sizeof(p->marks));
	/* found anew: the cache is the old struct's (marks say whether it is current) */
	p->claims_found = old->n_claim_names ? rf_arena_calloc(c->reuse->arena, old->n_claim_names,
							       sizeof(*p->claims_found))
					     : NULL;
	if (old->n_claim_names && !p->claims_found)
		return NULL;
	const struct rf_node *n = rf_cluster_node(c, old->node_name);
	p->node_idx1 = n ? n->idx + 1 : 0;
	return p;
}

/* The pods of prev bound to a node the patch added or removed: copies with the node's new index
 * (or none) into the table, as the claims (a node leaving or coming back with pods bound to it
 * costs a few pods, not a new table). */
static int
relink_pods(struct rf_cluster *c, const struct rf_cluster *prev, struct relink_map *m,
	    size_t budget)
{
	const json_t *objs = prev->objs.pods;
	size_t n = json_array_size(objs), done = 0;
	if (!prev->pod_vals || prev->n_pod_vals != n)
		return -EAGAIN;
	for (size_t i = 0; i < n; i++) {
		const struct rf_pod *old = prev->pod_vals[i];
		if (!old || !old->node_name || !node_moved(c->patch, old->node_name))
			continue;
		struct relinked *e = relink_slot(m, old);
		if (e->old)
			continue; /* one object twice in the array */
		struct reuse_slot *slot = rf_reuse_find(c->reuse, json_array_get(objs, i));
		if (++done > budget || !slot || slot->obj != json_array_get(objs, i))
			return -EAGAIN;
		struct rf_pod *v = relinked_pod(c, old);
		if (!v)
			return -ENOMEM;
		*e = (struct relinked){ old, v, false };
		m->n++;
		m->n_pods++;
		slot->val = v;
		c->relinked_into = true;
	}
	return 0;
}

int
rf_model_patch_claims(struct rf_cluster *c, const struct rf_cluster *prev)
{
	struct rf_patch *p = c->patch;
	bool pools = p && (p->n_pools || p->n_added || p->n_removed);
	if (!pools && (!p || !p->n_moved))
		return 0;
	size_t pod_budget = json_array_size(prev->objs.pods) / 8 + 16;
	size_t budget = json_array_size(prev->objs.claims) / 8 + 16 + pod_budget, cap = 16;
	while (cap < 2 * budget + 2)
		cap *= 2;
	struct rf_strtab *st = rf_strtab_new(c->reuse->arena);
	struct relink_map *m = calloc(1, sizeof(*m));
	int r = -ENOMEM;
	if (!st || !m || !(m->v = calloc(cap, sizeof(*m->v)))) {
		if (m)
			free(m->v);
		free(m);
		goto out;
	}
	m->mask = cap - 1;
	p->relinked = m;
	r = pools ? relink_claims(c, prev, m, st) : 0;
	if (r == 0 && p->n_moved)
		r = relink_pods(c, prev, m, pod_budget);
out:
	rf_strtab_free(st);
	return r;
}

int
rf_model_patch_walk(const struct rf_cluster *c, struct rf_walk *w)
{
	struct relink_map *m = c->patch ? c->patch->relinked : NULL;
	bool pods = w->arr == c->objs.pods;
	if (!m || !(pods ? m->n_pods : m->n - m->n_pods))
		return 0; /* none of this kind relinked */
	/* the elements the walk found at their place are the previous generation's structs */
	size_t n = json_array_size(w->arr);
	void **gone = realloc(w->gone, (w->n_gone + m->n + 1) * sizeof(*gone));
	if (gone)
		w->gone = gone;
	void **fresh = realloc(w->fresh, (w->n_fresh + m->n + 1) * sizeof(*fresh));
	if (fresh)
		w->fresh = fresh;
	if (!gone || !fresh)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!w->vals[i])
			continue;
		struct relinked *e = relink_slot(m, w->vals[i]);
		if (!e->old)
			continue;
		if (!e->walked) { /* the same object twice: one struct, gone and come once */
			e->walked = true;
			w->gone[w->n_gone++] = w->vals[i];
			w->fresh[w->n_fresh++] = e->now;
		}
		w->vals[i] = e->now;
	}
	return 0;
}

bool
rf_model_patched_from(const struct rf_cluster *c, const struct rf_cluster *prev)
{
	return c->patch && c->layout && c->layout->base == prev->layout;
}

void
rf_model_patch_touched(const struct rf_cluster *c, unsigned char *pools, unsigned char *nodes)
{
	const struct rf_patch *p = c->patch;
	for (size_t i = 0; p && i < p->n_pools; i++)
		pools[p->new_pools[i]->idx] = 1;
	for (size_t i = 0; p && i < p->n_added; i++)
		pools[p->added[i]->idx] = 1;
	for (size_t i = 0; p && i < p->n_nodes; i++)
		nodes[p->nodes[i]] = 1;
	for (size_t i = 0; p && i < p->n_relisted; i++)
		nodes[p->relisted[i]] = 1;
	for (size_t i = 0; p && i < p->n_new_nodes; i++)
		nodes[p->first_new_node + i] = 1;
}

bool
rf_model_patch_same_pool_sets(const struct rf_cluster *c)
{
	const struct rf_patch *p = c->patch;
	if (p && (p->n_added || p->n_removed || p->n_new_nodes || p->n_gone_nodes))
		return false;
	for (size_t i = 0; p && i < p->n_nodes + p->n_relisted; i++) {
		unsigned idx = i < p->n_nodes ? p->nodes[i] : p->relisted[i - p->n_nodes];
		const struct rf_node *a = c->nodes[idx], *b = c->prev->nodes[idx];
		if (a->n_pools != b->n_pools)
			return false;
		for (size_t k = 0; k < a->n_pools; k++)
			if (a->pools[k]->idx != b->pools[k]->idx)
				return false;
	}
	return p != NULL;
}
