/* DeviceTaintRules (resource.k8s.io/v1, GA in 1.37): kube-scheduler's ResourceSlice tracker adds
 * each rule's taint to every device its selector names (driver, pool, device; a missing field
 * matches any) before the allocator sees the slices (dynamic-resource-allocation
 * resourceslice/tracker/tracker.go applyPatches). The layout does the same to its devices and
 * names the rule as the taint's source. Pure logic. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"

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

/* The taint a rule puts on the devices it selects (taint and name present), its strings in c's
 * arena and the rule's name as its source. */
static int
rule_taint(struct rf_cluster *c, const json_t *rule, const char *name, struct rf_taint *t)
{
	const json_t *tj = json_object_get(json_object_get(rule, "spec"), "taint");
	const char *value = rf_jstr(tj, "value");
	*t = (struct rf_taint){ .key = rf_arena_strdup(c->arena, rf_jstr(tj, "key")),
				.value = value ? rf_arena_strdup(c->arena, value) : NULL,
				.effect = rf_arena_strdup(c->arena, rf_jstr(tj, "effect")),
				.rule = rf_arena_strdup(c->arena, name) };
	return !t->key || !t->effect || !t->rule || (value && !t->value) ? -ENOMEM : 0;
}

static int
apply_rule(struct rf_cluster *c, const json_t *rule)
{
	const char *name = rf_jstr(json_object_get(rule, "metadata"), "name");
	const json_t *spec = json_object_get(rule, "spec");
	const json_t *sel = json_object_get(spec, "deviceSelector");
	const json_t *tj = json_object_get(spec, "taint");
	const char *key = rf_jstr(tj, "key"), *effect = rf_jstr(tj, "effect");
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
	struct rf_taint t;
	if (rule_taint(c, rule, name, &t) < 0)
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

const struct rf_taint *
rf_device_taints(const struct rf_cluster *c, const struct rf_device *d, size_t *n)
{
	if (c && c->dev_taints && c->dev_taints[d->gidx].n != RF_TAINTS_OWN) {
		*n = c->dev_taints[d->gidx].n;
		return c->dev_taints[d->gidx].v;
	}
	*n = d->n_taints;
	return d->taints;
}

struct parsed_rule {
	const char *driver, *pool, *device;
	struct rf_taint t;
};

int
rf_model_retaint_pools(struct rf_cluster *c, const json_t *rules, struct rf_pool *const *pools,
		       size_t n, struct rf_taint_span *taints)
{
	size_t nr = json_array_size(rules), n_pr = 0, n_last = 0;
	struct parsed_rule *pr = calloc(nr + 1, sizeof(*pr));
	/* the rules that select a pool, those that select a device of it, the last ones that
	 * made an array of a device without taints of its own (the next such device selected by
	 * the same rules shares it: every device of a driver, one array) */
	size_t *of_pool = calloc(nr + 1, sizeof(*of_pool)),
	       *of_dev = calloc(nr + 1, sizeof(size_t)), *last = calloc(nr + 1, sizeof(size_t));
	struct rf_taint *last_v = NULL;
	int r = -ENOMEM;
	if (!pr || !of_pool || !of_dev || !last)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		const json_t *rule = json_array_get(rules, i);
		struct parsed_rule *p = &pr[n_pr];
		if (!rf_model_taint_rule_selects(rule, &p->driver, &p->pool, &p->device))
			continue; /* warned about by rf_model_apply_taint_rules */
		const char *name = rf_jstr(json_object_get(rule, "metadata"), "name");
		if (rule_taint(c, rule, name ? name : "?", &p->t) < 0)
			goto out;
		n_pr++;
	}
	for (size_t q = 0; q < n; q++) {
		const struct rf_pool *pl = pools[q];
		size_t np = 0;
		for (size_t i = 0; i < n_pr; i++)
			if ((!pr[i].driver || strcmp(pr[i].driver, pl->driver) == 0) &&
			    (!pr[i].pool || strcmp(pr[i].pool, pl->name) == 0))
				of_pool[np++] = i;
		for (size_t di = 0; di < pl->n_devices; di++) {
			const struct rf_device *d = pl->devices[di];
			struct rf_taint_span *span = &taints[d->gidx];
			size_t own = 0, nd = 0;
			if (span->n == RF_TAINTS_OWN)
				*span = (struct rf_taint_span){ d->taints, d->n_taints };
			while (own < span->n && !span->v[own].rule) /* the slice's come first */
				own++;
			for (size_t i = 0; i < np; i++)
				if (!pr[of_pool[i]].device ||
				    strcmp(pr[of_pool[i]].device, d->name) == 0)
					of_dev[nd++] = of_pool[i];
			if (!nd) { /* its own ones (a prefix of what it had) */
				span->n = own;
				span->v = own ? span->v : NULL;
				continue;
			}
			if (!own && last_v && nd == n_last &&
			    memcmp(of_dev, last, nd * sizeof(*of_dev)) == 0) {
				*span = (struct rf_taint_span){ last_v, nd };
				continue;
			}
			struct rf_taint *v = rf_arena_calloc(c->arena, own + nd, sizeof(*v));
			if (!v)
				goto out;
			if (own)
				memcpy(v, span->v, own * sizeof(*v));
			for (size_t i = 0; i < nd; i++)
				v[own + i] = pr[of_dev[i]].t;
			*span = (struct rf_taint_span){ v, own + nd };
			if (!own) {
				last_v = v;
				n_last = nd;
				memcpy(last, of_dev, nd * sizeof(*of_dev));
			}
		}
	}
	r = 0;
out:
	free(pr);
	free(of_pool);
	free(of_dev);
	free(last);
	return r;
}
