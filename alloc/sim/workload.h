/* Synthetic workloads for `railfit simulate --workload SPEC`: pending Pods, their ResourceClaims
 * and the two DeviceClasses they name, as Kubernetes objects. Deterministic for a seed. Pure: JSON
 * in memory only.
 *
 * SPEC is a comma-separated list of COUNTxSHAPE[-MOD]...; COUNT is a number of pods.
 *   SHAPE  <g>gpu          g GPUs in one claim (1..16)
 *          <g>gpu<n>nic    g GPUs and n NICs in one claim, no constraint (0..16 NICs)
 *          <p>pair         p GPU+NIC pairs, each pair constrained to one PCIe root
 *                          (matchAttribute resource.kubernetes.io/pcieRoot) (1..8)
 *          loader          no devices (a data loader: give it -egress or -ingress)
 *   MOD    job<k>          pods in Jobs of k pods (label batch.kubernetes.io/job-name); a job's
 *                          <g>gpu pods also get g NICs, one rail per GPU
 *          bw<Q>           railfit.io/nic-bandwidth: Q (per NIC)
 *          min<LEVEL>      railfit.io/min-alignment: LEVEL (PIX, PXB, PHB, NODE)
 *          cpu<k>          k CPUs in the same claim, from one shared device of the DRA CPU
 *                          driver in grouped mode (capacity <driver>/cpu of the first of
 *                          devices.cpuDrivers; class railfit-sim-cpu)
 *          egress<Q>       kubernetes.io/egress-bandwidth: Q
 *          ingress<Q>      kubernetes.io/ingress-bandwidth: Q
 * Example: "200x1gpu1nic,50x2pair,20x8gpu-job4,300xloader-egress5G".
 *
 * Pods arrive in a shuffled order (seeded); the pods of one Job arrive together. Requests:
 * 8 CPU and 64Gi memory per GPU (2 CPU and 8Gi for a loader). */
#ifndef RF_ALLOC_SIM_WORKLOAD_H
#define RF_ALLOC_SIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/config.h"

#define RF_WORKLOAD_MAX_PODS  100000
#define RF_WORKLOAD_NS        "railfit-sim"
#define RF_WORKLOAD_GPU_CLASS "railfit-sim-gpu"
#define RF_WORKLOAD_NIC_CLASS "railfit-sim-nic"
#define RF_WORKLOAD_CPU_CLASS "railfit-sim-cpu"

struct rf_workload {
	json_t *pods;    /* Pods in arrival order */
	json_t *claims;  /* their ResourceClaims (unallocated) */
	json_t *classes; /* the DeviceClasses the claims name (devices.gpuDrivers, .nicDrivers,
			  * .cpuDrivers when some item asks for CPUs) */
};

/**
 * Parse SPEC and generate its objects. ret owns new array references (rf_workload_release()).
 * @return 0, -EINVAL (err names the item and says what was expected) or -ENOMEM.
 */
int rf_workload_generate(const char *spec, const struct rf_config *cfg, uint64_t seed,
			 struct rf_workload *ret, char *err, size_t errlen);

void rf_workload_release(struct rf_workload *w);

#endif
