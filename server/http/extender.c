/* kube-scheduler extender wire codec (reference/extender-protocol.md sections 2-4).
 *
 * Owns nothing shared: every function works on the caller's values and is safe to call from any
 * thread. Decoding follows Go's encoding/json as a Go extender would see the bodies: keys match
 * struct fields exactly or, failing that, case-insensitively (Go's foldName: ASCII letters plus
 * the four non-ASCII runes that fold onto them), null reads as absent, type mismatches are errors
 * naming the field and what was expected. Encoding reproduces json.Marshal byte for byte: struct
 * field order, map keys sorted bytewise, nil as null, compact separators, HTML-safe string escapes
 * and Go's shortest float form (server/gojson.h). No I/O, no logging.
 *
 * ExtenderArgs, the large bodies (every node name, or every Node object), have two decoders: a
 * tree-free one over server/jscan.h for what kube-scheduler sends, and the jansson reference one
 * for everything else, which gives the error messages; they agree (test_extender_fast.c, the
 * extender fuzz target). Filter and prioritize results likewise exist as jansson trees (the
 * reference) and as text written straight into one buffer (what the verbs send). */
#include "server/http/extender.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"
#include "config/strbuf.h"
#include "config/utf8.h"
#include "server/http/bufpool.h"
#include "server/http/gojson.h"
#include "server/http/jscan.h"

/* ---------------------------------------------------------------------------------------------
 * Case-insensitive key lookup
 */

/* Fold one rune of s (at most n bytes) the way Go's appendFoldedName does, for the runes that can
 * fold onto ASCII; *ret_adv is the number of bytes consumed. Returns the folded ASCII character,
 * or -1 for a rune that can never equal an ASCII field-name character. */
static int
fold_rune(const unsigned char *s, size_t n, size_t *ret_adv)
{
	unsigned char c = s[0];
	if (c < 0x80) {
		*ret_adv = 1;
		return (c >= 'a' && c <= 'z') ? c - ('a' - 'A') : c;
	}
	*ret_adv = 1;
	if (n >= 2 && c == 0xc4 && s[1] == 0xb0) { /* U+0130 LATIN CAPITAL I WITH DOT ABOVE */
		*ret_adv = 2;
		return 'I';
	}
	if (n >= 2 && c == 0xc4 && s[1] == 0xb1) { /* U+0131 LATIN SMALL DOTLESS I */
		*ret_adv = 2;
		return 'I';
	}
	if (n >= 2 && c == 0xc5 && s[1] == 0xbf) { /* U+017F LATIN SMALL LONG S */
		*ret_adv = 2;
		return 'S';
	}
	if (n >= 3 && c == 0xe2 && s[1] == 0x84 && s[2] == 0xaa) { /* U+212A KELVIN SIGN */
		*ret_adv = 3;
		return 'K';
	}
	return -1;
}

static bool
key_folds_to(const char *key, size_t keylen, const char *field)
{
	const unsigned char *k = (const unsigned char *)key;
	size_t i = 0;
	for (const char *f = field; *f; f++) {
		if (i >= keylen)
			return false;
		size_t adv;
		int fc = fold_rune(k + i, keylen - i, &adv);
		unsigned char want = (unsigned char)*f;
		if (want >= 'a' && want <= 'z')
			want = (unsigned char)(want - ('a' - 'A'));
		if (fc != want)
			return false;
		i += adv;
	}
	return i == keylen;
}

json_t *
rf_json_get_ci(const json_t *obj, const char *key)
{
	if (!json_is_object(obj) || !key)
		return NULL;
	json_t *exact = json_object_get(obj, key);
	if (exact)
		return exact;
	json_t *found = NULL;
	void *it = json_object_iter((json_t *)obj);
	while (it) {
		const char *k = json_object_iter_key(it);
		size_t klen = json_object_iter_key_len(it);
		/* Several case variants: the last one wins, as Go decodes keys in order. */
		if (key_folds_to(k, klen, key))
			found = json_object_iter_value(it);
		it = json_object_iter_next((json_t *)obj, it);
	}
	return found;
}

/* Lookup where JSON null counts as absent. */
static json_t *
get_field(const json_t *obj, const char *key)
{
	json_t *v = rf_json_get_ci(obj, key);
	return json_is_null(v) ? NULL : v;
}

static const char *
type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

__attribute__((format(printf, 3, 4))) static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Load a body as one JSON object, rejecting duplicate keys. */
static int
load_object(const char *body, size_t len, const char *what, json_t **ret, char *err, size_t errlen)
{
	size_t i = 0;
	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
		i++;
	if (!body || i == len)
		return fail(err, errlen, "empty body: expected an %s JSON object", what);
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return -ENOMEM;
		return fail(err, errlen, "invalid JSON at line %d, column %d: %s", jerr.line,
			    jerr.column, jerr.text);
	}
	if (!json_is_object(root)) {
		int r = fail(err, errlen, "body: expected an %s object, got %s", what,
			     type_name(root));
		json_decref(root);
		return r;
	}
	*ret = root;
	return 0;
}

/* A field Go would refuse to decode into its type: want 's' string, 'o' object, 'a' array, 'm'
 * object of strings (labels, annotations); null is every type's zero value. */
static int
check_field(const json_t *obj, const char *prefix, const char *key, char want, char *err,
	    size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 0;
	const char *expect = want == 's' ? "a string" : want == 'a' ? "an array" : "an object";
	bool ok = want == 's'   ? json_is_string(v)
		  : want == 'a' ? json_is_array(v)
				: json_is_object(v);
	if (!ok)
		return fail(err, errlen, "%s%s: expected %s, got %s", prefix, key, expect,
			    type_name(v));
	if (want == 'm') {
		const char *k;
		const json_t *x;
		json_object_foreach ((json_t *)v, k, x)
			if (!json_is_string(x))
				return fail(err, errlen,
					    "%s%s[\"%.100s\"]: expected a string, got %s", prefix,
					    key, k, type_name(x));
	}
	return 0;
}

