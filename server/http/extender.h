/* kube-scheduler's extender wire format (reference/extender-protocol.md): decoding of
 * ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs with Go's case-insensitive key
 * matching and null-or-absent equivalence, and encoding of the results with exactly the keys, key
 * order and map-key sorting Go's encoding/json produces. No I/O. */
#ifndef RF_SERVER_EXTENDER_H
#define RF_SERVER_EXTENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/strbuf.h"
#include "server/http/gojson.h" /* rf_json_dump_go() */

/** ExtenderArgs (filter and prioritize). */
struct rf_extender_args {
	json_t *root;    /* owned: the Pod's tree (or the whole body's, see below) */
	json_t *pod;     /* the Pod object (never NULL after a successful parse), borrowed */
	bool cache_mode; /* NodeNames was given (nodeCacheCapable: true) */
	size_t n_nodes;
	const char **node_names; /* owned array of n_nodes borrowed strings (in text or root) */
	size_t names_len;        /* their bytes, without NULs (sizing a reply ahead) */
	/* Owned array: with nodeCacheCapable false, each Node item exactly as json.Marshal writes
	 * it (which is what a reply echoes), node_obj_lens[i] bytes, not NUL-terminated: in the
	 * request body (kube-scheduler's requests: no copy of megabytes of Node objects) or in
	 * text; NULL entries in cache mode. */
	const char **node_objs;
	size_t *node_obj_lens; /* owned array: the lengths of node_objs (NULL in cache mode) */
	char *text; /* owned storage behind node_names (and node_objs, reference decoder) */
};

/**
 * Parse an ExtenderArgs body. Keys match case-insensitively ("pod", "NODENAMES" ...); exactly one
 * of Nodes / NodeNames must be non-null; Nodes must be {"items":[...]} of objects with
 * metadata.name strings; NodeNames an array of strings. The result may point into body: keep
 * body until rf_extender_args_release().
 *
 * Requests as kube-scheduler sends them are decoded without a tree of the whole body
 * (server/jscan.h: only the Pod goes through jansson); anything else — malformed or unusual
 * input — goes through rf_extender_args_parse_tree(), so both give the same results and errors.
 * @return 0, -EINVAL (err names the field and what was expected) or -ENOMEM.
 */
int rf_extender_args_parse(const char *body, size_t len, struct rf_extender_args *ret, char *err,
			   size_t errlen);

/** The reference decoder: the same contract as rf_extender_args_parse(), on a jansson tree of the
 * whole body (root). */
int rf_extender_args_parse_tree(const char *body, size_t len, struct rf_extender_args *ret,
				char *err, size_t errlen);
void rf_extender_args_release(struct rf_extender_args *a);

/** Per-node outcome of a filter, in the order of the request. */
enum rf_filter_outcome { RF_FILTER_PASS, RF_FILTER_FAIL, RF_FILTER_UNRESOLVABLE };

/**
 * ExtenderFilterResult. In cache mode NodeNames lists the passing nodes and Nodes is null;
 * otherwise Nodes echoes the passing Node objects unchanged ({"metadata":{},"items":[...]}) and
 * NodeNames is null. FailedNodes / FailedAndUnresolvableNodes map node to message with keys sorted
 * bytewise. msgs[i] is used for non-passing nodes. A non-NULL error yields the error shape (all
 * null but Error). New reference, NULL on OOM (or a message that is not valid UTF-8).
 */
json_t *rf_extender_filter_result(const struct rf_extender_args *a,
				  const enum rf_filter_outcome *outcomes, const char *const *msgs,
				  const char *error);

/**
 * The same ExtenderFilterResult written as JSON text straight into out, byte for byte what
 * rf_json_dump_go(rf_extender_filter_result(...)) prints, without building a tree. Messages are
 * only read. @return 0, or -ENOMEM where rf_extender_filter_result() returns NULL.
 */
int rf_extender_write_filter_result(const struct rf_extender_args *a,
				    const enum rf_filter_outcome *outcomes, const char *const *msgs,
				    const char *error, struct rf_strbuf *out);

/**
 * The same, with each name's place in name order (ranks[i] for node_names[i]; UINT32_MAX: not
 * known) when the caller knows it: the failure maps are then sorted without comparing names
 * (unless one of their names has no rank). Ranks must follow the names' bytewise order, and
 * two names may share a rank only when they are equal. ranks may be NULL.
 */
int rf_extender_write_filter_result_ranked(const struct rf_extender_args *a,
					   const enum rf_filter_outcome *outcomes,
					   const char *const *msgs, const uint32_t *ranks,
					   const char *error, struct rf_strbuf *out);

/** HostPriorityList: [{"Host":..., "Score":...}] in request order. New reference. */
json_t *rf_extender_priority_list(const struct rf_extender_args *a, const int *scores);

/** The same HostPriorityList as JSON text into out. @return 0 or -ENOMEM. */
int rf_extender_write_priority_list(const struct rf_extender_args *a, const int *scores,
				    struct rf_strbuf *out);

/** ExtenderPreemptionArgs, both modes. */
struct rf_extender_victims {
	const char *node; /* borrowed */
	size_t n_pods;
	const char **uids; /* owned array of borrowed strings */
	json_t **pods; /* owned array of borrowed full Pod objects (NULL entries in Meta mode) */
	long long num_pdb_violations;
};

struct rf_extender_preempt_args {
	json_t *root; /* owned */
	json_t *pod;
	bool meta_mode; /* NodeNameToMetaVictims was given */
	size_t n_nodes;
	struct rf_extender_victims *nodes; /* owned array, sorted by node name */
};

int rf_extender_preempt_args_parse(const char *body, size_t len,
				   struct rf_extender_preempt_args *ret, char *err, size_t errlen);
void rf_extender_preempt_args_release(struct rf_extender_preempt_args *a);

/** ExtenderPreemptionResult keeping the nodes with keep[i] true, victims exactly as received. */
json_t *rf_extender_preempt_result(const struct rf_extender_preempt_args *a, const bool *keep);

/** ExtenderBindingArgs. Strings borrowed from root. */
struct rf_extender_bind_args {
	json_t *root;
	const char *pod_name, *pod_namespace, *pod_uid, *node;
};

int rf_extender_bind_args_parse(const char *body, size_t len, struct rf_extender_bind_args *ret,
				char *err, size_t errlen);
void rf_extender_bind_args_release(struct rf_extender_bind_args *a);

/** {"Error": error or ""}. */
json_t *rf_extender_bind_result(const char *error);

/** Case-insensitive object lookup, as Go's encoding/json matches struct fields. Borrowed. */
json_t *rf_json_get_ci(const json_t *obj, const char *key);

/**
 * Check the fields of a Pod that railfit reads against the types Go decodes them into (a
 * metadata.name that is a number, annotations that are a list: kube-scheduler's decoder refuses
 * them): metadata, spec, status objects; metadata name, namespace, uid, generateName,
 * resourceVersion strings; labels and annotations objects of strings; spec.nodeName,
 * schedulerName strings, spec.resourceClaims an array of objects with string names;
 * status.phase a string, status.resourceClaimStatuses an array. null is accepted anywhere.
 * @return 0, or -EINVAL with "<prefix>.metadata.name: expected a string, got integer" in err.
 */
int rf_extender_pod_check(const json_t *pod, const char *prefix, char *err, size_t errlen);

#endif
