/* Tests of the CEL evaluator: the real selector shapes of dra-api.md section 11 against devices
 * built like the slices in reference/dra-examples/, CEL semantics (error absorption, equality,
 * overflow), the quantity and semver libraries, regexes, limits, unsupported constructs and their
 * positions, concurrent evaluation and the program cache. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/cel/attr.h"
#include "alloc/cel/cel.h"

Suite *cel_suite(void);

/* ---- devices -------------------------------------------------------------------------------- */

#define MAX_ATTRS 32

struct test_device {
	struct rf_attr attrs[MAX_ATTRS];
	struct rf_capacity caps[MAX_ATTRS];
	struct rf_cel_device dev;
};

enum {
	DEV_H100, /* gpu-0 of resourceslice-gpu-nvidia-8xh100.json */
	DEV_CX7,  /* pci-0000-18-00-0 of resourceslice-dranet-8xcx7-plus-frontend.json */
	DEV_MIG,  /* gpu-0-mig-1g10gb-19-0 of resourceslice-gpu-nvidia-mig-partitionable-k134 */
	DEV_H100_FULL, /* gpu-0 of the partitionable slice (with multiprocessors etc.) */
	DEV_NETBW,     /* a shared NIC with allowMultipleAllocations (KEP-5075) */
	DEV_OLD,       /* an NVIDIA v25.3-era GPU with index/minor and an unknown value kind */
	DEV_EMPTY,     /* no attributes, no capacity */
	DEV_COUNT,
};

static struct test_device devices[DEV_COUNT];

static int
attr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rf_attr *)a)->name, ((const struct rf_attr *)b)->name);
}

static int
cap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rf_capacity *)a)->name, ((const struct rf_capacity *)b)->name);
}

static void
add_str(struct test_device *d, const char *name, const char *s)
{
	d->attrs[d->dev.n_attrs++] =
		(struct rf_attr){ .name = name, .kind = RF_ATTR_STRING, .s = s };
}

static void
add_ver(struct test_device *d, const char *name, const char *s)
{
	d->attrs[d->dev.n_attrs++] =
		(struct rf_attr){ .name = name, .kind = RF_ATTR_VERSION, .s = s };
}

static void
add_int(struct test_device *d, const char *name, int64_t i)
{
	d->attrs[d->dev.n_attrs++] = (struct rf_attr){ .name = name, .kind = RF_ATTR_INT, .i = i };
}

static void
add_bool(struct test_device *d, const char *name, bool b)
{
	d->attrs[d->dev.n_attrs++] = (struct rf_attr){ .name = name, .kind = RF_ATTR_BOOL, .b = b };
}

static void
add_cap(struct test_device *d, const char *name, const char *q)
{
	struct rf_capacity *c = &d->caps[d->dev.n_caps++];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->raw_name = strchr(name, '/') + 1;
	ck_assert_int_eq(rf_quantity_parse(q, &c->value), 0);
}

static void
finish(struct test_device *d, const char *driver)
{
	d->dev.driver = driver;
	d->dev.attrs = d->attrs;
	d->dev.caps = d->caps;
	qsort(d->attrs, d->dev.n_attrs, sizeof(d->attrs[0]), attr_cmp);
	qsort(d->caps, d->dev.n_caps, sizeof(d->caps[0]), cap_cmp);
}

static void
nvidia_common(struct test_device *d)
{
	add_str(d, "gpu.nvidia.com/addressingMode", "HMM");
	add_str(d, "gpu.nvidia.com/architecture", "Hopper");
	add_str(d, "gpu.nvidia.com/brand", "Nvidia");
	add_ver(d, "gpu.nvidia.com/cudaComputeCapability", "9.0.0");
	add_ver(d, "gpu.nvidia.com/cudaDriverVersion", "13.0.0");
	add_ver(d, "gpu.nvidia.com/driverVersion", "580.126.9");
	add_str(d, "gpu.nvidia.com/productName", "NVIDIA H100 80GB HBM3");
	add_str(d, "resource.kubernetes.io/pciBusID", "0000:1b:00.0");
	add_str(d, "resource.kubernetes.io/pcieRoot", "pci0000:15");
}

static void
build_devices(void)
{
	struct test_device *d;
	memset(devices, 0, sizeof(devices));

	d = &devices[DEV_H100];
	nvidia_common(d);
	add_str(d, "gpu.nvidia.com/type", "gpu");
	add_str(d, "gpu.nvidia.com/uuid", "GPU-3f1b2c4d-8e9a-4b7c-a1d2-5e6f7a8b9c01");
	add_cap(d, "gpu.nvidia.com/memory", "81559Mi");
	finish(d, "gpu.nvidia.com");

	d = &devices[DEV_CX7];
	add_str(d, "dra.net/alias", "");
	add_bool(d, "dra.net/ebpf", false);
	add_str(d, "dra.net/encapsulation", "ether");
	add_str(d, "dra.net/ifName", "enp24s0np0");
	add_str(d, "dra.net/ipv4", "10.100.0.21/24");
	add_str(d, "dra.net/mac", "b8:3f:d2:4a:10:00");
	add_int(d, "dra.net/mtu", 9000);
	add_int(d, "dra.net/numaNode", 0);
	add_str(d, "dra.net/pciAddress", "0000:18:00.0");
	add_str(d, "dra.net/pciDevice", "MT2910 Family [ConnectX-7]");
	add_str(d, "dra.net/pciSubsystem", "0040");
	add_str(d, "dra.net/pciVendor", "Mellanox Technologies");
	add_bool(d, "dra.net/rdma", true);
	add_str(d, "dra.net/rdmaDevice", "mlx5_0");
	add_bool(d, "dra.net/sriov", true);
	add_int(d, "dra.net/sriovVfs", 0);
	add_str(d, "dra.net/state", "up");
	add_str(d, "dra.net/type", "device");
	add_bool(d, "dra.net/virtual", false);
	add_str(d, "resource.kubernetes.io/pcieRoot", "pci0000:15");
	finish(d, "dra.net");

	d = &devices[DEV_MIG];
	nvidia_common(d);
	add_str(d, "gpu.nvidia.com/parentUUID", "GPU-3f1b2c4d-8e9a-4b7c-a1d2-5e6f7a8b9c01");
	add_str(d, "gpu.nvidia.com/profile", "1g.10gb");
	add_str(d, "gpu.nvidia.com/type", "mig");
	add_cap(d, "gpu.nvidia.com/copyEngines", "1");
	add_cap(d, "gpu.nvidia.com/decoders", "1");
	add_cap(d, "gpu.nvidia.com/encoders", "0");
	add_cap(d, "gpu.nvidia.com/jpegEngines", "1");
	add_cap(d, "gpu.nvidia.com/memory", "9984Mi");
	add_cap(d, "gpu.nvidia.com/multiprocessors", "16");
	add_cap(d, "gpu.nvidia.com/ofaEngines", "0");
	finish(d, "gpu.nvidia.com");

	d = &devices[DEV_H100_FULL];
	nvidia_common(d);
	add_str(d, "gpu.nvidia.com/type", "gpu");
	add_str(d, "gpu.nvidia.com/uuid", "GPU-3f1b2c4d-8e9a-4b7c-a1d2-5e6f7a8b9c01");
	add_cap(d, "gpu.nvidia.com/copyEngines", "8");
	add_cap(d, "gpu.nvidia.com/decoders", "7");
	add_cap(d, "gpu.nvidia.com/encoders", "0");
	add_cap(d, "gpu.nvidia.com/jpegEngines", "7");
	add_cap(d, "gpu.nvidia.com/memory", "81152Mi");
	add_cap(d, "gpu.nvidia.com/multiprocessors", "132");
	add_cap(d, "gpu.nvidia.com/ofaEngines", "1");
	finish(d, "gpu.nvidia.com");

	d = &devices[DEV_NETBW];
	add_str(d, "netbw.example.com/ifName", "eth1");
	add_cap(d, "netbw.example.com/bandwidth", "400G");
	d->dev.allow_multiple_allocations = true;
	finish(d, "netbw.example.com");

	d = &devices[DEV_OLD];
	nvidia_common(d);
	add_str(d, "gpu.nvidia.com/type", "gpu");
	add_int(d, "gpu.nvidia.com/index", 3);
	add_int(d, "gpu.nvidia.com/minor", 3);
	add_str(d, "gpu.nvidia.com/pcieBusID", "0000:1b:00.0");
	d->attrs[d->dev.n_attrs++] =
		(struct rf_attr){ .name = "gpu.nvidia.com/numas", .kind = RF_ATTR_OTHER };
	add_cap(d, "gpu.nvidia.com/memory", "80Gi");
	finish(d, "gpu.nvidia.com");

	finish(&devices[DEV_EMPTY], "empty.example.com");
}

/* ---- evaluation table ----------------------------------------------------------------------- */

#define ERR (-EINVAL)

