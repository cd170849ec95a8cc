/* The cluster model on real driver-shaped slices (reference/dra-examples). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "alloc/model/model.h"
#include "alloc/model/slice.h"
#include "config/arena.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *model_suite(void);

static const struct rf_device *
dev(const struct rf_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_devices; i++)
		if (strcmp(n->devices[i]->name, name) == 0)
			return n->devices[i];
	ck_abort_msg("no device %s", name);
	return NULL;
}

START_TEST(test_model_hgx_node_from_real_slices)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	struct rf_cluster *c = fixture_build(&f);
	ck_assert_uint_eq(rf_cluster_n_warnings(c), 0);
	const struct rf_node *n = rf_cluster_node(c, "n1");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->n_pools, 2);
	ck_assert_uint_eq(n->n_devices, 17);
	ck_assert_uint_eq(n->n_gpus, 8);
	ck_assert_uint_eq(n->n_nics, 9);
	ck_assert_uint_eq(rf_node_use(c, n)->n_gpus_free, 8);

	const struct rf_device *g0 = dev(n, "gpu-0"), *g4 = dev(n, "gpu-4");
	ck_assert_int_eq(g0->kind, RF_DEV_GPU);
	/* unqualified NVIDIA attributes are normalised into the driver's domain */
	const struct rf_attr *pn =
		rf_attr_find(g0->attrs, g0->n_attrs, "gpu.nvidia.com/productName");
	ck_assert_ptr_nonnull(pn);
	ck_assert_str_eq(pn->s, "NVIDIA H100 80GB HBM3");
	const struct rf_attr *dv =
		rf_attr_find(g0->attrs, g0->n_attrs, "gpu.nvidia.com/driverVersion");
	ck_assert_int_eq(dv->kind, RF_ATTR_VERSION);
	ck_assert_str_eq(g0->pci, "0000:1b:00.0");
	ck_assert_str_eq(g0->loc.pcie_root, "pci0000:15");
	/* GPUs publish no NUMA node: inherited from the NIC on the same root */
	ck_assert_int_eq(g0->loc.numa, 0);
	ck_assert_int_eq(g4->loc.numa, 1);
	ck_assert_str_eq(g0->numa_source, "nic-on-root");

	const struct rf_device *n0 = dev(n, "pci-0000-18-00-0"), *fe = dev(n, "pci-0000-2a-00-1"),
			       *n7 = dev(n, "pci-0000-dc-00-0");
	ck_assert_int_eq(n0->kind, RF_DEV_NIC);
	ck_assert_str_eq(n0->pci, "0000:18:00.0");
	ck_assert_str_eq(n0->numa_source, "dra.net/numaNode");
	/* gpu-pairing rails: the NIC next to gpu-k is rail k; the front-end NIC is on none */
	ck_assert_int_eq(n0->rail, 0);
	ck_assert_int_eq(n7->rail, 7);
	ck_assert_int_eq(fe->rail, -1);
	ck_assert_uint_eq(n->n_rails, 8);
	ck_assert_int_eq(rf_node_level(n, g0, n0, NULL), RF_LEVEL_PHB);
	ck_assert_int_eq(rf_node_level(n, g0, dev(n, "pci-0000-40-00-0"), NULL), RF_LEVEL_NODE);
	ck_assert_int_eq(rf_node_level(n, g0, n7, NULL), RF_LEVEL_SYS);
	/* no bandwidth capacity published by dranet: the configured default */
	const char *src;
	struct rf_quantity cap = rf_device_bw_capacity(n0, &f.cfg, &src);
	ck_assert_str_eq(src, "default");
	struct rf_quantity want;
	rf_quantity_parse("400G", &want);
	ck_assert_int_eq(rf_quantity_cmp(cap, want), 0);
	fixture_release(&f);
}
END_TEST