int
rf_extender_pod_check(const json_t *pod, const char *prefix, char *err, size_t errlen)
{
	char p[96];
	int r;
	if (!json_is_object(pod))
		return fail(err, errlen, "%s: expected an object, got %s", prefix, type_name(pod));
	const json_t *md = json_object_get(pod, "metadata");
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *st = json_object_get(pod, "status");
	snprintf(p, sizeof(p), "%s%s", prefix, *prefix ? "." : "");
	if ((r = check_field(pod, p, "metadata", 'o', err, errlen)) < 0 ||
	    (r = check_field(pod, p, "spec", 'o', err, errlen)) < 0 ||
	    (r = check_field(pod, p, "status", 'o', err, errlen)) < 0)
		return r;
	snprintf(p, sizeof(p), "%s%smetadata.", prefix, *prefix ? "." : "");
	static const char *const md_strings[] = { "name", "namespace", "uid", "generateName",
						  "resourceVersion" };
	for (size_t i = 0; md && i < sizeof(md_strings) / sizeof(md_strings[0]); i++)
		if ((r = check_field(md, p, md_strings[i], 's', err, errlen)) < 0)
			return r;
	if (md && ((r = check_field(md, p, "labels", 'm', err, errlen)) < 0 ||
		   (r = check_field(md, p, "annotations", 'm', err, errlen)) < 0))
		return r;
	snprintf(p, sizeof(p), "%s%sspec.", prefix, *prefix ? "." : "");
	if (spec && ((r = check_field(spec, p, "nodeName", 's', err, errlen)) < 0 ||
		     (r = check_field(spec, p, "schedulerName", 's', err, errlen)) < 0 ||
		     (r = check_field(spec, p, "resourceClaims", 'a', err, errlen)) < 0))
		return r;
	const json_t *rcs = json_object_get(spec, "resourceClaims");
	for (size_t i = 0; i < json_array_size(rcs); i++) {
		const json_t *rc = json_array_get(rcs, i);
		snprintf(p, sizeof(p), "%s%sspec.resourceClaims[%zu]", prefix, *prefix ? "." : "",
			 i);
		if (!json_is_object(rc))
			return fail(err, errlen, "%s: expected an object, got %s", p,
				    type_name(rc));
		size_t pl = strlen(p);
		snprintf(p + pl, sizeof(p) - pl, ".");
		if ((r = check_field(rc, p, "name", 's', err, errlen)) < 0 ||
		    (r = check_field(rc, p, "resourceClaimName", 's', err, errlen)) < 0 ||
		    (r = check_field(rc, p, "resourceClaimTemplateName", 's', err, errlen)) < 0)
			return r;
	}
	snprintf(p, sizeof(p), "%s%sstatus.", prefix, *prefix ? "." : "");
	if (st && ((r = check_field(st, p, "phase", 's', err, errlen)) < 0 ||
		   (r = check_field(st, p, "resourceClaimStatuses", 'a', err, errlen)) < 0))
		return r;
	return 0;
}

static int
get_pod(json_t *root, json_t **ret, char *err, size_t errlen)
{
	json_t *pod = get_field(root, "Pod");
	if (!pod)
		return fail(err, errlen, "Pod: missing");
	int r = rf_extender_pod_check(pod, "Pod", err, errlen);
	if (r < 0)
		return r;
	*ret = pod;
	return 0;
}

/* ---------------------------------------------------------------------------------------------
 * ExtenderArgs, the reference decoder: a jansson tree of the whole body
 */

/* Each Node item as json.Marshal writes it, into one buffer: what a reply echoes. */
static int
node_texts(json_t *const *items, size_t n, const char **ret_objs, size_t *ret_lens, char **ret_text)
{
	struct rf_strbuf b = { 0 };
	size_t *off = calloc(n ? n : 1, sizeof(*off));
	if (!off)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		off[i] = b.len;
		rf_gojson_value(&b, items[i]);
		ret_lens[i] = b.len - off[i];
		rf_strbuf_putc(&b, '\0');
	}
	char *text = rf_strbuf_steal(&b);
	if (!text) {
		free(off);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ret_objs[i] = text + off[i];
	free(off);
	*ret_text = text;
	return 0;
}

int
rf_extender_args_parse_tree(const char *body, size_t len, struct rf_extender_args *ret, char *err,
			    size_t errlen)
{
	json_t *root = NULL;
	const char **names = NULL;
	const char **objs = NULL;
	size_t *lens = NULL;
	json_t **items_v = NULL;
	char *text = NULL;
	size_t n = 0, names_len = 0;
	int r = load_object(body, len, "ExtenderArgs", &root, err, errlen);
	if (r < 0)
		return r;
	json_t *pod = NULL;
	r = get_pod(root, &pod, err, errlen);
	if (r < 0)
		goto out;

	json_t *nodes = get_field(root, "Nodes");
	json_t *node_names = get_field(root, "NodeNames");
	if (!nodes && !node_names) {
		r = fail(err, errlen, "both Nodes and NodeNames are null: expected exactly one");
		goto out;
	}
	if (nodes && node_names) {
		r = fail(err, errlen, "both Nodes and NodeNames are set: expected exactly one");
		goto out;
	}

	if (node_names) {
		if (!json_is_array(node_names)) {
			r = fail(err, errlen, "NodeNames: expected an array of strings, got %s",
				 type_name(node_names));
			goto out;
		}
		n = json_array_size(node_names);
		names = calloc(n ? n : 1, sizeof(*names));
		objs = calloc(n ? n : 1, sizeof(*objs));
		if (!names || !objs) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			json_t *s = json_array_get(node_names, i);
			if (!json_is_string(s)) {
				r = fail(err, errlen, "NodeNames[%zu]: expected a string, got %s",
					 i, type_name(s));
				goto out;
			}
			names[i] = json_string_value(s);
			names_len += json_string_length(s);
		}
	} else {
		if (!json_is_object(nodes)) {
			r = fail(err, errlen, "Nodes: expected a NodeList object, got %s",
				 type_name(nodes));
			goto out;
		}
		json_t *items = get_field(nodes, "items");
		if (items && !json_is_array(items)) {
			r = fail(err, errlen,
				 "Nodes.items: expected an array of Node objects, got %s",
				 type_name(items));
			goto out;
		}
		n = items ? json_array_size(items) : 0;
		names = calloc(n ? n : 1, sizeof(*names));
		objs = calloc(n ? n : 1, sizeof(*objs));
		lens = calloc(n ? n : 1, sizeof(*lens));
		items_v = calloc(n ? n : 1, sizeof(*items_v));
		if (!names || !objs || !lens || !items_v) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			json_t *node = json_array_get(items, i);
			if (!json_is_object(node)) {
				r = fail(err, errlen,
					 "Nodes.items[%zu]: expected a Node object, got %s", i,
					 type_name(node));
				goto out;
			}
			json_t *md = get_field(node, "metadata");
			if (!md) {
				r = fail(err, errlen, "Nodes.items[%zu].metadata: missing", i);
				goto out;
			}
			if (!json_is_object(md)) {
				r = fail(err, errlen,
					 "Nodes.items[%zu].metadata: expected an object, got %s", i,
					 type_name(md));
				goto out;
			}
			json_t *name = get_field(md, "name");
			if (!name) {
				r = fail(err, errlen, "Nodes.items[%zu].metadata.name: missing", i);
				goto out;
			}
			if (!json_is_string(name)) {
				r = fail(
					err, errlen,
					"Nodes.items[%zu].metadata.name: expected a string, got %s",
					i, type_name(name));
				goto out;
			}
			names[i] = json_string_value(name);
			names_len += json_string_length(name);
			items_v[i] = node;
		}
		if ((r = node_texts(items_v, n, objs, lens, &text)) < 0)
			goto out;
	}

	free(items_v);
	*ret = (struct rf_extender_args){
		.root = root,
		.pod = pod,
		.cache_mode = node_names != NULL,
		.n_nodes = n,
		.node_names = names,
		.names_len = names_len,
		.node_objs = objs,
		.node_obj_lens = lens,
		.text = text,
	};
	return 0;
