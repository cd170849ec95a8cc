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

/* What the allocator of a version does with list-typed attributes (KEP-5491), from
 * kube-scheduler's DRAListTypeAttributes gate (kube.featureGates; reference/dra-allocator-1.36.md
 * 1.2 and 3.9). The other DRA gates need no key: railfit follows the fields the API server
 * serves, and it drops those of a gate that is off. */
struct rf_dra_list_rules {
	/* selectors see lists as CEL lists; false: a list attribute on a device is the
	 * "unsupported attribute value" CEL error (1.36 without the gate; 1.34-1.35 when read) */
	bool cel;
	/* matchAttribute and distinctAttribute compare sets (the experimental allocator's
	 * ListTypeAttributes: a non-empty running intersection, pairwise disjoint); false: scalars
	 * only, a list matches nothing after the first device */
	bool sets;
};

/**
 * The list rules of a version. gate: kube-scheduler runs with DRAListTypeAttributes=true.
 * library_feature: the allocator library's own ListTypeAttributes feature is on, whatever the
 * version's kube-scheduler derives from its gates (kube-scheduler 1.36 derives it from none:
 * kubernetes#139332 is 1.37 only; only a replay of upstream's suite, which calls the library
 * directly, sets it).
 */
struct rf_dra_list_rules rf_dra_list_rules(enum rf_dra_version v, bool gate, bool library_feature);

#endif
