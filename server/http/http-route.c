/* The route table: the route a method and path go to, the methods a known path allows (405), and
 * the list of routes a 404 names. The table is read-only; any thread. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "server/http/http-private.h"

static bool
method_matches(const char *route_method, const char *method)
{
	if (!route_method)
		return true;
	if (strcmp(route_method, method) == 0)
		return true;
	/* HEAD is a GET without the body (MHD drops the body). */
	return strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0;
}

static bool
path_matches(const struct rf_http_route *rt, const char *path)
{
	if (!rt->path)
		return false;
	if (rt->prefix)
		return strncmp(path, rt->path, strlen(rt->path)) == 0;
	return strcmp(path, rt->path) == 0;
}

const struct rf_http_route *
rf_http_route_find(const struct rf_http_route *routes, size_t n_routes, const char *method,
		   const char *path, bool *ret_known, char *allow, size_t allow_len)
{
	bool known = false;
	size_t pos = 0;
	allow[0] = '\0';
	for (size_t i = 0; i < n_routes; i++) {
		const struct rf_http_route *rt = &routes[i];
		if (!path_matches(rt, path))
			continue;
		if (method_matches(rt->method, method))
			return rt;
		known = true;
		const char *m = rt->method;
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1) {
				if (strcmp(rt->method, "GET") != 0)
					break;
				m = "HEAD";
			}
			/* Skip methods already listed. */
			bool dup = false;
			for (const char *p = allow; (p = strstr(p, m)) != NULL; p += strlen(m)) {
				size_t ml = strlen(m);
				if ((p == allow || p[-1] == ' ') &&
				    (p[ml] == ',' || p[ml] == '\0')) {
					dup = true;
					break;
				}
			}
			if (dup)
				continue;
			int n = snprintf(allow + pos, allow_len - pos, "%s%s", pos ? ", " : "", m);
			if (n > 0 && (size_t)n < allow_len - pos)
				pos += (size_t)n;
		}
	}
	*ret_known = known;
	return NULL;
}

/* "GET /healthz, POST /filter, GET /debug/nodes/..." (malloc'd), or NULL on OOM. */
char *
rf_http_describe_routes(const struct rf_http_route *routes, size_t n)
{
	struct rf_strbuf b = { 0 };
	for (size_t i = 0; i < n; i++)
		rf_strbuf_printf(&b, "%s%s %s%s", i ? ", " : "",
				 routes[i].method ? routes[i].method : "*",
				 routes[i].path ? routes[i].path : "", routes[i].prefix ? "*" : "");
	return rf_strbuf_steal(&b);
}
