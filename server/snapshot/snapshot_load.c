/* Reading snapshots into objects by kind (see snapshot_load.h). Loading runs on the caller's
 * thread plus at most one helper thread that parses half of the items; each thread has its own
 * interner. No network and no decision logic: the fuzz target links this library alone. */
/* madvise(MADV_DONTNEED): glibc ignores posix_madvise()'s DONTNEED */
#define _DEFAULT_SOURCE
#include "server/snapshot/snapshot_load.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/model/slice.h"
#include "config/grow.h"
#include "server/http/heap.h"
#include "server/snapshot/snapshot.h"

#define MAX_SNAPSHOT_BYTES ((size_t)2 << 30)

const struct rf_snapshot_kind rf_snapshot_kinds[RF_SNAPSHOT_N_KINDS] = {
	{ "Node", "NodeList", "v1", offsetof(struct rf_cluster_objects, nodes) },
	{ "Pod", "PodList", "v1", offsetof(struct rf_cluster_objects, pods) },
	{ "ResourceSlice", "ResourceSliceList", "resource.k8s.io/v1",
	  offsetof(struct rf_cluster_objects, slices) },
	{ "ResourceClaim", "ResourceClaimList", "resource.k8s.io/v1",
	  offsetof(struct rf_cluster_objects, claims) },
	{ "DeviceClass", "DeviceClassList", "resource.k8s.io/v1",
	  offsetof(struct rf_cluster_objects, classes) },
	{ "ResourceClaimTemplate", "ResourceClaimTemplateList", "resource.k8s.io/v1",
	  offsetof(struct rf_cluster_objects, templates) },
	{ "DeviceTaintRule", "DeviceTaintRuleList", "resource.k8s.io/v1",
	  offsetof(struct rf_cluster_objects, taint_rules) },
};

json_t **
rf_snapshot_slot(struct rf_cluster_objects *o, size_t i)
{
	return (json_t **)((char *)o + rf_snapshot_kinds[i].offset);
}

void
rf_cluster_objects_release(struct rf_cluster_objects *o)
{
	for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++) {
		json_decref(*rf_snapshot_slot(o, i));
		*rf_snapshot_slot(o, i) = NULL;
	}
	struct rf_slice **recs = (struct rf_slice **)o->slice_recs;
	for (size_t i = 0; i < o->n_slice_recs; i++)
		rf_slice_unref(recs[i]);
	free(recs);
	o->slice_recs = NULL;
	o->n_slice_recs = 0;
}

static const struct rf_slim_options all_annotations = { .all_node_annotations = true };

static int
slot_index(const char *kind)
{
	for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++)
		if (strcmp(kind, rf_snapshot_kinds[i].kind) == 0)
			return (int)i;
	return -1;
}

/* The slim kind of each slot (rf_snapshot_kinds[] and enum rf_slim_kind list the kinds in different
 * orders) */
static enum rf_slim_kind
slim_kind(size_t slot)
{
	return (enum rf_slim_kind)rf_slim_kind_of(rf_snapshot_kinds[slot].kind);
}

static int
add_item(struct rf_cluster_objects *o, const char *kind, json_t *item, size_t *skipped,
	 const struct rf_slim_options *opts, struct rf_intern *in)
{
	int i = slot_index(kind);
	if (i < 0) {
		(*skipped)++;
		return 0;
	}
	json_t *slim = rf_slim_object(slim_kind((size_t)i), item, opts, in);
	return !slim || json_array_append_new(*rf_snapshot_slot(o, (size_t)i), slim) < 0 ? -ENOMEM
											 : 0;
}

int
rf_snapshot_split(const json_t *doc, struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
		  size_t errlen)
{
	return rf_snapshot_split_opts(doc, NULL, ret, ret_skipped, err, errlen);
}

