/* Cluster model, usage by difference: a generation that shares its layout and its reuse table
 * with the previous one starts from the previous generation's usage and takes back what the
 * claims and pods that went away contributed, then adds what the new ones contribute. Only the
 * devices, pools, nodes and rail groups those claims and pods touch are recomputed; every other
 * node keeps its fingerprint, so the verdicts remembered for it (alloc/memo.h) hold.
 *
 * A layout patched from the previous one (model-patch.c) keeps every gidx but those of the
 * replaced pools that moved to the end, and every node and pool index: the claims relinked to
 * its replaced pools (or changed classes) are changes like any other, taken back where the old
 * copy held its devices and added where the new one does; the replaced pools and the rebuilt
 * nodes get their fingerprints (and free counts) recomputed.
 *
 * The result is the one a walk of every claim and pod gives (test/unit/alloc/test_model_delta.c
 * and, across patched layouts, test_patch.c compare them after random changes): sums of
 * quantities are exact integers, and whatever a
 * walk would decide by the order of claims (a device allocated twice, a consumedCapacity that
 * cannot be read: both warnings) makes this decline and the walk run. The device usage is the
 * previous generation's blocks, shared until written (model-use.c: each block holds a count, as
 * the previous generation may go first); the node usage array is copied. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "config/grow.h"

/* Past this share of the objects changed, walking everything costs less than the differences
 * (each changed object costs lookups and merges; the walk is a straight pass). */
#define DELTA_MAX_SHARE 8 /* 1/8 */

struct vec {
	void **v;
	size_t n, cap;
};

struct usage_delta {
	struct vec claims_gone, claims_new, pods_gone, pods_new;
	struct vec touched; /* gidx of devices whose usage changed (repeats allowed) */
};

static int
vec_push(struct vec *v, void *p)
{
	if (rf_grow(&v->v, &v->cap, v->n + 1, sizeof(*v->v)) < 0)
		return -ENOMEM;
	v->v[v->n++] = p;
	return 0;
}

/* A set of pointers (or of 64-bit keys), open addressing, at most half full: sized for what it
 * will hold (set_init), or grown (set_add_grow) where that is not known. */
struct set {
	uint64_t *k;
	size_t mask, n;
};

static int
set_init(struct set *s, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n + 2)
		cap *= 2;
	s->mask = cap - 1;
	s->n = 0;
	s->k = calloc(cap, sizeof(*s->k));
	return s->k ? 0 : -ENOMEM;
}

static size_t
set_slot(const struct set *s, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 17) & s->mask;
	while (s->k[i] && s->k[i] != k)
		i = (i + 1) & s->mask;
	return i;
}

/* Adds k (never 0); true when it was not there. */
static bool
set_add(struct set *s, uint64_t k)
{
	size_t i = set_slot(s, k);
	if (s->k[i])
		return false;
	s->k[i] = k;
	s->n++;
	return true;
}

/* set_add() into a set that doubles when half full. @return 1 added, 0 there, -ENOMEM. */
static int
set_add_grow(struct set *s, uint64_t k)
{
	if (2 * (s->n + 1) > s->mask + 1) {
		struct set bigger;
		if (set_init(&bigger, s->n + 1) < 0)
			return -ENOMEM;
		for (size_t i = 0; i <= s->mask; i++)
			if (s->k[i])
				set_add(&bigger, s->k[i]);
		free(s->k);
		*s = bigger;
	}
	return set_add(s, k) ? 1 : 0;
}

static bool
set_has(const struct set *s, uint64_t k)
{
	return s->k[set_slot(s, k)] != 0;
}

static uint64_t
key_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

int
rf_model_claim_ref_cmp(const void *a, const void *b)
{
	const struct claim_ref *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (key_of(x->pod) > key_of(y->pod)) - (key_of(x->pod) < key_of(y->pod));
}

