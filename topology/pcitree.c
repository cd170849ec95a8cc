/* The PCI tree model and the level rule (DESIGN section 5); see pcitree.h for the rule itself.
 *
 * Each node caches, when it is added, what the rule needs about its ancestors (depth, nearest host
 * bridge, bridge depth below it, unit), so a level is one walk up from both ends. Pure functions;
 * a tree is built by one thread and may then be read from any. */
#include "topology/pcitree.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"

struct tnode {
	struct rf_pcitree_node n;
	int depth;      /* nodes above it */
	int hostbridge; /* nearest host bridge, itself included; -1 */
	int bdepth;     /* bridges from below that host bridge (or the top) down to it, included */
	int bridge_parent; /* nearest bridge above it; -1 */
	int unit;          /* bridges: root port or switch (upstream port) it belongs to; else -1 */
	char **names;
	size_t n_names;
};

struct nvedge {
	int a, b;
	unsigned links;
};

struct rf_pcitree {
	struct tnode *nodes;
	size_t n, cap;
	char **notes;
	size_t n_notes;
	struct nvedge *nvl; /* NVLinks between device nodes */
	size_t n_nvl, cap_nvl;
};

enum rf_pci_kind
rf_pci_classify(unsigned class_id, unsigned vendor_id)
{
	if (class_id == 0x0302 || (class_id >> 8) == 0x12)
		return RF_PCI_GPU;
	if (class_id == 0x0300 && (vendor_id == 0x10de || vendor_id == 0x1002))
		return RF_PCI_GPU;
	if ((class_id >> 8) == 0x02)
		return RF_PCI_NIC;
	return RF_PCI_OTHER;
}

const char *
rf_pci_kind_name(enum rf_pci_kind k)
{
	switch (k) {
	case RF_PCI_GPU:
		return "gpu";
	case RF_PCI_NIC:
		return "nic";
	case RF_PCI_OTHER:
		break;
	}
	return "other";
}

struct rf_pcitree *
rf_pcitree_new(void)
{
	return calloc(1, sizeof(struct rf_pcitree));
}

static void
free_strings(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

void
rf_pcitree_free(struct rf_pcitree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free_strings(t->nodes[i].names, t->nodes[i].n_names);
	free(t->nodes);
	free(t->nvl);
	free_strings(t->notes, t->n_notes);
	free(t);
}

/* Append a copy of s to a malloc'd string array. */
static int
push_string(char ***arr, size_t *n, const char *s)
{
	char *copy = strdup(s);
	char **na;
	if (!copy)
		return -ENOMEM;
	na = realloc(*arr, (*n + 1) * sizeof(*na));
	if (!na) {
		free(copy);
		return -ENOMEM;
	}
	na[(*n)++] = copy;
	*arr = na;
	return 0;
}

int
rf_pcitree_add(struct rf_pcitree *t, const struct rf_pcitree_node *n)
{
	struct tnode tn = { .n = *n, .hostbridge = -1, .bridge_parent = -1, .unit = -1 };
	int idx = (int)t->n;

	if (n->type != RF_PCITREE_HOSTBRIDGE && n->type != RF_PCITREE_BRIDGE &&
	    n->type != RF_PCITREE_DEVICE)
		return -EINVAL;
	if (n->parent < -1 || n->parent >= idx || n->numa < -1)
		return -EINVAL;
	if (t->n >= RF_PCITREE_MAX_NODES)
		return -E2BIG;
	if (n->type == RF_PCITREE_HOSTBRIDGE) {
		tn.n.pci[0] = '\0';
	} else {
		/* n->pci may not be NUL-terminated within its array: copy it bounded first */
		char in[RF_PCI_ADDR_LEN + 1];
		memcpy(in, n->pci, RF_PCI_ADDR_LEN);
		in[RF_PCI_ADDR_LEN] = '\0';
		if (rf_pci_normalize(in, tn.n.pci) < 0)
			return -EINVAL;
	}
	if (rf_grow(&t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes)) < 0)
		return -ENOMEM;

	const struct tnode *p = n->parent >= 0 ? &t->nodes[n->parent] : NULL;
	bool is_bridge = n->type == RF_PCITREE_BRIDGE;
	tn.depth = p ? p->depth + 1 : 0;
	if (n->type == RF_PCITREE_HOSTBRIDGE) {
		tn.hostbridge = idx;
		tn.bdepth = 0;
	} else if (!p || p->n.type == RF_PCITREE_HOSTBRIDGE) {
		tn.hostbridge = p ? n->parent : -1;
		tn.bdepth = is_bridge;
	} else {
		tn.hostbridge = p->hostbridge;
		tn.bdepth = p->bdepth + is_bridge;
	}
	if (p)
		tn.bridge_parent = p->n.type == RF_PCITREE_BRIDGE ? n->parent : p->bridge_parent;
	if (is_bridge) {
		/* root port (1) and upstream ports (even) are units; a downstream port (odd, 3+)
		 * belongs to the switch of its upstream port */
		if (tn.bdepth == 1 || tn.bdepth % 2 == 0 || tn.bridge_parent < 0)
			tn.unit = idx;
		else
			tn.unit = tn.bridge_parent;
	}
	t->nodes[t->n++] = tn;
	return idx;
}

