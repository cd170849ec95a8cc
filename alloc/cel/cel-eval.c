/* Tree-walking evaluator of the CEL subset, over one device.
 *
 * Semantics follow cel-go as Kubernetes runs it for DRA selectors: heterogeneous equality
 * (int, uint and double compare as numbers; other mismatched types are unequal, except that a
 * quantity or semver on the left of == raises "no such overload", as Kubernetes' types do),
 * commutative error absorption in && and ||, runtime errors for a missing map key, integer
 * overflow, division by zero and mismatched operand types. Unknown attribute domains read as an
 * empty map (Kubernetes' default-value mapper).
 *
 * Every node evaluation costs one unit plus work proportional to string and list sizes; past
 * CEL_COST_LIMIT the evaluation stops with an error that && / || cannot absorb, as cel-go's cost
 * limit interrupts the program. Memory comes from a per-call arena (the first 2 KiB on the stack).
 * The program is only read, so evaluations may run concurrently on any threads. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel-private.h"

#define NANO 1000000000

struct cel_ctx {
	const struct rf_cel_device *dev;
	struct rf_arena arena;
	uint64_t cost;
	uint64_t cost_limit;
	bool fatal;   /* cost limit or OOM: never absorbed */
	int fatal_rc; /* -EINVAL (limit) or -ENOMEM */
	size_t pos;
	char msg[RF_CEL_ERR_MAX];
};