int
rf_model_delta_begin(struct rf_cluster *c)
{
	const struct rf_cluster *prev = c->prev;
	/* only along one reuse table (claims and pods are the same structs), from a generation
	 * whose usage is exact and whose claim names are unique (a pod's claim is then the one
	 * its name finds, whatever the order) */
	if (!prev || c->walk_usage || prev->reuse != c->reuse ||
	    (prev->layout != c->layout && !rf_model_patched_from(c, prev)) || !prev->pool_fp ||
	    !prev->claim_refs || prev->usage_inexact || prev->claim_dups)
		return 0;
	/* usage is taken over by index: a patch keeps node, pool and device indexes and adds
	 * after them (model-use.c relies on it: device usage never shrinks along blocks shared) */
	if (c->n_nodes < prev->n_nodes || c->n_pools < prev->n_pools ||
	    c->n_devices < prev->n_devices)
		return 0;
	c->delta = calloc(1, sizeof(*c->delta));
	return c->delta ? 0 : -ENOMEM;
}

void
rf_model_delta_end(struct rf_cluster *c)
{
	struct usage_delta *d = c->delta;
	if (!d)
		return;
	free(d->claims_gone.v);
	free(d->claims_new.v);
	free(d->pods_gone.v);
	free(d->pods_new.v);
	free(d->touched.v);
	free(d);
	c->delta = NULL;
}

int
rf_model_delta_note(struct rf_cluster *c, bool pod, bool removed, void *v)
{
	struct usage_delta *d = c->delta;
	struct vec *to = pod ? (removed ? &d->pods_gone : &d->pods_new)
			     : (removed ? &d->claims_gone : &d->claims_new);
	return vec_push(to, v);
}

static bool
too_many(const struct rf_cluster *c, size_t changed)
{
	return changed * DELTA_MAX_SHARE > c->prev->n_claims + c->prev->n_pods + 64;
}

static bool
exact(struct rf_quantity q)
{
	return q.nano <= RF_DELTA_QUANTITY_MAX && q.nano >= -RF_DELTA_QUANTITY_MAX;
}

/* ---- devices: what claims hold ---- */

/* Take back (sign < 0) or add what one shared allocation consumes. 0: the walk would warn. */
static int
apply_consumed(struct rf_dev_use *u, const struct rf_device *d, const struct rf_alloc_result *ar,
	       int sign)
{
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)ar->consumed, k, v) {
		struct rf_quantity q;
		const char *qs = json_string_value(v);
		const struct rf_capacity *cap = rf_model_device_cap(d, k);
		if (!cap || !qs || rf_quantity_parse(qs, &q) < 0 || !exact(q) || !u->consumed)
			return 0;
		struct rf_quantity *slot = &u->consumed[cap - d->caps];
		*slot = sign > 0 ? rf_quantity_add(*slot, q) : rf_quantity_sub(*slot, q);
	}
	return 1;
}

/* One claim's allocation taken back or added; the devices it touches are recorded. @return 1,
 * 0 when only the walk gives the same answer (a device held twice), -ENOMEM. */
static int
apply_claim(struct rf_cluster *c, const struct rf_claim *cl, int sign, struct vec *touched)
{
	for (size_t r = 0; r < cl->n_results; r++) {
		const struct rf_alloc_result *ar = &cl->results[r];
		if (!ar->dev || ar->admin_access)
			continue;
		struct rf_dev_use *u = rf_model_use_write(c, ar->gidx);
		if (!u || vec_push(touched, (void *)(uintptr_t)ar->gidx) < 0)
			return -ENOMEM;
		if (!ar->share_id) {
			if (sign > 0 && !u->holder)
				u->holder = cl;
			else if (sign < 0 && u->holder == cl)
				u->holder = NULL;
			else if (u->holder != cl && u->holder)
				return 0; /* held by another claim: the walk warns */
			/* else: the claim names the device twice, nothing more to do */
			continue;
		}
		const struct rf_device *d = ar->dev;
		if (sign < 0) {
			if (!u->n_shares)
				return 0;
			if (apply_consumed(u, d, ar, sign) == 0)
				return 0;
			if (--u->n_shares == 0)
				rf_model_use_unconsume(u);
			continue;
		}
		if (u->consumed && u->n_consumed != d->n_caps)
			return 0; /* shares of a device of another shape not all taken back: the
				     walk */
		u->n_shares++;
		if (rf_model_use_consume(u, d->n_caps) < 0)
			return -ENOMEM;
		if (apply_consumed(u, d, ar, sign) == 0)
			return 0;
	}
	return 1;
}