int
rf_snapshot_split_opts(const json_t *doc, const struct rf_slim_options *opts,
		       struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
		       size_t errlen)
{
	struct rf_cluster_objects o = { 0 };
	size_t skipped = 0;
	int r = -ENOMEM;
	struct rf_intern *in = rf_intern_new();

	if (!opts)
		opts = &all_annotations;
	if (!in)
		return -ENOMEM;

	if (!json_is_object(doc)) {
		snprintf(err, errlen, "expected a JSON object (a v1 List), got %s",
			 json_is_array(doc) ? "an array" : "a scalar");
		rf_intern_free(in);
		return -EINVAL;
	}
	for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++)
		if (!(*rf_snapshot_slot(&o, i) = json_array()))
			goto fail;
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const json_t *items = json_object_get(doc, "items");
	if (kind && strcmp(kind, "List") != 0 && !json_is_array(items)) {
		/* a single object */
		if ((r = add_item(&o, kind, (json_t *)doc, &skipped, opts, in)) < 0)
			goto fail;
	} else {
		if (!json_is_array(items)) {
			snprintf(err, errlen,
				 "expected \"items\": an array of objects (kubectl get "
				 "... -o json), got none");
			r = -EINVAL;
			goto fail;
		}
		/* a typed list (NodeList) gives its items' kind */
		const char *item_kind = NULL;
		for (size_t s = 0; kind && s < RF_SNAPSHOT_N_KINDS; s++)
			if (strcmp(kind, rf_snapshot_kinds[s].list_kind) == 0)
				item_kind = rf_snapshot_kinds[s].kind;
		for (size_t i = 0; i < json_array_size(items); i++) {
			json_t *it = json_array_get(items, i);
			const char *k = json_string_value(json_object_get(it, "kind"));
			if (!k)
				k = item_kind;
			if (!json_is_object(it) || !k) {
				snprintf(
					err, errlen,
					"items[%zu]: expected an object with a \"kind\" (Node, Pod, "
					"ResourceSlice, ResourceClaim, DeviceClass)",
					i);
				r = -EINVAL;
				goto fail;
			}
			if ((r = add_item(&o, k, it, &skipped, opts, in)) < 0)
				goto fail;
		}
	}
	*ret = o;
	if (ret_skipped)
		*ret_skipped = skipped;
	rf_intern_free(in);
	return 0;
fail:
	rf_cluster_objects_release(&o);
	rf_intern_free(in);
	return r;
}

/* ---- scanning ---- */

struct span {
	const char *p;
	size_t len;
};

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* Bytes that matter to scan_value() outside strings. */
static const unsigned char structural[256] = {
	['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1,
};

/* The end of the string whose opening quote is at p, or NULL. */
static const char *
string_end(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			return NULL;
		/* escaped when an odd number of backslashes precede it */
		size_t bs = 0;
		while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
			bs++;
		if (bs % 2 == 0)
			return q + 1;
		p = q + 1;
	}
	return NULL;
}

/* The end of the JSON value starting at p (not validated: json_loadb does that), or NULL. */
static const char *
scan_value(const char *p, const char *end)
{
	size_t depth = 0;
	if (p >= end)
		return NULL;
	if (*p == '"')
		return string_end(p, end);
	if (*p != '{' && *p != '[') {
		while (p < end && !strchr(",]} \n\r\t", *p))
			p++;
		return p;
	}
	while (p < end) {
		while (p < end && !structural[(unsigned char)*p])
			p++;
		if (p >= end)
			return NULL;
		switch (*p) {
		case '"':
			if (!(p = string_end(p, end)))
				return NULL;
			continue;
		case '{':
		case '[':
			depth++;
			break;
		default: /* '}' or ']' */
			if (--depth == 0)
				return p + 1;
			break;
		}
		p++;
	}
	return NULL;
}

struct fast_doc {
	struct span *items;
	size_t n_items, cap_items;
	char *list_kind; /* "kind" of the document, or NULL */
	bool mapped;     /* the text is a read-only file mapping: pages read may be dropped */
};

#define DROP_EVERY ((size_t)8 << 20)

/* For a mapped file: give back the pages wholly below p, from *dropped on, once there are
 * DROP_EVERY bytes of them. Read from the page cache again should they be touched (the text is
 * the same): the file never counts whole in the resident set, only what is being read. */
static void
drop_behind(const struct fast_doc *d, const char **dropped, const char *p)
{
	if (!d->mapped || p < *dropped + DROP_EVERY)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const char *from = (const char *)(((uintptr_t)*dropped + page - 1) & ~(page - 1));
	const char *to = (const char *)((uintptr_t)p & ~(page - 1));
	if (to > from)
		madvise((void *)from, (size_t)(to - from), MADV_DONTNEED);
	*dropped = p;
}

/* Find the items of a List without parsing them. @return 0, 1 (not the simple shape: take the
 * slow path) or -ENOMEM. */
