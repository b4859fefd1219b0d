/*
 * threads: what an uncontended lock+unlock pair costs when T threads each
 * loop on a mutex of their own, counted in CPU time (core-ns), so that 16
 * threads on a 2-core machine can be compared with one.
 *
 *   threads [--warm W] T N        (T from 1 to 256 threads, N pairs each;
 *                                  W warm-up pairs per thread, default 1000)
 *
 * Each thread does W lock+unlock pairs on its own mutex (code, symbols and
 * a tracer's per-thread buffer set up), waits on a barrier until all have,
 * then does N pairs, timed with CLOCK_THREAD_CPUTIME_ID: the CPU time the
 * thread itself used, user and kernel (a page fault on the event path is
 * in it), not the time it waited for a core. Prints one line:
 *
 *   core_ns_per_op=<sum of the threads' CPU time / (T*N)>
 *   wall_ns_per_op=<first start to last end / (T*N)> threads=T ops=<T*N>
 *   impl=<lib>                                        (on one line)
 *
 * One op is one pthread_mutex_lock + pthread_mutex_unlock pair. The
 * mutexes are a cache line apart, so the threads share nothing but the
 * cores. The main thread only starts and joins them, so even with T=1 the
 * process has two threads and glibc is off its single-threaded paths (the
 * T=1 row is slower than mutex-pairs' bare row for that reason).
 *
 * impl= names the object pthread_mutex_lock resolved to, as in mutex-pairs.
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

struct worker {
	pthread_mutex_t mutex;
	pthread_t thread;
	double cpu_ns;        /* CPU time of the timed loop */
	double start, end;    /* CLOCK_MONOTONIC around it */
} __attribute__((aligned(64)));

static struct worker *workers;
static pthread_barrier_t ready;
static unsigned long n_pairs, n_warm;

static void pairs(pthread_mutex_t *m, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	double cpu0;

	pairs(&w->mutex, n_warm);
	pthread_barrier_wait(&ready);
	w->start = bench_clock_ns(CLOCK_MONOTONIC);
	cpu0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	pairs(&w->mutex, n_pairs);
	w->cpu_ns = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	w->end = bench_clock_ns(CLOCK_MONOTONIC);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: threads [--warm W] T N\n";
	unsigned long t_count;
	double cpu = 0, first, last, ops;
	int argi = 1, err;

	n_warm = 1000;
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "--warm") == 0) {
		n_warm = bench_count("threads", "W", argv[2], (unsigned long)-1);
		argi = 3;
	}
	if (argc - argi != 2) {
		fputs(usage, stderr);
		return 2;
	}
	t_count = bench_count("threads", "T (1 to 256)", argv[argi], MAX_THREADS);
	n_pairs = bench_count("threads", "N", argv[argi + 1], (unsigned long)-1 / MAX_THREADS);

	workers = aligned_alloc(64, t_count * sizeof(*workers));
	if (!workers) {
		perror("threads: aligned_alloc");
		return 1;
	}
	err = pthread_barrier_init(&ready, NULL, (unsigned)t_count);
	if (err) {
		fprintf(stderr, "threads: pthread_barrier_init: %s\n", strerror(err));
		return 1;
	}
	for (unsigned long i = 0; i < t_count; i++) {
		pthread_mutex_init(&workers[i].mutex, NULL);
		err = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long i = 0; i < t_count; i++)
		pthread_join(workers[i].thread, NULL);

	first = workers[0].start;
	last = workers[0].end;
	for (unsigned long i = 0; i < t_count; i++) {
		cpu += workers[i].cpu_ns;
		if (workers[i].start < first)
			first = workers[i].start;
		if (workers[i].end > last)
			last = workers[i].end;
	}
	ops = (double)t_count * (double)n_pairs;
	printf("core_ns_per_op=%.2f wall_ns_per_op=%.2f threads=%lu ops=%lu impl=%s\n",
	       cpu / ops, (last - first) / ops, t_count, t_count * n_pairs,
	       bench_impl_of((void *)pthread_mutex_lock));
	pthread_barrier_destroy(&ready);
	free(workers);
	return 0;
}
