/* Prometheus metrics registry and text exposition 0.0.4 (DESIGN section 9).
 *
 * Owns: the process-wide registry of metric families (declaration order) and their label series
 * (first-use order). One mutex guards it; it is held for lookups, updates and while rendering into
 * memory, never across I/O. Any thread may update or render. Allocation failures on the update
 * path drop the sample rather than abort (a metric must never take the extender down). The
 * process_* metrics are read from /proc/self at render time. */
#include "server/http/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config/grow.h"
#include "config/level.h"
#include "config/strbuf.h"

struct series {
	char *labels;
	double value;      /* counter / gauge */
	uint64_t *buckets; /* histogram: per-bucket (non-cumulative) counts */
	uint64_t count;
	double sum;
};

struct family {
	char *name;
	char *help;
	enum rf_metric_type type;
	double *bounds;
	size_t n_bounds;
	struct series *series;
	size_t n_series, cap_series;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct family *families;
static size_t n_families, cap_families;

static struct family *
find_family(const char *name)
{
	for (size_t i = 0; i < n_families; i++)
		if (strcmp(families[i].name, name) == 0)
			return &families[i];
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void
rf_metrics_declare(const char *name, enum rf_metric_type type, const char *help,
		   const double *buckets, size_t n_buckets)
{
	if (!name)
		return;
	pthread_mutex_lock(&reg_lock);
	if (find_family(name))
		goto out;
	if (rf_grow(&families, &cap_families, n_families + 1, sizeof(*families)) < 0)
		goto out;
	struct family f = { .type = type };
	f.name = strdup(name);
	f.help = strdup(help ? help : "");
	if (type == RF_METRIC_HISTOGRAM && n_buckets > 0) {
		f.bounds = malloc(n_buckets * sizeof(*f.bounds));
		if (f.bounds) {
			/* Keep finite, strictly increasing bounds; +Inf is implicit. */
			size_t k = 0;
			for (size_t i = 0; i < n_buckets; i++)
				if (isfinite(buckets[i]))
					f.bounds[k++] = buckets[i];
			qsort(f.bounds, k, sizeof(*f.bounds), cmp_double);
			size_t u = 0;
			for (size_t i = 0; i < k; i++)
				if (u == 0 || f.bounds[i] != f.bounds[u - 1])
					f.bounds[u++] = f.bounds[i];
			f.n_bounds = u;
		}
	}
	if (!f.name || !f.help || (type == RF_METRIC_HISTOGRAM && n_buckets > 0 && !f.bounds)) {
		free(f.name);
		free(f.help);
		free(f.bounds);
		goto out;
	}
	families[n_families++] = f;
out:
	pthread_mutex_unlock(&reg_lock);
}

static struct series *
get_series(struct family *f, const char *labels)
{
	if (!labels)
		labels = "";
	for (size_t i = 0; i < f->n_series; i++)
		if (strcmp(f->series[i].labels, labels) == 0)
			return &f->series[i];
	if (rf_grow(&f->series, &f->cap_series, f->n_series + 1, sizeof(*f->series)) < 0)
		return NULL;
	struct series s = { 0 };
	s.labels = strdup(labels);
	if (!s.labels)
		return NULL;
	if (f->type == RF_METRIC_HISTOGRAM) {
		s.buckets = calloc(f->n_bounds + 1, sizeof(*s.buckets));
		if (!s.buckets) {
			free(s.labels);
			return NULL;
		}
	}
	f->series[f->n_series] = s;
	return &f->series[f->n_series++];
}

enum op { OP_ADD, OP_SET, OP_OBSERVE };

static void
update(const char *name, const char *labels, double v, enum op op)
{
	if (!name)
		return;
	pthread_mutex_lock(&reg_lock);
	struct family *f = find_family(name);
	if (!f)
		goto out;
	bool hist = f->type == RF_METRIC_HISTOGRAM;
	if ((op == OP_OBSERVE) != hist)
		goto out;
	struct series *s = get_series(f, labels);
	if (!s)
		goto out;
	switch (op) {
	case OP_ADD:
		s->value += v;
		break;
	case OP_SET:
		s->value = v;
		break;
	case OP_OBSERVE: {
		size_t b = 0;
		while (b < f->n_bounds && !(v <= f->bounds[b]))
			b++;
		s->buckets[b]++;
		s->count++;
		s->sum += v;
		break;
	}
	}
out:
	pthread_mutex_unlock(&reg_lock);
}

void
rf_metrics_add(const char *name, const char *labels, double v)
{
	update(name, labels, v, OP_ADD);
}

void
rf_metrics_set(const char *name, const char *labels, double v)
{
	update(name, labels, v, OP_SET);
}

void
rf_metrics_observe(const char *name, const char *labels, double v)
{
	update(name, labels, v, OP_OBSERVE);
}

/* Append `k="v"` (preceded by a comma unless first) with v escaped as the exposition format
 * requires; on overflow *ok turns false and nothing more is written. */
static void
append_label(char *buf, size_t len, size_t *pos, bool *ok, bool first, const char *k, const char *v)
{
	char tmp[8];
	const char *parts[3] = { first ? "" : ",", k, "=\"" };
	if (!v)
		v = "";
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(parts[i]);
		if (!*ok || *pos + n >= len) {
			*ok = false;
			continue;
		}
		memcpy(buf + *pos, parts[i], n);
		*pos += n;
	}
	for (const char *p = v;; p++) {
		const char *piece;
		if (*p == '\0') {
			piece = "\"";
		} else if (*p == '\\') {
			piece = "\\\\";
		} else if (*p == '"') {
			piece = "\\\"";
		} else if (*p == '\n') {
			piece = "\\n";
		} else {
			tmp[0] = *p;
			tmp[1] = '\0';
			piece = tmp;
		}
		size_t n = strlen(piece);
		if (!*ok || *pos + n >= len)
			*ok = false;
		else {
			memcpy(buf + *pos, piece, n);
			*pos += n;
		}
		if (*p == '\0')
			break;
	}
}

int
rf_metrics_format_labels(char *buf, size_t len, ...)
{
	size_t pos = 0;
	bool ok = len > 0;
	if (ok)
		buf[0] = '\0';
	va_list ap;
	va_start(ap, len);
	for (bool first = true;; first = false) {
		const char *k = va_arg(ap, const char *);
		if (!k)
			break;
		const char *v = va_arg(ap, const char *);
		append_label(buf, len, &pos, &ok, first, k, v);
	}
	va_end(ap);
	if (ok)
		buf[pos] = '\0';
	else if (len > 0)
		buf[0] = '\0';
	return ok ? (int)pos : -1;
}

/* ---------------------------------------------------------------------------------------------
 * Rendering
 */

/* Prometheus float syntax: +Inf, -Inf, NaN, else the shortest form that round-trips. */
static void
fmt_value(char *buf, size_t len, double v)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* HELP text escaping: backslash and newline. */
static void
put_help(struct rf_strbuf *o, const char *h)
{
	for (const char *p = h; *p; p++) {
		if (*p == '\\')
			rf_strbuf_puts(o, "\\\\");
		else if (*p == '\n')
			rf_strbuf_puts(o, "\\n");
		else
			rf_strbuf_putn(o, p, 1);
	}
}

static void
put_header(struct rf_strbuf *o, const char *name, const char *type, const char *help)
{
	rf_strbuf_printf(o, "# HELP %s ", name);
	put_help(o, help);
	rf_strbuf_printf(o, "\n# TYPE %s %s\n", name, type);
}

static void
put_sample(struct rf_strbuf *o, const char *name, const char *suffix, const char *labels,
	   const char *extra_label, double v)
{
	char val[64];
	fmt_value(val, sizeof(val), v);
	rf_strbuf_puts(o, name);
	rf_strbuf_puts(o, suffix);
	bool has_labels = labels && *labels;
	if (has_labels || extra_label) {
		rf_strbuf_putn(o, "{", 1);
		if (has_labels)
			rf_strbuf_puts(o, labels);
		if (extra_label) {
			if (has_labels)
				rf_strbuf_putn(o, ",", 1);
			rf_strbuf_puts(o, extra_label);
		}
		rf_strbuf_putn(o, "}", 1);
	}
	rf_strbuf_putn(o, " ", 1);
	rf_strbuf_puts(o, val);
	rf_strbuf_putn(o, "\n", 1);
}

static void
render_family(struct rf_strbuf *o, const struct family *f)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	put_header(o, f->name, types[f->type], f->help);
	for (size_t i = 0; i < f->n_series; i++) {
		const struct series *s = &f->series[i];
		if (f->type != RF_METRIC_HISTOGRAM) {
			put_sample(o, f->name, "", s->labels, NULL, s->value);
			continue;
		}
		uint64_t cum = 0;
		char le[96], val[64];
		for (size_t b = 0; b < f->n_bounds; b++) {
			cum += s->buckets[b];
			fmt_value(val, sizeof(val), f->bounds[b]);
			snprintf(le, sizeof(le), "le=\"%s\"", val);
			put_sample(o, f->name, "_bucket", s->labels, le, (double)cum);
		}
		cum += s->buckets[f->n_bounds];
		put_sample(o, f->name, "_bucket", s->labels, "le=\"+Inf\"", (double)cum);
		put_sample(o, f->name, "_sum", s->labels, NULL, s->sum);
		put_sample(o, f->name, "_count", s->labels, NULL, (double)s->count);
	}
}