static int
scan_doc(const char *buf, size_t len, struct fast_doc *d)
{
	const char *p = buf, *end = buf + len, *dropped = buf;
	bool have_items = false;
	const char *seen[64];
	size_t seen_len[64], n_seen = 0;

	p = skip_ws(p, end);
	if (p >= end || *p != '{')
		return 1;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return 1;
	for (;;) {
		if (p >= end || *p != '"')
			return 1;
		const char *k = p + 1, *ke = memchr(k, '"', (size_t)(end - k));
		if (!ke || memchr(k, '\\', (size_t)(ke - k)) || n_seen == 64)
			return 1;
		size_t klen = (size_t)(ke - k);
		for (size_t i = 0; i < n_seen; i++)
			if (seen_len[i] == klen && memcmp(seen[i], k, klen) == 0)
				return 1; /* a duplicate key: jansson says so */
		seen[n_seen] = k;
		seen_len[n_seen++] = klen;
		p = skip_ws(ke + 1, end);
		if (p >= end || *p != ':')
			return 1;
		p = skip_ws(p + 1, end);
		const char *ve;
		if (klen == 5 && memcmp(k, "items", 5) == 0) {
			/* its items one by one, without a scan of the whole array first */
			if (p >= end || *p != '[')
				return 1;
			have_items = true;
			const char *q = skip_ws(p + 1, end);
			if (q < end && *q != ']') {
				for (;;) {
					const char *ie = scan_value(q, end);
					if (!ie || *q != '{')
						return 1;
					if (rf_grow(&d->items, &d->cap_items, d->n_items + 1,
						    sizeof(*d->items)) < 0)
						return -ENOMEM;
					d->items[d->n_items++] =
						(struct span){ q, (size_t)(ie - q) };
					drop_behind(d, &dropped, ie);
					q = skip_ws(ie, end);
					if (q < end && *q == ',') {
						q = skip_ws(q + 1, end);
						continue;
					}
					break;
				}
			}
			if (q >= end || *q != ']')
				return 1;
			ve = q + 1;
		} else {
			if (!(ve = scan_value(p, end)))
				return 1;
			/* any other member must be valid JSON too; "kind" is kept */
			json_t *v = json_loadb(p, (size_t)(ve - p),
					       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
			if (!v)
				return 1;
			if (klen == 4 && memcmp(k, "kind", 4) == 0 && json_is_string(v)) {
				free(d->list_kind);
				if (!(d->list_kind = strdup(json_string_value(v)))) {
					json_decref(v);
					return -ENOMEM;
				}
			}
			json_decref(v);
		}
		p = skip_ws(ve, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		if (p >= end || *p != '}')
			return 1;
		break;
	}
	if (skip_ws(p + 1, end) != end || !have_items)
		return 1;
	return 0;
}

/* ---- what a server keeps (rf_snapshot_load_kept) ---- */

/* The element of slot's array a server that never rebuilds keeps for slim (taken): see
 * rf_snapshot_load_kept(). keep NULL keeps slim as it is. *ret_rec gets a ResourceSlice's
 * record. @return 0 or -ENOMEM (then nothing is kept). */
static int
keep_object(size_t slot, json_t *slim, const struct rf_config *keep, json_t **ret,
	    struct rf_slice **ret_rec)
{
	enum rf_slim_kind k = slim_kind(slot);
	*ret = NULL;
	*ret_rec = NULL;
	if (!keep || (k != RF_SLIM_SLICE && k != RF_SLIM_CLAIM && k != RF_SLIM_POD) ||
	    (k == RF_SLIM_CLAIM && rf_snapshot_claim_referenced(slim))) {
		*ret = slim;
		return 0;
	}
	if (k == RF_SLIM_SLICE && rf_slice_parse(slim, keep, ret_rec) < 0) {
		json_decref(slim);
		return -ENOMEM;
	}
	*ret = rf_snapshot_pack_object(slim);
	json_decref(slim);
	if (!*ret) {
		rf_slice_unref(*ret_rec);
		*ret_rec = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The slices' records, in the order of o->slices (recs: one per element, taken). */
static void
set_slice_recs(struct rf_cluster_objects *o, struct rf_slice **recs)
{
	o->n_slice_recs = json_array_size(o->slices);
	o->slice_recs = recs;
	o->expand = rf_snapshot_expand;
}

/* keep_object() for every element of o's arrays (the one-tree path). @return 0 or -ENOMEM. */
static int
keep_all(struct rf_cluster_objects *o, const struct rf_config *keep)
{
	size_t n = json_array_size(o->slices);
	struct rf_slice **recs = calloc(n ? n : 1, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	set_slice_recs(o, recs); /* released with o from here */
	for (size_t s = 0; s < RF_SNAPSHOT_N_KINDS; s++) {
		json_t *arr = *rf_snapshot_slot(o, s), *kept;
		for (size_t i = 0; i < json_array_size(arr); i++) {
			struct rf_slice *rec;
			if (keep_object(s, json_incref(json_array_get(arr, i)), keep, &kept, &rec) <
			    0)
				return -ENOMEM;
			if (rec)
				recs[i] = rec;
			if (json_array_set_new(arr, i, kept) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- the streaming loader ---- */

struct parse_job {
	const struct fast_doc *doc;
	const struct rf_slim_options *opts;
	const struct rf_config *keep; /* rf_snapshot_load_kept()'s, or NULL */
	const char *item_kind;        /* of a typed list */
	size_t from, to;
	json_t **out;          /* per item: what is kept of it, NULL when skipped */
	struct rf_slice **rec; /* per item: a ResourceSlice's record (keep) */
	signed char *slot;     /* per item: its slot, -1 when skipped */
	int r;                 /* 0, 1 (slow path) or -ENOMEM */
};

/* The slot of the item written at p[0..len) (an object, '{' first), read from its first
 * "kind" member without parsing it, else the list's item kind; -1 when not known that way or a
 * kind railfit does not keep (the item's tree decides). A duplicate "kind", or a key with an
 * escape that decodes to one, is refused by rf_slim_text() and left to jansson too. */
static int
text_slot(const char *p, size_t len, const char *item_kind)
{
	const char *end = p + len;
	p = skip_ws(p + 1, end);
	while (p < end && *p == '"') {
		const char *k = p + 1, *ke = string_end(p, end);
		if (!ke)
			return -1;
		size_t klen = (size_t)(ke - 1 - k);
		p = skip_ws(ke, end);
		if (p >= end || *p != ':')
			return -1;
		p = skip_ws(p + 1, end);
		const char *ve = scan_value(p, end);
		if (!ve)
			return -1;
		if (klen == 4 && memcmp(k, "kind", 4) == 0) {
			if (*p != '"' || memchr(p, '\\', (size_t)(ve - p)))
				return -1;
			size_t vlen = (size_t)(ve - p) - 2;
			for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++)
				if (strlen(rf_snapshot_kinds[i].kind) == vlen &&
				    memcmp(p + 1, rf_snapshot_kinds[i].kind, vlen) == 0)
					return (int)i;
			return -1;
		}
		p = skip_ws(ve, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
	}
	return item_kind ? slot_index(item_kind) : -1;
}

/* The slim copy of item i: from its text when rf_slim_text() takes it, else from its tree
 * (which also finds a kind the text did not give). @return 0, 1 (slow path) or -ENOMEM. */
static int
slim_item(struct parse_job *j, size_t i, struct rf_intern *in, int *ret_slot, json_t **ret)
{
	const struct span *sp = &j->doc->items[i];
	int s = text_slot(sp->p, sp->len, j->item_kind), r = -EINVAL;
	*ret = NULL;
	if (s >= 0)
		r = rf_slim_text(slim_kind((size_t)s), sp->p, sp->len, j->opts, in, ret);
	if (r == -ENOMEM)
		return -ENOMEM;
	if (r == 0) {
		*ret_slot = s;
		return 0;
	}
	json_t *it = json_loadb(sp->p, sp->len, JSON_REJECT_DUPLICATES, NULL);
	const char *k = json_string_value(json_object_get(it, "kind"));
	if (!k)
		k = j->item_kind;
	if (!json_is_object(it) || !k) {
		json_decref(it);
		return 1; /* the slow path has the message */
	}
	s = slot_index(k);
	*ret_slot = s;
	r = s >= 0 && !(*ret = rf_slim_object(slim_kind((size_t)s), it, j->opts, in)) ? -ENOMEM : 0;
	json_decref(it);
	return r;
}

static void *
parse_items(void *arg)
{
	struct parse_job *j = arg;
	struct rf_intern *in = rf_intern_new();
	size_t prune_at = 4096;
	j->r = in ? 0 : -ENOMEM;
	const char *dropped = j->from < j->to ? j->doc->items[j->from].p : NULL;
	for (size_t i = j->from; i < j->to && j->r == 0; i++) {
		json_t *slim;
		int s;
		drop_behind(j->doc, &dropped, j->doc->items[i].p);
		if ((j->r = slim_item(j, i, in, &s, &slim)) != 0)
			break;
		j->slot[i] = (signed char)s;
		if (s >= 0 && keep_object((size_t)s, slim, j->keep, &j->out[i], &j->rec[i]) < 0)
			j->r = -ENOMEM;
		/* what is kept packed no longer holds its interned values: let them go */
		if (j->keep && rf_intern_size(in) >= prune_at) {
			rf_intern_prune(in);
			prune_at = 2 * rf_intern_size(in) + 4096;
		}
	}
	rf_intern_free(in);
	return NULL;
}

/* @return 0, 1 (take the slow path) or -ENOMEM. */
static int
load_fast(const char *buf, size_t len, bool mapped, const struct rf_slim_options *opts,
	  const struct rf_config *keep, struct rf_cluster_objects *ret, size_t *ret_skipped)
{
	struct fast_doc d = { .mapped = mapped };
	struct rf_cluster_objects o = { 0 };
	json_t **out = NULL;
	struct rf_slice **rec = NULL, **recs = NULL;
	signed char *slot = NULL;
	size_t skipped = 0, n_recs = 0;
	int r = scan_doc(buf, len, &d);
	if (r != 0)
		goto out;
	r = -ENOMEM;
	const char *item_kind = NULL;
	for (size_t s = 0; d.list_kind && s < RF_SNAPSHOT_N_KINDS; s++)
		if (strcmp(d.list_kind, rf_snapshot_kinds[s].list_kind) == 0)
			item_kind = rf_snapshot_kinds[s].kind;
	out = calloc(d.n_items + 1, sizeof(*out));
	rec = calloc(d.n_items + 1, sizeof(*rec));
	slot = calloc(d.n_items + 1, sizeof(*slot));
	if (!out || !rec || !slot)
		goto out;
	/* two halves: the second on a helper thread when there is enough work */
	struct parse_job jobs[2] = {
		{ &d, opts, keep, item_kind, 0, d.n_items, out, rec, slot, 0 },
		{ &d, opts, keep, item_kind, d.n_items, d.n_items, out, rec, slot, 0 },
	};
	pthread_t helper;
	bool threaded = false;
	if (d.n_items >= 256 && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		jobs[0].to = jobs[1].from = d.n_items / 2;
		threaded = pthread_create(&helper, NULL, parse_items, &jobs[1]) == 0;
		if (!threaded)
			jobs[0].to = d.n_items;
	}
	parse_items(&jobs[0]);
	if (threaded)
		pthread_join(helper, NULL);
	r = jobs[0].r < 0 || jobs[1].r < 0 ? -ENOMEM : jobs[0].r || jobs[1].r ? 1 : 0;
	if (r != 0)
		goto out;
	r = -ENOMEM;
	for (size_t i = 0; i < RF_SNAPSHOT_N_KINDS; i++)
		if (!(*rf_snapshot_slot(&o, i) = json_array()))
			goto out;
	if (keep && !(recs = calloc(d.n_items + 1, sizeof(*recs))))
		goto out;
	for (size_t i = 0; i < d.n_items; i++) {
		if (slot[i] < 0) {
			skipped++;
			continue;
		}
		if (json_array_append_new(*rf_snapshot_slot(&o, (size_t)slot[i]), out[i]) < 0) {
			out[i] = NULL;
			goto out;
		}
		out[i] = NULL;
		if (keep && slim_kind((size_t)slot[i]) == RF_SLIM_SLICE) {
			recs[n_recs++] = rec[i];
			rec[i] = NULL;
		}
	}
	if (keep) {
		set_slice_recs(&o, recs);
		recs = NULL;
	}
	*ret = o;
	memset(&o, 0, sizeof(o));
	if (ret_skipped)
		*ret_skipped = skipped;
	r = 0;
out:
	for (size_t i = 0; out && i < d.n_items; i++) {
		json_decref(out[i]);
		rf_slice_unref(rec[i]);
	}
	for (size_t i = 0; i < n_recs && recs; i++)
		rf_slice_unref(recs[i]);
	free(recs);
	free(out);
	free(rec);
	free(slot);
	free(d.items);
	free(d.list_kind);
	rf_cluster_objects_release(&o);
	return r;
}

static int
bad_json(const char *name, const json_error_t *jerr, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot parse '%s' as JSON: %s at line %d column %d", name,
		 jerr->text, jerr->line, jerr->column);
	return -EINVAL;
}

/* The one-tree path's result in the form asked for. */
static int
split_kept(const json_t *doc, const struct rf_slim_options *opts, const struct rf_config *keep,
	   struct rf_cluster_objects *ret, size_t *ret_skipped, char *err, size_t errlen)
{
	int r = rf_snapshot_split_opts(doc, opts, ret, ret_skipped, err, errlen);
	if (r == 0 && keep && (r = keep_all(ret, keep)) < 0)
		rf_cluster_objects_release(ret);
	return r;
}

static int load_buffer(const char *name, const char *buf, size_t len, bool mapped,
		       const struct rf_slim_options *opts, const struct rf_config *keep,
		       struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
		       size_t errlen);

static int
load_path(const char *path, const struct rf_slim_options *opts, const struct rf_config *keep,
	  struct rf_cluster_objects *ret, size_t *ret_skipped, char *err, size_t errlen)
{
	json_error_t jerr;
	struct stat st;
	if (!opts)
		opts = &all_annotations;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		/* not a plain file (a pipe, /dev/stdin): read it as a stream */
		close(fd);
		FILE *f = fopen(path, "rb");
		if (!f) {
			int e = errno;
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
			return -e;
		}
		json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
		fclose(f);
		if (!doc)
			return bad_json(path, &jerr, err, errlen);
		char inner[400];
		int r = split_kept(doc, opts, keep, ret, ret_skipped, inner, sizeof(inner));
		json_decref(doc);
		if (r == -EINVAL)
			snprintf(err, errlen, "'%s': %s", path, inner);
		else if (r < 0)
			snprintf(err, errlen, "'%s': out of memory", path);
		return r;
	}
	if ((unsigned long long)st.st_size > MAX_SNAPSHOT_BYTES) {
		close(fd);
		snprintf(err, errlen, "'%s' is larger than %zu bytes", path, MAX_SNAPSHOT_BYTES);
		return -EMSGSIZE;
	}
	size_t len = (size_t)st.st_size;
	const char *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (buf == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(e));
		return -e;
	}
	posix_madvise((void *)buf, len, POSIX_MADV_SEQUENTIAL);
	int r = load_buffer(path, buf, len, true, opts, keep, ret, ret_skipped, err, errlen);
	munmap((void *)buf, len);
	rf_heap_trim(); /* the parse trees were freed: give their pages back */
	return r;
}

int
rf_snapshot_load_file(const char *path, struct rf_cluster_objects *ret, size_t *ret_skipped,
		      char *err, size_t errlen)
{
	return load_path(path, NULL, NULL, ret, ret_skipped, err, errlen);
}

int
rf_snapshot_load(const char *path, const struct rf_slim_options *opts,
		 struct rf_cluster_objects *ret, size_t *ret_skipped, char *err, size_t errlen)
{
	return load_path(path, opts, NULL, ret, ret_skipped, err, errlen);
}

int
rf_snapshot_load_kept(const char *path, const struct rf_slim_options *opts,
		      const struct rf_config *cfg, struct rf_cluster_objects *ret,
		      size_t *ret_skipped, char *err, size_t errlen)
{
	return load_path(path, opts, cfg, ret, ret_skipped, err, errlen);
}

static int
load_buffer(const char *name, const char *buf, size_t len, bool mapped,
	    const struct rf_slim_options *opts, const struct rf_config *keep,
	    struct rf_cluster_objects *ret, size_t *ret_skipped, char *err, size_t errlen)
{
	json_error_t jerr;
	if (!opts)
		opts = &all_annotations;
	int r = load_fast(buf, len, mapped, opts, keep, ret, ret_skipped);
	if (r == 1) {
		/* the slow path: one tree, jansson's own messages */
		json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!doc)
			return bad_json(name, &jerr, err, errlen);
		char inner[400];
		r = split_kept(doc, opts, keep, ret, ret_skipped, inner, sizeof(inner));
		json_decref(doc);
		if (r == -EINVAL)
			snprintf(err, errlen, "'%s': %s", name, inner);
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "'%s': out of memory", name);
	return r;
}

int
rf_snapshot_load_buffer(const char *name, const char *buf, size_t len,
			const struct rf_slim_options *opts, struct rf_cluster_objects *ret,
			size_t *ret_skipped, char *err, size_t errlen)
{
	return load_buffer(name, buf, len, false, opts, NULL, ret, ret_skipped, err, errlen);
}

int
rf_snapshot_load_buffer_kept(const char *name, const char *buf, size_t len,
			     const struct rf_slim_options *opts, const struct rf_config *cfg,
			     struct rf_cluster_objects *ret, size_t *ret_skipped, char *err,
			     size_t errlen)
{
	return load_buffer(name, buf, len, false, opts, cfg, ret, ret_skipped, err, errlen);
}
