/* JSON builders for synthetic clusters: Nodes, the ResourceSlices the NVIDIA GPU driver and dranet
 * publish for them, DeviceClasses, ResourceClaims and the Pods that hold them, shaped exactly like
 * reference/dra-examples/. Also the hardware tables and the deterministic hash/PRNG.
 *
 * Pure functions over a struct gen collector; no I/O, no globals that change, any thread.
 * Failed allocations never crash: they set gen->oom and gen_finish() returns NULL. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alloc/gen/gen_private.h"

#define GPU_DRIVER   "gpu.nvidia.com"
#define NIC_DRIVER   "dra.net"
#define GPU_CLASS    "gpu.nvidia.com"
#define NIC_CLASS    "rdma-nic"
#define PCIE_ROOT    "resource.kubernetes.io/pcieRoot"
#define NUMA_ATTR    "dra.net/numaNode"
#define SCHEDULER    "railfit"
#define TS_NODE      "2025-11-10T14:31:07Z"
#define TS_SLICE     "2025-11-10T15:04:12Z"
#define TS_HEARTBEAT "2025-11-12T11:19:42Z"
#define TS_RUNNING   "2025-11-12T10:01:55Z"
#define TS_STARTED   "2025-11-12T10:02:09Z"
#define TS_PENDING   "2025-11-12T11:20:00Z"
#define RV_BASE      184000u

/* ---- randomness ------------------------------------------------------------------------------ */

static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
gen_rng_seed(struct gen_rng *r, uint64_t seed, uint64_t stream)
{
	r->s = mix64(seed ^ mix64(stream + UINT64_C(0x9e3779b97f4a7c15)));
}

uint64_t
gen_rng_next(struct gen_rng *r)
{
	r->s += UINT64_C(0x9e3779b97f4a7c15);
	return mix64(r->s);
}

unsigned
gen_rng_below(struct gen_rng *r, unsigned n)
{
	/* The modulo bias is below 2^-32 for the small n used here. */
	return (unsigned)(gen_rng_next(r) % n);
}

uint64_t
gen_hash(uint64_t seed, const char *key)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= UINT64_C(0x100000001b3);
	}
	return mix64(h ^ mix64(seed));
}

/* ---- hardware tables --------------------------------------------------------------------------
 */

static const struct gen_gpu_model h100 = {
	.product = "NVIDIA H100 80GB HBM3",
	.product_label = "NVIDIA-H100-80GB-HBM3",
	.architecture = "Hopper",
	.compute_cap = "9.0.0",
	.memory = "81559Mi",
	.memory_mib = "81559",
};

static const struct gen_gpu_model a100 = {
	.product = "NVIDIA A100-SXM4-40GB",
	.product_label = "NVIDIA-A100-SXM4-40GB",
	.architecture = "Ampere",
	.compute_cap = "8.0.0",
	.memory = "40Gi",
	.memory_mib = "40960",
};

static const struct gen_gpu_model l4 = {
	.product = "NVIDIA L4",
	.product_label = "NVIDIA-L4",
	.architecture = "Ada Lovelace",
	.compute_cap = "8.9.0",
	.memory = "23034Mi",
	.memory_mib = "23034",
};

/* DGX H100 wiring of reference/dra-examples/README.md: one GPU and one rail CX-7 per root. */
static const struct gen_gpu hgx_gpus[] = {
	{ "0000:1b:00.0", "pci0000:15" }, { "0000:43:00.0", "pci0000:37" },
	{ "0000:52:00.0", "pci0000:48" }, { "0000:61:00.0", "pci0000:59" },
	{ "0000:9d:00.0", "pci0000:97" }, { "0000:c3:00.0", "pci0000:b7" },
	{ "0000:d1:00.0", "pci0000:c7" }, { "0000:df:00.0", "pci0000:d7" },
};

#define CX7(bdf, root, numa, ifn, rdma, rail)                                                      \
	{                                                                                          \
		bdf, root, numa, GEN_NIC_ROCE, ifn, rdma, "Mellanox Technologies",                 \
			"MT2910 Family [ConnectX-7]", "0040", 9000, "b8:3f:d2", rail, true         \
	}

static const struct gen_nic hgx_nics[] = {
	CX7("0000:18:00.0", "pci0000:15", 0, "enp24s0np0", "mlx5_0", 0),
	{ "0000:2a:00.1", "pci0000:26", 0, GEN_NIC_ETH, "enp42s0f1", NULL, "Intel Corporation",
	  "Ethernet Controller X710 for 10GbE SFP+", "0000", 1500, "3c:ec:ef", 0, true },
	CX7("0000:40:00.0", "pci0000:37", 0, "enp64s0np0", "mlx5_3", 1),
	CX7("0000:4f:00.0", "pci0000:48", 0, "enp79s0np0", "mlx5_4", 2),
	CX7("0000:5e:00.0", "pci0000:59", 0, "enp94s0np0", "mlx5_5", 3),
	CX7("0000:9a:00.0", "pci0000:97", 1, "enp154s0np0", "mlx5_6", 4),
	CX7("0000:c0:00.0", "pci0000:b7", 1, "enp192s0np0", "mlx5_9", 5),
	CX7("0000:ce:00.0", "pci0000:c7", 1, "enp206s0np0", "mlx5_10", 6),
	CX7("0000:dc:00.0", "pci0000:d7", 1, "enp220s0np0", "mlx5_11", 7),
};

const struct gen_hw gen_hw_hgx_h100 = {
	.instance_type = "dgx-h100",
	.model = &h100,
	.gpus = hgx_gpus,
	.n_gpus = 8,
	.nics = hgx_nics,
	.n_nics = 9,
	.cpu = "224",
	.cpu_alloc = "222",
	.memory = "2113389560Ki",
	.memory_alloc = "2102903800Ki",
	.storage = "1857082216Ki",
	.kernel = "6.8.0-60-generic",
	.os_image = "Ubuntu 24.04.2 LTS",
};

/* AWS p4d.24xlarge as dranet's EKS example shows it (reference/dra-api.md §14): two A100 and one
 * EFA (RDMA only, no netdev) plus one ENA per root. Bus/slot numbers are illustrative. */
static const struct gen_gpu p4d_gpus[] = {
	{ "0000:10:1c.0", "pci0000:10" }, { "0000:10:1d.0", "pci0000:10" },
	{ "0000:20:1c.0", "pci0000:20" }, { "0000:20:1d.0", "pci0000:20" },
	{ "0000:90:1c.0", "pci0000:90" }, { "0000:90:1d.0", "pci0000:90" },
	{ "0000:a0:1c.0", "pci0000:a0" }, { "0000:a0:1d.0", "pci0000:a0" },
};

#define ENA(bdf, root, numa, ifn, sub)                                                             \
	{                                                                                          \
		bdf, root, numa, GEN_NIC_ETH, ifn, NULL, "Amazon.com, Inc.",                       \
			"Elastic Network Adapter (ENA)", "0000", 9001, "0a:1f:6c", sub, false      \
	}
#define EFA(bdf, root, numa, rdma)                                                                 \
	{                                                                                          \
		bdf, root, numa, GEN_NIC_RDMA_ONLY, NULL, rdma, "Amazon.com, Inc.",                \
			"Elastic Fabric Adapter (EFA)", "0000", 0, NULL, 0, false                  \
	}

