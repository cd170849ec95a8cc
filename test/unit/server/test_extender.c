/* Extender wire codec: golden files from test/data/extender/ (copies of
 * reference/extender-examples/), Go's case-insensitive key matching, null handling, every decode
 * error, and the Go-compatible serialiser. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "server/http/extender.h"

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
	if (ret_len)
		*ret_len = (size_t)n;
	return buf;
}

/* Dump j the Go way (stealing it) and compare with a golden file byte for byte. */
static void
assert_golden(json_t *j, const char *golden)
{
	ck_assert_ptr_nonnull(j);
	size_t len;
	char *got = rf_json_dump_go(j, &len);
	json_decref(j);
	ck_assert_ptr_nonnull(got);
	size_t wlen;
	char *want = read_data(golden, &wlen);
	/* The golden files carry no trailing newline; tolerate one if an editor added it. */
	while (wlen > 0 && (want[wlen - 1] == '\n' || want[wlen - 1] == '\r'))
		want[--wlen] = '\0';
	ck_assert_msg(len == wlen && memcmp(got, want, len) == 0, "%s differs:\n got: %s\nwant: %s",
		      golden, got, want);
	free(got);
	free(want);
}

static char *
parse_args_file(const char *name, struct rf_extender_args *a)
{
	size_t len;
	char *body = read_data(name, &len);
	char err[256] = "";
	int r = rf_extender_args_parse(body, len, a, err, sizeof(err));
	ck_assert_msg(r == 0, "%s: %s", name, err);
	return body; /* the args may point into it (Node objects) */
}

static void
release_args(struct rf_extender_args *a, char *body)
{
	rf_extender_args_release(a);
	free(body);
}

static const char *const fail_msgs[] = { NULL, NULL, "example.com/foo: 0 of 4 devices free",
					 "example.com/foo: node has no healthy devices" };
static const enum rf_filter_outcome outcomes4[] = { RF_FILTER_PASS, RF_FILTER_PASS, RF_FILTER_FAIL,
						    RF_FILTER_UNRESOLVABLE };

START_TEST(test_extender_filter_golden_cache)
{
	struct rf_extender_args a;
	char *body;
	body = parse_args_file("filter-request-cachecapable.json", &a);
	ck_assert(a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 4);
	ck_assert_str_eq(a.node_names[0], "node-a");
	ck_assert_str_eq(a.node_names[3], "node-d");
	ck_assert_ptr_null(a.node_objs[0]);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(a.pod, "metadata"), "name")),
		"demo-pod");
	assert_golden(rf_extender_filter_result(&a, outcomes4, fail_msgs, NULL),
		      "filter-response-cachecapable.json");
	release_args(&a, body);
}
END_TEST

START_TEST(test_extender_filter_golden_nocache)
{
	struct rf_extender_args a;
	char *body;
	body = parse_args_file("filter-request-nocache.json", &a);
	ck_assert(!a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 4);
	ck_assert_str_eq(a.node_names[2], "node-c");
	ck_assert_ptr_nonnull(a.node_objs[2]);
	assert_golden(rf_extender_filter_result(&a, outcomes4, fail_msgs, NULL),
		      "filter-response-nocache.json");
	release_args(&a, body);
}
END_TEST

START_TEST(test_extender_filter_golden_error)
{
	struct rf_extender_args a;
	char *body;
	body = parse_args_file("filter-request-cachecapable.json", &a);
	assert_golden(rf_extender_filter_result(&a, outcomes4, fail_msgs,
						"example.com/foo inventory unavailable"),
		      "filter-response-error.json");
	release_args(&a, body);
	body = parse_args_file("filter-request-nocache.json", &a);
	assert_golden(rf_extender_filter_result(&a, outcomes4, fail_msgs,
						"example.com/foo inventory unavailable"),
		      "filter-response-error.json");
	release_args(&a, body);
}
END_TEST

START_TEST(test_extender_prioritize_golden)
{
	static const int scores[] = { 7, 3 };
	struct rf_extender_args a;
	char *body;
	body = parse_args_file("prioritize-request-cachecapable.json", &a);
	ck_assert(a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 2);
	assert_golden(rf_extender_priority_list(&a, scores),
		      "prioritize-response-cachecapable.json");
	release_args(&a, body);
	body = parse_args_file("prioritize-request-nocache.json", &a);
	ck_assert(!a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 2);
	assert_golden(rf_extender_priority_list(&a, scores), "prioritize-response-nocache.json");
	release_args(&a, body);
}
END_TEST

