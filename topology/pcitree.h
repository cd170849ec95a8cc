/* The PCI tree of one machine and the locality level rule over it (DESIGN section 5), without
 * hwloc: a plain model that topology/hwloc_import.c fills from an hwloc topology and that tests
 * fill by hand.
 *
 * The tree (struct rf_pcitree) holds host bridges, PCI bridges and PCI functions, each knowing its
 * parent and the NUMA node of its first non-I/O ancestor. rf_pcitree_level() applies the rule:
 *
 *   - a bridge whose parent is a host bridge is a root port, its own unit; below it, bridge levels
 *     alternate upstream port (a switch: its own unit) / downstream port (belongs to its parent
 *     switch);
 *   - walk from a up to the lowest common ancestor and down to b, map every bridge on the way
 *     to its unit: at most one distinct unit is PIX, more is PXB; a lowest common ancestor that
 *     is a host bridge is PHB;
 *   - no common ancestor (different host bridges): same NUMA node is NODE, different is SYS; when a
 *     NUMA node is unknown NODE and SYS cannot be told apart: NODE, flagged RF_PCITREE_NUMA_GUESS;
 *   - a device with no host bridge above it (an XML exported without bridges): below a common
 *     ancestor the top bridge is taken as the root port; without one the level is SYS when both
 *     NUMA nodes are known and differ, else UNKNOWN (flagged RF_PCITREE_NO_HOSTBRIDGE).
 *
 * rf_pcitopo_compute() then picks the GPUs and NICs (by PCI class and vendor, rf_pci_classify) and
 * computes the level of every pair: struct rf_pcitopo, what `railfit topology` prints and what the
 * node annotation encodes (topology/annotation.h). Pure logic, no I/O, any thread. */
#ifndef RF_TOPOLOGY_PCITREE_H
#define RF_TOPOLOGY_PCITREE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config/level.h"
#include "topology/locality.h"

/** What a PCI function is to railfit. */
enum rf_pci_kind { RF_PCI_OTHER = 0, RF_PCI_GPU, RF_PCI_NIC };

/**
 * GPU/accelerator: class 0x0302, class 0x0300 from vendor 0x10de (NVIDIA) or 0x1002 (AMD), or
 * class 0x12xx; NIC: class 0x02xx (SR-IOV virtual functions included); everything else OTHER.
 * class_id is the 16-bit class/subclass (hwloc's pcidev.class_id), without the prog-if byte.
 */
enum rf_pci_kind rf_pci_classify(unsigned class_id, unsigned vendor_id);

/** "gpu", "nic" or "other"; never NULL. */
const char *rf_pci_kind_name(enum rf_pci_kind k);

enum rf_pcitree_type {
	RF_PCITREE_HOSTBRIDGE = 0, /* a PCI root complex (hwloc: bridge with upstream type HOST) */
	RF_PCITREE_BRIDGE,         /* a PCI-to-PCI bridge: root port or switch port */
	RF_PCITREE_DEVICE,         /* a PCI function */
};

/** One node, as given to rf_pcitree_add(). */
struct rf_pcitree_node {
	enum rf_pcitree_type type;
	int parent; /* index of a node added before, or -1: attached to a CPU-side object */
	int numa;   /* NUMA node (OS index) of the first non-I/O ancestor, -1 when unknown */
	char pci[RF_PCI_ADDR_LEN]; /* bridges and devices: the address (any form rf_pci_normalize
				      takes); host bridges: "" */
	unsigned domain, bus;      /* host bridges: PCI domain and secondary bus ("pci0000:15") */
	unsigned vendor_id, device_id, class_id; /* bridges and devices */
};

/* Flags that rf_pcitree_level() may set. */
#define RF_PCITREE_NUMA_GUESS    0x1u /* NODE only because a NUMA node is unknown */
#define RF_PCITREE_NO_HOSTBRIDGE 0x2u /* a device has no host bridge above it */

#define RF_PCITREE_MAX_NODES 65536

struct rf_pcitree;

/** An empty tree; NULL on OOM. Free with rf_pcitree_free(). */
struct rf_pcitree *rf_pcitree_new(void);

/** Accepts NULL. */
void rf_pcitree_free(struct rf_pcitree *t);

/**
 * Add a node (copied). Its parent must have been added before, so the tree has no cycles.
 * @return the new node's index (>= 0), -EINVAL for a bad type, parent or PCI address (devices and
 *	   bridges need one), -E2BIG beyond RF_PCITREE_MAX_NODES, -ENOMEM.
 */
int rf_pcitree_add(struct rf_pcitree *t, const struct rf_pcitree_node *n);

/** Add an OS device name (netdev, RDMA device, nvml0, ...) to a device node; the string is copied.
 * @return 0, -EINVAL (bad index or empty name), -ENOMEM. */
int rf_pcitree_add_name(struct rf_pcitree *t, int node, const char *name);

