/* The cluster model: one immutable generation of everything railfit knows (DESIGN section 7.1).
 *
 * rf_cluster_build() turns Kubernetes objects (Nodes, Pods, ResourceSlices, ResourceClaims,
 * DeviceClasses, and optionally ResourceClaimTemplates) into indexed, derived state: pools at their
 * highest generation with completeness, devices with normalised attribute names, their kind
 * (GPU/NIC by driver), locality attributes, rails, and who holds them. A generation is never
 * changed after it is built; readers on any thread take a reference (rf_cluster_ref) and drop it
 * when done. Objects that cannot be understood are skipped and listed in the generation's warnings,
 * never fatal. Pure logic, no I/O. */
#ifndef RF_ALLOC_MODEL_H
#define RF_ALLOC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "alloc/cel/attr.h"
#include "alloc/cel/cel.h"
#include "config/config.h"
#include "topology/annotation.h"
#include "topology/locality.h"

enum rf_dev_kind { RF_DEV_OTHER = 0, RF_DEV_GPU, RF_DEV_NIC, RF_DEV_CPU /* devices.cpuDrivers */ };

struct rf_claim;
struct rf_cluster;
struct rf_pool;
struct rf_pod;
struct rf_slice;

/* Claims and pods are shared by successive generations; the one thread that builds them marks
 * which build saw them and which previous generation held them. Nobody else reads these. */
struct rf_build_marks {
	unsigned long seen, in_prev;
};

struct rf_taint {
	const char *key, *value, *effect;
	const char *rule; /* the DeviceTaintRule that put it there; NULL = the slice's own */
};

struct rf_counter_consumption {
	const char *counter_set;
	size_t n;
	const char **names;
	struct rf_quantity *values;
};

struct rf_device { /* a fleet holds ~100,000 of these: ordered so that no byte is padding */
	const char *name;
	struct rf_pool *pool;
	unsigned slice; /* index of its slice within the pool */
	enum rf_dev_kind kind;
	struct rf_attr *attrs; /* sorted by name */
	size_t n_attrs;
	struct rf_capacity *caps; /* sorted by name */
	size_t n_caps;
	/* as the layout that made the struct set them: read rf_device_taints() */
	struct rf_taint *taints;
	size_t n_taints;
	struct rf_counter_consumption *counters;
	size_t n_counters;
	bool allow_multiple;
	bool has_binding_conditions;

	/* derived */
	bool partition;                      /* a MIG or other partition of a GPU */
	char pci[RF_PCI_ADDR_LEN];           /* "" when unknown */
	struct rf_locality loc;              /* pcie_root, numa */
	const char *numa_source;             /* attribute name, "nic-on-root", or NULL */
	const struct rf_capacity *bandwidth; /* the capacity named in devices.bandwidthCapacities */
	int rdma;                            /* 1, 0, or -1 unknown */
	int rail;                            /* rail index, -1 = not on a rail */
	unsigned idx;                        /* index in its pool */
	unsigned gidx;                       /* index among all devices of the generation */
	/* what claims and pods use of it is per generation: rf_dev_use() */
};

/** The taints of device d of generation c: its slice's own, then DeviceTaintRules' (in the rules'
 * order), *n of them. Read them through this, never d->taints: a patched layout whose rules
 * changed keeps the device structs it shares with earlier layouts and holds their taints itself
 * (alloc/model/model-patch.c). */
const struct rf_taint *rf_device_taints(const struct rf_cluster *c, const struct rf_device *d,
					size_t *n);

/** What a generation's claims and pods use of a device. Devices, pools and nodes are shared by
 * the generations built from the same nodes, slices and classes; usage is each generation's. */
/* 8-byte aligned: 40 bytes instead of 48 (one per device, in blocks a generation shares with the
 * one it was built from until it writes them: alloc/model/model-use.c); annotated_bw is read and
 * written through the struct, which the compiler knows is packed */
