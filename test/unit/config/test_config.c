/* The configuration file (DESIGN section 8): defaults, both YAML styles, every kind of error,
 * to_json, copy and release; plus the locality level names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config/config.h"
#include "config/level.h"

Suite *config_suite(void);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int
parse(const char *yaml, struct rf_config *c, char *err, size_t errlen)
{
	return rf_config_parse_yaml(yaml, strlen(yaml), c, err, errlen);
}

static struct rf_quantity
qty(const char *s)
{
	struct rf_quantity q;
	ck_assert_int_eq(rf_quantity_parse(s, &q), 0);
	return q;
}

static void
assert_strv(const struct rf_strv *v, const char *const *want, size_t n)
{
	ck_assert_uint_eq(v->n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(v->v[i], want[i]);
}

static void
assert_defaults(const struct rf_config *c)
{
	static const char *const labels[] = { "railfit.io/group", "batch.kubernetes.io/job-name",
					      "training.kubeflow.org/job-name",
					      "scheduling.x-k8s.io/pod-group" };
	static const char *const gpu[] = { "gpu.nvidia.com" }, *const nic[] = { "dra.net" },
				 *const bw[] = { "bandwidth" };

	ck_assert_str_eq(c->server.listen, "0.0.0.0:8888");
	ck_assert_str_eq(c->server.debug_listen, "");
	ck_assert_int_eq(c->server.max_body_bytes, 128 * 1024 * 1024);
	ck_assert_int_eq(c->server.request_timeout_ms, 10000);
	ck_assert_int_eq(c->server.threads, 0);
	ck_assert_str_eq(c->server.tls.cert_file, "");
	ck_assert_str_eq(c->server.tls.key_file, "");
	ck_assert_str_eq(c->server.tls.client_ca_file, "");
	ck_assert(c->server.debug_endpoints);

	ck_assert_str_eq(c->kube.kubeconfig, "");
	ck_assert_double_eq(c->kube.qps, 50);
	ck_assert_int_eq(c->kube.stale_after_ms, 2 * 60 * 1000);
	ck_assert_int_eq(c->kube.assume_ttl_ms, 30 * 1000);
	ck_assert_int_eq(c->kube.watch_timeout_ms, 5 * 60 * 1000);
	ck_assert_int_eq(c->kube.dra_version, RF_DRA_AUTO);

	assert_strv(&c->devices.gpu_drivers, gpu, 1);
	assert_strv(&c->devices.nic_drivers, nic, 1);
	assert_strv(&c->devices.bandwidth_capacities, bw, 1);
	ck_assert_int_eq(rf_quantity_cmp(c->devices.default_nic_bandwidth, qty("400G")), 0);
	ck_assert_int_eq(rf_quantity_cmp(c->devices.frontend_bandwidth, qty("100G")), 0);
	ck_assert_str_eq(c->devices.rails, "gpu-pairing");
	ck_assert_str_eq(c->devices.topology_annotation, "railfit.io/pci-topology");

	ck_assert_int_eq(c->filter.min_alignment, RF_LEVEL_SYS);
	ck_assert_int_eq(c->filter.stale_after_ms, 10 * 60 * 1000);
	ck_assert_int_eq(c->filter.when_stale, RF_WHEN_STALE_PASS);
	ck_assert_int_eq(c->filter.when_not_ready, RF_WHEN_NOT_READY_ERROR_FOR_RAILFIT_PODS);

	ck_assert_double_eq(c->scoring.w_alignment, 5);
	ck_assert_double_eq(c->scoring.w_bandwidth, 3);
	ck_assert_double_eq(c->scoring.w_rail, 2);
	ck_assert_double_eq(c->scoring.w_packing, 1);
	ck_assert_int_eq(c->scoring.bandwidth_policy, RF_BW_SPREAD);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PIX], 1.0);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PXB], 0.85);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PHB], 0.7);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_NODE], 0.4);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_SYS], 0.1);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_UNKNOWN], 0.25);

	assert_strv(&c->groups.labels, labels, N(labels));
}

/* Compares two configurations through their JSON form (every key, secrets redacted). */
static void
assert_config_eq(const struct rf_config *a, const struct rf_config *b)
{
	json_t *ja = rf_config_to_json(a), *jb = rf_config_to_json(b);
	char *sa, *sb;

	ck_assert_ptr_nonnull(ja);
	ck_assert_ptr_nonnull(jb);
	sa = json_dumps(ja, JSON_COMPACT);
	sb = json_dumps(jb, JSON_COMPACT);
	ck_assert_msg(json_equal(ja, jb), "%s != %s", sa, sb);
	free(sa);
	free(sb);
	json_decref(ja);
	json_decref(jb);
}

START_TEST(test_config_defaults)
{
	struct rf_config c;

	rf_config_init(&c);
	assert_defaults(&c);
	rf_config_release(&c);
}
END_TEST

/* DESIGN section 8, verbatim. */
static const char design_snippet[] =
	"server:   {listen: \"0.0.0.0:8888\", debugListen: \"\", maxBodyBytes: 128Mi, requestTimeout: 10s,\n"
	"           threads: 0, tls: {certFile: \"\", keyFile: \"\", clientCAFile: \"\"}, debugEndpoints: true}\n"
	"kube:     {kubeconfig: \"\", qps: 50, staleAfter: 2m, assumeTTL: 30s, watchTimeout: 5m,\n"
	"           draVersion: auto}   # auto = from the API server's version (1.35 rules for a snapshot); or \"1.34\", \"1.35\"\n"
	"devices:  {gpuDrivers: [gpu.nvidia.com], nicDrivers: [dra.net], bandwidthCapacities: [bandwidth],\n"
	"           defaultNicBandwidth: 400G, frontendBandwidth: 100G, rails: gpu-pairing,\n"
	"           topologyAnnotation: railfit.io/pci-topology}\n"
	"filter:   {minAlignment: SYS, staleAfter: 10m, whenStale: pass, whenNotReady: error-for-railfit-pods}\n"
	"scoring:  {weights: {alignment: 5, bandwidth: 3, rail: 2, packing: 1}, bandwidthPolicy: spread,\n"
	"           levels: {PIX: 1.0, PXB: 0.85, PHB: 0.7, NODE: 0.4, SYS: 0.1, UNKNOWN: 0.25}}\n"
	"groups:   {labels: [railfit.io/group, batch.kubernetes.io/job-name, training.kubeflow.org/job-name,\n"
	"           scheduling.x-k8s.io/pod-group]}\n";

START_TEST(test_config_design_snippet)
{
	struct rf_config c;
	char err[512];

	memset(&c, 0, sizeof(c));
	ck_assert_msg(parse(design_snippet, &c, err, sizeof(err)) == 0, "%s", err);
	assert_defaults(&c);
	rf_config_release(&c);
}
END_TEST