out:
	free(items_v);
	free(names);
	free(objs);
	free(lens);
	free(text);
	json_decref(root);
	return r;
}

/* ---------------------------------------------------------------------------------------------
 * ExtenderArgs, the fast decoder: one validating pass over the body (server/jscan.h) that keeps
 * spans of the node names and Node items; only the Pod becomes a jansson tree. It takes the
 * requests kube-scheduler sends (json.Marshal output) and everything else it can decide exactly as
 * the reference decoder does; the rest (errors above all) goes to the reference decoder.
 */

/* Go's field matching while walking an object: an exact key wins over case variants, else the
 * last variant does. */
struct field {
	bool seen, exact;
	enum rf_jscan_type type;
};

/* Whether the value of key becomes the value of field name; the caller then scans it and sets
 * f->type. */
static bool
field_take(struct field *f, const struct rf_jscan_span *key, const char *name)
{
	size_t nl = strlen(name);
	if (key->len == nl && memcmp(key->s, name, nl) == 0) {
		f->seen = f->exact = true;
		return true;
	}
	if (f->exact || !key_folds_to(key->s, key->len, name))
		return false;
	f->seen = true;
	return true;
}

/* The field's value as Go decodes it: present and not null. */
static bool
field_set(const struct field *f)
{
	return f->seen && f->type != RF_JSCAN_NULL;
}

struct raw_str {
	struct rf_jscan_span raw; /* between the quotes, still escaped */
	bool escaped;
};

struct raw_node {
	struct rf_jscan_span item; /* the whole Node object */
	struct raw_str name;
};

struct fast_args {
	struct raw_str *names; /* NodeNames */
	size_t n_names, cap_names;
	struct raw_node *nodes; /* Nodes.items */
	size_t n_nodes, cap_nodes;
};

/* Room for item n of the array at *v (capacity *cap): at least 256 items, then doubling. The
 * check stays here, inline, so that an item that fits costs no call on the decoding path;
 * rf_grow() does the growing. */
static inline bool
room_for(void *v, size_t *cap, size_t n, size_t size)
{
	return n < *cap || rf_grow(v, cap, n < 256 ? 256 : n + 1, size) == 0;
}

/* NodeNames: [string, ...]; anything else is left to the reference decoder. */
static bool
scan_names(struct rf_jscan *s, struct fast_args *fa)
{
	fa->n_names = 0;
	if (!fa->names) {
		/* A first guess from the size: a name with its quotes and comma is rarely shorter
		 * than 8 bytes. Pages never written are never touched. */
		size_t guess = (s->len - s->pos) / 8 + 16;
		if (guess > 65536)
			guess = 65536;
		fa->names = malloc(guess * sizeof(*fa->names));
		if (!fa->names) {
			s->err = -ENOMEM;
			return false;
		}
		fa->cap_names = guess;
	}
	size_t count = 0;
	if (!rf_jscan_array_open(s))
		return false;
	while (rf_jscan_array_next(s, &count)) {
		if (!room_for(&fa->names, &fa->cap_names, fa->n_names, sizeof(*fa->names))) {
			s->err = -ENOMEM;
			return false;
		}
		struct raw_str *n = &fa->names[fa->n_names++];
		if (!rf_jscan_string(s, &n->raw, &n->escaped))
			return false;
	}
	return !s->err;
}

/* One Node item: an object whose metadata.name is a string, written as json.Marshal writes it
 * (its bytes are echoed). */
static bool
scan_node(struct rf_jscan *s, struct raw_node *node)
{
	size_t start = s->pos;
	s->canon = true;
	struct field md = { 0 }, name = { 0 };
	size_t frame = rf_jscan_object_open(s);
	struct rf_jscan_span key;
	while (frame && rf_jscan_object_next(s, frame, &key)) {
		if (!field_take(&md, &key, "metadata")) {
			rf_jscan_value(s, NULL);
			continue;
		}
		name = (struct field){ 0 };
		if (rf_jscan_peek(s) != '{') {
			md.type = rf_jscan_value(s, NULL);
			continue;
		}
		md.type = RF_JSCAN_OBJECT;
		size_t mframe = rf_jscan_object_open(s);
		struct rf_jscan_span mkey;
		while (mframe && rf_jscan_object_next(s, mframe, &mkey)) {
			if (!field_take(&name, &mkey, "name")) {
				rf_jscan_value(s, NULL);
			} else if (rf_jscan_peek(s) == '"') {
				name.type = RF_JSCAN_STRING;
				rf_jscan_string(s, &node->name.raw, &node->name.escaped);
			} else {
				name.type = rf_jscan_value(s, NULL);
			}
		}
	}
	if (s->err)
		return false;
	node->item = (struct rf_jscan_span){ s->buf + start, s->pos - start };
	/* A missing or odd name is an error the reference decoder words; an item Go would write
	 * differently is echoed from its tree. Either way the fast decoder stops here. */
	if (!(field_set(&md) && md.type == RF_JSCAN_OBJECT && name.seen &&
	      name.type == RF_JSCAN_STRING && s->canon)) {
		s->err = -EINVAL;
		return false;
	}
	return true;
}

/* Nodes: a NodeList; only items matters. */
static bool
scan_node_list(struct rf_jscan *s, struct fast_args *fa, struct field *items)
{
	fa->n_nodes = 0;
	*items = (struct field){ 0 };
	size_t frame = rf_jscan_object_open(s);
	struct rf_jscan_span key;
	while (frame && rf_jscan_object_next(s, frame, &key)) {
		if (!field_take(items, &key, "items")) {
			rf_jscan_value(s, NULL);
			continue;
		}
		fa->n_nodes = 0;
		if (rf_jscan_peek(s) != '[') {
			items->type = rf_jscan_value(s, NULL);
			continue;
		}
		items->type = RF_JSCAN_ARRAY;
		size_t count = 0;
		if (!rf_jscan_array_open(s))
			return false;
		while (rf_jscan_array_next(s, &count)) {
			if (!room_for(&fa->nodes, &fa->cap_nodes, fa->n_nodes,
				      sizeof(*fa->nodes))) {
				s->err = -ENOMEM;
				return false;
			}
			if (!scan_node(s, &fa->nodes[fa->n_nodes++]))
				return false;
		}
	}
	return !s->err;
}