static int fail_at(struct cel_ctx *c, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail_at(struct cel_ctx *c, size_t pos, const char *fmt, ...)
{
	if (c->fatal)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	c->pos = pos;
	return -1;
}

static int
fail_oom(struct cel_ctx *c, size_t pos)
{
	if (c->fatal)
		return -1;
	c->fatal = true;
	c->pos = pos;
	if (c->arena.over_limit) {
		c->fatal_rc = -EINVAL;
		snprintf(c->msg, sizeof(c->msg), "memory limit of the expression exceeded");
	} else {
		c->fatal_rc = -ENOMEM;
		snprintf(c->msg, sizeof(c->msg), "out of memory");
	}
	return -1;
}

static int
charge(struct cel_ctx *c, size_t pos, uint64_t units)
{
	if (c->fatal)
		return -1;
	c->cost += units;
	if (c->cost > c->cost_limit) {
		c->fatal = true;
		c->fatal_rc = -EINVAL;
		c->pos = pos;
		snprintf(c->msg, sizeof(c->msg),
			 "operation cancelled: actual cost limit exceeded (limit %llu)",
			 (unsigned long long)c->cost_limit);
		return -1;
	}
	return 0;
}

static void *
ealloc(struct cel_ctx *c, size_t pos, size_t n)
{
	void *r = rf_arena_alloc_raw(&c->arena, n);
	if (!r)
		fail_oom(c, pos);
	return r;
}

static const char *
tname(const struct cel_value *v)
{
	return cel_type_name(v->type);
}

static int
no_overload2(struct cel_ctx *c, size_t pos, const char *op, const struct cel_value *a,
	     const struct cel_value *b)
{
	return fail_at(c, pos, "no such overload: %s %s %s", tname(a), op, tname(b));
}

static int
no_overload_fn(struct cel_ctx *c, size_t pos, const char *fn, const struct cel_value *recv,
	       const struct cel_value *arg)
{
	if (recv && arg)
		return fail_at(c, pos, "no such overload: %s.%s(%s)", tname(recv), fn, tname(arg));
	if (recv)
		return fail_at(c, pos, "no such overload: %s.%s()", tname(recv), fn);
	return fail_at(c, pos, "no such overload: %s(%s)", fn, arg ? tname(arg) : "");
}

static int eval(struct cel_ctx *c, const struct cel_node *n, struct cel_value *out);

/* ---- device maps ---------------------------------------------------------------------------- */

static size_t
dev_count(const struct rf_cel_device *d, bool caps)
{
	return caps ? d->n_caps : d->n_attrs;
}

static const char *
dev_name(const struct rf_cel_device *d, bool caps, size_t i)
{
	const char *s = caps ? d->caps[i].name : d->attrs[i].name;
	return s ? s : "";
}

/* strcmp-order comparison of name against the prefix "dom/": <0, 0 (name starts with it), >0 */
static int
cmp_prefix(const char *name, const char *dom, size_t dl)
{
	for (size_t k = 0; k <= dl; k++) {
		unsigned char pc = k < dl ? (unsigned char)dom[k] : '/';
		unsigned char nc = (unsigned char)name[k];
		if (nc == 0)
			return -1;
		if (nc != pc)
			return nc < pc ? -1 : 1;
	}
	return 0;
}

/* Index range of the names "dom/..." (names are sorted by strcmp). */
static void
dom_range(const struct rf_cel_device *d, bool caps, const char *dom, size_t dl, size_t *ret_lo,
	  size_t *ret_hi)
{
	size_t lo = 0, hi = dev_count(d, caps);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_prefix(dev_name(d, caps, mid), dom, dl) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo, n = dev_count(d, caps);
	while (end < n && cmp_prefix(dev_name(d, caps, end), dom, dl) == 0)
		end++;
	*ret_lo = lo;
	*ret_hi = end;
}

static size_t
domain_len(const char *name)
{
	const char *sl = strchr(name, '/');
	return sl ? (size_t)(sl - name) : SIZE_MAX;
}

static bool
map_is_caps(const struct cel_value *m)
{
	return m->map.kind == CEL_MAP_CAP_DOMAINS || m->map.kind == CEL_MAP_CAPS;
}

/* Number of distinct domains. */
static size_t
count_domains(const struct rf_cel_device *d, bool caps)
{
	size_t n = 0, prev_len = SIZE_MAX;
	const char *prev = NULL;
	for (size_t i = 0; i < dev_count(d, caps); i++) {
		const char *nm = dev_name(d, caps, i);
		size_t dl = domain_len(nm);
		if (dl == SIZE_MAX)
			continue;
		if (!prev || dl != prev_len || memcmp(prev, nm, dl) != 0)
			n++;
		prev = nm;
		prev_len = dl;
	}
	return n;
}

/* A list-typed attribute as a CEL list (KEP-5491; 1.37 converts them whatever the gate). */
static int
list_attr_value(struct cel_ctx *c, size_t pos, const struct rf_attr *a, struct cel_value *out)
{
	const struct rf_attr_list *l = a->list;
	struct cel_value *items = NULL;
	if (charge(c, pos, 1 + l->n) != 0)
		return -1;
	if (l->n && !(items = ealloc(c, pos, l->n * sizeof(*items))))
		return -1;
	for (size_t k = 0; k < l->n; k++) {
		switch (l->elem) {
		case RF_ATTR_INT:
			items[k].type = CEL_INT;
			items[k].i = l->i[k];
			break;
		case RF_ATTR_BOOL:
			items[k].type = CEL_BOOL;
			items[k].b = l->b[k];
			break;
		case RF_ATTR_VERSION: {
			const char *msg = NULL;
			struct cel_semver *sv = ealloc(c, pos, sizeof(*sv));
			if (!sv)
				return -1;
			if (cel_semver_parse(l->s[k], strlen(l->s[k]), sv, &msg) != 0)
				return fail_at(c, pos,
					       "attribute %s: invalid semantic version \"%s\": %s",
					       a->name, l->s[k], msg);
			items[k].type = CEL_SEMVER;
			items[k].sv = sv;
			break;
		}
		default:
			items[k].type = CEL_STRING;
			items[k].s.p = l->s[k];
			items[k].s.len = strlen(l->s[k]);
			break;
		}
	}
	out->type = CEL_LIST;
	out->list.items = items;
	out->list.n = l->n;
	return 0;
}

static int
attr_value(struct cel_ctx *c, size_t pos, const struct rf_attr *a, struct cel_value *out)
{
	switch (a->kind) {
	case RF_ATTR_INT:
		out->type = CEL_INT;
		out->i = a->i;
		return 0;
	case RF_ATTR_BOOL:
		out->type = CEL_BOOL;
		out->b = a->b;
		return 0;
	case RF_ATTR_STRING:
		out->type = CEL_STRING;
		out->s.p = a->s ? a->s : "";
		out->s.len = a->s ? strlen(a->s) : 0;
		return 0;
	case RF_ATTR_VERSION: {
		const char *msg = NULL;
		const char *s = a->s ? a->s : "";
		struct cel_semver *sv = ealloc(c, pos, sizeof(*sv));
		if (!sv)
			return -1;
		if (cel_semver_parse(s, strlen(s), sv, &msg) != 0)
			return fail_at(c, pos, "attribute %s: invalid semantic version \"%s\": %s",
				       a->name, s, msg);
		out->type = CEL_SEMVER;
		out->sv = sv;
		return 0;
	}
	case RF_ATTR_LIST:
		if (c->dev->list_attributes)
			return list_attr_value(c, pos, a, out);
		return fail_at(c, pos, "attribute %s: unsupported attribute value type", a->name);
	case RF_ATTR_OTHER:
	default:
		return fail_at(c, pos, "attribute %s: unsupported attribute value type", a->name);
	}
}

/* Look key up in map m: 0 with *found, or -1 on an error converting the value. */
static int
map_find(struct cel_ctx *c, size_t pos, const struct cel_value *m, const struct cel_value *key,
	 struct cel_value *out, bool *found)
{
	*found = false;
	if (key->type != CEL_STRING)
		return 0;
	const struct rf_cel_device *d = c->dev;
	switch (m->map.kind) {
	case CEL_MAP_ATTR_DOMAINS:
	case CEL_MAP_CAP_DOMAINS:
		/* unknown domains read as an empty map */
		out->type = CEL_MAP;
		out->map.kind = m->map.kind == CEL_MAP_ATTR_DOMAINS ? CEL_MAP_ATTRS : CEL_MAP_CAPS;
		out->map.dom = key->s.p;
		out->map.dom_len = key->s.len;
		*found = true;
		return 0;
	case CEL_MAP_ATTRS: {
		const struct rf_attr *a = rf_attr_find2(d->attrs, d->n_attrs, m->map.dom,
							m->map.dom_len, key->s.p, key->s.len);
		if (!a)
			return 0;
		*found = true;
		return attr_value(c, pos, a, out);
	}
	case CEL_MAP_CAPS: {
		const struct rf_capacity *q = rf_capacity_find2(
			d->caps, d->n_caps, m->map.dom, m->map.dom_len, key->s.p, key->s.len);
		if (!q)
			return 0;
		*found = true;
		out->type = CEL_QUANTITY;
		out->q = q->value;
		return 0;
	}
	}
	return 0;
}

static bool
map_contains(struct cel_ctx *c, const struct cel_value *m, const struct cel_value *key)
{
	if (key->type != CEL_STRING)
		return false;
	const struct rf_cel_device *d = c->dev;
	size_t lo, hi;
	switch (m->map.kind) {
	case CEL_MAP_ATTR_DOMAINS:
	case CEL_MAP_CAP_DOMAINS:
		dom_range(d, m->map.kind == CEL_MAP_CAP_DOMAINS, key->s.p, key->s.len, &lo, &hi);
		return hi > lo;
	case CEL_MAP_ATTRS:
		return rf_attr_find2(d->attrs, d->n_attrs, m->map.dom, m->map.dom_len, key->s.p,
				     key->s.len) != NULL;
	case CEL_MAP_CAPS:
		return rf_capacity_find2(d->caps, d->n_caps, m->map.dom, m->map.dom_len, key->s.p,
					 key->s.len) != NULL;
	}
	return false;
}

static size_t
map_size(struct cel_ctx *c, const struct cel_value *m)
{
	size_t lo, hi;
	switch (m->map.kind) {
	case CEL_MAP_ATTR_DOMAINS:
	case CEL_MAP_CAP_DOMAINS:
		return count_domains(c->dev, map_is_caps(m));
	case CEL_MAP_ATTRS:
	case CEL_MAP_CAPS:
		dom_range(c->dev, map_is_caps(m), m->map.dom, m->map.dom_len, &lo, &hi);
		return hi - lo;
	}
	return 0;
}

/* ---- equality and ordering ------------------------------------------------------------------ */

static bool
is_num(const struct cel_value *v)
{
	return v->type == CEL_INT || v->type == CEL_UINT || v->type == CEL_DOUBLE;
}

/* Exact comparison of an int64 with a double; 2 when the double is NaN. */
static int
cmp_int_double(int64_t i, double d)
{
	if (isnan(d))
		return 2;
	if (d < -9223372036854775808.0)
		return 1;
	if (d >= 9223372036854775808.0)
		return -1;
	double t = trunc(d);
	int64_t ti = (int64_t)t;
	if (i < ti)
		return -1;
	if (i > ti)
		return 1;
	return d > t ? -1 : d < t ? 1 : 0;
}

static int
cmp_uint_double(uint64_t u, double d)
{
	if (isnan(d))
		return 2;
	if (d < 0)
		return 1;
	if (d >= 18446744073709551616.0)
		return -1;
	double t = trunc(d);
	uint64_t tu = (uint64_t)t;
	if (u < tu)
		return -1;
	if (u > tu)
		return 1;
	return d > t ? -1 : d < t ? 1 : 0;
}

/* -1, 0, 1, or 2 when unordered (NaN). Both must be numbers. */
static int
num_cmp(const struct cel_value *a, const struct cel_value *b)
{
	switch (a->type) {
	case CEL_INT:
		if (b->type == CEL_INT)
			return a->i < b->i ? -1 : a->i > b->i;
		if (b->type == CEL_UINT)
			return a->i < 0 || b->u > (uint64_t)INT64_MAX ? -1
			       : (uint64_t)a->i < b->u                ? -1
								      : (uint64_t)a->i > b->u;
		return cmp_int_double(a->i, b->d);
	case CEL_UINT:
		if (b->type == CEL_UINT)
			return a->u < b->u ? -1 : a->u > b->u;
		if (b->type == CEL_INT) {
			int r = num_cmp(b, a);
			return r == 2 ? 2 : -r;
		}
		return cmp_uint_double(a->u, b->d);
	default:
		if (b->type == CEL_DOUBLE) {
			if (isnan(a->d) || isnan(b->d))
				return 2;
			return a->d < b->d ? -1 : a->d > b->d;
		}
		if (b->type == CEL_INT) {
			int r = cmp_int_double(b->i, a->d);
			return r == 2 ? 2 : -r;
		}
		{
			int r = cmp_uint_double(b->u, a->d);
			return r == 2 ? 2 : -r;
		}
	}
}

static int
str_cmp(const struct cel_value *a, const struct cel_value *b)
{
	size_t m = a->s.len < b->s.len ? a->s.len : b->s.len;
	int r = m ? memcmp(a->s.p, b->s.p, m) : 0;
	if (r != 0)
		return r < 0 ? -1 : 1;
	return a->s.len < b->s.len ? -1 : a->s.len > b->s.len;
}

static int equal(struct cel_ctx *c, size_t pos, const struct cel_value *a,
		 const struct cel_value *b, bool *eq);

/* cel-go's map equality: same size, every key of a present in b, no value pair unequal. Errors
 * while comparing values are not "false" and so do not make the maps unequal. */
static int
map_equal(struct cel_ctx *c, size_t pos, const struct cel_value *a, const struct cel_value *b,
	  bool *eq)
{
	const struct rf_cel_device *d = c->dev;
	*eq = false;
	if (map_size(c, a) != map_size(c, b))
		return 0;
	bool caps = map_is_caps(a);
	if (a->map.kind == CEL_MAP_ATTR_DOMAINS || a->map.kind == CEL_MAP_CAP_DOMAINS) {
		size_t i = 0, n = dev_count(d, caps);
		while (i < n) {
			const char *nm = dev_name(d, caps, i);
			size_t dl = domain_len(nm);
			if (dl == SIZE_MAX) {
				i++;
				continue;
			}
			struct cel_value key = { .type = CEL_STRING, .s = { nm, dl } };
			struct cel_value va, vb;
			bool found, e;
			if (map_find(c, pos, a, &key, &va, &found) != 0 ||
			    map_find(c, pos, b, &key, &vb, &found) != 0)
				return -1;
			if (!found)
				return 0;
			if (equal(c, pos, &va, &vb, &e) != 0) {
				if (c->fatal)
					return -1;
			} else if (!e) {
				return 0;
			}
			size_t lo, hi;
			dom_range(d, caps, nm, dl, &lo, &hi);
			i = hi > i ? hi : i + 1;
		}
		*eq = true;
		return 0;
	}
	size_t lo, hi;
	dom_range(d, caps, a->map.dom, a->map.dom_len, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		const char *nm = dev_name(d, caps, i);
		struct cel_value key = { .type = CEL_STRING,
					 .s = { nm + a->map.dom_len + 1,
						strlen(nm) - a->map.dom_len - 1 } };
		struct cel_value va, vb;
		bool found, e;
		if (charge(c, pos, 1) != 0)
			return -1;
		if (map_find(c, pos, a, &key, &va, &found) != 0)
			return -1;
		if (map_find(c, pos, b, &key, &vb, &found) != 0)
			return -1;
		if (!found)
			return 0;
		if (equal(c, pos, &va, &vb, &e) != 0) {
			if (c->fatal)
				return -1;
			continue;
		}
		if (!e)
			return 0;
	}
	*eq = true;
	return 0;
}

/* CEL == : 0 with *eq, or -1 for an error (quantity/semver against another type). */
static int
equal(struct cel_ctx *c, size_t pos, const struct cel_value *a, const struct cel_value *b, bool *eq)
{
	*eq = false;
	if (a->type == CEL_NULL || b->type == CEL_NULL) {
		*eq = a->type == b->type;
		return 0;
	}
	if (is_num(a) && is_num(b)) {
		*eq = num_cmp(a, b) == 0;
		return 0;
	}
	if ((a->type == CEL_QUANTITY || a->type == CEL_SEMVER) && a->type != b->type)
		return no_overload2(c, pos, "==", a, b);
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case CEL_BOOL:
		*eq = a->b == b->b;
		return 0;
	case CEL_STRING:
		if (charge(c, pos, (a->s.len + b->s.len) / 10) != 0)
			return -1;
		*eq = a->s.len == b->s.len && (a->s.len == 0 || !memcmp(a->s.p, b->s.p, a->s.len));
		return 0;
	case CEL_QUANTITY:
		*eq = rf_quantity_cmp(a->q, b->q) == 0;
		return 0;
	case CEL_SEMVER:
		*eq = cel_semver_cmp(a->sv, b->sv) == 0;
		return 0;
	case CEL_LIST:
		if (a->list.n != b->list.n)
			return 0;
		if (charge(c, pos, a->list.n) != 0)
			return -1;
		for (size_t k = 0; k < a->list.n; k++) {
			bool e;
			if (equal(c, pos, &a->list.items[k], &b->list.items[k], &e) != 0) {
				/* cel-go: only a definite false makes lists unequal */
				if (c->fatal)
					return -1;
				continue;
			}
			if (!e)
				return 0;
		}
		*eq = true;
		return 0;
	case CEL_MAP:
		return map_equal(c, pos, a, b, eq);
	default:
		return 0;
	}
}

