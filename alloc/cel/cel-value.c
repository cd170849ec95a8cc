/* Value helpers of the CEL evaluator: semantic versions (blang/semver rules, as Kubernetes'
 * semver library), Go-style double formatting and the locale objects that make number formatting
 * and regexes independent of the process locale. Pure functions; the locale objects are created
 * once (pthread_once). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel-private.h"

const char *
cel_type_name(enum cel_type t)
{
	switch (t) {
	case CEL_NULL:
		return "null_type";
	case CEL_BOOL:
		return "bool";
	case CEL_INT:
		return "int";
	case CEL_UINT:
		return "uint";
	case CEL_DOUBLE:
		return "double";
	case CEL_STRING:
		return "string";
	case CEL_LIST:
		return "list";
	case CEL_MAP:
		return "map";
	case CEL_QUANTITY:
		return "quantity";
	case CEL_SEMVER:
		return "semver";
	}
	return "unknown";
}

/* ---- locales -------------------------------------------------------------------------------- */

static pthread_once_t locale_once = PTHREAD_ONCE_INIT;
static locale_t loc_c;
static locale_t loc_utf8;

static void
locale_init(void)
{
	loc_c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	loc_utf8 = newlocale(LC_CTYPE_MASK | LC_COLLATE_MASK, "C.UTF-8", (locale_t)0);
	if (!loc_utf8)
		loc_utf8 = newlocale(LC_CTYPE_MASK | LC_COLLATE_MASK, "C.utf8", (locale_t)0);
}

locale_t
cel_locale_c(void)
{
	pthread_once(&locale_once, locale_init);
	return loc_c;
}

locale_t
cel_locale_utf8(void)
{
	pthread_once(&locale_once, locale_init);
	return loc_utf8;
}

/* ---- semver --------------------------------------------------------------------------------- */

static bool
is_alnum_hyphen(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-';
}

static bool
all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int
parse_u64(const char *s, size_t n, uint64_t *ret)
{
	uint64_t v = 0;
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* Dot-separated identifiers of [0-9A-Za-z-], none empty; numeric ones (prerelease only) without
 * leading zeros and within uint64. */
static int
check_idents(const char *s, size_t n, bool numeric_rules, const char **ret_msg)
{
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_alnum_hyphen(s[i])) {
				*ret_msg = "invalid character in prerelease or build identifier";
				return -EINVAL;
			}
			continue;
		}
		size_t len = i - start;
		if (len == 0) {
			*ret_msg = "empty prerelease or build identifier";
			return -EINVAL;
		}
		if (numeric_rules && all_digits(s + start, len)) {
			uint64_t v;
			if (len > 1 && s[start] == '0') {
				*ret_msg = "numeric prerelease identifier has leading zeroes";
				return -EINVAL;
			}
			if (parse_u64(s + start, len, &v) != 0) {
				*ret_msg = "numeric prerelease identifier out of range";
				return -EINVAL;
			}
		}
		start = i + 1;
	}
	return 0;
}

int
cel_semver_parse(const char *s, size_t len, struct cel_semver *ret, const char **ret_msg)
{
	struct cel_semver v = { 0 };
	const char *msg = NULL;
	if (len == 0) {
		*ret_msg = "version string empty";
		return -EINVAL;
	}
	/* build metadata: after the first '+' */
	size_t end = len;
	const char *plus = memchr(s, '+', len);
	if (plus) {
		end = (size_t)(plus - s);
		if (check_idents(plus + 1, len - end - 1, false, &msg) != 0) {
			*ret_msg = msg;
			return -EINVAL;
		}
	}
	/* major.minor.patch[-pre] */
	const char *p = s;
	size_t rem = end;
	uint64_t nums[3];
	for (int k = 0; k < 3; k++) {
		size_t n = 0;
		while (n < rem && p[n] >= '0' && p[n] <= '9')
			n++;
		if (n == 0) {
			*ret_msg = "version must be MAJOR.MINOR.PATCH with decimal numbers";
			return -EINVAL;
		}
		if (n > 1 && p[0] == '0') {
			*ret_msg = "version number has leading zeroes";
			return -EINVAL;
		}
		if (parse_u64(p, n, &nums[k]) != 0) {
			*ret_msg = "version number out of range";
			return -EINVAL;
		}
		p += n;
		rem -= n;
		if (k < 2) {
			if (rem == 0 || *p != '.') {
				*ret_msg = "version must be MAJOR.MINOR.PATCH with decimal numbers";
				return -EINVAL;
			}
			p++;
			rem--;
		}
	}
	if (rem > 0) {
		if (*p != '-') {
			*ret_msg = "version must be MAJOR.MINOR.PATCH with decimal numbers";
			return -EINVAL;
		}
		if (check_idents(p + 1, rem - 1, true, &msg) != 0) {
			*ret_msg = msg;
			return -EINVAL;
		}
		v.pre = p + 1;
		v.pre_len = rem - 1;
	}
	v.major = nums[0];
	v.minor = nums[1];
	v.patch = nums[2];
	*ret = v;
	return 0;
}

