/* Slim copies of Kubernetes objects and the value interner (see slim.h). No locks: an interner
 * belongs to one thread at a time. */
#include "server/snapshot/slim.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/jscan.h"

/* ---- the interner: an open-addressing hash set of canonical values ---- */

struct entry {
	uint64_t hash;
	json_t *v; /* a reference held by the interner; NULL = empty slot */
};

struct rf_intern {
	struct entry *slots;
	size_t cap, n; /* cap is a power of two, n <= cap / 2 */
};

struct rf_intern *
rf_intern_new(void)
{
	struct rf_intern *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->cap = 1024;
	in->slots = calloc(in->cap, sizeof(*in->slots));
	if (!in->slots) {
		free(in);
		return NULL;
	}
	return in;
}

void
rf_intern_free(struct rf_intern *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->cap; i++)
		json_decref(in->slots[i].v);
	free(in->slots);
	free(in);
}

size_t
rf_intern_size(const struct rf_intern *in)
{
	return in ? in->n : 0;
}

static void
put_slot(struct entry *slots, size_t cap, uint64_t hash, json_t *v)
{
	size_t i = (size_t)hash & (cap - 1);
	while (slots[i].v)
		i = (i + 1) & (cap - 1);
	slots[i].hash = hash;
	slots[i].v = v;
}

/* Rehash into `cap` slots, dropping the values only the interner still references when prune. */
static int
rehash(struct rf_intern *in, size_t cap, bool prune)
{
	struct entry *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < in->cap; i++) {
		json_t *v = in->slots[i].v;
		if (!v)
			continue;
		if (prune && v->refcount == 1) {
			json_decref(v);
			continue;
		}
		put_slot(slots, cap, in->slots[i].hash, v);
		n++;
	}
	free(in->slots);
	in->slots = slots;
	in->cap = cap;
	in->n = n;
	return 0;
}

void
rf_intern_prune(struct rf_intern *in)
{
	if (!in)
		return;
	size_t cap = in->cap, before;
	/* a freed container may leave its members unused: repeat until nothing goes */
	do {
		before = in->n;
		if (rehash(in, cap, true) < 0)
			return; /* on OOM the values simply stay */
	} while (in->n < before);
	while (cap > 1024 && in->n * 8 < cap)
		cap /= 2;
	if (cap != in->cap)
		(void)rehash(in, cap, false);
}

/* Remember v (takes a reference of the caller's: the caller keeps its own). Failure to grow only
 * means v is not shared later. */
static void
remember(struct rf_intern *in, uint64_t hash, json_t *v)
{
	if ((in->n + 1) * 2 > in->cap && rehash(in, in->cap * 2, false) < 0)
		return;
	put_slot(in->slots, in->cap, hash, json_incref(v));
	in->n++;
}

static uint64_t
hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL; /* FNV-1a */
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

static uint64_t
hash_mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

/* The canonical string s[0..len), new reference; NULL on OOM. */
static json_t *
intern_string(struct rf_intern *in, const char *s, size_t len)
{
	uint64_t h = hash_bytes(hash_mix(HASH_SEED, JSON_STRING), s, len);
	if (in) {
		for (size_t i = (size_t)h & (in->cap - 1); in->slots[i].v;
		     i = (i + 1) & (in->cap - 1)) {
			json_t *v = in->slots[i].v;
			if (in->slots[i].hash == h && json_is_string(v) &&
			    json_string_length(v) == len &&
			    memcmp(json_string_value(v), s, len) == 0)
				return json_incref(v);
		}
	}
	json_t *v = json_stringn_nocheck(s, len);
	if (v && in)
		remember(in, h, v);
	return v;
}

/* The canonical integer (iv, when integer) or real (dv), new reference; NULL on OOM. */
static json_t *
intern_number(struct rf_intern *in, bool integer, json_int_t iv, double dv)
{
	json_type type = integer ? JSON_INTEGER : JSON_REAL;
	uint64_t h = hash_mix(HASH_SEED, type);
	if (integer)
		h = hash_bytes(h, &iv, sizeof(iv));
	else
		h = hash_bytes(h, &dv, sizeof(dv));
	if (in) {
		for (size_t i = (size_t)h & (in->cap - 1); in->slots[i].v;
		     i = (i + 1) & (in->cap - 1)) {
			json_t *v = in->slots[i].v;
			if (in->slots[i].hash != h || json_typeof(v) != type)
				continue;
			if (integer ? json_integer_value(v) == iv
				    : memcmp(&(double){ json_real_value(v) }, &dv, sizeof(dv)) == 0)
				return json_incref(v);
		}
	}
	json_t *v = integer ? json_integer(iv) : json_real(dv);
	if (v && in)
		remember(in, h, v);
	return v;
}

static json_t *
intern_scalar(struct rf_intern *in, const json_t *src)
{
	if (json_is_integer(src))
		return intern_number(in, true, json_integer_value(src), 0);
	return intern_number(in, false, 0, json_real_value(src));
}

