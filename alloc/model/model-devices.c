/* Cluster model, part 1: ResourceSlices into pools (highest generation, completeness, duplicate
 * names) and devices (attributes normalised to domain/id, capacities, taints, counters, locality
 * facts). Runs on the thread building a generation. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/strtab.h"

/* Strings the model keeps are copied into the generation (alloc/strtab.h): nothing of the model
 * points into the ResourceSlices after rf_model_build_pools() and rf_model_attach_pools(). */
struct strs {
	struct rf_strtab *t;
	int oom;
};

static const char *
K(struct strs *st, const char *s)
{
	return rf_strtab_get(st->t, s, &st->oom);
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
	return dev_key_cmp(x->pool->driver, x->pool->name, x->name, *(struct rf_device *const *)b);
}

struct rf_device *
rf_model_find_device(const struct rf_cluster *c, const char *driver, const char *pool,
		     const char *name)
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
qualify(struct strs *st, const char *driver, const char *name)
{
	if (strchr(name, '/'))
		return K(st, name);
	char buf[512];
	if (snprintf(buf, sizeof(buf), "%s/%s", driver, name) < (int)sizeof(buf))
		return K(st, buf);
	char *full = NULL;
	size_t n = strlen(driver) + strlen(name) + 2;
	if (!(full = malloc(n)))
		return st->oom = 1, NULL;
	snprintf(full, n, "%s/%s", driver, name);
	const char *r = K(st, full);
	free(full);
	return r;
}

static int
parse_attrs(struct rf_cluster *c, struct strs *st, struct rf_device *d, const char *driver,
	    const json_t *attrs)
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
		at->name = qualify(st, driver, key);
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
			if (!(at->s = K(st, json_string_value(v))))
				return -ENOMEM;
		} else if ((v = json_object_get(val, "version")) && json_is_string(v)) {
			at->kind = RF_ATTR_VERSION;
			if (!(at->s = K(st, json_string_value(v))))
				return -ENOMEM;
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
parse_caps(struct rf_cluster *c, struct strs *st, struct rf_device *d, const char *driver,
	   const json_t *caps)
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
			rf_cluster_warn(
				c, "device %s/%s/%s: capacity %s: expected a quantity in value",
				driver, d->pool->name, d->name, key);
			continue;
		}
		cap->raw_name = K(st, key);
		cap->name = qualify(st, driver, key);
		if (!cap->name || !cap->raw_name)
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
parse_taints_counters(struct rf_cluster *c, struct strs *st, struct rf_device *d, const json_t *dj)
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
			d->taints[d->n_taints].key = K(st, key);
			d->taints[d->n_taints].value = K(st, rf_jstr(t, "value"));
			d->taints[d->n_taints].effect = K(st, effect);
			if (st->oom)
				return -ENOMEM;
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
			if (!(cons->counter_set = K(st, set)))
				return -ENOMEM;
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
				if (!(cons->names[cons->n++] = K(st, k)))
					return -ENOMEM;
			}
			d->n_counters++;
		}
	}
	d->has_binding_conditions = json_array_size(json_object_get(dj, "bindingConditions")) > 0;
	return 0;
}

bool
rf_model_strv_has(const struct rf_strv *v, const char *s)
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
			if (rf_model_strv_has(&cfg->devices.bandwidth_capacities,
					      d->caps[i].raw_name) ||
			    rf_model_strv_has(&cfg->devices.bandwidth_capacities,
					      d->caps[i].name) ||
			    rf_model_strv_has(&cfg->devices.bandwidth_capacities, id))
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
		r = (x->generation < y->generation) -
		    (x->generation > y->generation); /* newest first */
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
parse_counter_sets(struct rf_cluster *c, struct strs *st, struct rf_pool *p,
		   const struct slice_ref *refs)
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
				rf_cluster_warn(
					c,
					"pool %s/%s: a sharedCounters entry lacks name or counters; "
					"ignored",
					p->driver, p->name);
				continue;
			}
			struct rf_counter_set *cs = &p->counter_sets[p->n_counter_sets++];
			size_t m = json_object_size(ctrs);
			if (!(cs->name = K(st, name)))
				return -ENOMEM;
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
					rf_cluster_warn(
						c,
						"pool %s/%s: counter %s/%s is not a quantity; ignored",
						p->driver, p->name, name, k);
					continue;
				}
				if (!(cs->names[cs->n++] = K(st, k)))
					return -ENOMEM;
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

