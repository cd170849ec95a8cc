/* Locality level names (DESIGN section 5). Constant tables only: safe from any thread. */
#include "config/level.h"

#include <errno.h>
#include <string.h>

static const char *const level_names[RF_LEVEL_COUNT] = {
	[RF_LEVEL_PIX] = "PIX",   [RF_LEVEL_PXB] = "PXB", [RF_LEVEL_PHB] = "PHB",
	[RF_LEVEL_NODE] = "NODE", [RF_LEVEL_SYS] = "SYS", [RF_LEVEL_UNKNOWN] = "UNKNOWN",
};

const char *
rf_level_name(enum rf_level l)
{
	if (l == RF_LEVEL_NVL)
		return "NVL";
	if ((unsigned)l >= RF_LEVEL_COUNT)
		return "UNKNOWN";
	return level_names[l];
}

int
rf_level_parse(const char *s, enum rf_level *ret)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < RF_LEVEL_COUNT; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*ret = (enum rf_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

int
rf_level_parse_gpu(const char *s, enum rf_level *ret)
{
	if (s && strcmp(s, "NVL") == 0) {
		*ret = RF_LEVEL_NVL;
		return 0;
	}
	return rf_level_parse(s, ret);
}

/* NVL ranks 0, PIX 1, ... UNKNOWN 6; out-of-range values count as UNKNOWN */
static int
rank(enum rf_level l)
{
	if (l == RF_LEVEL_NVL)
		return 0;
	if ((int)l < 0 || (int)l >= RF_LEVEL_COUNT)
		return RF_LEVEL_UNKNOWN + 1;
	return (int)l + 1;
}

bool
rf_level_at_least(enum rf_level a, enum rf_level b)
{
	/* best first: a smaller rank is a better level */
	return rank(a) <= rank(b);
}