/* A small container being copied: its members, already canonical (new references). */
struct members {
	size_t n;
	const char *keys[RF_INTERN_MAX_MEMBERS];
	size_t key_lens[RF_INTERN_MAX_MEMBERS];
	json_t *vals[RF_INTERN_MAX_MEMBERS];
};

static bool
same_members(const json_t *v, const struct members *m, bool object)
{
	if (object) {
		if (!json_is_object(v) || json_object_size(v) != m->n)
			return false;
		size_t i = 0;
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it), i++) {
			if (json_object_iter_value(it) != m->vals[i] ||
			    json_object_iter_key_len(it) != m->key_lens[i] ||
			    memcmp(json_object_iter_key(it), m->keys[i], m->key_lens[i]) != 0)
				return false;
		}
		return true;
	}
	if (!json_is_array(v) || json_array_size(v) != m->n)
		return false;
	for (size_t i = 0; i < m->n; i++)
		if (json_array_get(v, i) != m->vals[i])
			return false;
	return true;
}

static json_t *
intern_container(struct rf_intern *in, struct members *m, bool object)
{
	uint64_t h = hash_mix(HASH_SEED, object ? JSON_OBJECT : JSON_ARRAY);
	for (size_t i = 0; i < m->n; i++) {
		if (object)
			h = hash_bytes(h, m->keys[i], m->key_lens[i]);
		h = hash_mix(h, (uint64_t)(uintptr_t)m->vals[i]);
	}
	json_t *v = NULL;
	for (size_t i = (size_t)h & (in->cap - 1); in->slots[i].v; i = (i + 1) & (in->cap - 1)) {
		if (in->slots[i].hash == h && same_members(in->slots[i].v, m, object)) {
			v = json_incref(in->slots[i].v);
			break;
		}
	}
	if (!v) {
		v = object ? json_object() : json_array();
		for (size_t i = 0; v && i < m->n; i++) {
			int r = object ? json_object_setn_nocheck(v, m->keys[i], m->key_lens[i],
								  m->vals[i])
				       : json_array_append(v, m->vals[i]);
			if (r < 0) {
				json_decref(v);
				v = NULL;
			}
		}
		if (v)
			remember(in, h, v);
	}
	for (size_t i = 0; i < m->n; i++)
		json_decref(m->vals[i]);
	return v;
}

json_t *
rf_intern_copy(struct rf_intern *in, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return intern_string(in, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
	case JSON_REAL:
		return intern_scalar(in, v);
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return json_incref((json_t *)v); /* singletons */
	case JSON_OBJECT:
	case JSON_ARRAY:
		break;
	}
	bool object = json_is_object(v);
	size_t n = object ? json_object_size(v) : json_array_size(v);
	if (in && n <= RF_INTERN_MAX_MEMBERS) {
		struct members m = { 0 };
		if (object) {
			for (void *it = json_object_iter((json_t *)v); it;
			     it = json_object_iter_next((json_t *)v, it)) {
				m.keys[m.n] = json_object_iter_key(it);
				m.key_lens[m.n] = json_object_iter_key_len(it);
				if (!(m.vals[m.n] = rf_intern_copy(in, json_object_iter_value(it))))
					goto fail_members;
				m.n++;
			}
		} else {
			for (size_t i = 0; i < n; i++, m.n++)
				if (!(m.vals[m.n] = rf_intern_copy(in, json_array_get(v, i))))
					goto fail_members;
		}
		return intern_container(in, &m, object);
fail_members:
		for (size_t i = 0; i < m.n; i++)
			json_decref(m.vals[i]);
		return NULL;
	}
	json_t *out = object ? json_object() : json_array();
	if (!out)
		return NULL;
	if (object) {
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			json_t *c = rf_intern_copy(in, json_object_iter_value(it));
			if (!c || json_object_setn_new_nocheck(out, json_object_iter_key(it),
							       json_object_iter_key_len(it), c) < 0)
				goto fail;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			json_t *c = rf_intern_copy(in, json_array_get(v, i));
			if (!c || json_array_append_new(out, c) < 0)
				goto fail;
		}
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* ---- what is kept of each kind ---- */

enum pick {
	KEEP,     /* the value as it is */
	SUB,      /* an object: the listed fields */
	EACH,     /* an array of objects: the listed fields of each */
	POD_ANN,  /* pod annotations railfit reads */
	POD_LBL,  /* pod labels railfit reads */
	NODE_ANN, /* node annotations railfit reads */
	READY,    /* node conditions: the Ready one, type and status */
	VERSION,  /* metadata.resourceVersion: unless opts->drop_resource_version */
	API,      /* apiVersion: unless it is the kind's usual one (/debug/snapshot adds it back) */
	EXT_EACH, /* pod containers: EACH when the pod asks for an extended resource or with
		   * opts->keep_requests, else dropped */
	REQ_KEEP, /* KEEP, only with opts->keep_requests */
};

struct field {
	const char *key;
	enum pick how;
	const struct field *sub;
};

#define END                                                                                        \
	{                                                                                          \
		NULL, KEEP, NULL                                                                   \
	}

static const struct field f_name_only[] = { { "name", KEEP, NULL },
					    { "resourceVersion", VERSION, NULL },
					    END };
static const struct field f_type_status[] = { { "type", KEEP, NULL },
					      { "status", KEEP, NULL },
					      END };
static const struct field f_devices_spec[] = { { "requests", KEEP, NULL },
					       { "constraints", KEEP, NULL },
					       END };
static const struct field f_claim_spec[] = { { "devices", SUB, f_devices_spec }, END };

/* pod */
static const struct field f_pod_meta[] = {
	{ "name", KEEP, NULL },
	{ "namespace", KEEP, NULL },
	{ "uid", KEEP, NULL },
	{ "resourceVersion", VERSION, NULL },
	{ "creationTimestamp", REQ_KEEP, NULL },
	{ "labels", POD_LBL, NULL },
	{ "annotations", POD_ANN, NULL },
	END,
};
static const struct field f_pod_claim[] = { { "name", KEEP, NULL },
					    { "resourceClaimName", KEEP, NULL },
					    { "resourceClaimTemplateName", KEEP, NULL },
					    END };
static const struct field f_pod_claim_status[] = { { "name", KEEP, NULL },
						   { "resourceClaimName", KEEP, NULL },
						   END };
/* extended resources backed by DRA (1.36+) are asked for in the containers' resources */
static const struct field f_ctr_resources[] = { { "requests", KEEP, NULL },
						{ "limits", KEEP, NULL },
						END };
static const struct field f_container[] = { { "name", KEEP, NULL },
					    { "resources", SUB, f_ctr_resources },
					    END };
static const struct field f_pod_spec[] = { { "nodeName", KEEP, NULL },
					   { "schedulerName", KEEP, NULL }, /* for POST /bind */
					   { "resourceClaims", EACH, f_pod_claim },
					   { "initContainers", EXT_EACH, f_container },
					   { "containers", EXT_EACH, f_container },
					   END };
static const struct field f_pod_status[] = { { "phase", KEEP, NULL },
					     { "resourceClaimStatuses", EACH, f_pod_claim_status },
					     { "extendedResourceClaimStatus", KEEP, NULL },
					     END };
static const struct field f_pod[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_pod_meta },
	{ "spec", SUB, f_pod_spec },
	{ "status", SUB, f_pod_status },
	END,
};