/* Decode a string span into *pos (NUL-terminated); returns it. */
static const char *
put_str(const struct raw_str *r, char **pos)
{
	char *d = *pos;
	size_t n;
	if (r->escaped) {
		n = rf_jscan_unescape(r->raw.s, r->raw.len, d);
	} else {
		n = r->raw.len;
		memcpy(d, r->raw.s, n);
	}
	d[n] = '\0';
	*pos = d + n + 1;
	return d;
}

/* 0 with *ret filled, 1 when the reference decoder must decide, or -ENOMEM. */
static int
parse_fast(const char *body, size_t len, struct rf_extender_args *ret)
{
	struct rf_jscan s;
	struct fast_args fa = { 0 };
	struct field pod = { 0 }, nodes = { 0 }, names = { 0 }, items = { 0 };
	struct rf_jscan_span pod_span = { 0 };
	json_t *pod_json = NULL;
	const char **vnames = NULL, **objs = NULL;
	size_t *lens = NULL;
	char *text = NULL;
	int r = 1;
	rf_jscan_init(&s, body, len);
	rf_jscan_ws(&s);
	size_t frame = rf_jscan_object_open(&s);
	struct rf_jscan_span key;
	while (frame && rf_jscan_object_next(&s, frame, &key)) {
		int c = rf_jscan_peek(&s);
		if (field_take(&pod, &key, "Pod")) {
			pod.type = rf_jscan_value(&s, &pod_span);
		} else if (field_take(&names, &key, "NodeNames")) {
			names.type = c == '[' && scan_names(&s, &fa) ? RF_JSCAN_ARRAY
								     : rf_jscan_value(&s, NULL);
		} else if (field_take(&nodes, &key, "Nodes")) {
			nodes.type = c == '{' && scan_node_list(&s, &fa, &items)
					     ? RF_JSCAN_OBJECT
					     : rf_jscan_value(&s, NULL);
		} else {
			rf_jscan_value(&s, NULL);
		}
	}
	rf_jscan_ws(&s);
	if (s.err == -ENOMEM) {
		r = -ENOMEM;
		goto out;
	}
	if (s.err || s.pos != len)
		goto out;
	/* The shapes the reference decoder accepts; everything else is its error to word. */
	bool cache = field_set(&names);
	if (!field_set(&pod) || pod.type != RF_JSCAN_OBJECT || cache == field_set(&nodes))
		goto out;
	if (cache ? names.type != RF_JSCAN_ARRAY : nodes.type != RF_JSCAN_OBJECT)
		goto out;
	if (!cache && field_set(&items) && items.type != RF_JSCAN_ARRAY)
		goto out;
	size_t n = cache ? fa.n_names : field_set(&items) ? fa.n_nodes : 0;

	json_error_t jerr;
	pod_json = json_loadb(pod_span.s, pod_span.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!pod_json) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			r = -ENOMEM;
		goto out;
	}
	if (rf_extender_pod_check(pod_json, "Pod", NULL, 0) < 0)
		goto out; /* the reference decoder words it */
	/* Room for every decoded name with its NUL (Node texts stay in the body). */
	size_t room = 1;
	for (size_t i = 0; i < n; i++)
		room += (cache ? fa.names[i].raw.len : fa.nodes[i].name.raw.len) + 1;
	vnames = calloc(n ? n : 1, sizeof(*vnames));
	objs = calloc(n ? n : 1, sizeof(*objs));
	if (!cache)
		lens = calloc(n ? n : 1, sizeof(*lens));
	text = malloc(room);
	if (!vnames || !objs || (!cache && !lens) || !text) {
		r = -ENOMEM;
		goto out;
	}
	char *pos = text;
	for (size_t i = 0; i < n; i++) {
		if (cache) {
			vnames[i] = put_str(&fa.names[i], &pos);
			continue;
		}
		const struct raw_node *rn = &fa.nodes[i];
		vnames[i] = put_str(&rn->name, &pos);
		objs[i] = rn->item.s;
		lens[i] = rn->item.len;
	}
	*ret = (struct rf_extender_args){
		.root = pod_json,
		.pod = pod_json,
		.cache_mode = cache,
		.n_nodes = n,
		.node_names = vnames,
		.names_len = (size_t)(pos - text) - n, /* text holds the names and their NULs */
		.node_objs = objs,
		.node_obj_lens = lens,
		.text = text,
	};
	pod_json = NULL;
	vnames = objs = NULL;
	lens = NULL;
	text = NULL;
	r = 0;
out:
	json_decref(pod_json);
	free(vnames);
	free(objs);
	free(lens);
	free(text);
	free(fa.names);
	free(fa.nodes);
	rf_jscan_release(&s);
	return r;
}

int
rf_extender_args_parse(const char *body, size_t len, struct rf_extender_args *ret, char *err,
		       size_t errlen)
{
	if (body) {
		int r = parse_fast(body, len, ret);
		if (r <= 0)
			return r;
	}
	return rf_extender_args_parse_tree(body, len, ret, err, errlen);
}

void
rf_extender_args_release(struct rf_extender_args *a)
{
	if (!a)
		return;
	free(a->node_names);
	free(a->node_objs);
	free(a->node_obj_lens);
	free(a->text);
	json_decref(a->root);
	*a = (struct rf_extender_args){ 0 };
}

/* ---------------------------------------------------------------------------------------------
 * Results
 */

/* Sort helper: indices into a name array, ordered bytewise by name (Go sorts map keys so). */
struct name_idx {
	const char *name;
	size_t i;
	uint32_t rank; /* the name's place in name order (write_failed_map), or UINT32_MAX */
};

/* The same order as cmp_name_idx when every rank is known: ranks follow the names' order, and
 * two names have one rank only when they are the same name. */