int
rf_model_build_pools(struct rf_cluster *c, const json_t *slices)
{
	size_t n = json_array_size(slices), k = 0;
	struct slice_ref *refs = calloc(n ? n : 1, sizeof(*refs));
	struct strs st = { rf_strtab_new(c->arena), 0 };
	int r = -ENOMEM;
	if (!refs || !st.t) {
		free(refs);
		rf_strtab_free(st.t);
		return -ENOMEM;
	}
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
			rf_cluster_warn(
				c,
				"resourceslice %s: expected spec.driver, spec.pool.name, "
				"spec.pool.generation >= 0 and resourceSliceCount >= 1; skipped",
				name);
			continue;
		}
		if (rf_jbool(spec, "perDeviceNodeSelection", false)) {
			rf_cluster_warn(
				c,
				"resourceslice %s: perDeviceNodeSelection is not supported; skipped",
				name);
			continue;
		}
		if (!sr->node && !sr->all_nodes && !json_is_object(sr->node_selector) &&
		    !json_object_get(spec, "sharedCounters")) {
			rf_cluster_warn(
				c,
				"resourceslice %s: no nodeName, allNodes or nodeSelector; skipped",
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
		p->driver = K(&st, refs[i].driver);
		p->name = K(&st, refs[i].pool);
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
		if (p->node && !(p->node = K(&st, p->node)))
			goto out;
		if (!p->driver || !p->name)
			goto out;
		p->complete = (int64_t)p->n_slices == p->slice_count;
		p->slice_specs = rf_arena_calloc(c->arena, p->n_slices + 1, sizeof(json_t *));
		if (!p->slice_specs)
			goto out;
		for (unsigned q = 0; q < p->n_slices; q++)
			p->slice_specs[q] = json_object_get(refs[i + q].slice, "spec");
		if (parse_counter_sets(c, &st, p, refs + i) < 0)
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
					rf_cluster_warn(
						c, "pool %s/%s: device without a name; skipped",
						p->driver, p->name);
					continue;
				}
				struct rf_device *d = rf_arena_alloc(c->arena, sizeof(*d));
				if (!d)
					goto out;
				if (!(d->name = K(&st, dname)))
					goto out;
				d->pool = p;
				d->slice = (unsigned)(s - i);
				d->json = NULL; /* the slices may be gone after the build */
				d->idx = (unsigned)p->n_devices;
				if (rf_model_strv_has(&c->cfg->devices.gpu_drivers, p->driver))
					d->kind = RF_DEV_GPU;
				else if (rf_model_strv_has(&c->cfg->devices.nic_drivers, p->driver))
					d->kind = RF_DEV_NIC;
				d->allow_multiple = rf_jbool(dj, "allowMultipleAllocations", false);
				if (parse_attrs(c, &st, d, p->driver,
						json_object_get(dj, "attributes")) < 0 ||
				    parse_caps(c, &st, d, p->driver,
					       json_object_get(dj, "capacity")) < 0 ||
				    parse_taints_counters(c, &st, d, dj) < 0)
					goto out;
				derive_locality(d, c->cfg);
				d->partition = rf_model_is_partition(d);
				for (size_t q = 0; q < p->n_devices; q++)
					if (strcmp(p->devices[q]->name, dname) == 0)
						p->invalid = true;
				p->devices[p->n_devices++] = d;
			}
		}
		if (p->invalid)
			rf_cluster_warn(
				c,
				"pool %s/%s: duplicate device names; the allocator treats the pool "
				"as invalid",
				p->driver, p->name);
		ndev_total += p->n_devices;
		/* remember how the pool selects nodes: the newest slice decides */
		if (!p->node && refs[i].all_nodes)
			p->node = NULL;
		p->idx = (unsigned)c->n_pools;
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
	/* sorted by driver, pool, name: a pool's devices are one run of indexes */
	for (size_t i = 0; i < c->n_devices; i++) {
		struct rf_pool *p = c->devices[i]->pool;
		if (i == 0 || c->devices[i - 1]->pool != p)
			p->first_gidx = (unsigned)i;
	}
	r = st.oom ? -ENOMEM : 0;
out:
	free(refs);
	rf_strtab_free(st.t);
	return r;
}
