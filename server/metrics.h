/* Prometheus metrics (DESIGN section 9): a small registry of counters, gauges and histograms with
 * label sets, rendered in text exposition format 0.0.4 (passes promtool check metrics), plus the
 * standard process_* metrics read from /proc/self. Thread-safe: one mutex, never held across I/O. */
#ifndef RF_SERVER_METRICS_H
#define RF_SERVER_METRICS_H

#include <stddef.h>

enum rf_metric_type { RF_METRIC_COUNTER, RF_METRIC_GAUGE, RF_METRIC_HISTOGRAM };

/** Declare a metric family once at startup (name without labels). Histograms use buckets. */
void rf_metrics_declare(const char *name, enum rf_metric_type type, const char *help,
			const double *buckets, size_t n_buckets);

/**
 * labels is the inside of the braces, already formatted and escaped ("verb=\"filter\",code=\"200\""),
 * or "" for none. Names that were never declared are ignored.
 */
void rf_metrics_add(const char *name, const char *labels, double v);
void rf_metrics_set(const char *name, const char *labels, double v);
void rf_metrics_observe(const char *name, const char *labels, double v);

/**
 * Format a label set for the calls above from NULL-terminated name, value pairs, escaping the values
 * as the exposition format requires (backslash, double quote, newline):
 * rf_metrics_format_labels(buf, sizeof(buf), "verb", "filter", "code", "200", NULL) writes
 * verb="filter",code="200". A NULL value counts as "".
 * @return the length written, or -1 if buf is too small (buf then holds "").
 */
int rf_metrics_format_labels(char *buf, size_t len, ...) __attribute__((sentinel));

/** Declare every metric of DESIGN section 9 (idempotent). */
void rf_metrics_declare_railfit(const char *version, const char *commit);

/** Exposition text, malloc'd; NULL on OOM. */
char *rf_metrics_render(size_t *ret_len);

/** Drop everything (tests). */
void rf_metrics_reset(void);

#endif
