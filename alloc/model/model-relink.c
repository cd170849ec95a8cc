/* Claims and pods parsed for another layout, made this one's (see model-private.h).
 *
 * A Node or ResourceSlice change rebuilds or patches the layout (~150 ms at 5,000 nodes built in
 * full), and claims and pods point into the old one: their selectors, allocated devices, node
 * indexes (not their DeviceClasses: claims name them, and the demand looks them up in the
 * generation judging it, so a DeviceClass change relinks nothing). Parsing all 24,000 of them
 * again (expanding each packed object) took ~1 s. A relinked copy is the parsed value with those
 * few things looked up again in the new layout, and its strings copied (the old table goes with
 * the old generations). Whatever cannot be looked up the same way (a selector that no longer
 * compiles) returns NULL: the caller parses the object afresh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/strtab.h"

struct copier {
	struct rf_arena *a;
	struct rf_strtab *st;
	int oom;
};

static const char *
S(struct copier *k, const char *s)
{
	return rf_strtab_get(k->st, s, &k->oom);
}

/* n elements of size bytes copied into the arena (NULL for none). */
static void *
copy_array(struct copier *k, const void *v, size_t n, size_t size)
{
	if (!v || !n)
		return NULL;
	void *d = rf_arena_calloc(k->a, n, size);
	if (!d)
		k->oom = 1;
	else
		memcpy(d, v, n * size);
	return d;
}

static const char **
copy_strings(struct copier *k, const char *const *v, size_t n)
{
	const char **d = copy_array(k, v, n, sizeof(*v));
	for (size_t i = 0; d && i < n; i++)
		d[i] = S(k, v[i]);
	return d;
}

/* false when a selector does not compile as it did; same_layout: the programs are c's already
 * (a claim parsed for c: kept as they are) */
static bool
relink_alt(const struct rf_cluster *c, struct copier *k, struct rf_request_alt *alt,
	   bool same_layout)
{
	alt->name = S(k, alt->name);
	alt->class_name = S(k, alt->class_name);
	alt->selector_texts = copy_strings(k, alt->selector_texts, alt->n_selectors);
	const struct rf_cel_program **progs =
		copy_array(k, alt->selectors, alt->n_selectors, sizeof(*alt->selectors));
	for (size_t i = 0; progs && !same_layout && i < alt->n_selectors; i++) {
		struct rf_cel_error err = { 0 };
		if (rf_cluster_selector(c, alt->selector_texts[i], &progs[i], &err) < 0)
			return false;
	}
	alt->selectors = progs;
	struct rf_toleration *t =
		copy_array(k, alt->tolerations, alt->n_tolerations, sizeof(*alt->tolerations));
	for (size_t i = 0; t && i < alt->n_tolerations; i++) {
		t[i].key = S(k, t[i].key);
		t[i].op = S(k, t[i].op);
		t[i].value = S(k, t[i].value);
		t[i].effect = S(k, t[i].effect);
	}
	alt->tolerations = t;
	alt->cap_request_names = copy_strings(k, alt->cap_request_names, alt->n_cap_requests);
	alt->cap_request_values = copy_array(k, alt->cap_request_values, alt->n_cap_requests,
					     sizeof(*alt->cap_request_values));
	return true;
}

/* On a patched layout (no duplicate names, stable gidx for the pools it shared) the device at
 * the result's old gidx, when it has the result's names: what the search would find, without a
 * search of the pool (a new table relinks every claim; most of their devices did not move). The
 * old device itself is not read: it may belong to a layout that is gone. */
static struct rf_device *
same_device(const struct rf_cluster *c, const struct rf_alloc_result *ar)
{
	struct rf_device *d = c->layout && c->layout->patched && ar->device && ar->pool &&
					      ar->driver && ar->gidx < c->n_devices
				      ? c->devices[ar->gidx]
				      : NULL;
	return d && strcmp(d->name, ar->device) == 0 && strcmp(d->pool->name, ar->pool) == 0 &&
			       strcmp(d->pool->driver, ar->driver) == 0
		       ? d
		       : NULL;
}