int
cel_semver_parse_normalized(const char *s, size_t len, char *buf, struct cel_semver *ret,
			    const char **ret_msg)
{
	if (len > 0 && s[0] == 'v') {
		s++;
		len--;
	}
	/* strings.SplitN(s, ".", 3) */
	const char *parts[3];
	size_t plen[3];
	size_t np = 0, start = 0;
	for (size_t i = 0; i < len && np < 2; i++) {
		if (s[i] == '.') {
			parts[np] = s + start;
			plen[np++] = i - start;
			start = i + 1;
		}
	}
	parts[np] = s + start;
	plen[np++] = len - start;
	size_t o = 0;
	for (size_t k = 0; k < np; k++) {
		const char *q = parts[k];
		size_t n = plen[k];
		if (k > 0)
			buf[o++] = '.';
		if (n > 1) {
			while (n > 0 && *q == '0') {
				q++;
				n--;
			}
			if (n == 0 || *q < '0' || *q > '9')
				buf[o++] = '0';
		}
		memcpy(buf + o, q, n);
		o += n;
	}
	if (np < 3) {
		if (memchr(parts[np - 1], '+', plen[np - 1]) ||
		    memchr(parts[np - 1], '-', plen[np - 1])) {
			*ret_msg = "short version cannot contain PreRelease/Build meta data";
			return -EINVAL;
		}
		for (size_t k = np; k < 3; k++) {
			buf[o++] = '.';
			buf[o++] = '0';
		}
	}
	buf[o] = '\0';
	return cel_semver_parse(buf, o, ret, ret_msg);
}

static int
cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

int
cel_semver_cmp(const struct cel_semver *a, const struct cel_semver *b)
{
	int c = cmp_u64(a->major, b->major);
	if (c == 0)
		c = cmp_u64(a->minor, b->minor);
	if (c == 0)
		c = cmp_u64(a->patch, b->patch);
	if (c != 0)
		return c;
	if (!a->pre && !b->pre)
		return 0;
	if (!a->pre)
		return 1; /* a release is greater than any of its prereleases */
	if (!b->pre)
		return -1;
	size_t i = 0, j = 0;
	for (;;) {
		bool a_end = i > a->pre_len, b_end = j > b->pre_len;
		if (a_end && b_end)
			return 0;
		if (a_end)
			return -1;
		if (b_end)
			return 1;
		size_t ai = i, bj = j;
		while (ai < a->pre_len && a->pre[ai] != '.')
			ai++;
		while (bj < b->pre_len && b->pre[bj] != '.')
			bj++;
		const char *ap = a->pre + i, *bp = b->pre + j;
		size_t al = ai - i, bl = bj - j;
		bool an = all_digits(ap, al), bn = all_digits(bp, bl);
		if (an && bn) {
			uint64_t x = 0, y = 0;
			parse_u64(ap, al, &x);
			parse_u64(bp, bl, &y);
			c = cmp_u64(x, y);
		} else if (an) {
			c = -1;
		} else if (bn) {
			c = 1;
		} else {
			size_t m = al < bl ? al : bl;
			c = memcmp(ap, bp, m);
			c = c < 0 ? -1 : c > 0 ? 1 : cmp_u64(al, bl);
		}
		if (c != 0)
			return c;
		i = ai + 1;
		j = bj + 1;
	}
}

/* ---- doubles -------------------------------------------------------------------------------- */

void
cel_format_double(double d, char *buf, size_t len)
{
	if (isnan(d)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, len, d > 0 ? "+Inf" : "-Inf");
		return;
	}
	locale_t lc = cel_locale_c();
	locale_t old = lc ? uselocale(lc) : (locale_t)0;
	/* The shortest digit string that round-trips, then Go's choice for 'g' with the shortest
	 * precision: exponent form when the decimal exponent is < -4 or >= 6. */
	char tmp[64];
	int prec = 0;
	for (prec = 0; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp = [-]D.DDDDe[+-]XX */
	const char *e = strchr(tmp, 'e');
	int exp = e ? (int)strtol(e + 1, NULL, 10) : 0;
	if (d == 0)
		exp = 0;
	if (exp < -4 || exp >= 6) {
		snprintf(buf, len, "%.*e", prec, d);
	} else {
		int frac = prec - exp;
		if (frac < 0)
			frac = 0;
		snprintf(buf, len, "%.*f", frac, d);
	}
	if (lc)
		uselocale(old);
}
