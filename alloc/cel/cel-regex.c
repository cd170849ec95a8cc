/* RE2 patterns (CEL's matches()) on top of POSIX regcomp/regexec.
 *
 * The pattern is parsed as RE2 syntax and re-emitted as a POSIX extended regular expression that
 * accepts exactly the same strings, or rejected: -EINVAL when RE2 itself would reject it,
 * -ENOTSUP when it is valid RE2 without a faithful POSIX form here (lookaround is not RE2 at all;
 * Unicode classes \p, word boundaries \b, \C, mid-pattern flags, (?m) and (?U) are RE2 but not
 * translated). matches() only asks whether *a* match exists, so leftmost-longest (POSIX) versus
 * leftmost-first (RE2) and greedy versus lazy quantifiers give the same answer; lazy quantifiers
 * are therefore accepted and compiled greedy.
 *
 * Character semantics are pinned to the C.UTF-8 locale (uselocale around regcomp and regexec), so
 * '.' and classes match whole code points whatever the process locale is. \d \w \s and [[:word:]]
 * are ASCII-only as in RE2 and are expanded to explicit ASCII sets; '.' excludes '\n' unless (?s).
 * If C.UTF-8 is not installed, patterns whose meaning depends on multi-byte characters are
 * rejected with -ENOTSUP rather than evaluated byte-wise.
 *
 * glibc's matcher is not linear-time like RE2's. Three things keep it bounded: the search is
 * compiled anchored as "^.*(P)" (one pass instead of a restart at every position), patterns
 * whose expansion of counted repeats exceeds RX_MAX_WEIGHT nodes are rejected (-ENOTSUP), and
 * the evaluator charges subject length x expansion size against the CEL cost limit.
 *
 * A compiled cel_regex is immutable; glibc's regexec serialises on an internal lock, so one
 * regex may be used from several threads at once. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel-private.h"
#include "config/strbuf.h"

#define RE2_MAX_REPEAT    1000 /* RE2 rejects larger counts */
#define RX_MAX_WEIGHT     2000 /* expanded size accepted: glibc expands counted repeats */
#define RX_MAX_NEST       100
#define RX_MAX_CLASS_ENUM 512 /* non-ASCII ranges are enumerated up to this many code points */

struct rx_range {
	uint32_t lo, hi;
};

struct rx {
	const char *pat;
	size_t len, i;
	struct rf_strbuf out;
	bool icase, dotall;
	bool utf8; /* C.UTF-8 available */
	int rc;
	size_t err_off;
	char *msg;
	size_t msgsz;
	/* expansion weight bookkeeping per group level */
	size_t total[RX_MAX_NEST + 1];
	size_t last[RX_MAX_NEST + 1];
	int depth;
	/* what precedes the current position: can a quantifier follow? */
	enum { PREV_NONE, PREV_ATOM, PREV_ANCHOR, PREV_QUANT } prev;
	/* start offset in out of the last atom, to wrap multi-byte literals before a quantifier */
	size_t last_atom_out;
	bool last_atom_multibyte;
};

static int rx_fail(struct rx *r, int rc, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
rx_fail(struct rx *r, int rc, size_t off, const char *fmt, ...)
{
	if (r->rc == 0) {
		r->rc = rc;
		r->err_off = off;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->msg, r->msgsz, fmt, ap);
		va_end(ap);
	}
	return r->rc;
}

/* Decode one UTF-8 code point of the (already validated) pattern. */
static uint32_t
rx_decode(struct rx *r, size_t *i)
{
	uint32_t cp = 0;
	*i += rf_utf8_decode(r->pat + *i, r->len - *i, &cp);
	return cp;
}

static void
add_weight(struct rx *r, size_t w)
{
	r->total[r->depth] += w;
	r->last[r->depth] = w;
}

