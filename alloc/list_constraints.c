/* Constraints over list-typed attributes (see list_constraints.h). */
#include "alloc/list_constraints.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One constraint of one claim. */
struct lc {
	const struct rf_constraint *co;
	int n; /* numDevices */
	/* matchAttribute: the first device's attribute and which of its elements are still in
	 * the running intersection */
	const struct rf_attr *base;
	bool *in;
	/* distinctAttribute: the attributes it compares with, by request name (or device) */
	struct lc_entry {
		const char *request; /* base request name, borrowed from the claim */
		size_t request_len;
		const struct rf_device *dev;
		const struct rf_attr *attr;
	} * entries;
	size_t n_entries;
};

struct rf_lc_state {
	const struct rf_claim *const *claims;
	size_t n_claims;
	bool sets; /* false: the scalar comparisons of the allocator without ListTypeAttributes */
	bool per_device;
	struct lc **by_claim; /* [claim][constraint] */
};

bool
rf_constraint_covers(const struct rf_constraint *co, const char *name)
{
	if (co->n_requests == 0)
		return true;
	size_t base = strcspn(name, "/");
	for (size_t i = 0; i < co->n_requests; i++) {
		const char *r = co->requests[i];
		if (strcmp(r, name) == 0 || (strlen(r) == base && strncmp(r, name, base) == 0))
			return true;
	}
	return false;
}

/* ---- attributes as sets (attributeAsSet) ---- */

/* The kind of a's elements; RF_ATTR_OTHER when a is no set (an unknown kind, an empty list). */
static enum rf_attr_kind
set_kind(const struct rf_attr *a)
{
	if (a->kind == RF_ATTR_LIST)
		return a->list->n ? a->list->elem : RF_ATTR_OTHER;
	return a->kind;
}

static size_t
set_len(const struct rf_attr *a)
{
	return a->kind == RF_ATTR_LIST ? a->list->n : 1;
}

static bool
elem_eq(const struct rf_attr *a, size_t i, const struct rf_attr *b, size_t j, enum rf_attr_kind k)
{
	bool la = a->kind == RF_ATTR_LIST, lb = b->kind == RF_ATTR_LIST;
	switch (k) {
	case RF_ATTR_INT:
		return (la ? a->list->i[i] : a->i) == (lb ? b->list->i[j] : b->i);
	case RF_ATTR_BOOL:
		return (la ? a->list->b[i] : a->b) == (lb ? b->list->b[j] : b->b);
	case RF_ATTR_STRING:
	case RF_ATTR_VERSION:
		/* semver text is minimal: equal versions are equal strings */
		return strcmp(la ? a->list->s[i] : a->s, lb ? b->list->s[j] : b->s) == 0;
	case RF_ATTR_OTHER:
	case RF_ATTR_LIST:
		break;
	}
	return false;
}

/* Is element i of a an element of b? (both of kind k) */
static bool
set_has(const struct rf_attr *b, const struct rf_attr *a, size_t i, enum rf_attr_kind k)
{
	for (size_t j = 0; j < set_len(b); j++)
		if (elem_eq(a, i, b, j, k))
			return true;
	return false;
}

/* hasIntersection: same element kind and a common element */
static bool
sets_meet(const struct rf_attr *a, const struct rf_attr *b)
{
	enum rf_attr_kind k = set_kind(a);
	if (k == RF_ATTR_OTHER || k != set_kind(b))
		return false;
	for (size_t i = 0; i < set_len(a); i++)
		if (set_has(b, a, i, k))
			return true;
	return false;
}

/* The scalar comparison (D362 incubating/allocator_incubating.go:802-830,
 * incubating/constraint.go:96-131): by the kind of the new value; a list or a value of an
 * unknown kind is never equal (and never distinct) */
static bool
scalar_kind(const struct rf_attr *a)
{
	return a->kind == RF_ATTR_INT || a->kind == RF_ATTR_BOOL || a->kind == RF_ATTR_STRING ||
	       a->kind == RF_ATTR_VERSION;
}

bool
rf_constraint_scalar_equal(const struct rf_attr *a, const struct rf_attr *ref)
{
	if (!scalar_kind(a) || a->kind != ref->kind)
		return false;
	switch (a->kind) {
	case RF_ATTR_INT:
		return a->i == ref->i;
	case RF_ATTR_BOOL:
		return a->b == ref->b;
	default:
		return strcmp(a->s, ref->s) == 0;
	}
}

/* ---- the state machine ---- */