static void
parse_preempt_file(const char *name, struct rf_extender_preempt_args *a)
{
	size_t len;
	char *body = read_data(name, &len);
	char err[256] = "";
	int r = rf_extender_preempt_args_parse(body, len, a, err, sizeof(err));
	ck_assert_msg(r == 0, "%s: %s", name, err);
	free(body);
}

START_TEST(test_extender_preempt_golden)
{
	static const bool keep[] = { true, false };
	struct rf_extender_preempt_args a;
	parse_preempt_file("preempt-request-cachecapable.json", &a);
	ck_assert(a.meta_mode);
	ck_assert_uint_eq(a.n_nodes, 2);
	ck_assert_str_eq(a.nodes[0].node, "node-b");
	ck_assert_str_eq(a.nodes[1].node, "node-c");
	ck_assert_uint_eq(a.nodes[0].n_pods, 1);
	ck_assert_str_eq(a.nodes[0].uids[0], "c1d2e3f4-a5b6-4c7d-8e9f-101112131415");
	ck_assert_ptr_null(a.nodes[0].pods[0]);
	ck_assert_int_eq(a.nodes[1].num_pdb_violations, 1);
	assert_golden(rf_extender_preempt_result(&a, keep), "preempt-response-cachecapable.json");
	rf_extender_preempt_args_release(&a);

	parse_preempt_file("preempt-request-nocache.json", &a);
	ck_assert(!a.meta_mode);
	ck_assert_uint_eq(a.n_nodes, 2);
	ck_assert_str_eq(a.nodes[0].node, "node-b");
	ck_assert_str_eq(a.nodes[0].uids[0], "c1d2e3f4-a5b6-4c7d-8e9f-101112131415");
	ck_assert_ptr_nonnull(a.nodes[0].pods[0]);
	ck_assert_str_eq(a.nodes[1].uids[0], "d2e3f4a5-b6c7-4d8e-9f10-111213141516");
	assert_golden(rf_extender_preempt_result(&a, keep), "preempt-response-nocache.json");
	rf_extender_preempt_args_release(&a);
}
END_TEST

