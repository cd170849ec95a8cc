/* The extender codec's fast paths: the validating scanner (server/jscan.h), the tree-free
 * ExtenderArgs decoder and the text writers. Every decoding test is differential: the fast
 * decoder (rf_extender_args_parse) must agree with the jansson reference decoder
 * (rf_extender_args_parse_tree) on the result code, the error message, the names, the echoed
 * Node texts and the Pod; every writer test compares bytes with the Go dump of the tree
 * results. Hostile inputs: truncation, deep nesting, duplicate keys, wrong types, huge numbers,
 * invalid UTF-8, escapes, null versus missing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "config/strbuf.h"
#include "server/http/extender.h"
#include "server/http/gojson.h"
#include "server/http/jscan.h"

static char *
read_data(const char *name, size_t *ret_len)
{
	const char *dir = getenv("RF_TEST_DATA");
	char path[4096];
	snprintf(path, sizeof(path), "%s/extender/%s", dir ? dir : "test/data", name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	*ret_len = (size_t)n;
	return buf;
}

/* The writers' text equals the Go dump of the tree results, for a mix of outcomes. */
static void
writers_agree(const struct rf_extender_args *a, const char *what)
{
	size_t n = a->n_nodes;
	enum rf_filter_outcome *oc = calloc(n + 1, sizeof(*oc));
	const char **msgs = calloc(n + 1, sizeof(*msgs));
	int *scores = calloc(n + 1, sizeof(*scores));
	ck_assert(oc && msgs && scores);
	static const char *const texts[] = { "plain message", "<&> \"q\" \xe2\x80\xa8 caf\xc3\xa9",
					     NULL, "" };
	for (size_t i = 0; i < n; i++) {
		oc[i] = (enum rf_filter_outcome)((i * 7 + 1) % 3);
		msgs[i] = texts[i % 4];
		scores[i] = (int)(i % 11) - 1;
	}
	for (int variant = 0; variant < 2; variant++) {
		const char *error = variant ? "inventory <unavailable>" : NULL;
		json_t *tree = rf_extender_filter_result(a, oc, msgs, error);
		ck_assert_ptr_nonnull(tree);
		size_t want_len;
		char *want = rf_json_dump_go(tree, &want_len);
		json_decref(tree);
		struct rf_strbuf b = { 0 };
		ck_assert_int_eq(rf_extender_write_filter_result(a, oc, msgs, error, &b), 0);
		ck_assert_msg(b.len == want_len && memcmp(b.s, want, want_len) == 0,
			      "%s: filter result differs:\n got: %s\nwant: %s", what, b.s, want);
		rf_strbuf_release(&b);
		free(want);
	}
	json_t *tree = rf_extender_priority_list(a, scores);
	ck_assert_ptr_nonnull(tree);
	size_t want_len;
	char *want = rf_json_dump_go(tree, &want_len);
	json_decref(tree);
	struct rf_strbuf b = { 0 };
	ck_assert_int_eq(rf_extender_write_priority_list(a, scores, &b), 0);
	ck_assert_msg(b.len == want_len && memcmp(b.s, want, want_len) == 0,
		      "%s: priority list differs:\n got: %s\nwant: %s", what, b.s, want);
	rf_strbuf_release(&b);
	free(want);
	free(oc);
	free(msgs);
	free(scores);
}

/* Both decoders on body; returns the result code. ret_fast tells whether the fast path decided
 * (its tree holds only the Pod). */
static int
agree_fast(const char *body, size_t len, bool *ret_fast)
{
	struct rf_extender_args f, t;
	char ferr[256] = "", terr[256] = "";
	int rf = rf_extender_args_parse(body, len, &f, ferr, sizeof(ferr));
	int rt = rf_extender_args_parse_tree(body, len, &t, terr, sizeof(terr));
	ck_assert_msg(rf == rt, "%.*s: fast %d (%s), tree %d (%s)", (int)(len < 200 ? len : 200),
		      body, rf, ferr, rt, terr);
	if (rf < 0) {
		ck_assert_msg(strcmp(ferr, terr) == 0, "%.*s: fast \"%s\", tree \"%s\"",
			      (int)(len < 200 ? len : 200), body, ferr, terr);
		if (ret_fast)
			*ret_fast = false;
		return rf;
	}
	ck_assert_int_eq(f.cache_mode, t.cache_mode);
	ck_assert_uint_eq(f.n_nodes, t.n_nodes);
	ck_assert_uint_eq(f.names_len, t.names_len);
	ck_assert(json_equal(f.pod, t.pod));
	size_t names_len = 0;
	for (size_t i = 0; i < f.n_nodes; i++)
		names_len += strlen(f.node_names[i]);
	ck_assert_uint_le(names_len, f.names_len); /* a name may hold NULs, no more */
	for (size_t i = 0; i < f.n_nodes; i++) {
		ck_assert_str_eq(f.node_names[i], t.node_names[i]);
		ck_assert_int_eq(f.node_objs[i] == NULL, t.node_objs[i] == NULL);
		if (!f.node_objs[i])
			continue;
		ck_assert_uint_eq(f.node_obj_lens[i], t.node_obj_lens[i]);
		ck_assert_msg(memcmp(f.node_objs[i], t.node_objs[i], f.node_obj_lens[i]) == 0,
			      "node %zu: fast %.*s, tree %.*s", i, (int)f.node_obj_lens[i],
			      f.node_objs[i], (int)t.node_obj_lens[i], t.node_objs[i]);
	}
	writers_agree(&f, body);
	if (ret_fast)
		*ret_fast = f.root == f.pod;
	rf_extender_args_release(&f);
	rf_extender_args_release(&t);
	return 0;
}

