/* `railfit serve`: load the configuration and the cluster (a snapshot or the built-in demo), start
 * the HTTP server with the extender verbs and the operations/debug routes, and wait for SIGTERM or
 * SIGINT. Signals are blocked before any thread starts so only main() receives them (STYLE 3.5). */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "alloc/gen/gen_cluster.h"
#include "rf-build.h"
#include "server/app_state.h"
#include "server/cmd/commands.h"
#include "server/debug_routes.h"
#include "server/http/bufpool.h"
#include "server/http/heap.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/http/tls.h"
#include "server/kube/bind.h"
#include "server/live.h"
#include "server/snapshot/snapshot.h"
#include "server/status_routes.h"
#include "server/verbs.h"

static void
serve_usage(FILE *f)
{
	fprintf(f,
		"usage: railfit serve [--config F] [--listen ADDR] (--snapshot F | --demo | "
		"[--kubeconfig F])\n"
		"                     [--log-format text|json] [-v N]\n\n"
		"Run the scheduler extender: against kube-apiserver (in-cluster, --kubeconfig,\n"
		"$KUBECONFIG or ~/.kube/config), or read-only on a snapshot or the demo cluster.\n\n"
		"  --config F        railfit configuration (YAML, see README)\n"
		"  --listen ADDR     address of the extender verbs, e.g. 127.0.0.1:8888 (server.listen)\n"
		"  --snapshot F      serve a static cluster snapshot (kubectl get ... -o json; - = stdin)\n"
		"  --demo            serve the built-in demo cluster\n"
		"  --kubeconfig F    kube-apiserver credentials (live mode only)\n" RF_LOG_USAGE);
}

/* the helper freeing what the packed blobs replaced; joined at exit */
static pthread_t freer;
static bool freer_started;

static void *
free_objects(void *arg)
{
	json_decref(arg);
	rf_heap_trim(); /* give the pages back */
	return NULL;
}

struct pack_job {
	const struct rf_cluster_objects *objs;
	struct rf_snapshot_packed *packed;
};

static void *
pack_objects(void *arg)
{
	struct pack_job *j = arg;
	if (rf_snapshot_pack_prepare(j->objs, &j->packed) < 0)
		j->packed = NULL;
	return NULL;
}

static int
build_generation(struct rf_app *app, struct rf_cluster_objects *objs, const char *source)
{
	struct rf_cluster *gen = NULL;
	/* never rebuilt: the slices and most claims, which only /debug/snapshot reads again after
	 * the build, shrink to packed blobs, made on a helper thread while the model is built */
	struct pack_job job = { objs, NULL };
	pthread_t helper;
	/* a snapshot comes packed already (rf_snapshot_load_kept()): only the demo is packed here
	 */
	bool prepacked = objs->slice_recs != NULL;
	bool packing = !prepacked && pthread_create(&helper, NULL, pack_objects, &job) == 0;
	objs->lend_records = true; /* one build, on this thread */
	int r = rf_cluster_build(objs, &app->cfg, app->cel, &gen);
	if (packing)
		pthread_join(helper, NULL);
	/* before anyone can read the generation (after a failed build, the objects only go); what
	 * the blobs replace is freed by another helper while the server starts */
	json_t *replaced = prepacked ? json_array() /* only the trim */
				     : rf_snapshot_pack_commit(objs, job.packed);
	if (prepacked && rf_snapshot_kept_order(objs) < 0)
		rf_warn("cannot order the ResourceClaims as /debug/snapshot lists them (out of "
			"memory); keeping the file's order");
	if (!replaced || pthread_create(&freer, NULL, free_objects, replaced) != 0)
		json_decref(replaced);
	else
		freer_started = true;
	if (r < 0) {
		rf_errorf("cannot build the cluster model: %s", strerror(-r));
		return 1;
	}
	if (packing && !job.packed)
		rf_warn("cannot pack the ResourceSlices and ResourceClaims (out of memory); keeping "
			"them as they are");
	for (size_t i = 0; i < rf_cluster_n_warnings(gen); i++)
		rf_warn("skipped part of the cluster", "source", source, "err",
			rf_cluster_warning(gen, i));
	struct rf_cluster_counts cnt = rf_cluster_counts(gen);
	char nodes[32], slices[32], claims[32], pods[32];
	snprintf(nodes, sizeof(nodes), "%zu", cnt.nodes);
	snprintf(slices, sizeof(slices), "%zu", cnt.slices);
	snprintf(claims, sizeof(claims), "%zu", cnt.claims);
	snprintf(pods, sizeof(pods), "%zu", cnt.pods);
	rf_info("cluster loaded", "source", source, "nodes", nodes, "resourceslices", slices,
		"resourceclaims", claims, "pods", pods);
	rf_cache_publish(app->cache, gen);
	rf_cache_set_static(app->cache, source);
	return 0;
}