static bool
same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool
same_alt(const struct rf_request_alt *a, const struct rf_request_alt *b)
{
	if (!same_str(a->name, b->name) || !same_str(a->class_name, b->class_name) ||
	    a->n_selectors != b->n_selectors || a->all != b->all || a->count != b->count ||
	    a->admin_access != b->admin_access || a->n_tolerations != b->n_tolerations ||
	    a->n_cap_requests != b->n_cap_requests)
		return false;
	for (size_t i = 0; i < a->n_selectors; i++)
		if (!same_str(a->selector_texts[i], b->selector_texts[i]))
			return false;
	for (size_t i = 0; i < a->n_tolerations; i++) {
		const struct rf_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (!same_str(x->key, y->key) || !same_str(x->op, y->op) ||
		    !same_str(x->value, y->value) || !same_str(x->effect, y->effect))
			return false;
	}
	for (size_t i = 0; i < a->n_cap_requests; i++)
		if (!same_str(a->cap_request_names[i], b->cap_request_names[i]) ||
		    a->cap_request_values[i].nano != b->cap_request_values[i].nano)
			return false;
	return true;
}

/* Whether two claims' requests say the same (everything relink_alt reads and copies). */
static bool
same_requests(const struct rf_request *a, const struct rf_request *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!same_str(a[i].name, b[i].name) ||
		    a[i].first_available != b[i].first_available || a[i].n_alts != b[i].n_alts)
			return false;
		for (size_t j = 0; j < a[i].n_alts; j++)
			if (!same_alt(&a[i].alts[j], &b[i].alts[j]))
				return false;
	}
	return true;
}

static size_t
requests_slot(const struct rf_request *rq, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ n;
	const char *s = n ? rq[0].name : NULL,
		   *cls = n && rq[0].n_alts ? rq[0].alts[0].class_name : NULL;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	for (; cls && *cls; cls++)
		h = (h ^ (unsigned char)*cls) * 0x100000001b3ULL;
	if (n && rq[0].n_alts)
		h = (h ^ (uint64_t)rq[0].alts[0].count) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29)) % (sizeof(((struct rf_cluster *)0)->relinked_requests) /
					  sizeof(struct relinked_requests));
}

/* o's requests relinked into k's arena, or those of a claim relinked (or parsed: same_layout)
 * before them in this build that say the same (NULL on OOM or when a selector no longer
 * compiles). same_layout: o was parsed for c into memory that goes after the call, so the
 * cache compares with the copy. */
static struct rf_request *
relink_requests(struct rf_cluster *c, struct copier *k, const struct rf_claim *o, bool *failed,
		bool same_layout)
{
	if (!o->n_requests)
		return NULL;
	struct relinked_requests *e =
		&c->relinked_requests[requests_slot(o->requests, o->n_requests)];
	if (e->into == c->reuse && e->n == o->n_requests &&
	    same_requests(e->from, o->requests, o->n_requests))
		return e->to;
	struct rf_request *rqs = copy_array(k, o->requests, o->n_requests, sizeof(*o->requests));
	for (size_t i = 0; rqs && i < o->n_requests; i++) {
		struct rf_request *rq = &rqs[i];
		rq->name = S(k, rq->name);
		rq->alts = copy_array(k, rq->alts, rq->n_alts, sizeof(*rq->alts));
		for (size_t j = 0; rq->alts && j < rq->n_alts; j++)
			if (!relink_alt(c, k, &rq->alts[j], same_layout)) {
				*failed = true;
				return NULL;
			}
	}
	if (rqs && !k->oom)
		*e = (struct relinked_requests){ c->reuse, same_layout ? rqs : o->requests,
						 o->n_requests, rqs };
	return rqs;
}

static struct rf_constraint *
copy_constraints(struct copier *k, const struct rf_constraint *v, size_t n)
{
	struct rf_constraint *d = copy_array(k, v, n, sizeof(*v));
	for (size_t i = 0; d && i < n; i++) {
		struct rf_constraint *co = &d[i];
		co->requests = copy_strings(k, co->requests, co->n_requests);
		co->match_attribute = S(k, co->match_attribute);
		co->distinct_attribute = S(k, co->distinct_attribute);
	}
	return d;
}

