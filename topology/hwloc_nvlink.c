/* hwloc's NVLinkBandwidth matrix into NVLink edges of a struct rf_pcitree. Read-only on the
 * topology; any thread once it is loaded. */
#include "topology/hwloc_nvlink.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

unsigned
rf_nvlink_count(unsigned long long mbps)
{
	/* hwloc adds 25000 per link of NVLink 2, 3 and 4 and 20000 per NVLink 1 link */
	unsigned long long n;
	if (!mbps)
		return 0;
	if (mbps % 25000 == 0)
		n = mbps / 25000;
	else if (mbps % 20000 == 0)
		n = mbps / 20000;
	else
		n = (mbps + 12500) / 25000;
	if (n == 0)
		n = 1;
	return n > 255 ? 255 : (unsigned)n;
}

/* The tree index of the PCI function an object of the matrix stands for, or -1. */
static int
tree_index(const struct rf_pcitree *t, hwloc_obj_t obj)
{
	char pci[RF_PCI_ADDR_LEN];
	if (obj->type == HWLOC_OBJ_OS_DEVICE)
		obj = obj->parent; /* nvml0 hangs below its GPU */
	if (!obj || obj->type != HWLOC_OBJ_PCI_DEVICE)
		return -1;
	const struct hwloc_pcidev_attr_s *p = &obj->attr->pcidev;
	snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%01x", (unsigned)p->domain & 0xffffu,
		 (unsigned)p->bus, (unsigned)p->dev & 0x1fu, (unsigned)p->func & 0x7u);
	for (size_t i = 0; i < rf_pcitree_count(t); i++) {
		const struct rf_pcitree_node *n = rf_pcitree_node(t, (int)i);
		if (n->type == RF_PCITREE_DEVICE && strcmp(n->pci, pci) == 0)
			return (int)i;
	}
	return -1;
}

int
rf_hwloc_import_nvlinks(hwloc_topology_t topo, struct rf_pcitree *t)
{
	struct hwloc_distances_s *dist[4];
	unsigned nr = 4;
	int r = 0;

	if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, dist, 0) < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (nr > 4)
		nr = 4;
	for (unsigned k = 0; k < nr && r == 0; k++) {
		struct hwloc_distances_s *d = dist[k];
		unsigned n = d->nbobjs;
		int idx[256];
		if (n > 256)
			n = 256; /* far beyond any machine: 16 GPUs and 12 NVSwitches make 28 */
		for (unsigned i = 0; i < n; i++)
			idx[i] = d->objs[i] ? tree_index(t, d->objs[i]) : -1;
		for (unsigned i = 0; i < n && r == 0; i++)
			for (unsigned j = i + 1; j < n && r == 0; j++) {
				/* the matrix is symmetric; take the larger side if it is not */
				hwloc_uint64_t v = d->values[i * d->nbobjs + j],
					       w = d->values[j * d->nbobjs + i];
				unsigned links = rf_nvlink_count(v > w ? v : w);
				if (!links || idx[i] < 0 || idx[j] < 0 || idx[i] == idx[j])
					continue;
				r = rf_pcitree_add_nvlink(t, idx[i], idx[j], links);
				if (r == -EINVAL)
					r = 0;
			}
	}
	for (unsigned k = 0; k < nr; k++)
		hwloc_distances_release(topo, dist[k]);
	return r;
}