/* The yaml block of DESIGN.md section 8 as shipped next to the repository, when it is there. */
START_TEST(test_config_design_file)
{
	const char *dir = getenv("RF_SHARED_DIR");
	char path[4096], *buf = NULL, *start, *end, err[512];
	struct rf_config c;
	FILE *f;
	long n;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/DESIGN.md", dir);
	f = fopen(path, "rb");
	if (!f)
		return;
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);

	start = strstr(buf, "## 8.");
	ck_assert_ptr_nonnull(start);
	start = strstr(start, "```yaml\n");
	ck_assert_ptr_nonnull(start);
	start += strlen("```yaml\n");
	end = strstr(start, "```");
	ck_assert_ptr_nonnull(end);

	memset(&c, 0, sizeof(c));
	ck_assert_msg(rf_config_parse_yaml(start, (size_t)(end - start), &c, err, sizeof(err)) == 0,
		      "%s", err);
	assert_defaults(&c);
	rf_config_release(&c);
	free(buf);
}
END_TEST

static const char *const empty_docs[] = {
	"",
	"\n\n",
	"# nothing but a comment\n",
	"{}",
	"---\n",
	"---\n...\n",
	"~\n",
	"null",
	"server:\n",
	"server: {}\nkube: ~\ndevices:\nfilter: {}\nscoring: {weights: {}, levels: ~}\ngroups: {}\n",
	"server:\n  listen:\n  tls:\n    keyFile: ~\n",
	"devices: {gpuDrivers: ~}\n",
	"\xef\xbb\xbf{}\n", /* UTF-8 byte order mark */
};

START_TEST(test_config_empty_is_defaults)
{
	struct rf_config c;
	char err[512];

	memset(&c, 0, sizeof(c));
	ck_assert_msg(parse(empty_docs[_i], &c, err, sizeof(err)) == 0, "'%s': %s", empty_docs[_i],
		      err);
	assert_defaults(&c);
	rf_config_release(&c);
}
END_TEST

START_TEST(test_config_null_buffer)
{
	struct rf_config c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(rf_config_parse_yaml(NULL, 0, &c, NULL, 0), 0);
	assert_defaults(&c);
	rf_config_release(&c);
}
END_TEST

/* Every key away from its default, block style, with comments and several scalar styles. */
static const char full_block[] = "# railfit configuration\n"
				 "server:\n"
				 "  listen: \"127.0.0.1:9000\"   # double-quoted\n"
				 "  debugListen: '127.0.0.1:9001' # single-quoted\n"
				 "  maxBodyBytes: 64Mi\n"
				 "  requestTimeout: 1m30s\n"
				 "  threads: 8\n"
				 "  tls:\n"
				 "    certFile: /etc/railfit/tls.crt\n"
				 "    keyFile: /etc/railfit/tls.key\n"
				 "    clientCAFile: /etc/railfit/ca.crt\n"
				 "  debugEndpoints: false\n"
				 "kube:\n"
				 "  kubeconfig: /root/.kube/config\n"
				 "  qps: 12.5\n"
				 "  staleAfter: 45s\n"
				 "  assumeTTL: 0\n"
				 "  watchTimeout: 1h\n"
				 "  draVersion: 1.34\n"
				 "devices:\n"
				 "  gpuDrivers:\n"
				 "    - gpu.nvidia.com\n"
				 "    - gpu.amd.com\n"
				 "  nicDrivers: [dra.net, sriovnetwork.k8s.io]\n"
				 "  bandwidthCapacities: []\n"
				 "  defaultNicBandwidth: 48828125Ki\n"
				 "  frontendBandwidth: \"25G\"\n"
				 "  rails: attribute:example.com/rail\n"
				 "  topologyAnnotation: example.com/topology\n"
				 "filter:\n"
				 "  minAlignment: PHB\n"
				 "  staleAfter: 250ms\n"
				 "  whenStale: fail\n"
				 "  whenNotReady: error\n"
				 "scoring:\n"
				 "  weights:\n"
				 "    alignment: 0\n"
				 "    bandwidth: 1.5\n"
				 "    rail: 0\n"
				 "    packing: 1e1\n"
				 "  bandwidthPolicy: binpack\n"
				 "  levels:\n"
				 "    PIX: 1\n"
				 "    PXB: .9\n"
				 "    PHB: 0.5\n"
				 "    NODE: 0.3\n"
				 "    SYS: 0\n"
				 "    UNKNOWN: 0.05\n"
				 "groups:\n"
				 "  labels: [example.com/team]\n";

static void
assert_full(const struct rf_config *c)
{
	static const char *const gpu[] = { "gpu.nvidia.com", "gpu.amd.com" };
	static const char *const nic[] = { "dra.net", "sriovnetwork.k8s.io" };
	static const char *const labels[] = { "example.com/team" };

	ck_assert_str_eq(c->server.listen, "127.0.0.1:9000");
	ck_assert_str_eq(c->server.debug_listen, "127.0.0.1:9001");
	ck_assert_int_eq(c->server.max_body_bytes, 64 * 1024 * 1024);
	ck_assert_int_eq(c->server.request_timeout_ms, 90000);
	ck_assert_int_eq(c->server.threads, 8);
	ck_assert_str_eq(c->server.tls.cert_file, "/etc/railfit/tls.crt");
	ck_assert_str_eq(c->server.tls.key_file, "/etc/railfit/tls.key");
	ck_assert_str_eq(c->server.tls.client_ca_file, "/etc/railfit/ca.crt");
	ck_assert(!c->server.debug_endpoints);
	ck_assert_str_eq(c->kube.kubeconfig, "/root/.kube/config");
	ck_assert_double_eq(c->kube.qps, 12.5);
	ck_assert_int_eq(c->kube.stale_after_ms, 45000);
	ck_assert_int_eq(c->kube.assume_ttl_ms, 0);
	ck_assert_int_eq(c->kube.watch_timeout_ms, 3600000);
	ck_assert_int_eq(c->kube.dra_version, RF_DRA_1_34);
	assert_strv(&c->devices.gpu_drivers, gpu, 2);
	assert_strv(&c->devices.nic_drivers, nic, 2);
	ck_assert_uint_eq(c->devices.bandwidth_capacities.n, 0);
	ck_assert_int_eq(rf_quantity_cmp(c->devices.default_nic_bandwidth, qty("50G")), 0);
	ck_assert_int_eq(rf_quantity_cmp(c->devices.frontend_bandwidth, qty("25G")), 0);
	ck_assert_str_eq(c->devices.rails, "attribute:example.com/rail");
	ck_assert_str_eq(c->devices.topology_annotation, "example.com/topology");
	ck_assert_int_eq(c->filter.min_alignment, RF_LEVEL_PHB);
	ck_assert_int_eq(c->filter.stale_after_ms, 250);
	ck_assert_int_eq(c->filter.when_stale, RF_WHEN_STALE_FAIL);
	ck_assert_int_eq(c->filter.when_not_ready, RF_WHEN_NOT_READY_ERROR);
	ck_assert_double_eq(c->scoring.w_alignment, 0);
	ck_assert_double_eq(c->scoring.w_bandwidth, 1.5);
	ck_assert_double_eq(c->scoring.w_rail, 0);
	ck_assert_double_eq(c->scoring.w_packing, 10);
	ck_assert_int_eq(c->scoring.bandwidth_policy, RF_BW_BINPACK);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PIX], 1);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PXB], 0.9);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_PHB], 0.5);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_NODE], 0.3);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_SYS], 0);
	ck_assert_double_eq(c->scoring.levels[RF_LEVEL_UNKNOWN], 0.05);
	assert_strv(&c->groups.labels, labels, 1);
}

