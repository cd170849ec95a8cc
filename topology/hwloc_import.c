/* Walks an hwloc topology (read only) and copies its I/O tree into a struct rf_pcitree. Any
 * thread, as long as the topology is loaded and not modified (hwloc allows concurrent reads after
 * load). */
#include "topology/hwloc_import.h"

#include <errno.h>
#include <stdio.h>

int
rf_hwloc_set_filters(hwloc_topology_t topo)
{
	if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) <
		    0)
		return errno ? -errno : -EINVAL;
	return 0;
}

struct import {
	hwloc_topology_t topo;
	struct rf_pcitree *t;
	bool numa_known;
};

/* The NUMA node of an I/O object: from the nodeset of its first non-I/O ancestor, whatever that
 * is (NUMA-local Package, a Package of several NUMA nodes as with Cluster-on-Die, a Group),
 * as hwloc's own locality rule. The ancestor's first NUMA node stands for it: two such
 * ancestors are either the same or disjoint. A device hwloc could only attach to the
 * whole machine (of several NUMA nodes) has no known locality. */
static int
numa_of(const struct import *im, hwloc_obj_t obj)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(im->topo, obj);
	hwloc_obj_t root = hwloc_get_root_obj(im->topo);
	/* the complete nodeset: a process confined to some NUMA nodes (a cgroup cpuset, or an XML
	 * exported from one) sees an empty nodeset on the other packages, whose devices are still
	 * where they are */
	hwloc_const_nodeset_t ns = anc && anc->complete_nodeset ? anc->complete_nodeset
				   : anc                        ? anc->nodeset
								: NULL;
	hwloc_const_nodeset_t all = root->complete_nodeset ? root->complete_nodeset : root->nodeset;
	if (!im->numa_known || !ns || hwloc_bitmap_iszero(ns))
		return -1;
	if (hwloc_bitmap_weight(ns) > 1 && all && hwloc_bitmap_isincluded(all, ns))
		return -1;
	return hwloc_bitmap_first(ns);
}

static void
pci_fill(struct rf_pcitree_node *n, const struct hwloc_pcidev_attr_s *p)
{
	snprintf(n->pci, sizeof(n->pci), "%04x:%02x:%02x.%01x", (unsigned)p->domain & 0xffffu,
		 (unsigned)p->bus, (unsigned)p->dev & 0x1fu, (unsigned)p->func & 0x7u);
	n->vendor_id = p->vendor_id;
	n->device_id = p->device_id;
	n->class_id = p->class_id;
}

/* One I/O object and its I/O subtree; parent is the tree index of its I/O parent, or -1. */
static int
import_io(struct import *im, hwloc_obj_t obj, int parent)
{
	struct rf_pcitree_node n = { .parent = parent };
	int idx, r;

	switch (obj->type) {
	case HWLOC_OBJ_OS_DEVICE: {
		const struct rf_pcitree_node *p = rf_pcitree_node(im->t, parent);
		if (p && p->type == RF_PCITREE_DEVICE && obj->name && obj->name[0])
			return rf_pcitree_add_name(im->t, parent, obj->name);
		return 0;
	}
	case HWLOC_OBJ_BRIDGE:
		if (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
			n.type = RF_PCITREE_HOSTBRIDGE;
			if (obj->attr->bridge.downstream_type == HWLOC_OBJ_BRIDGE_PCI) {
				n.domain = obj->attr->bridge.downstream.pci.domain;
				n.bus = obj->attr->bridge.downstream.pci.secondary_bus;
			}
		} else {
			n.type = RF_PCITREE_BRIDGE;
			pci_fill(&n, &obj->attr->bridge.upstream.pci);
		}
		break;
	case HWLOC_OBJ_PCI_DEVICE:
		n.type = RF_PCITREE_DEVICE;
		pci_fill(&n, &obj->attr->pcidev);
		break;
	default:
		return 0;
	}
	n.numa = numa_of(im, obj);
	idx = rf_pcitree_add(im->t, &n);
	if (idx < 0)
		return idx;
	for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling)
		if ((r = import_io(im, c, idx)) < 0)
			return r;
	return 0;
}

/* A CPU-side object: the I/O trees hanging off it, then its normal children. */
static int
walk(struct import *im, hwloc_obj_t obj)
{
	int r;
	for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling)
		if ((r = import_io(im, c, -1)) < 0)
			return r;
	for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling)
		if ((r = walk(im, c)) < 0)
			return r;
	return 0;
}

int
rf_hwloc_import(hwloc_topology_t topo, struct rf_pcitree **ret)
{
	struct import im = { .topo = topo };
	int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	char note[256];
	int r;

	im.t = rf_pcitree_new();
	if (!im.t)
		return -ENOMEM;
	/* hwloc invents one NUMA node when the OS reports none: with several packages that says
	 * nothing about which socket a device hangs off */
	im.numa_known = !(nnuma <= 1 && npkg > 1);
	if (!im.numa_known) {
		snprintf(note, sizeof(note),
			 "the topology has %d NUMA node%s for %d packages: no NUMA information, so "
			 "NODE and SYS cannot be told apart",
			 nnuma, nnuma == 1 ? "" : "s", npkg);
		if ((r = rf_pcitree_add_note(im.t, note)) < 0)
			goto fail;
	}
	if ((r = walk(&im, hwloc_get_root_obj(topo))) < 0)
		goto fail;
	*ret = im.t;
	return 0;
fail:
	rf_pcitree_free(im.t);
	return r;
}
