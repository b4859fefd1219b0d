/*
 * sigfork: a signal handler that forks, fired by a timer while the main
 * thread takes a mutex in a loop, so that forks happen in the middle of
 * event writes. The child returns from the handler (finishing whatever
 * the parent was doing), makes 100 lock/unlock pairs and exits.
 *
 * usage: sigfork FORKS
 * Prints the parent's pairs, the forks, and how many children exited 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t forks, in_child;
static long max_forks;

/* fork() in a handler: glibc runs the atfork handlers, the tracer's too. */
static void on_alarm(int sig)
{
	pid_t pid;

	(void)sig;
	if (in_child || forks >= max_forks)
		return;
	pid = fork();
	if (pid == 0)
		in_child = 1;
	else if (pid > 0)
		forks++;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	long pairs = 0, ok = 0;
	int status;

	max_forks = argc > 1 ? atol(argv[1]) : 20;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (forks < max_forks) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		if (in_child) {
			for (int i = 0; i < 100; i++) {
				pthread_mutex_lock(&lock);
				pthread_mutex_unlock(&lock);
			}
			_exit(0);
		}
		pairs++;
	}
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	while (wait(&status) > 0)
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("parent %ld pairs, %ld forks, %ld children exited 0\n", pairs, max_forks, ok);
	return 0;
}
