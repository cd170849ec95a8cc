/* Locality between two devices of one node, from what DRA drivers publish (DESIGN section 5,
 * source 2): same resource.kubernetes.io/pcieRoot is PHB, else the same NUMA node is NODE, else
 * SYS; UNKNOWN when the attributes do not say. Also PCI address normalisation, so devices can be
 * matched with hwloc data by address. Pure logic, no I/O. */
#ifndef RF_TOPOLOGY_LOCALITY_H
#define RF_TOPOLOGY_LOCALITY_H

#include <stdbool.h>

#include "config/level.h"

/** Where a level came from; every number railfit shows names its source. */
enum rf_level_source {
	RF_SRC_NONE = 0,   /* not enough data */
	RF_SRC_DRA,        /* DRA attributes (pcieRoot / NUMA) */
	RF_SRC_ANNOTATION, /* the node's railfit.io/pci-topology annotation (hwloc) */
};

const char *rf_level_source_name(enum rf_level_source s);

/** What the DRA attributes say about one device's place on the PCI tree. */
struct rf_locality {
	const char *pcie_root; /* "pci0000:15" or NULL */
	int numa;              /* NUMA node, or -1 when unknown */
};

/** Level between two distinct devices from DRA attributes alone; *ret_src gets RF_SRC_DRA or NONE.
 */
enum rf_level rf_locality_level(const struct rf_locality *a, const struct rf_locality *b,
				enum rf_level_source *ret_src);

#define RF_PCI_ADDR_LEN 13 /* "0000:1b:00.0" + NUL */

/**
 * Normalise a PCI address to "dddd:bb:dd.f" lower case. Accepts "0000:1b:00.0", "1b:00.0"
 * (domain 0), upper case, and dranet device names "pci-0000-1b-00-0".
 * @return 0 or -EINVAL.
 */
int rf_pci_normalize(const char *in, char out[RF_PCI_ADDR_LEN]);

/** strcmp-like order of two normalised addresses (domain, bus, device, function). */
int rf_pci_cmp(const char *a, const char *b);

#endif