static int
order(struct cel_ctx *c, size_t pos, enum cel_op op, const struct cel_value *a,
      const struct cel_value *b, struct cel_value *out)
{
	static const char *const names[] = {
		[CEL_OP_LT] = "<", [CEL_OP_LE] = "<=", [CEL_OP_GT] = ">", [CEL_OP_GE] = ">="
	};
	int r;
	if (is_num(a) && is_num(b)) {
		r = num_cmp(a, b);
		if (r == 2)
			return fail_at(c, pos, "NaN values cannot be ordered");
	} else if (a->type == CEL_STRING && b->type == CEL_STRING) {
		if (charge(c, pos, (a->s.len + b->s.len) / 10) != 0)
			return -1;
		r = str_cmp(a, b);
	} else if (a->type == CEL_BOOL && b->type == CEL_BOOL) {
		r = (int)a->b - (int)b->b;
	} else {
		return no_overload2(c, pos, names[op], a, b);
	}
	out->type = CEL_BOOL;
	switch (op) {
	case CEL_OP_LT:
		out->b = r < 0;
		break;
	case CEL_OP_LE:
		out->b = r <= 0;
		break;
	case CEL_OP_GT:
		out->b = r > 0;
		break;
	default:
		out->b = r >= 0;
		break;
	}
	return 0;
}

/* ---- arithmetic ----------------------------------------------------------------------------- */

static int
arith_int(struct cel_ctx *c, size_t pos, enum cel_op op, int64_t x, int64_t y, int64_t *r)
{
	switch (op) {
	case CEL_OP_ADD:
		if (__builtin_add_overflow(x, y, r))
			return fail_at(c, pos, "integer overflow: %lld + %lld", (long long)x,
				       (long long)y);
		return 0;
	case CEL_OP_SUB:
		if (__builtin_sub_overflow(x, y, r))
			return fail_at(c, pos, "integer overflow: %lld - %lld", (long long)x,
				       (long long)y);
		return 0;
	case CEL_OP_MUL:
		if (__builtin_mul_overflow(x, y, r))
			return fail_at(c, pos, "integer overflow: %lld * %lld", (long long)x,
				       (long long)y);
		return 0;
	case CEL_OP_DIV:
		if (y == 0)
			return fail_at(c, pos, "division by zero");
		if (x == INT64_MIN && y == -1)
			return fail_at(c, pos, "integer overflow: %lld / -1", (long long)x);
		*r = x / y;
		return 0;
	default:
		if (y == 0)
			return fail_at(c, pos, "modulus by zero");
		if (x == INT64_MIN && y == -1)
			return fail_at(c, pos, "integer overflow: %lld %% -1", (long long)x);
		*r = x % y;
		return 0;
	}
}

