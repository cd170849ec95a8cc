/* railfit's configuration file (DESIGN section 8).
 *
 * Every key is declared once, in options[] below (as Valkey's static_configs[]): its path, type,
 * bounds and default. The defaults are written in configuration syntax and go through the same
 * setter as the file, so rf_config_init(), validation, the "unknown key (expected one of ...)"
 * message, rf_config_to_json(), rf_config_copy() and rf_config_release() all walk that one table
 * and cannot drift apart.
 *
 * The YAML document is read with libyaml's event API by a small recursive descent over the groups
 * the table implies ("server", "server.tls", ...). Block and flow style, comments, quoted and plain
 * scalars are all libyaml's business. A null value (`key:`, `~`, `null`) keeps the key's default.
 * Aliases, a second document, duplicate and unknown keys are errors.
 *
 * Pure logic: no I/O, no logging, no global state; safe from any thread. */
#include "config/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config/duration.h"

enum opt_type {
	OPT_STRING,   /* char *, never NULL once initialised */
	OPT_BOOL,     /* bool */
	OPT_INT,      /* int in [min, max] */
	OPT_NUMBER,   /* double in [min, max] (or > min with F_MIN_EXCL), finite */
	OPT_BYTES,    /* int64_t bytes, written as a quantity, in [min, max] */
	OPT_QUANTITY, /* struct rf_quantity > 0 */
	OPT_DURATION, /* int64_t milliseconds, > 0 unless F_ZERO_OK */
	OPT_ENUM,     /* an enum stored as int, names[] in enum order */
	OPT_STRV,     /* struct rf_strv of non-empty strings */
	OPT_DRA,      /* kube.draVersion alone: the enum at offset, and kube.dra_patch */
};

#define F_SECRET   (1u << 0) /* rf_config_to_json() shows "<redacted>" when set */
#define F_NONEMPTY (1u << 1) /* OPT_STRING: "" is rejected */
#define F_ZERO_OK  (1u << 2) /* OPT_DURATION: 0 is accepted */
#define F_MIN_EXCL (1u << 3) /* OPT_NUMBER: the minimum itself is rejected */

struct option {
	const char *path; /* YAML key path, camelCase as in DESIGN */
	enum opt_type type;
	size_t offset;                /* into struct rf_config */
	const char *def;              /* default, parsed like the file (not OPT_STRV) */
	const char *const *def_list;  /* OPT_STRV default, NULL-terminated */
	double min, max;              /* OPT_INT, OPT_NUMBER, OPT_BYTES (in bytes) */
	unsigned flags;               /* F_* */
	const char *const *names;     /* OPT_ENUM: accepted names, NULL-terminated */
	bool (*valid)(const char *s); /* OPT_STRING (when not ""), OPT_STRV elements */
	const char *what;             /* what valid() accepts, for error messages */
};

