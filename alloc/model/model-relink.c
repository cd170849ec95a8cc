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

/* false when a selector does not compile as it did */
static bool
relink_alt(const struct rf_cluster *c, struct copier *k, struct rf_request_alt *alt)
{
	alt->name = S(k, alt->name);
	alt->class_name = S(k, alt->class_name);
	alt->selector_texts = copy_strings(k, alt->selector_texts, alt->n_selectors);
	const struct rf_cel_program **progs =
		copy_array(k, alt->selectors, alt->n_selectors, sizeof(*alt->selectors));
	for (size_t i = 0; progs && i < alt->n_selectors; i++) {
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
	cl->requests = copy_array(&k, o->requests, o->n_requests, sizeof(*o->requests));
	for (size_t i = 0; cl->requests && i < o->n_requests; i++) {
		struct rf_request *rq = &cl->requests[i];
		rq->name = S(&k, rq->name);
		rq->alts = copy_array(&k, rq->alts, rq->n_alts, sizeof(*rq->alts));
		for (size_t j = 0; rq->alts && j < rq->n_alts; j++)
			if (!relink_alt(c, &k, &rq->alts[j]))
				return NULL;
	}
	cl->constraints = copy_array(&k, o->constraints, o->n_constraints, sizeof(*o->constraints));
	for (size_t i = 0; cl->constraints && i < o->n_constraints; i++) {
		struct rf_constraint *co = &cl->constraints[i];
		co->requests = copy_strings(&k, co->requests, co->n_requests);
		co->match_attribute = S(&k, co->match_attribute);
		co->distinct_attribute = S(&k, co->distinct_attribute);
	}
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
