/* Parsing one ResourceSlice into the model's form (see slice.h): attributes normalised to
 * domain/id and sorted, capacities with their request policies, taints, counters, and the
 * locality facts derived from them. Runs on whichever thread receives the slice. */
#include "alloc/model/slice.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/strtab.h"

/* Strings are copied into the record's arena, each distinct one once, packed; those that repeat
 * across a fleet's slices are the process-wide interner's instead (strtab.h): names at once
 * (attributes, capacities, counters, taints, drivers: a few dozen per driver), values when they
 * repeat within the slice (productName, driverVersion: its devices are alike), never the
 * object's own names (a node's: the interner would only fill up). A record is parsed twice
 * (rf_slice_parse): the first parse counts, the second one (given the first one's table as hint)
 * takes exactly the room the first found it needs. */
struct strs {
	struct rf_strtab *t;
	const struct rf_strtab *hint; /* the first parse's table, in the second */
	int oom;
};

enum str_kind { STR_VALUE, STR_NAME, STR_OWN };

static const char *
intern(struct strs *st, const char *s, enum str_kind kind)
{
	const char *shared;
	if (!s)
		return NULL;
	if (st->hint && rf_strtab_lookup(st->hint, s, &shared))
		return shared ? shared : rf_strtab_get(st->t, s, &st->oom);
	switch (kind) {
	case STR_NAME:
		return rf_strtab_get_shared(st->t, s, &st->oom);
	case STR_OWN:
		return rf_strtab_get_unshared(st->t, s, &st->oom);
	default:
		return rf_strtab_get(st->t, s, &st->oom);
	}
}

/* a value (shared when it repeats), a name (shared), the object's own name (never shared) */
#define K(st, s)  intern(st, s, STR_VALUE)
#define KN(st, s) intern(st, s, STR_NAME)
#define KO(st, s) intern(st, s, STR_OWN)

/* warnings are formatted into the record, at most as many per list as a generation keeps */
#define SLICE_WARNINGS_MAX MAX_WARNINGS

struct slice_parse {
	struct rf_slice *s;
	int oom;
};

static void __attribute__((format(printf, 4, 5)))
add_warning(struct slice_parse *sp, const char ***list, size_t *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (*n >= SLICE_WARNINGS_MAX)
		return;
	if (!*list &&
	    !(*list = rf_arena_calloc(sp->s->arena, SLICE_WARNINGS_MAX, sizeof(char *)))) {
		sp->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!((*list)[*n] = rf_arena_strdup(sp->s->arena, buf)))
		sp->oom = 1;
	else
		(*n)++;
}

#define device_warn(sp, ...)                                                                       \
	add_warning(sp, &(sp)->s->device_warnings, &(sp)->s->n_device_warnings, __VA_ARGS__)
#define counter_warn(sp, ...)                                                                      \
	add_warning(sp, &(sp)->s->counter_warnings, &(sp)->s->n_counter_warnings, __VA_ARGS__)

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
		return KN(st, name);
	char buf[512];
	if (snprintf(buf, sizeof(buf), "%s/%s", driver, name) < (int)sizeof(buf))
		return KN(st, buf);
	char *full = NULL;
	size_t n = strlen(driver) + strlen(name) + 2;
	if (!(full = malloc(n)))
		return st->oom = 1, NULL;
	snprintf(full, n, "%s/%s", driver, name);
	const char *r = KN(st, full);
	free(full);
	return r;
}

/* A list-typed attribute (ints, bools, strings, versions: KEP-5491, 1.36) into at; any other
 * value a newer API may add is RF_ATTR_OTHER: tolerated, never matches. -ENOMEM only. */