static int
arith_uint(struct cel_ctx *c, size_t pos, enum cel_op op, uint64_t x, uint64_t y, uint64_t *r)
{
	switch (op) {
	case CEL_OP_ADD:
		if (__builtin_add_overflow(x, y, r))
			return fail_at(c, pos, "unsigned integer overflow: %lluu + %lluu",
				       (unsigned long long)x, (unsigned long long)y);
		return 0;
	case CEL_OP_SUB:
		if (__builtin_sub_overflow(x, y, r))
			return fail_at(c, pos, "unsigned integer overflow: %lluu - %lluu",
				       (unsigned long long)x, (unsigned long long)y);
		return 0;
	case CEL_OP_MUL:
		if (__builtin_mul_overflow(x, y, r))
			return fail_at(c, pos, "unsigned integer overflow: %lluu * %lluu",
				       (unsigned long long)x, (unsigned long long)y);
		return 0;
	case CEL_OP_DIV:
		if (y == 0)
			return fail_at(c, pos, "division by zero");
		*r = x / y;
		return 0;
	default:
		if (y == 0)
			return fail_at(c, pos, "modulus by zero");
		*r = x % y;
		return 0;
	}
}

static const char *
op_name(enum cel_op op)
{
	static const char *const names[] = {
		[CEL_OP_EQ] = "==", [CEL_OP_NE] = "!=", [CEL_OP_LT] = "<",  [CEL_OP_LE] = "<=",
		[CEL_OP_GT] = ">",  [CEL_OP_GE] = ">=", [CEL_OP_IN] = "in", [CEL_OP_ADD] = "+",
		[CEL_OP_SUB] = "-", [CEL_OP_MUL] = "*", [CEL_OP_DIV] = "/", [CEL_OP_MOD] = "%",
	};
	return names[op];
}

static int
arith(struct cel_ctx *c, size_t pos, enum cel_op op, const struct cel_value *a,
      const struct cel_value *b, struct cel_value *out)
{
	if (a->type != b->type)
		return no_overload2(c, pos, op_name(op), a, b);
	switch (a->type) {
	case CEL_INT:
		out->type = CEL_INT;
		return arith_int(c, pos, op, a->i, b->i, &out->i) == 0 ? 0 : -1;
	case CEL_UINT:
		out->type = CEL_UINT;
		return arith_uint(c, pos, op, a->u, b->u, &out->u) == 0 ? 0 : -1;
	case CEL_DOUBLE:
		out->type = CEL_DOUBLE;
		switch (op) {
		case CEL_OP_ADD:
			out->d = a->d + b->d;
			return 0;
		case CEL_OP_SUB:
			out->d = a->d - b->d;
			return 0;
		case CEL_OP_MUL:
			out->d = a->d * b->d;
			return 0;
		case CEL_OP_DIV:
			out->d = a->d / b->d;
			return 0;
		default:
			return no_overload2(c, pos, op_name(op), a, b);
		}
	case CEL_STRING: {
		if (op != CEL_OP_ADD)
			return no_overload2(c, pos, op_name(op), a, b);
		size_t n = a->s.len + b->s.len;
		if (charge(c, pos, 1 + n / 10) != 0)
			return -1;
		char *s = ealloc(c, pos, n + 1);
		if (!s)
			return -1;
		if (a->s.len)
			memcpy(s, a->s.p, a->s.len);
		if (b->s.len)
			memcpy(s + a->s.len, b->s.p, b->s.len);
		s[n] = '\0';
		out->type = CEL_STRING;
		out->s.p = s;
		out->s.len = n;
		return 0;
	}
	case CEL_LIST: {
		if (op != CEL_OP_ADD)
			return no_overload2(c, pos, op_name(op), a, b);
		size_t n = a->list.n + b->list.n;
		if (charge(c, pos, 1 + n) != 0)
			return -1;
		struct cel_value *items = n ? ealloc(c, pos, n * sizeof(*items)) : NULL;
		if (n && !items)
			return -1;
		for (size_t k = 0; k < a->list.n; k++)
			items[k] = a->list.items[k];
		for (size_t k = 0; k < b->list.n; k++)
			items[a->list.n + k] = b->list.items[k];
		out->type = CEL_LIST;
		out->list.items = items;
		out->list.n = n;
		return 0;
	}
	default:
		return no_overload2(c, pos, op_name(op), a, b);
	}
}

static int
binop(struct cel_ctx *c, size_t pos, enum cel_op op, const struct cel_value *a,
      const struct cel_value *b, struct cel_value *out)
{
	bool eq;
	switch (op) {
	case CEL_OP_EQ:
	case CEL_OP_NE:
		/* Kubernetes' Quantity and Semver types have no cross-type equality */
		if ((a->type == CEL_QUANTITY || a->type == CEL_SEMVER) && b->type != a->type &&
		    b->type != CEL_NULL)
			return no_overload2(c, pos, op_name(op), a, b);
		if (equal(c, pos, a, b, &eq) != 0)
			return -1;
		out->type = CEL_BOOL;
		out->b = op == CEL_OP_EQ ? eq : !eq;
		return 0;
	case CEL_OP_LT:
	case CEL_OP_LE:
	case CEL_OP_GT:
	case CEL_OP_GE:
		return order(c, pos, op, a, b, out);
	case CEL_OP_IN:
		out->type = CEL_BOOL;
		out->b = false;
		if (b->type == CEL_LIST) {
			if (charge(c, pos, b->list.n) != 0)
				return -1;
			for (size_t k = 0; k < b->list.n; k++) {
				/* cel-go's list Contains: errors count as "not this one" */
				if (equal(c, pos, a, &b->list.items[k], &eq) != 0) {
					if (c->fatal)
						return -1;
					continue;
				}
				if (eq) {
					out->b = true;
					break;
				}
			}
			return 0;
		}
		if (b->type == CEL_MAP) {
			out->b = map_contains(c, b, a);
			return 0;
		}
		return no_overload2(c, pos, "in", a, b);
	default:
		return arith(c, pos, op, a, b, out);
	}
}

/* ---- functions ------------------------------------------------------------------------------ */

#define QUANTITY_MAX ((rf_i128)10000000000000000000ull * (rf_i128)1000000000000000000ull)

static bool
quantity_ok(struct rf_quantity q)
{
	return q.nano <= QUANTITY_MAX && q.nano >= -QUANTITY_MAX;
}

static int
quantity_result(struct cel_ctx *c, size_t pos, struct rf_quantity q, struct cel_value *out)
{
	if (!quantity_ok(q))
		return fail_at(c, pos, "quantity out of range");
	out->type = CEL_QUANTITY;
	out->q = q;
	return 0;
}

/* quantity.asInteger(): exact integer within int64, as Quantity.AsInt64(). */
static bool
quantity_int(struct rf_quantity q, int64_t *ret)
{
	if (q.nano % NANO != 0)
		return false;
	rf_i128 units = q.nano / NANO;
	if (units > INT64_MAX || units < INT64_MIN)
		return false;
	*ret = (int64_t)units;
	return true;
}