/* Emit a literal code point outside brackets. */
static void
emit_literal(struct rx *r, uint32_t cp, size_t off)
{
	size_t start = r->out.len;
	if (cp == 0) {
		rx_fail(r, -ENOTSUP, off, "NUL characters in patterns are not supported");
		return;
	}
	if (cp < 0x80) {
		char c = (char)cp;
		switch (c) {
		case '^':
			rf_strbuf_putn(&r->out, "\\^", 2);
			break;
		case ']':
			rf_strbuf_putn(&r->out, "[]]", 3);
			break;
		case '.':
		case '[':
		case '{':
		case '}':
		case '(':
		case ')':
		case '*':
		case '+':
		case '?':
		case '|':
		case '$':
		case '\\':
			rf_strbuf_putc(&r->out, '[');
			rf_strbuf_putc(&r->out, c);
			rf_strbuf_putc(&r->out, ']');
			break;
		default:
			rf_strbuf_putc(&r->out, c);
		}
		r->last_atom_multibyte = false;
	} else {
		char u[4];
		size_t n = rf_utf8_encode(cp, u);
		rf_strbuf_putn(&r->out, u, n);
		/* byte-wise the sequence still matches exactly (and is grouped before a
		 * quantifier), but case folding would not */
		r->last_atom_multibyte = true;
		if (!r->utf8 && r->icase) {
			rx_fail(r, -ENOTSUP, off,
				"case folding of non-ASCII needs the C.UTF-8 locale, which is not "
				"installed");
			return;
		}
	}
	r->last_atom_out = start;
	r->prev = PREV_ATOM;
	add_weight(r, 1);
}

/* Is the atom just parsed repeated with * or + (possibly lazy)? */
static bool
run_follows(const struct rx *r)
{
	return r->i < r->len && (r->pat[r->i] == '*' || r->pat[r->i] == '+');
}

/* ---- character classes ---------------------------------------------------------------------- */

struct rx_class {
	struct rx_range r[256];
	size_t n;
	bool overflow;
};

static void
class_add(struct rx_class *c, uint32_t lo, uint32_t hi)
{
	if (c->n == sizeof(c->r) / sizeof(c->r[0])) {
		c->overflow = true;
		return;
	}
	c->r[c->n].lo = lo;
	c->r[c->n].hi = hi;
	c->n++;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct rx_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* ASCII sets of the Perl classes \d \w \s (RE2 definitions). */
static bool
perl_class(char c, struct rx_class *cls, bool *negated)
{
	*negated = c == 'D' || c == 'W' || c == 'S';
	switch (c) {
	case 'd':
	case 'D':
		class_add(cls, '0', '9');
		return true;
	case 'w':
	case 'W':
		class_add(cls, '0', '9');
		class_add(cls, 'A', 'Z');
		class_add(cls, 'a', 'z');
		class_add(cls, '_', '_');
		return true;
	case 's':
	case 'S':
		class_add(cls, '\t', '\n');
		class_add(cls, '\f', '\r');
		class_add(cls, ' ', ' ');
		return true;
	}
	return false;
}

/* [[:name:]] inside a class: the ASCII definitions RE2 uses. */
static int
posix_class(struct rx *r, const char *name, size_t n, struct rx_class *cls, size_t off)
{
	static const struct {
		const char *name;
		const char *ranges; /* pairs lo,hi */
	} tab[] = {
		{ "alnum", "09AZaz" },
		{ "alpha", "AZaz" },
		{ "ascii", "\x01\x7f" },
		{ "blank", "\t\t  " },
		{ "cntrl", "\x01\x1f\x7f\x7f" },
		{ "digit", "09" },
		{ "graph", "!~" },
		{ "lower", "az" },
		{ "print", " ~" },
		{ "punct", "!/:@[`{~" },
		{ "space", "\t\r  " },
		{ "upper", "AZ" },
		{ "word", "09AZaz__" },
		{ "xdigit", "09AFaf" },
	};
	for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
		if (strlen(tab[k].name) == n && memcmp(tab[k].name, name, n) == 0) {
			for (const char *p = tab[k].ranges; *p; p += 2)
				class_add(cls, (unsigned char)p[0], (unsigned char)p[1]);
			return 0;
		}
	}
	return rx_fail(r, -EINVAL, off, "invalid character class range: [:%.*s:]", (int)n, name);
}

/* \x.., octal and single-character escapes shared by both contexts. cp receives the code point.
 * Returns 1 when consumed a literal, 0 when the escape is not a literal one. */