static const struct gen_nic p4d_nics[] = {
	ENA("0000:10:1a.0", "pci0000:10", 0, "enp16s26", 1),
	EFA("0000:10:1b.0", "pci0000:10", 0, "rdmap16s27"),
	ENA("0000:20:1a.0", "pci0000:20", 0, "enp32s26", 2),
	EFA("0000:20:1b.0", "pci0000:20", 0, "rdmap32s27"),
	ENA("0000:90:1a.0", "pci0000:90", 1, "enp144s26", 3),
	EFA("0000:90:1b.0", "pci0000:90", 1, "rdmap144s27"),
	ENA("0000:a0:1a.0", "pci0000:a0", 1, "enp160s26", 4),
	EFA("0000:a0:1b.0", "pci0000:a0", 1, "rdmap160s27"),
};

const struct gen_hw gen_hw_p4d = {
	.instance_type = "p4d.24xlarge",
	.model = &a100,
	.gpus = p4d_gpus,
	.n_gpus = 8,
	.nics = p4d_nics,
	.n_nics = 8,
	.cpu = "96",
	.cpu_alloc = "95690m",
	.memory = "1176954048Ki",
	.memory_alloc = "1154930368Ki",
	.storage = "104845292Ki",
	.kernel = "6.1.141-155.222.amzn2023.x86_64",
	.os_image = "Amazon Linux 2023.7.20250623",
};

/* AWS g6.12xlarge: 4 L4 behind the VM's single root, no dranet (nothing to publish). */
static const struct gen_gpu l4_gpus[] = {
	{ "0000:38:00.0", "pci0000:00" },
	{ "0000:3a:00.0", "pci0000:00" },
	{ "0000:3c:00.0", "pci0000:00" },
	{ "0000:3e:00.0", "pci0000:00" },
};

const struct gen_hw gen_hw_l4 = {
	.instance_type = "g6.12xlarge",
	.model = &l4,
	.gpus = l4_gpus,
	.n_gpus = 4,
	.cpu = "48",
	.cpu_alloc = "47810m",
	.memory = "195944248Ki",
	.memory_alloc = "188468536Ki",
	.storage = "104845292Ki",
	.kernel = "6.1.141-155.222.amzn2023.x86_64",
	.os_image = "Amazon Linux 2023.7.20250623",
};

const struct gen_hw gen_hw_cpu = {
	.instance_type = "m7i.16xlarge",
	.cpu = "64",
	.cpu_alloc = "63770m",
	.memory = "261158212Ki",
	.memory_alloc = "253682500Ki",
	.storage = "104845292Ki",
	.kernel = "6.1.141-155.222.amzn2023.x86_64",
	.os_image = "Amazon Linux 2023.7.20250623",
};

void
gen_nic_name(const struct gen_nic *nic, char ret_name[static GEN_NAME_MAX])
{
	size_t i = 0;
	memcpy(ret_name, "pci-", 4);
	for (const char *p = nic->bdf; *p && i + 5 < GEN_NAME_MAX; p++, i++)
		ret_name[4 + i] = (*p == ':' || *p == '.') ? '-' : *p;
	ret_name[4 + i] = '\0';
}

int
gen_hw_nic_on_root(const struct gen_hw *hw, unsigned gpu)
{
	if (gpu >= hw->n_gpus)
		return -1;
	for (unsigned i = 0; i < hw->n_nics; i++)
		if (hw->nics[i].kind != GEN_NIC_ETH &&
		    strcmp(hw->nics[i].root, hw->gpus[gpu].root) == 0)
			return (int)i;
	return -1;
}

void
gen_node_init(struct gen_node *n, const char *name, unsigned index, const struct gen_hw *hw,
	      uint64_t seed)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->index = index;
	n->hw = hw;
	n->seed = seed;
}

/* ---- small JSON helpers: every failure lands in g->oom -----------------------------------------
 */

static json_t *
jobj(struct gen *g)
{
	json_t *o = json_object();
	if (!o)
		g->oom = true;
	return o;
}

static json_t *
jarr(struct gen *g)
{
	json_t *a = json_array();
	if (!a)
		g->oom = true;
	return a;
}

/* Steals v (jansson's *_new setters release v on every error path, also when o is NULL). */
static void
put(struct gen *g, json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v) != 0)
		g->oom = true;
}

static void
put_str(struct gen *g, json_t *o, const char *key, const char *s)
{
	put(g, o, key, json_string(s));
}

static void
put_int(struct gen *g, json_t *o, const char *key, json_int_t v)
{
	put(g, o, key, json_integer(v));
}

static void
put_bool(struct gen *g, json_t *o, const char *key, bool v)
{
	put(g, o, key, json_boolean(v));
}

static void
push(struct gen *g, json_t *a, json_t *v)
{
	if (json_array_append_new(a, v) != 0)
		g->oom = true;
}

static void
push_str(struct gen *g, json_t *a, const char *s)
{
	push(g, a, json_string(s));
}

/* {"<type>": value} device attribute */
static void
attr(struct gen *g, json_t *attrs, const char *key, const char *type, json_t *v)
{
	json_t *a = jobj(g);
	put(g, a, type, v);
	put(g, attrs, key, a);
}

static void
attr_str(struct gen *g, json_t *attrs, const char *key, const char *v)
{
	attr(g, attrs, key, "string", json_string(v));
}

static void
attr_ver(struct gen *g, json_t *attrs, const char *key, const char *v)
{
	attr(g, attrs, key, "version", json_string(v));
}

static void
attr_int(struct gen *g, json_t *attrs, const char *key, json_int_t v)
{
	attr(g, attrs, key, "int", json_integer(v));
}

static void
attr_bool(struct gen *g, json_t *attrs, const char *key, bool v)
{
	attr(g, attrs, key, "bool", json_boolean(v));
}

/* ---- derived identifiers ----------------------------------------------------------------------
 */

/* A version-4-shaped UUID from (seed, key). */
static void
make_uid(uint64_t seed, const char *key, char ret[static 37])
{
	uint64_t a = gen_hash(seed, key);
	uint64_t b = gen_hash(a, key);
	snprintf(ret, 37, "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-%04" PRIx32 "-%012" PRIx64,
		 (uint32_t)(a >> 32), (uint32_t)(a >> 16) & 0xffffu, (uint32_t)a & 0xfffu,
		 ((uint32_t)(b >> 48) & 0x3fffu) | 0x8000u, b & UINT64_C(0xffffffffffff));
}

static void
uid_of(const struct gen *g, const char *kind, const char *ns, const char *name, char ret[static 37])
{
	char key[3 * GEN_NAME_MAX + 8];
	snprintf(key, sizeof(key), "%s/%s/%s", kind, ns ? ns : "", name);
	make_uid(g->seed, key, ret);
}

/* The 5 characters Kubernetes appends to a generateName (its alphabet has no vowels, 0, 1, 3). */
static void
suffix_of(const struct gen *g, const char *key, char ret[static 6])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h = gen_hash(g->seed, key);
	for (int i = 0; i < 5; i++) {
		ret[i] = alphabet[h % (sizeof(alphabet) - 1)];
		h /= sizeof(alphabet) - 1;
	}
	ret[5] = '\0';
}

