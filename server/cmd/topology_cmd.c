/* `railfit topology` (DESIGN sections 3 and 5): the GPU x NIC locality matrix of this machine
 * (hwloc discovery with PCI and OS devices) or of an lstopo XML export, printed as a table shaped
 * like `nvidia-smi topo -m`, as JSON, or as the value of the railfit.io/pci-topology Node
 * annotation. --publish will patch the Node once the Kubernetes API client is in the build; until
 * then it computes the patch, prints it as a kubectl command and exits 2.
 *
 * Runs on the main thread before any other thread exists: loading an XML briefly redirects
 * stderr to a temporary file to capture hwloc's own diagnostics (hwloc prints why it rejects a
 * file instead of returning a message) and sets HWLOC_XML_VERBOSE for that call. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <jansson.h>

#include "rf-build.h"
#include "server/cmd/commands.h"
#include "server/kube/kube.h"
#include "topology/annotation.h"
#include "topology/hwloc_import.h"
#include "topology/hwloc_nvlink.h"
#include "topology/pcitree.h"

#define CMD "railfit topology"

static void
topology_usage(FILE *f)
{
	fprintf(f,
		"usage: railfit topology [--xml F] [-o table|json|annotation] [--publish --node N [--kubeconfig F]]\n"
		"                        [--config F] [--log-format text|json] [-v N]\n\n"
		"GPU x NIC locality of this machine (hwloc) or of an lstopo XML export, like\n"
		"'nvidia-smi topo -m': PIX (at most one PCIe switch), PXB (several switches), PHB\n"
		"(through a host bridge), NODE (across host bridges of one NUMA node), SYS (across\n"
		"NUMA nodes). GPUs are PCI class 0302, 0300 from NVIDIA or AMD, or 12xx; NICs are\n"
		"class 02xx (SR-IOV virtual functions included).\n\n"
		"  --xml F       read an hwloc XML topology (lstopo F.xml) instead of this machine\n"
		"  -o FORMAT     table (default), json, or annotation (the value of the Node\n"
		"                annotation devices.topologyAnnotation, railfit.io/pci-topology)\n"
		"  --publish     patch the annotation onto the Node named by --node\n"
		"  --node N      the Node to annotate (with --publish)\n"
		"  --kubeconfig F  credentials for --publish (else kube.kubeconfig, $KUBECONFIG,\n"
		"                ~/.kube/config, in-cluster)\n"
		"  --config F    railfit configuration (for devices.topologyAnnotation)\n" RF_LOG_USAGE);
}

/* The first line of captured hwloc output that says something, without a leading "<file>: ". */
static void
first_reason(const char *captured, const char *path, char *out, size_t len)
{
	const char *p = captured;
	size_t plen = strlen(path);
	char line[512];

	out[0] = '\0';
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		p = eol ? eol + 1 : p + n;
		n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0 || strstr(line, "without DTD"))
			continue;
		const char *s = line;
		if (n > plen + 2 && strncmp(s, path, plen) == 0 && s[plen] == ':' &&
		    s[plen + 1] == ' ')
			s += plen + 2;
		snprintf(out, len, "%s", s);
		return;
	}
}

/* hwloc_topology_set_xml() + load with hwloc's diagnostics captured into `captured`. Returns the
 * hwloc result; *ret_errno gets errno of the failing call. */
