/* NVLinks from an hwloc topology into railfit's PCI tree model: hwloc's "NVLinkBandwidth"
 * distances (written by its NVML backend, kept in XML exports). Separate from hwloc_import.c,
 * which copies the PCI tree itself. */
#ifndef RF_TOPOLOGY_HWLOC_NVLINK_H
#define RF_TOPOLOGY_HWLOC_NVLINK_H

#include <hwloc.h>

#include "topology/pcitree.h"

/**
 * Read the NVLinkBandwidth distance matrix of a loaded topology (nothing happens when it has
 * none) and record each GPU-GPU, GPU-NVSwitch and NVSwitch-NVSwitch link on the tree that
 * rf_hwloc_import() built from the same topology (rf_pcitree_add_nvlink). GPUs appear in the
 * matrix as their NVML OS devices and are matched to their PCI function by address; other peers
 * (CPU-side objects of POWER machines) are skipped. Bandwidth becomes a link count the way hwloc
 * measured it: 25000 MB/s per link (NVLink 2 to 4), 20000 MB/s for NVLink 1.
 * @return 0, -ENOMEM.
 */
int rf_hwloc_import_nvlinks(hwloc_topology_t topo, struct rf_pcitree *t);

/** Links for a bandwidth of the matrix (MB/s): 0 for 0, else at least 1. */
unsigned rf_nvlink_count(unsigned long long mbps);

#endif
