/* Cluster model, part 2: Nodes, which pools serve them (nodeName, allNodes, nodeSelector), GPU
 * NUMA inherited from NICs on the same root, the hwloc annotation, rails, levels between devices.
 * Runs on the thread building a generation; rf_node_level() and the device accessors are read by
 * any thread. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"
#include "alloc/model/model-private.h"
#include "alloc/model/slice.h"
#include "config/grow.h"

static int
node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct rf_node *const *)a)->name, (*(struct rf_node *const *)b)->name);
}

/* ---- nodes ---- */

static struct rf_node *
find_sorted(struct rf_node *const *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, v[mid]->name);
		if (r == 0)
			return v[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

struct rf_node *
rf_model_find_node(const struct rf_cluster *c, const char *name)
{
	return c->node_order ? find_sorted(c->node_order, c->n_node_order, name)
			     : find_sorted(c->nodes, c->n_nodes, name);
}

bool
rf_model_node_ready(const json_t *node)
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

int
rf_model_build_nodes(struct rf_cluster *c, const json_t *nodes)
{
	size_t n = json_array_size(nodes);
	/* nodes named only by slices get an entry too, so their devices are visible */
	c->nodes = rf_arena_calloc(c->arena, n + c->n_pools + 1, sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *nj = json_array_get(nodes, i);
		const char *name = json_string_value(rf_jpath(nj, "metadata.name"));
		int r = rf_model_stopping(c, i + 1);
		if (r < 0)
			return r;
		if (!name || !name[0]) {
			rf_cluster_warn(c, "node #%zu: no metadata.name; skipped", i);
			continue;
		}
		struct rf_node *nd = rf_arena_alloc(c->arena, sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		nd->name = name;
		nd->json = nj;
		nd->labels = rf_jpath(nj, "metadata.labels");
		nd->annotations = rf_jpath(nj, "metadata.annotations");
		nd->ready = rf_model_node_ready(nj);
		c->nodes[c->n_nodes++] = nd;
	}
	qsort(c->nodes, c->n_nodes, sizeof(*c->nodes), node_cmp);
	/* drop duplicates (keep the first) */
	size_t w = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (w && strcmp(c->nodes[w - 1]->name, c->nodes[i]->name) == 0) {
			rf_cluster_warn(c, "node %s: listed twice; the second copy is ignored",
					c->nodes[i]->name);
			continue;
		}
		c->nodes[w++] = c->nodes[i];
	}
	c->n_nodes = w;
	size_t known = c->n_nodes;
	for (size_t i = 0; i < c->n_pools; i++) {
		const char *pn = c->pools[i]->node;
		/* among the sorted Node objects: the nodes appended below are not in order */
		if (!pn || find_sorted(c->nodes, known, pn))
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
selects_node(const char *node, bool all_nodes, const json_t *selector, const struct rf_node *n)
{
	if (node)
		return strcmp(node, n->name) == 0;
	if (all_nodes)
		return true;
	return selector && node_selector_matches(n, selector);
}

bool
rf_model_slice_serves(const struct rf_slice *s, const struct rf_node *n)
{
	if (s->node || s->all_nodes || s->node_selector || !s->per_device)
		return selects_node(s->node, s->all_nodes, s->node_selector, n);
	for (size_t i = 0; i < s->n_devices; i++) {
		const struct rf_device_nodes *dn = &s->device_nodes[i];
		if (selects_node(dn->node, dn->all_nodes, dn->selector, n))
			return true;
	}
	return false;
}

bool
rf_model_slice_device_serves(const struct rf_slice *s, size_t i, const struct rf_node *n)
{
	if (!s->per_device)
		return true;
	const struct rf_device_nodes *dn = &s->device_nodes[i];
	return selects_node(dn->node, dn->all_nodes, dn->selector, n);
}

/* Does a slice of the pool serve this node (nodeName, allNodes or nodeSelector; with
 * perDeviceNodeSelection, the devices decide one by one)? */
static bool
slice_on_node(const struct rf_pool *p, unsigned slice, const struct rf_node *n)
{
	const struct rf_slice *s = p->slices[slice];
	if (s->per_device)
		return true;
	return selects_node(s->node, s->all_nodes, s->node_selector, n);
}

/* Devices of the pool on this node: those of the slices that select it, and of a
 * perDeviceNodeSelection slice those that select it themselves (the allocator checks them
 * with the selectors: a device for another node never matches a request). */
size_t
rf_model_devices_on_node(const struct rf_pool *p, const struct rf_node *n, struct rf_device **out)
{
	bool on[64] = { 0 };
	unsigned pos[64] = { 0 }; /* a pool's devices are in slice order: index within the slice */
	size_t k = 0;
	if (p->node_view) { /* built for this node: all its devices */
		for (size_t d = 0; out && d < p->n_devices; d++)
			out[d] = p->devices[d];
		return p->n_devices;
	}
	for (unsigned s = 0; s < p->n_slices && s < 64; s++)
		on[s] = slice_on_node(p, s, n);
	for (size_t d = 0; d < p->n_devices; d++) {
		unsigned s = p->devices[d]->slice;
		if (s >= 64 || !on[s])
			continue;
		const struct rf_slice *sl = p->slices[s];
		unsigned i = pos[s]++;
		if (sl->per_device) {
			const struct rf_device_nodes *dn = &sl->device_nodes[i];
			if (i >= sl->n_devices ||
			    !selects_node(dn->node, dn->all_nodes, dn->selector, n))
				continue;
		}
		if (out)
			out[k] = p->devices[d];
		k++;
	}
	return k;
}

/* Index of a node in the sorted node array, or -1. */
static ptrdiff_t
node_index(const struct rf_cluster *c, const char *name)
{
	size_t lo = 0, hi = c->n_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, c->nodes[mid]->name);
		if (r == 0)
			return (ptrdiff_t)mid;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Pools on nodes. A slice naming its node (nodeName) can only serve that node, so only slices
 * with allNodes or a nodeSelector are tried against every node: the cost is one binary search
 * per node-local slice, not nodes x pools. Each node keeps its pools in pool order. */
int
rf_model_attach_pools(struct rf_cluster *c)
{
	struct pair {
		unsigned node, n_dev;
		struct rf_pool *pool; /* the pool as the node sees it */
	} *pairs = NULL;
	size_t n_pairs = 0, cap_pairs = 0;
	/* the last pool (index + 1) each node was paired with, to pair a node with a pool once */
	size_t *seen = calloc(c->n_nodes + 1, sizeof(*seen));
	int r = -ENOMEM;
	if (!seen)
		return -ENOMEM;
	for (size_t p = 0; p < c->n_pools; p++) {
		struct rf_pool *pool = c->pools[p];
		bool global = false;
		size_t n_all = pool->n_slices + pool->n_older;
		for (size_t s = 0; s < n_all && !global; s++) {
			const struct rf_slice *sl = s < pool->n_slices
							    ? pool->slices[s]
							    : pool->older[s - pool->n_slices];
			if (!sl->node)
				global = true; /* allNodes or a nodeSelector (or no node at all) */
		}
		size_t n_cand = global ? c->n_nodes : n_all;
		for (size_t k = 0; k < n_cand; k++) {
			ptrdiff_t ni = (ptrdiff_t)k;
			if (!global) {
				const struct rf_slice *sl =
					k < pool->n_slices ? pool->slices[k]
							   : pool->older[k - pool->n_slices];
				if ((ni = node_index(c, sl->node)) < 0)
					continue;
			}
			if (seen[ni] == p + 1)
				continue;
			seen[ni] = p + 1;
			struct rf_pool *view;
			if (rf_model_pool_view(c, pool, c->nodes[ni], &view) < 0)
				goto out;
			size_t nd = view ? rf_model_devices_on_node(view, c->nodes[ni], NULL) : 0;
			if (!nd)
				continue;
			if (rf_grow(&pairs, &cap_pairs, n_pairs + 1, sizeof(*pairs)) < 0)
				goto out;
			pairs[n_pairs++] = (struct pair){ (unsigned)ni, (unsigned)nd, view };
		}
	}
	/* count per node, then fill in pool order (pairs are in pool order) */
	for (size_t i = 0; i < n_pairs; i++) {
		struct rf_node *n = c->nodes[pairs[i].node];
		n->n_pools++;
		n->n_devices += pairs[i].n_dev;
	}
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct rf_node *n = c->nodes[i];
		if (!n->n_pools)
			continue;
		n->pools = rf_arena_calloc(c->arena, n->n_pools, sizeof(*n->pools));
		n->devices = rf_arena_calloc(c->arena, n->n_devices, sizeof(*n->devices));
		if (!n->pools || !n->devices)
			goto out;
		n->n_pools = 0;
		n->n_devices = 0;
	}
	for (size_t i = 0; i < n_pairs; i++) {
		struct rf_node *n = c->nodes[pairs[i].node];
		struct rf_pool *pool = pairs[i].pool;
		n->pools[n->n_pools++] = pool;
		n->n_devices += rf_model_devices_on_node(pool, n, n->devices + n->n_devices);
	}
	r = 0;
out:
	free(pairs);
	free(seen);
	return r;
}

/* One node's pools (in pool order) and devices, as rf_model_attach_pools() pairs them: a patched
 * layout (model-patch.c) attaches the nodes it rebuilds this way. */
int
rf_model_attach_node_pools(struct rf_cluster *c, struct rf_node *n, struct rf_pool *const *pools,
			   size_t n_pools)
{
	size_t nd = 0, np = 0;
	for (size_t i = 0; i < n_pools; i++) {
		size_t k = rf_model_devices_on_node(pools[i], n, NULL);
		np += k > 0;
		nd += k;
	}
	n->n_pools = n->n_devices = 0;
	n->pools = NULL;
	n->devices = NULL;
	if (!np)
		return 0;
	n->pools = rf_arena_calloc(c->arena, np, sizeof(*n->pools));
	n->devices = rf_arena_calloc(c->arena, nd, sizeof(*n->devices));
	if (!n->pools || !n->devices)
		return -ENOMEM;
	for (size_t i = 0; i < n_pools; i++) {
		size_t k = rf_model_devices_on_node(pools[i], n, n->devices + n->n_devices);
		if (k)
			n->pools[n->n_pools++] = pools[i];
		n->n_devices += k;
	}
	return 0;
}

const char rf_model_numa_from_nic[] = "nic-on-root";

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
				g->numa_source = rf_model_numa_from_nic;
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
bool
rf_model_is_partition(const struct rf_device *d)
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
			if (g->kind != RF_DEV_GPU || g->partition)
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
			if (g->kind == RF_DEV_GPU && g != best && !g->partition &&
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
		rf_cluster_warn(c, "node %s: %s; using DRA attributes", n->name, n->topo_error);
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
		rf_cluster_warn(c, "node %s: %s; using DRA attributes", n->name, n->topo_error);
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

enum rf_level
rf_node_gpu_level(const struct rf_node *n, const struct rf_device *a, const struct rf_device *b,
		  enum rf_level_source *ret_src, unsigned *ret_links)
{
	unsigned links = 0;
	if (ret_links)
		*ret_links = 0;
	if (n && n->topo && a != b && a->pci[0] && b->pci[0] &&
	    rf_topo_annotation_nvlinks(n->topo, a->pci, b->pci, &links) == 0 && links) {
		if (ret_src)
			*ret_src = RF_SRC_ANNOTATION;
		if (ret_links)
			*ret_links = links;
		return RF_LEVEL_NVL;
	}
	return rf_node_level(n, a, b, ret_src);
}

/* The node's block and spine from its labels (groups.blockLabels, groups.spineLabels). */
void
rf_model_network_place(const struct rf_cluster *c, struct rf_node *n)
{
	const struct rf_strv *keys[2] = { &c->cfg->groups.block_labels,
					  &c->cfg->groups.spine_labels };
	const char **out[2] = { &n->block, &n->spine };
	for (int k = 0; k < 2; k++) {
		*out[k] = NULL;
		for (size_t i = 0; i < keys[k]->n && !*out[k]; i++) {
			const char *v = rf_jstr(n->labels, keys[k]->v[i]);
			if (v && v[0])
				*out[k] = v;
		}
	}
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

const struct rf_dev_use *
rf_dev_use(const struct rf_cluster *c, const struct rf_device *d)
{
	return rf_model_use(c, d->gidx);
}

const struct rf_node_use *
rf_node_use(const struct rf_cluster *c, const struct rf_node *n)
{
	return &c->node_use[n->idx];
}

bool
rf_device_is_free(const struct rf_cluster *c, const struct rf_device *d)
{
	return rf_model_use(c, d->gidx)->holder == NULL;
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
rf_device_bw_used(const struct rf_cluster *c, const struct rf_device *d)
{
	const struct rf_dev_use *u = rf_model_use(c, d->gidx);
	struct rf_quantity used = u->annotated_bw;
	if (d->bandwidth && u->consumed)
		used = rf_quantity_add(used, u->consumed[d->bandwidth - d->caps]);
	return used;
}

static int
node_totals(struct rf_cluster *c, struct rf_node *n)
{
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind == RF_DEV_GPU && !d->partition)
			n->n_gpus++;
		else if (d->kind == RF_DEV_NIC)
			n->n_nics++;
	}
	n->counted = rf_arena_calloc(c->arena, n->n_gpus + n->n_nics + 1, sizeof(*n->counted));
	if (!n->counted)
		return -ENOMEM;
	size_t g = 0, k = n->n_gpus;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (d->kind == RF_DEV_GPU && !d->partition)
			n->counted[g++] = d->gidx;
		else if (d->kind == RF_DEV_NIC)
			n->counted[k++] = d->gidx;
	}
	return 0;
}

/* Derived per-node facts, once pools are attached. */
int
rf_model_finish_node(struct rf_cluster *c, struct rf_node *n)
{
	inherit_numa(n);
	rf_model_network_place(c, n);
	int r = attach_topology(c, n);
	if (r < 0)
		return r;
	assign_rails(c, n);
	return node_totals(c, n);
}