static int
agree(const char *body)
{
	return agree_fast(body, strlen(body), NULL);
}

START_TEST(test_fast_golden_requests)
{
	const char *files[] = { "filter-request-cachecapable.json", "filter-request-nocache.json",
				"prioritize-request-cachecapable.json",
				"prioritize-request-nocache.json" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *body = read_data(files[i], &len);
		bool fast = false;
		ck_assert_int_eq(agree_fast(body, len, &fast), 0);
		/* kube-scheduler's bodies never need the tree of the whole body */
		ck_assert_msg(fast, "%s took the reference decoder", files[i]);
		free(body);
	}
	/* Node items are echoed as received: the bytes of the request. */
	size_t len;
	char *body = read_data("filter-request-nocache.json", &len);
	struct rf_extender_args a;
	char err[256];
	ck_assert_int_eq(rf_extender_args_parse(body, len, &a, err, sizeof(err)), 0);
	for (size_t i = 0; i < a.n_nodes; i++) {
		/* in place: the megabytes of Node objects are not copied */
		ck_assert_msg(a.node_objs[i] >= body &&
				      a.node_objs[i] + a.node_obj_lens[i] <= body + len,
			      "node %zu is not the request's own bytes", i);
		ck_assert(a.node_obj_lens[i] > 2 && a.node_objs[i][0] == '{' &&
			  a.node_objs[i][a.node_obj_lens[i] - 1] == '}');
	}
	rf_extender_args_release(&a);
	free(body);
}
END_TEST

START_TEST(test_fast_truncated)
{
	const char *files[] = { "filter-request-cachecapable.json", "filter-request-nocache.json" };
	for (size_t f = 0; f < 2; f++) {
		size_t len;
		char *body = read_data(files[f], &len);
		size_t step = len > 4096 ? 7 : 1;
		for (size_t n = 0; n < len; n += step) {
			char *cut = malloc(n + 1);
			memcpy(cut, body, n);
			ck_assert_int_eq(agree_fast(cut, n, NULL), -EINVAL);
			free(cut);
		}
		free(body);
	}
}
END_TEST

