/* The offline commands (explain, gen-cluster, version) and what every command shares: reading a
 * bounded file, loading --config. */
#include "server/cmd/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "alloc/explain.h"
#include "alloc/gen/gen_cluster.h"
#include "config/grow.h"
#include "rf-build.h"
#include "server/explain_table.h"
#include "server/http/log.h"
#include "server/snapshot/snapshot.h"
#include "server/version.h"

int
rf_cmd_log_flag(const char *cmd, int c, const char *arg)
{
	if (c == RF_OPT_LOG_FORMAT) {
		if (strcmp(arg, "text") == 0)
			rf_log_setup(RF_LOG_TEXT, rf_log_verbosity());
		else if (strcmp(arg, "json") == 0)
			rf_log_setup(RF_LOG_JSON, rf_log_verbosity());
		else {
			fprintf(stderr,
				"railfit %s: --log-format: expected text or json, got '%s'\n", cmd,
				arg);
			return 2;
		}
		return 0;
	}
	/* -v=2 reaches us as "=2" (getopt takes what follows -v as its value) */
	const char *s = arg[0] == '=' ? arg + 1 : arg;
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 10) {
		fprintf(stderr, "railfit %s: -v: expected a number from 0 to 10, got '%s'\n", cmd,
			arg);
		return 2;
	}
	rf_log_setup(rf_log_format(), (int)v); /* the format stays whatever it was */
	return 0;
}

int
rf_cmd_output_flag(const char *cmd, const char *value, const char *const *allowed)
{
	size_t n = 0;
	for (; allowed[n]; n++)
		if (strcmp(value, allowed[n]) == 0)
			return 0;
	char list[256] = "";
	size_t pos = 0;
	for (size_t i = 0; i < n && pos < sizeof(list); i++)
		pos += (size_t)snprintf(list + pos, sizeof(list) - pos, "%s%s",
					i == 0       ? ""
					: i + 1 == n ? " or "
						     : ", ",
					allowed[i]);
	fprintf(stderr, "railfit %s: -o: expected %s, got '%s'\n", cmd, list, value);
	return 2;
}

int
rf_read_file(const char *path, size_t max, char **ret, size_t *ret_len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	for (;;) {
		if (rf_grow(&buf, &cap, len + 4096 + 1, 1) < 0) {
			free(buf);
			fclose(f);
			snprintf(err, errlen, "cannot read '%s': out of memory", path);
			return -ENOMEM;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len > max) {
			free(buf);
			fclose(f);
			snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max);
			return -EMSGSIZE;
		}
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		snprintf(err, errlen, "cannot read '%s'", path);
		return -EIO;
	}
	buf[len] = 0;
	*ret = buf;
	*ret_len = len;
	return 0;
}

int
rf_load_config(const char *path, struct rf_config *cfg)
{
	char err[512];
	char *buf;
	size_t len;
	rf_config_init(cfg);
	if (!path)
		return 0;
	if (rf_read_file(path, 1 << 20, &buf, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "railfit: --config: %s\n", err);
		rf_config_release(cfg);
		return 2;
	}
	int r = rf_config_parse_yaml(buf, len, cfg, err, sizeof(err));
	free(buf);
	if (r < 0) {
		fprintf(stderr, "railfit: --config '%s': %s\n", path, err);
		rf_config_release(cfg);
		return r == -ENOMEM ? 1 : 2;
	}
	return 0;
}

static void
explain_usage(FILE *f)
{
	fprintf(f,
		"usage: railfit explain (--snapshot F | --demo) --pod F|NS/NAME [--node N] "
		"[-o table|json]\n"
		"                       [--config F] [--log-format text|json] [-v N]\n\n"
		"Offline: for every node, would the pod pass, which devices the DRA allocator would "
		"pick,\ntheir alignment, headroom and score, and why.\n\n"
		"  --snapshot F   a cluster snapshot (kubectl get nodes,pods,resourceslices,\n"
		"                 resourceclaims,resourceclaimtemplates,deviceclasses -A -o json);\n"
		"                 - reads it from standard input\n"
		"  --demo         the built-in demo cluster\n"
		"  --pod F        the Pod (JSON), or a List holding the Pod plus its ResourceClaims\n"
		"                 or ResourceClaimTemplates when they are not in the snapshot;\n"
		"                 - reads it from standard input\n"
		"  --pod NS/NAME  a pod of the snapshot (when no file of that name exists)\n"
		"  --node N       only this node\n"
		"  -o FORMAT      table (default) or json\n"
		"  --config F     railfit configuration (scoring, devices, filter)\n" RF_LOG_USAGE
		"\nexample:\n"
		"  kubectl get nodes,pods,resourceslices,resourceclaims,resourceclaimtemplates,\\\n"
		"    deviceclasses -A -o json | railfit explain --snapshot - --pod ml/trainer-0\n");
}