static int
cmp_rank_idx(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Ranks are places among the generation's names: a counting sort puts k of them in order in
 * O(k + ranks) where qsort took O(k log k) comparisons, ~12% of a warm filter's CPU at 5,000
 * nodes with names in kube-scheduler's kind of order. Stable: equal ranks (a name listed twice)
 * keep their positions, as cmp_rank_idx orders them. False when the ranks are many for the
 * names (qsort is cheaper then) or out of memory: the caller sorts with qsort. */
static bool
sort_by_rank(struct name_idx *idx, size_t k, uint32_t max_rank)
{
	size_t nb = (size_t)max_rank + 1;
	if (nb > 16 * k + 256)
		return false;
	uint32_t *at = calloc(nb + 1, sizeof(*at));
	struct name_idx *tmp = malloc(k * sizeof(*tmp));
	if (!at || !tmp) {
		free(at);
		free(tmp);
		return false;
	}
	for (size_t j = 0; j < k; j++)
		at[idx[j].rank + 1]++;
	for (size_t b = 1; b <= nb; b++)
		at[b] += at[b - 1];
	for (size_t j = 0; j < k; j++)
		tmp[at[idx[j].rank]++] = idx[j];
	memcpy(idx, tmp, k * sizeof(*idx));
	free(tmp);
	free(at);
	return true;
}

static int
cmp_name_idx(const void *a, const void *b)
{
	const struct name_idx *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* A map node -> message for the nodes with the given outcome, keys sorted. NULL on OOM. */
static json_t *
failed_map(const struct rf_extender_args *a, const enum rf_filter_outcome *outcomes,
	   const char *const *msgs, enum rf_filter_outcome which)
{
	json_t *m = json_object();
	struct name_idx *idx = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*idx));
	if (!m || !idx)
		goto fail;
	size_t k = 0;
	for (size_t i = 0; i < a->n_nodes; i++)
		if (outcomes[i] == which)
			idx[k++] = (struct name_idx){ a->node_names[i], i, UINT32_MAX };
	qsort(idx, k, sizeof(*idx), cmp_name_idx);
	for (size_t j = 0; j < k; j++) {
		const char *msg = msgs && msgs[idx[j].i] ? msgs[idx[j].i] : "";
		/* A repeated node name keeps its first position; the later message wins, as a Go
		 * map assignment would. */
		if (json_object_set_new(m, idx[j].name, json_string(msg)) != 0)
			goto fail;
	}
	free(idx);
	return m;
fail:
	free(idx);
	json_decref(m);
	return NULL;
}

json_t *
rf_extender_filter_result(const struct rf_extender_args *a, const enum rf_filter_outcome *outcomes,
			  const char *const *msgs, const char *error)
{
	json_t *res = json_object();
	if (!res)
		return NULL;
	if (error) {
		if (json_object_set_new(res, "Nodes", json_null()) ||
		    json_object_set_new(res, "NodeNames", json_null()) ||
		    json_object_set_new(res, "FailedNodes", json_null()) ||
		    json_object_set_new(res, "FailedAndUnresolvableNodes", json_null()) ||
		    json_object_set_new(res, "Error", json_string(error)))
			goto fail;
		return res;
	}

	json_t *pass = json_array();
	if (!pass)
		goto fail;
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (outcomes[i] != RF_FILTER_PASS)
			continue;
		int r = a->cache_mode ? json_array_append_new(pass, json_string(a->node_names[i]))
				      : json_array_append_new(pass, json_loadb(a->node_objs[i],
									       a->node_obj_lens[i],
									       0, NULL));
		if (r) {
			json_decref(pass);
			goto fail;
		}
	}
	if (a->cache_mode) {
		if (json_object_set_new(res, "Nodes", json_null()) ||
		    json_object_set_new(res, "NodeNames", pass))
			goto fail;
	} else {
		json_t *list = json_object();
		if (!list || json_object_set_new(list, "metadata", json_object()) ||
		    json_object_set_new(list, "items", pass)) {
			if (!list)
				json_decref(pass);
			json_decref(list);
			goto fail;
		}
		if (json_object_set_new(res, "Nodes", list) ||
		    json_object_set_new(res, "NodeNames", json_null()))
			goto fail;
	}
	json_t *failed = failed_map(a, outcomes, msgs, RF_FILTER_FAIL);
	if (!failed || json_object_set_new(res, "FailedNodes", failed))
		goto fail;
	json_t *unres = failed_map(a, outcomes, msgs, RF_FILTER_UNRESOLVABLE);
	if (!unres || json_object_set_new(res, "FailedAndUnresolvableNodes", unres))
		goto fail;
	if (json_object_set_new(res, "Error", json_string("")))
		goto fail;
	return res;
fail:
	json_decref(res);
	return NULL;
}

json_t *
rf_extender_priority_list(const struct rf_extender_args *a, const int *scores)
{
	json_t *list = json_array();
	if (!list)
		return NULL;
	for (size_t i = 0; i < a->n_nodes; i++) {
		json_t *hp = json_object();
		if (!hp || json_object_set_new(hp, "Host", json_string(a->node_names[i])) ||
		    json_object_set_new(hp, "Score", json_integer(scores[i])) ||
		    json_array_append_new(list, hp)) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

/* ---------------------------------------------------------------------------------------------
 * Results written as text (no tree): what the verbs send
 */

/* Whether s[0..n) is valid UTF-8, which jansson's json_string() requires (the tree versions fail
 * on anything else). ASCII, the usual case, is checked eight bytes at a time. */
static bool
valid_utf8(const char *s, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ULL)
			break;
	}
	while (i < n && !((unsigned char)s[i] & 0x80))
		i++;
	return i == n || i + rf_utf8_valid_prefix(s + i, n - i) == n;
}

/* The length of the NUL-terminated s and whether every byte of it is rf_gojson_plain: one pass
 * over a plain name (the NUL is not plain: the scan stops there), as node names are. */
static size_t
plain_len(const char *s, bool *ret_plain)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (rf_gojson_plain[u[i]])
		i++;
	*ret_plain = u[i] == 0;
	return u[i] ? i + strlen(s + i) : i;
}

/* sep (unless 0), the plain name quoted, and tail, into d (room for them all); the length. */
static size_t
put_plain_name(char *d, char sep, const char *name, size_t nl, const char *tail, size_t tl)
{
	size_t k = 0;
	if (sep)
		d[k++] = sep;
	d[k++] = '"';
	memcpy(d + k, name, nl);
	k += nl;
	d[k++] = '"';
	memcpy(d + k, tail, tl);
	return k + tl;
}

/* Append sep (unless 0), name as a JSON string and tail: in one piece when the name is plain
 * ASCII and short, as node names are. */