START_TEST(test_config_full_block)
{
	struct rf_config c;
	char err[512];

	rf_config_init(&c);
	ck_assert_msg(parse(full_block, &c, err, sizeof(err)) == 0, "%s", err);
	assert_full(&c);
	rf_config_release(&c);
}
END_TEST

/* The same document in flow style, keys in another order, all on few lines. */
START_TEST(test_config_full_flow)
{
	static const char flow[] =
		"{groups: {labels: [example.com/team]},\n"
		" scoring: {levels: {UNKNOWN: 0.05, SYS: 0, NODE: 0.3, PHB: 0.5, PXB: 0.9, PIX: 1},\n"
		"   bandwidthPolicy: binpack, weights: {packing: 1e1, rail: 0, bandwidth: 1.5, alignment: 0}},\n"
		" filter: {whenNotReady: error, whenStale: fail, staleAfter: 250ms, minAlignment: PHB},\n"
		" devices: {topologyAnnotation: example.com/topology, rails: \"attribute:example.com/rail\",\n"
		"   frontendBandwidth: 25G, defaultNicBandwidth: 48828125Ki, bandwidthCapacities: [],\n"
		"   nicDrivers: [dra.net, sriovnetwork.k8s.io], gpuDrivers: [gpu.nvidia.com, gpu.amd.com]},\n"
		" kube: {draVersion: \"1.34\", watchTimeout: 60m, assumeTTL: 0s, staleAfter: 45000ms,\n"
		"   qps: 12.5, kubeconfig: /root/.kube/config},\n"
		" server: {debugEndpoints: False, tls: {clientCAFile: /etc/railfit/ca.crt,\n"
		"   keyFile: /etc/railfit/tls.key, certFile: /etc/railfit/tls.crt}, threads: \"8\",\n"
		"   requestTimeout: 90s, maxBodyBytes: 67108864, debugListen: '127.0.0.1:9001',\n"
		"   listen: 127.0.0.1:9000}}\n";
	struct rf_config c;
	char err[512];

	rf_config_init(&c);
	ck_assert_msg(parse(flow, &c, err, sizeof(err)) == 0, "%s", err);
	assert_full(&c);
	rf_config_release(&c);
}
END_TEST

/* kube.draVersion with patch levels round-trips through /debug/config's JSON; /version
 * gitVersions choose the rules (a newer server: the newest, flagged). */
/* kube.featureGates.DRAListTypeAttributes: parsed, shown, and what it does per version
 * (reference/dra-allocator-1.36.md 1.2, 3.9) */
START_TEST(test_config_feature_gates)
{
	static const char yaml[] = "kube:\n  featureGates:\n    DRAListTypeAttributes: true\n";
	struct rf_config c;
	char err[256];
	rf_config_init(&c);
	ck_assert(!c.kube.gates.list_type_attributes);
	ck_assert_int_eq(rf_config_parse_yaml(yaml, strlen(yaml), &c, err, sizeof(err)), 0);
	ck_assert(c.kube.gates.list_type_attributes);
	json_t *j = rf_config_to_json(&c);
	ck_assert(json_is_true(
		json_object_get(json_object_get(json_object_get(j, "kube"), "featureGates"),
				"DRAListTypeAttributes")));
	json_decref(j);
	rf_config_release(&c);

	/* with a version that has no such gate it would change nothing: refused */
	static const char older[] = "kube:\n  draVersion: \"1.35\"\n  featureGates:\n"
				    "    DRAListTypeAttributes: true\n";
	rf_config_init(&c);
	ck_assert_int_eq(rf_config_parse_yaml(older, strlen(older), &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "kube.featureGates.DRAListTypeAttributes: the gate exists from "
				  "Kubernetes 1.36"),
		      "%s", err);
	rf_config_release(&c);

	static const struct {
		enum rf_dra_version v;
		bool gate, library, cel, sets;
	} rules[] = {
		/* the gate does not exist before 1.36 */
		{ RF_DRA_1_34, true, false, false, false },
		{ RF_DRA_1_35, true, true, false, false },
		/* 1.36: CEL gets the gate, AllocatorFeatures() does not (#139332 is 1.37) */
		{ RF_DRA_1_36, false, false, false, false },
		{ RF_DRA_1_36, true, false, true, false },
		{ RF_DRA_1_36, false, true, true, true },
		/* 1.37: CEL always reads lists (5afedd9); the gate selects the set semantics */
		{ RF_DRA_1_37, false, false, true, false },
		{ RF_DRA_1_37, true, false, true, true },
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct rf_dra_list_rules r =
			rf_dra_list_rules(rules[i].v, rules[i].gate, rules[i].library);
		ck_assert_msg(r.cel == rules[i].cel && r.sets == rules[i].sets, "row %zu", i);
	}
}
END_TEST

START_TEST(test_config_dra_versions)
{
	static const struct {
		const char *yaml, *json;
		int dra, patch;
	} cases[] = {
		{ "kube: {draVersion: 1.36.2}", "1.36.2", RF_DRA_1_36, 2 },
		{ "kube: {draVersion: 1.36.0}", "1.36.0", RF_DRA_1_36, 0 },
		{ "kube: {draVersion: 1.37}", "1.37", RF_DRA_1_37, RF_DRA_PATCH_NEWEST },
		{ "kube: {draVersion: 1.35.10}", "1.35.10", RF_DRA_1_35, 10 },
		{ "kube: {}", "auto", RF_DRA_AUTO, RF_DRA_PATCH_NEWEST },
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct rf_config c;
		char err[512];
		rf_config_init(&c);
		ck_assert_msg(parse(cases[i].yaml, &c, err, sizeof(err)) == 0, "'%s': %s",
			      cases[i].yaml, err);
		ck_assert_int_eq(c.kube.dra_version, cases[i].dra);
		ck_assert_int_eq(c.kube.dra_patch, cases[i].patch);
		json_t *j = rf_config_to_json(&c);
		ck_assert_str_eq(json_string_value(
					 json_object_get(json_object_get(j, "kube"), "draVersion")),
				 cases[i].json);
		json_decref(j);
		rf_config_release(&c);
	}
	static const struct {
		const char *git;
		int r, dra, patch;
		bool newer;
	} gits[] = {
		{ "v1.36.1", 0, RF_DRA_1_36, 1, false },
		{ "v1.36.2-gke.1100", 0, RF_DRA_1_36, 2, false },
		{ "v1.37.0-alpha.2", 0, RF_DRA_1_37, 0, false },
		{ "v1.35.0", 0, RF_DRA_1_35, 0, false },
		{ "v1.34.9+k3s1", 0, RF_DRA_1_34, 9, false },
		{ "v1.31.4", 0, RF_DRA_1_34, RF_DRA_PATCH_NEWEST, false },
		{ "v1.38.0", 0, RF_DRA_1_37, RF_DRA_PATCH_NEWEST, true },
		{ "1.40", 0, RF_DRA_1_37, RF_DRA_PATCH_NEWEST, true },
		{ "v2.0.0", -EINVAL, 0, 0, false },
		{ "v1.x", -EINVAL, 0, 0, false },
		{ "", -EINVAL, 0, 0, false },
		{ "v1.36.1junk", -EINVAL, 0, 0, false },
	};
	for (size_t i = 0; i < N(gits); i++) {
		enum rf_dra_version v = RF_DRA_AUTO;
		int patch = -7;
		bool newer = false;
		int r = rf_dra_version_from_git(gits[i].git, &v, &patch, &newer);
		ck_assert_msg(r == gits[i].r, "%s: %d", gits[i].git, r);
		if (r < 0)
			continue;
		ck_assert_msg((int)v == gits[i].dra && patch == gits[i].patch &&
				      newer == gits[i].newer,
			      "%s: %d %d %d", gits[i].git, v, patch, newer);
	}
}
END_TEST

