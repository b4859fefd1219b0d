/*
 * many-locks: a workload whose trace looks like a server's (MariaDB's:
 * about a thousand mutexes, a few hundred call sites, tens of threads),
 * for run-reader.sh, which times the reports on it: a reader fast on one
 * hot lock of one thread can still be slow where the next event is
 * seldom the same thread's, on the same lock.
 *
 *   many-locks [--threads T] [--locks L] N
 *                         (defaults: T=30, L=1000; N rounds in all)
 *
 * T threads share N rounds between them. A round is a lock+unlock pair
 * made by one of SITES (200) call sites, each its own function with its
 * own call instructions: the trace holds 200 return addresses of lock
 * calls, and 200 of unlock calls. A thread picks a site and a lock at
 * random: one time in four one of HOT (8) locks that every site takes, so
 * that two threads on two cores meet there and one waits (real
 * contention: mutex_wait events); else any of the L locks. One round in
 * eight (of those on the locks above the OUTER first ones) takes its
 * lock under an outer lock, from a site of its own: the lock's own, as a
 * server nests a row's lock in its table's (lock i under lock i % OUTER),
 * so that the lock-order graph has an edge per nested lock and no cycle.
 * About 2.2 events a round. Prints one line:
 *
 *   rounds=<N> threads=<T> locks=<L> sites=<SITES> seconds=<wall time> impl=<lib>
 *
 * impl= names the object pthread_mutex_lock resolved to (bench.h).
 */
#include "bench.h"

#include <pthread.h>
#include <stdint.h>

#define SITES 200
#define HOT 8
#define OUTER 50
#define MAX_THREADS 256

struct lock {
	pthread_mutex_t m;
	unsigned long count; /* what it protects */
} __attribute__((aligned(64)));

static struct lock *locks;
static unsigned long n_locks, per_thread;
static pthread_barrier_t ready;

/* A call site: its own lock and unlock calls, and a body that differs
 * from the others' so that the compiler cannot fold the functions into
 * one (identical code folding, on at -O2). */
#define SITE(n)                                                       \
	static __attribute__((noinline)) void site_##n(struct lock *l) \
	{                                                             \
		pthread_mutex_lock(&l->m);                            \
		l->count += 1##n;                                     \
		pthread_mutex_unlock(&l->m);                          \
	}
#define SITE_ADDR(n) site_##n,
#define TEN(X, p) X(p##0) X(p##1) X(p##2) X(p##3) X(p##4) X(p##5) X(p##6) X(p##7) X(p##8) X(p##9)
/* 000 .. 199: the X of each */
#define ALL(X)                                                                                   \
	TEN(X, 00) TEN(X, 01) TEN(X, 02) TEN(X, 03) TEN(X, 04) TEN(X, 05) TEN(X, 06) TEN(X, 07)    \
	TEN(X, 08) TEN(X, 09) TEN(X, 10) TEN(X, 11) TEN(X, 12) TEN(X, 13) TEN(X, 14) TEN(X, 15)    \
	TEN(X, 16) TEN(X, 17) TEN(X, 18) TEN(X, 19)

ALL(SITE)
static void (*const sites[SITES])(struct lock *) = { ALL(SITE_ADDR) };

/* Site s on lock l, under outer lock o. */
static __attribute__((noinline)) void nested(struct lock *o, unsigned s, struct lock *l)
{
	pthread_mutex_lock(&o->m);
	o->count++;
	sites[s](l);
	pthread_mutex_unlock(&o->m);
}

/* xorshift64: each thread's own sequence, no shared state */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *worker_main(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);

	pthread_barrier_wait(&ready);
	for (unsigned long i = 0; i < per_thread; i++) {
		uint64_t r = next_rand(&x);
		unsigned s = (unsigned)(r % SITES);
		unsigned long li = (r >> 8) % 4 == 0 ? (r >> 10) % HOT : (r >> 10) % n_locks;

		if ((r >> 40) % 8 == 0 && li >= OUTER)
			nested(&locks[li % OUTER], s, &locks[li]);
		else
			sites[s](&locks[li]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char usage[] = "usage: many-locks [--threads T] [--locks L] N\n";
	unsigned long n_threads = 30, rounds;
	pthread_t threads[MAX_THREADS];
	double t0;
	int argi = 1, err;

	n_locks = 1000;
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	for (; argi + 1 < argc && argv[argi][0] == '-'; argi += 2) {
		if (strcmp(argv[argi], "--threads") == 0)
			n_threads = bench_count("many-locks", "T", argv[argi + 1], MAX_THREADS);
		else if (strcmp(argv[argi], "--locks") == 0)
			n_locks = bench_count("many-locks", "L", argv[argi + 1], 1ul << 24);
		else
			break;
	}
	if (argc - argi != 1 || n_locks <= OUTER) {
		fputs(usage, stderr);
		return 2;
	}
	rounds = bench_count("many-locks", "N", argv[argi], (unsigned long)-1 / 2);
	per_thread = rounds / n_threads;

	locks = aligned_alloc(64, n_locks * sizeof(*locks));
	if (!locks) {
		perror("many-locks: aligned_alloc");
		return 1;
	}
	for (unsigned long i = 0; i < n_locks; i++) {
		pthread_mutex_init(&locks[i].m, NULL);
		locks[i].count = 0;
	}
	err = pthread_barrier_init(&ready, NULL, (unsigned)n_threads);
	if (err) {
		fprintf(stderr, "many-locks: pthread_barrier_init: %s\n", strerror(err));
		return 1;
	}
	t0 = bench_clock_ns(CLOCK_MONOTONIC);
	for (unsigned long i = 0; i < n_threads; i++) {
		err = pthread_create(&threads[i], NULL, worker_main, (void *)(uintptr_t)i);
		if (err) {
			fprintf(stderr, "many-locks: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long i = 0; i < n_threads; i++)
		pthread_join(threads[i], NULL);
	printf("rounds=%lu threads=%lu locks=%lu sites=%d seconds=%.3f impl=%s\n",
	       per_thread * n_threads, n_threads, n_locks, SITES,
	       (bench_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9,
	       bench_impl_of((void *)pthread_mutex_lock));
	pthread_barrier_destroy(&ready);
	free(locks);
	return 0;
}