static int
load_xml_captured(hwloc_topology_t topo, const char *path, char *captured, size_t caplen,
		  int *ret_errno)
{
	const char *env = getenv("HWLOC_XML_VERBOSE");
	char *old_env = env ? strdup(env) : NULL;
	FILE *tmp = tmpfile();
	int saved = -1, r, e;

	captured[0] = '\0';
	fflush(stderr);
	if (tmp && (saved = dup(STDERR_FILENO)) >= 0 && dup2(fileno(tmp), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	setenv("HWLOC_XML_VERBOSE", "1", 1);
	errno = 0;
	r = hwloc_topology_set_xml(topo, path);
	e = errno;
	if (r == 0) {
		errno = 0;
		r = hwloc_topology_load(topo);
		e = errno;
	}
	if (old_env)
		setenv("HWLOC_XML_VERBOSE", old_env, 1);
	else
		unsetenv("HWLOC_XML_VERBOSE");
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
		rewind(tmp);
		size_t n = fread(captured, 1, caplen - 1, tmp);
		captured[n] = '\0';
		/* someone who asked hwloc to be verbose gets its output */
		if (old_env && n)
			fputs(captured, stderr);
	}
	if (tmp)
		fclose(tmp);
	free(old_env);
	*ret_errno = e;
	return r;
}

/* Load this machine (xml == NULL) or an XML file. 0, or 1 with a message printed. */
static int
load(const char *xml, hwloc_topology_t *ret)
{
	hwloc_topology_t topo;
	char captured[4096], reason[512];
	int r, e;

	if (hwloc_topology_init(&topo) < 0) {
		fprintf(stderr, CMD ": cannot initialise hwloc: %s\n", strerror(errno));
		return 1;
	}
	if ((r = rf_hwloc_set_filters(topo)) < 0) {
		fprintf(stderr, CMD ": cannot set hwloc I/O filters: %s\n", strerror(-r));
		goto fail;
	}
	if (!xml) {
		if (hwloc_topology_load(topo) < 0) {
			fprintf(stderr, CMD ": hwloc cannot discover this machine: %s\n",
				strerror(errno));
			goto fail;
		}
		*ret = topo;
		return 0;
	}
	FILE *f = fopen(xml, "rb");
	if (!f) {
		fprintf(stderr, CMD ": --xml: cannot open '%s': %s\n", xml, strerror(errno));
		goto fail;
	}
	fclose(f);
	if (load_xml_captured(topo, xml, captured, sizeof(captured), &e) < 0) {
		first_reason(captured, xml, reason, sizeof(reason));
		fprintf(stderr, CMD ": --xml: hwloc cannot load '%s': %s\n", xml,
			reason[0] ? reason
			: e       ? strerror(e)
				  : "unknown error");
		goto fail;
	}
	*ret = topo;
	return 0;
fail:
	hwloc_topology_destroy(topo);
	return 1;
}

/* Merge-patch the annotation onto the Node through the API (kubeconfig or in-cluster). Returns the
 * exit code: 0, 1 (the server refused or is unreachable), 2 (no usable configuration). */
static int
publish_annotation(const struct rf_config *cfg, const char *kubeconfig, const char *node,
		   const char *value)
{
	char err[1024], ua[64];
	struct rf_kube *k = NULL;
	struct rf_kube_conn *conn = NULL;
	int rc = 1;
	snprintf(ua, sizeof(ua), "railfit/%s (topology)", RF_VERSION);
	struct rf_kube_options ko = rf_kube_options_from_config(cfg, kubeconfig, ua);
	int r = rf_kube_new(&ko, &k, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, CMD ": --publish: %s\n", err);
		return r == -ENOMEM ? 1 : 2;
	}
	if (!(conn = rf_kube_conn_new(k))) {
		fprintf(stderr, CMD ": --publish: out of memory\n");
		goto out;
	}
	r = rf_kube_patch_node_annotation(conn, node, cfg->devices.topology_annotation, value, err,
					  sizeof(err));
	if (r < 0) {
		fprintf(stderr, CMD ": --publish: cannot annotate node %s at %s: %s\n", node,
			rf_kube_server(k), err);
		goto out;
	}
	fprintf(stderr, CMD ": annotated node %s (%s, %zu bytes)\n", node,
		cfg->devices.topology_annotation, strlen(value));
	rc = 0;
out:
	rf_kube_conn_free(conn);
	rf_kube_free(k);
	return rc;
}

