/* Verdicts of one generation's nodes, remembered per demand shape (issue 9): the pods of one job
 * ask for the same thing, so a node's verdict and score computed for one of them hold for the
 * next as long as the node's state (its usage fingerprint and rev: the layout that built it)
 * and the group's rails elsewhere are the same. The table carries along a chain of generations
 * with one layout or patched layouts (rf_cluster_build_next decides when): a node a patch
 * makes anew has a new rev, so only its verdicts are judged again. Failure messages name the
 * pod's claims: they are reused only for the same claims.
 *
 * A shape is the canonical text of everything in a demand that the per-node decision reads
 * (requests, selectors, constraints, pinned allocations, min-alignment, bandwidth), claim
 * names aside; it is compared exactly, never by hash alone. Entries are written once and
 * then only read, so lookups take no lock. Pure logic; any thread. */
#ifndef RF_ALLOC_MEMO_H
#define RF_ALLOC_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"

struct rf_memo;
struct rf_memo_shape;

/** A pick of a remembered prediction: the claim by its index in the demand's claims. */
struct rf_memo_pick {
	unsigned claim;
	bool pinned;
	const struct rf_device *dev;
	uint64_t fp; /* rf_fingerprint() of the device's "driver/pool/device" */
};

/** A 64-bit fingerprint of the strings a, b, c (b and c may be NULL) joined by '/', mixed so
 * that fingerprints of sets can be summed (railfit_prediction_total compares sets of devices). */
uint64_t rf_fingerprint(const char *a, const char *b, const char *c);

/** What filter and prioritize need of a node's evaluation. */
struct rf_judgement {
	enum rf_verdict verdict;
	int score;
	bool cel_error;
	bool scheduler_crash; /* see rf_node_eval */
	bool has_predicted;
	bool level_applies;
	enum rf_level level;
	const char *msg; /* reasons[0] when failing (not remembered) or on a selector error */
	const char
		*filter_msg; /* remembered failure: "railfit: " + reasons[0] as filter sends it */
	size_t n_picks;
	const struct rf_memo_pick *picks; /* predicted devices of the pod's unallocated claims */
	uint64_t name_fp;                 /* rf_fingerprint(node name), from rf_judge_node() only */
	/* the node's place in name order (its index when the generation's indexes are in name
	 * order), UINT32_MAX when not known: what a reply sorts names by without comparing them */
	uint32_t name_rank;
};

/** The table of a chain of generations (rf_cluster_build_next); at most
 * `shapes` shapes are kept (least recently used go). It holds node indexes below
 * rf_memo_slots(): n_nodes and some room for nodes added by patches (a node keeps its index,
 * an added one takes the next). Reference counted. */
struct rf_memo *rf_memo_new(size_t n_nodes, size_t shapes);
size_t rf_memo_slots(const struct rf_memo *m);
struct rf_memo *rf_memo_ref(struct rf_memo *m);
void rf_memo_unref(struct rf_memo *m);
/** Where a node's records go in a generation built in full from the very objects of the one the
 * table served (rf_memo_carry): same objects, so the same verdicts; only the keys move. */
struct rf_memo_move {
	const struct rf_node *node; /* the node there; NULL: its records are not carried */
	uint64_t fp_xor;            /* its usage fingerprint here ^ there (struct rf_node_use) */
	uint64_t old_rev;           /* rf_node_rev() here: records of an older rev are stale */
	uint64_t rev;               /* rf_node_rev() there */
};

/**
 * A new table for that generation (n_nodes nodes) with from's shapes, identities and records:
 * the record of node index i keyed again by map[i] (n_map entries) when it is current (its rev
 * map[i].old_rev: a record the chain's patches made stale would match again under the new rev;
 * its usage fingerprint needs no check, the XOR keeps a stale one stale), its predicted devices
 * found again among map[i].node's devices by their fingerprint (a record whose device is not
 * there is dropped). NULL on OOM.
 */
struct rf_memo *rf_memo_carry(struct rf_memo *from, size_t n_nodes, size_t shapes,
			      const struct rf_memo_move *map, size_t n_map);

/** Judgements replaced since the table was made (they are kept until it goes). */
size_t rf_memo_retired(const struct rf_memo *m);

/**
 * The demand's shape and identity (claim names) as canonical text.
 * @return 0, -ENOMEM, or -E2BIG when the demand does not fit or the classes of a claim it
 * searches for were not resolved (rf_demand_classes: the search would then look them up in the
 * generation, which the shape would not name): then do not memoize.
 */
int rf_demand_shape(const struct rf_demand *d, char **ret_shape, char **ret_ident);

