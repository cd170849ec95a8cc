/* Below the root complex (DESIGN section 5): the level rule on hand-built PCI trees, on the real
 * hwloc topologies of test/data/topology (copies of ../shared/fixtures/hwloc) and on the synthetic
 * HGX-like ones written by test/gen_hgx_xml.py; the annotation codec; the JSON and table views.
 *
 * Expected matrices are written out by hand from the rule, one character per level:
 *   X self, P PIX, B PXB, H PHB, N NODE, S SYS, U UNKNOWN.
 * Devices are in the order railfit prints them: GPUs, then NICs, each by PCI address. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <hwloc.h>

#include "topology/annotation.h"
#include "topology/hwloc_import.h"
#include "topology/pcitree.h"

Suite *topology_suite(void);

static const char level_chars[] = "PBHNSU";

static char
lc(enum rf_level l)
{
	return l < RF_LEVEL_COUNT ? level_chars[l] : '?';
}

static struct rf_pcitopo *
load_xml(const char *name)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[1024];
	hwloc_topology_t topo;
	struct rf_pcitree *tree = NULL;
	struct rf_pcitopo *t = NULL;

	snprintf(path, sizeof(path), "%s/topology/%s", dir ? dir : "test/data", name);
	ck_assert_int_eq(hwloc_topology_init(&topo), 0);
	ck_assert_int_eq(rf_hwloc_set_filters(topo), 0);
	ck_assert_msg(hwloc_topology_set_xml(topo, path) == 0, "cannot use %s", path);
	ck_assert_msg(hwloc_topology_load(topo) == 0, "cannot load %s", path);
	ck_assert_int_eq(rf_hwloc_import(topo, &tree), 0);
	hwloc_topology_destroy(topo);
	ck_assert_int_eq(rf_pcitopo_compute(tree, &t), 0);
	rf_pcitree_free(tree);
	return t;
}

/* Compare a computed topology with device addresses and matrix rows (spaces ignored). */
static void
check_matrix(const struct rf_pcitopo *t, const char *const *pci, const char *const *rows, size_t n)
{
	ck_assert_uint_eq(t->n_devices, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(t->devices[i].pci, pci[i]);
	for (size_t i = 0; i < n; i++) {
		const char *r = rows[i];
		for (size_t j = 0; j < n; j++) {
			while (*r == ' ')
				r++;
			ck_assert_msg(*r, "row %zu is short", i);
			char want = *r++;
			char got = i == j ? 'X' : lc(rf_pcitopo_level(t, i, j));
			ck_assert_msg(got == want, "%s -> %s: expected %c, got %c", pci[i], pci[j],
				      want, got);
		}
		while (*r == ' ')
			r++;
		ck_assert_msg(*r == '\0', "row %zu is long", i);
	}
}

static bool
has_note(const struct rf_pcitopo *t, const char *needle)
{
	for (size_t i = 0; i < t->n_notes; i++)
		if (strstr(t->notes[i], needle))
			return true;
	return false;
}

/* ------------------------------------------------------------------------------------------ */
/* the rule on hand-built trees                                                                */

START_TEST(test_topology_classify)
{
	ck_assert_int_eq(rf_pci_classify(0x0302, 0x10de), RF_PCI_GPU); /* 3D controller */
	ck_assert_int_eq(rf_pci_classify(0x0302, 0x8086), RF_PCI_GPU);
	ck_assert_int_eq(rf_pci_classify(0x0300, 0x10de), RF_PCI_GPU);   /* VGA from NVIDIA */
	ck_assert_int_eq(rf_pci_classify(0x0300, 0x1002), RF_PCI_GPU);   /* VGA from AMD */
	ck_assert_int_eq(rf_pci_classify(0x0300, 0x102b), RF_PCI_OTHER); /* a BMC's Matrox */
	ck_assert_int_eq(rf_pci_classify(0x1200, 0x1d0f), RF_PCI_GPU); /* processing accelerator */
	ck_assert_int_eq(rf_pci_classify(0x1280, 0x1234), RF_PCI_GPU);
	ck_assert_int_eq(rf_pci_classify(0x0200, 0x15b3), RF_PCI_NIC); /* Ethernet */
	ck_assert_int_eq(rf_pci_classify(0x0207, 0x15b3), RF_PCI_NIC); /* InfiniBand */
	ck_assert_int_eq(rf_pci_classify(0x0280, 0x1137), RF_PCI_NIC);
	ck_assert_int_eq(rf_pci_classify(0x0680, 0x10de), RF_PCI_OTHER); /* NVSwitch */
	ck_assert_int_eq(rf_pci_classify(0x0000, 0x0000), RF_PCI_OTHER); /* zeroed NVSwitch */
	ck_assert_int_eq(rf_pci_classify(0x0c06, 0x15b3), RF_PCI_OTHER); /* not class 02xx */
	ck_assert_int_eq(rf_pci_classify(0x0107, 0x8086), RF_PCI_OTHER); /* SAS */
	ck_assert_int_eq(rf_pci_classify(0x1180, 0x8086), RF_PCI_OTHER); /* signal processing */
	ck_assert_str_eq(rf_pci_kind_name(RF_PCI_GPU), "gpu");
	ck_assert_str_eq(rf_pci_kind_name(RF_PCI_NIC), "nic");
	ck_assert_str_eq(rf_pci_kind_name(RF_PCI_OTHER), "other");
}
END_TEST

static int
add(struct rf_pcitree *t, enum rf_pcitree_type type, int parent, int numa, const char *pci,
    unsigned cls, unsigned vendor)
{
	struct rf_pcitree_node n = {
		.type = type, .parent = parent, .numa = numa, .class_id = cls, .vendor_id = vendor
	};
	if (pci)
		snprintf(n.pci, sizeof(n.pci), "%s", pci);
	int idx = rf_pcitree_add(t, &n);
	ck_assert_int_ge(idx, 0);
	return idx;
}

#define HB(parent, numa)     add(t, RF_PCITREE_HOSTBRIDGE, parent, numa, NULL, 0, 0)
#define BR(parent, numa, p)  add(t, RF_PCITREE_BRIDGE, parent, numa, p, 0x0604, 0x10b5)
#define GPU(parent, numa, p) add(t, RF_PCITREE_DEVICE, parent, numa, p, 0x0302, 0x10de)
#define NIC(parent, numa, p) add(t, RF_PCITREE_DEVICE, parent, numa, p, 0x0200, 0x15b3)

START_TEST(test_topology_rule_units)
{
	struct rf_pcitree *t = rf_pcitree_new();
	unsigned f;
	ck_assert_ptr_nonnull(t);
	/*
	 * hb0 (NUMA 0)
	 *   rp1 ── a (NIC 01:00.0), b (GPU 01:00.1)
	 *   rp2 ── us1 (switch S1) ── ds1 ── c (GPU 04:00.0)
	 *                          └─ ds2 ── us2 (switch S2) ── ds3 ── d (NIC 07:00.0)
	 *                                                   └─ ds4 ── e (GPU 08:00.0)
	 *   f (NIC 00:1f.6, integrated, directly on the host bridge)
	 * hb1 (NUMA 0) ── rp ── g (GPU)      hb2 (NUMA 1) ── rp ── h (NIC)
	 * hb3 (NUMA unknown) ── rp ── i (NIC)
	 */
	int hb0 = HB(-1, 0);
	int rp1 = BR(hb0, 0, "0000:00:01.0");
	int a = NIC(rp1, 0, "0000:01:00.0");
	int b = GPU(rp1, 0, "0000:01:00.1");
	int rp2 = BR(hb0, 0, "0000:00:02.0");
	int us1 = BR(rp2, 0, "0000:02:00.0");
	int ds1 = BR(us1, 0, "0000:03:00.0");
	int c = GPU(ds1, 0, "0000:04:00.0");
	int ds2 = BR(us1, 0, "0000:03:01.0");
	int us2 = BR(ds2, 0, "0000:05:00.0");
	int ds3 = BR(us2, 0, "0000:06:00.0");
	int d = NIC(ds3, 0, "0000:07:00.0");
	int ds4 = BR(us2, 0, "0000:06:01.0");
	int e = GPU(ds4, 0, "0000:08:00.0");
	int fdev = NIC(hb0, 0, "0000:00:1f.6");
	int hb1 = HB(-1, 0);
	int g = GPU(BR(hb1, 0, "0000:40:01.0"), 0, "0000:41:00.0");
	int hb2 = HB(-1, 1);
	int h = NIC(BR(hb2, 1, "0000:80:01.0"), 1, "0000:81:00.0");
	int hb3 = HB(-1, -1);
	int i = NIC(BR(hb3, -1, "0000:c0:01.0"), -1, "0000:c1:00.0");

	/* a, b: two functions behind one root port: the root port is the only unit */
	ck_assert_int_eq(rf_pcitree_level(t, a, b, &f), RF_LEVEL_PIX);
	ck_assert_uint_eq(f, 0);
	/* d, e: behind switch S2 (ds3, us2, ds4 all belong to S2) */
	ck_assert_int_eq(rf_pcitree_level(t, d, e, NULL), RF_LEVEL_PIX);
	/* c, d: ds1 (S1), us1 (S1), ds2 (S1), us2 (S2), ds3 (S2): two switches */
	ck_assert_int_eq(rf_pcitree_level(t, c, d, NULL), RF_LEVEL_PXB);
	ck_assert_int_eq(rf_pcitree_level(t, d, c, NULL), RF_LEVEL_PXB);
	ck_assert_int_eq(rf_pcitree_level(t, c, e, NULL), RF_LEVEL_PXB);
	/* different root ports of one host bridge, and a device on the host bridge itself */
	ck_assert_int_eq(rf_pcitree_level(t, a, c, NULL), RF_LEVEL_PHB);
	ck_assert_int_eq(rf_pcitree_level(t, fdev, a, NULL), RF_LEVEL_PHB);
	ck_assert_int_eq(rf_pcitree_level(t, fdev, e, NULL), RF_LEVEL_PHB);
	/* other host bridges: same NUMA node, other NUMA node, unknown NUMA node */
	ck_assert_int_eq(rf_pcitree_level(t, a, g, &f), RF_LEVEL_NODE);
	ck_assert_uint_eq(f, 0);
	ck_assert_int_eq(rf_pcitree_level(t, a, h, NULL), RF_LEVEL_SYS);
	ck_assert_int_eq(rf_pcitree_level(t, g, h, NULL), RF_LEVEL_SYS);
	ck_assert_int_eq(rf_pcitree_level(t, a, i, &f), RF_LEVEL_NODE);
	ck_assert_uint_eq(f, RF_PCITREE_NUMA_GUESS);
	/* degenerate input */
	ck_assert_int_eq(rf_pcitree_level(t, a, a, NULL), RF_LEVEL_PIX);
	ck_assert_int_eq(rf_pcitree_level(t, a, 9999, NULL), RF_LEVEL_UNKNOWN);
	ck_assert_int_eq(rf_pcitree_level(t, -1, a, NULL), RF_LEVEL_UNKNOWN);
	/* bridges themselves may be compared too (the rule walks nodes) */
	ck_assert_int_eq(rf_pcitree_level(t, ds3, ds4, NULL), RF_LEVEL_PIX);
	(void)ds1;
	(void)ds2;
	(void)us1;
	rf_pcitree_free(t);
}
END_TEST

START_TEST(test_topology_rule_without_host_bridges)
{
	struct rf_pcitree *t = rf_pcitree_new();
	unsigned f;
	/* bridges dropped from the export: devices hang off the CPU side directly */
	int j = NIC(-1, 0, "0000:18:00.0");
	int k = GPU(-1, 0, "0000:1b:00.0");
	int l = GPU(-1, 1, "0000:9d:00.0");
	int m = GPU(-1, -1, "0000:df:00.0");
	/* host bridges dropped but PCI bridges kept: the top bridge is taken as the root port */
	int top = BR(-1, 0, "0000:30:00.0");
	int us = BR(top, 0, "0000:31:00.0");
	int x = NIC(BR(us, 0, "0000:32:00.0"), 0, "0000:33:00.0");
	int y = GPU(BR(us, 0, "0000:32:01.0"), 0, "0000:34:00.0");
	int z = GPU(top, 0, "0000:31:00.1");

	ck_assert_int_eq(rf_pcitree_level(t, j, k, &f), RF_LEVEL_UNKNOWN);
	ck_assert_uint_eq(f, RF_PCITREE_NO_HOSTBRIDGE);
	/* different NUMA nodes are SYS whatever the PCI tree */
	ck_assert_int_eq(rf_pcitree_level(t, j, l, &f), RF_LEVEL_SYS);
	ck_assert_uint_eq(f, RF_PCITREE_NO_HOSTBRIDGE);
	ck_assert_int_eq(rf_pcitree_level(t, j, m, NULL), RF_LEVEL_UNKNOWN);
	ck_assert_int_eq(rf_pcitree_level(t, x, y, &f), RF_LEVEL_PIX); /* one switch */
	ck_assert_uint_eq(f, RF_PCITREE_NO_HOSTBRIDGE);
	ck_assert_int_eq(rf_pcitree_level(t, x, z, NULL), RF_LEVEL_PXB); /* switch + root port */
	ck_assert_int_eq(rf_pcitree_level(t, x, j, NULL), RF_LEVEL_UNKNOWN);

	struct rf_pcitopo *p;
	ck_assert_int_eq(rf_pcitopo_compute(t, &p), 0);
	ck_assert(has_note(p, "no host bridge above some devices"));
	rf_pcitopo_free(p);
	rf_pcitree_free(t);
}
END_TEST

START_TEST(test_topology_tree_validation)
{
	struct rf_pcitree *t = rf_pcitree_new();
	struct rf_pcitree_node n = { .type = RF_PCITREE_DEVICE, .parent = -1, .numa = 0 };

	snprintf(n.pci, sizeof(n.pci), "1B:00.0"); /* no domain, upper case */
	ck_assert_int_eq(rf_pcitree_add(t, &n), 0);
	ck_assert_str_eq(rf_pcitree_node(t, 0)->pci, "0000:1b:00.0");
	n.parent = 1; /* not added yet: no cycles possible */
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	n.parent = -2;
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	n.parent = 0;
	n.numa = -2;
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	n.numa = 0;
	snprintf(n.pci, sizeof(n.pci), "0000:1b:20.0"); /* device > 0x1f */
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	memset(n.pci, 'a', sizeof(n.pci)); /* not NUL-terminated */
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	n.pci[0] = '\0';
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL); /* devices need an address */
	n.type = (enum rf_pcitree_type)7;
	ck_assert_int_eq(rf_pcitree_add(t, &n), -EINVAL);
	ck_assert_uint_eq(rf_pcitree_count(t), 1);
	ck_assert_ptr_null(rf_pcitree_node(t, 1));
	ck_assert_int_eq(rf_pcitree_add_name(t, 5, "eth0"), -EINVAL);
	ck_assert_int_eq(rf_pcitree_add_name(t, 0, ""), -EINVAL);
	ck_assert_int_eq(rf_pcitree_add_name(t, 0, "eth0"), 0);
	rf_pcitree_free(t);
	rf_pcitree_free(NULL);
	rf_pcitopo_free(NULL);
}
END_TEST

