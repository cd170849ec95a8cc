/* A CEL evaluator for the subset of expressions real DRA drivers and users write in device
 * selectors (DESIGN section 6, dra-api.md section 11).
 *
 * Compile once, evaluate many times: a compiled program is immutable and may be evaluated from
 * several threads at once. Evaluation follows CEL's semantics, including error absorption by && and
 * || and runtime errors where Kubernetes raises them (a missing attribute is an error, not false).
 * Anything outside the subset fails to compile with -ENOTSUP and the position of the construct, so
 * the caller can report the pod's demand as unknown instead of guessing. Pure logic, no I/O. */
#ifndef RF_ALLOC_CEL_H
#define RF_ALLOC_CEL_H

#include <stddef.h>

#include "alloc/cel/attr.h"

struct rf_cel_program;

#define RF_CEL_ERR_MAX 256

struct rf_cel_error {
	size_t pos; /* byte offset into the expression (compile errors) */
	char msg[RF_CEL_ERR_MAX];
};

/**
 * Compile an expression.
 * @return 0 and a new program in *ret; -EINVAL on a syntax error, -ENOTSUP on a construct outside
 * the subset, -E2BIG if the expression is longer than 10 KiB (Kubernetes' limit), -ENOMEM.
 * err (may be NULL) receives the position and a message on failure.
 */
int rf_cel_compile(const char *expr, struct rf_cel_program **ret, struct rf_cel_error *err);

/** Free a program; accepts NULL. */
void rf_cel_program_free(struct rf_cel_program *p);

/**
 * Evaluate a selector against one device.
 * @return 1 (true), 0 (false), or -EINVAL for a CEL runtime error (missing attribute, type
 * mismatch, result not a bool, cost limit exceeded); err (may be NULL) then says what and where,
 * e.g. "no such key: index". -ENOMEM if memory ran out.
 */
int rf_cel_eval(const struct rf_cel_program *p, const struct rf_cel_device *d,
		struct rf_cel_error *err);

/**
 * A thread-safe cache of compiled programs keyed by expression text, so DeviceClass and claim
 * selectors are compiled once per process rather than once per filter call. Programs returned are
 * owned by the cache and live until rf_cel_cache_free().
 *
 * Bound: at most RF_CEL_CACHE_MAX distinct expressions and RF_CEL_CACHE_MAX_BYTES of programs
 * (a typical selector costs a few KiB; a pathological 10 KiB one up to ~1 MiB). Past either,
 * rf_cel_cache_get() returns -ENOSPC for texts not yet cached, and the caller compiles them itself
 * with rf_cel_compile()/rf_cel_program_free(). Texts over 10 KiB and -ENOMEM are never cached.
 */
#define RF_CEL_CACHE_MAX       4096
#define RF_CEL_CACHE_MAX_BYTES (64 << 20)

struct rf_cel_cache;
struct rf_cel_cache *rf_cel_cache_new(void);
void rf_cel_cache_free(struct rf_cel_cache *c);

/**
 * Look up or compile; same returns as rf_cel_compile(), plus -ENOSPC when the cache is full and
 * expr is not in it. Compile failures are cached too. *ret is borrowed from the cache.
 */
int rf_cel_cache_get(struct rf_cel_cache *c, const char *expr, const struct rf_cel_program **ret,
		     struct rf_cel_error *err);

/** Number of cached expressions (programs and compile failures). */
size_t rf_cel_cache_count(struct rf_cel_cache *c);

#endif