static int
escape_literal(struct rx *r, uint32_t *cp)
{
	size_t off = r->i - 1;
	char c = r->pat[r->i];
	switch (c) {
	case 'a':
		*cp = 7;
		break;
	case 'f':
		*cp = '\f';
		break;
	case 't':
		*cp = '\t';
		break;
	case 'n':
		*cp = '\n';
		break;
	case 'r':
		*cp = '\r';
		break;
	case 'v':
		*cp = '\v';
		break;
	case 'x': {
		r->i++;
		uint32_t v = 0;
		if (r->i < r->len && r->pat[r->i] == '{') {
			size_t k = r->i + 1, nd = 0;
			while (k < r->len && r->pat[k] != '}') {
				char h = r->pat[k];
				int d = h >= '0' && h <= '9'   ? h - '0'
					: h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10
							       : -1;
				if (d < 0 || v > 0x10FFFF)
					return rx_fail(r, -EINVAL, off, "invalid escape sequence");
				v = v * 16 + (uint32_t)d;
				k++;
				nd++;
			}
			if (k >= r->len || nd == 0 || v > 0x10FFFF)
				return rx_fail(r, -EINVAL, off, "invalid escape sequence");
			r->i = k + 1;
		} else {
			for (int k = 0; k < 2; k++) {
				char h = r->i < r->len ? r->pat[r->i] : '\0';
				int d = h >= '0' && h <= '9'   ? h - '0'
					: h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10
							       : -1;
				if (d < 0)
					return rx_fail(r, -EINVAL, off, "invalid escape sequence");
				v = v * 16 + (uint32_t)d;
				r->i++;
			}
		}
		if (v >= 0xD800 && v <= 0xDFFF)
			return rx_fail(r, -EINVAL, off, "invalid escape sequence");
		*cp = v;
		return 1;
	}
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7': {
		/* A single non-zero digit would be a backreference, which RE2 does not have. */
		if (c != '0' &&
		    (r->i + 1 >= r->len || r->pat[r->i + 1] < '0' || r->pat[r->i + 1] > '7'))
			return rx_fail(r, -EINVAL, off,
				       "invalid escape sequence: backreferences are "
				       "not supported by RE2");
		uint32_t v = 0;
		int nd = 0;
		while (nd < 3 && r->i < r->len && r->pat[r->i] >= '0' && r->pat[r->i] <= '7') {
			v = v * 8 + (uint32_t)(r->pat[r->i] - '0');
			r->i++;
			nd++;
		}
		*cp = v;
		return 1;
	}
	default:
		if ((unsigned char)c < 0x80 &&
		    !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
			*cp = (unsigned char)c; /* escaped punctuation */
			break;
		}
		return 0;
	}
	r->i++;
	return 1;
}

static bool
bracket_special(uint32_t cp)
{
	return cp == ']' || cp == '-' || cp == '^' || cp == '[';
}

static void
emit_cp_raw(struct rx *r, uint32_t cp)
{
	char u[4];
	size_t n = rf_utf8_encode(cp, u);
	rf_strbuf_putn(&r->out, u, n);
}

