/* The built-in demo cluster of `railfit serve --demo`: 16 fixed nodes in deliberately different
 * states (free, misaligned leftovers, one aligned pair left, full, no NICs, older dranet, NICs
 * inside a pod) and pending pods in namespace `demo` whose verdicts differ from node to node. Every
 * value is fixed: identifiers come from hashes of a constant seed. Pure; any thread.
 *
 * HGX device indexes (server/gen_objects.c tables): GPU i is gpu-i; its rail NIC is the rdma NIC on
 * its pcieRoot (gen_hw_nic_on_root), named below by dranet name for readability. */
#include <assert.h>
#include <string.h>

#include "alloc/gen/gen_cluster.h"
#include "alloc/gen/gen_private.h"

static const char ANNOTATION_PIX[] =
	"{\"v\":1,\"d\":[\"0000:1b:00.0\",\"0000:43:00.0\",\"0000:52:00.0\",\"0000:61:00.0\",\"0000:9d:00.0\",\"0000:c3:00.0\",\"0000:d1:00.0\",\"0000:df:00.0\",\"0000:18:00.0\",\"0000:2a:00.0\",\"0000:2a:00.1\",\"0000:40:00.0\",\"0000:4f:00.0\",\"0000:5e:00.0\",\"0000:9a:00.0\",\"0000:c0:00.0\",\"0000:ce:00.0\",\"0000:dc:00.0\"],\"k\":\"ggggggggnnnnnnnnnn\",\"n\":[0,0,0,0,1,1,1,1,0,0,0,0,0,0,1,1,1,1],\"c\":[0,1,2,3,4,5,6,7,0,8,8,1,2,3,4,5,6,7],\"m\":\"PNNNSSSSNPNNSSSSNPNSSSSNPSSSSNPNNNSPNNSPNSPSP\"}";
static const char ANNOTATION_PXB[] =
	"{\"v\":1,\"d\":[\"0000:1b:00.0\",\"0000:43:00.0\",\"0000:52:00.0\",\"0000:61:00.0\",\"0000:9d:00.0\",\"0000:c3:00.0\",\"0000:d1:00.0\",\"0000:df:00.0\",\"0000:18:00.0\",\"0000:2a:00.0\",\"0000:2a:00.1\",\"0000:40:00.0\",\"0000:4f:00.0\",\"0000:5e:00.0\",\"0000:9a:00.0\",\"0000:c0:00.0\",\"0000:ce:00.0\",\"0000:dc:00.0\"],\"k\":\"ggggggggnnnnnnnnnn\",\"n\":[0,0,0,0,1,1,1,1,0,0,0,0,0,0,1,1,1,1],\"c\":[0,1,2,3,4,5,6,7,0,8,8,1,2,3,4,5,6,7],\"m\":\"BNNNSSSSNBNNSSSSNBNSSSSNBSSSSNBNNNSBNNSBNSBSP\"}";

#define DEMO_SEED UINT64_C(0x7261696c66697421) /* "railfit!" */

enum {
	HGX01,
	HGX02,
	HGX03,
	HGX04,
	HGX05,
	HGX06,
	HGX07,
	HGX08,
	HGX09,
	HGX10,
	P4D01,
	P4D02,
	L401,
	L402,
	CPU01,
	CPU02,
	DEMO_NODES
};

static const struct {
	const char *name;
	const struct gen_hw *hw;
} demo_nodes[DEMO_NODES] = {
	[HGX01] = { "hgx-01", &gen_hw_hgx_h100 }, [HGX02] = { "hgx-02", &gen_hw_hgx_h100 },
	[HGX03] = { "hgx-03", &gen_hw_hgx_h100 }, [HGX04] = { "hgx-04", &gen_hw_hgx_h100 },
	[HGX05] = { "hgx-05", &gen_hw_hgx_h100 }, [HGX06] = { "hgx-06", &gen_hw_hgx_h100 },
	[HGX07] = { "hgx-07", &gen_hw_hgx_h100 }, [HGX08] = { "hgx-08", &gen_hw_hgx_h100 },
	[HGX09] = { "hgx-09", &gen_hw_hgx_h100 }, [HGX10] = { "hgx-10", &gen_hw_hgx_h100 },
	[P4D01] = { "p4d-01", &gen_hw_p4d },      [P4D02] = { "p4d-02", &gen_hw_p4d },
	[L401] = { "l4-01", &gen_hw_l4 },         [L402] = { "l4-02", &gen_hw_l4 },
	[CPU01] = { "cpu-01", &gen_hw_cpu },      [CPU02] = { "cpu-02", &gen_hw_cpu },
};