/* Offset of a field of struct rf_config, checked at compile time to have type T. */
#define FIELD(f, T)                                                                                \
	(offsetof(struct rf_config, f) +                                                           \
	 0 * sizeof(struct {                                                                       \
		 _Static_assert(_Generic(((struct rf_config *)0)->f, T : 1, default : 0), #f);     \
		 int dummy;                                                                        \
	 }))

_Static_assert(sizeof(enum rf_level) == sizeof(int), "enum storage");
_Static_assert(sizeof(enum rf_when_stale) == sizeof(int), "enum storage");
_Static_assert(sizeof(enum rf_when_not_ready) == sizeof(int), "enum storage");
_Static_assert(sizeof(enum rf_bandwidth_policy) == sizeof(int), "enum storage");
_Static_assert(sizeof(enum rf_dra_version) == sizeof(int), "enum storage");
_Static_assert(RF_LEVEL_PIX == 0 && RF_LEVEL_PXB == 1 && RF_LEVEL_PHB == 2 && RF_LEVEL_NODE == 3 &&
		       RF_LEVEL_SYS == 4,
	       "min_alignment_names[] follows enum rf_level");

static bool valid_listen(const char *s);
static bool valid_rails(const char *s);
static bool valid_dns_subdomain(const char *s);
static bool valid_dra_qualified_name(const char *s);
static bool valid_k8s_qualified_name(const char *s);

static const char *const min_alignment_names[] = { "PIX", "PXB", "PHB", "NODE", "SYS", NULL };
static const char *const when_stale_names[] = { "pass", "fail", NULL };
static const char *const when_not_ready_names[] = { "error-for-railfit-pods", "pass", "error",
						    NULL };
static const char *const bandwidth_policy_names[] = { "spread", "binpack", NULL };

static const char *const scheduler_names_def[] = { "railfit", NULL };
static const char *const gpu_drivers_def[] = { "gpu.nvidia.com", NULL };
static const char *const nic_drivers_def[] = { "dra.net", NULL };
static const char *const cpu_drivers_def[] = { "dra.cpu", NULL };
static const char *const bandwidth_capacities_def[] = { "bandwidth", NULL };
static const char *const group_labels_def[] = {
	"railfit.io/group",
	"batch.kubernetes.io/job-name",
	"training.kubeflow.org/job-name",
	"scheduling.x-k8s.io/pod-group",
	NULL,
};

/* the first label a Node has names its block (spine): the well-known key, GKE's sub-block and
 * block, AWS's network node layers 3 and 2 (closest to the instance first) */
static const char *const block_labels_def[] = {
	"network.topology.kubernetes.io/block",
	"cloud.google.com/gce-topology-subblock",
	"topology.k8s.aws/network-node-layer-3",
	NULL,
};
static const char *const spine_labels_def[] = {
	"network.topology.kubernetes.io/spine",
	"cloud.google.com/gce-topology-block",
	"topology.k8s.aws/network-node-layer-2",
	NULL,
};

#define KiB 1024.0
#define GiB (1024.0 * 1024.0 * 1024.0)

static const struct option options[] = {
	{ "server.listen", OPT_STRING, FIELD(server.listen, char *), .def = "0.0.0.0:8888",
	  .flags = F_NONEMPTY, .valid = valid_listen, .what = "an address such as 0.0.0.0:8888" },
	/* "" = serve the debug endpoints on the main listener */
	{ "server.debugListen", OPT_STRING, FIELD(server.debug_listen, char *), .def = "",
	  .valid = valid_listen, .what = "an address such as 127.0.0.1:8889, or \"\"" },
	{ "server.maxBodyBytes", OPT_BYTES, FIELD(server.max_body_bytes, int64_t), .def = "128Mi",
	  .min = KiB, .max = GiB },
	/* request bodies held at once, over all connections: 0 = 4 x maxBodyBytes; else at least
	 * maxBodyBytes (validate()) */
	{ "server.maxBufferedBytes", OPT_BYTES, FIELD(server.max_buffered_bytes, int64_t),
	  .def = "0", .min = 0, .max = 64 * GiB },
	{ "server.maxConnectionsPerAddress", OPT_INT,
	  FIELD(server.max_connections_per_address, int), .def = "128", .min = 1, .max = 1024 },
	/* "" = the probes are served with everything else */
	{ "server.probeListen", OPT_STRING, FIELD(server.probe_listen, char *), .def = "",
	  .valid = valid_listen, .what = "an address such as 0.0.0.0:8890, or \"\"" },
	/* 0 would mean "no timeout" to libmicrohttpd: a stalled client could hold a thread */
	{ "server.requestTimeout", OPT_DURATION, FIELD(server.request_timeout_ms, int64_t),
	  .def = "10s" },
	{ "server.threads", OPT_INT, FIELD(server.threads, int), .def = "0", .min = 0,
	  .max = 1024 },
	{ "server.tls.certFile", OPT_STRING, FIELD(server.tls.cert_file, char *), .def = "" },
	{ "server.tls.keyFile", OPT_STRING, FIELD(server.tls.key_file, char *), .def = "",
	  .flags = F_SECRET },
	{ "server.tls.clientCAFile", OPT_STRING, FIELD(server.tls.client_ca_file, char *),
	  .def = "" },
	{ "server.debugEndpoints", OPT_BOOL, FIELD(server.debug_endpoints, bool), .def = "true" },
	{ "server.debugTokenFile", OPT_STRING, FIELD(server.debug_token_file, char *), .def = "" },

	{ "kube.kubeconfig", OPT_STRING, FIELD(kube.kubeconfig, char *), .def = "" },
	{ "kube.qps", OPT_NUMBER, FIELD(kube.qps, double), .def = "50", .min = 0, .max = INFINITY,
	  .flags = F_MIN_EXCL },
	{ "kube.staleAfter", OPT_DURATION, FIELD(kube.stale_after_ms, int64_t), .def = "2m" },
	/* 0 = forget a /bind placement at once and rely on the watch alone */
	{ "kube.assumeTTL", OPT_DURATION, FIELD(kube.assume_ttl_ms, int64_t), .def = "30s",
	  .flags = F_ZERO_OK },
	{ "kube.watchTimeout", OPT_DURATION, FIELD(kube.watch_timeout_ms, int64_t), .def = "5m" },
	{ "kube.draVersion", OPT_DRA, FIELD(kube.dra_version, enum rf_dra_version), .def = "auto" },
	{ "kube.featureGates.DRAListTypeAttributes", OPT_BOOL,
	  FIELD(kube.gates.list_type_attributes, bool), .def = "false" },

	{ "devices.gpuDrivers", OPT_STRV, FIELD(devices.gpu_drivers, struct rf_strv),
	  .def_list = gpu_drivers_def, .valid = valid_dns_subdomain,
	  .what = "a driver name such as gpu.nvidia.com" },
	{ "devices.nicDrivers", OPT_STRV, FIELD(devices.nic_drivers, struct rf_strv),
	  .def_list = nic_drivers_def, .valid = valid_dns_subdomain,
	  .what = "a driver name such as dra.net" },
	{ "devices.cpuDrivers", OPT_STRV, FIELD(devices.cpu_drivers, struct rf_strv),
	  .def_list = cpu_drivers_def, .valid = valid_dns_subdomain,
	  .what = "a driver name such as dra.cpu" },
	{ "devices.bandwidthCapacities", OPT_STRV,
	  FIELD(devices.bandwidth_capacities, struct rf_strv), .def_list = bandwidth_capacities_def,
	  .valid = valid_dra_qualified_name, .what = "a capacity name such as bandwidth" },
	{ "devices.defaultNicBandwidth", OPT_QUANTITY,
	  FIELD(devices.default_nic_bandwidth, struct rf_quantity), .def = "400G" },
	{ "devices.frontendBandwidth", OPT_QUANTITY,
	  FIELD(devices.frontend_bandwidth, struct rf_quantity), .def = "100G" },
	{ "devices.rails", OPT_STRING, FIELD(devices.rails, char *), .def = "gpu-pairing",
	  .flags = F_NONEMPTY, .valid = valid_rails,
	  .what = "gpu-pairing or attribute:<qualified name>" },
	{ "devices.topologyAnnotation", OPT_STRING, FIELD(devices.topology_annotation, char *),
	  .def = "railfit.io/pci-topology", .flags = F_NONEMPTY, .valid = valid_k8s_qualified_name,
	  .what = "an annotation key such as railfit.io/pci-topology" },

	{ "filter.minAlignment", OPT_ENUM, FIELD(filter.min_alignment, enum rf_level), .def = "SYS",
	  .names = min_alignment_names },
	{ "filter.staleAfter", OPT_DURATION, FIELD(filter.stale_after_ms, int64_t), .def = "10m" },
	{ "filter.whenStale", OPT_ENUM, FIELD(filter.when_stale, enum rf_when_stale), .def = "pass",
	  .names = when_stale_names },
	{ "filter.whenNotReady", OPT_ENUM, FIELD(filter.when_not_ready, enum rf_when_not_ready),
	  .def = "error-for-railfit-pods", .names = when_not_ready_names },

	{ "scoring.weights.alignment", OPT_NUMBER, FIELD(scoring.w_alignment, double), .def = "5",
	  .min = 0, .max = INFINITY },
	{ "scoring.weights.bandwidth", OPT_NUMBER, FIELD(scoring.w_bandwidth, double), .def = "3",
	  .min = 0, .max = INFINITY },
	{ "scoring.weights.rail", OPT_NUMBER, FIELD(scoring.w_rail, double), .def = "2", .min = 0,
	  .max = INFINITY },
	{ "scoring.weights.packing", OPT_NUMBER, FIELD(scoring.w_packing, double), .def = "1",
	  .min = 0, .max = INFINITY },
	{ "scoring.weights.gpu", OPT_NUMBER, FIELD(scoring.w_gpu, double), .def = "3", .min = 0,
	  .max = INFINITY },
	{ "scoring.weights.locality", OPT_NUMBER, FIELD(scoring.w_locality, double), .def = "2",
	  .min = 0, .max = INFINITY },
	{ "scoring.weights.cpu", OPT_NUMBER, FIELD(scoring.w_cpu, double), .def = "2", .min = 0,
	  .max = INFINITY },
	{ "scoring.bandwidthPolicy", OPT_ENUM,
	  FIELD(scoring.bandwidth_policy, enum rf_bandwidth_policy), .def = "spread",
	  .names = bandwidth_policy_names },
	{ "scoring.levels.PIX", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_PIX], double),
	  .def = "1.0", .min = 0, .max = 1 },
	{ "scoring.levels.PXB", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_PXB], double),
	  .def = "0.85", .min = 0, .max = 1 },
	{ "scoring.levels.PHB", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_PHB], double),
	  .def = "0.7", .min = 0, .max = 1 },
	{ "scoring.levels.NODE", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_NODE], double),
	  .def = "0.4", .min = 0, .max = 1 },
	{ "scoring.levels.SYS", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_SYS], double),
	  .def = "0.1", .min = 0, .max = 1 },
	{ "scoring.levels.UNKNOWN", OPT_NUMBER, FIELD(scoring.levels[RF_LEVEL_UNKNOWN], double),
	  .def = "0.25", .min = 0, .max = 1 },
	{ "scoring.levels.NVL", OPT_NUMBER, FIELD(scoring.level_nvl, double), .def = "1.0",
	  .min = 0, .max = 1 },

	{ "groups.labels", OPT_STRV, FIELD(groups.labels, struct rf_strv),
	  .def_list = group_labels_def, .valid = valid_k8s_qualified_name,
	  .what = "a label key such as railfit.io/group" },
	{ "groups.blockLabels", OPT_STRV, FIELD(groups.block_labels, struct rf_strv),
	  .def_list = block_labels_def, .valid = valid_k8s_qualified_name,
	  .what = "a label key such as network.topology.kubernetes.io/block" },
	{ "groups.spineLabels", OPT_STRV, FIELD(groups.spine_labels, struct rf_strv),
	  .def_list = spine_labels_def, .valid = valid_k8s_qualified_name,
	  .what = "a label key such as network.topology.kubernetes.io/spine" },

	/* POST /bind creates pods/binding: off unless asked for, and only for these profiles */
	{ "bind.enabled", OPT_BOOL, FIELD(bind.enabled, bool), .def = "false" },
	{ "bind.schedulerNames", OPT_STRV, FIELD(bind.scheduler_names, struct rf_strv),
	  .def_list = scheduler_names_def, .valid = valid_dns_subdomain,
	  .what = "a scheduler profile name such as railfit" },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