START_TEST(test_topology_compute_order_duplicates_empty)
{
	struct rf_pcitree *t = rf_pcitree_new();
	struct rf_pcitopo *p;
	int hb = HB(-1, 0);
	int rp = BR(hb, 0, "0000:00:01.0");
	NIC(rp, 0, "0000:01:00.1");
	GPU(rp, 0, "0000:01:00.2");
	int dup = NIC(rp, 0, "0000:01:00.0");
	ck_assert_int_eq(rf_pcitree_add_name(t, dup, "eth0"), 0);
	/* the same address again, as in 32em64t-2n8c2t-pci-wholeio.xml (SAS and InfiniBand) */
	GPU(BR(HB(-1, 1), 1, "0000:80:01.0"), 1, "0000:01:00.0");
	add(t, RF_PCITREE_DEVICE, rp, 0, "0000:01:00.3", 0x0107, 0x8086); /* SAS: ignored */

	ck_assert_int_eq(rf_pcitopo_compute(t, &p), 0);
	/* GPUs first, then NICs, by address; the second 0000:01:00.0 is dropped with a note */
	ck_assert_uint_eq(p->n_devices, 3);
	ck_assert_uint_eq(p->n_gpus, 1);
	ck_assert_uint_eq(p->n_nics, 2);
	ck_assert_str_eq(p->devices[0].pci, "0000:01:00.2");
	ck_assert_str_eq(p->devices[1].pci, "0000:01:00.0");
	ck_assert_str_eq(p->devices[2].pci, "0000:01:00.1");
	ck_assert_uint_eq(p->devices[1].n_names, 1);
	ck_assert_str_eq(p->devices[1].names[0], "eth0");
	ck_assert_str_eq(p->devices[1].pcie_root, "pci0000:00");
	ck_assert(has_note(p, "0000:01:00.0 appears more than once"));
	ck_assert_int_eq(rf_pcitopo_find(p, "pci-0000-01-00-1"), 2);
	ck_assert_int_eq(rf_pcitopo_find(p, "01:00.7"), -ENOENT);
	ck_assert_int_eq(rf_pcitopo_find(p, "nope"), -EINVAL);
	rf_pcitopo_free(p);
	rf_pcitree_free(t);

	/* nothing at all: clear notes, an empty but valid annotation */
	t = rf_pcitree_new();
	ck_assert_int_eq(rf_pcitopo_compute(t, &p), 0);
	ck_assert_uint_eq(p->n_devices, 0);
	ck_assert(has_note(p, "no GPUs found"));
	ck_assert(has_note(p, "no NICs found"));
	char *v;
	ck_assert_int_eq(rf_topo_annotation_encode(p, &v), 0);
	ck_assert_str_eq(v, "{\"v\":1,\"d\":[],\"k\":\"\",\"n\":[],\"c\":[],\"m\":\"\"}");
	struct rf_topo_annotation *a;
	ck_assert_int_eq(rf_topo_annotation_decode(v, strlen(v), &a, NULL, 0), 0);
	ck_assert_uint_eq(rf_topo_annotation_n_devices(a), 0);
	enum rf_level l;
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:01:00.0", "0000:01:00.1", &l), -ENOENT);
	rf_topo_annotation_free(a);
	free(v);
	char *table;
	ck_assert_int_eq(rf_pcitopo_table(p, &table), 0);
	ck_assert_ptr_nonnull(strstr(table, "No GPUs or NICs found"));
	ck_assert_ptr_nonnull(strstr(table, "no NICs found (PCI class 02xx)"));
	free(table);
	rf_pcitopo_free(p);
	rf_pcitree_free(t);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* real machines (../shared/fixtures/hwloc)                                                    */

START_TEST(test_topology_fixture_wholeio)
{
	/* Package 0 / NUMA 0: root port 00:03.0 -> Tesla 03:00.0 (the SAS controller, the Matrox
	 * VGA and the SATA controller are not GPUs or NICs).
	 * Package 1 / NUMA 1, one host bridge: root port 80:01.0 -> I350 81:00.0/.1; root port
	 * 80:02.0 -> Tesla 83:00.0; root port 80:03.0 -> Tesla 84:00.0, AMD Radeon 84:00.1 (class
	 * 0300 from AMD: a GPU) and ConnectX-4 04:00.0 (InfiniBand, class 0207; its bus repeats the
	 * SAS controller's 0000:04:00.0, which is ignored).
	 * - 03:00.0 is on the other NUMA node from everything: SYS
	 * - behind root port 80:03.0 (84:00.0, 84:00.1, 04:00.0): one unit, the root port: PIX
	 * - the two I350 functions behind root port 80:01.0: PIX
	 * - otherwise two root ports of host bridge 80: PHB */
	static const char *const pci[] = { "0000:03:00.0", "0000:83:00.0", "0000:84:00.0",
					   "0000:84:00.1", "0000:04:00.0", "0000:81:00.0",
					   "0000:81:00.1" };
	/* clang-format off */
	static const char *const rows[] = {
		"X S S S  S S S", /* GPU0 03:00.0 */
		"S X H H  H H H", /* GPU1 83:00.0 */
		"S H X P  P H H", /* GPU2 84:00.0 */
		"S H P X  P H H", /* GPU3 84:00.1 */
		"S H P P  X H H", /* NIC0 04:00.0 */
		"S H H H  H X P", /* NIC1 81:00.0 */
		"S H H H  H P X", /* NIC2 81:00.1 */
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("32em64t-2n8c2t-pci-wholeio.xml");
	check_matrix(t, pci, rows, 7);
	ck_assert_uint_eq(t->n_gpus, 4);
	ck_assert_uint_eq(t->n_nics, 3);
	ck_assert_int_eq(t->devices[0].numa, 0);
	ck_assert_int_eq(t->devices[1].numa, 1);
	ck_assert_int_eq(t->devices[4].kind, RF_PCI_NIC);
	ck_assert_uint_eq(t->devices[4].class_id, 0x0207);
	ck_assert_str_eq(t->devices[4].names[0], "ib0");
	ck_assert_str_eq(t->devices[4].names[1], "mlx5_0");
	ck_assert_str_eq(t->devices[2].pcie_root, "pci0000:80");
	ck_assert_str_eq(t->devices[0].pcie_root, "pci0000:00");
	ck_assert_uint_eq(t->n_notes, 0);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_fixture_dgx2)
{
	/* Four host bridges, two per package. Each: root port -> switch S (PEX 9781/9797) -> two
	 * downstream ports -> each a second switch L holding two GPUs.
	 * - two GPUs behind one leaf switch L: L's downstream and upstream ports, one unit: PIX
	 * - same root port, different leaf switches: L1, S, L2: three units: PXB
	 * - the other host bridge of the same package (NUMA node): NODE; the other package: SYS
	 * NVSwitches (class 0680, one zeroed) are not GPUs; there are no NICs. */
	static const char *const pci[] = {
		"0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",
		"0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",
		"0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
		"0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0",
	};
	/* clang-format off */
	static const char *const rows[] = {
		"X P B B  N N N N  S S S S  S S S S",
		"P X B B  N N N N  S S S S  S S S S",
		"B B X P  N N N N  S S S S  S S S S",
		"B B P X  N N N N  S S S S  S S S S",
		"N N N N  X P B B  S S S S  S S S S",
		"N N N N  P X B B  S S S S  S S S S",
		"N N N N  B B X P  S S S S  S S S S",
		"N N N N  B B P X  S S S S  S S S S",
		"S S S S  S S S S  X P B B  N N N N",
		"S S S S  S S S S  P X B B  N N N N",
		"S S S S  S S S S  B B X P  N N N N",
		"S S S S  S S S S  B B P X  N N N N",
		"S S S S  S S S S  N N N N  X P B B",
		"S S S S  S S S S  N N N N  P X B B",
		"S S S S  S S S S  N N N N  B B X P",
		"S S S S  S S S S  N N N N  B B P X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("nvidiaDGX2.xml");
	check_matrix(t, pci, rows, 16);
	ck_assert_uint_eq(t->n_nics, 0);
	ck_assert(has_note(t, "no NICs found"));
	ck_assert_str_eq(t->devices[15].names[0], "nvml15");
	ck_assert_int_eq(t->devices[15].numa, 1);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_fixture_many_vfs)
{
	/* Package 0 / NUMA 0, one host bridge: root port 00:01.1 -> I350 02:00.0/.1; root port
	 * 00:03.0 -> Cisco VIC: upstream port 06:00.0 (switch A), downstream port 07:01.0 (A),
	 * upstream port 09:00.0 (switch B), downstream ports 0a:00.0 and 0a:01.0 (B) -> functions
	 * 0b:00.0-3 and 0c:00.0-4 (class 0200, VFs of the VIC included, two with vendor 1138).
	 * Package 1 / NUMA 1: the same VIC chain -> 88:00.0-5 and 89:00.0.
	 * - the I350 functions share root port 00:01.1: PIX
	 * - 0b and 0c functions: the path crosses only switch B's ports: PIX
	 * - I350 to VIC functions: two root ports of host bridge 00: PHB
	 * - package 0 to package 1: SYS */
	static const char *const pci[] = {
		"0000:02:00.0", "0000:02:00.1", "0000:0b:00.0", "0000:0b:00.1", "0000:0b:00.2",
		"0000:0b:00.3", "0000:0c:00.0", "0000:0c:00.1", "0000:0c:00.2", "0000:0c:00.3",
		"0000:0c:00.4", "0000:88:00.0", "0000:88:00.1", "0000:88:00.2", "0000:88:00.3",
		"0000:88:00.4", "0000:88:00.5", "0000:89:00.0",
	};
	/* clang-format off */
	static const char *const rows[] = {
		"X P  H H H H H H H H H  S S S S S S S",
		"P X  H H H H H H H H H  S S S S S S S",
		"H H  X P P P P P P P P  S S S S S S S",
		"H H  P X P P P P P P P  S S S S S S S",
		"H H  P P X P P P P P P  S S S S S S S",
		"H H  P P P X P P P P P  S S S S S S S",
		"H H  P P P P X P P P P  S S S S S S S",
		"H H  P P P P P X P P P  S S S S S S S",
		"H H  P P P P P P X P P  S S S S S S S",
		"H H  P P P P P P P X P  S S S S S S S",
		"H H  P P P P P P P P X  S S S S S S S",
		"S S  S S S S S S S S S  X P P P P P P",
		"S S  S S S S S S S S S  P X P P P P P",
		"S S  S S S S S S S S S  P P X P P P P",
		"S S  S S S S S S S S S  P P P X P P P",
		"S S  S S S S S S S S S  P P P P X P P",
		"S S  S S S S S S S S S  P P P P P X P",
		"S S  S S S S S S S S S  P P P P P P X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("16intel64-manyVFs.xml");
	check_matrix(t, pci, rows, 18);
	ck_assert_uint_eq(t->n_gpus, 0);
	ck_assert(has_note(t, "no GPUs found"));
	rf_pcitopo_free(t);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* synthetic HGX-like machines (test/gen_hgx_xml.py)                                           */

/* Position of a device in the generated machines, from the generator's layout: host bridge
 * (by its bus), the slot below it (1: the GPU switch, 2+: a root port of its own) and the NIC
 * card behind the switch (0: none). */
struct pos {
	char pci[RF_PCI_ADDR_LEN];
	int socket, hb, slot, card;
};

/* The rule applied by hand to these layouts:
 * - same host bridge, same slot:
 *     both directly behind the switch (GPUs, or GPU/NIC on its downstream ports): the switch's
 *     downstream and upstream ports, one unit: PIX; the two functions of a root-port NIC: PIX;
 *     same card: the card switch's ports only: PIX;
 *     one on a card, the other not, or two cards: card switch(es) + the GPU switch: PXB
 * - same host bridge, different slots: the path meets at the host bridge: PHB
 * - different host bridges on one socket (one NUMA node each): NODE; different sockets: SYS */
static char
hand_rule(const struct pos *a, const struct pos *b)
{
	if (a->hb != b->hb)
		return a->socket == b->socket ? 'N' : 'S';
	if (a->slot != b->slot)
		return 'H';
	if (a->card == b->card)
		return 'P';
	return 'B';
}

static void
check_positions(const struct rf_pcitopo *t, const struct pos *p, size_t n)
{
	ck_assert_uint_eq(t->n_devices, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(t->devices[i].pci, p[i].pci);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				continue;
			char want = hand_rule(&p[i], &p[j]);
			char got = lc(rf_pcitopo_level(t, i, j));
			ck_assert_msg(got == want, "%s -> %s: expected %c, got %c", p[i].pci,
				      p[j].pci, want, got);
		}
}

static const int hgx_hb[2][4] = { { 0x15, 0x37, 0x48, 0x59 }, { 0x97, 0xb7, 0xc7, 0xd7 } };

static void
setpos(struct pos *p, int bus, int fn, int socket, int hb, int slot, int card)
{
	snprintf(p->pci, sizeof(p->pci), "0000:%02x:00.%d", bus, fn);
	p->socket = socket;
	p->hb = hb;
	p->slot = slot;
	p->card = card;
}

START_TEST(test_topology_generated_hgx_h100)
{
	/* 2 sockets x 4 host bridges; under each: root port hb:01.0 -> switch (upstream port
	 * (hb+1):00.0, downstream ports on bus hb+2) -> GPUs on buses hb+3, hb+4 and NICs on hb+5,
	 * hb+6. Front end: X710 (two functions) on root port 15:02.0, bus 1c. */
	struct pos p[34];
	size_t n = 0;
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++)
			for (int g = 0; g < 2; g++)
				setpos(&p[n++], hgx_hb[s][w] + 3 + g, 0, s, hgx_hb[s][w], 1, 0);
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++) {
			for (int k = 0; k < 2; k++)
				setpos(&p[n++], hgx_hb[s][w] + 5 + k, 0, s, hgx_hb[s][w], 1, 0);
			if (s == 0 && w == 0)
				for (int fn = 0; fn < 2; fn++)
					setpos(&p[n++], 0x1c, fn, 0, 0x15, 2, 0);
		}
	struct rf_pcitopo *t = load_xml("gen-hgx-h100.xml");
	check_positions(t, p, n);
	ck_assert_uint_eq(t->n_gpus, 16);
	ck_assert_uint_eq(t->n_nics, 18);
	/* spot checks, as nvidia-smi would print them */
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 16), RF_LEVEL_PIX);  /* GPU0 - NIC0, one switch */
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 18), RF_LEVEL_PHB);  /* GPU0 - front end */
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 20), RF_LEVEL_NODE); /* GPU0 - NIC of switch 1 */
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 33), RF_LEVEL_SYS);  /* GPU0 - socket 1 */
	ck_assert_uint_eq(t->n_notes, 0);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_hgx_h200_2nic)
{
	/* As hgx-h100, but behind each GPU switch: GPUs on hb+3, hb+4; card A on downstream port 2
	 * (card upstream port hb+5, card downstream ports on hb+6) with NICs on hb+7, hb+8; card B
	 * (hb+9, hb+10) with NICs on hb+11, hb+12. Front end on root port 15:02.0, bus 22. */
	struct pos p[50];
	size_t n = 0;
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++)
			for (int g = 0; g < 2; g++)
				setpos(&p[n++], hgx_hb[s][w] + 3 + g, 0, s, hgx_hb[s][w], 1, 0);
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++) {
			int hb = hgx_hb[s][w];
			static const int off[4] = { 7, 8, 11, 12 };
			for (int k = 0; k < 4; k++)
				setpos(&p[n++], hb + off[k], 0, s, hb, 1, 1 + k / 2);
			if (s == 0 && w == 0)
				for (int fn = 0; fn < 2; fn++)
					setpos(&p[n++], 0x22, fn, 0, 0x15, 2, 0);
		}
	struct rf_pcitopo *t = load_xml("gen-hgx-h200-2nic.xml");
	check_positions(t, p, n);
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 16), RF_LEVEL_PXB);  /* GPU0 - its card's NIC */
	ck_assert_int_eq(rf_pcitopo_level(t, 16, 17), RF_LEVEL_PIX); /* two NICs of one card */
	ck_assert_int_eq(rf_pcitopo_level(t, 16, 18), RF_LEVEL_PXB); /* NICs of two cards */
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_hgx_cpu_rootport)
{
	/* GPUs behind the switch on root port hb:01.0 (buses hb+3, hb+4); the two NICs on root
	 * ports hb:02.0 and hb:03.0 (buses hb+5, hb+6); the front end on root port 15:04.0 (bus
	 * 1c). A GPU and a NIC of one host bridge meet at the host bridge: PHB. */
	struct pos p[34];
	size_t n = 0;
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++)
			for (int g = 0; g < 2; g++)
				setpos(&p[n++], hgx_hb[s][w] + 3 + g, 0, s, hgx_hb[s][w], 1, 0);
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < 4; w++) {
			for (int k = 0; k < 2; k++)
				setpos(&p[n++], hgx_hb[s][w] + 5 + k, 0, s, hgx_hb[s][w], 2 + k, 0);
			if (s == 0 && w == 0)
				for (int fn = 0; fn < 2; fn++)
					setpos(&p[n++], 0x1c, fn, 0, 0x15, 4, 0);
		}
	struct rf_pcitopo *t = load_xml("gen-hgx-cpu-rootport.xml");
	check_positions(t, p, n);
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 16), RF_LEVEL_PHB);
	ck_assert_int_eq(rf_pcitopo_level(t, 0, 1), RF_LEVEL_PIX);
	rf_pcitopo_free(t);
}
END_TEST