static void
hex_of(uint64_t seed, const char *key, char *ret, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	uint64_t h = 0;
	for (size_t i = 0; i < len; i++) {
		if (i % 16 == 0)
			h = gen_hash(seed + i, key);
		ret[i] = digits[h & 0xf];
		h >>= 4;
	}
	ret[len] = '\0';
}

static void
next_rv(struct gen *g, json_t *meta)
{
	char rv[16];
	snprintf(rv, sizeof(rv), "%u", RV_BASE + g->rv++);
	put_str(g, meta, "resourceVersion", rv);
}

/* "10.1.x.y" */
static void
node_ip(const struct gen_node *n, char ret[static 20])
{
	unsigned v = n->index + 10;
	snprintf(ret, 20, "10.%u.%u.%u", 1 + ((v >> 16) & 0x3f), (v >> 8) & 0xff, v & 0xff);
}

static void
nic_ipv4(const struct gen_node *n, const struct gen_nic *nic, char ret[static 24])
{
	unsigned v = n->index + 10;
	if (nic->kind == GEN_NIC_ROCE)
		snprintf(ret, 24, "10.%u.%u.%u/16", 100 + nic->subnet, (v >> 8) & 0xff, v & 0xff);
	else if (nic->subnet == 0)
		snprintf(ret, 24, "192.168.%u.%u/16", (v >> 8) & 0xff, v & 0xff);
	else
		snprintf(ret, 24, "172.%u.%u.%u/16", 15 + nic->subnet, (v >> 8) & 0xff, v & 0xff);
}

static void
nic_mac(const struct gen_node *n, unsigned i, char ret[static 18])
{
	char key[GEN_NAME_MAX + 16];
	snprintf(key, sizeof(key), "mac/%s/%u", n->name, i);
	uint64_t h = gen_hash(n->seed, key);
	snprintf(ret, 18, "%s:%02x:%02x:%02x",
		 n->hw->nics[i].mac_oui ? n->hw->nics[i].mac_oui : "02:00:00",
		 (unsigned)(h >> 16) & 0xffu, (unsigned)(h >> 8) & 0xffu, (unsigned)h & 0xf0u);
}

static void
pod_ip(const struct gen_node *n, unsigned pod, char ret[static 20])
{
	snprintf(ret, 20, "100.%u.%u.%u", 64 + ((n->index >> 8) & 0x3f), n->index & 0xff,
		 2 + (pod % 250));
}

/* ---- DeviceClasses ----------------------------------------------------------------------------
 */

static void
add_class(struct gen *g, const char *name, const char *uid, unsigned rv, const char *created,
	  const char *expr, const char *ext_name)
{
	char rvs[16];
	json_t *c = jobj(g), *meta = jobj(g), *spec = jobj(g), *sels = jarr(g), *sel = jobj(g),
	       *cel = jobj(g);
	put_str(g, c, "kind", "DeviceClass");
	put_str(g, c, "apiVersion", "resource.k8s.io/v1");
	put_str(g, meta, "name", name);
	put_str(g, meta, "uid", uid);
	snprintf(rvs, sizeof(rvs), "%u", rv);
	put_str(g, meta, "resourceVersion", rvs);
	put_int(g, meta, "generation", 1);
	put_str(g, meta, "creationTimestamp", created);
	put(g, c, "metadata", meta);
	put_str(g, cel, "expression", expr);
	put(g, sel, "cel", cel);
	push(g, sels, sel);
	put(g, spec, "selectors", sels);
	if (ext_name)
		put_str(g, spec, "extendedResourceName", ext_name);
	put(g, c, "spec", spec);
	push(g, g->classes, c);
}

void
gen_add_device_classes(struct gen *g)
{
	add_class(
		g, GPU_CLASS, "c7d1e2f3-4a5b-4c6d-8e9f-0a1b2c3d4e5f", 1021, "2025-11-10T15:02:11Z",
		"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
		"nvidia.com/gpu");
	add_class(g, NIC_CLASS, "d8e2f3a4-5b6c-4d7e-9f0a-1b2c3d4e5f60", 1022,
		  "2025-11-10T15:02:12Z",
		  "device.driver == 'dra.net' && device.attributes['dra.net'].rdma == true", NULL);
}

void
gen_add_cpu_class(struct gen *g)
{
	add_class(g, "dra.cpu", "e9f3a4b5-6c7d-4e8f-a0b1-2c3d4e5f6a71", 1023,
		  "2025-11-10T15:02:13Z", "device.driver == \"dra.cpu\"", NULL);
}

/* ---- Node -------------------------------------------------------------------------------------
 */

static json_t *
node_condition(struct gen *g, const char *type, const char *status, const char *reason,
	       const char *message)
{
	json_t *c = jobj(g);
	put_str(g, c, "type", type);
	put_str(g, c, "status", status);
	put_str(g, c, "lastHeartbeatTime", TS_HEARTBEAT);
	put_str(g, c, "lastTransitionTime", TS_NODE);
	put_str(g, c, "reason", reason);
	put_str(g, c, "message", message);
	return c;
}

static json_t *
node_resources(struct gen *g, const struct gen_hw *hw, bool alloc)
{
	json_t *r = jobj(g);
	put_str(g, r, "cpu", alloc ? hw->cpu_alloc : hw->cpu);
	put_str(g, r, "ephemeral-storage", hw->storage);
	put_str(g, r, "hugepages-1Gi", "0");
	put_str(g, r, "hugepages-2Mi", "0");
	put_str(g, r, "memory", alloc ? hw->memory_alloc : hw->memory);
	put_str(g, r, "pods", "110");
	return r;
}