/* Most keys one group has (server: 11). */
#define MAX_CHILDREN 16
/* Longest key path built from known keys, plus room for an unknown key's excerpt. */
#define PATH_MAX_LEN 256
/* How much of a user's text an error message repeats. */
#define EXCERPT_MAX 64

/* ---- error messages ---- */

struct errbuf {
	char *buf;
	size_t len;
};

__attribute__((format(printf, 3, 4))) static int
fail(struct errbuf *e, int r, const char *fmt, ...)
{
	va_list ap;

	if (!e || !e->buf || e->len == 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(e->buf, e->len, fmt, ap);
	va_end(ap);
	return r;
}

/* The first EXCERPT_MAX bytes of s, with quotes, backslashes and control characters escaped. */
static void
excerpt(char *out, size_t outlen, const char *s, size_t len)
{
	size_t o = 0;
	bool cut = len > EXCERPT_MAX;

	if (cut)
		len = EXCERPT_MAX;
	for (size_t i = 0; i < len && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	if (cut && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* ---- syntax checks for string values ---- */

static bool
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool
is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* RFC 1123 subdomain as Kubernetes checks it (IsDNS1123Subdomain) of at most maxlen bytes. */
static bool
dns_subdomain_n(const char *s, size_t len, size_t maxlen)
{
	if (len == 0 || len > maxlen)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool edge = i == 0 || i == len - 1 || s[i - 1] == '.' || s[i + 1] == '.';
		if (is_lower_alnum(c))
			continue;
		if ((c == '-' || c == '.') && !edge)
			continue;
		return false;
	}
	return true;
}

static bool
valid_dns_subdomain(const char *s)
{
	return dns_subdomain_n(s, strlen(s), 253);
}

/* A DRA QualifiedName (attribute and capacity names): [<DNS subdomain, at most 63>/]<C identifier
 * of at most 32 characters>. */
static bool
valid_dra_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *id = slash ? slash + 1 : s;
	size_t n = strlen(id);

	if (slash && !dns_subdomain_n(s, (size_t)(slash - s), 63))
		return false;
	if (n == 0 || n > 32 || (id[0] >= '0' && id[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(id[i]) && id[i] != '_')
			return false;
	return true;
}

/* A Kubernetes label or annotation key (IsQualifiedName): [<DNS subdomain>/]<name of at most 63
 * characters: alphanumerics, '-', '_', '.', starting and ending alphanumeric>. */
static bool
valid_k8s_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *name = slash ? slash + 1 : s;
	size_t n = strlen(name);

	if (slash && !dns_subdomain_n(s, (size_t)(slash - s), 253))
		return false;
	if (n == 0 || n > 63 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
			return false;
	return true;
}

static bool
valid_rails(const char *s)
{
	static const char prefix[] = "attribute:";

	if (strcmp(s, "gpu-pairing") == 0)
		return true;
	return strncmp(s, prefix, sizeof(prefix) - 1) == 0 &&
	       valid_dra_qualified_name(s + sizeof(prefix) - 1);
}

/* "host:port", "[v6]:port" or ":port": the server resolves the host; here only the shape. */
static bool
valid_listen(const char *s)
{
	const char *colon = strrchr(s, ':');
	unsigned long port = 0;
	size_t digits = 0;

	if (!colon)
		return false;
	for (const char *p = colon + 1; *p; p++, digits++) {
		if (*p < '0' || *p > '9' || digits >= 5)
			return false;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (digits == 0 || port > 65535)
		return false;
	for (const char *p = s; p < colon; p++)
		if ((unsigned char)*p <= ' ' || *p == '/')
			return false;
	return true;
}

/* ---- values ---- */

static void *
field(struct rf_config *c, const struct option *o)
{
	return (char *)c + o->offset;
}

static const void *
cfield(const struct rf_config *c, const struct option *o)
{
	return (const char *)c + o->offset;
}

static void
strv_free(struct rf_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

static int
strv_push(struct rf_strv *v, const char *s)
{
	char *d = strdup(s);
	char **nv;

	if (!d)
		return -ENOMEM;
	nv = realloc(v->v, (v->n + 1) * sizeof(*nv));
	if (!nv) {
		free(d);
		return -ENOMEM;
	}
	nv[v->n++] = d;
	v->v = nv;
	return 0;
}

/* "a number > 0", "a number >= 0", "a number between 0 and 1", "an integer between 0 and 1024" */
static void
describe_range(const struct option *o, char *out, size_t len)
{
	const char *noun = o->type == OPT_INT ? "an integer" : "a number";

	if (isinf(o->max))
		snprintf(out, len, "%s %s %g", noun, o->flags & F_MIN_EXCL ? ">" : ">=", o->min);
	else
		snprintf(out, len, "%s between %g and %g", noun, o->min, o->max);
}

/* Decimal number as YAML 1.2 writes it: [-+]?(digits[.digits]|.digits)([eE][-+]?digits)? */
static bool
is_decimal(const char *s)
{
	size_t i = 0, d = 0;

	if (s[i] == '+' || s[i] == '-')
		i++;
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		d++;
	if (s[i] == '.')
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			d++;
	if (d == 0)
		return false;
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (s[i] < '0' || s[i] > '9')
			return false;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return s[i] == '\0';
}

/* What option o accepts, as the "expected ..." part of an error message. */
static void
describe_expected(const struct option *o, char *out, size_t len)
{
	size_t n = 0;

	switch (o->type) {
	case OPT_STRING:
		snprintf(out, len, "%s",
			 o->what                 ? o->what
			 : o->flags & F_NONEMPTY ? "a non-empty string"
						 : "a string");
		return;
	case OPT_BOOL:
		snprintf(out, len, "true or false");
		return;
	case OPT_INT:
	case OPT_NUMBER:
		describe_range(o, out, len);
		return;
	case OPT_BYTES:
		snprintf(out, len, "a Kubernetes quantity such as %s", o->def);
		return;
	case OPT_QUANTITY:
		snprintf(out, len, "a Kubernetes quantity > 0 such as %s", o->def);
		return;
	case OPT_DURATION:
		snprintf(out, len, "a duration%s such as %s", o->flags & F_ZERO_OK ? "" : " > 0",
			 o->def);
		return;
	case OPT_ENUM:
		n = (size_t)snprintf(out, len, "one of ");
		for (size_t i = 0; o->names[i]; i++)
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", i ? ", " : "",
					      o->names[i]);
		return;
	case OPT_STRV:
		snprintf(out, len, "a list of strings");
		return;
	case OPT_DRA:
		snprintf(out, len,
			 "auto, 1.34, 1.35, 1.36 or 1.37, optionally with a patch level such as "
			 "1.36.2");
		return;
	}
}

/**
 * Set the scalar option o of c from text s (NUL-terminated, len bytes). On failure c is unchanged
 * and e holds "<path>: expected <what>, got \"<s>\"".
 * @return 0, -EINVAL or -ENOMEM.
 */
static int
set_scalar(struct rf_config *c, const struct option *o, const char *s, size_t len, struct errbuf *e)
{
	char got[EXCERPT_MAX * 4 + 8], exp[256];
	void *f = field(c, o);
	/* an embedded NUL would hide the rest of the text from the parsers below */
	bool ok = memchr(s, '\0', len) == NULL;

	switch (o->type) {
	case OPT_STRING: {
		char *d;
		if (!ok || (len == 0 && (o->flags & F_NONEMPTY)) ||
		    (len > 0 && o->valid && !o->valid(s)))
			break;
		d = strdup(s);
		if (!d)
			return fail(e, -ENOMEM, "out of memory");
		free(*(char **)f);
		*(char **)f = d;
		return 0;
	}
	case OPT_BOOL:
		if (ok && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))) {
			*(bool *)f = true;
			return 0;
		}
		if (ok && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))) {
			*(bool *)f = false;
			return 0;
		}
		break;
	case OPT_INT: {
		char *end;
		long v;
		if (!ok || len == 0 || len > 12 || strspn(s, "+-0123456789") != len)
			break;
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || *end || (double)v < o->min || (double)v > o->max)
			break;
		*(int *)f = (int)v;
		return 0;
	}
	case OPT_NUMBER: {
		char *end;
		double v;
		if (!ok || !is_decimal(s))
			break;
		v = strtod(s, &end);
		if (*end || !isfinite(v) || v < o->min ||
		    ((o->flags & F_MIN_EXCL) && v == o->min) || v > o->max)
			break;
		*(double *)f = v;
		return 0;
	}
	case OPT_BYTES: {
		struct rf_quantity q, lo = rf_quantity_from_int((int64_t)o->min),
				      hi = rf_quantity_from_int((int64_t)o->max);
		char los[RF_QUANTITY_FMT_MAX], his[RF_QUANTITY_FMT_MAX];
		int r = ok ? rf_quantity_parsen(s, len, &q) : -EINVAL;
		if (r == -EINVAL)
			break;
		if (r < 0 || rf_quantity_cmp(q, lo) < 0 || rf_quantity_cmp(q, hi) > 0) {
			excerpt(got, sizeof(got), s, len);
			return fail(e, -EINVAL,
				    "%s: expected a quantity between %s and %s, got \"%s\"",
				    o->path, rf_quantity_format(lo, los),
				    rf_quantity_format(hi, his), got);
		}
		*(int64_t *)f = rf_quantity_value(q);
		return 0;
	}
	case OPT_QUANTITY: {
		struct rf_quantity q;
		if (!ok || rf_quantity_parsen(s, len, &q) < 0 || q.nano <= 0)
			break;
		*(struct rf_quantity *)f = q;
		return 0;
	}
	case OPT_DURATION: {
		int64_t ms;
		if (!ok || rf_duration_parse(s, &ms) < 0 || (ms == 0 && !(o->flags & F_ZERO_OK)))
			break;
		*(int64_t *)f = ms;
		return 0;
	}
	case OPT_ENUM:
		for (size_t i = 0; ok && o->names[i]; i++) {
			if (strcmp(s, o->names[i]) == 0) {
				*(int *)f = (int)i;
				return 0;
			}
		}
		break;
	case OPT_STRV:
		break;
	case OPT_DRA: {
		enum rf_dra_version v;
		int patch;
		if (!ok || rf_dra_version_parse(s, &v, &patch) < 0)
			break;
		*(enum rf_dra_version *)f = v;
		c->kube.dra_patch = patch;
		return 0;
	}
	}
	describe_expected(o, exp, sizeof(exp));
	excerpt(got, sizeof(got), s, len);
	return fail(e, -EINVAL, "%s: expected %s, got \"%s\"", o->path, exp, got);
}

