/*
 * suidtraced: linked with the shimtrace libraries (no preload needed), to
 * be made setuid root by the tests: a setuid program started by a user
 * who chose its environment. Takes a lock N times and prints its real and
 * effective uid.
 *
 *   suidtraced N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	return 0;
}