int
rf_cmd_topology(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "xml", required_argument, NULL, 'x' },
		{ "output", required_argument, NULL, 'o' },
		{ "publish", no_argument, NULL, 'p' },
		{ "node", required_argument, NULL, 'n' },
		{ "config", required_argument, NULL, 'c' },
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		RF_LOG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static const char *const outputs[] = { "table", "json", "annotation", NULL };
	const char *xml = NULL, *out = NULL, *node = NULL, *config = NULL, *kubeconfig = NULL;
	bool publish = false;
	int c, r, rc;
	struct rf_config cfg = { 0 };
	hwloc_topology_t topo = NULL;
	struct rf_pcitree *tree = NULL;
	struct rf_pcitopo *t = NULL;
	char *value = NULL, *text = NULL, *source = NULL;
	json_t *doc = NULL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:v:h", opts, NULL)) != -1) {
		switch (c) {
		case RF_OPT_LOG_FORMAT:
		case 'v':
			if (rf_cmd_log_flag("topology", c, optarg))
				return 2;
			break;
		case 'x':
			xml = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			publish = true;
			break;
		case 'n':
			node = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'k':
			kubeconfig = optarg;
			break;
		case 'h':
			topology_usage(stdout);
			return 0;
		default:
			topology_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, CMD ": unexpected argument '%s'\n", argv[optind]);
		topology_usage(stderr);
		return 2;
	}
	if (out && rf_cmd_output_flag("topology", out, outputs))
		return 2;
	if (xml && !xml[0]) {
		fprintf(stderr, CMD ": --xml: expected a file name\n");
		return 2;
	}
	if (publish && (!node || !node[0])) {
		fprintf(stderr, CMD ": --publish needs --node N, the Node to annotate (in a "
				    "DaemonSet: spec.nodeName through the downward API)\n");
		return 2;
	}
	if (node && !publish) {
		fprintf(stderr, CMD ": --node is only used with --publish\n");
		return 2;
	}
	if (!out && !publish)
		out = "table";
	if ((rc = rf_load_config(config, &cfg)) != 0)
		return rc;

	rc = 1;
	if (load(xml, &topo) != 0)
		goto out;
	if ((r = rf_hwloc_import(topo, &tree)) < 0 ||
	    (r = rf_hwloc_import_nvlinks(topo, tree)) < 0 ||
	    (r = rf_pcitopo_compute(tree, &t)) < 0) {
		fprintf(stderr, CMD ": cannot build the PCI tree: %s\n", strerror(-r));
		goto out;
	}
	if ((out && strcmp(out, "annotation") == 0) || publish) {
		r = rf_topo_annotation_encode(t, &value);
		if (r == -EMSGSIZE) {
			fprintf(stderr,
				CMD ": the annotation for %zu GPUs and %zu NICs would exceed %d "
				    "bytes\n",
				t->n_gpus, t->n_nics, RF_TOPO_ANNOTATION_MAX_BYTES);
			goto out;
		} else if (r < 0) {
			fprintf(stderr, CMD ": cannot encode the annotation: %s\n", strerror(-r));
			goto out;
		}
	}
	if (out && strcmp(out, "table") == 0) {
		if (rf_pcitopo_table(t, &text) < 0)
			goto oom;
		fputs(text, stdout);
	} else if (out && strcmp(out, "json") == 0) {
		size_t sl = xml ? strlen(xml) + 5 : 0;
		if (xml && !(source = malloc(sl)))
			goto oom;
		if (xml)
			snprintf(source, sl, "xml:%s", xml);
		doc = rf_pcitopo_json(t, xml ? source : "hwloc");
		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			goto oom;
		fputc('\n', stdout);
	} else if (out) {
		printf("%s\n", value);
		for (size_t i = 0; i < t->n_notes; i++)
			fprintf(stderr, CMD ": note: %s\n", t->notes[i]);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, CMD ": cannot write the output: %s\n", strerror(errno));
		goto out;
	}
	if (publish && (rc = publish_annotation(&cfg, kubeconfig, node, value)) != 0)
		goto out;
	rc = 0;
	goto out;
oom:
	fprintf(stderr, CMD ": out of memory\n");
out:
	json_decref(doc);
	free(source);
	free(text);
	free(value);
	rf_pcitopo_free(t);
	rf_pcitree_free(tree);
	if (topo)
		hwloc_topology_destroy(topo);
	rf_config_release(&cfg);
	return rc;
}
