/*
 * Durations bucketed for percentiles (hist.c).
 */
#ifndef ST_REPORT_HIST_H
#define ST_REPORT_HIST_H

#include <stdint.h>

/* Durations bucketed for percentiles: 16 exact buckets below 16, then 8
 * per power of two (a percentile within 1/8 of the true value). */
#define ST_HIST_BUCKETS (64 * 8)
uint32_t st_hist_bucket(uint64_t v);
/* The value below which a fraction q (0..1) of the n values counted in
 * hist fall (a bucket's upper bound, at most max); 0 when n is 0. */
uint64_t st_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double q);

#endif