START_TEST(test_model_allocations_and_admin_access)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	const char *held[] = { "gpu.nvidia.com:gpu-3", "dra.net:pci-0000-5e-00-0", NULL };
	fixture_add_claim(&f, "ml", "c1", SPEC_GPU_NIC_ALIGNED, "n1", held);
	/* an admin-access result does not hold its device */
	fixture_add_json(
		&f,
		"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"admin\",\"namespace\":"
		"\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
		"{\"deviceClassName\":\"gpu.nvidia.com\",\"adminAccess\":true}}]}},\"status\":"
		"{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":"
		"\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\",\"adminAccess\":true}]}}}}");
	struct rf_cluster *c = fixture_build(&f);
	const struct rf_node *n = rf_cluster_node(c, "n1");
	ck_assert_uint_eq(rf_node_use(c, n)->n_gpus_free, 7);
	ck_assert_uint_eq(rf_node_use(c, n)->n_nics_free, 8);
	ck_assert_ptr_null(rf_dev_use(c, dev(n, "gpu-0"))->holder);
	ck_assert_str_eq(rf_dev_use(c, dev(n, "gpu-3"))->holder->name, "c1");
	const struct rf_claim *cl = rf_cluster_claim(c, "ml", "c1");
	ck_assert(cl->allocated);
	ck_assert_str_eq(cl->alloc_node, "n1");
	fixture_release(&f);
}
END_TEST

START_TEST(test_model_consumed_capacity_is_exact)
{
	struct fixture f;
	fixture_init(&f);
	char *t = fixture_read("dra/resourceslice-nic-consumable-bandwidth.json");
	fixture_add_json(&f, t);
	free(t);
	t = fixture_read("dra/resourceslice-gpu-nvidia-8xh100.json");
	fixture_add_json(&f, t);
	free(t);
	t = fixture_read("dra/resourceclaim-allocated-consumedcapacity.json");
	fixture_add_json(&f, t);
	free(t);
	/* the NIC driver of this example is netbw.example.com */
	f.cfg.devices.nic_drivers.v[0][0] = 0;
	free(f.cfg.devices.nic_drivers.v[0]);
	f.cfg.devices.nic_drivers.v[0] = strdup("netbw.example.com");
	struct rf_cluster *c = fixture_build(&f);
	const struct rf_node *n = rf_cluster_node(c, "hgx-h100-node-01");
	ck_assert_ptr_nonnull(n);
	const struct rf_device *rail2 = dev(n, "rail2");
	ck_assert_int_eq(rail2->kind, RF_DEV_NIC);
	ck_assert(rail2->allow_multiple);
	ck_assert_ptr_null(rf_dev_use(c, rail2)->holder); /* shared, not exclusive */
	ck_assert_uint_eq(rf_dev_use(c, rail2)->n_shares, 1);
	ck_assert_ptr_nonnull(rail2->bandwidth);
	/* consumed "48828125Ki" is exactly 50G; free = 400G - 50G = 350G */
	struct rf_quantity used = rf_device_bw_used(c, rail2), want, free_bw;
	rf_quantity_parse("50G", &want);
	ck_assert_int_eq(rf_quantity_cmp(used, want), 0);
	free_bw = rf_quantity_sub(rf_device_bw_capacity(rail2, &f.cfg, NULL), used);
	rf_quantity_parse("350G", &want);
	ck_assert_int_eq(rf_quantity_cmp(free_bw, want), 0);
	/* rails from the published attribute when configured so */
	ck_assert_str_eq(rf_dev_use(c, dev(n, "gpu-2"))->holder->name, "infer-gpu-bw");
	fixture_release(&f);
}
END_TEST

START_TEST(test_model_pool_generations_and_completeness)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	/* an older generation of the GPU pool with different devices is ignored */
	fixture_add_json(&f,
			 "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"old\"},\"spec\":{"
			 "\"driver\":\"gpu.nvidia.com\",\"pool\":{\"name\":\"n1\",\"generation\":0,"
			 "\"resourceSliceCount\":1},\"nodeName\":\"n1\",\"devices\":[{\"name\":"
			 "\"gpu-99\"}]}}");
	/* a pool announcing two slices with one present is incomplete */
	fixture_add_json(
		&f, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"half\"},\"spec\":{"
		    "\"driver\":\"example.com\",\"pool\":{\"name\":\"n1-x\",\"generation\":3,"
		    "\"resourceSliceCount\":2},\"nodeName\":\"n1\",\"devices\":[{\"name\":\"a\"},"
		    "{\"name\":\"a\"}]}}");
	/* garbage is a warning, not a failure */
	fixture_add_json(&f, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"bad\"},"
			     "\"spec\":{\"driver\":5}}");
	struct rf_cluster *c = fixture_build(&f);
	const struct rf_node *n = rf_cluster_node(c, "n1");
	ck_assert_uint_eq(n->n_pools, 3);
	ck_assert_uint_eq(n->n_gpus, 8);
	for (size_t i = 0; i < n->n_pools; i++) {
		const struct rf_pool *p = n->pools[i];
		if (strcmp(p->driver, "example.com") == 0) {
			ck_assert(!p->complete);
			ck_assert(p->invalid);
		} else {
			ck_assert(p->complete);
			ck_assert_int_eq(p->generation, 1);
		}
	}
	ck_assert_uint_ge(rf_cluster_n_warnings(c), 2);
	fixture_release(&f);
}
END_TEST

