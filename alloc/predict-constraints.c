/* Taints (step 5) and a claim's matchAttribute and distinctAttribute constraints (step 6) of the
 * checks (reference/dra-allocator.md section 7): up to 1.35 railfit's rules check the picks; from
 * 1.36 the allocator's constraints keep their own state (list_constraints.h). */
#include <errno.h>
#include <string.h>

#include "alloc/list_constraints.h"
#include "alloc/predict-private.h"

static bool
tolerated(const struct rf_request_alt *alt, const struct rf_taint *t)
{
	for (size_t i = 0; i < alt->n_tolerations; i++) {
		const struct rf_toleration *tol = &alt->tolerations[i];
		if (tol->effect && tol->effect[0] && strcmp(tol->effect, t->effect) != 0)
			continue;
		bool exists = tol->op && strcmp(tol->op, "Exists") == 0;
		if (exists) {
			if (!tol->key || !tol->key[0] || strcmp(tol->key, t->key) == 0)
				return true;
			continue;
		}
		if (tol->key && strcmp(tol->key, t->key) == 0 &&
		    strcmp(tol->value ? tol->value : "", t->value ? t->value : "") == 0)
			return true;
	}
	return false;
}

/* The first taint of d that keeps alt from it, or NULL. */
const struct rf_taint *
rf_search_blocking_taint(const struct search *s, const struct rf_request_alt *alt,
			 const struct rf_device *d)
{
	size_t n;
	const struct rf_taint *taints = rf_device_taints(s->req->cluster, d, &n);
	for (size_t i = 0; i < n; i++) {
		const struct rf_taint *t = &taints[i];
		bool counts = s->ver == RF_DRA_1_34 || strcmp(t->effect, "NoSchedule") == 0 ||
			      strcmp(t->effect, "NoExecute") == 0;
		if (counts && !tolerated(alt, t))
			return t;
	}
	return NULL;
}

static bool
constraints_ok(const struct search *s, const struct rf_claim *cl, const char *alt_name,
	       const struct rf_device *d)
{
	if (s->lists.sets)
		return rf_lc_fits(&s->cur, cl, alt_name, d);
	for (size_t i = 0; i < cl->n_constraints; i++) {
		const struct rf_constraint *co = &cl->constraints[i];
		if (!rf_constraint_covers(co, alt_name))
			continue;
		if (co->match_attribute) {
			const struct rf_attr *mine =
				rf_attr_find(d->attrs, d->n_attrs, co->match_attribute);
			/* up to 1.35 a value it cannot read fails at once; from 1.36 a list is
			 * accepted as the first (reference) value and matches nothing after */
			if (!mine || mine->kind == RF_ATTR_OTHER ||
			    (mine->kind == RF_ATTR_LIST && s->ver < RF_DRA_1_36))
				return false;
			for (size_t p = 0; p < s->cur.n; p++) {
				const struct rf_pick *pk = &s->cur.picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				const struct rf_attr *ref = rf_attr_find(
					pk->dev->attrs, pk->dev->n_attrs, co->match_attribute);
				if (!ref || !rf_constraint_scalar_equal(ref, mine))
					return false;
				break; /* the first device fixed the reference value */
			}
		}
		if (co->distinct_attribute) {
			const struct rf_attr *mine =
				rf_attr_find(d->attrs, d->n_attrs, co->distinct_attribute);
			/* 1.35 fails on a value of a kind it does not know (the API server's
			 * validation lets none through; a newer kind would be one) */
			if (!mine || (mine->kind == RF_ATTR_OTHER && s->ver != RF_DRA_1_34))
				return false;
			/* v0.35-v0.36 keep one value per request name: the latest device of each
			 * (so does v0.34, comparing the values' pointers: only the same device is
			 * a duplicate); 1.37 compares every device (#140600) */
			for (size_t p = s->cur.n; p-- > 0;) {
				const struct rf_pick *pk = &s->cur.picks[p];
				if (pk->claim != cl || pk->pinned ||
				    !rf_constraint_covers(co, pk->request))
					continue;
				bool latest = true;
				if (!rules_distinct_per_request(s))
					goto compare;
				for (size_t q = p + 1; q < s->cur.n && latest; q++)
					latest = s->cur.picks[q].claim != cl ||
						 strcmp(s->cur.picks[q].request, pk->request) != 0;
				if (!latest)
					continue;
compare:;
				/* a list against any value compared with: the scalar comparison's
				 * "unknown value type" (D362 incubating/constraint.go:125-130) */
				if (mine->kind == RF_ATTR_LIST && s->ver >= RF_DRA_1_36)
					return false;
				const struct rf_attr *o = rf_attr_find(
					pk->dev->attrs, pk->dev->n_attrs, co->distinct_attribute);
				if (s->ver == RF_DRA_1_34
					    ? pk->dev == d
					    : o && rf_constraint_scalar_equal(o, mine))
					return false;
			}
		}
	}
	return true;
}

/* Step 6 for claim ci: with list semantics the allocator's constraints keep state, added to
 * here and undone by rf_search_constraints_release() (list_constraints.h); otherwise, and for the
 * best-achievable search, a check against the picks. */
bool
rf_search_constraints_take(struct search *s, size_t ci, const char *alt_name,
			   const struct rf_device *d)
{
	if (s->lc && !s->best)
		return rf_lc_add(s->lc, ci, alt_name, d);
	return constraints_ok(s, s->req->claims[ci], alt_name, d);
}

void
rf_search_constraints_release(struct search *s, size_t ci, const char *alt_name,
			      const struct rf_device *d)
{
	if (s->lc && !s->best)
		rf_lc_remove(s->lc, ci, alt_name, d);
}

/* The constraints' state of the 1.36+ allocators (rf_predict only; none without constraints). */
int
rf_search_list_constraints_init(struct search *s)
{
	const struct rf_node *n = s->req->node;
	size_t max_list = 1, n_constraints = 0;
	/* up to 1.35 railfit's rules check the picks (constraints_ok) */
	if (s->ver < RF_DRA_1_36)
		return 0;
	for (size_t c = 0; c < s->req->n_claims; c++)
		n_constraints += s->req->claims[c]->n_constraints;
	if (!n_constraints)
		return 0;
	for (size_t i = 0; s->lists.sets && i < n->n_devices; i++)
		for (size_t a = 0; a < n->devices[i]->n_attrs; a++)
			if (n->devices[i]->attrs[a].kind == RF_ATTR_LIST &&
			    n->devices[i]->attrs[a].list->n > max_list)
				max_list = n->devices[i]->attrs[a].list->n;
	s->lc = rf_lc_new(s->req->claims, s->req->n_claims, s->lists.sets,
			  !rules_distinct_per_request(s), max_list);
	return s->lc ? 0 : -ENOMEM;
}
