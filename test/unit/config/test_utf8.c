/* UTF-8 helpers: decoding with validation as Go's utf8.DecodeRune (without the RuneError
 * value), valid prefixes, counting, encoding and trimming a cut-off tail. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "config/utf8.h"

START_TEST(test_utf8_decode_valid)
{
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} cases[] = {
		{ "A", 1, 'A' },
		{ "\x7f", 1, 0x7f },
		{ "\xc2\x80", 2, 0x80 },
		{ "\xc3\xa9", 2, 0xe9 },
		{ "\xdf\xbf", 2, 0x7ff },
		{ "\xe0\xa0\x80", 3, 0x800 },
		{ "\xe2\x80\xa8", 3, 0x2028 },
		{ "\xed\x9f\xbf", 3, 0xd7ff },
		{ "\xee\x80\x80", 3, 0xe000 },
		{ "\xef\xbf\xbf", 3, 0xffff },
		{ "\xf0\x90\x80\x80", 4, 0x10000 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t cp = 0;
		ck_assert_uint_eq(rf_utf8_decode(cases[i].s, strlen(cases[i].s), &cp),
				  cases[i].len);
		ck_assert_uint_eq(cp, cases[i].cp);
		char out[4];
		ck_assert_uint_eq(rf_utf8_encode(cases[i].cp, out), cases[i].len);
		ck_assert_mem_eq(out, cases[i].s, cases[i].len);
	}
	/* The NUL byte is a code point too. */
	uint32_t cp = 1;
	ck_assert_uint_eq(rf_utf8_decode("", 1, &cp), 1);
	ck_assert_uint_eq(cp, 0);
}
END_TEST

START_TEST(test_utf8_decode_invalid)
{
	static const char *const bad[] = {
		"\x80",             /* stray continuation */
		"\xbf",             /* stray continuation */
		"\xc0\x80",         /* overlong NUL */
		"\xc1\xbf",         /* overlong */
		"\xe0\x80\x80",     /* overlong 3-byte */
		"\xe0\x9f\xbf",     /* overlong 3-byte */
		"\xed\xa0\x80",     /* surrogate U+D800 */
		"\xed\xbf\xbf",     /* surrogate U+DFFF */
		"\xf0\x8f\xbf\xbf", /* overlong 4-byte */
		"\xf4\x90\x80\x80", /* beyond U+10FFFF */
		"\xf5\x80\x80\x80", /* lead byte never valid */
		"\xff",             /* lead byte never valid */
		"\xc3(",            /* bad continuation */
		"\xe2\x28\xa1",     /* bad continuation */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t cp = 0x1234;
		ck_assert_msg(rf_utf8_decode(bad[i], strlen(bad[i]), &cp) == 0, "case %zu", i);
		ck_assert_uint_eq(cp, 0x1234);
	}
	/* A sequence cut short by n is invalid even when the bytes beyond n would complete it. */
	uint32_t cp = 0;
	ck_assert_uint_eq(rf_utf8_decode("\xe2\x80\xa8", 2, &cp), 0);
	ck_assert_uint_eq(rf_utf8_decode("\xf0\x90\x80\x80", 3, &cp), 0);
}
END_TEST

START_TEST(test_utf8_prefix_count)
{
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
	size_t n = strlen(s);
	ck_assert_uint_eq(rf_utf8_valid_prefix(s, n), n);
	ck_assert_uint_eq(rf_utf8_count(s, n), 5);
	ck_assert_uint_eq(rf_utf8_valid_prefix(s, 5), 3); /* stops before the cut euro sign */
	ck_assert_uint_eq(rf_utf8_valid_prefix("ab\xffz", 4), 2);
	ck_assert_uint_eq(rf_utf8_valid_prefix("", 0), 0);
	ck_assert_uint_eq(rf_utf8_count("", 0), 0);
}
END_TEST

START_TEST(test_utf8_trim)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "abc", "abc" },
		{ "ab\xc3\xa9", "ab\xc3\xa9" },                 /* complete 2-byte */
		{ "ab\xc3", "ab" },                             /* lead byte alone */
		{ "ab\xe2\x82", "ab" },                         /* 2 of 3 */
		{ "ab\xe2\x82\xac", "ab\xe2\x82\xac" },         /* complete 3-byte */
		{ "ab\xf0\x9f\x98", "ab" },                     /* 3 of 4 */
		{ "ab\xf0\x9f\x98\x80", "ab\xf0\x9f\x98\x80" }, /* complete 4-byte */
		{ "\x80\x80", "\x80\x80" },                     /* no lead byte: left as it is */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[16];
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		rf_utf8_trim(buf);
		ck_assert_msg(strcmp(buf, cases[i].want) == 0, "case %zu", i);
	}
}
END_TEST

Suite *utf8_suite(void);

Suite *
utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("utf8");
	tcase_add_test(tc, test_utf8_decode_valid);
	tcase_add_test(tc, test_utf8_decode_invalid);
	tcase_add_test(tc, test_utf8_prefix_count);
	tcase_add_test(tc, test_utf8_trim);
	suite_add_tcase(s, tc);
	return s;
}
