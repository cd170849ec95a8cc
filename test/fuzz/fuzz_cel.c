/* Fuzz target for the CEL evaluator: the input is an expression; it is compiled and, when it
 * compiles, evaluated against a GPU and a NIC device. Must never crash, hang or leak, and must only
 * return the documented codes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct rf_attr gpu_attrs[] = {
	{ .name = "gpu.nvidia.com/architecture", .kind = RF_ATTR_STRING, .s = "Hopper" },
	{ .name = "gpu.nvidia.com/driverVersion", .kind = RF_ATTR_VERSION, .s = "580.126.9" },
	{ .name = "gpu.nvidia.com/index", .kind = RF_ATTR_INT, .i = 3 },
	{ .name = "gpu.nvidia.com/numas", .kind = RF_ATTR_OTHER },
	{ .name = "gpu.nvidia.com/productName",
	  .kind = RF_ATTR_STRING,
	  .s = "NVIDIA H100 80GB HBM3" },
	{ .name = "gpu.nvidia.com/type", .kind = RF_ATTR_STRING, .s = "gpu" },
	{ .name = "resource.kubernetes.io/pciBusID", .kind = RF_ATTR_STRING, .s = "0000:1b:00.0" },
	{ .name = "resource.kubernetes.io/pcieRoot", .kind = RF_ATTR_STRING, .s = "pci0000:15" },
};

static const struct rf_attr nic_attrs[] = {
	{ .name = "dra.net/ifName", .kind = RF_ATTR_STRING, .s = "enp24s0np0" },
	{ .name = "dra.net/mtu", .kind = RF_ATTR_INT, .i = 9000 },
	{ .name = "dra.net/numaNode", .kind = RF_ATTR_INT, .i = 0 },
	{ .name = "dra.net/rdma", .kind = RF_ATTR_BOOL, .b = true },
	{ .name = "resource.kubernetes.io/pcieRoot", .kind = RF_ATTR_STRING, .s = "pci0000:15" },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rf_capacity gpu_caps[2];
	static bool init;
	if (!init) {
		gpu_caps[0].name = "gpu.nvidia.com/memory";
		gpu_caps[1].name = "gpu.nvidia.com/multiprocessors";
		if (rf_quantity_parse("81559Mi", &gpu_caps[0].value) != 0 ||
		    rf_quantity_parse("132", &gpu_caps[1].value) != 0)
			abort();
		init = true;
	}
	const struct rf_cel_device devs[2] = {
		{ .driver = "gpu.nvidia.com",
		  .attrs = gpu_attrs,
		  .n_attrs = sizeof(gpu_attrs) / sizeof(gpu_attrs[0]),
		  .caps = gpu_caps,
		  .n_caps = 2 },
		{ .driver = "dra.net",
		  .attrs = nic_attrs,
		  .n_attrs = sizeof(nic_attrs) / sizeof(nic_attrs[0]),
		  .allow_multiple_allocations = true },
	};
	char *expr = malloc(size + 1);
	if (!expr)
		return 0;
	memcpy(expr, data, size);
	expr[size] = '\0';
	struct rf_cel_program *p = NULL;
	struct rf_cel_error err;
	int rc = rf_cel_compile(expr, &p, &err);
	if (rc != 0) {
		if (rc != -EINVAL && rc != -ENOTSUP && rc != -E2BIG && rc != -ENOMEM)
			abort();
		if (p || strnlen(err.msg, sizeof(err.msg)) == sizeof(err.msg))
			abort();
	} else {
		for (int k = 0; k < 2; k++) {
			rc = rf_cel_eval(p, &devs[k], &err);
			if (rc != 0 && rc != 1 && rc != -EINVAL && rc != -ENOMEM)
				abort();
			if (rc < 0 && strnlen(err.msg, sizeof(err.msg)) == sizeof(err.msg))
				abort();
		}
		rf_cel_program_free(p);
	}
	free(expr);
	return 0;
}
