/*
 * Durations bucketed for percentiles (see hist.h).
 */
#include "ctl/report/hist.h"

uint32_t st_hist_bucket(uint64_t v)
{
	uint32_t e;

	if (v < 16)
		return (uint32_t)v;
	e = 63 - (uint32_t)__builtin_clzll(v);
	return 16 + (e - 4) * 8 + (uint32_t)((v >> (e - 3)) & 7);
}

static uint64_t bucket_top(uint32_t b)
{
	uint32_t e, sub;

	if (b < 16)
		return b;
	e = (b - 16) / 8 + 4;
	sub = (b - 16) % 8;
	return ((8ull + sub) << (e - 3)) + (1ull << (e - 3)) - 1;
}

uint64_t st_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double q)
{
	uint64_t rank, seen = 0;

	if (!hist || n == 0)
		return 0;
	rank = (uint64_t)(q * (double)n + 0.999999);
	if (rank == 0)
		rank = 1;
	for (uint32_t b = 0; b < ST_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return bucket_top(b) < max ? bucket_top(b) : max;
	}
	return max;
}