START_TEST(test_config_scalar_forms)
{
	static const struct {
		const char *yaml;
		int dra;
		int threads;
	} cases[] = {
		{ "kube: {draVersion: 1.35}", RF_DRA_1_35, 0 },
		{ "kube: {draVersion: '1.35'}", RF_DRA_1_35, 0 },
		{ "kube: {draVersion: \"auto\"}", RF_DRA_AUTO, 0 },
		{ "kube:\n  draVersion: |-\n    1.34\n", RF_DRA_1_34, 0 },
		{ "kube: {draVersion: 1.36}", RF_DRA_1_36, 0 },
		{ "kube: {draVersion: '1.37'}", RF_DRA_1_37, 0 },
		{ "kube: {draVersion: 1.36.2}", RF_DRA_1_36, 0 },
		{ "kube: {draVersion: 1.36.0}", RF_DRA_1_36, 0 },
		{ "server: {threads: 1024}", RF_DRA_AUTO, 1024 },
		{ "server: {threads: +3}", RF_DRA_AUTO, 3 },
		{ "server: {threads: \"12\"}", RF_DRA_AUTO, 12 },
		{ "server: {threads: !!int 7}", RF_DRA_AUTO, 7 },
		{ "server: &anchor {threads: 5}", RF_DRA_AUTO, 5 }, /* anchors alone are fine */
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct rf_config c;
		char err[512];
		rf_config_init(&c);
		ck_assert_msg(parse(cases[i].yaml, &c, err, sizeof(err)) == 0, "'%s': %s",
			      cases[i].yaml, err);
		ck_assert_int_eq(c.kube.dra_version, cases[i].dra);
		ck_assert_int_eq(c.server.threads, cases[i].threads);
		rf_config_release(&c);
	}
}
END_TEST

START_TEST(test_config_valid_values)
{
	static const char *const docs[] = {
		"devices: {rails: attribute:rail}",
		"devices: {rails: attribute:example.com/rail_index}",
		"devices: {rails: attribute:a.b-c.io/ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcde}", /* 32 chars
											  */
		"devices: {bandwidthCapacities: [bandwidth, example.com/bw]}",
		"devices: {topologyAnnotation: topology}",
		"groups: {labels: []}",
		"groups: {labels: [app.kubernetes.io/part-of, team, a/b_c.d-e]}",
		"server: {listen: \":8888\", debugListen: \"[::1]:9000\"}",
		"server: {listen: localhost:0}",
		"server: {maxBodyBytes: 1Ki}",
		"server: {maxBodyBytes: 1Gi}",
		"server: {maxBodyBytes: 1.5Ki}",
		"server: {requestTimeout: 1ms}",
		"kube: {qps: 0.001}",
		"kube: {assumeTTL: 0}",
		"scoring: {weights: {alignment: 0, bandwidth: 0, rail: 0, packing: 0.001}}",
		"scoring: {levels: {PIX: 0, PXB: 1, UNKNOWN: 1.0e0}}",
		"filter: {minAlignment: PIX}",
		"filter: {minAlignment: NODE}",
		"filter: {whenNotReady: pass}",
		"server: {debugEndpoints: TRUE}",
		"server: {tls: {certFile: c.pem, keyFile: k.pem}}",
	};
	for (size_t i = 0; i < N(docs); i++) {
		struct rf_config c;
		char err[512];
		rf_config_init(&c);
		ck_assert_msg(parse(docs[i], &c, err, sizeof(err)) == 0, "'%s': %s", docs[i], err);
		rf_config_release(&c);
	}
}
END_TEST

struct error_case {
	const char *yaml;
	const char *message; /* exact */
};