int
rf_pcitree_add_name(struct rf_pcitree *t, int node, const char *name)
{
	if (node < 0 || (size_t)node >= t->n || !name || !name[0])
		return -EINVAL;
	return push_string(&t->nodes[node].names, &t->nodes[node].n_names, name);
}

int
rf_pcitree_add_nvlink(struct rf_pcitree *t, int a, int b, unsigned links)
{
	if (a < 0 || b < 0 || (size_t)a >= t->n || (size_t)b >= t->n || a == b || !links ||
	    t->nodes[a].n.type != RF_PCITREE_DEVICE || t->nodes[b].n.type != RF_PCITREE_DEVICE)
		return -EINVAL;
	if (a > b) {
		int x = a;
		a = b;
		b = x;
	}
	for (size_t i = 0; i < t->n_nvl; i++)
		if (t->nvl[i].a == a && t->nvl[i].b == b) {
			t->nvl[i].links += links;
			return 0;
		}
	if (rf_grow(&t->nvl, &t->cap_nvl, t->n_nvl + 1, sizeof(*t->nvl)) < 0)
		return -ENOMEM;
	t->nvl[t->n_nvl++] = (struct nvedge){ a, b, links };
	return 0;
}

int
rf_pcitree_add_note(struct rf_pcitree *t, const char *note)
{
	return push_string(&t->notes, &t->n_notes, note);
}

size_t
rf_pcitree_count(const struct rf_pcitree *t)
{
	return t->n;
}

const struct rf_pcitree_node *
rf_pcitree_node(const struct rf_pcitree *t, int i)
{
	if (i < 0 || (size_t)i >= t->n)
		return NULL;
	return &t->nodes[i].n;
}

/* Do all bridges on the path from x up to (and including) stop map to `*unit`? The first bridge
 * seen sets it. */
static bool
same_unit_up(const struct rf_pcitree *t, int x, int stop, bool include_stop, int *unit)
{
	for (;;) {
		if (x == stop && !include_stop)
			return true;
		const struct tnode *tn = &t->nodes[x];
		if (tn->n.type == RF_PCITREE_BRIDGE) {
			if (*unit < 0)
				*unit = tn->unit;
			else if (*unit != tn->unit)
				return false;
		}
		if (x == stop)
			return true;
		x = tn->n.parent;
	}
}

enum rf_level
rf_pcitree_level(const struct rf_pcitree *t, int a, int b, unsigned *ret_flags)
{
	unsigned flags = 0;
	enum rf_level l;

	if (ret_flags)
		*ret_flags = 0;
	if (a < 0 || b < 0 || (size_t)a >= t->n || (size_t)b >= t->n)
		return RF_LEVEL_UNKNOWN;
	if (a == b)
		return RF_LEVEL_PIX;

	/* lowest common ancestor */
	int x = a, y = b;
	while (t->nodes[x].depth > t->nodes[y].depth)
		x = t->nodes[x].n.parent;
	while (t->nodes[y].depth > t->nodes[x].depth)
		y = t->nodes[y].n.parent;
	while (x != y && x >= 0 && y >= 0) {
		x = t->nodes[x].n.parent;
		y = t->nodes[y].n.parent;
	}
	int lca = x == y ? x : -1;

	const struct tnode *na = &t->nodes[a], *nb = &t->nodes[b];
	if (lca < 0) {
		bool numa_known = na->n.numa >= 0 && nb->n.numa >= 0;
		if (na->hostbridge >= 0 && nb->hostbridge >= 0) {
			/* different host bridges */
			if (numa_known) {
				l = na->n.numa == nb->n.numa ? RF_LEVEL_NODE : RF_LEVEL_SYS;
			} else {
				l = RF_LEVEL_NODE;
				flags |= RF_PCITREE_NUMA_GUESS;
			}
		} else {
			flags |= RF_PCITREE_NO_HOSTBRIDGE;
			l = numa_known && na->n.numa != nb->n.numa ? RF_LEVEL_SYS
								   : RF_LEVEL_UNKNOWN;
		}
	} else if (t->nodes[lca].n.type == RF_PCITREE_HOSTBRIDGE) {
		l = RF_LEVEL_PHB;
	} else {
		int unit = -1;
		bool same = same_unit_up(t, a, lca, true, &unit) &&
			    same_unit_up(t, b, lca, false, &unit);
		l = same ? RF_LEVEL_PIX : RF_LEVEL_PXB;
		if (t->nodes[lca].hostbridge < 0)
			flags |= RF_PCITREE_NO_HOSTBRIDGE; /* top bridge taken as the root port */
	}
	if (ret_flags)
		*ret_flags = flags;
	return l;
}

