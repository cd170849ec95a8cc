/* Kubernetes quantities: grammar, exact values, rounding, range, formatting. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "config/quantity.h"

Suite *quantity_suite(void);

#define N(a) (sizeof(a) / sizeof((a)[0]))

__extension__ typedef unsigned __int128 u128;

/* Expected value as whole units plus nano-units (both with the sign of the value). */
#define NANO(units, nano) ((rf_i128)1000000000 * (units) + (nano))

struct valid_case {
	const char *in;
	rf_i128 nano;
};

static const struct valid_case valid[] = {
	/* plain numbers, signs, fractions */
	{ "0", 0 },
	{ "1", NANO(1, 0) },
	{ "+1", NANO(1, 0) },
	{ "-2", NANO(-2, 0) },
	{ "-0", 0 },
	{ "00012", NANO(12, 0) },
	{ "1.", NANO(1, 0) },
	{ ".5", NANO(0, 500000000) },
	{ "+.5", NANO(0, 500000000) },
	{ "1.5", NANO(1, 500000000) },
	{ "-1.5", NANO(-1, -500000000) },
	{ "0.1", NANO(0, 100000000) },
	{ "12345", NANO(12345, 0) },
	{ "1.G", NANO(1000000000, 0) },
	/* every decimal SI suffix */
	{ "1n", 1 },
	{ "1u", 1000 },
	{ "1m", 1000000 },
	{ "1k", NANO(1000, 0) },
	{ "1M", NANO(1000000, 0) },
	{ "1G", NANO(1000000000, 0) },
	{ "1T", NANO(1000000000000LL, 0) },
	{ "1P", NANO(1000000000000000LL, 0) },
	{ "1E", NANO(1000000000000000000LL, 0) },
	{ "100m", NANO(0, 100000000) },
	{ "1500m", NANO(1, 500000000) },
	{ "2.5k", NANO(2500, 0) },
	{ "400G", NANO(400000000000LL, 0) },
	{ "1000P", NANO(1000000000000000000LL, 0) },
	/* every binary SI suffix */
	{ "1Ki", NANO(1024, 0) },
	{ "1Mi", NANO(1048576, 0) },
	{ "1Gi", NANO(1073741824LL, 0) },
	{ "1Ti", NANO(1099511627776LL, 0) },
	{ "1Pi", NANO(1125899906842624LL, 0) },
	{ "0.5Ei", NANO(576460752303423488LL, 0) },
	{ "128Mi", NANO(134217728LL, 0) },
	{ "1.5Ti", NANO(1649267441664LL, 0) },
	{ "1.5Gi", NANO(1610612736LL, 0) },
	{ "0.5Mi", NANO(524288, 0) },
	{ "100.035Ki", NANO(102435, 840000000) },
	{ "48828125Ki", NANO(50000000000LL, 0) },
	/* decimal exponents */
	{ "1e3", NANO(1000, 0) },
	{ "1E3", NANO(1000, 0) },
	{ "1e+3", NANO(1000, 0) },
	{ "1E-3", NANO(0, 1000000) },
	{ "1e0", NANO(1, 0) },
	{ "12e-1", NANO(1, 200000000) },
	{ "1.5e3", NANO(1500, 0) },
	{ "-1e3", NANO(-1000, 0) },
	{ "1e18", NANO(1000000000000000000LL, 0) },
	{ "1e-9", 1 },
	{ "0e9223372036854775807", 0 },
	/* sub-nano precision rounds up (away from zero, as Kubernetes) */
	{ "1e-10", 1 },
	{ "5e-10", 1 },
	{ "0.0000000001", 1 },
	{ "-0.0000000001", -1 },
	{ "0.000000000001Ki", 2 },
	{ "1.0000000001", NANO(1, 1) },
	{ "1.00000000000000000000000000000000000001", NANO(1, 1) },
	{ "1.0000000000000000000000000000", NANO(1, 0) },
	{ "0.000001Ki", NANO(0, 1024000) },
	{ "1e-99999999999999", 1 },
	{ "0.0000000000", 0 },
	/* the limit itself: 10^27 nano */
	{ "1000000000000000000", NANO(1000000000000000000LL, 0) },
	{ "-1E", NANO(-1000000000000000000LL, 0) },
	{ "1000000000000000000000000000000000000e-18", NANO(1000000000000000000LL, 0) },
	{ "0.000000000000000001e36", NANO(1000000000000000000LL, 0) },
};

