/* From an hwloc topology to railfit's PCI tree model (topology/pcitree.h). The only file of the
 * topology library that includes hwloc.h. The caller owns the hwloc_topology_t (init, load,
 * destroy); nothing here loads, discovers or prints. */
#ifndef RF_TOPOLOGY_HWLOC_IMPORT_H
#define RF_TOPOLOGY_HWLOC_IMPORT_H

#include <hwloc.h>

#include "topology/pcitree.h"

/**
 * Set the I/O type filters railfit needs; call between hwloc_topology_init() and
 * hwloc_topology_load() (hwloc 2.x drops I/O objects by default). Bridges and OS devices: the
 * important ones (bridges leading to kept devices, netdevs, RDMA and GPU devices); PCI functions:
 * all of them, so that every class-12xx accelerator and every SR-IOV function is seen.
 * @return 0 or -errno.
 */
int rf_hwloc_set_filters(hwloc_topology_t topo);

/**
 * Build the PCI tree of a loaded topology: host bridges, PCI bridges and functions with their
 * parents, the NUMA node of each object's first non-I/O ancestor (hwloc_get_non_io_ancestor_obj;
 * -1 when that nodeset is not exactly one NUMA node, or when the topology has a single NUMA node
 * for several packages, which is then noted), and OS device names on their PCI function.
 * @return 0 with *ret owned by the caller (rf_pcitree_free), -ENOMEM, -E2BIG (too many objects).
 */
int rf_hwloc_import(hwloc_topology_t topo, struct rf_pcitree **ret);

#endif
