/* Pods asking for extended resources backed by DRA (DRAExtendedResource: beta and on in 1.36, GA
 * in 1.37; reference/dra-allocator-1.36.md section 3.1, dra-api.md sections 6 and 9). A pod whose
 * containers request e.g. nvidia.com/gpu: 2, where a DeviceClass names that resource in
 * spec.extendedResourceName (or the implicit deviceclass.resource.kubernetes.io/<class>), gets a
 * claim kube-scheduler builds itself and allocates after the pod's own claims, in the same search:
 * one ExactCount request per (container, resource), named container-<i>-request-<j> (i: index in
 * initContainers + containers, j: the resource's index in that container's sorted requests),
 * sorted by name, no constraints. On a node whose allocatable has the resource (a device plugin),
 * the scheduler leaves it to the device plugin and asks DRA nothing for it there.
 * (kubernetes pkg/scheduler/framework/plugins/dynamicresources/extendedresources.go,
 * extended/DeviceClassMapping.) Pure logic. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/demand.h"

#define CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
#define MAX_ENTRIES  64 /* (container, resource) pairs */

/* schedutil.IsDRAExtendedResourceName: an extended resource (a domain other than kubernetes.io,
 * not a quota name) or a class's implicit name */
static bool
dra_ext_name(const char *r)
{
	if (strncmp(r, CLASS_PREFIX, strlen(CLASS_PREFIX)) == 0)
		return r[strlen(CLASS_PREFIX)] != 0;
	return strchr(r, '/') && !strstr(r, "kubernetes.io/") && strncmp(r, "requests.", 9) != 0;
}

/* The DeviceClass serving extended resource r: its implicit name, or the newest class naming
 * it (ties: the first name), as extended.DeviceClassMapping. NULL: none. */
static const struct rf_class *
class_for(const struct rf_cluster *c, const char *r)
{
	const struct rf_class *best = NULL;
	const char *best_ts = NULL;
	if (strncmp(r, CLASS_PREFIX, strlen(CLASS_PREFIX)) == 0) {
		const struct rf_class *cls = rf_cluster_class(c, r + strlen(CLASS_PREFIX));
		if (cls)
			return cls;
	}
	for (size_t i = 0; i < rf_cluster_n_classes(c); i++) {
		const struct rf_class *cls = rf_cluster_class_at(c, i);
		const char *ern =
			json_string_value(rf_jpath(cls->json, "spec.extendedResourceName"));
		if (!ern || strcmp(ern, r) != 0)
			continue;
		const char *ts =
			json_string_value(rf_jpath(cls->json, "metadata.creationTimestamp"));
		if (!ts)
			ts = "";
		/* classes come by name: a later one wins only when strictly newer */
		if (!best || strcmp(ts, best_ts) > 0) {
			best = cls;
			best_ts = ts;
		}
	}
	return best;
}

struct entry {
	char name[48]; /* container-<i>-request-<j> */
	const char *class_name;
	int64_t count;
	unsigned res; /* index in d->ext_names */
};

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A container's requests after API defaulting: requests, and limits where no request is set. */
static json_t *
container_requests(const json_t *ctr)
{
	const json_t *res = json_object_get(ctr, "resources");
	const json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
	json_t *out = json_is_object(req) ? json_copy((json_t *)req) : json_object();
	const char *k;
	json_t *v;
	if (!out)
		return NULL;
	if (json_is_object(lim))
		json_object_foreach ((json_t *)lim, k, v)
			if (!json_object_get(out, k) && json_object_set(out, k, v) < 0) {
				json_decref(out);
				return NULL;
			}
	return out;
}

static int
resource_index(struct rf_demand *d, const char *r)
{
	for (size_t i = 0; i < d->n_ext; i++)
		if (strcmp(d->ext_names[i], r) == 0)
			return (int)i;
	if (d->n_ext == RF_MAX_EXT_RESOURCES || strlen(r) >= sizeof(d->ext_names[0]))
		return -1;
	snprintf(d->ext_names[d->n_ext], sizeof(d->ext_names[0]), "%s", r);
	return (int)d->n_ext++;
}

/* The (container, resource) pairs DRA would serve everywhere. 1 with err set: cannot say. */
static int
collect(const struct rf_cluster *c, const json_t *pod, struct rf_demand *d, struct entry *ents,
	size_t *ret_n, char *err, size_t errlen)
{
	const json_t *lists[2] = { rf_jpath(pod, "spec.initContainers"),
				   rf_jpath(pod, "spec.containers") };
	size_t ci = 0, n = 0;
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < json_array_size(lists[l]); i++, ci++) {
			json_t *reqs = container_requests(json_array_get(lists[l], i));
			size_t nk = json_object_size(reqs), k = 0;
			const char **keys = calloc(nk + 1, sizeof(*keys));
			const char *key;
			json_t *v;
			if (!reqs || !keys) {
				json_decref(reqs);
				free(keys);
				return -ENOMEM;
			}
			json_object_foreach (reqs, key, v)
				keys[k++] = key;
			qsort(keys, nk, sizeof(*keys), key_cmp);
			for (size_t j = 0; j < nk; j++) {
				struct rf_quantity q;
				const char *qs = json_string_value(json_object_get(reqs, keys[j]));
				const struct rf_class *cls;
				if (!dra_ext_name(keys[j]) || !(cls = class_for(c, keys[j])))
					continue;
				/* AsInt64: an extended resource is a whole number */
				if (!qs || rf_quantity_parse(qs, &q) < 0 || q.nano <= 0 ||
				    q.nano % 1000000000 != 0)
					continue;
				int res = resource_index(d, keys[j]);
				if (res < 0 || n == MAX_ENTRIES) {
					snprintf(err, errlen,
						 "the pod asks for more than %d extended resources "
						 "backed by DRA (or %d container requests of them)",
						 RF_MAX_EXT_RESOURCES, MAX_ENTRIES);
					json_decref(reqs);
					free(keys);
					return 1;
				}
				struct entry *e = &ents[n++];
				snprintf(e->name, sizeof(e->name), "container-%zu-request-%zu", ci,
					 j);
				e->class_name = cls->name;
				e->count = rf_quantity_value(q);
				e->res = (unsigned)res;
			}
			free(keys);
			json_decref(reqs);
		}
	}
	qsort(ents, n, sizeof(*ents), entry_cmp);
	*ret_n = n;
	return 0;
}