/* Emit a sorted, merged set as a POSIX bracket expression. */
static int
emit_class(struct rx *r, struct rx_class *cls, bool negated, size_t off)
{
	if (cls->overflow)
		return rx_fail(r, -ENOTSUP, off, "character class too complex");
	qsort(cls->r, cls->n, sizeof(cls->r[0]), range_cmp);
	size_t m = 0;
	for (size_t k = 0; k < cls->n; k++) {
		if (m > 0 && cls->r[k].lo <= cls->r[m - 1].hi + 1) {
			if (cls->r[k].hi > cls->r[m - 1].hi)
				cls->r[m - 1].hi = cls->r[k].hi;
		} else {
			cls->r[m++] = cls->r[k];
		}
	}
	cls->n = m;
	if (m == 0)
		return rx_fail(r, -ENOTSUP, off, "empty character class");
	bool has[4] = { false, false, false, false }; /* ] - ^ [ */
	const uint32_t specials[4] = { ']', '-', '^', '[' };
	for (size_t k = 0; k < m; k++) {
		if (cls->r[k].lo == 0)
			return rx_fail(r, -ENOTSUP, off,
				       "NUL characters in patterns are not supported");
		if (cls->r[k].hi >= 0x80 && !r->utf8)
			return rx_fail(
				r, -ENOTSUP, off,
				"non-ASCII character classes need the C.UTF-8 locale, which is "
				"not installed");
		for (int s = 0; s < 4; s++)
			if (cls->r[k].lo <= specials[s] && specials[s] <= cls->r[k].hi)
				has[s] = true;
	}
	/* A negated class matches one whole code point; byte-wise that is only the same when the
	 * class is repeated with * or + (any run of bytes of valid UTF-8 is a run of characters).
	 */
	if (negated && !r->utf8 && !run_follows(r))
		return rx_fail(r, -ENOTSUP, off,
			       "negated classes need the C.UTF-8 locale, which is not installed");
	/* A single non-negated character: emit it as a literal, avoiding "[^]". */
	if (!negated && m == 1 && cls->r[0].lo == cls->r[0].hi) {
		emit_literal(r, cls->r[0].lo, off);
		return r->rc;
	}
	size_t start = r->out.len;
	rf_strbuf_putc(&r->out, '[');
	if (negated)
		rf_strbuf_putc(&r->out, '^');
	if (has[0])
		rf_strbuf_putc(&r->out, ']');
	for (size_t k = 0; k < m; k++) {
		uint32_t lo = cls->r[k].lo, hi = cls->r[k].hi;
		/* Walk the range, leaving out the bracket specials (emitted at fixed places). */
		uint32_t a = lo;
		while (a <= hi) {
			while (a <= hi && bracket_special(a))
				a++;
			if (a > hi)
				break;
			uint32_t b = a;
			while (b < hi && !bracket_special(b + 1))
				b++;
			if (b >= 0x80) {
				/* glibc rejects non-ASCII range endpoints: ASCII part as a range,
				 * the rest enumerated. */
				uint32_t na = a < 0x80 ? 0x80 : a;
				if (a < 0x80) {
					emit_cp_raw(r, a);
					if (0x7F > a) {
						rf_strbuf_putc(&r->out, '-');
						emit_cp_raw(r, 0x7F);
					}
				}
				if (b - na + 1 > RX_MAX_CLASS_ENUM)
					return rx_fail(r, -ENOTSUP, off,
						       "non-ASCII character range too large");
				for (uint32_t x = na; x <= b; x++)
					if (!(x >= 0xD800 && x <= 0xDFFF))
						emit_cp_raw(r, x);
			} else if (b == a) {
				emit_cp_raw(r, a);
			} else {
				emit_cp_raw(r, a);
				if (b > a + 1)
					rf_strbuf_putc(&r->out, '-');
				emit_cp_raw(r, b);
			}
			a = b + 1;
		}
	}
	/* '[' must not be followed by ':', '.' or '='; put it after everything else. */
	if (has[3])
		rf_strbuf_putc(&r->out, '[');
	if (has[2]) {
		/* '^' is literal anywhere but first. */
		if (r->out.len == start + 1 + (negated ? 1 : 0)) {
			/* nothing before it: only ^ and maybe - */
			if (has[1]) {
				rf_strbuf_putn(&r->out, "-^", 2);
				has[1] = false;
			} else {
				/* only '^' in a negated class: [^^] */
				rf_strbuf_putc(&r->out, '^');
			}
		} else {
			rf_strbuf_putc(&r->out, '^');
		}
	}
	if (has[1])
		rf_strbuf_putc(&r->out, '-');
	rf_strbuf_putc(&r->out, ']');
	r->last_atom_out = start;
	r->last_atom_multibyte = false;
	r->prev = PREV_ATOM;
	add_weight(r, 1);
	return r->rc;
}

