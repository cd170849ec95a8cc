/* railfit simulate: read a snapshot and the pods to place, run the replay engine
 * (alloc/sim/simulate.h) and print its report as a table, JSON or SVG. */
#include "alloc/sim/simulate.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alloc/gen/gen_cluster.h"
#include "alloc/model/json_get.h"
#include "alloc/sim/report.h"
#include "alloc/sim/workload.h"
#include "server/cmd/commands.h"
#include "server/snapshot/snapshot.h"

static void
simulate_usage(FILE *f)
{
	fprintf(f,
		"usage: railfit simulate (--snapshot F | --demo) [--pods F] [--workload SPEC] "
		"[--seed S]\n"
		"                        [-o table|json|svg] [--config F] [--weight W]\n"
		"                        [--percentage-of-nodes-to-score P]\n\n"
		"Replay pending pods on a cluster snapshot twice, as kube-scheduler places them "
		"without\nrailfit (an approximation of its default scoring, with DRA first-fit) "
		"and with railfit's\nfilter and prioritize, and compare the alignment, bandwidth "
		"over-commitment, pending pods\nand fragmentation they end up with.\n\n"
		"  --snapshot F   a cluster snapshot (kubectl get nodes,pods,resourceslices,\n"
		"                 resourceclaims,deviceclasses -A -o json)\n"
		"  --demo         the built-in demo cluster\n"
		"  --pods F       Pods to place (a List; may carry their ResourceClaims and\n"
		"                 ResourceClaimTemplates), in file order\n"
		"  --workload SPEC  generated pods, e.g. "
		"\"200x1gpu1nic,50x2pair,20x8gpu-job4,300xloader-egress5G\"\n"
		"                 (COUNTxSHAPE[-MOD]...; shapes <g>gpu, <g>gpu<n>nic, <p>pair, "
		"loader;\n"
		"                 modifiers job<k>, cpu<k>, bw<Q>, min<LEVEL>, egress<Q>,\n"
		"                 ingress<Q>)\n"
		"                 Without --pods and --workload: the snapshot's Pending pods, in\n"
		"                 creation order.\n"
		"  --seed S       seed of the tie-breaks and of the workload (default 1)\n"
		"  -o FORMAT      table (default), json or svg (a bar chart)\n"
		"  --weight W     the extender's weight in kube-scheduler's configuration "
		"(default 5)\n"
		"  --percentage-of-nodes-to-score P  kube-scheduler's setting (default 0: "
		"adaptive)\n");
}