START_TEST(test_fast_shapes)
{
	static const char *const ok[] = {
		/* null versus missing versus empty */
		"{\"Pod\":{},\"NodeNames\":[]}",
		"{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"a\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\"],\"Nodes\":null}",
		"{\"Pod\":{},\"Nodes\":{\"metadata\":{},\"items\":[]},\"NodeNames\":null}",
		"{\"Pod\":{},\"Nodes\":{\"items\":null}}",
		"{\"Pod\":{},\"Nodes\":{}}",
		/* whitespace anywhere, as other clients write it */
		" \n{ \"Pod\" : { \"a\" : [ 1 , 2 ] } ,\t\"NodeNames\" : [ \"n1\" , \"n2\" ] } \r\n",
		"{\"Pod\":{},\"Nodes\":{\"items\":[ {\"metadata\":{\"name\":\"n1\"}} , "
		"{\"metadata\": {\"name\":\"n2\"}} ]}}",
		/* case variants: exact wins, else the last variant */
		"{\"pod\":{},\"NODENAMES\":[\"x\"],\"nodenames\":[\"y\",\"z\"]}",
		"{\"NodeNames\":[\"x\"],\"nodenames\":[\"y\",\"z\"],\"Pod\":{\"k\":1}}",
		"{\"nodenames\":[\"y\",\"z\"],\"NodeNames\":[\"x\"],\"Pod\":{}}",
		"{\"Pod\":{\"a\":1},\"pod\":5,\"NodeNames\":[]}",
		"{\"Pod\":{},\"Nodes\":{\"Items\":[{\"METADATA\":{\"Name\":\"n1\",\"name\":\"n2\"}}],"
		"\"items\":[{\"metadata\":{\"NAME\":\"n3\"}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"Metadata\":{\"name\":\"a\"},\"metadata\":{"
		"\"name\":\"b\"},\"METADATA\":{\"name\":\"c\"}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"Metadata\":{\"name\":\"a\"},\"METADATA\":{"
		"\"name\":\"c\"}}]}}",
		"{\"Pod\":{},\"NodeName\xc5\xbf\":[\"n1\"]}",
		"{\"Pod\":{},\"Nodes\":{\"\xc4\xb1tems\":[{\"metadata\":{\"name\":\"n9\"}}]}}",
		"{\"\xe2\x84\xaa\":1,\"Pod\":{},\"NodeNames\":[]}",
		/* an exact key wins even over a later variant */
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"},\"Metadata\":5}]}}",
		/* unknown keys of every type are skipped */
		"{\"Pod\":{},\"x\":[1,-2,3.5,1e3,true,false,null,{\"y\":\"z\"}],\"NodeNames\":[]}",
		/* escapes in names are decoded */
		"{\"Pod\":{},\"NodeNames\":[\"n\\u0031\",\"\\u00e9\\t\\\"\\\\\\/\",\"\\ud83d\\ude80\"]}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\\u002d1\"}}]}}",
		/* repeated names */
		"{\"Pod\":{},\"NodeNames\":[\"a\",\"b\",\"a\"]}",
		/* Node items Go writes differently are echoed from their tree */
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":1.50}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":-0}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"<&>\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u003c\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u003C\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u0008\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u001f\\b\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u0041\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\xe2\x80\xa9\"}]"
		"}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\u2029\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\/\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\ud83d\\ude80\"}"
		"]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":\"\\ufffd\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"}, \"v\":1}]}}",
		/* huge numbers that still fit */
		"{\"Pod\":{\"n\":-9223372036854775808,\"m\":9223372036854775807,\"r\":1e308},"
		"\"NodeNames\":[]}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},\"v\":"
		"-9223372036854775808,\"w\":1e-400}]}}",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		ck_assert_msg(agree(ok[i]) == 0, "%s", ok[i]);
	/* what kube-scheduler sends takes the fast path */
	bool fast = false;
	const char *go =
		"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"metadata\":{},"
		"\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"\\u003c\"}}}]},"
		"\"NodeNames\":null}";
	ck_assert_int_eq(agree_fast(go, strlen(go), &fast), 0);
	ck_assert(fast);
}
END_TEST

START_TEST(test_fast_errors)
{
	static const char *const bad[] = {
		"",
		"   ",
		"null",
		"{\"Pod\":{}} x",
		"{\"Pod\":{}}\0",
		"{\"Pod\":{},\"NodeNames\":[]}]",
		/* duplicate keys at every level */
		"{\"Pod\":{},\"Pod\":{},\"NodeNames\":[]}",
		"{\"Pod\":{\"a\":1,\"a\":2},\"NodeNames\":[]}",
		"{\"Pod\":{},\"NodeNames\":[],\"x\":{\"k\":1,\"k\":1}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\",\"name\":\"b\"}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"},\"s\":{\"1\":1,\"2\":2,"
		"\"3\":3,\"4\":4,\"5\":5,\"6\":6,\"7\":7,\"8\":8,\"9\":9,\"10\":1,\"11\":1,\"12\":1,"
		"\"13\":1,\"14\":1,\"15\":1,\"16\":1,\"17\":1,\"9\":0}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[],\"items\":[]}}",
		"{\"Pod\":{},\"NodeNames\":[],\"\\u0050od\":{}}",
		/* wrong types */
		"{\"Pod\":[],\"NodeNames\":[]}",
		"{\"Pod\":null,\"NodeNames\":[]}",
		"{\"Pod\":{},\"NodeNames\":{}}",
		"{\"Pod\":{},\"NodeNames\":[\"a\",null]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\",[\"b\"]]}",
		"{\"Pod\":{},\"NodeNames\":\"a\"}",
		"{\"Pod\":{},\"Nodes\":[],\"NodeNames\":null}",
		"{\"Pod\":{},\"Nodes\":{\"items\":{}}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[5]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":null}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":\"m\"}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":null}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":{}}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"Name\":\"a\",\"NAME\":5}}]}}",
		"{\"Pod\":{},\"Nodes\":{},\"NodeNames\":[]}",
		"{\"Pod\":{},\"Nodes\":null,\"NodeNames\":null}",
		"{\"Pod\":{}}",
		/* an exact null wins over a later variant: both null */
		"{\"Pod\":{},\"NodeNames\":null,\"nodenames\":[\"a\"]}",
		/* numbers jansson refuses */
		"{\"Pod\":{\"n\":9223372036854775808},\"NodeNames\":[]}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":-9223372036854775809}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":123456789012345678901234}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":1e400}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":-1e400}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":01}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":1.}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":.5}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":1e}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":-}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":+1}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":1x}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":tru}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":truex}",
		"{\"Pod\":{},\"NodeNames\":[],\"n\":nul}",
		/* strings jansson refuses */
		"{\"Pod\":{},\"NodeNames\":[\"a\xff\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\xc0\xaf\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\xed\xa0\x80\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\xf4\x90\x80\x80\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\xe2\x82\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\nb\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\\u0000b\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\ud800\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\ud800\\u0041\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\udc00\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\u12\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\x\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"\\",
		"{\"Pod\":{\"k\xff\":1},\"NodeNames\":[]}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\\u0000\"}}]}}",
		/* structure */
		"{\"Pod\":{},\"NodeNames\":[\"a\",]}",
		"{\"Pod\":{},\"NodeNames\":[,\"a\"]}",
		"{\"Pod\":{},,\"NodeNames\":[]}",
		"{\"Pod\":{},\"NodeNames\":[]",
		"{\"Pod\" {},\"NodeNames\":[]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\" \"b\"]}",
		"{Pod:{},\"NodeNames\":[]}",
		"[{\"Pod\":{},\"NodeNames\":[]}]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(agree(bad[i]) == -EINVAL, "%s", bad[i]);
	/* an embedded NUL, with the length covering what follows it */
	ck_assert_int_eq(agree_fast("{\"Pod\":{},\"NodeNames\":[\"a\0\"]}", 29, NULL), -EINVAL);
}
END_TEST

