/* Internals of the cluster model shared by alloc/model*.c: the generation struct and the build
 * steps, in the order rf_cluster_build() runs them. Never included outside alloc/. */
#ifndef RF_ALLOC_MODEL_PRIVATE_H
#define RF_ALLOC_MODEL_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "alloc/alloc-private.h"

#define MAX_WARNINGS  256
#define RF_TAINTS_OWN ((size_t)-1) /* struct rf_cluster.dev_taints */

/** Count a patched layout's own bytes into its chain's (struct rf_layout.chain_kept): once its
 * build is done, its arena holds all it built. */
void rf_model_patch_account(struct rf_cluster *c);

/** A new stamp (struct rf_node.rev): process-wide, larger than every one before. */
uint64_t rf_model_next_stamp(void);

struct group_rails {
	uint64_t hash; /* rf_group_hash(group): sorting compares no strings but on a tie */
	const char *group;
	unsigned node_idx;
	uint64_t rails;
	const struct rf_pod *pod; /* whose entry (model-delta.c replaces a pod's entries) */
};

/* A running pod of a group on a node (the locality part): sorted by group hash, group, then
 * node. */
struct group_node {
	uint64_t hash; /* rf_group_hash(group) */
	const char *group;
	unsigned node_idx;
	const struct rf_pod *pod;
};

/* A claim a running pod names (by rf_claim_key_hash), sorted by hash then pod: which pods'
 * usage a changed claim touches (model-delta.c). */
struct claim_ref {
	uint64_t hash;
	const struct rf_pod *pod;
};

/* The nodes that see each pool (the inverse of rf_node.pools), built on first use by
 * model-delta.c: a pool whose usage changed changes the fingerprint of these nodes only. */
struct pool_nodes {
	size_t *first; /* by pool idx: nodes first[p] .. first[p + 1] - 1 of idx */
	unsigned *idx;
};

/* One rail group: its range of group_rails entries (sorted by node), the rails it uses anywhere
 * and the rails it uses on two or more nodes, so that "rails on nodes other than N" costs two
 * binary searches instead of a scan of every pod. */
struct group_index { /* struct rf_group of model.h */
	uint64_t hash;
	const char *group;
	size_t first, n;
	uint64_t any, multi;
};

struct rf_layout;

/* A layout's ResourceSlices (references) and their keys (rf_layout.slice_arrays), reference
 * counted (atomically: layouts go on any thread). */
struct rf_slice_arrays {
	atomic_int refs;
	struct rf_slice **slices;
	uint64_t *keys;
	size_t n; /* of slices, referenced */
};

/* Room for n slices, set as l's (one reference). @return 0 or -ENOMEM. */
int rf_model_slice_arrays_new(struct rf_layout *l, size_t n);
/* l shares from's (the same records in the same order): takes a reference on from's arrays,
 * which from only points to. */
void rf_model_slice_arrays_share(struct rf_layout *l, const struct rf_layout *from);

/* What the generations built from the same nodes, slices, classes (and configuration) share:
 * nodes, pools, devices, classes and everything derived from them alone. Built once by a full
 * build, then only read; the generations that use it hold a reference. Its arrays are copied
 * (pointers, not contents) into each generation's struct rf_cluster. */
