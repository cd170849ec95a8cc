/* The version document: railfit's version and commit and the versions of the libraries it runs
 * with (`railfit version`, GET /version). */
#include "server/version.h"

#include <gnutls/gnutls.h>
#include <stdio.h>
#include <yaml.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "rf-build.h"

json_t *
rf_version_json(void)
{
	const char *gnutls = gnutls_check_version(NULL);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "version", RF_VERSION,
			 "commit", RF_COMMIT, "libraries", "libmicrohttpd", MHD_get_version(),
			 "gnutls", gnutls ? gnutls : "", "jansson", jansson_version_str(),
			 "libcurl", curl_version_info(CURLVERSION_NOW)->version, "hwloc",
			 RF_HWLOC_VERSION, "libyaml", yaml_get_version_string());
}
