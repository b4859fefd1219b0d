/*
 * Times and durations from a trace (duration.c): arithmetic that does not
 * overflow on untrusted times, and durations for people.
 */
#ifndef ST_REPORT_DURATION_H
#define ST_REPORT_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Times from a trace are untrusted: arithmetic on them must not overflow.
 * The nanoseconds from `from` to `to`, 0 when to is not after from. */
static inline uint64_t st_ns_since(int64_t from, int64_t to)
{
	return to > from ? (uint64_t)to - (uint64_t)from : 0;
}

/* ns plus d nanoseconds, at most INT64_MAX. */
static inline int64_t st_ns_after(int64_t ns, uint64_t d)
{
	int64_t r;

	return __builtin_add_overflow(ns, d, &r) || d > INT64_MAX ? INT64_MAX : r;
}

/* ns minus d nanoseconds, at least INT64_MIN. */
static inline int64_t st_ns_before(int64_t ns, uint64_t d)
{
	int64_t r;

	return __builtin_sub_overflow(ns, d, &r) ? INT64_MIN : r;
}

/* A duration for people: "0", "850ns", "12.4us", "3.21ms", "1.52s". */
const char *st_fmt_ns(uint64_t ns, char *buf, size_t n);

#endif