static const struct error_case errors[] = {
	/* the examples of the contract */
	{ "scoring: {weights: {alignment: high}}",
	  "scoring.weights.alignment: expected a number >= 0, got \"high\"" },
	{ "server: {maxBodyBytes: 64Mi, maxBufferedBytes: 32Mi}",
	  "server.maxBufferedBytes: expected at least server.maxBodyBytes (67108864), got "
	  "33554432" },
	{ "server: {maxConnectionsPerAddress: 0}",
	  "server.maxConnectionsPerAddress: expected an integer between 1 and 1024, got \"0\"" },
	{ "server: {probeListen: nowhere}",
	  "server.probeListen: expected an address such as 0.0.0.0:8890, or \"\", got "
	  "\"nowhere\"" },
	{ "server: {maxBodyBytes: lots}",
	  "server.maxBodyBytes: expected a Kubernetes quantity such as 128Mi, got \"lots\"" },
	{ "filter: {minAlignment: FOO}",
	  "filter.minAlignment: expected one of PIX, PXB, PHB, NODE, SYS, got \"FOO\"" },
	{ "filter: {minAligment: PIX}",
	  "filter.minAligment: unknown key (expected one of minAlignment, staleAfter, whenStale, "
	  "whenNotReady)" },
	/* strings */
	{ "server: {listen: [a]}",
	  "server.listen: expected an address such as 0.0.0.0:8888, got a list" },
	{ "server: {listen: \"\"}",
	  "server.listen: expected an address such as 0.0.0.0:8888, got \"\"" },
	{ "server: {listen: 8888}",
	  "server.listen: expected an address such as 0.0.0.0:8888, got \"8888\"" },
	{ "server: {listen: \"0.0.0.0:99999\"}",
	  "server.listen: expected an address such as 0.0.0.0:8888, got \"0.0.0.0:99999\"" },
	{ "server: {debugListen: \"x\"}",
	  "server.debugListen: expected an address such as 127.0.0.1:8889, or \"\", got \"x\"" },
	{ "kube: {kubeconfig: {a: b}}", "kube.kubeconfig: expected a string, got a mapping" },
	{ "kube: {kubeconfig: \"a\\0b\"}", "kube.kubeconfig: expected a string, got \"a\\x00b\"" },
	/* booleans */
	{ "server: {debugEndpoints: yes}",
	  "server.debugEndpoints: expected true or false, got \"yes\"" },
	{ "server: {debugEndpoints: 1}",
	  "server.debugEndpoints: expected true or false, got \"1\"" },
	/* integers */
	{ "server: {threads: 1025}",
	  "server.threads: expected an integer between 0 and 1024, got \"1025\"" },
	{ "server: {threads: -1}",
	  "server.threads: expected an integer between 0 and 1024, got \"-1\"" },
	{ "server: {threads: 1.5}",
	  "server.threads: expected an integer between 0 and 1024, got \"1.5\"" },
	{ "server: {threads: 0x10}",
	  "server.threads: expected an integer between 0 and 1024, got \"0x10\"" },
	{ "server: {threads: 99999999999999999999}",
	  "server.threads: expected an integer between 0 and 1024, got \"99999999999999999999\"" },
	{ "server: {threads: auto}",
	  "server.threads: expected an integer between 0 and 1024, got \"auto\"" },
	/* numbers */
	{ "kube: {qps: 0}", "kube.qps: expected a number > 0, got \"0\"" },
	{ "kube: {qps: -5}", "kube.qps: expected a number > 0, got \"-5\"" },
	{ "kube: {qps: .inf}", "kube.qps: expected a number > 0, got \".inf\"" },
	{ "kube: {qps: 1e999}", "kube.qps: expected a number > 0, got \"1e999\"" },
	{ "kube: {qps: nan}", "kube.qps: expected a number > 0, got \"nan\"" },
	{ "kube: {qps: 0x10}", "kube.qps: expected a number > 0, got \"0x10\"" },
	{ "kube: {qps: [1]}", "kube.qps: expected a number > 0, got a list" },
	{ "scoring: {weights: {rail: -1}}",
	  "scoring.weights.rail: expected a number >= 0, got \"-1\"" },
	{ "scoring: {levels: {PIX: 1.5}}",
	  "scoring.levels.PIX: expected a number between 0 and 1, got \"1.5\"" },
	{ "scoring: {levels: {SYS: -0.1}}",
	  "scoring.levels.SYS: expected a number between 0 and 1, got \"-0.1\"" },
	{ "scoring: {levels: {UNKNOWN: high}}",
	  "scoring.levels.UNKNOWN: expected a number between 0 and 1, got \"high\"" },
	{ "scoring: {weights: {alignment: 0, bandwidth: 0, rail: 0, packing: 0}}",
	  "scoring.weights: expected at least one weight > 0, got all zero" },
	/* quantities */
	{ "server: {maxBodyBytes: 512}",
	  "server.maxBodyBytes: expected a quantity between 1Ki and 1Gi, got \"512\"" },
	{ "server: {maxBodyBytes: 2Gi}",
	  "server.maxBodyBytes: expected a quantity between 1Ki and 1Gi, got \"2Gi\"" },
	{ "server: {maxBodyBytes: 2E}",
	  "server.maxBodyBytes: expected a quantity between 1Ki and 1Gi, got \"2E\"" },
	{ "server: {maxBodyBytes: 10 Mi}",
	  "server.maxBodyBytes: expected a Kubernetes quantity such as 128Mi, got \"10 Mi\"" },
	{ "devices: {defaultNicBandwidth: 0}",
	  "devices.defaultNicBandwidth: expected a Kubernetes quantity > 0 such as 400G, got \"0\"" },
	{ "devices: {defaultNicBandwidth: -1G}",
	  "devices.defaultNicBandwidth: expected a Kubernetes quantity > 0 such as 400G, got \"-1G\"" },
	{ "devices: {frontendBandwidth: 100Gb}",
	  "devices.frontendBandwidth: expected a Kubernetes quantity > 0 such as 100G, got \"100Gb\"" },
	/* durations */
	{ "server: {requestTimeout: 0}",
	  "server.requestTimeout: expected a duration > 0 such as 10s, got \"0\"" },
	{ "server: {requestTimeout: 10}",
	  "server.requestTimeout: expected a duration > 0 such as 10s, got \"10\"" },
	{ "kube: {staleAfter: -1s}",
	  "kube.staleAfter: expected a duration > 0 such as 2m, got \"-1s\"" },
	{ "kube: {watchTimeout: 1d}",
	  "kube.watchTimeout: expected a duration > 0 such as 5m, got \"1d\"" },
	{ "kube: {assumeTTL: forever}",
	  "kube.assumeTTL: expected a duration such as 30s, got \"forever\"" },
	{ "filter: {staleAfter: 99999999999h}",
	  "filter.staleAfter: expected a duration > 0 such as 10m, got \"99999999999h\"" },
	/* enums */
	{ "kube: {draVersion: '1.33'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.33\"" },
	{ "kube: {draVersion: '1.340'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.340\"" },
	{ "kube: {draVersion: '1.38'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.38\"" },
	{ "kube: {draVersion: '1.36.'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.36.\"" },
	{ "kube: {draVersion: '1.36.02'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.36.02\"" },
	{ "kube: {draVersion: '1.36.1000'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.36.1000\"" },
	{ "kube: {draVersion: '1.36.2.1'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.36.2.1\"" },
	{ "kube: {draVersion: '1.36-rc'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"1.36-rc\"" },
	{ "kube: {draVersion: 'v1.36'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \"v1.36\"" },
	{ "kube: {draVersion: ' 1.36'}",
	  "kube.draVersion: expected auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as 1.36.2, got \" 1.36\"" },
	{ "filter: {whenStale: maybe}",
	  "filter.whenStale: expected one of pass, fail, got \"maybe\"" },
	{ "filter: {whenNotReady: no}",
	  "filter.whenNotReady: expected one of error-for-railfit-pods, pass, error, got \"no\"" },
	{ "scoring: {bandwidthPolicy: pack}",
	  "scoring.bandwidthPolicy: expected one of spread, binpack, got \"pack\"" },
	{ "filter: {minAlignment: UNKNOWN}",
	  "filter.minAlignment: expected one of PIX, PXB, PHB, NODE, SYS, got \"UNKNOWN\"" },
	{ "filter: {minAlignment: pix}",
	  "filter.minAlignment: expected one of PIX, PXB, PHB, NODE, SYS, got \"pix\"" },
	/* lists */
	{ "devices: {gpuDrivers: gpu.nvidia.com}",
	  "devices.gpuDrivers: expected a list of strings, got \"gpu.nvidia.com\"" },
	{ "devices: {gpuDrivers: {a: b}}",
	  "devices.gpuDrivers: expected a list of strings, got a mapping" },
	{ "devices: {gpuDrivers: [\"\"]}",
	  "devices.gpuDrivers[0]: expected a driver name such as gpu.nvidia.com, got \"\"" },
	{ "devices: {nicDrivers: [dra.net, Bad_Name]}",
	  "devices.nicDrivers[1]: expected a driver name such as dra.net, got \"Bad_Name\"" },
	{ "devices: {bandwidthCapacities: [1bw]}",
	  "devices.bandwidthCapacities[0]: expected a capacity name such as bandwidth, got \"1bw\"" },
	{ "groups: {labels: [~]}",
	  "groups.labels[0]: expected a label key such as railfit.io/group, got null" },
	{ "groups: {labels: [[a]]}",
	  "groups.labels[0]: expected a label key such as railfit.io/group, got a list" },
	{ "groups: {labels: [a, {b: c}]}",
	  "groups.labels[1]: expected a label key such as railfit.io/group, got a mapping" },
	{ "groups: {labels: [\"bad key\"]}",
	  "groups.labels[0]: expected a label key such as railfit.io/group, got \"bad key\"" },
	{ "groups: {labels: [-team]}",
	  "groups.labels[0]: expected a label key such as railfit.io/group, got \"-team\"" },
	/* rails and the annotation key */
	{ "devices: {rails: foo}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got \"foo\"" },
	{ "devices: {rails: \"attribute:\"}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got \"attribute:\"" },
	{ "devices: {rails: attribute:1rail}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got \"attribute:1rail\"" },
	{ "devices: {rails: attribute:a-b}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got \"attribute:a-b\"" },
	{ "devices: {rails: attribute:Example.com/rail}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got "
	  "\"attribute:Example.com/rail\"" },
	{ "devices: {rails: attribute:ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdef}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got "
	  "\"attribute:ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdef\"" },
	{ "devices: {rails: \"\"}",
	  "devices.rails: expected gpu-pairing or attribute:<qualified name>, got \"\"" },
	{ "devices: {topologyAnnotation: \"railfit.io/\"}",
	  "devices.topologyAnnotation: expected an annotation key such as railfit.io/pci-topology, "
	  "got \"railfit.io/\"" },
	/* groups that are not mappings */
	{ "server: 5",
	  "server: expected a mapping with keys listen, debugListen, maxBodyBytes, maxBufferedBytes, maxConnectionsPerAddress, probeListen, requestTimeout, "
	  "threads, tls, debugEndpoints, debugTokenFile, got \"5\"" },
	{ "server: {tls: [a]}",
	  "server.tls: expected a mapping with keys certFile, keyFile, clientCAFile, got a list" },
	{ "scoring: {levels: PIX}",
	  "scoring.levels: expected a mapping with keys PIX, PXB, PHB, NODE, SYS, UNKNOWN, NVL, got "
	  "\"PIX\"" },
	{ "[server]",
	  "configuration: expected a mapping with keys server, kube, devices, filter, scoring, groups, "
	  "bind, got a list" },
	{ "railfit",
	  "configuration: expected a mapping with keys server, kube, devices, filter, scoring, groups, "
	  "bind, got \"railfit\"" },
	/* unknown keys at every level */
	{ "srever: {}",
	  "srever: unknown key (expected one of server, kube, devices, filter, scoring, groups, bind)" },
	{ "server: {port: 8888}",
	  "server.port: unknown key (expected one of listen, debugListen, maxBodyBytes, "
	  "maxBufferedBytes, maxConnectionsPerAddress, probeListen, requestTimeout, threads, tls, debugEndpoints, debugTokenFile)" },
	{ "server: {tls: {caFile: x}}",
	  "server.tls.caFile: unknown key (expected one of certFile, keyFile, clientCAFile)" },
	{ "kube: {QPS: 5}",
	  "kube.QPS: unknown key (expected one of kubeconfig, qps, staleAfter, assumeTTL, "
	  "watchTimeout, draVersion, featureGates)" },
	/* kube.featureGates: the gates that change the pick for the same objects, by name */
	{ "kube: {featureGates: {DRAConsumableCapacity: true}}",
	  "kube.featureGates.DRAConsumableCapacity: unknown key (expected one of "
	  "DRAListTypeAttributes)" },
	{ "kube: {featureGates: {DRAListTypeAttributes: on}}",
	  "kube.featureGates.DRAListTypeAttributes: expected true or false, got \"on\"" },
	{ "kube: {featureGates: [DRAListTypeAttributes]}",
	  "kube.featureGates: expected a mapping with keys DRAListTypeAttributes, got a list" },
	{ "devices: {gpu_drivers: []}",
	  "devices.gpu_drivers: unknown key (expected one of gpuDrivers, nicDrivers, cpuDrivers, "
	  "bandwidthCapacities, defaultNicBandwidth, frontendBandwidth, rails, topologyAnnotation)" },
	{ "scoring: {weight: {}}",
	  "scoring.weight: unknown key (expected one of weights, bandwidthPolicy, levels)" },
	{ "scoring: {weights: {nvlink: 1}}",
	  "scoring.weights.nvlink: unknown key (expected one of alignment, bandwidth, rail, packing, "
	  "gpu, locality, cpu)" },
	{ "scoring: {levels: {NV1: 1}}",
	  "scoring.levels.NV1: unknown key (expected one of PIX, PXB, PHB, NODE, SYS, UNKNOWN, NVL)" },
	{ "groups: {annotations: []}",
	  "groups.annotations: unknown key (expected one of labels, blockLabels, spineLabels)" },
	{ "server: {Listen: x}",
	  "server.Listen: unknown key (expected one of listen, debugListen, maxBodyBytes, "
	  "maxBufferedBytes, maxConnectionsPerAddress, probeListen, requestTimeout, threads, tls, debugEndpoints, debugTokenFile)" },
	{ "server: {\"a\\tb\": x}",
	  "server.a\\x09b: unknown key (expected one of listen, debugListen, maxBodyBytes, "
	  "maxBufferedBytes, maxConnectionsPerAddress, probeListen, requestTimeout, threads, tls, debugEndpoints, debugTokenFile)" },
	{ "groups: {0123456789012345678901234567890123456789012345678901234567890123456789: 1}",
	  "groups.0123456789012345678901234567890123456789012345678901234567890123...: unknown key "
	  "(expected one of labels, blockLabels, spineLabels)" },
	{ "{[a]: 1}", "configuration: expected a string as mapping key, got a list" },
	{ "server: {? {a: b} : c}", "server: expected a string as mapping key, got a mapping" },
	/* duplicates */
	{ "server: {}\nserver: {}", "server: duplicate key" },
	{ "server: {threads: 1, threads: 2}", "server.threads: duplicate key" },
	{ "scoring:\n  levels:\n    PIX: 1\n    PIX: 1\n", "scoring.levels.PIX: duplicate key" },
	{ "server: {tls: {}, tls: {}}", "server.tls: duplicate key" },
	/* aliases */
	{ "server: &s {threads: 2}\nkube: *s", "kube: YAML aliases are not supported" },
	{ "server: {threads: &n 2, listen: *n}", "server.listen: YAML aliases are not supported" },
	{ "devices: {gpuDrivers: [&d a.b, *d]}",
	  "devices.gpuDrivers: YAML aliases are not supported" },
	{ "server: {*k : 1}", "server: YAML aliases are not supported" },
	/* cross-key checks */
	{ "server: {tls: {certFile: c.pem}}",
	  "server.tls: expected certFile and keyFile together, got only certFile" },
	{ "server: {tls: {keyFile: k.pem}}",
	  "server.tls: expected certFile and keyFile together, got only keyFile" },
	{ "server: {tls: {clientCAFile: ca.pem}}",
	  "server.tls.clientCAFile: expected certFile and keyFile to be set too" },
	/* documents */
	{ "server: {}\n---\nkube: {}\n", "configuration: expected one YAML document, got several" },
	{ "server: {listen: \"0.0.0.0:8888\"\n", "yaml: line 2 column 1: did not find expected ',' "
						 "or '}' while parsing a flow mapping (line 1)" },
	{ "server:\n  listen: \"x:1\"\n threads: 1\n",
	  "yaml: line 3 column 2: did not find expected key while parsing a block mapping (line 1)" },
	{ "server:\n\tthreads: 1\n",
	  "yaml: line 2 column 1: found character that cannot start any token while scanning for "
	  "the next token (line 2)" },
	{ "a: \xff\n", "yaml: invalid leading UTF-8 octet at byte 3" },
};