/* /proc/self/stat fields after the command name: state is field 3; utime 14, stime 15,
 * starttime 22, vsize 23, rss 24 (proc(5)). */
struct proc_stat {
	double utime_ticks, stime_ticks, start_ticks, vsize, rss_pages;
};

static int
read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

static int
read_proc_stat(struct proc_stat *ps)
{
	char buf[2048];
	if (read_file("/proc/self/stat", buf, sizeof(buf)) < 0)
		return -1;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	/* Fields from 3 on, space separated. */
	char *save = NULL;
	int field = 3;
	for (char *tok = strtok_r(p, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		double v = strtod(tok, NULL);
		switch (field) {
		case 14:
			ps->utime_ticks = v;
			break;
		case 15:
			ps->stime_ticks = v;
			break;
		case 22:
			ps->start_ticks = v;
			break;
		case 23:
			ps->vsize = v;
			break;
		case 24:
			ps->rss_pages = v;
			return 0;
		default:
			break;
		}
	}
	return -1;
}

static double
boot_time(void)
{
	char buf[8192];
	if (read_file("/proc/stat", buf, sizeof(buf)) < 0)
		return -1;
	const char *p = strstr(buf, "\nbtime ");
	if (!p)
		return -1;
	return strtod(p + 7, NULL);
}

static double
count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	double n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory stream's own descriptor */
}

