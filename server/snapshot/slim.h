/* Slim objects: every Kubernetes object railfit keeps (snapshot files, the live store, hence the
 * cache, explain and /debug/snapshot) first goes through rf_slim_object(), which copies only the
 * fields railfit reads (DESIGN section 4: never pod env, volumes or secrets) and shares repeated
 * values through an interner.
 *
 * Kept, per kind (everything else is dropped, `kind` too, and `apiVersion` when it is the kind's
 * usual one: /debug/snapshot adds them back; metadata.resourceVersion shows how fresh an object
 * is, unless opts->drop_resource_version):
 *   Pod            metadata.{name,namespace,uid}, the labels of groups.labels (all when not
 *                  known), the pod annotations railfit reads
 *                  (railfit.io/..., kubernetes.io/egress-bandwidth,
 *                  kubernetes.io/ingress-bandwidth), spec.{nodeName,schedulerName (for
 *                  POST /bind), resourceClaims[].{name,resourceClaimName,
 *                  resourceClaimTemplateName}}, status.{phase,resourceClaimStatuses[].{name,
 *                  resourceClaimName}}. Containers, volumes, env, commands: never (with
 *                  keep_requests: containers[].resources.requests and creationTimestamp).
 *   Node           metadata.{name,labels}, the node annotations railfit reads (railfit.io/...
 *                  and the configured topology annotation), status.conditions[type=Ready].{type,
 *                  status}.
 *   ResourceSlice  metadata.name, spec.{driver,pool,nodeName,allNodes,nodeSelector,
 *                  perDeviceNodeSelection,sharedCounters,devices}.
 *   ResourceClaim  metadata.{name,namespace,uid}, spec.devices.{requests,constraints},
 *                  status.allocation.{devices.results,nodeSelector}, status.reservedFor[].uid.
 *   DeviceClass    metadata.name, spec.selectors.
 *   ResourceClaimTemplate  metadata.{name,namespace}, spec.spec.devices.{requests,constraints}.
 *
 * Interning: values are copied bottom-up; strings, numbers and small objects/arrays (at most
 * RF_INTERN_MAX_MEMBERS members, all of them interned) equal to one seen before are replaced by
 * the earlier copy, so `{"string": "up"}` or a claim spec made from one template exist once. The
 * shared values are immutable like every cached object (jansson's reference counts are atomic).
 *
 * Threads: an interner is not thread-safe; use one per thread or guard it. rf_slim_object() is
 * otherwise pure. */
#ifndef RF_SERVER_SLIM_H
#define RF_SERVER_SLIM_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config/config.h"

#define RF_INTERN_MAX_MEMBERS 8

enum rf_slim_kind {
	RF_SLIM_NODE = 0,
	RF_SLIM_POD,
	RF_SLIM_SLICE,
	RF_SLIM_CLAIM,
	RF_SLIM_CLASS,
	RF_SLIM_TEMPLATE,
	RF_SLIM_TAINT_RULE,
	RF_SLIM_COUNT
};

/** The slim kind of a Kubernetes kind name ("Pod", ...); -1 when railfit does not keep it. */
int rf_slim_kind_of(const char *kind);

struct rf_slim_options {
	/* devices.topologyAnnotation: a Node annotation kept besides railfit.io/...; NULL or "" for
	 * none. */
	const char *topology_annotation;
	/* keep every Node annotation (when the configuration is not known) */
	bool all_node_annotations;
	/* groups.labels: the Pod labels kept; NULL keeps every label */
	const struct rf_strv *pod_labels;
	/* drop metadata.resourceVersion (a static snapshot: nothing to compare it with) */
	bool drop_resource_version;
	/* also keep what kube-scheduler's own resource scoring reads (railfit simulate): Pod
	 * metadata.creationTimestamp and spec.containers[].resources.requests, Node
	 * status.allocatable */
	bool keep_requests;
};

struct rf_intern;

struct rf_intern *rf_intern_new(void);
/** Drops the interner's references (the values live on in the objects that use them). */
void rf_intern_free(struct rf_intern *in);
/** Forget values nobody but the interner references any more. */
void rf_intern_prune(struct rf_intern *in);
/** Number of distinct values held. */
size_t rf_intern_size(const struct rf_intern *in);

/**
 * The slim copy of obj (see above). obj is borrowed and not modified; in may be NULL (no
 * sharing); opts may be NULL (defaults). @return a new reference, or NULL on OOM.
 */
json_t *rf_slim_object(enum rf_slim_kind kind, const json_t *obj,
		       const struct rf_slim_options *opts, struct rf_intern *in);

/**
 * rf_slim_object() of the object written in text[0..len), without a tree of the whole object:
 * the fields railfit drops are only scanned. *ret gets a new reference, the same value
 * rf_slim_object() makes of json_loadb(text, JSON_REJECT_DUPLICATES). @return 0; -EINVAL when the
 * text is not an object or not one the validating scanner (server/http/jscan.h) takes (then
 * json_loadb() says whether and where it is wrong, and rf_slim_object() slims its tree); -ENOMEM.
 */
int rf_slim_text(enum rf_slim_kind kind, const char *text, size_t len,
		 const struct rf_slim_options *opts, struct rf_intern *in, json_t **ret);

/** A deep copy of v with its values interned (new reference, NULL on OOM). */
json_t *rf_intern_copy(struct rf_intern *in, const json_t *v);

#endif