/* Nesting: the fast path leaves deep values to jansson, whose limit (2048) decides. */
START_TEST(test_fast_deep_nesting)
{
	static const size_t depths[] = { 10, 400, 600, 2045, 2046, 2047, 3000 };
	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct rf_strbuf b = { 0 };
		rf_strbuf_puts(&b, "{\"Pod\":{\"x\":");
		for (size_t i = 0; i < depths[d]; i++)
			rf_strbuf_puts(&b, i % 2 ? "{\"k\":" : "[");
		rf_strbuf_puts(&b, "1");
		for (size_t i = depths[d]; i-- > 0;)
			rf_strbuf_puts(&b, i % 2 ? "}" : "]");
		rf_strbuf_puts(&b, "},\"NodeNames\":[\"n\"]}");
		ck_assert(!b.oom);
		agree_fast(b.s, b.len, NULL);
		/* the same nesting in a Node item and in an unknown key */
		rf_strbuf_release(&b);
		rf_strbuf_puts(&b,
			       "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\"},"
			       "\"x\":");
		for (size_t i = 0; i < depths[d]; i++)
			rf_strbuf_puts(&b, "[");
		for (size_t i = 0; i < depths[d]; i++)
			rf_strbuf_puts(&b, "]");
		rf_strbuf_puts(&b, "}]}}");
		agree_fast(b.s, b.len, NULL);
		rf_strbuf_release(&b);
	}
}
END_TEST

