/*
 * mutex-pairs: cost of one uncontended pthread_mutex_lock + unlock pair.
 *
 *   mutex-pairs [--write|--malloc] [--idle-thread] [--warm W] [N] [ROUNDS]
 *                                           (defaults: N=1000000, ROUNDS=5)
 *
 * After a warm-up of W pairs (default: N, at most 100000), runs ROUNDS
 * rounds of N lock+unlock pairs on one default mutex and times each round
 * with CLOCK_MONOTONIC, and with CLOCK_THREAD_CPUTIME_ID. Prints one line:
 *
 *   ns_per_pair=<median> min=<fastest round> max=<slowest round>
 *   cpu_ns=<median> minflt=<F> vcsw=<V> ivcsw=<I> pairs=<N*ROUNDS>
 *   impl=<lib>                                                (on one line)
 *
 * cpu_ns is the thread's own CPU time (user and kernel, so page faults are
 * in it) per pair: on a machine shared with other work it leaves out the
 * time the thread waited for a core, which ns_per_pair counts. The loop
 * never blocks, so on an idle machine the two agree. minflt, vcsw and
 * ivcsw are the page faults, voluntary context switches (waits) and
 * involuntary ones (preemptions by other work) of the thread during all
 * timed rounds (getrusage RUSAGE_THREAD): a tracer that touches a new page
 * of its buffer, or waits, shows there.
 *
 * impl= names the object that pthread_mutex_lock resolved to, so a caller
 * can tell whether a preloaded wrapper really interposed.
 *
 * --write times N write(fd, buf, 1) calls to /dev/null per round instead
 * (ns_per_write=..., writes=...), for the write() row of the benchmarks.
 *
 * --malloc times N malloc(32) + free pairs instead (ns_per_pair=...; impl=
 * names the object malloc resolved to), for run-mutex.sh --family malloc.
 *
 * --warm W sets the warm-up. run-length.sh gives a small one (1000 pairs:
 * code, symbols and a tracer's buffer set up) and one round, so that the
 * timed round holds the first N pairs of a run as a short traced program
 * would, first touches of trace buffer pages included.
 *
 * It is used by run-mutex.sh to compare running bare, under a dormant
 * shimtrace preload, under shimtrace recording and under LTTng-UST, and by
 * run-control.sh for the dormant costs.
 *
 * Single thread on purpose: without --idle-thread no other thread is ever
 * created, because a second thread would switch glibc off its
 * single-threaded fast paths (e.g. atomics skipped while the process has
 * one thread) and the bare numbers would no longer be the baseline a
 * traced program starts from.
 *
 * --idle-thread creates exactly that second thread before the warm-up: it
 * blocks forever in pause() and never runs again, so the timed thread pays
 * only for no longer being alone. This is what a resident listener thread
 * (as LTTng-UST starts in every traced process) costs a single-threaded
 * program even when it never wakes up. The line then ends in threads=2.
 * (pthread_create is in libc since glibc 2.34, so -pthread is not needed
 * to link.)
 */
#include "bench.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int devnull = -1;

static void mutex_pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
}

static void writes(unsigned long n)
{
	static const char buf[1] = { 'x' };

	for (unsigned long i = 0; i < n; i++) {
		if (write(devnull, buf, 1) != 1) {
			perror("write");
			exit(1);
		}
	}
}

static void malloc_pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		/* (volatile: the compiler may not drop the pair) */
		void *volatile p = malloc(32);

		free(p);
	}
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the n sorted values v. */
static double median(const double *v, unsigned long n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000000, rounds = 5, warm = 0;
	int argi = 1, write_mode = 0, malloc_mode = 0, idle = 0, nargs = 0, err;
	void (*body)(unsigned long) = mutex_pairs;
	const char *unit = "pair", *impl;
	double *ns, *cpu;
	struct rusage ru0, ru1;

	for (; argi < argc; argi++) {
		if (strcmp(argv[argi], "--write") == 0) {
			write_mode = 1;
		} else if (strcmp(argv[argi], "--malloc") == 0) {
			malloc_mode = 1;
		} else if (strcmp(argv[argi], "--idle-thread") == 0) {
			idle = 1;
		} else if (strcmp(argv[argi], "--warm") == 0) {
			if (argi + 1 == argc) {
				fprintf(stderr, "mutex-pairs: --warm needs a value\n");
				return 2;
			}
			warm = bench_count("mutex-pairs", "W", argv[++argi], (unsigned long)-1);
		} else if (strcmp(argv[argi], "-h") == 0 || strcmp(argv[argi], "--help") == 0) {
			printf("usage: %s [--write|--malloc] [--idle-thread] [--warm W] [N] [ROUNDS]\n", argv[0]);
			return 0;
		} else if (nargs == 0) {
			n = bench_count("mutex-pairs", "N", argv[argi], (unsigned long)-1);
			nargs++;
		} else if (nargs == 1) {
			rounds = bench_count("mutex-pairs", "ROUNDS", argv[argi], (unsigned long)-1);
			nargs++;
		} else {
			fprintf(stderr, "usage: %s [--write|--malloc] [--idle-thread] [--warm W] [N] [ROUNDS]\n", argv[0]);
			return 2;
		}
	}

	if (write_mode) {
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull < 0) {
			perror("/dev/null");
			return 1;
		}
		body = writes;
		unit = "write";
		impl = bench_impl_of((void *)write);
	} else if (malloc_mode) {
		body = malloc_pairs;
		impl = bench_impl_of((void *)malloc);
	} else {
		impl = bench_impl_of((void *)pthread_mutex_lock);
	}

	ns = calloc(rounds, sizeof(*ns));
	cpu = calloc(rounds, sizeof(*cpu));
	if (!ns || !cpu) {
		perror("calloc");
		return 1;
	}

	if (idle) {
		pthread_t t;

		err = pthread_create(&t, NULL, idle_thread, NULL);
		if (err) {
			fprintf(stderr, "mutex-pairs: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}

	/* Warm-up: fault in code and data, let the CPU clock settle. */
	if (!warm)
		warm = n < 100000 ? n : 100000;
	body(warm);

	getrusage(RUSAGE_THREAD, &ru0);
	for (unsigned long r = 0; r < rounds; r++) {
		double t0 = bench_clock_ns(CLOCK_MONOTONIC);
		double c0 = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);

		body(n);
		cpu[r] = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)n;
		ns[r] = (bench_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
	}
	getrusage(RUSAGE_THREAD, &ru1);

	qsort(ns, rounds, sizeof(*ns), cmp_double);
	qsort(cpu, rounds, sizeof(*cpu), cmp_double);
	printf("ns_per_%s=%.2f min=%.2f max=%.2f cpu_ns=%.2f minflt=%ld vcsw=%ld ivcsw=%ld %ss=%lu impl=%s%s\n",
	       unit, median(ns, rounds), ns[0], ns[rounds - 1], median(cpu, rounds),
	       ru1.ru_minflt - ru0.ru_minflt, ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, unit, n * rounds, impl,
	       idle ? " threads=2" : "");
	free(ns);
	free(cpu);
	if (devnull >= 0)
		close(devnull);
	return 0;
}