/** The shape's entries (created when new), referenced until rf_memo_shape_put(). NULL on OOM. */
struct rf_memo_shape *rf_memo_shape_get(struct rf_memo *m, const char *shape);
void rf_memo_shape_put(struct rf_memo_shape *s);

/** An identity (rf_demand_shape's ident) interned in the shape as a number that entries compare;
 * the shape keeps the latest 256, the oldest makes room. 0 on OOM: then failure messages are
 * not remembered for it. Thread-safe. */
uint64_t rf_memo_ident(struct rf_memo_shape *s, const char *ident);

/**
 * A remembered judgement of node `idx` whose usage fingerprint is node_fp (rf_node_use) and
 * whose rev is node_rev (struct rf_node), with the group's rails elsewhere `group_rails`. A
 * failure message is only reused for the same identity (rf_memo_ident), unless need_msg is
 * false.
 * @return true and *ret (pointing into the shape: valid while it is referenced), or false.
 */
bool rf_memo_lookup(struct rf_memo_shape *s, size_t idx, uint64_t node_fp, uint64_t node_rev,
		    uint64_t group_rails, uint64_t ident, bool need_msg, struct rf_judgement *ret);

/** Remember an evaluation (not one with a release set, not explain); it replaces what the node
 * had for another fingerprint, rev, rails or identity. name_fp: rf_fingerprint() of the node's
 * name, handed back with the verdict (rf_judgement.name_fp) for the predictions' keys. */
void rf_memo_store(struct rf_memo_shape *s, size_t idx, uint64_t node_fp, uint64_t node_rev,
		   uint64_t group_rails, uint64_t ident, const struct rf_demand *d,
		   const struct rf_node_eval *e, uint64_t name_fp);

/** The failure message as filter sends it: "railfit: " + reason, with '%' (kube-scheduler
 * formats Error with fmt.Errorf) replaced by ' '. malloc'd; NULL on OOM. */
char *rf_filter_message(const char *reason);

/** The judgement of an evaluation; picks are written to `picks` (at least RF_MAX_PICKS). */
void rf_judgement_from_eval(const struct rf_demand *d, const struct rf_node_eval *e,
			    struct rf_memo_pick *picks, struct rf_judgement *ret);

/** A pod's demand with its shape, for judging many nodes. */
struct rf_judge_ctx {
	const struct rf_cluster *cluster;
	const struct rf_demand *demand;
	struct rf_memo_shape *shape; /* NULL: nothing is remembered */
	char *shape_text, *ident_text;
	uint64_t ident; /* ident_text interned in the shape (0: no messages kept for it) */
	const struct rf_group *group; /* the pod's rail group, resolved once */
};

/** Look up (or create) the demand's shape in the generation's memo. -ENOMEM only; a demand too
 * large to remember is judged without the memo. */
int rf_judge_begin(const struct rf_cluster *c, const struct rf_demand *d, struct rf_judge_ctx *ret);
void rf_judge_end(struct rf_judge_ctx *ctx);

/** What judging needs per thread; large (~150 KiB): allocate one per worker, not per node. */
struct rf_judge_scratch {
	struct rf_node_eval eval;
	struct rf_eval_work work;
	struct rf_memo_pick picks[RF_MAX_PICKS];
};

/**
 * Judge one node for filter (need_msg) or prioritize: remembered, or evaluated with the
 * caller's scratch (and remembered). *ret points into the memo or into scratch, valid until
 * the next call with it or rf_judge_end(). -ENOMEM only.
 */
int rf_judge_node(struct rf_judge_ctx *ctx, const char *node_name, bool need_msg,
		  struct rf_judge_scratch *scratch, struct rf_judgement *ret);
/** rf_judge_node() finding the node with rf_cluster_node_hint(ctx's cluster, node_name, hint):
 * for a run of names in index order; name_hash: rf_cluster_name_hash(node_name) when known (0:
 * not). */
int rf_judge_node_hint(struct rf_judge_ctx *ctx, const char *node_name, uint64_t name_hash,
		       size_t *hint, bool need_msg, struct rf_judge_scratch *scratch,
		       struct rf_judgement *ret);
/** For names judged in no order: what judging the name of rf_cluster_name_hash() name_hash will
 * read first (its name, node struct and usage, and the slot of its remembered verdict, not the
 * record behind it), fetched into the cache a few names ahead (rf_cluster_prefetch_slot() a few
 * names before that). A hint only. */
void rf_judge_prefetch(const struct rf_judge_ctx *ctx, uint64_t name_hash);

#endif