/* ---- GPUs and NICs with all their levels ---- */

struct cand {
	int node;
	enum rf_pci_kind kind;
	const char *pci;
};

static int
cand_by_pci(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int r = rf_pci_cmp(a->pci, b->pci);
	return r ? r : (a->node > b->node) - (a->node < b->node);
}

static int
cand_by_kind(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind == RF_PCI_GPU ? -1 : 1;
	return rf_pci_cmp(a->pci, b->pci);
}

void
rf_pcitopo_free(struct rf_pcitopo *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_devices; i++)
		free_strings(t->devices[i].names, t->devices[i].n_names);
	free(t->devices);
	free(t->levels);
	free(t->nvlinks);
	free_strings(t->notes, t->n_notes);
	free(t);
}

static int
add_note(struct rf_pcitopo *t, const char *s)
{
	return push_string(&t->notes, &t->n_notes, s);
}

/* ---- NVLink ---- */

static int
uf_find(int *up, int x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/*
 * GPU-to-GPU NVLink counts from the tree's NVLink edges. A GPU pair's links are its direct links
 * plus, for every fabric of NVSwitches (switches joined by switch-to-switch links form one), the
 * smaller of the two GPUs' link counts into it: on an NVSwitch baseboard each GPU has one link
 * to each of the board's switches, so two GPUs of one board get NV<switches>, as nvidia-smi shows.
 * dev_of[node] is the device index of a tree node that is a GPU of the topology, -1 otherwise.
 */
static int
compute_nvlinks(const struct rf_pcitree *tree, const int *dev_of, struct rf_pcitopo *t)
{
	size_t n = t->n_devices, nodes = tree->n;
	int *up = NULL;
	unsigned *into = NULL; /* [gpu][fabric]: links of a GPU into a fabric (by root node) */
	size_t *fabric_of = NULL, n_fabrics = 0;
	char buf[256];
	int r = -ENOMEM;

	if (!tree->n_nvl)
		return 0;
	t->nvlinks = calloc(n ? n * n : 1, 1);
	up = calloc(nodes, sizeof(*up));
	fabric_of = calloc(nodes, sizeof(*fabric_of));
	if (!t->nvlinks || !up || !fabric_of)
		goto out;
	for (size_t i = 0; i < nodes; i++)
		up[i] = (int)i;
	/* switch-to-switch links join fabrics; GPU-to-GPU links count directly */
	for (size_t e = 0; e < tree->n_nvl; e++) {
		const struct nvedge *ed = &tree->nvl[e];
		int ga = dev_of[ed->a], gb = dev_of[ed->b];
		if (ga < 0 && gb < 0) {
			up[uf_find(up, ed->a)] = uf_find(up, ed->b);
		} else if (ga >= 0 && gb >= 0) {
			unsigned v = t->nvlinks[(size_t)ga * n + (size_t)gb] + ed->links;
			t->nvlinks[(size_t)ga * n + (size_t)gb] =
				t->nvlinks[(size_t)gb * n + (size_t)ga] =
					(unsigned char)(v > 255 ? 255 : v);
		}
	}
	/* number the fabrics that some GPU links into */
	for (size_t i = 0; i < nodes; i++)
		fabric_of[i] = SIZE_MAX;
	for (size_t e = 0; e < tree->n_nvl; e++) {
		const struct nvedge *ed = &tree->nvl[e];
		int sw = dev_of[ed->a] >= 0 ? ed->b : dev_of[ed->b] >= 0 ? ed->a : -1;
		if (sw < 0 || (dev_of[ed->a] >= 0 && dev_of[ed->b] >= 0))
			continue;
		int root = uf_find(up, sw);
		if (fabric_of[root] == SIZE_MAX)
			fabric_of[root] = n_fabrics++;
	}
	if (n_fabrics) {
		into = calloc(n * n_fabrics, sizeof(*into));
		if (!into)
			goto out;
		for (size_t e = 0; e < tree->n_nvl; e++) {
			const struct nvedge *ed = &tree->nvl[e];
			int ga = dev_of[ed->a], gb = dev_of[ed->b];
			if ((ga >= 0) == (gb >= 0))
				continue;
			int g = ga >= 0 ? ga : gb, sw = ga >= 0 ? ed->b : ed->a;
			into[(size_t)g * n_fabrics + fabric_of[uf_find(up, sw)]] += ed->links;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				unsigned v = t->nvlinks[i * n + j];
				for (size_t f = 0; f < n_fabrics; f++) {
					unsigned a = into[i * n_fabrics + f],
						 b = into[j * n_fabrics + f];
					v += a < b ? a : b;
				}
				t->nvlinks[i * n + j] = t->nvlinks[j * n + i] =
					(unsigned char)(v > 255 ? 255 : v);
			}
	}
	/* GPUs with NVLink that cannot reach each other over it: say why they show a PCIe level */
	size_t linked = 0, apart = 0;
	for (size_t i = 0; i < n; i++) {
		bool has = false;
		for (size_t j = 0; j < n && !has; j++)
			has = t->nvlinks[i * n + j] != 0;
		for (size_t j = i + 1; has && j < n; j++) {
			bool other = false;
			for (size_t k = 0; k < n && !other; k++)
				other = t->nvlinks[j * n + k] != 0;
			if (!other)
				continue;
			if (t->nvlinks[i * n + j])
				linked++;
			else
				apart++;
		}
	}
	if (apart) {
		snprintf(buf, sizeof(buf),
			 "NVLink: %zu GPU pair%s share NVLinks, %zu pair%s of NVLink GPUs have no "
			 "NVLink path in the data (no link between their NVSwitches): shown with "
			 "their PCIe level",
			 linked, linked == 1 ? "" : "s", apart, apart == 1 ? "" : "s");
		if (add_note(t, buf) < 0)
			goto out;
	}
	r = 0;
out:
	free(up);
	free(into);
	free(fabric_of);
	return r;
}

int
rf_pcitopo_compute(const struct rf_pcitree *tree, struct rf_pcitopo **ret)
{
	struct rf_pcitopo *t = calloc(1, sizeof(*t));
	struct cand *c = NULL;
	size_t nc = 0, guesses = 0, unrooted = 0;
	int r = -ENOMEM;
	char buf[256];

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < tree->n_notes; i++)
		if (add_note(t, tree->notes[i]) < 0)
			goto out;
	c = calloc(tree->n ? tree->n : 1, sizeof(*c));
	if (!c)
		goto out;
	for (size_t i = 0; i < tree->n; i++) {
		const struct rf_pcitree_node *n = &tree->nodes[i].n;
		enum rf_pci_kind k;
		if (n->type != RF_PCITREE_DEVICE)
			continue;
		k = rf_pci_classify(n->class_id, n->vendor_id);
		if (k != RF_PCI_OTHER)
			c[nc++] = (struct cand){ .node = (int)i, .kind = k, .pci = n->pci };
	}
	/* one device per address: keep the first in tree order */
	qsort(c, nc, sizeof(*c), cand_by_pci);
	size_t w = 0;
	for (size_t i = 0; i < nc; i++) {
		if (w && strcmp(c[w - 1].pci, c[i].pci) == 0) {
			snprintf(buf, sizeof(buf),
				 "PCI address %s appears more than once; only its first %s is used",
				 c[i].pci, rf_pci_kind_name(c[w - 1].kind));
			if (add_note(t, buf) < 0)
				goto out;
			continue;
		}
		c[w++] = c[i];
	}
	nc = w;
	qsort(c, nc, sizeof(*c), cand_by_kind);

	t->devices = calloc(nc ? nc : 1, sizeof(*t->devices));
	t->levels = calloc(nc ? nc * nc : 1, 1);
	if (!t->devices || !t->levels)
		goto out;
	for (size_t i = 0; i < nc; i++) {
		const struct tnode *tn = &tree->nodes[c[i].node];
		struct rf_pcitopo_device *d = &t->devices[i];
		memcpy(d->pci, tn->n.pci, sizeof(d->pci));
		d->kind = c[i].kind;
		d->numa = tn->n.numa;
		d->vendor_id = tn->n.vendor_id;
		d->device_id = tn->n.device_id;
		d->class_id = tn->n.class_id;
		if (tn->hostbridge >= 0) {
			const struct rf_pcitree_node *hb = &tree->nodes[tn->hostbridge].n;
			snprintf(d->pcie_root, sizeof(d->pcie_root), "pci%04x:%02x",
				 hb->domain & 0xffffu, hb->bus & 0xffu);
		}
		t->n_devices++; /* counted before its names, so rf_pcitopo_free sees them */
		for (size_t k = 0; k < tn->n_names; k++)
			if (push_string(&d->names, &d->n_names, tn->names[k]) < 0)
				goto out;
		if (d->kind == RF_PCI_GPU)
			t->n_gpus++;
		else
			t->n_nics++;
	}
	for (size_t i = 0; i < nc; i++) {
		t->levels[i * nc + i] = RF_LEVEL_PIX;
		for (size_t j = i + 1; j < nc; j++) {
			unsigned flags;
			enum rf_level l = rf_pcitree_level(tree, c[i].node, c[j].node, &flags);
			t->levels[i * nc + j] = t->levels[j * nc + i] = (unsigned char)l;
			guesses += (flags & RF_PCITREE_NUMA_GUESS) != 0;
			unrooted += (flags & RF_PCITREE_NO_HOSTBRIDGE) != 0;
		}
	}
	if (tree->n_nvl) {
		int *dev_of = malloc(tree->n * sizeof(*dev_of));
		if (!dev_of)
			goto out;
		for (size_t i = 0; i < tree->n; i++)
			dev_of[i] = -1;
		for (size_t i = 0; i < nc; i++)
			if (c[i].kind == RF_PCI_GPU)
				dev_of[c[i].node] = (int)i;
		r = compute_nvlinks(tree, dev_of, t);
		free(dev_of);
		if (r < 0)
			goto out;
		r = -ENOMEM;
	}
	if (guesses) {
		snprintf(buf, sizeof(buf),
			 "NUMA node unknown: %zu device pair%s on different host bridges shown as "
			 "NODE, which cannot be told apart from SYS without NUMA information",
			 guesses, guesses == 1 ? "" : "s");
		if (add_note(t, buf) < 0)
			goto out;
	}
	if (unrooted) {
		snprintf(buf, sizeof(buf),
			 "no host bridge above some devices (bridges missing from the topology): "
			 "%zu device pair%s UNKNOWN or guessed with the top bridge as root port",
			 unrooted, unrooted == 1 ? "" : "s");
		if (add_note(t, buf) < 0)
			goto out;
	}
	if (!t->n_gpus && add_note(t, "no GPUs found (PCI class 0302, 0300 from NVIDIA or AMD, "
				      "or 12xx)") < 0)
		goto out;
	if (!t->n_nics && add_note(t, "no NICs found (PCI class 02xx)") < 0)
		goto out;
	*ret = t;
	t = NULL;
	r = 0;
out:
	free(c);
	rf_pcitopo_free(t);
	return r;
}