struct rf_layout {
	atomic_int refs;  /* generations using it, and layouts patched from it */
	atomic_int users; /* generations using it: at 0 its own arrays go (model-patch.c) */
	struct rf_arena *arena;
	/* objects it points into; nodes: every Node object while a generation uses the layout
	 * (diff_nodes and refresh_ready read it), then for a patched layout only those its own
	 * nodes point into (own_node_objs) */
	json_t *nodes, *classes, *templates;
	struct rf_slice **slices; /* the ResourceSlices its pools were made of */
	size_t n_slices;
	uint64_t *slice_keys; /* of each of slices: rf_model_slice_key() */
	/* owns slices and slice_keys (read only: another layout may share them): shared by the
	 * layouts patched from one another while the slices stay the same records (a Node label
	 * or class event referenced and copied all 10,000 of them at 5,000 nodes) */
	struct rf_slice_arrays *slice_arrays;
	struct rf_node **node_list; /* to free the decoded annotations */
	size_t n_nodes;
	atomic_uchar *class_memo;
	size_t n_warnings; /* the first n of the building generation's warnings are the layout's */
	const char **warnings;
	/* programs compiled outside the full process-wide CEL cache (claims' selectors), freed
	 * with the layout: claims are reused by later generations (struct rf_reuse), and template
	 * claims are parsed at request time on any thread: hence the lock */
	pthread_mutex_t extra_lock;
	struct rf_cel_program **extra_programs;
	size_t n_extra, cap_extra;
	struct pool_nodes *pool_nodes; /* NULL until a delta build needs it (under extra_lock) */
	/* a layout patched from another (model-patch.c) shares that one's unchanged pools, devices,
	 * nodes and classes, so it holds it (base) until it goes; depth counts the chain, holes the
	 * gidx of replaced devices no pool uses any more */
	struct rf_layout *base;
	bool patched, from_recs; /* from_recs: its slices are the caller's parsed records */
	/* a pool has two devices of one name: which one a claim's result finds depends on how
	 * devices are searched (the full build's one sorted array), so such layouts are not
	 * patched */
	bool dup_names;
	unsigned depth;
	/* bytes the chain's patched layouts up to this one keep for pieces they replaced (their
	 * arenas and object arrays: rf_model_patch_account), until a full build starts a new
	 * chain; and the arena bytes of the chain's full build */
	size_t chain_kept, full_bytes;
	/* Node objects the chain's patched layouts keep (own_node_objs): their size is not
	 * counted above, so their number is bounded by the nodes' (a full build past it) */
	size_t chain_objs;
	size_t holes;
	size_t pool_holes; /* idx of removed pools (c->pools NULL there) */
	/* a patch added nodes: their indexes come after the others', not in name order */
	bool nodes_appended;
	size_t node_holes; /* idx of removed nodes (c->nodes NULL there) */
	/* node copies the chain made for shared pools' changes (model-patch.c relisted): their
	 * arenas hold them until a full build starts a new chain */
	size_t relisted;
	size_t n_node_objs; /* nodes with an object (the others only slices name) */
	/* a patched layout's arrays of every pool, device and node (malloc'd: they go when no
	 * generation uses the layout, while layouts patched from it may still share its pieces) */
	void *own_pools, *own_devices, *own_nodes;
	/* what only the generations using it read too (malloc'd, gone with the arrays above: a
	 * chain of patches keeps none of them for its dead layouts): the pools and nodes by
	 * name of a patched layout, and the node name index of any layout (rf_cluster.node_slots
	 * and node_names, one block of node_index_size bytes) */
	void *own_pool_order, *own_node_order, *own_node_index;
	size_t node_index_size;
	/* a patched layout's taints of every device by gidx (rf_cluster.dev_taints), gone with
	 * the arrays above */
	void *own_dev_taints;
	void *own_node_stamps; /* rf_cluster.node_stamps, the same way */
	/* a patched layout's Node objects its own nodes point into: once no generation uses it,
	 * what it keeps of the objects instead of every Node (nodes, 8 bytes per node) */
	json_t *own_node_objs;
	/* the ranges of warnings[] that DeviceTaintRules and DeviceClasses gave, [first, end) */
	size_t rule_warnings[2], class_warnings[2];
	/* ResourceSlices whose devices its pools use themselves (struct rf_slice.lent), each
	 * with a reference: the loans end when its arena goes */
	struct rf_slice **lent;
	size_t n_lent, cap_lent;
};

/* Claims and pods parsed once and reused by later generations of the same layout as long as the
 * store hands over the same object (the store keeps an object until it changes). Appended to by
 * the building thread only (one build at a time per chain of generations); generations only read
 * the claims and pods they point at. Holds a reference to each object it parsed. */