static int
parse_uint(const char *flag, const char *v, unsigned long long lo, unsigned long long hi,
	   unsigned long long *ret)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (!*v || *end || v[0] == '-' || x < lo || x > hi) {
		fprintf(stderr,
			"railfit simulate: %s: expected a number from %llu to %llu, got '%s'\n",
			flag, lo, hi, v);
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

/* Append the elements of src to *dst. */
static int
extend(json_t **dst, json_t *src)
{
	if (!json_array_size(src))
		return 0;
	if (!*dst && !(*dst = json_array()))
		return -ENOMEM;
	return json_array_extend(*dst, src) < 0 ? -ENOMEM : 0;
}

static int
cmp_pending(const void *a, const void *b)
{
	const json_t *pa = *(json_t *const *)a, *pb = *(json_t *const *)b;
	const json_t *ma = json_object_get(pa, "metadata"), *mb = json_object_get(pb, "metadata");
	const char *ta = rf_jstr(ma, "creationTimestamp"), *tb = rf_jstr(mb, "creationTimestamp");
	int r = strcmp(ta ? ta : "", tb ? tb : ""); /* RFC 3339 in UTC sorts as text */
	if (r)
		return r;
	r = strcmp(rf_jstr(ma, "namespace") ? rf_jstr(ma, "namespace") : "",
		   rf_jstr(mb, "namespace") ? rf_jstr(mb, "namespace") : "");
	return r ? r
		 : strcmp(rf_jstr(ma, "name") ? rf_jstr(ma, "name") : "",
			  rf_jstr(mb, "name") ? rf_jstr(mb, "name") : "");
}

/* The snapshot's Pending pods (no node, not terminated), oldest first. */
static int
pending_queue(json_t *pods, json_t *queue)
{
	size_t n = 0, cap = json_array_size(pods);
	json_t **v = calloc(cap + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		json_t *p = json_array_get(pods, i);
		const char *ph = rf_jstr(json_object_get(p, "status"), "phase");
		if (rf_jstr(json_object_get(p, "spec"), "nodeName") ||
		    (ph && strcmp(ph, "Pending") != 0))
			continue;
		v[n++] = p;
	}
	qsort(v, n, sizeof(*v), cmp_pending);
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = json_array_append(queue, v[i]) < 0 ? -ENOMEM : 0;
	free(v);
	return r;
}

int
rf_cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "snapshot", required_argument, NULL, 's' },
		{ "demo", no_argument, NULL, 'd' },
		{ "pods", required_argument, NULL, 'p' },
		{ "workload", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'c' },
		{ "weight", required_argument, NULL, 'W' },
		{ "percentage-of-nodes-to-score", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *snapshot = NULL, *podf = NULL, *workload = NULL, *out = "table", *config = NULL;
	bool demo = false;
	struct rf_sim_options so = { .seed = 1, .extender_weight = 5, .threads = 2 };
	unsigned long long v;
	int c, rc = 2;
	char err[1024];
	struct rf_config cfg = { 0 };
	struct rf_cluster_objects objs = { 0 }, podobjs = { 0 };
	struct rf_workload wl = { 0 };
	struct rf_cel_cache *cel = NULL;
	json_t *queue = NULL, *report = NULL, *poddoc = NULL;
	char *text = NULL;
	struct rf_slim_options slim = { .all_node_annotations = true, .keep_requests = true };

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			snapshot = optarg;
			break;
		case 'd':
			demo = true;
			break;
		case 'p':
			podf = optarg;
			break;
		case 'w':
			workload = optarg;
			break;
		case 'S':
			if (parse_uint("--seed", optarg, 0, INT64_MAX, &v) < 0)
				return 2;
			so.seed = v;
			break;
		case 'W':
			if (parse_uint("--weight", optarg, 1, 100, &v) < 0)
				return 2;
			so.extender_weight = (unsigned)v;
			break;
		case 'P':
			if (parse_uint("--percentage-of-nodes-to-score", optarg, 0, 100, &v) < 0)
				return 2;
			so.pct_nodes_to_score = (unsigned)v;
			break;
		case 'c':
			config = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			simulate_usage(stdout);
			return 0;
		default:
			simulate_usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (!snapshot && !demo) || (snapshot && demo)) {
		fprintf(stderr, "railfit simulate: %s\n",
			optind < argc        ? "unexpected argument"
			: (snapshot && demo) ? "--snapshot and --demo exclude each other"
					     : "--snapshot F (or --demo) is required");
		simulate_usage(stderr);
		return 2;
	}
	if (strcmp(out, "table") != 0 && strcmp(out, "json") != 0 && strcmp(out, "svg") != 0) {
		fprintf(stderr, "railfit simulate: -o: expected table, json or svg, got '%s'\n",
			out);
		return 2;
	}
	if ((rc = rf_load_config(config, &cfg)) != 0)
		return rc;
	rc = 2;
	slim.pod_labels = NULL;
	if (demo) {
		json_t *d = rf_gen_demo();
		int r = d ? rf_snapshot_split_opts(d, &slim, &objs, NULL, err, sizeof(err))
			  : -ENOMEM;
		json_decref(d);
		if (r < 0) {
			fprintf(stderr, "railfit simulate: cannot build the demo cluster\n");
			rc = 1;
			goto out;
		}
	} else if (rf_snapshot_load(snapshot, &slim, &objs, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "railfit simulate: --snapshot: %s\n", err);
		goto out;
	}
	if (!(queue = json_array())) {
		rc = 1;
		goto out;
	}
	if (podf) {
		json_error_t jerr;
		poddoc = json_load_file(podf, JSON_REJECT_DUPLICATES, &jerr);
		if (!poddoc) {
			fprintf(stderr,
				"railfit simulate: --pods: cannot read '%s' as JSON: %s (line %d)\n",
				podf, jerr.text, jerr.line);
			goto out;
		}
		if (rf_snapshot_split_opts(poddoc, &slim, &podobjs, NULL, err, sizeof(err)) < 0) {
			fprintf(stderr, "railfit simulate: --pods '%s': %s\n", podf, err);
			goto out;
		}
		for (size_t i = 0; i < json_array_size(podobjs.pods); i++) {
			const json_t *p = json_array_get(podobjs.pods, i);
			const char *nn = rf_jstr(json_object_get(p, "spec"), "nodeName");
			if (nn || !rf_jstr(json_object_get(p, "metadata"), "name")) {
				fprintf(stderr,
					"railfit simulate: --pods '%s': pod %zu %s; expected pending "
					"pods with metadata.name and no spec.nodeName\n",
					podf, i + 1,
					nn ? "is already bound to a node" : "has no name");
				goto out;
			}
		}
		if (!json_array_size(podobjs.pods)) {
			fprintf(stderr, "railfit simulate: --pods '%s': no Pod in the file\n",
				podf);
			goto out;
		}
	}
	if (workload && rf_workload_generate(workload, &cfg, so.seed, &wl, err, sizeof(err)) < 0) {
		fprintf(stderr, "railfit simulate: %s\n", err);
		goto out;
	}
	rc = 1;
	if (extend(&objs.claims, podobjs.claims) < 0 ||
	    extend(&objs.templates, podobjs.templates) < 0 ||
	    extend(&objs.classes, podobjs.classes) < 0 || extend(&objs.claims, wl.claims) < 0 ||
	    extend(&objs.classes, wl.classes) < 0)
		goto out;
	if (podf || workload) {
		if (extend(&queue, podobjs.pods) < 0 || extend(&queue, wl.pods) < 0)
			goto out;
	} else if (pending_queue(objs.pods, queue) < 0) {
		goto out;
	}
	if (!(cel = rf_cel_cache_new()))
		goto out;
	int r = rf_simulate(&objs, queue, &cfg, cel, &so, &report, err, sizeof(err));
	if (r == -EINVAL) {
		fprintf(stderr, "railfit simulate: %s\n", err);
		rc = 2;
		goto out;
	}
	if (r < 0) {
		fprintf(stderr, "railfit simulate: out of memory\n");
		goto out;
	}
	if (strcmp(out, "json") == 0) {
		if (json_dumpf(report, stdout, JSON_INDENT(2)) < 0)
			goto out;
		fputc('\n', stdout);
	} else {
		text = strcmp(out, "svg") == 0 ? rf_sim_svg(report) : rf_sim_table(report);
		if (!text)
			goto out;
		fputs(text, stdout);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "railfit simulate: cannot write the report\n");
		goto out;
	}
	rc = 0;
out:
	free(text);
	json_decref(report);
	json_decref(queue);
	json_decref(poddoc);
	rf_workload_release(&wl);
	rf_cel_cache_free(cel);
	rf_cluster_objects_release(&objs);
	rf_cluster_objects_release(&podobjs);
	rf_config_release(&cfg);
	return rc;
}
