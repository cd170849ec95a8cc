/* What the decision pipeline's files share (alloc/evaluate.c and the judges beyond the NIC,
 * alloc/evaluate-beyond-nic.c): the state of one node's evaluation and the reason helpers. Not
 * for use outside alloc/. */
#ifndef RF_ALLOC_EVALUATE_PRIVATE_H
#define RF_ALLOC_EVALUATE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "alloc/alloc-private.h"
#include "alloc/evaluate.h"

/* The pipeline of one node: demand -> node state -> predict -> score parts -> verdict (see
 * evaluate.c). */
struct pipeline {
	const struct rf_cluster *c;
	const struct rf_config *cfg;
	const struct rf_demand *d;
	const struct rf_node *n;
	const struct rf_release *rel;
	struct rf_eval_work *work;
	struct rf_search_request sr;
	/* the claims the pod asks for on this node (the extended-resource claim's variant), and
	 * their classes as the demand resolved them */
	const struct rf_claim *claims[RF_MAX_POD_CLAIMS];
	const struct rf_class *const *classes[RF_MAX_POD_CLAIMS];
	struct rf_assignment pinned;   /* devices of the pod's allocated claims */
	enum rf_level worst_level;     /* worst level over every outcome of the scan orders */
	enum rf_level worst_gpu_level; /* the same between GPUs */
	struct rf_node_eval *e;
};

/* What the score functions of rf_predict_best() read: the node and the configuration. */
struct score_ctx {
	const struct rf_node *node;
	const struct rf_config *cfg;
};

/* A reason for explain (and, for the first failing one, the filter message). */
void rf_eval_reason(struct rf_node_eval *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An informational reason: only explain shows it, so filter and prioritize do not format it. */
#define note(e, ...)                                                                               \
	do {                                                                                       \
		if ((e)->explain)                                                                  \
			rf_eval_reason((e), __VA_ARGS__);                                          \
	} while (0)

/* A failing reason goes first: the first reason is the filter message. */
void rf_eval_fail(struct rf_node_eval *e, enum rf_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

bool rf_eval_is_whole_gpu(const struct rf_device *d);

/* CPUs of an assignment against the NUMA nodes of its GPUs (else NICs). False when it has no
 * CPU device with a known NUMA node or no accelerator with one. */
bool rf_eval_cpu_alignment(const struct rf_node *n, const struct rf_assignment *a,
			   unsigned *ret_cpus, unsigned *ret_known, unsigned *ret_aligned,
			   uint64_t *ret_mask);

/* min-gpu-alignment and min-alignment over DRA CPUs (evaluate-beyond-nic.c): 0 or -ENOMEM. */
int rf_judge_gpu_alignment(struct pipeline *p);
int rf_judge_cpu_alignment(struct pipeline *p);

#endif
