/* Reading fields of Kubernetes objects without ceremony: absent or mistyped fields give the
 * caller's default. Borrowed results, valid while the object lives unchanged. Pure; any thread. */
#ifndef RF_ALLOC_JSON_GET_H
#define RF_ALLOC_JSON_GET_H

#include <stdbool.h>

#include <jansson.h>

/** Borrowed string at key, or NULL when absent or not a string. */
const char *rf_jstr(const json_t *obj, const char *key);
/** Object at a dotted path ("spec.pool"), or NULL. */
const json_t *rf_jpath(const json_t *obj, const char *path);
/** Integer at key (accepting whole reals), or def. */
long long rf_jint(const json_t *obj, const char *key, long long def);
bool rf_jbool(const json_t *obj, const char *key, bool def);
/** Whether array arr holds v itself (the same object, not an equal one). */
bool rf_jarray_holds(const json_t *arr, const json_t *v);

#endif
