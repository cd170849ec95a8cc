/* Building test clusters from the real driver-shaped objects in test/data/dra/ (copies of
 * reference/dra-examples/): one HGX H100 node (8 GPUs + 8 rail CX-7 NICs + a front-end X710) per
 * name, plus claims and pods written inline as JSON. */
#ifndef RF_TEST_ALLOC_FIXTURE_H
#define RF_TEST_ALLOC_FIXTURE_H

#include <jansson.h>

#include "alloc/model/model.h"

struct fixture {
	struct rf_config cfg;
	struct rf_cel_cache *cel;
	struct rf_cluster_objects objs;
	struct rf_cluster *c;
};

/** Empty object arrays, default config, the three DeviceClasses of the examples. */
void fixture_init(struct fixture *f);

/** Add an HGX H100 node named `name` (Node + NVIDIA slice + dranet slice from the examples). */
void fixture_add_hgx(struct fixture *f, const char *name);

/** Add one object parsed from JSON text; kind decides the array. Aborts the test on bad JSON. */
void fixture_add_json(struct fixture *f, const char *json);

/** A ResourceClaim "ns/name" with the given spec JSON and, when alloc_node is set, an allocation
 * of the listed devices ("gpu.nvidia.com:gpu-0", "dra.net:pci-0000-18-00-0", NULL-terminated). */
void fixture_add_claim(struct fixture *f, const char *ns, const char *name, const char *spec_json,
		       const char *alloc_node, const char *const *devices);

/** A pending Pod in namespace ml with one resourceClaims entry naming `claim` (none when NULL)
 * and the given annotation members (JSON text without braces, or NULL). Aborts on bad JSON. */
json_t *fixture_pod(const char *name, const char *claim, const char *annotations);

/** Build (or rebuild) the generation. */
struct rf_cluster *fixture_build(struct fixture *f);

void fixture_release(struct fixture *f);

/** Read a file of test/data (RF_TEST_DATA) into a string; aborts on error. Caller frees. */
char *fixture_read(const char *relpath);

/** Spec of a claim asking one GPU and one rdma NIC, with or without the pcieRoot constraint. */
extern const char *const SPEC_GPU_NIC_ALIGNED;
extern const char *const SPEC_GPU_NIC_LOOSE;
extern const char *const SPEC_GPU_ONLY;

/** A Ready Node with labels (JSON object members, may be NULL) and, when set, the value of its
 * railfit.io/pci-topology annotation. */
void fixture_add_node(struct fixture *f, const char *name, const char *labels,
		      const char *ann_value);

/** A gpu.nvidia.com slice on node: n GPUs gpu-0.. at the PCI addresses, with a pcieRoot and a
 * NUMA node each when given. */
void fixture_add_gpus(struct fixture *f, const char *node, size_t n, const char *const *pci,
		      const char *const *roots, const int *numa);

/** An 8 x L4 node without NVLink (two GPUs per root complex, four per NUMA node). */
extern const char *const FIXTURE_L4_PCI[8];
extern const char *const FIXTURE_L4_ROOTS[8];
extern const int FIXTURE_L4_NUMA[8];

#endif
