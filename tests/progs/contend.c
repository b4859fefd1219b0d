/*
 * contend: THREADS threads take one mutex ITERATIONS times each and hold it
 * long enough that the others must wait. A barrier starts them together.
 * usage: contend THREADS ITERATIONS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static long iterations, total;

static void hold(void)
{
	struct timespec t = { 0, 20000 }; /* 20 us inside the lock */

	nanosleep(&t, NULL);
}

static void *work(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&lock);
		hold();
		total++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];

	iterations = argc > 2 ? atol(argv[2]) : 100;
	if (n < 1 || n > 64)
		return 2;
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	return total == n * iterations ? 0 : 1;
}
