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
#include "server/http/log.h"
#include "server/http/metrics.h"
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
		"Run the scheduler extender.\n\n"
		"  --config F        railfit configuration (YAML, see README)\n"
		"  --listen ADDR     address of the extender verbs, e.g. 127.0.0.1:8888 (server.listen)\n"
		"  --snapshot F      serve a static cluster snapshot (kubectl get ... -o json)\n"
		"  --demo            serve the built-in demo cluster\n"
		"  --kubeconfig F    kube-apiserver credentials (live mode)\n"
		"  --log-format F    text (klog) or json\n"
		"  -v N              log verbosity (2 = one line per request)\n");
}

/* Parse --log-format/-v shared by every command. Returns 0, or 2 with a message. */
static int
log_option(const char *fmt)
{
	if (strcmp(fmt, "text") == 0)
		rf_log_setup(RF_LOG_TEXT, rf_log_verbosity());
	else if (strcmp(fmt, "json") == 0)
		rf_log_setup(RF_LOG_JSON, rf_log_verbosity());
	else {
		fprintf(stderr, "railfit: --log-format: expected text or json, got '%s'\n", fmt);
		return 2;
	}
	return 0;
}

static int
parse_verbosity(const char *s, int *ret)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 10) {
		fprintf(stderr, "railfit: -v: expected a number from 0 to 10, got '%s'\n", s);
		return 2;
	}
	*ret = (int)v;
	return 0;
}

/* the helper freeing what the packed blobs replaced; joined at exit */
static pthread_t freer;
static bool freer_started;

