/* Building one generation of the cluster model from Kubernetes objects.
 *
 * Runs on one thread (the cache writer); the result is immutable and shared by reference count.
 * Everything a generation owns comes from one arena, so dropping it is a single free of a few
 * chunks. Objects that cannot be understood become warnings, never failures. */
#include "alloc/model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

#define MAX_WARNINGS 256

struct group_rails {
	const char *group;
	const char *node;
	uint64_t rails;
};

struct rf_cluster {
	atomic_int refs;
	struct rf_arena *arena;
	const struct rf_config *cfg;
	struct rf_cel_cache *cel;
	struct rf_cluster_objects objs; /* references held */
	struct rf_cluster_counts counts;

	struct rf_node **nodes;
	size_t n_nodes;
	struct rf_pool **pools;
	size_t n_pools;
	struct rf_device **devices; /* all, sorted by driver, pool, name */
	size_t n_devices;
	struct rf_claim **claims; /* sorted by ns, name */
	size_t n_claims;
	struct rf_class **classes;
	size_t n_classes;
	struct rf_pod **pods;
	size_t n_pods;
	struct rf_pod **pods_by_uid; /* pods with a uid, sorted by it */
	size_t n_pods_by_uid;
	const json_t **templates;
	size_t n_templates;
	struct group_rails *group_rails;
	size_t n_group_rails;

	const char **warnings;
	size_t n_warnings;

	/* class selector results per (class, device): 0 unknown, 1 no, 2 yes, 3 error */
	atomic_uchar *class_memo;
};

static void __attribute__((format(printf, 2, 3)))
warn(struct rf_cluster *c, const char *fmt, ...)
{
	if (c->n_warnings >= MAX_WARNINGS)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char *s = rf_arena_strdup(c->arena, buf);
	if (s)
		c->warnings[c->n_warnings++] = s;
}

const char *
rf_dev_kind_name(enum rf_dev_kind k)
{
	switch (k) {
	case RF_DEV_GPU:
		return "gpu";
	case RF_DEV_NIC:
		return "nic";
	case RF_DEV_OTHER:
		break;
	}
	return "other";
}

/* ---- small sorted-array helpers ---- */

static int
cmp_nsname(const char *ans, const char *an, const char *bns, const char *bn)
{
	int r = strcmp(ans ? ans : "", bns ? bns : "");
	return r ? r : strcmp(an, bn);
}

static int
node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_node *const *)a)->name, (*(struct rf_node *const *)b)->name);
}

static int
claim_cmp(const void *a, const void *b)
{
	const struct rf_claim *x = *(struct rf_claim *const *)a, *y = *(struct rf_claim *const *)b;
	return cmp_nsname(x->ns, x->name, y->ns, y->name);
}

static int
class_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_class *const *)a)->name, (*(struct rf_class *const *)b)->name);
}

static int
pod_cmp(const void *a, const void *b)
{
	const struct rf_pod *x = *(struct rf_pod *const *)a, *y = *(struct rf_pod *const *)b;
	return cmp_nsname(x->ns, x->name, y->ns, y->name);
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
	return cmp_nsname(json_string_value(rf_jpath(x, "metadata.namespace")),
			  json_string_value(rf_jpath(x, "metadata.name")),
			  json_string_value(rf_jpath(y, "metadata.namespace")),
			  json_string_value(rf_jpath(y, "metadata.name")));
}

static int
dev_key_cmp(const char *driver, const char *pool, const char *name, const struct rf_device *d)
{
	int r = strcmp(driver, d->pool->driver);
	if (!r)
		r = strcmp(pool, d->pool->name);
	if (!r)
		r = strcmp(name, d->name);
	return r;
}

static int
dev_cmp(const void *a, const void *b)
{
	const struct rf_device *x = *(struct rf_device *const *)a;
	return dev_key_cmp(x->pool->driver, x->pool->name, x->name,
			   *(struct rf_device *const *)b);
}

static struct rf_device *
find_device(const struct rf_cluster *c, const char *driver, const char *pool, const char *name)
{
	size_t lo = 0, hi = c->n_devices;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = dev_key_cmp(driver, pool, name, c->devices[mid]);
		if (r == 0)
			return c->devices[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ---- attributes and capacities ---- */

static int
attr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rf_attr *)a)->name, ((const struct rf_attr *)b)->name);
}

static int
cap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rf_capacity *)a)->name, ((const struct rf_capacity *)b)->name);
}

static const char *
qualify(struct rf_arena *a, const char *driver, const char *name)
{
	if (strchr(name, '/'))
		return name; /* borrowed from the json, which the generation keeps alive */
	return rf_arena_printf(a, "%s/%s", driver, name);
}

static int
parse_attrs(struct rf_cluster *c, struct rf_device *d, const char *driver, const json_t *attrs)
{
	size_t n = json_object_size(attrs);
	if (!json_is_object(attrs) || n == 0)
		return 0;
	d->attrs = rf_arena_calloc(c->arena, n, sizeof(*d->attrs));
	if (!d->attrs)
		return -ENOMEM;
	const char *key;
	json_t *val;
	json_object_foreach ((json_t *)attrs, key, val) {
		struct rf_attr *at = &d->attrs[d->n_attrs];
		at->name = qualify(c->arena, driver, key);
		if (!at->name)
			return -ENOMEM;
		json_t *v;
		if ((v = json_object_get(val, "int")) && json_is_integer(v)) {
			at->kind = RF_ATTR_INT;
			at->i = json_integer_value(v);
		} else if ((v = json_object_get(val, "bool")) && json_is_boolean(v)) {
			at->kind = RF_ATTR_BOOL;
			at->b = json_is_true(v);
		} else if ((v = json_object_get(val, "string")) && json_is_string(v)) {
			at->kind = RF_ATTR_STRING;
			at->s = json_string_value(v);
		} else if ((v = json_object_get(val, "version")) && json_is_string(v)) {
			at->kind = RF_ATTR_VERSION;
			at->s = json_string_value(v);
		} else {
			at->kind = RF_ATTR_OTHER; /* a newer value kind: tolerated, never matches */
		}
		d->n_attrs++;
	}
	qsort(d->attrs, d->n_attrs, sizeof(*d->attrs), attr_cmp);
	return 0;
}

static int
parse_quantity_list(struct rf_arena *a, const json_t *arr, const struct rf_quantity **ret,
		    size_t *ret_n)
{
	size_t n = json_array_size(arr);
	struct rf_quantity *qs = rf_arena_calloc(a, n ? n : 1, sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (s && rf_quantity_parse(s, &qs[k]) == 0)
			k++;
	}
	*ret = qs;
	*ret_n = k;
	return 0;
}