static const struct rf_http_route verb_routes[] = {
	{ "POST", "/filter", false, "filter", rf_verb_filter, NULL },
	{ "POST", "/prioritize", false, "prioritize", rf_verb_prioritize, NULL },
	{ "POST", "/preempt", false, "preempt", rf_verb_preempt, NULL },
};

/* live with bind.enabled; live without; a snapshot or the demo */
static const struct rf_http_route bind_routes[] = {
	{ "POST", "/bind", false, "bind", rf_verb_bind, NULL },
	{ "POST", "/bind", false, "bind", rf_verb_bind_disabled, NULL },
	{ "POST", "/bind", false, "bind", rf_verb_bind_static, NULL },
};

static const struct rf_http_route ops_routes[] = {
	{ "GET", "/healthz", false, "healthz", rf_route_healthz, NULL },
	{ "GET", "/livez", false, "livez", rf_route_healthz, NULL },
	{ "GET", "/readyz", false, "readyz", rf_route_readyz, NULL },
	{ "GET", "/version", false, "version", rf_route_version, NULL },
	{ "GET", "/metrics", false, "metrics", rf_route_metrics, NULL },
};

/* The probe listener (server.probeListen): kubelet's probes on connections of their own, which
 * clients of the main listener cannot use up. */
static const struct rf_http_route probe_routes[] = {
	{ "GET", "/healthz", false, "healthz", rf_route_healthz, NULL },
	{ "GET", "/livez", false, "livez", rf_route_healthz, NULL },
	{ "GET", "/readyz", false, "readyz", rf_route_readyz, NULL },
};
#define PROBE_CONNECTIONS 64u
#define PROBE_PER_ADDRESS 16u

static const struct rf_http_route debug_routes[] = {
	{ "GET", "/debug/nodes", false, "debug", rf_route_debug_nodes, NULL },
	{ "GET", "/debug/nodes/", true, "debug", rf_route_debug_nodes, NULL },
	{ "GET", "/debug/snapshot", false, "debug", rf_route_debug_snapshot, NULL },
	{ "GET", "/debug/config", false, "debug", rf_route_debug_config, NULL },
	{ "GET", "/debug/placements", false, "debug", rf_route_debug_placements, NULL },
	{ "POST", "/debug/explain", false, "explain", rf_route_debug_explain, NULL },
	{ "GET", "/debug/explain/", true, "explain", rf_route_debug_explain, NULL },
};

#define N_ROUTES(a) (sizeof(a) / sizeof((a)[0]))

/* Appends src to dst (userdata app), each callable by `who` (acc parallel to dst). */
static size_t
add_routes(struct rf_http_route *dst, enum rf_http_access *acc, size_t n,
	   const struct rf_http_route *src, size_t m, struct rf_app *app, enum rf_http_access who)
{
	for (size_t i = 0; i < m; i++) {
		dst[n] = src[i];
		dst[n].userdata = app;
		acc[n] = who;
		n++;
	}
	return n;
}

/* How to try it, on stdout: the demo's own pods and requests; for a snapshot, explain for pods
 * that are in it (those holding claims first). */