int
rf_model_delta_claims(struct rf_cluster *c)
{
	struct usage_delta *d = c->delta;
	const struct rf_cluster *prev = c->prev;
	if (!d || c->claim_dups ||
	    too_many(c, d->claims_gone.n + d->claims_new.n + d->pods_gone.n + d->pods_new.n))
		return 0;
	/* a patched layout keeps every device's gidx but those of replaced pools that grew or
	 * shrank, which moved to the end: the usage grows, their old range is a hole whose usage
	 * the claims relinked away from it take back (model-patch.c). The previous generation's
	 * blocks, copied where written (model-use.c) */
	int r = rf_model_use_share(c, prev);
	if (r < 0)
		return r;
	/* taken back first: a claim replaced by its next version frees what it held */
	r = 1;
	for (size_t i = 0; r > 0 && i < d->claims_gone.n; i++)
		r = apply_claim(c, d->claims_gone.v[i], -1, &d->touched);
	for (size_t i = 0; r > 0 && i < d->claims_new.n; i++)
		r = apply_claim(c, d->claims_new.v[i], 1, &d->touched);
	if (r <= 0)
		rf_model_use_release(c); /* rf_model_account_usage starts afresh */
	return r;
}

/* ---- pods: bandwidth they annotate on their NICs, rails of their groups, nodes ---- */

static bool
running(const struct rf_pod *p)
{
	return p->node_idx1 && !p->terminated;
}

/* The claim a pod's entry e found in the previous generation. */
static const struct rf_claim *
prev_claim(const struct rf_cluster *prev, const struct rf_pod *p, size_t e)
{
	return rf_cluster_claim_hashed(prev, p->ns, p->claim_names[e], p->claim_hashes[e]);
}

/* Take back (sign < 0, with the claims the previous generation found) or add a running pod's
 * annotated NIC bandwidth; returns the rails of its claims' NICs. 0 in *ok when a quantity is
 * too large to take back exactly. */
static uint64_t
apply_pod(struct rf_cluster *c, struct rf_pod *p, int sign, struct vec *touched, int *ok)
{
	uint64_t rails = 0;
	if (p->has_nic_bw && !exact(p->nic_bw))
		*ok = 0;
	for (size_t e = 0; e < p->n_claim_names; e++) {
		const struct rf_claim *cl =
			sign < 0 ? prev_claim(c->prev, p, e) : rf_model_pod_claim(c, p, e);
		for (size_t r = 0; cl && r < cl->n_results; r++) {
			const struct rf_alloc_result *ar = &cl->results[r];
			if (!ar->dev || !ar->nic || ar->admin_access)
				continue;
			if (p->has_nic_bw) {
				struct rf_dev_use *u = rf_model_use_write(c, ar->gidx);
				if (!u) {
					*ok = -ENOMEM;
					continue;
				}
				u->annotated_bw =
					sign > 0 ? rf_quantity_add(u->annotated_bw, p->nic_bw)
						 : rf_quantity_sub(u->annotated_bw, p->nic_bw);
				if (vec_push(touched, (void *)(uintptr_t)ar->gidx) < 0)
					*ok = -ENOMEM;
			}
			if (ar->rail >= 0)
				rails |= UINT64_C(1) << ar->rail;
		}
	}
	return rails;
}

/* Pods sorted by node, then namespace and name. */
static int
node_pod_cmp(const void *a, const void *b)
{
	const struct rf_pod *x = *(struct rf_pod *const *)a, *y = *(struct rf_pod *const *)b;
	if (x->node_idx1 != y->node_idx1)
		return x->node_idx1 < y->node_idx1 ? -1 : 1;
	return rf_model_pod_cmp(a, b);
}

