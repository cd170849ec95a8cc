/* Live mode of `railfit serve` (DESIGN sections 2 and 3): the API client, the object store and its
 * publisher, one reflector per kind and the /bind handler, started and stopped together.
 *
 * Start it after SIGTERM/SIGINT are blocked (its threads inherit the mask) and stop it after the
 * HTTP servers are stopped (the last generation references the store's configuration). */
#ifndef RF_SERVER_LIVE_H
#define RF_SERVER_LIVE_H

#include <stddef.h>

#include "alloc/cel/cel.h"
#include "config/config.h"
#include "server/kube/cache.h"

struct rf_live_options {
	const struct rf_config *cfg; /* kube.* keys; copied where needed */
	const char *kubeconfig;      /* --kubeconfig, else kube.kubeconfig; NULL/"" = discover */
	struct rf_cache *cache;      /* outlives the live mode */
	struct rf_cel_cache *cel;    /* outlives the live mode */
	const char *version;         /* for the user agent "railfit/<version>" */
};

struct rf_live;

/**
 * Resolve the configuration, read the server version (kube.draVersion: auto), start the store and
 * the reflectors. An unreachable server is not an error: the reflectors keep trying and /readyz
 * says what is missing.
 * @return 0; -EINVAL/-ENOENT for configuration errors (err says what to fix: exit code 2);
 * -ENOMEM or another -errno.
 */
int rf_live_start(const struct rf_live_options *o, struct rf_live **ret, char *err, size_t errlen);

/** The userdata of the POST /bind route (rf_verb_bind, server/bind.h). Borrowed. */
void *rf_live_binder(struct rf_live *l);

/** Stop and join every thread, free everything. Accepts NULL. */
void rf_live_stop(struct rf_live *l);

#endif
