/* Cluster model, part 3: DeviceClasses (selectors compiled once), ResourceClaims and what their
 * allocations hold (exclusive, shared with consumed capacity, admin access), Pods and what they
 * use (front-end and NIC bandwidth, rails of their group), ResourceClaimTemplates. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/strtab.h"

static int
claim_cmp(const void *a, const void *b)
{
	const struct rf_claim *x = *(struct rf_claim *const *)a, *y = *(struct rf_claim *const *)b;
	return rf_model_cmp_nsname(x->ns, x->name, y->ns, y->name);
}

static int
class_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_class *const *)a)->name, (*(struct rf_class *const *)b)->name);
}

int
rf_model_pod_cmp(const void *a, const void *b)
{
	const struct rf_pod *x = *(struct rf_pod *const *)a, *y = *(struct rf_pod *const *)b;
	return rf_model_cmp_nsname(x->ns, x->name, y->ns, y->name);
}

static int
pod_uid_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_pod *const *)a)->uid, (*(struct rf_pod *const *)b)->uid);
}

static int
tmpl_cmp(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	return rf_model_cmp_nsname(json_string_value(rf_jpath(x, "metadata.namespace")),
				   json_string_value(rf_jpath(x, "metadata.name")),
				   json_string_value(rf_jpath(y, "metadata.namespace")),
				   json_string_value(rf_jpath(y, "metadata.name")));
}

/* ---- classes, claims, pods ---- */

int
rf_model_build_classes(struct rf_cluster *c, const json_t *classes)
{
	size_t n = json_array_size(classes);
	c->classes = rf_arena_calloc(c->arena, n ? n : 1, sizeof(*c->classes));
	if (!c->classes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *cj = json_array_get(classes, i);
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		if (!name) {
			rf_cluster_warn(c, "deviceclass #%zu: no metadata.name; skipped", i);
			continue;
		}
		struct rf_class *cl = rf_arena_alloc(c->arena, sizeof(*cl));
		if (!cl)
			return -ENOMEM;
		cl->name = name;
		cl->json = cj;
		const json_t *sels = rf_jpath(cj, "spec.selectors");
		size_t ns = json_array_size(sels);
		cl->selectors = rf_arena_calloc(c->arena, ns ? ns : 1, sizeof(*cl->selectors));
		cl->selector_texts = rf_arena_calloc(c->arena, ns ? ns : 1, sizeof(char *));
		if (!cl->selectors || !cl->selector_texts)
			return -ENOMEM;
		for (size_t s = 0; s < ns; s++) {
			const char *expr = json_string_value(
				rf_jpath(json_array_get(sels, s), "cel.expression"));
			struct rf_cel_error err = { 0 };
			if (!expr) {
				cl->unsupported = rf_arena_printf(
					c->arena,
					"deviceclass %s: selector #%zu has no cel.expression", name,
					s);
				break;
			}
			int r = rf_cluster_selector(c, expr, &cl->selectors[cl->n_selectors], &err);
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				cl->unsupported =
					rf_arena_printf(c->arena, "deviceclass %s: selector %s: %s",
							name, expr, err.msg);
				break;
			}
			cl->selector_texts[cl->n_selectors++] = expr;
		}
		c->classes[c->n_classes++] = cl;
	}
	qsort(c->classes, c->n_classes, sizeof(*c->classes), class_cmp);
	for (size_t i = 0; i < c->n_classes; i++)
		c->classes[i]->idx = (unsigned)i;
	c->class_memo = calloc(c->n_classes * c->n_devices + 1, sizeof(*c->class_memo));
	return c->class_memo ? 0 : -ENOMEM;
}

static const char *
node_from_selector(const json_t *sel)
{
	const json_t *terms = json_object_get(sel, "nodeSelectorTerms");
	if (json_array_size(terms) != 1)
		return NULL;
	const json_t *fields = json_object_get(json_array_get(terms, 0), "matchFields");
	for (size_t i = 0; i < json_array_size(fields); i++) {
		const json_t *f = json_array_get(fields, i);
		const char *key = rf_jstr(f, "key"), *op = rf_jstr(f, "operator");
		const json_t *vals = json_object_get(f, "values");
		if (key && op && strcmp(key, "metadata.name") == 0 && strcmp(op, "In") == 0 &&
		    json_array_size(vals) == 1)
			return json_string_value(json_array_get(vals, 0));
	}
	return NULL;
}

/* One claim parsed into the reuse table's arena (strings through st). NULL with *ret_skip when
 * the object is not a claim railfit can name. */
