/*
 * sigreentry: a signal handler that takes a mutex, fired very often by a
 * timer while the main thread takes another one in a loop, so that handlers
 * interrupt event writes. Prints how many lock calls each side made, and
 * the addresses of the two mutexes.
 * usage: sigreentry PAIRS   (lock/unlock pairs of the main thread)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static pthread_mutex_t main_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handler_calls;

/* Not async-signal-safe in general; fine here: the handler's mutex is
 * taken only by the handler, which does not nest (SA_NODEFER unset). */
static void on_alarm(int sig)
{
	(void)sig;
	pthread_mutex_lock(&handler_lock);
	handler_calls++;
	pthread_mutex_unlock(&handler_lock);
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } }; /* every 50 us */
	struct sigaction sa = { .sa_handler = on_alarm };
	long pairs = argc > 1 ? atol(argv[1]) : 1000000, main_calls = 0;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (; main_calls < pairs; main_calls++) {
		pthread_mutex_lock(&main_lock);
		pthread_mutex_unlock(&main_lock);
	}
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("main %ld handler %d\n", main_calls, (int)handler_calls);
	printf("mutexes %p %p\n", (void *)&main_lock, (void *)&handler_lock);
	return 0;
}