int
rf_model_keep_spec(struct rf_cluster *c, void *strtab, struct rf_claim *cl)
{
	struct copier k = { c->reuse->arena, strtab, 0 };
	bool failed = false;
	cl->unsupported = S(&k, cl->unsupported);
	cl->requests = relink_requests(c, &k, cl, &failed, true);
	cl->constraints = copy_constraints(&k, cl->constraints, cl->n_constraints);
	return k.oom || failed ? -ENOMEM : 0;
}

void *
rf_model_relink_claim(struct rf_cluster *c, void *strtab, const void *old)
{
	const struct rf_claim *o = old;
	struct copier k = { c->reuse->arena, strtab, 0 };
	struct rf_claim *cl = copy_array(&k, o, 1, sizeof(*o));
	if (!cl)
		return NULL;
	memset(&cl->marks, 0, sizeof(cl->marks));
	cl->ns = S(&k, o->ns);
	cl->name = S(&k, o->name);
	cl->uid = S(&k, o->uid);
	cl->unsupported = S(&k, o->unsupported);
	cl->alloc_node = S(&k, o->alloc_node);
	bool failed = false;
	cl->requests = relink_requests(c, &k, o, &failed, false);
	if (failed)
		return NULL;
	cl->constraints = copy_constraints(&k, o->constraints, o->n_constraints);
	cl->results = copy_array(&k, o->results, o->n_results, sizeof(*o->results));
	for (size_t i = 0; cl->results && i < o->n_results; i++) {
		struct rf_alloc_result *ar = &cl->results[i];
		ar->request = S(&k, ar->request);
		ar->driver = S(&k, ar->driver);
		ar->pool = S(&k, ar->pool);
		ar->device = S(&k, ar->device);
		ar->share_id = S(&k, ar->share_id);
		/* ar->consumed points into the object the slot keeps: the caller keeps it too */
		ar->dev = same_device(c, ar);
		if (!ar->dev)
			ar->dev = rf_model_find_device(c, ar->driver, ar->pool, ar->device);
		ar->gidx = ar->dev ? ar->dev->gidx : 0;
		ar->rail = ar->dev ? ar->dev->rail : 0;
		ar->nic = ar->dev && ar->dev->kind == RF_DEV_NIC;
	}
	cl->reserved_uids = copy_strings(&k, o->reserved_uids, o->n_reserved);
	return k.oom ? NULL : cl;
}

void *
rf_model_relink_pod(struct rf_cluster *c, void *strtab, const void *old)
{
	const struct rf_pod *o = old;
	struct copier k = { c->reuse->arena, strtab, 0 };
	struct rf_pod *p = copy_array(&k, o, 1, sizeof(*o));
	if (!p)
		return NULL;
	memset(&p->marks, 0, sizeof(p->marks));
	p->ns = S(&k, o->ns);
	p->name = S(&k, o->name);
	p->uid = S(&k, o->uid);
	p->node_name = S(&k, o->node_name);
	p->phase = S(&k, o->phase);
	p->group = S(&k, o->group);
	p->bad_annotation = S(&k, o->bad_annotation);
	p->claim_names = copy_strings(&k, o->claim_names, o->n_claim_names);
	p->claim_hashes =
		copy_array(&k, o->claim_hashes, o->n_claim_names, sizeof(*o->claim_hashes));
	/* found anew: the old ones are another layout's claims */
	p->claims_found = o->n_claim_names
				  ? rf_arena_calloc(k.a, o->n_claim_names, sizeof(*p->claims_found))
				  : NULL;
	k.oom |= o->n_claim_names && !p->claims_found;
	const struct rf_node *n = p->node_name ? rf_cluster_node(c, p->node_name) : NULL;
	p->node_idx1 = n ? n->idx + 1 : 0;
	return k.oom ? NULL : p;
}
