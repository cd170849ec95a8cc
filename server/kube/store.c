/* The live object store and its publisher thread (see store.h).
 *
 * Owns: one jansson object per kind used as a hash map key -> object (references), the list of
 * assumed /bind placements, two private copies of the configuration (1.34 and 1.35 DRA rules, so
 * that a version detected later never changes a configuration a generation already uses) and the
 * publisher thread, which builds the generations and compactions. Lock: `lock` guards everything
 * mutable here; the publisher holds it only while it takes the arrays of the objects (kept from
 * build to build, kept_array.h: copied only by the first change after a build took them), never
 * while building, publishing or freeing. Old maps
 * and replaced objects are released outside the lock. No other lock is taken while it is held
 * (rf_cache_publish is called without it). The publisher runs at nice 10 so that, when CPUs are
 * scarce, the HTTP threads answering kube-scheduler go first. */
#define _GNU_SOURCE /* gettid() for the publisher's nice value (Linux) */
#include "server/kube/store.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config/grow.h"
#include "server/http/heap.h"
#include "server/http/log.h"
#include "server/http/metrics.h"
#include "server/kube/build_budget.h"
#include "server/kube/kept_array.h"
#include "server/kube/kube.h"
#include "server/kube/slice_table.h"
#include "server/snapshot/slim.h"
#include "server/snapshot/snapshot.h"

struct assumed {
	char *key, *uid, *node;
	double expires;
	json_t *base; /* the cached pod the copy was made from */
	json_t *copy; /* base with spec.nodeName set */
};

#define STORE_MAX_RULES 8 /* configurations for the DRA versions a server reports */

struct rf_store {
	pthread_mutex_t lock;
	pthread_cond_t wake;         /* the publisher's */
	pthread_cond_t published;    /* rf_store_wait_published's */
	json_t *maps[RF_KIND_COUNT]; /* but ResourceSlices: */
	struct rf_slice_table slices;
	/* what the builds take, kept from one to the next (kept_array.h, slice_table.h): the
	 * maps' values as arrays, the slices' view (NULL: made again at the next build) */
	struct rf_kept_array arrays[RF_KIND_COUNT];
	struct rf_slice_view *slice_view;
	/* entries rf_store_slim() made for a list of slices in progress, found again by their
	 * blob in rf_store_replace_slim() (the references held keep the addresses unique) */
	struct rf_slice_entry *staged;
	size_t n_staged, cap_staged;
	int64_t seq;          /* bumped on every change */
	int64_t built_seq;    /* the last change included in a published generation */
	double pending_since; /* when the first change not yet published came, 0 = none */
	bool layout_dirty;    /* a node, slice or class changed since the last build */
	bool listed[RF_KIND_COUNT];
	struct rf_cluster *last; /* the last generation built: the next one starts from it */
	/* the objects last was built from (held; the publisher's only, as last): a compaction
	 * builds them again, so that it carries last's remembered verdicts (rf_cluster_build_next),
	 * and the changes since follow in the build that catches it up */
	struct rf_cluster_objects last_objs;
	struct rf_slice_view *last_view;
	int64_t last_seq; /* the change count they are as of */
	struct rf_store_options opts;
	bool urgent;
	bool defer_first; /* rf_store_defer_until_listed() */
	bool stop;
	struct assumed *assumed;
	size_t n_assumed, cap_assumed;
	/* the configuration of the builds: cfgs[0] is the file's (with auto, the newest rules until
	 * the server's version is known); each other DRA version the server reported gets its
	 * copy, kept until the store is freed since generations point to it */
	struct rf_config cfgs[STORE_MAX_RULES];
	size_t n_cfgs;
	size_t cur_cfg;
	struct rf_cache *cache;
	struct rf_cel_cache *cel;
	double min_interval;
	/* the generation a compaction of failed: not tried again until another one is built */
	const struct rf_cluster *no_compact;
	/* the chain moved onto a compacted generation built from older objects: the next build
	 * patches it with the changes since (even when they are all in the published one) */
	bool rebase;
	double compaction_cpu; /* the last compaction's CPU seconds (the next one's estimate) */
	uint64_t full_builds;  /* layouts built in full by builds of changes (a new chain each) */
	unsigned failures;     /* builds failed in a row: the next waits longer (backoff()) */
	double last_build_end;
	struct rf_build_budget budget; /* the publisher's */
	double last_trim;              /* when freed heap was last given back to the system */
	bool trim_owed;                /* a full build or a while of builds freed heap since */
	double trim_idle;              /* seconds without a build before it is given back */
	struct rf_store_stats stats;
	pthread_t thread;
	bool thread_started;
	/* slimming (server/slim.h): one interner per kind, used by that kind's writers only, under
	 * its own lock; pruned after relists and as it grows */
	struct rf_slim_options slim;
	struct kind_intern {
		pthread_mutex_t lock;
		struct rf_intern *in;
		size_t prune_at; /* prune when it holds this many values */
	} interns[RF_KIND_COUNT];
};

static const enum rf_slim_kind slim_kinds[RF_KIND_COUNT] = {
	[RF_KIND_NODES] = RF_SLIM_NODE,    [RF_KIND_PODS] = RF_SLIM_POD,
	[RF_KIND_SLICES] = RF_SLIM_SLICE,  [RF_KIND_CLAIMS] = RF_SLIM_CLAIM,
	[RF_KIND_CLASSES] = RF_SLIM_CLASS, [RF_KIND_TAINT_RULES] = RF_SLIM_TAINT_RULE,
};

/* Pods and claims are kept packed (server/snapshot/snapshot.h): the model parses them when they
 * change (rf_cluster_objects.expand) and keeps what it needs in its own form; the trees of 24,000
 * objects were a third of the process. */
static bool
packed_kind(enum rf_kind kind)
{
	return kind == RF_KIND_PODS || kind == RF_KIND_CLAIMS;
}

/* What the store keeps of a slim object: the object, or packed (takes slim; NULL on OOM). */
static json_t *
kept_form(enum rf_kind kind, json_t *slim)
{
	if (!slim || !packed_kind(kind))
		return slim;
	json_t *blob = rf_snapshot_pack_object(slim);
	json_decref(slim);
	return blob;
}

/* The slim copy of obj (new reference, NULL on OOM). */
static json_t *
slim_object(struct rf_store *s, enum rf_kind kind, const json_t *obj)
{
	struct kind_intern *ki = &s->interns[kind];
	pthread_mutex_lock(&ki->lock);
	json_t *v = rf_slim_object(slim_kinds[kind], obj, &s->slim, ki->in);
	if (ki->in && rf_intern_size(ki->in) >= ki->prune_at) {
		rf_intern_prune(ki->in);
		ki->prune_at = 2 * rf_intern_size(ki->in) + 4096;
	}
	pthread_mutex_unlock(&ki->lock);
	return v;
}

