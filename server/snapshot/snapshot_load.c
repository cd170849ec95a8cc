/* Reading snapshots into objects by kind (see snapshot_load.h). Loading runs on the caller's
 * thread plus at most one helper thread that parses half of the items; each thread has its own
 * interner. No network and no decision logic: the fuzz target links this library alone. */
#include "server/snapshot/snapshot_load.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/grow.h"

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

/* ---- the streaming loader ---- */

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
};

/* Find the items of a List without parsing them. @return 0, 1 (not the simple shape: take the
 * slow path) or -ENOMEM. */
static int
scan_doc(const char *buf, size_t len, struct fast_doc *d)
{
	const char *p = buf, *end = buf + len;
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
		const char *ve = scan_value(p, end);
		if (!ve)
			return 1;
		if (klen == 5 && memcmp(k, "items", 5) == 0) {
			if (*p != '[')
				return 1;
			have_items = true;
			const char *q = skip_ws(p + 1, end);
			if (q < ve - 1) {
				for (;;) {
					const char *ie = scan_value(q, end);
					if (!ie || *q != '{')
						return 1;
					if (rf_grow(&d->items, &d->cap_items, d->n_items + 1,
						    sizeof(*d->items)) < 0)
						return -ENOMEM;
					d->items[d->n_items++] =
						(struct span){ q, (size_t)(ie - q) };
					q = skip_ws(ie, end);
					if (q < end && *q == ',') {
						q = skip_ws(q + 1, end);
						continue;
					}
					break;
				}
			}
			if (q != ve - 1 || *q != ']')
				return 1;
		} else {
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

struct parse_job {
	const struct fast_doc *doc;
	const struct rf_slim_options *opts;
	const char *item_kind; /* of a typed list */
	size_t from, to;
	json_t **out;      /* per item: the slim object, NULL when skipped */
	signed char *slot; /* per item: its slot, -1 when skipped */
	int r;             /* 0, 1 (slow path) or -ENOMEM */
};

static void *
parse_items(void *arg)
{
	struct parse_job *j = arg;
	struct rf_intern *in = rf_intern_new();
	j->r = in ? 0 : -ENOMEM;
	for (size_t i = j->from; i < j->to && j->r == 0; i++) {
		const struct span *sp = &j->doc->items[i];
		json_t *it = json_loadb(sp->p, sp->len, JSON_REJECT_DUPLICATES, NULL);
		const char *k = json_string_value(json_object_get(it, "kind"));
		if (!k)
			k = j->item_kind;
		if (!json_is_object(it) || !k) {
			json_decref(it);
			j->r = 1; /* the slow path has the message */
			break;
		}
		int s = slot_index(k);
		j->slot[i] = (signed char)s;
		if (s >= 0 && !(j->out[i] = rf_slim_object(slim_kind((size_t)s), it, j->opts, in)))
			j->r = -ENOMEM;
		json_decref(it);
	}
	rf_intern_free(in);
	return NULL;
}

/* @return 0, 1 (take the slow path) or -ENOMEM. */
static int
load_fast(const char *buf, size_t len, const struct rf_slim_options *opts,
	  struct rf_cluster_objects *ret, size_t *ret_skipped)
{
	struct fast_doc d = { 0 };
	struct rf_cluster_objects o = { 0 };
	json_t **out = NULL;
	signed char *slot = NULL;
	size_t skipped = 0;
	int r = scan_doc(buf, len, &d);
	if (r != 0)
		goto out;
	r = -ENOMEM;
	const char *item_kind = NULL;
	for (size_t s = 0; d.list_kind && s < RF_SNAPSHOT_N_KINDS; s++)
		if (strcmp(d.list_kind, rf_snapshot_kinds[s].list_kind) == 0)
			item_kind = rf_snapshot_kinds[s].kind;
	out = calloc(d.n_items + 1, sizeof(*out));
	slot = calloc(d.n_items + 1, sizeof(*slot));
	if (!out || !slot)
		goto out;
	/* two halves: the second on a helper thread when there is enough work */
	struct parse_job jobs[2] = {
		{ &d, opts, item_kind, 0, d.n_items, out, slot, 0 },
		{ &d, opts, item_kind, d.n_items, d.n_items, out, slot, 0 },
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
	}
	*ret = o;
	memset(&o, 0, sizeof(o));
	if (ret_skipped)
		*ret_skipped = skipped;
	r = 0;
out:
	for (size_t i = 0; out && i < d.n_items; i++)
		json_decref(out[i]);
	free(out);
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

int
rf_snapshot_load_file(const char *path, struct rf_cluster_objects *ret, size_t *ret_skipped,
		      char *err, size_t errlen)
{
	return rf_snapshot_load(path, NULL, ret, ret_skipped, err, errlen);
}

int
rf_snapshot_load(const char *path, const struct rf_slim_options *opts,
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
			goto bad_json;
		char inner[400];
		int r = rf_snapshot_split_opts(doc, opts, ret, ret_skipped, inner, sizeof(inner));
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
	int r = rf_snapshot_load_buffer(path, buf, len, opts, ret, ret_skipped, err, errlen);
	munmap((void *)buf, len);
	malloc_trim(0); /* the parse trees were freed: give their pages back */
	return r;
bad_json:
	return bad_json(path, &jerr, err, errlen);
}

int
rf_snapshot_load_buffer(const char *name, const char *buf, size_t len,
			const struct rf_slim_options *opts, struct rf_cluster_objects *ret,
			size_t *ret_skipped, char *err, size_t errlen)
{
	json_error_t jerr;
	if (!opts)
		opts = &all_annotations;
	int r = load_fast(buf, len, opts, ret, ret_skipped);
	if (r == 1) {
		/* the slow path: one tree, jansson's own messages */
		json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!doc)
			return bad_json(name, &jerr, err, errlen);
		char inner[400];
		r = rf_snapshot_split_opts(doc, opts, ret, ret_skipped, inner, sizeof(inner));
		json_decref(doc);
		if (r == -EINVAL)
			snprintf(err, errlen, "'%s': %s", name, inner);
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "'%s': out of memory", name);
	return r;
}