static void
add_node_object(struct gen *g, const struct gen_node *n, const char *uid)
{
	const struct gen_hw *hw = n->hw;
	char buf[64], ip[20], key[GEN_NAME_MAX + 16];
	json_t *node = jobj(g), *meta = jobj(g), *labels = jobj(g), *ann = jobj(g), *spec = jobj(g),
	       *cidrs = jarr(g), *status = jobj(g), *conds = jarr(g), *addrs = jarr(g), *a,
	       *ep = jobj(g), *kep = jobj(g), *info = jobj(g);

	put_str(g, node, "kind", "Node");
	put_str(g, node, "apiVersion", "v1");
	put_str(g, meta, "name", n->name);
	put_str(g, meta, "uid", uid);
	next_rv(g, meta);
	put_str(g, meta, "creationTimestamp", TS_NODE);
	put_str(g, labels, "beta.kubernetes.io/arch", "amd64");
	put_str(g, labels, "beta.kubernetes.io/instance-type", hw->instance_type);
	put_str(g, labels, "beta.kubernetes.io/os", "linux");
	put_str(g, labels, "kubernetes.io/arch", "amd64");
	put_str(g, labels, "kubernetes.io/hostname", n->name);
	put_str(g, labels, "kubernetes.io/os", "linux");
	put_str(g, labels, "node.kubernetes.io/instance-type", hw->instance_type);
	if (hw->model) {
		snprintf(buf, sizeof(buf), "%u", hw->n_gpus);
		put_str(g, labels, "nvidia.com/gpu.count", buf);
		put_str(g, labels, "nvidia.com/gpu.memory", hw->model->memory_mib);
		put_str(g, labels, "nvidia.com/gpu.present", "true");
		put_str(g, labels, "nvidia.com/gpu.product", hw->model->product_label);
	}
	if (n->block[0])
		put_str(g, labels, "network.topology.kubernetes.io/block", n->block);
	if (n->spine[0])
		put_str(g, labels, "network.topology.kubernetes.io/spine", n->spine);
	put(g, meta, "labels", labels);
	put_str(g, ann, "node.alpha.kubernetes.io/ttl", "0");
	if (n->frontend_bw)
		put_str(g, ann, "railfit.io/frontend-bandwidth", n->frontend_bw);
	if (n->pci_topology)
		put_str(g, ann, "railfit.io/pci-topology", n->pci_topology);
	put_str(g, ann, "volumes.kubernetes.io/controller-managed-attach-detach", "true");
	put(g, meta, "annotations", ann);
	put(g, node, "metadata", meta);

	snprintf(buf, sizeof(buf), "100.%u.%u.0/24", 64 + ((n->index >> 8) & 0x3f),
		 n->index & 0xff);
	put_str(g, spec, "podCIDR", buf);
	push_str(g, cidrs, buf);
	put(g, spec, "podCIDRs", cidrs);
	put(g, node, "spec", spec);

	put(g, status, "capacity", node_resources(g, hw, false));
	put(g, status, "allocatable", node_resources(g, hw, true));
	push(g, conds,
	     node_condition(g, "MemoryPressure", "False", "KubeletHasSufficientMemory",
			    "kubelet has sufficient memory available"));
	push(g, conds,
	     node_condition(g, "DiskPressure", "False", "KubeletHasNoDiskPressure",
			    "kubelet has no disk pressure"));
	push(g, conds,
	     node_condition(g, "PIDPressure", "False", "KubeletHasSufficientPID",
			    "kubelet has sufficient PID available"));
	push(g, conds,
	     node_condition(g, "Ready", "True", "KubeletReady", "kubelet is posting ready status"));
	put(g, status, "conditions", conds);
	node_ip(n, ip);
	a = jobj(g);
	put_str(g, a, "type", "InternalIP");
	put_str(g, a, "address", ip);
	push(g, addrs, a);
	a = jobj(g);
	put_str(g, a, "type", "Hostname");
	put_str(g, a, "address", n->name);
	push(g, addrs, a);
	put(g, status, "addresses", addrs);
	put_int(g, kep, "Port", 10250);
	put(g, ep, "kubeletEndpoint", kep);
	put(g, status, "daemonEndpoints", ep);
	snprintf(key, sizeof(key), "machine/%s", n->name);
	hex_of(n->seed, key, buf, 32);
	put_str(g, info, "machineID", buf);
	uid_of(g, "system", NULL, n->name, buf);
	put_str(g, info, "systemUUID", buf);
	uid_of(g, "boot", NULL, n->name, buf);
	put_str(g, info, "bootID", buf);
	put_str(g, info, "kernelVersion", hw->kernel);
	put_str(g, info, "osImage", hw->os_image);
	put_str(g, info, "containerRuntimeVersion", "containerd://2.0.5");
	put_str(g, info, "kubeletVersion", "v1.34.1");
	put_str(g, info, "kubeProxyVersion", "");
	put_str(g, info, "operatingSystem", "linux");
	put_str(g, info, "architecture", "amd64");
	put(g, status, "nodeInfo", info);
	put(g, node, "status", status);
	push(g, g->nodes, node);
}

/* ---- ResourceSlices ---------------------------------------------------------------------------
 */

/* metadata + spec skeleton shared by both drivers; returns the spec (borrowed from the slice) */
static json_t *
slice_skeleton(struct gen *g, const struct gen_node *n, const char *node_uid, const char *driver,
	       json_t **ret_slice)
{
	char gen_name[2 * GEN_NAME_MAX], name[2 * GEN_NAME_MAX + 8], sfx[6], uid[37];
	json_t *s = jobj(g), *meta = jobj(g), *owners = jarr(g), *owner = jobj(g), *spec = jobj(g),
	       *pool = jobj(g);

	snprintf(gen_name, sizeof(gen_name), "%s-%s-", n->name, driver);
	suffix_of(g, gen_name, sfx);
	snprintf(name, sizeof(name), "%s%s", gen_name, sfx);
	uid_of(g, "ResourceSlice", NULL, name, uid);
	put_str(g, s, "kind", "ResourceSlice");
	put_str(g, s, "apiVersion", "resource.k8s.io/v1");
	put_str(g, meta, "name", name);
	put_str(g, meta, "generateName", gen_name);
	put_str(g, meta, "uid", uid);
	next_rv(g, meta);
	put_int(g, meta, "generation", 1);
	put_str(g, meta, "creationTimestamp", TS_SLICE);
	put_str(g, owner, "apiVersion", "v1");
	put_str(g, owner, "kind", "Node");
	put_str(g, owner, "name", n->name);
	put_str(g, owner, "uid", node_uid);
	put_bool(g, owner, "controller", true);
	push(g, owners, owner);
	put(g, meta, "ownerReferences", owners);
	put(g, s, "metadata", meta);
	put_str(g, spec, "driver", driver);
	put_str(g, pool, "name", n->name);
	put_int(g, pool, "generation", 1);
	put_int(g, pool, "resourceSliceCount", 1);
	put(g, spec, "pool", pool);
	put_str(g, spec, "nodeName", n->name);
	put(g, s, "spec", spec);
	*ret_slice = s;
	return spec;
}

static void
add_gpu_slice(struct gen *g, const struct gen_node *n, const char *node_uid)
{
	const struct gen_hw *hw = n->hw;
	json_t *slice, *spec = slice_skeleton(g, n, node_uid, GPU_DRIVER, &slice);
	json_t *devs = jarr(g);

	for (unsigned i = 0; i < hw->n_gpus; i++) {
		char name[16], key[GEN_NAME_MAX + 16], uuid[37], gpu_uuid[48];
		json_t *d = jobj(g), *attrs = jobj(g), *cap = jobj(g), *mem = jobj(g);
		snprintf(name, sizeof(name), "gpu-%u", i);
		snprintf(key, sizeof(key), "gpu/%s/%u", n->name, i);
		make_uid(n->seed, key, uuid);
		snprintf(gpu_uuid, sizeof(gpu_uuid), "GPU-%s", uuid);
		put_str(g, d, "name", name);
		attr_str(g, attrs, "addressingMode", "HMM");
		attr_str(g, attrs, "architecture", hw->model->architecture);
		attr_str(g, attrs, "brand", "Nvidia");
		attr_ver(g, attrs, "cudaComputeCapability", hw->model->compute_cap);
		attr_ver(g, attrs, "cudaDriverVersion", "13.0.0");
		attr_ver(g, attrs, "driverVersion", "580.126.9");
		attr_str(g, attrs, "productName", hw->model->product);
		attr_str(g, attrs, "resource.kubernetes.io/pciBusID", hw->gpus[i].bdf);
		attr_str(g, attrs, PCIE_ROOT, hw->gpus[i].root);
		attr_str(g, attrs, "type", "gpu");
		attr_str(g, attrs, "uuid", gpu_uuid);
		put(g, d, "attributes", attrs);
		put_str(g, mem, "value", hw->model->memory);
		put(g, cap, "memory", mem);
		put(g, d, "capacity", cap);
		push(g, devs, d);
	}
	put(g, spec, "devices", devs);
	push(g, g->slices, slice);
}

