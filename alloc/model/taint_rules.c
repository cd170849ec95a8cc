/* DeviceTaintRules (resource.k8s.io/v1, GA in 1.37): kube-scheduler's ResourceSlice tracker adds
 * each rule's taint to every device its selector names (driver, pool, device; a missing field
 * matches any) before the allocator sees the slices (dynamic-resource-allocation
 * resourceslice/tracker/tracker.go applyPatches). The layout does the same to its devices and
 * names the rule as the taint's source. Pure logic. */
#include <errno.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"

/* A selector field: absent or null = any (NULL), a string = that value; anything else is bad. */
static int
selector_field(const json_t *sel, const char *key, const char **ret)
{
	const json_t *v = json_object_get(sel, key);
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -EINVAL;
	*ret = json_string_value(v);
	return 0;
}

/* Add taint t (strings in the layout's arena) to device d. */
static int
add_taint(struct rf_cluster *c, struct rf_device *d, const struct rf_taint *t)
{
	struct rf_taint *nt = rf_arena_calloc(c->arena, d->n_taints + 1, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	if (d->n_taints)
		memcpy(nt, d->taints, d->n_taints * sizeof(*nt));
	nt[d->n_taints] = *t;
	d->taints = nt;
	d->n_taints++;
	return 0;
}

bool
rf_model_taint_rule_selects(const json_t *rule, const char **driver, const char **pool,
			    const char **device)
{
	const json_t *spec = json_object_get(rule, "spec");
	const json_t *sel = json_object_get(spec, "deviceSelector");
	const json_t *tj = json_object_get(spec, "taint");
	const char *key = rf_jstr(tj, "key"), *effect = rf_jstr(tj, "effect");
	*driver = *pool = *device = NULL;
	return key && key[0] && effect && effect[0] &&
	       (!sel || json_is_null(sel) || json_is_object(sel)) &&
	       selector_field(sel, "driver", driver) == 0 &&
	       selector_field(sel, "pool", pool) == 0 && selector_field(sel, "device", device) == 0;
}

static int
apply_rule(struct rf_cluster *c, const json_t *rule)
{
	const char *name = rf_jstr(json_object_get(rule, "metadata"), "name");
	const json_t *spec = json_object_get(rule, "spec");
	const json_t *sel = json_object_get(spec, "deviceSelector");
	const json_t *tj = json_object_get(spec, "taint");
	const char *key = rf_jstr(tj, "key"), *effect = rf_jstr(tj, "effect");
	const char *value = rf_jstr(tj, "value");
	const char *driver, *pool, *device;
	if (!name)
		name = "?";
	if (!key || !key[0] || !effect || !effect[0]) {
		rf_cluster_warn(
			c,
			"devicetaintrule %s: expected spec.taint.key and spec.taint.effect; "
			"ignored",
			name);
		return 0;
	}
	if ((sel && !json_is_null(sel) && !json_is_object(sel)) ||
	    selector_field(sel, "driver", &driver) < 0 || selector_field(sel, "pool", &pool) < 0 ||
	    selector_field(sel, "device", &device) < 0) {
		rf_cluster_warn(c,
				"devicetaintrule %s: expected spec.deviceSelector with string "
				"driver, pool and device (each optional); ignored",
				name);
		return 0;
	}
	struct rf_taint t = { .key = rf_arena_strdup(c->arena, key),
			      .value = value ? rf_arena_strdup(c->arena, value) : NULL,
			      .effect = rf_arena_strdup(c->arena, effect),
			      .rule = rf_arena_strdup(c->arena, name) };
	if (!t.key || !t.effect || !t.rule || (value && !t.value))
		return -ENOMEM;
	for (size_t p = 0; p < c->n_pools; p++) {
		struct rf_pool *pl = c->pools[p];
		if ((driver && strcmp(driver, pl->driver) != 0) ||
		    (pool && strcmp(pool, pl->name) != 0))
			continue;
		for (size_t i = 0; i < pl->n_devices; i++) {
			if (device && strcmp(device, pl->devices[i]->name) != 0)
				continue;
			if (add_taint(c, pl->devices[i], &t) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int
rf_model_apply_taint_rules(struct rf_cluster *c, const json_t *rules)
{
	for (size_t i = 0; i < json_array_size(rules); i++) {
		int r = apply_rule(c, json_array_get(rules, i));
		if (r < 0)
			return r;
	}
	return 0;
}