/* ---- lifecycle ---- */

static int
config_defaults(struct rf_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		int r;

		if (o->type == OPT_STRV) {
			struct rf_strv *v = field(c, o);
			for (size_t k = 0; o->def_list[k]; k++) {
				r = strv_push(v, o->def_list[k]);
				if (r < 0)
					goto out_release;
			}
			continue;
		}
		r = set_scalar(c, o, o->def, strlen(o->def), NULL);
		if (r == -ENOMEM)
			goto out_release;
		if (r < 0)
			abort(); /* a default that fails its own validation: a bug in options[] */
	}
	return 0;
out_release:
	rf_config_release(c);
	return -ENOMEM;
}

void
rf_config_init(struct rf_config *c)
{
	if (config_defaults(c) < 0)
		abort(); /* OOM at startup */
}

void
rf_config_release(struct rf_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		if (o->type == OPT_STRING)
			free(*(char **)field(c, o));
		else if (o->type == OPT_STRV)
			strv_free(field(c, o));
	}
	memset(c, 0, sizeof(*c));
}

int
rf_config_copy(const struct rf_config *src, struct rf_config *ret)
{
	struct rf_config tmp = *src;

	/* first drop every borrowed pointer, so that a partial copy can be released */
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		if (o->type == OPT_STRING)
			*(char **)field(&tmp, o) = NULL;
		else if (o->type == OPT_STRV)
			*(struct rf_strv *)field(&tmp, o) = (struct rf_strv){ 0 };
	}
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		if (o->type == OPT_STRING) {
			const char *s = *(char *const *)cfield(src, o);
			if (s && !(*(char **)field(&tmp, o) = strdup(s)))
				goto out_release;
		} else if (o->type == OPT_STRV) {
			const struct rf_strv *v = cfield(src, o);
			for (size_t k = 0; k < v->n; k++)
				if (strv_push(field(&tmp, o), v->v[k]) < 0)
					goto out_release;
		}
	}
	*ret = tmp;
	return 0;