static void *
parse_claim(struct rf_cluster *c, void *strtab, const json_t *cj, const json_t *elem, size_t i,
	    bool *ret_skip, bool *ret_keep)
{
	(void)elem;
	struct rf_strtab *st = strtab;
	struct rf_arena *a = c->reuse->arena;
	int oom = 0;
#define K(s) rf_strtab_get(st, (s), &oom)
	const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
	const char *ns = json_string_value(rf_jpath(cj, "metadata.namespace"));
	*ret_skip = false;
	*ret_keep = false;
	if (!name || !ns) {
		rf_cluster_warn(c, "resourceclaim #%zu: no metadata.name/namespace; skipped", i);
		*ret_skip = true;
		return NULL;
	}
	struct rf_claim *cl = rf_arena_alloc(a, sizeof(*cl));
	if (!cl)
		return NULL;
	cl->ns = K(ns);
	cl->name = rf_arena_strdup(a, name);
	cl->uid = K(json_string_value(rf_jpath(cj, "metadata.uid")));
	cl->key_hash = rf_claim_key_hash(ns, name);
	cl->json = NULL; /* the object may be packed once the generation is built */
	/* the spec parsed aside, then kept with its requests shared with the claims of this
	 * build that ask the same (most claims come from a few templates) */
	_Alignas(16) unsigned char buf[8192];
	struct rf_arena spec;
	rf_arena_init_buf(&spec, 0, buf, sizeof(buf));
	int e = oom || !cl->name ? -ENOMEM
				 : rf_claim_parse_spec(&spec, c, cl, json_object_get(cj, "spec"));
	if (e == 0)
		e = rf_model_keep_spec(c, st, cl);
	rf_arena_release(&spec);
	if (e < 0)
		return NULL;
	const json_t *alloc = rf_jpath(cj, "status.allocation");
	if (json_is_object(alloc)) {
		cl->allocated = true;
		cl->alloc_node = K(node_from_selector(json_object_get(alloc, "nodeSelector")));
		const json_t *res = rf_jpath(alloc, "devices.results");
		size_t nr = json_array_size(res);
		cl->results = rf_arena_calloc(a, nr ? nr : 1, sizeof(*cl->results));
		if (!cl->results || oom)
			return NULL;
		for (size_t r = 0; r < nr; r++) {
			const json_t *rj = json_array_get(res, r);
			struct rf_alloc_result *ar = &cl->results[cl->n_results];
			ar->request = K(rf_jstr(rj, "request"));
			ar->driver = K(rf_jstr(rj, "driver"));
			ar->pool = K(rf_jstr(rj, "pool"));
			ar->device = K(rf_jstr(rj, "device"));
			if (oom)
				return NULL;
			if (!ar->request || !ar->driver || !ar->pool || !ar->device) {
				rf_cluster_warn(c,
						"resourceclaim %s/%s: allocation result #%zu lacks "
						"request/driver/pool/device; ignored",
						ns, name, r);
				continue;
			}
			ar->admin_access = rf_jbool(rj, "adminAccess", false);
			ar->share_id = K(rf_jstr(rj, "shareID"));
			ar->consumed = json_object_get(rj, "consumedCapacity");
			*ret_keep |= ar->consumed != NULL; /* points into the object */
			ar->dev = rf_model_find_device(c, ar->driver, ar->pool, ar->device);
			if (ar->dev) {
				ar->gidx = ar->dev->gidx;
				ar->rail = ar->dev->rail;
				ar->nic = ar->dev->kind == RF_DEV_NIC;
			}
			cl->n_results++;
		}
	}
	const json_t *rf = rf_jpath(cj, "status.reservedFor");
	size_t nrf = json_array_size(rf);
	if (nrf) {
		cl->reserved_uids = rf_arena_calloc(a, nrf, sizeof(char *));
		if (!cl->reserved_uids)
			return NULL;
		for (size_t k = 0; k < nrf; k++) {
			const char *uid = rf_jstr(json_array_get(rf, k), "uid");
			if (uid && !(cl->reserved_uids[cl->n_reserved++] = K(uid)))
				return NULL;
		}
	}
#undef K
	return oom ? NULL : cl;
}

/* obj: the object; elem: what the generation's array holds for it (obj, or what stands for it,
 * held by the reuse table while the parse lives) */
typedef void *parse_fn(struct rf_cluster *c, void *arg, const json_t *obj, const json_t *elem,
		       size_t i, bool *ret_skip, bool *ret_keep);

typedef void *relink_fn(struct rf_cluster *c, void *arg, const void *old);

/* The pod was not part of the previous build (its object went, and is handed over again) and
 * its node index is not its node's in c: a patch since added or removed its node (pods point at
 * nodes by index; the table keeps the structs of objects that went). Along one table an index
 * never names another node (patches append nodes and leave holes; a full build starts a new
 * table), so a hole is the one way an index goes stale. */
static bool
pod_node_stale(const struct rf_cluster *c, const struct rf_pod *p)
{
	unsigned long mark = c->reuse->marker;
	if (!p->node_name || p->marks.seen == mark || p->marks.seen + 1 == mark)
		return false;
	if (!p->node_idx1)
		return rf_cluster_node(c, p->node_name) != NULL;
	return p->node_idx1 > c->n_nodes || !c->nodes[p->node_idx1 - 1];
}

/* The claim or pod of obj: the one parsed for an earlier generation (its warnings repeated), one
 * parsed for the previous layout and relinked to this one, or parsed now and remembered. obj
 * may stand for the object (rf_cluster_objects.expand). *ret is NULL for an object railfit cannot
 * name. -ENOMEM only. */
static int
reuse_or_parse(struct rf_cluster *c, const json_t *obj, size_t i, parse_fn *parse,
	       relink_fn *relink, void *arg, void **ret)
{
	struct reuse_slot *slot = rf_reuse_find(c->reuse, obj);
	if (!slot)
		return -ENOMEM;
	if (slot->obj) {
		/* a pod whose object went and came back, bound to a node a patch added or removed
		 * meanwhile: relinked to it (rf_model_patch_claims relinks the previous
		 * generation's pods) */
		if (relink == rf_model_relink_pod && slot->val && pod_node_stale(c, slot->val)) {
			void *v = relink(c, arg, slot->val);
			if (!v)
				return -ENOMEM;
			slot->val = v;
			c->relinked_into = true;
		}
		rf_reuse_warn(c, slot);
		*ret = slot->val;
		return 0;
	}
	size_t first = c->n_warnings;
	const struct reuse_slot *old = c->relink_from ? rf_reuse_lookup(c->relink_from, obj) : NULL;
	void *rv = old && old->val ? relink(c, arg, old->val) : NULL;
	if (rv) {
		rf_reuse_warn(c, old);
		if (rf_reuse_fill(c->reuse, slot, obj, rv, json_incref(old->keep), c, first) < 0)
			return -ENOMEM;
		*ret = rv;
		return 0;
	}
	bool skip = true, keep = false;
	void *v = NULL;
	json_t *o = json_is_object(obj) ? json_incref((json_t *)obj)
		    : c->expand         ? c->expand(obj, c->expand_userdata)
					: NULL;
	if (o)
		v = parse(c, arg, o, obj, i, &skip, &keep);
	else
		rf_cluster_warn(c, "object #%zu: not an object; skipped", i);
	if ((!v && !skip) ||
	    rf_reuse_fill(c->reuse, slot, obj, v, keep && o != obj ? json_incref(o) : NULL, c,
			  first) < 0) {
		json_decref(o);
		return -ENOMEM;
	}
	json_decref(o);
	*ret = v;
	return 0;
}