struct eval_case {
	const char *expr;
	int dev;
	int want;             /* 1, 0 or ERR (runtime error) */
	const char *err_part; /* substring of the runtime error message */
};

static const struct eval_case eval_cases[] = {
	/* DeviceClass and claim selectors from reference/dra-examples */
	{ "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
	  DEV_H100, 1, NULL },
	{ "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
	  DEV_MIG, 0, NULL },
	{ "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
	  DEV_CX7, 0, NULL },
	{ "device.driver == 'dra.net' && device.attributes['dra.net'].rdma == true", DEV_CX7, 1,
	  NULL },
	{ "device.driver == 'dra.net' && device.attributes['dra.net'].rdma == true", DEV_H100, 0,
	  NULL },
	{ "device.driver == 'netbw.example.com' && device.allowMultipleAllocations == true",
	  DEV_NETBW, 1, NULL },
	{ "device.driver == 'netbw.example.com' && device.allowMultipleAllocations == true",
	  DEV_CX7, 0, NULL },
	/* dra-api.md section 11 shapes */
	{ "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$')",
	  DEV_H100, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')",
	  DEV_H100, 0, NULL },
	{ "device.attributes[\"gpu.nvidia.com\"].driverVersion.compareTo(semver(\"580.0.0\")) >= 0",
	  DEV_H100, 1, NULL },
	{ "device.attributes[\"gpu.nvidia.com\"].driverVersion.compareTo(semver(\"580.127.0\")) >= 0",
	  DEV_H100, 0, NULL },
	{ "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity(\"40Gi\")) >= 0", DEV_H100,
	  1, NULL },
	{ "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity(\"40Gi\")) >= 0", DEV_MIG, 0,
	  NULL },
	{ "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"50\"))",
	  DEV_H100_FULL, 1, NULL },
	{ "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"50\"))",
	  DEV_MIG, 0, NULL },
	{ "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"50\"))",
	  DEV_H100, ERR, "no such key: multiprocessors" },
	{ "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", DEV_MIG, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].type == 'mig'", DEV_MIG, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", DEV_H100, ERR,
	  "no such key: profile" },
	{ "device.attributes[\"dra.net\"].rdma == true", DEV_CX7, 1, NULL },
	{ "device.attributes[\"dra.net\"].rdma == true && device.attributes[\"dra.net\"].numaNode == 0",
	  DEV_CX7, 1, NULL },
	{ "device.attributes[\"dra.net\"].rdma == true && device.attributes[\"dra.net\"].numaNode == 1",
	  DEV_CX7, 0, NULL },
	{ "device.attributes[\"resource.kubernetes.io\"][\"pciBusID\"] in [\"0001:00:00.0\", "
	  "\"0000:1b:00.0\"]",
	  DEV_H100, 1, NULL },
	{ "device.attributes[\"resource.kubernetes.io\"][\"pciBusID\"] in [\"0001:00:00.0\"]",
	  DEV_H100, 0, NULL },
	{ "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'", DEV_CX7, 0,
	  NULL },
	{ "device.attributes[\"dra.net\"].pciDevice == 'MT2910 Family [ConnectX-7]'", DEV_CX7, 1,
	  NULL },
	{ "device.allowMultipleAllocations == true", DEV_NETBW, 1, NULL },
	{ "device.allowMultipleAllocations == true", DEV_H100, 0, NULL },
	{ "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:15'", DEV_CX7, 1,
	  NULL },
	{ "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:15'", DEV_H100, 1,
	  NULL },
	{ "device.attributes['gpu.nvidia.com'].parentUUID == "
	  "'GPU-3f1b2c4d-8e9a-4b7c-a1d2-5e6f7a8b9c01'",
	  DEV_MIG, 1, NULL },
	{ "device.attributes['dra.net'].mtu >= 9000 && device.attributes['dra.net'].ifName"
	  ".startsWith('enp')",
	  DEV_CX7, 1, NULL },
	{ "device.attributes['dra.net'].rdmaDevice.matches('^mlx5_[0-9]+$')", DEV_CX7, 1, NULL },
	{ "device.capacity['netbw.example.com'].bandwidth.isGreaterThan(quantity('100G'))",
	  DEV_NETBW, 1, NULL },
	{ "device.capacity['gpu.nvidia.com'].memory == quantity('81559Mi')", DEV_H100, 1, NULL },
	{ "device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('80Gi'))", DEV_H100, 1,
	  NULL },
	{ "device.capacity['gpu.nvidia.com'].memory.asInteger() == 81559 * 1024 * 1024", DEV_H100,
	  1, NULL },
	/* missing attribute: a runtime error; guarded: false */
	{ "device.attributes['gpu.nvidia.com'].index == 0", DEV_H100, ERR, "no such key: index" },
	{ "device.attributes['gpu.nvidia.com'].index == 3", DEV_OLD, 1, NULL },
	{ "has(device.attributes['gpu.nvidia.com'].index) && "
	  "device.attributes['gpu.nvidia.com'].index == 0",
	  DEV_H100, 0, NULL },
	{ "'index' in device.attributes['gpu.nvidia.com'] && "
	  "device.attributes['gpu.nvidia.com'].index == 3",
	  DEV_OLD, 1, NULL },
	{ "'index' in device.attributes['gpu.nvidia.com']", DEV_H100, 0, NULL },
	{ "has(device.attributes['gpu.nvidia.com'].productName)", DEV_H100, 1, NULL },
	{ "has(device.capacity['gpu.nvidia.com'].memory)", DEV_H100, 1, NULL },
	{ "has(device.capacity['gpu.nvidia.com'].multiprocessors)", DEV_H100, 0, NULL },
	{ "device.attributes['gpu.nvidia.com']['productName'] == 'NVIDIA H100 80GB HBM3'", DEV_H100,
	  1, NULL },
	/* unknown domain: an empty map */
	{ "size(device.attributes['nvidia.com']) == 0", DEV_H100, 1, NULL },
	{ "device.attributes['nvidia.com'].size() == 0", DEV_H100, 1, NULL },
	{ "device.attributes['nvidia.com'].productName == 'x'", DEV_H100, ERR,
	  "no such key: productName" },
	{ "has(device.attributes['nvidia.com'].productName)", DEV_H100, 0, NULL },
	{ "'gpu.nvidia.com' in device.attributes", DEV_H100, 1, NULL },
	{ "'dra.net' in device.attributes", DEV_H100, 0, NULL },
	{ "has(device.attributes.x)", DEV_H100, 0, NULL },
	{ "size(device.attributes) == 2 && size(device.capacity) == 1", DEV_H100, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].size() == 9", DEV_H100, 1, NULL },
	{ "device.attributes['dra.net'].size() == 19", DEV_CX7, 1, NULL },
	{ "device.capacity['gpu.nvidia.com'].size() == 7", DEV_MIG, 1, NULL },
	{ "size(device.attributes) == 0 && device.attributes['a'] == device.capacity['b']",
	  DEV_EMPTY, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'] == device.attributes['gpu.nvidia.com']", DEV_H100, 1,
	  NULL },
	{ "device.attributes['gpu.nvidia.com'] == device.attributes['resource.kubernetes.io']",
	  DEV_H100, 0, NULL },
	{ "device.attributes == device.attributes", DEV_MIG, 1, NULL },
	/* an attribute of a value kind this build does not know */
	{ "device.attributes['gpu.nvidia.com'].numas == 1", DEV_OLD, ERR,
	  "unsupported attribute value type" },
	{ "has(device.attributes['gpu.nvidia.com'].numas)", DEV_OLD, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].type == 'gpu'", DEV_OLD, 1, NULL },
	/* && and || absorb errors in both orders */
	{ "device.attributes['gpu.nvidia.com'].index == 0 && false", DEV_H100, 0, NULL },
	{ "false && device.attributes['gpu.nvidia.com'].index == 0", DEV_H100, 0, NULL },
	{ "device.attributes['gpu.nvidia.com'].index == 0 || true", DEV_H100, 1, NULL },
	{ "true || device.attributes['gpu.nvidia.com'].index == 0", DEV_H100, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].index == 0 && true", DEV_H100, ERR,
	  "no such key: index" },
	{ "true && device.attributes['gpu.nvidia.com'].index == 0", DEV_H100, ERR,
	  "no such key: index" },
	{ "device.attributes['gpu.nvidia.com'].index == 0 || false", DEV_H100, ERR,
	  "no such key: index" },
	{ "false || device.attributes['gpu.nvidia.com'].index == 0", DEV_H100, ERR,
	  "no such key: index" },
	{ "device.driver == 'dra.net' && device.attributes['dra.net'].rdma", DEV_H100, 0, NULL },
	{ "device.attributes['dra.net'].rdma && device.driver == 'dra.net'", DEV_H100, 0, NULL },
	{ "1/0 == 1 || 2/0 == 1 || true", DEV_EMPTY, 1, NULL },
	{ "1/0 == 1 || 2/0 == 1 || false", DEV_EMPTY, ERR, "division by zero" },
	{ "1 && false", DEV_EMPTY, 0, NULL },
	{ "1 && true", DEV_EMPTY, ERR, "no such overload" },
	{ "'x' || true", DEV_EMPTY, 1, NULL },
	{ "true && true && true && !false", DEV_EMPTY, 1, NULL },
	/* the ternary evaluates only the chosen branch */
	{ "true ? true : 1/0 == 1", DEV_EMPTY, 1, NULL },
	{ "false ? 1/0 == 1 : true", DEV_EMPTY, 1, NULL },
	{ "has(device.attributes['gpu.nvidia.com'].index) ? "
	  "device.attributes['gpu.nvidia.com'].index == 0 : true",
	  DEV_H100, 1, NULL },
	{ "1 ? true : false", DEV_EMPTY, ERR, "no such overload" },
	{ "true ? false : true ? true : true", DEV_EMPTY, 0, NULL },
	{ "(false ? 1 : 2) == 2", DEV_EMPTY, 1, NULL },
	/* equality and ordering across types */
	{ "device.driver == 1", DEV_H100, 0, NULL },
	{ "device.driver != 1", DEV_H100, 1, NULL },
	{ "device.driver < 1", DEV_H100, ERR, "no such overload: string < int" },
	{ "device.attributes['dra.net'].mtu > 'a'", DEV_CX7, ERR,
	  "no such overload: int > string" },
	{ "device.attributes['dra.net'].mtu == '9000'", DEV_CX7, 0, NULL },
	{ "device.attributes['dra.net'].mtu == 9000.0 && device.attributes['dra.net'].mtu == 9000u",
	  DEV_CX7, 1, NULL },
	{ "1 == 1.0 && 1 == 1u && 1u == 1.0 && 2 != 2.5", DEV_EMPTY, 1, NULL },
	{ "-1 < 1u && 1u > -1 && 2 < 2.5 && 3.5 > 3 && 1u <= 1.0", DEV_EMPTY, 1, NULL },
	{ "9223372036854775807 < 9223372036854775808.0", DEV_EMPTY, 1, NULL },
	{ "18446744073709551615u > 9223372036854775807", DEV_EMPTY, 1, NULL },
	{ "null == null && !(null == 1) && device.driver != null", DEV_H100, 1, NULL },
	{ "[1, 'a'] == [1, 'a'] && [1, 2] != [2, 1] && [1] == [1.0]", DEV_EMPTY, 1, NULL },
	{ "'a' < 'b' && 'ab' > 'a' && 'é' > 'z' && false < true", DEV_EMPTY, 1, NULL },
	{ "[1] < [2]", DEV_EMPTY, ERR, "no such overload" },
	{ "0.0/0.0 < 1.0", DEV_EMPTY, ERR, "NaN" },
	{ "0.0/0.0 != 0.0/0.0", DEV_EMPTY, 1, NULL },
	{ "1 in [1.0, 2]", DEV_EMPTY, 1, NULL },
	{ "3 in [1, 2]", DEV_EMPTY, 0, NULL },
	{ "'a' in ['b', 'a']", DEV_EMPTY, 1, NULL },
	{ "1 in 'abc'", DEV_EMPTY, ERR, "no such overload" },
	/* arithmetic and overflow */
	{ "1 + 2 * 3 == 7 && (1 + 2) * 3 == 9 && 7 / 2 == 3 && 7 % 4 == 3", DEV_EMPTY, 1, NULL },
	{ "-7 / 2 == -3 && -7 % 3 == -1 && 10 - 2 - 3 == 5 && 100 / 10 / 5 == 2", DEV_EMPTY, 1,
	  NULL },
	{ "9223372036854775807 + 1 > 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "-9223372036854775808 - 1 < 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "-9223372036854775808 < 0", DEV_EMPTY, 1, NULL },
	{ "-9223372036854775808 / -1 < 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "-9223372036854775808 % -1 == 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "4611686018427387904 * 2 > 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "-(-9223372036854775808) > 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "1 / 0 == 0", DEV_EMPTY, ERR, "division by zero" },
	{ "1 % 0 == 0", DEV_EMPTY, ERR, "modulus by zero" },
	{ "1u - 2u == 0u", DEV_EMPTY, ERR, "unsigned integer overflow" },
	{ "18446744073709551615u + 1u == 0u", DEV_EMPTY, ERR, "unsigned integer overflow" },
	{ "5u / 2u == 2u && 5u % 2u == 1u", DEV_EMPTY, 1, NULL },
	{ "1u / 0u == 0u", DEV_EMPTY, ERR, "division by zero" },
	{ "1.0 / 0.0 > 1e308 && 0.5 + 0.25 == 0.75 && 2.0 * 3.0 == 6.0", DEV_EMPTY, 1, NULL },
	{ "1 + 1u == 2", DEV_EMPTY, ERR, "no such overload: int + uint" },
	{ "1 + 1.0 == 2", DEV_EMPTY, ERR, "no such overload: int + double" },
	{ "1.5 % 1.0 == 0.5", DEV_EMPTY, ERR, "no such overload" },
	{ "-1u == 1u", DEV_EMPTY, ERR, "no such overload: -uint" },
	{ "-(1.5) == -1.5 && --1 == 1 && -(-2) == 2", DEV_EMPTY, 1, NULL },
	{ "!true == false && !!true", DEV_EMPTY, 1, NULL },
	{ "!1", DEV_EMPTY, ERR, "no such overload: !int" },
	{ "0x10 == 16 && 0xFFu == 255u && 1e3 == 1000.0 && .5 == 0.5 && 2.5e-1 == 0.25", DEV_EMPTY,
	  1, NULL },
	/* strings */
	{ "'a' + 'b' == 'ab' && 'a' + '' == 'a'", DEV_EMPTY, 1, NULL },
	{ "device.driver + '/x' == 'gpu.nvidia.com/x'", DEV_H100, 1, NULL },
	{ "'a' + 1 == 'a1'", DEV_EMPTY, ERR, "no such overload: string + int" },
	{ "[1] + [2, 3] == [1, 2, 3] && [] + [] == []", DEV_EMPTY, 1, NULL },
	{ "'日本語'.size() == 3 && size('日本語') == 3 && size('') == 0", DEV_EMPTY, 1, NULL },
	{ "'ÀbC'.lowerAscii() == 'Àbc' && 'àbC'.upperAscii() == 'àBC'", DEV_EMPTY, 1, NULL },
	{ "'\\u00e9' == 'é' && '\\xe9' == 'é' && '\\351' == 'é' && '\\U0001F600'.size() == 1",
	  DEV_EMPTY, 1, NULL },
	{ "'\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\`\\?'.size() == 12", DEV_EMPTY, 1, NULL },
	{ "r'\\n'.size() == 2 && R\"\\d\" == '\\\\d'", DEV_EMPTY, 1, NULL },
	{ "'''x''x''' == \"x''x\" && \"\"\"a\nb\"\"\".size() == 3 && '\"\"' == \"\\\"\\\"\"",
	  DEV_EMPTY, 1, NULL },
	{ "'abc'.startsWith('ab') && 'abc'.endsWith('bc') && 'abc'.contains('b') && "
	  "'abc'.contains('') && !'abc'.contains('abcd')",
	  DEV_EMPTY, 1, NULL },
	{ "'abc'.startsWith(1)", DEV_EMPTY, ERR, "no such overload: string.startsWith(int)" },
	{ "1.startsWith('a')", DEV_EMPTY, ERR, "no such overload" },
	{ "size(1) == 1", DEV_EMPTY, ERR, "no such overload: size(int)" },
	{ "[1, 2, [3]].size() == 3 && size([]) == 0", DEV_EMPTY, 1, NULL },
	{ "[1, 2, 3][1] == 2 && [1, 2][1u] == 2 && ['a', ['b']][1][0] == 'b'", DEV_EMPTY, 1, NULL },
	{ "[1][5] == 1", DEV_EMPTY, ERR, "index out of range: 5" },
	{ "[1][-1] == 1", DEV_EMPTY, ERR, "index out of range: -1" },
	{ "'abc'[0] == 'a'", DEV_EMPTY, ERR, "no such overload" },
	{ "device.driver.x == 1", DEV_H100, ERR, "field selection" },
	/* conversions */
	{ "int('42') == 42 && int('-9223372036854775808') < 0 && int(2.9) == 2 && int(-2.9) == -2 "
	  "&& int(7u) == 7",
	  DEV_EMPTY, 1, NULL },
	{ "int('4x') == 4", DEV_EMPTY, ERR, "invalid syntax" },
	{ "int('9223372036854775808') > 0", DEV_EMPTY, ERR, "out of range" },
	{ "int(18446744073709551615u) > 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "int(1e19) > 0", DEV_EMPTY, ERR, "integer overflow" },
	{ "uint(-1) > 0u", DEV_EMPTY, ERR, "unsigned integer overflow" },
	{ "uint('42') == 42u && uint(42) == 42u && uint(2.5) == 2u", DEV_EMPTY, 1, NULL },
	{ "uint('-1') == 1u", DEV_EMPTY, ERR, "invalid syntax" },
	{ "double('1.5') == 1.5 && double(2) == 2.0 && double(3u) == 3.0 && double('1e3') == 1000.0",
	  DEV_EMPTY, 1, NULL },
	{ "double('abc') == 1.0", DEV_EMPTY, ERR, "invalid syntax" },
	{ "string(42) == '42' && string(-1) == '-1' && string(7u) == '7' && string(true) == 'true' "
	  "&& string('x') == 'x'",
	  DEV_EMPTY, 1, NULL },
	{ "string(1.5) == '1.5' && string(1e6) == '1e+06' && string(123456.0) == '123456' && "
	  "string(0.1) == '0.1' && string(1e-5) == '1e-05' && string(100.0) == '100'",
	  DEV_EMPTY, 1, NULL },
	{ "string(quantity('1')) == '1'", DEV_EMPTY, ERR, "type conversion error" },
	{ "bool('true') && !bool('False') && bool(true) && bool('1')", DEV_EMPTY, 1, NULL },
	{ "bool('yes')", DEV_EMPTY, ERR, "invalid syntax" },
	{ "dyn(1) == 1 && dyn('a') == 'a'", DEV_EMPTY, 1, NULL },
	{ "int(device.attributes['dra.net'].ifName.size()) == 10", DEV_CX7, 1, NULL },
	/* quantity library */
	{ "quantity('1Gi') == quantity('1024Mi') && quantity('1') == quantity('1000m')", DEV_EMPTY,
	  1, NULL },
	{ "quantity('200M').compareTo(quantity('0.2G')) == 0 && "
	  "quantity('50M').compareTo(quantity('50Mi')) == -1 && "
	  "quantity('50Mi').compareTo(quantity('50M')) == 1",
	  DEV_EMPTY, 1, NULL },
	{ "quantity('150Mi').isGreaterThan(quantity('100Mi')) && "
	  "!quantity('50Mi').isGreaterThan(quantity('100Mi')) && "
	  "quantity('50M').isLessThan(quantity('100M'))",
	  DEV_EMPTY, 1, NULL },
	{ "quantity('50k').asInteger() == 50000 && quantity('50k').isInteger() && "
	  "!quantity('1.5').isInteger() && quantity('50000000G').isInteger()",
	  DEV_EMPTY, 1, NULL },
	{ "quantity('1.5').asInteger() == 1", DEV_EMPTY, ERR, "cannot convert value to integer" },
	{ "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", DEV_EMPTY,
	  1, NULL },
	{ "quantity('50k').add(quantity('20k')) == quantity('70k') && "
	  "quantity('50k').sub(20000).asApproximateFloat() == 30000.0",
	  DEV_EMPTY, 1, NULL },
	{ "quantity('100m').sign() == 1 && sign(quantity('-1')) == -1 && quantity('0').sign() == 0",
	  DEV_EMPTY, 1, NULL },
	{ "isQuantity('1.3G') && isQuantity('1.3Gi') && !isQuantity('1,3G') && "
	  "isQuantity('10000k') && !isQuantity('200K') && !isQuantity('Three') && !isQuantity('Mi')",
	  DEV_EMPTY, 1, NULL },
	{ "quantity('200K') == quantity('200k')", DEV_EMPTY, ERR, "invalid quantity \"200K\"" },
	{ "quantity(device.driver).sign() == 1", DEV_H100, ERR, "invalid quantity" },
	{ "quantity('Three').sign() == 1 || true", DEV_EMPTY, 1, NULL },
	{ "quantity('1') == '1'", DEV_EMPTY, ERR, "no such overload: quantity == string" },
	{ "'1' == quantity('1')", DEV_EMPTY, 0, NULL },
	{ "quantity('1') == null", DEV_EMPTY, 0, NULL },
	{ "quantity('1') < quantity('2')", DEV_EMPTY, ERR,
	  "no such overload: quantity < quantity" },
	{ "quantity('1').compareTo(semver('1.0.0')) == 0", DEV_EMPTY, ERR, "no such overload" },
	{ "quantity('1').add('1') == quantity('2')", DEV_EMPTY, ERR, "no such overload" },
	{ "quantity('1').major() == 1", DEV_EMPTY, ERR, "no such overload: quantity.major()" },
	/* semver library */
	{ "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1')) && "
	  "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta')) && "
	  "semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta')) && "
	  "semver('1.0.0-beta').isLessThan(semver('1.0.0-beta.2')) && "
	  "semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11')) && "
	  "semver('1.0.0-beta.11').isLessThan(semver('1.0.0-rc.1')) && "
	  "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
	  DEV_EMPTY, 1, NULL },
	{ "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && "
	  "semver('1.2.3').patch() == 3",
	  DEV_EMPTY, 1, NULL },
	{ "semver('1.0.0+build.5') == semver('1.0.0') && semver('2.0.0') != semver('2.0.1')",
	  DEV_EMPTY, 1, NULL },
	{ "semver('1.10.0').isGreaterThan(semver('1.9.0')) && "
	  "semver('1.9.0').compareTo(semver('1.10.0')) == -1",
	  DEV_EMPTY, 1, NULL },
	{ "semver('01.0.0') == semver('1.0.0')", DEV_EMPTY, ERR, "leading zeroes" },
	{ "semver('v1.0.0') == semver('1.0.0')", DEV_EMPTY, ERR, "invalid semantic version" },
	{ "semver('1.0') == semver('1.0.0')", DEV_EMPTY, ERR, "invalid semantic version" },
	{ "semver('1.0.0-01') == semver('1.0.0')", DEV_EMPTY, ERR, "leading zeroes" },
	{ "semver('v1.0', true) == semver('1.0.0') && semver('01.01.01', true) == semver('1.1.1')",
	  DEV_EMPTY, 1, NULL },
	{ "isSemver('1.0.0') && !isSemver('hello') && !isSemver('v1.0') && isSemver('v1.0', true) "
	  "&& isSemver('1.0.0-rc.1+b') && !isSemver('1.0.0-') && !isSemver('1.0.0+')",
	  DEV_EMPTY, 1, NULL },
	{ "semver('1.0', true) == semver('1.0.0-rc', true)", DEV_EMPTY, 0, NULL },
	{ "semver('1.0-rc', true) == semver('1.0.0')", DEV_EMPTY, ERR, "short version" },
	{ "device.attributes['gpu.nvidia.com'].driverVersion.major() == 580 && "
	  "device.attributes['gpu.nvidia.com'].driverVersion.patch() == 9",
	  DEV_H100, 1, NULL },
	{ "device.attributes['gpu.nvidia.com'].driverVersion == semver('580.126.9')", DEV_H100, 1,
	  NULL },
	{ "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('580.126.10'))",
	  DEV_H100, 0, NULL },
	{ "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('10.0.0'))",
	  DEV_H100, 1, NULL },
	/* a version is not a string: Kubernetes raises "no such overload" for == */
	{ "device.attributes['gpu.nvidia.com'].driverVersion == '580.126.9'", DEV_H100, ERR,
	  "no such overload: semver == string" },
	{ "device.attributes['gpu.nvidia.com'].driverVersion in ['580.126.9']", DEV_H100, 0, NULL },
	{ "device.attributes['gpu.nvidia.com'].driverVersion.compareTo(quantity('1')) == 0",
	  DEV_H100, ERR, "no such overload: semver.compareTo(quantity)" },
	/* regular expressions (RE2 syntax) */
	{ "'abc'.matches('b') && !'abc'.matches('^b') && matches('abc', 'c$')", DEV_EMPTY, 1,
	  NULL },
	{ "'a1b22'.matches('^a\\\\d+b\\\\d{2}$') && 'x_9'.matches('^\\\\w+$') && "
	  "'a b'.matches('a\\\\sb') && !'ab'.matches('a\\\\sb') && '12'.matches('^\\\\D*\\\\d+$')",
	  DEV_EMPTY, 1, NULL },
	{ "'a.b'.matches(r'^a\\.b$') && !'axb'.matches(r'^a\\.b$') && 'a+b'.matches(r'a\\+b')",
	  DEV_EMPTY, 1, NULL },
	{ "'NVIDIA H100'.matches('(?i)^nvidia h100$') && !'NVIDIA H100'.matches('^nvidia')",
	  DEV_EMPTY, 1, NULL },
	{ "'aaa'.matches('^a+?$') && 'aaa'.matches('^a*?a$') && 'ab'.matches('^a??b$')", DEV_EMPTY,
	  1, NULL },
	{ "'abc'.matches('^(?:a|x)(?P<n>b)c$') && 'xbc'.matches('^(?:a|x)(?<n>b)c$')", DEV_EMPTY, 1,
	  NULL },
	{ "!'a\\nb'.matches('a.b') && 'a\\nb'.matches('(?s)a.b') && 'a\\nb'.matches('a\\nb')",
	  DEV_EMPTY, 1, NULL },
	{ "'é'.matches('^.$') && 'é'.matches('^[à-ê]$') && !'e'.matches('^[à-ê]$') && "
	  "'日本'.matches('^日+本$') && 'é'.matches('^[^a]$')",
	  DEV_EMPTY, 1, NULL },
	{ "']'.matches('^[]a]$') && '-'.matches('^[a-]$') && '^'.matches('^[\\\\^x]$') && "
	  "'['.matches('^[[]$') && '\\\\'.matches(r'^[\\\\]$') && 'b'.matches('^[^]a]$')",
	  DEV_EMPTY, 1, NULL },
	{ "'x'.matches('^[[:alpha:]]$') && !'1'.matches('^[[:alpha:]]$') && "
	  "'7'.matches('^[[:digit:][:upper:]]$') && 'a{b'.matches('a{b') && "
	  "'a}'.matches('a}') && 'aa'.matches('^a{2}$') && !'aaa'.matches('^a{2}$') && "
	  "'aaa'.matches('^a{2,}$') && 'a'.matches('^a{1,3}$')",
	  DEV_EMPTY, 1, NULL },
	{ "'a.b'.matches('^\\\\Qa.b\\\\E$') && !'axb'.matches('^\\\\Qa.b\\\\E$') && "
	  "'A'.matches('^\\\\x41$') && 'A'.matches('^\\\\x{41}$') && 'A'.matches('\\\\101')",
	  DEV_EMPTY, 1, NULL },
	{ "'ab'.matches('^(a|)b$') && 'b'.matches('^(a|)b$') && ''.matches('') && "
	  "'x'.matches('^\\\\Ax\\\\z$')",
	  DEV_EMPTY, 1, NULL },
	{ "'abc'.matches(device.driver)", DEV_EMPTY, 0, NULL },
	{ "'abc'.matches('(' + device.driver)", DEV_EMPTY, ERR, "invalid regular expression" },
	{ "'abc'.matches('\\\\bx' + device.driver)", DEV_EMPTY, ERR,
	  "unsupported regular expression" },
	{ "'abc'.matches(1)", DEV_EMPTY, ERR, "no such overload" },
	/* results that are not bool */
	{ "1 + 2", DEV_EMPTY, ERR, "expression did not evaluate to a bool" },
	{ "device.driver", DEV_H100, ERR, "expression did not evaluate to a bool (got string)" },
	{ "null", DEV_EMPTY, ERR, "did not evaluate to a bool" },
	{ "device.attributes['gpu.nvidia.com']", DEV_H100, ERR,
	  "did not evaluate to a bool (got map)" },
	/* comments and whitespace */
	{ "// a selector\ndevice.driver == 'gpu.nvidia.com' // trailing\n", DEV_H100, 1, NULL },
	{ "\t device.driver\r\n==\f'dra.net' ", DEV_CX7, 1, NULL },
	{ ".device.driver == 'dra.net'", DEV_CX7, 1, NULL },
	{ "has(device.driver) && has(device.allowMultipleAllocations)", DEV_EMPTY, 1, NULL },
	{ "[1, 2, ][1] == 2", DEV_EMPTY, 1, NULL },
	/* reserved words are valid field names */
	{ "device.attributes['gpu.nvidia.com'].namespace == 'x'", DEV_H100, ERR,
	  "no such key: namespace" },
	{ "!has(device.attributes['gpu.nvidia.com'].package)", DEV_H100, 1, NULL },
	/* maps of different kinds */
	{ "device.attributes == device.attributes['gpu.nvidia.com'] || "
	  "device.attributes['gpu.nvidia.com'] == device.attributes",
	  DEV_H100, 0, NULL },
	{ "device.attributes == device.capacity", DEV_EMPTY, 1, NULL },
	{ "device.attributes != device.capacity", DEV_H100, 1, NULL },
	{ "double('0x10') == 16.0", DEV_EMPTY, ERR, "invalid syntax" },
	{ "double('0x1p4') == 16.0 && double('-inf') < 0.0 && double('1e400') > 0.0", DEV_EMPTY,
	  ERR, "out of range" },
};