#pragma pack(push, 8)
struct rf_dev_use {
	const struct rf_claim *holder;   /* exclusive allocation, NULL = not exclusively held */
	struct rf_quantity *consumed;    /* per caps[i], summed over shares; NULL when none */
	unsigned n_shares;               /* consumable-capacity allocations */
	unsigned n_consumed;             /* the device's n_caps when consumed is set */
	struct rf_quantity annotated_bw; /* railfit.io/nic-bandwidth of pods holding it */
};
#pragma pack(pop)

/** A sharedCounters entry of a slice (partitionable devices, KEP-4815). */
struct rf_counter_set {
	const char *name;
	unsigned slice; /* the slice of its pool that published it */
	size_t n;
	const char **names;
	struct rf_quantity *values;
};

struct rf_pool {
	const char *driver, *name;
	unsigned idx;        /* index among the generation's pools (see rf_node.idx) */
	unsigned first_gidx; /* its devices are gidx first_gidx .. first_gidx + n_devices - 1 */
	int64_t generation;
	int64_t slice_count; /* resourceSliceCount */
	unsigned n_slices;   /* slices seen at that generation */
	unsigned n_seen;     /* of them, those that serve the node of a view (else n_slices) */
	bool complete;
	bool invalid;               /* duplicate device names */
	const char *node;           /* the node its slices name, or NULL */
	struct rf_device **devices; /* slice order, then device order as published */
	size_t n_devices;
	struct rf_counter_set *counter_sets; /* from every slice at the pool's generation */
	size_t n_counter_sets;
	struct rf_slice **slices; /* its slices at its generation (n_slices; the layout holds
				   * them): which nodes each serves */
	/* slices of older generations (newest first), kept when one of them may serve a node the
	 * newest do not: that node may still see its own older generation (model-pool-view.c) */
	struct rf_slice **older;
	unsigned n_older;
	/* a view of the pool built for one node (model-pool-view.c): its devices are those the
	 * node sees, whatever the slices' node selection says */
	bool node_view;
	/* the layout that built it (a process-wide stamp, rf_cluster_build_next): a pool a patch
	 * shares keeps it, one it replaces gets the patch's. A remembered verdict reading a pinned
	 * device keys on it (alloc/memo.c). Not set on a node's views (the node's rev covers
	 * them). */
	uint64_t rev;
};

/**
 * The counter set a device's consumesCounters entry refers to: in the device's own slice with
 * the 1.34 rules, anywhere in the pool with the 1.35 rules. NULL when there is none.
 */
const struct rf_counter_set *rf_pool_counter_set(const struct rf_pool *p, const char *name,
						 unsigned slice, enum rf_dra_version ver);

struct rf_node {
	const char *name;
	/* index among the generation's nodes: name order after a full build; a patched layout
	 * keeps the indexes, adds nodes after them and leaves holes for removed ones (the
	 * position in rf_cluster_node_at() is the name order) */
	unsigned idx;
	const json_t *json;                 /* NULL when only slices name this node */
	const json_t *labels, *annotations; /* borrowed, may be NULL */
	bool ready;                         /* as of the layout: read rf_cluster_node_ready() */
	struct rf_pool **pools;
	size_t n_pools;
	struct rf_device **devices; /* pool order, then pool device order; only devices of the
				     * pool's slices that select this node */
	size_t n_devices;
	unsigned n_gpus, n_nics;
	unsigned *counted; /* gidx of its whole GPUs, then of its NICs (n_gpus + n_nics) */
	struct rf_quantity fe_capacity; /* front-end NIC bandwidth */
	const char *fe_source;          /* "annotation" or "default" */
	unsigned n_rails;
	/* the node's railfit.io/pci-topology annotation (devices.topologyAnnotation), decoded;
	 * owned by the generation. topo_error says why it is not used (malformed) or does not help
	 * (no PCI address matches a DRA device of the node); both NULL when the node has none. */
	const struct rf_topo_annotation *topo;
	const char *topo_error;
	/* its network block and spine: the value of the first of groups.blockLabels (spineLabels)
	 * it carries (borrowed from its labels), NULL when none */
	const char *block, *spine;
	/* the layout that built it (a process-wide stamp, rf_cluster_build_next): a node a patch
	 * shares keeps it; one it rebuilds, or copies to point at a new object, gets the patch's.
	 * Remembered verdicts (alloc/memo.h) key on rf_node_rev(): an equal rev means the same
	 * struct, so the same object, pools, devices and derived facts. */
	uint64_t rev;
};