struct pods_work {
	struct set gone;     /* pods of prev this generation dropped */
	struct set old;      /* gone ones and the ones whose claims changed: entries replaced */
	struct vec affected; /* pods of both generations whose claims changed */
	struct vec run_gone, run_new; /* running pods dropped / added, by node_pod_cmp */
	struct group_rails *rails;    /* entries of the new and affected pods */
	struct group_node *gnodes;
	size_t n_rails, n_gnodes;
	struct claim_ref *refs; /* of the new running pods */
	size_t n_refs;
	unsigned char *node_touched; /* by node idx */
	unsigned char *pool_touched; /* by pool idx */
};

static void
work_free(struct pods_work *w)
{
	free(w->gone.k);
	free(w->old.k);
	free(w->affected.v);
	free(w->run_gone.v);
	free(w->run_new.v);
	free(w->rails);
	free(w->gnodes);
	free(w->refs);
	free(w->node_touched);
	free(w->pool_touched);
}

/* Pods of both generations that name a claim that changed: their bandwidth and rails move (as
 * many as the changed claims' references: a build of many events, or of a layout patched where
 * pools many claims hold changed, finds hundreds). */
static int
find_affected(struct rf_cluster *c, struct usage_delta *d, struct pods_work *w)
{
	const struct rf_cluster *prev = c->prev;
	struct set seen;
	if (set_init(&seen, d->pods_gone.n + 16) < 0)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		const struct vec *cls = pass ? &d->claims_new : &d->claims_gone;
		for (size_t i = 0; i < cls->n; i++) {
			uint64_t h = ((const struct rf_claim *)cls->v[i])->key_hash;
			size_t lo = 0, hi = prev->n_claim_refs;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (prev->claim_refs[mid].hash < h)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < prev->n_claim_refs && prev->claim_refs[lo].hash == h; lo++) {
				const struct rf_pod *p = prev->claim_refs[lo].pod;
				int added = set_has(&w->gone, key_of(p))
						    ? 0
						    : set_add_grow(&seen, key_of(p));
				if (added == 0)
					continue;
				if (added < 0 || vec_push(&w->affected, (void *)p) < 0) {
					free(seen.k);
					return -ENOMEM;
				}
			}
		}
	}
	free(seen.k);
	return 0;
}

/* The old and new entries of the pods whose usage moves: bandwidth, group entries, claim
 * references. @return 1, 0 (a quantity too large), -ENOMEM. */
static int
pod_entries(struct rf_cluster *c, struct usage_delta *d, struct pods_work *w)
{
	int ok = 1;
	size_t n_new = d->pods_new.n + w->affected.n;
	size_t n_refs = 0;
	for (size_t i = 0; i < d->pods_new.n; i++)
		n_refs += ((struct rf_pod *)d->pods_new.v[i])->n_claim_names;
	if (!(w->rails = calloc(n_new + 1, sizeof(*w->rails))) ||
	    !(w->gnodes = calloc(n_new + 1, sizeof(*w->gnodes))) ||
	    !(w->refs = calloc(n_refs + 1, sizeof(*w->refs))))
		return -ENOMEM;
	for (size_t i = 0; ok > 0 && i < d->pods_gone.n; i++) {
		struct rf_pod *p = d->pods_gone.v[i];
		if (running(p)) {
			apply_pod(c, p, -1, &d->touched, &ok);
			if (vec_push(&w->run_gone, p) < 0)
				return -ENOMEM;
		}
	}
	for (size_t i = 0; ok > 0 && i < w->affected.n; i++)
		apply_pod(c, w->affected.v[i], -1, &d->touched, &ok);
	for (size_t i = 0; ok > 0 && i < n_new; i++) {
		bool fresh = i < d->pods_new.n;
		struct rf_pod *p = fresh ? d->pods_new.v[i] : w->affected.v[i - d->pods_new.n];
		if (!running(p))
			continue;
		if (fresh && vec_push(&w->run_new, p) < 0)
			return -ENOMEM;
		uint64_t rails = apply_pod(c, p, 1, &d->touched, &ok);
		for (size_t e = 0; fresh && e < p->n_claim_names; e++)
			w->refs[w->n_refs++] = (struct claim_ref){ p->claim_hashes[e], p };
		if (!p->group)
			continue;
		unsigned node = p->node_idx1 - 1;
		w->gnodes[w->n_gnodes++] = (struct group_node){ p->group_hash, p->group, node, p };
		if (rails)
			w->rails[w->n_rails++] =
				(struct group_rails){ p->group_hash, p->group, node, rails, p };
	}
	return ok;
}

