/* Golden cases of the allocator mirror on the real driver shapes that are not HGX one-pair-per-
 * root: AWS p4d-like nodes (2 GPUs + 1 EFA + 1 ENA per root), dranet NICs that lost their
 * host-side attributes while in a pod, and a shared NIC with consumable bandwidth. Each case says
 * why it is the allocator's answer. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/gen/gen_cluster.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *golden_suite(void);

/* the built-in demo cluster as a fixture */
static struct rf_cluster *
demo(struct fixture *f)
{
	fixture_init(f);
	json_decref(f->objs.classes);
	f->objs.classes = json_array();
	json_t *d = rf_gen_demo();
	ck_assert_ptr_nonnull(d);
	size_t i;
	json_t *it;
	json_array_foreach (json_object_get(d, "items"), i, it) {
		char *txt = json_dumps(it, 0);
		fixture_add_json(f, txt);
		free(txt);
	}
	json_decref(d);
	return fixture_build(f);
}

static void
eval_pod(struct fixture *f, const char *ns, const char *name, const char *node,
	 struct rf_node_eval *e)
{
	const struct rf_pod *p = rf_cluster_pod(f->c, ns, name);
	ck_assert_ptr_nonnull(p);
	struct rf_demand d;
	ck_assert_int_eq(rf_demand_resolve(f->c, p->json, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_KNOWN);
	ck_assert_int_eq(rf_evaluate_node(f->c, &d, node, true, e), 0);
	rf_demand_release(&d);
}

static void
expect_pick(const struct rf_node_eval *e, const char *const *want)
{
	ck_assert_msg(e->has_predicted, "no prediction: %s", e->reasons[0]);
	size_t n = 0;
	while (want[n])
		n++;
	ck_assert_uint_eq(e->predicted.n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(e->predicted.picks[i].dev->name, want[i]);
}

START_TEST(test_golden_p4d_two_gpus_per_root)
{
	/* p4d-02: gpu-0 + EFA 10 are held, gpu-4 + EFA 90 too, gpu-5 by a GPU-only claim.
	 * Unconstrained: first free GPU gpu-1 (root 10), first free rdma NIC EFA 20 (root 20,
	 * same socket): NODE although gpu-2 + EFA 20 share a root.
	 * With pcieRoot: gpu-1's root has no free rdma NIC (EFA 10 held; the ENA is not rdma),
	 * so the search backtracks to gpu-2 and takes EFA 20. */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	demo(&f);
	eval_pod(&f, "demo", "trainer-loose", "p4d-02", e);
	expect_pick(e, (const char *[]){ "gpu-1", "pci-0000-20-1b-0", NULL });
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_NODE);
	ck_assert_int_eq(e->best_level, RF_LEVEL_PHB);
	eval_pod(&f, "demo", "trainer-aligned", "p4d-02", e);
	expect_pick(e, (const char *[]){ "gpu-2", "pci-0000-20-1b-0", NULL });
	ck_assert_int_eq(e->predicted_level, RF_LEVEL_PHB);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_golden_dranet_nics_in_pod_netns)
{
	/* hgx-10: NICs 18 and 40 are inside a pod's netns: dranet dropped their ifName/mac/ipv4/
	 * mtu/state but kept pcieRoot and pciAddress. They are held, so the aligned claim takes
	 * gpu-2 (gpu-0/1 held) with NIC 4f on its root; the held NICs still join their GPUs. */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	demo(&f);
	eval_pod(&f, "demo", "trainer-aligned", "hgx-10", e);
	expect_pick(e, (const char *[]){ "gpu-2", "pci-0000-4f-00-0", NULL });
	const struct rf_node *n = rf_cluster_node(f.c, "hgx-10");
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct rf_device *d = n->devices[i];
		if (strcmp(d->name, "pci-0000-18-00-0") == 0) {
			ck_assert_ptr_nonnull(rf_dev_use(f.c, d)->holder);
			ck_assert_str_eq(d->loc.pcie_root, "pci0000:15");
			ck_assert_str_eq(d->pci, "0000:18:00.0");
			ck_assert_int_eq(d->rail, 0);
			ck_assert_ptr_null(rf_attr_find(d->attrs, d->n_attrs, "dra.net/ifName"));
		}
	}
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_golden_two_pairs_need_one_numa_node)
{
	/* p4d-02 has free aligned pairs gpu-2+EFA20 (NUMA 0) and gpu-6/7+EFA a0 (NUMA 1) only: the
	 * 2-pair claim's third constraint (both NICs on one dra.net/numaNode) cannot hold. On
	 * hgx-09 the NICs publish no numaNode at all, so it never holds, whatever is freed. */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	demo(&f);
	eval_pod(&f, "demo", "trainer-2pairs", "p4d-02", e);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL);
	eval_pod(&f, "demo", "trainer-2pairs", "hgx-09", e);
	ck_assert_int_eq(e->verdict, RF_VERDICT_UNRESOLVABLE);
	eval_pod(&f, "demo", "trainer-2pairs", "hgx-07", e);
	expect_pick(e, (const char *[]){ "gpu-4", "pci-0000-9a-00-0", "gpu-5", "pci-0000-c0-00-0",
					 NULL });
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_golden_shared_nic_consumable_bandwidth)
{
	/* netbw.example.com rails share 400G with requestPolicy validRange{min 10G, step 10G}; the
	 * infer-gpu-bw claim already consumes 50G of rail2 (asked 45G, rounded up to a step).
	 * A claim for rail 2 asking 350G fits exactly (50G + 350G = 400G); 360G does not. A
	 * GPU+NIC claim asking 45G takes gpu-0 and rail0, consuming 50G. */
	struct fixture f;
	struct rf_node_eval *e = malloc(sizeof(*e));
	fixture_init(&f);
	free(f.cfg.devices.nic_drivers.v[0]);
	f.cfg.devices.nic_drivers.v[0] = strdup("netbw.example.com");
	const char *files[] = { "dra/resourceslice-gpu-nvidia-8xh100.json",
				"dra/resourceslice-nic-consumable-bandwidth.json",
				"dra/resourceclaim-allocated-consumedcapacity.json" };
	for (size_t i = 0; i < 3; i++) {
		char *t = fixture_read(files[i]);
		fixture_add_json(&f, t);
		free(t);
	}
	static const char *const asks[] = { "350G", "360G" };
	for (size_t i = 0; i < 2; i++) {
		char spec[1024], name[16];
		snprintf(
			spec, sizeof(spec),
			"{\"devices\":{\"requests\":[{\"name\":\"nic\",\"exactly\":{"
			"\"deviceClassName\":\"nic-bandwidth.example.com\",\"selectors\":[{\"cel\":{"
			"\"expression\":\"device.attributes['netbw.example.com'].rail == 2\"}}],"
			"\"capacity\":{\"requests\":{\"bandwidth\":\"%s\"}}}}]}}",
			asks[i]);
		snprintf(name, sizeof(name), "ask-%zu", i);
		fixture_add_claim(&f, "ml-train", name, spec, NULL, NULL);
	}
	fixture_add_claim(
		&f, "ml-train", "ask-2",
		"{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
		"\"deviceClassName\":\"gpu.nvidia.com\"}},{\"name\":\"nic\",\"exactly\":{"
		"\"deviceClassName\":\"nic-bandwidth.example.com\",\"capacity\":{\"requests\":"
		"{\"bandwidth\":\"45G\"}}}}],\"constraints\":[{\"requests\":[\"gpu\",\"nic\"],"
		"\"matchAttribute\":\"resource.kubernetes.io/pcieRoot\"}]}}",
		NULL, NULL);
	fixture_build(&f);
	struct rf_demand d;
	json_t *pod =
		json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml-train\"},\"spec\":"
			   "{\"resourceClaims\":[{\"name\":\"c\",\"resourceClaimName\":"
			   "\"ask-0\"}]}}",
			   0, NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "hgx-h100-node-01", true, e), 0);
	rf_demand_release(&d);
	expect_pick(e, (const char *[]){ "rail2", NULL });
	ck_assert_uint_eq(e->n_nics, 1);
	struct rf_quantity q;
	rf_quantity_parse("50G", &q);
	ck_assert_int_eq(rf_quantity_cmp(e->nics[0].used, q), 0);
	ck_assert(rf_quantity_is_zero(e->nics[0].free_after)); /* 400G - 50G - 350G */
	json_decref(pod);

	pod = json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml-train\"},\"spec\":"
			 "{\"resourceClaims\":[{\"name\":\"c\",\"resourceClaimName\":\"ask-1\"}]}}",
			 0, NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "hgx-h100-node-01", false, e), 0);
	rf_demand_release(&d);
	ck_assert_int_eq(e->verdict, RF_VERDICT_FAIL); /* freeing the 50G share would help */
	json_decref(pod);

	/* 45G is consumed as 50G (min 10G + ceil(35G/10G) x 10G) */
	pod = json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml-train\"},\"spec\":"
			 "{\"resourceClaims\":[{\"name\":\"c\",\"resourceClaimName\":\"ask-2\"}]}}",
			 0, NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
	ck_assert_int_eq(rf_evaluate_node(f.c, &d, "hgx-h100-node-01", false, e), 0);
	rf_demand_release(&d);
	expect_pick(e, (const char *[]){ "gpu-0", "rail0", NULL });
	ck_assert_int_eq(rf_quantity_cmp(e->nics[0].asked, q), 0);
	json_decref(pod);
	free(e);
	fixture_release(&f);
}
END_TEST

Suite *
golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *tc = tcase_create("golden");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_golden_p4d_two_gpus_per_root);
	tcase_add_test(tc, test_golden_dranet_nics_in_pod_netns);
	tcase_add_test(tc, test_golden_two_pairs_need_one_numa_node);
	tcase_add_test(tc, test_golden_shared_nic_consumable_bandwidth);
	suite_add_tcase(s, tc);
	return s;
}
