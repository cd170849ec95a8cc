/* Kubernetes resource quantities as exact integers.
 *
 * A quantity is kept as a signed 128-bit count of nano-units, so every suffix Kubernetes accepts
 * (n u m "" k M G T P E, Ki Mi Gi Ti Pi Ei, and decimal exponents e/E) compares exactly:
 * "48828125Ki" == "50G", "1.5Ti" == "1649267441664". Pure logic, no I/O, thread-safe. */
#ifndef RF_CONFIG_QUANTITY_H
#define RF_CONFIG_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

__extension__ typedef __int128 rf_i128;

struct rf_quantity {
	rf_i128 nano; /* value x 10^9 */
};

#define RF_QUANTITY_FMT_MAX 64

/**
 * Parse a Kubernetes quantity string ("400G", "100m", "48828125Ki", "1.5Ti", "1e3", "-2").
 * Precision below 1n is rounded up, as Kubernetes does.
 * @return 0, -EINVAL (not a quantity; *ret untouched) or -ERANGE (magnitude beyond 10^27).
 */
int rf_quantity_parse(const char *s, struct rf_quantity *ret);

/** Same, for a buffer that is not NUL-terminated. */
int rf_quantity_parsen(const char *s, size_t len, struct rf_quantity *ret);

/** Quantity of a whole number of base units. */
struct rf_quantity rf_quantity_from_int(int64_t units);

/** <0, 0, >0 as a is less than, equal to, greater than b. */
int rf_quantity_cmp(struct rf_quantity a, struct rf_quantity b);

struct rf_quantity rf_quantity_add(struct rf_quantity a, struct rf_quantity b);
struct rf_quantity rf_quantity_sub(struct rf_quantity a, struct rf_quantity b);
bool rf_quantity_is_zero(struct rf_quantity q);

/** Value in whole base units, rounded up (Kubernetes Quantity.Value()); saturates at INT64 bounds.
 */
int64_t rf_quantity_value(struct rf_quantity q);

/** Approximate value as a double (for fractions and display only, never for comparisons). */
double rf_quantity_to_double(struct rf_quantity q);

/**
 * Short human form: decimal SI when exact ("400G", "1500m", "50G"), else binary SI ("81559Mi"),
 * else a plain integer or milli value. Always NUL-terminated; returns buf.
 */
char *rf_quantity_format(struct rf_quantity q, char buf[RF_QUANTITY_FMT_MAX]);

#endif