/* prev's sorted array without the entries of pods in `drop`, merged with the sorted `add`.
 * Entries are elem bytes with the pod pointer at pod_off. */
static void *
merge_entries(struct rf_arena *a, const void *prev, size_t n_prev, void *add, size_t n_add,
	      size_t elem, size_t pod_off, const struct set *drop,
	      int (*cmp)(const void *, const void *), size_t *ret_n)
{
	char *out = rf_arena_alloc(a, (n_prev + n_add + 1) * elem);
	if (!out)
		return NULL;
	qsort(add, n_add, elem, cmp);
	const char *p = prev, *q = add;
	size_t i = 0, j = 0, n = 0;
	while (i < n_prev || j < n_add) {
		const char *pi = p + i * elem;
		if (i < n_prev) {
			const struct rf_pod *pod;
			memcpy(&pod, pi + pod_off, sizeof(pod));
			if (set_has(drop, key_of(pod))) {
				i++;
				continue;
			}
		}
		if (j == n_add || (i < n_prev && cmp(pi, q + j * elem) <= 0)) {
			memcpy(out + n * elem, pi, elem);
			i++;
		} else {
			memcpy(out + n * elem, q + j * elem, elem);
			j++;
		}
		n++;
	}
	*ret_n = n;
	return out;
}

/* A patched layout whose rebuilt nodes see the pools they saw: the previous layout's table. */
static struct pool_nodes *
carried_pool_nodes(const struct rf_cluster *c)
{
	const struct rf_cluster *prev = c->prev;
	if (!prev || !rf_model_patched_from(c, prev) || !rf_model_patch_same_pool_sets(c))
		return NULL;
	struct rf_layout *base = prev->layout;
	struct pool_nodes *pn = NULL;
	pthread_mutex_lock(&base->extra_lock);
	const struct pool_nodes *from = base->pool_nodes;
	size_t total = from ? from->first[c->n_pools] : 0;
	if (from && (pn = calloc(1, sizeof(*pn))) &&
	    (!(pn->first = malloc((c->n_pools + 2) * sizeof(*pn->first))) ||
	     !(pn->idx = malloc((total + 1) * sizeof(*pn->idx))))) {
		rf_model_pool_nodes_free(pn);
		pn = NULL;
	}
	if (pn) {
		memcpy(pn->first, from->first, (c->n_pools + 2) * sizeof(*pn->first));
		memcpy(pn->idx, from->idx, total * sizeof(*pn->idx));
	}
	pthread_mutex_unlock(&base->extra_lock);
	return pn;
}

/* The nodes that see each pool, built once per layout. */
static const struct pool_nodes *
pool_nodes(struct rf_cluster *c)
{
	struct rf_layout *l = c->layout;
	pthread_mutex_lock(&l->extra_lock);
	struct pool_nodes *pn = l->pool_nodes;
	if (pn)
		goto out;
	if ((pn = carried_pool_nodes(c))) {
		l->pool_nodes = pn;
		goto out;
	}
	pn = calloc(1, sizeof(*pn));
	size_t total = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		total += c->nodes[i] ? c->nodes[i]->n_pools : 0; /* else a removed node's hole */
	if (!pn || !(pn->first = calloc(c->n_pools + 2, sizeof(*pn->first))) ||
	    !(pn->idx = calloc(total + 1, sizeof(*pn->idx)))) {
		if (pn)
			free(pn->first);
		free(pn);
		pn = NULL;
		goto out;
	}
	for (size_t i = 0; i < c->n_nodes; i++)
		for (size_t k = 0; c->nodes[i] && k < c->nodes[i]->n_pools; k++)
			pn->first[c->nodes[i]->pools[k]->idx + 2]++;
	for (size_t p = 2; p < c->n_pools + 2; p++)
		pn->first[p] += pn->first[p - 1];
	for (size_t i = 0; i < c->n_nodes; i++)
		for (size_t k = 0; c->nodes[i] && k < c->nodes[i]->n_pools; k++)
			pn->idx[pn->first[c->nodes[i]->pools[k]->idx + 1]++] = (unsigned)i;
	l->pool_nodes = pn;
out:
	pthread_mutex_unlock(&l->extra_lock);
	return pn;
}