/**
 * The node's rev in c: its struct's, or newer when a patch changed the taints of devices the node
 * sees without copying it (a DeviceTaintRule over a driver). What remembered verdicts key on.
 */
uint64_t rf_node_rev(const struct rf_cluster *c, const struct rf_node *n);

/** What a generation's pods and claims use of a node (see struct rf_dev_use). */
struct rf_node_use {
	struct rf_pod **pods; /* pods bound to this node and not terminated */
	size_t n_pods;
	unsigned n_gpus_free, n_nics_free;
	struct rf_quantity fe_egress_used, fe_ingress_used;
	/* a fingerprint of everything the node's verdicts read that changes between generations
	 * with the same layout (its pools' device usage, its front-end usage): remembered verdicts
	 * (alloc/memo.h) hold while it stays the same */
	uint64_t fp;
};

/** One way to satisfy a request: an `exactly` request or one firstAvailable subrequest. */
struct rf_request_alt {
	const char *name; /* "req" or "req/sub" */
	/* the DeviceClass by name only: which struct that is depends on the generation judging
	 * the claim (a claim parsed for one layout stays valid on one whose classes changed);
	 * the demand looks it up once per request (rf_demand_classes) */
	const char *class_name;
	const struct rf_cel_program **selectors;
	const char **selector_texts;
	size_t n_selectors;
	bool all; /* allocationMode: All */
	int64_t count;
	bool admin_access;
	struct rf_toleration {
		const char *key, *op, *value, *effect;
	} * tolerations;
	size_t n_tolerations;
	size_t n_cap_requests;
	const char **cap_request_names; /* exactly as written */
	struct rf_quantity *cap_request_values;
};

struct rf_request {
	const char *name;
	bool first_available;
	struct rf_request_alt *alts;
	size_t n_alts;
};

struct rf_constraint {
	const char **requests; /* empty = all requests of the claim */
	size_t n_requests;
	const char *match_attribute;
	const char *distinct_attribute;
};

struct rf_alloc_result { /* ordered so that its bools share one word (72 bytes, not 80) */
	const char *request, *driver, *pool, *device;
	const char *share_id;
	const json_t *consumed; /* consumedCapacity object, borrowed */
	struct rf_device *dev;  /* resolved, or NULL when the device is not in any slice */
	/* of dev, so that accounting usage reads no device (claims live with one layout) */
	unsigned gidx;
	int rail;
	bool nic;
	bool admin_access;
};

struct rf_claim {
	const char *ns, *name, *uid;
	const json_t *json;
	struct rf_request *requests;
	size_t n_requests;
	struct rf_constraint *constraints;
	size_t n_constraints;
	const char *unsupported; /* why railfit cannot evaluate this claim, or NULL */
	struct rf_alloc_result *results;
	size_t n_results;
	const char *alloc_node;     /* node the allocation is bound to, or NULL */
	const char **reserved_uids; /* status.reservedFor[].uid */
	size_t n_reserved;
	uint64_t key_hash; /* rf_claim_key_hash(ns, name) */
	struct rf_build_marks marks;
	bool from_template; /* instantiated from a ResourceClaimTemplate for a pod */
	bool allocated;     /* (both bools last: 144 bytes, not 152) */
};

struct rf_class {
	const char *name;
	unsigned idx; /* index among the generation's classes */
	const json_t *json;
	const struct rf_cel_program **selectors;
	const char **selector_texts;
	size_t n_selectors;
	const char *unsupported;
};