out_release:
	rf_config_release(&tmp);
	return -ENOMEM;
}

/* ---- YAML ---- */

struct parser {
	yaml_parser_t yp;
	struct rf_config *c;
	struct errbuf e;
};

struct child {
	const char *name; /* points into an option path */
	size_t len;
	const struct option *leaf; /* NULL for a group */
};

/* The keys a mapping at group path prefix ("" = top level) accepts, in table order. */
static size_t
children(const char *prefix, struct child *out)
{
	size_t plen = strlen(prefix), n = 0;

	for (size_t i = 0; i < N_OPTIONS; i++) {
		const char *rest = options[i].path, *dot;
		size_t len, k;

		if (plen > 0) {
			if (strncmp(rest, prefix, plen) != 0 || rest[plen] != '.')
				continue;
			rest += plen + 1;
		}
		dot = strchr(rest, '.');
		len = dot ? (size_t)(dot - rest) : strlen(rest);
		for (k = 0; k < n; k++)
			if (out[k].len == len && memcmp(out[k].name, rest, len) == 0)
				break;
		if (k < n || n == MAX_CHILDREN)
			continue;
		out[n++] = (struct child){ rest, len, dot ? NULL : &options[i] };
	}
	return n;
}

static int
yaml_error(struct parser *p)
{
	const yaml_parser_t *y = &p->yp;

	switch (y->error) {
	case YAML_MEMORY_ERROR:
		return fail(&p->e, -ENOMEM, "out of memory");
	case YAML_READER_ERROR:
		return fail(&p->e, -EINVAL, "yaml: %s at byte %zu",
			    y->problem ? y->problem : "error", y->problem_offset);
	default:
		if (y->context)
			return fail(&p->e, -EINVAL, "yaml: line %zu column %zu: %s %s (line %zu)",
				    y->problem_mark.line + 1, y->problem_mark.column + 1,
				    y->problem ? y->problem : "error", y->context,
				    y->context_mark.line + 1);
		return fail(&p->e, -EINVAL, "yaml: line %zu column %zu: %s",
			    y->problem_mark.line + 1, y->problem_mark.column + 1,
			    y->problem ? y->problem : "error");
	}
}