/* DGX H100 at the addresses of test/data/dra: GPU i and NIC i behind switch i (host bridges 15,
 * 37, 48, 59 on socket 0; 97, b7, c7, d7 on socket 1); the X710 front end (2a:00.0/.1) on root
 * port 26:01.0 of its own host bridge on socket 0. NIC order: 18 (switch 0), 2a.0, 2a.1 (front
 * end), 40, 4f, 5e (switches 1-3), 9a, c0, ce, dc (switches 4-7). */
static const char *const dgx_pci[] = {
	"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0", "0000:9d:00.0",
	"0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0", "0000:18:00.0", "0000:2a:00.0",
	"0000:2a:00.1", "0000:40:00.0", "0000:4f:00.0", "0000:5e:00.0", "0000:9a:00.0",
	"0000:c0:00.0", "0000:ce:00.0", "0000:dc:00.0",
};

START_TEST(test_topology_generated_dgx_h100)
{
	/* - GPU i and NIC i behind one switch: PIX
	 * - the front end's two functions behind one root port: PIX
	 * - other host bridges of the socket (the front end's included): NODE; other socket: SYS */
	/* clang-format off */
	static const char *const rows[] = {
		"X N N N S S S S  P N N N N N S S S S", /* GPU0 1b */
		"N X N N S S S S  N N N P N N S S S S", /* GPU1 43 */
		"N N X N S S S S  N N N N P N S S S S", /* GPU2 52 */
		"N N N X S S S S  N N N N N P S S S S", /* GPU3 61 */
		"S S S S X N N N  S S S S S S P N N N", /* GPU4 9d */
		"S S S S N X N N  S S S S S S N P N N", /* GPU5 c3 */
		"S S S S N N X N  S S S S S S N N P N", /* GPU6 d1 */
		"S S S S N N N X  S S S S S S N N N P", /* GPU7 df */
		"P N N N S S S S  X N N N N N S S S S", /* NIC0 18 */
		"N N N N S S S S  N X P N N N S S S S", /* NIC1 2a.0 front end */
		"N N N N S S S S  N P X N N N S S S S", /* NIC2 2a.1 front end */
		"N P N N S S S S  N N N X N N S S S S", /* NIC3 40 */
		"N N P N S S S S  N N N N X N S S S S", /* NIC4 4f */
		"N N N P S S S S  N N N N N X S S S S", /* NIC5 5e */
		"S S S S P N N N  S S S S S S X N N N", /* NIC6 9a */
		"S S S S N P N N  S S S S S S N X N N", /* NIC7 c0 */
		"S S S S N N P N  S S S S S S N N X N", /* NIC8 ce */
		"S S S S N N N P  S S S S S S N N N X", /* NIC9 dc */
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("gen-dgx-h100.xml");
	check_matrix(t, dgx_pci, rows, 18);
	ck_assert_str_eq(t->devices[0].pcie_root, "pci0000:15");
	ck_assert_str_eq(t->devices[9].pcie_root, "pci0000:26");
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_dgx_h100_pxb)
{
	/* The same machine with each rail NIC behind a card switch: GPU i to NIC i crosses the GPU
	 * switch and the card switch: PXB. Everything else as in dgx-h100. */
	/* clang-format off */
	static const char *const rows[] = {
		"X N N N S S S S  B N N N N N S S S S",
		"N X N N S S S S  N N N B N N S S S S",
		"N N X N S S S S  N N N N B N S S S S",
		"N N N X S S S S  N N N N N B S S S S",
		"S S S S X N N N  S S S S S S B N N N",
		"S S S S N X N N  S S S S S S N B N N",
		"S S S S N N X N  S S S S S S N N B N",
		"S S S S N N N X  S S S S S S N N N B",
		"B N N N S S S S  X N N N N N S S S S",
		"N N N N S S S S  N X P N N N S S S S",
		"N N N N S S S S  N P X N N N S S S S",
		"N B N N S S S S  N N N X N N S S S S",
		"N N B N S S S S  N N N N X N S S S S",
		"N N N B S S S S  N N N N N X S S S S",
		"S S S S B N N N  S S S S S S X N N N",
		"S S S S N B N N  S S S S S S N X N N",
		"S S S S N N B N  S S S S S S N N X N",
		"S S S S N N N B  S S S S S S N N N X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("gen-dgx-h100-pxb.xml");
	check_matrix(t, dgx_pci, rows, 18);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_dgx_h100_without_bridges)
{
	/* gen-dgx-h100.xml exported again by `lstopo --filter bridge:none`: every device hangs off
	 * its package, no host bridge. Same package: the PCI path is unknown: UNKNOWN; different
	 * packages (NUMA nodes): SYS. */
	/* clang-format off */
	static const char *const rows[] = {
		"X U U U S S S S  U U U U U U S S S S",
		"U X U U S S S S  U U U U U U S S S S",
		"U U X U S S S S  U U U U U U S S S S",
		"U U U X S S S S  U U U U U U S S S S",
		"S S S S X U U U  S S S S S S U U U U",
		"S S S S U X U U  S S S S S S U U U U",
		"S S S S U U X U  S S S S S S U U U U",
		"S S S S U U U X  S S S S S S U U U U",
		"U U U U S S S S  X U U U U U S S S S",
		"U U U U S S S S  U X U U U U S S S S",
		"U U U U S S S S  U U X U U U S S S S",
		"U U U U S S S S  U U U X U U S S S S",
		"U U U U S S S S  U U U U X U S S S S",
		"U U U U S S S S  U U U U U X S S S S",
		"S S S S U U U U  S S S S S S X U U U",
		"S S S S U U U U  S S S S S S U X U U",
		"S S S S U U U U  S S S S S S U U X U",
		"S S S S U U U U  S S S S S S U U U X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("gen-dgx-h100-nobridges.xml");
	check_matrix(t, dgx_pci, rows, 18);
	ck_assert(has_note(t, "no host bridge above some devices"));
	ck_assert_str_eq(t->devices[0].pcie_root, "");
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_domains_vfs)
{
	/* One switch per socket holding 2 GPUs and 2 NICs, each NIC with 2 SR-IOV VFs (functions
	 * .1, .2); socket 1 in PCI domain 0001. Everything behind one switch: PIX; across sockets:
	 * SYS. Addresses keep their domain. */
	static const char *const pci[] = {
		"0000:18:00.0", "0000:19:00.0", "0001:9a:00.0", "0001:9b:00.0",
		"0000:1a:00.0", "0000:1a:00.1", "0000:1a:00.2", "0000:1b:00.0",
		"0000:1b:00.1", "0000:1b:00.2", "0001:9c:00.0", "0001:9c:00.1",
		"0001:9c:00.2", "0001:9d:00.0", "0001:9d:00.1", "0001:9d:00.2",
	};
	/* clang-format off */
	static const char *const rows[] = {
		"X P S S  P P P P P P  S S S S S S",
		"P X S S  P P P P P P  S S S S S S",
		"S S X P  S S S S S S  P P P P P P",
		"S S P X  S S S S S S  P P P P P P",
		"P P S S  X P P P P P  S S S S S S",
		"P P S S  P X P P P P  S S S S S S",
		"P P S S  P P X P P P  S S S S S S",
		"P P S S  P P P X P P  S S S S S S",
		"P P S S  P P P P X P  S S S S S S",
		"P P S S  P P P P P X  S S S S S S",
		"S S P P  S S S S S S  X P P P P P",
		"S S P P  S S S S S S  P X P P P P",
		"S S P P  S S S S S S  P P X P P P",
		"S S P P  S S S S S S  P P P X P P",
		"S S P P  S S S S S S  P P P P X P",
		"S S P P  S S S S S S  P P P P P X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("gen-hgx-domains-vfs.xml");
	check_matrix(t, pci, rows, 16);
	ck_assert_str_eq(t->devices[2].pcie_root, "pci0001:97");
	/* identical positions share a class: the annotation is two classes */
	char *v;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	ck_assert_ptr_nonnull(strstr(v, "\"c\":[0,0,1,1,0,0,0,0,0,0,1,1,1,1,1,1],\"m\":\"PSP\""));
	free(v);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_generated_no_numa)
{
	/* One NUMA node for two packages: nothing tells the packages apart, so devices of
	 * different host bridges are NODE (a guess, noted) and every NUMA node is unknown. GPUs
	 * 18, 19 and NIC 1a behind the switch of host bridge 15; GPUs 9a, 9b and NIC 9c behind the
	 * switch of host bridge 97. */
	static const char *const pci[] = { "0000:18:00.0", "0000:19:00.0", "0000:9a:00.0",
					   "0000:9b:00.0", "0000:1a:00.0", "0000:9c:00.0" };
	/* clang-format off */
	static const char *const rows[] = {
		"X P N N  P N", "P X N N  P N", "N N X P  N P",
		"N N P X  N P", "P P N N  X N", "N N P P  N X",
	};
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("gen-hgx-nonuma.xml");
	check_matrix(t, pci, rows, 6);
	for (size_t i = 0; i < 6; i++)
		ck_assert_int_eq(t->devices[i].numa, -1);
	ck_assert(has_note(t, "1 NUMA node for 2 packages"));
	ck_assert(has_note(t, "9 device pairs on different host bridges shown as NODE"));
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_fixture_numa_from_any_ancestor)
{
	/* hwloc's test suite. irregulargroups+pci: the GPUs hang off Packages whose nodeset is
	 * empty for the (confined) process that exported the XML, but whose complete nodeset says
	 * NUMA 4 and 7: SYS to each other and to the NICs of NUMA 0, not a NODE guess. */
	static const char *const pci[] = { "0002:01:00.0", "0004:01:00.0", "0000:01:00.0",
					   "0000:01:00.1" };
	/* clang-format off */
	static const char *const rows[] = { "X S S S", "S X S S", "S S X P", "S S P X" };
	/* clang-format on */
	struct rf_pcitopo *t = load_xml("64intel64-3g2n+2n-irregulargroups+pci.xml");
	check_matrix(t, pci, rows, 4);
	ck_assert_int_eq(t->devices[0].numa, 4);
	ck_assert_int_eq(t->devices[1].numa, 7);
	ck_assert_int_eq(t->devices[2].numa, 0);
	ck_assert(!has_note(t, "NUMA node unknown"));
	rf_pcitopo_free(t);
	/* Cluster-on-Die without groups: the NICs hang off Package 0, which holds NUMA nodes 0
	 * and 1; the package's first NUMA node stands for it */
	t = load_xml("28intel64-2p2g7c-CoD.nogroups.v1tov2.xml");
	ck_assert_uint_eq(t->n_devices, 2);
	ck_assert_int_eq(t->devices[0].numa, 0);
	ck_assert_int_eq(t->devices[1].numa, 0);
	rf_pcitopo_free(t);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* the annotation codec                                                                        */

static void
check_round_trip(const struct rf_pcitopo *t)
{
	char *v;
	struct rf_topo_annotation *a;
	char err[256];
	enum rf_level l;

	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	ck_assert_uint_le(strlen(v), RF_TOPO_ANNOTATION_MAX_BYTES);
	ck_assert_msg(rf_topo_annotation_decode(v, strlen(v), &a, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(rf_topo_annotation_n_devices(a), t->n_devices);
	for (size_t i = 0; i < t->n_devices; i++) {
		ck_assert_str_eq(rf_topo_annotation_pci(a, i), t->devices[i].pci);
		ck_assert_int_eq(rf_topo_annotation_kind(a, i), t->devices[i].kind);
		ck_assert_int_eq(rf_topo_annotation_numa(a, i), t->devices[i].numa);
		for (size_t j = 0; j < t->n_devices; j++) {
			ck_assert_int_eq(rf_topo_annotation_level(a, t->devices[i].pci,
								  t->devices[j].pci, &l),
					 0);
			ck_assert_int_eq(l, rf_pcitopo_level(t, i, j));
		}
	}
	rf_topo_annotation_free(a);
	free(v);
}

START_TEST(test_topology_annotation_round_trip)
{
	static const char *const files[] = {
		"nvidiaDGX2.xml",
		"32em64t-2n8c2t-pci-wholeio.xml",
		"16intel64-manyVFs.xml",
		"gen-hgx-h100.xml",
		"gen-hgx-h200-2nic.xml",
		"gen-hgx-cpu-rootport.xml",
		"gen-hgx-domains-vfs.xml",
		"gen-hgx-nonuma.xml",
		"gen-dgx-h100.xml",
		"gen-dgx-h100-pxb.xml",
		"gen-dgx-h100-nobridges.xml",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct rf_pcitopo *t = load_xml(files[i]);
		check_round_trip(t);
		rf_pcitopo_free(t);
	}
}
END_TEST

/* n devices (GPUs first) with levels from a fixed pseudo-random sequence: no two devices share
 * a position, the worst case for the annotation's size. */
static struct rf_pcitopo *
synthetic(size_t gpus, size_t nics)
{
	struct rf_pcitopo *t = calloc(1, sizeof(*t));
	size_t n = gpus + nics;
	unsigned x = 12345;
	ck_assert_ptr_nonnull(t);
	t->devices = calloc(n, sizeof(*t->devices));
	t->levels = calloc(n * n, 1);
	ck_assert(t->devices && t->levels);
	t->n_devices = n;
	t->n_gpus = gpus;
	t->n_nics = nics;
	for (size_t i = 0; i < n; i++) {
		/* two-domain addresses in both halves of the bus range */
		snprintf(t->devices[i].pci, sizeof(t->devices[i].pci), "%04zx:%02zx:00.0", i / 200,
			 (i * 7 + 0x10) % 256);
		t->devices[i].kind = i < gpus ? RF_PCI_GPU : RF_PCI_NIC;
		t->devices[i].numa = (int)(i >= n / 2);
		for (size_t j = i + 1; j < n; j++) {
			x = x * 1103515245u + 12345u;
			t->levels[i * n + j] = t->levels[j * n + i] =
				(unsigned char)((x >> 16) % RF_LEVEL_UNKNOWN);
		}
	}
	return t;
}

START_TEST(test_topology_annotation_size_16_16)
{
	struct rf_pcitopo *t = synthetic(16, 16);
	char *v;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), 0);
	/* measured: 1229 bytes for 16 GPUs + 16 NICs in 32 distinct positions (the worst case:
	 * 32 addresses, 528 level characters); real machines share positions and are smaller
	 * (gen-hgx-h100.xml, 16 + 18: 765 bytes) */
	size_t len = strlen(v);
	ck_assert_uint_le(len, RF_TOPO_ANNOTATION_MAX_BYTES);
	ck_assert_uint_eq(len, 1229);
	ck_assert_ptr_nonnull(strstr(v, ",31],\"m\":\"")); /* 32 classes */
	check_round_trip(t);
	free(v);
	rf_pcitopo_free(t);

	/* far beyond what the annotation holds: refused, not truncated */
	t = synthetic(100, 100);
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), -EMSGSIZE);
	t->devices[0].kind = RF_PCI_OTHER;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), -EINVAL);
	rf_pcitopo_free(t);
	t = synthetic(1, 1);
	t->levels[1] = 77;
	ck_assert_int_eq(rf_topo_annotation_encode(t, &v), -EINVAL);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_annotation_lookups)
{
	static const char v[] =
		"{\"v\":1,\"d\":[\"0000:1b:00.0\",\"0000:18:00.0\",\"0000:18:00.1\","
		"\"0001:9a:00.0\"],\"k\":\"gnnn\",\"n\":[0,0,0,-1],\"c\":[0,1,1,2],"
		"\"m\":\"-PSPU-\",\"future\":{\"ignored\":true}}";
	struct rf_topo_annotation *a;
	enum rf_level l;
	char err[256];

	ck_assert_msg(rf_topo_annotation_decode(v, strlen(v), &a, err, sizeof(err)) == 0, "%s",
		      err);
	/* class 0 (GPU) - class 1 (NICs): P; inside class 1: P; class 1 - class 2: U */
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1b:00.0", "0000:18:00.0", &l), 0);
	ck_assert_int_eq(l, RF_LEVEL_PIX);
	ck_assert_int_eq(rf_topo_annotation_level(a, "pci-0000-18-00-0", "18:00.1", &l), 0);
	ck_assert_int_eq(l, RF_LEVEL_PIX);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1B:00.0", "0001:9a:00.0", &l), 0);
	ck_assert_int_eq(l, RF_LEVEL_SYS);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:18:00.1", "0001:9a:00.0", &l), 0);
	ck_assert_int_eq(l, RF_LEVEL_UNKNOWN);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1b:00.0", "0000:1b:00.0", &l), 0);
	ck_assert_int_eq(l, RF_LEVEL_PIX);
	l = RF_LEVEL_NODE;
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1b:00.0", "0000:43:00.0", &l), -ENOENT);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:43:00.0", "0000:1b:00.0", &l), -ENOENT);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1b:00.0", "gpu-0", &l), -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_level(a, "0000:1b:00", "0000:1b:00.0", &l), -EINVAL);
	ck_assert_int_eq(l, RF_LEVEL_NODE); /* untouched on failure */
	ck_assert_int_eq(rf_topo_annotation_find(a, "0001:9a:00.0"), 3);
	ck_assert_int_eq(rf_topo_annotation_find(a, "0000:9a:00.0"), -ENOENT);
	ck_assert_int_eq(rf_topo_annotation_find(a, NULL), -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_kind(a, 0), RF_PCI_GPU);
	ck_assert_int_eq(rf_topo_annotation_numa(a, 3), -1);
	rf_topo_annotation_free(a);
	rf_topo_annotation_free(NULL);
}
END_TEST

