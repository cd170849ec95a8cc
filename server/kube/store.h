/* The live object store behind the cache (DESIGN section 2): per watched kind, a map from
 * "namespace/name" (or "name") to the object as the API server last sent it, plus the placements
 * railfit recorded at /bind that the watch has not confirmed yet. A publisher thread turns the
 * current objects into a new immutable generation with rf_cluster_build() and rf_cache_publish()es
 * it, so HTTP readers never see half an applied event or half a relist.
 *
 * Incremental: a generation starts from the previous one (rf_cluster_build_next): unless a Node,
 * ResourceSlice or DeviceClass changed, it shares its layout and re-parses only the claims and
 * pods whose objects changed. An update that changes nothing railfit reads (equal slim copies)
 * is not a change at all, and a relist keeps the objects that did not change.
 *
 * Coalescing: after a change the publisher rebuilds at once when it has been idle, otherwise no
 * sooner than min_interval after the previous build, and only while rebuilding stays within a
 * third of a core over time (build_budget.h: a long build is paid for by the builds after it only
 * once they would exceed that), so bursts of events cost one rebuild per interval. An urgent
 * change (a /bind placement, the changes since a compaction's objects) skips the wait.
 *
 * Compaction: a layout patched event after event forms a chain that must be built in full at
 * its bound (alloc/model/model-patch.c: 512 patches, or what it keeps for replaced pieces), and
 * the event that reaches it waits for that build (0.2-0.3 s at 5,000 nodes). Once the chain is
 * worn (rf_cluster_layout_worn: 64 patches, or halfway to a bound), the objects of the chain's
 * last generation (the publisher keeps them) are built in full, layout and claim table, by the
 * publisher, whenever it has nothing else to build. The compaction asks at its checks (between
 * the steps of its layout, and every 1,024 pools, nodes, claims or pods it makes or relinks;
 * rf_cluster_objects.stop) whether a change's build is due (or an assumed placement expired); if
 * so that change is built on the chain and published as usual, from within the check, and the
 * compaction goes on. (On a thread of its own taking turns, as first written, the compaction
 * allocated from another malloc arena: 13-56 MB more at the peak of fleet_bench --churn.) When
 * it ends, its generation starts the chain: published as it is when
 * nothing changed since its objects, else patched at once with what did (one build, "caught up").
 * So an event waits for no full build but for the stretch of one under way (a few steps have no
 * check inside: the taint rules, classes, the pools' node views, the claims' usage), however busy
 * the cluster. A change that must be built in full (a chain's bound, shared pools) is built so
 * from within a check as anywhere else, and the compaction, older than that new chain, stops
 * there. No quiet moment is needed.
 *
 * A compaction starts when the build budget holds what the last one cost (the CPU time of its own
 * stretches, not their wall time, which counts the request threads that preempted it) plus
 * 0.2 s for the events after it, and is charged its CPU from the budget's spare only
 * (rf_build_budget_spend_spare): no event's build waits for it. Once the chain is halfway to a
 * bound (rf_cluster_layout_halfway) it starts whatever the budget holds: builds of events that
 * keep the bucket low would otherwise put it off until an event meets the bound; what it costs
 * beyond the spare is then not charged. A compaction that fails is not tried again until another
 * generation is built.
 *
 * Remembered verdicts: built from the very objects of the generation it relinks from, a
 * compaction carries that generation's verdicts, keyed again for its nodes
 * (rf_cluster_build_next): the first filter after it is not cold, but for demands naming an
 * allocated device (their shape names its pool's layout). The build that catches it up patches
 * it, keeping its table as any patch does (a node whose usage or layout changed since is judged
 * again: its fingerprint or rev differs). A verdict is only ever found for what it judged.
 *
 * The interval is short (10 ms): builds are 3-30 ms at 5,000 nodes, so an event that comes just
 * after one is still shown within 50 ms, and the budget, not the interval, is what bounds their
 * CPU under churn. At 50 ms, the second of two events in a row (a node's two slices deleted, 140
 * Node label changes one after the other) waited 35-75 ms for its build (fleet_bench --churn).
 *
 * Freed heap: a full build (or a while of replaced generations) leaves tens of megabytes that
 * glibc keeps; the publisher gives it back (malloc_trim) once it has had nothing to build for
 * trim_idle_ms, not right after: what it gives back, the next builds take again page by page
 * (on a 2-vCPU VM the two builds after a trim took 18-27 and 2-21 ms against 3 ms at 5,000
 * nodes). Under changes that never pause, memory stays where the last full build left it.
 *
 * The store keeps slim copies of the objects handed to it (server/slim.h: only the fields railfit
 * reads, repeated values shared), so no pod env, volume or secret ever reaches the cache or
 * /debug/snapshot. Those copies are never modified: generations share them with the maps
 * (jansson's refcounts are atomic, the trees are read-only). At fleet size the trees would be
 * most of the process, so the bulk kinds are not kept as trees: Pods and ResourceClaims are kept
 * packed (server/snapshot/snapshot.h: the model expands one when it changes and keeps its own
 * form), ResourceSlices parsed and packed (slice_table.h).
 *
 * Threads: writers (one reflector per kind, the bind handler) call the apply/replace/assume
 * functions from any thread; one mutex guards the maps and is held only for map updates and for
 * taking a snapshot of the maps (never while building, publishing or freeing a generation). Only
 * the publisher builds; every other thread only reads published generations. */
