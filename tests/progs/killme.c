/*
 * killme: N lock/unlock pairs, then kills itself with SIGKILL, so nothing
 * of the process's own exit path runs. Everything committed before the kill
 * must be in the trace.
 * usage: killme N
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	printf("%ld pairs, now SIGKILL\n", n);
	fflush(stdout);
	kill(getpid(), SIGKILL);
	return 0;
}
