/*
 * dlcycle: opens and closes a provider library over and over while other
 * threads come and go, each making its first events (claiming a buffer)
 * as the library's provider is added and removed.
 *
 * usage: dlcycle LIBRARY CYCLES THREADS PAIRS
 * CYCLES dlopen/dlclose of LIBRARY in the main thread (its constructor
 * writes one testprobe:loaded event); meanwhile a second thread starts
 * THREADS short-lived threads one after the other, each making PAIRS
 * lock/unlock pairs. Prints the cycles and the pairs made.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long threads, pairs;

static void *short_lived(void *arg)
{
	(void)arg;
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	for (long i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL) != 0)
			exit(2);
		pthread_join(t, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long cycles;
	pthread_t t;

	if (argc != 5)
		return 2;
	cycles = atol(argv[2]);
	threads = atol(argv[3]);
	pairs = atol(argv[4]);
	if (pthread_create(&t, NULL, spawner, NULL) != 0)
		return 2;
	for (long i = 0; i < cycles; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "dlcycle: %s\n", dlerror());
			return 1;
		}
		dlclose(h);
	}
	pthread_join(t, NULL);
	printf("%ld cycles, %ld pairs\n", cycles, threads * pairs);
	return 0;
}