static int
parse_caps(struct rf_cluster *c, struct rf_device *d, const char *driver, const json_t *caps)
{
	size_t n = json_object_size(caps);
	if (!json_is_object(caps) || n == 0)
		return 0;
	d->caps = rf_arena_calloc(c->arena, n, sizeof(*d->caps));
	if (!d->caps)
		return -ENOMEM;
	const char *key;
	json_t *val;
	json_object_foreach ((json_t *)caps, key, val) {
		struct rf_capacity *cap = &d->caps[d->n_caps];
		const char *qs = rf_jstr(val, "value");
		if (!qs || rf_quantity_parse(qs, &cap->value) < 0) {
			warn(c, "device %s/%s/%s: capacity %s: expected a quantity in value",
			     driver, d->pool->name, d->name, key);
			continue;
		}
		cap->raw_name = key;
		cap->name = qualify(c->arena, driver, key);
		if (!cap->name)
			return -ENOMEM;
		const json_t *pol = json_object_get(val, "requestPolicy");
		if (json_is_object(pol)) {
			cap->has_policy = true;
			const char *def = rf_jstr(pol, "default");
			if (def && rf_quantity_parse(def, &cap->def) == 0)
				cap->has_default = true;
			const json_t *vv = json_object_get(pol, "validValues");
			if (json_is_array(vv) &&
			    parse_quantity_list(c->arena, vv, &cap->valid_values,
						&cap->n_valid_values) < 0)
				return -ENOMEM;
			const json_t *vr = json_object_get(pol, "validRange");
			const char *s;
			if (json_is_object(vr) && (s = rf_jstr(vr, "min")) &&
			    rf_quantity_parse(s, &cap->range_min) == 0) {
				cap->has_range = true;
				if ((s = rf_jstr(vr, "max")) &&
				    rf_quantity_parse(s, &cap->range_max) == 0)
					cap->has_range_max = true;
				if ((s = rf_jstr(vr, "step")) &&
				    rf_quantity_parse(s, &cap->range_step) == 0)
					cap->has_range_step = true;
			}
		}
		d->n_caps++;
	}
	qsort(d->caps, d->n_caps, sizeof(*d->caps), cap_cmp);
	return 0;
}

static int
parse_taints_counters(struct rf_cluster *c, struct rf_device *d, const json_t *dj)
{
	const json_t *taints = json_object_get(dj, "taints");
	size_t n = json_array_size(taints);
	if (n) {
		d->taints = rf_arena_calloc(c->arena, n, sizeof(*d->taints));
		if (!d->taints)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const json_t *t = json_array_get(taints, i);
			const char *key = rf_jstr(t, "key"), *effect = rf_jstr(t, "effect");
			if (!key || !effect)
				continue;
			d->taints[d->n_taints].key = key;
			d->taints[d->n_taints].value = rf_jstr(t, "value");
			d->taints[d->n_taints].effect = effect;
			d->n_taints++;
		}
	}
	const json_t *cc = json_object_get(dj, "consumesCounters");
	n = json_array_size(cc);
	if (n) {
		d->counters = rf_arena_calloc(c->arena, n, sizeof(*d->counters));
		if (!d->counters)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const json_t *e = json_array_get(cc, i);
			const char *set = rf_jstr(e, "counterSet");
			const json_t *ctrs = json_object_get(e, "counters");
			if (!set || !json_is_object(ctrs))
				continue;
			struct rf_counter_consumption *cons = &d->counters[d->n_counters];
			size_t m = json_object_size(ctrs);
			cons->counter_set = set;
			cons->names = rf_arena_calloc(c->arena, m ? m : 1, sizeof(char *));
			cons->values = rf_arena_calloc(c->arena, m ? m : 1, sizeof(*cons->values));
			if (!cons->names || !cons->values)
				return -ENOMEM;
			const char *k;
			json_t *v;
			json_object_foreach ((json_t *)ctrs, k, v) {
				const char *qs = rf_jstr(v, "value");
				if (!qs || rf_quantity_parse(qs, &cons->values[cons->n]) < 0)
					continue;
				cons->names[cons->n++] = k;
			}
			d->n_counters++;
		}
	}
	d->has_binding_conditions = json_array_size(json_object_get(dj, "bindingConditions")) > 0;
	return 0;
}