START_TEST(test_config_errors)
{
	const struct error_case *c = &errors[_i];
	struct rf_config cfg;
	char err[1024] = "untouched";
	int r;

	rf_config_init(&cfg);
	r = parse(c->yaml, &cfg, err, sizeof(err));
	ck_assert_msg(r == -EINVAL, "'%s': returned %d (%s)", c->yaml, r, err);
	ck_assert_msg(strcmp(err, c->message) == 0, "'%s': got '%s', want '%s'", c->yaml, err,
		      c->message);
	assert_defaults(&cfg); /* untouched */
	rf_config_release(&cfg);
}
END_TEST

START_TEST(test_config_error_buffers)
{
	struct rf_config c;
	char small[12];

	rf_config_init(&c);
	ck_assert_int_eq(parse("server: {threads: x}", &c, NULL, 0), -EINVAL);
	ck_assert_int_eq(parse("server: {threads: x}", &c, small, 0), -EINVAL);
	ck_assert_int_eq(parse("server: {threads: x}", &c, small, sizeof(small)), -EINVAL);
	ck_assert_str_eq(small, "server.thre");
	/* the message of a success is empty */
	ck_assert_int_eq(parse("{}", &c, small, sizeof(small)), 0);
	ck_assert_str_eq(small, "");
	rf_config_release(&c);
}
END_TEST

