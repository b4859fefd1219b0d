/*
 * Unit tests of floating-point numbers as text (ctl/common/numtext.c):
 * the fewest digits that read back, every kind of double (NaN, the
 * infinities, -0, subnormals, the extremes) as babeltrace2's printf
 * spells them, JSON's strings for what JSON has no number for, and
 * random doubles read back bit for bit.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/numtext.h"
#include "tests/unit/run.h"

static double from_bits(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

static void text_is(double v, const char *want)
{
	char buf[ST_DOUBLE_TEXT_MAX];

	ck_assert_uint_eq(st_double_text(buf, v), strlen(want));
	ck_assert_str_eq(buf, want);
}

static void json_is(double v, const char *want)
{
	char buf[ST_DOUBLE_TEXT_MAX];

	ck_assert_uint_eq(st_double_json(buf, v), strlen(want));
	ck_assert_str_eq(buf, want);
}

START_TEST(kinds)
{
	text_is(0.5, "0.5");
	text_is(0.1, "0.1");
	text_is(-1e300, "-1e+300");
	text_is(3.141592653589793, "3.141592653589793");
	text_is(1.0 / 3, "0.3333333333333333");
	text_is(0.0, "0");
	text_is(-0.0, "-0");
	text_is(123456789012345678.0, "1.2345678901234568e+17");
	text_is(DBL_MAX, "1.7976931348623157e+308");
	text_is(-DBL_MIN, "-2.2250738585072014e-308");
	text_is(from_bits(1), "5e-324"); /* the least subnormal */
	text_is(from_bits(0x000fffffffffffffull), "2.225073858507201e-308"); /* the greatest */
	text_is(1e-310, "1e-310");
	text_is(NAN, "nan");
	text_is(-NAN, "-nan");
	text_is(INFINITY, "inf");
	text_is(-INFINITY, "-inf");
	json_is(0.5, "0.5");
	json_is(-0.0, "-0.0");
	json_is(0.0, "0");
	json_is(-1e300, "-1e+300");
	json_is(NAN, "\"NaN\"");
	json_is(-NAN, "\"NaN\"");
	json_is(INFINITY, "\"Infinity\"");
	json_is(-INFINITY, "\"-Infinity\"");
}
END_TEST

/* The significant digits of a number's text: those from its first
 * non-zero digit to its last, before any exponent. */
static int sig_digits(const char *s)
{
	const char *first = NULL, *last = NULL;
	int n = 0;

	for (; *s && *s != 'e'; s++)
		if (*s >= '1' && *s <= '9') {
			first = first ? first : s;
			last = s;
		}
	for (s = first; s && s <= last; s++)
		n += *s >= '0' && *s <= '9';
	return n;
}

/* Any finite double's text reads back as that double, in at most 17
 * digits, and no text of fewer digits does. */
START_TEST(reads_back)
{
	unsigned seed = 27;

	for (int i = 0; i < 200000; i++) {
		uint64_t u = (uint64_t)rand_r(&seed) << 62 ^ (uint64_t)rand_r(&seed) << 31 ^
			     (uint64_t)rand_r(&seed);

		if (i % 8 == 0)
			u &= 0x800fffffffffffffull; /* a subnormal */
		double v = from_bits(u), back;
		char buf[ST_DOUBLE_TEXT_MAX], shorter[ST_DOUBLE_TEXT_MAX];
		size_t n = st_double_text(buf, v);

		if (!isfinite(v))
			continue;
		ck_assert_uint_lt(n, ST_DOUBLE_TEXT_MAX);
		ck_assert_uint_eq(n, strlen(buf));
		back = strtod(buf, NULL);
		ck_assert_msg(memcmp(&back, &v, 8) == 0, "%s does not read back", buf);
		for (int digits = 1; digits < 17; digits++) {
			snprintf(shorter, sizeof(shorter), "%.*g", digits, v);
			if (strtod(shorter, NULL) == v) {
				ck_assert_msg(sig_digits(buf) <= digits, "%s, yet %s reads back", buf,
					      shorter);
				break;
			}
		}
	}
}
END_TEST

int main(void)
{
	return st_run_tests("numtext", ST_TESTS(kinds, reads_back));
}