/* kubernetes-sigs/dra-driver-cpu in grouped mode (its docs/user/device-attributes.md, the shape of
 * test/data/dra/resourceslice-dra-cpu-grouped.json): one device per NUMA node that many claims
 * share, its CPUs a consumable capacity dra.cpu/cpu, the PCIe roots of the node's NICs on that
 * NUMA node. The NUMA nodes are those of the NICs; the CPUs split evenly between them. */
static void
add_cpu_slice(struct gen *g, const struct gen_node *n, const char *node_uid)
{
	const struct gen_hw *hw = n->hw;
	json_t *slice, *spec = slice_skeleton(g, n, node_uid, "dra.cpu", &slice);
	json_t *devs = jarr(g);
	int numas = 1;
	for (unsigned i = 0; i < hw->n_nics; i++)
		if (hw->nics[i].numa + 1 > numas)
			numas = hw->nics[i].numa + 1;
	long cpus = strtol(hw->cpu, NULL, 10) / numas;
	for (int k = 0; k < numas; k++) {
		char name[32], v[24];
		json_t *d = jobj(g), *attrs = jobj(g), *cap = jobj(g), *q = jobj(g),
		       *roots = jarr(g), *ra = jobj(g);
		snprintf(name, sizeof(name), "cpudevnuma%03d", k);
		put_str(g, d, "name", name);
		put_bool(g, d, "allowMultipleAllocations", true);
		attr_bool(g, attrs, "dra.cpu/smtEnabled", true);
		attr_int(g, attrs, "dra.cpu/numCPUs", cpus);
		attr_int(g, attrs, "resource.kubernetes.io/numaNode", k);
		attr_int(g, attrs, "dra.cpu/socketID", k);
		attr_int(g, attrs, "dra.net/numaNode", k);
		attr_int(g, attrs, "dra.cpu/numaNodeID", k);
		for (unsigned i = 0; i < hw->n_nics; i++) {
			bool seen = false;
			if (hw->nics[i].numa != k)
				continue;
			for (unsigned j = 0; j < i; j++)
				seen = seen || (hw->nics[j].numa == k &&
						strcmp(hw->nics[j].root, hw->nics[i].root) == 0);
			if (!seen)
				push_str(g, roots, hw->nics[i].root);
		}
		put(g, ra, "strings", roots);
		put(g, attrs, PCIE_ROOT, ra);
		put(g, d, "attributes", attrs);
		snprintf(v, sizeof(v), "%ld", cpus);
		put_str(g, q, "value", v);
		put(g, cap, "dra.cpu/cpu", q);
		put(g, d, "capacity", cap);
		push(g, devs, d);
	}
	put(g, spec, "devices", devs);
	push(g, g->slices, slice);
}

static void
add_nic_slice(struct gen *g, const struct gen_node *n, const char *node_uid)
{
	const struct gen_hw *hw = n->hw;
	json_t *slice, *spec = slice_skeleton(g, n, node_uid, NIC_DRIVER, &slice);
	json_t *devs = jarr(g);

	for (unsigned i = 0; i < hw->n_nics; i++) {
		const struct gen_nic *nic = &hw->nics[i];
		/* host-side netdev attributes exist only while the netdev is in the host netns */
		bool netdev =
			nic->kind != GEN_NIC_RDMA_ONLY && !(n->nic_in_pod & (UINT32_C(1) << i));
		char name[GEN_NAME_MAX], mac[18], ip[24];
		json_t *d = jobj(g), *attrs = jobj(g);

		gen_nic_name(nic, name);
		put_str(g, d, "name", name);
		if (netdev) {
			nic_mac(n, i, mac);
			nic_ipv4(n, nic, ip);
			attr_str(g, attrs, "dra.net/alias", "");
			attr_bool(g, attrs, "dra.net/ebpf", false);
			attr_str(g, attrs, "dra.net/encapsulation", "ether");
			attr_str(g, attrs, "dra.net/ifName", nic->if_name);
			attr_str(g, attrs, "dra.net/ipv4", ip);
			attr_str(g, attrs, "dra.net/mac", mac);
			attr_int(g, attrs, "dra.net/mtu", nic->mtu);
		}
		if (!n->nic_no_numa)
			attr_int(g, attrs, NUMA_ATTR, nic->numa);
		attr_str(g, attrs, "dra.net/pciAddress", nic->bdf);
		attr_str(g, attrs, "dra.net/pciDevice", nic->device);
		attr_str(g, attrs, "dra.net/pciSubsystem", nic->subsystem);
		attr_str(g, attrs, "dra.net/pciVendor", nic->vendor);
		attr_bool(g, attrs, "dra.net/rdma", nic->kind != GEN_NIC_ETH);
		if (nic->rdma_dev)
			attr_str(g, attrs, "dra.net/rdmaDevice", nic->rdma_dev);
		attr_bool(g, attrs, "dra.net/sriov", nic->sriov);
		attr_int(g, attrs, "dra.net/sriovVfs", 0);
		if (netdev) {
			attr_str(g, attrs, "dra.net/state", "up");
			attr_str(g, attrs, "dra.net/type", "device");
		}
		attr_bool(g, attrs, "dra.net/virtual", false);
		attr_str(g, attrs, PCIE_ROOT, nic->root);
		put(g, d, "attributes", attrs);
		push(g, devs, d);
	}
	put(g, spec, "devices", devs);
	push(g, g->slices, slice);
}

void
gen_add_node(struct gen *g, const struct gen_node *n)
{
	char uid[37];
	uid_of(g, "Node", NULL, n->name, uid);
	add_node_object(g, n, uid);
	if (n->hw->n_gpus > 0)
		add_gpu_slice(g, n, uid);
	if (n->hw->n_nics > 0)
		add_nic_slice(g, n, uid);
	if (n->cpu_slice)
		add_cpu_slice(g, n, uid);
}

/* ---- claims -----------------------------------------------------------------------------------
 */

struct request {
	const char *name;
	bool gpu;
	int slot; /* index into gen_running.gpu[] / nic[] */
};

static const struct request req_pair[] = { { "gpu", true, 0 }, { "nic", false, 0 } };
static const struct request req_gpu[] = { { "gpu", true, 0 } };
static const struct request req_nic[] = { { "nic", false, 0 } };
static const struct request req_two[] = {
	{ "gpu-a", true, 0 }, { "nic-a", false, 0 }, { "gpu-b", true, 1 }, { "nic-b", false, 1 }
};

static unsigned
shape_requests(enum gen_shape s, const struct request **ret)
{
	switch (s) {
	case GEN_PAIR:
	case GEN_LOOSE:
		*ret = req_pair;
		return 2;
	case GEN_GPU_ONLY:
		*ret = req_gpu;
		return 1;
	case GEN_NIC_ONLY:
		*ret = req_nic;
		return 1;
	case GEN_TWO_PAIRS:
		*ret = req_two;
		return 4;
	}
	*ret = req_gpu;
	return 1;
}

static const char *
shape_pod_claim(enum gen_shape s)
{
	switch (s) {
	case GEN_GPU_ONLY:
		return "gpu";
	case GEN_NIC_ONLY:
		return "nic";
	case GEN_PAIR:
	case GEN_LOOSE:
	case GEN_TWO_PAIRS:
		break;
	}
	return "gpu-nic";
}

