/*
 * clockread: what one read of a trace clock costs here, the yardstick of
 * the recording targets ("within 1.5 clock reads of the untraced call"):
 * an event reads the clock once, so no tracer's event can cost less.
 *
 *   clockread [N] [ROUNDS]          (defaults: N=10000000, ROUNDS=5)
 *
 * Times ROUNDS rounds of N reads of each clock, back to back, and prints
 * the median ns per read of each on one line:
 *
 *   rdtsc_ns=<X> monotonic_ns=<Y> trace_clock=<rdtsc|monotonic>
 *
 * rdtsc is the counter shimtrace's trace clock reads when the CPU's TSC is
 * constant and non-stop (/proc/cpuinfo's constant_tsc and nonstop_tsc, as
 * the daemon decides: ctl/daemon/base/clock.c), clock_gettime's
 * CLOCK_MONOTONIC (the vDSO) otherwise; trace_clock names the one used.
 */
#include "bench.h" /* (first: it sets _GNU_SOURCE) */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The CPU flags the daemon looks at (its clock.c): both, or no TSC clock. */
static int tsc_is_trace_clock(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int constant = 0, nonstop = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0) {
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	fclose(f);
	return constant && nonstop;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? bench_count("clockread", "N", argv[1], (unsigned long)-1)
				   : 10000000;
	unsigned long rounds = argc > 2 ? bench_count("clockread", "ROUNDS", argv[2], 1000) : 5;
	double *tsc = calloc(rounds, sizeof(double)), *mono = calloc(rounds, sizeof(double));
	volatile uint64_t sink = 0;

	if (argc > 3 || !tsc || !mono) {
		fprintf(stderr, "usage: %s [N] [ROUNDS]\n", argv[0]);
		return 2;
	}
	for (unsigned long r = 0; r < rounds; r++) {
		double t0 = bench_clock_ns(CLOCK_MONOTONIC);
		struct timespec ts;

		for (unsigned long i = 0; i < n; i++)
			sink += rdtsc();
		tsc[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
		t0 = bench_clock_ns(CLOCK_MONOTONIC);
		for (unsigned long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (uint64_t)ts.tv_nsec;
		}
		mono[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
	}
	qsort(tsc, rounds, sizeof(double), cmp_double);
	qsort(mono, rounds, sizeof(double), cmp_double);
	printf("rdtsc_ns=%.2f monotonic_ns=%.2f trace_clock=%s\n", tsc[rounds / 2], mono[rounds / 2],
	       tsc_is_trace_clock() ? "rdtsc" : "monotonic");
	free(tsc);
	free(mono);
	return 0;
}