static bool
strv_has(const struct rf_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

/* Locality facts a device's attributes give (DESIGN section 5, source 2). */
static void
derive_locality(struct rf_device *d, const struct rf_config *cfg)
{
	const struct rf_attr *a;

	d->loc.numa = -1;
	d->rdma = -1;
	d->rail = -1;
	a = rf_attr_find(d->attrs, d->n_attrs, "resource.kubernetes.io/pcieRoot");
	if (a && a->kind == RF_ATTR_STRING && a->s[0])
		d->loc.pcie_root = a->s;
	static const char *const numa_attrs[] = { "resource.kubernetes.io/numaNode",
						  "dra.net/numaNode" };
	for (size_t i = 0; i < 2 && d->loc.numa < 0; i++) {
		a = rf_attr_find(d->attrs, d->n_attrs, numa_attrs[i]);
		if (a && a->kind == RF_ATTR_INT && a->i >= 0 && a->i < 4096) {
			d->loc.numa = (int)a->i;
			d->numa_source = numa_attrs[i];
		}
	}
	static const char *const pci_attrs[] = { "resource.kubernetes.io/pciBusID",
						 "gpu.nvidia.com/pcieBusID", "dra.net/pciAddress" };
	for (size_t i = 0; i < 3 && !d->pci[0]; i++) {
		a = rf_attr_find(d->attrs, d->n_attrs, pci_attrs[i]);
		if (a && a->kind == RF_ATTR_STRING && rf_pci_normalize(a->s, d->pci) < 0)
			d->pci[0] = 0;
	}
	if (!d->pci[0] && strncmp(d->name, "pci-", 4) == 0 && rf_pci_normalize(d->name, d->pci) < 0)
		d->pci[0] = 0;
	a = rf_attr_find(d->attrs, d->n_attrs, "dra.net/rdma");
	if (a && a->kind == RF_ATTR_BOOL)
		d->rdma = a->b;
	if (d->kind == RF_DEV_NIC) {
		for (size_t i = 0; i < d->n_caps && !d->bandwidth; i++) {
			const char *id = strrchr(d->caps[i].name, '/');
			id = id ? id + 1 : d->caps[i].name;
			if (strv_has(&cfg->devices.bandwidth_capacities, d->caps[i].raw_name) ||
			    strv_has(&cfg->devices.bandwidth_capacities, d->caps[i].name) ||
			    strv_has(&cfg->devices.bandwidth_capacities, id))
				d->bandwidth = &d->caps[i];
		}
	}
}

/* ---- slices and pools ---- */

struct slice_ref {
	const json_t *slice;
	const char *driver, *pool, *node;
	int64_t generation, count;
	bool all_nodes;
	const json_t *node_selector;
};

static int
slice_ref_cmp(const void *a, const void *b)
{
	const struct slice_ref *x = a, *y = b;
	int r = strcmp(x->driver, y->driver);
	if (!r)
		r = strcmp(x->pool, y->pool);
	if (!r)
		r = (x->generation < y->generation) - (x->generation > y->generation); /* newest first */
	if (!r) /* stable, deterministic order of slices within a pool */
		r = strcmp(json_string_value(rf_jpath(x->slice, "metadata.name"))
				   ? json_string_value(rf_jpath(x->slice, "metadata.name"))
				   : "",
			   json_string_value(rf_jpath(y->slice, "metadata.name"))
				   ? json_string_value(rf_jpath(y->slice, "metadata.name"))
				   : "");
	return r;
}

/* sharedCounters of the pool's slices at its generation */
static int
parse_counter_sets(struct rf_cluster *c, struct rf_pool *p, const struct slice_ref *refs)
{
	size_t n = 0;
	for (unsigned s = 0; s < p->n_slices; s++)
		n += json_array_size(rf_jpath(refs[s].slice, "spec.sharedCounters"));
	if (!n)
		return 0;
	p->counter_sets = rf_arena_calloc(c->arena, n, sizeof(*p->counter_sets));
	if (!p->counter_sets)
		return -ENOMEM;
	for (unsigned s = 0; s < p->n_slices; s++) {
		const json_t *sets = rf_jpath(refs[s].slice, "spec.sharedCounters");
		for (size_t i = 0; i < json_array_size(sets); i++) {
			const json_t *sj = json_array_get(sets, i);
			const char *name = rf_jstr(sj, "name");
			const json_t *ctrs = json_object_get(sj, "counters");
			if (!name || !json_is_object(ctrs)) {
				warn(c, "pool %s/%s: a sharedCounters entry lacks name or counters; "
					"ignored",
				     p->driver, p->name);
				continue;
			}
			struct rf_counter_set *cs = &p->counter_sets[p->n_counter_sets++];
			size_t m = json_object_size(ctrs);
			cs->name = name;
			cs->slice = s;
			cs->names = rf_arena_calloc(c->arena, m ? m : 1, sizeof(char *));
			cs->values = rf_arena_calloc(c->arena, m ? m : 1, sizeof(*cs->values));
			if (!cs->names || !cs->values)
				return -ENOMEM;
			const char *k;
			json_t *v;
			json_object_foreach ((json_t *)ctrs, k, v) {
				const char *qs = rf_jstr(v, "value");
				if (!qs || rf_quantity_parse(qs, &cs->values[cs->n]) < 0) {
					warn(c, "pool %s/%s: counter %s/%s is not a quantity; ignored",
					     p->driver, p->name, name, k);
					continue;
				}
				cs->names[cs->n++] = k;
			}
		}
	}
	return 0;
}

const struct rf_counter_set *
rf_pool_counter_set(const struct rf_pool *p, const char *name, unsigned slice,
		    enum rf_dra_version ver)
{
	for (size_t i = 0; i < p->n_counter_sets; i++) {
		const struct rf_counter_set *cs = &p->counter_sets[i];
		if (strcmp(cs->name, name) == 0 && (ver != RF_DRA_1_34 || cs->slice == slice))
			return cs;
	}
	return NULL;
}

static int
build_pools(struct rf_cluster *c, const json_t *slices)
{
	size_t n = json_array_size(slices), k = 0;
	struct slice_ref *refs = calloc(n ? n : 1, sizeof(*refs));
	int r = -ENOMEM;
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(slices, i);
		const json_t *spec = json_object_get(s, "spec");
		const char *name = json_string_value(rf_jpath(s, "metadata.name"));
		if (!name)
			name = "?";
		struct slice_ref *sr = &refs[k];
		sr->slice = s;
		sr->driver = rf_jstr(spec, "driver");
		sr->pool = json_string_value(rf_jpath(spec, "pool.name"));
		sr->generation = rf_jint(rf_jpath(spec, "pool"), "generation", -1);
		sr->count = rf_jint(rf_jpath(spec, "pool"), "resourceSliceCount", -1);
		sr->node = rf_jstr(spec, "nodeName");
		sr->all_nodes = rf_jbool(spec, "allNodes", false);
		sr->node_selector = json_object_get(spec, "nodeSelector");
		if (!sr->driver || !sr->pool || sr->generation < 0 || sr->count < 1) {
			warn(c, "resourceslice %s: expected spec.driver, spec.pool.name, "
				"spec.pool.generation >= 0 and resourceSliceCount >= 1; skipped",
			     name);
			continue;
		}
		if (rf_jbool(spec, "perDeviceNodeSelection", false)) {
			warn(c, "resourceslice %s: perDeviceNodeSelection is not supported; skipped",
			     name);
			continue;
		}
		if (!sr->node && !sr->all_nodes && !json_is_object(sr->node_selector) &&
		    !json_object_get(spec, "sharedCounters")) {
			warn(c, "resourceslice %s: no nodeName, allNodes or nodeSelector; skipped",
			     name);
			continue;
		}
		k++;
	}
	qsort(refs, k, sizeof(*refs), slice_ref_cmp);

	/* count pools, keeping only the highest generation of each */
	c->pools = rf_arena_calloc(c->arena, k ? k : 1, sizeof(*c->pools));
	if (!c->pools)
		goto out;
	size_t ndev_total = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && strcmp(refs[j].driver, refs[i].driver) == 0 &&
		       strcmp(refs[j].pool, refs[i].pool) == 0)
			j++;
		struct rf_pool *p = rf_arena_alloc(c->arena, sizeof(*p));
		if (!p)
			goto out;
		p->driver = refs[i].driver;
		p->name = refs[i].pool;
		p->generation = refs[i].generation;
		p->slice_count = refs[i].count;
		p->node = refs[i].node;
		size_t ndev = 0;
		for (size_t s = i; s < j && refs[s].generation == p->generation; s++) {
			p->n_slices++;
			ndev += json_array_size(rf_jpath(refs[s].slice, "spec.devices"));
			if (!refs[s].node || !p->node || strcmp(refs[s].node, p->node) != 0)
				p->node = NULL; /* not node-local as a whole */
		}
		p->complete = (int64_t)p->n_slices == p->slice_count;
		if (parse_counter_sets(c, p, refs + i) < 0)
			goto out;
		p->devices = rf_arena_calloc(c->arena, ndev ? ndev : 1, sizeof(*p->devices));
		if (!p->devices)
			goto out;
		for (size_t s = i; s < i + p->n_slices; s++) {
			const json_t *devs = rf_jpath(refs[s].slice, "spec.devices");
			for (size_t di = 0; di < json_array_size(devs); di++) {
				const json_t *dj = json_array_get(devs, di);
				const char *dname = rf_jstr(dj, "name");
				if (!dname) {
					warn(c, "pool %s/%s: device without a name; skipped",
					     p->driver, p->name);
					continue;
				}
				struct rf_device *d = rf_arena_alloc(c->arena, sizeof(*d));
				if (!d)
					goto out;
				d->name = dname;
				d->pool = p;
				d->slice = (unsigned)(s - i);
				d->json = dj;
				d->idx = (unsigned)p->n_devices;
				if (strv_has(&c->cfg->devices.gpu_drivers, p->driver))
					d->kind = RF_DEV_GPU;
				else if (strv_has(&c->cfg->devices.nic_drivers, p->driver))
					d->kind = RF_DEV_NIC;
				d->allow_multiple = rf_jbool(dj, "allowMultipleAllocations", false);
				if (parse_attrs(c, d, p->driver, json_object_get(dj, "attributes")) < 0 ||
				    parse_caps(c, d, p->driver, json_object_get(dj, "capacity")) < 0 ||
				    parse_taints_counters(c, d, dj) < 0)
					goto out;
				derive_locality(d, c->cfg);
				for (size_t q = 0; q < p->n_devices; q++)
					if (strcmp(p->devices[q]->name, dname) == 0)
						p->invalid = true;
				p->devices[p->n_devices++] = d;
			}
		}
		if (p->invalid)
			warn(c, "pool %s/%s: duplicate device names; the allocator treats the pool "
				"as invalid",
			     p->driver, p->name);
		ndev_total += p->n_devices;
		/* remember how the pool selects nodes: the newest slice decides */
		if (!p->node && refs[i].all_nodes)
			p->node = NULL;
		c->pools[c->n_pools++] = p;
		i = j;
	}
	c->devices = rf_arena_calloc(c->arena, ndev_total ? ndev_total : 1, sizeof(*c->devices));
	if (!c->devices)
		goto out;
	for (size_t i = 0; i < c->n_pools; i++)
		for (size_t d = 0; d < c->pools[i]->n_devices; d++)
			c->devices[c->n_devices++] = c->pools[i]->devices[d];
	qsort(c->devices, c->n_devices, sizeof(*c->devices), dev_cmp);
	for (size_t i = 0; i < c->n_devices; i++)
		c->devices[i]->gidx = (unsigned)i;
	r = 0;
