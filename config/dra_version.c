/* kube.draVersion values and server versions (see dra_version.h). */
#include "config/dra_version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const minor_names[] = { [RF_DRA_1_34] = "1.34",
					   [RF_DRA_1_35] = "1.35",
					   [RF_DRA_1_36] = "1.36",
					   [RF_DRA_1_37] = "1.37" };

/* Decimal digits at *s (at most max_digits, no sign), advancing *s. -1 when there are none. */
static long
digits(const char **s, int max_digits)
{
	long v = 0;
	int n = 0;
	while (**s >= '0' && **s <= '9') {
		if (++n > max_digits)
			return -1;
		v = v * 10 + (**s - '0');
		(*s)++;
	}
	return n ? v : -1;
}

int
rf_dra_version_parse(const char *s, enum rf_dra_version *ret, int *ret_patch)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "auto") == 0) {
		*ret = RF_DRA_AUTO;
		*ret_patch = RF_DRA_PATCH_NEWEST;
		return 0;
	}
	for (int v = RF_DRA_1_34; v <= RF_DRA_NEWEST; v++) {
		size_t n = strlen(minor_names[v]);
		if (strncmp(s, minor_names[v], n) != 0)
			continue;
		const char *p = s + n;
		long patch = RF_DRA_PATCH_NEWEST;
		if (*p == '.') {
			p++;
			/* "1.36.02" is not a patch level Kubernetes publishes */
			if ((p[0] == '0' && p[1] >= '0' && p[1] <= '9') ||
			    (patch = digits(&p, 3)) < 0)
				return -EINVAL;
		}
		if (*p)
			return -EINVAL;
		*ret = (enum rf_dra_version)v;
		*ret_patch = (int)patch;
		return 0;
	}
	return -EINVAL;
}

const char *
rf_dra_version_format(enum rf_dra_version v, int patch, char *buf)
{
	if (v < RF_DRA_1_34 || v > RF_DRA_NEWEST)
		snprintf(buf, RF_DRA_VERSION_LEN, "auto");
	else if (patch < 0)
		snprintf(buf, RF_DRA_VERSION_LEN, "%s", minor_names[v]);
	else
		snprintf(buf, RF_DRA_VERSION_LEN, "%s.%d", minor_names[v], patch % 1000);
	return buf;
}

int
rf_dra_version_from_git(const char *git_version, enum rf_dra_version *ret, int *ret_patch,
			bool *ret_newer)
{
	const char *s = git_version;
	if (!s)
		return -EINVAL;
	if (*s == 'v')
		s++;
	long major = digits(&s, 2), minor = -1, patch = RF_DRA_PATCH_NEWEST;
	if (major != 1 || *s != '.')
		return -EINVAL;
	s++;
	if ((minor = digits(&s, 3)) < 0)
		return -EINVAL;
	if (*s == '.') {
		s++;
		if ((patch = digits(&s, 4)) < 0)
			return -EINVAL;
	}
	if (*s && *s != '-' && *s != '+')
		return -EINVAL;
	*ret_newer = false;
	if (minor < 34) {
		*ret = RF_DRA_1_34;
		*ret_patch = RF_DRA_PATCH_NEWEST;
	} else if (minor > 37) {
		*ret = RF_DRA_NEWEST;
		*ret_patch = RF_DRA_PATCH_NEWEST;
		*ret_newer = true;
	} else {
		*ret = (enum rf_dra_version)(RF_DRA_1_34 + (minor - 34));
		*ret_patch = patch > 999 ? 999 : (int)patch;
	}
	return 0;
}

struct rf_dra_list_rules
rf_dra_list_rules(enum rf_dra_version v, bool gate, bool library_feature)
{
	struct rf_dra_list_rules r = { 0 };
	/* the gate and KEP-5491 exist from 1.36 */
	if (v < RF_DRA_1_36)
		return r;
	/* 1.36 passes the gate to CEL (EnableListTypeAttributes), not to AllocatorFeatures();
	 * 1.37 converts lists whatever the gate (DM 5afedd9) and passes it to both (#139332) */
	r.cel = v >= RF_DRA_1_37 || gate || library_feature;
	r.sets = (v >= RF_DRA_1_37 && gate) || library_feature;
	return r;
}