START_TEST(test_model_pool_slices_select_their_nodes)
{
	/* one network-attached pool, one slice per rack by nodeSelector: each node sees only the
	 * NIC of its own rack's slice */
	struct fixture f;
	fixture_init(&f);
	fixture_add_json(
		&f,
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{\"rack\":\"a\"}}}");
	fixture_add_json(
		&f,
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\",\"labels\":{\"rack\":\"b\"}}}");
	const char *racks[] = { "a", "b" };
	for (int i = 0; i < 2; i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"r-%s\"},\"spec\":{"
			 "\"driver\":\"dra.net\",\"pool\":{\"name\":\"net\",\"generation\":1,"
			 "\"resourceSliceCount\":2},\"nodeSelector\":{\"nodeSelectorTerms\":[{"
			 "\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\",\"values\":"
			 "[\"%s\"]}]}]},\"devices\":[{\"name\":\"nic-%s\",\"attributes\":{"
			 "\"dra.net/rdma\":{\"bool\":true}}}]}}",
			 racks[i], racks[i], racks[i]);
		fixture_add_json(&f, buf);
	}
	struct rf_cluster *c = fixture_build(&f);
	const struct rf_node *n1 = rf_cluster_node(c, "n1"), *n2 = rf_cluster_node(c, "n2");
	ck_assert_uint_eq(n1->n_devices, 1);
	ck_assert_str_eq(n1->devices[0]->name, "nic-a");
	ck_assert_uint_eq(n2->n_devices, 1);
	ck_assert_str_eq(n2->devices[0]->name, "nic-b");
	ck_assert(n1->pools[0]->complete);
	fixture_release(&f);
}
END_TEST

/* One ResourceSlice parsed alone (alloc/model/slice.c): what the model skips and why, the
 * warnings each layout repeats, attribute values by kind, in one block of exactly its size. */
START_TEST(test_slice_parse_record)
{
	struct rf_config cfg;
	rf_config_init(&cfg);
	json_error_t err;
	json_t *ok = json_loads(
		"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
		"\"pool\":{\"name\":\"n1\",\"generation\":2,\"resourceSliceCount\":1},"
		"\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{"
		"\"index\":{\"int\":3},\"type\":{\"string\":\"gpu\"},\"mig\":{\"bool\":false},"
		"\"driverVersion\":{\"version\":\"580.1.2\"}},\"capacity\":{\"memory\":{"
		"\"value\":\"80Gi\"},\"bad\":{\"value\":\"lots\"}}},{\"attributes\":{}}]}}",
		0, &err);
	json_t *skip = json_loads("{\"metadata\":{\"name\":\"t\"},\"spec\":{\"driver\":\"d\","
				  "\"pool\":{\"name\":\"p\",\"generation\":1,"
				  "\"resourceSliceCount\":1}}}",
				  0, &err);
	ck_assert_ptr_nonnull(ok);
	ck_assert_ptr_nonnull(skip);
	struct rf_slice *a = NULL, *b = NULL;
	ck_assert_int_eq(rf_slice_parse(ok, &cfg, &a), 0);
	ck_assert_ptr_null(a->skip);
	ck_assert_int_eq(a->generation, 2);
	ck_assert_uint_eq(a->n_devices, 1); /* the nameless one is skipped, with a warning */
	ck_assert_uint_eq(a->n_device_warnings, 2);
	ck_assert_str_eq(
		a->device_warnings[0],
		"device gpu.nvidia.com/n1/gpu-0: capacity bad: expected a quantity in value");
	ck_assert_str_eq(a->device_warnings[1],
			 "pool gpu.nvidia.com/n1: device without a name; skipped");
	const struct rf_device *d = &a->devices[0];
	ck_assert_int_eq(d->kind, RF_DEV_GPU);
	ck_assert_uint_eq(d->n_attrs, 4); /* sorted, qualified with the driver's domain */
	ck_assert_str_eq(d->attrs[0].name, "gpu.nvidia.com/driverVersion");
	ck_assert_int_eq(d->attrs[0].kind, RF_ATTR_VERSION);
	ck_assert_str_eq(d->attrs[0].s, "580.1.2");
	ck_assert_int_eq(d->attrs[1].kind, RF_ATTR_INT);
	ck_assert_int_eq(d->attrs[1].i, 3);
	ck_assert_int_eq(d->attrs[2].kind, RF_ATTR_BOOL);
	ck_assert(!d->attrs[2].b);
	ck_assert_str_eq(d->attrs[3].s, "gpu");
	ck_assert_uint_eq(d->n_caps, 1);
	/* one block: the second parse fills exactly what the first one measured (what the
	 * arena took from malloc beyond what it handed out is one chunk header) */
	ck_assert_uint_lt(a->arena->total - rf_arena_used(a->arena), 64);
	ck_assert_int_eq(rf_slice_parse(ok, &cfg, &b), 0);
	ck_assert_uint_eq(rf_arena_used(a->arena), rf_arena_used(b->arena));
	rf_slice_unref(b);
	ck_assert_int_eq(rf_slice_parse(skip, &cfg, &b), 0);
	ck_assert_str_eq(b->skip,
			 "resourceslice t: no nodeName, allNodes or nodeSelector; skipped");
	ck_assert_uint_eq(b->n_devices, 0);
	rf_slice_unref(b);
	rf_slice_unref(a);
	json_decref(ok);
	json_decref(skip);
	rf_config_release(&cfg);
}
END_TEST