/* Objects of one kind for this build: parsed anew or reused, marked as seen, and collected in
 * `fresh` when the previous generation did not hold them. */
struct collect {
	void **fresh;
	size_t n_fresh;
	const struct rf_cluster *prev; /* the one whose sorted arrays this build follows, or NULL */
	unsigned long mark;
};

static void
collect_init(struct rf_cluster *c, struct collect *k)
{
	k->fresh = NULL;
	k->n_fresh = 0;
	k->prev = c->prev && c->prev->reuse == c->reuse ? c->prev : NULL;
	k->mark = c->reuse->marker;
}

static void
collect(struct collect *k, struct rf_build_marks *m, void *v)
{
	m->seen = k->mark;
	if (!k->prev || m->in_prev != k->mark)
		k->fresh[k->n_fresh++] = v;
}

static int
note_gone_claim(void *arg, void *v)
{
	return rf_model_delta_note(arg, false, true, v);
}

static int
note_gone_pod(void *arg, void *v)
{
	return rf_model_delta_note(arg, true, true, v);
}

static parse_fn parse_pod;

/* An element out of place: the claim or pod the reuse table has for it, or parsed now. */
struct get_arg {
	bool pod;
	struct rf_strtab *st;
};

static int
get_one(struct rf_cluster *c, void *arg, const json_t *obj, size_t i, void **ret)
{
	struct get_arg *g = arg;
	int r = g->pod ? reuse_or_parse(c, obj, i, parse_pod, rf_model_relink_pod, g->st, ret)
		       : reuse_or_parse(c, obj, i, parse_claim, rf_model_relink_claim, g->st, ret);
	if (r == 0 && *ret) /* part of this generation (rf_model_pod_claim trusts the mark) */
		(g->pod ? &((struct rf_pod *)*ret)->marks : &((struct rf_claim *)*ret)->marks)
			->seen = c->reuse->marker;
	return r;
}

static int
pod_has_uid(void *v)
{
	return ((struct rf_pod *)v)->uid != NULL;
}

/* Those of vals that have a uid, into a new array (malloc'd). */
static void **
with_uid(void *const *vals, size_t n, size_t *ret_n)
{
	void **out = malloc((n + 1) * sizeof(*out));
	*ret_n = 0;
	for (size_t i = 0; out && i < n; i++)
		if (pod_has_uid(vals[i]))
			out[(*ret_n)++] = vals[i];
	return out;
}

/* Claims or pods by position against the previous generation's arrays (model-walk.c): the
 * elements that did not move are not looked up, the sorted arrays are patched. @return 1 done,
 * 0 declined (nothing of c changed, warnings included), -ENOMEM. */
static int
walk_by_position(struct rf_cluster *c, const json_t *arr, bool pod, struct rf_strtab *st)
{
	const struct rf_cluster *prev = c->prev;
	if (!prev || c->walk_usage || prev->reuse != c->reuse)
		return 0;
	void *const *pv = pod ? prev->pod_vals : prev->claim_vals;
	const json_t *prev_arr = pod ? prev->objs.pods : prev->objs.claims;
	/* the very same array changed in place (as some tests do; the store never does:
	 * arrays_frozen) or one that changed length since: positions say nothing */
	if (!pv || (pod ? prev->pods_warned : prev->claims_warned) ||
	    (prev_arr == arr && !c->arrays_frozen) ||
	    json_array_size(prev_arr) != (pod ? prev->n_pod_vals : prev->n_claim_vals))
		return 0;
	struct get_arg ga = { pod, st };
	struct rf_walk w = {
		.arr = arr, .prev_arr = prev_arr, .prev_vals = pv, .get = get_one, .arg = &ga
	};
	size_t w0 = c->n_warnings;
	int r = rf_model_walk(c, &w);
	if (r <= 0)
		return r;
	if ((r = rf_model_patch_walk(c, &w)) == 0)
		r = 1;
	if (r < 0) {
		rf_model_walk_free(&w);
		return r;
	}
	if (!pod) {
		r = rf_model_sorted_patch(c->arena, (void *const *)prev->claims, prev->n_claims,
					  w.gone, w.n_gone, w.fresh, w.n_fresh, claim_cmp,
					  (void ***)&c->claims, &c->n_claims);
	} else {
		size_t n_gu, n_fu;
		void **gu = with_uid(w.gone, w.n_gone, &n_gu),
		     **fu = with_uid(w.fresh, w.n_fresh, &n_fu);
		r = gu && fu ? rf_model_sorted_patch(c->arena, (void *const *)prev->pods_by_uid,
						     prev->n_pods_by_uid, gu, n_gu, fu, n_fu,
						     pod_uid_cmp, (void ***)&c->pods_by_uid,
						     &c->n_pods_by_uid)
			     : -ENOMEM;
		free(gu);
		free(fu);
		if (r > 0)
			r = rf_model_sorted_patch(c->arena, (void *const *)prev->pods, prev->n_pods,
						  w.gone, w.n_gone, w.fresh, w.n_fresh,
						  rf_model_pod_cmp, (void ***)&c->pods, &c->n_pods);
	}
	for (size_t i = 0; r > 0 && c->delta && i < w.n_gone; i++)
		if (rf_model_delta_note(c, pod, true, w.gone[i]) < 0)
			r = -ENOMEM;
	for (size_t i = 0; r > 0 && c->delta && i < w.n_fresh; i++)
		if (rf_model_delta_note(c, pod, false, w.fresh[i]) < 0)
			r = -ENOMEM;
	if (r == 0)
		c->n_warnings = w0; /* the walk repeats them */
	if (pod) {
		c->pod_vals = w.vals;
		c->n_pod_vals = json_array_size(arr);
		c->pods_warned = w.warned;
	} else {
		c->claim_vals = w.vals;
		c->n_claim_vals = json_array_size(arr);
		c->claims_warned = w.warned;
	}
	rf_model_walk_free(&w);
	return r;
}