/* The index of the NIC called @p name (dranet device name) on @p hw. */
static int
nic(const struct gen_hw *hw, const char *name)
{
	for (unsigned i = 0; i < hw->n_nics; i++) {
		char n[GEN_NAME_MAX];
		gen_nic_name(&hw->nics[i], n);
		if (strcmp(n, name) == 0)
			return (int)i;
	}
	assert(!"unknown NIC in the demo tables");
	return -1;
}

static int
rail(const struct gen_hw *hw, int gpu)
{
	return gen_hw_nic_on_root(hw, (unsigned)gpu);
}

static const char *
template_of(enum gen_shape s)
{
	switch (s) {
	case GEN_PAIR:
		return "gpu-nic-aligned";
	case GEN_LOOSE:
		return "gpu-nic";
	case GEN_GPU_ONLY:
		return "gpu-only";
	case GEN_NIC_ONLY:
		return "rdma-nic-only";
	case GEN_TWO_PAIRS:
		return "two-aligned-pairs";
	}
	return "gpu-only";
}

static const char *
image_of(const char *ns)
{
	if (strcmp(ns, "inference") == 0)
		return "vllm/vllm-openai:v0.11.0";
	if (strcmp(ns, "data") == 0)
		return "ghcr.io/example/rdma-copy:1.2";
	return "nvcr.io/nvidia/pytorch:25.10-py3";
}

/* A Running pod holding one allocated claim of @p shape on @p n. */
static void
run(struct gen *g, struct gen_node *n, const char *ns, const char *pod, const char *job,
    const char *group, enum gen_shape shape, int gpu0, int nic0, int gpu1, int nic1)
{
	gen_add_running(g, n,
			&(struct gen_running){ .ns = ns,
					       .pod = pod,
					       .job = job,
					       .group = group,
					       .template_name = template_of(shape),
					       .image = image_of(ns),
					       .shape = shape,
					       .gpu = { gpu0, gpu1 },
					       .nic = { nic0, nic1 } });
}

static void
pair(struct gen *g, struct gen_node *n, const char *pod, const char *job, const char *group,
     int gpu)
{
	run(g, n, "ml-train", pod, job, group, GEN_PAIR, gpu, rail(n->hw, gpu), -1, -1);
}

static void
two_pairs(struct gen *g, struct gen_node *n, const char *pod, const char *job, int gpu_a, int gpu_b)
{
	run(g, n, "ml-train", pod, job, NULL, GEN_TWO_PAIRS, gpu_a, rail(n->hw, gpu_a), gpu_b,
	    rail(n->hw, gpu_b));
}

static void
gpu_only(struct gen *g, struct gen_node *n, const char *pod, int gpu)
{
	run(g, n, "inference", pod, NULL, NULL, GEN_GPU_ONLY, gpu, -1, -1, -1);
}