#ifndef RF_SERVER_STORE_H
#define RF_SERVER_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "alloc/cel/cel.h"
#include "config/config.h"
#include "server/kube/cache.h"
#include "server/kube/watch_stream.h"

#define RF_STORE_MIN_INTERVAL_MS 10
/* freed heap is given back once nothing was built for this long (above) */
#define RF_STORE_TRIM_IDLE_MS 2000

struct rf_store_options {
	struct rf_cache *cache;      /* where generations are published; outlives the store */
	const struct rf_config *cfg; /* copied (twice: for 1.34 and 1.35 rules) */
	struct rf_cel_cache *cel;    /* outlives the store */
	long min_interval_ms;        /* 0 = RF_STORE_MIN_INTERVAL_MS */
	long trim_idle_ms;           /* 0 = RF_STORE_TRIM_IDLE_MS */
	/* called on the writer's thread when a claim gets its allocation (a watch event), with
	 * the claim as the API server sent it; may be NULL */
	void (*on_claim_allocated)(const json_t *claim, void *userdata);
	void *userdata;
};

struct rf_store;

/** Create the store and start its publisher thread. @return 0, -ENOMEM or -errno of the thread. */
int rf_store_new(const struct rf_store_options *o, struct rf_store **ret);

/**
 * Stop the publisher, publish an empty cache (NULL) and free everything. Call after the HTTP
 * servers are stopped: generations reference the store's configuration copies. Accepts NULL.
 */
void rf_store_free(struct rf_store *s);

/**
 * Replace all objects of a kind at once (a relist): keys missing from items are deleted.
 * items is borrowed (slim copies of its elements are kept; their managedFields are removed).
 * @return the number of objects kept (items without metadata.name are skipped), or -ENOMEM.
 */
int rf_store_replace(struct rf_store *s, enum rf_kind kind, json_t *items);

/** The same with items already made by rf_store_slim() (a list slimmed page by page, so that
 * the full objects of a large list are never all in memory at once). */
int rf_store_replace_slim(struct rf_store *s, enum rf_kind kind, json_t *items);

/** What the store keeps of obj, to hand to rf_store_replace_slim() (new reference; NULL on OOM):
 * its slim copy, or for the kinds the store keeps packed or parsed (Pods, ResourceClaims,
 * ResourceSlices) a stand-in only rf_store_replace_slim() reads. Strips obj's managedFields. Any
 * thread. */
json_t *rf_store_slim(struct rf_store *s, enum rf_kind kind, json_t *obj);