/* node */
static const struct field f_node_meta[] = {
	{ "name", KEEP, NULL },
	{ "resourceVersion", VERSION, NULL },
	{ "labels", KEEP, NULL },
	{ "annotations", NODE_ANN, NULL },
	END,
};
/* allocatable: a device plugin's extended resources take precedence over DRA (1.36+) */
static const struct field f_node_status[] = { { "conditions", READY, f_type_status },
					      { "allocatable", KEEP, NULL },
					      END };
static const struct field f_node[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_node_meta },
	{ "status", SUB, f_node_status },
	END,
};

/* resourceslice */
static const struct field f_slice_spec[] = {
	{ "driver", KEEP, NULL },
	{ "pool", KEEP, NULL },
	{ "nodeName", KEEP, NULL },
	{ "allNodes", KEEP, NULL },
	{ "nodeSelector", KEEP, NULL },
	{ "perDeviceNodeSelection", KEEP, NULL },
	{ "sharedCounters", KEEP, NULL },
	{ "devices", KEEP, NULL },
	END,
};
static const struct field f_slice[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_name_only },
	{ "spec", SUB, f_slice_spec },
	END,
};

/* resourceclaim */
static const struct field f_claim_meta[] = { { "name", KEEP, NULL },
					     { "namespace", KEEP, NULL },
					     { "uid", KEEP, NULL },
					     { "resourceVersion", VERSION, NULL },
					     END };
static const struct field f_alloc_devices[] = { { "results", KEEP, NULL }, END };
static const struct field f_allocation[] = { { "devices", SUB, f_alloc_devices },
					     { "nodeSelector", KEEP, NULL },
					     END };
static const struct field f_uid_only[] = { { "uid", KEEP, NULL }, END };
static const struct field f_claim_status[] = { { "allocation", SUB, f_allocation },
					       { "reservedFor", EACH, f_uid_only },
					       END };
static const struct field f_claim[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_claim_meta },
	{ "spec", SUB, f_claim_spec },
	{ "status", SUB, f_claim_status },
	END,
};

/* deviceclass */
static const struct field f_class_spec[] = { { "selectors", KEEP, NULL },
					     { "extendedResourceName", KEEP, NULL },
					     END };
/* the newest class naming an extended resource serves it */
static const struct field f_class_meta[] = { { "name", KEEP, NULL },
					     { "resourceVersion", VERSION, NULL },
					     { "creationTimestamp", KEEP, NULL },
					     END };
static const struct field f_class[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_class_meta },
	{ "spec", SUB, f_class_spec },
	END,
};

