/*
 * procs: forks PROCS children that each run THREADS threads doing PAIRS
 * lock/unlock pairs on a mutex of their own, all at once: every child
 * has registered (and been granted its buffer memory) before any thread
 * writes an event, and no thread ends before all threads of all children
 * have written theirs, so which threads find a buffer does not depend on
 * timing. The parent writes no event.
 *
 *   procs PROCS THREADS PAIRS [--stdin]
 *
 * With --stdin, once every thread wrote its events the parent prints
 * "written" and waits for the end of its standard input before the
 * children may end (a test looks at them meanwhile). Prints
 * "PROCS x THREADS x PAIRS pairs".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 64

static long pairs;
static pthread_barrier_t start, end;

static void *work(void *arg)
{
	pthread_mutex_t *m = arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	pthread_barrier_wait(&end);
	return NULL;
}

/* One byte on fd, or end of file, before going on. */
static void await(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0)
		;
}

static void child(int nthreads, int ready, int go, int done, int leave)
{
	/* (static: initialised without pthread_mutex_init, which would be an
	 * event of the main thread) */
	static pthread_mutex_t m[MAX_THREADS];
	pthread_t t[MAX_THREADS];

	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&end, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, &m[i]);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	await(go);
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&end);
	if (write(done, "d", 1) != 1)
		_exit(1);
	await(leave);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	int nprocs = argc > 1 ? atoi(argv[1]) : 2, nthreads = argc > 2 ? atoi(argv[2]) : 1;
	int ready[2], go[2], done[2], leave[2];

	pairs = argc > 3 ? atol(argv[3]) : 100;
	if (nprocs < 1 || nthreads < 1 || nthreads > MAX_THREADS || pairs < 0) {
		fprintf(stderr, "usage: procs PROCS THREADS(1-%d) PAIRS\n", MAX_THREADS);
		return 2;
	}
	if (pipe(ready) < 0 || pipe(go) < 0 || pipe(done) < 0 || pipe(leave) < 0)
		return 1;
	for (int i = 0; i < nprocs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(go[1]);
			close(leave[1]);
			child(nthreads, ready[1], go[0], done[1], leave[0]);
		}
	}
	close(go[0]);
	close(leave[0]);
	for (int i = 0; i < nprocs; i++)
		await(ready[0]);
	close(go[1]); /* every child is registered: go */
	for (int i = 0; i < nprocs; i++)
		await(done[0]);
	if (argc > 4 && strcmp(argv[4], "--stdin") == 0) {
		char c;

		printf("written\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	close(leave[1]); /* every thread wrote its events: they may end */
	for (int i = 0; i < nprocs; i++)
		wait(NULL);
	printf("%d x %d x %ld pairs\n", nprocs, nthreads, pairs);
	return 0;
}