/* Claims keep no pointer into their objects (strings are copied, see alloc/strtab.h), except
 * consumedCapacity of shared allocations (ar->consumed): the reuse table holds the object. */
int
rf_model_build_claims(struct rf_cluster *c, const json_t *claims)
{
	size_t n = json_array_size(claims);
	struct rf_strtab *st = rf_strtab_new(c->reuse->arena);
	struct collect k;
	int rr = -ENOMEM;
	collect_init(c, &k);
	k.fresh = malloc((n ? n : 1) * sizeof(*k.fresh));
	/* a table with no entry yet: every claim is parsed or relinked, each result looked up
	 * by name */
	if (!k.fresh || !st || (c->reuse->used == 0 && rf_model_index_devices(c) < 0))
		goto out;
	if ((rr = walk_by_position(c, claims, false, st)) != 0)
		goto out;
	rr = -ENOMEM;
	size_t w0 = c->n_warnings;
	if (!(c->claim_vals = rf_arena_calloc(c->arena, n + 1, sizeof(*c->claim_vals))))
		goto out;
	c->n_claim_vals = n;
	for (size_t i = 0; k.prev && i < k.prev->n_claims; i++)
		k.prev->claims[i]->marks.in_prev = k.mark;
	for (size_t i = 0; i < n; i++) {
		void *v;
		if ((rr = rf_model_stopping(c, i)) < 0)
			goto out;
		rr = -ENOMEM;
		if (reuse_or_parse(c, json_array_get(claims, i), i, parse_claim,
				   rf_model_relink_claim, st, &v) < 0)
			goto out;
		struct rf_claim *cl = v;
		c->claim_vals[i] = v;
		if (cl)
			collect(&k, &cl->marks, cl);
	}
	c->claims_warned = c->n_warnings != w0 || c->n_warnings >= MAX_WARNINGS;
	for (size_t i = 0; c->delta && i < k.n_fresh; i++)
		if (rf_model_delta_note(c, false, false, k.fresh[i]) < 0)
			goto out;
	rr = rf_reuse_merge_gone(c->arena, k.prev ? (void *const *)k.prev->claims : NULL,
				 k.prev ? k.prev->n_claims : 0, k.fresh, k.n_fresh,
				 offsetof(struct rf_claim, marks), k.mark, claim_cmp,
				 (void ***)&c->claims, &c->n_claims,
				 c->delta ? note_gone_claim : NULL, c);
out:
	rf_model_unindex_devices(c);
	free(k.fresh);
	rf_strtab_free(st);
	return rr < 0 ? rr : 0;
}

/* Fold allocations into device usage (dra-api.md section 10.1). */
int
rf_model_account_usage(struct rf_cluster *c)
{
	int e = rf_model_use_fresh(c);
	if (e < 0)
		return e;
	for (size_t i = 0; i < c->n_claims; i++) {
		struct rf_claim *cl = c->claims[i];
		for (size_t r = 0; r < cl->n_results; r++) {
			struct rf_alloc_result *ar = &cl->results[r];
			if (!ar->dev || ar->admin_access)
				continue;
			struct rf_dev_use *u = rf_model_use_write(c, ar->gidx);
			if (!u)
				return -ENOMEM;
			if (!ar->share_id) {
				if (!u->holder) {
					u->holder = cl;
					continue;
				}
				if (u->holder != cl) {
					const struct rf_device *d = ar->dev;
					c->usage_inexact = true;
					rf_cluster_warn(
						c,
						"device %s/%s/%s is allocated by both %s/%s "
						"and %s/%s",
						d->pool->driver, d->pool->name, d->name,
						u->holder->ns, u->holder->name, cl->ns, cl->name);
				}
				continue;
			}
			struct rf_device *d = ar->dev;
			{
				u->n_shares++;
				if (rf_model_use_consume(u, d->n_caps) < 0)
					return -ENOMEM;
				const char *k;
				json_t *v;
				json_object_foreach ((json_t *)ar->consumed, k, v) {
					struct rf_quantity q;
					const char *qs = json_string_value(v);
					const struct rf_capacity *cap = rf_model_device_cap(d, k);
					if (!cap || !qs || rf_quantity_parse(qs, &q) < 0) {
						c->usage_inexact = true;
						rf_cluster_warn(
							c,
							"resourceclaim %s/%s: consumedCapacity %s of %s "
							"is not a capacity of the device or not a "
							"quantity; ignored",
							cl->ns, cl->name, k, d->name);
						continue;
					}
					c->usage_inexact |= q.nano > RF_DELTA_QUANTITY_MAX ||
							    q.nano < -RF_DELTA_QUANTITY_MAX;
					u->consumed[cap - d->caps] =
						rf_quantity_add(u->consumed[cap - d->caps], q);
				}
			}
		}
	}
	return 0;
}