/* Messages: the writer fails where the tree version cannot build the result. */
START_TEST(test_fast_writer_messages)
{
	struct rf_extender_args a;
	char err[256];
	const char *body = "{\"Pod\":{},\"NodeNames\":[\"b\",\"a\",\"b\",\"c\"]}";
	ck_assert_int_eq(rf_extender_args_parse(body, strlen(body), &a, err, sizeof(err)), 0);
	enum rf_filter_outcome oc[] = { RF_FILTER_FAIL, RF_FILTER_UNRESOLVABLE, RF_FILTER_FAIL,
					RF_FILTER_PASS };
	const char *msgs[] = { "first", "\xe2\x80\xa8<x>", "second", NULL };
	struct rf_strbuf b = { 0 };
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &b), 0);
	ck_assert_str_eq(b.s, "{\"Nodes\":null,\"NodeNames\":[\"c\"],\"FailedNodes\":{\"b\":"
			      "\"second\"},\"FailedAndUnresolvableNodes\":{\"a\":\"\\u2028\\u003cx"
			      "\\u003e\"},\"Error\":\"\"}");
	rf_strbuf_release(&b);
	/* invalid UTF-8 in a message or the error: no result, as json_string() refuses it */
	msgs[0] = "bad \xff";
	ck_assert_ptr_null(rf_extender_filter_result(&a, oc, msgs, NULL));
	msgs[2] = "bad \xff";
	ck_assert_ptr_null(rf_extender_filter_result(&a, oc, msgs, NULL));
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &b), -ENOMEM);
	rf_strbuf_release(&b);
	ck_assert_ptr_null(rf_extender_filter_result(&a, oc, msgs, "e\xc3"));
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, "e\xc3", &b), -ENOMEM);
	rf_strbuf_release(&b);
	/* a long message with a late escape, and a long non-ASCII one */
	char long_msg[300], long_utf8[301];
	memset(long_msg, 'm', sizeof(long_msg));
	long_msg[250] = '&';
	long_msg[299] = '\0';
	for (size_t i = 0; i < 300; i += 2)
		memcpy(long_utf8 + i, "\xc3\xa9", 2);
	long_utf8[300] = '\0';
	msgs[0] = long_msg;
	msgs[1] = long_utf8;
	msgs[2] = "x";
	writers_agree(&a, "long messages");
	json_t *tree = rf_extender_filter_result(&a, oc, msgs, NULL);
	char *want = rf_json_dump_go(tree, NULL);
	json_decref(tree);
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &b), 0);
	ck_assert_str_eq(b.s, want);
	free(want);
	rf_strbuf_release(&b);
	rf_extender_args_release(&a);

	/* names that need escaping, long names, scores at the int extremes */
	body = "{\"Pod\":{},\"NodeNames\":[\"<n>\",\"\\u2028\",\""
	       "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	       "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	       "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	       "\"]}";
	ck_assert_int_eq(rf_extender_args_parse(body, strlen(body), &a, err, sizeof(err)), 0);
	writers_agree(&a, "odd names");
	static const int extremes[] = { -2147483647 - 1, 2147483647, 0 };
	tree = rf_extender_priority_list(&a, extremes);
	want = rf_json_dump_go(tree, NULL);
	json_decref(tree);
	ck_assert_int_eq(rf_extender_write_priority_list(&a, extremes, &b), 0);
	ck_assert_str_eq(b.s, want);
	free(want);
	rf_strbuf_release(&b);
	rf_extender_args_release(&a);
}
END_TEST

/* Names in ascending order (the writer then skips sorting): a repeated name once, with its last
 * message, as in any other order; and names ascending but for the last, sorted after all. */
START_TEST(test_fast_writer_sorted_names)
{
	static const char *const bodies[] = {
		"{\"Pod\":{},\"NodeNames\":[\"a\",\"a\",\"b\",\"b\",\"b\",\"c\",\"d\",\"d\"]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"a\"]}",
	};
	static const char *const want[] = {
		"{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"a\":\"m1\",\"b\":\"m4\","
		"\"c\":\"m5\",\"d\":\"m7\"},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}",
		"{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"a\":\"m7\",\"b\":\"m1\","
		"\"c\":\"m2\",\"d\":\"m3\",\"e\":\"m4\",\"f\":\"m5\",\"g\":\"m6\"},"
		"\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}",
	};
	for (size_t k = 0; k < 2; k++) {
		struct rf_extender_args a;
		char err[256];
		ck_assert_int_eq(
			rf_extender_args_parse(bodies[k], strlen(bodies[k]), &a, err, sizeof(err)),
			0);
		ck_assert_uint_eq(a.n_nodes, 8);
		enum rf_filter_outcome oc[8];
		const char *msgs[8] = { "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7" };
		for (size_t i = 0; i < 8; i++)
			oc[i] = RF_FILTER_FAIL;
		struct rf_strbuf b = { 0 };
		ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &b), 0);
		ck_assert_str_eq(b.s, want[k]);
		json_t *tree = rf_extender_filter_result(&a, oc, msgs, NULL);
		char *dump = rf_json_dump_go(tree, NULL);
		json_decref(tree);
		ck_assert_str_eq(b.s, dump);
		free(dump);
		rf_strbuf_release(&b);
		writers_agree(&a, bodies[k]);
		rf_extender_args_release(&a);
	}
}
END_TEST

/* Failure maps sorted by the names' ranks (their places in name order, as the generation knows
 * them) read exactly as when sorted by comparing names: random orders, repeated names (the
 * later message wins), outcomes of all three kinds, and now and then a name with no rank (then
 * that map is sorted by name). */
