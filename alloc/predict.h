/* A mirror of the DRA structured allocator's search (reference/dra-allocator.md): all of a pod's
 * unallocated claims in one depth-first search; claims, requests, device slots in order; for each
 * slot the first device in pool/slice/device scan order that passes the checks in the allocator's
 * order (in use, class selectors, request selectors, consumable capacity, taints, constraints);
 * full backtracking; the first complete solution wins. Pool and multi-slice order is random in
 * kube-scheduler, so rf_predict() runs every scan order that can change the outcome (bounded) and
 * reports each distinct outcome. A best-achievable search explores all solutions instead.
 * Pure logic, no I/O; safe to run on several threads over one generation. */
#ifndef RF_ALLOC_PREDICT_H
#define RF_ALLOC_PREDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/model/model.h"

#define RF_MAX_PICKS    128 /* devices one pod may get in one search */
#define RF_MAX_ORDERS   120 /* scan orders tried per node (5!) */
#define RF_MAX_OUTCOMES 8   /* distinct outcomes kept */

struct rf_pick {
	const struct rf_claim *claim;
	const char *request; /* "req" or "req/sub" */
	const struct rf_device *dev;
	const struct rf_request_alt *alt; /* NULL for pinned picks */
	bool pinned;                      /* from an allocation that already exists */
	bool has_bw;                      /* consumable bandwidth requested from a shared NIC */
	struct rf_quantity bw;
};

struct rf_assignment {
	size_t n;
	struct rf_pick picks[RF_MAX_PICKS];
};

/** Copy an assignment's used picks only (the struct holds RF_MAX_PICKS of them). */
static inline void
rf_assignment_copy(struct rf_assignment *dst, const struct rf_assignment *src)
{
	dst->n = src->n;
	for (size_t i = 0; i < src->n; i++)
		dst->picks[i] = src->picks[i];
}

enum rf_search_status {
	RF_SEARCH_FOUND = 0,
	RF_SEARCH_INFEASIBLE, /* no solution on this node */
	RF_SEARCH_CEL_ERROR,  /* a selector raised a runtime error: the whole pod attempt fails */
	RF_SEARCH_POOL_ERROR, /* 1.34: the scan reached an invalid pool, or All hit a bad pool */
	RF_SEARCH_BUDGET,     /* the bounded search gave up */
	RF_SEARCH_TOO_MANY,   /* more devices than RF_MAX_PICKS */
	/* kube-scheduler itself crashes on this pod (1.36.0-1.36.1: allocationMode All with a
	 * counter-consuming device): no placement */
	RF_SEARCH_SCHEDULER_CRASH,
};

const char *rf_search_status_name(enum rf_search_status s);

struct rf_search_result {
	enum rf_search_status status;
	char error[384];        /* CEL error / pool error text: claim, device and message */
	size_t n_outcomes;      /* distinct outcomes over the scan orders tried (FOUND only) */
	unsigned n_orders;      /* scan orders tried */
	bool orders_exhaustive; /* every order that could matter was tried */
	unsigned long steps;    /* devices examined, summed over orders */
	struct rf_assignment outcomes[RF_MAX_OUTCOMES]; /* last: only n_outcomes are set */
};

/** Score an assignment for the best-achievable search; higher is better. */
typedef double rf_assignment_score_fn(const struct rf_assignment *a, void *userdata);

/** What evicting pods would free (preemption): their claims no other pod reserves. */
struct rf_release {
	const struct rf_pod **pods;
	size_t n_pods;
	const struct rf_claim **claims;
	size_t n_claims;
};

bool rf_release_has_claim(const struct rf_release *r, const struct rf_claim *cl);

struct rf_search_request {
	const struct rf_cluster *cluster;
	const struct rf_node *node;
	const struct rf_claim *const *claims; /* unallocated claims of the pod, pod order */
	size_t n_claims;
	/* per claim, the DeviceClasses of its request alternatives in cluster
	 * (rf_demand_classes(): looked up once per request, not per node); NULL, or a NULL
	 * entry: looked up here by the names the claim gives */
	const struct rf_class *const *const *classes;
	const struct rf_assignment *pinned; /* devices of the pod's allocated claims, or NULL */
	bool ignore_usage; /* pretend nothing is allocated (could eviction ever help?) */
	const struct rf_release *release; /* devices of these claims count as free, or NULL */
};

/**
 * Predict what the allocator picks on one node.
 * @return 0 (result filled, including INFEASIBLE and error statuses) or -ENOMEM.
 */
int rf_predict(const struct rf_search_request *req, struct rf_search_result *ret);

/* Why the search passes over a device for a request. The search checks pool and use before the
 * selectors; the record classifies in this order instead, the order the failure message reports
 * (a device matching no selector is not counted, a held one is not "skipped"). */
enum rf_reject {
	RF_REJECT_NONE = 0, /* a candidate */
	RF_REJECT_SELECTOR, /* the class or a request selector says no (or raises an error) */
	RF_REJECT_IN_USE,   /* allocated to another claim */
	RF_REJECT_POOL,     /* in a pool this allocator version does not search */
	RF_REJECT_TAINT,    /* an untolerated taint */
	RF_REJECT_CAPACITY, /* its consumable capacity cannot serve the request */
	RF_REJECT_COUNTERS, /* its shared counters are used up */
	RF_REJECT_COUNT
};

#define RF_REJECT_NAMED 4 /* devices named per request */

/** Why one request (its first alternative) found too few devices on the node. */
struct rf_request_rejects {
	const struct rf_claim *claim;
	const struct rf_request_alt *alt;
	size_t by[RF_REJECT_COUNT]; /* devices by the first check that rejects them */
	/* the first devices (node order) not rejected for selector, use, pool or taint */
	const struct rf_device *named[RF_REJECT_NAMED];
	size_t n_named;
	/* the first device rejected for a taint, and that taint (NULL when none) */
	const struct rf_device *tainted;
	const struct rf_taint *taint;
};

/** Number of requests of the search's claims: the size rf_predict_rejects() fills. */
size_t rf_search_n_requests(const struct rf_search_request *req);

/**
 * Why the search finds no solution: for every request of req's claims (claim order), each of
 * the node's devices classified by the search's own checks with nothing picked yet. The search
 * keeps no record itself, so this costs nothing unless a failure message asks for it.
 * ret holds rf_search_n_requests(req) entries. @return 0 or -ENOMEM.
 */
int rf_predict_rejects(const struct rf_search_request *req, struct rf_request_rejects *ret);

/**
 * Best achievable assignment by score (bounded exhaustive search over device combinations).
 * @return 0 and *ret_found, or -ENOMEM.
 */
int rf_predict_best(const struct rf_search_request *req, rf_assignment_score_fn *score,
		    void *userdata, struct rf_assignment *ret, bool *ret_found,
		    bool *ret_exhaustive);

#endif
