/* `railfit simulate`: replay pending pods on a cluster, one at a time, twice (DESIGN section 3):
 *
 *  - "kube-scheduler": kube-scheduler without railfit, approximated: its own filters (node Ready,
 *    CPU and memory requests within allocatable, the pod's claims allocatable on the node: the DRA
 *    plugin), at most numFeasibleNodesToFind feasible nodes per pod in round-robin order
 *    (percentageOfNodesToScore, adaptive by default), node score = NodeResourcesFit
 *    LeastAllocated over CPU, memory and GPUs (DRA device count), ties broken at random (seeded);
 *  - "railfit": the same, plus railfit's filter and prioritize on the nodes kube-scheduler found
 *    feasible, answered exactly as the extender verbs answer (rf_judge_node(): the same demand,
 *    prediction, memo and verdict), prioritize scores weighted as kube-scheduler weighs an
 *    extender (score x weight x 10).
 *
 * On the chosen node the claims get the devices the allocator mirror predicts (rf_predict: DRA
 * first-fit), and the cluster is updated as the scheduler and the DRA plugin would: the pod bound
 * (Running), its claims allocated with those devices and reserved for it (consumable bandwidth
 * as a share), then the next generation is built from the changed objects
 * (rf_cluster_build_next() with the same layout: only the changed pod and claims are parsed and
 * only the changed node's remembered verdicts are lost). Deterministic for a seed. Pure logic,
 * no I/O. */
#ifndef RF_ALLOC_SIM_SIMULATE_H
#define RF_ALLOC_SIM_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "alloc/model/model.h"

struct rf_sim_options {
	uint64_t seed;
	unsigned extender_weight; /* extenders[].weight of the scheduler configuration (1..100) */
	unsigned pct_nodes_to_score; /* percentageOfNodesToScore: 0 adaptive, else 1..100 */
	unsigned threads;            /* > 1: the two columns run at the same time */
	bool rebuild_each; /* a full build after every placement (tests: the lazy builds agree) */
};

/**
 * Simulate. objs is the cluster (borrowed; its pods may include the queued ones, unbound);
 * queue holds the Pods to place in order (borrowed; the pods that are in objs->pods must be the
 * very same objects there). Pods' containers[].resources.requests and Nodes'
 * status.allocatable are read when present (see rf_slim_options.keep_requests).
 *
 * The report (a new reference in *ret) has this shape: {"nodes":N,"pods":N,"seed":S,
 * "approximation":"…","columns":[{"name":"kube-scheduler","placed":…,"pending":…,
 * "pendingReasons":{…},"levels":{"PIX":…},"gpuNicPods":…,"multiDeviceBelowPHB":…,
 * "minAlignment":{"asked":…,"met":…},"nicsOvercommitted":…,"frontendOvercommitted":…,
 * "jobs":[{"job":…,"pods":…,"nodes":…,"railConsistency":…}] (rails node by node: the union
 * of its pods' rails on each node; Jobs on 2+ nodes),"railConsistency":…,"jobsOnSameRails":…,
 * "freeAlignedPairs":…,"freeWholeNodes":…,"multiGpuPods":…,"gpuLevels":{"NVL":…,"PIX":…},
 * "multiGpuBelowPHB":…,"minGpuAlignment":{"asked":…,"met":…},"cpuClaims":{"pods":…,
 * "podsAligned":…,"devicesKnown":…,"devicesOnGpuNuma":…},"jobLocality":{"jobs":…,"oneBlock":…,
 * "oneSpine":…,"spread":…,"unlabelled":…},"generationsBuilt":…},{"name":"railfit",…}],
 * "placements":[{"pod":"ns/n","kube-scheduler":{"node":…,"level":…,"gpuLevel":…,
 * "cpusOnGpuNuma":"k of n","rails":[…]}|{"pending":"why"},…}]}.
 * @return 0, -EINVAL (err says which pod is malformed) or -ENOMEM.
 */
int rf_simulate(const struct rf_cluster_objects *objs, json_t *queue, const struct rf_config *cfg,
		struct rf_cel_cache *cel, const struct rf_sim_options *o, json_t **ret, char *err,
		size_t errlen);

/** kube-scheduler's numFeasibleNodesToFind(percentageOfNodesToScore, n); pct 0 = adaptive. */
size_t rf_sim_feasible_nodes_to_find(unsigned pct, size_t n);

#endif