static int
next(struct parser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yp, ev))
		return yaml_error(p);
	return 0;
}

static bool
is_null(const yaml_event_t *ev)
{
	const char *s;

	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = (const char *)ev->data.scalar.value;
	return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* The "got ..." part of an error message for the node that starts with ev. */
static void
describe_got(const yaml_event_t *ev, char *out, size_t len)
{
	char ex[EXCERPT_MAX * 4 + 8];

	switch (ev->type) {
	case YAML_MAPPING_START_EVENT:
		snprintf(out, len, "a mapping");
		return;
	case YAML_SEQUENCE_START_EVENT:
		snprintf(out, len, "a list");
		return;
	case YAML_SCALAR_EVENT:
		if (is_null(ev)) {
			snprintf(out, len, "null");
			return;
		}
		excerpt(ex, sizeof(ex), (const char *)ev->data.scalar.value,
			ev->data.scalar.length);
		snprintf(out, len, "\"%s\"", ex);
		return;
	default:
		snprintf(out, len, "an alias");
		return;
	}
}

static int
alias_error(struct parser *p, const char *path)
{
	return fail(&p->e, -EINVAL, "%s: YAML aliases are not supported",
		    *path ? path : "configuration");
}

static int parse_mapping(struct parser *p, const char *prefix);

static int
parse_list(struct parser *p, const struct option *o)
{
	struct rf_strv nv = { 0 };
	yaml_event_t ev;
	int r;

	for (size_t i = 0;; i++) {
		char got[EXCERPT_MAX * 4 + 16];
		const char *s;
		size_t len;

		r = next(p, &ev);
		if (r < 0)
			goto out;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		describe_got(&ev, got, sizeof(got));
		if (ev.type == YAML_ALIAS_EVENT) {
			r = alias_error(p, o->path);
		} else if (ev.type != YAML_SCALAR_EVENT || is_null(&ev)) {
			r = -EINVAL;
		} else {
			s = (const char *)ev.data.scalar.value;
			len = ev.data.scalar.length;
			if (len == 0 || memchr(s, '\0', len) || (o->valid && !o->valid(s)))
				r = -EINVAL;
			else if (strv_push(&nv, s) < 0)
				r = fail(&p->e, -ENOMEM, "out of memory");
		}
		if (r == -EINVAL && ev.type != YAML_ALIAS_EVENT)
			r = fail(&p->e, -EINVAL, "%s[%zu]: expected %s, got %s", o->path, i,
				 o->what ? o->what : "a non-empty string", got);
		yaml_event_delete(&ev);
		if (r < 0)
			goto out;
	}
	strv_free(field(p->c, o));
	*(struct rf_strv *)field(p->c, o) = nv;
	return 0;
out:
	strv_free(&nv);
	return r;
}

/* The value of leaf option o; its key event was just consumed. */
static int
parse_value(struct parser *p, const struct option *o)
{
	char exp[256], got[EXCERPT_MAX * 4 + 16];
	yaml_event_t ev;
	int r = next(p, &ev);

	if (r < 0)
		return r;
	if (ev.type == YAML_ALIAS_EVENT) {
		r = alias_error(p, o->path);
	} else if (is_null(&ev)) {
		r = 0; /* keep the default */
	} else if (o->type == OPT_STRV && ev.type == YAML_SEQUENCE_START_EVENT) {
		r = parse_list(p, o);
	} else if (o->type != OPT_STRV && ev.type == YAML_SCALAR_EVENT) {
		r = set_scalar(p->c, o, (const char *)ev.data.scalar.value, ev.data.scalar.length,
			       &p->e);
	} else {
		describe_expected(o, exp, sizeof(exp));
		describe_got(&ev, got, sizeof(got));
		r = fail(&p->e, -EINVAL, "%s: expected %s, got %s", o->path, exp, got);
	}
	yaml_event_delete(&ev);
	return r;
}

static int
group_error(struct parser *p, const char *path, const yaml_event_t *ev)
{
	struct child ch[MAX_CHILDREN];
	char list[512] = "", got[EXCERPT_MAX * 4 + 16];
	size_t nch = children(path, ch), n = 0;

	for (size_t i = 0; i < nch; i++)
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%.*s",
				      i ? ", " : "", (int)ch[i].len, ch[i].name);
	describe_got(ev, got, sizeof(got));
	return fail(&p->e, -EINVAL, "%s: expected a mapping with keys %s, got %s",
		    *path ? path : "configuration", list, got);
}

