/* Kubernetes resource quantities as exact 128-bit nano-unit integers.
 *
 * Owns the quantity grammar of k8s.io/apimachinery resource.ParseQuantity: sign, digits with an
 * optional fraction, then a decimal SI suffix, a binary SI suffix or a decimal exponent. The value
 * is computed exactly from the digit string (no floating point), so that every spelling of the same
 * number compares equal. Pure functions, no state: safe from any thread. */
#include "config/quantity.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

__extension__ typedef unsigned __int128 rf_u128;

#define NANO_PER_UNIT 1000000000LL

/* 10^27 nano = 10^18 base units: far beyond any real capacity, far below the int128 range. */
#define LIMIT_EXP 27

/* Exponents beyond this are saturated while scanning: the value is then zero, out of range or
 * below 1n (rounded up to 1n), whatever the exact exponent. */
#define EXP_SATURATE 100000000LL

static rf_u128
pow10_u128(unsigned e)
{
	rf_u128 r = 1;
	while (e-- > 0)
		r *= 10;
	return r;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

struct suffix {
	const char *name;
	int exp10; /* decimal exponent */
	int exp2;  /* binary exponent */
};

/* Every suffix ParseQuantity accepts besides the e/E exponent form. */
static const struct suffix suffixes[] = {
	{ "", 0, 0 },    { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },
	{ "k", 3, 0 },   { "M", 6, 0 },   { "G", 9, 0 },   { "T", 12, 0 },
	{ "P", 15, 0 },  { "E", 18, 0 },  { "Ki", 0, 10 }, { "Mi", 0, 20 },
	{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
};

/* Decimal exponent form: [eE][+-]?[0-9]+. Kubernetes rejects exponents beyond int64; within that
 * range the value saturates at +-EXP_SATURATE, which decides the outcome just as well. */
static int
parse_exponent(const char *s, size_t len, long long *ret)
{
	size_t i = 1;
	bool neg = false;
	unsigned long long v = 0;

	if (len < 2 || (s[0] != 'e' && s[0] != 'E'))
		return -EINVAL;
	if (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-';
		i++;
	}
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		if (!is_digit(s[i]))
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > ((unsigned long long)INT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (v > (unsigned long long)EXP_SATURATE)
		v = (unsigned long long)EXP_SATURATE;
	*ret = neg ? -(long long)v : (long long)v;
	return 0;
}

static int
parse_suffix(const char *s, size_t len, long long *ret_exp10, int *ret_exp2)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strlen(suffixes[i].name) == len && memcmp(suffixes[i].name, s, len) == 0) {
			*ret_exp10 = suffixes[i].exp10;
			*ret_exp2 = suffixes[i].exp2;
			return 0;
		}
	}
	*ret_exp2 = 0;
	return parse_exponent(s, len, ret_exp10);
}

int
rf_quantity_parsen(const char *s, size_t len, struct rf_quantity *ret)
{
	size_t pos = 0, int_start, int_end, frac_start = 0, frac_end = 0;
	bool neg = false, has_frac = false;
	long long exp10;
	int exp2;

	if (!s || len == 0)
		return -EINVAL;
	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		pos++;
	}
	int_start = pos;
	while (pos < len && is_digit(s[pos]))
		pos++;
	int_end = pos;
	if (pos < len && s[pos] == '.') {
		has_frac = true;
		frac_start = ++pos;
		while (pos < len && is_digit(s[pos]))
			pos++;
		frac_end = pos;
	}
	/* Kubernetes takes "G", "-" or "." for zero; a number without a digit is a typo here. */
	if (int_end == int_start && (!has_frac || frac_end == frac_start))
		return -EINVAL;
	if (parse_suffix(s + pos, len - pos, &exp10, &exp2) < 0)
		return -EINVAL;

	/* value_nano = D * 2^exp2 * 10^e, D the digits of the integer and fraction parts as one
	 * integer. Compute P = D * 2^exp2 exactly, digit by digit from the right (the carry stays
	 * below 2^61), keep floor(P / 10^k) with k = max(0, -e) and note whether the k digits cut
	 * off were zero; then round up and scale by 10^max(0, e). */
	size_t frac_len = has_frac ? frac_end - frac_start : 0;
	size_t ndigits = (int_end - int_start) + frac_len;
	long long e = exp10 + 9 - (long long)frac_len;
	unsigned long long k = e < 0 ? (unsigned long long)-e : 0;
	rf_u128 ip = 0;
	bool inexact = false, overflow = false;
	unsigned long long carry = 0;
	size_t j = 0;

	for (size_t n = 0; n < ndigits || carry > 0; n++, j++) {
		unsigned d = 0;
		if (n < ndigits) {
			/* n-th digit from the right, skipping the decimal point */
			char c = n < frac_len ? s[frac_end - 1 - n]
					      : s[int_end - 1 - (n - frac_len)];
			d = (unsigned)(c - '0');
		}
		rf_u128 t = ((rf_u128)d << exp2) + carry;
		unsigned pd = (unsigned)(t % 10);
		carry = (unsigned long long)(t / 10);
		if (pd == 0)
			continue;
		if (j < k) {
			inexact = true;
			continue;
		}
		unsigned long long place = j - k;
		if (place > LIMIT_EXP) {
			overflow = true;
			break;
		}
		ip += (rf_u128)pd * pow10_u128((unsigned)place);
	}
	if (inexact)
		ip += 1; /* Kubernetes rounds sub-nano precision away from zero */
	if (!overflow && e > 0 && ip != 0) {
		/* ip * 10^e > 10^27 exactly when ip > 10^(27 - e); checked first, it cannot wrap */
		if (e > LIMIT_EXP || ip > pow10_u128((unsigned)(LIMIT_EXP - e)))
			overflow = true;
		else
			ip *= pow10_u128((unsigned)e);
	}
	if (overflow || ip > pow10_u128(LIMIT_EXP))
		return -ERANGE;
	ret->nano = neg ? -(rf_i128)ip : (rf_i128)ip;
	return 0;
}

