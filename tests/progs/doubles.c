/*
 * doubles: a provider with DOUBLE fields (issue 27), writing every kind of
 * double once: an ordinary one, a huge one, one that needs 16 digits,
 * NaN, both infinities, -0, the least and the greatest subnormal, one
 * that is not exact in binary, the greatest double; then DOUBLE fields
 * around a string (records whose layout is not fixed).
 *
 *   dbl:value   k (U32), v (DOUBLE): k = 0 .. 10, the values above
 *   dbl:mixed   a (DOUBLE), s (STRING), b (DOUBLE), c (S8): twice
 *
 * usage: doubles    (prints "11 values, 2 mixed")
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <shimtrace/tracepoint.h>

#define DBL_TRACEPOINTS(TP, F)                  \
	TP(dbl, value, F(U32, k) F(DOUBLE, v)) \
	TP(dbl, mixed, F(DOUBLE, a) F(STRING, s) F(DOUBLE, b) F(S8, c))
ST_PROVIDER_DECLARE(dbl, DBL_TRACEPOINTS)
ST_PROVIDER_DEFINE(dbl, DBL_TRACEPOINTS)

static double from_bits(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

int main(void)
{
	const double v[] = {
		0.5,
		-1e300,
		3.141592653589793,
		NAN,
		INFINITY,
		-INFINITY,
		-0.0,
		from_bits(1),		       /* the least subnormal */
		from_bits(0x000fffffffffffffull), /* the greatest subnormal */
		0.1,
		DBL_MAX,
	};
	const uint32_t n = sizeof(v) / sizeof(v[0]);

	for (uint32_t k = 0; k < n; k++)
		st_tracepoint(dbl, value, k, v[k]);
	st_tracepoint(dbl, mixed, 1.0 / 3, "third", -2.5, -7);
	st_tracepoint(dbl, mixed, 1e-310, "", 1e22, 7);
	printf("%u values, 2 mixed\n", n);
	return 0;
}