static int
parse_bw_annotation(struct rf_arena *a, struct rf_pod *p, const json_t *annotations,
		    const char *key, bool *has, struct rf_quantity *q)
{
	const char *v = rf_jstr(annotations, key);
	if (!v)
		return 0;
	struct rf_quantity tmp;
	if (rf_quantity_parse(v, &tmp) < 0 || rf_quantity_cmp(tmp, rf_quantity_from_int(0)) < 0) {
		if (!p->bad_annotation)
			p->bad_annotation = rf_arena_printf(
				a,
				"annotation %s: expected a non-negative quantity such as 100G, got \"%s\"",
				key, v);
		return p->bad_annotation ? 0 : -ENOMEM;
	}
	*has = true;
	*q = tmp;
	return 0;
}

/* One pod, in the reuse table's arena, strings through st (nothing points into the object).
 * NULL with *ret_skip when it has no name. */
static void *
parse_pod(struct rf_cluster *c, void *strtab, const json_t *pj, const json_t *elem, size_t i,
	  bool *ret_skip, bool *ret_keep)
{
	struct rf_strtab *st = strtab;
	struct rf_arena *a = c->reuse->arena;
	int oom = 0;
#define K(s) rf_strtab_get(st, (s), &oom)
	*ret_skip = false;
	*ret_keep = false;
	const char *name = json_string_value(rf_jpath(pj, "metadata.name"));
	if (!name) {
		rf_cluster_warn(c, "pod #%zu: no metadata.name; skipped", i);
		*ret_skip = true;
		return NULL;
	}
	struct rf_pod *p = rf_arena_alloc(a, sizeof(*p));
	if (!p)
		return NULL;
	p->name = rf_arena_strdup(a, name);
	p->ns = K(json_string_value(rf_jpath(pj, "metadata.namespace")));
	if (!p->ns)
		p->ns = "default";
	const char *uid = json_string_value(rf_jpath(pj, "metadata.uid"));
	p->uid = uid ? rf_arena_strdup(a, uid) : NULL;
	p->node_name = K(json_string_value(rf_jpath(pj, "spec.nodeName")));
	p->phase = K(json_string_value(rf_jpath(pj, "status.phase")));
	p->json = elem;
	if (oom || !p->name || (uid && !p->uid))
		return NULL;
	const json_t *labels = rf_jpath(pj, "metadata.labels");
	const json_t *annotations = rf_jpath(pj, "metadata.annotations");
	if (parse_bw_annotation(a, p, annotations, "railfit.io/nic-bandwidth", &p->has_nic_bw,
				&p->nic_bw) < 0 ||
	    parse_bw_annotation(a, p, annotations, "kubernetes.io/egress-bandwidth", &p->has_egress,
				&p->egress) < 0 ||
	    parse_bw_annotation(a, p, annotations, "kubernetes.io/ingress-bandwidth",
				&p->has_ingress, &p->ingress) < 0)
		return NULL;
	const char *g = rf_jstr(annotations, "railfit.io/group");
	for (size_t l = 0; !g && l < c->cfg->groups.labels.n; l++)
		g = rf_jstr(labels, c->cfg->groups.labels.v[l]);
	if (g && g[0]) {
		/* interned: the pods of a job share one copy, so that the group index compares
		 * pointers rather than reading each pod's string (model-usage.c same_group) */
		char buf[256];
		int len = snprintf(buf, sizeof(buf), "%s/%s", p->ns, g);
		p->group = len >= 0 && (size_t)len < sizeof(buf)
				   ? K(buf)
				   : rf_arena_printf(a, "%s/%s", p->ns, g);
		if (!p->group)
			return NULL;
		p->group_hash = rf_group_hash(p->group);
	}
	p->terminated =
		p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
	/* what accounting its usage needs, resolved once (pods live with one layout) */
	const json_t *entries = rf_jpath(pj, "spec.resourceClaims");
	size_t ne = json_array_size(entries);
	if (ne && (!(p->claim_names = rf_arena_calloc(a, ne, sizeof(char *))) ||
		   !(p->claim_hashes = rf_arena_calloc(a, ne, sizeof(uint64_t))) ||
		   !(p->claims_found = rf_arena_calloc(a, ne, sizeof(*p->claims_found)))))
		return NULL;
	for (size_t e = 0; e < ne; e++) {
		const char *cn = rf_pod_claim_name(pj, json_array_get(entries, e));
		if (!cn)
			continue;
		p->claim_hashes[p->n_claim_names] = rf_claim_key_hash(p->ns, cn);
		if (!(p->claim_names[p->n_claim_names++] = K(cn)))
			return NULL;
	}
	const struct rf_node *n = p->node_name ? rf_cluster_node(c, p->node_name) : NULL;
	p->node_idx1 = n ? n->idx + 1 : 0;
#undef K
	return p;
}