static void
add_running(struct gen *g, struct gen_node *n)
{
	const struct gen_hw *hgx = &gen_hw_hgx_h100, *p4d = &gen_hw_p4d;

	/* hgx-03: six GPUs used; the free GPUs (6, 7) have their NICs (ce, dc) taken, the free
	 * NICs (9a, c0) sit on the roots of used GPUs (4, 5): only NODE-level pairs are left. */
	pair(g, &n[HGX03], "bert-ft-worker-0", "bert-ft", NULL, 0);
	pair(g, &n[HGX03], "bert-ft-worker-1", "bert-ft", NULL, 1);
	pair(g, &n[HGX03], "bert-ft-worker-2", "bert-ft", NULL, 2);
	pair(g, &n[HGX03], "bert-ft-worker-3", "bert-ft", NULL, 3);
	run(g, &n[HGX03], "ml-train", "sweep-17-worker-0", "sweep-17", NULL, GEN_LOOSE, 4,
	    nic(hgx, "pci-0000-ce-00-0"), -1, -1);
	gpu_only(g, &n[HGX03], "vllm-small-0", 5);
	run(g, &n[HGX03], "data", "nic-mover-0", NULL, NULL, GEN_NIC_ONLY, -1,
	    nic(hgx, "pci-0000-dc-00-0"), -1, -1);

	/* hgx-04: seven aligned pairs used; gpu-5 + pci-0000-c0-00-0 left */
	two_pairs(g, &n[HGX04], "moe-worker-0", "moe", 0, 1);
	two_pairs(g, &n[HGX04], "moe-worker-1", "moe", 2, 3);
	pair(g, &n[HGX04], "bert-ft-worker-4", "bert-ft", NULL, 4);
	pair(g, &n[HGX04], "bert-ft-worker-5", "bert-ft", NULL, 6);
	pair(g, &n[HGX04], "bert-ft-worker-6", "bert-ft", NULL, 7);

	/* hgx-05: gpu-0 taken without its NIC: first-fit pairs gpu-1 with pci-0000-18-00-0 */
	gpu_only(g, &n[HGX05], "vllm-small-1", 0);

	/* hgx-06: full */
	two_pairs(g, &n[HGX06], "gpt-pt-worker-0", "gpt-pt", 0, 1);
	two_pairs(g, &n[HGX06], "gpt-pt-worker-1", "gpt-pt", 2, 3);
	two_pairs(g, &n[HGX06], "gpt-pt-worker-2", "gpt-pt", 4, 5);
	two_pairs(g, &n[HGX06], "gpt-pt-worker-3", "gpt-pt", 6, 7);

	/* hgx-07: half used; group llm-a (namespace demo, like the pending trainer-aligned) already
	 * runs on rail 0 here */
	run(g, &n[HGX07], "demo", "llm-a-worker-0", "llm-a", "llm-a", GEN_PAIR, 0,
	    rail(n[HGX07].hw, 0), -1, -1);
	pair(g, &n[HGX07], "bert-ft-worker-7", "bert-ft", NULL, 1);
	pair(g, &n[HGX07], "bert-ft-worker-8", "bert-ft", NULL, 2);
	pair(g, &n[HGX07], "bert-ft-worker-9", "bert-ft", NULL, 3);

	/* hgx-08: the other half used */
	two_pairs(g, &n[HGX08], "gpt-pt-worker-4", "gpt-pt", 4, 5);
	two_pairs(g, &n[HGX08], "gpt-pt-worker-5", "gpt-pt", 6, 7);

	/* hgx-10: two pairs used; the NICs' netdevs are inside the pod */
	two_pairs(g, &n[HGX10], "rdma-bench-0", "rdma-bench", 0, 1);
	n[HGX10].nic_in_pod = (UINT32_C(1) << nic(hgx, "pci-0000-18-00-0")) |
			      (UINT32_C(1) << nic(hgx, "pci-0000-40-00-0"));

	/* p4d-02: three of eight used */
	run(g, &n[P4D02], "ml-train", "a100-ft-worker-0", "a100-ft", NULL, GEN_PAIR, 0,
	    nic(p4d, "pci-0000-10-1b-0"), -1, -1);
	run(g, &n[P4D02], "ml-train", "a100-ft-worker-1", "a100-ft", NULL, GEN_PAIR, 4,
	    nic(p4d, "pci-0000-90-1b-0"), -1, -1);
	gpu_only(g, &n[P4D02], "triton-0", 5);

	/* l4-02: two of four used, and a small front-end NIC */
	gpu_only(g, &n[L402], "l4-infer-0", 0);
	gpu_only(g, &n[L402], "l4-infer-1", 1);
	n[L402].frontend_bw = "25G";
	/* hwloc annotations (railfit topology -o annotation on test/data/topology/gen-dgx-h100.xml
	 * and gen-dgx-h100-pxb.xml): hgx-01 has each GPU and its NIC behind one PCIe switch (PIX),
	 * hgx-02 has the NIC behind a second switch on the card (PXB); by DRA attributes alone both
	 * are PHB, like hgx-09 */
	n[HGX01].pci_topology = ANNOTATION_PIX;
	n[HGX02].pci_topology = ANNOTATION_PXB;

	/* hgx-09: dranet without dra.net/numaNode */
	n[HGX09].nic_no_numa = true;

	/* cpu-01: two data loaders already pull 80G through the front-end NIC */
	gen_add_plain_running(g, &n[CPU01],
			      &(struct gen_plain){ .ns = "etl",
						   .pod = "ingest-0",
						   .image = "ghcr.io/example/ingest:2.3",
						   .app = "ingest",
						   .egress = "10G",
						   .ingress = "40G" });
	gen_add_plain_running(g, &n[CPU01],
			      &(struct gen_plain){ .ns = "etl",
						   .pod = "ingest-1",
						   .image = "ghcr.io/example/ingest:2.3",
						   .app = "ingest",
						   .egress = "10G",
						   .ingress = "40G" });
}

