/*
 * jobs: an application with tracepoints of its own (provider `jobs`, see
 * jobs-tp.h), the example of shimtrace-events(7).
 *
 * It runs N jobs; each one checksums a buffer of a size that depends on its
 * number and finds the mean of its bytes, and is bracketed by
 * jobs:job_begin and jobs:job_end. A
 * tracepoint no session enables costs one load and one branch, so the
 * program can ship with them.
 *
 * Build against an installed shimtrace:
 *
 *   cc -O2 -o jobs jobs.c $(pkg-config --cflags --libs shimtrace)
 *
 * (add -Wl,-rpath,$(pkg-config --variable=libdir shimtrace) when the
 * library is not in the loader's path), then record its events, and the
 * locks it takes, with:
 *
 *   shimtrace record -e 'jobs:*' -e 'pthread:mutex_*' -- ./jobs 10
 *   shimtrace view shimtrace-*
 *
 *   usage: jobs [N]    (default 10)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Defines the provider in this file: its state, descriptors and the
 * constructor that registers them when the program (or library) loads. */
#include "jobs-tp.h"
ST_PROVIDER_DEFINE(jobs, JOBS_TRACEPOINTS)

static pthread_mutex_t results_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t results;

static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + p[i];
	return sum;
}

/* The mean value of the bytes. */
static double mean(const unsigned char *p, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += p[i];
	return n ? (double)total / (double)n : 0.0;
}

static int run_job(uint32_t id)
{
	size_t size = 1000 + 100 * (size_t)id;
	unsigned char *buf = malloc(size);
	uint64_t sum;
	double m;

	st_tracepoint(jobs, job_begin, id, id % 2 ? "odd" : "even", size);
	if (!buf) {
		st_tracepoint(jobs, job_end, id, -1, 0, 0.0);
		return -1;
	}
	for (size_t i = 0; i < size; i++)
		buf[i] = (unsigned char)(i + id);
	sum = checksum(buf, size);
	m = mean(buf, size);
	free(buf);
	pthread_mutex_lock(&results_lock);
	results += sum;
	pthread_mutex_unlock(&results_lock);
	st_tracepoint(jobs, job_end, id, 0, sum, m);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	int failed = 0;

	if (n < 0 || n > 1000000) {
		fprintf(stderr, "jobs: N is 0 to 1000000\n");
		return 2;
	}
	for (uint32_t id = 0; id < (uint32_t)n; id++)
		failed += run_job(id) < 0;
	printf("%ld jobs, %d failed, results %llu\n", n, failed, (unsigned long long)results);
	return failed ? 1 : 0;
}