static void
render_process(struct rf_strbuf *o)
{
	struct proc_stat ps = { 0 };
	double ticks = (double)sysconf(_SC_CLK_TCK);
	double page = (double)sysconf(_SC_PAGESIZE);
	if (ticks <= 0)
		ticks = 100;
	if (read_proc_stat(&ps) == 0) {
		put_header(o, "process_cpu_seconds_total", "counter",
			   "Total user and system CPU time spent in seconds.");
		put_sample(o, "process_cpu_seconds_total", "", "", NULL,
			   (ps.utime_ticks + ps.stime_ticks) / ticks);
		put_header(o, "process_resident_memory_bytes", "gauge",
			   "Resident memory size in bytes.");
		put_sample(o, "process_resident_memory_bytes", "", "", NULL, ps.rss_pages * page);
		put_header(o, "process_virtual_memory_bytes", "gauge",
			   "Virtual memory size in bytes.");
		put_sample(o, "process_virtual_memory_bytes", "", "", NULL, ps.vsize);
		double bt = boot_time();
		if (bt >= 0) {
			put_header(o, "process_start_time_seconds", "gauge",
				   "Start time of the process since unix epoch in seconds.");
			put_sample(o, "process_start_time_seconds", "", "", NULL,
				   bt + ps.start_ticks / ticks);
		}
	}
	double fds = count_open_fds();
	if (fds >= 0) {
		put_header(o, "process_open_fds", "gauge", "Number of open file descriptors.");
		put_sample(o, "process_open_fds", "", "", NULL, fds);
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		put_header(o, "process_max_fds", "gauge",
			   "Maximum number of open file descriptors.");
		put_sample(o, "process_max_fds", "", "", NULL,
			   rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
	}
}

char *
rf_metrics_render(size_t *ret_len)
{
	struct rf_strbuf o = { 0 };
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < n_families; i++)
		render_family(&o, &families[i]);
	pthread_mutex_unlock(&reg_lock);
	render_process(&o);
	size_t len = o.len;
	char *text = rf_strbuf_steal(&o);
	if (text && ret_len)
		*ret_len = len;
	return text;
}

void
rf_metrics_reset(void)
{
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < n_families; i++) {
		struct family *f = &families[i];
		for (size_t j = 0; j < f->n_series; j++) {
			free(f->series[j].labels);
			free(f->series[j].buckets);
		}
		free(f->series);
		free(f->name);
		free(f->help);
		free(f->bounds);
	}
	free(families);
	families = NULL;
	n_families = cap_families = 0;
	pthread_mutex_unlock(&reg_lock);
}

