/* What a pod asks railfit for (DESIGN section 6): its ResourceClaims (those still to allocate and
 * those already allocated, which pin devices and a node), railfit's annotations, the CNI bandwidth
 * annotations and its rail group. The demand is "none" for pods that are not railfit's business,
 * "unknown" when something cannot be evaluated exactly (then railfit never guesses). Pure logic. */
#ifndef RF_ALLOC_DEMAND_H
#define RF_ALLOC_DEMAND_H

#include <stdbool.h>

#include <jansson.h>

#include "alloc/model/model.h"
#include "alloc/rail_target.h"

#define RF_MAX_POD_CLAIMS    16
#define RF_MAX_EXT_RESOURCES 4 /* distinct DRA-backed extended resources per pod */

enum rf_demand_kind { RF_DEMAND_NONE = 0, RF_DEMAND_KNOWN, RF_DEMAND_UNKNOWN };

const char *rf_demand_kind_name(enum rf_demand_kind k);

struct rf_demand {
	enum rf_demand_kind kind;
	char unknown_reason[512];
	char pod_key[320];             /* "ns/name" */
	const char *pod_ns, *pod_name; /* point into pod_key storage copies */
	char ns_buf[256];
	/* claims to allocate, in pod order, and claims already allocated */
	const struct rf_claim *claims[RF_MAX_POD_CLAIMS];
	size_t n_claims;
	const struct rf_claim *pinned[RF_MAX_POD_CLAIMS];
	size_t n_pinned;
	struct rf_claim *owned[RF_MAX_POD_CLAIMS + (1 << RF_MAX_EXT_RESOURCES)]; /* instantiated */
	size_t n_owned;
	/* extended resources backed by DRA (DRAExtendedResource, on from 1.36): kube-scheduler's
	 * synthetic claim "<pod>-extended-resources" is claims[n_claims - 1]; a node that
	 * provides some of the resources through a device plugin (allocatable > 0) gets the
	 * variant without their requests (ext_variants[mask of the resources DRA serves there],
	 * NULL for 0: no claim there). n_ext == 0: the pod has none. */
	size_t n_ext;
	char ext_names[RF_MAX_EXT_RESOURCES][256];
	const struct rf_claim *ext_variants[1 << RF_MAX_EXT_RESOURCES];
	/* annotations */
	enum rf_level min_alignment;
	bool min_alignment_from_pod;
	bool has_nic_bw, has_egress, has_ingress;
	struct rf_quantity nic_bw, egress, ingress;
	char bad_annotation[256]; /* malformed bandwidth annotation: reported, not counted */
	char group[320];          /* "ns/group" or "" */
	const struct rf_group *rail_group; /* group resolved in the generation (NULL: no rails) */
	struct rf_rail_target rail_target; /* its rail sets by node, counted once */
	/* railfit.io/min-gpu-alignment (NVL ... SYS) */
	bool has_min_gpu_alignment;
	enum rf_level min_gpu_alignment;
	/* railfit.io/max-spread: block or spine, once the group has a member */
	enum rf_spread { RF_SPREAD_ANY = 0, RF_SPREAD_BLOCK, RF_SPREAD_SPINE } max_spread;
	/* where the group's pods run, resolved once per request (rf_cluster_group_places) */
	struct rf_group_places places;
	/* the DeviceClass of every request alternative of claims[] and ext_variants[], looked up
	 * by name in the generation once per request (a claim names its classes; which structs
	 * they are is the generation's): rf_demand_classes(). Set for a known demand; owned. */
	const struct rf_class **alt_classes;
	size_t n_alt_classes;
	struct rf_claim_classes {
		const struct rf_claim *claim;
		size_t at; /* its first alternative's class in alt_classes */
	} classes_of[RF_MAX_POD_CLAIMS + (1 << RF_MAX_EXT_RESOURCES)];
	size_t n_classes_of;
};

/**
 * Resolve a pod's demand against a generation. pod is the Pod as kube-scheduler sent it (or as
 * cached); claims and classes come from the generation. Never fails except on OOM (-ENOMEM); a
 * demand that cannot be evaluated comes back as RF_DEMAND_UNKNOWN with a reason.
 */
int rf_demand_resolve(const struct rf_cluster *c, const json_t *pod, struct rf_demand *ret);

/** The claim the pod asks for instead of claims[i] on node n (the extended-resource claim's
 * variant there), or NULL when it asks nothing of it there. */
const struct rf_claim *rf_demand_node_claim(const struct rf_demand *d, size_t i,
					    const struct rf_node *n);

/**
 * The DeviceClasses of claim cl's request alternatives (requests in order, each one's
 * alternatives in order; NULL where the class does not exist), as resolved in the demand's
 * generation: for claims[] and the extended-resource claim's variants of a known demand, else
 * NULL. Borrowed from the demand.
 */
const struct rf_class *const *rf_demand_classes(const struct rf_demand *d,
						const struct rf_claim *cl);

/** The index in claims[] of claim cl (a variant counts as the extended-resource claim), or -1. */
int rf_demand_claim_index(const struct rf_demand *d, const struct rf_claim *cl);

/** Free what a demand owns (template-instantiated claims). */
void rf_demand_release(struct rf_demand *d);

#endif