START_TEST(test_cel_eval_table)
{
	const struct eval_case *tc = &eval_cases[_i];
	struct rf_cel_program *p = NULL;
	struct rf_cel_error err = { 0 };
	int rc = rf_cel_compile(tc->expr, &p, &err);
	ck_assert_msg(rc == 0, "compile \"%s\": %d %s", tc->expr, rc, err.msg);
	memset(&err, 0, sizeof(err));
	rc = rf_cel_eval(p, &devices[tc->dev].dev, &err);
	ck_assert_msg(rc == tc->want, "\"%s\" on device %d: got %d (%s), want %d", tc->expr,
		      tc->dev, rc, err.msg, tc->want);
	if (tc->err_part)
		ck_assert_msg(strstr(err.msg, tc->err_part), "\"%s\": error \"%s\" lacks \"%s\"",
			      tc->expr, err.msg, tc->err_part);
	/* a second evaluation gives the same answer (programs are immutable) */
	ck_assert_int_eq(rf_cel_eval(p, &devices[tc->dev].dev, NULL), tc->want);
	rf_cel_program_free(p);
}
END_TEST

/* ---- compile errors ------------------------------------------------------------------------- */

struct compile_case {
	const char *expr;
	int rc;
	long pos; /* -1: don't check */
	const char *msg_part;
};