static json_t *
constraint(struct gen *g, const char *a, const char *b, const char *attribute)
{
	json_t *c = jobj(g), *reqs = jarr(g);
	push_str(g, reqs, a);
	push_str(g, reqs, b);
	put(g, c, "requests", reqs);
	put_str(g, c, "matchAttribute", attribute);
	return c;
}

static json_t *
claim_spec(struct gen *g, enum gen_shape shape, const char *gpu_selector)
{
	const struct request *reqs;
	unsigned n = shape_requests(shape, &reqs);
	json_t *spec = jobj(g), *devices = jobj(g), *requests = jarr(g), *cons;

	for (unsigned i = 0; i < n; i++) {
		json_t *r = jobj(g), *ex = jobj(g);
		put_str(g, r, "name", reqs[i].name);
		put_str(g, ex, "deviceClassName", reqs[i].gpu ? GPU_CLASS : NIC_CLASS);
		if (reqs[i].gpu && gpu_selector) {
			json_t *sels = jarr(g), *sel = jobj(g), *cel = jobj(g);
			put_str(g, cel, "expression", gpu_selector);
			put(g, sel, "cel", cel);
			push(g, sels, sel);
			put(g, ex, "selectors", sels);
		}
		put_str(g, ex, "allocationMode", "ExactCount");
		put_int(g, ex, "count", 1);
		put(g, r, "exactly", ex);
		push(g, requests, r);
	}
	put(g, devices, "requests", requests);
	if (shape == GEN_PAIR) {
		cons = jarr(g);
		push(g, cons, constraint(g, "gpu", "nic", PCIE_ROOT));
		put(g, devices, "constraints", cons);
	} else if (shape == GEN_TWO_PAIRS) {
		cons = jarr(g);
		push(g, cons, constraint(g, "gpu-a", "nic-a", PCIE_ROOT));
		push(g, cons, constraint(g, "gpu-b", "nic-b", PCIE_ROOT));
		push(g, cons, constraint(g, "nic-a", "nic-b", NUMA_ATTR));
		put(g, devices, "constraints", cons);
	}
	put(g, spec, "devices", devices);
	return spec;
}

static json_t *
owner_ref(struct gen *g, const char *api, const char *kind, const char *name, const char *uid)
{
	json_t *o = jobj(g);
	put_str(g, o, "apiVersion", api);
	put_str(g, o, "kind", kind);
	put_str(g, o, "name", name);
	put_str(g, o, "uid", uid);
	put_bool(g, o, "controller", true);
	put_bool(g, o, "blockOwnerDeletion", true);
	return o;
}

static void
add_allocated_claim(struct gen *g, struct gen_node *n, const struct gen_running *r,
		    const char *claim_name, const char *gen_name, const char *pod_uid)
{
	const struct gen_hw *hw = n->hw;
	const struct request *reqs;
	unsigned nreq = shape_requests(r->shape, &reqs);
	char uid[37];
	json_t *c = jobj(g), *meta = jobj(g), *ann = jobj(g), *owners = jarr(g), *fin = jarr(g),
	       *status = jobj(g), *alloc = jobj(g), *devices = jobj(g), *results = jarr(g),
	       *sel = jobj(g), *terms = jarr(g), *term = jobj(g), *fields = jarr(g),
	       *field = jobj(g), *vals = jarr(g), *reserved = jarr(g), *rsv = jobj(g),
	       *dstat = jarr(g);

	uid_of(g, "ResourceClaim", r->ns, claim_name, uid);
	put_str(g, c, "kind", "ResourceClaim");
	put_str(g, c, "apiVersion", "resource.k8s.io/v1");
	put_str(g, meta, "name", claim_name);
	put_str(g, meta, "generateName", gen_name);
	put_str(g, meta, "namespace", r->ns);
	put_str(g, meta, "uid", uid);
	next_rv(g, meta);
	put_str(g, meta, "creationTimestamp", TS_RUNNING);
	put_str(g, ann, "resource.kubernetes.io/pod-claim-name", shape_pod_claim(r->shape));
	put(g, meta, "annotations", ann);
	push(g, owners, owner_ref(g, "v1", "Pod", r->pod, pod_uid));
	put(g, meta, "ownerReferences", owners);
	push_str(g, fin, "resource.kubernetes.io/delete-protection");
	put(g, meta, "finalizers", fin);
	put(g, c, "metadata", meta);
	put(g, c, "spec", claim_spec(g, r->shape, NULL));

	for (unsigned i = 0; i < nreq; i++) {
		char dev[GEN_NAME_MAX];
		json_t *res = jobj(g);
		int idx = reqs[i].gpu ? r->gpu[reqs[i].slot] : r->nic[reqs[i].slot];
		assert(idx >= 0 && (unsigned)idx < (reqs[i].gpu ? hw->n_gpus : hw->n_nics));
		if (idx < 0 || (unsigned)idx >= (reqs[i].gpu ? hw->n_gpus : hw->n_nics)) {
			json_decref(res); /* a planning bug (NDEBUG build): leave the result out */
			continue;
		}
		if (reqs[i].gpu) {
			assert(!n->gpu_used[idx]); /* the plans never allocate a device twice */
			snprintf(dev, sizeof(dev), "gpu-%d", idx);
			n->gpu_used[idx] = true;
		} else {
			assert(!n->nic_used[idx]);
			gen_nic_name(&hw->nics[idx], dev);
			n->nic_used[idx] = true;
		}
		put_str(g, res, "request", reqs[i].name);
		put_str(g, res, "driver", reqs[i].gpu ? GPU_DRIVER : NIC_DRIVER);
		put_str(g, res, "pool", n->name);
		put_str(g, res, "device", dev);
		push(g, results, res);

		if (!reqs[i].gpu) {
			/* dranet reports the configured interface (reference claim's
			 * status.devices) */
			const struct gen_nic *nic = &hw->nics[idx];
			json_t *ds = jobj(g), *conds = jarr(g), *cond = jobj(g);
			put_str(g, ds, "driver", NIC_DRIVER);
			put_str(g, ds, "pool", n->name);
			put_str(g, ds, "device", dev);
			put_str(g, cond, "type", "Ready");
			put_str(g, cond, "status", "True");
			put_str(g, cond, "lastTransitionTime", TS_STARTED);
			put_str(g, cond, "reason",
				nic->kind == GEN_NIC_RDMA_ONLY ? "RDMAOnlyDeviceReady"
							       : "NetworkDeviceReady");
			put_str(g, cond, "message", "");
			push(g, conds, cond);
			put(g, ds, "conditions", conds);
			if (nic->kind != GEN_NIC_RDMA_ONLY) {
				char mac[18];
				json_t *nd = jobj(g);
				nic_mac(n, (unsigned)idx, mac);
				put_str(g, nd, "interfaceName", nic->if_name);
				put_str(g, nd, "hardwareAddress", mac);
				put(g, ds, "networkData", nd);
			}
			push(g, dstat, ds);
		}
	}
	put(g, devices, "results", results);
	put(g, alloc, "devices", devices);
	put_str(g, field, "key", "metadata.name");
	put_str(g, field, "operator", "In");
	push_str(g, vals, n->name);
	put(g, field, "values", vals);
	push(g, fields, field);
	put(g, term, "matchFields", fields);
	push(g, terms, term);
	put(g, sel, "nodeSelectorTerms", terms);
	put(g, alloc, "nodeSelector", sel);
	put(g, status, "allocation", alloc);
	put_str(g, rsv, "resource", "pods");
	put_str(g, rsv, "name", r->pod);
	put_str(g, rsv, "uid", pod_uid);
	push(g, reserved, rsv);
	put(g, status, "reservedFor", reserved);
	if (json_array_size(dstat) > 0)
		put(g, status, "devices", dstat);
	else
		json_decref(dstat);
	put(g, c, "status", status);
	push(g, g->claims, c);
}