enum rf_level
rf_pcitopo_level(const struct rf_pcitopo *t, size_t i, size_t j)
{
	if (i >= t->n_devices || j >= t->n_devices)
		return RF_LEVEL_UNKNOWN;
	if (i == j)
		return RF_LEVEL_PIX;
	return (enum rf_level)t->levels[i * t->n_devices + j];
}

unsigned
rf_pcitopo_nvlinks(const struct rf_pcitopo *t, size_t i, size_t j)
{
	if (!t->nvlinks || i >= t->n_devices || j >= t->n_devices || i == j)
		return 0;
	return t->nvlinks[i * t->n_devices + j];
}

enum rf_level
rf_pcitopo_gpu_level(const struct rf_pcitopo *t, size_t i, size_t j)
{
	return rf_pcitopo_nvlinks(t, i, j) ? RF_LEVEL_NVL : rf_pcitopo_level(t, i, j);
}

int
rf_pcitopo_find(const struct rf_pcitopo *t, const char *pci)
{
	char norm[RF_PCI_ADDR_LEN];
	if (rf_pci_normalize(pci, norm) < 0)
		return -EINVAL;
	for (size_t i = 0; i < t->n_devices; i++)
		if (strcmp(t->devices[i].pci, norm) == 0)
			return (int)i;
	return -ENOENT;
}
