/* Per node: prediction, filter and score (DESIGN section 7).
 *
 * rf_evaluate_node() runs the allocator mirror for the pod's demand on one node, takes the worst
 * outcome over the scan orders that matter, computes the best achievable assignment, applies the
 * filter rules (claims allocatable, min-alignment, NIC and front-end headroom) and the score parts
 * (alignment, bandwidth, rail, packing). Every number it produces is kept in rf_node_eval so that
 * explain can show it. Pure logic; any thread. */
#ifndef RF_ALLOC_EVALUATE_H
#define RF_ALLOC_EVALUATE_H

#include <stdbool.h>

#include <jansson.h>

#include "alloc/demand.h"
#include "alloc/model/model.h"
#include "alloc/predict.h"

enum rf_verdict { RF_VERDICT_PASS = 0, RF_VERDICT_FAIL, RF_VERDICT_UNRESOLVABLE };

const char *rf_verdict_name(enum rf_verdict v);

enum rf_part {
	RF_PART_ALIGNMENT = 0,
	RF_PART_BANDWIDTH,
	RF_PART_RAIL,
	RF_PART_PACKING,
	RF_PART_GPU,      /* level between the pod's GPUs (2+ GPUs) */
	RF_PART_LOCALITY, /* the node's network block/spine against its group's */
	RF_PART_CPU,      /* DRA CPU devices on the NUMA node of the pod's GPUs (NICs) */
	RF_PART_COUNT
};

const char *rf_part_name(enum rf_part p);

/** The part's weight (scoring.weights). */
double rf_part_weight(const struct rf_config *cfg, enum rf_part p);

/** Where a node sits in the network against its group's pods (the locality part). */
enum rf_place {
	RF_PLACE_NONE = 0,   /* does not apply: no group, or no member on a labelled node */
	RF_PLACE_BLOCK,      /* in a block where the group runs */
	RF_PLACE_SPINE,      /* in a spine where the group runs, another block */
	RF_PLACE_ELSEWHERE,  /* neither */
	RF_PLACE_UNLABELLED, /* the node has neither label */
};

const char *rf_place_name(enum rf_place p);

/** The place of node n for the pod's group (d->places); a cheap lookup, for the memo's key. */
enum rf_place rf_demand_place(const struct rf_demand *d, const struct rf_node *n);

#define RF_MAX_REASONS 8
#define RF_REASON_LEN  512
#define RF_MAX_NICS    32

struct rf_nic_headroom {
	const struct rf_device *dev;
	struct rf_quantity capacity, used, asked, free_after;
	const char *capacity_source; /* "slice" or "default" */
};

struct rf_node_eval {
	const struct rf_node *node; /* NULL when the node is not in the cache */
	char node_name[254];
	bool explain; /* keep every informational reason (explain), not only failures */
	enum rf_verdict verdict;
	size_t n_reasons;
	int score;
	double parts[RF_PART_COUNT];
	bool part_applies[RF_PART_COUNT];

	enum rf_search_status status;
	bool has_predicted;
	enum rf_level predicted_level; /* worst GPU-to-nearest-NIC level; UNKNOWN if n/a */
	bool alignment_applies;
	bool deterministic;
	unsigned n_orders;
	size_t n_outcomes;
	bool orders_exhaustive;
	bool has_best;
	enum rf_level best_level;
	bool best_exhaustive;
	bool cel_error;
	bool scheduler_crash; /* kube-scheduler itself crashes on this pod (1.36.0-1.36.1) */

	size_t n_nics;
	bool fe_applies;
	struct rf_quantity fe_capacity, fe_egress_used, fe_ingress_used;
	const char *fe_source;
	uint64_t group_rails; /* the rail set of the pod's group on other nodes (rail_target.h) */
	/* how well the pod's 2+ rails fit one aligned block counts: in the packing part for the
	 * group's first pod, in the rail part when the group's nodes hold more rails than it gets
	 */
	bool rail_block;

