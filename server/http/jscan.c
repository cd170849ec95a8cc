/* Validating JSON scanner (see jscan.h). What it accepts is a subset of what jansson's
 * json_loadb(JSON_REJECT_DUPLICATES) accepts, rule for rule: RFC 8259 tokens; no raw control
 * characters in strings; strictly valid UTF-8 (rf_utf8_decode: no overlong forms, surrogates or
 * code points above U+10FFFF); \u escapes with paired surrogates and never \u0000; integers that
 * fit a long long; reals that do not overflow a double; no duplicate keys in any object. It
 * refuses more than jansson where that keeps it simple (keys with escapes, deep nesting), and
 * the caller then lets jansson decide. No state besides the caller's struct. */
#include "server/http/jscan.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"
#include "config/utf8.h"
#include "server/http/gojson.h"

void
rf_jscan_init(struct rf_jscan *s, const char *buf, size_t len)
{
	*s = (struct rf_jscan){ .buf = buf, .len = len, .canon = true };
}

void
rf_jscan_release(struct rf_jscan *s)
{
	free(s->keys);
	s->keys = NULL;
	s->n_keys = s->cap_keys = 0;
}

static bool
fail(struct rf_jscan *s, int err)
{
	if (!s->err)
		s->err = err;
	return false;
}

static bool
is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* rf_jscan_ws() for the scanner's own use: inlined, since whitespace is rare in Go's output. */
static inline void
skip_ws(struct rf_jscan *s)
{
	if (s->pos >= s->len || !is_ws((unsigned char)s->buf[s->pos]))
		return;
	size_t p = s->pos;
	while (p < s->len && is_ws((unsigned char)s->buf[p]))
		p++;
	s->canon = false;
	s->pos = p;
}

void
rf_jscan_ws(struct rf_jscan *s)
{
	skip_ws(s);
}

int
rf_jscan_peek(const struct rf_jscan *s)
{
	if (s->err || s->pos >= s->len)
		return -1;
	return (unsigned char)s->buf[s->pos];
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at p (n bytes available) into *ret; false when they are not there. */
static bool
hex4(const char *p, size_t n, uint32_t *ret)
{
	if (n < 4)
		return false;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return false;
		v = (v << 4) | (uint32_t)h;
	}
	*ret = v;
	return true;
}

/* Whether json.Marshal writes code point cp as exactly the escape \u<hex> (lower-case hex). */
static bool
go_writes_u_escape(uint32_t cp, const char *hex)
{
	static const char digits[] = "0123456789abcdef";
	bool escaped =
		(cp < 0x20 && cp != '\b' && cp != '\f' && cp != '\n' && cp != '\r' && cp != '\t') ||
		cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029;
	if (!escaped)
		return false;
	for (int i = 0; i < 4; i++)
		if (hex[i] != digits[(cp >> (12 - 4 * i)) & 0xf])
			return false;
	return true;
}

