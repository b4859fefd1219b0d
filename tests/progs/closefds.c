/*
 * closefds: a program that does what daemons do at start, closing every
 * descriptor above 2, then reuses the numbers: the tracer's descriptors
 * are gone and the program's own sockets get their numbers.
 *
 * usage: closefds N
 * N lock/unlock pairs; close_range(3, ~0) and close() of 3 to 1023; dup2
 * of a pipe over 3 to 9 (numbers the tracer held), then a socket pair;
 * a second thread makes N more pairs and, every 1000, sends a message on
 * the socket pair, which the first thread reads and counts. Prints what it
 * sent and received, and the pairs: the same traced or not.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long n;
static int sv[2];

static void pairs(void)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

static void *worker(void *arg)
{
	long sent = 0;

	(void)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		if (i % 1000 == 999 && send(sv[1], "x", 1, MSG_NOSIGNAL) == 1)
			sent++;
	}
	close(sv[1]);
	return (void *)sent;
}

int main(int argc, char **argv)
{
	int p[2];
	long got = 0;
	void *sent;
	pthread_t t;
	char c;

	n = argc > 1 ? atol(argv[1]) : 1000;
	pairs();
	syscall(SYS_close_range, 3u, ~0u, 0u);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	if (pipe(p) < 0)
		return 2;
	for (int fd = 5; fd < 10; fd++)
		dup2(p[0], fd);
	close(p[0]);
	close(p[1]);
	for (int fd = 3; fd < 10; fd++)
		close(fd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 2;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 2;
	while (read(sv[0], &c, 1) == 1)
		got++;
	pthread_join(t, &sent);
	printf("descriptors %d %d\nsent %ld received %ld\n%ld pairs\n", sv[0], sv[1], (long)sent, got,
	       2 * n);
	return 0;
}