struct rf_pod {
	const char *ns, *name, *uid, *node_name, *phase;
	/* the element it was parsed from (the object, or what stands for it: see
	 * rf_cluster_objects.expand); the strings above are the model's own */
	const json_t *json;
	const char *group;   /* rail group key "ns/name" or NULL */
	uint64_t group_hash; /* rf_group_hash(group) */
	bool terminated;     /* phase Succeeded or Failed: holds nothing */
	bool has_nic_bw, has_egress, has_ingress;
	struct rf_quantity nic_bw, egress, ingress;
	const char *bad_annotation; /* message for a malformed bandwidth annotation, or NULL */
	const char **claim_names;   /* of its resourceClaims entries that name a claim */
	uint64_t *claim_hashes;     /* rf_claim_key_hash(ns, claim_names[i]) */
	/* the claims found for claim_names by the last build that placed the pod, to skip the
	 * lookup while they stay in the generation; written by the builder thread only */
	const struct rf_claim **claims_found;
	size_t n_claim_names;
	unsigned node_idx1; /* index + 1 of the node it is bound to, 0 = none or unknown */
	struct rf_build_marks marks;
};

/** Kubernetes objects by kind (borrowed arrays of objects; kind/apiVersion may be absent). */
struct rf_cluster_objects {
	json_t *nodes, *pods, *slices, *claims, *classes, *templates; /* each may be NULL */
	json_t *taint_rules; /* DeviceTaintRules (resource.k8s.io/v1), may be NULL */
	/* ResourceSlices parsed already (alloc/model/slice.h; borrowed, the generation takes its
	 * own references): when not NULL (also for none), the model uses these and never reads
	 * `slices`, which then holds whatever the server keeps to dump them (/debug/snapshot) */
	struct rf_slice *const *slice_recs;
	size_t n_slice_recs;
	/* elements of pods and claims that are not objects (what the server keeps instead of
	 * them, e.g. packed) are handed to expand, which returns the object (a new reference; NULL
	 * when it cannot) for the model to parse; the model keeps no pointer into it but where it
	 * must (consumedCapacity), and then holds it. NULL: such elements are skipped. */
	json_t *(*expand)(const json_t *v, void *userdata);
	void *expand_userdata;
	/* usage by a walk of every claim and pod, even where rf_cluster_build_next() would start
	 * from the previous generation's (what a build cost before; benchmarks and tests) */
	bool walk_usage;
	/* the layout built in full where rf_cluster_build_next() would patch the previous one
	 * (what a Node, slice or class change cost before; benchmarks and tests; the live store's
	 * compaction of a worn chain) */
	bool full_layout;
	/* may be NULL: asked between the steps of building a layout in full and every 1,024
	 * pools, nodes, claims and pods it makes or relinks (stop_every: tests ask at each); when
	 * it returns true the build stops, -ECANCELED, leaving prev as it was. It may itself build
	 * other generations from prev or its successors, on the same thread (the live store's
	 * compaction builds the changes that came meanwhile this way), so no lock is held across
	 * a check (the nested build takes them: it would deadlock): a full build
	 * reads of prev only its table of claims and pods, whose parsed values such builds only
	 * add to (in an arena that only grows), and keeps no pointer to its slots across a check;
	 * after its last check it reads prev's remembered verdicts to carry them (carried only
	 * when it was built from prev's very objects), which only request threads write. */
	bool (*stop)(void *userdata);
	void *stop_userdata;
	unsigned stop_every; /* 0: 1,024 */
	/* remembered verdicts start a new table where rf_cluster_build_next() would carry the
	 * previous generation's (what the first filter after a slice or Node label change cost
	 * before; benchmarks) */
	bool fresh_memo;
	/* the caller builds generations from slice_recs one at a time (the live store's publisher,
	 * its compaction's checks building the changes nested in it; a snapshot's one build), never
	 * two at once: a layout may then use a record's devices in place
	 * (alloc/model/slice.h, `lent`) instead of copying them. Records parsed by the build itself
	 * (no slice_recs) are its own: lent whatever this says. */
	bool lend_records;
	/* the caller never changes an array once it handed it over (the live store copies one
	 * before changing it): an array that is the previous generation's very array holds the
	 * very same objects. Otherwise (tests change arrays in place) such an array is read anew.
	 */
	bool arrays_frozen;
};

struct rf_cluster;

/**
 * Build a generation. cfg and cel must outlive the generation. The objects are referenced, not
 * copied, and must never be modified afterwards.
 * @return 0, or -ENOMEM (nothing else: bad objects become warnings).
 */