/* Strings that repeat across a fleet's slices are stored once for the process: attribute and
 * capacity names at once, values when they repeat within a slice; a value of one device, and the
 * slice's own names (its node's), stay in the record. Content is the same either way. */
static json_t *
two_gpu_slice(const char *node, const char *uuid0, const char *uuid1)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s-gpu\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
		 "\"pool\":{\"name\":\"%s\",\"generation\":1,\"resourceSliceCount\":1},"
		 "\"nodeName\":\"%s\",\"devices\":["
		 "{\"name\":\"gpu-0\",\"attributes\":{\"productName\":{\"string\":\"H100\"},"
		 "\"uuid\":{\"string\":\"%s\"}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}},"
		 "{\"name\":\"gpu-1\",\"attributes\":{\"productName\":{\"string\":\"H100\"},"
		 "\"uuid\":{\"string\":\"%s\"}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}"
		 "]}}",
		 node, node, node, uuid0, uuid1);
	json_error_t err;
	json_t *j = json_loads(buf, 0, &err);
	ck_assert_msg(j != NULL, "%s", err.text);
	return j;
}

START_TEST(test_slice_strings_shared)
{
	struct rf_config cfg;
	rf_config_init(&cfg);
	json_t *ja = two_gpu_slice("na", "GPU-a0", "GPU-a1"),
	       *jb = two_gpu_slice("nb", "GPU-b0", "GPU-b1");
	struct rf_slice *a = NULL, *b = NULL;
	ck_assert_int_eq(rf_slice_parse(ja, &cfg, &a), 0);
	ck_assert_int_eq(rf_slice_parse(jb, &cfg, &b), 0);
	ck_assert_uint_eq(a->n_devices, 2);
	ck_assert_uint_eq(b->n_devices, 2);
	const struct rf_device *da = &a->devices[1], *db = &b->devices[1];
	ck_assert_uint_eq(da->n_attrs, 2);
	ck_assert_str_eq(da->attrs[0].name, "gpu.nvidia.com/productName");
	ck_assert_str_eq(da->attrs[1].name, "gpu.nvidia.com/uuid");
	ck_assert_str_eq(da->attrs[0].s, "H100");
	ck_assert_str_eq(da->attrs[1].s, "GPU-a1");
	ck_assert_str_eq(db->attrs[1].s, "GPU-b1");
	ck_assert_str_eq(da->caps[0].name, "gpu.nvidia.com/memory");
	ck_assert_str_eq(da->caps[0].raw_name, "memory");
	ck_assert_str_eq(a->pool, "na");
	ck_assert_str_eq(b->node, "nb");
	/* shared: names, and the value both devices of a slice have */
	ck_assert_ptr_eq(da->attrs[0].name, db->attrs[0].name);
	ck_assert_ptr_eq(da->attrs[1].name, db->attrs[1].name);
	ck_assert_ptr_eq(da->caps[0].name, db->caps[0].name);
	ck_assert_ptr_eq(da->caps[0].raw_name, db->caps[0].raw_name);
	ck_assert_ptr_eq(a->driver, b->driver);
	ck_assert_ptr_eq(da->attrs[0].s, db->attrs[0].s);
	ck_assert_ptr_eq(a->devices[0].attrs[0].s, da->attrs[0].s);
	/* in the record: one device's value, the device names (once per slice), the node's name */
	ck_assert_ptr_ne(a->devices[0].name, b->devices[0].name);
	ck_assert_str_eq(a->devices[0].name, b->devices[0].name);
	ck_assert_ptr_ne(a->pool, b->pool);
	/* pool and node are one copy within the record */
	ck_assert_ptr_eq(a->pool, a->node);
	/* still one exactly-sized block */
	ck_assert_uint_lt(a->arena->total - rf_arena_used(a->arena), 64);
	ck_assert_uint_lt(b->arena->total - rf_arena_used(b->arena), 64);
	rf_slice_unref(a);
	rf_slice_unref(b);
	json_decref(ja);
	json_decref(jb);
	rf_config_release(&cfg);
}
END_TEST

