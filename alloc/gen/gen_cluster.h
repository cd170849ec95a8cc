/* Synthetic clusters shaped like real drivers' output (reference/dra-examples/): HGX-like nodes,
 * their gpu.nvidia.com and dra.net ResourceSlices, DeviceClasses, a share of devices allocated
 * through ResourceClaims and the pods that hold them. Deterministic for a seed. No I/O. */
#ifndef RF_SERVER_GEN_CLUSTER_H
#define RF_SERVER_GEN_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct rf_gen_options {
	unsigned nodes; /* >= 1 */
	uint64_t seed;
	double used; /* fraction of GPUs allocated, 0..1 */
	/* Fleet shape. 0 (the default): one Running pod and claim per allocated GPU, every pod a
	 * Job worker. > 0: about this many Running pods per node on average; allocated GPUs are
	 * grouped two to a claim (two aligned GPU+NIC pairs on one NUMA node) until the count is
	 * reached, and about half of the pods are Job workers (namespace ml-train), the others
	 * standalone pods (namespace ml-serve). */
	double pods_per_node;
	/* > 0: the nodes, in name order, fall into this many network blocks of (about) equal size,
	 * four blocks to a spine: Node labels network.topology.kubernetes.io/block ("block-0", ...)
	 * and network.topology.kubernetes.io/spine ("spine-0", ...). 0: no such labels. */
	unsigned blocks;
	/* true: every node also publishes a dra.cpu ResourceSlice in the DRA CPU driver's grouped
	 * mode (one shared device per NUMA node, its CPUs a consumable capacity dra.cpu/cpu), and
	 * the DeviceClass dra.cpu is added */
	bool cpu_slices;
};

/** A kubectl-style v1 List (items carry kind/apiVersion). New reference; NULL on OOM. */
json_t *rf_gen_cluster(const struct rf_gen_options *o);

/** The built-in demo cluster of `railfit serve --demo` (~16 nodes, varied states, pending pods). */
json_t *rf_gen_demo(void);

#endif
