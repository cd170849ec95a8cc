/* The locality vocabulary of nvidia-smi topo -m, best first (DESIGN section 5). It lives in config/
 * because configuration names levels (filter.minAlignment, scoring.levels); topology/ computes
 * them. */
#ifndef RF_CONFIG_LEVEL_H
#define RF_CONFIG_LEVEL_H

#include <stdbool.h>

enum rf_level {
	RF_LEVEL_PIX = 0,
	RF_LEVEL_PXB,
	RF_LEVEL_PHB,
	RF_LEVEL_NODE,
	RF_LEVEL_SYS,
	RF_LEVEL_UNKNOWN,
	RF_LEVEL_COUNT
};

/** "PIX" ... "UNKNOWN"; never NULL. */
const char *rf_level_name(enum rf_level l);

/** Parse an upper-case level name; -EINVAL if it is none. */
int rf_level_parse(const char *s, enum rf_level *ret);

/** True when a is at least as good as b (UNKNOWN is worse than everything). */
bool rf_level_at_least(enum rf_level a, enum rf_level b);

#endif
