/*
 * threads: ROUNDS rounds of THREADS threads started and joined, each doing
 * PAIRS lock/unlock pairs on its own mutex: buffers are created for the
 * first threads, flushed when they exit, and reused by later ones.
 * usage: threads ROUNDS THREADS PAIRS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long pairs;

static void *work(void *arg)
{
	pthread_mutex_t *m = arg;

	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, n = argc > 2 ? atoi(argv[2]) : 8;
	pthread_t *t;
	pthread_mutex_t *m;
	pthread_attr_t attr;

	pairs = argc > 3 ? atol(argv[3]) : 100;
	if (n < 1 || n > 4096)
		return 2;
	t = calloc((size_t)n, sizeof(*t));
	m = calloc((size_t)n, sizeof(*m));
	/* (small stacks: thousands of threads at once) */
	if (!t || !m || pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstacksize(&attr, 256 * 1024) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		pthread_mutex_init(&m[i], NULL);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], &attr, work, &m[i]) != 0)
				return 1;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	printf("%d rounds x %d threads x %ld pairs\n", rounds, n, pairs);
	return 0;
}