/* A failed parse leaves the caller's struct exactly as it was; a successful one replaces it. */
START_TEST(test_config_atomic)
{
	struct rf_config c, before;
	char err[512];
	char *listen;

	rf_config_init(&c);
	ck_assert_int_eq(
		parse("server: {threads: 7, listen: \"127.0.0.1:1\"}", &c, err, sizeof(err)), 0);
	listen = c.server.listen;
	before = c;
	ck_assert_int_eq(parse("server: {threads: 9, listen: \"127.0.0.1:2\", bogus: 1}", &c, err,
			       sizeof(err)),
			 -EINVAL);
	ck_assert_mem_eq(&c, &before, sizeof(c));
	ck_assert_ptr_eq(c.server.listen, listen);
	ck_assert_str_eq(c.server.listen, "127.0.0.1:1");
	ck_assert_int_eq(c.server.threads, 7);

	/* a success starts from the defaults, not from the previous content */
	ck_assert_int_eq(parse("kube: {qps: 5}", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.server.threads, 0);
	ck_assert_str_eq(c.server.listen, "0.0.0.0:8888");
	ck_assert_double_eq(c.kube.qps, 5);
	rf_config_release(&c);
}
END_TEST

START_TEST(test_config_to_json_defaults)
{
	static const char want[] =
		"{\"server\": {\"listen\": \"0.0.0.0:8888\", \"debugListen\": \"\","
		" \"maxBodyBytes\": \"128Mi\", \"maxBufferedBytes\": \"0\","
		" \"maxConnectionsPerAddress\": 128, \"probeListen\": \"\","
		" \"requestTimeout\": \"10s\", \"threads\": 0,"
		" \"tls\": {\"certFile\": \"\", \"keyFile\": \"\", \"clientCAFile\": \"\"},"
		" \"debugEndpoints\": true, \"debugTokenFile\": \"\"},"
		" \"kube\": {\"kubeconfig\": \"\", \"qps\": 50, \"staleAfter\": \"2m0s\","
		" \"assumeTTL\": \"30s\", \"watchTimeout\": \"5m0s\", \"draVersion\": \"auto\","
		" \"featureGates\": {\"DRAListTypeAttributes\": false}},"
		" \"devices\": {\"gpuDrivers\": [\"gpu.nvidia.com\"], \"nicDrivers\": [\"dra.net\"],"
		" \"cpuDrivers\": [\"dra.cpu\"],"
		" \"bandwidthCapacities\": [\"bandwidth\"], \"defaultNicBandwidth\": \"400G\","
		" \"frontendBandwidth\": \"100G\", \"rails\": \"gpu-pairing\","
		" \"topologyAnnotation\": \"railfit.io/pci-topology\"},"
		" \"filter\": {\"minAlignment\": \"SYS\", \"staleAfter\": \"10m0s\","
		" \"whenStale\": \"pass\", \"whenNotReady\": \"error-for-railfit-pods\"},"
		" \"scoring\": {\"weights\": {\"alignment\": 5, \"bandwidth\": 3, \"rail\": 2,"
		" \"packing\": 1, \"gpu\": 3, \"locality\": 2, \"cpu\": 2}, \"bandwidthPolicy\": \"spread\","
		" \"levels\": {\"PIX\": 1, \"PXB\": 0.85, \"PHB\": 0.7, \"NODE\": 0.4, \"SYS\": 0.1,"
		" \"UNKNOWN\": 0.25, \"NVL\": 1}},"
		" \"groups\": {\"labels\": [\"railfit.io/group\", \"batch.kubernetes.io/job-name\","
		" \"training.kubeflow.org/job-name\", \"scheduling.x-k8s.io/pod-group\"],"
		" \"blockLabels\": [\"network.topology.kubernetes.io/block\","
		" \"cloud.google.com/gce-topology-subblock\", \"topology.k8s.aws/network-node-layer-3\"],"
		" \"spineLabels\": [\"network.topology.kubernetes.io/spine\","
		" \"cloud.google.com/gce-topology-block\", \"topology.k8s.aws/network-node-layer-2\"]},"
		" \"bind\": {\"enabled\": false, \"schedulerNames\": [\"railfit\"]}}";
	struct rf_config c;
	json_error_t jerr;
	json_t *got, *exp = json_loads(want, 0, &jerr);
	char *dump;

	ck_assert_msg(exp != NULL, "%s", jerr.text);
	rf_config_init(&c);
	got = rf_config_to_json(&c);
	ck_assert_ptr_nonnull(got);
	dump = json_dumps(got, JSON_COMPACT);
	ck_assert_msg(json_equal(got, exp), "%s", dump);
	free(dump);
	/* key order follows DESIGN */
	dump = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER);
	ck_assert_ptr_nonnull(strstr(dump, "{\"server\":{\"listen\":"));
	ck_assert_ptr_nonnull(strstr(dump, "\"groups\":{\"labels\":"));
	free(dump);
	json_decref(got);
	json_decref(exp);
	rf_config_release(&c);
}
END_TEST