struct bad {
	const char *value;
	int err;
	const char *needle;
};

/* a valid value with one field replaced */
#define ANN(d, k, n, c, m) "{\"v\":1,\"d\":" d ",\"k\":" k ",\"n\":" n ",\"c\":" c ",\"m\":" m "}"
#define D2                 "[\"0000:1b:00.0\",\"0000:18:00.0\"]"

static const struct bad bad_values[] = {
	{ "", -EINVAL, "not valid JSON" },
	{ "{", -EINVAL, "not valid JSON" },
	{ "{\"v\":1,}", -EINVAL, "not valid JSON" },
	{ "[]", -EINVAL, "expected a JSON object" },
	{ "\"v\"", -EINVAL, "not valid JSON" },
	{ "{}", -EINVAL, "\"v\": expected the format version" },
	{ "{\"v\":\"1\"}", -EINVAL, "\"v\": expected the format version" },
	{ "{\"v\":1.0}", -EINVAL, "\"v\": expected the format version" },
	{ "{\"v\":1,\"v\":1}", -EINVAL, "duplicate" },
	{ "{\"v\":3,\"d\":[]}", -EPROTONOSUPPORT, "unknown format version 3" },
	{ "{\"v\":0}", -EPROTONOSUPPORT, "this railfit reads version 1" },
	{ "{\"v\":1}", -EINVAL, "expected \"d\" (array)" },
	{ ANN("{}", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL, "expected \"d\" (array)" },
	{ ANN(D2, "[]", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL, "\"k\" (string)" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "7"), -EINVAL, "\"m\" (string)" },
	{ ANN(D2, "\"g\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL,
	  "2 devices in \"d\" but 1 kinds" },
	{ ANN(D2, "\"gn\"", "[0]", "[0,1]", "\"-P-\""), -EINVAL, "1 NUMA nodes" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1,2]", "\"-P-\""), -EINVAL, "3 classes" },
	{ ANN("[\"0000:1b:00.0\",\"0000:1b:00\"]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL,
	  "\"d\"[1]: expected a PCI address such as \"0000:1b:00.0\", got \"0000:1b:00\"" },
	{ ANN("[\"0000:1b:00.0\",5]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL,
	  "got a non-string" },
	{ ANN("[\"0000:1b:20.0\",\"0000:18:00.0\"]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""),
	  -EINVAL, "\"d\"[0]" },
	{ ANN("[\"0000:1b:00.8\",\"0000:18:00.0\"]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""),
	  -EINVAL, "\"d\"[0]" },
	{ ANN("[\"a\\nb\",\"0000:18:00.0\"]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL,
	  "got \"a?b\"" },
	{ ANN("[\"0000:1b:00.0\",\"1b:00.0\"]", "\"gn\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL,
	  "0000:1b:00.0 is listed twice" },
	{ ANN(D2, "\"gx\"", "[0,0]", "[0,1]", "\"-P-\""), -EINVAL, "\"k\"[1]: expected 'g'" },
	{ ANN(D2, "\"gn\"", "[0,\"0\"]", "[0,1]", "\"-P-\""), -EINVAL, "\"n\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,-2]", "[0,1]", "\"-P-\""), -EINVAL, "\"n\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,70000]", "[0,1]", "\"-P-\""), -EINVAL, "\"n\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,null]", "[0,1]", "\"-P-\""), -EINVAL, "\"n\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,-1]", "\"-P-\""), -EINVAL, "\"c\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,2]", "\"-P-\""), -EINVAL, "\"c\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1.5]", "\"-P-\""), -EINVAL, "\"c\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"-P\""), -EINVAL,
	  "\"m\": expected 3 levels for 2 classes, got 2" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"-P--\""), -EINVAL, "expected 3 levels" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"-Z-\""), -EINVAL, "\"m\"[1]: expected one of" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"--P\""), -EINVAL, "\"m\"[1]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"x-P\""), -EINVAL, "\"m\"[0]" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,0]", "\"-\""), -EINVAL,
	  "class 0 has several devices but \"-\"" },
	{ ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"-\\u0000-\""), -EINVAL, "not valid JSON" },
};