START_TEST(test_fast_writer_ranked)
{
	uint64_t rng = 12345;
	for (int round = 0; round < 200; round++) {
		enum { N = 40, NAMES = 24 };
		char body[2048];
		size_t len = (size_t)snprintf(body, sizeof(body), "{\"Pod\":{},\"NodeNames\":[");
		unsigned pick[N];
		for (size_t i = 0; i < N; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			pick[i] = (unsigned)((rng >> 33) % NAMES);
			/* names whose byte order is not their number's: n-0 < n-1 < n-10 < n-11 */
			len += (size_t)snprintf(body + len, sizeof(body) - len, "%s\"n-%u\"",
						i ? "," : "", pick[i]);
		}
		len += (size_t)snprintf(body + len, sizeof(body) - len, "]}");
		struct rf_extender_args a;
		char err[256];
		ck_assert_int_eq(rf_extender_args_parse(body, len, &a, err, sizeof(err)), 0);
		/* rank: the name's place among "n-0" .. "n-23" sorted bytewise */
		char names[NAMES][8];
		for (unsigned k = 0; k < NAMES; k++)
			snprintf(names[k], sizeof(names[k]), "n-%u", k);
		enum rf_filter_outcome oc[N];
		const char *msgs[N];
		uint32_t ranks[N];
		static const char *const texts[] = { "m0", "m1", "m2", "m3", "m4", "m5" };
		for (size_t i = 0; i < N; i++) {
			uint32_t r = 0;
			for (unsigned k = 0; k < NAMES; k++)
				r += strcmp(names[k], names[pick[i]]) < 0;
			ranks[i] = round % 7 == 3 && i == 5 ? UINT32_MAX : r;
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			oc[i] = (enum rf_filter_outcome)((rng >> 33) % 3);
			msgs[i] = texts[(rng >> 40) % 6];
		}
		struct rf_strbuf plain = { 0 }, ranked = { 0 };
		ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &plain), 0);
		ck_assert_int_eq(
			rf_extender_write_filter_result_ranked(&a, oc, msgs, ranks, NULL, &ranked),
			0);
		ck_assert_str_eq(ranked.s, plain.s);
		rf_strbuf_release(&plain);
		rf_strbuf_release(&ranked);
		rf_extender_args_release(&a);
	}
}
END_TEST

/* Many nodes sharing messages by address, as remembered failures do (the writer measures each
 * address once): more addresses than it keeps, equal texts at other addresses, plain, escaped and
 * non-ASCII ones, in an order that revisits them; the text equals the tree version's. */
/* A reply of hundreds of KB is written into one buffer of about its size (server/http/bufpool.h),
 * not doubled into: every node failing alike, 8,000 names. */
START_TEST(test_fast_writer_sized_ahead)
{
	enum { NODES = 8000 };
	struct rf_extender_args a;
	char err[256];
	struct rf_strbuf body = { 0 };
	rf_strbuf_puts(&body, "{\"Pod\":{},\"NodeNames\":[");
	for (size_t i = 0; i < NODES; i++)
		rf_strbuf_printf(&body, "%s\"node-%05zu\"", i ? "," : "", i);
	rf_strbuf_puts(&body, "]}");
	ck_assert_int_eq(rf_extender_args_parse(body.s, body.len, &a, err, sizeof(err)), 0);
	enum rf_filter_outcome *oc = calloc(NODES, sizeof(*oc));
	const char **msgs = calloc(NODES, sizeof(*msgs));
	ck_assert(oc && msgs);
	for (size_t i = 0; i < NODES; i++) {
		oc[i] = i % 4 ? RF_FILTER_FAIL : RF_FILTER_PASS;
		msgs[i] = oc[i] == RF_FILTER_PASS
				  ? NULL
				  : "railfit: 0 of 8 GPUs free on the PCIe roots of "
				    "the NICs with bandwidth left";
	}
	struct rf_strbuf out = { 0 };
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &out), 0);
	ck_assert_uint_ge(out.len, 512 * 1024);
	ck_assert_uint_ge(out.cap, out.len + 1);
	ck_assert_msg(out.cap * 4 <= out.len * 5, "%zu bytes in a buffer of %zu", out.len, out.cap);
	rf_strbuf_release(&out);
	/* prioritize the same way */
	int *scores = calloc(NODES, sizeof(*scores));
	ck_assert_ptr_nonnull(scores);
	ck_assert_int_eq(rf_extender_write_priority_list(&a, scores, &out), 0);
	ck_assert_uint_ge(out.len, 200 * 1024);
	ck_assert_msg(out.cap * 4 <= out.len * 5, "%zu bytes in a buffer of %zu", out.len, out.cap);
	rf_strbuf_release(&out);
	free(scores);
	free(oc);
	free(msgs);
	rf_extender_args_release(&a);
	rf_strbuf_release(&body);
}
END_TEST