/* One escape after the backslash at s->pos. */
static bool
scan_escape(struct rf_jscan *s)
{
	const char *b = s->buf;
	size_t p = s->pos + 1;
	if (p >= s->len)
		return fail(s, -EINVAL);
	switch (b[p]) {
	case '"':
	case '\\':
	case 'b':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		s->pos = p + 1;
		return true;
	case '/':
		s->canon = false; /* Go writes a plain / */
		s->pos = p + 1;
		return true;
	case 'u':
		break;
	default:
		return fail(s, -EINVAL);
	}
	uint32_t cp;
	if (!hex4(b + p + 1, s->len - p - 1, &cp))
		return fail(s, -EINVAL);
	p += 5;
	if (cp == 0)
		return fail(s, -EINVAL); /* jansson refuses \u0000 without JSON_ALLOW_NUL */
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(s, -EINVAL); /* a low surrogate alone */
	if (cp >= 0xd800 && cp <= 0xdbff) {
		uint32_t lo;
		if (p + 1 >= s->len || b[p] != '\\' || b[p + 1] != 'u' ||
		    !hex4(b + p + 2, s->len - p - 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return fail(s, -EINVAL);
		p += 6;
		s->canon = false; /* Go writes the character itself */
	} else if (!go_writes_u_escape(cp, b + s->pos + 2)) {
		s->canon = false;
	}
	s->pos = p;
	return true;
}

bool
rf_jscan_string(struct rf_jscan *s, struct rf_jscan_span *ret_raw, bool *ret_escaped)
{
	if (s->err)
		return false;
	const unsigned char *u = (const unsigned char *)s->buf;
	if (s->pos >= s->len || u[s->pos] != '"')
		return fail(s, -EINVAL);
	size_t start = ++s->pos;
	bool escaped = false;
	for (;;) {
		size_t p = s->pos + rf_gojson_plain_prefix(s->buf + s->pos, s->len - s->pos);
		s->pos = p;
		if (p >= s->len)
			return fail(s, -EINVAL);
		unsigned char c = u[p];
		if (c == '"')
			break;
		if (c == '\\') {
			escaped = true;
			if (!scan_escape(s))
				return false;
		} else if (c < 0x20) {
			return fail(s, -EINVAL);
		} else if (c < 0x80) {
			s->canon = false; /* < > &: Go writes \u003c ... */
			s->pos++;
		} else {
			uint32_t cp;
			size_t n = rf_utf8_decode(s->buf + p, s->len - p, &cp);
			if (n == 0)
				return fail(s, -EINVAL);
			if (cp == 0x2028 || cp == 0x2029)
				s->canon = false;
			s->pos += n;
		}
	}
	if (ret_raw)
		*ret_raw = (struct rf_jscan_span){ s->buf + start, s->pos - start };
	if (ret_escaped)
		*ret_escaped = escaped;
	s->pos++; /* the closing quote */
	return true;
}

size_t
rf_jscan_unescape(const char *raw, size_t len, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		if (raw[i] != '\\') {
			out[o++] = raw[i++];
			continue;
		}
		char e = raw[i + 1];
		i += 2;
		switch (e) {
		case 'b':
			out[o++] = '\b';
			continue;
		case 'f':
			out[o++] = '\f';
			continue;
		case 'n':
			out[o++] = '\n';
			continue;
		case 'r':
			out[o++] = '\r';
			continue;
		case 't':
			out[o++] = '\t';
			continue;
		case 'u':
			break;
		default: /* " \ / */
			out[o++] = e;
			continue;
		}
		uint32_t cp = 0;
		hex4(raw + i, len - i, &cp);
		i += 4;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo = 0;
			hex4(raw + i + 2, len - i - 2, &lo);
			i += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		o += rf_utf8_encode(cp, out + o);
	}
	return o;
}

static bool
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool
scan_number(struct rf_jscan *s)
{
	const unsigned char *u = (const unsigned char *)s->buf;
	size_t start = s->pos, p = s->pos;
	bool neg = false, real = false;
	if (p < s->len && u[p] == '-') {
		neg = true;
		p++;
	}
	size_t int_start = p;
	if (p < s->len && u[p] == '0') {
		p++;
	} else if (p < s->len && u[p] >= '1' && u[p] <= '9') {
		while (p < s->len && is_digit(u[p]))
			p++;
	} else {
		return fail(s, -EINVAL);
	}
	size_t int_digits = p - int_start;
	if (p < s->len && u[p] == '.') {
		real = true;
		p++;
		if (p >= s->len || !is_digit(u[p]))
			return fail(s, -EINVAL);
		while (p < s->len && is_digit(u[p]))
			p++;
	}
	if (p < s->len && (u[p] == 'e' || u[p] == 'E')) {
		real = true;
		p++;
		if (p < s->len && (u[p] == '+' || u[p] == '-'))
			p++;
		if (p >= s->len || !is_digit(u[p]))
			return fail(s, -EINVAL);
		while (p < s->len && is_digit(u[p]))
			p++;
	}
	s->pos = p;
	if (real) {
		/* jansson turns a real into a double and refuses one that overflows. */
		char tmp[64];
		size_t n = p - start;
		if (n >= sizeof(tmp))
			return fail(s, -EINVAL);
		memcpy(tmp, s->buf + start, n);
		tmp[n] = '\0';
		errno = 0;
		double d = strtod(tmp, NULL);
		if (isinf(d))
			return fail(s, -EINVAL);
		s->canon = false; /* Go writes its own shortest form */
		return true;
	}
	/* jansson keeps integers in a long long and refuses the ones that do not fit. */
	if (int_digits > 19)
		return fail(s, -EINVAL);
	if (int_digits == 19 &&
	    memcmp(s->buf + int_start, neg ? "9223372036854775808" : "9223372036854775807", 19) > 0)
		return fail(s, -EINVAL);
	if (neg && int_digits == 1 && u[int_start] == '0')
		s->canon = false; /* -0 is written 0 */
	return true;
}

static bool
scan_literal(struct rf_jscan *s, const char *lit, size_t n)
{
	if (s->len - s->pos < n || memcmp(s->buf + s->pos, lit, n) != 0)
		return fail(s, -EINVAL);
	s->pos += n;
	return true;
}

/* After a value inside a container, or at the end: what may follow a token. Catches "truex"
 * and "1x" early (jansson refuses them too). */
static bool
token_ends(const struct rf_jscan *s)
{
	if (s->pos >= s->len)
		return true;
	unsigned char c = (unsigned char)s->buf[s->pos];
	return is_ws(c) || c == ',' || c == ']' || c == '}';
}

static int
cmp_span(const void *a, const void *b)
{
	const struct rf_jscan_span *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->s, y->s, x->len);
}

static bool
same_span(const struct rf_jscan_span *x, const struct rf_jscan_span *y)
{
	return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

/* Close the object whose keys start at keys[first]: refuse duplicates, pop its keys. */
static bool
close_object(struct rf_jscan *s, size_t first)
{
	size_t n = s->n_keys - first;
	struct rf_jscan_span *k = n ? s->keys + first : NULL;
	if (n <= 16) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (same_span(&k[i], &k[j]))
					return fail(s, -EINVAL);
	} else {
		qsort(k, n, sizeof(*k), cmp_span);
		for (size_t i = 1; i < n; i++)
			if (same_span(&k[i], &k[i - 1]))
				return fail(s, -EINVAL);
	}
	s->n_keys = first;
	s->depth--;
	return true;
}