/* --pod NS/NAME: a pod reference rather than a file, when no such file exists. */
static bool
pod_reference(const char *arg, char *ns, size_t nslen, const char **name)
{
	const char *slash = strchr(arg, '/');
	if (!slash || slash == arg || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - arg) >= nslen || access(arg, F_OK) == 0)
		return false;
	memcpy(ns, arg, (size_t)(slash - arg));
	ns[slash - arg] = 0;
	*name = slash + 1;
	return true;
}

/* Append every element of src to dst (both arrays). */
static int
extend(json_t **dst, json_t *src)
{
	if (!json_array_size(src))
		return 0;
	if (!*dst && !(*dst = json_array()))
		return -ENOMEM;
	return json_array_extend(*dst, src) < 0 ? -ENOMEM : 0;
}

int
rf_cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "snapshot", required_argument, NULL, 's' },
		{ "demo", no_argument, NULL, 'd' },
		{ "pod", required_argument, NULL, 'p' },
		{ "node", required_argument, NULL, 'n' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		RF_LOG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const outputs[] = { "table", "json", NULL };
	const char *snapshot = NULL, *podf = NULL, *node = NULL, *out = "table", *config = NULL;
	char pod_ns[256];
	const char *pod_name = NULL;
	bool demo = false;
	int c, rc = 1;
	char err[1024];
	struct rf_config cfg = { 0 };
	struct rf_cluster_objects objs = { 0 }, podobjs = { 0 };
	struct rf_cel_cache *cel = NULL;
	struct rf_cluster *gen = NULL;
	json_t *doc = NULL, *poddoc = NULL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:v:h", opts, NULL)) != -1) {
		switch (c) {
		case RF_OPT_LOG_FORMAT:
		case 'v':
			if (rf_cmd_log_flag("explain", c, optarg))
				return 2;
			break;
		case 's':
			snapshot = optarg;
			break;
		case 'd':
			demo = true;
			break;
		case 'p':
			podf = optarg;
			break;
		case 'n':
			node = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			explain_usage(stdout);
			return 0;
		default:
			explain_usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (!snapshot && !demo) || (snapshot && demo) || !podf) {
		fprintf(stderr, "railfit explain: %s\n",
			optind < argc        ? "unexpected argument"
			: !podf              ? "--pod F (or --pod NS/NAME) is required"
			: (snapshot && demo) ? "--snapshot and --demo exclude each other"
					     : "--snapshot F (or --demo) is required");
		explain_usage(stderr);
		return 2;
	}
	if (rf_cmd_output_flag("explain", out, outputs))
		return 2;
	bool snap_stdin = snapshot && strcmp(snapshot, "-") == 0;
	bool pod_stdin = strcmp(podf, "-") == 0;
	if (snap_stdin && pod_stdin) {
		fprintf(stderr,
			"railfit explain: --snapshot - and --pod - cannot both read standard "
			"input; give one of them a file (or --pod NS/NAME)\n");
		return 2;
	}
	if (snap_stdin)
		snapshot = "/dev/stdin";
	if (pod_stdin)
		podf = "/dev/stdin";
	else
		pod_reference(podf, pod_ns, sizeof(pod_ns), &pod_name);
	if ((rc = rf_load_config(config, &cfg)) != 0)
		return rc;
	rc = 2;
	if (demo) {
		json_t *d = rf_gen_demo();
		int r = d ? rf_snapshot_split(d, &objs, NULL, err, sizeof(err)) : -ENOMEM;
		json_decref(d);
		if (r < 0) {
			fprintf(stderr, "railfit explain: cannot build the demo cluster\n");
			rc = 1;
			goto out;
		}
	} else if (rf_snapshot_load_file(snapshot, &objs, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "railfit explain: --snapshot: %s\n", err);
		goto out;
	}
	json_error_t jerr;
	if (pod_name) {
		rc = 1;
		cel = rf_cel_cache_new();
		if (!cel || rf_cluster_build(&objs, &cfg, cel, &gen) < 0)
			goto out;
		const struct rf_pod *p = rf_cluster_pod(gen, pod_ns, pod_name);
		if (!p) {
			fprintf(stderr,
				"railfit explain: --pod: no file '%s', and no pod %s/%s in the %s\n",
				podf, pod_ns, pod_name, demo ? "demo cluster" : "snapshot");
			rc = 2;
			goto out;
		}
		if (!(poddoc = rf_snapshot_expand(p->json, NULL)))
			goto out;
		goto explain;
	}
	poddoc = json_load_file(podf, JSON_REJECT_DUPLICATES, &jerr);
	if (!poddoc) {
		fprintf(stderr, "railfit explain: --pod: cannot read '%s' as JSON: %s (line %d)\n",
			podf, jerr.text, jerr.line);
		goto out;
	}
	if (rf_snapshot_split(poddoc, &podobjs, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "railfit explain: --pod '%s': %s\n", podf, err);
		goto out;
	}
	if (json_array_size(podobjs.pods) != 1) {
		fprintf(stderr,
			"railfit explain: --pod '%s': expected exactly one Pod (kind: Pod), found "
			"%zu\n",
			podf, json_array_size(podobjs.pods));
		goto out;
	}
	rc = 1;
	if (extend(&objs.claims, podobjs.claims) < 0 ||
	    extend(&objs.templates, podobjs.templates) < 0 ||
	    extend(&objs.classes, podobjs.classes) < 0)
		goto out;
	cel = rf_cel_cache_new();
	if (!cel || rf_cluster_build(&objs, &cfg, cel, &gen) < 0)
		goto out;
explain:
	for (size_t i = 0; i < rf_cluster_n_warnings(gen); i++)
		fprintf(stderr, "railfit explain: warning: %s\n", rf_cluster_warning(gen, i));
	if (node && !rf_cluster_node(gen, node)) {
		fprintf(stderr, "railfit explain: --node: node '%s' is not in the snapshot\n",
			node);
		rc = 2;
		goto out;
	}
	doc = rf_explain_pod(gen, pod_name ? poddoc : json_array_get(podobjs.pods, 0), node);
	if (!doc)
		goto out;
	if (strcmp(out, "json") == 0) {
		if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			goto out;
		fputc('\n', stdout);
	} else {
		char *t = rf_explain_table(doc);
		if (!t)
			goto out;
		fputs(t, stdout);
		free(t);
	}
	rc = 0;
out:
	json_decref(doc);
	json_decref(poddoc);
	rf_cluster_unref(gen);
	rf_cel_cache_free(cel);
	rf_cluster_objects_release(&objs);
	rf_cluster_objects_release(&podobjs);
	rf_config_release(&cfg);
	return rc;
}

