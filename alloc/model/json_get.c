/* Small jansson accessors for reading Kubernetes objects (see json_get.h). Pure functions. */
#include "alloc/model/json_get.h"

#include <string.h>

const char *
rf_jstr(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

const json_t *
rf_jpath(const json_t *obj, const char *path)
{
	char key[128];
	const char *p = path;
	while (obj && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		obj = json_object_get(obj, key);
		p += n + (dot ? 1 : 0);
	}
	return obj;
}

long long
rf_jint(const json_t *obj, const char *key, long long def)
{
	const json_t *v = json_object_get(obj, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == (double)(long long)d)
			return (long long)d;
	}
	return def;
}

bool
rf_jbool(const json_t *obj, const char *key, bool def)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

bool
rf_jarray_holds(const json_t *arr, const json_t *v)
{
	for (size_t i = 0; i < json_array_size(arr); i++)
		if (json_array_get(arr, i) == v)
			return true;
	return false;
}