START_TEST(test_quantity_valid)
{
	const struct valid_case *c = &valid[_i];
	struct rf_quantity q = { 12345 };
	int r = rf_quantity_parse(c->in, &q);

	ck_assert_msg(r == 0, "'%s': %d", c->in, r);
	ck_assert_msg(q.nano == c->nano, "'%s': got %lld nano (low 64 bits)", c->in,
		      (long long)q.nano);
}
END_TEST

struct invalid_case {
	const char *in;
	int r;
};

static const struct invalid_case invalid[] = {
	{ "", -EINVAL },
	{ "G", -EINVAL },
	{ "Ki", -EINVAL },
	{ ".", -EINVAL },
	{ "-", -EINVAL },
	{ "+", -EINVAL },
	{ "-.", -EINVAL },
	{ "1.5.5", -EINVAL },
	{ "1.1.M", -EINVAL },
	{ "1..5", -EINVAL },
	{ "10 G", -EINVAL },
	{ " 1", -EINVAL },
	{ "1 ", -EINVAL },
	{ "1\t", -EINVAL },
	{ "0x10", -EINVAL },
	{ "1Kb", -EINVAL },
	{ "1K", -EINVAL },
	{ "1ki", -EINVAL },
	{ "1KI", -EINVAL },
	{ "1KiB", -EINVAL },
	{ "1i", -EINVAL },
	{ ".5i", -EINVAL },
	{ "-3.01i", -EINVAL },
	{ "0.1mi", -EINVAL },
	{ "0.1am", -EINVAL },
	{ "1Z", -EINVAL },
	{ "1Zi", -EINVAL },
	{ "1\xc2\xb5", -EINVAL },
	{ "1e", -EINVAL },
	{ "1e+", -EINVAL },
	{ "1e-", -EINVAL },
	{ "-3.01e-", -EINVAL },
	{ "1e1.5", -EINVAL },
	{ "1e.5", -EINVAL },
	{ "1e3k", -EINVAL },
	{ "1E3Ki", -EINVAL },
	{ "1e+-3", -EINVAL },
	{ "1+1.0M", -EINVAL },
	{ "1-", -EINVAL },
	{ "++1", -EINVAL },
	{ "--1", -EINVAL },
	{ "1,5", -EINVAL },
	{ "1_000", -EINVAL },
	{ "1/2", -EINVAL },
	{ "Inf", -EINVAL },
	{ "NaN", -EINVAL },
	{ "aoeu", -EINVAL },
	{ "1GG", -EINVAL },
	{ "0e99999999999999999999", -EINVAL }, /* exponent beyond int64, as Kubernetes */
	{ "1e184467440737095516160", -EINVAL },
	/* beyond 10^27 nano */
	{ "1000000000000000001", -ERANGE },
	{ "1000000000000000000.1", -ERANGE },
	{ "2E", -ERANGE },
	{ "-2E", -ERANGE },
	{ "1Ei", -ERANGE },
	{ "8Ei", -ERANGE },
	{ "1001P", -ERANGE },
	{ "1e19", -ERANGE },
	{ "1e100000000000", -ERANGE },
	{ "1e9223372036854775807", -ERANGE },
	{ "99999999999999999999999999E", -ERANGE },
	{ "340282366920938463463374607431768211456E", -ERANGE }, /* 2^128 */
	{ "1000000000000000000000000000000000000000e-12", -ERANGE },
	{ "99999999999999999999999999999999999999999999", -ERANGE },
	{ "9223372036854775807Ki", -ERANGE },
};

START_TEST(test_quantity_invalid)
{
	const struct invalid_case *c = &invalid[_i];
	struct rf_quantity q = { 12345 };
	int r = rf_quantity_parse(c->in, &q);

	ck_assert_msg(r == c->r, "'%s': expected %d, got %d", c->in, c->r, r);
	ck_assert_msg(q.nano == 12345, "'%s': output written on error", c->in);
}
END_TEST

static struct rf_quantity
qty(const char *s)
{
	struct rf_quantity q;
	int r = rf_quantity_parse(s, &q);
	ck_assert_msg(r == 0, "'%s': %d", s, r);
	return q;
}

struct pair_case {
	const char *a, *b;
	int cmp;
};

static const struct pair_case pairs[] = {
	{ "48828125Ki", "50G", 0 },
	{ "50G", "50000000000", 0 },
	{ "390625000Ki", "400G", 0 },
	{ "81559Mi", "85520809984", 0 },
	{ "1.5Ti", "1649267441664", 0 },
	{ "100m", "0.1", 0 },
	{ "1e3", "1k", 0 },
	{ "1E-3", "1m", 0 },
	{ "1Ki", "1024", 0 },
	{ "0.5Ki", "512", 0 },
	{ "1000m", "1", 0 },
	{ "1000n", "1u", 0 },
	{ "1.5e3", "1500", 0 },
	{ "+400G", "400G", 0 },
	{ "1Gi", "1G", 1 },
	{ "999m", "1", -1 },
	{ "-1", "0", -1 },
	{ "1n", "0", 1 },
	{ "400G", "399999999999999999999n", 1 },
	{ "-1Ki", "-1k", -1 },
};