static void
prune_interner(struct rf_store *s, enum rf_kind kind)
{
	struct kind_intern *ki = &s->interns[kind];
	pthread_mutex_lock(&ki->lock);
	rf_intern_prune(ki->in);
	ki->prune_at = 2 * rf_intern_size(ki->in) + 4096;
	pthread_mutex_unlock(&ki->lock);
}

static const char *const kind_names[RF_KIND_COUNT] = { "Node",          "Pod",
						       "ResourceSlice", "ResourceClaim",
						       "DeviceClass",   "DeviceTaintRule" };

const char *
rf_kind_name(enum rf_kind k)
{
	return (unsigned)k < RF_KIND_COUNT ? kind_names[k] : "?";
}

bool
rf_kind_namespaced(enum rf_kind k)
{
	return k == RF_KIND_PODS || k == RF_KIND_CLAIMS;
}

bool
rf_store_key(const json_t *obj, bool namespaced, char *buf, size_t len)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	if (!name || !*name)
		return false;
	int n;
	if (namespaced && ns && *ns)
		n = snprintf(buf, len, "%s/%s", ns, name);
	else
		n = snprintf(buf, len, "%s", name);
	return n > 0 && (size_t)n < len;
}

/* Objects are at most a few MiB; names at most 253 + 63 characters. */
#define KEY_MAX 512

/* The caller's object loses metadata.managedFields too (the biggest part of most objects, and
 * never anything railfit reads), as it did before slim copies were kept. */
static void
strip(json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");
	if (json_is_object(md))
		json_object_del(md, "managedFields");
}

static void
assumed_free(struct assumed *a)
{
	free(a->key);
	free(a->uid);
	free(a->node);
	json_decref(a->base);
	json_decref(a->copy);
	memset(a, 0, sizeof(*a));
}

static void
assumed_drop(struct rf_store *s, size_t i)
{
	assumed_free(&s->assumed[i]);
	s->assumed[i] = s->assumed[--s->n_assumed];
}

/* ---------------------------------------------------------------------------------------------
 * Writers
 */

static bool
layout_kind(enum rf_kind kind)
{
	return kind == RF_KIND_NODES || kind == RF_KIND_SLICES || kind == RF_KIND_CLASSES ||
	       kind == RF_KIND_TAINT_RULES; /* rules change devices' taints */
}

/* Whether two slim copies of a Node differ in their status only (its Ready condition): the
 * model reads that from the current objects (rf_cluster_node_ready()), so the layout stays. */
static bool
node_status_only(const json_t *old, const json_t *now)
{
	const char *k;
	const json_t *v;
	if (!json_is_object(old) || !json_is_object(now))
		return false;
	json_object_foreach ((json_t *)now, k, v)
		if (strcmp(k, "status") != 0 && !json_equal(v, json_object_get(old, k)))
			return false;
	json_object_foreach ((json_t *)old, k, v)
		if (strcmp(k, "status") != 0 && !json_object_get(now, k))
			return false;
	/* allocatable decides whether a device plugin or DRA serves an extended resource there
	 * (1.36+): the layout's node must have the current one */
	return json_equal(json_object_get(json_object_get(old, "status"), "allocatable"),
			  json_object_get(json_object_get(now, "status"), "allocatable")) ||
	       (!json_object_get(json_object_get(old, "status"), "allocatable") &&
		!json_object_get(json_object_get(now, "status"), "allocatable"));
}

/* Under the lock: a change the next build must include; layout: one the layout is built
 * from (see layout_kind()). */
static void
changed_locked(struct rf_store *s, enum rf_kind kind, bool layout)
{
	s->seq++;
	if (layout && layout_kind(kind))
		s->layout_dirty = true;
	if (!s->pending_since) {
		s->pending_since = rf_kube_now();
		rf_cache_set_pending(s->cache, s->pending_since);
	}
	pthread_cond_signal(&s->wake);
}

/* A relist hands over new copies of mostly unchanged objects: keep the cached object where the
 * slim copies are equal, so that generations keep reusing what they parsed of it (the model
 * reuses claims and pods by object identity) and an unchanged node or slice list does not
 * rebuild the layout. */
static int replace(struct rf_store *s, enum rf_kind kind, json_t *items, bool slim_already);

/* The parsed and packed entry of a ResourceSlice (see slice_table.h). */
static int
slice_entry(struct rf_store *s, const char *key, json_t *obj, struct rf_slice_entry *ret)
{
	json_t *slim = slim_object(s, RF_KIND_SLICES, obj);
	int r = slim ? rf_slice_entry_make(key, slim, &s->cfgs[0], ret) : -ENOMEM;
	json_decref(slim);
	return r;
}

/* What rf_store_slim() hands out for slim (takes it): the key is the same in the slim copy as in
 * the object (metadata.name and namespace are kept as they are). */
static json_t *
slim_kept(struct rf_store *s, enum rf_kind kind, json_t *slim)
{
	char key[KEY_MAX];
	if (!slim || !rf_store_key(slim, rf_kind_namespaced(kind), key, sizeof(key)))
		return slim; /* skipped by replace() */
	if (packed_kind(kind)) {
		/* packed now, so a list's slim trees never all exist; replace() finds the key */
		json_t *blob = kept_form(kind, slim);
		return blob ? json_pack("{s:s,s:o}", "key", key, "packed", blob) : NULL;
	}
	if (kind != RF_KIND_SLICES)
		return slim;
	struct rf_slice_entry e;
	int r = rf_slice_entry_make(key, slim, &s->cfgs[0], &e);
	json_decref(slim);
	if (r < 0)
		return NULL;
	json_t *blob = json_incref(e.blob);
	pthread_mutex_lock(&s->lock);
	r = rf_grow(&s->staged, &s->cap_staged, s->n_staged + 1, sizeof(*s->staged));
	if (r == 0)
		s->staged[s->n_staged++] = e;
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		rf_slice_entry_release(&e);
		json_decref(blob);
		return NULL;
	}
	return blob;
}

json_t *
rf_store_slim(struct rf_store *s, enum rf_kind kind, json_t *obj)
{
	strip(obj);
	return slim_kept(s, kind, slim_object(s, kind, obj));
}