static int
parse_semver_value(struct cel_ctx *c, size_t pos, const struct cel_value *s, bool normalize,
		   struct cel_value *out)
{
	const char *msg = NULL;
	int rc;
	struct cel_semver *sv = ealloc(c, pos, sizeof(*sv));
	if (!sv)
		return -1;
	if (normalize) {
		char *buf = ealloc(c, pos, s->s.len + 8);
		if (!buf)
			return -1;
		rc = cel_semver_parse_normalized(s->s.p, s->s.len, buf, sv, &msg);
	} else {
		rc = cel_semver_parse(s->s.p, s->s.len, sv, &msg);
	}
	out->sv = sv;
	if (rc != 0)
		return fail_at(c, pos, "invalid semantic version \"%.*s\": %s",
			       (int)(s->s.len > 64 ? 64 : s->s.len), s->s.p, msg);
	out->type = CEL_SEMVER;
	return 0;
}

static int
conv_int(struct cel_ctx *c, size_t pos, const struct cel_value *a, struct cel_value *out)
{
	out->type = CEL_INT;
	switch (a->type) {
	case CEL_INT:
		out->i = a->i;
		return 0;
	case CEL_UINT:
		if (a->u > (uint64_t)INT64_MAX)
			return fail_at(c, pos, "integer overflow converting %lluu to int",
				       (unsigned long long)a->u);
		out->i = (int64_t)a->u;
		return 0;
	case CEL_DOUBLE:
		if (isnan(a->d) || a->d <= -9223372036854775808.0 || a->d >= 9223372036854775808.0)
			return fail_at(c, pos, "integer overflow converting %g to int", a->d);
		out->i = (int64_t)a->d;
		return 0;
	case CEL_STRING: {
		char buf[32];
		const char *s = a->s.p;
		size_t n = a->s.len, k = 0;
		bool neg = false;
		if (n > 0 && (s[0] == '+' || s[0] == '-')) {
			neg = s[0] == '-';
			k = 1;
		}
		if (k == n || n >= sizeof(buf))
			goto bad;
		uint64_t v = 0;
		for (; k < n; k++) {
			if (s[k] < '0' || s[k] > '9')
				goto bad;
			unsigned d = (unsigned)(s[k] - '0');
			if (v > (UINT64_MAX - d) / 10)
				goto range;
			v = v * 10 + d;
		}
		if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
			goto range;
		out->i =
			neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
		return 0;
range:
		return fail_at(c, pos, "int() conversion of \"%.*s\": value out of range",
			       (int)(n > 64 ? 64 : n), s);
bad:
		return fail_at(c, pos, "int() conversion of \"%.*s\": invalid syntax",
			       (int)(n > 64 ? 64 : n), s);
	}
	default:
		return no_overload_fn(c, pos, "int", NULL, a);
	}
}

static int
conv_uint(struct cel_ctx *c, size_t pos, const struct cel_value *a, struct cel_value *out)
{
	out->type = CEL_UINT;
	switch (a->type) {
	case CEL_UINT:
		out->u = a->u;
		return 0;
	case CEL_INT:
		if (a->i < 0)
			return fail_at(c, pos, "unsigned integer overflow converting %lld to uint",
				       (long long)a->i);
		out->u = (uint64_t)a->i;
		return 0;
	case CEL_DOUBLE:
		if (isnan(a->d) || a->d < 0 || a->d >= 18446744073709551616.0)
			return fail_at(c, pos, "unsigned integer overflow converting %g to uint",
				       a->d);
		out->u = (uint64_t)a->d;
		return 0;
	case CEL_STRING: {
		const char *s = a->s.p;
		size_t n = a->s.len;
		uint64_t v = 0;
		if (n == 0)
			goto bad;
		for (size_t k = 0; k < n; k++) {
			if (s[k] < '0' || s[k] > '9')
				goto bad;
			unsigned d = (unsigned)(s[k] - '0');
			if (v > (UINT64_MAX - d) / 10)
				return fail_at(c, pos,
					       "uint() conversion of \"%.*s\": value out of range",
					       (int)(n > 64 ? 64 : n), s);
			v = v * 10 + d;
		}
		out->u = v;
		return 0;
bad:
		return fail_at(c, pos, "uint() conversion of \"%.*s\": invalid syntax",
			       (int)(n > 64 ? 64 : n), s);
	}
	default:
		return no_overload_fn(c, pos, "uint", NULL, a);
	}
}

static int
conv_double(struct cel_ctx *c, size_t pos, const struct cel_value *a, struct cel_value *out)
{
	out->type = CEL_DOUBLE;
	switch (a->type) {
	case CEL_DOUBLE:
		out->d = a->d;
		return 0;
	case CEL_INT:
		out->d = (double)a->i;
		return 0;
	case CEL_UINT:
		out->d = (double)a->u;
		return 0;
	case CEL_STRING: {
		char buf[128];
		size_t n = a->s.len;
		/* Go's ParseFloat: no blanks, no "nan(...)", hex only with a 'p' exponent */
		if (n == 0 || n >= sizeof(buf) || memchr(a->s.p, '\0', n) ||
		    strchr(" \t\n\v\f\r", a->s.p[0]) || memchr(a->s.p, '(', n) ||
		    ((memchr(a->s.p, 'x', n) || memchr(a->s.p, 'X', n)) &&
		     !memchr(a->s.p, 'p', n) && !memchr(a->s.p, 'P', n)))
			goto bad;
		memcpy(buf, a->s.p, n);
		buf[n] = '\0';
		char *end = NULL;
		locale_t lc = cel_locale_c();
		locale_t old = lc ? uselocale(lc) : (locale_t)0;
		errno = 0;
		double d = strtod(buf, &end);
		int e = errno;
		if (lc)
			uselocale(old);
		if (end != buf + n)
			goto bad;
		if (e == ERANGE && isinf(d))
			return fail_at(c, pos, "double() conversion of \"%s\": value out of range",
				       buf);
		out->d = d;
		return 0;
bad:
		return fail_at(c, pos, "double() conversion of \"%.*s\": invalid syntax",
			       (int)(n > 64 ? 64 : n), a->s.p);
	}
	default:
		return no_overload_fn(c, pos, "double", NULL, a);
	}
}

static int
conv_string(struct cel_ctx *c, size_t pos, const struct cel_value *a, struct cel_value *out)
{
	char buf[64];
	switch (a->type) {
	case CEL_STRING:
		*out = *a;
		return 0;
	case CEL_BOOL:
		out->type = CEL_STRING;
		out->s.p = a->b ? "true" : "false";
		out->s.len = a->b ? 4 : 5;
		return 0;
	case CEL_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)a->i);
		break;
	case CEL_UINT:
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a->u);
		break;
	case CEL_DOUBLE:
		cel_format_double(a->d, buf, sizeof(buf));
		break;
	default:
		return fail_at(c, pos, "type conversion error from '%s' to 'string'", tname(a));
	}
	size_t n = strlen(buf);
	char *s = ealloc(c, pos, n + 1);
	if (!s)
		return -1;
	memcpy(s, buf, n + 1);
	out->type = CEL_STRING;
	out->s.p = s;
	out->s.len = n;
	return 0;
}

static int
conv_bool(struct cel_ctx *c, size_t pos, const struct cel_value *a, struct cel_value *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	out->type = CEL_BOOL;
	if (a->type == CEL_BOOL) {
		out->b = a->b;
		return 0;
	}
	if (a->type != CEL_STRING)
		return no_overload_fn(c, pos, "bool", NULL, a);
	for (size_t k = 0; k < 6; k++) {
		if (a->s.len == strlen(yes[k]) && memcmp(a->s.p, yes[k], a->s.len) == 0) {
			out->b = true;
			return 0;
		}
		if (a->s.len == strlen(no[k]) && memcmp(a->s.p, no[k], a->s.len) == 0) {
			out->b = false;
			return 0;
		}
	}
	return fail_at(c, pos, "bool() conversion of \"%.*s\": invalid syntax",
		       (int)(a->s.len > 64 ? 64 : a->s.len), a->s.p);
}