START_TEST(test_topology_annotation_malformed)
{
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		const struct bad *b = &bad_values[i];
		struct rf_topo_annotation *sentinel = (struct rf_topo_annotation *)&i,
					  *a = sentinel;
		char err[256] = "";
		int r = rf_topo_annotation_decode(b->value, strlen(b->value), &a, err, sizeof(err));
		ck_assert_msg(r == b->err, "case %zu (%s): %d, expected %d (%s)", i, b->value, r,
			      b->err, err);
		ck_assert_msg(strstr(err, b->needle), "case %zu: '%s' lacks '%s'", i, err,
			      b->needle);
		ck_assert_msg(!strchr(err, '\n'), "case %zu: not one line: %s", i, err);
		ck_assert(a == sentinel);
		/* no error buffer at all is fine too */
		ck_assert_int_eq(rf_topo_annotation_decode(b->value, strlen(b->value), &a, NULL, 0),
				 b->err);
	}
}
END_TEST

START_TEST(test_topology_annotation_malformed_sizes)
{
	struct rf_topo_annotation *a = NULL;
	char err[256];
	char *big = malloc(RF_TOPO_ANNOTATION_MAX_BYTES + 2);
	const char *ok = ANN(D2, "\"gn\"", "[0,0]", "[0,1]", "\"-P-\"");

	/* a valid value padded with spaces just past the limit */
	memset(big, ' ', RF_TOPO_ANNOTATION_MAX_BYTES + 1);
	memcpy(big, ok, strlen(ok));
	big[RF_TOPO_ANNOTATION_MAX_BYTES + 1] = '\0';
	ck_assert_int_eq(
		rf_topo_annotation_decode(big, RF_TOPO_ANNOTATION_MAX_BYTES, &a, err, sizeof(err)),
		0);
	rf_topo_annotation_free(a);
	ck_assert_int_eq(rf_topo_annotation_decode(big, RF_TOPO_ANNOTATION_MAX_BYTES + 1, &a, err,
						   sizeof(err)),
			 -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(err, "value is 16385 bytes, more than the 16384 allowed"));

	/* more devices than any 16 KiB annotation can describe (short address forms) */
	size_t w = (size_t)snprintf(big, 64, "{\"v\":1,\"d\":[");
	for (int i = 0; i < 1025; i++)
		w += (size_t)snprintf(big + w, 16, "%s\"0:0.0\"", i ? "," : "");
	w += (size_t)snprintf(big + w, 64, "],\"k\":\"\",\"n\":[],\"c\":[],\"m\":\"\"}");
	ck_assert_uint_lt(w, RF_TOPO_ANNOTATION_MAX_BYTES);
	ck_assert_int_eq(rf_topo_annotation_decode(big, w, &a, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "1025 devices, more than 1024"));

	/* a NUL inside the value, then garbage */
	ck_assert_int_eq(rf_topo_annotation_decode("{\"v\":1}\0xx", 10, &a, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_decode(NULL, 0, &a, err, sizeof(err)), -EINVAL);
	/* a tiny error buffer is truncated, still terminated */
	char tiny[8];
	ck_assert_int_eq(rf_topo_annotation_decode("[]", 2, &a, tiny, sizeof(tiny)), -EINVAL);
	ck_assert_uint_eq(strlen(tiny), 7);
	free(big);
}
END_TEST

START_TEST(test_topology_annotation_patch)
{
	char *p;
	ck_assert_int_eq(rf_topo_annotation_patch(RF_TOPO_ANNOTATION_KEY, "{\"v\":1}", &p), 0);
	ck_assert_str_eq(p, "{\"metadata\":{\"annotations\":{\"railfit.io/pci-topology\":"
			    "\"{\\\"v\\\":1}\"}}}");
	json_t *j = json_loads(p, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(j, "metadata"), "annotations"),
				 "railfit.io/pci-topology")),
			 "{\"v\":1}");
	json_decref(j);
	free(p);
	ck_assert_int_eq(rf_topo_annotation_patch("", "x", &p), -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_patch(NULL, "x", &p), -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_patch("k", NULL, &p), -EINVAL);
	ck_assert_int_eq(rf_topo_annotation_patch("k", "\xff\xfe", &p), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* the views                                                                                   */

START_TEST(test_topology_json_shape)
{
	struct rf_pcitopo *t = load_xml("32em64t-2n8c2t-pci-wholeio.xml");
	json_t *j = rf_pcitopo_json(t, "xml:test.xml");
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "source")), "xml:test.xml");
	json_t *devs = json_object_get(j, "devices"), *m = json_object_get(j, "matrix");
	ck_assert_uint_eq(json_array_size(devs), 7);
	json_t *d2 = json_array_get(devs, 2);
	ck_assert_str_eq(json_string_value(json_object_get(d2, "pci")), "0000:84:00.0");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "kind")), "gpu");
	ck_assert_int_eq(json_integer_value(json_object_get(d2, "numa")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(d2, "names"), 0)),
			 "cuda0");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "pcieRoot")), "pci0000:80");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "vendor")), "10de");
	ck_assert_str_eq(json_string_value(json_object_get(d2, "class")), "0302");
	/* a level for every ordered pair of distinct devices */
	ck_assert_uint_eq(json_object_size(m), 7);
	for (size_t i = 0; i < 7; i++) {
		const char *a = json_string_value(json_object_get(json_array_get(devs, i), "pci"));
		json_t *row = json_object_get(m, a);
		ck_assert_uint_eq(json_object_size(row), 6);
		ck_assert_ptr_null(json_object_get(row, a));
	}
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "0000:84:00.0"),
							   "0000:04:00.0")),
			 "PIX");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "0000:04:00.0"),
							   "0000:03:00.0")),
			 "SYS");
	ck_assert(json_is_array(json_object_get(j, "notes")));
	json_decref(j);
	rf_pcitopo_free(t);

	t = load_xml("gen-hgx-nonuma.xml");
	j = rf_pcitopo_json(t, NULL);
	ck_assert_ptr_null(json_object_get(j, "source"));
	ck_assert(json_is_null(
		json_object_get(json_array_get(json_object_get(j, "devices"), 0), "numa")));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "notes")), 2);
	json_decref(j);
	rf_pcitopo_free(t);
}
END_TEST