int
rf_model_build_pods(struct rf_cluster *c, const json_t *pods)
{
	size_t n = json_array_size(pods), n_uid = 0;
	struct rf_strtab *st = rf_strtab_new(c->reuse->arena);
	struct collect k;
	int r = -ENOMEM;
	collect_init(c, &k);
	k.fresh = malloc((n ? n : 1) * sizeof(*k.fresh));
	if (!k.fresh || !st)
		goto out;
	if ((r = walk_by_position(c, pods, true, st)) != 0) {
		c->reuse->live = c->n_claims + c->n_pods;
		goto out;
	}
	r = -ENOMEM;
	size_t w0 = c->n_warnings;
	if (!(c->pod_vals = rf_arena_calloc(c->arena, n + 1, sizeof(*c->pod_vals))))
		goto out;
	c->n_pod_vals = n;
	for (size_t i = 0; k.prev && i < k.prev->n_pods; i++)
		k.prev->pods[i]->marks.in_prev = k.mark;
	for (size_t i = 0; i < n; i++) {
		void *v;
		if ((r = rf_model_stopping(c, i)) < 0)
			goto out;
		r = -ENOMEM;
		if (reuse_or_parse(c, json_array_get(pods, i), i, parse_pod, rf_model_relink_pod,
				   st, &v) < 0)
			goto out;
		struct rf_pod *p = v;
		c->pod_vals[i] = v;
		if (p)
			collect(&k, &p->marks, p);
	}
	c->pods_warned = c->n_warnings != w0 || c->n_warnings >= MAX_WARNINGS;
	/* the fresh pods with a uid, for the second array: copied before the merge sorts them */
	void **fresh_uid = malloc((k.n_fresh ? k.n_fresh : 1) * sizeof(*fresh_uid));
	if (!fresh_uid)
		goto out;
	for (size_t i = 0; i < k.n_fresh; i++) {
		if (((struct rf_pod *)k.fresh[i])->uid)
			fresh_uid[n_uid++] = k.fresh[i];
		if (c->delta && rf_model_delta_note(c, true, false, k.fresh[i]) < 0) {
			free(fresh_uid);
			goto out;
		}
	}
	r = rf_reuse_merge_gone(c->arena, k.prev ? (void *const *)k.prev->pods : NULL,
				k.prev ? k.prev->n_pods : 0, k.fresh, k.n_fresh,
				offsetof(struct rf_pod, marks), k.mark, rf_model_pod_cmp,
				(void ***)&c->pods, &c->n_pods, c->delta ? note_gone_pod : NULL, c);
	if (r == 0)
		r = rf_reuse_merge(c->arena, k.prev ? (void *const *)k.prev->pods_by_uid : NULL,
				   k.prev ? k.prev->n_pods_by_uid : 0, fresh_uid, n_uid,
				   offsetof(struct rf_pod, marks), k.mark, pod_uid_cmp,
				   (void ***)&c->pods_by_uid, &c->n_pods_by_uid);
	free(fresh_uid);
	c->reuse->live = c->n_claims + c->n_pods;
out:
	free(k.fresh);
	rf_strtab_free(st);
	return r < 0 ? r : 0;
}

/* A group's entries must be adjacent, in node order: sorting by the group's hash and the node
 * compares no strings (the pods of a group each carry its name). Two groups with one hash
 * would interleave: sort_groups() then sorts again comparing names. */
#define CMP_HASH_NODE(x, y)                                                                        \
	((x)->hash != (y)->hash                                                                    \
		 ? ((x)->hash < (y)->hash ? -1 : 1)                                                \
		 : ((x)->node_idx > (y)->node_idx) - ((x)->node_idx < (y)->node_idx))
#define CMP_HASH_NAME_NODE(x, y)                                                                   \
	((x)->hash != (y)->hash                ? ((x)->hash < (y)->hash ? -1 : 1)                  \
	 : (x)->group == (y)->group            ? CMP_HASH_NODE(x, y)                               \
	 : strcmp((x)->group, (y)->group) != 0 ? strcmp((x)->group, (y)->group)                    \
					       : CMP_HASH_NODE(x, y))

static int
group_rails_cmp(const void *a, const void *b)
{
	const struct group_rails *x = a, *y = b;
	return CMP_HASH_NODE(x, y);
}

int
rf_model_group_rails_cmp(const void *a, const void *b)
{
	const struct group_rails *x = a, *y = b;
	return CMP_HASH_NAME_NODE(x, y);
}

static int
group_node_cmp(const void *a, const void *b)
{
	const struct group_node *x = a, *y = b;
	return CMP_HASH_NODE(x, y);
}

int
rf_model_group_node_cmp(const void *a, const void *b)
{
	const struct group_node *x = a, *y = b;
	return CMP_HASH_NAME_NODE(x, y);
}

/* Whether a run of equal hashes holds two names (entries sorted by hash). */
static bool
rails_collide(const struct group_rails *v, size_t n)
{
	for (size_t i = 1, first = 0; i < n; i++) {
		if (v[i].hash != v[first].hash)
			first = i;
		else if (v[i].group != v[first].group && strcmp(v[i].group, v[first].group) != 0)
			return true;
	}
	return false;
}

static bool
nodes_collide(const struct group_node *v, size_t n)
{
	for (size_t i = 1, first = 0; i < n; i++) {
		if (v[i].hash != v[first].hash)
			first = i;
		else if (v[i].group != v[first].group && strcmp(v[i].group, v[first].group) != 0)
			return true;
	}
	return false;
}