START_TEST(test_quantity_cmp)
{
	const struct pair_case *c = &pairs[_i];
	int got = rf_quantity_cmp(qty(c->a), qty(c->b));

	ck_assert_msg(got == c->cmp, "cmp('%s', '%s') = %d, expected %d", c->a, c->b, got, c->cmp);
	ck_assert_int_eq(rf_quantity_cmp(qty(c->b), qty(c->a)), -c->cmp);
}
END_TEST

struct format_case {
	const char *in, *out;
};

static const struct format_case formats[] = {
	{ "0", "0" },
	{ "-0", "0" },
	{ "50000000000", "50G" },
	{ "48828125Ki", "50G" },
	{ "390625000Ki", "400G" },
	{ "400G", "400G" },
	{ "100G", "100G" },
	{ "0.1", "100m" },
	{ "1.5", "1500m" },
	{ "85520809984", "81559Mi" },
	{ "81559Mi", "81559Mi" },
	{ "128Mi", "128Mi" },
	{ "1Gi", "1Gi" },
	{ "1024", "1Ki" },
	{ "1.5Ti", "1536Gi" },
	{ "1536", "1536" },
	{ "1500", "1500" },
	{ "2000", "2k" },
	{ "12345", "12345" },
	{ "-2", "-2" },
	{ "-1500m", "-1500m" },
	{ "1n", "1n" },
	{ "1u", "1u" },
	{ "1.5u", "1500n" },
	{ "0.000001Ki", "1024u" },
	{ "100.035Ki", "102435840m" },
	{ "1E", "1E" },
	{ "1e18", "1E" },
	{ "1000P", "1E" },
	{ "1Pi", "1Pi" },
	{ "0.5Ei", "512Pi" },
	{ "-1Ki", "-1Ki" },
	{ "1e-10", "1n" },
};

START_TEST(test_quantity_format)
{
	const struct format_case *c = &formats[_i];
	char buf[RF_QUANTITY_FMT_MAX];
	struct rf_quantity q = qty(c->in), back;

	ck_assert_str_eq(rf_quantity_format(q, buf), c->out);
	ck_assert_int_eq(rf_quantity_parse(buf, &back), 0);
	ck_assert_msg(rf_quantity_cmp(q, back) == 0, "'%s' -> '%s' does not round-trip", c->in,
		      buf);
}
END_TEST

START_TEST(test_quantity_format_roundtrip_all_valid)
{
	for (size_t i = 0; i < N(valid); i++) {
		char buf[RF_QUANTITY_FMT_MAX];
		struct rf_quantity q = qty(valid[i].in), back;
		rf_quantity_format(q, buf);
		ck_assert_msg(rf_quantity_parse(buf, &back) == 0, "'%s' -> '%s'", valid[i].in, buf);
		ck_assert_msg(back.nano == q.nano, "'%s' -> '%s'", valid[i].in, buf);
	}
}
END_TEST

START_TEST(test_quantity_format_extremes)
{
	char buf[RF_QUANTITY_FMT_MAX];
	struct rf_quantity q;

	q.nano = (rf_i128)(~(u128)0 >> 1);
	ck_assert_str_eq(rf_quantity_format(q, buf), "170141183460469231731687303715884105727n");
	q.nano = -q.nano - 1;
	ck_assert_str_eq(rf_quantity_format(q, buf), "-170141183460469231731687303715884105728n");
	ck_assert_uint_lt(strlen(buf), RF_QUANTITY_FMT_MAX);
}
END_TEST

START_TEST(test_quantity_parsen)
{
	struct rf_quantity q = { 7 };

	ck_assert_int_eq(rf_quantity_parsen("400Gxyz", 4, &q), 0);
	ck_assert_int_eq(rf_quantity_cmp(q, qty("400G")), 0);
	ck_assert_int_eq(rf_quantity_parsen("1Ki", 2, &q), -EINVAL); /* "1K" */
	ck_assert_int_eq(rf_quantity_parsen("1\0", 2, &q), -EINVAL);
	ck_assert_int_eq(rf_quantity_parsen("5", 0, &q), -EINVAL);
	ck_assert_int_eq(rf_quantity_parsen(NULL, 0, &q), -EINVAL);
	ck_assert_int_eq(rf_quantity_parse(NULL, &q), -EINVAL);
	ck_assert_int_eq(rf_quantity_cmp(q, qty("400G")), 0);
}
END_TEST

