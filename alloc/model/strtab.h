/* Interned strings of one generation: equal strings become one copy in the generation's arena, so
 * that the model keeps no pointer into the Kubernetes objects it was built from (the server may
 * drop or pack those after the build) and attribute names and values that repeat across thousands
 * of devices are stored once. The table itself lives only while a build step runs. Not
 * thread-safe: the building thread owns it. Internal to alloc/. */
#ifndef RF_ALLOC_STRTAB_H
#define RF_ALLOC_STRTAB_H

#include <stddef.h>

struct rf_arena;
struct rf_strtab;

/** A table copying into arena a (which must outlive every string returned). NULL on OOM. */
struct rf_strtab *rf_strtab_new(struct rf_arena *a);
/** The same, starting with room for about cap / 2 strings (it grows as needed). */
struct rf_strtab *rf_strtab_new_sized(struct rf_arena *a, size_t cap);
void rf_strtab_free(struct rf_strtab *t);

/** The arena copy of s (NULL for NULL, and on OOM: check *ret_oom when it matters). */
const char *rf_strtab_get(struct rf_strtab *t, const char *s, int *ret_oom);

#endif