START_TEST(test_extender_bind_golden)
{
	const char *files[] = { "bind-request-cachecapable.json", "bind-request-nocache.json" };
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		char *body = read_data(files[i], &len);
		struct rf_extender_bind_args b;
		char err[256] = "";
		ck_assert_msg(rf_extender_bind_args_parse(body, len, &b, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(b.pod_name, "demo-pod");
		ck_assert_str_eq(b.pod_namespace, "default");
		ck_assert_str_eq(b.pod_uid, "0b6f3a2e-5c1d-4e8f-9a7b-2c3d4e5f6a7b");
		ck_assert_str_eq(b.node, "node-a");
		rf_extender_bind_args_release(&b);
		free(body);
	}
	assert_golden(rf_extender_bind_result(NULL), "bind-response-cachecapable.json");
	assert_golden(rf_extender_bind_result(""), "bind-response-nocache.json");
	assert_golden(rf_extender_bind_result("pods/binding \"demo-pod\" failed: 409 Conflict"),
		      "bind-response-error.json");
}
END_TEST

/* Every request example re-serialises to its own bytes: the Go dumper reproduces Go's output. */
START_TEST(test_extender_requests_roundtrip)
{
	const char *files[] = {
		"filter-request-cachecapable.json",     "filter-request-nocache.json",
		"prioritize-request-cachecapable.json", "prioritize-request-nocache.json",
		"preempt-request-cachecapable.json",    "preempt-request-nocache.json",
		"bind-request-cachecapable.json",       "apiserver-binding-request.json",
		"apiserver-binding-response.json",      "filter-response-nocache.json",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *body = read_data(files[i], &len);
		json_error_t jerr;
		json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
		ck_assert_msg(j != NULL, "%s: %s", files[i], jerr.text);
		size_t olen;
		char *out = rf_json_dump_go(j, &olen);
		ck_assert_msg(olen == len && memcmp(out, body, len) == 0, "%s does not round-trip",
			      files[i]);
		free(out);
		json_decref(j);
		free(body);
	}
}
END_TEST

static char *
lowercase(const char *s)
{
	char *d = strdup(s);
	for (char *p = d; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return d;
}

/* S2 asserts that a fully lower-cased copy decodes the same: Go matches keys case-insensitively. */
START_TEST(test_extender_lowercase_copies)
{
	size_t len;
	char *body = read_data("filter-request-cachecapable.json", &len);
	char *low = lowercase(body);
	struct rf_extender_args a;
	char err[256] = "";
	ck_assert_msg(rf_extender_args_parse(low, len, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert(a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 4);
	ck_assert_str_eq(a.node_names[1], "node-b");
	rf_extender_args_release(&a);
	free(low);
	free(body);

	body = read_data("filter-request-nocache.json", &len);
	low = lowercase(body);
	ck_assert_msg(rf_extender_args_parse(low, len, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 4);
	ck_assert_str_eq(a.node_names[3], "node-d");
	rf_extender_args_release(&a);
	free(low);
	free(body);

	const char *pfiles[] = { "preempt-request-cachecapable.json",
				 "preempt-request-nocache.json" };
	for (size_t i = 0; i < 2; i++) {
		body = read_data(pfiles[i], &len);
		low = lowercase(body);
		struct rf_extender_preempt_args p;
		ck_assert_msg(rf_extender_preempt_args_parse(low, len, &p, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_uint_eq(p.n_nodes, 2);
		ck_assert_int_eq(p.meta_mode, i == 0);
		ck_assert_str_eq(p.nodes[0].uids[0], "c1d2e3f4-a5b6-4c7d-8e9f-101112131415");
		ck_assert_int_eq(p.nodes[1].num_pdb_violations, 1);
		rf_extender_preempt_args_release(&p);
		free(low);
		free(body);
	}

	body = read_data("bind-request-cachecapable.json", &len);
	low = lowercase(body);
	struct rf_extender_bind_args b;
	ck_assert_msg(rf_extender_bind_args_parse(low, len, &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(b.pod_name, "demo-pod");
	ck_assert_str_eq(b.node, "node-a");
	rf_extender_bind_args_release(&b);
	free(low);
	free(body);
}
END_TEST

static int
parse_args_str(const char *s, struct rf_extender_args *a, char *err, size_t errlen)
{
	return rf_extender_args_parse(s, strlen(s), a, err, errlen);
}

START_TEST(test_extender_case_insensitive_keys)
{
	struct rf_extender_args a;
	char err[256] = "";
	/* Mixed case, old third-party spellings, upper case. */
	ck_assert_int_eq(
		parse_args_str("{\"pOD\":{},\"NODENAMES\":[\"n1\"]}", &a, err, sizeof(err)), 0);
	ck_assert(a.cache_mode);
	ck_assert_str_eq(a.node_names[0], "n1");
	rf_extender_args_release(&a);
	ck_assert_int_eq(parse_args_str("{\"pod\":{},\"nodenames\":[\"n1\",\"n2\"],\"nodes\":null}",
					&a, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(a.n_nodes, 2);
	rf_extender_args_release(&a);
	/* Go's folding: U+017F (long s) folds to S, U+0131 (dotless i) and U+0130 to I. */
	ck_assert_int_eq(
		parse_args_str("{\"Pod\":{},\"NodeName\xc5\xbf\":[\"n1\"]}", &a, err, sizeof(err)),
		0);
	ck_assert_uint_eq(a.n_nodes, 1);
	rf_extender_args_release(&a);
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"Nodes\":{\"\xc4\xb1tems\":[{\"metadata\":{"
					"\"name\":\"n9\"}}]}}",
					&a, err, sizeof(err)),
			 0);
	ck_assert_str_eq(a.node_names[0], "n9");
	rf_extender_args_release(&a);
	/* Other non-ASCII look-alikes do not match. */
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"N\xc3\xb6"
					"deNames\":[\"n1\"]}",
					&a, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "both Nodes and NodeNames are null: expected exactly one");
	/* An exact match is preferred over a case variant. */
	ck_assert_int_eq(
		parse_args_str("{\"pod\":5,\"Pod\":{},\"NodeNames\":[]}", &a, err, sizeof(err)), 0);
	ck_assert(a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 0);
	rf_extender_args_release(&a);
	/* Keys inside Node objects match case-insensitively as well (json tags do in Go). */
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"Nodes\":{\"Items\":[{\"METADATA\":{\"Name\":"
					"\"n1\"}}]},\"NodeNames\":null}",
					&a, err, sizeof(err)),
			 0);
	ck_assert(!a.cache_mode);
	ck_assert_str_eq(a.node_names[0], "n1");
	rf_extender_args_release(&a);

	json_t *o = json_pack("{s:i,s:i}", "Kelvin", 1, "zeta", 2);
	ck_assert_ptr_nonnull(rf_json_get_ci(o, "KELVIN"));
	ck_assert_ptr_null(rf_json_get_ci(o, "Kelvi"));
	ck_assert_ptr_null(rf_json_get_ci(o, "Kelvinn"));
	ck_assert_int_eq(json_integer_value(rf_json_get_ci(o, "ZeTa")), 2);
	json_object_set_new(o,
			    "\xe2\x84\xaa"
			    "elvin2",
			    json_integer(3)); /* KELVIN SIGN */
	ck_assert_int_eq(json_integer_value(rf_json_get_ci(o, "kelvin2")), 3);
	ck_assert_ptr_null(rf_json_get_ci(o, NULL));
	ck_assert_ptr_null(rf_json_get_ci(NULL, "x"));
	json_t *arr = json_array();
	ck_assert_ptr_null(rf_json_get_ci(arr, "x"));
	json_decref(arr);
	json_decref(o);
}
END_TEST

START_TEST(test_extender_null_handling)
{
	struct rf_extender_args a;
	char err[256] = "";
	/* Absent and null are the same for the unused field. */
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"NodeNames\":[\"a\"]}", &a, err, sizeof(err)),
			 0);
	rf_extender_args_release(&a);
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"Nodes\":{\"metadata\":{},\"items\":[]}}", &a,
					err, sizeof(err)),
			 0);
	ck_assert(!a.cache_mode);
	ck_assert_uint_eq(a.n_nodes, 0);
	rf_extender_args_release(&a);
	/* A NodeList with null or missing items has no nodes. */
	ck_assert_int_eq(
		parse_args_str("{\"Pod\":{},\"Nodes\":{\"items\":null},\"NodeNames\":null}", &a,
			       err, sizeof(err)),
		0);
	ck_assert_uint_eq(a.n_nodes, 0);
	rf_extender_args_release(&a);
	ck_assert_int_eq(parse_args_str("{\"Pod\":null,\"NodeNames\":[]}", &a, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "Pod: missing");

	/* Release of a zeroed struct and of NULL is harmless. */
	struct rf_extender_args z = { 0 };
	rf_extender_args_release(&z);
	rf_extender_args_release(NULL);
	struct rf_extender_preempt_args zp = { 0 };
	rf_extender_preempt_args_release(&zp);
	rf_extender_preempt_args_release(NULL);
	struct rf_extender_bind_args zb = { 0 };
	rf_extender_bind_args_release(&zb);
	rf_extender_bind_args_release(NULL);

	/* Preemption: a null victims entry is a nil *Victims, echoed back as null; null Pods stays
	 * null; a missing NumPDBViolations is 0; a missing UID is "". */
	const char *body = "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n2\":null,\"n1\":{\"Pods\":"
			   "null},\"n3\":{\"Pods\":[{}],\"NumPDBViolations\":null}},"
			   "\"NodeNameToVictims\":null}";
	struct rf_extender_preempt_args p;
	ck_assert_int_eq(rf_extender_preempt_args_parse(body, strlen(body), &p, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(p.n_nodes, 3);
	ck_assert_str_eq(p.nodes[0].node, "n1");
	ck_assert_uint_eq(p.nodes[0].n_pods, 0);
	ck_assert_str_eq(p.nodes[2].node, "n3");
	ck_assert_str_eq(p.nodes[2].uids[0], "");
	ck_assert_int_eq(p.nodes[2].num_pdb_violations, 0);
	static const bool all[] = { true, true, true };
	json_t *res = rf_extender_preempt_result(&p, all);
	char *s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s,
			 "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":null,\"NumPDBViolations\":"
			 "0},\"n2\":null,\"n3\":{\"Pods\":[{\"UID\":\"\"}],"
			 "\"NumPDBViolations\":0}}}");
	free(s);
	json_decref(res);
	static const bool none[] = { false, false, false };
	res = rf_extender_preempt_result(&p, none);
	s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s, "{\"NodeNameToMetaVictims\":{}}");
	free(s);
	json_decref(res);
	rf_extender_preempt_args_release(&p);
}
END_TEST

START_TEST(test_extender_result_shapes)
{
	struct rf_extender_args a;
	char err[256] = "";
	/* Map keys come out sorted bytewise whatever the request order; repeated names keep one
	 * entry; a NULL message is "". */
	ck_assert_int_eq(parse_args_str("{\"Pod\":{},\"NodeNames\":[\"n3\",\"B\",\"a\",\"n1\"]}",
					&a, err, sizeof(err)),
			 0);
	enum rf_filter_outcome oc[] = { RF_FILTER_FAIL, RF_FILTER_FAIL, RF_FILTER_PASS,
					RF_FILTER_UNRESOLVABLE };
	const char *msgs[] = { "m3 <&>", NULL, NULL, "m1" };
	json_t *res = rf_extender_filter_result(&a, oc, msgs, NULL);
	char *s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s, "{\"Nodes\":null,\"NodeNames\":[\"a\"],\"FailedNodes\":{\"B\":\"\","
			    "\"n3\":\"m3 \\u003c\\u0026\\u003e\"},\"FailedAndUnresolvableNodes\":{"
			    "\"n1\":\"m1\"},\"Error\":\"\"}");
	free(s);
	json_decref(res);
	/* Nothing passes: an empty list, not null. */
	enum rf_filter_outcome allfail[] = { RF_FILTER_FAIL, RF_FILTER_FAIL, RF_FILTER_FAIL,
					     RF_FILTER_FAIL };
	res = rf_extender_filter_result(&a, allfail, NULL, NULL);
	s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s,
			 "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"B\":\"\",\"a\":\"\","
			 "\"n1\":\"\",\"n3\":\"\"},\"FailedAndUnresolvableNodes\":{},"
			 "\"Error\":\"\"}");
	free(s);
	json_decref(res);
	rf_extender_args_release(&a);

	ck_assert_int_eq(
		parse_args_str("{\"Pod\":{},\"Nodes\":{\"items\":[]}}", &a, err, sizeof(err)), 0);
	res = rf_extender_filter_result(&a, NULL, NULL, NULL);
	s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s, "{\"Nodes\":{\"metadata\":{},\"items\":[]},\"NodeNames\":null,"
			    "\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	free(s);
	json_decref(res);
	res = rf_extender_priority_list(&a, NULL);
	s = rf_json_dump_go(res, NULL);
	ck_assert_str_eq(s, "[]");
	free(s);
	json_decref(res);
	rf_extender_args_release(&a);
}
END_TEST

struct bad_case {
	const char *body;
	const char *err; /* exact message, or a prefix ending in '*' */
};

/* want may contain '*' wildcards (any run of characters). */
static bool
glob_match(const char *want, const char *got)
{
	if (*want == '\0')
		return *got == '\0';
	if (*want == '*') {
		for (const char *g = got;; g++) {
			if (glob_match(want + 1, g))
				return true;
			if (*g == '\0')
				return false;
		}
	}
	return *got == *want && glob_match(want + 1, got + 1);
}

static void
check_err(const char *what, const char *body, int r, const char *err, const char *want)
{
	ck_assert_msg(r == -EINVAL, "%s %s: expected -EINVAL, got %d", what, body, r);
	ck_assert_msg(glob_match(want, err), "%s %s: got \"%s\", want \"%s\"", what, body, err,
		      want);
}

START_TEST(test_extender_args_errors)
{
	static const struct bad_case cases[] = {
		{ "", "empty body: expected an ExtenderArgs JSON object" },
		{ " \r\n\t", "empty body: expected an ExtenderArgs JSON object" },
		{ "null", "body: expected an ExtenderArgs object, got null" },
		{ "[]", "body: expected an ExtenderArgs object, got array" },
		{ "\"x\"", "body: expected an ExtenderArgs object, got string" },
		{ "5", "body: expected an ExtenderArgs object, got number" },
		{ "{\"Pod\":", "invalid JSON at line 1*" },
		{ "{\"Pod\":{}} trailing", "invalid JSON*" },
		{ "{\"Pod\":{},\"Pod\":{}}", "invalid JSON*duplicate*" },
		{ "{}", "Pod: missing" },
		{ "{\"NodeNames\":[]}", "Pod: missing" },
		{ "{\"Pod\":[],\"NodeNames\":[]}", "Pod: expected an object, got array" },
		{ "{\"Pod\":\"p\",\"NodeNames\":[]}", "Pod: expected an object, got string" },
		{ "{\"Pod\":{}}", "both Nodes and NodeNames are null: expected exactly one" },
		{ "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":null}",
		  "both Nodes and NodeNames are null: expected exactly one" },
		{ "{\"Pod\":{},\"Nodes\":{},\"NodeNames\":[]}",
		  "both Nodes and NodeNames are set: expected exactly one" },
		{ "{\"Pod\":{},\"NodeNames\":5}",
		  "NodeNames: expected an array of strings, got number" },
		{ "{\"Pod\":{},\"NodeNames\":{}}",
		  "NodeNames: expected an array of strings, got object" },
		{ "{\"Pod\":{},\"NodeNames\":\"a\"}",
		  "NodeNames: expected an array of strings, got string" },
		{ "{\"Pod\":{},\"NodeNames\":true}",
		  "NodeNames: expected an array of strings, got boolean" },
		{ "{\"Pod\":{},\"NodeNames\":[\"a\",1]}",
		  "NodeNames[1]: expected a string, got number" },
		{ "{\"Pod\":{},\"NodeNames\":[null]}",
		  "NodeNames[0]: expected a string, got null" },
		{ "{\"Pod\":{},\"Nodes\":[]}", "Nodes: expected a NodeList object, got array" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":{}}}",
		  "Nodes.items: expected an array of Node objects, got object" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"a\"}},\"b\"]}}",
		  "Nodes.items[1]: expected a Node object, got string" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":[{}]}}", "Nodes.items[0].metadata: missing" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":[]}]}}",
		  "Nodes.items[0].metadata: expected an object, got array" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{}}]}}",
		  "Nodes.items[0].metadata.name: missing" },
		{ "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":7}}]}}",
		  "Nodes.items[0].metadata.name: expected a string, got number" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rf_extender_args a;
		char err[256] = "";
		int r = parse_args_str(cases[i].body, &a, err, sizeof(err));
		check_err("args", cases[i].body, r, err, cases[i].err);
	}
	/* Truncated error buffers are fine. */
	struct rf_extender_args a;
	char tiny[8];
	ck_assert_int_eq(parse_args_str("{}", &a, tiny, sizeof(tiny)), -EINVAL);
	ck_assert_str_eq(tiny, "Pod: mi");
	ck_assert_int_eq(parse_args_str("{}", &a, NULL, 0), -EINVAL);
	/* A NUL inside the body is not JSON. */
	ck_assert_int_eq(rf_extender_args_parse("{\"Pod\":{}}\0x", 12, &a, tiny, sizeof(tiny)),
			 -EINVAL);
}
END_TEST