/**
 * rf_store_slim() of the object written in text[0..len), slimmed from the text
 * (rf_slim_text()): the whole object's tree is never made. @return 0 with *ret set (a new
 * reference); -EINVAL when the text is not taken that way (parse it and call rf_store_slim(),
 * which also says what is wrong with it); -ENOMEM. Any thread.
 */
int rf_store_slim_text(struct rf_store *s, enum rf_kind kind, const char *text, size_t len,
		       json_t **ret);

/**
 * Apply one watch event: ADDED/MODIFIED add or update (also for an unknown key), DELETED removes
 * (an unknown key is ignored), BOOKMARK and ERROR change nothing. obj is borrowed (a slim copy is
 * kept; its managedFields are removed).
 * @return 1 when the store changed, 0 when not, -EINVAL (no metadata.name) or -ENOMEM.
 */
int rf_store_apply(struct rf_store *s, enum rf_kind kind, enum rf_watch_type type, json_t *obj);

/**
 * Record that railfit bound pod ns/name (uid may be "") to node: until the watch shows the pod
 * bound (or assume_ttl_ms passes, or the pod disappears) generations see a copy of the cached pod
 * with spec.nodeName set. assume_ttl_ms 0 records nothing. Asks for an immediate rebuild.
 * @return a change number for rf_store_wait_published(), or -ENOMEM.
 */
int64_t rf_store_assume(struct rf_store *s, const char *ns, const char *name, const char *uid,
			const char *node, int64_t assume_ttl_ms);

/**
 * Build no generation until every kind has been listed once (then at once), or until
 * rf_store_end_first_sync(): the reflectors' start-up, where each intermediate generation is
 * work thrown away and, while the next one is built, memory held twice.
 */
void rf_store_defer_until_listed(struct rf_store *s);
/** Stop waiting for every kind's first list (a list failed: publish what there is). */
void rf_store_end_first_sync(struct rf_store *s);

/** Ask for the pending changes to be published at once, without the spacing between builds
 * (a kind's first list: nothing is ready until its generation is out). */
void rf_store_publish_soon(struct rf_store *s);

/** The number of the latest change, for rf_store_wait_published(). */
int64_t rf_store_changes(struct rf_store *s);

/** Wait until a generation including change `seq` is published (or timeout). @return true if so. */
bool rf_store_wait_published(struct rf_store *s, int64_t seq, long timeout_ms);

/**
 * The DRA rules for builds when kube.draVersion is auto (the newest known until the server
 * answers): the server's gitVersion and the rules rf_dra_version_from_git() chose for it. Does
 * nothing when the configuration names a version. @return 0, or -ENOMEM / -ENOSPC (then the
 * previous rules stay).
 */
int rf_store_set_dra_version(struct rf_store *s, const char *git_version, enum rf_dra_version v,
			     int patch, bool newer);

struct rf_store_stats {
	uint64_t builds;      /* generations published */
	uint64_t incremental; /* of which reused the previous generation's layout */
	uint64_t patched;     /* of which patched it where a Node, slice or class changed */
	uint64_t compacted;   /* worn chains built in full beside them (store.h: compaction) */
	uint64_t caught_up;   /* of which the next build patched with the changes since */
	uint64_t built_in_compaction; /* changes built from within a compaction's checks */
	double last_build_ms;         /* duration of the last snapshot + build */
	uint64_t trims;               /* times freed heap was given back (malloc_trim) */
	size_t objects[RF_KIND_COUNT];
	size_t assumed; /* placements not yet confirmed */
};
void rf_store_stats(struct rf_store *s, struct rf_store_stats *ret);

/** The configuration the store was made with (the file's; never changes). */
const struct rf_config *rf_store_config(const struct rf_store *s);

/** The map key of an object: "ns/name" or "name" into buf; false when it has no name. */
bool rf_store_key(const json_t *obj, bool namespaced, char *buf, size_t len);

/** Whether objects of the kind live in namespaces (pods, resourceclaims). */
bool rf_kind_namespaced(enum rf_kind k);

/** The object kind: "Node", "Pod", "ResourceSlice", "ResourceClaim", "DeviceClass". */
const char *rf_kind_name(enum rf_kind k);

#endif