/* ---- pods -------------------------------------------------------------------------------------
 */

static json_t *
toleration(struct gen *g, const char *key)
{
	json_t *t = jobj(g);
	put_str(g, t, "key", key);
	put_str(g, t, "operator", "Exists");
	put_str(g, t, "effect", "NoExecute");
	put_int(g, t, "tolerationSeconds", 300);
	return t;
}

struct pod_args {
	const char *ns, *name, *uid, *image, *cpu, *memory;
	json_t *labels, *annotations, *owners; /* stolen, may be NULL */
	const struct gen_node *node;           /* NULL: Pending */
	const char *pod_claim;                 /* NULL: no claim */
	const char *claim_name;
	const char *template_name; /* set: the claim came from a template */
	unsigned pod_index;
};

static json_t *
pod_condition(struct gen *g, const char *type)
{
	json_t *c = jobj(g);
	put_str(g, c, "type", type);
	put_str(g, c, "status", "True");
	put(g, c, "lastProbeTime", json_null());
	put_str(g, c, "lastTransitionTime", TS_STARTED);
	return c;
}

static void
add_pod(struct gen *g, const struct pod_args *a)
{
	json_t *p = jobj(g), *meta = jobj(g), *spec = jobj(g), *ctrs = jarr(g), *ctr = jobj(g),
	       *res = jobj(g), *reqs = jobj(g), *lims = jobj(g), *tols = jarr(g), *status = jobj(g);

	put_str(g, p, "kind", "Pod");
	put_str(g, p, "apiVersion", "v1");
	put_str(g, meta, "name", a->name);
	put_str(g, meta, "namespace", a->ns);
	put_str(g, meta, "uid", a->uid);
	next_rv(g, meta);
	put_str(g, meta, "creationTimestamp", a->node ? TS_RUNNING : TS_PENDING);
	if (a->labels)
		put(g, meta, "labels", a->labels);
	if (a->annotations)
		put(g, meta, "annotations", a->annotations);
	if (a->owners)
		put(g, meta, "ownerReferences", a->owners);
	put(g, p, "metadata", meta);

	put_str(g, ctr, "name", "main");
	put_str(g, ctr, "image", a->image);
	put_str(g, reqs, "cpu", a->cpu);
	put_str(g, reqs, "memory", a->memory);
	put_str(g, lims, "memory", a->memory);
	put(g, res, "limits", lims);
	put(g, res, "requests", reqs);
	if (a->pod_claim) {
		json_t *claims = jarr(g), *cl = jobj(g);
		put_str(g, cl, "name", a->pod_claim);
		push(g, claims, cl);
		put(g, res, "claims", claims);
	}
	put(g, ctr, "resources", res);
	put_str(g, ctr, "terminationMessagePath", "/dev/termination-log");
	put_str(g, ctr, "terminationMessagePolicy", "File");
	put_str(g, ctr, "imagePullPolicy", "IfNotPresent");
	push(g, ctrs, ctr);
	put(g, spec, "containers", ctrs);
	put_str(g, spec, "restartPolicy", a->owners ? "Never" : "Always");
	put_int(g, spec, "terminationGracePeriodSeconds", 30);
	put_str(g, spec, "dnsPolicy", "ClusterFirst");
	put_str(g, spec, "serviceAccountName", "default");
	put_str(g, spec, "serviceAccount", "default");
	if (a->node)
		put_str(g, spec, "nodeName", a->node->name);
	put(g, spec, "securityContext", jobj(g));
	put_str(g, spec, "schedulerName", SCHEDULER);
	push(g, tols, toleration(g, "node.kubernetes.io/not-ready"));
	push(g, tols, toleration(g, "node.kubernetes.io/unreachable"));
	put(g, spec, "tolerations", tols);
	put_int(g, spec, "priority", 0);
	put_bool(g, spec, "enableServiceLinks", true);
	put_str(g, spec, "preemptionPolicy", "PreemptLowerPriority");
	if (a->pod_claim) {
		json_t *rcs = jarr(g), *rc = jobj(g);
		put_str(g, rc, "name", a->pod_claim);
		if (a->template_name)
			put_str(g, rc, "resourceClaimTemplateName", a->template_name);
		else
			put_str(g, rc, "resourceClaimName", a->claim_name);
		push(g, rcs, rc);
		put(g, spec, "resourceClaims", rcs);
	}
	put(g, p, "spec", spec);

	put_str(g, status, "phase", a->node ? "Running" : "Pending");
	if (a->node) {
		static const char *const types[] = { "PodReadyToStartContainers", "Initialized",
						     "Ready", "ContainersReady", "PodScheduled" };
		char ip[20], pip[20], key[3 * GEN_NAME_MAX], hex[65];
		json_t *conds = jarr(g), *hips = jarr(g), *hip = jobj(g), *pips = jarr(g),
		       *pipo = jobj(g), *css = jarr(g), *cs = jobj(g), *state = jobj(g),
		       *running = jobj(g);
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			push(g, conds, pod_condition(g, types[i]));
		put(g, status, "conditions", conds);
		node_ip(a->node, ip);
		pod_ip(a->node, a->pod_index, pip);
		put_str(g, status, "hostIP", ip);
		put_str(g, hip, "ip", ip);
		push(g, hips, hip);
		put(g, status, "hostIPs", hips);
		put_str(g, status, "podIP", pip);
		put_str(g, pipo, "ip", pip);
		push(g, pips, pipo);
		put(g, status, "podIPs", pips);
		put_str(g, status, "startTime", TS_RUNNING);
		put_str(g, cs, "name", "main");
		put_str(g, running, "startedAt", TS_STARTED);
		put(g, state, "running", running);
		put(g, cs, "state", state);
		put(g, cs, "lastState", jobj(g));
		put_bool(g, cs, "ready", true);
		put_int(g, cs, "restartCount", 0);
		put_str(g, cs, "image", a->image);
		snprintf(key, sizeof(key), "image/%s", a->image);
		hex_of(0, key, hex, 64);
		{
			char id[256];
			snprintf(id, sizeof(id), "%s@sha256:%s", a->image, hex);
			put_str(g, cs, "imageID", id);
		}
		snprintf(key, sizeof(key), "container/%s/%s", a->ns, a->name);
		hex_of(g->seed, key, hex, 64);
		{
			char id[96];
			snprintf(id, sizeof(id), "containerd://%s", hex);
			put_str(g, cs, "containerID", id);
		}
		put_bool(g, cs, "started", true);
		push(g, css, cs);
		put(g, status, "containerStatuses", css);
	}
	put_str(g, status, "qosClass", "Burstable");
	if (a->node && a->pod_claim && a->template_name) {
		json_t *rcss = jarr(g), *rcs = jobj(g);
		put_str(g, rcs, "name", a->pod_claim);
		put_str(g, rcs, "resourceClaimName", a->claim_name);
		push(g, rcss, rcs);
		put(g, status, "resourceClaimStatuses", rcss);
	}
	put(g, p, "status", status);
	push(g, g->pods, p);
}

