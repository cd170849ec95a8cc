/* CEL lexer, recursive-descent parser and name resolution (cel-spec langdef "Syntax").
 *
 * The parser builds an AST in the program's arena: && and || chains and runs of left-associative
 * operators of one precedence become one n-ary node each, so a long `a || b || ...` selector is
 * shallow. Parser nesting and AST depth are both capped at CEL_MAX_DEPTH, so no input can exhaust
 * the stack, here or in the evaluator. A second pass resolves names: `device.<field>`, functions
 * and their overload arity, and it precomputes what literal arguments allow (regexes of matches(),
 * quantity() and semver() of literals). Anything outside the supported subset fails with -ENOTSUP
 * and the position of the construct; syntax errors with -EINVAL. Runs on the caller's thread,
 * no shared state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cel/cel-private.h"
#include "config/grow.h"

enum tok_type {
	T_EOF,
	T_IDENT,
	T_RESERVED,
	T_INT,
	T_UINT,
	T_DOUBLE,
	T_STRING,
	T_BYTES,
	T_TRUE,
	T_FALSE,
	T_NULL,
	T_IN,
	T_LPAREN,
	T_RPAREN,
	T_LBRACKET,
	T_RBRACKET,
	T_LBRACE,
	T_RBRACE,
	T_DOT,
	T_COMMA,
	T_QUESTION,
	T_COLON,
	T_NOT,
	T_MINUS,
	T_PLUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_AND,
	T_OR,
};

struct tok {
	enum tok_type t;
	size_t pos, end;
	uint64_t u;
	double d;
	const char *s; /* decoded string / identifier, program-owned, NUL-terminated */
	size_t slen;
};

struct parser {
	const char *src;
	size_t len;
	size_t i; /* lexer position */
	struct tok cur;
	struct rf_cel_program *prog;
	struct rf_cel_error *err;
	int rc;
	int nest;
};

