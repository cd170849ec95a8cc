/* Internals shared by gen_objects.c (JSON builders), gen_cluster.c (random clusters) and
 * gen_demo.c (the built-in demo). Not to be included from outside server/gen_*.c. */
#ifndef RF_SERVER_GEN_PRIVATE_H
#define RF_SERVER_GEN_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#define GEN_MAX_GPUS 16
#define GEN_MAX_NICS 16
#define GEN_NAME_MAX 64

/* ---- deterministic randomness ---------------------------------------------------------------- */

/** splitmix64: tiny, good enough to spread usage; never rand(). */
struct gen_rng {
	uint64_t s;
};

void gen_rng_seed(struct gen_rng *r, uint64_t seed, uint64_t stream);
uint64_t gen_rng_next(struct gen_rng *r);
/** Uniform in [0, n); n > 0. */
unsigned gen_rng_below(struct gen_rng *r, unsigned n);
/** A 64-bit hash of seed and a string key (FNV-1a, then the splitmix64 finaliser). */
uint64_t gen_hash(uint64_t seed, const char *key);

/* ---- hardware shapes (static tables) ----------------------------------------------------------
 */

struct gen_gpu_model {
	const char *product;       /* productName attribute */
	const char *product_label; /* nvidia.com/gpu.product node label */
	const char *architecture;
	const char *compute_cap; /* cudaComputeCapability, a version */
	const char *memory;      /* capacity, a Quantity */
	const char *memory_mib;  /* nvidia.com/gpu.memory node label */
};

struct gen_gpu {
	const char *bdf;  /* resource.kubernetes.io/pciBusID */
	const char *root; /* resource.kubernetes.io/pcieRoot */
};

enum gen_nic_kind {
	GEN_NIC_ROCE,      /* netdev + RDMA device (ConnectX-7 rail NIC) */
	GEN_NIC_ETH,       /* netdev only, rdma false (front-end X710, AWS ENA) */
	GEN_NIC_RDMA_ONLY, /* RDMA device without netdev (AWS EFA) */
};

struct gen_nic {
	const char *bdf; /* dra.net/pciAddress; the device name is derived from it */
	const char *root;
	int numa;
	enum gen_nic_kind kind;
	const char *if_name;  /* NULL for RDMA-only */
	const char *rdma_dev; /* NULL when there is none */
	const char *vendor, *device, *subsystem;
	int mtu;
	const char *mac_oui; /* "b8:3f:d2" */
	unsigned subnet; /* rails: second octet offset of the 10.x address; ETH: 0 = 192.168/16 */
	bool sriov;
};

struct gen_hw {
	const char *instance_type;
	const struct gen_gpu_model *model; /* NULL: no GPUs */
	const struct gen_gpu *gpus;
	unsigned n_gpus;
	const struct gen_nic *nics; /* sorted by dranet device name */
	unsigned n_nics;            /* 0: no dranet slice */
	const char *cpu, *cpu_alloc, *memory, *memory_alloc, *storage;
	const char *kernel, *os_image;
};

extern const struct gen_hw gen_hw_hgx_h100;
extern const struct gen_hw gen_hw_p4d;
extern const struct gen_hw gen_hw_l4;
extern const struct gen_hw gen_hw_cpu;

/** dranet's device name of a PCI NIC: "0000:18:00.0" -> "pci-0000-18-00-0". */
void gen_nic_name(const struct gen_nic *nic, char ret_name[static GEN_NAME_MAX]);
/** The index of the rdma NIC on @p gpu's pcieRoot, or -1. */
int gen_hw_nic_on_root(const struct gen_hw *hw, unsigned gpu);

/* ---- one node ------------------------------------------------------------------------------- */