/* resourceclaimtemplate */
static const struct field f_tmpl_meta[] = { { "name", KEEP, NULL },
					    { "namespace", KEEP, NULL },
					    { "resourceVersion", VERSION, NULL },
					    END };
static const struct field f_tmpl_spec[] = { { "spec", SUB, f_claim_spec }, END };
static const struct field f_template[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_tmpl_meta },
	{ "spec", SUB, f_tmpl_spec },
	END,
};

/* devicetaintrule */
static const struct field f_rule_spec[] = { { "deviceSelector", KEEP, NULL },
					    { "taint", KEEP, NULL },
					    END };
static const struct field f_taint_rule[] = {
	{ "apiVersion", API, NULL },
	{ "metadata", SUB, f_name_only },
	{ "spec", SUB, f_rule_spec },
	END,
};

static const struct field *const kinds[RF_SLIM_COUNT] = {
	[RF_SLIM_NODE] = f_node,
	[RF_SLIM_POD] = f_pod,
	[RF_SLIM_SLICE] = f_slice,
	[RF_SLIM_CLAIM] = f_claim,
	[RF_SLIM_CLASS] = f_class,
	[RF_SLIM_TEMPLATE] = f_template,
	[RF_SLIM_TAINT_RULE] = f_taint_rule,
};

int
rf_slim_kind_of(const char *kind)
{
	static const char *const names[RF_SLIM_COUNT] = {
		"Node",
		"Pod",
		"ResourceSlice",
		"ResourceClaim",
		"DeviceClass",
		"ResourceClaimTemplate",
		"DeviceTaintRule",
	};
	for (int i = 0; kind && i < RF_SLIM_COUNT; i++)
		if (strcmp(kind, names[i]) == 0)
			return i;
	return -1;
}

static bool
pod_annotation_read(const char *key)
{
	return strncmp(key, "railfit.io/", 11) == 0 ||
	       strcmp(key, "kubernetes.io/egress-bandwidth") == 0 ||
	       strcmp(key, "kubernetes.io/ingress-bandwidth") == 0;
}

static bool
pod_label_read(const char *key, const struct rf_slim_options *o)
{
	if (!o || !o->pod_labels)
		return true;
	for (size_t i = 0; i < o->pod_labels->n; i++)
		if (strcmp(key, o->pod_labels->v[i]) == 0)
			return true;
	return false;
}

static bool
node_annotation_read(const char *key, const struct rf_slim_options *o)
{
	return (o && o->all_node_annotations) || strncmp(key, "railfit.io/", 11) == 0 ||
	       (o && o->topology_annotation && o->topology_annotation[0] &&
		strcmp(key, o->topology_annotation) == 0);
}

struct ctx {
	const struct rf_slim_options *opts;
	struct rf_intern *in;
	const char *api_version; /* the kind's usual apiVersion */
	bool pod_extended;       /* a container asks for an extended resource (kept, with all) */
};

/* A resource name outside kubernetes.io (an extended resource; DRA may back it), or a class's
 * implicit one. */
static bool
extended_name(const char *r)
{
	return (strchr(r, '/') && !strstr(r, "kubernetes.io/")) ||
	       strncmp(r, "deviceclass.resource.kubernetes.io/", 35) == 0;
}

/* Does a container of the pod ask for an extended resource? Then the containers' resources
 * stay: the requests kube-scheduler makes of them are named by container and resource index. */
static bool
pod_asks_extended(const json_t *pod)
{
	static const char *const lists[] = { "initContainers", "containers" };
	const json_t *spec = json_object_get(pod, "spec");
	for (size_t l = 0; l < 2; l++) {
		const json_t *ctrs = json_object_get(spec, lists[l]);
		for (size_t i = 0; i < json_array_size(ctrs); i++) {
			const json_t *res = json_object_get(json_array_get(ctrs, i), "resources");
			static const char *const kinds_of[] = { "requests", "limits" };
			for (size_t k = 0; k < 2; k++) {
				const char *name;
				json_t *v;
				json_object_foreach (json_object_get(res, kinds_of[k]), name, v)
					if (extended_name(name))
						return true;
			}
		}
	}
	return false;
}

static const char *const api_versions[RF_SLIM_COUNT] = {
	[RF_SLIM_NODE] = "v1",
	[RF_SLIM_POD] = "v1",
	[RF_SLIM_SLICE] = "resource.k8s.io/v1",
	[RF_SLIM_CLAIM] = "resource.k8s.io/v1",
	[RF_SLIM_CLASS] = "resource.k8s.io/v1",
	[RF_SLIM_TEMPLATE] = "resource.k8s.io/v1",
	[RF_SLIM_TAINT_RULE] = "resource.k8s.io/v1",
};

static int pick(const struct ctx *cx, const json_t *v, enum pick how, const struct field *sub,
		json_t **ret);

/* An empty object, shared through the interner. */
static json_t *
empty_object(const struct ctx *cx)
{
	if (!cx->in)
		return json_object();
	struct members m = { 0 };
	return intern_container(cx->in, &m, true);
}

/* The listed fields of an object, in the object's own key order (an empty object when none is
 * there). @return 0 or -1 (OOM). */