	/* GPU to GPU (pods that get 2+ GPUs): the worst pair, the source of the levels */
	bool gpu_applies;
	unsigned n_gpus;
	enum rf_level gpu_level;
	enum rf_level_source gpu_source;
	enum rf_place place; /* the node against where the pod's group runs (locality part) */
	/* GPU to CPU: CPU devices (devices.cpuDrivers) predicted, how many sit on a NUMA node of
	 * the pod's GPUs (NICs when it has no GPU), and those NUMA nodes as a mask */
	unsigned n_cpus, n_cpus_known, n_cpus_aligned;
	uint64_t accel_numa;
	bool cpu_applies;

	/* the large members last: an evaluation clears only what comes before them */
	char reasons[RF_MAX_REASONS][RF_REASON_LEN];
	struct rf_assignment predicted; /* the worst outcome over the scan orders tried */
	struct rf_assignment best;
	struct rf_nic_headroom nics[RF_MAX_NICS];
};

/** Search buffers lent by a caller that evaluates many nodes, so that each evaluation does not
 * allocate its own (they are large: RF_MAX_OUTCOMES assignments each). */
struct rf_eval_work {
	struct rf_search_result res, again;
};

/**
 * Evaluate one node. ret is fully overwritten. With explain, the best achievable assignment is
 * always computed (otherwise only when it decides a message). Never fails except -ENOMEM.
 */
int rf_evaluate_node(const struct rf_cluster *c, const struct rf_demand *d, const char *node_name,
		     bool explain, struct rf_node_eval *ret);
/** The same with the caller's buffers (work may be NULL). */
int rf_evaluate_node_work(const struct rf_cluster *c, const struct rf_demand *d,
			  const char *node_name, bool explain, struct rf_eval_work *work,
			  struct rf_node_eval *ret);

/**
 * The same with pods evicted (preemption): the release set's claims free their devices and
 * shares, and the victims' bandwidth annotations stop counting. rel may be NULL.
 */
int rf_evaluate_node_released(const struct rf_cluster *c, const struct rf_demand *d,
			      const char *node_name, const struct rf_release *rel,
			      struct rf_node_eval *ret);

/**
 * Build the release set of victim pods: the pods, and their allocated claims whose every
 * reservedFor entry is a victim (a claim shared with a pod that stays keeps its devices).
 * Free with rf_release_free(). -ENOMEM only.
 */
int rf_release_from_victims(const struct rf_cluster *c, const struct rf_pod *const *victims,
			    size_t n, struct rf_release *ret);
void rf_release_free(struct rf_release *r);

/**
 * GPU-to-GPU level of an assignment: the worst pair of its GPUs (MIG partitions aside) and the
 * mean points over the pairs (scoring.levels, NVL from scoring.levels.NVL); false when it has
 * fewer than two GPUs or no pair's level is known. ret_src (may be NULL): annotation when some
 * pair's level came from it, else dra.
 */
bool rf_assignment_gpu_alignment(const struct rf_node *n, const struct rf_config *cfg,
				 const struct rf_assignment *a, enum rf_level *ret_worst,
				 double *ret_points, enum rf_level_source *ret_src);

/**
 * GPU to CPU of an assignment (the cpu part): its CPU devices (devices.cpuDrivers), those with
 * a known NUMA node, and those on a NUMA node of its GPUs (of its NICs when it has no GPU).
 * False when no CPU's or no accelerator's NUMA node is known (the part does not apply).
 */
bool rf_assignment_cpu_alignment(const struct rf_node *n, const struct rf_assignment *a,
				 unsigned *ret_cpus, unsigned *ret_known, unsigned *ret_aligned);

/** The worst GPU level of an assignment (each GPU to its nearest NIC of the assignment), and
 * the mean alignment points; false when the assignment has no GPU or no NIC. */
bool rf_assignment_alignment(const struct rf_node *n, const struct rf_config *cfg,
			     const struct rf_assignment *a, enum rf_level *ret_worst,
			     double *ret_points);

#endif
