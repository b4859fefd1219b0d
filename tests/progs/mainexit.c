/*
 * mainexit: the main thread leaves with pthread_exit, and the thread left
 * closes every descriptor, then goes on locking: to /proc the process's
 * main thread is a zombie while it runs on, and the tracer's connection
 * closes while it runs. The daemon must read on (the process is not gone),
 * not end it there.
 *
 * usage: mainexit N
 * N lock/unlock pairs in the main thread, which starts a second and calls
 * pthread_exit; the second waits until the main thread is a zombie, closes
 * descriptors 3 to 1023, makes N pairs and exits with status 0, printing
 * "2N pairs".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long n;

static void pairs(void)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

/* The state letter of the main thread, from /proc/self/stat. */
static char main_state(void)
{
	char buf[512], *paren;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t len;

	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

static void *survivor(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	for (int i = 0; main_state() != 'Z'; i++) {
		if (i == 10000)
			exit(2);
		nanosleep(&ms, NULL);
	}
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	pairs();
	printf("%ld pairs\n", 2 * n);
	exit(0);
}

int main(int argc, char **argv)
{
	pthread_t t;

	n = argc > 1 ? atol(argv[1]) : 1000;
	pairs();
	if (pthread_create(&t, NULL, survivor, NULL) != 0)
		return 2;
	pthread_exit(NULL);
}