struct rf_lc_state *
rf_lc_new(const struct rf_claim *const *claims, size_t n_claims, bool sets, bool per_device,
	  size_t max_list)
{
	struct rf_lc_state *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->claims = claims;
	st->n_claims = n_claims;
	st->sets = sets;
	st->per_device = per_device;
	if (!(st->by_claim = calloc(n_claims + 1, sizeof(*st->by_claim))))
		goto fail;
	for (size_t c = 0; c < n_claims; c++) {
		const struct rf_claim *cl = claims[c];
		if (!cl->n_constraints)
			continue;
		if (!(st->by_claim[c] = calloc(cl->n_constraints, sizeof(struct lc))))
			goto fail;
		for (size_t i = 0; i < cl->n_constraints; i++) {
			struct lc *l = &st->by_claim[c][i];
			l->co = &cl->constraints[i];
			if (l->co->match_attribute &&
			    !(l->in = calloc(max_list ? max_list : 1, sizeof(bool))))
				goto fail;
			/* an entry per device of the search at most (RF_MAX_PICKS) */
			if (l->co->distinct_attribute &&
			    !(l->entries = calloc(RF_MAX_PICKS, sizeof(*l->entries))))
				goto fail;
		}
	}
	return st;
fail:
	rf_lc_free(st);
	return NULL;
}

void
rf_lc_free(struct rf_lc_state *st)
{
	if (!st)
		return;
	for (size_t c = 0; st->by_claim && c < st->n_claims; c++) {
		for (size_t i = 0; st->by_claim[c] && i < st->claims[c]->n_constraints; i++) {
			free(st->by_claim[c][i].in);
			free(st->by_claim[c][i].entries);
		}
		free(st->by_claim[c]);
	}
	free(st->by_claim);
	free(st);
}

void
rf_lc_reset(struct rf_lc_state *st)
{
	for (size_t c = 0; c < st->n_claims; c++)
		for (size_t i = 0; st->by_claim[c] && i < st->claims[c]->n_constraints; i++) {
			st->by_claim[c][i].n = 0;
			st->by_claim[c][i].base = NULL;
			st->by_claim[c][i].n_entries = 0;
		}
}

static bool
match_add_scalar(struct lc *l, const struct rf_attr *a)
{
	if (l->n == 0) {
		l->base = a; /* the first device can always be picked, whatever its value */
		l->n = 1;
		return true;
	}
	if (!rf_constraint_scalar_equal(a, l->base))
		return false;
	l->n++;
	return true;
}

static bool
match_add(struct lc *l, const struct rf_attr *a)
{
	enum rf_attr_kind k = set_kind(a);
	if (k == RF_ATTR_OTHER)
		return false;
	if (l->n == 0) {
		/* the first device can always be picked: its set is the intersection */
		l->base = a;
		for (size_t i = 0; i < set_len(a); i++)
			l->in[i] = true;
		l->n = 1;
		return true;
	}
	if (k != set_kind(l->base))
		return false;
	bool meet = false;
	for (size_t i = 0; i < set_len(l->base) && !meet; i++)
		meet = l->in[i] && set_has(a, l->base, i, k);
	if (!meet)
		return false;
	for (size_t i = 0; i < set_len(l->base); i++)
		l->in[i] = l->in[i] && set_has(a, l->base, i, k);
	l->n++;
	return true;
}

/* the entry a request (or device) overwrites, or a new one */
static struct lc_entry *
distinct_slot(struct lc *l, const char *request, size_t len, const struct rf_device *d,
	      bool per_device)
{
	for (size_t i = 0; !per_device && i < l->n_entries; i++)
		if (l->entries[i].request_len == len &&
		    strncmp(l->entries[i].request, request, len) == 0)
			return &l->entries[i];
	if (l->n_entries == RF_MAX_PICKS)
		return NULL;
	struct lc_entry *e = &l->entries[l->n_entries++];
	e->request = request;
	e->request_len = len;
	e->dev = d;
	return e;
}

static bool
distinct_add(struct lc *l, const struct rf_attr *a, const char *alt_name, const struct rf_device *d,
	     bool sets, bool per_device)
{
	size_t len = strcspn(alt_name, "/");
	if (l->n > 0 && !sets) {
		/* compared with what is left: a request's entry goes with any of its devices */
		for (size_t i = 0; i < l->n_entries; i++)
			if (!scalar_kind(a) || rf_constraint_scalar_equal(a, l->entries[i].attr))
				return false;
	} else if (l->n > 0) {
		if (set_kind(a) == RF_ATTR_OTHER)
			return false;
		for (size_t i = 0; i < l->n_entries; i++)
			/* an entry that is no set is passed over */
			if (set_kind(l->entries[i].attr) != RF_ATTR_OTHER &&
			    sets_meet(a, l->entries[i].attr))
				return false;
	}
	/* the first device is taken whatever its value */
	struct lc_entry *e = distinct_slot(l, alt_name, len, d, per_device);
	if (!e)
		return false;
	e->dev = d;
	e->attr = a;
	l->n++;
	return true;
}

