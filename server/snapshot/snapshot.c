/* Packing a generation's objects, and dumping them back as a List (see snapshot.h). */
#include "server/snapshot/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/strbuf.h"
#include "server/http/escape.h"
#include "server/snapshot/pack.h"

static void
put_text(void *ctx, const char *s, size_t n)
{
	rf_strbuf_putn(ctx, s, n);
}

static void
put_string(struct rf_strbuf *t, const char *s, size_t len)
{
	rf_escape_json(s, len, 0, put_text, t);
}

/* Compact JSON of v appended to t: what json_dump_callback(JSON_COMPACT) writes, without its
 * per-container bookkeeping (which made it the slowest part of packing). Failure is sticky in t. */
static void
put_json(struct rf_strbuf *t, const json_t *v)
{
	char buf[64];
	int n;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		rf_strbuf_putc(t, '{');
		bool first = true;
		for (void *it = json_object_iter((json_t *)v); it && !t->oom;
		     it = json_object_iter_next((json_t *)v, it)) {
			if (!first)
				rf_strbuf_putc(t, ',');
			put_string(t, json_object_iter_key(it), json_object_iter_key_len(it));
			rf_strbuf_putc(t, ':');
			put_json(t, json_object_iter_value(it));
			first = false;
		}
		rf_strbuf_putc(t, '}');
		return;
	}
	case JSON_ARRAY:
		rf_strbuf_putc(t, '[');
		for (size_t i = 0; i < json_array_size(v) && !t->oom; i++) {
			if (i)
				rf_strbuf_putc(t, ',');
			put_json(t, json_array_get(v, i));
		}
		rf_strbuf_putc(t, ']');
		return;
	case JSON_STRING:
		put_string(t, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		n = snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		rf_strbuf_putn(t, buf, (size_t)n);
		return;
	case JSON_REAL:
		n = snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		if (!strpbrk(buf, ".eE")) /* keep it a real when read back */
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, ".0");
		rf_strbuf_putn(t, buf, (size_t)n);
		return;
	case JSON_TRUE:
		rf_strbuf_puts(t, "true");
		return;
	case JSON_FALSE:
		rf_strbuf_puts(t, "false");
		return;
	case JSON_NULL:
		break;
	}
	rf_strbuf_puts(t, "null");
}

/* A claim whose model keeps a pointer into it: a consumedCapacity of an allocation result. */
bool
rf_snapshot_claim_referenced(const json_t *claim)
{
	const json_t *res = json_object_get(
		json_object_get(json_object_get(json_object_get(claim, "status"), "allocation"),
				"devices"),
		"results");
	for (size_t i = 0; i < json_array_size(res); i++)
		if (json_object_get(json_array_get(res, i), "consumedCapacity"))
			return true;
	return false;
}

#define PACK_CHUNK ((size_t)4 << 20)

struct packed_array {
	json_t *blob; /* the packed objects, or NULL when none */
	json_t *kept; /* the objects left as they are */
};

struct rf_snapshot_packed {
	struct packed_array slices, claims;
};

static int
pack_array(const json_t *arr, bool (*keep)(const json_t *), struct packed_array *ret)
{
	struct rf_strbuf t = { 0 }, packed = { 0 };
	json_t *pk = json_array(), *kept = json_array();
	/* start at 1 MiB (with the NUL): growing from a few bytes left megabytes of heap fragments
	 * behind after loading */
	rf_strbuf_reserve(&t, ((size_t)1 << 20) - 1);
	rf_strbuf_reserve(&packed, ((size_t)1 << 20) - 1);
	if (!pk || !kept || t.oom || packed.oom)
		goto oom;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *it = json_array_get(arr, i);
		if (json_array_append(keep && keep(it) ? kept : pk, it) < 0)
			goto oom;
	}
	/* the array's text, packed in frames of about PACK_CHUNK bytes so that the whole text
	 * never exists at once */
	for (size_t i = 0; i < json_array_size(pk); i++) {
		rf_strbuf_putc(&t, i ? ',' : '[');
		put_json(&t, json_array_get(pk, i));
		if (i + 1 == json_array_size(pk))
			rf_strbuf_putc(&t, ']');
		if (t.oom)
			goto oom;
		if (t.len < PACK_CHUNK && i + 1 < json_array_size(pk))
			continue;
		char *frame;
		size_t frame_len;
		if (rf_pack(t.s, t.len, &frame, &frame_len) < 0)
			goto oom;
		rf_strbuf_putn(&packed, frame, frame_len);
		free(frame);
		if (packed.oom)
			goto oom;
		t.len = 0; /* the next frame reuses the buffer */
	}
	/* a json string holds any bytes with its length; only rf_snapshot_dump() reads it */
	if (json_array_size(pk) && !(ret->blob = json_stringn_nocheck(packed.s, packed.len)))
		goto oom;
	rf_strbuf_release(&t);
	rf_strbuf_release(&packed);
	json_decref(pk);
	ret->kept = kept;
	return 0;