out:
	free(refs);
	return r;
}

/* ---- nodes ---- */

static struct rf_node *
find_node(const struct rf_cluster *c, const char *name)
{
	size_t lo = 0, hi = c->n_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, c->nodes[mid]->name);
		if (r == 0)
			return c->nodes[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static bool
node_ready(const json_t *node)
{
	const json_t *conds = rf_jpath(node, "status.conditions");
	for (size_t i = 0; i < json_array_size(conds); i++) {
		const json_t *cond = json_array_get(conds, i);
		const char *t = rf_jstr(cond, "type");
		if (t && strcmp(t, "Ready") == 0) {
			const char *s = rf_jstr(cond, "status");
			return s && strcmp(s, "True") == 0;
		}
	}
	return true; /* no conditions at all: a hand-written snapshot; do not second-guess it */
}

static int
build_nodes(struct rf_cluster *c, const json_t *nodes)
{
	size_t n = json_array_size(nodes);
	/* nodes named only by slices get an entry too, so their devices are visible */
	c->nodes = rf_arena_calloc(c->arena, n + c->n_pools + 1, sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *nj = json_array_get(nodes, i);
		const char *name = json_string_value(rf_jpath(nj, "metadata.name"));
		if (!name || !name[0]) {
			warn(c, "node #%zu: no metadata.name; skipped", i);
			continue;
		}
		struct rf_node *nd = rf_arena_alloc(c->arena, sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		nd->name = name;
		nd->json = nj;
		nd->labels = rf_jpath(nj, "metadata.labels");
		nd->annotations = rf_jpath(nj, "metadata.annotations");
		nd->ready = node_ready(nj);
		c->nodes[c->n_nodes++] = nd;
	}
	qsort(c->nodes, c->n_nodes, sizeof(*c->nodes), node_cmp);
	/* drop duplicates (keep the first) */
	size_t w = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (w && strcmp(c->nodes[w - 1]->name, c->nodes[i]->name) == 0) {
			warn(c, "node %s: listed twice; the second copy is ignored",
			     c->nodes[i]->name);
			continue;
		}
		c->nodes[w++] = c->nodes[i];
	}
	c->n_nodes = w;
	size_t known = c->n_nodes;
	for (size_t i = 0; i < c->n_pools; i++) {
		const char *pn = c->pools[i]->node;
		if (!pn || find_node(c, pn))
			continue;
		bool dup = false;
		for (size_t j = known; j < c->n_nodes; j++)
			if (strcmp(c->nodes[j]->name, pn) == 0)
				dup = true;
		if (dup)
			continue;
		struct rf_node *nd = rf_arena_alloc(c->arena, sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		nd->name = pn;
		nd->ready = true;
		c->nodes[c->n_nodes++] = nd;
	}
	qsort(c->nodes, c->n_nodes, sizeof(*c->nodes), node_cmp);
	return 0;
}

/* NodeSelector (one term must match; all requirements of a term must hold). */
static bool
requirement_matches(const struct rf_node *n, const json_t *req, bool field)
{
	const char *key = rf_jstr(req, "key"), *op = rf_jstr(req, "operator");
	const json_t *vals = json_object_get(req, "values");
	if (!key || !op)
		return false;
	const char *have = field ? (strcmp(key, "metadata.name") == 0 ? n->name : NULL)
				 : rf_jstr(n->labels, key);
	if (strcmp(op, "Exists") == 0)
		return have != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return have == NULL;
	bool in = false;
	for (size_t i = 0; have && i < json_array_size(vals); i++) {
		const char *v = json_string_value(json_array_get(vals, i));
		if (v && strcmp(v, have) == 0)
			in = true;
	}
	if (strcmp(op, "In") == 0)
		return in;
	if (strcmp(op, "NotIn") == 0)
		return !in;
	if ((strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) && have &&
	    json_array_size(vals) == 1) {
		const char *v = json_string_value(json_array_get(vals, 0));
		char *e1, *e2;
		long long a = strtoll(have, &e1, 10), b = v ? strtoll(v, &e2, 10) : 0;
		if (!v || *e1 || *e2)
			return false;
		return op[0] == 'G' ? a > b : a < b;
	}
	return false;
}

static bool
node_selector_matches(const struct rf_node *n, const json_t *sel)
{
	const json_t *terms = json_object_get(sel, "nodeSelectorTerms");
	for (size_t t = 0; t < json_array_size(terms); t++) {
		const json_t *term = json_array_get(terms, t);
		const json_t *exprs = json_object_get(term, "matchExpressions");
		const json_t *fields = json_object_get(term, "matchFields");
		bool ok = json_array_size(exprs) + json_array_size(fields) > 0;
		for (size_t i = 0; ok && i < json_array_size(exprs); i++)
			ok = requirement_matches(n, json_array_get(exprs, i), false);
		for (size_t i = 0; ok && i < json_array_size(fields); i++)
			ok = requirement_matches(n, json_array_get(fields, i), true);
		if (ok)
			return true;
	}
	return false;
}

static bool
pool_on_node(const struct rf_cluster *c, const struct rf_pool *p, const struct rf_node *n,
	     const json_t *slices)
{
	if (p->node)
		return strcmp(p->node, n->name) == 0;
	/* a pool whose slices use allNodes / nodeSelector: look at one of its slices */
	for (size_t i = 0; i < json_array_size(slices); i++) {
		const json_t *s = json_array_get(slices, i);
		const json_t *spec = json_object_get(s, "spec");
		const char *drv = rf_jstr(spec, "driver");
		const char *pool = json_string_value(rf_jpath(spec, "pool.name"));
		if (!drv || !pool || strcmp(drv, p->driver) || strcmp(pool, p->name) ||
		    rf_jint(rf_jpath(spec, "pool"), "generation", -1) != p->generation)
			continue;
		const char *nn = rf_jstr(spec, "nodeName");
		if (nn)
			return strcmp(nn, n->name) == 0;
		if (rf_jbool(spec, "allNodes", false))
			return true;
		const json_t *sel = json_object_get(spec, "nodeSelector");
		if (json_is_object(sel))
			return node_selector_matches(n, sel);
	}
	(void)c;
	return false;
}

static int
attach_pools(struct rf_cluster *c, const json_t *slices)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct rf_node *n = c->nodes[i];
		size_t np = 0, nd = 0;
		for (size_t p = 0; p < c->n_pools; p++)
			if (pool_on_node(c, c->pools[p], n, slices)) {
				np++;
				nd += c->pools[p]->n_devices;
			}
		if (!np)
			continue;
		n->pools = rf_arena_calloc(c->arena, np, sizeof(*n->pools));
		n->devices = rf_arena_calloc(c->arena, nd ? nd : 1, sizeof(*n->devices));
		if (!n->pools || !n->devices)
			return -ENOMEM;
		for (size_t p = 0; p < c->n_pools; p++) {
			struct rf_pool *pool = c->pools[p];
			if (!pool_on_node(c, pool, n, slices))
				continue;
			n->pools[n->n_pools++] = pool;
			for (size_t d = 0; d < pool->n_devices; d++)
				n->devices[n->n_devices++] = pool->devices[d];
		}
	}
	return 0;
}