static uint64_t
regex_cost(size_t len, size_t weight)
{
	return 2 * ((uint64_t)len + 1) * ((uint64_t)weight + 1);
}

static int
call_matches(struct cel_ctx *c, const struct cel_node *n, const struct cel_value *s,
	     const struct cel_value *pat, struct cel_value *out)
{
	if (s->type != CEL_STRING || pat->type != CEL_STRING)
		return no_overload_fn(c, n->pos, "matches", s, pat);
	/* glibc's matcher is not linear like RE2: charge (subject bytes) x (expanded pattern size),
	 * which bounds the worst case at CEL_COST_LIMIT to some tens of milliseconds; selectors
	 * over attribute values (<= 64 bytes) stay far below it. */
	int rc;
	if (n->re) {
		if (charge(c, n->pos, regex_cost(s->s.len, n->re->weight)) != 0)
			return -1;
		rc = cel_regex_match(n->re, s->s.p, s->s.len);
	} else {
		struct cel_regex rx;
		char msg[160];
		size_t off = 0;
		if (charge(c, n->pos, 1 + pat->s.len) != 0)
			return -1;
		rc = cel_regex_compile(&rx, pat->s.p, pat->s.len, msg, sizeof(msg), &off);
		if (rc == -ENOMEM)
			return fail_oom(c, n->pos);
		if (rc == -EINVAL)
			return fail_at(c, n->pos, "invalid regular expression: %s", msg);
		if (rc != 0)
			return fail_at(c, n->pos, "unsupported regular expression: %s", msg);
		/* compiling costs about as much as matching the pattern against itself */
		if (charge(c, n->pos, 50 * rx.weight) != 0 ||
		    charge(c, n->pos, regex_cost(s->s.len, rx.weight)) != 0) {
			cel_regex_free(&rx);
			return -1;
		}
		rc = cel_regex_match(&rx, s->s.p, s->s.len);
		cel_regex_free(&rx);
	}
	if (rc == -ENOMEM)
		return fail_oom(c, n->pos);
	if (rc < 0)
		return fail_at(c, n->pos, "regular expression evaluation failed");
	out->type = CEL_BOOL;
	out->b = rc == 1;
	return 0;
}

