/* UTF-8 decoding, validation, encoding and trimming (see utf8.h). Pure functions over the
 * caller's bytes: no state, safe from any thread. */
#include "config/utf8.h"

#include <string.h>

size_t
rf_utf8_decode(const char *s, size_t n, uint32_t *ret_cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80) {
		*ret_cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return len;
}

size_t
rf_utf8_valid_prefix(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		uint32_t cp;
		size_t n = rf_utf8_decode(s + i, len - i, &cp);
		if (n == 0)
			break;
		i += n;
	}
	return i;
}

size_t
rf_utf8_count(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

size_t
rf_utf8_encode(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

void
rf_utf8_trim(char *s)
{
	size_t n = strlen(s), i = n, back = 0;
	/* walk back over continuation bytes to the lead byte of the last sequence */
	while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) {
		i--;
		back++;
	}
	if (i == 0)
		return;
	unsigned char lead = (unsigned char)s[i - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (lead >= 0x80 && need != back + 1)
		s[i - 1] = 0; /* incomplete (or stray) sequence: drop it */
}
