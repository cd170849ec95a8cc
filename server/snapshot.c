/* Snapshot files (see snapshot.h). */
#include "server/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAX_SNAPSHOT_BYTES ((size_t)2 << 30)

struct kind_slot {
	const char *kind, *list_kind, *api_version;
	size_t offset;
};

static const struct kind_slot slots[] = {
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
};
#define N_SLOTS (sizeof(slots) / sizeof(slots[0]))

static json_t **
slot_of(struct rf_cluster_objects *o, size_t i)
{
	return (json_t **)((char *)o + slots[i].offset);
}

void
rf_cluster_objects_release(struct rf_cluster_objects *o)
{
	for (size_t i = 0; i < N_SLOTS; i++) {
		json_decref(*slot_of(o, i));
		*slot_of(o, i) = NULL;
	}
}

static int
add_item(struct rf_cluster_objects *o, const char *kind, json_t *item, size_t *skipped)
{
	for (size_t i = 0; i < N_SLOTS; i++)
		if (strcmp(kind, slots[i].kind) == 0)
			return json_array_append(*slot_of(o, i), item) < 0 ? -ENOMEM : 0;
	(*skipped)++;
	return 0;
}

int
rf_snapshot_split(const json_t *doc, struct rf_cluster_objects *ret, size_t *ret_skipped,
		  char *err, size_t errlen)
{
	struct rf_cluster_objects o = { 0 };
	size_t skipped = 0;
	int r = -ENOMEM;

	if (!json_is_object(doc)) {
		snprintf(err, errlen, "expected a JSON object (a v1 List), got %s",
			 json_is_array(doc) ? "an array" : "a scalar");
		return -EINVAL;
	}
	for (size_t i = 0; i < N_SLOTS; i++)
		if (!(*slot_of(&o, i) = json_array()))
			goto fail;
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const json_t *items = json_object_get(doc, "items");
	if (kind && strcmp(kind, "List") != 0 && !json_is_array(items)) {
		/* a single object */
		if ((r = add_item(&o, kind, (json_t *)doc, &skipped)) < 0)
			goto fail;
	} else {
		if (!json_is_array(items)) {
			snprintf(err, errlen, "expected \"items\": an array of objects (kubectl get "
					      "... -o json), got none");
			r = -EINVAL;
			goto fail;
		}
		/* a typed list (NodeList) gives its items' kind */
		const char *item_kind = NULL;
		for (size_t s = 0; kind && s < N_SLOTS; s++)
			if (strcmp(kind, slots[s].list_kind) == 0)
				item_kind = slots[s].kind;
		for (size_t i = 0; i < json_array_size(items); i++) {
			json_t *it = json_array_get(items, i);
			const char *k = json_string_value(json_object_get(it, "kind"));
			if (!k)
				k = item_kind;
			if (!json_is_object(it) || !k) {
				snprintf(err, errlen,
					 "items[%zu]: expected an object with a \"kind\" (Node, Pod, "
					 "ResourceSlice, ResourceClaim, DeviceClass)",
					 i);
				r = -EINVAL;
				goto fail;
			}
			if ((r = add_item(&o, k, it, &skipped)) < 0)
				goto fail;
		}
	}
	*ret = o;
	if (ret_skipped)
		*ret_skipped = skipped;
	return 0;
fail:
	rf_cluster_objects_release(&o);
	return r;
}

int
rf_snapshot_load_file(const char *path, struct rf_cluster_objects *ret, size_t *ret_skipped,
		      char *err, size_t errlen)
{
	json_error_t jerr;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (!doc) {
		snprintf(err, errlen, "cannot parse '%s' as JSON: %s at line %d column %d", path,
			 jerr.text, jerr.line, jerr.column);
		return -EINVAL;
	}
	char inner[400];
	int r = rf_snapshot_split(doc, ret, ret_skipped, inner, sizeof(inner));
	json_decref(doc);
	if (r == -EINVAL)
		snprintf(err, errlen, "'%s': %s", path, inner);
	else if (r < 0)
		snprintf(err, errlen, "'%s': out of memory", path);
	return r;
}

json_t *
rf_snapshot_dump(const struct rf_cluster *c)
{
	const struct rf_cluster_objects *o = rf_cluster_objects(c);
	json_t *list = json_object(), *items = json_array();
	if (!list || !items)
		goto fail;
	json_object_set_new(list, "apiVersion", json_string("v1"));
	json_object_set_new(list, "kind", json_string("List"));
	json_t *meta = json_object();
	json_object_set_new(meta, "resourceVersion", json_string(""));
	json_object_set_new(list, "metadata", meta);
	for (size_t s = 0; s < N_SLOTS; s++) {
		json_t *arr = *slot_of((struct rf_cluster_objects *)o, s);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			json_t *it = json_array_get(arr, i);
			if (json_object_get(it, "kind")) {
				if (json_array_append(items, it) < 0)
					goto fail;
				continue;
			}
			/* objects from a watch carry no kind: add it on a shallow copy */
			json_t *cp = json_copy(it);
			if (!cp)
				goto fail;
			json_object_set_new(cp, "kind", json_string(slots[s].kind));
			json_object_set_new(cp, "apiVersion", json_string(slots[s].api_version));
			if (json_array_append_new(items, cp) < 0)
				goto fail;
		}
	}
	json_object_set_new(list, "items", items);
	return list;
fail:
	json_decref(list);
	json_decref(items);
	return NULL;
}