oom:
	rf_strbuf_release(&t);
	rf_strbuf_release(&packed);
	json_decref(pk);
	json_decref(kept);
	return -ENOMEM;
}

static bool
is_blob(const json_t *v)
{
	return json_is_string(v) && rf_is_packed(json_string_value(v), json_string_length(v));
}

/* Objects of one shape share most of their text (a fleet's Pods, its ResourceClaims, its
 * ResourceSlices): a blob refers back into the text of the first object packed of its shape,
 * kept for the process, and takes a third to a half of the bytes its own text alone packs into
 * (~14 MB less for the 10,000 slices and 24,000 pods and claims of a 5,000-node fleet). At most
 * DICTS shapes of at most DICT_MAX bytes; objects of further shapes are packed alone. A shape is
 * fixed by the object's content, and so is its dictionary once registered: the same object
 * always packs into the same blob (the store compares blobs). */
#define DICTS    16
#define DICT_MAX 16384

static struct dict_slot {
	uint64_t shape;
	struct rf_pack_dict dict;
	atomic_bool ready; /* published: shape and dict are set, never change */
} dicts[DICTS];
static pthread_mutex_t dicts_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t
fnv(const char *s, uint64_t h)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* apiVersion, the keys of the object and of its spec (whatever their order), and a
 * ResourceSlice's driver (its devices look alike: a GPU driver's and a NIC driver's do not) */
static uint64_t
object_shape(const json_t *obj)
{
	const json_t *driver = json_object_get(json_object_get(obj, "spec"), "driver");
	uint64_t h =
		fnv(json_string_value(json_object_get(obj, "apiVersion")), 14695981039346656037u) +
		fnv(json_string_value(driver), 1099511628211u) * 7;
	const char *key;
	const json_t *v;
	json_object_foreach ((json_t *)obj, key, v)
		h += fnv(key, 1469598103934665603u) * 3;
	json_object_foreach (json_object_get(obj, "spec"), key, v)
		h += fnv(key, 1469598103934665603u) * 5 + (uint64_t)json_typeof(v);
	return h ? h : 1;
}

static const struct rf_pack_dict *
dict_by_id(uint32_t id, void *unused)
{
	(void)unused;
	return id < DICTS && atomic_load(&dicts[id].ready) ? &dicts[id].dict : NULL;
}

/* The dictionary of the shape (its id in *id), registered with text when it has none yet; NULL
 * when every slot is taken by other shapes, or on OOM. */
static const struct rf_pack_dict *
shape_dict(uint64_t shape, const char *text, size_t len, uint32_t *id)
{
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < DICTS; i++) {
			if (!atomic_load(&dicts[i].ready))
				break;
			if (dicts[i].shape == shape) {
				*id = i;
				return &dicts[i].dict;
			}
		}
		if (pass)
			break;
		pthread_mutex_lock(&dicts_lock); /* registered once: look again under the lock */
		uint32_t i = 0;
		while (i < DICTS && atomic_load(&dicts[i].ready) && dicts[i].shape != shape)
			i++;
		if (i < DICTS && !atomic_load(&dicts[i].ready)) {
			size_t n = len < DICT_MAX ? len : DICT_MAX;
			char *copy = malloc(n ? n : 1);
			if (copy) {
				memcpy(copy, text, n);
				dicts[i].shape = shape;
				dicts[i].dict = (struct rf_pack_dict){ copy, n };
				atomic_store(&dicts[i].ready, true);
			}
		}
		pthread_mutex_unlock(&dicts_lock);
	}
	return NULL;
}

json_t *
rf_snapshot_pack_object(const json_t *obj)
{
	struct rf_strbuf t = { 0 };
	char *frame = NULL;
	size_t frame_len;
	json_t *blob = NULL;
	rf_strbuf_putc(&t, '[');
	put_json(&t, obj);
	rf_strbuf_putc(&t, ']');
	uint32_t id = 0;
	const struct rf_pack_dict *d = t.oom || !json_is_object(obj)
					       ? NULL
					       : shape_dict(object_shape(obj), t.s, t.len, &id);
	if (!t.oom && rf_pack_with(t.s, t.len, d, id, &frame, &frame_len) == 0)
		blob = json_stringn_nocheck(frame, frame_len);
	free(frame);
	rf_strbuf_release(&t);
	return blob;
}