static int
call_fn(struct cel_ctx *c, const struct cel_node *n, struct cel_value *out)
{
	struct cel_value argv[3];
	size_t pos = n->pos;
	if (n->cst && !n->cst->err) {
		/* quantity("..."), semver("...") of literals, validated at compile time */
		*out = n->cst->val;
		return 0;
	}
	for (size_t k = 0; k < n->nargs && k < 3; k++)
		if (eval(c, n->args[k], &argv[k]) != 0)
			return -1;
	const struct cel_value *a = &argv[0];
	const struct cel_value *b = n->nargs > 1 ? &argv[1] : NULL;
	switch (n->fn) {
	case CEL_FN_SIZE:
		out->type = CEL_INT;
		if (a->type == CEL_STRING) {
			if (charge(c, pos, a->s.len / 10) != 0)
				return -1;
			out->i = (int64_t)rf_utf8_count(a->s.p, a->s.len);
		} else if (a->type == CEL_LIST) {
			out->i = (int64_t)a->list.n;
		} else if (a->type == CEL_MAP) {
			out->i = (int64_t)map_size(c, a);
		} else {
			return no_overload_fn(c, pos, "size", n->receiver ? a : NULL,
					      n->receiver ? NULL : a);
		}
		return 0;
	case CEL_FN_MATCHES:
		return call_matches(c, n, a, b, out);
	case CEL_FN_INCLUDES: {
		/* D362 cel/compile.go includesFunc: a list includes an equal element (at most 48
		 * elements: ResourceSliceMaxAttributeValuesPerDevice); anything else equals */
		bool eq = false;
		out->type = CEL_BOOL;
		out->b = false;
		if (a->type != CEL_LIST) {
			out->b = equal(c, pos, a, b, &eq) == 0 && eq;
			return c->fatal ? -1 : 0;
		}
		if (charge(c, pos, a->list.n) != 0)
			return -1;
		for (size_t k = 0; k < a->list.n && !out->b; k++) {
			if (k >= RF_ATTR_LIST_MAX)
				return fail_at(
					c, pos,
					"'includes' function cannot be applied to lists longer "
					"than %d values",
					RF_ATTR_LIST_MAX);
			out->b = equal(c, pos, &a->list.items[k], b, &eq) == 0 && eq;
			if (c->fatal)
				return -1;
		}
		return 0;
	}
	case CEL_FN_STARTS_WITH:
	case CEL_FN_ENDS_WITH:
	case CEL_FN_CONTAINS: {
		static const char *const names[] = { [CEL_FN_STARTS_WITH] = "startsWith",
						     [CEL_FN_ENDS_WITH] = "endsWith",
						     [CEL_FN_CONTAINS] = "contains" };
		if (a->type != CEL_STRING || b->type != CEL_STRING)
			return no_overload_fn(c, pos, names[n->fn], a, b);
		if (charge(c, pos, (a->s.len + b->s.len) / 10) != 0)
			return -1;
		out->type = CEL_BOOL;
		const char *s = a->s.p, *t = b->s.p;
		size_t sl = a->s.len, tl = b->s.len;
		if (tl > sl) {
			out->b = false;
		} else if (tl == 0) {
			out->b = true;
		} else if (n->fn == CEL_FN_STARTS_WITH) {
			out->b = memcmp(s, t, tl) == 0;
		} else if (n->fn == CEL_FN_ENDS_WITH) {
			out->b = memcmp(s + sl - tl, t, tl) == 0;
		} else {
			out->b = false;
			for (size_t k = 0; k + tl <= sl; k++) {
				if (s[k] == t[0] && memcmp(s + k, t, tl) == 0) {
					out->b = true;
					break;
				}
			}
		}
		return 0;
	}
	case CEL_FN_LOWER_ASCII:
	case CEL_FN_UPPER_ASCII: {
		bool lower = n->fn == CEL_FN_LOWER_ASCII;
		if (a->type != CEL_STRING)
			return no_overload_fn(c, pos, lower ? "lowerAscii" : "upperAscii", a, NULL);
		if (charge(c, pos, a->s.len / 10) != 0)
			return -1;
		char *s = ealloc(c, pos, a->s.len + 1);
		if (!s)
			return -1;
		for (size_t k = 0; k < a->s.len; k++) {
			char ch = a->s.p[k];
			if (lower && ch >= 'A' && ch <= 'Z')
				ch = (char)(ch - 'A' + 'a');
			else if (!lower && ch >= 'a' && ch <= 'z')
				ch = (char)(ch - 'a' + 'A');
			s[k] = ch;
		}
		s[a->s.len] = '\0';
		out->type = CEL_STRING;
		out->s.p = s;
		out->s.len = a->s.len;
		return 0;
	}
	case CEL_FN_QUANTITY:
	case CEL_FN_IS_QUANTITY: {
		bool is = n->fn == CEL_FN_IS_QUANTITY;
		if (a->type != CEL_STRING)
			return no_overload_fn(c, pos, is ? "isQuantity" : "quantity", NULL, a);
		if (n->cst && n->cst->err)
			return fail_at(c, pos, "%s", n->cst->err);
		struct rf_quantity q;
		int rc = rf_quantity_parsen(a->s.p, a->s.len, &q);
		if (is) {
			out->type = CEL_BOOL;
			out->b = rc == 0;
			return 0;
		}
		if (rc != 0)
			return fail_at(c, pos, "invalid quantity \"%.*s\"%s",
				       (int)(a->s.len > 64 ? 64 : a->s.len), a->s.p,
				       rc == -ERANGE ? ": out of range" : "");
		out->type = CEL_QUANTITY;
		out->q = q;
		return 0;
	}
	case CEL_FN_SEMVER:
	case CEL_FN_IS_SEMVER: {
		bool is = n->fn == CEL_FN_IS_SEMVER;
		if (a->type != CEL_STRING || (b && b->type != CEL_BOOL))
			return no_overload_fn(c, pos, is ? "isSemver" : "semver", NULL, a);
		if (n->cst && n->cst->err)
			return fail_at(c, pos, "%s", n->cst->err);
		struct cel_value v;
		int rc = parse_semver_value(c, pos, a, b && b->b, &v);
		if (is) {
			if (c->fatal)
				return -1;
			out->type = CEL_BOOL;
			out->b = rc == 0;
			return 0;
		}
		if (rc != 0)
			return -1;
		*out = v;
		return 0;
	}
	case CEL_FN_COMPARE_TO:
	case CEL_FN_IS_GREATER_THAN:
	case CEL_FN_IS_LESS_THAN: {
		static const char *const names[] = { [CEL_FN_COMPARE_TO] = "compareTo",
						     [CEL_FN_IS_GREATER_THAN] = "isGreaterThan",
						     [CEL_FN_IS_LESS_THAN] = "isLessThan" };
		int r;
		if (a->type == CEL_QUANTITY && b->type == CEL_QUANTITY)
			r = rf_quantity_cmp(a->q, b->q);
		else if (a->type == CEL_SEMVER && b->type == CEL_SEMVER)
			r = cel_semver_cmp(a->sv, b->sv);
		else
			return no_overload_fn(c, pos, names[n->fn], a, b);
		r = r < 0 ? -1 : r > 0;
		if (n->fn == CEL_FN_COMPARE_TO) {
			out->type = CEL_INT;
			out->i = r;
		} else {
			out->type = CEL_BOOL;
			out->b = n->fn == CEL_FN_IS_GREATER_THAN ? r > 0 : r < 0;
		}
		return 0;
	}
	case CEL_FN_ADD:
	case CEL_FN_SUB: {
		bool add = n->fn == CEL_FN_ADD;
		struct rf_quantity rhs;
		if (a->type != CEL_QUANTITY)
			return no_overload_fn(c, pos, add ? "add" : "sub", a, b);
		if (b->type == CEL_QUANTITY)
			rhs = b->q;
		else if (b->type == CEL_INT)
			rhs = rf_quantity_from_int(b->i);
		else
			return no_overload_fn(c, pos, add ? "add" : "sub", a, b);
		if (!quantity_ok(a->q) || !quantity_ok(rhs))
			return fail_at(c, pos, "quantity out of range");
		return quantity_result(
			c, pos, add ? rf_quantity_add(a->q, rhs) : rf_quantity_sub(a->q, rhs), out);
	}
	case CEL_FN_AS_INTEGER:
	case CEL_FN_IS_INTEGER: {
		bool is = n->fn == CEL_FN_IS_INTEGER;
		int64_t v;
		if (a->type != CEL_QUANTITY)
			return no_overload_fn(c, pos, is ? "isInteger" : "asInteger", a, NULL);
		bool ok = quantity_int(a->q, &v);
		if (is) {
			out->type = CEL_BOOL;
			out->b = ok;
			return 0;
		}
		if (!ok)
			return fail_at(c, pos, "cannot convert value to integer");
		out->type = CEL_INT;
		out->i = v;
		return 0;
	}
	case CEL_FN_AS_APPROXIMATE_FLOAT:
		if (a->type != CEL_QUANTITY)
			return no_overload_fn(c, pos, "asApproximateFloat", a, NULL);
		out->type = CEL_DOUBLE;
		out->d = rf_quantity_to_double(a->q);
		return 0;
	case CEL_FN_SIGN:
		if (a->type != CEL_QUANTITY)
			return no_overload_fn(c, pos, "sign", n->receiver ? a : NULL,
					      n->receiver ? NULL : a);
		out->type = CEL_INT;
		out->i = a->q.nano > 0 ? 1 : a->q.nano < 0 ? -1 : 0;
		return 0;
	case CEL_FN_MAJOR:
	case CEL_FN_MINOR:
	case CEL_FN_PATCH: {
		static const char *const names[] = {
			[CEL_FN_MAJOR] = "major", [CEL_FN_MINOR] = "minor", [CEL_FN_PATCH] = "patch"
		};
		if (a->type != CEL_SEMVER)
			return no_overload_fn(c, pos, names[n->fn], a, NULL);
		uint64_t v = n->fn == CEL_FN_MAJOR   ? a->sv->major
			     : n->fn == CEL_FN_MINOR ? a->sv->minor
						     : a->sv->patch;
		if (v > (uint64_t)INT64_MAX)
			return fail_at(c, pos, "integer overflow: version number %llu",
				       (unsigned long long)v);
		out->type = CEL_INT;
		out->i = (int64_t)v;
		return 0;
	}
	case CEL_FN_INT:
		return conv_int(c, pos, a, out);
	case CEL_FN_UINT:
		return conv_uint(c, pos, a, out);
	case CEL_FN_DOUBLE:
		return conv_double(c, pos, a, out);
	case CEL_FN_STRING:
		return conv_string(c, pos, a, out);
	case CEL_FN_BOOL:
		return conv_bool(c, pos, a, out);
	case CEL_FN_DYN:
		*out = *a;
		return 0;
	default:
		return fail_at(c, pos, "internal error: unresolved function %s", n->name);
	}
}

/* ---- nodes ---------------------------------------------------------------------------------- */

static int
eval_logic(struct cel_ctx *c, const struct cel_node *n, struct cel_value *out)
{
	bool is_and = n->kind == CEL_N_AND;
	bool have_err = false;
	size_t err_pos = 0;
	char err_msg[RF_CEL_ERR_MAX];
	for (size_t k = 0; k < n->nargs; k++) {
		struct cel_value v;
		if (eval(c, n->args[k], &v) != 0) {
			if (c->fatal)
				return -1;
			if (!have_err) {
				have_err = true;
				err_pos = c->pos;
				memcpy(err_msg, c->msg, sizeof(err_msg));
			}
			continue;
		}
		if (v.type != CEL_BOOL) {
			if (!have_err) {
				have_err = true;
				err_pos = n->pos;
				snprintf(err_msg, sizeof(err_msg),
					 "no such overload: %s operand of %s", tname(&v),
					 is_and ? "&&" : "||");
			}
			continue;
		}
		/* false decides &&, true decides ||, whatever errors the others raise */
		if (v.b != is_and) {
			out->type = CEL_BOOL;
			out->b = v.b;
			return 0;
		}
	}
	if (have_err) {
		c->pos = err_pos;
		memcpy(c->msg, err_msg, sizeof(c->msg));
		return -1;
	}
	out->type = CEL_BOOL;
	out->b = is_and;
	return 0;
}