static void *
free_objects(void *arg)
{
	json_decref(arg);
	malloc_trim(0); /* give the pages back */
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
	bool packing = pthread_create(&helper, NULL, pack_objects, &job) == 0;
	int r = rf_cluster_build(objs, &app->cfg, app->cel, &gen);
	if (packing)
		pthread_join(helper, NULL);
	/* before anyone can read the generation (after a failed build, the objects only go); what
	 * the blobs replace is freed by another helper while the server starts */
	json_t *replaced = rf_snapshot_pack_commit(objs, job.packed);
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
		rf_warn("skipped part of the cluster", "source", source, "detail",
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

static const struct rf_http_route bind_route = {
	"POST", "/bind", false, "bind", rf_verb_bind, NULL
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
	{ "POST", "/debug/explain", false, "explain", rf_route_debug_explain, NULL },
	{ "GET", "/debug/explain/", true, "explain", rf_route_debug_explain, NULL },
};

#define N_ROUTES(a) (sizeof(a) / sizeof((a)[0]))

static size_t
add_routes(struct rf_http_route *dst, size_t n, const struct rf_http_route *src, size_t m,
	   struct rf_app *app)
{
	for (size_t i = 0; i < m; i++) {
		dst[n] = src[i];
		dst[n].userdata = app;
		n++;
	}
	return n;
}

static void
print_banner(const struct rf_app *app, const char *source, size_t nodes, uint16_t port,
	     uint16_t debug_port)
{
	char host[64], dhost[64];
	snprintf(host, sizeof(host), "localhost:%u", (unsigned)port);
	snprintf(dhost, sizeof(dhost), "localhost:%u", (unsigned)debug_port);
	printf("railfit %s serving %s (%zu nodes) on %s (verbs: /filter /prioritize /preempt)\n",
	       RF_VERSION, source, nodes, app->cfg.server.listen);
	printf("try:\n");
	printf("  curl -s %s/readyz\n", dhost);
	printf("  curl -s '%s/debug/nodes?o=table'\n", dhost);
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

int
rf_cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "listen", required_argument, NULL, 'l' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "demo", no_argument, NULL, 'd' },
		{ "log-format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *listen = NULL, *snapshot = NULL, *kubeconfig = NULL;
	bool demo = false;
	int verbosity = 0, c, rc = 1;
	struct rf_app app = { 0 };
	struct rf_http_server *srv = NULL, *dbg = NULL, *probe = NULL;
	struct rf_cluster_objects objs = { 0 };
	char err[1024];

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
		case 'f':
			if (log_option(optarg))
				return 2;
			break;
		case 'v':
			if (parse_verbosity(optarg, &verbosity))
				return 2;
			rf_log_setup(RF_LOG_TEXT, verbosity);
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
		int r = rf_snapshot_load(snapshot, &slim, &objs, &skipped, err, sizeof(err));
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
	size_t nr = 0, nd = 0;
	bool split = app.cfg.server.debug_listen && app.cfg.server.debug_listen[0];
	nr = add_routes(routes, nr, verb_routes, N_ROUTES(verb_routes), &app);
	if (lv) { /* binding needs the API server */
		routes[nr] = bind_route;
		routes[nr++].userdata = rf_live_binder(lv);
	}
	if (split) {
		nd = add_routes(droutes, nd, ops_routes, N_ROUTES(ops_routes), &app);
		if (app.cfg.server.debug_endpoints)
			nd = add_routes(droutes, nd, debug_routes, N_ROUTES(debug_routes), &app);
	} else {
		nr = add_routes(routes, nr, ops_routes, N_ROUTES(ops_routes), &app);
		if (app.cfg.server.debug_endpoints)
			nr = add_routes(routes, nr, debug_routes, N_ROUTES(debug_routes), &app);
	}
	struct rf_http_options ho = {
		.listen = app.cfg.server.listen,
		.max_body_bytes = app.cfg.server.max_body_bytes,
		.request_timeout_ms = app.cfg.server.request_timeout_ms,
		.threads = (unsigned)app.cfg.server.threads,
		.max_per_address = (unsigned)app.cfg.server.max_connections_per_address,
		.max_buffered_bytes = app.cfg.server.max_buffered_bytes
					      ? app.cfg.server.max_buffered_bytes
					      : 4 * app.cfg.server.max_body_bytes,
	};
	if (rf_http_start(&ho, routes, nr, &srv, err, sizeof(err)) < 0) {
		rf_error("cannot start the extender server", "listen", app.cfg.server.listen,
			 "detail", err);
		goto out;
	}
	if (split) {
		ho.listen = app.cfg.server.debug_listen;
		if (rf_http_start(&ho, droutes, nd, &dbg, err, sizeof(err)) < 0) {
			rf_error("cannot start the debug server", "listen",
				 app.cfg.server.debug_listen, "detail", err);
			goto out;
		}
	}
	if (app.cfg.server.probe_listen[0]) {
		size_t np = add_routes(proutes, 0, probe_routes, N_ROUTES(probe_routes), &app);
		struct rf_http_options po = ho;
		po.listen = app.cfg.server.probe_listen;
		po.threads = 1;
		po.max_connections = PROBE_CONNECTIONS;
		po.max_per_address = PROBE_PER_ADDRESS;
		if (rf_http_start(&po, proutes, np, &probe, err, sizeof(err)) < 0) {
			rf_error("cannot start the probe server", "listen",
				 app.cfg.server.probe_listen, "detail", err);
			goto out;
		}
		char pport[16];
		snprintf(pport, sizeof(pport), "%u", (unsigned)rf_http_port(probe));
		rf_info("serving probes", "listen", app.cfg.server.probe_listen, "port", pport);
	}
	char port[16];
	snprintf(port, sizeof(port), "%u", (unsigned)rf_http_port(srv));
	rf_info("serving", "listen", app.cfg.server.listen, "port", port, "source", source);
	struct rf_cluster *gen = rf_cache_get(app.cache);
	if (!live)
		print_banner(&app, demo ? "the demo cluster" : source,
			     gen ? rf_cluster_n_nodes(gen) : 0, rf_http_port(srv),
			     split ? rf_http_port(dbg) : rf_http_port(srv));
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
	rf_live_stop(lv); /* after the servers: joins the watch threads */
	rf_parallel_free(app.parallel);
	rf_cluster_objects_release(&objs);
	rf_cache_free(app.cache);
	rf_cel_cache_free(app.cel);
	rf_config_release(&app.cfg);
	return rc;
}
