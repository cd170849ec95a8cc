/* POST /bind (reference/extender-protocol.md section 3.4): create the pod's Binding exactly as
 * kube-scheduler's DefaultBinder does, answer ExtenderBindingResult, and record the placement in
 * the cache at once (the store's assumed placements, kept until the watch confirms them or
 * kube.assumeTTL passes). Counter railfit_bind_total{result}.
 *
 * Threads: the handler runs on MHD pool threads; each call borrows a CURL connection from a small
 * pool under a mutex (never held across I/O) and has a hard total timeout, since kube-scheduler
 * waits for the answer (its httpTimeout defaults to 5 s). */
#ifndef RF_SERVER_BIND_H
#define RF_SERVER_BIND_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "server/http/http.h"
#include "server/kube/cache.h"
#include "server/kube/kube.h"
#include "server/kube/store.h"

struct rf_binder_options {
	struct rf_kube *kube;   /* outlives the binder */
	struct rf_store *store; /* outlives the binder */
	int64_t assume_ttl_ms;  /* kube.assumeTTL */
	long timeout_ms;        /* whole bind budget; 0 = 4 s */
	/* bind.schedulerNames: a pod whose spec.schedulerName is not one of them is refused
	 * (looked up in cache, else listed from the API server by name); borrowed, outlives the
	 * binder */
	const struct rf_strv *scheduler_names;
	struct rf_cache *cache; /* may be NULL: always ask the API server */
};

struct rf_binder;

/** @return 0 or -ENOMEM. */
int rf_binder_new(const struct rf_binder_options *o, struct rf_binder **ret);
/** Free (with its pooled connections). Accepts NULL. */
void rf_binder_free(struct rf_binder *b);

/** The route handler; userdata is the struct rf_binder. A pod of another scheduler profile (or
 * one that does not exist) is refused with the verb's Error, before any Binding is created. */
int rf_verb_bind(void *binder, const struct rf_http_request *req, struct rf_http_response *resp);

/**
 * Does a 409 message say the pod is already bound to `node` (`pod p1 is already assigned to node
 * "node-a"`)? That is the answer to a retried POST whose first response was lost: success.
 */
bool rf_bind_conflict_same_node(const char *message, const char *node);

/** A malloc'd copy with every '%' replaced by "pct" (kube-scheduler formats Error with it) and
 * every non-printable or non-ASCII byte by '?'. NULL on OOM. */
char *rf_bind_error_text(const char *s);

#endif