static void
put_name(struct rf_strbuf *out, char sep, const char *name, const char *tail)
{
	bool plain;
	size_t nl = plain_len(name, &plain), tl = strlen(tail);
	char e[256];
	/* in place when the buffer has room, as a reply sized ahead has */
	if (plain && rf_strbuf_fits(out, (sep != 0) + nl + tl + 2)) {
		out->len += put_plain_name(out->s + out->len, sep, name, nl, tail, tl);
		out->s[out->len] = '\0';
		return;
	}
	if (nl + tl + 3 <= sizeof(e) && plain) {
		rf_strbuf_putn(out, e, put_plain_name(e, sep, name, nl, tail, tl));
		return;
	}
	if (sep)
		rf_strbuf_putc(out, sep);
	rf_gojson_string(out, name, nl);
	rf_strbuf_puts(out, tail);
}

/* What write_failed_map() learnt of a message, by its address: the nodes that fail, fail alike,
 * and remembered failures share their message text (alloc/memo.c), so most nodes' messages were
 * measured and checked for another node already. Direct-mapped; a miss measures again. */
#define MSG_SEEN 256
struct msg_seen {
	const char *msg;
	size_t len;
	bool plain;
};

/* The FailedNodes-style map of the nodes with outcome which, keys sorted, a repeated name once
 * with its last message. */
/* The message's entry in seen, measured (length, plainness) unless it was already. */
static const struct msg_seen *
msg_measured(struct msg_seen *seen, const char *msg)
{
	struct msg_seen *ms = &seen[((uintptr_t)msg >> 4) % MSG_SEEN];
	if (ms->msg != msg) {
		ms->msg = msg;
		ms->len = strlen(msg);
		/* plain ASCII, the usual message, is valid and written as it is */
		ms->plain = rf_gojson_plain_prefix(msg, ms->len) == ms->len;
	}
	return ms;
}

static int
write_failed_map(struct rf_strbuf *out, const struct rf_extender_args *a,
		 const enum rf_filter_outcome *outcomes, const char *const *msgs,
		 const uint32_t *ranks, enum rf_filter_outcome which, struct name_idx *idx,
		 struct msg_seen *seen)
{
	int r = 0;
	size_t k = 0;
	bool by_rank = ranks != NULL; /* every name's rank known: no name compared */
	uint32_t max_rank = 0;
	for (size_t i = 0; i < a->n_nodes; i++)
		if (outcomes[i] == which) {
			uint32_t rank = ranks ? ranks[i] : UINT32_MAX;
			by_rank &= rank != UINT32_MAX;
			if (rank > max_rank)
				max_rank = rank;
			idx[k++] = (struct name_idx){ a->node_names[i], i, rank };
		}
	/* names in ascending order (a client's choice: kube-scheduler's own order is not) are
	 * sorted already (equal names by position, as qsort leaves them): one comparison per
	 * name, which also tells whether any name repeats */
	bool repeats = false;
	for (size_t j = 1; j < k; j++) {
		int c = by_rank ? (idx[j - 1].rank > idx[j].rank) - (idx[j - 1].rank < idx[j].rank)
				: strcmp(idx[j - 1].name, idx[j].name);
		if (c > 0) {
			if (!by_rank || !sort_by_rank(idx, k, max_rank))
				qsort(idx, k, sizeof(*idx), by_rank ? cmp_rank_idx : cmp_name_idx);
			repeats = true; /* not known: compare the neighbours below */
			break;
		}
		repeats |= c == 0;
	}
	rf_strbuf_putc(out, '{');
	bool first = true;
	for (size_t j = 0; j < k; j++) {
		if (repeats && j + 1 < k &&
		    (by_rank ? idx[j].rank == idx[j + 1].rank
			     : strcmp(idx[j].name, idx[j + 1].name) == 0))
			continue; /* the later message wins, as a Go map assignment would */
		const char *msg = msgs && msgs[idx[j].i] ? msgs[idx[j].i] : "";
		const struct msg_seen *ms = msg_measured(seen, msg);
		size_t ml = ms->len;
		bool plain = ms->plain;
		if (!plain && !valid_utf8(msg, ml)) {
			r = -ENOMEM; /* as json_string() refusing it in failed_map() */
			break;
		}
		put_name(out, first ? 0 : ',', idx[j].name, plain ? ":\"" : ":");
		first = false;
		if (plain) {
			rf_strbuf_putn(out, msg, ml);
			rf_strbuf_putc(out, '"');
		} else {
			rf_gojson_string(out, msg, ml);
		}
	}
	rf_strbuf_putc(out, '}');
	return r;
}

/* A reply of megabytes (Node objects echoed) or of hundreds of KB (every node's name, a failure
 * message for each that fails: ~0.5 MB at 5,000 nodes) in one buffer of about its size, a kept
 * one (bufpool.h), rather than doubling through fresh pages. */
static void
reserve_reply(struct rf_strbuf *out, size_t want)
{
	/* past RF_BUFPOOL_MAX the estimate may be far off (a name listed twice fails once) and
	 * would not be kept anyway: the buffer grows as written */
	if (out->cap || out->oom || want < RF_BUFPOOL_MIN || want > RF_BUFPOOL_MAX)
		return;
	size_t cap;
	char *buf = rf_bufpool_get(want, &cap);
	if (buf)
		rf_strbuf_adopt(out, buf, cap, out->max);
}

/* About the size of a filter result: every name (in the list or the failure maps), the
 * messages (measured into seen, where the maps' writer finds them) and the Node objects. */
static size_t
filter_result_size(const struct rf_extender_args *a, const enum rf_filter_outcome *outcomes,
		   const char *const *msgs, struct msg_seen *seen)
{
	size_t want = 256 + a->names_len + 8 * a->n_nodes;
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (outcomes[i] == RF_FILTER_PASS)
			want += a->cache_mode ? 0 : a->node_obj_lens[i] + 1;
		else if (msgs && msgs[i])
			want += msg_measured(seen, msgs[i])->len;
	}
	return want;
}

int
rf_extender_write_filter_result(const struct rf_extender_args *a,
				const enum rf_filter_outcome *outcomes, const char *const *msgs,
				const char *error, struct rf_strbuf *out)
{
	return rf_extender_write_filter_result_ranked(a, outcomes, msgs, NULL, error, out);
}