START_TEST(test_fast_writer_shared_messages)
{
	enum { NODES = 1500, TEXTS = 700 };
	struct rf_extender_args a;
	char err[256];
	struct rf_strbuf body = { 0 };
	rf_strbuf_puts(&body, "{\"Pod\":{},\"NodeNames\":[");
	for (size_t i = 0; i < NODES; i++)
		rf_strbuf_printf(&body, "%s\"node-%04zu\"", i ? "," : "", (i * 7919) % NODES);
	rf_strbuf_puts(&body, "]}");
	ck_assert_int_eq(rf_extender_args_parse(body.s, body.len, &a, err, sizeof(err)), 0);
	char **texts = calloc(TEXTS, sizeof(*texts));
	enum rf_filter_outcome *oc = calloc(NODES, sizeof(*oc));
	const char **msgs = calloc(NODES, sizeof(*msgs));
	ck_assert(texts && oc && msgs);
	for (size_t t = 0; t < TEXTS; t++) {
		char buf[320];
		/* every third text repeats another's content at its own address */
		size_t v = t % 3 == 2 ? t / 3 : t;
		snprintf(buf, sizeof(buf), "%s message %zu%s",
			 v % 5 == 0 ? "railfit: <escaped> & \"quoted\"" : "railfit: plain", v,
			 v % 7 == 0 ? " caf\xc3\xa9 \xe2\x80\xa8" : "");
		texts[t] = strdup(buf);
		ck_assert_ptr_nonnull(texts[t]);
	}
	for (size_t i = 0; i < NODES; i++) {
		oc[i] = (enum rf_filter_outcome)((i * 5 + 1) % 3);
		msgs[i] = texts[(i * 31) % TEXTS];
	}
	json_t *tree = rf_extender_filter_result(&a, oc, msgs, NULL);
	ck_assert_ptr_nonnull(tree);
	size_t want_len;
	char *want = rf_json_dump_go(tree, &want_len);
	json_decref(tree);
	struct rf_strbuf b = { 0 };
	ck_assert_int_eq(rf_extender_write_filter_result(&a, oc, msgs, NULL, &b), 0);
	ck_assert(b.len == want_len && memcmp(b.s, want, want_len) == 0);
	rf_strbuf_release(&b);
	free(want);
	for (size_t t = 0; t < TEXTS; t++)
		free(texts[t]);
	free(texts);
	free(oc);
	free(msgs);
	rf_strbuf_release(&body);
	rf_extender_args_release(&a);
}
END_TEST

/* The scanner on its own: types, spans, the canonical flag. */
static enum rf_jscan_type
scan(const char *text, bool *ret_canon, struct rf_jscan_span *ret_span)
{
	struct rf_jscan s;
	rf_jscan_init(&s, text, strlen(text));
	enum rf_jscan_type t = rf_jscan_value(&s, ret_span);
	if (ret_canon)
		*ret_canon = s.canon;
	if (t != RF_JSCAN_ERROR && s.pos != s.len)
		t = RF_JSCAN_ERROR; /* these tests give exactly one value */
	rf_jscan_release(&s);
	return t;
}

