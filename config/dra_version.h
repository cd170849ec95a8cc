/* The Kubernetes releases whose DRA allocator railfit mirrors (reference/dra-allocator.md for
 * 1.34/1.35, reference/dra-allocator-1.36.md for 1.36/1.37): kube.draVersion values ("auto",
 * "1.36", "1.36.2"), the rules a server's /version gitVersion selects, and the rule switches that
 * differ within a minor. Pure logic. */
#ifndef RF_CONFIG_DRA_VERSION_H
#define RF_CONFIG_DRA_VERSION_H

#include <stdbool.h>
#include <stddef.h>

enum rf_dra_version { RF_DRA_AUTO, RF_DRA_1_34, RF_DRA_1_35, RF_DRA_1_36, RF_DRA_1_37 };

#define RF_DRA_NEWEST       RF_DRA_1_37
#define RF_DRA_PATCH_NEWEST (-1) /* no patch level given: the newest one railfit knows */
#define RF_DRA_VERSION_LEN  16   /* "1.36.99" and its NUL, with room */

/**
 * Parse a kube.draVersion value: "auto", "1.34" .. "1.37", or one of those with a patch level
 * ("1.36.2", 0..999). *ret_patch is RF_DRA_PATCH_NEWEST without one.
 * @return 0 or -EINVAL.
 */
int rf_dra_version_parse(const char *s, enum rf_dra_version *ret, int *ret_patch);

/** "auto", "1.36" or "1.36.2" into buf (RF_DRA_VERSION_LEN bytes); returns buf. */
const char *rf_dra_version_format(enum rf_dra_version v, int patch, char *buf);

/**
 * The rules for a server's gitVersion ("v1.36.1", "v1.37.0-alpha.2", "v1.36.2-gke.1100"): its
 * minor and patch; a server older than 1.34 gets the 1.34 rules, one newer than the newest known
 * minor gets the newest rules with *ret_newer set (the caller warns once).
 * @return 0, or -EINVAL when git_version is not "v<major>.<minor>[.<patch>]...".
 */
int rf_dra_version_from_git(const char *git_version, enum rf_dra_version *ret, int *ret_patch,
			    bool *ret_newer);

#endif