/* A GPU without a NUMA attribute inherits it from a NIC on its PCIe root (DESIGN section 5). */
static void
inherit_numa(struct rf_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++) {
		struct rf_device *g = n->devices[i];
		if (g->loc.numa >= 0 || !g->loc.pcie_root)
			continue;
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct rf_device *o = n->devices[j];
			if (o->loc.numa >= 0 && o->loc.pcie_root &&
			    strcmp(o->loc.pcie_root, g->loc.pcie_root) == 0) {
				g->loc.numa = o->loc.numa;
				g->numa_source = "nic-on-root";
				break;
			}
		}
	}
}

static int
gpu_order_cmp(const struct rf_device *a, const struct rf_device *b)
{
	if (a->pci[0] && b->pci[0])
		return rf_pci_cmp(a->pci, b->pci);
	if (a->pci[0] != b->pci[0])
		return a->pci[0] ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* A MIG partition (NVIDIA type "mig", or anything naming a parent GPU) is not a GPU of its own. */
static bool
is_partition(const struct rf_device *d)
{
	const struct rf_attr *t = rf_attr_find(d->attrs, d->n_attrs, "gpu.nvidia.com/type");
	return (t && t->kind == RF_ATTR_STRING && strcmp(t->s, "mig") == 0) ||
	       rf_attr_find(d->attrs, d->n_attrs, "gpu.nvidia.com/parentUUID");
}

/* Rails by gpu-pairing (DESIGN section 5): each rail NIC pairs with its nearest GPU (ties by PCI
 * address) and takes that GPU's rank in PCI-address order; or an integer attribute. */
static void
assign_rails(const struct rf_cluster *c, struct rf_node *n)
{
	const char *rails = c->cfg->devices.rails;
	if (rails && strncmp(rails, "attribute:", 10) == 0) {
		const char *attr = rails + 10;
		for (size_t i = 0; i < n->n_devices; i++) {
			struct rf_device *d = n->devices[i];
			const struct rf_attr *a = rf_attr_find(d->attrs, d->n_attrs, attr);
			if (d->kind == RF_DEV_NIC && a && a->kind == RF_ATTR_INT && a->i >= 0 &&
			    a->i < 64) {
				d->rail = (int)a->i;
				if ((unsigned)d->rail + 1 > n->n_rails)
					n->n_rails = (unsigned)d->rail + 1;
			}
		}
		return;
	}
	for (size_t i = 0; i < n->n_devices; i++) {
		struct rf_device *nic = n->devices[i];
		if (nic->kind != RF_DEV_NIC || nic->rdma == 0)
			continue;
		const struct rf_device *best = NULL;
		enum rf_level best_level = RF_LEVEL_UNKNOWN;
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct rf_device *g = n->devices[j];
			if (g->kind != RF_DEV_GPU || is_partition(g))
				continue; /* partitions are not separate rails */
			enum rf_level l = rf_node_level(n, g, nic, NULL);
			if (!best || l < best_level ||
			    (l == best_level && gpu_order_cmp(g, best) < 0)) {
				best = g;
				best_level = l;
			}
		}
		/* without an RDMA attribute, only a NIC that shares a root with a GPU is a rail */
		if (!best || (nic->rdma < 0 && best_level > RF_LEVEL_PHB) ||
		    best_level == RF_LEVEL_UNKNOWN)
			continue;
		int rank = 0;
		for (size_t j = 0; j < n->n_devices; j++) {
			const struct rf_device *g = n->devices[j];
			if (g->kind == RF_DEV_GPU && g != best && !is_partition(g) &&
			    gpu_order_cmp(g, best) < 0)
				rank++;
		}
		nic->rail = rank < 64 ? rank : -1;
		if (nic->rail >= 0 && (unsigned)nic->rail + 1 > n->n_rails)
			n->n_rails = (unsigned)nic->rail + 1;
	}
}

/* ---- the node's hwloc annotation (DESIGN section 5, source 1) ---- */

/* Decode the annotation named by devices.topologyAnnotation. A malformed one, or one that names
 * none of the node's DRA devices, is a warning (n->topo_error says why); only OOM fails. */
static int
attach_topology(struct rf_cluster *c, struct rf_node *n)
{
	const char *key = c->cfg->devices.topology_annotation;
	const json_t *v = key && key[0] ? json_object_get(n->annotations, key) : NULL;
	struct rf_topo_annotation *a = NULL;
	char err[256];
	int r;

	if (!v)
		return 0;
	if (!json_is_string(v)) {
		r = -EINVAL;
		snprintf(err, sizeof(err), "expected a string");
	} else {
		r = rf_topo_annotation_decode(json_string_value(v), json_string_length(v), &a, err,
					      sizeof(err));
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		n->topo_error = rf_arena_printf(c->arena, "annotation %s: %s", key, err);
		if (!n->topo_error)
			return -ENOMEM;
		warn(c, "node %s: %s; using DRA attributes", n->name, n->topo_error);
		return 0;
	}
	n->topo = a;
	size_t with_pci = 0, matched = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind == RF_DEV_OTHER || !d->pci[0])
			continue;
		with_pci++;
		matched += rf_topo_annotation_find(a, d->pci) >= 0;
	}
	if (with_pci && !matched) {
		n->topo_error = rf_arena_printf(
			c->arena,
			"annotation %s: none of its %zu PCI addresses matches one of the %zu GPUs and "
			"NICs of the node's ResourceSlices",
			key, rf_topo_annotation_n_devices(a), with_pci);
		if (!n->topo_error)
			return -ENOMEM;
		warn(c, "node %s: %s; using DRA attributes", n->name, n->topo_error);
	}
	return 0;
}

enum rf_level
rf_node_level(const struct rf_node *n, const struct rf_device *a, const struct rf_device *b,
	      enum rf_level_source *ret_src)
{
	enum rf_level l;
	/* the annotation when it knows both devices (UNKNOWN there means hwloc could not tell) */
	if (n && n->topo && a->pci[0] && b->pci[0] &&
	    rf_topo_annotation_level(n->topo, a->pci, b->pci, &l) == 0 && l != RF_LEVEL_UNKNOWN) {
		if (ret_src)
			*ret_src = RF_SRC_ANNOTATION;
		return l;
	}
	return rf_locality_level(&a->loc, &b->loc, ret_src);
}

struct rf_quantity
rf_claim_consumed(const struct rf_claim *cl, const struct rf_device *d,
		  const struct rf_capacity *cap)
{
	struct rf_quantity sum = { 0 }, q;
	for (size_t r = 0; r < cl->n_results; r++) {
		const struct rf_alloc_result *ar = &cl->results[r];
		if (ar->dev != d || !ar->share_id || ar->admin_access)
			continue;
		const char *qs = rf_jstr(ar->consumed, cap->raw_name);
		if (qs && rf_quantity_parse(qs, &q) == 0)
			sum = rf_quantity_add(sum, q);
	}
	return sum;
}

bool
rf_device_is_free(const struct rf_device *d)
{
	return d->holder == NULL;
}

struct rf_quantity
rf_device_bw_capacity(const struct rf_device *d, const struct rf_config *cfg,
		      const char **ret_source)
{
	if (d->bandwidth) {
		if (ret_source)
			*ret_source = "slice";
		return d->bandwidth->value;
	}
	if (ret_source)
		*ret_source = "default";
	return cfg->devices.default_nic_bandwidth;
}

struct rf_quantity
rf_device_bw_used(const struct rf_device *d)
{
	struct rf_quantity used = d->annotated_bw;
	if (d->bandwidth && d->consumed)
		used = rf_quantity_add(used, d->consumed[d->bandwidth - d->caps]);
	return used;
}

/* ---- classes, claims, pods ---- */

