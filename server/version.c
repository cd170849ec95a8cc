/* The version document: railfit's version and commit and the versions of the libraries it runs
 * with (`railfit version`, GET /version). */
#include "server/version.h"

#include <stdio.h>
#include <yaml.h>

#include <curl/curl.h>
#include <hwloc.h>
#include <microhttpd.h>

#include "rf-build.h"

json_t *
rf_version_json(void)
{
	char hw[32], yv[32];
	unsigned hv = hwloc_get_api_version();
	snprintf(hw, sizeof(hw), "%u.%u.%u", hv >> 16, (hv >> 8) & 0xff, hv & 0xff);
	snprintf(yv, sizeof(yv), "%s", yaml_get_version_string());
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "version", RF_VERSION, "commit",
			 RF_COMMIT, "libraries", "libmicrohttpd", MHD_get_version(), "jansson",
			 JANSSON_VERSION, "libcurl", curl_version_info(CURLVERSION_NOW)->version,
			 "hwloc", hw, "libyaml", yv);
}