struct value_case {
	const char *in;
	int64_t value;
};

static const struct value_case values[] = {
	{ "0", 0 },
	{ "1", 1 },
	{ "1.5", 2 },
	{ "-1.5", -2 },
	{ "100m", 1 },
	{ "1n", 1 },
	{ "-1n", -1 },
	{ "999m", 1 },
	{ "1001m", 2 },
	{ "128Mi", 134217728 },
	{ "1E", 1000000000000000000LL },
};

START_TEST(test_quantity_value)
{
	ck_assert_int_eq(rf_quantity_value(qty(values[_i].in)), values[_i].value);
}
END_TEST

START_TEST(test_quantity_value_saturates)
{
	struct rf_quantity q = rf_quantity_add(qty("1E"), qty("1E"));

	for (int i = 0; i < 4; i++)
		q = rf_quantity_add(q, q);
	ck_assert_int_eq(rf_quantity_value(q), INT64_MAX);
	q.nano = -q.nano;
	ck_assert_int_eq(rf_quantity_value(q), INT64_MIN);
	ck_assert_int_eq(rf_quantity_value(rf_quantity_from_int(INT64_MIN)), INT64_MIN);
	ck_assert_int_eq(rf_quantity_value(rf_quantity_from_int(INT64_MAX)), INT64_MAX);
}
END_TEST

START_TEST(test_quantity_arith)
{
	struct rf_quantity max = { (rf_i128)(~(u128)0 >> 1) }, min = { -max.nano - 1 };

	ck_assert_int_eq(rf_quantity_cmp(rf_quantity_from_int(5), qty("5")), 0);
	ck_assert_int_eq(rf_quantity_cmp(rf_quantity_from_int(-3), qty("-3")), 0);
	ck_assert_int_eq(rf_quantity_cmp(rf_quantity_add(qty("1.5"), qty("500m")), qty("2")), 0);
	ck_assert_int_eq(rf_quantity_cmp(rf_quantity_sub(qty("1Ki"), qty("24")), qty("1k")), 0);
	ck_assert_int_eq(rf_quantity_cmp(rf_quantity_sub(qty("100G"), qty("400G")), qty("-300G")),
			 0);
	ck_assert(rf_quantity_is_zero(rf_quantity_sub(qty("50G"), qty("48828125Ki"))));
	ck_assert(!rf_quantity_is_zero(qty("1n")));
	ck_assert(rf_quantity_is_zero(rf_quantity_from_int(0)));
	/* saturation instead of wrap-around */
	ck_assert(rf_quantity_add(max, qty("1n")).nano == max.nano);
	ck_assert(rf_quantity_add(min, qty("-1n")).nano == min.nano);
	ck_assert(rf_quantity_sub(min, qty("1n")).nano == min.nano);
	ck_assert(rf_quantity_sub(max, qty("-1n")).nano == max.nano);
}
END_TEST

START_TEST(test_quantity_to_double)
{
	ck_assert_double_eq_tol(rf_quantity_to_double(qty("1.5")), 1.5, 1e-12);
	ck_assert_double_eq_tol(rf_quantity_to_double(qty("100m")), 0.1, 1e-12);
	ck_assert_double_eq_tol(rf_quantity_to_double(qty("400G")), 4e11, 1);
	ck_assert_double_eq_tol(rf_quantity_to_double(qty("-1Ki")), -1024, 1e-9);
	ck_assert_double_eq(rf_quantity_to_double(qty("0")), 0);
}
END_TEST

Suite *
quantity_suite(void)
{
	Suite *s = suite_create("quantity");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_quantity_valid, 0, N(valid));
	tcase_add_loop_test(tc, test_quantity_invalid, 0, N(invalid));
	tcase_add_test(tc, test_quantity_parsen);
	suite_add_tcase(s, tc);

	tc = tcase_create("compare");
	tcase_add_loop_test(tc, test_quantity_cmp, 0, N(pairs));
	tcase_add_test(tc, test_quantity_arith);
	tcase_add_loop_test(tc, test_quantity_value, 0, N(values));
	tcase_add_test(tc, test_quantity_value_saturates);
	tcase_add_test(tc, test_quantity_to_double);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, test_quantity_format, 0, N(formats));
	tcase_add_test(tc, test_quantity_format_roundtrip_all_valid);
	tcase_add_test(tc, test_quantity_format_extremes);
	suite_add_tcase(s, tc);
	return s;
}
