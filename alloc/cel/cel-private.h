/* Internals of the CEL evaluator shared by alloc/cel*.c. Never included from another folder.
 *
 * A program is an AST allocated in one arena; evaluation walks it with a per-call arena for the
 * few values that need memory (concatenations, lowerAscii, list literals). Values borrow strings
 * from the device, from the program or from the evaluation arena. */
#ifndef RF_ALLOC_CEL_PRIVATE_H
#define RF_ALLOC_CEL_PRIVATE_H

#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/cel/cel.h"
#include "config/arena.h"
#include "config/quantity.h"
#include "config/utf8.h"

/* Kubernetes' limits for DRA selectors (resource.k8s.io CELSelectorExpressionMaxLength/MaxCost). */
#define CEL_MAX_EXPR_LEN (10 * 1024)
#define CEL_COST_LIMIT   1000000u
/* Deepest AST (and parser nesting) accepted; keeps every recursion far from the stack limit. */
#define CEL_MAX_DEPTH 64
/* Memory one evaluation may allocate before it fails (the cost limit normally stops it first). */
#define CEL_EVAL_MEM_LIMIT (64u << 20)

/* ---- values --------------------------------------------------------------------------------- */

enum cel_type {
	CEL_NULL,
	CEL_BOOL,
	CEL_INT,
	CEL_UINT,
	CEL_DOUBLE,
	CEL_STRING,
	CEL_LIST,
	CEL_MAP,
	CEL_QUANTITY,
	CEL_SEMVER,
};

enum cel_map_kind {
	CEL_MAP_ATTR_DOMAINS, /* device.attributes: domain -> map of that domain's attributes */
	CEL_MAP_CAP_DOMAINS,  /* device.capacity */
	CEL_MAP_ATTRS,        /* device.attributes["dom"]: id -> value */
	CEL_MAP_CAPS,         /* device.capacity["dom"]: id -> quantity */
};

struct cel_semver {
	uint64_t major, minor, patch;
	const char *pre; /* prerelease without '-', borrowed; NULL when absent */
	size_t pre_len;
};

struct cel_value {
	enum cel_type type;
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct {
			const char *p;
			size_t len;
		} s;
		struct {
			const struct cel_value *items;
			size_t n;
		} list;
		struct {
			enum cel_map_kind kind;
			const char *dom; /* for CEL_MAP_ATTRS / CEL_MAP_CAPS */
			size_t dom_len;
		} map;
		struct rf_quantity q;
		const struct cel_semver *sv; /* program- or evaluation-owned */
	};
};

const char *cel_type_name(enum cel_type t);

/* ---- AST ------------------------------------------------------------------------------------ */

enum cel_node_kind {
	CEL_N_LITERAL,      /* lit */
	CEL_N_IDENT,        /* name (only before resolution) */
	CEL_N_DEVICE_FIELD, /* device.<field> */
	CEL_N_SELECT,       /* args[0].name */
	CEL_N_HAS,          /* has(args[0].name) */
	CEL_N_INDEX,        /* args[0][args[1]] */
	CEL_N_CALL,         /* fn; receiver style: args[0] is the receiver */
	CEL_N_NOT,          /* !args[0] */
	CEL_N_NEG,          /* -args[0] */
	CEL_N_AND,          /* args[0] && args[1] && ... */
	CEL_N_OR,           /* args[0] || args[1] || ... */
	CEL_N_CHAIN,        /* args[0] ops[0] args[1] ops[1] args[2] ... (left-associative) */
	CEL_N_COND,         /* args[0] ? args[1] : args[2] */
	CEL_N_LIST,         /* [args...]; lit holds the list when every element is a literal */
};

enum cel_device_field {
	CEL_DEV_DRIVER,
	CEL_DEV_ATTRIBUTES,
	CEL_DEV_CAPACITY,
	CEL_DEV_ALLOW_MULTIPLE,
};

enum cel_op {
	CEL_OP_EQ,
	CEL_OP_NE,
	CEL_OP_LT,
	CEL_OP_LE,
	CEL_OP_GT,
	CEL_OP_GE,
	CEL_OP_IN,
	CEL_OP_ADD,
	CEL_OP_SUB,
	CEL_OP_MUL,
	CEL_OP_DIV,
	CEL_OP_MOD,
};