void
rf_model_pool_nodes_free(struct pool_nodes *pn)
{
	if (!pn)
		return;
	free(pn->first);
	free(pn->idx);
	free(pn);
}

/* The pod lists of the nodes, the previous generation's but on the nodes pods left or joined;
 * their front-end sums. @return 1, 0 (two pods of one name: the walk's order decides), -ENOMEM. */
static int
node_lists(struct rf_cluster *c, struct pods_work *w)
{
	const struct rf_cluster *prev = c->prev;
	struct rf_node_use *nu = rf_arena_alloc_raw(c->arena, (c->n_nodes + 1) * sizeof(*nu));
	size_t total = w->run_new.n;
	if (!nu)
		return -ENOMEM;
	/* nodes a patch added (after the previous ones) start empty: the pods bound to them are
	 * relinked copies (model-patch.c), fresh pods below; a removed node's pods all went */
	memcpy(nu, prev->node_use, prev->n_nodes * sizeof(*nu));
	memset(nu + prev->n_nodes, 0, (c->n_nodes + 1 - prev->n_nodes) * sizeof(*nu));
	for (size_t i = 0; i < c->n_nodes; i++)
		total += nu[i].n_pods;
	struct rf_pod **block = rf_arena_alloc(c->arena, (total + 1) * sizeof(*block));
	if (!block)
		return -ENOMEM;
	if (w->run_gone.n)
		qsort(w->run_gone.v, w->run_gone.n, sizeof(void *), node_pod_cmp);
	if (w->run_new.n)
		qsort(w->run_new.v, w->run_new.n, sizeof(void *), node_pod_cmp);
	struct rf_pod **gone = (struct rf_pod **)w->run_gone.v,
		      **add = (struct rf_pod **)w->run_new.v;
	size_t gi = 0, ai = 0, off = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		struct rf_node_use *u = &nu[ni];
		struct rf_pod **was = u->pods, **to = block + off;
		size_t n = 0, n_was = u->n_pods;
		bool touched = false;
		size_t g_end = gi, a_end = ai;
		while (g_end < w->run_gone.n && gone[g_end]->node_idx1 == ni + 1)
			g_end++;
		while (a_end < w->run_new.n && add[a_end]->node_idx1 == ni + 1)
			a_end++;
		touched = g_end > gi || a_end > ai;
		if (!touched) {
			if (n_was)
				memcpy(to, was, n_was * sizeof(*to));
			u->pods = to;
			off += n_was;
			continue;
		}
		/* the list in pod order without the pods that left, merged with the new ones */
		size_t i = 0;
		while (i < n_was || ai < a_end) {
			if (i < n_was && set_has(&w->gone, key_of(was[i]))) {
				i++;
				continue;
			}
			int cmp = i == n_was    ? 1
				  : ai == a_end ? -1
						: rf_model_pod_cmp(&was[i], &add[ai]);
			if (cmp == 0 ||
			    (ai + 1 < a_end && rf_model_pod_cmp(&add[ai], &add[ai + 1]) == 0))
				return 0;
			to[n++] = cmp < 0 ? was[i++] : add[ai++];
		}
		gi = g_end;
		u->pods = to;
		u->n_pods = n;
		off += n;
		u->fe_egress_used = u->fe_ingress_used = (struct rf_quantity){ 0 };
		for (size_t k = 0; k < n; k++) {
			if (to[k]->has_egress)
				u->fe_egress_used =
					rf_quantity_add(u->fe_egress_used, to[k]->egress);
			if (to[k]->has_ingress)
				u->fe_ingress_used =
					rf_quantity_add(u->fe_ingress_used, to[k]->ingress);
		}
		w->node_touched[ni] = 1;
	}
	c->node_use = nu;
	return 1;
}

