/* The Node annotation railfit.io/pci-topology (DESIGN section 5, source 1): the GPU/NIC locality
 * matrix that `railfit topology --publish` computes with hwloc on the node, read back by the
 * extender to see below the root complex.
 *
 * Format, version 1 (compact JSON, keys in this order, at most RF_TOPO_ANNOTATION_MAX_BYTES):
 *
 *   {"v":1,
 *    "d":["0000:1b:00.0",...],   devices: PCI addresses with their domain (GPUs, then NICs)
 *    "k":"gg...nn",              kind per device: g = GPU/accelerator, n = NIC
 *    "n":[0,0,...,1,-1],         NUMA node per device, -1 = unknown
 *    "c":[0,1,2,2,...],          position class per device: devices whose levels to every other
 *                                device are the same (functions of one card, SR-IOV VFs behind
 *                                the same port) share a class, which keeps VF-heavy nodes small
 *    "m":"PHNS..."}              levels between classes: the upper triangle of the C x C class
 *                                matrix, diagonal included, row by row (C(C+1)/2 characters):
 *                                P=PIX B=PXB H=PHB N=NODE S=SYS U=UNKNOWN; a diagonal entry is the
 *                                level between two distinct members of the class, "-" for a class
 *                                of one device
 *
 * Version 2 (written only when GPUs share NVLinks; without, the value stays version 1 so that
 * older readers keep reading it) adds
 *
 *    "l":[[0,1,6],...]            NVLinks between classes of GPUs: [class a, class b, links] with
 *                                a <= b (a == b: between two distinct members of the class);
 *                                pairs not listed share none. Classes are then also grouped by
 *                                their link counts. "m" keeps the PCIe levels.
 *
 * 16 GPUs + 16 NICs in 32 distinct positions (the worst case) encode to 1229 bytes, asserted in
 * test/unit/topology/test_topology.c; with every GPU pair NVLinked, version 2 stays below 4 KiB
 * (asserted there too). Keys other than these are ignored, so fields can be added without a new
 * version; a change of meaning bumps "v". Both versions are read.
 *
 * Decoding is defensive: anything malformed yields an error code and a one-line reason, never a
 * crash. Pure logic, no I/O; a decoded annotation is immutable and may be read from any thread. */
#ifndef RF_TOPOLOGY_ANNOTATION_H
#define RF_TOPOLOGY_ANNOTATION_H

#include <stdbool.h>
#include <stddef.h>

#include "config/level.h"
#include "topology/pcitree.h"

#define RF_TOPO_ANNOTATION_VERSION   2 /* the newest written and read; 1 is read too */
#define RF_TOPO_ANNOTATION_MAX_BYTES 16384
#define RF_TOPO_ANNOTATION_KEY       "railfit.io/pci-topology" /* devices.topologyAnnotation */

struct rf_topo_annotation;

/**
 * Encode a computed topology as the annotation value.
 * @return 0 with *ret a malloc'd NUL-terminated string (caller frees); -EMSGSIZE when it would
 *	   exceed RF_TOPO_ANNOTATION_MAX_BYTES (too many devices); -EINVAL for an inconsistent
 *	   struct (bad kind or level); -ENOMEM.
 */
int rf_topo_annotation_encode(const struct rf_pcitopo *t, char **ret);

/**
 * Decode an annotation value (len bytes, no NUL needed).
 * @return 0 with *ret owned by the caller (rf_topo_annotation_free), or -EMSGSIZE (longer than
 *	   RF_TOPO_ANNOTATION_MAX_BYTES), -EPROTONOSUPPORT (unknown version), -EINVAL (anything
 *	   else malformed), -ENOMEM; then err (errlen > 0, may be NULL) holds a one-line reason
 *	   and *ret is untouched.
 */
int rf_topo_annotation_decode(const char *value, size_t len, struct rf_topo_annotation **ret,
			      char *err, size_t errlen);

/** Accepts NULL. */
void rf_topo_annotation_free(struct rf_topo_annotation *a);

/**
 * Level between two devices named by PCI address (any form rf_pci_normalize takes; the same
 * address twice is PIX).
 * @return 0 and *ret, -ENOENT when either address is not in the annotation, -EINVAL for an
 *	   address that does not parse.
 */
int rf_topo_annotation_level(const struct rf_topo_annotation *a, const char *pci_a,
			     const char *pci_b, enum rf_level *ret);

/**
 * NVLinks between two devices (0: none, the same device, or a version 1 annotation).
 * @return 0 and *ret, -ENOENT or -EINVAL as rf_topo_annotation_level().
 */
int rf_topo_annotation_nvlinks(const struct rf_topo_annotation *a, const char *pci_a,
			       const char *pci_b, unsigned *ret);

/** True when the annotation carries NVLink counts (version 2). */
bool rf_topo_annotation_has_nvlinks(const struct rf_topo_annotation *a);

size_t rf_topo_annotation_n_devices(const struct rf_topo_annotation *a);

/** Index of a device (any address form), -ENOENT or -EINVAL. */
int rf_topo_annotation_find(const struct rf_topo_annotation *a, const char *pci);

/** Device i's normalised address (borrowed), kind and NUMA node (-1 unknown); i must be valid. */
const char *rf_topo_annotation_pci(const struct rf_topo_annotation *a, size_t i);
enum rf_pci_kind rf_topo_annotation_kind(const struct rf_topo_annotation *a, size_t i);
int rf_topo_annotation_numa(const struct rf_topo_annotation *a, size_t i);

/**
 * The JSON merge-patch body that sets the annotation on a Node:
 * {"metadata":{"annotations":{"<key>":"<value>"}}}.
 * @return 0 with *ret a malloc'd string (caller frees), -EINVAL for an empty key, -ENOMEM.
 */
int rf_topo_annotation_patch(const char *key, const char *value, char **ret);

#endif