int rf_cluster_build(const struct rf_cluster_objects *objs, const struct rf_config *cfg,
		     struct rf_cel_cache *cel, struct rf_cluster **ret);

/**
 * Build the generation that follows prev (NULL: the first). With same_layout (the caller knows
 * that no Node, ResourceSlice, DeviceClass or template changed since prev, and cfg and cel are
 * prev's), the new generation shares prev's nodes, pools, devices and classes, reuses the claims
 * and pods whose objects are the very same json_t as prev's, and keeps the verdicts remembered
 * for nodes whose usage did not change: the cost is that of the claims and pods that changed,
 * plus a pass over the usage. Only one build from a given chain at a time (the store's
 * publisher); readers of prev are not disturbed.
 * @return 0, -ENOMEM, or -ECANCELED when objs->stop stopped a layout built in full (prev and
 * the table of claims and pods it shares with its chain as they were).
 */
int rf_cluster_build_next(const struct rf_cluster *prev, const struct rf_cluster_objects *objs,
			  const struct rf_config *cfg, struct rf_cel_cache *cel, bool same_layout,
			  struct rf_cluster **ret);

/** Whether the generation's layout was patched from an earlier one's (only what a Node, slice or
 * class change touched rebuilt) rather than built in full. */
bool rf_cluster_layout_patched(const struct rf_cluster *c);

/**
 * Whether c's layout is a patched one well along its chain (64 patches, or halfway to a bound
 * at which the next patch builds it in full: the bytes and Node objects the chain keeps for
 * replaced pieces, the holes removed devices, pools and nodes leave, the node copies of shared
 * pools). A caller that can choose when to pay for a full build (server/kube/store.c: once the
 * events have been quiet a while) builds the same objects in full then
 * (rf_cluster_objects.full_layout), so that no event waits behind that build at the bound.
 */
bool rf_cluster_layout_worn(const struct rf_cluster *c);
/** Worn and halfway to a bound: 256 patches, or half of any other bound (those are worn already):
 * a full build that waits longer may meet the bound (the live store compacts it whatever its
 * build budget). */
bool rf_cluster_layout_halfway(const struct rf_cluster *c);

/** The generation's layout in its chain of patches: how many patches since the chain's full
 * build (the return value), and in *kept (may be NULL) the bytes the chain keeps for pieces its
 * patches replaced, until a full build starts a new chain. */
unsigned rf_cluster_layout_chain(const struct rf_cluster *c, size_t *kept);

struct rf_cluster *rf_cluster_ref(struct rf_cluster *c);
/** Drop a reference; returns NULL. Accepts NULL. */
struct rf_cluster *rf_cluster_unref(struct rf_cluster *c);

const struct rf_config *rf_cluster_config(const struct rf_cluster *c);
/** The DRA rules of the generation: kube.draVersion, the newest known version for auto (a
 * snapshot), and its patch level (RF_DRA_PATCH_NEWEST: the newest patch railfit knows). */
enum rf_dra_version rf_cluster_dra_version(const struct rf_cluster *c);
int rf_cluster_dra_patch(const struct rf_cluster *c);
/** What the generation's allocator does with list-typed attributes (version and gates). */
struct rf_dra_list_rules rf_cluster_dra_list_rules(const struct rf_cluster *c);

size_t rf_cluster_n_nodes(const struct rf_cluster *c);
const struct rf_node *rf_cluster_node_at(const struct rf_cluster *c, size_t i); /* sorted by name */
const struct rf_node *rf_cluster_node(const struct rf_cluster *c, const char *name);
/** Whether the nodes' indexes follow their names' bytewise order (holes aside): after a full
 * build, and after patches that added no node. */
bool rf_cluster_index_is_name_order(const struct rf_cluster *c);

/** rf_cluster_node(), trying the node of index *hint first (any value: it is checked): a
 * request whose names follow the index order (name order after a full build) finds each where
 * the last one ended. *hint is then set past the node found, with RF_HINT_COLD when the guess
 * missed (or would have): no guess is tried until a name is found where it would have been.
 * kube-scheduler's own order is its node tree's, rotated and gathered by parallel workers:
 * there guesses mostly stop after the first miss. */