static int
parse_class(struct rx *r)
{
	size_t off = r->i;
	struct rx_class cls = { .n = 0 };
	r->i++; /* [ */
	bool negated = false;
	if (r->i < r->len && r->pat[r->i] == '^') {
		negated = true;
		r->i++;
	}
	bool first = true;
	while (r->i < r->len && (r->pat[r->i] != ']' || first)) {
		size_t item = r->i;
		first = false;
		uint32_t lo;
		if (r->pat[r->i] == '[' && r->i + 1 < r->len && r->pat[r->i + 1] == ':') {
			const char *end = NULL;
			for (size_t k = r->i + 2; k + 1 < r->len; k++) {
				if (r->pat[k] == ':' && r->pat[k + 1] == ']') {
					end = r->pat + k;
					break;
				}
			}
			if (end) {
				const char *name = r->pat + r->i + 2;
				size_t n = (size_t)(end - name);
				if (n > 0 && name[0] == '^')
					return rx_fail(r, -ENOTSUP, item,
						       "negated POSIX classes are not supported");
				if (posix_class(r, name, n, &cls, item) != 0)
					return r->rc;
				r->i = (size_t)(end - r->pat) + 2;
				continue;
			}
		}
		if (r->pat[r->i] == '\\') {
			r->i++;
			if (r->i >= r->len)
				return rx_fail(r, -EINVAL, item,
					       "trailing backslash at end of expression");
			char c = r->pat[r->i];
			bool neg;
			struct rx_class tmp = { .n = 0 };
			if (perl_class(c, &tmp, &neg)) {
				if (neg)
					return rx_fail(
						r, -ENOTSUP, item,
						"negated Perl classes inside brackets are not "
						"supported");
				for (size_t k = 0; k < tmp.n; k++)
					class_add(&cls, tmp.r[k].lo, tmp.r[k].hi);
				r->i++;
				continue;
			}
			if (c == 'p' || c == 'P')
				return rx_fail(r, -ENOTSUP, item,
					       "Unicode classes are not supported");
			int k = escape_literal(r, &lo);
			if (k < 0)
				return r->rc;
			if (k == 0)
				return rx_fail(r, -EINVAL, item, "invalid escape sequence");
		} else {
			lo = rx_decode(r, &r->i);
		}
		uint32_t hi = lo;
		/* a range? '-' followed by something other than ']' */
		if (r->i + 1 < r->len && r->pat[r->i] == '-' && r->pat[r->i + 1] != ']') {
			r->i++;
			if (r->pat[r->i] == '\\') {
				r->i++;
				if (r->i >= r->len)
					return rx_fail(r, -EINVAL, item,
						       "trailing backslash at end of expression");
				int k = escape_literal(r, &hi);
				if (k < 0)
					return r->rc;
				if (k == 0)
					return rx_fail(r, -EINVAL, item,
						       "invalid character class range");
			} else {
				hi = rx_decode(r, &r->i);
			}
			if (hi < lo)
				return rx_fail(r, -EINVAL, item, "invalid character class range");
		}
		class_add(&cls, lo, hi);
	}
	if (r->i >= r->len)
		return rx_fail(r, -EINVAL, off, "missing closing ]");
	r->i++; /* ] */
	if (r->icase && !r->utf8)
		for (size_t k = 0; k < cls.n; k++)
			if (cls.r[k].hi >= 0x80)
				return rx_fail(
					r, -ENOTSUP, off,
					"case folding of non-ASCII needs the C.UTF-8 locale");
	return emit_class(r, &cls, negated, off);
}

/* ---- the pattern ---------------------------------------------------------------------------- */

static int
parse_repeat_braces(struct rx *r, size_t *ret_min, long *ret_max, size_t *ret_end)
{
	/* {n} {n,} {n,m}; anything else makes '{' a literal (RE2). Returns 1 if a repeat. */
	size_t k = r->i + 1;
	size_t n = 0, nd = 0;
	while (k < r->len && r->pat[k] >= '0' && r->pat[k] <= '9') {
		if (n <= 100000)
			n = n * 10 + (size_t)(r->pat[k] - '0');
		k++;
		nd++;
	}
	if (nd == 0 || k >= r->len)
		return 0;
	long max = (long)n;
	if (r->pat[k] == ',') {
		k++;
		if (k < r->len && r->pat[k] == '}') {
			max = -1;
		} else {
			size_t m = 0, md = 0;
			while (k < r->len && r->pat[k] >= '0' && r->pat[k] <= '9') {
				if (m <= 100000)
					m = m * 10 + (size_t)(r->pat[k] - '0');
				k++;
				md++;
			}
			if (md == 0)
				return 0;
			max = (long)m;
		}
	}
	if (k >= r->len || r->pat[k] != '}')
		return 0;
	*ret_min = n;
	*ret_max = max;
	*ret_end = k + 1;
	return 1;
}

