/* The locality vocabulary of nvidia-smi topo -m, best first (DESIGN section 5). It lives in config/
 * because configuration names levels (filter.minAlignment, scoring.levels); topology/ computes
 * them. */
#ifndef RF_CONFIG_LEVEL_H
#define RF_CONFIG_LEVEL_H

#include <stdbool.h>

enum rf_level {
	/* GPU to GPU only: the two GPUs are NVLink-connected (directly or through NVSwitches). It
	 * sits below PIX so that "smaller is better" holds, and outside the PCIe range so that
	 * tables indexed by a PCIe level (scoring.levels, the annotation's level letters) never see
	 * it: code that meets it names it with rf_level_name() and scores it with its own key.
	 * Not -1: callers use -1 for "no level" (e.g. a level that does not apply). */
	RF_LEVEL_NVL = -2,
	RF_LEVEL_PIX = 0,
	RF_LEVEL_PXB,
	RF_LEVEL_PHB,
	RF_LEVEL_NODE,
	RF_LEVEL_SYS,
	RF_LEVEL_UNKNOWN,
	RF_LEVEL_COUNT
};

/** "NVL", "PIX" ... "UNKNOWN"; never NULL. */
const char *rf_level_name(enum rf_level l);

/** Parse an upper-case PCIe level name (PIX ... UNKNOWN, not NVL); -EINVAL if it is none. */
int rf_level_parse(const char *s, enum rf_level *ret);

/** The same, also accepting "NVL" (GPU-to-GPU levels). */
int rf_level_parse_gpu(const char *s, enum rf_level *ret);

/** True when a is at least as good as b (NVL is better and UNKNOWN worse than everything). */
bool rf_level_at_least(enum rf_level a, enum rf_level b);

#endif