static void
distinct_remove(struct lc *l, const char *alt_name, const struct rf_device *d, bool per_device)
{
	size_t len = strcspn(alt_name, "/");
	/* up to 1.36 the request's entry goes, whichever of its devices left; from 1.37 the
	 * device's own (the latest one: removes come in reverse order) */
	for (size_t i = l->n_entries; i-- > 0;) {
		const struct lc_entry *e = &l->entries[i];
		if (per_device ? e->dev != d
			       : e->request_len != len || strncmp(e->request, alt_name, len) != 0)
			continue;
		memmove(&l->entries[i], &l->entries[i + 1],
			(l->n_entries - i - 1) * sizeof(*l->entries));
		l->n_entries--;
		break;
	}
	l->n--;
}

static void
lc_remove_one(struct rf_lc_state *st, struct lc *l, const char *alt_name, const struct rf_device *d)
{
	if (l->co->match_attribute)
		l->n--; /* the intersection stays as it is */
	else if (l->co->distinct_attribute)
		distinct_remove(l, alt_name, d, st->per_device);
}

bool
rf_lc_add(struct rf_lc_state *st, size_t ci, const char *alt_name, const struct rf_device *d)
{
	const struct rf_claim *cl = st->claims[ci];
	for (size_t i = 0; i < cl->n_constraints; i++) {
		struct lc *l = &st->by_claim[ci][i];
		if (!rf_constraint_covers(l->co, alt_name))
			continue;
		const char *name =
			l->co->match_attribute ? l->co->match_attribute : l->co->distinct_attribute;
		const struct rf_attr *a = name ? rf_attr_find(d->attrs, d->n_attrs, name) : NULL;
		bool ok =
			a && (l->co->match_attribute
				      ? (st->sets ? match_add(l, a) : match_add_scalar(l, a))
				      : distinct_add(l, a, alt_name, d, st->sets, st->per_device));
		if (ok)
			continue;
		for (size_t e = 0; e < i; e++)
			if (rf_constraint_covers(st->by_claim[ci][e].co, alt_name))
				lc_remove_one(st, &st->by_claim[ci][e], alt_name, d);
		return false;
	}
	return true;
}

void
rf_lc_remove(struct rf_lc_state *st, size_t ci, const char *alt_name, const struct rf_device *d)
{
	const struct rf_claim *cl = st->claims[ci];
	for (size_t i = 0; i < cl->n_constraints; i++)
		if (rf_constraint_covers(st->by_claim[ci][i].co, alt_name))
			lc_remove_one(st, &st->by_claim[ci][i], alt_name, d);
}

bool
rf_lc_fits(const struct rf_assignment *a, const struct rf_claim *cl, const char *alt_name,
	   const struct rf_device *d)
{
	for (size_t i = 0; i < cl->n_constraints; i++) {
		const struct rf_constraint *co = &cl->constraints[i];
		if (!rf_constraint_covers(co, alt_name))
			continue;
		const char *name =
			co->match_attribute ? co->match_attribute : co->distinct_attribute;
		const struct rf_attr *mine = name ? rf_attr_find(d->attrs, d->n_attrs, name) : NULL;
		enum rf_attr_kind k;
		if (!mine || (k = set_kind(mine)) == RF_ATTR_OTHER)
			return false;
		if (co->distinct_attribute) {
			for (size_t p = 0; p < a->n; p++) {
				const struct rf_pick *pk = &a->picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				const struct rf_attr *o =
					rf_attr_find(pk->dev->attrs, pk->dev->n_attrs, name);
				if (o && sets_meet(mine, o))
					return false;
			}
			continue;
		}
		/* some element of mine in the set of every pick */
		bool common = false;
		for (size_t e = 0; e < set_len(mine) && !common; e++) {
			common = true;
			for (size_t p = 0; p < a->n && common; p++) {
				const struct rf_pick *pk = &a->picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				const struct rf_attr *o =
					rf_attr_find(pk->dev->attrs, pk->dev->n_attrs, name);
				common = o && set_kind(o) == k && set_has(o, mine, e, k);
			}
		}
		if (!common)
			return false;
	}
	return true;
}