/* List attributes: up to RF_ATTR_LIST_MAX values (what the API server accepts) a list; longer
 * ones, which only a hand-made snapshot can hold, never match (no set operation over them). */
START_TEST(test_slice_parse_list_limit)
{
	struct rf_config cfg;
	rf_config_init(&cfg);
	char buf[4096];
	for (int extra = 0; extra < 2; extra++) {
		size_t off = (size_t)snprintf(
			buf, sizeof(buf),
			"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
			"\"pool\":{\"name\":\"n1\",\"generation\":1,\"resourceSliceCount\":1},"
			"\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{"
			"\"links\":{\"ints\":[");
		for (int i = 0; i < RF_ATTR_LIST_MAX + extra; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d", i ? "," : "",
						i);
		snprintf(buf + off, sizeof(buf) - off, "]}}}]}}");
		json_error_t err;
		json_t *j = json_loads(buf, 0, &err);
		ck_assert_msg(j != NULL, "%s", err.text);
		struct rf_slice *sl = NULL;
		ck_assert_int_eq(rf_slice_parse(j, &cfg, &sl), 0);
		ck_assert_uint_eq(sl->n_devices, 1);
		ck_assert_uint_eq(sl->devices[0].n_attrs, 1);
		const struct rf_attr *a = &sl->devices[0].attrs[0];
		if (extra) {
			ck_assert_int_eq(a->kind, RF_ATTR_OTHER);
		} else {
			ck_assert_int_eq(a->kind, RF_ATTR_LIST);
			ck_assert_uint_eq(a->list->n, RF_ATTR_LIST_MAX);
		}
		rf_slice_unref(sl);
		json_decref(j);
	}
	rf_config_release(&cfg);
}
END_TEST

/* The live store keeps a ResourceSlice's record across layouts, and two layouts exist at once
 * while one is built in full: one of them uses the record's devices themselves (the loan), the
 * other copies them, and what a layout sets in a device (a DeviceTaintRule's taint, a NUMA node
 * inherited from a NIC, a rail) never reaches another layout's copy or the next loan. */
static const struct rf_device *
rec_dev(const struct rf_slice *s, const char *name)
{
	for (size_t i = 0; i < s->n_devices; i++)
		if (strcmp(s->devices[i].name, name) == 0)
			return &s->devices[i];
	ck_abort_msg("no device %s in the record", name);
	return NULL;
}