static const struct compile_case compile_cases[] = {
	/* outside the subset: -ENOTSUP at the construct */
	{ "device.attributes['x'].exists(a, a)", -ENOTSUP, 23, "unsupported function \"exists\"" },
	{ "[1, 2].all(x, x > 0)", -ENOTSUP, 7, "unsupported function \"all\"" },
	{ "[1].exists_one(x, x == 1)", -ENOTSUP, 4, "\"exists_one\"" },
	{ "[1].map(x, x * 2) == [2]", -ENOTSUP, 4, "\"map\"" },
	{ "[1].filter(x, x > 0) == [1]", -ENOTSUP, 4, "\"filter\"" },
	{ "cel.bind(dra, device.attributes['dra.net'], dra.rdma)", -ENOTSUP, 0,
	  "unsupported function \"cel.bind\"" },
	{ "device.driver == 'x' && device.attributes['dra.net'].ipv4.split(',').size() > 1",
	  -ENOTSUP, 58, "\"split\"" },
	{ "'%s'.format(['a']) == 'a'", -ENOTSUP, 5, "\"format\"" },
	{ "timestamp('2024-01-01T00:00:00Z') > timestamp('2023-01-01T00:00:00Z')", -ENOTSUP, 0,
	  "\"timestamp\"" },
	{ "ip('10.0.0.1').family() == 4", -ENOTSUP, 0, "\"ip\"" },
	{ "url('https://x').getHost() == 'x'", -ENOTSUP, 0, "\"url\"" },
	{ "optional.of(1).hasValue()", -ENOTSUP, 0, "\"optional.of\"" },
	{ "device.attributes['d'].?x == 1", -ENOTSUP, 22, "optional" },
	{ "device.attributes[?'d'] == 1", -ENOTSUP, 17, "optional" },
	{ "{'a': 1}['a'] == 1", -ENOTSUP, 0, "map literals" },
	{ "b'abc' == b'abc'", -ENOTSUP, 0, "bytes" },
	{ "type(1) == int", -ENOTSUP, 0, "\"type\"" },
	{ "device.driver == string", -ENOTSUP, 17, "type values" },
	{ "quantity('1').mul(2) == quantity('2')", -ENOTSUP, 14, "\"mul\"" },
	{ "device == device", -ENOTSUP, 0, "device" },
	{ "'a'.startsWith('a', 1)", -ENOTSUP, 4, "startsWith" },
	{ "startsWith('a', 'a')", -ENOTSUP, 0, "startsWith" },
	{ "'a'.quantity()", -ENOTSUP, 4, "quantity" },
	{ "google.protobuf.Value{} == 1", -ENOTSUP, 21, "message" },
	{ "device.`a-b` == 1", -ENOTSUP, 7, "quoted" },
	{ "'abc'.matches('\\\\bx')", -ENOTSUP, 14, "word boundaries" },
	{ "'abc'.matches('\\\\pL')", -ENOTSUP, 14, "Unicode classes" },
	{ "'abc'.matches('a(?i)b')", -ENOTSUP, 14, "flags" },
	{ "'abc'.matches('(?m)^b')", -ENOTSUP, 14, "flags" },
	{ "'abc'.matches('^*a')", -ENOTSUP, 14, "anchor" },
	{ "'abc'.matches('[\\\\D]')", -ENOTSUP, 14, "negated" },
	{ "'abc'.matches('\\\\x00')", -ENOTSUP, 14, "NUL" },
	{ "'abc'.matches('((a{1000}){1000})')", -ENOTSUP, 14, "too large" },
	{ "'abc'.matches('(a{0,100}){21}')", -ENOTSUP, 14, "too large" },
	/* syntax and name errors: -EINVAL */
	{ "device.driver ==", -EINVAL, 16, "end of expression" },
	{ "device.driver = 'x'", -EINVAL, 14, "unexpected '='" },
	{ "1 +* 2 == 3", -EINVAL, 3, "unexpected '*'" },
	{ "(1 == 1", -EINVAL, 7, "end of expression" },
	{ "1 == 1)", -EINVAL, 6, "unexpected ')'" },
	{ "device.driver == 'abc", -EINVAL, 17, "unterminated string" },
	{ "'a\nb' == 'ab'", -EINVAL, 2, "newline in string" },
	{ "'\\q' == 'q'", -EINVAL, 1, "invalid escape" },
	{ "'\\ud800' == 'x'", -EINVAL, 1, "invalid unicode" },
	{ "'\\400' == 'x'", -EINVAL, 1, "invalid escape" },
	{ "9223372036854775808 > 0", -EINVAL, 0, "out of range" },
	{ "18446744073709551616u > 0u", -EINVAL, 0, "out of range" },
	{ "if == 1", -EINVAL, 0, "reserved identifier 'if'" },
	{ "device.driver == 'a' & true", -EINVAL, 21, "unexpected '&'" },
	{ "device.driver == 'a' | true", -EINVAL, 21, "unexpected '|'" },
	{ "device.foo == 1", -EINVAL, 7, "undefined field 'foo'" },
	{ "has(device.foo)", -EINVAL, 11, "undefined field 'foo'" },
	{ "has(device.attributes['x'])", -EINVAL, 0, "invalid argument to has() macro" },
	{ "has(1)", -EINVAL, 0, "has() macro" },
	{ "foo == 1", -EINVAL, 0, "undeclared reference to 'foo'" },
	{ "foo.bar == 1", -EINVAL, 0, "undeclared reference to 'foo.bar'" },
	{ "device.driver == 'x' $", -EINVAL, 21, "unexpected character '$'" },
	{ "\xff == 1", -EINVAL, 0, "invalid UTF-8" },
	{ "'abc'.matches('(')", -EINVAL, 14, "invalid regular expression" },
	{ "'abc'.matches('a**')", -EINVAL, 14, "nested repetition" },
	{ "'abc'.matches('*a')", -EINVAL, 14, "missing argument" },
	{ "'abc'.matches('a{1001}')", -EINVAL, 14, "repeat count" },
	{ "'abc'.matches('a{3,2}')", -EINVAL, 14, "repeat count" },
	{ "'abc'.matches('(?=a)')", -EINVAL, 14, "lookahead" },
	{ "'abc'.matches('(?<=a)b')", -EINVAL, 14, "lookbehind" },
	{ "'abc'.matches('[a')", -EINVAL, 14, "missing closing ]" },
	{ "'abc'.matches('[z-a]')", -EINVAL, 14, "range" },
	{ "'abc'.matches('\\\\1')", -EINVAL, 14, "backreference" },
	{ "'abc'.matches('a\\\\')", -EINVAL, 14, "trailing backslash" },
	{ "'abc'.matches('\\\\Z')", -EINVAL, 14, "invalid escape" },
	{ "'abc'.matches('[[:foo:]]')", -EINVAL, 14, "[:foo:]" },
	{ "'abc'.matches(')')", -EINVAL, 14, "unbalanced" },
	{ "", -EINVAL, 0, "end of expression" },
};