#define TRAINER_IMAGE "nvcr.io/nvidia/pytorch:25.10-py3"

static void
add_pending(struct gen *g)
{
	gen_add_pending(g, &(struct gen_pending){ .ns = "demo",
						  .pod = "trainer-aligned",
						  .group = "llm-a",
						  .app = "trainer",
						  .min_alignment = "PHB",
						  .image = TRAINER_IMAGE,
						  .cpu = "16",
						  .memory = "128Gi",
						  .claim = "trainer-aligned-gpu-nic",
						  .pod_claim = "gpu-nic",
						  .shape = GEN_PAIR });
	gen_add_pending(g, &(struct gen_pending){ .ns = "demo",
						  .pod = "trainer-loose",
						  .group = "llm-b",
						  .app = "trainer",
						  .image = TRAINER_IMAGE,
						  .cpu = "16",
						  .memory = "128Gi",
						  .claim = "trainer-loose-gpu-nic",
						  .pod_claim = "gpu-nic",
						  .shape = GEN_LOOSE });
	gen_add_pending(g, &(struct gen_pending){ .ns = "demo",
						  .pod = "trainer-2pairs",
						  .group = "llm-c",
						  .app = "trainer",
						  .image = TRAINER_IMAGE,
						  .cpu = "32",
						  .memory = "256Gi",
						  .claim = "trainer-2pairs-gpu-nic",
						  .pod_claim = "gpu-nic",
						  .shape = GEN_TWO_PAIRS });
	gen_add_pending(
		g,
		&(struct gen_pending){
			.ns = "demo",
			.pod = "inference-1gpu",
			.app = "inference",
			.image = "vllm/vllm-openai:v0.11.0",
			.cpu = "8",
			.memory = "64Gi",
			.claim = "inference-1gpu-gpu",
			.pod_claim = "gpu",
			.shape = GEN_GPU_ONLY,
			.gpu_selector =
				"device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('h100')" });
	gen_add_pending(g, &(struct gen_pending){ .ns = "demo",
						  .pod = "loader",
						  .app = "loader",
						  .egress = "20G",
						  .ingress = "40G",
						  .image = "ghcr.io/example/data-loader:1.4",
						  .cpu = "8",
						  .memory = "32Gi" });
	gen_add_pending(g, &(struct gen_pending){ .ns = "demo",
						  .pod = "web",
						  .app = "web",
						  .image = "nginx:1.27",
						  .cpu = "500m",
						  .memory = "256Mi" });
}

json_t *
rf_gen_demo(void)
{
	struct gen g;
	struct gen_node n[DEMO_NODES];

	gen_init(&g, DEMO_SEED);
	gen_add_device_classes(&g);
	for (unsigned i = 0; i < DEMO_NODES; i++)
		gen_node_init(&n[i], demo_nodes[i].name, i, demo_nodes[i].hw, DEMO_SEED);
	add_running(&g, n);
	add_pending(&g);
	for (unsigned i = 0; i < DEMO_NODES; i++)
		gen_add_node(&g, &n[i]);
	return gen_finish(&g);
}