/* ---------------------------------------------------------------------------------------------
 * railfit's metrics (DESIGN section 9): the one table, in exposition order
 */

static const double request_buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
					  0.1,    0.25,  0.5,    1,     2.5,  5 };

#define RF_METRIC_MAX_LABELS 2

struct metric_def {
	const char *name;
	enum rf_metric_type type;
	const char *help;
	const char *labels[RF_METRIC_MAX_LABELS]; /* label names in order, NULL-padded */
	const double *buckets;
	size_t n_buckets;
};

static const struct metric_def metric_defs[RF_METRIC__COUNT] = {
	[RF_METRIC_REQUESTS_TOTAL] = {
		.name = "railfit_requests_total",
		.type = RF_METRIC_COUNTER,
		.help = "HTTP requests served, by extender verb (or other) and status code.",
		.labels = { "verb", "code" },
	},
	[RF_METRIC_REQUEST_DURATION_SECONDS] = {
		.name = "railfit_request_duration_seconds",
		.type = RF_METRIC_HISTOGRAM,
		.help = "Time from request headers to queued response, by extender verb.",
		.labels = { "verb" },
		.buckets = request_buckets,
		.n_buckets = sizeof(request_buckets) / sizeof(request_buckets[0]),
	},
	[RF_METRIC_FILTER_NODES_TOTAL] = {
		.name = "railfit_filter_nodes_total",
		.type = RF_METRIC_COUNTER,
		.help = "Nodes judged by filter, by result (pass, fail, unresolvable).",
		.labels = { "result" },
	},
	[RF_METRIC_PODS_TOTAL] = {
		.name = "railfit_pods_total",
		.type = RF_METRIC_COUNTER,
		.help = "Pods seen by filter, by device demand (none, known, unknown).",
		.labels = { "demand" },
	},
	[RF_METRIC_WATCH_EVENTS_TOTAL] = {
		.name = "railfit_watch_events_total",
		.type = RF_METRIC_COUNTER,
		.help = "Watch events received from kube-apiserver, by resource and event type.",
		.labels = { "resource", "type" },
	},
	[RF_METRIC_WATCH_RESTARTS_TOTAL] = {
		.name = "railfit_watch_restarts_total",
		.type = RF_METRIC_COUNTER,
		.help = "Watch restarts (relists and reconnects), by resource and reason.",
		.labels = { "resource", "reason" },
	},
	[RF_METRIC_CACHE_OBJECTS] = {
		.name = "railfit_cache_objects",
		.type = RF_METRIC_GAUGE,
		.help = "Objects in the cache, by resource.",
		.labels = { "resource" },
	},
	[RF_METRIC_CACHE_SYNCED] = {
		.name = "railfit_cache_synced",
		.type = RF_METRIC_GAUGE,
		.help = "1 once the resource's initial list has completed, else 0.",
		.labels = { "resource" },
	},
	[RF_METRIC_CACHE_STALENESS_SECONDS] = {
		.name = "railfit_cache_staleness_seconds",
		.type = RF_METRIC_GAUGE,
		.help = "Seconds since the resource's watch last delivered data or a bookmark.",
		.labels = { "resource" },
	},
	[RF_METRIC_PREDICTION_TOTAL] = {
		.name = "railfit_prediction_total",
		.type = RF_METRIC_COUNTER,
		.help = "Predicted device picks compared with the real allocation, by outcome "
			"(exact, same_level, differs).",
		.labels = { "outcome" },
	},
	[RF_METRIC_BIND_TOTAL] = {
		.name = "railfit_bind_total",
		.type = RF_METRIC_COUNTER,
		.help = "Bind calls, by result.",
		.labels = { "result" },
	},
	[RF_METRIC_BUILD_INFO] = {
		.name = "railfit_build_info",
		.type = RF_METRIC_GAUGE,
		.help = "Always 1; labels carry the version and git commit of the binary.",
		.labels = { "version", "commit" },
	},
	[RF_METRIC_SELECTOR_ERRORS_TOTAL] = {
		.name = "railfit_selector_errors_total",
		.type = RF_METRIC_COUNTER,
		.help = "Filter calls where a claim's CEL selector raised a runtime error on a device "
			"the allocator's search reaches (kube-scheduler fails the pod's attempt).",
	},
	[RF_METRIC_ANNOTATION_ERRORS_TOTAL] = {
		.name = "railfit_annotation_errors_total",
		.type = RF_METRIC_COUNTER,
		.help = "Pods with a malformed railfit.io or bandwidth annotation, counted once "
			"per pod; the value is ignored.",
	},
	[RF_METRIC_TOPOLOGY_ANNOTATION_ERRORS] = {
		.name = "railfit_topology_annotation_errors",
		.type = RF_METRIC_GAUGE,
		.help = "Nodes whose railfit.io/pci-topology annotation is ignored (malformed, "
			"unknown version, or no PCI address matches a DRA device).",
	},
	[RF_METRIC_UNJUDGED_NODES_TOTAL] = {
		.name = "railfit_unjudged_nodes_total",
		.type = RF_METRIC_COUNTER,
		.help = "Nodes passed (filter) or scored 0 (prioritize) without evaluation because "
			"the request's time budget was spent.",
	},
	[RF_METRIC_CACHE_LAG_SECONDS] = {
		.name = "railfit_cache_lag_seconds",
		.type = RF_METRIC_GAUGE,
		.help = "How long the oldest watch event not yet in the published cache generation "
			"has waited (0 when the generation is current).",
	},
	[RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL] = {
		.name = "railfit_placement_gpu_level_total",
		.type = RF_METRIC_COUNTER,
		.help = "Claims that received 2 or more GPUs, by the worst GPU-to-GPU level between "
			"them (NVL, PIX, PXB, PHB, NODE, SYS, UNKNOWN), seen when the allocation "
			"arrives through the claims watch.",
		.labels = { "level" },
	},
	[RF_METRIC_PLACEMENT_ALIGNMENT_TOTAL] = {
		.name = "railfit_placement_alignment_total",
		.type = RF_METRIC_COUNTER,
		.help = "Claims railfit judged that became allocated with GPUs and NICs, by the level "
			"the devices really got (worst GPU to its nearest NIC of the claim).",
		.labels = { "level" },
	},
	[RF_METRIC_NIC_OVERCOMMITTED] = {
		.name = "railfit_nic_overcommitted",
		.type = RF_METRIC_GAUGE,
		.help = "NICs whose bandwidth in use (consumed capacity plus railfit.io/nic-bandwidth "
			"of the pods holding them) exceeds their capacity.",
	},
	[RF_METRIC_FRONTEND_OVERCOMMITTED] = {
		.name = "railfit_frontend_overcommitted",
		.type = RF_METRIC_GAUGE,
		.help = "Nodes whose front-end NIC carries more egress or ingress bandwidth "
			"(kubernetes.io/egress-bandwidth, ingress-bandwidth of their pods) than it has.",
	},
	[RF_METRIC_HTTP_REJECTED_TOTAL] = {
		.name = "railfit_http_rejected_total",
		.type = RF_METRIC_COUNTER,
		.help = "Requests refused or connections cut off before a handler ran, by reason "
			"(deadline, budget, target, headers, framing).",
		.labels = { "reason" },
	},
	[RF_METRIC_RV_RESETS_TOTAL] = {
		.name = "railfit_resource_version_resets_total",
		.type = RF_METRIC_COUNTER,
		.help = "Times the API server's resourceVersion went backwards (an etcd restore), "
			"each followed by a relist of everything, by the resource that noticed.",
		.labels = { "resource" },
	},
	[RF_METRIC_CACHE_BUILDS_TOTAL] = {
		.name = "railfit_cache_builds_total",
		.type = RF_METRIC_COUNTER,
		.help = "Cache generations published in live mode, by what became of the layout: "
			"reused, patched, compacted (a worn chain built in full beside the others, "
			"published as it was built) "
			"or rebuilt (built in full while events waited).",
		.labels = { "layout" },
	},
};