static int
build_classes(struct rf_cluster *c, const json_t *classes)
{
	size_t n = json_array_size(classes);
	c->classes = rf_arena_calloc(c->arena, n ? n : 1, sizeof(*c->classes));
	if (!c->classes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *cj = json_array_get(classes, i);
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		if (!name) {
			warn(c, "deviceclass #%zu: no metadata.name; skipped", i);
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
			const char *expr =
				json_string_value(rf_jpath(json_array_get(sels, s), "cel.expression"));
			struct rf_cel_error err = { 0 };
			if (!expr) {
				cl->unsupported = rf_arena_printf(
					c->arena, "deviceclass %s: selector #%zu has no cel.expression",
					name, s);
				break;
			}
			int r = rf_cel_cache_get(c->cel, expr, &cl->selectors[cl->n_selectors], &err);
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				cl->unsupported = rf_arena_printf(
					c->arena, "deviceclass %s: selector %s: %s", name, expr,
					err.msg);
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

static int
build_claims(struct rf_cluster *c, const json_t *claims)
{
	size_t n = json_array_size(claims);
	c->claims = rf_arena_calloc(c->arena, n ? n : 1, sizeof(*c->claims));
	if (!c->claims)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *cj = json_array_get(claims, i);
		const char *name = json_string_value(rf_jpath(cj, "metadata.name"));
		const char *ns = json_string_value(rf_jpath(cj, "metadata.namespace"));
		if (!name || !ns) {
			warn(c, "resourceclaim #%zu: no metadata.name/namespace; skipped", i);
			continue;
		}
		struct rf_claim *cl = rf_arena_alloc(c->arena, sizeof(*cl));
		if (!cl)
			return -ENOMEM;
		cl->ns = ns;
		cl->name = name;
		cl->uid = json_string_value(rf_jpath(cj, "metadata.uid"));
		cl->json = cj;
		if (rf_claim_parse_spec(c->arena, c, cl, json_object_get(cj, "spec")) < 0)
			return -ENOMEM;
		const json_t *alloc = rf_jpath(cj, "status.allocation");
		if (json_is_object(alloc)) {
			cl->allocated = true;
			cl->alloc_node = node_from_selector(json_object_get(alloc, "nodeSelector"));
			const json_t *res = rf_jpath(alloc, "devices.results");
			size_t nr = json_array_size(res);
			cl->results = rf_arena_calloc(c->arena, nr ? nr : 1, sizeof(*cl->results));
			if (!cl->results)
				return -ENOMEM;
			for (size_t r = 0; r < nr; r++) {
				const json_t *rj = json_array_get(res, r);
				struct rf_alloc_result *ar = &cl->results[cl->n_results];
				ar->request = rf_jstr(rj, "request");
				ar->driver = rf_jstr(rj, "driver");
				ar->pool = rf_jstr(rj, "pool");
				ar->device = rf_jstr(rj, "device");
				if (!ar->request || !ar->driver || !ar->pool || !ar->device) {
					warn(c, "resourceclaim %s/%s: allocation result #%zu lacks "
						"request/driver/pool/device; ignored",
					     ns, name, r);
					continue;
				}
				ar->admin_access = rf_jbool(rj, "adminAccess", false);
				ar->share_id = rf_jstr(rj, "shareID");
				ar->consumed = json_object_get(rj, "consumedCapacity");
				ar->dev = find_device(c, ar->driver, ar->pool, ar->device);
				cl->n_results++;
			}
		}
		const json_t *rf = rf_jpath(cj, "status.reservedFor");
		size_t nrf = json_array_size(rf);
		if (nrf) {
			cl->reserved_uids = rf_arena_calloc(c->arena, nrf, sizeof(char *));
			if (!cl->reserved_uids)
				return -ENOMEM;
			for (size_t k = 0; k < nrf; k++) {
				const char *uid = rf_jstr(json_array_get(rf, k), "uid");
				if (uid)
					cl->reserved_uids[cl->n_reserved++] = uid;
			}
		}
		c->claims[c->n_claims++] = cl;
	}
	qsort(c->claims, c->n_claims, sizeof(*c->claims), claim_cmp);
	return 0;
}

/* Fold allocations into device usage (dra-api.md section 10.1). */
static int
account_usage(struct rf_cluster *c)
{
	for (size_t i = 0; i < c->n_claims; i++) {
		struct rf_claim *cl = c->claims[i];
		for (size_t r = 0; r < cl->n_results; r++) {
			struct rf_alloc_result *ar = &cl->results[r];
			struct rf_device *d = ar->dev;
			if (!d || ar->admin_access)
				continue;
			if (ar->share_id) {
				d->n_shares++;
				if (!d->consumed && d->n_caps) {
					d->consumed = rf_arena_calloc(c->arena, d->n_caps,
								      sizeof(*d->consumed));
					if (!d->consumed)
						return -ENOMEM;
				}
				const char *k;
				json_t *v;
				json_object_foreach ((json_t *)ar->consumed, k, v) {
					struct rf_quantity q;
					const char *qs = json_string_value(v);
					const struct rf_capacity *cap = NULL;
					for (size_t ci = 0; ci < d->n_caps; ci++)
						if (strcmp(d->caps[ci].raw_name, k) == 0)
							cap = &d->caps[ci];
					if (!cap || !qs || rf_quantity_parse(qs, &q) < 0) {
						warn(c, "resourceclaim %s/%s: consumedCapacity %s of %s "
							"is not a capacity of the device or not a "
							"quantity; ignored",
						     cl->ns, cl->name, k, d->name);
						continue;
					}
					d->consumed[cap - d->caps] =
						rf_quantity_add(d->consumed[cap - d->caps], q);
				}
				continue;
			}
			if (d->holder && d->holder != cl)
				warn(c, "device %s/%s/%s is allocated by both %s/%s and %s/%s",
				     d->pool->driver, d->pool->name, d->name, d->holder->ns,
				     d->holder->name, cl->ns, cl->name);
			if (!d->holder)
				d->holder = cl;
		}
	}
	return 0;
}

static int
parse_bw_annotation(struct rf_cluster *c, struct rf_pod *p, const char *key, bool *has,
		    struct rf_quantity *q)
{
	const char *v = rf_jstr(p->annotations, key);
	if (!v)
		return 0;
	struct rf_quantity tmp;
	if (rf_quantity_parse(v, &tmp) < 0 || rf_quantity_cmp(tmp, rf_quantity_from_int(0)) < 0) {
		if (!p->bad_annotation)
			p->bad_annotation = rf_arena_printf(
				c->arena, "annotation %s: expected a non-negative quantity such as 100G, got \"%s\"",
				key, v);
		return p->bad_annotation ? 0 : -ENOMEM;
	}
	*has = true;
	*q = tmp;
	return 0;
}

static int
build_pods(struct rf_cluster *c, const json_t *pods)
{
	size_t n = json_array_size(pods);
	c->pods = rf_arena_calloc(c->arena, n ? n : 1, sizeof(*c->pods));
	if (!c->pods)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *pj = json_array_get(pods, i);
		struct rf_pod *p = rf_arena_alloc(c->arena, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->name = json_string_value(rf_jpath(pj, "metadata.name"));
		p->ns = json_string_value(rf_jpath(pj, "metadata.namespace"));
		if (!p->name) {
			warn(c, "pod #%zu: no metadata.name; skipped", i);
			continue;
		}
		if (!p->ns)
			p->ns = "default";
		p->uid = json_string_value(rf_jpath(pj, "metadata.uid"));
		p->node_name = json_string_value(rf_jpath(pj, "spec.nodeName"));
		p->phase = json_string_value(rf_jpath(pj, "status.phase"));
		p->json = pj;
		p->labels = rf_jpath(pj, "metadata.labels");
		p->annotations = rf_jpath(pj, "metadata.annotations");
		if (parse_bw_annotation(c, p, "railfit.io/nic-bandwidth", &p->has_nic_bw,
					&p->nic_bw) < 0 ||
		    parse_bw_annotation(c, p, "kubernetes.io/egress-bandwidth", &p->has_egress,
					&p->egress) < 0 ||
		    parse_bw_annotation(c, p, "kubernetes.io/ingress-bandwidth", &p->has_ingress,
					&p->ingress) < 0)
			return -ENOMEM;
		const char *g = rf_jstr(p->annotations, "railfit.io/group");
		for (size_t l = 0; !g && l < c->cfg->groups.labels.n; l++)
			g = rf_jstr(p->labels, c->cfg->groups.labels.v[l]);
		if (g && g[0] && !(p->group = rf_arena_printf(c->arena, "%s/%s", p->ns, g)))
			return -ENOMEM;
		c->pods[c->n_pods++] = p;
	}
	qsort(c->pods, c->n_pods, sizeof(*c->pods), pod_cmp);
	c->pods_by_uid = rf_arena_calloc(c->arena, c->n_pods + 1, sizeof(*c->pods_by_uid));
	if (!c->pods_by_uid)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_pods; i++)
		if (c->pods[i]->uid)
			c->pods_by_uid[c->n_pods_by_uid++] = c->pods[i];
	qsort(c->pods_by_uid, c->n_pods_by_uid, sizeof(*c->pods_by_uid), pod_uid_cmp);
	return 0;
}

static bool
pod_terminated(const struct rf_pod *p)
{
	return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

static int
group_rails_cmp(const void *a, const void *b)
{
	const struct group_rails *x = a, *y = b;
	int r = strcmp(x->group, y->group);
	return r ? r : strcmp(x->node, y->node);
}

/* Pods on nodes: front-end bandwidth, annotated NIC bandwidth, rails of groups. */
static int
place_pods(struct rf_cluster *c)
{
	c->group_rails = rf_arena_calloc(c->arena, c->n_pods + 1, sizeof(*c->group_rails));
	if (!c->group_rails)
		return -ENOMEM;
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
				warn(c, "node %s: annotation railfit.io/frontend-bandwidth: expected "
					"a positive quantity such as 100G, got \"%s\"; using "
					"devices.frontendBandwidth",
				     n->name, fe);
			}
		}
	}
	/* two passes: count, then fill the per-node pod arrays */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->n_pods; i++) {
			struct rf_pod *p = c->pods[i];
			if (!p->node_name || pod_terminated(p))
				continue;
			struct rf_node *n = find_node(c, p->node_name);
			if (!n)
				continue;
			if (pass == 0) {
				n->n_pods++;
				continue;
			}
			n->pods[n->n_pods++] = p;
			if (p->has_egress)
				n->fe_egress_used = rf_quantity_add(n->fe_egress_used, p->egress);
			if (p->has_ingress)
				n->fe_ingress_used = rf_quantity_add(n->fe_ingress_used, p->ingress);
			/* devices of its claims: NIC bandwidth and rails */
			const json_t *entries = rf_jpath(p->json, "spec.resourceClaims");
			uint64_t rails = 0;
			for (size_t e = 0; e < json_array_size(entries); e++) {
				const char *cn = rf_pod_claim_name(p->json, json_array_get(entries, e));
				const struct rf_claim *cl = cn ? rf_cluster_claim(c, p->ns, cn) : NULL;
				for (size_t r = 0; cl && r < cl->n_results; r++) {
					struct rf_device *d = cl->results[r].dev;
					if (!d || d->kind != RF_DEV_NIC || cl->results[r].admin_access)
						continue;
					if (p->has_nic_bw)
						d->annotated_bw = rf_quantity_add(d->annotated_bw,
										  p->nic_bw);
					if (d->rail >= 0)
						rails |= UINT64_C(1) << d->rail;
				}
			}
			if (p->group && rails) {
				struct group_rails *gr = &c->group_rails[c->n_group_rails++];
				gr->group = p->group;
				gr->node = n->name;
				gr->rails = rails;
			}
		}
		if (pass == 0) {
			for (size_t ni = 0; ni < c->n_nodes; ni++) {
				struct rf_node *n = c->nodes[ni];
				n->pods = rf_arena_calloc(c->arena, n->n_pods ? n->n_pods : 1,
							  sizeof(*n->pods));
				if (!n->pods)
					return -ENOMEM;
				n->n_pods = 0;
			}
		}
	}
	qsort(c->group_rails, c->n_group_rails, sizeof(*c->group_rails), group_rails_cmp);
	return 0;
}