static void
gen_usage(FILE *f)
{
	fprintf(f,
		"usage: railfit gen-cluster --nodes N [--seed S] [--used FRACTION] "
		"[--pods-per-node P] [--blocks B] [--cpu-slices]\n\n"
		"Write a synthetic cluster snapshot (HGX-like nodes, ResourceSlices shaped like the\n"
		"NVIDIA and dranet drivers', DeviceClasses, claims and the pods holding them) to\n"
		"standard output.\n\n"
		"  --nodes N         number of nodes (1..100000)\n"
		"  --seed S          PRNG seed (default 1); the same seed gives the same output\n"
		"  --used FRACTION   share of GPUs allocated, 0..1 (default 0.5)\n"
		"  --pods-per-node P fleet shape: about P Running GPU pods per node on average\n"
		"                    (0.1..8): used GPUs are paired into two-GPU claims until the\n"
		"                    count is reached and about half the pods are Job workers\n"
		"                    (default: one pod per used GPU, all of them Job workers)\n"
		"  --blocks B        label the nodes with their network block and spine\n"
		"                    (network.topology.kubernetes.io/block, .../spine): B blocks\n"
		"                    of consecutive nodes, four blocks to a spine (default: none)\n"
		"  --cpu-slices      every node also publishes dra.cpu devices as the DRA CPU\n"
		"                    driver does in grouped mode (one per NUMA node, its CPUs a\n"
		"                    consumable capacity dra.cpu/cpu), plus the DeviceClass dra.cpu\n");
}