int
rf_extender_write_filter_result_ranked(const struct rf_extender_args *a,
				       const enum rf_filter_outcome *outcomes,
				       const char *const *msgs, const uint32_t *ranks,
				       const char *error, struct rf_strbuf *out)
{
	if (error) {
		if (!valid_utf8(error, strlen(error)))
			return -ENOMEM;
		rf_strbuf_puts(out, "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":null,"
				    "\"FailedAndUnresolvableNodes\":null,\"Error\":");
		rf_gojson_string(out, error, strlen(error));
		rf_strbuf_putc(out, '}');
		return out->oom ? -ENOMEM : 0;
	}
	struct name_idx *idx = calloc(a->n_nodes ? a->n_nodes : 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	struct msg_seen seen[MSG_SEEN]; /* the failure messages, measured once */
	memset(seen, 0, sizeof(seen));
	reserve_reply(out, filter_result_size(a, outcomes, msgs, seen));
	rf_strbuf_puts(out, a->cache_mode ? "{\"Nodes\":null,\"NodeNames\":["
					  : "{\"Nodes\":{\"metadata\":{},\"items\":[");
	bool first = true;
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (outcomes[i] != RF_FILTER_PASS)
			continue;
		if (a->cache_mode) {
			put_name(out, first ? 0 : ',', a->node_names[i], "");
		} else {
			if (!first)
				rf_strbuf_putc(out, ',');
			rf_strbuf_putn(out, a->node_objs[i], a->node_obj_lens[i]);
		}
		first = false;
	}
	rf_strbuf_puts(out, a->cache_mode ? "],\"FailedNodes\":"
					  : "]},\"NodeNames\":null,"
					    "\"FailedNodes\":");
	int r = write_failed_map(out, a, outcomes, msgs, ranks, RF_FILTER_FAIL, idx, seen);
	if (r == 0) {
		rf_strbuf_puts(out, ",\"FailedAndUnresolvableNodes\":");
		r = write_failed_map(out, a, outcomes, msgs, ranks, RF_FILTER_UNRESOLVABLE, idx,
				     seen);
	}
	rf_strbuf_puts(out, ",\"Error\":\"\"}");
	free(idx);
	if (r == 0 && out->oom)
		r = -ENOMEM;
	return r;
}

/* The bytes of a priority entry beyond its name: ,{"Host":"","Score":-2147483648} */
#define HOST_ENTRY_MORE 48

/* A priority entry of a plain name into e (room for nl + HOST_ENTRY_MORE); its length. */
static inline size_t
put_host(char *e, bool comma, const char *name, size_t nl, int score)
{
	size_t k = 0;
	if (comma)
		e[k++] = ',';
	memcpy(e + k, "{\"Host\":\"", 9);
	k += 9;
	memcpy(e + k, name, nl);
	k += nl;
	memcpy(e + k, "\",\"Score\":", 10);
	k += 10;
	k += rf_gojson_fmt_int(e + k, score);
	e[k++] = '}';
	return k;
}

int
rf_extender_write_priority_list(const struct rf_extender_args *a, const int *scores,
				struct rf_strbuf *out)
{
	/* [ and ], each {"Host":"","Score":100}, and the names */
	reserve_reply(out, 2 + a->names_len + 24 * a->n_nodes);
	rf_strbuf_putc(out, '[');
	for (size_t i = 0; i < a->n_nodes; i++) {
		const char *name = a->node_names[i];
		bool plain;
		size_t nl = plain_len(name, &plain);
		/* the usual entry in one piece: {"Host":"name","Score":n}, in place when the
		 * buffer has room (the copy of a name of unbounded length is left to memcpy(): a
		 * bounded one was compiled into a slow rep movs) */
		if (plain && rf_strbuf_fits(out, nl + HOST_ENTRY_MORE)) {
			out->len += put_host(out->s + out->len, i > 0, name, nl, scores[i]);
			out->s[out->len] = '\0';
			continue;
		}
		char buf[100 + HOST_ENTRY_MORE];
		if (nl <= 100 && plain) {
			rf_strbuf_putn(out, buf, put_host(buf, i > 0, name, nl, scores[i]));
			continue;
		}
		rf_strbuf_puts(out, i ? ",{\"Host\":" : "{\"Host\":");
		rf_gojson_string(out, name, nl);
		rf_strbuf_puts(out, ",\"Score\":");
		rf_gojson_int(out, scores[i]);
		rf_strbuf_putc(out, '}');
	}
	rf_strbuf_putc(out, ']');
	return out->oom ? -ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------------
 * ExtenderPreemptionArgs
 */

static int
cmp_victims(const void *a, const void *b)
{
	const struct rf_extender_victims *x = a, *y = b;
	return strcmp(x->node, y->node);
}

static void
victims_free(struct rf_extender_victims *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].uids);
		free(v[i].pods);
	}
	free(v);
}

static int
parse_victims(json_t *val, const char *field, const char *node, bool meta,
	      struct rf_extender_victims *ret, char *err, size_t errlen)
{
	struct rf_extender_victims v = { .node = node };
	if (json_is_null(val)) {
		/* A nil *Victims: no pods, no violations. */
		*ret = v;
		return 0;
	}
	if (!json_is_object(val))
		return fail(err, errlen, "%s[\"%s\"]: expected an object (%s), got %s", field, node,
			    meta ? "MetaVictims" : "Victims", type_name(val));
	json_t *pdb = get_field(val, "NumPDBViolations");
	if (pdb) {
		if (!json_is_integer(pdb))
			return fail(err, errlen,
				    "%s[\"%s\"].NumPDBViolations: expected an integer, got %s%s",
				    field, node, type_name(pdb),
				    json_is_real(pdb) ? " with a fraction or exponent" : "");
		v.num_pdb_violations = json_integer_value(pdb);
	}
	json_t *pods = get_field(val, "Pods");
	if (pods && !json_is_array(pods))
		return fail(err, errlen, "%s[\"%s\"].Pods: expected an array of %s, got %s", field,
			    node, meta ? "MetaPod objects" : "Pod objects", type_name(pods));
	v.n_pods = pods ? json_array_size(pods) : 0;
	v.uids = calloc(v.n_pods ? v.n_pods : 1, sizeof(*v.uids));
	v.pods = calloc(v.n_pods ? v.n_pods : 1, sizeof(*v.pods));
	if (!v.uids || !v.pods) {
		free(v.uids);
		free(v.pods);
		return -ENOMEM;
	}
	int r = 0;
	for (size_t i = 0; i < v.n_pods; i++) {
		json_t *p = json_array_get(pods, i);
		if (!json_is_object(p)) {
			r = fail(err, errlen, "%s[\"%s\"].Pods[%zu]: expected an object, got %s",
				 field, node, i, type_name(p));
			goto out;
		}
		json_t *uid;
		if (meta) {
			uid = get_field(p, "UID");
			if (uid && !json_is_string(uid)) {
				r = fail(err, errlen,
					 "%s[\"%s\"].Pods[%zu].UID: expected a string, got %s",
					 field, node, i, type_name(uid));
				goto out;
			}
		} else {
			json_t *md = get_field(p, "metadata");
			if (md && !json_is_object(md)) {
				r = fail(
					err, errlen,
					"%s[\"%s\"].Pods[%zu].metadata: expected an object, got %s",
					field, node, i, type_name(md));
				goto out;
			}
			uid = md ? get_field(md, "uid") : NULL;
			if (uid && !json_is_string(uid)) {
				r = fail(
					err, errlen,
					"%s[\"%s\"].Pods[%zu].metadata.uid: expected a string, got %s",
					field, node, i, type_name(uid));
				goto out;
			}
			v.pods[i] = p;
		}
		/* Absent or null reads as the empty string, as Go leaves a zero value. */
		v.uids[i] = uid ? json_string_value(uid) : "";
	}
	*ret = v;
	return 0;
out:
	free(v.uids);
	free(v.pods);
	return r;
}