static void
print_banner(const struct rf_app *app, bool demo, const char *source, const struct rf_cluster *gen,
	     uint16_t port, uint16_t debug_port, bool tls, bool tls_debug)
{
	char host[64], dhost[64];
	snprintf(host, sizeof(host), "%slocalhost:%u", tls ? "https://" : "", (unsigned)port);
	snprintf(dhost, sizeof(dhost), "%slocalhost:%u", tls_debug ? "https://" : "",
		 (unsigned)debug_port);
	printf("railfit %s serving %s (%zu nodes) on %s (verbs: /filter /prioritize /preempt)\n",
	       RF_VERSION, demo ? "the demo cluster" : source, gen ? rf_cluster_n_nodes(gen) : 0,
	       app->cfg.server.listen);
	printf("try:\n");
	printf("  curl -s %s/readyz\n", dhost);
	printf("  curl -s '%s/debug/nodes?o=table'\n", dhost);
	if (!demo) {
		size_t shown = 0, n = gen ? rf_cluster_n_pods(gen) : 0;
		for (int pass = 0; pass < 2 && shown < 2; pass++)
			for (size_t i = 0; i < n && shown < 2; i++) {
				const struct rf_pod *p = rf_cluster_pod_at(gen, i);
				if (!p || !p->ns || !p->name ||
				    (pass == 0) != (p->n_claim_names > 0))
					continue;
				printf("  curl -s '%s/debug/explain/%s/%s?o=table'\n", dhost, p->ns,
				       p->name);
				shown++;
			}
		printf("  curl -s %s/metrics | grep railfit_\n", dhost);
		fflush(stdout);
		return;
	}
	printf("  curl -s '%s/debug/explain/demo/trainer-aligned?o=table'\n", dhost);
	printf("  curl -s '%s/debug/explain/demo/trainer-loose?o=table'\n", dhost);
	printf("  curl -s -X POST %s/filter -H 'Content-Type: application/json' -d "
	       "'{\"Pod\":{\"metadata\":{\"name\":\"trainer-aligned\",\"namespace\":\"demo\","
	       "\"annotations\":{\"railfit.io/min-alignment\":\"PHB\"}},\"spec\":{\"resourceClaims\":"
	       "[{\"name\":\"gpu-nic\",\"resourceClaimName\":\"trainer-aligned-gpu-nic\"}]}},"
	       "\"Nodes\":null,\"NodeNames\":[\"hgx-01\",\"hgx-03\",\"hgx-04\",\"hgx-06\",\"l4-01\"]}'\n",
	       host);
	printf("  curl -s -X POST %s/prioritize -H 'Content-Type: application/json' -d "
	       "'{\"Pod\":{\"metadata\":{\"name\":\"trainer-loose\",\"namespace\":\"demo\"},\"spec\":"
	       "{\"resourceClaims\":[{\"name\":\"gpu-nic\",\"resourceClaimName\":"
	       "\"trainer-loose-gpu-nic\"}]}},\"Nodes\":null,\"NodeNames\":[\"hgx-01\",\"hgx-04\","
	       "\"hgx-05\"]}'\n",
	       host);
	printf("  curl -s %s/metrics | grep railfit_\n", dhost);
	fflush(stdout);
}

/* malloc arenas: two per CPU this process may run on, at least 4 */
static long
malloc_arenas(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return 2 * (n < 2 ? 2 : n);
}