static void
node_totals(struct rf_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind == RF_DEV_GPU && !is_partition(d)) {
			n->n_gpus++;
			n->n_gpus_free += d->holder == NULL;
		} else if (d->kind == RF_DEV_NIC) {
			n->n_nics++;
			n->n_nics_free += d->holder == NULL;
		}
	}
}

static int
hold_objects(struct rf_cluster *c, const struct rf_cluster_objects *objs)
{
	json_t **dst[] = { &c->objs.nodes,  &c->objs.pods,    &c->objs.slices,
			   &c->objs.claims, &c->objs.classes, &c->objs.templates };
	json_t *src[] = { objs->nodes,  objs->pods,    objs->slices,
			  objs->claims, objs->classes, objs->templates };
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		*dst[i] = json_is_array(src[i]) ? json_incref(src[i]) : json_array();
		if (!*dst[i])
			return -ENOMEM;
	}
	return 0;
}

static int
build_templates(struct rf_cluster *c)
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

int
rf_cluster_build(const struct rf_cluster_objects *objs, const struct rf_config *cfg,
		 struct rf_cel_cache *cel, struct rf_cluster **ret)
{
	struct rf_cluster *c = calloc(1, sizeof(*c));
	int r = -ENOMEM;
	if (!c)
		return -ENOMEM;
	atomic_init(&c->refs, 1);
	c->cfg = cfg;
	c->cel = cel;
	c->arena = rf_arena_new();
	if (!c->arena)
		goto fail;
	c->warnings = rf_arena_calloc(c->arena, MAX_WARNINGS, sizeof(char *));
	if (!c->warnings || hold_objects(c, objs) < 0)
		goto fail;
	c->counts = (struct rf_cluster_counts){
		.nodes = json_array_size(c->objs.nodes),
		.pods = json_array_size(c->objs.pods),
		.slices = json_array_size(c->objs.slices),
		.claims = json_array_size(c->objs.claims),
		.classes = json_array_size(c->objs.classes),
		.templates = json_array_size(c->objs.templates),
	};
	if ((r = build_pools(c, c->objs.slices)) < 0 || (r = build_nodes(c, c->objs.nodes)) < 0 ||
	    (r = attach_pools(c, c->objs.slices)) < 0 || (r = build_classes(c, c->objs.classes)) < 0 ||
	    (r = build_claims(c, c->objs.claims)) < 0 || (r = account_usage(c)) < 0 ||
	    (r = build_templates(c)) < 0)
		goto fail;
	for (size_t i = 0; i < c->n_nodes; i++) {
		inherit_numa(c->nodes[i]);
		if ((r = attach_topology(c, c->nodes[i])) < 0)
			goto fail;
		assign_rails(c, c->nodes[i]);
		node_totals(c->nodes[i]);
	}
	if ((r = build_pods(c, c->objs.pods)) < 0 || (r = place_pods(c)) < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	rf_cluster_unref(c);
	return r < 0 ? r : -ENOMEM;
}

struct rf_cluster *
rf_cluster_ref(struct rf_cluster *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

struct rf_cluster *
rf_cluster_unref(struct rf_cluster *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return NULL;
	json_decref(c->objs.nodes);
	json_decref(c->objs.pods);
	json_decref(c->objs.slices);
	json_decref(c->objs.claims);
	json_decref(c->objs.classes);
	json_decref(c->objs.templates);
	for (size_t i = 0; i < c->n_nodes; i++) /* decoded annotations live outside the arena */
		rf_topo_annotation_free((struct rf_topo_annotation *)c->nodes[i]->topo);
	rf_arena_free(c->arena);
	free(c->class_memo);
	free(c);
	return NULL;
}

int
rf_class_matches(const struct rf_cluster *c, const struct rf_class *cls, const struct rf_device *d,
		 struct rf_cel_error *err, const char **ret_selector)
{
	atomic_uchar *m = &c->class_memo[(size_t)cls->idx * c->n_devices + d->gidx];
	unsigned char v = atomic_load_explicit(m, memory_order_relaxed);
	if (v == 1)
		return 0;
	if (v == 2)
		return 1;
	if (v == 3 && !err)
		return -EINVAL;
	/* evaluate (again, for the message of an error); racing threads store the same value */
	struct rf_cel_device view = {
		.driver = d->pool->driver,
		.attrs = d->attrs,
		.n_attrs = d->n_attrs,
		.caps = d->caps,
		.n_caps = d->n_caps,
		.allow_multiple_allocations = d->allow_multiple,
	};
	int r = 1;
	for (size_t i = 0; i < cls->n_selectors && r == 1; i++) {
		r = rf_cel_eval(cls->selectors[i], &view, err);
		if (r < 0 && ret_selector)
			*ret_selector = cls->selector_texts[i];
	}
	atomic_store_explicit(m, r < 0 ? 3 : r == 0 ? 1 : 2, memory_order_relaxed);
	return r < 0 ? -EINVAL : r;
}

const struct rf_config *
rf_cluster_config(const struct rf_cluster *c)
{
	return c->cfg;
}

enum rf_dra_version
rf_cluster_dra_version(const struct rf_cluster *c)
{
	/* a snapshot carries no server version: 1.35 rules (DESIGN section 8) */
	return c->cfg->kube.dra_version == RF_DRA_1_34 ? RF_DRA_1_34 : RF_DRA_1_35;
}

struct rf_cel_cache *
rf_cluster_cel(const struct rf_cluster *c)
{
	return c->cel;
}

size_t
rf_cluster_n_nodes(const struct rf_cluster *c)
{
	return c->n_nodes;
}

const struct rf_node *
rf_cluster_node_at(const struct rf_cluster *c, size_t i)
{
	return i < c->n_nodes ? c->nodes[i] : NULL;
}

const struct rf_node *
rf_cluster_node(const struct rf_cluster *c, const char *name)
{
	return find_node(c, name);
}

/* Lookups in the generation's sorted arrays. */
struct nsname_key {
	const char *ns, *name;
};

static int
claim_key_cmp(const void *k, const void *e)
{
	const struct nsname_key *key = k;
	const struct rf_claim *cl = *(struct rf_claim *const *)e;
	return cmp_nsname(key->ns, key->name, cl->ns, cl->name);
}

static int
pod_key_cmp(const void *k, const void *e)
{
	const struct nsname_key *key = k;
	const struct rf_pod *p = *(struct rf_pod *const *)e;
	return cmp_nsname(key->ns, key->name, p->ns, p->name);
}

static int
class_key_cmp(const void *k, const void *e)
{
	return strcmp(k, (*(struct rf_class *const *)e)->name);
}

static int
uid_key_cmp(const void *k, const void *e)
{
	return strcmp(k, (*(struct rf_pod *const *)e)->uid);
}

static const void *
lookup(const void *key, void *const *arr, size_t n, int (*cmp)(const void *, const void *))
{
	void *const *hit = n ? bsearch(key, arr, n, sizeof(*arr), cmp) : NULL;
	return hit ? *hit : NULL;
}

const struct rf_claim *
rf_cluster_claim(const struct rf_cluster *c, const char *ns, const char *name)
{
	struct nsname_key k = { ns, name };
	return lookup(&k, (void *const *)c->claims, c->n_claims, claim_key_cmp);
}

const struct rf_class *
rf_cluster_class(const struct rf_cluster *c, const char *name)
{
	return lookup(name, (void *const *)c->classes, c->n_classes, class_key_cmp);
}

const struct rf_pod *
rf_cluster_pod(const struct rf_cluster *c, const char *ns, const char *name)
{
	struct nsname_key k = { ns, name };
	return lookup(&k, (void *const *)c->pods, c->n_pods, pod_key_cmp);
}

const struct rf_pod *
rf_cluster_pod_by_uid(const struct rf_cluster *c, const char *uid)
{
	return lookup(uid, (void *const *)c->pods_by_uid, c->n_pods_by_uid, uid_key_cmp);
}





size_t
rf_cluster_n_pods(const struct rf_cluster *c)
{
	return c->n_pods;
}

const struct rf_pod *
rf_cluster_pod_at(const struct rf_cluster *c, size_t i)
{
	return i < c->n_pods ? c->pods[i] : NULL;
}

const json_t *
rf_cluster_template(const struct rf_cluster *c, const char *ns, const char *name)
{
	for (size_t i = 0; i < c->n_templates; i++) {
		const json_t *t = c->templates[i];
		const char *tn = json_string_value(rf_jpath(t, "metadata.name"));
		const char *tns = json_string_value(rf_jpath(t, "metadata.namespace"));
		if (cmp_nsname(ns, name, tns, tn) == 0)
			return t;
	}
	return NULL;
}

uint64_t
rf_cluster_group_rails(const struct rf_cluster *c, const char *group, const char *node)
{
	uint64_t m = 0;
	for (size_t i = 0; i < c->n_group_rails; i++)
		if (strcmp(c->group_rails[i].group, group) == 0 &&
		    strcmp(c->group_rails[i].node, node) != 0)
			m |= c->group_rails[i].rails;
	return m;
}

size_t
rf_cluster_n_warnings(const struct rf_cluster *c)
{
	return c->n_warnings;
}

const char *
rf_cluster_warning(const struct rf_cluster *c, size_t i)
{
	return i < c->n_warnings ? c->warnings[i] : NULL;
}

struct rf_cluster_counts
rf_cluster_counts(const struct rf_cluster *c)
{
	return c->counts;
}

const struct rf_cluster_objects *
rf_cluster_objects(const struct rf_cluster *c)
{
	return &c->objs;
}

const char *
rf_pod_claim_name(const json_t *pod, const json_t *entry)
{
	const char *direct = rf_jstr(entry, "resourceClaimName");
	if (direct)
		return direct;
	const char *name = rf_jstr(entry, "name");
	const json_t *st = rf_jpath(pod, "status.resourceClaimStatuses");
	for (size_t i = 0; name && i < json_array_size(st); i++) {
		const json_t *s = json_array_get(st, i);
		const char *sn = rf_jstr(s, "name");
		if (sn && strcmp(sn, name) == 0)
			return rf_jstr(s, "resourceClaimName");
	}
	return NULL;
}
