/*
 * sigreentry: a signal handler that takes a mutex, fired very often by a
 * timer while the main thread takes another one in a loop, so that handlers
 * interrupt event writes. Prints how many lock calls each side made, and
 * the addresses of the two mutexes.
 * With --write, the calls are write()s to /dev/null instead (8 bytes from
 * the main thread, 3 from the handler), async-signal-safe as the handler
 * needs, and the program ends in a signal handler that calls _exit(3).
 * usage: sigreentry [--write] PAIRS   (lock/unlock pairs or writes of the
 *                                      main thread)
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_mutex_t main_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handler_calls;
static int null_fd = -1; /* --write: /dev/null */

/* Not async-signal-safe in general; fine here: the handler's mutex is
 * taken only by the handler, which does not nest (SA_NODEFER unset). */
static void on_alarm(int sig)
{
	(void)sig;
	if (null_fd >= 0) {
		if (write(null_fd, "sig", 3) == 3)
			handler_calls++;
		return;
	}
	pthread_mutex_lock(&handler_lock);
	handler_calls++;
	pthread_mutex_unlock(&handler_lock);
}

static void on_usr1(int sig)
{
	(void)sig;
	_exit(3);
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } }; /* every 50 us */
	struct sigaction sa = { .sa_handler = on_alarm };
	long pairs, main_calls = 0;

	if (argc > 1 && strcmp(argv[1], "--write") == 0) {
		null_fd = open("/dev/null", O_WRONLY);
		argv++;
		argc--;
	}
	pairs = argc > 1 ? atol(argv[1]) : 1000000;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (; main_calls < pairs; main_calls++) {
		if (null_fd >= 0) {
			if (write(null_fd, "main....", 8) != 8)
				return 1;
			continue;
		}
		pthread_mutex_lock(&main_lock);
		pthread_mutex_unlock(&main_lock);
	}
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("main %ld handler %d\n", main_calls, (int)handler_calls);
	printf("mutexes %p %p\n", (void *)&main_lock, (void *)&handler_lock);
	if (null_fd >= 0) {
		/* ends in a handler, as a program killed cleanly by a signal does */
		fflush(stdout);
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
		return 1;
	}
	return 0;
}