/* List-typed attributes (KEP-5491): CEL lists when the device view allows them (1.37), the
 * "unsupported attribute value" error otherwise; includes() on lists and scalars, refused on a
 * list longer than 48. */
START_TEST(test_cel_list_attributes)
{
	static const int64_t ints[] = { 1, 3, 5 };
	static const char *const strs[] = { "a", "b" };
	static const char *const vers[] = { "1.2.3", "2.0.0" };
	static int64_t many[60];
	static const struct rf_attr_list li = { .elem = RF_ATTR_INT, .n = 3, .i = ints };
	static const struct rf_attr_list ls = { .elem = RF_ATTR_STRING, .n = 2, .s = strs };
	static const struct rf_attr_list lv = { .elem = RF_ATTR_VERSION, .n = 2, .s = vers };
	struct rf_attr_list lm = { .elem = RF_ATTR_INT, .n = 60, .i = many };
	for (int k = 0; k < 60; k++)
		many[k] = k;
	struct rf_attr attrs[] = {
		{ .name = "d/ints", .kind = RF_ATTR_LIST, .list = &li },
		{ .name = "d/many", .kind = RF_ATTR_LIST, .list = &lm },
		{ .name = "d/one", .kind = RF_ATTR_INT, .i = 3 },
		{ .name = "d/strs", .kind = RF_ATTR_LIST, .list = &ls },
		{ .name = "d/vers", .kind = RF_ATTR_LIST, .list = &lv },
	};
	struct rf_cel_device dev = { .driver = "d", .attrs = attrs, .n_attrs = 5 };
	static const struct {
		const char *expr;
		int lists_on, lists_off;
	} cases[] = {
		{ "device.attributes['d'].ints.includes(3)", 1, -1 },
		{ "device.attributes['d'].ints.includes(4)", 0, -1 },
		{ "device.attributes['d'].strs.includes('b') && 'a' in device.attributes['d'].strs",
		  1, -1 },
		{ "size(device.attributes['d'].ints) == 3", 1, -1 },
		{ "device.attributes['d'].vers.includes(semver('2.0.0'))", 1, -1 },
		{ "device.attributes['d'].one.includes(3)", 1, 1 },
		{ "device.attributes['d'].one.includes('3')", 0, 0 },
		{ "device.attributes['d'].many.includes(70)", -1, -1 },
		{ "device.attributes['d'].many.includes(2)", 1, -1 },
		{ "device.attributes['d'].one == 3", 1, 1 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct rf_cel_program *p = NULL;
		struct rf_cel_error err = { 0 };
		ck_assert_msg(rf_cel_compile(cases[k].expr, &p, &err) == 0, "%s: %s", cases[k].expr,
			      err.msg);
		for (int on = 0; on < 2; on++) {
			dev.list_attributes = on;
			int want = on ? cases[k].lists_on : cases[k].lists_off;
			int r = rf_cel_eval(p, &dev, &err);
			ck_assert_msg(want < 0 ? r < 0 : r == want, "%s (lists %s): %d %s",
				      cases[k].expr, on ? "on" : "off", r, err.msg);
			if (!on && want < 0)
				ck_assert_msg(strstr(err.msg, "unsupported attribute value"), "%s",
					      err.msg);
			if (on && want < 0)
				ck_assert_msg(strstr(err.msg, "longer than 48"), "%s", err.msg);
		}
		rf_cel_program_free(p);
	}
}
END_TEST

START_TEST(test_cel_compile_errors)
{
	const struct compile_case *tc = &compile_cases[_i];
	struct rf_cel_program *p = NULL;
	struct rf_cel_error err = { 0 };
	int rc = rf_cel_compile(tc->expr, &p, &err);
	ck_assert_msg(rc == tc->rc, "\"%s\": rc %d (%s), want %d", tc->expr, rc, err.msg, tc->rc);
	ck_assert_ptr_null(p);
	if (tc->pos >= 0)
		ck_assert_msg(err.pos == (size_t)tc->pos, "\"%s\": pos %zu (%s), want %ld",
			      tc->expr, err.pos, err.msg, tc->pos);
	ck_assert_msg(strstr(err.msg, tc->msg_part), "\"%s\": message \"%s\" lacks \"%s\"",
		      tc->expr, err.msg, tc->msg_part);
	char at[64];
	snprintf(at, sizeof(at), "at position %zu", err.pos);
	ck_assert_msg(strstr(err.msg, at), "\"%s\": message \"%s\" lacks \"%s\"", tc->expr, err.msg,
		      at);
}
END_TEST

START_TEST(test_cel_unsupported_message)
{
	struct rf_cel_program *p = NULL;
	struct rf_cel_error err;
	const char *e = "device.driver == 'x' && [1].exists(x, x == 1)";
	ck_assert_int_eq(rf_cel_compile(e, &p, &err), -ENOTSUP);
	ck_assert_uint_eq(err.pos, 28);
	ck_assert_str_eq(err.msg, "unsupported function \"exists\" at position 28");
	ck_assert_int_eq(rf_cel_compile(e, &p, NULL), -ENOTSUP);
}
END_TEST

/* ---- limits ---------------------------------------------------------------------------------- */

static char *
repeat(const char *prefix, const char *unit, size_t n, const char *suffix)
{
	size_t len = strlen(prefix) + strlen(unit) * n + strlen(suffix) + 1;
	char *s = malloc(len);
	ck_assert_ptr_nonnull(s);
	size_t o = strlen(prefix);
	memcpy(s, prefix, o);
	for (size_t k = 0; k < n; k++) {
		memcpy(s + o, unit, strlen(unit));
		o += strlen(unit);
	}
	memcpy(s + o, suffix, strlen(suffix) + 1);
	return s;
}

static int
compile_eval(const char *expr, int dev, struct rf_cel_error *err)
{
	struct rf_cel_program *p = NULL;
	int rc = rf_cel_compile(expr, &p, err);
	if (rc != 0)
		return rc * 1000; /* distinguish compile from runtime errors */
	rc = rf_cel_eval(p, &devices[dev].dev, err);
	rf_cel_program_free(p);
	return rc;
}

START_TEST(test_cel_deep_nesting)
{
	struct rf_cel_error err;
	char *s, *t;
	/* 60 parentheses are fine */
	s = repeat("", "(", 60, "1");
	t = repeat(s, ")", 60, " == 1");
	ck_assert_int_eq(compile_eval(t, DEV_EMPTY, &err), 1);
	free(s);
	free(t);
	/* 100 and 100000 levels are rejected, never a stack overflow */
	s = repeat("", "(", 100, "1");
	t = repeat(s, ")", 100, " == 1");
	ck_assert_int_eq(compile_eval(t, DEV_EMPTY, &err), -EINVAL * 1000);
	ck_assert_ptr_nonnull(strstr(err.msg, "nested too deeply"));
	free(s);
	free(t);
	s = repeat("", "(", 5000, "1");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("", "[", 5000, "");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("", "!", 5000, "true");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("", "-", 5000, "1 == 1");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("", "true ? true : ", 100, "false");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("device.attributes", ".a", 100, " == 1");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	s = repeat("[1]", "[0]", 1000, " == 1");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), -EINVAL * 1000);
	free(s);
	/* 32 selections in a row (CEL's required minimum); 30 nested lists indexed 30 times */
	s = repeat("has(device.attributes", ".a", 32, ")");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), ERR);
	ck_assert_ptr_nonnull(strstr(err.msg, "no such key: a"));
	free(s);
	s = repeat("", "[", 30, "true");
	t = repeat(s, "][0]", 30, "");
	ck_assert_int_eq(compile_eval(t, DEV_EMPTY, &err), 1);
	free(s);
	free(t);
	s = repeat("", "!!", 30, "true");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), 1);
	free(s);
	/* long flat chains are shallow: 1000 || terms, 1000 + terms */
	s = repeat("false", " || device.driver == 'x'", 300, " || device.driver == 'dra.net'");
	ck_assert_int_eq(compile_eval(s, DEV_CX7, &err), 1);
	free(s);
	s = repeat("0", " + 1", 1000, " == 1000");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), 1);
	free(s);
	s = repeat("true", " && true", 1000, "");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), 1);
	free(s);
}
END_TEST