enum cel_fn {
	CEL_FN_SIZE,
	CEL_FN_MATCHES,
	CEL_FN_STARTS_WITH,
	CEL_FN_ENDS_WITH,
	CEL_FN_CONTAINS,
	CEL_FN_INCLUDES, /* list-typed attributes (KEP-5491, 1.36) */
	CEL_FN_LOWER_ASCII,
	CEL_FN_UPPER_ASCII,
	CEL_FN_QUANTITY,
	CEL_FN_IS_QUANTITY,
	CEL_FN_SEMVER,
	CEL_FN_IS_SEMVER,
	CEL_FN_COMPARE_TO,
	CEL_FN_IS_GREATER_THAN,
	CEL_FN_IS_LESS_THAN,
	CEL_FN_ADD,
	CEL_FN_SUB,
	CEL_FN_AS_INTEGER,
	CEL_FN_AS_APPROXIMATE_FLOAT,
	CEL_FN_IS_INTEGER,
	CEL_FN_SIGN,
	CEL_FN_MAJOR,
	CEL_FN_MINOR,
	CEL_FN_PATCH,
	CEL_FN_INT,
	CEL_FN_UINT,
	CEL_FN_DOUBLE,
	CEL_FN_STRING,
	CEL_FN_BOOL,
	CEL_FN_DYN,
	CEL_FN_HAS,     /* only during parsing */
	CEL_FN_UNKNOWN, /* only during parsing */
};

struct cel_regex;

/* What a call with literal arguments allows to precompute: the result of quantity()/semver() of
 * a literal, or the runtime error it will raise. */
struct cel_const {
	struct cel_value val;
	const char *err; /* program-owned message, or NULL */
};

struct cel_node {
	struct cel_node **args;
	const char *name; /* identifier / field / function name, NUL-terminated, program-owned */
	enum cel_op *ops; /* CEL_N_CHAIN: nargs - 1 operators ... */
	uint32_t *op_pos; /* ... and their positions */
	const struct cel_regex *re;  /* matches() with a literal pattern, compiled once */
	const struct cel_const *cst; /* quantity()/semver() of literals */
	struct cel_value lit;
	uint32_t pos; /* byte offset of the operator, name or literal (expressions are <= 10 KiB) */
	uint32_t name_pos;
	uint32_t name_len;
	uint32_t nargs;
	uint16_t depth;
	uint8_t kind;  /* enum cel_node_kind */
	uint8_t fn;    /* enum cel_fn */
	uint8_t field; /* enum cel_device_field */
	bool receiver; /* CEL_N_CALL: receiver-style call */
};

struct cel_regex_list;

struct rf_cel_program {
	struct rf_arena arena;
	struct cel_node *root;
	struct cel_regex_list *regexes;
};

/* Parse and resolve; on failure fills err (pos + message with the position appended). */
int cel_parse(const char *expr, struct rf_cel_program *p, struct rf_cel_error *err);

/* 1, 0, -EINVAL (runtime error, err filled) or -ENOMEM. */
int cel_eval_program(const struct rf_cel_program *p, const struct rf_cel_device *d,
		     struct rf_cel_error *err);

/* ---- regular expressions (RE2 syntax on top of POSIX regcomp)
 * ----------------------------------*/

struct cel_regex {
	regex_t re;
	size_t weight; /* size of the expanded pattern (counted repeats multiplied out) */
};

struct cel_regex_list {
	struct cel_regex_list *next;
	struct cel_regex rx;
};

/**
 * Translate an RE2 pattern to POSIX ERE and compile it.
 * @return 0; -EINVAL when the pattern is not valid RE2; -ENOTSUP when it is valid RE2 but has no
 * faithful POSIX translation; -ENOMEM. msg receives the reason, *ret_off the offset in the pattern.
 */
int cel_regex_compile(struct cel_regex *rx, const char *pat, size_t len, char *msg, size_t msgsz,
		      size_t *ret_off);
/* 1 match, 0 no match, <0 error. Thread-safe on a shared cel_regex. */
int cel_regex_match(const struct cel_regex *rx, const char *s, size_t len);
void cel_regex_free(struct cel_regex *rx);

/* ---- helpers -------------------------------------------------------------------------------- */

/* Locale objects pinned for locale-independent number formatting and UTF-8 regexes. */
locale_t cel_locale_c(void);
locale_t cel_locale_utf8(void); /* (locale_t)0 when C.UTF-8 is not installed */

/* Strict semver 2.0.0 (github.com/blang/semver Parse); 0 or -EINVAL with a message. */
int cel_semver_parse(const char *s, size_t len, struct cel_semver *ret, const char **ret_msg);
/* Kubernetes' normalising parse (semver(s, true)): strips "v", fills missing minor/patch and
 * leading zeros. The normalised text is written to buf (>= len + 8 bytes), which the result
 * borrows from. */
int cel_semver_parse_normalized(const char *s, size_t len, char *buf, struct cel_semver *ret,
				const char **ret_msg);
int cel_semver_cmp(const struct cel_semver *a, const struct cel_semver *b);

/* Go's strconv.FormatFloat(d, 'g', -1, 64) (what cel-go's string(double) produces). */
void cel_format_double(double d, char *buf, size_t len);

#endif
