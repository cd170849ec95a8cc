/* Prometheus metrics (DESIGN section 9): a small registry of counters, gauges and histograms with
 * label sets, rendered in text exposition format 0.0.4 (passes promtool check metrics), plus the
 * standard process_* metrics read from /proc/self. Thread-safe: one mutex, never held across I/O.
 */
#ifndef RF_SERVER_METRICS_H
#define RF_SERVER_METRICS_H

#include <stddef.h>

enum rf_metric_type { RF_METRIC_COUNTER, RF_METRIC_GAUGE, RF_METRIC_HISTOGRAM };

/* railfit's metric families, declared once in metrics.c's table (name, type, help, label names)
 * in this order, which is also the exposition order. */
enum rf_metric {
	RF_METRIC_REQUESTS_TOTAL,             /* labels: verb, code */
	RF_METRIC_REQUEST_DURATION_SECONDS,   /* histogram; labels: verb */
	RF_METRIC_FILTER_NODES_TOTAL,         /* labels: result */
	RF_METRIC_PODS_TOTAL,                 /* labels: demand */
	RF_METRIC_WATCH_EVENTS_TOTAL,         /* labels: resource, type */
	RF_METRIC_WATCH_RESTARTS_TOTAL,       /* labels: resource, reason */
	RF_METRIC_CACHE_OBJECTS,              /* gauge; labels: resource */
	RF_METRIC_CACHE_SYNCED,               /* gauge; labels: resource */
	RF_METRIC_CACHE_STALENESS_SECONDS,    /* gauge; labels: resource */
	RF_METRIC_PREDICTION_TOTAL,           /* labels: outcome */
	RF_METRIC_BIND_TOTAL,                 /* labels: result */
	RF_METRIC_BUILD_INFO,                 /* gauge; labels: version, commit */
	RF_METRIC_SELECTOR_ERRORS_TOTAL,      /* no labels */
	RF_METRIC_ANNOTATION_ERRORS_TOTAL,    /* no labels */
	RF_METRIC_TOPOLOGY_ANNOTATION_ERRORS, /* gauge; no labels */
	RF_METRIC_UNJUDGED_NODES_TOTAL,       /* no labels */
	RF_METRIC_CACHE_LAG_SECONDS,          /* gauge; no labels */
	RF_METRIC_PLACEMENT_GPU_LEVEL_TOTAL,  /* labels: level */
	RF_METRIC_PLACEMENT_ALIGNMENT_TOTAL,  /* labels: level */
	RF_METRIC_NIC_OVERCOMMITTED,          /* gauge; no labels */
	RF_METRIC_FRONTEND_OVERCOMMITTED,     /* gauge; no labels */
	RF_METRIC_HTTP_REJECTED_TOTAL,        /* labels: reason */
	RF_METRIC_RV_RESETS_TOTAL,            /* labels: resource */
	RF_METRIC_CACHE_BUILDS_TOTAL,         /* labels: layout */
	RF_METRIC__COUNT
};

/** Declare every family of enum rf_metric and start its known label values at zero
 * (idempotent). */
void rf_metrics_declare_railfit(const char *version, const char *commit);

/**
 * Update one of railfit's families. labels as for rf_metrics_add() below, best built with
 * rf_metric_labels(). Counters take add, gauges set, histograms observe; a mismatch is ignored.
 */
void rf_metric_add(enum rf_metric m, const char *labels, double v);
void rf_metric_set(enum rf_metric m, const char *labels, double v);
void rf_metric_observe(enum rf_metric m, const char *labels, double v);

/**
 * Format m's label set from its label values, NULL-terminated, in the table's order:
 * rf_metric_labels(buf, sizeof(buf), RF_METRIC_REQUESTS_TOTAL, "filter", "200", NULL) writes
 * verb="filter",code="200" (values escaped as rf_metrics_format_labels() does).
 * @return the length written; -EINVAL if the number of values is not m's number of labels,
 * -ENOSPC if buf is too small (buf then holds "").
 */
int rf_metric_labels(char *buf, size_t len, enum rf_metric m, ...) __attribute__((sentinel));

/** The family name of m ("railfit_requests_total"), NULL if m is out of range. */
const char *rf_metric_name(enum rf_metric m);

/* The registry underneath, by family name: railfit's code goes through enum rf_metric above;
 * these serve the registry's own tests and families that are not railfit's. */

/** Declare a metric family once at startup (name without labels). Histograms use buckets. */
void rf_metrics_declare(const char *name, enum rf_metric_type type, const char *help,
			const double *buckets, size_t n_buckets);

/**
 * labels is the inside of the braces, already formatted and escaped
 * ("verb=\"filter\",code=\"200\""), or "" for none. Names that were never declared are ignored.
 */
void rf_metrics_add(const char *name, const char *labels, double v);
void rf_metrics_set(const char *name, const char *labels, double v);
void rf_metrics_observe(const char *name, const char *labels, double v);

/**
 * Format a label set for the calls above from NULL-terminated name, value pairs, escaping the
 * values as the exposition format requires (backslash, double quote, newline):
 * rf_metrics_format_labels(buf, sizeof(buf), "verb", "filter", "code", "200", NULL) writes
 * verb="filter",code="200". A NULL value counts as "".
 * @return the length written, or -1 if buf is too small (buf then holds "").
 */
int rf_metrics_format_labels(char *buf, size_t len, ...) __attribute__((sentinel));

/** Exposition text, malloc'd; NULL on OOM. */
char *rf_metrics_render(size_t *ret_len);

/** Drop everything (tests). */
void rf_metrics_reset(void);

#endif