static int
pick_fields(const struct ctx *cx, const json_t *obj, const struct field *fields, json_t **ret)
{
	json_t *out = NULL;
	for (void *it = json_object_iter((json_t *)obj); it;
	     it = json_object_iter_next((json_t *)obj, it)) {
		const char *key = json_object_iter_key(it);
		const struct field *f = fields;
		json_t *v;
		while (f->key && strcmp(f->key, key) != 0)
			f++;
		if (!f->key)
			continue;
		if (pick(cx, json_object_iter_value(it), f->how, f->sub, &v) < 0)
			goto oom;
		if (!v)
			continue;
		if (!out && !(out = json_object())) {
			json_decref(v);
			goto oom;
		}
		if (json_object_setn_new_nocheck(out, key, json_object_iter_key_len(it), v) < 0)
			goto oom;
	}
	if (!out && !(out = empty_object(cx)))
		return -1;
	*ret = out;
	return 0;
oom:
	json_decref(out);
	return -1;
}

/* Annotations (or pod labels) railfit reads (an empty object when none). */
static int
pick_annotations(const struct ctx *cx, const json_t *obj, enum pick how, json_t **ret)
{
	json_t *out = NULL;
	for (void *it = json_object_iter((json_t *)obj); it;
	     it = json_object_iter_next((json_t *)obj, it)) {
		const char *key = json_object_iter_key(it);
		if (how == NODE_ANN  ? !node_annotation_read(key, cx->opts)
		    : how == POD_LBL ? !pod_label_read(key, cx->opts)
				     : !pod_annotation_read(key))
			continue;
		json_t *v = rf_intern_copy(cx->in, json_object_iter_value(it));
		if (!v || (!out && !(out = json_object()))) {
			json_decref(v);
			goto oom;
		}
		if (json_object_setn_new_nocheck(out, key, json_object_iter_key_len(it), v) < 0)
			goto oom;
	}
	if (!out && !(out = empty_object(cx)))
		return -1;
	*ret = out;
	return 0;
oom:
	json_decref(out);
	return -1;
}

static int
pick(const struct ctx *cx, const json_t *v, enum pick how, const struct field *sub, json_t **ret)
{
	json_t *out = NULL;
	bool is_obj = json_is_object(v), is_arr = json_is_array(v);
	if (how == EXT_EACH) {
		if (!cx->pod_extended && !(cx->opts && cx->opts->keep_requests)) {
			*ret = NULL; /* dropped */
			return 0;
		}
		how = EACH;
	}
	if (how == REQ_KEEP) {
		if (!cx->opts || !cx->opts->keep_requests) {
			*ret = NULL; /* dropped */
			return 0;
		}
		how = KEEP;
	}
	if ((how == VERSION && cx->opts && cx->opts->drop_resource_version) ||
	    (how == API && json_is_string(v) &&
	     strcmp(json_string_value(v), cx->api_version) == 0)) {
		*ret = NULL; /* dropped */
		return 0;
	}
	if (how == KEEP || how == VERSION || how == API ||
	    ((how == SUB || how == POD_ANN || how == POD_LBL || how == NODE_ANN) && !is_obj) ||
	    ((how == EACH || how == READY) && !is_arr)) {
		/* kept as it is, also when it has an unexpected type: readers see what they would
		 * have seen in the full object */
		*ret = rf_intern_copy(cx->in, v);
		return *ret ? 0 : -1;
	}
	if (how == SUB)
		return pick_fields(cx, v, sub, ret);
	if (how == POD_ANN || how == POD_LBL || how == NODE_ANN)
		return pick_annotations(cx, v, how, ret);
	/* EACH, READY: arrays; EACH keeps every element (positions may matter) */
	if (!(out = json_array()))
		return -1;
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);
		json_t *c = NULL;
		if (how == READY) {
			const char *t = json_string_value(json_object_get(e, "type"));
			if (!json_is_object(e) || !t || strcmp(t, "Ready") != 0)
				continue;
		}
		if (json_is_object(e)) {
			if (pick_fields(cx, e, sub, &c) < 0)
				goto oom;
		} else if (!(c = rf_intern_copy(cx->in, e))) {
			goto oom;
		}
		if (json_array_append_new(out, c) < 0)
			goto oom;
	}
	*ret = out;
	return 0;
oom:
	json_decref(out);
	return -1;
}

json_t *
rf_slim_object(enum rf_slim_kind kind, const json_t *obj, const struct rf_slim_options *opts,
	       struct rf_intern *in)
{
	json_t *out = NULL;
	if ((unsigned)kind >= RF_SLIM_COUNT || !json_is_object(obj))
		return rf_intern_copy(in, obj);
	struct ctx cx = { opts, in, api_versions[kind],
			  kind == RF_SLIM_POD && pod_asks_extended(obj) };
	if (pick_fields(&cx, obj, kinds[kind], &out) < 0)
		return NULL;
	return out;
}

/* ---- the same slim copy made from an object's text (no tree of the whole object) ---- */