START_TEST(test_model_lent_devices_as_published)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "n1");
	fixture_add_json(&f, "{\"kind\":\"DeviceTaintRule\",\"apiVersion\":\"resource.k8s.io/v1\","
			     "\"metadata\":{\"name\":\"r1\"},\"spec\":{\"deviceSelector\":{"
			     "\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"},"
			     "\"taint\":{\"key\":\"k\",\"effect\":\"NoSchedule\"}}}");
	struct rf_slice *recs[2];
	ck_assert_uint_eq(json_array_size(f.objs.slices), 2);
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(rf_slice_parse(json_array_get(f.objs.slices, i), &f.cfg, &recs[i]),
				 0);
	ck_assert_str_eq(recs[0]->driver, "gpu.nvidia.com");
	struct rf_cluster_objects o1 = f.objs;
	o1.slice_recs = recs;
	o1.n_slice_recs = 2;
	o1.lend_records = true;
	struct rf_cluster *g1 = NULL, *g2 = NULL, *g3 = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &o1, &f.cfg, f.cel, false, &g1), 0);
	ck_assert(atomic_load(&recs[0]->lent) && atomic_load(&recs[1]->lent));
	const struct rf_node *n = rf_cluster_node(g1, "n1");
	const struct rf_device *g0 = dev(n, "gpu-0"), *nic = dev(n, "pci-0000-18-00-0");
	ck_assert_ptr_eq(g0, rec_dev(recs[0], "gpu-0")); /* lent: the record's own */
	ck_assert_uint_eq(g0->n_taints, 1);
	ck_assert_int_eq(g0->loc.numa, 0);
	ck_assert_str_eq(g0->numa_source, "nic-on-root");
	ck_assert_int_eq(nic->rail, 0);

	/* built in full while g1 lives: no rule, no NICs (the GPU inherits no NUMA node) */
	struct rf_cluster_objects o2 = o1;
	o2.taint_rules = json_array();
	o2.n_slice_recs = 1;
	o2.full_layout = true;
	ck_assert_int_eq(rf_cluster_build_next(g1, &o2, &f.cfg, f.cel, false, &g2), 0);
	const struct rf_device *c0 = dev(rf_cluster_node(g2, "n1"), "gpu-0");
	ck_assert_ptr_ne(c0, g0); /* a copy */
	ck_assert_uint_eq(c0->n_taints, 0);
	ck_assert_int_eq(c0->loc.numa, -1);
	ck_assert_ptr_null(c0->numa_source);
	/* g1 sees what it saw */
	ck_assert_uint_eq(g0->n_taints, 1);
	ck_assert_int_eq(g0->loc.numa, 0);

	/* g1 gone: the loans end; the next layout borrows the devices, g1's facts undone */
	rf_cluster_unref(g1);
	ck_assert(!atomic_load(&recs[0]->lent) && !atomic_load(&recs[1]->lent));
	ck_assert_int_eq(rf_cluster_build_next(g2, &o2, &f.cfg, f.cel, false, &g3), 0);
	const struct rf_device *l0 = dev(rf_cluster_node(g3, "n1"), "gpu-0");
	ck_assert_ptr_eq(l0, rec_dev(recs[0], "gpu-0"));
	ck_assert(atomic_load(&recs[0]->lent) && !atomic_load(&recs[1]->lent));
	ck_assert_uint_eq(l0->n_taints, 0);
	ck_assert_int_eq(l0->loc.numa, -1);
	ck_assert_ptr_null(l0->numa_source);
	ck_assert_int_eq(l0->rail, -1);
	ck_assert_uint_eq(l0->gidx, c0->gidx);
	ck_assert_uint_eq(l0->idx, c0->idx);
	/* the NIC alone, borrowed after g1 gave it rail 0: no GPU to pair with, so no rail */
	struct rf_cluster_objects o4 = o2;
	o4.slice_recs = recs + 1;
	struct rf_cluster *g4 = NULL;
	ck_assert_int_eq(rf_cluster_build_next(g3, &o4, &f.cfg, f.cel, false, &g4), 0);
	const struct rf_device *l1 = dev(rf_cluster_node(g4, "n1"), "pci-0000-18-00-0");
	ck_assert_ptr_eq(l1, rec_dev(recs[1], "pci-0000-18-00-0"));
	ck_assert_int_eq(l1->rail, -1);
	rf_cluster_unref(g4);
	rf_cluster_unref(g2);
	rf_cluster_unref(g3);
	ck_assert(!atomic_load(&recs[0]->lent));
	for (size_t i = 0; i < 2; i++)
		rf_slice_unref(recs[i]);
	json_decref(o2.taint_rules);
	fixture_release(&f);
}
END_TEST

Suite *
model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, test_model_hgx_node_from_real_slices);
	tcase_add_test(tc, test_model_allocations_and_admin_access);
	tcase_add_test(tc, test_model_consumed_capacity_is_exact);
	tcase_add_test(tc, test_model_pool_generations_and_completeness);
	tcase_add_test(tc, test_model_pool_slices_select_their_nodes);
	tcase_add_test(tc, test_slice_parse_record);
	tcase_add_test(tc, test_slice_parse_list_limit);
	tcase_add_test(tc, test_slice_strings_shared);
	tcase_add_test(tc, test_model_lent_devices_as_published);
	suite_add_tcase(s, tc);
	return s;
}
