/* railfit's configuration (DESIGN section 8): one plain struct, every key with its default.
 *
 * rf_config_init() fills the defaults; rf_config_parse_yaml() reads a YAML document strictly
 * (an unknown key or a bad value is an error naming the key and what was expected) into a fresh
 * struct and hands it over only when everything validated. Pure logic, no I/O. */
#ifndef RF_CONFIG_CONFIG_H
#define RF_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/dra_version.h"
#include "config/level.h"
#include "config/quantity.h"

struct rf_strv {
	char **v; /* owned strings */
	size_t n;
};

enum rf_when_stale { RF_WHEN_STALE_PASS, RF_WHEN_STALE_FAIL };

enum rf_when_not_ready {
	RF_WHEN_NOT_READY_ERROR_FOR_RAILFIT_PODS, /* Error only for pods with demand */
	RF_WHEN_NOT_READY_PASS,                   /* answer from whatever the cache holds */
	RF_WHEN_NOT_READY_ERROR,                  /* Error for every pod */
};

enum rf_bandwidth_policy { RF_BW_SPREAD, RF_BW_BINPACK };

struct rf_config {
	struct {
		char *listen;                    /* "0.0.0.0:8888" */
		char *debug_listen;              /* "" = same listener */
		int64_t max_body_bytes;          /* 128Mi */
		int64_t max_buffered_bytes;      /* 512Mi: bodies held at once */
		int max_connections_per_address; /* 128 */
		char *probe_listen;              /* "" = same listener */
		int64_t request_timeout_ms;      /* 10s */
		int threads;                     /* 0 = automatic */
		struct {
			char *cert_file;
			char *key_file;
			char *client_ca_file;
		} tls;
		bool debug_endpoints;   /* true */
		char *debug_token_file; /* "" = the debug routes are open to whoever reaches them */
	} server;
	struct {
		bool enabled;                   /* false: POST /bind is refused */
		struct rf_strv scheduler_names; /* [railfit]: pods bind only with these */
	} bind;
	struct {
		char *kubeconfig;
		double qps;                      /* 50 */
		int64_t stale_after_ms;          /* 2m */
		int64_t assume_ttl_ms;           /* 30s */
		int64_t watch_timeout_ms;        /* 5m */
		enum rf_dra_version dra_version; /* auto */
		int dra_patch; /* RF_DRA_PATCH_NEWEST, or the patch level of "1.36.2" */
		/* kube.featureGates: the non-default gates kube-scheduler runs with that change
		 * the allocator's pick for the same objects */
		struct {
			bool list_type_attributes; /* DRAListTypeAttributes: false */
		} gates;
		/* not a key: the allocator library's ListTypeAttributes feature forced on (the
		 * replay of upstream's suite; see rf_dra_list_rules()) */
		bool dra_library_list_feature;
		/* not keys: what kube.draVersion auto found (the live store fills them in the
		 * configuration its generations use; /debug/config shows them) */
		char dra_server_version[64]; /* the server's gitVersion, "" = not known */
		bool dra_server_newer;       /* newer than the newest rules railfit knows */
	} kube;
	struct {
		struct rf_strv gpu_drivers; /* [gpu.nvidia.com] */
		struct rf_strv nic_drivers; /* [dra.net] */
		struct rf_strv cpu_drivers; /* [dra.cpu] (kubernetes-sigs/dra-driver-cpu) */
		struct rf_strv bandwidth_capacities;      /* [bandwidth] */
		struct rf_quantity default_nic_bandwidth; /* 400G */
		struct rf_quantity frontend_bandwidth;    /* 100G */
		char *rails;               /* "gpu-pairing" or "attribute:<qualified name>" */
		char *topology_annotation; /* railfit.io/pci-topology */
	} devices;
	struct {
		enum rf_level min_alignment; /* SYS */
		int64_t stale_after_ms;      /* 10m */
		enum rf_when_stale when_stale;
		enum rf_when_not_ready when_not_ready;
	} filter;
	struct {
		double w_alignment, w_bandwidth, w_rail, w_packing; /* 5 3 2 1 */
		double w_gpu;      /* 3: GPU-to-GPU level, pods with 2+ GPUs */
		double w_locality; /* 2: the block/spine of the pod's group */
		double w_cpu;      /* 2: DRA CPUs on the NUMA node of the pod's GPUs (NICs) */
		enum rf_bandwidth_policy bandwidth_policy; /* spread */
		double levels[RF_LEVEL_COUNT]; /* PIX 1.0 PXB 0.85 PHB 0.7 NODE 0.4 SYS 0.1 UNKNOWN
						  0.25 */
		double level_nvl; /* NVL 1.0: points of NVLink-connected GPUs (gpu part) */
	} scoring;
	struct {
		struct rf_strv labels;
		struct rf_strv block_labels; /* Node label keys naming its network block */
		struct rf_strv spine_labels; /* ... and its spine (a group of blocks) */
	} groups;
};

/** Fill *c with the built-in defaults. Aborts on OOM (startup only). */
void rf_config_init(struct rf_config *c);

/** Free what *c owns; the struct may be reused with rf_config_init(). Accepts a zeroed struct. */
void rf_config_release(struct rf_config *c);

/**
 * Parse a YAML configuration document over the defaults.
 * On success *ret is released and replaced; on failure it is untouched and err holds a message
 * naming the key path and what was expected, e.g. "scoring.weights.alignment: expected a number
 * >= 0, got \"high\"" or "filter.minAligment: unknown key (expected one of minAlignment, ...)".
 * @return 0, -EINVAL (bad document, key or value) or -ENOMEM.
 */
int rf_config_parse_yaml(const char *buf, size_t len, struct rf_config *ret, char *err,
			 size_t errlen);

/** The effective configuration as JSON for /debug/config, TLS key paths redacted. New reference. */
json_t *rf_config_to_json(const struct rf_config *c);

/** Deep copy; -ENOMEM. */
int rf_config_copy(const struct rf_config *src, struct rf_config *ret);

#endif