START_TEST(test_jscan_values)
{
	static const struct {
		const char *text;
		enum rf_jscan_type type;
		bool canon;
	} cases[] = {
		{ "{}", RF_JSCAN_OBJECT, true },
		{ "[]", RF_JSCAN_ARRAY, true },
		{ "{\"a\":[1,{\"b\":null}],\"c\":true}", RF_JSCAN_OBJECT, true },
		{ "{ }", RF_JSCAN_OBJECT, false },
		{ "\"x\"", RF_JSCAN_STRING, true },
		{ "\"\\\"\\\\\\n\\r\\t\\b\\f\"", RF_JSCAN_STRING, true },
		{ "\"\\u001f\\u003c\\u003e\\u0026\\u2028\\u2029\"", RF_JSCAN_STRING, true },
		{ "\"\\u001F\"", RF_JSCAN_STRING, false },
		{ "\"\\u000a\"", RF_JSCAN_STRING, false },
		{ "\"\\/\"", RF_JSCAN_STRING, false },
		{ "\"\\ud83d\\ude80\"", RF_JSCAN_STRING, false },
		{ "\"\xf0\x9f\x9a\x80\"", RF_JSCAN_STRING, true },
		{ "\"<\"", RF_JSCAN_STRING, false },
		{ "\"a\x7f\"", RF_JSCAN_STRING, true },
		{ "0", RF_JSCAN_NUMBER, true },
		{ "-0", RF_JSCAN_NUMBER, false },
		{ "-12", RF_JSCAN_NUMBER, true },
		{ "1.0", RF_JSCAN_NUMBER, false },
		{ "1E5", RF_JSCAN_NUMBER, false },
		{ "true", RF_JSCAN_TRUE, true },
		{ "false", RF_JSCAN_FALSE, true },
		{ "null", RF_JSCAN_NULL, true },
		{ "{\"a\":1,\"a\":1}", RF_JSCAN_ERROR, true },
		{ "{\"a\\u0062\":1}", RF_JSCAN_ERROR, true },
		{ "\"\x01\"", RF_JSCAN_ERROR, true },
		{ "[1 2]", RF_JSCAN_ERROR, true },
		{ "{\"a\"}", RF_JSCAN_ERROR, true },
		{ "", RF_JSCAN_ERROR, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool canon = false;
		enum rf_jscan_type t = scan(cases[i].text, &canon, NULL);
		ck_assert_msg(t == cases[i].type, "%s: type %d, want %d", cases[i].text, t,
			      cases[i].type);
		if (t != RF_JSCAN_ERROR)
			ck_assert_msg(canon == cases[i].canon, "%s: canon %d", cases[i].text,
				      canon);
	}
	/* the span covers the value only */
	struct rf_jscan s;
	const char *text = "[ {\"k\":\"v\"} , 7 ]";
	rf_jscan_init(&s, text, strlen(text));
	size_t count = 0;
	ck_assert(rf_jscan_array_open(&s));
	ck_assert(rf_jscan_array_next(&s, &count));
	struct rf_jscan_span sp;
	ck_assert_int_eq(rf_jscan_value(&s, &sp), RF_JSCAN_OBJECT);
	ck_assert_uint_eq(sp.len, 9);
	ck_assert(memcmp(sp.s, "{\"k\":\"v\"}", 9) == 0);
	ck_assert(rf_jscan_array_next(&s, &count));
	ck_assert_int_eq(rf_jscan_value(&s, &sp), RF_JSCAN_NUMBER);
	ck_assert(!rf_jscan_array_next(&s, &count));
	ck_assert_int_eq(s.err, 0);
	ck_assert_uint_eq(s.pos, strlen(text));
	rf_jscan_release(&s);
	/* many keys: duplicates found by sorting */
	struct rf_strbuf b = { 0 };
	rf_strbuf_putc(&b, '{');
	for (int i = 0; i < 100; i++)
		rf_strbuf_printf(&b, "%s\"k%d\":%d", i ? "," : "", i, i);
	rf_strbuf_putc(&b, '}');
	ck_assert_int_eq(scan(b.s, NULL, NULL), RF_JSCAN_OBJECT);
	b.s[b.len - 1] = ',';
	rf_strbuf_puts(&b, "\"k57\":0}");
	ck_assert_int_eq(scan(b.s, NULL, NULL), RF_JSCAN_ERROR);
	rf_strbuf_release(&b);
}
END_TEST

START_TEST(test_jscan_unescape)
{
	static const struct {
		const char *raw, *want;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\\nb\\tc\\\\d\\\"e\\/f\\bg\\fh\\ri", "a\nb\tc\\d\"e/f\bg\fh\ri" },
		{ "\\u0041\\u00e9\\u20AC", "A\xc3\xa9\xe2\x82\xac" },
		{ "\\ud83d\\ude80!", "\xf0\x9f\x9a\x80!" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		size_t n = rf_jscan_unescape(cases[i].raw, strlen(cases[i].raw), out);
		ck_assert_uint_eq(n, strlen(cases[i].want));
		ck_assert(memcmp(out, cases[i].want, n) == 0);
	}
	/* rf_gojson_plain_prefix: the SSE2 and byte paths find the same first special byte */
	char buf[80];
	for (size_t at = 0; at < 70; at++) {
		memset(buf, 'a', sizeof(buf));
		buf[at] = (char)(at % 3 == 0 ? '&' : at % 3 == 1 ? 0x80 : 0x1f);
		ck_assert_uint_eq(rf_gojson_plain_prefix(buf, sizeof(buf)), at);
		ck_assert_uint_eq(rf_gojson_plain_prefix(buf, at), at);
	}
}
END_TEST

Suite *extender_fast_suite(void);

Suite *
extender_fast_suite(void)
{
	Suite *s = suite_create("extender-fast");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fast_golden_requests);
	tcase_add_test(tc, test_fast_truncated);
	tcase_add_test(tc, test_fast_shapes);
	tcase_add_test(tc, test_fast_errors);
	tcase_add_test(tc, test_fast_deep_nesting);
	suite_add_tcase(s, tc);
	tc = tcase_create("write");
	tcase_add_test(tc, test_fast_writer_messages);
	tcase_add_test(tc, test_fast_writer_shared_messages);
	tcase_add_test(tc, test_fast_writer_sized_ahead);
	tcase_add_test(tc, test_fast_writer_sorted_names);
	tcase_add_test(tc, test_fast_writer_ranked);
	suite_add_tcase(s, tc);
	tc = tcase_create("jscan");
	tcase_add_test(tc, test_jscan_values);
	tcase_add_test(tc, test_jscan_unescape);
	suite_add_tcase(s, tc);
	return s;
}