/* The value at the scanner's position, interned: what rf_intern_copy() makes of jansson's tree of
 * it. @return 0, or -1 with the scanner failed (sc->err) or out of memory (*ret NULL). */
static int t_value(struct rf_intern *in, struct rf_jscan *sc, json_t **ret);

static int
t_string(struct rf_intern *in, struct rf_jscan *sc, json_t **ret)
{
	struct rf_jscan_span raw;
	bool escaped;
	if (!rf_jscan_string(sc, &raw, &escaped))
		return -1;
	if (!escaped) {
		*ret = intern_string(in, raw.s, raw.len);
		return *ret ? 0 : -1;
	}
	char stack[256], *buf = raw.len <= sizeof(stack) ? stack : malloc(raw.len);
	if (!buf)
		return -1;
	size_t n = rf_jscan_unescape(raw.s, raw.len, buf);
	*ret = intern_string(in, buf, n);
	if (buf != stack)
		free(buf);
	return *ret ? 0 : -1;
}

/* A number the scanner accepted, as jansson reads it: an integer unless it has a fraction or an
 * exponent. */
static int
t_number(struct rf_intern *in, struct rf_jscan_span sp, json_t **ret)
{
	char tmp[64];
	if (sp.len >= sizeof(tmp))
		return -1; /* the scanner takes no longer number */
	memcpy(tmp, sp.s, sp.len);
	tmp[sp.len] = '\0';
	if (strpbrk(tmp, ".eE"))
		*ret = intern_number(in, false, 0, strtod(tmp, NULL));
	else
		*ret = intern_number(in, true, (json_int_t)strtoll(tmp, NULL, 10), 0);
	return *ret ? 0 : -1;
}

/* Members gathered while an object or array is read: in `m` while they fit the interner's small
 * containers, then moved into a plain container `big`. */
struct t_members {
	struct members m;
	json_t *big;
};

static int
t_add(struct rf_intern *in, struct t_members *t, bool object, const char *key, size_t key_len,
      json_t *v)
{
	if (!t->big && (!in || t->m.n == RF_INTERN_MAX_MEMBERS)) {
		if (!(t->big = object ? json_object() : json_array()))
			goto fail;
		for (size_t i = 0; i < t->m.n; i++) {
			json_t *mv = t->m.vals[i];
			t->m.vals[i] = NULL;
			if ((object ? json_object_setn_new_nocheck(t->big, t->m.keys[i],
								   t->m.key_lens[i], mv)
				    : json_array_append_new(t->big, mv)) < 0)
				goto fail;
		}
		t->m.n = 0;
	}
	if (t->big)
		return (object ? json_object_setn_new_nocheck(t->big, key, key_len, v)
			       : json_array_append_new(t->big, v)) < 0
			       ? -1
			       : 0;
	t->m.keys[t->m.n] = key;
	t->m.key_lens[t->m.n] = key_len;
	t->m.vals[t->m.n++] = v;
	return 0;
fail:
	json_decref(v);
	return -1;
}

static void
t_members_release(struct t_members *t)
{
	for (size_t i = 0; i < t->m.n; i++)
		json_decref(t->m.vals[i]);
	json_decref(t->big);
}

static int
t_container(struct rf_intern *in, struct rf_jscan *sc, bool object, json_t **ret)
{
	struct t_members t = { 0 };
	struct rf_jscan_span key = { "", 0 };
	size_t frame = 0, count = 0;
	json_t *v;
	if (object ? !(frame = rf_jscan_object_open(sc)) : !rf_jscan_array_open(sc))
		return -1;
	while (object ? rf_jscan_object_next(sc, frame, &key) : rf_jscan_array_next(sc, &count)) {
		if (t_value(in, sc, &v) < 0 || t_add(in, &t, object, key.s, key.len, v) < 0)
			goto fail;
	}
	if (sc->err)
		goto fail;
	if (t.big) {
		*ret = t.big;
		return 0;
	}
	/* intern_container() takes the members' references, also when it fails */
	if (in)
		return (*ret = intern_container(in, &t.m, object)) ? 0 : -1;
	*ret = object ? json_object() : json_array();
	return *ret ? 0 : -1;
fail:
	t_members_release(&t);
	return -1;
}

static int
t_value(struct rf_intern *in, struct rf_jscan *sc, json_t **ret)
{
	struct rf_jscan_span sp;
	*ret = NULL;
	switch (rf_jscan_peek(sc)) {
	case '"':
		return t_string(in, sc, ret);
	case '{':
		return t_container(in, sc, true, ret);
	case '[':
		return t_container(in, sc, false, ret);
	default:
		break;
	}
	switch (rf_jscan_value(sc, &sp)) {
	case RF_JSCAN_NUMBER:
		return t_number(in, sp, ret);
	case RF_JSCAN_TRUE:
		*ret = json_true();
		return 0;
	case RF_JSCAN_FALSE:
		*ret = json_false();
		return 0;
	case RF_JSCAN_NULL:
		*ret = json_null();
		return 0;
	default:
		return -1;
	}
}