int
rf_extender_preempt_args_parse(const char *body, size_t len, struct rf_extender_preempt_args *ret,
			       char *err, size_t errlen)
{
	json_t *root = NULL;
	struct rf_extender_victims *nodes = NULL;
	size_t n = 0;
	int r = load_object(body, len, "ExtenderPreemptionArgs", &root, err, errlen);
	if (r < 0)
		return r;
	json_t *pod = NULL;
	r = get_pod(root, &pod, err, errlen);
	if (r < 0)
		goto out;
	json_t *full = get_field(root, "NodeNameToVictims");
	json_t *meta = get_field(root, "NodeNameToMetaVictims");
	if (!full && !meta) {
		r = fail(err, errlen,
			 "both NodeNameToVictims and NodeNameToMetaVictims are null: expected "
			 "exactly one");
		goto out;
	}
	if (full && meta) {
		r = fail(err, errlen,
			 "both NodeNameToVictims and NodeNameToMetaVictims are set: expected "
			 "exactly one");
		goto out;
	}
	json_t *map = meta ? meta : full;
	const char *field = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
	if (!json_is_object(map)) {
		r = fail(err, errlen, "%s: expected an object mapping node names to %s, got %s",
			 field, meta ? "MetaVictims" : "Victims", type_name(map));
		goto out;
	}
	size_t total = json_object_size(map);
	nodes = calloc(total ? total : 1, sizeof(*nodes));
	if (!nodes) {
		r = -ENOMEM;
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach (map, key, val) {
		r = parse_victims(val, field, key, meta != NULL, &nodes[n], err, errlen);
		if (r < 0)
			goto out;
		n++;
	}
	qsort(nodes, n, sizeof(*nodes), cmp_victims);
	*ret = (struct rf_extender_preempt_args){
		.root = root,
		.pod = pod,
		.meta_mode = meta != NULL,
		.n_nodes = n,
		.nodes = nodes,
	};
	return 0;
out:
	victims_free(nodes, n);
	json_decref(root);
	return r;
}

void
rf_extender_preempt_args_release(struct rf_extender_preempt_args *a)
{
	if (!a)
		return;
	victims_free(a->nodes, a->n_nodes);
	json_decref(a->root);
	*a = (struct rf_extender_preempt_args){ 0 };
}

json_t *
rf_extender_preempt_result(const struct rf_extender_preempt_args *a, const bool *keep)
{
	json_t *res = json_object();
	json_t *map = json_object();
	if (!res || !map || json_object_set_new(res, "NodeNameToMetaVictims", map)) {
		if (!res)
			json_decref(map);
		json_decref(res);
		return NULL;
	}
	json_t *in_map =
		get_field(a->root, a->meta_mode ? "NodeNameToMetaVictims" : "NodeNameToVictims");
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (!keep[i])
			continue;
		const struct rf_extender_victims *v = &a->nodes[i];
		json_t *orig = in_map ? json_object_get(in_map, v->node) : NULL;
		if (json_is_null(orig)) {
			/* Received as a nil *Victims: Go would send it back as null. */
			if (json_object_set_new(map, v->node, json_null()))
				goto fail;
			continue;
		}
		json_t *orig_pods = orig ? get_field(orig, "Pods") : NULL;
		json_t *pods = orig_pods ? json_array() : json_null();
		if (!pods)
			goto fail;
		for (size_t j = 0; orig_pods && j < v->n_pods; j++) {
			json_t *mp = json_object();
			if (!mp || json_object_set_new(mp, "UID", json_string(v->uids[j])) ||
			    json_array_append_new(pods, mp)) {
				json_decref(pods);
				goto fail;
			}
		}
		json_t *mv = json_object();
		if (!mv || json_object_set_new(mv, "Pods", pods) ||
		    json_object_set_new(mv, "NumPDBViolations",
					json_integer(v->num_pdb_violations)) ||
		    json_object_set_new(map, v->node, mv)) {
			if (!mv)
				json_decref(pods);
			goto fail;
		}
	}
	return res;
fail:
	json_decref(res);
	return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * ExtenderBindingArgs
 */

static int
bind_string(json_t *root, const char *key, bool required, const char **ret, char *err,
	    size_t errlen)
{
	json_t *v = get_field(root, key);
	if (!v) {
		if (required)
			return fail(err, errlen, "%s: missing", key);
		*ret = "";
		return 0;
	}
	if (!json_is_string(v))
		return fail(err, errlen, "%s: expected a string, got %s", key, type_name(v));
	if (required && json_string_length(v) == 0)
		return fail(err, errlen, "%s: expected a non-empty string", key);
	*ret = json_string_value(v);
	return 0;
}

int
rf_extender_bind_args_parse(const char *body, size_t len, struct rf_extender_bind_args *ret,
			    char *err, size_t errlen)
{
	json_t *root = NULL;
	int r = load_object(body, len, "ExtenderBindingArgs", &root, err, errlen);
	if (r < 0)
		return r;
	struct rf_extender_bind_args b = { .root = root };
	if ((r = bind_string(root, "PodName", true, &b.pod_name, err, errlen)) < 0 ||
	    (r = bind_string(root, "PodNamespace", true, &b.pod_namespace, err, errlen)) < 0 ||
	    (r = bind_string(root, "PodUID", false, &b.pod_uid, err, errlen)) < 0 ||
	    (r = bind_string(root, "Node", true, &b.node, err, errlen)) < 0) {
		json_decref(root);
		return r;
	}
	*ret = b;
	return 0;
}

void
rf_extender_bind_args_release(struct rf_extender_bind_args *a)
{
	if (!a)
		return;
	json_decref(a->root);
	*a = (struct rf_extender_bind_args){ 0 };
}

json_t *
rf_extender_bind_result(const char *error)
{
	json_t *res = json_object();
	if (!res || json_object_set_new(res, "Error", json_string(error ? error : ""))) {
		json_decref(res);
		return NULL;
	}
	return res;
}