START_TEST(test_topology_table_shape)
{
	struct rf_pcitopo *t = load_xml("gen-dgx-h100.xml");
	char *s;
	ck_assert_int_eq(rf_pcitopo_table(t, &s), 0);
	/* header row, GPU0's row, the legend, the device legend */
	ck_assert_ptr_nonnull(strstr(s, "      GPU0  GPU1  "));
	ck_assert_ptr_nonnull(strstr(s, "NIC9  NUMA Affinity\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nGPU0   X    NODE  NODE  NODE  SYS   SYS   SYS   SYS   "
					"PIX   NODE"));
	ck_assert_ptr_nonnull(strstr(s, "SYS   0\n"));
	static const char *const legend[] = { "Legend:",     "  X       = Self", "  SYS     =",
					      "  NODE    =", "  PHB     =",      "  PXB     =",
					      "  PIX     =", "  UNKNOWN =" };
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		ck_assert_msg(strstr(s, legend[i]), "no '%s'", legend[i]);
	ck_assert_ptr_nonnull(
		strstr(s, "  NIC0: 0000:18:00.0 [15b3:1021] pci0000:15 rail0, mlx5_0\n"));
	ck_assert_ptr_null(strstr(s, "Notes:"));
	free(s);
	rf_pcitopo_free(t);

	t = load_xml("gen-hgx-nonuma.xml");
	ck_assert_int_eq(rf_pcitopo_table(t, &s), 0);
	ck_assert_ptr_nonnull(strstr(s, "N/A\n"));
	ck_assert_ptr_nonnull(strstr(s, "Notes:\n\n  - the topology has 1 NUMA node for 2"));
	free(s);
	rf_pcitopo_free(t);
}
END_TEST