#define RF_HINT_COLD ((size_t)1 << (sizeof(size_t) * 8 - 1))
const struct rf_node *rf_cluster_node_hint(const struct rf_cluster *c, const char *name,
					   size_t *hint);
/** The hash the name index finds a node name by (config/hash.h). */
uint64_t rf_cluster_name_hash(const char *name);
/** rf_cluster_node_hint() with the name's rf_cluster_name_hash() known (0: not known). */
const struct rf_node *rf_cluster_node_hint_hashed(const struct rf_cluster *c, const char *name,
						  uint64_t h, size_t *hint);
/** rf_cluster_node() with h = rf_cluster_name_hash(name) (0 is a hash like any other here; a
 * wrong h finds nothing). */
const struct rf_node *rf_cluster_node_hashed(const struct rf_cluster *c, const char *name,
					     uint64_t h);
/** Looking ahead through names in no order (kube-scheduler's), so that the cache misses of
 * finding each node (its slot in the name index, its name, its struct and usage) overlap
 * instead of following one another: the slot of the name of rf_cluster_name_hash() h, then (once
 * that slot is read: a few names later) the rest, returning the index of the node the name
 * most likely is (its hash's first match, not compared), SIZE_MAX when none. Hints only. */
void rf_cluster_prefetch_slot(const struct rf_cluster *c, uint64_t h);
size_t rf_cluster_prefetch_node(const struct rf_cluster *c, uint64_t h);
/** Whether the node's Ready condition is True in this generation (n->ready may be older). */
bool rf_cluster_node_ready(const struct rf_cluster *c, const struct rf_node *n);
const struct rf_claim *rf_cluster_claim(const struct rf_cluster *c, const char *ns,
					const char *name);
uint64_t rf_claim_key_hash(const char *ns, const char *name);
/** The hash rail groups are sorted and looked up by. */
uint64_t rf_group_hash(const char *group);
/** rf_cluster_claim() with the key's hash known. */
const struct rf_claim *rf_cluster_claim_hashed(const struct rf_cluster *c, const char *ns,
					       const char *name, uint64_t hash);
const struct rf_class *rf_cluster_class(const struct rf_cluster *c, const char *name);
size_t rf_cluster_n_classes(const struct rf_cluster *c);
const struct rf_class *rf_cluster_class_at(const struct rf_cluster *c, size_t i); /* by name */
const struct rf_pod *rf_cluster_pod(const struct rf_cluster *c, const char *ns, const char *name);
const struct rf_pod *rf_cluster_pod_by_uid(const struct rf_cluster *c, const char *uid);
const json_t *rf_cluster_template(const struct rf_cluster *c, const char *ns, const char *name);
size_t rf_cluster_n_pods(const struct rf_cluster *c);
const struct rf_pod *rf_cluster_pod_at(const struct rf_cluster *c, size_t i);

/** Verdicts remembered per demand shape for this generation (alloc/memo.h); never NULL. */
struct rf_memo *rf_cluster_memo(const struct rf_cluster *c);

/** Rails the group uses on nodes other than `node`, as a bit mask (rails 0..63). */
uint64_t rf_cluster_group_rails(const struct rf_cluster *c, const char *group, const char *node);

/** The same in two steps, for many nodes and one group: the group (NULL when it holds no rails),
 * then rails on nodes other than n (0 for a NULL group; n NULL: every node is another). */
struct rf_group;
const struct rf_group *rf_cluster_group(const struct rf_cluster *c, const char *group);
uint64_t rf_group_rails_elsewhere(const struct rf_cluster *c, const struct rf_group *g,
				  const struct rf_node *n);

/** Where a group's pods run in the network: the blocks and spines of the nodes its running pods
 * are bound to (nodes without the labels add nothing). */