START_TEST(test_cel_length_limit)
{
	struct rf_cel_error err;
	/* exactly 10 KiB compiles; one byte more is -E2BIG */
	const char *head = "device.driver == '";
	size_t fill = 10240 - strlen(head) - 1;
	char *s = repeat(head, "x", fill, "'");
	ck_assert_uint_eq(strlen(s), 10240);
	ck_assert_int_eq(compile_eval(s, DEV_H100, &err), 0);
	free(s);
	s = repeat(head, "x", fill + 1, "'");
	struct rf_cel_program *p = NULL;
	ck_assert_int_eq(rf_cel_compile(s, &p, &err), -E2BIG);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(err.msg, "10240"));
	free(s);
	s = repeat("", " ", 1 << 20, "true");
	ck_assert_int_eq(rf_cel_compile(s, &p, &err), -E2BIG);
	free(s);
	/* a selector of 300 alternatives, as long selectors are in practice */
	s = repeat("device.attributes['resource.kubernetes.io'].pciBusID in [", "'0000:00:00.0', ",
		   300, "'0000:1b:00.0']");
	ck_assert_int_lt(strlen(s), 10240);
	ck_assert_int_eq(compile_eval(s, DEV_H100, &err), 1);
	ck_assert_int_eq(compile_eval(s, DEV_MIG, &err), 1);
	ck_assert_int_eq(compile_eval(s, DEV_CX7, &err), ERR);
	free(s);
}
END_TEST