/**
 * Record `links` NVLinks between two device nodes (GPUs, or a GPU or NVSwitch and an NVSwitch),
 * as hwloc's NVLinkBandwidth distances give them (topology/hwloc_nvlink.c). Links between the
 * same two nodes add up. rf_pcitopo_compute() turns them into GPU-to-GPU link counts.
 * @return 0, -EINVAL (bad index, a == b, not a device, or links 0), -ENOMEM.
 */
int rf_pcitree_add_nvlink(struct rf_pcitree *t, int a, int b, unsigned links);

/** Add a note about the whole machine (e.g. why NUMA is unknown); copied. 0 or -ENOMEM. */
int rf_pcitree_add_note(struct rf_pcitree *t, const char *note);

size_t rf_pcitree_count(const struct rf_pcitree *t);

/** Node i as added (pci normalised), or NULL when out of range. Borrowed. */
const struct rf_pcitree_node *rf_pcitree_node(const struct rf_pcitree *t, int i);

/**
 * Level between nodes a and b (normally two devices) by the rule above. ret_flags (may be NULL)
 * gets RF_PCITREE_* flags explaining an uncertain answer. Out-of-range indexes give UNKNOWN;
 * a == b gives PIX.
 */
enum rf_level rf_pcitree_level(const struct rf_pcitree *t, int a, int b, unsigned *ret_flags);

/** One GPU or NIC of a computed topology. */
struct rf_pcitopo_device {
	char pci[RF_PCI_ADDR_LEN];
	enum rf_pci_kind kind; /* RF_PCI_GPU or RF_PCI_NIC */
	int numa;              /* -1 when unknown */
	char pcie_root[16];    /* "pci0000:15" (its host bridge), "" when it has none */
	unsigned vendor_id, device_id, class_id;
	char **names; /* OS devices, malloc'd strings */
	size_t n_names;
};

/**
 * GPUs and NICs of a machine and the level of every pair. A plain value type: every pointer is a
 * malloc'd array owned by the struct, released by rf_pcitopo_free() (tests may fill one by hand).
 */
struct rf_pcitopo {
	struct rf_pcitopo_device *devices; /* GPUs, then NICs; each group by PCI address */
	size_t n_devices, n_gpus, n_nics;
	unsigned char *levels;  /* n_devices * n_devices enum rf_level values (PCIe levels, never
				   NVL); diagonal unused */
	unsigned char *nvlinks; /* n_devices * n_devices NVLink counts between GPUs (at most 255),
				   0 = none; NULL when the machine has no NVLink at all */
	char **notes;           /* what the data could not tell, one sentence each */
	size_t n_notes;
};

/**
 * Pick the GPUs and NICs of a tree and compute all levels. A PCI address seen twice keeps its
 * first device (and adds a note). Notes of the tree are copied, and a note is added when some
 * levels are NUMA guesses or lack a host bridge.
 * @return 0 (*ret owned by the caller), -ENOMEM.
 */
int rf_pcitopo_compute(const struct rf_pcitree *t, struct rf_pcitopo **ret);

/** Accepts NULL. */
void rf_pcitopo_free(struct rf_pcitopo *t);

/** Level between devices i and j (PIX when i == j). */
enum rf_level rf_pcitopo_level(const struct rf_pcitopo *t, size_t i, size_t j);

/** NVLinks between devices i and j (0: none, or not two GPUs). */
unsigned rf_pcitopo_nvlinks(const struct rf_pcitopo *t, size_t i, size_t j);

/** GPU-to-GPU level: NVL when the two GPUs share NVLinks, else the PCIe level. */
enum rf_level rf_pcitopo_gpu_level(const struct rf_pcitopo *t, size_t i, size_t j);

/** The matrix cell between devices i and j: "NV<links>" (written into buf) or the level name. */
const char *rf_pcitopo_cell(const struct rf_pcitopo *t, size_t i, size_t j, char buf[16]);

/** Index of a device by PCI address (any form rf_pci_normalize takes), or -ENOENT / -EINVAL. */
int rf_pcitopo_find(const struct rf_pcitopo *t, const char *pci);

/**
 * `railfit topology -o json` (DESIGN section 5): {"source":…,"devices":[{"pci","kind","numa",
 * "names","pcieRoot","vendor","device","class"}],"matrix":{"<pci>":{"<pci>":"PIX",…}},
 * "notes":[…]} with a PCIe level for every ordered pair of distinct devices, and, when GPUs
 * share NVLinks, "nvlinks":{"<pci>":{"<pci>":6,…}} with their link counts (the table shows
 * those pairs as NV6, as nvidia-smi topo -m does). source (may be NULL) says
 * where the topology came from. New reference, NULL on OOM.
 */
json_t *rf_pcitopo_json(const struct rf_pcitopo *t, const char *source);

/**
 * `railfit topology -o table`: shaped like `nvidia-smi topo -m` (GPUs and NICs as rows and
 * columns, NV# cells between NVLink-connected GPUs, a NUMA affinity column, the legend, a device
 * legend with PCI addresses and names, and the notes). @return 0 (*ret a malloc'd NUL-terminated
 * string), -ENOMEM.
 */
int rf_pcitopo_table(const struct rf_pcitopo *t, char **ret);

#endif