struct gen_node {
	char name[GEN_NAME_MAX];
	unsigned index; /* addresses derive from it */
	const struct gen_hw *hw;
	uint64_t seed;
	bool nic_no_numa;    /* older dranet: no dra.net/numaNode */
	uint32_t nic_in_pod; /* bit i: NIC i's netdev sits in a pod netns (host attributes gone) */
	const char *frontend_bw;     /* Node annotation railfit.io/frontend-bandwidth, or NULL */
	const char *pci_topology;    /* Node annotation railfit.io/pci-topology, or NULL */
	bool gpu_used[GEN_MAX_GPUS]; /* set by gen_add_running(); a second allocation asserts */
	bool nic_used[GEN_MAX_NICS];
	unsigned n_pods; /* pods placed so far (pod IPs) */
	/* network-topology labels (network.topology.kubernetes.io/block, /spine); "" = none */
	char block[GEN_NAME_MAX], spine[GEN_NAME_MAX];
	bool cpu_slice; /* a dra.cpu slice in grouped mode (kubernetes-sigs/dra-driver-cpu) */
};

void gen_node_init(struct gen_node *n, const char *name, unsigned index, const struct gen_hw *hw,
		   uint64_t seed);

/* ---- the output --------------------------------------------------------------------------- */

/** Collects the items of each kind; any failed allocation sets oom and is reported at the end. */
struct gen {
	bool oom;
	uint64_t seed;
	unsigned rv; /* resourceVersion counter */
	json_t *nodes, *pods, *slices, *claims, *classes;
};

void gen_init(struct gen *g, uint64_t seed);
/** Sorts each kind like the API server lists it (namespace, name), builds the v1 List (new
 * reference) and releases @p g. NULL on OOM. */
json_t *gen_finish(struct gen *g);

void gen_add_device_classes(struct gen *g);
/** The DeviceClass "dra.cpu" (device.driver == 'dra.cpu'), as the DRA CPU driver installs it. */
void gen_add_cpu_class(struct gen *g);
/** The Node and its ResourceSlices (gpu.nvidia.com when it has GPUs, dra.net when it has NICs). */
void gen_add_node(struct gen *g, const struct gen_node *n);

/* ---- claims and pods --------------------------------------------------------------------------
 */

enum gen_shape {
	GEN_PAIR,      /* gpu + nic, matchAttribute pcieRoot */
	GEN_LOOSE,     /* gpu + nic, no constraint */
	GEN_GPU_ONLY,  /* gpu */
	GEN_NIC_ONLY,  /* nic */
	GEN_TWO_PAIRS, /* gpu-a nic-a gpu-b nic-b, 3 constraints */
};

/** A Running pod on a node holding one claim generated from a template. */
struct gen_running {
	const char *ns;
	const char *pod;
	const char *job;   /* Job owner + batch.kubernetes.io/job-name label, or NULL */
	const char *group; /* railfit.io/group label, or NULL */
	const char *app;   /* app.kubernetes.io/name label, or NULL */
	const char *template_name;
	const char *image;
	enum gen_shape shape;
	int gpu[2], nic[2]; /* device indexes into the node's hw; the second only for TWO_PAIRS */
};

/** Adds the pod and its allocated, reserved claim; marks the devices used on @p n. */
void gen_add_running(struct gen *g, struct gen_node *n, const struct gen_running *r);

/** A Pending pod (no node) with an optional pre-created, unallocated claim. */
struct gen_pending {
	const char *ns;
	const char *pod;
	const char *group;         /* railfit.io/group label, or NULL */
	const char *app;           /* app.kubernetes.io/name label, or NULL */
	const char *min_alignment; /* railfit.io/min-alignment, or NULL */
	const char *egress, *ingress;
	const char *image;
	const char *cpu, *memory;
	const char *claim;     /* claim name, NULL = no claim */
	const char *pod_claim; /* name in pod.spec.resourceClaims */
	enum gen_shape shape;
	const char *gpu_selector; /* CEL in the gpu request, or NULL */
};

void gen_add_pending(struct gen *g, const struct gen_pending *p);

/** A Running pod without claims (e.g. a bandwidth-annotated data loader). */
struct gen_plain {
	const char *ns, *pod, *image, *app;
	const char *egress, *ingress;
};

void gen_add_plain_running(struct gen *g, struct gen_node *n, const struct gen_plain *p);

#endif
