/* klog-style logging to stderr (DESIGN section 3, STYLE 3.6).
 *
 * Text: `I1129 12:00:00.000000    1234 file.c:42] "message" key="value" nodes=16`; JSON lines with
 * --log-format json. Each line is formatted into a local buffer and written with one write(2), so
 * threads never interleave. Only server/ and main log; logic modules return errors. */
#ifndef RF_SERVER_LOG_H
#define RF_SERVER_LOG_H

#include <stdbool.h>

enum rf_log_level { RF_LOG_ERROR = 0, RF_LOG_WARNING, RF_LOG_INFO };
enum rf_log_format { RF_LOG_TEXT, RF_LOG_JSON };

void rf_log_setup(enum rf_log_format fmt, int verbosity);
int rf_log_verbosity(void);
enum rf_log_format rf_log_format(void);

/** Whether a value is written bare, as klog writes Go integers and booleans ("16", "-3", "true");
 * everything else, floats and versions included, is quoted (text) or a JSON string (json). */
bool rf_log_value_is_bare(const char *v);

/**
 * Emit one line. msg is the human message (lowercase, no trailing period); the variadic part is
 * NULL-terminated key, value string pairs: rf_log_kv(RF_LOG_INFO, 0, __FILE__, __LINE__,
 * "pod filtered", "pod", "ns/name", "node", "n1", NULL). Values that read as integers or booleans
 * are written bare (rf_log_value_is_bare()); errors go under the key "err", as in klog.
 */
void rf_log_kv(enum rf_log_level lvl, int v, const char *file, int line, const char *msg, ...);

/** printf-style message with no key/values. */
void rf_log_fmt(enum rf_log_level lvl, int v, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Level tests happen before the arguments are evaluated. */
#define rf_info(...)  rf_log_kv(RF_LOG_INFO, 0, __FILE__, __LINE__, __VA_ARGS__, NULL)
#define rf_warn(...)  rf_log_kv(RF_LOG_WARNING, 0, __FILE__, __LINE__, __VA_ARGS__, NULL)
#define rf_error(...) rf_log_kv(RF_LOG_ERROR, 0, __FILE__, __LINE__, __VA_ARGS__, NULL)
#define rf_v(n, ...)                                                                               \
	do {                                                                                       \
		if (rf_log_verbosity() >= (n))                                                     \
			rf_log_kv(RF_LOG_INFO, (n), __FILE__, __LINE__, __VA_ARGS__, NULL);        \
	} while (0)
#define rf_infof(...)  rf_log_fmt(RF_LOG_INFO, 0, __FILE__, __LINE__, __VA_ARGS__)
#define rf_warnf(...)  rf_log_fmt(RF_LOG_WARNING, 0, __FILE__, __LINE__, __VA_ARGS__)
#define rf_errorf(...) rf_log_fmt(RF_LOG_ERROR, 0, __FILE__, __LINE__, __VA_ARGS__)

#endif