/* Fingerprints of the pools whose devices' usage moved and of the nodes that see them or whose
 * pods changed; every other one is the previous generation's. */
static int
fingerprints(struct rf_cluster *c, struct usage_delta *d, struct pods_work *w)
{
	const struct pool_nodes *pn = pool_nodes(c);
	if (!pn || !(c->pool_fp = rf_arena_alloc(c->arena, (c->n_pools + 1) * sizeof(uint64_t))))
		return -ENOMEM;
	/* pools a patch added (after the previous ones) are touched: computed below */
	memcpy(c->pool_fp, c->prev->pool_fp, c->prev->n_pools * sizeof(uint64_t));
	memset(c->pool_fp + c->prev->n_pools, 0,
	       (c->n_pools + 1 - c->prev->n_pools) * sizeof(uint64_t));
	for (size_t i = 0; i < d->touched.n; i++) {
		const struct rf_device *dev = c->devices[(uintptr_t)d->touched.v[i]];
		if (dev) /* else a hole a patch left: its pool was replaced (below) */
			w->pool_touched[dev->pool->idx] = 1;
	}
	/* on a patched layout, the replaced pools and rebuilt nodes (their devices' gidx, the
	 * devices a node counts) */
	rf_model_patch_touched(c, w->pool_touched, w->node_touched);
	for (size_t p = 0; p < c->n_pools; p++) {
		if (!w->pool_touched[p] || !c->pools[p]) /* untouched, or a removed pool's hole */
			continue;
		c->pool_fp[p] = rf_model_pool_fp(c, c->pools[p]);
		for (size_t k = pn->first[p]; k < pn->first[p + 1]; k++)
			w->node_touched[pn->idx[k]] = 1;
	}
	for (size_t ni = 0; ni < c->n_nodes; ni++)
		if (w->node_touched[ni] && c->nodes[ni]) /* else a removed node's hole */
			rf_model_node_fp(c, c->nodes[ni]);
	return 0;
}

