/*
 * contention: a small program with lock contention, the example of the
 * README.
 *
 * Four worker threads, started together, update a shared counter under
 * one mutex; the critical section does a little work on purpose (whose
 * result is kept: a compiler may not drop it), and every 64th time its
 * holder sleeps 50 us in it, so workers queue for the lock on any machine,
 * also one whose other cores are busy: a thread that finds the lock held
 * waits whether or not the holder has a core. A second mutex, private to
 * each worker, is never contended.
 * Recorded with `shimtrace record -- examples/contention`, the trace shows
 * mutex_wait events (a thread about to block) and mutex_lock events whose
 * wait_ns is the time each thread waited, all from `update_shared`.
 *
 *   usage: contention [THREADS [ITERATIONS]]    (default 4 x 2000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long shared_counter, shared_hash;
static pthread_barrier_t start;

struct worker {
	pthread_t thread;
	pthread_mutex_t own_lock;
	unsigned long iterations;
	unsigned long own_counter;
};

/* Some work inside the critical section, so that others wait. */
static unsigned long spin(unsigned long v)
{
	for (int i = 0; i < 2000; i++)
		v = v * 6364136223846793005ul + 1442695040888963407ul;
	return v;
}

/* noinline: so that the trace names the function that takes the lock,
 * whatever the optimisation level. */
static __attribute__((noinline)) void update_shared(void)
{
	unsigned long v;

	pthread_mutex_lock(&shared_lock);
	v = spin(shared_counter);
	shared_hash ^= v;
	if (shared_counter++ % 64 == 0) {
		struct timespec pause = { 0, 50000 };

		nanosleep(&pause, NULL); /* (the lock held: others queue) */
	}
	pthread_mutex_unlock(&shared_lock);
}

static __attribute__((noinline)) void update_own(struct worker *w)
{
	pthread_mutex_lock(&w->own_lock);
	w->own_counter++;
	pthread_mutex_unlock(&w->own_lock);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned long i;

	pthread_barrier_wait(&start);
	for (i = 0; i < w->iterations; i++) {
		update_shared();
		update_own(w);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	unsigned long iterations = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
	struct worker *w;

	if (threads < 1 || threads > 1024 || iterations == 0) {
		fprintf(stderr, "usage: contention [THREADS(1-1024) [ITERATIONS]]\n");
		return 2;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w || pthread_barrier_init(&start, NULL, (unsigned)threads) != 0)
		return 1;
	for (int i = 0; i < threads; i++) {
		w[i].iterations = iterations;
		pthread_mutex_init(&w[i].own_lock, NULL);
		if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		pthread_mutex_destroy(&w[i].own_lock);
	}
	printf("%d threads x %lu iterations: shared counter %lu (hash %lx)\n", threads, iterations,
	       shared_counter, shared_hash);
	free(w);
	return shared_counter == (unsigned long)threads * iterations ? 0 : 1;
}