/* The value of a group key: a mapping, or null for all defaults. */
static int
parse_group(struct parser *p, const char *path)
{
	yaml_event_t ev;
	int r = next(p, &ev);

	if (r < 0)
		return r;
	if (ev.type == YAML_MAPPING_START_EVENT)
		r = parse_mapping(p, path);
	else if (ev.type == YAML_ALIAS_EVENT)
		r = alias_error(p, path);
	else if (!is_null(&ev))
		r = group_error(p, path, &ev);
	yaml_event_delete(&ev);
	return r;
}

static int
unknown_key(struct parser *p, const char *prefix, const char *key, size_t keylen,
	    const struct child *ch, size_t nch)
{
	char k[EXCERPT_MAX * 4 + 8], list[512];
	size_t n = 0;

	excerpt(k, sizeof(k), key, keylen);
	list[0] = '\0';
	for (size_t i = 0; i < nch; i++)
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%.*s",
				      i ? ", " : "", (int)ch[i].len, ch[i].name);
	return fail(&p->e, -EINVAL, "%s%s%s: unknown key (expected one of %s)", prefix,
		    *prefix ? "." : "", k, list);
}

/* The keys of a mapping at group path prefix; its start event was just consumed. */
static int
parse_mapping(struct parser *p, const char *prefix)
{
	struct child ch[MAX_CHILDREN];
	bool seen[MAX_CHILDREN] = { false };
	size_t nch = children(prefix, ch);
	yaml_event_t ev;
	int r;

	for (;;) {
		char path[PATH_MAX_LEN];
		const char *key;
		size_t keylen, i;

		r = next(p, &ev);
		if (r < 0)
			return r;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (ev.type == YAML_ALIAS_EVENT) {
			r = alias_error(p, prefix);
			goto out_delete;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			char got[EXCERPT_MAX * 4 + 16];
			describe_got(&ev, got, sizeof(got));
			r = fail(&p->e, -EINVAL, "%s: expected a string as mapping key, got %s",
				 *prefix ? prefix : "configuration", got);
			goto out_delete;
		}
		key = (const char *)ev.data.scalar.value;
		keylen = ev.data.scalar.length;
		for (i = 0; i < nch; i++)
			if (ch[i].len == keylen && memcmp(ch[i].name, key, keylen) == 0)
				break;
		if (i == nch) {
			r = unknown_key(p, prefix, key, keylen, ch, nch);
			goto out_delete;
		}
		snprintf(path, sizeof(path), "%s%s%.*s", prefix, *prefix ? "." : "", (int)ch[i].len,
			 ch[i].name);
		yaml_event_delete(&ev);
		if (seen[i])
			return fail(&p->e, -EINVAL, "%s: duplicate key", path);
		seen[i] = true;
		r = ch[i].leaf ? parse_value(p, ch[i].leaf) : parse_group(p, path);
		if (r < 0)
			return r;
	}
out_delete:
	yaml_event_delete(&ev);
	return r;
}

static int
parse_document(struct parser *p)
{
	yaml_event_t ev;
	int r;

	r = next(p, &ev); /* stream start */
	if (r < 0)
		return r;
	yaml_event_delete(&ev);
	r = next(p, &ev);
	if (r < 0)
		return r;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev); /* no document at all: defaults */
		return 0;
	}
	yaml_event_delete(&ev); /* document start */

	r = next(p, &ev);
	if (r < 0)
		return r;
	if (ev.type == YAML_MAPPING_START_EVENT)
		r = parse_mapping(p, "");
	else if (ev.type == YAML_ALIAS_EVENT)
		r = alias_error(p, "");
	else if (!is_null(&ev))
		r = group_error(p, "", &ev);
	yaml_event_delete(&ev);
	if (r < 0)
		return r;

	r = next(p, &ev); /* document end */
	if (r < 0)
		return r;
	yaml_event_delete(&ev);
	r = next(p, &ev);
	if (r < 0)
		return r;
	if (ev.type != YAML_STREAM_END_EVENT)
		r = fail(&p->e, -EINVAL, "configuration: expected one YAML document, got several");
	yaml_event_delete(&ev);
	return r;
}