static int
apply_quantifier(struct rx *r, size_t off, const char *q, size_t qlen, size_t factor)
{
	if (r->prev == PREV_QUANT)
		return rx_fail(r, -EINVAL, off, "invalid nested repetition operator: %.*s",
			       (int)qlen, q);
	if (r->prev == PREV_NONE)
		return rx_fail(r, -EINVAL, off, "missing argument to repetition operator: %.*s",
			       (int)qlen, q);
	if (r->prev == PREV_ANCHOR)
		return rx_fail(r, -ENOTSUP, off, "repetition of an anchor is not supported");
	if (r->last_atom_multibyte) {
		/* make the quantifier apply to the whole character */
		size_t n = r->out.len - r->last_atom_out;
		char tmp[8];
		memcpy(tmp, r->out.s + r->last_atom_out, n);
		r->out.len = r->last_atom_out;
		rf_strbuf_putc(&r->out, '(');
		rf_strbuf_putn(&r->out, tmp, n);
		rf_strbuf_putc(&r->out, ')');
	}
	rf_strbuf_putn(&r->out, q, qlen);
	size_t w = r->last[r->depth];
	if (factor > 1) {
		if (w > RX_MAX_WEIGHT || factor - 1 > RX_MAX_WEIGHT / (w ? w : 1))
			return rx_fail(r, -ENOTSUP, off, "regular expression too large");
		r->total[r->depth] += w * (factor - 1);
		r->last[r->depth] = w * factor;
	}
	if (r->total[r->depth] > RX_MAX_WEIGHT)
		return rx_fail(r, -ENOTSUP, off, "regular expression too large");
	r->prev = PREV_QUANT;
	/* lazy variants: the same set of matching strings */
	if (r->i < r->len && r->pat[r->i] == '?')
		r->i++;
	return 0;
}

static int
parse_group_open(struct rx *r)
{
	size_t off = r->i;
	r->i++;
	if (r->i < r->len && r->pat[r->i] == '?') {
		r->i++;
		char c = r->i < r->len ? r->pat[r->i] : '\0';
		if (c == ':') {
			r->i++;
		} else if (c == 'P' || c == '<') {
			if (c == 'P') {
				r->i++;
				if (r->i >= r->len || r->pat[r->i] != '<')
					return rx_fail(r, -EINVAL, off,
						       "invalid or unsupported Perl syntax");
			}
			if (c == '<' && r->i + 1 < r->len &&
			    (r->pat[r->i + 1] == '=' || r->pat[r->i + 1] == '!'))
				return rx_fail(r, -EINVAL, off,
					       "invalid or unsupported Perl syntax: lookbehind");
			r->i++;
			size_t n = 0;
			while (r->i < r->len && r->pat[r->i] != '>') {
				char h = r->pat[r->i];
				if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'z') ||
				      (h >= 'A' && h <= 'Z') || h == '_'))
					return rx_fail(r, -EINVAL, off, "invalid named capture");
				r->i++;
				n++;
			}
			if (r->i >= r->len || n == 0)
				return rx_fail(r, -EINVAL, off, "invalid named capture");
			r->i++;
		} else if (c == '=' || c == '!') {
			return rx_fail(r, -EINVAL, off,
				       "invalid or unsupported Perl syntax: lookahead");
		} else if (c == '#') {
			return rx_fail(r, -EINVAL, off,
				       "invalid or unsupported Perl syntax: comment");
		} else {
			bool known = false;
			size_t k = r->i;
			while (k < r->len && strchr("imsU-", r->pat[k]))
				k++;
			known = k > r->i && k < r->len && (r->pat[k] == ')' || r->pat[k] == ':');
			if (!known)
				return rx_fail(r, -EINVAL, off,
					       "invalid or unsupported Perl syntax");
			return rx_fail(
				r, -ENOTSUP, off,
				"flags are only supported as (?i) or (?s) at the start of the "
				"pattern");
		}
	}
	if (r->depth >= RX_MAX_NEST)
		return rx_fail(r, -ENOTSUP, off, "groups nested too deeply");
	rf_strbuf_putc(&r->out, '(');
	r->depth++;
	r->total[r->depth] = 0;
	r->last[r->depth] = 0;
	r->prev = PREV_NONE;
	return 0;
}

