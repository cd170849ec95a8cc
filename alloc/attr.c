/* Lookups in a device's attribute and capacity arrays (alloc/attr.h). The arrays are sorted by
 * name in strcmp order, so every lookup is a binary search; the split-name variants compare
 * against "domain" + '/' + "id" in place, without building the string. Pure, thread-safe. */
#include "alloc/attr.h"

#include <string.h>

/* strcmp(name, domain "/" id) without concatenating; domain and id may contain any byte. */
static int
cmp_split(const char *name, const char *domain, size_t domain_len, const char *id, size_t id_len)
{
	size_t total = domain_len + 1 + id_len;
	for (size_t k = 0; k < total; k++) {
		unsigned char want = k < domain_len    ? (unsigned char)domain[k]
				     : k == domain_len ? '/'
						       : (unsigned char)id[k - domain_len - 1];
		unsigned char have = (unsigned char)name[k];
		if (have != want)
			return have < want ? -1 : 1; /* also covers have == '\0' (name shorter) */
		if (have == '\0')
			return -1; /* want contained a NUL: name is shorter as a C string */
	}
	return name[total] == '\0' ? 0 : 1;
}

static int
cmp_name(const char *name, const char *key)
{
	return strcmp(name ? name : "", key);
}

const struct rf_attr *
rf_attr_find(const struct rf_attr *attrs, size_t n, const char *name)
{
	if (!attrs || !name)
		return NULL;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_name(attrs[mid].name, name);
		if (c == 0)
			return &attrs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct rf_attr *
rf_attr_find2(const struct rf_attr *attrs, size_t n, const char *domain, size_t domain_len,
	      const char *id, size_t id_len)
{
	if (!attrs || (!domain && domain_len) || (!id && id_len))
		return NULL;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_split(attrs[mid].name ? attrs[mid].name : "", domain, domain_len, id,
				  id_len);
		if (c == 0)
			return &attrs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct rf_capacity *
rf_capacity_find(const struct rf_capacity *caps, size_t n, const char *name)
{
	if (!caps || !name)
		return NULL;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_name(caps[mid].name, name);
		if (c == 0)
			return &caps[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct rf_capacity *
rf_capacity_find2(const struct rf_capacity *caps, size_t n, const char *domain, size_t domain_len,
		  const char *id, size_t id_len)
{
	if (!caps || (!domain && domain_len) || (!id && id_len))
		return NULL;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_split(caps[mid].name ? caps[mid].name : "", domain, domain_len, id,
				  id_len);
		if (c == 0)
			return &caps[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