static bool
push_key(struct rf_jscan *s, struct rf_jscan_span key)
{
	if (s->n_keys == s->cap_keys) {
		/* At least 64 keys, then doubling; only a full array pays the call. */
		size_t need = s->n_keys < 64 ? 64 : s->n_keys + 1;
		if (rf_grow(&s->keys, &s->cap_keys, need, sizeof(*s->keys)) < 0)
			return fail(s, -ENOMEM);
	}
	s->keys[s->n_keys++] = key;
	return true;
}

size_t
rf_jscan_object_open(struct rf_jscan *s)
{
	if (s->err)
		return 0;
	if (s->pos >= s->len || s->buf[s->pos] != '{') {
		fail(s, -EINVAL);
		return 0;
	}
	if (s->depth >= RF_JSCAN_MAX_DEPTH) {
		fail(s, -EINVAL);
		return 0;
	}
	s->depth++;
	s->pos++;
	return s->n_keys + 1;
}

bool
rf_jscan_object_next(struct rf_jscan *s, size_t frame, struct rf_jscan_span *ret_key)
{
	if (s->err)
		return false;
	size_t first = frame - 1;
	skip_ws(s);
	if (s->pos >= s->len)
		return fail(s, -EINVAL);
	char c = s->buf[s->pos];
	if (c == '}') {
		s->pos++;
		close_object(s, first);
		return false;
	}
	if (s->n_keys > first) {
		if (c != ',')
			return fail(s, -EINVAL);
		s->pos++;
		skip_ws(s);
	}
	struct rf_jscan_span key;
	bool escaped;
	if (!rf_jscan_string(s, &key, &escaped))
		return false;
	if (escaped)
		return fail(s, -EINVAL); /* left to jansson: duplicates compare decoded keys */
	if (!push_key(s, key))
		return false;
	skip_ws(s);
	if (s->pos >= s->len || s->buf[s->pos] != ':')
		return fail(s, -EINVAL);
	s->pos++;
	skip_ws(s);
	*ret_key = key;
	return true;
}

bool
rf_jscan_array_open(struct rf_jscan *s)
{
	if (s->err)
		return false;
	if (s->pos >= s->len || s->buf[s->pos] != '[' || s->depth >= RF_JSCAN_MAX_DEPTH)
		return fail(s, -EINVAL);
	s->depth++;
	s->pos++;
	return true;
}

bool
rf_jscan_array_next(struct rf_jscan *s, size_t *count)
{
	if (s->err)
		return false;
	skip_ws(s);
	if (s->pos >= s->len)
		return fail(s, -EINVAL);
	char c = s->buf[s->pos];
	if (c == ']') {
		s->pos++;
		s->depth--;
		return false;
	}
	if (*count > 0) {
		if (c != ',')
			return fail(s, -EINVAL);
		s->pos++;
		skip_ws(s);
	}
	(*count)++;
	return true;
}

enum rf_jscan_type
rf_jscan_value(struct rf_jscan *s, struct rf_jscan_span *ret_span)
{
	if (s->err)
		return RF_JSCAN_ERROR;
	if (s->pos >= s->len) {
		fail(s, -EINVAL);
		return RF_JSCAN_ERROR;
	}
	size_t start = s->pos;
	enum rf_jscan_type t;
	switch (s->buf[s->pos]) {
	case '{': {
		size_t frame = rf_jscan_object_open(s);
		struct rf_jscan_span key;
		while (frame && rf_jscan_object_next(s, frame, &key))
			rf_jscan_value(s, NULL);
		t = RF_JSCAN_OBJECT;
		break;
	}
	case '[': {
		size_t count = 0;
		if (rf_jscan_array_open(s))
			while (rf_jscan_array_next(s, &count))
				rf_jscan_value(s, NULL);
		t = RF_JSCAN_ARRAY;
		break;
	}
	case '"':
		rf_jscan_string(s, NULL, NULL);
		t = RF_JSCAN_STRING;
		break;
	case 't':
		scan_literal(s, "true", 4);
		t = RF_JSCAN_TRUE;
		break;
	case 'f':
		scan_literal(s, "false", 5);
		t = RF_JSCAN_FALSE;
		break;
	case 'n':
		scan_literal(s, "null", 4);
		t = RF_JSCAN_NULL;
		break;
	default:
		scan_number(s);
		t = RF_JSCAN_NUMBER;
		break;
	}
	if (!s->err && !token_ends(s))
		fail(s, -EINVAL);
	if (s->err)
		return RF_JSCAN_ERROR;
	if (ret_span)
		*ret_span = (struct rf_jscan_span){ s->buf + start, s->pos - start };
	return t;
}