static int
translate(struct rx *r)
{
	/* leading flags: (?i) (?s) (?is) ... */
	if (r->len >= 3 && r->pat[0] == '(' && r->pat[1] == '?') {
		size_t k = 2;
		bool icase = false, dotall = false, ok = true;
		while (k < r->len && r->pat[k] != ')') {
			if (r->pat[k] == 'i')
				icase = true;
			else if (r->pat[k] == 's')
				dotall = true;
			else {
				ok = false;
				break;
			}
			k++;
		}
		if (ok && k < r->len && k > 2) {
			r->icase = icase;
			r->dotall = dotall;
			r->i = k + 1;
		}
	}
	r->prev = PREV_NONE;
	while (r->i < r->len && r->rc == 0) {
		size_t off = r->i;
		char c = r->pat[r->i];
		switch (c) {
		case '(':
			parse_group_open(r);
			break;
		case ')': {
			if (r->depth == 0)
				return rx_fail(r, -EINVAL, off,
					       "unexpected ): unbalanced parentheses");
			r->i++;
			rf_strbuf_putc(&r->out, ')');
			size_t w = r->total[r->depth];
			r->depth--;
			r->last_atom_multibyte = false;
			r->prev = PREV_ATOM;
			add_weight(r, w ? w : 1);
			break;
		}
		case '|':
			r->i++;
			rf_strbuf_putc(&r->out, '|');
			r->prev = PREV_NONE;
			break;
		case '^':
		case '$':
			r->i++;
			rf_strbuf_putc(&r->out, c);
			r->prev = PREV_ANCHOR;
			break;
		case '.':
			r->i++;
			if (!r->utf8 && !run_follows(r))
				return rx_fail(
					r, -ENOTSUP, off,
					"'.' needs the C.UTF-8 locale, which is not installed "
					"(only .* and .+ are supported without it)");
			r->last_atom_out = r->out.len;
			r->last_atom_multibyte = false;
			if (r->dotall)
				rf_strbuf_putc(&r->out, '.');
			else
				rf_strbuf_putn(&r->out, "[^\n]", 4);
			r->prev = PREV_ATOM;
			add_weight(r, 1);
			break;
		case '[':
			parse_class(r);
			break;
		case '*':
		case '+':
		case '?':
			r->i++;
			apply_quantifier(r, off, &c, 1, c == '?' ? 1 : 2);
			break;
		case '{': {
			size_t mn, end;
			long mx;
			if (parse_repeat_braces(r, &mn, &mx, &end)) {
				if (mn > RE2_MAX_REPEAT || mx > RE2_MAX_REPEAT)
					return rx_fail(r, -EINVAL, off, "invalid repeat count");
				if (mx >= 0 && (size_t)mx < mn)
					return rx_fail(r, -EINVAL, off, "invalid repeat count");
				r->i = end;
				size_t factor = mx < 0 ? mn + 1 : (size_t)mx;
				apply_quantifier(r, off, r->pat + off, end - off,
						 factor ? factor : 1);
			} else {
				r->i++;
				emit_literal(r, '{', off);
			}
			break;
		}
		case '\\': {
			r->i++;
			if (r->i >= r->len)
				return rx_fail(r, -EINVAL, off,
					       "trailing backslash at end of expression");
			char e = r->pat[r->i];
			struct rx_class cls = { .n = 0 };
			bool neg;
			if (perl_class(e, &cls, &neg)) {
				r->i++;
				emit_class(r, &cls, neg, off);
				break;
			}
			if (e == 'A' || e == 'z') {
				r->i++;
				rf_strbuf_putc(&r->out, e == 'A' ? '^' : '$');
				r->prev = PREV_ANCHOR;
				break;
			}
			if (e == 'b' || e == 'B')
				return rx_fail(r, -ENOTSUP, off,
					       "word boundaries (\\%c) are not supported", e);
			if (e == 'p' || e == 'P')
				return rx_fail(r, -ENOTSUP, off,
					       "Unicode classes are not supported");
			if (e == 'C')
				return rx_fail(r, -ENOTSUP, off, "\\C is not supported");
			if (e == 'Q') {
				r->i++;
				while (r->i < r->len && r->rc == 0) {
					if (r->pat[r->i] == '\\' && r->i + 1 < r->len &&
					    r->pat[r->i + 1] == 'E') {
						r->i += 2;
						break;
					}
					size_t lo = r->i;
					uint32_t cp = rx_decode(r, &r->i);
					emit_literal(r, cp, lo);
				}
				break;
			}
			uint32_t cp;
			int k = escape_literal(r, &cp);
			if (k < 0)
				return r->rc;
			if (k == 0)
				return rx_fail(r, -EINVAL, off, "invalid escape sequence: \\%c", e);
			emit_literal(r, cp, off);
			break;
		}
		default: {
			uint32_t cp = rx_decode(r, &r->i);
			emit_literal(r, cp, off);
		}
		}
	}
	if (r->rc == 0 && r->depth > 0)
		return rx_fail(r, -EINVAL, r->len, "missing ): unbalanced parentheses");
	if (r->rc == 0 && r->out.oom)
		r->rc = -ENOMEM;
	return r->rc;
}

