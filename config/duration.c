/* Go time.Duration syntax, kept in milliseconds.
 *
 * Parsing follows time.ParseDuration (sign, then one or more <number><unit> terms, a bare "0"),
 * computed exactly in nanoseconds with integers and rounded up to milliseconds at the end.
 * Formatting follows Duration.String(). Pure functions: safe from any thread. */
#include "config/duration.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 rf_u128;

#define NS_PER_MS 1000000ULL

struct unit {
	const char *name;
	uint64_t ns;
};

static const struct unit units[] = {
	{ "ns", 1ULL },
	{ "us", 1000ULL },
	{ "\xc2\xb5s", 1000ULL }, /* U+00B5 micro sign */
	{ "\xce\xbcs", 1000ULL }, /* U+03BC greek small letter mu */
	{ "ms", NS_PER_MS },
	{ "s", 1000ULL * NS_PER_MS },
	{ "m", 60ULL * 1000ULL * NS_PER_MS },
	{ "h", 3600ULL * 1000ULL * NS_PER_MS },
};

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const struct unit *
find_unit(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == len && memcmp(units[i].name, s, len) == 0)
			return &units[i];
	return NULL;
}

int
rf_duration_parse(const char *s, int64_t *ret_ms)
{
	rf_u128 total = 0; /* nanoseconds */
	bool neg = false;

	if (!s)
		return -EINVAL;
	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (strcmp(s, "0") == 0) {
		*ret_ms = 0;
		return 0;
	}
	if (*s == '\0')
		return -EINVAL;
	while (*s != '\0') {
		rf_u128 v = 0;
		uint64_t f = 0, scale = 1;
		bool pre = false, post = false, overflow = false, f_full = false;

		if (!(*s == '.' || is_digit(*s)))
			return -EINVAL;
		for (; is_digit(*s); s++) {
			pre = true;
			v = v * 10 + (unsigned)(*s - '0');
			if (v > INT64_MAX) {
				overflow = true;
				v = (rf_u128)INT64_MAX + 1; /* keep scanning without growing */
			}
		}
		if (*s == '.') {
			s++;
			for (; is_digit(*s); s++) {
				post = true;
				/* like Go, digits past 18 places of precision are ignored */
				if (f_full || scale >= 1000000000000000000ULL) {
					f_full = true;
					continue;
				}
				f = f * 10 + (unsigned)(*s - '0');
				scale *= 10;
			}
		}
		if (!pre && !post)
			return -EINVAL;
		const char *u = s;
		while (*s != '\0' && *s != '.' && !is_digit(*s))
			s++;
		const struct unit *unit = find_unit(u, (size_t)(s - u));
		if (!unit)
			return -EINVAL;
		if (overflow)
			return -ERANGE;
		v *= unit->ns;
		v += (rf_u128)f * unit->ns / scale; /* truncated, as Go */
		total += v;
		if (total > INT64_MAX)
			return -ERANGE;
	}
	if (neg && total != 0)
		return -EINVAL;
	*ret_ms = (int64_t)((total + NS_PER_MS - 1) / NS_PER_MS);
	return 0;
}

char *
rf_duration_format(int64_t ms, char *buf, size_t len)
{
	uint64_t mag = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
	const char *sign = ms < 0 ? "-" : "";

	if (!buf || len == 0)
		return buf;
	if (mag == 0) {
		snprintf(buf, len, "0s");
		return buf;
	}
	if (mag < 1000) {
		snprintf(buf, len, "%s%" PRIu64 "ms", sign, mag);
		return buf;
	}
	uint64_t secs = mag / 1000;
	unsigned frac = (unsigned)(mag % 1000);
	char fs[5] = ""; /* ".d", ".dd" or ".ddd", trailing zeros dropped */
	if (frac != 0) {
		unsigned width = 3;
		while (frac % 10 == 0) {
			frac /= 10;
			width--;
		}
		fs[0] = '.';
		for (unsigned i = width; i > 0; i--) {
			fs[i] = (char)('0' + frac % 10);
			frac /= 10;
		}
		fs[width + 1] = '\0';
	}
	if (secs >= 3600)
		snprintf(buf, len, "%s%" PRIu64 "h%um%u%ss", sign, secs / 3600,
			 (unsigned)(secs / 60 % 60), (unsigned)(secs % 60), fs);
	else if (secs >= 60)
		snprintf(buf, len, "%s%um%u%ss", sign, (unsigned)(secs / 60), (unsigned)(secs % 60),
			 fs);
	else
		snprintf(buf, len, "%s%u%ss", sign, (unsigned)secs, fs);
	return buf;
}
