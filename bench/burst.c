/*
 * burst: what a tracer costs threads from their first event on, not after
 * a warm-up. T threads are started together (a barrier) and each takes and
 * gives back a mutex N times, its own mutex or (--shared) one for all;
 * timed from the first pthread_create to the last join, so a thread's
 * first event (a buffer made for it, or not) is in the time. With T 1 and
 * N 1 it is the latency of a new thread's first lock: from pthread_create
 * until the lock is held.
 *
 * usage: burst [--shared] T N
 * Prints wall_us=... first_lock_us=... (the median thread's, from its
 * creation until its first lock was held) impl=...
 */
#include "bench.h" /* (first: it asks for _GNU_SOURCE) */

#include <pthread.h>
#include <stdint.h>

#define MAX_THREADS 4096

static unsigned long n_pairs;
static int shared;
static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t go;

struct worker {
	pthread_t t;
	pthread_mutex_t own;
	uint64_t created, first_lock;
};

static void *run(void *arg)
{
	struct worker *w = arg;
	pthread_mutex_t *m = shared ? &one : &w->own;

	pthread_barrier_wait(&go);
	for (unsigned long i = 0; i < n_pairs; i++) {
		pthread_mutex_lock(m);
		if (i == 0)
			w->first_lock = (uint64_t)bench_clock_ns(CLOCK_MONOTONIC);
		pthread_mutex_unlock(m);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: burst [--shared] T N\n";
	unsigned long threads;
	struct worker *w;
	uint64_t t0, t1, *lat;
	pthread_attr_t attr;
	int argi = 1;

	if (argc > 1 && strcmp(argv[1], "--shared") == 0) {
		shared = 1;
		argi++;
	}
	if (argc - argi != 2) {
		fputs(usage, stderr);
		return 2;
	}
	threads = bench_count("burst", "T (1 to 4096)", argv[argi], MAX_THREADS);
	n_pairs = bench_count("burst", "N", argv[argi + 1], 1ul << 40);
	w = calloc(threads, sizeof(*w));
	lat = calloc(threads, sizeof(*lat));
	if (!w || !lat || pthread_barrier_init(&go, NULL, (unsigned)threads) != 0 ||
	    pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 256 * 1024) != 0)
		return 1;
	t0 = (uint64_t)bench_clock_ns(CLOCK_MONOTONIC);
	for (unsigned long i = 0; i < threads; i++) {
		pthread_mutex_init(&w[i].own, NULL);
		w[i].created = (uint64_t)bench_clock_ns(CLOCK_MONOTONIC);
		if (pthread_create(&w[i].t, &attr, run, &w[i]) != 0) {
			fprintf(stderr, "burst: cannot create thread %lu\n", i);
			return 1;
		}
	}
	for (unsigned long i = 0; i < threads; i++)
		pthread_join(w[i].t, NULL);
	t1 = (uint64_t)bench_clock_ns(CLOCK_MONOTONIC);
	/* (after the barrier: from the last creation, each thread's wait for
	 * the others is not the tracer's) */
	for (unsigned long i = 0; i < threads; i++)
		lat[i] = w[i].first_lock - w[threads - 1].created;
	qsort(lat, threads, sizeof(*lat), cmp_u64);
	printf("wall_us=%.1f first_lock_us=%.1f threads=%lu pairs=%lu impl=%s\n", (t1 - t0) / 1e3,
	       lat[threads / 2] / 1e3, threads, n_pairs, bench_impl_of((void *)pthread_mutex_lock));
	return 0;
}