static int
parse_list_attr(struct slice_parse *sp, struct strs *st, const json_t *val, struct rf_attr *at)
{
	static const struct {
		const char *key;
		enum rf_attr_kind elem;
	} kinds[] = { { "ints", RF_ATTR_INT },
		      { "bools", RF_ATTR_BOOL },
		      { "strings", RF_ATTR_STRING },
		      { "versions", RF_ATTR_VERSION } };
	at->kind = RF_ATTR_OTHER;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const json_t *arr = json_object_get(val, kinds[k].key);
		size_t n = json_array_size(arr);
		if (!json_is_array(arr))
			continue;
		if (n > RF_ATTR_LIST_MAX)
			return 0; /* longer than the API server accepts: never matches */
		struct rf_attr_list *l = rf_arena_calloc(sp->s->arena, 1, sizeof(*l));
		void *vals = NULL;
		if (!l)
			return -ENOMEM;
		l->elem = kinds[k].elem;
		if (n) {
			size_t sz = kinds[k].elem == RF_ATTR_INT    ? sizeof(int64_t)
				    : kinds[k].elem == RF_ATTR_BOOL ? sizeof(bool)
								    : sizeof(char *);
			if (!(vals = rf_arena_calloc(sp->s->arena, n, sz)))
				return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			const json_t *e = json_array_get(arr, i);
			switch (kinds[k].elem) {
			case RF_ATTR_INT:
				if (!json_is_integer(e))
					return 0; /* not what the API allows: never matches */
				((int64_t *)vals)[i] = json_integer_value(e);
				break;
			case RF_ATTR_BOOL:
				if (!json_is_boolean(e))
					return 0;
				((bool *)vals)[i] = json_is_true(e);
				break;
			default:
				if (!json_is_string(e))
					return 0;
				if (!(((const char **)vals)[i] = K(st, json_string_value(e))))
					return -ENOMEM;
				break;
			}
		}
		l->n = n;
		if (kinds[k].elem == RF_ATTR_INT)
			l->i = vals;
		else if (kinds[k].elem == RF_ATTR_BOOL)
			l->b = vals;
		else
			l->s = vals;
		at->kind = RF_ATTR_LIST;
		at->list = l;
		return 0;
	}
	return 0;
}