START_TEST(test_cel_cost_limit)
{
	struct rf_cel_error err;
	/* list concatenation is quadratic: 1200 terms exceed the 1,000,000 cost units */
	char *s = repeat("size([0,0]", "+[0,0]", 1200, ") > 0");
	ck_assert_int_lt(strlen(s), 10240);
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), ERR);
	ck_assert_ptr_nonnull(strstr(err.msg, "cost limit"));
	/* the cost limit is not a CEL error value: || cannot absorb it */
	char *t = malloc(strlen(s) + 16);
	snprintf(t, strlen(s) + 16, "%s || true", s);
	ck_assert_int_eq(compile_eval(t, DEV_EMPTY, &err), ERR);
	ck_assert_ptr_nonnull(strstr(err.msg, "cost limit"));
	free(t);
	free(s);
	/* regexes are charged by subject length times expanded pattern size */
	s = repeat("'", "a", 3000, "'.matches('(a?){500}z')");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), ERR);
	ck_assert_ptr_nonnull(strstr(err.msg, "cost limit"));
	free(s);
	s = repeat("'", "a", 3000, "'.matches('(a?){5}z')");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), 0);
	free(s);
	/* 300 terms stay well under the limit */
	s = repeat("size([0, 0]", " + [0, 0]", 300, ") == 602");
	ck_assert_int_eq(compile_eval(s, DEV_EMPTY, &err), 1);
	free(s);
}
END_TEST

/* ---- attribute lookups ------------------------------------------------------------------------
 */

START_TEST(test_attr_find)
{
	const struct rf_cel_device *d = &devices[DEV_CX7].dev;
	for (size_t k = 0; k < d->n_attrs; k++) {
		const char *name = d->attrs[k].name;
		const char *sl = strchr(name, '/');
		ck_assert_ptr_eq(rf_attr_find(d->attrs, d->n_attrs, name), &d->attrs[k]);
		ck_assert_ptr_eq(rf_attr_find2(d->attrs, d->n_attrs, name, (size_t)(sl - name),
					       sl + 1, strlen(sl + 1)),
				 &d->attrs[k]);
	}
	ck_assert_ptr_null(rf_attr_find(d->attrs, d->n_attrs, "dra.net/nope"));
	ck_assert_ptr_null(rf_attr_find(d->attrs, d->n_attrs, ""));
	ck_assert_ptr_null(rf_attr_find2(d->attrs, d->n_attrs, "dra.net", 7, "mt", 2));
	ck_assert_ptr_null(rf_attr_find2(d->attrs, d->n_attrs, "dra.ne", 6, "t/mtu", 5));
	ck_assert_ptr_nonnull(rf_attr_find2(d->attrs, d->n_attrs, "dra.netX", 7, "mtuY", 3));
	ck_assert_ptr_null(rf_attr_find2(d->attrs, d->n_attrs, "dra.net", 7, "mtu\0", 4));
	ck_assert_ptr_null(rf_attr_find2(NULL, 0, "a", 1, "b", 1));
	ck_assert_ptr_null(rf_attr_find(NULL, 0, "a"));

	const struct rf_cel_device *g = &devices[DEV_MIG].dev;
	for (size_t k = 0; k < g->n_caps; k++) {
		const char *name = g->caps[k].name;
		ck_assert_ptr_eq(rf_capacity_find(g->caps, g->n_caps, name), &g->caps[k]);
		ck_assert_ptr_eq(rf_capacity_find2(g->caps, g->n_caps, "gpu.nvidia.com", 14,
						   name + 15, strlen(name + 15)),
				 &g->caps[k]);
	}
	ck_assert_ptr_null(rf_capacity_find(g->caps, g->n_caps, "gpu.nvidia.com/memor"));
	ck_assert_ptr_null(
		rf_capacity_find2(g->caps, g->n_caps, "gpu.nvidia.com", 14, "memoryX", 7));
	ck_assert_ptr_null(rf_capacity_find2(NULL, 0, "a", 1, "b", 1));
}
END_TEST

/* ---- threads and cache --------------------------------------------------------------------- */

static const char *const thread_exprs[] = {
	"device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$')",
	"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
	"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('580.0.0')) >= 0",
	"device.attributes['dra.net'].rdma == true && device.attributes['dra.net'].numaNode == 0",
	"device.attributes['gpu.nvidia.com'].index == 0 || device.driver == 'dra.net'",
	"device.attributes['dra.net'].ifName.matches('^enp[0-9]+s0' + 'np0$')",
};
#define N_THREAD_EXPRS (sizeof(thread_exprs) / sizeof(thread_exprs[0]))
#define N_THREADS      8

