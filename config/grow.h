/* Growing a malloc'd array: one place for the capacity doubling and its overflow checks. */
#ifndef RF_CONFIG_GROW_H
#define RF_CONFIG_GROW_H

#include <stddef.h>

/**
 * Make room for need elements of elem bytes in the array at *ptr (pass &array: any object
 * pointer type) whose capacity is *cap elements. The capacity doubles, starting at 16, until need
 * fits; nothing happens when it already does. *ptr and *cap change only on success.
 * @return 0, or -ENOMEM (also when the size would overflow size_t).
 */
int rf_grow(void *ptr, size_t *cap, size_t need, size_t elem);

#endif