START_TEST(test_extender_preempt_errors)
{
	static const struct bad_case cases[] = {
		{ "", "empty body: expected an ExtenderPreemptionArgs JSON object" },
		{ "null", "body: expected an ExtenderPreemptionArgs object, got null" },
		{ "{\"NodeNameToMetaVictims\":{}}", "Pod: missing" },
		{ "{\"Pod\":[],\"NodeNameToMetaVictims\":{}}",
		  "Pod: expected an object, got array" },
		{ "{\"Pod\":{}}",
		  "both NodeNameToVictims and NodeNameToMetaVictims are null: expected exactly one" },
		{ "{\"Pod\":{},\"NodeNameToVictims\":{},\"NodeNameToMetaVictims\":{}}",
		  "both NodeNameToVictims and NodeNameToMetaVictims are set: expected exactly one" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":[]}",
		  "NodeNameToMetaVictims: expected an object mapping node names to MetaVictims, got "
		  "array" },
		{ "{\"Pod\":{},\"NodeNameToVictims\":5}",
		  "NodeNameToVictims: expected an object mapping node names to Victims, got number" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":[]}}",
		  "NodeNameToMetaVictims[\"n1\"]: expected an object (MetaVictims), got array" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":{}}}}",
		  "NodeNameToMetaVictims[\"n1\"].Pods: expected an array of MetaPod objects, got "
		  "object" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[\"u\"]}}}",
		  "NodeNameToMetaVictims[\"n1\"].Pods[0]: expected an object, got string" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":1}]}}}",
		  "NodeNameToMetaVictims[\"n1\"].Pods[0].UID: expected a string, got number" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":{\"NumPDBViolations\":\"1\"}}}",
		  "NodeNameToMetaVictims[\"n1\"].NumPDBViolations: expected an integer, got string" },
		{ "{\"Pod\":{},\"NodeNameToMetaVictims\":{\"n1\":{\"NumPDBViolations\":1.5}}}",
		  "NodeNameToMetaVictims[\"n1\"].NumPDBViolations: expected an integer, got number "
		  "with a fraction or exponent" },
		{ "{\"Pod\":{},\"NodeNameToVictims\":{\"n1\":{\"Pods\":[{\"metadata\":5}]}}}",
		  "NodeNameToVictims[\"n1\"].Pods[0].metadata: expected an object, got number" },
		{ "{\"Pod\":{},\"NodeNameToVictims\":{\"n1\":{\"Pods\":[{\"metadata\":{\"uid\":[]}}]}}}",
		  "NodeNameToVictims[\"n1\"].Pods[0].metadata.uid: expected a string, got array" },
		{ "{\"Pod\":{},\"NodeNameToVictims\":{\"n1\":{\"Pods\":5}}}",
		  "NodeNameToVictims[\"n1\"].Pods: expected an array of Pod objects, got number" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rf_extender_preempt_args p;
		char err[256] = "";
		int r = rf_extender_preempt_args_parse(cases[i].body, strlen(cases[i].body), &p,
						       err, sizeof(err));
		check_err("preempt", cases[i].body, r, err, cases[i].err);
	}
}
END_TEST

START_TEST(test_extender_bind_errors)
{
	static const struct bad_case cases[] = {
		{ "", "empty body: expected an ExtenderBindingArgs JSON object" },
		{ "null", "body: expected an ExtenderBindingArgs object, got null" },
		{ "{\"PodNamespace\":\"d\",\"Node\":\"n\"}", "PodName: missing" },
		{ "{\"PodName\":null,\"PodNamespace\":\"d\",\"Node\":\"n\"}", "PodName: missing" },
		{ "{\"PodName\":5,\"PodNamespace\":\"d\",\"Node\":\"n\"}",
		  "PodName: expected a string, got number" },
		{ "{\"PodName\":\"p\",\"Node\":\"n\"}", "PodNamespace: missing" },
		{ "{\"PodName\":\"p\",\"PodNamespace\":\"d\"}", "Node: missing" },
		{ "{\"PodName\":\"p\",\"PodNamespace\":\"d\",\"Node\":\"\"}",
		  "Node: expected a non-empty string" },
		{ "{\"PodName\":\"p\",\"PodNamespace\":\"d\",\"PodUID\":{},\"Node\":\"n\"}",
		  "PodUID: expected a string, got object" },
		{ "{\"PodName\":\"p\",\"PodName\":\"q\"}", "invalid JSON*duplicate*" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rf_extender_bind_args b;
		char err[256] = "";
		int r = rf_extender_bind_args_parse(cases[i].body, strlen(cases[i].body), &b, err,
						    sizeof(err));
		check_err("bind", cases[i].body, r, err, cases[i].err);
	}
	/* PodUID is optional (the binding then has no UID precondition). */
	const char *ok = "{\"podname\":\"p\",\"PODNAMESPACE\":\"d\",\"node\":\"n\"}";
	struct rf_extender_bind_args b;
	char err[256] = "";
	ck_assert_int_eq(rf_extender_bind_args_parse(ok, strlen(ok), &b, err, sizeof(err)), 0);
	ck_assert_str_eq(b.pod_uid, "");
	ck_assert_str_eq(b.pod_namespace, "d");
	rf_extender_bind_args_release(&b);
}
END_TEST

static void
assert_dump(json_t *j, const char *want)
{
	char *s = rf_json_dump_go(j, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(strcmp(s, want) == 0, "got %s, want %s", s, want);
	free(s);
	json_decref(j);
}

START_TEST(test_extender_go_strings)
{
	/* json.Marshal escapes HTML characters and the JS line separators. */
	assert_dump(json_string("<a href=\"x\">&</a>"),
		    "\"\\u003ca href=\\\"x\\\"\\u003e\\u0026\\u003c/a\\u003e\"");
	assert_dump(json_string("line\xe2\x80\xa8sep\xe2\x80\xa9"), "\"line\\u2028sep\\u2029\"");
	/* Short escapes for \b \f \n \r \t (Go 1.22+), \u00XX for other controls, DEL and / plain.
	 */
	assert_dump(json_string("\b\f\n\r\t\x01\x1f\x7f/\\"),
		    "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f/\\\\\"");
	/* Valid non-ASCII passes through unescaped. */
	assert_dump(json_string("gr\xc3\xbc\xc3\x9f \xf0\x9f\x9a\x80"),
		    "\"gr\xc3\xbc\xc3\x9f \xf0\x9f\x9a\x80\"");
	/* Invalid UTF-8 becomes U+FFFD, one per bad byte. */
	assert_dump(json_stringn_nocheck("a\xff\xc3(b", 5), "\"a\\ufffd\\ufffd(b\"");
	/* Keys are escaped the same way. */
	json_t *o = json_object();
	json_object_set_new(o, "<k>", json_true());
	json_object_set_new(o, "n", json_null());
	json_object_set_new(o, "f", json_false());
	assert_dump(o, "{\"\\u003ck\\u003e\":true,\"n\":null,\"f\":false}");
	assert_dump(NULL, "null");
}
END_TEST

START_TEST(test_extender_go_numbers)
{
	static const struct {
		double v;
		const char *want;
	} reals[] = {
		{ 1.0, "1" },
		{ -2.0, "-2" },
		{ 0.1, "0.1" },
		{ 0.5, "0.5" },
		{ 1.5e-6, "0.0000015" },
		{ 1e-6, "0.000001" },
		{ 1e-7, "1e-7" },
		{ 1.25e-10, "1.25e-10" },
		{ 1e20, "100000000000000000000" },
		{ 1e21, "1e+21" },
		{ 1.5e300, "1.5e+300" },
		{ 123456789.125, "123456789.125" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 100, "100" },
		{ 3.14159, "3.14159" },
	};
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		assert_dump(json_real(reals[i].v), reals[i].want);
	assert_dump(json_real(-0.0), "-0");
	assert_dump(json_real(0.0), "0");
	assert_dump(json_integer(-9223372036854775807LL - 1), "-9223372036854775808");
	assert_dump(json_integer(42), "42");
	json_t *arr = json_array();
	json_array_append_new(arr, json_integer(1));
	json_array_append_new(arr, json_array());
	json_array_append_new(arr, json_object());
	assert_dump(arr, "[1,[],{}]");
}
END_TEST

Suite *extender_suite(void);

Suite *
extender_suite(void)
{
	Suite *s = suite_create("extender");
	TCase *tc = tcase_create("golden");
	tcase_add_test(tc, test_extender_filter_golden_cache);
	tcase_add_test(tc, test_extender_filter_golden_nocache);
	tcase_add_test(tc, test_extender_filter_golden_error);
	tcase_add_test(tc, test_extender_prioritize_golden);
	tcase_add_test(tc, test_extender_preempt_golden);
	tcase_add_test(tc, test_extender_bind_golden);
	tcase_add_test(tc, test_extender_requests_roundtrip);
	suite_add_tcase(s, tc);
	tc = tcase_create("decode");
	tcase_add_test(tc, test_extender_lowercase_copies);
	tcase_add_test(tc, test_extender_case_insensitive_keys);
	tcase_add_test(tc, test_extender_null_handling);
	tcase_add_test(tc, test_extender_result_shapes);
	tcase_add_test(tc, test_extender_args_errors);
	tcase_add_test(tc, test_extender_preempt_errors);
	tcase_add_test(tc, test_extender_bind_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("gojson");
	tcase_add_test(tc, test_extender_go_strings);
	tcase_add_test(tc, test_extender_go_numbers);
	suite_add_tcase(s, tc);
	return s;
}