struct thread_arg {
	const struct rf_cel_program *progs[N_THREAD_EXPRS];
	int want[N_THREAD_EXPRS][DEV_COUNT];
	int mismatches;
	unsigned seed;
};

static void *
thread_main(void *p)
{
	struct thread_arg *a = p;
	unsigned x = a->seed;
	for (int it = 0; it < 3000; it++) {
		x = x * 1103515245u + 12345u;
		size_t e = (x >> 8) % N_THREAD_EXPRS;
		int d = (int)((x >> 16) % DEV_COUNT);
		struct rf_cel_error err;
		if (rf_cel_eval(a->progs[e], &devices[d].dev, &err) != a->want[e][d])
			a->mismatches++;
	}
	return NULL;
}

START_TEST(test_cel_threads)
{
	struct rf_cel_cache *cache = rf_cel_cache_new();
	ck_assert_ptr_nonnull(cache);
	struct thread_arg args[N_THREADS];
	struct thread_arg base = { .mismatches = 0 };
	for (size_t e = 0; e < N_THREAD_EXPRS; e++) {
		ck_assert_int_eq(rf_cel_cache_get(cache, thread_exprs[e], &base.progs[e], NULL), 0);
		for (int d = 0; d < DEV_COUNT; d++)
			base.want[e][d] = rf_cel_eval(base.progs[e], &devices[d].dev, NULL);
	}
	ck_assert_int_eq(base.want[0][DEV_H100], 1);
	ck_assert_int_eq(base.want[3][DEV_CX7], 1);
	ck_assert_int_eq(base.want[4][DEV_H100], -EINVAL);
	ck_assert_int_eq(base.want[4][DEV_CX7], 1);
	ck_assert_int_eq(base.want[5][DEV_CX7], 1);
	pthread_t t[N_THREADS];
	for (int k = 0; k < N_THREADS; k++) {
		args[k] = base;
		args[k].seed = (unsigned)k * 7919u + 1u;
		ck_assert_int_eq(pthread_create(&t[k], NULL, thread_main, &args[k]), 0);
	}
	for (int k = 0; k < N_THREADS; k++) {
		pthread_join(t[k], NULL);
		ck_assert_int_eq(args[k].mismatches, 0);
	}
	rf_cel_cache_free(cache);
}
END_TEST

struct cache_thread_arg {
	struct rf_cel_cache *cache;
	const struct rf_cel_program *got[16];
};

static void *
cache_thread(void *p)
{
	struct cache_thread_arg *a = p;
	char expr[64];
	for (int k = 0; k < 16; k++) {
		snprintf(expr, sizeof(expr), "device.attributes['d'].x == %d", k);
		if (rf_cel_cache_get(a->cache, expr, &a->got[k], NULL) != 0)
			a->got[k] = NULL;
	}
	return NULL;
}

START_TEST(test_cel_cache)
{
	struct rf_cel_cache *c = rf_cel_cache_new();
	ck_assert_ptr_nonnull(c);
	const struct rf_cel_program *p1 = NULL, *p2 = NULL, *p3 = NULL;
	struct rf_cel_error err;
	const char *e = "device.driver == 'gpu.nvidia.com'";
	ck_assert_int_eq(rf_cel_cache_get(c, e, &p1, &err), 0);
	char copy[64];
	snprintf(copy, sizeof(copy), "%s", e);
	ck_assert_int_eq(rf_cel_cache_get(c, copy, &p2, &err), 0);
	ck_assert_ptr_eq(p1, p2);
	ck_assert_int_eq(rf_cel_eval(p1, &devices[DEV_H100].dev, NULL), 1);
	ck_assert_int_eq(rf_cel_cache_get(c, "device.driver == 'dra.net'", &p3, &err), 0);
	ck_assert_ptr_ne(p1, p3);
	ck_assert_uint_eq(rf_cel_cache_count(c), 2);

	/* compile failures are cached with their message */
	const struct rf_cel_program *bad = NULL;
	ck_assert_int_eq(rf_cel_cache_get(c, "[1].exists(x, true)", &bad, &err), -ENOTSUP);
	ck_assert_ptr_null(bad);
	ck_assert_str_eq(err.msg, "unsupported function \"exists\" at position 4");
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(rf_cel_cache_get(c, "[1].exists(x, true)", &bad, &err), -ENOTSUP);
	ck_assert_uint_eq(err.pos, 4);
	ck_assert_str_eq(err.msg, "unsupported function \"exists\" at position 4");
	ck_assert_int_eq(rf_cel_cache_get(c, "1 +", &bad, &err), -EINVAL);
	ck_assert_uint_eq(rf_cel_cache_count(c), 4);
	/* over-long texts are not kept */
	char *big = repeat("", " ", 20000, "true");
	ck_assert_int_eq(rf_cel_cache_get(c, big, &bad, &err), -E2BIG);
	free(big);
	ck_assert_uint_eq(rf_cel_cache_count(c), 4);

	/* several threads asking for the same texts get the same programs */
	struct cache_thread_arg a[4];
	pthread_t t[4];
	for (int k = 0; k < 4; k++) {
		a[k].cache = c;
		ck_assert_int_eq(pthread_create(&t[k], NULL, cache_thread, &a[k]), 0);
	}
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	for (int i = 0; i < 16; i++) {
		ck_assert_ptr_nonnull(a[0].got[i]);
		for (int k = 1; k < 4; k++)
			ck_assert_ptr_eq(a[0].got[i], a[k].got[i]);
	}
	ck_assert_uint_eq(rf_cel_cache_count(c), 20);
	rf_cel_cache_free(c);
	rf_cel_cache_free(NULL);
}
END_TEST

START_TEST(test_cel_cache_bound)
{
	struct rf_cel_cache *c = rf_cel_cache_new();
	char expr[64];
	const struct rf_cel_program *p = NULL, *first = NULL;
	struct rf_cel_error err;
	for (int k = 0; k < RF_CEL_CACHE_MAX; k++) {
		snprintf(expr, sizeof(expr), "%d == %d", k, k);
		ck_assert_int_eq(rf_cel_cache_get(c, expr, &p, &err), 0);
		if (k == 0)
			first = p;
	}
	ck_assert_uint_eq(rf_cel_cache_count(c), RF_CEL_CACHE_MAX);
	ck_assert_int_eq(rf_cel_cache_get(c, "true", &p, &err), -ENOSPC);
	ck_assert_ptr_nonnull(strstr(err.msg, "cache full"));
	/* cached texts are still served */
	ck_assert_int_eq(rf_cel_cache_get(c, "0 == 0", &p, &err), 0);
	ck_assert_ptr_eq(p, first);
	ck_assert_int_eq(rf_cel_eval(p, &devices[DEV_EMPTY].dev, NULL), 1);
	rf_cel_cache_free(c);
}
END_TEST

START_TEST(test_cel_api_edges)
{
	struct rf_cel_program *p = NULL;
	struct rf_cel_error err;
	ck_assert_int_eq(rf_cel_compile(NULL, &p, &err), -EINVAL);
	ck_assert_int_eq(rf_cel_eval(NULL, &devices[DEV_EMPTY].dev, &err), -EINVAL);
	rf_cel_program_free(NULL);
	/* a device with no driver and NULL arrays */
	struct rf_cel_device bare = { 0 };
	ck_assert_int_eq(rf_cel_compile("device.driver == '' && size(device.attributes) == 0 && "
					"!has(device.attributes['a'].b)",
					&p, &err),
			 0);
	ck_assert_int_eq(rf_cel_eval(p, &bare, &err), 1);
	rf_cel_program_free(p);
}
END_TEST

static void
setup(void)
{
	build_devices();
}

Suite *
cel_suite(void)
{
	Suite *s = suite_create("cel");
	TCase *tc = tcase_create("eval");
	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_cel_eval_table, 0,
			    (int)(sizeof(eval_cases) / sizeof(eval_cases[0])));
	tcase_add_loop_test(tc, test_cel_compile_errors, 0,
			    (int)(sizeof(compile_cases) / sizeof(compile_cases[0])));
	tcase_add_test(tc, test_cel_unsupported_message);
	tcase_add_test(tc, test_cel_list_attributes);
	tcase_add_test(tc, test_attr_find);
	tcase_add_test(tc, test_cel_api_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cel_deep_nesting);
	tcase_add_test(tc, test_cel_length_limit);
	tcase_add_test(tc, test_cel_cost_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrency");
	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cel_threads);
	tcase_add_test(tc, test_cel_cache);
	tcase_add_test(tc, test_cel_cache_bound);
	suite_add_tcase(s, tc);
	return s;
}
