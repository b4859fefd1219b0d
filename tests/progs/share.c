/*
 * share: THREADS threads, started together (a barrier), each taking and
 * giving back one shared mutex PAIRS times, with nothing in between: the
 * contention a lock tracer is for, which a tracer that stalls a thread's
 * first event hides (the first thread is done before the others start).
 * The first lock taken is held until another thread waits for it, so
 * that at least one acquisition is contended whatever the scheduler does
 * (on a busy machine the threads may well run one after the other).
 * Prints the pairs made.
 * usage: share THREADS PAIRS
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "blocked.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static long threads, pairs, total;
static int first = 1;

static void *work(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&lock);
		total++;
		if (first && threads > 1) {
			first = 0; /* (under the lock) */
			while (!mutex_has_waiter(&lock))
				sched_yield();
		}
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *t;

	if (argc != 3 || (threads = atol(argv[1])) < 1 || (pairs = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: share THREADS PAIRS\n");
		return 2;
	}
	t = calloc((size_t)threads, sizeof(*t));
	if (!t || pthread_barrier_init(&start, NULL, (unsigned)threads) != 0)
		return 1;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%ld pairs\n", total);
	return 0;
}