static int
parse_attrs(struct slice_parse *sp, struct strs *st, struct rf_device *d, const char *driver,
	    const json_t *attrs)
{
	size_t n = json_object_size(attrs);
	if (!json_is_object(attrs) || n == 0)
		return 0;
	d->attrs = rf_arena_calloc(sp->s->arena, n, sizeof(*d->attrs));
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
		} else if (parse_list_attr(sp, st, val, at) < 0) {
			return -ENOMEM;
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
parse_caps(struct slice_parse *sp, struct strs *st, struct rf_device *d, const char *driver,
	   const json_t *caps)
{
	size_t n = json_object_size(caps);
	if (!json_is_object(caps) || n == 0)
		return 0;
	d->caps = rf_arena_calloc(sp->s->arena, n, sizeof(*d->caps));
	if (!d->caps)
		return -ENOMEM;
	const char *key;
	json_t *val;
	json_object_foreach ((json_t *)caps, key, val) {
		struct rf_capacity *cap = &d->caps[d->n_caps];
		const char *qs = rf_jstr(val, "value");
		if (!qs || rf_quantity_parse(qs, &cap->value) < 0) {
			device_warn(sp,
				    "device %s/%s/%s: capacity %s: expected a quantity in value",
				    driver, sp->s->pool, d->name, key);
			continue;
		}
		cap->raw_name = KN(st, key);
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
			    parse_quantity_list(sp->s->arena, vv, &cap->valid_values,
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
parse_taints_counters(struct slice_parse *sp, struct strs *st, struct rf_device *d,
		      const json_t *dj)
{
	const json_t *taints = json_object_get(dj, "taints");
	size_t n = json_array_size(taints);
	if (n) {
		d->taints = rf_arena_calloc(sp->s->arena, n, sizeof(*d->taints));
		if (!d->taints)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const json_t *t = json_array_get(taints, i);
			const char *key = rf_jstr(t, "key"), *effect = rf_jstr(t, "effect");
			if (!key || !effect)
				continue;
			d->taints[d->n_taints].key = KN(st, key);
			d->taints[d->n_taints].value = K(st, rf_jstr(t, "value"));
			d->taints[d->n_taints].effect = KN(st, effect);
			if (st->oom)
				return -ENOMEM;
			d->n_taints++;
		}
	}
	const json_t *cc = json_object_get(dj, "consumesCounters");
	n = json_array_size(cc);
	if (n) {
		d->counters = rf_arena_calloc(sp->s->arena, n, sizeof(*d->counters));
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
			cons->names = rf_arena_calloc(sp->s->arena, m ? m : 1, sizeof(char *));
			cons->values =
				rf_arena_calloc(sp->s->arena, m ? m : 1, sizeof(*cons->values));
			if (!cons->names || !cons->values)
				return -ENOMEM;
			const char *k;
			json_t *v;
			json_object_foreach ((json_t *)ctrs, k, v) {
				const char *qs = rf_jstr(v, "value");
				if (!qs || rf_quantity_parse(qs, &cons->values[cons->n]) < 0)
					continue;
				if (!(cons->names[cons->n++] = KN(st, k)))
					return -ENOMEM;
			}
			d->n_counters++;
		}
	}
	d->has_binding_conditions = json_array_size(json_object_get(dj, "bindingConditions")) > 0;
	return 0;
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
	/* dra.cpu/numaNodeID: the CPU driver's own name, which its older releases publish alone */
	static const char *const numa_attrs[] = { "resource.kubernetes.io/numaNode",
						  "dra.net/numaNode", "dra.cpu/numaNodeID" };
	for (size_t i = 0; i < 3 && d->loc.numa < 0; i++) {
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

/* ---- the slice ---- */

/* spec.sharedCounters */
static int
parse_counter_sets(struct slice_parse *sp, struct strs *st, const json_t *sets)
{
	struct rf_slice *s = sp->s;
	size_t n = json_array_size(sets);
	if (!n)
		return 0;
	s->counter_sets = rf_arena_calloc(s->arena, n, sizeof(*s->counter_sets));
	if (!s->counter_sets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *sj = json_array_get(sets, i);
		const char *name = rf_jstr(sj, "name");
		const json_t *ctrs = json_object_get(sj, "counters");
		if (!name || !json_is_object(ctrs)) {
			counter_warn(sp,
				     "pool %s/%s: a sharedCounters entry lacks name or counters; "
				     "ignored",
				     s->driver, s->pool);
			continue;
		}
		struct rf_counter_set *cs = &s->counter_sets[s->n_counter_sets++];
		size_t m = json_object_size(ctrs);
		if (!(cs->name = K(st, name)))
			return -ENOMEM;
		cs->names = rf_arena_calloc(s->arena, m ? m : 1, sizeof(char *));
		cs->values = rf_arena_calloc(s->arena, m ? m : 1, sizeof(*cs->values));
		if (!cs->names || !cs->values)
			return -ENOMEM;
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)ctrs, k, v) {
			const char *qs = rf_jstr(v, "value");
			if (!qs || rf_quantity_parse(qs, &cs->values[cs->n]) < 0) {
				counter_warn(sp,
					     "pool %s/%s: counter %s/%s is not a quantity; ignored",
					     s->driver, s->pool, name, k);
				continue;
			}
			if (!(cs->names[cs->n++] = KN(st, k)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int
parse_devices(struct slice_parse *sp, struct strs *st, const struct rf_config *cfg,
	      const json_t *devs)
{
	struct rf_slice *s = sp->s;
	size_t n = json_array_size(devs);
	enum rf_dev_kind kind = RF_DEV_OTHER;
	if (rf_model_strv_has(&cfg->devices.gpu_drivers, s->driver))
		kind = RF_DEV_GPU;
	else if (rf_model_strv_has(&cfg->devices.nic_drivers, s->driver))
		kind = RF_DEV_NIC;
	else if (rf_model_strv_has(&cfg->devices.cpu_drivers, s->driver))
		kind = RF_DEV_CPU;
	if (!n)
		return 0;
	if (!(s->devices = rf_arena_calloc(s->arena, n, sizeof(*s->devices))))
		return -ENOMEM;
	if (s->per_device &&
	    !(s->device_nodes = rf_arena_calloc(s->arena, n, sizeof(*s->device_nodes))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *dj = json_array_get(devs, i);
		const char *dname = rf_jstr(dj, "name");
		if (!dname) {
			device_warn(sp, "pool %s/%s: device without a name; skipped", s->driver,
				    s->pool);
			continue;
		}
		struct rf_device *d = &s->devices[s->n_devices];
		if (!(d->name = K(st, dname)))
			return -ENOMEM;
		if (s->per_device) {
			struct rf_device_nodes *dn = &s->device_nodes[s->n_devices];
			const json_t *sel = json_object_get(dj, "nodeSelector");
			const char *node = rf_jstr(dj, "nodeName");
			if (node && !(dn->node = KO(st, node)))
				return -ENOMEM;
			dn->all_nodes = rf_jbool(dj, "allNodes", false);
			dn->selector = json_is_object(sel) ? json_incref((json_t *)sel) : NULL;
		}
		d->kind = kind;
		d->allow_multiple = rf_jbool(dj, "allowMultipleAllocations", false);
		if (parse_attrs(sp, st, d, s->driver, json_object_get(dj, "attributes")) < 0 ||
		    parse_caps(sp, st, d, s->driver, json_object_get(dj, "capacity")) < 0 ||
		    parse_taints_counters(sp, st, d, dj) < 0)
			return -ENOMEM;
		derive_locality(d, cfg);
		d->partition = rf_model_is_partition(d);
		s->n_devices++;
	}
	bool tainted = false;
	for (size_t i = 0; i < s->n_devices && !tainted; i++)
		tainted = s->devices[i].n_taints > 0;
	if (tainted) {
		if (!(s->own_taints =
			      rf_arena_calloc(s->arena, s->n_devices, sizeof(*s->own_taints))))
			return -ENOMEM;
		for (size_t i = 0; i < s->n_devices; i++)
			s->own_taints[i] = (struct rf_taint_span){ s->devices[i].taints,
								   s->devices[i].n_taints };
	}
	return 0;
}

void
rf_slice_device_as_published(const struct rf_slice *s, size_t i, struct rf_device *d)
{
	d->pool = NULL;
	d->slice = d->idx = d->gidx = 0;
	d->taints = s->own_taints ? s->own_taints[i].v : NULL;
	d->n_taints = s->own_taints ? s->own_taints[i].n : 0;
	if (d->numa_source == rf_model_numa_from_nic) { /* derive_locality found none */
		d->loc.numa = -1;
		d->numa_source = NULL;
	}
	d->rail = -1;
}

/* Why the model skips the slice (the checks of the allocator's pool building): sets s->skip.
 * @return 0, or -ENOMEM. */
static int
check_usable(struct rf_slice *s, const json_t *spec)
{
	if (!s->driver || !s->pool || s->generation < 0 || s->count < 1)
		s->skip = rf_arena_printf(s->arena,
					  "resourceslice %s: expected spec.driver, spec.pool.name, "
					  "spec.pool.generation >= 0 and resourceSliceCount >= 1; "
					  "skipped",
					  s->name);
	else if (!s->node && !s->all_nodes && !s->node_selector && !s->per_device &&
		 !json_object_get(spec, "sharedCounters"))
		s->skip = rf_arena_printf(
			s->arena,
			"resourceslice %s: no nodeName, allNodes or nodeSelector; skipped",
			s->name);
	else
		return 0;
	return s->skip ? 0 : -ENOMEM;
}

/* The record, in arena (taken, also on failure). The second parse gets the first one's string
 * table as hint and the bytes of the strings it will copy (reserve); the first one returns its
 * table in *ret_table (NULL for the second: freed). */
static int
parse_into(const json_t *slice, const struct rf_config *cfg, struct rf_arena *arena,
	   const struct rf_strtab *hint, size_t reserve, struct rf_slice **ret,
	   struct rf_strtab **ret_table)
{
	struct rf_slice *s = calloc(1, sizeof(*s));
	struct slice_parse sp = { s, 0 };
	struct strs st = { NULL, hint, 0 };
	int r = -ENOMEM;
	if (!s) {
		rf_arena_free(arena);
		return -ENOMEM;
	}
	atomic_init(&s->refs, 1);
	atomic_init(&s->lent, false);
	if (!(s->arena = arena) || !(st.t = rf_strtab_new_sized(s->arena, 256)) ||
	    rf_strtab_reserve(st.t, reserve) < 0)
		goto fail;
	const json_t *spec = json_object_get(slice, "spec");
	const json_t *pool = json_object_get(spec, "pool");
	const char *name = json_string_value(rf_jpath(slice, "metadata.name"));
	const json_t *sel = json_object_get(spec, "nodeSelector");
	s->name = KO(&st, name ? name : "?");
	s->driver = KN(&st, rf_jstr(spec, "driver"));
	s->pool = KO(&st, rf_jstr(pool, "name"));
	s->generation = rf_jint(pool, "generation", -1);
	s->count = rf_jint(pool, "resourceSliceCount", -1);
	s->node = KO(&st, rf_jstr(spec, "nodeName"));
	s->all_nodes = rf_jbool(spec, "allNodes", false);
	s->node_selector = json_is_object(sel) ? json_incref((json_t *)sel) : NULL;
	s->per_device = rf_jbool(spec, "perDeviceNodeSelection", false);
	if (st.oom)
		goto fail;
	if (check_usable(s, spec) < 0)
		goto fail;
	if (!s->skip &&
	    (parse_counter_sets(&sp, &st, json_object_get(spec, "sharedCounters")) < 0 ||
	     parse_devices(&sp, &st, cfg, json_object_get(spec, "devices")) < 0))
		goto fail;
	if (st.oom || sp.oom)
		goto fail;
	if (ret_table)
		*ret_table = st.t;
	else
		rf_strtab_free(st.t);
	*ret = s;
	return 0;
fail:
	rf_strtab_free(st.t);
	rf_slice_unref(s);
	return r;
}

int
rf_slice_parse(const json_t *slice, const struct rf_config *cfg, struct rf_slice **ret)
{
	/* twice: the second time into one block of exactly the size the first one used (10,000
	 * records in growing chunks left a quarter of their memory as slack), less its strings
	 * (copied one by one, each rounded to 16 bytes) and those it found repeated (now shared),
	 * plus the room of the strings left, packed */
	struct rf_slice *trial, *s;
	struct rf_strtab *table = NULL;
	int r = parse_into(slice, cfg, rf_arena_new(), NULL, 0, &trial, &table);
	if (r < 0)
		return r;
	rf_strtab_share_repeated(table);
	size_t strs = rf_strtab_local_bytes(table);
	size_t size = rf_arena_used(trial->arena) - rf_strtab_arena_bytes(table) +
		      ((strs + 15) & ~(size_t)15);
	r = parse_into(slice, cfg, rf_arena_new_sized(size), table, strs, &s, NULL);
	rf_strtab_free(table);
	if (r < 0) {
		*ret = trial; /* as good, only bigger */
		return 0;
	}
	rf_slice_unref(trial);
	*ret = s;
	return 0;
}

struct rf_slice *
rf_slice_ref(struct rf_slice *s)
{
	if (s)
		atomic_fetch_add(&s->refs, 1);
	return s;
}

void
rf_slice_unref(struct rf_slice *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	json_decref(s->node_selector);
	for (size_t i = 0; s->device_nodes && i < s->n_devices; i++)
		json_decref(s->device_nodes[i].selector);
	rf_arena_free(s->arena);
	free(s);
}