static void
sort_groups(struct rf_cluster *c)
{
	qsort(c->group_rails, c->n_group_rails, sizeof(*c->group_rails), group_rails_cmp);
	if (rails_collide(c->group_rails, c->n_group_rails))
		qsort(c->group_rails, c->n_group_rails, sizeof(*c->group_rails),
		      rf_model_group_rails_cmp);
	qsort(c->group_nodes, c->n_group_nodes, sizeof(*c->group_nodes), group_node_cmp);
	if (nodes_collide(c->group_nodes, c->n_group_nodes))
		qsort(c->group_nodes, c->n_group_nodes, sizeof(*c->group_nodes),
		      rf_model_group_node_cmp);
}

/* The claim a pod's entry e names in this generation: the one the last build found while it is
 * still part of the generation (seen by this build; names are unique unless claim_dups), else
 * looked up and remembered. */
const struct rf_claim *
rf_model_pod_claim(struct rf_cluster *c, struct rf_pod *p, size_t e)
{
	const struct rf_claim *cl = p->claims_found ? p->claims_found[e] : NULL;
	if (cl && cl->marks.seen == c->reuse->marker && !c->claim_dups)
		return cl;
	cl = rf_cluster_claim_hashed(c, p->ns, p->claim_names[e], p->claim_hashes[e]);
	if (p->claims_found)
		p->claims_found[e] = cl;
	return cl;
}

static bool
same_group(const struct group_rails *r, const struct group_index *g)
{
	return r->hash == g->hash && (r->group == g->group || strcmp(r->group, g->group) == 0);
}

/* The group index over the sorted group_rails entries: per group, the rails used anywhere and
 * those used on at least two distinct nodes. */
int
rf_model_index_groups(struct rf_cluster *c)
{
	c->groups = rf_arena_calloc(c->arena, c->n_group_rails + 1, sizeof(*c->groups));
	if (!c->groups)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_group_rails;) {
		struct group_index *g = &c->groups[c->n_groups++];
		g->hash = c->group_rails[i].hash;
		g->group = c->group_rails[i].group;
		g->first = i;
		while (i < c->n_group_rails && same_group(&c->group_rails[i], g)) {
			/* the rails of one node: its entries are adjacent */
			unsigned node = c->group_rails[i].node_idx;
			uint64_t mine = 0;
			for (; i < c->n_group_rails && same_group(&c->group_rails[i], g) &&
			       c->group_rails[i].node_idx == node;
			     i++)
				mine |= c->group_rails[i].rails;
			g->multi |= g->any & mine;
			g->any |= mine;
		}
		g->n = i - g->first;
	}
	return 0;
}

const struct rf_capacity *
rf_model_device_cap(const struct rf_device *d, const char *raw_name)
{
	const struct rf_capacity *cap = NULL;
	for (size_t ci = 0; ci < d->n_caps; ci++)
		if (strcmp(d->caps[ci].raw_name, raw_name) == 0)
			cap = &d->caps[ci]; /* the last of a name, as the walk always took */
	return cap;
}

void
rf_model_warn_frontend(struct rf_cluster *c, const struct rf_node *n, const char *fe)
{
	rf_cluster_warn(c,
			"node %s: annotation railfit.io/frontend-bandwidth: expected a positive "
			"quantity such as 100G, got \"%s\"; using devices.frontendBandwidth",
			n->name, fe);
}

/* Front-end capacity of each node: from its annotation (part of the layout). */
int
rf_model_node_frontend(struct rf_cluster *c)
{
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		struct rf_node *n = c->nodes[ni];
		const char *fe = rf_jstr(n->annotations, "railfit.io/frontend-bandwidth");
		n->fe_source = "default";
		n->fe_capacity = c->cfg->devices.frontend_bandwidth;
		if (fe) {
			struct rf_quantity q;
			if (rf_quantity_parse(fe, &q) == 0 &&
			    rf_quantity_cmp(q, rf_quantity_from_int(0)) > 0) {
				n->fe_capacity = q;
				n->fe_source = "annotation";
			} else {
				rf_model_warn_frontend(c, n, fe);
			}
		}
	}
	return 0;
}