struct rf_reuse {
	atomic_int refs;
	struct rf_arena *arena;
	struct reuse_slot {
		const json_t *obj; /* NULL = empty */
		void *val;         /* struct rf_claim * or struct rf_pod *; NULL = skipped */
		json_t *keep;      /* the object expanded from obj that val points into, or NULL */
		const char **warnings; /* NULL-terminated, or NULL for none (32-byte slots) */
	} * slots;
	size_t mask, used;
	size_t live;          /* objects the latest generation used */
	unsigned long marker; /* the latest build's mark (struct rf_build_marks) */
	bool sealed; /* no build follows: the objects were released, the keys mean nothing */
	/* a build that failed relinked claims in it to its layout, which went with it: the next
	 * build starts a new table (relinking from this one by names, as always) */
	bool abandoned;
};

struct rf_cluster {
	atomic_int refs;
	struct rf_arena *arena; /* this generation's: usage, claims and pods' arrays */
	struct rf_layout *layout;
	struct rf_reuse *reuse;
	const struct rf_cluster
		*prev; /* while building: the generation this one follows, or NULL */
	const struct rf_config *cfg;
	struct rf_cel_cache *cel;
	struct rf_cluster_objects objs;                     /* references held */
	json_t *(*expand)(const json_t *v, void *userdata); /* objs.expand */
	void *expand_userdata;
	struct rf_cluster_counts counts;

	/* by idx: name order but for nodes a patch added (at the end) or removed (NULL holes) */
	struct rf_node **nodes;
	size_t n_nodes;
	struct rf_node **node_order; /* by name (c->nodes itself after a full build) */
	size_t n_node_order;
	struct rf_pool **pools; /* by idx: a patched layout's may hold holes (NULL) */
	size_t n_pools;
	/* the pools sorted by driver, then name, without holes (c->pools itself after a full
	 * build): lookups by name and whatever lists pools in order */
	struct rf_pool **pool_order;
	size_t n_pool_order;
	struct rf_device **devices; /* all, sorted by driver, pool, name */
	size_t n_devices;
	/* while rf_model_build_claims runs on a fresh table (rf_model_index_devices), or NULL */
	struct rf_device **dev_index;
	size_t dev_index_mask;
	struct rf_claim **claims; /* sorted by ns, name */
	size_t n_claims;
	struct rf_class **classes;
	size_t n_classes;
	struct rf_pod **pods;
	size_t n_pods;
	struct rf_pod **pods_by_uid; /* pods with a uid, sorted by it */
	size_t n_pods_by_uid;
	const json_t **templates;
	size_t n_templates;
	struct group_rails *group_rails; /* sorted by group hash, group, then node index */
	size_t n_group_rails;
	struct group_index *groups; /* sorted by group hash, then group */
	bool claim_dups; /* two claims share a namespace and name (see rf_model_index_claims) */
	size_t n_groups;
	struct group_node *group_nodes; /* every running pod with a group and a node */
	size_t n_group_nodes;

	const char **warnings;
	size_t n_warnings;

	/* claims by rf_claim_key_hash (open addressing, at most half full) */
	struct claim_slot {
		uint64_t hash;
		const struct rf_claim *claim; /* NULL = empty */
	} * claim_slots;
	size_t claim_mask;

	/* by device gidx: blocks of RF_USE_BLOCK entries, shared with the generation this one was
	 * built from until written (model-use.c); read rf_model_use(), write rf_model_use_write()
	 */
	struct rf_use_block **use;
	size_t n_use;
	struct rf_node_use *node_use; /* by node idx */

	/* usage from the previous generation's plus what changed (model-delta.c) */
	uint64_t *pool_fp;            /* usage fingerprint of each pool, by pool idx */
	struct claim_ref *claim_refs; /* of the running pods, sorted */
	size_t n_claim_refs;
	/* the allocations warned (a device held twice, a consumedCapacity not understood) or held
	 * a quantity too large to take back exactly: the next generation walks every claim */
	bool usage_inexact;
	bool usage_delta;   /* usage was computed from the previous generation's */
	bool walk_usage;    /* rf_cluster_objects.walk_usage */
	bool arrays_frozen; /* rf_cluster_objects.arrays_frozen */
	/* what each element of objs.claims and objs.pods is (the claim or pod, NULL when skipped),
	 * and whether one of them was warned about: the next build compares its arrays with these
	 * by position (model-walk.c) */
	void **claim_vals, **pod_vals;
	size_t n_claim_vals, n_pod_vals;
	bool claims_warned, pods_warned;
	struct usage_delta *delta; /* while building: the claims and pods that changed, or NULL */