/* Checks that involve more than one key. */
static int
validate(const struct rf_config *c, struct errbuf *e)
{
	const char *cert = c->server.tls.cert_file, *key = c->server.tls.key_file;

	if (c->scoring.w_alignment == 0 && c->scoring.w_bandwidth == 0 && c->scoring.w_rail == 0 &&
	    c->scoring.w_packing == 0)
		return fail(e, -EINVAL,
			    "scoring.weights: expected at least one weight > 0, got "
			    "all zero");
	if ((*cert == '\0') != (*key == '\0'))
		return fail(e, -EINVAL,
			    "server.tls: expected certFile and keyFile together, got only %s",
			    *cert ? "certFile" : "keyFile");
	if (c->server.max_buffered_bytes && c->server.max_buffered_bytes < c->server.max_body_bytes)
		return fail(
			e, -EINVAL,
			"server.maxBufferedBytes: expected at least server.maxBodyBytes (%lld), "
			"got %lld",
			(long long)c->server.max_body_bytes,
			(long long)c->server.max_buffered_bytes);
	if (*c->server.tls.client_ca_file && !*cert)
		return fail(e, -EINVAL,
			    "server.tls.clientCAFile: expected certFile and keyFile to be set too");
	/* a gate the configured version does not have would be accepted and change nothing */
	if (c->kube.gates.list_type_attributes && c->kube.dra_version != RF_DRA_AUTO &&
	    c->kube.dra_version < RF_DRA_1_36)
		return fail(e, -EINVAL,
			    "kube.featureGates.DRAListTypeAttributes: the gate exists from "
			    "Kubernetes 1.36; expected kube.draVersion auto, 1.36 or 1.37 with it");
	return 0;
}

int
rf_config_parse_yaml(const char *buf, size_t len, struct rf_config *ret, char *err, size_t errlen)
{
	struct rf_config tmp;
	struct parser p = { .c = &tmp, .e = { err, errlen } };
	int r;

	if (err && errlen > 0)
		err[0] = '\0';
	r = config_defaults(&tmp);
	if (r < 0)
		return fail(&p.e, r, "out of memory");
	if (!yaml_parser_initialize(&p.yp)) {
		r = fail(&p.e, -ENOMEM, "out of memory");
		goto out_release;
	}
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)(buf ? buf : ""), buf ? len : 0);
	r = parse_document(&p);
	yaml_parser_delete(&p.yp);
	if (r == 0)
		r = validate(&tmp, &p.e);
	if (r < 0)
		goto out_release;
	rf_config_release(ret);
	*ret = tmp;
	return 0;
out_release:
	rf_config_release(&tmp);
	return r;
}

/* ---- JSON ---- */

static json_t *
option_json(const struct rf_config *c, const struct option *o)
{
	const void *f = cfield(c, o);
	char buf[RF_QUANTITY_FMT_MAX];

	switch (o->type) {
	case OPT_STRING: {
		const char *s = *(char *const *)f;
		if (!s)
			s = "";
		if ((o->flags & F_SECRET) && *s)
			s = "<redacted>";
		return json_string(s);
	}
	case OPT_BOOL:
		return json_boolean(*(const bool *)f);
	case OPT_INT:
		return json_integer(*(const int *)f);
	case OPT_NUMBER: {
		/* whole numbers print as integers ("alignment": 5, not 5.0) */
		double v = *(const double *)f;
		if (v == floor(v) && fabs(v) < 1e15)
			return json_integer((json_int_t)v);
		return json_real(v);
	}
	case OPT_BYTES:
		return json_string(
			rf_quantity_format(rf_quantity_from_int(*(const int64_t *)f), buf));
	case OPT_QUANTITY:
		return json_string(rf_quantity_format(*(const struct rf_quantity *)f, buf));
	case OPT_DURATION:
		return json_string(rf_duration_format(*(const int64_t *)f, buf, sizeof(buf)));
	case OPT_ENUM: {
		int v = *(const int *)f;
		size_t n = 0;
		while (o->names[n])
			n++;
		return v >= 0 && (size_t)v < n ? json_string(o->names[v]) : json_null();
	}
	case OPT_STRV: {
		const struct rf_strv *v = f;
		json_t *a = json_array();
		for (size_t i = 0; a && i < v->n; i++) {
			if (json_array_append_new(a, json_string(v->v[i])) < 0) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	case OPT_DRA: {
		char v[RF_DRA_VERSION_LEN];
		return json_string(rf_dra_version_format(*(const enum rf_dra_version *)f,
							 c->kube.dra_patch, v));
	}
	}
	return NULL;
}

json_t *
rf_config_to_json(const struct rf_config *c)
{
	json_t *root = json_object();

	if (!root)
		return NULL;
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		const char *name = o->path, *dot;
		json_t *obj = root;

		while ((dot = strchr(name, '.'))) {
			size_t len = (size_t)(dot - name);
			json_t *sub = json_object_getn(obj, name, len);
			if (!sub) {
				sub = json_object();
				if (json_object_setn_new(obj, name, len, sub) < 0)
					goto out_free;
			}
			obj = sub;
			name = dot + 1;
		}
		if (json_object_set_new(obj, name, option_json(c, o)) < 0)
			goto out_free;
	}
	return root;
out_free:
	json_decref(root);
	return NULL;
}
