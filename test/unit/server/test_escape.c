/* String escaping: JSON as klog's JSON format writes it, JSON as Go's json.Marshal writes it
 * (the flag), and Go's strconv.Quote for klog text. */
#include <string.h>

#include <check.h>

#include "server/http/escape.h"

struct out {
	char s[256];
	size_t len;
};

static void
put(void *ctx, const char *s, size_t n)
{
	struct out *o = ctx;
	ck_assert_uint_lt(o->len + n, sizeof(o->s));
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static const char *
json(const char *s, size_t n, unsigned flags, struct out *o)
{
	o->len = 0;
	o->s[0] = '\0';
	rf_escape_json(s, n, flags, put, o);
	return o->s;
}

static const char *
goq(const char *s, struct out *o)
{
	o->len = 0;
	o->s[0] = '\0';
	rf_escape_go_quote(s, strlen(s), put, o);
	return o->s;
}

START_TEST(test_escape_json_plain)
{
	struct out o;
	ck_assert_str_eq(json("", 0, 0, &o), "\"\"");
	ck_assert_str_eq(json("a\"b\\c", 5, 0, &o), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(json("\n\r\t\b\f\x01\x1f\x7f", 8, 0, &o),
			 "\"\\n\\r\\t\\u0008\\u000c\\u0001\\u001f\x7f\"");
	ck_assert_str_eq(json("<a&b>", 5, 0, &o), "\"<a&b>\"");
	ck_assert_str_eq(json("\xe2\x80\xa8\xc3\xa9", 5, 0, &o), "\"\xe2\x80\xa8\xc3\xa9\"");
	ck_assert_str_eq(json("a\xffz\xc3", 4, 0, &o), "\"a\\ufffdz\\ufffd\"");
	/* An embedded NUL is a control character like the others. */
	ck_assert_str_eq(json("a\0b", 3, 0, &o), "\"a\\u0000b\"");
}
END_TEST

START_TEST(test_escape_json_go)
{
	struct out o;
	ck_assert_str_eq(json("a\"b\\c", 5, RF_ESCAPE_GO_JSON, &o), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(json("\n\r\t\b\f\x01\x7f", 7, RF_ESCAPE_GO_JSON, &o),
			 "\"\\n\\r\\t\\b\\f\\u0001\x7f\"");
	ck_assert_str_eq(json("<a&b>", 5, RF_ESCAPE_GO_JSON, &o), "\"\\u003ca\\u0026b\\u003e\"");
	ck_assert_str_eq(json("\xe2\x80\xa8x\xe2\x80\xa9\xc3\xa9", 9, RF_ESCAPE_GO_JSON, &o),
			 "\"\\u2028x\\u2029\xc3\xa9\"");
	ck_assert_str_eq(json("\xed\xa0\x80", 3, RF_ESCAPE_GO_JSON, &o),
			 "\"\\ufffd\\ufffd\\ufffd\"");
}
END_TEST

START_TEST(test_escape_go_quote)
{
	struct out o;
	ck_assert_str_eq(goq("", &o), "\"\"");
	ck_assert_str_eq(goq("plain text", &o), "\"plain text\"");
	ck_assert_str_eq(goq("a\"b\\c", &o), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(goq("\a\b\f\n\r\t\v", &o), "\"\\a\\b\\f\\n\\r\\t\\v\"");
	ck_assert_str_eq(goq("\x01\x1f\x7f", &o), "\"\\x01\\x1f\\x7f\"");
	ck_assert_str_eq(goq("\xc3\xa9<&>", &o), "\"\xc3\xa9<&>\"");
	ck_assert_str_eq(goq("a\xff\xc3", &o), "\"a\\xff\\xc3\"");
}
END_TEST

Suite *escape_suite(void);

Suite *
escape_suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("escape");
	tcase_add_test(tc, test_escape_json_plain);
	tcase_add_test(tc, test_escape_json_go);
	tcase_add_test(tc, test_escape_go_quote);
	suite_add_tcase(s, tc);
	return s;
}
