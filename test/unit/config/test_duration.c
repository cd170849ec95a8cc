/* Go-style durations: parsing into milliseconds (rounded up) and Duration.String() formatting. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "config/duration.h"

Suite *duration_suite(void);

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct parse_case {
	const char *in;
	int r;
	int64_t ms;
};

static const struct parse_case parses[] = {
	{ "0", 0, 0 },
	{ "+0", 0, 0 },
	{ "-0", 0, 0 },
	{ "0s", 0, 0 },
	{ "0h0m", 0, 0 },
	{ "-0s", 0, 0 },
	{ "10s", 0, 10000 },
	{ "+10s", 0, 10000 },
	{ "2m", 0, 120000 },
	{ "5m", 0, 300000 },
	{ "10m", 0, 600000 },
	{ "30s", 0, 30000 },
	{ "1h", 0, 3600000 },
	{ "1h30m", 0, 5400000 },
	{ "1h1m1s1ms", 0, 3661001 },
	{ "1s500ms", 0, 1500 },
	{ "1ms1s", 0, 1001 },
	{ "1.5s", 0, 1500 },
	{ ".5s", 0, 500 },
	{ "5.s", 0, 5000 },
	{ "1.5h", 0, 5400000 },
	{ "2h45m0.5s", 0, 9900500 },
	{ "250ms", 0, 250 },
	{ "100h", 0, 360000000 },
	{ "1ns", 0, 1 }, /* rounded up */
	{ "1us", 0, 1 },
	{ "1\xc2\xb5s", 0, 1 }, /* U+00B5 */
	{ "1\xce\xbcs", 0, 1 }, /* U+03BC */
	{ "1000us", 0, 1 },
	{ "1001us", 0, 2 },
	{ "1000000ns", 0, 1 },
	{ "1000001ns", 0, 2 },
	{ "0.0001ms", 0, 1 },
	{ "1.0000001s", 0, 1001 },
	{ "0.000000001s", 0, 1 },
	{ "0.0000000001s", 0, 0 }, /* below 1ns: truncated to 0 by Go too */
	{ "1.000000000000000000000001s", 0, 1000 },
	{ "2562047h", 0, 9223369200000LL },
	{ "9223372036854775807ns", 0, 9223372036855LL },
	{ "2562048h", -ERANGE, 0 },
	{ "9223372036854775808ns", -ERANGE, 0 },
	{ "99999999999999999999s", -ERANGE, 0 },
	{ "2562047h2562047h", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "+", -EINVAL, 0 },
	{ "-", -EINVAL, 0 },
	{ "s", -EINVAL, 0 },
	{ "10", -EINVAL, 0 },
	{ "00", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 },
	{ "1d", -EINVAL, 0 },
	{ "1sec", -EINVAL, 0 },
	{ "1S", -EINVAL, 0 },
	{ "1H", -EINVAL, 0 },
	{ "1 s", -EINVAL, 0 },
	{ " 1s", -EINVAL, 0 },
	{ "1s ", -EINVAL, 0 },
	{ ".s", -EINVAL, 0 },
	{ "1..5s", -EINVAL, 0 },
	{ "1e3s", -EINVAL, 0 },
	{ "1h-30m", -EINVAL, 0 },
	{ "\xc2\xb5s", -EINVAL, 0 },
	{ "1\xc2s", -EINVAL, 0 },
	{ "-1s", -EINVAL, 0 }, /* negative */
	{ "-1ns", -EINVAL, 0 },
	{ "-1h30m", -EINVAL, 0 },
	{ "10s5", -EINVAL, 0 },
	{ "ten", -EINVAL, 0 },
};

START_TEST(test_duration_parse)
{
	const struct parse_case *c = &parses[_i];
	int64_t ms = -12345;
	int r = rf_duration_parse(c->in, &ms);

	ck_assert_msg(r == c->r, "'%s': expected %d, got %d", c->in, c->r, r);
	if (r == 0)
		ck_assert_msg(ms == c->ms, "'%s': expected %lld ms, got %lld", c->in,
			      (long long)c->ms, (long long)ms);
	else
		ck_assert_msg(ms == -12345, "'%s': output written on error", c->in);
}
END_TEST

START_TEST(test_duration_parse_null)
{
	int64_t ms = 7;

	ck_assert_int_eq(rf_duration_parse(NULL, &ms), -EINVAL);
	ck_assert_int_eq(ms, 7);
}
END_TEST

struct format_case {
	int64_t ms;
	const char *out;
};

static const struct format_case formats[] = {
	{ 0, "0s" },
	{ 1, "1ms" },
	{ 250, "250ms" },
	{ 999, "999ms" },
	{ 1000, "1s" },
	{ 1001, "1.001s" },
	{ 1250, "1.25s" },
	{ 1500, "1.5s" },
	{ 10000, "10s" },
	{ 30000, "30s" },
	{ 59999, "59.999s" },
	{ 60000, "1m0s" },
	{ 90500, "1m30.5s" },
	{ 120000, "2m0s" },
	{ 600000, "10m0s" },
	{ 3599000, "59m59s" },
	{ 3600000, "1h0m0s" },
	{ 5400000, "1h30m0s" },
	{ 3661001, "1h1m1.001s" },
	{ 86400000, "24h0m0s" },
	{ -1500, "-1.5s" },
	{ -250, "-250ms" },
	{ INT64_MAX, "2562047788015h12m55.807s" },
	{ INT64_MIN, "-2562047788015h12m55.808s" },
};

START_TEST(test_duration_format)
{
	char buf[64];

	ck_assert_str_eq(rf_duration_format(formats[_i].ms, buf, sizeof(buf)), formats[_i].out);
}
END_TEST

START_TEST(test_duration_roundtrip)
{
	static const int64_t values[] = { 0, 1, 999, 1000, 1500, 60000, 90500, 5400000, 86400001 };
	char buf[64];

	for (size_t i = 0; i < N(values); i++) {
		int64_t back = -1;
		rf_duration_format(values[i], buf, sizeof(buf));
		ck_assert_int_eq(rf_duration_parse(buf, &back), 0);
		ck_assert_int_eq(back, values[i]);
	}
}
END_TEST

START_TEST(test_duration_format_small_buffer)
{
	char buf[4] = "xyz";

	ck_assert_str_eq(rf_duration_format(5400000, buf, sizeof(buf)), "1h3");
	ck_assert_ptr_eq(rf_duration_format(1, buf, 0), buf);
	ck_assert_str_eq(buf, "1h3");
	ck_assert_ptr_null(rf_duration_format(1, NULL, 10));
}
END_TEST

Suite *
duration_suite(void)
{
	Suite *s = suite_create("duration");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_duration_parse, 0, N(parses));
	tcase_add_test(tc, test_duration_parse_null);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, test_duration_format, 0, N(formats));
	tcase_add_test(tc, test_duration_roundtrip);
	tcase_add_test(tc, test_duration_format_small_buffer);
	suite_add_tcase(s, tc);
	return s;
}
