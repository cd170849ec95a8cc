/* kube-scheduler's extender wire format (reference/extender-protocol.md): decoding of
 * ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs with Go's case-insensitive key
 * matching and null-or-absent equivalence, and encoding of the results with exactly the keys, key
 * order and map-key sorting Go's encoding/json produces. No I/O. */
#ifndef RF_SERVER_EXTENDER_H
#define RF_SERVER_EXTENDER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/** ExtenderArgs (filter and prioritize). */
struct rf_extender_args {
	json_t *root;    /* owned; everything below is borrowed from it */
	json_t *pod;     /* the Pod object (never NULL after a successful parse) */
	bool cache_mode; /* NodeNames was given (nodeCacheCapable: true) */
	size_t n_nodes;
	const char **node_names; /* owned array of borrowed strings, n_nodes entries */
	json_t **node_objs; /* owned array of borrowed Node objects (NULL entries in cache mode) */
};

/**
 * Parse an ExtenderArgs body. Keys match case-insensitively ("pod", "NODENAMES" ...); exactly one
 * of Nodes / NodeNames must be non-null; Nodes must be {"items":[...]} of objects with
 * metadata.name strings; NodeNames an array of strings.
 * @return 0, -EINVAL (err names the field and what was expected) or -ENOMEM.
 */
int rf_extender_args_parse(const char *body, size_t len, struct rf_extender_args *ret, char *err,
			   size_t errlen);
void rf_extender_args_release(struct rf_extender_args *a);

/** Per-node outcome of a filter, in the order of the request. */
enum rf_filter_outcome { RF_FILTER_PASS, RF_FILTER_FAIL, RF_FILTER_UNRESOLVABLE };

/**
 * ExtenderFilterResult. In cache mode NodeNames lists the passing nodes and Nodes is null;
 * otherwise Nodes echoes the passing Node objects unchanged ({"metadata":{},"items":[...]}) and
 * NodeNames is null. FailedNodes / FailedAndUnresolvableNodes map node to message with keys sorted
 * bytewise. msgs[i] is used for non-passing nodes. A non-NULL error yields the error shape (all
 * null but Error). New reference, NULL on OOM.
 */
json_t *rf_extender_filter_result(const struct rf_extender_args *a,
				  const enum rf_filter_outcome *outcomes, const char *const *msgs,
				  const char *error);

/** HostPriorityList: [{"Host":..., "Score":...}] in request order. New reference. */
json_t *rf_extender_priority_list(const struct rf_extender_args *a, const int *scores);

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
 * Serialise j exactly as Go's json.Marshal would print the same value: compact, object keys in the
 * json_t's order, `<` `>` `&` U+2028 U+2029 escaped as \u003c etc., \b \f \n \r \t short escapes,
 * other control characters as \u00XX, invalid UTF-8 as \ufffd, reals in Go's shortest form.
 * NULL j prints "null". Returns a malloc'd NUL-terminated string (free()), NULL on OOM;
 * *ret_len (optional) gets its length.
 */
char *rf_json_dump_go(const json_t *j, size_t *ret_len);

#endif