static bool
skip_value(struct rf_jscan *sc)
{
	return rf_jscan_value(sc, NULL) != RF_JSCAN_ERROR;
}

static bool
key_is(struct rf_jscan_span k, const char *s)
{
	size_t n = strlen(s);
	return k.len == n && memcmp(k.s, s, n) == 0;
}

/* A key as a C string: in buf when it fits, else a new allocation (*ret_alloc to free). */
static const char *
key_cstr(struct rf_jscan_span k, char *buf, size_t size, char **ret_alloc)
{
	*ret_alloc = NULL;
	if (k.len < size) {
		memcpy(buf, k.s, k.len);
		buf[k.len] = '\0';
		return buf;
	}
	if (!(*ret_alloc = malloc(k.len + 1)))
		return NULL;
	memcpy(*ret_alloc, k.s, k.len);
	(*ret_alloc)[k.len] = '\0';
	return *ret_alloc;
}

static int t_pick(const struct ctx *cx, struct rf_jscan *sc, enum pick how, const struct field *sub,
		  json_t **ret);

/* A kept member of an object read from text (takes v): the object is made on its first one. */
static int
t_put(json_t **out, struct rf_jscan_span key, json_t *v)
{
	if (!*out && !(*out = json_object())) {
		json_decref(v);
		return -1;
	}
	return json_object_setn_new_nocheck(*out, key.s, key.len, v) < 0 ? -1 : 0;
}

/* The end of an object read from text (takes out): what was kept, or the shared empty object. */
static int
t_done(const struct ctx *cx, const struct rf_jscan *sc, size_t frame, json_t *out, json_t **ret)
{
	if (!frame || sc->err || (!out && !(out = empty_object(cx)))) {
		json_decref(out);
		return -1;
	}
	*ret = out;
	return 0;
}

/* pick_fields() from the text of an object (the scanner is at its '{'). */
static int
t_fields(const struct ctx *cx, struct rf_jscan *sc, const struct field *fields, json_t **ret)
{
	json_t *out = NULL, *v;
	struct rf_jscan_span key;
	size_t frame = rf_jscan_object_open(sc);
	while (frame && rf_jscan_object_next(sc, frame, &key)) {
		const struct field *f = fields;
		while (f->key && !key_is(key, f->key))
			f++;
		if (!f->key) {
			if (!skip_value(sc))
				goto fail;
			continue;
		}
		if (t_pick(cx, sc, f->how, f->sub, &v) < 0)
			goto fail;
		if (!v)
			continue;
		if (t_put(&out, key, v) < 0)
			goto fail;
	}
	return t_done(cx, sc, frame, out, ret);
fail:
	json_decref(out);
	return -1;
}

/* pick_annotations() from the text of an object. */
static int
t_annotations(const struct ctx *cx, struct rf_jscan *sc, enum pick how, json_t **ret)
{
	json_t *out = NULL, *v;
	struct rf_jscan_span key;
	char buf[320], *alloc;
	size_t frame = rf_jscan_object_open(sc);
	while (frame && rf_jscan_object_next(sc, frame, &key)) {
		const char *k = key_cstr(key, buf, sizeof(buf), &alloc);
		bool read = k && (how == NODE_ANN  ? node_annotation_read(k, cx->opts)
				  : how == POD_LBL ? pod_label_read(k, cx->opts)
						   : pod_annotation_read(k));
		free(alloc);
		if (!k)
			goto fail;
		if (!read) {
			if (!skip_value(sc))
				goto fail;
			continue;
		}
		if (t_value(cx->in, sc, &v) < 0)
			goto fail;
		if (t_put(&out, key, v) < 0)
			goto fail;
	}
	return t_done(cx, sc, frame, out, ret);
fail:
	json_decref(out);
	return -1;
}

