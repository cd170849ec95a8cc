/* Interned strings of one generation: equal strings become one copy in the generation's arena, so
 * that the model keeps no pointer into the Kubernetes objects it was built from (the server may
 * drop or pack those after the build) and attribute names and values that repeat across thousands
 * of devices are stored once. The table itself lives only while a build step runs. Not
 * thread-safe: the building thread owns it. Internal to alloc/.
 *
 * Also the process-wide interner of ResourceSlice records (rf_intern): names and values that
 * repeat across thousands of slices (attribute and capacity names, productName, driverVersion)
 * are stored once for the process. It is never freed, so it is bounded: past its limits it
 * refuses, and the caller keeps its own copy. */
#ifndef RF_ALLOC_STRTAB_H
#define RF_ALLOC_STRTAB_H

#include <stdbool.h>
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

/** Like rf_strtab_get, but a string new to the table is taken from the process-wide interner
 * when it accepts it (no arena copy). */
const char *rf_strtab_get_shared(struct rf_strtab *t, const char *s, int *ret_oom);

/** Like rf_strtab_get, and s is never handed to the process-wide interner (names of one object,
 * such as a node's: shared, they would only fill it). */
const char *rf_strtab_get_unshared(struct rf_strtab *t, const char *s, int *ret_oom);

/**
 * Hand the strings asked for more than once (by rf_strtab_get), and not yet shared, to the
 * process-wide interner (those it accepts). rf_strtab_lookup() then answers with the shared copy.
 */
void rf_strtab_share_repeated(struct rf_strtab *t);

/** Whether s is in the table; *ret_shared gets its process-wide copy, or NULL when it has none. */
bool rf_strtab_lookup(const struct rf_strtab *t, const char *s, const char **ret_shared);

/** Bytes (with their NULs) of the strings the table holds in its arena and not shared. */
size_t rf_strtab_local_bytes(const struct rf_strtab *t);
/** Bytes the table has taken from its arena (as rf_arena_used() counts them). */
size_t rf_strtab_arena_bytes(const struct rf_strtab *t);
/** Take n bytes of the arena at once and pack the copies that follow there (no rounding of
 * each to 16 bytes); copies beyond them come from the arena one by one. -ENOMEM or 0. */
int rf_strtab_reserve(struct rf_strtab *t, size_t n);

/** The process-wide copy of s (never freed; thread-safe), or NULL when the interner is full,
 * s is too long, or memory ran out. */
const char *rf_intern(const char *s);

#endif