int
rf_store_slim_text(struct rf_store *s, enum rf_kind kind, const char *text, size_t len,
		   json_t **ret)
{
	struct kind_intern *ki = &s->interns[kind];
	json_t *slim = NULL;
	*ret = NULL;
	pthread_mutex_lock(&ki->lock);
	int r = rf_slim_text(slim_kinds[kind], text, len, &s->slim, ki->in, &slim);
	if (r == 0 && ki->in && rf_intern_size(ki->in) >= ki->prune_at) {
		rf_intern_prune(ki->in);
		ki->prune_at = 2 * rf_intern_size(ki->in) + 4096;
	}
	pthread_mutex_unlock(&ki->lock);
	if (r < 0)
		return r;
	return (*ret = slim_kept(s, kind, slim)) ? 0 : -ENOMEM;
}

int
rf_store_replace(struct rf_store *s, enum rf_kind kind, json_t *items)
{
	return replace(s, kind, items, false);
}

int
rf_store_replace_slim(struct rf_store *s, enum rf_kind kind, json_t *items)
{
	return replace(s, kind, items, true);
}

static int
staged_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct rf_slice_entry *)a)->blob;
	uintptr_t y = (uintptr_t)((const struct rf_slice_entry *)b)->blob;
	return (x > y) - (x < y);
}

/* replace() for ResourceSlices: items are blobs from rf_store_slim() (slim_already) or objects. */
static int
replace_slices(struct rf_store *s, json_t *items, bool slim_already)
{
	size_t n = json_array_size(items), k = 0, same = 0, n_staged;
	struct rf_slice_entry *v = calloc(n ? n : 1, sizeof(*v)), *staged;
	struct rf_slice_table t = { 0 }, old;
	char key[KEY_MAX];
	int r = -ENOMEM;
	pthread_mutex_lock(&s->lock);
	staged = s->staged;
	n_staged = s->n_staged;
	s->staged = NULL;
	s->n_staged = s->cap_staged = 0;
	pthread_mutex_unlock(&s->lock);
	if (!v)
		goto out;
	if (n_staged) /* none staged: a list of whole objects, or an empty one (staged is NULL) */
		qsort(staged, n_staged, sizeof(*staged), staged_cmp);
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_array_get(items, i);
		if (json_is_string(it)) {
			struct rf_slice_entry probe = { .blob = it }, *e = NULL;
			if (n_staged)
				e = bsearch(&probe, staged, n_staged, sizeof(*staged), staged_cmp);
			if (e && e->rec) {
				v[k++] = *e;
				memset(e, 0, sizeof(*e)); /* keeps its blob's place in the order */
				e->blob = it;
			}
			continue;
		}
		if (!json_is_object(it) || !rf_store_key(it, false, key, sizeof(key)))
			continue;
		if (!slim_already)
			strip(it);
		if (slice_entry(s, key, it, &v[k]) < 0)
			goto out;
		k++;
	}
	r = rf_slice_table_from(v, k, &t);
	k = 0; /* taken, or released */
	if (r < 0)
		goto out;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < t.n; i++) {
		const struct rf_slice_entry *o = rf_slice_table_find(&s->slices, t.v[i].key);
		same += o && rf_slice_entry_same(o, &t.v[i]);
	}
	bool unchanged = same == t.n && s->slices.n == t.n && s->listed[RF_KIND_SLICES];
	s->listed[RF_KIND_SLICES] = true;
	old = s->slices;
	s->slices = t;
	r = (int)t.n;
	struct rf_slice_view *view = NULL;
	if (!unchanged) {
		changed_locked(s, RF_KIND_SLICES, true);
		view = s->slice_view;
		s->slice_view = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	rf_slice_view_unref(view);
	rf_slice_table_release(&old); /* outside the lock: may free many */
out:
	for (size_t i = 0; i < k; i++)
		rf_slice_entry_release(&v[i]);
	free(v);
	for (size_t i = 0; i < n_staged; i++)
		if (staged[i].rec) /* made for a list that did not end here */
			rf_slice_entry_release(&staged[i]);
	free(staged);
	return r;
}

static int
replace(struct rf_store *s, enum rf_kind kind, json_t *items, bool slim_already)
{
	if (kind == RF_KIND_SLICES)
		return replace_slices(s, items, slim_already);
	json_t *m = json_object(), *it;
	char key[KEY_MAX];
	size_t i, same = 0;
	int kept = 0;
	bool layout = false; /* for Nodes: a change beyond their status */
	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	json_t *cur = json_incref(s->maps[kind]);
	pthread_mutex_unlock(&s->lock);
	json_array_foreach (items, i, it) {
		json_t *slim;
		if (slim_already && packed_kind(kind)) { /* from rf_store_slim() */
			const char *k = json_string_value(json_object_get(it, "key"));
			slim = json_incref(json_object_get(it, "packed"));
			if (!k || !slim ||
			    snprintf(key, sizeof(key), "%s", k) >= (int)sizeof(key)) {
				json_decref(slim);
				continue;
			}
		} else if (!json_is_object(it) ||
			   !rf_store_key(it, rf_kind_namespaced(kind), key, sizeof(key))) {
			continue;
		} else if (slim_already) {
			slim = json_incref(it);
		} else {
			strip(it);
			slim = kept_form(kind, slim_object(s, kind, it));
		}
		json_t *old = json_object_get(cur, key);
		if (slim && old && json_equal(old, slim)) {
			json_decref(slim);
			slim = json_incref(old);
			same++;
		} else if (slim && !(kind == RF_KIND_NODES && old && node_status_only(old, slim))) {
			layout = true;
		}
		if (!slim || json_object_set_new(m, key, slim) < 0) {
			json_decref(m);
			json_decref(cur);
			return -ENOMEM;
		}
	}
	kept = (int)json_object_size(m);
	bool unchanged = same == (size_t)kept && json_object_size(cur) == (size_t)kept;
	pthread_mutex_lock(&s->lock);
	unchanged = unchanged && s->listed[kind]; /* the first list is news even when empty */
	s->listed[kind] = true;
	json_t *old = s->maps[kind], *arr = rf_kept_array_drop(&s->arrays[kind]);
	s->maps[kind] = m;
	if (!unchanged || old != cur)
		changed_locked(s, kind, layout || json_object_size(cur) != (size_t)kept);
	pthread_mutex_unlock(&s->lock);
	json_decref(cur);
	json_decref(arr);
	json_decref(old);        /* outside the lock: may free many objects */
	prune_interner(s, kind); /* values only the old objects used */
	return kept;
}