/* Pods on nodes: front-end bandwidth, annotated NIC bandwidth, rails of groups. */
int
rf_model_place_pods(struct rf_cluster *c)
{
	size_t grouped = 0, refs = 0;
	c->group_rails = rf_arena_calloc(c->arena, c->n_pods + 1, sizeof(*c->group_rails));
	if (!c->group_rails)
		return -ENOMEM;
	/* two passes: count, then fill the per-node pod arrays */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->n_pods; i++) {
			struct rf_pod *p = c->pods[i];
			if (!p->node_idx1 || p->terminated)
				continue;
			const struct rf_node *n = c->nodes[p->node_idx1 - 1];
			struct rf_node_use *nu = &c->node_use[p->node_idx1 - 1];
			if (pass == 0) {
				nu->n_pods++;
				grouped += p->group != NULL;
				refs += p->n_claim_names;
				continue;
			}
			nu->pods[nu->n_pods++] = p;
			if (p->has_egress)
				nu->fe_egress_used = rf_quantity_add(nu->fe_egress_used, p->egress);
			if (p->has_ingress)
				nu->fe_ingress_used =
					rf_quantity_add(nu->fe_ingress_used, p->ingress);
			/* devices of its claims: NIC bandwidth and rails */
			uint64_t rails = 0;
			for (size_t e = 0; e < p->n_claim_names; e++)
				c->claim_refs[c->n_claim_refs++] =
					(struct claim_ref){ p->claim_hashes[e], p };
			for (size_t e = 0; e < p->n_claim_names; e++) {
				const struct rf_claim *cl = rf_model_pod_claim(c, p, e);
				for (size_t r = 0; cl && r < cl->n_results; r++) {
					const struct rf_alloc_result *ar = &cl->results[r];
					if (!ar->dev || !ar->nic || ar->admin_access)
						continue;
					c->usage_inexact |= p->has_nic_bw &&
							    p->nic_bw.nano > RF_DELTA_QUANTITY_MAX;
					struct rf_dev_use *u = NULL;
					if (p->has_nic_bw && !(u = rf_model_use_write(c, ar->gidx)))
						return -ENOMEM;
					if (u)
						u->annotated_bw =
							rf_quantity_add(u->annotated_bw, p->nic_bw);
					if (ar->rail >= 0)
						rails |= UINT64_C(1) << ar->rail;
				}
			}
			if (p->group)
				c->group_nodes[c->n_group_nodes++] =
					(struct group_node){ p->group_hash, p->group, n->idx, p };
			if (p->group && rails) {
				struct group_rails *gr = &c->group_rails[c->n_group_rails++];
				gr->hash = p->group_hash;
				gr->group = p->group;
				gr->node_idx = n->idx;
				gr->rails = rails;
				gr->pod = p;
			}
		}
		if (pass == 0) {
			/* only the pods of a group: most pods of a fleet have none */
			c->group_nodes =
				rf_arena_calloc(c->arena, grouped + 1, sizeof(*c->group_nodes));
			c->claim_refs = rf_arena_calloc(c->arena, refs + 1, sizeof(*c->claim_refs));
			if (!c->group_nodes || !c->claim_refs)
				return -ENOMEM;
			for (size_t ni = 0; ni < c->n_nodes; ni++) {
				struct rf_node_use *nu = &c->node_use[ni];
				nu->pods = rf_arena_calloc(c->arena, nu->n_pods ? nu->n_pods : 1,
							   sizeof(*nu->pods));
				if (!nu->pods)
					return -ENOMEM;
				nu->n_pods = 0;
			}
		}
	}
	sort_groups(c);
	qsort(c->claim_refs, c->n_claim_refs, sizeof(*c->claim_refs), rf_model_claim_ref_cmp);
	return rf_model_index_groups(c);
}

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t
mix_q(uint64_t h, struct rf_quantity q)
{
	const unsigned char *b = (const unsigned char *)&q;
	uint64_t v = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < sizeof(q); i++)
		v = (v ^ b[i]) * 0x100000001b3ULL;
	return mix(h, v);
}

/* The fingerprint of a pool's usage: every device someone holds, shares or annotates. Reads
 * only the usage array: device structs are many and scattered. */
uint64_t
rf_model_pool_fp(const struct rf_cluster *c, const struct rf_pool *p)
{
	const struct rf_quantity zero = { 0 };
	uint64_t h = 0;
	for (size_t i = 0; i < p->n_devices; i++) {
		unsigned g = p->first_gidx + (unsigned)i;
		const struct rf_dev_use *u = rf_model_use(c, g);
		if (!u->holder && !u->n_shares && rf_quantity_cmp(u->annotated_bw, zero) == 0)
			continue;
		h = mix(h, g);
		h = mix(h, (uint64_t)(uintptr_t)u->holder);
		h = mix(h, u->n_shares);
		for (size_t k = 0; k < u->n_consumed; k++)
			h = mix_q(h, u->consumed[k]);
		h = mix_q(h, u->annotated_bw);
	}
	return h;
}

/* Free GPUs and NICs of a node, and the fingerprint of its usage: its pools' (counters are per
 * pool), its front-end use. Needs c->pool_fp and the node's front-end sums. */
void
rf_model_node_fp(struct rf_cluster *c, const struct rf_node *n)
{
	struct rf_node_use *nu = &c->node_use[n->idx];
	uint64_t h = 0x5bd1e995;
	nu->n_gpus_free = nu->n_nics_free = 0;
	for (size_t i = 0; i < n->n_gpus; i++)
		nu->n_gpus_free += rf_model_use(c, n->counted[i])->holder == NULL;
	for (size_t i = n->n_gpus; i < n->n_gpus + n->n_nics; i++)
		nu->n_nics_free += rf_model_use(c, n->counted[i])->holder == NULL;
	for (size_t i = 0; i < n->n_pools; i++)
		h = mix(h, c->pool_fp[n->pools[i]->idx]);
	h = mix_q(h, nu->fe_egress_used);
	h = mix_q(h, nu->fe_ingress_used);
	nu->fp = h;
}

int
rf_model_node_usage(struct rf_cluster *c)
{
	c->pool_fp = rf_arena_calloc(c->arena, c->n_pools + 1, sizeof(*c->pool_fp));
	if (!c->pool_fp)
		return -ENOMEM;
	for (size_t pi = 0; pi < c->n_pools; pi++)
		if (c->pools[pi]) /* else a pool a patch removed */
			c->pool_fp[pi] = rf_model_pool_fp(c, c->pools[pi]);
	for (size_t ni = 0; ni < c->n_nodes; ni++)
		if (c->nodes[ni]) /* else a removed node's hole */
			rf_model_node_fp(c, c->nodes[ni]);
	return 0;
}

int
rf_model_build_templates(struct rf_cluster *c)
{
	size_t n = json_array_size(c->objs.templates);
	c->templates = rf_arena_calloc(c->arena, n ? n : 1, sizeof(*c->templates));
	if (!c->templates)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *t = json_array_get(c->objs.templates, i);
		if (json_string_value(rf_jpath(t, "metadata.name")))
			c->templates[c->n_templates++] = t;
	}
	qsort(c->templates, c->n_templates, sizeof(*c->templates), tmpl_cmp);
	return 0;
}
