/* Device attributes and capacities as the DRA API publishes them, after railfit normalised their
 * names to "domain/id" (an unqualified name belongs to the driver's domain, dra-api.md section 3).
 * Shared by the cluster model and the CEL evaluator. Plain values, no I/O. */
#ifndef RF_ALLOC_ATTR_H
#define RF_ALLOC_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/quantity.h"

enum rf_attr_kind {
	RF_ATTR_INT,
	RF_ATTR_BOOL,
	RF_ATTR_STRING,
	RF_ATTR_VERSION, /* semver 2.0.0 text in s */
	RF_ATTR_OTHER,   /* a value kind this build does not know: never matches */
	RF_ATTR_LIST,    /* ints, bools, strings or versions (KEP-5491, 1.36): list */
};

/** A list-typed attribute's values (elem: RF_ATTR_INT, _BOOL, _STRING or _VERSION). */
struct rf_attr_list {
	enum rf_attr_kind elem;
	size_t n;
	union {
		const int64_t *i;
		const bool *b;
		const char *const *s;
	};
};

/* ResourceSliceMaxAttributeValuesPerDevice: CEL's includes() refuses longer lists */
#define RF_ATTR_LIST_MAX 48

/* 4-byte aligned: 20 bytes instead of 24 (a 5,000-node fleet's devices hold 1.3 million of
 * these); its 8-byte members are read through the struct, which the compiler knows is packed */
#pragma pack(push, 4)
struct rf_attr {
	const char *name; /* "domain/id", borrowed from the owning device */
	union {           /* by kind: a fleet's devices hold millions of these */
		int64_t i;
		bool b;
		const char *s;                   /* string or version text */
		const struct rf_attr_list *list; /* RF_ATTR_LIST */
	};
	enum rf_attr_kind kind;
};
#pragma pack(pop)

struct rf_capacity {      /* ordered so that no byte is padding (quantities are 16-byte aligned) */
	const char *name; /* "domain/id" */
	const char *raw_name; /* the key exactly as published (consumable capacity matches on it) */
	struct rf_quantity value;
	/* requestPolicy (consumable capacity, KEP-5075) */
	struct rf_quantity def;
	struct rf_quantity range_min;
	struct rf_quantity range_max;
	struct rf_quantity range_step;
	const struct rf_quantity *valid_values; /* ascending */
	size_t n_valid_values;
	bool has_policy;
	bool has_default;
	bool has_range;
	bool has_range_max;
	bool has_range_step;
};

/** What a CEL selector can see of one device (dra-api.md section 11). */
struct rf_cel_device {
	const char *driver;
	const struct rf_attr *attrs; /* sorted by name */
	size_t n_attrs;
	const struct rf_capacity *caps; /* sorted by name */
	size_t n_caps;
	bool allow_multiple_allocations;
	/* list-typed attributes are CEL lists (1.37 always converts them); false: reading one is
	 * the "unsupported attribute value" error of older allocators */
	bool list_attributes;
};

/** Find an attribute by its full "domain/id" name; NULL if absent. */
const struct rf_attr *rf_attr_find(const struct rf_attr *attrs, size_t n, const char *name);

/** Same for a name split into domain and id (no allocation). */
const struct rf_attr *rf_attr_find2(const struct rf_attr *attrs, size_t n, const char *domain,
				    size_t domain_len, const char *id, size_t id_len);

const struct rf_capacity *rf_capacity_find(const struct rf_capacity *caps, size_t n,
					   const char *name);
const struct rf_capacity *rf_capacity_find2(const struct rf_capacity *caps, size_t n,
					    const char *domain, size_t domain_len, const char *id,
					    size_t id_len);

#endif