const char *
rf_metric_name(enum rf_metric m)
{
	return (unsigned)m < RF_METRIC__COUNT ? metric_defs[m].name : NULL;
}

int
rf_metric_labels(char *buf, size_t len, enum rf_metric m, ...)
{
	if ((unsigned)m >= RF_METRIC__COUNT || len == 0)
		return -EINVAL;
	const struct metric_def *d = &metric_defs[m];
	size_t pos = 0, n = 0;
	bool ok = true;
	buf[0] = '\0';
	va_list ap;
	va_start(ap, m);
	for (const char *v; (v = va_arg(ap, const char *));) {
		if (n == RF_METRIC_MAX_LABELS || !d->labels[n]) {
			n = RF_METRIC_MAX_LABELS + 1;
			break;
		}
		append_label(buf, len, &pos, &ok, n == 0, d->labels[n], v);
		n++;
	}
	va_end(ap);
	if (n > RF_METRIC_MAX_LABELS || (n < RF_METRIC_MAX_LABELS && d->labels[n])) {
		buf[0] = '\0';
		return -EINVAL;
	}
	if (!ok) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	buf[pos] = '\0';
	return (int)pos;
}

void
rf_metric_add(enum rf_metric m, const char *labels, double v)
{
	update(rf_metric_name(m), labels, v, OP_ADD);
}