/* The claim with the requests of the resources in mask. */
static int
build_variant(const struct rf_cluster *c, const char *ns, const char *pod_name,
	      const struct entry *ents, size_t n, unsigned mask, struct rf_claim **ret, char *err,
	      size_t errlen)
{
	json_t *reqs = json_array(), *tmpl;
	const char *why = "unknown";
	for (size_t i = 0; reqs && i < n; i++) {
		if (!(mask & (1u << ents[i].res)))
			continue;
		if (json_array_append_new(reqs, json_pack("{s:s, s:{s:s, s:s, s:I}}", "name",
							  ents[i].name, "exactly",
							  "deviceClassName", ents[i].class_name,
							  "allocationMode", "ExactCount", "count",
							  (json_int_t)ents[i].count)) < 0) {
			json_decref(reqs);
			return -ENOMEM;
		}
	}
	tmpl = reqs ? json_pack("{s:{s:{s:{s:o}}}}", "spec", "spec", "devices", "requests", reqs)
		    : NULL;
	if (!tmpl)
		return -ENOMEM;
	*ret = rf_claim_from_template(c, ns, pod_name, "extended-resources", tmpl, &why);
	json_decref(tmpl);
	if (*ret)
		return 0;
	if (strcmp(why, "unknown") == 0)
		return -ENOMEM;
	snprintf(err, errlen, "extended resources: %s", why);
	return 1;
}

int
rf_demand_add_extended(const struct rf_cluster *c, const json_t *pod, struct rf_demand *d,
		       char *err, size_t errlen)
{
	struct entry *ents;
	size_t n = 0;
	int r;
	if (rf_cluster_dra_version(c) < RF_DRA_1_36)
		return 0; /* DRAExtendedResource is alpha and off up to 1.35 */
	/* a claim kube-scheduler created in an earlier cycle and allocated pins its devices */
	const char *made = json_string_value(
		rf_jpath(pod, "status.extendedResourceClaimStatus.resourceClaimName"));
	const struct rf_claim *done = made ? rf_cluster_claim(c, d->pod_ns, made) : NULL;
	if (done && done->allocated) {
		if (d->n_pinned == RF_MAX_POD_CLAIMS) {
			snprintf(err, errlen, "the pod has more than %d claims", RF_MAX_POD_CLAIMS);
			return 1;
		}
		d->pinned[d->n_pinned++] = done;
		return 0;
	}
	if (!(ents = calloc(MAX_ENTRIES, sizeof(*ents))))
		return -ENOMEM;
	if ((r = collect(c, pod, d, ents, &n, err, errlen)) != 0 || n == 0)
		goto out;
	if (d->n_claims == RF_MAX_POD_CLAIMS) {
		snprintf(err, errlen, "the pod has more than %d claims", RF_MAX_POD_CLAIMS);
		r = 1;
		goto out;
	}
	for (unsigned mask = 1; mask < (1u << d->n_ext); mask++) {
		struct rf_claim *v = NULL;
		if ((r = build_variant(c, d->pod_ns, d->pod_name, ents, n, mask, &v, err,
				       errlen)) != 0)
			goto out;
		d->owned[d->n_owned++] = v;
		d->ext_variants[mask] = v;
	}
	d->claims[d->n_claims++] = d->ext_variants[(1u << d->n_ext) - 1];
out:
	free(ents);
	return r;
}

/* Does node n provide extended resource r through a device plugin (allocatable > 0)? */
static bool
device_plugin_provides(const struct rf_node *n, const char *r)
{
	const char *qs =
		json_string_value(json_object_get(rf_jpath(n->json, "status.allocatable"), r));
	struct rf_quantity q;
	return qs && rf_quantity_parse(qs, &q) == 0 && q.nano > 0;
}

const struct rf_claim *
rf_demand_node_claim(const struct rf_demand *d, size_t i, const struct rf_node *n)
{
	if (!d->n_ext || i + 1 != d->n_claims)
		return d->claims[i];
	unsigned mask = 0;
	for (size_t k = 0; k < d->n_ext; k++)
		if (!n || !device_plugin_provides(n, d->ext_names[k]))
			mask |= 1u << k;
	return mask ? d->ext_variants[mask] : NULL;
}

int
rf_demand_claim_index(const struct rf_demand *d, const struct rf_claim *cl)
{
	for (size_t i = 0; i < d->n_claims; i++)
		if (d->claims[i] == cl)
			return (int)i;
	for (size_t m = 1; d->n_ext && m < ((size_t)1 << d->n_ext); m++)
		if (d->ext_variants[m] == cl)
			return (int)d->n_claims - 1;
	return -1;
}