int
cel_regex_compile(struct cel_regex *rx, const char *pat, size_t len, char *msg, size_t msgsz,
		  size_t *ret_off)
{
	struct rx r = { .pat = pat, .len = len, .msg = msg, .msgsz = msgsz };
	locale_t lc = cel_locale_utf8();
#ifdef RF_CEL_TEST_NO_UTF8
	lc = (locale_t)0;
#endif
	r.utf8 = lc != (locale_t)0;
	if (!r.utf8)
		lc = cel_locale_c();
	if (msgsz)
		msg[0] = '\0';
	size_t valid = rf_utf8_valid_prefix(pat, len);
	if (valid < len) {
		rx_fail(&r, -EINVAL, valid, "invalid UTF-8");
	} else {
		rf_strbuf_putn(&r.out, "", 0);
		translate(&r);
	}
	if (r.rc != 0) {
		free(r.out.s);
		*ret_off = r.err_off;
		return r.rc;
	}
	int flags = REG_EXTENDED | REG_NOSUB | (r.icase ? REG_ICASE : 0);
	/* Anchor the search: "^.*(P)" matches where P matches somewhere, and glibc then runs one
	 * pass over the subject instead of restarting at every position (quadratic otherwise).
	 * Without REG_NEWLINE, POSIX '.' matches any character including '\n'. */
	struct rf_strbuf full = { 0 };
	rf_strbuf_putn(&full, "^.*(", 4);
	rf_strbuf_putn(&full, r.out.s ? r.out.s : "", r.out.len);
	rf_strbuf_putc(&full, ')');
	free(r.out.s);
	r.out = full;
	if (r.out.oom) {
		free(r.out.s);
		return -ENOMEM;
	}
	rx->weight = r.total[0] + 1;
	locale_t old = uselocale(lc);
	int rc = regcomp(&rx->re, r.out.s, flags);
	uselocale(old);
	if (rc != 0) {
		char tmp[128];
		regerror(rc, &rx->re, tmp, sizeof(tmp));
		if (rc == REG_ESPACE) {
			free(r.out.s);
			return -ENOMEM;
		}
		snprintf(msg, msgsz, "pattern not supported by the POSIX engine: %s", tmp);
		*ret_off = 0;
		free(r.out.s);
		return -ENOTSUP;
	}
	free(r.out.s);
	return 0;
}

int
cel_regex_match(const struct cel_regex *rx, const char *s, size_t len)
{
	locale_t lc = cel_locale_utf8();
#ifdef RF_CEL_TEST_NO_UTF8
	lc = (locale_t)0;
#endif
	if (!lc)
		lc = cel_locale_c();
	regmatch_t m[1];
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	locale_t old = uselocale(lc);
	int rc = regexec(&rx->re, s ? s : "", 1, m, REG_STARTEND);
	uselocale(old);
	if (rc == 0)
		return 1;
	if (rc == REG_NOMATCH)
		return 0;
	return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
}

void
cel_regex_free(struct cel_regex *rx)
{
	regfree(&rx->re);
}