	struct rf_memo *memo; /* verdicts per demand shape (shared along a chain of generations) */
	/* while building on a new layout: the previous generation's table, whose claims and pods
	 * are relinked (model-relink.c) rather than parsed again; NULL otherwise */
	const struct rf_reuse *relink_from;
	/* while building: request arrays relinked into `into` (model-relink.c), by a hash of
	 * their content: a claim whose requests equal one's there (claims of one template) shares
	 * them instead of a copy of its own (nothing writes a claim's requests once parsed) */
	struct relinked_requests {
		const struct rf_reuse *into;
		const struct rf_request
			*from; /* the copied claim's, in a table that outlives the build */
		size_t n;
		struct rf_request *to;
	} relinked_requests[16];
	/* node name -> node: open addressing over slots holding the index + 1 (0 = empty), the
	 * hash's high bits, and the name's offset in one contiguous text, so that a lookup touches
	 * no node struct and no scattered string (it runs for every node of every request) */
	struct node_slot {
		uint32_t idx1, hash_hi, name_off;
	} * node_slots; /* NULL while building */
	size_t node_mask;
	/* the names' text; the same block holds each index's name offset (rf_cluster_node_hint:
	 * the count, then one offset per index, a hole's marked) */
	char *node_names;

	/* Ready of each node by index when a generation shares a layout built from other Node
	 * objects (only their status changed, see rf_cluster_build_next); NULL: the nodes' own */
	bool *node_ready;

	/* class selector results per (class, device): 0 unknown, 1 no, 2 yes, 3 error; the
	 * layout's */
	atomic_uchar *class_memo;
	/* every device's taints by gidx (the layout's), when a patch changed what DeviceTaintRules
	 * put on devices it kept (model-patch.c: a rule over a whole driver touches every node's
	 * pools; copying them would cost a full build), and the layouts patched from it; NULL:
	 * the devices' own. An entry of n RF_TAINTS_OWN: that device's own (a device the layout
	 * that holds it made, with the rules of the time: every pool of a chain's full build, and
	 * the pools a patch built). Read through rf_device_taints(). */
	struct rf_taint_span *dev_taints;
	/* by node idx, when dev_taints changed under nodes a patch kept (the layout's, as
	 * dev_taints; NULL: none): a stamp that rf_node_rev() takes when newer than the node's
	 * rev, so that verdicts remembered before the taints changed are not taken for current
	 * ones (alloc/memo.c), without copying the nodes (5,000 of them for a rule over a driver)
	 */
	uint64_t *node_stamps;
	size_t n_node_stamps;

	/* while building on a patched layout: what changed (model-patch.c), else NULL */
	struct rf_patch *patch;
	/* warnings of a node seeing an older generation of a pool (model-pool-view.c): a full
	 * build places them with the nodes', which a patch does not compose */
	size_t n_view_warnings;
	/* the build put claims relinked to its layout into the previous generation's table */
	bool relinked_into;
	/* its layout's pools may use their slices' devices in place (rf_model_build_pool) */
	bool lend_devices;
	/* while building a layout in full: rf_cluster_objects.stop, asked between the steps and
	 * every stop_every pools, nodes, claims and pods (rf_model_stopping), else NULL */
	bool (*stop)(void *userdata);
	void *stop_userdata;
	unsigned stop_every;
};

/* how many pools, nodes, claims or pods a full build makes or relinks between two stop checks
 * (the live store's check takes its lock: not at every item) */
#define RF_STOP_EVERY 1024

/** -ECANCELED when c is asked to stop at the i-th item of a loop (every stop_every), else 0. */
static inline int
rf_model_stopping(const struct rf_cluster *c, size_t i)
{
	return c->stop && i % c->stop_every == 0 && c->stop(c->stop_userdata) ? -ECANCELED : 0;
}