json_t *
rf_snapshot_expand(const json_t *v, void *unused)
{
	(void)unused;
	if (json_is_object(v))
		return json_incref((json_t *)v);
	if (!is_blob(v))
		return NULL;
	char *text;
	size_t len;
	if (rf_unpack_with(json_string_value(v), json_string_length(v), dict_by_id, NULL, &text,
			   &len) < 0)
		return NULL;
	json_t *arr = json_loadb(text, len, 0, NULL);
	free(text);
	json_t *o = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void
packed_release(struct packed_array *a)
{
	json_decref(a->blob);
	json_decref(a->kept);
}

int
rf_snapshot_pack_prepare(const struct rf_cluster_objects *objs, struct rf_snapshot_packed **ret)
{
	struct rf_snapshot_packed *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pack_array(objs->slices, NULL, &p->slices) < 0 ||
	    pack_array(objs->claims, rf_snapshot_claim_referenced, &p->claims) < 0) {
		packed_release(&p->slices);
		free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

/* Swap the blob in; the objects it replaces go to graveyard. */
static void
commit_array(json_t *arr, struct packed_array *a, json_t *graveyard)
{
	if (!arr || !a->blob)
		return;
	/* appending to arrays that keep their storage, after a clear: these cannot fail */
	json_array_extend(graveyard, arr);
	json_array_clear(arr);
	json_array_append(arr, a->blob);
	json_array_extend(arr, a->kept);
}

json_t *
rf_snapshot_pack_commit(struct rf_cluster_objects *objs, struct rf_snapshot_packed *p)
{
	json_t *graveyard = json_array();
	if (!p)
		return graveyard;
	if (graveyard) {
		commit_array(objs->slices, &p->slices, graveyard);
		commit_array(objs->claims, &p->claims, graveyard);
	}
	packed_release(&p->slices);
	packed_release(&p->claims);
	free(p);
	return graveyard;
}

int
rf_snapshot_kept_order(struct rf_cluster_objects *objs)
{
	json_t *arr = objs->claims, *blobs = json_array(), *kept = json_array();
	int r = -ENOMEM;
	if (!blobs || !kept)
		goto out;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *v = json_array_get(arr, i);
		if (json_array_append(is_blob(v) ? blobs : kept, v) < 0)
			goto out;
	}
	if (json_array_size(arr)) {
		/* into the storage the array has: cannot fail */
		json_array_clear(arr);
		json_array_extend(arr, blobs);
		json_array_extend(arr, kept);
	}
	r = 0;
out:
	json_decref(blobs);
	json_decref(kept);
	return r;
}

/* The objects of arr with packed blobs expanded (new reference; NULL on OOM or a damaged blob). */
static json_t *
unpacked(json_t *arr)
{
	size_t n = json_array_size(arr), i;
	for (i = 0; i < n && !is_blob(json_array_get(arr, i)); i++)
		;
	if (i == n)
		return json_incref(arr); /* nothing packed */
	json_t *out = json_array();
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		json_t *b = json_array_get(arr, i);
		char *text;
		size_t len;
		if (!is_blob(b)) {
			if (json_array_append(out, b) < 0)
				goto fail;
			continue;
		}
		if (rf_unpack_with(json_string_value(b), json_string_length(b), dict_by_id, NULL,
				   &text, &len) < 0)
			goto fail;
		json_t *v = json_loadb(text, len, 0, NULL);
		free(text);
		if (!v || json_array_extend(out, v) < 0) {
			json_decref(v);
			goto fail;
		}
		json_decref(v);
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *
rf_snapshot_dump(const struct rf_cluster *c)
{
	const struct rf_cluster_objects *o = rf_cluster_objects(c);
	json_t *list = json_object(), *items = json_array(), *arr = NULL;
	if (!list || !items)
		goto fail;
	json_object_set_new(list, "apiVersion", json_string("v1"));
	json_object_set_new(list, "kind", json_string("List"));
	json_t *meta = json_object();
	json_object_set_new(meta, "resourceVersion", json_string(""));
	json_object_set_new(list, "metadata", meta);
	for (size_t s = 0; s < RF_SNAPSHOT_N_KINDS; s++) {
		arr = *rf_snapshot_slot((struct rf_cluster_objects *)o, s);
		arr = unpacked(arr);
		if (!arr)
			goto fail;
		for (size_t i = 0; i < json_array_size(arr); i++) {
			json_t *it = json_array_get(arr, i);
			if (json_object_get(it, "kind")) {
				if (json_array_append(items, it) < 0)
					goto fail;
				continue;
			}
			/* slim objects (and objects from a watch) carry no kind: add it, and the
			 * apiVersion when that is missing too, on a shallow copy */
			json_t *cp = json_copy(it);
			if (!cp)
				goto fail;
			json_object_set_new(cp, "kind", json_string(rf_snapshot_kinds[s].kind));
			if (!json_object_get(cp, "apiVersion"))
				json_object_set_new(cp, "apiVersion",
						    json_string(rf_snapshot_kinds[s].api_version));
			if (json_array_append_new(items, cp) < 0)
				goto fail;
		}
		json_decref(arr);
		arr = NULL;
	}
	json_object_set_new(list, "items", items);
	return list;
fail:
	json_decref(arr);
	json_decref(list);
	json_decref(items);
	return NULL;
}