void
rf_metric_set(enum rf_metric m, const char *labels, double v)
{
	update(rf_metric_name(m), labels, v, OP_SET);
}

void
rf_metric_observe(enum rf_metric m, const char *labels, double v)
{
	update(rf_metric_name(m), labels, v, OP_OBSERVE);
}

void
rf_metrics_declare_railfit(const char *version, const char *commit)
{
	for (size_t i = 0; i < RF_METRIC__COUNT; i++) {
		const struct metric_def *d = &metric_defs[i];
		rf_metrics_declare(d->name, d->type, d->help, d->buckets, d->n_buckets);
	}

	/* Known label values start at zero so that rates work from the first scrape. */
	static const char *const results[] = { "pass", "fail", "unresolvable" };
	static const char *const demands[] = { "none", "known", "unknown" };
	static const char *const outcomes[] = { "exact", "same_level", "differs" };
	char l[512];
	for (size_t i = 0; i < 3; i++) {
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_FILTER_NODES_TOTAL, results[i],
				     NULL) >= 0)
			rf_metric_add(RF_METRIC_FILTER_NODES_TOTAL, l, 0);
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_PODS_TOTAL, demands[i], NULL) >= 0)
			rf_metric_add(RF_METRIC_PODS_TOTAL, l, 0);
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_PREDICTION_TOTAL, outcomes[i], NULL) >=
		    0)
			rf_metric_add(RF_METRIC_PREDICTION_TOTAL, l, 0);
	}
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_BUILD_INFO, version ? version : "unknown",
			     commit ? commit : "unknown", NULL) >= 0)
		rf_metric_set(RF_METRIC_BUILD_INFO, l, 1);
	rf_metric_add(RF_METRIC_UNJUDGED_NODES_TOTAL, "", 0);
	static const enum rf_level gpu_levels[] = { RF_LEVEL_NVL,    RF_LEVEL_PIX,  RF_LEVEL_PXB,
						    RF_LEVEL_PHB,    RF_LEVEL_NODE, RF_LEVEL_SYS,
						    RF_LEVEL_UNKNOWN };
	for (size_t i = 0; i < sizeof(gpu_levels) / sizeof(gpu_levels[0]); i++)
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL,
				     rf_level_name(gpu_levels[i]), NULL) >= 0)
			rf_metric_add(RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL, l, 0);
	rf_metric_set(RF_METRIC_CACHE_LAG_SECONDS, "", 0);
	static const char *const layouts[] = { "reused", "patched", "compacted", "rebuilt" };
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_CACHE_BUILDS_TOTAL, layouts[i],
				     NULL) >= 0)
			rf_metric_add(RF_METRIC_CACHE_BUILDS_TOTAL, l, 0);
	rf_metric_add(RF_METRIC_SELECTOR_ERRORS_TOTAL, "", 0);
	rf_metric_add(RF_METRIC_ANNOTATION_ERRORS_TOTAL, "", 0);
	static const char *const levels[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "UNKNOWN" };
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_PLACEMENT_ALIGNMENT_TOTAL, levels[i],
				     NULL) >= 0)
			rf_metric_add(RF_METRIC_PLACEMENT_ALIGNMENT_TOTAL, l, 0);
	rf_metric_set(RF_METRIC_NIC_OVERCOMMITTED, "", 0);
	rf_metric_set(RF_METRIC_FRONTEND_OVERCOMMITTED, "", 0);
	static const char *const rejected[] = { "deadline", "budget", "target", "headers",
						"framing" };
	for (size_t i = 0; i < sizeof(rejected) / sizeof(rejected[0]); i++)
		if (rf_metric_labels(l, sizeof(l), RF_METRIC_HTTP_REJECTED_TOTAL, rejected[i],
				     NULL) >= 0)
			rf_metric_add(RF_METRIC_HTTP_REJECTED_TOTAL, l, 0);
}