/* rf_store_apply() for a ResourceSlice named key. */
static int
apply_slice(struct rf_store *s, enum rf_watch_type type, json_t *obj, const char *key)
{
	struct rf_slice_entry e = { 0 }, old = { 0 };
	int changed = 0;
	if (type != RF_WATCH_DELETED && slice_entry(s, key, obj, &e) < 0)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	const struct rf_slice_entry *cur = rf_slice_table_find(&s->slices, key);
	if (type == RF_WATCH_DELETED) {
		changed = rf_slice_table_take(&s->slices, key, &old);
	} else if (cur && rf_slice_entry_same(cur, &e)) {
		/* nothing railfit reads changed */
	} else if (rf_slice_table_put(&s->slices, &e, &old) < 0) {
		changed = -ENOMEM;
	} else {
		changed = 1;
	}
	struct rf_slice_view *view = NULL;
	if (changed > 0) {
		changed_locked(s, RF_KIND_SLICES, true);
		view = s->slice_view;
		s->slice_view = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	rf_slice_view_unref(view);
	rf_slice_entry_release(&old);
	rf_slice_entry_release(&e);
	return changed;
}

int
rf_store_apply(struct rf_store *s, enum rf_kind kind, enum rf_watch_type type, json_t *obj)
{
	char key[KEY_MAX];
	json_t *old = NULL;
	int changed = 0;
	if (type != RF_WATCH_ADDED && type != RF_WATCH_MODIFIED && type != RF_WATCH_DELETED)
		return 0;
	json_t *slim = NULL;
	if (!rf_store_key(obj, rf_kind_namespaced(kind), key, sizeof(key)))
		return -EINVAL;
	if (type != RF_WATCH_DELETED)
		strip(obj);
	if (kind == RF_KIND_SLICES)
		return apply_slice(s, type, obj, key);
	if (type != RF_WATCH_DELETED) {
		if (!(slim = kept_form(kind, slim_object(s, kind, obj))))
			return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	json_t *m = s->maps[kind], *arr = NULL;
	old = json_incref(json_object_get(m, key));
	if (type == RF_WATCH_DELETED) {
		changed = old ? (json_object_del(m, key) == 0) : 0;
	} else if (old && json_equal(old, slim)) {
		/* nothing railfit reads changed (a node's heartbeat, a pod's container status):
		 * keep the cached object, build nothing */
		json_decref(slim);
	} else if (json_object_set_new(m, key, slim) < 0) {
		pthread_mutex_unlock(&s->lock);
		json_decref(old);
		return -ENOMEM;
	} else {
		changed = 1;
	}
	if (changed) {
		/* (the map holds slim: the pointer stays valid under the lock) */
		arr = rf_kept_array_follow(&s->arrays[kind], old,
					   type == RF_WATCH_DELETED ? NULL : slim);
		changed_locked(
			s, kind,
			!(kind == RF_KIND_NODES && old && slim && node_status_only(old, slim)));
	}
	pthread_mutex_unlock(&s->lock);
	json_decref(arr);
	/* a claim that just got its allocation: tell the owner (prediction bookkeeping) */
	if (kind == RF_KIND_CLAIMS && type != RF_WATCH_DELETED && changed &&
	    s->opts.on_claim_allocated &&
	    json_is_object(json_object_get(json_object_get(obj, "status"), "allocation"))) {
		json_t *was = old ? rf_snapshot_expand(old, NULL) : NULL;
		if (!json_is_object(json_object_get(json_object_get(was, "status"), "allocation")))
			s->opts.on_claim_allocated(obj, s->opts.userdata);
		json_decref(was);
	}
	json_decref(old);
	return changed;
}

int64_t
rf_store_assume(struct rf_store *s, const char *ns, const char *name, const char *uid,
		const char *node, int64_t assume_ttl_ms)
{
	char key[KEY_MAX];
	if (snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	int64_t seq = s->seq;
	if (assume_ttl_ms <= 0)
		goto out;
	struct assumed *a = NULL;
	for (size_t i = 0; i < s->n_assumed; i++)
		if (!strcmp(s->assumed[i].key, key))
			a = &s->assumed[i];
	if (a) {
		assumed_free(a);
	} else {
		if (rf_grow(&s->assumed, &s->cap_assumed, s->n_assumed + 1, sizeof(*s->assumed)) <
		    0) {
			seq = -ENOMEM;
			goto out;
		}
		a = &s->assumed[s->n_assumed++];
		memset(a, 0, sizeof(*a));
	}
	a->key = strdup(key);
	a->uid = strdup(uid ? uid : "");
	a->node = strdup(node);
	a->expires = rf_kube_now() + (double)assume_ttl_ms / 1000.0;
	if (!a->key || !a->uid || !a->node) {
		assumed_drop(s, (size_t)(a - s->assumed));
		seq = -ENOMEM;
		goto out;
	}
	changed_locked(s, RF_KIND_PODS, false);
	seq = s->seq;
	s->urgent = true;
out:
	pthread_mutex_unlock(&s->lock);
	return seq;
}

void
rf_store_defer_until_listed(struct rf_store *s)
{
	pthread_mutex_lock(&s->lock);
	s->defer_first = true;
	pthread_mutex_unlock(&s->lock);
}

void
rf_store_end_first_sync(struct rf_store *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->defer_first) {
		s->defer_first = false;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

void
rf_store_publish_soon(struct rf_store *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->seq != s->built_seq) {
		s->urgent = true;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

int64_t
rf_store_changes(struct rf_store *s)
{
	pthread_mutex_lock(&s->lock);
	int64_t seq = s->seq;
	pthread_mutex_unlock(&s->lock);
	return seq;
}

bool
rf_store_wait_published(struct rf_store *s, int64_t seq, long timeout_ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	while (s->built_seq < seq && !s->stop)
		if (pthread_cond_timedwait(&s->published, &s->lock, &ts) == ETIMEDOUT)
			break;
	bool ok = s->built_seq >= seq;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

int
rf_store_set_dra_version(struct rf_store *s, const char *git_version, enum rf_dra_version v,
			 int patch, bool newer)
{
	int r = 0;
	pthread_mutex_lock(&s->lock);
	if (s->cfgs[0].kube.dra_version != RF_DRA_AUTO)
		goto out; /* configured: the server's version does not matter */
	size_t i = 1;
	for (; i < s->n_cfgs; i++)
		if (s->cfgs[i].kube.dra_version == v && s->cfgs[i].kube.dra_patch == patch &&
		    strcmp(s->cfgs[i].kube.dra_server_version, git_version) == 0)
			break;
	if (i == s->n_cfgs) {
		if (i == STORE_MAX_RULES) {
			r = -ENOSPC; /* a server that keeps changing versions: keep the last rules
				      */
			goto out;
		}
		if ((r = rf_config_copy(&s->cfgs[0], &s->cfgs[i])) < 0)
			goto out;
		s->n_cfgs++;
		s->cfgs[i].kube.dra_version = v;
		s->cfgs[i].kube.dra_patch = patch;
		snprintf(s->cfgs[i].kube.dra_server_version,
			 sizeof(s->cfgs[i].kube.dra_server_version), "%s", git_version);
		s->cfgs[i].kube.dra_server_newer = newer;
	}
	if (s->cur_cfg != i) {
		s->cur_cfg = i;
		s->seq++;
		pthread_cond_signal(&s->wake);
	}
out:
	pthread_mutex_unlock(&s->lock);
	return r;
}

const struct rf_config *
rf_store_config(const struct rf_store *s)
{
	return &s->cfgs[0];
}

void
rf_store_stats(struct rf_store *s, struct rf_store_stats *ret)
{
	pthread_mutex_lock(&s->lock);
	*ret = s->stats;
	for (int k = 0; k < RF_KIND_COUNT; k++)
		ret->objects[k] = k == RF_KIND_SLICES ? s->slices.n : json_object_size(s->maps[k]);
	ret->assumed = s->n_assumed;
	pthread_mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------------------------------------------
 * Publisher
 */

/* A copy of pod with spec.nodeName = node; the shared children are not modified. */
static json_t *
bound_copy(json_t *pod, const char *node)
{
	json_t *copy = json_copy(pod);
	json_t *spec = json_object_get(pod, "spec");
	spec = json_is_object(spec) ? json_copy(spec) : json_object();
	if (!copy || !spec || json_object_set_new(spec, "nodeName", json_string(node)) < 0 ||
	    json_object_set_new(copy, "spec", spec) < 0) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

/* Under the lock: drop expired or settled placements; the rest become substitutes in *ret_subst
 * (key -> bound copy), NULL when there are none. */
static int
resolve_assumed(struct rf_store *s, double now, json_t **ret_subst)
{
	json_t *subst = NULL;
	for (size_t i = s->n_assumed; i-- > 0;) {
		struct assumed *a = &s->assumed[i];
		json_t *pod = json_object_get(s->maps[RF_KIND_PODS], a->key);
		if (now >= a->expires) {
			rf_v(2, "assumed placement expired unconfirmed", "pod", a->key, "node",
			     a->node);
			assumed_drop(s, i);
			continue;
		}
		if (!pod)
			continue; /* not seen yet: keep until it shows up or expires */
		json_t *obj = rf_snapshot_expand(pod, NULL);
		if (!obj)
			goto oom;
		const char *uid =
			json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
		const char *nn = json_string_value(
			json_object_get(json_object_get(obj, "spec"), "nodeName"));
		if ((a->uid[0] && uid && strcmp(uid, a->uid) != 0) || (nn && *nn)) {
			/* bound according to the watch (confirmed, or superseded), or another pod
			 */
			rf_v(2, "assumed placement settled by the watch", "pod", a->key, "node",
			     nn ? nn : "");
			assumed_drop(s, i);
			json_decref(obj);
			continue;
		}
		if (a->base != pod) {
			json_t *copy = kept_form(RF_KIND_PODS, bound_copy(obj, a->node));
			json_decref(obj);
			if (!copy)
				goto oom;
			json_decref(a->copy);
			json_decref(a->base);
			a->copy = copy;
			a->base = json_incref(pod);
		} else {
			json_decref(obj);
		}
		if (!subst && !(subst = json_object()))
			goto oom;
		if (json_object_set(subst, a->key, a->copy) < 0)
			goto oom;
	}
	*ret_subst = subst;
	return 0;
oom:
	json_decref(subst);
	return -ENOMEM;
}

static json_t **
slot(struct rf_cluster_objects *o, enum rf_kind k)
{
	switch (k) {
	case RF_KIND_NODES:
		return &o->nodes;
	case RF_KIND_PODS:
		return &o->pods;
	case RF_KIND_SLICES:
		return &o->slices;
	case RF_KIND_CLAIMS:
		return &o->claims;
	case RF_KIND_TAINT_RULES:
		return &o->taint_rules;
	default:
		return &o->classes;
	}
}

/* view: the slices' view the objects borrow their records from (snapshot()). */
static void
objects_release(struct rf_cluster_objects *o, struct rf_slice_view *view)
{
	rf_slice_view_unref(view);
	json_decref(o->nodes);
	json_decref(o->pods);
	json_decref(o->slices);
	json_decref(o->claims);
	json_decref(o->classes);
	json_decref(o->templates);
	json_decref(o->taint_rules);
	memset(o, 0, sizeof(*o));
}

/* *o the same objects as from (references taken), with view's reference. */
static void
objects_hold(struct rf_cluster_objects *o, const struct rf_cluster_objects *from,
	     struct rf_slice_view *view)
{
	*o = *from;
	json_incref(o->nodes);
	json_incref(o->pods);
	json_incref(o->slices);
	json_incref(o->claims);
	json_incref(o->classes);
	json_incref(o->templates);
	json_incref(o->taint_rules);
	rf_slice_view_ref(view);
}

/* Under the lock: the pods with the assumed placements in subst instead of theirs. */
static json_t *
pods_assumed(const struct rf_store *s, const json_t *subst)
{
	json_t *arr = json_array(), *v;
	const char *key;
	if (!arr)
		return NULL;
	json_object_foreach (s->maps[RF_KIND_PODS], key, v) {
		json_t *sub = json_object_get(subst, key);
		if (json_array_append(arr, sub ? sub : v) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Under the lock: arrays of the current objects, and in *ret_view the slices' view the
 * objects borrow their records from (a reference, for objects_release). The arrays and the
 * view are the ones the last build got where nothing changed since. */
static int
snapshot(struct rf_store *s, double now, struct rf_cluster_objects *ret,
	 struct rf_slice_view **ret_view)
{
	struct rf_cluster_objects o = { 0 };
	json_t *subst = NULL;
	*ret_view = NULL;
	if (resolve_assumed(s, now, &subst) < 0)
		return -ENOMEM;
	if (!s->slice_view && !(s->slice_view = rf_slice_view_new(&s->slices)))
		goto oom;
	*ret_view = rf_slice_view_ref(s->slice_view);
	o.slice_recs = s->slice_view->recs;
	o.n_slice_recs = s->slice_view->n;
	/* one build at a time: the publisher's (a compaction's nested ones included) */
	o.lend_records = true;
	o.arrays_frozen = true; /* rf_kept_array copies an array a build holds */
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		json_t *arr = k == RF_KIND_SLICES ? json_incref(s->slice_view->blobs)
			      : k == RF_KIND_PODS && subst
				      ? pods_assumed(s, subst)
				      : rf_kept_array_hand(&s->arrays[k], s->maps[k]);
		*slot(&o, k) = arr;
		if (!arr)
			goto oom;
	}
	json_decref(subst);
	o.expand = rf_snapshot_expand;
	*ret = o;
	return 0;
oom:
	json_decref(subst);
	objects_release(&o, *ret_view);
	*ret_view = NULL;
	return -ENOMEM;
}

static const struct rf_config *
build_config(const struct rf_store *s)
{
	return &s->cfgs[s->cur_cfg];
}

#define TRIM_INTERVAL 30.0 /* seconds */
/* seconds of build the budget keeps for the events after a compaction (~25 label events) */
#define COMPACTION_RESERVE 0.2
/* the first compaction's estimate: ~0.3 s of CPU at 5,000 nodes */
#define COMPACTION_CPU_GUESS 0.3

/* After failed builds, the spacing doubles with each one, up to a second: an error that
 * repeats (no memory) is not tried, and logged, a hundred times a second. */
static double
backoff(const struct rf_store *s)
{
	double d = s->min_interval;
	for (unsigned i = 0; i < s->failures && d < 1.0; i++)
		d *= 2;
	return d < 1.0 ? d : 1.0;
}

static void
timed_wait(struct rf_store *s, double until)
{
	if (isinf(until)) {
		pthread_cond_wait(&s->wake, &s->lock);
		return;
	}
	struct timespec ts;
	double whole = floor(until);
	ts.tv_sec = (time_t)whole;
	ts.tv_nsec = (long)((until - whole) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	pthread_cond_timedwait(&s->wake, &s->lock, &ts);
}

/* When the build of a waiting change may start: builds spaced by min_interval (longer after
 * failures), and at most a third of a core for rebuilding over time, however big the cluster
 * (build_budget.h); at once when urgent. */
static double
build_ready_at(const struct rf_store *s, double now)
{
	if (s->urgent)
		return now;
	double ready_at = s->last_build_end + backoff(s),
	       budget_at = rf_build_budget_ready_at(&s->budget, now);
	return budget_at > ready_at ? budget_at : ready_at;
}

/* Under the lock: a change waits (or the chain moved onto a compaction) and may be built now. */
static bool
build_due(const struct rf_store *s, double now)
{
	return (s->seq != s->built_seq || s->rebase) && !s->defer_first &&
	       now >= build_ready_at(s, now);
}

/* Under the lock: a generation was published (layout: how it was built; dur and lag in seconds,
 * lag 0 when not known). */
static void
published(struct rf_store *s, const char *layout, double dur, double lag)
{
	char l[64];
	if (rf_metric_labels(l, sizeof(l), RF_METRIC_CACHE_BUILDS_TOTAL, layout, NULL) >= 0)
		rf_metric_add(RF_METRIC_CACHE_BUILDS_TOTAL, l, 1);
	if (rf_log_verbosity() >= 3) {
		char ms[32], lag_ms[32];
		snprintf(ms, sizeof(ms), "%.3f", dur * 1000.0);
		snprintf(lag_ms, sizeof(lag_ms), "%.3f", lag * 1000.0);
		rf_v(3, "published a cache generation", "ms", ms, "lagMs", lag_ms, "layout",
		     layout);
	}
}

/* Called and returns with the lock held; drops it while building: the current objects, as a
 * generation following the last one. */
static void
build_and_publish(struct rf_store *s)
{
	struct rf_cluster_objects objs = { 0 }; /* (released even when snapshot() failed) */
	double t0 = rf_kube_now();
	int64_t seq = s->seq;
	double since = s->pending_since;
	bool same_layout = !s->layout_dirty, rebase = s->rebase;
	s->urgent = false;
	s->rebase = false;
	s->layout_dirty = false;
	struct rf_slice_view *view = NULL;
	int r = snapshot(s, t0, &objs, &view);
	const struct rf_config *cfg = build_config(s);
	pthread_mutex_unlock(&s->lock);

	/* the publisher builds the chain: s->last is read and replaced on this thread only (also
	 * from within a compaction's check, compaction_check()) */
	struct rf_cluster *gen = NULL;
	bool patched = false; /* the layout patched where it changed (alloc/model/model-patch.c) */
	if (r == 0)
		r = rf_cluster_build_next(s->last, &objs, cfg, s->cel, same_layout, &gen);
	if (r == 0)
		patched = !same_layout && rf_cluster_layout_patched(gen);
	if (r == 0) { /* (swapped: the ones released are the older generation's) */
		struct rf_cluster_objects o = s->last_objs;
		struct rf_slice_view *v = s->last_view;
		s->last_objs = objs;
		s->last_view = view;
		s->last_seq = seq;
		objs = o;
		view = v;
	}
	objects_release(&objs, view);
	if (r == 0) {
		rf_cluster_unref(s->last);
		s->last = rf_cluster_ref(gen);
		rf_cache_publish(s->cache, gen); /* drops the old generation outside any lock */
	} else {
		rf_errorf("cannot build a cache generation: %s", strerror(-r));
	}
	double t1 = rf_kube_now();

	pthread_mutex_lock(&s->lock);
	s->last_build_end = t1;
	rf_build_budget_spend(&s->budget, t1 - t0, t1);
	if (r == 0) {
		s->built_seq = seq;
		s->stats.builds++;
		s->stats.incremental += same_layout && s->stats.builds > 1;
		s->stats.patched += patched;
		s->stats.last_build_ms = (t1 - t0) * 1000.0;
		s->full_builds += !same_layout && !patched;
		/* a replaced layout (or a while of replaced generations) left tens of megabytes of
		 * freed heap: given back when the publisher is idle (trim_when_idle()) */
		if ((!same_layout && !patched) || t1 - s->last_trim > TRIM_INTERVAL)
			s->trim_owed = true;
		/* changes that came while building wait for the next one */
		s->pending_since = s->seq != seq ? t0 : 0;
		rf_cache_set_pending(s->cache, s->pending_since);
		pthread_cond_broadcast(&s->published);
		published(s,
			  same_layout ? "reused"
			  : patched   ? "patched"
				      : "rebuilt",
			  t1 - t0, since ? t1 - since : 0.0);
		s->no_compact = NULL; /* (its address may come back with another generation) */
	} else {
		s->layout_dirty = true; /* the next try starts from the last good generation */
		s->rebase = rebase;
	}
	s->failures = r == 0 ? 0 : s->failures + 1;
}

/* A compaction (store.h): the objects of the last generation built again in full, layout and
 * claim table, on the publisher thread. At each of its checks (rf_cluster_objects.stop) a change
 * whose build is due is built on the chain and published as usual, from within the check, and
 * the compaction goes on: the chain has one builder at a time (the full build reads the chain's
 * claim table, which the patches write; it keeps no pointer into it across a check), and all of
 * it is allocated on one thread (on a compactor thread of its own, in another malloc arena, it
 * held 13-56 MB more at the peak of fleet_bench --churn). */
struct compaction {
	struct rf_store *s;
	struct rf_cluster *from;          /* the chain's generation it relinks from (held) */
	struct rf_cluster_objects objs;   /* the objects of from (held) */
	struct rf_slice_view *view;       /* the slices' view objs borrows records from (held) */
	int64_t seq;                      /* the change count they are as of */
	uint64_t full_builds;             /* s->full_builds when it began */
	double stretch_wall, stretch_cpu; /* when its current stretch began */
	double ran;                       /* wall seconds of its own stretches */
	double longest; /* its longest stretch: what a change's build may have waited for */
	double cpu;     /* thread CPU of its own stretches: what the build budget is charged */
	unsigned turns; /* changes built from within it */
};

/* This thread's CPU seconds. */
static double
thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
stretch_begin(struct compaction *k)
{
	k->stretch_wall = rf_kube_now();
	k->stretch_cpu = thread_cpu();
}

static void
stretch_end(struct compaction *k)
{
	double run = rf_kube_now() - k->stretch_wall;
	k->ran += run;
	k->longest = run > k->longest ? run : k->longest;
	/* (not wall time: that counts the request threads that preempted it, 1.4 s for 0.58 s of
	 * CPU in a churn run) */
	k->cpu += thread_cpu() - k->stretch_cpu;
}

/* Under the lock: assumed placements that expired are a change (the next build drops them);
 * *wake_at is brought forward to the next expiry. */
static void
expire_assumed(struct rf_store *s, double now, double *wake_at)
{
	bool expired = false;
	for (size_t i = 0; i < s->n_assumed; i++) {
		if (s->assumed[i].expires <= now)
			expired = true;
		else if (s->assumed[i].expires < *wake_at)
			*wake_at = s->assumed[i].expires;
	}
	if (expired)
		s->seq++;
}

/* The compaction's stop hook, asked between the steps of its build: a change whose build is due
 * is built and published now, then the compaction goes on; true only at shutdown. */
static bool
compaction_check(void *userdata)
{
	struct compaction *k = userdata;
	struct rf_store *s = k->s;
	stretch_end(k);
	pthread_mutex_lock(&s->lock);
	double now = rf_kube_now(), wake_at = INFINITY;
	expire_assumed(s, now, &wake_at);
	if (!s->stop && build_due(s, now)) {
		build_and_publish(s);
		k->turns++;
		s->stats.built_in_compaction++;
	}
	/* a change built in full started a new chain: the compaction's would be older, and the
	 * build catching it up a full one again */
	bool stop = s->stop || s->full_builds != k->full_builds;
	pthread_mutex_unlock(&s->lock);
	stretch_begin(k);
	return stop;
}

/* Under the lock, on the publisher (returns with it held): the chain's worn layout compacted.
 * Its generation becomes the chain's start: published as it is when nothing changed since its
 * objects, else the next build (at once) patches it with what did. */
static void
compact(struct rf_store *s)
{
	/* the very objects of the last generation: it carries that one's remembered verdicts (a
	 * new snapshot would differ from them whenever a change waits) */
	struct compaction k = {
		.s = s, .view = s->last_view, .seq = s->last_seq, .full_builds = s->full_builds
	};
	objects_hold(&k.objs, &s->last_objs, s->last_view);
	const struct rf_config *cfg = build_config(s);
	k.from = rf_cluster_ref(s->last);
	k.objs.full_layout = true;
	k.objs.stop = compaction_check;
	k.objs.stop_userdata = &k;
	pthread_mutex_unlock(&s->lock);

	struct rf_cluster *gen = NULL;
	stretch_begin(&k);
	int r = rf_cluster_build_next(k.from, &k.objs, cfg, s->cel, false, &gen);
	stretch_end(&k);

	pthread_mutex_lock(&s->lock);
	double now = rf_kube_now();
	/* its time from what the builds of events left spare: none of them waits for it */
	rf_build_budget_spend_spare(&s->budget, k.cpu, now);
	if (r == 0)
		s->compaction_cpu = k.cpu;
	s->last_build_end = now;
	struct rf_cluster *old = NULL;
	bool use = r == 0 && !s->stop && build_config(s) == cfg && s->full_builds == k.full_builds;
	bool as_is = use && s->seq == k.seq && !s->rebase;
	if (use) {
		old = s->last;
		s->last = rf_cluster_ref(gen);
		/* its objects are last's now (the older ones released with k's below) */
		struct rf_cluster_objects o = s->last_objs;
		struct rf_slice_view *v = s->last_view;
		s->last_objs = k.objs;
		s->last_objs.full_layout = false;
		s->last_objs.stop = NULL;
		s->last_objs.stop_userdata = NULL;
		s->last_view = k.view;
		s->last_seq = k.seq;
		k.objs = o;
		k.view = v;
		s->stats.compacted++;
		s->trim_owed = true; /* the old chain's layouts go */
		if (!as_is) {
			s->stats.caught_up++;
			s->rebase = true; /* the changes since its objects, built on it at once */
			s->layout_dirty = true;
			s->urgent = true;
		}
	} else if (r == -ECANCELED || r == 0) {
		rf_v(3, "dropped the compaction of the layout", "why",
		     s->stop                            ? "stopping"
		     : r == 0 && build_config(s) != cfg ? "new DRA rules"
							: "a change was built in full meanwhile");
	} else {
		rf_errorf("cannot compact the cache's layout: %s", strerror(-r));
		s->no_compact = s->last; /* not again until another generation is built */
	}
	pthread_mutex_unlock(&s->lock);
	objects_release(&k.objs, k.view);
	rf_cluster_unref(k.from);
	rf_cluster_unref(old);
	if (as_is)
		rf_cache_publish(s->cache, gen); /* (steals the build's reference) */
	else
		rf_cluster_unref(gen); /* (s->last holds it when used) */
	pthread_mutex_lock(&s->lock);
	if (use && rf_log_verbosity() >= 3) {
		char ms[32], turns[16], longest[32];
		snprintf(ms, sizeof(ms), "%.3f", k.ran * 1000.0);
		snprintf(turns, sizeof(turns), "%u", k.turns);
		snprintf(longest, sizeof(longest), "%.3f", k.longest * 1000.0);
		rf_v(3, "compacted the layout", "ms", ms, "turnsGiven", turns, "longestTurnMs",
		     longest, "caughtUp", as_is ? "false" : "true");
	}
	if (as_is) {
		s->stats.builds++;
		s->stats.last_build_ms = k.ran * 1000.0;
		pthread_cond_broadcast(&s->published);
		published(s, "compacted", k.ran, 0.0);
	}
}

/* Under the lock, with nothing to build now: the freed heap owed back is given back once
 * nothing was built for trim_idle (store.h: what is given back, the next builds fault in
 * again); true when it was, else *wake_at is brought forward to when it may be. */
static bool
trim_when_idle(struct rf_store *s, double now, double *wake_at)
{
	if (!s->trim_owed || s->seq != s->built_seq || s->rebase)
		return false;
	double at = s->last_build_end + s->trim_idle;
	if (now < at) {
		if (at < *wake_at)
			*wake_at = at;
		return false;
	}
	s->trim_owed = false;
	pthread_mutex_unlock(&s->lock);
	rf_heap_trim();
	double t1 = rf_kube_now();
	pthread_mutex_lock(&s->lock);
	s->last_trim = t1;
	s->stats.trims++;
	if (rf_log_verbosity() >= 3) {
		char ms[32];
		snprintf(ms, sizeof(ms), "%.3f", (t1 - now) * 1000.0);
		rf_v(3, "gave the freed heap back", "ms", ms);
	}
	return true;
}

static void *
publisher(void *arg)
{
	struct rf_store *s = arg;
	bool lowered = false;
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		double now = rf_kube_now(), wake_at = INFINITY;
		expire_assumed(s, now, &wake_at);
		if (s->defer_first) {
			bool all = true;
			for (int k = 0; k < RF_KIND_COUNT; k++)
				all = all && s->listed[k];
			if (all) {
				s->defer_first = false;
				s->urgent = true;
			}
		}
		if ((s->seq != s->built_seq || s->rebase) && !s->defer_first) {
			double ready_at = build_ready_at(s, now);
			if (now >= ready_at) {
				/* under CPU contention the request threads go first: rebuilding can
				 * wait a little; not before the cache is first ready, though (no
				 * request is answered until the start-up's builds are out) */
				if (!lowered && s->cache &&
				    rf_cache_ready(s->cache, LLONG_MAX, NULL)) {
					lowered = true;
					if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10) != 0)
						rf_v(2, "cannot lower the priority of the cache "
							"publisher");
				}
				build_and_publish(s);
				continue;
			}
			if (ready_at < wake_at)
				wake_at = ready_at;
		}
		/* nothing to build now: a worn chain is compacted meanwhile (s->last is replaced
		 * by this thread only) */
		if (s->last && s->last != s->no_compact && !s->defer_first &&
		    rf_cluster_layout_worn(s->last)) {
			/* when the bucket holds what it will cost and a reserve for the events
			 * after it: charged to an empty bucket, every build after the move waited
			 * twice its own time (a third of a core), 0.2-0.5 s for the rest of a churn
			 * phase. Halfway to the bound, at once: builds of events that keep the
			 * bucket low (a third of a core) would otherwise put it off until an event
			 * meets the bound and waits for a full build */
			double budget_at =
				rf_cluster_layout_halfway(s->last)
					? now
					: rf_build_budget_ready_for(
						  &s->budget,
						  s->compaction_cpu + COMPACTION_RESERVE, now);
			if (now >= budget_at) {
				compact(s);
				continue;
			}
			if (budget_at < wake_at)
				wake_at = budget_at;
		}
		if (trim_when_idle(s, now, &wake_at))
			continue;
		timed_wait(s, wake_at);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int
rf_store_new(const struct rf_store_options *o, struct rf_store **ret)
{
	struct rf_store *s = calloc(1, sizeof(*s));
	int r = -ENOMEM;
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->published, &ca);
	pthread_condattr_destroy(&ca);
	s->opts = *o;
	s->cache = o->cache;
	s->cel = o->cel;
	s->min_interval =
		(double)(o->min_interval_ms > 0 ? o->min_interval_ms : RF_STORE_MIN_INTERVAL_MS) /
		1000.0;
	s->trim_idle =
		(double)(o->trim_idle_ms > 0 ? o->trim_idle_ms : RF_STORE_TRIM_IDLE_MS) / 1000.0;
	rf_build_budget_init(&s->budget, RF_BUILD_SHARE, RF_BUILD_BURST, rf_kube_now());
	s->compaction_cpu = COMPACTION_CPU_GUESS;
	for (int k = 0; k < RF_KIND_COUNT; k++)
		pthread_mutex_init(&s->interns[k].lock, NULL);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		if (k == RF_KIND_SLICES || packed_kind(k))
			continue; /* their slim copies live only until they are parsed and packed */
		if (!(s->interns[k].in = rf_intern_new()))
			goto fail;
		s->interns[k].prune_at = 4096;
	}
	for (int k = 0; k < RF_KIND_COUNT; k++)
		if (!(s->maps[k] = json_object()))
			goto fail;
	if (rf_config_copy(o->cfg, &s->cfgs[0]) < 0)
		goto fail;
	s->n_cfgs = 1;
	/* only what railfit reads: /debug/snapshot shows no more than that (issue 12) */
	s->slim.topology_annotation = s->cfgs[0].devices.topology_annotation;
	s->slim.pod_labels = &s->cfgs[0].groups.labels;
	if ((r = -pthread_create(&s->thread, NULL, publisher, s)) < 0)
		goto fail;
	s->thread_started = true;
	*ret = s;
	return 0;
fail:
	rf_store_free(s);
	return r;
}

void
rf_store_free(struct rf_store *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->wake);
		pthread_cond_broadcast(&s->published);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		rf_cache_publish(s->cache, NULL); /* generations use cfgs[] */
	}
	rf_cluster_unref(s->last);
	objects_release(&s->last_objs, s->last_view);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		json_decref(rf_kept_array_drop(&s->arrays[k]));
		json_decref(s->maps[k]);
	}
	rf_slice_view_unref(s->slice_view);
	rf_slice_table_release(&s->slices);
	for (size_t i = 0; i < s->n_staged; i++)
		rf_slice_entry_release(&s->staged[i]);
	free(s->staged);
	for (size_t i = 0; i < s->n_assumed; i++)
		assumed_free(&s->assumed[i]);
	free(s->assumed);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		rf_intern_free(s->interns[k].in);
		pthread_mutex_destroy(&s->interns[k].lock);
	}
	for (size_t i = 0; i < s->n_cfgs; i++)
		rf_config_release(&s->cfgs[i]);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->published);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