static int
eval_index(struct cel_ctx *c, const struct cel_node *n, struct cel_value *out)
{
	struct cel_value a, k;
	if (eval(c, n->args[0], &a) != 0 || eval(c, n->args[1], &k) != 0)
		return -1;
	if (a.type == CEL_LIST) {
		int64_t idx;
		if (k.type == CEL_INT) {
			idx = k.i;
		} else if (k.type == CEL_UINT) {
			idx = k.u > (uint64_t)INT64_MAX ? -1 : (int64_t)k.u;
		} else if (k.type == CEL_DOUBLE && k.d == trunc(k.d) && k.d >= 0 &&
			   k.d < 9223372036854775808.0) {
			idx = (int64_t)k.d;
		} else {
			return no_overload2(c, n->pos, "[]", &a, &k);
		}
		if (idx < 0 || (uint64_t)idx >= a.list.n)
			return fail_at(c, n->pos, "index out of range: %lld", (long long)idx);
		*out = a.list.items[idx];
		return 0;
	}
	if (a.type == CEL_MAP) {
		bool found;
		if (charge(c, n->pos, 1) != 0 || map_find(c, n->pos, &a, &k, out, &found) != 0)
			return -1;
		if (!found) {
			if (k.type == CEL_STRING)
				return fail_at(c, n->pos, "no such key: %.*s",
					       (int)(k.s.len > 128 ? 128 : k.s.len), k.s.p);
			return fail_at(c, n->pos, "no such key: %s key", tname(&k));
		}
		return 0;
	}
	return fail_at(c, n->pos, "no such overload: %s[%s]", tname(&a), tname(&k));
}

static int
eval(struct cel_ctx *c, const struct cel_node *n, struct cel_value *out)
{
	if (charge(c, n->pos, 1) != 0)
		return -1;
	switch (n->kind) {
	case CEL_N_LITERAL:
		*out = n->lit;
		return 0;
	case CEL_N_DEVICE_FIELD:
		switch (n->field) {
		case CEL_DEV_DRIVER:
			out->type = CEL_STRING;
			out->s.p = c->dev->driver ? c->dev->driver : "";
			out->s.len = strlen(out->s.p);
			return 0;
		case CEL_DEV_ATTRIBUTES:
		case CEL_DEV_CAPACITY:
			out->type = CEL_MAP;
			out->map.kind = n->field == CEL_DEV_ATTRIBUTES ? CEL_MAP_ATTR_DOMAINS
								       : CEL_MAP_CAP_DOMAINS;
			out->map.dom = NULL;
			out->map.dom_len = 0;
			return 0;
		case CEL_DEV_ALLOW_MULTIPLE:
			out->type = CEL_BOOL;
			out->b = c->dev->allow_multiple_allocations;
			return 0;
		}
		return fail_at(c, n->pos, "internal error: device field");
	case CEL_N_SELECT:
	case CEL_N_HAS: {
		struct cel_value m;
		if (eval(c, n->args[0], &m) != 0)
			return -1;
		if (m.type != CEL_MAP)
			return fail_at(
				c, n->name_pos,
				"no such overload: field selection .%s on a value of type %s",
				n->name, tname(&m));
		struct cel_value key = { .type = CEL_STRING, .s = { n->name, n->name_len } };
		if (n->kind == CEL_N_HAS) {
			out->type = CEL_BOOL;
			out->b = map_contains(c, &m, &key);
			return 0;
		}
		bool found;
		if (map_find(c, n->name_pos, &m, &key, out, &found) != 0)
			return -1;
		if (!found)
			return fail_at(c, n->name_pos, "no such key: %s", n->name);
		return 0;
	}
	case CEL_N_INDEX:
		return eval_index(c, n, out);
	case CEL_N_CALL:
		return call_fn(c, n, out);
	case CEL_N_NOT: {
		struct cel_value v;
		if (eval(c, n->args[0], &v) != 0)
			return -1;
		if (v.type != CEL_BOOL)
			return fail_at(c, n->pos, "no such overload: !%s", tname(&v));
		out->type = CEL_BOOL;
		out->b = !v.b;
		return 0;
	}
	case CEL_N_NEG: {
		struct cel_value v;
		if (eval(c, n->args[0], &v) != 0)
			return -1;
		if (v.type == CEL_INT) {
			if (v.i == INT64_MIN)
				return fail_at(c, n->pos, "integer overflow: -(%lld)",
					       (long long)v.i);
			out->type = CEL_INT;
			out->i = -v.i;
			return 0;
		}
		if (v.type == CEL_DOUBLE) {
			out->type = CEL_DOUBLE;
			out->d = -v.d;
			return 0;
		}
		return fail_at(c, n->pos, "no such overload: -%s", tname(&v));
	}
	case CEL_N_AND:
	case CEL_N_OR:
		return eval_logic(c, n, out);
	case CEL_N_CHAIN: {
		struct cel_value acc;
		if (eval(c, n->args[0], &acc) != 0)
			return -1;
		for (size_t k = 1; k < n->nargs; k++) {
			struct cel_value r, res;
			if (eval(c, n->args[k], &r) != 0)
				return -1;
			if (binop(c, n->op_pos[k - 1], n->ops[k - 1], &acc, &r, &res) != 0)
				return -1;
			acc = res;
		}
		*out = acc;
		return 0;
	}
	case CEL_N_COND: {
		struct cel_value v;
		if (eval(c, n->args[0], &v) != 0)
			return -1;
		if (v.type != CEL_BOOL)
			return fail_at(c, n->pos, "no such overload: %s ? _ : _", tname(&v));
		return eval(c, n->args[v.b ? 1 : 2], out);
	}
	case CEL_N_LIST: {
		struct cel_value *items =
			n->nargs ? ealloc(c, n->pos, n->nargs * sizeof(*items)) : NULL;
		if (n->nargs && !items)
			return -1;
		for (size_t k = 0; k < n->nargs; k++)
			if (eval(c, n->args[k], &items[k]) != 0)
				return -1;
		out->type = CEL_LIST;
		out->list.items = items;
		out->list.n = n->nargs;
		return 0;
	}
	case CEL_N_IDENT:
	default:
		return fail_at(c, n->pos, "internal error: unresolved node");
	}
}

int
cel_eval_program(const struct rf_cel_program *p, const struct rf_cel_device *d,
		 struct rf_cel_error *err)
{
	_Alignas(16) unsigned char stack_buf[2048];
	struct cel_ctx c = { .dev = d, .cost_limit = CEL_COST_LIMIT };
	rf_arena_init_buf(&c.arena, CEL_EVAL_MEM_LIMIT, stack_buf, sizeof(stack_buf));
	struct cel_value v;
	int rc;
	if (eval(&c, p->root, &v) != 0) {
		rc = c.fatal ? c.fatal_rc : -EINVAL;
	} else if (v.type != CEL_BOOL) {
		fail_at(&c, p->root->pos, "expression did not evaluate to a bool (got %s)",
			tname(&v));
		rc = -EINVAL;
	} else {
		rc = v.b ? 1 : 0;
	}
	if (rc < 0 && err) {
		err->pos = c.pos;
		snprintf(err->msg, sizeof(err->msg), "%s", c.msg);
	}
	rf_arena_release(&c.arena);
	return rc;
}
