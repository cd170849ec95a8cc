/* Lookups in a device's attribute and capacity arrays (alloc/attr.h). The arrays are sorted by
 * name in strcmp order, so every lookup is a binary search; the split-name variants compare
 * against "domain" + '/' + "id" in place, without building the string. Pure, thread-safe. */
#include "alloc/cel/attr.h"

#include <stddef.h>
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

/* What a lookup searches for: a whole name, or (name == NULL) domain "/" id. */
struct name_key {
	const char *name;
	const char *domain, *id;
	size_t domain_len, id_len;
};

static int
cmp_key(const char *name, const struct name_key *k)
{
	if (k->name)
		return cmp_name(name, k->name);
	return cmp_split(name ? name : "", k->domain, k->domain_len, k->id, k->id_len);
}

/* The one binary search: base holds n elements of size stride, each starting with its
 * const char *name, sorted by name in strcmp order. */
static const void *
find_sorted(const void *base, size_t n, size_t stride, const struct name_key *k)
{
	const char *p = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *name;
		memcpy(&name, p + mid * stride, sizeof(name));
		int c = cmp_key(name, k);
		if (c == 0)
			return p + mid * stride;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

_Static_assert(offsetof(struct rf_attr, name) == 0, "find_sorted reads the name first");
_Static_assert(offsetof(struct rf_capacity, name) == 0, "find_sorted reads the name first");

const struct rf_attr *
rf_attr_find(const struct rf_attr *attrs, size_t n, const char *name)
{
	if (!attrs || !name)
		return NULL;
	return find_sorted(attrs, n, sizeof(*attrs), &(struct name_key){ .name = name });
}

const struct rf_attr *
rf_attr_find2(const struct rf_attr *attrs, size_t n, const char *domain, size_t domain_len,
	      const char *id, size_t id_len)
{
	if (!attrs || (!domain && domain_len) || (!id && id_len))
		return NULL;
	return find_sorted(
		attrs, n, sizeof(*attrs),
		&(struct name_key){
			.domain = domain, .domain_len = domain_len, .id = id, .id_len = id_len });
}

const struct rf_capacity *
rf_capacity_find(const struct rf_capacity *caps, size_t n, const char *name)
{
	if (!caps || !name)
		return NULL;
	return find_sorted(caps, n, sizeof(*caps), &(struct name_key){ .name = name });
}

const struct rf_capacity *
rf_capacity_find2(const struct rf_capacity *caps, size_t n, const char *domain, size_t domain_len,
		  const char *id, size_t id_len)
{
	if (!caps || (!domain && domain_len) || (!id && id_len))
		return NULL;
	return find_sorted(
		caps, n, sizeof(*caps),
		&(struct name_key){
			.domain = domain, .domain_len = domain_len, .id = id, .id_len = id_len });
}
