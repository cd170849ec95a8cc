/* Go-style durations ("10s", "2m", "1h30m", "250ms", "0") as milliseconds. Pure logic. */
#ifndef RF_CONFIG_DURATION_H
#define RF_CONFIG_DURATION_H

#include <stddef.h>
#include <stdint.h>

/**
 * Parse a Go time.Duration string (units ns us µs ms s m h; sums like "1h30m"; a bare "0").
 * Sub-millisecond remainders are rounded up. Negative durations are rejected.
 * @return 0, -EINVAL (not a duration) or -ERANGE (overflow); *ret_ms untouched on error.
 */
int rf_duration_parse(const char *s, int64_t *ret_ms);

/** Format milliseconds the way Go prints a Duration ("10s", "2m0s", "1.5s"); returns buf. */
char *rf_duration_format(int64_t ms, char *buf, size_t len);

#endif