#define RF_MAX_PLACES 16
struct rf_group_places {
	size_t members; /* running pods of the group on a node */
	size_t n_blocks, n_spines;
	const char *blocks[RF_MAX_PLACES], *spines[RF_MAX_PLACES]; /* borrowed, distinct */
	bool overflow; /* more distinct blocks or spines than RF_MAX_PLACES: the rest not kept */
};

/** The places of a group ("ns/name"): once per request, not per node. NULL group: none. */
void rf_cluster_group_places(const struct rf_cluster *c, const char *group,
			     struct rf_group_places *ret);

/** Warnings collected while building (objects skipped and why). Borrowed strings. */
size_t rf_cluster_n_warnings(const struct rf_cluster *c);
const char *rf_cluster_warning(const struct rf_cluster *c, size_t i);

/** Number of objects of each kind held, for railfit_cache_objects. */
struct rf_cluster_counts {
	size_t nodes, pods, slices, claims, classes, templates, taint_rules;
};
struct rf_cluster_counts rf_cluster_counts(const struct rf_cluster *c);

/** The objects the generation was built from (for /debug/snapshot). Borrowed. */
const struct rf_cluster_objects *rf_cluster_objects(const struct rf_cluster *c);

/** Level between two devices of one node, and its source (annotation beats DRA attributes). */
enum rf_level rf_node_level(const struct rf_node *n, const struct rf_device *a,
			    const struct rf_device *b, enum rf_level_source *ret_src);

/**
 * Level between two GPUs of one node: NVL when the node's annotation says they share NVLinks
 * (*ret_links, may be NULL, gets how many; 0 otherwise), else rf_node_level().
 */
enum rf_level rf_node_gpu_level(const struct rf_node *n, const struct rf_device *a,
				const struct rf_device *b, enum rf_level_source *ret_src,
				unsigned *ret_links);

/**
 * Do a DeviceClass's selectors accept a device? Memoised per generation (class selectors are the
 * same for every pod), safe from any thread. @return 1, 0, or -EINVAL for a CEL runtime error
 * (err, may be NULL, then says which selector and why).
 */
int rf_class_matches(const struct rf_cluster *c, const struct rf_class *cls,
		     const struct rf_device *d, struct rf_cel_error *err,
		     const char **ret_selector);

/** The device as CEL selectors see it (`device.driver`, `.attributes`, `.capacity`, …). */
struct rf_cel_device rf_device_cel_view(const struct rf_device *d);

/** What a claim's allocation consumes of one capacity of a shared device (zero if nothing). */
struct rf_quantity rf_claim_consumed(const struct rf_claim *cl, const struct rf_device *d,
				     const struct rf_capacity *cap);

/** Whether the generation's usage was derived from the previous generation's and the claims and
 * pods that changed (false: a walk of every claim and pod). The result is the same either way. */
bool rf_cluster_usage_delta(const struct rf_cluster *c);

/** Usage of a device or node of the generation's layout. */
const struct rf_dev_use *rf_dev_use(const struct rf_cluster *c, const struct rf_device *d);
const struct rf_node_use *rf_node_use(const struct rf_cluster *c, const struct rf_node *n);

/** A device is free when nobody holds it exclusively (shares are counted separately). */
bool rf_device_is_free(const struct rf_cluster *c, const struct rf_device *d);

/** Free bandwidth of a NIC before any new placement (capacity - consumed - annotated). */
struct rf_quantity rf_device_bw_capacity(const struct rf_device *d, const struct rf_config *cfg,
					 const char **ret_source);
struct rf_quantity rf_device_bw_used(const struct rf_cluster *c, const struct rf_device *d);

/** Instantiate a claim for a pod's resourceClaimTemplate entry (explain of pods not yet
 * scheduled whose claim the controller has not created yet). The claim is owned by the caller's
 * arena-less allocation: free with rf_claim_free(). NULL on OOM or when the template is unusable
 * (then *ret_err says why). */
struct rf_claim *rf_claim_from_template(const struct rf_cluster *c, const char *ns,
					const char *pod_name, const char *entry_name,
					const json_t *tmpl, const char **ret_err);
void rf_claim_free(struct rf_claim *claim);

const char *rf_dev_kind_name(enum rf_dev_kind k);

#endif
