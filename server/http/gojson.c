/* Go encoding/json output (see gojson.h). No state: everything goes into the caller's buffer.
 * Strings take a fast path when they hold only ASCII that Go writes as it is (node names,
 * most messages): one copy. Anything else goes through rf_escape_json (server/escape.h), the one
 * implementation of Go's escaping rules. */
#include "server/http/gojson.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "server/http/escape.h"

static void
put(void *ctx, const char *s, size_t n)
{
	rf_strbuf_putn(ctx, s, n);
}

const bool rf_gojson_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
	1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, /* 0x30 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x40 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x60 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x70 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x80 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x90 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xa0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xb0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xc0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xd0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xe0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0xf0 */
};

size_t
rf_gojson_plain_prefix(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
#ifdef __SSE2__
	/* 16 bytes at a time: a signed compare with 0x20 catches both controls and bytes >= 0x80.
	 */
	const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'),
		      bslash = _mm_set1_epi8('\\'), lt = _mm_set1_epi8('<'),
		      gt = _mm_set1_epi8('>'), amp = _mm_set1_epi8('&');
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
		__m128i m = _mm_or_si128(
			_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, quote)),
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, bslash), _mm_cmpeq_epi8(x, lt)),
				     _mm_or_si128(_mm_cmpeq_epi8(x, gt), _mm_cmpeq_epi8(x, amp))));
		int bits = _mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
	}
#endif
	while (i < n && rf_gojson_plain[u[i]])
		i++;
	return i;
}

void
rf_gojson_string(struct rf_strbuf *b, const char *s, size_t n)
{
	if (rf_gojson_plain_prefix(s, n) < n) {
		/* Go's appendString with escapeHTML (json.Marshal's default). */
		rf_escape_json(s, n, RF_ESCAPE_GO_JSON, put, b);
		return;
	}
	rf_strbuf_putc(b, '"');
	rf_strbuf_putn(b, s, n);
	rf_strbuf_putc(b, '"');
}

size_t
rf_gojson_fmt_int(char *out, long long v)
{
	char tmp[24];
	char *p = tmp + sizeof(tmp);
	/* Negate in unsigned arithmetic: LLONG_MIN has no positive counterpart. */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	size_t n = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(out, p, n);
	return n;
}

void
rf_gojson_int(struct rf_strbuf *b, long long v)
{
	char tmp[24];
	rf_strbuf_putn(b, tmp, rf_gojson_fmt_int(tmp, v));
}

/* Shortest decimal digits that round-trip d (d finite, > 0): digits without a point in dig,
 * and the decimal exponent of the first digit. */
static void
shortest_digits(double d, char *dig, size_t diglen, int *ret_exp)
{
	char tmp[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp is d[.ddd]e[+-]XX */
	size_t k = 0;
	const char *p = tmp;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && k + 1 < diglen)
			dig[k++] = *p;
	dig[k] = '\0';
	*ret_exp = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
	/* Trailing zeros carry no information. */
	while (k > 1 && dig[k - 1] == '0')
		dig[--k] = '\0';
}

/* Go's floatEncoder for float64: 'f' format between 1e-6 and 1e21, else 'e' with a
 * two-digit-minimum exponent whose "e-0X" is shortened to "e-X". */
static void
gb_real(struct rf_strbuf *b, double d)
{
	if (!isfinite(d)) {
		rf_strbuf_puts(b, "null");
		return;
	}
	if (d == 0) {
		rf_strbuf_puts(b, signbit(d) ? "-0" : "0");
		return;
	}
	if (d < 0)
		rf_strbuf_putc(b, '-');
	double a = fabs(d);
	char dig[32];
	int e;
	shortest_digits(a, dig, sizeof(dig), &e);
	size_t nd = strlen(dig);
	if (a < 1e-6 || a >= 1e21) {
		rf_strbuf_putc(b, dig[0]);
		if (nd > 1) {
			rf_strbuf_putc(b, '.');
			rf_strbuf_puts(b, dig + 1);
		}
		char ex[16];
		if (e < 0 && e > -10)
			snprintf(ex, sizeof(ex), "e-%d", -e);
		else
			snprintf(ex, sizeof(ex), "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
		rf_strbuf_puts(b, ex);
		return;
	}
	if (e < 0) {
		rf_strbuf_puts(b, "0.");
		for (int z = 0; z < -e - 1; z++)
			rf_strbuf_putc(b, '0');
		rf_strbuf_puts(b, dig);
		return;
	}
	/* e >= 0: integer part is the first e+1 digits (zero padded). */
	size_t ip = (size_t)e + 1;
	if (nd <= ip) {
		rf_strbuf_puts(b, dig);
		for (size_t z = nd; z < ip; z++)
			rf_strbuf_putc(b, '0');
	} else {
		rf_strbuf_putn(b, dig, ip);
		rf_strbuf_putc(b, '.');
		rf_strbuf_puts(b, dig + ip);
	}
}

void
rf_gojson_value(struct rf_strbuf *b, const json_t *j)
{
	if (b->oom)
		return;
	if (!j) {
		rf_strbuf_puts(b, "null");
		return;
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		rf_strbuf_putc(b, '{');
		bool first = true;
		void *it = json_object_iter((json_t *)j);
		while (it) {
			if (!first)
				rf_strbuf_putc(b, ',');
			first = false;
			rf_gojson_string(b, json_object_iter_key(it), json_object_iter_key_len(it));
			rf_strbuf_putc(b, ':');
			rf_gojson_value(b, json_object_iter_value(it));
			it = json_object_iter_next((json_t *)j, it);
		}
		rf_strbuf_putc(b, '}');
		break;
	}
	case JSON_ARRAY: {
		rf_strbuf_putc(b, '[');
		size_t n = json_array_size(j);
		for (size_t i = 0; i < n; i++) {
			if (i)
				rf_strbuf_putc(b, ',');
			rf_gojson_value(b, json_array_get(j, i));
		}
		rf_strbuf_putc(b, ']');
		break;
	}
	case JSON_STRING:
		rf_gojson_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		rf_gojson_int(b, json_integer_value(j));
		break;
	case JSON_REAL:
		gb_real(b, json_real_value(j));
		break;
	case JSON_TRUE:
		rf_strbuf_puts(b, "true");
		break;
	case JSON_FALSE:
		rf_strbuf_puts(b, "false");
		break;
	case JSON_NULL:
	default:
		rf_strbuf_puts(b, "null");
	}
}

char *
rf_json_dump_go(const json_t *j, size_t *ret_len)
{
	struct rf_strbuf b = { 0 };
	rf_gojson_value(&b, j);
	size_t len = b.len;
	char *text = rf_strbuf_steal(&b);
	if (text && ret_len)
		*ret_len = len;
	return text;
}