static int perr(struct parser *p, int rc, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
perr(struct parser *p, int rc, size_t pos, const char *fmt, ...)
{
	if (p->rc != 0)
		return p->rc;
	p->rc = rc;
	if (p->err) {
		char tmp[RF_CEL_ERR_MAX - 40];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(tmp, sizeof(tmp), fmt, ap);
		va_end(ap);
		p->err->pos = pos;
		if (rc == -ENOMEM)
			snprintf(p->err->msg, sizeof(p->err->msg), "out of memory");
		else
			snprintf(p->err->msg, sizeof(p->err->msg), "%s at position %zu", tmp, pos);
	}
	return rc;
}

static void *
palloc(struct parser *p, size_t n)
{
	void *r = rf_arena_alloc_raw(&p->prog->arena, n);
	if (!r)
		perr(p, -ENOMEM, p->cur.pos, "out of memory");
	else
		memset(r, 0, n);
	return r;
}

/* ---- lexer ---------------------------------------------------------------------------------- */

static const char *const reserved[] = {
	"as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
	"let", "loop",  "package", "namespace", "return", "var", "void",     "while",
};

static bool
is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
lex_number(struct parser *p, struct tok *t)
{
	const char *s = p->src;
	size_t i = p->i, start = i;
	bool is_float = false;
	if (s[i] == '0' && i + 1 < p->len && s[i + 1] == 'x') {
		i += 2;
		uint64_t v = 0;
		size_t nd = 0;
		while (i < p->len && hexval(s[i]) >= 0) {
			if (v > UINT64_MAX >> 4)
				return perr(p, -EINVAL, start, "integer literal out of range");
			v = (v << 4) | (uint64_t)hexval(s[i]);
			i++;
			nd++;
		}
		if (nd == 0)
			return perr(p, -EINVAL, start, "invalid hexadecimal literal");
		t->u = v;
		t->t = T_INT;
		if (i < p->len && (s[i] == 'u' || s[i] == 'U')) {
			t->t = T_UINT;
			i++;
		}
		p->i = i;
		return 0;
	}
	while (i < p->len && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i + 1 < p->len && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
		is_float = true;
		i++;
		while (i < p->len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		size_t k = i + 1;
		if (k < p->len && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k < p->len && s[k] >= '0' && s[k] <= '9') {
			is_float = true;
			i = k;
			while (i < p->len && s[i] >= '0' && s[i] <= '9')
				i++;
		}
	}
	if (is_float) {
		char buf[128];
		size_t n = i - start;
		if (n >= sizeof(buf))
			return perr(p, -EINVAL, start, "floating-point literal too long");
		memcpy(buf, s + start, n);
		buf[n] = '\0';
		locale_t lc = cel_locale_c();
		locale_t old = lc ? uselocale(lc) : (locale_t)0;
		t->d = strtod(buf, NULL);
		if (lc)
			uselocale(old);
		t->t = T_DOUBLE;
		p->i = i;
		return 0;
	}
	uint64_t v = 0;
	for (size_t k = start; k < i; k++) {
		unsigned d = (unsigned)(s[k] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return perr(p, -EINVAL, start, "integer literal out of range");
		v = v * 10 + d;
	}
	t->u = v;
	t->t = T_INT;
	if (i < p->len && (s[i] == 'u' || s[i] == 'U')) {
		t->t = T_UINT;
		i++;
	}
	p->i = i;
	return 0;
}

/* Decode the escape at s[*i] (just after the backslash) into out; cel-spec "String and Bytes
 * Values". */
static int
lex_escape(struct parser *p, size_t *i, char *out, size_t *o)
{
	const char *s = p->src;
	size_t at = *i - 1;
	if (*i >= p->len)
		return perr(p, -EINVAL, at, "invalid escape sequence");
	char c = s[(*i)++];
	uint32_t cp;
	switch (c) {
	case 'a':
		cp = 7;
		break;
	case 'b':
		cp = 8;
		break;
	case 'f':
		cp = 12;
		break;
	case 'n':
		cp = 10;
		break;
	case 'r':
		cp = 13;
		break;
	case 't':
		cp = 9;
		break;
	case 'v':
		cp = 11;
		break;
	case '\\':
	case '\'':
	case '"':
	case '`':
	case '?':
		cp = (unsigned char)c;
		break;
	case 'x':
	case 'X':
	case 'u':
	case 'U': {
		int n = (c == 'x' || c == 'X') ? 2 : c == 'u' ? 4 : 8;
		cp = 0;
		for (int k = 0; k < n; k++) {
			int h = *i < p->len ? hexval(s[*i]) : -1;
			if (h < 0)
				return perr(p, -EINVAL, at, "invalid escape sequence");
			cp = (cp << 4) | (uint32_t)h;
			(*i)++;
		}
		if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return perr(p, -EINVAL, at,
				    "invalid unicode code point in escape sequence");
		break;
	}
	case '0':
	case '1':
	case '2':
	case '3': {
		cp = (uint32_t)(c - '0');
		for (int k = 0; k < 2; k++) {
			if (*i >= p->len || s[*i] < '0' || s[*i] > '7')
				return perr(p, -EINVAL, at, "invalid octal escape sequence");
			cp = cp * 8 + (uint32_t)(s[*i] - '0');
			(*i)++;
		}
		break;
	}
	default:
		return perr(p, -EINVAL, at, "invalid escape sequence");
	}
	*o += rf_utf8_encode(cp, out + *o);
	return 0;
}

static int
lex_string(struct parser *p, struct tok *t, bool raw, bool bytes)
{
	const char *s = p->src;
	char q = s[p->i];
	bool triple = p->i + 2 < p->len && s[p->i + 1] == q && s[p->i + 2] == q;
	size_t body = p->i + (triple ? 3 : 1);
	/* find the end first, so the decoded copy is only as large as the literal */
	size_t i = body, end;
	for (;;) {
		if (i >= p->len)
			return perr(p, -EINVAL, t->pos, "unterminated string literal");
		char c = s[i];
		if (c == q && (!triple || (i + 2 < p->len && s[i + 1] == q && s[i + 2] == q)))
			break;
		if (!triple && (c == '\n' || c == '\r'))
			return perr(p, -EINVAL, i, "newline in string literal");
		i += (c == '\\' && !raw && i + 1 < p->len) ? 2 : 1;
	}
	end = i;
	char *out = rf_arena_alloc_raw(&p->prog->arena, end - body + 1);
	size_t o = 0;
	if (!out)
		return perr(p, -ENOMEM, t->pos, "out of memory");
	for (i = body; i < end;) {
		if (s[i] == '\\' && !raw) {
			i++;
			if (lex_escape(p, &i, out, &o) != 0)
				return p->rc;
			continue;
		}
		out[o++] = s[i++];
	}
	out[o] = '\0';
	p->i = end + (triple ? 3 : 1);
	t->t = bytes ? T_BYTES : T_STRING;
	t->s = out;
	t->slen = o;
	return 0;
}

static int
lex(struct parser *p, struct tok *t)
{
	const char *s = p->src;
	memset(t, 0, sizeof(*t));
	for (;;) {
		while (p->i < p->len && (s[p->i] == ' ' || s[p->i] == '\t' || s[p->i] == '\n' ||
					 s[p->i] == '\r' || s[p->i] == '\f'))
			p->i++;
		if (p->i + 1 < p->len && s[p->i] == '/' && s[p->i + 1] == '/') {
			while (p->i < p->len && s[p->i] != '\n' && s[p->i] != '\r')
				p->i++;
			continue;
		}
		break;
	}
	t->pos = p->i;
	if (p->i >= p->len) {
		t->t = T_EOF;
		t->end = p->i;
		return 0;
	}
	char c = s[p->i];
	char n = p->i + 1 < p->len ? s[p->i + 1] : '\0';
	int rc = 0;
	if ((c >= '0' && c <= '9') || (c == '.' && n >= '0' && n <= '9')) {
		rc = lex_number(p, t);
	} else if (c == '"' || c == '\'') {
		rc = lex_string(p, t, false, false);
	} else if (is_ident_start(c)) {
		size_t k = p->i;
		while (k < p->len && is_ident_char(s[k]))
			k++;
		size_t n_id = k - p->i;
		const char *id = s + p->i;
		/* string prefixes r R b B rb br ... */
		if (k < p->len && (s[k] == '"' || s[k] == '\'') && n_id <= 2) {
			bool raw = false, bytes = false, ok = true;
			for (size_t j = 0; j < n_id; j++) {
				char x = id[j];
				if ((x == 'r' || x == 'R') && !raw)
					raw = true;
				else if ((x == 'b' || x == 'B') && !bytes)
					bytes = true;
				else
					ok = false;
			}
			if (ok) {
				p->i = k;
				rc = lex_string(p, t, raw, bytes);
				t->end = p->i;
				return rc;
			}
		}
		char *name = rf_arena_strndup(&p->prog->arena, id, n_id);
		if (!name)
			return perr(p, -ENOMEM, p->i, "out of memory");
		t->s = name;
		t->slen = n_id;
		t->t = T_IDENT;
		if (strcmp(name, "true") == 0)
			t->t = T_TRUE;
		else if (strcmp(name, "false") == 0)
			t->t = T_FALSE;
		else if (strcmp(name, "null") == 0)
			t->t = T_NULL;
		else if (strcmp(name, "in") == 0)
			t->t = T_IN;
		else
			for (size_t j = 0; j < sizeof(reserved) / sizeof(reserved[0]); j++)
				if (strcmp(name, reserved[j]) == 0)
					t->t = T_RESERVED;
		p->i = k;
	} else {
		size_t w = 1;
		switch (c) {
		case '(':
			t->t = T_LPAREN;
			break;
		case ')':
			t->t = T_RPAREN;
			break;
		case '[':
			t->t = T_LBRACKET;
			break;
		case ']':
			t->t = T_RBRACKET;
			break;
		case '{':
			t->t = T_LBRACE;
			break;
		case '}':
			t->t = T_RBRACE;
			break;
		case '.':
			t->t = T_DOT;
			break;
		case ',':
			t->t = T_COMMA;
			break;
		case '?':
			t->t = T_QUESTION;
			break;
		case ':':
			t->t = T_COLON;
			break;
		case '+':
			t->t = T_PLUS;
			break;
		case '-':
			t->t = T_MINUS;
			break;
		case '*':
			t->t = T_STAR;
			break;
		case '/':
			t->t = T_SLASH;
			break;
		case '%':
			t->t = T_PERCENT;
			break;
		case '!':
			t->t = n == '=' ? T_NE : T_NOT;
			w = n == '=' ? 2 : 1;
			break;
		case '=':
			if (n != '=')
				return perr(p, -EINVAL, p->i, "syntax error: unexpected '='");
			t->t = T_EQ;
			w = 2;
			break;
		case '<':
			t->t = n == '=' ? T_LE : T_LT;
			w = n == '=' ? 2 : 1;
			break;
		case '>':
			t->t = n == '=' ? T_GE : T_GT;
			w = n == '=' ? 2 : 1;
			break;
		case '&':
			if (n != '&')
				return perr(p, -EINVAL, p->i, "syntax error: unexpected '&'");
			t->t = T_AND;
			w = 2;
			break;
		case '|':
			if (n != '|')
				return perr(p, -EINVAL, p->i, "syntax error: unexpected '|'");
			t->t = T_OR;
			w = 2;
			break;
		case '`':
			return perr(p, -ENOTSUP, p->i, "quoted identifiers are not supported");
		default:
			if ((unsigned char)c >= 0x80)
				return perr(p, -EINVAL, p->i,
					    "syntax error: unexpected non-ASCII character");
			return perr(p, -EINVAL, p->i, "syntax error: unexpected character '%c'",
				    (c >= 0x20 && c < 0x7f) ? c : '?');
		}
		p->i += w;
	}
	t->end = p->i;
	return rc;
}

static int
next(struct parser *p)
{
	return lex(p, &p->cur);
}

static const char *
tok_desc(const struct tok *t)
{
	switch (t->t) {
	case T_EOF:
		return "end of expression";
	case T_IDENT:
		return "identifier";
	case T_RESERVED:
		return "reserved word";
	case T_INT:
	case T_UINT:
	case T_DOUBLE:
		return "number";
	case T_STRING:
		return "string";
	case T_BYTES:
		return "bytes";
	case T_TRUE:
		return "'true'";
	case T_FALSE:
		return "'false'";
	case T_NULL:
		return "'null'";
	case T_IN:
		return "'in'";
	case T_LPAREN:
		return "'('";
	case T_RPAREN:
		return "')'";
	case T_LBRACKET:
		return "'['";
	case T_RBRACKET:
		return "']'";
	case T_LBRACE:
		return "'{'";
	case T_RBRACE:
		return "'}'";
	case T_DOT:
		return "'.'";
	case T_COMMA:
		return "','";
	case T_QUESTION:
		return "'?'";
	case T_COLON:
		return "':'";
	case T_NOT:
		return "'!'";
	case T_MINUS:
		return "'-'";
	case T_PLUS:
		return "'+'";
	case T_STAR:
		return "'*'";
	case T_SLASH:
		return "'/'";
	case T_PERCENT:
		return "'%'";
	case T_EQ:
		return "'=='";
	case T_NE:
		return "'!='";
	case T_LT:
		return "'<'";
	case T_LE:
		return "'<='";
	case T_GT:
		return "'>'";
	case T_GE:
		return "'>='";
	case T_AND:
		return "'&&'";
	case T_OR:
		return "'||'";
	}
	return "token";
}

static int
unexpected(struct parser *p)
{
	if (p->cur.t == T_RESERVED)
		return perr(p, -EINVAL, p->cur.pos, "syntax error: reserved identifier '%s'",
			    p->cur.s);
	return perr(p, -EINVAL, p->cur.pos, "syntax error: unexpected %s", tok_desc(&p->cur));
}

static int
expect(struct parser *p, enum tok_type t)
{
	if (p->cur.t != t)
		return unexpected(p);
	return next(p);
}

/* ---- AST construction ----------------------------------------------------------------------- */

struct nvec {
	struct cel_node **v;
	size_t n, cap;
	enum cel_op *ops;
	size_t *op_pos;
};

static int
nvec_push(struct parser *p, struct nvec *v, struct cel_node *n, enum cel_op op, size_t op_pos)
{
	/* three parallel arrays: each grows from the same capacity to the same new one; v->cap is
	 * raised only once all three have it */
	size_t c_v = v->cap, c_ops = v->cap, c_pos = v->cap;
	if (rf_grow(&v->v, &c_v, v->n + 1, sizeof(*v->v)) < 0 ||
	    rf_grow(&v->ops, &c_ops, v->n + 1, sizeof(*v->ops)) < 0 ||
	    rf_grow(&v->op_pos, &c_pos, v->n + 1, sizeof(*v->op_pos)) < 0)
		return perr(p, -ENOMEM, op_pos, "out of memory");
	v->cap = c_v;
	v->v[v->n] = n;
	v->ops[v->n] = op;
	v->op_pos[v->n] = op_pos;
	v->n++;
	return 0;
}

static void
nvec_free(struct nvec *v)
{
	free(v->v);
	free(v->ops);
	free(v->op_pos);
}

static struct cel_node *
new_node(struct parser *p, enum cel_node_kind kind, size_t pos)
{
	struct cel_node *n = palloc(p, sizeof(*n));
	if (!n)
		return NULL;
	n->kind = kind;
	n->pos = pos;
	n->depth = 1;
	return n;
}

/* Attach children (copied into the arena) and check the depth bound. */
static int
set_args(struct parser *p, struct cel_node *n, struct cel_node *const *args, size_t nargs)
{
	n->args = nargs ? palloc(p, nargs * sizeof(*n->args)) : NULL;
	if (nargs && !n->args)
		return p->rc;
	n->nargs = nargs;
	size_t d = 0;
	for (size_t k = 0; k < nargs; k++) {
		n->args[k] = args[k];
		if (args[k]->depth > d)
			d = args[k]->depth;
	}
	n->depth = d + 1;
	if (n->depth > CEL_MAX_DEPTH)
		return perr(p, -EINVAL, n->pos,
			    "expression nested too deeply (more than %d levels)", CEL_MAX_DEPTH);
	return 0;
}

static struct cel_node *
node1(struct parser *p, enum cel_node_kind kind, size_t pos, struct cel_node *a)
{
	struct cel_node *n = new_node(p, kind, pos);
	if (!n || set_args(p, n, &a, 1) != 0)
		return NULL;
	return n;
}

static struct cel_node *parse_expr(struct parser *p);

/* ExprList: expressions separated by ',' up to the closing token (already past the opener). */
static int
parse_list(struct parser *p, struct nvec *v, enum tok_type close, bool trailing_comma)
{
	if (p->cur.t == close)
		return next(p);
	for (;;) {
		struct cel_node *e = parse_expr(p);
		if (!e)
			return p->rc;
		if (nvec_push(p, v, e, CEL_OP_EQ, 0) != 0)
			return p->rc;
		if (p->cur.t == T_COMMA) {
			if (next(p) != 0)
				return p->rc;
			if (trailing_comma && p->cur.t == close)
				return next(p);
			continue;
		}
		return expect(p, close);
	}
}

static struct cel_node *
literal_node(struct parser *p, const struct tok *t, bool negate)
{
	struct cel_node *n = new_node(p, CEL_N_LITERAL, t->pos);
	if (!n)
		return NULL;
	switch (t->t) {
	case T_INT:
		if (negate) {
			if (t->u > (uint64_t)INT64_MAX + 1) {
				perr(p, -EINVAL, t->pos, "integer literal out of range");
				return NULL;
			}
			n->lit.type = CEL_INT;
			n->lit.i = t->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t->u;
		} else {
			if (t->u > (uint64_t)INT64_MAX) {
				perr(p, -EINVAL, t->pos, "integer literal out of range");
				return NULL;
			}
			n->lit.type = CEL_INT;
			n->lit.i = (int64_t)t->u;
		}
		break;
	case T_UINT:
		n->lit.type = CEL_UINT;
		n->lit.u = t->u;
		break;
	case T_DOUBLE:
		n->lit.type = CEL_DOUBLE;
		n->lit.d = negate ? -t->d : t->d;
		break;
	case T_STRING:
		n->lit.type = CEL_STRING;
		n->lit.s.p = t->s;
		n->lit.s.len = t->slen;
		break;
	case T_TRUE:
	case T_FALSE:
		n->lit.type = CEL_BOOL;
		n->lit.b = t->t == T_TRUE;
		break;
	default:
		n->lit.type = CEL_NULL;
		break;
	}
	return n;
}

static struct cel_node *
make_call(struct parser *p, size_t pos, const char *name, size_t name_pos, bool receiver,
	  struct nvec *args)
{
	struct cel_node *n = new_node(p, CEL_N_CALL, pos);
	if (!n)
		return NULL;
	n->name = name;
	n->name_len = strlen(name);
	n->name_pos = name_pos;
	n->receiver = receiver;
	n->fn = CEL_FN_UNKNOWN;
	if (set_args(p, n, args->v, args->n) != 0)
		return NULL;
	if (!receiver && strcmp(name, "has") == 0) {
		if (args->n != 1 || args->v[0]->kind != CEL_N_SELECT) {
			perr(p, -EINVAL, pos, "invalid argument to has() macro");
			return NULL;
		}
		struct cel_node *sel = args->v[0];
		n->kind = CEL_N_HAS;
		n->fn = CEL_FN_HAS;
		n->name = sel->name;
		n->name_len = sel->name_len;
		n->name_pos = sel->name_pos;
		n->args[0] = sel->args[0];
		n->nargs = 1;
	}
	return n;
}

static struct cel_node *
parse_primary(struct parser *p)
{
	struct tok t = p->cur;
	switch (t.t) {
	case T_INT:
	case T_UINT:
	case T_DOUBLE:
	case T_STRING:
	case T_TRUE:
	case T_FALSE:
	case T_NULL:
		if (next(p) != 0)
			return NULL;
		return literal_node(p, &t, false);
	case T_BYTES:
		perr(p, -ENOTSUP, t.pos, "bytes literals are not supported");
		return NULL;
	case T_LPAREN: {
		if (next(p) != 0)
			return NULL;
		struct cel_node *e = parse_expr(p);
		if (!e || expect(p, T_RPAREN) != 0)
			return NULL;
		return e;
	}
	case T_LBRACKET: {
		if (next(p) != 0)
			return NULL;
		struct nvec v = { 0 };
		struct cel_node *n = NULL;
		if (parse_list(p, &v, T_RBRACKET, true) == 0) {
			n = new_node(p, CEL_N_LIST, t.pos);
			if (n && set_args(p, n, v.v, v.n) != 0)
				n = NULL;
		}
		nvec_free(&v);
		return n;
	}
	case T_LBRACE:
		perr(p, -ENOTSUP, t.pos, "map literals are not supported");
		return NULL;
	case T_DOT:
	case T_IDENT: {
		if (t.t == T_DOT) {
			/* leading '.': root-scoped name */
			if (next(p) != 0)
				return NULL;
			if (p->cur.t != T_IDENT) {
				unexpected(p);
				return NULL;
			}
			t = p->cur;
		}
		if (next(p) != 0)
			return NULL;
		if (p->cur.t == T_LPAREN) {
			if (next(p) != 0)
				return NULL;
			struct nvec v = { 0 };
			struct cel_node *n = NULL;
			if (parse_list(p, &v, T_RPAREN, false) == 0)
				n = make_call(p, t.pos, t.s, t.pos, false, &v);
			nvec_free(&v);
			return n;
		}
		struct cel_node *n = new_node(p, CEL_N_IDENT, t.pos);
		if (!n)
			return NULL;
		n->name = t.s;
		n->name_len = t.slen;
		n->name_pos = t.pos;
		return n;
	}
	default:
		unexpected(p);
		return NULL;
	}
}

static struct cel_node *
parse_postfix(struct parser *p, struct cel_node *n)
{
	while (n) {
		if (p->cur.t == T_DOT) {
			size_t dot = p->cur.pos;
			if (next(p) != 0)
				return NULL;
			if (p->cur.t == T_QUESTION) {
				perr(p, -ENOTSUP, dot, "optional field selection is not supported");
				return NULL;
			}
			/* reserved words are fine as field names (cel-go checks them only in
			 * identifiers) */
			if (p->cur.t != T_IDENT && p->cur.t != T_RESERVED) {
				unexpected(p);
				return NULL;
			}
			struct tok id = p->cur;
			if (next(p) != 0)
				return NULL;
			if (p->cur.t == T_LPAREN) {
				if (next(p) != 0)
					return NULL;
				struct nvec v = { 0 };
				struct cel_node *c = NULL;
				if (nvec_push(p, &v, n, CEL_OP_EQ, 0) == 0 &&
				    parse_list(p, &v, T_RPAREN, false) == 0)
					c = make_call(p, id.pos, id.s, id.pos, true, &v);
				nvec_free(&v);
				n = c;
				continue;
			}
			struct cel_node *s = node1(p, CEL_N_SELECT, id.pos, n);
			if (!s)
				return NULL;
			s->name = id.s;
			s->name_len = id.slen;
			s->name_pos = id.pos;
			n = s;
		} else if (p->cur.t == T_LBRACKET) {
			size_t lb = p->cur.pos;
			if (next(p) != 0)
				return NULL;
			if (p->cur.t == T_QUESTION) {
				perr(p, -ENOTSUP, lb, "optional indexing is not supported");
				return NULL;
			}
			struct cel_node *idx = parse_expr(p);
			if (!idx || expect(p, T_RBRACKET) != 0)
				return NULL;
			struct cel_node *x = new_node(p, CEL_N_INDEX, lb);
			struct cel_node *two[2] = { n, idx };
			if (!x || set_args(p, x, two, 2) != 0)
				return NULL;
			n = x;
		} else if (p->cur.t == T_LBRACE) {
			perr(p, -ENOTSUP, p->cur.pos, "message construction is not supported");
			return NULL;
		} else {
			break;
		}
	}
	return n;
}

static bool
is_postfix(enum tok_type t)
{
	return t == T_DOT || t == T_LBRACKET || t == T_LBRACE;
}

static struct cel_node *
parse_unary(struct parser *p)
{
	if (p->cur.t == T_NOT || p->cur.t == T_MINUS) {
		enum tok_type op = p->cur.t;
		size_t pos[CEL_MAX_DEPTH + 1];
		size_t count = 0;
		while (p->cur.t == op) {
			if (count > CEL_MAX_DEPTH) {
				perr(p, -EINVAL, p->cur.pos,
				     "expression nested too deeply (more than %d levels)",
				     CEL_MAX_DEPTH);
				return NULL;
			}
			pos[count++] = p->cur.pos;
			if (next(p) != 0)
				return NULL;
		}
		struct cel_node *operand;
		/* -<number> directly before nothing postfix is a negative literal, so that
		 * -9223372036854775808 is representable (cel-go does the same). */
		if (op == T_MINUS && (p->cur.t == T_INT || p->cur.t == T_DOUBLE)) {
			struct tok lit = p->cur;
			if (next(p) != 0)
				return NULL;
			if (!is_postfix(p->cur.t)) {
				operand = literal_node(p, &lit, true);
				if (operand)
					operand->pos = pos[count - 1];
				count--;
			} else {
				operand = parse_postfix(p, literal_node(p, &lit, false));
			}
		} else {
			operand = parse_postfix(p, parse_primary(p));
		}
		while (operand && count > 0) {
			count--;
			operand =
				node1(p, op == T_NOT ? CEL_N_NOT : CEL_N_NEG, pos[count], operand);
		}
		return operand;
	}
	return parse_postfix(p, parse_primary(p));
}

static bool
mul_op(enum tok_type t, enum cel_op *op)
{
	switch (t) {
	case T_STAR:
		*op = CEL_OP_MUL;
		return true;
	case T_SLASH:
		*op = CEL_OP_DIV;
		return true;
	case T_PERCENT:
		*op = CEL_OP_MOD;
		return true;
	default:
		return false;
	}
}

static bool
add_op(enum tok_type t, enum cel_op *op)
{
	switch (t) {
	case T_PLUS:
		*op = CEL_OP_ADD;
		return true;
	case T_MINUS:
		*op = CEL_OP_SUB;
		return true;
	default:
		return false;
	}
}

static bool
rel_op(enum tok_type t, enum cel_op *op)
{
	switch (t) {
	case T_EQ:
		*op = CEL_OP_EQ;
		return true;
	case T_NE:
		*op = CEL_OP_NE;
		return true;
	case T_LT:
		*op = CEL_OP_LT;
		return true;
	case T_LE:
		*op = CEL_OP_LE;
		return true;
	case T_GT:
		*op = CEL_OP_GT;
		return true;
	case T_GE:
		*op = CEL_OP_GE;
		return true;
	case T_IN:
		*op = CEL_OP_IN;
		return true;
	default:
		return false;
	}
}

typedef struct cel_node *parse_fn(struct parser *p);
typedef bool op_fn(enum tok_type t, enum cel_op *op);

/* A run of left-associative operators of one precedence level -> one CEL_N_CHAIN node. */
static struct cel_node *
parse_chain(struct parser *p, parse_fn *sub, op_fn *is_op)
{
	struct cel_node *first = sub(p);
	enum cel_op op;
	if (!first || !is_op(p->cur.t, &op))
		return first;
	struct nvec v = { 0 };
	struct cel_node *n = NULL;
	if (nvec_push(p, &v, first, CEL_OP_EQ, 0) != 0)
		goto out;
	while (is_op(p->cur.t, &op)) {
		size_t pos = p->cur.pos;
		if (next(p) != 0)
			goto out;
		struct cel_node *e = sub(p);
		if (!e)
			goto out;
		/* ops[k] sits between args[k] and args[k + 1] */
		v.ops[v.n - 1] = op;
		v.op_pos[v.n - 1] = pos;
		if (nvec_push(p, &v, e, CEL_OP_EQ, 0) != 0)
			goto out;
	}
	n = new_node(p, CEL_N_CHAIN, v.op_pos[0]);
	if (!n || set_args(p, n, v.v, v.n) != 0) {
		n = NULL;
		goto out;
	}
	n->ops = palloc(p, (v.n - 1) * sizeof(*n->ops));
	n->op_pos = palloc(p, (v.n - 1) * sizeof(*n->op_pos));
	if (!n->ops || !n->op_pos) {
		n = NULL;
		goto out;
	}
	for (size_t k = 0; k + 1 < v.n; k++) {
		n->ops[k] = v.ops[k];
		n->op_pos[k] = (uint32_t)v.op_pos[k];
	}
out:
	nvec_free(&v);
	return n;
}

static struct cel_node *
parse_mul(struct parser *p)
{
	return parse_chain(p, parse_unary, mul_op);
}

static struct cel_node *
parse_add(struct parser *p)
{
	return parse_chain(p, parse_mul, add_op);
}

static struct cel_node *
parse_rel(struct parser *p)
{
	return parse_chain(p, parse_add, rel_op);
}

static struct cel_node *
parse_logic(struct parser *p, enum tok_type tt, enum cel_node_kind kind, parse_fn *sub)
{
	struct cel_node *first = sub(p);
	if (!first || p->cur.t != tt)
		return first;
	struct nvec v = { 0 };
	struct cel_node *n = NULL;
	size_t pos = p->cur.pos;
	if (nvec_push(p, &v, first, CEL_OP_EQ, 0) != 0)
		goto out;
	while (p->cur.t == tt) {
		if (next(p) != 0)
			goto out;
		struct cel_node *e = sub(p);
		if (!e || nvec_push(p, &v, e, CEL_OP_EQ, 0) != 0)
			goto out;
	}
	n = new_node(p, kind, pos);
	if (n && set_args(p, n, v.v, v.n) != 0)
		n = NULL;
out:
	nvec_free(&v);
	return n;
}

static struct cel_node *
parse_and(struct parser *p)
{
	return parse_logic(p, T_AND, CEL_N_AND, parse_rel);
}

static struct cel_node *
parse_or(struct parser *p)
{
	return parse_logic(p, T_OR, CEL_N_OR, parse_and);
}

static struct cel_node *
parse_expr(struct parser *p)
{
	if (++p->nest > CEL_MAX_DEPTH) {
		perr(p, -EINVAL, p->cur.pos, "expression nested too deeply (more than %d levels)",
		     CEL_MAX_DEPTH);
		return NULL;
	}
	struct cel_node *c = parse_or(p);
	if (c && p->cur.t == T_QUESTION) {
		size_t pos = p->cur.pos;
		struct cel_node *a = NULL, *b = NULL;
		if (next(p) == 0)
			a = parse_or(p);
		if (a && expect(p, T_COLON) == 0)
			b = parse_expr(p);
		if (!b) {
			c = NULL;
		} else {
			struct cel_node *n = new_node(p, CEL_N_COND, pos);
			struct cel_node *three[3] = { c, a, b };
			if (!n || set_args(p, n, three, 3) != 0)
				n = NULL;
			c = n;
		}
	}
	p->nest--;
	return c;
}

/* ---- resolution ----------------------------------------------------------------------------- */

#define A(n) (1u << (n))

static const struct fn_def {
	const char *name;
	enum cel_fn fn;
	unsigned global_arity; /* bit k: k arguments as a global function */
	unsigned method_arity; /* bit k: receiver plus k arguments */
} fn_table[] = {
	{ "size", CEL_FN_SIZE, A(1), A(0) },
	{ "matches", CEL_FN_MATCHES, A(2), A(1) },
	{ "startsWith", CEL_FN_STARTS_WITH, 0, A(1) },
	{ "endsWith", CEL_FN_ENDS_WITH, 0, A(1) },
	{ "contains", CEL_FN_CONTAINS, 0, A(1) },
	{ "includes", CEL_FN_INCLUDES, 0, A(1) },
	{ "lowerAscii", CEL_FN_LOWER_ASCII, 0, A(0) },
	{ "upperAscii", CEL_FN_UPPER_ASCII, 0, A(0) },
	{ "quantity", CEL_FN_QUANTITY, A(1), 0 },
	{ "isQuantity", CEL_FN_IS_QUANTITY, A(1), 0 },
	{ "semver", CEL_FN_SEMVER, A(1) | A(2), 0 },
	{ "isSemver", CEL_FN_IS_SEMVER, A(1) | A(2), 0 },
	{ "compareTo", CEL_FN_COMPARE_TO, 0, A(1) },
	{ "isGreaterThan", CEL_FN_IS_GREATER_THAN, 0, A(1) },
	{ "isLessThan", CEL_FN_IS_LESS_THAN, 0, A(1) },
	{ "add", CEL_FN_ADD, 0, A(1) },
	{ "sub", CEL_FN_SUB, 0, A(1) },
	{ "asInteger", CEL_FN_AS_INTEGER, 0, A(0) },
	{ "asApproximateFloat", CEL_FN_AS_APPROXIMATE_FLOAT, 0, A(0) },
	{ "isInteger", CEL_FN_IS_INTEGER, 0, A(0) },
	{ "sign", CEL_FN_SIGN, A(1), A(0) },
	{ "major", CEL_FN_MAJOR, 0, A(0) },
	{ "minor", CEL_FN_MINOR, 0, A(0) },
	{ "patch", CEL_FN_PATCH, 0, A(0) },
	{ "int", CEL_FN_INT, A(1), 0 },
	{ "uint", CEL_FN_UINT, A(1), 0 },
	{ "double", CEL_FN_DOUBLE, A(1), 0 },
	{ "string", CEL_FN_STRING, A(1), 0 },
	{ "bool", CEL_FN_BOOL, A(1), 0 },
	{ "dyn", CEL_FN_DYN, A(1), 0 },
};

static const char *const type_idents[] = {
	"int",  "uint", "double",    "string", "bool", "bytes",
	"list", "map",  "null_type", "type",   "dyn",
};

static int resolve(struct parser *p, struct cel_node *n);

static bool
name_is(const struct cel_node *n, const char *s)
{
	return n->kind == CEL_N_IDENT && strcmp(n->name, s) == 0;
}

static int
device_field(struct parser *p, const struct cel_node *n, enum cel_device_field *f)
{
	static const struct {
		const char *name;
		enum cel_device_field f;
	} fields[] = {
		{ "driver", CEL_DEV_DRIVER },
		{ "attributes", CEL_DEV_ATTRIBUTES },
		{ "capacity", CEL_DEV_CAPACITY },
		{ "allowMultipleAllocations", CEL_DEV_ALLOW_MULTIPLE },
	};
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		if (strcmp(n->name, fields[k].name) == 0) {
			*f = fields[k].f;
			return 0;
		}
	}
	return perr(p, -EINVAL, n->name_pos, "undefined field '%s' of device", n->name);
}

static int
resolve_ident(struct parser *p, struct cel_node *n)
{
	if (strcmp(n->name, "device") == 0)
		return perr(p, -ENOTSUP, n->pos,
			    "unsupported use of 'device' (only device.<field> is supported)");
	for (size_t k = 0; k < sizeof(type_idents) / sizeof(type_idents[0]); k++)
		if (strcmp(n->name, type_idents[k]) == 0)
			return perr(p, -ENOTSUP, n->pos, "type values are not supported ('%s')",
				    n->name);
	return perr(p, -EINVAL, n->pos, "undeclared reference to '%s'", n->name);
}

/* The literal string argument of a call, if it is one. */
static const struct cel_node *
lit_string(const struct cel_node *n)
{
	return n->kind == CEL_N_LITERAL && n->lit.type == CEL_STRING ? n : NULL;
}

static int
precompute(struct parser *p, struct cel_node *n)
{
	size_t first = n->receiver ? 1 : 0;
	switch (n->fn) {
	case CEL_FN_MATCHES: {
		const struct cel_node *pat = lit_string(n->args[1]);
		if (!pat)
			return 0;
		struct cel_regex_list *e = palloc(p, sizeof(*e));
		if (!e)
			return p->rc;
		char msg[160];
		size_t off = 0;
		int rc = cel_regex_compile(&e->rx, pat->lit.s.p, pat->lit.s.len, msg, sizeof(msg),
					   &off);
		if (rc == -ENOMEM)
			return perr(p, rc, pat->pos, "out of memory");
		if (rc == -EINVAL)
			return perr(p, rc, pat->pos, "invalid regular expression: %s", msg);
		if (rc != 0)
			return perr(p, rc, pat->pos, "unsupported regular expression: %s", msg);
		e->next = p->prog->regexes;
		p->prog->regexes = e;
		n->re = &e->rx;
		return 0;
	}
	case CEL_FN_QUANTITY: {
		const struct cel_node *s = lit_string(n->args[first]);
		if (!s)
			return 0;
		struct rf_quantity q;
		int rc = rf_quantity_parsen(s->lit.s.p, s->lit.s.len, &q);
		struct cel_const *cst = palloc(p, sizeof(*cst));
		if (!cst)
			return p->rc;
		n->cst = cst;
		if (rc == 0) {
			cst->val.type = CEL_QUANTITY;
			cst->val.q = q;
			return 0;
		}
		char msg[RF_CEL_ERR_MAX];
		snprintf(msg, sizeof(msg), "invalid quantity \"%.*s\"%s",
			 (int)(s->lit.s.len > 64 ? 64 : s->lit.s.len), s->lit.s.p,
			 rc == -ERANGE ? ": out of range" : "");
		cst->err = rf_arena_strndup(&p->prog->arena, msg, strlen(msg));
		if (!cst->err)
			return perr(p, -ENOMEM, n->pos, "out of memory");
		return 0;
	}
	case CEL_FN_SEMVER: {
		const struct cel_node *s = lit_string(n->args[0]);
		bool normalize = false;
		if (!s)
			return 0;
		if (n->nargs == 2) {
			const struct cel_node *b = n->args[1];
			if (b->kind != CEL_N_LITERAL || b->lit.type != CEL_BOOL)
				return 0;
			normalize = b->lit.b;
		}
		const char *msg = NULL;
		struct cel_semver *v = palloc(p, sizeof(*v));
		struct cel_const *cst = palloc(p, sizeof(*cst));
		int rc;
		if (!v || !cst)
			return p->rc;
		n->cst = cst;
		if (normalize) {
			char *buf = rf_arena_alloc_raw(&p->prog->arena, s->lit.s.len + 8);
			if (!buf)
				return perr(p, -ENOMEM, n->pos, "out of memory");
			rc = cel_semver_parse_normalized(s->lit.s.p, s->lit.s.len, buf, v, &msg);
		} else {
			rc = cel_semver_parse(s->lit.s.p, s->lit.s.len, v, &msg);
		}
		if (rc == 0) {
			cst->val.type = CEL_SEMVER;
			cst->val.sv = v;
			return 0;
		}
		char tmp[RF_CEL_ERR_MAX];
		snprintf(tmp, sizeof(tmp), "invalid semantic version \"%.*s\": %s",
			 (int)(s->lit.s.len > 64 ? 64 : s->lit.s.len), s->lit.s.p, msg);
		cst->err = rf_arena_strndup(&p->prog->arena, tmp, strlen(tmp));
		if (!cst->err)
			return perr(p, -ENOMEM, n->pos, "out of memory");
		return 0;
	}
	default:
		return 0;
	}
}

static int
resolve_call(struct parser *p, struct cel_node *n)
{
	if (n->receiver && n->args[0]->kind == CEL_N_IDENT) {
		const struct cel_node *ns = n->args[0];
		if (strcmp(ns->name, "device") == 0)
			return perr(p, -ENOTSUP, n->name_pos,
				    "unsupported function \"%s\" on device", n->name);
		/* a namespaced function: cel.bind(), math.greatest(), optional.of(), ... */
		return perr(p, -ENOTSUP, ns->pos, "unsupported function \"%s.%s\"", ns->name,
			    n->name);
	}
	/* the receiver first, so the leftmost unsupported construct is the one reported */
	if (n->receiver && resolve(p, n->args[0]) != 0)
		return p->rc;
	const struct fn_def *def = NULL;
	for (size_t k = 0; k < sizeof(fn_table) / sizeof(fn_table[0]); k++)
		if (strcmp(fn_table[k].name, n->name) == 0)
			def = &fn_table[k];
	if (!def)
		return perr(p, -ENOTSUP, n->name_pos, "unsupported function \"%s\"", n->name);
	size_t arity = n->receiver ? n->nargs - 1 : n->nargs;
	unsigned mask = n->receiver ? def->method_arity : def->global_arity;
	if (arity >= 8 || !(mask & A(arity))) {
		if (!mask)
			return perr(p, -ENOTSUP, n->name_pos, "unsupported %s call of \"%s\"",
				    n->receiver ? "method" : "global function", n->name);
		return perr(p, -ENOTSUP, n->name_pos,
			    "unsupported overload: \"%s\" with %zu argument%s", n->name, arity,
			    arity == 1 ? "" : "s");
	}
	n->fn = def->fn;
	for (size_t k = n->receiver ? 1 : 0; k < n->nargs; k++)
		if (resolve(p, n->args[k]) != 0)
			return p->rc;
	return precompute(p, n);
}

static int
resolve(struct parser *p, struct cel_node *n)
{
	switch (n->kind) {
	case CEL_N_LITERAL:
	case CEL_N_DEVICE_FIELD:
		return 0;
	case CEL_N_IDENT:
		return resolve_ident(p, n);
	case CEL_N_SELECT:
		if (name_is(n->args[0], "device")) {
			enum cel_device_field f;
			if (device_field(p, n, &f) != 0)
				return p->rc;
			n->kind = CEL_N_DEVICE_FIELD;
			n->field = f;
			n->nargs = 0;
			return 0;
		}
		if (n->args[0]->kind == CEL_N_IDENT && strcmp(n->args[0]->name, "device") != 0)
			return perr(p, -EINVAL, n->args[0]->pos, "undeclared reference to '%s.%s'",
				    n->args[0]->name, n->name);
		return resolve(p, n->args[0]);
	case CEL_N_HAS:
		if (name_is(n->args[0], "device")) {
			enum cel_device_field f;
			if (device_field(p, n, &f) != 0)
				return p->rc;
			n->kind = CEL_N_LITERAL;
			n->lit.type = CEL_BOOL;
			n->lit.b = true;
			n->nargs = 0;
			return 0;
		}
		return resolve(p, n->args[0]);
	case CEL_N_CALL:
		return resolve_call(p, n);
	case CEL_N_LIST: {
		bool all_lit = true;
		for (size_t k = 0; k < n->nargs; k++) {
			if (resolve(p, n->args[k]) != 0)
				return p->rc;
			if (n->args[k]->kind != CEL_N_LITERAL)
				all_lit = false;
		}
		if (all_lit) {
			struct cel_value *items =
				n->nargs ? palloc(p, n->nargs * sizeof(*items)) : NULL;
			if (n->nargs && !items)
				return p->rc;
			for (size_t k = 0; k < n->nargs; k++)
				items[k] = n->args[k]->lit;
			n->lit.type = CEL_LIST;
			n->lit.list.items = items;
			n->lit.list.n = n->nargs;
			n->kind = CEL_N_LITERAL;
		}
		return 0;
	}
	default:
		for (size_t k = 0; k < n->nargs; k++)
			if (resolve(p, n->args[k]) != 0)
				return p->rc;
		return 0;
	}
}

int
cel_parse(const char *expr, struct rf_cel_program *prog, struct rf_cel_error *err)
{
	struct parser p = { .src = expr, .prog = prog, .err = err };
	p.len = strlen(expr);
	if (p.len > CEL_MAX_EXPR_LEN) {
		if (err) {
			err->pos = CEL_MAX_EXPR_LEN;
			snprintf(err->msg, sizeof(err->msg),
				 "expression is %zu bytes long, more than the limit of %d", p.len,
				 CEL_MAX_EXPR_LEN);
		}
		return -E2BIG;
	}
	size_t valid = rf_utf8_valid_prefix(expr, p.len);
	if (valid < p.len)
		return perr(&p, -EINVAL, valid, "invalid UTF-8");
	if (next(&p) != 0)
		return p.rc;
	struct cel_node *root = parse_expr(&p);
	if (!root)
		return p.rc ? p.rc : -EINVAL;
	if (p.cur.t != T_EOF)
		return unexpected(&p);
	if (resolve(&p, root) != 0)
		return p.rc;
	prog->root = root;
	return 0;
}