int
rf_cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "listen", required_argument, NULL, 'l' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "demo", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		RF_LOG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *listen = NULL, *snapshot = NULL, *kubeconfig = NULL;
	bool demo = false;
	int c, rc = 1;
	struct rf_app app = { 0 };
	struct rf_http_server *srv = NULL, *dbg = NULL, *probe = NULL;
	struct rf_tls *tls = NULL;
	struct rf_token *token = NULL;
	struct rf_cluster_objects objs = { 0 };
	char err[1024];

	/* glibc gives a thread that meets contention on the heap an arena of its own, up to eight
	 * per core: the HTTP workers, the reflectors, the publisher and the filter's helpers each
	 * kept freed megabytes of theirs (~12 MB at 5,000 nodes). Two arenas per core (4 here) keep
	 * that bounded (+5 MB against one per core) without the lock contention of one per core,
	 * which cost a third of filter's throughput with two connections (README, session 10).
	 * MALLOC_ARENA_MAX, when set, wins (glibc reads it itself). */
	if (!getenv("MALLOC_ARENA_MAX"))
		mallopt(M_ARENA_MAX, (int)malloc_arenas());
	optind = 1;
	while ((c = getopt_long(argc, argv, "v:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'k':
			kubeconfig = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 's':
			snapshot = optarg;
			break;
		case 'd':
			demo = true;
			break;
		case RF_OPT_LOG_FORMAT:
		case 'v':
			if (rf_cmd_log_flag("serve", c, optarg))
				return 2;
			break;
		case 'h':
			serve_usage(stdout);
			return 0;
		default:
			serve_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "railfit serve: unexpected argument '%s'\n", argv[optind]);
		serve_usage(stderr);
		return 2;
	}
	if (snapshot && demo) {
		fprintf(stderr, "railfit serve: --snapshot and --demo exclude each other\n");
		return 2;
	}
	if (kubeconfig && (snapshot || demo)) {
		fprintf(stderr,
			"railfit serve: --kubeconfig is for live mode; %s reads no API server\n",
			demo ? "--demo" : "--snapshot");
		return 2;
	}
	if (snapshot && strcmp(snapshot, "-") == 0)
		snapshot = "/dev/stdin";
	bool live = !snapshot && !demo; /* against kube-apiserver */
	struct rf_live *lv = NULL;
	if ((rc = rf_load_config(config, &app.cfg)) != 0)
		return rc;
	rc = 1;
	if (listen) {
		char *l = strdup(listen);
		if (!l)
			goto out;
		free(app.cfg.server.listen);
		app.cfg.server.listen = l;
	}
	if (*app.cfg.server.tls.cert_file) {
		struct rf_tls_options to = { .cert_file = app.cfg.server.tls.cert_file,
					     .key_file = app.cfg.server.tls.key_file,
					     .client_ca_file = app.cfg.server.tls.client_ca_file };
		int r = rf_tls_new(&to, &tls, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "railfit serve: --config: %s\n", err);
			rc = r == -ENOMEM ? 1 : 2;
			goto out;
		}
	}
	if (*app.cfg.server.debug_token_file) {
		int r = rf_token_new(app.cfg.server.debug_token_file, "server.debugTokenFile",
				     &token, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "railfit serve: --config: %s\n", err);
			rc = r == -ENOMEM ? 1 : 2;
			goto out;
		}
	}
	app.config_path = config;
	app.start_time = (double)time(NULL);
	app.cache = rf_cache_new();
	app.cel = rf_cel_cache_new();
	if (!app.cache || !app.cel)
		goto out;
	rf_metrics_declare_railfit(RF_VERSION, RF_COMMIT);

	const char *source = live ? "apiserver" : demo ? "demo" : snapshot;
	/* objects keep only what railfit reads, with the configured topology annotation */
	const struct rf_slim_options slim = {
		.topology_annotation = app.cfg.devices.topology_annotation,
		.pod_labels = &app.cfg.groups.labels,
		.drop_resource_version = true,
	};
	if (demo) {
		json_t *doc = rf_gen_demo();
		size_t skipped = 0;
		int r = doc ? rf_snapshot_split_opts(doc, &slim, &objs, &skipped, err, sizeof(err))
			    : -ENOMEM;
		json_decref(doc);
		if (r < 0) {
			rf_errorf("cannot build the demo cluster: %s",
				  r == -ENOMEM ? "out of memory" : err);
			goto out;
		}
	} else if (snapshot) {
		size_t skipped = 0;
		/* slices parsed and packed as they are read, most claims packed: the file's
		 * objects never all exist as trees */
		int r = rf_snapshot_load_kept(snapshot, &slim, &app.cfg, &objs, &skipped, err,
					      sizeof(err));
		if (r < 0) {
			fprintf(stderr, "railfit serve: --snapshot: %s\n", err);
			rc = r == -ENOMEM ? 1 : 2;
			goto out;
		}
		if (skipped)
			rf_infof("snapshot: skipped %zu objects of kinds railfit does not use",
				 skipped);
	}
	if (!live && (rc = build_generation(&app, &objs, source)) != 0)
		goto out;
	rc = 1;

	/* signals first: every thread started from here inherits the blocked mask */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* one request over thousands of nodes uses every core: the caller and a worker per
	 * other core */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	app.parallel = rf_parallel_new(cpus > 1 ? (unsigned)(cpus < 8 ? cpus - 1 : 7) : 0);
	if (!app.parallel)
		goto out;
	signal(SIGPIPE, SIG_IGN);
	if (live) {
		struct rf_live_options lo = { .cfg = &app.cfg,
					      .kubeconfig = kubeconfig,
					      .cache = app.cache,
					      .cel = app.cel,
					      .version = RF_VERSION };
		int r = rf_live_start(&lo, &lv, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "railfit serve: %s\n", err);
			rc = r == -EINVAL || r == -ENOENT ? 2 : 1;
			goto out;
		}
	}

	struct rf_http_route routes[32], droutes[32], proutes[N_ROUTES(probe_routes)];
	enum rf_http_access racc[32], dacc[32];
	size_t nr = 0, nd = 0;
	bool split = app.cfg.server.debug_listen && app.cfg.server.debug_listen[0];
	nr = add_routes(routes, racc, nr, verb_routes, N_ROUTES(verb_routes), &app, RF_HTTP_CLIENT);
	if (lv && app.cfg.bind.enabled) { /* binding needs the API server */
		nr = add_routes(routes, racc, nr, &bind_routes[0], 1, &app, RF_HTTP_CLIENT);
		routes[nr - 1].userdata = rf_live_binder(lv);
	} else {
		nr = add_routes(routes, racc, nr, &bind_routes[lv ? 1 : 2], 1, &app,
				RF_HTTP_CLIENT);
	}
	/* health, readiness, metrics and version on the verbs' port always (kubelet probes and
	 * Prometheus reach the pod's address); the debug routes move to debugListen when it is set
	 */
	nr = add_routes(routes, racc, nr, ops_routes, N_ROUTES(ops_routes), &app, RF_HTTP_OPEN);
	if (split) {
		nd = add_routes(droutes, dacc, nd, ops_routes, N_ROUTES(ops_routes), &app,
				RF_HTTP_OPEN);
		if (app.cfg.server.debug_endpoints)
			nd = add_routes(droutes, dacc, nd, debug_routes, N_ROUTES(debug_routes),
					&app, RF_HTTP_OPERATOR);
	} else if (app.cfg.server.debug_endpoints) {
		nr = add_routes(routes, racc, nr, debug_routes, N_ROUTES(debug_routes), &app,
				RF_HTTP_OPERATOR);
	}
	struct rf_http_options ho = {
		.listen = app.cfg.server.listen,
		.max_body_bytes = app.cfg.server.max_body_bytes,
		.request_timeout_ms = app.cfg.server.request_timeout_ms,
		.threads = (unsigned)app.cfg.server.threads,
		.tls = tls,
		.token = token,
		.access = racc,
		.max_per_address = (unsigned)app.cfg.server.max_connections_per_address,
		.max_buffered_bytes = app.cfg.server.max_buffered_bytes
					      ? app.cfg.server.max_buffered_bytes
					      : 4 * app.cfg.server.max_body_bytes,
	};
	if (rf_http_start(&ho, routes, nr, &srv, err, sizeof(err)) < 0) {
		rf_error("cannot start the extender server", "listen", app.cfg.server.listen, "err",
			 err);
		goto out;
	}
	if (split) {
		ho.listen = app.cfg.server.debug_listen;
		ho.tls = NULL; /* operators' port: plain HTTP, the token if any */
		ho.access = dacc;
		if (rf_http_start(&ho, droutes, nd, &dbg, err, sizeof(err)) < 0) {
			rf_error("cannot start the debug server", "listen",
				 app.cfg.server.debug_listen, "err", err);
			goto out;
		}
	}
	if (app.cfg.server.probe_listen[0]) {
		enum rf_http_access pacc[N_ROUTES(probe_routes)];
		size_t np = add_routes(proutes, pacc, 0, probe_routes, N_ROUTES(probe_routes), &app,
				       RF_HTTP_OPEN);
		struct rf_http_options po = ho;
		po.listen = app.cfg.server.probe_listen;
		po.tls = NULL; /* kubelet's probes: plain HTTP, open */
		po.access = pacc;
		po.threads = 1;
		po.max_connections = PROBE_CONNECTIONS;
		po.max_per_address = PROBE_PER_ADDRESS;
		if (rf_http_start(&po, proutes, np, &probe, err, sizeof(err)) < 0) {
			rf_error("cannot start the probe server", "listen",
				 app.cfg.server.probe_listen, "err", err);
			goto out;
		}
		char pport[16];
		snprintf(pport, sizeof(pport), "%u", (unsigned)rf_http_port(probe));
		rf_info("serving probes", "listen", app.cfg.server.probe_listen, "port", pport);
	}
	char port[16];
	snprintf(port, sizeof(port), "%u", (unsigned)rf_http_port(srv));
	rf_info("serving", "listen", app.cfg.server.listen, "port", port, "source", source, "tls",
		tls ? (rf_tls_wants_client_cert(tls) ? "client-certificates" : "server-only")
		    : "off");
	if (split) {
		snprintf(port, sizeof(port), "%u", (unsigned)rf_http_port(dbg));
		rf_info("serving the debug endpoints", "listen", app.cfg.server.debug_listen,
			"port", port, "token", token ? "required" : "none");
	}
	struct rf_cluster *gen = rf_cache_get(app.cache);
	if (!live)
		print_banner(&app, demo, source, gen, rf_http_port(srv),
			     split ? rf_http_port(dbg) : rf_http_port(srv), tls != NULL,
			     !split && tls != NULL);
	rf_cluster_unref(gen);

	int sig = 0;
	sigwait(&set, &sig);
	rf_info("shutting down", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	rc = 0;
out:
	if (freer_started) {
		pthread_join(freer, NULL);
		freer_started = false;
	}
	rf_http_stop(probe);
	rf_http_stop(dbg);
	rf_http_stop(srv);
	rf_bufpool_drain(); /* the servers are gone: nothing hands a buffer back now */
	rf_tls_free(tls);
	rf_token_free(token);
	rf_live_stop(lv); /* after the servers: joins the watch threads */
	rf_parallel_free(app.parallel);
	rf_cluster_objects_release(&objs);
	rf_cache_free(app.cache);
	rf_cel_cache_free(app.cel);
	rf_config_release(&app.cfg);
	return rc;
}
