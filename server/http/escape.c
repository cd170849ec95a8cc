/* JSON and Go-quoted string escaping (see escape.h). Pure functions: the only state is the
 * caller's buffer behind put. */
#include "server/http/escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "config/utf8.h"

static const char hexd[] = "0123456789abcdef";

/* Bytes that need a look: 1 in every JSON string (control characters, '"', '\\', non-ASCII for
 * UTF-8 validation), 2 also in Go's (the HTML characters '<', '>', '&'). Runs of other bytes are
 * copied in one put. */
#define LOOK_JSON 1
#define LOOK_GO   2
/* clang-format off */
static const unsigned char look[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* clang-format on */

/* The escape of ASCII byte c in a JSON string, written to e (>= 6 bytes); 0 if c stays. */
static size_t
json_escape_ascii(unsigned char c, bool go, char *e)
{
	if (c >= 0x20 && c != '"' && c != '\\' && !(go && (c == '<' || c == '>' || c == '&')))
		return 0;
	char named = 0;
	switch (c) {
	case '"':
	case '\\':
		named = (char)c;
		break;
	case '\n':
		named = 'n';
		break;
	case '\r':
		named = 'r';
		break;
	case '\t':
		named = 't';
		break;
	case '\b':
		named = go ? 'b' : 0;
		break;
	case '\f':
		named = go ? 'f' : 0;
		break;
	default:
		break;
	}
	e[0] = '\\';
	if (named) {
		e[1] = named;
		return 2;
	}
	e[1] = 'u';
	e[2] = '0';
	e[3] = '0';
	e[4] = hexd[c >> 4];
	e[5] = hexd[c & 0xf];
	return 6;
}

void
rf_escape_json(const char *s, size_t n, unsigned flags, rf_escape_put_fn *put, void *ctx)
{
	const unsigned char *p = (const unsigned char *)s;
	bool go = flags & RF_ESCAPE_GO_JSON;
	const unsigned char mask = go ? LOOK_JSON | LOOK_GO : LOOK_JSON;
	size_t start = 0, i = 0;
	put(ctx, "\"", 1);
	while (i < n) {
		if (!(look[p[i]] & mask)) {
			i++;
			continue;
		}
		char e[6];
		size_t el;
		size_t adv = 1;
		if (p[i] < 0x80) {
			el = json_escape_ascii(p[i], go, e);
		} else {
			uint32_t cp = 0;
			size_t sl = rf_utf8_decode(s + i, n - i, &cp);
			if (sl == 0) {
				el = 6;
				memcpy(e, "\\ufffd", 6);
			} else if (go && (cp == 0x2028 || cp == 0x2029)) {
				el = 6;
				memcpy(e, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
				adv = sl;
			} else {
				el = 0;
				adv = sl;
			}
		}
		if (el == 0) {
			i += adv;
			continue;
		}
		put(ctx, s + start, i - start);
		put(ctx, e, el);
		i += adv;
		start = i;
	}
	put(ctx, s + start, n - start);
	put(ctx, "\"", 1);
}

void
rf_escape_go_quote(const char *s, size_t n, rf_escape_put_fn *put, void *ctx)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = 0, i = 0;
	put(ctx, "\"", 1);
	while (i < n) {
		unsigned char c = p[i];
		char e[4] = { '\\', 0, 0, 0 };
		size_t el = 2;
		if (c >= 0x80) {
			uint32_t cp = 0;
			size_t sl = rf_utf8_decode(s + i, n - i, &cp);
			if (sl > 0) {
				i += sl;
				continue;
			}
			el = 0;
		} else {
			switch (c) {
			case '"':
			case '\\':
				e[1] = (char)c;
				break;
			case '\n':
				e[1] = 'n';
				break;
			case '\r':
				e[1] = 'r';
				break;
			case '\t':
				e[1] = 't';
				break;
			case '\a':
				e[1] = 'a';
				break;
			case '\b':
				e[1] = 'b';
				break;
			case '\f':
				e[1] = 'f';
				break;
			case '\v':
				e[1] = 'v';
				break;
			default:
				if (c >= 0x20 && c != 0x7f) {
					i++;
					continue;
				}
				el = 0;
			}
		}
		if (el == 0) {
			e[1] = 'x';
			e[2] = hexd[c >> 4];
			e[3] = hexd[c & 0xf];
			el = 4;
		}
		put(ctx, s + start, i - start);
		put(ctx, e, el);
		i++;
		start = i;
	}
	put(ctx, s + start, n - start);
	put(ctx, "\"", 1);
}