START_TEST(test_config_to_json_redacts)
{
	struct rf_config c;
	char err[512];
	json_t *j;

	rf_config_init(&c);
	ck_assert_msg(parse("server: {tls: {certFile: /c.pem, keyFile: /secret/k.pem, "
			    "clientCAFile: /ca.pem}}",
			    &c, err, sizeof(err)) == 0,
		      "%s", err);
	j = rf_config_to_json(&c);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(j, "server"), "tls"), "keyFile")),
			 "<redacted>");
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(j, "server"), "tls"), "certFile")),
			 "/c.pem");
	char *dump = json_dumps(j, 0);
	ck_assert_ptr_null(strstr(dump, "secret"));
	free(dump);
	json_decref(j);
	rf_config_release(&c);
}
END_TEST

/* JSON is YAML: what to_json prints parses back to the same configuration. */
START_TEST(test_config_to_json_roundtrip)
{
	struct rf_config a, b;
	char err[512], *dump;
	json_t *j;

	rf_config_init(&a);
	ck_assert_msg(parse(full_block, &a, err, sizeof(err)) == 0, "%s", err);
	free(a.server.tls.key_file); /* not redacted when empty */
	free(a.server.tls.cert_file);
	free(a.server.tls.client_ca_file);
	a.server.tls.key_file = strdup("");
	a.server.tls.cert_file = strdup("");
	a.server.tls.client_ca_file = strdup("");
	j = rf_config_to_json(&a);
	dump = json_dumps(j, JSON_INDENT(2));
	rf_config_init(&b);
	ck_assert_msg(parse(dump, &b, err, sizeof(err)) == 0, "%s", err);
	assert_config_eq(&a, &b);
	ck_assert_int_eq(b.server.max_body_bytes, a.server.max_body_bytes);
	ck_assert_int_eq(
		rf_quantity_cmp(b.devices.default_nic_bandwidth, a.devices.default_nic_bandwidth),
		0);
	ck_assert_double_eq(b.scoring.levels[RF_LEVEL_PXB], 0.9);
	free(dump);
	json_decref(j);
	rf_config_release(&a);
	rf_config_release(&b);
}
END_TEST

START_TEST(test_config_copy)
{
	struct rf_config a, b;
	char err[512];

	rf_config_init(&a);
	ck_assert_msg(parse(full_block, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(rf_config_copy(&a, &b), 0);
	ck_assert_ptr_ne(a.server.listen, b.server.listen);
	ck_assert_ptr_ne(a.devices.gpu_drivers.v, b.devices.gpu_drivers.v);
	ck_assert_ptr_ne(a.devices.gpu_drivers.v[0], b.devices.gpu_drivers.v[0]);
	assert_config_eq(&a, &b);
	rf_config_release(&a);
	assert_full(&b); /* survives the original */
	rf_config_release(&b);

	/* copying the defaults, and a zeroed struct */
	rf_config_init(&a);
	ck_assert_int_eq(rf_config_copy(&a, &b), 0);
	assert_defaults(&b);
	rf_config_release(&a);
	rf_config_release(&b);
	ck_assert_int_eq(rf_config_copy(&a, &b), 0);
	ck_assert_ptr_null(b.server.listen);
	ck_assert_uint_eq(b.groups.labels.n, 0);
	rf_config_release(&b);
}
END_TEST

START_TEST(test_config_release)
{
	struct rf_config c;

	memset(&c, 0, sizeof(c));
	rf_config_release(&c); /* zeroed */
	rf_config_release(NULL);
	rf_config_init(&c);
	rf_config_release(&c);
	ck_assert_ptr_null(c.server.listen);
	ck_assert_ptr_null(c.groups.labels.v);
	rf_config_release(&c); /* twice */
	rf_config_init(&c);    /* and reused */
	assert_defaults(&c);
	rf_config_release(&c);
}
END_TEST

/* ---- levels ---- */

START_TEST(test_level_names)
{
	static const char *const names[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "UNKNOWN" };

	for (int i = 0; i < RF_LEVEL_COUNT; i++) {
		enum rf_level l = RF_LEVEL_COUNT;
		ck_assert_str_eq(rf_level_name((enum rf_level)i), names[i]);
		ck_assert_int_eq(rf_level_parse(names[i], &l), 0);
		ck_assert_int_eq(l, i);
	}
	ck_assert_str_eq(rf_level_name(RF_LEVEL_COUNT), "UNKNOWN");
	ck_assert_str_eq(rf_level_name((enum rf_level) - 1), "UNKNOWN");
}
END_TEST

START_TEST(test_level_parse_invalid)
{
	static const char *const bad[] = { "", "pix", "Pix", "PIX ", " PIX", "NV1", "SYSX", "PI" };
	enum rf_level l = RF_LEVEL_PHB;

	for (size_t i = 0; i < N(bad); i++)
		ck_assert_int_eq(rf_level_parse(bad[i], &l), -EINVAL);
	ck_assert_int_eq(rf_level_parse(NULL, &l), -EINVAL);
	ck_assert_int_eq(l, RF_LEVEL_PHB);
}
END_TEST

START_TEST(test_level_at_least)
{
	for (int a = 0; a < RF_LEVEL_COUNT; a++)
		for (int b = 0; b < RF_LEVEL_COUNT; b++)
			ck_assert_int_eq(rf_level_at_least((enum rf_level)a, (enum rf_level)b),
					 a <= b);
	ck_assert(rf_level_at_least(RF_LEVEL_PIX, RF_LEVEL_SYS));
	ck_assert(!rf_level_at_least(RF_LEVEL_SYS, RF_LEVEL_PHB));
	ck_assert(!rf_level_at_least(RF_LEVEL_UNKNOWN, RF_LEVEL_SYS));
	ck_assert(rf_level_at_least(RF_LEVEL_SYS, RF_LEVEL_UNKNOWN));
	ck_assert(rf_level_at_least(RF_LEVEL_UNKNOWN, RF_LEVEL_UNKNOWN));
}
END_TEST

Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_config_defaults);
	tcase_add_test(tc, test_config_design_snippet);
	tcase_add_test(tc, test_config_design_file);
	tcase_add_loop_test(tc, test_config_empty_is_defaults, 0, N(empty_docs));
	tcase_add_test(tc, test_config_null_buffer);
	tcase_add_test(tc, test_config_full_block);
	tcase_add_test(tc, test_config_full_flow);
	tcase_add_test(tc, test_config_scalar_forms);
	tcase_add_test(tc, test_config_valid_values);
	tcase_add_test(tc, test_config_atomic);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_config_errors, 0, N(errors));
	tcase_add_test(tc, test_config_error_buffers);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, test_config_to_json_defaults);
	tcase_add_test(tc, test_config_to_json_redacts);
	tcase_add_test(tc, test_config_to_json_roundtrip);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_add_test(tc, test_config_copy);
	tcase_add_test(tc, test_config_release);
	suite_add_tcase(s, tc);

	tc = tcase_create("level");
	tcase_add_test(tc, test_config_dra_versions);
	tcase_add_test(tc, test_config_feature_gates);
	tcase_add_test(tc, test_level_names);
	tcase_add_test(tc, test_level_parse_invalid);
	tcase_add_test(tc, test_level_at_least);
	suite_add_tcase(s, tc);
	return s;
}