Suite *
topology_suite(void)
{
	Suite *s = suite_create("topology");
	TCase *tc = tcase_create("rule");
	tcase_add_test(tc, test_topology_classify);
	tcase_add_test(tc, test_topology_rule_units);
	tcase_add_test(tc, test_topology_rule_without_host_bridges);
	tcase_add_test(tc, test_topology_tree_validation);
	tcase_add_test(tc, test_topology_compute_order_duplicates_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("fixtures");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_topology_fixture_wholeio);
	tcase_add_test(tc, test_topology_fixture_dgx2);
	tcase_add_test(tc, test_topology_fixture_many_vfs);
	suite_add_tcase(s, tc);

	tc = tcase_create("generated");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_topology_generated_hgx_h100);
	tcase_add_test(tc, test_topology_generated_hgx_h200_2nic);
	tcase_add_test(tc, test_topology_generated_hgx_cpu_rootport);
	tcase_add_test(tc, test_topology_generated_dgx_h100);
	tcase_add_test(tc, test_topology_generated_dgx_h100_pxb);
	tcase_add_test(tc, test_topology_generated_dgx_h100_without_bridges);
	tcase_add_test(tc, test_topology_generated_domains_vfs);
	tcase_add_test(tc, test_topology_generated_no_numa);
	tcase_add_test(tc, test_topology_fixture_numa_from_any_ancestor);
	suite_add_tcase(s, tc);

	tc = tcase_create("annotation");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_topology_annotation_round_trip);
	tcase_add_test(tc, test_topology_annotation_size_16_16);
	tcase_add_test(tc, test_topology_annotation_lookups);
	tcase_add_test(tc, test_topology_annotation_malformed);
	tcase_add_test(tc, test_topology_annotation_malformed_sizes);
	tcase_add_test(tc, test_topology_annotation_patch);
	suite_add_tcase(s, tc);

	tc = tcase_create("views");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_topology_json_shape);
	tcase_add_test(tc, test_topology_table_shape);
	suite_add_tcase(s, tc);
	return s;
}