int
rf_cmd_gen_cluster(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "used", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "pods-per-node", required_argument, NULL, 'p' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "cpu-slices", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct rf_gen_options o = { .nodes = 0, .seed = 1, .used = 0.5 };
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 100000) {
				fprintf(stderr,
					"railfit gen-cluster: --nodes: expected a number from 1 to "
					"100000, got '%s'\n",
					optarg);
				return 2;
			}
			o.nodes = (unsigned)v;
			break;
		}
		case 's': {
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-') {
				fprintf(stderr,
					"railfit gen-cluster: --seed: expected a non-negative integer, "
					"got '%s'\n",
					optarg);
				return 2;
			}
			o.seed = v;
			break;
		}
		case 'u': {
			double v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0 && v <= 1)) {
				fprintf(stderr,
					"railfit gen-cluster: --used: expected a fraction from 0 to 1, "
					"got '%s'\n",
					optarg);
				return 2;
			}
			o.used = v;
			break;
		}
		case 'p': {
			double v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0.1 && v <= 8)) {
				fprintf(stderr,
					"railfit gen-cluster: --pods-per-node: expected a number from "
					"0.1 to 8, got '%s'\n",
					optarg);
				return 2;
			}
			o.pods_per_node = v;
			break;
		}
		case 'b': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-' || v < 1 || v > 100000) {
				fprintf(stderr,
					"railfit gen-cluster: --blocks: expected a number from 1 to "
					"100000, got '%s'\n",
					optarg);
				return 2;
			}
			o.blocks = (unsigned)v;
			break;
		}
		case 'c':
			o.cpu_slices = true;
			break;
		case 'h':
			gen_usage(stdout);
			return 0;
		default:
			gen_usage(stderr);
			return 2;
		}
	}
	if (o.blocks > o.nodes && o.nodes) {
		fprintf(stderr,
			"railfit gen-cluster: --blocks: expected at most one block per node (%u), "
			"got %u\n",
			o.nodes, o.blocks);
		return 2;
	}
	if (optind < argc || o.nodes == 0) {
		fprintf(stderr, "railfit gen-cluster: %s\n",
			optind < argc ? "unexpected argument" : "--nodes N is required");
		gen_usage(stderr);
		return 2;
	}
	json_t *doc = rf_gen_cluster(&o);
	if (!doc) {
		fprintf(stderr, "railfit gen-cluster: out of memory\n");
		return 1;
	}
	int r = json_dumpf(doc, stdout, JSON_COMPACT);
	json_decref(doc);
	if (r < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, "railfit gen-cluster: cannot write the snapshot\n");
		return 1;
	}
	return 0;
}

static void
version_usage(FILE *f)
{
	fprintf(f, "usage: railfit version [-o json|yaml]\n\n"
		   "Print railfit's version, git commit and the versions of the libraries it runs "
		   "with.\n\n"
		   "  -o FORMAT   json or yaml (default: text)\n");
}

int
rf_cmd_version(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const outputs[] = { "json", "yaml", NULL };
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			version_usage(stdout);
			return 0;
		default:
			version_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "railfit version: unexpected argument '%s'\n", argv[optind]);
		version_usage(stderr);
		return 2;
	}
	if (out && rf_cmd_output_flag("version", out, outputs))
		return 2;
	json_t *v = rf_version_json();
	if (!v)
		return 1;
	const json_t *libs = json_object_get(v, "libraries");
	const char *k;
	json_t *val;
	if (out && strcmp(out, "json") == 0) {
		json_dumpf(v, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (out) {
		/* YAML: JSON strings are YAML double-quoted scalars */
		char *ver = json_dumps(json_object_get(v, "version"), JSON_ENCODE_ANY);
		char *commit = json_dumps(json_object_get(v, "commit"), JSON_ENCODE_ANY);
		printf("version: %s\ncommit: %s\nlibraries:\n", ver ? ver : "\"\"",
		       commit ? commit : "\"\"");
		free(ver);
		free(commit);
		json_object_foreach ((json_t *)libs, k, val) {
			char *q = json_dumps(val, JSON_ENCODE_ANY);
			printf("  %s: %s\n", k, q ? q : "\"\"");
			free(q);
		}
	} else {
		printf("railfit %s (commit %s)\n", json_string_value(json_object_get(v, "version")),
		       json_string_value(json_object_get(v, "commit")));
		json_object_foreach ((json_t *)libs, k, val)
			printf("  %-14s %s\n", k, json_string_value(val));
	}
	json_decref(v);
	return fflush(stdout) == 0 ? 0 : 1;
}
