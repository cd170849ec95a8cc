/* Live mode (see live.h): wires the client, the store, the reflectors and the binder. Runs on the
 * main thread at start and stop; owns no lock. */
#include "server/live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/log.h"
#include "server/kube/bind.h"
#include "server/kube/kube.h"
#include "server/kube/reflector.h"
#include "server/kube/store.h"
#include "server/predictions.h"

struct rf_live {
	struct rf_kube *kube;
	struct rf_store *store;
	struct rf_reflectors *reflectors;
	struct rf_binder *binder;
};

/* The store tells the prediction bookkeeping about allocations through this hook, so that the
 * Kubernetes client knows nothing of the verbs. */
static void
observe_allocation(const json_t *claim, void *userdata)
{
	rf_predictions_observe(claim, userdata);
}

int
rf_live_start(const struct rf_live_options *o, struct rf_live **ret, char *err, size_t errlen)
{
	struct rf_live *l = calloc(1, sizeof(*l));
	char ua[64];
	int r = -ENOMEM;
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(ua, sizeof(ua), "railfit/%s", o->version ? o->version : "unknown");
	struct rf_kube_options ko = rf_kube_options_from_config(o->cfg, o->kubeconfig, ua);
	if ((r = rf_kube_new(&ko, &l->kube, err, errlen)) < 0)
		goto fail;
	rf_info("using kube-apiserver", "server", rf_kube_server(l->kube), "from",
		rf_kube_source(l->kube));

	struct rf_store_options so = { .cache = o->cache,
				       .cfg = o->cfg,
				       .cel = o->cel,
				       .on_claim_allocated = observe_allocation,
				       .userdata = o->cache };
	if ((r = rf_store_new(&so, &l->store)) < 0) {
		snprintf(err, errlen, "cannot start the cache publisher: %s", strerror(-r));
		goto fail;
	}

	bool detect = o->cfg->kube.dra_version == RF_DRA_AUTO;
	if (detect) {
		struct rf_kube_conn *c = rf_kube_conn_new(l->kube);
		char gv[64], verr[800];
		if (c && rf_kube_server_version(c, gv, sizeof(gv), verr, sizeof(verr)) == 0) {
			rf_reflectors_use_server_version(l->store, gv);
			detect = false;
		} else {
			rf_warn("cannot read the API server version; using the newest DRA rules railfit "
				"knows until it answers",
				"err", c ? verr : "out of memory");
		}
		rf_kube_conn_free(c);
	}

	struct rf_reflectors_options ro = {
		.kube = l->kube,
		.store = l->store,
		.cache = o->cache,
		.watch_timeout_ms = o->cfg->kube.watch_timeout_ms,
		.detect_dra_version = detect,
	};
	if ((r = rf_reflectors_start(&ro, &l->reflectors)) < 0) {
		snprintf(err, errlen, "cannot start the watches: %s", strerror(-r));
		goto fail;
	}
	struct rf_binder_options bo = { .kube = l->kube,
					.store = l->store,
					.assume_ttl_ms = o->cfg->kube.assume_ttl_ms,
					.scheduler_names = &o->cfg->bind.scheduler_names,
					.cache = o->cache };
	if ((r = rf_binder_new(&bo, &l->binder)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	*ret = l;
	return 0;
fail:
	rf_live_stop(l);
	return r;
}

void *
rf_live_binder(struct rf_live *l)
{
	return l->binder;
}

void
rf_live_stop(struct rf_live *l)
{
	if (!l)
		return;
	double t0 = rf_kube_now();
	if (l->kube)
		rf_kube_stop(l->kube);
	rf_reflectors_stop(l->reflectors);
	char ms[32];
	snprintf(ms, sizeof(ms), "%.0f", (rf_kube_now() - t0) * 1000.0);
	rf_v(1, "watches stopped", "ms", ms);
	rf_binder_free(l->binder);
	rf_store_free(l->store);
	rf_kube_free(l->kube);
	free(l);
}