static int
delta_pods(struct rf_cluster *c, struct usage_delta *d, struct pods_work *w)
{
	const struct rf_cluster *prev = c->prev;
	int r;
	if (set_init(&w->gone, d->pods_gone.n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < d->pods_gone.n; i++)
		set_add(&w->gone, key_of(d->pods_gone.v[i]));
	if ((r = find_affected(c, d, w)) < 0)
		return r;
	if (too_many(c, d->claims_gone.n + d->claims_new.n + d->pods_gone.n + d->pods_new.n +
				w->affected.n))
		return 0;
	if (set_init(&w->old, d->pods_gone.n + w->affected.n) < 0 ||
	    !(w->node_touched = calloc(c->n_nodes + 1, 1)) ||
	    !(w->pool_touched = calloc(c->n_pools + 1, 1)))
		return -ENOMEM;
	for (size_t i = 0; i < d->pods_gone.n; i++)
		set_add(&w->old, key_of(d->pods_gone.v[i]));
	for (size_t i = 0; i < w->affected.n; i++)
		set_add(&w->old, key_of(w->affected.v[i]));
	if ((r = pod_entries(c, d, w)) <= 0 || (r = node_lists(c, w)) <= 0)
		return r;
	if (!(c->group_rails = merge_entries(c->arena, prev->group_rails, prev->n_group_rails,
					     w->rails, w->n_rails, sizeof(*w->rails),
					     offsetof(struct group_rails, pod), &w->old,
					     rf_model_group_rails_cmp, &c->n_group_rails)) ||
	    !(c->group_nodes = merge_entries(c->arena, prev->group_nodes, prev->n_group_nodes,
					     w->gnodes, w->n_gnodes, sizeof(*w->gnodes),
					     offsetof(struct group_node, pod), &w->old,
					     rf_model_group_node_cmp, &c->n_group_nodes)) ||
	    !(c->claim_refs =
		      merge_entries(c->arena, prev->claim_refs, prev->n_claim_refs, w->refs,
				    w->n_refs, sizeof(*w->refs), offsetof(struct claim_ref, pod),
				    &w->gone, rf_model_claim_ref_cmp, &c->n_claim_refs)) ||
	    (r = rf_model_index_groups(c)) < 0 || (r = fingerprints(c, d, w)) < 0)
		return -ENOMEM;
	return 1;
}

int
rf_model_delta_pods(struct rf_cluster *c)
{
	struct usage_delta *d = c->delta;
	struct pods_work w = { 0 };
	int r = delta_pods(c, d, &w);
	work_free(&w);
	if (r > 0)
		return 1;
	/* declined: the walk starts from the claims' usage alone */
	c->node_use = NULL; /* the walk's own, zeroed */
	c->group_rails = NULL;
	c->group_nodes = NULL;
	c->claim_refs = NULL;
	c->n_group_rails = c->n_group_nodes = c->n_claim_refs = c->n_groups = 0;
	c->groups = NULL;
	c->pool_fp = NULL;
	if (r < 0)
		return r;
	for (size_t g = 0; g < c->n_devices; g++) {
		const struct rf_dev_use *u = rf_model_use(c, (unsigned)g);
		if (rf_quantity_cmp(u->annotated_bw, (struct rf_quantity){ 0 }) == 0)
			continue; /* (its block stays shared) */
		struct rf_dev_use *wu = rf_model_use_write(c, (unsigned)g);
		if (!wu)
			return -ENOMEM;
		wu->annotated_bw = (struct rf_quantity){ 0 };
	}
	return r;
}

bool
rf_cluster_usage_delta(const struct rf_cluster *c)
{
	return c->usage_delta;
}

/* ---- the claims' name index ---- */

/* Removes the slot holding cl (backward shift, so no lookup ever stops early). */
static bool
index_remove(struct claim_slot *slots, size_t mask, const struct rf_claim *cl)
{
	size_t i = cl->key_hash & mask;
	while (slots[i].claim && slots[i].claim != cl)
		i = (i + 1) & mask;
	if (!slots[i].claim)
		return false;
	for (size_t j = i;;) {
		j = (j + 1) & mask;
		if (!slots[j].claim)
			break;
		size_t home = slots[j].hash & mask;
		/* the entry at j may fill the hole at i unless its home lies after i, up to j */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		slots[i] = slots[j];
		i = j;
	}
	slots[i] = (struct claim_slot){ 0 };
	return true;
}

/* Adds cl; false when a claim of the same name is there (the walk decides which one wins). */
static bool
index_add(struct claim_slot *slots, size_t mask, const struct rf_claim *cl)
{
	size_t i = cl->key_hash & mask;
	for (; slots[i].claim; i = (i + 1) & mask)
		if (slots[i].hash == cl->key_hash &&
		    rf_model_cmp_nsname(slots[i].claim->ns, slots[i].claim->name, cl->ns,
					cl->name) == 0)
			return false;
	slots[i] = (struct claim_slot){ cl->key_hash, cl };
	return true;
}

int
rf_model_index_claims_next(struct rf_cluster *c)
{
	struct usage_delta *d = c->delta;
	const struct rf_cluster *prev = c->prev;
	size_t cap = 16;
	while (cap < 2 * c->n_claims)
		cap *= 2;
	/* the previous generation's table, patched, when it has the size a new one would have */
	if (!d || !prev->claim_slots || prev->claim_dups || prev->claim_mask != cap - 1 ||
	    too_many(c, d->claims_gone.n + d->claims_new.n))
		return rf_model_index_claims(c);
	struct claim_slot *slots = rf_arena_alloc(c->arena, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memcpy(slots, prev->claim_slots, cap * sizeof(*slots));
	bool ok = true;
	for (size_t i = 0; ok && i < d->claims_gone.n; i++)
		ok = index_remove(slots, cap - 1, d->claims_gone.v[i]);
	for (size_t i = 0; ok && i < d->claims_new.n; i++)
		ok = index_add(slots, cap - 1, d->claims_new.v[i]);
	if (!ok)
		return rf_model_index_claims(c);
	c->claim_mask = cap - 1;
	c->claim_slots = slots;
	return 0;
}