/** Record a warning (an object skipped and why); bounded to MAX_WARNINGS. */
void rf_cluster_warn(struct rf_cluster *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int rf_model_cmp_nsname(const char *ans, const char *an, const char *bns, const char *bn);
/** A hash of the slice's driver and pool (never 0), or 0 for a slice the model skips: a patch
 * finds a pool's slices among thousands without reading each one. */
uint64_t rf_model_slice_key(const struct rf_slice *s);
uint64_t rf_model_pool_key(const char *driver, const char *pool);
bool rf_model_strv_has(const struct rf_strv *v, const char *s);
bool rf_model_is_partition(const struct rf_device *d);

/* model-devices.c: slices to pools and devices, highest generation, completeness, counters */
int rf_model_build_pools(struct rf_cluster *c, struct rf_slice *const *slices, size_t n);

/** Add the taints of DeviceTaintRules (an array, may be NULL) to the devices they select; a rule
 * that cannot be understood becomes a warning. @return 0 or -ENOMEM. */
int rf_model_apply_taint_rules(struct rf_cluster *c, const json_t *rules);
/** The devices a DeviceTaintRule selects (driver, pool, device: NULL = any; borrowed from the
 * rule), or false when the rule is ignored (rf_model_apply_taint_rules warns about it). */
bool rf_model_taint_rule_selects(const json_t *rule, const char **driver, const char **pool,
				 const char **device);
/** The taints of the devices of pools (kept from the previous layout) as the rules make them,
 * into taints[gidx], which holds their previous ones: their slice's own (the first ones, no
 * rule), then each rule's that selects them, in order. Warns about nothing (the rules' warnings
 * are rf_model_apply_taint_rules'). @return 0 or -ENOMEM. */
int rf_model_retaint_pools(struct rf_cluster *c, const json_t *rules, struct rf_pool *const *pools,
			   size_t n, struct rf_taint_span *taints);
struct rf_device *rf_model_find_device(const struct rf_cluster *c, const char *driver,
				       const char *pool, const char *name);
/** While a build parses or relinks every claim against a layout built in full: a hash index
 * of its devices for rf_model_find_device (c->dev_index; none for a layout with duplicate
 * device names, whose sorted search decides which one a name finds). @return 0 or -ENOMEM. */
int rf_model_index_devices(struct rf_cluster *c);
void rf_model_unindex_devices(struct rf_cluster *c);
struct rf_pool *rf_model_find_pool(const struct rf_cluster *c, const char *driver,
				   const char *pool);
struct rf_pool *rf_model_build_pool(struct rf_cluster *c, struct rf_slice *const *refs, size_t n,
				    bool lend_ok);
void rf_model_sort_slices(struct rf_slice **refs, size_t n);
void rf_model_place_pool_devices(struct rf_cluster *c, struct rf_pool *p, unsigned first_gidx);
/** Why the allocator treats an invalid pool as invalid (rf_model_build_pool's warning). */
const char *rf_model_pool_problem(const struct rf_cluster *c, const struct rf_pool *p);
/** From 1.35: the pool's counter sets or its devices' consumption of them make it invalid. */
const char *rf_model_pool_counters_problem(const struct rf_pool *p);

/* model-nodes.c: nodes, pools on nodes, NUMA inheritance, the hwloc annotation, rails */
/** numa_source of a GPU whose NUMA node came from a NIC on its PCIe root (this very string). */
extern const char rf_model_numa_from_nic[];
int rf_model_build_nodes(struct rf_cluster *c, const json_t *nodes);
/** The Node's Ready condition (true when it has no conditions at all). */
bool rf_model_node_ready(const json_t *node);
int rf_model_attach_pools(struct rf_cluster *c);
struct rf_node *rf_model_find_node(const struct rf_cluster *c, const char *name);
/** c->node_slots, c->node_names from c->nodes (c->layout's own). -ENOMEM only. */
int rf_model_index_node_names(struct rf_cluster *c);
/** c->node_slots, c->node_names a copy of prev's (c->layout's own): the same names at the same
 * indexes. -ENOMEM only. */
int rf_model_copy_node_index(struct rf_cluster *c, const struct rf_cluster *prev);
int rf_model_finish_node(struct rf_cluster *c, struct rf_node *n);
int rf_model_attach_node_pools(struct rf_cluster *c, struct rf_node *n,
			       struct rf_pool *const *pools, size_t n_pools);
/** Does the slice serve the node, as the allocator's GatherPools decides (nodeName, allNodes,
 * nodeSelector; with perDeviceNodeSelection, any of its devices)? */
bool rf_model_slice_serves(const struct rf_slice *s, const struct rf_node *n);
/** The pool's devices on the node (out may be NULL: only count them), in pool order. */
size_t rf_model_devices_on_node(const struct rf_pool *p, const struct rf_node *n,
				struct rf_device **out);
/** Device i of a slice that serves the node: with perDeviceNodeSelection, does it serve it? */
bool rf_model_slice_device_serves(const struct rf_slice *s, size_t i, const struct rf_node *n);

/* model-pool-view.c: a pool as one node sees it (the allocator gathers pools per node) */
/** The pool p as node n sees it: p itself, a view of it built for n, or NULL when n sees none of
 * it (no slice serves it, or its only generation is obsolete). @return 0 or -ENOMEM. */
int rf_model_pool_view(struct rf_cluster *c, struct rf_pool *p, const struct rf_node *n,
		       struct rf_pool **ret);
void rf_model_network_place(const struct rf_cluster *c, struct rf_node *n);
int rf_model_node_frontend(struct rf_cluster *c);
/* The capacity of d a consumedCapacity key names (its name as published), or NULL. */
const struct rf_capacity *rf_model_device_cap(const struct rf_device *d, const char *raw_name);
/* The warning of a malformed railfit.io/frontend-bandwidth annotation (fe), as a full build
 * words it. */
void rf_model_warn_frontend(struct rf_cluster *c, const struct rf_node *n, const char *fe);

/* model-usage.c: classes, claims and what they hold, pods and what they use, templates */
int rf_model_build_classes(struct rf_cluster *c, const json_t *classes);
int rf_model_build_claims(struct rf_cluster *c, const json_t *claims);
int rf_model_account_usage(struct rf_cluster *c);
int rf_model_node_usage(struct rf_cluster *c);
int rf_model_index_claims(struct rf_cluster *c);
int rf_model_build_pods(struct rf_cluster *c, const json_t *pods);
int rf_model_place_pods(struct rf_cluster *c);
int rf_model_build_templates(struct rf_cluster *c);

/* model-delta.c: usage from the previous generation's plus the claims and pods that changed */
/** Start recording what changes (c->prev shares c's reuse table and layout). -ENOMEM only. */
int rf_model_delta_begin(struct rf_cluster *c);
void rf_model_delta_end(struct rf_cluster *c);
/** Record a claim or pod of prev that this build dropped, or one it holds anew. */
int rf_model_delta_note(struct rf_cluster *c, bool pod, bool removed, void *v);
/** Device usage from prev's and the changed claims. @return 1 done, 0 declined (then run
 * rf_model_account_usage), -ENOMEM. */
int rf_model_delta_claims(struct rf_cluster *c);
/** Node usage, groups and fingerprints from prev's and the changed pods (after a done
 * rf_model_delta_claims). @return 1 done, 0 declined (then the devices' annotated bandwidth is
 * cleared: run rf_model_place_pods and rf_model_node_usage), -ENOMEM. */
int rf_model_delta_pods(struct rf_cluster *c);
void rf_model_pool_nodes_free(struct pool_nodes *pn);
/** rf_model_index_claims(), or the previous generation's index patched with what changed. */
int rf_model_index_claims_next(struct rf_cluster *c);
/** The claims a pod names, as this generation finds them (model-usage.c). */
const struct rf_claim *rf_model_pod_claim(struct rf_cluster *c, struct rf_pod *p, size_t e);
int rf_model_group_rails_cmp(const void *a, const void *b); /* by hash, name, node */
int rf_model_group_node_cmp(const void *a, const void *b);
int rf_model_claim_ref_cmp(const void *a, const void *b);
int rf_model_pod_cmp(const void *a, const void *b); /* by namespace, name */
int rf_model_index_groups(struct rf_cluster *c);
uint64_t rf_model_pool_fp(const struct rf_cluster *c, const struct rf_pool *p);
void rf_model_node_fp(struct rf_cluster *c, const struct rf_node *n);
/* quantities up to this many nano-units add and subtract exactly in any order: a sum of fewer
 * than 10^8 of them stays below the int128 saturation */
#define RF_DELTA_QUANTITY_MAX ((rf_i128)1000000000000000 * 1000000000000000)

/* model-walk.c: this build's claims or pods by position against the previous generation's */
struct rf_walk {
	const json_t *arr, *prev_arr; /* this build's elements, the previous generation's */
	void *const *prev_vals;       /* what each of prev_arr is */
	/* the claim or pod of an element out of place (looked up or parsed) */
	int (*get)(struct rf_cluster *c, void *arg, const json_t *obj, size_t i, void **ret);
	void *arg;
	void **vals;          /* out, in c's arena: what each of arr is */
	void **fresh, **gone; /* out: values that came, that went (malloc'd) */
	size_t n_fresh, n_gone;
	bool warned; /* an element out of place was warned about */
};
/** @return 1 done, 0 declined (too many elements out of place; nothing was looked up),
 * -ENOMEM. */
int rf_model_walk(struct rf_cluster *c, struct rf_walk *w);
void rf_model_walk_free(struct rf_walk *w);
/** A sorted array (in a) of prev without gone, with fresh (sorted here), ties as
 * rf_reuse_merge. @return 1, 0 when an element of gone is not in prev, -ENOMEM. */
int rf_model_sorted_patch(struct rf_arena *a, void *const *prev, size_t n_prev, void *const *gone,
			  size_t n_gone, void **fresh, size_t n_fresh,
			  int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n);

/* model-reuse.c: claims and pods kept from one generation to the next */
struct rf_reuse *rf_reuse_new(void);
struct rf_reuse *rf_reuse_ref(struct rf_reuse *r);
void rf_reuse_unref(struct rf_reuse *r);
/** The slot of obj: found (slot->obj == obj) or the empty slot to fill with rf_reuse_fill(). */
struct reuse_slot *rf_reuse_find(struct rf_reuse *r, const json_t *obj);
/** Take a reference to obj in the empty slot, and keep's (the slot owns it: NULL, or what val
 * points into when obj is not the object itself); warnings[first..] of c are the object's. */
int rf_reuse_fill(struct rf_reuse *r, struct reuse_slot *slot, const json_t *obj, void *val,
		  json_t *keep, struct rf_cluster *c, size_t first_warning);
/** The slot of obj in r, or NULL: a lookup that changes nothing. */
const struct reuse_slot *rf_reuse_lookup(const struct rf_reuse *r, const json_t *obj);
/** Re-emit a reused object's warnings into c. */
void rf_reuse_warn(struct rf_cluster *c, const struct reuse_slot *slot);
/**
 * A sorted array of claims or pods for generation c: prev_arr (the previous generation's, sorted
 * by cmp) without what this build did not see (marks.seen != mark), merged with fresh[] (what it
 * holds anew: sorted here). Linear but for the fresh part. marks_off: offsetof the marks.
 */
int rf_reuse_merge(struct rf_arena *a, void *const *prev_arr, size_t n_prev, void **fresh,
		   size_t n_fresh, size_t marks_off, unsigned long mark,
		   int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n);
/** The same, calling gone(arg, v) for each element of prev_arr this build did not see
 * (-ENOMEM from it stops the merge). */
int rf_reuse_merge_gone(struct rf_arena *a, void *const *prev_arr, size_t n_prev, void **fresh,
			size_t n_fresh, size_t marks_off, unsigned long mark,
			int (*cmp)(const void *, const void *), void ***ret, size_t *ret_n,
			int (*gone)(void *arg, void *v), void *arg);

/* model-relink.c: a claim or pod parsed for another layout, as this layout's (in c->reuse's
 * arena, strings through the strtab); NULL on OOM or when it must be parsed afresh */
void *rf_model_relink_claim(struct rf_cluster *c, void *strtab, const void *old);
/* A claim just parsed for c with its spec (requests, constraints, reason) in memory that goes
 * after the call: those moved into the table's arena, the requests shared with a claim of this
 * build that asks the same (claims of one template: a parsed table holds one copy, as a
 * relinked one does). @return 0 or -ENOMEM. */
int rf_model_keep_spec(struct rf_cluster *c, void *strtab, struct rf_claim *cl);
void *rf_model_relink_pod(struct rf_cluster *c, void *strtab, const void *old);

/* model-patch.c: a layout made from the previous one and the changes (see there) */
void rf_model_layout_unref(struct rf_layout *l);
/** A generation stops using the layout (then rf_model_layout_unref). */
void rf_model_layout_release(struct rf_layout *l);
/** 1: c has a layout patched from prev's (c->patch says what changed); 0: patching does not
 * apply, c is as it was (build the layout afresh); -ENOMEM. */
int rf_model_patch_layout(struct rf_cluster *c, const struct rf_cluster *prev,
			  const struct rf_cluster_objects *objs);
/** With c->reuse shared with prev: the claims that point at what the patch replaced, and the
 * pods bound to the nodes it added or removed, become copies relinked to c's layout. -EAGAIN:
 * one cannot be, or too many are touched (start a new reuse table). */
int rf_model_patch_claims(struct rf_cluster *c, const struct rf_cluster *prev);
/** After a walk of the claims or pods by position on a patched layout: the relinked ones that
 * stayed in place are this generation's copies, not the previous generation's structs (which go
 * to w->gone, the copies to w->fresh). -ENOMEM only. */
int rf_model_patch_walk(const struct rf_cluster *c, struct rf_walk *w);
/** c's layout was patched from prev's (c->patch says what changed). */
bool rf_model_patched_from(const struct rf_cluster *c, const struct rf_cluster *prev);
/** Sets pools[idx] of the pools a patch replaced and nodes[idx] of the nodes it rebuilt (none
 * when c's layout was not patched). */
void rf_model_patch_touched(const struct rf_cluster *c, unsigned char *pools, unsigned char *nodes);
/** Every node c's patch rebuilt sees the pools (by index) it saw in c->prev. */
bool rf_model_patch_same_pool_sets(const struct rf_cluster *c);
void rf_model_patch_free(struct rf_patch *p);

/** Worth starting afresh: most of what it holds is no longer used (or it was sealed). */
bool rf_reuse_stale(const struct rf_reuse *r);
/** No build will follow: drop the references to the objects (their claims and pods stay). */
void rf_reuse_seal(struct rf_reuse *r);

/* ---- usage by device, copy on write (model-use.c) ---- */

#define RF_USE_BLOCK 128 /* devices a block of usage holds (5 KB) */
struct rf_use_block {
	atomic_uint refs;
	struct rf_dev_use u[RF_USE_BLOCK];
};

/** What the generation's claims and pods use of device g. */
static inline const struct rf_dev_use *
rf_model_use(const struct rf_cluster *c, unsigned g)
{
	return &c->use[g / RF_USE_BLOCK]->u[g % RF_USE_BLOCK];
}
/** Device g's usage to write: its block copied first when another generation holds it too.
 * NULL on OOM. */
struct rf_dev_use *rf_model_use_write(struct rf_cluster *c, unsigned g);
/** Usage of c->n_devices devices, all zero. -ENOMEM (rf_model_use_release frees what was made). */
int rf_model_use_fresh(struct rf_cluster *c);
/** Usage of c->n_devices devices (no fewer than prev's) as prev's: its blocks shared, zero
 * ones past them. */
int rf_model_use_share(struct rf_cluster *c, const struct rf_cluster *prev);
/** c's references to its blocks dropped. */
void rf_model_use_release(struct rf_cluster *c);
/** u->consumed for a device of n_caps capacities (zero), when it has none yet. */
int rf_model_use_consume(struct rf_dev_use *u, size_t n_caps);
/** u->consumed freed: no share consumes the device any more. */
void rf_model_use_unconsume(struct rf_dev_use *u);
/** Blocks c and other share (tests). */
size_t rf_model_use_shared_blocks(const struct rf_cluster *c, const struct rf_cluster *other);

#endif
