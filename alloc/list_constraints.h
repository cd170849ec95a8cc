/* matchAttribute and distinctAttribute over list-typed attributes (KEP-5491), as the allocator
 * with its ListTypeAttributes feature runs them (reference/dra-allocator-1.36.md 3.9; D362
 * internal/experimental/allocator_experimental.go:767-973 and constraint.go:96-125; identical in
 * DM). Every attribute is a set, a scalar a set of one; values of different kinds never meet.
 *
 * matchAttribute keeps a running intersection: the first device's set, narrowed by every device
 * added; a device joins when it shares an element with it. remove() only counts the device out,
 * so a narrowed intersection stays narrowed until the constraint is empty again (upstream's
 * stale intersection; the fix, kubernetes#140326, was closed unmerged). distinctAttribute keeps
 * the latest attribute per request name (up to 1.36; per device from 1.37, #140600) and
 * admits a device whose set is disjoint from each of them; remove() drops the request's entry.
 * Without that feature (sets false: the 1.36+ allocators kube-scheduler runs by default) the
 * same state machine compares scalars (D362 incubating/allocator_incubating.go:780-842,
 * incubating/constraint.go): the first device fixes matchAttribute's value; distinctAttribute's
 * entry per request goes when any of the request's devices is given back.
 * The allocator's constraints run in claim order on every candidate and are undone in reverse
 * when one refuses it: this module mirrors that state machine exactly (rf_lc_add/rf_lc_remove),
 * and offers the order-free meaning of the sets (rf_lc_fits) for the best-achievable search.
 * Pure logic, no I/O. */
#ifndef RF_ALLOC_LIST_CONSTRAINTS_H
#define RF_ALLOC_LIST_CONSTRAINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/predict.h"

struct rf_lc_state;

/**
 * State for the constraints of claims[0..n_claims). sets: list semantics (ListTypeAttributes);
 * false: the scalar comparisons of the allocator without it, whose distinctAttribute state is
 * the same map (a request's entry, dropped when any of its devices goes). per_device:
 * distinctAttribute compares every device (1.37) instead of the latest one per request.
 * max_list: the longest list attribute of the devices the search may add. NULL on -ENOMEM.
 */
struct rf_lc_state *rf_lc_new(const struct rf_claim *const *claims, size_t n_claims, bool sets,
			      bool per_device, size_t max_list);
void rf_lc_free(struct rf_lc_state *st);
/** Forget every device (a new Allocate call). */
void rf_lc_reset(struct rf_lc_state *st);

/**
 * Add device d for request alt_name ("req" or "req/sub") of claim ci to the constraints that
 * cover the request, in order; the first that refuses undoes the ones before it.
 * @return true when every constraint took it.
 */
bool rf_lc_add(struct rf_lc_state *st, size_t ci, const char *alt_name, const struct rf_device *d);

/** Undo a successful rf_lc_add() with the same arguments. */
void rf_lc_remove(struct rf_lc_state *st, size_t ci, const char *alt_name,
		  const struct rf_device *d);

/**
 * Order-free: would d for alt_name of claim cl keep every constraint of cl satisfied together
 * with the picks of cl in a (a non-empty common element; pairwise disjoint)?
 */
bool rf_lc_fits(const struct rf_assignment *a, const struct rf_claim *cl, const char *alt_name,
		const struct rf_device *d);

/** Does constraint co cover request (alt) name? "req" covers "req/sub". */
bool rf_constraint_covers(const struct rf_constraint *co, const char *name);

/**
 * The allocator's scalar comparison (its constraints without list semantics): are a and ref
 * values of one scalar kind (int, bool, string, version) and equal? A list or a value of an
 * unknown kind is never equal.
 */
bool rf_constraint_scalar_equal(const struct rf_attr *a, const struct rf_attr *ref);

#endif