int
rf_quantity_parse(const char *s, struct rf_quantity *ret)
{
	if (!s)
		return -EINVAL;
	return rf_quantity_parsen(s, strlen(s), ret);
}

struct rf_quantity
rf_quantity_from_int(int64_t units)
{
	return (struct rf_quantity){ .nano = (rf_i128)units * NANO_PER_UNIT };
}

int
rf_quantity_cmp(struct rf_quantity a, struct rf_quantity b)
{
	return a.nano < b.nano ? -1 : a.nano > b.nano ? 1 : 0;
}

static rf_i128
i128_max(void)
{
	return (rf_i128)(~(rf_u128)0 >> 1);
}

struct rf_quantity
rf_quantity_add(struct rf_quantity a, struct rf_quantity b)
{
	rf_i128 r;
	if (__builtin_add_overflow(a.nano, b.nano, &r))
		r = b.nano > 0 ? i128_max() : -i128_max() - 1;
	return (struct rf_quantity){ .nano = r };
}

struct rf_quantity
rf_quantity_sub(struct rf_quantity a, struct rf_quantity b)
{
	rf_i128 r;
	if (__builtin_sub_overflow(a.nano, b.nano, &r))
		r = b.nano < 0 ? i128_max() : -i128_max() - 1;
	return (struct rf_quantity){ .nano = r };
}

bool
rf_quantity_is_zero(struct rf_quantity q)
{
	return q.nano == 0;
}

int64_t
rf_quantity_value(struct rf_quantity q)
{
	/* Quantity.Value(): rounded up, away from zero */
	rf_u128 mag = q.nano < 0 ? -(rf_u128)q.nano : (rf_u128)q.nano;
	rf_u128 units = mag / NANO_PER_UNIT + (mag % NANO_PER_UNIT != 0);
	if (q.nano < 0)
		return units > (rf_u128)INT64_MAX ? INT64_MIN : -(int64_t)(units - 1) - 1;
	return units > (rf_u128)INT64_MAX ? INT64_MAX : (int64_t)units;
}

double
rf_quantity_to_double(struct rf_quantity q)
{
	return (double)q.nano / 1e9;
}

/* Writes the decimal digits of v at *p (which must have room for 40 characters + NUL). */
static char *
put_u128(char *p, rf_u128 v)
{
	char tmp[41];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v > 0);
	while (n > 0)
		*p++ = tmp[--n];
	*p = '\0';
	return p;
}

char *
rf_quantity_format(struct rf_quantity q, char buf[RF_QUANTITY_FMT_MAX])
{
	static const struct suffix dec_big[] = {
		{ "E", 18, 0 }, { "P", 15, 0 }, { "T", 12, 0 },
		{ "G", 9, 0 },  { "M", 6, 0 },  { "k", 3, 0 },
	};
	static const struct suffix bin[] = {
		{ "Ei", 0, 60 }, { "Pi", 0, 50 }, { "Ti", 0, 40 },
		{ "Gi", 0, 30 }, { "Mi", 0, 20 }, { "Ki", 0, 10 },
	};
	static const struct suffix dec_small[] = { { "m", -3, 0 }, { "u", -6, 0 }, { "n", -9, 0 } };
	rf_u128 mag = q.nano < 0 ? -(rf_u128)q.nano : (rf_u128)q.nano;
	char *p = buf;
	const char *suffix = "";
	rf_u128 mantissa;

	if (mag == 0) {
		memcpy(buf, "0", 2);
		return buf;
	}
	if (q.nano < 0)
		*p++ = '-';

	if (mag % NANO_PER_UNIT == 0) {
		rf_u128 units = mag / NANO_PER_UNIT;
		mantissa = units;
		for (size_t i = 0; i < sizeof(dec_big) / sizeof(dec_big[0]); i++) {
			rf_u128 div = pow10_u128((unsigned)dec_big[i].exp10);
			if (units % div == 0) {
				mantissa = units / div;
				suffix = dec_big[i].name;
				goto out;
			}
		}
		for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
			rf_u128 div = (rf_u128)1 << bin[i].exp2;
			if (units % div == 0) {
				mantissa = units / div;
				suffix = bin[i].name;
				goto out;
			}
		}
		goto out; /* plain integer */
	}
	mantissa = mag;
	suffix = "n";
	for (size_t i = 0; i < sizeof(dec_small) / sizeof(dec_small[0]); i++) {
		rf_u128 div = pow10_u128((unsigned)(9 + dec_small[i].exp10));
		if (mag % div == 0) {
			mantissa = mag / div;
			suffix = dec_small[i].name;
			break;
		}
	}
out:
	p = put_u128(p, mantissa);
	memcpy(p, suffix, strlen(suffix) + 1);
	return buf;
}