/* pick() from the text of a value; *ret NULL when the field is dropped. */
static int
t_pick(const struct ctx *cx, struct rf_jscan *sc, enum pick how, const struct field *sub,
       json_t **ret)
{
	*ret = NULL;
	if (how == EXT_EACH) {
		if (!cx->pod_extended && !(cx->opts && cx->opts->keep_requests))
			return skip_value(sc) ? 0 : -1;
		how = EACH;
	}
	if (how == REQ_KEEP) {
		if (!cx->opts || !cx->opts->keep_requests)
			return skip_value(sc) ? 0 : -1;
		how = KEEP;
	}
	if (how == VERSION && cx->opts && cx->opts->drop_resource_version)
		return skip_value(sc) ? 0 : -1;
	if (how == API) {
		if (t_value(cx->in, sc, ret) < 0)
			return -1;
		if (json_is_string(*ret) && strcmp(json_string_value(*ret), cx->api_version) == 0) {
			json_decref(*ret);
			*ret = NULL;
		}
		return 0;
	}
	int c = rf_jscan_peek(sc);
	bool is_obj = c == '{', is_arr = c == '[';
	if (how == KEEP || how == VERSION ||
	    ((how == SUB || how == POD_ANN || how == POD_LBL || how == NODE_ANN) && !is_obj) ||
	    ((how == EACH || how == READY) && !is_arr))
		return t_value(cx->in, sc, ret);
	if (how == SUB)
		return t_fields(cx, sc, sub, ret);
	if (how == POD_ANN || how == POD_LBL || how == NODE_ANN)
		return t_annotations(cx, sc, how, ret);
	if (how == READY) {
		/* the conditions are few and small: their tree, then pick() */
		struct rf_jscan_span sp;
		if (rf_jscan_value(sc, &sp) == RF_JSCAN_ERROR)
			return -1;
		json_t *tree = json_loadb(sp.s, sp.len, JSON_REJECT_DUPLICATES, NULL);
		int r = tree ? pick(cx, tree, how, sub, ret) : -1;
		json_decref(tree);
		return r;
	}
	/* EACH: every element, objects by their fields */
	json_t *out = json_array(), *e;
	size_t count = 0;
	if (!out || !rf_jscan_array_open(sc))
		goto fail;
	while (rf_jscan_array_next(sc, &count)) {
		if ((rf_jscan_peek(sc) == '{' ? t_fields(cx, sc, sub, &e)
					      : t_value(cx->in, sc, &e)) < 0 ||
		    json_array_append_new(out, e) < 0)
			goto fail;
	}
	if (sc->err)
		goto fail;
	*ret = out;
	return 0;
fail:
	json_decref(out);
	return -1;
}

/* pod_asks_extended() from a pod's text: spec.{initContainers,containers}[].resources.
 * {requests,limits} keys. @return 1 (yes), 0 (no), -1 (the scanner failed). */
static int
t_pod_asks_extended(const char *text, size_t len)
{
	struct rf_jscan sc;
	struct rf_jscan_span k;
	char buf[320], *alloc;
	int found = 0;
	rf_jscan_init(&sc, text, len);
	size_t top = rf_jscan_object_open(&sc);
	while (top && rf_jscan_object_next(&sc, top, &k)) {
		if (found || !key_is(k, "spec") || rf_jscan_peek(&sc) != '{') {
			skip_value(&sc);
			continue;
		}
		size_t spec = rf_jscan_object_open(&sc);
		while (spec && rf_jscan_object_next(&sc, spec, &k)) {
			size_t count = 0;
			if (found || !(key_is(k, "initContainers") || key_is(k, "containers")) ||
			    rf_jscan_peek(&sc) != '[' || !rf_jscan_array_open(&sc)) {
				skip_value(&sc);
				continue;
			}
			while (rf_jscan_array_next(&sc, &count)) {
				size_t ctr = rf_jscan_peek(&sc) == '{' && !found
						     ? rf_jscan_object_open(&sc)
						     : 0;
				if (!ctr) {
					skip_value(&sc);
					continue;
				}
				while (rf_jscan_object_next(&sc, ctr, &k)) {
					size_t res =
						key_is(k, "resources") && rf_jscan_peek(&sc) == '{'
							? rf_jscan_object_open(&sc)
							: 0;
					if (!res) {
						skip_value(&sc);
						continue;
					}
					while (rf_jscan_object_next(&sc, res, &k)) {
						size_t list =
							(key_is(k, "requests") ||
							 key_is(k, "limits")) &&
									rf_jscan_peek(&sc) == '{'
								? rf_jscan_object_open(&sc)
								: 0;
						if (!list) {
							skip_value(&sc);
							continue;
						}
						while (rf_jscan_object_next(&sc, list, &k)) {
							const char *name = key_cstr(
								k, buf, sizeof(buf), &alloc);
							if (name && extended_name(name))
								found = 1;
							free(alloc);
							if (!name)
								sc.err = -ENOMEM;
							skip_value(&sc);
						}
					}
				}
			}
		}
	}
	int r = sc.err ? -1 : found;
	rf_jscan_release(&sc);
	return r;
}

int
rf_slim_text(enum rf_slim_kind kind, const char *text, size_t len,
	     const struct rf_slim_options *opts, struct rf_intern *in, json_t **ret)
{
	struct rf_jscan sc;
	json_t *out = NULL;
	int r = -EINVAL, ext = 0;
	*ret = NULL;
	if ((unsigned)kind >= RF_SLIM_COUNT || len == 0 || text[0] != '{')
		return -EINVAL; /* the tree path copies what is not an object */
	if (kind == RF_SLIM_POD && (ext = t_pod_asks_extended(text, len)) < 0)
		return -EINVAL;
	struct ctx cx = { opts, in, api_versions[kind], ext == 1 };
	rf_jscan_init(&sc, text, len);
	if (t_fields(&cx, &sc, kinds[kind], &out) == 0) {
		rf_jscan_ws(&sc);
		if (!sc.err && sc.pos == len) {
			*ret = out;
			out = NULL;
			r = 0;
		}
	} else if (!sc.err) {
		r = -ENOMEM;
	}
	json_decref(out);
	rf_jscan_release(&sc);
	return r;
}