void
gen_add_running(struct gen *g, struct gen_node *n, const struct gen_running *r)
{
	char pod_uid[37], job_uid[37], gen_name[2 * GEN_NAME_MAX], claim[2 * GEN_NAME_MAX + 8],
		sfx[6], key[3 * GEN_NAME_MAX];
	json_t *labels = jobj(g), *owners = NULL;

	uid_of(g, "Pod", r->ns, r->pod, pod_uid);
	snprintf(gen_name, sizeof(gen_name), "%s-%s-", r->pod, shape_pod_claim(r->shape));
	snprintf(key, sizeof(key), "claim/%s/%s", r->ns, gen_name);
	suffix_of(g, key, sfx);
	snprintf(claim, sizeof(claim), "%s%s", gen_name, sfx);

	if (r->job) {
		uid_of(g, "Job", r->ns, r->job, job_uid);
		put_str(g, labels, "batch.kubernetes.io/controller-uid", job_uid);
		put_str(g, labels, "batch.kubernetes.io/job-name", r->job);
		put_str(g, labels, "controller-uid", job_uid);
		put_str(g, labels, "job-name", r->job);
		owners = jarr(g);
		push(g, owners, owner_ref(g, "batch/v1", "Job", r->job, job_uid));
	}
	if (r->group)
		put_str(g, labels, "railfit.io/group", r->group);
	if (r->app)
		put_str(g, labels, "app.kubernetes.io/name", r->app);

	add_allocated_claim(g, n, r, claim, gen_name, pod_uid);
	add_pod(g, &(struct pod_args){ .ns = r->ns,
				       .name = r->pod,
				       .uid = pod_uid,
				       .image = r->image,
				       .cpu = "16",
				       .memory = "128Gi",
				       .labels = labels,
				       .owners = owners,
				       .node = n,
				       .pod_claim = shape_pod_claim(r->shape),
				       .claim_name = claim,
				       .template_name = r->template_name,
				       .pod_index = n->n_pods++ });
}

void
gen_add_plain_running(struct gen *g, struct gen_node *n, const struct gen_plain *p)
{
	char uid[37];
	json_t *labels = jobj(g), *ann = jobj(g);

	uid_of(g, "Pod", p->ns, p->pod, uid);
	put_str(g, labels, "app.kubernetes.io/name", p->app);
	if (p->egress)
		put_str(g, ann, "kubernetes.io/egress-bandwidth", p->egress);
	if (p->ingress)
		put_str(g, ann, "kubernetes.io/ingress-bandwidth", p->ingress);
	add_pod(g, &(struct pod_args){ .ns = p->ns,
				       .name = p->pod,
				       .uid = uid,
				       .image = p->image,
				       .cpu = "8",
				       .memory = "32Gi",
				       .labels = labels,
				       .annotations = ann,
				       .node = n,
				       .pod_index = n->n_pods++ });
}

void
gen_add_pending(struct gen *g, const struct gen_pending *p)
{
	char uid[37];
	json_t *labels = jobj(g), *ann = NULL;

	uid_of(g, "Pod", p->ns, p->pod, uid);
	if (p->app)
		put_str(g, labels, "app.kubernetes.io/name", p->app);
	if (p->group)
		put_str(g, labels, "railfit.io/group", p->group);
	if (p->egress || p->ingress || p->min_alignment) {
		ann = jobj(g);
		if (p->egress)
			put_str(g, ann, "kubernetes.io/egress-bandwidth", p->egress);
		if (p->ingress)
			put_str(g, ann, "kubernetes.io/ingress-bandwidth", p->ingress);
		if (p->min_alignment)
			put_str(g, ann, "railfit.io/min-alignment", p->min_alignment);
	}
	if (p->claim) {
		char cuid[37];
		json_t *c = jobj(g), *meta = jobj(g);
		uid_of(g, "ResourceClaim", p->ns, p->claim, cuid);
		put_str(g, c, "kind", "ResourceClaim");
		put_str(g, c, "apiVersion", "resource.k8s.io/v1");
		put_str(g, meta, "name", p->claim);
		put_str(g, meta, "namespace", p->ns);
		put_str(g, meta, "uid", cuid);
		next_rv(g, meta);
		put_str(g, meta, "creationTimestamp", TS_PENDING);
		put(g, c, "metadata", meta);
		put(g, c, "spec", claim_spec(g, p->shape, p->gpu_selector));
		put(g, c, "status", jobj(g));
		push(g, g->claims, c);
	}
	add_pod(g, &(struct pod_args){ .ns = p->ns,
				       .name = p->pod,
				       .uid = uid,
				       .image = p->image,
				       .cpu = p->cpu,
				       .memory = p->memory,
				       .labels = labels,
				       .annotations = ann,
				       .pod_claim = p->claim ? p->pod_claim : NULL,
				       .claim_name = p->claim });
}

/* ---- the List ---------------------------------------------------------------------------------
 */

void
gen_init(struct gen *g, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->seed = seed;
	g->nodes = jarr(g);
	g->pods = jarr(g);
	g->slices = jarr(g);
	g->claims = jarr(g);
	g->classes = jarr(g);
}

static const char *
meta_str(json_t *item, const char *key)
{
	const char *s = json_string_value(json_object_get(json_object_get(item, "metadata"), key));
	return s ? s : "";
}

static int
cmp_items(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(meta_str(x, "namespace"), meta_str(y, "namespace"));
	return c ? c : strcmp(meta_str(x, "name"), meta_str(y, "name"));
}

/* Appends @p kind's items to @p items in the API server's list order (namespace, name). */
static void
append_sorted(struct gen *g, json_t *items, json_t *kind)
{
	size_t n = json_array_size(kind);
	json_t **v;
	if (n == 0)
		return;
	v = malloc(n * sizeof(*v));
	if (!v) {
		g->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(kind, i);
	qsort(v, n, sizeof(*v), cmp_items);
	for (size_t i = 0; i < n; i++)
		if (json_array_append(items, v[i]) != 0)
			g->oom = true;
	free(v);
}

json_t *
gen_finish(struct gen *g)
{
	json_t *list = NULL, *meta, *items;

	if (g->oom)
		goto out;
	list = jobj(g);
	meta = jobj(g);
	items = jarr(g);
	put_str(g, list, "apiVersion", "v1");
	put_str(g, list, "kind", "List");
	put_str(g, meta, "resourceVersion", "");
	put(g, list, "metadata", meta);
	/* the order `kubectl get nodes,pods,resourceslices,resourceclaims,deviceclasses` prints */
	append_sorted(g, items, g->nodes);
	append_sorted(g, items, g->pods);
	append_sorted(g, items, g->slices);
	append_sorted(g, items, g->claims);
	append_sorted(g, items, g->classes);
	put(g, list, "items", items);
	if (g->oom) {
		json_decref(list);
		list = NULL;
	}
out:
	json_decref(g->nodes);
	json_decref(g->pods);
	json_decref(g->slices);
	json_decref(g->claims);
	json_decref(g->classes);
	memset(g, 0, sizeof(*g));
	return list;
}
